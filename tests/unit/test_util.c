/* test_util.c: units (durations, sizes, timestamps), their renderings and string helpers, and
 * log.c's log_errno_to_string(). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "macro.h"
#include "util.h"

typedef struct DurationCase {
        const char *in;
        int r;
        msec_t want;
} DurationCase;

static void test_parse_duration_table(void **state) {
        static const DurationCase cases[] = {
                { "90d", 0, 90 * MSEC_PER_DAY },
                { "36h", 0, 36 * MSEC_PER_HOUR },
                { "2w", 0, 2 * MSEC_PER_WEEK },
                { "30min", 0, 30 * MSEC_PER_MIN },
                { "45s", 0, 45 * MSEC_PER_SEC },
                { "1d12h", 0, MSEC_PER_DAY + 12 * MSEC_PER_HOUR },
                { "1d 12h", 0, MSEC_PER_DAY + 12 * MSEC_PER_HOUR },
                { "0s", 0, 0 },
                { "250ms", 0, 250 },
                { " 3d ", 0, 3 * MSEC_PER_DAY },
                { "1w1d1h1min1s", 0, MSEC_PER_WEEK + MSEC_PER_DAY + MSEC_PER_HOUR + MSEC_PER_MIN +
                                             MSEC_PER_SEC },
                { "90", -EINVAL, 0 },     /* bare number */
                { "0", -EINVAL, 0 },      /* bare zero, too */
                { "5m", -EINVAL, 0 },     /* ambiguous: minutes or months */
                { "5 m", -EINVAL, 0 },
                { "1h5m", -EINVAL, 0 },
                { "5mo", -EINVAL, 0 },
                { "5M", -EINVAL, 0 },
                { "5y", -EINVAL, 0 },
                { "1.5d", -EINVAL, 0 },
                { "-5d", -EINVAL, 0 },
                { "+5d", -EINVAL, 0 },
                { "d", -EINVAL, 0 },
                { "", -EINVAL, 0 },
                { "   ", -EINVAL, 0 },
                { "5d junk", -EINVAL, 0 },
                { "5dd", -EINVAL, 0 },
                { "5days", -EINVAL, 0 },
                { "99999999999999999999d", -ERANGE, 0 },  /* strtoull overflow */
                { "106751991167d", 0, INT64_C(106751991167) * MSEC_PER_DAY },
                { "106751991168d", -ERANGE, 0 },          /* just over INT64_MAX ms */
                { "106751991167d106751991167d", -ERANGE, 0 }, /* sum overflow */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *why = NULL;
                msec_t got = -1;
                int r = util_parse_duration(cases[i].in, &got, &why);

                if (r != cases[i].r || (r == 0 && got != cases[i].want))
                        fail_msg("util_parse_duration(\"%s\") = %d, %lld; want %d, %lld",
                                 cases[i].in, r, (long long)got, cases[i].r,
                                 (long long)cases[i].want);
                if (r < 0)
                        assert_non_null(why);
                else
                        assert_null(why);
        }
}

static void test_parse_duration_m_is_ambiguous_message(void **state) {
        const char *why = NULL;
        msec_t d = 7;

        assert_int_equal(util_parse_duration("10m", &d, &why), -EINVAL);
        assert_non_null(strstr(why, "ambiguous"));
        assert_int_equal(d, 7); /* not written on failure */
}

static void test_parse_duration_null(void **state) {
        const char *why = NULL;
        msec_t d;
        assert_int_equal(util_parse_duration(NULL, &d, &why), -EINVAL);
        assert_int_equal(util_parse_duration("5d", &d, NULL), 0);
        assert_int_equal(d, 5 * MSEC_PER_DAY);
}

typedef struct SizeCase {
        const char *in;
        bool allow_percent;
        int r;
        bool is_percent;
        uint64_t bytes;
        double percent;
} SizeCase;

