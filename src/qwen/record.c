/* record.c: reading Qwen transcripts (JSONL), bounded and tolerant, by pread on an fd the
 * caller opened: one line parsed as Qwen's parseLineTolerant() does, every line of a file
 * streamed, the first record (readFirstMaintainableRecord()), and the last activity and title
 * (readSessionTitleInfoFromFile()) with both ends read in as few preads as possible.
 *
 * Qwen decodes bytes as UTF-8, trims each line with String.prototype.trim() and hands it to
 * JSON.parse(); a line that fails is split into balanced top-level {...} fragments
 * (jsonl-utils.ts). json-c alone is more lenient than JSON.parse, so lines go through json.h's
 * grammar. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs.h"
#include "js.h"
#include "macro.h"
#include "record.h"
#include "utf8.h"
#include "vec.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define RECORD_HAVE_AVX2 1 /* AVX2 loops, used when the CPU has it */
#endif

#define RECORD_READ_CHUNK (1024 * 1024)
#define RECORD_HEAD_CHUNK (64 * 1024) /* readFirstMaintainableRecord reads 64 KiB at a time */
#define RECORD_HEAD_QUICK 4096 /* first look: a first record rarely needs more */
#define RECORD_TAIL_SMALL 4096 /* last activity without the title: a last line rarely needs more */
#define RECORD_NOTITLE_ONE_READ (16 * 1024) /* up to this size one read is cheaper than two */
#define RECORD_TITLE_MARK "\"subtype\":\"custom_title\""

/* Up to n bytes at off (fewer only at the end of the file); *ret the count. 0 or -errno. */
static int record_read_at(int fd, char *buf, size_t n, uint64_t off, size_t *ret) {
        ssize_t k = fs_pread_full(fd, buf, n, (off_t)off);

        if (k < 0)
                return (int)k;
        *ret = (size_t)k;
        return 0;
}

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

                k = fs_pread_full(fd, buf + len, cap - len, (off_t)off);
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

int record_read_exact(int fd, uint64_t size, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t got = 0;
        int r;

        *ret = NULL;
        if (size >= SIZE_MAX)
                return -EFBIG;
        text = malloc((size_t)size + 1);
        if (!text)
                return -ENOMEM;
        r = record_read_at(fd, text, (size_t)size + 1, 0, &got);
        if (r < 0)
                return r;
        if (got != size)
                return 0;
        text[size] = '\0';
        *ret = TAKE_PTR(text);
        return 0;
}

