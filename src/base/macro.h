/* macro.h: cleanup attributes, ownership transfer and small helpers. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Hand a pointer or fd to a new owner, leaving the old variable empty. */
#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _p_ = (p);                                                           \
                (p) = NULL;                                                                        \
                _p_;                                                                               \
        })
#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _fd_ = (fd);                                                                   \
                (fd) = -EBADF;                                                                     \
                _fd_;                                                                              \
        })

static inline void macro_freep(void *p) {
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(macro_freep)

static inline int macro_safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void)close(fd);
                errno = saved;
        }
        return -EBADF;
}
static inline void macro_closep(int *fd) {
        macro_safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(macro_closep)

static inline void macro_fclosep(FILE **f) {
        if (*f)
                (void)fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(macro_fclosep)

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
