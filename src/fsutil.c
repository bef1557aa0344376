/* fsutil.c: safe filesystem primitives by (dirfd, name). Nothing here follows a symlink in
 * the managed tree or crosses onto another filesystem. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "util.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* Deepest directory nesting fs_rm_rf_at() descends into. */
#define FS_RM_RF_MAX_DEPTH 128

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

int fs_open_dir(int dfd, const char *name) {
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int fs_open_path(int dfd, const char *relpath, dev_t dev) {
        _cleanup_free_ char *copy = strdup(relpath);
        _cleanup_close_ int cur = -EBADF;
        char *save = NULL;
        struct stat st;

        if (!copy)
                return -ENOMEM;
        cur = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return -errno;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (streq(c, "."))
                        continue;
                if (streq(c, ".."))
                        return -EPERM; /* never climb out of the tree */
                int fd = fs_open_dir(cur, c);
                if (fd < 0)
                        return fd;
                safe_close(cur);
                cur = fd;
                if (fstat(cur, &st) < 0)
                        return -errno;
                if (dev != 0 && st.st_dev != dev)
                        return -EXDEV;
        }
        return TAKE_FD(cur);
}

int fs_open_root(const char *path, dev_t dev) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* the configured root may be a symlink (~/.qwen on another disk), as the scan allows:
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

void fs_fileid_from_stat(FileId *id, const struct stat *st) {
        *id = (FileId){
                .present = true,
                .dev = st->st_dev,
                .ino = st->st_ino,
                .size = (uint64_t)st->st_size,
                .blocks = (uint64_t)st->st_blocks * 512,
                .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                .ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
        };
}

/* Compare the fields the executor trusts: dev, ino, size, mtime and ctime (qwen-layout.md §12.4:
 * a same-size rewrite with its mtime put back changes only ctime). */
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

/* Empty the open directory fd (consumed), recursively, staying on dev. */
static int fs_rm_rf_children(int fd, dev_t dev, unsigned depth, uint64_t *bytes) {
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (depth > FS_RM_RF_MAX_DEPTH) {
                safe_close(fd);
                return -ELOOP;
        }
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        while ((errno = 0, de = readdir(d))) {
                struct stat st;
                int k = 0;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT && r == 0)
                                r = -errno;
                        continue;
                }
                if (S_ISDIR(st.st_mode)) {
                        if (st.st_dev != dev) {
                                k = -EXDEV; /* a mount point: never descend */
                        } else {
                                struct stat sst;
                                int sub = openat(dirfd(d), de->d_name,
                                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                                if (sub < 0)
                                        k = errno == ENOENT ? 0 : -errno;
                                else if (fstat(sub, &sst) < 0 || sst.st_dev != dev ||
                                         sst.st_ino != st.st_ino) {
                                        /* not the directory checked: a mount appeared there */
                                        safe_close(sub);
                                        k = -EXDEV;
                                } else {
                                        k = fs_rm_rf_children(sub, dev, depth + 1, bytes);
                                        if (k >= 0 && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0 &&
                                            errno != ENOENT)
                                                k = -errno;
                                }
                        }
                } else {
                        if (unlinkat(dirfd(d), de->d_name, 0) < 0)
                                k = errno == ENOENT ? 0 : -errno;
                        else if (bytes && S_ISREG(st.st_mode))
                                *bytes += (uint64_t)st.st_size;
                }
                if (k < 0 && r == 0)
                        r = k;
        }
        if (errno != 0 && r == 0)
                r = -errno;
        closedir(d);
        return r;
}

int fs_rm_rf_at(int dfd, const char *name, dev_t dev, uint64_t *ret_bytes) {
        uint64_t bytes = 0;
        struct stat st;
        int fd, r;

        fd = fs_open_dir(dfd, name);
        if (fd == -ENOENT) {
                if (ret_bytes)
                        *ret_bytes = 0;
                return 0;
        }
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        if (dev != 0 && st.st_dev != dev) {
                safe_close(fd);
                return -EXDEV;
        }
        r = fs_rm_rf_children(fd, st.st_dev, 0, &bytes);
        if (r >= 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = -errno;
        if (ret_bytes)
                *ret_bytes = bytes;
        return r < 0 ? r : 0;
}

/* The target of a refused move exists: when it is the source's very inode (a move interrupted
 * between link and unlink), drop the old name and succeed; else -EEXIST. */
static int fs_rename_complete_link(int olddfd, const char *oldname, const struct stat *a,
                                   int newdfd, const char *newname) {
        struct stat b;

        if (fstatat(newdfd, newname, &b, AT_SYMLINK_NOFOLLOW) < 0 || b.st_dev != a->st_dev ||
            b.st_ino != a->st_ino || S_ISDIR(a->st_mode))
                return -EEXIST;
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
         * that appears in between (Qwen's TUI recreates a transcript by path), so: link(), which
         * never replaces, then drop the old name. Only for non-directories. */
        if (S_ISDIR(a.st_mode))
                return -EOPNOTSUPP;
        if (linkat(olddfd, oldname, newdfd, newname, 0) < 0)
                return errno == EEXIST
                               ? fs_rename_complete_link(olddfd, oldname, &a, newdfd, newname)
                               : -errno;
        return unlinkat(olddfd, oldname, 0) < 0 ? -errno : 0;
}

int fs_unlink(int dfd, const char *name, int flags) {
        return unlinkat(dfd, name, flags) < 0 ? -errno : 0;
}

int fs_fsync(int fd) {
        return fsync(fd) < 0 ? -errno : 0;
}

int fs_exists(int dfd, const char *name) {
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                return 1;
        return errno == ENOENT ? 0 : -errno;
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
        while (n < (size_t)st.st_size) {
                ssize_t k = pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

int fs_read_file(int dfd, const char *name, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fs_read_fd(fd, max, ret, ret_size);
}

int fs_write_atomic(int dfd, const char *name, const void *data, size_t size, mode_t mode) {
        _cleanup_free_ char *tmp = strprintf(".%s.qgc-tmp", name);
        _cleanup_close_ int fd = -EBADF;
        const char *p = data;
        size_t done = 0;
        int r;

        if (!tmp)
                return -ENOMEM;
        /* A leftover of a crashed run has this fixed name (we hold the tree lock). */
        if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
                return -errno;
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        while (done < size) {
                ssize_t k = write(fd, p + done, size - done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : -EIO;
                        goto fail;
                }
                done += (size_t)k;
        }
        r = fs_fsync(fd);
        if (r < 0)
                goto fail;
        if (renameat(dfd, tmp, dfd, name) < 0) {
                r = -errno;
                goto fail;
        }
        return fs_fsync(dfd);
fail:
        (void)unlinkat(dfd, tmp, 0);
        return r;
}
