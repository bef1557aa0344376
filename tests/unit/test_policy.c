/* test_policy.c: the policy engine on literal inventories with a fixed now. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "inventory.h"
#include "macro.h"
#include "deepcode-store.h"
#include "policy.h"
#include "qwen-store.h"
#include "reason.h"
#include "store.h"

/* Table literals: POL() sets defaults that cases override, and specs leave zero fields out. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#if defined(__clang__)
#pragma GCC diagnostic ignored "-Winitializer-overrides"
#else
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

#define D MSEC_PER_DAY
#define H MSEC_PER_HOUR
#define KB UINT64_C(1024)
#define GB (UINT64_C(1) << 30)
#define MB (UINT64_C(1) << 20)
#define NOW INT64_C(1798761600000) /* 2027-01-01T00:00:00Z */
#define MAX_S 12

/* A policy that does nothing but what the case asks for. */
#define POL(...)                                                                                   \
        {                                                                                          \
                .action = POLICY_ACTION_ARCHIVE, .min_idle = 24 * H,                               \
                .orphan_min_age = MSEC_INFINITY, .stale_project_min_age = MSEC_INFINITY,           \
                __VA_ARGS__                                                                        \
        }

typedef struct Fixture {
        Tree trees[2];
        Session s[MAX_S];
        Orphan o[4];
        Inventory inv;
        Config cfg;
        Verdicts *v;
        char *rs[MAX_S]; /* reasons rendered by fx_reason() */
        char *ro[4];
} Fixture;

static void fx_init(Fixture *f, Policy pol) {
        memset(f, 0, sizeof *f);
        f->trees[0] = (Tree){ .global_dir = (char *)"/home/u/.qwen",
                              .runtime_dir = (char *)"/home/u/.qwen",
                              .user = (char *)"u" };
        f->trees[1] = (Tree){ .global_dir = (char *)"/home/w/.qwen",
                              .runtime_dir = (char *)"/home/w/.qwen" };
        f->inv.trees = f->trees;
        f->inv.n_trees = 1;
        f->inv.sessions = f->s;
        f->inv.orphans = f->o;
        f->cfg.defaults = pol;
        f->cfg.tree.count_allocated = true;
}

/* Add an owned active session of project cwd, idle for `idle`, of `bytes` (apparent and
 * allocated). Born a year ago, so min-age never holds unless a test says so. */
static Session *fx_add(Fixture *f, const char *cwd, SessionState state, msec_t idle,
                       uint64_t bytes) {
        size_t i = f->inv.n_sessions++;
        Session *s = &f->s[i];

        assert_true(i < MAX_S);
        snprintf(s->id, sizeof s->id, "00000000-0000-4000-8000-%012zx", i);
        s->cwd = (char *)cwd;
        s->project_dir = (char *)"-p-a";
        s->state = state;
        s->owner = OWNER_OK;
        s->bytes = s->bytes_alloc = s->transcript_bytes = bytes;
        s->last_activity = s->mtime = s->last_write = NOW - idle;
        s->first_record = NOW - 365 * D;
        /* archived when it went idle: its archived file's ctime, the time in the archive's
         * fallback (no record of qgc's, policy.c) */
        if (state != SESSION_ACTIVE)
                s->archived.ctime_ns = (NOW - idle) * 1000000;
        return s;
}

/* The reason of session i's verdict, rendered at the edge (reason.h); the fixture keeps it. */
static const char *fx_reason(Fixture *f, size_t i) {
        assert_true(i < MAX_S && i < f->v->n_sessions);
        free(f->rs[i]);
        f->rs[i] = reason_verdict(&f->v->sessions[i], &f->inv.sessions[i],
                                  f->inv.trees[f->inv.sessions[i].tree].store ?: &qwen_store);
        assert_non_null(f->rs[i]);
        return f->rs[i];
}

static const char *fx_oreason(Fixture *f, size_t i) {
        assert_true(i < ELEMENTSOF(f->ro) && i < f->v->n_orphans);
        free(f->ro[i]);
        f->ro[i] = reason_orphan(&f->v->orphans[i], &f->inv.orphans[i],
                                 f->inv.trees[f->inv.orphans[i].tree].store ?: &qwen_store);
        assert_non_null(f->ro[i]);
        return f->ro[i];
}

static void fx_free_reasons(Fixture *f) {
        for (size_t i = 0; i < ELEMENTSOF(f->rs); i++) {
                free(f->rs[i]);
                f->rs[i] = NULL;
        }
        for (size_t i = 0; i < ELEMENTSOF(f->ro); i++) {
                free(f->ro[i]);
                f->ro[i] = NULL;
        }
}

static void fx_eval(Fixture *f, bool force) {
        PolicyOptions o = { .force = force };
        f->v = policy_verdicts_free(f->v);
        assert_int_equal(policy_evaluate(&f->inv, &f->cfg, NOW, &o, &f->v), 0);
        assert_non_null(f->v);
        assert_int_equal(f->v->n_sessions, f->inv.n_sessions);
        assert_int_equal(f->v->n_orphans, f->inv.n_orphans);
        for (size_t i = 0; i < f->v->n_sessions; i++) {
                assert_non_null(fx_reason(f, i));
                assert_non_null(f->v->sessions[i].rule);
        }
}

static void fx_done(Fixture *f) {
        fx_free_reasons(f);
        f->v = policy_verdicts_free(f->v);
}

static char verb_char(Verb v) {
        return "KADSC"[v];
}

/* The verbs of all sessions as a string such as "KKA". */
static void fx_verbs(const Fixture *f, char *buf) {
        size_t i;
        for (i = 0; i < f->v->n_sessions; i++)
                buf[i] = verb_char(f->v->sessions[i].verb);
        buf[i] = '\0';
}

typedef struct SessSpec {
        msec_t idle;
        uint64_t bytes;
        SessionState state;
} SessSpec;

typedef struct RuleCase {
        const char *name;
        Policy pol;
        TreeLimits tree;
        uint64_t fs_size, fs_avail;
        SessSpec s[6];
        size_t n;
        const char *expect; /* K(eep) A(rchive) D(elete) S(kip), one per session */
        size_t ri;          /* the session whose rule and reason are checked */
        const char *rule;
        const char *reason; /* substring of its reason */
} RuleCase;

static const RuleCase rule_cases[] = {
        { "max-age just below", POL(.max_age = 90 * D), {}, 0, 0, { { 90 * D - 1 } }, 1, "K", 0,
          "none", "idle 89d <= max-age 90d" },
        { "max-age exactly at", POL(.max_age = 90 * D), {}, 0, 0, { { 90 * D } }, 1, "K", 0,
          "none", "<= max-age 90d" },
        { "max-age just above", POL(.max_age = 90 * D), {}, 0, 0, { { 90 * D + 1 } }, 1, "A", 0,
          "max-age", "idle 90d > max-age 90d" },
        { "max-age with action delete", POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D), {},
          0, 0, { { 121 * D } }, 1, "D", 0, "max-age", "idle 121d > max-age 90d" },
        { "max-sessions below", POL(.max_sessions = 3), {}, 0, 0, { { 2 * D }, { 3 * D } }, 2,
          "KK", 1, "none", "no rule applies" },
        { "max-sessions count equal to limit", POL(.max_sessions = 2), {}, 0, 0,
          { { 2 * D }, { 3 * D } }, 2, "KK", 1, "none", NULL },
        { "max-sessions above", POL(.max_sessions = 2), {}, 0, 0,
          { { 4 * D }, { 2 * D }, { 3 * D } }, 3, "AKK", 0, "max-sessions",
          "rank 3 > max-sessions 2" },
        { "max-size just below", POL(.max_size = 100), {}, 0, 0, { { 2 * D, 49 }, { 3 * D, 50 } },
          2, "KK", 0, "none", NULL },
        { "max-size total exactly at cap", POL(.max_size = 100), {}, 0, 0,
          { { 2 * D, 50 }, { 3 * D, 50 } }, 2, "KK", 0, "none", NULL },
        { "max-size above: oldest go until at or below",
          POL(.max_size = 5 * GB), {}, 0, 0,
          { { 2 * D, 3 * GB }, { 3 * D, 2 * GB + 200 * MB }, { 4 * D, 1 } }, 3, "KAA", 1,
          "max-size", "project 5.1G > max-size 5G" },
        { "archive-max-age exactly at", POL(.archive_max_age = 180 * D), {}, 0, 0,
          { { 180 * D, 1, SESSION_ARCHIVED } }, 1, "K", 0, "none", "archived" },
        { "archive-max-age just above", POL(.archive_max_age = 180 * D), {}, 0, 0,
          { { 180 * D + 1, 1, SESSION_ARCHIVED } }, 1, "D", 0, "archive-max-age",
          "archived 180d ago > archive-max-age 180d" },
        { "archive-max-size above", POL(.archive_max_size = 100), {}, 0, 0,
          { { 10 * D, 60, SESSION_ARCHIVED }, { 20 * D, 50, SESSION_ARCHIVED } }, 2, "KD", 1,
          "archive-max-size", "archive 110B > archive-max-size 100B" },
        { "archive-max-size exactly at", POL(.archive_max_size = 100), {}, 0, 0,
          { { 10 * D, 50, SESSION_ARCHIVED }, { 20 * D, 50, SESSION_ARCHIVED } }, 2, "KK", 1,
          "none", "archived" },
        { "archived sessions ignore max-age", POL(.max_age = 90 * D), {}, 0, 0,
          { { 200 * D, 1, SESSION_ARCHIVED } }, 1, "K", 0, "none", "archived" },
        { "archived sessions ignore max-sessions and max-size",
          POL(.max_sessions = 1, .max_size = 10), {}, 0, 0,
          { { 2 * D, 100 }, { 200 * D, 100, SESSION_ARCHIVED } }, 2, "AK", 0, "max-size",
          "project 100B > max-size 10B" },
        { "tree max-size exactly at cap", POL(), { .max_size = 120, .count_allocated = true }, 0,
          0, { { 2 * D, 40 }, { 3 * D, 40 }, { 4 * D, 40 } }, 3, "KKK", 0, "none", NULL },
        { "tree max-size above shrinks to the low watermark",
          POL(), { .max_size = 100, .low_watermark = 50, .count_allocated = true }, 0, 0,
          { { 2 * D, 40 }, { 3 * D, 40 }, { 4 * D, 40 } }, 3, "KDD", 2, "tree-max-size",
          "tree 120B > max-size 100B, shrinking to 50B (disk caps delete)" },
        { "tree max-size without watermark shrinks to the cap",
          POL(), { .max_size = 100, .count_allocated = true }, 0, 0,
          { { 2 * D, 40 }, { 3 * D, 40 }, { 4 * D, 40 } }, 3, "KKD", 2, "tree-max-size", NULL },
        { "tree max-size counts archived sessions, oldest first across states",
          POL(), { .max_size = 100, .count_allocated = true }, 0, 0,
          { { 2 * D, 40 }, { 100 * D, 70, SESSION_ARCHIVED } }, 2, "KD", 1, "tree-max-size",
          NULL },
        { "keep-free percent below the floor",
          POL(), { .keep_free = { .is_set = true, .is_percent = true, .percent = 10 } }, 1000, 90,
          { { 2 * D, 5 }, { 3 * D, 5 }, { 4 * D, 5 } }, 3, "KDD", 1, "keep-free",
          "free 90B < keep-free 10% (100B) (disk caps delete)" },
        { "keep-free exactly at the floor",
          POL(), { .keep_free = { .is_set = true, .is_percent = true, .percent = 10 } }, 1000,
          100, { { 2 * D, 5 }, { 3 * D, 5 } }, 2, "KK", 1, "none", NULL },
        { "keep-free bytes just below",
          POL(), { .keep_free = { .is_set = true, .bytes = 100 } }, 1000, 99,
          { { 2 * D, 5 }, { 3 * D, 5 } }, 2, "KD", 1, "keep-free",
          "free 99B < keep-free 100B" },
        { "first rule wins", POL(.max_age = 90 * D, .max_sessions = 1), {}, 0, 0,
          { { 2 * D }, { 100 * D } }, 2, "KA", 1, "max-age", NULL },
        { "disk cap turns an archive into a deletion",
          POL(.max_age = 90 * D), { .keep_free = { .is_set = true, .bytes = 100 } }, 1000, 99,
          { { 100 * D, 5 } }, 1, "D", 0, "keep-free", NULL },
};

