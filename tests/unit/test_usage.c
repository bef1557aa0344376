/* test_usage.c: the usage salvage against records computed by Qwen Code's own code. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "macro.h"
#include "testdata.h"
#include "usage.h"
#include "usage-index.h"
#include "util.h"
#include "usage-index.c" /* its static functions are tested here */

/* From a golden line {"<k>":"<name>","record":<record>}, the name and the record's text exactly
 * as JSON.stringify wrote it. */
static void golden_split(char *line, const char *key, char **ret_name, char **ret_record) {
        _cleanup_free_ char *prefix = util_strprintf("{\"%s\":\"", key);
        char *rec, *end;

        assert_non_null(prefix);
        assert_true(strneq(line, prefix, strlen(prefix)));
        rec = strstr(line, "\",\"record\":");
        assert_non_null(rec);
        *rec = '\0';
        *ret_name = line + strlen(prefix);
        rec += strlen("\",\"record\":");
        end = rec + strlen(rec);
        while (end > rec && (end[-1] == '\n' || end[-1] == '\r'))
                *--end = '\0';
        assert_true(end > rec && end[-1] == '}');
        end[-1] = '\0';
        *ret_record = rec;
}

/* usage_build_record_sized() with the file's size (read whole), and with a size it does not
 * have (streamed), builds what usage_build_record() built: r and line. */
static bool sized_agrees(int fd, int r, const char *line) {
        struct stat st;

        assert_int_equal(fstat(fd, &st), 0);
        for (int d = -1; d <= 1; d++) {
                _cleanup_free_ char *l = (char *)NULL;
                int k;

                if (st.st_size + d < 0)
                        continue;
                k = usage_build_record_sized(fd, (uint64_t)(st.st_size + d), &l);
                if (k != r || !l != !line || (l && !streq(l, line)))
                        return false;
        }
        return true;
}

/* Build the record for file path and compare it with want ("null" = nothing written). */
static bool check_record(const char *path, const char *name, const char *want) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *line = NULL;
        int r;

        if (fd < 0)
                print_error("%s: %m\n", path);
        assert_true(fd >= 0);
        line = (char *)"sentinel";
        r = usage_build_record(fd, &line);
        if (r < 0) {
                print_error("%s: usage_build_record: %s\n", name, strerror(-r));
                line = NULL;
                return false;
        }
        if (!sized_agrees(fd, r, line)) {
                print_error("%s: usage_build_record_sized() differs\n", name);
                return false;
        }
        if (streq(want, "null")) {
                if (line) {
                        print_error("%s: want no record, got %s", name, line);
                        return false;
                }
                return true;
        }
        if (!line) {
                print_error("%s: got no record, want %s\n", name, want);
                return false;
        }
        if (strlen(line) != strlen(want) + 1 || !strneq(line, want, strlen(want)) ||
            line[strlen(want)] != '\n') {
                print_error("%s:\n got  %s want %s\n", name, line, want);
                return false;
        }
        return true;
}

