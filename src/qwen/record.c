/* record.c: JSONL lines of Qwen transcripts, bounded and tolerant: one line parsed as Qwen's
 * parseLineTolerant() does, every line of a file streamed, and a record's timestamp.
 *
 * Qwen reads transcripts through Node: bytes are decoded as UTF-8 (one U+FFFD per invalid
 * subpart), each line is trimmed with String.prototype.trim() and handed to JSON.parse(), and a
 * line that fails is split into balanced top-level {...} fragments (jsonl-utils.ts,
 * parseLineTolerant). json-c alone is more lenient than JSON.parse (NaN, single quotes, raw
 * control characters, clamped integers), so json.h has a small parser with JSON.parse's grammar
 * (json.c; json-scan.c validates and captures members without building anything).
 * The two ends of a transcript (first record, last activity, title) are recordhead.c and
 * recordtail.c. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "js.h"
#include "macro.h"
#include "record-int.h"
#include "utf8.h"

#define RECORD_READ_CHUNK (1024 * 1024)

/* ------------------------------------------------------------------ tolerant lines */

static int record_emit(json_object *obj, record_object_cb cb, void *userdata) {
        int r = cb ? cb(obj, userdata) : 0;

        json_object_put(obj);
        return r;
}

/* recoverObjectsFromLine(): parse each balanced top-level {...} fragment, honouring strings and
 * escapes; unbalanced closing braces reset the scan. */
static int record_recover_fragments(const char *s, size_t n, record_object_cb cb, void *userdata) {
        size_t depth = 0, start = SIZE_MAX;
        bool in_string = false, escape = false;
        int count = 0, r;

        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (escape) {
                        escape = false;
                        continue;
                }
                if (in_string) {
                        if (c == '\\')
                                escape = true;
                        else if (c == '"')
                                in_string = false;
                        continue;
                }
                if (c == '"') {
                        in_string = true;
                        continue;
                }
                if (c == '{') {
                        if (depth == 0)
                                start = i;
                        depth++;
                } else if (c == '}') {
                        if (depth == 0) {
                                start = SIZE_MAX; /* depth < 0: reset */
                                continue;
                        }
                        depth--;
                        if (depth == 0 && start != SIZE_MAX) {
                                json_object *obj = NULL;

                                r = json_parse(s + start, i + 1 - start, &obj);
                                if (r == -ENOMEM)
                                        return r;
                                start = SIZE_MAX;
                                if (r < 0 || !json_object_is_type(obj, json_type_object)) {
                                        json_object_put(obj);
                                        continue;
                                }
                                r = record_emit(obj, cb, userdata);
                                if (r < 0)
                                        return r;
                                count++;
                        }
                }
        }
        return count;
}

/* parseLineTolerant(): trim, JSON.parse the whole line (objects only, other values give
 * nothing), else recover glued fragments. Objects are borrowed by cb. */
int record_parse_line(const char *line, size_t len, record_object_cb cb, void *userdata) {
        json_object *obj = NULL;
        int r;

        js_trim(&line, &len);
        if (len == 0)
                return 0;
        r = json_parse(line, len, &obj);
        if (r == -ENOMEM)
                return r;
        if (r >= 0) {
                if (!json_object_is_type(obj, json_type_object)) {
                        json_object_put(obj);
                        return 0;
                }
                r = record_emit(obj, cb, userdata);
                return r < 0 ? r : 1;
        }
        return record_recover_fragments(line, len, cb, userdata);
}

/* ------------------------------------------------------------------ streaming */

ssize_t record_pread(int fd, void *buf, size_t n, uint64_t off) {
        for (;;) {
                ssize_t k = pread(fd, buf, n, (off_t)off);
                if (k >= 0 || errno != EINTR)
                        return k < 0 ? -errno : k;
        }
}

/* Stream every line of fd from offset 0 with memory bounded by max_line: cb sees each line
 * without its '\n' and the file offset where it starts; a line longer than max_line is passed
 * once, cut to max_line bytes, with truncated=true, and the rest of it is skipped. */
