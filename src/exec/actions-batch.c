/* actions-batch.c: the group commit (ActionsBatch, actions-int.h): a batch's directories and its
 * steps in order (actions_batch_commit()): the liveness re-check, the usage lines (one write,
 * fsync, read-back), the pending-delete markers (one file), the rows of the files Qwen shares,
 * and last the deletes' other files and the batch's marker. The moves, transcript unlinks and
 * compression of a batch are actions-move.c; the order and why: the top of actions.c. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive.h"
#include "cold.h"
#include "fsutil.h"
#include "journal.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "recover.h"
#include "session-times.h"
#include "syncq.h"
#include "testseam.h"
#include "usageidx.h"
#include "util.h"

#include "actions-int.h"

/* ------------------------------------------------------------------ the group commit */

uint64_t actions_now_ns(void) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sessions per batch: ACTIONS_BATCH_MAX, or the tests' cap (testseam.h; never the environment). */
unsigned actions_batch_max(void) {
        unsigned n = test_seam_batch_sessions();

        return n >= 1 && n <= ACTIONS_BATCH_MAX ? n : ACTIONS_BATCH_MAX;
}

/* Does batch b hold as many sessions as it may? max (actions_batch_max()), or, when the tests'
 * cap is not below the executor's, ACTIONS_BATCH_MAX_ARCHIVES while it holds only archives or
 * while the last batch's shared-file edits took ACTIONS_BATCH_EDIT_MSEC or more (never when
 * b->untimed: its size does not depend on the clock either). */
bool actions_batch_full(const ActionsBatch *b) {
        if (b->max < ACTIONS_BATCH_MAX ||
            (b->n_not_archive > 0 &&
             (b->untimed || b->edit_ns < ACTIONS_BATCH_EDIT_MSEC * 1000000ULL)))
                return b->n >= b->max;
        return b->n >= ACTIONS_BATCH_MAX_ARCHIVES;
}

/* The transcript of item i: its directory fd and name. */
int actions_batch_dir_fd(const ActionsBatch *b, const ActionsBatchItem *it) {
        const ActionsBatchDir *d = &b->dirs[it->dir];

        if (session_is_cold(it->s))
                return d->cold_fd;
        return it->s->state == SESSION_ARCHIVED ? d->archive_fd : d->chats_fd;
}

const FileId *actions_fid(const Session *s) {
        return s->state == SESSION_ARCHIVED ? &s->archived : &s->active;
}

/* The transcript's name: <id>.jsonl, or <id>.jsonl.zst in the cold tier. */
char *actions_tname(const Session *s) {
        return strprintf("%s.jsonl%s", s->id, session_is_cold(s) ? COLD_SUFFIX : "");
}

/* Report item it once. */
void actions_batch_report(ActionsContext *c, ActionsBatchItem *it, ActionsOutcome o,
                          const char *why, int error) {
        if (it->done)
                return;
        it->done = true;
        (void)actions_report_session(c, it->s, it->v, o, why, error);
}

/* Report the step of it that returned r < 0 with why, as o (actions_outcome_errno(r), or what
 * the step knows, a conflict): a skip carries no errno, and a file that changed since the scan
 * is reported as that, whichever check of the step found it. */
void actions_batch_fail(ActionsContext *c, ActionsBatchItem *it, ActionsOutcome o, int r,
                        const char *why) {
        if (o == ACTIONS_SKIPPED_CHANGED)
                why = "changed since scan";
        actions_batch_report(c, it, o, why, o == ACTIONS_FAILED ? -r : 0);
}

/* 0: the liveness re-check of every session of the batch, just before its first step, with the
 * registry, locks and each directory's runtime claims read once for the batch. */
