/* plan.c: the ordered plan of a run (every session and orphan with its verdict) and its JSON
 * rendering (schema: doc/plan-schema.md). Text renderings are in render.c. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"
#include "text.h"

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

void plan_held_back(const Plan *p, PlanHeldBack *ret) {
        PlanHeldBack h = {};

        for (size_t k = 0; k < p->n_items; k++) {
                const PlanItem *it = &p->items[k];
                const Verdict *vd = it->verdict;

                if (it->is_orphan || !vd || !vd->held_by)
                        continue;
                h.n++;
                h.bytes += p->inv->sessions[it->index].bytes;
                if (!h.limit)
                        h.limit = vd->held_by;
                else if (!streq(h.limit, vd->held_by))
                        h.limit = "max-deletions and max-deletions-percent";
                if (vd->held_rule &&
                    (streq(vd->held_rule, "tree-max-size") || streq(vd->held_rule, "keep-free")))
                        h.tree_cap = true;
        }
        *ret = h;
}

char *plan_held_back_warning(const PlanHeldBack *h) {
        char sz[FORMAT_BYTES_MAX];

        if (h->n == 0)
                return NULL;
        return strprintf("%s not met: %zu session%s (%s) held back by %s",
                         h->tree_cap ? "tree cap" : "policy", h->n, h->n == 1 ? "" : "s",
                         format_bytes(sz, sizeof sz, h->bytes), h->limit ?: "max-deletions");
}

/* Display order of verbs: what changes first. */
static int plan_verb_order(Verb v) {
        switch (v) {
        case VERB_DELETE:
                return 0;
        case VERB_ARCHIVE:
                return 1;
        case VERB_COMPRESS:
                return 2;
        case VERB_SKIP:
                return 3;
        default:
                return 4;
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
        c = ga == gb ? 0 : strcmp(ga, gb); /* the inventory shares equal strings */
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

/* plan_cmp()'s fields of one item, gathered once so the sort does not chase pointers. */
typedef struct PlanKey {
        const char *group;
        const char *name;
        uint32_t item; /* position in the unsorted items: same order as the index within a kind */
        uint32_t tree;
        uint8_t orphan, verified, verb;
} PlanKey;

static int plan_cmp_key(const void *x, const void *y) {
        const PlanKey *a = x, *b = y;
        int c;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->orphan != b->orphan)
                return a->orphan ? 1 : -1;
        if (a->verified != b->verified)
                return a->verified ? -1 : 1;
        c = a->group == b->group ? 0 : strcmp(a->group, b->group);
        if (c != 0)
                return c;
        if (a->verb != b->verb)
                return a->verb < b->verb ? -1 : 1;
        c = a->name == b->name ? 0 : strcmp(a->name, b->name);
        if (c != 0)
                return c;
        return a->item < b->item ? -1 : a->item > b->item ? 1 : 0;
}

/* plan_cmp_key() for sort_by_runs(), and its span key: (tree, orphan, verified, group). */
static int plan_cmp_key_r(const void *x, const void *y, void *userdata) {
        return plan_cmp_key(x, y);
}

static int plan_cmp_key_group(const void *x, const void *y, void *userdata) {
        const PlanKey *a = x, *b = y;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->orphan != b->orphan)
                return a->orphan ? 1 : -1;
        if (a->verified != b->verified)
                return a->verified ? -1 : 1;
        return a->group == b->group ? 0 : strcmp(a->group, b->group);
}

/* Sort p->items in plan_cmp() order through compact keys; plain qsort_r() when they do not fit
 * (or memory is short). */
static void plan_sort(Plan *p) {
        _cleanup_free_ PlanKey *keys = NULL;
        PlanItem *sorted = NULL;
        size_t max_tree = 0;

        for (size_t i = 0; i < p->n_items; i++)
                max_tree = MAX(max_tree, plan_item_tree(p, &p->items[i]));
        if (p->n_items > UINT32_MAX || max_tree > UINT32_MAX ||
            !(keys = calloc(p->n_items ?: 1, sizeof(PlanKey))) ||
            !(sorted = calloc(p->n_items ?: 1, sizeof(PlanItem)))) {
                qsort_r(p->items, p->n_items, sizeof(PlanItem), plan_cmp, p);
                return;
        }
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                bool verified;
                keys[i] = (PlanKey){
                        .group = plan_item_group(p, it, &verified),
                        .name = plan_item_name(p, it),
                        .item = (uint32_t)i,
                        .tree = (uint32_t)plan_item_tree(p, it),
                        .orphan = it->is_orphan,
                        .verified = verified,
                        .verb = (uint8_t)plan_verb_order(plan_item_verb(it)),
                };
        }
        /* items come in inventory order, a project's sessions together: sort each run */
        if (sort_by_runs(keys, p->n_items, sizeof(PlanKey), plan_cmp_key_group, plan_cmp_key_r,
                         NULL) != 1)
                qsort(keys, p->n_items, sizeof(PlanKey), plan_cmp_key);
        for (size_t i = 0; i < p->n_items; i++)
                sorted[i] = p->items[keys[i].item];
        free(p->items);
        p->items = sorted;
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
        plan_sort(p);
        *ret = TAKE_PTR(p);
        return 0;
}

