/* test_js.c: JavaScript's value rules (js.h) at their edges: Number::toString, ToString,
 * truthiness, "+", JSON.stringify's property order, trim, Date.parse and the command line's
 * strict ISO 8601 form (one parser, two grammars). Expected values are node's. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "js.h"
#include "macro.h"
#include "util.h"
#include "js.c" /* its static functions are tested here */

static char *number(double d) {
        StrBuf b = {};

        assert_int_equal(js_number_append(&b, d), 0);
        return strbuf_steal(&b);
}

static void test_js_number_to_string(void **state) {
        static const struct {
                double d;
                const char *want; /* String(d) in node */
        } cases[] = {
                { 0, "0" },
                { -0.0, "0" },
                { 1, "1" },
                { -1.5, "-1.5" },
                { 0.1, "0.1" },
                { 0.1 + 0.2, "0.30000000000000004" },
                { 1e20, "100000000000000000000" },
                { 123456789012345680000.0, "123456789012345680000" },
                { 1e21, "1e+21" },
                { 1.5e21, "1.5e+21" },
                { 1e-6, "0.000001" },
                { 1.5e-6, "0.0000015" },
                { 1e-7, "1e-7" },
                { 1.5e-7, "1.5e-7" },
                { 9007199254740992.0, "9007199254740992" },
                { 5e-324, "5e-324" },
                { 1.7976931348623157e308, "1.7976931348623157e+308" },
                { 123.456, "123.456" },
                { NAN, "NaN" },
                { INFINITY, "Infinity" },
                { -INFINITY, "-Infinity" },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = number(cases[i].d);
                if (!streq(s, cases[i].want))
                        fail_msg("String(%.17g) = %s, want %s", cases[i].d, s, cases[i].want);
        }
}

static json_object *parse(const char *s) {
        json_object *o = json_tokener_parse(s);

        assert_non_null(o);
        return o;
}

static void test_js_tostring_and_truthy(void **state) {
        static const struct {
                const char *json;
                const char *str;
                bool truthy;
        } cases[] = {
                { "\"\"", "", false },
                { "\"0\"", "0", true },
                { "\"false\"", "false", true },
                { "0", "0", false },
                { "-0.0", "0", false },
                { "2.50", "2.5", true },
                { "true", "true", true },
                { "false", "false", false },
                { "[]", "", true },
                { "[1,[2,null],\"a\"]", "1,2,,a", true },
                { "{}", "[object Object]", true },
                { "{\"a\":1}", "[object Object]", true },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_object *v = parse(cases[i].json);
                StrBuf b = {};

                assert_int_equal(js_tostring_append(&b, v, true), 0);
                if (!streq(b.buf ? b.buf : "", cases[i].str) || js_truthy(v, true) != cases[i].truthy)
                        fail_msg("%s: String() %s, truthy %d", cases[i].json, b.buf ? b.buf : "",
                                 js_truthy(v, true));
                strbuf_done(&b);
                json_object_put(v);
        }
        {
                StrBuf b = {};
                /* null (json-c's NULL) and undefined */
                assert_int_equal(js_tostring_append(&b, NULL, true), 0);
                assert_int_equal(js_tostring_append(&b, NULL, false), 0);
                assert_string_equal(b.buf, "nullundefined");
                assert_false(js_truthy(NULL, true));
                assert_false(js_truthy(NULL, false));
                strbuf_done(&b);
        }
}

