/* erase-splice.c: the text side of erase.h, no files: the rows of a logs.json text and the
 * entries of a session-organization.v1.json text spliced out (every other byte kept, the
 * container reframed as JSON.stringify(v, null, 2) frames it), the rows counted for the plan,
 * and the name of a session's review directory. */
#include "autoconf.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "erase.h"
#include "erase-int.h"
#include "json.h"
#include "macro.h"
#include "sha256.h"
#include "util.h"

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

/* One id of an EraseIds in EraseSet. */
typedef struct EraseSetId {
        const char *id;
        size_t len;
        size_t index; /* in EraseIds.ids */
} EraseSetId;

/* The ids of an EraseIds sorted by (length, bytes, index), so that each element of a file is
 * looked up by bisection instead of compared with every id of the batch. */
typedef struct EraseSet {
        EraseSetId *v;
        size_t n;
} EraseSet;

static int erase_set_cmp(const void *a, const void *b) {
        const EraseSetId *x = a, *y = b;
        int c;

        if (x->len != y->len)
                return x->len < y->len ? -1 : 1;
        c = memcmp(x->id, y->id, x->len);
        if (c != 0)
                return c;
        return x->index < y->index ? -1 : x->index > y->index;
}

static int erase_set_init(EraseSet *set, const EraseIds *ids) {
        set->n = ids->n;
        set->v = calloc(ids->n ? ids->n : 1, sizeof(EraseSetId));
        if (!set->v)
                return -ENOMEM;
        for (size_t i = 0; i < ids->n; i++)
                set->v[i] = (EraseSetId){ .id = ids->ids[i], .len = strlen(ids->ids[i]),
                                          .index = i };
        if (set->n > 1)
                qsort(set->v, set->n, sizeof(EraseSetId), erase_set_cmp);
        return 0;
}

static void erase_set_done(EraseSet *set) {
        free(set->v);
        set->v = NULL;
}

/* The index in ids of the string v (len bytes), or -1: the first of ids equal to it, exactly
 * (as Qwen compares). */
static ssize_t erase_ids_index(const EraseSet *set, const char *v, size_t len) {
        const EraseSetId key = { .id = v, .len = len, .index = 0 };
        size_t lo = 0, hi = set->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (erase_set_cmp(&set->v[mid], &key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < set->n && set->v[lo].len == len && memcmp(set->v[lo].id, v, len) == 0)
                return (ssize_t)set->v[lo].index;
        return -1;
}

/* The index in ids of the member key text[a, b) (a JSON string), or -1. */
static ssize_t erase_key_index(const char *s, size_t a, size_t b, const EraseSet *ids) {
        json_object *o = erase_parse(s, a, b);
        ssize_t k = o && json_object_is_type(o, json_type_string)
                            ? erase_ids_index(ids, json_object_get_string(o),
                                              (size_t)json_object_get_string_len(o))
                            : -1;

        json_object_put(o);
        return k;
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

/* The index in ids of the "sessionId" of the array element text[a, b) when it is an object with
 * one (exactly, as Qwen compares), or -1. */
static ssize_t erase_row_index(const char *s, size_t a, size_t b, const EraseSet *ids) {
        json_object *o, *v = NULL;
        ssize_t k = -1;

        if (s[a] != '{')
                return -1;
        o = erase_parse(s, a, b);
        if (o && json_object_is_type(o, json_type_object) &&
            json_object_object_get_ex(o, "sessionId", &v) &&
            json_object_is_type(v, json_type_string))
                k = erase_ids_index(ids, json_object_get_string(v),
                                    (size_t)json_object_get_string_len(v));
        json_object_put(o);
        return k;
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
static int erase_logs_find(const char *text, size_t n, const EraseIds *ids, EraseElem **ret_e,
                           size_t *ret_ne, size_t *ret_open, size_t *ret_close, bool **ret_drop,
                           unsigned *ret_k) {
        _cleanup_(erase_set_done) EraseSet set = {};
        bool *drop = NULL;
        unsigned k = 0;
        int r;

        r = erase_top(text, n, '[', ret_e, ret_ne, ret_open, ret_close);
        if (r < 0)
                return r;
        r = erase_set_init(&set, ids);
        if (r < 0)
                return r;
        if (ret_drop) {
                drop = calloc(*ret_ne ? *ret_ne : 1, sizeof(bool));
                if (!drop)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < *ret_ne; i++) {
                ssize_t j = erase_row_index(text, (*ret_e)[i].start, (*ret_e)[i].end, &set);
                bool is = j >= 0;
                if (is && ids->counts)
                        ids->counts[j]++;
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

        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_logs_find(text, n, &ids, &e, &ne, &open, &close, NULL, ret_count);
}

int erase_splice_logs_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                          size_t *ret_size, unsigned *ret_removed) {
        _cleanup_free_ EraseElem *e = NULL;
        _cleanup_free_ bool *drop = NULL;
        size_t ne = 0, open, close;
        unsigned k = 0;
        int r;

        if (ret) {
                *ret = NULL;
                *ret_size = 0;
        }
        *ret_removed = 0;
        r = erase_logs_find(text, n, ids, &e, &ne, &open, &close, ret ? &drop : NULL, &k);
        if (r < 0)
                return r;
        if (!ret) {
                *ret_removed = k; /* the count alone: the same find as the edit's */
                return 0;
        }
        if (k == 0)
                return 0;
        r = erase_rebuild(text, n, open, close, 0, e, ne, drop, ret, ret_size);
        if (r < 0)
                return r;
        *ret_removed = k;
        return 0;
}

int erase_splice_org_ids(const char *text, size_t n, const EraseIds *ids, char **ret,
                         size_t *ret_size, unsigned *ret_removed) {
        _cleanup_free_ EraseElem *top = NULL, *e = NULL;
        _cleanup_free_ bool *drop = NULL;
        _cleanup_(erase_set_done) EraseSet set = {};
        size_t ntop = 0, ne = 0, open, close, end, sessions = SIZE_MAX;
        unsigned k = 0;
        int r;

        if (ret) {
                *ret = NULL;
                *ret_size = 0;
        }
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
        r = erase_set_init(&set, ids);
        if (r < 0)
                return r;
        drop = calloc(ne ? ne : 1, sizeof(bool));
        if (!drop)
                return -ENOMEM;
        for (size_t i = 0; i < ne; i++) {
                ssize_t j = erase_key_index(text, e[i].start, e[i].key_end, &set);
                drop[i] = j >= 0;
                k += drop[i];
                if (j >= 0 && ids->counts)
                        ids->counts[j]++;
        }
        if (!ret) {
                *ret_removed = k; /* the count alone: the same find as the edit's */
                return 0;
        }
        if (k == 0)
                return 0;
        r = erase_rebuild(text, n, top[sessions].value, top[sessions].end - 1, 1, e, ne, drop, ret,
                          ret_size);
        if (r < 0)
                return r;
        *ret_removed = k;
        return 0;
}

int erase_splice_logs(const char *text, size_t n, const char *id, char **ret, size_t *ret_size,
                      unsigned *ret_removed) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_splice_logs_ids(text, n, &ids, ret, ret_size, ret_removed);
}

int erase_splice_org(const char *text, size_t n, const char *id, char **ret, size_t *ret_size,
                     unsigned *ret_removed) {
        const EraseIds ids = { .ids = &id, .n = 1 };

        return erase_splice_org_ids(text, n, &ids, ret, ret_size, ret_removed);
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
