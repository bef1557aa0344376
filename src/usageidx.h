/* usageidx.h: which sessions already have a line in G/usage_record.jsonl, read once per run.
 * usage_has_session() reads the whole file per call, which made a run that salvages n sessions
 * cost O(n * file size); the index reads each byte once and then only what was appended since. */
#pragma once

typedef struct UsageIndex UsageIndex;

int usage_index_new(UsageIndex **ret);
UsageIndex *usage_index_free(UsageIndex *idx);
static inline void usage_index_freep(UsageIndex **p) {
        usage_index_free(*p);
}

/* Does G/usage_record.jsonl (relative to global_fd) have a line whose sessionId is id?
 * Same answer as usage_has_session(): 1 yes, 0 no (also when the file does not exist), -errno
 * when it cannot be read. Reads only bytes appended since the previous call; starts over when the
 * file was replaced or shrank; falls back to usage_has_session() for a file with lines too long
 * to index. */
int usage_index_has(UsageIndex *idx, int global_fd, const char *id);
