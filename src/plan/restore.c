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

/* Does tree tr's store restore its sessions itself (StoreOps.run_restore)? */
static bool restore_by_store(const Tree *tr) {
        return tr->store && tr->store->run_restore;
}

/* Why the session cannot be restored, or NULL. A store that restores itself also refuses a
 * session in use, and one whose place is full. */
static const char *restore_refusal(const Tree *tr, const Session *s) {
        if (s->state == SESSION_CONFLICT)
                return "an active copy exists (conflict)";
        if (s->state != SESSION_ARCHIVED)
                return "not archived";
        if (s->owner == OWNER_FOREIGN || s->owner == OWNER_UNVERIFIED)
                return "ownership not proven";
        if (restore_by_store(tr) && s->live)
                return s->live_reason ?: "in use";
        if (restore_by_store(tr) && s->restore_full)
                return tr->store->restore_full;
        return NULL;
}

/* The transcript's move of a store that restores itself: from its archive to its place, as the
 * store names them (StoreOps.session_path). */
static int restore_store_paths(const Tree *tr, const Session *s, PlanStep *st) {
        _cleanup_free_ char *a = tr->store->session_path ? tr->store->session_path(s, true) : NULL;
        _cleanup_free_ char *b = tr->store->session_path ? tr->store->session_path(s, false) : NULL;
        _cleanup_free_ char *from = a ? util_path_join(tr->runtime_dir, a) : NULL;
        _cleanup_free_ char *to = b ? util_path_join(tr->runtime_dir, b) : NULL;

        if (!tr->store->session_path)
                return 0;
        return from && to ? plan_step_add_path(st, from, to) : -ENOMEM;
}