static void test_policy_rules_table(void **state) {
        (void)state;
        for (size_t c = 0; c < ELEMENTSOF(rule_cases); c++) {
                const RuleCase *rc = &rule_cases[c];
                Fixture f;
                char got[MAX_S + 1];

                fx_init(&f, rc->pol);
                f.cfg.tree = rc->tree;
                if (rc->fs_size) {
                        f.trees[0].fs_known = true;
                        f.trees[0].fs_size = rc->fs_size;
                        f.trees[0].fs_avail = rc->fs_avail;
                }
                for (size_t i = 0; i < rc->n; i++)
                        fx_add(&f, "/p/a", rc->s[i].state, rc->s[i].idle, rc->s[i].bytes);
                fx_eval(&f, false);
                fx_verbs(&f, got);
                if (!streq(got, rc->expect) || !streq(f.v->sessions[rc->ri].rule, rc->rule) ||
                    (rc->reason && !strstr(fx_reason(&f, rc->ri), rc->reason))) {
                        print_error("case '%s': verbs %s (want %s), rule %s (want %s), reason '%s'"
                                    " (want '%s')\n",
                                    rc->name, got, rc->expect, f.v->sessions[rc->ri].rule,
                                    rc->rule, fx_reason(&f, rc->ri),
                                    rc->reason ?: "");
                        fx_done(&f);
                        fail();
                }
                fx_done(&f);
        }
}

static void test_policy_empty_inventory(void **state) {
        Fixture f;
        (void)state;
        fx_init(&f, (Policy)POL(.max_age = D, .max_sessions = 1, .max_size = 1));
        f.cfg.tree.max_size = 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->n_sessions, 0);
        assert_int_equal(f.v->n_orphans, 0);
        fx_done(&f);

        /* no trees at all */
        fx_init(&f, (Policy)POL(.max_age = D));
        f.inv.n_trees = 0;
        fx_eval(&f, false);
        assert_int_equal(f.v->n_sessions, 0);
        fx_done(&f);
}

static void test_policy_ranks_newest_first(void **state) {
        Fixture f;
        (void)state;
        fx_init(&f, (Policy)POL());
        fx_add(&f, "/p/a", SESSION_ACTIVE, 5 * D, 1);
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 1 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 1);
        fx_add(&f, "/p/b", SESSION_ACTIVE, 9 * D, 1);
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].rank, 2);
        assert_int_equal(f.v->sessions[1].rank, 0); /* archived: not ranked */
        assert_int_equal(f.v->sessions[2].rank, 1);
        assert_int_equal(f.v->sessions[3].rank, 1); /* another project */
        fx_done(&f);
}

static void test_policy_rank_ties_broken_by_records(void **state) {
        Fixture f;
        Session *s;
        (void)state;

        /* a copy gave every transcript the same mtime: the record timestamps decide */
        fx_init(&f, (Policy)POL(.max_sessions = 1));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 1);
        s->last_record = NOW - 9 * D;
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 1);
        s->last_record = NOW - 8 * D;
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 1);
        s->last_record = NOW - 8 * D;
        s->first_record = NOW - 8 * D - 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[2].rank, 1);
        assert_int_equal(f.v->sessions[1].rank, 2);
        assert_int_equal(f.v->sessions[0].rank, 3);
        assert_int_equal(f.v->sessions[2].verb, VERB_KEEP);
        assert_int_equal(f.v->sessions[0].verb, VERB_ARCHIVE);
        fx_done(&f);
}

static void test_policy_future_mtime_is_clamped(void **state) {
        Fixture f;
        Session *s;
        (void)state;

        /* scan clamped last_activity, but the write itself is in the future: in use */
        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 0, 1);
        s->mtime = s->last_write = NOW + 3 * D;
        s->future_clamped = true;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_SKIP);
        assert_string_equal(f.v->sessions[0].rule, "live");
        assert_non_null(strstr(fx_reason(&f, 0), "in the future"));
        fx_done(&f);

        /* an unclamped future last_activity counts as idle 0, never as negative idle */
        fx_init(&f, (Policy)POL(.max_age = 90 * D, .min_idle = 0));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, -400 * D, 1);
        s->mtime = s->last_write = NOW - 100 * D; /* only the last record claims the future */
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP);
        assert_string_equal(fx_reason(&f, 0), "idle 0s <= max-age 90d");
        fx_done(&f);
}

static void test_policy_min_idle_cutoff(void **state) {
        Fixture f;
        Session *s;
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW - 3 * H; /* a subagent wrote recently */
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW - 24 * H; /* exactly at min-idle: not in use */
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW - 24 * H + 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_SKIP);
        assert_true(f.v->sessions[0].protections & PROT_LIVE);
        assert_string_equal(fx_reason(&f, 0),
                            "kept: in use: written 3h ago < min-idle 1d (a rule would select it: "
                            "archive for idle 100d > max-age 90d)");
        assert_int_equal(f.v->sessions[1].verb, VERB_ARCHIVE);
        assert_false(f.v->sessions[1].protections & PROT_LIVE);
        assert_int_equal(f.v->sessions[2].verb, VERB_SKIP);
        fx_done(&f);
}

enum {
        PR_PINNED,
        PR_GROUPED,
        PR_ORG_UNREADABLE,
        PR_TITLED,
        PR_SCHEDULED,
        PR_WORKTREE,
        PR_MIN_AGE,
        PR_LATEST,
        PR_LIVE,
        PR_UNVERIFIED,
        PR_FOREIGN,
        _PR_MAX,
};

static const struct {
        const char *name;
        Protection bit;
        Verb verb;
} prot_cases[_PR_MAX] = {
        [PR_PINNED] = { "pinned", PROT_PINNED, VERB_KEEP },
        [PR_GROUPED] = { "pinned", PROT_PINNED, VERB_KEEP },
        [PR_ORG_UNREADABLE] = { "pinned", PROT_PINNED, VERB_KEEP },
        [PR_TITLED] = { "titled", PROT_TITLED, VERB_KEEP },
        [PR_SCHEDULED] = { "scheduled", PROT_SCHEDULED, VERB_KEEP },
        [PR_WORKTREE] = { "worktree", PROT_WORKTREE, VERB_KEEP },
        [PR_MIN_AGE] = { "min-age", PROT_MIN_AGE, VERB_KEEP },
        [PR_LATEST] = { "keep-latest", PROT_LATEST, VERB_KEEP },
        [PR_LIVE] = { "live", PROT_LIVE, VERB_SKIP },
        [PR_UNVERIFIED] = { "unverified", PROT_UNVERIFIED, VERB_SKIP },
        [PR_FOREIGN] = { "foreign", PROT_FOREIGN, VERB_SKIP },
};

enum {
        RU_MAX_AGE,
        RU_MAX_SESSIONS,
        RU_MAX_SIZE,
        RU_TREE_MAX_SIZE,
        RU_KEEP_FREE,
        RU_ARCHIVE_MAX_AGE,
        RU_ARCHIVE_MAX_SIZE,
        _RU_MAX,
};

static const char *const rule_names[_RU_MAX] = {
        "max-age",          "max-sessions", "max-size",         "tree-max-size",
        "keep-free",        "archive-max-age", "archive-max-size",
};

/* Session 0 is what rule `ru` selects; a newer session 1 stays. */
static void prot_setup_rule(Fixture *f, int ru) {
        Policy *p = &f->cfg.defaults;
        SessionState st = ru >= RU_ARCHIVE_MAX_AGE ? SESSION_ARCHIVED : SESSION_ACTIVE;

        fx_add(f, "/p/a", st, 200 * D, 100);
        fx_add(f, "/p/a", SESSION_ACTIVE, 2 * D, 10);
        switch (ru) {
        case RU_MAX_AGE:
                p->max_age = 90 * D;
                break;
        case RU_MAX_SESSIONS:
                p->max_sessions = 1;
                break;
        case RU_MAX_SIZE:
                p->max_size = 50;
                break;
        case RU_TREE_MAX_SIZE:
                f->cfg.tree.max_size = 50;
                break;
        case RU_KEEP_FREE:
                f->cfg.tree.keep_free = (SizeSpec){ .is_set = true, .bytes = 1000 };
                f->trees[0] = (Tree){ .runtime_dir = (char *)"/r", .fs_known = true,
                                      .fs_size = 10000, .fs_avail = 950 };
                break;
        case RU_ARCHIVE_MAX_AGE:
                p->archive_max_age = 90 * D;
                break;
        case RU_ARCHIVE_MAX_SIZE:
                p->archive_max_size = 50;
                break;
        }
}

static void prot_apply(Fixture *f, int pr) {
        Session *s = &f->s[0];
        Policy *p = &f->cfg.defaults;

        switch (pr) {
        case PR_PINNED:
                p->keep_pinned = true;
                s->pinned = true;
                break;
        case PR_GROUPED:
                p->keep_pinned = true;
                s->grouped = true;
                break;
        case PR_ORG_UNREADABLE:
                p->keep_pinned = true;
                s->org_unreadable = true;
                break;
        case PR_TITLED:
                p->keep_titled = true;
                s->title = (char *)"my important chat";
                s->title_manual = true;
                break;
        case PR_SCHEDULED:
                p->keep_scheduled = true;
                s->n_tasks = 2;
                break;
        case PR_WORKTREE:
                p->keep_worktree = true;
                s->live_worktree = true;
                break;
        case PR_MIN_AGE:
                p->min_age = 7 * D;
                s->first_record = NOW - 2 * D;
                break;
        case PR_LATEST:
                p->keep_latest = 5;
                break;
        case PR_LIVE:
                s->live = LIVE_CLAIM;
                s->live_reason = (char *)"runtime claim pid 42 alive";
                break;
        case PR_UNVERIFIED:
                s->owner = OWNER_UNVERIFIED;
                s->owner_cause = OWNER_CAUSE_UNREADABLE;
                s->cwd = NULL;
                s->owner_detail = (char *)"first line is not JSON";
                break;
        case PR_FOREIGN:
                s->owner = OWNER_FOREIGN;
                s->owner_cause = OWNER_CAUSE_FOREIGN;
                s->cwd = (char *)"/x";
                s->owner_dir = (char *)"-x";
                break;
        }
}

