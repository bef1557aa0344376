/* hygiene.c: the tree hygiene kinds (hygiene.h), found after the sessions and reclaimed under
 * the executor's rules: every open through the safe-filesystem layer (fsutil.h), the identity the
 * scan saw re-checked, regular files only, never leaving the tree's filesystem.
 *
 * Qwen's references: tool-results/<f> and tmp/<hash>/<f>.output are unlinked by Qwen itself when
 * a regular file's mtime is 24 h old (packages/core/src/utils/toolResultCleanup.ts); debug/<id>.txt
 * and plans/<id>.md are per-session files no delete path of Qwen removes (layout §3.2); Qwen <= 0.1
 * (the Gemini CLI layout) wrote tmp/<hash>/chats/session-<ts>-<id8>.json and checkpoint[-<tag>].json
 * (layout §14), which no later release reads. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "erase.h"
#include "fsread.h"
#include "fsutil.h"
#include "hygiene.h"
#include "json.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "reason.h"
#include "record.h"
#include "util.h"

#define HYGIENE_DEPTH_MAX 32
#define HYGIENE_TASKS_MAX (16 * 1024 * 1024)

bool hygiene_kind(OrphanKind k) {
        return k >= ORPHAN_TOOL_RESULT && k <= ORPHAN_STALE_PROJECT;
}

msec_t hygiene_limit(const Policy *p, OrphanKind k, const char **ret_key) {
        switch (k) {
        case ORPHAN_TOOL_RESULT:
                *ret_key = "tool-results-max-age";
                return p->tool_results_max_age;
        case ORPHAN_TMP_PROJECT:
                *ret_key = "stale-tmp-min-age";
                return p->stale_tmp_min_age;
        case ORPHAN_DEBUG_LOG:
        case ORPHAN_PLAN:
                *ret_key = "debug-plans-min-age";
                return p->debug_plans_min_age;
        case ORPHAN_LEGACY:
                *ret_key = "legacy-max-age";
                return p->legacy_max_age;
        case ORPHAN_STALE_PROJECT:
                *ret_key = "stale-project-min-age";
                return p->stale_project_min_age;
        default:
                *ret_key = "orphan-min-age";
                return p->orphan_min_age;
        }
}

const char *hygiene_what(OrphanKind k) {
        switch (k) {
        case ORPHAN_TOOL_RESULT:
                return "tool result (Qwen removes them after 24h)";
        case ORPHAN_TMP_PROJECT:
                return "tmp/<hash>/ of a project with no session left";
        case ORPHAN_DEBUG_LOG:
                return "debug log, no transcript";
        case ORPHAN_PLAN:
                return "plan file, no transcript";
        case ORPHAN_LEGACY:
                return "legacy (Qwen <= 0.1) chat or checkpoint file";
        case ORPHAN_STALE_PROJECT:
                return "stale project entry (every cwd a vanished temporary directory)";
        default:
                return "orphan";
        }
}

unsigned hygiene_need(const Policy *p) {
        unsigned need = 0;

        for (OrphanKind k = ORPHAN_TOOL_RESULT; k <= ORPHAN_STALE_PROJECT; k++) {
                const char *key;
                if (hygiene_limit(p, k, &key) != MSEC_INFINITY)
                        need |= 1u << k;
        }
        return need;
}

static bool hygiene_endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

static bool hygiene_is_hash(const char *s) {
        size_t n = 0;

        for (; s[n]; n++)
                if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
                        return false;
        return n == PROJECT_HASH_LEN;
}

/* Legacy file names of Qwen <= 0.1: chats/session-<...>.json, checkpoint.json,
 * checkpoint-<tag>.json. */
static bool hygiene_is_legacy_chat(const char *n) {
        return strneq(n, "session-", 8) && hygiene_endswith(n, ".json") && strlen(n) > 13;
}

static bool hygiene_is_checkpoint(const char *n) {
        return streq(n, "checkpoint.json") ||
               (strneq(n, "checkpoint-", 11) && hygiene_endswith(n, ".json") && strlen(n) > 16);
}

/* (dfd, name) is a directory on dev and not a mount point: its fd, else -errno. */
static int hygiene_open_dir(int dfd, const char *name, dev_t dev, struct stat *ret_st) {
        struct stat st;
        bool mount = false;
        int r = fs_statat(dfd, name, &st, &mount);

        if (r < 0)
                return r;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if ((dev != 0 && st.st_dev != dev) || mount)
                return -EXDEV;
        if (ret_st)
                *ret_st = st;
        return fs_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);
}

/* (dfd, name) is a regular file on dev, not a mount point. */
static bool hygiene_regular(int dfd, const char *name, dev_t dev, struct stat *ret_st) {
        bool mount = false;

        return fs_statat(dfd, name, ret_st, &mount) == 0 && S_ISREG(ret_st->st_mode) &&
               (dev == 0 || ret_st->st_dev == dev) && !mount;
}

/* Sizes and the newest mtime below dfd. A mount point, another filesystem or a directory
 * that cannot be listed makes it incomplete. */
typedef struct HygieneSum {
        uint64_t bytes, bytes_alloc;
        msec_t mtime;
        bool incomplete;
} HygieneSum;

static msec_t hygiene_mtime(const struct stat *st) {
        return (msec_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

static void hygiene_sum(int dfd, dev_t dev, unsigned depth, HygieneSum *s) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k;

        if (depth > HYGIENE_DEPTH_MAX) {
                s->incomplete = true;
                return;
        }
        fs_dir_init(&d, dfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                struct stat st;
                bool mount = false;

                if (fs_statat(dfd, name, &st, &mount) < 0)
                        continue; /* vanished */
                if (st.st_dev != dev || mount) {
                        s->incomplete = true;
                        continue;
                }
                s->bytes += (uint64_t)st.st_size;
                s->bytes_alloc += (uint64_t)st.st_blocks * 512;
                s->mtime = MAX(s->mtime, hygiene_mtime(&st));
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = fs_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);
                        if (sub < 0) {
                                s->incomplete = true;
                                continue;
                        }
                        hygiene_sum(sub, dev, depth + 1, s);
                }
        }
        if (k < 0)
                s->incomplete = true;
}

/* What a tmp/<hash>/ holds, as far as the stale-tmp rule is concerned. */
typedef struct HygieneTmp {
        const char *why; /* why it is no candidate: NULL when everything is understood */
} HygieneTmp;

/* scheduled_tasks.json holding no task? (an empty array) */
static bool hygiene_tasks_empty(int hfd) {
        json_object *o = NULL;
        bool empty;

        if (json_read_file(hfd, "scheduled_tasks.json", HYGIENE_TASKS_MAX,
                           json_input_info(JSON_INPUT_TASKS)->dialect, &o) < 0)
                return false;
        empty = json_object_is_type(o, json_type_array) && json_object_array_length(o) == 0;
        json_object_put(o);
        return empty;
}

/* Is tmp/<hash>/scheduled_tasks.lock ({"pid":N,"sessionId":...,"lockId":...}, Qwen's cron
 * lock) held by a live process, or can that not be told (malformed, /proc unreadable)? A clean
 * exit leaves the file behind (layout §13): a dead pid makes it a leftover. */
static bool hygiene_lock_live(int hfd) {
        json_object *o = NULL, *pid = NULL;
        uint64_t ticks;
        bool live = true;

        if (json_read_file(hfd, "scheduled_tasks.lock", 64 * 1024,
                           json_input_info(JSON_INPUT_TASKS_LOCK)->dialect, &o) < 0)
                return true;
        if (json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "pid", &pid) &&
            json_object_is_type(pid, json_type_int) && json_object_get_int64(pid) > 0)
                live = live_pid_start(json_object_get_int64(pid), &ticks) != 0;
        json_object_put(o);
        return live;
}