/* acc += v, in order: JavaScript's "+" turns the sum into a string at the first string. */
static void test_js_val_add(void **state) {
        JsVal acc = {}, other = {};
        json_object *v;

        (void)state;
        v = parse("1");
        assert_int_equal(js_val_add_json(&acc, v, true), 0);
        json_object_put(v);
        assert_int_equal(js_val_add_json(&acc, NULL, true), 0); /* null adds 0 */
        v = parse("true");
        assert_int_equal(js_val_add_json(&acc, v, true), 0);
        json_object_put(v);
        assert_false(acc.is_str);
        assert_true(acc.num == 2);
        v = parse("[1,2]");
        assert_int_equal(js_val_add_json(&acc, v, true), 0); /* 2 + [1,2] = "21,2" */
        json_object_put(v);
        assert_true(acc.is_str);
        assert_string_equal(acc.str.buf, "21,2");
        assert_int_equal(js_val_add_json(&acc, NULL, false), 0); /* + undefined */
        assert_string_equal(acc.str.buf, "21,2undefined");
        assert_true(js_val_truthy(&acc));
        other.num = 0.5;
        assert_int_equal(js_val_add(&acc, &other), 0);
        assert_string_equal(acc.str.buf, "21,2undefined0.5");
        js_val_done(&acc);

        /* a missing field makes the sum NaN, which JSON.stringify writes as null */
        assert_int_equal(js_val_add_json(&acc, NULL, false), 0);
        assert_true(isnan(acc.num));
        assert_false(js_val_truthy(&acc));
        {
                StrBuf b = {};
                assert_int_equal(js_stringify_val(&b, &acc), 0);
                assert_string_equal(b.buf, "null");
                strbuf_done(&b);
        }
        js_val_done(&acc);
        js_val_done(&other);
}

static void test_js_stringify(void **state) {
        static const struct {
                const char *json;
                const char *want; /* JSON.stringify(JSON.parse(json)) in node */
        } cases[] = {
                { "{\"b\":1,\"2\":2,\"a\":3,\"1\":4,\"01\":5,\"4294967295\":6,\"4294967294\":7}",
                  "{\"1\":4,\"2\":2,\"4294967294\":7,\"b\":1,\"a\":3,\"01\":5,\"4294967295\":6}" },
                { "[1,\"x\",null,true,[],{}]", "[1,\"x\",null,true,[],{}]" },
                { "\"\\u0001\\\"\\\\\\n\\u007f\"", "\"\\u0001\\\"\\\\\\n\x7f\"" },
                { "1e21", "1e+21" },
                { "-0.0", "0" },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_object *v = parse(cases[i].json);
                StrBuf b = {};

                assert_int_equal(js_stringify(&b, v), 0);
                if (!streq(b.buf, cases[i].want))
                        fail_msg("%s: %s, want %s", cases[i].json, b.buf, cases[i].want);
                strbuf_done(&b);
                json_object_put(v);
        }
}

static void test_js_array_index(void **state) {
        (void)state;
        assert_int_equal(js_array_index("0", 1), 0);
        assert_int_equal(js_array_index("4294967294", 10), INT64_C(4294967294));
        assert_int_equal(js_array_index("4294967295", 10), -1); /* 2^32 - 1 is not an index */
        assert_int_equal(js_array_index("01", 2), -1);
        assert_int_equal(js_array_index("", 0), -1);
        assert_int_equal(js_array_index("-1", 2), -1);
        assert_int_equal(js_array_index("99999999999", 11), -1);
}

static void test_js_date_from_json(void **state) {
        static const struct {
                const char *json;
                double want; /* new Date(v).getTime(); NAN for NaN */
        } cases[] = {
                { "null", 0 },
                { "true", 1 },
                { "1.9", 1 },
                { "-1.9", -1 },
                { "8.64e15", 8.64e15 },
                { "8.64e15000", NAN },
                { "8640000000000001", NAN },
                { "\"2026-11-30\"", 1795996800000.0 },
                { "[\"2026-11-30\"]", 1795996800000.0 },
                { "{}", NAN },
                { "\"x\"", NAN },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_object *v = json_tokener_parse(cases[i].json);
                double d = js_date_from_json(v, true);

                if (isnan(cases[i].want) ? !isnan(d) : d != cases[i].want)
                        fail_msg("%s: %.17g", cases[i].json, d);
                json_object_put(v);
        }
        assert_true(isnan(js_date_from_json(NULL, false)));
}

static void test_js_trim_unicode_spaces(void **state) {
        const char *s = "\xe3\x80\x80\xe2\x80\xa8 x \xe2\x80\x89\xef\xbb\xbf";
        size_t n = strlen(s);

        (void)state;
        js_trim(&s, &n);
        assert_int_equal(n, 1);
        assert_int_equal(s[0], 'x');
}