static void test_policy_each_protection_beats_each_rule(void **state) {
        (void)state;
        for (int ru = 0; ru < _RU_MAX; ru++) {
                /* the rule alone selects session 0 */
                Fixture f;
                fx_init(&f, (Policy)POL());
                prot_setup_rule(&f, ru);
                fx_eval(&f, false);
                if (f.v->sessions[0].verb == VERB_KEEP ||
                    !streq(f.v->sessions[0].rule, rule_names[ru])) {
                        print_error("rule %s alone: verb %s rule %s\n", rule_names[ru],
                                    policy_verb_to_string(f.v->sessions[0].verb), f.v->sessions[0].rule);
                        fail();
                }
                fx_done(&f);

                for (int pr = 0; pr < _PR_MAX; pr++) {
                        const Verdict *v;
                        if (pr == PR_LATEST && ru >= RU_ARCHIVE_MAX_AGE)
                                continue; /* keep-latest ranks active sessions only */
                        fx_init(&f, (Policy)POL());
                        prot_setup_rule(&f, ru);
                        prot_apply(&f, pr);
                        fx_eval(&f, false);
                        v = &f.v->sessions[0];
                        if (v->verb != prot_cases[pr].verb || !streq(v->rule, prot_cases[pr].name) ||
                            !(v->protections & prot_cases[pr].bit) ||
                            (pr != PR_UNVERIFIED && pr != PR_FOREIGN && !strstr(fx_reason(&f, 0), "(a rule would select it: ")) ||
                            (pr != PR_UNVERIFIED && pr != PR_FOREIGN &&
                             !strstr(fx_reason(&f, 0), ru == RU_TREE_MAX_SIZE || ru == RU_KEEP_FREE ||
                                                                ru >= RU_ARCHIVE_MAX_AGE
                                                        ? "select it: delete for"
                                                        : "select it: archive for"))) {
                                print_error("protection %s vs rule %s: verb %s rule %s reason '%s'\n",
                                            prot_cases[pr].name, rule_names[ru],
                                            policy_verb_to_string(v->verb), v->rule, fx_reason(&f, 0));
                                fail();
                        }
                        fx_done(&f);
                }
        }
}

/* keep-scheduled off: a session bound to a task may be archived, never deleted (qgc does not
 * remove Qwen's scheduled tasks); a size walk goes on to the next session. */
static void test_policy_scheduled_never_deleted(void **state) {
        Fixture f;
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .keep_scheduled = false));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1)->n_tasks = 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_ARCHIVE);
        fx_done(&f);

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .action = POLICY_ACTION_DELETE, .keep_scheduled = false));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1)->n_tasks = 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP);
        assert_string_equal(f.v->sessions[0].rule, "scheduled");
        assert_true(f.v->sessions[0].protections & PROT_SCHEDULED);
        assert_string_equal(fx_reason(&f, 0),
                            "kept: bound to 1 scheduled task, which qgc does not remove (a rule "
                            "would select it: delete for idle 121d > max-age 90d)");
        fx_done(&f);

        /* tree max-size: the bound oldest stays, the next oldest goes instead */
        fx_init(&f, (Policy)POL(.keep_scheduled = false));
        f.cfg.tree.max_size = 150;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 300 * D, 100)->n_tasks = 2;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 100);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 1 * D, 10);
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP);
        assert_int_equal(f.v->sessions[1].verb, VERB_DELETE);
        assert_int_equal(f.v->sessions[2].verb, VERB_KEEP);
        fx_done(&f);
}

static void test_policy_protection_reasons(void **state) {
        Fixture f;
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1);
        prot_apply(&f, PR_PINNED);
        fx_eval(&f, false);
        assert_string_equal(fx_reason(&f, 0),
                            "kept: pinned (a rule would select it: archive for idle 121d > max-age "
                            "90d)");
        fx_done(&f);

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1);
        prot_apply(&f, PR_ORG_UNREADABLE);
        fx_eval(&f, false);
        assert_string_equal(fx_reason(&f, 0),
                            "kept: pins unknown (session-organization.v1.json unreadable) (a rule "
                            "would select it: archive for idle 121d > max-age 90d)");
        fx_done(&f);

        /* keep-pinned = false: the person said pins do not matter */
        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1);
        prot_apply(&f, PR_ORG_UNREADABLE);
        f.cfg.defaults.keep_pinned = false;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_ARCHIVE);
        fx_done(&f);

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1);
        prot_apply(&f, PR_UNVERIFIED);
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_SKIP);
        assert_string_equal(fx_reason(&f, 0), "unverified: first line is not JSON");
        fx_done(&f);

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1);
        prot_apply(&f, PR_FOREIGN);
        fx_eval(&f, false);
        assert_string_equal(fx_reason(&f, 0),
                            "foreign: cwd '/x' belongs to project directory '-x'");
        fx_done(&f);

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_CONFLICT, 121 * D, 1);
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_SKIP);
        assert_string_equal(f.v->sessions[0].rule, "conflict");
        assert_string_equal(fx_reason(&f, 0), "in both chats/ and chats/archive/");
        fx_done(&f);

        /* all applicable bits are recorded, the first keep-class protection names the rule */
        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 121 * D, 1);
        prot_apply(&f, PR_TITLED);
        prot_apply(&f, PR_SCHEDULED);
        prot_apply(&f, PR_LATEST);
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].protections, PROT_TITLED | PROT_SCHEDULED | PROT_LATEST);
        assert_string_equal(f.v->sessions[0].rule, "titled");
        assert_string_equal(fx_reason(&f, 0),
                            "kept: titled by a person, bound to 2 scheduled tasks, keep-latest 5 "
                            "(rank 1, newest first) (a rule would select it: archive for idle "
                            "121d > max-age 90d)");
        fx_done(&f);

        /* protections are recorded even when no rule selected the session */
        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 3 * D, 1);
        prot_apply(&f, PR_PINNED);
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP);
        assert_string_equal(f.v->sessions[0].rule, "none");
        assert_int_equal(f.v->sessions[0].protections, PROT_PINNED);
        fx_done(&f);
}

static void test_policy_protected_bytes_do_not_count_as_freed(void **state) {
        Fixture f;
        (void)state;

        /* the oldest is pinned: the size walk continues to the next oldest */
        fx_init(&f, (Policy)POL(.max_size = 100, .keep_pinned = true));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 50);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 3 * D, 50);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 4 * D, 50);
        f.s[2].pinned = true;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[2].verb, VERB_KEEP);
        assert_string_equal(f.v->sessions[2].rule, "pinned");
        assert_int_equal(f.v->sessions[1].verb, VERB_ARCHIVE);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP);
        fx_done(&f);
}

static void test_policy_min_age_uses_mtime_when_first_record_unknown(void **state) {
        Fixture f;
        Session *s;
        (void)state;

        fx_init(&f, (Policy)POL(.max_sessions = 1, .min_age = 7 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 1);
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 3 * D, 1); /* empty junk: no records */
        s->first_record = 0;
        s->empty = true;
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 8 * D, 1);
        s->first_record = 0;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[1].verb, VERB_KEEP);
        assert_string_equal(f.v->sessions[1].rule, "min-age");
        assert_non_null(strstr(fx_reason(&f, 1), "age 3d < min-age 1w"));
        assert_int_equal(f.v->sessions[2].verb, VERB_ARCHIVE);
        fx_done(&f);
}

/* A delete whose edit of a file Qwen shares the executor refuses (erase.h: logs.json over
 * 64 MiB, not what Qwen writes, unreadable; the organisation file unreadable) is planned as the
 * skip the run makes, with the limit and what it would have done; it takes no place under the
 * deletion limits (the next session gets it); an archive is not held (it edits neither file). */
static void test_policy_shared_file_limit_is_planned(void **state) {
        Fixture f;
        char got[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D,
                                .max_deletions = 1));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 103 * D, 1)->logs_state = SHARED_TOO_BIG;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 102 * D, 1)->logs_state = SHARED_MALFORMED;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 101 * D, 1)->org_unreadable = true;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        f.cfg.defaults.keep_pinned = false; /* else the unreadable organisation file pins it */
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "SSSD");
        for (size_t i = 0; i < 3; i++) {
                assert_string_equal(f.v->sessions[i].rule, "limit");
                assert_int_equal(f.v->sessions[i].blocked_verb, VERB_DELETE);
                assert_null(policy_verdict_held_by(&f.v->sessions[i]));
        }
        assert_string_equal(fx_reason(&f, 0), "tmp/<hash>/logs.json is larger than the 64M qgc "
                                              "edits (limit) (would delete: idle 103d > max-age "
                                              "90d)");
        assert_string_equal(fx_reason(&f, 1), "tmp/<hash>/logs.json is not what Qwen Code writes "
                                              "(limit) (would delete: idle 102d > max-age 90d)");
        assert_string_equal(fx_reason(&f, 2), "session-organization.v1.json cannot be read, or "
                                              "is larger than the 16M qgc edits (limit) (would "
                                              "delete: idle 101d > max-age 90d)");

        /* archiving edits neither file; a sidecar merge past its limit is planned a skip */
        f.cfg.defaults.action = POLICY_ACTION_ARCHIVE;
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "AAAA");
        f.s[3].merge_too_big = true;
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "AAAS");
        assert_string_equal(f.v->sessions[3].rule, "limit");
        assert_int_equal(f.v->sessions[3].blocked_verb, VERB_ARCHIVE);
        assert_string_equal(fx_reason(&f, 3), "its .pr.json or .ledger.jsonl, in both chats/ and "
                                              "chats/archive/, is larger than the 64M qgc merges "
                                              "(limit) (would archive: idle 100d > max-age 90d)");
        /* ... a delete edits no sidecar */
        f.cfg.defaults.action = POLICY_ACTION_DELETE;
        f.s[0].logs_state = SHARED_OK;
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "DSSS");
        assert_string_equal(f.v->sessions[3].rule, "blast-radius");
        fx_done(&f);
}

