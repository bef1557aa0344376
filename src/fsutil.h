/* fsutil.h: safe filesystem primitives by (dirfd, name): no-follow opens, identity checks,
 * fd-based recursive removal that never follows a symlink or leaves the filesystem. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "inventory.h"

/* A listing of a directory fd by getdents64(2): no dup(), fcntl() or fstat() as fdopendir()
 * costs, and the fd stays the caller's. The fd must be at offset 0 (freshly opened) and is read
 * to its end. */
#define FS_DIR_BUF 16384
typedef struct FsDir {
        int fd;
        size_t pos, len;
        char buf[FS_DIR_BUF] __attribute__((aligned(8)));
} FsDir;
static inline void fs_dir_init(FsDir *d, int fd) {
        d->fd = fd;
        d->pos = d->len = 0;
}
/* The next entry other than "." and "..": 1 with *ret_name (valid until the next call) and
 * *ret_type (a DT_* value, DT_UNKNOWN when the filesystem does not say), 0 at the end, -errno. */
int fs_dir_next(FsDir *d, const char **ret_name, unsigned char *ret_type);

/* open a directory below dfd without following symlinks: O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC */
int fs_open_dir(int dfd, const char *name);
/* open a slash-separated relative path component by component (each O_NOFOLLOW), checking
 * every directory stays on dev (when dev != 0). */
int fs_open_path(int dfd, const char *relpath, dev_t dev);
/* open a configured root: an absolute or cwd-relative directory path, which may be a symlink
 * (as the scan allows) if the caller or root owns it (-EPERM otherwise). When dev != 0 the
 * directory must be on that filesystem (-EXDEV otherwise). */
int fs_open_root(const char *path, dev_t dev);
void fs_fileid_from_stat(FileId *id, const struct stat *st);
/* does (dfd, name) still have identity id (dev, ino, size, mtime, ctime)? 1 yes, 0 no, -errno */
int fs_check_identity(int dfd, const char *name, const FileId *id);
/* does the open fd have identity id (dev, ino, size, mtime, ctime)? 1 yes, 0 no, -errno */
int fs_check_identity_fd(int fd, const FileId *id);
/* remove directory (dfd, name) recursively by fd; never follows symlinks, never crosses dev.
 * ENOENT is success. Returns bytes freed via ret_bytes (may be NULL). */
int fs_rm_rf_at(int dfd, const char *name, dev_t dev, uint64_t *ret_bytes);
/* rename (olddfd, oldname) to (newdfd, newname) refusing to replace an existing target
 * (-EEXIST). Uses renameat2(RENAME_NOREPLACE), or where the filesystem lacks it linkat() then
 * unlinkat() (non-directories only; a target that is already the same inode, left by an
 * interrupted move, is completed). */
int fs_rename_noreplace(int olddfd, const char *oldname, int newdfd, const char *newname);
/* unlinkat(dfd, name, flags) returning 0 or -errno */
int fs_unlink(int dfd, const char *name, int flags);
/* fsync(fd) returning 0 or -errno */
int fs_fsync(int fd);
/* does (dfd, name) exist (lstat)? 1 yes, 0 no, -errno */
int fs_exists(int dfd, const char *name);
/* read the whole regular file open at fd (by pread), at most max bytes (-EFBIG beyond; not a
 * regular file: -EBADFD). *ret is NUL-terminated; *ret_size its length. */
int fs_read_fd(int fd, size_t max, char **ret, size_t *ret_size);
/* the same for (dfd, name), opened no-follow and non-blocking. */
int fs_read_file(int dfd, const char *name, size_t max, char **ret, size_t *ret_size);
/* write data to (dfd, name) atomically: a temp file in dfd, fsync, rename over name, fsync
 * dfd. mode for a new file. */
int fs_write_atomic(int dfd, const char *name, const void *data, size_t size, mode_t mode);
