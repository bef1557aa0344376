/* plan-json.c: the plan's and qgc status's JSON renderings (schema: doc/plan-schema.md), written
 * as they are built by a streaming writer in json-c's pretty layout: json-c's own writer needs
 * the whole document as a tree first (bench/plan-json.c: the same bytes at 4.9 x the time and
 * 14.7 x the peak RSS), so json-c only escapes each string here. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"
#include "reason.h"
#include "store.h"
#include "text.h"

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
        clean = text_clean(s, TEXT_JSON);
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

        plan_json_string(j, key, t == 0 ? NULL : util_format_timestamp(buf, sizeof buf, t));
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
        return policy_protection_to_string((Protection)(1u << i));
}

static const char *plan_live_name(unsigned i) {
        static const char *const names[] = { "registry", "claim", "lock", "recent", "unknown" };
        return names[i];
}

/* Verdict fields shared by sessions and orphans; the reason rendered from it (reason.h). */
static void plan_json_verdict(PlanJson *j, const Plan *p, const PlanItem *it) {
        const Verdict *vd = it->verdict;
        _cleanup_free_ char *reason = plan_item_reason(p, it);

        if (!reason && j->error == 0)
                j->error = -ENOMEM;
        plan_json_string(j, "verb", policy_verb_to_string(vd->verb));
        plan_json_string(j, "rule", vd->rule);
        plan_json_string(j, "reason", reason);
        plan_json_names(j, "protections", vd->protections, _PROT_MAX, plan_protection_name);
}

