/* actions.c: carries out a Plan, the only code that changes a managed tree. Every change is an
 * unlinkat() or renameat() relative to a directory fd opened without following symlinks, on the
 * tree's filesystem, after checking that the target is still what the scan saw: each store's
 * own steps do the changes (StoreOps.run_*, store.h), the executor orders, journals and counts
 * them. This file is the driver: the run's context, trees, locks and action log, the refusals
 * every store shares, the run's journal entries and progress. The executor's other files, each
 * calling only those after it: actions-store.c (a store's run, sessions, recovery and restore
 * steps), actions-orphan.c, actions-report.c (each outcome, and the count of steps);
 * actions-int.h is what they share.
 *
 * A store may queue sessions (Qwen's group commit, qwen-commit.h) and report their outcomes
 * when it commits them: the executor lets it commit before an orphan's step, before a session
 * of another store, and at the end. The states a kill can leave, and what the rerun does with
 * each: doc/architecture.md (the executor's crash states). actions_run() takes every tree lock
 * and opens the action log first.
 */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "actions.h"
#include "fs.h"
#include "journal.h"
#include "lock.h"
#include "log.h"
#include "macro.h"
#include "reason.h"
#include "store.h"
#include "util.h"

#include "actions-int.h"

static void actions_tree_done(ActionsTree *t, const Tree *tr) {
        if (t->run)
                tr->store->run_close(t->run);
        t->run = NULL;
}

/* Open every tree once (StoreOps.run_open); a tree that cannot be opened is skipped whole. */
static int actions_open_trees(ActionsContext *c) {
        c->trees = calloc(c->inv->n_trees ? c->inv->n_trees : 1, sizeof(ActionsTree));
        if (!c->trees)
                return -ENOMEM;
        for (size_t i = 0; i < c->inv->n_trees; i++) {
                const Tree *tr = &c->inv->trees[i];
                ActionsTree *t = &c->trees[i];
                int r;

                /* a store without run operations is read only */
                if (!tr->store || !tr->store->run_open) {
                        t->error = -EOPNOTSUPP;
                        continue;
                }
                r = tr->store->run_open(c->inv, i, &t->run);
                if (r < 0)
                        t->error = r;
        }
        return 0;
}


/* Why a session the plan names must still not be touched, or NULL (the same for every store). */
static const char *actions_refusal(const Session *s, const Verdict *v) {
        if (s->state == SESSION_CONFLICT)
                return "active and archived copies both exist (conflict)";
        if (s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                return "ownership not proven";
        if (v->verb == VERB_ARCHIVE && s->state != SESSION_ACTIVE)
                return "not an active session";
        if (v->verb == VERB_COMPRESS &&
            (s->state != SESSION_ARCHIVED || inventory_session_is_cold(s)))
                return "not an uncompressed archived session";
        return NULL;
}

/* One ARCHIVE, DELETE or COMPRESS item for a session: refused here, or carried out by its store
 * (StoreOps.run_session), every other store's queued sessions first. */
static int actions_session(ActionsContext *c, const Session *s, const Verdict *v) {
        const ActionsTree *t = &c->trees[s->tree];
        const char *why = actions_refusal(s, v);

        if (why)
                return actions_report_session(c, s, v,
                                              s->state == SESSION_CONFLICT
                                                      ? STORE_SKIPPED_CONFLICT
                                                      : STORE_SKIPPED_REFUSED,
                                              why, 0);
        if (t->error < 0)
                return actions_report_session(c, s, v, STORE_FAILED, "cannot open the tree",
                                              -t->error);
        actions_store_commit(c, c->inv->trees[s->tree].store);
        return actions_store_session(c, s, v);
}
/* Journal every session the deletion limits held back as skipped, with the limit as its reason
 * (the executor never sees them: their verdict is SKIP, or ARCHIVE instead of DELETE), and every
 * delete planned as a skip because its edit of a file Qwen shares would be refused
 * (policy_rule_limit). */
static void actions_report_held_back(ActionsContext *c, const Plan *p) {
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                _cleanup_free_ char *why = NULL;

                if (it->is_orphan || it->verdict->verb != VERB_SKIP ||
                    it->index >= p->inv->n_sessions ||
                    (!policy_verdict_held_by(it->verdict) &&
                     !(it->verdict->rule && streq(it->verdict->rule, policy_rule_limit))))
                        continue;
                why = plan_item_reason(p, it);
                (void)actions_report_session(c, &p->inv->sessions[it->index], it->verdict,
                                             STORE_SKIPPED_REFUSED, why, 0);
        }
}

/* The run-start entry's fields for the incomplete trees (at most ACTIONS_INCOMPLETE_MAX):
 * QGC_TREE_INCOMPLETE_DIR (the runtime directory) and QGC_TREE_INCOMPLETE (why no tree-level
 * decision was made there), a pair per tree in tree order. Returns how many fields. */
