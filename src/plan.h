/* plan.h: the ordered actions of a run, built before anything is touched, and their renderings.
 * The plan borrows the Inventory and takes the Verdicts; dry-run prints it, a real run executes
 * it (actions.h). */
#pragma once

#include <stdbool.h>
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

/* The display group of an item: a verified session's cwd, else its project directory name
 * (unverified and foreign sessions, orphans; "" for file-history orphans). *ret_verified says
 * which (may be NULL). Borrowed from the inventory. */
const char *plan_item_group(const Plan *p, const PlanItem *it, bool *ret_verified);
/* Verb of an item (KEEP for an unknown one). */
Verb plan_item_verb(const PlanItem *it);
/* A copy of s that is valid UTF-8 (invalid bytes become U+FFFD); for_terminal also replaces
 * control characters with '?'. NULL on ENOMEM; NULL in, "" out. */
char *plan_clean_string(const char *s, bool for_terminal);

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
/* One JSON document, schema in doc/plan-schema.md (PLAN_JSON_VERSION). */
#define PLAN_JSON_VERSION 1
int plan_render_json(const Plan *p, FILE *f);
/* qgc status: per-project disk use, largest first, with a bar. */
int plan_render_status(const Inventory *inv, msec_t now, const RenderOptions *o, FILE *f);
