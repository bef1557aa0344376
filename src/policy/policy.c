/* policy.c: pure retention decisions. Inventory + Config + now -> one Verdict per session and
 * per orphan, and the caps the plan leaves unmet. No I/O, no clock (`now` is passed in), no
 * text: verdicts are data (policy.h) and reason.c renders them at the edge.
 *
 * Evaluation order:
 *   1. Protections of every session (all applicable bits are recorded):
 *      skip-class  unverified, foreign, conflict, live (registry/claim/lock/unknown, or a write
 *                  within min-idle) -> the session is SKIP whatever the rules say;
 *      keep-class  min-age, pinned/grouped, titled by a person, scheduled task, live worktree,
 *                  newest keep-latest of its project -> KEEP when a rule selected it.
 *      Age for min-age is now - first_record; when the first record's time is unknown the
 *      newest transcript mtime stands in, which can only make a session look younger (safe).
 *   2. Project rules on the ACTIVE sessions of each project (tree, cwd), with the project's
 *      effective policy (config_policy_for): max-age, max-sessions (rank by last_activity,
 *      newest = 1), max-size (oldest first until the active total is at or below the cap).
 *      Cutoffs are strict: idle == max-age, a count == limit and a total == cap all stay.
 *   3. Archive tier on ARCHIVED sessions (compressed ones included): archive-max-age (the time
 *      in the archive) and archive-max-size delete; then compress-after compresses one not
 *      compressed yet (a deletion wins; held back by the blast radius it falls back to that).
 *   4. Orphans: idle (now - mtime) > orphan-min-age (or a hygiene kind's key) deletes.
 *   5. Disk caps per tree (tree max-size down to its low watermark, keep-free). Archiving is a
 *      rename on the same filesystem and frees nothing, so DISK CAPS ALWAYS DELETE, oldest
 *      first across the whole tree. keep-free counts allocated bytes (what frees disk space);
 *      tree max-size allocated or apparent bytes per tree.count-allocated.
 *   6. A protected session a rule selected is KEEP (or SKIP) with blocked_by naming the
 *      protection; it does not count as freed, so size walks continue to the next one.
 *   7. Stale project entries (upstream PR #9110), once every session is decided.
 *   8. Blast radius: deletions are allowed oldest first; past max-deletions (run or project) or
 *      max-deletions-percent the newest excess becomes SKIP with PROT_BLAST, unless --force; a
 *      deletion that replaced an archive (compression) falls back to it. Orphans do not count. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "policy.h"
#include "store.h"
#include "strtable.h"
#include "util.h"

#define PROT_SKIP_MASK (PROT_UNVERIFIED | PROT_FOREIGN | PROT_CONFLICT | PROT_LIVE)
#define PROT_KEEP_MASK                                                                             \
        (PROT_PROTECT | PROT_MIN_AGE | PROT_PINNED | PROT_TITLED | PROT_SCHEDULED | PROT_WORKTREE | \
         PROT_LATEST | PROT_RESTORED)
#define PROT_BLOCK_MASK (PROT_SKIP_MASK | PROT_KEEP_MASK)

/* Per-session working state of one evaluation. */
typedef struct PolicyInfo {
        const Policy *pol;
        msec_t idle;         /* now - last_activity, never negative */
        uint64_t size;       /* bytes counted by size caps (allocated or apparent) */
        size_t group;        /* index into PolicyRun.groups, SIZE_MAX when not verified */
        Verb sel_verb;       /* what a rule selected, VERB_KEEP = nothing; until
                              * policy_finish() the verdict's rule and measure are that rule's,
                              * and its facts->fallback_rule an archive (compression) a deletion
                              * replaced */
} PolicyInfo;

/* The verified sessions of one project (tree, cwd), newest first. */
typedef struct PolicyGroup {
        size_t tree;
        const char *cwd;
        const Policy *pol;
        const size_t *members;
        size_t n_members;
} PolicyGroup;

typedef struct PolicyRun {
        const Inventory *inv;
        const Config *cfg;
        msec_t now;      /* the policy's ages: --now when given */
        msec_t real_now; /* liveness graces: always the real clock */
        Verdicts *v;
        PolicyInfo *info;
        size_t *order; /* verified sessions by (tree, cwd, newest first, id) */
        size_t n_order;
        PolicyGroup *groups;
        size_t n_groups;
} PolicyRun;

static const char *const policy_verb_table[_VERB_MAX] = {
        [VERB_KEEP] = "keep",
        [VERB_ARCHIVE] = "archive",
        [VERB_DELETE] = "delete",
        [VERB_SKIP] = "skip",
        [VERB_COMPRESS] = "compress",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(policy_verb, Verb);

/* indexed by the bit number of a Protection */
static const char *const protection_bit_table[_PROT_MAX] = {
        "live",     "pinned",  "titled",     "scheduled", "worktree",     "keep-latest",
        "min-age",  "unverified", "foreign", "conflict",  "blast-radius", "protect",
        "restore-grace",
};

static DEFINE_STRING_TABLE_TO_STRING_FUNC(protection_bit_to_string, protection_bit_table, int);

/* The name of a single protection bit; NULL for none, several or one outside the table. */
const char *policy_protection_to_string(Protection p) {
        unsigned u = (unsigned)p;

        if (u == 0 || (u & (u - 1)) != 0)
                return NULL;
        return protection_bit_to_string(__builtin_ctz(u));
}

/* The winning protection of a mask, in priority order (0 when none). */
static Protection policy_first_protection(unsigned prot) {
        static const Protection order[] = { PROT_UNVERIFIED, PROT_FOREIGN, PROT_CONFLICT,
                                            PROT_LIVE,       PROT_PROTECT, PROT_RESTORED,
                                            PROT_MIN_AGE,    PROT_PINNED,
                                            PROT_TITLED,     PROT_SCHEDULED, PROT_WORKTREE,
                                            PROT_LATEST,     PROT_BLAST };
        for (size_t k = 0; k < ELEMENTSOF(order); k++)
                if (prot & order[k])
                        return order[k];
        return 0;
}

Verdicts *policy_verdicts_free(Verdicts *v) {
        if (!v)
                return NULL;
        for (size_t i = 0; i < v->n_sessions; i++)
                free(v->sessions[i].facts);
        for (size_t i = 0; i < v->n_orphans; i++)
                free(v->orphans[i].facts);
        free(v->sessions);
        free(v->orphans);
        free(v->caps);
        free(v);
        return NULL;
}

static bool policy_is_verified(const Session *s) {
        return s->cwd && (s->owner == OWNER_OK || s->owner == OWNER_WORKTREE ||
                          s->owner == OWNER_CLAIM);
}

/* The last write to the session's files; the liveness grace is measured from it. */
static msec_t policy_last_write(const Session *s) {
        return s->last_write > 0 ? s->last_write : s->mtime;
}

static uint64_t policy_size(const PolicyRun *run, uint64_t bytes, uint64_t bytes_alloc) {
        return run->cfg->tree.count_allocated ? bytes_alloc : bytes;
}

/* Qwen's daemon deletes a session's bound tasks under its cron lock; qgc never edits
 * scheduled_tasks.json, so a session bound to a task is never deleted, even with keep-scheduled
 * off (which then only lets it be archived): the task would point at nothing. */
static bool policy_tasks_block(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb == VERB_DELETE && run->inv->sessions[i].n_tasks > 0;
}

/* Whether a selected session really goes (no protection blocks it). */
static bool policy_going(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb != VERB_KEEP &&
               !(run->v->sessions[i].protections & PROT_BLOCK_MASK) &&
               !policy_tasks_block(run, i);
}

static bool policy_deleting(const PolicyRun *run, size_t i) {
        return run->info[i].sel_verb == VERB_DELETE && policy_going(run, i);
}

/* The verdict's facts beyond its measure, allocated on first use; NULL on ENOMEM. */
static VerdictFacts *policy_facts(Verdict *vd) {
        if (!vd->facts)
                vd->facts = calloc(1, sizeof(VerdictFacts));
        return vd->facts;
}

/* Would a rule selecting session i with verb win? The first rule wins, except that a deletion
 * replaces an archive or a compression. */
static bool policy_would_select(const PolicyRun *run, size_t i, Verb verb) {
        const PolicyInfo *in = &run->info[i];
        return !(in->sel_verb == VERB_DELETE ||
                 ((in->sel_verb == VERB_ARCHIVE || in->sel_verb == VERB_COMPRESS) &&
                  verb != VERB_DELETE));
}

/* A rule selects session i with what it measured (into the verdict's measure): 1, 0 when an
 * earlier selection wins, or -ENOMEM. */
static int policy_select(PolicyRun *run, size_t i, Verb verb, const char *rule, const Measure *m) {
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];

        if (!policy_would_select(run, i, verb))
                return 0;
        if (in->sel_verb == VERB_ARCHIVE || in->sel_verb == VERB_COMPRESS) {
                /* kept so the blast radius can fall back to the archive (compression) */
                if (!policy_facts(vd))
                        return -ENOMEM;
                vd->facts->fallback = vd->measure;
                vd->facts->fallback_rule = vd->rule;
                vd->facts->fallback_verb = in->sel_verb;
        }
        vd->measure = *m;
        vd->rule = rule;
        in->sel_verb = verb;
        return 1;
}

