/* rm-rf.c: rm_rf_at(), the safe-filesystem layer's removal of a directory and
 * everything below it: iterative (a stack of open directories, no recursion), never following a
 * symlink, and keeping every mount point (with the directories above it) instead of entering
 * it. Every open and stat goes through fs.c's fs_open_dir() and fs_statat(). */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "macro.h"
#include "rm-rf.h"
#include "util.h"

/* Deepest directory nesting rm_rf_at() descends into. */
#define FS_RM_RF_MAX_DEPTH 128

/* One directory of rm_rf_at()'s walk: its listing, its name in the parent (NULL for the
 * top), and what kept it from being removed. */
typedef struct FsRmFrame {
        FsDir *dir; /* owns dir->fd */
        char *name;
        uint64_t alloc; /* its own blocks (st_blocks * 512), freed when it goes */
        bool kept;   /* a mount point inside stays, so this directory stays too */
        bool failed; /* something inside could not be removed */
} FsRmFrame;

static void fs_rm_frame_done(FsRmFrame *f) {
        if (f->dir)
                macro_safe_close(f->dir->fd);
        free(f->dir);
        free(f->name);
        *f = (FsRmFrame){};
}

/* Push directory fd (consumed), named name in the frame below, of st_blocks blocks, on the
 * stack. */
static int fs_rm_push(FsRmFrame **stack, size_t *n, size_t *alloc, int fd, const char *name,
                      blkcnt_t blocks) {
        FsRmFrame f = { .alloc = (uint64_t)blocks * 512 };

        f.dir = malloc(sizeof(FsDir));
        f.name = name ? strdup(name) : NULL;
        if (!f.dir || (name && !f.name) ||
            util_greedy_realloc((void **)stack, alloc, *n + 1, sizeof(FsRmFrame)) < 0) {
                free(f.dir);
                free(f.name);
                macro_safe_close(fd);
                return -ENOMEM;
        }
        fs_dir_init(f.dir, fd);
        (*stack)[(*n)++] = f;
        return 0;
}

/* Handle one entry of directory top: unlink a file (its blocks added to *bytes when that was
 * its last link), or open a directory to push (*ret_sub, of *ret_blocks). A mount point (a bind
 * mount of the same filesystem too) or another filesystem marks top kept and is never entered.
 * 0 or -errno (top->failed is set by the caller). */
static int fs_rm_entry(FsRmFrame *top, const char *name, dev_t dev, size_t depth,
                       uint64_t *bytes, int *ret_sub, blkcnt_t *ret_blocks) {
        int fd = top->dir->fd, sub;
        struct stat st, sst;
        bool mount = false;
        int r;

        *ret_sub = -EBADF;
        r = fs_statat(fd, name, &st, &mount);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (mount || st.st_dev != dev) {
                top->kept = true; /* never descend, never unlink a mount point */
                return 0;
        }
        if (!S_ISDIR(st.st_mode)) {
                if (unlinkat(fd, name, 0) < 0) {
                        if (errno == ENOENT)
                                return 0;
                        if (errno == EBUSY) { /* mounted on since the statx */
                                top->kept = true;
                                return 0;
                        }
                        return -errno;
                }
                if (st.st_nlink == 1)
                        *bytes += (uint64_t)st.st_blocks * 512;
                return 0;
        }
        if (depth >= FS_RM_RF_MAX_DEPTH)
                return -ELOOP;
        sub = fs_open_dir(fd, name);
        if (sub == -ENOENT)
                return 0;
        if (sub == -EXDEV) { /* a mount appeared since the statx */
                top->kept = true;
                return 0;
        }
        if (sub < 0)
                return sub;
        if (fstat(sub, &sst) < 0 || sst.st_dev != dev || sst.st_ino != st.st_ino) {
                /* not the directory checked: a mount appeared there */
                macro_safe_close(sub);
                top->kept = true;
                return 0;
        }
        *ret_sub = sub;
        *ret_blocks = sst.st_blocks;
        return 0;
}

/* Remove the directory fd (consumed; named name in dfd) and everything below it, iteratively:
 * an explicit stack of open directories, no recursion. Returns 0, -EBUSY when a mount point was
 * kept (with every directory above it), or the first other -errno. */
static int fs_rm_rf_fd(int dfd, const char *name, int fd, const struct stat *st,
                       uint64_t *bytes) {
        _cleanup_free_ FsRmFrame *stack = NULL;
        size_t n = 0, alloc = 0;
        bool kept = false;
        int r = 0, k;

        k = fs_rm_push(&stack, &n, &alloc, fd, NULL, st->st_blocks);
        if (k < 0)
                return k;
        while (n > 0) {
                FsRmFrame *top = &stack[n - 1];
                const char *ename;
                unsigned char type;
                int sub = -EBADF;
                blkcnt_t blocks = 0;

                k = fs_dir_next(top->dir, &ename, &type);
                if (k > 0) {
                        k = fs_rm_entry(top, ename, st->st_dev, n, bytes, &sub, &blocks);
                        if (k >= 0 && sub >= 0)
                                k = fs_rm_push(&stack, &n, &alloc, sub, ename, blocks);
                        if (k < 0) {
                                top = &stack[n - 1];
                                top->failed = true;
                                if (r == 0)
                                        r = k;
                                if (k == -ENOMEM)
                                        break;
                        }
                        continue;
                }
                if (k < 0) {
                        top->failed = true;
                        if (r == 0)
                                r = k;
                }
                /* listed to its end: remove it unless something stays inside */
                int parent = n >= 2 ? stack[n - 2].dir->fd : dfd;
                const char *pname = n >= 2 ? top->name : name;
                if (!top->kept && !top->failed) {
                        if (unlinkat(parent, pname, AT_REMOVEDIR) >= 0)
                                *bytes += top->alloc;
                        else if (errno != ENOENT) {
                                if (errno == EBUSY)
                                        top->kept = true;
                                else {
                                        top->failed = true;
                                        if (r == 0)
                                                r = -errno;
                                }
                        }
                }
                if (n >= 2) {
                        stack[n - 2].kept |= top->kept;
                        stack[n - 2].failed |= top->failed;
                } else
                        kept = top->kept;
                fs_rm_frame_done(top);
                n--;
        }
        while (n > 0)
                fs_rm_frame_done(&stack[--n]);
        return r < 0 ? r : kept ? -EBUSY : 0;
}

int rm_rf_at(int dfd, const char *name, dev_t dev, uint64_t *ret_bytes) {
        uint64_t bytes = 0;
        struct stat st;
        int fd, r;

        if (ret_bytes)
                *ret_bytes = 0;
        fd = fs_open_dir(dfd, name);
        if (fd == -ENOENT)
                return 0;
        if (fd == -EXDEV)
                return -EBUSY; /* the directory itself is a mount point: kept */
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                macro_safe_close(fd);
                return r;
        }
        if (dev != 0 && st.st_dev != dev) {
                macro_safe_close(fd);
                return -EBUSY;
        }
        r = fs_rm_rf_fd(dfd, name, fd, &st, &bytes);
        if (ret_bytes)
                *ret_bytes = bytes;
        return r;
}
