/* dc-delete.h: the delete of a Deep Code session (deepcode_store's run_session for a session not
 * archived): its entry out of projects/<code>/sessions-index.json, <id>.jsonl, images/<id>/, its
 * branch refs/heads/<id> and reflog in file-history/.git; and the pending-delete marker under
 * .qgc/ from which the next run's recovery finishes a killed delete. */
#pragma once

#include "inventory.h"
#include "store.h"

/* A pending delete's marker: .qgc/delete-<id>, written durably before the first change of the
 * delete and removed after its last; it holds the project's code and the .jsonl's identity. */
#define DC_DELETE_MARKER_PREFIX "delete-"

int dc_delete_session(struct StoreRun *run, const Session *s, const struct Verdict *v,
                      StoreStep *step);
/* DcRunRecoverFn (dc-run.h) of DC_DELETE_MARKER_PREFIX. */
int dc_delete_recover_one(struct StoreRun *run, int qfd, const char *marker, StoreStep *step);
