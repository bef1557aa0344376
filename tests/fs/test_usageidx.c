/* test_usageidx: the incremental usage_record.jsonl index answers exactly as usage_index_has_session. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "macro.h"
#include "fs.h"
#include "inventory.h"
#include "usage.h"
#include "usage-ahead.h"
#include "usage-index.h"
#include "util.h"
#include "testskip.h"
#include "usage-index.c" /* its static functions are tested here */
#include "usage-ahead.c" /* the thread's state, for usage_ahead_wait() */

/* Wait until the thread has built all it may (parked), so the test sees what it built. */
static void usage_ahead_wait(UsageAhead *ua) {
        if (!ua || !ua->started)
                return;
        pthread_mutex_lock(&ua->lock);
        while (!ua->parked)
                pthread_cond_wait(&ua->done, &ua->lock);
        pthread_mutex_unlock(&ua->lock);
}

typedef struct T {
        char *root;
        int fd;
        UsageIndex *idx;
} T;

static int setup(void **state) {
        T *t = calloc(1, sizeof(T));
        if (!t || fixture_new(&t->root) < 0)
                return -1;
        t->fd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (t->fd < 0 || usage_index_new(&t->idx) < 0)
                return -1;
        *state = t;
        return 0;
}

static int teardown(void **state) {
        T *t = *state;
        usage_index_free(t->idx);
        close(t->fd);
        fixture_free(t->root);
        free(t);
        return 0;
}

static void write_usage(T *t, const char *mode, const char *text) {
        _cleanup_free_ char *p = fixture_path(t->root, "usage_record.jsonl");
        FILE *f = fopen(p, mode);
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* both answers agree, and equal want */
static void check(T *t, const char *id, int want) {
        assert_int_equal(usage_index_has_session(t->fd, id), want);
        assert_int_equal(usage_index_has(t->idx, t->fd, id), want);
}

static void test_usage_index_missing_file_is_absent(void **state) {
        T *t = *state;
        check(t, "aaaa", 0);
}

static void test_usage_index_sees_appends_and_glued_records(void **state) {
        T *t = *state;
        write_usage(t, "w", "{\"version\":1,\"sessionId\":\"one\"}\n");
        check(t, "one", 1);
        check(t, "two", 0);
        write_usage(t, "a", "{\"sessionId\":\"two\"}{\"sessionId\":\"three\"}\nnot json\n[1]\n");
        check(t, "two", 1);
        check(t, "three", 1);
        check(t, "one", 1);
        check(t, "ONE", 0); /* Qwen compares ids exactly */
}

static void test_usage_index_unterminated_last_line(void **state) {
        T *t = *state;
        write_usage(t, "w", "{\"sessionId\":\"one\"}\n{\"sessionId\":\"tail\"}");
        check(t, "tail", 1);
        write_usage(t, "a", "\n{\"sessionId\":\"more\"}\n");
        check(t, "tail", 1);
        check(t, "more", 1);
}

static void test_usage_index_file_replaced_starts_over(void **state) {
        T *t = *state;
        _cleanup_free_ char *p = fixture_path(t->root, "usage_record.jsonl");
        _cleanup_free_ char *q = fixture_path(t->root, "usage_record.jsonl.new");
        FILE *f;

        write_usage(t, "w", "{\"sessionId\":\"old\"}\n");
        check(t, "old", 1);
        f = fopen(q, "w");
        assert_non_null(f);
        fputs("{\"sessionId\":\"new\"}\n", f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(q, p), 0);
        check(t, "old", 0);
        check(t, "new", 1);
        /* shrunk in place (same inode) */
        write_usage(t, "w", "{\"sessionId\":\"x\"}\n");
        check(t, "new", 0);
        check(t, "x", 1);
}

static void test_usage_index_escaped_ids_and_crlf(void **state) {
        T *t = *state;
        write_usage(t, "w", "{\"sessionId\":\"\\u0061bc\"}\r\n{\"sessionId\":\"def\"}\r\n");
        check(t, "abc", 1);
        check(t, "def", 1);
}

/* The index reads a line that is one valid object without building it (only "version" and
 * "sessionId" are parsed); on hostile lines it agrees with the exact reader: the last of
 * duplicate keys, ids nested in other members, invalid UTF-8, a BOM, non-string ids. */
static void test_usage_index_fast_lines_agree(void **state) {
        T *t = *state;
        write_usage(t, "w",
                    "{\"sessionId\":\"dup-first\",\"sessionId\":\"dup-last\"}\n"
                    "{\"x\":{\"sessionId\":\"nested\"},\"sessionId\":\"outer\"}\n"
                    "{\"sessionId\":\"bad\xff\xfeutf\"}\n"
                    "\xef\xbb\xbf{\"sessionId\":\"bom\"}\n"
                    "{\"sessionId\":42}\n"
                    "  {\"sessionId\" : \"spaced\" }  \n"
                    "{\"sessionId\":\"frag-a\"} junk {\"sessionId\":\"frag-b\"}\n"
                    "{\"sessionId\":\"nul\\u0000id\"}\n"
                    "{\"version\":1e0,\"sessionId\":\"\\u00e9t\\u00e9\"}\n");
        check(t, "dup-first", 0);
        check(t, "dup-last", 1);
        check(t, "nested", 0);
        check(t, "outer", 1);
        check(t, "bad\xef\xbf\xbd\xef\xbf\xbdutf", 1);
        check(t, "bad\xff\xfeutf", 0);
        check(t, "bom", 1);
        check(t, "42", 0);
        check(t, "spaced", 1);
        check(t, "frag-a", 1);
        check(t, "frag-b", 1);
        check(t, "nul", 0);
        check(t, "\xc3\xa9t\xc3\xa9", 1);
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 1);
}

