/* actions-store.c: the trees of a store with run operations (StoreOps.run_*, store.h): a store's
 * state of the run (begun, ready, committed, ended), its recovery (unplanned, or the steps of
 * the store's recovery pass), each session's action and restore carried out by the store,
 * journalled and counted (actions-report.c).
 * Nothing here knows a store's files. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "journal.h"
#include "log.h"
#include "macro.h"
#include "plan.h"
#include "store.h"
#include "util.h"

#include "actions-int.h"

/* A session's outcome a store reports (StoreRunEnv.report). */
static void actions_store_report(void *userdata, const Session *s, const Verdict *v,
                                 StoreOutcome o, const char *why, int error) {
        (void)actions_report_session(userdata, s, v, o, why, error);
}

void actions_store_begin(ActionsContext *c, const Plan *p) {
        const Inventory *inv = c->inv;
        StoreRunEnv env = {
                .hook = actions_report_step, /* tests/faults crash here (ld --wrap) */
                .report = actions_store_report,
                .userdata = c,
                .counts = &c->counts,
                .one_thread = c->one_thread,
        };
        _cleanup_free_ struct StoreRun **runs = calloc(inv->n_trees ? inv->n_trees : 1,
                                                       sizeof(struct StoreRun *));

        c->stores = calloc(inv->n_trees ? inv->n_trees : 1, sizeof(ActionsStore));
        for (size_t i = 0; i < inv->n_trees; i++) {
                const StoreOps *store = inv->trees[i].store;
                ActionsStore *as = NULL;
                int r;

                if (!store || !store->run_begin)
                        continue;
                for (size_t k = 0; k < c->n_stores && !as; k++)
                        if (c->stores[k].store == store)
                                as = &c->stores[k];
                if (as)
                        continue;
                if (!c->stores || !runs) /* its sessions fail (StoreOps.run_begin) */
                        continue;
                for (size_t j = 0; j < inv->n_trees; j++)
                        runs[j] = inv->trees[j].store == store ? c->trees[j].run : NULL;
                as = &c->stores[c->n_stores++];
                *as = (ActionsStore){ .store = store };
                r = store->run_begin(p, runs, &env, &as->all);
                if (r < 0) {
                        as->all = NULL;
                        log_warning_errno(r, "cannot begin the run of the %s store", store->name);
                }
        }
}

void actions_store_ready(ActionsContext *c) {
        for (size_t k = 0; k < c->n_stores; k++)
                if (c->stores[k].all && c->stores[k].store->run_ready)
                        c->stores[k].store->run_ready(c->stores[k].all);
}

void actions_store_commit(ActionsContext *c, const StoreOps *except) {
        for (size_t k = 0; k < c->n_stores; k++)
                if (c->stores[k].all && c->stores[k].store != except &&
                    c->stores[k].store->run_commit)
                        c->stores[k].store->run_commit(c->stores[k].all);
}

void actions_store_end(ActionsContext *c) {
        for (size_t k = 0; k < c->n_stores; k++)
                if (c->stores[k].all && c->stores[k].store->run_end)
                        c->stores[k].store->run_end(c->stores[k].all);
        free(c->stores);
        c->stores = NULL;
        c->n_stores = 0;
        c->stats->n_salvaged += c->counts.n_salvaged;
        c->stats->n_erased += c->counts.n_erased;
        c->stats->n_erased_files += c->counts.n_erased_files;
        c->stats->n_compressed += c->counts.n_compressed;
        c->stats->bytes_compressed_in += c->counts.bytes_compressed_in;
        c->stats->bytes_compressed_out += c->counts.bytes_compressed_out;
        c->counts = (StoreCounts){};
}