static unsigned check_golden_file(const char *golden_rel, const char *key, const char *dir_rel,
                                  const char *suffix, unsigned *ret_nulls) {
        _cleanup_free_ char *golden = test_data_path(golden_rel);
        _cleanup_fclose_ FILE *f = fopen(golden, "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        unsigned n = 0, bad = 0, nulls = 0;

        assert_non_null(f);
        while (getline(&line, &cap, f) > 0) {
                char *name, *want;
                _cleanup_free_ char *rel = NULL, *path = NULL;

                golden_split(line, key, &name, &want);
                rel = util_strprintf("%s/%s%s", dir_rel, name, suffix);
                assert_non_null(rel);
                path = test_data_path(rel);
                if (!check_record(path, name, want))
                        bad++;
                nulls += streq(want, "null");
                n++;
        }
        assert_int_equal(bad, 0);
        *ret_nulls = nulls;
        return n;
}

static void test_usage_build_record_corpus_golden(void **state) {
        unsigned nulls = 0;

        (void)state;
        /* every transcript of the genuine Qwen tree, byte for byte */
        assert_true(check_golden_file("corpus/golden/salvage.jsonl", "transcript", "corpus/tree", "", &nulls) >= 12);
}

static void test_usage_build_record_hostile_golden(void **state) {
        unsigned nulls = 0, n;

        (void)state;
        /* JavaScript edge cases; golden records from Qwen 0.24.4 (tests/data/usage/make-golden.mjs) */
        n = check_golden_file("usage/golden.jsonl", "case", "usage/cases", ".jsonl", &nulls);
        assert_true(n >= 50);
        assert_true(nulls > 5 && nulls < n);
}

/* ---- usage_index_has_session */

static int open_dir(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        return fd;
}

static void test_usage_has_session_corpus(void **state) {
        _cleanup_free_ char *tree = test_data_path("corpus/tree");
        _cleanup_close_ int g = open_dir(tree);

        (void)state;
        assert_int_equal(usage_index_has_session(g, "aefd2a51-f2fc-4eed-a29c-91292bb022bf"), 1);
        assert_int_equal(usage_index_has_session(g, "4dc251a0-65d2-4214-88bd-fb748140e652"), 1);
        assert_int_equal(usage_index_has_session(g, "1a914264-8e49-442e-bc79-1cb2de9eae0c"), 1);
        assert_int_equal(usage_index_has_session(g, "AEFD2A51-F2FC-4EED-A29C-91292BB022BF"), 0); /* === */
        assert_int_equal(usage_index_has_session(g, "aefd2a51"), 0);
        assert_int_equal(usage_index_has_session(g, "00000000-0000-0000-0000-000000000000"), 0);
        assert_int_equal(usage_index_has_session(g, ""), -EINVAL);
}

typedef struct TmpDir {
        char path[64];
        int fd;
} TmpDir;

static void tmpdir_new(TmpDir *t) {
        const char *base = getenv("TMPDIR");

        snprintf(t->path, sizeof(t->path), "%s/qgc-usage-XXXXXX", base && strlen(base) < 30 ? base : "/tmp");
        assert_non_null(mkdtemp(t->path));
        t->fd = open_dir(t->path);
}

static void tmpdir_done(TmpDir *t) {
        _cleanup_free_ char *cmd = util_strprintf("rm -rf '%s'", t->path);

        macro_safe_close(t->fd);
        assert_int_equal(system(cmd), 0);
}

static void write_usage_file(TmpDir *t, const char *content, size_t n) {
        _cleanup_close_ int fd = openat(t->fd, "usage_record.jsonl", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, n), (ssize_t)n);
}

static void test_usage_has_session_hostile_files(void **state) {
        static const struct {
                const char *content;
                size_t len;
                int want;
        } cases[] = {
                { "{\"sessionId\":\"a\"}{\"sessionId\":\"X-1\"}\n", 0, 1 },      /* glued */
                { "junk\r\n{\"sessionId\":\"X-1\"}\r\n", 0, 1 },                 /* CRLF */
                { "{\"a\":1}\r{\"sessionId\":\"X-1\"}", 0, 1 },                  /* lone CR, no final newline */
                { "{\"sessionId\":\"\\u0058-1\"}\n", 0, 1 },                      /* escaped */
                { "\xef\xbb\xbf {\"sessionId\":\"X-1\"} \n", 0, 1 },             /* BOM, spaces */
                { "{\"sessionId\":\"X-1\",\"sessionId\":\"Y\"}\n", 0, 0 },        /* last key wins */
                { "{\"project\":\"X-1\"}\n", 0, 0 },
                { "{\"x\":{\"sessionId\":\"X-1\"}}\n", 0, 0 },                    /* nested */
                { "[{\"sessionId\":\"X-1\"}]\n", 0, 0 },                          /* array line */
                { "{\"sessionId\":\"X-1\"\n", 0, 0 },                             /* truncated */
                { "{\"sessionId\":\"X-10\"}\n", 0, 0 },                           /* longer id */
                { "{\"sessionId\":\"X-1\\u0000\"}\n", 0, 0 },
                { "\0\0\0{\"sessionId\":\"X-1\"}\n", 23, 1 },                    /* NULs: recovered */
                { "{\"sessionId\":\"x-1\"}\n", 0, 0 },                            /* case matters */
                { "", 0, 0 },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                TmpDir t;
                int r;

                tmpdir_new(&t);
                write_usage_file(&t, cases[i].content, cases[i].len ? cases[i].len : strlen(cases[i].content));
                r = usage_index_has_session(t.fd, "X-1");
                if (r != cases[i].want)
                        print_error("case %zu: got %d\n", i, r);
                assert_int_equal(r, cases[i].want);
                tmpdir_done(&t);
        }
}

