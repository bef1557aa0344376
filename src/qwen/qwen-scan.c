/* qwen-scan.c: the read-only walk of Qwen trees into the Inventory (qwen_store's scan, store.h).
 *
 * Per tree: R/projects/<p>/chats/, chats/archive/ and its cold tier through directory fds
 * (fs.h), never leaving the filesystem of R or entering a mount point, never following a
 * symlink, never blocking on a FIFO, never writing (O_NOATIME when permitted). Each directory is
 * listed once; sidecars, claims, subagents/, G/file-history/ and the organization file are read
 * once per directory or project and looked up per session: O(n log n) in the sessions, with one
 * head and one tail read per transcript. The projects of a tree are scanned by ScanOptions.jobs
 * threads, each project into its own ScanOut, moved into the inventory in name order. After a
 * project's walk, in the same thread, the ownership, enrichment and liveness passes decide from
 * what the walk read. On a cold page cache the walk advises the kernel of the next transcripts'
 * reads (advice only). */
#include "autoconf.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "claims.h"
#include "cold.h"
#include "enrich.h"
#include "erase.h"
#include "fs.h"
#include "hygiene.h"
#include "json.h"
#include "json-input.h"
#include "live.h"
#include "log.h"
#include "macro.h"
#include "owner.h"
#include "owner.h"
#include "policy.h"
#include "qwen.h"
#include "record.h"
#include "roots.h"
#include "qwen-scan.h"
#include "scan-aggs.h"
#include "qwen-times.h"

#define SCAN_THREAD_STACK (8 * 1024 * 1024) /* SCAN_AGGS_DEPTH_MAX FsDirs are 0.5 MiB */

/* A cold page cache (a transcript's first read waited for the disk): each thread advises the
 * kernel of the reads of the next SCAN_PREFETCH_DEPTH transcripts of each listing it walks, so
 * that the disk works on many files while the thread parses one; it stops after
 * SCAN_PREFETCH_WARM prefetches in a row found the cache warm. */
#define SCAN_PREFETCH_DEPTH 16
#define SCAN_PREFETCH_WARM 32

/* What the scan decompresses of a cold transcript whose title it does not need: its first
 * record (Qwen reads at most 1 Mi UTF-16 units of the first line, at most 3 bytes each). */
#define SCAN_COLD_HEAD (4 * RECORD_HEAD_MAX + RECORD_TAIL_WINDOW)

/* What scanning one project gave: moved into the inventory in project (name) order, so the
 * result does not depend on which thread scanned which project. */
typedef struct ScanOut {
        Session *sessions;
        size_t n_sessions, alloc_sessions;
        Orphan *orphans;
        size_t n_orphans, alloc_orphans;
        ScanPendings pending;
        int r; /* scan_project()'s result: a failure ends the tree's scan there */
        bool incomplete; /* a directory of the project could not be listed: project skipped */
} ScanOut;

typedef struct ScanCtx {
        Inventory *inv;
        const ScanOptions *o;
        size_t tree;
        dev_t dev;         /* of R */
        int tmp_fd;        /* R/tmp or -EBADF */
        LiveProbe *probe;
        ScanAggs history;  /* G/file-history/<x>, sorted by name */
        EnrichCache enrich; /* tmp/<hash>/ read by this thread (enrich.h) */
        ScanPendings pending; /* of every tree, decided by scan_aggs_orphans() */
        char *scratch;     /* RECORD_ENDS_SCRATCH bytes for record_read_ends() */
        ScanOut *out;      /* the project being scanned: where its sessions go */
        bool prefetch;     /* this thread's reads found the page cache cold: prefetch ahead */
        unsigned prefetch_warm; /* prefetches in a row that found the cache warm */
} ScanCtx;

/* A sorted list of names (sidecar presence tests without a syscall). */
typedef struct ScanNames {
        char **v;
        size_t n, alloc;
} ScanNames;

/* A transcript file of a session: the name and its directory. */
typedef struct ScanEntry {
        char *name;
        char id[SESSION_ID_MAX + 1];
        unsigned char type; /* readdir's d_type (DT_UNKNOWN when the filesystem does not say) */
} ScanEntry;

typedef struct ScanEntries {
        ScanEntry *v;
        size_t n, alloc;
} ScanEntries;

/* What reading one copy of a transcript gave. */
typedef struct ScanCopy {
        FileId id;
        bool regular;   /* readable regular file on the tree's filesystem */
        char *problem;  /* why it cannot be verified, NULL if fine */
        HeadInfo head;
        bool head_ok;
        const char *head_why;
        TailInfo tail;
        bool tail_ok;
        bool title_unread; /* the title windows were not read (scan_want_title()) */
        uint64_t cold_orig; /* a cold copy: the original's size */
} ScanCopy;

