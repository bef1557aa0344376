/* json.c: JSON.parse's grammar (json.h): json_parse() builds json-c objects exactly when
 * JSON.parse would accept the text (json-c alone is more lenient: NaN, single quotes, raw
 * control characters, clamped integers); numbers become doubles (int64 when small integers).
 * json-scan.c walks the same grammar without building anything. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "fsread.h"
#include "fsutil.h"
#include "macro.h"
#include "json.h"
#include "json-int.h"
#include "util.h"
#include "utf8.h"

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

int json_read_file(int dfd, const char *name, size_t max, JsonDialect dialect, json_object **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        json_object *o = NULL;
        size_t len = 0;
        int r;

        if (max > INT32_MAX)
                return -EINVAL;
        fd = fs_open_noatime(dfd, name, O_RDONLY); /* a dry run reads: atimes stay */
        if (fd < 0)
                return fd;
        r = fs_read_fd(fd, max, &buf, &len);
        if (r < 0)
                return r;
        switch (dialect) {
        case JSON_DIALECT_PARSE:
                r = json_parse(buf, len, &o);
                if (r == -E2BIG)
                        r = -EFBIG;
                break;
        default:
                return -EINVAL;
        }
        if (r < 0)
                return r;
        if (!o) /* JSON null: no reader wants one */
                return -EBADMSG;
        *ret = o;
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