static void test_usage_has_session_missing_and_special(void **state) {
        TmpDir t;

        (void)state;
        tmpdir_new(&t);
        assert_int_equal(usage_index_has_session(t.fd, "X-1"), 0); /* no file */
        assert_int_equal(symlinkat("/etc/passwd", t.fd, "usage_record.jsonl"), 0);
        assert_int_equal(usage_index_has_session(t.fd, "X-1"), -ELOOP);
        assert_int_equal(unlinkat(t.fd, "usage_record.jsonl", 0), 0);
        assert_int_equal(mkfifoat(t.fd, "usage_record.jsonl", 0600), 0);
        assert_int_equal(usage_index_has_session(t.fd, "X-1"), -EBADFD); /* never blocks */
        assert_int_equal(unlinkat(t.fd, "usage_record.jsonl", 0), 0);
        assert_int_equal(mkdirat(t.fd, "usage_record.jsonl", 0700), 0);
        assert_int_equal(usage_index_has_session(t.fd, "X-1"), -EBADFD);
        tmpdir_done(&t);
}

/* ---- usage_append */

static char *read_usage_file(TmpDir *t, struct stat *ret_st) {
        _cleanup_close_ int fd = openat(t->fd, "usage_record.jsonl", O_RDONLY | O_CLOEXEC);
        char *buf = calloc(1, 4096);
        ssize_t n;

        assert_true(fd >= 0);
        assert_non_null(buf);
        assert_int_equal(fstat(fd, ret_st), 0);
        n = read(fd, buf, 4095);
        assert_true(n >= 0);
        return buf;
}

static void test_usage_append_creates_and_appends(void **state) {
        TmpDir t;
        struct stat st;
        _cleanup_free_ char *a = NULL, *b = NULL;
        mode_t old = umask(022);

        (void)state;
        tmpdir_new(&t);
        assert_int_equal(fixture_usage_append(t.fd, "{\"sessionId\":\"s1\"}\n"), 0);
        a = read_usage_file(&t, &st);
        assert_string_equal(a, "{\"sessionId\":\"s1\"}\n");
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(fixture_usage_append(t.fd, "{\"sessionId\":\"s2\"}\n"), 0);
        b = read_usage_file(&t, &st);
        assert_string_equal(b, "{\"sessionId\":\"s1\"}\n{\"sessionId\":\"s2\"}\n");
        assert_int_equal(usage_index_has_session(t.fd, "s2"), 1);
        tmpdir_done(&t);
        umask(old);
}

static void test_usage_append_refuses_bad_lines(void **state) {
        TmpDir t;
        struct stat st;

        (void)state;
        tmpdir_new(&t);
        assert_int_equal(fixture_usage_append(t.fd, NULL), -EINVAL);
        assert_int_equal(fixture_usage_append(t.fd, ""), -EINVAL);
        assert_int_equal(fixture_usage_append(t.fd, "\n"), -EINVAL);
        assert_int_equal(fixture_usage_append(t.fd, "{}"), -EINVAL);           /* no newline */
        assert_int_equal(fixture_usage_append(t.fd, "{}\n{}\n"), -EINVAL);     /* two lines */
        assert_int_equal(fstatat(t.fd, "usage_record.jsonl", &st, 0), -1);
        assert_int_equal(errno, ENOENT);
        tmpdir_done(&t);
}

