/* test_journal.c: the action log's one-line key=value form (journal.h, journal_format_line()):
 * the fixed fields, the typed fields after them (numbers, strings, quoting and escaping of what
 * came from a session file), the field names journald would refuse, and the file target writing
 * exactly that line. The sd_journal_sendv() path is tests/faults (ld --wrap). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "journal.h"
#include "macro.h"
#include "util.h"
#include "journal.c" /* its static functions are tested here */

/* Format e as the one-line key=value form used for stderr and files (without '\n'): a
 * malloc'ed string or NULL (ENOMEM, an invalid event or field name). run_id may be NULL. */
static char *journal_format_line(const JournalEntry *e, const char *run_id) {
        char *line = NULL;

        return journal_format_line_full(e, run_id, &line) < 0 ? NULL : line;
}

#define RUN "0123456789abcdef0123456789abcdef"

/* The run summary as the executor writes it (actions.c): every counter a number field, the
 * warning a string field, in this order, byte for byte the line the "KEY=value\n" text gave. */
static void test_journal_summary_fields(void **state) {
        const JournalField f[] = {
                JOURNAL_FIELD_U64("QGC_ARCHIVED", 3),
                JOURNAL_FIELD_U64("QGC_DELETED", 2),
                JOURNAL_FIELD_U64("QGC_ORPHANS", 0),
                JOURNAL_FIELD_U64("QGC_SKIPPED", 1),
                JOURNAL_FIELD_U64("QGC_FAILED", 0),
                JOURNAL_FIELD_U64("QGC_SALVAGED", 2),
                JOURNAL_FIELD_U64("QGC_FREED_BYTES", 4096),
                JOURNAL_FIELD_U64("QGC_ARCHIVED_BYTES", 18446744073709551615ULL),
                JOURNAL_FIELD_U64("QGC_HELD_BACK", 0),
                JOURNAL_FIELD_U64("QGC_HELD_BACK_BYTES", 0),
                JOURNAL_FIELD_STR("QGC_WARNING", "2 deletions postponed"),
                JOURNAL_FIELD_U64("QGC_COMPRESSED", 1),
                JOURNAL_FIELD_U64("QGC_ORIGINAL_BYTES", 1000),
                JOURNAL_FIELD_U64("QGC_COMPRESSED_BYTES", 125),
        };
        JournalEntry e = {
                .event = JOURNAL_RUN_SUMMARY,
                .message = "qgc run finished",
                .bytes = 7,
                .has_bytes = true,
                .fields = f,
                .n_fields = ELEMENTSOF(f),
        };
        _cleanup_free_ char *l = journal_format_line(&e, RUN);

        (void)state;
        assert_non_null(l);
        assert_string_equal(l, "MESSAGE=\"qgc run finished\" "
                               "MESSAGE_ID=7b3ba3048f994cb7b8b1a09ee54cb397 PRIORITY=5 SYSLOG_IDENTIFIER=qgc QGC_ACTION=run-summary "
                               "QGC_BYTES=7 QGC_RUN=" RUN " QGC_ARCHIVED=3 QGC_DELETED=2 "
                               "QGC_ORPHANS=0 QGC_SKIPPED=1 QGC_FAILED=0 QGC_SALVAGED=2 "
                               "QGC_FREED_BYTES=4096 QGC_ARCHIVED_BYTES=18446744073709551615 "
                               "QGC_HELD_BACK=0 QGC_HELD_BACK_BYTES=0 "
                               "QGC_WARNING=\"2 deletions postponed\" QGC_COMPRESSED=1 "
                               "QGC_ORIGINAL_BYTES=1000 QGC_COMPRESSED_BYTES=125");

        /* fewer fields: only those counted */
        e.n_fields = 1;
        free(l);
        l = journal_format_line(&e, NULL);
        assert_non_null(l);
        assert_non_null(strstr(l, " QGC_BYTES=7 QGC_ARCHIVED=3"));
        assert_null(strstr(l, "QGC_DELETED"));
        assert_null(strstr(l, "QGC_RUN"));
}

/* A string field is quoted when it needs it and cleaned like every other value: no control, C1
 * or bidi character reaches the log raw, and the entry stays one line. */
