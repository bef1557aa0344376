/* erase.c: removes a deleted session's rows and entries from the JSON files Qwen shares between
 * sessions, byte for byte as Qwen's own delete would write them (see erase.h): a batch's edits,
 * each file once for all of its sessions, with the liveness checks before them; the names of a
 * session's parts in them for the scan and the executor. The edit of one file is erase-edit.c's;
 * the texts themselves are spliced by erase-splice.c. */
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
#include "erase-splice.h"
#include "fs.h"
#include "live.h"
#include "macro.h"
#include "qwen.h"
#include "sha256.h"
#include "util.h"

/* Sessions of the tree of s that belong to the project of s: the same projects/ directory (the
 * organisation file) or the same hash (logs.json). */
static bool erase_same_project(const Session *a, const Session *s) {
        return a->tree == s->tree &&
               ((a->project_dir && s->project_dir && streq(a->project_dir, s->project_dir)) ||
                (a->hash && s->hash && streq(a->hash, s->hash)));
}

/* One session of the inventory in EraseIndex.by_id. */
typedef struct EraseKey {
        uint32_t tree;
        const char *id;
        size_t index;
} EraseKey;

/* The lookups of the batches of one run into the inventory (erase.h), built once: every session
 * by (tree, id ignoring case), for erase_elsewhere(); the sessions the scan found live, in the
 * inventory's order, for the check of a project's live sessions. Both are the scan's facts, which
 * do not change during the run; what can change since the scan is read afresh at each edit. */
struct EraseIndex {
        const Inventory *inv;
        size_t n_sessions; /* inv->n_sessions when built */
        EraseKey *by_id;
        size_t *live;
        size_t n_live;
        EraseCached **cache; /* the shared files' parses, kept from one batch to the next */
        size_t n_cache;
        unsigned gen; /* erase_sessions_shared() calls */
};

static int erase_key_cmp(const void *a, const void *b) {
        const EraseKey *x = a, *y = b;

        if (x->tree != y->tree)
                return x->tree < y->tree ? -1 : 1;
        return util_ascii_strcasecmp(x->id, y->id);
}

EraseIndex *erase_index_free(EraseIndex *x) {
        if (x) {
                free(x->by_id);
                free(x->live);
                for (size_t i = 0; i < x->n_cache; i++) {
                        erase_edit_cache_clear(x->cache[i]);
                        free(x->cache[i]);
                }
                free(x->cache);
                free(x);
        }
        return NULL;
}

/* The sum of the texts x keeps but c's. */
static size_t erase_cache_total(const EraseIndex *x, const EraseCached *c) {
        size_t t = 0;

        for (size_t i = 0; i < x->n_cache; i++)
                if (x->cache[i] != c)
                        t += x->cache[i]->n;
        return t;
}

/* At the end of a call: the entries it did not use are dropped. */
static void erase_cache_trim(EraseIndex *x) {
        size_t k = 0;

        for (size_t i = 0; i < x->n_cache; i++) {
                if (x->cache[i]->gen == x->gen) {
                        x->cache[k++] = x->cache[i];
                        continue;
                }
                erase_edit_cache_clear(x->cache[i]);
                free(x->cache[i]);
        }
        x->n_cache = k;
}

/* *ix for inv: kept when it was built for inv, else built. 0 or -ENOMEM. */
static int erase_index_get(const Inventory *inv, EraseIndex **ix) {
        EraseIndex *x = *ix;
        size_t n = inv->n_sessions;

        if (x && x->inv == inv && x->n_sessions == n)
                return 0;
        *ix = x = erase_index_free(x);
        x = calloc(1, sizeof(EraseIndex));
        if (!x)
                return -ENOMEM;
        x->inv = inv;
        x->n_sessions = n;
        x->by_id = calloc(n ? n : 1, sizeof(EraseKey));
        x->live = calloc(n ? n : 1, sizeof(size_t));
        if (!x->by_id || !x->live) {
                erase_index_free(x);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                const Session *a = &inv->sessions[i];

                x->by_id[i] = (EraseKey){ .tree = a->tree, .id = a->id, .index = i };
                if (a->live)
                        x->live[x->n_live++] = i;
        }
        if (n > 1)
                qsort(x->by_id, n, sizeof(EraseKey), erase_key_cmp);
        *ix = x;
        return 0;
}

