/* live-int.h: what live.c (a session's signals) and live-probe.c (the probe of a tree) share: the
 * probe's layout. Not an interface: only they include it. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inventory.h"
#include "live.h"

typedef struct LiveRegEntry {
        char *session_id; /* NULL: no record of a session (unreadable, no "sessionId") */
        unsigned flags;   /* LIVE_REGISTRY, LIVE_UNKNOWN or 0 (provably dead) */
        char *reason;
        char *name;       /* the file in G/sessions/ */
        FileId id;        /* its identity when read; not present: read again at a refresh */
} LiveRegEntry;

/* A directory as it was listed: when it still has this identity, its listing is still true. */
typedef struct LiveDirStamp {
        bool valid; /* false: list again (never listed, or changed within a second of listing) */
        dev_t dev;
        ino_t ino;
        int64_t mtime_ns, ctime_ns;
} LiveDirStamp;

struct LiveProbe {
        char *global_dir, *runtime_dir; /* for live_check()'s fresh reload */
        char boot_id[64];
        bool boot_known;
        uint64_t pidns;
        bool pidns_known;
        char hostname[HOST_NAME_MAX + 1];

        LiveRegEntry *reg;      /* sorted by session id, records without one last */
        size_t n_reg, alloc_reg;
        char *registry_problem; /* G/sessions exists but could not be listed */
        LiveDirStamp reg_stamp;
        unsigned reg_reads;     /* registry records read and parsed (live_probe_reads()) */
        LiveDirStamp locks_stamp;

        int locks_fd;           /* R/tmp/session-writer-locks, -EBADF when absent */
        char **locks;           /* sorted names in it */
        size_t n_locks, alloc_locks;
        char *locks_problem;
};

/* live.c */
int live_read_small(const char *path, char *buf, size_t n);

/* live-probe.c */
int live_reg_cmp_id(const LiveRegEntry *e, const char *id);
int live_cmp_name(const void *a, const void *b);