/* One project directory while it is scanned. */
typedef struct ScanProject {
        const char *name;
        int chats_fd, archive_fd;
        int cold_fd; /* chats/archive/.qgc-cold/ (cold.h), -EBADF when absent */
        ScanNames chats_other, archive_other, cold_other;
        ClaimSet claims;
        ScanAggs subagents;
        OwnerCache owner; /* the last cwd's hash and sanitizeCwd() test */
        json_object *org; /* session-organization.v1.json "sessions" (borrowed from org_root) */
        json_object *org_root;
        bool org_unreadable; /* the organization file exists and does not parse */
        int review_fd; /* workflows/generated/review/, -EBADF when absent */
        /* What the scan read of each of the project's sessions (out->sessions[first + i]), for
         * the passes that decide from it (scan_project_passes()) */
        size_t first, n_facts;
        OwnerFacts *owner_facts;
        EnrichFacts *enrich_facts;
        LiveFacts *live_facts;
} ScanProject;

static int scan_out_add_session(ScanOut *out, Session *s) {
        if (util_greedy_realloc((void **)&out->sessions, &out->alloc_sessions, out->n_sessions + 1,
                                sizeof(Session)) < 0) {
                inventory_session_done(s);
                return -ENOMEM;
        }
        out->sessions[out->n_sessions++] = *s;
        *s = (Session){};
        return 0;
}

static int scan_out_add_orphan(ScanOut *out, Orphan *o) {
        if (util_greedy_realloc((void **)&out->orphans, &out->alloc_orphans, out->n_orphans + 1,
                                sizeof(Orphan)) < 0) {
                inventory_orphan_done(o);
                return -ENOMEM;
        }
        out->orphans[out->n_orphans++] = *o;
        *o = (Orphan){};
        return 0;
}

static void scan_out_done(ScanOut *out) {
        for (size_t i = 0; i < out->n_sessions; i++)
                inventory_session_done(&out->sessions[i]);
        free(out->sessions);
        for (size_t i = 0; i < out->n_orphans; i++)
                inventory_orphan_done(&out->orphans[i]);
        free(out->orphans);
        scan_aggs_pendings_done(&out->pending);
        *out = (ScanOut){};
}

