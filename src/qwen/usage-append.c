/* usage-append.c: qgc's appends to G/usage_record.jsonl: one write() on an O_APPEND fd, fsync,
 * every byte read back; a failed or short append undone in place. Qwen appends to the file
 * without a lock (jsonl writeLineSync: O_APPEND, fsync), so qgc never rewrites bytes that are
 * not its own. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "log.h"
#include "macro.h"
#include "usage-append.h"
#include "util.h"

#define USAGE_APPEND_FLAGS (O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
#define USAGE_CREATE_FLAGS \
        (O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)

/* Are the n bytes at off exactly buf? 1 yes, 0 no, -errno. */
static int usage_append_bytes_are(int fd, uint64_t off, const char *buf, size_t n) {
        _cleanup_free_ char *got = malloc(MAX(n, (size_t)1));
        ssize_t k;

        if (!got)
                return -ENOMEM;
        k = fs_pread_full(fd, got, n, (off_t)off);
        if (k < 0)
                return (int)k;
        return (size_t)k == n && memcmp(got, buf, n) == 0;
}

/* Undo the n bytes of a failed append at [off, off + n), which are ours: O_APPEND placed them
 * atomically, so no other writer's bytes are in that range. They are overwritten in place with
 * blanks ending in '\n': a blank line, which Qwen's reader and ours skip. Unlike truncating
 * the file this is safe while Qwen appends unlocked: a line Qwen appended after our fragment
 * (even glued to it) stays whole, and now starts on a fresh line. Only when the overwrite itself
 * fails is the file truncated, and only while it still ends exactly where our bytes end. */
static int usage_append_undo(int fd, uint64_t off, size_t n) {
        _cleanup_free_ char *blank = NULL;
        struct stat st;
        int flags, r = 0;

        if (n == 0)
                return 0;
        blank = malloc(n);
        if (!blank)
                return -ENOMEM;
        memset(blank, ' ', n - 1);
        blank[n - 1] = '\n';
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_APPEND) < 0)
                r = -errno; /* pwrite() on an O_APPEND fd would append */
        for (size_t done = 0; r == 0 && done < n;) {
                ssize_t k = pwrite(fd, blank + done, n - done, (off_t)(off + done));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        r = k < 0 ? -errno : -EIO;
                else
                        done += (size_t)k;
        }
        if (r < 0) {
                if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != off + n)
                        return r;
                if (ftruncate(fd, (off_t)off) < 0)
                        return -errno;
        }
        return fsync(fd) < 0 ? -errno : 0;
}

/* The second half of an append: fsync_r is what the fsync of a->fd returned; then the
 * bytes are read back, a new file's directory entry made durable, and a's fds closed. */
int usage_append_end(UsageAppend *a, int fsync_r) {
        _cleanup_close_ int fd = TAKE_FD(a->fd), rfd = TAKE_FD(a->rfd);
        const char *line = a->line;
        size_t len = a->len;
        off_t pos = a->pos;
        int r;

        /* durable, then readable: our bytes at our offset, starting a line */
        if (fsync_r < 0) {
                /* Not durable. Our lines stay readable in the page cache (after a failed fsync
                 * Linux may even mark the pages clean), and the next run would trust them and
                 * let the transcripts go: undo them in place, as a short write is. */
                r = 0;
                if ((uint64_t)pos >= len)
                        r = usage_append_bytes_are(rfd, (uint64_t)pos - len, line, len);
                if (r > 0)
                        r = usage_append_undo(fd, (uint64_t)pos - len, len);
                if (r < 0)
                        log_warning_errno(r,
                                          "%s: lines whose fsync failed could not be undone (a "
                                          "later run may take them for durable)",
                                          USAGE_FILE);
                return fsync_r;
        }
        if ((uint64_t)pos < len)
                return -EIO;
        r = usage_append_bytes_are(rfd, (uint64_t)pos - len, line, len);
        if (r > 0 && (uint64_t)pos > len)
                r = usage_append_bytes_are(rfd, (uint64_t)pos - len - 1, "\n", 1);
        if (r <= 0)
                return r < 0 ? r : -EIO; /* not a readable line: keep the session */
        if (a->created && fsync(a->global_fd) < 0)
                return -errno; /* a new file's directory entry must be durable too */
        if (close(TAKE_FD(fd)) < 0 && errno != EINTR)
                return -errno;
        return 0;
}

