/* dc-run.h: what every run operation of Deep Code's store shares (deepcode_store's run_open,
 * run_close, run_recover): the run's open store, a step's hook and reason, liveness, the edit of
 * a project's index, a session's images and branch removed, and the pending markers under
 * .qgc/ (fs.h: FS_STATE_DIR) that the recovery pass finishes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs.h"
#include "inventory.h"
#include "macro.h"
#include "store.h"

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

/* The run's open store (store.h: run_open, run_close); deepcode-store.c gives run_session the
 * delete of a session not archived (dc-delete.h), the rest to dc-archive.c. */
int dc_run_open(const Inventory *inv, size_t t, struct StoreRun **ret);
void dc_run_close(struct StoreRun *run);

/* The kinds of pending marker in .qgc/ (by the prefix of their names) and what finishes each:
 * recover(run, qfd (.qgc/), marker's name, step) returns 1 finished (or dropped: the session
 * changed since), 0 left for a later run, -errno with step->why. dc_run_recover() lists .qgc/
 * once, at most 64 markers of all kinds a run, and calls each marker's; kinds ends with {}. */
typedef int (*DcRunRecoverFn)(struct StoreRun *run, int qfd, const char *marker,
                              StoreStep *step);
typedef struct DcRunRecovery {
        const char *prefix;
        DcRunRecoverFn recover;
} DcRunRecovery;
int dc_run_recover(struct StoreRun *run, const DcRunRecovery *kinds, StoreStep *step);

/* A marker's text, "qgc deepcode <kind> 1" then the project's code, the id and the .jsonl's
 * identity. */
char *dc_run_marker_text(const char *kind, const char *code, const char *id, const FileId *f);
/* Read the marker (qfd, marker), named prefix<id>, at most DC_RUN_MARKER_MAX bytes, of one of
 * kinds (NULL-terminated; what names them in the message): *ret_text holds it, parsed in place
 * into *ret_code, *ret_id and *ret_f; *ret_kind is its kind's index. 0, -ENOMEM, else -errno
 * with step->why (-EBADMSG: not qgc's marker of those kinds, kept). */
#define DC_RUN_MARKER_MAX 8192
int dc_run_marker_read(int qfd, const char *marker, const char *prefix,
                       const char *const *kinds, const char *what, char **ret_text,
                       char **ret_code, char **ret_id, FileId *ret_f, size_t *ret_kind,
                       StoreStep *step);
/* Write the marker (what: "delete", "archive"...) durably after its hook, .qgc/ made if
 * needed: the fd of .qgc/, or -errno with step->why (-EEXIST: one of that name is pending). */
int dc_run_marker_write(struct StoreRun *run, const char *marker, const char *text,
                        const char *what, const char *id, StoreStep *step);

/* The hook of a change (step->hook), and step->why set (the first one stays) returning r. */
_printf_(2, 3) void dc_run_hook(StoreStep *step, const char *fmt, ...);
_printf_(3, 4) int dc_run_why(StoreStep *step, int r, const char *fmt, ...);
/* May a Deep Code process be writing projects/<code>/? 0 no, -EBUSY (step->why), -ENOMEM. */
int dc_run_live(const struct StoreRun *run, const char *code, StoreStep *step);
/* Can a project code from the index or a marker be used as a directory name of the store? (a
 * session id: dc_index_id_valid()) */
bool dc_run_name_ok(const char *s);

/* An edit of the parsed index (its "entries" array) for session id, by dc_run_index_edit(): 1
 * changed (the new text is written), 2 nothing to change but the checks passed (the edit returns
 * 1), 0 nothing of id there (the edit returns 0), or -errno with step->why set. */
struct json_object;
typedef int (*DcRunIndexEditFn)(struct json_object *entries, const char *id, void *userdata,
                                StoreStep *step);
/* Edit projects/<code>/sessions-index.json (the project directory open at pfd) with edit: only
 * when the text is exactly what Deep Code writes (JSON.stringify(index, null, 2)) and its
 * originalPath still names code, while no Deep Code process works in the project; as temp file,
 * fsync, re-read and compare, exchange (renameat2) and compare what it replaced (Deep Code's
 * version written meanwhile put back), directory fsync; redone from the new text when Deep Code
 * rewrote it meanwhile (DC_RUN_INDEX_TRIES). The hook says "replace ... by its text <what>
 * session <id>". 1 edited (or edit returned 2), 0 no index or edit returned 0; -EBUSY live,
 * -EBADMSG not Deep Code's text (never rewritten), -ESTALE originalPath changed, -EAGAIN kept
 * rewritten, another -errno; step->why says which. */
int dc_run_index_edit(const struct StoreRun *run, int pfd, const char *code, const char *id,
                      DcRunIndexEditFn edit, void *userdata, const char *what, StoreStep *step);
/* Is the index entry o of a prompt in progress (dc-store.h's DC_LIVE_STATUS)? */
bool dc_run_entry_busy(struct json_object *o, msec_t now);
/* Remove the loose refs/heads/<id> and its reflog of projects/<code>/file-history/.git (pfd the
 * project's directory) after their hooks, their blocks added to step->bytes; a planted symlink
 * or directory is left. 0 or -errno with step->why. */
int dc_run_rm_branch(int pfd, const char *id, StoreStep *step);
/* Remove images/<id> (in images_fd): a directory recursively (not past dev), a symlink or file
 * planted there by its name only. 0 (also when absent) or -errno; *ret_bytes what went. */
int dc_run_rm_images(int images_fd, const char *id, dev_t dev, uint64_t *ret_bytes);