static void test_usage_index_huge_line_falls_back(void **state) {
        T *t = *state;
        size_t n = 5 * 1024 * 1024;
        char *big = malloc(n + 64);
        assert_non_null(big);
        strcpy(big, "{\"sessionId\":\"big\",\"pad\":\"");
        memset(big + strlen(big), 'x', n);
        strcpy(big + 26 + n, "\"}\n");
        write_usage(t, "w", "{\"sessionId\":\"small\"}\n");
        write_usage(t, "a", big);
        free(big);
        check(t, "small", 1);
        check(t, "nobody", 0);
}

/* A record after a partial line (a writer died mid-append) is seen, and qgc's own append after
 * such a fragment is seen too (it starts a fresh line). */
static void test_usage_index_sees_line_after_fragment(void **state) {
        T *t = *state;
        write_usage(t, "w", "{\"version\":1,\"sessionId\":\"one\"}\n{\"version\":1,\"sessionId\":\"cu");
        check(t, "one", 1);
        check(t, "cu", 0);
        write_usage(t, "a", "\n{\"version\":1,\"sessionId\":\"qwen\"}\n{\"version\":1,\"sessionId\":\"cut");
        check(t, "qwen", 1);
        assert_int_equal(fixture_usage_append(t->fd, "{\"version\":1,\"sessionId\":\"qgc\"}\n"), 0);
        check(t, "qgc", 1);
        check(t, "cut", 0);
        check(t, "one", 1);
}

static void test_usage_index_has_v1(void **state) {
        T *t = *state;
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 0); /* no file */
        write_usage(t, "w", "");
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 0);
        write_usage(t, "a", "{\"version\":2,\"sessionId\":\"a\"}\n{\"version\":\"1\"}\nnot json\n");
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 0);
        write_usage(t, "a", "{\"version\":1,\"sessionId\":\"b\"");
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 0); /* a partial line */
        write_usage(t, "a", "}");
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 1); /* complete, unterminated */
        write_usage(t, "w", "{\"version\":1.0}\n");
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 1);
}

