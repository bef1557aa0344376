/* store.h: the boundary between the core (scan/, plan/, exec/, policy/) and a store, the files
 * one coding agent keeps (Qwen Code's in src/qwen/, Deep Code's in src/deepcode/). A store
 * exports one const StoreOps; a Tree names its store (Tree.store), and the core reaches a
 * store's files, names and formats only through it. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "inventory.h"

typedef struct ScanOptions {
        msec_t now;          /* for clamping future timestamps */
        const TitleNeed *titles; /* whose title windows to read; NULL: every transcript's */
        unsigned jobs;       /* threads that scan the projects of a tree; 0 and 1: the caller's
                              * thread alone. The result does not depend on it. */
        unsigned hygiene;    /* hygiene kinds to look for (hygiene_need()); 0: none */
        const struct StoreOps *store; /* scan_all() sets it: the store whose trees
                                       * StoreOps.scan walks */
} ScanOptions;

#define STORE_SIZE_KINDS 16        /* kinds of bytes a store may tell apart */
#define STORE_SIZE_UNKNOWN_SHOWN 5 /* unknown paths named */

/* One part of a kind split three ways (StoreSize.split): its objects and allocated bytes per
 * way, or unknown (why). */
#define STORE_SIZE_WAYS 3
typedef struct StoreSizePart {
        char *name;      /* the part: a project's directory name */
        bool known;
        const char *why; /* !known: why (static) */
        uint64_t objects[STORE_SIZE_WAYS], alloc[STORE_SIZE_WAYS];
} StoreSizePart;

/* Where every byte of a tree goes, by the store's kinds, for qgc status: what du says of the
 * tree, hard links once. */
typedef struct StoreSize {
        const char *kind_names[STORE_SIZE_KINDS]; /* the text's ("active sessions"), in order */
        const char *kind_keys[STORE_SIZE_KINDS];  /* the JSON's ("sessions") */
        size_t n_kinds;
        size_t unknown_kind;  /* what the store does not recognise (never touched): in the text
                               * even when empty, with its first paths */
        uint64_t files[STORE_SIZE_KINDS];
        uint64_t bytes[STORE_SIZE_KINDS]; /* st_size */
        uint64_t alloc[STORE_SIZE_KINDS]; /* st_blocks * 512 */
        uint64_t total_bytes, total_alloc;
        bool incomplete;      /* a mount point, an unlistable directory, too deep */
        char *unknown[STORE_SIZE_UNKNOWN_SHOWN]; /* the first unknown paths (relative) */
        size_t n_unknown;
        size_t n_stale, n_projects; /* stale project entries (candidates) of all projects */
        uint64_t stale_bytes;
        /* A kind split by part and three ways (Deep Code: file-history's objects by project,
         * by what reaches them); split_title NULL: none. */
        const char *split_title, *split_key, *part_key; /* the text's; the JSON's keys */
        const char *way_names[STORE_SIZE_WAYS], *way_keys[STORE_SIZE_WAYS];
        StoreSizePart *parts;
        size_t n_parts;
        const char *stale_what; /* what the store calls stale and what stale_bytes counts */
} StoreSize;

static inline void store_size_done(StoreSize *s) {
        for (size_t i = 0; i < s->n_unknown; i++)
                free(s->unknown[i]);
        for (size_t i = 0; i < s->n_parts; i++)
                free(s->parts[i].name);
        free(s->parts);
        *s = (StoreSize){};
}

/* One step of a run operation (StoreOps.run_*): the caller's hook, and what the store says of
 * the outcome. */
struct StoreRun;  /* a store's open tree for a run: the store's own type */
struct Verdict;   /* policy.h */
struct PlanStep;  /* plan.h: a step the store planned (its recovery pass, a restore) */
struct Plan;      /* plan.h */
typedef struct StoreStep {
        void (*hook)(void *userdata, const char *what); /* before every change; may be NULL */
        void *userdata;
        char *why;       /* set by the store (allocated): the outcome's reason, for the journal */
        uint64_t bytes;  /* set by the store: bytes freed (st_blocks * 512) */
        unsigned n_recovered; /* run_recover: steps finished or undone */
        char *path;      /* run_orphan may set it (allocated): the path the journal names, for
                          * a store whose orphans are not all below the runtime root (NULL:
                          * the runtime root / orphan_path) */
        bool failed;     /* set by the store: the -errno returned is a failure even when it is
                          * one of the skips' codes below (an unlinkat()'s EPERM, EBUSY) */
        uint64_t bytes_compressed; /* run_restore of a compressed copy: its compressed bytes */
        char *place;     /* set by run_restore when done (allocated): where it went, in the
                          * store's words: a session's directory, or for a compressed copy
                          * the part of the project ("chats/") */
} StoreStep;