#define ACTIONS_INCOMPLETE_MAX 8U
static size_t actions_incomplete_fields(const Inventory *inv,
                                        JournalField ret[static 2 * ACTIONS_INCOMPLETE_MAX],
                                        size_t *ret_trees) {
        size_t n = 0, trees = 0;

        for (size_t t = 0; t < inv->n_trees; t++) {
                const char *why = inventory_tree_incomplete_why(&inv->trees[t]);

                if (!why)
                        continue;
                trees++;
                if (n / 2 >= ACTIONS_INCOMPLETE_MAX)
                        continue;
                ret[n++] = (JournalField)JOURNAL_FIELD_STR("QGC_TREE_INCOMPLETE_DIR",
                                                           inv->trees[t].runtime_dir);
                ret[n++] = (JournalField)JOURNAL_FIELD_STR("QGC_TREE_INCOMPLETE", why);
        }
        *ret_trees = trees;
        return n;
}

static int actions_warning_join(void *userdata, const char *w, bool limit) {
        StrBuf *sb = userdata;

        (void)limit;
        return strbuf_printf(sb, "%s%s", sb->len > 0 ? "; " : "", w);
}

/* The plan's warnings (plan_foreach_warning()) in one string, "; " between them; NULL when there
 * are none (or on ENOMEM: the summary goes out without them). */
static char *actions_warnings(const Plan *p) {
        StrBuf sb = {};

        if (plan_foreach_warning(p, actions_warning_join, &sb) < 0 || sb.len == 0) {
                strbuf_done(&sb);
                return NULL;
        }
        return strbuf_steal(&sb);
}

/* The run-start entry, or the summary: counts, bytes freed (deletions and orphans) and moved to
 * the archive (which frees nothing), and the warning when deletion limits held work back. */
