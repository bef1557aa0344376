/* record.h: bounded, tolerant reading of Qwen JSONL records (lines, the first record, the last
 * activity and title) with JSON.parse's grammar (json.h). The only module (with the usage
 * salvage) that parses transcripts. Reads by pread on an fd the caller opened. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "util.h"

struct json_object;

#define RECORD_HEAD_MAX (1024 * 1024) /* Qwen reads at most 1 MiB for the first line */
#define RECORD_TAIL_WINDOW (64 * 1024)

typedef struct HeadInfo {
        char *session_id; /* first record's string "sessionId", NULL if absent/not a string */
        char *cwd;        /* first record's string "cwd", NULL if absent/not a string */
        msec_t timestamp; /* first record's "timestamp", 0 if absent or unparseable */
} HeadInfo;
void record_head_info_done(HeadInfo *h);

/* Read the first record as Qwen's readFirstMaintainableRecord() does: 64 KiB reads, lines trimmed
 * and parsed tolerantly, blank and unparseable lines skipped, the first JSON object found wins
 * (repairing "}{" glued records, skipping non-objects); a pending line with no newline longer
 * than RECORD_HEAD_MAX UTF-16 units stops the read.
 * Returns 0 with *ret filled, or a negative errno with *ret_why a static explanation:
 *   -ENODATA  empty file; -E2BIG first line longer than 1 MiB; -EBADMSG no JSON object;
 *   other -errno from pread. */
int record_read_head(int fd, HeadInfo *ret, const char **ret_why);

typedef enum TitleSource {
        TITLE_NONE,
        TITLE_MANUAL, /* titleSource "manual", absent (legacy) or unknown: shown as manual */
        TITLE_AUTO,   /* titleSource "auto" */
} TitleSource;

typedef struct TailInfo {
        msec_t last_timestamp; /* last parseable record's "timestamp", 0 if none */
        char *title;           /* last system/custom_title customTitle in the window, or NULL */
        TitleSource title_source;
        bool incomplete; /* file does not end with '\n' */
} TailInfo;
void record_tail_info_done(TailInfo *t);

/* The tail read: the last RECORD_TAIL_WINDOW bytes of a file of the given size. last_timestamp
 * is that of the last record with a parseable "timestamp" among the window's complete lines (its
 * partial first line skipped). The title is found as Qwen's readSessionTitleInfoFromFile() finds
 * it: a text scan of the whole window for "customTitle" on lines carrying
 * "subtype":"custom_title", last one wins, then (none in the tail and a larger file) the head
 * window's complete lines; an empty title is none.
 * record_read_head() and the tail read of one file in as few reads as possible, with the
 * same results: a file of at most RECORD_TAIL_WINDOW bytes is read once for both; a larger one
 * reads its tail window, then its head window when the tail has no title (the first record then
 * comes from that window too), else the head alone. scratch holds 2 * RECORD_TAIL_WINDOW bytes.
 * head_r and tail_r are what the two functions return (tail_r -ENODATA when size is 0: not read).
 * Without want_title the title windows are not read (tail.title stays NULL): last_timestamp and
 * incomplete come from a small tail window when that decides them, head from its first bytes.
 * Returns -ENOMEM when either ran out of memory, else 0. */
typedef struct RecordEnds {
        HeadInfo head;
        int head_r;
        const char *head_why;
        TailInfo tail;
        int tail_r;
        bool blocked; /* the first read waited for the disk: the page cache did not hold it */
} RecordEnds;
#define RECORD_ENDS_SCRATCH (2 * RECORD_TAIL_WINDOW)
int record_read_ends(int fd, uint64_t size, bool want_title, char *scratch, RecordEnds *ret);

/* Advise the kernel (POSIX_FADV_WILLNEED) of the ranges record_read_ends(fd, size, want_title)
 * will read first, unless the page cache already holds the start of the first: 1 when it does
 * (nothing advised), 0 when advised, -errno. Advisory only: nothing is read into the caller. */
int record_ends_advise(int fd, uint64_t size, bool want_title);

/* Tolerant parse of one line, as Qwen's parseLineTolerant: the line is trimmed like JS trim();
 * the whole line as JSON when it is an object (other values give nothing); else split into
 * balanced top-level {...} fragments. cb (may be NULL) is called once per object, which it
 * borrows (json_object_get() to keep it); a negative return from cb stops and is returned.
 * Returns the number of objects, or -ENOMEM. */
typedef int (*record_object_cb)(struct json_object *obj, void *userdata);
int record_parse_line(const char *line, size_t len, record_object_cb cb, void *userdata);

/* Stream every line of fd from offset 0, with the file offset at which each starts, in
 * O(max_line) memory: lines longer than max_line are passed to cb cut, truncated=true. Lines
 * exclude the '\n' (a '\r' before it stays); the last line is passed even without a newline. */
typedef int (*record_line_at_cb)(const char *line, size_t len, uint64_t offset, bool truncated,
                                 void *userdata);
int record_for_each_line_at(int fd, size_t max_line, record_line_at_cb cb, void *userdata);
/* The file's text when it holds exactly size bytes now, read with one pread() of size + 1
 * (NUL-terminated in *ret), else *ret NULL: the caller streams it instead. 0 or -errno. */
int record_read_exact(int fd, uint64_t size, char **ret);
/* The same over text already in memory: the lines record_for_each_line_at() passes for a file
 * holding exactly these n bytes. */
int record_for_each_line_mem(const char *text, size_t n, size_t max_line, record_line_at_cb cb,
                             void *userdata);
