/* orphans.c: reclaim orphaned file-history/<id>/ and subagents/<id>/ directories and empty
 * project directories, under the executor's rules: a directory fd opened without following
 * symlinks, the identity the scan saw, no transcript for the id anywhere, never leaving the
 * filesystem; an empty project is removed by rmdir() only, never recursively. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cold.h"
#include "fs.h"
#include "rm-rf.h"
#include "macro.h"
#include "orphans.h"
#include "util.h"

static void orphans_step(OrphansStepFn step, void *userdata, const char *what) {
        if (step)
                step(userdata, what);
}

/* Does a chats/, chats/archive/ or cold tier directory hold <id>.jsonl (<id>.jsonl.zst)? Ids are written in lower case;
 * the name as given, lower- and upper-cased are tried (one fstatat each, no listing, so many
 * orphans stay cheap). Fails closed (true) when it cannot tell. */
static bool orphans_dir_has_transcript(int dfd, const char *sub, const char *tname) {
        _cleanup_close_ int fd = sub ? fs_open_dir(dfd, sub) : -EBADF;
        _cleanup_free_ char *lower = strdup(tname), *upper = strdup(tname);
        int at = sub ? fd : dfd;

        if (sub && fd == -ENOENT)
                return false;
        if ((sub && fd < 0) || !lower || !upper)
                return true;
        for (char *p = lower; *p; p++)
                *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        for (char *p = upper; *p && !strneq(p, ".jsonl", 6); p++)
                *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        const char *names[] = { tname, lower, upper };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (fs_exists(at, names[i]) != 0)
                        return true;
        return false;
}

/* Open project directory name of projects_fd for reading; a symlinked or mounted project is
 * followed, as Qwen does: this only looks for a transcript, to keep an id's directories, and
 * the one openat() of the tree that may follow. fd or -errno. */
static int orphans_open_project(int projects_fd, const char *name) {
        int fd = fs_open_dir(projects_fd, name);

        if (fd != -ELOOP && fd != -ENOTDIR && fd != -EXDEV)
                return fd;
        fd = openat(projects_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        return fd < 0 ? -errno : fd;
}

/* Is there a transcript for tname below one runtime root? Fails closed (true). */
static bool orphans_transcript_in_root(int runtime_fd, const char *tname) {
        _cleanup_free_ char *ztname = util_strprintf("%s" COLD_SUFFIX, tname);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int fd = -EBADF;
        const char *name;
        unsigned char type;
        bool found = false;
        int k = 0;

        if (runtime_fd < 0 || !d || !ztname)
                return true;
        fd = fs_open_dir(runtime_fd, "projects");
        if (fd == -ENOENT)
                return false;
        if (fd < 0)
                return true;
        fs_dir_init(d, fd);
        while (!found && (k = fs_dir_next(d, &name, &type)) > 0) {
                if (name[0] == '.')
                        continue;
                _cleanup_close_ int pfd = orphans_open_project(fd, name);
                _cleanup_close_ int cfd = pfd >= 0 ? fs_open_dir(pfd, "chats") : -EBADF;
                if (pfd == -ENOTDIR || pfd == -ELOOP || pfd == -ENOENT || cfd == -ENOENT)
                        continue;
                if (pfd < 0 || cfd < 0)
                        found = true;
                else
                        found = orphans_dir_has_transcript(cfd, NULL, tname) ||
                                orphans_dir_has_transcript(cfd, "archive", tname) ||
                                orphans_dir_has_transcript(cfd, "archive/" COLD_DIR, ztname);
        }
        return found || k < 0; /* not listed to its end: cannot tell */
}

bool orphans_transcript_anywhere(const int *runtime_fds, size_t n, const char *id) {
        _cleanup_free_ char *tname = util_strprintf("%s.jsonl", id);

        if (!tname)
                return true;
        for (size_t i = 0; i < n; i++)
                if (orphans_transcript_in_root(runtime_fds[i], tname))
                        return true;
        return false;
}

/* rmdir (dfd, name), ENOENT being a benign race. */
static int orphans_rmdir(int dfd, const char *name, OrphansStepFn step, void *userdata) {
        int r = fs_unlink(dfd, name, AT_REMOVEDIR);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        orphans_step(step, userdata, name);
        return 0;
}

/* Remove an empty project directory: an empty cold tier (chats/archive/.qgc-cold/), empty
 * chats/archive/, chats/, subagents/, then itself; never recursively. */
static int orphans_remove_empty_project(int projects_fd, const char *name, OrphansStepFn step,
                                        void *userdata) {
        _cleanup_close_ int pfd = fs_open_dir(projects_fd, name);
        int r;

        if (pfd < 0)
                return pfd;
        _cleanup_close_ int cfd = fs_open_dir(pfd, "chats");
        if (cfd >= 0) {
                _cleanup_close_ int afd = fs_open_dir(cfd, "archive");
                r = afd >= 0 ? orphans_rmdir(afd, COLD_DIR, step, userdata) : 0;
                if (r < 0 && r != -ENOTDIR)
                        return r;
                r = orphans_rmdir(cfd, "archive", step, userdata);
                if (r < 0)
                        return r;
                r = orphans_rmdir(pfd, "chats", step, userdata);
                if (r < 0)
                        return r;
        } else if (cfd != -ENOENT)
                return cfd;
        r = orphans_rmdir(pfd, "subagents", step, userdata);
        if (r < 0 && r != -ENOTDIR)
                return r;
        return orphans_rmdir(projects_fd, name, step, userdata);
}

int orphans_reclaim(const Orphan *o, int root_fd, const char *rel, dev_t dev,
                    const int *runtime_fds, size_t n_runtime, OrphansStepFn step, void *userdata,
                    const char **ret_why) {
        _cleanup_close_ int pfd = fs_open_path(root_fd, rel, dev);
        int r;

        *ret_why = "changed since scan";
        if (pfd < 0)
                return 0;
        r = fs_check_identity(pfd, o->name, &o->dir);
        if (r <= 0)
                return r;

        if (o->kind == ORPHAN_EMPTY_PROJECT) {
                r = orphans_remove_empty_project(pfd, o->name, step, userdata);
                if (r == -ENOTEMPTY || r == -EEXIST) {
                        *ret_why = "no longer empty";
                        return 0;
                }
        } else {
                if (orphans_transcript_anywhere(runtime_fds, n_runtime, o->name)) {
                        *ret_why = "a transcript for this id exists now";
                        return 0;
                }
                r = rm_rf_at(pfd, o->name, dev, NULL);
                if (r >= 0)
                        orphans_step(step, userdata, o->name);
        }
        if (r < 0) {
                *ret_why = r == -EBUSY ? "kept: a mount point inside" : "cannot remove";
                return r;
        }
        *ret_why = NULL;
        return 1;
}
