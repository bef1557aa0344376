/* render.c: the human renderings of a plan (qgc --dry-run) and of disk use (qgc status).
 * Every line fits RenderOptions.columns: long fields are cut with "…". */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"

#define RENDER_ID_WIDTH 36
#define RENDER_VERB_WIDTH 13 /* "would archive" */
#define RENDER_NUM_WIDTH 6
#define RENDER_MIN_REASON 12
#define RENDER_BAR_WIDTH 20

static unsigned render_columns(const RenderOptions *o) {
        return o && o->columns > 0 ? o->columns : 100;
}

/* Display columns of a clean UTF-8 string (one per code point). */
static size_t render_width(const char *s) {
        size_t w = 0;
        for (; *s; s++)
                if (((unsigned char)*s & 0xc0) != 0x80)
                        w++;
        return w;
}

/* Print s (cleaned for the terminal) in at most width columns, cut with "…", padded when asked
 * (right-aligned when right). */
static void render_pad(FILE *f, size_t n) {
        static const char spaces[] = "                                ";

        while (n > 0) {
                size_t k = MIN(n, sizeof(spaces) - 1);
                fwrite(spaces, 1, k, f);
                n -= k;
        }
}

static int render_field(FILE *f, const char *s, size_t width, bool pad, bool right) {
        _cleanup_free_ char *c = NULL;
        const char *q = s ?: "";
        size_t w, cut = 0, cols = 0;

        /* fast path: printable ASCII that fits needs no cleaning and no copy */
        while ((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f)
                q++;
        if (*q == '\0' && (size_t)(q - (s ?: "")) <= width) {
                w = (size_t)(q - (s ?: ""));
                if (pad && right)
                        render_pad(f, width - w);
                fwrite(s ?: "", 1, w, f);
                if (pad && !right)
                        render_pad(f, width - w);
                return 0;
        }
        c = plan_clean_string(s, /* for_terminal= */ true);
        if (!c)
                return -ENOMEM;
        w = render_width(c);
        if (w > width) {
                /* keep width-1 columns, then the ellipsis */
                while (c[cut] && cols < (width > 0 ? width - 1 : 0)) {
                        cut++;
                        while (((unsigned char)c[cut] & 0xc0) == 0x80)
                                cut++;
                        cols++;
                }
                c[cut] = '\0';
                fputs(c, f);
                if (width > 0)
                        fputs("…", f);
                return 0;
        }
        if (pad && right)
                fprintf(f, "%*s", (int)(width - w), "");
        fputs(c, f);
        if (pad && !right)
                fprintf(f, "%*s", (int)(width - w), "");
        return 0;
}

static const char *render_verb(Verb v) {
        switch (v) {
        case VERB_ARCHIVE:
                return "would archive";
        case VERB_DELETE:
                return "would delete";
        case VERB_SKIP:
                return "skip";
        default:
                return "keep";
        }
}

/* "no sessions found in A, B" */
static int render_nothing(const Inventory *inv, FILE *f) {
        fputs("no sessions found in ", f);
        if (inv->n_trees == 0)
                fputs("(no Qwen trees)", f);
        for (size_t t = 0; t < inv->n_trees; t++) {
                _cleanup_free_ char *c =
                        plan_clean_string(inv->trees[t].runtime_dir, /* for_terminal= */ true);
                if (!c)
                        return -ENOMEM;
                fprintf(f, "%s%s", t > 0 ? ", " : "", c);
        }
        fputc('\n', f);
        return 0;
}

static size_t render_item_tree(const Plan *p, const PlanItem *it) {
        return it->is_orphan ? p->inv->orphans[it->index].tree : p->inv->sessions[it->index].tree;
}

/* Whether items a and b belong to the same table. */
static bool render_same_group(const Plan *p, const PlanItem *a, const PlanItem *b) {
        bool va, vb;
        if (render_item_tree(p, a) != render_item_tree(p, b) || a->is_orphan != b->is_orphan)
                return false;
        if (a->is_orphan)
                return true; /* one orphan table per tree */
        return streq(plan_item_group(p, a, &va), plan_item_group(p, b, &vb)) && va == vb;
}

static void render_item_size(const Plan *p, const PlanItem *it, uint64_t *bytes, msec_t *idle) {
        if (it->is_orphan) {
                const Orphan *o = &p->inv->orphans[it->index];
                *bytes = o->bytes;
                *idle = MAX(p->now - o->mtime, (msec_t)0);
        } else {
                const Session *s = &p->inv->sessions[it->index];
                *bytes = s->bytes;
                *idle = MAX(p->now - s->last_activity, (msec_t)0);
        }
}

/* The header line of the table for items [k, e). */
static int render_header(const Plan *p, size_t k, size_t e, unsigned cols, FILE *f) {
        const PlanItem *it = &p->items[k];
        uint64_t n[_VERB_MAX] = {}, b[_VERB_MAX] = {}, total = 0;
        char sz[FORMAT_BYTES_MAX], sz2[FORMAT_BYTES_MAX];
        _cleanup_(strbuf_done) StrBuf sb = {};
        bool verified;
        const char *g = plan_item_group(p, it, &verified);
        int r;

        for (size_t j = k; j < e; j++) {
                uint64_t bytes;
                msec_t idle;
                Verb v = plan_item_verb(&p->items[j]);
                render_item_size(p, &p->items[j], &bytes, &idle);
                if (v >= 0 && v < _VERB_MAX) {
                        n[v]++;
                        b[v] += bytes;
                }
                total += bytes;
        }
        if (it->is_orphan)
                r = strbuf_printf(&sb, "orphans: %zu, %s", e - k, format_bytes(sz, sizeof sz, total));
        else if (verified)
                r = strbuf_printf(&sb, "%s  [projects/%s]  %zu session%s, %s", g,
                                  p->inv->sessions[it->index].project_dir ?: "?", e - k,
                                  e - k == 1 ? "" : "s", format_bytes(sz, sizeof sz, total));
        else
                r = strbuf_printf(&sb, "(unverified owner)  [projects/%s]  %zu session%s, %s", g,
                                  e - k, e - k == 1 ? "" : "s", format_bytes(sz, sizeof sz, total));
        if (r >= 0 && n[VERB_DELETE] > 0)
                r = strbuf_printf(&sb, "; would delete %" PRIu64 " (%s)", n[VERB_DELETE],
                                  format_bytes(sz2, sizeof sz2, b[VERB_DELETE]));
        if (r >= 0 && n[VERB_ARCHIVE] > 0)
                r = strbuf_printf(&sb, "; would archive %" PRIu64 " (%s)", n[VERB_ARCHIVE],
                                  format_bytes(sz2, sizeof sz2, b[VERB_ARCHIVE]));
        if (r >= 0 && n[VERB_SKIP] > 0)
                r = strbuf_printf(&sb, "; skip %" PRIu64, n[VERB_SKIP]);
        if (r < 0)
                return -ENOMEM;
        r = render_field(f, sb.buf, cols, /* pad= */ false, /* right= */ false);
        fputc('\n', f);
        return r;
}

/* A row assembled in memory and written with one fwrite() (rows are most of the output). */
typedef struct RenderLine {
        FILE *f;
        size_t len;
        char buf[2048];
} RenderLine;

static void render_line_flush(RenderLine *l) {
        if (l->len > 0)
                fwrite(l->buf, 1, l->len, l->f);
        l->len = 0;
}

static void render_line_put(RenderLine *l, const char *s, size_t n) {
        if (l->len + n > sizeof(l->buf)) {
                render_line_flush(l);
                if (n > sizeof(l->buf)) {
                        fwrite(s, 1, n, l->f);
                        return;
                }
        }
        memcpy(l->buf + l->len, s, n);
        l->len += n;
}

static void render_line_pad(RenderLine *l, size_t n) {
        static const char spaces[] = "                                ";

        while (n > 0) {
                size_t k = MIN(n, sizeof(spaces) - 1);
                render_line_put(l, spaces, k);
                n -= k;
        }
}

/* render_field() into the line: printable ASCII that fits is copied here, anything else goes
 * through render_field() itself. */
static int render_line_field(RenderLine *l, const char *s, size_t width, bool pad, bool right) {
        const char *q = s ?: "";
        size_t w;

        while ((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f)
                q++;
        w = (size_t)(q - (s ?: ""));
        if (*q != '\0' || w > width) {
                render_line_flush(l);
                return render_field(l->f, s, width, pad, right);
        }
        if (pad && right)
                render_line_pad(l, width - w);
        render_line_put(l, s ?: "", w);
        if (pad && !right)
                render_line_pad(l, width - w);
        return 0;
}

/* One row: SESSION VERB IDLE SIZE REASON. */
static int render_row(const Plan *p, const PlanItem *it, size_t reason_w, FILE *f) {
        char idle_s[FORMAT_DURATION_MAX], size_s[FORMAT_BYTES_MAX];
        RenderLine l;
        uint64_t bytes;
        msec_t idle;
        int r;

        l.f = f;
        l.len = 0;
        render_item_size(p, it, &bytes, &idle);
        render_line_put(&l, "  ", 2);
        r = render_line_field(&l, it->is_orphan ? p->inv->orphans[it->index].name
                                                : p->inv->sessions[it->index].id,
                              RENDER_ID_WIDTH, true, false);
        render_line_put(&l, " ", 1);
        if (r >= 0)
                r = render_line_field(&l, render_verb(plan_item_verb(it)), RENDER_VERB_WIDTH, true,
                                      false);
        render_line_put(&l, " ", 1);
        if (r >= 0)
                r = render_line_field(&l, format_duration(idle_s, sizeof idle_s, idle),
                                      RENDER_NUM_WIDTH, true, true);
        render_line_put(&l, " ", 1);
        if (r >= 0)
                r = render_line_field(&l, format_bytes(size_s, sizeof size_s, bytes),
                                      RENDER_NUM_WIDTH, true, true);
        render_line_put(&l, "  ", 2);
        if (r >= 0)
                r = render_line_field(&l, it->verdict->reason ?: "", reason_w, false, false);
        render_line_put(&l, "\n", 1);
        render_line_flush(&l);
        return r;
}

static size_t render_reason_width(unsigned cols) {
        size_t fixed = 2 + RENDER_ID_WIDTH + 1 + RENDER_VERB_WIDTH + 1 + RENDER_NUM_WIDTH + 1 +
                       RENDER_NUM_WIDTH + 2;
        return cols > fixed + RENDER_MIN_REASON ? cols - fixed : RENDER_MIN_REASON;
}

/* Column titles. */
static void render_titles(size_t reason_w, FILE *f) {
        fprintf(f, "  %-*s %-*s %*s %*s  %s\n", RENDER_ID_WIDTH, "SESSION", RENDER_VERB_WIDTH,
                "VERB", RENDER_NUM_WIDTH, "IDLE", RENDER_NUM_WIDTH, "SIZE",
                reason_w >= 6 ? "REASON" : "");
}

/* The summary: sessions and bytes per verb, per rule, and the protections that fired. */
static int render_summary(const Plan *p, unsigned cols, FILE *f) {
        uint64_t n[_VERB_MAX] = {}, b[_VERB_MAX] = {}, on[_VERB_MAX] = {}, ob[_VERB_MAX] = {};
        const char *rules[64];
        uint64_t rn[64] = {}, rb[64] = {};
        unsigned pn[_PROT_MAX] = {}, last_prot = _PROT_MAX;
        const char *last_rule = NULL;
        size_t n_rules = 0;
        char sz[FORMAT_BYTES_MAX], ts[FORMAT_TIMESTAMP_MAX];
        _cleanup_(strbuf_done) StrBuf sb = {};
        int r = 0;

        for (size_t k = 0; k < p->n_items; k++) {
                const PlanItem *it = &p->items[k];
                Verb v = plan_item_verb(it);
                uint64_t bytes;
                msec_t idle;

                if (v < 0 || v >= _VERB_MAX)
                        continue;
                render_item_size(p, it, &bytes, &idle);
                if (it->is_orphan) {
                        on[v]++;
                        ob[v] += bytes;
                        continue;
                }
                n[v]++;
                b[v] += bytes;
                if ((v == VERB_ARCHIVE || v == VERB_DELETE) && it->verdict->rule) {
                        size_t j;
                        for (j = 0; j < n_rules; j++)
                                if (streq(rules[j], it->verdict->rule))
                                        break;
                        if (j == n_rules && n_rules < ELEMENTSOF(rules))
                                rules[n_rules++] = it->verdict->rule;
                        if (j < n_rules) {
                                rn[j]++;
                                rb[j] += bytes;
                        }
                }
                /* rules are static strings: look each distinct pointer up once */
                if (it->verdict->rule != last_rule) {
                        last_rule = it->verdict->rule;
                        last_prot = _PROT_MAX;
                        for (unsigned i = 0; last_rule && i < _PROT_MAX; i++)
                                if (streq(last_rule, protection_to_string((Protection)(1u << i)))) {
                                        last_prot = i;
                                        break;
                                }
                }
                if (last_prot < _PROT_MAX)
                        pn[last_prot]++;
        }

        fprintf(f, "Summary (dry run at %s, nothing was changed):\n",
                format_timestamp(ts, sizeof ts, p->now));
        static const Verb order[] = { VERB_DELETE, VERB_ARCHIVE, VERB_SKIP, VERB_KEEP };
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                fprintf(f, "  %-13s %6" PRIu64 " session%s %8s\n", render_verb(order[i]),
                        n[order[i]], n[order[i]] == 1 ? " " : "s",
                        format_bytes(sz, sizeof sz, b[order[i]]));
        if (p->inv->n_orphans > 0)
                fprintf(f, "  orphans: would delete %" PRIu64 " (%s), keep %" PRIu64 "\n",
                        on[VERB_DELETE], format_bytes(sz, sizeof sz, ob[VERB_DELETE]),
                        on[VERB_KEEP]);
        /* archiving is a rename on the same disk: only deletions free space */
        fprintf(f, "  would free %8s (deletions and orphans)\n",
                format_bytes(sz, sizeof sz, b[VERB_DELETE] + ob[VERB_DELETE]));
        fprintf(f, "  would move %8s to the archive (frees no space)\n",
                format_bytes(sz, sizeof sz, b[VERB_ARCHIVE]));
        if (n_rules > 0) {
                fputs("  by rule:\n", f);
                for (size_t j = 0; j < n_rules; j++)
                        fprintf(f, "    %-17s %6" PRIu64 " session%s %8s\n", rules[j], rn[j],
                                rn[j] == 1 ? " " : "s", format_bytes(sz, sizeof sz, rb[j]));
        }
        for (unsigned i = 0; r >= 0 && i < _PROT_MAX; i++)
                if (pn[i] > 0)
                        r = strbuf_printf(&sb, "%s%s %u", sb.len ? ", " : "",
                                          protection_to_string((Protection)(1u << i)), pn[i]);
        if (r < 0)
                return -ENOMEM;
        fputs("  protections fired: ", f);
        r = render_field(f, sb.len ? sb.buf : "none", cols > 22 ? cols - 22 : 8, false, false);
        fputc('\n', f);
        if (r >= 0) {
                PlanHeldBack h;
                _cleanup_free_ char *w = NULL;

                plan_held_back(p, &h);
                if (h.n > 0) {
                        w = plan_held_back_warning(&h);
                        if (!w)
                                return -ENOMEM;
                        fprintf(f, "  warning: %s\n", w);
                }
        }
        return r;
}

/* One path of a step, cleaned for the terminal. */
static int render_step_path(const PlanPath *pp, FILE *f) {
        _cleanup_free_ char *from = plan_clean_string(pp->from, /* for_terminal= */ true);
        _cleanup_free_ char *to = pp->to ? plan_clean_string(pp->to, true) : NULL;

        if (!from || (pp->to && !to))
                return -ENOMEM;
        if (to)
                fprintf(f, "    '%s' -> '%s'\n", from, to);
        else
                fprintf(f, "    remove '%s'\n", from);
        return 0;
}

int plan_render_steps_text(const Plan *p, FILE *f) {
        for (size_t i = 0; i < p->n_steps; i++) {
                const PlanStep *st = &p->steps[i];
                _cleanup_free_ char *id = plan_clean_string(st->session_id, true);
                _cleanup_free_ char *why = st->why ? plan_clean_string(st->why, true) : NULL;
                int r;

                if (!id || (st->why && !why))
                        return -ENOMEM;
                switch (st->kind) {
                case PLAN_STEP_RESTORE:
                        if (why)
                                fprintf(f, "cannot restore session %s: %s\n", id, why);
                        else
                                fprintf(f, "would restore session %s:\n", id);
                        break;
                case PLAN_STEP_RECOVER_DELETE:
                        fprintf(f, "recover: would finish the interrupted delete of session %s:\n",
                                id);
                        break;
                case PLAN_STEP_RECOVER_TEMP:
                        fputs("recover: would remove a stale temporary file of qgc:\n", f);
                        break;
                default:
                        continue;
                }
                for (size_t k = 0; k < st->n_paths; k++) {
                        r = render_step_path(&st->paths[k], f);
                        if (r < 0)
                                return r;
                }
        }
        if (p->n_steps > 0 && !p->is_restore)
                fputc('\n', f);
        return 0;
}

int plan_render_text(const Plan *p, const RenderOptions *o, FILE *f) {
        unsigned cols = render_columns(o);
        size_t reason_w = render_reason_width(cols);
        bool show_keep = o ? o->show_keep : true;
        size_t last_tree = SIZE_MAX;
        int r;

        r = plan_render_steps_text(p, f);
        if (r < 0 || p->is_restore)
                return r;
        if (p->inv->n_sessions == 0 && p->inv->n_orphans == 0)
                return render_nothing(p->inv, f);

        for (size_t k = 0; k < p->n_items;) {
                size_t e = k + 1, tree = render_item_tree(p, &p->items[k]);

                while (e < p->n_items && render_same_group(p, &p->items[k], &p->items[e]))
                        e++;
                if (tree != last_tree && p->inv->n_trees > 1 && tree < p->inv->n_trees) {
                        fputs("tree ", f);
                        r = render_field(f, p->inv->trees[tree].runtime_dir, cols > 5 ? cols - 5 : 1,
                                         false, false);
                        if (r < 0)
                                return r;
                        fputc('\n', f);
                }
                last_tree = tree;
                r = render_header(p, k, e, cols, f);
                if (r < 0)
                        return r;
                render_titles(reason_w, f);
                for (size_t j = k; j < e; j++) {
                        if (!show_keep && plan_item_verb(&p->items[j]) == VERB_KEEP)
                                continue;
                        r = render_row(p, &p->items[j], reason_w, f);
                        if (r < 0)
                                return r;
                }
                fputc('\n', f);
                k = e;
        }
        return render_summary(p, cols, f);
}

/* Disk use of one project for qgc status. */
typedef struct RenderUse {
        size_t tree;
        const char *group;
        bool verified;
        unsigned n_active, n_archived;
        uint64_t bytes, bytes_alloc;
        msec_t oldest, newest;
} RenderUse;

/* Largest first, then tree and name. */
static int render_use_cmp(const void *x, const void *y) {
        const RenderUse *a = x, *b = y;
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

static bool render_session_verified(const Session *s) {
        return s->cwd && (s->owner == OWNER_OK || s->owner == OWNER_WORKTREE ||
                          s->owner == OWNER_CLAIM);
}

static const char *render_session_group(const Session *s) {
        return render_session_verified(s) ? s->cwd : (s->project_dir ?: "");
}

/* Sessions by tree, verified first, project. */
static int render_session_cmp(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];
        bool va = render_session_verified(a), vb = render_session_verified(b);

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (va != vb)
                return va ? -1 : 1;
        return strcmp(render_session_group(a), render_session_group(b));
}

/* Aggregate the inventory per (tree, project), largest first within each tree. */
static int render_use_collect(const Inventory *inv, RenderUse **ret, size_t *ret_n) {
        _cleanup_free_ RenderUse *u = calloc(inv->n_sessions ?: 1, sizeof(RenderUse));
        _cleanup_free_ size_t *idx = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        size_t n = 0;

        if (!u || !idx)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                idx[i] = i;
        qsort_r(idx, inv->n_sessions, sizeof(size_t), render_session_cmp, (void *)inv);
        for (size_t k = 0; k < inv->n_sessions; k++) {
                const Session *s = &inv->sessions[idx[k]];
                bool verified = render_session_verified(s);
                const char *g = render_session_group(s);
                RenderUse *cur = n > 0 ? &u[n - 1] : NULL;

                if (!cur || cur->tree != s->tree || cur->verified != verified ||
                    !streq(cur->group, g)) {
                        cur = &u[n++];
                        *cur = (RenderUse){ .tree = s->tree,
                                            .group = g,
                                            .verified = verified,
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
        qsort(u, n, sizeof(RenderUse), render_use_cmp);
        *ret = TAKE_PTR(u);
        *ret_n = n;
        return 0;
}

/* The archive's size (it frees no space: a rename on the same disk) and the free space of each
 * tree's file system. */
static int render_status_space(const Inventory *inv, FILE *f) {
        char a[FORMAT_BYTES_MAX], b[FORMAT_BYTES_MAX];
        uint64_t archived = 0;
        size_t n_archived = 0;

        for (size_t i = 0; i < inv->n_sessions; i++)
                if (inv->sessions[i].state == SESSION_ARCHIVED) {
                        n_archived++;
                        archived += inv->sessions[i].bytes_alloc;
                }
        fprintf(f, "archive: %zu session%s, %s (archiving frees no space)\n", n_archived,
                n_archived == 1 ? "" : "s", format_bytes(a, sizeof a, archived));
        for (size_t t = 0; t < inv->n_trees; t++) {
                const Tree *tr = &inv->trees[t];

                if (!tr->fs_known)
                        continue;
                fprintf(f, "file system: %s free of %s", format_bytes(a, sizeof a, tr->fs_avail),
                        format_bytes(b, sizeof b, tr->fs_size));
                if (inv->n_trees > 1) {
                        _cleanup_free_ char *c = plan_clean_string(tr->runtime_dir, true);
                        if (!c)
                                return -ENOMEM;
                        fprintf(f, " (%s)", c);
                }
                fputc('\n', f);
        }
        return 0;
}

int plan_render_status(const Inventory *inv, msec_t now, const RenderOptions *o, FILE *f) {
        _cleanup_free_ RenderUse *u = NULL;
        unsigned cols = render_columns(o);
        /* PROJECT ACTIVE ARCHIVED DISK OLDEST NEWEST BAR */
        size_t fixed = 1 + 6 + 1 + 8 + 1 + 6 + 1 + 6 + 1 + 6 + 2, bar_w, proj_w; /* 39 */
        uint64_t max = 0, total = 0;
        size_t n = 0, last_tree = SIZE_MAX;
        char d[FORMAT_BYTES_MAX], old_s[FORMAT_DURATION_MAX], new_s[FORMAT_DURATION_MAX];
        char bar[RENDER_BAR_WIDTH + 1];
        int r;

        if (inv->n_sessions == 0)
                return render_nothing(inv, f);
        r = render_use_collect(inv, &u, &n);
        if (r < 0)
                return r;
        for (size_t j = 0; j < n; j++) {
                max = MAX(max, u[j].bytes_alloc);
                total += u[j].bytes_alloc;
        }
        bar_w = cols >= fixed + 20 + RENDER_BAR_WIDTH ? RENDER_BAR_WIDTH
                : cols >= fixed + 20 + 5              ? cols - fixed - 20
                                                      : 0;
        proj_w = cols > fixed + bar_w + 10 ? cols - fixed - bar_w : 10;

        for (size_t j = 0; j < n; j++) {
                size_t len = 0;

                if (u[j].tree != last_tree) {
                        if (inv->n_trees > 1 && u[j].tree < inv->n_trees) {
                                fputs("tree ", f);
                                r = render_field(f, inv->trees[u[j].tree].runtime_dir,
                                                 cols > 5 ? cols - 5 : 1, false, false);
                                if (r < 0)
                                        return r;
                                fputc('\n', f);
                        }
                        r = render_field(f, "PROJECT", proj_w, true, false);
                        if (r < 0)
                                return r;
                        fprintf(f, " %6s %8s %6s %6s %6s%s\n", "ACTIVE", "ARCHIVED", "DISK",
                                "OLDEST", "NEWEST", bar_w > 0 ? "  USE" : "");
                        last_tree = u[j].tree;
                }
                if (max > 0 && bar_w > 0) {
                        len = (size_t)((double)u[j].bytes_alloc * (double)bar_w / (double)max + 0.5);
                        if (len == 0 && u[j].bytes_alloc > 0)
                                len = 1;
                }
                memset(bar, '#', len);
                bar[len] = '\0';
                if (u[j].verified)
                        r = render_field(f, u[j].group, proj_w, true, false);
                else {
                        _cleanup_free_ char *label = strprintf("(unverified) projects/%s", u[j].group);
                        if (!label)
                                return -ENOMEM;
                        r = render_field(f, label, proj_w, true, false);
                }
                if (r < 0)
                        return r;
                fprintf(f, " %6u %8u %6s %6s %6s%s%s\n", u[j].n_active, u[j].n_archived,
                        format_bytes(d, sizeof d, u[j].bytes_alloc),
                        format_duration(old_s, sizeof old_s, MAX(now - u[j].oldest, (msec_t)0)),
                        format_duration(new_s, sizeof new_s, MAX(now - u[j].newest, (msec_t)0)),
                        bar_w > 0 ? "  " : "", bar);
        }
        fprintf(f, "total: %zu project%s, %zu session%s, %s on disk\n", n, n == 1 ? "" : "s",
                inv->n_sessions, inv->n_sessions == 1 ? "" : "s", format_bytes(d, sizeof d, total));
        r = render_status_space(inv, f);
        if (r < 0)
                return r;
        if (inv->n_orphans > 0) {
                uint64_t ob = 0;
                for (size_t i = 0; i < inv->n_orphans; i++)
                        ob += inv->orphans[i].bytes_alloc;
                fprintf(f, "orphans: %zu (%s) with no transcript\n", inv->n_orphans,
                        format_bytes(d, sizeof d, ob));
        }
        return 0;
}
