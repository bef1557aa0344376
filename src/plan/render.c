/* render.c: the text plan (qgc --dry-run, --changes): its tables, rows, short session ids,
 * change list, summary and the steps in front of it; and the cell and wrapping helpers the text
 * renderings share (render.h; qgc status is render-status.c). Widths are display columns
 * (text_width()); a reason or a header that does not fit wraps onto indented lines, never cut. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"
#include "render.h"
#include "store.h"
#include "text.h"

unsigned render_columns(const RenderOptions *o) {
        return o && o->columns > 0 ? o->columns : 100;
}

void render_pad(FILE *f, size_t n) {
        static const char spaces[] = "                                ";

        while (n > 0) {
                size_t k = MIN(n, sizeof(spaces) - 1);
                fwrite(spaces, 1, k, f);
                n -= k;
        }
}

/* Print s (cleaned for the terminal), padded to width columns when asked (right-aligned when
 * right); never cut: a wider s is printed whole. */
int render_field(FILE *f, const char *s, size_t width, bool pad, bool right) {
        _cleanup_free_ char *c = NULL;
        const char *q = s ?: "";
        size_t w;

        /* fast path: printable ASCII needs no cleaning and no copy */
        while ((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f)
                q++;
        if (*q == '\0') {
                w = (size_t)(q - (s ?: ""));
                c = strdup(s ?: "");
        } else {
                c = text_clean(s, TEXT_TERMINAL);
                w = c ? text_width(c, strlen(c)) : 0;
        }
        if (!c)
                return -ENOMEM;
        if (pad && right && w < width)
                render_pad(f, width - w);
        fputs(c, f);
        if (pad && !right && w < width)
                render_pad(f, width - w);
        return 0;
}

/* Write the clean text c wrapped: its first line in first_w columns (the caller already wrote
 * what stands before it), each further line indented by indent and at most width columns.
 * Breaks at a space; a word longer than a line is broken at the width. Never cuts; ends the
 * last line with '\n'. */
void render_wrap_clean(FILE *f, const char *c, size_t first_w, size_t indent, size_t width) {
        size_t n = strlen(c), avail = first_w;
        bool first = true;

        width = MAX(width, (size_t)1);
        while (n > 0) {
                size_t fit = text_fit(c, n, avail, NULL), cut = fit, skip = 0;

                if (fit < n) {
                        /* break at the last space within what fits, else in the word */
                        for (size_t i = fit; i > 0; i--)
                                if (c[i] == ' ') {
                                        cut = i;
                                        break;
                                }
                        if (cut == 0 && fit == 0 && !first) {
                                /* not one character fits a whole line: write one anyway */
                                uint32_t cp;
                                cut = utf8_decode(c, n, &cp) ?: 1;
                        }
                        while (cut + skip < n && c[cut + skip] == ' ')
                                skip++;
                }
                fwrite(c, 1, cut, f);
                c += cut + skip;
                n -= cut + skip;
                fputc('\n', f);
                if (n > 0)
                        render_pad(f, indent);
                first = false;
                avail = width;
        }
}

/* render_wrap_clean() of s cleaned for the terminal; an empty s ends the line. */
int render_wrap(FILE *f, const char *s, size_t first_w, size_t indent, size_t width) {
        _cleanup_free_ char *c = text_clean(s, TEXT_TERMINAL);

        if (!c)
                return -ENOMEM;
        if (!*c) {
                fputc('\n', f);
                return 0;
        }
        render_wrap_clean(f, c, first_w, indent, width);
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
        case VERB_COMPRESS:
                return "would compress";
        default:
                return "keep";
        }
}

/* An item's verb: a Deep Code checkpoint repository is compacted, not deleted (the repository
 * stays; the branches of removed sessions and what nothing kept reaches go). */
static const char *render_item_verb(const Plan *p, const PlanItem *it) {
        Verb v = plan_item_verb(it);

        if (it->is_orphan && v == VERB_DELETE &&
            p->inv->orphans[it->index].kind == ORPHAN_DC_CHECKPOINTS)
                return "would compact";
        return render_verb(v);
}

#define RENDER_ID_MIN 8  /* short ids: the first 8 characters, more when needed */
#define RENDER_ID_MAX 36 /* a whole session id */

/* A session id (or an orphan's name) and its tree, for the short id widths: prefix is the id's
 * first 8 bytes (NUL-padded) as a big-endian number, which orders like them, so that most
 * comparisons need no strcmp(); item: a session's index, or n_sessions + an orphan's. 16
 * bytes: every id of the plan is sorted, with qsort()'s copy beside. */
