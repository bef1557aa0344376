/* usage-index.c: reading G/usage_record.jsonl: the incremental index of its session ids (and
 * whether it has a version-1 record, the test Qwen's loadUsageHistory makes), the exact slow
 * reader, and the one-time write of the history Qwen would rebuild from transcripts
 * (usage_index_freeze_history()). Appends are usage-append.c's.
 *
 * Qwen appends to the file without a lock (jsonl writeLineSync: O_APPEND, fsync), so qgc never
 * rewrites bytes that are not its own, with the one exception of usage_index_freeze_history(). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fs.h"
#include "hashmap.h"
#include "log.h"
#include "macro.h"
#include "record.h"
#include "usage-append.h"
#include "usage-index.h"
#include "usage.h"
#include "util.h"

#define USAGE_MAX_LINE (16 * 1024 * 1024) /* the exact reader's bound, as for transcripts */
#define USAGE_INDEX_CHUNK (256 * 1024)
#define USAGE_INDEX_MAX_LINE (4 * 1024 * 1024) /* longer lines: fall back to the exact slow path */
#define USAGE_TMP FS_TEMP_NAME(USAGE_FILE)

struct UsageIndex {
        Hashmap ids; /* the set of ids (C strings: exact bytes, as Qwen compares them) */
        dev_t dev;
        ino_t ino;
        uint64_t consumed; /* every complete line before this offset is in the set */
        bool valid;        /* dev/ino/consumed describe the file */
        bool fallback;     /* a line was too long to index: ask usage_index_has_session() */
        bool has_v1;       /* a complete line before consumed holds a record with version 1 */
        bool rebuild_empty; /* usage_index_freeze_history() found nothing to write in this run */
        char *pending;     /* the unterminated last line seen, parsed but not consumed */
        uint64_t size_seen; /* the file's size at the last refresh */
        bool held;         /* usage_index_hold(): look at the file once until the release */
        bool held_seen;    /* ... and it was looked at: held_state is the answer */
        int held_state;    /* usage_index_update()'s result then (0 none, 1 indexed, 2 fallback) */
        uint64_t synced;   /* the bytes of (dev, ino) before this offset are durable: fsynced in
                            * this run (usage_index_sync_open(), usage_index_appended()) */
};


static char *usage_index_free_str(char *s) {
        free(s);
        return NULL;
}

int usage_index_new(UsageIndex **ret) {
        UsageIndex *idx = calloc(1, sizeof(UsageIndex));
        if (!idx)
                return -ENOMEM;
        *ret = idx;
        return 0;
}

static void usage_index_clear(UsageIndex *idx) {
        hashmap_done(&idx->ids, free);
        idx->consumed = idx->synced = 0;
        idx->valid = idx->fallback = idx->has_v1 = false;
        idx->pending = usage_index_free_str(idx->pending);
}

UsageIndex *usage_index_free(UsageIndex *idx) {
        if (!idx)
                return NULL;
        usage_index_clear(idx);
        free(idx);
        return NULL;
}

static bool usage_index_contains(const UsageIndex *idx, const char *id) {
        return hashmap_get(&idx->ids, hashmap_hash_string(id), hashmap_eq_string, id);
}

/* Add id (a C string) unless it is there. */
static int usage_index_add(UsageIndex *idx, const char *id) {
        uint64_t h = hashmap_hash_string(id);
        HashSlot *slot;
        char *copy;
        int r;

        r = hashmap_reserve(&idx->ids, 1);
        if (r < 0)
                return r;
        slot = hashmap_slot(&idx->ids, h, hashmap_eq_string, id);
        if (slot->entry)
                return 0;
        copy = strdup(id);
        if (!copy)
                return -ENOMEM;
        hashmap_fill(&idx->ids, slot, h, copy);
        return 0;
}

/* Qwen's loadUsageHistory keeps records with version === 1 (a JSON number equal to 1). */
static bool usage_index_is_v1(json_object *obj) {
        json_object *v;

        if (!json_object_object_get_ex(obj, "version", &v))
                return false;
        if (json_object_is_type(v, json_type_int))
                return json_object_get_int64(v) == 1;
        return json_object_is_type(v, json_type_double) && json_object_get_double(v) == 1.0;
}

