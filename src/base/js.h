/* js.h: JavaScript's value rules, byte for byte as Node computes them: "+=" on a number or a
 * string, ToString and truthiness of JSON values, Number.prototype.toString, JSON.stringify with
 * V8's property order, String.prototype.trim, and Date.parse: the one ISO 8601 parser (also the
 * stricter form of the command line's --now, js_parse_timestamp()). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* ---- values */

/* A number, or a string once JavaScript's "+" concatenated one in. */
typedef struct JsVal {
        bool is_str;
        double num;
        StrBuf str;
} JsVal;

void js_val_done(JsVal *v);
int js_val_copy(JsVal *dst, const JsVal *src);
bool js_val_truthy(const JsVal *v);
/* acc += v (a JSON value or, present=false, undefined) with JavaScript's "+". 0 or -ENOMEM. */
int js_val_add_json(JsVal *acc, json_object *v, bool present);
/* acc += d. 0 or -ENOMEM. */
int js_val_add_number(JsVal *acc, double d);
/* a += b. 0 or -ENOMEM. */
int js_val_add(JsVal *a, const JsVal *b);

/* A JSON number's value (int64 or double). */
double js_json_number(json_object *v);
bool js_json_is_number(json_object *v);
/* ToString() of a JSON value (present=false: undefined), appended to b. */
int js_tostring_append(StrBuf *b, json_object *v, bool present);
/* Truthiness of a JSON value (present=false: undefined). */
bool js_truthy(json_object *v, bool present);

/* ---- JSON.stringify */

int js_stringify_string(StrBuf *b, const char *s, size_t n);
/* An accumulator: NaN and the infinities are null. */
int js_stringify_val(StrBuf *b, const JsVal *v);
int js_stringify_number(StrBuf *b, double d);
/* Any parsed JSON value, objects' keys in V8's order (js_key_order()). */
int js_stringify(StrBuf *b, json_object *v);
/* JSON.stringify(v, null, indent): the same, each element on its own line indented by indent
 * spaces per level (an empty array or object stays "[]" or "{}"). */
int js_stringify_indent(StrBuf *b, json_object *v, unsigned indent);
/* The enumeration order of n property names: array indexes ascending, then the others in
 * insertion order. *ret: a new array of n positions. 0 or -ENOMEM. */
int js_key_order(const char *const *names, const size_t *lens, size_t n, size_t **ret);

/* ---- strings */

/* The length of the JavaScript whitespace or line terminator (as UTF-8) at s, 0 if none. */
size_t js_space_at(const unsigned char *s, size_t n);
/* String.prototype.trim() on UTF-8 bytes: adjusts *s and *n. */
void js_trim(const char **s, size_t *n);

/* ---- dates */

typedef enum JsIsoFlags {
        /* Date.parse(): YYYY[-MM[-DD]] or +YYYYYY/-YYYYYY, then optionally T (t, or a space not
         * at the end) HH:mm[:ss[.f+]] and Z, z, +HH:mm or +HHmm; hour 24:00 allowed; day 1..31
         * rolls over ("02-30" is March); date-only forms are UTC, date-times without a zone
         * local time. */
        JS_ISO_DATE_PARSE = 0,
        /* the command line's form: YYYY-MM-DD required, the day must exist in its month, hour
         * up to 23, second up to 60, ',' as decimal sign, a zone of +HH alone; no zone is UTC */
        JS_ISO_STRICT = 1 << 0,
} JsIsoFlags;

/* Date.parse(s) for the ISO forms: js_parse_iso8601(s, JS_ISO_DATE_PARSE, ret). */
int js_date_parse(const char *s, msec_t *ret);
/* new Date(v).getTime() of a JSON value: NaN where JavaScript gives NaN. */
double js_date_from_json(json_object *v, bool present);

/* The --now argument: js_parse_iso8601(JS_ISO_STRICT) or "@epoch-seconds". 0, -EINVAL or
 * -ERANGE. */
int js_parse_timestamp(const char *s, msec_t *ret);
