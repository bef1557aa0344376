/* journal.c: the audit trail. One entry per executed action, sent to the systemd journal with
 * sd_journal_sendv() when its socket exists, else written as one key=value line to stderr or a
 * log file. The only file that includes <systemd/sd-journal.h>. */
#include "autoconf.h"

/* Without this, sd_journal_sendv() is a macro for sd_journal_sendv_with_location(), which adds
 * CODE_FILE/CODE_LINE/CODE_FUNC and defeats an ld --wrap of sd_journal_sendv. */
#define SD_JOURNAL_SUPPRESS_LOCATION 1

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>

#include "journal.h"
#include "text.h"
#include "macro.h"
#include "strtable.h"
#include "util.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define JOURNAL_MAX_FIELDS 32
#define JOURNAL_HELD_MAX (64 * 1024) /* journal_hold(): written at this size, or on release */

static int journal_write_lines(const char *p, size_t n);
static int journal_flush_held(void);

/* The open action log of this process: set by journal_open(), read by journal_log(). */
static struct {
        JournalTarget target;
        int fd; /* FILE target */
        char run_id[33];
        bool held;    /* journal_hold(): lines go to held_buf until journal_release() */
        StrBuf held_buf;
} journal_state = { .target = _JOURNAL_TARGET_INVALID, .fd = -EBADF }; /* closed */

static const char *const journal_target_table[_JOURNAL_TARGET_MAX] = {
        [JOURNAL_TARGET_AUTO] = "auto",
        [JOURNAL_TARGET_JOURNAL] = "journal",
        [JOURNAL_TARGET_STDERR] = "stderr",
        [JOURNAL_TARGET_FILE] = "file",
};

static const char *const journal_event_table[_JOURNAL_EVENT_MAX] = {
        [JOURNAL_RUN_START] = "run-start",
        [JOURNAL_RUN_SUMMARY] = "run-summary",
        [JOURNAL_ARCHIVED] = "archived",
        [JOURNAL_DELETED] = "deleted",
        [JOURNAL_RESTORED] = "restored",
        [JOURNAL_SKIPPED] = "skipped",
        [JOURNAL_FAILED] = "failed",
        [JOURNAL_ORPHAN_RECLAIMED] = "orphan-reclaimed",
        [JOURNAL_SALVAGED] = "salvaged",
        [JOURNAL_RECOVERED] = "recovered",
        [JOURNAL_ERASED] = "erased",
        [JOURNAL_STALE_MARK] = "stale-mark",
        [JOURNAL_COMPRESSED] = "compressed",
        [JOURNAL_USER_FAILED] = "user-failed",
};

/* Made once with `systemd-id128 new`; explained in systemd/qgc.catalog. Never change them. */
static const char *const journal_message_id_table[_JOURNAL_EVENT_MAX] = {
        [JOURNAL_RUN_START] = "caec719ed545467d92482f1a66e06938",
        [JOURNAL_RUN_SUMMARY] = "7b3ba3048f994cb7b8b1a09ee54cb397",
        [JOURNAL_ARCHIVED] = "039b94a1c5f1467592954e2f0d504ac1",
        [JOURNAL_DELETED] = "3dee92406ec3456597a3ed68f3882209",
        [JOURNAL_RESTORED] = "bac76e86fbdc4c1987b043b9efc97119",
        [JOURNAL_SKIPPED] = "20de1acb35f14aed9e6f19b5cbf0871e",
        [JOURNAL_FAILED] = "0f4eb6757d0b48799ced0ebf4404607f",
        [JOURNAL_ORPHAN_RECLAIMED] = "2a4edf6fbf86489a83691f5330acbb1c",
        [JOURNAL_SALVAGED] = "8d8faafe2c18497fb8ddcd021f1b7965",
        [JOURNAL_RECOVERED] = "22da4ba8837a4227a41ebfbe66fee1c8",
        [JOURNAL_ERASED] = "d45f8cd6b5864b6e93ddd4537003c5d0",
        [JOURNAL_STALE_MARK] = "bcf6b548b5bc4312ab27749a5b685795",
        [JOURNAL_COMPRESSED] = "54e2dc3abdde422d96118aded2e0acdb",
        [JOURNAL_USER_FAILED] = "c9252e90c1b4455c8a467c66624ca373",
};

