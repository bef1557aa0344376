/* actions-report.c: what every step of the executor reports: the count of its mutating steps,
 * and each session's outcome, journalled and counted (actions-int.h: ActionsOutcome). */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "journal.h"
#include "log.h"
#include "macro.h"
#include "reason.h"
#include "store.h"
#include "util.h"

#include "actions-int.h"

/* Count a mutating step (tests/faults crash the run here: ld --wrap=actions_report_step). */
void actions_report_step(void *userdata, const char *what) {
        ActionsContext *c = userdata;

        c->n_steps++;
        log_debug("step %u: %s", c->n_steps, what);
}

const char *actions_report_project(const Session *s) {
        return s->cwd ? s->cwd : s->project_dir;
}

/* The one map from an outcome to its journal event; done is the action's own event. */
JournalEvent actions_report_event(ActionsOutcome o, JournalEvent done) {
        switch (o) {
        case ACTIONS_DONE:
                return done;
        case ACTIONS_SKIPPED_CHANGED:
        case ACTIONS_SKIPPED_CONFLICT:
        case ACTIONS_SKIPPED_LIVE:
        case ACTIONS_SKIPPED_REFUSED:
        case ACTIONS_SKIPPED_NOT_NOW:
                return JOURNAL_SKIPPED;
        default:
                return JOURNAL_FAILED;
        }
}

ActionsOutcome actions_report_errno(int r) {
        return r >= 0 ? ACTIONS_DONE : r == -ESTALE ? ACTIONS_SKIPPED_CHANGED : ACTIONS_FAILED;
}

ActionsOutcome actions_report_store(int r) {
        switch (r) {
        case 0:
                return ACTIONS_DONE;
        case -ESTALE:
                return ACTIONS_SKIPPED_CHANGED;
        case -EBUSY:
                return ACTIONS_SKIPPED_LIVE;
        case -EEXIST:
                return ACTIONS_SKIPPED_CONFLICT;
        case -EAGAIN:
                return ACTIONS_SKIPPED_NOT_NOW;
        case -EPERM:
        case -EOPNOTSUPP:
        case -EBADMSG:
                return ACTIONS_SKIPPED_REFUSED;
        default:
                return r > 0 ? ACTIONS_DONE : ACTIONS_FAILED;
        }
}

/* The event of a session action that was done: what its verdict asked for. */
static JournalEvent actions_done_event(const Verdict *v) {
        if (v && v->rule && streq(v->rule, "restore"))
                return JOURNAL_RESTORED;
        if (v && v->verb == VERB_ARCHIVE)
                return JOURNAL_ARCHIVED;
        if (v && v->verb == VERB_COMPRESS)
                return JOURNAL_COMPRESSED;
        return JOURNAL_DELETED;
}

/* Journal one session outcome and count it. */
int actions_report_session(ActionsContext *c, const Session *s, const Verdict *v,
                           ActionsOutcome o, const char *reason, int error) {
        JournalEvent ev = actions_report_event(o, actions_done_event(v));
        const Tree *tr = &c->inv->trees[s->tree];
        bool archived = s->state == SESSION_ARCHIVED || ev == JOURNAL_ARCHIVED;
        _cleanup_free_ char *rel = tr->store && tr->store->session_path
                                           ? tr->store->session_path(s, archived)
                                           : NULL;
        _cleanup_free_ char *path = rel ? util_strprintf("%s/%s", tr->runtime_dir, rel) : NULL;
        _cleanup_free_ char *msg = NULL, *why = v ? reason_verdict(v, s, tr->store) : NULL;
        const char *verb = journal_event_to_string(ev);
        /* a planned skip names what it held back */
        Verb act = !v ? VERB_DELETE : v->verb == VERB_SKIP ? v->blocked_verb : v->verb;

        if (ev == JOURNAL_SKIPPED || ev == JOURNAL_FAILED)
                msg = util_strprintf("%s %s of session %s in %s ('%s'): %s%s%s",
                                     ev == JOURNAL_SKIPPED ? "skipped" : "failed",
                                     v && v->rule && streq(v->rule, "restore") ? "restore"
                                     : act == VERB_ARCHIVE                     ? "archive"
                                     : act == VERB_COMPRESS                    ? "compress"
                                                                               : "delete",
                                     s->id, actions_report_project(s), path ? path : "?",
                                     reason ? reason : "", error ? ": " : "",
                                     error ? log_errno_to_string(error) : "");
        else
                msg = util_strprintf("%s session %s in %s (%s)", verb, s->id,
                                     actions_report_project(s), why ?: "");

        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = s->id,
                .project = actions_report_project(s),
                .path = path,
                .rule = v ? v->rule : NULL,
                .reason = ev == JOURNAL_SKIPPED || ev == JOURNAL_FAILED ? reason : why,
                .bytes = s->bytes,
                .has_bytes = ev == JOURNAL_ARCHIVED || ev == JOURNAL_DELETED ||
                             ev == JOURNAL_RESTORED,
                .user = tr->user,
                .error = error,
        };
        if (journal_log(&e) < 0)
                log_warning("cannot write the action log entry for session %s", s->id);

        switch (ev) {
        case JOURNAL_ARCHIVED:
                c->stats->n_archived++;
                c->stats->bytes_archived += s->bytes;
                break;
        case JOURNAL_DELETED:
                c->stats->n_deleted++;
                c->stats->bytes_deleted += s->bytes;
                break;
        case JOURNAL_SKIPPED:
                c->stats->n_skipped++;
                break;
        case JOURNAL_FAILED:
                c->stats->n_failed++;
                c->failed = true;
                break;
        default:
                break;
        }
        return 0;
}

/* Report item it once. */
void actions_report_item(ActionsContext *c, ActionsBatchItem *it, ActionsOutcome o,
                          const char *why, int error) {
        if (it->done)
                return;
        it->done = true;
        (void)actions_report_session(c, it->s, it->v, o, why, error);
}

/* Report the step of it that returned r < 0 with why, as o (actions_report_errno(r), or what
 * the step knows, a conflict): a skip carries no errno, and a file that changed since the scan
 * is reported as that, whichever check of the step found it. */
void actions_report_item_fail(ActionsContext *c, ActionsBatchItem *it, ActionsOutcome o, int r,
                        const char *why) {
        if (o == ACTIONS_SKIPPED_CHANGED)
                why = "changed since scan";
        actions_report_item(c, it, o, why, o == ACTIONS_FAILED ? -r : 0);
}
