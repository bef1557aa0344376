/* erase.c: removes a deleted session's rows and entries from the JSON files Qwen shares between
 * sessions, byte for byte as Qwen's own delete would write them (see erase.h). */
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

#include <json-c/json.h>

#include "erase.h"
#include "fsutil.h"
#include "json.h"
#include "live.h"
#include "macro.h"
#include "qwen.h"
#include "sha256.h"
#include "util.h"

static void (*erase_hook)(void *userdata, const char *name);
static void *erase_hook_userdata;

void erase_test_set_hook(void (*hook)(void *userdata, const char *name), void *userdata) {
        erase_hook = hook;
        erase_hook_userdata = userdata;
}

/* One element of a shared file's container (json.h): its whole span [start, end), for a member
 * from its key, the end of its key and where its value starts. */
typedef JsonElem EraseElem;

/* text[a, b) with JSON.parse's grammar (json_parse()); NULL when it is not JSON or is null. */
static json_object *erase_parse(const char *s, size_t a, size_t b) {
        json_object *o = NULL;

        if (json_parse(s + a, b - a, &o) < 0)
                return NULL;
        return o;
}

/* The sessions an edit removes: ids[0..n); counts[i] (when not NULL) is set to how many
 * elements of ids[i] it found. */
typedef struct EraseIds {
        const char *const *ids;
        size_t n;
        unsigned *counts;
} EraseIds;

/* The index in ids of the string v (len bytes), or -1. */
static ssize_t erase_ids_index(const EraseIds *ids, const char *v, size_t len) {
        for (size_t i = 0; i < ids->n; i++)
                if (strlen(ids->ids[i]) == len && memcmp(ids->ids[i], v, len) == 0)
                        return (ssize_t)i;
        return -1;
}

/* The index in ids of the member key text[a, b) (a JSON string), or -1. */
static ssize_t erase_key_index(const char *s, size_t a, size_t b, const EraseIds *ids) {
        json_object *o = erase_parse(s, a, b);
        ssize_t k = o && json_object_is_type(o, json_type_string)
                            ? erase_ids_index(ids, json_object_get_string(o),
                                              (size_t)json_object_get_string_len(o))
                            : -1;

        json_object_put(o);
        return k;
}

/* Is the member key text[a, b) (a JSON string) equal to key? */
static bool erase_key_is(const char *s, size_t a, size_t b, const char *key) {
        json_object *o = erase_parse(s, a, b);
        bool eq = o && json_object_is_type(o, json_type_string) &&
                  (size_t)json_object_get_string_len(o) == strlen(key) &&
                  memcmp(json_object_get_string(o), key, strlen(key)) == 0;

        json_object_put(o);
        return eq;
}

/* The index in ids of the "sessionId" of the array element text[a, b) when it is an object with
 * one (exactly, as Qwen compares), or -1. */
static ssize_t erase_row_index(const char *s, size_t a, size_t b, const EraseIds *ids) {
        json_object *o, *v = NULL;
        ssize_t k = -1;

        if (s[a] != '{')
                return -1;
        o = erase_parse(s, a, b);
        if (o && json_object_is_type(o, json_type_object) &&
            json_object_object_get_ex(o, "sessionId", &v) &&
            json_object_is_type(v, json_type_string))
                k = erase_ids_index(ids, json_object_get_string(v),
                                    (size_t)json_object_get_string_len(v));
        json_object_put(o);
        return k;
}

/* Rebuild text with the container [open, close] (indent level depth) holding only the elements
 * not marked in drop, framed as JSON.stringify(v, null, 2) frames it. */
static int erase_rebuild(const char *s, size_t n, size_t open, size_t close, unsigned depth,
                         const EraseElem *e, size_t ne, const bool *drop, char **ret,
                         size_t *ret_size) {
        StrBuf b = {};
        bool first = true;
        int r;

        r = strbuf_append(&b, s, open + 1);
        for (size_t i = 0; r >= 0 && i < ne; i++) {
                if (drop[i])
                        continue;
                r = strbuf_printf(&b, "%s\n%*s", first ? "" : ",", (int)(2 * (depth + 1)), "");
                if (r >= 0)
                        r = strbuf_append(&b, s + e[i].start, e[i].end - e[i].start);
                first = false;
        }
        if (r >= 0 && !first)
                r = strbuf_printf(&b, "\n%*s", (int)(2 * depth), "");
        if (r >= 0)
                r = strbuf_append(&b, s + close, n - close);
        if (r < 0) {
                strbuf_done(&b);
                return r;
        }
        *ret_size = b.len;
        *ret = strbuf_steal(&b);
        return *ret ? 0 : -ENOMEM;
}