/* The transcript and the sidecars present in chats/archive/ of s, as from -> to paths. */
static int restore_paths(const Tree *tr, const Session *s, PlanStep *st) {
        static const char *const exts[] = { "jsonl", "worktree.json", "pr.json", "ledger.jsonl" };
        _cleanup_free_ char *chats =
                util_strprintf("%s/projects/%s/chats", tr->runtime_dir, s->project_dir);
        _cleanup_free_ char *rel = util_strprintf("projects/%s/chats/archive", s->project_dir);
        _cleanup_close_ int root_fd = -EBADF, dir_fd = -EBADF;
        int r;

        if (!chats || !rel)
                return -ENOMEM;
        root_fd = fs_open_root(tr->runtime_dir, tr->dev);
        if (root_fd >= 0)
                dir_fd = fs_open_path(root_fd, rel, tr->dev);
        for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *name = util_strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *from = NULL, *to = NULL;
                struct stat sb;

                if (!name)
                        return -ENOMEM;
                /* the transcript always (the scan saw it); a sidecar when it is there now */
                if (i > 0 && (dir_fd < 0 || fstatat(dir_fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                              !S_ISREG(sb.st_mode)))
                        continue;
                from = util_strprintf("%s/archive/%s", chats, name);
                to = util_strprintf("%s/%s", chats, name);
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

/* Add the RESTORE step of session s (of tree t) to p. */
static int restore_add(Plan *p, const Inventory *inv, size_t t, const Session *s,
                       bool to_archive) {
        const Tree *tr = &inv->trees[t];
        const char *why = restore_refusal(tr, s);

        if (!why && s->merge_too_big) /* the store's words, Qwen's sidecars */
                why = tr->store && tr->store->merge_limit
                              ? tr->store->merge_limit
                              : "its files are larger than qgc merges (limit)";

        if (!why && to_archive && restore_by_store(tr))
                why = "its store restores it whole: --to-archive does not apply";
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
        r = why                   ? 0
            : restore_by_store(tr) ? restore_store_paths(tr, s, &st)
                                   : restore_paths(tr, s, &st);
        if (r < 0) {
                plan_step_done(&st);
                return r;
        }
        return plan_add_step(p, &st);
}

/* A session compressed in the cold tier of tree t (cold.h; the scan lists it archived): one
 * RESTORE step with no inventory session (session = SIZE_MAX), dir = its .qgc-cold directory
 * relative to the runtime root, name = the id, the .zst files to decompress as paths (to their
 * place in chats/, or in chats/archive/ when to_archive). 1 added, 0 none, -errno. */
static int restore_cold_step(const Inventory *inv, size_t t, const char *id, bool to_archive,
                             Plan *p) {
        static const char *const exts[] = { "worktree.json", "pr.json", "ledger.jsonl", "jsonl" };
        const Tree *tr = &inv->trees[t];
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int root_fd = -EBADF, pfd = -EBADF;
        _cleanup_free_ char *tname = util_strprintf("%s.jsonl%s", id, COLD_SUFFIX);
        const char *proj;
        unsigned char type;
        struct stat sb;

        if (!d || !tname)
                return -ENOMEM;
        if (strchr(id, '/') || streq(id, ".") || streq(id, ".."))
                return 0;
        root_fd = fs_open_root(tr->runtime_dir, tr->dev);
        if (root_fd < 0)
                return 0;
        /* listed with O_NOATIME where permitted, like the scan: a dry run changes no atime */
        pfd = fs_open_noatime(root_fd, "projects", O_RDONLY | O_DIRECTORY);
        if (pfd < 0 || fstat(pfd, &sb) < 0 || sb.st_dev != tr->dev)
                return 0;
        fs_dir_init(d, pfd);
        while (fs_dir_next(d, &proj, &type) > 0) {
                _cleanup_free_ char *rel =
                        util_strprintf("projects/%s/chats/archive/" COLD_DIR, proj);
                _cleanup_free_ char *arel = util_strprintf("projects/%s/chats/archive", proj);
                _cleanup_free_ char *crel = util_strprintf("projects/%s/chats", proj);
                _cleanup_close_ int cfd = -EBADF, afd = -EBADF;
                int r;

                if (!rel || !arel || !crel)
                        return -ENOMEM;
                cfd = fs_open_path(root_fd, rel, tr->dev);
                if (cfd < 0 || fstatat(cfd, tname, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(sb.st_mode))
                        continue;
                afd = fs_open_path(root_fd, arel, tr->dev);
                _cleanup_close_ int chats_fd = afd >= 0 ? fs_open_path(root_fd, crel, tr->dev)
                                                        : -EBADF;
                PlanStep st = {
                        .kind = PLAN_STEP_RESTORE,
                        .tree = t,
                        .session = SIZE_MAX,
                        .session_id = strdup(id),
                        .dir = strdup(rel),
                        .name = strdup(id),
                        .to_archive = to_archive,
                };
                if (!st.session_id || !st.dir || !st.name) {
                        plan_step_done(&st);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
                        _cleanup_free_ char *n = util_strprintf("%s.%s", id, exts[i]);
                        _cleanup_free_ char *zn =
                                util_strprintf("%s.%s%s", id, exts[i], COLD_SUFFIX);
                        _cleanup_free_ char *from = NULL, *to = NULL;

                        if (!n || !zn) {
                                plan_step_done(&st);
                                return -ENOMEM;
                        }
                        if (fstatat(cfd, zn, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
                                continue;
                        /* a copy already in chats/archive/ is the end of an interrupted restore
                         * when it matches (cold_restore_files() checks), else a conflict then; an
                         * active transcript is a conflict now */
                        if (!st.why && i + 1 == ELEMENTSOF(exts) && chats_fd >= 0 &&
                            fs_exists(chats_fd, n) > 0)
                                st.why = strdup("an active copy exists (conflict)");
                        /* the plan is the run: a .zst the executor would refuse (its content
                         * past the recorded size, not what the trailer records, a dictionary
                         * this qgc lacks) is refused here, decompressed to nowhere, bounded as
                         * the executor's decompression is (cold.h) */
                        if (!st.why) {
                                r = cold_cat(cfd, n, -EBADF);
                                if (r < 0 && cold_damage_why(r))
                                        st.why = strdup(cold_damage_why(r));
                        }
                        from = util_strprintf("%s/%s/%s", tr->runtime_dir, rel, zn);
                        to = util_strprintf("%s/%s/%s", tr->runtime_dir, to_archive ? arel : crel,
                                            n);
                        r = from && to ? plan_step_add_path(&st, from, to) : -ENOMEM;
                        if (r < 0) {
                                plan_step_done(&st);
                                return r;
                        }
                }
                r = plan_add_step(p, &st);
                return r < 0 ? r : 1;
        }
        return 0;
}

/* The RESTORE step of session id in tree t, in whatever state an earlier restore left it:
 * compressed in the cold tier, decompressed back (which also finishes a restore killed after the
 * transcript was back but before its .zst went) and moved on into chats/ unless to_archive, else
 * moved back from chats/archive/ (which finishes one killed after the decompression). The one
 * path of `qgc restore ID` and `qgc restore --project`. 1 added, 0 none, -errno. */
int restore_add_id(Plan *p, const Inventory *inv, size_t t, const char *id, bool to_archive) {
        const Session *s = inventory_find(inv, t, id);
        int r;

        if (restore_by_store(&inv->trees[t])) { /* its archive, compressed or not, its own */
                r = s ? restore_add(p, inv, t, s, to_archive) : 0;
                return r < 0 ? r : s ? 1 : 0;
        }
        r = restore_cold_step(inv, t, id, to_archive, p);
        if (r != 0 || !s || session_is_cold(s))
                return r;
        r = restore_add(p, inv, t, s, false);
        return r < 0 ? r : 1;
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

                /* a store that restores itself: its refusals shown */
                if (s->state != SESSION_ARCHIVED || !s->cwd || !streq(s->cwd, project) ||
                    (!restore_by_store(&inv->trees[s->tree]) &&
                     restore_refusal(&inv->trees[s->tree], s)))
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
