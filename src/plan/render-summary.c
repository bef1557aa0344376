/* render-summary.c: the text plan's summary (sessions and bytes per verb, per rule, the
 * protections that fired, the incomplete trees) and the text of the steps in front of a plan
 * (recovery, restore). */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "plan.h"
#include "render-int.h"
#include "text.h"

/* One warning line of the summary (plan_foreach_warning()). */
static int render_summary_warning(void *userdata, const char *w, bool limit) {
        (void)limit;
        fprintf(userdata, "  warning: %s\n", w);
        return 0;
}

/* The summary: sessions and bytes per verb, per rule, and the protections that fired. */
int render_summary(const Plan *p, unsigned cols, FILE *f) {
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
                if (!it->is_orphan && session_is_cold(&p->inv->sessions[it->index])) {
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
                                if (streq(last_rule, protection_to_string((Protection)(1u << i)))) {
                                        last_prot = i;
                                        break;
                                }
                }
                if (last_prot < _PROT_MAX)
                        pn[last_prot]++;
        }

        fprintf(f, "Summary (dry run at %s; nothing changed):\n",
                format_timestamp(ts, sizeof ts, p->now));
        static const Verb order[] = { VERB_DELETE, VERB_ARCHIVE, VERB_COMPRESS, VERB_SKIP,
                                      VERB_KEEP };
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (order[i] != VERB_COMPRESS || n[order[i]] > 0)
                        fprintf(f, "  %-*s %6" PRIu64 " session%s %8s\n", render_verb_w,
                                render_verb(order[i]), n[order[i]], n[order[i]] == 1 ? " " : "s",
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
        if (n[VERB_COMPRESS] > 0) {
                /* the bytes the executor compresses, and an estimate said to be one (24.10) */
                PlanCompressForecast fc;
                char sz2[FORMAT_BYTES_MAX];

                plan_compress_forecast(p, &fc);
                fprintf(f, "  would compress %s (their transcripts and sidecars) into the cold tier\n"
                           "    about %s after compression, estimated ",
                        format_bytes(sz, sizeof sz, fc.bytes_in),
                        format_bytes(sz2, sizeof sz2, fc.bytes_out));
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
                        n_cold == 1 ? "" : "s", format_bytes(sz, sizeof sz, cold_bytes),
                        format_bytes(sz2, sizeof sz2, cold_orig),
                        format_bytes(sz3, sizeof sz3, cold_orig - MIN(cold_bytes, cold_orig)));
        }
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
        r = render_wrap(f, sb.len ? sb.buf : "none", cols > 22 ? cols - 22 : 8, 4,
                        cols > 4 ? cols - 4 : 1);
        if (r >= 0)
                r = plan_foreach_warning(p, render_summary_warning, f);
        return r >= 0 ? render_incomplete(p->inv, cols, f) : r;
}

/* One line per incomplete tree: which, that no tree-level decision was made there, and why
 * (tree_incomplete_why()). Nothing for a complete tree. */
int render_incomplete(const Inventory *inv, unsigned cols, FILE *f) {
        for (size_t t = 0; t < inv->n_trees; t++) {
                const char *why = tree_incomplete_why(&inv->trees[t]);
                _cleanup_free_ char *line = NULL;
                int r;

                if (!why)
                        continue;
                line = strprintf("incomplete tree '%s': no tree-level decision (orphans, stale "
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

int plan_render_steps_text(const Plan *p, FILE *f) {
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
