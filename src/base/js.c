/* js.c: JavaScript's value rules, JSON.stringify, trim and the ISO 8601 parser (js.h). */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "js.h"
#include "macro.h"

#define js_puts(b, lit) strbuf_append((b), (lit), strlen(lit))

/* ------------------------------------------------------------------ values */

void js_val_done(JsVal *v) {
        strbuf_done(&v->str);
        *v = (JsVal){};
}

/* Number::toString(10): shortest round-trip digits, JavaScript's fixed/exponent rules. */
static int js_number_append(StrBuf *b, double v) {
        char tmp[40], digits[24];
        int prec, exp10, nd = 0, n;
        const char *p;

        if (isnan(v))
                return js_puts(b, "NaN");
        if (isinf(v))
                return v > 0 ? js_puts(b, "Infinity") : js_puts(b, "-Infinity");
        if (v == 0)
                return js_puts(b, "0");
        if (v < 0) {
                if (js_puts(b, "-") < 0)
                        return -ENOMEM;
                v = -v;
        }
        /* an integer below 2^53 (token counts, milliseconds): its decimal digits are the
         * shortest that round-trip, which the search below would find with up to 17 snprintf()
         * and strtod() calls */
        if (v < 9007199254740992.0 && v == (double)(uint64_t)v)
                return strbuf_printf(b, "%" PRIu64, (uint64_t)v);
        for (prec = 1; prec <= 17; prec++) {
                snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
                if (strtod(tmp, NULL) == v)
                        break;
        }
        /* tmp is d[.ddd]e[+-]XX */
        for (p = tmp; *p && *p != 'e'; p++)
                if (*p >= '0' && *p <= '9')
                        digits[nd++] = *p;
        exp10 = atoi(p + 1);
        while (nd > 1 && digits[nd - 1] == '0')
                nd--;
        digits[nd] = '\0';
        n = exp10 + 1; /* position of the decimal point */

        if (nd <= n && n <= 21) {
                if (strbuf_append(b, digits, (size_t)nd) < 0)
                        return -ENOMEM;
                for (int i = nd; i < n; i++)
                        if (js_puts(b, "0") < 0)
                                return -ENOMEM;
                return 0;
        }
        if (0 < n && n <= 21)
                return strbuf_printf(b, "%.*s.%s", n, digits, digits + n);
        if (-6 < n && n <= 0) {
                if (js_puts(b, "0.") < 0)
                        return -ENOMEM;
                for (int i = n; i < 0; i++)
                        if (js_puts(b, "0") < 0)
                                return -ENOMEM;
                return strbuf_append(b, digits, (size_t)nd);
        }
        if (nd == 1)
                return strbuf_printf(b, "%ce%c%d", digits[0], n - 1 >= 0 ? '+' : '-', abs(n - 1));
        return strbuf_printf(b, "%c.%se%c%d", digits[0], digits + 1, n - 1 >= 0 ? '+' : '-',
                             abs(n - 1));
}

double js_json_number(json_object *v) {
        return json_object_is_type(v, json_type_int) ? (double)json_object_get_int64(v)
                                                     : json_object_get_double(v);
}

