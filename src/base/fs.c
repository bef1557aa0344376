/* fs.c: the safe-filesystem layer: every open, listing, removal and rename of a path inside
 * a managed tree goes through here. Nothing here follows a symlink in the tree or crosses a
 * mount point: not another filesystem (st_dev) and not a bind mount of the same filesystem,
 * whose st_dev is the tree's own. Opens use openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_XDEV); where openat2 is missing (ENOSYS, or EPERM under a seccomp filter) a walk
 * component by component with O_NOFOLLOW and a mount-point test of each directory
 * (STATX_ATTR_MOUNT_ROOT, else the mount id) does the same. Invariant: a directory fd obtained
 * here is on the mount of the fd it was opened from, so every fd below a FsRoot is on the root's
 * mount, and "a different mount than the parent" is "a different mount than the root".
 * The removal of a directory tree (rm_rf_at()) is rm-rf.c's. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#ifdef HAVE_LINUX_OPENAT2_H
#include <linux/openat2.h>
#endif

#include "fs.h"
#include "macro.h"
#include "syncq.h"
#include "util.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#ifndef HAVE_LINUX_OPENAT2_H
struct open_how {
        uint64_t flags;
        uint64_t mode;
        uint64_t resolve;
};
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

int fs_dir_next(FsDir *d, const char **ret_name, unsigned char *ret_type) {
        for (;;) {
                const struct dirent64 *de;

                if (d->pos >= d->len) {
                        ssize_t k = getdents64(d->fd, d->buf, sizeof(d->buf));
                        if (k < 0)
                                return -errno;
                        if (k == 0)
                                return 0;
                        d->len = (size_t)k;
                        d->pos = 0;
                }
                de = (const struct dirent64 *)(const void *)(d->buf + d->pos);
                d->pos += de->d_reclen;
                if (de->d_name[0] == '.' &&
                    (de->d_name[1] == 0 || (de->d_name[1] == '.' && de->d_name[2] == 0)))
                        continue;
                *ret_name = de->d_name;
                *ret_type = de->d_type;
                return 1;
        }
}

/* statx(dfd, name) without following a final symlink or automounting. */
static int fs_statx(int dfd, const char *name, int flags, struct statx *ret) {
        if (statx(dfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                  STATX_BASIC_STATS | STATX_MNT_ID, ret) < 0)
                return -errno;
        return 0;
}

/* The struct stat of a statx result (the fields qgc reads). */
static void fs_stat_from_statx(struct stat *st, const struct statx *sx) {
        *st = (struct stat){
                .st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor),
                .st_ino = sx->stx_ino,
                .st_mode = sx->stx_mode,
                .st_nlink = sx->stx_nlink,
                .st_uid = sx->stx_uid,
                .st_gid = sx->stx_gid,
                .st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor),
                .st_size = (off_t)sx->stx_size,
                .st_blksize = (blksize_t)sx->stx_blksize,
                .st_blocks = (blkcnt_t)sx->stx_blocks,
                .st_atim = { sx->stx_atime.tv_sec, sx->stx_atime.tv_nsec },
                .st_mtim = { sx->stx_mtime.tv_sec, sx->stx_mtime.tv_nsec },
                .st_ctim = { sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec },
        };
}

/* Is sx (an entry of directory dfd) the root of a mount? STATX_ATTR_MOUNT_ROOT where the kernel
 * reports it (5.8+), else a mount id other than dfd's, else (before 5.8) another st_dev. */