/* The record's "timestamp" string as msec, 0 when absent or unparseable. */
static msec_t record_timestamp(json_object *obj) {
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
static int record_span_string(const JsonSpan *sp, char **ret) {
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
static int record_span_timestamp(const JsonSpan *sp, msec_t *ret) {
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

/* ------------------------------------------------------------------ the first record */

void record_head_info_done(HeadInfo *h) {
        if (!h)
                return;
        free(h->session_id);
        free(h->cwd);
        *h = (HeadInfo){};
}

static char *record_get_string(json_object *obj, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return strndup(json_object_get_string(v), (size_t)json_object_get_string_len(v));
}

static bool record_has_string(json_object *obj, const char *key) {
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string);
}

static int record_take_first(json_object *obj, void *userdata) {
        json_object **first = userdata;

        if (!*first)
                *first = json_object_get(obj);
        return 0;
}

/* Whether the pending line would count as "starts with {" or blank after trimStart(). */
static bool record_head_prefix_is_record(const char *s, size_t n) {
        const char *p = s;
        size_t len = n, k;

        while ((k = js_space_at((const unsigned char *)p, len)) > 0) {
                p += k;
                len -= k;
        }
        return len == 0 || *p == '{';
}

static int record_head_fill(json_object *first, HeadInfo *ret) {
        HeadInfo h = {};

        if (record_has_string(first, "sessionId")) {
                h.session_id = record_get_string(first, "sessionId");
                if (!h.session_id)
                        return -ENOMEM;
        }
        if (record_has_string(first, "cwd")) {
                h.cwd = record_get_string(first, "cwd");
                if (!h.cwd) {
                        record_head_info_done(&h);
                        return -ENOMEM;
                }
        }
        h.timestamp = record_timestamp(first);
        *ret = h;
        return 0;
}

/* Parse complete lines in buf[0..*len) and keep the partial rest; stops at the first object. */
static int record_head_lines(char *buf, size_t *len, json_object **first) {
        size_t pos = 0;
        char *nl;
        int r;

        while (!*first && (nl = memchr(buf + pos, '\n', *len - pos))) {
                r = record_parse_line(buf + pos, (size_t)(nl - (buf + pos)), record_take_first,
                                      first);
                if (r < 0)
                        return r;
                pos = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + pos, *len - pos);
        *len -= pos;
        return 0;
}

/* One head line without building it: when the trimmed line is one valid JSON object (what
 * JSON.parse accepts), fill *ret from its members and return 1; 0 when the line needs the
 * tolerant parser; -ENOMEM. */
static int record_head_line_quick(const char *line, size_t len, HeadInfo *ret) {
        static const char *const keys[] = { "sessionId", "cwd", "timestamp" };
        JsonSpan spans[ELEMENTSOF(keys)];
        HeadInfo h = {};
        int r;

        js_trim(&line, &len);
        if (len == 0 || *line != '{')
                return 0;
        if (json_members(line, len, /* validate= */ true, keys, ELEMENTSOF(keys), spans) < 0)
                return 0;
        if ((r = record_span_string(&spans[0], &h.session_id)) < 0 ||
            (r = record_span_string(&spans[1], &h.cwd)) < 0 ||
            (r = record_span_timestamp(&spans[2], &h.timestamp)) < 0) {
                record_head_info_done(&h);
                return r;
        }
        *ret = h;
        return 1;
}

/* The common case of record_read_head(): the first record is on a complete line of buf[0..k),
 * the file's first k bytes. Lines are taken in order exactly as the full reader takes them.
 * Returns 1 when decided (*ret filled), 0 when the full reader must decide, or -ENOMEM. */
static int record_head_in_buf(const char *buf, size_t k, HeadInfo *ret) {
        const char *p = buf, *end = buf + k, *nl;
        json_object *first = NULL;
        int r;

        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
                r = record_head_line_quick(p, (size_t)(nl - p), ret);
                if (r != 0)
                        return r;
                r = record_parse_line(p, (size_t)(nl - p), record_take_first, &first);
                if (r < 0)
                        return r;
                if (first) {
                        r = record_head_fill(first, ret);
                        json_object_put(first);
                        return r < 0 ? r : 1;
                }
                p = nl + 1;
        }
        return 0;
}

/* readFirstMaintainableRecord(): read 64 KiB at a time; lines are trimmed and parsed tolerantly
 * until one yields an object; a pending line without newline longer than 1 Mi UTF-16 units
 * stops the read. */
static int record_read_head_full(int fd, HeadInfo *ret, const char **ret_why) {
        _cleanup_free_ char *buf = NULL;
        json_object *first = NULL;
        const size_t max_cap = 4 * RECORD_HEAD_MAX + RECORD_HEAD_CHUNK;
        size_t len = 0, cap = 2 * RECORD_HEAD_CHUNK;
        uint64_t off = 0;
        bool saw_content = false;
        const char *why = NULL;
        int r;

        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t k;
                size_t held;

                if (cap - len < RECORD_HEAD_CHUNK) {
                        /* a long pending line: grow towards the most 1 Mi UTF-16 units can take */
                        size_t ncap = MIN(cap * 2, max_cap);
                        char *nb;

                        if (ncap - len < RECORD_HEAD_CHUNK) {
                                why = "first line longer than 1 MiB";
                                r = -E2BIG;
                                goto finish;
                        }
                        nb = realloc(buf, ncap);
                        if (!nb) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        buf = nb;
                        cap = ncap;
                }
                k = fs_pread_full(fd, buf + len, RECORD_HEAD_CHUNK, (off_t)off);

                if (k < 0) {
                        why = "cannot read the first record";
                        r = (int)k;
                        goto finish;
                }
                if (k == 0) {
                        /* EOF: the last line without newline counts too. */
                        if (len > 0) {
                                r = record_parse_line(buf, len, record_take_first, &first);
                                if (r < 0)
                                        goto finish;
                        }
                        break;
                }
                off += (uint64_t)k;
                for (ssize_t i = 0; i < k && !saw_content; i++)
                        if (!strchr(" \t\r\n", buf[len + (size_t)i]))
                                saw_content = true;
                len += (size_t)k;

                /* units <= bytes, so only a pending line over 1 MiB of bytes needs counting */
                if (len > RECORD_HEAD_MAX && !memchr(buf, '\n', len) &&
                    utf8_utf16_units(buf, len, &held) > RECORD_HEAD_MAX) {
                        if (record_head_prefix_is_record(buf, len)) {
                                why = "first line longer than 1 MiB";
                                r = -E2BIG;
                        } else {
                                why = "no JSON object in the first line";
                                r = -EBADMSG;
                        }
                        goto finish;
                }
                r = record_head_lines(buf, &len, &first);
                if (r < 0)
                        goto finish;
                if (first)
                        break;
        }

        if (!first) {
                if (off == 0 || !saw_content) {
                        why = "empty transcript";
                        r = -ENODATA;
                } else {
                        why = "no JSON object in the first line";
                        r = -EBADMSG;
                }
                goto finish;
        }
        r = record_head_fill(first, ret);
        if (r < 0)
                why = "out of memory";
finish:
        json_object_put(first);
        if (r < 0 && ret_why)
                *ret_why = why ? why : "cannot parse the first record";
        return r < 0 ? r : 0;
}

