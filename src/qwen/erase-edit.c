/* erase-edit.c: the edit of one file Qwen shares (erase-edit.h): read it, splice the rows or
 * entries of the given sessions out (erase-splice.c), write the new text to a temp file, fsync,
 * exchange it with the file, merge what a writer wrote meanwhile, fsync the directory; and the
 * parse of a text kept between a run's batches (EraseCached). erase.c runs a batch's edits. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erase-edit.h"
#include "fs.h"
#include "json.h"
#include "json-input.h"
#include "log.h"
#include "macro.h"
#include "util.h"

int erase_edit_open(int dir_fd, const char *name, struct stat *ret_st) {
        return fs_open_regular(dir_fd, name, ret_st);
}

size_t erase_edit_file_max(EraseParseFn parse) {
        return parse == erase_splice_parse_org ? json_input_info(JSON_INPUT_ORGANIZATION)->max
                                               : ERASE_FILE_MAX;
}

/* erase_copy_fd()'s chunk: memory is one chunk whatever the size. */
#define ERASE_CHUNK (1024 * 1024)

int erase_edit_fd_is(int fd, const struct stat *st, const char *text, size_t n) {
        return fs_version_is(fd, st, NULL, text, n, NULL);
}

/* The texts kept at most (their sum): a file edited again by the next batch is not parsed
 * again; one that is not is dropped at the end of the batch (erase_cache_trim()). */
#define ERASE_CACHE_MAX (2 * (size_t)ERASE_FILE_MAX)

void erase_edit_cache_clear(EraseCached *c) {
        if (!c)
                return;
        free(c->text);
        c->text = NULL;
        c->n = 0;
        c->fresh = false;
        erase_splice_parsed_done(&c->p);
}

/* What c found in text[0..n), when c was made from exactly this text; else NULL. */
static const EraseParsed *erase_cache_match(const EraseCached *c, const char *text, size_t n) {
        if (!c || !c->text || c->n != n || memcmp(c->text, text, n) != 0)
                return NULL;
        return &c->p;
}

/* c takes *text (n bytes) and *p, which describes it (both reset); when the cache would grow
 * past ERASE_CACHE_MAX, c is emptied instead and *text and *p stay the caller's. */
void erase_edit_cache_put(EraseCached *c, size_t total, char **text, size_t n, EraseParsed *p) {
        if (!c)
                return;
        erase_edit_cache_clear(c);
        if (total + n > ERASE_CACHE_MAX)
                return;
        c->text = TAKE_PTR(*text);
        c->n = n;
        c->p = *p;
        *p = (EraseParsed){};
}

/* The temp files of an edit of name: ".<name>.qgc-tmp" and ".<name>.qgc-tmp2". */
static int erase_temp_names(const char *name, char **ret0, char **ret1) {
        *ret0 = fs_temp_name(name, false);
        *ret1 = fs_temp_name(name, true);
        return *ret0 && *ret1 ? 0 : -ENOMEM;
}

/* Remove the temp files a crashed edit of name left in dir_fd (and ".<name>.qgc-keep",
 * erase_keep_unmerged()'s) (the tree lock is ours): a run cut
 * short between the exchange and the removal leaves the text it replaced there, which holds the
 * rows of the sessions it deleted. Also when there is nothing more to edit. 0 or -errno. */
int erase_edit_leftovers_remove(int dir_fd, const char *name) {
        _cleanup_free_ char *t0 = NULL, *t1 = NULL;
        int r = erase_temp_names(name, &t0, &t1);

        if (r >= 0)
                r = fs_unlink(dir_fd, t0, 0);
        if (r >= 0 || r == -ENOENT)
                r = fs_unlink(dir_fd, t1, 0);
        if (r >= 0 || r == -ENOENT) {
                _cleanup_free_ char *t2 = util_strprintf(".%s.qgc-keep", name);

                r = t2 ? fs_unlink(dir_fd, t2, 0) : -ENOMEM;
        }
        return r == -ENOENT ? 0 : r;
}