static void actions_batch_live(ActionsContext *c, ActionsBatch *b) {
        LiveProbe *fresh = c->trees[b->tree].probe; /* the tree's, refreshed by what changed */
        ClaimSet *claims = calloc(b->n_dirs ? b->n_dirs : 1, sizeof(ClaimSet));
        int *loaded = calloc(b->n_dirs ? b->n_dirs : 1, sizeof(int));
        int r;

        r = !claims || !loaded ? -ENOMEM : fresh ? live_probe_refresh(fresh) : -EIO;
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                Session copy;
                int k;

                if (it->done)
                        continue;
                if (r < 0) {
                        actions_batch_report(c, it, ACTIONS_SKIPPED_LIVE,
                                             "liveness cannot be checked", 0);
                        continue;
                }
                if (loaded[it->dir] == 0) {
                        k = claims_load(&claims[it->dir], b->dirs[it->dir].chats_fd);
                        claims_sort(&claims[it->dir]);
                        loaded[it->dir] = k == -ENOMEM ? -ENOMEM : k < 0 ? -EIO : 1;
                }
                copy = *it->s;
                copy.live = 0;
                copy.live_reason = NULL;
                if (loaded[it->dir] == -EIO) {
                        actions_batch_report(c, it, ACTIONS_SKIPPED_LIVE,
                                             "in use since scan: runtime claims unreadable", 0);
                        continue;
                }
                k = loaded[it->dir] == -ENOMEM ? -ENOMEM
                                                : live_check_claims(fresh, &copy, &claims[it->dir]);
                /* LIVE_RECENT came from the scan's clock; identity covers later writes */
                if (k < 0)
                        actions_batch_report(c, it, ACTIONS_SKIPPED_LIVE,
                                             "liveness cannot be checked", 0);
                else if ((copy.live & ~(unsigned)LIVE_RECENT) != 0) {
                        _cleanup_free_ char *m = strprintf("in use since scan: %s",
                                                           copy.live_reason ?: "in use");
                        actions_batch_report(c, it, ACTIONS_SKIPPED_LIVE,
                                             m ?: "in use since scan", 0);
                }
                free(copy.live_reason);
        }
        for (size_t j = 0; claims && j < b->n_dirs; j++)
                claims_done(&claims[j]);
        free(claims);
        free(loaded);
}

static void actions_batch_salvaged(ActionsContext *c, ActionsBatch *b, int r, size_t n);
static void actions_batch_journal_release(void);

/* Does item it rely on a usage line the batch does not write: one already in the file (or none
 * needed at all: no telemetry; the two are not told apart here)? */
static bool actions_batch_relies_on_file(const ActionsBatchItem *it) {
        return !it->done && !it->line && it->dep < 0;
}

/* 0a: a line already in usage_record.jsonl may be Qwen's, and Qwen does not fsync it: before the
 * transcript of a session that relies on one goes, an fsync of the file in this run must have
 * made durable every byte the index read (usageidx.h: once per tree and run, as the batches'
 * own appends keep it so; again only when Qwen appended meanwhile). In a batch of archives it
 * starts here, on the batch's SyncQ, so that it overlaps the liveness check and the append;
 * elsewhere the batch's own append (its fsync covers the whole file) mostly makes it needless,
 * and actions_batch_usage_sync_end() does what is left. */
static void actions_batch_usage_sync(ActionsContext *c, ActionsBatch *b) {
        const ActionsTree *t = &c->trees[b->tree];
        bool any = false;
        int r;

        b->usync_err = 0;
        for (size_t i = 0; !any && i < b->n; i++)
                any = actions_batch_relies_on_file(&b->items[i]);
        if (!any || b->n_not_archive > 0)
                return;
        r = usage_index_sync_open(t->usage, t->global_fd, &b->usync);
        if (r <= 0) {
                b->usync_err = r;
                return;
        }
        if (!b->syncq)
                (void)syncq_new(&b->syncq); /* without it, the fsync is done at the end */
        b->usync_pending = true;
        if (b->syncq)
                syncq_push(b->syncq, b->usync.fd, &b->usync_err);
}

/* Before any transcript of the batch goes: actions_batch_usage_sync()'s fsync is done (waited
 * for, or done here); when it (or the open) failed, every session that relies on a line in the
 * file is kept. */
