/* scan.h: the read-only walk of a tree into the Inventory. openat/fstatat only, never follows a
 * symlink, never leaves the tree's filesystem, never blocks on a FIFO, never writes. */
#pragma once

#include "inventory.h"

/* Whether the scan advises the kernel of the transcript reads ahead (never what it reads). */
typedef enum ScanPrefetch {
        SCAN_PREFETCH_AUTO = 0, /* while reads find the page cache cold */
        SCAN_PREFETCH_OFF,
        SCAN_PREFETCH_ALWAYS,   /* for every transcript (tests: the prefetch path on any cache) */
} ScanPrefetch;

typedef struct ScanOptions {
        msec_t now;          /* for clamping future timestamps */
        bool no_atime;       /* reserved: the scan always tries O_NOATIME (files and dirs) and
                              * falls back without it on EPERM (not the owner, no CAP_FOWNER) */
        const TitleNeed *titles; /* whose title windows to read; NULL: every transcript's */
        unsigned jobs;       /* threads that scan the projects of a tree; 0 and 1: the caller's
                              * thread alone. The result does not depend on it. */
        unsigned hygiene;    /* hygiene kinds to look for (hygiene_need()); 0: none */
        ScanPrefetch prefetch; /* advice to the kernel on a cold page cache (scan.c) */
} ScanOptions;

/* Scan every tree already in inv (inv->trees), then inventory orphans across all trees
 * (file-history/<id> and subagents/<id> with no transcript in any tree, empty project dirs).
 * Problems with single entries become session records with OWNER_UNVERIFIED and a reason, or
 * debug messages; only a failure to open a tree's root is returned as an error (-errno), and
 * then the remaining trees are still scanned. */
int scan_all(Inventory *inv, const ScanOptions *o);
