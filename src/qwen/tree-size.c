/* tree-size.c: every byte of a tree by kind (tree-size.h). The names come from Qwen Code's
 * storage layout (the directories its Storage class names and what writes into them); a name this file does not know
 * is "unknown", counted and shown, never guessed at. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "du.h"
#include "fs.h"
#include "lock.h"
#include "macro.h"
#include "strtable.h"
#include "qwen.h"
#include "session-times.h"
#include "tree-size.h"
#include "util.h"

static const char *const tree_size_kind_table[_TREE_KIND_MAX] = {
        [TREE_KIND_SESSIONS] = "active sessions",
        [TREE_KIND_ARCHIVE] = "archive",
        [TREE_KIND_FILE_HISTORY] = "file-history",
        [TREE_KIND_SUBAGENTS] = "subagents",
        [TREE_KIND_LOGS] = "logs, prompt history",
        [TREE_KIND_TOOL_RESULTS] = "tool-results",
        [TREE_KIND_WORKFLOWS] = "workflows",
        [TREE_KIND_LEGACY] = "legacy (Qwen <= 0.1)",
        [TREE_KIND_USAGE] = "usage files",
        [TREE_KIND_QGC] = "qgc (lock, markers)",
        [TREE_KIND_STATE] = "settings, other state",
        [TREE_KIND_UNKNOWN] = "unknown",
        [TREE_KIND_DIRS] = "directories",
};

static const char *const tree_size_kind_key_table[_TREE_KIND_MAX] = {
        [TREE_KIND_SESSIONS] = "sessions",       [TREE_KIND_ARCHIVE] = "archive",
        [TREE_KIND_FILE_HISTORY] = "file-history", [TREE_KIND_SUBAGENTS] = "subagents",
        [TREE_KIND_LOGS] = "logs",               [TREE_KIND_TOOL_RESULTS] = "tool-results",
        [TREE_KIND_WORKFLOWS] = "workflows",     [TREE_KIND_LEGACY] = "legacy",
        [TREE_KIND_USAGE] = "usage",             [TREE_KIND_STATE] = "state",
        [TREE_KIND_QGC] = "qgc",
        [TREE_KIND_UNKNOWN] = "unknown",         [TREE_KIND_DIRS] = "directories",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(tree_size_kind, TreeKind);

DEFINE_STRING_TABLE_TO_STRING_FUNC(tree_size_kind_key, tree_size_kind_key_table, TreeKind);

static bool ts_endswith(const char *s, size_t n, const char *suffix) {
        size_t b = strlen(suffix);
        return n >= b && memcmp(s + n - b, suffix, b) == 0;
}

/* component i of rel (not NUL-terminated: *ret_n is its length); false when there is none */
static bool ts_component(const char *rel, unsigned i, const char **ret, size_t *ret_n) {
        const char *p = rel;

        for (; i > 0; i--) {
                p = strchr(p, '/');
                if (!p)
                        return false;
                p++;
        }
        *ret = p;
        *ret_n = strcspn(p, "/");
        return true;
}

static bool ts_is(const char *c, size_t n, const char *name) {
        return strlen(name) == n && memcmp(c, name, n) == 0;
}

/* Files Qwen writes at the top of G or R (layout §1, §13; Qwen 0.12 to 0.24). */
static const char *const ts_top_state[] = {
        "settings.json", "settings.json.orig", "sessions", "ide", "memory.md", "memories",
        "memory", "installation_id", "user_id", "tip_history.json", "output-language.md",
        "extensions", "extension-store", "artifacts", "commands", "agents", "skills", "plans",
        "QWEN.md", "oauth_creds.json", "google_accounts.json", "mcp-oauth-tokens.json",
        "accounts.json", "trustedFolders.json", "bin", "todos", ".env", "worktrees",
        "insights", "skills-state.json", "hooks",
};

/* Known per-session names in chats/: <id>.jsonl and <id>.<what>.json(l), Qwen's own staging
 * files .<id>.<op>.tmp. */
static bool ts_chats_name(const char *c, size_t n) {
        size_t k = 0;

        if (n > 5 && c[0] == '.' && ts_endswith(c, n, ".tmp"))
                return true;
        while (k < n && ((c[k] >= '0' && c[k] <= '9') || (c[k] >= 'a' && c[k] <= 'f') ||
                         (c[k] >= 'A' && c[k] <= 'F') || c[k] == '-'))
                k++;
        return k >= 32 && k <= 36 && k < n && c[k] == '.' &&
               (ts_endswith(c, n, ".json") || ts_endswith(c, n, ".jsonl"));
}

static TreeKind ts_classify_tmp(const char *rel) {
        const char *c;
        size_t n;
        bool deeper;

        if (!ts_component(rel, 1, &c, &n))
                return TREE_KIND_UNKNOWN;
        if (ts_is(c, n, "session-writer-locks"))
                return TREE_KIND_STATE;
        if (!qwen_project_hash_valid(c, n) || !ts_component(rel, 2, &c, &n))
                return TREE_KIND_UNKNOWN;
        deeper = c[n] == '/';
        if (ts_is(c, n, "tool-results") && deeper)
                return TREE_KIND_TOOL_RESULTS;
        if (ts_is(c, n, "chats") && deeper)
                return TREE_KIND_LEGACY;
        if (ts_is(c, n, "checkpoints") && deeper)
                return TREE_KIND_STATE;
        if (deeper)
                return TREE_KIND_UNKNOWN;
        if (ts_endswith(c, n, ".output"))
                return TREE_KIND_TOOL_RESULTS;
        if (ts_is(c, n, "logs.json") || ts_is(c, n, "shell_history"))
                return TREE_KIND_LOGS;
        if (ts_is(c, n, "checkpoint.json") ||
            (n > 16 && memcmp(c, "checkpoint-", 11) == 0 && ts_endswith(c, n, ".json")))
                return TREE_KIND_LEGACY;
        if (ts_is(c, n, "scheduled_tasks.json") || ts_is(c, n, "scheduled_tasks.lock"))
                return TREE_KIND_STATE;
        return TREE_KIND_UNKNOWN;
}