typedef struct EraseProject {
        const Inventory *inv;
        const EraseIndex *ix;
        const Session *s;
} EraseProject;

/* live_project_busy()'s filter: is id a session of this tree found only in other projects? */
static bool erase_elsewhere(const char *id, void *userdata) {
        const EraseProject *p = userdata;
        const EraseIndex *x = p->ix;
        const EraseKey key = { .tree = p->s->tree, .id = id };
        size_t lo = 0, hi = x->n_sessions;
        bool other = false;

        if (!id)
                return false;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (erase_key_cmp(&x->by_id[mid], &key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (; lo < x->n_sessions && erase_key_cmp(&x->by_id[lo], &key) == 0; lo++) {
                if (erase_same_project(&p->inv->sessions[x->by_id[lo].index], p->s))
                        return false;
                other = true;
        }
        return other;
}

/* Do two items ask live_project_busy() the same question (the same tree, chats/ and filter)? */
static bool erase_same_probe(const EraseItem *a, const EraseItem *b) {
        const Session *x = a->s, *y = b->s;

        return a->chats_fd == b->chats_fd && x->tree == y->tree &&
               (x->project_dir ? y->project_dir && streq(x->project_dir, y->project_dir)
                               : !y->project_dir) &&
               (x->hash ? y->hash && streq(x->hash, y->hash) : !y->hash);
}

static int erase_why(char **ret_why, int r, const char *fmt, ...) _printf_(3, 4);
static int erase_why(char **ret_why, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_why, fmt, ap) < 0)
                *ret_why = NULL;
        va_end(ap);
        return *ret_why ? r : -ENOMEM;
}

/* What an edit's error means for the session: -EAGAIN (not now, with a reason) or -errno. */
static int erase_failed(char **ret_why, int r, const char *file) {
        switch (r) {
        case -EAGAIN:
                return erase_why(ret_why, -EAGAIN, "%s changed while qgc edited it", file);
        case -EBADMSG:
                return erase_why(ret_why, -EAGAIN, "%s is not what Qwen Code writes", file);
        case -EFBIG:
                return erase_why(ret_why, -EAGAIN, "%s is larger than qgc edits", file);
        case -ELOOP:
        case -EXDEV:
                return erase_why(ret_why, -EAGAIN, "%s is a symlink or a mount point", file);
        default:
                return erase_why(ret_why, r, "cannot edit %s", file);
        }
}

/* A shared file the batch looks into: (dir_fd, name) read once, with the ids of the batch's
 * sessions found in it. */
typedef struct EraseFile {
        int dir_fd;
        dev_t dev; /* the directory's identity (0/0: not known): two items' fds of one directory */
        ino_t ino; /* share one file */
        EraseParseFn parse;
        const char *name;
        size_t *items; /* the indexes of the batch's items that look into it */
        size_t n_items;
} EraseFile;

/* The file of item i (dir_fd, name) in files[0..*n): found (the same fd, or another fd of the
 * same directory) or added. NULL: out of memory. */
static EraseFile *erase_file_of(EraseFile **files, size_t *n, int dir_fd, const char *name,
                                EraseParseFn parse, size_t i) {
        EraseFile *f = NULL;
        struct stat st = {};
        size_t *x;

        if (dir_fd >= 0 && fstat(dir_fd, &st) < 0)
                st = (struct stat){};
        for (size_t j = 0; j < *n && !f; j++) {
                const EraseFile *g = &(*files)[j];

                if (g->parse == parse &&
                    (g->dir_fd == dir_fd ||
                     (st.st_ino != 0 && g->dev == st.st_dev && g->ino == st.st_ino)))
                        f = &(*files)[j];
        }
        if (!f) {
                EraseFile *nf = reallocarray(*files, *n + 1, sizeof(EraseFile));
                if (!nf)
                        return NULL;
                *files = nf;
                f = &nf[(*n)++];
                *f = (EraseFile){ .dir_fd = dir_fd, .dev = st.st_dev, .ino = st.st_ino,
                                  .name = name, .parse = parse };
        }
        x = reallocarray(f->items, f->n_items + 1, sizeof(size_t));
        if (!x)
                return NULL;
        f->items = x;
        f->items[f->n_items++] = i;
        return f;
}