void actions_batch_usage_sync_end(ActionsContext *c, ActionsBatch *b) {
        const ActionsTree *t = &c->trees[b->tree];
        bool any = false;
        int r = b->usync_err;

        for (size_t i = 0; !any && i < b->n; i++)
                any = actions_batch_relies_on_file(&b->items[i]);
        if (b->usync_pending) {
                b->usync_pending = false;
                if (b->syncq)
                        syncq_wait_one(b->syncq, &b->usync_err);
                else
                        b->usync_err = fs_fsync(b->usync.fd);
                r = b->usync_err;
                usage_index_sync_end(t->usage, &b->usync, r);
        } else if (r == 0 && any) {
                r = usage_index_sync_open(t->usage, t->global_fd, &b->usync);
                if (r > 0) {
                        r = fs_fsync(b->usync.fd);
                        usage_index_sync_end(t->usage, &b->usync, r);
                }
        }
        b->usync_err = 0;
        if (r >= 0)
                return;
        for (size_t i = 0; i < b->n; i++)
                if (actions_batch_relies_on_file(&b->items[i]))
                        actions_batch_report(c, &b->items[i], ACTIONS_FAILED,
                                             "cannot make the usage record durable; session kept",
                                             -r);
}

/* Can the usage fsync of b overlap its moves (actions_batch_salvage())? Only in a batch of
 * archives: a delete's marker and shared-file edits, and a compression, keep the order of old. */
static bool actions_batch_may_overlap(const ActionsBatch *b) {
        if (!b->syncq)
                return false;
        for (size_t i = 0; i < b->n; i++)
                if (!b->items[i].done && b->items[i].v->verb != VERB_ARCHIVE)
                        return false;
        return true;
}

/* 1: the usage lines of the batch, one write, one fsync, read back; a session whose transcript
 * changed since its line was built is skipped (before the append). In a batch of archives the
 * fsync runs on the batch's SyncQ while the moves of the sessions that need no line of this
 * batch go on (actions-move.c), and actions_batch_salvage_end() waits for it before any other
 * move; elsewhere it is waited for here. */
static void actions_batch_salvage(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, n = 0;
        int r;

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                _cleanup_free_ char *name = NULL;

                if (!it->line || it->done)
                        continue;
                name = actions_tname(it->s);
                r = name ? fs_check_identity(actions_batch_dir_fd(b, it), name,
                                             actions_fid(it->s))
                         : -ENOMEM;
                if (r == 0)
                        actions_batch_report(c, it, ACTIONS_SKIPPED_CHANGED, "changed since scan",
                                             0);
                else if (r < 0)
                        actions_batch_report(c, it, ACTIONS_FAILED,
                                             "cannot salvage the usage record; session kept", -r);
                else {
                        char *nb = realloc(buf, len + strlen(it->line) + 1);
                        if (!nb) {
                                actions_batch_report(c, it, ACTIONS_FAILED, "out of memory",
                                                     ENOMEM);
                                continue;
                        }
                        buf = nb;
                        memcpy(buf + len, it->line, strlen(it->line) + 1);
                        len += strlen(it->line);
                        n++;
                }
        }
        if (n > 0 && !b->syncq)
                (void)syncq_new(&b->syncq); /* without it, the fsync is waited for here */
        if (n > 0 && actions_batch_may_overlap(b)) {
                r = usage_append_begin(t->global_fd, buf, len, &b->usage);
                if (r >= 0) {
                        b->usage_buf = TAKE_PTR(buf);
                        b->usage_pending = true;
                        syncq_push(b->syncq, b->usage.fd, &b->usage_sync_err);
                        return;
                }
        } else if (n > 0) {
                UsageAppend a;

                r = usage_append_begin(t->global_fd, buf, len, &a);
                if (r >= 0)
                        r = usage_append_end(&a, fs_fsync(a.fd));
                if (r >= 0)
                        usage_index_appended(t->usage, &a);
        } else
                r = 0;
        actions_batch_salvaged(c, b, r, n);
}

/* The lines of a batch whose usage fsync overlaps its first moves: wait for it, read them back,
 * and report. Nothing when the batch has no such lines. */
