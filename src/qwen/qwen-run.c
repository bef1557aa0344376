/* qwen-run.c: qwen_store's run operations on one tree (qwen-run.h): a run's open tree, an orphan reclaimed
 * (orphans.h, hygiene-reclaim.h) with the reason and path the journal names it by, and a step
 * of the recovery pass (recover.h) with its reason. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "hygiene-reclaim.h"
#include "live.h"
#include "macro.h"
#include "orphans.h"
#include "plan.h"
#include "policy.h"
#include "qwen-run.h"
#include "recover.h"
#include "usage-index.h"
#include "util.h"

/* A tree whose roots cannot be opened still gets a run (*ret): its orphans fail, named as Qwen
 * names them. Returns why its sessions cannot be acted on (QwenRun.session_error: its roots, its
 * liveness probe), or -ENOMEM without a run. */
int qwen_run_open(const Inventory *inv, size_t t, struct StoreRun **ret) {
        _cleanup_free_ QwenRun *run = calloc(1, sizeof(*run));
        const Tree *tr = &inv->trees[t];
        FsRoot root = FS_ROOT_NULL;
        int r;

        if (!run)
                return -ENOMEM;
        *run = (QwenRun){ .inv = inv, .tree = t, .global_fd = -EBADF, .runtime_fd = -EBADF };
        run->runtime_fds = calloc(inv->n_trees, sizeof(int));
        if (!run->runtime_fds)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_trees; i++) {
                run->runtime_fds[i] = -EBADF;
                if (inv->trees[i].store == tr->store &&
                    fs_root_open(inv->trees[i].runtime_dir, inv->trees[i].dev, &root) >= 0)
                        run->runtime_fds[i] = TAKE_FD(root.fd);
        }
        run->error = fs_root_open(tr->runtime_dir, tr->dev, &root);
        if (run->error >= 0) {
                run->runtime_fd = TAKE_FD(root.fd);
                run->error = fs_root_open(tr->global_dir, 0, &root);
        }
        if (run->error >= 0) {
                run->global_fd = TAKE_FD(root.fd);
                run->global_dev = root.dev;
                run->error = 0;
        }
        /* its sessions' steps (qwen-session.c) need its liveness probe and usage index too */
        r = usage_index_new(&run->usage);
        if (r < 0) {
                qwen_run_close((struct StoreRun *)TAKE_PTR(run));
                return r;
        }
        run->session_error = run->error < 0 ? run->error : live_probe_new(tr, &run->probe);
        if (run->session_error > 0)
                run->session_error = 0;
        r = run->session_error;
        *ret = (struct StoreRun *)TAKE_PTR(run);
        return r;
}

void qwen_run_close(struct StoreRun *r) {
        QwenRun *run = (QwenRun *)r;

        if (!run)
                return;
        for (size_t i = 0; i < run->inv->n_trees; i++)
                macro_safe_close(run->runtime_fds[i]);
        free(run->runtime_fds);
        macro_safe_close(run->global_fd);
        macro_safe_close(run->runtime_fd);
        live_probe_free(run->probe);
        usage_index_free(run->usage);
        free(run);
}

/* r with its reason: a failure (-errno, step->failed: never read as one of store.h's skips), or
 * a skip (0: -EAGAIN). */
static int qwen_run_outcome(StoreStep *step, int r, const char *why) {
        step->why = why ? strdup(why) : NULL;
        step->failed = r < 0;
        return r < 0 ? r : -EAGAIN;
}

/* Write or remove stale project entry o's marker (hygiene.h). */
static int qwen_run_stale_mark(QwenRun *run, const Orphan *o, const Verdict *v, StoreStep *step) {
        const char *why = NULL;
        int r = hygiene_reclaim_stale(run->inv, o, v->mark, /* remove= */ false, run->runtime_fd,
                                      run->inv->trees[o->tree].dev, step->hook, step->userdata,
                                      &why);

        if (r <= 0)
                return qwen_run_outcome(step, r, why ?: "cannot open the tree");
        if (v->mark > 0 || o->stale_why)
                step->why = strdup(v->mark > 0 ? "every recorded cwd is a vanished temporary directory"
                                               : o->stale_why);
        return 0;
}

