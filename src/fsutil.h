/* fsutil.h: safe filesystem primitives by (dirfd, name): no-follow opens, identity checks,
 * fd-based recursive removal that never follows a symlink or leaves the filesystem. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "inventory.h"

/* open a directory below dfd without following symlinks: O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC */
int fs_open_dir(int dfd, const char *name);
/* open a slash-separated relative path component by component (each O_NOFOLLOW), checking
 * every directory stays on dev (when dev != 0). */
int fs_open_path(int dfd, const char *relpath, dev_t dev);
void fs_fileid_from_stat(FileId *id, const struct stat *st);
/* does (dfd, name) still have identity id (dev, ino, size, mtime)? 1 yes, 0 no, -errno */
int fs_check_identity(int dfd, const char *name, const FileId *id);
/* remove directory (dfd, name) recursively by fd; never follows symlinks, never crosses dev.
 * ENOENT is success. Returns bytes freed via ret_bytes (may be NULL). */
int fs_rm_rf_at(int dfd, const char *name, dev_t dev, uint64_t *ret_bytes);
