/* qwen-session.c: qwen_store's session actions of a run (store.h: run_begin, run_ready,
 * run_session, run_commit, run_end): the run's state over Qwen's trees (QwenAll, qwen-batch.h),
 * qgc's record of archive and restore times compacted at its start (qwen-times.h), the salvage
 * thread started once the recovery is done (usage-ahead.h), and one session checked and its
 * usage line built into the batch, which the group commit carries out (qwen-commit.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cold.h"
#include "erase.h"
#include "fs.h"
#include "log.h"
#include "macro.h"
#include "qwen-batch.h"
#include "qwen-commit.h"
#include "qwen-session.h"
#include "qwen-steps.h"
#include "qwen-times.h"
#include "session-times.h"
#include "syncq.h"
#include "usage-ahead.h"
#include "usage-index.h"
#include "util.h"

int qwen_session_begin(const Plan *p, struct StoreRun *const *runs, const StoreRunEnv *env,
                       struct StoreRunAll **ret) {
        const Inventory *inv = p->inv;
        QwenAll *c = calloc(1, sizeof(QwenAll));

        if (!c)
                return -ENOMEM;
        *c = (QwenAll){ .plan = p, .inv = inv, .env = *env };
        c->runs = calloc(inv->n_trees ? inv->n_trees : 1, sizeof(QwenRun *));
        c->runtime_fds = calloc(inv->n_trees ? inv->n_trees : 1, sizeof(int));
        c->batch = calloc(1, sizeof(QwenBatch));
        if (!c->runs || !c->runtime_fds || !c->batch) {
                qwen_session_end((struct StoreRunAll *)c);
                return -ENOMEM;
        }
        for (size_t i = 0; i < inv->n_trees; i++) {
                c->runs[i] = (QwenRun *)runs[i];
                c->runtime_fds[i] = runs[i] ? c->runs[i]->runtime_fd : -EBADF;
                if (runs[i])
                        c->runs[i]->all = c;
        }
        /* qgc's record of archive and restore times kept near one line per session */
        for (size_t i = 0; i < inv->n_trees; i++) {
                int k = !c->runs[i] || c->runs[i]->session_error < 0
                                ? 0
                                : qwen_times_compact(c->runs[i]->global_fd, inv, i);
                if (k < 0)
                        log_warning_errno(k, "cannot compact '%s/%s'", inv->trees[i].global_dir,
                                          SESSION_TIMES_FILE);
        }
        *ret = (struct StoreRunAll *)c;
        return 0;
}

void qwen_session_ready(struct StoreRunAll *all) {
        qwen_steps_salvage_ahead((QwenAll *)all);
}

/* The outcome of s known before its batch: reported now. */
static int qwen_session_report(QwenAll *c, const Session *s, const Verdict *v, StoreOutcome o,
                               const char *why, int error) {
        c->env.report(c->env.userdata, s, v, o, why, error);
        return 1;
}

/* Check one ARCHIVE, DELETE or COMPRESS of a session and build its usage line into the batch;
 * the batch does the rest (qwen_commit_batch()). 1: its outcome is reported (now or by the
 * batch's commit). */