bool policy_age_selects(msec_t limit, msec_t idle) {
        return limit > 0 && limit != MSEC_INFINITY && idle > limit;
}

/* Skip-class protections of session i, and the facts of a write within min-idle. */
static void policy_skip_protections(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];
        /* the real clock: --now forecasts ages, it never makes a fresh write look idle */
        msec_t since = run->real_now - policy_last_write(s);

        if (since < in->pol->min_idle)
                vd->flags |= VERDICT_RECENT_WRITE;
        if (s->owner == OWNER_UNVERIFIED || (!s->cwd && s->owner != OWNER_FOREIGN))
                vd->protections |= PROT_UNVERIFIED;
        if (s->owner == OWNER_FOREIGN)
                vd->protections |= PROT_FOREIGN;
        if (s->state == SESSION_CONFLICT)
                vd->protections |= PROT_CONFLICT;
        if (s->live || (vd->flags & VERDICT_RECENT_WRITE))
                vd->protections |= PROT_LIVE;
}

/* Keep-class protections that do not depend on the project's ranking. */
static void policy_keep_protections(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        const Policy *p = run->info[i].pol;
        Verdict *vd = &run->v->sessions[i];
        msec_t born = s->first_record > 0 ? s->first_record : s->mtime;

        if (p->protect)
                vd->protections |= PROT_PROTECT;
        if (p->min_age > 0 && run->now - born < p->min_age)
                vd->protections |= PROT_MIN_AGE;
        /* the real clock, like min-idle: --now forecasts ages, it never ends a grace early */
        if (p->restore_grace > 0 && s->restored_at > 0 &&
            run->real_now - s->restored_at < p->restore_grace)
                vd->protections |= PROT_RESTORED;
        if (p->keep_pinned && (s->pinned || s->grouped || s->org_unreadable))
                vd->protections |= PROT_PINNED;
        if (p->keep_titled && s->title && s->title_manual)
                vd->protections |= PROT_TITLED;
        if (p->keep_scheduled && s->n_tasks > 0)
                vd->protections |= PROT_SCHEDULED;
        if (p->keep_worktree && s->live_worktree)
                vd->protections |= PROT_WORKTREE;
}

/* Older first: last activity, then the record timestamps (which decide when a copy gave every
 * transcript the same mtime). 0 when tied. */
static int policy_cmp_age(const Session *a, const Session *b) {
        if (a->last_activity != b->last_activity)
                return a->last_activity < b->last_activity ? -1 : 1;
        if (a->last_record != b->last_record)
                return a->last_record < b->last_record ? -1 : 1;
        if (a->first_record != b->first_record)
                return a->first_record < b->first_record ? -1 : 1;
        return 0;
}

/* Order verified sessions by tree, project, newest first, id. */
static int policy_cmp_group(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];
        int c;

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        c = a->cwd == b->cwd ? 0 : strcmp(a->cwd, b->cwd); /* shared copies (inventory.h) */
        if (c != 0)
                return c;
        c = policy_cmp_age(a, b);
        if (c != 0)
                return -c;
        return strcmp(a->id, b->id);
}

/* Oldest first, then id: the order size walks and the blast radius consume sessions. */
static int policy_cmp_oldest(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];
        int c;

        c = policy_cmp_age(a, b);
        if (c != 0)
                return c;
        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        c = strcmp(a->id, b->id);
        if (c != 0)
                return c;
        return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* The span key of policy_cmp_group(): (tree, cwd). */
static int policy_cmp_project(const void *x, const void *y, void *userdata) {
        const Inventory *inv = userdata;
        const Session *a = &inv->sessions[*(const size_t *)x], *b = &inv->sessions[*(const size_t *)y];

        if (a->tree != b->tree)
                return a->tree < b->tree ? -1 : 1;
        return a->cwd == b->cwd ? 0 : strcmp(a->cwd, b->cwd);
}

/* Group the verified sessions per project (tree, cwd). */
static int policy_build_groups(PolicyRun *run) {
        const Inventory *inv = run->inv;
        size_t n = 0;
        int r;

        run->order = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        run->groups = calloc(inv->n_sessions ?: 1, sizeof(PolicyGroup));
        if (!run->order || !run->groups)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (!(run->v->sessions[i].protections & (PROT_UNVERIFIED | PROT_FOREIGN)) &&
                    policy_is_verified(&inv->sessions[i]))
                        run->order[n++] = i;
        run->n_order = n;
        /* the inventory keeps a project's sessions together (inventory_sort()) */
        r = util_sort_by_runs(run->order, n, sizeof(size_t), policy_cmp_project, policy_cmp_group,
                              (void *)inv);
        if (r <= 0) /* a project in two places of the inventory, or short of memory */
                qsort_r(run->order, n, sizeof(size_t), policy_cmp_group, (void *)inv);

        for (size_t k = 0; k < n;) {
                const Session *s = &inv->sessions[run->order[k]];
                PolicyGroup *g = &run->groups[run->n_groups];
                size_t e = k;

                while (e < n && inv->sessions[run->order[e]].tree == s->tree &&
                       streq(inv->sessions[run->order[e]].cwd, s->cwd))
                        run->info[run->order[e++]].group = run->n_groups;
                *g = (PolicyGroup){ .tree = s->tree,
                                    .cwd = s->cwd,
                                    .pol = run->info[run->order[k]].pol,
                                    .members = run->order + k,
                                    .n_members = e - k };
                run->n_groups++;
                k = e;
        }
        return 0;
}

