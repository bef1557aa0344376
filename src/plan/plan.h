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

/* An action that is not a policy verdict: qgc restore, and the recovery pass (recover.h). */
typedef enum PlanStepKind {
        PLAN_STEP_RECOVER_DELETE, /* finish a delete that a pending marker proves */
        PLAN_STEP_RECOVER_TEMP,   /* remove a stale temporary file of qgc's own */
        PLAN_STEP_RESTORE,        /* move an archived session back into chats/ */
        _PLAN_STEP_KIND_MAX,
        _PLAN_STEP_KIND_INVALID = -22,
} PlanStepKind;

/* One file a step moves or removes, for display (absolute paths; to is NULL for a removal). */
typedef struct PlanPath {
        char *from;
        char *to;
} PlanPath;

typedef struct PlanStep {
        PlanStepKind kind;
        size_t tree;
        size_t session;     /* RESTORE: index into inv->sessions */
        char *session_id;   /* RESTORE, RECOVER_DELETE */
        char *dir;          /* RECOVER_*: directory of name, relative to the tree's root */
        bool in_global;     /* ... the root being G (else R) */
        char *name;         /* RECOVER_TEMP: the file; RECOVER_DELETE: the marker (in dir) */
        FileId id;          /* scan-time identity of dir/name */
        char *why;          /* RESTORE: why it cannot be done, NULL when it can */
        bool to_archive;    /* RESTORE of a compressed session: into chats/archive/ only */
        PlanPath *paths;    /* what would move or go, as seen when the plan was built */
        size_t n_paths;
} PlanStep;

typedef struct Plan {
        const Inventory *inv; /* borrowed */
        Verdicts *verdicts;   /* owned; NULL in a restore plan */
        msec_t now;
        PlanItem *items;      /* every session and orphan, in execution/display order:
                               * tree, project, then verb (delete, archive, skip, keep), then id */
        size_t n_items;
        PlanStep *steps;      /* executed in order: recovery steps before the items, restore
                               * steps after them */
        size_t n_steps, n_steps_alloc;
        bool is_restore;      /* the plan of `qgc restore ID`: steps only */
} Plan;

/* The display group of an item: a verified session's cwd, else its project directory name
 * (unverified and foreign sessions, orphans; "" for file-history orphans). *ret_verified says
 * which (may be NULL). Borrowed from the inventory. */
const char *plan_item_group(const Plan *p, const PlanItem *it, bool *ret_verified);
/* The tree index of an item (its session's or orphan's). */
size_t plan_item_tree(const Plan *p, const PlanItem *it);
/* Verb of an item (KEEP for an unknown one). */
Verb plan_item_verb(const PlanItem *it);
/* The reason of an item, rendered from its verdict and its session's or orphan's facts
 * (reason.h); malloc'ed, NULL on ENOMEM. */
char *plan_item_reason(const Plan *p, const PlanItem *it);

/* What the deletion limits (max-deletions, max-deletions-percent) hold back in a plan: sessions
 * a rule would delete that stay (skipped) or are archived instead. */
typedef struct PlanHeldBack {
        size_t n;
        uint64_t bytes;
        bool tree_cap;     /* a tree cap (tree max-size, keep-free) wanted one of them gone */
        const char *limit; /* the limit(s) that held them back (static) */
        size_t n_limit;    /* deletes planned as skips: their edit of a file Qwen shares would be
                            * refused (policy_rule_limit) */
        uint64_t bytes_limit;
        size_t n_limit_archive; /* archives planned as skips: their sidecar merge would be */
        uint64_t bytes_limit_archive;
} PlanHeldBack;
void plan_held_back(const Plan *p, PlanHeldBack *ret);

/* The forecast of the plan's compressions (compress-after): the bytes the cold tier would
 * compress (the transcripts and sidecars of the sessions planned compress: what the executor
 * reads, not their file-history or subagents), and an estimate of their compressed size, from
 * the ratio measured on each tree's compressed sessions (cold_bytes / cold_orig), or
 * PLAN_COMPRESS_DEFAULT_RATIO where a tree has none. */