/* record_head_in_buf() on the first RECORD_HEAD_QUICK bytes, else the full reader. */
static int record_read_head_from(int fd, char *buf, size_t k, HeadInfo *ret, const char **ret_why) {
        int r = record_head_in_buf(buf, k, ret);

        if (r == 0)
                return record_read_head_full(fd, ret, ret_why);
        if (r < 0 && ret_why)
                *ret_why = "out of memory";
        return r < 0 ? r : 0;
}

int record_read_head(int fd, HeadInfo *ret, const char **ret_why) {
        char buf[RECORD_HEAD_QUICK];
        ssize_t k;

        assert(ret);
        k = fs_pread_full(fd, buf, sizeof(buf), (off_t)0);
        return record_read_head_from(fd, buf, k > 0 ? (size_t)k : 0, ret, ret_why);
}

/* ------------------------------------------------------------------ the last activity and title */

void record_tail_info_done(TailInfo *t) {
        if (!t)
                return;
        free(t->title);
        *t = (TailInfo){};
}

typedef struct TailScan {
        msec_t last_timestamp;
} TailScan;

static int record_tail_object(json_object *obj, void *userdata) {
        TailScan *s = userdata;
        msec_t t = record_timestamp(obj);

        if (t != 0)
                s->last_timestamp = t;
        return 0;
}

/* The last parseable "timestamp" among the records of one line, 0 if none. A line that is one
 * valid JSON object is read without building it; anything else goes through the tolerant
 * parser. */
static int record_tail_line_time(const char *line, size_t len, msec_t *ret) {
        static const char *const keys[] = { "timestamp" };
        JsonSpan span;
        TailScan s = {};
        const char *p = line;
        size_t n = len;
        int r;

        *ret = 0;
        js_trim(&p, &n);
        if (n == 0)
                return 0;
        if (*p == '{' && json_members(p, n, /* validate= */ true, keys, 1, &span) >= 0)
                return record_span_timestamp(&span, ret);
        r = record_parse_line(line, len, record_tail_object, &s);
        if (r < 0)
                return r;
        *ret = s.last_timestamp;
        return 0;
}

/* The timestamp of the last record in the lines of buf[0..n) (split at '\n', the last one
 * without): the lines are looked at from the end until one has a record with a timestamp. */
static int record_tail_times(const char *buf, size_t n, TailScan *s) {
        const char *e = buf + n;

        for (;;) {
                const char *nl = memrchr(buf, '\n', (size_t)(e - buf));
                const char *b = nl ? nl + 1 : buf;
                msec_t t;
                int r;

                r = record_tail_line_time(b, (size_t)(e - b), &t);
                if (r < 0)
                        return r;
                if (t != 0) {
                        s->last_timestamp = t;
                        return 0;
                }
                if (!nl)
                        return 0;
                e = nl;
        }
}

typedef struct TitleMatch {
        size_t key, value, value_end, next;
} TitleMatch;


/* The first of the n candidate starts at text where needle (m bytes) is. */
static const char *record_memmem_check(const char *text, size_t n, const char *needle, size_t m,
                                       size_t a) {
        for (size_t k = 0; k < n; k++)
                if (text[k + a] == needle[a] && memcmp(text + k, needle, m) == 0)
                        return text + k;
        return NULL;
}