/* Ranks, keep-latest, max-age and max-sessions on a project's active sessions. */
static int policy_project_age_count(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        Verb verb = p->action == POLICY_ACTION_DELETE ? VERB_DELETE : VERB_ARCHIVE;
        unsigned rank = 0;
        int r = 0;

        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                Verdict *vd = &run->v->sessions[i];

                if (run->inv->sessions[i].state != SESSION_ACTIVE)
                        continue;
                if (rank >= VERDICT_RANK_MAX)
                        return -EOVERFLOW; /* Verdict.rank's width: 512k sessions in a project */
                vd->rank = ++rank;
                if (p->keep_latest > 0 && rank <= p->keep_latest)
                        vd->protections |= PROT_LATEST;
                if (policy_age_selects(p->max_age, run->info[i].idle))
                        r = policy_select(run, i, verb, "max-age",
                                          &(Measure){ .kind = MEASURE_AGE,
                                                      .key = "max-age",
                                                      .measured = run->info[i].idle,
                                                      .limit = p->max_age });
                if (r >= 0 && p->max_sessions > 0 && rank > p->max_sessions)
                        r = policy_select(run, i, verb, "max-sessions",
                                          &(Measure){ .kind = MEASURE_RANK,
                                                      .key = "max-sessions",
                                                      .measured = rank,
                                                      .limit = (int64_t)p->max_sessions });
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Shrink the sessions of one state in a project, oldest first, until at or below cap. */
static int policy_project_shrink(PolicyRun *run, const PolicyGroup *g, SessionState state,
                                 uint64_t cap, Verb verb, const char *rule) {
        uint64_t total = 0, projected;
        int r;

        if (cap == 0)
                return 0;
        for (size_t k = 0; k < g->n_members; k++)
                if (run->inv->sessions[g->members[k]].state == state)
                        total += run->info[g->members[k]].size;
        if (total <= cap)
                return 0;
        projected = total;
        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                if (run->inv->sessions[i].state == state && policy_going(run, i))
                        projected -= run->info[i].size;
        }
        /* members are newest first: walk backwards for oldest first */
        for (size_t k = g->n_members; k > 0 && projected > cap; k--) {
                size_t i = g->members[k - 1];
                if (run->inv->sessions[i].state != state || policy_going(run, i))
                        continue;
                r = policy_select(run, i, verb, rule,
                                  &(Measure){ .kind = MEASURE_BYTES,
                                              .key = rule,
                                              .measured = (int64_t)total,
                                              .limit = (int64_t)cap });
                if (r < 0)
                        return r;
                if (policy_going(run, i))
                        projected -= run->info[i].size;
        }
        return 0;
}

/* How long session s has been in the archive: since qgc archived it (Session.archived_at,
 * session-times.h), else since its archived file's ctime (the rename into chats/archive/ set it;
 * of a compressed session, its .zst's, the compression: later, so never longer than the truth
 * unless the file was changed since, which makes it younger still). */
static msec_t policy_in_archive(const PolicyRun *run, const Session *s) {
        msec_t since = s->archived_at > 0 ? s->archived_at
                                          : util_nsec_to_msec(s->archived.ctime_ns);
        return since > 0 ? MAX(run->now - since, (msec_t)0) : 0;
}