static int scan_cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_names_add(ScanNames *n, const char *name) {
        char *s = strdup(name);

        if (!s || util_greedy_realloc((void **)&n->v, &n->alloc, n->n + 1, sizeof(char *)) < 0) {
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

static bool scan_names_has(const ScanNames *n, const char *name) {
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
        int c = util_ascii_strcasecmp(x->id, y->id);
        return c != 0 ? c : strcmp(x->id, y->id);
}

/* Add transcript name (session id) to e. */
static int scan_entries_add(ScanEntries *e, const char id[SESSION_ID_MAX + 1], const char *name,
                            unsigned char type) {
        ScanEntry x = { .type = type };

        memcpy(x.id, id, sizeof(x.id));
        x.name = strdup(name);
        if (!x.name ||
            util_greedy_realloc((void **)&e->v, &e->alloc, e->n + 1, sizeof(ScanEntry)) < 0) {
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

static const char *scan_type_name(mode_t m) {
        return S_ISLNK(m)  ? "symlink" :
               S_ISDIR(m)  ? "directory" :
               S_ISFIFO(m) ? "fifo" :
               S_ISSOCK(m) ? "socket" :
               S_ISCHR(m)  ? "character device" :
               S_ISBLK(m)  ? "block device" :
                             "unknown type";
}

static void scan_copy_done(ScanCopy *c) {
        free(c->problem);
        record_head_info_done(&c->head);
        record_tail_info_done(&c->tail);
        *c = (ScanCopy){};
}

/* Open a transcript that readdir() called a regular file: openat (O_NOFOLLOW, O_NONBLOCK) and
 * fstat the fd, one syscall less than fstatat first. The fd when it is a regular file on the
 * tree's filesystem, else -errno and the caller takes the checked path for the exact problem. */
static int scan_copy_open_fast(const ScanCtx *ctx, int dfd, const char *name, struct stat *ret_st) {
        int fd;

        fd = fs_open_noatime(dfd, name, O_RDONLY);
        if (fd < 0)
                return fd;
        if (fstat(fd, ret_st) < 0 || !S_ISREG(ret_st->st_mode) || ret_st->st_dev != ctx->dev) {
                macro_safe_close(fd);
                return -EBADF;
        }
        return fd;
}

/* Does the plan need the title of a copy with this stat (see TitleNeed)? The policy's own age
 * test, policy_age_selects(): its idle is at most now - mtime. */
static bool scan_want_title(const ScanCtx *ctx, const struct stat *st, bool archived) {
        const TitleNeed *t = ctx->o->titles;

        if (!t || t->all)
                return true;
        return policy_age_selects(archived ? t->archived_idle : t->active_idle,
                                  ctx->o->now - util_timespec_to_msec(&st->st_mtim));
}

/* Read the head and tail (and the title when want_title) of a transcript open as fd into c.
 * Only -ENOMEM is an error; what could not be read is c->head_ok/tail_ok false. */
static int scan_copy_read_ends(ScanCtx *ctx, int fd, uint64_t size, bool want_title,
                               ScanCopy *c) {
        RecordEnds ends;
        int r;

        c->title_unread = !want_title;
        r = record_read_ends(fd, size, want_title, ctx->scratch, &ends);
        if (ends.blocked) {
                /* the page cache is cold: advise the next transcripts' reads */
                ctx->prefetch = true;
                ctx->prefetch_warm = 0;
        }
        c->head = ends.head;
        c->tail = ends.tail;
        if (r == -ENOMEM)
                return r;
        c->head_ok = ends.head_r >= 0;
        c->head_why = ends.head_why;
        c->tail_ok = ends.tail_r >= 0;
        return 0;
}

/* Stat, open and read the head and tail of one transcript copy (the title only when
 * want_title or scan_want_title() says so). Only -ENOMEM is an error; everything else becomes
 * c->problem. */
static int scan_copy_read(ScanCtx *ctx, int dfd, const ScanEntry *e, bool archived,
                          bool want_title, ScanCopy *c) {
        _cleanup_close_ int fd = -EBADF;
        const char *name = e->name;
        struct stat st, fst;
        int r;

        if (e->type == DT_REG)
                fd = scan_copy_open_fast(ctx, dfd, name, &fst);
        if (fd < 0) {
                /* not known to be a regular file: stat it first, never open anything else */
                if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        c->problem = util_strprintf("cannot stat: %s", log_errno_to_string(errno));
                        return c->problem ? 0 : -ENOMEM;
                }
                fs_fileid_from_stat(&c->id, &st);
                if (!S_ISREG(st.st_mode)) {
                        c->problem = util_strprintf("not a regular file (%s)",
                                                    scan_type_name(st.st_mode));
                        return c->problem ? 0 : -ENOMEM;
                }
                if (st.st_dev != ctx->dev) {
                        c->problem = strdup("on another filesystem");
                        return c->problem ? 0 : -ENOMEM;
                }
                fd = fs_open_noatime(dfd, name, O_RDONLY);
                if (fd < 0) {
                        c->problem = util_strprintf("cannot open: %s", log_errno_to_string(-fd));
                        return c->problem ? 0 : -ENOMEM;
                }
                if (fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode) || fst.st_dev != st.st_dev ||
                    fst.st_ino != st.st_ino) {
                        c->problem = strdup("changed during scan");
                        return c->problem ? 0 : -ENOMEM;
                }
        }
        fs_fileid_from_stat(&c->id, &fst);
        c->regular = true;
        want_title = want_title || scan_want_title(ctx, &fst, archived);
        r = scan_copy_read_ends(ctx, fd, (uint64_t)fst.st_size, want_title, c);
        if (r == -ENOMEM)
                return r;
        if (!c->head_ok && !c->head_why)
                c->head_why = "first record unreadable";
        return 0;
}

/* Advise the kernel of the reads scan_copy_read() will make of entry e in dfd (the title
 * windows when scan_want_title() says so; a conflict's are not foreseen): opened, advised and
 * closed at once, nothing read. 1 when the page cache held it, 0 when advised, -errno when not
 * a regular file or not open. */
static int scan_prefetch_copy(ScanCtx *ctx, int dfd, const ScanEntry *e, bool archived) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* only what readdir() called a regular file: anything else is stat-ed first */
        if (e->type != DT_REG)
                return -EBADF;
        fd = scan_copy_open_fast(ctx, dfd, e->name, &st);
        if (fd < 0)
                return fd;
        return record_ends_advise(fd, (uint64_t)st.st_size, scan_want_title(ctx, &st, archived));
}

/* Keep the prefetch of listing e (in dfd) SCAN_PREFETCH_DEPTH entries ahead of next, the entry
 * the scan reads next; *cursor is the first entry not yet advised. Only while ctx->prefetch;
 * advisory: what the scan reads and decides does not depend on it. */
static void scan_prefetch_ahead(ScanCtx *ctx, int dfd, const ScanEntries *e, size_t next,
                                size_t *cursor, bool archived) {
        if (dfd < 0 || !ctx->prefetch)
                return;
        *cursor = MAX(*cursor, next);
        while (*cursor < e->n && *cursor < next + SCAN_PREFETCH_DEPTH) {
                int k = scan_prefetch_copy(ctx, dfd, &e->v[(*cursor)++], archived);

                if (k < 0)
                        continue;
                if (k == 0)
                        ctx->prefetch_warm = 0;
                else if (++ctx->prefetch_warm >= SCAN_PREFETCH_WARM) {
                        /* the cache is warm after all (or again) */
                        ctx->prefetch = false;
                        return;
                }
        }
}

/* Read a compressed transcript of the cold tier, chats/archive/.qgc-cold/<id>.jsonl.zst, like
 * scan_copy_read(): its identity is the .zst's (whose mtime is the original's), its first record
 * comes from its decompressed start, its tail and title too when the title is wanted (the whole
 * content is then decompressed) or the content is short. Ownership is proven from the content
 * as for any transcript; what cannot be read stays unverified. Only -ENOMEM is an error. */
static int scan_cold_read(ScanCtx *ctx, int cold_fd, const ScanEntry *e, bool want_title,
                          ScanCopy *c) {
        _cleanup_close_ int fd = -EBADF, mfd = -EBADF;
        _cleanup_free_ char *base = strndup(e->name, strlen(e->name) - strlen(COLD_SUFFIX));
        char sha[65];
        struct stat st, mst;
        bool whole = false;
        int r;

        if (!base)
                return -ENOMEM;
        fd = fs_open_noatime(cold_fd, e->name, O_RDONLY);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != ctx->dev) {
                c->problem =
                        util_strprintf("compressed transcript: cannot open: %s",
                                       fd < 0 ? log_errno_to_string(-fd) : "not a regular file");
                return c->problem ? 0 : -ENOMEM;
        }
        fs_fileid_from_stat(&c->id, &st);
        r = cold_info(cold_fd, base, &c->cold_orig, sha);
        if (r == -ENOMEM)
                return r;
        /* the title windows need the whole content decompressed (the last 64 KiB): up to
         * COLD_TITLE_MAX, else its title stays unread (a rule that needs it keeps the session) */
        want_title = (want_title || scan_want_title(ctx, &st, /* archived= */ true)) &&
                     c->cold_orig <= COLD_TITLE_MAX;
        mfd = r < 0 ? r : memfd_create("qgc-cold", MFD_CLOEXEC);
        if (mfd == -1)
                mfd = -errno;
        /* into the memfd: the head, and with the title the last window at its offset (a hole
         * between): never more than the trailer's size is decompressed (cold.h) */
        if (mfd >= 0 && want_title) {
                r = cold_cat_ends(cold_fd, base, mfd, SCAN_COLD_HEAD, RECORD_TAIL_WINDOW, NULL);
                whole = r >= 0;
        } else if (mfd >= 0)
                r = cold_cat_head(cold_fd, base, mfd, SCAN_COLD_HEAD, &whole);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && fstat(mfd, &mst) < 0)
                r = -errno;
        if (r < 0 || mfd < 0) {
                const char *why = cold_damage_why(r);

                c->problem = why ? strdup(why)
                                 : util_strprintf("compressed transcript unreadable: %s",
                                                  log_errno_to_string(-(r < 0 ? r : mfd)));
                return c->problem ? 0 : -ENOMEM;
        }
        c->regular = true;
        if (whole) {
                r = scan_copy_read_ends(ctx, mfd, (uint64_t)mst.st_size, want_title, c);
                if (r == -ENOMEM)
                        return r;
        } else {
                /* the first record only: the tail (last activity, title) stays unread */
                r = record_read_head(mfd, &c->head, &c->head_why);
                if (r == -ENOMEM)
                        return r;
                c->head_ok = r >= 0;
        }
        if (!c->head_ok && !c->head_why)
                c->head_why = "first record unreadable";
        return 0;
}