/* ---- usage_index_freeze_history: Qwen's rebuild, written once */

#define FZ_PROJ "projects/-srv-demo-webapp/chats/"
#define FZ_WEB "aefd2a51-f2fc-4eed-a29c-91292bb022bf"
#define FZ_DEBUG "c7bab6d3-4d35-4ebb-b856-81c884008a1e"

static char *corpus_transcript(const char *rel) {
        char *buf = NULL;
        assert_int_equal(fixture_read(fixture_testdata("corpus/tree"), rel, &buf, NULL), 0);
        return buf;
}

/* The record usage_build_record() makes of transcript rel under the test root. */
static char *record_of(T *t, const char *rel) {
        _cleanup_free_ char *p = fixture_path(t->root, rel);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        char *line = NULL;
        assert_true(fd >= 0);
        assert_int_equal(usage_build_record(fd, &line), 0);
        assert_non_null(line);
        return line;
}

static void freeze_tree(T *t) {
        _cleanup_free_ char *web = corpus_transcript(FZ_PROJ FZ_WEB ".jsonl");
        _cleanup_free_ char *dbg = corpus_transcript(FZ_PROJ FZ_DEBUG ".jsonl");
        _cleanup_free_ char *arch = corpus_transcript(
                "projects/-srv-demo-scratch/chats/archive/1a914264-8e49-442e-bc79-1cb2de9eae0c.jsonl");

        assert_int_equal(fixture_mkdir(t->root, FZ_PROJ "archive"), 0);
        assert_int_equal(fixture_mkdir(t->root, "projects/a-file-not-a-dir-parent"), 0);
        assert_int_equal(fixture_write(t->root, "projects/zz-not-a-dir", "x"), 0);
        assert_int_equal(fixture_write(t->root, FZ_PROJ FZ_WEB ".jsonl", web), 0);
        assert_int_equal(fixture_write(t->root, FZ_PROJ FZ_DEBUG ".jsonl", dbg), 0);
        /* the same session again under another name: the first file (in byte order) wins */
        assert_int_equal(fixture_write(t->root, FZ_PROJ "zz-copy.jsonl", web), 0);
        /* not read by Qwen's rebuild: the archive, ledgers, other names */
        assert_int_equal(fixture_write(t->root, FZ_PROJ "archive/" "1a914264.jsonl", arch), 0);
        assert_int_equal(fixture_write(t->root, FZ_PROJ "x.ledger.jsonl", arch), 0);
        assert_int_equal(fixture_write(t->root, FZ_PROJ "x.json", arch), 0);
        assert_int_equal(fixture_write(t->root, FZ_PROJ "empty.jsonl", ""), 0);
}

static void test_usage_history_freeze_writes_qwens_rebuild(void **state) {
        T *t = *state;
        _cleanup_free_ char *a = NULL, *b = NULL, *got = NULL, *want = NULL;

        freeze_tree(t);
        a = record_of(t, FZ_PROJ FZ_WEB ".jsonl");
        b = record_of(t, FZ_PROJ FZ_DEBUG ".jsonl");
        want = util_strprintf("%s%s", a, b);
        assert_int_equal(usage_index_freeze_history(t->idx, t->fd), 1);
        assert_int_equal(fixture_read(t->root, "usage_record.jsonl", &got, NULL), 0);
        assert_string_equal(got, want);
        assert_false(fixture_exists(t->root, ".usage_record.jsonl.qgc-tmp"));
        /* the file has v1 records now: nothing more to do */
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 1);
        assert_int_equal(usage_index_freeze_history(t->idx, t->fd), 0);
        check(t, FZ_WEB, 1);
}

