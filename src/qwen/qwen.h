/* qwen.h: Qwen Code's own rules, in C: session file names, sanitizeCwd (UTF-16 code units),
 * the project hash, worktree paths. Pure functions. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"

/* SESSION_FILE_PATTERN: 32 to 36 chars of [0-9a-fA-F-] followed by ".jsonl", nothing else.
 * On match copies the id (without .jsonl) into ret_id (may be NULL). */
bool qwen_session_file_name(const char *name, char ret_id[SESSION_ID_MAX + 1]);
/* A valid session id (same alphabet and length). */
bool qwen_session_id_valid(const char *id);
/* ASCII case-insensitive id comparison, as Qwen's ownership test does (NULL equals nothing). */
bool qwen_session_id_equal(const char *a, const char *b);

/* sanitizeCwd(): every UTF-16 code unit outside [A-Za-z0-9] becomes '-' (two for a code point
 * outside the BMP). The input is UTF-8; invalid bytes count as one unit each (as U+FFFD would).
 * Returns a new string or NULL. */
char *qwen_sanitize_cwd(const char *cwd);
/* getProjectHash(): lower-case hex sha256 of the UTF-8 string. Returns 0 or -errno. */
int qwen_project_hash(const char *cwd, char ret[PROJECT_HASH_LEN + 1]);
/* Is s[0..n) such a hash (the name of R/tmp/<hash>/)? */
bool qwen_project_hash_valid(const char *s, size_t n);

/* Worktree rule: when cwd contains "/.qwen/worktrees/" past index 0, the part before the LAST
 * occurrence. Returns a new string, or NULL when cwd is not a worktree path (errno 0) or on
 * ENOMEM. */
char *qwen_worktree_root(const char *cwd);

