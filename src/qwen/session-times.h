/* session-times.h: qgc's state directory G/.qgc/ and its record of when qgc archived and
 * restored each session, G/.qgc/session-times (doc/architecture.md has the format): one line
 * "<event> <msec> <id>" per event, appended, a later line of an id replacing an earlier one.
 * The scan reads it whole (at most SESSION_TIMES_MAX, one pass; a line that does not parse is
 * skipped, a larger file ignored with a warning) into Session.archived_at, restored_at,
 * restore_pending and restore_to_archive; past SESSION_TIMES_COMPACT the executor compacts it. */
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
        SESSION_TIME_ARCHIVED,           /* "archived": the move to chats/archive/ is durable */
        SESSION_TIME_RESTORE,            /* "restore": written durably before a restore's first
                                          * change (its intent; restore-grace starts) */
        SESSION_TIME_RESTORE_TO_ARCHIVE, /* "restore-to-archive": the same, --to-archive */
        SESSION_TIME_RESTORED,           /* "restored": the restore ended, or was refused for
                                          * good */
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
