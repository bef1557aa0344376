/* session-times.c: qgc's record of when it archived and restored each session (session-times.h):
 * the one-pass reader, the facts it gives the scan, the append and the compaction. */
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
#include "qwen.h"
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

typedef void (*SessionTimesFn)(SessionTimeEvent ev, msec_t at, const char *id, void *userdata);

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
        if (errno != 0 || *end != '\0' || at <= 0 || !qwen_session_id_valid(sp2 + 1))
                return;
        fn(ev, (msec_t)at, sp2 + 1, userdata);
}

/* Read G/.qgc/session-times of global_fd and parse it in one pass, fn called for every line that
 * parses, in file order; the others are skipped. 0 (also when there is none), -EFBIG over
 * SESSION_TIMES_MAX, -errno. */
static int session_times_read(int global_fd, SessionTimesFn fn, void *userdata) {
        _cleanup_free_ char *text = NULL;
        char line[16 + 24 + SESSION_ID_MAX + 8];
        size_t n = 0;
        int r;

        r = fs_read_file(global_fd, SESSION_TIMES_FILE, SESSION_TIMES_MAX, &text, &n);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        for (const char *p = text, *end = text + n; p < end;) {
                const char *e = memchr(p, '\n', (size_t)(end - p));
                size_t len;

                if (!e)
                        break; /* not a whole line (a write cut short) */
                len = (size_t)(e - p);
                if (len < sizeof line && !memchr(p, '\0', len)) {
                        memcpy(line, p, len);
                        line[len] = '\0';
                        session_times_line_parse(line, fn, userdata);
                }
                p = e + 1;
        }
        return 0;
}

typedef struct SessionTimesScan {
        Inventory *inv;
        size_t tree;
} SessionTimesScan;

static void session_times_scan_one(SessionTimeEvent ev, msec_t at, const char *id, void *userdata) {
        SessionTimesScan *c = userdata;
        const Session *found = inventory_find(c->inv, c->tree, id);
        Session *s;

        if (!found)
                return;
        s = &c->inv->sessions[found - c->inv->sessions];
        switch (ev) {
        case SESSION_TIME_ARCHIVED:
                s->archived_at = at;
                s->restored_at = 0;
                s->restore_pending = false;
                break;
        case SESSION_TIME_RESTORE:
        case SESSION_TIME_RESTORE_TO_ARCHIVE:
                s->restored_at = at;
                s->restore_pending = true;
                s->restore_to_archive = ev == SESSION_TIME_RESTORE_TO_ARCHIVE;
                s->archived_at = 0;
                break;
        case SESSION_TIME_RESTORED:
                if (s->restored_at == 0)
                        s->restored_at = at;
                s->restore_pending = false;
                break;
        default:
                break;
        }
}

void session_times_scan(Inventory *inv, size_t t) {
        const Tree *tr = &inv->trees[t];
        _cleanup_close_ int gfd = fs_open_root(tr->global_dir, 0);
        SessionTimesScan c = { .inv = inv, .tree = t };
        int r;

        if (gfd < 0)
                return;
        r = session_times_read(gfd, session_times_scan_one, &c);
        if (r == -EFBIG)
                log_warning("'%s/%s' is larger than %u MiB: ignored (no restore-grace, archive "
                            "times from the archived files)",
                            tr->global_dir, SESSION_TIMES_FILE, SESSION_TIMES_MAX >> 20);
        else if (r < 0)
                log_warning_errno(r, "cannot read '%s/%s': ignored (no restore-grace, archive "
                                     "times from the archived files)",
                                  tr->global_dir, SESSION_TIMES_FILE);
}

int session_times_line(StrBuf *sb, SessionTimeEvent ev, msec_t at, const char *id) {
        return strbuf_printf(sb, "%s %" PRId64 " %s\n", session_time_event_to_string(ev),
                             (int64_t)at, id) < 0 ? -ENOMEM : 0;
}

/* Open G/.qgc/ (SESSION_TIMES_STATE_DIR), made first when needed, its name fsynced into G.
 * step is called after the mkdir. fd or -errno. */