/* Classify every entry of tmp/<hash>/ (open at hfd). */
static int hygiene_tmp_classify(int hfd, dev_t dev, HygieneTmp *ret) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k;

        *ret = (HygieneTmp){};
        fs_dir_init(&d, hfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                struct stat st;
                bool mount = false, dir, reg;

                if (fs_statat(hfd, name, &st, &mount) < 0) {
                        ret->why = "an entry cannot be examined";
                        continue;
                }
                if (st.st_dev != dev || mount) {
                        ret->why = "a mount point inside";
                        continue;
                }
                dir = S_ISDIR(st.st_mode);
                reg = S_ISREG(st.st_mode);
                if ((streq(name, "tool-results") || streq(name, "checkpoints")) && dir)
                        continue;
                if ((streq(name, "logs.json") || streq(name, "shell_history") ||
                     hygiene_endswith(name, ".output")) && reg)
                        continue;
                if (streq(name, "chats") || hygiene_is_checkpoint(name)) {
                        ret->why = "legacy chats or checkpoints inside";
                        continue;
                }
                if (streq(name, "scheduled_tasks.lock")) {
                        if (!reg || hygiene_lock_live(hfd))
                                ret->why = "a scheduled-task lock of a live process";
                        continue;
                }
                if (streq(name, "scheduled_tasks.json") && reg) {
                        if (!hygiene_tasks_empty(hfd))
                                ret->why = "scheduled tasks";
                        continue;
                }
                ret->why = "an entry qgc does not know";
        }
        if (k < 0) {
                ret->why = "cannot be listed";
                return k == -ENOMEM ? k : 0;
        }
        return 0;
}

static int hygiene_add(Inventory *inv, size_t tree, OrphanKind kind, const char *rel,
                       const char *name, const struct stat *st, const HygieneSum *sum) {
        Orphan o = { .kind = kind, .tree = tree };

        fs_fileid_from_stat(&o.dir, st);
        o.bytes = (uint64_t)st->st_size + (sum ? sum->bytes : 0);
        o.bytes_alloc = (uint64_t)st->st_blocks * 512 + (sum ? sum->bytes_alloc : 0);
        o.mtime = MAX(hygiene_mtime(st), sum ? sum->mtime : 0);
        o.project_dir = strdup(rel);
        o.name = strdup(name);
        if (!o.project_dir || !o.name) {
                orphan_done(&o);
                return -ENOMEM;
        }
        return inventory_add_orphan(inv, &o);
}

/* Every regular file of dfd (named by rel) accepted by match (NULL: all) as kind. */
static int hygiene_add_files(Inventory *inv, size_t tree, OrphanKind kind, int dfd,
                             const char *rel, dev_t dev, bool (*match)(const char *)) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, dfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                struct stat st;

                if (match && !match(name))
                        continue;
                if (!hygiene_regular(dfd, name, dev, &st))
                        continue; /* Qwen's cleanup too takes regular files only */
                r = hygiene_add(inv, tree, kind, rel, name, &st, NULL);
                if (r < 0)
                        return r;
        }
        return k == -ENOMEM ? k : 0;
}

static bool hygiene_is_output(const char *n) {
        return hygiene_endswith(n, ".output");
}

static int hygiene_cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The tmp/<hash>/ hashes of tree t's sessions, sorted; *ret_unsure when a session's hash is
 * unknown (no proven cwd, or ownership from a runtime claim: a /cd-migrated session's project
 * is not its first cwd). */
static int hygiene_session_hashes(const Inventory *inv, size_t t, const char ***ret, size_t *ret_n,
                                  bool *ret_unsure) {
        _cleanup_free_ const char **v = calloc(inv->n_sessions ?: 1, sizeof(char *));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        *ret_unsure = false;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                if (s->tree != t)
                        continue;
                if (!s->hash || s->owner == OWNER_CLAIM || s->owner == OWNER_UNVERIFIED)
                        *ret_unsure = true;
                if (s->hash)
                        v[n++] = s->hash;
        }
        qsort(v, n, sizeof(char *), hygiene_cmp_str);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* tmp/<hash>/ entries of one tree. */
