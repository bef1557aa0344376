/* actions-restore.c: the executor's restore steps (an archived session back to chats/, a
 * compressed one from the cold tier), each journalled and counted. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "archive.h"
#include "cold-restore.h"
#include "cold.h"
#include "fs.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "session-times.h"
#include "store.h"
#include "util.h"

#include "actions-int.h"

/* Restore one archived session of one tree, unless its plan refused it (why: restore.c). 0 done,
 * -errno (logged and journalled). */
static int actions_restore_one(ActionsContext *c, const Session *s, const char *why) {
        const Tree *tr = &c->inv->trees[s->tree];
        const ActionsTree *t = &c->trees[s->tree];
        _cleanup_free_ char *rel = util_strprintf("projects/%s/chats", s->project_dir);
        _cleanup_close_ int chats_fd = -EBADF, archive_fd = -EBADF;
        VerdictFacts f = { .fact = "qgc restore" };
        Verdict v = { .verb = VERB_KEEP, .rule = "restore", .facts = &f };
        int r;

        if (!rel)
                return -ENOMEM;
        if (why) {
                log_error("restore: cannot restore session %s in '%s/projects/%s/chats': %s",
                          s->id, tr->runtime_dir, s->project_dir, why);
                (void)actions_report_session(c, s, &v, ACTIONS_FAILED, why, 0);
                return -EEXIST;
        }
        r = t->error;
        if (r >= 0) {
                chats_fd = fs_open_path(t->runtime_fd, rel, tr->dev);
                r = chats_fd;
        }
        if (r >= 0) {
                archive_fd = fs_open_dir(chats_fd, "archive");
                r = archive_fd;
        }
        if (r >= 0)
                r = archive_move(archive_fd, chats_fd, s->id, &s->archived, /* to_archive= */ false,
                                 actions_report_step, c, &why);
        if (r < 0) {
                if (!why)
                        why = "cannot open the session's directories";
                log_error("restore: cannot restore session %s from '%s/%s/archive': %s: %s",
                          s->id, tr->runtime_dir, rel, why, log_errno_to_string(-r));
                (void)actions_report_session(c, s, &v, ACTIONS_FAILED, why, -r);
                return r;
        }
        Session moved = *s;
        moved.state = SESSION_ACTIVE;
        (void)actions_report_session(c, &moved, &v, ACTIONS_DONE, NULL, 0);
        log_info("restored session %s into %s/%s", s->id, tr->runtime_dir, rel);
        return 0;
}

/* Restore a session compressed in the cold tier (restore.c's step without an inventory session):
 * decompress its sidecars, then its transcript, into chats/archive/ (cold_restore_files():
 * checked, never replacing, one batch; a rerun after a kill completes it), then, unless
 * st->to_archive, move them on into chats/ like any archived session (archive_move(): sidecars
 * first, transcript last; a rerun after a kill finds the session archived and moves the rest).
 * 0, -errno (logged and journalled). */
static int actions_restore_cold(ActionsContext *c, const PlanStep *st) {
        static const char *const exts[] = { "worktree.json", "pr.json", "ledger.jsonl", "jsonl" };
        const Tree *tr = &c->inv->trees[st->tree];
        const ActionsTree *t = &c->trees[st->tree];
        size_t l = strlen(st->dir), lc = strlen("/" COLD_DIR);
        _cleanup_free_ char *arel = l > lc ? strndup(st->dir, l - lc) : NULL;
        _cleanup_free_ char *path = NULL, *msg = NULL;
        _cleanup_close_ int cfd = -EBADF, afd = -EBADF;
        const char *why = st->why;
        uint64_t in = 0, out = 0;
        int r = why ? -EEXIST : t->error;

        if (r >= 0 && !arel)
                r = -ENOMEM;
        if (r >= 0) {
                cfd = fs_open_path(t->runtime_fd, st->dir, tr->dev);
                afd = cfd < 0 ? cfd : fs_open_path(t->runtime_fd, arel, tr->dev);
                r = afd;
                if (r < 0)
                        why = "cannot open the session's directories";
        }
        /* one batch (cold_restore_files()): one fsync group for the files, one fsync of each
         * directory, instead of three fsyncs per file */
        char *names[ELEMENTSOF(exts)] = {};
        ColdResult res[ELEMENTSOF(exts)] = {};
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(exts); i++)
                if (!(names[i] = util_strprintf("%s.%s", st->name, exts[i])))
                        r = -ENOMEM;
        if (r >= 0) {
                r = cold_restore_files(cfd, (const char *const *)names, ELEMENTSOF(exts),
                                         /* skip_missing= */ true, afd, actions_report_step, c, res);
                /* the sidecars may be missing; the transcript must be there (a .zst is never
                 * empty: it has its trailer) */
                if (r >= 0 && res[ELEMENTSOF(exts) - 1].bytes_out == 0)
                        r = -ENOENT;
                if (r < 0)
                        why = r == -EEXIST        ? "an uncompressed copy exists (conflict)"
                              : cold_damage_why(r) ? cold_damage_why(r)
                                                   : "cannot decompress";
        }
        if (r >= 0 && !st->to_archive) {
                /* its content was checked against the recorded SHA-256 just now: no identity to
                 * expect */
                _cleanup_free_ char *crel = strndup(arel, strlen(arel) - strlen("/archive"));
                _cleanup_close_ int chats_fd = crel ? fs_open_path(t->runtime_fd, crel, tr->dev)
                                                    : -ENOMEM;
                r = chats_fd < 0 ? chats_fd
                                 : archive_move(afd, chats_fd, st->name, NULL,
                                                /* to_archive= */ false, actions_report_step, c, &why);
                if (r < 0 && !why)
                        why = "decompressed into chats/archive/, but cannot move it to chats/";
        }
        for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                in += r >= 0 ? res[i].bytes_in : 0;
                out += r >= 0 ? res[i].bytes_out : 0;
                free(names[i]);
        }
        path = util_strprintf("%s/%s/%s.jsonl", tr->runtime_dir, arel ? arel : st->dir, st->name);
        if (r < 0) {
                log_error("cannot restore session %s: %s: %s", st->session_id, why,
                          log_errno_to_string(-r));
                msg = util_strprintf("failed restore of compressed session %s: %s", st->session_id,
                                     why);
        } else {
                const char *to = st->to_archive ? "chats/archive/" : "chats/";
                log_info("restored session %s from the compressed archive to %s/%s%s",
                         st->session_id, tr->runtime_dir, arel,
                         st->to_archive ? "" : " and on to chats/");
                msg = util_strprintf(
                        "restored session %s from the compressed archive to %s (%" PRIu64
                        " bytes from %" PRIu64 " compressed)",
                        st->session_id, to, in, out);
        }
        JournalEntry e = {
                .event = r < 0 ? JOURNAL_FAILED : JOURNAL_RESTORED,
                .message = msg,
                .session = st->session_id,
                .path = path,
                .rule = "restore",
                .reason = r < 0 ? why : "qgc restore",
                .bytes = in,
                .has_bytes = r >= 0,
                .user = tr->user,
                .error = r < 0 ? -r : 0,
                .fields = (const JournalField[]){
                        JOURNAL_FIELD_U64("QGC_COMPRESSED_BYTES", out) },
                .n_fields = r < 0 ? 0 : 1,
        };
        (void)journal_log(&e);
        return r;
}

