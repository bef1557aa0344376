/* test_text.c: text.c, the one cleaning of text for terminals, logs and JSON: every control in
 * each style, ill-formed UTF-8, a terminal that is not UTF-8, display widths and fitting. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "text.h"
#include "util.h"
#include "testlocale.h"
#include "text.c" /* its static functions are tested here */

/* text_clean(): every control (C0, DEL, C1, bidi) in each style, and ill-formed UTF-8. */
static void test_text_clean_table(void **state) {
        static const struct {
                const char *in, *terminal, *quoted, *json;
        } cases[] = {
                { "plain /path ok", "plain /path ok", "plain /path ok", "plain /path ok" },
                { "esc\x1b[2J", "esc?[2J", "esc\\x1b[2J", "esc\x1b[2J" },
                { "osc\x1b]52;c;aGk=\x07", "osc?]52;c;aGk=?", "osc\\x1b]52;c;aGk=\\x07",
                  "osc\x1b]52;c;aGk=\x07" },
                { "c1 \xc2\x9b" "2J \xc2\x9d", "c1 ?2J ?", "c1 \\u009b2J \\u009d", "c1 \xc2\x9b" "2J \xc2\x9d" },
                { "del\x7f nl\n tab\t", "del? nl? tab?", "del\\x7f nl\\n tab\\t", "del\x7f nl\n tab\t" },
                { "rlo\xe2\x80\xae lre\xe2\x80\xaa lri\xe2\x81\xa6 pdi\xe2\x81\xa9 rlm\xe2\x80\x8f alm\xd8\x9c",
                  "rlo? lre? lri? pdi? rlm? alm?",
                  "rlo\\u202e lre\\u202a lri\\u2066 pdi\\u2069 rlm\\u200f alm\\u061c",
                  "rlo\xe2\x80\xae lre\xe2\x80\xaa lri\xe2\x81\xa6 pdi\xe2\x81\xa9 rlm\xe2\x80\x8f alm\xd8\x9c" },
                { "bad \xff\xc2 end \xe2\x80", "bad \xef\xbf\xbd\xef\xbf\xbd end \xef\xbf\xbd\xef\xbf\xbd",
                  "bad \\xff\\xc2 end \\xe2\\x80", "bad \xef\xbf\xbd\xef\xbf\xbd end \xef\xbf\xbd\xef\xbf\xbd" },
                { "keep caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 nbsp\xc2\xa0 zwj\xe2\x80\x8d",
                  "keep caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 nbsp\xc2\xa0 zwj\xe2\x80\x8d",
                  "keep caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 nbsp\xc2\xa0 zwj\xe2\x80\x8d",
                  "keep caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 nbsp\xc2\xa0 zwj\xe2\x80\x8d" },
                { "q\"b\\s", "q\"b\\s", "q\\\"b\\\\s", "q\"b\\s" },
                { "surrogate \xed\xa0\x80 overlong \xc0\xaf", "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd overlong \xef\xbf\xbd\xef\xbf\xbd",
                  "surrogate \\xed\\xa0\\x80 overlong \\xc0\\xaf", "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd overlong \xef\xbf\xbd\xef\xbf\xbd" },
        };
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *want[] = { cases[i].terminal, cases[i].quoted, cases[i].json };
                for (TextStyle st = TEXT_TERMINAL; st <= TEXT_JSON; st++) {
                        _cleanup_free_ char *got = text_clean(cases[i].in, st);
                        assert_non_null(got);
                        if (!streq(got, want[st])) {
                                print_error("case %zu style %d: got '%s' want '%s'\n", i, (int)st,
                                            got, want[st]);
                                fail();
                        }
                }
        }
        _cleanup_free_ char *null = text_clean(NULL, TEXT_TERMINAL);
        assert_string_equal(null, "");
        /* JSON text: DEL, C1 and bidi controls json-c leaves raw become \u escapes */
        _cleanup_free_ char *j = text_json_escape_controls("{\"a\": \"x\x7f\xc2\x9b\xe2\x80\xae\xc2\xa0\"}");
        assert_string_equal(j, "{\"a\": \"x\\u007f\\u009b\\u202e\xc2\xa0\"}");
}

/* text_needs_cleaning() says exactly when text_clean() changes a text, in each style. */
static void test_text_needs_cleaning_agrees(void **state) {
        static const char *const in[] = {
                "", "plain", "q\"b", "back\\slash", "esc\x1b", "del\x7f", "c1 \xc2\x9b",
                "caf\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "rlo\xe2\x80\xae", "bad\xff",
                "cut\xe2\x80", "nbsp\xc2\xa0", "tab\t", "nl\n",
        };

        (void)state;
        for (int utf8 = 1; utf8 >= 0; utf8--) {
                text_set_terminal_utf8(utf8);
                for (size_t i = 0; i < ELEMENTSOF(in); i++)
                        for (TextStyle st = TEXT_TERMINAL; st <= TEXT_JSON; st++) {
                                _cleanup_free_ char *c = text_clean(in[i], st);

                                assert_non_null(c);
                                if (text_needs_cleaning(in[i], strlen(in[i]), st) == streq(c, in[i]))
                                        fail_msg("'%s' style %d utf8 %d: needs_cleaning disagrees "
                                                 "with '%s'", in[i], (int)st, utf8, c);
                        }
        }
        text_set_terminal_utf8(true);
}