static void actions_journal_run(const ActionsContext *c, const Plan *p, bool start,
                                size_t n_planned) {
        const ActionStats *st = c->stats;
        _cleanup_free_ char *msg = NULL, *warning = NULL;
        char freed_s[FORMAT_BYTES_MAX], archived_s[FORMAT_BYTES_MAX];
        uint64_t freed = st->bytes_deleted + st->bytes_orphans;
        PlanHeldBack h = {};
        JournalField incomplete[2 * ACTIONS_INCOMPLETE_MAX];
        size_t n_incomplete = 0, n_inc_fields = 0;

        if (start)
                n_inc_fields = actions_incomplete_fields(p->inv, incomplete, &n_incomplete);
        if (start && n_incomplete > 0) /* only then: other runs keep their message */
                msg = util_strprintf(
                        "qgc run started: %zu action%s planned; %zu incomplete tree%s: no "
                        "orphan, stale file or tree cap decided there",
                        n_planned, n_planned == 1 ? "" : "s", n_incomplete,
                        n_incomplete == 1 ? "" : "s");
        else if (start)
                msg = util_strprintf("qgc run started: %zu action%s planned", n_planned,
                                     n_planned == 1 ? "" : "s");
        else {
                plan_held_back(p, &h);
                warning = actions_warnings(p);
                char ci[FORMAT_BYTES_MAX], co[FORMAT_BYTES_MAX];
                /* the compression as the run line says it (main.c), when there was one */
                _cleanup_free_ char *comp =
                        st->n_compressed > 0
                                ? util_strprintf(
                                          ", compressed %u (%s into %s)", st->n_compressed,
                                          util_format_bytes(ci, sizeof ci, st->bytes_compressed_in),
                                          util_format_bytes(co, sizeof co,
                                                            st->bytes_compressed_out))
                                : NULL;
                msg = util_strprintf(
                        "qgc run finished: archived %u (%s moved to the archive), deleted "
                        "%u, orphans reclaimed %u, skipped %u, failed %u%s; freed %s%s%s",
                        st->n_archived,
                        util_format_bytes(archived_s, sizeof archived_s, st->bytes_archived),
                        st->n_deleted, st->n_orphans, st->n_skipped, st->n_failed, comp ?: "",
                        util_format_bytes(freed_s, sizeof freed_s, freed),
                        warning ? "; warning: " : "", warning ?: "");
        }
        if (msg && *log_user_prefix()) { /* root mode: the text names the user too */
                char *m = util_strprintf("%s%s", log_user_prefix(), msg);
                free(msg);
                msg = m;
        }
        /* the summary's counters; the compression's only when something was compressed */
        const JournalField fields[] = {
                JOURNAL_FIELD_U64("QGC_ARCHIVED", st->n_archived),
                JOURNAL_FIELD_U64("QGC_DELETED", st->n_deleted),
                JOURNAL_FIELD_U64("QGC_ORPHANS", st->n_orphans),
                JOURNAL_FIELD_U64("QGC_SKIPPED", st->n_skipped),
                JOURNAL_FIELD_U64("QGC_FAILED", st->n_failed),
                JOURNAL_FIELD_U64("QGC_SALVAGED", st->n_salvaged),
                JOURNAL_FIELD_U64("QGC_FREED_BYTES", freed),
                JOURNAL_FIELD_U64("QGC_ARCHIVED_BYTES", st->bytes_archived),
                JOURNAL_FIELD_U64("QGC_HELD_BACK", h.n),
                JOURNAL_FIELD_U64("QGC_HELD_BACK_BYTES", h.bytes),
                JOURNAL_FIELD_STR("QGC_WARNING", warning),
                JOURNAL_FIELD_U64("QGC_COMPRESSED", st->n_compressed),
                JOURNAL_FIELD_U64("QGC_ORIGINAL_BYTES", st->bytes_compressed_in),
                JOURNAL_FIELD_U64("QGC_COMPRESSED_BYTES", st->bytes_compressed_out),
        };
        JournalEntry e = {
                .event = start ? JOURNAL_RUN_START : JOURNAL_RUN_SUMMARY,
                .message = msg,
                /* whose run: a user's trees (root mode runs each user's apart) */
                .user = p->inv->n_trees > 0 ? p->inv->trees[0].user : NULL,
                /* unchanged meaning: archived + deleted + reclaimed (see QGC_FREED_BYTES) */
                .bytes = st->bytes_archived + st->bytes_deleted + st->bytes_orphans,
                .has_bytes = !start,
                .fields = start ? (n_inc_fields > 0 ? incomplete : NULL) : fields,
                .n_fields = start ? n_inc_fields : st->n_compressed > 0 ? ELEMENTSOF(fields)
                                                                        : ELEMENTSOF(fields) - 3,
                /* warning: a failure, or a cap or rule the plan could not meet (on stderr
                 * the latter is main.c's one human line, which --quiet lets cron mail) */
                .priority = !start && (st->n_failed > 0 ||
                                       (warning && journal_get_target() != JOURNAL_TARGET_STDERR))
                                    ? LOG_WARNING
                            : start && n_incomplete > 0 ? LOG_NOTICE /* less was decided */
                                                        : 0,
        };
        (void)journal_log(&e);
}
/* Run every step of kind restore (true) or recovery (false). */
static void actions_steps(ActionsContext *c, const Plan *p, bool restore) {
        _cleanup_free_ bool *ok = restore ? calloc(c->inv->n_trees + 1, sizeof(bool)) : NULL;
        int k = restore && !ok ? -ENOMEM : 0;

        if (restore && k >= 0)
                k = actions_store_restore_begin(c, p, ok);
        for (size_t i = 0; i < p->n_steps; i++) {
                const PlanStep *st = &p->steps[i];

                if ((st->kind == PLAN_STEP_RESTORE) != restore || st->tree >= c->inv->n_trees)
                        continue;
                if (restore) {
                        /* no restore without its start recorded first */
                        int r = k < 0 ? k : !ok[st->tree] && !st->why ? -EIO
                                                                       : actions_store_restore(c, st);
                        if (r < 0)
                                c->failed = true;
                        else
                                c->stats->n_restored++;
                } else
                        actions_store_recover_step(c, st);
        }
}

/* Progress of a long real run on a terminal: "done/total sessions, bytes" on one line of stderr,
 * rewritten at most every 200 ms from half a second on, erased at the end. */
typedef struct ActionsProgress {
        bool on;
        size_t total, done;
        double started, shown;
        bool printed;
} ActionsProgress;

static void actions_progress(ActionsProgress *pr, const ActionStats *st, bool end) {
        char b[FORMAT_BYTES_MAX];
        double now;

        if (!pr->on)
                return;
        if (end) {
                if (pr->printed)
                        fputs("\r\033[K", stderr);
                return;
        }
        now = util_mono_sec();
        if (now - pr->started < 0.5 || now - pr->shown < 0.2)
                return;
        pr->shown = now;
        pr->printed = true;
        fprintf(stderr, "\rqgc: %zu/%zu sessions, %s\033[K", pr->done, pr->total,
                util_format_bytes(b, sizeof b, st->bytes_deleted + st->bytes_archived));
        fflush(stderr);
}

/* actions_run()'s execution of the plan, the locks held and the action log open (-EBADF when
 * it is not); its result. */
