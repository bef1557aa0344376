/* json.c: ECMAScript's JSON.parse grammar (json.h), one walk with three sinks: json_parse() builds
 * json-c objects exactly when JSON.parse would accept the text (json-c alone is more lenient: NaN,
 * single quotes, raw control characters, clamped integers); json_capture() and json_members()
 * record the text spans of wanted members, json_elements() the offsets of a container's elements,
 * without building anything and checking the grammar only when asked. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "macro.h"
#include "utf8.h"
#include "util.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define JSON_HAVE_AVX2 1 /* AVX2 loops, used when the CPU has it */
#endif

/* json_string() and json_container() are inlined into each caller: each sink gets a copy of the
 * walk without the other sinks' branches (the scan is the hot path of the line readers). */
#define _always_inline_ inline __attribute__((always_inline))

typedef struct JsonWalk {
        const char *p, *end;
        unsigned depth;
        bool validate;  /* check the grammar (always, when building) */
        StrBuf scratch; /* a decoded string or a number's text */
} JsonWalk;

/* json_capture()'s sink for one object: the wanted keys and their lengths */
typedef struct JsonKeys {
        const JsonCapture *cap;
        size_t lens[32];
        uint64_t len_mask; /* bit n: a wanted key of n < 64 bytes */
} JsonKeys;

/* json_elements()'s sink: the elements of one container */
typedef struct JsonElems {
        const char *base;
        JsonElem *e;
        size_t n, alloc;
} JsonElems;

static int json_value(JsonWalk *j, json_object **ret);
static int json_capture_object(JsonWalk *j, const JsonCapture *cap);

static inline void json_ws(JsonWalk *j) {
        /* the common case: no whitespace (every structural character is above ' ') */
        if (j->p < j->end && (unsigned char)*j->p > ' ')
                return;
        while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
                j->p++;
}

/* Does any byte of the 8-byte word need a look: '"', '\\' or a control character? */
static inline uint64_t json_word_special(uint64_t x) {
        const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
        uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

        /* the lowest flagged byte is exact (borrows only flag bytes above a real hit) */
        return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
}

#ifdef JSON_HAVE_AVX2
/* The first byte of [p, end) that is '"', '\\' or a control character, 32 bytes at a time; a
 * pointer less than 32 bytes before end when there is none before that. */
__attribute__((target("avx2"))) static const char *json_skip_plain_avx2(const char *p,
                                                                          const char *end) {
        const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\'),
                      space = _mm256_set1_epi8(0x20);

        for (; end - p >= 32; p += 32) {
                __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
                /* unsigned x < 0x20 <=> max(x, 0x20) != x */
                __m256i ctl = _mm256_xor_si256(_mm256_max_epu8(x, space), x);
                __m256i hit = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, quote),
                                                              _mm256_cmpeq_epi8(x, bslash)),
                                              _mm256_xor_si256(_mm256_cmpeq_epi8(ctl, _mm256_setzero_si256()),
                                                               _mm256_set1_epi8(-1)));
                unsigned m = (unsigned)_mm256_movemask_epi8(hit);
                if (m)
                        return p + __builtin_ctz(m);
        }
        return p;
}
#endif

/* Past the plain bytes at p: to the first '"', '\\' or control character, or to a few bytes
 * before end (the caller looks at those one at a time). */
static inline const char *json_skip_plain(const char *p, const char *end) {
#ifdef JSON_HAVE_AVX2
        /* long runs of plain bytes (message text) 32 at a time */
        if (end - p >= 64 && __builtin_cpu_supports("avx2"))
                p = json_skip_plain_avx2(p, end);
#endif
        /* eight plain bytes at a time */
        while (end - p >= 8) {
                uint64_t w, m;

                memcpy(&w, p, 8);
                m = json_word_special(w);
                if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                        p += __builtin_ctzll(m) / 8; /* to the first special byte */
#endif
                        break;
                }
                p += 8;
        }
        return p;
}

/* Append the unescaped bytes s[0..n) of a string as Node decodes them: each ill-formed UTF-8
 * subpart becomes U+FFFD. */
static int json_put_plain(StrBuf *b, const char *s, size_t n) {
        const char *end = s + n;

        while (s < end) {
                const char *run = s;
                uint32_t cp;
                size_t k;

                while (end - s >= 8) { /* eight ASCII bytes at a time */
                        uint64_t w;

                        memcpy(&w, s, 8);
                        if (w & UINT64_C(0x8080808080808080))
                                break;
                        s += 8;
                }
                while (s < end && (unsigned char)*s < 0x80)
                        s++;
                if (s > run && strbuf_append(b, run, (size_t)(s - run)) < 0)
                        return -ENOMEM;
                if (s >= end)
                        return 0;
                k = utf8_decode(s, (size_t)(end - s), &cp);
                if (strbuf_append(b, k ? s : "\xef\xbf\xbd", k ? k : 3) < 0)
                        return -ENOMEM;
                s += k ? k : utf8_next(s, (size_t)(end - s), &cp);
        }
        return 0;
}