static void test_parse_size_table(void **state) {
        static const SizeCase cases[] = {
                { "123", false, 0, false, 123, 0 },
                { "123B", false, 0, false, 123, 0 },
                { "0", false, 0, false, 0, 0 },
                { "100K", false, 0, false, 100 * 1024, 0 },
                { "100k", false, 0, false, 100 * 1024, 0 },
                { "512M", false, 0, false, UINT64_C(512) << 20, 0 },
                { "512m", false, 0, false, UINT64_C(512) << 20, 0 },
                { "5G", false, 0, false, UINT64_C(5) << 30, 0 },
                { "1T", false, 0, false, UINT64_C(1) << 40, 0 },
                { "16777215T", false, 0, false, UINT64_C(16777215) << 40, 0 },
                { "16777216T", false, -ERANGE, false, 0, 0 }, /* 2^64 */
                { "18446744073709551615", false, 0, false, UINT64_MAX, 0 },
                { "18446744073709551616", false, -ERANGE, false, 0, 0 },
                { "1.5G", false, -EINVAL, false, 0, 0 },
                { "5GB", false, -EINVAL, false, 0, 0 },
                { "5P", false, -EINVAL, false, 0, 0 },
                { "5 G", false, -EINVAL, false, 0, 0 },
                { "G", false, -EINVAL, false, 0, 0 },
                { "-5G", false, -EINVAL, false, 0, 0 },
                { "", false, -EINVAL, false, 0, 0 },
                { "10%", false, -EINVAL, false, 0, 0 }, /* percent not allowed here */
                { "10%", true, 0, true, 0, 10 },
                { "12.5%", true, 0, true, 0, 12.5 },
                { "0%", true, 0, true, 0, 0 },
                { "100%", true, 0, true, 0, 100 },
                { "100.1%", true, -ERANGE, false, 0, 0 },
                { "101%", true, -ERANGE, false, 0, 0 },
                { "10%%", true, -EINVAL, false, 0, 0 },
                { "10% ", true, -EINVAL, false, 0, 0 },
                { "0x10%", true, -EINVAL, false, 0, 0 },
                { "1e1%", true, -EINVAL, false, 0, 0 },
                { "1.2.3%", true, -EINVAL, false, 0, 0 },
                { "5G%", true, -EINVAL, false, 0, 0 },
                { "5G", true, 0, false, UINT64_C(5) << 30, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const SizeCase *c = &cases[i];
                const char *why = NULL;
                SizeSpec s = {};
                int r = util_parse_size(c->in, c->allow_percent, &s, &why);

                if (r != c->r)
                        fail_msg("util_parse_size(\"%s\", %d) = %d (%s), want %d", c->in,
                                 c->allow_percent, r, why ? why : "-", c->r);
                if (r < 0) {
                        assert_non_null(why);
                        continue;
                }
                assert_true(s.is_set);
                if (s.is_percent != c->is_percent || s.bytes != c->bytes ||
                    s.percent != c->percent)
                        fail_msg("util_parse_size(\"%s\"): percent=%d bytes=%llu %%=%g", c->in,
                                 s.is_percent, (unsigned long long)s.bytes, s.percent);
        }
}

static void test_format_timestamp(void **state) {
        char buf[FORMAT_TIMESTAMP_MAX];
        assert_string_equal(util_format_timestamp(buf, sizeof buf, INT64_C(1798761600000)),
                            "2027-01-01T00:00:00Z");
        assert_string_equal(util_format_timestamp(buf, sizeof buf, 0), "1970-01-01T00:00:00Z");
        assert_string_equal(util_format_timestamp(buf, sizeof buf, -1), "1969-12-31T23:59:59Z");
        assert_string_equal(util_format_timestamp(buf, sizeof buf, 1999), "1970-01-01T00:00:01Z");
}

typedef struct BytesCase {
        uint64_t in;
        const char *want;
} BytesCase;

static void test_format_bytes_table(void **state) {
        static const BytesCase cases[] = {
                { 0, "0B" },
                { 1, "1B" },
                { 1023, "1023B" },
                { 1024, "1.0K" },
                { 1536, "1.5K" },
                { 10 * 1024 - 1, "9.9K" }, /* truncates, never rounds up */
                { 10 * 1024, "10K" },
                { UINT64_C(1) << 20, "1.0M" },
                { (UINT64_C(1) << 20) - 1, "1023K" },
                { (UINT64_C(52) << 30) / 10, "5.1G" },
                { UINT64_C(5) << 40, "5.0T" },
                { UINT64_MAX, "15E" },
        };
        char buf[FORMAT_BYTES_MAX];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (!streq(util_format_bytes(buf, sizeof buf, cases[i].in), cases[i].want))
                        fail_msg("util_format_bytes(%llu) = \"%s\", want \"%s\"",
                                 (unsigned long long)cases[i].in, buf, cases[i].want);
}

static void test_format_size_exact_table(void **state) {
        static const BytesCase cases[] = {
                { 0, "0B" },
                { 123, "123B" },
                { 1024, "1K" },
                { 1025, "1025B" },
                { UINT64_C(1536) << 20, "1536M" },
                { UINT64_C(5) << 30, "5G" },
                { UINT64_C(2048) << 30, "2T" },
                { UINT64_MAX, "18446744073709551615B" },
        };
        char buf[FORMAT_SIZE_EXACT_MAX];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                SizeSpec s;
                if (!streq(util_format_size_exact(buf, sizeof buf, cases[i].in), cases[i].want))
                        fail_msg("util_format_size_exact(%llu) = \"%s\", want \"%s\"",
                                 (unsigned long long)cases[i].in, buf, cases[i].want);
                /* what it prints parses back to the same number */
                assert_int_equal(util_parse_size(buf, false, &s, NULL), 0);
                assert_true(s.bytes == cases[i].in);
        }
}

