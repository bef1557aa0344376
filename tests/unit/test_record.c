/* test_record.c: tolerant JSONL reading on hostile input, as Qwen's jsonl-utils reads it. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "testdata.h"
#include "record.h"
#include "util.h"
#include "testskip.h"
#include "record.c" /* its static functions are tested here */

/* Read the last RECORD_TAIL_WINDOW bytes of a file of the given size. last_timestamp is that of
 * the last record with a parseable "timestamp" among the window's complete lines (its partial
 * first line skipped). The title is found as Qwen's readSessionTitleInfoFromFile() finds it: a
 * text scan of the whole window for "customTitle" on lines carrying "subtype":"custom_title",
 * last one wins, then (none in the tail and a larger file) the head window's complete lines; an
 * empty title is none. */
static int record_read_tail(int fd, uint64_t size, TailInfo *ret) {
        _cleanup_free_ char *buf = NULL, *title = NULL;
        TitleSource source = TITLE_NONE;
        uint64_t start = size > RECORD_TAIL_WINDOW ? size - RECORD_TAIL_WINDOW : 0;
        size_t got = 0;
        int r;

        assert(ret);
        *ret = (TailInfo){};
        if (size == 0)
                return 0;
        buf = malloc((size_t)MIN(size, (uint64_t)RECORD_TAIL_WINDOW));
        if (!buf)
                return -ENOMEM;

        r = record_read_at(fd, buf, (size_t)(size - start), start, &got);
        if (r >= 0)
                r = record_tail_window(buf, got, start, ret, &title, &source);
        if (r == 0 && start > 0) {
                r = record_read_at(fd, buf, RECORD_TAIL_WINDOW, 0, &got);
                if (r >= 0)
                        r = record_head_window_title(buf, got, &title, &source);
        }
        if (r < 0) {
                *ret = (TailInfo){};
                return r;
        }
        record_tail_take_title(ret, &title, source);
        return 0;
}

/* An anonymous file holding n bytes of data. */
static int mkfile(const void *data, size_t n) {
        int fd = memfd_create("test_record", MFD_CLOEXEC);
        size_t done = 0;

        assert_true(fd >= 0);
        while (done < n) {
                ssize_t k = write(fd, (const char *)data + done, n - done);
                assert_true(k > 0);
                done += (size_t)k;
        }
        return fd;
}

static int mkfile_str(const char *s) {
        return mkfile(s, strlen(s));
}

/* Collects the objects of a line, serialized, separated by '|'. */
typedef struct Collect {
        char out[4096];
        int n;
        int stop_after;
} Collect;

static int collect_cb(json_object *obj, void *userdata) {
        Collect *c = userdata;
        const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);

        if (c->n > 0)
                strncat(c->out, "|", sizeof(c->out) - strlen(c->out) - 1);
        strncat(c->out, s, sizeof(c->out) - strlen(c->out) - 1);
        c->n++;
        if (c->stop_after && c->n >= c->stop_after)
                return -ECANCELED;
        return 0;
}

static void test_record_parse_line_table(void **state) {
        static const struct {
                const char *line;
                size_t len; /* 0: strlen */
                int count;
                const char *want;
        } cases[] = {
                { "{\"a\":1}", 0, 1, "{\"a\":1}" },
                { "{\"a\":1}{\"b\":2}", 0, 2, "{\"a\":1}|{\"b\":2}" },       /* glued */
                { "{\"a\":1}\r", 0, 1, "{\"a\":1}" },                        /* CRLF */
                { "  \t{\"a\":1}  ", 0, 1, "{\"a\":1}" },
                { "\xef\xbb\xbf{\"a\":1}\xc2\xa0", 0, 1, "{\"a\":1}" },      /* BOM, NBSP: JS trim */
                { "[1]", 0, 0, "" },                                         /* non-object */
                { "\"x\"", 0, 0, "" },
                { "null", 0, 0, "" },
                { "123", 0, 0, "" },
                { "[{\"a\":1}]", 0, 0, "" },               /* parses as an array: no recovery */
                { "{\"a\":1} junk", 0, 1, "{\"a\":1}" },   /* trailing junk: fragment recovery */
                { "x{\"a\":\"}{\"}y{\"b\":2}", 0, 2, "{\"a\":\"}{\"}|{\"b\":2}" }, /* braces in strings */
                { "}}{\"a\":1}", 0, 1, "{\"a\":1}" },      /* unbalanced close braces reset */
                { "{\"a\":{\"b\":1}", 0, 0, "" },          /* truncated record */
                { "{\"a\":NaN}", 0, 0, "" },
                { "{'a':1}", 0, 0, "" },
                { "{\"a\":1,}", 0, 0, "" },
                { "{\"a\":01}", 0, 0, "" },
                { "{\"a\":1.}", 0, 0, "" },
                { "{\"a\":\"x\ty\"}", 0, 0, "" },          /* raw control character */
                { "{\"a\":\"\\x\"}", 0, 0, "" },           /* bad escape */
                { "{\"a\":1}/*c*/", 0, 1, "{\"a\":1}" },
                { "{\"a\":1,\"b\":2,\"a\":3}", 0, 1, "{\"a\":3,\"b\":2}" }, /* last value wins */
                { "{\"a\":1}\0", 8, 1, "{\"a\":1}" },      /* NUL after: recovery */
                { "\0{\"a\":1}", 8, 1, "{\"a\":1}" },
                { "{\"a\":\"\\u0041\\u00e9\\ud83d\\ude80\"}", 0, 1, "{\"a\":\"A\xc3\xa9\xf0\x9f\x9a\x80\"}" },
                { "{\"a\":\"\\ud800\"}", 0, 1, "{\"a\":\"\xef\xbf\xbd\"}" }, /* lone surrogate */
                { "{\"a\":\"\xff\"}", 0, 1, "{\"a\":\"\xef\xbf\xbd\"}" },   /* invalid UTF-8 */
                { "", 0, 0, "" },
                { "   ", 0, 0, "" },
                { "{}", 0, 1, "{}" },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Collect c = {};
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].line);
                int r = record_parse_line(cases[i].line, len, collect_cb, &c);

                if (r != cases[i].count || !streq(c.out, cases[i].want))
                        print_error("case %zu: r=%d out=%s\n", i, r, c.out);
                assert_int_equal(r, cases[i].count);
                assert_int_equal(c.n, cases[i].count);
                assert_string_equal(c.out, cases[i].want);
        }
}

static void test_record_parse_line_cb_error_stops(void **state) {
        Collect c = { .stop_after = 1 };
        const char *l = "{\"a\":1}{\"b\":2}{\"c\":3}";

        (void)state;
        assert_int_equal(record_parse_line(l, strlen(l), collect_cb, &c), -ECANCELED);
        assert_int_equal(c.n, 1);
}

static void test_record_parse_line_deep_nesting_refused(void **state) {
        size_t depth = 5000, n = 0;
        _cleanup_free_ char *s = malloc(2 * depth + 16);
        Collect c = {};

        (void)state;
        assert_non_null(s);
        n += (size_t)sprintf(s, "{\"a\":");
        for (size_t i = 0; i < depth; i++)
                s[n++] = '[';
        for (size_t i = 0; i < depth; i++)
                s[n++] = ']';
        s[n++] = '}';
        /* Refused rather than crashing json-c's recursive free. */
        assert_int_equal(record_parse_line(s, n, collect_cb, &c), 0);
}