/* How many times one edit puts a version of the file in place at most (erase_edit()). Each
 * time a writer rewrote the file since qgc read it, the writer's version is spliced again and put
 * in place again; Qwen writes the file once per prompt, so more than a few in the milliseconds of
 * an edit is a writer in a loop. */
#define ERASE_EDIT_ROUNDS 8

/* The first n bytes of src (fewer at its end) written to out a chunk at a time: memory is one
 * chunk whatever the size. 0 or -errno. */
static int erase_copy_fd(int src, int out, uint64_t n) {
        _cleanup_free_ char *buf = malloc(ERASE_CHUNK);

        if (!buf)
                return -ENOMEM;
        for (uint64_t at = 0; at < n;) {
                ssize_t k = fs_pread_full(src, buf, (size_t)MIN(n - at, (uint64_t)ERASE_CHUNK),
                                          (off_t)at);
                int r;

                if (k <= 0)
                        return (int)k;
                r = util_write_all(out, buf, (size_t)k);
                if (r < 0)
                        return r;
                at += (uint64_t)k;
        }
        return 0;
}

/* The temp file tmp with text[0..n) (or, src >= 0, a copy of src's first n bytes), the mode and
 * owner of like, fsynced: its fd (*ret_st), or -errno (no temp file left behind). */
static int erase_write_temp(int dir_fd, const char *tmp, const char *text, size_t n, int src,
                            const struct stat *like, struct stat *ret_st) {
        _cleanup_close_ int fd = fs_temp_like(dir_fd, tmp, like, 07777, true);
        int r;

        if (fd < 0)
                return fd;
        r = src >= 0 ? erase_copy_fd(src, fd, n) : util_write_all(fd, text, n);
        if (r >= 0)
                r = fs_fsync(fd);
        if (r >= 0 && fstat(fd, ret_st) < 0)
                r = -errno;
        if (r < 0) {
                (void)fs_unlink(dir_fd, tmp, 0);
                return r;
        }
        return TAKE_FD(fd);
}

/* The version of the file a writer wrote while it was edited (fd, st, and its text when it could
 * be read whole and parsed: p->ne rows or entries), which the rounds of erase_edit() could not
 * merge, kept beside it as <name>.qgc-unmerged-<inode> so that none of its rows is lost: without
 * the elements of ids when it parses, else as it is (moved from tmp, or copied). *ret_kept: that
 * name. 0 or -errno. */
static int erase_keep_unmerged(int dir_fd, const char *name, const char *tmp, bool at_tmp,
                               const struct stat *st, int fd, const char *text, size_t n,
                               const EraseParsed *p, const EraseIds *ids, char **ret_kept) {
        _cleanup_free_ char *kept = NULL, *part = util_strprintf(".%s.qgc-keep", name);
        _cleanup_free_ char *spliced = NULL;
        _cleanup_free_ bool *drop = NULL;
        _cleanup_close_ int out = -EBADF;
        const EraseIds all = { .ids = ids->ids, .n = ids->n };
        const char *src = tmp;
        struct stat ost = *st;
        size_t m = 0;
        unsigned k = 0;
        int r = 0;

        if (!part)
                return -ENOMEM;
        if (p || !at_tmp) {
                /* a new file (named after its own inode, which no other file has) */
                if (p) {
                        drop = calloc(p->ne ? p->ne : 1, sizeof(bool));
                        r = drop ? erase_splice_find(text, p, &all, drop, &k) : -ENOMEM;
                        if (r >= 0)
                                r = erase_splice_text(text, n, p, drop, NULL, NULL, NULL,
                                                      &spliced, &m, NULL);
                } else if (fd < 0 || fstat(fd, &ost) < 0)
                        r = fd < 0 ? fd : -errno;
                else
                        m = (size_t)ost.st_size; /* copied as it is now */
                if (r >= 0)
                        r = fs_unlink(dir_fd, part, 0);
                if (r >= 0 || r == -ENOENT)
                        r = out = erase_write_temp(dir_fd, part, spliced, m, p ? -EBADF : fd, st,
                                                   &ost);
                if (r < 0)
                        return r;
                src = part;
        }
        kept = util_strprintf("%s.qgc-unmerged-%ju", name, (uintmax_t)ost.st_ino);
        r = kept ? fs_rename_noreplace(dir_fd, src, dir_fd, kept) : -ENOMEM;
        if (r < 0) {
                if (src == part)
                        (void)fs_unlink(dir_fd, part, 0);
                return r;
        }
        if (p && at_tmp)
                (void)fs_unlink(dir_fd, tmp, 0);
        log_warning("%s: the version qgc's edit replaced last was written by another process "
                    "and is not merged: kept as %s", name, kept);
        if (ret_kept)
                *ret_kept = TAKE_PTR(kept);
        return 0;
}

