/* qwen-commit.c: Qwen's group commit (QwenBatch, qwen-batch.h): a batch's directories and its
 * steps in order (qwen_commit_batch()): the liveness re-check, the usage lines (one write,
 * fsync, read-back), the pending-delete markers (one file), the rows of the files Qwen shares
 * (qwen-steps.c), the archive moves, compressions (cold-step.h) and transcript unlinks with one
 * fsync per touched directory, and last the deletes' other files and the batch's marker. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "cold.h"
#include "cold-step.h"
#include "fs.h"
#include "journal.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "reason.h"
#include "recover-marker.h"
#include "session-times.h"
#include "syncq.h"
#include "usage-index.h"
#include "util.h"

#include "qwen-batch.h"
#include "qwen-commit.h"
#include "qwen-steps.h"

/* ------------------------------------------------------------------ the group commit */

uint64_t qwen_commit_now_ns(void) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Does batch b hold as many sessions as it may? QWEN_BATCH_MAX_ARCHIVES while it holds only
 * archives or while the last batch's shared-file edits took QWEN_BATCH_EDIT_MSEC or more,
 * else QWEN_BATCH_MAX. */
bool qwen_commit_full(const QwenBatch *b) {
        if (b->n_not_archive > 0 && b->edit_ns < QWEN_BATCH_EDIT_MSEC * 1000000ULL)
                return b->n >= QWEN_BATCH_MAX;
        return b->n >= QWEN_BATCH_MAX_ARCHIVES;
}

/* The transcript of item i: its directory fd and name. */
static int qwen_commit_dir_fd(const QwenBatch *b, const QwenBatchItem *it) {
        const QwenBatchDir *d = &b->dirs[it->dir];

        if (inventory_session_is_cold(it->s))
                return d->cold_fd;
        return it->s->state == SESSION_ARCHIVED ? d->archive_fd : d->chats_fd;
}

/* 0: the liveness re-check of every session of the batch, just before its first step, with the
 * registry, locks and each directory's runtime claims read once for the batch. */
static void qwen_commit_live(QwenAll *c, QwenBatch *b) {
        LiveProbe *fresh = c->runs[b->tree]->probe; /* the tree's, refreshed by what changed */
        ClaimSet *claims = calloc(b->n_dirs ? b->n_dirs : 1, sizeof(ClaimSet));
        int *loaded = calloc(b->n_dirs ? b->n_dirs : 1, sizeof(int));
        int r;

        r = !claims || !loaded ? -ENOMEM : fresh ? live_probe_refresh(fresh) : -EIO;
        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                Session copy;
                int k;

                if (it->done)
                        continue;
                if (r < 0) {
                        qwen_batch_report(c, it, STORE_SKIPPED_LIVE,
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
                        qwen_batch_report(c, it, STORE_SKIPPED_LIVE,
                                             "in use since scan: runtime claims unreadable", 0);
                        continue;
                }
                k = loaded[it->dir] == -ENOMEM ? -ENOMEM
                                                : live_check_claims(fresh, &copy, &claims[it->dir]);
                /* LIVE_RECENT came from the scan's clock; identity covers later writes */
                if (k < 0)
                        qwen_batch_report(c, it, STORE_SKIPPED_LIVE,
                                             "liveness cannot be checked", 0);
                else if ((copy.live & ~(unsigned)LIVE_RECENT) != 0) {
                        _cleanup_free_ char *m = util_strprintf("in use since scan: %s",
                                                                copy.live_reason ?: "in use");
                        qwen_batch_report(c, it, STORE_SKIPPED_LIVE,
                                             m ?: "in use since scan", 0);
                }
                free(copy.live_reason);
        }
        for (size_t j = 0; claims && j < b->n_dirs; j++)
                claims_done(&claims[j]);
        free(claims);
        free(loaded);
}

static void qwen_commit_salvaged(QwenAll *c, QwenBatch *b, int r, size_t n);
static void qwen_commit_journal_release(void);

/* Does item it rely on a usage line the batch does not write: one already in the file (or none
 * needed at all: no telemetry; the two are not told apart here)? */
static bool qwen_commit_relies_on_file(const QwenBatchItem *it) {
        return !it->done && !it->line && it->dep < 0;
}

/* 0a: a line already in usage_record.jsonl may be Qwen's, and Qwen does not fsync it: before the
 * transcript of a session that relies on one goes, an fsync of the file in this run must have
 * made durable every byte the index read (usageidx.h: once per tree and run, as the batches'
 * own appends keep it so; again only when Qwen appended meanwhile). In a batch of archives it
 * starts here, on the batch's SyncQ, so that it overlaps the liveness check and the append;
 * elsewhere the batch's own append (its fsync covers the whole file) mostly makes it needless,
 * and qwen_commit_usage_sync_end() does what is left. */
