/* qwen-restore.c: `qgc restore` in a Qwen tree (qwen_store's plan_restore, run_restore_begin,
 * run_restore: store.h): an archived session moved back from chats/archive/ into chats/ with its
 * sidecars (archive.h), or a session compressed in the cold tier (cold.h) decompressed into
 * chats/archive/ and moved on into chats/ unless --to-archive; each restore's start recorded in
 * G/.qgc/session-times before the first of a tree's restores changes anything (the intent the
 * recovery pass finishes after a kill, and the start of restore-grace), and its end after it. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "cold-restore.h"
#include "cold.h"
#include "fs.h"
#include "log.h"
#include "macro.h"
#include "plan.h"
#include "qwen-restore.h"
#include "qwen-run.h"
#include "restore.h"
#include "session-times.h"
#include "util.h"

/* The transcript and the sidecars present in chats/archive/ of s, as from -> to paths. */
static int qwen_restore_paths(const Tree *tr, const Session *s, PlanStep *st) {
        static const char *const exts[] = { "jsonl", "worktree.json", "pr.json", "ledger.jsonl" };
        _cleanup_free_ char *chats =
                util_strprintf("%s/projects/%s/chats", tr->runtime_dir, s->project_dir);
        _cleanup_free_ char *rel = util_strprintf("projects/%s/chats/archive", s->project_dir);
        _cleanup_close_ int root_fd = -EBADF, dir_fd = -EBADF;
        int r;

        if (!chats || !rel)
                return -ENOMEM;
        root_fd = fs_open_root(tr->runtime_dir, tr->dev);
        if (root_fd >= 0)
                dir_fd = fs_open_path(root_fd, rel, tr->dev);
        for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *name = util_strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *from = NULL, *to = NULL;
                struct stat sb;

                if (!name)
                        return -ENOMEM;
                /* the transcript always (the scan saw it); a sidecar when it is there now */
                if (i > 0 && (dir_fd < 0 || fstatat(dir_fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                              !S_ISREG(sb.st_mode)))
                        continue;
                from = util_strprintf("%s/archive/%s", chats, name);
                to = util_strprintf("%s/%s", chats, name);
                if (!from || !to)
                        return -ENOMEM;
                r = plan_step_add_path(st, from, to);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A session compressed in the cold tier of tree t (cold.h; the scan lists it archived): one
 * RESTORE step with no inventory session (session = SIZE_MAX), dir = its .qgc-cold directory
 * relative to the runtime root, name = the id, the .zst files to decompress as paths (to their
 * place in chats/, or in chats/archive/ when to_archive). 1 added, 0 none, -errno. */
static int qwen_restore_plan_cold(const Inventory *inv, size_t t, const char *id, bool to_archive,
                             Plan *p) {
        static const char *const exts[] = { "worktree.json", "pr.json", "ledger.jsonl", "jsonl" };
        const Tree *tr = &inv->trees[t];
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int root_fd = -EBADF, pfd = -EBADF;
        _cleanup_free_ char *tname = util_strprintf("%s.jsonl%s", id, COLD_SUFFIX);
        const char *proj;
        unsigned char type;
        struct stat sb;

        if (!d || !tname)
                return -ENOMEM;
        if (strchr(id, '/') || streq(id, ".") || streq(id, ".."))
                return 0;
        root_fd = fs_open_root(tr->runtime_dir, tr->dev);
        if (root_fd < 0)
                return 0;
        /* listed with O_NOATIME where permitted, like the scan: a dry run changes no atime */
        pfd = fs_open_noatime(root_fd, "projects", O_RDONLY | O_DIRECTORY);
        if (pfd < 0 || fstat(pfd, &sb) < 0 || sb.st_dev != tr->dev)
                return 0;
        fs_dir_init(d, pfd);
        while (fs_dir_next(d, &proj, &type) > 0) {
                _cleanup_free_ char *rel =
                        util_strprintf("projects/%s/chats/archive/" COLD_DIR, proj);
                _cleanup_free_ char *arel = util_strprintf("projects/%s/chats/archive", proj);
                _cleanup_free_ char *crel = util_strprintf("projects/%s/chats", proj);
                _cleanup_close_ int cfd = -EBADF, afd = -EBADF;
                int r;

                if (!rel || !arel || !crel)
                        return -ENOMEM;
                cfd = fs_open_path(root_fd, rel, tr->dev);
                if (cfd < 0 || fstatat(cfd, tname, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(sb.st_mode))
                        continue;
                afd = fs_open_path(root_fd, arel, tr->dev);
                _cleanup_close_ int chats_fd = afd >= 0 ? fs_open_path(root_fd, crel, tr->dev)
                                                        : -EBADF;
                PlanStep st = {
                        .kind = PLAN_STEP_RESTORE,
                        .tree = t,
                        .session = SIZE_MAX,
                        .session_id = strdup(id),
                        .dir = strdup(rel),
                        .name = strdup(id),
                        .to_archive = to_archive,
                };
                if (!st.session_id || !st.dir || !st.name) {
                        plan_step_done(&st);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                        _cleanup_free_ char *n = util_strprintf("%s.%s", id, exts[i]);
                        _cleanup_free_ char *zn =
                                util_strprintf("%s.%s%s", id, exts[i], COLD_SUFFIX);
                        _cleanup_free_ char *from = NULL, *to = NULL;

                        if (!n || !zn) {
                                plan_step_done(&st);
                                return -ENOMEM;
                        }
                        if (fstatat(cfd, zn, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
                                continue;
                        /* a copy already in chats/archive/ is the end of an interrupted restore
                         * when it matches (cold_restore_files() checks), else a conflict then; an
                         * active transcript is a conflict now */
                        if (!st.why && i + 1 == ELEMENTSOF(exts) && chats_fd >= 0 &&
                            fs_exists(chats_fd, n) > 0)
                                st.why = strdup("an active copy exists (conflict)");
                        /* the plan is the run: a .zst the executor would refuse (its content
                         * past the recorded size, not what the trailer records, a dictionary
                         * this qgc lacks) is refused here, decompressed to nowhere, bounded as
                         * the executor's decompression is (cold.h) */
                        if (!st.why) {
                                r = cold_cat(cfd, n, -EBADF);
                                if (r < 0 && cold_damage_why(r))
                                        st.why = strdup(cold_damage_why(r));
                        }
                        from = util_strprintf("%s/%s/%s", tr->runtime_dir, rel, zn);
                        to = util_strprintf("%s/%s/%s", tr->runtime_dir, to_archive ? arel : crel,
                                            n);
                        r = from && to ? plan_step_add_path(&st, from, to) : -ENOMEM;
                        if (r < 0) {
                                plan_step_done(&st);
                                return r;
                        }
                }
                r = plan_add_step(p, &st);
                return r < 0 ? r : 1;
        }
        return 0;
}

/* The RESTORE step of session s (of tree t), archived in chats/archive/, added to p. */
static int qwen_restore_plan_archived(Plan *p, const Inventory *inv, size_t t, const Session *s) {
        const Tree *tr = &inv->trees[t];
        const char *why = restore_refusal(tr, s);
        PlanStep st;
        int r;

        r = restore_step_init(inv, t, s, why, &st);
        if (r >= 0 && !why)
                r = qwen_restore_paths(tr, s, &st);
        if (r < 0) {
                plan_step_done(&st);
                return r;
        }
        return plan_add_step(p, &st);
}

/* In whatever state an earlier restore left it: compressed in the cold tier, decompressed back
 * (which also finishes a restore killed after the transcript was back but before its .zst went)
 * and moved on into chats/ unless to_archive, else moved back from chats/archive/ (which
 * finishes one killed after the decompression). */
int qwen_restore_plan(Plan *p, const Inventory *inv, size_t t, const char *id, bool to_archive) {
        const Session *s = inventory_find(inv, t, id);
        int r;

        r = qwen_restore_plan_cold(inv, t, id, to_archive, p);
        if (r != 0 || !s || inventory_session_is_cold(s))
                return r;
        r = qwen_restore_plan_archived(p, inv, t, s);
        return r < 0 ? r : 1;
}

/* Append text to tree's session-times (session-times.h), durably. 0 or -errno (logged). */
static int qwen_restore_record(const QwenRun *run, const StrBuf *sb, StoreStep *step) {
        int r = run->session_error < 0 ? run->session_error
                               : session_times_append(run->global_fd, run->global_dev, sb->buf,
                                                      sb->len, step->hook, step->userdata);

        if (r < 0)
                log_error_errno(r, "restore: cannot record in '%s/%s'",
                                run->inv->trees[run->tree].global_dir, SESSION_TIMES_FILE);
        return r;
}

/* A step of a compressed copy (qwen_restore_plan_cold()): no inventory session. */
static bool qwen_restore_is_cold(const PlanStep *st) {
        return st->session == SIZE_MAX && st->dir && st->name;
}

int qwen_restore_begin(struct StoreRun *r_, const Plan *p, StoreStep *step) {
        const QwenRun *run = (const QwenRun *)r_;
        _cleanup_(strbuf_done) StrBuf sb = {};
        msec_t now = util_now_msec();
        int r;

        for (size_t i = 0; i < p->n_steps; i++) {
                const PlanStep *st = &p->steps[i];

                if (st->kind != PLAN_STEP_RESTORE || st->tree != run->tree || st->why)
                        continue;
                r = session_times_line(&sb, qwen_restore_is_cold(st) && st->to_archive
                                                    ? SESSION_TIME_RESTORE_TO_ARCHIVE
                                                    : SESSION_TIME_RESTORE,
                                       now, st->session_id);
                if (r < 0)
                        return r;
        }
        return sb.len == 0 ? 0 : qwen_restore_record(run, &sb, step);
}

/* Restore archived session s: its sidecars and transcript from chats/archive/ into chats/
 * (archive_move()). 0 done, -errno with step->why (logged). */
static int qwen_restore_archived(const QwenRun *run, const Session *s, StoreStep *step) {
        const Tree *tr = &run->inv->trees[s->tree];
        _cleanup_free_ char *rel = util_strprintf("projects/%s/chats", s->project_dir);
        _cleanup_close_ int chats_fd = -EBADF, archive_fd = -EBADF;
        const char *why = NULL;
        int r;

        if (!rel)
                return -ENOMEM;
        r = run->session_error;
        if (r >= 0) {
                chats_fd = fs_open_path(run->runtime_fd, rel, tr->dev);
                r = chats_fd;
        }
        if (r >= 0) {
                archive_fd = fs_open_dir(chats_fd, "archive");
                r = archive_fd;
        }
        if (r >= 0)
                r = archive_move(archive_fd, chats_fd, s->id, &s->archived, /* to_archive= */ false,
                                 step->hook, step->userdata, &why);
        if (r < 0) {
                if (!why)
                        why = "cannot open the session's directories";
                log_error("restore: cannot restore session %s from '%s/%s/archive': %s: %s",
                          s->id, tr->runtime_dir, rel, why, log_errno_to_string(-r));
                step->why = strdup(why);
                return r;
        }
        step->place = util_strprintf("%s/%s", tr->runtime_dir, rel); /* NULL on ENOMEM: done */
        return 0;
}

/* Restore a session compressed in the cold tier (qwen_restore_plan_cold()'s step): decompress its
 * sidecars, then its transcript, into chats/archive/ (cold_restore_files(): checked, never
 * replacing, one batch; a rerun after a kill completes it), then, unless st->to_archive, move
 * them on into chats/ like any archived session (archive_move(): sidecars first, transcript
 * last; a rerun after a kill finds the session archived and moves the rest). 0, -errno with
 * step->why (logged). */
static int qwen_restore_cold(const QwenRun *run, const PlanStep *st, StoreStep *step) {
        static const char *const exts[] = { "worktree.json", "pr.json", "ledger.jsonl", "jsonl" };
        const Tree *tr = &run->inv->trees[st->tree];
        size_t l = strlen(st->dir), lc = strlen("/" COLD_DIR);
        _cleanup_free_ char *arel = l > lc ? strndup(st->dir, l - lc) : NULL;
        _cleanup_close_ int cfd = -EBADF, afd = -EBADF;
        const char *why = st->why;
        uint64_t in = 0, out = 0;
        int r = why ? -EEXIST : run->session_error;

        if (r >= 0 && !arel)
                r = -ENOMEM;
        if (r >= 0) {
                cfd = fs_open_path(run->runtime_fd, st->dir, tr->dev);
                afd = cfd < 0 ? cfd : fs_open_path(run->runtime_fd, arel, tr->dev);
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
                                       /* skip_missing= */ true, afd, step->hook, step->userdata,
                                       res);
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
                _cleanup_close_ int chats_fd = crel ? fs_open_path(run->runtime_fd, crel, tr->dev)
                                                    : -ENOMEM;
                r = chats_fd < 0 ? chats_fd
                                 : archive_move(afd, chats_fd, st->name, NULL,
                                                /* to_archive= */ false, step->hook,
                                                step->userdata, &why);
                if (r < 0 && !why)
                        why = "decompressed into chats/archive/, but cannot move it to chats/";
        }
        for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                in += r >= 0 ? res[i].bytes_in : 0;
                out += r >= 0 ? res[i].bytes_out : 0;
                free(names[i]);
        }
        step->path = util_strprintf("%s/%s/%s.jsonl", tr->runtime_dir, arel ? arel : st->dir,
                                    st->name);
        if (r < 0) {
                log_error("cannot restore session %s: %s: %s", st->session_id, why,
                          log_errno_to_string(-r));
                step->why = why ? strdup(why) : NULL;
                return r;
        }
        log_info("restored session %s from the compressed archive to %s/%s%s", st->session_id,
                 tr->runtime_dir, arel, st->to_archive ? "" : " and on to chats/");
        step->bytes = in;
        step->bytes_compressed = out;
        step->place = strdup(st->to_archive ? "chats/archive/" : "chats/");
        return 0;
}

int qwen_restore_run(struct StoreRun *r_, const PlanStep *st, StoreStep *step) {
        const QwenRun *run = (const QwenRun *)r_;
        bool cold = qwen_restore_is_cold(st);
        const Session *s;

        step->failed = true; /* every failure of Qwen's restore is one, never a skip */
        if (!cold && st->session >= run->inv->n_sessions)
                return -EINVAL;
        s = cold ? NULL : &run->inv->sessions[st->session];
        if (!cold && st->why) { /* refused by its plan: never begun */
                log_error("restore: cannot restore session %s in '%s/projects/%s/chats': %s",
                          s->id, run->inv->trees[s->tree].runtime_dir, s->project_dir, st->why);
                return -EEXIST;
        }
        return cold ? qwen_restore_cold(run, st, step) : qwen_restore_archived(run, s, step);
}

/* Its end (a cold restore --to-archive is complete in chats/archive/); one that can never
 * succeed (a conflict, a compressed file that is damaged: cold_damage_why(), or needs a newer
 * qgc) ends too, else every run's recovery pass would fail it again; a step refused by its
 * plan never began. */
void qwen_restore_end(struct StoreRun *r_, const PlanStep *st, int r, StoreStep *step) {
        const QwenRun *run = (const QwenRun *)r_;
        _cleanup_(strbuf_done) StrBuf sb = {};

        if (!st->why && (r >= 0 || r == -EEXIST || cold_damage_why(r)) &&
            session_times_line(&sb, SESSION_TIME_RESTORED, util_now_msec(), st->session_id) >= 0)
                (void)qwen_restore_record(run, &sb, step);
}