#ifdef RECORD_HAVE_AVX2
/* The AVX2 form of record_memmem()'s block loop: 64 positions at a time, one vptest per block. */
__attribute__((target("avx2"))) static const char *record_memmem_avx2(const char *text, size_t n,
                                                                      const char *needle,
                                                                      size_t m, size_t a,
                                                                      size_t b, size_t c) {
        const __m256i va = _mm256_set1_epi8(needle[a]), vb = _mm256_set1_epi8(needle[b]),
                      vc = _mm256_set1_epi8(needle[c]);
        size_t i = 0;

        /* candidate starts are 0..n-m; a block reads up to text[i + c + 63] < text[n] */
        for (; i + 64 <= n - m + 1; i += 64) {
                const char *t = text + i;
                __m256i x0, x1, any;
                const char *hit;

                x0 = _mm256_and_si256(
                        _mm256_and_si256(
                                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(t + a)), va),
                                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(t + b)), vb)),
                        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(t + c)), vc));
                x1 = _mm256_and_si256(
                        _mm256_and_si256(
                                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(t + 32 + a)), va),
                                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(t + 32 + b)), vb)),
                        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(t + 32 + c)), vc));
                any = _mm256_or_si256(x0, x1);
                if (__builtin_expect(_mm256_testz_si256(any, any), 1))
                        continue;
                hit = record_memmem_check(t, 64, needle, m, a);
                if (hit)
                        return hit;
        }
        return record_memmem_check(text + i, n - m + 1 - i, needle, m, a);
}
#endif

/* record_memmem() without the AVX2 path (tests compare both with memmem()). */
static const char *record_memmem_portable(const char *text, size_t n, const char *needle,
                                          size_t m) {
        size_t a, b, c, i = 0;
        Vec16 va, vb, vc;

        if (m < 4 || n < m)
                return m <= n ? memmem(text, n, needle, m) : NULL;
        a = needle[0] == '"' ? 1 : 0;
        c = needle[m - 1] == '"' ? m - 2 : m - 1;
        b = (a + c) / 2;
        va = vec_splat16(needle[a]);
        vb = vec_splat16(needle[b]);
        vc = vec_splat16(needle[c]);
        /* candidate starts are 0..n-m; a block reads up to text[i + c + 31] < text[n] */
        for (; i + 32 <= n - m + 1; i += 32) {
                Vec2x64 any;
                const char *hit;

                any = (Vec2x64)(((vec_load16(text + i + a) == va) &
                                       (vec_load16(text + i + b) == vb) &
                                       (vec_load16(text + i + c) == vc)) |
                                      ((vec_load16(text + i + 16 + a) == va) &
                                       (vec_load16(text + i + 16 + b) == vb) &
                                       (vec_load16(text + i + 16 + c) == vc)));
                if (__builtin_expect(!(any[0] | any[1]), 1))
                        continue;
                hit = record_memmem_check(text + i, 32, needle, m, a);
                if (hit)
                        return hit;
        }
        return record_memmem_check(text + i, n - m + 1 - i, needle, m, a);
}

/* memmem() for scans of large texts: 32 positions at a time (64 with AVX2), comparing three bytes
 * of the needle (first, middle and last, quotes excluded) before the whole of it. */
static const char *record_memmem(const char *text, size_t n, const char *needle, size_t m) {
#ifdef RECORD_HAVE_AVX2
        if (m >= 4 && n >= m && __builtin_cpu_supports("avx2")) {
                size_t a = needle[0] == '"' ? 1 : 0, c = needle[m - 1] == '"' ? m - 2 : m - 1;
                return record_memmem_avx2(text, n, needle, m, a, (a + c) / 2, c);
        }
#endif
        return record_memmem_portable(text, n, needle, m);
}

static const char *record_memmem_from(const char *text, size_t n, size_t from, const char *needle) {
        return from > n ? NULL : record_memmem(text + from, n - from, needle, strlen(needle));
}

