/* run-plan.h: the tests reach the executor the way qgc does, through actions_run() (actions.h):
 * the lock of every tree taken (G/.qgc.lock), then the plan executed. The action log is the one
 * the test opened (journal_open() in its setup: log_is_open), and no progress line on stderr
 * (quiet). */
#pragma once

#include <stdbool.h>

#include "actions.h"
#include "restore.h"
#include "util.h"

/* qgc run's execution of the plan p: actions_run()'s result (0, 1 some failed, -errno) and
 * stats. */
static inline int test_run_plan(const Plan *p, ActionStats *ret_stats) {
        return actions_run(p, &(ActionsRunOptions){ .log_is_open = true, .quiet = true }, ret_stats);
}

/* qgc restore ID: restore_plan() (-ENOENT: no such session, its other errors) and
 * test_run_plan() (0, 1 some step failed, -errno) with its stats when ret_stats is set. */
static inline int test_restore(const Inventory *inv, const char *id, bool to_archive,
                               ActionStats *ret_stats) {
        Plan *p = NULL;
        int r;

        r = restore_plan(inv, id, NULL, to_archive, util_now_msec(), &p);
        if (r < 0)
                return r;
        r = test_run_plan(p, ret_stats);
        plan_free(p);
        return r;
}