typedef struct DurFmtCase {
        msec_t in;
        const char *coarse, *exact;
} DurFmtCase;

static void test_format_duration_table(void **state) {
        static const DurFmtCase cases[] = {
                { 0, "0s", "0s" },
                { 999, "0s", "999ms" },
                { 45 * MSEC_PER_SEC, "45s", "45s" },
                { 119 * MSEC_PER_SEC, "119s", "1min59s" },
                { 2 * MSEC_PER_MIN, "2min", "2min" },
                { 30 * MSEC_PER_MIN, "30min", "30min" },
                { 2 * MSEC_PER_HOUR, "2h", "2h" },
                { MSEC_PER_DAY, "24h", "1d" },
                { 36 * MSEC_PER_HOUR, "36h", "1d12h" },
                { 2 * MSEC_PER_DAY - 1, "47h", "1d23h59min59s999ms" },
                { 2 * MSEC_PER_DAY, "2d", "2d" },
                { 7 * MSEC_PER_DAY, "7d", "1w" },
                { 14 * MSEC_PER_DAY, "14d", "2w" },
                { 90 * MSEC_PER_DAY, "90d", "90d" },
                { 121 * MSEC_PER_DAY + 5 * MSEC_PER_HOUR, "121d", "121d5h" },
                { -3 * MSEC_PER_DAY, "-3d", "0s" },
        };
        char buf[FORMAT_DURATION_MAX];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                if (!streq(util_format_duration(buf, sizeof buf, cases[i].in), cases[i].coarse))
                        fail_msg("util_format_duration(%lld) = \"%s\", want \"%s\"",
                                 (long long)cases[i].in, buf, cases[i].coarse);
                if (!streq(util_format_duration_exact(buf, sizeof buf, cases[i].in),
                           cases[i].exact))
                        fail_msg("util_format_duration_exact(%lld) = \"%s\", want \"%s\"",
                                 (long long)cases[i].in, buf, cases[i].exact);
        }
}

static void test_format_duration_exact_roundtrips(void **state) {
        char buf[FORMAT_DURATION_MAX];
        msec_t d;

        for (msec_t x = 1; x < 400 * MSEC_PER_DAY; x = x * 3 + 7) {
                util_format_duration_exact(buf, sizeof buf, x);
                assert_int_equal(util_parse_duration(buf, &d, NULL), 0);
                assert_int_equal(d, x);
        }
}