void actions_store_recover(ActionsContext *c, size_t t) {
        const Tree *tr = &c->inv->trees[t];
        const ActionsTree *at = &c->trees[t];
        StoreStep step = { .hook = actions_report_step, .userdata = c };
        _cleanup_free_ char *msg = NULL;
        int r;

        if (at->error < 0 || !at->run || !tr->store->run_recover)
                return;
        r = tr->store->run_recover(at->run, &step);
        if (r >= 0 && step.n_recovered == 0) {
                free(step.why);
                return;
        }
        if (r >= 0)
                msg = util_strprintf("finished %u interrupted action%s in '%s'", step.n_recovered,
                                     step.n_recovered == 1 ? "" : "s", tr->runtime_dir);
        else
                msg = util_strprintf("recovery failed for '%s': %s%s%s", tr->runtime_dir,
                                     step.why ?: "", step.why ? ": " : "", log_errno_to_string(-r));
        JournalEntry e = {
                .event = r >= 0 ? JOURNAL_RECOVERED : JOURNAL_FAILED,
                .message = msg,
                .path = tr->runtime_dir,
                .rule = "recover",
                .reason = step.why,
                .user = tr->user,
                .error = r < 0 ? -r : 0,
        };
        (void)journal_log(&e);
        c->stats->n_recovered += step.n_recovered;
        if (r < 0) {
                c->stats->n_failed++;
                c->failed = true;
        }
        free(step.why);
}

/* Journal a recovery step and count it. */
static void actions_report_recover(ActionsContext *c, const PlanStep *st, const char *path,
                                   JournalEvent ev, const char *reason, int error) {
        const char *what = st->kind == PLAN_STEP_RECOVER_DELETE
                                   ? "finished the interrupted delete of session"
                                   : "removed the stale temporary file";
        _cleanup_free_ char *msg = NULL;

        if (ev == JOURNAL_RECOVERED)
                msg = st->kind == PLAN_STEP_RECOVER_DELETE
                              ? util_strprintf("%s %s (%s)", what, st->session_id,
                                               reason ? reason : "marker removed")
                              : util_strprintf("%s '%s'", what, path);
        else
                msg = util_strprintf("recovery failed for '%s': %s%s%s", path, reason ? reason : "",
                                     error ? ": " : "", error ? log_errno_to_string(error) : "");
        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = st->session_id,
                .path = path,
                .rule = "recover",
                .reason = reason,
                .user = c->inv->trees[st->tree].user,
                .error = error,
        };
        (void)journal_log(&e);
        if (ev == JOURNAL_RECOVERED)
                c->stats->n_recovered++;
        else if (ev == JOURNAL_FAILED) {
                c->stats->n_failed++;
                c->failed = true;
        }
}

void actions_store_recover_step(ActionsContext *c, const PlanStep *st) {
        const Tree *tr = &c->inv->trees[st->tree];
        const ActionsTree *t = &c->trees[st->tree];
        _cleanup_free_ char *path = util_strprintf(
                "%s/%s/%s", st->in_global ? tr->global_dir : tr->runtime_dir, st->dir, st->name);
        StoreStep step = { .hook = actions_report_step, .userdata = c };
        int r;

        if (t->error < 0) {
                actions_report_recover(c, st, path, JOURNAL_FAILED, "cannot open the tree",
                                       -t->error);
                return;
        }
        if (!t->run || !tr->store->run_recover_step) { /* a store that plans no such step */
                actions_report_recover(c, st, path, JOURNAL_FAILED, "cannot open the tree",
                                       EOPNOTSUPP);
                return;
        }
        r = tr->store->run_recover_step(t->run, st, &step);
        if (r < 0)
                actions_report_recover(c, st, path, JOURNAL_FAILED, step.why, -r);
        else if (r > 0)
                actions_report_recover(c, st, path, JOURNAL_RECOVERED, step.why, 0);
        free(step.why);
}

int actions_store_session(ActionsContext *c, const Session *s, const Verdict *v) {
        const ActionsTree *t = &c->trees[s->tree];
        StoreStep step = { .hook = actions_report_step, .userdata = c };
        StoreOutcome o;
        Session done;
        _cleanup_free_ char *live = NULL;
        const char *why;
        int r;

        r = c->inv->trees[s->tree].store->run_session(t->run, s, v, &step);
        if (r > 0) { /* queued: the store reports its outcome (actions_store_report()) */
                free(step.why);
                return 0;
        }
        o = actions_report_store(r);
        if (o == STORE_DONE) { /* what the store freed (store.h), not the planned size */
                done = *s;
                done.bytes = step.bytes;
                s = &done;
        }
        why = o == STORE_SKIPPED_CHANGED ? "changed since scan" : step.why;
        if (o == STORE_SKIPPED_LIVE)
                why = live = util_strprintf("in use since scan: %s", step.why ?: "in use");
        (void)actions_report_session(c, s, v, o, why, o == STORE_FAILED ? -r : 0);
        free(step.why);
        return 0;
}