static int actions_execute(const Plan *p, ActionStats *ret_stats, bool progress, bool one_thread) {
        ActionStats stats = {};
        ActionsProgress pr = { .on = progress, .started = util_mono_sec() };
        ActionsContext c = {
                .inv = p->inv,
                .stats = &stats,
                .one_thread = one_thread,
        };
        size_t n_planned = 0;
        int r;

        if (!journal_is_open())
                return -EBADF; /* every action is journalled: nothing runs without the log */
        for (size_t i = 0; i < p->n_items; i++) {
                Verb verb = p->items[i].verdict->verb;
                n_planned += verb == VERB_ARCHIVE || verb == VERB_DELETE || verb == VERB_COMPRESS ||
                             p->items[i].verdict->mark != 0;
        }
        pr.total = n_planned;
        n_planned += p->n_steps;
        r = actions_open_trees(&c);
        if (r < 0) {
                free(c.trees);
                return r;
        }
        actions_journal_run(&c, p, /* start= */ true, n_planned);
        actions_store_begin(&c, p);

        /* first what an interrupted run left behind (recover.h), then the policy's actions */
        actions_steps(&c, p, /* restore= */ false);
        for (size_t i = 0; i < p->inv->n_trees; i++)
                actions_store_recover(&c, i);
        actions_store_ready(&c);
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                const Verdict *v = it->verdict;

                if (v->verb != VERB_ARCHIVE && v->verb != VERB_DELETE && v->verb != VERB_COMPRESS &&
                    v->mark == 0)
                        continue;
                if (it->is_orphan) {
                        actions_store_commit(&c, NULL);
                        if ((v->verb == VERB_DELETE || v->mark != 0) && it->index < p->inv->n_orphans)
                                (void)actions_orphan_step(&c, &p->inv->orphans[it->index], v);
                } else if (it->index < p->inv->n_sessions)
                        (void)actions_session(&c, &p->inv->sessions[it->index], v);
                pr.done++;
                actions_progress(&pr, &stats, false);
        }
        actions_store_commit(&c, NULL);
        actions_store_end(&c);
        actions_progress(&pr, &stats, true);
        actions_steps(&c, p, /* restore= */ true);

        actions_report_held_back(&c, p);
        actions_journal_run(&c, p, /* start= */ false, n_planned);
        for (size_t i = 0; i < p->inv->n_trees; i++)
                actions_tree_done(&c.trees[i], &p->inv->trees[i]);
        free(c.trees);
        if (ret_stats)
                *ret_stats = stats;
        return c.failed ? 1 : 0;
}

/* Take the lock of every tree of inv; *ret_fds holds them (-EBADF where there is no tree). */
static int actions_lock_trees(const Inventory *inv, int **ret_fds) {
        _cleanup_free_ int *fds = calloc(inv->n_trees ? inv->n_trees : 1, sizeof(int));

        if (!fds)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_trees; i++) {
                int r;

                fds[i] = -EBADF;
                r = lock_tree(inv->trees[i].global_dir);
                if (r == -ENOENT)
                        continue; /* no tree there: nothing to lock, nothing to do */
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                macro_safe_close(fds[j]);
                        if (r == -EWOULDBLOCK)
                                log_error("another qgc is working on '%s'; try again later",
                                          inv->trees[i].global_dir);
                        else
                                log_error_errno(r, "cannot lock '%s'", inv->trees[i].global_dir);
                        return r;
                }
                fds[i] = r;
        }
        *ret_fds = TAKE_PTR(fds);
        return 0;
}

int actions_open_log(const ActionsRunOptions *o) {
        char run_id[33];
        int r;

        r = journal_new_run_id(run_id);
        if (r >= 0)
                r = journal_open(o->log_file ? JOURNAL_TARGET_FILE : o->log_target, o->log_file,
                                 run_id);
        if (r < 0 && o->log_file)
                return log_error_errno(r == -EBADFD ? -EINVAL : r,
                                       "--log-file '%s': cannot open the action log%s", o->log_file,
                                       r == -EBADFD ? " (not a regular file)" : "");
        if (r < 0)
                return log_error_errno(r, "cannot open the action log");
        if (o->quiet)
                journal_set_stderr_max_priority(4 /* LOG_WARNING */);
        return 0;
}

int actions_run(const Plan *p, const ActionsRunOptions *o, ActionStats *ret_stats) {
        _cleanup_free_ int *lock_fds = NULL;
        int r;

        r = actions_lock_trees(p->inv, &lock_fds);
        if (r < 0)
                return r;
        if (!o->log_is_open)
                r = actions_open_log(o);
        if (r >= 0) {
                /* progress only for a person watching: a terminal, not --quiet, and not mixed
                 * into the action log on that terminal */
                bool progress = !o->quiet && isatty(STDERR_FILENO) &&
                                journal_get_target() != JOURNAL_TARGET_STDERR;
                r = actions_execute(p, ret_stats, progress, o->one_thread);
                if (!o->log_is_open)
                        journal_close();
        }
        for (size_t i = 0; i < p->inv->n_trees; i++)
                macro_safe_close(lock_fds[i]);
        return r;
}
