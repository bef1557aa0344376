/* usageidx.c: the one owner of G/usage_record.jsonl. Everything qgc reads from or writes to
 * that file is here: the incremental index of its session ids (and whether it has a version-1
 * record, the test Qwen's loadUsageHistory makes), the exact slow reader and the append of a
 * salvaged line here; the one-time write of the history Qwen would rebuild from transcripts in
 * usagehistory.c.
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
        idx->consumed = 0;
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

        if (record_json_members(p, n, /* validate= */ true, keys, 2, spans) < 0)
                return 0;
        if (spans[0].s) {
                r = record_json_parse(spans[0].s, spans[0].n, &v);
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
        r = record_json_parse(spans[1].s, spans[1].n, &v);
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

/* ------------------------------------------------------------------ appending */

static int usageidx_pread_all(int fd, void *buf, size_t n, uint64_t off) {
        size_t got = 0;

        while (got < n) {
                ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO; /* shorter than expected */
                got += (size_t)k;
        }
        return 0;
}

/* Are the n bytes at off exactly buf? 1 yes, 0 no, -errno. */
static int usageidx_bytes_are(int fd, uint64_t off, const char *buf, size_t n) {
        _cleanup_free_ char *got = malloc(MAX(n, (size_t)1));
        int r;

        if (!got)
                return -ENOMEM;
        r = usageidx_pread_all(fd, got, n, off);
        if (r == -EIO)
                return 0;
        if (r < 0)
                return r;
        return memcmp(got, buf, n) == 0;
}

/* Undo the n bytes of a failed append at [off, off + n), which are ours: O_APPEND placed them
 * atomically, so no other writer's bytes are in that range. They are overwritten in place with
 * blanks ending in '\n': a blank line, which Qwen's reader and ours skip. Unlike truncating
 * the file this is safe while Qwen appends unlocked: a line Qwen appended after our fragment
 * (even glued to it) stays whole, and now starts on a fresh line. Only when the overwrite itself
 * fails is the file truncated, and only while it still ends exactly where our bytes end. */
static int usageidx_undo(int fd, uint64_t off, size_t n) {
        _cleanup_free_ char *blank = NULL;
        struct stat st;
        int flags, r = 0;

        if (n == 0)
                return 0;
        blank = malloc(n);
        if (!blank)
                return -ENOMEM;
        memset(blank, ' ', n - 1);
        blank[n - 1] = '\n';
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_APPEND) < 0)
                r = -errno; /* pwrite() on an O_APPEND fd would append */
        for (size_t done = 0; r == 0 && done < n;) {
                ssize_t k = pwrite(fd, blank + done, n - done, (off_t)(off + done));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        r = k < 0 ? -errno : -EIO;
                else
                        done += (size_t)k;
        }
        if (r < 0) {
                if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != off + n)
                        return r;
                if (ftruncate(fd, (off_t)off) < 0)
                        return -errno;
        }
        return fsync(fd) < 0 ? -errno : 0;
}

/* Append one line on a fresh line with a single write() on an O_APPEND fd, fsync, and read it
 * back. */
int usage_append(int global_fd, const char *line) {
        size_t len;
        const char *nl;

        if (!line)
                return -EINVAL;
        len = strlen(line);
        nl = memchr(line, '\n', len);
        if (len < 2 || !nl || nl != line + len - 1)
                return -EINVAL; /* exactly one complete line */
        return usage_append_lines(global_fd, line, len);
}

/* The group commit: lines (complete, none empty) with one write(), one fsync, one read-back. */
int usage_append_lines(int global_fd, const char *line, size_t len) {
        UsageAppend a;
        int r;

        r = usage_append_begin(global_fd, line, len, &a);
        if (r < 0)
                return r;
        return usage_append_end(&a, fsync(a.fd) < 0 ? -errno : 0);
}

/* The second half of usage_append_lines(): fsync_r is what the fsync of a->fd returned; then the
 * bytes are read back, a new file's directory entry made durable, and a's fds closed. */