/* findNextJsonStringField(): "key" [ \t]* : [ \t]* "value" with the value on one line. */
static bool record_title_find(const char *text, size_t n, const char *quoted_key, size_t from,
                              TitleMatch *ret) {
        const char *k = record_memmem_from(text, n, from, quoted_key);

        while (k) {
                size_t key = (size_t)(k - text), i = key + strlen(quoted_key), v;
                bool retry = false;

                while (i < n && (text[i] == ' ' || text[i] == '\t'))
                        i++;
                if (i >= n || text[i] != ':') {
                        k = record_memmem_from(text, n, key + 1, quoted_key);
                        continue;
                }
                i++;
                while (i < n && (text[i] == ' ' || text[i] == '\t'))
                        i++;
                if (i >= n || text[i] != '"') {
                        k = record_memmem_from(text, n, key + 1, quoted_key);
                        continue;
                }
                for (v = i + 1; v < n; v++) {
                        if (text[v] == '\n' || text[v] == '\r') {
                                retry = true;
                                break;
                        }
                        if (text[v] == '\\') {
                                if (v + 1 >= n || text[v + 1] == '\n' || text[v + 1] == '\r') {
                                        retry = true;
                                        break;
                                }
                                v++;
                                continue;
                        }
                        if (text[v] == '"') {
                                *ret = (TitleMatch){ key, i + 1, v, v + 1 };
                                return true;
                        }
                }
                if (!retry)
                        return false; /* the value runs to the end of the text */
                k = record_memmem_from(text, n, key + 1, quoted_key);
        }
        return false;
}

/* unescapeJsonString(): JSON-decode the raw value when it has escapes, else (or when that
 * fails) keep it; as a JavaScript string, invalid UTF-8 reads as U+FFFD. */
static char *record_title_unescape(const char *raw, size_t n) {
        _cleanup_free_ char *quoted = NULL;
        json_object *o = NULL;
        char *r;

        if (memchr(raw, '\\', n)) {
                quoted = malloc(n + 2);
                if (!quoted)
                        return NULL;
                quoted[0] = '"';
                memcpy(quoted + 1, raw, n);
                quoted[n + 1] = '"';
                if (json_parse(quoted, n + 2, &o) >= 0 && json_object_is_type(o, json_type_string)) {
                        r = strndup(json_object_get_string(o), (size_t)json_object_get_string_len(o));
                        json_object_put(o);
                        return r;
                }
                json_object_put(o);
        }
        return utf8_node_normalize(raw, n, NULL);
}

/* extractLastJsonStringFields(text, "customTitle", ["titleSource"], '"subtype":"custom_title"'):
 * the last customTitle value on a line carrying the marker, and the first titleSource of that
 * line. Returns 1 with *ret_title set (possibly ""), 0 when there is none, or -ENOMEM. */
static int record_title_scan(const char *text, size_t n, char **ret_title, TitleSource *ret_source) {
        TitleMatch m, best = {}, src;
        bool found = false;
        size_t from = 0, line_start = 0, line_end = 0;
        char *title;

        while (record_title_find(text, n, "\"customTitle\"", from, &m)) {
                const char *eol = memchr(text + m.key, '\n', n - m.key);
                size_t ls = m.key, le = eol ? (size_t)(eol - text) : n;

                from = m.next;
                while (ls > 0 && text[ls - 1] != '\n')
                        ls--;
                if (!record_memmem(text + ls, le - ls, RECORD_TITLE_MARK, strlen(RECORD_TITLE_MARK)))
                        continue;
                best = m;
                line_start = ls;
                line_end = le;
                found = true;
        }
        if (!found)
                return 0;
        title = record_title_unescape(text + best.value, best.value_end - best.value);
        if (!title)
                return -ENOMEM;
        *ret_source = TITLE_MANUAL; /* absent or unknown: legacy, a person's */
        if (record_title_find(text + line_start, line_end - line_start, "\"titleSource\"", 0, &src)) {
                _cleanup_free_ char *v = record_title_unescape(text + line_start + src.value,
                                                               src.value_end - src.value);
                if (!v) {
                        free(title);
                        return -ENOMEM;
                }
                if (streq(v, "auto"))
                        *ret_source = TITLE_AUTO;
        }
        *ret_title = title;
        return 1;
}

/* The tail window buf[0..got), the file's bytes from offset start: the last activity from its
 * complete lines (a partial first line skipped when start > 0), whether the file ends mid-line, and
 * the title as Qwen's readSessionTitleInfoFromFile() finds it in the whole window. Returns 1 with
 * *ret_title set, 0 without a title, or -ENOMEM. */
/* record_tail_times() of a window buf[0..got) read from offset start: its first line counts
 * only when the window starts the file (else it is a cut line). */
static int record_window_times(const char *buf, size_t got, uint64_t start, TailScan *s) {
        const char *p = buf;

        if (start > 0) {
                const char *nl = memchr(buf, '\n', got);
                p = nl ? nl + 1 : buf + got;
        }
        return record_tail_times(p, got - (size_t)(p - buf), s);
}

