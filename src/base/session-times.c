/* session-times.c: qgc's record of when it archived and restored each session (session-times.h):
 * the line format, the one-pass reader and the durable append, for any store's tree. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "log.h"
#include "macro.h"
#include "session-times.h"
#include "strtable.h"

static const char *const session_time_event_table[_SESSION_TIME_EVENT_MAX] = {
        [SESSION_TIME_ARCHIVED] = "archived",
        [SESSION_TIME_RESTORE] = "restore",
        [SESSION_TIME_RESTORE_TO_ARCHIVE] = "restore-to-archive",
        [SESSION_TIME_RESTORED] = "restored",
};
static DEFINE_STRING_TABLE_LOOKUP_TO_STRING(session_time_event, SessionTimeEvent);
static DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(session_time_event, SessionTimeEvent);

/* One line (without its '\n', NUL-terminated in place): "<event> <msec> <id>". */
static void session_times_line_parse(char *l, SessionTimesFn fn, void *userdata) {
        char *sp1 = strchr(l, ' '), *sp2, *end;
        SessionTimeEvent ev;
        long long at;

        if (!sp1)
                return;
        *sp1 = '\0';
        ev = session_time_event_from_string(l);
        sp2 = strchr(sp1 + 1, ' ');
        if (ev < 0 || !sp2 || sp2 == sp1 + 1 || sp1[1] == '-')
                return;
        *sp2 = '\0';
        errno = 0;
        at = strtoll(sp1 + 1, &end, 10);
        if (errno != 0 || *end != '\0' || at <= 0)
                return;
        fn(ev, (msec_t)at, sp2 + 1, userdata);
}

int session_times_read(int global_fd, size_t id_max, SessionTimesFn fn, void *userdata) {
        _cleanup_free_ char *text = NULL;
        /* the longest line taken: an event, a time and an id of id_max bytes, with room */
        size_t line_max = 16 + 24 + id_max + 8;
        size_t n = 0;
        int r;

        r = fs_read_file(global_fd, SESSION_TIMES_FILE, SESSION_TIMES_MAX, &text, &n);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        for (char *p = text, *end = text + n; p < end;) {
                char *e = memchr(p, '\n', (size_t)(end - p));
                size_t len;

                if (!e)
                        break; /* not a whole line (a write cut short) */
                len = (size_t)(e - p);
                if (len < line_max && !memchr(p, '\0', len)) {
                        *e = '\0';
                        session_times_line_parse(p, fn, userdata);
                }
                p = e + 1;
        }
        return 0;
}

void session_times_load(const char *global_dir, size_t id_max, SessionTimesFn fn,
                        void *userdata) {
        _cleanup_close_ int gfd = fs_open_root(global_dir, 0);
        int r;

        if (gfd < 0)
                return;
        r = session_times_read(gfd, id_max, fn, userdata);
        if (r == -EFBIG)
                log_warning("'%s/%s' is larger than %u MiB: ignored (no restore-grace, archive "
                            "times from the archived files)",
                            global_dir, SESSION_TIMES_FILE, SESSION_TIMES_MAX >> 20);
        else if (r < 0)
                log_warning_errno(r, "cannot read '%s/%s': ignored (no restore-grace, archive "
                                     "times from the archived files)",
                                  global_dir, SESSION_TIMES_FILE);
}

int session_times_line(StrBuf *sb, SessionTimeEvent ev, msec_t at, const char *id) {
        /* an id is the rest of its line: one with a control character (a newline would start
         * another record) is none (a store's id rule may allow it in a file name) */
        if (!id[0])
                return -EINVAL;
        for (const char *p = id; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return -EINVAL;
        return strbuf_printf(sb, "%s %" PRId64 " %s\n", session_time_event_to_string(ev),
                             (int64_t)at, id) < 0 ? -ENOMEM : 0;
}

int session_times_append(int global_fd, dev_t global_dev, const char *text, size_t n,
                         SessionTimesStepFn step, void *userdata) {
        _cleanup_close_ int state_fd = -EBADF, fd = -EBADF;
        const char *name = SESSION_TIMES_NAME;
        bool created = false;
        int r;

        if (n == 0)
                return 0;
        /* G/.qgc/, made first when needed, its name durable before anything is put in it */
        state_fd = fs_mkdir_open(global_fd, FS_STATE_DIR, 0700, global_dev, step,
                                 userdata);
        if (state_fd < 0)
                return state_fd;
        fd = fs_openat(state_fd, name, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
        if (fd == -ENOENT) {
                fd = fs_openat(state_fd, name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC,
                               0600);
                created = fd >= 0;
        }
        if (fd < 0)
                return fd;
        r = util_write_all(fd, text, n);
        if (r >= 0)
                r = fs_fsync(fd);
        if (r >= 0 && created)
                r = fs_fsync(state_fd);
        if (r >= 0 && step)
                step(userdata, name);
        return r;
}
