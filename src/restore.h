/* restore.h: the plan of `qgc restore ID`: every archived copy of the session, whether it can
 * move back, and the files that would move with it. Read-only; actions.c executes the plan. */
#pragma once

#include "plan.h"

/* A plan of RESTORE steps for session id in every tree of inv (one per tree that has it; a step
 * that cannot be done carries its reason in why). In a tree where the session is compressed in
 * the cold tier (cold.h), the step decompresses it into chats/archive/ instead (session =
 * SIZE_MAX, dir = the .qgc-cold directory, name = the id); that also finishes a restore killed
 * after the transcript was back but before its .zst went. -ENOENT when no tree has it. */
int restore_plan(const Inventory *inv, const char *id, msec_t now, Plan **ret);