static void test_policy_blast_radius(void **state) {
        Fixture f;
        char got[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D,
                                .max_deletions = 2));
        for (int i = 0; i < 4; i++)
                fx_add(&f, "/p/a", SESSION_ACTIVE, (100 + i) * D, 1);
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "SSDD"); /* the two oldest go, the newest excess waits */
        assert_string_equal(f.v->sessions[0].rule, "blast-radius");
        assert_true(f.v->sessions[0].protections & PROT_BLAST);
        assert_string_equal(fx_reason(&f, 0),
                            "held back by max-deletions (2 per run; use --force); would delete: idle "
                            "100d > max-age 90d");
        assert_false(f.v->sessions[3].protections & PROT_BLAST);
        assert_string_equal(policy_verdict_held_by(&f.v->sessions[0]), "max-deletions");
        assert_string_equal(policy_verdict_held_rule(&f.v->sessions[0]), "max-age");
        assert_null(policy_verdict_held_by(&f.v->sessions[3]));

        fx_eval(&f, true);
        fx_verbs(&f, got);
        assert_string_equal(got, "DDDD");
        assert_false(f.v->sessions[0].protections & PROT_BLAST);
        fx_done(&f);
}

static void test_policy_blast_radius_across_projects_and_percent(void **state) {
        Fixture f;
        char got[MAX_S + 1];
        (void)state;

        /* 3 per run across two projects: the three oldest deletions overall */
        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D,
                                .max_deletions = 3));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 103 * D, 1);
        fx_add(&f, "/p/b", SESSION_ACTIVE, 101 * D, 1);
        fx_add(&f, "/p/b", SESSION_ACTIVE, 102 * D, 1);
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "SDDD");
        fx_done(&f);

        /* 50% of a project's 4 sessions: 2; exactly at the percentage is allowed */
        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D,
                                .max_deletions_percent = 50));
        for (int i = 0; i < 4; i++)
                fx_add(&f, "/p/a", SESSION_ACTIVE, (100 + i) * D, 1);
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "SSDD");
        assert_non_null(strstr(fx_reason(&f, 0), "50% of the project's 4 sessions"));
        assert_string_equal(policy_verdict_held_by(&f.v->sessions[0]), "max-deletions-percent");
        fx_eval(&f, true);
        fx_verbs(&f, got);
        assert_string_equal(got, "DDDD");
        fx_done(&f);

        /* archiving is not limited */
        fx_init(&f, (Policy)POL(.max_age = 90 * D, .max_deletions = 1));
        for (int i = 0; i < 3; i++)
                fx_add(&f, "/p/a", SESSION_ACTIVE, (100 + i) * D, 1);
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "AAA");
        fx_done(&f);
}

/* Every cap the plan leaves unmet is a fact of the verdicts, with what holds it, and reason.c
 * says so once (issue 24.4): keep-latest, a session in use and the deletion limit hold a tree
 * cap; keep-latest holds a project's max-sessions; a met cap is not listed. */
static void test_policy_caps_unmet(void **state) {
        Fixture f;
        _cleanup_free_ char *w0 = NULL, *w1 = NULL;
        (void)state;

        /* five sessions of 10 in /p/a, tree max-size 15: the oldest (idle 104d) may go, the
         * limit holds the next one back, one is in use, the newest two are keep-latest 2 */
        fx_init(&f, (Policy)POL(.keep_latest = 2, .max_sessions = 2, .max_deletions = 1));
        f.cfg.tree.max_size = 15;
        for (int i = 0; i < 5; i++)
                fx_add(&f, "/p/a", SESSION_ACTIVE, (100 + i) * D, 10);
        f.s[2].live = LIVE_CLAIM;
        f.s[2].live_reason = (char *)"runtime claim pid 42 alive";
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[4].verb, VERB_DELETE);
        assert_int_equal(f.v->n_caps, 2);
        const CapUnmet *t = &f.v->caps[0], *g = &f.v->caps[1];
        assert_string_equal(t->cap, "tree-max-size");
        assert_null(t->project);
        assert_int_equal(t->after, 40);
        assert_int_equal(t->limit, 15);
        w0 = reason_cap_unmet(t, NULL);
        assert_string_equal(w0, "tree cap not met: 40B > max-size 15B after the plan; held by "
                                "keep-latest 2 sessions (20B), in use 1 (10B), max-deletions 1 "
                                "(10B)");
        /* max-sessions 2 archives ranks 3-5: rank 3 is in use, rank 4 (its deletion held
         * back) is archived, rank 5 deleted: 3 stay active, held by the one in use only (the
         * newest two stay under max-sessions anyway) */
        assert_string_equal(g->cap, "max-sessions");
        assert_string_equal(g->project, "/p/a");
        assert_int_equal(f.v->sessions[3].verb, VERB_ARCHIVE);
        w1 = reason_cap_unmet(g, NULL);
        assert_string_equal(w1, "project cap not met in /p/a: 3 active sessions > max-sessions 2 "
                                "after the plan; held by in use 1 session (10B)");
        /* with --force the limit holds nothing back; without the session in use the tree cap
         * is held by keep-latest alone */
        f.s[2].live = 0;
        fx_eval(&f, true);
        assert_int_equal(f.v->n_caps, 1);
        free(w0);
        w0 = reason_cap_unmet(&f.v->caps[0], "/home/u/.qwen");
        assert_string_equal(w0, "tree cap not met in /home/u/.qwen: 20B > max-size 15B after the "
                                "plan; held by keep-latest 2 sessions (20B)");
        fx_done(&f);

        /* a met cap is no fact */
        fx_init(&f, (Policy)POL(.keep_latest = 1));
        f.cfg.tree.max_size = 15;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 10);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 101 * D, 10);
        fx_eval(&f, false);
        assert_int_equal(f.v->n_caps, 0);
        fx_done(&f);
}

static void test_policy_blast_radius_falls_back_to_archive(void **state) {
        Fixture f;
        char got[MAX_S + 1];
        (void)state;

        /* max-age archives all three, the tree cap upgrades the two oldest to deletions, the
         * limit allows one: the other is archived as its project rule says */
        fx_init(&f, (Policy)POL(.max_age = 90 * D, .max_deletions = 1));
        f.cfg.tree.max_size = 10;
        for (int i = 0; i < 3; i++)
                fx_add(&f, "/p/a", SESSION_ACTIVE, (100 + i) * D, 10);
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "AAD");
        assert_string_equal(f.v->sessions[2].rule, "tree-max-size");
        assert_string_equal(f.v->sessions[1].rule, "max-age");
        assert_true(f.v->sessions[1].protections & PROT_BLAST);
        assert_string_equal(fx_reason(&f, 1),
                            "idle 101d > max-age 90d; its tree-max-size deletion held back by "
                            "max-deletions (1 per run; use --force)");
        assert_false(f.v->sessions[0].protections & PROT_BLAST);
        assert_string_equal(policy_verdict_held_rule(&f.v->sessions[1]), "tree-max-size");
        /* an archive instead whose sidecar merge the run would refuse: a skip (limit) */
        f.s[1].merge_too_big = true;
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "ASD");
        assert_string_equal(f.v->sessions[1].rule, "limit");
        assert_string_equal(fx_reason(&f, 1), "its .pr.json or .ledger.jsonl, in both chats/ and "
                                              "chats/archive/, is larger than the 64M qgc merges "
                                              "(limit) (would archive: idle 101d > max-age 90d)");
        fx_eval(&f, true);
        fx_verbs(&f, got);
        assert_string_equal(got, "ADD");
        fx_done(&f);
}

/* compress-after (the cold tier): an archived session idle past it is compressed, at the
 * project's level; an active one is not, nor one compressed already, nor one a protection
 * holds; archive-max-age deletes compressed sessions like other archived ones, and a deletion
 * the blast radius holds back falls back to the compression. */
static void test_policy_compress_after(void **state) {
        Fixture f;
        char got[MAX_S + 1];
        Session *s;
        (void)state;

        fx_init(&f, (Policy)POL(.compress_after = 30 * D, .compress_level = 7));
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 30 * D, 10);     /* at the limit: stays */
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 30 * D + 1, 10); /* compressed */
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 10);      /* not archived */
        s = fx_add(&f, "/p/a", SESSION_ARCHIVED, 100 * D, 10); /* compressed already */
        s->cold = true;
        s->pinned = true;
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 100 * D, 10)->pinned = true;
        f.cfg.defaults.keep_pinned = true;
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "KCKKK");
        assert_string_equal(f.v->sessions[1].rule, "compress-after");
        assert_string_equal(fx_reason(&f, 1), "archived, idle 30d > compress-after 30d");
        assert_int_equal(f.v->sessions[1].compress_level, 7);
        assert_string_equal(fx_reason(&f, 3), "archived, compressed");
        assert_string_equal(f.v->sessions[4].rule, "pinned");
        fx_done(&f);

        /* archive-max-age wins over the compression, for compressed sessions too; held back,
         * the deletion falls back to the compression */
        fx_init(&f, (Policy)POL(.compress_after = 30 * D, .compress_level = 3,
                                .archive_max_age = 90 * D, .max_deletions = 1));
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 200 * D, 10);
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 100 * D, 10);
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 300 * D, 10)->cold = true;
        fx_eval(&f, false);
        fx_verbs(&f, got);
        assert_string_equal(got, "CCD");
        assert_string_equal(f.v->sessions[2].rule, "archive-max-age");
        for (size_t i = 0; i < 2; i++) {
                assert_string_equal(f.v->sessions[i].rule, "compress-after");
                assert_true(f.v->sessions[i].protections & PROT_BLAST);
                assert_int_equal(f.v->sessions[i].compress_level, 3);
                assert_non_null(strstr(fx_reason(&f, i), "held back by max-deletions"));
        }
        fx_eval(&f, true);
        fx_verbs(&f, got);
        assert_string_equal(got, "DDD");
        fx_done(&f);
}

/* protect = true: no rule touches the project, not its own rules, not the tree caps (which take
 * from the other projects instead), not the reclaim of its orphans (issue 11). */
static void test_policy_protect_project(void **state) {
        Fixture f;
        char got[MAX_S + 1];
        ProjectOverride po = {
                .pattern = (char *)"/p/keep",
                .set_mask = 1u << POLICY_KEY_PROTECT,
                .policy = POL(.action = POLICY_ACTION_DELETE, .max_age = 30 * D, .protect = true),
        };
        (void)state;

        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 30 * D,
                                .orphan_min_age = D));
        f.cfg.projects = &po;
        f.cfg.n_projects = 1;
        f.cfg.tree.max_size = 10;
        fx_add(&f, "/p/keep", SESSION_ACTIVE, 400 * D, 10)->project_dir = (char *)"-p-keep";
        fx_add(&f, "/p/keep", SESSION_ARCHIVED, 500 * D, 10)->project_dir = (char *)"-p-keep";
        fx_add(&f, "/p/a", SESSION_ACTIVE, 5 * D, 10);
        f.o[0] = (Orphan){ .kind = ORPHAN_SUBAGENTS, .tree = 0, .name = (char *)"x",
                           .project_dir = (char *)"-p-keep", .mtime = NOW - 100 * D };
        f.o[1] = (Orphan){ .kind = ORPHAN_EMPTY_PROJECT, .tree = 0, .name = (char *)"-p-keep",
                           .project_dir = (char *)"-p-keep", .mtime = NOW - 100 * D };
        f.o[2] = (Orphan){ .kind = ORPHAN_SUBAGENTS, .tree = 0, .name = (char *)"y",
                           .project_dir = (char *)"-p-a", .mtime = NOW - 100 * D };
        f.inv.n_orphans = 3;
        fx_eval(&f, true);
        fx_verbs(&f, got);
        /* the tree cap passes over the protected sessions, oldest first, to /p/a */
        assert_string_equal(got, "KKD");
        assert_string_equal(f.v->sessions[0].rule, "protect");
        assert_true(f.v->sessions[0].protections & PROT_PROTECT);
        assert_non_null(strstr(fx_reason(&f, 0), "protected project (protect = true)"));
        assert_string_equal(f.v->sessions[1].rule, "protect");
        assert_int_equal(f.v->orphans[0].verb, VERB_KEEP);
        assert_int_equal(f.v->orphans[1].verb, VERB_KEEP);
        assert_non_null(strstr(fx_oreason(&f, 1), "protect = true"));
        assert_int_equal(f.v->orphans[2].verb, VERB_DELETE);
        fx_done(&f);
}

