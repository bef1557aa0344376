/* render-status.c: qgc status's text: disk use per project (a table with bars; a project is
 * never cut: the bar shrinks or goes first, then a project too wide for the terminal gets a line
 * of its own above its numbers, wrapped as the plan's headers), the archive's size and each
 * tree's free space. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"
#include "reason.h"
#include "render.h"
#include "text.h"
#include "store.h"

#define RENDER_BAR_WIDTH 20

/* The label of a status row, cleaned for the terminal: the cwd of a verified project, else its
 * directory. NULL when out of memory. */
static char *render_use_label(const PlanUse *u) {
        _cleanup_free_ char *c = u->verified ? strdup(u->group)
                                             : util_strprintf("(unverified) projects/%s", u->group);

        return c ? text_clean(c, TEXT_TERMINAL) : NULL;
}

/* The display width of the widest project label of the status table no wider than limit (at
 * least "PROJECT"); *ret_widest gets the widest of all. */
static int render_use_width(const PlanUse *u, size_t n, size_t limit, size_t *ret_widest,
                            size_t *ret_w) {
        size_t w = strlen("PROJECT"), widest = w;

        for (size_t j = 0; j < n; j++) {
                _cleanup_free_ char *c = render_use_label(&u[j]);
                size_t cw;

                if (!c)
                        return -ENOMEM;
                cw = text_width(c, strlen(c));
                widest = MAX(widest, cw);
                if (cw <= limit)
                        w = MAX(w, cw);
        }
        *ret_widest = widest;
        *ret_w = w;
        return 0;
}

/* Does some tree's store keep archived sessions (a tree without a store: yes), or hold one? */
static bool render_status_archive(const Inventory *inv) {
        for (size_t t = 0; t < inv->n_trees; t++)
                if (!inv->trees[t].store || !inv->trees[t].store->no_archive)
                        return true;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (inv->sessions[i].state == SESSION_ARCHIVED)
                        return true;
        return false;
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
        if (render_status_archive(inv))
                fprintf(f, "archive: %zu session%s, %s (archiving frees no space)\n", n_archived,
                        n_archived == 1 ? "" : "s", util_format_bytes(a, sizeof a, archived));
        /* the cold tier, where there is one: its sessions are counted above at their size on
         * disk, the compressed files' (one size per session, issue 24.10); what they were */
        uint64_t cold, orig;
        size_t n_cold;
        inventory_cold_totals(inv, &n_cold, &cold, &orig);
        if (n_cold > 0)
                fprintf(f, "compressed: %zu of them, at their size on disk (%s before)\n", n_cold,
                        util_format_bytes(a, sizeof a, orig));
        for (size_t t = 0; t < inv->n_trees; t++) {
                const Tree *tr = &inv->trees[t];

                if (!tr->fs_known)
                        continue;
                fprintf(f, "file system: %s free of %s",
                        util_format_bytes(a, sizeof a, tr->fs_avail),
                        util_format_bytes(b, sizeof b, tr->fs_size));
                if (inv->n_trees > 1) {
                        _cleanup_free_ char *c = text_clean(tr->runtime_dir, TEXT_TERMINAL);
                        if (!c)
                                return -ENOMEM;
                        fprintf(f, " (%s)", c);
                }
                fputc('\n', f);
        }
        return 0;
}