static int session_times_state_dir_open(int global_fd, dev_t global_dev, SessionTimesStepFn step,
                                        void *userdata) {
        int r = fs_mkdirat(global_fd, SESSION_TIMES_STATE_DIR, 0700);

        if (r >= 0) {
                /* durable before anything is put in it: a crash would forget what it holds */
                if (step)
                        step(userdata, SESSION_TIMES_STATE_DIR);
                r = fs_fsync(global_fd);
                if (r < 0)
                        return r;
        } else if (r != -EEXIST)
                return r;
        return fs_open_path(global_fd, SESSION_TIMES_STATE_DIR, global_dev);
}

int session_times_append(int global_fd, dev_t global_dev, const char *text, size_t n,
                         SessionTimesStepFn step, void *userdata) {
        _cleanup_close_ int state_fd = -EBADF, fd = -EBADF;
        const char *name = SESSION_TIMES_NAME;
        bool created = false;
        int r;

        if (n == 0)
                return 0;
        state_fd = session_times_state_dir_open(global_fd, global_dev, step, userdata);
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

typedef struct SessionTimesCompact {
        const Inventory *inv;
        size_t tree;
        unsigned char *last; /* per session of the tree: 1 + the event of its latest line */
        msec_t *at, *restore_at;
} SessionTimesCompact;

static void session_times_compact_one(SessionTimeEvent ev, msec_t at, const char *id,
                                      void *userdata) {
        SessionTimesCompact *c = userdata;
        const Session *s = inventory_find(c->inv, c->tree, id);
        size_t i;

        if (!s)
                return;
        i = (size_t)(s - c->inv->sessions);
        c->last[i] = (unsigned char)(1 + ev);
        c->at[i] = at;
        if (ev == SESSION_TIME_RESTORE || ev == SESSION_TIME_RESTORE_TO_ARCHIVE)
                c->restore_at[i] = at;
        else if (ev == SESSION_TIME_ARCHIVED)
                c->restore_at[i] = 0;
}

int session_times_compact(int global_fd, const Inventory *inv, size_t t) {
        size_t n = inv->n_sessions ? inv->n_sessions : 1;
        _cleanup_free_ unsigned char *last = calloc(n, 1);
        _cleanup_free_ msec_t *at = calloc(n, sizeof(msec_t)), *rat = calloc(n, sizeof(msec_t));
        _cleanup_(strbuf_done) StrBuf sb = {};
        _cleanup_close_ int state_fd = -EBADF;
        SessionTimesCompact c = { .inv = inv, .tree = t, .last = last, .at = at, .restore_at = rat };
        struct stat st;
        int r;

        if (!last || !at || !rat)
                return -ENOMEM;
        if (fstatat(global_fd, SESSION_TIMES_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            (uint64_t)st.st_size <= SESSION_TIMES_COMPACT)
                return 0;
        /* over SESSION_TIMES_MAX it is ignored already: what it held is dropped */
        r = session_times_read(global_fd, session_times_compact_one, &c);
        if (r < 0 && r != -EFBIG)
                return r;
        r = 0;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];

                if (!last[i])
                        continue;
                /* a completed restore keeps its start (the grace counts from it) */
                if (last[i] - 1 == SESSION_TIME_RESTORED && rat[i] > 0)
                        r = session_times_line(&sb, s->restore_to_archive
                                                            ? SESSION_TIME_RESTORE_TO_ARCHIVE
                                                            : SESSION_TIME_RESTORE,
                                               rat[i], s->id);
                if (r >= 0)
                        r = session_times_line(&sb, (SessionTimeEvent)(last[i] - 1), at[i], s->id);
                if (r < 0)
                        return r;
        }
        state_fd = fs_open_path(global_fd, SESSION_TIMES_STATE_DIR, 0);
        if (state_fd < 0)
                return state_fd;
        r = fs_write_atomic(state_fd, SESSION_TIMES_NAME,
                            sb.buf ?: "", sb.len, 0600);
        return r < 0 ? r : 1;
}
