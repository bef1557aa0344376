/* test_sessiontimes: qgc's record of archive and restore times (session-times.h): the one-pass
 * reader at its maximum and one past it, lines that do not parse, the facts the scan gives the
 * sessions, the append and the compaction. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fs/apply_helpers.h"
#include "qwen-times.h"
#include "session-times.h"

/* The facts the scan gives session id of the corpus tree at qwen with text as its
 * session-times file. */
static void scan_with(const char *qwen, const char *text, size_t n, const char *id,
                      Session *ret) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const Session *s;

        assert_int_equal(fixture_write_bytes(qwen, SESSION_TIMES_FILE, text, n), 0);
        assert_int_equal(apply_scan(qwen, &inv), 0);
        assert_non_null(s = inventory_find(inv, 0, id));
        *ret = (Session){ .archived_at = s->archived_at, .restored_at = s->restored_at,
                          .restore_pending = s->restore_pending,
                          .restore_to_archive = s->restore_to_archive };
}

/* Every line that does not parse is skipped, the others are taken in order: each garbled line
 * names S_FH, whose facts any of them taken would change (an archive ends a pending restore). */
static void test_sessiontimes_parse_skips_garbled_lines(void **state) {
        static const char text[] =
                "archived 1700000000000 " S_ARCH "\n"
                "restore 1700000000001 " S_TEXT "\n"
                "restore-to-archive 1700000000002 " S_FH "\n"
                "restored 1700000000003 " S_TEXT "\n"
                "archived -5 " S_FH "\n"              /* negative time */
                "archived 0 " S_FH "\n"               /* no time */
                "archived 17x " S_FH "\n"             /* not a number */
                "archived 99999999999999999999 " S_FH "\n" /* out of range */
                "deleted 1700000000000 " S_FH "\n"    /* unknown event */
                "archived 1700000000000 ../../etc\n"  /* not a session id */
                "archived 1700000000000 " S_FH " x\n" /* trailing words */
                "archived  1700000000000 " S_FH "\n"  /* two spaces */
                "archived\n"
                "\n"
                "archived 1700000000009 " S_FH;       /* cut short: no '\n' */
        /* a NUL inside a line */
        static const char nul[] = "archived 1\0 x\nrestore 5 " S_ARCH "\n";
        _cleanup_free_ char *root = NULL, *qwen = NULL;
        Session s;
        (void)state;

        assert_int_equal(fixture_new(&root), 0);
        assert_int_equal(fixture_copy_tree(fixture_testdata("corpus/tree"), root, "qwen"), 0);
        qwen = fixture_path(root, "qwen");
        scan_with(qwen, text, strlen(text), S_ARCH, &s);
        assert_int_equal(s.archived_at, 1700000000000);
        assert_false(s.restore_pending);
        scan_with(qwen, text, strlen(text), S_TEXT, &s);
        assert_int_equal(s.restored_at, 1700000000001);
        assert_false(s.restore_pending);
        scan_with(qwen, text, strlen(text), S_FH, &s);
        assert_int_equal(s.archived_at, 0);
        assert_int_equal(s.restored_at, 1700000000002);
        assert_true(s.restore_pending && s.restore_to_archive);
        scan_with(qwen, nul, sizeof nul - 1, S_ARCH, &s);
        assert_int_equal(s.restored_at, 5);
        assert_true(s.restore_pending);
        assert_int_equal(fixture_rm_rf(root), 0);
        fixture_free(TAKE_PTR(root));
}

/* A file of exactly SESSION_TIMES_MAX bytes is read (to its last line, in one pass); one byte
 * more and it is ignored whole (-EFBIG: no record, no grace). */
