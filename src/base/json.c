/* json.c: JSON.parse's grammar (json.h), walked by two sinks. json_parse() builds json-c objects
 * exactly when JSON.parse would accept the text (json-c alone is more lenient: NaN, single
 * quotes, raw control characters, clamped integers); numbers become doubles (int64 when small
 * integers). The scanner (json_capture(), json_members(), json_elements()) walks the same
 * grammar without building, validating it when asked, and returns text spans. */
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

/* Four hex digits at p (before end) as a number. */
static int json_parse_hex4(const char *p, const char *end, uint32_t *ret) {
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

static inline bool json_is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* The end of the JSON number at p: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, or NULL when
 * none starts there. *ret_integral: it has neither a fraction nor an exponent. */
static const char *json_number_end(const char *p, const char *end, bool *ret_integral) {
        bool integral = true;

        if (p < end && *p == '-')
                p++;
        if (p >= end || !json_is_digit(*p))
                return NULL;
        if (*p == '0')
                p++;
        else
                while (p < end && json_is_digit(*p))
                        p++;
        if (p < end && *p == '.') {
                integral = false;
                p++;
                if (p >= end || !json_is_digit(*p))
                        return NULL;
                while (p < end && json_is_digit(*p))
                        p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
                integral = false;
                p++;
                if (p < end && (*p == '+' || *p == '-'))
                        p++;
                if (p >= end || !json_is_digit(*p))
                        return NULL;
                while (p < end && json_is_digit(*p))
                        p++;
        }
        *ret_integral = integral;
        return p;
}

typedef struct JsonParser {
        const char *p, *end;
        unsigned depth;
        StrBuf scratch;
} JsonParser;

static int json_parse_value(JsonParser *j, json_object **ret);

static void json_parse_ws(JsonParser *j) {
        while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
                j->p++;
}

static int json_parse_put_cp(StrBuf *b, uint32_t cp) {
        char u[4];

        return strbuf_append(b, u, utf8_encode(cp, u));
}

/* Decode one \u escape (p after the backslash-u), pairing surrogates; a lone surrogate becomes
 * U+FFFD, as Node does when the string is later encoded. */
static int json_parse_unicode(JsonParser *j, uint32_t *ret) {
        uint32_t hi, lo;

        if (json_parse_hex4(j->p, j->end, &hi) < 0)
                return -EBADMSG;
        j->p += 4;
        if (hi >= 0xdc00 && hi <= 0xdfff) {
                *ret = 0xfffd;
                return 0;
        }
        if (hi < 0xd800 || hi > 0xdbff) {
                *ret = hi;
                return 0;
        }
        if (j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' &&
            json_parse_hex4(j->p + 2, j->end, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
                j->p += 6;
                *ret = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                return 0;
        }
        *ret = 0xfffd;
        return 0;
}

/* Parse a string (j->p at the opening quote) into j->scratch. */
static int json_parse_string(JsonParser *j) {
        j->scratch.len = 0;
        if (strbuf_append(&j->scratch, "", 0) < 0)
                return -ENOMEM;
        j->p++;
        for (;;) {
                const char *run = j->p;
                unsigned char c;

                while (j->p < j->end && (unsigned char)*j->p >= 0x20 &&
                       (unsigned char)*j->p < 0x80 && *j->p != '"' && *j->p != '\\')
                        j->p++;
                if (j->p > run && strbuf_append(&j->scratch, run, (size_t)(j->p - run)) < 0)
                        return -ENOMEM;
                if (j->p >= j->end)
                        return -EBADMSG;
                c = (unsigned char)*j->p;
                if (c == '"') {
                        j->p++;
                        return 0;
                }
                if (c < 0x20)
                        return -EBADMSG;
                if (c >= 0x80) {
                        uint32_t cp;
                        size_t k = utf8_next(j->p, (size_t)(j->end - j->p), &cp);
                        bool valid = !(cp == 0xfffd && !(k == 3 && c == 0xef));

                        if (strbuf_append(&j->scratch, valid ? j->p : "\xef\xbf\xbd",
                                          valid ? k : 3) < 0)
                                return -ENOMEM;
                        j->p += k;
                        continue;
                }
                /* backslash */
                if (j->end - j->p < 2)
                        return -EBADMSG;
                j->p += 2;
                switch (j->p[-1]) {
                case '"':
                case '\\':
                case '/': {
                        char e = j->p[-1];
                        if (strbuf_append(&j->scratch, &e, 1) < 0)
                                return -ENOMEM;
                        break;
                }
                case 'b':
                        if (strbuf_append(&j->scratch, "\b", 1) < 0)
                                return -ENOMEM;
                        break;
                case 'f':
                        if (strbuf_append(&j->scratch, "\f", 1) < 0)
                                return -ENOMEM;
                        break;
                case 'n':
                        if (strbuf_append(&j->scratch, "\n", 1) < 0)
                                return -ENOMEM;
                        break;
                case 'r':
                        if (strbuf_append(&j->scratch, "\r", 1) < 0)
                                return -ENOMEM;
                        break;
                case 't':
                        if (strbuf_append(&j->scratch, "\t", 1) < 0)
                                return -ENOMEM;
                        break;
                case 'u': {
                        uint32_t cp;
                        if (json_parse_unicode(j, &cp) < 0)
                                return -EBADMSG;
                        if (json_parse_put_cp(&j->scratch, cp) < 0)
                                return -ENOMEM;
                        break;
                }
                default:
                        return -EBADMSG;
                }
        }
}

/* JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int json_parse_number(JsonParser *j, json_object **ret) {
        const char *s = j->p, *e;
        bool integral;
        json_object *o;

        e = json_number_end(j->p, j->end, &integral);
        if (!e)
                return -EBADMSG;
        j->p = e;
        j->scratch.len = 0;
        if (strbuf_append(&j->scratch, s, (size_t)(j->p - s)) < 0)
                return -ENOMEM;
        /* Small integers stay int64 (exact, and what json-c users expect); the rest is a double
         * rounded as JavaScript does (strtod rounds correctly, overflow gives Infinity). */
        if (integral && j->scratch.len <= 16)
                o = json_object_new_int64(strtoll(j->scratch.buf, NULL, 10));
        else
                o = json_object_new_double(strtod(j->scratch.buf, NULL));
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

static int json_parse_literal(JsonParser *j, const char *word, size_t n) {
        if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
                return -EBADMSG;
        j->p += n;
        return 0;
}

/* After a container's opening bracket or a ',' (j->p on it): skip it and the whitespace; 0 when
 * the closing bracket follows (consumed: the container ends), 1 when a value follows. */
static int json_parse_open(JsonParser *j, char close) {
        j->p++;
        json_parse_ws(j);
        if (j->p < j->end && *j->p == close) {
                j->p++;
                return 0;
        }
        return 1;
}

/* After a member or element: 1 at a ',' (consumed, with the whitespace after it: another value
 * follows), 0 at the closing bracket (consumed), else -EBADMSG. */
static int json_parse_next(JsonParser *j, char close) {
        json_parse_ws(j);
        if (j->p < j->end && *j->p == ',') {
                j->p++;
                json_parse_ws(j);
                return 1;
        }
        if (j->p < j->end && *j->p == close) {
                j->p++;
                return 0;
        }
        return -EBADMSG;
}

static int json_parse_object(JsonParser *j, json_object **ret) {
        json_object *obj;
        int r;

        obj = json_object_new_object();
        if (!obj)
                return -ENOMEM;
        if (json_parse_open(j, '}') == 0) {
                *ret = obj;
                return 0;
        }
        for (;;) {
                _cleanup_free_ char *key = NULL;
                json_object *val = NULL;

                if (j->p >= j->end || *j->p != '"') {
                        r = -EBADMSG;
                        goto fail;
                }
                r = json_parse_string(j);
                if (r < 0)
                        goto fail;
                key = strdup(j->scratch.buf);
                if (!key) {
                        r = -ENOMEM;
                        goto fail;
                }
                json_parse_ws(j);
                if (j->p >= j->end || *j->p != ':') {
                        r = -EBADMSG;
                        goto fail;
                }
                j->p++;
                json_parse_ws(j);
                r = json_parse_value(j, &val);
                if (r < 0)
                        goto fail;
                /* A repeated key keeps its first position and takes the last value, as in JS. */
                if (json_object_object_add(obj, key, val) < 0) {
                        json_object_put(val);
                        r = -ENOMEM;
                        goto fail;
                }
                r = json_parse_next(j, '}');
                if (r < 0)
                        goto fail;
                if (r == 0) {
                        *ret = obj;
                        return 0;
                }
        }
fail:
        json_object_put(obj);
        return r;
}

static int json_parse_array(JsonParser *j, json_object **ret) {
        json_object *arr;
        int r;

        arr = json_object_new_array();
        if (!arr)
                return -ENOMEM;
        if (json_parse_open(j, ']') == 0) {
                *ret = arr;
                return 0;
        }
        for (;;) {
                json_object *val = NULL;

                r = json_parse_value(j, &val);
                if (r < 0)
                        goto fail;
                if (json_object_array_add(arr, val) < 0) {
                        json_object_put(val);
                        r = -ENOMEM;
                        goto fail;
                }
                r = json_parse_next(j, ']');
                if (r < 0)
                        goto fail;
                if (r == 0) {
                        *ret = arr;
                        return 0;
                }
        }
fail:
        json_object_put(arr);
        return r;
}

/* Parse one value at j->p. JSON null is returned as NULL (json-c's representation). */
static int json_parse_value(JsonParser *j, json_object **ret) {
        int r;

        if (j->p >= j->end)
                return -EBADMSG;
        switch (*j->p) {
        case '{':
        case '[':
                if (j->depth >= JSON_MAX_DEPTH)
                        return -EBADMSG;
                j->depth++;
                r = *j->p == '{' ? json_parse_object(j, ret) : json_parse_array(j, ret);
                j->depth--;
                return r;
        case '"': {
                json_object *o;
                r = json_parse_string(j);
                if (r < 0)
                        return r;
                o = json_object_new_string_len(j->scratch.buf,
                                               (int)MIN(j->scratch.len, (size_t)INT32_MAX));
                if (!o)
                        return -ENOMEM;
                *ret = o;
                return 0;
        }
        case 't':
                r = json_parse_literal(j, "true", 4);
                if (r < 0)
                        return r;
                *ret = json_object_new_boolean(1);
                return *ret ? 0 : -ENOMEM;
        case 'f':
                r = json_parse_literal(j, "false", 5);
                if (r < 0)
                        return r;
                *ret = json_object_new_boolean(0);
                return *ret ? 0 : -ENOMEM;
        case 'n':
                r = json_parse_literal(j, "null", 4);
                if (r < 0)
                        return r;
                *ret = NULL;
                return 0;
        default:
                return json_parse_number(j, ret);
        }
}

/* JSON.parse(s): the whole text must be one value with optional JSON whitespace around it.
 * Returns 0 (null gives *ret == NULL), -EBADMSG or -ENOMEM. */
int json_parse(const char *s, size_t n, json_object **ret) {
        JsonParser j = { .p = s, .end = s + n };
        json_object *v = NULL;
        int r;

        if (n > INT32_MAX)
                return -E2BIG;
        json_parse_ws(&j);
        r = json_parse_value(&j, &v);
        if (r >= 0) {
                json_parse_ws(&j);
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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define JSON_HAVE_AVX2 1 /* AVX2 loops, used when the CPU has it */
#endif

typedef struct JsonScan {
        const char *p, *end;
        unsigned depth;
} JsonScan;

/* json_elements()'s record of one container's elements */
typedef struct JsonElems {
        const char *base;
        JsonElem *e;
        size_t n, alloc;
} JsonElems;

static int json_scan_value(JsonScan *j, bool validate);

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

/* A string at j->p (the opening quote); with validate, JSON.parse's rules for its content. */
static int json_scan_string(JsonScan *j, bool validate, bool *ret_escaped) {
        if (ret_escaped)
                *ret_escaped = false;
        j->p++;
        while (j->p < j->end) {
                unsigned char c;
                uint64_t w;

#ifdef JSON_HAVE_AVX2
                /* long runs of plain bytes (message text) 32 at a time */
                if (j->end - j->p >= 64 && __builtin_cpu_supports("avx2"))
                        j->p = json_skip_plain_avx2(j->p, j->end);
#endif
                /* eight plain bytes at a time */
                while (j->end - j->p >= 8) {
                        uint64_t m;

                        memcpy(&w, j->p, 8);
                        m = json_word_special(w);
                        if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                                j->p += __builtin_ctzll(m) / 8; /* to the first special byte */
#endif
                                break;
                        }
                        j->p += 8;
                }
                if (j->p >= j->end)
                        break;
                c = (unsigned char)*j->p;

                if (c == '"') {
                        j->p++;
                        return 0;
                }
                if (c == '\\') {
                        if (j->end - j->p < 2)
                                return -EBADMSG;
                        if (ret_escaped)
                                *ret_escaped = true;
                        if (validate) {
                                uint32_t cp;
                                switch (j->p[1]) {
                                case '"':
                                case '\\':
                                case '/':
                                case 'b':
                                case 'f':
                                case 'n':
                                case 'r':
                                case 't':
                                        break;
                                case 'u':
                                        if (json_parse_hex4(j->p + 2, j->end, &cp) < 0)
                                                return -EBADMSG;
                                        j->p += 4;
                                        break;
                                default:
                                        return -EBADMSG;
                                }
                        }
                        j->p += 2;
                        continue;
                }
                if (validate && c < 0x20)
                        return -EBADMSG;
                j->p++;
        }
        return -EBADMSG;
}

static int json_scan_number(JsonScan *j) {
        bool integral;
        const char *e = json_number_end(j->p, j->end, &integral);

        if (!e)
                return -EBADMSG;
        j->p = e;
        return 0;
}

static inline void json_scan_ws(JsonScan *j) {
        /* the common case: no whitespace (every structural character is above ' ') */
        if (j->p < j->end && (unsigned char)*j->p > ' ')
                return;
        while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
                j->p++;
}

/* Skip (and with validate, check) a container's members up to its closing bracket; with rec,
 * record each element (json_elements()). */
static int json_scan_container(JsonScan *j, bool validate, JsonElems *rec) {
        char close = *j->p == '{' ? '}' : ']';
        bool is_object = close == '}';
        int r;

        if (j->depth >= JSON_MAX_DEPTH)
                return -EBADMSG;
        j->depth++;
        j->p++;
        json_scan_ws(j);
        if (j->p < j->end && *j->p == close) {
                j->p++;
                j->depth--;
                return 0;
        }
        for (;;) {
                const char *start = j->p, *key_end = j->p;

                if (is_object) {
                        if (j->p >= j->end || *j->p != '"')
                                return -EBADMSG;
                        r = json_scan_string(j, validate, NULL);
                        if (r < 0)
                                return r;
                        key_end = j->p;
                        json_scan_ws(j);
                        if (j->p >= j->end || *j->p != ':')
                                return -EBADMSG;
                        j->p++;
                        json_scan_ws(j);
                }
                {
                        const char *value = j->p;

                        r = json_scan_value(j, validate);
                        if (r < 0)
                                return r;
                        if (rec) {
                                r = util_greedy_realloc((void **)&rec->e, &rec->alloc, rec->n + 1,
                                                        sizeof(JsonElem));
                                if (r < 0)
                                        return r;
                                rec->e[rec->n++] = (JsonElem){
                                        .start = (size_t)(start - rec->base),
                                        .key_end = (size_t)(key_end - rec->base),
                                        .value = (size_t)(value - rec->base),
                                        .end = (size_t)(j->p - rec->base),
                                };
                        }
                }
                json_scan_ws(j);
                if (j->p < j->end && *j->p == ',') {
                        j->p++;
                        json_scan_ws(j);
                        continue;
                }
                if (j->p < j->end && *j->p == close) {
                        j->p++;
                        j->depth--;
                        return 0;
                }
                return -EBADMSG;
        }
}

static int json_scan_value(JsonScan *j, bool validate) {
        if (j->p >= j->end)
                return -EBADMSG;
        switch (*j->p) {
        case '{':
        case '[':
                return json_scan_container(j, validate, NULL);
        case '"':
                return json_scan_string(j, validate, NULL);
        case 't':
        case 'f':
        case 'n': {
                const char *w = *j->p == 't' ? "true" : *j->p == 'f' ? "false" : "null";
                size_t n = strlen(w);
                if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
                        return -EBADMSG;
                j->p += n;
                return 0;
        }
        default:
                return json_scan_number(j);
        }
}

/* Does the raw key (between quotes, escapes undecoded) equal want (want_n bytes)? */
static bool json_key_equal(const char *raw, size_t n, const char *want, size_t want_n) {
        json_object *k = NULL;
        bool eq;

        if (n == want_n && memcmp(raw, want, n) == 0)
                return true;
        if (n < want_n || !memchr(raw, '\\', n))
                return false;
        /* escaped key: decode it (raw - 1 .. raw + n + 1 is the quoted string) */
        if (json_parse(raw - 1, n + 2, &k) < 0)
                return false;
        eq = (size_t)json_object_get_string_len(k) == want_n &&
             memcmp(json_object_get_string(k), want, want_n) == 0;
        json_object_put(k);
        return eq;
}

/* Scan the object at j->p ('{'), recording the spans cap asks for (recursing into captured
 * objects that have a child capture). */
static int json_scan_members(JsonScan *j, bool validate, const JsonCapture *cap) {
        size_t key_lens[32];
        uint64_t len_mask = 0; /* bit n: a wanted key of n < 64 bytes */
        int r;

        assert(cap->n_keys <= ELEMENTSOF(key_lens));
        for (size_t i = 0; i < cap->n_keys; i++) {
                cap->spans[i] = (JsonSpan){};
                key_lens[i] = strlen(cap->keys[i]);
                len_mask |= key_lens[i] < 64 ? UINT64_C(1) << key_lens[i] : 0;
        }
        if (j->depth >= JSON_MAX_DEPTH)
                return -EBADMSG;
        j->depth++;
        j->p++;
        json_scan_ws(j);
        if (j->p < j->end && *j->p == '}') {
                j->p++;
                j->depth--;
                return 0;
        }
        for (;;) {
                const char *key, *val;
                size_t key_n, hit = SIZE_MAX;
                bool escaped;

                if (j->p >= j->end || *j->p != '"')
                        return -EBADMSG;
                key = j->p + 1;
                r = json_scan_string(j, validate, &escaped);
                if (r < 0)
                        return r;
                key_n = (size_t)(j->p - 1 - key);
                json_scan_ws(j);
                if (j->p >= j->end || *j->p != ':')
                        return -EBADMSG;
                j->p++;
                json_scan_ws(j);
                val = j->p;
                if (escaped) {
                        for (size_t i = 0; i < cap->n_keys; i++)
                                if (json_key_equal(key, key_n, cap->keys[i], key_lens[i]))
                                        hit = i;
                } else if (key_n >= 64 || (len_mask & (UINT64_C(1) << key_n)))
                        /* no escapes: the raw key is the key */
                        for (size_t i = 0; i < cap->n_keys; i++)
                                if (key_n == key_lens[i] &&
                                    (key_n == 0 || (key[0] == cap->keys[i][0] &&
                                                    memcmp(key, cap->keys[i], key_n) == 0)))
                                        hit = i;
                if (hit != SIZE_MAX && cap->children && cap->children[hit] && j->p < j->end &&
                    *j->p == '{')
                        r = json_scan_members(j, validate, cap->children[hit]);
                else {
                        r = json_scan_value(j, validate);
                        /* a later duplicate that is not an object hides the earlier one's members
                         */
                        if (hit != SIZE_MAX && cap->children && cap->children[hit])
                                for (size_t i = 0; i < cap->children[hit]->n_keys; i++)
                                        cap->children[hit]->spans[i] = (JsonSpan){};
                }
                if (r < 0)
                        return r;
                if (hit != SIZE_MAX)
                        cap->spans[hit] = (JsonSpan){ .s = val, .n = (size_t)(j->p - val) };
                json_scan_ws(j);
                if (j->p < j->end && *j->p == ',') {
                        j->p++;
                        json_scan_ws(j);
                        continue;
                }
                if (j->p < j->end && *j->p == '}') {
                        j->p++;
                        j->depth--;
                        return 0;
                }
                return -EBADMSG;
        }
}

/* Capture member spans of the object text s[0..n) in one pass (see json.h). */
int json_capture(const char *s, size_t n, bool validate, const JsonCapture *cap) {
        JsonScan j = { .p = s, .end = s + n };
        int r;

        json_scan_ws(&j);
        if (j.p >= j.end || *j.p != '{')
                return -EBADMSG;
        r = json_scan_members(&j, validate, cap);
        if (r < 0)
                return r;
        json_scan_ws(&j);
        return j.p == j.end ? 0 : -EBADMSG;
}

/* json_capture() for one level of keys. */
int json_members(const char *s, size_t n, bool validate, const char *const *keys,
                        size_t n_keys, JsonSpan *spans) {
        JsonCapture cap = { .keys = keys, .n_keys = n_keys, .spans = spans };

        return json_capture(s, n, validate, &cap);
}

/* The elements of the container at s[at] (see json.h). */
int json_elements(const char *s, size_t n, size_t at, bool validate, JsonElem **ret,
                  size_t *ret_n, size_t *ret_end) {
        JsonScan j = { .p = s + at, .end = s + n };
        JsonElems rec = { .base = s };
        int r;

        if (at >= n || (s[at] != '{' && s[at] != '['))
                return -EBADMSG;
        r = json_scan_container(&j, validate, &rec);
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
