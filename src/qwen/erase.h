/* erase.h: the parts of a session that live in files Qwen shares between sessions, and how a
 * delete removes them as Qwen's own delete paths do: rows of R/tmp/<hash>/logs.json (the TUI's
 * /delete, PR #11769: Logger.removeSessionsMessages), the entry of
 * R/projects/<dir>/session-organization.v1.json (SessionOrganizationService.removeSession), and
 * the directory R/projects/<dir>/workflows/generated/review/<reviewSessionDirName(id)>/.
 *
 * Both JSON files are written by Qwen as JSON.stringify(value, null, 2), with no trailing
 * newline. An edit keeps every other byte: it splices the removed elements out of their
 * container and rebuilds only the container's framing in that format, so a kept row or entry
 * stays byte-identical. The write is a temp file in the same directory (mode and owner of the
 * original), fsync, renameat2(RENAME_EXCHANGE) with the file, so that the file it replaced is
 * still there to be looked at: when it is not exactly the text read (Qwen, which takes no lock,
 * rewrote it meanwhile), that version is spliced and put in place in turn, a bounded number of
 * times (erase-edit.c), so that a row a writer added is never lost; then fsync of the
 * directory. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "erase-edit.h"
#include "inventory.h"

#define ERASE_LOGS_FILE "logs.json"
#define ERASE_ORG_FILE "session-organization.v1.json"
#define ERASE_REVIEW_DIR "workflows/generated/review"

/* The "sessionId" string of every row of a logs.json text that has one, in order (*ret: n + 1
 * allocated strings, NULL-terminated; the scan's preview). 0, -EBADMSG (not a JSON array) or
 * -ENOMEM. */
int erase_logs_session_ids(const char *text, size_t n, char ***ret, size_t *ret_n);

/* What erase_session_shared() removed. */
typedef struct EraseDone {
        unsigned log_rows;    /* rows of tmp/<hash>/logs.json */
        unsigned org_entries; /* entries of projects/<dir>/session-organization.v1.json */
} EraseDone;

/* What erase_sessions_shared() looks up in the inventory of a run (the scan's facts: which
 * sessions have an id, which were live), built by its first batch into *index and kept for the
 * next ones (built again for another inventory); index NULL: built for the one call. It also
 * keeps the parse of each shared file a batch read or wrote, for the next batch's edit of the
 * same file: taken only for exactly the text it was made from (the file is read each time). */
typedef struct EraseIndex EraseIndex;
EraseIndex *erase_index_free(EraseIndex *x); /* accepts NULL, returns NULL */

/* One session of erase_sessions_shared(). In: s; chats_fd, its chats/; tmp_fd and pdir_fd,
 * R/tmp/<hash>/ and R/projects/<dir>/ opened below the tree (fs_open_path()), -ENOENT when there
 * is no such directory, other -errno when it cannot be opened (reported when an edit is due); the
 * same directory must come with the same fd, so that its file is edited once for all of its
 * sessions. Out: done; r, 0 (done, or nothing of s in the files), -EAGAIN when it cannot be done
 * now (done counts what was already done, the rest untouched: a later run completes it), other
 * -errno; why, allocated, says why when r < 0; kept, allocated, the name (in the same directory)
 * of a version of its file that a writer wrote during the edit and qgc kept beside it instead of
 * merging it (erase_edit()), NULL when none (set with one of the file's sessions). */
typedef struct EraseItem {
        const Session *s;
        int chats_fd;
        int tmp_fd, pdir_fd;
        EraseDone done;
        int r;
        char *why;
        char *kept;
} EraseItem;

/* The shared-file part of deleting the n sessions of a batch (one tree; their transcripts still
 * there): each shared file is read once to find which of them have something in it; for each of
 * those, proof that no Qwen process of its project is live (the scan's liveness of every session
 * of the same project directory or hash, then live_project_busy() afresh, one probe for the
 * sessions that ask it the same question, and again right before each file is edited); then
 * their rows out of each tmp/<hash>/logs.json and their entries out of each
 * session-organization.v1.json, each file edited once (one splice, temp file, fsync, exchange,
 * merge of a version a writer left, directory fsync) for all of them.
 * The edits happen where one session's did (after the batch's pending-delete markers, before any
 * transcript goes), so a crash anywhere converges the same way: the next run drops the markers of
 * sessions whose transcripts are still there and deletes them again, finding nothing more of them
 * in the files. An edit that fails fails every session of it (its reason in
 * each why); each file is written whole or not at all (the rename), and every row or entry a
 * file lost on disk is counted in its sessions' done, also when the session then fails (the
 * directory's fsync after the rename, or its other file). Returns 0, or -ENOMEM before any file
 * was written (every file as it was; nothing reliable in items). */
int erase_sessions_shared(const Inventory *inv, EraseIndex **index, EraseItem *items, size_t n,
                          EraseStepFn step, void *userdata);

/* Qwen's reviewSessionDirName(id): sanitizeFilenameComponent(id) + "-" + sha256(id)[0..8). */
char *erase_review_dir_name(const char *id);
