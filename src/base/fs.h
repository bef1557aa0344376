/* fs.h: the safe-filesystem layer, by (dirfd, name): how qgc opens a path inside a managed
 * tree, lists a directory, removes a tree, checks a file's identity, and writes a file durably,
 * by exchange or under a temporary name. Opens never follow a symlink, never climb above their
 * dirfd and never cross a mount point, a same-filesystem bind mount included (openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_XDEV, or a checked walk without it); the
 * removal is iterative and stops at every mount point. A store's step may still unlinkat() or
 * renameat() one name in a directory fd this layer opened; a path outside the trees (a root
 * found from a cwd, a settings or config file) is opened where it is read. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The identity of a file when it was seen: what a change compares before acting. */
typedef struct FileId {
        dev_t dev;
        ino_t ino;
        uint64_t size;       /* st_size */
        uint64_t blocks : 63; /* st_blocks * 512 */
        bool present : 1;     /* shares blocks' word: no padding */
        int64_t mtime_ns;
        int64_t ctime_ns;
} FileId;
_Static_assert(sizeof(FileId) <= 48, "FileId grew");

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

/* A tree root, opened once (fs_root_open()) and passed down: its fd, device and mount id (0
 * when the kernel does not report one). Every fd this module opens below it is on its mount. */
typedef struct FsRoot {
        int fd;
        dev_t dev;
        uint64_t mnt_id;
} FsRoot;
#define FS_ROOT_NULL ((FsRoot){ .fd = -EBADF })
/* open root path (as fs_open_root()) into *ret with its device and mount id. 0 or -errno. */
int fs_root_open(const char *path, dev_t dev, FsRoot *ret);
/* close the root's fd; the FsRoot may be done again. */
void fs_root_done(FsRoot *r);

/* open relpath below dfd: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV), or
 * where the kernel (or a seccomp filter) refuses openat2, a walk component by component with
 * O_NOFOLLOW that tests each step for a mount root. O_NOFOLLOW|O_CLOEXEC are added to flags;
 * mode is for O_CREAT. -ELOOP for a symlink component, -EXDEV for a mount crossing (a bind
 * mount of the same filesystem too), -EPERM for an absolute path or a ".." component. */
int fs_openat(int dfd, const char *relpath, int flags, mode_t mode);
/* open a directory below dfd: fs_openat(dfd, name, O_RDONLY|O_DIRECTORY). */
int fs_open_dir(int dfd, const char *name);
/* open a slash-separated relative directory path with fs_openat(), and check that it is on dev
 * (when dev != 0). */
int fs_open_path(int dfd, const char *relpath, dev_t dev);
/* lstat (dfd, name), name one component, by statx: *ret_st (may be NULL) and, when ret_mount is
 * not NULL, whether it is the root of a mount (STATX_ATTR_MOUNT_ROOT, else a mount id other than dfd's, else another
 * st_dev). 0 or -errno. */
int fs_statat(int dfd, const char *name, struct stat *ret_st, bool *ret_mount);
/* mkdirat(dfd, name, mode) of a single component, 0 or -errno. */
int fs_mkdirat(int dfd, const char *name, mode_t mode);
/* fs_mkdirat(dfd, name, mode) unless it exists, then fs_open_path(dfd, name, dev). A new
 * directory's name is made durable before anything is put in it: made(userdata, name) when
 * given (a step's hook, the owner set), then fsync of dfd. The fd or -errno. */
typedef void (*FsMadeFn)(void *userdata, const char *name);
int fs_mkdir_open(int dfd, const char *name, mode_t mode, dev_t dev, FsMadeFn made,
                  void *userdata);
/* open a configured root: an absolute or cwd-relative directory path, which may be a symlink
 * (as the scan allows) if the caller or root owns it (-EPERM otherwise). When dev != 0 the
 * directory must be on that filesystem (-EXDEV otherwise). */
int fs_open_root(const char *path, dev_t dev);
void fs_fileid_from_stat(FileId *id, const struct stat *st);
/* does (dfd, name) still have identity id (dev, ino, size, mtime, ctime)? 1 yes, 0 no, -errno */
int fs_check_identity(int dfd, const char *name, const FileId *id);
/* does the open fd have identity id (dev, ino, size, mtime, ctime)? 1 yes, 0 no, -errno */
int fs_check_identity_fd(int fd, const FileId *id);
/* rename (olddfd, oldname) to (newdfd, newname) refusing to replace an existing target
 * (-EEXIST). Uses renameat2(RENAME_NOREPLACE), or where the filesystem lacks it linkat() then
 * unlinkat() (non-directories only; a target that is already the same inode, left by an
 * interrupted move, is completed). */
int fs_rename_noreplace(int olddfd, const char *oldname, int newdfd, const char *newname);
/* unlinkat(dfd, name, flags) returning 0 or -errno */
int fs_unlink(int dfd, const char *name, int flags);
/* fsync(fd) returning 0 or -errno */
int fs_fsync(int fd);
/* fsync(2) every fds[i] of fds[0..n) at once, on a SyncQ's threads, so that the device gets
 * the flushes together instead of one after another; ret[i] is 0 or -errno (0 for a negative
 * fd, which is skipped). Returns when every fsync has returned. */