static int hygiene_scan_tmp(Inventory *inv, size_t t, int rfd, dev_t dev, unsigned need,
                            bool complete) {
        _cleanup_free_ const char **hashes = NULL;
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int tfd = -EBADF;
        size_t n_hashes = 0;
        bool unsure = true;
        const char *name;
        unsigned char type;
        int k, r;

        if (!d)
                return -ENOMEM;
        tfd = hygiene_open_dir(rfd, "tmp", dev, NULL);
        if (tfd < 0)
                return 0;
        if (need & (1u << ORPHAN_TMP_PROJECT)) {
                r = hygiene_session_hashes(inv, t, &hashes, &n_hashes, &unsure);
                if (r < 0)
                        return r;
                if (unsure)
                        log_notice("'%s': a session without a proven cwd: no tmp/<hash>/ is "
                                   "called stale in this run", inv->trees[t].runtime_dir);
        }
        fs_dir_init(d, tfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                _cleanup_free_ char *rel = NULL, *hname = NULL;
                _cleanup_close_ int hfd = -EBADF;
                const char *key = name;
                struct stat st;

                if (!hygiene_is_hash(name))
                        continue;
                hname = strdup(name);
                if (!hname)
                        return -ENOMEM;
                hfd = hygiene_open_dir(tfd, hname, dev, &st);
                if (hfd < 0)
                        continue;
                if ((need & (1u << ORPHAN_TMP_PROJECT)) && complete && !unsure &&
                    !bsearch(&key, hashes, n_hashes, sizeof(char *), hygiene_cmp_str)) {
                        HygieneTmp c;
                        r = hygiene_tmp_classify(hfd, dev, &c);
                        if (r < 0)
                                return r;
                        if (!c.why) {
                                _cleanup_close_ int sfd = fs_open_noatime(tfd, hname,
                                                                      O_RDONLY | O_DIRECTORY);
                                HygieneSum sum = {};
                                if (sfd >= 0)
                                        hygiene_sum(sfd, dev, 1, &sum);
                                if (sfd >= 0 && !sum.incomplete) {
                                        /* the whole directory is one item: its files are not
                                         * listed again below */
                                        r = hygiene_add(inv, t, ORPHAN_TMP_PROJECT, "tmp", hname,
                                                        &st, &sum);
                                        if (r < 0)
                                                return r;
                                        continue;
                                }
                        } else
                                log_debug("tmp/%s: no session, but %s: kept", hname, c.why);
                }
                if (need & (1u << ORPHAN_TOOL_RESULT)) {
                        _cleanup_close_ int xfd = hygiene_open_dir(hfd, "tool-results", dev, NULL);
                        _cleanup_close_ int ofd = fs_open_noatime(tfd, hname, O_RDONLY | O_DIRECTORY);
                        rel = strprintf("tmp/%s/tool-results", hname);
                        if (!rel)
                                return -ENOMEM;
                        if (xfd >= 0) {
                                r = hygiene_add_files(inv, t, ORPHAN_TOOL_RESULT, xfd, rel, dev,
                                                      NULL);
                                if (r < 0)
                                        return r;
                        }
                        rel[strlen(rel) - strlen("/tool-results")] = '\0';
                        if (ofd >= 0) {
                                r = hygiene_add_files(inv, t, ORPHAN_TOOL_RESULT, ofd, rel, dev,
                                                      hygiene_is_output);
                                if (r < 0)
                                        return r;
                        }
                        free(rel);
                        rel = NULL;
                }
                if (need & (1u << ORPHAN_LEGACY)) {
                        _cleanup_close_ int cfd = hygiene_open_dir(hfd, "chats", dev, NULL);
                        _cleanup_close_ int ofd = fs_open_noatime(tfd, hname, O_RDONLY | O_DIRECTORY);
                        rel = strprintf("tmp/%s/chats", hname);
                        if (!rel)
                                return -ENOMEM;
                        if (cfd >= 0) {
                                r = hygiene_add_files(inv, t, ORPHAN_LEGACY, cfd, rel, dev,
                                                      hygiene_is_legacy_chat);
                                if (r < 0)
                                        return r;
                        }
                        rel[strlen(rel) - strlen("/chats")] = '\0';
                        if (ofd >= 0) {
                                r = hygiene_add_files(inv, t, ORPHAN_LEGACY, ofd, rel, dev,
                                                      hygiene_is_checkpoint);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return k == -ENOMEM ? k : 0;
}

/* <id><suffix> files of dir (relative to root_fd) with no transcript for <id> in any tree. */
static int hygiene_scan_ids(Inventory *inv, size_t t, int root_fd, dev_t dev, const char *dir,
                            const char *suffix, OrphanKind kind) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int dfd = -EBADF;
        const char *name;
        unsigned char type;
        int k, r;

        if (!d)
                return -ENOMEM;
        dfd = hygiene_open_dir(root_fd, dir, dev, NULL);
        if (dfd < 0)
                return 0;
        fs_dir_init(d, dfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                char id[SESSION_ID_MAX + 1];
                size_t n = strlen(name), sl = strlen(suffix);
                struct stat st;

                if (n <= sl || n - sl > SESSION_ID_MAX || !hygiene_endswith(name, suffix))
                        continue;
                memcpy(id, name, n - sl);
                id[n - sl] = '\0';
                if (!qwen_session_id_valid(id) || inventory_find(inv, SIZE_MAX, id))
                        continue;
                if (!hygiene_regular(dfd, name, dev, &st))
                        continue; /* debug/latest is a symlink: never ours */
                r = hygiene_add(inv, t, kind, dir, name, &st, NULL);
                if (r < 0)
                        return r;
        }
        return k == -ENOMEM ? k : 0;
}

static int hygiene_scan_stale(Inventory *inv, size_t t, int rfd, dev_t dev);

int hygiene_scan(Inventory *inv, unsigned need) {
        bool complete = true;
        int r;

        if (need == 0)
                return 0;
        for (size_t t = 0; t < inv->n_trees; t++)
                complete = complete && !inv->trees[t].incomplete;
        if (!complete && (need & ((1u << ORPHAN_TMP_PROJECT) | (1u << ORPHAN_DEBUG_LOG) |
                                  (1u << ORPHAN_PLAN))))
                log_notice("a tree was not fully listed: no stale tmp/<hash>/, debug log or plan "
                           "is decided in this run");
        r = inventory_index(inv);
        if (r < 0)
                return r;
        for (size_t t = 0; t < inv->n_trees; t++) {
                const Tree *tr = &inv->trees[t];
                _cleanup_close_ int rfd = fs_open_root(tr->runtime_dir, tr->dev);
                _cleanup_close_ int gfd = -EBADF;
                bool g_seen = false;
                struct stat st;

                if (rfd < 0)
                        continue;
                r = hygiene_scan_tmp(inv, t, rfd, tr->dev, need, complete);
                if (r < 0)
                        return r;
                if (complete && (need & (1u << ORPHAN_STALE_PROJECT))) {
                        r = hygiene_scan_stale(inv, t, rfd, tr->dev);
                        if (r < 0)
                                return r;
                }
                if (complete && (need & (1u << ORPHAN_DEBUG_LOG))) {
                        r = hygiene_scan_ids(inv, t, rfd, tr->dev, "debug", ".txt",
                                             ORPHAN_DEBUG_LOG);
                        if (r < 0)
                                return r;
                }
                if (!complete || !(need & (1u << ORPHAN_PLAN)))
                        continue;
                /* a G shared by two trees is looked at once */
                for (size_t u = 0; u < t; u++)
                        g_seen = g_seen || streq(inv->trees[u].global_dir, tr->global_dir);
                gfd = g_seen ? -EBADF : fs_open_root(tr->global_dir, 0);
                if (gfd < 0 || fstat(gfd, &st) < 0)
                        continue;
                r = hygiene_scan_ids(inv, t, gfd, st.st_dev, "plans", ".md", ORPHAN_PLAN);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool hygiene_streq_ptr(const char *a, const char *b) {
        return a == b || (a && b && streq(a, b));
}

/* A temporary directory by the OS's own places, absolute, with no "." or ".." component. */
static bool hygiene_temp_path(const char *p) {
        if (!strneq(p, "/tmp/", 5) && !strneq(p, "/var/tmp/", 9))
                return false;
        return !strstr(p, "/./") && !strstr(p, "/../") && !hygiene_endswith(p, "/.") &&
               !hygiene_endswith(p, "/..");
}

int hygiene_stale_projects(const Inventory *inv, size_t t, size_t *ret_stale, size_t *ret_projects,
                           uint64_t *ret_bytes) {
        size_t stale = 0, projects = 0;
        uint64_t bytes = 0;

        /* the inventory is sorted by (tree, project_dir, ...): a project's sessions are a run */
        for (size_t i = 0, j; i < inv->n_sessions; i = j) {
                const Session *s = &inv->sessions[i];
                bool ok = true;
                uint64_t b = 0;

                for (j = i; j < inv->n_sessions && inv->sessions[j].tree == s->tree &&
                            hygiene_streq_ptr(inv->sessions[j].project_dir, s->project_dir);
                     j++) {
                        const Session *x = &inv->sessions[j];
                        struct stat st;

                        b += x->bytes;
                        if (!ok)
                                continue;
                        ok = x->owner == OWNER_OK && x->state != SESSION_CONFLICT && x->live == 0 &&
                             x->cwd && hygiene_temp_path(x->cwd) &&
                             /* outside the tree: a plain lstat proves only absence */
                             lstat(x->cwd, &st) < 0 && errno == ENOENT;
                }
                if (s->tree != t)
                        continue;
                projects++;
                if (ok) {
                        stale++;
                        bytes += b;
                }
        }
        *ret_stale = stale;
        *ret_projects = projects;
        *ret_bytes = bytes;
        return 0;
}

int hygiene_reclaim(const Orphan *o, int root_fd, dev_t dev, const int *runtime_fds,
                    size_t n_runtime, OrphansStepFn step, void *userdata, const char **ret_why) {
        _cleanup_close_ int dfd = -EBADF;
        int r;

        *ret_why = "changed since scan";
        if (!hygiene_kind(o->kind) || !o->project_dir || !o->name)
                return 0;
        dfd = fs_open_path(root_fd, o->project_dir, dev);
        if (dfd < 0)
                return dfd == -ENOENT ? 0 : (*ret_why = "cannot open its directory", dfd);
        r = fs_check_identity(dfd, o->name, &o->dir);
        if (r <= 0)
                return r;
        if (dev == 0) { /* the walks below stay on the filesystem of the item's directory */
                struct stat st;
                if (fstat(dfd, &st) < 0)
                        return -errno;
                dev = st.st_dev;
        }

        if (o->kind == ORPHAN_DEBUG_LOG || o->kind == ORPHAN_PLAN) {
                char id[SESSION_ID_MAX + 1] = {};
                const char *dot = strrchr(o->name, '.');
                size_t n = dot ? (size_t)(dot - o->name) : 0;

                if (n == 0 || n > SESSION_ID_MAX)
                        return 0;
                memcpy(id, o->name, n);
                if (orphans_transcript_anywhere(runtime_fds, n_runtime, id)) {
                        *ret_why = "a transcript for this id exists now";
                        return 0;
                }
        }
        if (o->kind == ORPHAN_TMP_PROJECT) {
                _cleanup_close_ int hfd = hygiene_open_dir(dfd, o->name, dev, NULL);
                _cleanup_close_ int sfd = -EBADF;
                HygieneSum sum = {};
                HygieneTmp c;

                if (hfd < 0)
                        return hfd == -ENOENT ? 0 : (*ret_why = "cannot open it", hfd);
                r = hygiene_tmp_classify(hfd, dev, &c);
                if (r < 0)
                        return r;
                if (c.why) {
                        *ret_why = c.why;
                        return 0;
                }
                sfd = fs_open_noatime(dfd, o->name, O_RDONLY | O_DIRECTORY);
                if (sfd < 0)
                        return 0;
                hygiene_sum(sfd, dev, 1, &sum);
                if (sum.incomplete || sum.mtime > o->mtime) {
                        *ret_why = "written since scan";
                        return 0;
                }
                r = fs_rm_rf_at(dfd, o->name, dev, NULL);
                if (r < 0) {
                        *ret_why = r == -EBUSY ? "kept: a mount point inside" : "cannot remove";
                        return r;
                }
        } else {
                r = fs_unlink(dfd, o->name, 0);
                if (r == -ENOENT)
                        return 0; /* Qwen's own cleanup was first: a benign race */
                if (r < 0) {
                        *ret_why = "cannot remove";
                        return r;
                }
        }
        if (step)
                step(userdata, o->name);
        *ret_why = NULL;
        return 1;
}

/* ---- Stale project entries (upstream PR #9110, Storage.cleanOrphanProjectDirs) ----
 *
 * projects/<dir>/ whose every recorded cwd (each line of its transcripts and subagent
 * transcripts, each runtime claim's work_dir, each worktree sidecar's worktreePath) is a
 * temporary directory that no longer exists. As upstream: a marker, projects/<dir>/
 * .qwen-orphan-since, written on first sight (its mtime is the time), and the entry goes only once
 * the marker and every file inside are older than stale-project-min-age (at least 24 h); any
 * live sidecar, a file over 8 MiB (not read whole: incomplete evidence) or a cwd that exists
 * again keeps it, and a cwd that exists again removes the marker. Its sessions go first through
 * the normal delete (usage salvaged, shared files edited, sidecars, file-history): the entry is
 * removed only when no transcript is left in it. What qgc does not know inside keeps it. */

#define HYGIENE_STALE_READ_MAX (8U * 1024 * 1024)
#define HYGIENE_STALE_LINE_MAX (1U * 1024 * 1024)

/* What one projects/<dir>/ holds, as far as the stale-project rule is concerned. */
typedef struct HygieneStale {
        const Inventory *inv;
        size_t tree;
        const char *dir;      /* the entry's name under projects/ */
        size_t first, end;    /* its sessions in inv (sorted by tree, project_dir) */
        dev_t dev;
        char *why;            /* the first reason it cannot go */
        bool cwd_back;        /* a recorded cwd exists, or is no temporary directory */
        bool transcripts;     /* a transcript is in chats/ */
        bool skip_org;        /* the executor's re-check: qgc's own edit of the organization
                               * file is no activity */
        StrBuf cwds;          /* distinct recorded cwds, each followed by '\n' */
        msec_t mtime;         /* newest regular file inside, the marker excepted */
        uint64_t bytes, bytes_alloc;
        FileId marker;
} HygieneStale;

static void hygiene_stale_done(HygieneStale *h) {
        free(h->why);
        h->why = NULL;
        strbuf_done(&h->cwds);
}

/* Note why the entry cannot go (the first reason wins). 0 or -ENOMEM. */
_printf_(2, 3) static int hygiene_stale_keep(HygieneStale *h, const char *fmt, ...) {
        va_list ap;
        int r;

        if (h->why)
                return 0;
        va_start(ap, fmt);
        r = vasprintf(&h->why, fmt, ap);
        va_end(ap);
        if (r < 0) {
                h->why = NULL;
                return -ENOMEM;
        }
        return 0;
}

static void hygiene_stale_count(HygieneStale *h, const struct stat *st, bool is_activity) {
        h->bytes += (uint64_t)st->st_size;
        h->bytes_alloc += (uint64_t)st->st_blocks * 512;
        if (is_activity && S_ISREG(st->st_mode))
                h->mtime = MAX(h->mtime, hygiene_mtime(st));
}

/* A recorded cwd (once each). */
static int hygiene_stale_cwd(HygieneStale *h, const char *cwd) {
        const char *p = h->cwds.buf;
        size_t n = strlen(cwd);

        if (n == 0 || memchr(cwd, '\n', n))
                return hygiene_stale_keep(h, "a recorded cwd qgc cannot judge");
        while (p && *p) {
                const char *e = strchr(p, '\n');
                if ((size_t)(e - p) == n && memcmp(p, cwd, n) == 0)
                        return 0;
                p = e + 1;
        }
        return strbuf_printf(&h->cwds, "%s\n", cwd) < 0 ? -ENOMEM : 0;
}

static int hygiene_stale_obj(json_object *obj, void *userdata) {
        json_object *cwd = NULL;

        if (json_object_object_get_ex(obj, "cwd", &cwd) && json_object_is_type(cwd, json_type_string))
                return hygiene_stale_cwd(userdata, json_object_get_string(cwd));
        return 0;
}

static int hygiene_stale_line(const char *line, size_t len, bool truncated, void *userdata) {
        HygieneStale *h = userdata;
        int r;

        if (truncated)
                return hygiene_stale_keep(h, "a record too long to read whole");
        r = record_parse_line(line, len, hygiene_stale_obj, h);
        return r < 0 ? r : 0;
}

/* Every cwd of every line of a transcript (dfd, name) of st. */
static int hygiene_stale_lines(HygieneStale *h, int dfd, const char *name, const struct stat *st) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if ((uint64_t)st->st_size > HYGIENE_STALE_READ_MAX)
                return hygiene_stale_keep(h, "a transcript over 8M, not read whole: %s", name);
        fd = fs_open_noatime(dfd, name, O_RDONLY);
        if (fd < 0)
                return fd == -ENOMEM ? fd : hygiene_stale_keep(h, "an unreadable transcript: %s", name);
        r = record_for_each_line(fd, HYGIENE_STALE_LINE_MAX, hygiene_stale_line, h);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? hygiene_stale_keep(h, "an unreadable transcript: %s", name) : 0;
}

/* name is <id><suffix> with a valid session id: the id in id (SESSION_ID_MAX + 1). */
static bool hygiene_stale_id(const char *name, const char *suffix, char *id) {
        size_t n = strlen(name), sl = strlen(suffix);

        if (n <= sl || n - sl > SESSION_ID_MAX || !hygiene_endswith(name, suffix))
                return false;
        memcpy(id, name, n - sl);
        id[n - sl] = '\0';
        return qwen_session_id_valid(id);
}

/* stat (dfd, name) for the walk: 1 a regular file or directory on dev, 0 (noted) otherwise. */
static int hygiene_stale_stat(HygieneStale *h, int dfd, const char *name, struct stat *st) {
        bool mount = false;
        int r = fs_statat(dfd, name, st, &mount);

        if (r == -ENOENT)
                return 0; /* vanished (Qwen's own cleanup) */
        if (r < 0)
                return hygiene_stale_keep(h, "an entry cannot be examined: %s", name) ?: 0;
        if (st->st_dev != h->dev || mount)
                return hygiene_stale_keep(h, "a mount point inside: %s", name) ?: 0;
        if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
                return hygiene_stale_keep(h, "an entry qgc does not know: %s", name) ?: 0;
        return 1;
}

/* A session of this entry? */
static const Session *hygiene_stale_session(const HygieneStale *h, const char *id) {
        const Session *s = inventory_find(h->inv, h->tree, id);
        return s && s->project_dir && streq(s->project_dir, h->dir) ? s : NULL;
}

/* Is chats/<name> a file of a session of this entry (its transcript or a sidecar), counted in
 * the session's bytes? */
static bool hygiene_stale_owned(const HygieneStale *h, const char *name) {
        static const char *const suffixes[] = { ".jsonl", ".worktree.json", ".pr.json",
                                                ".ledger.jsonl" };
        char id[SESSION_ID_MAX + 1];

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (hygiene_stale_id(name, suffixes[i], id))
                        return hygiene_stale_session(h, id) != NULL;
        return false;
}

/* chats/ (cfd). */
static int hygiene_stale_chats(HygieneStale *h, int cfd) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, cfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                char id[SESSION_ID_MAX + 1];
                struct stat st;

                r = hygiene_stale_stat(h, cfd, name, &st);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                hygiene_stale_count(h, &st, true);
                if (S_ISREG(st.st_mode) && hygiene_stale_owned(h, name)) {
                        /* a session's file: its bytes are the session's (no double count) */
                        h->bytes -= (uint64_t)st.st_size;
                        h->bytes_alloc -= (uint64_t)st.st_blocks * 512;
                }
                if (S_ISDIR(st.st_mode) && streq(name, "archive")) {
                        _cleanup_close_ int afd = fs_open_noatime(cfd, name, O_RDONLY | O_DIRECTORY);
                        FsDir a;
                        const char *an;
                        unsigned char at;

                        if (afd < 0) {
                                r = hygiene_stale_keep(h, "chats/archive/ cannot be listed");
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        fs_dir_init(&a, afd);
                        if (fs_dir_next(&a, &an, &at) != 0) {
                                r = hygiene_stale_keep(h, "archived sessions stay (archiving is "
                                                          "retention)");
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                if (S_ISREG(st.st_mode) && hygiene_stale_id(name, ".jsonl", id)) {
                        h->transcripts = true;
                        r = hygiene_stale_session(h, id)
                                    ? hygiene_stale_lines(h, cfd, name, &st)
                                    : hygiene_stale_keep(h, "a transcript the scan did not see: "
                                                            "chats/%s", name);
                } else if (S_ISREG(st.st_mode) && hygiene_stale_id(name, ".worktree.json", id)) {
                        json_object *o = NULL, *p = NULL;

                        if (json_read_file(cfd, name, 1024 * 1024,
                                           json_input_info(JSON_INPUT_WORKTREE)->dialect, &o) < 0 ||
                            !json_object_is_type(o, json_type_object))
                                r = hygiene_stale_keep(h, "an unreadable worktree sidecar: %s",
                                                       name);
                        else if (json_object_object_get_ex(o, "worktreePath", &p) &&
                                 json_object_is_type(p, json_type_string))
                                r = hygiene_stale_cwd(h, json_object_get_string(p));
                        else
                                r = 0;
                        json_object_put(o);
                } else if (S_ISREG(st.st_mode) && (hygiene_stale_id(name, ".pr.json", id) ||
                                                   hygiene_stale_id(name, ".ledger.jsonl", id)))
                        r = 0;
                else if (S_ISREG(st.st_mode) && claims_is_claim_name(name)) {
                        _cleanup_(claims_done) ClaimSet set = {};

                        r = claims_add(&set, cfd, name);
                        if (r >= 0 && set.n == 1 && !set.claims[0].malformed &&
                            set.claims[0].work_dir)
                                r = hygiene_stale_cwd(h, set.claims[0].work_dir);
                        else if (r >= 0)
                                r = hygiene_stale_keep(h, "a runtime claim qgc cannot read: %s",
                                                       name);
                } else
                        r = hygiene_stale_keep(h, "an entry qgc does not know: chats/%s", name);
                if (r < 0)
                        return r;
        }
        if (k < 0)
                return k == -ENOMEM ? k : hygiene_stale_keep(h, "chats/ cannot be listed");
        return 0;
}

static bool hygiene_is_agent_file(const char *n) {
        return strneq(n, "agent-", 6) &&
               (hygiene_endswith(n, ".jsonl") || hygiene_endswith(n, ".meta.json") ||
                hygiene_endswith(n, ".jsonl.stream"));
}

/* subagents/ (sfd): <id>/agent-<x>.jsonl, .meta.json, .jsonl.stream. */
static int hygiene_stale_subagents(HygieneStale *h, int sfd) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, sfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                _cleanup_close_ int ifd = -EBADF;
                struct stat st;
                FsDir e;
                const char *en;
                unsigned char et;
                bool owned;
                int m;

                r = hygiene_stale_stat(h, sfd, name, &st);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                owned = S_ISDIR(st.st_mode) && hygiene_stale_session(h, name) != NULL;
                if (!owned) /* else the session's bytes (no double count) */
                        hygiene_stale_count(h, &st, true);
                if (!S_ISDIR(st.st_mode) || !qwen_session_id_valid(name)) {
                        r = hygiene_stale_keep(h, "an entry qgc does not know: subagents/%s", name);
                        if (r < 0)
                                return r;
                        continue;
                }
                ifd = fs_open_noatime(sfd, name, O_RDONLY | O_DIRECTORY);
                if (ifd < 0) {
                        r = hygiene_stale_keep(h, "subagents/%s cannot be listed", name);
                        if (r < 0)
                                return r;
                        continue;
                }
                fs_dir_init(&e, ifd);
                while ((m = fs_dir_next(&e, &en, &et)) > 0) {
                        struct stat est;

                        r = hygiene_stale_stat(h, ifd, en, &est);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                        hygiene_stale_count(h, &est, true);
                        if (owned) { /* the session's bytes (no double count) */
                                h->bytes -= (uint64_t)est.st_size;
                                h->bytes_alloc -= (uint64_t)est.st_blocks * 512;
                        }
                        if (!S_ISREG(est.st_mode) || !hygiene_is_agent_file(en))
                                r = hygiene_stale_keep(h, "an entry qgc does not know: "
                                                          "subagents/%s/%s", name, en);
                        else if (hygiene_endswith(en, ".jsonl"))
                                r = hygiene_stale_lines(h, ifd, en, &est);
                        if (r < 0)
                                return r;
                }
                if (m < 0 && (r = hygiene_stale_keep(h, "subagents/%s cannot be listed", name)) < 0)
                        return r;
        }
        if (k < 0)
                return k == -ENOMEM ? k : hygiene_stale_keep(h, "subagents/ cannot be listed");
        return 0;
}

/* The review directory name of a session of this entry? */
static int hygiene_stale_review_name(const HygieneStale *h, const char *name) {
        for (size_t i = h->first; i < h->end; i++) {
                _cleanup_free_ char *n = erase_review_dir_name(h->inv->sessions[i].id);
                if (!n)
                        return -ENOMEM;
                if (streq(n, name))
                        return 1;
        }
        return 0;
}

/* workflows/ (wfd): only generated/review/<a session's review dir>/ (erase.h). */
static int hygiene_stale_workflows(HygieneStale *h, int wfd) {
        static const char *const path[] = { "generated", "review" };
        _cleanup_close_ int gfd = -EBADF, rvfd = -EBADF;
        int *fds[2] = { &gfd, &rvfd };
        int dfd = wfd;
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        for (size_t lvl = 0; lvl <= ELEMENTSOF(path); lvl++) {
                fs_dir_init(&d, dfd);
                while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                        struct stat st;

                        r = hygiene_stale_stat(h, dfd, name, &st);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                        hygiene_stale_count(h, &st, true);
                        if (lvl < ELEMENTSOF(path) && S_ISDIR(st.st_mode) && streq(name, path[lvl]))
                                continue;
                        r = lvl == ELEMENTSOF(path) && S_ISDIR(st.st_mode)
                                    ? hygiene_stale_review_name(h, name)
                                    : 0;
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                _cleanup_close_ int rfd = fs_open_noatime(dfd, name,
                                                                      O_RDONLY | O_DIRECTORY);
                                HygieneSum sum = {};

                                if (rfd >= 0)
                                        hygiene_sum(rfd, h->dev, 1, &sum);
                                h->bytes += sum.bytes;
                                h->bytes_alloc += sum.bytes_alloc;
                                h->mtime = MAX(h->mtime, sum.mtime);
                                if (rfd >= 0 && !sum.incomplete)
                                        continue;
                        }
                        r = hygiene_stale_keep(h, "an entry qgc does not know: workflows/.../%s",
                                               name);
                        if (r < 0)
                                return r;
                }
                if (k < 0)
                        return k == -ENOMEM ? k
                                            : hygiene_stale_keep(h, "workflows/ cannot be listed");
                if (lvl == ELEMENTSOF(path))
                        break;
                *fds[lvl] = hygiene_open_dir(dfd, path[lvl], h->dev, NULL);
                if (*fds[lvl] < 0)
                        break; /* nothing below */
                dfd = *fds[lvl];
        }
        return 0;
}