static const int journal_priority_table[_JOURNAL_EVENT_MAX] = {
        [JOURNAL_RUN_START] = LOG_INFO,
        [JOURNAL_RUN_SUMMARY] = LOG_NOTICE,
        [JOURNAL_ARCHIVED] = LOG_INFO,
        [JOURNAL_DELETED] = LOG_NOTICE,
        [JOURNAL_RESTORED] = LOG_NOTICE,
        [JOURNAL_SKIPPED] = LOG_INFO,
        [JOURNAL_FAILED] = LOG_ERR,
        [JOURNAL_ORPHAN_RECLAIMED] = LOG_INFO,
        [JOURNAL_SALVAGED] = LOG_INFO,
        [JOURNAL_RECOVERED] = LOG_NOTICE,
        [JOURNAL_ERASED] = LOG_INFO,
        [JOURNAL_STALE_MARK] = LOG_INFO,
        [JOURNAL_COMPRESSED] = LOG_INFO,
        [JOURNAL_USER_FAILED] = LOG_ERR,
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(journal_event, JournalEvent);

/* MESSAGE_ID= (32 hex) */
static DEFINE_STRING_TABLE_TO_STRING_FUNC(journal_event_message_id, journal_message_id_table,
                                          JournalEvent);

DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(journal_target, JournalTarget);

JournalTarget journal_get_target(void) {
        return journal_state.target;
}

int journal_new_run_id(char ret[33]) {
        sd_id128_t id;
        int r;

        r = sd_id128_randomize(&id);
        if (r < 0)
                return r;
        sd_id128_to_string(id, ret);
        return 0;
}

/* Does a journald listen here? libsystemd drops datagrams silently when it does not. */
static bool journal_socket_exists(void) {
        struct stat st;

        return stat(JOURNAL_SOCKET, &st) >= 0 && S_ISSOCK(st.st_mode);
}

bool journal_available(void) {
        return journal_socket_exists();
}

int journal_open(JournalTarget target, const char *path, const char *run_id) {
        journal_close();

        if (run_id && strlen(run_id) == 32)
                memcpy(journal_state.run_id, run_id, 33);
        else
                journal_state.run_id[0] = 0;

        switch (target) {
        case JOURNAL_TARGET_AUTO:
                target = journal_socket_exists() ? JOURNAL_TARGET_JOURNAL : JOURNAL_TARGET_STDERR;
                break;
        case JOURNAL_TARGET_JOURNAL:
                if (!journal_socket_exists())
                        return -ENOENT; /* asked for the journal, and there is none */
                break;
        case JOURNAL_TARGET_STDERR:
                break;
        case JOURNAL_TARGET_FILE: {
                if (!path)
                        return -EINVAL;
                /* qgc may run as root: never follow a final symlink a user planted where the
                 * log goes, and never block on (or write to) anything but a regular file */
                struct stat st;
                int fd = open(path,
                              O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW |
                                      O_NONBLOCK,
                              0640);
                if (fd < 0)
                        return -errno;
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
                    fcntl(fd, F_SETFL, O_APPEND) < 0) {
                        macro_safe_close(fd);
                        return -EBADFD;
                }
                journal_state.fd = fd;
                break;
        }
        default:
                return -EINVAL;
        }
        journal_state.target = target;
        return 0;
}

void journal_close(void) {
        (void)journal_release();
        journal_state.fd = macro_safe_close(journal_state.fd);
        journal_state.target = _JOURNAL_TARGET_INVALID;
}

bool journal_is_open(void) {
        return journal_state.target >= 0;
}

/* Does value need quoting in a key=value line? */
static bool journal_needs_quotes(const char *v) {
        if (!*v)
                return true;
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
                if (*p <= ' ' || *p == '"' || *p == '\\' || *p == '=' || *p >= 0x7f)
                        return true;
        return false;
}