int record_for_each_line_at(int fd, size_t max_line, record_line_at_cb cb, void *userdata) {
        _cleanup_free_ char *buf = NULL;
        size_t cap, len = 0, scanned = 0;
        uint64_t off = 0, line_off = 0;
        bool skipping = false;
        int r;

        if (max_line == 0 || max_line > SIZE_MAX / 2)
                return -EINVAL;
        cap = MIN((size_t)RECORD_READ_CHUNK, max_line + 1);
        cap = MAX(cap, (size_t)4096);
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

        for (;;) {
                ssize_t k;
                size_t pos = 0;

                if (len == cap) {
                        /* The partial line fills the buffer: grow, or give up on this line. */
                        if (len > max_line) {
                                if (cb) {
                                        r = cb(buf, max_line, line_off, true, userdata);
                                        if (r < 0)
                                                return r;
                                }
                                skipping = true;
                                line_off += len;
                                len = scanned = 0;
                        } else {
                                size_t ncap = MIN(cap * 2, max_line + 1);
                                char *nb;

                                if (ncap <= cap)
                                        ncap = cap + 1;
                                nb = realloc(buf, ncap);
                                if (!nb)
                                        return -ENOMEM;
                                buf = nb;
                                cap = ncap;
                        }
                }

                k = record_pread(fd, buf + len, cap - len, off);
                if (k < 0)
                        return (int)k;
                if (k == 0) {
                        /* the last line, without its '\n': cut like any other (the buffer is
                         * at least 4 KiB, so it may hold more than a small max_line) */
                        if (len > 0 && !skipping && cb) {
                                r = cb(buf, MIN(len, max_line), line_off, len > max_line,
                                       userdata);
                                if (r < 0)
                                        return r;
                        }
                        return 0;
                }
                off += (uint64_t)k;
                len += (size_t)k;

                for (;;) {
                        char *nl = memchr(buf + scanned, '\n', len - scanned);
                        size_t n;

                        if (!nl) {
                                scanned = len;
                                break;
                        }
                        n = (size_t)(nl - (buf + pos));
                        if (skipping)
                                skipping = false;
                        else if (cb) {
                                bool cut = n > max_line;
                                r = cb(buf + pos, cut ? max_line : n, line_off, cut, userdata);
                                if (r < 0)
                                        return r;
                        }
                        line_off += n + 1;
                        pos += n + 1;
                        scanned = pos;
                }
                if (skipping) {
                        line_off += len - pos;
                        len = scanned = 0;
                } else if (pos > 0) {
                        memmove(buf, buf + pos, len - pos);
                        len -= pos;
                        scanned -= pos;
                }
        }
}

/* record_for_each_line_at() over text already in memory (a whole file read at once): the same
 * lines, offsets and cuts. */
int record_for_each_line_mem(const char *text, size_t n, size_t max_line, record_line_at_cb cb,
                             void *userdata) {
        size_t pos = 0;
        int r;

        if (max_line == 0 || max_line > SIZE_MAX / 2)
                return -EINVAL;
        while (pos < n) {
                const char *nl = memchr(text + pos, '\n', n - pos);
                size_t len = nl ? (size_t)(nl - (text + pos)) : n - pos;
                bool cut = len > max_line;

                if (cb) {
                        r = cb(text + pos, cut ? max_line : len, pos, cut, userdata);
                        if (r < 0)
                                return r;
                }
                pos += len + 1;
        }
        return 0;
}

/* The file's text in one pread() of size + 1 bytes when it holds exactly size bytes now
 * (*ret, NUL-terminated), else *ret NULL. 0 or -errno. */
int record_read_exact(int fd, uint64_t size, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t got;
        int r;

        *ret = NULL;
        if (size >= SIZE_MAX)
                return -EFBIG;
        text = malloc((size_t)size + 1);
        if (!text)
                return -ENOMEM;
        r = record_pread_full(fd, text, (size_t)size + 1, 0, &got);
        if (r < 0)
                return r;
        if (got != size)
                return 0;
        text[size] = '\0';
        *ret = TAKE_PTR(text);
        return 0;
}