/* The elements of the top-level container (want: '[' or '{'), the whole text checked with
 * JSON.parse's grammar (json.h: the one grammar; Qwen reads these files with JSON.parse, and a
 * text it would refuse is left as it is); *ret_open and *ret_close index its brackets. */
static int erase_top(const char *text, size_t n, char want, EraseElem **ret, size_t *ret_n,
                     size_t *ret_open, size_t *ret_close) {
        size_t at = 0, end;
        int r;

        while (at < n && strchr(" \t\n\r", text[at]) && text[at])
                at++;
        if (at >= n || text[at] != want)
                return -EBADMSG;
        r = json_elements(text, n, at, /* validate= */ true, ret, ret_n, &end);
        if (r < 0)
                return r;
        *ret_open = at;
        *ret_close = end - 1;
        while (end < n && strchr(" \t\n\r", text[end]) && text[end])
                end++;
        if (end != n) {
                free(*ret);
                *ret = NULL;
                return -EBADMSG; /* JSON.parse refuses anything after the value */
        }
        return 0;
}

/* The rows of logs.json (a top-level array) in *ret_e, *ret_ne, with the array's brackets; which
 * of them are the session id's in *ret_drop (when not NULL), how many in *ret_k. */
static int erase_logs_find(const char *text, size_t n, const EraseIds *ids, EraseElem **ret_e,
                           size_t *ret_ne, size_t *ret_open, size_t *ret_close, bool **ret_drop,
                           unsigned *ret_k) {
        bool *drop = NULL;
        unsigned k = 0;
        int r;

        r = erase_top(text, n, '[', ret_e, ret_ne, ret_open, ret_close);
        if (r < 0)
                return r;
        if (ret_drop) {
                drop = calloc(*ret_ne ? *ret_ne : 1, sizeof(bool));
                if (!drop)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < *ret_ne; i++) {
                ssize_t j = erase_row_index(text, (*ret_e)[i].start, (*ret_e)[i].end, ids);
                bool is = j >= 0;
                if (is && ids->counts)
                        ids->counts[j]++;
                if (drop)
                        drop[i] = is;
                k += is;
        }
        if (ret_drop)
                *ret_drop = drop;
        *ret_k = k;
        return 0;
}

int erase_count_logs(const char *text, size_t n, const char *id, unsigned *ret_count) {
        _cleanup_free_ EraseElem *e = NULL;
        size_t ne = 0, open, close;

        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_logs_find(text, n, &ids, &e, &ne, &open, &close, NULL, ret_count);
}

static int erase_splice_logs_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                                 size_t *ret_size, unsigned *ret_removed) {
        _cleanup_free_ EraseElem *e = NULL;
        _cleanup_free_ bool *drop = NULL;
        size_t ne = 0, open, close;
        unsigned k = 0;
        int r;

        *ret = NULL;
        *ret_size = 0;
        *ret_removed = 0;
        r = erase_logs_find(text, n, ids, &e, &ne, &open, &close, &drop, &k);
        if (r < 0)
                return r;
        if (k == 0)
                return 0;
        r = erase_rebuild(text, n, open, close, 0, e, ne, drop, ret, ret_size);
        if (r < 0)
                return r;
        *ret_removed = k;
        return 0;
}

