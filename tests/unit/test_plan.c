/* test_plan.c: plan order, text rendering width, JSON round trip, status ordering. */
#include "autoconf.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "macro.h"
#include "testdata.h"
#include "plan.h"
#include "text.h"
#include "policy.h"
#include "testlocale.h"
#include "plan.c" /* its static functions are tested here */

#define D MSEC_PER_DAY
#define NOW INT64_C(1798761600000) /* 2027-01-01T00:00:00Z */
#define MAX_S 12

typedef struct Fixture {
        Tree trees[2];
        Session s[MAX_S];
        Orphan o[4];
        Inventory inv;
        Verdict vs[MAX_S], vo[4];
        VerdictFacts fs[MAX_S], fo[4]; /* the verdicts' facts (a fact: the reason) */
} Fixture;

static void fx_init(Fixture *f) {
        memset(f, 0, sizeof *f);
        f->trees[0] = (Tree){ .global_dir = (char *)"/home/u/.qwen",
                              .runtime_dir = (char *)"/home/u/.qwen-rt",
                              .user = (char *)"u" };
        f->trees[1] = (Tree){ .global_dir = (char *)"/home/w/.qwen",
                              .runtime_dir = (char *)"/home/w/.qwen" };
        f->inv.trees = f->trees;
        f->inv.n_trees = 1;
        f->inv.sessions = f->s;
        f->inv.orphans = f->o;
}

/* A session with a hand-made verdict. */
static Session *fx_add(Fixture *f, const char *cwd, unsigned n, Verb verb, const char *rule,
                       const char *reason, msec_t idle, uint64_t bytes) {
        size_t i = f->inv.n_sessions++;
        Session *s = &f->s[i];

        assert_true(i < MAX_S);
        snprintf(s->id, sizeof s->id, "%08x-0000-4000-8000-000000000000", n);
        s->cwd = (char *)cwd;
        s->project_dir = (char *)(cwd && streq(cwd, "/p/b") ? "-p-b" : "-p-a");
        s->hash = (char *)"ab12";
        s->owner = cwd ? OWNER_OK : OWNER_UNVERIFIED;
        s->bytes = bytes;
        s->bytes_alloc = bytes + 100;
        s->last_activity = s->mtime = NOW - idle;
        s->first_record = NOW - 400 * D;
        /* the reason as a fact; NULL: the test sets the verdict's structured fields */
        f->fs[i] = (VerdictFacts){ .fact = reason };
        f->vs[i] = (Verdict){ .verb = verb, .rule = rule, .facts = reason ? &f->fs[i] : NULL };
        return s;
}

/* A heap copy of a fixture verdict's facts (its fact a literal), or NULL. */
static VerdictFacts *fx_facts(const VerdictFacts *from) {
        VerdictFacts *f;

        if (!from)
                return NULL;
        f = malloc(sizeof(VerdictFacts));
        assert_non_null(f);
        *f = *from;
        return f;
}

/* Verdicts on the heap (plan_build takes them) from the fixture's literals. */
static Verdicts *fx_verdicts(const Fixture *f) {
        Verdicts *v = calloc(1, sizeof(Verdicts));
        assert_non_null(v);
        v->sessions = calloc(f->inv.n_sessions + 1, sizeof(Verdict));
        v->orphans = calloc(f->inv.n_orphans + 1, sizeof(Verdict));
        assert_non_null(v->sessions);
        assert_non_null(v->orphans);
        v->n_sessions = f->inv.n_sessions;
        v->n_orphans = f->inv.n_orphans;
        for (size_t i = 0; i < v->n_sessions; i++) {
                v->sessions[i] = f->vs[i];
                v->sessions[i].facts = fx_facts(f->vs[i].facts);
        }
        for (size_t i = 0; i < v->n_orphans; i++) {
                v->orphans[i] = f->vo[i];
                v->orphans[i].facts = fx_facts(f->vo[i].facts);
        }
        return v;
}

static Plan *fx_plan(const Fixture *f) {
        Verdicts *v = fx_verdicts(f);
        Plan *p = NULL;
        assert_int_equal(plan_build(&f->inv, &v, NOW, &p), 0);
        assert_null(v); /* taken */
        assert_non_null(p);
        return p;
}

/* The standard scene: two projects, every verb, one unverified session, one orphan. */
static void fx_scene(Fixture *f) {
        fx_init(f);
        fx_add(f, "/p/b", 1, VERB_KEEP, "none", "idle 3d <= max-age 90d", 3 * D, 1000);
        fx_add(f, "/p/a", 2, VERB_KEEP, "none", "idle 2d <= max-age 90d", 2 * D, 2000);
        fx_add(f, "/p/a", 3, VERB_ARCHIVE, "max-age", "idle 121d > max-age 90d", 121 * D, 3000);
        fx_add(f, "/p/a", 4, VERB_DELETE, "tree-max-size",
               "tree 52G > max-size 50G, shrinking to 40G (disk caps delete)", 200 * D, 4000);
        fx_add(f, "/p/a", 5, VERB_SKIP, "live", "in use: runtime claim pid 42 alive", 100 * D, 10);
        fx_add(f, NULL, 6, VERB_SKIP, "unverified", "unverified: first line is not JSON", D, 0);
        fx_add(f, "/p/a", 7, VERB_KEEP, "pinned",
               "kept: pinned (a rule would select it: archive for idle 95d > max-age 90d)",
               95 * D, 7000);
        f->vs[6].protections = PROT_PINNED;
        fx_add(f, "/p/a", 0, VERB_ARCHIVE, "max-age", "idle 100d > max-age 90d", 100 * D, 1);
        f->o[0] = (Orphan){ .kind = ORPHAN_FILE_HISTORY,
                            .name = (char *)"aaaaaaaa-0000-4000-8000-000000000000",
                            .bytes = 500,
                            .mtime = NOW - 40 * D };
        f->fo[0] = (VerdictFacts){ .fact = "orphan file-history, no transcript, idle "
                                                   "40d > 30d" };
        f->vo[0] = (Verdict){ .verb = VERB_DELETE, .rule = "orphan", .facts = &f->fo[0] };
        f->inv.n_orphans = 1;
}

