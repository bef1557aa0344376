/* usageidx.c: the one owner of G/usage_record.jsonl. Everything qgc reads from or writes to
 * that file is here: the incremental index of its session ids (and whether it has a version-1
 * record, the test Qwen's loadUsageHistory makes) and the exact slow reader here; the append
 * of salvaged lines in usageappend.c; the one-time write of the history Qwen would rebuild from
 * transcripts in usagehistory.c.
 *
 * Qwen appends to the file without a lock (jsonl writeLineSync: O_APPEND, fsync), so qgc never
 * rewrites bytes that are not its own, with one exception documented at usage_history_freeze().
 */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fsutil.h"
#include "hashmap.h"
#include "log.h"
#include "macro.h"
#include "record.h"
#include "usage.h"
#include "usageidx-int.h"
#include "usageidx.h"
#include "util.h"

#define USAGE_MAX_LINE (16 * 1024 * 1024) /* the exact reader's bound, as for transcripts */
#define USAGEIDX_CHUNK (256 * 1024)
#define USAGEIDX_MAX_LINE (4 * 1024 * 1024) /* longer lines: fall back to the exact slow path */

/* openat() through the safe-filesystem layer (fs_openat(): no symlink, no mount crossing, a
 * bind-mounted usage file included), with openat()'s convention: -1 and errno. */
int usageidx_openat(int dfd, const char *name, int flags, mode_t mode) {
        int fd = fs_openat(dfd, name, flags, mode);

        if (fd < 0) {
                errno = -fd;
                return -1;
        }
        return fd;
}

static char *usageidx_free_str(char *s) {
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

void usageidx_clear(UsageIndex *idx) {
        hashmap_done(&idx->ids, free);
        idx->consumed = idx->synced = 0;
        idx->valid = idx->fallback = idx->has_v1 = false;
        idx->pending = usageidx_free_str(idx->pending);
}

UsageIndex *usage_index_free(UsageIndex *idx) {
        if (!idx)
                return NULL;
        usageidx_clear(idx);
        free(idx);
        return NULL;
}

bool usageidx_contains(const UsageIndex *idx, const char *id) {
        return hashmap_get(&idx->ids, hash_string(id), hashmap_eq_string, id);
}

/* Add id (a C string) unless it is there. */
int usageidx_add(UsageIndex *idx, const char *id) {
        uint64_t h = hash_string(id);
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
static bool usageidx_is_v1(json_object *obj) {
        json_object *v;

        if (!json_object_object_get_ex(obj, "version", &v))
                return false;
        if (json_object_is_type(v, json_type_int))
                return json_object_get_int64(v) == 1;
        return json_object_is_type(v, json_type_double) && json_object_get_double(v) == 1.0;
}

static int usageidx_object_cb(struct json_object *obj, void *userdata) {
        UsageIndex *idx = userdata;
        json_object *v;

        if (usageidx_is_v1(obj))
                idx->has_v1 = true;
        if (!json_object_object_get_ex(obj, "sessionId", &v) ||
            !json_object_is_type(v, json_type_string))
                return 0;
        /* ids with a NUL byte cannot match a C-string id; skip them */
        if (memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v)))
                return 0;
        return usageidx_add(idx, json_object_get_string(v));
}

/* The common case of one piece of a line, without building the record: the whole piece is one
 * valid JSON object. Only its "version" and "sessionId" values are parsed (last occurrence, as
 * JSON.parse and record_parse_line()), with the same checks as usageidx_object_cb(). 1 done,
 * 0 not an object (the tolerant parse decides), -ENOMEM. */
static int usageidx_piece_fast(UsageIndex *idx, const char *p, size_t n) {
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
                r = usageidx_add(idx, json_object_get_string(v));
        else
                r = 0;
        if (v)
                json_object_put(v);
        return r < 0 ? r : 1;
}

/* One line (without '\n'), split at '\r' like usage_has_session() does. */
static int usageidx_line(UsageIndex *idx, const char *line, size_t len) {
        const char *p = line, *end = line + len;

        while (p <= end) {
                const char *cr = memchr(p, '\r', (size_t)(end - p));
                const char *e = cr ? cr : end;
                int r = usageidx_piece_fast(idx, p, (size_t)(e - p));
                if (r == 0)
                        r = record_parse_line(p, (size_t)(e - p), usageidx_object_cb, idx);
                if (r < 0)
                        return r;
                p = e + 1;
        }
        return 0;
}

/* Read from idx->consumed to EOF; complete lines go into the set, a last line without '\n' is
 * parsed into a temporary set entry check (idx->pending) but not consumed. */
