/* restore.h: the plan of `qgc restore ID`: every archived copy of the session, whether it can
 * move back, and the files that would move with it. Read-only; actions.c executes the plan. */
#pragma once

#include "plan.h"

/* A plan of RESTORE steps for session id in every tree of inv (one per tree that has it; a step
 * that cannot be done carries its reason in why), or with project (id NULL) for every archived
 * session of the project whose directory (cwd) is project. In a tree where the session is
 * compressed in the cold tier (cold.h), the step decompresses it (session = SIZE_MAX, dir = the
 * .qgc-cold directory, name = the id) and moves it on into chats/, or only into chats/archive/
 * when to_archive; that also finishes a restore killed after the transcript was back but before
 * its .zst went. -ENOENT when there is nothing to restore. */
int restore_plan(const Inventory *inv, const char *id, const char *project, bool to_archive,
                 msec_t now, Plan **ret);

/* The one session id that prefix names in inv: the session with exactly that id (case ignored),
 * else the only id that starts with prefix. 0 with *ret_id borrowed from inv; -ENOENT when none;
 * -ENOTUNIQ when several ids start with it (two of them in *ret_id and *ret_other). */
int restore_resolve(const Inventory *inv, const char *prefix, const char **ret_id,
                    const char **ret_other);
/* The RESTORE step of session id in tree t of inv added to p, as restore_plan() makes it (the
 * recovery pass finishes an interrupted restore with it). 1 added, 0 none, -errno. */
int restore_add_id(Plan *p, const Inventory *inv, size_t t, const char *id, bool to_archive);