/* The first half: up to and including the write(). 0: every byte written, *ret holds the fds
 * (the caller fsyncs ret->fd, on any thread, and calls usage_append_end()); or -errno, with a
 * short write undone and nothing held. line must stay valid until usage_append_end(). */
int usage_append_begin(int global_fd, const char *line, size_t len, UsageAppend *ret) {
        _cleanup_close_ int fd = -EBADF, rfd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        bool created = false, fresh = true;
        struct stat st, rst;
        size_t n;
        off_t pos0, pos;
        ssize_t k;
        int r;

        if (!line || len < 2 || line[len - 1] != '\n' || line[0] == '\n' || memchr(line, 0, len) ||
            memmem(line, len, "\n\n", 2))
                return -EINVAL; /* complete lines, none empty */

        fd = fs_openat(global_fd, USAGE_FILE, USAGE_APPEND_FLAGS, 0);
        if (fd == -ENOENT) {
                fd = fs_openat(global_fd, USAGE_FILE, USAGE_CREATE_FLAGS, 0600);
                created = fd >= 0;
                if (fd == -EEXIST) /* lost a race with another writer */
                        fd = fs_openat(global_fd, USAGE_FILE, USAGE_APPEND_FLAGS, 0);
        }
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        /* a second, read-only handle on the same file, to look at the last byte and to read our
         * line back */
        rfd = fs_openat(global_fd, USAGE_FILE, USAGE_READ_FLAGS, 0);
        if (rfd < 0)
                return rfd;
        if (fstat(rfd, &rst) < 0)
                return -errno;
        if (rst.st_dev != st.st_dev || rst.st_ino != st.st_ino)
                return -EAGAIN; /* replaced meanwhile: not "changed since scan" */

        /* Qwen or qgc may have died mid-append: start on a fresh line, or the record would be
         * glued to the fragment and unreadable (Qwen's reader drops the glued line). */
        pos0 = lseek(fd, 0, SEEK_END);
        if (pos0 < 0)
                return -errno;
        if (pos0 > 0) {
                char c;
                k = fs_pread_full(rfd, &c, 1, pos0 - 1);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        return -EIO;
                fresh = c == '\n';
        }
        n = len + !fresh;
        buf = malloc(n);
        if (!buf)
                return -ENOMEM;
        if (!fresh)
                buf[0] = '\n';
        memcpy(buf + !fresh, line, len);

        k = write(fd, buf, n);
        r = k < 0 ? -errno : 0;
        /* with O_APPEND the offset is now the end of the bytes this write() placed */
        pos = lseek(fd, 0, SEEK_CUR);
        if (pos < 0)
                return r < 0 ? r : -errno;
        if (k >= 0 && (size_t)k == n) {
                *ret = (UsageAppend){
                        .fd = TAKE_FD(fd),
                        .rfd = TAKE_FD(rfd),
                        .global_fd = global_fd,
                        .dev = st.st_dev,
                        .ino = st.st_ino,
                        .created = created,
                        .pos = pos,
                        .line = line,
                        .len = len,
                };
                return 0;
        }

        /* A short write (full disk: the bytes that fit are in the file), or an error. Find our
         * bytes and undo them. A short write ends at pos; after an error, bytes can only be
         * ours if the file grew from pos0 by at most n and holds a prefix of our buffer. */
        uint64_t start;
        size_t m;
        if (k >= 0) {
                m = (size_t)k;
                start = (uint64_t)pos - m;
        } else if (pos > pos0 && (uint64_t)(pos - pos0) <= n) {
                m = (size_t)(pos - pos0);
                start = (uint64_t)pos0;
        } else
                return r; /* nothing of ours was written */
        int q = usage_append_bytes_are(rfd, start, buf, m);
        if (q > 0)
                q = usage_append_undo(fd, start, m);
        else if (q == 0)
                q = -EIO; /* not ours after all: leave the file alone */
        if (q < 0)
                return q;
        return r < 0 ? r : -ENOSPC; /* a short regular-file write means the disk is full */
}
