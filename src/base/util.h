/* util.h: units (sizes, durations, times), formatting and small string helpers (and StrBuf,
 * strbuf.h, which most of their callers use with them). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "strbuf.h"

/* All times in qgc are milliseconds: instants since the Unix epoch, and durations. */
typedef int64_t msec_t;
#define MSEC_PER_SEC INT64_C(1000)
#define MSEC_PER_MIN (INT64_C(60) * MSEC_PER_SEC)
#define MSEC_PER_HOUR (INT64_C(60) * MSEC_PER_MIN)
#define MSEC_PER_DAY (INT64_C(24) * MSEC_PER_HOUR)
#define MSEC_PER_WEEK (INT64_C(7) * MSEC_PER_DAY)
#define MSEC_INFINITY INT64_MAX
#define NSEC_PER_MSEC INT64_C(1000000)
#define NSEC_PER_SEC INT64_C(1000000000)

/* A time in nanoseconds (FileId's mtime_ns, ctime_ns), and a struct timespec (a stat's st_mtim),
 * in milliseconds: the one conversion of a file's times to msec_t. */
static inline msec_t util_nsec_to_msec(int64_t ns) {
        return ns / NSEC_PER_MSEC;
}
static inline msec_t util_timespec_to_msec(const struct timespec *ts) {
        return (msec_t)ts->tv_sec * MSEC_PER_SEC + ts->tv_nsec / NSEC_PER_MSEC;
}
/* A struct timespec in nanoseconds (FileId's times, a clock's reading): the one conversion. */
static inline int64_t util_timespec_to_nsec(const struct timespec *ts) {
        return (int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

/* A size limit: either absolute bytes or a percentage (of a filesystem, or of a count). */
typedef struct SizeSpec {
        bool is_set;
        bool is_percent;
        uint64_t bytes;      /* when !is_percent */
        double percent;      /* 0..100 when is_percent */
} SizeSpec;

/* "90d", "36h", "2w", "30min", "45s", "1d12h"; plain numbers are refused; "m" is ambiguous.
 * Returns 0, -EINVAL (syntax, with *ret_why set to a static message) or -ERANGE. */
int util_parse_duration(const char *s, msec_t *ret, const char **ret_why);
/* "5G", "512M", "100K", "1T", "123" (bytes), "10%" when allow_percent. 1024-based. */
int util_parse_size(const char *s, bool allow_percent, SizeSpec *ret, const char **ret_why);

/* Human renderings into caller buffers; return buf. */
#define FORMAT_BYTES_MAX 16
#define FORMAT_DURATION_MAX 32
#define FORMAT_TIMESTAMP_MAX 32
char *util_format_bytes(char *buf, size_t n, uint64_t bytes);          /* "5.2G", "812K", "0B" */
#define FORMAT_SIZE_EXACT_MAX 24
char *util_format_size_exact(char *buf, size_t n, uint64_t bytes);     /* "5G", "1536M", "123B" */
char *util_format_duration(char *buf, size_t n, msec_t d);             /* "121d", "3h", "45s" (coarse) */
char *util_format_duration_exact(char *buf, size_t n, msec_t d);       /* "90d", "1d12h", "30min" */
char *util_format_timestamp(char *buf, size_t n, msec_t t);            /* "2026-11-30T06:10:39Z" */

/* Clock: the only place qgc reads the wall clock (main.c calls it once). */
msec_t util_now_msec(void);
double util_mono_sec(void); /* CLOCK_MONOTONIC in seconds, for the phase times of -vv */

/* write(2) all n bytes of buf to fd, again after EINTR and short writes. 0 or -errno (-EIO when
 * write returns 0). */
int util_write_all(int fd, const void *buf, size_t n);

/* asprintf that returns NULL on failure instead of an undefined pointer. */
char *util_strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The concatenation of the strings up to a NULL, or NULL when out of memory. */
char *util_strjoin(const char *s, ...) __attribute__((sentinel));
/* strdup accepting NULL */
char *util_strdup_or_null(const char *s);

/* Compare ignoring ASCII case (A-Z fold to a-z; no locale, every other byte as itself, as
 * unsigned): <0, 0, >0 like strcmp().  * util_ascii_strncasecmp() compares at most n bytes; util_ascii_strcasecmp_n() compares the keys a[0..an)
 * and b[0..bn) (a proper prefix orders first). */
int util_ascii_strcasecmp(const char *a, const char *b);
int util_ascii_strncasecmp(const char *a, const char *b, size_t n);
int util_ascii_strcasecmp_n(const char *a, size_t an, const char *b, size_t bn);

/* The name of names[0..n) closest to name (Levenshtein distance, ASCII case ignored) if it is
 * within 2 edits (3 for a name of 8 characters or more), else NULL: the one "did you mean"
 * (unknown policy keys, commands and options). */
const char *util_closest_name(const char *name, const char *const *names, size_t n);

/* Join a and b with exactly one '/'. NULL on ENOMEM. */
char *util_path_join(const char *a, const char *b);

/* Generic growable array helper: ensure *p has room for need elements of size sz. */
int util_greedy_realloc(void **p, size_t *allocated, size_t need, size_t sz);

/* qsort_r() for arrays that hold runs of elements with equal span keys (span_cmp() == 0), each
 * key in one run only, as a scan leaves them: the runs are put in span_cmp() order and each is
 * sorted with cmp (which must order by the span key first), the same order as qsort_r() with
 * cmp, with small sorts instead of one of the whole. Returns 1 when sorted, 0 when a key has
 * two runs (nothing was changed: sort the whole), -ENOMEM. */
int util_sort_by_runs(void *base, size_t n, size_t size,
                      int (*span_cmp)(const void *, const void *, void *),
                      int (*cmp)(const void *, const void *, void *), void *userdata);

/* Does s end with suffix? */
bool util_endswith(const char *s, const char *suffix);
