/* json.h: JSON.parse's grammar, and reading a small JSON file of a tree in the dialect of the
 * Qwen code that reads it. json.c builds (json_parse()), json-scan.c captures or validates
 * without building (json_capture(), json_members(): the fast path of the transcript readers)
 * and reads a file through fsread.h's safe open (json_read_file()); qwen/json-input.c holds the
 * one table that says which dialect each input is read in. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

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

typedef enum JsonDialect {
        /* ECMAScript JSON.parse of the file read as UTF-8 (Node's fs.readFile(f, 'utf8')):
         * json_parse(). No NaN, comments, single quotes, raw controls, BOM or bytes after
         * the value (json-c's tokener, which qgc used before, accepts all of them). Every input
         * of the table is read so: Qwen reads each with JSON.parse. The one other dialect qgc
         * reads is the settings files' (comments stripped, then JSON.parse): settings.c. */
        JSON_DIALECT_PARSE,
        _JSON_DIALECT_MAX,
} JsonDialect;

/* Every JSON file of a Qwen tree that qgc reads for evidence (the transcripts and usage file are
 * JSONL, read by record.c and usage.c with JSON_DIALECT_PARSE's grammar). */
typedef enum JsonInput {
        JSON_INPUT_REGISTRY,     /* G/sessions/<pid>[-<8hex>].json */
        JSON_INPUT_CLAIM,        /* chats/<id>[.<pid>].runtime.json */
        JSON_INPUT_WRITER_LOCK,  /* R/tmp/session-writer-locks/<id>.lock */
        JSON_INPUT_TASKS,        /* R/tmp/<hash>/scheduled_tasks.json */
        JSON_INPUT_TASKS_LOCK,   /* R/tmp/<hash>/scheduled_tasks.lock */
        JSON_INPUT_ORGANIZATION, /* projects/<p>/session-organization.v1.json */
        JSON_INPUT_LOGS,         /* R/tmp/<hash>/logs.json */
        JSON_INPUT_WORKTREE,     /* chats/<id>.worktree.json */
        _JSON_INPUT_MAX,
} JsonInput;

typedef struct JsonInputInfo {
        const char *file;    /* the file, for messages and docs */
        JsonDialect dialect; /* how Qwen reads it */
        size_t max;          /* larger files are not read (-EFBIG) */
        const char *qwen;    /* Qwen's reader, and what it does on a parse error */
        const char *qgc;     /* what qgc does when the file does not parse */
} JsonInputInfo;

/* The table row of an input (never NULL for a valid input). */
const JsonInputInfo *json_input_info(JsonInput input);
const char *json_input_dialect_to_string(JsonDialect d);

/* Read (dfd, name) with fs_open_noatime() (no-follow, non-blocking, O_NOATIME where permitted),
 * regular files only (-EBADFD), at most max bytes (-EFBIG), and parse the whole text in dialect:
 * 0 with *ret (owned by the caller), -EBADMSG when it does not parse or is JSON null, -ENOMEM,
 * or the open's -errno (-ENOENT, -ELOOP, ...). */
int json_read_file(int dfd, const char *name, size_t max, JsonDialect dialect,
                   struct json_object **ret);
/* json_read_file() with the dialect and size limit of input's table row. */
int json_input_read(int dfd, const char *name, JsonInput input, struct json_object **ret);

/* The string member key of object o, or NULL (absent, not a string, o not an object). */
const char *json_get_string(struct json_object *o, const char *key);
/* An integer member (a json int, or a double with an integral value): true with *ret. */
bool json_get_int(struct json_object *o, const char *key, int64_t *ret);