static void test_usage_append_refuses_symlink_and_fifo(void **state) {
        TmpDir t;

        (void)state;
        tmpdir_new(&t);
        assert_int_equal(symlinkat("elsewhere", t.fd, "usage_record.jsonl"), 0);
        assert_int_equal(fixture_usage_append(t.fd, "{}\n"), -ELOOP);
        assert_int_equal(faccessat(t.fd, "elsewhere", F_OK, 0), -1); /* not created through it */
        assert_int_equal(unlinkat(t.fd, "usage_record.jsonl", 0), 0);
        assert_int_equal(mkfifoat(t.fd, "usage_record.jsonl", 0600), 0);
        assert_int_equal(fixture_usage_append(t.fd, "{}\n"), -ENXIO); /* no reader: never blocks */
        tmpdir_done(&t);
}

/* Qwen (or qgc) died mid-append: the file ends in a partial line. The appended record starts a
 * fresh line, so Qwen's reader returns it (glued to the fragment, it would be lost). */
static void test_usage_append_after_partial_line(void **state) {
        TmpDir t;
        struct stat st;
        _cleanup_free_ char *a = NULL;
        static const char frag[] = "{\"version\":1,\"sessionId\":\"cut\",\"mod";

        (void)state;
        tmpdir_new(&t);
        _cleanup_close_ int fd = openat(t.fd, "usage_record.jsonl",
                                        O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, frag, strlen(frag)), (ssize_t)strlen(frag));
        assert_int_equal(fixture_usage_append(t.fd, "{\"version\":1,\"sessionId\":\"s1\"}\n"), 0);
        a = read_usage_file(&t, &st);
        assert_string_equal(a, "{\"version\":1,\"sessionId\":\"cut\",\"mod\n"
                               "{\"version\":1,\"sessionId\":\"s1\"}\n");
        assert_int_equal(usage_index_has_session(t.fd, "s1"), 1);
        assert_int_equal(usage_index_has_session(t.fd, "cut"), 0);
        /* a file ending in '\n' gets no empty line */
        assert_int_equal(fixture_usage_append(t.fd, "{\"version\":1,\"sessionId\":\"s2\"}\n"), 0);
        free(a);
        a = read_usage_file(&t, &st);
        assert_string_equal(a, "{\"version\":1,\"sessionId\":\"cut\",\"mod\n"
                               "{\"version\":1,\"sessionId\":\"s1\"}\n"
                               "{\"version\":1,\"sessionId\":\"s2\"}\n");
        tmpdir_done(&t);
}

/* ---- a large transcript, streamed */

