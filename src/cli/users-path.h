/* users-path.h: the safe-path check of root mode: nobody but root and the user could have
 * planted or redirected any component of a user's tree. */
#pragma once

#include <sys/types.h>

#include "macro.h"

/* Walk `path` from / down without trusting anything a third party could change: every
 * component (directories and symlinks, which are followed) must be owned by root or `uid`, no
 * directory may be group- or world-writable unless it is sticky (like /tmp), and the final
 * directory must be owned by `uid` and not group- or world-writable at all.
 * Returns 0 and the symlink-free path in *ret_canonical (may be NULL); -EPERM with a reason in
 * *ret_reason when unsafe; -ENOENT/-ENOTDIR/-ELOOP/... (also with a reason) otherwise. */
int users_path_check(const char *path, uid_t uid, char **ret_canonical, char **ret_reason);

/* Store a formatted reason in *ret (when ret is not NULL) and return r. */
_printf_(3, 4) int users_path_reason(char **ret, int r, const char *fmt, ...);