/* --now forecasts the ages, never liveness: min-idle and the orphan grace are measured with the
 * real clock, so a run "as of 2040" does not touch what was written an hour ago (issue 9). */
static void test_policy_forecast_clock_keeps_liveness_real(void **state) {
        const msec_t real = NOW - 3650 * D; /* --now is ten years ahead of the real clock */
        PolicyOptions o = { .real_now = real };
        Fixture f;
        Session *s;
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .orphan_min_age = 30 * D));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 3650 * D, 1);
        s->last_write = real - 3 * H; /* written three hours ago, really */
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 3650 * D, 1);
        s->last_write = real - 2 * D; /* idle for two days, really: the forecast may act */
        fx_add(&f, "/p/a", SESSION_ACTIVE, 1 * D, 1); /* the newest: keep-latest */
        f.o[0] = (Orphan){ .kind = ORPHAN_FILE_HISTORY,
                           .name = (char *)"00000000-0000-4000-8000-00000000000a",
                           .mtime = real - 1 * H, .bytes = 10 };
        f.o[1] = (Orphan){ .kind = ORPHAN_FILE_HISTORY,
                           .name = (char *)"00000000-0000-4000-8000-00000000000b",
                           .mtime = real - 31 * D, .bytes = 10 };
        f.inv.n_orphans = 2;
        assert_int_equal(policy_evaluate(&f.inv, &f.cfg, NOW, &o, &f.v), 0);
        assert_int_equal(f.v->sessions[0].verb, VERB_SKIP);
        assert_true(f.v->sessions[0].protections & PROT_LIVE);
        assert_string_equal(fx_reason(&f, 0),
                            "kept: in use: written 3h ago < min-idle 1d (a rule would select it: "
                            "archive for idle 3650d > max-age 90d)");
        assert_int_equal(f.v->sessions[1].verb, VERB_ARCHIVE);
        assert_int_equal(f.v->orphans[0].verb, VERB_KEEP);
        assert_int_equal(f.v->orphans[1].verb, VERB_DELETE);
        fx_done(&f);
}

static void test_policy_orphans_age(void **state) {
        static const struct {
                msec_t idle;
                Verb verb;
        } cases[] = {
                { 29 * D, VERB_KEEP }, { 30 * D, VERB_KEEP }, { 30 * D + 1, VERB_DELETE },
                { 40 * D, VERB_DELETE }, { -5 * D, VERB_KEEP },
        };
        (void)state;
        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                Fixture f;
                fx_init(&f, (Policy)POL(.orphan_min_age = 30 * D));
                f.o[0] = (Orphan){ .kind = ORPHAN_FILE_HISTORY,
                                   .name = (char *)"00000000-0000-4000-8000-00000000000a",
                                   .mtime = NOW - cases[c].idle,
                                   .bytes = 10 };
                f.inv.n_orphans = 1;
                fx_eval(&f, false);
                if (f.v->orphans[0].verb != cases[c].verb) {
                        print_error("orphan case %zu: %s\n", c, fx_oreason(&f, 0));
                        fail();
                }
                if (c == 3)
                        assert_string_equal(fx_oreason(&f, 0),
                                            "orphan file-history, no transcript, idle 40d > 30d");
                fx_done(&f);
        }

        /* orphan-min-age off: never */
        Fixture f;
        fx_init(&f, (Policy)POL());
        f.o[0] = (Orphan){ .kind = ORPHAN_EMPTY_PROJECT, .name = (char *)"-p-a", .mtime = 0 };
        f.inv.n_orphans = 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->orphans[0].verb, VERB_KEEP);
        fx_done(&f);
}

/* Deep Code's orphan kinds at their limits: the compaction at compact-min-idle and one past it,
 * an unindexed transcript at orphan-min-age and one past it; error.log is only reported. */
static void test_policy_deepcode_orphans(void **state) {
        static const struct {
                OrphanKind kind;
                msec_t idle;
                Verb verb;
                const char *rule;
        } cases[] = {
                { ORPHAN_DC_CHECKPOINTS, 1 * D, VERB_KEEP, "none" },
                { ORPHAN_DC_CHECKPOINTS, 1 * D + 1, VERB_DELETE, "compact-min-idle" },
                { ORPHAN_DC_UNINDEXED, 30 * D, VERB_KEEP, "none" },
                { ORPHAN_DC_UNINDEXED, 30 * D + 1, VERB_DELETE, "orphan" },
                { ORPHAN_DC_IMAGES, 30 * D + 1, VERB_DELETE, "orphan" },
                { ORPHAN_DC_ERROR_LOG, 3650 * D, VERB_KEEP, "none" },
        };
        (void)state;
        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                Fixture f;
                fx_init(&f, (Policy)POL(.orphan_min_age = 30 * D, .compact_min_idle = 1 * D));
                f.o[0] = (Orphan){ .kind = cases[c].kind, .name = (char *)"x",
                                   .project_dir = (char *)"-p-a", .mtime = NOW - cases[c].idle,
                                   .bytes = 10 };
                f.inv.n_orphans = 1;
                f.trees[0].store = &deepcode_store; /* the words of its reasons */
                fx_eval(&f, false);
                if (f.v->orphans[0].verb != cases[c].verb) {
                        print_error("case %zu: %s\n", c, fx_oreason(&f, 0));
                        fail();
                }
                assert_string_equal(f.v->orphans[0].rule, cases[c].rule);
                if (cases[c].kind == ORPHAN_DC_ERROR_LOG)
                        assert_string_equal(fx_oreason(&f, 0), "Deep Code logs/error.log over 64M: "
                                                               "reported, never trimmed");
                fx_done(&f);
        }
}

static void test_policy_orphan_deletion_counts_for_disk_caps(void **state) {
        Fixture f;
        (void)state;

        fx_init(&f, (Policy)POL(.orphan_min_age = 30 * D));
        f.cfg.tree.max_size = 100;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 60);
        f.o[0] = (Orphan){ .kind = ORPHAN_SUBAGENTS,
                           .project_dir = (char *)"-p-a",
                           .name = (char *)"00000000-0000-4000-8000-00000000000b",
                           .mtime = NOW - 40 * D,
                           .bytes = 60,
                           .bytes_alloc = 60 };
        f.inv.n_orphans = 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->orphans[0].verb, VERB_DELETE);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP); /* 120 - 60 <= 100 */
        fx_done(&f);
}

static void test_policy_count_allocated_or_apparent(void **state) {
        Fixture f;
        (void)state;

        fx_init(&f, (Policy)POL(.max_size = 1000));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 100)->bytes_alloc = 4096;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_ARCHIVE);
        f.cfg.tree.count_allocated = false;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP);
        fx_done(&f);
}

static void test_policy_trees_are_separate(void **state) {
        Fixture f;
        (void)state;

        fx_init(&f, (Policy)POL());
        f.inv.n_trees = 2;
        f.cfg.tree.max_size = 100;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 60);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 60)->tree = 1;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_KEEP);
        assert_int_equal(f.v->sessions[1].verb, VERB_KEEP);
        assert_int_equal(f.v->sessions[1].rank, 1); /* its own project in its own tree */
        fx_done(&f);
}

static void test_policy_override_picks_other_action(void **state) {
        Fixture f;
        ProjectOverride po = {
                .pattern = (char *)"/p/scratch",
                .set_mask = 1u << POLICY_KEY_ACTION | 1u << POLICY_KEY_MAX_AGE,
                .policy = POL(.action = POLICY_ACTION_DELETE, .max_age = 7 * D),
        };
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        f.cfg.projects = &po;
        f.cfg.n_projects = 1;
        fx_add(&f, "/p/scratch", SESSION_ACTIVE, 10 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 10 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        fx_add(&f, "/p/scratch", SESSION_ACTIVE, 100 * D, 1);
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_DELETE);
        assert_string_equal(fx_reason(&f, 0), "idle 10d > max-age 1w");
        assert_int_equal(f.v->sessions[1].verb, VERB_KEEP);
        assert_int_equal(f.v->sessions[2].verb, VERB_ARCHIVE);
        assert_int_equal(f.v->sessions[3].verb, VERB_DELETE);
        fx_done(&f);
}

static void test_policy_bad_arguments(void **state) {
        Fixture f;
        Verdicts *v = NULL;
        (void)state;
        fx_init(&f, (Policy)POL());
        assert_int_equal(policy_evaluate(NULL, &f.cfg, NOW, NULL, &v), -EINVAL);
        assert_int_equal(policy_evaluate(&f.inv, NULL, NOW, NULL, &v), -EINVAL);
        assert_null(v);
        /* NULL options: no force */
        assert_int_equal(policy_evaluate(&f.inv, &f.cfg, NOW, NULL, &v), 0);
        v = policy_verdicts_free(v);
}

static void test_policy_strings(void **state) {
        (void)state;
        assert_string_equal(policy_verb_to_string(VERB_DELETE), "delete");
        assert_null(policy_verb_to_string(_VERB_MAX));
        assert_string_equal(policy_protection_to_string(PROT_BLAST), "blast-radius");
        assert_string_equal(policy_protection_to_string(PROT_LIVE), "live");
        assert_null(policy_protection_to_string(PROT_LIVE | PROT_PINNED));
        for (unsigned i = 0; i < _PROT_MAX; i++)
                assert_non_null(policy_protection_to_string((Protection)(1u << i)));
        /* the whole tables (strtable.h since issue 10: the same strings, the same NULLs) */
        static const char *const verbs[] = { "keep", "archive", "delete", "skip", "compress" };
        for (unsigned i = 0; i < ELEMENTSOF(verbs); i++)
                assert_string_equal(policy_verb_to_string((Verb)i), verbs[i]);
        assert_null(policy_verb_to_string((Verb)-1));
        assert_null(policy_verb_to_string(_VERB_INVALID));
        static const struct { Protection p; const char *s; } prots[] = {
                { PROT_LIVE, "live" },          { PROT_PINNED, "pinned" },
                { PROT_TITLED, "titled" },      { PROT_SCHEDULED, "scheduled" },
                { PROT_WORKTREE, "worktree" },  { PROT_LATEST, "keep-latest" },
                { PROT_MIN_AGE, "min-age" },    { PROT_UNVERIFIED, "unverified" },
                { PROT_FOREIGN, "foreign" },    { PROT_CONFLICT, "conflict" },
                { PROT_BLAST, "blast-radius" }, { PROT_PROTECT, "protect" },
        };
        for (unsigned i = 0; i < ELEMENTSOF(prots); i++)
                assert_string_equal(policy_protection_to_string(prots[i].p), prots[i].s);
        assert_null(policy_protection_to_string((Protection)0));
        assert_null(policy_protection_to_string((Protection)(1u << _PROT_MAX)));
        assert_null(policy_protection_to_string((Protection)(1u << 31)));
        assert_null(policy_protection_to_string((Protection)-1));
}

