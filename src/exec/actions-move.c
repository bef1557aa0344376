/* actions-move.c: steps 3 and 4 of the group commit (actions-batch.c): a batch's archive moves
 * (chats/ listed once per batch for its sidecars), its compress step (coldstep.h, cold.h's
 * COLD_BATCH order), its transcript unlinks (identity re-checked before each), and one fsync of
 * every directory the moves or the unlinks touched. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "cold.h"
#include "coldstep.h"
#include "fsutil.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "reason.h"
#include "syncq.h"
#include "util.h"

#include "actions-int.h"

/* chats/archive/ of dir d, created when missing. */
static int actions_batch_archive_dir(ActionsContext *c, ActionsBatchDir *d, const char **ret_why) {
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
                actions_report_step(c, "archive/");
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

static int actions_strcmpp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* List d's chats/ for the ids that have an archive sidecar there (archive.h), once, after the
 * batch's liveness check: a session without one is moved by archive_move_bare_nosync(), without
 * a lookup per sidecar. A sidecar written between the listing and the move (only a live session
 * writes one, and the batch just checked that none is live) stays in chats/ beside the archived
 * transcript, as one written just after the move would: Qwen's delete and qgc's remove
 * sidecars in both places. */
static void actions_batch_sidecars(ActionsBatchDir *d) {
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
                qsort(d->sidecar_ids, d->n_sidecar_ids, sizeof(char *), actions_strcmpp);
        d->sidecars_listed = 1;
}

/* Did the listing of d's chats/ see no sidecar of id? (false when it could not be listed) */
static bool actions_batch_no_sidecars(const ActionsBatchDir *d, const char *id) {
        if (d->sidecars_listed != 1)
                return false;
        return !d->sidecar_ids || !bsearch(&id, d->sidecar_ids, d->n_sidecar_ids, sizeof(char *),
                                           actions_strcmpp);
}

/* 3a: the compressions of the batch (coldstep.h, cold.h's COLD_BATCH): every file compressed
 * and verified under its temporary name, one syncfs(), each renamed into place, one fsync per
 * cold directory, then the originals go (chats/archive/ is fsynced with the other directories
 * in 4). */
static void actions_batch_compress(ActionsContext *c, ActionsBatch *b) {
        _cleanup_(cold_ctx_freep) ColdCtx *ctx = NULL;
        int level = 0, sync_fd = -EBADF, r;

        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                const char *why = "cannot create chats/archive/" COLD_DIR "/";
                int want = it->v->compress_level > 0 ? it->v->compress_level : COLD_LEVEL_DEFAULT;
                bool created = false;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                r = 0;
                if (d->cold_fd < 0) {
                        r = d->archive_fd < 0 ? -ESTALE
                                              : cold_step_open_dir(d->archive_fd, &created,
                                                                   actions_report_step, c);
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
                                            &it->s->archived, actions_report_step, c, it->cold, &why);
                if (r < 0) {
                        actions_report_item_fail(c, it, actions_report_errno(r), r, why);
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
                ActionsBatchItem *it = &b->items[i];
                const char *why = NULL;
                int k;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                k = r < 0 ? r
                          : cold_step_commit(b->dirs[it->dir].cold_fd, it->cold, actions_report_step, c,
                                             &why);
                /* -EEXIST: a compressed copy appeared (coldstep.h) */
                if (k < 0)
                        actions_report_item_fail(c, it,
                                           k == -EEXIST && why ? ACTIONS_SKIPPED_CONFLICT
                                                               : actions_report_errno(k),
                                           k, why ?: "cannot sync the compressed files");
        }
        for (size_t j = 0; j < b->n_dirs; j++) {
                ActionsBatchDir *d = &b->dirs[j];
                int k = d->sync_cold ? fs_fsync(d->cold_fd) : 0;

                d->sync_cold = false;
                for (size_t i = 0; k < 0 && i < b->n; i++)
                        if (b->items[i].dir == j && b->items[i].v->verb == VERB_COMPRESS)
                                actions_report_item(c, &b->items[i], ACTIONS_FAILED,
                                                     "compressed, but fsync of the cold tier "
                                                     "failed; the originals stay",
                                                     -k);
        }
        for (size_t i = 0; i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                ActionsBatchDir *d = &b->dirs[it->dir];
                const char *why = NULL;
                int k;

                if (it->done || it->v->verb != VERB_COMPRESS)
                        continue;
                k = cold_step_end(d->archive_fd, d->cold_fd, it->cold, actions_report_step, c, &why);
                d->sync_archive = true;
                /* -EEXIST: a .zst with other content than its original's (coldstep.h) */
                if (k < 0)
                        actions_report_item_fail(c, it,
                                           k == -EEXIST ? ACTIONS_SKIPPED_CONFLICT
                                                        : actions_report_errno(k),
                                           k, why);
        }
}

/* Journal a compression with both sizes, and count it. */
void actions_batch_compressed(ActionsContext *c, ActionsBatchItem *it) {
        const Session *s = it->s;
        const Tree *tr = &c->inv->trees[s->tree];
        uint64_t in = it->cold ? it->cold->bytes_in : 0, out = it->cold ? it->cold->bytes_out : 0;
        _cleanup_free_ char *path = strprintf("%s/projects/%s/chats/archive/" COLD_DIR
                                              "/%s.jsonl" COLD_SUFFIX,
                                              tr->runtime_dir, s->project_dir, s->id);
        _cleanup_free_ char *why = reason_verdict(it->v, s);
        char in_s[FORMAT_BYTES_MAX], out_s[FORMAT_BYTES_MAX];
        /* the run line's units; the exact bytes are QGC_ORIGINAL_BYTES, QGC_COMPRESSED_BYTES */
        _cleanup_free_ char *msg = strprintf("compressed session %s in %s (%s): %s into %s",
                                             s->id, actions_report_project(s), why ?: "",
                                             format_bytes(in_s, sizeof in_s, in),
                                             format_bytes(out_s, sizeof out_s, out));
        const JournalField fields[] = {
                JOURNAL_FIELD_U64("QGC_ORIGINAL_BYTES", in),
                JOURNAL_FIELD_U64("QGC_COMPRESSED_BYTES", out),
        };
        JournalEntry e = {
                .event = JOURNAL_COMPRESSED,
                .message = msg,
                .session = s->id,
                .project = actions_report_project(s),
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
        c->stats->n_compressed++;
        c->stats->bytes_compressed_in += in;
        c->stats->bytes_compressed_out += out;
}

/* 3: every move of the batch, one fsync per directory they touched; then every transcript
 * unlink (identity re-checked before each), and 4: one fsync per directory they touched. */
static void actions_batch_move_sync(ActionsContext *c, ActionsBatch *b, bool moves);

/* Queue the fsyncs of dir j's touched directories (syncq.h), once per pass. */
static void actions_batch_queue_sync(ActionsBatch *b, size_t j) {
        ActionsBatchDir *d = &b->dirs[j];
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
static void actions_batch_archive_one(ActionsContext *c, ActionsBatch *b, ActionsBatchItem *it,
                                      const char *name) {
        ActionsBatchDir *d = &b->dirs[it->dir];
        const char *why = NULL;
        int r;

        /* chats/archive/ is created only for a session the scan saw */
        r = d->archive_fd >= 0 ? 1 : fs_check_identity(d->chats_fd, name, &it->s->active);
        if (r <= 0) {
                actions_report_item_fail(c, it, r < 0 ? ACTIONS_FAILED : ACTIONS_SKIPPED_CHANGED, r,
                                   "changed since scan");
                return;
        }
        r = actions_batch_archive_dir(c, d, &why);
        if (r >= 0)
                actions_batch_sidecars(d);
        if (r >= 0 && actions_batch_no_sidecars(d, it->s->id))
                r = archive_move_bare_nosync(d->chats_fd, d->archive_fd, it->s->id,
                                             &it->s->active, actions_report_step, c, &why);
        else if (r >= 0)
                r = archive_move_nosync(d->chats_fd, d->archive_fd, it->s->id, &it->s->active,
                                        /* to_archive= */ true, actions_report_step, c, &why);
        if (r < 0) {
                actions_report_item_fail(c, it,
                                   r == -EEXIST && why == archive_why_conflict
                                           ? ACTIONS_SKIPPED_CONFLICT
                                           : actions_report_errno(r),
                                   r, why);
                return;
        }
        d->sync_chats = d->sync_archive = true;
}

/* While the batch's usage lines are on their way to the disk (actions_batch_salvage()): the
 * archives of the sessions that need none of them, a line of their own (it->line) or one another
 * session of the batch writes (it->dep); then the wait for the lines. No other transcript moves
 * before actions_batch_salvage_end() says the lines are durable and read back. */
static void actions_batch_move_early(ActionsContext *c, ActionsBatch *b) {
        for (size_t i = 0; b->usage_pending && i < b->n; i++) {
                ActionsBatchItem *it = &b->items[i];
                _cleanup_free_ char *name = NULL;

                if (it->done || it->v->verb != VERB_ARCHIVE || it->line || it->dep >= 0)
                        continue;
                name = actions_tname(it->s);
                if (!name) {
                        actions_report_item(c, it, ACTIONS_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                actions_batch_archive_one(c, b, it, name);
                it->moved = true;
        }
        /* a directory with no other move to come: its fsyncs overlap the wait too */
        for (size_t j = 0; b->usage_pending && j < b->n_dirs; j++) {
                bool more = false;

                for (size_t i = 0; !more && i < b->n; i++)
                        more = b->items[i].dir == j && !b->items[i].done && !b->items[i].moved;
                if (!more)
                        actions_batch_queue_sync(b, j);
        }
        actions_batch_salvage_end(c, b);
}

void actions_batch_move(ActionsContext *c, ActionsBatch *b) {
        /* a pass's last item of each directory: its fsyncs start right after it, while the
         * pass goes on with the other directories (the items of a directory are together) */
        size_t last[2][ACTIONS_BATCH_DIRS];

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
        actions_batch_usage_sync_end(c, b); /* before the first transcript goes */
        actions_batch_move_early(c, b);
        actions_batch_compress(c, b);
        for (size_t k = 0; k < 2 * b->n; k++) {
                if (k > 0 && last[(k - 1) >= b->n][b->items[(k - 1) % b->n].dir] == (k - 1) % b->n)
                        actions_batch_queue_sync(b, b->items[(k - 1) % b->n].dir);
                ActionsBatchItem *it = &b->items[k % b->n];
                ActionsBatchDir *d = &b->dirs[it->dir];
                _cleanup_free_ char *name = NULL;
                int dir_fd, r;

                if (k == b->n)
                        actions_batch_move_sync(c, b, /* moves= */ true);
                if (it->done || it->v->verb == VERB_COMPRESS ||
                    (it->v->verb == VERB_ARCHIVE) != (k < b->n))
                        continue;
                name = actions_tname(it->s);
                if (!name) {
                        actions_report_item(c, it, ACTIONS_FAILED, "out of memory", ENOMEM);
                        continue;
                }
                if (it->v->verb == VERB_ARCHIVE) {
                        if (!it->moved)
                                actions_batch_archive_one(c, b, it, name);
                        continue;
                }
                dir_fd = actions_batch_dir_fd(b, it);
                r = fs_check_identity(dir_fd, name, actions_fid(it->s));
                if (r <= 0) {
                        actions_report_item_fail(c, it, actions_report_errno(r < 0 ? r : -ESTALE), r,
                                           "changed since scan");
                        continue;
                }
                r = fs_unlink(dir_fd, name, 0);
                if (r < 0) {
                        actions_report_item(c, it, ACTIONS_FAILED,
                                             r == -ENOENT ? "vanished"
                                                          : "cannot remove the transcript",
                                             -r);
                        continue;
                }
                actions_report_step(c, name);
                it->removed = true;
                if (session_is_cold(it->s))
                        d->sync_cold = true;
                else if (it->s->state == SESSION_ARCHIVED)
                        d->sync_archive = true;
                else
                        d->sync_chats = true;
        }
        actions_batch_move_sync(c, b, /* moves= */ false);
}

/* One fsync per directory the moves (or the unlinks) touched: those not queued yet are queued
 * now, and every one is waited for before any outcome of the pass is reported. */
static void actions_batch_move_sync(ActionsContext *c, ActionsBatch *b, bool moves) {
        for (size_t j = 0; j < b->n_dirs; j++)
                actions_batch_queue_sync(b, j);
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
                                actions_report_item(
                                        c, &b->items[i], ACTIONS_FAILED,
                                        b->items[i].v->verb == VERB_ARCHIVE
                                                ? "moved, but fsync of the directories failed"
                                        : b->items[i].v->verb == VERB_COMPRESS
                                                ? "compressed, but fsync of chats/archive/ failed"
                                                : "removed, but fsync of chats/ failed",
                                        -r);
        }
}
