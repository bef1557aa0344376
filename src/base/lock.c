/* lock.c: one qgc per tree at a time, by flock on G/.qgc.lock. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "lock.h"
#include "macro.h"

/* Take the tree's lock without waiting; the returned fd holds it until closed. */
int lock_tree(const char *global_dir) {
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        struct stat st;

        /* the configured root may itself be a symlink of our own (see fs_open_root()); the lock
         * file inside it is never followed */
        dfd = fs_open_root(global_dir, 0);
        if (dfd < 0)
                return dfd; /* -ENOENT: no tree, nothing to do */
        fd = fs_openat(dfd, LOCK_FILE, O_RDWR | O_CREAT, 0600);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
        return TAKE_FD(fd);
}