static int usage_index_object_cb(struct json_object *obj, void *userdata) {
        UsageIndex *idx = userdata;
        json_object *v;

        if (usage_index_is_v1(obj))
                idx->has_v1 = true;
        if (!json_object_object_get_ex(obj, "sessionId", &v) ||
            !json_object_is_type(v, json_type_string))
                return 0;
        /* ids with a NUL byte cannot match a C-string id; skip them */
        if (memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v)))
                return 0;
        return usage_index_add(idx, json_object_get_string(v));
}

/* The common case of one piece of a line, without building the record: the whole piece is one
 * valid JSON object. Only its "version" and "sessionId" values are parsed (last occurrence, as
 * JSON.parse and record_parse_line()), with the same checks as usage_index_object_cb(). 1 done,
 * 0 not an object (the tolerant parse decides), -ENOMEM. */
static int usage_index_piece_fast(UsageIndex *idx, const char *p, size_t n) {
        static const char *const keys[] = { "version", "sessionId" };
        JsonSpan spans[2];
        json_object *v = NULL;
        int r;

        if (json_members(p, n, /* validate= */ true, keys, 2, spans) < 0)
                return 0;
        if (spans[0].s) {
                r = json_parse(spans[0].s, spans[0].n, &v);
                if (r < 0)
                        return r == -ENOMEM ? r : 0;
                if (v && (json_object_is_type(v, json_type_int) ? json_object_get_int64(v) == 1
                          : json_object_is_type(v, json_type_double) &&
                                  json_object_get_double(v) == 1.0))
                        idx->has_v1 = true;
                if (v)
                        json_object_put(v);
                v = NULL;
        }
        if (!spans[1].s || spans[1].s[0] != '"')
                return 1;
        r = json_parse(spans[1].s, spans[1].n, &v);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        /* ids with a NUL byte cannot match a C-string id; skip them */
        if (v && json_object_is_type(v, json_type_string) &&
            !memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v)))
                r = usage_index_add(idx, json_object_get_string(v));
        else
                r = 0;
        if (v)
                json_object_put(v);
        return r < 0 ? r : 1;
}

/* One line (without '\n'), split at '\r' like usage_index_has_session() does. */
static int usage_index_line(UsageIndex *idx, const char *line, size_t len) {
        const char *p = line, *end = line + len;

        while (p <= end) {
                const char *cr = memchr(p, '\r', (size_t)(end - p));
                const char *e = cr ? cr : end;
                int r = usage_index_piece_fast(idx, p, (size_t)(e - p));
                if (r == 0)
                        r = record_parse_line(p, (size_t)(e - p), usage_index_object_cb, idx);
                if (r < 0)
                        return r;
                p = e + 1;
        }
        return 0;
}

/* Read from idx->consumed to EOF; complete lines go into the set, a last line without '\n' is
 * parsed into a temporary set entry check (idx->pending) but not consumed. */
static int usage_index_refresh(UsageIndex *idx, int fd, uint64_t size) {
        _cleanup_free_ char *buf = NULL;
        size_t cap = USAGE_INDEX_CHUNK, len = 0;
        uint64_t off = idx->consumed;
        int r;

        idx->pending = usage_index_free_str(idx->pending);
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        while (off + len < size || len > 0) {
                ssize_t k = 0;
                if (off + len < size) {
                        if (len == cap) {
                                if (cap >= USAGE_INDEX_MAX_LINE) {
                                        idx->fallback = true;
                                        return 0;
                                }
                                char *nb = realloc(buf, cap * 2);
                                if (!nb)
                                        return -ENOMEM;
                                buf = nb;
                                cap *= 2;
                        }
                        k = fs_pread_full(fd, buf + len, cap - len, (off_t)(off + len));
                        if (k < 0)
                                return (int)k;
                }
                len += (size_t)k;
                char *start = buf, *nl;
                while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
                        r = usage_index_line(idx, start, (size_t)(nl - start));
                        if (r < 0)
                                return r;
                        start = nl + 1;
                }
                size_t used = (size_t)(start - buf);
                off += used;
                len -= used;
                memmove(buf, start, len);
                idx->consumed = off;
                if (k == 0) {
                        /* EOF with an unterminated last line: Qwen's reader parses it too */
                        if (len > 0) {
                                idx->pending = strndup(buf, len);
                                if (!idx->pending)
                                        return -ENOMEM;
                        }
                        break;
                }
        }
        return 0;
}

