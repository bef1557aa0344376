/* qwen-store.c: Qwen Code's store (store.h): its trees found as Qwen's Storage finds them
 * (roots.h), its project directory names (sanitizeCwd, qwen.h), its walk (qwen-scan.h), its
 * bytes by kind (tree-size.h), its run operations (qwen-run.h; its sessions': qwen-session.h). */
#include "autoconf.h"

#include "cold.h"
#include "erase-edit.h"
#include "hygiene.h"
#include "json-input.h"
#include "qwen.h"
#include "qwen-restore.h"
#include "qwen-run.h"
#include "qwen-scan.h"
#include "qwen-session.h"
#include "qwen-store.h"
#include "roots.h"
#include "tree-size.h"
#include "util.h"

/* Qwen's store takes any directory given as --root (it is asked last). */
static int qwen_store_detect(int dir_fd, const char *dir) {
        (void)dir_fd;
        (void)dir;
        return 1;
}

static int qwen_store_tree_from_dir(const char *dir, Tree *ret) {
        int r = roots_from_dir(dir, ret);

        if (r >= 0)
                ret->store = &qwen_store;
        return r;
}

static int qwen_store_tree_for_home(const char *home, Tree *ret, char **ret_why) {
        int r = roots_resolve_opts(&(RootsOptions){ .home = home }, ret, ret_why);

        if (r >= 0)
                ret->store = &qwen_store;
        return r;
}

/* The bytes of tree t by TreeKind, and its stale project entries (hygiene-stale.c). */
static int qwen_store_measure(const Inventory *inv, size_t t, StoreSize *ret) {
        int r = tree_size_measure(&inv->trees[t], ret);

        if (r < 0)
                return r;
        for (TreeKind k = 0; k < _TREE_KIND_MAX; k++) {
                ret->kind_names[k] = tree_size_kind_to_string(k);
                ret->kind_keys[k] = tree_size_kind_key(k);
        }
        ret->n_kinds = _TREE_KIND_MAX;
        ret->unknown_kind = TREE_KIND_UNKNOWN;
        ret->stale_what = "every session's cwd a temporary directory that no longer exists "
                          "(candidates; the plan of stale-project-min-age checks every "
                          "recorded cwd and its guards)";
        return hygiene_stale_projects(inv, t, &ret->n_stale, &ret->n_projects, &ret->stale_bytes);
}

static const char *qwen_store_orphan_what(OrphanKind k) {
        switch (k) {
        case ORPHAN_FILE_HISTORY:
                return "orphan file-history, no transcript";
        case ORPHAN_SUBAGENTS:
                return "orphan subagents, no transcript";
        case ORPHAN_EMPTY_PROJECT:
                return "empty project directory";
        default:
                return hygiene_what(k);
        }
}

#define QWEN_STORE_MERGE_LIMIT                                                                     \
        "its .pr.json or .ledger.jsonl, in both chats/ and chats/archive/, is larger than the "    \
        "64M qgc merges (limit)"
_Static_assert(ARCHIVE_SIDECAR_MAX == 64U << 20, "QWEN_STORE_MERGE_LIMIT says 64M");

/* An archive its sidecar merge would refuse, or a delete its edit of a file Qwen shares would
 * (logs.json, session-organization.v1.json: policy.h's policy_rule_limit). */
static char *qwen_store_limit_reason(const Session *s, bool archive, const char *sel) {
        char max[FORMAT_BYTES_MAX];
        const char *what;

        if (archive)
                return util_strprintf("%s (would archive: %s)", QWEN_STORE_MERGE_LIMIT, sel);
        util_format_bytes(max, sizeof max, ERASE_FILE_MAX);
        switch (s->logs_state) {
        case SHARED_TOO_BIG:
                return util_strprintf(
                        "tmp/<hash>/logs.json is larger than the %s qgc edits (limit) "
                        "(would delete: %s)",
                        max, sel);
        case SHARED_MALFORMED:
                what = "is not what Qwen Code writes";
                break;
        case SHARED_UNREADABLE:
                what = "cannot be read";
                break;
        default:
                return util_strprintf(
                        "session-organization.v1.json cannot be read, or is larger than "
                        "the %s qgc edits (limit) (would delete: %s)",
                        util_format_bytes(max, sizeof max,
                                          json_input_info(JSON_INPUT_ORGANIZATION)->max),
                        sel);
        }
        return util_strprintf("tmp/<hash>/logs.json %s (limit) (would delete: %s)", what, sel);
}

/* A compressed session's file is its .zst in the cold tier (cold.h): what a delete removes and
 * qgc show decompresses. */
static char *qwen_store_session_path(const Session *s, bool archived) {
        if (archived && inventory_session_is_cold(s))
                return util_strprintf("projects/%s/chats/archive/" COLD_DIR "/%s.jsonl" COLD_SUFFIX,
                                      s->project_dir, s->id);
        return util_strprintf("projects/%s/chats/%s%s.jsonl", s->project_dir,
                              archived ? "archive/" : "", s->id);
}

const StoreOps qwen_store = {
        .name = "qwen",
        .detect = qwen_store_detect,
        .tree_from_dir = qwen_store_tree_from_dir,
        .tree_for_home = qwen_store_tree_for_home,
        .project_dir = qwen_sanitize_cwd,
        .scan = qwen_scan,
        .measure = qwen_store_measure,
        .session_path = qwen_store_session_path,
        .orphan_what = qwen_store_orphan_what,
        .limit_reason = qwen_store_limit_reason,
        .merge_limit = QWEN_STORE_MERGE_LIMIT,
        .conflict_what = "in both chats/ and chats/archive/",
        .session_bytes = "a session counts in any state (active, archived,\n"
                         "  compressed) with its sidecars, file-history, subagents",
        .run_open = qwen_run_open,
        .run_close = qwen_run_close,
        .run_begin = qwen_session_begin,
        .run_ready = qwen_session_ready,
        .run_commit = qwen_session_commit,
        .run_end = qwen_session_end,
        .run_recover_step = qwen_run_recover_step,
        .run_session = qwen_session_run,
        .run_orphan = qwen_run_orphan,
        .plan_restore = qwen_restore_plan,
        .run_restore_begin = qwen_restore_begin,
        .run_restore = qwen_restore_run,
        .run_restore_end = qwen_restore_end,
};
