/* json.h: ECMAScript's JSON.parse grammar, one walk with three sinks: json_parse() builds json-c
 * objects; json_capture() and json_members() return members' text spans and json_elements() a
 * container's element offsets, without building (the fast path of the line readers, and
 * byte-preserving edits). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define JSON_MAX_DEPTH 1000 /* json-c frees recursively; deeper input is refused */

/* JSON.parse() of exactly s[0..n) (JSON whitespace around the value allowed): stricter than
 * json-c (no NaN, comments, single quotes, raw control characters); invalid UTF-8 in strings
 * becomes U+FFFD as in Node; numbers are int64 when small integers, else doubles; JSON null is
 * *ret == NULL. Nesting deeper than 1000 is refused. Returns 0, -EBADMSG or -ENOMEM. */
int json_parse(const char *s, size_t n, struct json_object **ret);
/* A value's text inside a JSON document. */
typedef struct JsonSpan {
        const char *s;
        size_t n;
} JsonSpan;
/* The members of the object text s[0..n) (JSON whitespace around allowed), without building
 * anything: spans[i] is the text of the value of key keys[i] (last occurrence wins, as in
 * JSON.parse; .s NULL when absent). With validate the whole text is checked with exactly
 * json_parse()'s grammar and limits; without, it must be valid already. Returns 0, or
 * -EBADMSG when the text is invalid or not an object. */
int json_members(const char *s, size_t n, bool validate, const char *const *keys,
                        size_t n_keys, JsonSpan *spans);
/* The same, descending in one pass: children[i] (when set) captures inside the object value of
 * keys[i]; its spans describe the last occurrence (all unset when that one is not an object). */
typedef struct JsonCapture {
        const char *const *keys;
        size_t n_keys; /* at most 32 */
        JsonSpan *spans;
        const struct JsonCapture *const *children; /* NULL, or n_keys entries (each may be NULL) */
} JsonCapture;
int json_capture(const char *s, size_t n, bool validate, const JsonCapture *cap);
/* One element of a container, as offsets into the text: for an object member, start is its
 * key's opening quote and key_end is past the key's closing quote; for an array element, start
 * == key_end == value. value is where the element's value starts, end is past it. */
typedef struct JsonElem {
        size_t start, key_end, value, end;
} JsonElem;
/* The elements of the container ('{' or '[') at s[at] inside the text s[0..n), in order, for
 * an edit that keeps every other byte (erase.c). With validate the container is checked with
 * exactly json_parse()'s grammar and limits; without, it must be valid already. *ret (malloc'ed,
 * NULL when empty) and *ret_n; *ret_end is past its closing bracket. Returns 0, -EBADMSG (not a
 * container, or invalid) or -ENOMEM. */
int json_elements(const char *s, size_t n, size_t at, bool validate, JsonElem **ret,
                  size_t *ret_n, size_t *ret_end);

/* The string member key of object o, or NULL (absent, not a string, o not an object). */
const char *json_get_string(struct json_object *o, const char *key);
/* An integer member (a json int, or a double with an integral value): true with *ret. */
bool json_get_int(struct json_object *o, const char *key, int64_t *ret);