int plan_new_steps(const Inventory *inv, msec_t now, Plan **ret) {
        Plan *p;

        if (!inv || !ret)
                return -EINVAL;
        p = calloc(1, sizeof(Plan));
        if (!p)
                return -ENOMEM;
        p->inv = inv;
        p->now = now;
        p->is_restore = true;
        *ret = p;
        return 0;
}

static const char *const plan_step_kind_table[_PLAN_STEP_KIND_MAX] = {
        [PLAN_STEP_RECOVER_DELETE] = "finish-delete",
        [PLAN_STEP_RECOVER_TEMP] = "remove-temporary",
        [PLAN_STEP_RESTORE] = "restore",
};

const char *plan_step_kind_to_string(PlanStepKind k) {
        if (k < 0 || k >= _PLAN_STEP_KIND_MAX)
                return NULL;
        return plan_step_kind_table[k];
}

void plan_step_done(PlanStep *step) {
        if (!step)
                return;
        for (size_t i = 0; i < step->n_paths; i++) {
                free(step->paths[i].from);
                free(step->paths[i].to);
        }
        free(step->paths);
        free(step->session_id);
        free(step->dir);
        free(step->name);
        free(step->why);
        *step = (PlanStep){};
}

int plan_step_add_path(PlanStep *step, const char *from, const char *to) {
        PlanPath *n = realloc(step->paths, (step->n_paths + 1) * sizeof(PlanPath));
        char *f = strdup(from ?: ""), *t = to ? strdup(to) : NULL;

        if (n)
                step->paths = n;
        if (!n || !f || (to && !t)) {
                free(f);
                free(t);
                return -ENOMEM;
        }
        step->paths[step->n_paths++] = (PlanPath){ .from = f, .to = t };
        return 0;
}

int plan_add_step(Plan *p, PlanStep *step) {
        if (greedy_realloc((void **)&p->steps, &p->n_steps_alloc, p->n_steps + 1,
                           sizeof(PlanStep)) < 0) {
                plan_step_done(step);
                return -ENOMEM;
        }
        p->steps[p->n_steps++] = *step;
        *step = (PlanStep){};
        return 0;
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_steps; i++)
                plan_step_done(&p->steps[i]);
        free(p->steps);
        verdicts_free(p->verdicts);
        free(p->items);
        free(p);
        return NULL;
}

char *plan_clean_string(const char *s, bool for_terminal) {
        return text_clean(s, for_terminal ? TEXT_TERMINAL : TEXT_JSON);
}

/* ---- qgc status: disk use per project */


/* Largest first, then tree and name. */
static int plan_use_cmp(const void *x, const void *y) {
        const PlanUse *a = x, *b = y;
        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->bytes_alloc != b->bytes_alloc)
                return a->bytes_alloc > b->bytes_alloc ? -1 : 1;
        if (a->bytes != b->bytes)
                return a->bytes > b->bytes ? -1 : 1;
        if (a->verified != b->verified)
                return a->verified ? -1 : 1;
        return strcmp(a->group, b->group);
}


static const char *plan_session_group(const Session *s) {
        return plan_session_verified(s) ? s->cwd : (s->project_dir ?: "");
}

/* Sessions by tree, verified first, project. */
static int plan_session_cmp(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];
        bool va = plan_session_verified(a), vb = plan_session_verified(b);

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (va != vb)
                return va ? -1 : 1;
        return strcmp(plan_session_group(a), plan_session_group(b));
}