static void test_plan_build_order(void **state) {
        Fixture f;
        Plan *p;
        /* (tree, project, verb delete/archive/skip/keep, id), unverified groups and orphans last */
        static const struct {
                bool orphan;
                size_t index;
        } want[] = {
                { false, 3 }, /* /p/a delete */
                { false, 7 }, /* /p/a archive 00000000 */
                { false, 2 }, /* /p/a archive 00000003 */
                { false, 4 }, /* /p/a skip */
                { false, 1 }, /* /p/a keep 00000002 */
                { false, 6 }, /* /p/a keep 00000007 */
                { false, 0 }, /* /p/b keep */
                { false, 5 }, /* unverified -p-a */
                { true, 0 },
        };
        (void)state;

        fx_scene(&f);
        p = fx_plan(&f);
        assert_int_equal(p->n_items, ELEMENTSOF(want));
        for (size_t k = 0; k < p->n_items; k++) {
                if (p->items[k].is_orphan != want[k].orphan || p->items[k].index != want[k].index) {
                        print_error("item %zu: orphan %d index %zu\n", k, p->items[k].is_orphan,
                                    p->items[k].index);
                        fail();
                }
                assert_ptr_equal(p->items[k].verdict, p->items[k].is_orphan
                                                              ? &p->verdicts->orphans[p->items[k].index]
                                                              : &p->verdicts->sessions[p->items[k].index]);
        }
        p = plan_free(p);
        assert_null(p);
}

static void test_plan_build_stable_across_input_order(void **state) {
        Fixture a, b;
        Plan *pa, *pb;
        (void)state;

        fx_scene(&a);
        /* same sessions, reversed */
        fx_init(&b);
        for (size_t i = a.inv.n_sessions; i > 0; i--) {
                b.s[b.inv.n_sessions] = a.s[i - 1];
                b.vs[b.inv.n_sessions++] = a.vs[i - 1];
        }
        b.o[0] = a.o[0];
        b.vo[0] = a.vo[0];
        b.inv.n_orphans = a.inv.n_orphans;
        pa = fx_plan(&a);
        pb = fx_plan(&b);
        assert_int_equal(pa->n_items, pb->n_items);
        for (size_t k = 0; k < pa->n_items; k++)
                if (!pa->items[k].is_orphan)
                        assert_string_equal(a.s[pa->items[k].index].id, b.s[pb->items[k].index].id);
        plan_free(pa);
        plan_free(pb);
}

static void test_plan_build_rejects_mismatch(void **state) {
        Fixture f;
        Verdicts *v;
        Plan *p = NULL;
        (void)state;

        fx_scene(&f);
        v = fx_verdicts(&f);
        f.inv.n_sessions--;
        assert_int_equal(plan_build(&f.inv, &v, NOW, &p), -EINVAL);
        assert_null(p);
        assert_non_null(v); /* not taken */
        policy_verdicts_free(v);
}

