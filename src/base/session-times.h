/* session-times.h: qgc's state directory G/.qgc/ and its record of when qgc archived and
 * restored each session, G/.qgc/session-times (doc/architecture.md has the format): one line
 * "<event> <msec> <id>" per event, appended, a later line of an id replacing an earlier one.
 * Store-neutral: the file of any store's tree G. A reader gets every line that parses (at most
 * SESSION_TIMES_MAX, one pass; a line that does not parse is skipped, a larger file ignored)
 * with its raw id: the store checks the id by its own rule and fills its sessions
 * (inventory_session_time()); qwen-times.c compacts a Qwen tree's past SESSION_TIMES_COMPACT. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "fs.h"
#include "util.h"

/* The file's name in qgc's state directory (fs.h: FS_STATE_DIR), and its path from the store's
 * root */
#define SESSION_TIMES_NAME "session-times"
#define SESSION_TIMES_FILE FS_STATE_DIR "/" SESSION_TIMES_NAME
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

/* One line that parses: its event, its time (> 0) and its id as written (not checked: the
 * caller's rule decides whether it is a session id). */
typedef void (*SessionTimesFn)(SessionTimeEvent ev, msec_t at, const char *id, void *userdata);

/* Read G/.qgc/session-times of global_fd and parse it in one pass, fn called for every line
 * that parses, in file order; a line longer than an id of id_max bytes allows is skipped, as is
 * any other line that does not parse. 0 (also when there is none), -EFBIG over
 * SESSION_TIMES_MAX, -errno. */
int session_times_read(int global_fd, size_t id_max, SessionTimesFn fn, void *userdata);

/* The same for the tree at global_dir, whose read errors are warnings (no record: no
 * restore-grace, archive times from the archived files). */
void session_times_load(const char *global_dir, size_t id_max, SessionTimesFn fn,
                        void *userdata);

/* Append one line to sb. 0, -ENOMEM, or -EINVAL: id is empty or holds a control character (it
 * would not read back as itself), and nothing is appended. */
int session_times_line(StrBuf *sb, SessionTimeEvent ev, msec_t at, const char *id);

/* Append text (whole lines) to G/.qgc/session-times with one write and one fsync, creating the
 * file (and .qgc/, fsynced into G) when needed. step is called after the write. 0 or -errno. */
typedef void (*SessionTimesStepFn)(void *userdata, const char *step);
int session_times_append(int global_fd, dev_t global_dev, const char *text, size_t n,
                         SessionTimesStepFn step, void *userdata);
