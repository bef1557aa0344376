/* recover.c: finds and finishes what an interrupted run left behind, with proof, never a guess.
 *
 * Half-done deletes. A delete removes the transcript first and the session's other files
 * (sidecars in chats/ and chats/archive/, file-history/<id>/, subagents/<id>/, debug/<id>.txt,
 * plans/<id>.md, workflows/generated/review/<id>-<hash>/, dead runtime claims) after it. Once the transcript is gone the scan no longer
 * sees the session, so a crash in between would leave those files forever. Before its first
 * step the delete therefore writes a pending marker, G/.qgc/pending/<id>.<hash>, durably (temp
 * file, fsync, rename, fsync): the session, its project and every file it is about to remove
 * with its identity (dev, inode, size, mtime, ctime; dev and inode for directories). The
 * marker goes when the delete completes. The executor's group commit writes the markers of a batch
 * of deletes into one such file, one marker after the other; the recovery pass finishes every
 * marker of a file, and the file goes when all of them are done. The recovery pass of the next
 * real run reads every marker: while a transcript of the session exists (the delete never began,
 * or a new copy appeared) it only drops the marker; otherwise it removes each listed file that
 * still has its recorded identity, and then the marker. A file that changed is left alone. A
 * marker can only name the files a delete of its session removes (recover_marker_parse() checks
 * every path).
 *
 * Half-done restores. A restore records its start in G/.qgc/session-times (session-times.h) before
 * its first change and its end after; a session whose start has no end and that is still
 * archived or compressed gets the RESTORE step `qgc restore` would plan (restore_add_id()).
 *
 * Temporary files. Every file qgc writes atomically goes through ".<name>.qgc-tmp" in the
 * target's directory (fs_write_atomic(), the marker itself, erase.c's edits): chats/,
 * chats/archive/, G/.qgc/pending/, projects/<dir>/ and tmp/<hash>/. The pass lists those
 * directories and plans the removal of every regular file of that name owned by the tree's user. The executor removes them only under the tree lock,
 * which every writer of such a file holds, and only if they still have their scan identity. A
 * directory projects/.<dir>.qgc-tmp is a stale project entry whose removal was interrupted
 * (hygiene-reclaim.h): its marker and itself go, when it holds nothing else.
 *
 * recover.c is the pass: the scan that plans the steps and their execution. The marker itself
 * (its text, the check of every path it names, its durable write and removal) is
 * recover-marker.c's. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cold.h"
#include "fs.h"
#include "hygiene-reclaim.h"
#include "rm-rf.h"
#include "log.h"
#include "macro.h"
#include "recover.h"
#include "restore.h"
#include "util.h"

/* ---------------------------------------------------------------- a tree's two roots */

typedef struct RecoverRoots {
        const Tree *tree;
        int global_fd, runtime_fd;
        dev_t global_dev, runtime_dev;
} RecoverRoots;

static int recover_root_fd(const RecoverRoots *rt, bool in_global, dev_t *ret_dev) {
        *ret_dev = in_global ? rt->global_dev : rt->runtime_dev;
        return in_global ? rt->global_fd : rt->runtime_fd;
}

static char *recover_abs(const RecoverRoots *rt, bool in_global, const char *rel) {
        return util_strprintf("%s/%s", in_global ? rt->tree->global_dir : rt->tree->runtime_dir,
                              rel);
}

/* Open the parent directory of rel (below its root) and point *ret_base at the last component. */
static int recover_open_parent(const RecoverRoots *rt, bool in_global, const char *rel,
                               const char **ret_base) {
        _cleanup_free_ char *dir = strdup(rel);
        char *slash;
        dev_t dev;
        int root = recover_root_fd(rt, in_global, &dev);

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash) {
                int fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
                *ret_base = rel;
                return fd < 0 ? -errno : fd;
        }
        *slash = 0;
        *ret_base = rel + (slash - dir) + 1;
        return fs_open_path(root, dir, dev);
}

/* Does a transcript of the marker's session exist now (in chats/, chats/archive/ or compressed
 * in its cold tier)? */