static void qwen_commit_usage_sync(QwenAll *c, QwenBatch *b) {
        const QwenRun *t = c->runs[b->tree];
        bool any = false;
        int r;

        b->usync_err = 0;
        for (size_t i = 0; !any && i < b->n; i++)
                any = qwen_commit_relies_on_file(&b->items[i]);
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

/* Before any transcript of the batch goes: qwen_commit_usage_sync()'s fsync is done (waited
 * for, or done here); when it (or the open) failed, every session that relies on a line in the
 * file is kept. */
static void qwen_commit_usage_sync_end(QwenAll *c, QwenBatch *b) {
        const QwenRun *t = c->runs[b->tree];
        bool any = false;
        int r = b->usync_err;

        for (size_t i = 0; !any && i < b->n; i++)
                any = qwen_commit_relies_on_file(&b->items[i]);
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
                if (qwen_commit_relies_on_file(&b->items[i]))
                        qwen_batch_report(c, &b->items[i], STORE_FAILED,
                                             "cannot make the usage record durable; session kept",
                                             -r);
}

/* Can the usage fsync of b overlap its moves (qwen_commit_salvage())? Only in a batch of
 * archives: a delete's marker and shared-file edits, and a compression, keep the order of old. */
static bool qwen_commit_may_overlap(const QwenBatch *b) {
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
 * batch go on, and qwen_commit_salvage_end() waits for it before any other
 * move; elsewhere it is waited for here. */
static void qwen_commit_salvage(QwenAll *c, QwenBatch *b, const QwenRun *t) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, n = 0;
        int r;

        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                _cleanup_free_ char *name = NULL;

                if (!it->line || it->done)
                        continue;
                name = qwen_batch_tname(it->s);
                r = name ? fs_check_identity(qwen_commit_dir_fd(b, it), name,
                                             qwen_batch_fid(it->s))
                         : -ENOMEM;
                if (r == 0)
                        qwen_batch_report(c, it, STORE_SKIPPED_CHANGED, "changed since scan",
                                             0);
                else if (r < 0)
                        qwen_batch_report(c, it, STORE_FAILED,
                                             "cannot salvage the usage record; session kept", -r);
                else {
                        char *nb = realloc(buf, len + strlen(it->line) + 1);
                        if (!nb) {
                                qwen_batch_report(c, it, STORE_FAILED, "out of memory",
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
        if (n > 0 && qwen_commit_may_overlap(b)) {
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
        qwen_commit_salvaged(c, b, r, n);
}

/* The lines of a batch whose usage fsync overlaps its first moves: wait for it, read them back,
 * and report. Nothing when the batch has no such lines. */
static void qwen_commit_salvage_end(QwenAll *c, QwenBatch *b) {
        int r;

        if (!b->usage_pending)
                return;
        b->usage_pending = false;
        syncq_wait_one(b->syncq, &b->usage_sync_err);
        r = usage_append_end(&b->usage, b->usage_sync_err);
        if (r >= 0)
                usage_index_appended(c->runs[b->tree]->usage, &b->usage);
        free(b->usage_buf);
        b->usage_buf = NULL;
        qwen_commit_salvaged(c, b, r, 1);
}

/* What the append of n > 0 lines returned, r: each line's session is salvaged (and journalled
 * as such) or reported failed; a session that shares a line that was not written is kept. */
static void qwen_commit_salvaged(QwenAll *c, QwenBatch *b, int r, size_t n) {
        if (r >= 0 && n > 0)
                qwen_batch_step(c, "usage_record.jsonl");
        journal_hold(); /* the entries of what just happened, with one write */
        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];

                if (!it->line || it->done)
                        continue;
                if (r < 0) {
                        qwen_batch_report(c, it, STORE_FAILED,
                                             "cannot salvage the usage record; session kept", -r);
                        continue;
                }
                c->env.counts->n_salvaged++;
                it->appended = true;
                _cleanup_free_ char *msg = util_strprintf("salvaged the usage record of session %s "
                                                          "before its transcript goes",
                                                          it->s->id);
                JournalEntry e = {
                        .event = JOURNAL_SALVAGED,
                        .message = msg ?: "salvaged the usage record before the transcript goes",
                        .session = it->s->id,
                        .project = inventory_session_project(it->s),
                        .user = c->inv->trees[it->s->tree].user,
                };
                (void)journal_log(&e);
        }
        /* a session that shares another's line goes only when that line was written */
        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];

                if (it->done || it->line || it->dep < 0 || b->items[it->dep].appended)
                        continue;
                qwen_batch_report(c, it, STORE_SKIPPED_NOT_NOW,
                                     "the usage line it shares with another file was not written; "
                                     "session kept",
                                     0);
        }
        qwen_commit_journal_release();
}

/* journal_release(), and say when the held entries could not be written. */
static void qwen_commit_journal_release(void) {
        if (journal_release() < 0)
                log_warning("cannot write the action log entries of a batch");
}

/* Point the context at the runtime claim names of d's chats/, listing it on first use (on
 * failure the context says "not listed", and the callers list the directory themselves). */
static void qwen_commit_claims(QwenAll *c, QwenBatchDir *d) {
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
static void qwen_commit_mark(QwenAll *c, QwenBatch *b, const QwenRun *t) {
        _cleanup_free_ RecoverMarker **m = calloc(b->n ? b->n : 1, sizeof(*m));
        _cleanup_free_ size_t *idx = calloc(b->n ? b->n : 1, sizeof(size_t));
        size_t n = 0;
        int r;

        if (!m || !idx) {
                for (size_t i = 0; i < b->n; i++)
                        if (b->items[i].v->verb == VERB_DELETE)
                                qwen_batch_report(c, &b->items[i], STORE_FAILED,
                                                     "out of memory", ENOMEM);
                return;
        }
        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                QwenBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = NULL;

                if (it->done || it->v->verb != VERB_DELETE)
                        continue;
                name = qwen_batch_tname(it->s);
                if (!name) {
                        qwen_batch_report(c, it, STORE_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                r = fs_check_identity(qwen_commit_dir_fd(b, it), name, qwen_batch_fid(it->s));
                if (r <= 0) {
                        qwen_batch_report_fail(c, it, qwen_batch_errno(r < 0 ? r : -ESTALE), r,
                                           "changed since scan");
                        continue;
                }
                /* a copy in the other place since the scan (a TUI recreating chats/<id>.jsonl by
                 * path, a restore) is a conflict, and the id's sidecars and file-history are in
                 * use again */
                if (inventory_session_is_cold(it->s)) {
                        /* compressed: a copy in chats/ or chats/archive/ is one */
                        _cleanup_free_ char *plain = util_strprintf("%s.jsonl", it->s->id);
                        r = plain ? qwen_steps_copy_exists(d->chats_fd, d->archive_fd, plain, false)
                                  : -ENOMEM;
                        if (r == 0)
                                r = qwen_steps_copy_exists(d->chats_fd, d->archive_fd, plain, true);
                } else
                        r = qwen_steps_copy_exists(d->chats_fd, d->archive_fd, name,
                                                it->s->state != SESSION_ARCHIVED);
                if (r != 0) {
                        qwen_batch_report_fail(c, it,
                                           r > 0 ? STORE_SKIPPED_CONFLICT
                                                 : qwen_batch_errno(r),
                                           r, "a copy in the other place appeared since the scan "
                                              "(conflict)");
                        continue;
                }
                qwen_commit_claims(c, d);
                r = qwen_steps_mark(c, t, it->s, d->chats_fd, d->archive_fd, &it->mk);
                c->claim_names = NULL;
                if (r < 0) {
                        qwen_batch_report(c, it, STORE_FAILED,
                                             "cannot write the pending-delete marker", -r);
                        continue;
                }
                m[n] = &it->mk;
                idx[n++] = i;
        }
        if (n == 0)
                return;
        /* the proof for the recovery pass, should the run die before the deletes complete */
        r = recover_marker_write_many(t->global_fd, t->global_dev, m, n, c->env.hook, c->env.userdata,
                                  &b->marker);
        for (size_t j = 0; j < n; j++) {
                QwenBatchItem *it = &b->items[idx[j]];

                if (r < 0)
                        qwen_batch_report(c, it, STORE_FAILED,
                                             "cannot write the pending-delete marker", -r);
                else
                        it->marked = true;
        }
}

/* 2b: what Qwen's own delete paths remove from the files it shares (erase.h), for every delete of
 * the batch whose marker is written: when it cannot be done now, nothing of that session goes
 * (it is skipped with the reason; a later run retries the whole delete). */
static void qwen_commit_erase(QwenAll *c, QwenBatch *b, const QwenRun *t) {
        qwen_steps_shared(c, b, t); /* each shared file edited once for the batch */
}

/* chats/archive/ of dir d, created when missing. */
static int qwen_commit_archive_dir(QwenAll *c, QwenBatchDir *d, const char **ret_why) {
        int r;

        if (d->archive_fd >= 0)
                return 0;
        r = fs_mkdirat(d->chats_fd, "archive", 0700);
        if (r < 0) {
                if (r != -EEXIST) {
                        *ret_why = "cannot create chats/archive/";
                        return r;
                }
        } else {
                qwen_batch_step(c, "archive/");
                d->sync_chats = true;
        }
        r = fs_open_dir(d->chats_fd, "archive");
        if (r < 0) {
                *ret_why = "cannot open chats/archive/";
                return r;
        }
        d->archive_fd = r;
        return 0;
}

static int qwen_commit_strcmpp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* List d's chats/ for the ids that have an archive sidecar there (archive.h), once, after the
 * batch's liveness check: a session without one is moved by archive_move_bare_nosync(), without
 * a lookup per sidecar. A sidecar written between the listing and the move (only a live session
 * writes one, and the batch just checked that none is live) stays in chats/ beside the archived
 * transcript, as one written just after the move would: Qwen's delete and qgc's remove
 * sidecars in both places. */
static void qwen_commit_sidecars(QwenBatchDir *d) {
        static const char *const exts[] = { ".worktree.json", ".pr.json", ".ledger.jsonl" };
        _cleanup_free_ FsDir *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *name;
        unsigned char type;
        int k;

        if (d->sidecars_listed != 0)
                return;
        dir = malloc(sizeof(FsDir));
        fd = dir ? fs_open_dir(d->chats_fd, ".") : -ENOMEM;
        if (fd < 0) {
                d->sidecars_listed = fd;
                return;
        }
        fs_dir_init(dir, fd);
        while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                size_t len = strlen(name);

                for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                        size_t el = strlen(exts[i]);
                        char **n;

                        if (len <= el || !streq(name + len - el, exts[i]))
                                continue;
                        n = realloc(d->sidecar_ids, (d->n_sidecar_ids + 1) * sizeof(char *));
                        if (n)
                                d->sidecar_ids = n;
                        if (!n || !(d->sidecar_ids[d->n_sidecar_ids] = strndup(name, len - el))) {
                                d->sidecars_listed = -ENOMEM;
                                return;
                        }
                        d->n_sidecar_ids++;
                        break;
                }
        }
        if (k < 0) {
                d->sidecars_listed = k;
                return;
        }
        if (d->n_sidecar_ids > 1)
                qsort(d->sidecar_ids, d->n_sidecar_ids, sizeof(char *), qwen_commit_strcmpp);
        d->sidecars_listed = 1;
}

/* Did the listing of d's chats/ see no sidecar of id? (false when it could not be listed) */
static bool qwen_commit_no_sidecars(const QwenBatchDir *d, const char *id) {
        if (d->sidecars_listed != 1)
                return false;
        return !d->sidecar_ids || !bsearch(&id, d->sidecar_ids, d->n_sidecar_ids, sizeof(char *),
                                           qwen_commit_strcmpp);
}

/* 3a: the compressions of the batch (cold-step.h, cold.h's COLD_BATCH): every file compressed
 * and verified under its temporary name, one syncfs(), each renamed into place, one fsync per
 * cold directory, then the originals go (chats/archive/ is fsynced with the other directories
 * in 4). */
static void qwen_commit_compress(QwenAll *c, QwenBatch *b) {
        _cleanup_(cold_ctx_freep) ColdCtx *ctx = NULL;
        int level = 0, sync_fd = -EBADF, r;

        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                QwenBatchDir *d = &b->dirs[it->dir];
                const char *why = "cannot create chats/archive/" COLD_DIR "/";
                int want = it->v->compress_level > 0 ? it->v->compress_level : COLD_LEVEL_DEFAULT;
                bool created = false;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                r = 0;
                if (d->cold_fd < 0) {
                        r = d->archive_fd < 0 ? -ESTALE
                                              : cold_step_open_dir(d->archive_fd, &created,
                                                                   c->env.hook, c->env.userdata);
                        if (r >= 0)
                                d->cold_fd = r;
                        /* the new directory is durable before anything is moved into it */
                        if (r >= 0 && created)
                                r = fs_fsync(d->archive_fd);
                }
                if (r >= 0 && (!ctx || level != want)) {
                        ctx = cold_ctx_free(ctx);
                        level = want;
                        why = "cannot set up zstd";
                        r = cold_ctx_new(level, COLD_DICT_CURRENT, &ctx);
                }
                if (r >= 0)
                        r = (it->cold = calloc(1, sizeof(ColdStep))) ? 0 : -ENOMEM;
                if (r >= 0)
                        r = cold_step_begin(ctx, d->archive_fd, d->cold_fd, it->s->id,
                                            &it->s->archived, c->env.hook, c->env.userdata, it->cold, &why);
                if (r < 0) {
                        qwen_batch_report_fail(c, it, qwen_batch_errno(r), r, why);
                        continue;
                }
                d->sync_cold = true;
                sync_fd = d->cold_fd;
        }
        if (sync_fd < 0)
                return;
        /* the temporary files' data, for the whole batch (one tree: one filesystem) */
        r = syncfs(sync_fd) < 0 ? -errno : 0;
        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                const char *why = NULL;
                int k;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                k = r < 0 ? r
                          : cold_step_commit(b->dirs[it->dir].cold_fd, it->cold, c->env.hook, c->env.userdata,
                                             &why);
                /* -EEXIST: a compressed copy appeared (cold-step.h) */
                if (k < 0)
                        qwen_batch_report_fail(c, it,
                                           k == -EEXIST && why ? STORE_SKIPPED_CONFLICT
                                                               : qwen_batch_errno(k),
                                           k, why ?: "cannot sync the compressed files");
        }
        for (size_t j = 0; j < b->n_dirs; j++) {
                QwenBatchDir *d = &b->dirs[j];
                int k = d->sync_cold ? fs_fsync(d->cold_fd) : 0;

                d->sync_cold = false;
                for (size_t i = 0; k < 0 && i < b->n; i++)
                        if (b->items[i].dir == j && b->items[i].v->verb == VERB_COMPRESS)
                                qwen_batch_report(c, &b->items[i], STORE_FAILED,
                                                     "compressed, but fsync of the cold tier "
                                                     "failed; the originals stay",
                                                     -k);
        }
        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                QwenBatchDir *d = &b->dirs[it->dir];
                const char *why = NULL;
                int k;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                k = cold_step_end(d->archive_fd, d->cold_fd, it->cold, c->env.hook, c->env.userdata, &why);
                d->sync_archive = true;
                /* -EEXIST: a .zst with other content than its original's (cold-step.h) */
                if (k < 0)
                        qwen_batch_report_fail(c, it,
                                           k == -EEXIST ? STORE_SKIPPED_CONFLICT
                                                        : qwen_batch_errno(k),
                                           k, why);
        }
}