/* One session object. */
static void plan_json_session(PlanJson *j, const Plan *p, const PlanItem *it) {
        const Session *s = &p->inv->sessions[it->index];
        _cleanup_free_ char *owner = NULL;

        if (reason_owner(s, &owner) < 0 && j->error == 0)
                j->error = -ENOMEM;

        plan_json_next(j);
        plan_json_open(j, '{');
        plan_json_string(j, "id", s->id);
        plan_json_string(j, "state", inventory_session_state_to_string(s->state));
        plan_json_verdict(j, p, it);
        plan_json_int(j, "rank", it->verdict->rank);
        plan_json_string(j, "owner", inventory_owner_status_to_string(s->owner));
        plan_json_string(j, "owner_reason", owner);
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
        plan_json_string(j, "kind", inventory_orphan_kind_to_string(or->kind));
        plan_json_string(j, "name", or->name);
        plan_json_string(j, "project_dir", or->project_dir);
        plan_json_verdict(j, p, it);
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
                plan_json_time(j, "marked", or->marker.present ? util_nsec_to_msec(or->marker.mtime_ns) : 0);
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

/* Open a tree's object in a "trees" array: its directories, user and filesystem. */
static void plan_json_tree_open(PlanJson *j, const Tree *tr) {
        plan_json_next(j);
        plan_json_open(j, '{');
        plan_json_string(j, "global_dir", tr->global_dir);
        plan_json_string(j, "runtime_dir", tr->runtime_dir);
        plan_json_string(j, "user", tr->user);
        if (tr->incomplete_why) /* only then: the other trees keep their layout */
                plan_json_string(j, "incomplete", tr->incomplete_why);
        if (tr->fs_known) {
                plan_json_uint(j, "fs_size", tr->fs_size);
                plan_json_uint(j, "fs_avail", tr->fs_avail);
        }
}

static void plan_json_trees(PlanJson *j, const Plan *p) {
        plan_json_key(j, "trees");
        plan_json_open(j, '[');
        for (size_t t = 0; t < p->inv->n_trees; t++) {
                const Tree *tr = &p->inv->trees[t];
                plan_json_tree_open(j, tr);
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
        if (util_greedy_realloc((void **)&c->v, &c->alloc, c->n + 1, sizeof(PlanCounter)) < 0)
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
                else if (!plan_counter(&sets[0], policy_verb_to_string(v)) ||
                    !plan_counter(&sets[3], policy_verb_to_string(v)))
                        r = -ENOMEM;
        for (size_t k = 0; r >= 0 && k < p->n_items; k++) {
                const PlanItem *it = &p->items[k];
                const Verdict *vd = it->verdict;
                uint64_t b, a;

                if (it->is_orphan) {
                        const Orphan *o = &p->inv->orphans[it->index];
                        r = plan_count(&sets[3], policy_verb_to_string(vd->verb), o->bytes,
                                       o->bytes_alloc);
                        continue;
                }
                b = p->inv->sessions[it->index].bytes;
                a = p->inv->sessions[it->index].bytes_alloc;
                r = plan_count(&sets[0], policy_verb_to_string(vd->verb), b, a);
                if (r >= 0 && (vd->verb == VERB_ARCHIVE || vd->verb == VERB_DELETE ||
                               vd->verb == VERB_COMPRESS))
                        r = plan_count(&sets[1], vd->rule, b, a);
                /* rules are static strings: look each distinct pointer up once */
                if (vd->rule != last_rule) {
                        last_rule = vd->rule;
                        last_is_prot = false;
                        for (unsigned i = 0; last_rule && i < _PROT_MAX && !last_is_prot; i++)
                                last_is_prot = streq(last_rule,
                                                     policy_protection_to_string((Protection)(1u << i)));
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

                /* a policy plan's recovery steps include the interrupted restores it finishes */
                if (restore && st->kind != PLAN_STEP_RESTORE)
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
                if (st->kind == PLAN_STEP_RESTORE) {
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

/* Close the top-level object, end the line and write it all to f. */
static int plan_json_end(PlanJson *j, FILE *f) {
        plan_json_close(j, '}');
        plan_json_putc(j, '\n');
        fwrite(j->buf, 1, j->len, f);
        if (j->error < 0)
                return j->error;
        return fflush(f) == EOF || ferror(f) ? -EIO : 0;
}

int plan_json_render_string(const char *s, FILE *f) {
        _cleanup_free_ PlanJson *j = calloc(1, sizeof(PlanJson));

        if (!j)
                return -ENOMEM;
        j->f = f;
        plan_json_value_string(j, s);
        fwrite(j->buf, 1, j->len, f);
        return j->error;
}

int plan_json_render(const Plan *p, FILE *f) {
        PlanJson j = { .f = f };
        char buf[FORMAT_TIMESTAMP_MAX];
        int r;

        plan_json_open(&j, '{');
        plan_json_int(&j, "version", PLAN_JSON_VERSION);
        plan_json_string(&j, "now", util_format_timestamp(buf, sizeof buf, p->now));
        plan_json_int(&j, "now_ms", p->now);
        plan_json_trees(&j, p);
        if (p->is_restore) {
                plan_json_steps(&j, p, "restore", /* restore= */ true);
                return plan_json_end(&j, f);
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
        return plan_json_end(&j, f);
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
                plan_json_tree_open(j, tr);
                /* archiving is a rename on the same disk: this space is not free */
                plan_json_uint(j, "archived_sessions", n_archived);
                plan_json_uint(j, "archived_bytes_allocated", archived);
                plan_json_close(j, '}');
        }
        plan_json_close(j, ']');
}

/* One tree's bytes by its store's kinds (store.h), an element of status's "breakdown". */
static void plan_json_breakdown(PlanJson *j, const Tree *tr, const StoreSize *s, bool allocated) {
        plan_json_next(j);
        plan_json_open(j, '{');
        plan_json_string(j, "runtime_dir", tr->runtime_dir);
        plan_json_string(j, "global_dir", tr->global_dir ?: "");
        plan_json_string(j, "count", allocated ? "allocated" : "apparent");
        plan_json_key(j, "kinds");
        plan_json_open(j, '{');
        for (size_t k = 0; k < s->n_kinds; k++) {
                plan_json_key(j, s->kind_keys[k]);
                plan_json_open(j, '{');
                plan_json_uint(j, "files", s->files[k]);
                plan_json_uint(j, "bytes", s->bytes[k]);
                plan_json_uint(j, "allocated", s->alloc[k]);
                plan_json_close(j, '}');
        }
        plan_json_close(j, '}');
        plan_json_key(j, "total");
        plan_json_open(j, '{');
        plan_json_uint(j, "bytes", s->total_bytes);
        plan_json_uint(j, "allocated", s->total_alloc);
        plan_json_close(j, '}');
        plan_json_bool(j, "incomplete", s->incomplete);
        plan_json_uint(j, "stale_projects", s->n_stale);
        plan_json_key(j, "unknown_shown");
        plan_json_open(j, '[');
        for (size_t i = 0; i < s->n_unknown; i++) {
                plan_json_next(j);
                plan_json_value_string(j, s->unknown[i]);
        }
        plan_json_close(j, ']');
        if (s->split_key) { /* the store's split of a kind (store.h): parts by ways */
                plan_json_key(j, s->split_key);
                plan_json_open(j, '[');
                for (size_t i = 0; i < s->n_parts; i++) {
                        const StoreSizePart *p = &s->parts[i];

                        plan_json_next(j);
                        plan_json_open(j, '{');
                        plan_json_string(j, s->part_key, p->name);
                        plan_json_bool(j, "known", p->known);
                        if (!p->known)
                                plan_json_string(j, "why", p->why);
                        for (size_t w = 0; p->known && w < STORE_SIZE_WAYS; w++) {
                                plan_json_key(j, s->way_keys[w]);
                                plan_json_open(j, '{');
                                plan_json_uint(j, "objects", p->objects[w]);
                                plan_json_uint(j, "allocated", p->alloc[w]);
                                plan_json_close(j, '}');
                        }
                        plan_json_close(j, '}');
                }
                plan_json_close(j, ']');
        }
        plan_json_close(j, '}');
}

int plan_json_render_status(const Inventory *inv, msec_t now, bool allocated, FILE *f) {
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
        plan_json_string(j, "now", util_format_timestamp(buf, sizeof buf, now));
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
        uint64_t cold, orig;
        size_t n_cold;
        inventory_cold_totals(inv, &n_cold, &cold, &orig);
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
        /* every tree whose store measures it; one it cannot walk is left out (the text says
         * so) */
        plan_json_key(j, "breakdown");
        plan_json_open(j, '[');
        for (size_t t = 0; t < inv->n_trees; t++) {
                StoreSize s = {};

                r = store_measure(inv, t, &s);
                if (r >= 0)
                        plan_json_breakdown(j, &inv->trees[t], &s, allocated);
                store_size_done(&s);
                if (r == -ENOMEM)
                        return r;
        }
        plan_json_close(j, ']');
        return plan_json_end(j, f);
}
