/* scan.c: the read-only walk of Qwen trees into the Inventory.
 *
 * Per tree: R/projects/<p>/chats/ and chats/archive/ through directory fds (fsutil.c's
 * fs_openat() and fs_statat()), never leaving the filesystem of R or entering a mount point (a
 * bind mount of the same filesystem included), never following a symlink, never blocking on
 * a FIFO and never writing (O_NOATIME when permitted, so a dry run leaves atimes alone). Each
 * directory is listed once: sidecars, runtime claims, subagents/, G/file-history/,
 * session-organization.v1.json and tmp/<hash>/{scheduled_tasks,logs}.json are read once per
 * directory, project or hash and looked up per session, so the cost is O(n log n) in the
 * number of sessions with one head and one tail read per transcript.
 * Directory totals and orphans are in scanaggs.c, the threads that scan projects in scanpool.c,
 * the reading of one session (its copies, sidecars, times) in scan-session.c. The scan gathers
 * facts only: after a project's walk, in the same thread and with its directories still open,
 * scan_project_passes() runs the ownership (ownership.c), enrichment (enrich.c: tasks,
 * organization, worktree sidecars) and liveness (live.c) passes over its sessions. */
#include "autoconf.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cold.h"
#include "erase.h"
#include "fsread.h"
#include "fsutil.h"
#include "hygiene.h"
#include "json.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "owner.h"
#include "qwen.h"
#include "record.h"
#include "roots.h"
#include "scan.h"
#include "session-times.h"
#include "scan-int.h"


static int scan_cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_names_add(ScanNames *n, const char *name) {
        char *s = strdup(name);

        if (!s || greedy_realloc((void **)&n->v, &n->alloc, n->n + 1, sizeof(char *)) < 0) {
                free(s);
                return -ENOMEM;
        }
        n->v[n->n++] = s;
        return 0;
}

static void scan_names_done(ScanNames *n) {
        for (size_t i = 0; i < n->n; i++)
                free(n->v[i]);
        free(n->v);
        *n = (ScanNames){};
}

bool scan_names_has(const ScanNames *n, const char *name) {
        return n->n > 0 && bsearch(&name, n->v, n->n, sizeof(char *), scan_cmp_str);
}

static void scan_entries_done(ScanEntries *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->v[i].name);
        free(e->v);
        *e = (ScanEntries){};
}

/* Case-insensitive order of ids (ties by exact id). */
static int scan_cmp_entry(const void *a, const void *b) {
        const ScanEntry *x = a, *y = b;
        int c = ascii_strcasecmp(x->id, y->id);
        return c != 0 ? c : strcmp(x->id, y->id);
}

/* Add transcript name (session id) to e. */
static int scan_entries_add(ScanEntries *e, const char id[SESSION_ID_MAX + 1], const char *name,
                            unsigned char type) {
        ScanEntry x = { .type = type };

        memcpy(x.id, id, sizeof(x.id));
        x.name = strdup(name);
        if (!x.name || greedy_realloc((void **)&e->v, &e->alloc, e->n + 1, sizeof(ScanEntry)) < 0) {
                free(x.name);
                return -ENOMEM;
        }
        e->v[e->n++] = x;
        return 0;
}

/* End a listing: the error of the loop (r) or of the listing (k), else sort entries by
 * scan_cmp_entry() and other names by byte order. */
static int scan_list_end(int r, int k, ScanEntries *e, ScanNames *other) {
        if (r < 0)
                return r;
        if (k < 0)
                return k;
        if (e->n > 1)
                qsort(e->v, e->n, sizeof(ScanEntry), scan_cmp_entry);
        if (other->n > 1)
                qsort(other->v, other->n, sizeof(char *), scan_cmp_str);
        return 0;
}

/* List a chats/ or archive/ dir: transcripts into e, other names into other, claims (chats/
 * only) into claims. *ret_n_entries counts every entry (for the empty-project test), *ret_archive
 * says whether an "archive" directory was seen. */