static int recover_transcript_exists(const RecoverRoots *rt, const RecoverMarker *m) {
        static const char *const where[] = { "", "archive/", "archive/" COLD_DIR "/" };

        for (size_t w = 0; w < ELEMENTSOF(where); w++) {
                _cleanup_free_ char *rel =
                        util_strprintf("projects/%s/chats/%s%s.jsonl%s", m->project_dir, where[w],
                                       m->session, w == 2 ? COLD_SUFFIX : "");
                _cleanup_close_ int fd = -EBADF;
                const char *base;
                int r;

                if (!rel)
                        return -ENOMEM;
                fd = recover_open_parent(rt, false, rel, &base);
                if (fd == -ENOENT)
                        continue;
                if (fd < 0)
                        return fd;
                r = fs_exists(fd, base);
                if (r != 0)
                        return r;
        }
        return 0;
}

/* Does (fd, base) still have the identity recorded in f? 1 yes, 0 no or gone, -errno. */
static int recover_file_matches(int fd, const char *base, const RecoverFile *f) {
        struct stat st;

        if (!f->is_dir)
                return fs_check_identity(fd, base, &f->id);
        if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        return S_ISDIR(st.st_mode) && st.st_dev == f->id.dev && st.st_ino == f->id.ino;
}

/* The files of the marker that a recovery removes (matching ones, transcripts never): listed
 * in disp when given, removed when execute. Returns the count, or -errno. */
static int recover_apply(const RecoverRoots *rt, const RecoverMarker *m, bool execute,
                         RecoverStepFn step, void *userdata, PlanStep *disp) {
        int n = 0, ret = 0;

        for (size_t i = 0; i < m->n_files; i++) {
                const RecoverFile *f = &m->files[i];
                _cleanup_close_ int fd = -EBADF;
                const char *base;
                dev_t dev;
                int r;

                if (f->is_transcript)
                        continue;
                (void)recover_root_fd(rt, f->in_global, &dev);
                fd = recover_open_parent(rt, f->in_global, f->rel, &base);
                if (fd == -ENOENT)
                        continue;
                if (fd < 0) {
                        ret = ret ?: fd;
                        continue;
                }
                r = recover_file_matches(fd, base, f);
                if (r <= 0) {
                        if (r == 0)
                                log_debug("recover: '%s' is gone or changed, left alone", f->rel);
                        ret = ret ?: r;
                        continue;
                }
                if (disp) {
                        _cleanup_free_ char *abs = recover_abs(rt, f->in_global, f->rel);
                        r = abs ? plan_step_add_path(disp, abs, NULL) : -ENOMEM;
                        if (r < 0)
                                return r;
                }
                if (execute) {
                        r = f->is_dir ? rm_rf_at(fd, base, dev, NULL) : fs_unlink(fd, base, 0);
                        if (r < 0 && r != -ENOENT) {
                                ret = ret ?: r;
                                continue;
                        }
                        recover_marker_step(step, userdata, base);
                }
                n++;
        }
        return ret < 0 ? ret : n;
}

/* Read and parse the marker (dir_fd, name); its identity in *ret_id. */
static int recover_read_marker(int dir_fd, const char *name, RecoverMarker *ret, FileId *ret_id) {
        _cleanup_close_ int fd = fs_open_noatime(dir_fd, name, O_RDONLY);
        _cleanup_free_ char *text = NULL;
        struct stat st;
        size_t n;
        int r;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        fs_fileid_from_stat(ret_id, &st);
        r = fs_read_fd(fd, RECOVER_MARKER_MAX, &text, &n);
        if (r < 0)
                return r;
        return recover_marker_parse(text, ret);
}

