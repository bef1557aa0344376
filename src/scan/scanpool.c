/* scanpool.c: a tree's projects scanned by several threads, each project's sessions collected
 * in its own ScanOut and moved into the inventory in project name order by the calling thread. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "record.h"
#include "scan-int.h"

int scan_out_add_session(ScanOut *out, Session *s) {
        if (greedy_realloc((void **)&out->sessions, &out->alloc_sessions, out->n_sessions + 1,
                           sizeof(Session)) < 0) {
                session_done(s);
                return -ENOMEM;
        }
        out->sessions[out->n_sessions++] = *s;
        *s = (Session){};
        return 0;
}

int scan_out_add_orphan(ScanOut *out, Orphan *o) {
        if (greedy_realloc((void **)&out->orphans, &out->alloc_orphans, out->n_orphans + 1,
                           sizeof(Orphan)) < 0) {
                orphan_done(o);
                return -ENOMEM;
        }
        out->orphans[out->n_orphans++] = *o;
        *o = (Orphan){};
        return 0;
}

static void scan_out_done(ScanOut *out) {
        for (size_t i = 0; i < out->n_sessions; i++)
                session_done(&out->sessions[i]);
        free(out->sessions);
        for (size_t i = 0; i < out->n_orphans; i++)
                orphan_done(&out->orphans[i]);
        free(out->orphans);
        scan_pendings_done(&out->pending);
        *out = (ScanOut){};
}

/* Move a project's results into the inventory and the tree's pending list; out is emptied. */
static int scan_out_merge(ScanCtx *c, ScanOut *out) {
        int r = 0;

        if (out->incomplete)
                c->inv->trees[c->tree].incomplete = true;

        for (size_t i = 0; i < out->n_sessions; i++) {
                Session *s = &out->sessions[i];

                if (r >= 0)
                        r = inventory_add_session(c->inv, s);
                else
                        session_done(s);
        }
        out->n_sessions = 0;
        for (size_t i = 0; i < out->n_orphans; i++)
                if (r >= 0)
                        r = inventory_add_orphan(c->inv, &out->orphans[i]);
                else
                        orphan_done(&out->orphans[i]);
        out->n_orphans = 0;
        if (r >= 0 && out->pending.n > 0) {
                if (greedy_realloc((void **)&c->pending.v, &c->pending.alloc,
                                   c->pending.n + out->pending.n, sizeof(ScanPending)) < 0)
                        r = -ENOMEM;
                else {
                        memcpy(c->pending.v + c->pending.n, out->pending.v,
                               out->pending.n * sizeof(ScanPending));
                        c->pending.n += out->pending.n;
                        out->pending.n = 0;
                }
        }
        scan_out_done(out);
        return r;
}

/* The projects of one tree, scanned by ctx->o->jobs threads. Each thread takes the next project
 * name, scans it with its own ScanCtx (own scratch buffer and task cache; the tree's context,
 * history, probe and options are shared and only read) into that project's ScanOut. The calling
 * thread is one of them and also moves finished projects into the inventory, in name order. */
typedef struct ScanPool {
        ScanCtx *base;
        char *const *names;
        size_t n;
        int projects_fd;
        ScanOut *outs;
        bool *done;
        size_t next;   /* the next project to take */
        size_t merged; /* projects before this one are in the inventory (the caller's) */
        int history_fd; /* G/file-history, listed by the first worker (-EBADF: none) */
        dev_t history_dev;
        int history_r;
        int error;     /* the first error in time: no more projects are taken */
        int merge_error; /* the first error in name order, where merging stopped (the caller's) */
        pthread_mutex_t lock;
} ScanPool;

typedef struct ScanWorker {
        ScanPool *pool;
        bool history; /* lists G/file-history before it takes projects */
        ScanCtx ctx;
        pthread_t thread;
        int r;
} ScanWorker;

/* Move the finished prefix of the projects into the inventory (the caller's thread only). */
static int scan_pool_merge(ScanPool *pool) {
        for (;;) {
                size_t i = pool->merged;
                bool ready;
                int r;

                pthread_mutex_lock(&pool->lock);
                ready = i < pool->n && pool->done[i];
                pthread_mutex_unlock(&pool->lock);
                if (!ready)
                        return 0;
                /* as the serial scan: what the failed project added is kept, nothing after it */
                r = pool->outs[i].r;
                if (scan_out_merge(pool->base, &pool->outs[i]) < 0)
                        r = -ENOMEM;
                pool->merged = r < 0 ? pool->n : i + 1;
                if (r < 0) {
                        pool->merge_error = r;
                        return r;
                }
        }
}

static int scan_pool_work(ScanPool *pool, ScanCtx *ctx, bool merge) {
        for (;;) {
                size_t i;
                int r;

                pthread_mutex_lock(&pool->lock);
                if (pool->error < 0 || pool->next >= pool->n) {
                        pthread_mutex_unlock(&pool->lock);
                        return 0;
                }
                i = pool->next++;
                pthread_mutex_unlock(&pool->lock);

                ctx->out = &pool->outs[i];
                r = scan_project(ctx, pool->projects_fd, pool->names[i]);
                pool->outs[i].r = r;
                ctx->out = NULL;
                pthread_mutex_lock(&pool->lock);
                pool->done[i] = true;
                if (r < 0 && pool->error == 0)
                        pool->error = r;
                pthread_mutex_unlock(&pool->lock);
                if (merge && (r = scan_pool_merge(pool)) < 0) {
                        pthread_mutex_lock(&pool->lock);
                        if (pool->error == 0)
                                pool->error = r;
                        pthread_mutex_unlock(&pool->lock);
                }
        }
}