static void test_usage_history_freeze_keeps_the_files_bytes(void **state) {
        T *t = *state;
        _cleanup_free_ char *a = NULL, *b = NULL, *got = NULL, *want = NULL;

        freeze_tree(t);
        write_usage(t, "w", "{\"version\":2,\"sessionId\":\"v2\"}\n{\"version\":1,\"sessi");
        a = record_of(t, FZ_PROJ FZ_WEB ".jsonl");
        b = record_of(t, FZ_PROJ FZ_DEBUG ".jsonl");
        want = util_strprintf("{\"version\":2,\"sessionId\":\"v2\"}\n{\"version\":1,\"sessi\n%s%s",
                              a, b);
        assert_int_equal(usage_index_freeze_history(t->idx, t->fd), 1);
        assert_int_equal(fixture_read(t->root, "usage_record.jsonl", &got, NULL), 0);
        assert_string_equal(got, want);
}

static void test_usage_history_freeze_nothing_to_write(void **state) {
        T *t = *state;
        assert_int_equal(usage_index_freeze_history(t->idx, t->fd), 0); /* no projects/ */
        assert_int_equal(fixture_write(t->root, "projects/p/chats/empty.jsonl", ""), 0);
        assert_int_equal(usage_index_freeze_history(t->idx, t->fd), 0);
        assert_false(fixture_exists(t->root, "usage_record.jsonl"));
}

/* Qwen's rebuild follows symlinks, qgc does not: it cannot reproduce the totals, so it fails
 * closed and writes nothing. */
static void test_usage_history_freeze_refuses_symlinks(void **state) {
        T *t = *state;
        freeze_tree(t);
        assert_int_equal(fixture_symlink(t->root, FZ_PROJ "link.jsonl", FZ_WEB ".jsonl"), 0);
        assert_int_equal(usage_index_freeze_history(t->idx, t->fd), -ELOOP);
        assert_false(fixture_exists(t->root, "usage_record.jsonl"));
        assert_false(fixture_exists(t->root, ".usage_record.jsonl.qgc-tmp"));
}

/* Held (the executor's group commit), the file is looked at once: a line appended meanwhile is
 * seen after the release; a freeze, which writes the file, makes the next lookup look again. */
static void test_usage_index_hold_looks_once(void **state) {
        T *t = *state;

        write_usage(t, "w", "{\"version\":1,\"sessionId\":\"one\"}\n");
        usage_index_hold(t->idx);
        assert_int_equal(usage_index_has(t->idx, t->fd, "one"), 1);
        write_usage(t, "a", "{\"sessionId\":\"two\"}\n");
        assert_int_equal(usage_index_has(t->idx, t->fd, "two"), 0);
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 1);
        usage_index_hold(t->idx); /* idempotent: still the first look's answer */
        assert_int_equal(usage_index_has(t->idx, t->fd, "two"), 0);
        usage_index_release(t->idx);
        assert_int_equal(usage_index_has(t->idx, t->fd, "two"), 1);
        /* released: every call looks */
        write_usage(t, "a", "{\"sessionId\":\"three\"}\n");
        assert_int_equal(usage_index_has(t->idx, t->fd, "three"), 1);
}

static void test_usage_index_hold_freeze_looks_again(void **state) {
        T *t = *state;

        freeze_tree(t);
        usage_index_hold(t->idx);
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 0); /* no file yet */
        assert_int_equal(usage_index_freeze_history(t->idx, t->fd), 1);
        assert_int_equal(usage_index_has_v1(t->idx, t->fd), 1);
        assert_int_equal(usage_index_has(t->idx, t->fd, FZ_WEB), 1);
        usage_index_release(t->idx);
}

/* The salvage thread (usage-ahead.h) builds exactly usage_build_record()'s line of each file that
 * still has the scan's identity, and says "do it yourself" for one that changed since. */
