/* session-times.h: qgc's own record of when it archived and restored each session of a tree, the
 * file G/.qgc/session-times (in qgc's state directory, beside the pending markers; nothing but
 * qgc writes there). One line per event, appended (one write, one fsync per batch):
 *     archived <msec> <id>   qgc moved the session to chats/archive/ at msec (written once the
 *                            move is durable; archive-max-age counts from it)
 *     restore <msec> <id>    a restore of the session begins: written durably before its first
 *                            change, it is the restore's intent (recover.c finishes a restore
 *                            with no "restored" line after it) and the start of restore-grace
 *     restore-to-archive <msec> <id>   the same for `qgc restore --to-archive`
 *     restored <msec> <id>   that restore ended: complete, or refused for good (a conflict, a
 *                            compressed file that does not match)
 * A later line of an id replaces what an earlier one said about it. The scan reads the file whole
 * (at most SESSION_TIMES_MAX bytes, one pass) into the inventory's facts Session.archived_at,
 * restored_at, restore_pending and restore_to_archive. A file over the maximum is ignored with a warning, a line
 * that does not parse is skipped: a missing or garbled record means no grace and the archive
 * time's fallback (the archived transcript's ctime, see policy.c). The executor rewrites the file
 * with only the latest line of each session the scan found once it passes SESSION_TIMES_COMPACT,
 * so it stays near 60 bytes per session of the tree. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "inventory.h"
#include "util.h"

/* qgc's state directory in G (the pending markers are there too), the file's name in it, and
 * its path from G */
#define SESSION_TIMES_STATE_DIR ".qgc"
#define SESSION_TIMES_NAME "session-times"
#define SESSION_TIMES_FILE SESSION_TIMES_STATE_DIR "/" SESSION_TIMES_NAME
#define SESSION_TIMES_MAX (16U * 1024 * 1024)
#define SESSION_TIMES_COMPACT (4U * 1024 * 1024)

typedef enum SessionTimeEvent {
        SESSION_TIME_ARCHIVED,
        SESSION_TIME_RESTORE,
        SESSION_TIME_RESTORE_TO_ARCHIVE,
        SESSION_TIME_RESTORED,
        _SESSION_TIME_EVENT_MAX,
        _SESSION_TIME_EVENT_INVALID = -22,
} SessionTimeEvent;

/* The facts of the file into the sessions of tree t of inv (its index built). Read errors are
 * warnings (no record). */
void session_times_scan(Inventory *inv, size_t t);

/* Append one line to sb. 0 or -ENOMEM. */
int session_times_line(StrBuf *sb, SessionTimeEvent ev, msec_t at, const char *id);

/* Append text (whole lines) to G/.qgc/session-times with one write and one fsync, creating the
 * file (and .qgc/, fsynced into G) when needed. step is called after the write. 0 or -errno. */
typedef void (*SessionTimesStepFn)(void *userdata, const char *step);
int session_times_append(int global_fd, dev_t global_dev, const char *text, size_t n,
                         SessionTimesStepFn step, void *userdata);

/* When the file is larger than SESSION_TIMES_COMPACT: rewrite it (atomically) with the latest
 * line of each session of tree t of inv it names, dropping the rest. 1 rewritten, 0 not needed,
 * -errno. */
int session_times_compact(int global_fd, const Inventory *inv, size_t t);

/* Open G/.qgc/ (SESSION_TIMES_STATE_DIR), made first when needed, its name fsynced into G.
 * step is called after the mkdir. fd or -errno. */
int session_times_state_dir_open(int global_fd, dev_t global_dev, SessionTimesStepFn step,
                                 void *userdata);
