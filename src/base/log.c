/* log.c: operator diagnostics on stderr. */
#include "autoconf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "text.h"
#include "util.h"

static LogLevel log_max_level = LOG_LEVEL_NOTICE;
static char *log_user = NULL; /* root mode's child: "alice: ", cleaned */

void log_set_user(const char *user) {
        _cleanup_free_ char *clean = user ? text_clean(user, TEXT_TERMINAL) : NULL;

        free(log_user);
        log_user = clean ? util_strprintf("%s: ", clean) : NULL;
}

const char *log_user_prefix(void) {
        return log_user ?: "";
}

void log_set_max_level(LogLevel l) {
        log_max_level = l;
}

LogLevel log_get_max_level(void) {
        return log_max_level;
}

const char *log_errno_to_string(int e) {
#ifdef HAVE_STRERRORDESC_NP
        return strerrordesc_np(e) ?: "unknown error";
#else
        static _Thread_local char buf[128];

        return strerror_r(e, buf, sizeof buf); /* the GNU form: a static string or buf */
#endif
}

/* Is stderr the journal stream a service manager connected (JOURNAL_STREAM names its device and
 * inode, systemd.exec(5))? Then each line starts with "<N>", its syslog level, which journald
 * turns into PRIORITY=N (SyslogLevelPrefix=yes, the default): a warning is found with
 * `journalctl -p warning`, not filed at the stream's default, info. Decided once: stderr does
 * not change under a running qgc. */
static bool log_stderr_is_journal(void) {
        static int cached = -1; /* -1 unknown; the scan's threads only read a decided value */
        int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

        if (v < 0) {
                const char *e = getenv("JOURNAL_STREAM");
                uintmax_t dev, ino;
                struct stat st;

                v = e && sscanf(e, "%ju:%ju", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) >= 0 &&
                    (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
                __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
        }
        return v > 0;
}

bool log_to_journal_stream(void) {
        return log_stderr_is_journal();
}

void log_prefix_level(LogLevel level) {
        if (log_stderr_is_journal())
                fprintf(stderr, "<%d>", (int)level);
}

int log_internal(LogLevel level, int error, const char *fmt, ...) {
        int e = error < 0 ? -error : error;

        if (level <= log_max_level) {
                _cleanup_free_ char *msg = NULL, *clean = NULL;
                va_list ap;
                int n;

                va_start(ap, fmt);
                n = vasprintf(&msg, fmt, ap);
                va_end(ap);
                if (n < 0)
                        msg = NULL;
                /* paths, ids and values in messages come from other users' files: cleaned,
                 * the whole message one terminal line */
                clean = text_clean(msg ?: "(out of memory)", TEXT_TERMINAL);

                /* one line at a time, also when the scan's threads log */
                flockfile(stderr);
                if (log_stderr_is_journal())
                        fprintf(stderr, "<%d>", (int)level);
                fputs("qgc: ", stderr);
                fputs(log_user_prefix(), stderr);
                fputs(clean ?: "(out of memory)", stderr);
                if (e != 0)
                        fprintf(stderr, ": %s", log_errno_to_string(e));
                fputc('\n', stderr);
                funlockfile(stderr);
        }
        return -e;
}