/* The cwds a marker of ours recorded: its lines that are absolute paths (a marker of another
 * writer's format adds none). */
static int hygiene_stale_marker_cwds(HygieneStale *h, int pfd) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        char *p, *e;
        int r;

        r = fs_read_file(pfd, HYGIENE_STALE_MARKER, 64 * 1024, &text, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || memchr(text, '\0', n))
                return hygiene_stale_keep(h, "its marker cannot be read");
        for (p = text; p < text + n; p = e + 1) {
                e = memchr(p, '\n', (size_t)(text + n - p));
                if (!e)
                        break; /* not a whole line */
                *e = '\0';
                if (p[0] == '/' && (r = hygiene_stale_cwd(h, p)) < 0)
                        return r;
        }
        return 0;
}

/* Every entry of projects/<dir>/ (pfd). */
static int hygiene_stale_walk(HygieneStale *h, int pfd) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, pfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                _cleanup_close_ int sub = -EBADF;
                struct stat st;

                r = hygiene_stale_stat(h, pfd, name, &st);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                if (streq(name, HYGIENE_STALE_MARKER) && S_ISREG(st.st_mode)) {
                        fs_fileid_from_stat(&h->marker, &st);
                        hygiene_stale_count(h, &st, false);
                        r = hygiene_stale_marker_cwds(h, pfd);
                        if (r < 0)
                                return r;
                        continue;
                }
                hygiene_stale_count(h, &st, !(h->skip_org && streq(name, "session-organization.v1.json")));
                if (streq(name, "session-organization.v1.json") && S_ISREG(st.st_mode))
                        continue;
                if (S_ISDIR(st.st_mode) && (streq(name, "chats") || streq(name, "subagents") ||
                                            streq(name, "workflows"))) {
                        sub = fs_open_noatime(pfd, name, O_RDONLY | O_DIRECTORY);
                        if (sub < 0)
                                r = hygiene_stale_keep(h, "%s/ cannot be listed", name);
                        else if (streq(name, "chats"))
                                r = hygiene_stale_chats(h, sub);
                        else if (streq(name, "subagents"))
                                r = hygiene_stale_subagents(h, sub);
                        else
                                r = hygiene_stale_workflows(h, sub);
                } else
                        r = hygiene_stale_keep(h, "an entry qgc does not know: %s", name);
                if (r < 0)
                        return r;
        }
        if (k < 0)
                return k == -ENOMEM ? k : hygiene_stale_keep(h, "cannot be listed");
        return 0;
}

