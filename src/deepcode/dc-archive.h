/* dc-archive.h: the run side of qgc's archive of Deep Code sessions (Deep Code has none): ARCHIVE
 * takes a session out of Deep Code's view into ~/.deepcode/.qgc-archive/<code>/ (its
 * transcript, index entry, checkpoints and images, whole and restorable byte for byte, and
 * <id>.after, the ids after it in the project's order, from which dc-restore.c puts the entry
 * back where it was),
 * COMPRESS turns its transcript there into cold.h's .zst, DELETE of an archived session
 * removes those files and its branch; the pending markers .qgc/archive-<id> and their recovery. */
#pragma once

#include "dc-run.h"
#include "store.h"

#define DC_ARCHIVE_MARKER_PREFIX "archive-"

/* run_session for ARCHIVE (of an active session), COMPRESS (of an archived one) and DELETE of
 * an archived one (store.h's contract). */
int dc_archive_session(struct StoreRun *run, const Session *s, const struct Verdict *v,
                    StoreStep *step);
/* DcRunRecoverFn of DC_ARCHIVE_MARKER_PREFIX: an archive whose entry is still in the index is
 * undone, else finished; a delete of an archived session is finished. */
int dc_archive_recover_one(struct StoreRun *run, int qfd, const char *marker, StoreStep *step);