/* The scan leaves titles unread only where no rule could select the session. */
static void test_policy_title_need(void **state) {
        Config c = {};
        ProjectOverride po[1] = {};
        TitleNeed t;

        (void)state;
        c.defaults = (Policy)POL(.max_age = 90 * D, .keep_titled = true);
        policy_title_need(&c, false, &t);
        assert_false(t.all);
        assert_int_equal(t.active_idle, 90 * D);
        assert_int_equal(t.archived_idle, MSEC_INFINITY);
        policy_title_need(&c, true, &t); /* JSON lists every title */
        assert_true(t.all);

        /* an override with a shorter max-age and an archive tier lowers the thresholds */
        po[0].policy = (Policy)POL(.max_age = 10 * D, .archive_max_age = 30 * D, .keep_titled = true);
        c.projects = po;
        c.n_projects = 1;
        policy_title_need(&c, false, &t);
        assert_false(t.all);
        assert_int_equal(t.active_idle, 10 * D);
        assert_int_equal(t.archived_idle, 30 * D);

        /* without keep-titled a title decides nothing */
        po[0].policy.keep_titled = false;
        c.defaults.keep_titled = false;
        policy_title_need(&c, false, &t);
        assert_false(t.all);
        assert_int_equal(t.active_idle, MSEC_INFINITY);
        assert_int_equal(t.archived_idle, MSEC_INFINITY);

        /* count and size rules, and tree caps, depend on other sessions: every title */
        static const Policy all[] = { POL(.max_sessions = 5, .keep_titled = true),
                                      POL(.max_size = MB, .keep_titled = true),
                                      POL(.archive_max_size = MB, .keep_titled = true) };
        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                c.defaults = all[i];
                policy_title_need(&c, false, &t);
                assert_true(t.all);
        }
        c.defaults = (Policy)POL(.max_age = 90 * D, .keep_titled = true);
        c.tree.keep_free = (SizeSpec){ .is_set = true, .bytes = GB };
        policy_title_need(&c, false, &t);
        assert_true(t.all);
        c.tree.keep_free = (SizeSpec){};
        c.tree.max_size = GB;
        policy_title_need(&c, false, &t);
        assert_true(t.all);
}

/* The safety net: a selected session whose title was not read is skipped, never acted on. */
static void test_policy_title_unread_selected_is_skipped(void **state) {
        Fixture f;
        Session *s;

        (void)state;
        fx_init(&f, (Policy)POL(.max_age = 90 * D, .keep_titled = true));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, KB);
        s->title_unread = true;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 10 * D, KB)->title_unread = true; /* not selected */
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_SKIP);
        assert_non_null(strstr(fx_reason(&f, 0), "title not read (a rule would select it: archive"));
        assert_int_equal(f.v->sessions[1].verb, VERB_KEEP);
        assert_string_equal(f.v->sessions[1].rule, "none");
        /* without keep-titled the title does not matter */
        f.cfg.defaults.keep_titled = false;
        fx_eval(&f, false);
        assert_int_equal(f.v->sessions[0].verb, VERB_ARCHIVE);
        fx_done(&f);
}

/* Boundaries the whole-plan golden alone caught: each limit exactly at its value, and one
 * millisecond past it. Every cutoff is strict (policy.c): the value itself stays. */
static void test_policy_boundary_min_age_at_cutoff(void **state) {
        Fixture f;
        Session *s;
        char verbs[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.max_sessions = 1, .min_age = 7 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 1 * D, 1);
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 2 * D, 1);
        s->first_record = NOW - 7 * D; /* age == min-age: old enough */
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 3 * D, 1);
        s->first_record = NOW - 7 * D + 1; /* a millisecond younger: protected */
        fx_eval(&f, false);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "KAK");
        assert_false(f.v->sessions[1].protections & PROT_MIN_AGE);
        assert_true(f.v->sessions[2].protections & PROT_MIN_AGE);
        assert_string_equal(f.v->sessions[2].rule, "min-age");
        fx_done(&f);
}

static void test_policy_boundary_keep_latest_at_limit(void **state) {
        Fixture f;
        char verbs[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 10 * D, .keep_latest = 2));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 20 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 21 * D, 1); /* rank 2 == keep-latest: kept */
        fx_add(&f, "/p/a", SESSION_ACTIVE, 22 * D, 1); /* rank 3: archived */
        fx_eval(&f, false);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "KKA");
        assert_int_equal(f.v->sessions[1].rank, 2);
        assert_true(f.v->sessions[1].protections & PROT_LATEST);
        assert_false(f.v->sessions[2].protections & PROT_LATEST);
        fx_done(&f);
}

static void test_policy_boundary_max_age_at_limit(void **state) {
        Fixture f;
        char verbs[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 90 * D, 1);     /* idle == max-age: stays */
        fx_add(&f, "/p/a", SESSION_ACTIVE, 90 * D + 1, 1); /* past it: archived */
        fx_eval(&f, false);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "KA");
        assert_string_equal(f.v->sessions[1].rule, "max-age");
        fx_done(&f);
}

static void test_policy_boundary_archive_max_age_at_limit(void **state) {
        Fixture f;
        char verbs[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.archive_max_age = 30 * D));
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 30 * D, 1);     /* at the limit: stays */
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 30 * D + 1, 1); /* past it: deleted */
        fx_eval(&f, false);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "KD");
        fx_done(&f);
}

/* archive-max-age counts the time in the archive, from qgc's record of the archive
 * (Session.archived_at), not the idle time: "archive after 30 days, delete after 180" keeps a
 * session 180 days in the archive. Without a record, from the archived file's ctime. */
static void test_policy_archive_max_age_counts_from_archiving(void **state) {
        Fixture f;
        char verbs[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.archive_max_age = 180 * D));
        /* idle 200 days, archived 150 days ago (at 50 days idle): 150 days in the archive */
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 200 * D, 1)->archived_at = NOW - 150 * D;
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 200 * D, 1)->archived_at = NOW - 180 * D;
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 200 * D, 1)->archived_at = NOW - 180 * D - 1;
        /* no record: the archived file's ctime (the rename), 100 days ago */
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 300 * D, 1)->archived.ctime_ns = (NOW - 100 * D) *
                                                                              1000000;
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 300 * D, 1)->archived.ctime_ns = (NOW - 190 * D) *
                                                                              1000000;
        fx_eval(&f, true);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "KKDKD");
        assert_string_equal(fx_reason(&f, 2), "archived 180d ago > archive-max-age 180d");
        assert_string_equal(fx_reason(&f, 4), "archived 190d ago > archive-max-age 180d");
        fx_done(&f);
}

/* A restored session stays for restore-grace after its restore, whatever rule selects it (a
 * project rule, the archive tier, a tree cap), and the reason names the grace with its numbers;
 * past the grace, or with restore-grace 0s, the rules apply again. */
static void test_policy_restore_grace(void **state) {
        Fixture f;
        char verbs[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .archive_max_age = 10 * D,
                                .restore_grace = 30 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1)->restored_at = NOW - 3 * D;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1)->restored_at = NOW - 30 * D;
        fx_add(&f, "/p/a", SESSION_ARCHIVED, 200 * D, 1)->restored_at = NOW - 29 * D;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1);
        fx_eval(&f, true);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "KAKA");
        assert_string_equal(fx_reason(&f, 0),
                            "kept: restored 3d ago (restore-grace 30d) (a rule would select it: "
                            "archive for idle 200d > max-age 90d)");
        assert_string_equal(fx_reason(&f, 2),
                            "kept: restored 29d ago (restore-grace 30d) (a rule would select it: "
                            "delete for archived 200d ago > archive-max-age 10d)");
        assert_true(f.v->sessions[0].protections & PROT_RESTORED);
        fx_done(&f);

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .restore_grace = 0));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1)->restored_at = NOW - 3 * D;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1);
        fx_eval(&f, true);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "AA");
        fx_done(&f);

        /* a tree cap deletes past every rule, but not a session within its grace */
        fx_init(&f, (Policy)POL(.restore_grace = 30 * D));
        f.cfg.tree.max_size = 1;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 10)->restored_at = NOW - 3 * D;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 10);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 1 * D, 10);
        fx_eval(&f, true);
        fx_verbs(&f, verbs);
        assert_int_equal(verbs[0], 'K');
        assert_int_equal(verbs[1], 'D');
        fx_done(&f);
}

/* The grace period before a session counts as idle (min-idle): exactly at it the session is no
 * longer in use, a millisecond short of it it is. */
static void test_policy_boundary_min_idle_grace_at_edge(void **state) {
        Fixture f;
        Session *s;
        char verbs[MAX_S + 1];
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .min_idle = 10 * 60 * 1000));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW - 10 * 60 * 1000;
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW - 10 * 60 * 1000 + 1;
        fx_eval(&f, false);
        fx_verbs(&f, verbs);
        assert_string_equal(verbs, "AS");
        assert_true(f.v->sessions[1].protections & PROT_LIVE);
        fx_done(&f);
}

/* Structured outcomes (issue 10): what each rule measured against which limit, for the session
 * `ri`, at the boundaries and past them. The reasons are rendered from exactly these. */
typedef struct MeasureCase {
        const char *name;
        Policy pol;
        TreeLimits tree;
        uint64_t fs_size, fs_avail;
        SessSpec s[4];
        size_t n;
        size_t ri;
        Verb verb;
        const char *rule;
        MeasureKind kind;
        const char *key;
        int64_t measured, limit, target;
        double percent;
} MeasureCase;