static void test_usage_ahead_builds_the_salvage_lines(void **state) {
        T *t = *state;
        _cleanup_free_ char *web = corpus_transcript(FZ_PROJ FZ_WEB ".jsonl");
        _cleanup_(usage_ahead_freep) UsageAhead *ua = NULL;
        Session s[24] = {};
        char ids[24][40];
        Tree tree = {};
        Inventory inv = { .trees = &tree, .n_trees = 1, .sessions = s, .n_sessions = 24 };
        int root = t->fd;
        cpu_set_t set;

        if (sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2)
                test_skip("one CPU: the thread runs only with a second CPU");
        for (size_t i = 0; i < ELEMENTSOF(s); i++) {
                _cleanup_free_ char *rel = NULL, *p = NULL;
                struct stat st;

                snprintf(ids[i], sizeof ids[i], "0000%04zu-8e49-442e-bc79-1cb2de9eae0c", i);
                rel = util_strprintf(FZ_PROJ "%s%s.jsonl", i % 3 == 2 ? "archive/" : "", ids[i]);
                assert_int_equal(fixture_write(t->root, rel, web), 0);
                p = fixture_path(t->root, rel);
                assert_int_equal(stat(p, &st), 0);
                memcpy(s[i].id, ids[i], strlen(ids[i]) + 1);
                s[i].project_dir = (char *)"-srv-demo-webapp";
                s[i].state = i % 3 == 2 ? SESSION_ARCHIVED : SESSION_ACTIVE;
                fs_fileid_from_stat(i % 3 == 2 ? &s[i].archived : &s[i].active, &st);
        }
        /* changed since the scan: it grew */
        _cleanup_free_ char *grown = fixture_path(t->root, FZ_PROJ "000000" "01-8e49-442e-bc79-"
                                                             "1cb2de9eae0c.jsonl");
        FILE *f = fopen(grown, "a");
        assert_non_null(f);
        fputs("{}\n", f);
        assert_int_equal(fclose(f), 0);

        assert_int_equal(usage_ahead_new(&inv, &root, &ua), 0);
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                assert_int_equal(usage_ahead_add(ua, &s[i]), 0);
        assert_int_equal(usage_ahead_start(ua), 1);
        usage_ahead_wait(ua); /* else the test may take a job before the thread gets to it */
        for (size_t i = 0; i < ELEMENTSOF(s); i++) {
                _cleanup_free_ char *line = NULL, *want = NULL, *rel = NULL;
                int r;

                if (i == 5)
                        continue; /* passed: its line is dropped */
                r = usage_ahead_take(ua, &s[i], &line);
                if (i == 1) {
                        assert_int_equal(r, 0);
                        continue;
                }
                assert_int_equal(r, 1);
                rel = util_strprintf(FZ_PROJ "%s%s.jsonl", i % 3 == 2 ? "archive/" : "", ids[i]);
                want = record_of(t, rel);
                assert_string_equal(line, want);
        }
        size_t built, taken;
        usage_ahead_counts(ua, &built, &taken);
        assert_int_equal(built, ELEMENTSOF(s) - 1);
        assert_int_equal(taken, ELEMENTSOF(s) - 2);
}

/* usage_ahead_would_wait() says whether taking a session's line would wait for (or build) it:
 * true only for a job the thread has not finished, at or after the executor's cursor. The
 * thread stays USAGE_AHEAD_MAX jobs ahead, so the jobs past that are pending until the executor
 * moves on. The transcripts do not exist: each job the thread gets to fails at once (DONE). */