void actions_batch_salvage_end(ActionsContext *c, ActionsBatch *b) {
        int r;

        if (!b->usage_pending)
                return;
        b->usage_pending = false;
        syncq_wait_one(b->syncq, &b->usage_sync_err);
        r = usage_append_end(&b->usage, b->usage_sync_err);
        if (r >= 0)
                usage_index_appended(c->trees[b->tree].usage, &b->usage);
        free(b->usage_buf);
        b->usage_buf = NULL;
        actions_batch_salvaged(c, b, r, 1);
}

/* What the append of n > 0 lines returned, r: each line's session is salvaged (and journalled
 * as such) or reported failed; a session that shares a line that was not written is kept. */
static void actions_batch_salvaged(ActionsContext *c, ActionsBatch *b, int r, size_t n) {
        if (r >= 0 && n > 0)
                actions_step(c, "usage_record.jsonl");
        journal_hold(); /* the entries of what just happened, with one write */
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];

                if (!it->line || it->done)
                        continue;
                if (r < 0) {
                        actions_batch_report(c, it, ACTIONS_FAILED,
                                             "cannot salvage the usage record; session kept", -r);
                        continue;
                }
                c->stats->n_salvaged++;
                it->appended = true;
                _cleanup_free_ char *msg = strprintf("salvaged the usage record of session %s "
                                                     "before its transcript goes",
                                                     it->s->id);
                JournalEntry e = {
                        .event = JOURNAL_SALVAGED,
                        .message = msg ?: "salvaged the usage record before the transcript goes",
                        .session = it->s->id,
                        .project = actions_project(it->s),
                        .user = c->inv->trees[it->s->tree].user,
                };
                (void)journal_log(&e);
        }
        /* a session that shares another's line goes only when that line was written */
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];

                if (it->done || it->line || it->dep < 0 || b->items[it->dep].appended)
                        continue;
                actions_batch_report(c, it, ACTIONS_SKIPPED_NOT_NOW,
                                     "the usage line it shares with another file was not written; "
                                     "session kept",
                                     0);
        }
        actions_batch_journal_release();
}

/* journal_release(), and say when the held entries could not be written. */
static void actions_batch_journal_release(void) {
        if (journal_release() < 0)
                log_warning("cannot write the action log entries of a batch");
}

/* Point the context at the runtime claim names of d's chats/, listing it on first use (on
 * failure the context says "not listed", and the callers list the directory themselves). */
static void actions_batch_claims(ActionsContext *c, ActionsBatchDir *d) {
        _cleanup_free_ FsDir *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *name;
        unsigned char type;
        int k;

        c->claim_names = NULL;
        c->n_claim_names = 0;
        if (!d->claims_listed) {
                dir = malloc(sizeof(FsDir));
                fd = dir ? fs_open_dir(d->chats_fd, ".") : -ENOMEM;
                if (fd < 0)
                        return;
                fs_dir_init(dir, fd);
                while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                        char **n;

                        if (!claims_is_claim_name(name))
                                continue;
                        n = realloc(d->claims, (d->n_claims + 1) * sizeof(char *));
                        if (n)
                                d->claims = n;
                        if (!n || !(d->claims[d->n_claims] = strdup(name))) {
                                k = -ENOMEM;
                                break;
                        }
                        d->n_claims++;
                }
                if (k < 0) {
                        for (size_t i = 0; i < d->n_claims; i++)
                                free(d->claims[i]);
                        free(d->claims);
                        d->claims = NULL;
                        d->n_claims = 0;
                        return;
                }
                d->claims_listed = true;
        }
        static char *none[1];
        /* never NULL once listed, even with no claims */
        c->claim_names = d->claims ? d->claims : none;
        c->n_claim_names = d->n_claims;
}

