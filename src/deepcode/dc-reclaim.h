/* dc-reclaim.h: the reclaim of a Deep Code store's orphans (ORPHAN_DC_*, inventory.h, found by
 * dc-store.c): a transcript the index does not name with its images, images of no session, an
 * empty images/, the compaction of a project's checkpoint repository (dc-git.h), and a stale
 * project (ORPHAN_STALE_PROJECT: its marker written or removed, or the project removed once its
 * sessions are deleted; the orphan's own state says which: the executor calls it for a verdict
 * that deletes or marks, Verdict.mark). */
#pragma once

#include "inventory.h"
#include "store.h"

/* Reclaim o of the scanned inv in the ~/.deepcode open at store_fd, running as the store's user.
 * First re-checked: the entry is still the one the scan saw (o->dir), its project's index
 * still parses and does not name it, no Deep Code process of the project is alive (nor one that
 * cannot be told) and no session of it is in a prompt. step->hook runs before every change;
 * step->bytes and step->why are set. A kill at any hook leaves what Deep Code reads whole, and
 * a rerun with the same o finishes the job. 0 done, -ESTALE changed since the scan, -EBUSY live,
 * -EOPNOTSUPP a kind only reported (logs/error.log), another -errno failed. */
int dc_reclaim_orphan(int store_fd, const Inventory *inv, const Orphan *o, StoreStep *step);
