/* test_json.c: json.h's grammar (JSON.parse's, one walk in json.c: json_parse() builds,
 * json_members() and json_capture() validate and capture) and the table of JSON inputs
 * (json-input.c). The sinks must accept exactly the same texts. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json-dialect.h"
#include "json-input.h"
#include "macro.h"
#include "util.h"

typedef struct GrammarCase {
        const char *text;
        size_t n; /* 0: strlen(text) */
        bool ok;  /* does JSON.parse accept it? */
} GrammarCase;

static const GrammarCase grammar[] = {
        { "0", 0, true },
        { "-0", 0, true },
        { "1.5e+10", 0, true },
        { "1E5", 0, true },
        { "-12.25e-3", 0, true },
        { "\"a\"", 0, true },
        { "[]", 0, true },
        { "{}", 0, true },
        { " \t\r\n{\"a\":[1,2,{\"b\":null}]} \n", 0, true },
        { "true", 0, true },
        { "false", 0, true },
        { "null", 0, true },
        { "\"\\u00e9\\/\\b\\f\\n\\r\\t\\\"\\\\\"", 0, true },
        { "\"\\ud83d\\ude00\"", 0, true },
        { "\"\\ud800\"", 0, true }, /* a lone surrogate parses (U+FFFD later) */
        { "\"caf\xc3\xa9 \xff\"", 0, true }, /* ill-formed UTF-8 in a string: U+FFFD, as Node */
        { "{\"a\":1,\"a\":2}", 0, true },
        { "", 0, false },
        { "   ", 0, false },
        { "01", 0, false },
        { "1.", 0, false },
        { ".5", 0, false },
        { "+1", 0, false },
        { "-", 0, false },
        { "1e", 0, false },
        { "1e+", 0, false },
        { "NaN", 0, false },
        { "Infinity", 0, false },
        { "'a'", 0, false },
        { "{\"a\":1,}", 0, false },
        { "[1,]", 0, false },
        { "[1 2]", 0, false },
        { "{a:1}", 0, false },
        { "{\"a\" 1}", 0, false },
        { "\"\x01\"", 0, false },   /* a raw control in a string */
        { "\"tab\there\"", 0, false },
        { "\"\\u12\"", 0, false },
        { "\"\\q\"", 0, false },
        { "\"abc", 0, false },
        { "/*c*/1", 0, false },
        { "1 // c", 0, false },
        { "1 2", 0, false },
        { "{} x", 0, false },
        { "tru", 0, false },
        { "nul", 0, false },
        { "\xef\xbb\xbf{}", 0, false }, /* a BOM */
        { "{}\0", 3, false },          /* a NUL after the value */
        { "\"a\0b\"", 5, false },      /* a NUL inside a string is a raw control */
};

/* json_parse() accepts exactly what JSON.parse accepts, and json_members() with validate agrees
 * on every value put in an object. */
static void test_json_grammar_table(void **state) {
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(grammar); i++) {
                const GrammarCase *c = &grammar[i];
                size_t n = c->n ? c->n : strlen(c->text);
                json_object *o = NULL;
                int r = json_parse(c->text, n, &o);
                _cleanup_(strbuf_done) StrBuf w = {};
                const char *keys[] = { "k" };
                JsonSpan span;

                if ((r >= 0) != c->ok)
                        fail_msg("case %zu '%s': json_parse() %d, JSON.parse %s", i, c->text, r,
                                 c->ok ? "accepts" : "refuses");
                if (r < 0)
                        assert_int_equal(r, -EBADMSG);
                json_object_put(o);

                assert_int_equal(strbuf_append(&w, "{\"k\":", 5), 0);
                assert_int_equal(strbuf_append(&w, c->text, n), 0);
                assert_int_equal(strbuf_append(&w, "}", 1), 0);
                r = json_members(w.buf, w.len, true, keys, 1, &span);
                if ((r >= 0) != c->ok)
                        fail_msg("case %zu '%s': json_members() %d disagrees with json_parse()", i,
                                 c->text, r);
                o = NULL;
                r = json_parse(w.buf, w.len, &o);
                if ((r >= 0) != c->ok)
                        fail_msg("case %zu '%s' in an object: json_parse() %d", i, c->text, r);
                json_object_put(o);
        }
}

/* Small integers are int64, the rest doubles; strings decode escapes and surrogate pairs. */
static void test_json_parse_values(void **state) {
        json_object *o = NULL;

        (void)state;
        assert_int_equal(json_parse("1234567890123456", 16, &o), 0);
        assert_true(json_object_is_type(o, json_type_int));
        assert_int_equal(json_object_get_int64(o), INT64_C(1234567890123456));
        json_object_put(o);
        assert_int_equal(json_parse("12345678901234567", 17, &o), 0);
        assert_true(json_object_is_type(o, json_type_double));
        assert_true(json_object_get_double(o) == 12345678901234568.0); /* as JS rounds it */
        json_object_put(o);
        assert_int_equal(json_parse("2.5", 3, &o), 0);
        assert_true(json_object_is_type(o, json_type_double));
        json_object_put(o);
        static const char esc[] = "\"\\u00e9\\ud83d\\ude00\\ud800x\"";
        assert_int_equal(json_parse(esc, strlen(esc), &o), 0);
        assert_string_equal(json_object_get_string(o),
                            "\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx");
        json_object_put(o);
        /* the last of a repeated key */
        assert_int_equal(json_parse("{\"a\":1,\"a\":\"two\"}", 17, &o), 0);
        assert_string_equal(json_get_string(o, "a"), "two");
        json_object_put(o);
        /* JSON null is NULL */
        o = (json_object *)(uintptr_t)1;
        assert_int_equal(json_parse(" null ", 6, &o), 0);
        assert_null(o);
}

