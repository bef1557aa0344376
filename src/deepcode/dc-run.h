/* dc-run.h: what a real run changes in a Deep Code store (deepcode_store's run operations): the
 * delete of a session (its entry in projects/<code>/sessions-index.json, <id>.jsonl,
 * images/<id>/, its branch refs/heads/<id> and reflog in file-history/.git), and the
 * pending-delete markers under .qgc/ from which run_recover finishes a killed delete. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inventory.h"
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
int dc_run_recover(struct StoreRun *run, StoreStep *step);
int dc_run_session(struct StoreRun *run, const Session *s, const struct Verdict *v,
                   StoreStep *step);
/* Remove images/<id> (in images_fd): a directory recursively (not past dev), a symlink or file
 * planted there by its name only. 0 (also when absent) or -errno; *ret_bytes what went. */
int dc_run_rm_images(int images_fd, const char *id, dev_t dev, uint64_t *ret_bytes);
