/* erase-edit.c: the edit of one file Qwen shares (erase.h): read it, splice the rows or entries
 * of the given sessions out (erase-splice.c), write the new text to a temp file, fsync, re-read
 * the original to check that nothing wrote it meanwhile, rename, fsync the directory; and the
 * parse of a text kept between a run's batches (EraseCached). erase.c runs a batch's edits. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erase.h"
#include "erase-int.h"
#include "fsutil.h"
#include "macro.h"
#include "qwen.h"
#include "util.h"

static void (*erase_hook)(void *userdata, const char *name);
static void *erase_hook_userdata;

void erase_test_set_hook(void (*hook)(void *userdata, const char *name), void *userdata) {
        erase_hook = hook;
        erase_hook_userdata = userdata;
}

/* Open (dir_fd, name) to be read, with its stat: the fd, or -errno (-EBADMSG: not a regular
 * file). */
int erase_open(int dir_fd, const char *name, struct stat *ret_st) {
        _cleanup_close_ int fd = fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);

        if (fd < 0)
                return fd;
        if (fstat(fd, ret_st) < 0)
                return -errno;
        if (!S_ISREG(ret_st->st_mode))
                return -EBADMSG;
        return TAKE_FD(fd);
}

/* Read (dir_fd, name) whole with its stat. */
static int erase_read(int dir_fd, const char *name, struct stat *ret_st, char **ret,
                      size_t *ret_size) {
        _cleanup_close_ int fd = erase_open(dir_fd, name, ret_st);

        if (fd < 0)
                return fd;
        return fs_read_fd(fd, ERASE_FILE_MAX, ret, ret_size);
}

/* Does fd (st: its fstat) hold exactly text[0..n), read as fs_read_fd() reads it (st_size bytes
 * from the start)? 1 or 0, a chunk at a time (no copy of the whole file), or -errno. */
int erase_fd_is(int fd, const struct stat *st, const char *text, size_t n) {
        _cleanup_free_ char *buf = NULL;
        const size_t chunk = 1024 * 1024;
        size_t at = 0;

        if ((uint64_t)st->st_size != n)
                return 0;
        buf = malloc(MIN(n, chunk) + 1);
        if (!buf)
                return -ENOMEM;
        while (at < n) {
                ssize_t k = pread(fd, buf, MIN(n - at, chunk), (off_t)at);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0 || memcmp(buf, text + at, (size_t)k) != 0)
                        return 0; /* shorter, or other bytes */
                at += (size_t)k;
        }
        return 1;
}

/* Is (dir_fd, name) exactly text[0..n) (read as erase_read() reads it, stat with st, a chunk at
 * a time)? 0 when it is, -EAGAIN when not, else erase_read()'s -errno. */
static int erase_same(int dir_fd, const char *name, const struct stat *st, const char *text,
                      size_t n) {
        struct stat st2;
        _cleanup_close_ int fd = erase_open(dir_fd, name, &st2);
        int r;

        if (fd < 0)
                return fd;
        if ((uint64_t)st2.st_size > ERASE_FILE_MAX)
                return -EFBIG;
        if (st2.st_dev != st->st_dev || st2.st_ino != st->st_ino || st2.st_size != st->st_size ||
            st2.st_mtim.tv_sec != st->st_mtim.tv_sec || st2.st_mtim.tv_nsec != st->st_mtim.tv_nsec)
                return -EAGAIN;
        r = erase_fd_is(fd, &st2, text, n);
        return r < 0 ? r : r > 0 ? 0 : -EAGAIN;
}


/* The texts kept at most (their sum): a file edited again by the next batch is not parsed
 * again; one that is not is dropped at the end of the batch (erase_cache_trim()). */
#define ERASE_CACHE_MAX (2 * (size_t)ERASE_FILE_MAX)

void erase_cache_clear(EraseCached *c) {
        if (!c)
                return;
        free(c->text);
        c->text = NULL;
        c->n = 0;
        c->fresh = false;
        erase_parsed_done(&c->p);
}

/* What c found in text[0..n), when c was made from exactly this text; else NULL. */
static const EraseParsed *erase_cache_match(const EraseCached *c, const char *text, size_t n) {
        if (!c || !c->text || c->n != n || memcmp(c->text, text, n) != 0)
                return NULL;
        return &c->p;
}

/* c takes *text (n bytes) and *p, which describes it (both reset); when the cache would grow
 * past ERASE_CACHE_MAX, c is emptied instead and *text and *p stay the caller's. */