static void test_record_json_parse_numbers(void **state) {
        json_object *o = NULL, *v;
        const char *s = "{\"big\":99999999999999999999,\"inf\":1e400,\"neg\":-12,\"f\":0.5}";

        (void)state;
        assert_int_equal(json_parse(s, strlen(s), &o), 0);
        assert_true(json_object_object_get_ex(o, "big", &v));
        assert_true(json_object_get_double(v) == 1e20);
        assert_true(json_object_object_get_ex(o, "inf", &v));
        assert_true(json_object_get_double(v) > 1e308);
        assert_true(json_object_object_get_ex(o, "neg", &v));
        assert_int_equal(json_object_get_int64(v), -12);
        assert_true(json_object_object_get_ex(o, "f", &v));
        assert_true(json_object_get_double(v) == 0.5);
        json_object_put(o);

        o = (json_object *)1;
        assert_int_equal(json_parse(" null ", 6, &o), 0);
        assert_null(o);
        assert_int_equal(json_parse("-", 1, &o), -EBADMSG);
        assert_int_equal(json_parse("", 0, &o), -EBADMSG);
        assert_int_equal(json_parse("tru", 3, &o), -EBADMSG);
}

/* ---- streaming */

typedef struct Lines {
        size_t n, n_truncated, total;
        uint64_t last_offset;
        char last[64];
        bool offsets_ok;
        const char *data; /* the file content, to check offsets */
} Lines;

static int lines_cb(const char *line, size_t len, uint64_t offset, bool truncated, void *userdata) {
        Lines *l = userdata;

        l->n++;
        l->n_truncated += truncated;
        l->total += len;
        l->last_offset = offset;
        snprintf(l->last, sizeof(l->last), "%.*s", (int)MIN(len, (size_t)60), line);
        if (l->data && memcmp(l->data + offset, line, len) != 0)
                l->offsets_ok = false;
        return 0;
}

static void test_record_for_each_line_basic(void **state) {
        const char *s = "a\r\n\nbc\nlast";
        _cleanup_close_ int fd = mkfile_str(s);
        Lines l = { .data = s, .offsets_ok = true };

        (void)state;
        assert_int_equal(record_for_each_line_at(fd, 100, lines_cb, &l), 0);
        assert_int_equal(l.n, 4); /* "a\r", "", "bc", "last" */
        assert_int_equal(l.total, 2 + 0 + 2 + 4);
        assert_string_equal(l.last, "last");
        assert_int_equal(l.last_offset, 7);
        assert_true(l.offsets_ok);
}

static void test_record_for_each_line_empty_file(void **state) {
        _cleanup_close_ int fd = mkfile("", 0);
        Lines l = {};

        (void)state;
        assert_int_equal(record_for_each_line_at(fd, 100, lines_cb, &l), 0);
        assert_int_equal(l.n, 0);
}

static void test_record_for_each_line_long_lines_truncated(void **state) {
        /* max_line 10: a 10-byte line passes whole, 11 bytes is cut, the next line is intact. */
        const char *s = "0123456789\n0123456789X\nshort\n";
        _cleanup_close_ int fd = mkfile_str(s);
        Lines l = { .data = s, .offsets_ok = true };

        (void)state;
        assert_int_equal(record_for_each_line_at(fd, 10, lines_cb, &l), 0);
        assert_int_equal(l.n, 3);
        assert_int_equal(l.n_truncated, 1);
        assert_string_equal(l.last, "short");
        assert_int_equal(l.last_offset, 23);
        assert_true(l.offsets_ok);
}

static void test_record_for_each_line_huge_line_bounded(void **state) {
        /* A 5 MiB line with no newline, then a short one: reported cut at max_line. */
        size_t big = 5u << 20;
        _cleanup_free_ char *s = malloc(big + 8);
        _cleanup_close_ int fd = -EBADF;
        Lines l = { .offsets_ok = true };

        (void)state;
        assert_non_null(s);
        memset(s, 'x', big);
        memcpy(s + big, "\nend", 4);
        fd = mkfile(s, big + 4);
        l.data = s;
        assert_int_equal(record_for_each_line_at(fd, 1u << 20, lines_cb, &l), 0);
        assert_int_equal(l.n, 2);
        assert_int_equal(l.n_truncated, 1);
        assert_int_equal(l.total, (1u << 20) + 3);
        assert_string_equal(l.last, "end");
        assert_int_equal(l.last_offset, big + 1);
        assert_true(l.offsets_ok);
}

static void test_record_for_each_line_many_lines_across_chunks(void **state) {
        StrBuf b = {};
        _cleanup_close_ int fd = -EBADF;
        Lines l = { .offsets_ok = true };
        size_t want = 0;

        (void)state;
        for (size_t i = 0; b.len < (3u << 20); i++, want++)
                assert_int_equal(strbuf_printf(&b, "{\"n\":%zu,\"pad\":\"%*s\"}\n", i, (int)(i % 97), ""), 0);
        fd = mkfile(b.buf, b.len);
        l.data = b.buf;
        assert_int_equal(record_for_each_line_at(fd, 1000, lines_cb, &l), 0);
        assert_int_equal(l.n, want);
        assert_int_equal(l.n_truncated, 0);
        assert_true(l.offsets_ok);
        strbuf_done(&b);
}

/* Each line as "offset:len:truncated:first bytes" on its own line of a StrBuf. */
static int log_cb(const char *line, size_t len, uint64_t offset, bool truncated, void *userdata) {
        return strbuf_printf(userdata, "%" PRIu64 ":%zu:%d:%.*s\n", offset, len, truncated,
                             (int)MIN(len, (size_t)16), line) < 0 ? -ENOMEM : 0;
}

static void test_record_for_each_line_mem_matches_stream(void **state) {
        static const struct {
                const char *text;
                size_t max_line;
        } cases[] = {
                { "", 100 },
                { "\n", 100 },
                { "\n\n", 100 },
                { "a\r\n\nbc\nlast", 100 },
                { "0123456789\n0123456789X\nshort\n", 10 },
                { "0123456789\n0123456789X\nshort\n0123456789XY", 10 },
                { "0123456789X", 10 },
                { "0123456789", 10 },
                { "abc\r\rdef\n\r\n", 3 },
        };
        StrBuf big = {};

        (void)state;
        for (size_t i = 0; i <= ELEMENTSOF(cases); i++) {
                StrBuf a = {}, b = {};
                const char *text;
                size_t n, max_line;
                _cleanup_close_ int fd = -EBADF;

                if (i < ELEMENTSOF(cases)) {
                        text = cases[i].text;
                        n = strlen(text);
                        max_line = cases[i].max_line;
                } else {
                        /* lines across the stream's 1 MiB chunks, and one longer than max_line */
                        for (size_t k = 0; big.len < (3u << 20); k++)
                                assert_int_equal(strbuf_printf(&big, "{\"n\":%zu,\"pad\":\"%*s\"}\n",
                                                               k, (int)(k % 97), ""), 0);
                        for (size_t k = 0; k < 3000; k++)
                                assert_int_equal(strbuf_append(&big, "y", 1), 0);
                        assert_int_equal(strbuf_append(&big, "\ntail", 5), 0);
                        text = big.buf;
                        n = big.len;
                        max_line = 1000;
                }
                fd = mkfile(text, n);
                assert_int_equal(record_for_each_line_at(fd, max_line, log_cb, &a), 0);
                assert_int_equal(record_for_each_line_mem(text, n, max_line, log_cb, &b), 0);
                assert_true(a.len > 0 || n == 0);
                assert_int_equal(a.len, b.len);
                assert_memory_equal(a.len ? a.buf : "", b.len ? b.buf : "", a.len);
                strbuf_done(&a);
                strbuf_done(&b);
        }
        strbuf_done(&big);
}

