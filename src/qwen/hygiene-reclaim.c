/* hygiene-reclaim.c: the executor's side of tree hygiene: a hygiene item reclaimed
 * (hygiene_reclaim_orphan()) and a stale project entry's marker written or removed and the entry removed
 * (hygiene_reclaim_stale()), each after re-checking afresh what the scan found, the identity the scan
 * saw included; every open through the safe-filesystem layer (fs.h). */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "erase.h"
#include "fs.h"
#include "rm-rf.h"
#include "hygiene.h"
#include "hygiene-reclaim.h"
#include "json.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "record.h"
#include "util.h"

int hygiene_reclaim_orphan(const Orphan *o, int root_fd, dev_t dev, const int *runtime_fds,
                    size_t n_runtime, OrphansStepFn step, void *userdata, const char **ret_why) {
        _cleanup_close_ int dfd = -EBADF;
        int r;

        *ret_why = "changed since scan";
        if (!inventory_hygiene_kind(o->kind) || !o->project_dir || !o->name)
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
                r = rm_rf_at(dfd, o->name, dev, NULL);
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

/* Write the marker in projects/<name>/ (efd): written whole and fsynced under a temporary name,
 * then given its name (never replacing one) and made durable; what fails before leaves nothing
 * (a partial marker would be taken for the mark, its cwds cut). It holds the recorded cwds, one
 * a line, so that a later run still knows them when the entry's transcripts are gone (a run
 * stopped between its sessions' deletes and its removal). */
static int hygiene_stale_mark_write(int efd, const char *cwds, OrphansStepFn step,
                                    void *userdata) {
        return fs_write_durable(efd, HYGIENE_STALE_MARKER, cwds ?: "", strlen(cwds ?: ""), 0600,
                                FS_DURABLE_NOREPLACE, step, userdata);
}

/* Remove every entry of projects/<name>/ (efd) but the marker. */
static int hygiene_reclaim_stale_content(int efd, dev_t dev, OrphansStepFn step, void *userdata) {
        _cleanup_close_ int fd = fs_open_dir(efd, "."); /* listed afresh from its start */
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        if (fd < 0)
                return fd;
        fs_dir_init(&d, fd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                if (streq(name, HYGIENE_STALE_MARKER))
                        continue;
                r = type == DT_DIR ? -EISDIR : fs_unlink(fd, name, 0);
                if (r == -EISDIR || r == -EPERM) /* EPERM: a directory, on some filesystems */
                        r = rm_rf_at(fd, name, dev, NULL);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (step)
                        step(userdata, name);
        }
        return k;
}

int hygiene_reclaim_stale(const Inventory *inv, const Orphan *o, int mark, bool remove, int root_fd,
                      dev_t dev, OrphansStepFn step, void *userdata, const char **ret_why) {
        _cleanup_(hygiene_stale_done) HygieneStale h = { .inv = inv, .tree = o->tree, .dev = dev,
                                                          .dir = o->name, .skip_org = true };
        _cleanup_close_ int pfd = -EBADF, efd = -EBADF;
        _cleanup_free_ char *tmp = NULL;
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
        for (h.first = 0; h.first < inv->n_sessions && !inventory_stale_member(o, &inv->sessions[h.first]);)
                h.first++;
        for (h.end = h.first; h.end < inv->n_sessions && inventory_stale_member(o, &inv->sessions[h.end]);)
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
        /* the marker goes last: a kill before leaves it, and the entry is removed by the next
         * run as stale; after the rename, the recovery pass removes what is left
         * (hygiene_reclaim_stale_rest()) */
        r = hygiene_reclaim_stale_content(efd, dev, step, userdata);
        efd = macro_safe_close(efd);
        tmp = r >= 0 ? fs_temp_name(o->name, false) : NULL;
        if (r >= 0 && !tmp)
                r = -ENOMEM;
        if (r >= 0)
                r = fs_rename_noreplace(pfd, o->name, pfd, tmp);
        if (r >= 0) {
                if (step)
                        step(userdata, o->name);
                r = fs_fsync(pfd); /* the new name is durable before the marker goes */
        }
        if (r >= 0)
                r = hygiene_reclaim_stale_rest(pfd, tmp, dev, step, userdata);
        if (r < 0) {
                *ret_why = r == -EBUSY ? "kept: a mount point inside" : "cannot remove";
                return r;
        }
        *ret_why = NULL;
        return 1;
}

int hygiene_reclaim_stale_rest(int pfd, const char *name, dev_t dev, OrphansStepFn step,
                               void *userdata) {
        _cleanup_close_ int efd = hygiene_open_dir(pfd, name, dev, NULL);
        FsDir d;
        const char *n;
        unsigned char type;
        int r;

        if (efd < 0)
                return efd == -ENOENT ? 0 : efd;
        fs_dir_init(&d, efd);
        while ((r = fs_dir_next(&d, &n, &type)) > 0)
                if (!streq(n, HYGIENE_STALE_MARKER))
                        return -ENOTEMPTY;
        if (r < 0)
                return r;
        r = fs_unlink(efd, HYGIENE_STALE_MARKER, 0);
        if (r < 0 && r != -ENOENT)
                return r;
        if (r == 0 && step)
                step(userdata, HYGIENE_STALE_MARKER);
        r = fs_unlink(pfd, name, AT_REMOVEDIR);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (step)
                step(userdata, name);
        return 1;
}