void erase_cache_put(EraseCached *c, size_t total, char **text, size_t n, EraseParsed *p) {
        if (!c)
                return;
        erase_cache_clear(c);
        if (total + n > ERASE_CACHE_MAX)
                return;
        c->text = TAKE_PTR(*text);
        c->n = n;
        c->p = *p;
        *p = (EraseParsed){};
}

/* The edit of erase.h: splice, temp file with the original's mode and owner, fsync, re-read and
 * compare, rename, fsync the directory. *ret_removed: how many the file lost on disk (set once it
 * is renamed into place, also when the directory's fsync then fails; else 0). cache (may be
 * NULL): the file's entry, used when it was made from the text read, and left describing the
 * file as it is after the edit (total: what the other entries hold). */
int erase_edit(int dir_fd, const char *name, EraseParseFn parse, const EraseIds *ids,
                      EraseStepFn step, void *userdata, unsigned *ret_removed, EraseCached *cache,
                      size_t total) {
        _cleanup_free_ char *own_text = NULL, *new = NULL;
        _cleanup_free_ char *tmp = strprintf(".%s.qgc-tmp", name);
        _cleanup_free_ bool *drop = NULL;
        _cleanup_(erase_parsed_done) EraseParsed own = {}, next = {};
        _cleanup_close_ int fd = -EBADF;
        const EraseParsed *p = NULL;
        const char *old;
        struct stat st, now;
        size_t n_old, n_new;
        unsigned removed;
        int r, derived;

        *ret_removed = 0;
        if (!tmp)
                return -ENOMEM;
        /* the text this batch read a moment ago (erase_file_has()), when the file's stat says it
         * is still the same; either way the re-read below must find exactly what is spliced */
        if (cache && cache->fresh && fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) >= 0 &&
            now.st_dev == cache->st.st_dev && now.st_ino == cache->st.st_ino &&
            now.st_size == cache->st.st_size && now.st_mtim.tv_sec == cache->st.st_mtim.tv_sec &&
            now.st_mtim.tv_nsec == cache->st.st_mtim.tv_nsec) {
                old = cache->text;
                n_old = cache->n;
                st = cache->st;
                p = &cache->p;
        } else {
                r = erase_read(dir_fd, name, &st, &own_text, &n_old);
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
        r = erase_parsed_find(old, p, ids, drop, &removed);
        if (r < 0 || removed == 0) {
                if (p == &own)
                        erase_cache_put(cache, total, &own_text, n_old, &own);
                return r;
        }
        derived = erase_parsed_splice(old, n_old, p, drop, &new, &n_new, cache ? &next : NULL);
        if (derived < 0)
                return derived;

        /* a leftover of a crashed run has this fixed name (the tree lock is ours) */
        r = fs_unlink(dir_fd, tmp, 0);
        if (r < 0 && r != -ENOENT)
                return r;
        fd = fs_openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0)
                return fd;
        r = write_all(fd, new, n_new);
        if (r >= 0 && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
            fchown(fd, st.st_uid, st.st_gid) < 0)
                r = -errno;
        if (r >= 0 && fchmod(fd, st.st_mode & 07777) < 0)
                r = -errno;
        if (r >= 0)
                r = fs_fsync(fd);
        if (r < 0)
                goto fail;
        if (erase_hook)
                erase_hook(erase_hook_userdata, name);

        /* a write by Qwen since the read is never lost: the file must be exactly as read */
        r = erase_same(dir_fd, name, &st, old, n_old);
        if (r < 0)
                goto fail;
        if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
                r = -errno;
                goto fail;
        }
        *ret_removed = removed;
        /* the file is the new text now: what the next batch's edit reads */
        if (derived == 0)
                erase_cache_put(cache, total, &new, n_new, &next);
        else
                erase_cache_clear(cache);
        if (step)
                step(userdata, name);
        r = fs_fsync(dir_fd);
        return r < 0 ? r : (int)removed;
fail:
        (void)fs_unlink(dir_fd, tmp, 0);
        if (p == &own)
                erase_cache_put(cache, total, &own_text, n_old, &own);
        return r;
}

int erase_logs_rows(int dir_fd, const char *id, EraseStepFn step, void *userdata) {
        const EraseIds ids = { .ids = &id, .n = 1 };
        unsigned removed;

        return erase_edit(dir_fd, ERASE_LOGS_FILE, erase_parse_logs, &ids, step, userdata,
                          &removed, NULL, 0);
}

int erase_org_entry(int dir_fd, const char *id, EraseStepFn step, void *userdata) {
        const EraseIds ids = { .ids = &id, .n = 1 };
        unsigned removed;

        return erase_edit(dir_fd, ERASE_ORG_FILE, erase_parse_org, &ids, step, userdata,
                          &removed, NULL, 0);
}
