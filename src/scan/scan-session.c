/* scan-session.c: one session of a project while the scan walks it (scan.c lists the
 * directories): each copy of its transcript read (head, tail, the title where the plan needs it;
 * a cold copy decompressed), its sidecars' sizes, its times, and the Session built from them and
 * added to the project's ScanOut, with the facts the passes decide from (the first record for
 * ownership.c, the listed worktree sidecars for enrich.c, whether subagents were listed in full
 * for the liveness pass). No decision is made here. On a cold page cache (a first read waited
 * for the disk) it also advises the kernel of the next transcripts' reads (scan_prefetch_ahead()),
 * advice only. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cold.h"
#include "fsread.h"
#include "fsutil.h"
#include "log.h"
#include "macro.h"
#include "policy.h"
#include "qwen.h"
#include "record.h"
#include "scan.h"
#include "scan-int.h"

/* What the scan decompresses of a cold transcript whose title it does not need: its first
 * record (Qwen reads at most 1 Mi UTF-16 units of the first line, at most 3 bytes each). */
#define SCAN_COLD_HEAD (4 * RECORD_HEAD_MAX + RECORD_TAIL_WINDOW)

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
        head_info_done(&c->head);
        tail_info_done(&c->tail);
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
                safe_close(fd);
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
                                  ctx->o->now - scan_ts_msec(&st->st_mtim));
}

/* Read the head and tail (and the title when want_title) of a transcript open as fd into c.
 * Only -ENOMEM is an error; what could not be read is c->head_ok/tail_ok false. */
static int scan_copy_read_ends(ScanCtx *ctx, int fd, uint64_t size, bool want_title,
                               ScanCopy *c) {
        RecordEnds ends;
        int r;

        c->title_unread = !want_title;
        r = record_read_ends(fd, size, want_title, ctx->scratch, &ends);
        if (ends.blocked && ctx->o->prefetch == SCAN_PREFETCH_AUTO) {
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
                        c->problem = strprintf("cannot stat: %s", errno_to_string(errno));
                        return c->problem ? 0 : -ENOMEM;
                }
                fs_fileid_from_stat(&c->id, &st);
                if (!S_ISREG(st.st_mode)) {
                        c->problem = strprintf("not a regular file (%s)",
                                               scan_type_name(st.st_mode));
                        return c->problem ? 0 : -ENOMEM;
                }
                if (st.st_dev != ctx->dev) {
                        c->problem = strdup("on another filesystem");
                        return c->problem ? 0 : -ENOMEM;
                }
                fd = fs_open_noatime(dfd, name, O_RDONLY);
                if (fd < 0) {
                        c->problem = strprintf("cannot open: %s", errno_to_string(-fd));
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
 * the scan reads next; *cursor is the first entry not yet advised. Only while ctx->prefetch (or
 * SCAN_PREFETCH_ALWAYS); advisory: what the scan reads and decides does not depend on it. */
void scan_prefetch_ahead(ScanCtx *ctx, int dfd, const ScanEntries *e, size_t next, size_t *cursor,
                         bool archived) {
        ScanPrefetch mode = ctx->o->prefetch;

        if (dfd < 0 || mode == SCAN_PREFETCH_OFF || (mode == SCAN_PREFETCH_AUTO && !ctx->prefetch))
                return;
        *cursor = MAX(*cursor, next);
        while (*cursor < e->n && *cursor < next + SCAN_PREFETCH_DEPTH) {
                int k = scan_prefetch_copy(ctx, dfd, &e->v[(*cursor)++], archived);

                if (mode != SCAN_PREFETCH_AUTO || k < 0)
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
                c->problem = strprintf("compressed transcript: cannot open: %s",
                                       fd < 0 ? errno_to_string(-fd) : "not a regular file");
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
                                 : strprintf("compressed transcript unreadable: %s",
                                             errno_to_string(-(r < 0 ? r : mfd)));
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
                _cleanup_free_ char *n = strprintf("%s.%s", s->id, exts[i]);
                _cleanup_free_ char *z = n ? strprintf("%s" COLD_SUFFIX, n) : NULL;
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
static int scan_sidecars(const ScanCtx *ctx, Session *s, int dfd, const ScanNames *names,
                         const char *id, bool *ret_worktree) {
        static const char *const suffixes[] = { ".worktree.json", ".pr.json", ".ledger.jsonl" };

        if (dfd < 0 || names->n == 0)
                return 0;
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
        return 0;
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
                s->mtime = MAX(s->mtime, (msec_t)(c->id.mtime_ns / 1000000));
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
int scan_session(ScanCtx *ctx, ScanProject *p, const ScanEntry *act,
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
                r = scan_sidecars(ctx, &s, p->chats_fd, &p->chats_other, act->id, &ef->worktree[0]);
                if (r < 0)
                        goto fail;
        }
        if (arc) {
                memcpy(ef->worktree_id[1], arc->id, sizeof(ef->worktree_id[1]));
                r = scan_sidecars(ctx, &s, p->archive_fd, &p->archive_other, arc->id,
                                  &ef->worktree[1]);
                if (r < 0)
                        goto fail;
        }
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
        session_done(&s);
        return r;
}