/* The unterminated last line, parsed on its own: does it name id (NULL: any), has it v1? */
static int usage_index_pending(UsageIndex *idx, const char *id, bool *ret_v1) {
        UsageIndex tmp = {};
        int r;

        if (ret_v1)
                *ret_v1 = false;
        if (!idx->pending)
                return 0;
        r = usage_index_line(&tmp, idx->pending, strlen(idx->pending));
        if (r >= 0) {
                r = id ? usage_index_contains(&tmp, id) : 0;
                if (ret_v1)
                        *ret_v1 = tmp.has_v1;
        }
        usage_index_clear(&tmp);
        return r;
}

void usage_index_hold(UsageIndex *idx) {
        if (idx && !idx->held) {
                idx->held = true;
                idx->held_seen = false;
        }
}

void usage_index_release(UsageIndex *idx) {
        if (idx)
                idx->held = idx->held_seen = false;
}

static int usage_index_update_now(UsageIndex *idx, int global_fd);

/* Bring the index up to date with the file: 1 indexed, 0 no file, 2 fallback (lines too long:
 * use the slow reader), -errno. Held (usage_index_hold()): once. */
static int usage_index_update(UsageIndex *idx, int global_fd) {
        int r;

        if (idx->held && idx->held_seen)
                return idx->held_state;
        r = usage_index_update_now(idx, global_fd);
        if (r >= 0 && idx->held) {
                idx->held_seen = true;
                idx->held_state = r;
        }
        return r;
}

static int usage_index_update_now(UsageIndex *idx, int global_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (idx->fallback)
                return 2;
        /* unchanged since the last refresh (one stat of one name below G, never followed):
         * nothing to read. Anything else goes through the safe open below. */
        if (idx->valid && fstatat(global_fd, USAGE_FILE, &st, AT_SYMLINK_NOFOLLOW) >= 0 &&
            S_ISREG(st.st_mode) && st.st_dev == idx->dev && st.st_ino == idx->ino &&
            (uint64_t)st.st_size == idx->size_seen)
                return 1;
        fd = fs_openat(global_fd, USAGE_FILE, USAGE_READ_FLAGS, 0);
        if (fd < 0) {
                if (fd != -ENOENT)
                        return fd;
                usage_index_clear(idx);
                return 0;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (!idx->valid || idx->dev != st.st_dev || idx->ino != st.st_ino ||
            (uint64_t)st.st_size < idx->consumed) {
                bool empty = idx->rebuild_empty;
                usage_index_clear(idx);
                idx->rebuild_empty = empty;
                idx->dev = st.st_dev;
                idx->ino = st.st_ino;
                idx->valid = true;
        }
        r = usage_index_refresh(idx, fd, (uint64_t)st.st_size);
        if (r < 0) {
                usage_index_clear(idx); /* start over next time */
                return r;
        }
        idx->size_seen = (uint64_t)st.st_size;
        return idx->fallback ? 2 : 1;
}

/* ------------------------------------------------------------------ the exact slow reader */

typedef struct HasSession {
        const char *id; /* NULL: only look for a v1 record */
        size_t id_len;
        bool found;
        bool has_v1;
        bool truncated; /* a line too long to parse */
} HasSession;

static int usage_has_cb(json_object *obj, void *userdata) {
        HasSession *h = userdata;
        json_object *v;

        if (usage_index_is_v1(obj))
                h->has_v1 = true;
        if (h->id && json_object_object_get_ex(obj, "sessionId", &v) &&
            json_object_is_type(v, json_type_string) &&
            (size_t)json_object_get_string_len(v) == h->id_len &&
            memcmp(json_object_get_string(v), h->id, h->id_len) == 0)
                h->found = true;
        return 0;
}

static int usage_has_line_cb(const char *line, size_t len, uint64_t offset, bool truncated,
                             void *userdata) {
        HasSession *h = userdata;
        const char *p = line, *end = line + len;

        if (h->found && h->has_v1)
                return 0;
        if (truncated) {
                h->truncated = true;
                /* cannot be parsed in bounded memory; refuse to guess when it names the id */
                return h->id && !h->found && memmem(line, len, h->id, h->id_len) ? -E2BIG : 0;
        }
        while (p <= end) {
                const char *cr = memchr(p, '\r', (size_t)(end - p));
                const char *e = cr ? cr : end;
                size_t n = (size_t)(e - p);

                /* Only a line naming the id, or using escapes that could spell it, can match;
                 * a v1 record is looked for until one is found. */
                if (!h->has_v1 ||
                    (h->id && (memmem(p, n, h->id, h->id_len) || memchr(p, '\\', n)))) {
                        int r = record_parse_line(p, n, usage_has_cb, h);
                        if (r < 0)
                                return r;
                }
                p = e + 1;
        }
        return 0;
}

/* Read the whole file: does a line name id, is there a v1 record? 0, or -errno. */
static int usage_scan_file(int global_fd, HasSession *h) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = fs_openat(global_fd, USAGE_FILE, USAGE_READ_FLAGS, 0);
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        return record_for_each_line_at(fd, USAGE_MAX_LINE, usage_has_line_cb, h);
}