/* Aggregate the inventory per (tree, project), largest first within each tree. */
int plan_status_collect(const Inventory *inv, PlanUse **ret, size_t *ret_n) {
        _cleanup_free_ PlanUse *u = calloc(inv->n_sessions ?: 1, sizeof(PlanUse));
        _cleanup_free_ size_t *idx = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        size_t n = 0;

        if (!u || !idx)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                idx[i] = i;
        qsort_r(idx, inv->n_sessions, sizeof(size_t), plan_session_cmp, (void *)inv);
        for (size_t k = 0; k < inv->n_sessions; k++) {
                const Session *s = &inv->sessions[idx[k]];
                bool verified = plan_session_verified(s);
                const char *g = plan_session_group(s);
                PlanUse *cur = n > 0 ? &u[n - 1] : NULL;

                if (!cur || cur->tree != s->tree || cur->verified != verified ||
                    !streq(cur->group, g)) {
                        cur = &u[n++];
                        *cur = (PlanUse){ .tree = s->tree,
                                          .group = g,
                                          .verified = verified,
                                          .project_dir = s->project_dir,
                                          .oldest = s->last_activity,
                                          .newest = s->last_activity };
                }
                if (s->state == SESSION_ARCHIVED)
                        cur->n_archived++;
                else
                        cur->n_active++;
                cur->bytes += s->bytes;
                cur->bytes_alloc += s->bytes_alloc;
                cur->oldest = MIN(cur->oldest, s->last_activity);
                cur->newest = MAX(cur->newest, s->last_activity);
        }
        qsort(u, n, sizeof(PlanUse), plan_use_cmp);
        *ret = TAKE_PTR(u);
        *ret_n = n;
        return 0;
}

/* The JSON text is written as it is built, in exactly the layout json-c gives with
 * JSON_C_TO_STRING_PRETTY | SPACED | NOSLASHESCAPE (two spaces per level, "key": value, an empty
 * container as "[\n<indent>]"), so memory does not grow with the number of sessions. */