int recover_finish_delete(int global_fd, dev_t global_dev, int runtime_fd, dev_t runtime_dev,
                          const PlanStep *st, RecoverStepFn step, void *userdata,
                          const char **ret_why) {
        RecoverRoots rt = { .global_fd = global_fd, .runtime_fd = runtime_fd,
                            .global_dev = global_dev, .runtime_dev = runtime_dev };
        _cleanup_(recover_marker_done) RecoverMarker m = {};
        _cleanup_close_ int dir_fd = fs_open_path(global_fd, st->dir, global_dev);
        FileId id;
        int r, n = 0;

        if (dir_fd < 0) {
                *ret_why = "cannot open the pending directory";
                return dir_fd;
        }
        r = fs_check_identity(dir_fd, st->name, &st->id);
        if (r <= 0) {
                *ret_why = "the marker changed since the scan";
                return r < 0 ? r : -ESTALE;
        }
        r = recover_read_marker(dir_fd, st->name, &m, &id);
        if (r < 0) {
                *ret_why = "cannot read the marker";
                return r;
        }
        /* every marker of the file (a batch's file holds several) */
        for (const RecoverMarker *x = &m; x; x = x->next) {
                int k;

                r = recover_transcript_exists(&rt, x);
                if (r < 0) {
                        *ret_why = "cannot tell whether a transcript exists";
                        return r;
                }
                if (r > 0) {
                        if (!m.next)
                                *ret_why = "a transcript of the session exists: only the marker "
                                           "removed";
                        continue;
                }
                k = recover_apply(&rt, x, /* execute= */ true, step, userdata, NULL);
                if (k < 0) {
                        *ret_why = "some files of the session could not be removed";
                        return k;
                }
                n += k;
        }
        r = recover_marker_remove(global_fd, global_dev, st->name, step, userdata);
        if (r < 0) {
                *ret_why = "cannot remove the marker";
                return r;
        }
        return n;
}

int recover_remove_temp(int root_fd, dev_t dev, const PlanStep *st, RecoverStepFn step,
                        void *userdata) {
        _cleanup_close_ int fd = fs_open_path(root_fd, st->dir, dev);
        int r;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = fs_check_identity(fd, st->name, &st->id);
        if (r <= 0)
                return r;
        if (streq(st->dir, "projects")) { /* its scan saw a directory there */
                r = hygiene_reclaim_stale_rest(fd, st->name, dev, step, userdata);
                return r == -ENOTEMPTY ? 0 : r; /* more than qgc left there: not ours */
        }
        r = fs_unlink(fd, st->name, 0);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        recover_marker_step(step, userdata, st->name);
        return 1;
}

/* ---------------------------------------------------------------- the scan */

/* Open the directory rel below dfd for listing: every component no-follow and on dev, the last
 * one with O_NOATIME where permitted (a dry run must not change an atime). */
static int recover_open_list(int dfd, const char *rel, dev_t dev) {
        _cleanup_free_ char *copy = strdup(rel);
        _cleanup_close_ int cur = -EBADF;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                struct stat st;
                int fd = fs_open_noatime(cur >= 0 ? cur : dfd, c, O_RDONLY | O_DIRECTORY);

                if (fd < 0)
                        return fd;
                macro_safe_close(cur);
                cur = fd;
                if (fstat(cur, &st) < 0)
                        return -errno;
                if (dev != 0 && st.st_dev != dev)
                        return -EXDEV;
        }
        return cur < 0 ? -EINVAL : TAKE_FD(cur);
}

/* Plan a RECOVER_DELETE step for the marker (dir_fd, name). */
static int recover_scan_marker(Plan *p, size_t t, const RecoverRoots *rt, int dir_fd,
                               const char *name) {
        _cleanup_(recover_marker_done) RecoverMarker m = {};
        _cleanup_free_ char *mpath = NULL;
        PlanStep st = { .kind = PLAN_STEP_RECOVER_DELETE, .tree = t, .in_global = true };
        int r;

        r = recover_read_marker(dir_fd, name, &m, &st.id);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG || r == -E2BIG) {
                /* a user can write there too: over a limit, the file is never acted on */
                log_warning("'%s/%s/%s': pending marker file over the limit (%s %u), ignored",
                            rt->tree->global_dir, RECOVER_PENDING_DIR, name,
                            r == -EFBIG ? "bytes" : "markers",
                            r == -EFBIG ? RECOVER_MARKER_MAX : RECOVER_MARKERS_MAX);
                return 0;
        }
        if (r < 0) {
                log_warning_errno(r, "'%s/%s/%s': not a pending marker of qgc, skipping",
                                  rt->tree->global_dir, RECOVER_PENDING_DIR, name);
                return 0;
        }
        st.session_id = strdup(m.session);
        st.dir = strdup(RECOVER_PENDING_DIR);
        st.name = strdup(name);
        mpath = util_strprintf("%s/%s/%s", rt->tree->global_dir, RECOVER_PENDING_DIR, name);
        if (!st.session_id || !st.dir || !st.name || !mpath) {
                plan_step_done(&st);
                return -ENOMEM;
        }
        for (const RecoverMarker *x = &m; x && r >= 0; x = x->next) {
                r = recover_transcript_exists(rt, x);
                if (r > 0 && !m.next)
                        st.why = strdup("a transcript of the session exists: only the marker goes");
                else if (r == 0)
                        r = recover_apply(rt, x, /* execute= */ false, NULL, NULL, &st);
                if (r > 0)
                        r = 0;
        }
        if (r >= 0)
                r = plan_step_add_path(&st, mpath, NULL);
        if (r < 0 && r != -ENOMEM)
                log_debug("recover: marker '%s': %s", name, log_errno_to_string(-r));
        if (r == -ENOMEM) {
                plan_step_done(&st);
                return r;
        }
        return plan_add_step(p, &st);
}