/* The compressed sidecars of session s in the cold tier (<id>.<ext>.zst), and the sizes of the
 * cold copy: a cold worktree sidecar is not read (f->worktree_cold: enrich.h). */
static void scan_cold_sidecars(const ScanCtx *ctx, Session *s, const ScanProject *p,
                               EnrichFacts *f) {
        static const char *const exts[] = { "worktree.json", "pr.json", "ledger.jsonl" };
        char sha[65];

        for (size_t i = 0; p->cold_fd >= 0 && i < ELEMENTSOF(exts); i++) {
                _cleanup_free_ char *n = util_strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *z = n ? util_strprintf("%s" COLD_SUFFIX, n) : NULL;
                uint64_t orig = 0;
                struct stat st;
                bool mount = false;

                if (!z || !scan_names_has(&p->cold_other, z) ||
                    fs_statat(p->cold_fd, z, &st, &mount) < 0 || !S_ISREG(st.st_mode) ||
                    st.st_dev != ctx->dev || mount)
                        continue;
                s->bytes += (uint64_t)st.st_size;
                s->bytes_alloc += (uint64_t)st.st_blocks * 512;
                s->cold_bytes += (uint64_t)st.st_size;
                if (cold_info(p->cold_fd, n, &orig, sha) >= 0)
                        s->cold_orig += orig;
                if (i == 0)
                        f->worktree_cold = true;
        }
}

