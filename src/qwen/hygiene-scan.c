/* hygiene-scan.c: finding the hygiene items of every tree after the sessions are in the
 * inventory (hygiene_scan()): tool results and *.output files, tmp/<hash>/ of no session, debug
 * logs and plans with no transcript, legacy files, and stale project entries (their examination
 * is hygiene-stale.c's). Read-only. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "fs.h"
#include "hygiene.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "util.h"

static int hygiene_add(Inventory *inv, size_t tree, OrphanKind kind, const char *rel,
                       const char *name, const struct stat *st, const HygieneSum *sum) {
        Orphan o = { .kind = kind, .tree = tree };

        fs_fileid_from_stat(&o.dir, st);
        o.bytes = (uint64_t)st->st_size + (sum ? sum->bytes : 0);
        o.bytes_alloc = (uint64_t)st->st_blocks * 512 + (sum ? sum->bytes_alloc : 0);
        o.mtime = MAX(util_timespec_to_msec(&st->st_mtim), sum ? sum->mtime : 0);
        o.project_dir = strdup(rel);
        o.name = strdup(name);
        if (!o.project_dir || !o.name) {
                inventory_orphan_done(&o);
                return -ENOMEM;
        }
        return inventory_add_orphan(inv, &o);
}

/* Every regular file of dfd (named by rel) accepted by match (NULL: all) as kind. */
static int hygiene_add_files(Inventory *inv, size_t tree, OrphanKind kind, int dfd,
                             const char *rel, dev_t dev, bool (*match)(const char *)) {
        FsDir d;
        const char *name;
        unsigned char type;
        int k, r;

        fs_dir_init(&d, dfd);
        while ((k = fs_dir_next(&d, &name, &type)) > 0) {
                struct stat st;

                if (match && !match(name))
                        continue;
                if (!hygiene_regular(dfd, name, dev, &st))
                        continue; /* Qwen's cleanup too takes regular files only */
                r = hygiene_add(inv, tree, kind, rel, name, &st, NULL);
                if (r < 0)
                        return r;
        }
        return k == -ENOMEM ? k : 0;
}

/* The files of kind in tmp/<hname>/<sub>/ that sub_match accepts (NULL: all), then those in
 * tmp/<hname>/ that top_match accepts. */
static int hygiene_add_pair(Inventory *inv, size_t tree, OrphanKind kind, int hfd, int tfd,
                            const char *hname, const char *sub, dev_t dev,
                            bool (*sub_match)(const char *), bool (*top_match)(const char *)) {
        _cleanup_close_ int sfd = hygiene_open_dir(hfd, sub, dev, NULL);
        _cleanup_close_ int ofd = fs_open_noatime(tfd, hname, O_RDONLY | O_DIRECTORY);
        _cleanup_free_ char *rel = util_strprintf("tmp/%s/%s", hname, sub);
        int r = 0;

        if (!rel)
                return -ENOMEM;
        if (sfd >= 0)
                r = hygiene_add_files(inv, tree, kind, sfd, rel, dev, sub_match);
        rel[strlen(rel) - strlen(sub) - 1] = '\0';
        if (r >= 0 && ofd >= 0)
                r = hygiene_add_files(inv, tree, kind, ofd, rel, dev, top_match);
        return r;
}

static bool hygiene_is_output(const char *n) {
        return util_endswith(n, ".output");
}

static int hygiene_cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The tmp/<hash>/ hashes of tree t's sessions, sorted; *ret_unsure when a session's hash is
 * unknown (no proven cwd, or ownership from a runtime claim: a /cd-migrated session's project
 * is not its first cwd). */
static int hygiene_session_hashes(const Inventory *inv, size_t t, const char ***ret, size_t *ret_n,
                                  bool *ret_unsure) {
        _cleanup_free_ const char **v = calloc(inv->n_sessions ?: 1, sizeof(char *));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        *ret_unsure = false;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                if (s->tree != t)
                        continue;
                if (!s->hash || s->owner == OWNER_CLAIM || s->owner == OWNER_UNVERIFIED)
                        *ret_unsure = true;
                if (s->hash)
                        v[n++] = s->hash;
        }
        qsort(v, n, sizeof(char *), hygiene_cmp_str);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* tmp/<hash>/ entries of one tree. */