int qwen_session_run(struct StoreRun *run, const Session *s, const Verdict *v, StoreStep *step) {
        const QwenRun *t = (const QwenRun *)run;
        QwenAll *c = t->all;
        QwenBatch *b = c ? c->batch : NULL;
        _cleanup_free_ char *name = qwen_batch_tname(s);
        _cleanup_free_ char *line = NULL, *sid = NULL;
        const FileId *fid = qwen_batch_fid(s);
        const char *why = NULL;
        int dir_fd, k, r;

        if (!c) { /* qwen_session_begin() failed */
                step->why = strdup("out of memory");
                return -ENOMEM;
        }
        if (!name)
                return qwen_session_report(c, s, v, STORE_FAILED, "out of memory", ENOMEM);
        if (t->session_error < 0)
                return qwen_session_report(c, s, v, STORE_FAILED, "cannot open the tree",
                                           -t->session_error);
        if (b->n > 0 && b->tree != s->tree)
                qwen_commit_batch(c);
        /* rather than wait for the salvage thread to build s's line (at the start of a run, or
         * after a long transcript), commit what is prepared: its moves run meanwhile */
        else if (b->n >= QWEN_BATCH_EARLY &&
                 qwen_commit_now_ns() - b->started_ns >= b->flush_ns &&
                 usage_ahead_would_wait(c->ahead, s))
                qwen_commit_batch(c);
        b->tree = s->tree;

        k = qwen_commit_dir(c, t, s, &why);
        if (k < 0)
                return qwen_session_report(c, s, v, qwen_batch_errno(k), why,
                                           k == -ESTALE ? 0 : -k);
        dir_fd = s->state == SESSION_ARCHIVED ? b->dirs[k].archive_fd : b->dirs[k].chats_fd;
        if (inventory_session_is_cold(s) && dir_fd >= 0) {
                if (b->dirs[k].cold_fd < 0)
                        b->dirs[k].cold_fd = fs_open_dir(dir_fd, COLD_DIR);
                dir_fd = b->dirs[k].cold_fd;
        }
        if (dir_fd < 0)
                return qwen_session_report(c, s, v, STORE_SKIPPED_CHANGED, "changed since scan",
                                           0);

        /* identity: checked on the open file where the usage line is read, and by name again
         * before each of the batch's steps; liveness: re-checked for the whole batch just
         * before its first step. The usage file is looked at once per batch (usageidx.h). */
        ssize_t dep = -1;
        usage_index_hold(t->usage);
        r = qwen_steps_salvage(c, t, s, dir_fd, name, fid, &line, &sid, &dep);
        if (r == -ESTALE)
                return qwen_session_report(c, s, v, STORE_SKIPPED_CHANGED, "changed since scan",
                                           0);
        if (r < 0 && inventory_session_is_cold(s) && cold_damage_why(r)) {
                /* a compressed file that lies about its content is never salvaged from */
                _cleanup_free_ char *damaged =
                        util_strprintf("%s; session kept", cold_damage_why(r));
                return qwen_session_report(c, s, v, STORE_FAILED,
                                           damaged ?: "compressed file is damaged; session kept",
                                           -r);
        }
        if (r < 0)
                return qwen_session_report(c, s, v, STORE_FAILED,
                                           "cannot salvage the usage record; session kept", -r);

        if (b->n == 0)
                b->started_ns = qwen_commit_now_ns();
        b->items[b->n++] = (QwenBatchItem){
                .s = s, .v = v, .dir = (size_t)k, .line = TAKE_PTR(line), .sid = TAKE_PTR(sid),
                .dep = dep,
        };
        if (v->verb != VERB_ARCHIVE)
                b->n_not_archive++;
        if (qwen_commit_full(b) ||
            qwen_commit_now_ns() - b->started_ns >= MAX(b->window_ns, QWEN_BATCH_MSEC * 1000000ULL))
                qwen_commit_batch(c);
        return 1;
}

void qwen_session_commit(struct StoreRunAll *all) {
        qwen_commit_batch((QwenAll *)all);
}

void qwen_session_end(struct StoreRunAll *all) {
        QwenAll *c = (QwenAll *)all;

        if (!c)
                return;
        if (c->ahead) {
                size_t built, taken;
                usage_ahead_counts(c->ahead, &built, &taken);
                log_debug("salvage thread: %zu usage lines built ahead, %zu taken", built, taken);
        }
        c->ahead = usage_ahead_free(c->ahead);
        if (c->batch)
                syncq_free(c->batch->syncq);
        free(c->batch);
        for (size_t i = 0; c->runs && i < c->inv->n_trees; i++)
                if (c->runs[i])
                        c->runs[i]->all = NULL;
        qwen_steps_lists_drop(c);
        erase_index_free(c->erase_index);
        free(c->runs);
        free(c->runtime_fds);
        free(c);
}