static int scan_list_chats(int dfd, ScanEntries *e, ScanNames *other, ClaimSet *claims,
                           size_t *ret_n_entries) {
        FsDir dir, *d = &dir;
        struct { const char *d_name; unsigned char d_type; } de_, *de = &de_;
        size_t n = 0;
        int r = 0, k;

        fs_dir_init(d, dfd);
        while ((k = fs_dir_next(d, &de->d_name, &de->d_type)) > 0) {
                char id[SESSION_ID_MAX + 1];

                n++;
                if (qwen_session_file_name(de->d_name, id)) {
                        r = scan_entries_add(e, id, de->d_name, de->d_type);
                        if (r < 0)
                                break;
                        continue;
                }
                r = scan_names_add(other, de->d_name);
                if (r < 0)
                        break;
                if (claims && claims_is_claim_name(de->d_name)) {
                        r = claims_add(claims, dfd, de->d_name);
                        if (r < 0)
                                break;
                }
        }
        r = scan_list_end(r, k, e, other);
        if (r < 0)
                return r;
        *ret_n_entries = n;
        return 0;
}

/* List chats/archive/.qgc-cold/: <id>.jsonl.zst transcripts into e (name: the .zst), every
 * other name into other. */
static int scan_list_cold(int dfd, ScanEntries *e, ScanNames *other) {
        FsDir dir, *d = &dir;
        const char *name;
        unsigned char type;
        int r = 0, k;

        fs_dir_init(d, dfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                size_t l = strlen(name), ls = strlen(COLD_SUFFIX);
                char base[NAME_MAX + 1], id[SESSION_ID_MAX + 1];

                if (l > ls && l < sizeof base && streq(name + l - ls, COLD_SUFFIX)) {
                        memcpy(base, name, l - ls);
                        base[l - ls] = 0;
                        if (qwen_session_file_name(base, id)) {
                                r = scan_entries_add(e, id, name, type);
                                if (r < 0)
                                        break;
                                continue;
                        }
                }
                r = scan_names_add(other, name);
                if (r < 0)
                        break;
        }
        return scan_list_end(r, k, e, other);
}

/* Open a subdirectory (dfd, name) on dev, without following a symlink. -ENOENT when absent,
 * -ELOOP for a symlink, -ENOTDIR, -EXDEV for another filesystem or any mount point (a bind
 * mount of the same filesystem too). */
static int scan_open_subdir(int dfd, const char *name, dev_t dev, struct stat *ret_st) {
        struct stat st;
        bool mount = false;
        int fd;

        fd = fs_statat(dfd, name, &st, &mount);
        if (fd < 0)
                return fd;
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if (st.st_dev != dev || mount)
                return -EXDEV;
        fd = fs_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);
        if (fd >= 0 && ret_st)
                *ret_st = st;
        return fd;
}