static void test_usage_ahead_would_wait(void **state) {
        T *t = *state;
        const size_t n = USAGE_AHEAD_MAX + 40;
        _cleanup_free_ Session *s = calloc(n + 1, sizeof(Session));
        _cleanup_(usage_ahead_freep) UsageAhead *ua = NULL;
        Tree tree = {};
        Inventory inv = { .trees = &tree, .n_trees = 1, .sessions = s, .n_sessions = n + 1 };
        int root = t->fd;
        cpu_set_t set;
        char *line = NULL;

        if (sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2)
                test_skip("one CPU: the thread runs only with a second CPU");
        assert_non_null(s);
        for (size_t i = 0; i <= n; i++) {
                snprintf(s[i].id, sizeof s[i].id, "%08zu-8e49-442e-bc79-1cb2de9eae0c", i);
                s[i].project_dir = (char *)"-srv-none";
                s[i].state = SESSION_ACTIVE;
        }
        assert_int_equal(usage_ahead_new(&inv, &root, &ua), 0);
        for (size_t i = 0; i < n; i++) /* s[n]: not a job */
                assert_int_equal(usage_ahead_add(ua, &s[i]), 0);
        assert_false(usage_ahead_would_wait(ua, &s[n - 1])); /* not started: never waits */
        assert_int_equal(usage_ahead_start(ua), 1);
        usage_ahead_wait(ua);
        assert_false(usage_ahead_would_wait(ua, &s[0]));
        assert_false(usage_ahead_would_wait(ua, &s[USAGE_AHEAD_MAX - 1]));
        assert_true(usage_ahead_would_wait(ua, &s[USAGE_AHEAD_MAX]));
        assert_true(usage_ahead_would_wait(ua, &s[n - 1]));
        assert_false(usage_ahead_would_wait(ua, &s[n]));
        assert_false(usage_ahead_would_wait(NULL, &s[0]));

        /* the executor takes the first 10: the thread builds 10 more */
        assert_int_equal(usage_ahead_take(ua, &s[9], &line), 0);
        assert_null(line);
        usage_ahead_wait(ua);
        assert_false(usage_ahead_would_wait(ua, &s[USAGE_AHEAD_MAX + 9]));
        assert_true(usage_ahead_would_wait(ua, &s[USAGE_AHEAD_MAX + 10]));
        /* passed by the executor: taken, never waited for */
        assert_false(usage_ahead_would_wait(ua, &s[3]));
        /* the executor jumps ahead: the job it takes is its own to build, so it waits no more */
        assert_int_equal(usage_ahead_take(ua, &s[n - 1], &line), 0);
        assert_false(usage_ahead_would_wait(ua, &s[n - 1]));
        assert_false(usage_ahead_would_wait(ua, &s[USAGE_AHEAD_MAX + 20]));
}

static void test_usage_index_corpus_agrees(void **state) {
        T *t = *state;
        _cleanup_free_ char *src = fixture_path(fixture_testdata("corpus/tree"), "usage_record.jsonl");
        _cleanup_free_ char *golden = fixture_path(fixture_testdata("corpus/golden"), "salvage.jsonl");
        char line[8192];
        FILE *in = fopen(src, "r"), *g = fopen(golden, "r");
        unsigned n = 0, present = 0;

        assert_non_null(in);
        assert_non_null(g);
        while (fgets(line, sizeof line, in))
                write_usage(t, "a", line);
        fclose(in);
        while (fgets(line, sizeof line, g)) {
                char *p = strstr(line, ".jsonl\"");
                char id[37];
                assert_non_null(p);
                assert_true(p - line > 36);
                memcpy(id, p - 36, 36);
                id[36] = '\0';
                int want = usage_index_has_session(t->fd, id);
                assert_true(want >= 0);
                assert_int_equal(usage_index_has(t->idx, t->fd, id), want);
                present += want;
                n++;
        }
        fclose(g);
        assert_int_equal(n, 12);
        assert_true(present > 0 && present < n); /* the killed session has none */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_usage_index_missing_file_is_absent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_sees_appends_and_glued_records, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_unterminated_last_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_file_replaced_starts_over, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_escaped_ids_and_crlf, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_fast_lines_agree, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_huge_line_falls_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_corpus_agrees, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_sees_line_after_fragment, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_has_v1, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_history_freeze_writes_qwens_rebuild, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_history_freeze_keeps_the_files_bytes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_history_freeze_nothing_to_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_history_freeze_refuses_symlinks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_hold_looks_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_hold_freeze_looks_again, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_ahead_builds_the_salvage_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_ahead_would_wait, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