/* Append " KEY=value" (value quoted and cleaned by text_clean_append() when needed: no control,
 * C1 or bidi character of a session's cwd reaches the log raw). */
static int journal_append_pair(StrBuf *b, const char *key, const char *v) {
        int r;

        r = strbuf_printf(b, "%s%s=", b->len > 0 ? " " : "", key);
        if (r < 0)
                return r;
        if (!journal_needs_quotes(v))
                return strbuf_append(b, v, strlen(v));
        r = strbuf_append(b, "\"", 1);
        if (r >= 0)
                r = text_clean_append(b, v, strlen(v), TEXT_QUOTED);
        if (r >= 0)
                r = strbuf_append(b, "\"", 1);
        return r;
}

typedef int (*JournalFieldFn)(void *userdata, const char *key, const char *value);

/* The entry's syslog priority: its own, else the event's default. */
static int journal_entry_priority(const JournalEntry *e) {
        return e->priority > 0 && e->priority <= 7 ? e->priority : journal_priority_table[e->event];
}

/* Is name a field name journald takes (and one the line format needs no quoting for)? Upper-case
 * letters, digits and '_', not starting with '_' (journald's trusted fields) or a digit. */
static bool journal_field_name_valid(const char *name) {
        size_t n = 0;

        if (!name || !*name || *name == '_' || (*name >= '0' && *name <= '9'))
                return false;
        for (const char *p = name; *p; p++, n++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
                        return false;
        return n <= 64;
}

/* Call fn for every field of e, in a fixed order: the fixed fields, then e->fields. Stops at the
 * first error (-EINVAL for an invalid field name). */
static int journal_foreach_field(const JournalEntry *e, const char *run_id, JournalFieldFn fn,
                                 void *userdata) {
        char prio[4], bytes[24], err[16];
        int r;

        snprintf(prio, sizeof prio, "%d", journal_entry_priority(e));
        snprintf(bytes, sizeof bytes, "%" PRIu64, e->bytes);
        snprintf(err, sizeof err, "%d", e->error);

        const struct {
                const char *key, *value;
        } fields[] = {
                { "MESSAGE", e->message ? e->message : journal_event_table[e->event] },
                { "MESSAGE_ID", journal_event_message_id(e->event) },
                { "PRIORITY", prio },
                { "SYSLOG_IDENTIFIER", "qgc" },
                { "QGC_ACTION", journal_event_table[e->event] },
                { "QGC_SESSION", e->session },
                { "QGC_PROJECT", e->project },
                { "QGC_PATH", e->path },
                { "QGC_RULE", e->rule },
                { "QGC_REASON", e->reason },
                { "QGC_BYTES", e->has_bytes ? bytes : NULL },
                { "QGC_USER", e->user },
                { "QGC_RUN", run_id && run_id[0] ? run_id : NULL },
                { "ERRNO", e->error > 0 ? err : NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                if (!fields[i].value)
                        continue;
                r = fn(userdata, fields[i].key, fields[i].value);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < e->n_fields; i++) {
                const JournalField *f = &e->fields[i];
                char num[24];
                const char *v;

                if (!journal_field_name_valid(f->name))
                        return -EINVAL;
                if (f->type == JOURNAL_FIELD_UINT64) {
                        snprintf(num, sizeof num, "%" PRIu64, f->u64);
                        v = num;
                } else if (f->type == JOURNAL_FIELD_STRING)
                        v = f->string;
                else
                        return -EINVAL;
                if (!v)
                        continue;
                r = fn(userdata, f->name, v);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int journal_line_field(void *userdata, const char *key, const char *value) {
        return journal_append_pair(userdata, key, value);
}

static int journal_format_line_full(const JournalEntry *e, const char *run_id, char **ret) {
        StrBuf b = {};
        int r;

        if (!e || e->event < 0 || e->event >= _JOURNAL_EVENT_MAX)
                return -EINVAL;
        r = journal_foreach_field(e, run_id, journal_line_field, &b);
        if (r < 0) {
                strbuf_done(&b);
                return r;
        }
        *ret = strbuf_steal(&b);
        return *ret ? 0 : -ENOMEM;
}

typedef struct JournalIov {
        struct iovec iov[JOURNAL_MAX_FIELDS];
        char *strings[JOURNAL_MAX_FIELDS];
        size_t n;
} JournalIov;

static int journal_iov_field(void *userdata, const char *key, const char *value) {
        JournalIov *j = userdata;
        char *s;

        if (j->n >= JOURNAL_MAX_FIELDS)
                return -E2BIG;
        s = util_strprintf("%s=%s", key, value);
        if (!s)
                return -ENOMEM;
        j->strings[j->n] = s;
        j->iov[j->n] = (struct iovec){ .iov_base = s, .iov_len = strlen(s) };
        j->n++;
        return 0;
}

/* Send e to journald as one structured entry. */
static int journal_send(const JournalEntry *e) {
        JournalIov j = {};
        int r;

        r = journal_foreach_field(e, journal_state.run_id, journal_iov_field, &j);
        if (r >= 0)
                r = sd_journal_sendv(j.iov, (int)j.n);
        for (size_t i = 0; i < j.n; i++)
                free(j.strings[i]);
        return r;
}

/* Entries less severe than this are not written to stderr (--quiet under cron: only failures
 * reach the mail). The journal and --log-file always get every entry. */
static int journal_stderr_max_priority = LOG_DEBUG;

void journal_set_stderr_max_priority(int priority) {
        journal_stderr_max_priority = priority;
}

static journal_echo_fn journal_echo = NULL;
static void *journal_echo_userdata = NULL;

void journal_set_echo(journal_echo_fn fn, void *userdata) {
        journal_echo = fn;
        journal_echo_userdata = userdata;
}

int journal_log(const JournalEntry *e) {
        _cleanup_free_ char *line = NULL;
        _cleanup_free_ char *nl = NULL;
        int r;

        if (!e || e->event < 0 || e->event >= _JOURNAL_EVENT_MAX)
                return -EINVAL;
        if (!journal_is_open())
                return -EBADF; /* no default: only an opened action log is written */
        if (journal_echo)
                journal_echo(journal_echo_userdata, e);
        if (journal_state.target == JOURNAL_TARGET_JOURNAL)
                return journal_send(e);
        if (journal_state.target == JOURNAL_TARGET_STDERR &&
            journal_entry_priority(e) > journal_stderr_max_priority)
                return 0;

        r = journal_format_line_full(e, journal_state.run_id, &line);
        if (r < 0)
                return r;
        if (journal_state.held) {
                StrBuf *b = &journal_state.held_buf;
                size_t len0 = b->len;

                if (strbuf_append(b, line, strlen(line)) >= 0 && strbuf_append(b, "\n", 1) >= 0)
                        return b->len >= JOURNAL_HELD_MAX ? journal_flush_held() : 0;
                b->len = len0; /* out of memory: what is held, then this entry, directly */
                r = journal_flush_held();
                if (r < 0)
                        return r;
        }
        nl = util_strprintf("%s\n", line);
        if (!nl)
                return -ENOMEM;
        return journal_write_lines(nl, strlen(nl));
}

/* Write n bytes of complete lines to the line target, with one write(). */
static int journal_write_lines(const char *p, size_t n) {
        if (journal_state.target == JOURNAL_TARGET_FILE)
                return util_write_all(journal_state.fd, p, n);
        fflush(stderr);
        return util_write_all(STDERR_FILENO, p, n);
}

static int journal_flush_held(void) {
        StrBuf *b = &journal_state.held_buf;
        int r = 0;

        if (b->len > 0 && journal_is_open())
                r = journal_write_lines(b->buf, b->len);
        b->len = 0;
        return r;
}

void journal_hold(void) {
        journal_state.held = journal_is_open() && journal_state.target != JOURNAL_TARGET_JOURNAL;
}

int journal_release(void) {
        int r;

        if (!journal_state.held)
                return 0;
        r = journal_flush_held();
        journal_state.held = false;
        strbuf_done(&journal_state.held_buf);
        return r;
}