/* Plan the removal of qgc's temporary file (rel/name, of sb) when the tree's user owns it and it
 * is on dev. 1 planned, 0 not, -ENOMEM. */
static int recover_scan_temp(Plan *p, size_t t, const RecoverRoots *rt, bool in_global,
                             const char *rel, const char *name, const struct stat *sb, dev_t dev) {
        if (sb->st_uid != rt->tree->uid || sb->st_dev != dev)
                return 0;
        PlanStep st = { .kind = PLAN_STEP_RECOVER_TEMP, .tree = t, .in_global = in_global,
                        .dir = strdup(rel), .name = strdup(name) };
        _cleanup_free_ char *abs = util_strprintf(
                "%s/%s/%s", in_global ? rt->tree->global_dir : rt->tree->runtime_dir, rel, name);
        fs_fileid_from_stat(&st.id, sb);
        if (!st.dir || !st.name || !abs || plan_step_add_path(&st, abs, NULL) < 0) {
                plan_step_done(&st);
                return -ENOMEM;
        }
        return plan_add_step(p, &st) < 0 ? -ENOMEM : 1;
}

/* List the directory open at fd (rel below the tree's root; freshly opened, read to its end,
 * the caller's): plan the markers (in the pending dir) and qgc's stale temporary files. */
static int recover_scan_dir_fd(Plan *p, size_t t, const RecoverRoots *rt, bool in_global,
                               const char *rel, int fd) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        dev_t dev;
        int r, n = 0;

        (void)recover_root_fd(rt, in_global, &dev);
        if (!d)
                return -ENOMEM;
        fs_dir_init(d, fd);
        while ((r = fs_dir_next(d, &name, &type)) > 0) {
                struct stat sb;

                if (in_global && streq(rel, RECOVER_PENDING_DIR) && name[0] != '.') {
                        r = recover_scan_marker(p, t, rt, fd, name);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!fs_is_temp_name(name) || (type != DT_REG && type != DT_UNKNOWN))
                        continue;
                if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
                        continue;
                r = recover_scan_temp(p, t, rt, in_global, rel, name, &sb, dev);
                if (r < 0)
                        return r;
                n += r;
        }
        return r < 0 ? r : n;
}

/* recover_scan_dir_fd() of the directory rel below the tree's root (absent: nothing). */
static int recover_scan_dir(Plan *p, size_t t, const RecoverRoots *rt, bool in_global,
                            const char *rel) {
        _cleanup_close_ int fd = -EBADF;
        dev_t dev;
        int root = recover_root_fd(rt, in_global, &dev);

        fd = recover_open_list(root, rel, dev);
        if (fd < 0)
                return fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP || fd == -EXDEV ? 0 : fd;
        return recover_scan_dir_fd(p, t, rt, in_global, rel, fd);
}

/* Every chats/ and chats/archive/ of the tree's projects, and the project directories themselves
 * (session-organization.v1.json, erase.h); with tmp: every tmp/<hash>/ (logs.json). */