static int usageidx_refresh(UsageIndex *idx, int fd, uint64_t size) {
        _cleanup_free_ char *buf = NULL;
        size_t cap = USAGEIDX_CHUNK, len = 0;
        uint64_t off = idx->consumed;
        int r;

        idx->pending = usageidx_free_str(idx->pending);
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        while (off + len < size || len > 0) {
                ssize_t k = 0;
                if (off + len < size) {
                        if (len == cap) {
                                if (cap >= USAGEIDX_MAX_LINE) {
                                        idx->fallback = true;
                                        return 0;
                                }
                                char *nb = realloc(buf, cap * 2);
                                if (!nb)
                                        return -ENOMEM;
                                buf = nb;
                                cap *= 2;
                        }
                        k = pread(fd, buf + len, cap - len, (off_t)(off + len));
                        if (k < 0)
                                return -errno;
                }
                len += (size_t)k;
                char *start = buf, *nl;
                while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
                        r = usageidx_line(idx, start, (size_t)(nl - start));
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
static int usageidx_pending(UsageIndex *idx, const char *id, bool *ret_v1) {
        UsageIndex tmp = {};
        int r;

        if (ret_v1)
                *ret_v1 = false;
        if (!idx->pending)
                return 0;
        r = usageidx_line(&tmp, idx->pending, strlen(idx->pending));
        if (r >= 0) {
                r = id ? usageidx_contains(&tmp, id) : 0;
                if (ret_v1)
                        *ret_v1 = tmp.has_v1;
        }
        usageidx_clear(&tmp);
        return r;
}

/* Open the file for reading: never through a symlink, never blocking (a FIFO), errno set. */
int usageidx_open_read(int global_fd) {
        return usageidx_openat(global_fd, USAGE_FILE,
                      O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
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

static int usageidx_update_now(UsageIndex *idx, int global_fd);

/* Bring the index up to date with the file: 1 indexed, 0 no file, 2 fallback (lines too long:
 * use the slow reader), -errno. Held (usage_index_hold()): once. */
static int usageidx_update(UsageIndex *idx, int global_fd) {
        int r;

        if (idx->held && idx->held_seen)
                return idx->held_state;
        r = usageidx_update_now(idx, global_fd);
        if (r >= 0 && idx->held) {
                idx->held_seen = true;
                idx->held_state = r;
        }
        return r;
}

static int usageidx_update_now(UsageIndex *idx, int global_fd) {
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
        fd = usageidx_open_read(global_fd);
        if (fd < 0) {
                if (errno != ENOENT)
                        return -errno;
                usageidx_clear(idx);
                return 0;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (!idx->valid || idx->dev != st.st_dev || idx->ino != st.st_ino ||
            (uint64_t)st.st_size < idx->consumed) {
                bool empty = idx->rebuild_empty;
                usageidx_clear(idx);
                idx->rebuild_empty = empty;
                idx->dev = st.st_dev;
                idx->ino = st.st_ino;
                idx->valid = true;
        }
        r = usageidx_refresh(idx, fd, (uint64_t)st.st_size);
        if (r < 0) {
                usageidx_clear(idx); /* start over next time */
                return r;
        }
        idx->size_seen = (uint64_t)st.st_size;
        return idx->fallback ? 2 : 1;
}

int usage_index_has(UsageIndex *idx, int global_fd, const char *id) {
        int r;

        if (!id || !*id)
                return -EINVAL;
        r = usageidx_update(idx, global_fd);
        if (r <= 0)
                return r;
        if (r == 2)
                return usage_has_session(global_fd, id);
        if (usageidx_contains(idx, id))
                return 1;
        return usageidx_pending(idx, id, NULL);
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

        if (usageidx_is_v1(obj))
                h->has_v1 = true;
        if (h->id && json_object_object_get_ex(obj, "sessionId", &v) &&
            json_object_is_type(v, json_type_string) &&
            (size_t)json_object_get_string_len(v) == h->id_len &&
            memcmp(json_object_get_string(v), h->id, h->id_len) == 0)
                h->found = true;
        return 0;
}

static int usage_has_line_cb(const char *line, size_t len, bool truncated, void *userdata) {
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

        fd = usageidx_open_read(global_fd);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        return record_for_each_line(fd, USAGE_MAX_LINE, usage_has_line_cb, h);
}

/* Is there a line in G/usage_record.jsonl whose sessionId is id? */
int usage_has_session(int global_fd, const char *id) {
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

int usage_index_has_v1(UsageIndex *idx, int global_fd) {
        HasSession h = {};
        bool v1 = false;
        int r;

        r = usageidx_update(idx, global_fd);
        if (r < 0)
                return r;
        if (r == 0)
                return 0;
        if (r == 1) {
                if (idx->has_v1)
                        return 1;
                r = usageidx_pending(idx, NULL, &v1);
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
        fd = usageidx_open_read(global_fd);
        if (fd < 0)
                return -errno; /* even -ENOENT: a line was read, and is gone */
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
        s->fd = safe_close(s->fd);
}

void usage_index_appended(UsageIndex *idx, const UsageAppend *a) {
        /* the append's fsync made every byte of the file before its end durable */
        if (idx && idx->valid && idx->dev == a->dev && idx->ino == a->ino && a->pos > 0)
                idx->synced = MAX(idx->synced, (uint64_t)a->pos);
}
