/* fsread.h: the read side of the safe-filesystem layer that every reader of a tree shares (the
 * scan, liveness, claims, the JSON file reader): a no-follow, non-blocking open that leaves
 * atimes alone where it may (a FileId from a stat is fsutil.h's fs_fileid_from_stat()). Below
 * scan, live and claims, so none of them calls into another for a file helper. */
#pragma once

/* fs_openat(dfd, name, flags | O_NONBLOCK | O_NOCTTY) with O_NOATIME when permitted (retried
 * without it on EPERM): no symlink, no mount crossing. Returns the fd or -errno (-ELOOP for a
 * symlink). */
int fs_open_noatime(int dfd, const char *name, int flags);