/* Archive tier: sessions in the archive longer than archive-max-age are deleted. */
static int policy_archive_age(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        int r;

        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                const Session *s = &run->inv->sessions[i];
                msec_t in_archive = policy_in_archive(run, s);

                if (s->state != SESSION_ARCHIVED ||
                    !policy_age_selects(p->archive_max_age, in_archive))
                        continue;
                r = policy_select(run, i, VERB_DELETE, "archive-max-age",
                                  &(Measure){ .kind = MEASURE_AGE,
                                              .key = "archive-max-age",
                                              .measured = in_archive,
                                              .limit = p->archive_max_age });
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Cold tier: archived sessions idle beyond compress-after that are not compressed yet are
 * compressed. One a rule deletes keeps the compression as its fallback (policy_blast()). */
static int policy_compress(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;

        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                const Session *s = &run->inv->sessions[i];
                PolicyInfo *in = &run->info[i];
                Measure m = { .kind = MEASURE_AGE, .key = "compress-after", .measured = in->idle,
                              .limit = p->compress_after };

                if (s->state != SESSION_ARCHIVED || inventory_session_is_cold(s) ||
                    !policy_age_selects(p->compress_after, in->idle))
                        continue;
                assert(p->compress_level <= VERDICT_COMPRESS_LEVEL_MAX); /* config: 1..19 */
                run->v->sessions[i].compress_level = (unsigned)p->compress_level;
                if (in->sel_verb == VERB_DELETE) {
                        VerdictFacts *f = policy_facts(&run->v->sessions[i]);

                        if (!f)
                                return -ENOMEM;
                        if (!f->fallback_rule) {
                                f->fallback = m;
                                f->fallback_rule = "compress-after";
                                f->fallback_verb = VERB_COMPRESS;
                        }
                        continue;
                }
                if (policy_select(run, i, VERB_COMPRESS, "compress-after", &m) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* All project-level rules of one project. */
static int policy_project(PolicyRun *run, const PolicyGroup *g) {
        Verb verb = g->pol->action == POLICY_ACTION_DELETE ? VERB_DELETE : VERB_ARCHIVE;
        int r;

        r = policy_project_age_count(run, g);
        if (r >= 0)
                r = policy_project_shrink(run, g, SESSION_ACTIVE, g->pol->max_size, verb,
                                          "max-size");
        if (r >= 0)
                r = policy_archive_age(run, g);
        if (r >= 0)
                r = policy_project_shrink(run, g, SESSION_ARCHIVED, g->pol->archive_max_size,
                                          VERB_DELETE, "archive-max-size");
        if (r >= 0)
                r = policy_compress(run, g);
        return r;
}

/* Delete oldest first across the tree until `enough` says so; disk caps always delete. A
 * selected session's facts get the cap's target (tree max-size) or percent (keep-free). */
static int policy_tree_walk(PolicyRun *run, const size_t *idx, size_t n, const char *rule,
                            const Measure *m, const VerdictFacts *cap, uint64_t *progress,
                            uint64_t goal, bool up, bool alloc) {
        int r;

        for (size_t k = 0; k < n; k++) {
                size_t i = idx[k];
                const Session *s = &run->inv->sessions[i];
                if (up ? *progress >= goal : *progress <= goal)
                        break;
                if (policy_deleting(run, i))
                        continue;
                r = policy_select(run, i, VERB_DELETE, rule, m);
                if (r < 0)
                        return r;
                if (r > 0) {
                        VerdictFacts *f = policy_facts(&run->v->sessions[i]);

                        if (!f)
                                return -ENOMEM;
                        f->target = cap->target;
                        f->percent = cap->percent;
                }
                if (policy_deleting(run, i)) {
                        uint64_t sz = alloc ? s->bytes_alloc : run->info[i].size;
                        if (up)
                                *progress += sz;
                        else
                                *progress -= MIN(sz, *progress);
                }
        }
        return 0;
}

uint64_t policy_tree_counted(const Inventory *inv, size_t t, bool allocated, TreeCounted *ret) {
        TreeCounted c = {};

        for (size_t i = 0; i < inv->n_sessions; i++)
                if (inv->sessions[i].tree == t) {
                        c.session_bytes += allocated ? inv->sessions[i].bytes_alloc
                                                     : inv->sessions[i].bytes;
                        c.n_sessions++;
                }
        for (size_t i = 0; i < inv->n_orphans; i++)
                if (inv->orphans[i].tree == t) {
                        c.orphan_bytes += allocated ? inv->orphans[i].bytes_alloc
                                                    : inv->orphans[i].bytes;
                        c.n_orphans++;
                }
        if (ret)
                *ret = c;
        return c.session_bytes + c.orphan_bytes;
}

/* What the deletions planned in tree t free: counted bytes (*ret_deleted) and allocated bytes
 * (*ret_freed), of the sessions going (final: by their verdicts, else by the selections so far)
 * and of the orphans deleted; *ret_kept: the orphans that stay. */
static void policy_tree_gone(const PolicyRun *run, size_t t, bool final, uint64_t *ret_deleted,
                             uint64_t *ret_freed, CapHolder *ret_kept) {
        const Inventory *inv = run->inv;
        uint64_t deleted = 0, freed = 0;
        CapHolder kept = {};

        for (size_t i = 0; i < inv->n_sessions; i++)
                if (inv->sessions[i].tree == t &&
                    (final ? run->v->sessions[i].verb == VERB_DELETE : policy_deleting(run, i))) {
                        deleted += run->info[i].size;
                        freed += inv->sessions[i].bytes_alloc;
                }
        for (size_t i = 0; i < inv->n_orphans; i++) {
                const Orphan *o = &inv->orphans[i];

                if (o->tree != t)
                        continue;
                if (run->v->orphans[i].verb == VERB_DELETE) {
                        deleted += policy_size(run, o->bytes, o->bytes_alloc);
                        freed += o->bytes_alloc;
                } else {
                        kept.n++;
                        kept.bytes += policy_size(run, o->bytes, o->bytes_alloc);
                }
        }
        *ret_deleted = deleted;
        *ret_freed = freed;
        if (ret_kept)
                *ret_kept = kept;
}

/* The free space keep-free asks of tree's filesystem. */
static uint64_t policy_keep_free_floor(const TreeLimits *tl, const Tree *tree) {
        if (!tl->keep_free.is_percent)
                return tl->keep_free.bytes;
        return (uint64_t)floor((double)tree->fs_size * tl->keep_free.percent / 100.0);
}

/* Tree max-size (to the low watermark) and keep-free for tree t. */
static int policy_tree(PolicyRun *run, size_t t, size_t *idx) {
        const TreeLimits *tl = &run->cfg->tree;
        const Tree *tree = &run->inv->trees[t];
        uint64_t total = 0, deleted, freed;
        bool sorted = false;
        size_t n = 0;
        int r;

        /* a tree that was not fully listed: its total and its oldest sessions are unknown */
        if (tree->incomplete)
                return 0;
        total = policy_tree_counted(run->inv, t, tl->count_allocated, NULL);
        for (size_t i = 0; i < run->inv->n_sessions; i++)
                if (run->inv->sessions[i].tree == t)
                        idx[n++] = i;
        policy_tree_gone(run, t, /* final= */ false, &deleted, &freed, NULL);
        /* idx is put in age order only when a cap walks it (most runs have none in effect) */
        if (tl->max_size > 0 && total > tl->max_size) {
                uint64_t target = tl->low_watermark > 0 && tl->low_watermark < tl->max_size
                                          ? tl->low_watermark
                                          : tl->max_size;
                uint64_t projected = total - MIN(deleted, total);
                Measure m = { .kind = MEASURE_BYTES,
                              .key = "max-size",
                              .measured = (int64_t)total,
                              .limit = (int64_t)tl->max_size };

                qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)run->inv);
                sorted = true;
                r = policy_tree_walk(run, idx, n, "tree-max-size", &m,
                                     &(VerdictFacts){ .target = (int64_t)target }, &projected,
                                     target, /* up= */ false, /* alloc= */ false);
                if (r < 0)
                        return r;
        }

        if (tl->keep_free.is_set && tree->fs_known) {
                uint64_t floor_bytes = policy_keep_free_floor(tl, tree);

                if (tree->fs_avail >= floor_bytes)
                        return 0;
                /* again: the tree max-size walk may have added deletions */
                policy_tree_gone(run, t, /* final= */ false, &deleted, &freed, NULL);
                Measure m = { .kind = MEASURE_BYTES,
                              .key = "keep-free",
                              .measured = (int64_t)tree->fs_avail,
                              .limit = (int64_t)floor_bytes };
                VerdictFacts cap = { .percent = tl->keep_free.is_percent ? tl->keep_free.percent
                                                                         : 0 };

                if (!sorted)
                        qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)run->inv);
                r = policy_tree_walk(run, idx, n, "keep-free", &m, &cap, &freed,
                                     floor_bytes - tree->fs_avail, /* up= */ true,
                                     /* alloc= */ true);
                if (r < 0)
                        return r;
        }
        return 0;
}

const char policy_rule_limit[] = "limit";

/* Plan the verb selected as a skip, because the run would refuse it (policy_rule_limit). */
static void policy_limit_skip(Verdict *vd) {
        vd->blocked_rule = vd->rule;
        vd->blocked_verb = vd->verb;
        vd->verb = VERB_SKIP;
        vd->rule = policy_rule_limit;
}