static void test_format_duration_extremes(void **state) {
        char buf[FORMAT_DURATION_MAX];
        assert_string_equal(util_format_duration(buf, sizeof buf, INT64_MIN), "-106751991167d");
        assert_string_equal(util_format_duration(buf, sizeof buf, INT64_MAX), "106751991167d");
        /* a tiny buffer truncates without overflowing */
        char small[4];
        util_format_duration_exact(small, sizeof small, 36 * MSEC_PER_HOUR);
        assert_true(strlen(small) < sizeof small);
}

static void test_path_join(void **state) {
        _cleanup_free_ char *a = util_path_join("/a/b", "c");
        _cleanup_free_ char *b = util_path_join("/a/b/", "/c");
        _cleanup_free_ char *c = util_path_join("/", "x");
        _cleanup_free_ char *d = util_path_join("//", "x/y");
        assert_string_equal(a, "/a/b/c");
        assert_string_equal(b, "/a/b/c");
        assert_string_equal(c, "/x");
        assert_string_equal(d, "/x/y");
}

static void test_strbuf_append_printf_steal(void **state) {
        StrBuf b = {};
        _cleanup_free_ char *s = NULL;

        assert_int_equal(strbuf_append(&b, "ab", 2), 0);
        for (int i = 0; i < 100; i++)
                assert_int_equal(strbuf_printf(&b, "%d,", i), 0);
        assert_int_equal(b.len, strlen(b.buf));
        s = strbuf_steal(&b);
        assert_non_null(s);
        assert_true(strneq(s, "ab0,1,2,", 8));
        assert_non_null(strstr(s, "99,"));
        assert_null(b.buf);
        assert_int_equal(b.len, 0);
}

static void test_strbuf_steal_empty_is_empty_string(void **state) {
        StrBuf b = {};
        _cleanup_free_ char *s = strbuf_steal(&b);
        assert_non_null(s);
        assert_string_equal(s, "");
}

static void test_greedy_realloc_overflow(void **state) {
        void *p = NULL;
        size_t alloc = 0;
        assert_int_equal(util_greedy_realloc(&p, &alloc, SIZE_MAX / 2 + 1, 1), -ENOMEM);
        assert_int_equal(util_greedy_realloc(&p, &alloc, 10, 8), 0);
        assert_true(alloc >= 10);
        free(p);
}

static void test_strdup_or_null(void **state) {
        _cleanup_free_ char *s = util_strdup_or_null("x");
        assert_null(util_strdup_or_null(NULL));
        assert_string_equal(s, "x");
}

static int sign(int x) {
        return (x > 0) - (x < 0);
}

/* Ids compare ignoring ASCII case only, bytes as unsigned, like strcmp() otherwise. */
static void test_ascii_strcasecmp(void **state) {
        assert_int_equal(util_ascii_strcasecmp("0A1B-c2d3", "0a1b-C2D3"), 0);
        assert_int_equal(util_ascii_strcasecmp("", ""), 0);
        assert_true(util_ascii_strcasecmp("abc", "ABD") < 0);
        assert_true(util_ascii_strcasecmp("ABD", "abc") > 0);
        assert_true(util_ascii_strcasecmp("ab", "ABC") < 0); /* a prefix first */
        assert_true(util_ascii_strcasecmp("ABC", "ab") > 0);
        /* '_' (0x5f) sorts before 'a' after folding, as strcasecmp() in the C locale */
        assert_true(util_ascii_strcasecmp("_", "A") < 0);
        /* no locale: only A-Z fold; bytes past ASCII compare as unsigned */
        assert_true(util_ascii_strcasecmp("\xc9", "\xe9") < 0);
        assert_true(util_ascii_strcasecmp("\xc9", "z") > 0);
        /* the same signs as the C library's in the C locale, over a table */
        static const char *const w[] = { "", "a", "A", "b", "ab", "aB", "a-", "A_", "0", "9f",
                                         "F0", "f", "\x80", "~", "abc-DEF", "ABC-def1" };
        for (size_t i = 0; i < ELEMENTSOF(w); i++)
                for (size_t j = 0; j < ELEMENTSOF(w); j++) {
                        size_t li = strlen(w[i]), lj = strlen(w[j]);

                        assert_int_equal(sign(util_ascii_strcasecmp(w[i], w[j])),
                                         sign(strcasecmp(w[i], w[j])));
                        assert_int_equal(sign(util_ascii_strcasecmp_n(w[i], li, w[j], lj)),
                                         sign(strcasecmp(w[i], w[j])));
                        for (size_t n = 0; n < 4; n++)
                                assert_int_equal(sign(util_ascii_strncasecmp(w[i], w[j], n)),
                                                 sign(strncasecmp(w[i], w[j], n)));
                }
        /* a key ends at its length, not at a NUL */
        assert_int_equal(util_ascii_strcasecmp_n("ABCdef", 3, "abc", 3), 0);
        assert_true(util_ascii_strcasecmp_n("ABCdef", 4, "abc", 3) > 0);
        assert_true(util_ascii_strcasecmp_n("abc.x", 3, "ABCD", 4) < 0);
}