static void erase_files_free(EraseFile *files, size_t n) {
        for (size_t j = 0; j < n; j++)
                free(files[j].items);
        free(files);
}

/* f's entry of x's cache (found or added, marked used by this call); NULL when its directory's
 * identity is not known, or out of memory (then the file is parsed each time). */
static EraseCached *erase_cache_of(EraseIndex *x, const EraseFile *f) {
        EraseCached *c, **v;

        if (f->dir_fd < 0 || f->ino == 0)
                return NULL;
        for (size_t i = 0; i < x->n_cache; i++) {
                c = x->cache[i];
                if (c->dev == f->dev && c->ino == f->ino && c->parse == f->parse) {
                        c->gen = x->gen;
                        return c;
                }
        }
        v = reallocarray(x->cache, x->n_cache + 1, sizeof(EraseCached *));
        if (!v)
                return NULL;
        x->cache = v;
        c = calloc(1, sizeof(EraseCached));
        if (!c)
                return NULL;
        *c = (EraseCached){ .dev = f->dev, .ino = f->ino, .parse = f->parse, .gen = x->gen };
        x->cache[x->n_cache++] = c;
        return c;
}

/* Which of f's items (still to do) have something in f: has[item] |= 1 (also when it cannot be
 * told: the edit reports it). One read of the file for all of them; its parse is kept in x's
 * cache for the edit. */
static int erase_file_has(EraseIndex *x, const EraseFile *f, EraseItem *items, bool *has) {
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ const char **ids = calloc(f->n_items ? f->n_items : 1, sizeof(char *));
        _cleanup_free_ unsigned *counts = calloc(f->n_items ? f->n_items : 1, sizeof(unsigned));
        _cleanup_(erase_splice_parsed_done) EraseParsed own = {};
        _cleanup_close_ int fd = -EBADF;
        const EraseParsed *p = NULL;
        EraseCached *c = NULL;
        struct stat st;
        size_t n = 0;
        unsigned k = 0;
        int r;

        if (!ids || !counts)
                return -ENOMEM;
        if (f->dir_fd == -ENOENT)
                return 0;
        r = fd = f->dir_fd < 0 ? f->dir_fd : erase_edit_open(f->dir_fd, f->name, &st);
        if (r == -ENOENT)
                return 0;
        if (r >= 0)
                erase_edit_leftovers_remove(f->dir_fd, f->name);
        if (r >= 0) {
                /* the text kept from the last batch, when the file still holds exactly it */
                c = erase_cache_of(x, f);
                r = c && c->text ? erase_edit_fd_is(fd, &st, c->text, c->n) : 0;
                if (r > 0)
                        p = &c->p;
                else if (r >= 0)
                        r = fs_read_fd(fd, erase_edit_file_max(f->parse), &text, &n);
        }
        for (size_t j = 0; j < f->n_items; j++)
                ids[j] = items[f->items[j]].s->id;
        if (r >= 0) {
                const EraseIds set = { .ids = ids, .n = f->n_items, .counts = counts };

                if (!p) {
                        r = f->parse(text, n, &own);
                        p = &own;
                }
                if (r >= 0)
                        r = erase_splice_find(p == &own ? text : c->text, p, &set, NULL, &k);
                if (r >= 0 && p == &own)
                        erase_edit_cache_put(c, erase_cache_total(x, c), &text, n, &own);
                if (r >= 0 && c && c->text) {
                        c->fresh = true; /* for the edit (erase_edit()) */
                        c->st = st;
                }
        }
        for (size_t j = 0; j < f->n_items; j++)
                if (r < 0 || counts[j] > 0)
                        has[f->items[j]] = true;
        return 0;
}

