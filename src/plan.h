/* plan.h: the ordered actions of a run, built before anything is touched, and their renderings.
 * The plan borrows the Inventory and takes the Verdicts; dry-run prints it, a real run executes
 * it (actions.h). */
#pragma once

#include <stdio.h>

#include "inventory.h"
#include "policy.h"

typedef struct PlanItem {
        bool is_orphan;
        size_t index;          /* into inv->sessions or inv->orphans */
        const Verdict *verdict; /* borrowed from the plan's Verdicts */
} PlanItem;

typedef struct Plan {
        const Inventory *inv; /* borrowed */
        Verdicts *verdicts;   /* owned */
        msec_t now;
        PlanItem *items;      /* every session and orphan, in execution/display order:
                               * tree, project, then verb (delete, archive, skip, keep), then id */
        size_t n_items;
} Plan;

/* Takes ownership of *verdicts (sets it to NULL). */
int plan_build(const Inventory *inv, Verdicts **verdicts, msec_t now, Plan **ret);
Plan *plan_free(Plan *p);
static inline void plan_freep(Plan **p) {
        plan_free(*p);
}

typedef struct RenderOptions {
        unsigned columns;   /* terminal width; 0 = 100 */
        bool show_keep;     /* list kept sessions too (default true for dry-run) */
} RenderOptions;

int plan_render_text(const Plan *p, const RenderOptions *o, FILE *f);
int plan_render_json(const Plan *p, FILE *f);
/* qgc status: per-project disk use, largest first, with a bar. */
int plan_render_status(const Inventory *inv, msec_t now, const RenderOptions *o, FILE *f);
