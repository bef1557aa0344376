/* actions-orphan.c: the executor's orphan step: reclaiming what the hygiene scan found
 * (hygiene_reclaim_orphan()), the stale-project marker, and journalling each orphan outcome. */
#include "autoconf.h"

#include <errno.h>
#include <string.h>

#include "journal.h"
#include "log.h"
#include "hygiene-reclaim.h"
#include "orphans.h"
#include "macro.h"
#include "reason.h"
#include "util.h"

#include "actions-int.h"

/* Journal an orphan outcome and count it; bytes: what reclaiming it freed. */
static int actions_report_orphan(ActionsContext *c, const Orphan *o, const Verdict *v,
                                 ActionsOutcome oc, const char *path, const char *reason,
                                 int error, uint64_t bytes) {
        JournalEvent ev = actions_report_event(oc, JOURNAL_ORPHAN_RECLAIMED);
        _cleanup_free_ char *msg = NULL, *why = v ? reason_orphan(v, o) : NULL;

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

/* An orphan of a tree whose store has run operations: its run_orphan (store.h). */
static int actions_orphan_store(ActionsContext *c, const Orphan *o, const Verdict *v) {
        const Tree *tr = &c->inv->trees[o->tree];
        StoreStep step = { .hook = actions_report_step, .userdata = c };
        _cleanup_free_ char *rel = tr->store->orphan_path ? tr->store->orphan_path(o)
                                   : o->project_dir
                                           ? util_strprintf("%s/%s", o->project_dir, o->name)
                                           : strdup(o->name);
        _cleanup_free_ char *path = rel ? util_strprintf("%s/%s", tr->runtime_dir, rel) : NULL;
        ActionsOutcome oc;
        int r;

        r = tr->store->run_orphan ? tr->store->run_orphan(c->trees[o->tree].run, o, &step)
                                  : -EOPNOTSUPP;
        oc = actions_report_store(r);
        /* a stale mark written or removed frees nothing: journalled as a mark, as Qwen's */
        if (oc == ACTIONS_DONE && o->kind == ORPHAN_STALE_PROJECT && v->verb != VERB_DELETE)
                actions_journal_stale_mark(c, o, v, path ?: o->name,
                                           v->mark > 0 ? "its originalPath is gone" : o->stale_why);
        else /* the bytes the store measured: a compaction's plan is only an estimate */
                (void)actions_report_orphan(c, o, v, oc, path ?: o->name,
                                            oc == ACTIONS_SKIPPED_CHANGED ? "changed since scan"
                                            : step.why                    ? step.why
                                            : r == -EOPNOTSUPP ? "the store does not reclaim orphans"
                                                               : NULL,
                                            oc == ACTIONS_FAILED ? -r : 0, step.bytes);
        free(step.why);
        return 0;
}

/* Write or remove a stale project entry's marker (hygiene.h) and journal it. */
static int actions_stale_mark(ActionsContext *c, const Orphan *o, const Verdict *v,
                              const char *path) {
        const ActionsTree *t = &c->trees[o->tree];
        const char *why = NULL;
        int r = t->error < 0 ? t->error
                             : hygiene_reclaim_stale(c->inv, o, v->mark, /* remove= */ false,
                                                 t->runtime_fd, c->inv->trees[o->tree].dev,
                                                 actions_report_step, c, &why);

        if (r <= 0)
                return actions_report_orphan(c, o, v,
                                             r == 0 ? ACTIONS_SKIPPED_NOT_NOW : ACTIONS_FAILED,
                                             path, why ?: "cannot open the tree", -r, o->bytes);
        actions_journal_stale_mark(c, o, v, path,
                                   v->mark > 0 ? "every recorded cwd is a vanished temporary directory"
                                               : o->stale_why);
        return 0;
}

/* Reclaim one orphan (orphans.c), journal and count the outcome. */
int actions_orphan_step(ActionsContext *c, const Orphan *o, const Verdict *v) {
        const Tree *tr = &c->inv->trees[o->tree];
        const ActionsTree *t = &c->trees[o->tree];
        _cleanup_free_ char *rel = NULL, *path = NULL;
        const char *why = NULL;
        int root_fd, r;
        dev_t dev = tr->dev;

        if (t->run)
                return actions_orphan_store(c, o, v);
        switch (o->kind) {
        case ORPHAN_FILE_HISTORY:
                rel = strdup("file-history");
                path = util_strprintf("%s/file-history/%s", tr->global_dir, o->name);
                root_fd = t->global_fd;
                dev = t->global_dev;
                break;
        case ORPHAN_SUBAGENTS:
                rel = util_strprintf("projects/%s/subagents", o->project_dir);
                path = util_strprintf("%s/%s/%s", tr->runtime_dir, rel ? rel : "", o->name);
                root_fd = t->runtime_fd;
                break;
        case ORPHAN_EMPTY_PROJECT:
                rel = strdup("projects");
                path = util_strprintf("%s/projects/%s", tr->runtime_dir, o->name);
                root_fd = t->runtime_fd;
                break;
        default:
                if (!inventory_hygiene_kind(o->kind))
                        return 0;
                /* hygiene (hygiene.h): project_dir is the directory below R, or G for plans */
                rel = strdup(o->project_dir ?: "");
                root_fd = o->kind == ORPHAN_PLAN ? t->global_fd : t->runtime_fd;
                dev = o->kind == ORPHAN_PLAN ? t->global_dev : dev;
                path = util_strprintf("%s/%s/%s",
                                      o->kind == ORPHAN_PLAN ? tr->global_dir : tr->runtime_dir,
                                      rel ? rel : "", o->name);
                break;
        }
        if (!rel || !path)
                return actions_report_orphan(c, o, v, ACTIONS_FAILED, o->name, "out of memory",
                                             ENOMEM, o->bytes);
        if (t->error < 0)
                return actions_report_orphan(c, o, v, ACTIONS_FAILED, path, "cannot open the tree",
                                             -t->error, o->bytes);
        if (o->kind == ORPHAN_STALE_PROJECT && v->verb != VERB_DELETE)
                return actions_stale_mark(c, o, v, path);
        if (o->kind == ORPHAN_STALE_PROJECT)
                r = hygiene_reclaim_stale(c->inv, o, 0, /* remove= */ true, root_fd, dev, actions_report_step,
                                      c, &why);
        else if (inventory_hygiene_kind(o->kind))
                r = hygiene_reclaim_orphan(o, root_fd, dev, c->runtime_fds, c->inv->n_trees, actions_report_step,
                                    c, &why);
        else
                r = orphans_reclaim(o, root_fd, rel, dev, c->runtime_fds, c->inv->n_trees,
                                    actions_report_step, c, &why);
        if (r == 0)
                return actions_report_orphan(c, o, v, ACTIONS_SKIPPED_NOT_NOW, path, why, 0, o->bytes);
        if (r < 0)
                return actions_report_orphan(c, o, v, ACTIONS_FAILED, path, why, -r, o->bytes);
        return actions_report_orphan(c, o, v, ACTIONS_DONE, path, NULL, 0, o->bytes);
}
