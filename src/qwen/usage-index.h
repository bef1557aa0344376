/* usage-index.h: reading G/usage_record.jsonl (usage-index.c): which sessions already have a
 * line, read once per run (each byte once, then only what was appended since), and the history
 * Qwen would rebuild, written once. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "usage-append.h"

typedef struct UsageIndex UsageIndex;

int usage_index_new(UsageIndex **ret);
UsageIndex *usage_index_free(UsageIndex *idx);

/* Does G/usage_record.jsonl (relative to global_fd) have a line whose sessionId is id?
 * Same answer as usage_index_has_session(): 1 yes, 0 no (also when the file does not exist),
 * -errno when it cannot be read. Reads only bytes appended since the previous call; starts over when the
 * file was replaced or shrank; falls back to usage_index_has_session() for a file with lines too
 * long to index. A record after a partial line (a writer died mid-append) counts, as for Qwen. */
int usage_index_has(UsageIndex *idx, int global_fd, const char *id);

/* Does the file have a record with version 1, the test Qwen's loadUsageHistory makes before it
 * trusts the file instead of rebuilding from transcripts? 1, 0 (also no file), -errno. */
int usage_index_has_v1(UsageIndex *idx, int global_fd);

/* The executor's group commit: between usage_index_hold() and usage_index_release(), the two
 * calls above look at the file (one fstatat(), and reading what was appended) only the first
 * time, and answer every later call from what that one saw, instead of one fstatat() per call.
 * The executor holds the index while it prepares a batch and releases it before the batch's
 * append: a line Qwen appends meanwhile is seen by the next batch, as one appended between a
 * session's lookup and the batch's append always was. usage_index_freeze_history() looks again
 * after it wrote the file. Both are idempotent. */
void usage_index_hold(UsageIndex *idx);
void usage_index_release(UsageIndex *idx);

/* A transcript may go on the strength of a line the index read (a line qgc did not write this
 * run: Qwen appends without fsync) only once that line is durable. usage_index_sync_open(): 0
 * when every byte the index read is known durable (fsynced in this run), 1 with ret->fd, a
 * read-only fd on the file the index read, to fsync (on any thread), or -errno (the file was
 * replaced since it was read: -EAGAIN); then usage_index_sync_end() with the fsync's result
 * notes the bytes it made durable and closes ret->fd. usage_index_appended(): after
 * usage_append_end() returned 0 for a, its fsync made the file durable up to the end of a's
 * bytes. */
typedef struct UsageSync {
        int fd;
        dev_t dev;
        ino_t ino;
        uint64_t upto; /* what the index had read when the fd was opened (0: nothing to note) */
} UsageSync;
int usage_index_sync_open(UsageIndex *idx, int global_fd, UsageSync *ret);
void usage_index_sync_end(UsageIndex *idx, UsageSync *s, int fsync_r);
void usage_index_appended(UsageIndex *idx, const UsageAppend *a);

/* Qwen's usage totals must not change because qgc writes a line. While the file has no v1 record
 * (absent, empty, only other lines: trees of Qwen 0.12 to 0.15, or never opened /stats), Qwen's
 * loadUsageHistory rebuilds the history from G/projects/<dir>/chats/<file>.jsonl on every call;
 * once qgc appends a salvaged line it reads only the file, and every other session would drop
 * out of /stats. So before the first line qgc writes to such a file, call this: it writes the
 * history Qwen would rebuild now (rebuildFromSessionJsonl: projects and files in byte order,
 * "*.jsonl" but not "*.ledger.jsonl", regular files, not chats/archive/, first sessionId wins),
 * exactly what Qwen itself persists on its first /stats, after the file's own bytes, in one
 * step (temporary file, fsync, rename). A symlink on the way (Qwen follows it, qgc never does)
 * or an unreadable transcript fails closed. Returns 1 written, 0 not needed (a v1 record exists,
 * or nothing to write), -errno. */
int usage_index_freeze_history(UsageIndex *idx, int global_fd);

/* The cwds ("project") that the file records for the sessions of ids (n, sorted by
 * util_ascii_strcasecmp()), each once, appended to *cwds (*n_cwds): a text scan of each line for
 * "sessionId":"<id>" and "project":"<absolute path>" without escapes, read without moving the
 * atime in 1 MiB windows, a longer line skipped; a file that cannot be read gives nothing.
 * 0 or -ENOMEM. */
int usage_index_projects(int gfd, const char *const *ids, size_t n, char ***cwds, size_t *n_cwds);