/* The scratch of the batch's edits, for up to all of its items: allocated before the first
 * edit, so that once a file is written nothing can fail for want of memory but the edits
 * themselves (each of which leaves its file as it was, or counts what it lost). */
typedef struct EraseScratch {
        const char **ids;
        unsigned *counts;
        size_t *which;
        const EraseItem **probed; /* erase_probe()'s */
} EraseScratch;

/* The edit of f for its items still to do (r == 0): one read, splice and write for all of them;
 * each item's count into *(unsigned *)((char *)&item->done + off) when the file was renamed into
 * place. On failure every item of the edit gets the reason (and keeps its count: what the file
 * lost on disk is always counted). */
static void erase_file_edit(EraseIndex *x, const EraseFile *f, EraseItem *items,
                            const EraseScratch *sc, const char *what, size_t off,
                            EraseStepFn step, void *userdata) {
        _cleanup_free_ char *kept = NULL;
        unsigned removed = 0;
        size_t n = 0;
        int r;

        for (size_t j = 0; j < f->n_items; j++)
                if (items[f->items[j]].r == 0) {
                        sc->which[n] = f->items[j];
                        sc->counts[n] = 0;
                        sc->ids[n++] = items[f->items[j]].s->id;
                }
        if (n == 0 || f->dir_fd == -ENOENT)
                return;
        if (f->dir_fd < 0)
                r = f->dir_fd;
        else {
                const EraseIds set = { .ids = sc->ids, .n = n, .counts = sc->counts };
                EraseCached *c = erase_cache_of(x, f);

                r = erase_edit(f->dir_fd, f->name, f->parse, &set, step, userdata, &removed, c,
                               c ? erase_cache_total(x, c) : 0, &kept);
        }
        if (kept && n > 0 && !items[sc->which[0]].kept) /* with the file's first session */
                items[sc->which[0]].kept = TAKE_PTR(kept);
        for (size_t j = 0; j < n; j++) {
                EraseItem *it = &items[sc->which[j]];

                if (removed > 0)
                        *(unsigned *)((char *)&it->done + off) = sc->counts[j];
                if (r < 0 && removed > 0)
                        it->r = erase_why(&it->why, r,
                                          "%s was edited, but its directory cannot be synced",
                                          what);
                else if (r < 0)
                        it->r = erase_failed(&it->why, r, what);
        }
}

/* Whether a Qwen process of item it's project may be live (live_project_busy()): 0 when none
 * is, else it->why set and -EAGAIN (or the -errno that kept it from telling). */
static int erase_project_live(const Inventory *inv, const EraseIndex *ix, EraseItem *it) {
        const Session *s = it->s;
        EraseProject proj = { .inv = inv, .ix = ix, .s = s };
        _cleanup_free_ char *busy = NULL;
        int k;

        k = live_project_busy(&inv->trees[s->tree], it->chats_fd, erase_elsewhere, &proj, &busy);
        if (k < 0)
                return erase_why(&it->why, k,
                                 "cannot tell whether a Qwen process of the project is live");
        if (k > 0)
                return erase_why(&it->why, -EAGAIN,
                                 "a Qwen process of the project may be live (%s): its shared "
                                 "files are not edited now",
                                 busy);
        return 0;
}

/* it's answer of live_project_busy() (erase_project_live()): the answer of the item of
 * probed[0..*n_probed) that asked the same question (erase_same_probe()), else a probe taken
 * now (it is added to probed). 0, or the -errno to set it->r to, with it->why. */