static int fs_statx_is_mount_root(int dfd, const struct statx *sx) {
        struct statx parent;
        int r;

        if (sx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
                return !!(sx->stx_attributes & STATX_ATTR_MOUNT_ROOT);
        r = fs_statx(dfd, "", AT_EMPTY_PATH, &parent);
        if (r < 0)
                return r;
        if ((sx->stx_mask & STATX_MNT_ID) && (parent.stx_mask & STATX_MNT_ID))
                return sx->stx_mnt_id != parent.stx_mnt_id;
        return sx->stx_dev_major != parent.stx_dev_major ||
               sx->stx_dev_minor != parent.stx_dev_minor;
}

int fs_statat(int dfd, const char *name, struct stat *ret_st, bool *ret_mount) {
        struct statx sx;
        int r;

        r = fs_statx(dfd, name, 0, &sx);
        if (r < 0)
                return r;
        if (ret_mount) {
                r = fs_statx_is_mount_root(dfd, &sx);
                if (r < 0)
                        return r;
                *ret_mount = r > 0;
        }
        if (ret_st)
                fs_stat_from_statx(ret_st, &sx);
        return 0;
}

/* Is the path refused before any lookup: empty, absolute, or with a ".." component? */
static bool fs_path_refused(const char *path) {
        if (!path || !*path || path[0] == '/')
                return true;
        for (const char *p = path; *p;) {
                size_t n = strcspn(p, "/");
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return true;
                p += n;
                p += strspn(p, "/");
        }
        return false;
}

/* The fallback of fs_openat(): one component at a time, each O_NOFOLLOW, each directory (and
 * the final object) tested for being a mount root. Errors as openat2's: -ELOOP for a symlink,
 * -EXDEV for a mount crossing. */
static int fs_openat_walk(int dfd, const char *path, int flags, mode_t mode) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int cur = -EBADF;
        char *save = NULL, *c, *next;
        int at = dfd;

        if (!copy)
                return -ENOMEM;
        c = strtok_r(copy, "/", &save);
        while (c && streq(c, "."))
                c = strtok_r(NULL, "/", &save);
        if (!c) /* "." or "./": the directory itself */
                c = (char *)".";
        for (; c; c = next) {
                _cleanup_close_ int fd = -EBADF;
                struct statx sx;
                int r;

                next = strtok_r(NULL, "/", &save);
                while (next && streq(next, "."))
                        next = strtok_r(NULL, "/", &save);
                if (next)
                        fd = openat(at, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                else
                        fd = openat(at, c, flags, mode);
                if (fd < 0) {
                        /* a symlink on the way is ENOTDIR here (O_DIRECTORY): ELOOP, as openat2
                         * says; the final component fails as openat() does */
                        if (next && errno == ENOTDIR && fs_statx(at, c, 0, &sx) >= 0 &&
                            S_ISLNK(sx.stx_mode))
                                return -ELOOP;
                        return -errno;
                }
                if (!streq(c, ".")) {
                        r = fs_statx(fd, "", AT_EMPTY_PATH, &sx);
                        if (r < 0)
                                return r;
                        r = fs_statx_is_mount_root(at, &sx);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                return -EXDEV;
                }
                macro_safe_close(cur);
                cur = TAKE_FD(fd);
                at = cur;
        }
        return TAKE_FD(cur);
}

int fs_openat(int dfd, const char *path, int flags, mode_t mode) {
        flags |= O_NOFOLLOW | O_CLOEXEC;
        /* openat2 wants no mode without O_CREAT or O_TMPFILE (which includes O_DIRECTORY) */
        if (!(flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE)
                mode = 0;
        if (fs_path_refused(path))
                return -EPERM; /* never climb out of the tree, never start at / */
        struct open_how how = {
                .flags = (uint64_t)flags,
                .mode = mode,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
                           RESOLVE_NO_MAGICLINKS,
        };
        for (int attempt = 0; attempt < 3; attempt++) {
                long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return (int)fd;
                if (errno == EAGAIN) /* a rename raced the lookup: try again */
                        continue;
                /* ENOSYS: a kernel before 5.6; EPERM: a seccomp filter refusing openat2 (or
                 * O_NOATIME refused: the walk says so again); E2BIG/EINVAL: an older openat2 */
                if (errno != ENOSYS && errno != EPERM && errno != E2BIG && errno != EINVAL)
                        return -errno;
                break;
        }
        return fs_openat_walk(dfd, path, flags, mode);
}

int fs_open_dir(int dfd, const char *name) {
        return fs_openat(dfd, name, O_RDONLY | O_DIRECTORY, 0);
}

int fs_open_path(int dfd, const char *relpath, dev_t dev) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = fs_openat(dfd, relpath, O_RDONLY | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        if (dev != 0) {
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (st.st_dev != dev)
                        return -EXDEV;
        }
        return TAKE_FD(fd);
}

int fs_open_root(const char *path, dev_t dev) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* the configured root may be a symlink (a tree on another disk), as the scan allows:
         * follow it, then hold the fd; nothing below it is ever followed. Like the kernel's
         * protected_symlinks, only a symlink of our own (or root's) is followed: root given a
         * user's path does not go where that user points it. */
        if (lstat(path, &st) < 0)
                return -errno;
        if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)
                return -EPERM;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (dev != 0 && st.st_dev != dev)
                return -EXDEV;
        return TAKE_FD(fd);
}

int fs_root_open(const char *path, dev_t dev, FsRoot *ret) {
        _cleanup_close_ int fd = fs_open_root(path, dev);
        struct statx sx;
        int r;

        if (fd < 0)
                return fd;
        r = fs_statx(fd, "", AT_EMPTY_PATH, &sx);
        if (r < 0)
                return r;
        *ret = (FsRoot){
                .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
                .mnt_id = sx.stx_mask & STATX_MNT_ID ? sx.stx_mnt_id : 0,
        };
        ret->fd = TAKE_FD(fd);
        return 0;
}

void fs_root_done(FsRoot *r) {
        r->fd = macro_safe_close(r->fd);
}

int fs_mkdirat(int dfd, const char *name, mode_t mode) {
        if (fs_path_refused(name) || strchr(name, '/'))
                return -EPERM;
        return mkdirat(dfd, name, mode) < 0 ? -errno : 0;
}

int fs_mkdir_open(int dfd, const char *name, mode_t mode, dev_t dev, FsMadeFn made,
                  void *userdata) {
        int r = fs_mkdirat(dfd, name, mode);

        if (r >= 0) {
                if (made)
                        made(userdata, name);
                r = fs_fsync(dfd);
                if (r < 0)
                        return r;
        } else if (r != -EEXIST)
                return r;
        return fs_open_path(dfd, name, dev);
}

void fs_fileid_from_stat(FileId *id, const struct stat *st) {
        *id = (FileId){
                .present = true,
                .dev = st->st_dev,
                .ino = st->st_ino,
                .size = (uint64_t)st->st_size,
                .blocks = (uint64_t)st->st_blocks * 512,
                .mtime_ns = util_timespec_to_nsec(&st->st_mtim),
                .ctime_ns = util_timespec_to_nsec(&st->st_ctim),
        };
}

/* Compare the fields a change trusts: dev, ino, size, mtime and ctime (a same-size
 * rewrite with its mtime put back changes only ctime). */
static int fs_identity_matches(const struct stat *st, const FileId *id) {
        FileId now;

        fs_fileid_from_stat(&now, st);
        return id->present && now.dev == id->dev && now.ino == id->ino && now.size == id->size &&
               now.mtime_ns == id->mtime_ns && now.ctime_ns == id->ctime_ns;
}

int fs_check_identity(int dfd, const char *name, const FileId *id) {
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISLNK(st.st_mode))
                return 0;
        return fs_identity_matches(&st, id);
}