/* Each recorded cwd: a temporary directory that does not exist. */
static int hygiene_stale_judge_cwds(HygieneStale *h) {
        _cleanup_free_ char *copy = NULL;
        char *p, *e;

        if (!h->cwds.buf || !h->cwds.buf[0])
                return hygiene_stale_keep(h, "no recorded cwd");
        copy = strdup(h->cwds.buf);
        if (!copy)
                return -ENOMEM;
        for (p = copy; *p; p = e + 1) {
                struct stat st;

                e = strchr(p, '\n');
                *e = '\0';
                if (!hygiene_temp_path(p)) {
                        h->cwd_back = true;
                        return hygiene_stale_keep(h, "a recorded cwd is no temporary directory: %s", p);
                }
                /* outside the tree: a plain lstat proves only absence */
                if (lstat(p, &st) == 0) {
                        h->cwd_back = true;
                        return hygiene_stale_keep(h, "a recorded cwd exists: %s", p);
                }
                if (errno != ENOENT)
                        return hygiene_stale_keep(h, "cannot tell whether %s exists", p);
        }
        return 0;
}

/* live_project_busy()'s filter: a session of this tree found only in other projects. */
static bool hygiene_stale_elsewhere(const char *id, void *userdata) {
        const HygieneStale *h = userdata;
        const Session *s = inventory_find(h->inv, h->tree, id);

        return s && !(s->project_dir && streq(s->project_dir, h->dir));
}