/* Journal the restore of a compressed copy (a step without an inventory session) that returned
 * r. */
static void actions_store_restore_copy(ActionsContext *c, const PlanStep *st, int r,
                                       const StoreStep *step) {
        _cleanup_free_ char *msg =
                r < 0 ? util_strprintf("failed restore of compressed session %s: %s",
                                       st->session_id, step->why)
                      : util_strprintf("restored session %s from the compressed archive to %s (%" PRIu64
                                       " bytes from %" PRIu64 " compressed)",
                                       st->session_id, step->place ?: "?", step->bytes,
                                       step->bytes_compressed);
        JournalEntry e = {
                .event = r < 0 ? JOURNAL_FAILED : JOURNAL_RESTORED,
                .message = msg,
                .session = st->session_id,
                .path = step->path,
                .rule = "restore",
                .reason = r < 0 ? step->why : "qgc restore",
                .bytes = step->bytes,
                .has_bytes = r >= 0,
                .user = c->inv->trees[st->tree].user,
                .error = r < 0 ? -r : 0,
                .fields = (const JournalField[]){
                        JOURNAL_FIELD_U64("QGC_COMPRESSED_BYTES", step->bytes_compressed) },
                .n_fields = r < 0 ? 0 : 1,
        };
        (void)journal_log(&e);
}

int actions_store_restore(ActionsContext *c, const PlanStep *st) {
        const Tree *tr = &c->inv->trees[st->tree];
        const ActionsTree *t = &c->trees[st->tree];
        const Session *s = st->session < c->inv->n_sessions ? &c->inv->sessions[st->session]
                                                            : NULL;
        StoreStep step = { .hook = actions_report_step, .userdata = c };
        VerdictFacts f = { .fact = "qgc restore" };
        Verdict v = { .verb = VERB_KEEP, .rule = "restore", .facts = &f };
        Session moved;
        int r;

        if (!s && st->session != SIZE_MAX)
                return -EINVAL;
        r = t->run && tr->store->run_restore ? tr->store->run_restore(t->run, st, &step)
            : t->error < 0                  ? t->error
                                            : -EBADF;
        if (!s)
                actions_store_restore_copy(c, st, r, &step);
        else if (r < 0) {
                const char *why = st->why ?: step.why ?: "cannot restore it";

                if (!t->run) /* the store never saw it */
                        log_error("restore: cannot restore session %s in '%s': %s", s->id,
                                  tr->runtime_dir, why);
                (void)actions_report_session(c, s, &v,
                                             st->why || step.failed ? STORE_FAILED
                                                                    : actions_report_store(r),
                                             why, st->why ? 0 : -r);
        } else {
                moved = *s;
                moved.state = SESSION_ACTIVE;
                (void)actions_report_session(c, &moved, &v, STORE_DONE, NULL, 0);
                log_info("restored session %s into %s", s->id, step.place ?: tr->runtime_dir);
        }
        /* journalled first: then the store may record that the restore is over */
        if (t->run && tr->store->run_restore_end)
                tr->store->run_restore_end(t->run, st, r, &step);
        free(step.why);
        free(step.path);
        free(step.place);
        return r;
}

int actions_store_restore_begin(ActionsContext *c, const Plan *p, bool *ok) {
        for (size_t t = 0; t < c->inv->n_trees; t++) {
                const Tree *tr = &c->inv->trees[t];
                StoreStep step = { .hook = actions_report_step, .userdata = c };
                int r = c->trees[t].run && tr->store->run_restore_begin
                                ? tr->store->run_restore_begin(c->trees[t].run, p, &step)
                                : 0;

                free(step.why);
                if (r == -ENOMEM)
                        return r;
                ok[t] = r >= 0;
        }
        return 0;
}
