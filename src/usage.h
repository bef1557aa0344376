/* usage.h: usage salvage. Replays a transcript's ui_telemetry events into the exact
 * usage_record.jsonl line Qwen Code's pre-delete salvage writes, and appends it safely. */
#pragma once

#include <stdbool.h>

/* Build the record from the transcript open at fd (read from offset 0 by pread, streaming:
 * memory does not grow with the file). *ret_line is the JSON object followed by '\n', or NULL
 * when Qwen would write nothing (no sessionId, no telemetry, unparseable times).
 * Returns 0 or -errno. */
int usage_build_record(int fd, char **ret_line);

/* Does G/usage_record.jsonl (opened relative to global_fd) already have a line whose sessionId
 * equals id (tolerant parse)? Returns 1 yes, 0 no (also when the file does not exist), -errno
 * when it exists but cannot be read. */
int usage_has_session(int global_fd, const char *id);

/* Append line (one complete line ending in '\n') to G/usage_record.jsonl with a single write on
 * an O_APPEND fd, then fsync. Creates the file 0600 if needed. Returns 0 or -errno (a short write
 * is -EIO). */
int usage_append(int global_fd, const char *line);

/* The "sessionId" string of a record line built by usage_build_record() (Qwen dedupes on the
 * first record's sessionId, which may differ in case from the file name). Returns 0 with a new
 * string, -ENOMSG when it is not a string, -EBADMSG when line is not a record, -ENOMEM. */
int usage_line_session_id(const char *line, char **ret);
