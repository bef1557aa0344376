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
        JOURNAL_USER_FAILED, /* --all-users: a user's run failed as a whole (users.c) */
        _JOURNAL_EVENT_MAX,
        _JOURNAL_EVENT_INVALID = -22,
} JournalEvent;

/* A field of an entry beyond the fixed ones (the run summary's counters, a compression's sizes):
 * a name by journald's rules (A-Z, 0-9 and '_', not first, at most 64 characters) and a number
 * or a string. A string field whose value is NULL is left out, like an unset fixed field. */
typedef enum JournalFieldType {
        JOURNAL_FIELD_UINT64,
        JOURNAL_FIELD_STRING,
} JournalFieldType;

typedef struct JournalField {
        const char *name;
        JournalFieldType type;
        union {
                uint64_t u64;
                const char *string;
        };
} JournalField;

#define JOURNAL_FIELD_U64(n, v) { .name = (n), .type = JOURNAL_FIELD_UINT64, .u64 = (v) }
#define JOURNAL_FIELD_STR(n, v) { .name = (n), .type = JOURNAL_FIELD_STRING, .string = (v) }

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
        const JournalField *fields; /* more fields, after the fixed ones, in this order */
        size_t n_fields;
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
/* 0, or -errno: -EBADF not open, -EINVAL an invalid event or field name, -E2BIG too many fields
 * for one journald entry. */
int journal_log(const JournalEntry *e);
/* The line targets (stderr, a file) only: the entries logged from journal_hold() on are written
 * together, with one write(), by journal_release() (or when they reach 64 KiB); the journal
 * target sends each entry at once. For a run of entries about what already happened, with no
 * other step in between (the executor's report of a batch): a kill in between loses them as it
 * would lose the entries not yet written one by one. journal_release() returns the write's
 * result (0 when nothing was held); journal_close() releases. */
void journal_hold(void);
int journal_release(void);

const char *journal_event_to_string(JournalEvent e); /* QGC_ACTION= value */
JournalTarget journal_target_from_string(const char *s);
/* Does a systemd-journald listen (its socket exists)? What the auto target picks. */
bool journal_available(void);
/* The target journal_open() chose (AUTO resolved), for messages and tests. */
JournalTarget journal_get_target(void);
/* With the stderr target, drop entries less severe than priority (syslog level; --quiet sets
 * LOG_WARNING so that cron mails only failures). The journal and files get everything. */
void journal_set_stderr_max_priority(int priority);
/* Hand every entry logged (to an open log) to fn as well: a real run on a terminal lists what
 * it did from the same entries (main.c). It may be called from the executor's threads. NULL:
 * off, the default. */
typedef void (*journal_echo_fn)(void *userdata, const JournalEntry *e);
void journal_set_echo(journal_echo_fn fn, void *userdata);
/* A fresh random run id (32 hex + NUL). */
int journal_new_run_id(char ret[33]);
