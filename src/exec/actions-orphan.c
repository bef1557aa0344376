/* actions-orphan.c: the executor's orphan step: an orphan reclaimed, or a stale project entry's
 * marker written or removed, by its store (StoreOps.run_orphan), and each outcome journalled. */
#include "autoconf.h"

#include <errno.h>
#include <string.h>

#include "journal.h"
#include "log.h"
#include "macro.h"
#include "reason.h"
#include "store.h"
#include "util.h"

#include "actions-int.h"

/* Journal an orphan outcome and count it; bytes: what reclaiming it freed. */
static int actions_report_orphan(ActionsContext *c, const Orphan *o, const Verdict *v,
                                 StoreOutcome oc, const char *path, const char *reason,
                                 int error, uint64_t bytes) {
        JournalEvent ev = actions_report_event(oc, JOURNAL_ORPHAN_RECLAIMED);
        _cleanup_free_ char *msg = NULL, *why = v ? reason_orphan(v, o, c->inv->trees[o->tree].store) : NULL;

        if (ev == JOURNAL_ORPHAN_RECLAIMED)
                msg = util_strprintf("reclaimed orphan %s '%s'",
                                     inventory_orphan_kind_to_string(o->kind), path);
        else
                msg = util_strprintf("%s orphan %s '%s': %s%s%s",
                                     ev == JOURNAL_SKIPPED ? "skipped" : "failed to reclaim",
                                     inventory_orphan_kind_to_string(o->kind), path,
                                     reason ? reason : "", error ? ": " : "",
                                     error ? log_errno_to_string(error) : "");
        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = o->kind == ORPHAN_FILE_HISTORY || o->kind == ORPHAN_SUBAGENTS ? o->name
                                                                                        : NULL,
                /* a stale project entry is a project: its directory's name */
                .project = o->kind == ORPHAN_STALE_PROJECT ? o->name : o->project_dir,
                .path = path,
                .rule = v ? v->rule : NULL,
                .reason = ev == JOURNAL_ORPHAN_RECLAIMED ? why : reason,
                .bytes = bytes,
                .has_bytes = ev == JOURNAL_ORPHAN_RECLAIMED,
                .user = c->inv->trees[o->tree].user,
                .error = error,
        };
        (void)journal_log(&e);
        if (ev == JOURNAL_ORPHAN_RECLAIMED) {
                c->stats->n_orphans++;
                c->stats->bytes_orphans += bytes;
        } else if (ev == JOURNAL_SKIPPED)
                c->stats->n_skipped++;
        else {
                c->stats->n_failed++;
                c->failed = true;
        }
        return 0;
}

/* Journal a stale project entry's marker written (mark > 0) or removed; reason: what happened,
 * not the plan's "would". */
static void actions_journal_stale_mark(ActionsContext *c, const Orphan *o, const Verdict *v,
                                       const char *path, const char *reason) {
        _cleanup_free_ char *msg = util_strprintf(v->mark > 0 ? "marked stale project entry '%s'"
                                                              : "removed the stale mark of project entry '%s'",
                                                  path);
        JournalEntry e = {
                .event = JOURNAL_STALE_MARK,
                .message = msg,
                .project = o->name,
                .path = path,
                .rule = v->rule,
                .reason = reason ?: "a recorded cwd exists again",
                .user = c->inv->trees[o->tree].user,
        };
        (void)journal_log(&e);
}

/* Reclaim one orphan through its store's run_orphan (store.h), journal and count the outcome. */
int actions_orphan_step(ActionsContext *c, const Orphan *o, const Verdict *v) {
        const Tree *tr = &c->inv->trees[o->tree];
        const ActionsTree *t = &c->trees[o->tree];
        StoreStep step = { .hook = actions_report_step, .userdata = c };
        _cleanup_free_ char *rel = tr->store->orphan_path ? tr->store->orphan_path(o)
                                   : o->project_dir
                                           ? util_strprintf("%s/%s", o->project_dir, o->name)
                                           : strdup(o->name);
        _cleanup_free_ char *path = rel ? util_strprintf("%s/%s", tr->runtime_dir, rel) : NULL;
        StoreOutcome oc;
        int r;

        if (t->error < 0 && !t->run)
                return actions_report_orphan(c, o, v, STORE_FAILED, path ?: o->name,
                                             "cannot open the tree", -t->error, o->bytes);
        r = tr->store->run_orphan && t->run ? tr->store->run_orphan(t->run, o, v, &step)
                                            : -EOPNOTSUPP;
        oc = r < 0 && step.failed ? STORE_FAILED : actions_report_store(r);
        if (step.path) {
                free(path);
                path = TAKE_PTR(step.path);
        }
        /* a stale mark written or removed frees nothing: journalled as a mark */
        if (oc == STORE_DONE && o->kind == ORPHAN_STALE_PROJECT && v->verb != VERB_DELETE)
                actions_journal_stale_mark(c, o, v, path ?: o->name,
                                           step.why ?: (v->mark > 0 ? "its originalPath is gone"
                                                                    : o->stale_why));
        else /* the bytes the store measured: a compaction's plan is only an estimate */
                (void)actions_report_orphan(c, o, v, oc, path ?: o->name,
                                            oc == STORE_SKIPPED_CHANGED ? "changed since scan"
                                            : step.why                    ? step.why
                                            : r == -EOPNOTSUPP ? "the store does not reclaim orphans"
                                                               : NULL,
                                            oc == STORE_FAILED ? -r : 0, step.bytes);
        free(step.why);
        return 0;
}