/* 2: the pending-delete markers of the batch's deletes, written with one flush. */
static void actions_batch_mark(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        _cleanup_free_ RecoverMarker **m = calloc(b->n ? b->n : 1, sizeof(*m));
        _cleanup_free_ size_t *idx = calloc(b->n ? b->n : 1, sizeof(size_t));
        size_t n = 0;
        int r;

        if (!m || !idx) {
                for (size_t i = 0; i < b->n; i++)
                        if (b->items[i].v->verb == VERB_DELETE)
                                actions_batch_report(c, &b->items[i], ACTIONS_FAILED,
                                                     "out of memory", ENOMEM);
                return;
        }
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = NULL;

                if (it->done || it->v->verb != VERB_DELETE)
                        continue;
                name = actions_tname(it->s);
                if (!name) {
                        actions_batch_report(c, it, ACTIONS_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                r = fs_check_identity(actions_batch_dir_fd(b, it), name, actions_fid(it->s));
                if (r <= 0) {
                        actions_batch_fail(c, it, actions_outcome_errno(r < 0 ? r : -ESTALE), r,
                                           "changed since scan");
                        continue;
                }
                /* a copy in the other place since the scan (a TUI recreating chats/<id>.jsonl by
                 * path, a restore) is a conflict, and the id's sidecars and file-history are in
                 * use again */
                if (session_is_cold(it->s)) {
                        /* compressed: a copy in chats/ or chats/archive/ is one */
                        _cleanup_free_ char *plain = strprintf("%s.jsonl", it->s->id);
                        r = plain ? actions_copy_exists(d->chats_fd, d->archive_fd, plain, false)
                                  : -ENOMEM;
                        if (r == 0)
                                r = actions_copy_exists(d->chats_fd, d->archive_fd, plain, true);
                } else
                        r = actions_copy_exists(d->chats_fd, d->archive_fd, name,
                                                it->s->state != SESSION_ARCHIVED);
                if (r != 0) {
                        actions_batch_fail(c, it,
                                           r > 0 ? ACTIONS_SKIPPED_CONFLICT
                                                 : actions_outcome_errno(r),
                                           r, "a copy in the other place appeared since the scan "
                                              "(conflict)");
                        continue;
                }
                actions_batch_claims(c, d);
                r = actions_mark_delete(c, t, it->s, d->chats_fd, d->archive_fd, &it->mk);
                c->claim_names = NULL;
                if (r < 0) {
                        actions_batch_report(c, it, ACTIONS_FAILED,
                                             "cannot write the pending-delete marker", -r);
                        continue;
                }
                m[n] = &it->mk;
                idx[n++] = i;
        }
        if (n == 0)
                return;
        /* the proof for the recovery pass, should the run die before the deletes complete */
        r = recover_markers_write(t->global_fd, t->global_dev, m, n, actions_step, c,
                                  &b->marker);
        for (size_t j = 0; j < n; j++) {
                ActionsBatchItem *it = &b->items[idx[j]];

                if (r < 0)
                        actions_batch_report(c, it, ACTIONS_FAILED,
                                             "cannot write the pending-delete marker", -r);
                else
                        it->marked = true;
        }
}

/* 2b: what Qwen's own delete paths remove from the files it shares (erase.h), for every delete of
 * the batch whose marker is written: when it cannot be done now, nothing of that session goes
 * (it is skipped with the reason; a later run retries the whole delete). */
static void actions_batch_erase(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        actions_erase_batch(c, b, t); /* each shared file edited once for the batch */
}

/* 5: what else of each deleted session is its alone; then the batch's marker goes when every
 * delete it covers is complete or never began (else the next run's recovery pass finishes
 * them), and every outcome is reported. */
static void actions_batch_finish(ActionsContext *c, ActionsBatch *b, const ActionsTree *t) {
        bool keep_marker = false;
        int r;

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = strprintf("%s.jsonl", it->s->id);

                if (it->v->verb != VERB_DELETE || !it->marked || !it->removed)
                        continue; /* never began: nothing for the marker to finish */
                if (it->done) {
                        keep_marker = true; /* the next run's recovery pass retries */
                        continue;
                }
                /* the same race just after the unlink: what is left belongs to the new copy */
                r = name ? actions_copy_exists(d->chats_fd, d->archive_fd, name, false) : -ENOMEM;
                if (r == 0)
                        r = actions_copy_exists(d->chats_fd, d->archive_fd, name, true);
                if (r != 0) {
                        log_warning("session %s: a transcript appeared as it was deleted; its "
                                    "sidecars and file-history are kept",
                                    it->s->id);
                        if (r < 0) {
                                keep_marker = true;
                                actions_batch_report(c, it, ACTIONS_FAILED,
                                                     "transcript removed, but whether a copy "
                                                     "appeared is unknown",
                                                     -r);
                        }
                        continue;
                }
                actions_batch_claims(c, d);
                r = actions_delete_rest(c, t, it->s, d->chats_fd, d->archive_fd);
                c->claim_names = NULL;
                if (r < 0) {
                        keep_marker = true; /* the next run's recovery pass retries */
                        actions_batch_report(
                                c, it, ACTIONS_FAILED,
                                r == -EBUSY ? "transcript removed; kept: a mount point inside"
                                            : "transcript removed, but not everything else",
                                -r);
                }
        }
        if (b->marker && !keep_marker) {
                r = recover_marker_remove(t->global_fd, t->global_dev, b->marker, actions_step, c);
                if (r < 0)
                        log_warning_errno(r, "cannot remove the pending-delete marker '%s'",
                                          b->marker);
        }
        /* when each archive of the batch happened (session-times.h: archive-max-age counts from
         * it), with one write and one fsync, once the moves are durable */
        _cleanup_(strbuf_done) StrBuf times = {};
        msec_t now = now_msec();
        r = 0;
        for (size_t i = 0; r >= 0 && i < b->n; i++)
                if (b->items[i].v->verb == VERB_ARCHIVE && !b->items[i].done)
                        r = session_times_line(&times, SESSION_TIME_ARCHIVED, now,
                                               b->items[i].s->id);
        if (r >= 0)
                r = session_times_append(t->global_fd, t->global_dev, times.buf, times.len,
                                         actions_step, c);
        if (r < 0)
                log_warning_errno(r, "cannot record the time of this batch's archives in '%s/%s' "
                                     "(archive-max-age counts from the archived files' ctime)",
                                  c->inv->trees[b->tree].global_dir, SESSION_TIMES_FILE);
        journal_hold(); /* every outcome of the batch, with one write */
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];

                if (it->v->verb == VERB_COMPRESS && !it->done) {
                        actions_batch_compressed(c, it);
                        continue;
                }
                actions_batch_report(c, it, ACTIONS_DONE, NULL, 0);
        }
        actions_batch_journal_release();
}