int render_status_text(const Inventory *inv, msec_t now, const RenderOptions *o, FILE *f) {
        _cleanup_free_ PlanUse *u = NULL;
        unsigned cols = render_columns(o);
        /* PROJECT ACTIVE ARCHIVED DISK OLDEST NEWEST BAR */
        bool archive = render_status_archive(inv);
        size_t fixed = 1 + 6 + (archive ? 1 + 8 : 0) + 1 + 6 + 1 + 6 + 1 + 6 + 2, bar_w, proj_w,
               widest, avail;
        uint64_t max = 0, total = 0;
        size_t n = 0, last_tree = SIZE_MAX;
        char d[FORMAT_BYTES_MAX], old_s[FORMAT_DURATION_MAX], new_s[FORMAT_DURATION_MAX];
        char bar[RENDER_BAR_WIDTH + 1];
        int r;

        if (inv->n_sessions == 0)
                return render_nothing(inv, f);
        r = plan_status_collect(inv, &u, &n);
        if (r < 0)
                return r;
        for (size_t j = 0; j < n; j++) {
                max = MAX(max, u[j].bytes_alloc);
                total += u[j].bytes_alloc;
        }
        /* The project column is as wide as the widest project (a pipe has "1000 columns":
         * systemctl's way) while the bar shrinks down to 5, then without the bar (and its two
         * spaces); a project wider still is written on its own line (wrapped when wider than
         * the terminal, as the plan's headers) and its numbers on the next, under a column as
         * wide as the widest project that leaves a bar of 5. */
        avail = cols > fixed ? cols - fixed : 0;
        r = render_use_width(u, n, avail > 5 ? avail - 5 : 0, &widest, &proj_w);
        if (r < 0)
                return r;
        if (widest + 5 <= avail)
                proj_w = widest;
        else if (widest <= avail + 2) {
                proj_w = widest;
                avail = 0;
        }
        bar_w = avail >= proj_w + 5 ? MIN((size_t)RENDER_BAR_WIDTH, avail - proj_w) : 0;

        for (size_t j = 0; j < n; j++) {
                size_t len = 0;

                if (u[j].tree != last_tree) {
                        if (inv->n_trees > 1 && u[j].tree < inv->n_trees) {
                                _cleanup_free_ char *h = util_strprintf(
                                        "tree %s", inv->trees[u[j].tree].runtime_dir);
                                if (!h)
                                        return -ENOMEM;
                                r = render_wrap(f, h, cols, 4, cols > 4 ? cols - 4 : 1);
                                if (r < 0)
                                        return r;
                        }
                        r = render_field(f, "PROJECT", proj_w, true, false);
                        if (r < 0)
                                return r;
                        fprintf(f, " %6s", "ACTIVE");
                        if (archive)
                                fprintf(f, " %8s", "ARCHIVED");
                        fprintf(f, " %6s %6s %6s%s\n", "DISK", "OLDEST", "NEWEST",
                                bar_w > 0 ? "  USE" : "");
                        last_tree = u[j].tree;
                }
                if (max > 0 && bar_w > 0) {
                        len = (size_t)((double)u[j].bytes_alloc * (double)bar_w / (double)max + 0.5);
                        if (len == 0 && u[j].bytes_alloc > 0)
                                len = 1;
                }
                memset(bar, '#', len);
                bar[len] = '\0';
                {
                        _cleanup_free_ char *label = render_use_label(&u[j]);
                        size_t w;

                        if (!label)
                                return -ENOMEM;
                        w = text_width(label, strlen(label));
                        if (w > proj_w) {
                                /* wrapped as the plan's project headers are */
                                render_wrap_clean(f, label, cols, 4, cols > 4 ? cols - 4 : 1);
                                w = 0;
                        } else
                                fputs(label, f);
                        render_pad(f, proj_w - w);
                }
                fprintf(f, " %6u", u[j].n_active);
                if (archive)
                        fprintf(f, " %8u", u[j].n_archived);
                fprintf(f, " %6s %6s %6s%s%s\n", util_format_bytes(d, sizeof d, u[j].bytes_alloc),
                        util_format_duration(old_s, sizeof old_s,
                                             MAX(now - u[j].oldest, (msec_t)0)),
                        util_format_duration(new_s, sizeof new_s,
                                             MAX(now - u[j].newest, (msec_t)0)),
                        bar_w > 0 ? "  " : "", bar);
        }
        fprintf(f, "total: %zu project%s, %zu session%s, %s on disk\n", n, n == 1 ? "" : "s",
                inv->n_sessions, inv->n_sessions == 1 ? "" : "s",
                util_format_bytes(d, sizeof d, total));
        r = render_status_space(inv, f);
        if (r < 0)
                return r;
        if (inv->n_orphans > 0) {
                uint64_t ob = 0;
                for (size_t i = 0; i < inv->n_orphans; i++)
                        ob += inv->orphans[i].bytes_alloc;
                fprintf(f, "orphans: %zu (%s) with no transcript\n", inv->n_orphans,
                        util_format_bytes(d, sizeof d, ob));
        }
        return 0;
}

int render_status_caps(const Inventory *inv, const TreeLimits *tl, FILE *f) {
        for (size_t t = 0; t < inv->n_trees; t++) {
                char a[FORMAT_BYTES_MAX], b[FORMAT_BYTES_MAX], c[FORMAT_BYTES_MAX];
                TreeCounted n;
                uint64_t total = policy_tree_counted(inv, t, tl->count_allocated, &n);

                if (inv->n_trees > 1) {
                        _cleanup_free_ char *d = text_clean(inv->trees[t].runtime_dir,
                                                            TEXT_TERMINAL);
                        if (!d)
                                return -ENOMEM;
                        fprintf(f, "tree %s:\n", d);
                }
                /* lines of at most 60 columns (status fits a narrow terminal) */
                fprintf(f, "tree cap: %s counted, tree.max-size %s%s\n",
                        util_format_bytes(a, sizeof a, total),
                        tl->max_size > 0 ? reason_format_limit(b, sizeof b, tl->max_size) : "off",
                        !inv->trees[t].incomplete && tl->max_size > 0 && total > tl->max_size
                                ? " (over)"
                                : "");
                const char *counts = inv->trees[t].store ? inv->trees[t].store->session_bytes
                                                         : NULL;

                fprintf(f, "  = %zu session%s %s + %zu orphan%s %s (%s bytes)%s%s\n", n.n_sessions,
                        n.n_sessions == 1 ? "" : "s",
                        util_format_bytes(b, sizeof b, n.session_bytes), n.n_orphans,
                        n.n_orphans == 1 ? "" : "s", util_format_bytes(c, sizeof c, n.orphan_bytes),
                        tl->count_allocated ? "allocated" : "apparent", counts ? ";\n  " : "",
                        counts ?: "");
                if (inv->trees[t].incomplete)
                        fputs("  not decided here: the tree is incomplete\n", f);
        }
        return 0;
}

