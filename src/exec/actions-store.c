/* actions-store.c: the trees of a store with run operations (StoreOps.run_*, store.h): its
 * recovery and each session's action carried out by the store, journalled and counted as
 * Qwen's (actions-report.c). Nothing here knows a store's files. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>

#include "journal.h"
#include "log.h"
#include "macro.h"
#include "store.h"
#include "util.h"

#include "actions-int.h"

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
                msg = util_strprintf("finished %u interrupted delete%s in '%s'", step.n_recovered,
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

int actions_store_session(ActionsContext *c, const Session *s, const Verdict *v) {
        const ActionsTree *t = &c->trees[s->tree];
        StoreStep step = { .hook = actions_report_step, .userdata = c };
        ActionsOutcome o;
        Session done;
        _cleanup_free_ char *live = NULL;
        const char *why;
        int r;

        r = c->inv->trees[s->tree].store->run_session(t->run, s, v, &step);
        o = actions_report_store(r);
        if (o == ACTIONS_DONE) { /* what the store freed (store.h), not the planned size */
                done = *s;
                done.bytes = step.bytes;
                s = &done;
        }
        why = o == ACTIONS_SKIPPED_CHANGED ? "changed since scan" : step.why;
        if (o == ACTIONS_SKIPPED_LIVE)
                why = live = util_strprintf("in use since scan: %s", step.why ?: "in use");
        (void)actions_report_session(c, s, v, o, why, o == ACTIONS_FAILED ? -r : 0);
        free(step.why);
        return 0;
}