static int hygiene_scan_tmp(Inventory *inv, size_t t, int rfd, dev_t dev, unsigned need,
                            bool complete) {
        _cleanup_free_ const char **hashes = NULL;
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int tfd = -EBADF;
        size_t n_hashes = 0;
        bool unsure = true;
        const char *name;
        unsigned char type;
        int k, r;

        if (!d)
                return -ENOMEM;
        tfd = hygiene_open_dir(rfd, "tmp", dev, NULL);
        if (tfd < 0)
                return 0;
        if (need & (1u << ORPHAN_TMP_PROJECT)) {
                r = hygiene_session_hashes(inv, t, &hashes, &n_hashes, &unsure);
                if (r < 0)
                        return r;
                if (unsure)
                        log_notice("'%s': a session without a proven cwd: no tmp/<hash>/ is "
                                   "called stale in this run", inv->trees[t].runtime_dir);
        }
        fs_dir_init(d, tfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                _cleanup_free_ char *hname = NULL;
                _cleanup_close_ int hfd = -EBADF;
                const char *key = name;
                struct stat st;

                if (!qwen_project_hash_valid(name, strlen(name)))
                        continue;
                hname = strdup(name);
                if (!hname)
                        return -ENOMEM;
                hfd = hygiene_open_dir(tfd, hname, dev, &st);
                if (hfd < 0)
                        continue;
                if ((need & (1u << ORPHAN_TMP_PROJECT)) && complete && !unsure &&
                    !bsearch(&key, hashes, n_hashes, sizeof(char *), hygiene_cmp_str)) {
                        HygieneTmp c;
                        r = hygiene_tmp_classify(hfd, dev, &c);
                        if (r < 0)
                                return r;
                        if (!c.why) {
                                _cleanup_close_ int sfd = fs_open_noatime(tfd, hname,
                                                                      O_RDONLY | O_DIRECTORY);
                                HygieneSum sum = {};
                                if (sfd >= 0)
                                        hygiene_sum(sfd, dev, 1, &sum);
                                if (sfd >= 0 && !sum.incomplete) {
                                        /* the whole directory is one item: its files are not
                                         * listed again below */
                                        r = hygiene_add(inv, t, ORPHAN_TMP_PROJECT, "tmp", hname,
                                                        &st, &sum);
                                        if (r < 0)
                                                return r;
                                        continue;
                                }
                        } else
                                log_debug("tmp/%s: no session, but %s: kept", hname, c.why);
                }
                if (need & (1u << ORPHAN_TOOL_RESULT)) {
                        r = hygiene_add_pair(inv, t, ORPHAN_TOOL_RESULT, hfd, tfd, hname,
                                             "tool-results", dev, NULL, hygiene_is_output);
                        if (r < 0)
                                return r;
                }
                if (need & (1u << ORPHAN_LEGACY)) {
                        r = hygiene_add_pair(inv, t, ORPHAN_LEGACY, hfd, tfd, hname, "chats", dev,
                                             hygiene_is_legacy_chat, hygiene_is_checkpoint);
                        if (r < 0)
                                return r;
                }
        }
        return k == -ENOMEM ? k : 0;
}

/* <id><suffix> files of dir (relative to root_fd) with no transcript for <id> in any tree. */
static int hygiene_scan_ids(Inventory *inv, size_t t, int root_fd, dev_t dev, const char *dir,
                            const char *suffix, OrphanKind kind) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int dfd = -EBADF;
        const char *name;
        unsigned char type;
        int k, r;

        if (!d)
                return -ENOMEM;
        dfd = hygiene_open_dir(root_fd, dir, dev, NULL);
        if (dfd < 0)
                return 0;
        fs_dir_init(d, dfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                char id[SESSION_ID_MAX + 1];
                size_t n = strlen(name), sl = strlen(suffix);
                struct stat st;

                if (n <= sl || n - sl > SESSION_ID_MAX || !util_endswith(name, suffix))
                        continue;
                memcpy(id, name, n - sl);
                id[n - sl] = '\0';
                if (!qwen_session_id_valid(id) || inventory_find(inv, SIZE_MAX, id))
                        continue;
                if (!hygiene_regular(dfd, name, dev, &st))
                        continue; /* debug/latest is a symlink: never ours */
                r = hygiene_add(inv, t, kind, dir, name, &st, NULL);
                if (r < 0)
                        return r;
        }
        return k == -ENOMEM ? k : 0;
}

static int hygiene_scan_stale(Inventory *inv, size_t t, int rfd, dev_t dev);

