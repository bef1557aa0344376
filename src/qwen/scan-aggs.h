/* scan-aggs.h: the totals of the directories that belong to a session by name
 * (G/file-history/<id>/, projects/<p>/subagents/<id>/) and the orphan decision over them: such
 * a directory whose id has no transcript in any tree. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "store.h"

#define SCAN_AGGS_DEPTH_MAX 32 /* in file-history/<id>/ and subagents/<id>/ */

/* A directory's totals: file-history/<id>/ or subagents/<id>/. */
typedef struct ScanAgg {
        char *name;
        FileId dir;
        uint64_t bytes, bytes_alloc;
        msec_t mtime; /* newest mtime inside (the directory's own included) */
        bool incomplete; /* some directory inside could not be listed or is deeper than
                          * SCAN_AGGS_DEPTH_MAX: sizes and mtime are lower bounds */
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

void scan_aggs_done(ScanAggs *a);
const ScanAgg *scan_aggs_find(const ScanAggs *a, const char *name);
/* Add the sizes and the newest mtime below directory dfd (on dev, no mount point entered, no
 * symlink followed) to agg; what cannot be listed makes it incomplete. 0 or -ENOMEM. */
int scan_aggs_dir_sum(int dfd, dev_t dev, unsigned depth, ScanAgg *agg);
/* The totals of every subdirectory of dfd into aggs, sorted by name. only_ids: skip names that
 * are not session ids. 0 or -ENOMEM. */
int scan_aggs_collect(int dfd, dev_t dev, bool only_ids, ScanAggs *aggs);
/* Hand aggs over to the pending list to (aggs is emptied); one listed in part stays incomplete:
 * scan_aggs_orphans() keeps and reports it. */
int scan_aggs_pend(ScanPendings *to, size_t tree, OrphanKind kind, const char *project_dir,
                   ScanAggs *aggs);
void scan_aggs_pendings_done(ScanPendings *p);
/* The pending directories of pend whose id has no transcript in any tree of inv become its
 * orphans, except one not listed in full (ScanAgg.incomplete: kept, a notice says why); nothing
 * is decided when a tree of store was not listed in full. 0 or -ENOMEM. */
int scan_aggs_orphans(Inventory *inv, const StoreOps *store, ScanPendings *pend);