typedef struct RenderId {
        uint64_t prefix;
        uint32_t tree;
        uint32_t item;
} RenderId;

static const char *render_id_name(const Inventory *inv, uint32_t item) {
        return item < inv->n_sessions ? inv->sessions[item].id
                                      : inv->orphans[item - inv->n_sessions].name;
}

static RenderId render_id_make(size_t tree, const char *id, size_t item) {
        uint64_t v = 0;
        size_t i = 0;

        for (; i < 8 && id[i]; i++)
                v = (v << 8) | (unsigned char)id[i];
        return (RenderId){ .prefix = i == 0 ? 0 : v << (8 * (8 - i)),
                           .tree = (uint32_t)tree,
                           .item = (uint32_t)item };
}

static int render_id_cmp(const void *x, const void *y, void *userdata) {
        const RenderId *a = x, *b = y;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        if (a->prefix != b->prefix)
                return a->prefix < b->prefix ? -1 : 1;
        return strcmp(render_id_name(userdata, a->item), render_id_name(userdata, b->item));
}

/* Per tree, the fewest leading characters of the ids (at least RENDER_ID_MIN) that tell every
 * session of the tree apart (and the orphans named by a session id). ret[t]; malloc'ed. */
static int render_id_widths(const Inventory *inv, size_t **ret) {
        _cleanup_free_ RenderId *ids = NULL;
        _cleanup_free_ size_t *w = calloc(inv->n_trees + 1, sizeof(size_t));
        size_t n = 0;

        if (!w)
                return -ENOMEM;
        for (size_t t = 0; t <= inv->n_trees; t++)
                w[t] = RENDER_ID_MIN;
        /* Session.tree is 32 bits (inventory_add_tree()); so are the items of a plan_sort()ed
         * plan: else the ids are not shortened */
        if (inv->n_sessions + inv->n_orphans >= UINT32_MAX || inv->n_trees >= UINT32_MAX) {
                for (size_t t = 0; t <= inv->n_trees; t++)
                        w[t] = RENDER_ID_MAX;
                *ret = TAKE_PTR(w);
                return 0;
        }
        ids = calloc(inv->n_sessions + inv->n_orphans + 1, sizeof(RenderId));
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                ids[n++] = render_id_make(inv->sessions[i].tree, inv->sessions[i].id, i);
        for (size_t i = 0; i < inv->n_orphans; i++)
                if (inv->orphans[i].kind != ORPHAN_EMPTY_PROJECT && inv->orphans[i].name)
                        ids[n++] = render_id_make(inv->orphans[i].tree, inv->orphans[i].name,
                                                  inv->n_sessions + i);
        qsort_r(ids, n, sizeof(RenderId), render_id_cmp, (void *)inv);
        for (size_t k = 1; k < n; k++) {
                const char *a = render_id_name(inv, ids[k - 1].item),
                           *b = render_id_name(inv, ids[k].item);
                size_t c = 0;

                if (ids[k - 1].tree != ids[k].tree || streq(a, b))
                        continue; /* an active and an archived copy are one session */
                while (a[c] && a[c] == b[c])
                        c++;
                if (ids[k].tree < inv->n_trees)
                        w[ids[k].tree] = MAX(w[ids[k].tree], MIN(c + 1, (size_t)RENDER_ID_MAX));
        }
        *ret = TAKE_PTR(w);
        return 0;
}

#define RENDER_VERB_WIDTH 13 /* "would archive" */
/* The verb column: one wider in a plan that compresses ("would compress"), so that plans
 * without it keep their layout. Set by render_text(). */
static int render_verb_w = RENDER_VERB_WIDTH;
#define RENDER_NUM_WIDTH 6
#define RENDER_MIN_REASON 24 /* below this the reason goes to its own lines */
#define RENDER_OWN_INDENT 6  /* ... indented this much */

/* "no sessions found in A, B" */
int render_nothing(const Inventory *inv, FILE *f) {
        fputs("no sessions found in ", f);
        if (inv->n_trees == 0)
                fputs("(no Qwen trees)", f);
        for (size_t t = 0; t < inv->n_trees; t++) {
                _cleanup_free_ char *c =
                        text_clean(inv->trees[t].runtime_dir, TEXT_TERMINAL);
                if (!c)
                        return -ENOMEM;
                fprintf(f, "%s%s", t > 0 ? ", " : "", c);
        }
        fputc('\n', f);
        return 0;
}