/* Is there a line in G/usage_record.jsonl whose sessionId is id? */
static int usage_index_has_session(int global_fd, const char *id) {
        HasSession h = { .id = id };
        int r;

        if (!id || !*id)
                return -EINVAL;
        h.id_len = strlen(id);
        r = usage_scan_file(global_fd, &h);
        if (r < 0)
                return r;
        return h.found;
}

int usage_index_has(UsageIndex *idx, int global_fd, const char *id) {
        int r;

        if (!id || !*id)
                return -EINVAL;
        r = usage_index_update(idx, global_fd);
        if (r <= 0)
                return r;
        if (r == 2)
                return usage_index_has_session(global_fd, id);
        if (usage_index_contains(idx, id))
                return 1;
        return usage_index_pending(idx, id, NULL);
}

int usage_index_has_v1(UsageIndex *idx, int global_fd) {
        HasSession h = {};
        bool v1 = false;
        int r;

        r = usage_index_update(idx, global_fd);
        if (r < 0)
                return r;
        if (r == 0)
                return 0;
        if (r == 1) {
                if (idx->has_v1)
                        return 1;
                r = usage_index_pending(idx, NULL, &v1);
                return r < 0 ? r : v1;
        }
        r = usage_scan_file(global_fd, &h);
        if (r < 0)
                return r;
        if (!h.has_v1 && h.truncated)
                return -E2BIG; /* a v1 record may hide in a line too long to read */
        return h.has_v1;
}

/* ------------------------------------------------------------------ durability of what was read */

int usage_index_sync_open(UsageIndex *idx, int global_fd, UsageSync *ret) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        *ret = (UsageSync){ .fd = -EBADF };
        if (!idx->fallback && (!idx->valid || idx->size_seen <= idx->synced))
                return 0; /* nothing read, or every byte read is durable already */
        fd = fs_openat(global_fd, USAGE_FILE, USAGE_READ_FLAGS, 0);
        if (fd < 0)
                return fd; /* even -ENOENT: a line was read, and is gone */
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        /* the slow reader read whatever is there now: sync it, note nothing */
        if (idx->fallback) {
                ret->fd = TAKE_FD(fd);
                return 1;
        }
        /* the file the index read, or the fsync proves nothing about what it read */
        if (st.st_dev != idx->dev || st.st_ino != idx->ino)
                return -EAGAIN;
        *ret = (UsageSync){
                .fd = TAKE_FD(fd),
                .dev = st.st_dev,
                .ino = st.st_ino,
                .upto = idx->size_seen,
        };
        return 1;
}

void usage_index_sync_end(UsageIndex *idx, UsageSync *s, int fsync_r) {
        if (fsync_r >= 0 && s->upto > 0 && idx->valid && idx->dev == s->dev &&
            idx->ino == s->ino)
                idx->synced = MAX(idx->synced, s->upto);
        s->fd = macro_safe_close(s->fd);
}

void usage_index_appended(UsageIndex *idx, const UsageAppend *a) {
        /* the append's fsync made every byte of the file before its end durable */
        if (idx && idx->valid && idx->dev == a->dev && idx->ino == a->ino && a->pos > 0)
                idx->synced = MAX(idx->synced, (uint64_t)a->pos);
}

/* ------------------------------------------------------------------ the rebuilt history */