static int erase_probe(const Inventory *inv, const EraseIndex *ix, EraseItem *it,
                       const EraseItem **probed, size_t *n_probed) {
        for (size_t q = 0; q < *n_probed; q++) {
                const EraseItem *a = probed[q];

                if (!erase_same_probe(a, it))
                        continue;
                if (a->r == 0)
                        return 0;
                return a->why ? erase_why(&it->why, a->r, "%s", a->why) : a->r;
        }
        probed[(*n_probed)++] = it;
        return erase_project_live(inv, ix, it);
}

/* Right before file f is edited: is a Qwen process of its sessions' projects live now? The
 * batch checked each session before any edit, but a batch's checks and edits take a while, and
 * a process may have started since (or one session was found busy after another's check
 * passed). When one of the file's sessions was found busy (or met a write in another file),
 * or one still taking part may be live now (each is checked again: an organization file's
 * sessions can belong to projects of different hashes), none of them takes part. The sessions
 * that ask live_project_busy() the same question (mostly all of a file's) are answered by one
 * probe, taken now. */
static void erase_file_recheck(const Inventory *inv, const EraseIndex *ix, const EraseFile *f,
                               EraseItem *items, const EraseScratch *sc) {
        EraseItem *busy = NULL;
        size_t n_probed = 0;
        int k = 0;

        if (f->dir_fd < 0)
                return;
        /* one of them was found busy already (or its edit of another file met a write) */
        for (size_t j = 0; j < f->n_items && !busy; j++)
                if (items[f->items[j]].r == -EAGAIN) {
                        busy = &items[f->items[j]];
                        k = -EAGAIN;
                }
        for (size_t j = 0; j < f->n_items && !busy; j++) {
                EraseItem *it = &items[f->items[j]];

                if (it->r != 0)
                        continue;
                k = erase_probe(inv, ix, it, sc->probed, &n_probed);
                if (k != 0) {
                        it->r = k;
                        busy = it;
                }
        }
        if (!busy)
                return;
        for (size_t j = 0; j < f->n_items; j++) {
                EraseItem *it = &items[f->items[j]];

                if (it != busy && it->r == 0)
                        it->r = busy->why ? erase_why(&it->why, k, "%s", busy->why) : k;
        }
}

/* The check of erase_sessions_shared() before any edit, of each item that has something in the
 * files: no session of its project was live at the scan (the first in the inventory's order is
 * named), and live_project_busy() finds none now (erase_probe()). probed: scratch for n items. */
static void erase_items_check(const Inventory *inv, const EraseIndex *ix, EraseItem *items,
                              size_t n, const bool *has, const EraseItem **probed) {
        size_t n_probed = 0;

        for (size_t i = 0; i < n; i++) {
                EraseItem *it = &items[i];
                const Session *s = it->s;

                if (!has[i])
                        continue;
                for (size_t j = 0; it->r == 0 && j < ix->n_live; j++) {
                        const Session *a = &inv->sessions[ix->live[j]];
                        if (a != s && erase_same_project(a, s))
                                it->r = erase_why(&it->why, -EAGAIN,
                                                  "session %s of the project is in use: its "
                                                  "shared files are not edited now",
                                                  a->id);
                }
                if (it->r == 0)
                        it->r = erase_probe(inv, ix, it, probed, &n_probed);
        }
}