static int record_tail_window(const char *buf, size_t got, uint64_t start, TailInfo *ret,
                              char **ret_title, TitleSource *ret_source) {
        TailScan s = {};
        int r;

        r = record_window_times(buf, got, start, &s);
        if (r < 0)
                return r;
        ret->last_timestamp = s.last_timestamp;
        ret->incomplete = got == 0 || buf[got - 1] != '\n';
        return record_title_scan(buf, got, ret_title, ret_source);
}

/* The title of the head window buf[0..got) (the file's first bytes): its complete lines only. */
static int record_head_window_title(const char *buf, size_t got, char **ret_title,
                                    TitleSource *ret_source) {
        const char *nl = got > 0 ? memrchr(buf, '\n', got) : NULL;

        return record_title_scan(buf, nl ? (size_t)(nl - buf) + 1 : 0, ret_title, ret_source);
}

/* An empty title is no title (and, found in the tail, hides any in the head). */
static void record_tail_take_title(TailInfo *ret, char **title, TitleSource source) {
        if (*title && **title) {
                ret->title = TAKE_PTR(*title);
                ret->title_source = source;
        }
}

/* record_read_at() for the first read of record_read_ends(), tried first without waiting for
 * the disk (preadv2() with RWF_NOWAIT): *blocked is set when the page cache did not hold the
 * range (EAGAIN, or a short read that a blocking read continued). The bytes read are the same. */
static int record_pread_first(int fd, char *buf, size_t n, uint64_t off, size_t *ret,
                              bool *blocked) {
#ifdef RWF_NOWAIT
        /* where the filesystem does not take it (EOPNOTSUPP: tmpfs, a memfd), the blocking read
         * follows: not remembered, since the files of one scan are not all on one filesystem */
        if (n > 0) {
                struct iovec iov = { .iov_base = buf, .iov_len = n };
                ssize_t k = preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
                size_t more = 0;
                int r;

                if (k >= 0) {
                        if ((size_t)k == n || k == 0) {
                                /* all of it, or the end of the file (0 is never EAGAIN) */
                                *ret = (size_t)k;
                                return 0;
                        }
                        /* a part was cached: the rest with a blocking read */
                        r = record_read_at(fd, buf + k, n - (size_t)k, off + (uint64_t)k, &more);
                        if (r < 0)
                                return r;
                        *blocked = more > 0;
                        *ret = (size_t)k + more;
                        return 0;
                }
                if (errno == EAGAIN)
                        *blocked = true;
        }
#else
        (void)blocked;
#endif
        return record_read_at(fd, buf, n, off, ret);
}

/* record_read_ends() without the title: the last activity from a small tail window when one of
 * its complete lines has a timestamp (the full window's search would stop at the same line), else
 * from the full window; the head from RECORD_HEAD_QUICK bytes. A file of at most
 * RECORD_NOTITLE_ONE_READ bytes is read once for both. */
static int record_read_ends_notitle(int fd, uint64_t size, char *scratch, RecordEnds *ret) {
        char *head = scratch, *tail = scratch + RECORD_TAIL_WINDOW;
        uint64_t start;
        size_t hgot = 0, got = 0, n;
        TailScan ts = {};
        int r;

        if (size <= RECORD_NOTITLE_ONE_READ) {
                r = record_pread_first(fd, head, (size_t)size, 0, &hgot, &ret->blocked);
                if (r >= 0)
                        r = record_tail_times(head, hgot, &ts);
                if (r < 0)
                        ret->tail_r = r;
                else {
                        ret->tail.last_timestamp = ts.last_timestamp;
                        ret->tail.incomplete = hgot == 0 || head[hgot - 1] != '\n';
                        ret->tail_r = 0;
                }
                ret->head_r = r >= 0 ? record_read_head_from(fd, head, hgot, &ret->head, &ret->head_why)
                                     : record_read_head(fd, &ret->head, &ret->head_why);
                return ret->head_r == -ENOMEM || ret->tail_r == -ENOMEM ? -ENOMEM : 0;
        }

        n = RECORD_TAIL_SMALL;
        start = size - n;
        r = record_pread_first(fd, tail, n, start, &got, &ret->blocked);
        if (r >= 0)
                r = record_window_times(tail, got, start, &ts);
        if (r >= 0 && ts.last_timestamp == 0 && size > RECORD_TAIL_SMALL) {
                /* no complete line of the small window has a timestamp: the full window */
                start = size > RECORD_TAIL_WINDOW ? size - RECORD_TAIL_WINDOW : 0;
                r = record_read_at(fd, tail, (size_t)(size - start), start, &got);
                if (r >= 0)
                        r = record_window_times(tail, got, start, &ts);
        }
        if (r < 0)
                ret->tail_r = r;
        else {
                ret->tail.last_timestamp = ts.last_timestamp;
                ret->tail.incomplete = got == 0 || tail[got - 1] != '\n';
                ret->tail_r = 0;
        }
        ret->head_r = record_read_head(fd, &ret->head, &ret->head_why);
        return ret->head_r == -ENOMEM || ret->tail_r == -ENOMEM ? -ENOMEM : 0;
}