#define PLAN_COMPRESS_DEFAULT_RATIO 6 /* 1:6, zstd's on the test corpus' transcripts, 1:6.3 */
typedef struct PlanCompressForecast {
        uint64_t n, bytes_in, bytes_out;
        bool measured;   /* every tree involved had compressed sessions to measure */
        bool defaulted;  /* some tree had none: the default ratio stood in */
        double ratio;    /* bytes_in / bytes_out, for the text (0 when nothing) */
} PlanCompressForecast;
void plan_compress_forecast(const Plan *p, PlanCompressForecast *ret);

/* The plan's warnings, each once: every cap it leaves unmet with what holds it ("tree cap not
 * met: 336K > max-size 200K after the plan; held by keep-latest 3 sessions (120K)"), then the
 * sessions the deletion limits hold back from other rules ("policy not met: ..."; limit =
 * true), then the deletes planned as skips for a file Qwen shares and the archives planned as skips for a
 * sidecar merge (plan_limit_warning()), then the actions planned as skips in read-only stores. fn's first error stops the walk and is returned; -ENOMEM. */
typedef int (*PlanWarningFn)(void *userdata, const char *warning, bool limit);
int plan_foreach_warning(const Plan *p, PlanWarningFn fn, void *userdata);

/* Takes ownership of *verdicts (sets it to NULL). */
int plan_build(const Inventory *inv, Verdicts **verdicts, msec_t now, Plan **ret);
/* An empty plan of steps only (qgc restore; restore.h fills it). */
int plan_new_steps(const Inventory *inv, msec_t now, Plan **ret);
/* Append a step; the plan takes every pointer in *step (also on failure). */
int plan_add_step(Plan *p, PlanStep *step);
/* Append every step of from (a plan_new_steps() plan), in order; from is left without steps
 * (also on failure, when they are freed). 0 or -ENOMEM. */
int plan_take_steps(Plan *p, Plan *from);
/* Add a display path to a step (copies from and to; to may be NULL). */
int plan_step_add_path(PlanStep *step, const char *from, const char *to);
void plan_step_done(PlanStep *step);
const char *plan_step_kind_to_string(PlanStepKind k);
Plan *plan_free(Plan *p);
static inline void plan_freep(Plan **p) {
        plan_free(*p);
}

typedef struct RenderOptions {
        unsigned columns;   /* terminal width; 0 = 100 */
        bool show_keep;     /* list kept sessions too (default true for dry-run) */
        bool changes;       /* --changes: one line per session that is not kept, naming its
                             * project, the most idle first within a project */
} RenderOptions;

int render_text(const Plan *p, const RenderOptions *o, FILE *f);
/* One JSON document, schema in doc/plan-schema.md (PLAN_JSON_VERSION). */
#define PLAN_JSON_VERSION 1
int plan_json_render(const Plan *p, FILE *f);
/* s as a JSON string (quoted, escaped and cleaned as in the plan); for the --all-users
 * document that wraps each user's plan. */
int plan_json_render_string(const char *s, FILE *f);
/* Disk use of one project for qgc status. */
typedef struct PlanUse {
        size_t tree;
        const char *group;  /* the cwd of a verified project, else its directory name */
        bool verified;
        const char *project_dir;
        unsigned n_active, n_archived;
        uint64_t bytes, bytes_alloc;
        msec_t oldest, newest; /* last activity */
} PlanUse;
/* Aggregate the inventory per (tree, project), largest first within each tree. */
int plan_status_collect(const Inventory *inv, PlanUse **ret, size_t *ret_n);
/* qgc status --json: one document (schema in doc/plan-schema.md, "Status"), with every tree's
 * bytes by kind (store.h) as its "breakdown"; allocated: the total the caps compare first. */
int plan_json_render_status(const Inventory *inv, msec_t now, bool allocated, FILE *f);
/* qgc status: per-project disk use, largest first, with a bar. */
int render_status_text(const Inventory *inv, msec_t now, const RenderOptions *o, FILE *f);
/* qgc status: per tree, the figure tree.max-size compares and what it counts
 * (policy_tree_counted()), with the cap in force. */
int render_status_caps(const Inventory *inv, const TreeLimits *tl, FILE *f);

/* qgc status: the breakdown of every tree of inv by kind (tree-size.h), below the per-project
 * table. allocated: which measure the total is compared with first (tree.count). */
int render_status_trees(const Inventory *inv, bool allocated, FILE *f);