/* Blast radius: the newest deletions beyond the run's and the projects' limits are skipped. */
static int policy_blast(PolicyRun *run, const PolicyOptions *opts) {
        const Inventory *inv = run->inv;
        uint64_t global = run->cfg->defaults.max_deletions, n_global = 0;
        _cleanup_free_ size_t *idx = NULL, *per_group = NULL, *group_size = NULL;
        size_t n = 0;

        if (opts && opts->force)
                return 0;
        idx = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        per_group = calloc(run->n_groups ?: 1, sizeof(size_t));
        group_size = calloc(run->n_groups ?: 1, sizeof(size_t));
        if (!idx || !per_group || !group_size)
                return -ENOMEM;
        for (size_t g = 0; g < run->n_groups; g++)
                group_size[g] = run->groups[g].n_members;
        for (size_t i = 0; i < inv->n_sessions; i++)
                if (run->v->sessions[i].verb == VERB_DELETE)
                        idx[n++] = i;
        qsort_r(idx, n, sizeof(size_t), policy_cmp_oldest, (void *)inv);

        for (size_t k = 0; k < n; k++) {
                size_t i = idx[k], g = run->info[i].group;
                PolicyInfo *in = &run->info[i];
                const Policy *p = in->pol;
                Verdict *vd = &run->v->sessions[i];
                VerdictFacts held = {};
                const char *held_by;

                if (g == SIZE_MAX)
                        continue; /* cannot happen: unverified sessions are skipped */
                if (global > 0 && n_global >= global) {
                        held_by = "max-deletions";
                        held.held = (Measure){ .measured = (int64_t)n_global,
                                               .limit = (int64_t)global };
                } else if (p->max_deletions > 0 && per_group[g] >= p->max_deletions) {
                        held_by = "max-deletions";
                        held.held = (Measure){ .measured = (int64_t)per_group[g],
                                               .limit = (int64_t)p->max_deletions };
                        held.held_project = true;
                } else if (p->max_deletions_percent > 0 &&
                           (double)(per_group[g] + 1) >
                                   p->max_deletions_percent * (double)group_size[g] / 100.0) {
                        held_by = "max-deletions-percent";
                        held.held = (Measure){ .measured = (int64_t)per_group[g],
                                               .limit = (int64_t)group_size[g] };
                        held.held_percent = p->max_deletions_percent;
                } else {
                        n_global++;
                        per_group[g]++;
                        continue;
                }
                if (!policy_facts(vd))
                        return -ENOMEM;
                held.held.kind = MEASURE_COUNT;
                held.held.key = held_by;
                vd->facts->held = held.held;
                vd->facts->held_percent = held.held_percent;
                vd->facts->held_project = held.held_project;
                vd->facts->held_by = held_by;
                vd->facts->held_rule = vd->rule;
                if (vd->facts->fallback_rule) {
                        /* a disk cap wanted it deleted, a project rule archives it anyway */
                        vd->verb = vd->facts->fallback_verb;
                        vd->rule = vd->facts->fallback_rule;
                        vd->measure = vd->facts->fallback;
                        if (vd->verb == VERB_ARCHIVE && inv->sessions[i].merge_too_big)
                                policy_limit_skip(vd);
                } else {
                        /* skipped: what it blocked is the deletion (measure stays the rule's) */
                        vd->verb = VERB_SKIP;
                        vd->rule = policy_protection_to_string(PROT_BLAST);
                        vd->blocked_by = PROT_BLAST;
                        vd->blocked_verb = VERB_DELETE;
                        vd->blocked_rule = vd->facts->held_rule;
                }
                vd->protections |= PROT_BLAST;
        }
        return 0;
}

/* Count session i (bytes) as holding cap c, when something kept it although a rule wanted it
 * gone: a deletion limit, or the protection that won. Others are not holders. */
static void policy_cap_hold(const PolicyRun *run, CapUnmet *c, size_t i, uint64_t bytes) {
        const Verdict *vd = &run->v->sessions[i];
        Protection prot = 0;
        const char *limit = NULL;

        if (policy_verdict_held_by(vd) && (vd->protections & PROT_BLAST))
                limit = policy_verdict_held_by(vd);
        else if (vd->blocked_by && vd->blocked_verb != VERB_KEEP)
                prot = vd->blocked_by;
        else
                return;
        for (size_t k = 0; k < c->n_held; k++)
                if (c->held[k].prot == prot && c->held[k].limit == limit) {
                        c->held[k].n++;
                        c->held[k].bytes += bytes;
                        return;
                }
        if (c->n_held < CAP_HOLDERS_MAX)
                c->held[c->n_held++] = (CapHolder){ .prot = prot, .limit = limit, .n = 1,
                                                    .bytes = bytes };
}

static int policy_cap_add(PolicyRun *run, const CapUnmet *c) {
        Verdicts *v = run->v;
        CapUnmet *caps = reallocarray(v->caps, v->n_caps + 1, sizeof(CapUnmet));

        if (!caps)
                return -ENOMEM;
        v->caps = caps;
        v->caps[v->n_caps++] = *c;
        return 0;
}

/* The tree caps of tree t that the plan leaves unmet: what stays (or is free) after every
 * planned deletion, and who holds it. */
static int policy_tree_unmet(PolicyRun *run, size_t t) {
        const TreeLimits *tl = &run->cfg->tree;
        const Tree *tree = &run->inv->trees[t];
        const Inventory *inv = run->inv;
        uint64_t total, deleted, freed;
        CapHolder orphans;
        int r;

        if (tree->incomplete)
                return 0;
        total = policy_tree_counted(inv, t, tl->count_allocated, NULL);
        policy_tree_gone(run, t, /* final= */ true, &deleted, &freed, &orphans);
        if (tl->max_size > 0 && total - MIN(deleted, total) > tl->max_size) {
                CapUnmet c = { .cap = "tree-max-size", .tree = t,
                               .after = total - MIN(deleted, total), .limit = tl->max_size };

                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inv->sessions[i].tree == t && run->v->sessions[i].verb != VERB_DELETE)
                                policy_cap_hold(run, &c, i, run->info[i].size);
                if (orphans.n > 0 && c.n_held < CAP_HOLDERS_MAX)
                        c.held[c.n_held++] = orphans;
                r = policy_cap_add(run, &c);
                if (r < 0)
                        return r;
        }
        if (tl->keep_free.is_set && tree->fs_known) {
                uint64_t floor_bytes = policy_keep_free_floor(tl, tree);
                CapUnmet c = { .cap = "keep-free", .tree = t, .after = tree->fs_avail + freed,
                               .limit = floor_bytes,
                               .percent = tl->keep_free.is_percent ? tl->keep_free.percent : 0 };

                if (c.after >= floor_bytes)
                        return 0;
                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inv->sessions[i].tree == t && run->v->sessions[i].verb != VERB_DELETE)
                                policy_cap_hold(run, &c, i, inv->sessions[i].bytes_alloc);
                return policy_cap_add(run, &c);
        }
        return 0;
}

/* A project's max-size and max-sessions on its active sessions: those that stay active after
 * the plan (neither archived nor deleted), and who holds them. */