/* Four hex digits at p (before end) as a number. */
static int json_hex4(const char *p, const char *end, uint32_t *ret) {
        uint32_t v = 0;

        if (end - p < 4)
                return -EBADMSG;
        for (int i = 0; i < 4; i++) {
                char c = p[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t)(c - 'A' + 10);
                else
                        return -EBADMSG;
        }
        *ret = v;
        return 0;
}

/* The escape at j->p (its backslash): checked with j->validate (without, only its first two
 * bytes are skipped: a \u's digits are plain bytes), its character appended to out when set.
 * A \u pair of surrogates is one code point; a lone surrogate becomes U+FFFD, as Node does when
 * the string is later encoded. */
static int json_escape(JsonWalk *j, StrBuf *out) {
        static const char unescape[256] = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
                                            ['f'] = '\f', ['n'] = '\n',  ['r'] = '\r', ['t'] = '\t' };
        uint32_t cp, lo;
        char u[4];

        if (j->end - j->p < 2)
                return -EBADMSG;
        j->p += 2;
        if (!j->validate)
                return 0;
        if (j->p[-1] != 'u') {
                char c = unescape[(unsigned char)j->p[-1]];

                if (!c)
                        return -EBADMSG;
                return out && strbuf_append(out, &c, 1) < 0 ? -ENOMEM : 0;
        }
        if (json_hex4(j->p, j->end, &cp) < 0)
                return -EBADMSG;
        j->p += 4;
        if (!out)
                return 0;
        if (cp >= 0xdc00 && cp <= 0xdfff)
                cp = UTF8_REPLACEMENT;
        else if (cp >= 0xd800 && cp <= 0xdbff) {
                if (j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' &&
                    json_hex4(j->p + 2, j->end, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
                        j->p += 6;
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                } else
                        cp = UTF8_REPLACEMENT;
        }
        return strbuf_append(out, u, utf8_encode(cp, u)) < 0 ? -ENOMEM : 0;
}

/* The string at j->p (its opening quote), to past its closing quote; with j->validate,
 * JSON.parse's rules for its content. out: its value is appended (json_decode()).
 * *ret_escaped (when set): it has an escape. */
static _always_inline_ int json_string(JsonWalk *j, StrBuf *out, bool *ret_escaped) {
        const char *run = ++j->p;
        bool escaped = false;
        int r;

        while (j->p < j->end) {
                unsigned char c;

                j->p = json_skip_plain(j->p, j->end);
                if (j->p >= j->end)
                        break;
                c = (unsigned char)*j->p;
                if (c != '"' && c != '\\' && (c >= 0x20 || !j->validate)) {
                        j->p++;
                        continue;
                }
                if (out && j->p > run && json_put_plain(out, run, (size_t)(j->p - run)) < 0)
                        return -ENOMEM;
                if (c == '"') {
                        j->p++;
                        if (ret_escaped)
                                *ret_escaped = escaped;
                        return 0;
                }
                if (c != '\\')
                        return -EBADMSG; /* a raw control character */
                escaped = true;
                r = json_escape(j, out);
                if (r < 0)
                        return r;
                run = j->p;
        }
        return -EBADMSG;
}

/* The value of the string at j->p into out (reset; NUL-terminated, even when empty). */
static int json_decode(JsonWalk *j, StrBuf *out) {
        out->len = 0;
        if (strbuf_append(out, "", 0) < 0)
                return -ENOMEM;
        return json_string(j, out, NULL);
}

/* The number at j->p: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; built into *ret when set:
 * small integers stay int64 (exact, and what json-c users expect), the rest is a double rounded
 * as JavaScript does (strtod rounds correctly, overflow gives Infinity). */
static int json_number(JsonWalk *j, json_object **ret) {
        const char *s = j->p, *p = j->p, *end = j->end;
        bool integral = true;

        if (p < end && *p == '-')
                p++;
        if (p >= end || *p < '0' || *p > '9')
                return -EBADMSG;
        if (*p == '0')
                p++;
        else
                while (p < end && *p >= '0' && *p <= '9')
                        p++;
        if (p < end && *p == '.') {
                integral = false;
                p++;
                if (p >= end || *p < '0' || *p > '9')
                        return -EBADMSG;
                while (p < end && *p >= '0' && *p <= '9')
                        p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
                integral = false;
                p++;
                if (p < end && (*p == '+' || *p == '-'))
                        p++;
                if (p >= end || *p < '0' || *p > '9')
                        return -EBADMSG;
                while (p < end && *p >= '0' && *p <= '9')
                        p++;
        }
        j->p = p;
        if (!ret)
                return 0;
        j->scratch.len = 0;
        if (strbuf_append(&j->scratch, s, (size_t)(p - s)) < 0)
                return -ENOMEM;
        if (integral && j->scratch.len <= 16)
                *ret = json_object_new_int64(strtoll(j->scratch.buf, NULL, 10));
        else
                *ret = json_object_new_double(strtod(j->scratch.buf, NULL));
        return *ret ? 0 : -ENOMEM;
}

