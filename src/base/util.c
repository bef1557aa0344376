/* util.c: units, formatting and string helpers. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "macro.h"
#include "util.h"

static const struct {
        const char *suffix;
        msec_t factor;
} duration_units[] = {
        /* longest suffixes first so "min" is not read as "m" + garbage */
        { "min", MSEC_PER_MIN }, { "ms", 1 },           { "w", MSEC_PER_WEEK },
        { "d", MSEC_PER_DAY },   { "h", MSEC_PER_HOUR }, { "s", MSEC_PER_SEC },
};

/* A util_parse_duration()/util_parse_size() error: why in *ret_why (when wanted), err returned. */
static int parse_fail(const char **ret_why, const char *why, int err) {
        if (ret_why)
                *ret_why = why;
        return err;
}

int util_parse_duration(const char *s, msec_t *ret, const char **ret_why) {
        const char *why = NULL;
        msec_t total = 0;
        const char *p = s;
        size_t n_parts = 0;

        if (!s || !*s) {
                why = "empty duration";
                goto invalid;
        }
        while (*p) {
                char *end;
                unsigned long long v;
                size_t i;

                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                if (!isdigit((unsigned char)*p)) {
                        why = "expected a number (durations look like 90d, 36h, 2w, 30min, 45s)";
                        goto invalid;
                }
                errno = 0;
                v = strtoull(p, &end, 10);
                if (errno == ERANGE)
                        goto range;
                p = end;
                if (*p == '.') {
                        why = "fractional durations are not supported (write 36h, not 1.5d)";
                        goto invalid;
                }
                while (*p == ' ')
                        p++;
                if (*p == 'm' && !isalpha((unsigned char)p[1])) {
                        why = "ambiguous unit 'm': write 'min' for minutes (months are not supported)";
                        goto invalid;
                }
                for (i = 0; i < ELEMENTSOF(duration_units); i++) {
                        size_t l = strlen(duration_units[i].suffix);
                        if (strncmp(p, duration_units[i].suffix, l) == 0 &&
                            !isalpha((unsigned char)p[l]))
                                break;
                }
                if (i >= ELEMENTSOF(duration_units)) {
                        why = *p ? "unknown unit (use s, min, h, d or w)"
                                 : "missing unit (use s, min, h, d or w)";
                        goto invalid;
                }
                if (v > (unsigned long long)(INT64_MAX / duration_units[i].factor))
                        goto range;
                if (total > INT64_MAX - (msec_t)v * duration_units[i].factor)
                        goto range;
                total += (msec_t)v * duration_units[i].factor;
                p += strlen(duration_units[i].suffix);
                n_parts++;
        }
        if (n_parts == 0) {
                why = "empty duration";
                goto invalid;
        }
        *ret = total;
        return 0;
range:
        return parse_fail(ret_why, "duration out of range", -ERANGE);
invalid:
        return parse_fail(ret_why, why, -EINVAL);
}