/* Nesting: 1000 levels parse, 1001 are refused (json-c frees recursively). */
static void test_json_depth_limit(void **state) {
        char *s = malloc(2 * 1001 + 1);
        json_object *o = NULL;

        (void)state;
        assert_non_null(s);
        for (size_t depth = 1000; depth <= 1001; depth++) {
                memset(s, '[', depth);
                memset(s + depth, ']', depth);
                o = NULL;
                assert_int_equal(json_parse(s, 2 * depth, &o), depth == 1000 ? 0 : -EBADMSG);
                json_object_put(o);
        }
        free(s);
}

/* json_members(): the text of each wanted value, the last of a repeated key, NULL when absent. */
static void test_json_members_spans(void **state) {
        static const char text[] = "{\"a\": \"x\", \"b\": {\"c\": [1, 2]}, \"a\":  2 ,\"e\\u0064\":true}";
        const char *keys[] = { "a", "b", "d", "ed" };
        JsonSpan sp[4];

        (void)state;
        for (int validate = 0; validate <= 1; validate++) {
                assert_int_equal(json_members(text, strlen(text), validate, keys, 4, sp), 0);
                assert_int_equal(sp[0].n, 1);
                assert_memory_equal(sp[0].s, "2", 1);
                assert_int_equal(sp[1].n, strlen("{\"c\": [1, 2]}"));
                assert_memory_equal(sp[1].s, "{\"c\": [1, 2]}", sp[1].n);
                assert_null(sp[2].s);
                /* a key with an escape is compared decoded */
                assert_int_equal(sp[3].n, 4);
                assert_memory_equal(sp[3].s, "true", 4);
        }
        /* not an object */
        assert_int_equal(json_members("[1]", 3, true, keys, 1, sp), -EBADMSG);
}

/* json_capture(): one pass into a child object, its spans from the last occurrence. */
static void test_json_capture_children(void **state) {
        static const char text[] = "{\"m\": {\"x\": 1}, \"k\": 0, \"m\": {\"y\": \"v\", \"x\": 3}}";
        const char *ckeys[] = { "x", "y" };
        JsonSpan cspans[2];
        const JsonCapture child = { .keys = ckeys, .n_keys = 2, .spans = cspans };
        const JsonCapture *children[] = { &child, NULL };
        const char *keys[] = { "m", "k" };
        JsonSpan spans[2];
        const JsonCapture cap = { .keys = keys, .n_keys = 2, .spans = spans, .children = children };

        (void)state;
        assert_int_equal(json_capture(text, strlen(text), true, &cap), 0);
        assert_int_equal(spans[1].n, 1);
        assert_memory_equal(cspans[0].s, "3", 1);
        assert_int_equal(cspans[1].n, 3);
        assert_memory_equal(cspans[1].s, "\"v\"", 3);
        /* an invalid text is refused when validating */
        assert_int_equal(json_capture("{\"m\": {\"x\": 01}}", 16, true, &cap), -EBADMSG);
}

/* The table of inputs: every row read with JSON.parse's grammar, bounded, and documented. */
static void test_json_input_table(void **state) {
        (void)state;
        for (JsonInput i = 0; i < _JSON_INPUT_MAX; i++) {
                const JsonInputInfo *info = json_input_info(i);

                assert_non_null(info);
                assert_int_equal(info->dialect, JSON_DIALECT_PARSE);
                assert_true(info->max > 0 && info->max <= 16 * 1024 * 1024);
                assert_non_null(info->file);
                assert_non_null(info->qwen);
                assert_non_null(info->qgc);
        }
        assert_string_equal(json_input_dialect_to_string(JSON_DIALECT_PARSE), "JSON.parse");
        assert_null(json_input_dialect_to_string(_JSON_DIALECT_MAX));
}

/* json_get_string() and json_get_int(): only the member's own type (an integral double counts). */
static void test_json_get_members(void **state) {
        static const char text[] = "{\"s\":\"x\",\"i\":7,\"d\":3.0,\"f\":3.5,\"n\":\"3\",\"z\":null}";
        json_object *o = NULL;
        int64_t v = -1;

        (void)state;
        assert_int_equal(json_parse(text, strlen(text), &o), 0);
        assert_string_equal(json_get_string(o, "s"), "x");
        assert_null(json_get_string(o, "i"));
        assert_null(json_get_string(o, "missing"));
        assert_null(json_get_string(NULL, "s"));
        assert_true(json_get_int(o, "i", &v));
        assert_int_equal(v, 7);
        assert_true(json_get_int(o, "d", &v));
        assert_int_equal(v, 3);
        assert_false(json_get_int(o, "f", &v));
        assert_false(json_get_int(o, "n", &v));
        assert_false(json_get_int(o, "z", &v));
        assert_false(json_get_int(o, "missing", &v));
        assert_false(json_get_int(NULL, "i", &v));
        json_object_put(o);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_json_grammar_table),
                cmocka_unit_test(test_json_parse_values),
                cmocka_unit_test(test_json_depth_limit),
                cmocka_unit_test(test_json_members_spans),
                cmocka_unit_test(test_json_capture_children),
                cmocka_unit_test(test_json_input_table),
                cmocka_unit_test(test_json_get_members),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