static void test_sessiontimes_read_at_max_and_one_past(void **state) {
        _cleanup_free_ char *root = NULL, *qwen = NULL, *text = NULL;
        static const char line[] = "archived 1700000000000 " S_ARCH "\n";
        size_t l = strlen(line), n = SESSION_TIMES_MAX / l;
        Session s;
        (void)state;

        assert_int_equal(fixture_new(&root), 0);
        assert_int_equal(fixture_copy_tree(fixture_testdata("corpus/tree"), root, "qwen"), 0);
        qwen = fixture_path(root, "qwen");
        text = malloc(SESSION_TIMES_MAX + 2);
        assert_non_null(text);
        for (size_t i = 0; i < n; i++)
                memcpy(text + i * l, line, l);
        /* the last whole line says another time: the reader got to it */
        text[(n - 1) * l + strlen("archived 170000000000")] = '7';
        /* padding to exactly the maximum: a line that does not parse */
        memset(text + n * l, 'x', SESSION_TIMES_MAX - n * l - 1);
        text[SESSION_TIMES_MAX - 1] = '\n';
        scan_with(qwen, text, SESSION_TIMES_MAX, S_ARCH, &s);
        assert_int_equal(s.archived_at, 1700000000007);

        text[SESSION_TIMES_MAX] = '\n';
        scan_with(qwen, text, SESSION_TIMES_MAX + 1, S_ARCH, &s);
        assert_int_equal(s.archived_at, 0);
        assert_int_equal(fixture_rm_rf(root), 0);
        fixture_free(TAKE_PTR(root));
}

/* The scan gives each session the facts of its latest lines: an archive after a restore ends
 * the grace, a restore with no end is pending; a file over the maximum gives none. */
static void test_sessiontimes_scan_facts(void **state) {
        _cleanup_free_ char *root = NULL, *qwen = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const Session *s;
        (void)state;

        assert_int_equal(fixture_new(&root), 0);
        assert_int_equal(fixture_copy_tree(fixture_testdata("corpus/tree"), root, "qwen"), 0);
        qwen = fixture_path(root, "qwen");
        assert_int_equal(fixture_write(qwen, SESSION_TIMES_FILE,
                                       "restore 1000 " S_ARCH "\n"
                                       "restored 1001 " S_ARCH "\n"
                                       "archived 2000 " S_ARCH "\n"
                                       "archived 3000 " S_TEXT "\n"
                                       "restore 4000 " S_TEXT "\n"
                                       "restore-to-archive 5000 " S_FH "\n"
                                       "restore 6000 00000000-0000-4000-8000-000000000099\n"),
                         0);
        assert_int_equal(apply_scan(qwen, &inv), 0);
        assert_non_null(s = inventory_find(inv, 0, S_ARCH));
        assert_int_equal(s->archived_at, 2000);
        assert_int_equal(s->restored_at, 0);
        assert_false(s->restore_pending);
        assert_non_null(s = inventory_find(inv, 0, S_TEXT));
        assert_int_equal(s->archived_at, 0);
        assert_int_equal(s->restored_at, 4000);
        assert_true(s->restore_pending);
        assert_false(s->restore_to_archive);
        assert_non_null(s = inventory_find(inv, 0, S_FH));
        assert_true(s->restore_pending && s->restore_to_archive);
        assert_non_null(s = inventory_find(inv, 0, S_API));
        assert_int_equal(s->archived_at + s->restored_at, 0);
        inv = inventory_free(inv);

        /* over the maximum: no fact at all */
        assert_int_equal(fixture_write_size(qwen, SESSION_TIMES_FILE, SESSION_TIMES_MAX + 1), 0);
        assert_int_equal(apply_scan(qwen, &inv), 0);
        assert_non_null(s = inventory_find(inv, 0, S_TEXT));
        assert_int_equal(s->restored_at, 0);
        assert_false(s->restore_pending);
        assert_int_equal(fixture_rm_rf(root), 0);
        fixture_free(TAKE_PTR(root));
}

/* The append creates .qgc/ and the file, and adds to it; past SESSION_TIMES_COMPACT the
 * compaction keeps the latest line of each session the scan found (a completed restore keeps
 * its start), and drops the others. */