static int erase_splice_org_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                                size_t *ret_size, unsigned *ret_removed) {
        _cleanup_free_ EraseElem *top = NULL, *e = NULL;
        _cleanup_free_ bool *drop = NULL;
        size_t ntop = 0, ne = 0, open, close, end, sessions = SIZE_MAX;
        unsigned k = 0;
        int r;

        *ret = NULL;
        *ret_size = 0;
        *ret_removed = 0;
        r = erase_top(text, n, '{', &top, &ntop, &open, &close);
        if (r < 0)
                return r;
        /* JSON.parse keeps the last of duplicate keys */
        for (size_t i = 0; i < ntop; i++)
                if (erase_key_is(text, top[i].start, top[i].key_end, "sessions"))
                        sessions = i;
        if (sessions == SIZE_MAX || text[top[sessions].value] != '{')
                return 0;

        /* validated with the whole text by erase_top() */
        r = json_elements(text, n, top[sessions].value, /* validate= */ false, &e, &ne, &end);
        if (r < 0)
                return r;
        drop = calloc(ne ? ne : 1, sizeof(bool));
        if (!drop)
                return -ENOMEM;
        for (size_t i = 0; i < ne; i++) {
                ssize_t j = erase_key_index(text, e[i].start, e[i].key_end, ids);
                drop[i] = j >= 0;
                k += drop[i];
                if (j >= 0 && ids->counts)
                        ids->counts[j]++;
        }
        if (k == 0)
                return 0;
        r = erase_rebuild(text, n, top[sessions].value, top[sessions].end - 1, 1, e, ne, drop, ret,
                          ret_size);
        if (r < 0)
                return r;
        *ret_removed = k;
        return 0;
}

int erase_splice_logs(const char *text, size_t n, const char *id, char **ret, size_t *ret_size,
                      unsigned *ret_removed) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_splice_logs_ids(text, n, &ids, ret, ret_size, ret_removed);
}

int erase_splice_org(const char *text, size_t n, const char *id, char **ret, size_t *ret_size,
                     unsigned *ret_removed) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_splice_org_ids(text, n, &ids, ret, ret_size, ret_removed);
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
        return strprintf("%s-%.8s", clean, hex);
}

typedef int (*EraseSpliceFn)(const char *text, size_t n, const EraseIds *ids, char **ret,
                             size_t *ret_size, unsigned *ret_removed);

/* Read (dir_fd, name) whole with its stat. */
static int erase_read(int dir_fd, const char *name, struct stat *ret_st, char **ret,
                      size_t *ret_size) {
        _cleanup_close_ int fd = fs_openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);

        if (fd < 0)
                return fd;
        if (fstat(fd, ret_st) < 0)
                return -errno;
        if (!S_ISREG(ret_st->st_mode))
                return -EBADMSG;
        return fs_read_fd(fd, ERASE_FILE_MAX, ret, ret_size);
}

/* The edit of erase.h: splice, temp file with the original's mode and owner, fsync, re-read and
 * compare, rename, fsync the directory. */
static int erase_edit(int dir_fd, const char *name, EraseSpliceFn splice, const EraseIds *ids,
                      EraseStepFn step, void *userdata) {
        _cleanup_free_ char *old = NULL, *new = NULL, *again = NULL;
        _cleanup_free_ char *tmp = strprintf(".%s.qgc-tmp", name);
        _cleanup_close_ int fd = -EBADF;
        struct stat st, st2;
        size_t n_old, n_new, n_again;
        unsigned removed;
        int r;

        if (!tmp)
                return -ENOMEM;
        r = erase_read(dir_fd, name, &st, &old, &n_old);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        for (size_t i = 0; ids->counts && i < ids->n; i++)
                ids->counts[i] = 0;
        r = splice(old, n_old, ids, &new, &n_new, &removed);
        if (r < 0 || removed == 0)
                return r;

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
        r = erase_read(dir_fd, name, &st2, &again, &n_again);
        if (r < 0)
                goto fail;
        if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino || st2.st_size != st.st_size ||
            st2.st_mtim.tv_sec != st.st_mtim.tv_sec || st2.st_mtim.tv_nsec != st.st_mtim.tv_nsec ||
            n_again != n_old || memcmp(again, old, n_old) != 0) {
                r = -EAGAIN;
                goto fail;
        }
        if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
                r = -errno;
                goto fail;
        }
        if (step)
                step(userdata, name);
        r = fs_fsync(dir_fd);
        return r < 0 ? r : (int)removed;
fail:
        (void)fs_unlink(dir_fd, tmp, 0);
        return r;
}

int erase_logs_rows(int dir_fd, const char *id, EraseStepFn step, void *userdata) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_edit(dir_fd, ERASE_LOGS_FILE, erase_splice_logs_ids, &ids, step, userdata);
}

int erase_org_entry(int dir_fd, const char *id, EraseStepFn step, void *userdata) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_edit(dir_fd, ERASE_ORG_FILE, erase_splice_org_ids, &ids, step, userdata);
}

/* Sessions of the tree of s that belong to the project of s: the same projects/ directory (the
 * organisation file) or the same hash (logs.json). */