/* List G/file-history into the tree's history (the first worker, or the caller without one);
 * a failure stops the pool. */
static void scan_pool_history(ScanPool *pool) {
        int r = scan_collect_aggs(pool->history_fd, pool->history_dev, /* only_ids= */ true,
                                  &pool->base->history);

        pool->history_r = r;
        if (r < 0) {
                pthread_mutex_lock(&pool->lock);
                if (pool->error == 0)
                        pool->error = r; /* no more projects are taken */
                pthread_mutex_unlock(&pool->lock);
        }
}

static void *scan_worker_main(void *userdata) {
        ScanWorker *w = userdata;

        if (w->history)
                scan_pool_history(w->pool);
        w->r = scan_pool_work(w->pool, &w->ctx, /* merge= */ false);
        return NULL;
}

/* Add the sizes of G/file-history/<id>/ to the tree's sessions merged since first. */
static void scan_pool_add_history(ScanCtx *c, size_t first) {
        for (size_t i = first; i < c->inv->n_sessions; i++) {
                Session *s = &c->inv->sessions[i];
                const ScanAgg *agg = scan_aggs_find(&c->history, s->id);

                if (agg) {
                        s->bytes += agg->bytes;
                        s->bytes_alloc += agg->bytes_alloc;
                }
        }
}

/* Scan the named projects of ctx's tree with up to ctx->o->jobs threads. The first worker
 * thread (the caller without one) first lists G/file-history (history_fd, when >= 0, on
 * history_dev) into ctx->history while the caller already scans and merges projects: a caller
 * busy listing would leave the workers' finished projects waiting in memory. Its sizes are added
 * to the merged sessions at the end. */
int scan_projects(ScanCtx *ctx, int projects_fd, char *const *names, size_t n,
                         int history_fd, dev_t history_dev) {
        ScanPool pool = { .base = ctx, .names = names, .n = n, .projects_fd = projects_fd,
                          .history_fd = history_fd, .history_dev = history_dev };
        size_t first = ctx->inv->n_sessions;
        _cleanup_free_ ScanWorker *workers = NULL;
        pthread_attr_t attr;
        bool have_attr = false;
        size_t n_workers = 0, want;
        int r;

        want = ctx->o->jobs > 1 ? MIN((size_t)ctx->o->jobs, n) : 1;
        pool.outs = calloc(MAX(n, (size_t)1), sizeof(ScanOut));
        pool.done = calloc(MAX(n, (size_t)1), sizeof(bool));
        if (!pool.outs || !pool.done) {
                free(pool.outs);
                free(pool.done);
                return -ENOMEM;
        }
        pthread_mutex_init(&pool.lock, NULL);
        if (want > 1) {
                workers = calloc(want - 1, sizeof(ScanWorker));
                /* a known stack, whatever RLIMIT_STACK says: directory sums recurse up to
                 * SCAN_DEPTH_MAX levels of an FsDir each */
                if (pthread_attr_init(&attr) == 0) {
                        have_attr = true;
                        (void)pthread_attr_setstacksize(&attr, SCAN_THREAD_STACK);
                }
        }
        for (size_t k = 0; workers && k < want - 1; k++) {
                ScanWorker *w = &workers[k];

                w->pool = &pool;
                w->history = k == 0 && history_fd >= 0;
                w->ctx = (ScanCtx){ .inv = ctx->inv, .o = ctx->o, .tree = ctx->tree,
                                    .dev = ctx->dev, .tmp_fd = ctx->tmp_fd, .probe = ctx->probe };
                w->ctx.scratch = malloc(RECORD_ENDS_SCRATCH);
                if (!w->ctx.scratch)
                        break;
                /* a thread that cannot be started is simply one fewer */
                if (pthread_create(&w->thread, have_attr ? &attr : NULL, scan_worker_main, w) != 0) {
                        free(w->ctx.scratch);
                        break;
                }
                n_workers++;
        }
        if (have_attr)
                pthread_attr_destroy(&attr);
        if (n_workers == 0 && history_fd >= 0)
                scan_pool_history(&pool);
        r = scan_pool_work(&pool, ctx, /* merge= */ true);
        for (size_t k = 0; k < n_workers; k++) {
                pthread_join(workers[k].thread, NULL);
                free(workers[k].ctx.scratch);
                enrich_cache_done(&workers[k].ctx.enrich);
        }
        if (r >= 0)
                r = scan_pool_merge(&pool);
        if (pool.history_r < 0)
                r = pool.history_r;
        else
                scan_pool_add_history(ctx, first);
        /* as with one thread: the error of the first failed project in name order */
        if (pool.merge_error < 0)
                r = pool.merge_error;
        else if (r >= 0 && pool.error < 0)
                r = pool.error;
        for (size_t i = 0; i < n; i++)
                scan_out_done(&pool.outs[i]);
        pthread_mutex_destroy(&pool.lock);
        free(pool.outs);
        free(pool.done);
        return r;
}