/* Examine projects/<dir>/ (pfd, open; the sessions [first, end) of inv are its): every fact
 * the rule needs, liveness last (the costliest). */
static int hygiene_stale_examine(HygieneStale *h, int pfd) {
        _cleanup_free_ char *busy = NULL;
        _cleanup_close_ int cfd = -EBADF;
        int r;

        for (size_t i = h->first; i < h->end; i++) {
                const Session *s = &h->inv->sessions[i];
                if (s->owner != OWNER_OK || !s->cwd)
                        r = hygiene_stale_keep(h, "a session of unproven cwd (%.8s)", s->id);
                else
                        r = hygiene_stale_cwd(h, s->cwd);
                if (r >= 0 && s->state != SESSION_ACTIVE)
                        r = hygiene_stale_keep(h, "archived sessions stay (archiving is retention)");
                if (r < 0)
                        return r;
        }
        r = hygiene_stale_walk(h, pfd);
        if (r >= 0)
                r = hygiene_stale_judge_cwds(h);
        if (r < 0 || h->why)
                return r;
        cfd = fs_open_noatime(pfd, "chats", O_RDONLY | O_DIRECTORY);
        r = live_project_busy(&h->inv->trees[h->tree], cfd, hygiene_stale_elsewhere, h, &busy);
        if (r < 0)
                return r == -ENOMEM ? r
                                    : hygiene_stale_keep(h, "cannot tell whether a Qwen process "
                                                            "of the project is live");
        if (r > 0)
                return hygiene_stale_keep(h, "a Qwen process of the project may be live (%s)", busy);
        return 0;
}

