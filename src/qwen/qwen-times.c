/* qwen-times.c: qgc's record of archive and restore times (session-times.h) in a Qwen tree:
 * the facts it gives the scan and its compaction (qwen-times.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fs.h"
#include "macro.h"
#include "qwen-times.h"
#include "qwen.h"
#include "session-times.h"

typedef struct QwenTimesScan {
        Inventory *inv;
        size_t tree;
} QwenTimesScan;

static void qwen_times_scan_one(SessionTimeEvent ev, msec_t at, const char *id, void *userdata) {
        QwenTimesScan *c = userdata;

        if (qwen_session_id_valid(id))
                inventory_session_time(c->inv, c->tree, ev, at, id);
}

void qwen_times_scan(Inventory *inv, size_t t) {
        QwenTimesScan c = { .inv = inv, .tree = t };

        session_times_load(inv->trees[t].global_dir, SESSION_ID_MAX, qwen_times_scan_one, &c);
}

typedef struct QwenTimesCompact {
        const Inventory *inv;
        size_t tree;
        unsigned char *last; /* per session of the tree: 1 + the event of its latest line */
        msec_t *at, *restore_at;
} QwenTimesCompact;

static void qwen_times_compact_one(SessionTimeEvent ev, msec_t at, const char *id,
                                   void *userdata) {
        QwenTimesCompact *c = userdata;
        const Session *s;
        size_t i;

        if (!qwen_session_id_valid(id))
                return;
        s = inventory_find(c->inv, c->tree, id);
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

int qwen_times_compact(int global_fd, const Inventory *inv, size_t t) {
        size_t n = inv->n_sessions ? inv->n_sessions : 1;
        _cleanup_free_ unsigned char *last = calloc(n, 1);
        _cleanup_free_ msec_t *at = calloc(n, sizeof(msec_t)), *rat = calloc(n, sizeof(msec_t));
        _cleanup_(strbuf_done) StrBuf sb = {};
        _cleanup_close_ int state_fd = -EBADF;
        QwenTimesCompact c = { .inv = inv, .tree = t, .last = last, .at = at, .restore_at = rat };
        struct stat st;
        int r;

        if (!last || !at || !rat)
                return -ENOMEM;
        if (fstatat(global_fd, SESSION_TIMES_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            (uint64_t)st.st_size <= SESSION_TIMES_COMPACT)
                return 0;
        /* over SESSION_TIMES_MAX it is ignored already: what it held is dropped */
        r = session_times_read(global_fd, SESSION_ID_MAX, qwen_times_compact_one, &c);
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
        state_fd = fs_open_path(global_fd, FS_STATE_DIR, 0);
        if (state_fd < 0)
                return state_fd;
        r = fs_write_atomic(state_fd, SESSION_TIMES_NAME,
                            sb.buf ?: "", sb.len, 0600);
        return r < 0 ? r : 1;
}
