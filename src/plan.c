/* plan.c: the ordered plan of a run (every session and orphan with its verdict) and its JSON
 * rendering (schema: doc/plan-schema.md). Text renderings are in render.c. */
#include "autoconf.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"

static bool plan_session_verified(const Session *s) {
        return s->cwd && (s->owner == OWNER_OK || s->owner == OWNER_WORKTREE ||
                          s->owner == OWNER_CLAIM);
}

const char *plan_item_group(const Plan *p, const PlanItem *it, bool *ret_verified) {
        bool verified = false;
        const char *g;

        if (it->is_orphan) {
                const Orphan *o = &p->inv->orphans[it->index];
                g = o->project_dir ?: "";
        } else {
                const Session *s = &p->inv->sessions[it->index];
                verified = plan_session_verified(s);
                g = verified ? s->cwd : (s->project_dir ?: "");
        }
        if (ret_verified)
                *ret_verified = verified;
        return g;
}

Verb plan_item_verb(const PlanItem *it) {
        return it->verdict ? it->verdict->verb : VERB_KEEP;
}

/* Display order of verbs: what changes first. */
static int plan_verb_order(Verb v) {
        switch (v) {
        case VERB_DELETE:
                return 0;
        case VERB_ARCHIVE:
                return 1;
        case VERB_SKIP:
                return 2;
        default:
                return 3;
        }
}

static size_t plan_item_tree(const Plan *p, const PlanItem *it) {
        return it->is_orphan ? p->inv->orphans[it->index].tree : p->inv->sessions[it->index].tree;
}

static const char *plan_item_name(const Plan *p, const PlanItem *it) {
        return it->is_orphan ? (p->inv->orphans[it->index].name ?: "")
                             : p->inv->sessions[it->index].id;
}

/* tree, sessions before orphans, verified groups before unverified, group, verb, id, index. */
static int plan_cmp(const void *x, const void *y, void *userdata) {
        const Plan *p = userdata;
        const PlanItem *a = x, *b = y;
        size_t ta = plan_item_tree(p, a), tb = plan_item_tree(p, b);
        bool va, vb;
        const char *ga, *gb;
        int c;

        if (ta != tb)
                return ta < tb ? -1 : 1;
        if (a->is_orphan != b->is_orphan)
                return a->is_orphan ? 1 : -1;
        ga = plan_item_group(p, a, &va);
        gb = plan_item_group(p, b, &vb);
        if (va != vb)
                return va ? -1 : 1;
        c = strcmp(ga, gb);
        if (c != 0)
                return c;
        c = plan_verb_order(plan_item_verb(a)) - plan_verb_order(plan_item_verb(b));
        if (c != 0)
                return c;
        c = strcmp(plan_item_name(p, a), plan_item_name(p, b));
        if (c != 0)
                return c;
        return a->index < b->index ? -1 : a->index > b->index ? 1 : 0;
}

