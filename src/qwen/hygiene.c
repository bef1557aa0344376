/* hygiene.c: the tree hygiene kinds (hygiene.h): each kind's policy key, limit and words, and
 * what the finding (hygiene-scan.c), the reclaim (hygiene-reclaim.c) and the stale project walk
 * (hygiene-stale.c) share: directory opens and sums, the file names Qwen leaves in tmp/<hash>/
 * and whether a tmp/<hash>/ is understood, through the safe-filesystem layer (fs.h), regular
 * files only, never leaving the tree's filesystem.
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

#include "hygiene.h"
#include "fs.h"
#include "json.h"
#include "json-input.h"
#include "live.h"
#include "macro.h"
#include "policy.h"
#include "qwen.h"
#include "util.h"

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
                if (policy_hygiene_limit(p, k, &key) != MSEC_INFINITY)
                        need |= 1u << k;
        }
        return need;
}

/* Legacy file names of Qwen <= 0.1: chats/session-<...>.json, checkpoint.json,
 * checkpoint-<tag>.json. */
bool hygiene_is_legacy_chat(const char *n) {
        return strneq(n, "session-", 8) && util_endswith(n, ".json") && strlen(n) > 13;
}

bool hygiene_is_checkpoint(const char *n) {
        return streq(n, "checkpoint.json") ||
               (strneq(n, "checkpoint-", 11) && util_endswith(n, ".json") && strlen(n) > 16);
}

/* (dfd, name) is a directory on dev (any when 0) and not a mount point (a bind mount of the
 * same filesystem included), never followed through a symlink: its fd, else -ENOENT, -ELOOP
 * (a symlink), -ENOTDIR, -EXDEV or another -errno. */
int hygiene_open_dir(int dfd, const char *name, dev_t dev, struct stat *ret_st) {
        struct stat st;
        bool mount = false;
        int r = fs_statat(dfd, name, &st, &mount);

        if (r < 0)
                return r;
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if ((dev != 0 && st.st_dev != dev) || mount)
                return -EXDEV;
        if (ret_st)
                *ret_st = st;
        return fs_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);
}

/* (dfd, name) is a regular file on dev, not a mount point. */
bool hygiene_regular(int dfd, const char *name, dev_t dev, struct stat *ret_st) {
        bool mount = false;

        return fs_statat(dfd, name, ret_st, &mount) == 0 && S_ISREG(ret_st->st_mode) &&
               (dev == 0 || ret_st->st_dev == dev) && !mount;
}

void hygiene_sum(int dfd, dev_t dev, unsigned depth, HygieneSum *s) {
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
                s->mtime = MAX(s->mtime, util_timespec_to_msec(&st.st_mtim));
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

/* scheduled_tasks.json holding no task? (an empty array) */
static bool hygiene_tasks_empty(int hfd) {
        json_object *o = NULL;
        bool empty;

        if (json_input_read(hfd, "scheduled_tasks.json", JSON_INPUT_TASKS, &o) < 0)
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

        if (json_input_read(hfd, "scheduled_tasks.lock", JSON_INPUT_TASKS_LOCK, &o) < 0)
                return true;
        if (json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "pid", &pid) &&
            json_object_is_type(pid, json_type_int) && json_object_get_int64(pid) > 0)
                live = live_pid_start(json_object_get_int64(pid), &ticks) != 0;
        json_object_put(o);
        return live;
}

/* Classify every entry of tmp/<hash>/ (open at hfd). */
int hygiene_tmp_classify(int hfd, dev_t dev, HygieneTmp *ret) {
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
                     util_endswith(name, ".output")) &&
                    reg)
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

/* A temporary directory by the OS's own places, absolute, with no "." or ".." component. */
bool hygiene_temp_path(const char *p) {
        if (!strneq(p, "/tmp/", 5) && !strneq(p, "/var/tmp/", 9))
                return false;
        return !strstr(p, "/./") && !strstr(p, "/../") && !util_endswith(p, "/.") &&
               !util_endswith(p, "/..");
}
