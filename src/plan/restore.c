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

#include "cold.h"
#include "fs.h"
#include "macro.h"
#include "reason.h"
#include "restore.h"
#include "store.h"
#include "util.h"

/* Does tree tr's store plan its own restores (StoreOps.plan_restore)? Else its sessions are
 * restored whole by the store (StoreOps.run_restore), as planned here. */
static bool restore_by_store_plan(const Tree *tr) {
        return tr->store && tr->store->plan_restore;
}

/* Why no store may restore s: not archived, a conflict, ownership not proven; or NULL. */
static const char *restore_refusal_state(const Session *s) {
        if (s->state == SESSION_CONFLICT)
                return "an active copy exists (conflict)";
        if (s->state != SESSION_ARCHIVED)
                return "not archived";
        if (s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                return "ownership not proven";
        return NULL;
}

/* Why qgc does not merge s's files back (Session.merge_too_big), in the store's words. */
static const char *restore_refusal_merge(const Tree *tr) {
        return tr->store && tr->store->merge_limit ? tr->store->merge_limit
                                                   : "its files are larger than qgc merges (limit)";
}

const char *restore_refusal(const Tree *tr, const Session *s) {
        const char *why = restore_refusal_state(s);

        return why ?: s->merge_too_big ? restore_refusal_merge(tr) : NULL;
}

/* Why a store that restores a session whole cannot restore s, or NULL: also a session in use,
 * one whose place is full, and --to-archive. */
static const char *restore_whole_refusal(const Tree *tr, const Session *s, bool to_archive) {
        const char *why = restore_refusal_state(s);

        if (!why && s->live)
                why = s->live_reason ?: "in use";
        if (!why && s->restore_full)
                why = tr->store && tr->store->restore_full ? tr->store->restore_full
                                                           : "its place is full";
        if (!why && s->merge_too_big)
                why = restore_refusal_merge(tr);
        if (!why && to_archive)
                why = "its store restores it whole: --to-archive does not apply";
        return why;
}

int restore_step_init(const Inventory *inv, size_t t, const Session *s, const char *why,
                      PlanStep *ret) {
        *ret = (PlanStep){
                .kind = PLAN_STEP_RESTORE,
                .tree = t,
                .session = (size_t)(s - inv->sessions),
                .session_id = strdup(s->id),
                .why = why ? strdup(why) : NULL,
                .id = s->archived,
        };
        if (!ret->session_id || (why && !ret->why)) {
                plan_step_done(ret);
                return -ENOMEM;
        }
        return 0;
}

/* The transcript's move of a store that restores a session whole: from its archive to its
 * place, as the store names them (StoreOps.session_path). */
static int restore_store_paths(const Tree *tr, const Session *s, PlanStep *st) {
        _cleanup_free_ char *a = tr->store->session_path ? tr->store->session_path(s, true) : NULL;
        _cleanup_free_ char *b = tr->store->session_path ? tr->store->session_path(s, false) : NULL;
        _cleanup_free_ char *from = a ? util_path_join(tr->runtime_dir, a) : NULL;
        _cleanup_free_ char *to = b ? util_path_join(tr->runtime_dir, b) : NULL;

        if (!tr->store->session_path)
                return 0;
        return from && to ? plan_step_add_path(st, from, to) : -ENOMEM;
}

int restore_resolve(const Inventory *inv, const char *prefix, const char **ret_id,
                    const char **ret_other) {
        size_t n = strlen(prefix);
        const char *found = NULL;

        if (n == 0)
                return -ENOENT;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (util_ascii_strcasecmp(inv->sessions[i].id, prefix) == 0) {
                        *ret_id = inv->sessions[i].id;
                        return 0;
                }
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const char *id = inv->sessions[i].id;

                if (util_ascii_strncasecmp(id, prefix, n) != 0 ||
                    (found && util_ascii_strcasecmp(found, id) == 0))
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

/* The RESTORE step of session s (of tree t), restored whole by its store, added to p. */
static int restore_add_whole(Plan *p, const Inventory *inv, size_t t, const Session *s,
                             bool to_archive) {
        const Tree *tr = &inv->trees[t];
        const char *why = restore_whole_refusal(tr, s, to_archive);
        PlanStep st;
        int r;

        r = restore_step_init(inv, t, s, why, &st);
        if (r >= 0 && !why)
                r = restore_store_paths(tr, s, &st);
        if (r < 0) {
                plan_step_done(&st);
                return r;
        }
        return plan_add_step(p, &st);
}

int restore_add_id(Plan *p, const Inventory *inv, size_t t, const char *id, bool to_archive) {
        const Session *s;
        int r;

        if (restore_by_store_plan(&inv->trees[t]))
                return inv->trees[t].store->plan_restore(p, inv, t, id, to_archive);
        s = inventory_find(inv, t, id); /* its archive, compressed or not, its own */
        r = s ? restore_add_whole(p, inv, t, s, to_archive) : 0;
        return r < 0 ? r : s ? 1 : 0;
}

int restore_plan(const Inventory *inv, const char *id, const char *project, bool to_archive,
                 msec_t now, Plan **ret) {
        _cleanup_(plan_freep) Plan *p = NULL;
        int r;

        r = plan_new_steps(inv, now, &p);
        if (r < 0)
                return r;
        for (size_t t = 0; !project && t < inv->n_trees; t++) {
                r = restore_add_id(p, inv, t, id, to_archive);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; project && i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];

                /* a store that restores a session whole: its refusals shown */
                if (s->state != SESSION_ARCHIVED || !s->cwd || !streq(s->cwd, project) ||
                    (restore_by_store_plan(&inv->trees[s->tree]) && restore_refusal_state(s)))
                        continue;
                /* each session by the path of `qgc restore ID`, so that a compressed one whose
                 * restore was cut short is finished, never moved on beside its .zst */
                r = restore_add_id(p, inv, s->tree, s->id, to_archive);
                if (r < 0)
                        return r;
        }
        if (p->n_steps == 0)
                return -ENOENT;
        *ret = TAKE_PTR(p);
        return 0;
}