/* A line is written only for an id that reads back as itself: Deep Code's id rule allows a
 * newline in a file name, which would start a forged record of another session. */
static void test_sessiontimes_line_refuses_control_characters(void **state) {
        _cleanup_(strbuf_done) StrBuf sb = {};
        (void)state;

        assert_int_equal(session_times_line(&sb, SESSION_TIME_RESTORED, 10, "a\nrestored 99 b"),
                         -EINVAL);
        assert_int_equal(session_times_line(&sb, SESSION_TIME_RESTORED, 10, "a\rb"), -EINVAL);
        assert_int_equal(session_times_line(&sb, SESSION_TIME_RESTORED, 10, "a\x7f"), -EINVAL);
        assert_int_equal(session_times_line(&sb, SESSION_TIME_RESTORED, 10, ""), -EINVAL);
        assert_int_equal(sb.len, 0);
        /* a space is part of the id: the id is the rest of the line */
        assert_int_equal(session_times_line(&sb, SESSION_TIME_RESTORED, 10, "a b"), 0);
        assert_string_equal(sb.buf, "restored 10 a b\n");
}

static void test_sessiontimes_append_and_compact(void **state) {
        _cleanup_free_ char *root = NULL, *qwen = NULL, *got = NULL, *big = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_close_ int gfd = -EBADF;
        _cleanup_(strbuf_done) StrBuf sb = {};
        static const char other[] = "archived 7 00000000-0000-4000-8000-000000000099\n";
        size_t n;
        (void)state;

        assert_int_equal(fixture_new(&root), 0);
        assert_int_equal(fixture_copy_tree(fixture_testdata("corpus/tree"), root, "qwen"), 0);
        qwen = fixture_path(root, "qwen");
        gfd = open(qwen, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(gfd >= 0);
        assert_int_equal(session_times_line(&sb, SESSION_TIME_RESTORE, 10, S_TEXT), 0);
        assert_int_equal(session_times_append(gfd, 0, sb.buf, sb.len, NULL, NULL), 0);
        assert_int_equal(session_times_append(gfd, 0, "restored 11 " S_TEXT "\n", 49, NULL, NULL),
                         0);
        got = test_read_rel(qwen, SESSION_TIMES_FILE);
        assert_string_equal(got, "restore 10 " S_TEXT "\nrestored 11 " S_TEXT "\n");

        /* not needed below the threshold */
        assert_int_equal(apply_scan(qwen, &inv), 0);
        assert_int_equal(qwen_times_compact(gfd, inv, 0), 0);
        /* past it: lines of a session the scan does not know, repeated */
        n = SESSION_TIMES_COMPACT / strlen(other) + 1;
        big = malloc(n * strlen(other) + 1);
        assert_non_null(big);
        for (size_t i = 0; i < n; i++)
                memcpy(big + i * strlen(other), other, strlen(other));
        assert_int_equal(session_times_append(gfd, 0, big, n * strlen(other), NULL, NULL), 0);
        assert_int_equal(session_times_append(gfd, 0, "archived 20 " S_ARCH "\n", 49, NULL, NULL),
                         0);
        assert_int_equal(qwen_times_compact(gfd, inv, 0), 1);
        free(got);
        got = test_read_rel(qwen, SESSION_TIMES_FILE);
        assert_non_null(strstr(got, "restore 10 " S_TEXT "\nrestored 11 " S_TEXT "\n"));
        assert_non_null(strstr(got, "archived 20 " S_ARCH "\n"));
        assert_int_equal(strlen(got), 3 * 49 - 1);
        assert_int_equal(fixture_rm_rf(root), 0);
        fixture_free(TAKE_PTR(root));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sessiontimes_parse_skips_garbled_lines),
                cmocka_unit_test(test_sessiontimes_read_at_max_and_one_past),
                cmocka_unit_test(test_sessiontimes_scan_facts),
                cmocka_unit_test(test_sessiontimes_line_refuses_control_characters),
                cmocka_unit_test(test_sessiontimes_append_and_compact),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
