/* rm-rf.h: the removal of a directory tree, on top of fs.h's safe opens. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* remove directory (dfd, name) and everything below it by fd, iteratively (systemd's rm_rf
 * rule): never follows a symlink and never enters a mount point, a bind mount of the same
 * filesystem included; such a mount point stays, with every directory above it, and the
 * result is -EBUSY ("kept: mount point"). The directory must be on dev when dev != 0 (else
 * -EBUSY too). ENOENT is success. *ret_bytes (may be NULL): the bytes freed, as du counts them
 * (st_blocks * 512): of each directory removed, and of each file whose last link it removed. */
int rm_rf_at(int dfd, const char *name, dev_t dev, uint64_t *ret_bytes);