/* Journal a compression with both sizes, and count it. */
static void qwen_commit_compressed(QwenAll *c, QwenBatchItem *it) {
        const Session *s = it->s;
        const Tree *tr = &c->inv->trees[s->tree];
        uint64_t in = it->cold ? it->cold->bytes_in : 0, out = it->cold ? it->cold->bytes_out : 0;
        _cleanup_free_ char *path =
                util_strprintf("%s/projects/%s/chats/archive/" COLD_DIR "/%s.jsonl" COLD_SUFFIX,
                               tr->runtime_dir, s->project_dir, s->id);
        _cleanup_free_ char *why = reason_verdict(it->v, s, tr->store);
        char in_s[FORMAT_BYTES_MAX], out_s[FORMAT_BYTES_MAX];
        /* the run line's units; the exact bytes are QGC_ORIGINAL_BYTES, QGC_COMPRESSED_BYTES */
        _cleanup_free_ char *msg = util_strprintf("compressed session %s in %s (%s): %s into %s",
                                                  s->id, inventory_session_project(s), why ?: "",
                                                  util_format_bytes(in_s, sizeof in_s, in),
                                                  util_format_bytes(out_s, sizeof out_s, out));
        const JournalField fields[] = {
                JOURNAL_FIELD_U64("QGC_ORIGINAL_BYTES", in),
                JOURNAL_FIELD_U64("QGC_COMPRESSED_BYTES", out),
        };
        JournalEntry e = {
                .event = JOURNAL_COMPRESSED,
                .message = msg,
                .session = s->id,
                .project = inventory_session_project(s),
                .path = path,
                .rule = it->v->rule,
                .reason = why,
                .bytes = in,
                .has_bytes = true,
                .user = tr->user,
                .fields = fields,
                .n_fields = ELEMENTSOF(fields),
        };

        it->done = true;
        if (journal_log(&e) < 0)
                log_warning("cannot write the action log entry for session %s", s->id);
        c->env.counts->n_compressed++;
        c->env.counts->bytes_compressed_in += in;
        c->env.counts->bytes_compressed_out += out;
}