static int recover_scan_projects(Plan *p, size_t t, const RecoverRoots *rt, bool tmp) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int fd = -EBADF;
        const char *name;
        unsigned char type;
        int r;

        if (!d)
                return -ENOMEM;
        fd = recover_open_list(rt->runtime_fd, tmp ? "tmp" : "projects", rt->runtime_dev);
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        fs_dir_init(d, fd);
        while ((r = fs_dir_next(d, &name, &type)) > 0) {
                /* each directory opened once, relative to its parent (no path walked again) */
                _cleanup_close_ int d0 = -EBADF, d1 = -EBADF, d2 = -EBADF;
                int *dfd[3] = { &d0, &d1, &d2 };
                static const char *const sub[] = { "", "/chats", "/chats/archive" };
                static const char *const comp[] = { NULL, "chats", "archive" };

                if (type != DT_DIR && type != DT_UNKNOWN)
                        continue;
                /* a stale project entry qgc renamed to remove it (hygiene-reclaim.h) */
                if (!tmp && fs_is_temp_name(name)) {
                        struct stat sb;

                        if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode) &&
                            recover_scan_temp(p, t, rt, false, "projects", name, &sb,
                                              rt->runtime_dev) < 0)
                                return -ENOMEM;
                        continue;
                }
                for (int i = 0; i < (tmp ? 1 : 3); i++) {
                        _cleanup_free_ char *rel =
                                util_strprintf("%s/%s%s", tmp ? "tmp" : "projects", name, sub[i]);
                        int k;

                        if (!rel)
                                return -ENOMEM;
                        *dfd[i] = fs_open_noatime(i == 0 ? fd : *dfd[i - 1],
                                                  i == 0 ? name : comp[i], O_RDONLY | O_DIRECTORY);
                        if (*dfd[i] < 0) {
                                k = *dfd[i];
                                if (k != -ENOENT && k != -ENOTDIR && k != -ELOOP && k != -EXDEV)
                                        log_debug("recover: cannot list '%s': %s", rel,
                                                  log_errno_to_string(-k));
                                break;
                        }
                        k = recover_scan_dir_fd(p, t, rt, false, rel, *dfd[i]);
                        if (k == -ENOMEM)
                                return k;
                        if (k < 0)
                                log_debug("recover: cannot list '%s': %s", rel, log_errno_to_string(-k));
                }
        }
        return r;
}

int recover_scan(Plan *p) {
        const Inventory *inv = p->inv;
        size_t before = p->n_steps;

        for (size_t t = 0; t < inv->n_trees; t++) {
                const Tree *tr = &inv->trees[t];
                _cleanup_close_ int gfd = fs_open_root(tr->global_dir, 0);
                _cleanup_close_ int rfd = fs_open_root(tr->runtime_dir, tr->dev);
                RecoverRoots rt = { .tree = tr, .global_fd = gfd, .runtime_fd = rfd };
                struct stat st;
                int r;

                if (gfd < 0 || rfd < 0 || fstat(gfd, &st) < 0)
                        continue; /* no tree there: nothing was left behind */
                rt.global_dev = st.st_dev;
                if (fstat(rfd, &st) < 0)
                        continue;
                rt.runtime_dev = st.st_dev;
                r = recover_scan_dir(p, t, &rt, true, RECOVER_PENDING_DIR);
                if (r == -ENOMEM)
                        return r;
                r = recover_scan_projects(p, t, &rt, /* tmp= */ false);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0)
                        r = recover_scan_projects(p, t, &rt, /* tmp= */ true);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_debug("recover: cannot list the projects of '%s': %s",
                                  tr->runtime_dir, log_errno_to_string(-r));
        }
        /* a restore whose start is recorded and whose end is not (session-times.h), with the
         * session still archived or compressed: finished by the step `qgc restore` makes */
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                int r;

                if (!s->restore_pending || s->state != SESSION_ARCHIVED ||
                    (s->restore_to_archive && !s->cold && !s->cold_copy))
                        continue; /* not begun, or (--to-archive) complete but for its record */
                r = restore_add_id(p, inv, s->tree, s->id, s->restore_to_archive);
                if (r == -ENOMEM)
                        return r;
        }
        return (int)(p->n_steps - before);
}