int erase_sessions_shared(const Inventory *inv, EraseIndex **index, EraseItem *items, size_t n,
                          EraseStepFn step, void *userdata) {
        _cleanup_free_ bool *has = calloc(n ? n : 1, sizeof(bool));
        _cleanup_free_ const char **ids = calloc(n ? n : 1, sizeof(char *));
        _cleanup_free_ unsigned *counts = calloc(n ? n : 1, sizeof(unsigned));
        _cleanup_free_ size_t *which = calloc(n ? n : 1, sizeof(size_t));
        _cleanup_free_ const EraseItem **probed = calloc(n ? n : 1, sizeof(EraseItem *));
        const EraseScratch sc = { .ids = ids, .counts = counts, .which = which, .probed = probed };
        EraseIndex *own = NULL, **ix = index ? index : &own;
        EraseFile *logs = NULL, *org = NULL;
        size_t n_logs = 0, n_org = 0;
        int r = 0;

        if (!has || !ids || !counts || !which || !probed)
                return -ENOMEM;
        r = erase_index_get(inv, ix);
        if (r < 0)
                return r;
        (*ix)->gen++;
        for (size_t i = 0; i < (*ix)->n_cache; i++)
                (*ix)->cache[i]->fresh = false;
        for (size_t i = 0; i < n; i++) {
                EraseItem *it = &items[i];

                it->done = (EraseDone){};
                it->r = 0;
                it->why = NULL;
                it->kept = NULL;
                if (!it->s->hash)
                        it->tmp_fd = -ENOENT;
                if (!erase_file_of(&logs, &n_logs, it->tmp_fd, ERASE_LOGS_FILE,
                                   erase_splice_parse_logs, i) ||
                    !erase_file_of(&org, &n_org, it->pdir_fd, ERASE_ORG_FILE,
                                   erase_splice_parse_org, i)) {
                        r = -ENOMEM;
                        goto finish;
                }
        }
        /* nothing of a session in either file: no edit, no reason to wait for its project */
        for (size_t j = 0; r >= 0 && j < n_logs; j++)
                r = erase_file_has(*ix, &logs[j], items, has);
        for (size_t j = 0; r >= 0 && j < n_org; j++)
                r = erase_file_has(*ix, &org[j], items, has);
        if (r < 0)
                goto finish;

        erase_items_check(inv, *ix, items, n, has, probed);
        /* the sessions without anything in them take no part in the edits */
        for (size_t i = 0; i < n; i++)
                if (!has[i] && items[i].r == 0)
                        items[i].r = 1;
        /* from here on nothing fails the batch: each file is written whole or not at all, and
         * what it lost is in its sessions' counts */
        for (size_t j = 0; j < n_logs; j++) {
                erase_file_recheck(inv, *ix, &logs[j], items, &sc);
                erase_file_edit(*ix, &logs[j], items, &sc,
                                logs[j].dir_fd < 0 ? "tmp/<hash>/" : ERASE_LOGS_FILE,
                                offsetof(EraseDone, log_rows), step, userdata);
        }
        for (size_t j = 0; j < n_org; j++) {
                erase_file_recheck(inv, *ix, &org[j], items, &sc);
                erase_file_edit(*ix, &org[j], items, &sc,
                                org[j].dir_fd < 0 ? "the project directory" : ERASE_ORG_FILE,
                                offsetof(EraseDone, org_entries), step, userdata);
        }
        for (size_t i = 0; i < n; i++)
                if (items[i].r == 1)
                        items[i].r = 0;
finish:
        if (*ix)
                erase_cache_trim(*ix);
        erase_files_free(logs, n_logs);
        erase_files_free(org, n_org);
        erase_index_free(own);
        return r;
}

int erase_logs_session_ids(const char *text, size_t n, char ***ret, size_t *ret_n) {
        _cleanup_(erase_splice_parsed_done) EraseParsed p = {};
        char **ids;
        size_t k = 0;
        int r;

        r = erase_splice_parse_logs(text, n, &p);
        if (r < 0)
                return r;
        ids = calloc(p.ne + 1, sizeof(char *));
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < p.ne; i++) {
                const EraseElemId *x = &p.id[i];

                if (x->off == SIZE_MAX)
                        continue;
                ids[k] = strndup(x->dec ?: text + p.e[i].start + x->off, x->len);
                if (!ids[k]) {
                        while (k > 0)
                                free(ids[--k]);
                        free(ids);
                        return -ENOMEM;
                }
                k++;
        }
        *ret = ids;
        *ret_n = k;
        return 0;
}

char *erase_review_dir_name(const char *id) {
        char hex[SHA256_HEX_LEN + 1];
        _cleanup_free_ char *clean = strdup(id);

        if (!clean || sha256_hex(id, strlen(id), hex) < 0)
                return NULL;
        for (char *p = clean; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
                        *p = '_';
        return util_strprintf("%s-%.8s", clean, hex);
}
