/* journal.h: the audit trail. One entry per executed action, plus run start and summary.
 * Sent to the systemd journal (sd_journal_sendv) when its socket exists, else as key=value lines
 * to stderr or a log file. The only user of <systemd/sd-journal.h>. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum JournalTarget {
        JOURNAL_TARGET_AUTO,
        JOURNAL_TARGET_JOURNAL,
        JOURNAL_TARGET_STDERR,
        JOURNAL_TARGET_FILE,
        _JOURNAL_TARGET_MAX,
        _JOURNAL_TARGET_INVALID = -22,
} JournalTarget;

typedef enum JournalEvent {
        JOURNAL_RUN_START,
        JOURNAL_RUN_SUMMARY,
        JOURNAL_ARCHIVED,
        JOURNAL_DELETED,
        JOURNAL_RESTORED,
        JOURNAL_SKIPPED,
        JOURNAL_FAILED,
        JOURNAL_ORPHAN_RECLAIMED,
        JOURNAL_SALVAGED,
        JOURNAL_RECOVERED,
        JOURNAL_ERASED, /* a deleted session's rows left a shared file (erase.h) */
        JOURNAL_STALE_MARK, /* a stale project entry's marker written or removed (hygiene.h) */
        JOURNAL_COMPRESSED, /* an archived session went into the cold tier (cold.h) */
        _JOURNAL_EVENT_MAX,
        _JOURNAL_EVENT_INVALID = -22,
} JournalEvent;

typedef struct JournalEntry {
        JournalEvent event;
        const char *message;  /* MESSAGE= */
        const char *session;  /* QGC_SESSION= */
        const char *project;  /* QGC_PROJECT= */
        const char *path;     /* QGC_PATH= */
        const char *rule;     /* QGC_RULE= */
        const char *reason;   /* QGC_REASON= */
        uint64_t bytes;       /* QGC_BYTES= (when has_bytes) */
        bool has_bytes;
        const char *user;     /* QGC_USER= */
        int error;            /* ERRNO= when != 0 (positive errno) */
        const char *extra;    /* additional "KEY=value\n" lines (summary counters), may be NULL */
        int priority;         /* PRIORITY= (syslog level 1..7); 0 = the event's default
                               * (qgc never logs at emerg) */
} JournalEntry;

/* Choose the target; for FILE, path names the log file (opened O_APPEND). run_id is a 32-hex id
 * shared by every entry of this run (QGC_RUN=). Returns 0 or -errno.
 * There is no default: until journal_open() and after journal_close(), journal_log() writes
 * nothing and returns -EBADF. Only the executor opens it (actions_run()), or, for --all-users,
 * the root parent before its children run the executor. */
int journal_open(JournalTarget target, const char *path, const char *run_id);
void journal_close(void);
bool journal_is_open(void);
int journal_log(const JournalEntry *e);

const char *journal_event_to_string(JournalEvent e); /* QGC_ACTION= value */
const char *journal_event_message_id(JournalEvent e); /* MESSAGE_ID= (32 hex) */
JournalTarget journal_target_from_string(const char *s);
/* Does a systemd-journald listen (its socket exists)? What the auto target picks. */
bool journal_available(void);
/* The target journal_open() chose (AUTO resolved), for messages and tests. */
JournalTarget journal_get_target(void);
/* Format e as the one-line key=value form used for stderr and files (without '\n').
 * Returns a malloc'ed string or NULL on ENOMEM. run_id may be NULL. */
char *journal_format_line(const JournalEntry *e, const char *run_id);
/* With the stderr target, drop entries less severe than priority (syslog level; --quiet sets
 * LOG_WARNING so that cron mails only failures). The journal and files get everything. */
void journal_set_stderr_max_priority(int priority);
/* A fresh random run id (32 hex + NUL). */
int journal_new_run_id(char ret[33]);
