/* recover-marker.h: the pending-delete marker of a delete (G/.qgc/pending/): its files with their
 * identities, its text, its durable write and removal. Below recover.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fs.h"

/* Where the pending-delete markers live, relative to G: in qgc's state directory (fs.h). */
#define RECOVER_PENDING_DIR FS_STATE_DIR "/pending"

/* The limits of a pending marker file, which the tree's user can write too: a file over one is
 * reported and ignored (never acted on). qgc writes one file per batch of deletes, at most
 * QWEN_BATCH_MAX_ARCHIVES (1024) markers; a marker is a 3-line head and a line per file of
 * the session (at most 17 and the session's dead runtime claims), about 150 bytes each with
 * Qwen's names (a typical batch: under 1 MiB), at most about 650 with 255-byte project and
 * session names (1024 x 18 lines: under 12 MiB). So: 4 times the markers and about 3 times the
 * largest batch's bytes. Parsing is one pass, its memory a few times the file's size. */
#define RECOVER_MARKER_MAX (32U * 1024 * 1024) /* bytes */
#define RECOVER_MARKERS_MAX 4096U             /* markers in one file */

/* Called after every mutating step, like ArchiveStepFn. */
typedef void (*RecoverStepFn)(void *userdata, const char *step);

/* Call step (when not NULL) with what was just changed. */
static inline void recover_marker_step(RecoverStepFn step, void *userdata, const char *what) {
        if (step)
                step(userdata, what);
}

/* One file (or directory) of a session that a delete removes, with its identity then. */
typedef struct RecoverFile {
        bool in_global;     /* rel is relative to G (else to R) */
        bool is_dir;        /* file-history/<id>, subagents/<id>: compared by dev and inode */
        bool is_transcript; /* the transcript: while it exists the delete has not begun */
        char *rel;
        FileId id;
} RecoverFile;

/* The pending marker of one delete: which session, and every file of it that the delete will
 * remove, as they were just before its first step. */
typedef struct RecoverMarker {
        char *session;
        char *project_dir;
        RecoverFile *files;
        size_t n_files, alloc_files;
        struct RecoverMarker *next; /* the next marker of a batch's file, or NULL */
} RecoverMarker;

void recover_marker_done(RecoverMarker *m);
/* Note (root, rel) with the identity in st. */
int recover_marker_add(RecoverMarker *m, bool in_global, const char *rel, const struct stat *st,
                       bool is_transcript);
/* The marker as text (recover-marker.c's static recover_marker_format()), and back. Parsing refuses (-EBADMSG) any path that is not one of the
 * files a delete of that session removes, so a marker can never name anything else; a text
 * longer than RECOVER_MARKER_MAX (-EFBIG) or with more than RECOVER_MARKERS_MAX markers
 * (-E2BIG). One pass: time and memory linear in the text's length. */
int recover_marker_parse(const char *text, RecoverMarker *ret);
/* The markers m[0..n) (a batch of deletes, or one) in one file of G/.qgc/pending/, written
 * durably (temp file, fsync, rename, fsync), creating the directories; step is called after each
 * change. The recovery pass handles every marker of such a file; the file goes when the whole
 * batch is done. *ret_name: its name. */
int recover_marker_write_many(int global_fd, dev_t global_dev, RecoverMarker *const *m, size_t n,
                              RecoverStepFn step, void *userdata, char **ret_name);
/* Remove the marker name (ENOENT is success). */
int recover_marker_remove(int global_fd, dev_t global_dev, const char *name, RecoverStepFn step,
                          void *userdata);
