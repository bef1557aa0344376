/* dc-reclaim.c: the reclaim of a Deep Code store's orphans (see dc-reclaim.h). The order of the
 * removals makes a kill at any point harmless: a transcript's images go before the transcript
 * (the identity a rerun checks), a stale project is renamed away whole before it is removed,
 * and the checkpoint repository is compacted by git's own crash-safe steps (a ref transaction,
 * prune, repack) after the one hook. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dc-git.h"
#include "dc-index.h"
#include "dc-messages.h"
#include "dc-proc.h"
#include "dc-project.h"
#include "dc-reclaim.h"
#include "dc-run.h"
#include "dc-store.h"
#include "fs.h"
#include "macro.h"
#include "rm-rf.h"
#include "util.h"

static void dc_reclaim_hook(StoreStep *step, const char *what) {
        if (step->hook)
                step->hook(step->userdata, what);
}

static int dc_reclaim_why(StoreStep *step, int r, const char *why) {
        free(step->why);
        step->why = strdup(why);
        return r;
}

/* Is the directory or file (dfd, name) still the one the scan saw? Directories by dev and inode
 * (their size and times change as they are emptied), files by their whole identity. 1, 0 gone
 * or another, or -errno. */
static int dc_reclaim_same(int dfd, const char *name, const FileId *id, bool dir) {
        struct stat st;
        int r = fs_statat(dfd, name, &st, NULL);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (dir)
                return S_ISDIR(st.st_mode) && st.st_dev == id->dev && st.st_ino == id->ino;
        return fs_check_identity(dfd, name, id);
}

/* The project's re-checks: its index parses and names none of ids (NULL: not asked), nothing of
 * it is in use. 0, -ESTALE, -EBUSY or -errno, with step->why. */
static int dc_reclaim_project(int store_fd, int pfd, const char *code, const char *id,
                              msec_t now, DcIndex *ret_idx, StoreStep *step) {
        _cleanup_free_ char *why = NULL;
        DcProcs procs = {};
        struct stat st;
        pid_t pid = 0;
        int r;

        r = dc_index_read(pfd, ret_idx);
        if (r < 0)
                return r;
        if (ret_idx->state != DC_INDEX_OK)
                return dc_reclaim_why(step, -ESTALE, "the project's index no longer parses");
        r = dc_project_code(ret_idx->original_path, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !streq(why, code))
                return dc_reclaim_why(step, -ESTALE, "the index no longer proves the project");
        free(why);
        why = NULL;
        for (size_t i = 0; i < ret_idx->n_entries; i++) {
                const DcEntry *e = &ret_idx->entries[i];
                bool busy = e->status == DC_STATUS_PROCESSING ||
                            e->status == DC_STATUS_ASK_PERMISSION ||
                            e->status == DC_STATUS_WAITING_FOR_USER;

                if (id && e->id && streq(e->id, id))
                        return dc_reclaim_why(step, -ESTALE, "the index names it now");
                if (busy && (e->update_time == 0 || now - e->update_time < DC_STATUS_WINDOW))
                        return dc_reclaim_why(step, -EBUSY, "a session of the project is in a prompt");
        }
        if (fstat(store_fd, &st) < 0)
                return -errno;
        r = dc_proc_scan(&procs);
        if (r >= 0)
                r = dc_proc_find(&procs, code, st.st_uid, &pid);
        dc_proc_done(&procs);
        if (r == -ENOMEM)
                return r;
        if (r != 0) {
                why = r > 0 ? util_strprintf("Deep Code pid %d works in the project", (int)pid)
                            : strdup("a Deep Code process whose working directory cannot be read");
                return dc_reclaim_why(step, -EBUSY, why ?: "in use");
        }
        return 0;
}