/* Record an empty project directory as an orphan. */
static int scan_empty_project(ScanCtx *ctx, int projects_fd, const char *name, msec_t newest) {
        struct stat st;
        Orphan o = { .kind = ORPHAN_EMPTY_PROJECT, .tree = ctx->tree };
        _cleanup_close_ int pfd = -EBADF;
        ScanAgg a = {};

        if (fstatat(projects_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        fs_fileid_from_stat(&o.dir, &st);
        a.bytes = (uint64_t)st.st_size;
        a.bytes_alloc = (uint64_t)st.st_blocks * 512;
        a.mtime = MAX(newest, scan_ts_msec(&st.st_mtim));
        pfd = fs_open_noatime(projects_fd, name, O_RDONLY | O_DIRECTORY);
        if (pfd >= 0 && scan_dir_sum(pfd, ctx->dev, 1, &a) == -ENOMEM)
                return -ENOMEM;
        o.bytes = a.bytes;
        o.bytes_alloc = a.bytes_alloc;
        o.mtime = a.mtime;
        o.project_dir = strdup(name);
        o.name = strdup(name);
        if (!o.project_dir || !o.name) {
                orphan_done(&o);
                return -ENOMEM;
        }
        return scan_out_add_orphan(ctx->out, &o);
}

/* A directory of project name could not be listed (error r): -ENOMEM stays an error; else the
 * project is skipped (1): none of its sessions, no orphan candidates, and, unless it was simply
 * removed meanwhile (ENOENT), the tree is marked incomplete. */
static int scan_project_unlisted(ScanCtx *ctx, const char *name, const char *what, int r) {
        if (r == -ENOMEM)
                return r;
        if (r != -ENOENT) {
                log_warning_errno(r, "projects/%s/%s: cannot be listed, project skipped (no tree "
                                     "caps or orphans for this tree in this run)",
                                  name, what);
                ctx->out->incomplete = true;
        }
        return 1;
}

/* Walk chats/ (and archive/) of a project and add its sessions; counts entries for emptiness.
 * Returns 0, 1 when the project was skipped (scan_project_unlisted()), or -ENOMEM. */
static int scan_project_chats(ScanCtx *ctx, ScanProject *p, int pfd, bool *ret_empty) {
        _cleanup_(scan_entries_done) ScanEntries act = {}, arc = {}, cold = {};
        size_t n_chats = 0, n_archive = 0, i = 0, j = 0, l = 0, pi = 0, pj = 0;
        struct stat st;
        int r;

        *ret_empty = false;
        p->chats_fd = scan_open_subdir(pfd, "chats", ctx->dev, &st);
        if (p->chats_fd == -ENOENT) {
                *ret_empty = true;
                return 0;
        }
        if (p->chats_fd < 0) {
                log_debug("projects/%s/chats: %s, skipped", p->name, errno_to_string(-p->chats_fd));
                return 0;
        }
        r = scan_list_chats(p->chats_fd, &act, &p->chats_other, &p->claims, &n_chats);
        if (r < 0)
                return scan_project_unlisted(ctx, p->name, "chats/", r);
        claims_sort(&p->claims);
        if (scan_names_has(&p->chats_other, "archive")) {
                p->archive_fd = scan_open_subdir(p->chats_fd, "archive", ctx->dev, NULL);
                if (p->archive_fd >= 0) {
                        r = scan_list_chats(p->archive_fd, &arc, &p->archive_other, NULL,
                                            &n_archive);
                        if (r < 0)
                                return scan_project_unlisted(ctx, p->name, "chats/archive/", r);
                        *ret_empty = n_chats == 1 && n_archive == 0;
                        if (scan_names_has(&p->archive_other, COLD_DIR)) {
                                p->cold_fd = scan_open_subdir(p->archive_fd, COLD_DIR, ctx->dev,
                                                              NULL);
                                r = p->cold_fd;
                                if (r >= 0)
                                        r = scan_list_cold(p->cold_fd, &cold, &p->cold_other);
                                /* its sessions' other files would look like orphans */
                                if (r < 0)
                                        return scan_project_unlisted(
                                                ctx, p->name, "chats/archive/" COLD_DIR "/",
                                                r == -ENOENT ? -EIO : r);
                                /* an empty cold tier (all its sessions gone) is no content */
                                if (n_archive == 1 && cold.n == 0 && p->cold_other.n == 0)
                                        *ret_empty = n_chats == 1;
                        }
                } else
                        log_debug("projects/%s/chats/archive: %s, skipped", p->name,
                                  errno_to_string(-p->archive_fd));
        } else
                *ret_empty = n_chats == 0;

        /* what the passes decide from: one entry per session, at most one per listed name */
        p->owner_facts = calloc(MAX(act.n + arc.n + cold.n, (size_t)1), sizeof(OwnerFacts));
        p->enrich_facts = calloc(MAX(act.n + arc.n + cold.n, (size_t)1), sizeof(EnrichFacts));
        p->live_facts = calloc(MAX(act.n + arc.n + cold.n, (size_t)1), sizeof(LiveFacts));
        if (!p->owner_facts || !p->enrich_facts || !p->live_facts)
                return -ENOMEM;

        /* merge the sorted lists: an id in chats/ and in an archive is a conflict */
        while (i < act.n || j < arc.n || l < cold.n) {
                const char *id = NULL;
                const ScanEntry *a = NULL, *b = NULL, *z = NULL;

                /* on a cold page cache, the next transcripts' reads go to the disk meanwhile */
                scan_prefetch_ahead(ctx, p->chats_fd, &act, i, &pi, /* archived= */ false);
                scan_prefetch_ahead(ctx, p->archive_fd, &arc, j, &pj, /* archived= */ true);

                if (i < act.n)
                        id = act.v[i].id;
                if (j < arc.n && (!id || ascii_strcasecmp(arc.v[j].id, id) < 0))
                        id = arc.v[j].id;
                if (l < cold.n && (!id || ascii_strcasecmp(cold.v[l].id, id) < 0))
                        id = cold.v[l].id;
                if (i < act.n && ascii_strcasecmp(act.v[i].id, id) == 0)
                        a = &act.v[i++];
                if (j < arc.n && ascii_strcasecmp(arc.v[j].id, id) == 0)
                        b = &arc.v[j++];
                if (l < cold.n && ascii_strcasecmp(cold.v[l].id, id) == 0)
                        z = &cold.v[l++];
                r = scan_session(ctx, p, a, b, z);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The passes over the sessions the scan added for project p, in this order: ownership (its cwd
 * and hash find the tasks), enrichment, liveness. When the walk (r < 0) or a pass failed, the
 * project's sessions are dropped, none of them decided in part. Returns r, or the pass's
 * -ENOMEM. */
static int scan_project_passes(ScanCtx *ctx, ScanProject *p, int r) {
        size_t n = ctx->out->n_sessions - p->first;
        Session *s = n > 0 ? ctx->out->sessions + p->first : NULL;
        EnrichProject ep = { .tmp_fd = ctx->tmp_fd, .chats_fd = p->chats_fd,
                             .archive_fd = p->archive_fd, .review_fd = p->review_fd,
                             .org = p->org, .org_unreadable = p->org_unreadable };

        if (r >= 0 && n > 0) {
                int k;

                assert(n == p->n_facts);
                k = ownership_pass(s, p->owner_facts, n, p->name, &p->claims, &p->owner);
                if (k >= 0)
                        k = enrich_pass(&ep, s, p->enrich_facts, n, &ctx->enrich);
                if (k >= 0)
                        k = live_pass(ctx->probe, s, p->live_facts, n, &p->claims);
                if (k < 0)
                        r = k;
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        session_done(&s[i]);
                ctx->out->n_sessions = p->first;
        }
        return r;
}

static void scan_project_done(ScanProject *p) {
        for (size_t i = 0; i < p->n_facts; i++)
                owner_facts_done(&p->owner_facts[i]);
        free(p->owner_facts);
        free(p->enrich_facts);
        free(p->live_facts);
        safe_close(p->chats_fd);
        safe_close(p->archive_fd);
        safe_close(p->cold_fd);
        scan_names_done(&p->chats_other);
        scan_names_done(&p->archive_other);
        scan_names_done(&p->cold_other);
        claims_done(&p->claims);
        scan_aggs_done(&p->subagents);
        owner_cache_done(&p->owner);
        json_object_put(p->org_root);
        safe_close(p->review_fd);
}

/* Scan one projects/<name>/ directory. */
int scan_project(ScanCtx *ctx, int projects_fd, const char *name) {
        ScanProject p = { .name = name, .chats_fd = -EBADF, .archive_fd = -EBADF,
                          .cold_fd = -EBADF, .review_fd = -EBADF,
                          .first = ctx->out->n_sessions };
        _cleanup_close_ int pfd = -EBADF, sfd = -EBADF;
        FsDir dir, *d = &dir;
        const char *dname;
        unsigned char dtype;
        size_t n_entries = 0;
        bool has_chats = false, chats_empty = false;
        msec_t newest = 0;
        struct stat st;
        int r = 0;

        pfd = scan_open_subdir(projects_fd, name, ctx->dev, NULL);
        if (pfd < 0) {
                if (pfd != -ENOTDIR)
                        log_debug("projects/%s: %s, skipped", name, errno_to_string(-pfd));
                return 0;
        }
        fs_dir_init(d, pfd);
        while ((r = fs_dir_next(d, &dname, &dtype)) > 0) {
                n_entries++;
                if (streq(dname, "chats"))
                        has_chats = true;
        }
        if (r < 0)
                return scan_project_unlisted(ctx, name, "", r) < 0 ? -ENOMEM : 0;

        r = json_read_input(pfd, "session-organization.v1.json", JSON_INPUT_ORGANIZATION,
                            &p.org_root);
        if (r == 0 && !json_object_is_type(p.org_root, json_type_object))
                r = -EBADMSG; /* no organisation store: what a delete's edit refuses too */
        if (r == 0) {
                json_object *v = NULL;
                if (json_object_object_get_ex(p.org_root, "sessions", &v) &&
                    json_object_is_type(v, json_type_object))
                        p.org = v;
        } else if (r == -ENOMEM)
                goto finish;
        else if (r != -ENOENT) {
                /* Qwen reads it as an empty store, but the person may have pinned sessions in
                 * it: what cannot be read is not proof that nothing is pinned */
                p.org_unreadable = true;
                log_notice("projects/%s/session-organization.v1.json: cannot be read (%s); its "
                           "sessions count as pinned", name, errno_to_string(-r));
        }
        r = 0;
        p.review_fd = fs_open_noatime(pfd, ERASE_REVIEW_DIR, O_RDONLY | O_DIRECTORY);
        sfd = scan_open_subdir(pfd, "subagents", ctx->dev, NULL);
        if (sfd >= 0) {
                r = scan_collect_aggs(sfd, ctx->dev, /* only_ids= */ true, &p.subagents);
                if (r < 0)
                        goto finish;
        }
        r = scan_project_chats(ctx, &p, pfd, &chats_empty);
        r = scan_project_passes(ctx, &p, r);
        if (r != 0) {
                if (r > 0)
                        r = 0; /* skipped: its subagents/ are no orphan candidates */
                goto finish;
        }
        r = scan_pend_aggs(ctx, &ctx->out->pending, ORPHAN_SUBAGENTS, name, &p.subagents);
        if (r < 0)
                goto finish;
        if (n_entries == 0 || (n_entries == 1 && has_chats && chats_empty)) {
                if (has_chats && fstatat(pfd, "chats", &st, AT_SYMLINK_NOFOLLOW) == 0)
                        newest = scan_ts_msec(&st.st_mtim);
                r = scan_empty_project(ctx, projects_fd, name, newest);
        }
finish:
        scan_project_done(&p);
        return r;
}

/* Open a tree's roots, fill Tree.dev and filesystem sizes, and walk projects/. */
static int scan_tree(ScanCtx *ctx) {
        Tree *t = &ctx->inv->trees[ctx->tree];
        _cleanup_close_ int rfd = -EBADF, gfd = -EBADF, hfd = -EBADF, pfd = -EBADF;
        _cleanup_(live_probe_freep) LiveProbe *probe = NULL;
        _cleanup_(scan_names_done) ScanNames names = {};
        struct stat st;
        struct statvfs sv;
        dev_t hdev = 0;
        double t0;
        int r = 0;

        /* the configured root itself may be a symlink (e.g. ~/.qwen on another disk) */
        rfd = open(t->runtime_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
        if (rfd < 0)
                return -errno;
        if (fstat(rfd, &st) < 0)
                return -errno;
        t->dev = st.st_dev;
        ctx->dev = st.st_dev;
        if (fstatvfs(rfd, &sv) == 0) {
                t->fs_size = (uint64_t)sv.f_blocks * sv.f_frsize;
                t->fs_avail = (uint64_t)sv.f_bavail * sv.f_frsize;
                t->fs_known = true;
        }

        r = live_probe_new(t, &probe);
        if (r == -ENOMEM)
                return r;
        ctx->probe = probe;

        /* G/file-history/<id>/, on G's own filesystem (listed by scan_projects()) */
        gfd = open(t->global_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
        if (gfd >= 0 && fstat(gfd, &st) == 0) {
                hdev = st.st_dev;
                hfd = scan_open_subdir(gfd, "file-history", hdev, NULL);
        }

        ctx->tmp_fd = scan_open_subdir(rfd, "tmp", ctx->dev, NULL);
        pfd = scan_open_subdir(rfd, "projects", ctx->dev, NULL);
        if (pfd >= 0) {
                _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
                const char *name;
                unsigned char type;

                if (!d)
                        return -ENOMEM;
                fs_dir_init(d, pfd);
                while ((r = fs_dir_next(d, &name, &type)) > 0) {
                        r = scan_names_add(&names, name);
                        if (r < 0)
                                break;
                }
                if (r < 0)
                        return r;
                /* in name order: the sessions arrive nearly sorted (see inventory_sort()) */
                if (names.n > 1)
                        qsort(names.v, names.n, sizeof(char *), scan_cmp_str);
                t0 = mono_sec();
                r = scan_projects(ctx, pfd, names.v, names.n, hfd, hdev);
                log_debug("'%s': %zu projects in %.3f s", t->runtime_dir, names.n, mono_sec() - t0);
                if (r < 0)
                        return r;
        } else {
                if (pfd != -ENOENT)
                        log_debug("'%s/projects': %s, skipped", t->runtime_dir, errno_to_string(-pfd));
                if (hfd >= 0) {
                        r = scan_collect_aggs(hfd, hdev, /* only_ids= */ true, &ctx->history);
                        if (r < 0)
                                return r;
                }
        }

        ctx->probe = NULL;
        return scan_pend_aggs(ctx, &ctx->pending, ORPHAN_FILE_HISTORY, NULL, &ctx->history);
}

/* Reset per-tree state. */
static void scan_ctx_tree_done(ScanCtx *c) {
        c->tmp_fd = safe_close(c->tmp_fd);
        c->probe = NULL;
        scan_aggs_done(&c->history);
        enrich_cache_done(&c->enrich);
}

int scan_all(Inventory *inv, const ScanOptions *o) {
        ScanCtx c = { .inv = inv, .o = o, .tmp_fd = -EBADF };
        _cleanup_free_ char *scratch = malloc(RECORD_ENDS_SCRATCH);
        double t0;
        int r = 0, k;

        if (!scratch)
                return -ENOMEM;
        c.scratch = scratch;
        for (size_t i = 0; i < inv->n_trees; i++) {
                c.tree = i;
                k = scan_tree(&c);
                scan_ctx_tree_done(&c);
                if (k == -ENOMEM) {
                        r = k;
                        goto finish;
                }
                if (k < 0) {
                        log_debug_errno(k, "cannot scan '%s'", inv->trees[i].runtime_dir);
                        if (r == 0)
                                r = k;
                }
        }
        t0 = mono_sec();
        inventory_sort(inv);
        /* before anything that needs every transcript of a tree */
        k = roots_workspaces(inv, getenv("HOME"));
        if (k >= 0)
                k = scan_orphans(&c);
        if (k >= 0)
                k = hygiene_scan(inv, o->hygiene);
        /* qgc's own times of each session (session-times.h), through the index just built */
        if (k >= 0 && (inv->by_id || (k = inventory_index(inv)) >= 0))
                for (size_t i = 0; i < inv->n_trees; i++)
                        session_times_scan(inv, i);
        log_debug("scan: sorted and found orphans in %.3f s", mono_sec() - t0);
        if (k < 0)
                r = k;
finish:
        scan_pendings_done(&c.pending);
        return r;
}