/* Render into a string. */
static char *render(int (*fn)(const Plan *, const RenderOptions *, FILE *), const Plan *p,
                    unsigned cols, bool show_keep) {
        RenderOptions o = { .columns = cols, .show_keep = show_keep };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        assert_int_equal(fn(p, &o, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

/* Display columns of a line (wcwidth, as the renderer measures). */
static size_t line_width(const char *s, size_t n) {
        return text_width(s, n);
}

/* The text with every line break and the indentation after it folded into one space: a
 * wrapped reason reads whole again. */
static char *unwrap(const char *s) {
        char *o = malloc(strlen(s) + 1), *q = o;
        assert_non_null(o);
        for (; *s; s++) {
                if (*s == '\n') {
                        while (s[1] == ' ')
                                s++;
                        *q++ = ' ';
                } else
                        *q++ = *s;
        }
        *q = '\0';
        return o;
}

static char *render_status(const Inventory *inv, unsigned cols);

static char *render_changes(const Plan *p, unsigned cols) {
        RenderOptions o = { .columns = cols, .show_keep = true, .changes = true };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        assert_int_equal(render_text(p, &o, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void assert_lines_fit(const char *out, unsigned cols) {
        for (const char *l = out; *l;) {
                const char *e = strchr(l, '\n');
                size_t n = e ? (size_t)(e - l) : strlen(l);
                if (line_width(l, n) > cols) {
                        print_error("line wider than %u: '%.*s'\n", cols, (int)n, l);
                        fail();
                }
                l += n + (e ? 1 : 0);
        }
}

/* At every width each line fits, a long reason wraps and is never cut, and sessions show by
 * their short ids (issue 11: at 80 columns every reason was cut, at 60 it was gone). */
static void test_plan_render_text_fits_width(void **state) {
        static const unsigned widths[] = { 60, 80, 100, 132, 200 };
        static const char long_reason[] =
                "a very long reason that goes on and on and on and on and on and on and on and on "
                "and on and on and on and on and on and on and on and on the-end";
        Fixture f;
        Plan *p;
        (void)state;

        fx_scene(&f);
        f.fs[3].fact = long_reason; /* f.vs[3].facts */
        p = fx_plan(&f);
        for (size_t w = 0; w < ELEMENTSOF(widths); w++) {
                _cleanup_free_ char *out = render(render_text, p, widths[w], true);
                _cleanup_free_ char *flat = unwrap(out);
                assert_lines_fit(out, widths[w]);
                assert_null(strstr(out, "\xe2\x80\xa6")); /* nothing cut */
                assert_null(strstr(out, "..."));
                assert_non_null(strstr(flat, long_reason));
                assert_non_null(strstr(flat, "in use: runtime claim pid 42 alive"));
                /* short ids, tense, human sizes and ages */
                assert_non_null(strstr(out, "  00000004 would delete"));
                assert_null(strstr(out, "00000004-0000"));
                assert_non_null(strstr(out, "would archive"));
                assert_non_null(strstr(out, "121d"));
                assert_non_null(strstr(out, "2.9K")); /* 3000 bytes */
                assert_non_null(strstr(flat, "/p/a [projects/-p-a]") ?: strstr(flat, "/p/a  [projects/-p-a]"));
                if (widths[w] >= 80)
                        assert_non_null(strstr(out, "REASON"));
                if (widths[w] <= 60) /* the reason column is too narrow: own lines */
                        assert_non_null(strstr(out, "00000005 skip            100d    10B\n      in use: "));
        }
        plan_free(p);
}

/* A short id is 8 characters, longer when two sessions of a tree share them; a copy of the same
 * session (active and archived) does not count. */
static void test_plan_render_text_short_ids(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        (void)state;

        fx_init(&f);
        fx_add(&f, "/p/a", 1, VERB_KEEP, "none", "kept", 2 * D, 1000);
        fx_add(&f, "/p/a", 2, VERB_KEEP, "none", "kept", 2 * D, 1000);
        snprintf(f.s[0].id, sizeof f.s[0].id, "abcdef12-3456-4000-8000-000000000001");
        snprintf(f.s[1].id, sizeof f.s[1].id, "abcdef12-3457-4000-8000-000000000002");
        fx_add(&f, "/p/b", 3, VERB_KEEP, "none", "kept", 2 * D, 1000);
        fx_add(&f, "/p/b", 3, VERB_KEEP, "none", "kept", 2 * D, 1000)->state = SESSION_ARCHIVED;
        p = fx_plan(&f);
        out = render(render_text, p, 80, true);
        assert_non_null(strstr(out, "  abcdef12-3456 keep"));
        assert_non_null(strstr(out, "  abcdef12-3457 keep"));
        assert_non_null(strstr(out, "  00000003-0000 keep")); /* the width is the tree's */
        plan_free(p);
        free(out);

        fx_init(&f);
        fx_add(&f, "/p/a", 1, VERB_KEEP, "none", "kept", 2 * D, 1000);
        fx_add(&f, "/p/a", 1, VERB_KEEP, "none", "kept", 2 * D, 1000)->state = SESSION_ARCHIVED;
        fx_add(&f, "/p/a", 2, VERB_KEEP, "none", "kept", 2 * D, 1000);
        p = fx_plan(&f);
        out = render(render_text, p, 80, true);
        assert_non_null(strstr(out, "  00000001 keep"));
        plan_free(p);
}

/* Widths are display columns: a CJK or emoji project lines up; under a non-UTF-8 locale the
 * output is ASCII (escapes). */
static void test_plan_render_text_wide_and_ascii(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL, *ascii = NULL, *st = NULL, *st2 = NULL;
        (void)state;

        test_locale_utf8();
        fx_scene(&f);
        f.s[1].cwd = (char *)"/p/\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e-\xf0\x9f\x9a\x80"; /* 日本語-🚀 */
        f.fs[1].fact = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e";
        p = fx_plan(&f);
        out = render(render_text, p, 60, true);
        assert_lines_fit(out, 60);
        st = render_status(&f.inv, 60);
        assert_lines_fit(st, 60);
        /* the project column: the CJK row's counts start where the others' do */
        {
                const char *a = strstr(st, "\n/p/a"), *j = strstr(st, "\n/p/\xe6\x97\xa5");
                const char *ea, *ej;
                assert_non_null(a);
                assert_non_null(j);
                /* up to the bar, whose length is the row's share of the bytes */
                ea = strstr(a + 1, "  #");
                ej = strstr(j + 1, "  #");
                assert_non_null(ea);
                assert_non_null(ej);
                assert_int_equal(text_width(a + 1, (size_t)(ea - a - 1)),
                                 text_width(j + 1, (size_t)(ej - j - 1)));
        }
        text_set_terminal_utf8(false);
        ascii = render(render_text, p, 60, true);
        st2 = render_status(&f.inv, 50);
        text_set_terminal_utf8(true);
        (void)setlocale(LC_CTYPE, "C");
        for (const char *q = ascii; *q; q++)
                assert_true((unsigned char)*q < 0x80);
        for (const char *q = st2; *q; q++)
                assert_true((unsigned char)*q < 0x80);
        assert_non_null(strstr(ascii, "/p/\\u65e5\\u672c\\u8a9e-\\U0001f680"));
        /* status never cuts a project (issue 24.3): whole, escaped, in ASCII too */
        assert_null(strstr(st2, "..."));
        assert_non_null(strstr(st2, "/p/\\u65e5\\u672c\\u8a9e-\\U0001f680"));
        plan_free(p);
}

/* --changes: only what is not kept, each line naming its project, the most idle first. */
static void test_plan_render_text_changes(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL, *narrow = NULL;
        const char *a, *b;
        (void)state;

        fx_scene(&f);
        p = fx_plan(&f);
        out = render_changes(p, 200);
        assert_null(strstr(out, "00000002")); /* kept */
        assert_null(strstr(out, "00000007"));
        assert_non_null(strstr(out, "would delete  00000004   200d   3.9K  /p/a  tree 52G"));
        assert_non_null(strstr(out, "skip          00000006    24h     0B  projects/-p-a  unverified"));
        a = strstr(out, "would archive 00000003   121d");
        b = strstr(out, "would archive 00000000   100d");
        assert_non_null(a);
        assert_non_null(b);
        assert_true(a < b); /* most idle first */
        assert_non_null(strstr(out, "Summary (dry run"));
        narrow = render_changes(p, 60);
        assert_lines_fit(narrow, 60);
        assert_non_null(strstr(narrow, "would delete  00000004   200d   3.9K  /p/a\n      tree 52G"));
        plan_free(p);
}

/* The whole text plan of the scene at 100 columns against tests/data/plan/scene-100.txt
 * (rewritten by make update-golden: test_golden_compare()). */
static void test_plan_render_text_golden(void **state) {
        _cleanup_free_ char *out = NULL;
        Fixture f;
        Plan *p;
        (void)state;

        fx_scene(&f);
        f.s[0].tree = 1;
        f.inv.n_trees = 2;
        p = fx_plan(&f);
        out = render(render_text, p, 100, true);
        plan_free(p);
        test_golden_compare("plan/scene-100.txt", out);
}

static void test_plan_render_text_summary(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        (void)state;

        fx_scene(&f);
        p = fx_plan(&f);
        out = render(render_text, p, 100, true);
        assert_non_null(strstr(out, "Summary (dry run at 2027-01-01T00:00:00Z"));
        assert_non_null(strstr(out, "  would delete       1 session      3.9K\n"));
        assert_non_null(strstr(out, "  would archive      2 sessions     2.9K\n"));
        assert_non_null(strstr(out, "  skip               2 sessions      10B\n"));
        assert_non_null(strstr(out, "  keep               3 sessions     9.7K\n"));
        assert_non_null(strstr(out, "    max-age                2 sessions     2.9K\n"));
        assert_non_null(strstr(out, "    tree-max-size          1 session      3.9K\n"));
        assert_non_null(strstr(out, "protections fired: live 1, pinned 1, unverified 1"));
        assert_non_null(strstr(out, "orphans: would delete 1 (500B), keep 0"));
        /* archiving frees nothing: freed and moved are two lines, never one sum (issue 11) */
        assert_non_null(strstr(out, "  would free     4.3K (deletions and orphans)\n"));
        assert_non_null(strstr(out, "  would move     2.9K to the archive (frees no space)\n"));
        assert_null(strstr(out, "warning:"));
        assert_null(strstr(out, "incomplete")); /* a complete tree: no line */
        plan_free(p);
}

/* Sessions the deletion limit holds back: skipped with the limit as reason, counted, and the
 * summary warns that the tree cap is not met (issue 11), once, naming what holds it (24.4). */
static void test_plan_held_back_warning(void **state) {
        Fixture f;
        Plan *p;
        PlanHeldBack h;
        _cleanup_free_ char *out = NULL, *w = NULL;
        (void)state;

        fx_scene(&f);
        /* structured verdicts, as the policy makes them: the reason is rendered */
        VerdictFacts facts8 = { .held = { .kind = MEASURE_COUNT, .measured = 1, .limit = 1 },
                                .target = 40 * (INT64_C(1) << 30), .held_by = "max-deletions",
                                .held_rule = "tree-max-size" },
                     facts9 = { .held = { .kind = MEASURE_COUNT, .measured = 1, .limit = 1 },
                                .held_by = "max-deletions", .held_rule = "max-age" };
        fx_add(&f, "/p/a", 8, VERB_SKIP, "blast-radius", NULL, 300 * D, 2048);
        f.vs[8].protections = PROT_BLAST;
        f.vs[8].facts = &facts8;
        f.vs[8].measure = (Measure){ .kind = MEASURE_BYTES, .key = "max-size",
                                     .measured = 52 * (INT64_C(1) << 30),
                                     .limit = 50 * (INT64_C(1) << 30) };
        fx_add(&f, "/p/b", 9, VERB_SKIP, "blast-radius", NULL, 300 * D, 1024);
        f.vs[9].protections = PROT_BLAST;
        f.vs[9].facts = &facts9;
        f.vs[9].measure = (Measure){ .kind = MEASURE_AGE, .key = "max-age", .measured = 300 * D,
                                     .limit = 90 * D };
        p = fx_plan(&f);
        plan_held_back(p, &h);
        assert_int_equal(h.n, 2);
        assert_int_equal(h.bytes, 3072);
        assert_true(h.tree_cap);
        w = plan_held_back_warning(&h);
        assert_string_equal(w, "tree cap not met: 2 sessions (3.0K) held back by max-deletions");
        /* the policy's fact that the tree cap stays unmet (issue 24.4): the summary says it
         * once, with what holds it; the held-back line counts only the other rules' sessions */
        p->verdicts->caps = calloc(1, sizeof(CapUnmet));
        assert_non_null(p->verdicts->caps);
        p->verdicts->caps[0] = (CapUnmet){
                .cap = "tree-max-size", .after = 51 * (UINT64_C(1) << 30),
                .limit = 50 * (UINT64_C(1) << 30),
                .held = { { .limit = "max-deletions", .n = 1, .bytes = 2048 },
                          { .prot = PROT_LATEST, .n = 2, .bytes = UINT64_C(3) << 30 },
                          { .n = 1, .bytes = 500 } },
                .n_held = 3 };
        p->verdicts->n_caps = 1;
        out = render(render_text, p, 100, true);
        assert_non_null(strstr(out, "  warning: tree cap not met: 51G > max-size 50G after the "
                                    "plan; held by max-deletions 1 session (2.0K), keep-latest 2 "
                                    "(3.0G), orphans 1 (500B)\n"
                                    "  warning: policy not met: 1 session (1.0K) held back by "
                                    "max-deletions\n"));
        assert_null(strstr(out, "tree cap not met: 2 sessions"));
        /* the reasons rendered from the structured verdicts */
        for (size_t k = 0; k < p->n_items; k++) {
                const PlanItem *it = &p->items[k];
                _cleanup_free_ char *why = NULL;

                if (it->is_orphan || (it->index != 8 && it->index != 9))
                        continue;
                why = plan_item_reason(p, it);
                assert_string_equal(why, it->index == 8
                                                 ? "held back by max-deletions (1 per run; use "
                                                   "--force); would delete: tree 52G > max-size "
                                                   "50G, shrinking to 40G (disk caps delete)"
                                                 : "held back by max-deletions (1 per run; use "
                                                   "--force); would delete: idle 300d > max-age "
                                                   "90d");
        }
        plan_free(p);
        free(w);
        h.tree_cap = false;
        h.n = 1;
        w = plan_held_back_warning(&h);
        assert_string_equal(w, "policy not met: 1 session (3.0K) held back by max-deletions");
}

/* The forecast of a compression (issue 24.10): the bytes the executor compresses (transcript
 * and sidecars, not file-history or subagents), estimated at the tree's measured ratio when it
 * has compressed sessions, else at the stated default; the summary says which. */
static void test_plan_compress_forecast(void **state) {
        PlanCompressForecast fc;
        _cleanup_free_ char *out = NULL, *out2 = NULL;
        Fixture f;
        Session *s;
        Plan *p;
        (void)state;

        fx_init(&f);
        s = fx_add(&f, "/p/a", 1, VERB_COMPRESS, "compress-after", "archived, idle 9d", 9 * D,
                   30000); /* 30000 with its file-history and subagents */
        s->state = SESSION_ARCHIVED;
        s->transcript_bytes = 12000;
        s->sidecar_bytes = 288;
        p = fx_plan(&f);
        plan_compress_forecast(p, &fc);
        assert_int_equal(fc.n, 1);
        assert_int_equal(fc.bytes_in, 12288);
        assert_int_equal(fc.bytes_out, 2048); /* 12288 / 6 */
        assert_false(fc.measured);
        out = render(render_text, p, 100, true);
        assert_non_null(strstr(out, "  would compress 12K (their transcripts and sidecars) into "
                                    "the cold tier\n    about 2.0K after compression, estimated "
                                    "at the default 1:6 (nothing compressed yet)\n"));
        plan_free(p);

        /* a compressed session in the tree: 1000 bytes from 8000, 1:8 */
        s = fx_add(&f, "/p/a", 2, VERB_KEEP, "none", "archived, compressed", 20 * D, 1000);
        s->state = SESSION_ARCHIVED;
        s->cold = true;
        s->cold_bytes = 1000;
        s->cold_orig = 8000;
        p = fx_plan(&f);
        plan_compress_forecast(p, &fc);
        assert_int_equal(fc.bytes_in, 12288);
        assert_int_equal(fc.bytes_out, 1536);
        assert_true(fc.measured);
        out2 = render(render_text, p, 100, true);
        assert_non_null(strstr(out2, "    about 1.5K after compression, estimated from the tree's "
                                     "compressed sessions (1:8.0)\n"));
        plan_free(p);
}

static void test_plan_render_text_hide_keep(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *all = NULL, *some = NULL;
        (void)state;

        fx_scene(&f);
        p = fx_plan(&f);
        all = render(render_text, p, 120, true);
        some = render(render_text, p, 120, false);
        assert_non_null(strstr(all, "  00000002 keep"));
        assert_null(strstr(some, "00000002"));
        assert_non_null(strstr(some, "  00000003 would archive"));
        plan_free(p);
}

static void test_plan_render_text_hostile_strings(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        (void)state;

        fx_init(&f);
        fx_add(&f, "/p/\x1b[31mred\n\xff\xfe", 1, VERB_KEEP, "none", "tab\there\x7f", D, 1);
        p = fx_plan(&f);
        out = render(render_text, p, 100, true);
        assert_null(strchr(out, '\x1b'));
        assert_null(strchr(out, '\t'));
        assert_null(strchr(out, '\x7f'));
        assert_null(strstr(out, "\xff"));
        assert_non_null(strstr(out, "/p/?[31mred?\xef\xbf\xbd\xef\xbf\xbd"));
        plan_free(p);
}

static void test_plan_render_text_empty(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        (void)state;

        fx_init(&f);
        f.inv.n_trees = 2;
        p = fx_plan(&f);
        out = render(render_text, p, 100, true);
        assert_string_equal(out, "no sessions found in /home/u/.qwen-rt, /home/w/.qwen\n");
        plan_free(p);
}

/* An incomplete tree gets one line in the summary (and after "no sessions found"): which tree,
 * that no tree-level decision was made, and why; its directory cleaned for the terminal. A
 * complete tree gets none. */
static void test_plan_render_text_incomplete(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL, *empty = NULL;
        (void)state;

        fx_init(&f);
        f.inv.n_trees = 2;
        f.trees[0].runtime_dir = (char *)"/home/\x1b[2Ju\u202e/.qwen-rt";
        f.trees[0].incomplete = true;
        f.trees[0].incomplete_why = "a relative advanced.runtimeOutputDir puts runtime roots";
        f.trees[1].incomplete = true; /* not fully listed: no why of its own */
        fx_add(&f, "/p/a", 1, VERB_KEEP, "none", "idle 1d <= max-age 90d", D, 1);
        p = fx_plan(&f);
        out = render(render_text, p, 300, true);
        assert_null(strchr(out, '\x1b'));
        assert_null(strstr(out, "\u202e"));
        assert_non_null(strstr(out, "\n  incomplete tree '/home/?[2Ju?/.qwen-rt': no tree-level "
                                    "decision (orphans, stale files, tree caps) because a relative "
                                    "advanced.runtimeOutputDir puts runtime roots\n"));
        assert_non_null(strstr(out, "\n  incomplete tree '/home/w/.qwen': no tree-level decision "
                                    "(orphans, stale files, tree caps) because it was not fully "
                                    "listed (a directory could not be read)\n"));
        plan_free(p);

        fx_init(&f);
        f.trees[0].incomplete = true;
        p = fx_plan(&f);
        empty = render(render_text, p, 300, true);
        assert_string_equal(empty, "no sessions found in /home/u/.qwen-rt\n"
                                   "  incomplete tree '/home/u/.qwen-rt': no tree-level decision "
                                   "(orphans, stale files, tree caps) because it was not fully "
                                   "listed (a directory could not be read)\n");
        plan_free(p);
}

static char *render_json(const Plan *p) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        assert_int_equal(plan_json_render(p, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(o, key, &v)) {
                print_error("missing key '%s'\n", key);
                fail();
        }
        return v;
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v = get(o, key);
        assert_true(json_object_is_type(v, json_type_string));
        return json_object_get_string(v);
}

static void test_plan_render_json_round_trip(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        json_object *root, *projects, *pa, *sessions, *s0, *prots, *sum;
        (void)state;

        fx_scene(&f);
        f.s[6].title = (char *)"my \"chat\"";
        f.s[6].title_manual = true;
        p = fx_plan(&f);
        out = render_json(p);
        root = json_tokener_parse(out);
        assert_non_null(root);

        assert_int_equal(json_object_get_int(get(root, "version")), PLAN_JSON_VERSION);
        assert_string_equal(get_str(root, "now"), "2027-01-01T00:00:00Z");
        assert_string_equal(get_str(json_object_array_get_idx(get(root, "trees"), 0), "global_dir"),
                            "/home/u/.qwen");
        assert_string_equal(get_str(json_object_array_get_idx(get(root, "trees"), 0), "runtime_dir"),
                            "/home/u/.qwen-rt");

        projects = get(root, "projects");
        assert_int_equal(json_object_array_length(projects), 3); /* /p/a, /p/b, unverified */
        pa = json_object_array_get_idx(projects, 0);
        assert_string_equal(get_str(pa, "project"), "/p/a");
        assert_string_equal(get_str(pa, "project_dir"), "-p-a");
        assert_string_equal(get_str(pa, "hash"), "ab12");
        assert_int_equal(json_object_get_int(get(pa, "tree")), 0);
        assert_true(json_object_get_boolean(get(pa, "verified")));
        sessions = get(pa, "sessions");
        assert_int_equal(json_object_array_length(sessions), 6);

        s0 = json_object_array_get_idx(sessions, 0);
        assert_string_equal(get_str(s0, "id"), "00000004-0000-4000-8000-000000000000");
        assert_string_equal(get_str(s0, "verb"), "delete");
        assert_string_equal(get_str(s0, "rule"), "tree-max-size");
        assert_string_equal(get_str(s0, "state"), inventory_session_state_to_string(SESSION_ACTIVE));
        assert_int_equal(json_object_get_int64(get(s0, "bytes")), 4000);
        assert_int_equal(json_object_get_int64(get(s0, "bytes_allocated")), 4100);
        assert_int_equal(json_object_get_int64(get(s0, "idle_ms")), 200 * D);
        assert_string_equal(get_str(s0, "last_activity"), "2026-06-15T00:00:00Z");

        /* pinned one: protections and title with quotes survive */
        json_object *pinned = json_object_array_get_idx(sessions, 5);
        assert_string_equal(get_str(pinned, "id"), "00000007-0000-4000-8000-000000000000");
        assert_string_equal(get_str(pinned, "title"), "my \"chat\"");
        prots = get(pinned, "protections");
        assert_int_equal(json_object_array_length(prots), 1);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(prots, 0)), "pinned");

        /* unverified group: project null, verified false */
        json_object *pu = json_object_array_get_idx(projects, 2);
        assert_true(json_object_is_type(get(pu, "project"), json_type_null));
        assert_false(json_object_get_boolean(get(pu, "verified")));

        assert_int_equal(json_object_array_length(get(root, "orphans")), 1);
        assert_string_equal(get_str(json_object_array_get_idx(get(root, "orphans"), 0), "verb"),
                            "delete");

        sum = get(root, "summary");
        assert_int_equal(json_object_get_int(get(get(get(sum, "verbs"), "archive"), "count")), 2);
        assert_int_equal(json_object_get_int(get(get(get(sum, "verbs"), "keep"), "count")), 3);
        assert_int_equal(json_object_get_int64(get(get(get(sum, "verbs"), "archive"), "bytes")),
                         3001);
        assert_int_equal(json_object_get_int(get(get(get(sum, "rules"), "max-age"), "count")), 2);
        assert_int_equal(json_object_get_int(get(get(get(sum, "protections"), "live"), "count")),
                         1);
        assert_int_equal(json_object_get_int(get(get(get(sum, "orphans"), "delete"), "count")), 1);
        json_object_put(root);
        plan_free(p);
}

static void test_plan_render_json_invalid_utf8(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        json_object *root;
        (void)state;

        fx_init(&f);
        fx_add(&f, "/p/\xff\xc3(bad", 1, VERB_KEEP, "none", "ok", D, 1);
        p = fx_plan(&f);
        out = render_json(p);
        root = json_tokener_parse(out);
        assert_non_null(root);
        assert_string_equal(get_str(json_object_array_get_idx(get(root, "projects"), 0), "project"),
                            "/p/\xef\xbf\xbd\xef\xbf\xbd(bad");
        json_object_put(root);
        plan_free(p);
}

static void test_plan_render_json_empty(void **state) {
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        json_object *root;
        (void)state;

        fx_init(&f);
        p = fx_plan(&f);
        out = render_json(p);
        root = json_tokener_parse(out);
        assert_non_null(root);
        assert_int_equal(json_object_array_length(get(root, "projects")), 0);
        assert_int_equal(json_object_get_int(get(get(get(get(root, "summary"), "verbs"), "delete"),
                                                 "count")),
                         0);
        json_object_put(root);
        plan_free(p);
}

/* The streamed text has json-c's own layout: parsing it and printing the tree with the same
 * flags gives the same bytes (escapes, empty arrays, nesting, a foreign tree's nulls). */
static void test_plan_render_json_layout_is_json_c(void **state) {
        static const char *const titles[] = {
                "tab\there \"q\" back\\slash /path\x01\x1f\x7f",
                "csi \xc2\x9b" "2J osc \xc2\x9d" "52;c;x\x07 rlo \xe2\x80\xae lri \xe2\x81\xa6 \xc2\xa0ok",
                "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xff",
                "only back\\slash",
                "only \"quotes\"",
                "",
        };
        Fixture f;
        Plan *p;
        _cleanup_free_ char *out = NULL;
        json_object *root;
        char *again;
        (void)state;

        _cleanup_free_ char *huge = malloc(150001), *huge_esc = malloc(150001);

        /* longer than the writer's 64 KiB buffer, plain and with escapes */
        assert_non_null(huge);
        assert_non_null(huge_esc);
        memset(huge, 'x', 150000);
        huge[150000] = '\0';
        for (size_t i = 0; i < 150000; i++)
                huge_esc[i] = i % 3 ? 'y' : '"';
        huge_esc[150000] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(titles) + 3; i++) {
                if (i < ELEMENTSOF(titles) + 2) {
                        fx_scene(&f);
                        f.s[6].title = (char *)(i < ELEMENTSOF(titles) ? titles[i] :
                                                i == ELEMENTSOF(titles) ? huge :
                                                                          huge_esc);
                        f.s[2].live_reason = (char *)(i < ELEMENTSOF(titles) ? titles[i] : "x");
                        /* number extremes (digits written by hand, not printf) */
                        f.s[6].bytes = UINT64_MAX;
                        f.s[6].bytes_alloc = 0;
                        f.s[2].bytes = UINT64_C(10000000000000000000);
                        f.vs[6].rank = VERDICT_RANK_MAX;
                        f.trees[0].fs_known = true;
                        f.trees[0].fs_size = UINT64_MAX - 1;
                        f.trees[0].fs_avail = 9;
                } else
                        fx_init(&f); /* nothing at all */
                p = fx_plan(&f);
                out = render_json(p);
                /* no control reaches the JSON raw: DEL, C1 and bidi controls are \u escapes */
                assert_null(strchr(out, 0x7f));
                assert_null(strstr(out, "\xc2\x9b"));
                assert_null(strstr(out, "\xc2\x9d"));
                assert_null(strstr(out, "\xe2\x80\xae"));
                assert_null(strstr(out, "\xe2\x81\xa6"));
                assert_true(i != 1 || strstr(out, "\\u009b2J osc \\u009d52;c;x\\u0007 rlo \\u202e"));
                root = json_tokener_parse(out);
                assert_non_null(root);
                /* json-c's layout, with the controls json-c leaves raw escaped (text.h) */
                again = text_json_escape_controls(json_object_to_json_string_ext(
                        root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                      JSON_C_TO_STRING_NOSLASHESCAPE));
                assert_non_null(again);
                assert_int_equal(strlen(out), strlen(again) + 1);
                assert_memory_equal(out, again, strlen(again));
                assert_int_equal(out[strlen(again)], '\n');
                free(again);
                json_object_put(root);
                plan_free(p);
                free(out);
                out = NULL;
        }
}

static char *render_status(const Inventory *inv, unsigned cols) {
        RenderOptions o = { .columns = cols };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        assert_int_equal(render_status_text(inv, NOW, &o, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void test_plan_render_status_largest_first(void **state) {
        Fixture f;
        _cleanup_free_ char *out = NULL, *narrow = NULL;
        const char *a, *b, *u;
        (void)state;

        fx_init(&f);
        fx_add(&f, "/p/a", 1, VERB_KEEP, "none", "", 2 * D, 1000);
        fx_add(&f, "/p/a", 2, VERB_KEEP, "none", "", 50 * D, 1000)->state = SESSION_ARCHIVED;
        fx_add(&f, "/p/b", 3, VERB_KEEP, "none", "", 3 * D, 100000);
        fx_add(&f, NULL, 4, VERB_KEEP, "none", "", 3 * D, 10);
        out = render_status(&f.inv, 100);
        assert_lines_fit(out, 100);
        b = strstr(out, "/p/b");
        a = strstr(out, "/p/a");
        u = strstr(out, "(unverified) projects/-p-a");
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(u);
        assert_true(b < a);
        assert_true(a < u);
        /* the largest gets the full bar, /p/a (2200 of 100100 bytes) a single '#' */
        assert_non_null(strstr(b, "####################\n"));
        assert_non_null(strstr(a, "  #\n"));
        /* counts, size and ages of /p/a: 1 active, 1 archived, 2.1K, oldest 50d, newest 2d */
        assert_non_null(strstr(a, "      1        1   2.1K    50d     2d"));
        assert_non_null(strstr(out, "total: 3 projects, 4 sessions, 100K on disk\n"));
        assert_null(strstr(out, "orphans:"));

        f.o[0] = (Orphan){ .kind = ORPHAN_SUBAGENTS, .name = (char *)"x", .bytes_alloc = 4096 };
        f.inv.n_orphans = 1;
        narrow = render_status(&f.inv, 60);
        assert_lines_fit(narrow, 60);
        assert_non_null(strstr(narrow, "orphans: 1 (4.0K) with no transcript\n"));
}

static void test_plan_render_status_empty(void **state) {
        Fixture f;
        _cleanup_free_ char *out = NULL;
        (void)state;

        fx_init(&f);
        out = render_status(&f.inv, 100);
        assert_string_equal(out, "no sessions found in /home/u/.qwen-rt\n");
}

/* plan_take_steps(): the steps of another plan after the plan's own, in order; the other is
 * left without steps (main.c builds the recovery steps in a thread, into a plan of their own). */
static void test_plan_take_steps(void **state) {
        Inventory *inv = NULL;
        Plan *p = NULL, *from = NULL;

        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(plan_new_steps(inv, 0, &p), 0);
        assert_int_equal(plan_new_steps(inv, 0, &from), 0);
        for (int i = 0; i < 3; i++) {
                PlanStep st = { .kind = PLAN_STEP_RECOVER_TEMP, .name = util_strprintf("t%d", i) };

                assert_non_null(st.name);
                assert_int_equal(plan_add_step(i == 0 ? p : from, &st), 0);
        }
        assert_int_equal(plan_take_steps(p, from), 0);
        assert_int_equal(from->n_steps, 0);
        assert_int_equal(p->n_steps, 3);
        for (int i = 0; i < 3; i++) {
                char want[8];

                snprintf(want, sizeof want, "t%d", i);
                assert_string_equal(p->steps[i].name, want);
        }
        plan_free(from);
        plan_free(p);
        inventory_free(inv);
}

static void test_plan_clean_string(void **state) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        (void)state;
        a = text_clean("héllo\x01", TEXT_JSON);
        assert_string_equal(a, "héllo\x01");
        b = text_clean("héllo\x01\xc2\x85", TEXT_TERMINAL);
        assert_string_equal(b, "héllo??");
        c = text_clean("\xed\xa0\x80x\xf0\x9f\x98\x80", TEXT_JSON); /* surrogate, emoji */
        assert_string_equal(c, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx\xf0\x9f\x98\x80");
        d = text_clean(NULL, TEXT_TERMINAL);
        assert_string_equal(d, "");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plan_build_order),
                cmocka_unit_test(test_plan_build_stable_across_input_order),
                cmocka_unit_test(test_plan_build_rejects_mismatch),
                cmocka_unit_test(test_plan_render_text_fits_width),
                cmocka_unit_test(test_plan_render_text_short_ids),
                cmocka_unit_test(test_plan_render_text_wide_and_ascii),
                cmocka_unit_test(test_plan_render_text_changes),
                cmocka_unit_test(test_plan_render_text_golden),
                cmocka_unit_test(test_plan_render_text_summary),
                cmocka_unit_test(test_plan_held_back_warning),
                cmocka_unit_test(test_plan_compress_forecast),
                cmocka_unit_test(test_plan_render_text_hide_keep),
                cmocka_unit_test(test_plan_render_text_hostile_strings),
                cmocka_unit_test(test_plan_render_text_empty),
                cmocka_unit_test(test_plan_render_text_incomplete),
                cmocka_unit_test(test_plan_render_json_round_trip),
                cmocka_unit_test(test_plan_render_json_invalid_utf8),
                cmocka_unit_test(test_plan_render_json_empty),
                cmocka_unit_test(test_plan_render_json_layout_is_json_c),
                cmocka_unit_test(test_plan_render_status_largest_first),
                cmocka_unit_test(test_plan_render_status_empty),
                cmocka_unit_test(test_plan_clean_string),
                cmocka_unit_test(test_plan_take_steps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