/* The stdio-free util_format_bytes()/util_format_duration() write what the snprintf() forms wrote, also
 * into short buffers. */
static void ref_bytes(char *buf, size_t n, uint64_t bytes) {
        static const char suffixes[] = "KMGTPE";
        unsigned shift = 10;
        size_t i = 0;

        if (bytes < 1024) {
                snprintf(buf, n, "%" PRIu64 "B", bytes);
                return;
        }
        while (i + 1 < sizeof(suffixes) - 1 && (bytes >> shift) >= 1024) {
                shift += 10;
                i++;
        }
        uint64_t whole = bytes >> shift;
        if (whole < 10)
                snprintf(buf, n, "%" PRIu64 ".%" PRIu64 "%c", whole,
                         ((bytes & ((UINT64_C(1) << shift) - 1)) * 10) >> shift, suffixes[i]);
        else
                snprintf(buf, n, "%" PRIu64 "%c", whole, suffixes[i]);
}

static void ref_duration(char *buf, size_t n, msec_t d) {
        const char *sign = "";
        if (d < 0) {
                sign = "-";
                d = d == INT64_MIN ? INT64_MAX : -d;
        }
        if (d >= 2 * MSEC_PER_DAY)
                snprintf(buf, n, "%s%" PRId64 "d", sign, d / MSEC_PER_DAY);
        else if (d >= 2 * MSEC_PER_HOUR)
                snprintf(buf, n, "%s%" PRId64 "h", sign, d / MSEC_PER_HOUR);
        else if (d >= 2 * MSEC_PER_MIN)
                snprintf(buf, n, "%s%" PRId64 "min", sign, d / MSEC_PER_MIN);
        else
                snprintf(buf, n, "%s%" PRId64 "s", sign, d / MSEC_PER_SEC);
}

static void test_format_matches_snprintf(void **state) {
        unsigned seed = 3;

        (void)state;
        for (int round = 0; round < 20000; round++) {
                uint64_t v = ((uint64_t)rand_r(&seed) << 33) ^ ((uint64_t)rand_r(&seed) << 11) ^
                             (uint64_t)rand_r(&seed);
                size_t n = (size_t)(rand_r(&seed) % 24);
                char a[32], b[32];
                msec_t d;

                v >>= rand_r(&seed) % 64;
                if (round == 0)
                        v = UINT64_MAX;
                memset(a, 'x', sizeof a);
                memset(b, 'x', sizeof b);
                util_format_bytes(a, n, v);
                ref_bytes(b, n, v);
                assert_memory_equal(a, b, sizeof a);
                memset(a, 'x', sizeof a);
                memset(b, 'x', sizeof b);
                d = (msec_t)(v >> 1) * (round % 2 ? -1 : 1);
                if (round == 2)
                        d = INT64_MIN;
                util_format_duration(a, n, d);
                ref_duration(b, n, d);
                assert_memory_equal(a, b, sizeof a);
        }
}

/* util_sort_by_runs(): the order of qsort_r() when each span key has one run; 0 and nothing changed
 * when a key has two. */
typedef struct RunItem {
        unsigned key, value, seq;
} RunItem;

static int run_span_cmp(const void *x, const void *y, void *userdata) {
        const RunItem *a = x, *b = y;
        (void)userdata;
        return a->key < b->key ? -1 : a->key > b->key;
}