void fs_fsync_many(const int *fds, size_t n, int *ret);
/* does (dfd, name) exist (lstat)? 1 yes, 0 no, -errno */
int fs_exists(int dfd, const char *name);
/* the one read loop: up to size bytes at offset, retried on EINTR and short reads; the count
 * read (less than size only at end of file) or -errno */
ssize_t fs_pread_full(int fd, void *buf, size_t size, off_t offset);
/* read the whole regular file open at fd (by pread), at most max bytes (-EFBIG beyond; not a
 * regular file: -EBADFD). *ret is NUL-terminated; *ret_size its length. */
int fs_read_fd(int fd, size_t max, char **ret, size_t *ret_size);
/* fs_openat(dfd, name, flags | O_NONBLOCK | O_NOCTTY) with O_NOATIME when permitted (retried
 * without it on EPERM): the open of every reader of a tree. The fd or -errno. */
int fs_open_noatime(int dfd, const char *name, int flags);
/* the same for (dfd, name), opened no-follow and non-blocking. */
int fs_read_file(int dfd, const char *name, size_t max, char **ret, size_t *ret_size);
/* open (dfd, name) as fs_openat(O_RDONLY|O_NONBLOCK|O_NOCTTY): a regular file (else -EBADMSG),
 * its fstat in *ret_st. The fd or -errno. */
int fs_open_regular(int dfd, const char *name, struct stat *ret_st);
/* Put (dfd, tmp) in place of (dfd, name), a file that a writer without a lock may rewrite at any
 * moment (in place, or as a new file), and open the file it replaced: renameat2(RENAME_EXCHANGE),
 * which leaves that file at tmp (*ret_at_tmp), so that whatever was at the name, a writer's
 * version too, is seen (fs_version_is()) and can be put back by the same call; with fallback,
 * where the filesystem cannot exchange, the name is opened right before a plain renameat() over
 * it (a writer that replaces the file between the two is the one window left). The replaced
 * file's fd (fs_open_regular(), *ret_st), or -errno: nothing replaced when !*ret_at_tmp (-ENOENT:
 * no file at the name; tmp is still there), else exchanged but not opened. */
int fs_exchange_open(int dfd, const char *tmp, const char *name, bool fallback, bool *ret_at_tmp,
                     struct stat *ret_st);
/* Is the file open at fd (st: its fstat) the version expected: the file of want_st (device,
 * inode) with exactly text[0..n) (read as fs_read_fd() reads it: st_size bytes from the start)?
 * Compared FS_CMP_CHUNK bytes at a time, in buf (that many bytes; NULL: allocated), no copy of
 * the whole file; want_st NULL: the text alone. 1 yes, 0 no, -errno. */
#define FS_CMP_CHUNK (1024 * 1024)
int fs_version_is(int fd, const struct stat *st, const struct stat *want_st, const char *text,
                  size_t n, char *buf);
/* Create the temporary file (dfd, tmp) (O_EXCL: a leftover is the caller's to remove first) for
 * a file like like: created 0600, then given like's owner and group (fchown) and like's mode &
 * mask past the umask (fchmod). exact_owner: whenever like's owner or group is not ours (the
 * replacement of the file like, which must keep them); else only as root (a file that like's
 * owner's own process would make: as root, the owner's; else ours). The fd (O_RDWR) or -errno
 * (no file left behind). */
int fs_temp_like(int dfd, const char *tmp, const struct stat *like, mode_t mask, bool exact_owner);
/* write data to (dfd, name) atomically: a temp file in dfd (a leftover of a crashed run removed
 * first), fsync, rename over name, fsync dfd. mode for a new file. */
int fs_write_atomic(int dfd, const char *name, const void *data, size_t size, mode_t mode);
/* The one durable write: fs_write_atomic() with, in flags, FS_DURABLE_NOREPLACE (an existing
 * name is kept: -EEXIST, fs_rename_noreplace()) and FS_DURABLE_MADE_TEMP (made(userdata, tmp)
 * once the temp file's bytes are durable); made(userdata, name) once it has its name, before
 * dfd's fsync (the steps a crash test kills at). A failure before the rename leaves no file. */
#define FS_DURABLE_NOREPLACE (1u << 0)
#define FS_DURABLE_MADE_TEMP (1u << 1)
int fs_write_durable(int dfd, const char *name, const void *data, size_t size, mode_t mode,
                     unsigned flags, FsMadeFn made, void *userdata);

/* The suffix of qgc's temporary files (".<name>.qgc-tmp", fs_write_atomic() and every other
 * atomic write of qgc's); FS_TEMP_NAME() the temp name of a literal name, fs_temp_name() of any
 * name (allocated, NULL: ENOMEM; second: the second temp file of an edit, ".<name>.qgc-tmp2",
 * erase-edit.c); fs_is_temp_name() whether name is either. */
#define FS_TEMP_SUFFIX ".qgc-tmp"
/* qgc's own directory in a store's root (Qwen's G, ~/.deepcode): its records (session-times.h)
 * and pending markers, nothing the agent reads. */
#define FS_STATE_DIR ".qgc"
#define FS_TEMP_NAME(lit) "." lit FS_TEMP_SUFFIX
char *fs_temp_name(const char *name, bool second);
bool fs_is_temp_name(const char *name);