static bool hygiene_stale_all_temp(const Inventory *inv, size_t first, size_t end) {
        for (size_t i = first; i < end; i++) {
                const Session *s = &inv->sessions[i];
                if (s->owner != OWNER_OK || !s->cwd || !hygiene_temp_path(s->cwd))
                        return false;
        }
        return end > first;
}

/* The stale project entries of tree t (projects/ below rfd). */
static int hygiene_scan_stale(Inventory *inv, size_t t, int rfd, dev_t dev) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int pfd = -EBADF;
        const char *name;
        unsigned char type;
        size_t base = 0, tend;
        int k, r;

        if (!d)
                return -ENOMEM;
        pfd = hygiene_open_dir(rfd, "projects", dev, NULL);
        if (pfd < 0)
                return 0;
        while (base < inv->n_sessions && inv->sessions[base].tree < t)
                base++;
        tend = base;
        while (tend < inv->n_sessions && inv->sessions[tend].tree == t)
                tend++;
        fs_dir_init(d, pfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                _cleanup_(hygiene_stale_done) HygieneStale h = { .inv = inv, .tree = t, .dev = dev };
                _cleanup_close_ int efd = -EBADF;
                _cleanup_free_ char *dname = strdup(name);
                Orphan o = { .kind = ORPHAN_STALE_PROJECT, .tree = t };
                struct stat st, mst;
                bool mount = false, marked;

                if (!dname)
                        return -ENOMEM;
                h.dir = dname;
                /* its sessions: a run of the inventory, sorted by (tree, project_dir) */
                for (size_t lo = base, hi = tend; lo < hi;) {
                        size_t mid = lo + (hi - lo) / 2;
                        const char *pd = inv->sessions[mid].project_dir;
                        if (!pd || strcmp(pd, dname) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                        h.first = lo;
                }
                if (base == tend)
                        h.first = base;
                h.end = h.first;
                while (h.end < inv->n_sessions && inv->sessions[h.end].tree == t &&
                       streq(inv->sessions[h.end].project_dir ?: "", dname))
                        h.end++;
                efd = hygiene_open_dir(pfd, dname, dev, &st);
                if (efd < 0)
                        continue;
                marked = fs_statat(efd, HYGIENE_STALE_MARKER, &mst, &mount) == 0;
                /* an entry with no session may still record cwds (sidecars, claims: #7906) */
                if (!marked && h.end > h.first && !hygiene_stale_all_temp(inv, h.first, h.end))
                        continue; /* not a candidate: not listed */
                r = hygiene_stale_examine(&h, efd);
                if (r < 0)
                        return r;
                if (!marked && (h.cwd_back || !h.cwds.buf || !h.cwds.buf[0]))
                        continue; /* a temporary directory in use, or nothing recorded */
                fs_fileid_from_stat(&o.dir, &st);
                o.bytes = (uint64_t)st.st_size + h.bytes;
                o.bytes_alloc = (uint64_t)st.st_blocks * 512 + h.bytes_alloc;
                o.mtime = h.mtime;
                o.marker = h.marker;
                o.cwd_back = h.cwd_back;
                o.project_dir = strdup("projects");
                o.name = TAKE_PTR(dname);
                o.stale_why = TAKE_PTR(h.why);
                o.cwds = strbuf_steal(&h.cwds);
                if (!o.project_dir || !o.cwds) {
                        orphan_done(&o);
                        return -ENOMEM;
                }
                r = inventory_add_orphan(inv, &o);
                if (r < 0)
                        return r;
        }
        return k == -ENOMEM ? k : 0;
}

/* The first recorded cwd of o, for reasons (into buf). */
static const char *hygiene_stale_first_cwd(const Orphan *o, char *buf, size_t n) {
        const char *c = o->cwds ?: "";
        size_t len = strcspn(c, "\n");

        snprintf(buf, n, "%.*s%s", (int)MIN(len, n - 8), c, c[len] && c[len + 1] ? ", ..." : "");
        return buf;
}

static bool hygiene_stale_member(const Orphan *o, const Session *s) {
        return s->tree == o->tree && s->project_dir && o->name && streq(s->project_dir, o->name);
}

/* A session protection that keeps a stale entry: the person's, the liveness ones and min-age
 * ("never touched"); keep-latest does not apply (the entry goes whole). */
#define HYGIENE_STALE_BLOCK                                                                        \
        (PROT_LIVE | PROT_UNVERIFIED | PROT_FOREIGN | PROT_CONFLICT | PROT_PROTECT | PROT_PINNED | \
         PROT_TITLED | PROT_SCHEDULED | PROT_WORKTREE | PROT_MIN_AGE)

static int hygiene_stale_set(Verdict *vd, Verb verb, const char *rule, char *reason) {
        return verdict_set_fact(vd, verb, rule, reason);
}

int hygiene_stale_decide(const Inventory *inv, size_t oi, const Policy *p, msec_t now,
                         bool is_protected, bool after_limits, Verdicts *v) {
        const Orphan *o = &inv->orphans[oi];
        Verdict *vd = &v->orphans[oi];
        const char *key = "stale-project-min-age";
        msec_t limit = p->stale_project_min_age;
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX], cwd[256];
        size_t n = 0, held = 0;
        int r;

        if (after_limits) {
                /* the deletion limits held some of its sessions back: the entry waits */
                if (vd->verb != VERB_DELETE)
                        return 0;
                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (hygiene_stale_member(o, &inv->sessions[i]) &&
                            v->sessions[i].verb != VERB_DELETE)
                                held++;
                if (held == 0)
                        return 0;
                return hygiene_stale_set(vd, VERB_KEEP, key,
                                         strprintf("stale project entry, %zu of its sessions held "
                                                   "back by the deletion limits: it goes in a "
                                                   "later run", held));
        }
        vd->mark = 0;
        (void)hygiene_stale_first_cwd(o, cwd, sizeof cwd);
        format_duration_exact(b, sizeof b, limit);
        if (limit == MSEC_INFINITY)
                return hygiene_stale_set(vd, VERB_KEEP, "none",
                                         strprintf("stale project entry (%s off)", key));
        if (is_protected) {
                vd->protections |= PROT_PROTECT;
                return hygiene_stale_set(vd, VERB_KEEP, protection_to_string(PROT_PROTECT),
                                         strdup("stale project entry, protected project "
                                                "(protect = true)"));
        }
        if (o->cwd_back) {
                vd->mark = o->marker.present ? -1 : 0;
                return hygiene_stale_set(vd, VERB_KEEP, "none",
                                         strprintf("project entry, no longer stale: %s%s",
                                                   o->stale_why ?: "a recorded cwd exists",
                                                   vd->mark ? "; would remove its mark" : ""));
        }
        if (o->stale_why)
                return hygiene_stale_set(vd, VERB_KEEP, "none",
                                         strprintf("stale project entry (cwd %s gone), kept: %s",
                                                   cwd, o->stale_why));
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                const Verdict *sv = &v->sessions[i];

                if (!hygiene_stale_member(o, s))
                        continue;
                n++;
                if (p->keep_titled && s->title_unread)
                        /* policy_title_need() reads every title with this key on: a net */
                        return hygiene_stale_set(vd, VERB_KEEP, "none",
                                                 strprintf("stale project entry (cwd %s gone), "
                                                           "kept: session %.8s: title not read",
                                                           cwd, s->id));
                if ((sv->protections & HYGIENE_STALE_BLOCK) || s->n_tasks > 0) {
                        unsigned prot = sv->protections & HYGIENE_STALE_BLOCK;
                        const char *what = "bound to a scheduled task";
                        _cleanup_free_ char *why = sv->verb == VERB_SKIP ? verdict_reason(sv, s)
                                                                         : strdup("");

                        if (!why)
                                return -ENOMEM;

                        for (unsigned bit = 0; bit < _PROT_MAX && prot; bit++)
                                if (prot & (1u << bit)) {
                                        what = protection_to_string((Protection)(1u << bit));
                                        break;
                                }
                        return hygiene_stale_set(vd, VERB_KEEP, "none",
                                                 strprintf("stale project entry (cwd %s gone), "
                                                           "kept by session %.8s (%s%s%s)",
                                                           cwd, s->id, what,
                                                           sv->verb == VERB_SKIP ? ": " : "",
                                                           why));
                }
        }
        format_duration(a, sizeof a, MAX(now - o->mtime, (msec_t)0));
        if (now - o->mtime <= limit)
                return hygiene_stale_set(vd, VERB_KEEP, "none",
                                         strprintf("stale project entry (cwd %s gone), a file "
                                                   "written %s ago <= %s %s",
                                                   cwd, a, key, b));
        if (!o->marker.present) {
                vd->mark = 1;
                return hygiene_stale_set(vd, VERB_KEEP, key,
                                         strprintf("stale project entry (cwd %s gone): would mark "
                                                   "it; it goes once the mark is older than %s %s",
                                                   cwd, key, b));
        }
        format_duration(a, sizeof a, MAX(now - o->marker.mtime_ns / 1000000, (msec_t)0));
        if (now - o->marker.mtime_ns / 1000000 <= limit)
                return hygiene_stale_set(vd, VERB_KEEP, "none",
                                         strprintf("stale project entry (cwd %s gone), marked %s "
                                                   "ago <= %s %s", cwd, a, key, b));
        r = hygiene_stale_set(vd, VERB_DELETE, key,
                              n > 0 ? strprintf("stale project entry (cwd %s gone), marked %s ago "
                                                "> %s; its %zu session%s deleted first",
                                                cwd, a, b, n, n == 1 ? "" : "s")
                                    : strprintf("stale project entry (cwd %s gone, no session), "
                                                "marked %s ago > %s", cwd, a, b));
        if (r < 0)
                return r;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                Verdict *sv = &v->sessions[i];

                if (!hygiene_stale_member(o, &inv->sessions[i]))
                        continue;
                r = hygiene_stale_set(sv, VERB_DELETE, key,
                                      strprintf("stale project entry: cwd %s gone, marked %s ago "
                                                "> %s %s", cwd, a, key, b));
                if (r < 0)
                        return r;
                sv->protections &= ~(unsigned)PROT_LATEST;
        }
        return 0;
}