static bool erase_same_project(const Session *a, const Session *s) {
        return a->tree == s->tree &&
               ((a->project_dir && s->project_dir && streq(a->project_dir, s->project_dir)) ||
                (a->hash && s->hash && streq(a->hash, s->hash)));
}

typedef struct EraseProject {
        const Inventory *inv;
        const Session *s;
} EraseProject;

/* live_project_busy()'s filter: is id a session of this tree found only in other projects? */
static bool erase_elsewhere(const char *id, void *userdata) {
        const EraseProject *p = userdata;
        bool other = false;

        for (size_t i = 0; i < p->inv->n_sessions; i++) {
                const Session *a = &p->inv->sessions[i];
                if (a->tree != p->s->tree || !qwen_session_id_equal(a->id, id))
                        continue;
                if (erase_same_project(a, p->s))
                        return false;
                other = true;
        }
        return other;
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
        EraseSpliceFn splice;
        const char *name;
        size_t *items; /* the indexes of the batch's items that look into it */
        size_t n_items;
} EraseFile;

/* The file of item i (dir_fd, name) in files[0..*n): found (the same fd, or another fd of the
 * same directory) or added. NULL: out of memory. */
static EraseFile *erase_file_of(EraseFile **files, size_t *n, int dir_fd, const char *name,
                                EraseSpliceFn splice, size_t i) {
        EraseFile *f = NULL;
        struct stat st = {};
        size_t *x;

        if (dir_fd >= 0 && fstat(dir_fd, &st) < 0)
                st = (struct stat){};
        for (size_t j = 0; j < *n && !f; j++) {
                const EraseFile *g = &(*files)[j];

                if (g->splice == splice &&
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
                                  .name = name, .splice = splice };
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

/* Which of f's items (still to do) have something in f: has[item] |= 1 (also when it cannot be
 * told: the edit reports it). One read of the file for all of them. */
static int erase_file_has(const EraseFile *f, EraseItem *items, bool *has) {
        _cleanup_free_ char *text = NULL, *out = NULL;
        _cleanup_free_ const char **ids = calloc(f->n_items ? f->n_items : 1, sizeof(char *));
        _cleanup_free_ unsigned *counts = calloc(f->n_items ? f->n_items : 1, sizeof(unsigned));
        struct stat st;
        size_t n, n_out;
        unsigned k = 0;
        int r;

        if (!ids || !counts)
                return -ENOMEM;
        if (f->dir_fd == -ENOENT)
                return 0;
        r = f->dir_fd < 0 ? f->dir_fd : erase_read(f->dir_fd, f->name, &st, &text, &n);
        if (r == -ENOENT)
                return 0;
        for (size_t j = 0; j < f->n_items; j++)
                ids[j] = items[f->items[j]].s->id;
        if (r >= 0) {
                const EraseIds set = { .ids = ids, .n = f->n_items, .counts = counts };
                r = f->splice(text, n, &set, &out, &n_out, &k);
        }
        for (size_t j = 0; j < f->n_items; j++)
                if (r < 0 || counts[j] > 0)
                        has[f->items[j]] = true;
        return 0;
}

/* The edit of f for its items still to do (r == 0): one read, splice and write for all of them;
 * each item's count into *(unsigned *)((char *)&item->done + off). On failure every item of the
 * edit gets the reason. */
static int erase_file_edit(const EraseFile *f, EraseItem *items, const char *what, size_t off,
                           EraseStepFn step, void *userdata) {
        _cleanup_free_ const char **ids = calloc(f->n_items ? f->n_items : 1, sizeof(char *));
        _cleanup_free_ unsigned *counts = calloc(f->n_items ? f->n_items : 1, sizeof(unsigned));
        _cleanup_free_ size_t *which = calloc(f->n_items ? f->n_items : 1, sizeof(size_t));
        size_t n = 0;
        int r;

        if (!ids || !counts || !which)
                return -ENOMEM;
        for (size_t j = 0; j < f->n_items; j++)
                if (items[f->items[j]].r == 0) {
                        which[n] = f->items[j];
                        ids[n++] = items[f->items[j]].s->id;
                }
        if (n == 0 || f->dir_fd == -ENOENT)
                return 0;
        if (f->dir_fd < 0)
                r = f->dir_fd;
        else {
                const EraseIds set = { .ids = ids, .n = n, .counts = counts };
                r = erase_edit(f->dir_fd, f->name, f->splice, &set, step, userdata);
        }
        for (size_t j = 0; j < n; j++) {
                EraseItem *it = &items[which[j]];

                if (r < 0)
                        it->r = erase_failed(&it->why, r, what);
                else
                        *(unsigned *)((char *)&it->done + off) = counts[j];
        }
        return 0;
}

/* Whether a Qwen process of item it's project may be live (live_project_busy()): 0 when none
 * is, else it->why set and -EAGAIN (or the -errno that kept it from telling). */
static int erase_project_live(const Inventory *inv, EraseItem *it) {
        const Session *s = it->s;
        EraseProject proj = { .inv = inv, .s = s };
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

/* Right before file f is edited: is a Qwen process of its sessions' projects live now? The
 * batch checked each session before any edit, but a batch's checks and edits take a while, and
 * a process may have started since (or one session was found busy after another's check
 * passed). When one of the file's sessions was found busy (or met a write in another file),
 * or one still taking part may be live now (each is checked again: an organization file's
 * sessions can belong to projects of different hashes), none of them takes part. */
static void erase_file_recheck(const Inventory *inv, const EraseFile *f, EraseItem *items) {
        EraseItem *busy = NULL;
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
                k = erase_project_live(inv, it);
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

int erase_sessions_shared(const Inventory *inv, EraseItem *items, size_t n, EraseStepFn step,
                          void *userdata) {
        _cleanup_free_ bool *has = calloc(n ? n : 1, sizeof(bool));
        EraseFile *logs = NULL, *org = NULL;
        size_t n_logs = 0, n_org = 0;
        int r = 0;

        if (!has)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                EraseItem *it = &items[i];

                it->done = (EraseDone){};
                it->r = 0;
                it->why = NULL;
                if (!it->s->hash)
                        it->tmp_fd = -ENOENT;
                if (!erase_file_of(&logs, &n_logs, it->tmp_fd, ERASE_LOGS_FILE,
                                   erase_splice_logs_ids, i) ||
                    !erase_file_of(&org, &n_org, it->pdir_fd, ERASE_ORG_FILE,
                                   erase_splice_org_ids, i)) {
                        r = -ENOMEM;
                        goto finish;
                }
        }
        /* nothing of a session in either file: no edit, no reason to wait for its project */
        for (size_t j = 0; r >= 0 && j < n_logs; j++)
                r = erase_file_has(&logs[j], items, has);
        for (size_t j = 0; r >= 0 && j < n_org; j++)
                r = erase_file_has(&org[j], items, has);
        if (r < 0)
                goto finish;

        for (size_t i = 0; i < n; i++) {
                EraseItem *it = &items[i];
                const Session *s = it->s;

                if (!has[i])
                        continue;
                for (size_t j = 0; it->r == 0 && j < inv->n_sessions; j++) {
                        const Session *a = &inv->sessions[j];
                        if (a != s && a->live && erase_same_project(a, s))
                                it->r = erase_why(&it->why, -EAGAIN,
                                                  "session %s of the project is in use: its "
                                                  "shared files are not edited now",
                                                  a->id);
                }
                if (it->r == 0)
                        it->r = erase_project_live(inv, it);
        }
        /* the sessions without anything in them take no part in the edits */
        for (size_t i = 0; i < n; i++)
                if (!has[i] && items[i].r == 0)
                        items[i].r = 1;
        for (size_t j = 0; r >= 0 && j < n_logs; j++) {
                erase_file_recheck(inv, &logs[j], items);
                r = erase_file_edit(&logs[j], items, logs[j].dir_fd < 0 ? "tmp/<hash>/"
                                                                         : ERASE_LOGS_FILE,
                                    offsetof(EraseDone, log_rows), step, userdata);
        }
        for (size_t j = 0; r >= 0 && j < n_org; j++) {
                erase_file_recheck(inv, &org[j], items);
                r = erase_file_edit(&org[j], items, org[j].dir_fd < 0 ? "the project directory"
                                                                       : ERASE_ORG_FILE,
                                    offsetof(EraseDone, org_entries), step, userdata);
        }
        for (size_t i = 0; i < n; i++)
                if (items[i].r == 1)
                        items[i].r = 0;
finish:
        erase_files_free(logs, n_logs);
        erase_files_free(org, n_org);
        return r;
}
