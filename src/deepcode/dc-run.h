/* dc-run.h: what a real run changes in a Deep Code store (deepcode_store's run operations): the
 * delete of a session (its entry in projects/<code>/sessions-index.json, <id>.jsonl,
 * images/<id>/, its branch refs/heads/<id> and reflog in file-history/.git), and the
 * pending-delete markers under .qgc/ from which run_recover finishes a killed delete. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inventory.h"
#include "macro.h"
#include "store.h"

/* A pending delete's marker: .qgc/delete-<id>, written durably before the first change of the
 * delete and removed after its last; it holds the project's code and the .jsonl's identity. */
#define DC_RUN_QGC_DIR ".qgc"
#define DC_RUN_MARKER_PREFIX "delete-"
/* A rewrite of the index by Deep Code during qgc's edit: the edit is redone from the new text
 * this many times, then skipped (nothing lost: the index is Deep Code's). */
#define DC_RUN_INDEX_TRIES 3

struct StoreRun {
        const Inventory *inv;
        size_t tree;
        int store_fd;    /* ~/.deepcode, O_DIRECTORY|O_NOFOLLOW */
        int projects_fd; /* projects/ (-errno when it cannot be opened) */
        dev_t dev;       /* the store's filesystem: no change leaves it */
        uid_t uid;       /* the store directory's owner (whose Deep Code processes count) */
};

/* The run operations (store.h: their contract). run_session does DELETE only (the policy plans
 * archive and compress as skips: StoreOps.archive_refused). */
int dc_run_open(const Inventory *inv, size_t t, struct StoreRun **ret);
void dc_run_close(struct StoreRun *run);
/* The recovery of one kind of marker (in .qgc/ open at qfd): 1 finished or undone (or dropped:
 * the session changed since), 0 left for a later run, -errno with step->why. */
typedef int (*DcRunRecoverFn)(struct StoreRun *run, int qfd, const char *marker,
                              StoreStep *step);
typedef struct DcRunRecovery {
        const char *prefix; /* of the marker's name */
        DcRunRecoverFn fn;
} DcRunRecovery;
/* run_recover: .qgc/ listed once (at most 64 markers a run, of every kind), each marker given to
 * the fn of the first entry of table (ended by a NULL prefix) whose prefix starts its name. */
int dc_run_recover(struct StoreRun *run, const DcRunRecovery *table, StoreStep *step);
/* The recovery of a delete's marker (DC_RUN_MARKER_PREFIX). */
int dc_run_recover_one(struct StoreRun *run, int qfd, const char *marker, StoreStep *step);
int dc_run_session(struct StoreRun *run, const Session *s, const struct Verdict *v,
                   StoreStep *step);
/* An edit of the parsed index (its "entries" array) for session id, by dc_run_index_edit(): 1
 * changed (the new text is written), 2 nothing to change but the checks passed (the edit returns
 * 1), 0 nothing of id there (the edit returns 0), or -errno with step->why set. */
struct json_object;
typedef int (*DcRunIndexEditFn)(struct json_object *entries, const char *id, void *userdata,
                                StoreStep *step);
/* Edit projects/<code>/sessions-index.json (the project directory open at pfd) with edit: only
 * when the text is exactly what Deep Code writes (JSON.stringify(index, null, 2)) and its
 * originalPath still names code, while no Deep Code process works in the project; as temp file,
 * fsync, re-read and compare, rename, directory fsync; redone from the new text when Deep Code
 * rewrote it meanwhile (DC_RUN_INDEX_TRIES). The hook says "replace ... by its text <what>
 * session <id>". 1 edited (or edit returned 2), 0 no index or edit returned 0; -EBUSY live,
 * -EBADMSG not Deep Code's text (never rewritten), -ESTALE originalPath changed, -EAGAIN kept
 * rewritten, another -errno; step->why says which. */
int dc_run_index_edit(const struct StoreRun *run, int pfd, const char *code, const char *id,
                      DcRunIndexEditFn edit, void *userdata, const char *what, StoreStep *step);
/* The helpers of every change to a Deep Code store (dc-run.c, dc-cold.c, dc-restore.c): step's
 * hook called with the formatted text (when there is a hook); step->why set (the first one
 * stays) and r returned; whether a Deep Code process may be writing projects/<code>/ (0 no,
 * -EBUSY with step->why, -ENOMEM); whether a name from the index or a marker can be a file name
 * of the project. */
_printf_(2, 3) void dc_run_hook(StoreStep *step, const char *fmt, ...);
_printf_(3, 4) int dc_run_why(StoreStep *step, int r, const char *fmt, ...);
int dc_run_live(const struct StoreRun *run, const char *code, StoreStep *step);
bool dc_run_name_ok(const char *s);
/* Remove images/<id> (in images_fd): a directory recursively (not past dev), a symlink or file
 * planted there by its name only. 0 (also when absent) or -errno; *ret_bytes what went. */
int dc_run_rm_images(int images_fd, const char *id, dev_t dev, uint64_t *ret_bytes);
