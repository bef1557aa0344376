/* dc-restore.h: qgc restore of a Deep Code session from qgc's archive (dc-store.h's layout):
 * its transcript, images and index entry back where Deep Code lists them (the entry at the place
 * its <id>.after gives: restores in any order rebuild the index's order, sorted or not), and the
 * pending-restore markers under .qgc/ from which run_recover finishes or undoes a killed one. */
#pragma once

#include "dc-run.h"
#include "inventory.h"
#include "store.h"

/* A pending restore's marker: .qgc/restore-<id>, written durably before the first change and
 * removed after the last; its text as a delete's (code, id, the archived transcript's FileId). */
#define DC_RESTORE_MARKER_PREFIX "restore-"

/* StoreOps.run_restore (store.h). Refused: -EEXIST Deep Code has it too (indexed, its .jsonl or
 * images/<id>/), -ENOSPC the index holds DC_INDEX_ENTRIES_MAX entries, -EPERM the session or its
 * project is not proven, -EBUSY live, -ESTALE its archive changed since the scan. */
int dc_restore_session(struct StoreRun *run, const Session *s, StoreStep *step);
/* The recovery of marker (in .qgc/ open at qfd), for dc_run_recover(): 1 finished or undone,
 * 0 left for a later run, -errno with step->why. */
int dc_restore_recover_one(struct StoreRun *run, int qfd, const char *marker, StoreStep *step);
