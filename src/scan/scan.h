/* scan.h: the read-only walk of a tree into the Inventory. openat/fstatat only, never follows a
 * symlink, never leaves the tree's filesystem, never blocks on a FIFO, never writes. */
#pragma once

#include "store.h"


/* Scan every tree already in inv (inv->trees), then inventory orphans across all trees
 * (file-history/<id> and subagents/<id> with no transcript in any tree, empty project dirs).
 * Problems with single entries become session records with OWNER_UNVERIFIED and a reason, or
 * debug messages; only a failure to open a tree's root is returned as an error (-errno), and
 * then the remaining trees are still scanned. */
int scan_all(Inventory *inv, const ScanOptions *o);