int usage_append_end(UsageAppend *a, int fsync_r) {
        _cleanup_close_ int fd = TAKE_FD(a->fd), rfd = TAKE_FD(a->rfd);
        const char *line = a->line;
        size_t len = a->len;
        off_t pos = a->pos;
        int r;

        /* durable, then readable: our bytes at our offset, starting a line */
        if (fsync_r < 0) {
                /* Not durable. Our lines stay readable in the page cache (after a failed fsync
                 * Linux may even mark the pages clean), and the next run would trust them and
                 * let the transcripts go: undo them in place, as a short write is. */
                r = (uint64_t)pos >= len ? usageidx_bytes_are(rfd, (uint64_t)pos - len, line, len)
                                         : 0;
                if (r > 0)
                        r = usageidx_undo(fd, (uint64_t)pos - len, len);
                if (r < 0)
                        log_warning_errno(r,
                                          "%s: lines whose fsync failed could not be undone (a "
                                          "later run may take them for durable)",
                                          USAGE_FILE);
                return fsync_r;
        }
        if ((uint64_t)pos < len)
                return -EIO;
        r = usageidx_bytes_are(rfd, (uint64_t)pos - len, line, len);
        if (r > 0 && (uint64_t)pos > len)
                r = usageidx_bytes_are(rfd, (uint64_t)pos - len - 1, "\n", 1);
        if (r <= 0)
                return r < 0 ? r : -EIO; /* not a readable line: keep the session */
        if (a->created && fsync(a->global_fd) < 0)
                return -errno; /* a new file's directory entry must be durable too */
        if (close(TAKE_FD(fd)) < 0 && errno != EINTR)
                return -errno;
        return 0;
}

/* The first half: up to and including the write(). 0: every byte written, *ret holds the fds
 * (the caller fsyncs ret->fd, on any thread, and calls usage_append_end()); or -errno, with a
 * short write undone and nothing held. line must stay valid until usage_append_end(). */
int usage_append_begin(int global_fd, const char *line, size_t len, UsageAppend *ret) {
        _cleanup_close_ int fd = -EBADF, rfd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        bool created = false, fresh = true;
        struct stat st, rst;
        size_t n;
        off_t pos0, pos;
        ssize_t k;
        int r;

        if (!line || len < 2 || line[len - 1] != '\n' || line[0] == '\n' || memchr(line, 0, len) ||
            memmem(line, len, "\n\n", 2))
                return -EINVAL; /* complete lines, none empty */

        fd = usageidx_openat(global_fd, USAGE_FILE,
                    O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
        if (fd < 0 && errno == ENOENT) {
                fd = usageidx_openat(global_fd, USAGE_FILE,
                            O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW |
                                    O_NOCTTY,
                            0600);
                created = fd >= 0;
                if (fd < 0 && errno == EEXIST) /* lost a race with another writer */
                        fd = usageidx_openat(global_fd, USAGE_FILE,
                                    O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
                                            O_NOCTTY, 0);
        }
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        /* a second, read-only handle on the same file, to look at the last byte and to read our
         * line back */
        rfd = usageidx_open_read(global_fd);
        if (rfd < 0)
                return -errno;
        if (fstat(rfd, &rst) < 0)
                return -errno;
        if (rst.st_dev != st.st_dev || rst.st_ino != st.st_ino)
                return -EAGAIN; /* replaced meanwhile: not "changed since scan" */

        /* Qwen or qgc may have died mid-append: start on a fresh line, or the record would be
         * glued to the fragment and unreadable (Qwen's reader drops the glued line). */
        pos0 = lseek(fd, 0, SEEK_END);
        if (pos0 < 0)
                return -errno;
        if (pos0 > 0) {
                char c;
                r = usageidx_pread_all(rfd, &c, 1, (uint64_t)pos0 - 1);
                if (r < 0)
                        return r;
                fresh = c == '\n';
        }
        n = len + !fresh;
        buf = malloc(n);
        if (!buf)
                return -ENOMEM;
        if (!fresh)
                buf[0] = '\n';
        memcpy(buf + !fresh, line, len);

        k = write(fd, buf, n);
        r = k < 0 ? -errno : 0;
        /* with O_APPEND the offset is now the end of the bytes this write() placed */
        pos = lseek(fd, 0, SEEK_CUR);
        if (pos < 0)
                return r < 0 ? r : -errno;
        if (k >= 0 && (size_t)k == n) {
                *ret = (UsageAppend){
                        .fd = TAKE_FD(fd),
                        .rfd = TAKE_FD(rfd),
                        .global_fd = global_fd,
                        .created = created,
                        .pos = pos,
                        .line = line,
                        .len = len,
                };
                return 0;
        }

        /* A short write (full disk: the bytes that fit are in the file), or an error. Find our
         * bytes and undo them. A short write ends at pos; after an error, bytes can only be
         * ours if the file grew from pos0 by at most n and holds a prefix of our buffer. */
        uint64_t start;
        size_t m;
        if (k >= 0) {
                m = (size_t)k;
                start = (uint64_t)pos - m;
        } else if (pos > pos0 && (uint64_t)(pos - pos0) <= n) {
                m = (size_t)(pos - pos0);
                start = (uint64_t)pos0;
        } else
                return r; /* nothing of ours was written */
        int q = usageidx_bytes_are(rfd, start, buf, m);
        if (q > 0)
                q = usageidx_undo(fd, start, m);
        else if (q == 0)
                q = -EIO; /* not ours after all: leave the file alone */
        if (q < 0)
                return q;
        return r < 0 ? r : -ENOSPC; /* a short regular-file write means the disk is full */
}