int qwen_run_orphan(struct StoreRun *r_, const Orphan *o, const Verdict *v, StoreStep *step) {
        QwenRun *run = (QwenRun *)r_;
        const Tree *tr = &run->inv->trees[o->tree];
        _cleanup_free_ char *rel = NULL;
        const char *why = NULL;
        int root_fd = run->runtime_fd, r;
        dev_t dev = tr->dev;

        step->bytes = o->bytes;
        switch (o->kind) {
        case ORPHAN_FILE_HISTORY:
                rel = strdup("file-history");
                step->path = util_strprintf("%s/file-history/%s", tr->global_dir, o->name);
                root_fd = run->global_fd;
                dev = run->global_dev;
                break;
        case ORPHAN_SUBAGENTS:
                rel = util_strprintf("projects/%s/subagents", o->project_dir);
                step->path = util_strprintf("%s/%s/%s", tr->runtime_dir, rel ? rel : "", o->name);
                break;
        case ORPHAN_EMPTY_PROJECT:
                rel = strdup("projects");
                step->path = util_strprintf("%s/projects/%s", tr->runtime_dir, o->name);
                break;
        default:
                if (!inventory_hygiene_kind(o->kind))
                        return -EOPNOTSUPP;
                /* hygiene (hygiene.h): project_dir is the directory below R, or G for plans */
                rel = strdup(o->project_dir ?: "");
                root_fd = o->kind == ORPHAN_PLAN ? run->global_fd : run->runtime_fd;
                dev = o->kind == ORPHAN_PLAN ? run->global_dev : dev;
                step->path = util_strprintf("%s/%s/%s",
                                            o->kind == ORPHAN_PLAN ? tr->global_dir : tr->runtime_dir,
                                            rel ? rel : "", o->name);
                break;
        }
        if (!rel || !step->path) {
                free(step->path);
                step->path = strdup(o->name);
                return qwen_run_outcome(step, -ENOMEM, "out of memory");
        }
        if (run->error < 0)
                return qwen_run_outcome(step, run->error, "cannot open the tree");
        if (o->kind == ORPHAN_STALE_PROJECT && v->verb != VERB_DELETE)
                return qwen_run_stale_mark(run, o, v, step);
        if (o->kind == ORPHAN_STALE_PROJECT)
                r = hygiene_reclaim_stale(run->inv, o, 0, /* remove= */ true, root_fd, dev,
                                          step->hook, step->userdata, &why);
        else if (inventory_hygiene_kind(o->kind))
                r = hygiene_reclaim_orphan(o, root_fd, dev, run->runtime_fds, run->inv->n_trees,
                                           step->hook, step->userdata, &why);
        else
                r = orphans_reclaim(o, root_fd, rel, dev, run->runtime_fds, run->inv->n_trees,
                                    step->hook, step->userdata, &why);
        return r > 0 ? 0 : qwen_run_outcome(step, r, why);
}

int qwen_run_recover_step(struct StoreRun *r_, const PlanStep *st, StoreStep *step) {
        QwenRun *run = (QwenRun *)r_;
        const char *why = NULL;
        int r;

        if (st->kind == PLAN_STEP_RECOVER_TEMP) {
                r = recover_remove_temp(st->in_global ? run->global_fd : run->runtime_fd,
                                        st->in_global ? run->global_dev
                                                      : run->inv->trees[run->tree].dev,
                                        st, step->hook, step->userdata);
                if (r < 0)
                        step->why = strdup("cannot remove the temporary file");
                return r < 0 ? r : r > 0;
        }
        r = recover_finish_delete(run->global_fd, run->global_dev, run->runtime_fd,
                                  run->inv->trees[run->tree].dev, st, step->hook, step->userdata,
                                  &why);
        if (r == -ESTALE)
                return 0; /* the marker was replaced or removed since the scan: not ours to judge */
        step->why = why ? strdup(why) : r < 0 ? NULL
                                              : util_strprintf("%d file(s) of the session removed", r);
        return r < 0 ? r : 1;
}
