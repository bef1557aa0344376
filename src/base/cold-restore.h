/* cold-restore.h: restoring sessions from the cold tier (cold.h's format), one file or a batch
 * with one group of fsyncs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cold.h"

/* Decompress the files names[0..n) of one cold directory, (cold_fd, name.zst) each into
 * (dst_fd, name), never replacing, as one batch: each into a temporary file in dst_fd, checked
 * against the recorded SHA-256 and size, its mtime set; the new files fsynced as one group
 * (issued together); each renamed into place, in order; dst_fd fsynced once; the .zst of every
 * file now in place removed, in order; cold_fd fsynced once. A target that exists already with
 * exactly the recorded content (a run killed after the rename) only makes its .zst go. So a kill
 * after any step leaves files that are compressed, or in place beside their .zst (which a restore
 * of it again only removes), and at most temporary files (which it replaces). A name without a
 * .zst is skipped when skip_missing (res[i] all 0). The first error stops: nothing after it is
 * renamed, and the files already in place are completed; on every error the .zst stays. 0 or the
 * first error: -EEXIST (another target exists), -EBADMSG (the content does not match),
 * -EPROTONOSUPPORT (compressed with a dictionary this qgc does not have), -errno. */
int cold_restore_files(int cold_fd, const char *const *names, size_t n, bool skip_missing,
                       int dst_fd, ColdStepFn step, void *userdata, ColdResult *res);