static const MeasureCase measure_cases[] = {
        { "max-age exactly at", POL(.max_age = 90 * D), {}, 0, 0, { { 90 * D } }, 1, 0, VERB_KEEP,
          "none", MEASURE_AGE, "max-age", 90 * D, 90 * D },
        { "max-age just above", POL(.max_age = 90 * D), {}, 0, 0, { { 90 * D + 1 } }, 1, 0,
          VERB_ARCHIVE, "max-age", MEASURE_AGE, "max-age", 90 * D + 1, 90 * D },
        { "no rule applies", POL(), {}, 0, 0, { { 900 * D } }, 1, 0, VERB_KEEP, "none",
          MEASURE_NONE },
        { "max-sessions at the limit", POL(.max_sessions = 2), {}, 0, 0, { { 2 * D }, { 3 * D } },
          2, 1, VERB_KEEP, "none", MEASURE_NONE },
        { "max-sessions above", POL(.max_sessions = 2), {}, 0, 0,
          { { 4 * D }, { 2 * D }, { 3 * D } }, 3, 0, VERB_ARCHIVE, "max-sessions", MEASURE_RANK,
          "max-sessions", 3, 2 },
        { "max-size exactly at", POL(.max_size = 100), {}, 0, 0, { { 2 * D, 50 }, { 3 * D, 50 } },
          2, 1, VERB_KEEP, "none", MEASURE_NONE },
        { "max-size above", POL(.max_size = 100), {}, 0, 0, { { 2 * D, 50 }, { 3 * D, 51 } }, 2, 1,
          VERB_ARCHIVE, "max-size", MEASURE_BYTES, "max-size", 101, 100 },
        { "archive-max-age exactly at", POL(.archive_max_age = 30 * D), {}, 0, 0,
          { { 30 * D, 1, SESSION_ARCHIVED } }, 1, 0, VERB_KEEP, "none", MEASURE_NONE },
        { "archive-max-age just above", POL(.archive_max_age = 30 * D), {}, 0, 0,
          { { 30 * D + 1, 1, SESSION_ARCHIVED } }, 1, 0, VERB_DELETE, "archive-max-age",
          MEASURE_AGE, "archive-max-age", 30 * D + 1, 30 * D },
        { "archive-max-size above", POL(.archive_max_size = 100), {}, 0, 0,
          { { 10 * D, 60, SESSION_ARCHIVED }, { 20 * D, 50, SESSION_ARCHIVED } }, 2, 1,
          VERB_DELETE, "archive-max-size", MEASURE_BYTES, "archive-max-size", 110, 100 },
        { "compress-after exactly at", POL(.compress_after = 30 * D), {}, 0, 0,
          { { 30 * D, 1, SESSION_ARCHIVED } }, 1, 0, VERB_KEEP, "none", MEASURE_NONE },
        { "compress-after just above", POL(.compress_after = 30 * D), {}, 0, 0,
          { { 30 * D + 1, 1, SESSION_ARCHIVED } }, 1, 0, VERB_COMPRESS, "compress-after",
          MEASURE_AGE, "compress-after", 30 * D + 1, 30 * D },
        { "tree max-size exactly at", POL(), { .max_size = 80, .count_allocated = true }, 0, 0,
          { { 2 * D, 40 }, { 3 * D, 40 } }, 2, 1, VERB_KEEP, "none", MEASURE_NONE },
        { "tree max-size above, to the low watermark",
          POL(), { .max_size = 100, .low_watermark = 50, .count_allocated = true }, 0, 0,
          { { 2 * D, 40 }, { 3 * D, 40 }, { 4 * D, 40 } }, 3, 2, VERB_DELETE, "tree-max-size",
          MEASURE_BYTES, "max-size", 120, 100, 50 },
        { "keep-free exactly at the floor",
          POL(), { .keep_free = { .is_set = true, .bytes = 100 } }, 1000, 100, { { 2 * D, 5 } },
          1, 0, VERB_KEEP, "none", MEASURE_NONE },
        { "keep-free bytes just below", POL(), { .keep_free = { .is_set = true, .bytes = 100 } },
          1000, 99, { { 2 * D, 5 } }, 1, 0, VERB_DELETE, "keep-free", MEASURE_BYTES, "keep-free",
          99, 100 },
        { "keep-free percent below",
          POL(), { .keep_free = { .is_set = true, .is_percent = true, .percent = 10 } }, 1000, 90,
          { { 2 * D, 5 } }, 1, 0, VERB_DELETE, "keep-free", MEASURE_BYTES, "keep-free", 90, 100,
          0, 10 },
};

static void test_policy_measures_table(void **state) {
        (void)state;
        for (size_t c = 0; c < ELEMENTSOF(measure_cases); c++) {
                const MeasureCase *mc = &measure_cases[c];
                const Verdict *v;
                Fixture f;

                fx_init(&f, mc->pol);
                f.cfg.tree = mc->tree;
                if (mc->fs_size) {
                        f.trees[0].fs_known = true;
                        f.trees[0].fs_size = mc->fs_size;
                        f.trees[0].fs_avail = mc->fs_avail;
                }
                for (size_t i = 0; i < mc->n; i++)
                        fx_add(&f, "/p/a", mc->s[i].state, mc->s[i].idle, mc->s[i].bytes);
                fx_eval(&f, false);
                v = &f.v->sessions[mc->ri];
                print_message("  %s: %s %s kind %d %s %" PRId64 " / %" PRId64 " (%s)\n", mc->name,
                              policy_verb_to_string(v->verb), v->rule, v->measure.kind,
                              v->measure.key ?: "-", v->measure.measured, v->measure.limit,
                              fx_reason(&f, mc->ri));
                assert_int_equal(v->verb, mc->verb);
                assert_string_equal(v->rule, mc->rule);
                assert_int_equal(v->measure.kind, mc->kind);
                if (mc->kind != MEASURE_NONE) {
                        assert_string_equal(v->measure.key, mc->key);
                        assert_int_equal(v->measure.measured, mc->measured);
                        assert_int_equal(v->measure.limit, mc->limit);
                        if (mc->target || mc->percent) {
                                assert_non_null(v->facts);
                                assert_int_equal(v->facts->target, mc->target);
                                assert_true(v->facts->percent == mc->percent);
                        }
                }
                assert_int_equal(v->blocked_by, 0);
                assert_null(policy_verdict_held_by(v));
                fx_done(&f);
        }
}

/* Each protection against each rule: blocked_by names the protection, blocked_verb and
 * blocked_rule what it blocked, the measure is the blocked rule's; plus the protection's own
 * facts (age vs min-age, rank vs keep-latest, the last write vs min-idle). */
static void test_policy_blocked_by_each_protection(void **state) {
        static const char *const rule_keys[_RU_MAX] = {
                "max-age",   "max-sessions",    "max-size",         "max-size",
                "keep-free", "archive-max-age", "archive-max-size",
        };
        (void)state;
        for (int ru = 0; ru < _RU_MAX; ru++)
                for (int pr = 0; pr < _PR_MAX; pr++) {
                        Verb want = ru == RU_TREE_MAX_SIZE || ru == RU_KEEP_FREE ||
                                                    ru >= RU_ARCHIVE_MAX_AGE
                                            ? VERB_DELETE
                                            : VERB_ARCHIVE;
                        const Verdict *v;
                        Fixture f;

                        if (pr == PR_LATEST && ru >= RU_ARCHIVE_MAX_AGE)
                                continue; /* keep-latest ranks active sessions only */
                        fx_init(&f, (Policy)POL());
                        prot_setup_rule(&f, ru);
                        prot_apply(&f, pr);
                        fx_eval(&f, false);
                        v = &f.v->sessions[0];
                        print_message("  %s vs %s: %s by %s, would %s by %s\n",
                                      prot_cases[pr].name, rule_names[ru],
                                      policy_verb_to_string(v->verb),
                                      policy_protection_to_string(v->blocked_by) ?: "-",
                                      policy_verb_to_string(v->blocked_verb), v->blocked_rule ?: "-");
                        assert_int_equal(v->blocked_by, prot_cases[pr].bit);
                        assert_string_equal(v->rule, prot_cases[pr].name);
                        if (v->blocked_verb == VERB_KEEP) {
                                /* nothing selected it: only an unverified or foreign session
                                 * stays out of its project's rules */
                                assert_true(pr == PR_UNVERIFIED || pr == PR_FOREIGN);
                                assert_null(v->blocked_rule);
                        } else {
                                assert_int_equal(v->blocked_verb, want);
                                assert_string_equal(v->blocked_rule, rule_names[ru]);
                                assert_string_equal(v->measure.key, rule_keys[ru]);
                                assert_true(v->measure.kind != MEASURE_NONE);
                        }
                        if (pr == PR_MIN_AGE) {
                                assert_non_null(v->facts);
                                assert_int_equal(v->facts->age, 2 * D);
                                assert_int_equal(v->facts->min_age, 7 * D);
                        }
                        if (pr == PR_LATEST) {
                                assert_non_null(v->facts);
                                assert_int_equal(v->rank, 2);
                                assert_int_equal(v->facts->keep_latest, 5);
                        }
                        if (pr == PR_LIVE) /* a live claim, no recent write: nothing to quote */
                                assert_false(v->flags & VERDICT_RECENT_WRITE);
                        fx_done(&f);
                }
}

/* The forms a protection takes besides blocking: a write within min-idle (and one in the
 * future), a title not read, a deletion of a session bound to scheduled tasks. */
static void test_policy_structured_live_title_tasks(void **state) {
        Fixture f;
        Session *s;
        const Verdict *v;
        (void)state;

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .min_idle = 10 * 60 * 1000));
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW - 10 * 60 * 1000 + 1; /* a millisecond inside min-idle */
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW - 10 * 60 * 1000; /* exactly min-idle ago: idle */
        s = fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        s->last_write = NOW + 5 * 60 * 1000; /* in the future */
        fx_eval(&f, false);
        v = &f.v->sessions[0];
        assert_int_equal(v->verb, VERB_SKIP);
        assert_int_equal(v->blocked_by, PROT_LIVE);
        assert_true(v->flags & VERDICT_RECENT_WRITE);
        assert_non_null(v->facts);
        assert_int_equal(v->facts->since_write, 10 * 60 * 1000 - 1);
        assert_int_equal(v->facts->min_idle, 10 * 60 * 1000);
        assert_int_equal(v->blocked_verb, VERB_ARCHIVE);
        assert_string_equal(v->blocked_rule, "max-age");
        assert_int_equal(v->measure.measured, 100 * D);
        v = &f.v->sessions[1];
        assert_int_equal(v->verb, VERB_ARCHIVE);
        assert_false(v->flags & VERDICT_RECENT_WRITE);
        assert_int_equal(v->blocked_by, 0);
        v = &f.v->sessions[2];
        assert_int_equal(v->blocked_by, PROT_LIVE);
        assert_non_null(v->facts);
        assert_int_equal(v->facts->since_write, -5 * 60 * 1000);
        assert_string_equal(fx_reason(&f, 2),
                            "kept: in use: written 5min in the future (a rule would select it: "
                            "archive for idle 100d > max-age 90d)");
        fx_done(&f);

        fx_init(&f, (Policy)POL(.max_age = 90 * D, .keep_titled = true));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, KB)->title_unread = true;
        fx_eval(&f, false);
        v = &f.v->sessions[0];
        assert_int_equal(v->verb, VERB_SKIP);
        assert_int_equal(v->blocked_by, PROT_UNVERIFIED);
        assert_true(v->flags & VERDICT_TITLE_UNREAD);
        assert_int_equal(v->blocked_verb, VERB_ARCHIVE);
        assert_string_equal(v->blocked_rule, "max-age");
        fx_done(&f);

        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, KB)->n_tasks = 1;
        fx_eval(&f, false);
        v = &f.v->sessions[0];
        assert_int_equal(v->verb, VERB_KEEP);
        assert_int_equal(v->blocked_by, PROT_SCHEDULED);
        assert_true(v->flags & VERDICT_TASKS_HELD);
        assert_int_equal(v->blocked_verb, VERB_DELETE);
        assert_string_equal(v->blocked_rule, "max-age");
        assert_string_equal(fx_reason(&f, 0),
                            "kept: bound to 1 scheduled task, which qgc does not remove (a rule "
                            "would select it: delete for idle 100d > max-age 90d)");
        fx_done(&f);
}

