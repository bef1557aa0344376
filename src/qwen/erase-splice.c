/* erase-splice.c: the text side of erase.h, no files (erase-splice.h). A text is parsed once
 * (erase_splice_parse_*(): the whole text validated, each element's id found with json.h's
 * scanner, decoded only when it has an escape or a byte beyond ASCII); a splice derives the parse
 * of the text it makes. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "erase-splice.h"
#include "hashmap.h"
#include "json.h"
#include "macro.h"
#include "util.h"

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

/* The id of element e from the JSON string text[a, b) (quotes included, valid): its raw bytes
 * when they are what JSON.parse decodes (no escape, every byte ASCII: invalid UTF-8 would become
 * U+FFFD), else decoded (json_parse()). 0 or -ENOMEM. */
static int erase_elem_id(const char *s, const JsonElem *e, size_t a, size_t b, EraseElemId *ret) {
        json_object *o;
        bool raw = true;

        *ret = (EraseElemId){ .off = SIZE_MAX };
        if (b - a < 2 || s[a] != '"')
                return 0;
        for (size_t i = a + 1; i < b - 1 && raw; i++)
                raw = s[i] != '\\' && (unsigned char)s[i] < 0x80;
        if (raw) {
                *ret = (EraseElemId){ .off = a + 1 - e->start, .len = b - a - 2 };
                return 0;
        }
        if (json_parse(s + a, b - a, &o) < 0)
                return -ENOMEM; /* valid already: only the allocations can fail */
        if (json_object_is_type(o, json_type_string)) {
                size_t len = (size_t)json_object_get_string_len(o);

                ret->dec = malloc(len + 1);
                if (ret->dec) {
                        memcpy(ret->dec, json_object_get_string(o), len + 1);
                        ret->off = 0;
                        ret->len = len;
                }
        }
        json_object_put(o);
        return ret->off == SIZE_MAX ? -ENOMEM : 0;
}

/* The "sessionId" of the row e (valid JSON) when it is an object with one that is a string:
 * the last of duplicate keys, keys compared decoded (json_members(), as JSON.parse reads
 * them). */
static int erase_row_id(const char *s, const JsonElem *e, EraseElemId *ret) {
        static const char *const keys[] = { "sessionId" };
        JsonSpan v = {};

        *ret = (EraseElemId){ .off = SIZE_MAX };
        if (s[e->start] != '{')
                return 0;
        if (json_members(s + e->start, e->end - e->start, /* validate= */ false, keys, 1, &v) < 0 ||
            !v.s || v.s[0] != '"')
                return 0;
        return erase_elem_id(s, e, (size_t)(v.s - s), (size_t)(v.s - s) + v.n, ret);
}

void erase_splice_parsed_done(EraseParsed *p) {
        for (size_t i = 0; p->id && i < p->ne; i++)
                free(p->id[i].dec);
        free(p->e);
        free(p->id);
        *p = (EraseParsed){};
}

/* The elements of the top-level container (want: '[' or '{'), the whole text checked with
 * JSON.parse's grammar (json.h: the one grammar; Qwen reads these files with JSON.parse, and a
 * text it would refuse is left as it is); *ret_open and *ret_close index its brackets. */