typedef struct LineAdapter {
        record_line_cb cb;
        void *userdata;
} LineAdapter;

static int record_line_adapter(const char *line, size_t len, uint64_t offset, bool truncated,
                               void *userdata) {
        LineAdapter *a = userdata;

        (void)offset;
        return a->cb(line, len, truncated, a->userdata);
}

/* record_for_each_line_at() without offsets. */
int record_for_each_line(int fd, size_t max_line, record_line_cb cb, void *userdata) {
        LineAdapter a = { .cb = cb, .userdata = userdata };

        return record_for_each_line_at(fd, max_line, cb ? record_line_adapter : NULL, &a);
}
int record_pread_full(int fd, char *buf, size_t n, uint64_t off, size_t *ret) {
        size_t got = 0;

        while (got < n) {
                ssize_t k = record_pread(fd, buf + got, n - got, off + got);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        *ret = got;
        return 0;
}

/* The record's "timestamp" string as msec, 0 when absent or unparseable. */
msec_t record_timestamp(json_object *obj) {
        json_object *v;
        msec_t t;

        if (!json_object_object_get_ex(obj, "timestamp", &v) ||
            !json_object_is_type(v, json_type_string))
                return 0;
        if (js_date_parse(json_object_get_string(v), &t) < 0)
                return 0;
        return t;
}

/* A string member's value (span from json_capture()) decoded as JSON.parse would: 1 with
 * *ret a new string (cut at a NUL like strndup), 0 when absent or not a string, or -ENOMEM. */
int record_span_string(const JsonSpan *sp, char **ret) {
        json_object *o = NULL;
        int r;

        *ret = NULL;
        if (!sp->s || sp->n < 2 || sp->s[0] != '"')
                return 0;
        if (!memchr(sp->s, '\\', sp->n)) {
                /* no escapes: only invalid UTF-8 could change the bytes */
                bool ascii = true;
                for (size_t i = 1; i + 1 < sp->n && ascii; i++)
                        ascii = (unsigned char)sp->s[i] < 0x80;
                if (ascii) {
                        *ret = strndup(sp->s + 1, sp->n - 2);
                        return *ret ? 1 : -ENOMEM;
                }
        }
        r = json_parse(sp->s, sp->n, &o);
        if (r < 0)
                return r == -ENOMEM ? r : 0; /* cannot happen on a validated span */
        if (!json_object_is_type(o, json_type_string)) {
                json_object_put(o);
                return 0;
        }
        *ret = strndup(json_object_get_string(o), (size_t)json_object_get_string_len(o));
        json_object_put(o);
        return *ret ? 1 : -ENOMEM;
}

/* record_timestamp() of a "timestamp" member span. */
int record_span_timestamp(const JsonSpan *sp, msec_t *ret) {
        _cleanup_free_ char *v = NULL;
        msec_t t;
        int r;

        *ret = 0;
        if (sp->s && sp->n >= 2 && sp->n < 64 && sp->s[0] == '"' && !memchr(sp->s, '\\', sp->n)) {
                /* the usual short ASCII string: no copy on the heap */
                char buf[64];
                bool ascii = true;

                for (size_t i = 1; i + 1 < sp->n && ascii; i++)
                        ascii = (unsigned char)sp->s[i] < 0x80;
                if (ascii) {
                        memcpy(buf, sp->s + 1, sp->n - 2);
                        buf[sp->n - 2] = '\0';
                        /* cut at a NUL like strndup */
                        if (js_date_parse(buf, &t) >= 0)
                                *ret = t;
                        return 0;
                }
        }
        r = record_span_string(sp, &v);
        if (r <= 0)
                return r;
        if (js_date_parse(v, &t) >= 0)
                *ret = t;
        return 0;
}