/* images/<id>/ (under the project open at pfd), when there is one. */
static int dc_reclaim_images(int pfd, const char *id, dev_t dev, StoreStep *step) {
        _cleanup_close_ int ifd = fs_open_noatime(pfd, "images", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        uint64_t bytes = 0;
        int r;

        if (ifd == -ENOENT)
                return 0;
        if (ifd < 0)
                return ifd;
        r = fs_exists(ifd, id);
        if (r <= 0)
                return r;
        dc_reclaim_hook(step, "remove images/<id>/");
        r = dc_run_rm_images(ifd, id, dev, &bytes);
        step->bytes += bytes;
        return r;
}

/* <id>.jsonl the index does not name, with its images/<id>/. */
static int dc_reclaim_unindexed(int pfd, const Orphan *o, dev_t dev, StoreStep *step) {
        _cleanup_free_ char *file = util_strjoin(o->name, ".jsonl", NULL);
        DcMessages m = {};
        bool proven;
        int r;

        if (!file)
                return -ENOMEM;
        r = dc_reclaim_same(pfd, file, &o->dir, false);
        if (r <= 0)
                return r ?: dc_reclaim_why(step, -ESTALE, "the transcript changed since the scan");
        /* the scan's proof, again: every message is this session's */
        r = dc_messages_read(pfd, o->name, &m);
        proven = r >= 0 && m.proven;
        dc_messages_done(&m);
        if (r == -ENOMEM)
                return r;
        if (!proven)
                return dc_reclaim_why(step, -ESTALE, "the transcript is not proven the session's");
        r = dc_reclaim_images(pfd, o->name, dev, step);
        if (r < 0)
                return r;
        dc_reclaim_hook(step, "unlink <id>.jsonl");
        r = fs_unlink(pfd, file, 0);
        if (r < 0)
                return r;
        step->bytes += o->dir.blocks;
        return fs_fsync(pfd);
}

/* images/<id>/ of no session, or images/ when empty. */
static int dc_reclaim_orphan_images(int pfd, const Orphan *o, dev_t dev, StoreStep *step) {
        _cleanup_close_ int ifd = -EBADF;
        _cleanup_free_ char *file = NULL;
        const char *id;
        int r;

        if (streq(o->name, "images")) {
                r = dc_reclaim_same(pfd, "images", &o->dir, true);
                if (r <= 0)
                        return r ?: dc_reclaim_why(step, -ESTALE, "images/ changed since the scan");
                dc_reclaim_hook(step, "rmdir images/");
                r = fs_unlink(pfd, "images", AT_REMOVEDIR);
                if (r == -ENOTEMPTY || r == -EEXIST)
                        return dc_reclaim_why(step, -ESTALE, "images/ is no longer empty");
                return r < 0 ? r : fs_fsync(pfd);
        }
        if (!strneq(o->name, "images/", 7) || strchr(o->name + 7, '/'))
                return -EINVAL;
        id = o->name + 7;
        file = util_strjoin(id, ".jsonl", NULL);
        if (!file)
                return -ENOMEM;
        r = fs_exists(pfd, file);
        if (r != 0)
                return r < 0 ? r : dc_reclaim_why(step, -ESTALE, "its session has a transcript now");
        ifd = fs_open_noatime(pfd, "images", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (ifd < 0)
                return ifd == -ENOENT ? dc_reclaim_why(step, -ESTALE, "images/ is gone") : ifd;
        r = dc_reclaim_same(ifd, id, &o->dir, true);
        if (r <= 0)
                return r ?: dc_reclaim_why(step, -ESTALE, "images/<id>/ changed since the scan");
        return dc_reclaim_images(pfd, id, dev, step);
}

/* The checkpoints every transcript of the project names (read to its end) and every archived
 * session's (qgc's archive, store_fd's), every session of the index, with a transcript or
 * archived kept; then the compaction. */
static int dc_reclaim_checkpoints(int store_fd, int pfd, const Orphan *o, const DcIndex *idx,
                                  StoreStep *step) {
        _cleanup_close_ int gfd = -EBADF, afd = fs_open_dir(store_fd, DC_ARCHIVE_DIR);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        DcProject p = { .code = o->project_dir, .index_state = DC_INDEX_OK, .code_proven = true };
        _cleanup_free_ const char **kept = NULL, **named = NULL;
        size_t n_kept = 0, n_named = 0;
        DcGitReport rep = {};
        DcGitInput in;
        struct stat st;
        const char *name;
        unsigned char type;
        int k = 0, r = 0;

        if (!d)
                return -ENOMEM;
        gfd = fs_openat(pfd, "file-history/.git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
        if (gfd < 0)
                return gfd == -ENOENT ? dc_reclaim_why(step, -ESTALE, "file-history/.git is gone")
                                      : gfd;
        if (fstat(gfd, &st) < 0)
                return -errno;
        if (st.st_dev != o->dir.dev || st.st_ino != o->dir.ino)
                return dc_reclaim_why(step, -ESTALE, "file-history/.git changed since the scan");
        p.sessions = calloc(idx->n_entries + 1, sizeof(DcSession));
        p.alloc_sessions = idx->n_entries + 1;
        if (!p.sessions)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < idx->n_entries; i++)
                if (idx->entries[i].id) {
                        p.sessions[p.n_sessions] = (DcSession){ .id = strdup(idx->entries[i].id),
                                                                .indexed = true };
                        r = p.sessions[p.n_sessions++].id ? 0 : -ENOMEM;
                }
        fs_dir_init(d, pfd);
        while (r >= 0 && (k = fs_dir_next(d, &name, &type)) > 0) {
                size_t n = strlen(name);
                DcSession *s = NULL;

                if (n <= 6 || !streq(name + n - 6, ".jsonl"))
                        continue;
                for (size_t i = 0; i < p.n_sessions && !s; i++)
                        if (strlen(p.sessions[i].id) == n - 6 &&
                            strneq(p.sessions[i].id, name, n - 6))
                                s = &p.sessions[i];
                if (!s) {
                        if (util_greedy_realloc((void **)&p.sessions, &p.alloc_sessions,
                                                p.n_sessions + 1, sizeof(DcSession)) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        s = &p.sessions[p.n_sessions++];
                        *s = (DcSession){ .id = strndup(name, n - 6) };
                        if (!s->id) {
                                r = -ENOMEM;
                                break;
                        }
                }
                r = dc_messages_read(pfd, s->id, &s->messages);
                s->jsonl = s->messages.file;
                if (r >= 0 && !s->messages.complete)
                        r = dc_reclaim_why(step, -ESTALE, "a transcript cannot be read to its end");
        }
        if (r >= 0 && k < 0)
                r = k;
        if (r >= 0 && afd < 0 && afd != -ENOENT) /* what it keeps unknown */
                r = dc_reclaim_why(step, -ESTALE, "qgc's archive cannot be opened");
        if (r >= 0 && afd >= 0)
                r = dc_store_archived(&p, afd, st.st_dev, NULL);
        for (size_t i = 0; r >= 0 && i < p.n_sessions; i++)
                if (p.incomplete || (p.sessions[i].archived && !p.sessions[i].arc_hashes))
                        r = dc_reclaim_why(step, -ESTALE, "an archived session's checkpoints are "
                                           "unknown");
        if (r >= 0)
                r = dc_store_git_input(&p, &kept, &n_kept, &named, &n_named);
        in = (DcGitInput){ .kept_ids = kept, .n_kept = n_kept, .named = named, .n_named = n_named };
        if (r >= 0) {
                r = dc_git_plan(gfd, &in, &rep);
                if (r == 0)
                        dc_reclaim_why(step, 0, rep.why ?: "nothing to compact");
                dc_git_report_done(&rep);
        }
        if (r > 0) {
                dc_reclaim_hook(step, "compact file-history/.git");
                r = dc_git_compact(gfd, &in, &rep);
                if (r >= 0) {
                        step->bytes = rep.bytes_before > rep.bytes_after ?
                                      rep.bytes_before - rep.bytes_after : 0;
                        if (rep.why)
                                dc_reclaim_why(step, 0, rep.why);
                        r = 0;
                } else
                        dc_reclaim_why(step, r, rep.why ?: "git failed");
        }
        dc_git_report_done(&rep);
        for (size_t i = 0; i < p.n_sessions; i++)
                dc_store_session_done(&p.sessions[i]);
        free(p.sessions);
        return r;
}

/* Remove projects/<tmp> (qfd), step->bytes what that freed (rm_rf_at()). */
static int dc_reclaim_rm_project(int qfd, const char *tmp, dev_t dev, StoreStep *step) {
        dc_reclaim_hook(step, "remove the renamed project");
        return rm_rf_at(qfd, tmp, dev, &step->bytes);
}

/* Stale project entry o (its sessions deleted before, as Qwen's): the marker written (first
 * seen), removed (its originalPath is back), or the project removed once marked long enough.
 * The removal renames projects/<code>/ to a temporary name first, so that Deep Code never sees
 * half a project; a rerun finishes the temporary one. */
static int dc_reclaim_stale(int store_fd, const Orphan *o, dev_t dev, StoreStep *step) {
        _cleanup_close_ int qfd = fs_open_path(store_fd, "projects", dev), pfd = -EBADF;
        _cleanup_free_ char *tmp = fs_temp_name(o->name, false), *line = NULL;
        DcIndex idx = {};
        struct stat st;
        int r;

        if (!tmp)
                return -ENOMEM;
        if (qfd < 0)
                return qfd;
        if (fs_statat(qfd, o->name, NULL, NULL) == -ENOENT &&
            dc_reclaim_same(qfd, tmp, &o->dir, true) > 0)
                return dc_reclaim_rm_project(qfd, tmp, dev, step);
        r = dc_reclaim_same(qfd, o->name, &o->dir, true);
        if (r <= 0)
                return r ?: dc_reclaim_why(step, -ESTALE, "the project changed since the scan");
        pfd = fs_open_path(qfd, o->name, dev);
        if (pfd < 0)
                return pfd;
        r = dc_reclaim_project(store_fd, pfd, o->name, NULL, util_now_msec(), &idx, step);
        if (r >= 0 && (!idx.original_path || !o->cwds ||
                       strlen(o->cwds) != strlen(idx.original_path) + 1 ||
                       !strneq(o->cwds, idx.original_path, strlen(idx.original_path))))
                r = dc_reclaim_why(step, -ESTALE, "the index names another originalPath now");
        if (r >= 0) {
                bool gone = stat(idx.original_path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);

                if (o->cwd_back == gone)
                        r = dc_reclaim_why(step, -ESTALE, gone ? "its originalPath is gone again"
                                                               : "its originalPath exists again");
        }
        if (r >= 0 && o->cwd_back) {
                dc_reclaim_hook(step, "remove the stale marker");
                r = fs_unlink(pfd, DC_STALE_MARKER, 0);
                r = r == -ENOENT ? 0 : r;
        } else if (r >= 0 && !o->marker.present) {
                line = util_strjoin(idx.original_path, "\n", NULL);
                dc_reclaim_hook(step, "write the stale marker");
                r = line ? fs_write_atomic(pfd, DC_STALE_MARKER, line, strlen(line), 0600) : -ENOMEM;
        } else if (r >= 0) {
                r = fs_check_identity(pfd, DC_STALE_MARKER, &o->marker);
                if (r == 0)
                        r = dc_reclaim_why(step, -ESTALE, "the stale marker changed since the scan");
                for (size_t i = 0; r > 0 && i < idx.n_entries; i++) {
                        _cleanup_free_ char *f =
                                idx.entries[i].id ? util_strjoin(idx.entries[i].id, ".jsonl", NULL)
                                                  : NULL;

                        if (f && fs_exists(pfd, f) > 0)
                                r = dc_reclaim_why(step, -EAGAIN, "a session of it is not deleted");
                }
                if (r > 0) {
                        dc_reclaim_hook(step, "rename the project away");
                        r = renameat(qfd, o->name, qfd, tmp) < 0 ? -errno : 0;
                }
                if (r >= 0)
                        r = dc_reclaim_rm_project(qfd, tmp, dev, step);
        }
        dc_index_done(&idx);
        return r;
}

int dc_reclaim_orphan(int store_fd, const Inventory *inv, const Orphan *o, StoreStep *step) {
        _cleanup_close_ int pfd = -EBADF;
        _cleanup_free_ char *rel = NULL;
        dev_t dev = inv->trees[o->tree].dev;
        DcIndex idx = {};
        int r;

        step->bytes = 0;
        if (o->kind == ORPHAN_DC_ERROR_LOG)
                return dc_reclaim_why(step, -EOPNOTSUPP,
                                      "logs/error.log is reported only: Deep Code appends to it");
        if (o->kind == ORPHAN_STALE_PROJECT)
                return o->name && !strchr(o->name, '/') && o->name[0] != '.' ?
                       dc_reclaim_stale(store_fd, o, dev, step) : -EINVAL;
        if (o->kind != ORPHAN_DC_UNINDEXED && o->kind != ORPHAN_DC_IMAGES &&
            o->kind != ORPHAN_DC_CHECKPOINTS)
                return -EOPNOTSUPP;
        if (!o->project_dir || !o->name || strchr(o->project_dir, '/') ||
            o->project_dir[0] == '.')
                return -EINVAL;
        rel = util_path_join("projects", o->project_dir);
        if (!rel)
                return -ENOMEM;
        pfd = fs_open_path(store_fd, rel, dev);
        if (pfd < 0)
                return pfd == -ENOENT ? dc_reclaim_why(step, -ESTALE, "the project is gone") : pfd;
        r = dc_reclaim_project(store_fd, pfd, o->project_dir,
                               o->kind == ORPHAN_DC_UNINDEXED ? o->name
                               : o->kind == ORPHAN_DC_IMAGES && strneq(o->name, "images/", 7)
                                       ? o->name + 7
                                       : NULL,
                               util_now_msec(), &idx, step);
        if (r >= 0) {
                if (o->kind == ORPHAN_DC_UNINDEXED)
                        r = dc_reclaim_unindexed(pfd, o, dev, step);
                else if (o->kind == ORPHAN_DC_IMAGES)
                        r = dc_reclaim_orphan_images(pfd, o, dev, step);
                else
                        r = dc_reclaim_checkpoints(store_fd, pfd, o, &idx, step);
        }
        dc_index_done(&idx);
        return r;
}
