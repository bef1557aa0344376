/* scan.h: the read-only walk of every tree into the Inventory, each by its store (store.h). */
#pragma once

#include "store.h"

/* Scan every tree already in inv (inv->trees) with its store's scan, once per store (each
 * walks all of its trees, then decides what needs them all: orphans). Problems with single
 * entries become session records with OWNER_UNVERIFIED and a reason, or debug messages; only a
 * failure to open a tree's root is returned as an error (-errno), and then the remaining trees
 * are still scanned. */
int scan_all(Inventory *inv, const ScanOptions *o);