static void test_journal_string_fields_escaped(void **state) {
        const JournalField f[] = {
                JOURNAL_FIELD_STR("QGC_A", "plain"),
                JOURNAL_FIELD_STR("QGC_B", ""),
                JOURNAL_FIELD_STR("QGC_C", "k=v"),
                JOURNAL_FIELD_STR("QGC_D", "say \"hi\"\\"),
                JOURNAL_FIELD_STR("QGC_E", "line1\nline2\tx"),
                JOURNAL_FIELD_STR("QGC_F", "evil\xe2\x80\xae" "txt\x1b[31m"),
                JOURNAL_FIELD_STR("QGC_G", NULL), /* left out */
                JOURNAL_FIELD_U64("QGC_H", 0),
        };
        JournalEntry e = {
                .event = JOURNAL_ERASED,
                .fields = f,
                .n_fields = ELEMENTSOF(f),
        };
        _cleanup_free_ char *l = journal_format_line(&e, NULL);

        (void)state;
        assert_non_null(l);
        assert_string_equal(l, "MESSAGE=erased MESSAGE_ID=d45f8cd6b5864b6e93ddd4537003c5d0 "
                               "PRIORITY=6 SYSLOG_IDENTIFIER=qgc QGC_ACTION=erased "
                               "QGC_A=plain QGC_B=\"\" QGC_C=\"k=v\" "
                               "QGC_D=\"say \\\"hi\\\"\\\\\" "
                               "QGC_E=\"line1\\nline2\\tx\" "
                               "QGC_F=\"evil\\u202etxt\\x1b[31m\" QGC_H=0");
        assert_null(strchr(l, '\n'));
        assert_null(strstr(l, "QGC_G"));
}

/* Names journald refuses (lower case, a leading '_' or digit, '=', empty, over 64 characters)
 * are an error, never a malformed line. */
static void test_journal_field_names_checked(void **state) {
        static const char *const bad[] = {
                "", "qgc_lower", "_QGC_TRUSTED", "1QGC", "QGC=X", "QGC X", "QGC\n",
                "Q2345678901234567890123456789012345678901234567890123456789012345", /* 65 */
        };
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                const JournalField f[] = { JOURNAL_FIELD_U64(bad[i], 1) };
                JournalEntry e = { .event = JOURNAL_COMPRESSED, .fields = f, .n_fields = 1 };
                char *l = journal_format_line(&e, NULL);

                if (l)
                        fail_msg("field name '%s' accepted: %s", bad[i], l);
        }
        const JournalField null_name[] = { JOURNAL_FIELD_U64(NULL, 1) };
        JournalEntry e = { .event = JOURNAL_COMPRESSED, .fields = null_name, .n_fields = 1 };
        assert_null(journal_format_line(&e, NULL));

        /* 64 characters is journald's limit, and fine */
        const JournalField ok[] = {
                JOURNAL_FIELD_U64("Q23456789012345678901234567890123456789012345678901234567890123_", 9),
        };
        e.fields = ok;
        _cleanup_free_ char *l = journal_format_line(&e, NULL);
        assert_non_null(l);
        assert_non_null(strstr(l, " Q23456789012345678901234567890123456789012345678901234567890123_=9"));
}

/* The file target writes the formatted line and '\n', and nothing for an entry it refuses. */
static void test_journal_file_target_writes_fields(void **state) {
        char dir[] = "/tmp/qgc-test-journal.XXXXXX";
        const JournalField f[] = {
                JOURNAL_FIELD_U64("QGC_ORIGINAL_BYTES", 123456),
                JOURNAL_FIELD_U64("QGC_COMPRESSED_BYTES", 789),
        };
        const JournalField bad[] = { JOURNAL_FIELD_U64("qgc", 1) };
        JournalEntry e = {
                .event = JOURNAL_COMPRESSED,
                .message = "compressed session s1",
                .session = "s1",
                .bytes = 123456,
                .has_bytes = true,
                .fields = f,
                .n_fields = ELEMENTSOF(f),
        };
        _cleanup_free_ char *path = NULL, *line = NULL, *want = NULL;
        char buf[4096];
        ssize_t n;
        int fd;

        (void)state;
        assert_non_null(mkdtemp(dir));
        path = util_strprintf("%s/qgc.log", dir);
        assert_non_null(path);
        assert_int_equal(journal_open(JOURNAL_TARGET_FILE, path, RUN), 0);
        assert_int_equal(journal_log(&e), 0);
        e.fields = bad;
        e.n_fields = 1;
        assert_int_equal(journal_log(&e), -EINVAL);
        journal_close();

        e.fields = f;
        e.n_fields = ELEMENTSOF(f);
        line = journal_format_line(&e, RUN);
        assert_non_null(line);
        want = util_strprintf("%s\n", line);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        assert_true(n > 0);
        buf[n] = 0;
        assert_string_equal(buf, want);
        assert_non_null(strstr(buf, "QGC_SESSION=s1 QGC_BYTES=123456 QGC_RUN=" RUN
                                    " QGC_ORIGINAL_BYTES=123456 QGC_COMPRESSED_BYTES=789\n"));
        (void)unlink(path);
        (void)rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_journal_summary_fields),
                cmocka_unit_test(test_journal_string_fields_escaped),
                cmocka_unit_test(test_journal_field_names_checked),
                cmocka_unit_test(test_journal_file_target_writes_fields),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
