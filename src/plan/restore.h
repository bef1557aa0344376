/* restore.h: the plan of `qgc restore ID`: every archived copy of the session, whether it can
 * move back, and the files that would move with it. Read-only; exec/ executes the plan. A store
 * that plans its own restores (StoreOps.plan_restore: Qwen's, with its sidecars and cold tier)
 * builds its steps with restore_refusal() and restore_step_init(); another store's session is
 * restored whole (StoreOps.run_restore), its transcript moving as StoreOps.session_path names
 * it. */
#pragma once

#include "plan.h"

/* A plan of RESTORE steps for session id in every tree of inv (one per tree that has it; a step
 * that cannot be done carries its reason in why), or with project (id NULL) for every archived
 * session of the project whose directory (cwd) is project; to_archive: --to-archive (a store
 * that restores a session whole refuses it). -ENOENT when there is nothing to restore. */
int restore_plan(const Inventory *inv, const char *id, const char *project, bool to_archive,
                 msec_t now, Plan **ret);

/* The one session id that prefix names in inv: the session with exactly that id (case ignored),
 * else the only id that starts with prefix. 0 with *ret_id borrowed from inv; -ENOENT when none;
 * -ENOTUNIQ when several ids start with it (two of them in *ret_id and *ret_other). */
int restore_resolve(const Inventory *inv, const char *prefix, const char **ret_id,
                    const char **ret_other);
/* The RESTORE step of session id in tree t of inv added to p, as restore_plan() makes it (the
 * recovery pass finishes an interrupted restore with it): the store's own (plan_restore), else
 * one for the archived session. 1 added, 0 none, -errno. */
int restore_add_id(Plan *p, const Inventory *inv, size_t t, const char *id, bool to_archive);

/* Why session s of tree tr cannot be restored by any store (a conflict, not archived, ownership
 * not proven, its files larger than qgc merges), or NULL. Static. */
const char *restore_refusal(const Tree *tr, const Session *s);
/* *ret: the RESTORE step of session s of tree t, refused with why (NULL: it can be done). 0 or
 * -ENOMEM (nothing to free). */
int restore_step_init(const Inventory *inv, size_t t, const Session *s, const char *why,
                      PlanStep *ret);