/* The index of the wanted key equal to the key whose text between its quotes is s[0..n), or
 * SIZE_MAX. An escaped key is compared by its value (one that does not decode matches none). */
static size_t json_key_find(JsonWalk *j, const JsonKeys *k, const char *s, size_t n,
                            bool escaped) {
        size_t hit = SIZE_MAX;

        if (escaped) {
                JsonWalk key = { .p = s - 1, .end = s + n + 1, .validate = true };

                if (json_decode(&key, &j->scratch) < 0)
                        return SIZE_MAX;
                s = j->scratch.buf;
                n = j->scratch.len;
        } else if (n < 64 && !(k->len_mask & (UINT64_C(1) << n)))
                return SIZE_MAX;
        for (size_t i = 0; i < k->cap->n_keys; i++)
                if (n == k->lens[i] &&
                    (n == 0 || (s[0] == k->cap->keys[i][0] && memcmp(s, k->cap->keys[i], n) == 0)))
                        hit = i;
        return hit;
}

/* The container at j->p ('{' or '['), to past its closing bracket, through at most one sink:
 * ret (json_parse(): the container built), keys (json_capture(): the spans of the object's
 * wanted members, descending into the captured objects that have a child capture) or rec
 * (json_elements()). */
static _always_inline_ int json_container(JsonWalk *j, const JsonKeys *keys, JsonElems *rec,
                                          json_object **ret) {
        char close = *j->p == '{' ? '}' : ']';
        json_object *c = NULL;
        char *key = NULL;
        int r;

        if (j->depth >= JSON_MAX_DEPTH)
                return -EBADMSG;
        if (ret) {
                c = close == '}' ? json_object_new_object() : json_object_new_array();
                if (!c)
                        return -ENOMEM;
        }
        j->depth++;
        j->p++;
        json_ws(j);
        if (j->p < j->end && *j->p == close)
                goto done;
        for (;;) {
                const char *start = j->p, *key_end = j->p, *value;
                const JsonCapture *child = NULL;
                json_object *v = NULL;
                size_t hit = SIZE_MAX;

                if (close == '}') {
                        bool escaped = false;

                        if (j->p >= j->end || *j->p != '"')
                                goto bad;
                        r = ret ? json_decode(j, &j->scratch) : json_string(j, NULL, &escaped);
                        if (r < 0)
                                goto fail;
                        if (ret && !(key = strdup(j->scratch.buf))) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        key_end = j->p;
                        if (keys) {
                                hit = json_key_find(j, keys, start + 1,
                                                    (size_t)(key_end - 1 - (start + 1)), escaped);
                                if (hit != SIZE_MAX && keys->cap->children)
                                        child = keys->cap->children[hit];
                        }
                        json_ws(j);
                        if (j->p >= j->end || *j->p != ':')
                                goto bad;
                        j->p++;
                        json_ws(j);
                }
                value = j->p;
                if (child && j->p < j->end && *j->p == '{')
                        r = json_capture_object(j, child);
                else {
                        r = json_value(j, ret ? &v : NULL);
                        /* a later duplicate that is not an object hides the earlier one's members */
                        for (size_t i = 0; child && i < child->n_keys; i++)
                                child->spans[i] = (JsonSpan){};
                }
                if (r < 0)
                        goto fail;
                if (hit != SIZE_MAX)
                        keys->cap->spans[hit] = (JsonSpan){ .s = value, .n = (size_t)(j->p - value) };
                if (rec) {
                        r = util_greedy_realloc((void **)&rec->e, &rec->alloc, rec->n + 1,
                                                sizeof(JsonElem));
                        if (r < 0)
                                goto fail;
                        rec->e[rec->n++] = (JsonElem){
                                .start = (size_t)(start - rec->base),
                                .key_end = (size_t)(key_end - rec->base),
                                .value = (size_t)(value - rec->base),
                                .end = (size_t)(j->p - rec->base),
                        };
                }
                if (ret) {
                        /* a repeated key keeps its first position and takes the last value, as in JS */
                        r = close == '}' ? json_object_object_add(c, key, v)
                                         : json_object_array_add(c, v);
                        free(key);
                        key = NULL;
                        if (r < 0) {
                                json_object_put(v);
                                r = -ENOMEM;
                                goto fail;
                        }
                }
                json_ws(j);
                if (j->p < j->end && *j->p == ',') {
                        j->p++;
                        json_ws(j);
                        continue;
                }
                if (j->p < j->end && *j->p == close)
                        break;
                goto bad;
        }
done:
        j->p++;
        j->depth--;
        if (ret)
                *ret = c;
        return 0;
bad:
        r = -EBADMSG;
fail:
        free(key);
        json_object_put(c);
        return r;
}