static void test_record_read_exact(void **state) {
        const char *s = "{\"a\":1}\n{\"b\":2}";
        _cleanup_close_ int fd = mkfile_str(s);
        char *t = (char *)"sentinel";

        (void)state;
        assert_int_equal(record_read_exact(fd, strlen(s), &t), 0);
        assert_non_null(t);
        assert_string_equal(t, s);
        free(t);
        /* the file is longer, or shorter, than the size the caller saw: not read */
        t = (char *)"sentinel";
        assert_int_equal(record_read_exact(fd, strlen(s) - 1, &t), 0);
        assert_null(t);
        t = (char *)"sentinel";
        assert_int_equal(record_read_exact(fd, strlen(s) + 1, &t), 0);
        assert_null(t);
}

static int count_cb(const char *line, size_t len, uint64_t offset, bool truncated,
                    void *userdata) {
        (void)line;
        (void)len;
        (void)offset;
        (void)truncated;
        (*(size_t *)userdata)++;
        return 0;
}

static void test_record_for_each_line_counts(void **state) {
        _cleanup_close_ int fd = mkfile_str("a\nb\n");
        size_t n = 0;

        (void)state;
        assert_int_equal(record_for_each_line_at(fd, 10, count_cb, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(record_for_each_line_at(fd, 0, count_cb, &n), -EINVAL);
}

/* ---- head */

#define REC(id, cwd, ts) "{\"sessionId\":\"" id "\",\"timestamp\":\"" ts "\",\"cwd\":\"" cwd "\",\"type\":\"user\"}"
#define ID "aefd2a51-f2fc-4eed-a29c-91292bb022bf"

static void test_record_read_head_normal(void **state) {
        _cleanup_close_ int fd = mkfile_str(REC(ID, "/srv/demo", "2026-11-30T06:10:39.123Z") "\n{\"x\":1}\n");
        HeadInfo h = {};
        const char *why = NULL;

        (void)state;
        assert_int_equal(record_read_head(fd, &h, &why), 0);
        assert_string_equal(h.session_id, ID);
        assert_string_equal(h.cwd, "/srv/demo");
        assert_int_equal(h.timestamp, INT64_C(1796019039123));
        record_head_info_done(&h);
        assert_null(h.session_id);
}

static void test_record_read_head_errors(void **state) {
        static const struct {
                const char *content;
                int r;
        } cases[] = {
                { "", -ENODATA },
                { "\n\n  \n", -ENODATA },
                { "[1]\n", -EBADMSG },
                { "\"x\"", -EBADMSG },
                { "garbage\n{\"trunc", -EBADMSG },
                { "{\"sessionId\":1}", 0 },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_close_ int fd = mkfile_str(cases[i].content);
                HeadInfo h = {};
                const char *why = NULL;
                int r = record_read_head(fd, &h, &why);

                if (r != cases[i].r)
                        print_error("case %zu: r=%d why=%s\n", i, r, why);
                assert_int_equal(r, cases[i].r);
                if (r < 0)
                        assert_non_null(why);
                else
                        assert_null(h.session_id); /* not a string */
                record_head_info_done(&h);
        }
}

static void test_record_read_head_skips_unparseable_lines(void **state) {
        /* Qwen's newer reader skips blank and unparseable lines and non-objects. */
        _cleanup_close_ int fd = mkfile_str("\n[1]\nnot json\n" REC(ID, "/a", "x") "\n");
        HeadInfo h = {};

        (void)state;
        assert_int_equal(record_read_head(fd, &h, NULL), 0);
        assert_string_equal(h.session_id, ID);
        assert_int_equal(h.timestamp, 0); /* unparseable */
        record_head_info_done(&h);
}

static void test_record_read_head_glued_first_wins(void **state) {
        _cleanup_close_ int fd = mkfile_str(REC(ID, "/first", "2026-01-01") REC("other", "/second", "2026-01-02") "\r\n");
        HeadInfo h = {};

        (void)state;
        assert_int_equal(record_read_head(fd, &h, NULL), 0);
        assert_string_equal(h.cwd, "/first");
        record_head_info_done(&h);
}

static void test_record_read_head_invalid_utf8_and_nul(void **state) {
        static const char s[] = "{\"sessionId\":\"" ID "\",\"cwd\":\"/a\xff\"}\0\n";
        _cleanup_close_ int fd = mkfile(s, sizeof(s) - 1);
        HeadInfo h = {};

        (void)state;
        assert_int_equal(record_read_head(fd, &h, NULL), 0);
        assert_string_equal(h.cwd, "/a\xef\xbf\xbd");
        record_head_info_done(&h);
}

static void test_record_read_head_line_over_1mib(void **state) {
        size_t big = RECORD_HEAD_MAX + 10;
        _cleanup_free_ char *s = malloc(big + 64);
        HeadInfo h = {};
        const char *why = NULL;

        (void)state;
        assert_non_null(s);
        /* starts like a record: identity unavailable */
        memset(s, 'x', big);
        s[0] = '{';
        memcpy(s + big, "\n" REC(ID, "/a", "x") "\n", 1);
        {
                _cleanup_close_ int fd = mkfile(s, big);
                assert_int_equal(record_read_head(fd, &h, &why), -E2BIG);
                assert_non_null(why);
        }
        /* does not start like a record: Qwen finds no record */
        s[0] = 'x';
        {
                _cleanup_close_ int fd = mkfile(s, big);
                assert_int_equal(record_read_head(fd, &h, &why), -EBADMSG);
        }
}

/* The first line at exactly RECORD_HEAD_MAX bytes (ASCII: as many UTF-16 units), the file's
 * last (no newline): read, its record found; one byte more: -E2BIG. */
static void test_record_read_head_line_at_max_and_one_past(void **state) {
        const char *pre = "{\"sessionId\":\"" ID "\",\"cwd\":\"/a\",\"pad\":\"";
        _cleanup_free_ char *s = malloc(RECORD_HEAD_MAX + 2);

        (void)state;
        assert_non_null(s);
        for (size_t n = RECORD_HEAD_MAX; n <= RECORD_HEAD_MAX + 1; n++) {
                _cleanup_close_ int fd = -EBADF;
                HeadInfo h = {};

                memset(s, 'x', n);
                memcpy(s, pre, strlen(pre));
                memcpy(s + n - 2, "\"}", 2);
                fd = mkfile(s, n);
                if (n == RECORD_HEAD_MAX) {
                        assert_int_equal(record_read_head(fd, &h, NULL), 0);
                        assert_string_equal(h.cwd, "/a");
                } else
                        assert_int_equal(record_read_head(fd, &h, NULL), -E2BIG);
                record_head_info_done(&h);
        }
}

static void test_record_read_head_counts_utf16_units(void **state) {
        /* 1.5 MiB of bytes but 0.5 Mi UTF-16 units: Qwen reads it. */
        size_t chars = 512 * 1024;
        StrBuf b = {};
        _cleanup_close_ int fd = -EBADF;
        HeadInfo h = {};

        (void)state;
        assert_int_equal(strbuf_printf(&b, "{\"sessionId\":\"%s\",\"cwd\":\"/", ID), 0);
        for (size_t i = 0; i < chars; i++)
                assert_int_equal(strbuf_append(&b, "\xe6\x97\xa5", 3), 0);
        assert_int_equal(strbuf_append(&b, "\"}\n", 3), 0);
        fd = mkfile(b.buf, b.len);
        assert_int_equal(record_read_head(fd, &h, NULL), 0);
        assert_int_equal(strlen(h.cwd), 1 + 3 * chars);
        record_head_info_done(&h);
        strbuf_done(&b);
}

/* Every case of tests/data/record against Qwen's own readFirstMaintainableRecord(). */
static void test_record_read_head_qwen_golden(void **state) {
        _cleanup_free_ char *golden = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        unsigned n = 0;

        (void)state;
        golden = test_data_path("record/golden.jsonl");
        f = fopen(golden, "re");
        assert_non_null(f);
        while (getline(&line, &cap, f) > 0) {
                json_object *g = json_tokener_parse(line), *v;
                const char *name, *result, *want_sid = NULL, *want_cwd = NULL;
                _cleanup_free_ char *path = NULL;
                _cleanup_close_ int fd = -EBADF;
                HeadInfo h = {};
                const char *why = NULL;
                int r;

                assert_non_null(g);
                assert_true(json_object_object_get_ex(g, "case", &v));
                name = json_object_get_string(v);
                assert_true(json_object_object_get_ex(g, "result", &v));
                result = json_object_get_string(v);
                if (json_object_object_get_ex(g, "sessionId", &v) && v)
                        want_sid = json_object_get_string(v);
                if (json_object_object_get_ex(g, "cwd", &v) && v)
                        want_cwd = json_object_get_string(v);

                path = util_strprintf("%s/cases/%s.jsonl", fixture_testdata("record"), name);
                assert_non_null(path);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                r = record_read_head(fd, &h, &why);
                if (streq(result, "record")) {
                        if (r != 0)
                                print_error("%s: r=%d (%s)\n", name, r, why);
                        assert_int_equal(r, 0);
                        if (want_sid)
                                assert_string_equal(h.session_id, want_sid);
                        else
                                assert_null(h.session_id);
                        if (want_cwd)
                                assert_string_equal(h.cwd, want_cwd);
                        else
                                assert_null(h.cwd);
                } else if (streq(result, "none")) {
                        if (r != -ENODATA && r != -EBADMSG)
                                print_error("%s: r=%d\n", name, r);
                        assert_true(r == -ENODATA || r == -EBADMSG);
                } else
                        assert_int_equal(r, -E2BIG);
                record_head_info_done(&h);
                json_object_put(g);
                n++;
        }
        assert_true(n >= 21);
}

/* ---- tail */

#define TITLE(t, src) "{\"type\":\"system\",\"subtype\":\"custom_title\",\"timestamp\":\"2026-11-30T00:00:00Z\",\"systemPayload\":{\"customTitle\":\"" t "\"" src "}}\n"

static void test_record_read_tail_titles(void **state) {
        static const struct {
                const char *content;
                const char *title;
                TitleSource source;
        } cases[] = {
                { TITLE("Mine", ",\"titleSource\":\"manual\""), "Mine", TITLE_MANUAL },
                { TITLE("Auto", ",\"titleSource\":\"auto\""), "Auto", TITLE_AUTO },
                { TITLE("Legacy", ""), "Legacy", TITLE_MANUAL },
                { TITLE("Odd", ",\"titleSource\":\"robot\""), "Odd", TITLE_MANUAL },
                { TITLE("First", "") TITLE("Second", ",\"titleSource\":\"auto\""), "Second", TITLE_AUTO },
                { TITLE("", ""), NULL, TITLE_NONE },
                { "{\"type\":\"user\",\"customTitle\":\"no\"}\n", NULL, TITLE_NONE },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_close_ int fd = mkfile_str(cases[i].content);
                TailInfo t = {};

                assert_int_equal(record_read_tail(fd, strlen(cases[i].content), &t), 0);
                if (cases[i].title) {
                        assert_non_null(t.title);
                        assert_string_equal(t.title, cases[i].title);
                } else
                        assert_null(t.title);
                assert_int_equal(t.title_source, cases[i].source);
                assert_false(t.incomplete);
                record_tail_info_done(&t);
        }
}

static void test_record_read_tail_last_timestamp_and_incomplete(void **state) {
        const char *s = "{\"timestamp\":\"2026-11-30T00:00:01Z\"}\n"
                        "{\"timestamp\":\"2026-11-30T00:00:02Z\"}\n"
                        "{\"timestamp\":\"bad\"}\n"
                        "{\"timestamp\":\"2026-11-30T00:00:03Z\",\"trunc";
        _cleanup_close_ int fd = mkfile_str(s);
        TailInfo t = {};

        (void)state;
        assert_int_equal(record_read_tail(fd, strlen(s), &t), 0);
        assert_int_equal(t.last_timestamp, INT64_C(1795996802000));
        assert_true(t.incomplete);
        assert_null(t.title);
        record_tail_info_done(&t);
}

/* The last timestamp is searched from the end: lines without one (or unparseable, glued, blank,
 * non-object) are passed over, a glued line's last timestamped object wins, and the window's
 * partial first line never counts. */
static void test_record_read_tail_last_timestamp_backwards(void **state) {
        static const struct {
                const char *text;
                int64_t want;
        } cases[] = {
                { "{\"timestamp\":\"2026-11-30T00:00:01Z\"}\n{\"type\":\"x\"}\n\n  \n[1]\n", INT64_C(1795996801000) },
                { "{\"timestamp\":\"2026-11-30T00:00:01Z\"}\n{\"timestamp\":\"2026-11-30T00:00:02Z\"}{\"timestamp\":\"2026-11-30T00:00:03Z\"}{\"a\":1}\n", INT64_C(1795996803000) },
                { "{\"timestamp\":\"2026-11-30T00:00:01Z\"}\n{\"timestamp\":5}\n{\"timestamp\":\"2026-11-30T00:00:04Z\",}\n", INT64_C(1795996801000) },
                { "{\"timestamp\":\"2026-11-30T00:00:01Z\"}\n{\"\\u0074imestamp\":\"2026-11-30T00:00:06Z\"}\n", INT64_C(1795996806000) },
                { "{\"timestamp\":\"2026-11-30T00:00:07Z\",\"timestamp\":\"x\"}\n", 0 },
                { "\n\n", 0 },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_close_ int fd = mkfile_str(cases[i].text);
                TailInfo t = {};

                assert_int_equal(record_read_tail(fd, strlen(cases[i].text), &t), 0);
                assert_int_equal(t.last_timestamp, cases[i].want);
                record_tail_info_done(&t);
        }
}

/* A window cut through a line: the timestamp of that partial line is not used. */
static void test_record_read_tail_partial_line_ignored(void **state) {
        StrBuf b = {};
        _cleanup_close_ int fd = -EBADF;
        TailInfo t = {};

        (void)state;
        assert_int_equal(strbuf_printf(&b, "{\"timestamp\":\"2026-11-30T00:00:01Z\"}\n"), 0);
        /* one line longer than the window, the only one with a timestamp near its end */
        assert_int_equal(strbuf_printf(&b, "{\"pad\":\"%*s\",\"timestamp\":\"2026-11-30T00:00:09Z\"}\n",
                                       (int)RECORD_TAIL_WINDOW, ""), 0);
        fd = mkfile(b.buf, b.len);
        assert_int_equal(record_read_tail(fd, b.len, &t), 0);
        assert_int_equal(t.last_timestamp, 0);
        assert_false(t.incomplete);
        record_tail_info_done(&t);
        strbuf_done(&b);
}

/* First records past the first 4 KiB, or on a first line longer than that, are read like the
 * others (the quick first look must not decide them). */
static void test_record_read_head_beyond_first_look(void **state) {
        StrBuf b = {};
        HeadInfo h = {};
        const char *why = NULL;

        (void)state;
        for (size_t pad = 4000; pad <= 9000; pad += 1000) {
                _cleanup_close_ int fd = -EBADF;

                b.len = 0;
                /* pad bytes of non-records first, then a record whose line crosses 4 KiB */
                assert_int_equal(strbuf_printf(&b, "[%*s]\n{\"sessionId\":\"s%zu\",\"pad\":\"%*s\"}\n",
                                               (int)pad, "", pad, 3000, ""), 0);
                fd = mkfile(b.buf, b.len);
                assert_int_equal(record_read_head(fd, &h, &why), 0);
                assert_non_null(h.session_id);
                assert_true(strncmp(h.session_id, "s", 1) == 0 &&
                            (size_t)atoi(h.session_id + 1) == pad);
                record_head_info_done(&h);
        }
        strbuf_done(&b);
}

/* record_memmem() finds exactly what memmem() finds, at every alignment and near both ends. */
static void test_record_memmem_matches_memmem(void **state) {
        static const char *const needles[] = { "\"customTitle\"", "ui_telemetry", "\\u00", "ab", "abc",
                                               "aaaa", "\"subtype\":\"custom_title\"" };
        char text[400];
        unsigned seed = 1;

        (void)state;
        for (size_t round = 0; round < 40000; round++) {
                const char *needle = needles[round % ELEMENTSOF(needles)];
                size_t m = strlen(needle), n = (size_t)(rand_r(&seed) % (int)sizeof(text));

                for (size_t i = 0; i < n; i++)
                        text[i] = "a\"bcu_\\0"[rand_r(&seed) % 8];
                if (n >= m && rand_r(&seed) % 2)
                        memcpy(text + (size_t)rand_r(&seed) % (n - m + 1), needle, m);
                assert_ptr_equal(record_memmem(text, n, needle, m), memmem(text, n, needle, m));
                assert_ptr_equal(record_memmem_portable(text, n, needle, m),
                                 memmem(text, n, needle, m));
        }
}

static void test_record_read_tail_empty_file(void **state) {
        _cleanup_close_ int fd = mkfile("", 0);
        TailInfo t = {};

        (void)state;
        assert_int_equal(record_read_tail(fd, 0, &t), 0);
        assert_int_equal(t.last_timestamp, 0);
        assert_null(t.title);
        assert_false(t.incomplete);
}

static void test_record_read_tail_title_in_head_window(void **state) {
        /* Title only near the start of a file larger than the tail window: found in the head. */
        StrBuf b = {};
        _cleanup_close_ int fd = -EBADF;
        TailInfo t = {};

        (void)state;
        assert_int_equal(strbuf_printf(&b, "%s", TITLE("Early", ",\"titleSource\":\"manual\"")), 0);
        while (b.len < 3 * RECORD_TAIL_WINDOW)
                assert_int_equal(strbuf_printf(&b, "{\"timestamp\":\"2026-11-30T00:00:05Z\",\"pad\":\"%64s\"}\n", ""), 0);
        fd = mkfile(b.buf, b.len);
        assert_int_equal(record_read_tail(fd, b.len, &t), 0);
        assert_non_null(t.title);
        assert_string_equal(t.title, "Early");
        assert_int_equal(t.title_source, TITLE_MANUAL);
        assert_int_equal(t.last_timestamp, INT64_C(1795996805000));
        record_tail_info_done(&t);
        strbuf_done(&b);
}

/* A title line cut by the tail window's start: Qwen scans the window's text, partial first line
 * included, and finds the title when the marker survived the cut. */
static void test_record_read_tail_title_in_partial_first_line(void **state) {
        static const struct {
                size_t cut; /* bytes of the title line before the window */
                const char *want;
        } cases[] = {
                { 5, "Cut" },  /* marker and title in the window */
                { 60, NULL },  /* "subtype":"custom_title" cut off: not a title line */
        };
        size_t title_len = strlen(TITLE("Cut", ""));

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                StrBuf b = {};
                _cleanup_close_ int fd = -EBADF;
                TailInfo t = {};
                size_t need = RECORD_TAIL_WINDOW - (title_len - cases[i].cut);
                char *pad;

                /* filler first (so the head window has no title), the title, then filler */
                while (b.len < 2 * RECORD_TAIL_WINDOW)
                        assert_int_equal(strbuf_printf(&b, "{\"n\":\"%100s\"}\n", ""), 0);
                assert_int_equal(strbuf_printf(&b, "%s", TITLE("Cut", "")), 0);
                pad = malloc(need);
                assert_non_null(pad);
                memset(pad, ' ', need);
                pad[0] = '{';
                pad[1] = '}';
                pad[need - 1] = '\n';
                assert_int_equal(strbuf_append(&b, pad, need), 0);
                free(pad);
                fd = mkfile(b.buf, b.len);
                assert_int_equal(record_read_tail(fd, b.len, &t), 0);
                if (cases[i].want) {
                        assert_non_null(t.title);
                        assert_string_equal(t.title, cases[i].want);
                        assert_int_equal(t.title_source, TITLE_MANUAL);
                } else {
                        assert_null(t.title);
                        assert_int_equal(t.title_source, TITLE_NONE);
                }
                record_tail_info_done(&t);
                strbuf_done(&b);
        }
}

/* Every case of tests/data/record/titles against Qwen's readSessionTitleInfoFromFile(). */
static void test_record_read_tail_qwen_title_golden(void **state) {
        _cleanup_free_ char *golden = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        unsigned n = 0;

        (void)state;
        golden = test_data_path("record/titles-golden.jsonl");
        f = fopen(golden, "re");
        assert_non_null(f);
        while (getline(&line, &cap, f) > 0) {
                json_object *g = json_tokener_parse(line), *v;
                const char *name, *want = NULL, *source = NULL;
                _cleanup_free_ char *path = NULL;
                _cleanup_close_ int fd = -EBADF;
                struct stat st;
                TailInfo t = {};

                assert_non_null(g);
                assert_true(json_object_object_get_ex(g, "case", &v));
                name = json_object_get_string(v);
                if (json_object_object_get_ex(g, "title", &v) && v)
                        want = json_object_get_string(v);
                if (json_object_object_get_ex(g, "source", &v) && v)
                        source = json_object_get_string(v);
                path = util_strprintf("%s/titles/%s.jsonl", fixture_testdata("record"), name);
                assert_non_null(path);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_int_equal(fstat(fd, &st), 0);
                assert_int_equal(record_read_tail(fd, (uint64_t)st.st_size, &t), 0);
                if ((want == NULL) != (t.title == NULL) || (want && !streq(want, t.title)))
                        print_error("%s: got %s want %s\n", name, t.title, want);
                if (want) {
                        assert_non_null(t.title);
                        assert_string_equal(t.title, want);
                        /* Qwen: "auto" is automatic; "manual" and absent (legacy) are a person's */
                        assert_int_equal(t.title_source, source && streq(source, "auto") ? TITLE_AUTO : TITLE_MANUAL);
                } else {
                        assert_null(t.title);
                        assert_int_equal(t.title_source, TITLE_NONE);
                }
                record_tail_info_done(&t);
                json_object_put(g);
                n++;
        }
        assert_true(n >= 17);
}

/* The scanner's validation (json_members with validate) accepts exactly what the full
 * parser accepts, on long strings with specials (quotes, backslashes, raw control bytes, escapes,
 * UTF-8) at every distance from the 32- and 8-byte blocks of the fast paths. */
static void test_record_json_members_validates_long_strings_as_json_parse(void **state) {
        static const char *const pieces[] = { "a", "b", "é", "\\n", "\\\"", "\\\\", "\\u00e9",
                                              "\\x", "\\u12", "\n", "\t", "\x01", "\x1f", " ",
                                              "~", "\x7f" };
        static const char *const keys[] = { "k" };
        unsigned seed = 11;
        size_t agree_ok = 0, agree_bad = 0;

        (void)state;
        for (int round = 0; round < 20000; round++) {
                char text[1200];
                size_t n = 0, len = (size_t)(rand_r(&seed) % 300);
                JsonSpan span;
                json_object *o = NULL;
                int a, b;

                n += (size_t)snprintf(text, sizeof text, "{\"k\":\"");
                for (size_t k = 0; k < len && n < 1100; k++) {
                        /* mostly plain text, now and then a special piece */
                        const char *piece = rand_r(&seed) % 40 ? "x" : pieces[rand_r(&seed) % ELEMENTSOF(pieces)];
                        size_t m = strlen(piece);
                        memcpy(text + n, piece, m);
                        n += m;
                }
                n += (size_t)snprintf(text + n, sizeof text - n, "\",\"z\":1}");
                a = json_members(text, n, true, keys, 1, &span) >= 0;
                b = json_parse(text, n, &o) >= 0;
                json_object_put(o);
                if (a != b)
                        fail_msg("validator %d, parser %d on %.*s", a, b, (int)n, text);
                if (a)
                        agree_ok++;
                else
                        agree_bad++;
        }
        assert_true(agree_ok > 1000);
        assert_true(agree_bad > 1000);
}

/* ---- record_read_ends(): the same results as record_read_head() + record_read_tail() */

static void strbuf_add_filler(StrBuf *b, size_t target) {
        /* user records of about 1000 bytes until the text is about target bytes long */
        while (b->len + 1100 < target) {
                assert_int_equal(strbuf_printf(b, "{\"type\":\"user\",\"timestamp\":\"2026-11-29T00:00:%02zuZ\",\"message\":\"", b->len % 60), 0);
                for (size_t k = 0; k < 950; k++)
                        assert_int_equal(strbuf_printf(b, "%c", 'a' + (int)(k % 26)), 0);
                assert_int_equal(strbuf_printf(b, "\"}\n"), 0);
        }
        while (b->len + 1 < target)
                assert_int_equal(strbuf_printf(b, " "), 0);
        if (b->len < target)
                assert_int_equal(strbuf_printf(b, "\n"), 0);
}

static bool streq_ptr(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void assert_ends_match(const char *text, size_t n, char *scratch) {
        _cleanup_close_ int fd = mkfile(text, n);
        HeadInfo h = {};
        TailInfo t = {};
        RecordEnds e;
        const char *why = NULL;
        int hr, tr = -ENODATA;

        hr = record_read_head(fd, &h, &why);
        if (n > 0)
                tr = record_read_tail(fd, n, &t);
        for (int want_title = 0; want_title < 2; want_title++) {
                assert_int_equal(record_read_ends(fd, n, want_title, scratch, &e), 0);
                assert_int_equal(e.head_r, hr);
                if (hr < 0)
                        assert_string_equal(e.head_why, why);
                else {
                        assert_true(streq_ptr(e.head.session_id, h.session_id));
                        assert_true(streq_ptr(e.head.cwd, h.cwd));
                        assert_int_equal(e.head.timestamp, h.timestamp);
                }
                assert_int_equal(e.tail_r < 0, tr < 0);
                if (tr >= 0) {
                        assert_int_equal(e.tail.last_timestamp, t.last_timestamp);
                        assert_int_equal(e.tail.incomplete, t.incomplete);
                        if (want_title) {
                                assert_true(streq_ptr(e.tail.title, t.title));
                                assert_int_equal(e.tail.title_source, t.title_source);
                        } else {
                                assert_null(e.tail.title);
                                assert_int_equal(e.tail.title_source, TITLE_NONE);
                        }
                }
                record_head_info_done(&e.head);
                record_tail_info_done(&e.tail);
        }
        record_head_info_done(&h);
        record_tail_info_done(&t);
}

static void test_record_read_ends_matches_head_and_tail(void **state) {
        static const char *const firsts[] = {
                "",
                "{\"sessionId\":\"s1\",\"cwd\":\"/w\",\"timestamp\":\"2026-11-28T00:00:00Z\"}\n",
                "\n  \nnot json\n{\"sessionId\":\"s2\",\"cwd\":\"/w\"}{\"x\":1}\n",
                "garbage without an object\n",
                "LONG", /* a first record longer than the quick look and than the window */
                "HUGE",
        };
        static const size_t sizes[] = { 0, 3000, 30000, 65535, 65536, 65537, 70000, 140000 };
        static const char *const titles[] = { NULL, "head", "tail", "empty-tail", "both", "edge" };
        _cleanup_free_ char *scratch = malloc(RECORD_ENDS_SCRATCH);
        size_t cases = 0;

        (void)state;
        assert_non_null(scratch);
        for (size_t f = 0; f < ELEMENTSOF(firsts); f++)
                for (size_t z = 0; z < ELEMENTSOF(sizes); z++)
                        for (size_t ti = 0; ti < ELEMENTSOF(titles); ti++)
                                for (int complete = 0; complete < 2; complete++) {
                                        _cleanup_(strbuf_done) StrBuf b = {};
                                        const char *tt = titles[ti];

                                        if (streq(firsts[f], "LONG") || streq(firsts[f], "HUGE")) {
                                                size_t len = streq(firsts[f], "LONG") ? 6000 : 80000;
                                                assert_int_equal(strbuf_printf(&b, "{\"sessionId\":\"s3\",\"cwd\":\"/w\",\"pad\":\""), 0);
                                                for (size_t k = 0; k < len; k++)
                                                        assert_int_equal(strbuf_printf(&b, "p"), 0);
                                                assert_int_equal(strbuf_printf(&b, "\"}\n"), 0);
                                        } else
                                                assert_int_equal(strbuf_printf(&b, "%s", firsts[f]), 0);
                                        if (tt && (streq(tt, "head") || streq(tt, "both")))
                                                assert_int_equal(strbuf_printf(&b, TITLE("Head", "")), 0);
                                        if (tt && streq(tt, "edge")) {
                                                /* a title line that the tail window cuts */
                                                strbuf_add_filler(&b, sizes[z] > 65536 + 40 ? sizes[z] - 65536 - 40 : 0);
                                                assert_int_equal(strbuf_printf(&b, TITLE("Edge", "")), 0);
                                        }
                                        strbuf_add_filler(&b, sizes[z] > 300 ? sizes[z] - 300 : 0);
                                        if (tt && (streq(tt, "tail") || streq(tt, "both")))
                                                assert_int_equal(strbuf_printf(&b, TITLE("Tail", ",\"titleSource\":\"auto\"")), 0);
                                        if (tt && streq(tt, "empty-tail"))
                                                assert_int_equal(strbuf_printf(&b, TITLE("", "")), 0);
                                        if (z % 3 == 1) {
                                                /* a last line longer than the small tail window */
                                                assert_int_equal(strbuf_printf(&b, "{\"timestamp\":\"2026-11-30T00:00:08Z\",\"pad\":\""), 0);
                                                for (size_t k = 0; k < 5000; k++)
                                                        assert_int_equal(strbuf_printf(&b, "q"), 0);
                                                assert_int_equal(strbuf_printf(&b, "\"}\n"), 0);
                                        }
                                        if (z % 3 == 2)
                                                /* trailing lines without a timestamp */
                                                for (size_t k = 0; k < 60; k++)
                                                        assert_int_equal(strbuf_printf(&b, "{\"type\":\"x\",\"n\":%zu,\"pad\":\"%080zu\"}\n", k, k), 0);
                                        if (ti % 2 == 0 || z % 3 != 2)
                                                assert_int_equal(strbuf_printf(&b, "{\"timestamp\":\"2026-11-30T00:00:09Z\"}%s",
                                                                               complete ? "\n" : ""), 0);
                                        else if (!complete)
                                                assert_int_equal(strbuf_printf(&b, "{\"type\":\"x\""), 0);
                                        assert_ends_match(b.buf ? b.buf : "", b.len, scratch);
                                        cases++;
                                }
        /* and the empty file */
        assert_ends_match("", 0, scratch);
        assert_true(cases > 500);
}

/* ---- the page cache: record_read_ends() says when its first read waited for the disk,
 * record_ends_advise() advises what it will read unless the cache holds it */

/* Drop the n bytes of fd from the page cache: false when they stay (mincore(), which reads
 * nothing, unlike a read with RWF_NOWAIT, which starts reading the pages it did not find). */
static bool drop_cache(int fd, size_t n) {
        size_t pages = (n + 4095) / 4096;
        _cleanup_free_ unsigned char *vec = calloc(pages, 1);
        void *m;
        bool cold = true;

        assert_non_null(vec);
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
        assert_true(m != MAP_FAILED);
        assert_int_equal(mincore(m, n, vec), 0);
        for (size_t i = 0; i < pages; i++)
                cold = cold && !(vec[i] & 1);
        munmap(m, n);
        return cold;
}

/* A file on disk holding text, written out and its pages dropped from the page cache: -1 when
 * they stay (a filesystem without a page cache of its own, tmpfs: the caller SKIPs). */
static int mkfile_cold(const char *text, size_t n) {
        const char *dir = getenv("TMPDIR") ?: "/var/tmp";
        _cleanup_free_ char *path = util_strprintf("%s/test_record.XXXXXX", dir);
        int fd;

        assert_non_null(path);
        fd = mkostemp(path, O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(unlink(path), 0);
        for (size_t done = 0; done < n;) {
                ssize_t k = write(fd, text + done, n - done);
                assert_true(k > 0);
                done += (size_t)k;
        }
        assert_int_equal(fdatasync(fd), 0);
        if (!drop_cache(fd, n)) {
                close(fd);
                return -1;
        }
        return fd;
}

/* How often a cold read is tried again when the disk was faster than the no-wait read's second
 * look (each try drops the pages first); the code under test must say "blocked" in one of them. */
#define COLD_TRIES 8

static void assert_same_ends(const RecordEnds *a, const RecordEnds *b) {
        assert_int_equal(a->head_r, b->head_r);
        assert_true(streq_ptr(a->head.session_id, b->head.session_id));
        assert_true(streq_ptr(a->head.cwd, b->head.cwd));
        assert_int_equal(a->head.timestamp, b->head.timestamp);
        assert_int_equal(a->tail_r, b->tail_r);
        assert_int_equal(a->tail.last_timestamp, b->tail.last_timestamp);
        assert_int_equal(a->tail.incomplete, b->tail.incomplete);
        assert_true(streq_ptr(a->tail.title, b->tail.title));
}

/* preadv2() as the page cache would answer a no-wait read of pages it does not hold:
 * nowait_answer 0 = the real call, 1 = EAGAIN, 2 = only the first half (a part was cached), 3 =
 * all of it (every page cached; a test file on tmpfs would otherwise answer EOPNOTSUPP). */
static int nowait_answer;
ssize_t __real_preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags);
ssize_t __wrap_preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags);
ssize_t __wrap_preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags) {
#ifdef RWF_NOWAIT
        if ((flags & RWF_NOWAIT) && nowait_answer == 1) {
                errno = EAGAIN;
                return -1;
        }
        if ((flags & RWF_NOWAIT) && nowait_answer == 2 && n == 1 && iov[0].iov_len > 1) {
                struct iovec half = { iov[0].iov_base, iov[0].iov_len / 2 };
                return __real_preadv2(fd, &half, 1, off, flags & ~RWF_NOWAIT);
        }
        if ((flags & RWF_NOWAIT) && nowait_answer == 3)
                return __real_preadv2(fd, iov, n, off, flags & ~RWF_NOWAIT);
#endif
        return __real_preadv2(fd, iov, n, off, flags);
}