static int policy_project_unmet(PolicyRun *run, const PolicyGroup *g) {
        const Policy *p = g->pol;
        uint64_t n = 0, bytes = 0;
        int r;

        if (p->max_size == 0 && p->max_sessions == 0)
                return 0;
        for (size_t k = 0; k < g->n_members; k++) {
                size_t i = g->members[k];
                Verb vb = run->v->sessions[i].verb;

                if (run->inv->sessions[i].state != SESSION_ACTIVE || vb == VERB_ARCHIVE ||
                    vb == VERB_DELETE)
                        continue;
                n++;
                bytes += run->info[i].size;
        }
        for (unsigned which = 0; which < 2; which++) {
                CapUnmet c = { .tree = g->tree, .project = g->cwd };

                if (which == 0 && p->max_size > 0 && bytes > p->max_size)
                        c.cap = "max-size", c.after = bytes, c.limit = p->max_size;
                else if (which == 1 && p->max_sessions > 0 && n > p->max_sessions)
                        c.cap = "max-sessions", c.after = n, c.limit = p->max_sessions;
                else
                        continue;
                for (size_t k = 0; k < g->n_members; k++) {
                        size_t i = g->members[k];
                        Verb vb = run->v->sessions[i].verb;

                        /* max-sessions: the newest max-sessions stay anyway; only those
                         * beyond it hold the cap */
                        if (run->inv->sessions[i].state == SESSION_ACTIVE &&
                            vb != VERB_ARCHIVE && vb != VERB_DELETE &&
                            (which == 0 || run->v->sessions[i].rank > p->max_sessions))
                                policy_cap_hold(run, &c, i, run->info[i].size);
                }
                r = policy_cap_add(run, &c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every cap the plan leaves unmet (Verdicts.caps), after the deletion limits: trees first. */
static int policy_caps_unmet(PolicyRun *run) {
        int r;

        for (size_t t = 0; t < run->inv->n_trees; t++) {
                r = policy_tree_unmet(run, t);
                if (r < 0)
                        return r;
        }
        for (size_t g = 0; g < run->n_groups; g++) {
                r = policy_project_unmet(run, &run->groups[g]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A protection p won over what a rule selected (nothing when sel_verb is VERB_KEEP; the
 * verdict's measure is the selecting rule's). */
static void policy_block(Verdict *vd, const PolicyInfo *in, Verb verb, Protection p) {
        vd->blocked_rule = in->sel_verb != VERB_KEEP ? vd->rule : NULL;
        vd->blocked_verb = in->sel_verb;
        vd->blocked_by = p;
        vd->verb = verb;
        vd->rule = policy_protection_to_string(p);
        if (in->sel_verb == VERB_KEEP)
                vd->measure = (Measure){};
}

/* The facts a protection's reason quotes: a write within min-idle (skip-class), min-age and
 * keep-latest and restore-grace (keep-class, all of them are listed). 0 or -ENOMEM. */
static int policy_block_facts(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        const Policy *p = run->info[i].pol;
        Verdict *vd = &run->v->sessions[i];
        VerdictFacts *f;

        if (!(vd->flags & VERDICT_RECENT_WRITE) &&
            !(vd->verb == VERB_KEEP &&
              (vd->protections & (PROT_MIN_AGE | PROT_LATEST | PROT_RESTORED))))
                return 0;
        f = policy_facts(vd);
        if (!f)
                return -ENOMEM;
        if (vd->flags & VERDICT_RECENT_WRITE) {
                /* the real clock, as policy_skip_protections() measured it */
                f->since_write = run->real_now - (s->last_write > 0 ? s->last_write : s->mtime);
                f->min_idle = p->min_idle;
        }
        if (vd->protections & PROT_MIN_AGE) {
                msec_t born = s->first_record > 0 ? s->first_record : s->mtime;

                f->age = MAX(run->now - born, (msec_t)0);
                f->min_age = p->min_age;
        }
        if (vd->protections & PROT_LATEST)
                f->keep_latest = p->keep_latest;
        if (vd->protections & PROT_RESTORED) {
                f->restored_ago = MAX(run->real_now - s->restored_at, (msec_t)0);
                f->restore_grace = p->restore_grace;
        }
        return 0;
}

/* Turn the selections and protections of session i into its verdict. 0 or -ENOMEM. */
static int policy_finish(PolicyRun *run, size_t i) {
        const Session *s = &run->inv->sessions[i];
        PolicyInfo *in = &run->info[i];
        Verdict *vd = &run->v->sessions[i];
        const Policy *p = in->pol;
        bool selected = in->sel_verb != VERB_KEEP;

        if (vd->protections & PROT_SKIP_MASK)
                policy_block(vd, in, VERB_SKIP,
                             policy_first_protection(vd->protections & PROT_SKIP_MASK));
        else if (selected && p->keep_titled && s->title_unread) {
                /* the scan judged no rule could select it and left its title unread: never act
                 * without knowing whether a person titled it. A scan that follows
                 * policy_title_need() with policy_age_selects() never leaves it so; the policy
                 * cannot check that its inventory came from such a scan (a net) */
                vd->protections |= PROT_UNVERIFIED;
                vd->flags |= VERDICT_TITLE_UNREAD;
                policy_block(vd, in, VERB_SKIP, PROT_UNVERIFIED);
        } else if (selected && (vd->protections & PROT_KEEP_MASK))
                policy_block(vd, in, VERB_KEEP,
                             policy_first_protection(vd->protections & PROT_KEEP_MASK));
        else if (selected && policy_tasks_block(run, i)) {
                vd->protections |= PROT_SCHEDULED;
                vd->flags |= VERDICT_TASKS_HELD;
                policy_block(vd, in, VERB_KEEP, PROT_SCHEDULED);
        } else if (selected && ((in->sel_verb == VERB_DELETE && policy_shared_refused(s)) ||
                                (in->sel_verb == VERB_ARCHIVE && s->merge_too_big))) {
                /* the run would skip it (its edit of tmp/<hash>/logs.json or the organisation
                 * file is refused: erase.h; its sidecar merge is: archive.h): planned so,
                 * nothing of it salvaged */
                vd->verb = in->sel_verb;
                policy_limit_skip(vd);
        } else if (selected) {
                vd->verb = in->sel_verb; /* rule and measure: the selecting rule's */
        } else {
                vd->verb = VERB_KEEP;
                vd->rule = "none";
                /* idle vs max-age: what an active session is kept within */
                if (p->max_age > 0 && s->state == SESSION_ACTIVE)
                        vd->measure = (Measure){ .kind = MEASURE_AGE,
                                                 .key = "max-age",
                                                 .measured = in->idle,
                                                 .limit = p->max_age };
        }
        return policy_block_facts(run, i);
}

/* A session protection that keeps a stale entry: the person's, the liveness ones and min-age
 * ("never touched"); keep-latest does not apply (the entry goes whole). */
#define POLICY_STALE_BLOCK                                                                        \
        (PROT_LIVE | PROT_UNVERIFIED | PROT_FOREIGN | PROT_CONFLICT | PROT_PROTECT | PROT_PINNED | \
         PROT_TITLED | PROT_SCHEDULED | PROT_WORKTREE | PROT_MIN_AGE | PROT_RESTORED)

/* The verdict of stale entry o (or of one of its sessions): verb, rule and why, with no
 * measure and nothing blocked. 0 or -ENOMEM. */
static int policy_stale_set(Verdict *vd, Verb verb, const char *rule, const Orphan *o,
                            const VerdictFacts *why) {
        if (!policy_facts(vd))
                return -ENOMEM;
        vd->verb = verb;
        vd->rule = rule;
        vd->measure = (Measure){};
        vd->blocked_by = 0;
        vd->blocked_verb = VERB_KEEP;
        vd->blocked_rule = NULL;
        vd->facts->stale = o;
        vd->facts->stale_why = why->stale_why;
        vd->facts->stale_n = why->stale_n;
        vd->facts->stale_age = why->stale_age;
        vd->facts->stale_limit = why->stale_limit;
        vd->facts->stale_prot = why->stale_prot;
        vd->facts->quote_session = why->quote_session;
        vd->facts->quote = why->quote;
        return 0;
}

/* The verdict of stale project entry inv->orphans[oi] (now: the rule's clock, never later than
 * the real one). Before the deletion limits: keep (and v->mark to write or remove its marker)
 * or delete, and then every session of the entry is deleted by this rule. is_protected: its
 * project has protect = true. With after_limits: an entry some of whose sessions the limits
 * held back is kept. 0 or -ENOMEM. */
static int policy_stale_decide(const Inventory *inv, size_t oi, const Policy *p, msec_t now,
                               bool is_protected, bool after_limits, Verdicts *v) {
        const Orphan *o = &inv->orphans[oi];
        Verdict *vd = &v->orphans[oi];
        const char *key = "stale-project-min-age";
        VerdictFacts why = { .stale_limit = p->stale_project_min_age };
        msec_t marked = util_nsec_to_msec(o->marker.mtime_ns);
        int r;

        if (after_limits) {
                /* the deletion limits held some of its sessions back: the entry waits */
                if (vd->verb != VERB_DELETE)
                        return 0;
                for (size_t i = 0; i < inv->n_sessions; i++)
                        if (inventory_stale_member(o, &inv->sessions[i]) &&
                            v->sessions[i].verb != VERB_DELETE)
                                why.stale_n++;
                if (why.stale_n == 0)
                        return 0;
                why.stale_why = STALE_WHY_HELD;
                return policy_stale_set(vd, VERB_KEEP, key, o, &why);
        }
        vd->mark = 0;
        if (why.stale_limit == MSEC_INFINITY) {
                why.stale_why = STALE_WHY_OFF;
                return policy_stale_set(vd, VERB_KEEP, "none", o, &why);
        }
        if (is_protected) {
                vd->protections |= PROT_PROTECT;
                why.stale_why = STALE_WHY_PROTECTED;
                return policy_stale_set(vd, VERB_KEEP, policy_protection_to_string(PROT_PROTECT), o,
                                        &why);
        }
        if (o->cwd_back) {
                vd->mark = o->marker.present ? -1 : 0;
                why.stale_why = STALE_WHY_BACK;
                return policy_stale_set(vd, VERB_KEEP, "none", o, &why);
        }
        if (o->stale_why) {
                why.stale_why = STALE_WHY_KEPT;
                return policy_stale_set(vd, VERB_KEEP, "none", o, &why);
        }
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                const Verdict *sv = &v->sessions[i];
                unsigned prot = sv->protections & POLICY_STALE_BLOCK;

                if (!inventory_stale_member(o, s))
                        continue;
                why.stale_n++;
                why.quote_session = s;
                if (p->keep_titled && s->title_unread)
                        /* policy_title_need() reads every title with this key on: a net */
                        why.stale_why = STALE_WHY_TITLE_UNREAD;
                else if (policy_shared_refused(s))
                        /* its delete would be skipped: the entry could not go whole */
                        why.stale_why = STALE_WHY_SHARED;
                else if (prot || s->n_tasks > 0) {
                        why.stale_why = STALE_WHY_KEPT_BY;
                        why.stale_prot = prot ? (Protection)(prot & -prot) : 0;
                        /* a skipped session's own reason is quoted at the edge */
                        why.quote = sv->verb == VERB_SKIP ? sv : NULL;
                } else
                        continue;
                return policy_stale_set(vd, VERB_KEEP, "none", o, &why);
        }
        why.quote_session = NULL;
        why.stale_age = MAX(now - o->mtime, (msec_t)0);
        if (now - o->mtime <= why.stale_limit) {
                why.stale_why = STALE_WHY_YOUNG;
                return policy_stale_set(vd, VERB_KEEP, "none", o, &why);
        }
        if (!o->marker.present) {
                vd->mark = 1;
                why.stale_why = STALE_WHY_MARK;
                return policy_stale_set(vd, VERB_KEEP, key, o, &why);
        }
        why.stale_age = MAX(now - marked, (msec_t)0);
        why.stale_why = now - marked <= why.stale_limit ? STALE_WHY_MARKED : STALE_WHY_DELETE;
        r = policy_stale_set(vd, why.stale_why == STALE_WHY_MARKED ? VERB_KEEP : VERB_DELETE,
                             why.stale_why == STALE_WHY_MARKED ? "none" : key, o, &why);
        if (r < 0 || why.stale_why == STALE_WHY_MARKED)
                return r;
        why.stale_why = STALE_WHY_MEMBER;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                Verdict *sv = &v->sessions[i];

                if (!inventory_stale_member(o, &inv->sessions[i]))
                        continue;
                r = policy_stale_set(sv, VERB_DELETE, key, o, &why);
                if (r < 0)
                        return r;
                sv->protections &= ~(unsigned)PROT_LATEST;
        }
        return 0;
}

/* Does orphan o belong to a project with protect = true? Its project directory is that of a
 * protected session of its tree, or the one its store gives an exact protected project. */
static bool policy_orphan_protected(const PolicyRun *run, const Orphan *o) {
        const StoreOps *store = run->inv->trees[o->tree].store;

        if (!o->project_dir || !o->project_dir[0])
                return false; /* file-history: the session is gone, its project unknown */
        for (size_t i = 0; i < run->inv->n_sessions; i++) {
                const Session *s = &run->inv->sessions[i];
                if (s->tree == o->tree && run->info[i].pol->protect && s->project_dir &&
                    streq(s->project_dir, o->project_dir) && policy_is_verified(s))
                        return true;
        }
        for (size_t k = 0; k < run->cfg->n_projects; k++) {
                const ProjectOverride *po = &run->cfg->projects[k];
                _cleanup_free_ char *dir = NULL;

                if (!po->policy.protect || po->is_glob || !store || !store->project_dir)
                        continue;
                dir = store->project_dir(po->pattern);
                if (dir && streq(dir, o->project_dir))
                        return true;
        }
        return false;
}

/* Orphans older than orphan-min-age (idle = now - newest mtime inside) are reclaimed. */
static void policy_orphans(PolicyRun *run) {
        const Policy *p = &run->cfg->defaults;

        for (size_t i = 0; i < run->inv->n_orphans; i++) {
                const Orphan *o = &run->inv->orphans[i];
                Verdict *vd = &run->v->orphans[i];
                /* the age the rule sees (--now), but never older than it really is: an orphan
                 * written a minute ago is not reclaimed by a forecast clock */
                msec_t idle = MAX(MIN(run->now, run->real_now) - o->mtime, (msec_t)0);
                const char *key;
                /* hygiene kinds have a key each (hygiene.h), the others orphan-min-age */
                msec_t limit = policy_hygiene_limit(p, o->kind, &key);

                if (o->kind == ORPHAN_STALE_PROJECT)
                        continue; /* policy_stale_projects(), once every session is decided */

                vd->measure = (Measure){ .kind = MEASURE_AGE, .key = key, .measured = idle,
                                         .limit = limit };
                if (policy_orphan_protected(run, o)) {
                        vd->verb = VERB_KEEP;
                        vd->rule = policy_protection_to_string(PROT_PROTECT);
                        vd->protections |= PROT_PROTECT;
                        vd->blocked_by = PROT_PROTECT;
                } else if (limit != MSEC_INFINITY && idle > limit) {
                        vd->verb = VERB_DELETE;
                        vd->rule = inventory_hygiene_kind(o->kind) ||
                                           o->kind == ORPHAN_DC_CHECKPOINTS ? key : "orphan";
                } else {
                        vd->verb = VERB_KEEP;
                        vd->rule = "none";
                }
        }
}

/* Stale project entries (hygiene.h), which depend on their sessions' verdicts: after them and
 * before the deletion limits, then again after the limits. */
static int policy_stale_projects(PolicyRun *run, bool after_limits) {
        for (size_t i = 0; i < run->inv->n_orphans; i++) {
                const Orphan *o = &run->inv->orphans[i];
                Orphan dir = { .tree = o->tree, .project_dir = o->name };
                int r;

                if (o->kind != ORPHAN_STALE_PROJECT)
                        continue;
                r = policy_stale_decide(run->inv, i, &run->cfg->defaults,
                                        MIN(run->now, run->real_now),
                                        policy_orphan_protected(run, &dir), after_limits, run->v);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void policy_title_need_one(const Policy *p, TitleNeed *t) {
        if (!p->keep_titled)
                return;
        if (p->max_sessions > 0 || p->max_size > 0 || p->archive_max_size > 0)
                t->all = true;
        if (p->max_age > 0)
                t->active_idle = MIN(t->active_idle, p->max_age);
        if (p->archive_max_age > 0)
                t->archived_idle = MIN(t->archived_idle, p->archive_max_age);
        if (p->compress_after > 0)
                t->archived_idle = MIN(t->archived_idle, p->compress_after);
}

void policy_title_need(const Config *cfg, bool json, TitleNeed *ret) {
        TitleNeed t = { .all = json, .active_idle = MSEC_INFINITY, .archived_idle = MSEC_INFINITY };

        policy_title_need_one(&cfg->defaults, &t);
        for (size_t i = 0; i < cfg->n_projects; i++)
                policy_title_need_one(&cfg->projects[i].policy, &t);
        if (cfg->tree.max_size > 0 || cfg->tree.keep_free.is_set)
                t.all = true;
        if (cfg->defaults.stale_project_min_age != MSEC_INFINITY)
                t.all = true; /* a stale entry's sessions go whatever their age (hygiene.h) */
        *ret = t;
}

static void policy_run_done(PolicyRun *run) {
        free(run->info);
        free(run->order);
        free(run->groups);
}

/* Per-session set-up: effective policy, idle time, counted size, protections. */
static void policy_prepare(PolicyRun *run) {
        for (size_t i = 0; i < run->inv->n_sessions; i++) {
                const Session *s = &run->inv->sessions[i];
                PolicyInfo *in = &run->info[i];

                in->pol = config_policy_for(run->cfg, policy_is_verified(s) ? s->cwd : NULL);
                if (!in->pol)
                        in->pol = &run->cfg->defaults;
                in->idle = MAX(run->now - s->last_activity, (msec_t)0);
                in->size = policy_size(run, s->bytes, s->bytes_alloc);
                in->group = SIZE_MAX;
                in->sel_verb = VERB_KEEP;
                policy_skip_protections(run, i);
                policy_keep_protections(run, i);
        }
}

int policy_evaluate(const Inventory *inv, const Config *cfg, msec_t now, const PolicyOptions *opts,
                    Verdicts **ret) {
        _cleanup_(policy_verdicts_freep) Verdicts *v = NULL;
        _cleanup_free_ size_t *idx = NULL;
        PolicyRun run = { .inv = inv, .cfg = cfg, .now = now,
                          .real_now = opts && opts->real_now > 0 ? opts->real_now : now };
        int r;

        if (!inv || !cfg || !ret)
                return -EINVAL;
        v = calloc(1, sizeof(Verdicts));
        if (!v)
                return -ENOMEM;
        v->sessions = calloc(inv->n_sessions ?: 1, sizeof(Verdict));
        v->orphans = calloc(inv->n_orphans ?: 1, sizeof(Verdict));
        if (!v->sessions || !v->orphans)
                return -ENOMEM;
        v->n_sessions = inv->n_sessions;
        v->n_orphans = inv->n_orphans;
        run.v = v;
        run.info = calloc(inv->n_sessions ?: 1, sizeof(PolicyInfo));
        idx = calloc(inv->n_sessions ?: 1, sizeof(size_t));
        if (!run.info || !idx) {
                policy_run_done(&run);
                return -ENOMEM;
        }

        policy_prepare(&run);
        r = policy_build_groups(&run);
        for (size_t g = 0; r >= 0 && g < run.n_groups; g++)
                r = policy_project(&run, &run.groups[g]);
        if (r >= 0)
                policy_orphans(&run);
        for (size_t t = 0; r >= 0 && t < inv->n_trees; t++)
                r = policy_tree(&run, t, idx);
        for (size_t i = 0; r >= 0 && i < inv->n_sessions; i++)
                r = policy_finish(&run, i);
        if (r >= 0)
                r = policy_stale_projects(&run, /* after_limits= */ false);
        if (r >= 0)
                r = policy_blast(&run, opts);
        if (r >= 0)
                r = policy_caps_unmet(&run);
        if (r >= 0)
                r = policy_stale_projects(&run, /* after_limits= */ true);
        policy_run_done(&run);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

msec_t policy_hygiene_limit(const Policy *p, OrphanKind k, const char **ret_key) {
        switch (k) {
        case ORPHAN_TOOL_RESULT:
                *ret_key = "tool-results-max-age";
                return p->tool_results_max_age;
        case ORPHAN_TMP_PROJECT:
                *ret_key = "stale-tmp-min-age";
                return p->stale_tmp_min_age;
        case ORPHAN_DEBUG_LOG:
        case ORPHAN_PLAN:
                *ret_key = "debug-plans-min-age";
                return p->debug_plans_min_age;
        case ORPHAN_LEGACY:
                *ret_key = "legacy-max-age";
                return p->legacy_max_age;
        case ORPHAN_STALE_PROJECT:
                *ret_key = "stale-project-min-age";
                return p->stale_project_min_age;
        case ORPHAN_DC_CHECKPOINTS:
                *ret_key = "compact-min-idle";
                return p->compact_min_idle;
        case ORPHAN_DC_ERROR_LOG:
                *ret_key = NULL; /* reported only (dc-store.h) */
                return MSEC_INFINITY;
        default:
                *ret_key = "orphan-min-age";
                return p->orphan_min_age;
        }
}