/* 3: every move of the batch, one fsync per directory they touched; then every transcript
 * unlink (identity re-checked before each), and 4: one fsync per directory they touched. */
static void qwen_commit_move_sync(QwenAll *c, QwenBatch *b, bool moves);

/* Queue the fsyncs of dir j's touched directories (syncq.h), once per pass. */
static void qwen_commit_queue_sync(QwenBatch *b, size_t j) {
        QwenBatchDir *d = &b->dirs[j];
        int fds[3] = { d->sync_chats ? d->chats_fd : -EBADF,
                       d->sync_archive ? d->archive_fd : -EBADF,
                       d->sync_cold ? d->cold_fd : -EBADF };

        if (d->sync_queued)
                return;
        d->sync_queued = true;
        for (size_t x = 0; x < 3; x++) {
                d->sync_err[x] = 0;
                if (fds[x] >= 0 && b->syncq)
                        syncq_push(b->syncq, fds[x], &d->sync_err[x]);
                else if (fds[x] >= 0)
                        d->sync_err[x] = fs_fsync(fds[x]);
        }
}

/* The archive move of item it (name: its transcript's), sidecars first; a failure is reported. */
static void qwen_commit_archive_one(QwenAll *c, QwenBatch *b, QwenBatchItem *it,
                                      const char *name) {
        QwenBatchDir *d = &b->dirs[it->dir];
        const char *why = NULL;
        int r;

        /* chats/archive/ is created only for a session the scan saw */
        r = d->archive_fd >= 0 ? 1 : fs_check_identity(d->chats_fd, name, &it->s->active);
        if (r <= 0) {
                qwen_batch_report_fail(c, it, r < 0 ? STORE_FAILED : STORE_SKIPPED_CHANGED, r,
                                   "changed since scan");
                return;
        }
        r = qwen_commit_archive_dir(c, d, &why);
        if (r >= 0)
                qwen_commit_sidecars(d);
        if (r >= 0 && qwen_commit_no_sidecars(d, it->s->id))
                r = archive_move_bare_nosync(d->chats_fd, d->archive_fd, it->s->id,
                                             &it->s->active, c->env.hook, c->env.userdata, &why);
        else if (r >= 0)
                r = archive_move_nosync(d->chats_fd, d->archive_fd, it->s->id, &it->s->active,
                                        /* to_archive= */ true, c->env.hook, c->env.userdata, &why);
        if (r < 0) {
                qwen_batch_report_fail(c, it,
                                   r == -EEXIST && why == archive_why_conflict
                                           ? STORE_SKIPPED_CONFLICT
                                           : qwen_batch_errno(r),
                                   r, why);
                return;
        }
        d->sync_chats = d->sync_archive = true;
}