static void test_js_date_parse_table(void **state) {
        static const struct {
                const char *s;
                int r;
                msec_t want; /* values from node's Date.parse() */
        } cases[] = {
                { "2026-11-30T06:10:39.123Z", 0, INT64_C(1796019039123) },
                { "2026-11-30T06:10:39.1234567Z", 0, INT64_C(1796019039123) },
                { "2026-11-30T06:10:39.1Z", 0, INT64_C(1796019039100) },
                { "2026-11-30T06:10:39Z", 0, INT64_C(1796019039000) },
                { "2026-11-30T06:10Z", 0, INT64_C(1796019000000) },
                { "2026-11-30", 0, INT64_C(1795996800000) },
                { "2026-11", 0, INT64_C(1793491200000) },
                { "2026", 0, INT64_C(1767225600000) },
                { "+002026-11-30T00:00:00Z", 0, INT64_C(1795996800000) },
                { "2026-11-30T24:00:00Z", 0, INT64_C(1796083200000) },
                { "2026-02-30T00:00:00Z", 0, INT64_C(1772409600000) }, /* rolls over */
                { "2026-11-30t06:10:39z", 0, INT64_C(1796019039000) },
                { "2026-11-30T06:10:39+01:00", 0, INT64_C(1796015439000) },
                { "2026-11-30T06:10:39+0100", 0, INT64_C(1796015439000) },
                { "2026-11-30 06:10:39Z", 0, INT64_C(1796019039000) },
                { "1970-01-01T00:00:00.000Z", 0, 0 },
                { "1969-12-31T23:59:59.999Z", 0, -1 },
                { "2026-11-30T24:00:01Z", -EINVAL, 0 },
                { "2026-13-01T00:00:00Z", -EINVAL, 0 },
                { "2026-11-32T00:00:00Z", -EINVAL, 0 },
                { "2026-00-10T00:00:00Z", -EINVAL, 0 },
                { "2026-11-00T00:00:00Z", -EINVAL, 0 },
                { " 2026-11-30T06:10:39Z", -EINVAL, 0 },
                { "2026-11-30T06:10:39Z ", -EINVAL, 0 },
                { "2026-11-30T6:10:39Z", -EINVAL, 0 },
                { "-000000-01-01T00:00:00Z", -EINVAL, 0 },
                { "2026-11-30T06:10:60Z", -EINVAL, 0 },
                { "2026-11-30T06:60:00Z", -EINVAL, 0 },
                { "2026-11-30T06:10:39.Z", -EINVAL, 0 },
                { "+275760-09-13T00:00:00.001Z", -EINVAL, 0 }, /* past TimeClip */
                { "", -EINVAL, 0 },
                { "yesterday", -EINVAL, 0 },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                msec_t t = 0;
                int r = js_date_parse(cases[i].s, &t);

                if (r != cases[i].r || (r == 0 && t != cases[i].want))
                        print_error("case %s: r=%d t=%lld\n", cases[i].s, r, (long long)t);
                assert_int_equal(r, cases[i].r);
                if (r == 0)
                        assert_int_equal(t, cases[i].want);
        }
        assert_int_equal(js_date_parse(NULL, &(msec_t){ 0 }), -EINVAL);
}

static void test_js_date_parse_local_without_zone(void **state) {
        msec_t t = 0;
        const char *old = getenv("TZ");
        _cleanup_free_ char *saved = old ? strdup(old) : NULL;

        (void)state;
        setenv("TZ", "XXX-2", 1); /* UTC+2 */
        tzset();
        assert_int_equal(js_date_parse("2026-11-30T06:10:39", &t), 0);
        assert_int_equal(t, INT64_C(1796019039000) - 2 * MSEC_PER_HOUR);
        /* date-only forms stay UTC */
        assert_int_equal(js_date_parse("2026-11-30", &t), 0);
        assert_int_equal(t, INT64_C(1795996800000));
        if (saved)
                setenv("TZ", saved, 1);
        else
                unsetenv("TZ");
        tzset();
}

typedef struct TimestampCase {
        const char *in;
        int r;
        msec_t want;
} TimestampCase;

