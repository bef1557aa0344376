/* show.h: `qgc show ID`: a session's transcript, written as it is on disk, whether active,
 * archived or compressed in the cold tier (cold.h). Read-only. */
#pragma once

#include "inventory.h"

/* Write the transcript of session id (the first tree that has it; the active copy of a conflict)
 * to out_fd; a compressed one is decompressed and checked against its SHA-256 (cold_cat()).
 * 0, -ENOENT (no tree has it), -EBADMSG (a compressed copy that does not match), -errno. */
int show_session(const Inventory *inv, const char *id, int out_fd);