int fs_check_identity_fd(int fd, const FileId *id) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        return fs_identity_matches(&st, id);
}

/* The target of a refused move exists: when it is the source's very inode (a move interrupted
 * between link and unlink), drop the old name and succeed; else -EEXIST. */
static int fs_rename_complete_link(int olddfd, const char *oldname, const struct stat *a,
                                   int newdfd, const char *newname) {
        struct stat b;

        if (fstatat(newdfd, newname, &b, AT_SYMLINK_NOFOLLOW) < 0 || b.st_dev != a->st_dev ||
            b.st_ino != a->st_ino || S_ISDIR(a->st_mode))
                return -EEXIST;
        /* the new name is durable before the old one goes (a crash in between keeps both) */
        if (fsync(newdfd) < 0)
                return -errno;
        return unlinkat(olddfd, oldname, 0) < 0 ? -errno : 0;
}

int fs_rename_noreplace(int olddfd, const char *oldname, int newdfd, const char *newname) {
        struct stat a;
        int err;

        if (renameat2(olddfd, oldname, newdfd, newname, RENAME_NOREPLACE) >= 0)
                return 0;
        err = errno;
        if (err != EINVAL && err != ENOSYS && err != EEXIST)
                return -err;
        if (fstatat(olddfd, oldname, &a, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (err == EEXIST)
                return fs_rename_complete_link(olddfd, oldname, &a, newdfd, newname);
        /* No RENAME_NOREPLACE on this filesystem. A check then renameat() would replace a file
         * that appears in between (a writer that recreates a file by path), so: link(), which
         * never replaces, then drop the old name. Only for non-directories. */
        if (S_ISDIR(a.st_mode))
                return -EOPNOTSUPP;
        if (linkat(olddfd, oldname, newdfd, newname, 0) < 0)
                return errno == EEXIST
                               ? fs_rename_complete_link(olddfd, oldname, &a, newdfd, newname)
                               : -errno;
        if (fsync(newdfd) < 0) /* as in fs_rename_complete_link() */
                return -errno;
        return unlinkat(olddfd, oldname, 0) < 0 ? -errno : 0;
}

int fs_unlink(int dfd, const char *name, int flags) {
        return unlinkat(dfd, name, flags) < 0 ? -errno : 0;
}

int fs_fsync(int fd) {
        return fsync(fd) < 0 ? -errno : 0;
}

void fs_fsync_many(const int *fds, size_t n, int *ret) {
        SyncQ *q = NULL;

        if (syncq_new(&q) < 0) {
                for (size_t i = 0; i < n; i++)
                        ret[i] = fds[i] < 0 ? 0 : fs_fsync(fds[i]);
                return;
        }
        for (size_t i = 0; i < n; i++)
                if (fds[i] < 0)
                        ret[i] = 0;
                else
                        syncq_push(q, fds[i], &ret[i]);
        (void)syncq_free(q); /* waits for every fsync */
}

int fs_exists(int dfd, const char *name) {
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                return 1;
        return errno == ENOENT ? 0 : -errno;
}

ssize_t fs_pread_full(int fd, void *buf, size_t size, off_t offset) {
        size_t n = 0;

        while (n < size) {
                ssize_t k = pread(fd, (char *)buf + n, size - n, offset + (off_t)n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        return (ssize_t)n;
}

int fs_read_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n = 0;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((uint64_t)st.st_size > max)
                return -EFBIG;
        buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t k = fs_pread_full(fd, buf, (size_t)st.st_size, 0);
        if (k < 0)
                return (int)k;
        n = (size_t)k;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

int fs_read_file(int dfd, const char *name, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        fd = fs_openat(dfd, name, O_RDONLY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
        return fs_read_fd(fd, max, ret, ret_size);
}

int fs_open_noatime(int dfd, const char *name, int flags) {
        int base = flags | O_NONBLOCK | O_NOCTTY, fd;

        fd = fs_openat(dfd, name, base | O_NOATIME, 0);
        if (fd == -EPERM) /* O_NOATIME needs ownership or CAP_FOWNER */
                fd = fs_openat(dfd, name, base, 0);
        return fd;
}

int fs_open_regular(int dfd, const char *name, struct stat *ret_st) {
        _cleanup_close_ int fd = fs_openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);

        if (fd < 0)
                return fd;
        if (fstat(fd, ret_st) < 0)
                return -errno;
        if (!S_ISREG(ret_st->st_mode))
                return -EBADMSG;
        return TAKE_FD(fd);
}

int fs_exchange_open(int dfd, const char *tmp, const char *name, bool fallback, bool *ret_at_tmp,
                     struct stat *ret_st) {
        _cleanup_close_ int fd = -EBADF;

        *ret_at_tmp = false;
        if (renameat2(dfd, tmp, dfd, name, RENAME_EXCHANGE) >= 0) {
                *ret_at_tmp = true;
                return fs_open_regular(dfd, tmp, ret_st);
        }
        if (!fallback || (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP))
                return -errno;
        fd = fs_open_regular(dfd, name, ret_st);
        if (fd < 0)
                return fd;
        if (renameat(dfd, tmp, dfd, name) < 0)
                return -errno;
        return TAKE_FD(fd);
}

int fs_version_is(int fd, const struct stat *st, const struct stat *want_st, const char *text,
                  size_t n, char *buf) {
        _cleanup_free_ char *own = NULL;

        if (want_st && (st->st_dev != want_st->st_dev || st->st_ino != want_st->st_ino))
                return 0;
        if ((uint64_t)st->st_size != n)
                return 0;
        if (!buf) {
                buf = own = malloc(FS_CMP_CHUNK);
                if (!buf)
                        return -ENOMEM;
        }
        for (size_t at = 0; at < n;) {
                size_t want = MIN(n - at, (size_t)FS_CMP_CHUNK);
                ssize_t k = fs_pread_full(fd, buf, want, (off_t)at);

                if (k < 0)
                        return (int)k;
                if ((size_t)k < want || memcmp(buf, text + at, want) != 0)
                        return 0; /* shorter, or other bytes */
                at += want;
        }
        return 1;
}

int fs_temp_like(int dfd, const char *tmp, const struct stat *like, mode_t mask,
                 bool exact_owner) {
        _cleanup_close_ int fd = fs_openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
        bool own = exact_owner ? like->st_uid != geteuid() || like->st_gid != getegid()
                               : geteuid() == 0;

        if (fd < 0)
                return fd;
        if ((own && fchown(fd, like->st_uid, like->st_gid) < 0) ||
            fchmod(fd, like->st_mode & mask) < 0) { /* past the umask (the unit's is 0077) */
                int r = -errno;

                (void)unlinkat(dfd, tmp, 0);
                return r;
        }
        return TAKE_FD(fd);
}

int fs_write_atomic(int dfd, const char *name, const void *data, size_t size, mode_t mode) {
        return fs_write_durable(dfd, name, data, size, mode, 0, NULL, NULL);
}

int fs_write_durable(int dfd, const char *name, const void *data, size_t size, mode_t mode,
                     unsigned flags, FsMadeFn made, void *userdata) {
        _cleanup_free_ char *tmp = fs_temp_name(name, false);
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!tmp)
                return -ENOMEM;
        /* A leftover of a crashed run has this fixed name (we hold the tree lock). */
        if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
                return -errno;
        fd = fs_openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL, mode);
        if (fd < 0)
                return fd;
        r = util_write_all(fd, data, size);
        if (r >= 0)
                r = fs_fsync(fd);
        if (r < 0)
                goto fail;
        if (made && (flags & FS_DURABLE_MADE_TEMP))
                made(userdata, tmp);
        if (flags & FS_DURABLE_NOREPLACE)
                r = fs_rename_noreplace(dfd, tmp, dfd, name);
        else
                r = renameat(dfd, tmp, dfd, name) < 0 ? -errno : 0;
        if (r < 0)
                goto fail;
        if (made)
                made(userdata, name);
        return fs_fsync(dfd);
fail:
        (void)unlinkat(dfd, tmp, 0);
        return r;
}

char *fs_temp_name(const char *name, bool second) {
        return util_strprintf(second ? FS_TEMP_NAME("%s") "2" : FS_TEMP_NAME("%s"), name);
}

bool fs_is_temp_name(const char *name) {
        size_t n = strlen(name), ls = strlen(FS_TEMP_SUFFIX);

        if (n > ls + 2 && name[n - 1] == '2') /* an edit's second (fs_temp_name()) */
                n--;
        return name[0] == '.' && n > ls + 1 && strneq(name + n - ls, FS_TEMP_SUFFIX, ls);
}
