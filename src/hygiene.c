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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fsutil.h"
#include "hygiene.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "scan.h"
#include "util.h"

#define HYGIENE_DEPTH_MAX 32
#define HYGIENE_TASKS_MAX (16 * 1024 * 1024)

bool hygiene_kind(OrphanKind k) {
        return k >= ORPHAN_TOOL_RESULT && k <= ORPHAN_LEGACY;
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
        default:
                return "orphan";
        }
}

unsigned hygiene_need(const Policy *p) {
        unsigned need = 0;

        for (OrphanKind k = ORPHAN_TOOL_RESULT; k <= ORPHAN_LEGACY; k++) {
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
        return scan_openat(dfd, name, O_RDONLY | O_DIRECTORY);
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
                        _cleanup_close_ int sub = scan_openat(dfd, name, O_RDONLY | O_DIRECTORY);
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

        if (scan_read_json_at(hfd, "scheduled_tasks.json", HYGIENE_TASKS_MAX, &o) < 0)
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

        if (scan_read_json_at(hfd, "scheduled_tasks.lock", 64 * 1024, &o) < 0)
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
                                _cleanup_close_ int sfd = scan_openat(tfd, hname,
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
                        _cleanup_close_ int ofd = scan_openat(tfd, hname, O_RDONLY | O_DIRECTORY);
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
                        _cleanup_close_ int ofd = scan_openat(tfd, hname, O_RDONLY | O_DIRECTORY);
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
                sfd = scan_openat(dfd, o->name, O_RDONLY | O_DIRECTORY);
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
