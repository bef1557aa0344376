/* usage.h: usage salvage. Replays a transcript's ui_telemetry events into the exact
 * usage_record.jsonl line Qwen Code's summarizeTranscript() makes. This module never touches
 * usage_record.jsonl itself: usage-index.c reads it, usage-append.c appends to it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Build the record from the transcript open at fd (read from offset 0 by pread, streaming:
 * memory does not grow with the file). *ret_line is the JSON object followed by '\n', or NULL
 * when Qwen would write nothing (no sessionId, no telemetry, unparseable times).
 * Returns 0 or -errno. */
int usage_build_record(int fd, char **ret_line);
/* The same for a transcript the caller has just seen at size bytes (its identity is checked
 * again after the read): a small one is read whole in one pread() and not read again for its
 * last record. The line is the one usage_build_record() builds of the same bytes. */
int usage_build_record_sized(int fd, uint64_t size, char **ret_line);

/* summarizeTranscript() as Qwen's usage rebuild (rebuildFromSessionJsonl) sees it. Returns 0
 * when Qwen gets no summary (no records, a falsy sessionId, a replay that throws: the rebuild
 * skips the file without remembering the id), 1 when it gets one: *ret_line is then the record
 * line or NULL (no telemetry, unparseable times), and *ret_key (when ret_key is not NULL) the
 * JSON text of the first record's sessionId, the key under which the rebuild dedupes (first file
 * wins), or NULL for an object or array id, which never equals another. -errno on errors. */
int usage_summarize(int fd, char **ret_line, char **ret_key);

/* The "sessionId" string of a record line built by usage_build_record() (Qwen dedupes on the
 * first record's sessionId, which may differ in case from the file name). Returns 0 with a new
 * string, -ENOMSG when it is not a string, -EBADMSG when line is not a record, -ENOMEM. */
int usage_line_session_id(const char *line, char **ret);
