/* du.h: the walk du does, for qgc status: every entry below a root directory once, through the
 * safe-filesystem layer (no symlink followed, listed with O_NOATIME where permitted), a file with
 * several hard links once, a mount point neither counted nor entered. What each entry is, the
 * caller's callback says. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

/* Called for the root (rel "") and every entry below it (rel: its path from the root), a
 * directory before what it holds. 0, or a negative errno that stops the walk. */
typedef int (*DuFn)(void *userdata, const char *rel, const struct stat *st);

/* Walk the root directory path; a directory with identity skip (may be NULL) is neither counted
 * nor entered. *ret_incomplete is set when something was not counted (a mount point, an
 * unlistable directory, too deep, a path too long). 0, or -errno when path cannot be opened,
 * or fn's error, -ENOMEM. */
int du_walk(const char *path, const struct stat *skip, DuFn fn, void *userdata,
            bool *ret_incomplete);
