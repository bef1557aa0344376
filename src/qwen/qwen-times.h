/* qwen-times.h: qgc's record of archive and restore times (session-times.h) in a Qwen tree:
 * the facts of its lines into the sessions of the tree (Session.archived_at, restored_at,
 * restore_pending, restore_to_archive), ids taken by Qwen's rule (qwen_session_id_valid()),
 * and its compaction past SESSION_TIMES_COMPACT. */
#pragma once

#include <stddef.h>

#include "inventory.h"

/* The facts of the file into the sessions of tree t of inv (its index built). Read errors are
 * warnings (no record). */
void qwen_times_scan(Inventory *inv, size_t t);

/* When the file is larger than SESSION_TIMES_COMPACT: rewrite it (atomically) with the latest
 * line of each session of tree t of inv it names, dropping the rest. 1 rewritten, 0 not needed,
 * -errno. */
int qwen_times_compact(int global_fd, const Inventory *inv, size_t t);