static int run_cmp(const void *x, const void *y, void *userdata) {
        const RunItem *a = x, *b = y;
        int c = run_span_cmp(x, y, userdata);
        if (c != 0)
                return c;
        if (a->value != b->value)
                return a->value > b->value ? -1 : 1; /* descending, like "newest first" */
        return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void test_sort_by_runs(void **state) {
        unsigned seed = 7;

        (void)state;
        for (int round = 0; round < 200; round++) {
                RunItem a[300], b[300], orig[300];
                size_t n = 0, n_runs = 1 + (size_t)(rand_r(&seed) % 40);
                unsigned keys[40];

                /* distinct keys in a random order, each one run of random length */
                for (size_t r = 0; r < n_runs; r++) {
                        bool dup;
                        do {
                                keys[r] = (unsigned)(rand_r(&seed) % 1000);
                                dup = false;
                                for (size_t q = 0; q < r; q++)
                                        dup = dup || keys[q] == keys[r];
                        } while (dup);
                        for (size_t k = (size_t)(rand_r(&seed) % 7); k > 0 && n < 300; k--, n++)
                                a[n] = (RunItem){ keys[r], (unsigned)(rand_r(&seed) % 5), (unsigned)n };
                }
                memcpy(b, a, n * sizeof(RunItem));
                memcpy(orig, a, n * sizeof(RunItem));
                assert_int_equal(
                        util_sort_by_runs(a, n, sizeof(RunItem), run_span_cmp, run_cmp, NULL), 1);
                qsort_r(b, n, sizeof(RunItem), run_cmp, NULL);
                assert_memory_equal(a, b, n * sizeof(RunItem));
                /* a key in two places: refused, untouched */
                if (n >= 3 && orig[0].key != orig[1].key) {
                        memcpy(a, orig, n * sizeof(RunItem));
                        a[n - 1].key = a[0].key;
                        if (a[n - 2].key != a[0].key) {
                                memcpy(b, a, n * sizeof(RunItem));
                                assert_int_equal(util_sort_by_runs(a, n, sizeof(RunItem),
                                                                   run_span_cmp, run_cmp, NULL),
                                                 0);
                                assert_memory_equal(a, b, n * sizeof(RunItem));
                        }
                }
        }
}

/* log_errno_to_string() (thread-safe) says what strerror() said for every errno glibc knows, so
 * moving the scan's messages to it changed no byte of them. */
static void test_errno_to_string_matches_strerror(void **state) {
        unsigned known = 0;

        (void)state;
        for (int e = 1; e < 200; e++) {
                const char *want = strerror(e);

                if (strneq(want, "Unknown error", 13))
                        continue;
                known++;
                if (!streq(log_errno_to_string(e), want))
                        fail_msg("errno %d: '%s', strerror() says '%s'", e, log_errno_to_string(e), want);
        }
        assert_true(known > 100);
        assert_non_null(log_errno_to_string(100000)); /* unknown: a text, never NULL */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_duration_table),
                cmocka_unit_test(test_parse_duration_m_is_ambiguous_message),
                cmocka_unit_test(test_parse_duration_null),
                cmocka_unit_test(test_parse_size_table),
                cmocka_unit_test(test_format_timestamp),
                cmocka_unit_test(test_format_bytes_table),
                cmocka_unit_test(test_format_size_exact_table),
                cmocka_unit_test(test_format_duration_table),
                cmocka_unit_test(test_format_duration_exact_roundtrips),
                cmocka_unit_test(test_format_duration_extremes),
                cmocka_unit_test(test_path_join),
                cmocka_unit_test(test_strbuf_append_printf_steal),
                cmocka_unit_test(test_strbuf_steal_empty_is_empty_string),
                cmocka_unit_test(test_greedy_realloc_overflow),
                cmocka_unit_test(test_strdup_or_null),
                cmocka_unit_test(test_ascii_strcasecmp),
                cmocka_unit_test(test_sort_by_runs),
                cmocka_unit_test(test_format_matches_snprintf),
                cmocka_unit_test(test_errno_to_string_matches_strerror),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
