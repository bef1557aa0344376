/* force-walk.h: fs.c's walk without openat2, and back again, in one test program. The test
 * links with -Wl,--wrap=syscall: while the walk is forced, openat2 fails with ENOSYS (as on a
 * kernel before 5.6) and fs_openat() takes the walk for that open; every other syscall passes. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/syscall.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static bool force_walk_on; /* read by the scan's threads too */

static inline void fs_test_force_walk(bool force) {
        __atomic_store_n(&force_walk_on, force, __ATOMIC_RELAXED);
}

long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, ...);
/* Five arguments are passed on: on x86-64 they are the ones in registers. A sixth would be read
 * from the caller's stack, past what a caller of fewer arguments passed (clang's ASan reports it
 * as a stack-buffer-underflow); no syscall() in qgc or its tests takes six. */
long __wrap_syscall(long nr, ...) {
        long a[5];
        va_list ap;

        va_start(ap, nr);
        for (int i = 0; i < 5; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (nr == SYS_openat2 && __atomic_load_n(&force_walk_on, __ATOMIC_RELAXED)) {
                errno = ENOSYS;
                return -1;
        }
        return __real_syscall(nr, a[0], a[1], a[2], a[3], a[4]);
}
