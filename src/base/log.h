/* log.h: operator diagnostics on stderr (not the journal; see journal.h). */
#pragma once

#include <stdbool.h>
#include "macro.h"

typedef enum LogLevel {
        LOG_LEVEL_ERR = 3,
        LOG_LEVEL_WARNING = 4,
        LOG_LEVEL_NOTICE = 5,
        LOG_LEVEL_INFO = 6,
        LOG_LEVEL_DEBUG = 7,
} LogLevel;

/* The text of errno value e (positive) for a message. Safe in the scan's threads, unlike
 * strerror(): glibc's strerrordesc_np() (a constant string), else strerror_r() into a
 * per-thread buffer. The only way qgc turns an errno into text. */
const char *log_errno_to_string(int e);

/* Is stderr the journal's stream (a service's StandardError=journal)? Then every line log.c
 * prints carries its level ("<4>qgc: ..."), so journald files it at that PRIORITY. */
bool log_to_journal_stream(void);
/* For a line printed to stderr without log_internal() (a policy file's error as found): its
 * "<N>" level prefix when stderr is the journal's stream, else nothing. */
void log_prefix_level(LogLevel level);

void log_set_max_level(LogLevel l);
LogLevel log_get_max_level(void);
/* Root mode: every line of a user's child names the user ("qgc: alice: ..."), so that what cron
 * mails or the unit prints says whom it is about. NULL: no name (the default). The prefix, or "",
 * for lines printed without log_internal(). */
void log_set_user(const char *user);
const char *log_user_prefix(void);

/* Print "qgc: message" at level; with error != 0 append ": strerror(error)".
 * Returns -abs(error) (or 0 when error is 0), so callers can `return log_error_errno(r, ...)`. */
int log_internal(LogLevel level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_error(...) log_internal(LOG_LEVEL_ERR, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_LEVEL_NOTICE, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