/* Run the batch's steps in order, then empty it. */
void actions_batch_commit(ActionsContext *c) {
        ActionsBatch *b = c->batch;

        uint64_t t0, te, t1, t2, t3;

        /* the next batch's lookups look at usage_record.jsonl again */
        for (size_t i = 0; c->trees && i < c->inv->n_trees; i++)
                usage_index_release(c->trees[i].usage);
        if (!b || b->n == 0)
                return;
        t0 = actions_now_ns();
        actions_batch_usage_sync(c, b);
        actions_batch_live(c, b);
        actions_batch_salvage(c, b, &c->trees[b->tree]);
        if (b->n_not_archive > 0) /* before a delete's marker and shared-file edits */
                actions_batch_usage_sync_end(c, b);
        actions_batch_mark(c, b, &c->trees[b->tree]);
        te = actions_now_ns();
        actions_batch_erase(c, b, &c->trees[b->tree]);
        actions_lists_drop(c); /* the rest of the deletes lists afresh (actions-erase.c) */
        t1 = actions_now_ns();
        b->edit_ns = t1 - te;
        actions_batch_move(c, b);
        actions_batch_salvage_end(c, b); /* waited for by the moves already */
        t2 = actions_now_ns();
        actions_batch_finish(c, b, &c->trees[b->tree]);
        actions_lists_drop(c);
        t3 = actions_now_ns();
        /* the next batch prepares for at least 4 times what this one's flushes took, so that
         * they stay a small part of the run however slow the disk is */
        b->flush_ns = t1 - t0;
        b->window_ns = MIN(MAX(4 * (t1 - t0), ACTIONS_BATCH_MSEC * 1000000ULL),
                           ACTIONS_BATCH_MSEC_MAX * 1000000ULL);
        log_debug("batch of %zu sessions: prepared in %.1f ms, usage+markers %.1f ms, moves %.1f "
                  "ms, rest %.1f ms",
                  b->n, (double)(t0 - b->started_ns) / 1e6, (double)(t1 - t0) / 1e6,
                  (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6);

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                free(it->line);
                free(it->sid);
                recover_marker_done(&it->mk);
                if (it->cold)
                        cold_step_done(it->cold);
                free(it->cold);
        }
        for (size_t j = 0; j < b->n_dirs; j++) {
                safe_close(b->dirs[j].chats_fd);
                safe_close(b->dirs[j].archive_fd);
                safe_close(b->dirs[j].cold_fd);
                for (size_t i = 0; i < b->dirs[j].n_claims; i++)
                        free(b->dirs[j].claims[i]);
                free(b->dirs[j].claims);
                for (size_t i = 0; i < b->dirs[j].n_sidecar_ids; i++)
                        free(b->dirs[j].sidecar_ids[i]);
                free(b->dirs[j].sidecar_ids);
        }
        for (size_t j = 0; j < b->n_paths; j++) {
                safe_close(b->paths[j].fd);
                free(b->paths[j].rel);
        }
        free(b->marker);
        b->marker = NULL;
        b->n = b->n_dirs = b->n_paths = b->n_not_archive = 0;
}