/* A version of the file a writer wrote while it was edited (erase_read_version()): its text
 * (NULL when it could not be read whole), parse (has false when it does not parse) and which of
 * its elements are of the ids (drop, NULL when it did not parse; k of them). */
typedef struct EraseVersion {
        char *text;
        size_t n;
        EraseParsed p;
        bool *drop;
        unsigned k;
} EraseVersion;

static void erase_version_done(EraseVersion *v) {
        free(v->text);
        free(v->drop);
        erase_splice_parsed_done(&v->p);
        *v = (EraseVersion){};
}

/* Read the version open at fd into v, with how many elements of each id it holds (ids->counts).
 * 0 (also when it cannot be read or parsed) or -ENOMEM. */
static int erase_read_version(int fd, EraseParseFn parse, const EraseIds *ids, EraseVersion *v) {
        int r;

        erase_version_done(v);
        for (size_t i = 0; i < ids->n; i++)
                ids->counts[i] = 0;
        r = fs_read_fd(fd, erase_edit_file_max(parse), &v->text, &v->n);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        r = parse(v->text, v->n, &v->p);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        v->drop = calloc(v->p.ne ? v->p.ne : 1, sizeof(bool));
        if (!v->drop)
                return -ENOMEM;
        return erase_splice_find(v->text, &v->p, ids, v->drop, &v->k);
}

/* The version a round of erase_edit() puts next, from a writer's version d: d without the
 * elements of the ids, and with every element of the version at the name
 * (put, when it is one qgc merged: add_put) that d does not have. put holds what every version
 * seen during the edit held but the ids' elements, and a writer may not have seen all of it (it
 * read the file while a version of qgc's was there): nothing one held is lost. A writer that
 * removed an element during the edit gets it back (a row removed at the moment qgc deleted
 * others; never one of the ids'). *ret NULL when that is d itself. 0 or -ENOMEM. */
static int erase_merge_next(EraseParseFn parse, const char *put, size_t n_put, bool add_put,
                            const EraseVersion *d, char **ret, size_t *ret_n) {
        _cleanup_(erase_splice_parsed_done) EraseParsed pp = {};
        _cleanup_free_ bool *add = NULL;
        unsigned n_add = 0;
        int r;

        *ret = NULL;
        r = add_put ? parse(put, n_put, &pp) : -EBADMSG;
        if (r == -ENOMEM)
                return r;
        if (r >= 0) {
                add = calloc(pp.ne ? pp.ne : 1, sizeof(bool));
                if (!add)
                        return -ENOMEM;
                r = erase_splice_missing(put, &pp, d->text, &d->p, add, &n_add);
                if (r < 0)
                        return r;
        }
        if (d->k == 0 && n_add == 0)
                return 0;
        return erase_splice_text(d->text, d->n, &d->p, d->drop, put, n_add ? &pp : NULL, add, ret,
                                 ret_n, NULL);
}

/* May the writer's version d be merged (it parsed, and has no element of one of ids that the
 * text read did not have: that session is being written, nothing more of it may go)? Then
 * *ret is the version to put next (erase_merge_next(); NULL: d itself). false: d is put back as
 * it is (also out of memory). ids->counts: d's, counts: the text read's. */