int util_parse_size(const char *s, bool allow_percent, SizeSpec *ret, const char **ret_why) {
        const char *why;
        char *end;

        if (!s || !*s) {
                why = "empty size";
                goto invalid;
        }
        if (!isdigit((unsigned char)*s)) {
                why = "expected a number (sizes look like 512M, 5G, 1T or 10%)";
                goto invalid;
        }
        if (strchr(s, '%')) {
                double d;

                if (!allow_percent) {
                        why = "a percentage is not allowed here";
                        goto invalid;
                }
                /* digits with at most one '.', so strtod() sees no hex, exponent or "inf" */
                if (strspn(s, "0123456789.") != (size_t)(strchr(s, '%') - s) ||
                    strchr(s, '.') != strrchr(s, '.')) {
                        why = "malformed percentage";
                        goto invalid;
                }
                errno = 0;
                d = strtod(s, &end);
                if (errno != 0 || *end != '%' || end[1] != '\0' || !isfinite(d)) {
                        why = "malformed percentage";
                        goto invalid;
                }
                if (d < 0 || d > 100) {
                        if (ret_why)
                                *ret_why = "percentage out of range (0% to 100%)";
                        return -ERANGE;
                }
                *ret = (SizeSpec){ .is_set = true, .is_percent = true, .percent = d };
                return 0;
        }

        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        static const char units[] = "BKkMmGgTt"; /* B, then K, M, G, T in either case */
        const char *unit = *end ? strchr(units, *end) : NULL;
        uint64_t factor = unit ? UINT64_C(1) << (10 * ((unit - units + 1) / 2)) : 1;
        if (errno == ERANGE)
                goto range;
        if (*end == '.') {
                why = "fractional sizes are not supported (write 1536M, not 1.5G)";
                goto invalid;
        }
        if (*end && !unit) {
                why = "unknown size unit (use K, M, G or T, 1024-based)";
                goto invalid;
        }
        if (*end && end[1] != '\0') {
                why = "trailing characters after the size unit";
                goto invalid;
        }
        if (v > UINT64_MAX / factor)
                goto range;
        *ret = (SizeSpec){ .is_set = true, .bytes = v * factor };
        return 0;
range:
        return parse_fail(ret_why, "size out of range", -ERANGE);
invalid:
        return parse_fail(ret_why, why, -EINVAL);
}

/* A bounded writer for the format_*() functions: what snprintf() would write, without stdio. */
typedef struct Fmt {
        char *p;
        size_t left; /* room including the NUL */
} Fmt;

static void fmt_str(Fmt *f, const char *s) {
        for (; *s && f->left > 1; f->left--)
                *f->p++ = *s++;
}

static void fmt_u64(Fmt *f, uint64_t v) {
        char d[20];
        size_t k = 0;

        do
                d[k++] = (char)('0' + v % 10);
        while ((v /= 10) > 0);
        while (k > 0 && f->left > 1) {
                *f->p++ = d[--k];
                f->left--;
        }
}

static char *fmt_end(Fmt *f, char *buf) {
        if (f->left > 0)
                *f->p = '\0';
        return buf;
}

char *util_format_bytes(char *buf, size_t n, uint64_t bytes) {
        static const char suffixes[] = "KMGTPE";
        unsigned shift = 10;
        size_t i = 0;
        Fmt f = { buf, n };
        char suffix[2] = "";

        if (bytes < 1024) {
                fmt_u64(&f, bytes);
                fmt_str(&f, "B");
                return fmt_end(&f, buf);
        }
        /* integers only: a double would round UINT64_MAX up to 16E */
        while (i + 1 < sizeof(suffixes) - 1 && (bytes >> shift) >= 1024) {
                shift += 10;
                i++;
        }
        uint64_t whole = bytes >> shift;
        suffix[0] = suffixes[i];
        fmt_u64(&f, whole);
        if (whole < 10) {
                uint64_t rem = bytes & ((UINT64_C(1) << shift) - 1);
                fmt_str(&f, ".");
                fmt_u64(&f, (rem * 10) >> shift);
        }
        fmt_str(&f, suffix);
        return fmt_end(&f, buf);
}

char *util_format_size_exact(char *buf, size_t n, uint64_t bytes) {
        static const char units[] = "TGMK";
        for (size_t i = 0; i < sizeof(units) - 1; i++) {
                unsigned shift = 10 * (unsigned)(4 - i);
                uint64_t f = UINT64_C(1) << shift;
                if (bytes >= f && bytes % f == 0) {
                        snprintf(buf, n, "%" PRIu64 "%c", bytes >> shift, units[i]);
                        return buf;
                }
        }
        snprintf(buf, n, "%" PRIu64 "B", bytes);
        return buf;
}