/* The deletion limits: held_by, the limit and its scope, and what was held back (blocked_by
 * blast-radius, or the archive a disk cap's deletion falls back to). */
static void test_policy_structured_held_back(void **state) {
        Fixture f;
        const Verdict *v;
        (void)state;

        /* per run: the newest of two deletions */
        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D,
                                .max_deletions = 1));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        fx_eval(&f, false);
        assert_null(policy_verdict_held_by(&f.v->sessions[0]));
        v = &f.v->sessions[1];
        assert_int_equal(v->verb, VERB_SKIP);
        assert_string_equal(v->rule, "blast-radius");
        assert_int_equal(v->blocked_by, PROT_BLAST);
        assert_int_equal(v->blocked_verb, VERB_DELETE);
        assert_string_equal(v->blocked_rule, "max-age");
        assert_string_equal(policy_verdict_held_by(v), "max-deletions");
        assert_string_equal(policy_verdict_held_rule(v), "max-age");
        assert_non_null(v->facts);
        assert_int_equal(v->facts->held.kind, MEASURE_COUNT);
        assert_string_equal(v->facts->held.key, "max-deletions");
        assert_int_equal(v->facts->held.measured, 1); /* the older one went */
        assert_int_equal(v->facts->held.limit, 1);
        assert_false(v->facts->held_project);
        assert_int_equal(v->measure.kind, MEASURE_AGE);
        assert_int_equal(v->measure.measured, 100 * D);
        assert_string_equal(fx_reason(&f, 1),
                            "held back by max-deletions (1 per run; use --force); would delete: "
                            "idle 100d > max-age 90d");
        fx_done(&f);

        /* the project's own limit */
        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D));
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        {
                ProjectOverride po = { .pattern = (char *)"/p/a",
                                       .policy = POL(.action = POLICY_ACTION_DELETE,
                                                     .max_age = 90 * D, .max_deletions = 1) };
                f.cfg.projects = &po;
                f.cfg.n_projects = 1;
                fx_eval(&f, false);
                v = &f.v->sessions[1];
                assert_string_equal(policy_verdict_held_by(v), "max-deletions");
                assert_non_null(v->facts);
                assert_int_equal(v->facts->held.measured, 1);
                assert_int_equal(v->facts->held.limit, 1);
                assert_true(v->facts->held_project);
                assert_non_null(strstr(fx_reason(&f, 1), "(1 per run in this project;"));
                fx_done(&f);
        }

        /* in percent of the project's sessions */
        fx_init(&f, (Policy)POL(.action = POLICY_ACTION_DELETE, .max_age = 90 * D,
                                .max_deletions_percent = 50));
        for (int i = 0; i < 4; i++)
                fx_add(&f, "/p/a", SESSION_ACTIVE, (200 - i) * D, 1);
        fx_eval(&f, false);
        v = &f.v->sessions[2];
        assert_string_equal(policy_verdict_held_by(v), "max-deletions-percent");
        assert_non_null(v->facts);
        assert_string_equal(v->facts->held.key, "max-deletions-percent");
        assert_int_equal(v->facts->held.measured, 2); /* the two oldest of four went */
        assert_int_equal(v->facts->held.limit, 4);
        assert_true(v->facts->held_percent == 50);
        fx_done(&f);

        /* a disk cap's deletion held back falls back to the project rule's archive */
        fx_init(&f, (Policy)POL(.max_age = 90 * D, .max_deletions = 1));
        f.cfg.tree.keep_free = (SizeSpec){ .is_set = true, .bytes = 1000 };
        f.trees[0].fs_known = true;
        f.trees[0].fs_size = 10000;
        f.trees[0].fs_avail = 100;
        fx_add(&f, "/p/a", SESSION_ACTIVE, 200 * D, 1);
        fx_add(&f, "/p/a", SESSION_ACTIVE, 100 * D, 1);
        fx_eval(&f, false);
        v = &f.v->sessions[1];
        assert_int_equal(v->verb, VERB_ARCHIVE);
        assert_string_equal(v->rule, "max-age");
        assert_int_equal(v->blocked_by, 0);
        assert_string_equal(policy_verdict_held_by(v), "max-deletions");
        assert_string_equal(policy_verdict_held_rule(v), "keep-free");
        assert_int_equal(v->measure.kind, MEASURE_AGE);
        assert_string_equal(v->measure.key, "max-age");
        assert_int_equal(v->measure.measured, 100 * D);
        assert_string_equal(fx_reason(&f, 1),
                            "idle 100d > max-age 90d; its keep-free deletion held back by "
                            "max-deletions (1 per run; use --force)");
        fx_done(&f);
}

/* Orphans: idle vs the kind's key, at the boundary and past it; protect = true blocks. */
static void test_policy_structured_orphans(void **state) {
        Fixture f;
        const Verdict *v;
        (void)state;

        for (msec_t k = 0; k < 2; k++) {
                fx_init(&f, (Policy)POL(.orphan_min_age = 30 * D));
                f.o[0] = (Orphan){ .kind = ORPHAN_SUBAGENTS, .name = (char *)"x",
                                   .project_dir = (char *)"-p-a", .mtime = NOW - 30 * D - k };
                f.inv.n_orphans = 1;
                fx_eval(&f, false);
                v = &f.v->orphans[0];
                assert_int_equal(v->verb, k ? VERB_DELETE : VERB_KEEP);
                assert_string_equal(v->rule, k ? "orphan" : "none");
                assert_int_equal(v->measure.kind, MEASURE_AGE);
                assert_string_equal(v->measure.key, "orphan-min-age");
                assert_int_equal(v->measure.measured, 30 * D + k);
                assert_int_equal(v->measure.limit, 30 * D);
                assert_string_equal(fx_oreason(&f, 0),
                                    k ? "orphan subagents, no transcript, idle 30d > 30d"
                                      : "orphan subagents, no transcript, idle 30d <= "
                                        "orphan-min-age 30d");
                fx_done(&f);
        }
        fx_init(&f, (Policy)POL(.orphan_min_age = 30 * D, .protect = true));
        fx_add(&f, "/p/a", SESSION_ACTIVE, D, 1);
        f.o[0] = (Orphan){ .kind = ORPHAN_SUBAGENTS, .name = (char *)"x",
                           .project_dir = (char *)"-p-a", .mtime = NOW - 40 * D };
        f.inv.n_orphans = 1;
        fx_eval(&f, false);
        v = &f.v->orphans[0];
        assert_int_equal(v->verb, VERB_KEEP);
        assert_int_equal(v->blocked_by, PROT_PROTECT);
        assert_string_equal(v->rule, "protect");
        fx_done(&f);
}

/* The one age test (policy_age_selects()), which the scan's title need calls too: strict, and
 * off at 0, below and at MSEC_INFINITY. */
static void test_policy_age_selects(void **state) {
        (void)state;
        assert_false(policy_age_selects(90 * D, 90 * D));
        assert_true(policy_age_selects(90 * D, 90 * D + 1));
        assert_false(policy_age_selects(90 * D, 0));
        assert_false(policy_age_selects(0, 900 * D));
        assert_false(policy_age_selects(-1, 900 * D));
        assert_false(policy_age_selects(MSEC_INFINITY, MSEC_INFINITY));
        assert_false(policy_age_selects(MSEC_INFINITY, INT64_MAX));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_policy_rules_table),
                cmocka_unit_test(test_policy_measures_table),
                cmocka_unit_test(test_policy_blocked_by_each_protection),
                cmocka_unit_test(test_policy_structured_live_title_tasks),
                cmocka_unit_test(test_policy_structured_held_back),
                cmocka_unit_test(test_policy_structured_orphans),
                cmocka_unit_test(test_policy_age_selects),
                cmocka_unit_test(test_policy_empty_inventory),
                cmocka_unit_test(test_policy_ranks_newest_first),
                cmocka_unit_test(test_policy_rank_ties_broken_by_records),
                cmocka_unit_test(test_policy_future_mtime_is_clamped),
                cmocka_unit_test(test_policy_min_idle_cutoff),
                cmocka_unit_test(test_policy_forecast_clock_keeps_liveness_real),
                cmocka_unit_test(test_policy_each_protection_beats_each_rule),
                cmocka_unit_test(test_policy_protection_reasons),
                cmocka_unit_test(test_policy_scheduled_never_deleted),
                cmocka_unit_test(test_policy_protected_bytes_do_not_count_as_freed),
                cmocka_unit_test(test_policy_min_age_uses_mtime_when_first_record_unknown),
                cmocka_unit_test(test_policy_shared_file_limit_is_planned),
                cmocka_unit_test(test_policy_blast_radius),
                cmocka_unit_test(test_policy_blast_radius_across_projects_and_percent),
                cmocka_unit_test(test_policy_blast_radius_falls_back_to_archive),
                cmocka_unit_test(test_policy_caps_unmet),
                cmocka_unit_test(test_policy_compress_after),
                cmocka_unit_test(test_policy_protect_project),
                cmocka_unit_test(test_policy_orphans_age),
                cmocka_unit_test(test_policy_deepcode_orphans),
                cmocka_unit_test(test_policy_orphan_deletion_counts_for_disk_caps),
                cmocka_unit_test(test_policy_count_allocated_or_apparent),
                cmocka_unit_test(test_policy_trees_are_separate),
                cmocka_unit_test(test_policy_override_picks_other_action),
                cmocka_unit_test(test_policy_bad_arguments),
                cmocka_unit_test(test_policy_strings),
                cmocka_unit_test(test_policy_title_need),
                cmocka_unit_test(test_policy_title_unread_selected_is_skipped),
                cmocka_unit_test(test_policy_boundary_min_age_at_cutoff),
                cmocka_unit_test(test_policy_boundary_keep_latest_at_limit),
                cmocka_unit_test(test_policy_boundary_max_age_at_limit),
                cmocka_unit_test(test_policy_boundary_archive_max_age_at_limit),
        cmocka_unit_test(test_policy_archive_max_age_counts_from_archiving),
        cmocka_unit_test(test_policy_restore_grace),
                cmocka_unit_test(test_policy_boundary_min_idle_grace_at_edge),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