int record_read_ends(int fd, uint64_t size, bool want_title, char *scratch, RecordEnds *ret) {
        _cleanup_free_ char *title = NULL;
        TitleSource source = TITLE_NONE;
        char *head = scratch, *tail = scratch + RECORD_TAIL_WINDOW;
        size_t hgot = 0, got = 0;
        bool have_head = false;
        int r;

        assert(scratch);
        assert(ret);
        *ret = (RecordEnds){ .tail_r = -ENODATA };
        if (size == 0) {
                /* nothing to read at the end; the head reader says what the file holds now */
                ret->head_r = record_read_head(fd, &ret->head, &ret->head_why);
                return ret->head_r == -ENOMEM ? -ENOMEM : 0;
        }
        if (!want_title)
                return record_read_ends_notitle(fd, size, scratch, ret);
        if (size <= RECORD_TAIL_WINDOW) {
                /* one read for both ends */
                r = record_pread_first(fd, head, (size_t)size, 0, &hgot, &ret->blocked);
                if (r >= 0) {
                        have_head = true;
                        r = record_tail_window(head, hgot, 0, &ret->tail, &title, &source);
                }
        } else {
                uint64_t start = size - RECORD_TAIL_WINDOW;

                r = record_pread_first(fd, tail, RECORD_TAIL_WINDOW, start, &got, &ret->blocked);
                if (r >= 0)
                        r = record_tail_window(tail, got, start, &ret->tail, &title, &source);
                if (r == 0) {
                        /* no title in the tail: the head window, which holds the first record */
                        r = record_read_at(fd, head, RECORD_TAIL_WINDOW, 0, &hgot);
                        if (r >= 0) {
                                have_head = true;
                                r = record_head_window_title(head, hgot, &title, &source);
                        }
                }
        }
        if (r < 0) {
                record_tail_info_done(&ret->tail);
                ret->tail_r = r;
        } else {
                record_tail_take_title(&ret->tail, &title, source);
                ret->tail_r = 0;
        }
        if (have_head)
                ret->head_r = record_read_head_from(fd, head, hgot, &ret->head, &ret->head_why);
        else
                ret->head_r = record_read_head(fd, &ret->head, &ret->head_why);
        return ret->head_r == -ENOMEM || ret->tail_r == -ENOMEM ? -ENOMEM : 0;
}

/* One range of record_ends_advise(). */
static int record_advise_range(int fd, uint64_t off, uint64_t len) {
        int r = posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
        return -r;
}

int record_ends_advise(int fd, uint64_t size, bool want_title) {
        uint64_t one = want_title ? RECORD_TAIL_WINDOW : RECORD_NOTITLE_ONE_READ;
        uint64_t tail = want_title ? RECORD_TAIL_WINDOW : RECORD_TAIL_SMALL;
        uint64_t head = want_title ? RECORD_TAIL_WINDOW : RECORD_HEAD_QUICK;
        uint64_t first = size <= one ? 0 : size - tail;
        int r = 0;

        if (size == 0)
                return 1;
#ifdef RWF_NOWAIT
        {
                /* whether the page cache holds the start of the first read */
                char c;
                struct iovec iov = { .iov_base = &c, .iov_len = 1 };

                if (preadv2(fd, &iov, 1, (off_t)first, RWF_NOWAIT) == 1)
                        return 1;
        }
#endif
        /* what record_read_ends() reads first, then the head it reads after a large tail (the
         * fallbacks, a full tail window without the title or a long first line, are not) */
        if (size <= one)
                return record_advise_range(fd, 0, size);
        r = record_advise_range(fd, first, size - first);
        if (r >= 0)
                r = record_advise_range(fd, 0, MIN(head, first));
        return r < 0 ? r : 0;
}
