/* restore.c: the plan of `qgc restore ID`. A restore is a plan verb like archive and delete: a dry
 * run prints this plan (what would move, from where to where, sidecars included), a real run
 * hands it to the executor, which takes the locks, re-checks every identity and journals. This
 * file only looks: fstatat() of the sidecars, nothing opened for reading, nothing written. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "macro.h"
#include "restore.h"
#include "util.h"

/* Why the session cannot be restored, or NULL. */
static const char *restore_refusal(const Session *s) {
        if (s->state == SESSION_CONFLICT)
                return "an active copy exists (conflict)";
        if (s->state != SESSION_ARCHIVED)
                return "not archived";
        if (s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                return "ownership not proven";
        return NULL;
}

/* The transcript and the sidecars present in chats/archive/ of s, as from -> to paths. */
static int restore_paths(const Tree *tr, const Session *s, PlanStep *st) {
        static const char *const exts[] = { "jsonl", "worktree.json", "pr.json", "ledger.jsonl" };
        _cleanup_free_ char *chats = strprintf("%s/projects/%s/chats", tr->runtime_dir,
                                               s->project_dir);
        _cleanup_free_ char *rel = strprintf("projects/%s/chats/archive", s->project_dir);
        _cleanup_close_ int root_fd = -EBADF, dir_fd = -EBADF;
        int r;

        if (!chats || !rel)
                return -ENOMEM;
        root_fd = fs_open_root(tr->runtime_dir, tr->dev);
        if (root_fd >= 0)
                dir_fd = fs_open_path(root_fd, rel, tr->dev);
        for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *name = strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *from = NULL, *to = NULL;
                struct stat sb;

                if (!name)
                        return -ENOMEM;
                /* the transcript always (the scan saw it); a sidecar when it is there now */
                if (i > 0 && (dir_fd < 0 || fstatat(dir_fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                              !S_ISREG(sb.st_mode)))
                        continue;
                from = strprintf("%s/archive/%s", chats, name);
                to = strprintf("%s/%s", chats, name);
                if (!from || !to)
                        return -ENOMEM;
                r = plan_step_add_path(st, from, to);
                if (r < 0)
                        return r;
        }
        return 0;
}

int restore_resolve(const Inventory *inv, const char *prefix, const char **ret_id,
                    const char **ret_other) {
        size_t n = strlen(prefix);
        const char *found = NULL;

        if (n == 0)
                return -ENOENT;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (strcasecmp(inv->sessions[i].id, prefix) == 0) {
                        *ret_id = inv->sessions[i].id;
                        return 0;
                }
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const char *id = inv->sessions[i].id;

                if (strncasecmp(id, prefix, n) != 0 || (found && strcasecmp(found, id) == 0))
                        continue;
                if (found) {
                        *ret_id = found;
                        *ret_other = id;
                        return -ENOTUNIQ;
                }
                found = id;
        }
        if (!found)
                return -ENOENT;
        *ret_id = found;
        return 0;
}

/* Add the RESTORE step of session s (of tree t) to p. */
static int restore_add(Plan *p, const Inventory *inv, size_t t, const Session *s) {
        const char *why = restore_refusal(s);
        PlanStep st = {
                .kind = PLAN_STEP_RESTORE,
                .tree = t,
                .session = (size_t)(s - inv->sessions),
                .session_id = strdup(s->id),
                .why = why ? strdup(why) : NULL,
                .id = s->archived,
        };
        int r;

        if (!st.session_id || (why && !st.why)) {
                plan_step_done(&st);
                return -ENOMEM;
        }
        r = why ? 0 : restore_paths(&inv->trees[t], s, &st);
        if (r < 0) {
                plan_step_done(&st);
                return r;
        }
        return plan_add_step(p, &st);
}

int restore_plan_project(const Inventory *inv, const char *project, msec_t now, Plan **ret) {
        _cleanup_(plan_freep) Plan *p = NULL;
        int r;

        r = plan_new_steps(inv, now, &p);
        if (r < 0)
                return r;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];

                if (s->state != SESSION_ARCHIVED || !s->cwd || !streq(s->cwd, project) ||
                    restore_refusal(s))
                        continue;
                r = restore_add(p, inv, s->tree, s);
                if (r < 0)
                        return r;
        }
        if (p->n_steps == 0)
                return -ENOENT;
        *ret = TAKE_PTR(p);
        return 0;
}

int restore_plan(const Inventory *inv, const char *id, msec_t now, Plan **ret) {
        _cleanup_(plan_freep) Plan *p = NULL;
        int r;

        r = plan_new_steps(inv, now, &p);
        if (r < 0)
                return r;
        for (size_t t = 0; t < inv->n_trees; t++) {
                const Session *s = inventory_find(inv, t, id);

                if (!s)
                        continue;
                r = restore_add(p, inv, t, s);
                if (r < 0)
                        return r;
        }
        if (p->n_steps == 0)
                return -ENOENT;
        *ret = TAKE_PTR(p);
        return 0;
}
