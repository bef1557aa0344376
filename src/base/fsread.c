/* fsread.c: the shared read-side open of the tree's readers (fsread.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>

#include "fsread.h"
#include "fsutil.h"

int fs_open_noatime(int dfd, const char *name, int flags) {
        int base = flags | O_NONBLOCK | O_NOCTTY, fd;

        /* fs_openat(): no symlink, no mount crossing (a bind mount of the same filesystem too) */
        fd = fs_openat(dfd, name, base | O_NOATIME, 0);
        if (fd == -EPERM) /* O_NOATIME needs ownership or CAP_FOWNER */
                fd = fs_openat(dfd, name, base, 0);
        return fd;
}