/* The store's split of a kind (StoreSize.split_title): a row per part, the part's name last. */
static int ts_render_split(const StoreSize *s, FILE *f) {
        char a[FORMAT_BYTES_MAX];

        if (!s->split_title || s->n_parts == 0)
                return 0;
        fprintf(f, "  %s (objects, disk):\n ", s->split_title);
        for (size_t w = 0; w < STORE_SIZE_WAYS; w++)
                fprintf(f, " %17s", s->way_names[w]);
        fputs("  PROJECT\n", f);
        for (size_t i = 0; i < s->n_parts; i++) {
                const StoreSizePart *p = &s->parts[i];
                _cleanup_free_ char *name = text_clean(p->name, TEXT_TERMINAL);

                if (!name)
                        return -ENOMEM;
                if (!p->known) {
                        fprintf(f, "  unknown: %s  %s\n", p->why, name);
                        continue;
                }
                fputc(' ', f);
                for (size_t w = 0; w < STORE_SIZE_WAYS; w++)
                        fprintf(f, " %7" PRIu64 " %9s", p->objects[w],
                                util_format_bytes(a, sizeof a, p->alloc[w]));
                fprintf(f, "  %s\n", name);
        }
        return 0;
}

static int ts_render_text(const Inventory *inv, size_t t, const StoreSize *s, bool allocated,
                          FILE *f) {
        const Tree *tr = &inv->trees[t];
        char a[FORMAT_BYTES_MAX], b[FORMAT_BYTES_MAX];
        _cleanup_free_ char *rd = text_clean(tr->runtime_dir, TEXT_TERMINAL);

        if (!rd)
                return -ENOMEM;
        fprintf(f, "\nby kind, %s", rd);
        if (tr->global_dir && !streq(tr->global_dir, tr->runtime_dir)) {
                _cleanup_free_ char *gd = text_clean(tr->global_dir, TEXT_TERMINAL);
                if (!gd)
                        return -ENOMEM;
                fprintf(f, " and %s", gd);
        }
        fprintf(f, ":\n  %-22s %7s %9s %9s\n", "KIND", "FILES", "APPARENT", "DISK");
        for (size_t k = 0; k < s->n_kinds; k++) {
                if (s->files[k] == 0 && k != s->unknown_kind)
                        continue;
                fprintf(f, "  %-22s %7" PRIu64 " %9s %9s\n", s->kind_names[k], s->files[k],
                        util_format_bytes(a, sizeof a, s->bytes[k]),
                        util_format_bytes(b, sizeof b, s->alloc[k]));
        }
        fprintf(f, "  %-22s %7s %9s %9s\n", "total", "",
                util_format_bytes(a, sizeof a, s->total_bytes),
                util_format_bytes(b, sizeof b, s->total_alloc));
        /* exact bytes, as du -b and du -B1 print them; short lines (60 columns) */
        fprintf(f, "  bytes: %" PRIu64 " apparent, %" PRIu64 " on disk\n  (caps count %s)\n",
                s->total_bytes, s->total_alloc, allocated ? "allocated" : "apparent");
        if (s->incomplete)
                fputs("  incomplete: a mount point or an unlistable\n  directory inside\n", f);
        for (size_t i = 0; i < s->n_unknown; i++) {
                _cleanup_free_ char *p = text_clean(s->unknown[i], TEXT_TERMINAL);
                if (!p)
                        return -ENOMEM;
                fprintf(f, "  unknown: %s\n", p);
        }
        if (s->files[s->unknown_kind] > s->n_unknown)
                fprintf(f, "  unknown: ... %" PRIu64 " more\n",
                        s->files[s->unknown_kind] - s->n_unknown);
        if (s->n_stale > 0 && s->stale_what)
                fprintf(f, "  stale project entries: %zu of %zu (%s): %s\n", s->n_stale,
                        s->n_projects, util_format_bytes(a, sizeof a, s->stale_bytes),
                        s->stale_what);
        return ts_render_split(s, f);
}

int render_status_trees(const Inventory *inv, bool allocated, FILE *f) {
        int r = 0;

        for (size_t t = 0; r >= 0 && t < inv->n_trees; t++) {
                StoreSize s = {};
                int k = store_measure(inv, t, &s);

                if (k == -ENOMEM) {
                        r = k;
                        break;
                }
                if (k >= 0)
                        r = ts_render_text(inv, t, &s, allocated, f);
                store_size_done(&s);
        }
        return r;
}