char *util_format_duration(char *buf, size_t n, msec_t d) {
        Fmt f = { buf, n };

        if (d < 0) {
                fmt_str(&f, "-");
                d = d == INT64_MIN ? INT64_MAX : -d;
        }
        if (d >= 2 * MSEC_PER_DAY) {
                fmt_u64(&f, (uint64_t)(d / MSEC_PER_DAY));
                fmt_str(&f, "d");
        } else if (d >= 2 * MSEC_PER_HOUR) {
                fmt_u64(&f, (uint64_t)(d / MSEC_PER_HOUR));
                fmt_str(&f, "h");
        } else if (d >= 2 * MSEC_PER_MIN) {
                fmt_u64(&f, (uint64_t)(d / MSEC_PER_MIN));
                fmt_str(&f, "min");
        } else {
                fmt_u64(&f, (uint64_t)(d / MSEC_PER_SEC));
                fmt_str(&f, "s");
        }
        return fmt_end(&f, buf);
}

char *util_format_duration_exact(char *buf, size_t n, msec_t d) {
        static const struct {
                const char *s;
                msec_t f;
        } u[] = { { "w", MSEC_PER_WEEK }, { "d", MSEC_PER_DAY }, { "h", MSEC_PER_HOUR },
                  { "min", MSEC_PER_MIN }, { "s", MSEC_PER_SEC }, { "ms", 1 } };
        size_t len = 0;

        if (n == 0)
                return buf;
        buf[0] = '\0';
        if (d <= 0) {
                snprintf(buf, n, "0s");
                return buf;
        }
        /* whole weeks only when the value is a whole number of weeks, else days */
        for (size_t i = 0; i < ELEMENTSOF(u) && d > 0; i++) {
                if (i == 0 && d % MSEC_PER_WEEK != 0)
                        continue;
                if (d >= u[i].f) {
                        int w = snprintf(buf + len, n - len, "%" PRId64 "%s", d / u[i].f, u[i].s);
                        if (w < 0 || (size_t)w >= n - len)
                                break;
                        len += (size_t)w;
                        d %= u[i].f;
                }
        }
        return buf;
}

char *util_format_timestamp(char *buf, size_t n, msec_t t) {
        struct tm tm;
        time_t secs = (time_t)(t >= 0 ? t / 1000 : (t - 999) / 1000);
        if (!gmtime_r(&secs, &tm)) {
                snprintf(buf, n, "@%" PRId64, (int64_t)secs);
                return buf;
        }
        strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return buf;
}

double util_mono_sec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

msec_t util_now_msec(void) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        return util_timespec_to_msec(&ts);
}

int util_greedy_realloc(void **p, size_t *allocated, size_t need, size_t sz) {
        size_t n;
        void *q;

        if (need <= *allocated)
                return 0;
        if (need > SIZE_MAX / 2)
                return -ENOMEM;
        n = MAX(need * 2, (size_t)16);
        if (n > SIZE_MAX / sz)
                return -ENOMEM;
        q = realloc(*p, n * sz);
        if (!q)
                return -ENOMEM;
        *p = q;
        *allocated = n;
        return 0;
}

char *util_strjoin(const char *s, ...) {
        va_list ap;
        size_t n = 0;
        char *r, *p;

        va_start(ap, s);
        for (const char *x = s; x; x = va_arg(ap, const char *))
                n += strlen(x);
        va_end(ap);
        r = malloc(n + 1);
        if (!r)
                return NULL;
        p = r;
        va_start(ap, s);
        for (const char *x = s; x; x = va_arg(ap, const char *)) {
                size_t k = strlen(x);
                memcpy(p, x, k);
                p += k;
        }
        va_end(ap);
        *p = '\0';
        return r;
}

char *util_strprintf(const char *fmt, ...) {
        va_list ap;
        char *s = NULL;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        return n < 0 ? NULL : s;
}

char *util_strdup_or_null(const char *s) {
        return s ? strdup(s) : NULL;
}

static inline unsigned char ascii_lower(unsigned char c) {
        return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

int util_ascii_strncasecmp(const char *a, const char *b, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char x = ascii_lower((unsigned char)a[i]);
                unsigned char y = ascii_lower((unsigned char)b[i]);
                if (x != y || x == 0)
                        return (int)x - (int)y;
        }
        return 0;
}