/* Under ASan, freed blocks sit in a quarantine that grows with the number of allocations; keep
 * it small so the RSS bound below measures qgc, not the sanitizer. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_USAGE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TEST_USAGE_ASAN 1
#endif
#ifdef TEST_USAGE_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "quarantine_size_mb=1";
}
#endif

static long maxrss_kb(void) {
        struct rusage ru;

        assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
        return ru.ru_maxrss;
}

static int64_t get_path_int(json_object *o, const char *const *path) {
        for (; *path; path++)
                assert_true(json_object_object_get_ex(o, *path, &o));
        return json_object_get_int64(o);
}

static void test_usage_build_record_large_transcript_bounded(void **state) {
        static const char rel[] = "corpus/tree/projects/-srv-demo-api-server/chats/122b1556-a4f5-48b6-9bf1-eae6bac23f87.jsonl";
        _cleanup_free_ char *path = test_data_path(rel);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *first = NULL, *line = NULL;
        StrBuf body = {};
        size_t cap = 0, cap2 = 0, k = 0;
        TmpDir t;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *out = NULL;
        json_object *rec;
        long before;
        uint64_t size = 0;

        (void)state;
        assert_non_null(f);
        assert_true(getline(&first, &cap, f) > 0);
        while (getline(&line, &cap2, f) > 0)
                assert_int_equal(strbuf_append(&body, line, strlen(line)), 0);
        assert_true(body.len > 1000);

        tmpdir_new(&t);
        fd = openat(t.fd, "big.jsonl", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, first, strlen(first)), (ssize_t)strlen(first));
        for (size = strlen(first); size < 50u * 1024 * 1024; size += body.len, k++)
                assert_int_equal(write(fd, body.buf, body.len), (ssize_t)body.len);
        strbuf_done(&body);

        before = maxrss_kb();
        assert_int_equal(usage_build_record(fd, &out), 0);
        /* the buffers are a few MiB at most, whatever the file size */
        if (maxrss_kb() - before >= 24 * 1024)
                print_error("max RSS grew by %ld KiB\n", maxrss_kb() - before);
        assert_true(maxrss_kb() - before < 24 * 1024);
        assert_non_null(out);

        rec = json_tokener_parse(out);
        assert_non_null(rec);
        /* the body repeated k times: every counter k times the genuine record's */
        assert_int_equal(get_path_int(rec, (const char *const[]){ "models", "mock-qwen", "requests", NULL }), 10 * (int64_t)k);
        assert_int_equal(get_path_int(rec, (const char *const[]){ "models", "mock-qwen", "inputTokens", NULL }), 97153 * (int64_t)k);
        assert_int_equal(get_path_int(rec, (const char *const[]){ "tools", "totalCalls", NULL }), 7 * (int64_t)k);
        assert_int_equal(get_path_int(rec, (const char *const[]){ "tools", "byName", "edit", "fail", NULL }), (int64_t)k);
        assert_int_equal(get_path_int(rec, (const char *const[]){ "files", "linesAdded", NULL }), 3 * (int64_t)k);
        assert_int_equal(get_path_int(rec, (const char *const[]){ "startTime", NULL }), INT64_C(1796010764803));
        assert_int_equal(get_path_int(rec, (const char *const[]){ "timestamp", NULL }), INT64_C(1796010788257));
        json_object_put(rec);
        tmpdir_done(&t);
}

/* ---- long lines */

#define LL_HEAD "{\"sessionId\":\"s-1\",\"timestamp\":\"2026-11-30T00:00:00.000Z\",\"cwd\":\"/p\",\"type\":\"user\"}\n"
#define LL_TEL "{\"timestamp\":\"2026-11-30T00:00:01.000Z\",\"type\":\"system\",\"subtype\":\"ui_telemetry\",\"systemPayload\":{\"uiEvent\":{\"event.name\":\"qwen-code.api_error\",\"model\":\"m\",\"duration_ms\":5}}}\n"

/* A record line {"timestamp":ts,"pad":"xxx..."} of about n bytes, plus a newline. */
static void append_big_record(StrBuf *b, const char *ts, size_t n, const char *subtype) {
        size_t start = b->len;

        assert_int_equal(strbuf_printf(b, "{\"timestamp\":\"%s\",\"type\":\"system\",\"subtype\":\"%s\",\"pad\":\"", ts, subtype), 0);
        while (b->len - start < n)
                assert_int_equal(strbuf_append(b, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 64), 0);
        assert_int_equal(strbuf_append(b, "\"}\n", 3), 0);
}

