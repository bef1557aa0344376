/* erase.c: removes a deleted session's rows and entries from the JSON files Qwen shares between
 * sessions, byte for byte as Qwen's own delete would write them (see erase.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
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

/* Is the member key text[a, b) (a JSON string) equal to key? */
static bool erase_key_is(const char *s, size_t a, size_t b, const char *key) {
        json_object *o = erase_parse(s, a, b);
        bool eq = o && json_object_is_type(o, json_type_string) &&
                  (size_t)json_object_get_string_len(o) == strlen(key) &&
                  memcmp(json_object_get_string(o), key, strlen(key)) == 0;

        json_object_put(o);
        return eq;
}

/* Is the array element text[a, b) an object with "sessionId" equal to id? */
static bool erase_row_is(const char *s, size_t a, size_t b, const char *id) {
        json_object *o, *v = NULL;
        bool eq;

        if (s[a] != '{')
                return false;
        o = erase_parse(s, a, b);
        eq = o && json_object_is_type(o, json_type_object) &&
             json_object_object_get_ex(o, "sessionId", &v) &&
             json_object_is_type(v, json_type_string) &&
             (size_t)json_object_get_string_len(v) == strlen(id) &&
             memcmp(json_object_get_string(v), id, strlen(id)) == 0;
        json_object_put(o);
        return eq;
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
static int erase_logs_find(const char *text, size_t n, const char *id, EraseElem **ret_e,
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
                bool is = erase_row_is(text, (*ret_e)[i].start, (*ret_e)[i].end, id);
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

        return erase_logs_find(text, n, id, &e, &ne, &open, &close, NULL, ret_count);
}

int erase_splice_logs(const char *text, size_t n, const char *id, char **ret, size_t *ret_size,
                      unsigned *ret_removed) {
        _cleanup_free_ EraseElem *e = NULL;
        _cleanup_free_ bool *drop = NULL;
        size_t ne = 0, open, close;
        unsigned k = 0;
        int r;

        *ret = NULL;
        *ret_size = 0;
        *ret_removed = 0;
        r = erase_logs_find(text, n, id, &e, &ne, &open, &close, &drop, &k);
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

int erase_splice_org(const char *text, size_t n, const char *id, char **ret, size_t *ret_size,
                     unsigned *ret_removed) {
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
        for (size_t i = 0; i < ne; i++)
                k += drop[i] = erase_key_is(text, e[i].start, e[i].key_end, id);
        if (k == 0)
                return 0;
        r = erase_rebuild(text, n, top[sessions].value, top[sessions].end - 1, 1, e, ne, drop, ret,
                          ret_size);
        if (r < 0)
                return r;
        *ret_removed = k;
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
        return strprintf("%s-%.8s", clean, hex);
}

typedef int (*EraseSpliceFn)(const char *text, size_t n, const char *id, char **ret,
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
static int erase_edit(int dir_fd, const char *name, EraseSpliceFn splice, const char *id,
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
        r = splice(old, n_old, id, &new, &n_new, &removed);
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
        return erase_edit(dir_fd, ERASE_LOGS_FILE, erase_splice_logs, id, step, userdata);
}

int erase_org_entry(int dir_fd, const char *id, EraseStepFn step, void *userdata) {
        return erase_edit(dir_fd, ERASE_ORG_FILE, erase_splice_org, id, step, userdata);
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

/* Does (dir_fd, name) hold something of id (by splice)? 1 yes or unknown, 0 no (or no file);
 * dir_fd -ENOENT: no directory. */
static int erase_file_has(int dir_fd, const char *name, EraseSpliceFn splice, const char *id) {
        _cleanup_free_ char *text = NULL, *out = NULL;
        struct stat st;
        size_t n, n_out;
        unsigned k = 0;
        int r;

        if (dir_fd == -ENOENT)
                return 0;
        if (dir_fd < 0)
                return 1;
        r = erase_read(dir_fd, name, &st, &text, &n);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return 1; /* the edit reports it */
        r = splice(text, n, id, &out, &n_out, &k);
        return r < 0 || k > 0;
}

/* Does a shared file hold rows or an entry of s? 1 yes (or cannot tell), 0 no. */
static int erase_session_has_shared(const Session *s, int tmp_fd, int pdir_fd) {
        return erase_file_has(tmp_fd, ERASE_LOGS_FILE, erase_splice_logs, s->id) ||
               erase_file_has(pdir_fd, ERASE_ORG_FILE, erase_splice_org, s->id);
}

int erase_session_shared(const Inventory *inv, const Session *s, int tmp_fd, int pdir_fd,
                         int chats_fd, EraseStepFn step, void *userdata, EraseDone *ret,
                         char **ret_why) {
        EraseProject proj = { .inv = inv, .s = s };
        _cleanup_free_ char *busy = NULL;
        int r;

        *ret = (EraseDone){};
        if (!s->hash)
                tmp_fd = -ENOENT;
        /* nothing of the session in either file: no edit, no reason to wait for the project */
        r = erase_session_has_shared(s, tmp_fd, pdir_fd);
        if (r == 0)
                return 0;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *a = &inv->sessions[i];
                if (a != s && a->live && erase_same_project(a, s))
                        return erase_why(ret_why, -EAGAIN,
                                         "session %s of the project is in use: its shared files "
                                         "are not edited now",
                                         a->id);
        }
        r = live_project_busy(&inv->trees[s->tree], chats_fd, erase_elsewhere, &proj, &busy);
        if (r < 0)
                return erase_why(ret_why, r, "cannot tell whether a Qwen process of the project is live");
        if (r > 0)
                return erase_why(ret_why, -EAGAIN,
                                 "a Qwen process of the project may be live (%s): its shared "
                                 "files are not edited now",
                                 busy);

        if (tmp_fd < 0 && tmp_fd != -ENOENT)
                return erase_failed(ret_why, tmp_fd, "tmp/<hash>/");
        if (tmp_fd >= 0) {
                r = erase_logs_rows(tmp_fd, s->id, step, userdata);
                if (r < 0)
                        return erase_failed(ret_why, r, ERASE_LOGS_FILE);
                ret->log_rows = (unsigned)r;
        }
        if (pdir_fd < 0 && pdir_fd != -ENOENT)
                return erase_failed(ret_why, pdir_fd, "the project directory");
        if (pdir_fd >= 0) {
                r = erase_org_entry(pdir_fd, s->id, step, userdata);
                if (r < 0)
                        return erase_failed(ret_why, r, ERASE_ORG_FILE);
                ret->org_entries = (unsigned)r;
        }
        return 0;
}