/* A terminal that is not UTF-8 gets ASCII only: \uNNNN, \UNNNNNNNN and '?'. */
static void test_text_terminal_not_utf8(void **state) {
        (void)state;
        text_set_terminal_utf8(false);
        {
                _cleanup_free_ char *c = text_clean("caf\xc3\xa9 \xf0\x9f\x98\x80 \xff \xc2\x9b \x1b "
                                                    "\xe2\x80\xae ok", TEXT_TERMINAL);
                assert_string_equal(c, "caf\\u00e9 \\U0001f600 ? ? ? ? ok");
        }
        {
                /* the other styles do not depend on the terminal */
                _cleanup_free_ char *q = text_clean("caf\xc3\xa9", TEXT_QUOTED);
                _cleanup_free_ char *j = text_clean("caf\xc3\xa9", TEXT_JSON);
                assert_string_equal(q, "caf\xc3\xa9");
                assert_string_equal(j, "caf\xc3\xa9");
        }
        text_set_terminal_utf8(true);
        {
                _cleanup_free_ char *c = text_clean("caf\xc3\xa9", TEXT_TERMINAL);
                assert_string_equal(c, "caf\xc3\xa9");
        }
}

/* Is cp a control, as text_clean() in TEXT_TERMINAL says ('?')? */
static bool test_is_control(uint32_t cp) {
        _cleanup_(strbuf_done) StrBuf b = {};
        char u[4];

        assert_int_equal(text_clean_append(&b, u, utf8_encode(cp, u), TEXT_TERMINAL), 0);
        return b.len == 1 && b.buf[0] == '?';
}

/* The controls are C0, DEL, C1 and the bidi controls, and nothing next to them. */
static void test_text_is_control_bounds(void **state) {
        static const uint32_t yes[] = { 0x00, 0x1f, 0x7f, 0x80, 0x9f, 0x61c, 0x200e, 0x200f,
                                        0x202a, 0x202e, 0x2066, 0x2069 };
        static const uint32_t no[] = { 0x20, 0x7e, 0xa0, 0x61b, 0x61d, 0x200d, 0x2010, 0x2029,
                                       0x202f, 0x2065, 0x206a, 0xfffd, 0x1f600 };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (!test_is_control(yes[i]))
                        fail_msg("U+%04X is a control", (unsigned)yes[i]);
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (test_is_control(no[i]))
                        fail_msg("U+%04X is no control", (unsigned)no[i]);
}

/* Widths are wcwidth()'s columns in a UTF-8 locale; a fit never cuts a character. */
static void test_text_width_and_fit(void **state) {
        size_t cols;

        (void)state;
        test_locale_utf8();
        assert_int_equal(text_width("abc", 3), 3);
        assert_int_equal(text_width("a\xe4\xb8\xad", 4), 3);       /* CJK: 2 columns */
        assert_int_equal(text_width("e\xcc\x81", 3), 1);           /* a combining mark: 0 */
        assert_int_equal(text_width("\xff", 1), 1);                /* ill-formed: one '?' */
        assert_int_equal(text_width("\xe4\xb8\xad\xe4\xb8\xad", 6), 4);
        assert_int_equal(text_fit("\xe4\xb8\xad\xe4\xb8\xad", 6, 3, &cols), 3);
        assert_int_equal(cols, 2);
        assert_int_equal(text_fit("\xe4\xb8\xad\xe4\xb8\xad", 6, 1, &cols), 0);
        assert_int_equal(cols, 0);
        assert_int_equal(text_fit("abcdef", 6, 4, NULL), 4);
        assert_int_equal(text_fit("abc", 3, 10, &cols), 3);
        assert_int_equal(cols, 3);
        setlocale(LC_CTYPE, "C");
}

/* text_fputs_terminal() cleans each line and keeps the line breaks. */
static void test_text_fputs_terminal_lines(void **state) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f;

        (void)state;
        f = open_memstream(&buf, &n);
        assert_non_null(f);
        assert_int_equal(text_fputs_terminal("a\x1b[2J\nb\tc\n\xc2\x9b\n", 13, f), 0);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, "a?[2J\nb?c\n?\n");
        free(buf);
}

/* text_clean_append() appends, and stops at no NUL: n bytes are n bytes. */
static void test_text_clean_append_bytes(void **state) {
        _cleanup_(strbuf_done) StrBuf b = {};

        (void)state;
        assert_int_equal(strbuf_append(&b, "x=", 2), 0);
        assert_int_equal(text_clean_append(&b, "a\0b\"", 4, TEXT_QUOTED), 0);
        assert_int_equal(b.len, 10);
        assert_memory_equal(b.buf, "x=a\\x00b\\\"", 10);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_text_clean_table),
                cmocka_unit_test(test_text_needs_cleaning_agrees),
                cmocka_unit_test(test_text_terminal_not_utf8),
                cmocka_unit_test(test_text_is_control_bounds),
                cmocka_unit_test(test_text_width_and_fit),
                cmocka_unit_test(test_text_fputs_terminal_lines),
                cmocka_unit_test(test_text_clean_append_bytes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