#define PLAN_JSON_FLAGS \
        (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
#define PLAN_JSON_DEPTH 16

typedef struct PlanJson {
        FILE *f;
        unsigned depth;
        bool had[PLAN_JSON_DEPTH]; /* the open container at each depth has a member already */
        int error;                 /* first -errno (only -ENOMEM; I/O errors via ferror()) */
        size_t len;                /* bytes in buf, not yet written to f */
        char buf[64 * 1024];
} PlanJson;

/* Append n bytes of text (through buf: a few stdio calls instead of one per token). */
static void plan_json_write(PlanJson *j, const char *s, size_t n) {
        if (n > sizeof(j->buf) - j->len) {
                fwrite(j->buf, 1, j->len, j->f);
                j->len = 0;
                if (n > sizeof(j->buf)) {
                        fwrite(s, 1, n, j->f);
                        return;
                }
        }
        memcpy(j->buf + j->len, s, n);
        j->len += n;
}

static void plan_json_puts(PlanJson *j, const char *s) {
        plan_json_write(j, s, strlen(s));
}

static void plan_json_putc(PlanJson *j, char c) {
        plan_json_write(j, &c, 1);
}

static void plan_json_indent(PlanJson *j, unsigned depth) {
        static const char spaces[] = "                                ";

        plan_json_write(j, spaces, MIN(2 * (size_t)depth, sizeof(spaces) - 1));
}

/* Separator and indentation before a member or element of the open container. */
static void plan_json_next(PlanJson *j) {
        if (j->had[j->depth])
                plan_json_puts(j, ",\n");
        j->had[j->depth] = true;
        plan_json_indent(j, j->depth);
}

/* "key": (keys are plain ASCII literals: nothing to escape) */
static void plan_json_key(PlanJson *j, const char *key) {
        plan_json_next(j);
        plan_json_putc(j, '"');
        plan_json_puts(j, key);
        plan_json_puts(j, "\": ");
}

static void plan_json_open(PlanJson *j, char c) {
        assert(j->depth + 1 < PLAN_JSON_DEPTH);
        plan_json_putc(j, c);
        plan_json_putc(j, '\n');
        j->had[++j->depth] = false;
}

static void plan_json_close(PlanJson *j, char c) {
        if (j->had[j->depth])
                plan_json_putc(j, '\n');
        j->depth--;
        plan_json_indent(j, j->depth);
        plan_json_putc(j, c);
}

/* A JSON string from possibly invalid UTF-8 (json-c's escaping); null for NULL. */
static void plan_json_value_string(PlanJson *j, const char *s) {
        _cleanup_free_ char *clean = NULL, *escaped = NULL;
        const unsigned char *q = (const unsigned char *)s;
        json_object *v;
        const char *out;

        if (!s) {
                plan_json_puts(j, "null");
                return;
        }
        /* fast path: printable ASCII with nothing to escape */
        while (*q >= 0x20 && *q < 0x7f && *q != '"' && *q != '\\')
                q++;
        if (*q == '\0') {
                plan_json_putc(j, '"');
                plan_json_write(j, s, (size_t)((const char *)q - s));
                plan_json_putc(j, '"');
                return;
        }
        clean = plan_clean_string(s, /* for_terminal= */ false);
        v = clean ? json_object_new_string(clean) : NULL;
        out = v ? json_object_to_json_string_ext(v, PLAN_JSON_FLAGS) : NULL;
        /* json-c leaves DEL, C1 and the bidi controls raw: they are \u escapes here too */
        escaped = out ? text_json_escape_controls(out) : NULL;
        if (escaped)
                plan_json_puts(j, escaped);
        else if (j->error == 0)
                j->error = -ENOMEM;
        json_object_put(v);
}

static void plan_json_string(PlanJson *j, const char *key, const char *s) {
        plan_json_key(j, key);
        plan_json_value_string(j, s);
}

/* ISO 8601 UTC, or null when t is 0 (unknown). */
static void plan_json_time(PlanJson *j, const char *key, msec_t t) {
        char buf[FORMAT_TIMESTAMP_MAX];

        plan_json_string(j, key, t == 0 ? NULL : format_timestamp(buf, sizeof buf, t));
}

/* Decimal digits of v (what printf's %PRIu64 gives), preceded by '-' when neg. */
static void plan_json_digits(PlanJson *j, uint64_t v, bool neg) {
        char buf[24], *p = buf + sizeof(buf);

        do
                *--p = (char)('0' + v % 10);
        while ((v /= 10) > 0);
        if (neg)
                *--p = '-';
        plan_json_write(j, p, (size_t)(buf + sizeof(buf) - p));
}

static void plan_json_int(PlanJson *j, const char *key, int64_t v) {
        plan_json_key(j, key);
        /* the magnitude of INT64_MIN as an unsigned number */
        plan_json_digits(j, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0);
}

static void plan_json_uint(PlanJson *j, const char *key, uint64_t v) {
        plan_json_key(j, key);
        plan_json_digits(j, v, false);
}

static void plan_json_bool(PlanJson *j, const char *key, bool v) {
        plan_json_key(j, key);
        plan_json_puts(j, v ? "true" : "false");
}

/* An array of the names of the bits set in mask (name(bit) for bit i). */
static void plan_json_names(PlanJson *j, const char *key, unsigned mask, unsigned n,
                            const char *(*name)(unsigned i)) {
        plan_json_key(j, key);
        plan_json_open(j, '[');
        for (unsigned i = 0; i < n; i++)
                if (mask & (1u << i)) {
                        plan_json_next(j);
                        plan_json_value_string(j, name(i));
                }
        plan_json_close(j, ']');
}

static const char *plan_protection_name(unsigned i) {
        return protection_to_string((Protection)(1u << i));
}

static const char *plan_live_name(unsigned i) {
        static const char *const names[] = { "registry", "claim", "lock", "recent", "unknown" };
        return names[i];
}

/* Verdict fields shared by sessions and orphans. */
static void plan_json_verdict(PlanJson *j, const Verdict *vd) {
        plan_json_string(j, "verb", verb_to_string(vd->verb));
        plan_json_string(j, "rule", vd->rule);
        plan_json_string(j, "reason", vd->reason);
        plan_json_names(j, "protections", vd->protections, _PROT_MAX, plan_protection_name);
}

/* One session object. */
static void plan_json_session(PlanJson *j, const Plan *p, const PlanItem *it) {
        const Session *s = &p->inv->sessions[it->index];

        plan_json_next(j);
        plan_json_open(j, '{');
        plan_json_string(j, "id", s->id);
        plan_json_string(j, "state", session_state_to_string(s->state));
        plan_json_verdict(j, it->verdict);
        plan_json_int(j, "rank", it->verdict->rank);
        plan_json_string(j, "owner", owner_status_to_string(s->owner));
        plan_json_string(j, "owner_reason", s->owner_reason);
        plan_json_string(j, "project_dir", s->project_dir);
        plan_json_uint(j, "bytes", s->bytes);
        plan_json_uint(j, "bytes_allocated", s->bytes_alloc);
        plan_json_uint(j, "transcript_bytes", s->transcript_bytes);
        plan_json_time(j, "last_activity", s->last_activity);
        plan_json_int(j, "idle_ms", MAX(p->now - s->last_activity, (msec_t)0));
        plan_json_time(j, "last_record", s->last_record);
        plan_json_time(j, "first_record", s->first_record);
        plan_json_time(j, "mtime", s->mtime);
        plan_json_bool(j, "future_clamped", s->future_clamped);
        plan_json_bool(j, "empty", s->empty);
        plan_json_string(j, "title", s->title);
        plan_json_bool(j, "title_manual", s->title && s->title_manual);
        plan_json_bool(j, "pinned", s->pinned);
        plan_json_bool(j, "grouped", s->grouped);
        plan_json_int(j, "scheduled_tasks", s->n_tasks);
        plan_json_bool(j, "live_worktree", s->live_worktree);
        plan_json_names(j, "live", s->live, 5, plan_live_name);
        plan_json_string(j, "live_reason", s->live_reason);
        /* its files in the cold tier (cold.h); only where there are some */
        if (s->cold || s->cold_copy) {
                plan_json_key(j, "compressed");
                plan_json_open(j, '{');
                plan_json_uint(j, "bytes", s->cold_bytes);
                plan_json_uint(j, "original_bytes", s->cold_orig);
                plan_json_uint(j, "saved_bytes", s->cold_orig - MIN(s->cold_bytes, s->cold_orig));
                plan_json_close(j, '}');
        }
        /* a delete also removes these from the files Qwen shares (erase.h); only where there is
         * something, so the plan of other sessions keeps its layout */
        if (it->verdict->verb == VERB_DELETE && (s->n_log_rows || s->org_entry || s->review_dir)) {
                plan_json_key(j, "also_removes");
                plan_json_open(j, '{');
                plan_json_int(j, "prompt_history_rows", s->n_log_rows);
                plan_json_bool(j, "organization_entry", s->org_entry);
                plan_json_bool(j, "review_scripts", s->review_dir);
                plan_json_close(j, '}');
        }
        plan_json_close(j, '}');
}

/* One orphan object. */
static void plan_json_orphan(PlanJson *j, const Plan *p, const PlanItem *it) {
        const Orphan *or = &p->inv->orphans[it->index];

        plan_json_next(j);
        plan_json_open(j, '{');
        plan_json_int(j, "tree", (int64_t)or->tree);
        plan_json_string(j, "kind", orphan_kind_to_string(or->kind));
        plan_json_string(j, "name", or->name);
        plan_json_string(j, "project_dir", or->project_dir);
        plan_json_verdict(j, it->verdict);
        plan_json_uint(j, "bytes", or->bytes);
        plan_json_uint(j, "bytes_allocated", or->bytes_alloc);
        plan_json_time(j, "mtime", or->mtime);
        plan_json_int(j, "idle_ms", MAX(p->now - or->mtime, (msec_t)0));
        if (or->kind == ORPHAN_STALE_PROJECT) {
                /* only this kind has them, so the other orphans keep their layout */
                const char *c = or->cwds ?: "";

                plan_json_string(j, "mark", it->verdict->mark > 0   ? "write"
                                            : it->verdict->mark < 0 ? "remove"
                                                                    : NULL);
                plan_json_time(j, "marked", or->marker.present ? or->marker.mtime_ns / 1000000 : 0);
                plan_json_string(j, "kept_because", or->stale_why);
                plan_json_key(j, "cwds");
                plan_json_open(j, '[');
                while (*c) {
                        size_t n = strcspn(c, "\n");
                        _cleanup_free_ char *one = strndup(c, n);
                        plan_json_next(j);
                        plan_json_value_string(j, one ?: "");
                        c += n + (c[n] == '\n');
                }
                plan_json_close(j, ']');
        }
        plan_json_close(j, '}');
}

/* A project object for the items [k, e) of one group (sessions only). */
static void plan_json_project(PlanJson *j, const Plan *p, size_t k, size_t e) {
        const PlanItem *first = &p->items[k];
        const Session *s = &p->inv->sessions[first->index];
        uint64_t bytes = 0, alloc = 0;
        bool verified;

        (void)plan_item_group(p, first, &verified);
        plan_json_next(j);
        plan_json_open(j, '{');
        plan_json_int(j, "tree", (int64_t)s->tree);
        plan_json_bool(j, "verified", verified);
        plan_json_string(j, "project", verified ? s->cwd : NULL);
        plan_json_string(j, "project_dir", s->project_dir);
        plan_json_string(j, "hash", verified ? s->hash : NULL);
        plan_json_key(j, "sessions");
        plan_json_open(j, '[');
        for (size_t i = k; i < e; i++) {
                bytes += p->inv->sessions[p->items[i].index].bytes;
                alloc += p->inv->sessions[p->items[i].index].bytes_alloc;
                plan_json_session(j, p, &p->items[i]);
        }
        plan_json_close(j, ']');
        plan_json_uint(j, "bytes", bytes);
        plan_json_uint(j, "bytes_allocated", alloc);
        plan_json_close(j, '}');
}

static void plan_json_trees(PlanJson *j, const Plan *p) {
        plan_json_key(j, "trees");
        plan_json_open(j, '[');
        for (size_t t = 0; t < p->inv->n_trees; t++) {
                const Tree *tr = &p->inv->trees[t];
                plan_json_next(j);
                plan_json_open(j, '{');
                plan_json_string(j, "global_dir", tr->global_dir);
                plan_json_string(j, "runtime_dir", tr->runtime_dir);
                plan_json_string(j, "user", tr->user);
                if (tr->fs_known) {
                        plan_json_uint(j, "fs_size", tr->fs_size);
                        plan_json_uint(j, "fs_avail", tr->fs_avail);
                }
                plan_json_close(j, '}');
        }
        plan_json_close(j, ']');
}

/* One summary counter: a name (borrowed) and its totals. */
typedef struct PlanCounter {
        const char *name;
        int64_t count;
        uint64_t bytes, alloc;
} PlanCounter;

typedef struct PlanCounters {
        PlanCounter *v;
        size_t n, alloc;
} PlanCounters;

/* The counter of name, added (zero) at the end when absent: the order of first appearance. */
static PlanCounter *plan_counter(PlanCounters *c, const char *name) {
        for (size_t i = c->n; i > 0; i--)
                if (streq(c->v[i - 1].name, name))
                        return &c->v[i - 1];
        if (greedy_realloc((void **)&c->v, &c->alloc, c->n + 1, sizeof(PlanCounter)) < 0)
                return NULL;
        c->v[c->n] = (PlanCounter){ .name = name };
        return &c->v[c->n++];
}

/* Count one item of bytes/alloc under name. */
static int plan_count(PlanCounters *c, const char *name, uint64_t bytes, uint64_t alloc) {
        PlanCounter *x = plan_counter(c, name);

        if (!x)
                return -ENOMEM;
        x->count++;
        x->bytes += bytes;
        x->alloc += alloc;
        return 0;
}

static void plan_json_counters(PlanJson *j, const char *key, const PlanCounters *c) {
        plan_json_key(j, key);
        plan_json_open(j, '{');
        for (size_t i = 0; i < c->n; i++) {
                plan_json_key(j, c->v[i].name);
                plan_json_open(j, '{');
                plan_json_int(j, "count", c->v[i].count);
                plan_json_uint(j, "bytes", c->v[i].bytes);
                plan_json_uint(j, "bytes_allocated", c->v[i].alloc);
                plan_json_close(j, '}');
        }
        plan_json_close(j, '}');
}

/* Summary: per verb, per rule (archive/delete only), protections that won, orphans per verb. */
static int plan_json_summary(PlanJson *j, const Plan *p) {
        PlanCounters sets[4] = {}; /* verbs, rules, protections, orphans */
        static const char *const keys[4] = { "verbs", "rules", "protections", "orphans" };
        const char *last_rule = NULL;
        bool last_is_prot = false;
        int r = 0;

        /* compress is counted only when a plan has one (plans without keep their form) */
        for (Verb v = 0; r >= 0 && v < _VERB_MAX; v++)
                if (v == VERB_COMPRESS)
                        continue;
                else if (!plan_counter(&sets[0], verb_to_string(v)) ||
                    !plan_counter(&sets[3], verb_to_string(v)))
                        r = -ENOMEM;
        for (size_t k = 0; r >= 0 && k < p->n_items; k++) {
                const PlanItem *it = &p->items[k];
                const Verdict *vd = it->verdict;
                uint64_t b, a;

                if (it->is_orphan) {
                        const Orphan *o = &p->inv->orphans[it->index];
                        r = plan_count(&sets[3], verb_to_string(vd->verb), o->bytes,
                                       o->bytes_alloc);
                        continue;
                }
                b = p->inv->sessions[it->index].bytes;
                a = p->inv->sessions[it->index].bytes_alloc;
                r = plan_count(&sets[0], verb_to_string(vd->verb), b, a);
                if (r >= 0 && (vd->verb == VERB_ARCHIVE || vd->verb == VERB_DELETE ||
                               vd->verb == VERB_COMPRESS))
                        r = plan_count(&sets[1], vd->rule, b, a);
                /* rules are static strings: look each distinct pointer up once */
                if (vd->rule != last_rule) {
                        last_rule = vd->rule;
                        last_is_prot = false;
                        for (unsigned i = 0; last_rule && i < _PROT_MAX && !last_is_prot; i++)
                                last_is_prot = streq(last_rule,
                                                     protection_to_string((Protection)(1u << i)));
                }
                if (r >= 0 && last_is_prot)
                        r = plan_count(&sets[2], vd->rule, b, a);
        }
        if (r >= 0) {
                plan_json_key(j, "summary");
                plan_json_open(j, '{');
                for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                        plan_json_counters(j, keys[i], &sets[i]);
                plan_json_close(j, '}');
        }
        for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                free(sets[i].v);
        return r;
}

/* The steps of one group (restore: restore steps; else recovery steps) as an array under key;
 * nothing at all when there are none, so plans without them keep their exact form. */
static void plan_json_steps(PlanJson *j, const Plan *p, const char *key, bool restore) {
        bool any = false;

        for (size_t i = 0; i < p->n_steps; i++) {
                const PlanStep *st = &p->steps[i];

                if ((st->kind == PLAN_STEP_RESTORE) != restore)
                        continue;
                if (!any) {
                        plan_json_key(j, key);
                        plan_json_open(j, '[');
                        any = true;
                }
                plan_json_next(j);
                plan_json_open(j, '{');
                plan_json_int(j, "tree", (int64_t)st->tree);
                plan_json_string(j, "kind", plan_step_kind_to_string(st->kind));
                plan_json_string(j, "session", st->session_id);
                if (restore) {
                        plan_json_string(j, "verb", st->why ? "refused" : "restore");
                        plan_json_string(j, "reason", st->why);
                }
                plan_json_key(j, "paths");
                plan_json_open(j, '[');
                for (size_t k = 0; k < st->n_paths; k++) {
                        plan_json_next(j);
                        plan_json_open(j, '{');
                        plan_json_string(j, "from", st->paths[k].from);
                        if (st->paths[k].to)
                                plan_json_string(j, "to", st->paths[k].to);
                        plan_json_close(j, '}');
                }
                plan_json_close(j, ']');
                plan_json_close(j, '}');
        }
        if (any)
                plan_json_close(j, ']');
}

int plan_render_json_string(const char *s, FILE *f) {
        _cleanup_free_ PlanJson *j = calloc(1, sizeof(PlanJson));

        if (!j)
                return -ENOMEM;
        j->f = f;
        plan_json_value_string(j, s);
        fwrite(j->buf, 1, j->len, f);
        return j->error;
}

int plan_render_json(const Plan *p, FILE *f) {
        PlanJson j = { .f = f };
        char buf[FORMAT_TIMESTAMP_MAX];
        int r;

        plan_json_open(&j, '{');
        plan_json_int(&j, "version", PLAN_JSON_VERSION);
        plan_json_string(&j, "now", format_timestamp(buf, sizeof buf, p->now));
        plan_json_int(&j, "now_ms", p->now);
        plan_json_trees(&j, p);
        if (p->is_restore) {
                plan_json_steps(&j, p, "restore", /* restore= */ true);
                plan_json_close(&j, '}');
                plan_json_putc(&j, '\n');
                fwrite(j.buf, 1, j.len, f);
                if (j.error < 0)
                        return j.error;
                return fflush(f) == EOF || ferror(f) ? -EIO : 0;
        }
        plan_json_steps(&j, p, "recover", /* restore= */ false);

        plan_json_key(&j, "projects");
        plan_json_open(&j, '[');
        for (size_t k = 0; k < p->n_items;) {
                size_t e = k + 1;
                bool v0, v1;
                const char *g0;

                if (p->items[k].is_orphan) {
                        k++;
                        continue;
                }
                g0 = plan_item_group(p, &p->items[k], &v0);
                while (e < p->n_items && !p->items[e].is_orphan &&
                       plan_item_tree(p, &p->items[e]) == plan_item_tree(p, &p->items[k]) &&
                       streq(plan_item_group(p, &p->items[e], &v1), g0) && v1 == v0)
                        e++;
                plan_json_project(&j, p, k, e);
                k = e;
        }
        plan_json_close(&j, ']');

        plan_json_key(&j, "orphans");
        plan_json_open(&j, '[');
        for (size_t k = 0; k < p->n_items; k++)
                if (p->items[k].is_orphan)
                        plan_json_orphan(&j, p, &p->items[k]);
        plan_json_close(&j, ']');

        r = plan_json_summary(&j, p);
        if (r < 0)
                return r;
        plan_json_close(&j, '}');
        plan_json_putc(&j, '\n');
        fwrite(j.buf, 1, j.len, f);
        if (j.error < 0)
                return j.error;
        return fflush(f) == EOF || ferror(f) ? -EIO : 0;
}

/* The trees of inv, as in the plan. */
static void plan_json_inv_trees(PlanJson *j, const Inventory *inv) {
        plan_json_key(j, "trees");
        plan_json_open(j, '[');
        for (size_t t = 0; t < inv->n_trees; t++) {
                const Tree *tr = &inv->trees[t];
                uint64_t archived = 0;
                size_t n_archived = 0;

                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inv->sessions[i].tree == t &&
                            inv->sessions[i].state == SESSION_ARCHIVED) {
                                n_archived++;
                                archived += inv->sessions[i].bytes_alloc;
                        }
                plan_json_next(j);
                plan_json_open(j, '{');
                plan_json_string(j, "global_dir", tr->global_dir);
                plan_json_string(j, "runtime_dir", tr->runtime_dir);
                plan_json_string(j, "user", tr->user);
                if (tr->fs_known) {
                        plan_json_uint(j, "fs_size", tr->fs_size);
                        plan_json_uint(j, "fs_avail", tr->fs_avail);
                }
                /* archiving is a rename on the same disk: this space is not free */
                plan_json_uint(j, "archived_sessions", n_archived);
                plan_json_uint(j, "archived_bytes_allocated", archived);
                plan_json_close(j, '}');
        }
        plan_json_close(j, ']');
}