/* While the batch's usage lines are on their way to the disk (qwen_commit_salvage()): the
 * archives of the sessions that need none of them, a line of their own (it->line) or one another
 * session of the batch writes (it->dep); then the wait for the lines. No other transcript moves
 * before qwen_commit_salvage_end() says the lines are durable and read back. */
static void qwen_commit_move_early(QwenAll *c, QwenBatch *b) {
        for (size_t i = 0; b->usage_pending && i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                _cleanup_free_ char *name = NULL;

                if (it->done || it->v->verb != VERB_ARCHIVE || it->line || it->dep >= 0)
                        continue;
                name = qwen_batch_tname(it->s);
                if (!name) {
                        qwen_batch_report(c, it, STORE_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                qwen_commit_archive_one(c, b, it, name);
                it->moved = true;
        }
        /* a directory with no other move to come: its fsyncs overlap the wait too */
        for (size_t j = 0; b->usage_pending && j < b->n_dirs; j++) {
                bool more = false;

                for (size_t i = 0; !more && i < b->n; i++)
                        more = b->items[i].dir == j && !b->items[i].done && !b->items[i].moved;
                if (!more)
                        qwen_commit_queue_sync(b, j);
        }
        qwen_commit_salvage_end(c, b);
}

static void qwen_commit_move(QwenAll *c, QwenBatch *b) {
        /* a pass's last item of each directory: its fsyncs start right after it, while the
         * pass goes on with the other directories (the items of a directory are together) */
        size_t last[2][QWEN_BATCH_DIRS];

        if (!b->syncq)
                (void)syncq_new(&b->syncq); /* without it, each fsync is the caller's */
        for (size_t j = 0; j < b->n_dirs; j++)
                last[0][j] = last[1][j] = SIZE_MAX;
        for (size_t i = 0; i < b->n; i++)
                if (b->items[i].v->verb != VERB_COMPRESS)
                        last[b->items[i].v->verb != VERB_ARCHIVE][b->items[i].dir] = i;
        /* in a batch of archives, first the moves that need no line of the batch, while its
         * usage fsync runs; first the compressions, each complete with its own fsyncs (3a); then
         * two passes: the moves, their directories' fsyncs, then the unlinks, so that no name a
         * move added is lost in a crash that keeps a later unlink (tests/faults' fsync audit) */
        qwen_commit_usage_sync_end(c, b); /* before the first transcript goes */
        qwen_commit_move_early(c, b);
        qwen_commit_compress(c, b);
        for (size_t k = 0; k < 2 * b->n; k++) {
                if (k > 0 && last[(k - 1) >= b->n][b->items[(k - 1) % b->n].dir] == (k - 1) % b->n)
                        qwen_commit_queue_sync(b, b->items[(k - 1) % b->n].dir);
                QwenBatchItem *it = &b->items[k % b->n];
                QwenBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = NULL;
                int dir_fd, r;

                if (k == b->n)
                        qwen_commit_move_sync(c, b, /* moves= */ true);
                if (it->done || it->v->verb == VERB_COMPRESS ||
                    (it->v->verb == VERB_ARCHIVE) != (k < b->n))
                        continue;
                name = qwen_batch_tname(it->s);
                if (!name) {
                        qwen_batch_report(c, it, STORE_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                if (it->v->verb == VERB_ARCHIVE) {
                        if (!it->moved)
                                qwen_commit_archive_one(c, b, it, name);
                        continue;
                }
                dir_fd = qwen_commit_dir_fd(b, it);
                r = fs_check_identity(dir_fd, name, qwen_batch_fid(it->s));
                if (r <= 0) {
                        qwen_batch_report_fail(c, it, qwen_batch_errno(r < 0 ? r : -ESTALE), r,
                                           "changed since scan");
                        continue;
                }
                r = fs_unlink(dir_fd, name, 0);
                if (r < 0) {
                        qwen_batch_report(c, it, STORE_FAILED,
                                             r == -ENOENT ? "vanished"
                                                          : "cannot remove the transcript",
                                             -r);
                        continue;
                }
                qwen_batch_step(c, name);
                it->removed = true;
                if (inventory_session_is_cold(it->s))
                        d->sync_cold = true;
                else if (it->s->state == SESSION_ARCHIVED)
                        d->sync_archive = true;
                else
                        d->sync_chats = true;
        }
        qwen_commit_move_sync(c, b, /* moves= */ false);
}

/* One fsync per directory the moves (or the unlinks) touched: those not queued yet are queued
 * now, and every one is waited for before any outcome of the pass is reported. */
static void qwen_commit_move_sync(QwenAll *c, QwenBatch *b, bool moves) {
        for (size_t j = 0; j < b->n_dirs; j++)
                qwen_commit_queue_sync(b, j);
        if (b->syncq)
                syncq_wait(b->syncq);
        for (size_t j = 0; j < b->n_dirs; j++) {
                const int *errs = b->dirs[j].sync_err;
                int r = errs[0] < 0 ? errs[0] : errs[1] < 0 ? errs[1] : errs[2];

                b->dirs[j].sync_queued = false;
                b->dirs[j].sync_chats = b->dirs[j].sync_archive = b->dirs[j].sync_cold = false;
                if (r >= 0)
                        continue;
                /* a compression's chats/archive/ is synced with the moves */
                for (size_t i = 0; i < b->n; i++)
                        if (b->items[i].dir == j && !b->items[i].done &&
                            (b->items[i].v->verb == VERB_ARCHIVE ||
                             b->items[i].v->verb == VERB_COMPRESS) == moves)
                                qwen_batch_report(
                                        c, &b->items[i], STORE_FAILED,
                                        b->items[i].v->verb == VERB_ARCHIVE
                                                ? "moved, but fsync of the directories failed"
                                        : b->items[i].v->verb == VERB_COMPRESS
                                                ? "compressed, but fsync of chats/archive/ failed"
                                                : "removed, but fsync of chats/ failed",
                                        -r);
        }
}

/* 5: what else of each deleted session is its alone; then the batch's marker goes when every
 * delete it covers is complete or never began (else the next run's recovery pass finishes
 * them), and every outcome is reported. */
static void qwen_commit_finish(QwenAll *c, QwenBatch *b, const QwenRun *t) {
        bool keep_marker = false;
        int r;

        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                QwenBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = util_strprintf("%s.jsonl", it->s->id);

                if (it->v->verb != VERB_DELETE || !it->marked || !it->removed)
                        continue; /* never began: nothing for the marker to finish */
                if (it->done) {
                        keep_marker = true; /* the next run's recovery pass retries */
                        continue;
                }
                /* the same race just after the unlink: what is left belongs to the new copy */
                r = name ? qwen_steps_copy_exists(d->chats_fd, d->archive_fd, name, false) : -ENOMEM;
                if (r == 0)
                        r = qwen_steps_copy_exists(d->chats_fd, d->archive_fd, name, true);
                if (r != 0) {
                        log_warning("session %s: a transcript appeared as it was deleted; its "
                                    "sidecars and file-history are kept",
                                    it->s->id);
                        if (r < 0) {
                                keep_marker = true;
                                qwen_batch_report(c, it, STORE_FAILED,
                                                     "transcript removed, but whether a copy "
                                                     "appeared is unknown",
                                                     -r);
                        }
                        continue;
                }
                qwen_commit_claims(c, d);
                r = qwen_steps_rest(c, t, it->s, d->chats_fd, d->archive_fd);
                c->claim_names = NULL;
                if (r < 0) {
                        keep_marker = true; /* the next run's recovery pass retries */
                        qwen_batch_report(
                                c, it, STORE_FAILED,
                                r == -EBUSY ? "transcript removed; kept: a mount point inside"
                                            : "transcript removed, but not everything else",
                                -r);
                }
        }
        if (b->marker && !keep_marker) {
                r = recover_marker_remove(t->global_fd, t->global_dev, b->marker, c->env.hook, c->env.userdata);
                if (r < 0)
                        log_warning_errno(r, "cannot remove the pending-delete marker '%s'",
                                          b->marker);
        }
        /* when each archive of the batch happened (session-times.h: archive-max-age counts from
         * it), with one write and one fsync, once the moves are durable */
        _cleanup_(strbuf_done) StrBuf times = {};
        msec_t now = util_now_msec();
        r = 0;
        for (size_t i = 0; r >= 0 && i < b->n; i++)
                if (b->items[i].v->verb == VERB_ARCHIVE && !b->items[i].done)
                        r = session_times_line(&times, SESSION_TIME_ARCHIVED, now,
                                               b->items[i].s->id);
        if (r >= 0)
                r = session_times_append(t->global_fd, t->global_dev, times.buf, times.len,
                                         c->env.hook, c->env.userdata);
        if (r < 0)
                log_warning_errno(r, "cannot record the time of this batch's archives in '%s/%s' "
                                     "(archive-max-age counts from the archived files' ctime)",
                                  c->inv->trees[b->tree].global_dir, SESSION_TIMES_FILE);
        journal_hold(); /* every outcome of the batch, with one write */
        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];

                if (it->v->verb == VERB_COMPRESS && !it->done) {
                        qwen_commit_compressed(c, it);
                        continue;
                }
                qwen_batch_report(c, it, STORE_DONE, NULL, 0);
        }
        qwen_commit_journal_release();
}

/* Run the batch's steps in order, then empty it. */
void qwen_commit_batch(QwenAll *c) {
        QwenBatch *b = c->batch;

        uint64_t t0, te, t1, t2, t3;

        /* the next batch's lookups look at usage_record.jsonl again */
        for (size_t i = 0; i < c->inv->n_trees; i++)
                if (c->runs[i])
                        usage_index_release(c->runs[i]->usage);
        if (!b || b->n == 0)
                return;
        t0 = qwen_commit_now_ns();
        qwen_commit_usage_sync(c, b);
        qwen_commit_live(c, b);
        qwen_commit_salvage(c, b, c->runs[b->tree]);
        if (b->n_not_archive > 0) /* before a delete's marker and shared-file edits */
                qwen_commit_usage_sync_end(c, b);
        qwen_commit_mark(c, b, c->runs[b->tree]);
        te = qwen_commit_now_ns();
        qwen_commit_erase(c, b, c->runs[b->tree]);
        qwen_steps_lists_drop(c); /* the rest of the deletes lists afresh (qwen-steps.c) */
        t1 = qwen_commit_now_ns();
        b->edit_ns = t1 - te;
        qwen_commit_move(c, b);
        qwen_commit_salvage_end(c, b); /* waited for by the moves already */
        t2 = qwen_commit_now_ns();
        qwen_commit_finish(c, b, c->runs[b->tree]);
        qwen_steps_lists_drop(c);
        t3 = qwen_commit_now_ns();
        /* the next batch prepares for at least 4 times what this one's flushes took, so that
         * they stay a small part of the run however slow the disk is */
        b->flush_ns = t1 - t0;
        b->window_ns = MIN(MAX(4 * (t1 - t0), QWEN_BATCH_MSEC * 1000000ULL),
                           QWEN_BATCH_MSEC_MAX * 1000000ULL);
        log_debug("batch of %zu sessions: prepared in %.1f ms, usage+markers %.1f ms, moves %.1f "
                  "ms, rest %.1f ms",
                  b->n, (double)(t0 - b->started_ns) / 1e6, (double)(t1 - t0) / 1e6,
                  (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6);

        for (size_t i = 0; i < b->n; i++) {
                QwenBatchItem *it = &b->items[i];
                free(it->line);
                free(it->sid);
                recover_marker_done(&it->mk);
                if (it->cold)
                        cold_step_done(it->cold);
                free(it->cold);
        }
        for (size_t j = 0; j < b->n_dirs; j++) {
                macro_safe_close(b->dirs[j].chats_fd);
                macro_safe_close(b->dirs[j].archive_fd);
                macro_safe_close(b->dirs[j].cold_fd);
                for (size_t i = 0; i < b->dirs[j].n_claims; i++)
                        free(b->dirs[j].claims[i]);
                free(b->dirs[j].claims);
                for (size_t i = 0; i < b->dirs[j].n_sidecar_ids; i++)
                        free(b->dirs[j].sidecar_ids[i]);
                free(b->dirs[j].sidecar_ids);
        }
        for (size_t j = 0; j < b->n_paths; j++) {
                macro_safe_close(b->paths[j].fd);
                free(b->paths[j].rel);
        }
        free(b->marker);
        b->marker = NULL;
        b->n = b->n_dirs = b->n_paths = b->n_not_archive = 0;
}

/* The batch's directory entry for s's chats/, opened on first use. Index, or -errno (*ret_why). */
int qwen_commit_dir(QwenAll *c, const QwenRun *t, const Session *s,
                      const char **ret_why) {
        QwenBatch *b = c->batch;
        const Tree *tr = &c->inv->trees[s->tree];
        _cleanup_free_ char *rel = NULL;
        _cleanup_close_ int chats_fd = -EBADF;
        int archive_fd;

        for (size_t j = b->n_dirs; j > 0; j--)
                if (streq(b->dirs[j - 1].project_dir, s->project_dir))
                        return (int)(j - 1);
        if (b->n_dirs == QWEN_BATCH_DIRS)
                qwen_commit_batch(c);
        rel = util_strprintf("projects/%s/chats", s->project_dir);
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
        b->dirs[b->n_dirs] = (QwenBatchDir){
                .project_dir = s->project_dir,
                .chats_fd = TAKE_FD(chats_fd),
                .archive_fd = archive_fd,
                .cold_fd = -EBADF,
        };
        return (int)b->n_dirs++;
}