static TreeKind ts_classify_project(const char *rel) {
        const char *c;
        size_t n;
        bool deeper;

        if (!ts_component(rel, 2, &c, &n))
                return TREE_KIND_UNKNOWN; /* a file directly in projects/ */
        deeper = c[n] == '/';
        if (ts_is(c, n, "chats") && deeper) {
                if (!ts_component(rel, 3, &c, &n))
                        return TREE_KIND_UNKNOWN;
                if (ts_is(c, n, "archive") && c[n] == '/')
                        return TREE_KIND_ARCHIVE;
                return c[n] != '/' && ts_chats_name(c, n) ? TREE_KIND_SESSIONS : TREE_KIND_UNKNOWN;
        }
        if (ts_is(c, n, "subagents") && deeper)
                return TREE_KIND_SUBAGENTS;
        if (ts_is(c, n, "workflows") && deeper)
                return TREE_KIND_WORKFLOWS;
        if ((ts_is(c, n, "session-organization.v1.json") ||
             ts_is(c, n, ".qwen-orphan-since")) && !deeper) /* the stale-entry marker, hygiene.h */
                return TREE_KIND_SESSIONS;
        if ((ts_is(c, n, "memory") && deeper) ||
            (!deeper && (ts_is(c, n, "meta.json") || ts_is(c, n, "extract-cursor.json"))))
                return TREE_KIND_STATE;
        return TREE_KIND_UNKNOWN;
}

static TreeKind tree_size_classify(const char *rel) {
        const char *c;
        size_t n;

        if (!ts_component(rel, 0, &c, &n) || n == 0)
                return TREE_KIND_UNKNOWN;
        /* qgc's own: its lock, its state (pending markers) and its temporary files anywhere */
        if ((ts_is(c, n, LOCK_FILE) && c[n] == '\0') ||
            (ts_is(c, n, FS_STATE_DIR) && c[n] == '/') ||
            fs_is_temp_name(strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel))
                return TREE_KIND_QGC;
        if (ts_is(c, n, "projects"))
                return ts_classify_project(rel);
        if (ts_is(c, n, "tmp"))
                return ts_classify_tmp(rel);
        if (ts_is(c, n, "file-history") && c[n] == '/')
                return TREE_KIND_FILE_HISTORY;
        if (ts_is(c, n, "debug") && c[n] == '/')
                return TREE_KIND_LOGS;
        if ((ts_is(c, n, "usage") && c[n] == '/') || ts_is(c, n, "usage_record.jsonl"))
                return TREE_KIND_USAGE;
        /* Qwen's OpenAI logging writes these markers at the top (seen in 0.24.4 trees) */
        if (c[n] == '\0' && n > 21 && memcmp(c, ".openai-logs-cleanup-", 21) == 0)
                return TREE_KIND_STATE;
        for (size_t i = 0; i < ELEMENTSOF(ts_top_state); i++)
                if (ts_is(c, n, ts_top_state[i]))
                        return TREE_KIND_STATE;
        return TREE_KIND_UNKNOWN;
}

/* du_walk()'s callback: entry rel counted under its kind (a directory's own size under
 * TREE_KIND_DIRS). */
static int ts_count(void *userdata, const char *rel, const struct stat *st) {
        StoreSize *s = userdata;
        TreeKind k = S_ISDIR(st->st_mode) ? TREE_KIND_DIRS : tree_size_classify(rel);

        s->files[k]++;
        s->bytes[k] += (uint64_t)st->st_size;
        s->alloc[k] += (uint64_t)st->st_blocks * 512;
        s->total_bytes += (uint64_t)st->st_size;
        s->total_alloc += (uint64_t)st->st_blocks * 512;
        if (k == TREE_KIND_UNKNOWN && s->n_unknown < STORE_SIZE_UNKNOWN_SHOWN) {
                s->unknown[s->n_unknown] = strdup(rel);
                if (!s->unknown[s->n_unknown])
                        return -ENOMEM;
                s->n_unknown++;
        }
        return 0;
}

int tree_size_measure(const Tree *t, StoreSize *ret) {
        bool two = t->global_dir && !streq(t->global_dir, t->runtime_dir);
        struct stat rs, gs;
        int r;

        *ret = (StoreSize){};
        /* R inside G (or G inside R): each is walked once, the inner one on its own */
        two = two && stat(t->runtime_dir, &rs) == 0 && stat(t->global_dir, &gs) == 0 &&
              !(rs.st_dev == gs.st_dev && rs.st_ino == gs.st_ino);
        r = du_walk(t->runtime_dir, two ? &gs : NULL, ts_count, ret, &ret->incomplete);
        if (r < 0)
                return r;
        if (two) {
                r = du_walk(t->global_dir, &rs, ts_count, ret, &ret->incomplete);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && r != -ENOENT)
                        ret->incomplete = true;
        }
        return 0;
}
