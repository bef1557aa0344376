/* usageidx-int.h: what usageidx.c (the index, the reader, the appends) and usagehistory.c (the
 * rebuilt history) share of G/usage_record.jsonl; nobody else includes it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashmap.h"
#include "usageidx.h"

#define USAGE_FILE "usage_record.jsonl"

struct UsageIndex {
        Hashmap ids; /* the set of ids (C strings: exact bytes, as Qwen compares them) */
        dev_t dev;
        ino_t ino;
        uint64_t consumed; /* every complete line before this offset is in the set */
        bool valid;        /* dev/ino/consumed describe the file */
        bool fallback;     /* a line was too long to index: ask usage_has_session() */
        bool has_v1;       /* a complete line before consumed holds a record with version 1 */
        bool rebuild_empty; /* usage_history_freeze() found nothing to write in this run */
        char *pending;     /* the unterminated last line seen, parsed but not consumed */
        uint64_t size_seen; /* the file's size at the last refresh */
        bool held;         /* usage_index_hold(): look at the file once until the release */
        bool held_seen;    /* ... and it was looked at: held_state is the answer */
        int held_state;    /* usageidx_update()'s result then (0 no file, 1 indexed, 2 fallback) */
        uint64_t synced;   /* the bytes of (dev, ino) before this offset are durable: fsynced in
                            * this run (usage_index_sync_open(), usage_index_appended()) */
};

/* openat() through the safe-filesystem layer (fs_openat(): no symlink, no mount crossing, a
 * bind-mounted usage file included), with openat()'s convention: -1 and errno. */
int usageidx_openat(int dfd, const char *name, int flags, mode_t mode);
/* Open the file for reading: never through a symlink, never blocking (a FIFO), errno set. */
int usageidx_open_read(int global_fd);
/* The index's set of ids: is id in it; add it (0 or -ENOMEM); empty the whole index. */
bool usageidx_contains(const UsageIndex *idx, const char *id);
int usageidx_add(UsageIndex *idx, const char *id);
void usageidx_clear(UsageIndex *idx);
