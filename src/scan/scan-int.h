/* scan-int.h: what scan.c, scan-session.c (one session's reading), scanaggs.c (directory totals
 * and orphans) and scanpool.c (the threads that scan a tree's projects) share. Not an interface:
 * only these four include it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include <time.h>

#include "claims.h"
#include "enrich.h"
#include "inventory.h"
#include "live.h"
#include "owner.h"
#include "owner.h"
#include "record.h"
#include "scan.h"
#include "util.h"

#define SCAN_DEPTH_MAX 32                   /* in file-history/<id>/ and subagents/<id>/ */
#define SCAN_THREAD_STACK (8 * 1024 * 1024) /* SCAN_DEPTH_MAX FsDirs are 0.5 MiB */
/* A cold page cache (a transcript's first read waited for the disk): each thread advises the
 * kernel of the reads of the next SCAN_PREFETCH_DEPTH transcripts of each listing it walks, so
 * that the disk works on many files while the thread parses one; it stops after
 * SCAN_PREFETCH_WARM prefetches in a row found the cache warm. */
#define SCAN_PREFETCH_DEPTH 16
#define SCAN_PREFETCH_WARM 32

/* A directory's totals: file-history/<id>/ or subagents/<id>/. */
typedef struct ScanAgg {
        char *name;
        FileId dir;
        uint64_t bytes, bytes_alloc;
        msec_t mtime; /* newest mtime inside (the directory's own included) */
        bool incomplete; /* some directory inside could not be listed: sizes and mtime are
                          * lower bounds */
} ScanAgg;

typedef struct ScanAggs {
        ScanAgg *v;
        size_t n, alloc;
        uint64_t *bits;  /* a one-hash Bloom filter of the names (most lookups miss), or NULL */
        size_t n_bits;   /* a power of two */
        bool incomplete; /* the directory could not be listed to its end: names may be missing */
} ScanAggs;

/* Candidate orphans, decided when every tree is in the inventory. */
typedef struct ScanPending {
        OrphanKind kind;
        size_t tree;
        char *project_dir;
        ScanAgg agg;
} ScanPending;

typedef struct ScanPendings {
        ScanPending *v;
        size_t n, alloc;
} ScanPendings;

/* What scanning one project gave: moved into the inventory in project (name) order, so the
 * result does not depend on which thread scanned which project. */
typedef struct ScanOut {
        Session *sessions;
        size_t n_sessions, alloc_sessions;
        Orphan *orphans;
        size_t n_orphans, alloc_orphans;
        ScanPendings pending;
        int r; /* scan_project()'s result: a failure ends the tree's scan there */
        bool incomplete; /* a directory of the project could not be listed: project skipped */
} ScanOut;

typedef struct ScanCtx {
        Inventory *inv;
        const ScanOptions *o;
        size_t tree;
        dev_t dev;         /* of R */
        int tmp_fd;        /* R/tmp or -EBADF */
        LiveProbe *probe;
        ScanAggs history;  /* G/file-history/<x>, sorted by name */
        EnrichCache enrich; /* tmp/<hash>/ read by this thread (enrich.h) */
        ScanPendings pending; /* of every tree, decided by scan_orphans() */
        char *scratch;     /* RECORD_ENDS_SCRATCH bytes for record_read_ends() */
        ScanOut *out;      /* the project being scanned: where its sessions go */
        bool prefetch;     /* this thread's reads found the page cache cold: prefetch ahead */
        unsigned prefetch_warm; /* prefetches in a row that found the cache warm */
} ScanCtx;

/* A sorted list of names (sidecar presence tests without a syscall). */
typedef struct ScanNames {
        char **v;
        size_t n, alloc;
} ScanNames;

/* A transcript file of a session: the name and its directory. */
typedef struct ScanEntry {
        char *name;
        char id[SESSION_ID_MAX + 1];
        unsigned char type; /* readdir's d_type (DT_UNKNOWN when the filesystem does not say) */
} ScanEntry;

typedef struct ScanEntries {
        ScanEntry *v;
        size_t n, alloc;
} ScanEntries;

/* What reading one copy of a transcript gave. */
typedef struct ScanCopy {
        FileId id;
        bool regular;   /* readable regular file on the tree's filesystem */
        char *problem;  /* why it cannot be verified, NULL if fine */
        HeadInfo head;
        bool head_ok;
        const char *head_why;
        TailInfo tail;
        bool tail_ok;
        bool title_unread; /* the title windows were not read (scan_want_title()) */
        uint64_t cold_orig; /* a cold copy: the original's size */
} ScanCopy;

/* One project directory while it is scanned. */
typedef struct ScanProject {
        const char *name;
        int chats_fd, archive_fd;
        int cold_fd; /* chats/archive/.qgc-cold/ (cold.h), -EBADF when absent */
        ScanNames chats_other, archive_other, cold_other;
        ClaimSet claims;
        ScanAggs subagents;
        OwnerCache owner; /* the last cwd's hash and sanitizeCwd() test */
        json_object *org; /* session-organization.v1.json "sessions" (borrowed from org_root) */
        json_object *org_root;
        bool org_unreadable; /* the organization file exists and does not parse */
        int review_fd; /* workflows/generated/review/, -EBADF when absent */
        /* What the scan read of each of the project's sessions (out->sessions[first + i]), for
         * the passes that decide from it (scan_project_passes()) */
        size_t first, n_facts;
        OwnerFacts *owner_facts;
        EnrichFacts *enrich_facts;
        LiveFacts *live_facts;
} ScanProject;

static inline msec_t scan_ts_msec(const struct timespec *ts) {
        return (msec_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

/* scanaggs.c */
void scan_aggs_done(ScanAggs *a);
const ScanAgg *scan_aggs_find(const ScanAggs *a, const char *name);
int scan_dir_sum(int dfd, dev_t dev, unsigned depth, ScanAgg *agg);
int scan_collect_aggs(int dfd, dev_t dev, bool only_ids, ScanAggs *aggs);
int scan_pend_aggs(const ScanCtx *c, ScanPendings *to, OrphanKind kind, const char *project_dir,
                   ScanAggs *aggs);
void scan_pendings_done(ScanPendings *p);
int scan_orphans(ScanCtx *c);

/* scanpool.c */
int scan_out_add_session(ScanOut *out, Session *s);
int scan_out_add_orphan(ScanOut *out, Orphan *o);
int scan_projects(ScanCtx *ctx, int projects_fd, char *const *names, size_t n, int history_fd,
                  dev_t history_dev);

/* scan.c */
int scan_project(ScanCtx *ctx, int projects_fd, const char *name);
bool scan_names_has(const ScanNames *n, const char *name);

/* scan-session.c */
int scan_session(ScanCtx *ctx, ScanProject *p, const ScanEntry *act, const ScanEntry *arc,
                 const ScanEntry *cold);
void scan_prefetch_ahead(ScanCtx *ctx, int dfd, const ScanEntries *e, size_t next, size_t *cursor,
                         bool archived);
