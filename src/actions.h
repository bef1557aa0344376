/* actions.h: carries out a Plan. The only module that changes a managed tree. No dry-run flag:
 * a dry run never calls it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

typedef struct ActionStats {
        unsigned n_archived, n_deleted, n_skipped, n_failed, n_orphans, n_salvaged;
        uint64_t bytes_archived, bytes_deleted, bytes_orphans;
} ActionStats;

/* Execute every ARCHIVE/DELETE item of the plan (sessions and orphans): re-check identity and
 * liveness, salvage usage, archive by rename or delete by unlinkat, journal each outcome.
 * A failed action does not stop the run. Returns 0 when all succeeded (or were skipped for
 * safety), 1 when some failed, -errno on a fatal error. */
int actions_execute(const Plan *p, ActionStats *ret_stats);

/* qgc restore ID: move an archived session (and sidecars) back into chats/. */
int actions_restore(const Inventory *inv, const char *id);