bool js_json_is_number(json_object *v) {
        return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* ToString() of a JSON value; present=false is undefined. */
int js_tostring_append(StrBuf *b, json_object *v, bool present) {
        if (!present)
                return js_puts(b, "undefined");
        switch (json_object_get_type(v)) {
        case json_type_null:
                return js_puts(b, "null");
        case json_type_boolean:
                return json_object_get_boolean(v) ? js_puts(b, "true") : js_puts(b, "false");
        case json_type_int:
        case json_type_double:
                return js_number_append(b, js_json_number(v));
        case json_type_string:
                return strbuf_append(b, json_object_get_string(v),
                                     (size_t)json_object_get_string_len(v));
        case json_type_object:
                return js_puts(b, "[object Object]");
        case json_type_array: {
                /* Array.prototype.join(","): null and undefined elements are empty. */
                size_t n = json_object_array_length(v);
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        if (i > 0 && js_puts(b, ",") < 0)
                                return -ENOMEM;
                        if (e && js_tostring_append(b, e, true) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        }
        return 0;
}

/* JavaScript truthiness of a JSON value (absent is undefined). */
bool js_truthy(json_object *v, bool present) {
        if (!present)
                return false;
        switch (json_object_get_type(v)) {
        case json_type_null:
                return false;
        case json_type_boolean:
                return json_object_get_boolean(v);
        case json_type_int:
        case json_type_double: {
                double d = js_json_number(v);
                return d != 0 && !isnan(d);
        }
        case json_type_string:
                return json_object_get_string_len(v) > 0;
        default:
                return true;
        }
}

bool js_val_truthy(const JsVal *v) {
        return v->is_str ? v->str.len > 0 : (v->num != 0 && !isnan(v->num));
}

/* Turn a numeric accumulator into its string form before concatenating. */
static int js_val_to_str(JsVal *acc) {
        if (acc->is_str)
                return 0;
        acc->str.len = 0;
        if (js_number_append(&acc->str, acc->num) < 0)
                return -ENOMEM;
        acc->is_str = true;
        return 0;
}

/* acc += v (v a JSON value or, present=false, undefined), with JavaScript's "+". */
int js_val_add_json(JsVal *acc, json_object *v, bool present) {
        if (!acc->is_str) {
                if (!present) {
                        acc->num = NAN;
                        return 0;
                }
                switch (json_object_get_type(v)) {
                case json_type_null:
                        return 0;
                case json_type_boolean:
                        acc->num += json_object_get_boolean(v) ? 1 : 0;
                        return 0;
                case json_type_int:
                case json_type_double:
                        acc->num += js_json_number(v);
                        return 0;
                default: /* string, object, array: ToPrimitive gives a string */
                        break;
                }
                if (js_val_to_str(acc) < 0)
                        return -ENOMEM;
        }
        return js_tostring_append(&acc->str, v, present);
}

int js_val_add_number(JsVal *acc, double d) {
        if (!acc->is_str) {
                acc->num += d;
                return 0;
        }
        return js_number_append(&acc->str, d);
}

/* a += b for two accumulators. */
int js_val_add(JsVal *a, const JsVal *b) {
        if (!a->is_str && !b->is_str) {
                a->num += b->num;
                return 0;
        }
        if (js_val_to_str(a) < 0)
                return -ENOMEM;
        if (b->is_str)
                return strbuf_append(&a->str, b->str.buf ? b->str.buf : "", b->str.len);
        return js_number_append(&a->str, b->num);
}

int js_val_copy(JsVal *dst, const JsVal *src) {
        *dst = (JsVal){ .num = src->num };
        if (!src->is_str)
                return 0;
        dst->is_str = true;
        return strbuf_append(&dst->str, src->str.buf ? src->str.buf : "", src->str.len);
}

/* JSON.stringify() of a string. */
int js_stringify_string(StrBuf *b, const char *s, size_t n) {
        size_t run = 0;

        if (js_puts(b, "\"") < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                char esc[8];
                const char *e = NULL;

                if (c >= 0x20 && c != '"' && c != '\\')
                        continue;
                if (strbuf_append(b, s + run, i - run) < 0)
                        return -ENOMEM;
                switch (c) {
                case '"':
                        e = "\\\"";
                        break;
                case '\\':
                        e = "\\\\";
                        break;
                case '\b':
                        e = "\\b";
                        break;
                case '\f':
                        e = "\\f";
                        break;
                case '\n':
                        e = "\\n";
                        break;
                case '\r':
                        e = "\\r";
                        break;
                case '\t':
                        e = "\\t";
                        break;
                default:
                        snprintf(esc, sizeof(esc), "\\u%04x", c);
                        e = esc;
                }
                if (strbuf_append(b, e, strlen(e)) < 0)
                        return -ENOMEM;
                run = i + 1;
        }
        if (strbuf_append(b, s + run, n - run) < 0)
                return -ENOMEM;
        return js_puts(b, "\"");
}

/* JSON.stringify() of an accumulator: NaN and infinities are null. */
int js_stringify_val(StrBuf *b, const JsVal *v) {
        if (v->is_str)
                return js_stringify_string(b, v->str.buf ? v->str.buf : "", v->str.len);
        if (!isfinite(v->num))
                return js_puts(b, "null");
        return js_number_append(b, v->num);
}

int js_stringify_number(StrBuf *b, double d) {
        JsVal v = { .num = d };
        return js_stringify_val(b, &v);
}

/* An array index as a property key ("0".."4294967294", canonical): such keys enumerate first,
 * in numeric order. Returns the index or -1. */
static int64_t js_array_index(const char *s, size_t n) {
        int64_t v = 0;

        if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
                return -1;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v <= INT64_C(4294967294) ? v : -1;
}

/* Property order of an object: array indexes ascending, then the others in insertion order. */
typedef struct KeyOrder {
        int64_t index;
        size_t pos;
} KeyOrder;

static int js_key_order_cmp(const void *a, const void *b) {
        const KeyOrder *x = a, *y = b;

        if ((x->index >= 0) != (y->index >= 0))
                return x->index >= 0 ? -1 : 1;
        if (x->index >= 0)
                return x->index < y->index ? -1 : x->index > y->index;
        return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int js_key_order(const char *const *names, const size_t *lens, size_t n, size_t **ret) {
        _cleanup_free_ KeyOrder *k = NULL;
        size_t *order;

        k = calloc(MAX(n, (size_t)1), sizeof(KeyOrder));
        order = calloc(MAX(n, (size_t)1), sizeof(size_t));
        if (!k || !order) {
                free(order);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                k[i] = (KeyOrder){ .index = js_array_index(names[i], lens[i]), .pos = i };
        qsort(k, n, sizeof(KeyOrder), js_key_order_cmp);
        for (size_t i = 0; i < n; i++)
                order[i] = k[i].pos;
        *ret = order;
        return 0;
}

/* JSON.stringify() of any parsed JSON value. */
/* JSON.stringify's break before an element at level depth when it indents by indent spaces
 * (none when indent is 0): "\n" and indent * depth spaces. */
static int js_break(StrBuf *b, unsigned indent, unsigned depth) {
        if (indent == 0)
                return 0;
        if (js_puts(b, "\n") < 0)
                return -ENOMEM;
        for (size_t k = 0; k < (size_t)indent * depth; k++)
                if (js_puts(b, " ") < 0)
                        return -ENOMEM;
        return 0;
}

static int js_stringify_at(StrBuf *b, json_object *v, unsigned indent, unsigned depth) {
        switch (json_object_get_type(v)) {
        case json_type_null:
                return js_puts(b, "null");
        case json_type_boolean:
                return json_object_get_boolean(v) ? js_puts(b, "true") : js_puts(b, "false");
        case json_type_int:
        case json_type_double:
                return js_stringify_number(b, js_json_number(v));
        case json_type_string:
                return js_stringify_string(b, json_object_get_string(v),
                                         (size_t)json_object_get_string_len(v));
        case json_type_array: {
                size_t n = json_object_array_length(v);
                if (js_puts(b, "[") < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        if (i > 0 && js_puts(b, ",") < 0)
                                return -ENOMEM;
                        if (js_break(b, indent, depth + 1) < 0 ||
                            js_stringify_at(b, json_object_array_get_idx(v, i), indent, depth + 1) < 0)
                                return -ENOMEM;
                }
                if (n > 0 && js_break(b, indent, depth) < 0)
                        return -ENOMEM;
                return js_puts(b, "]");
        }
        case json_type_object: {
                size_t n = (size_t)json_object_object_length(v), i = 0;
                _cleanup_free_ const char **names = calloc(MAX(n, (size_t)1), sizeof(char *));
                _cleanup_free_ size_t *lens = calloc(MAX(n, (size_t)1), sizeof(size_t));
                _cleanup_free_ json_object **vals =
                        calloc(MAX(n, (size_t)1), sizeof(json_object *));
                _cleanup_free_ size_t *order = NULL;

                if (!names || !lens || !vals)
                        return -ENOMEM;
                json_object_object_foreach(v, key, val) {
                        names[i] = key;
                        lens[i] = strlen(key);
                        vals[i++] = val;
                }
                if (js_key_order(names, lens, n, &order) < 0)
                        return -ENOMEM;
                if (js_puts(b, "{") < 0)
                        return -ENOMEM;
                for (i = 0; i < n; i++) {
                        size_t k = order[i];
                        if (i > 0 && js_puts(b, ",") < 0)
                                return -ENOMEM;
                        if (js_break(b, indent, depth + 1) < 0 ||
                            js_stringify_string(b, names[k], lens[k]) < 0 ||
                            js_puts(b, indent ? ": " : ":") < 0 ||
                            js_stringify_at(b, vals[k], indent, depth + 1) < 0)
                                return -ENOMEM;
                }
                if (n > 0 && js_break(b, indent, depth) < 0)
                        return -ENOMEM;
                return js_puts(b, "}");
        }
        }
        return 0;
}

int js_stringify(StrBuf *b, json_object *v) {
        return js_stringify_at(b, v, 0, 0);
}

int js_stringify_indent(StrBuf *b, json_object *v, unsigned indent) {
        return js_stringify_at(b, v, indent, 0);
}

/* new Date(v).getTime() for a JSON value: NaN when JavaScript gives NaN. */
double js_date_from_json(json_object *v, bool present) {
        msec_t t;

        if (!present)
                return NAN;
        switch (json_object_get_type(v)) {
        case json_type_null:
                return 0;
        case json_type_boolean:
                return json_object_get_boolean(v) ? 1 : 0;
        case json_type_int:
        case json_type_double: {
                double d = js_json_number(v);
                if (!isfinite(d) || fabs(d) > 8.64e15)
                        return NAN;
                return trunc(d) + 0.0;
        }
        case json_type_string:
                return js_date_parse(json_object_get_string(v), &t) < 0 ? NAN : (double)t;
        case json_type_array: {
                StrBuf s = {};
                double r = NAN;
                if (js_tostring_append(&s, v, true) >= 0 &&
                    js_date_parse(s.buf ? s.buf : "", &t) >= 0)
                        r = (double)t;
                strbuf_done(&s);
                return r;
        }
        default: /* "[object Object]" */
                return NAN;
        }
}

/* ------------------------------------------------------------------ strings */

/* Length of the JavaScript whitespace or line terminator starting at s, 0 if none. */
size_t js_space_at(const unsigned char *s, size_t n) {
        if (n == 0)
                return 0;
        switch (s[0]) {
        case ' ':
        case '\t':
        case '\n':
        case '\v':
        case '\f':
        case '\r':
                return 1;
        case 0xc2:
                return n >= 2 && s[1] == 0xa0 ? 2 : 0; /* U+00A0 */
        case 0xe1:
                return n >= 3 && s[1] == 0x9a && s[2] == 0x80 ? 3 : 0; /* U+1680 */
        case 0xe2:
                if (n < 3)
                        return 0;
                if (s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 ||
                                     s[2] == 0xa9 || s[2] == 0xaf))
                        return 3; /* U+2000..200A, U+2028, U+2029, U+202F */
                if (s[1] == 0x81 && s[2] == 0x9f)
                        return 3; /* U+205F */
                return 0;
        case 0xe3:
                return n >= 3 && s[1] == 0x80 && s[2] == 0x80 ? 3 : 0; /* U+3000 */
        case 0xef:
                return n >= 3 && s[1] == 0xbb && s[2] == 0xbf ? 3 : 0; /* U+FEFF */
        default:
                return 0;
        }
}

/* String.prototype.trim() on UTF-8 bytes: adjusts *s and *n. */
void js_trim(const char **s, size_t *n) {
        const unsigned char *p = (const unsigned char *)*s;
        size_t len = *n, k;

        while ((k = js_space_at(p, len)) > 0) {
                p += k;
                len -= k;
        }
        while (len > 0) {
                size_t back = 0;
                /* whitespace sequences are 1, 2 or 3 bytes long */
                for (size_t w = 1; w <= 3 && w <= len; w++)
                        if (js_space_at(p + len - w, w) == w) {
                                back = w;
                                break;
                        }
                if (back == 0)
                        break;
                len -= back;
        }
        *s = (const char *)p;
        *n = len;
}

/* ------------------------------------------------------------------ dates */

static bool js_is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool js_digits(const char *s, size_t n, int *ret) {
        int v = 0;

        for (size_t i = 0; i < n; i++) {
                if (!js_is_digit(s[i]))
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1..12; the day may roll over). */
static int64_t js_days_from_civil(int64_t y, int m, int d) {
        int64_t era, yoe, doy, doe;

        y -= m <= 2;
        era = (y >= 0 ? y : y - 399) / 400;
        yoe = y - era * 400;
        doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

static int js_days_in_month(int64_t y, int m) {
        static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

        return m == 2 && leap ? 29 : days[m - 1];
}

/* Offset of local time from UTC, in ms, at the local wall-clock time t (ms as if UTC). */
static int64_t js_local_offset(int64_t t) {
        time_t guess = (time_t)(t / 1000);
        struct tm tm;

        if (!localtime_r(&guess, &tm))
                return 0;
        guess = (time_t)(t / 1000 - tm.tm_gmtoff);
        if (!localtime_r(&guess, &tm))
                return 0;
        return (int64_t)tm.tm_gmtoff * 1000;
}

/* Milliseconds since the epoch of an ISO 8601 text. 0, or -EINVAL (where Date.parse gives NaN
 * in JS_ISO_DATE_PARSE). */
static int js_parse_iso8601(const char *s, JsIsoFlags flags, msec_t *ret) {
        bool strict = flags & JS_ISO_STRICT;
        const char *p = s;
        int64_t year, t;
        int v, month = 1, day = 1, hour = 0, min = 0, sec = 0, ms = 0;
        bool has_day = false, has_time = false, has_zone = false;
        int64_t zone_ms = 0;

        if (!s)
                return -EINVAL;
        if (!strict && (*p == '+' || *p == '-')) {
                bool neg = *p == '-';
                if (!js_digits(p + 1, 6, &v))
                        return -EINVAL;
                if (neg && v == 0)
                        return -EINVAL;
                year = neg ? -v : v;
                p += 7;
        } else {
                if (!js_digits(p, 4, &v))
                        return -EINVAL;
                year = v;
                p += 4;
        }
        if (*p == '-') {
                if (!js_digits(p + 1, 2, &month) || month < 1 || month > 12)
                        return -EINVAL;
                p += 3;
                if (*p == '-') {
                        if (!js_digits(p + 1, 2, &day) || day < 1 || day > 31)
                                return -EINVAL;
                        p += 3;
                        has_day = true;
                }
        }
        if (strict && (!has_day || day > js_days_in_month(year, month)))
                return -EINVAL;
        if (*p == 'T' || *p == 't' || (*p == ' ' && p[1] != '\0')) {
                has_time = true;
                p++;
                if (!js_digits(p, 2, &hour) || p[2] != ':' || !js_digits(p + 3, 2, &min))
                        return -EINVAL;
                p += 5;
                if (*p == ':') {
                        if (!js_digits(p + 1, 2, &sec))
                                return -EINVAL;
                        p += 3;
                        if (*p == '.' || (strict && *p == ',')) {
                                int nd = 0;
                                p++;
                                if (!js_is_digit(*p))
                                        return -EINVAL;
                                for (; js_is_digit(*p); p++, nd++)
                                        if (nd < 3)
                                                ms = ms * 10 + (*p - '0');
                                for (; nd < 3; nd++)
                                        ms *= 10;
                        }
                }
                if (strict ? hour > 23 || min > 59 || sec > 60
                           : hour > 24 || min > 59 || sec > 59 || (hour == 24 && (min || sec || ms)))
                        return -EINVAL;
                if (*p == 'Z' || *p == 'z') {
                        has_zone = true;
                        p++;
                } else if (*p == '+' || *p == '-') {
                        int zh, zm = 0;
                        int sign = *p == '-' ? -1 : 1;

                        p++;
                        if (!js_digits(p, 2, &zh))
                                return -EINVAL;
                        p += 2;
                        if (*p == ':')
                                p++;
                        /* Date.parse needs the minutes; the command line takes +HH alone */
                        if (!strict || *p != '\0') {
                                if (!js_digits(p, 2, &zm))
                                        return -EINVAL;
                                p += 2;
                        }
                        if (zh > 23 || zm > 59)
                                return -EINVAL;
                        has_zone = true;
                        zone_ms = sign * ((int64_t)zh * 60 + zm) * 60000;
                }
        }
        if (*p != '\0')
                return -EINVAL;

        t = js_days_from_civil(year, month, day) * MSEC_PER_DAY + hour * MSEC_PER_HOUR +
            min * MSEC_PER_MIN + sec * MSEC_PER_SEC + ms;
        if (has_zone)
                t -= zone_ms;
        else if (has_time && !strict)
                t -= js_local_offset(t);
        if (t > INT64_C(8640000000000000) || t < -INT64_C(8640000000000000))
                return -EINVAL;
        *ret = t;
        return 0;
}

int js_date_parse(const char *s, msec_t *ret) {
        return js_parse_iso8601(s, JS_ISO_DATE_PARSE, ret);
}

int js_parse_timestamp(const char *s, msec_t *ret) {
        if (s && s[0] == '@') {
                char *end;
                long long v;

                if (!js_is_digit(s[1]) && !(s[1] == '-' && js_is_digit(s[2])))
                        return -EINVAL;
                errno = 0;
                v = strtoll(s + 1, &end, 10);
                if (errno != 0 || end == s + 1 || *end != '\0')
                        return -EINVAL;
                if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
                        return -ERANGE;
                *ret = (msec_t)v * 1000;
                return 0;
        }
        return js_parse_iso8601(s, JS_ISO_STRICT, ret);
}
