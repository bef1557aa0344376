/* actions-int.h: what every actions file (actions.c, actions-store.c, actions-orphan.c,
 * actions-report.c) shares, and nobody else uses. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "journal.h"
#include "plan.h"
#include "store.h"
#include "util.h"

/* What a run did (actions_run()'s report). */
typedef struct ActionStats {
        unsigned n_archived, n_deleted, n_skipped, n_failed, n_orphans;
        unsigned n_restored, n_recovered;
        uint64_t bytes_archived, bytes_deleted, bytes_orphans;
        /* what the stores counted (StoreCounts: the same fields) */
        unsigned n_salvaged;
        unsigned n_erased; /* rows and entries removed from files a store's program shares */
        unsigned n_erased_files; /* files it shares that were edited */
        unsigned n_compressed; /* sessions compressed into the cold tier */
        uint64_t bytes_compressed_in, bytes_compressed_out; /* their originals, compressed */
} ActionStats;

/* One tree open for a run. */
typedef struct ActionsTree {
        int error; /* why the tree cannot be acted on (negative errno), 0 when usable */
        struct StoreRun *run; /* its store's open tree (StoreOps.run_open), or NULL */
} ActionsTree;

/* A store with per-run state (StoreOps.run_begin): its state for this run. */
typedef struct ActionsStore {
        const StoreOps *store;
        struct StoreRunAll *all; /* NULL: its run_begin failed */
} ActionsStore;

typedef struct ActionsContext {
        const Inventory *inv;
        ActionStats *stats;
        ActionsTree *trees;
        ActionsStore *stores; /* the run's stores with run_begin, n_stores of them */
        size_t n_stores;
        StoreCounts counts; /* what the stores counted (ActionStats gets it at the end) */
        bool one_thread; /* --jobs 1: no thread of a store's (ActionsRunOptions.one_thread) */
        unsigned n_steps;
        bool failed;
} ActionsContext;

/* actions-report.c: the bottom; every other file of the executor calls it */
void actions_report_step(void *userdata, const char *what);
JournalEvent actions_report_event(StoreOutcome o, JournalEvent done);
/* The outcome of a store's run operation that returned r (store.h's return codes). */
StoreOutcome actions_report_store(int r);
int actions_report_session(ActionsContext *c, const Session *s, const Verdict *v,
                           StoreOutcome o, const char *reason, int error);

/* actions-store.c: a tree whose store has run operations (ActionsTree.run) */
/* The per-run state of every store with StoreOps.run_begin (after the run-start entry), and its
 * end (after the last commit; the stores' counts into the run's stats). */
void actions_store_begin(ActionsContext *c, const Plan *p);
void actions_store_ready(ActionsContext *c);
/* Let every store but except (NULL: every store) carry out what it queued (StoreOps.run_commit). */
void actions_store_commit(ActionsContext *c, const StoreOps *except);
void actions_store_end(ActionsContext *c);
void actions_store_recover(ActionsContext *c, size_t t);
/* A recovery step (PLAN_STEP_RECOVER_*) the tree's store planned, carried out by it
 * (StoreOps.run_recover_step), journalled and counted. */
void actions_store_recover_step(ActionsContext *c, const PlanStep *st);
int actions_store_session(ActionsContext *c, const Session *s, const Verdict *v);
/* Before any RESTORE step of p: every tree's store records their start (StoreOps.
 * run_restore_begin: what its recovery pass finishes after a kill). ok[t]: tree t's record is
 * durable (else its restores do not run). 0 or -ENOMEM. */
int actions_store_restore_begin(ActionsContext *c, const Plan *p, bool *ok);
/* A RESTORE step, carried out by its tree's store (StoreOps.run_restore), journalled and
 * counted. 0 or -errno. */
int actions_store_restore(ActionsContext *c, const PlanStep *st);

/* actions-orphan.c */
int actions_orphan_step(ActionsContext *c, const Orphan *o, const Verdict *v);