/* What became of one session's action (or an orphan's): each step of the executor or a store
 * says which, and the executor alone maps it to the outcome's journal event (the done event is
 * the action's own: archived, deleted, restored, orphan-reclaimed; a store journals only what
 * else it did, as Qwen's salvages and shared-file edits). The reason that goes with it is the
 * step's text, unchanged. */
typedef enum StoreOutcome {
        STORE_DONE,
        STORE_SKIPPED_CHANGED,  /* a file is not what the scan saw ("changed since scan") */
        STORE_SKIPPED_CONFLICT, /* a copy in the other place (or a .zst with other content) */
        STORE_SKIPPED_LIVE,     /* in use since the scan, or liveness cannot be checked */
        STORE_SKIPPED_REFUSED,  /* the verdict no longer holds (ownership, state), or the
                                 * deletion limits held it back */
        STORE_SKIPPED_NOT_NOW,  /* a check of the step said not now: a file the store's program
                                 * shares cannot be edited, the usage line it shares was not
                                 * written, an orphan's own re-check */
        STORE_FAILED,
        _STORE_OUTCOME_MAX,
        _STORE_OUTCOME_INVALID = -22,
} StoreOutcome;

/* What only a store knows of a run, counted by it for the run's summary. */
typedef struct StoreCounts {
        unsigned n_salvaged;     /* usage records salvaged before a transcript went */
        unsigned n_erased;       /* rows and entries removed from files the program shares */
        unsigned n_erased_files; /* files it shares that were edited */
        unsigned n_compressed;   /* sessions compressed into the cold tier */
        uint64_t bytes_compressed_in, bytes_compressed_out; /* their originals, compressed */
} StoreCounts;

/* The executor as a store sees it for a whole run (StoreOps.run_begin). */
struct Plan;     /* plan.h */
struct StoreRunAll; /* a store's state of a run over all its trees: the store's own type */
typedef struct StoreRunEnv {
        void (*hook)(void *userdata, const char *what); /* before every change (StoreStep.hook) */
        /* the outcome of a session run_session queued (it returned > 0), journalled and counted
         * by the executor; v: the session's verdict */
        void (*report)(void *userdata, const Session *s, const struct Verdict *v, StoreOutcome o,
                       const char *why, int error);
        void *userdata;
        StoreCounts *counts; /* the store adds to it */
        bool one_thread;     /* --jobs 1: no thread of the store's beside the executor */
} StoreRunEnv;