static int usage_index_strcmp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void usage_index_names_free(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* The entry names of directory fd (freshly opened), sorted by bytes as Node's readdirSync
 * (libuv's scandir sorts with strcmp). */
static int usage_index_list(int fd, char ***ret, size_t *ret_n) {
        FsDir d;
        const char *name;
        unsigned char type;
        char **names = NULL;
        size_t n = 0, cap = 0;
        int r;

        fs_dir_init(&d, fd);
        while ((r = fs_dir_next(&d, &name, &type)) > 0) {
                if (util_greedy_realloc((void **)&names, &cap, n + 1, sizeof(char *)) < 0 ||
                    !(names[n] = strdup(name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        if (r < 0) {
                usage_index_names_free(names, n);
                return r;
        }
        if (n > 1)
                qsort(names, n, sizeof(char *), usage_index_strcmp);
        *ret = names;
        *ret_n = n;
        return 0;
}

/* Open directory name below dfd as Qwen's readdirSync would reach it. 0 with *ret, 1 when Qwen
 * skips it (absent, not a directory), -ELOOP for a symlink (Qwen follows it, qgc never does, so
 * the rebuild could not be reproduced), other -errno. */
static int usage_index_open_dir(int dfd, const char *name, int *ret) {
        int fd = fs_openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
                           0);

        if (fd >= 0) {
                *ret = fd;
                return 0;
        }
        return fd == -ENOENT || fd == -ENOTDIR ? 1 : fd;
}

/* rebuildFromSessionJsonl() over G/projects/<dir>/chats/<file>.jsonl: the lines Qwen would
 * write, appended to out. */
static int usage_index_rebuild_lines(int global_fd, StrBuf *out) {
        UsageIndex seen = {}; /* the rebuild's Set of first-record sessionIds */
        char **projects = NULL;
        size_t n_projects = 0;
        int pfd = -EBADF, r;

        r = usage_index_open_dir(global_fd, "projects", &pfd);
        if (r != 0)
                return r > 0 ? 0 : r; /* Qwen: no projects/, nothing to rebuild */
        r = usage_index_list(pfd, &projects, &n_projects);
        if (r < 0)
                goto finish;
        for (size_t i = 0; i < n_projects && r >= 0; i++) {
                _cleanup_close_ int proj_fd = -EBADF, chats_fd = -EBADF;
                char **files = NULL;
                size_t n_files = 0;

                r = usage_index_open_dir(pfd, projects[i], &proj_fd);
                if (r != 0)
                        goto next_project;
                r = usage_index_open_dir(proj_fd, "chats", &chats_fd);
                if (r != 0)
                        goto next_project;
                r = usage_index_list(chats_fd, &files, &n_files);
                for (size_t j = 0; j < n_files && r >= 0; j++) {
                        _cleanup_close_ int fd = -EBADF;
                        _cleanup_free_ char *line = NULL, *key = NULL;
                        struct stat st;

                        if (!util_endswith(files[j], ".jsonl") ||
                            util_endswith(files[j], ".ledger.jsonl"))
                                continue;
                        if (fstatat(chats_fd, files[j], &st, AT_SYMLINK_NOFOLLOW) < 0) {
                                if (errno != ENOENT)
                                        r = -errno;
                                continue;
                        }
                        if (S_ISLNK(st.st_mode)) {
                                r = -ELOOP; /* Qwen's statSync follows it */
                                break;
                        }
                        if (!S_ISREG(st.st_mode))
                                continue;
                        fd = fs_openat(chats_fd, files[j], USAGE_READ_FLAGS, 0);
                        if (fd < 0) {
                                if (fd != -ENOENT)
                                        r = fd;
                                continue;
                        }
                        r = usage_summarize(fd, &line, &key);
                        if (r <= 0)
                                continue;
                        if (key && usage_index_contains(&seen, key)) {
                                r = 0;
                                continue; /* an earlier file had this sessionId */
                        }
                        if (key)
                                r = usage_index_add(&seen, key);
                        if (r >= 0 && line)
                                r = strbuf_append(out, line, strlen(line));
                }
                usage_index_names_free(files, n_files);
        next_project:
                if (r > 0)
                        r = 0; /* skipped, as Qwen does */
        }
finish:
        macro_safe_close(pfd);
        usage_index_names_free(projects, n_projects);
        usage_index_clear(&seen);
        return r < 0 ? r : 0;
}

/* Copy [from, to) of src to the end of dst. */
static int usage_index_copy(int src, uint64_t from, uint64_t to, int dst, char *last) {
        char buf[64 * 1024];

        while (from < to) {
                size_t want = (size_t)MIN((uint64_t)sizeof(buf), to - from);
                ssize_t k = fs_pread_full(src, buf, want, (off_t)from);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        return -EIO;
                int r = util_write_all(dst, buf, (size_t)k);
                if (r < 0)
                        return r;
                *last = buf[k - 1];
                from += (uint64_t)k;
        }
        return 0;
}

/* One attempt: 1 installed, 0 nothing to write, -EAGAIN the file changed meanwhile, -errno. */
static int usage_index_freeze_once(int global_fd, const StrBuf *lines) {
        _cleanup_close_ int ofd = -EBADF, tfd = -EBADF;
        struct stat ost = {}, st;
        char last = '\n';
        int r;

        ofd = fs_openat(global_fd, USAGE_FILE, USAGE_READ_FLAGS, 0);
        if (ofd < 0 && ofd != -ENOENT)
                return ofd;
        if (ofd >= 0) {
                if (fstat(ofd, &ost) < 0)
                        return -errno;
                if (!S_ISREG(ost.st_mode))
                        return -EBADFD;
        }
        /* a leftover of a crashed run has this fixed name (we hold the tree lock) */
        if (unlinkat(global_fd, USAGE_TMP, 0) < 0 && errno != ENOENT)
                return -errno;
        tfd = fs_openat(global_fd, USAGE_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0600);
        if (tfd < 0)
                return tfd;
        /* the file's bytes so far stay as they are (none is a v1 record), then a fresh line */
        r = ofd >= 0 ? usage_index_copy(ofd, 0, (uint64_t)ost.st_size, tfd, &last) : 0;
        if (r >= 0 && last != '\n')
                r = util_write_all(tfd, "\n", 1);
        if (r >= 0)
                r = util_write_all(tfd, lines->buf, lines->len);
        if (r >= 0 && ofd >= 0 && fchmod(tfd, ost.st_mode & 07777) < 0)
                r = -errno;
        if (r >= 0 && fsync(tfd) < 0)
                r = -errno;
        if (r < 0)
                goto fail;

        if (ofd < 0) {
                /* no file: install ours unless a writer created one meanwhile */
                r = fs_rename_noreplace(global_fd, USAGE_TMP, global_fd, USAGE_FILE);
                if (r == -EEXIST)
                        r = -EAGAIN;
                if (r < 0)
                        goto fail;
        } else {
                /* replace it only while it is still the file we copied */
                if (fstatat(global_fd, USAGE_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = errno == ENOENT ? -EAGAIN : -errno;
                        goto fail;
                }
                if (st.st_dev != ost.st_dev || st.st_ino != ost.st_ino ||
                    st.st_size != ost.st_size) {
                        r = -EAGAIN;
                        goto fail;
                }
                if (renameat(global_fd, USAGE_TMP, global_fd, USAGE_FILE) < 0) {
                        r = -errno;
                        goto fail;
                }
                /* A Qwen writer that opened the old file just before the rename appends there:
                 * carry such bytes over (on a fresh line of their own). */
                if (fstat(ofd, &st) == 0 && st.st_size > ost.st_size) {
                        _cleanup_close_ int afd = fs_openat(global_fd, USAGE_FILE,
                                                            O_WRONLY | O_APPEND | O_CLOEXEC |
                                                                    O_NOFOLLOW | O_NONBLOCK, 0);
                        if (afd < 0)
                                return afd;
                        r = usage_index_copy(ofd, (uint64_t)ost.st_size, (uint64_t)st.st_size, afd,
                                          &last);
                        if (r >= 0 && last != '\n')
                                r = util_write_all(afd, "\n", 1);
                        if (r >= 0 && fsync(afd) < 0)
                                r = -errno;
                        if (r < 0)
                                return r;
                }
        }
        if (fsync(global_fd) < 0)
                return -errno;
        return 1;
fail:
        (void)unlinkat(global_fd, USAGE_TMP, 0);
        return r;
}

int usage_index_freeze_history(UsageIndex *idx, int global_fd) {
        StrBuf lines = {};
        int r;

        r = usage_index_has_v1(idx, global_fd);
        if (r != 0)
                return r < 0 ? r : 0;
        if (idx->rebuild_empty)
                return 0;
        r = usage_index_rebuild_lines(global_fd, &lines);
        if (r >= 0 && lines.len == 0) {
                idx->rebuild_empty = true; /* nothing Qwen would count: nothing to keep */
                r = 0;
        } else if (r >= 0) {
                for (int attempt = 0; attempt < 3; attempt++) {
                        r = usage_index_freeze_once(global_fd, &lines);
                        if (r != -EAGAIN)
                                break;
                }
        }
        strbuf_done(&lines);
        idx->held_seen = false; /* held or not, the next lookup looks at the file again */
        return r;
}

/* ------------------------------------------------------------------ the projects of sessions */

/* The JSON string value of "key" in the line [p, e): 1 with *ret (unescaped), 0 when the line
 * has none that qgc reads with certainty, -ENOMEM. */
static int usage_index_line_string(const char *p, const char *e, const char *key, char **ret) {
        _cleanup_free_ char *pat = util_strprintf("\"%s\":\"", key);
        const char *v, *q;
        size_t plen;

        *ret = NULL;
        if (!pat)
                return -ENOMEM;
        plen = strlen(pat);
        v = memmem(p, (size_t)(e - p), pat, plen);
        if (!v)
                return 0;
        v += plen;
        for (q = v; q < e && *q != '"'; q++)
                if (*q == '\\' || (unsigned char)*q < 0x20)
                        return 0; /* an escape: not read here */
        if (q == e)
                return 0;
        *ret = strndup(v, (size_t)(q - v));
        return *ret ? 1 : -ENOMEM;
}

static int usage_index_idcmp(const void *a, const void *b) {
        return util_ascii_strcasecmp(*(char *const *)a, *(char *const *)b);
}

int usage_index_projects(int gfd, const char *const *ids, size_t n, char ***cwds, size_t *n_cwds) {
        enum { WIN = 1024 * 1024 };
        _cleanup_close_ int fd = fs_open_noatime(gfd, USAGE_FILE,
                                                 O_RDONLY | O_CLOEXEC); /* a dry run changes
                                                                         * nothing */
        _cleanup_free_ char *buf = NULL;
        size_t have = 0, alloc = *n_cwds;
        off_t off = 0;
        bool skipping = false;
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        buf = malloc(WIN);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = fs_pread_full(fd, buf + have, WIN - have, off);
                const char *p = buf, *end;

                if (k <= 0)
                        break;
                off += k;
                end = buf + have + k;
                for (;;) {
                        const char *nl = memchr(p, '\n', (size_t)(end - p));
                        _cleanup_free_ char *id = NULL, *cwd = NULL;
                        char *key;
                        int r;

                        if (!nl)
                                break;
                        if (skipping) {
                                skipping = false;
                                p = nl + 1;
                                continue;
                        }
                        r = usage_index_line_string(p, nl, "sessionId", &id);
                        if (r > 0) {
                                key = id;
                                if (bsearch(&key, ids, n, sizeof(char *), usage_index_idcmp))
                                        r = usage_index_line_string(p, nl, "project", &cwd);
                                else
                                        r = 0;
                        }
                        if (r < 0)
                                return r;
                        p = nl + 1;
                        if (!cwd || cwd[0] != '/')
                                continue;
                        bool dup = false;
                        for (size_t i = 0; !dup && i < *n_cwds; i++)
                                dup = streq((*cwds)[i], cwd);
                        if (dup)
                                continue;
                        if (*n_cwds == alloc) {
                                char **nv = reallocarray(*cwds, alloc ? alloc * 2 : 8,
                                                         sizeof(char *));
                                if (!nv)
                                        return -ENOMEM;
                                *cwds = nv;
                                alloc = alloc ? alloc * 2 : 8;
                        }
                        (*cwds)[(*n_cwds)++] = TAKE_PTR(cwd);
                }
                have = (size_t)(end - p);
                if (have == WIN) { /* one line longer than the window: skipped */
                        have = 0;
                        skipping = true;
                } else
                        memmove(buf, p, have);
        }
        return 0;
}