/* Size of a regular sidecar (dfd, name) listed in names, added to s. */
static void scan_add_sidecar(const ScanCtx *ctx, Session *s, int dfd, const ScanNames *names,
                             const char *name) {
        struct stat st;
        bool mount = false;

        if (dfd < 0 || !scan_names_has(names, name))
                return;
        if (fs_statat(dfd, name, &st, &mount) < 0 || !S_ISREG(st.st_mode) ||
            st.st_dev != ctx->dev || mount)
                return;
        s->bytes += (uint64_t)st.st_size;
        s->bytes_alloc += (uint64_t)st.st_blocks * 512;
        s->sidecar_bytes += (uint64_t)st.st_size;
}

/* Sidecars of one copy named <id>.*: worktree, PR, ledger; *ret_worktree says whether the
 * worktree sidecar is listed (the enrichment pass reads it). */
static void scan_sidecars(const ScanCtx *ctx, Session *s, int dfd, const ScanNames *names,
                          const char *id, bool *ret_worktree) {
        static const char *const suffixes[] = { ".worktree.json", ".pr.json", ".ledger.jsonl" };

        if (dfd < 0 || names->n == 0)
                return;
        char n[SESSION_ID_MAX + sizeof(".worktree.json")];
        size_t k = strnlen(id, SESSION_ID_MAX);

        memcpy(n, id, k);
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                /* every suffix fits: the longest sized the buffer */
                memcpy(n + k, suffixes[i], strlen(suffixes[i]) + 1);
                scan_add_sidecar(ctx, s, dfd, names, n);
                if (i == 0)
                        *ret_worktree = scan_names_has(names, n);
        }
}

/* Would archiving (restoring) the session id merge a sidecar larger than the move reads? (Both
 * chats/ and chats/archive/ hold its <id>.pr.json or <id>.ledger.jsonl: archive.h.) */
static bool scan_merge_too_big(const ScanProject *p, const char *id) {
        static const char *const suffixes[] = { ".pr.json", ".ledger.jsonl" };
        char n[SESSION_ID_MAX + sizeof(".ledger.jsonl")];
        size_t k = strnlen(id, SESSION_ID_MAX);

        memcpy(n, id, k);
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                struct stat a, b;

                memcpy(n + k, suffixes[i], strlen(suffixes[i]) + 1);
                if (scan_names_has(&p->chats_other, n) && scan_names_has(&p->archive_other, n) &&
                    fstatat(p->chats_fd, n, &a, AT_SYMLINK_NOFOLLOW) == 0 &&
                    fstatat(p->archive_fd, n, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
                    (uint64_t)MAX(a.st_size, b.st_size) > ARCHIVE_SIDECAR_MAX)
                        return true;
        }
        return false;
}

/* Fill the fields that come from a copy's content. */
static int scan_session_times(ScanCtx *ctx, Session *s, const ScanCopy *primary,
                              const ScanCopy *other) {
        const ScanCopy *copies[2] = { primary, other };

        for (size_t i = 0; i < 2; i++) {
                const ScanCopy *c = copies[i];
                if (!c || !c->id.present)
                        continue;
                if (c->regular) {
                        s->transcript_bytes += c->id.size;
                        s->bytes += c->id.size;
                        s->bytes_alloc += c->id.blocks;
                }
                s->mtime = MAX(s->mtime, util_nsec_to_msec(c->id.mtime_ns));
                if (c->tail_ok)
                        s->last_record = MAX(s->last_record, c->tail.last_timestamp);
        }
        s->last_write = s->mtime;
        if (primary->head_ok)
                s->first_record = primary->head.timestamp;
        s->empty = primary->regular && primary->id.size == 0;
        s->tail_incomplete = primary->tail_ok && primary->tail.incomplete;
        for (size_t i = 0; i < 2 && !s->title; i++) {
                const ScanCopy *c = copies[i];
                /* a title not read, or a tail that could not be read: whether a person titled
                 * it is unknown, and the policy never acts on such a session */
                if (c && ((c->tail_ok && c->title_unread) ||
                          (c->regular && !c->tail_ok && c->id.size > 0)))
                        s->title_unread = true;
                if (c && c->tail_ok && c->tail.title) {
                        s->title = strdup(c->tail.title);
                        if (!s->title)
                                return -ENOMEM;
                        s->title_manual = c->tail.title_source == TITLE_MANUAL;
                }
        }
        s->last_activity = MAX(s->mtime, s->last_record);
        if (s->mtime > ctx->o->now || s->last_record > ctx->o->now) {
                s->future_clamped = true;
                s->last_activity = MIN(s->last_activity, ctx->o->now);
        }
        return 0;
}