static bool erase_next(EraseParseFn parse, const EraseIds *ids, const unsigned *counts,
                       const char *put, size_t n_put, bool put_ok, const EraseVersion *d,
                       char **ret, size_t *ret_n) {
        bool ok = d->drop != NULL;

        *ret = NULL;
        for (size_t i = 0; ok && i < ids->n; i++)
                ok = ids->counts[i] <= counts[i];
        return ok && erase_merge_next(parse, put, n_put, put_ok, d, ret, ret_n) >= 0;
}

static bool erase_same_file(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Has the file at the name still the identity, size and mtime of st? */
static bool erase_stat_same(const struct stat *a, const struct stat *b) {
        return erase_same_file(a, b) && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The edit: splice, temp file with the original's mode and owner, fsync, put in place by
 * exchange (fs_exchange_open()), fsync the directory, the file it replaced removed. When the file it
 * replaced is not exactly the one read, a writer wrote it meanwhile (Qwen's Logger and
 * organisation service read, change and rewrite the whole file, by rename, or in place when the
 * owner differs, and take no lock qgc could take): its version is merged (erase_merge_next())
 * and put in place again, up to ERASE_EDIT_ROUNDS exchanges, so that no element a writer added
 * is lost and none of ids comes back; a version an exchange displaced goes back to the name at
 * once. A writer's version that does not parse, or that holds more elements of one of ids than
 * the text read (that session is being written: nothing more of it may go), stays, and the edit
 * fails (-EAGAIN); so does one at the last round, and what qgc merged that it lacks is kept
 * beside the file (erase_keep_unmerged()). The cache entry is
 * used when it was made from the text read, and left describing the file as it is after. */
int erase_edit(int dir_fd, const char *name, EraseParseFn parse, const EraseIds *ids,
               EraseStepFn step, void *userdata, unsigned *ret_removed, EraseCached *cache,
               size_t total, char **ret_kept) {
        _cleanup_free_ char *own_text = NULL, *new = NULL, *want_buf = NULL, *put_buf = NULL;
        _cleanup_free_ char *cmp = malloc(FS_CMP_CHUNK), *tmp0 = NULL, *tmp1 = NULL;
        _cleanup_free_ bool *drop = NULL;
        _cleanup_free_ unsigned *counts = calloc(ids->n ? ids->n : 1, sizeof(unsigned));
        _cleanup_free_ unsigned *d_counts = calloc(ids->n ? ids->n : 1, sizeof(unsigned));
        _cleanup_(erase_splice_parsed_done) EraseParsed own = {}, next = {};
        _cleanup_(erase_version_done) EraseVersion v = {};
        _cleanup_close_ int dfd = -EBADF;
        const EraseIds set = { .ids = ids->ids, .n = ids->n, .counts = counts };
        const EraseIds d_set = { .ids = ids->ids, .n = ids->n, .counts = d_counts };
        const char *tmps[2];
        const EraseParsed *p = NULL;
        const char *old, *want, *put, *exp;
        struct stat st, now, want_st, put_st = {}, dst, like, exp_st, xst;
        size_t n_old, n_new, n_want, n_put, n_next = 0, n_exp, rest = 0;
        char *next_buf = NULL;
        unsigned removed, rounds = 0, pre = 0;
        bool at_tmp = false, put_ok = true, next_ok, reuse = false, swapped = false, back = false,
             backed = false;
        int at = 0, r, derived;

        *ret_removed = 0;
        if (erase_temp_names(name, &tmp0, &tmp1) < 0 || !counts || !d_counts || !cmp)
                return -ENOMEM;
        /* the text this batch read a moment ago (erase_file_has()), when the file's stat says it
         * is still the same; either way the replaced file must be exactly what is spliced */
        if (cache && cache->fresh && fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) >= 0 &&
            erase_stat_same(&now, &cache->st)) {
                old = cache->text;
                n_old = cache->n;
                st = cache->st;
                p = &cache->p;
        } else {
                _cleanup_close_ int fd = erase_edit_open(dir_fd, name, &st);

                r = fd < 0 ? fd : fs_read_fd(fd, erase_edit_file_max(parse), &own_text, &n_old);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                old = own_text;
                p = erase_cache_match(cache, old, n_old);
        }
        if (cache)
                cache->fresh = false; /* read once */
        for (size_t i = 0; ids->counts && i < ids->n; i++)
                ids->counts[i] = 0;
        if (!p) {
                r = parse(old, n_old, &own);
                if (r < 0)
                        return r;
                p = &own;
        }
        drop = calloc(p->ne ? p->ne : 1, sizeof(bool));
        if (!drop)
                return -ENOMEM;
        r = erase_splice_find(old, p, &set, drop, &removed);
        if (r < 0 || removed == 0) {
                if (p == &own)
                        erase_edit_cache_put(cache, total, &own_text, n_old, &own);
                return r;
        }
        derived = erase_splice_text(old, n_old, p, drop, NULL, NULL, NULL, &new, &n_new,
                                    cache ? &next : NULL);
        if (derived < 0)
                return derived;

        r = erase_edit_leftovers_remove(dir_fd, name);
        if (r < 0)
                return r;
        tmps[0] = tmp0;
        tmps[1] = tmp1;
        /* each round: the version that should be at the name (want) is replaced by put */
        want = old;
        n_want = n_old;
        want_st = st;
        put = new;
        n_put = n_new;
        like = st;
        for (;;) {
                if (!reuse) {
                        _cleanup_close_ int fd = -EBADF;

                        /* beside the version a writer left at tmps[at], until this one replaced
                         * what is at the name (a failure here loses nothing of it); the other
                         * name holds one that an earlier round merged */
                        if (at_tmp)
                                at = 1 - at;
                        if (rounds > 1) {
                                r = fs_fsync(dir_fd);
                                if (r >= 0)
                                        r = fs_unlink(dir_fd, tmps[at], 0);
                                if (r < 0 && r != -ENOENT)
                                        break;
                        }
                        fd = erase_write_temp(dir_fd, tmps[at], put, n_put, -EBADF, &like,
                                              &put_st);
                        if (fd < 0) {
                                r = fd;
                                break;
                        }
                }
                /* right before the exchange: does the name still hold want (identity, size,
                 * mtime)? A writer that rewrote it while the temp file was written and synced is
                 * merged first, unseen by anyone, so that a version of qgc's at the name never
                 * hides a row of it from the next writer's read */
                if (!reuse && pre < ERASE_EDIT_ROUNDS &&
                    fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) >= 0 &&
                    !erase_stat_same(&now, &want_st)) {
                        _cleanup_close_ int nfd = erase_edit_open(dir_fd, name, &dst);

                        pre++;
                        (void)fs_unlink(dir_fd, tmps[at], 0); /* never in place */
                        if (nfd < 0) {
                                r = nfd == -ENOENT ? -EAGAIN : nfd;
                                break;
                        }
                        r = erase_read_version(nfd, parse, &d_set, &v);
                        next_ok = r >= 0 && erase_next(parse, &d_set, counts, put, n_put, put_ok,
                                                       &v, &next_buf, &n_next);
                        /* the writer's version is at the name: the next exchange replaces it */
                        free(want_buf);
                        n_want = v.text ? v.n : 0;
                        want_buf = TAKE_PTR(v.text);
                        want = want_buf ?: "";
                        want_st = dst;
                        like = dst;
                        free(put_buf);
                        put_buf = NULL;
                        put_ok = next_ok;
                        if (!next_ok || !next_buf) {
                                r = 0; /* it stays: nothing of ids in it, or it wins */
                                at_tmp = false;
                                break;
                        }
                        put_buf = TAKE_PTR(next_buf);
                        put = put_buf;
                        n_put = n_next;
                        at_tmp = false;
                        continue;
                }
                dfd = macro_safe_close(dfd);
                dfd = fs_exchange_open(dir_fd, tmps[at], name, true, &at_tmp, &xst);
                if (dfd < 0) {
                        /* nothing replaced: the version a writer left is kept, qgc's goes */
                        if (reuse)
                                r = erase_keep_unmerged(dir_fd, name, tmps[at], true, &put_st,
                                                        -EBADF, NULL, 0, NULL, ids, ret_kept);
                        else
                                (void)fs_unlink(dir_fd, tmps[at], 0);
                        r = dfd == -ENOENT ? -EAGAIN : dfd; /* gone: a writer moved it away */
                        break;
                }
                rounds++;
                swapped = true;
                if (step)
                        step(userdata, name);
                if (put_ok)
                        *ret_removed = removed;
                /* the version replaced is the one that should have been there: done */
                if (fstat(dfd, &dst) < 0)
                        r = -errno;
                else
                        r = fs_version_is(dfd, &dst, &want_st, want, n_want, cmp);
                if (r > 0)
                        break;
                /* a writer's version (dfd): back at the name at once, so that qgc's was there for
                 * microseconds, not a round (a writer that read it, without the rows of this
                 * one, writes again before the next exchange, which merges them); what a writer
                 * put at the name meanwhile comes back to it in turn. Each is merged; the last
                 * one back is at the name, and is replaced as the pre-check's is */
                exp = put;
                n_exp = n_put;
                exp_st = put_st;
                backed = false;
                while (r == 0 && at_tmp) {
                        _cleanup_close_ int y = -EBADF;
                        struct stat yst;

                        bool swapped_back;

                        y = fs_exchange_open(dir_fd, tmps[at], name, false, &swapped_back, &yst);
                        if (y < 0 && !swapped_back) {
                                r = y; /* dfd is still at tmps[at] */
                                break;
                        }
                        rounds++;
                        backed = true;
                        if (y < 0) {
                                r = y;
                                at_tmp = false;
                                break;
                        }
                        r = fs_version_is(y, &yst, &exp_st, exp, n_exp, cmp);
                        if (r >= 0) {
                                int q = erase_read_version(dfd, parse, &d_set, &v);

                                r = q < 0 ? q : r;
                        }
                        if (r < 0) {
                                /* what is at tmps[at] is kept beside */
                                erase_version_done(&v);
                                dfd = macro_safe_close(dfd);
                                dfd = TAKE_FD(y);
                                dst = yst;
                                break;
                        }
                        put_ok = erase_next(parse, &d_set, counts, put, n_put, put_ok, &v,
                                            &next_buf, &n_next);
                        rest = v.drop ? v.p.ne - v.k : 0; /* its elements but the ids' */
                        free(put_buf);
                        put_buf = TAKE_PTR(next_buf);
                        free(want_buf);
                        want_buf = TAKE_PTR(v.text);
                        n_want = want_buf ? v.n : 0;
                        want = want_buf ?: "";
                        want_st = like = dst;
                        put = put_buf ?: want;
                        n_put = put_buf ? n_next : n_want;
                        if (r > 0) {
                                /* the version this exchange put is back at tmps[at]: it goes */
                                (void)fs_unlink(dir_fd, tmps[at], 0);
                                at_tmp = false;
                                back = true;
                                break;
                        }
                        dfd = macro_safe_close(dfd);
                        dfd = TAKE_FD(y);
                        dst = yst;
                        exp = want;
                        n_exp = n_want;
                        exp_st = want_st;
                        if (rounds >= ERASE_EDIT_ROUNDS)
                                break;
                }
                if (back && put_ok && put_buf && rounds < ERASE_EDIT_ROUNDS) {
                        back = reuse = false;
                        continue;
                }
                if (back && (!put_ok || !put_buf)) {
                        r = 0; /* it stays: nothing of ids in it, or it wins */
                        break;
                }
                /* a writer's version (or one that cannot be read): what is in it */
                erase_version_done(&v);
                if (r == 0 && !back)
                        r = erase_read_version(dfd, parse, &d_set, &v);
                if (r < 0 || rounds >= ERASE_EDIT_ROUNDS) {
                        /* kept beside the file, with what qgc merged (the version put, or a
                         * writer's when it came back, stays at the name) */
                        bool parsed = v.drop != NULL;
                        int q = 0;

                        if (r >= 0 && (back || (parsed && erase_next(parse, &d_set, counts, put,
                                                                     n_put, put_ok, &v, &next_buf,
                                                                     &n_next) && next_buf))) {
                                erase_version_done(&v);
                                v.n = back ? n_put : n_next;
                                v.text = back ? TAKE_PTR(put_buf) : TAKE_PTR(next_buf);
                                parsed = parse(v.text, v.n, &v.p) >= 0;
                        }
                        /* not when the writer's version at the name has every element */
                        if (!back || !parsed || v.p.ne != rest)
                                q = erase_keep_unmerged(dir_fd, name, tmps[at], at_tmp, &dst, dfd,
                                                        v.text, v.n, parsed ? &v.p : NULL, ids,
                                                        ret_kept);
                        at_tmp = false;
                        r = r < 0 ? r : q < 0 ? q : put_ok && !backed ? 0 : -EAGAIN;
                        break;
                }
                /* the next version: the writer's, merged, or as it is */
                next_ok = erase_next(parse, &d_set, counts, put, n_put, put_ok, &v, &next_buf,
                                     &n_next);
                /* the version put is at the name: the next round replaces it */
                free(want_buf);
                want_buf = TAKE_PTR(put_buf);
                want = put;
                n_want = n_put;
                want_st = put_st;
                like = dst;
                put_ok = next_ok;
                reuse = false;
                if (next_buf) {
                        put_buf = TAKE_PTR(next_buf);
                        put = put_buf;
                        n_put = n_next;
                } else {
                        /* as it is: the very file when it is at tmps[at] (a writer may still be
                         * writing it in place), else (no exchange) a copy */
                        n_put = v.text ? v.n : 0;
                        put_buf = TAKE_PTR(v.text);
                        put = put_buf ?: "";
                        put_st = dst;
                        reuse = at_tmp;
                        if (!put_buf && !at_tmp) {
                                /* it could not be read (over the limit): only dfd holds it */
                                r = erase_keep_unmerged(dir_fd, name, tmps[at], false, &dst, dfd,
                                                        NULL, 0, NULL, ids, ret_kept);
                                r = r < 0 ? r : -EAGAIN;
                                break;
                        }
                }
        }
        if (swapped) {
                int q = fs_fsync(dir_fd);

                /* what the last round replaced (the version it expected) goes, and the one a
                 * writer left that the next round replaced */
                if (q >= 0 && at_tmp)
                        q = fs_unlink(dir_fd, tmps[at], 0);
                if (q >= 0 && rounds > 1)
                        (void)fs_unlink(dir_fd, tmps[1 - at], 0);
                if (r >= 0 && q < 0)
                        r = q;
        }
        if (!put_ok)
                *ret_removed = 0;
        for (size_t i = 0; ids->counts && *ret_removed > 0 && i < ids->n; i++)
                ids->counts[i] = counts[i];
        if (rounds > 1)
                log_debug("%s: written by another process while qgc edited it, merged in %u "
                          "rounds", name, rounds);
        /* the file as it is now: what the next batch's edit reads */
        if (rounds == 1 && r >= 0 && derived == 0)
                erase_edit_cache_put(cache, total, &new, n_new, &next);
        else if (swapped)
                erase_edit_cache_clear(cache);
        else if (p == &own)
                erase_edit_cache_put(cache, total, &own_text, n_old, &own);
        if (r < 0)
                return r;
        return put_ok ? (int)removed : -EAGAIN;
}