/* fs_open_path(root_fd, rel, dev), opened once per batch (the batch's deletes look into the same
 * few directories for every session): the batch's fd (*ret_owned false), or when the batch holds
 * too many, the caller's (*ret_owned true); or -errno, also once per batch. */
int actions_batch_path(ActionsContext *c, int root_fd, const char *rel, dev_t dev,
                       bool *ret_owned) {
        ActionsBatch *b = c->batch;
        char *copy;

        *ret_owned = false;
        for (size_t j = 0; b && j < b->n_paths; j++)
                if (b->paths[j].root_fd == root_fd && streq(b->paths[j].rel, rel))
                        return b->paths[j].fd;
        if (!b || b->n_paths == ELEMENTSOF(b->paths) || !(copy = strdup(rel))) {
                *ret_owned = true;
                return fs_open_path(root_fd, rel, dev);
        }
        b->paths[b->n_paths].root_fd = root_fd;
        b->paths[b->n_paths].rel = copy;
        b->paths[b->n_paths].fd = fs_open_path(root_fd, rel, dev);
        return b->paths[b->n_paths++].fd;
}

/* The batch's directory entry for s's chats/, opened on first use. Index, or -errno (*ret_why). */
int actions_batch_dir(ActionsContext *c, const ActionsTree *t, const Session *s,
                      const char **ret_why) {
        ActionsBatch *b = c->batch;
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_free_ char *rel = NULL;
        _cleanup_close_ int chats_fd = -EBADF;
        int archive_fd;

        for (size_t j = b->n_dirs; j > 0; j--)
                if (streq(b->dirs[j - 1].project_dir, s->project_dir))
                        return (int)(j - 1);
        if (b->n_dirs == ACTIONS_BATCH_DIRS)
                actions_batch_commit(c);
        rel = strprintf("projects/%s/chats", s->project_dir);
        if (!rel) {
                *ret_why = "out of memory";
                return -ENOMEM;
        }
        chats_fd = fs_open_path(t->runtime_fd, rel, tr->dev);
        if (chats_fd < 0) {
                *ret_why = "changed since scan (chats/ cannot be opened)";
                return -ESTALE;
        }
        archive_fd = fs_open_dir(chats_fd, "archive");
        if (archive_fd < 0 && archive_fd != -ENOENT) {
                *ret_why = "cannot open chats/archive/";
                return archive_fd;
        }
        b->dirs[b->n_dirs] = (ActionsBatchDir){
                .project_dir = s->project_dir,
                .chats_fd = TAKE_FD(chats_fd),
                .archive_fd = archive_fd,
                .cold_fd = -EBADF,
        };
        return (int)b->n_dirs++;
}