typedef struct StoreOps {
        const char *name; /* "qwen", "deepcode" */
        /* Why the store refuses the restore of a session whose Session.restore_full the scan
         * set (its place is full), for a store with run_restore. */
        const char *restore_full;

        /* --root DIR: is DIR, open at dir_fd, one of this store's roots? 1 yes, 0 no, or -errno.
         * Read-only, follows no symlink. The cli asks every store, the last one (Qwen's, which
         * takes any directory) last. */
        int (*detect)(int dir_fd, const char *dir);
        /* --root DIR: fill *ret with DIR as the tree's roots and store (strings owned by ret,
         * user and uid left to the caller). 0 or -errno. */
        int (*tree_from_dir)(const char *dir, Tree *ret);
        /* The user's tree below home, found as the store's program finds it: 0 filled; -ENOENT
         * when the user has none (no error); another -errno with *ret_why (allocated, may stay
         * NULL) saying why nothing may be decided for the user's tree. */
        int (*tree_for_home)(const char *home, Tree *ret, char **ret_why);

        /* Pure (the policy calls it): the name of the project directory the store gives a
         * working directory. Allocated; NULL on ENOMEM or when cwd has none.
         * This, scan and measure may be NULL: a store without project_dir matches no exact
         * project to an orphan, one without scan has its trees incomplete (nothing decided),
         * one without measure is left out of qgc status. */
        char *(*project_dir)(const char *cwd);

        /* Walk every tree of inv whose store this is, read-only, into sessions and orphans
         * (inventory_add_session(), inventory_add_orphan()), the orphans that need all of the
         * store's trees included. Fills Tree.dev, fs_* and incomplete. A problem with one entry
         * becomes a record (OWNER_UNVERIFIED and its cause) or a debug message. 0, -ENOMEM, or
         * the first -errno of a tree that could not be opened (the others still walked). */
        int (*scan)(Inventory *inv, const ScanOptions *o);

        /* qgc status: measure tree t of the scanned inv into *ret (store_size_done() it, also
         * on failure). 0, -ENOMEM, or another -errno: the tree's root cannot be walked (the
         * tree is left out). */
        int (*measure)(const Inventory *inv, size_t t, StoreSize *ret);

        /* The path of session s's transcript relative to its tree's runtime root (archived:
         * where the store's archive keeps it, for a store that has one), as the journal names
         * it and qgc show reads it. Allocated; NULL on ENOMEM. May be NULL: the journal then
         * names no path, and qgc show finds no transcript. */
        char *(*session_path)(const Session *s, bool archived);
        /* The path of orphan o relative to its tree's runtime root, as the journal names it, for
         * a store with run_orphan. Allocated; NULL on ENOMEM. May be NULL: project_dir/name. */
        char *(*orphan_path)(const Orphan *o);

        /* The plan's reasons in the store's words (plan/reason.c): what an orphan of kind k is
         * ("orphan file-history, no transcript"; static); why the run would skip the action of
         * session s that a limit of the store's own files refuses (the rule policy_rule_limit:
         * archive, an archive refused, else a delete; sel, the rule that selects it; allocated,
         * NULL on ENOMEM; may be NULL: said in general words); merge_limit, why a restore of a
         * session with Session.merge_too_big is refused (NULL: the store sets none). */
        const char *(*orphan_what)(OrphanKind k);
        char *(*limit_reason)(const Session *s, bool archive, const char *sel);
        const char *merge_limit;
        /* Why a session the scan found in two states (SESSION_CONFLICT) is kept, in the store's
         * words ("in both chats/ and chats/archive/"; static). NULL: said in general words. */
        const char *conflict_what;

        /* qgc status in the store's words: no_archive, the store has no archive of its own (no
         * ARCHIVED column, no archive line, when no tree's store has one and no session is
         * archived: Deep Code's is qgc's, there once qgc archived there); session_bytes,
         * what a session's bytes count (the tree cap's lines, lines of 60 columns joined by
         * "\n  "; NULL: not said). */
        bool no_archive;
        const char *session_bytes;

        /* Run operations (exec/ calls them; the executor refuses the trees of a store whose
         * run_open is NULL). run_open opens what a run needs of tree t (directories, liveness
         * probe) with the tree's lock already held: 0, or -errno (the tree's sessions, recovery
         * and restore steps then fail; an open tree it still returns in *ret takes the tree's
         * orphans); run_close releases it. run_recover finishes or undoes what a killed run
         * left (first, before any action). run_session carries out v (ARCHIVE, COMPRESS or
         * DELETE) for s, which the executor refused already when it is a conflict, its
         * ownership is not proven or its state is not the verb's; run_orphan carries out v for
         * o (DELETE reclaims it; a stale project entry's v->mark writes (> 0) or removes (< 0)
         * its marker). Each re-checks identity (the scan's FileId), ownership and liveness,
         * calls step->hook before every change (the crash tests kill there) and returns 0
         * done, -ESTALE changed since the scan, -EBUSY live, -EEXIST conflict, -EAGAIN not now,
         * another -errno failed (run_session of a store with run_begin may return > 0: queued,
         * its outcome reported through StoreRunEnv.report at once or by run_commit); after a
         * kill at any hook, nothing is half-visible to the store's program and run_recover
         * converges to what an unkilled run leaves. */
        int (*run_open)(const Inventory *inv, size_t t, struct StoreRun **ret);
        /* A store whose sessions' actions are carried out per run, not per tree (Qwen's group
         * commit): NULL for one without. run_begin, once per run after the run-start entry and
         * before any recovery: the run's state of the store's trees (runs[t]: tree t's open
         * tree, NULL for another store's or one run_open returned none for), env kept for the
         * run (its hook and report take env->userdata).
         * 0 or -errno (then the store's sessions are not acted on: run_session is still called
         * and fails them). run_ready, after the recovery, before the first action: work ahead
         * may start (Qwen's salvage thread). run_session may then queue a session (return > 0)
         * and report its outcome through env->report later, at the latest in run_commit, which
         * the executor calls before an orphan's step, before a session of another store, and
         * at the end; run_end, after the last run_commit, frees the state (and says at debug
         * level what its work ahead did). */
        int (*run_begin)(const struct Plan *p, struct StoreRun *const *runs,
                         const StoreRunEnv *env, struct StoreRunAll **ret);
        void (*run_ready)(struct StoreRunAll *all);
        void (*run_commit)(struct StoreRunAll *all);
        void (*run_end)(struct StoreRunAll *all);
        void (*run_close)(struct StoreRun *run);
        int (*run_recover)(struct StoreRun *run, StoreStep *step);
        /* A recovery step the store planned itself (a PlanStep of kind RECOVER_*, Qwen's
         * recovery pass: recover.h), in the plan's order, before any action: 1 done (the
         * journal's reason step->why, may stay NULL), 0 nothing to say (gone, changed, not
         * the plan's), or -errno failed (step->why: why). NULL: the store plans none. */
        int (*run_recover_step)(struct StoreRun *run, const struct PlanStep *st,
                                StoreStep *step);
        int (*run_session)(struct StoreRun *run, const Session *s, const struct Verdict *v,
                           StoreStep *step);
        int (*run_orphan)(struct StoreRun *run, const Orphan *o, const struct Verdict *v,
                          StoreStep *step);
        /* qgc restore. plan_restore adds to p the RESTORE steps of session id in tree t, in
         * whatever state an earlier restore left it (plan/restore.h: restore_add_id()): 1
         * added, 0 none, -errno. NULL: plan/restore.c plans a step for the archived session,
         * which run_restore restores whole (refused when in use, when restore_full, and with
         * --to-archive). Steps without an inventory session (PlanStep.session == SIZE_MAX: a
         * compressed copy the store restores from its name) are the store's own. */
        int (*plan_restore)(struct Plan *p, const Inventory *inv, size_t t, const char *id,
                            bool to_archive);
        /* Before the first restore of tree t changes anything: the start of every RESTORE step
         * of p in tree t that its plan did not refuse, recorded durably (what the recovery pass
         * finishes after a kill). 0; -errno: none of the tree's restores may run. NULL: none
         * needed. */
        int (*run_restore_begin)(struct StoreRun *run, const struct Plan *p, StoreStep *step);
        /* The RESTORE step st (its plan's refusal st->why included: nothing is begun then, the
         * store only logs it and returns -EEXIST): back where the store's program lists it,
         * whole, with the same re-checks, hook and results as run_session (-EEXIST: the store's
         * program has it too, -ENOSPC: restore_full, -EPERM: ownership not proven); a kill at
         * any hook is finished or undone by the next run. The store logs its failures; the
         * executor journals the outcome (step->why; done: step->place, and for a step without
         * an inventory session step->path, bytes and bytes_compressed) and logs a session's. */
        int (*run_restore)(struct StoreRun *run, const struct PlanStep *st, StoreStep *step);
        /* After the executor journalled run_restore's result r for st: the store records the
         * restore's end when it is over for good (Qwen: a line of session-times), so that a
         * kill leaves no ended restore without its journal entry. NULL: nothing to record. */
        void (*run_restore_end)(struct StoreRun *run, const struct PlanStep *st, int r,
                                StoreStep *step);
} StoreOps;

/* qgc status: tree t of the scanned inv measured by its store (StoreOps.measure); -EOPNOTSUPP
 * when the store cannot. store_size_done() *ret after it in any case. */
static inline int store_measure(const Inventory *inv, size_t t, StoreSize *ret) {
        const StoreOps *store = inv->trees[t].store;

        return store && store->measure ? store->measure(inv, t, ret) : -EOPNOTSUPP;
}