int plan_render_status_json(const Inventory *inv, msec_t now, FILE *f) {
        _cleanup_free_ PlanJson *j = calloc(1, sizeof(PlanJson));
        _cleanup_free_ PlanUse *u = NULL;
        char buf[FORMAT_TIMESTAMP_MAX];
        uint64_t total = 0, ob = 0;
        size_t n = 0;
        int r;

        if (!j)
                return -ENOMEM;
        r = plan_status_collect(inv, &u, &n);
        if (r < 0)
                return r;
        j->f = f;
        plan_json_open(j, '{');
        plan_json_int(j, "version", PLAN_JSON_VERSION);
        plan_json_string(j, "now", format_timestamp(buf, sizeof buf, now));
        plan_json_int(j, "now_ms", now);
        plan_json_inv_trees(j, inv);
        plan_json_key(j, "projects");
        plan_json_open(j, '[');
        for (size_t k = 0; k < n; k++) {
                total += u[k].bytes_alloc;
                plan_json_next(j);
                plan_json_open(j, '{');
                plan_json_int(j, "tree", (int64_t)u[k].tree);
                plan_json_bool(j, "verified", u[k].verified);
                plan_json_string(j, "project", u[k].verified ? u[k].group : NULL);
                plan_json_string(j, "project_dir", u[k].project_dir);
                plan_json_uint(j, "active", u[k].n_active);
                plan_json_uint(j, "archived", u[k].n_archived);
                plan_json_uint(j, "bytes", u[k].bytes);
                plan_json_uint(j, "bytes_allocated", u[k].bytes_alloc);
                plan_json_time(j, "oldest_activity", u[k].oldest);
                plan_json_time(j, "newest_activity", u[k].newest);
                plan_json_close(j, '}');
        }
        plan_json_close(j, ']');
        for (size_t i = 0; i < inv->n_orphans; i++)
                ob += inv->orphans[i].bytes_alloc;
        plan_json_key(j, "total");
        plan_json_open(j, '{');
        plan_json_uint(j, "projects", n);
        plan_json_uint(j, "sessions", inv->n_sessions);
        plan_json_uint(j, "bytes_allocated", total);
        plan_json_uint(j, "orphans", inv->n_orphans);
        plan_json_uint(j, "orphans_bytes_allocated", ob);
        /* the cold tier (cold.h), only where there is one */
        uint64_t n_cold = 0, cold = 0, orig = 0;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (session_is_cold(&inv->sessions[i])) {
                        n_cold++;
                        cold += inv->sessions[i].cold_bytes;
                        orig += inv->sessions[i].cold_orig;
                }
        if (n_cold > 0) {
                plan_json_key(j, "compressed");
                plan_json_open(j, '{');
                plan_json_uint(j, "sessions", n_cold);
                plan_json_uint(j, "bytes", cold);
                plan_json_uint(j, "original_bytes", orig);
                plan_json_uint(j, "saved_bytes", orig - MIN(cold, orig));
                plan_json_close(j, '}');
        }
        plan_json_close(j, '}');
        plan_json_close(j, '}');
        plan_json_putc(j, '\n');
        fwrite(j->buf, 1, j->len, f);
        if (j->error < 0)
                return j->error;
        return fflush(f) == EOF || ferror(f) ? -EIO : 0;
}
