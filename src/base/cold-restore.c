/* cold-restore.c: restoring from the cold tier (cold.h): cold_restore_files() of a batch of
 * files (one or more), which makes the whole batch durable with one group of
 * fsyncs of the new files, one fsync of the target directory and one of the cold directory,
 * instead of three fsyncs per file. The files come back byte for byte, with their mtimes. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cold.h"
#include "cold-restore.h"
#include "fs.h"
#include "macro.h"
#include "util.h"

typedef struct ColdRestoreOne {
        char *z, *tmp;
        int out;        /* the temporary file, open until the fsync group */
        bool skipped;   /* no .zst (skip_missing) */
        bool exists;    /* the target has exactly the recorded content already */
        bool committed; /* renamed into place */
} ColdRestoreOne;

/* Step 1 for one file: (cold_fd, z) decompressed into (dst_fd, tmp), checked, its mtime set; or
 * the target in place already. */
static int cold_restore_prepare(ColdCtx *c, int cold_fd, const char *name, int dst_fd,
                                bool skip_missing, ColdRestoreOne *f, ColdResult *res) {
        _cleanup_close_ int fd = -EBADF;
        char want[65], got[65];
        uint64_t want_size = 0, size = 0;
        struct stat st;
        int r;

        fd = fs_openat(cold_fd, f->z, O_RDONLY | O_NONBLOCK, 0);
        if (fd == -ENOENT && skip_missing) {
                f->skipped = true;
                return 0;
        }
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        r = cold_read_trailer(fd, &want_size, want);
        if (r < 0)
                return r;
        r = fs_exists(dst_fd, name);
        if (r < 0)
                return r;
        if (r > 0) {
                /* a restore interrupted after the rename: the target is exactly the original */
                _cleanup_close_ int tfd = fs_openat(dst_fd, name, O_RDONLY | O_NONBLOCK, 0);

                r = tfd < 0 ? tfd : cold_hash_fd(tfd, got, &size);
                if (r < 0 || size != want_size || !streq(got, want))
                        return -EEXIST;
                f->exists = true;
                *res = (ColdResult){ .bytes_in = size, .bytes_out = (uint64_t)st.st_size };
                return 0;
        }
        f->out = fs_openat(dst_fd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (f->out < 0)
                return f->out;
        /* never more than the trailer records (a bomb stops there, its .zst kept) */
        r = cold_decompress_fd(c, fd, UINT64_MAX, want_size, f->out, NULL, 0, got, &size);
        if (r >= 0 && (size != want_size || !streq(got, want)))
                r = -EBADMSG;
        if (r >= 0) {
                /* before the fsync, so that the mtime is as durable as the bytes */
                struct timespec ts[2] = { st.st_atim, st.st_mtim };
                if (futimens(f->out, ts) < 0)
                        r = -errno;
        }
        if (r < 0)
                return r;
        *res = (ColdResult){ .bytes_in = size, .bytes_out = (uint64_t)st.st_size };
        return 0;
}

int cold_restore_files(int cold_fd, const char *const *names, size_t n, bool skip_missing,
                         int dst_fd, ColdStepFn step, void *userdata, ColdResult *res) {
        _cleanup_free_ ColdRestoreOne *f = calloc(n ? n : 1, sizeof(ColdRestoreOne));
        _cleanup_free_ int *fds = calloc(n ? n : 1, sizeof(int));
        _cleanup_free_ int *errs = calloc(n ? n : 1, sizeof(int));
        ColdCtx *c = NULL;
        bool renamed = false, removed = false;
        int r = 0, k;

        if (!f || !fds || !errs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                f[i].out = -EBADF;
                res[i] = (ColdResult){};
                f[i].z = util_strprintf("%s%s", names[i], COLD_SUFFIX);
                f[i].tmp = fs_temp_name(names[i], false);
                if (!f[i].z || !f[i].tmp)
                        r = -ENOMEM;
        }
        /* 0. what an interrupted restore left, before this one adds any name */
        for (size_t i = 0; r >= 0 && i < n; i++)
                (void)fs_unlink(dst_fd, f[i].tmp, 0);
        /* 1. every file decompressed under its temporary name and checked */
        if (r >= 0)
                r = cold_default(0, &c);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = cold_restore_prepare(c, cold_fd, names[i], dst_fd, skip_missing, &f[i],
                                         &res[i]);
        /* 2. their bytes and mtimes durable: one group of fsyncs, issued together */
        size_t m = 0;
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (f[i].out >= 0)
                        fds[m++] = f[i].out;
        if (r >= 0 && m > 0) {
                fs_fsync_many(fds, m, errs);
                for (size_t i = 0; r >= 0 && i < m; i++)
                        r = errs[i];
        }
        /* 3. each renamed into place, in order, never replacing */
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (f[i].out < 0)
                        continue;
                r = fs_rename_noreplace(dst_fd, f[i].tmp, dst_fd, names[i]);
                if (r < 0)
                        break;
                f[i].committed = renamed = true;
                cold_step(step, userdata, names[i]);
        }
        /* what was not renamed stays compressed; its temporary file goes */
        for (size_t i = 0; i < n; i++) {
                if (f[i].out >= 0 && !f[i].committed)
                        (void)fs_unlink(dst_fd, f[i].tmp, 0);
                f[i].out = macro_safe_close(f[i].out);
        }
        /* 4. the new names durable, then 5. the .zst files of what is in place go, and 6. */
        k = renamed ? fs_fsync(dst_fd) : 0;
        for (size_t i = 0; k >= 0 && i < n; i++) {
                int q;

                if (!f[i].committed && !f[i].exists)
                        continue;
                q = fs_unlink(cold_fd, f[i].z, 0);
                if (q < 0 && q != -ENOENT) {
                        k = q;
                        break;
                }
                removed = true;
                cold_step(step, userdata, f[i].z);
        }
        if (k >= 0 && removed)
                k = fs_fsync(cold_fd);
        for (size_t i = 0; i < n; i++) {
                free(f[i].z);
                free(f[i].tmp);
        }
        return r < 0 ? r : k;
}
