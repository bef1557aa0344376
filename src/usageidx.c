/* usageidx.c: an incremental index of the session ids in G/usage_record.jsonl. */
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

#include "macro.h"
#include "record.h"
#include "usage.h"
#include "usageidx.h"
#include "util.h"

#define USAGEIDX_FILE "usage_record.jsonl"
#define USAGEIDX_CHUNK (256 * 1024)
#define USAGEIDX_MAX_LINE (4 * 1024 * 1024) /* longer lines: fall back to the exact slow path */

struct UsageIndex {
        char **slots; /* open addressing set of ids (exact bytes, as Qwen compares them) */
        size_t n_slots, n_ids;
        dev_t dev;
        ino_t ino;
        uint64_t consumed; /* every complete line before this offset is in the set */
        bool valid;        /* dev/ino/consumed describe the file */
        bool fallback;     /* a line was too long to index: ask usage_has_session() */
        char *pending;     /* the unterminated last line seen, parsed but not consumed */
};

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

static void usageidx_clear(UsageIndex *idx) {
        for (size_t i = 0; i < idx->n_slots; i++)
                free(idx->slots[i]);
        free(idx->slots);
        idx->slots = NULL;
        idx->n_slots = idx->n_ids = 0;
        idx->consumed = 0;
        idx->valid = idx->fallback = false;
        idx->pending = usageidx_free_str(idx->pending);
}

UsageIndex *usage_index_free(UsageIndex *idx) {
        if (!idx)
                return NULL;
        usageidx_clear(idx);
        free(idx);
        return NULL;
}

/* FNV-1a over the id's bytes. */
static size_t usageidx_hash(const char *s, size_t n) {
        uint64_t h = UINT64_C(1469598103934665603);
        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char)s[i];
                h *= UINT64_C(1099511628211);
        }
        return (size_t)h;
}

static bool usageidx_contains(const UsageIndex *idx, const char *id) {
        size_t n = strlen(id);
        if (idx->n_slots == 0)
                return false;
        for (size_t i = usageidx_hash(id, n) & (idx->n_slots - 1);; i = (i + 1) & (idx->n_slots - 1)) {
                if (!idx->slots[i])
                        return false;
                if (streq(idx->slots[i], id))
                        return true;
        }
}

static int usageidx_add(UsageIndex *idx, const char *id, size_t n) {
        if ((idx->n_ids + 1) * 2 > idx->n_slots) {
                size_t m = idx->n_slots ? idx->n_slots * 2 : 64;
                char **s = calloc(m, sizeof(char *));
                if (!s)
                        return -ENOMEM;
                for (size_t i = 0; i < idx->n_slots; i++) {
                        char *v = idx->slots[i];
                        if (!v)
                                continue;
                        size_t j = usageidx_hash(v, strlen(v)) & (m - 1);
                        while (s[j])
                                j = (j + 1) & (m - 1);
                        s[j] = v;
                }
                free(idx->slots);
                idx->slots = s;
                idx->n_slots = m;
        }
        size_t i = usageidx_hash(id, n) & (idx->n_slots - 1);
        for (; idx->slots[i]; i = (i + 1) & (idx->n_slots - 1))
                if (strlen(idx->slots[i]) == n && memcmp(idx->slots[i], id, n) == 0)
                        return 0;
        idx->slots[i] = strndup(id, n);
        if (!idx->slots[i])
                return -ENOMEM;
        idx->n_ids++;
        return 0;
}

static int usageidx_object_cb(struct json_object *obj, void *userdata) {
        UsageIndex *idx = userdata;
        json_object *v;

        if (!json_object_object_get_ex(obj, "sessionId", &v) ||
            !json_object_is_type(v, json_type_string))
                return 0;
        /* ids with a NUL byte cannot match a C-string id; skip them */
        if (memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v)))
                return 0;
        return usageidx_add(idx, json_object_get_string(v), (size_t)json_object_get_string_len(v));
}

/* One line (without '\n'), split at '\r' like usage_has_session() does. */
static int usageidx_line(UsageIndex *idx, const char *line, size_t len) {
        const char *p = line, *end = line + len;

        while (p <= end) {
                const char *cr = memchr(p, '\r', (size_t)(end - p));
                const char *e = cr ? cr : end;
                int r = record_parse_line(p, (size_t)(e - p), usageidx_object_cb, idx);
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

/* Does the unterminated last line name id? */
static int usageidx_pending_has(UsageIndex *idx, const char *id) {
        UsageIndex tmp = {};
        int r;

        if (!idx->pending)
                return 0;
        r = usageidx_line(&tmp, idx->pending, strlen(idx->pending));
        if (r >= 0)
                r = usageidx_contains(&tmp, id);
        usageidx_clear(&tmp);
        return r;
}

int usage_index_has(UsageIndex *idx, int global_fd, const char *id) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!id || !*id)
                return -EINVAL;
        if (idx->fallback)
                return usage_has_session(global_fd, id);
        fd = openat(global_fd, USAGEIDX_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
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
                usageidx_clear(idx);
                idx->dev = st.st_dev;
                idx->ino = st.st_ino;
                idx->valid = true;
        }
        r = usageidx_refresh(idx, fd, (uint64_t)st.st_size);
        if (r < 0) {
                usageidx_clear(idx); /* start over next time */
                return r;
        }
        if (idx->fallback)
                return usage_has_session(global_fd, id);
        if (usageidx_contains(idx, id))
                return 1;
        return usageidx_pending_has(idx, id);
}
