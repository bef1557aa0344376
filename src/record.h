/* record.h: bounded, tolerant reading of Qwen JSONL records. The only module (with usage.c) that
 * parses transcripts. Reads by pread on an fd the caller opened; never seeks a shared offset. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct json_object;

#define RECORD_HEAD_MAX (1024 * 1024) /* Qwen reads at most 1 MiB for the first line */
#define RECORD_TAIL_WINDOW (64 * 1024)

typedef struct HeadInfo {
        char *session_id;  /* first record's string "sessionId", NULL if absent/not a string */
        char *cwd;         /* first record's string "cwd", NULL if absent/not a string */
        msec_t timestamp;  /* first record's "timestamp", 0 if absent or unparseable */
} HeadInfo;
void head_info_done(HeadInfo *h);

/* Read the first line (up to RECORD_HEAD_MAX bytes, or to EOF when there is no newline) and parse
 * it tolerantly: the first JSON object found (repairing "}{" glued records, skipping non-objects).
 * Returns 0 with *ret filled, or a negative errno with *ret_why a static explanation:
 *   -ENODATA  empty file; -E2BIG first line longer than 1 MiB; -EBADMSG no JSON object;
 *   other -errno from pread. */
int record_read_head(int fd, HeadInfo *ret, const char **ret_why);

typedef enum TitleSource {
        TITLE_NONE,
        TITLE_MANUAL, /* titleSource "manual" or absent (legacy) */
        TITLE_AUTO,   /* any other titleSource */
} TitleSource;

typedef struct TailInfo {
        msec_t last_timestamp;   /* last parseable record's "timestamp", 0 if none */
        char *title;             /* last system/custom_title customTitle in the window, or NULL */
        TitleSource title_source;
        bool incomplete;         /* file does not end with '\n' */
} TailInfo;
void tail_info_done(TailInfo *t);

/* Read the last RECORD_TAIL_WINDOW bytes of a file of the given size (and, when no title was
 * found there and the file is larger, the first window, like Qwen's title reader). */
int record_read_tail(int fd, uint64_t size, TailInfo *ret);

/* Tolerant parse of one line, as Qwen's parseLineTolerant: the whole line as JSON when it is an
 * object; else split into balanced top-level {...} fragments. cb is called once per object;
 * a negative return from cb stops and is returned. Returns the number of objects. */
typedef int (*record_object_cb)(struct json_object *obj, void *userdata);
int record_parse_line(const char *line, size_t len, record_object_cb cb, void *userdata);

/* Stream every line of fd from offset 0 with bounded memory (lines longer than max_line are
 * passed to cb truncated=true and not parsed). */
typedef int (*record_line_cb)(const char *line, size_t len, bool truncated, void *userdata);
int record_for_each_line(int fd, size_t max_line, record_line_cb cb, void *userdata);

/* ISO 8601 timestamp string to msec (Date.parse semantics for Qwen's own format). */
int record_parse_time(const char *s, msec_t *ret);
