/* archive.h: Qwen's chats/archive/ layout: move a transcript and its sidecars by rename, with
 * Qwen's collision rules (.worktree.json refused, .pr.json merged by PR number, .ledger.jsonl
 * append-merged). */
#pragma once

#include <stdbool.h>

/* Move <id>.jsonl and sidecars from src_fd (chats/) to dst_fd (chats/archive/) or back. */
int archive_move(int src_fd, int dst_fd, const char *id);