/* Append text to tree's session-times (session-times.h), durably. 0 or -errno (logged). */
static int actions_restore_append(ActionsContext *c, size_t tree, const StrBuf *sb) {
        const ActionsTree *t = &c->trees[tree];
        int r = t->error < 0 ? t->error
                             : session_times_append(t->global_fd, t->global_dev, sb->buf, sb->len,
                                                    actions_report_step, c);

        if (r < 0)
                log_error_errno(r, "restore: cannot record in '%s/%s'",
                                c->inv->trees[tree].global_dir, SESSION_TIMES_FILE);
        return r;
}

/* A step of a store that restores itself (StoreOps.run_restore): no session-times there, its
 * store keeps its own markers. */
static bool actions_restore_by_store(const ActionsContext *c, const PlanStep *st) {
        const Tree *tr = &c->inv->trees[st->tree];

        return tr->store && tr->store->run_restore && st->session < c->inv->n_sessions;
}

static bool actions_restore_is_cold(const PlanStep *st) {
        return st->session == SIZE_MAX && st->dir && st->name;
}

int actions_restore_intents(ActionsContext *c, const Plan *p, bool *ok) {
        msec_t now = util_now_msec();
        int r = 0;

        for (size_t t = 0; t < c->inv->n_trees; t++) {
                _cleanup_(strbuf_done) StrBuf sb = {};

                for (size_t i = 0; r >= 0 && i < p->n_steps; i++) {
                        const PlanStep *st = &p->steps[i];

                        if (st->kind != PLAN_STEP_RESTORE || st->tree != t || st->why ||
                            actions_restore_by_store(c, st))
                                continue;
                        r = session_times_line(&sb, actions_restore_is_cold(st) && st->to_archive
                                                            ? SESSION_TIME_RESTORE_TO_ARCHIVE
                                                            : SESSION_TIME_RESTORE,
                                               now, st->session_id);
                }
                if (r < 0)
                        return r;
                ok[t] = sb.len == 0 || actions_restore_append(c, t, &sb) >= 0;
        }
        return 0;
}

int actions_restore_step(ActionsContext *c, const PlanStep *st) {
        bool cold = actions_restore_is_cold(st);
        _cleanup_(strbuf_done) StrBuf sb = {};
        int r;

        if (!cold && st->session >= c->inv->n_sessions)
                return -EINVAL;
        if (actions_restore_by_store(c, st))
                return actions_store_restore(c, st);
        r = cold ? actions_restore_cold(c, st)
                 : actions_restore_one(c, &c->inv->sessions[st->session], st->why);
        /* its end (a cold restore --to-archive is complete in chats/archive/); one that can
         * never succeed (a conflict, a compressed file that is damaged: cold_damage_why(),
         * or needs a newer qgc) ends too, else every run's recovery pass would fail it again;
         * a step refused by its plan never began */
        if (!st->why && (r >= 0 || r == -EEXIST || cold_damage_why(r)) &&
            session_times_line(&sb, SESSION_TIME_RESTORED, util_now_msec(), st->session_id) >= 0)
                (void)actions_restore_append(c, st->tree, &sb);
        return r;
}