int hygiene_scan(Inventory *inv, const StoreOps *store, unsigned need) {
        bool complete = true;
        int r;

        if (need == 0)
                return 0;
        const char *why = NULL;
        for (size_t t = 0; t < inv->n_trees; t++) {
                if (inv->trees[t].store != store)
                        continue;
                complete = complete && !inv->trees[t].incomplete;
                why = why ?: inv->trees[t].incomplete_why;
        }
        if (!complete && (need & ((1u << ORPHAN_TMP_PROJECT) | (1u << ORPHAN_DEBUG_LOG) |
                                  (1u << ORPHAN_PLAN))))
                log_notice("%s: no stale tmp/<hash>/, debug log or plan is decided in this run",
                           why ?: "a tree was not fully listed");
        r = inventory_index(inv);
        if (r < 0)
                return r;
        for (size_t t = 0; t < inv->n_trees; t++) {
                const Tree *tr = &inv->trees[t];
                _cleanup_close_ int rfd = fs_open_root(tr->runtime_dir, tr->dev);
                _cleanup_close_ int gfd = -EBADF;
                bool g_seen = false;
                struct stat st;

                if (rfd < 0 || tr->store != store)
                        continue;
                r = hygiene_scan_tmp(inv, t, rfd, tr->dev, need, complete);
                if (r < 0)
                        return r;
                if (complete && (need & (1u << ORPHAN_STALE_PROJECT))) {
                        r = hygiene_scan_stale(inv, t, rfd, tr->dev);
                        if (r < 0)
                                return r;
                }
                if (complete && (need & (1u << ORPHAN_DEBUG_LOG))) {
                        r = hygiene_scan_ids(inv, t, rfd, tr->dev, "debug", ".txt",
                                             ORPHAN_DEBUG_LOG);
                        if (r < 0)
                                return r;
                }
                if (!complete || !(need & (1u << ORPHAN_PLAN)))
                        continue;
                /* a G shared by two trees is looked at once */
                for (size_t u = 0; u < t; u++)
                        g_seen = g_seen || streq(inv->trees[u].global_dir, tr->global_dir);
                gfd = g_seen ? -EBADF : fs_open_root(tr->global_dir, 0);
                if (gfd < 0 || fstat(gfd, &st) < 0)
                        continue;
                r = hygiene_scan_ids(inv, t, gfd, st.st_dev, "plans", ".md", ORPHAN_PLAN);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool hygiene_stale_all_temp(const Inventory *inv, size_t first, size_t end) {
        for (size_t i = first; i < end; i++) {
                const Session *s = &inv->sessions[i];
                if (s->owner != OWNER_OK || !s->cwd || !hygiene_temp_path(s->cwd))
                        return false;
        }
        return end > first;
}

/* The stale project entries of tree t (projects/ below rfd). */
static int hygiene_scan_stale(Inventory *inv, size_t t, int rfd, dev_t dev) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        _cleanup_close_ int pfd = -EBADF;
        const char *name;
        unsigned char type;
        size_t base = 0, tend;
        int k, r;

        if (!d)
                return -ENOMEM;
        pfd = hygiene_open_dir(rfd, "projects", dev, NULL);
        if (pfd < 0)
                return 0;
        while (base < inv->n_sessions && inv->sessions[base].tree < t)
                base++;
        tend = base;
        while (tend < inv->n_sessions && inv->sessions[tend].tree == t)
                tend++;
        fs_dir_init(d, pfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                _cleanup_(hygiene_stale_done) HygieneStale h = { .inv = inv, .tree = t, .dev = dev };
                _cleanup_close_ int efd = -EBADF;
                _cleanup_free_ char *dname = strdup(name);
                Orphan o = { .kind = ORPHAN_STALE_PROJECT, .tree = t };
                struct stat st, mst;
                bool mount = false, marked;

                if (!dname)
                        return -ENOMEM;
                if (fs_is_temp_name(dname))
                        continue; /* a stale entry being removed (recover.c) */
                h.dir = dname;
                /* its sessions: a run of the inventory, sorted by (tree, project_dir) */
                for (size_t lo = base, hi = tend; lo < hi;) {
                        size_t mid = lo + (hi - lo) / 2;
                        const char *pd = inv->sessions[mid].project_dir;
                        if (!pd || strcmp(pd, dname) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                        h.first = lo;
                }
                if (base == tend)
                        h.first = base;
                h.end = h.first;
                while (h.end < inv->n_sessions && inv->sessions[h.end].tree == t &&
                       streq(inv->sessions[h.end].project_dir ?: "", dname))
                        h.end++;
                efd = hygiene_open_dir(pfd, dname, dev, &st);
                if (efd < 0)
                        continue;
                marked = fs_statat(efd, HYGIENE_STALE_MARKER, &mst, &mount) == 0;
                /* an entry with no session may still record cwds (sidecars, claims: #7906) */
                if (!marked && h.end > h.first && !hygiene_stale_all_temp(inv, h.first, h.end))
                        continue; /* not a candidate: not listed */
                r = hygiene_stale_examine(&h, efd);
                if (r < 0)
                        return r;
                if (!marked && (h.cwd_back || !h.cwds.buf || !h.cwds.buf[0]))
                        continue; /* a temporary directory in use, or nothing recorded */
                fs_fileid_from_stat(&o.dir, &st);
                o.bytes = (uint64_t)st.st_size + h.bytes;
                o.bytes_alloc = (uint64_t)st.st_blocks * 512 + h.bytes_alloc;
                o.mtime = h.mtime;
                o.marker = h.marker;
                o.cwd_back = h.cwd_back;
                o.project_dir = strdup("projects");
                o.name = TAKE_PTR(dname);
                o.stale_why = TAKE_PTR(h.why);
                o.cwds = strbuf_steal(&h.cwds);
                if (!o.project_dir || !o.cwds) {
                        inventory_orphan_done(&o);
                        return -ENOMEM;
                }
                r = inventory_add_orphan(inv, &o);
                if (r < 0)
                        return r;
        }
        return k == -ENOMEM ? k : 0;
}