/* What the page cache answers decides "blocked", never the bytes: EAGAIN and a short no-wait
 * read both say blocked and read what a warm read reads; a full no-wait read does not. And
 * record_ends_advise() asks the same way: a page the cache holds, nothing to advise (1); one it
 * does not, advised (0). The deterministic twin of the cold-cache test below, which checks the
 * same against a real disk where it can (and SKIPs where the disk is faster than it can look):
 * this one fails on a regression whatever the disk. */
static void test_record_read_ends_blocked_when_nowait_refuses(void **state) {
        _cleanup_free_ char *scratch = malloc(RECORD_ENDS_SCRATCH);
        _cleanup_(strbuf_done) StrBuf b = {};
        _cleanup_close_ int fd = -EBADF;

        (void)state;
#ifndef RWF_NOWAIT
        test_skip("no RWF_NOWAIT in this libc's headers");
#endif
        assert_non_null(scratch);
        assert_int_equal(strbuf_printf(&b, "{\"sessionId\":\"s1\",\"cwd\":\"/w\","
                                           "\"timestamp\":\"2026-11-28T00:00:00Z\"}\n"), 0);
        strbuf_add_filler(&b, 20000);
        assert_int_equal(strbuf_printf(&b, TITLE("Tail", "")), 0);
        assert_int_equal(strbuf_printf(&b, "{\"timestamp\":\"2026-11-30T00:00:09Z\"}\n"), 0);
        fd = mkfile(b.buf, b.len);
        for (int want_title = 0; want_title < 2; want_title++) {
                RecordEnds warm, cold;

                nowait_answer = 3;
                assert_int_equal(record_read_ends(fd, b.len, want_title, scratch, &warm), 0);
                nowait_answer = 0;
                assert_false(warm.blocked);
                for (int a = 1; a <= 2; a++) {
                        nowait_answer = a;
                        assert_int_equal(record_read_ends(fd, b.len, want_title, scratch, &cold),
                                         0);
                        nowait_answer = 0;
                        assert_true(cold.blocked);
                        assert_string_equal(cold.head.session_id, "s1");
                        if (want_title)
                                assert_string_equal(cold.tail.title, "Tail");
                        assert_same_ends(&cold, &warm);
                        record_head_info_done(&cold.head);
                        record_tail_info_done(&cold.tail);
                }
                record_head_info_done(&warm.head);
                record_tail_info_done(&warm.tail);
                nowait_answer = 3;
                assert_int_equal(record_ends_advise(fd, b.len, want_title), 1);
                nowait_answer = 1;
                assert_int_equal(record_ends_advise(fd, b.len, want_title), 0);
                nowait_answer = 0;
        }
}