static int build_from(TmpDir *t, const StrBuf *b, char **ret) {
        _cleanup_close_ int fd = openat(t->fd, "t.jsonl", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        size_t done = 0;
        int r;

        assert_true(fd >= 0);
        while (done < b->len) {
                ssize_t k = write(fd, b->buf + done, b->len - done);
                assert_true(k > 0);
                done += (size_t)k;
        }
        r = usage_build_record(fd, ret);
        assert_true(sized_agrees(fd, r, *ret));
        return r;
}

static void test_usage_build_record_long_last_line(void **state) {
        StrBuf b = {};
        TmpDir t;
        _cleanup_free_ char *out = NULL;

        (void)state;
        tmpdir_new(&t);
        assert_int_equal(strbuf_append(&b, LL_HEAD LL_TEL, strlen(LL_HEAD LL_TEL)), 0);
        /* a 300 KiB last record: the backward scan widens its window to read it */
        append_big_record(&b, "2026-11-30T00:00:09.000Z", 300 * 1024, "x");
        assert_int_equal(build_from(&t, &b, &out), 0);
        assert_non_null(out);
        assert_non_null(strstr(out, "\"timestamp\":1795996809000,\"startTime\":1795996800000,"));
        strbuf_done(&b);
        tmpdir_done(&t);
}

static void test_usage_build_record_over_long_lines(void **state) {
        static const struct {
                const char *where;
                int want;
        } cases[] = {
                { "middle", 0 },        /* an unreadable plain record in the middle does not matter */
                { "last", -E2BIG },     /* the end time would be unknown */
                { "telemetry", -E2BIG }, /* its events would be lost */
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                StrBuf b = {};
                TmpDir t;
                _cleanup_free_ char *out = NULL;
                size_t big = 17u * 1024 * 1024;
                int r;

                tmpdir_new(&t);
                assert_int_equal(strbuf_append(&b, LL_HEAD LL_TEL, strlen(LL_HEAD LL_TEL)), 0);
                append_big_record(&b, "2026-11-30T00:00:05.000Z", big,
                                  streq(cases[i].where, "telemetry") ? "ui_telemetry" : "x");
                if (!streq(cases[i].where, "last"))
                        assert_int_equal(strbuf_append(&b, LL_TEL, strlen(LL_TEL)), 0);
                r = build_from(&t, &b, &out);
                if (r != cases[i].want)
                        print_error("case %s: %d\n", cases[i].where, r);
                assert_int_equal(r, cases[i].want);
                if (cases[i].want == 0) {
                        assert_non_null(out);
                        assert_non_null(strstr(out, "\"models\":{\"m\":{\"requests\":2,"));
                        assert_non_null(strstr(out, "\"timestamp\":1795996801000,"));
                }
                strbuf_done(&b);
                tmpdir_done(&t);
        }
}

/* The record of a transcript text (NULL when Qwen writes nothing). */
static char *record_of(const char *text) {
        char path[] = "/tmp/qgc-test-usage-XXXXXX";
        _cleanup_close_ int fd = mkstemp(path);
        char *line = NULL;

        assert_true(fd >= 0);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        assert_int_equal(usage_build_record(fd, &line), 0);
        return line;
}

/* Valid event lines are replayed from their text without building them; the same events on
 * lines that only the tolerant parser reads (a glued record before them) must give the same
 * record, for ordinary and for hostile field values. */
static void test_usage_build_record_fast_path_matches_tolerant(void **state) {
        static const char *const events[] = {
                "\"event.name\":\"qwen-code.api_response\",\"model\":\"m\",\"duration_ms\":10,\"input_token_count\":3,\"output_token_count\":4,\"total_token_count\":0,\"cached_content_token_count\":1,\"thoughts_token_count\":2,\"ttft_ms\":5,\"prompt_id\":\"p\"",
                "\"event.name\":\"qwen-code.api_response\",\"model\":\"m\",\"duration_ms\":1.5e3,\"input_token_count\":\"7\",\"output_token_count\":null,\"total_token_count\":true,\"thoughts_token_count\":[1,2],\"ttft_ms\":0,\"prompt_id\":\"\"",
                "\"event.name\":\"qwen-code.api_error\",\"model\":\"caf\\u00e9\",\"duration_ms\":-0,\"input_token_count\":12345678901234567890",
                "\"event.name\":\"qwen-code.api_response\",\"model\":\"10\",\"duration_ms\":1e400,\"input_token_count\":{},\"output_token_count\":9999999999999999,\"ttft_ms\":3,\"prompt_id\":\"q\"",
                "\"event.name\":\"qwen-code.tool_call\",\"function_name\":\"read\",\"success\":true,\"duration_ms\":5,\"decision\":\"accept\",\"metadata\":{\"model_added_lines\":3,\"model_removed_lines\":\"2\"}",
                "\"event.name\":\"qwen-code.tool_call\",\"function_name\":\"r\\u0065ad\",\"success\":0,\"duration_ms\":\"x\",\"metadata\":{\"model_added_lines\":null,\"model_added_lines\":4}",
                "\"event.name\":\"qwen-code.tool_call\",\"function_name\":2,\"success\":\"\",\"metadata\":{\"other\":1}",
                "\"event.name\":\"qwen-code.tool_call\",\"function_name\":\"w\",\"success\":[],\"metadata\":[1]",
                "\"event.name\":\"qwen-code.tool_call\",\"function_name\":\"w\",\"success\":true,\"metadata\":{\"model_removed_lines\":[1,2]},\"metadata\":{\"model_added_lines\":0.25}",
                "\"event.name\":\"qwen-code.other\",\"model\":\"z\"",
                "\"\\u0065vent.name\":\"qwen-code.tool_call\",\"function_name\":\"esc\",\"d\\u0075ration_ms\":7",
        };
        StrBuf fast = {}, slow = {};

        (void)state;
        for (size_t k = 0; k < 2; k++) {
                StrBuf *b = k == 0 ? &fast : &slow;

                assert_int_equal(strbuf_printf(b, "{\"sessionId\":\"s\",\"cwd\":\"/p\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"user\"}\n"), 0);
                for (size_t i = 0; i < ELEMENTSOF(events); i++)
                        assert_int_equal(strbuf_printf(b, "%s{\"type\":\"system\",\"subtype\":\"ui_telemetry\",\"timestamp\":\"2026-01-01T00:00:%02zuZ\",\"systemPayload\":{\"uiEvent\":{%s}}}\n",
                                                       k == 0 ? "" : "{\"glued\":1}", i + 1, events[i]), 0);
        }
        _cleanup_free_ char *a = record_of(fast.buf), *b = record_of(slow.buf);
        assert_non_null(a);
        assert_non_null(b);
        assert_string_equal(a, b);
        /* and the values went through: the escaped model and the tool names are there */
        assert_non_null(strstr(a, "\"caf\xc3\xa9\""));
        assert_non_null(strstr(a, "\"esc\":{\"count\":1"));
        strbuf_done(&fast);
        strbuf_done(&slow);
}

static void test_usage_line_session_id(void **state) {
        _cleanup_free_ char *a = NULL, *b = NULL;

        (void)state;
        assert_int_equal(usage_line_session_id("{\"version\":1,\"sessionId\":\"aBc-1\",\"x\":2}\n", &a), 0);
        assert_string_equal(a, "aBc-1");
        assert_int_equal(usage_line_session_id("{\"sessionId\":\"\\u0041\"}", &b), 0);
        assert_string_equal(b, "A");
        assert_int_equal(usage_line_session_id("{\"sessionId\":42}\n", &(char *){ NULL }), -ENOMSG);
        assert_int_equal(usage_line_session_id("{\"version\":1}\n", &(char *){ NULL }), -ENOMSG);
        assert_int_equal(usage_line_session_id("{\"sessionId\":", &(char *){ NULL }), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_usage_build_record_corpus_golden),
                cmocka_unit_test(test_usage_build_record_hostile_golden),
                cmocka_unit_test(test_usage_has_session_corpus),
                cmocka_unit_test(test_usage_has_session_hostile_files),
                cmocka_unit_test(test_usage_has_session_missing_and_special),
                cmocka_unit_test(test_usage_append_creates_and_appends),
                cmocka_unit_test(test_usage_append_refuses_bad_lines),
                cmocka_unit_test(test_usage_append_refuses_symlink_and_fifo),
                cmocka_unit_test(test_usage_append_after_partial_line),
                cmocka_unit_test(test_usage_build_record_large_transcript_bounded),
                cmocka_unit_test(test_usage_build_record_long_last_line),
                cmocka_unit_test(test_usage_build_record_over_long_lines),
                cmocka_unit_test(test_usage_build_record_fast_path_matches_tolerant),
                cmocka_unit_test(test_usage_line_session_id),
        };
        /* Date.parse of zone-less times is local time: pin it */
        setenv("TZ", "UTC", 1);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