/* Whether items a and b belong to the same table. */
static bool render_same_group(const Plan *p, const PlanItem *a, const PlanItem *b) {
        bool va, vb;
        if (plan_item_tree(p, a) != plan_item_tree(p, b) || a->is_orphan != b->is_orphan)
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
                r = strbuf_printf(&sb, "orphans: %zu, %s", e - k,
                                  util_format_bytes(sz, sizeof sz, total));
        else if (verified)
                r = strbuf_printf(&sb, "%s  [projects/%s]  %zu session%s, %s", g,
                                  p->inv->sessions[it->index].project_dir ?: "?", e - k,
                                  e - k == 1 ? "" : "s", util_format_bytes(sz, sizeof sz, total));
        else
                r = strbuf_printf(&sb, "(unverified owner)  [projects/%s]  %zu session%s, %s", g,
                                  e - k, e - k == 1 ? "" : "s",
                                  util_format_bytes(sz, sizeof sz, total));
        if (r >= 0 && n[VERB_DELETE] > 0)
                r = strbuf_printf(&sb, "; would delete %" PRIu64 " (%s)", n[VERB_DELETE],
                                  util_format_bytes(sz2, sizeof sz2, b[VERB_DELETE]));
        if (r >= 0 && n[VERB_ARCHIVE] > 0)
                r = strbuf_printf(&sb, "; would archive %" PRIu64 " (%s)", n[VERB_ARCHIVE],
                                  util_format_bytes(sz2, sizeof sz2, b[VERB_ARCHIVE]));
        if (r >= 0 && n[VERB_COMPRESS] > 0)
                r = strbuf_printf(&sb, "; would compress %" PRIu64 " (%s)", n[VERB_COMPRESS],
                                  util_format_bytes(sz2, sizeof sz2, b[VERB_COMPRESS]));
        if (r >= 0 && n[VERB_SKIP] > 0)
                r = strbuf_printf(&sb, "; skip %" PRIu64, n[VERB_SKIP]);
        if (r < 0)
                return -ENOMEM;
        return render_wrap(f, sb.buf, cols, /* indent= */ 4, cols > 4 ? cols - 4 : 1);
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

/* Put s into the line in width columns, padded (right-aligned when right); s must fit (ids,
 * verbs, numbers). */
static int render_line_cell(RenderLine *l, const char *s, size_t width, bool right) {
        _cleanup_free_ char *c = NULL;
        const char *q = s ?: "";
        size_t w;

        while ((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f)
                q++;
        if (*q != '\0') {
                c = text_clean(s, TEXT_TERMINAL);
                if (!c)
                        return -ENOMEM;
                s = c;
                w = text_width(c, strlen(c));
        } else
                w = (size_t)(q - (s ?: ""));
        if (right && w < width)
                render_line_pad(l, width - w);
        render_line_put(l, s ?: "", strlen(s ?: ""));
        if (!right && w < width)
                render_line_pad(l, width - w);
        return 0;
}

/* The layout of the session tables. */
typedef struct RenderLayout {
        unsigned cols;
        size_t *id_w;   /* per tree: the short id width */
        size_t id_cur;  /* of the table being printed */
        size_t reason_w; /* 0: reasons go on their own lines */
} RenderLayout;

static size_t render_fixed_width(size_t id_w) {
        return 2 + id_w + 1 + (size_t)render_verb_w + 1 + RENDER_NUM_WIDTH + 1 + RENDER_NUM_WIDTH +
               2;
}

static void render_layout_tree(RenderLayout *lay, size_t tree) {
        size_t fixed = render_fixed_width(lay->id_w[tree]);

        lay->id_cur = lay->id_w[tree];
        lay->reason_w = lay->cols >= fixed + RENDER_MIN_REASON ? lay->cols - fixed : 0;
}

/* The reason after the row's fixed cells: on the row when it fits; wrapped in the reason
 * column when that is wide enough; else on its own lines, indented. Never cut. */
static int render_reason(RenderLine *l, const char *reason, const RenderLayout *lay,
                         size_t fixed) {
        const char *q = reason ?: "";
        size_t own_w = lay->cols > RENDER_OWN_INDENT + 20 ? lay->cols - RENDER_OWN_INDENT : 20;

        while ((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f)
                q++;
        if (*q == '\0' && (size_t)(q - (reason ?: "")) <= lay->reason_w) {
                render_line_put(l, "  ", 2);
                render_line_put(l, reason ?: "", (size_t)(q - (reason ?: "")));
                render_line_put(l, "\n", 1);
                render_line_flush(l);
                return 0;
        }
        if (lay->reason_w > 0) {
                render_line_put(l, "  ", 2);
                render_line_flush(l);
                return render_wrap(l->f, reason, lay->reason_w, fixed, lay->reason_w);
        }
        render_line_put(l, "\n", 1);
        render_line_flush(l);
        if (!reason || !*reason)
                return 0;
        render_pad(l->f, RENDER_OWN_INDENT);
        return render_wrap(l->f, reason, own_w, RENDER_OWN_INDENT, own_w);
}

/* The id column of an item: its short id; an orphan that is not a session's (an empty project
 * directory) by its whole name. */
static const char *render_item_id(const Plan *p, const PlanItem *it, size_t *ret_len) {
        const char *id;

        if (it->is_orphan) {
                const Orphan *o = &p->inv->orphans[it->index];
                id = o->name ?: "";
                *ret_len = o->kind == ORPHAN_EMPTY_PROJECT ? strlen(id) : 0;
        } else {
                id = p->inv->sessions[it->index].id;
                *ret_len = 0;
        }
        return id;
}

/* A hygiene item's path relative to its root (R, or G for plans), so that an admin can tell
 * which tmp/<hash>/ or project it is: "tmp/<hash>/x.output", and any orphan of a store that
 * names its orphans' paths; NULL (and *ret_oom false) for other items. Raw: the cells clean it (text.c). */
static char *render_hygiene_path(const Plan *p, const PlanItem *it, bool *ret_oom) {
        const Orphan *o = it->is_orphan ? &p->inv->orphans[it->index] : NULL;
        char *s;

        *ret_oom = false;
        if (!o)
                return NULL;
        /* a store that names its orphans' paths (StoreOps.orphan_path) is named by them: a
         * Deep Code project's "file-history" is told apart from another's */
        const StoreOps *store = p->inv->trees[o->tree].store;
        if (store && store->orphan_path)
                s = store->orphan_path(o);
        else if (!inventory_hygiene_kind(o->kind))
                return NULL;
        else
                s = util_strprintf("%s/%s", o->project_dir ?: "", o->name ?: "");
        *ret_oom = !s;
        return s;
}

/* One row: SESSION VERB IDLE SIZE REASON. */
/* Under a delete row, what the delete also removes from the files Qwen shares (erase.h), in the
 * reason column (or on its own indented lines, as reasons go); no line when there is nothing, so
 * other plans keep their layout. */
static int render_also_row(const Session *s, const RenderLayout *lay, size_t fixed, FILE *f) {
        _cleanup_(strbuf_done) StrBuf sb = {};
        size_t own_w = lay->cols > RENDER_OWN_INDENT + 20 ? lay->cols - RENDER_OWN_INDENT : 20;
        int r = 0;

        if (s->n_log_rows == 0 && !s->org_entry && !s->review_dir)
                return 0;
        r = strbuf_printf(&sb, "also:");
        if (r >= 0 && s->n_log_rows > 0)
                r = strbuf_printf(&sb, " %u prompt history row%s (logs.json)%s", s->n_log_rows,
                                  s->n_log_rows == 1 ? "" : "s",
                                  s->org_entry || s->review_dir ? "," : "");
        if (r >= 0 && s->org_entry)
                r = strbuf_printf(&sb, " its organization entry%s", s->review_dir ? "," : "");
        if (r >= 0 && s->review_dir)
                r = strbuf_printf(&sb, " its review scripts");
        if (r < 0)
                return r;
        if (lay->reason_w > 0) {
                render_pad(f, fixed);
                return render_wrap(f, sb.buf, lay->reason_w, fixed, lay->reason_w);
        }
        render_pad(f, RENDER_OWN_INDENT);
        return render_wrap(f, sb.buf, own_w, RENDER_OWN_INDENT, own_w);
}

static int render_row(const Plan *p, const PlanItem *it, const RenderLayout *lay, FILE *f) {
        char idle_s[FORMAT_DURATION_MAX], size_s[FORMAT_BYTES_MAX];
        _cleanup_free_ char *id = NULL, *hpath = NULL, *reason = NULL;
        RenderLine l;
        uint64_t bytes;
        msec_t idle;
        size_t whole, id_w = lay->id_cur;
        const char *full = render_item_id(p, it, &whole);
        bool oom;
        int r;

        hpath = render_hygiene_path(p, it, &oom);
        if (oom)
                return -ENOMEM;
        if (hpath) {
                full = hpath;
                whole = strlen(hpath);
        }
        l.f = f;
        l.len = 0;
        id = whole > 0 ? strdup(full) : strndup(full, id_w);
        reason = plan_item_reason(p, it);
        if (!id || !reason)
                return -ENOMEM;
        render_item_size(p, it, &bytes, &idle);
        render_line_put(&l, "  ", 2);
        r = render_line_cell(&l, id, id_w, false);
        render_line_put(&l, " ", 1);
        if (r >= 0)
                r = render_line_cell(&l, render_item_verb(p, it), (size_t)render_verb_w,
                                     false);
        render_line_put(&l, " ", 1);
        if (r >= 0)
                r = render_line_cell(&l, util_format_duration(idle_s, sizeof idle_s, idle),
                                     RENDER_NUM_WIDTH, true);
        render_line_put(&l, " ", 1);
        if (r >= 0)
                r = render_line_cell(&l, util_format_bytes(size_s, sizeof size_s, bytes),
                                     RENDER_NUM_WIDTH, true);
        if (r < 0)
                return r;
        if (whole > id_w) {
                /* a long orphan name: the reason on its own lines */
                RenderLayout own = *lay;
                own.reason_w = 0;
                return render_reason(&l, reason, &own, 0);
        }
        r = render_reason(&l, reason, lay, render_fixed_width(id_w));
        if (r >= 0 && !it->is_orphan && plan_item_verb(it) == VERB_DELETE)
                r = render_also_row(&p->inv->sessions[it->index], lay, render_fixed_width(id_w),
                                    f);
        return r;
}

/* Column titles. */
static void render_titles(const RenderLayout *lay, FILE *f) {
        fprintf(f, "  %-*s %-*s %*s %*s%s\n", (int)lay->id_cur, "SESSION", render_verb_w,
                "VERB", RENDER_NUM_WIDTH, "IDLE", RENDER_NUM_WIDTH, "SIZE",
                lay->reason_w > 0 ? "  REASON" : "");
}

/* "tree DIR" before the tables of a tree, when there are several. */
static int render_tree_line(const Plan *p, size_t tree, unsigned cols, FILE *f) {
        fputs("tree ", f);
        return render_wrap(f, p->inv->trees[tree].runtime_dir, cols > 5 ? cols - 5 : 1, 4,
                           cols > 4 ? cols - 4 : 1);
}

static int render_tables(const Plan *p, const RenderOptions *o, RenderLayout *lay, FILE *f) {
        bool show_keep = o ? o->show_keep : true;
        size_t last_tree = SIZE_MAX;
        int r;

        for (size_t k = 0; k < p->n_items;) {
                size_t e = k + 1, tree = plan_item_tree(p, &p->items[k]);

                while (e < p->n_items && render_same_group(p, &p->items[k], &p->items[e]))
                        e++;
                if (tree != last_tree && p->inv->n_trees > 1 && tree < p->inv->n_trees) {
                        r = render_tree_line(p, tree, lay->cols, f);
                        if (r < 0)
                                return r;
                }
                last_tree = tree;
                render_layout_tree(lay, MIN(tree, p->inv->n_trees));
                r = render_header(p, k, e, lay->cols, f);
                if (r < 0)
                        return r;
                render_titles(lay, f);
                for (size_t j = k; j < e; j++) {
                        if (!show_keep && plan_item_verb(&p->items[j]) == VERB_KEEP)
                                continue;
                        r = render_row(p, &p->items[j], lay, f);
                        if (r < 0)
                                return r;
                }
                fputc('\n', f);
                k = e;
        }
        return 0;
}

/* Most idle first, then id: the order of --changes within a project. */
static int render_idle_cmp(const void *x, const void *y, void *userdata) {
        const Plan *p = userdata;
        const PlanItem *a = &p->items[*(const size_t *)x], *b = &p->items[*(const size_t *)y];
        uint64_t ba, bb;
        msec_t ia, ib;
        size_t la, lb;

        render_item_size(p, a, &ba, &ia);
        render_item_size(p, b, &bb, &ib);
        if (ia != ib)
                return ia > ib ? -1 : 1;
        return strcmp(render_item_id(p, a, &la), render_item_id(p, b, &lb));
}

/* One line of --changes: VERB SESSION IDLE SIZE PROJECT REASON; the project is never cut (grep
 * finds every change of a project), the reason wraps onto its own lines when it does not fit. */
static int render_change(const Plan *p, const PlanItem *it, const RenderLayout *lay, FILE *f) {
        char idle_s[FORMAT_DURATION_MAX], size_s[FORMAT_BYTES_MAX];
        _cleanup_free_ char *id = NULL, *proj = NULL, *reason = NULL, *raw = NULL;
        bool verified;
        const char *g = plan_item_group(p, it, &verified);
        size_t whole, used, rw, own_w;
        const char *full = render_item_id(p, it, &whole);
        uint64_t bytes;
        msec_t idle;

        render_item_size(p, it, &bytes, &idle);
        if (it->is_orphan && inventory_hygiene_kind(p->inv->orphans[it->index].kind))
                whole = strlen(full); /* its name, and its directory as the project */
        id = whole > 0 ? text_clean(full, TEXT_TERMINAL) : strndup(full, lay->id_cur);
        proj = it->is_orphan && inventory_hygiene_kind(p->inv->orphans[it->index].kind) ? strdup(g)
               : it->is_orphan ? (*g ? util_strprintf("projects/%s", g) : strdup("file-history"))
               : verified      ? text_clean(g, TEXT_TERMINAL)
                               : util_strprintf("projects/%s", g);
        raw = plan_item_reason(p, it);
        reason = raw ? text_clean(raw, TEXT_TERMINAL) : NULL;
        if (!id || !proj || !reason)
                return -ENOMEM;
        if (!verified) {
                char *c = text_clean(proj, TEXT_TERMINAL);
                if (!c)
                        return -ENOMEM;
                free(proj);
                proj = c;
        }
        fprintf(f, "%-*s %-*s %*s %*s  %s", render_verb_w, render_item_verb(p, it),
                (int)lay->id_cur, id, RENDER_NUM_WIDTH,
                util_format_duration(idle_s, sizeof idle_s, idle), RENDER_NUM_WIDTH,
                util_format_bytes(size_s, sizeof size_s, bytes), proj);
        used = (size_t)render_verb_w + 1 + MAX(lay->id_cur, text_width(id, strlen(id))) + 1 +
               RENDER_NUM_WIDTH + 1 + RENDER_NUM_WIDTH + 2 + text_width(proj, strlen(proj)) + 2;
        rw = text_width(reason, strlen(reason));
        if (used + rw <= lay->cols) {
                fprintf(f, "  %s\n", reason);
                return 0;
        }
        fputc('\n', f);
        own_w = lay->cols > RENDER_OWN_INDENT + 20 ? lay->cols - RENDER_OWN_INDENT : 20;
        render_pad(f, RENDER_OWN_INDENT);
        render_wrap_clean(f, reason, own_w, RENDER_OWN_INDENT, own_w);
        return 0;
}

/* --changes: only what is not kept, one line per session naming its project, the most idle
 * first within a project. */
static int render_changes(const Plan *p, RenderLayout *lay, FILE *f) {
        _cleanup_free_ size_t *idx = calloc(p->n_items + 1, sizeof(size_t));
        size_t last_tree = SIZE_MAX;
        bool any = false;
        int r;

        if (!idx)
                return -ENOMEM;
        for (size_t k = 0; k < p->n_items;) {
                size_t e = k + 1, n = 0, tree = plan_item_tree(p, &p->items[k]);

                while (e < p->n_items && render_same_group(p, &p->items[k], &p->items[e]))
                        e++;
                for (size_t j = k; j < e; j++)
                        if (plan_item_verb(&p->items[j]) != VERB_KEEP ||
                            p->items[j].verdict->mark != 0) /* a stale entry's marker */
                                idx[n++] = j;
                qsort_r(idx, n, sizeof(size_t), render_idle_cmp, (void *)p);
                if (n > 0 && tree != last_tree && p->inv->n_trees > 1 && tree < p->inv->n_trees) {
                        r = render_tree_line(p, tree, lay->cols, f);
                        if (r < 0)
                                return r;
                        last_tree = tree;
                }
                render_layout_tree(lay, MIN(tree, p->inv->n_trees));
                for (size_t j = 0; j < n; j++) {
                        if (!any)
                                fprintf(f, "%-*s %-*s %*s %*s  %s\n", render_verb_w, "VERB",
                                        (int)lay->id_cur, "SESSION", RENDER_NUM_WIDTH, "IDLE",
                                        RENDER_NUM_WIDTH, "SIZE", "PROJECT  REASON");
                        any = true;
                        r = render_change(p, &p->items[idx[j]], lay, f);
                        if (r < 0)
                                return r;
                }
                k = e;
        }
        if (!any)
                fputs("no changes: every session is kept\n", f);
        fputc('\n', f);
        return 0;
}

/* One line per incomplete tree: which, that no tree-level decision was made there, and why
 * (inventory_tree_incomplete_why()). Nothing for a complete tree. */
static int render_incomplete(const Inventory *inv, unsigned cols, FILE *f) {
        for (size_t t = 0; t < inv->n_trees; t++) {
                const char *why = inventory_tree_incomplete_why(&inv->trees[t]);
                _cleanup_free_ char *line = NULL;
                int r;

                if (!why)
                        continue;
                line = util_strprintf(
                        "incomplete tree '%s': no tree-level decision (orphans, stale "
                        "files, tree caps) because %s",
                        inv->trees[t].runtime_dir, why);
                if (!line)
                        return -ENOMEM;
                fputs("  ", f);
                r = render_wrap(f, line, cols > 2 ? cols - 2 : 1, 4, cols > 4 ? cols - 4 : 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* One warning line of the summary (plan_foreach_warning()). */
static int render_summary_warning(void *userdata, const char *w, bool limit) {
        (void)limit;
        fprintf(userdata, "  warning: %s\n", w);
        return 0;
}

/* The summary: sessions and bytes per verb, per rule, and the protections that fired. */
static int render_summary(const Plan *p, unsigned cols, FILE *f) {
        uint64_t n[_VERB_MAX] = {}, b[_VERB_MAX] = {}, on[_VERB_MAX] = {}, ob[_VERB_MAX] = {};
        const char *rules[64];
        uint64_t rn[64] = {}, rb[64] = {}, n_cold = 0, cold_bytes = 0, cold_orig = 0;
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
                if (!it->is_orphan && inventory_session_is_cold(&p->inv->sessions[it->index])) {
                        n_cold++;
                        cold_bytes += p->inv->sessions[it->index].cold_bytes;
                        cold_orig += p->inv->sessions[it->index].cold_orig;
                }
                if ((v == VERB_ARCHIVE || v == VERB_DELETE || v == VERB_COMPRESS) &&
                    it->verdict->rule) {
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
                                if (streq(last_rule, policy_protection_to_string((Protection)(1u << i)))) {
                                        last_prot = i;
                                        break;
                                }
                }
                if (last_prot < _PROT_MAX)
                        pn[last_prot]++;
        }

        fprintf(f, "Summary (dry run at %s; nothing changed):\n",
                util_format_timestamp(ts, sizeof ts, p->now));
        static const Verb order[] = { VERB_DELETE, VERB_ARCHIVE, VERB_COMPRESS, VERB_SKIP,
                                      VERB_KEEP };
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (order[i] != VERB_COMPRESS || n[order[i]] > 0)
                        fprintf(f, "  %-*s %6" PRIu64 " session%s %8s\n", render_verb_w,
                                render_verb(order[i]), n[order[i]], n[order[i]] == 1 ? " " : "s",
                                util_format_bytes(sz, sizeof sz, b[order[i]]));
        if (p->inv->n_orphans > 0)
                fprintf(f, "  orphans: would delete %" PRIu64 " (%s), keep %" PRIu64 "\n",
                        on[VERB_DELETE], util_format_bytes(sz, sizeof sz, ob[VERB_DELETE]),
                        on[VERB_KEEP]);
        /* archiving is a rename on the same disk: only deletions free space */
        fprintf(f, "  would free %8s (deletions and orphans)\n",
                util_format_bytes(sz, sizeof sz, b[VERB_DELETE] + ob[VERB_DELETE]));
        fprintf(f, "  would move %8s to the archive (frees no space)\n",
                util_format_bytes(sz, sizeof sz, b[VERB_ARCHIVE]));
        if (n[VERB_COMPRESS] > 0) {
                /* the bytes the executor compresses, and an estimate said to be one (24.10) */
                PlanCompressForecast fc;
                char sz2[FORMAT_BYTES_MAX];

                plan_compress_forecast(p, &fc);
                fprintf(f,
                        "  would compress %s (their transcripts and sidecars) into the cold tier\n"
                        "    about %s after compression, estimated ",
                        util_format_bytes(sz, sizeof sz, fc.bytes_in),
                        util_format_bytes(sz2, sizeof sz2, fc.bytes_out));
                if (fc.measured)
                        fprintf(f, "from the tree's compressed sessions (1:%.1f)\n", fc.ratio);
                else if (fc.ratio == PLAN_COMPRESS_DEFAULT_RATIO)
                        fprintf(f, "at the default 1:%d (nothing compressed yet)\n",
                                PLAN_COMPRESS_DEFAULT_RATIO);
                else
                        fprintf(f, "from compressed sessions, 1:%d where none (1:%.1f)\n",
                                PLAN_COMPRESS_DEFAULT_RATIO, fc.ratio);
        }
        if (n_cold > 0) {
                char sz2[FORMAT_BYTES_MAX], sz3[FORMAT_BYTES_MAX];
                fprintf(f, "  compressed: %" PRIu64 " session%s, %s (of %s; %s saved)\n", n_cold,
                        n_cold == 1 ? "" : "s", util_format_bytes(sz, sizeof sz, cold_bytes),
                        util_format_bytes(sz2, sizeof sz2, cold_orig),
                        util_format_bytes(sz3, sizeof sz3, cold_orig - MIN(cold_bytes, cold_orig)));
        }
        if (n_rules > 0) {
                fputs("  by rule:\n", f);
                for (size_t j = 0; j < n_rules; j++)
                        fprintf(f, "    %-17s %6" PRIu64 " session%s %8s\n", rules[j], rn[j],
                                rn[j] == 1 ? " " : "s", util_format_bytes(sz, sizeof sz, rb[j]));
        }
        for (unsigned i = 0; r >= 0 && i < _PROT_MAX; i++)
                if (pn[i] > 0)
                        r = strbuf_printf(&sb, "%s%s %u", sb.len ? ", " : "",
                                          policy_protection_to_string((Protection)(1u << i)), pn[i]);
        if (r < 0)
                return -ENOMEM;
        fputs("  protections fired: ", f);
        r = render_wrap(f, sb.len ? sb.buf : "none", cols > 22 ? cols - 22 : 8, 4,
                        cols > 4 ? cols - 4 : 1);
        if (r >= 0)
                r = plan_foreach_warning(p, render_summary_warning, f);
        return r >= 0 ? render_incomplete(p->inv, cols, f) : r;
}

/* One path of a step, cleaned for the terminal. */
static int render_step_path(const PlanPath *pp, FILE *f) {
        _cleanup_free_ char *from = text_clean(pp->from, TEXT_TERMINAL);
        _cleanup_free_ char *to = pp->to ? text_clean(pp->to, TEXT_TERMINAL) : NULL;

        if (!from || (pp->to && !to))
                return -ENOMEM;
        if (to)
                fprintf(f, "    '%s' -> '%s'\n", from, to);
        else
                fprintf(f, "    remove '%s'\n", from);
        return 0;
}

static int render_steps_text(const Plan *p, FILE *f) {
        for (size_t i = 0; i < p->n_steps; i++) {
                const PlanStep *st = &p->steps[i];
                _cleanup_free_ char *id = text_clean(st->session_id, TEXT_TERMINAL);
                _cleanup_free_ char *why = st->why ? text_clean(st->why, TEXT_TERMINAL) : NULL;
                int r;

                if (!id || (st->why && !why))
                        return -ENOMEM;
                switch (st->kind) {
                case PLAN_STEP_RESTORE:
                        if (!p->is_restore) /* the recovery of an interrupted restore */
                                fprintf(f, "recover: would finish the interrupted restore of "
                                           "session %s%s%s:\n",
                                        id, why ? ", but cannot: " : "", why ?: "");
                        else if (why)
                                fprintf(f, "cannot restore session %s: %s\n", id, why);
                        else if (st->session == SIZE_MAX) /* compressed (restore.c) */
                                fprintf(f, "would restore session %s from the compressed "
                                           "archive:\n", id);
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

int render_text(const Plan *p, const RenderOptions *o, FILE *f) {
        _cleanup_free_ size_t *id_w = NULL;
        RenderLayout lay = { .cols = render_columns(o) };

        render_verb_w = RENDER_VERB_WIDTH;
        for (size_t k = 0; k < p->n_items; k++)
                if (plan_item_verb(&p->items[k]) == VERB_COMPRESS)
                        render_verb_w = (int)strlen("would compress");
        int r;

        r = render_steps_text(p, f);
        if (r < 0 || p->is_restore)
                return r;
        if (p->inv->n_sessions == 0 && p->inv->n_orphans == 0) {
                r = render_nothing(p->inv, f);
                return r < 0 ? r : render_incomplete(p->inv, render_columns(o), f);
        }
        r = render_id_widths(p->inv, &id_w);
        if (r < 0)
                return r;
        lay.id_w = id_w;
        r = o && o->changes ? render_changes(p, &lay, f) : render_tables(p, o, &lay, f);
        if (r < 0)
                return r;
        return render_summary(p, lay.cols, f);
}