static void test_record_read_ends_blocked_on_cold_cache(void **state) {
        static const size_t sizes[] = { 3000, 20000, 70000, 140000 };
        _cleanup_free_ char *scratch = malloc(RECORD_ENDS_SCRATCH);
        bool no_cold = false;

        (void)state;
        assert_non_null(scratch);
        for (size_t z = 0; z < ELEMENTSOF(sizes); z++)
                for (int want_title = 0; want_title < 2; want_title++) {
                        _cleanup_(strbuf_done) StrBuf b = {};
                        _cleanup_close_ int fd = -EBADF;
                        RecordEnds cold, warm;

                        assert_int_equal(strbuf_printf(&b, "{\"sessionId\":\"s1\",\"cwd\":\"/w\","
                                                           "\"timestamp\":\"2026-11-28T00:00:00Z\"}\n"), 0);
                        strbuf_add_filler(&b, sizes[z] - 200);
                        assert_int_equal(strbuf_printf(&b, TITLE("Tail", "")), 0);
                        assert_int_equal(strbuf_printf(&b, "{\"timestamp\":\"2026-11-30T00:00:09Z\"}\n"), 0);
                        fd = mkfile_cold(b.buf, b.len);
                        if (fd < 0) /* the page cache keeps the file: nothing is cold */
                                test_skip("the page cache keeps the dropped file: nothing is cold here");

                        /* cold: the first read waits, and says so. A no-wait read of a page
                         * that is not cached starts its read-ahead, and a fast disk can finish
                         * it before the read looks again: then drop the pages and try again */
                        for (int try = 0;; try++) {
                                assert_int_equal(record_read_ends(fd, b.len, want_title, scratch,
                                                                  &cold), 0);
                                if (cold.blocked || try == COLD_TRIES)
                                        break;
                                record_head_info_done(&cold.head);
                                record_tail_info_done(&cold.tail);
                                assert_true(drop_cache(fd, b.len));
                        }
                        if (!cold.blocked) {
                                /* nine times the read-ahead that the no-wait read started was
                                 * done before it looked again: this disk cannot show it (the
                                 * test above checks "blocked" without a disk) */
                                record_head_info_done(&cold.head);
                                record_tail_info_done(&cold.tail);
                                no_cold = true;
                                goto out; /* leaves the loops' scopes: their cleanups run */
                        }
                        assert_int_equal(cold.head_r, 0);
                        assert_string_equal(cold.head.session_id, "s1");
                        assert_int_equal(cold.tail_r, 0);
                        assert_true(cold.tail.last_timestamp > 0);
                        if (want_title)
                                assert_string_equal(cold.tail.title, "Tail");
                        /* warm: it does not, and reads the same */
                        assert_int_equal(record_read_ends(fd, b.len, want_title, scratch, &warm), 0);
                        assert_false(warm.blocked);
                        assert_same_ends(&cold, &warm);
                        assert_int_equal(record_ends_advise(fd, b.len, want_title), 1);
                        record_head_info_done(&warm.head);
                        record_tail_info_done(&warm.tail);

                        /* dropped again: advised (the same race as above), and the reads are
                         * the same */
                        int adv = 1;
                        for (int try = 0; adv == 1 && try <= COLD_TRIES; try++) {
                                assert_true(drop_cache(fd, b.len));
                                adv = record_ends_advise(fd, b.len, want_title);
                        }
                        if (adv != 0) {
                                /* as above: the read-ahead won nine times */
                                record_head_info_done(&cold.head);
                                record_tail_info_done(&cold.tail);
                                no_cold = true;
                                goto out;
                        }
                        assert_int_equal(record_read_ends(fd, b.len, want_title, scratch, &warm), 0);
                        assert_same_ends(&cold, &warm);
                        record_head_info_done(&warm.head);
                        record_tail_info_done(&warm.tail);
                        record_head_info_done(&cold.head);
                        record_tail_info_done(&cold.tail);
                }
        /* an empty file: nothing to advise */
        assert_int_equal(record_ends_advise(-1, 0, true), 1);
out:
        if (no_cold) {
                free(TAKE_PTR(scratch)); /* a skip leaves without the cleanups */
                test_skip("the disk finished the read-ahead before the no-wait read, %d times",
                          COLD_TRIES + 1);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_record_parse_line_table),
                cmocka_unit_test(test_record_parse_line_cb_error_stops),
                cmocka_unit_test(test_record_parse_line_deep_nesting_refused),
                cmocka_unit_test(test_record_json_parse_numbers),
                cmocka_unit_test(test_record_for_each_line_basic),
                cmocka_unit_test(test_record_for_each_line_empty_file),
                cmocka_unit_test(test_record_for_each_line_long_lines_truncated),
                cmocka_unit_test(test_record_for_each_line_huge_line_bounded),
                cmocka_unit_test(test_record_for_each_line_many_lines_across_chunks),
                cmocka_unit_test(test_record_for_each_line_mem_matches_stream),
                cmocka_unit_test(test_record_read_exact),
                cmocka_unit_test(test_record_for_each_line_counts),
                cmocka_unit_test(test_record_read_head_normal),
                cmocka_unit_test(test_record_read_head_errors),
                cmocka_unit_test(test_record_read_head_skips_unparseable_lines),
                cmocka_unit_test(test_record_read_head_glued_first_wins),
                cmocka_unit_test(test_record_read_head_invalid_utf8_and_nul),
                cmocka_unit_test(test_record_read_head_line_over_1mib),
                cmocka_unit_test(test_record_read_head_line_at_max_and_one_past),
                cmocka_unit_test(test_record_read_head_counts_utf16_units),
                cmocka_unit_test(test_record_read_head_qwen_golden),
                cmocka_unit_test(test_record_read_tail_titles),
                cmocka_unit_test(test_record_read_tail_last_timestamp_and_incomplete),
                cmocka_unit_test(test_record_read_tail_empty_file),
                cmocka_unit_test(test_record_read_tail_last_timestamp_backwards),
                cmocka_unit_test(test_record_read_tail_partial_line_ignored),
                cmocka_unit_test(test_record_read_head_beyond_first_look),
                cmocka_unit_test(test_record_memmem_matches_memmem),
                cmocka_unit_test(test_record_read_tail_title_in_head_window),
                cmocka_unit_test(test_record_read_tail_title_in_partial_first_line),
                cmocka_unit_test(test_record_read_tail_qwen_title_golden),
                cmocka_unit_test(test_record_read_ends_matches_head_and_tail),
                cmocka_unit_test(test_record_read_ends_blocked_when_nowait_refuses),
                cmocka_unit_test(test_record_read_ends_blocked_on_cold_cache),
                cmocka_unit_test(test_record_json_members_validates_long_strings_as_json_parse),
        };
        setenv("TZ", "UTC", 1);
        tzset();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
