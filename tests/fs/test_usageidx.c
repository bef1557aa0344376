/* test_usageidx: the incremental usage_record.jsonl index answers exactly as usage_has_session. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "macro.h"
#include "usage.h"
#include "usageidx.h"

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
        assert_int_equal(usage_has_session(t->fd, id), want);
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
                int want = usage_has_session(t->fd, id);
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
                cmocka_unit_test_setup_teardown(test_usage_index_huge_line_falls_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_usage_index_corpus_agrees, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