static int erase_top(const char *text, size_t n, char want, JsonElem **ret, size_t *ret_n,
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

/* p->id for p->e: each element's id by key (an organisation entry) or by its "sessionId" (a
 * row). */
static int erase_parsed_ids(const char *text, EraseParsed *p, bool by_key) {
        p->id = calloc(p->ne ? p->ne : 1, sizeof(EraseElemId));
        if (!p->id)
                return -ENOMEM;
        for (size_t i = 0; i < p->ne; i++) {
                int r = by_key ? erase_elem_id(text, &p->e[i], p->e[i].start, p->e[i].key_end,
                                               &p->id[i])
                               : erase_row_id(text, &p->e[i], &p->id[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int erase_splice_parse_logs(const char *text, size_t n, EraseParsed *ret) {
        int r;

        *ret = (EraseParsed){};
        r = erase_top(text, n, '[', &ret->e, &ret->ne, &ret->open, &ret->close);
        if (r >= 0) {
                ret->has = true;
                r = erase_parsed_ids(text, ret, /* by_key= */ false);
        }
        if (r < 0)
                erase_splice_parsed_done(ret);
        return r;
}

int erase_splice_parse_org(const char *text, size_t n, EraseParsed *ret) {
        _cleanup_free_ JsonElem *top = NULL;
        size_t ntop = 0, open, close, end, sessions = SIZE_MAX;
        int r;

        *ret = (EraseParsed){};
        r = erase_top(text, n, '{', &top, &ntop, &open, &close);
        if (r < 0)
                return r;
        /* JSON.parse keeps the last of duplicate keys */
        for (size_t i = 0; i < ntop; i++) {
                EraseElemId k;

                r = erase_elem_id(text, &top[i], top[i].start, top[i].key_end, &k);
                if (r < 0)
                        return r;
                if (k.len == strlen("sessions") &&
                    memcmp(k.dec ?: text + top[i].start + k.off, "sessions", k.len) == 0)
                        sessions = i;
                free(k.dec);
        }
        if (sessions == SIZE_MAX || text[top[sessions].value] != '{')
                return 0; /* nothing to remove */

        /* validated with the whole text by erase_top() */
        r = json_elements(text, n, top[sessions].value, /* validate= */ false, &ret->e, &ret->ne,
                          &end);
        if (r >= 0) {
                ret->has = true;
                ret->depth = 1;
                ret->open = top[sessions].value;
                ret->close = end - 1;
                r = erase_parsed_ids(text, ret, /* by_key= */ true);
        }
        if (r < 0)
                erase_splice_parsed_done(ret);
        return r;
}

int erase_splice_find(const char *text, const EraseParsed *p, const EraseIds *ids, bool *drop,
                      unsigned *ret_k) {
        _cleanup_(erase_set_done) EraseSet set = {};
        unsigned k = 0;
        int r;

        *ret_k = 0;
        r = erase_set_init(&set, ids);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->ne; i++) {
                const EraseElemId *x = &p->id[i];
                ssize_t j = x->off == SIZE_MAX
                                    ? -1
                                    : erase_ids_index(&set, x->dec ?: text + p->e[i].start + x->off,
                                                      x->len);

                if (j >= 0 && ids->counts)
                        ids->counts[j]++;
                if (drop)
                        drop[i] = j >= 0;
                k += j >= 0;
        }
        *ret_k = k;
        return 0;
}

/* JSON.stringify(v, null, 2)'s break before an element (or the closing bracket) at level
 * depth: "\n" and 2 * depth spaces, after a "," between elements. */
static int erase_break(StrBuf *b, bool comma, unsigned depth) {
        static const char spaces[] = "                                ";
        int r = strbuf_append(b, comma ? ",\n" : "\n", comma ? 2 : 1);

        for (size_t left = 2 * (size_t)depth; r >= 0 && left > 0;) {
                size_t k = MIN(left, sizeof(spaces) - 1);

                r = strbuf_append(b, spaces, k);
                left -= k;
        }
        return r;
}

/* q's next element: e, of id x, at offset at of the new text (the same bytes at another offset:
 * the same id). false: out of memory. */
static bool erase_derive(EraseParsed *q, const JsonElem *e, const EraseElemId *x, size_t at) {
        EraseElemId *id = &q->id[q->ne];

        q->e[q->ne++] = (JsonElem){ .start = at, .key_end = at + (e->key_end - e->start),
                                    .value = at + (e->value - e->start),
                                    .end = at + (e->end - e->start) };
        *id = (EraseElemId){ .off = x->off, .len = x->len };
        if (!x->dec)
                return true;
        id->dec = malloc(x->len + 1);
        if (id->dec)
                memcpy(id->dec, x->dec, x->len + 1);
        return id->dec;
}

int erase_splice_text(const char *text, size_t n, const EraseParsed *p, const bool *drop,
                      const char *xt, const EraseParsed *x, const bool *add, char **ret,
                      size_t *ret_size, EraseParsed *ret_parsed) {
        size_t ne = p->ne + (x ? x->ne : 0);
        EraseParsed q = {};
        StrBuf b = {};
        bool first = true, derived = !!ret_parsed;
        int r;

        assert(p->has);
        if (derived) {
                q = (EraseParsed){ .has = true, .open = p->open, .depth = p->depth };
                q.e = calloc(ne ? ne : 1, sizeof(JsonElem));
                q.id = calloc(ne ? ne : 1, sizeof(EraseElemId));
                derived = q.e && q.id;
        }
        /* the size of the new text first: one allocation, no copies of a growing buffer */
        b.cap = p->open + 1 + (n - p->close) + 1;
        for (size_t j = 0; j < ne; j++) {
                bool own = j < p->ne;
                size_t i = own ? j : j - p->ne;
                const JsonElem *e = own ? &p->e[i] : &x->e[i];

                if (own ? drop[i] : !add[i])
                        continue;
                b.cap += (first ? 1 : 2) + 2 * ((size_t)p->depth + 1) + (e->end - e->start);
                first = false;
        }
        if (!first)
                b.cap += 1 + 2 * (size_t)p->depth;
        first = true;
        b.buf = malloc(b.cap);
        r = b.buf ? strbuf_append(&b, text, p->open + 1) : -ENOMEM;
        for (size_t j = 0; r >= 0 && j < ne; j++) {
                bool own = j < p->ne;
                size_t i = own ? j : j - p->ne;
                const EraseParsed *from = own ? p : x;
                const JsonElem *e = &from->e[i];

                if (own ? drop[i] : !add[i])
                        continue;
                r = erase_break(&b, !first, p->depth + 1);
                if (r >= 0 && derived)
                        derived = erase_derive(&q, e, &from->id[i], b.len);
                if (r >= 0)
                        r = strbuf_append(&b, (own ? text : xt) + e->start, e->end - e->start);
                first = false;
        }
        if (r >= 0 && !first)
                r = erase_break(&b, false, p->depth);
        q.close = b.len;
        if (r >= 0)
                r = strbuf_append(&b, text + p->close, n - p->close);
        if (r < 0) {
                strbuf_done(&b);
                erase_splice_parsed_done(&q);
                return r;
        }
        *ret_size = b.len;
        *ret = strbuf_steal(&b);
        if (!*ret) {
                erase_splice_parsed_done(&q);
                return -ENOMEM;
        }
        if (!ret_parsed)
                return 0;
        if (!derived) {
                erase_splice_parsed_done(&q);
                *ret_parsed = (EraseParsed){};
                return 1;
        }
        *ret_parsed = q;
        return 0;
}

/* An element's bytes, or an object member's key, as a hashmap entry (erase_splice_missing()). */
typedef struct EraseSpan {
        const char *s;
        size_t n;
} EraseSpan;

static bool erase_span_eq(const void *entry, const void *key) {
        const EraseSpan *a = entry, *b = key;

        return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
}

/* e of text as a span: when it is an object's member, its key; else its whole bytes. */
static EraseSpan erase_span(const char *text, const JsonElem *e) {
        if (e->key_end > e->start)
                return (EraseSpan){ .s = text + e->start, .n = e->key_end - e->start };
        return (EraseSpan){ .s = text + e->start, .n = e->end - e->start };
}

/* spans[0..p->ne) of p (text), each in h. 0 or -ENOMEM. */
static int erase_spans_put(Hashmap *h, EraseSpan *spans, const char *text, const EraseParsed *p) {
        int r = hashmap_reserve(h, p->ne);

        for (size_t i = 0; r >= 0 && i < p->ne; i++) {
                HashSlot *slot;

                spans[i] = erase_span(text, &p->e[i]);
                slot = hashmap_slot(h, hashmap_hash_bytes(spans[i].s, spans[i].n), erase_span_eq,
                                    &spans[i]);
                if (!slot->entry)
                        hashmap_fill(h, slot, hashmap_hash_bytes(spans[i].s, spans[i].n), &spans[i]);
        }
        return r;
}

int erase_splice_missing(const char *xt, const EraseParsed *x, const char *dt, const EraseParsed *d,
                         bool *add, unsigned *ret_k) {
        _cleanup_free_ EraseSpan *ds = calloc(d->ne ? d->ne : 1, sizeof(EraseSpan));
        _cleanup_(hashmap_donep) Hashmap dh = {};
        unsigned k = 0;
        int r;

        *ret_k = 0;
        if (!ds)
                return -ENOMEM;
        r = erase_spans_put(&dh, ds, dt, d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < x->ne; i++) {
                EraseSpan b = erase_span(xt, &x->e[i]);

                add[i] = !hashmap_get(&dh, hashmap_hash_bytes(b.s, b.n), erase_span_eq, &b);
                k += add[i];
        }
        *ret_k = k;
        return 0;
}
