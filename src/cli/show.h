/* show.h: `qgc show ID`: a session's transcript, written as it is on disk, whether active,
 * archived or compressed in the cold tier (cold.h). Read-only. */
#pragma once

#include <stdio.h>

#include "inventory.h"

/* On a terminal the transcript is read this many bytes at a time, whatever its lines' lengths
 * (a line of any length is shown whole, memory bounded). */
#define SHOW_TERMINAL_CHUNK (64U * 1024)

/* Write the transcript of session id (the first tree that has it; the active copy of a conflict)
 * to out_fd; a compressed one is decompressed and checked against its SHA-256 (cold_cat()).
 * 0, -ENOENT (no tree has it), -EBADMSG (a compressed copy that does not match), -errno. */
int show_session(const Inventory *inv, const char *id, int out_fd);
/* show_session() for a terminal: written to out through the one cleaner (text.h: no control
 * sequence of a transcript reaches the terminal raw), SHOW_TERMINAL_CHUNK bytes at a time (a
 * character a chunk would cut goes whole with the next). 0 or show_session()'s errors. */
int show_session_terminal(const Inventory *inv, const char *id, FILE *out);