int util_ascii_strcasecmp(const char *a, const char *b) {
        return util_ascii_strncasecmp(a, b, SIZE_MAX);
}

int util_ascii_strcasecmp_n(const char *a, size_t an, const char *b, size_t bn) {
        for (size_t i = 0; i < an && i < bn; i++) {
                unsigned char x = ascii_lower((unsigned char)a[i]);
                unsigned char y = ascii_lower((unsigned char)b[i]);
                if (x != y)
                        return (int)x - (int)y;
        }
        return an < bn ? -1 : an > bn;
}

/* The edit distance of a and b ignoring ASCII case; SIZE_MAX past 63 characters. */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

        if (la >= ELEMENTSOF(prev) || lb >= ELEMENTSOF(prev))
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                prev[j] = j;
        for (size_t i = 1; i <= la; i++) {
                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t sub = prev[j - 1] + (ascii_lower((unsigned char)a[i - 1]) !=
                                                    ascii_lower((unsigned char)b[j - 1]));
                        cur[j] = MIN(MIN(prev[j] + 1, cur[j - 1] + 1), sub);
                }
                memcpy(prev, cur, (lb + 1) * sizeof(size_t));
        }
        return prev[lb];
}

const char *util_closest_name(const char *name, const char *const *names, size_t n) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX, limit = strlen(name) >= 8 ? 3 : 2;

        for (size_t i = 0; i < n; i++) {
                size_t d = edit_distance(name, names[i]);
                if (d < best_d) {
                        best_d = d;
                        best = names[i];
                }
        }
        return best_d <= limit ? best : NULL;
}

char *util_path_join(const char *a, const char *b) {
        size_t la = strlen(a);
        while (la > 0 && a[la - 1] == '/')
                la--; /* "/" becomes "", so util_path_join("/", "x") is "/x", not "//x" */
        while (*b == '/')
                b++;
        return util_strprintf("%.*s/%s", (int)la, a, b);
}

typedef struct SortSpan {
        size_t start, n;
} SortSpan;

typedef struct SortSpanCtx {
        const char *base;
        size_t size;
        int (*span_cmp)(const void *, const void *, void *);
        void *userdata;
} SortSpanCtx;

static int sort_span_cmp(const void *x, const void *y, void *userdata) {
        const SortSpanCtx *c = userdata;
        return c->span_cmp(c->base + ((const SortSpan *)x)->start * c->size,
                           c->base + ((const SortSpan *)y)->start * c->size, c->userdata);
}

int util_sort_by_runs(void *base, size_t n, size_t size,
                      int (*span_cmp)(const void *, const void *, void *),
                      int (*cmp)(const void *, const void *, void *), void *userdata) {
        _cleanup_free_ SortSpan *spans = NULL;
        _cleanup_free_ char *sorted = NULL;
        SortSpanCtx c = { .base = base, .size = size, .span_cmp = span_cmp, .userdata = userdata };
        size_t n_spans = 0, k = 0;
        char *b = base;

        if (n < 2)
                return 1;
        spans = calloc(n, sizeof(SortSpan));
        sorted = malloc(n * size);
        if (!spans || !sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (i == 0 || span_cmp(b + (i - 1) * size, b + i * size, userdata) != 0)
                        spans[n_spans++] = (SortSpan){ .start = i };
                spans[n_spans - 1].n++;
        }
        qsort_r(spans, n_spans, sizeof(SortSpan), sort_span_cmp, &c);
        for (size_t j = 1; j < n_spans; j++)
                if (sort_span_cmp(&spans[j - 1], &spans[j], &c) == 0)
                        return 0;
        for (size_t j = 0; j < n_spans; j++) {
                qsort_r(b + spans[j].start * size, spans[j].n, size, cmp, userdata);
                memcpy(sorted + k * size, b + spans[j].start * size, spans[j].n * size);
                k += spans[j].n;
        }
        memcpy(base, sorted, n * size);
        return 1;
}

int util_write_all(int fd, const void *buf, size_t n) {
        const char *p = buf;

        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

bool util_endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}