/* Write the marker in projects/<name>/ (efd): created, never replaced, then made durable. It
 * holds the recorded cwds, one a line, so that a later run still knows them when the entry's
 * transcripts are gone (a run stopped between its sessions' deletes and its removal). */
static int hygiene_stale_mark_write(int efd, const char *cwds, OrphansStepFn step,
                                    void *userdata) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = fs_openat(efd, HYGIENE_STALE_MARKER,
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return fd;
        r = write_all(fd, cwds ?: "", strlen(cwds ?: ""));
        if (r >= 0)
                r = fs_fsync(fd);
        if (r >= 0)
                r = fs_fsync(efd);
        if (step)
                step(userdata, HYGIENE_STALE_MARKER);
        return r;
}

int hygiene_stale_act(const Inventory *inv, const Orphan *o, int mark, bool remove, int root_fd,
                      dev_t dev, OrphansStepFn step, void *userdata, const char **ret_why) {
        _cleanup_(hygiene_stale_done) HygieneStale h = { .inv = inv, .tree = o->tree, .dev = dev,
                                                          .dir = o->name, .skip_org = true };
        _cleanup_close_ int pfd = -EBADF, efd = -EBADF;
        struct stat st;
        int r;

        *ret_why = "changed since scan";
        if (o->kind != ORPHAN_STALE_PROJECT || !o->name || (!remove && mark == 0))
                return 0;
        pfd = fs_open_path(root_fd, "projects", dev);
        if (pfd < 0)
                return pfd == -ENOENT ? 0 : (*ret_why = "cannot open projects/", pfd);
        efd = hygiene_open_dir(pfd, o->name, dev, &st);
        if (efd < 0)
                return efd == -ENOENT ? 0 : (*ret_why = "cannot open it", efd);
        /* a directory changes as its sessions go: its identity is dev and inode */
        if (st.st_dev != o->dir.dev || st.st_ino != o->dir.ino)
                return 0;
        if (mark < 0) {
                r = fs_check_identity(efd, HYGIENE_STALE_MARKER, &o->marker);
                if (r <= 0)
                        return r;
                r = fs_unlink(efd, HYGIENE_STALE_MARKER, 0);
                if (r < 0)
                        return r == -ENOENT ? 0 : (*ret_why = "cannot remove its mark", r);
                if (step)
                        step(userdata, HYGIENE_STALE_MARKER);
                *ret_why = NULL;
                return 1;
        }
        if (mark > 0) {
                if (fs_exists(efd, HYGIENE_STALE_MARKER) != 0)
                        return 0;
                r = hygiene_stale_mark_write(efd, o->cwds, step, userdata);
                if (r < 0) {
                        *ret_why = "cannot write its mark";
                        return r;
                }
                *ret_why = NULL;
                return 1;
        }

        /* the removal: everything the scan found still holds, and its sessions are gone */
        for (h.first = 0; h.first < inv->n_sessions && !hygiene_stale_member(o, &inv->sessions[h.first]);)
                h.first++;
        for (h.end = h.first; h.end < inv->n_sessions && hygiene_stale_member(o, &inv->sessions[h.end]);)
                h.end++;
        /* the cwds the scan read (its transcripts are gone now), and those found now */
        r = strbuf_printf(&h.cwds, "%s", o->cwds ?: "") < 0 ? -ENOMEM : 0;
        if (r >= 0)
                r = hygiene_stale_walk(&h, efd);
        if (r >= 0 && !h.why)
                r = hygiene_stale_judge_cwds(&h);
        if (r < 0)
                return r;
        if (h.transcripts) {
                *ret_why = "a session of it is still there (its delete was skipped)";
                return 0;
        }
        if (h.why) {
                *ret_why = h.cwd_back ? "a recorded cwd exists again" : "something new inside";
                log_debug("projects/%s: %s", o->name, h.why);
                return 0;
        }
        if (!h.marker.present || h.marker.ino != o->marker.ino ||
            h.marker.mtime_ns != o->marker.mtime_ns || !o->marker.present) {
                *ret_why = "its mark changed since scan";
                return 0;
        }
        if (h.mtime > o->mtime) {
                *ret_why = "written since scan";
                return 0;
        }
        {
                _cleanup_free_ char *busy = NULL;
                _cleanup_close_ int cfd = fs_open_noatime(efd, "chats", O_RDONLY | O_DIRECTORY);

                r = live_project_busy(&inv->trees[o->tree], cfd, hygiene_stale_elsewhere, &h,
                                      &busy);
                if (r != 0) {
                        *ret_why = r > 0 ? "a Qwen process of the project may be live"
                                         : "cannot tell whether a Qwen process of the project "
                                           "is live";
                        return r > 0 ? 0 : r;
                }
        }
        efd = safe_close(efd);
        r = fs_rm_rf_at(pfd, o->name, dev, NULL);
        if (r < 0) {
                *ret_why = r == -EBUSY ? "kept: a mount point inside" : "cannot remove";
                return r;
        }
        if (step)
                step(userdata, o->name);
        *ret_why = NULL;
        return 1;
}