/* The object at j->p through cap's sink (its spans cleared first). */
static int json_capture_object(JsonWalk *j, const JsonCapture *cap) {
        JsonKeys k = { .cap = cap };

        assert(cap->n_keys <= ELEMENTSOF(k.lens));
        for (size_t i = 0; i < cap->n_keys; i++) {
                cap->spans[i] = (JsonSpan){};
                k.lens[i] = strlen(cap->keys[i]);
                k.len_mask |= k.lens[i] < 64 ? UINT64_C(1) << k.lens[i] : 0;
        }
        return json_container(j, &k, NULL, NULL);
}

/* The value at j->p, built into *ret when set (JSON null is json-c's NULL: *ret untouched). */
static int json_value(JsonWalk *j, json_object **ret) {
        int r;

        if (j->p >= j->end)
                return -EBADMSG;
        switch (*j->p) {
        case '{':
        case '[':
                return json_container(j, NULL, NULL, ret);
        case '"':
                if (!ret)
                        return json_string(j, NULL, NULL);
                r = json_decode(j, &j->scratch);
                if (r < 0)
                        return r;
                *ret = json_object_new_string_len(j->scratch.buf,
                                                  (int)MIN(j->scratch.len, (size_t)INT32_MAX));
                return *ret ? 0 : -ENOMEM;
        case 't':
        case 'f':
        case 'n': {
                const char *w = *j->p == 't' ? "true" : *j->p == 'f' ? "false" : "null";
                size_t n = strlen(w);

                if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
                        return -EBADMSG;
                j->p += n;
                if (!ret || *w == 'n')
                        return 0;
                *ret = json_object_new_boolean(*w == 't');
                return *ret ? 0 : -ENOMEM;
        }
        default:
                return json_number(j, ret);
        }
}

/* JSON.parse(s): the whole text must be one value with optional JSON whitespace around it. */
int json_parse(const char *s, size_t n, json_object **ret) {
        JsonWalk j = { .p = s, .end = s + n, .validate = true };
        json_object *v = NULL;
        int r;

        if (n > INT32_MAX)
                return -E2BIG;
        json_ws(&j);
        r = json_value(&j, &v);
        if (r >= 0) {
                json_ws(&j);
                if (j.p != j.end) {
                        json_object_put(v);
                        r = -EBADMSG;
                }
        }
        strbuf_done(&j.scratch);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

/* Capture member spans of the object text s[0..n) in one pass (see json.h). */
int json_capture(const char *s, size_t n, bool validate, const JsonCapture *cap) {
        JsonWalk j = { .p = s, .end = s + n, .validate = validate };
        int r;

        json_ws(&j);
        if (j.p >= j.end || *j.p != '{')
                return -EBADMSG;
        r = json_capture_object(&j, cap);
        strbuf_done(&j.scratch);
        if (r < 0)
                return r;
        json_ws(&j);
        return j.p == j.end ? 0 : -EBADMSG;
}

/* json_capture() for one level of keys. */
int json_members(const char *s, size_t n, bool validate, const char *const *keys, size_t n_keys,
                 JsonSpan *spans) {
        JsonCapture cap = { .keys = keys, .n_keys = n_keys, .spans = spans };

        return json_capture(s, n, validate, &cap);
}

/* The elements of the container at s[at] (see json.h). */
int json_elements(const char *s, size_t n, size_t at, bool validate, JsonElem **ret,
                  size_t *ret_n, size_t *ret_end) {
        JsonWalk j = { .p = s + at, .end = s + n, .validate = validate };
        JsonElems rec = { .base = s };
        int r;

        if (at >= n || (s[at] != '{' && s[at] != '['))
                return -EBADMSG;
        r = json_container(&j, NULL, &rec, NULL);
        if (r < 0) {
                free(rec.e);
                return r;
        }
        *ret = rec.e;
        *ret_n = rec.n;
        *ret_end = (size_t)(j.p - s);
        return 0;
}
const char *json_get_string(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

bool json_get_int(json_object *o, const char *key, int64_t *ret) {
        json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !v)
                return false;
        if (json_object_is_type(v, json_type_int)) {
                *ret = json_object_get_int64(v);
                return true;
        }
        if (json_object_is_type(v, json_type_double)) {
                double d = json_object_get_double(v);
                if (d != (double)(int64_t)d)
                        return false;
                *ret = (int64_t)d;
                return true;
        }
        return false;
}
