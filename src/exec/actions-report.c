/* actions-report.c: what every step of the executor reports: the count of its mutating steps,
 * and each session's outcome, journalled and counted (store.h: StoreOutcome). */
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

/* The one map from an outcome to its journal event; done is the action's own event. */
JournalEvent actions_report_event(StoreOutcome o, JournalEvent done) {
        switch (o) {
        case STORE_DONE:
                return done;
        case STORE_SKIPPED_CHANGED:
        case STORE_SKIPPED_CONFLICT:
        case STORE_SKIPPED_LIVE:
        case STORE_SKIPPED_REFUSED:
        case STORE_SKIPPED_NOT_NOW:
                return JOURNAL_SKIPPED;
        default:
                return JOURNAL_FAILED;
        }
}

StoreOutcome actions_report_store(int r) {
        switch (r) {
        case 0:
                return STORE_DONE;
        case -ESTALE:
                return STORE_SKIPPED_CHANGED;
        case -EBUSY:
                return STORE_SKIPPED_LIVE;
        case -EEXIST:
                return STORE_SKIPPED_CONFLICT;
        case -EAGAIN:
                return STORE_SKIPPED_NOT_NOW;
        case -EPERM:
        case -EOPNOTSUPP:
        case -EBADMSG:
                return STORE_SKIPPED_REFUSED;
        default:
                return r > 0 ? STORE_DONE : STORE_FAILED;
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
                           StoreOutcome o, const char *reason, int error) {
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
                                     s->id, inventory_session_project(s), path ? path : "?",
                                     reason ? reason : "", error ? ": " : "",
                                     error ? log_errno_to_string(error) : "");
        else
                msg = util_strprintf("%s session %s in %s (%s)", verb, s->id,
                                     inventory_session_project(s), why ?: "");

        JournalEntry e = {
                .event = ev,
                .message = msg,
                .session = s->id,
                .project = inventory_session_project(s),
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
