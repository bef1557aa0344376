/* no-openat2.c: run a command where openat2(2) fails with ENOSYS, as on a kernel before 5.6 or
 * under a seccomp filter that refuses the call: qgc's safe-filesystem layer (src/fs.c) then
 * walks paths component by component, testing each step for a mount root. The binary has no
 * switch for that walk (no test environment variable reaches the installed qgc): t-0110 runs the
 * qgc binary under this filter, the way a system without openat2 would.
 *
 *   no-openat2 COMMAND [ARG...]   install the filter (inherited by every child), exec COMMAND;
 *                                 exit 77 when seccomp filters are not available here
 *   no-openat2                    a self-test in TAP: the filter refuses openat2 with ENOSYS and
 *                                 lets openat through (SKIP without seccomp)
 *
 * The filter compares the system call number only: 437 is openat2 on every architecture, and in
 * the 32-bit compat table too. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static int no_openat2_install(void) {
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
                return -errno;
        return 0;
}

/* open_how of openat2(2), for the self-test */
struct no_openat2_how {
        uint64_t flags, mode, resolve;
};

static int no_openat2_selftest(void) {
        struct no_openat2_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC };
        long fd;
        int r, ok = 1;

        r = no_openat2_install();
        if (r < 0) {
                printf("1..0 # SKIP seccomp filters are not available: %s\n", strerror(-r));
                return 0;
        }
        printf("1..2\n");
        errno = 0;
        fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how);
        if (fd < 0 && errno == ENOSYS)
                printf("ok 1 - openat2 fails with ENOSYS under the filter\n");
        else {
                printf("not ok 1 - openat2 under the filter: %ld, %s\n", fd, strerror(errno));
                ok = 0;
        }
        if (fd >= 0)
                close((int)fd);
        fd = openat(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
                printf("ok 2 - openat still works\n");
                close((int)fd);
        } else {
                printf("not ok 2 - openat under the filter: %s\n", strerror(errno));
                ok = 0;
        }
        return ok ? 0 : 1;
}

int main(int argc, char *argv[]) {
        int r;

        if (argc < 2)
                return no_openat2_selftest();
        r = no_openat2_install();
        if (r < 0) {
                fprintf(stderr, "no-openat2: cannot install the seccomp filter: %s\n",
                        strerror(-r));
                return 77;
        }
        execvp(argv[1], argv + 1);
        fprintf(stderr, "no-openat2: %s: %s\n", argv[1], strerror(errno));
        return 127;
}