int plan_build(const Inventory *inv, Verdicts **verdicts, msec_t now, Plan **ret) {
        _cleanup_(plan_freep) Plan *p = NULL;
        size_t n;

        if (!inv || !verdicts || !*verdicts || !ret)
                return -EINVAL;
        if ((*verdicts)->n_sessions != inv->n_sessions || (*verdicts)->n_orphans != inv->n_orphans)
                return -EINVAL;
        p = calloc(1, sizeof(Plan));
        if (!p)
                return -ENOMEM;
        p->inv = inv;
        p->now = now;
        p->verdicts = TAKE_PTR(*verdicts);
        n = inv->n_sessions + inv->n_orphans;
        p->items = calloc(n ?: 1, sizeof(PlanItem));
        if (!p->items)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                p->items[p->n_items++] = (PlanItem){ .index = i,
                                                     .verdict = &p->verdicts->sessions[i] };
        for (size_t i = 0; i < inv->n_orphans; i++)
                p->items[p->n_items++] = (PlanItem){ .is_orphan = true,
                                                     .index = i,
                                                     .verdict = &p->verdicts->orphans[i] };
        qsort_r(p->items, p->n_items, sizeof(PlanItem), plan_cmp, p);
        *ret = TAKE_PTR(p);
        return 0;
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        verdicts_free(p->verdicts);
        free(p->items);
        free(p);
        return NULL;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t plan_utf8_len(const unsigned char *s) {
        unsigned c = s[0];
        size_t n;
        unsigned cp;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4, cp = c & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

char *plan_clean_string(const char *s, bool for_terminal) {
        _cleanup_(strbuf_done) StrBuf sb = {};
        const unsigned char *u = (const unsigned char *)(s ?: "");
        const unsigned char *q = u;

        /* fast path: printable ASCII needs no cleaning */
        while (*q >= 0x20 && *q < 0x7f)
                q++;
        if (*q == '\0')
                return strdup((const char *)u);
        while (*u) {
                size_t n = plan_utf8_len(u);
                int r;

                if (n == 0) {
                        r = strbuf_append(&sb, "\xef\xbf\xbd", 3);
                        n = 1;
                } else if (for_terminal &&
                           (*u < 0x20 || *u == 0x7f || (n == 2 && u[0] == 0xc2 && u[1] < 0xa0)))
                        r = strbuf_append(&sb, "?", 1);
                else
                        r = strbuf_append(&sb, (const char *)u, n);
                if (r < 0)
                        return NULL;
                u += n;
        }
        return strbuf_steal(&sb);
}

/* A JSON string from possibly invalid UTF-8; json null for NULL. */
static int plan_json_string(json_object *obj, const char *key, const char *s) {
        _cleanup_free_ char *clean = NULL;
        json_object *v = NULL;

        if (s) {
                clean = plan_clean_string(s, /* for_terminal= */ false);
                if (!clean)
                        return -ENOMEM;
                v = json_object_new_string(clean);
                if (!v)
                        return -ENOMEM;
        }
        if (json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int plan_json_add(json_object *obj, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int plan_json_push(json_object *arr, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_array_add(arr, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* ISO 8601 UTC, or null when t is 0 (unknown). */
static int plan_json_time(json_object *obj, const char *key, msec_t t) {
        char buf[FORMAT_TIMESTAMP_MAX];
        if (t == 0)
                return json_object_object_add(obj, key, NULL) < 0 ? -ENOMEM : 0;
        return plan_json_string(obj, key, format_timestamp(buf, sizeof buf, t));
}

static int plan_json_int(json_object *obj, const char *key, int64_t v) {
        return plan_json_add(obj, key, json_object_new_int64(v));
}

static int plan_json_uint(json_object *obj, const char *key, uint64_t v) {
        return plan_json_add(obj, key, json_object_new_uint64(v));
}

static int plan_json_bool(json_object *obj, const char *key, bool v) {
        return plan_json_add(obj, key, json_object_new_boolean(v));
}

/* The protection names of a bit mask. */
static json_object *plan_json_protections(unsigned prot) {
        json_object *arr = json_object_new_array();
        if (!arr)
                return NULL;
        for (unsigned i = 0; i < _PROT_MAX; i++)
                if (prot & (1u << i))
                        if (plan_json_push(arr, json_object_new_string(
                                                        protection_to_string((Protection)(1u << i)))) < 0) {
                                json_object_put(arr);
                                return NULL;
                        }
        return arr;
}

/* The live flags of a session as an array of names. */
static json_object *plan_json_live(unsigned live) {
        static const char *const names[] = { "registry", "claim", "lock", "recent", "unknown" };
        json_object *arr = json_object_new_array();
        if (!arr)
                return NULL;
        for (unsigned i = 0; i < ELEMENTSOF(names); i++)
                if (live & (1u << i))
                        if (plan_json_push(arr, json_object_new_string(names[i])) < 0) {
                                json_object_put(arr);
                                return NULL;
                        }
        return arr;
}

/* Verdict fields shared by sessions and orphans. */
static int plan_json_verdict(json_object *o, const Verdict *vd) {
        int r;

        r = plan_json_string(o, "verb", verb_to_string(vd->verb));
        if (r >= 0)
                r = plan_json_string(o, "rule", vd->rule);
        if (r >= 0)
                r = plan_json_string(o, "reason", vd->reason);
        if (r >= 0)
                r = plan_json_add(o, "protections", plan_json_protections(vd->protections));
        return r;
}

/* One session object. */
static int plan_json_session(const Plan *p, const PlanItem *it, json_object **ret) {
        const Session *s = &p->inv->sessions[it->index];
        json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        r = plan_json_string(o, "id", s->id);
        if (r >= 0)
                r = plan_json_string(o, "state", session_state_to_string(s->state));
        if (r >= 0)
                r = plan_json_verdict(o, it->verdict);
        if (r >= 0)
                r = plan_json_int(o, "rank", it->verdict->rank);
        if (r >= 0)
                r = plan_json_string(o, "owner", owner_status_to_string(s->owner));
        if (r >= 0)
                r = plan_json_string(o, "owner_reason", s->owner_reason);
        if (r >= 0)
                r = plan_json_string(o, "project_dir", s->project_dir);
        if (r >= 0)
                r = plan_json_uint(o, "bytes", s->bytes);
        if (r >= 0)
                r = plan_json_uint(o, "bytes_allocated", s->bytes_alloc);
        if (r >= 0)
                r = plan_json_uint(o, "transcript_bytes", s->transcript_bytes);
        if (r >= 0)
                r = plan_json_time(o, "last_activity", s->last_activity);
        if (r >= 0)
                r = plan_json_int(o, "idle_ms", MAX(p->now - s->last_activity, (msec_t)0));
        if (r >= 0)
                r = plan_json_time(o, "last_record", s->last_record);
        if (r >= 0)
                r = plan_json_time(o, "first_record", s->first_record);
        if (r >= 0)
                r = plan_json_time(o, "mtime", s->mtime);
        if (r >= 0)
                r = plan_json_bool(o, "future_clamped", s->future_clamped);
        if (r >= 0)
                r = plan_json_bool(o, "empty", s->empty);
        if (r >= 0)
                r = plan_json_string(o, "title", s->title);
        if (r >= 0)
                r = plan_json_bool(o, "title_manual", s->title && s->title_manual);
        if (r >= 0)
                r = plan_json_bool(o, "pinned", s->pinned);
        if (r >= 0)
                r = plan_json_bool(o, "grouped", s->grouped);
        if (r >= 0)
                r = plan_json_int(o, "scheduled_tasks", s->n_tasks);
        if (r >= 0)
                r = plan_json_bool(o, "live_worktree", s->live_worktree);
        if (r >= 0)
                r = plan_json_add(o, "live", plan_json_live(s->live));
        if (r >= 0)
                r = plan_json_string(o, "live_reason", s->live_reason);
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *ret = o;
        return 0;
}

/* One orphan object. */
static int plan_json_orphan(const Plan *p, const PlanItem *it, json_object **ret) {
        const Orphan *or = &p->inv->orphans[it->index];
        json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        r = plan_json_int(o, "tree", (int64_t)or->tree);
        if (r >= 0)
                r = plan_json_string(o, "kind", orphan_kind_to_string(or->kind));
        if (r >= 0)
                r = plan_json_string(o, "name", or->name);
        if (r >= 0)
                r = plan_json_string(o, "project_dir", or->project_dir);
        if (r >= 0)
                r = plan_json_verdict(o, it->verdict);
        if (r >= 0)
                r = plan_json_uint(o, "bytes", or->bytes);
        if (r >= 0)
                r = plan_json_uint(o, "bytes_allocated", or->bytes_alloc);
        if (r >= 0)
                r = plan_json_time(o, "mtime", or->mtime);
        if (r >= 0)
                r = plan_json_int(o, "idle_ms", MAX(p->now - or->mtime, (msec_t)0));
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *ret = o;
        return 0;
}

/* A project object for the items [k, e) of one group (sessions only). */
static int plan_json_project(const Plan *p, size_t k, size_t e, json_object **ret) {
        const PlanItem *first = &p->items[k];
        const Session *s = &p->inv->sessions[first->index];
        json_object *o = json_object_new_object(), *arr = NULL;
        uint64_t bytes = 0, alloc = 0;
        bool verified;
        int r;

        if (!o)
                return -ENOMEM;
        (void)plan_item_group(p, first, &verified);
        r = plan_json_int(o, "tree", (int64_t)s->tree);
        if (r >= 0)
                r = plan_json_bool(o, "verified", verified);
        if (r >= 0)
                r = plan_json_string(o, "project", verified ? s->cwd : NULL);
        if (r >= 0)
                r = plan_json_string(o, "project_dir", s->project_dir);
        if (r >= 0)
                r = plan_json_string(o, "hash", verified ? s->hash : NULL);
        if (r >= 0) {
                arr = json_object_new_array();
                r = plan_json_add(o, "sessions", arr);
        }
        for (size_t j = k; r >= 0 && j < e; j++) {
                json_object *so = NULL;
                bytes += p->inv->sessions[p->items[j].index].bytes;
                alloc += p->inv->sessions[p->items[j].index].bytes_alloc;
                r = plan_json_session(p, &p->items[j], &so);
                if (r >= 0)
                        r = plan_json_push(arr, so);
        }
        if (r >= 0)
                r = plan_json_uint(o, "bytes", bytes);
        if (r >= 0)
                r = plan_json_uint(o, "bytes_allocated", alloc);
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *ret = o;
        return 0;
}

static int plan_json_trees(const Plan *p, json_object *root) {
        json_object *arr = json_object_new_array();
        int r = plan_json_add(root, "trees", arr);

        for (size_t t = 0; r >= 0 && t < p->inv->n_trees; t++) {
                const Tree *tr = &p->inv->trees[t];
                json_object *o = json_object_new_object();
                r = plan_json_push(arr, o);
                if (r >= 0)
                        r = plan_json_string(o, "global_dir", tr->global_dir);
                if (r >= 0)
                        r = plan_json_string(o, "runtime_dir", tr->runtime_dir);
                if (r >= 0)
                        r = plan_json_string(o, "user", tr->user);
                if (r >= 0 && tr->fs_known)
                        r = plan_json_uint(o, "fs_size", tr->fs_size);
                if (r >= 0 && tr->fs_known)
                        r = plan_json_uint(o, "fs_avail", tr->fs_avail);
        }
        return r;
}

/* obj[key] = {"count": 0, "bytes": 0, "bytes_allocated": 0} unless present. */
static int plan_json_counter(json_object *obj, const char *key, json_object **ret) {
        json_object *c = NULL;
        int r;

        if (json_object_object_get_ex(obj, key, &c)) {
                *ret = c;
                return 0;
        }
        c = json_object_new_object();
        r = plan_json_add(obj, key, c);
        if (r >= 0)
                r = plan_json_int(c, "count", 0);
        if (r >= 0)
                r = plan_json_uint(c, "bytes", 0);
        if (r >= 0)
                r = plan_json_uint(c, "bytes_allocated", 0);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}

/* Count one item of bytes/alloc in obj[key]. */
static int plan_json_count(json_object *obj, const char *key, uint64_t bytes, uint64_t alloc) {
        json_object *c, *n, *b, *a;
        int r;

        r = plan_json_counter(obj, key, &c);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(c, "count", &n) ||
            !json_object_object_get_ex(c, "bytes", &b) ||
            !json_object_object_get_ex(c, "bytes_allocated", &a))
                return -EINVAL;
        json_object_set_int64(n, json_object_get_int64(n) + 1);
        json_object_set_uint64(b, json_object_get_uint64(b) + bytes);
        json_object_set_uint64(a, json_object_get_uint64(a) + alloc);
        return 0;
}

/* Summary: per verb, per rule (archive/delete only), protections that won, orphans per verb. */
static int plan_json_summary(const Plan *p, json_object *root) {
        json_object *sum = json_object_new_object(), *verbs, *rules, *prots, *orph, *c;
        int r = plan_json_add(root, "summary", sum);

        if (r < 0)
                return r;
        verbs = json_object_new_object();
        rules = json_object_new_object();
        prots = json_object_new_object();
        orph = json_object_new_object();
        r = plan_json_add(sum, "verbs", verbs);
        if (r >= 0)
                r = plan_json_add(sum, "rules", rules);
        if (r >= 0)
                r = plan_json_add(sum, "protections", prots);
        if (r >= 0)
                r = plan_json_add(sum, "orphans", orph);
        for (Verb v = 0; r >= 0 && v < _VERB_MAX; v++) {
                r = plan_json_counter(verbs, verb_to_string(v), &c);
                if (r >= 0)
                        r = plan_json_counter(orph, verb_to_string(v), &c);
        }
        for (size_t k = 0; r >= 0 && k < p->n_items; k++) {
                const PlanItem *it = &p->items[k];
                const Verdict *vd = it->verdict;
                uint64_t b, a;

                if (it->is_orphan) {
                        const Orphan *o = &p->inv->orphans[it->index];
                        r = plan_json_count(orph, verb_to_string(vd->verb), o->bytes,
                                            o->bytes_alloc);
                        continue;
                }
                b = p->inv->sessions[it->index].bytes;
                a = p->inv->sessions[it->index].bytes_alloc;
                r = plan_json_count(verbs, verb_to_string(vd->verb), b, a);
                if (r >= 0 && (vd->verb == VERB_ARCHIVE || vd->verb == VERB_DELETE))
                        r = plan_json_count(rules, vd->rule, b, a);
                for (unsigned i = 0; r >= 0 && i < _PROT_MAX; i++)
                        if (vd->rule && streq(vd->rule, protection_to_string((Protection)(1u << i))))
                                r = plan_json_count(prots, vd->rule, b, a);
        }
        return r;
}

int plan_render_json(const Plan *p, FILE *f) {
        json_object *root = json_object_new_object(), *projects = NULL, *orphans = NULL;
        char buf[FORMAT_TIMESTAMP_MAX];
        const char *out;
        int r;

        if (!root)
                return -ENOMEM;
        r = plan_json_int(root, "version", PLAN_JSON_VERSION);
        if (r >= 0)
                r = plan_json_string(root, "now", format_timestamp(buf, sizeof buf, p->now));
        if (r >= 0)
                r = plan_json_int(root, "now_ms", p->now);
        if (r >= 0)
                r = plan_json_trees(p, root);
        if (r >= 0) {
                projects = json_object_new_array();
                r = plan_json_add(root, "projects", projects);
        }
        if (r >= 0) {
                orphans = json_object_new_array();
                r = plan_json_add(root, "orphans", orphans);
        }
        for (size_t k = 0; r >= 0 && k < p->n_items;) {
                json_object *o = NULL;
                size_t e = k + 1;

                if (p->items[k].is_orphan) {
                        r = plan_json_orphan(p, &p->items[k], &o);
                        if (r >= 0)
                                r = plan_json_push(orphans, o);
                        k = e;
                        continue;
                }
                bool v0, v1;
                const char *g0 = plan_item_group(p, &p->items[k], &v0);
                while (e < p->n_items && !p->items[e].is_orphan &&
                       plan_item_tree(p, &p->items[e]) == plan_item_tree(p, &p->items[k]) &&
                       streq(plan_item_group(p, &p->items[e], &v1), g0) && v1 == v0)
                        e++;
                r = plan_json_project(p, k, e, &o);
                if (r >= 0)
                        r = plan_json_push(projects, o);
                k = e;
        }
        if (r >= 0)
                r = plan_json_summary(p, root);
        if (r < 0) {
                json_object_put(root);
                return r;
        }
        out = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                           JSON_C_TO_STRING_SPACED |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!out) {
                json_object_put(root);
                return -ENOMEM;
        }
        r = fputs(out, f) < 0 || fputc('\n', f) == EOF ? -EIO : 0;
        json_object_put(root);
        return r;
}