static void test_parse_timestamp_table(void **state) {
        static const TimestampCase cases[] = {
                { "1970-01-01T00:00:00Z", 0, 0 },
                { "2027-01-01T00:00:00Z", 0, INT64_C(1798761600000) },
                { "2027-01-01", 0, INT64_C(1798761600000) },
                { "2027-01-01T00:00Z", 0, INT64_C(1798761600000) },
                { "2027-01-01 00:00:00Z", 0, INT64_C(1798761600000) },
                { "2027-01-01t00:00:00z", 0, INT64_C(1798761600000) },
                { "2027-01-01T00:00:00.5Z", 0, INT64_C(1798761600500) },
                { "2027-01-01T00:00:00.123456Z", 0, INT64_C(1798761600123) },
                { "2027-01-01T00:00:00,25Z", 0, INT64_C(1798761600250) },
                { "2027-01-01T05:30:00+05:30", 0, INT64_C(1798761600000) },
                { "2027-01-01T05:30:00+0530", 0, INT64_C(1798761600000) },
                { "2027-01-01T05:00:00+05", 0, INT64_C(1798761600000) },
                { "2026-12-31T19:00:00-05:00", 0, INT64_C(1798761600000) },
                { "2024-02-29T00:00:00Z", 0, INT64_C(1709164800000) }, /* leap day */
                { "2000-02-29", 0, INT64_C(951782400000) },            /* 400-year leap */
                { "1969-12-31T23:59:59Z", 0, -1000 },
                { "@0", 0, 0 },
                { "@1798761600", 0, INT64_C(1798761600000) },
                { "@-1", 0, -1000 },
                { "@", -EINVAL, 0 },
                { "@ 5", -EINVAL, 0 },
                { "@5x", -EINVAL, 0 },
                { "@99999999999999999", -ERANGE, 0 },
                { "2023-02-29", -EINVAL, 0 }, /* not a leap year */
                { "1900-02-29", -EINVAL, 0 }, /* century, not leap */
                { "2027-04-31", -EINVAL, 0 },
                { "2027-13-01", -EINVAL, 0 },
                { "2027-00-10", -EINVAL, 0 },
                { "2027-01-00", -EINVAL, 0 },
                { "2027-01-01T24:00:00Z", -EINVAL, 0 },
                { "2027-01-01T23:60:00Z", -EINVAL, 0 },
                { "2027-01-01T00:00:00+24:00", -EINVAL, 0 },
                { "2027-01-01T00:00:00+05:60", -EINVAL, 0 },
                { "2027-01-01T00:00:00.Z", -EINVAL, 0 },
                { "2027-01-01T00:00:00Zjunk", -EINVAL, 0 },
                { "2027-01-01T00", -EINVAL, 0 },
                { "2027-1-1", -EINVAL, 0 },
                { "27-01-01", -EINVAL, 0 },
                { "", -EINVAL, 0 },
                { "yesterday", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                msec_t got = -42;
                int r = js_parse_timestamp(cases[i].in, &got);
                if (r != cases[i].r || (r == 0 && got != cases[i].want))
                        fail_msg("js_parse_timestamp(\"%s\") = %d, %lld; want %d, %lld", cases[i].in,
                                 r, (long long)got, cases[i].r, (long long)cases[i].want);
        }
        assert_int_equal(js_parse_timestamp(NULL, &(msec_t){ 0 }), -EINVAL);
}

static void test_parse_timestamp_roundtrips_format(void **state) {
        char buf[FORMAT_TIMESTAMP_MAX];
        msec_t t;

        for (msec_t x = -MSEC_PER_DAY * 400; x < INT64_C(4102444800000); x += 9876543210) {
                msec_t whole = x - (((x % 1000) + 1000) % 1000);
                util_format_timestamp(buf, sizeof buf, x);
                assert_int_equal(js_parse_timestamp(buf, &t), 0);
                assert_int_equal(t, whole);
        }
}


/* One parser, two grammars: each line is accepted by one and refused, or read otherwise, by
 * the other. */
static void test_js_iso8601_strict_against_date_parse(void **state) {
        static const struct {
                const char *s;
                int r_strict, r_js;
                msec_t strict, js;
        } cases[] = {
                { "2027-01-01T00:00:60Z", 0, -EINVAL, INT64_C(1798761660000), 0 },
                { "2027-02-30", -EINVAL, 0, 0, INT64_C(1803945600000) },
                { "2027-01-01T05:00:00+05", 0, -EINVAL, INT64_C(1798761600000), 0 },
                { "2027-01-01T05:00:00+05:", 0, -EINVAL, INT64_C(1798761600000), 0 },
                { "2027", -EINVAL, 0, 0, INT64_C(1798761600000) },
                { "2027-01", -EINVAL, 0, 0, INT64_C(1798761600000) },
                { "2027-01-01T00:00:00,5Z", 0, -EINVAL, INT64_C(1798761600500), 0 },
                { "2027-01-01T24:00:00Z", -EINVAL, 0, 0, INT64_C(1798848000000) },
                { "+002027-01-01", -EINVAL, 0, 0, INT64_C(1798761600000) },
                { "2027-01-01T00:00:00Z", 0, 0, INT64_C(1798761600000), INT64_C(1798761600000) },
                { "2027-01-01 ", -EINVAL, -EINVAL, 0, 0 },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                msec_t a = -42, b = -42;
                int ra = js_parse_iso8601(cases[i].s, JS_ISO_STRICT, &a);
                int rb = js_parse_iso8601(cases[i].s, JS_ISO_DATE_PARSE, &b);

                if (ra != cases[i].r_strict || (ra == 0 && a != cases[i].strict) ||
                    rb != cases[i].r_js || (rb == 0 && b != cases[i].js))
                        fail_msg("%s: strict %d %lld, Date.parse %d %lld", cases[i].s, ra,
                                 (long long)a, rb, (long long)b);
        }
}

/* A date-time without a zone: local time for Date.parse, UTC on the command line. */
static void test_js_iso8601_zoneless(void **state) {
        msec_t a = 0, b = 0;
        const char *old = getenv("TZ");
        _cleanup_free_ char *saved = old ? strdup(old) : NULL;

        (void)state;
        setenv("TZ", "XXX-2", 1);
        tzset();
        assert_int_equal(js_parse_timestamp("2027-01-01T02:00:00", &a), 0);
        assert_int_equal(js_date_parse("2027-01-01T02:00:00", &b), 0);
        assert_int_equal(a, INT64_C(1798761600000) + 2 * MSEC_PER_HOUR);
        assert_int_equal(b, INT64_C(1798761600000));
        if (saved)
                setenv("TZ", saved, 1);
        else
                unsetenv("TZ");
        tzset();
}

static void test_js_days_from_civil(void **state) {
        (void)state;
        assert_int_equal(js_days_from_civil(1970, 1, 1), 0);
        assert_int_equal(js_days_from_civil(1969, 12, 31), -1);
        assert_int_equal(js_days_from_civil(2000, 3, 1), 11017);
        assert_int_equal(js_days_from_civil(2000, 2, 29), 11016);
        assert_int_equal(js_days_from_civil(2026, 2, 30), js_days_from_civil(2026, 3, 2));
        assert_int_equal(js_days_from_civil(0, 1, 1), -719528);
        assert_int_equal(js_days_from_civil(-1, 12, 31), -719529);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_js_number_to_string),
                cmocka_unit_test(test_js_tostring_and_truthy),
                cmocka_unit_test(test_js_val_add),
                cmocka_unit_test(test_js_stringify),
                cmocka_unit_test(test_js_array_index),
                cmocka_unit_test(test_js_date_from_json),
                cmocka_unit_test(test_js_trim_unicode_spaces),
                cmocka_unit_test(test_js_date_parse_table),
                cmocka_unit_test(test_js_date_parse_local_without_zone),
                cmocka_unit_test(test_parse_timestamp_table),
                cmocka_unit_test(test_parse_timestamp_roundtrips_format),
                cmocka_unit_test(test_js_iso8601_strict_against_date_parse),
                cmocka_unit_test(test_js_iso8601_zoneless),
                cmocka_unit_test(test_js_days_from_civil),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