/* Build the Session of one id (active name, archived name, or both) from what its files say and
 * add it, with what the passes decide from (scan_project_passes()): ownership, enrichment and
 * liveness are not decided here. */
static int scan_session(ScanCtx *ctx, ScanProject *p, const ScanEntry *act,
                        const ScanEntry *arc, const ScanEntry *cold) {
        _cleanup_(scan_copy_done) ScanCopy ca = {}, cr = {}, cc = {};
        OwnerFacts *of = &p->owner_facts[p->n_facts];
        EnrichFacts *ef = &p->enrich_facts[p->n_facts];
        LiveFacts *lf = &p->live_facts[p->n_facts];
        ScanCopy *primary;
        size_t first, end;
        Session s = {};
        const ScanAgg *agg;
        int r;

        memcpy(s.id, act ? act->id : arc ? arc->id : cold->id, sizeof(s.id));
        s.tree = ctx->tree;
        /* a compressed copy next to an active one is a conflict too (restored by hand?) */
        s.state = act && (arc || cold) ? SESSION_CONFLICT : act ? SESSION_ACTIVE : SESSION_ARCHIVED;
        s.project_dir = strdup(p->name);
        if (!s.project_dir)
                return -ENOMEM;
        /* a conflict is skipped whatever the rules say; its titles are read all the same */
        if (act && (r = scan_copy_read(ctx, p->chats_fd, act, false, arc != NULL, &ca)) < 0)
                goto fail;
        if (arc && (r = scan_copy_read(ctx, p->archive_fd, arc, true, act != NULL, &cr)) < 0)
                goto fail;
        if (cold && !act && !arc && (r = scan_cold_read(ctx, p->cold_fd, cold, false, &cc)) < 0)
                goto fail;
        if (cold && (act || arc)) {
                /* beside an uncompressed copy (a compress or restore that was cut short): the
                 * uncompressed copy is the session, the .zst only counted */
                struct stat st;
                if (fstatat(p->cold_fd, cold->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(st.st_mode))
                        fs_fileid_from_stat(&cc.id, &st);
        }
        s.active = ca.id;
        s.archived = act || arc ? cr.id : cc.id;
        s.cold = !act && !arc;
        s.cold_copy = (act || arc) && cc.id.present;
        primary = act ? &ca : arc ? &cr : &cc;

        r = scan_session_times(ctx, &s, primary, act && arc ? &cr : NULL);
        if (r < 0)
                goto fail;
        if (cc.id.present) {
                if (primary != &cc) {
                        s.bytes += cc.id.size;
                        s.bytes_alloc += cc.id.blocks;
                }
                s.cold_bytes += cc.id.size;
                s.cold_orig += cc.cold_orig;
                scan_cold_sidecars(ctx, &s, p, ef);
        }

        /* sidecars of each copy, claims for the id, file-history and subagents */
        if (act) {
                memcpy(ef->worktree_id[0], act->id, sizeof(ef->worktree_id[0]));
                scan_sidecars(ctx, &s, p->chats_fd, &p->chats_other, act->id, &ef->worktree[0]);
        }
        if (arc) {
                memcpy(ef->worktree_id[1], arc->id, sizeof(ef->worktree_id[1]));
                scan_sidecars(ctx, &s, p->archive_fd, &p->archive_other, arc->id,
                              &ef->worktree[1]);
        }
        if ((act != NULL) != (arc != NULL)) /* what its archive or restore would merge */
                s.merge_too_big = scan_merge_too_big(p, s.id);
        claims_range(&p->claims, s.id, &first, &end);
        for (size_t i = first; i < end; i++)
                if (p->claims.claims[i].id.present &&
                    claims_match(&p->claims.claims[i], s.id)) {
                        s.bytes += p->claims.claims[i].id.size;
                        s.bytes_alloc += p->claims.claims[i].id.blocks;
                }
        /* G/file-history/<id>/ is added by scan_projects() at the end: it may still be being listed */
        if ((agg = scan_aggs_find(&p->subagents, s.id))) {
                s.bytes += agg->bytes;
                s.bytes_alloc += agg->bytes_alloc;
                s.last_write = MAX(s.last_write, agg->mtime);
        }
        lf->subagents_incomplete = p->subagents.incomplete || (agg && agg->incomplete);

        /* the primary copy's first record, for the ownership pass */
        of->problem = TAKE_PTR(primary->problem);
        of->head = primary->head;
        primary->head = (HeadInfo){};
        of->head_ok = primary->head_ok;
        of->head_why = primary->head_why;
        p->n_facts++;
        return scan_out_add_session(ctx->out, &s);
fail:
        *ef = (EnrichFacts){};
        inventory_session_done(&s);
        return r;
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
        a.mtime = MAX(newest, util_timespec_to_msec(&st.st_mtim));
        pfd = fs_open_noatime(projects_fd, name, O_RDONLY | O_DIRECTORY);
        if (pfd >= 0 && scan_aggs_dir_sum(pfd, ctx->dev, 1, &a) == -ENOMEM)
                return -ENOMEM;
        o.bytes = a.bytes;
        o.bytes_alloc = a.bytes_alloc;
        o.mtime = a.mtime;
        o.project_dir = strdup(name);
        o.name = strdup(name);
        if (!o.project_dir || !o.name) {
                inventory_orphan_done(&o);
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
        p->chats_fd = hygiene_open_dir(pfd, "chats", ctx->dev, &st);
        if (p->chats_fd == -ENOENT) {
                *ret_empty = true;
                return 0;
        }
        if (p->chats_fd < 0) {
                log_debug("projects/%s/chats: %s, skipped", p->name, log_errno_to_string(-p->chats_fd));
                return 0;
        }
        r = scan_list_chats(p->chats_fd, &act, &p->chats_other, &p->claims, &n_chats);
        if (r < 0)
                return scan_project_unlisted(ctx, p->name, "chats/", r);
        claims_sort(&p->claims);
        if (scan_names_has(&p->chats_other, "archive")) {
                p->archive_fd = hygiene_open_dir(p->chats_fd, "archive", ctx->dev, NULL);
                if (p->archive_fd >= 0) {
                        r = scan_list_chats(p->archive_fd, &arc, &p->archive_other, NULL,
                                            &n_archive);
                        if (r < 0)
                                return scan_project_unlisted(ctx, p->name, "chats/archive/", r);
                        *ret_empty = n_chats == 1 && n_archive == 0;
                        if (scan_names_has(&p->archive_other, COLD_DIR)) {
                                p->cold_fd = hygiene_open_dir(p->archive_fd, COLD_DIR, ctx->dev,
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
                                  log_errno_to_string(-p->archive_fd));
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
                if (j < arc.n && (!id || util_ascii_strcasecmp(arc.v[j].id, id) < 0))
                        id = arc.v[j].id;
                if (l < cold.n && (!id || util_ascii_strcasecmp(cold.v[l].id, id) < 0))
                        id = cold.v[l].id;
                if (i < act.n && util_ascii_strcasecmp(act.v[i].id, id) == 0)
                        a = &act.v[i++];
                if (j < arc.n && util_ascii_strcasecmp(arc.v[j].id, id) == 0)
                        b = &arc.v[j++];
                if (l < cold.n && util_ascii_strcasecmp(cold.v[l].id, id) == 0)
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
                k = owner_pass(s, p->owner_facts, n, p->name, &p->claims, &p->owner);
                if (k >= 0)
                        k = enrich_pass(&ep, s, p->enrich_facts, n, &ctx->enrich);
                if (k >= 0)
                        k = live_pass(ctx->probe, s, p->live_facts, n, &p->claims);
                if (k < 0)
                        r = k;
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        inventory_session_done(&s[i]);
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
        macro_safe_close(p->chats_fd);
        macro_safe_close(p->archive_fd);
        macro_safe_close(p->cold_fd);
        scan_names_done(&p->chats_other);
        scan_names_done(&p->archive_other);
        scan_names_done(&p->cold_other);
        claims_done(&p->claims);
        scan_aggs_done(&p->subagents);
        owner_cache_done(&p->owner);
        json_object_put(p->org_root);
        macro_safe_close(p->review_fd);
}

/* Scan one projects/<name>/ directory. */
static int scan_project(ScanCtx *ctx, int projects_fd, const char *name) {
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

        pfd = hygiene_open_dir(projects_fd, name, ctx->dev, NULL);
        if (pfd < 0) {
                if (pfd != -ENOTDIR)
                        log_debug("projects/%s: %s, skipped", name, log_errno_to_string(-pfd));
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

        r = json_input_read(pfd, "session-organization.v1.json", JSON_INPUT_ORGANIZATION,
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
                           "sessions count as pinned", name, log_errno_to_string(-r));
        }
        r = 0;
        p.review_fd = fs_open_noatime(pfd, ERASE_REVIEW_DIR, O_RDONLY | O_DIRECTORY);
        sfd = hygiene_open_dir(pfd, "subagents", ctx->dev, NULL);
        if (sfd >= 0) {
                r = scan_aggs_collect(sfd, ctx->dev, /* only_ids= */ true, &p.subagents);
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
        r = scan_aggs_pend(&ctx->out->pending, ctx->tree, ORPHAN_SUBAGENTS, name, &p.subagents);
        if (r < 0)
                goto finish;
        if (n_entries == 0 || (n_entries == 1 && has_chats && chats_empty)) {
                if (has_chats && fstatat(pfd, "chats", &st, AT_SYMLINK_NOFOLLOW) == 0)
                        newest = util_timespec_to_msec(&st.st_mtim);
                r = scan_empty_project(ctx, projects_fd, name, newest);
        }
finish:
        scan_project_done(&p);
        return r;
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
                        inventory_session_done(s);
        }
        out->n_sessions = 0;
        for (size_t i = 0; i < out->n_orphans; i++)
                if (r >= 0)
                        r = inventory_add_orphan(c->inv, &out->orphans[i]);
                else
                        inventory_orphan_done(&out->orphans[i]);
        out->n_orphans = 0;
        if (r >= 0 && out->pending.n > 0) {
                if (util_greedy_realloc((void **)&c->pending.v, &c->pending.alloc,
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
        int r = scan_aggs_collect(pool->history_fd, pool->history_dev, /* only_ids= */ true,
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
static int scan_projects(ScanCtx *ctx, int projects_fd, char *const *names, size_t n,
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
                 * SCAN_AGGS_DEPTH_MAX levels of an FsDir each */
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
                hfd = hygiene_open_dir(gfd, "file-history", hdev, NULL);
        }

        ctx->tmp_fd = hygiene_open_dir(rfd, "tmp", ctx->dev, NULL);
        pfd = hygiene_open_dir(rfd, "projects", ctx->dev, NULL);
        if (pfd >= 0) {
                _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
                const char *name;
                unsigned char type;

                if (!d)
                        return -ENOMEM;
                fs_dir_init(d, pfd);
                while ((r = fs_dir_next(d, &name, &type)) > 0) {
                        if (fs_is_temp_name(name))
                                continue; /* a stale entry being removed (recover.c) */
                        r = scan_names_add(&names, name);
                        if (r < 0)
                                break;
                }
                if (r < 0)
                        return r;
                /* in name order: the sessions arrive nearly sorted (see inventory_sort()) */
                if (names.n > 1)
                        qsort(names.v, names.n, sizeof(char *), scan_cmp_str);
                t0 = util_mono_sec();
                r = scan_projects(ctx, pfd, names.v, names.n, hfd, hdev);
                log_debug("'%s': %zu projects in %.3f s", t->runtime_dir, names.n,
                          util_mono_sec() - t0);
                if (r < 0)
                        return r;
        } else {
                if (pfd != -ENOENT)
                        log_debug("'%s/projects': %s, skipped", t->runtime_dir, log_errno_to_string(-pfd));
                if (hfd >= 0) {
                        r = scan_aggs_collect(hfd, hdev, /* only_ids= */ true, &ctx->history);
                        if (r < 0)
                                return r;
                }
        }

        ctx->probe = NULL;
        return scan_aggs_pend(&ctx->pending, ctx->tree, ORPHAN_FILE_HISTORY, NULL, &ctx->history);
}

/* Reset per-tree state. */
static void scan_ctx_tree_done(ScanCtx *c) {
        c->tmp_fd = macro_safe_close(c->tmp_fd);
        c->probe = NULL;
        scan_aggs_done(&c->history);
        enrich_cache_done(&c->enrich);
}

int qwen_scan(Inventory *inv, const ScanOptions *o) {
        ScanCtx c = { .inv = inv, .o = o, .tmp_fd = -EBADF };
        _cleanup_free_ char *scratch = malloc(RECORD_ENDS_SCRATCH);
        double t0;
        int r = 0, k;

        if (!scratch)
                return -ENOMEM;
        c.scratch = scratch;
        for (size_t i = 0; i < inv->n_trees; i++) {
                if (inv->trees[i].store != o->store)
                        continue;
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
        t0 = util_mono_sec();
        inventory_sort(inv);
        /* before anything that needs every transcript of a tree */
        k = roots_workspaces(inv, o->store, getenv("HOME"));
        if (k >= 0)
                k = scan_aggs_orphans(inv, o->store, &c.pending);
        if (k >= 0)
                k = hygiene_scan(inv, o->store, o->hygiene);
        /* qgc's own times of each session (session-times.h), through the index just built */
        if (k >= 0 && (inv->by_id || (k = inventory_index(inv)) >= 0))
                for (size_t i = 0; i < inv->n_trees; i++)
                        if (inv->trees[i].store == o->store)
                                qwen_times_scan(inv, i);
        log_debug("scan: sorted and found orphans in %.3f s", util_mono_sec() - t0);
        if (k < 0)
                r = k;
finish:
        scan_aggs_pendings_done(&c.pending);
        return r;
}
