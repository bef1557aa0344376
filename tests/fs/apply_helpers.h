/* apply_helpers.h: shared by tests/fs/test_actions.c and tests/faults/test_faults.c. Copies the
 * corpus tree, scans it with the real scanner and builds a Plan whose verbs the test chooses,
 * so the executor is tested independently of the policy. Header-only (static functions). */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actions.h"
#include "fixture.h"
#include "testdata.h"
#include "macro.h"
#include "inventory.h"
#include "plan.h"
#include "policy.h"
#include "recover.h"
#include "run-plan.h"
#include "qwen-store.h"
#include "roots.h"
#include "scan.h"
#include "util.h"

/* Sessions of the corpus without runtime claims (so never live). */
#define S_TEXT "47406782-cafc-46f6-a948-02f7b5b53f92"   /* api-server, text only */
#define S_API "6fae7d01-a2f7-4d92-839b-10504c3c7925"    /* api-server, 2 usage lines */
#define S_FORK "122b1556-a4f5-48b6-9bf1-eae6bac23f87"   /* api-server, forked */
#define S_WEB "aefd2a51-f2fc-4eed-a29c-91292bb022bf"    /* webapp */
#define S_SUB "dd3dc65a-7d32-4843-a56c-9eef3a13391d"    /* webapp, subagents/<id>/ */
#define S_DEBUG "c7bab6d3-4d35-4ebb-b856-81c884008a1e"  /* webapp, debug/<id>.txt */
#define S_NOTES "be0b1e35-4600-44b4-aba9-84b6d4d12748"  /* my-notes (cwd my.notes) */
#define S_SCRATCH "582043e2-0a5b-430d-b2e9-daca37f89f10" /* scratch */
#define S_ARCH "1a914264-8e49-442e-bc79-1cb2de9eae0c"   /* scratch, archived */
#define S_KILLED "6dcfb8c0-951c-475b-9ca1-0d8837bead38" /* my-notes, no usage line, claim */
#define S_FH "df25afd1-db41-477e-87bb-98d273af1115"     /* my-notes, file-history, claim */

#define P_API "projects/-srv-demo-api-server/chats"
#define P_WEB "projects/-srv-demo-webapp/chats"
#define P_NOTES "projects/-srv-demo-my-notes/chats"
#define P_SCRATCH "projects/-srv-demo-scratch/chats"

/* One chosen action: a session id or orphan name, and its verb. */
typedef struct ApplyPick {
        const char *id;
        Verb verb;
} ApplyPick;

typedef struct ApplyRun {
        Inventory *inv;
        Verdicts *verdicts;
        Plan plan;
} ApplyRun;

static inline void apply_run_done(ApplyRun *a) {
        a->verdicts = policy_verdicts_free(a->verdicts);
        free(a->plan.items);
        a->plan.items = NULL;
        for (size_t i = 0; i < a->plan.n_steps; i++)
                plan_step_done(&a->plan.steps[i]);
        free(a->plan.steps);
        a->plan.steps = NULL;
        a->plan.n_steps = 0;
        a->inv = inventory_free(a->inv);
}

/* A verdict the test picked: verb and rule, and "picked by the test" as its reason. */
static inline int apply_set_fact(Verdict *v, Verb verb, const char *rule) {
        v->facts = calloc(1, sizeof(VerdictFacts));
        if (!v->facts)
                return -ENOMEM;
        v->facts->fact = "picked by the test"; /* static, as the policy's (policy.h) */
        v->verb = verb;
        v->rule = rule;
        return 0;
}

/* Scan the Qwen data dir qwen (G = R) into a fresh inventory. */
static inline int apply_scan(const char *qwen, Inventory **ret) {
        Inventory *inv = NULL;
        Tree t = {};
        ScanOptions so = { .now = util_now_msec() };
        int r;

        r = inventory_new(&inv);
        if (r < 0)
                return r;
        r = qwen_store.tree_from_dir(qwen, &t);
        if (r >= 0)
                r = inventory_add_tree(inv, &t, NULL);
        if (r >= 0)
                r = scan_all(inv, &so);
        if (r < 0) {
                inventory_free(inv);
                return r;
        }
        *ret = inv;
        return 0;
}

static inline const char *apply_pick_verb(const ApplyPick *picks, const char *id, Verb *ret) {
        for (const ApplyPick *p = picks; p && p->id; p++)
                if (strcasecmp(p->id, id) == 0) {
                        *ret = p->verb;
                        return p->id;
                }
        return NULL;
}

/* Scan qwen and build a Plan: the picked sessions/orphans get their verb, the rest KEEP. */
static inline int apply_prepare(const char *qwen, const ApplyPick *picks, ApplyRun *ret) {
        ApplyRun a = {};
        size_t n = 0;
        int r;

        r = apply_scan(qwen, &a.inv);
        if (r < 0)
                return r;
        a.verdicts = calloc(1, sizeof(Verdicts));
        a.plan.items = calloc(a.inv->n_sessions + a.inv->n_orphans + 1, sizeof(PlanItem));
        if (!a.verdicts || !a.plan.items) {
                apply_run_done(&a);
                return -ENOMEM;
        }
        a.verdicts->sessions = calloc(a.inv->n_sessions + 1, sizeof(Verdict));
        a.verdicts->orphans = calloc(a.inv->n_orphans + 1, sizeof(Verdict));
        if (!a.verdicts->sessions || !a.verdicts->orphans) {
                apply_run_done(&a);
                return -ENOMEM;
        }
        a.verdicts->n_sessions = a.inv->n_sessions;
        a.verdicts->n_orphans = a.inv->n_orphans;
        for (size_t i = 0; i < a.inv->n_sessions; i++) {
                Verdict *v = &a.verdicts->sessions[i];
                Verb verb = VERB_KEEP;
                apply_pick_verb(picks, a.inv->sessions[i].id, &verb);
                r = apply_set_fact(v, verb, "test");
                if (r < 0) {
                        apply_run_done(&a);
                        return r;
                }
                if (verb != VERB_KEEP)
                        a.plan.items[n++] = (PlanItem){ .is_orphan = false, .index = i, .verdict = v };
        }
        for (size_t i = 0; i < a.inv->n_orphans; i++) {
                Verdict *v = &a.verdicts->orphans[i];
                Verb verb = VERB_KEEP;
                apply_pick_verb(picks, a.inv->orphans[i].name, &verb);
                r = apply_set_fact(v, verb, "orphan");
                if (r < 0) {
                        apply_run_done(&a);
                        return r;
                }
                if (verb != VERB_KEEP)
                        a.plan.items[n++] = (PlanItem){ .is_orphan = true, .index = i, .verdict = v };
        }
        a.plan.inv = a.inv;
        a.plan.verdicts = a.verdicts;
        a.plan.n_items = n;
        /* the leftovers of an interrupted run go first, as in a real run */
        r = recover_scan(&a.plan);
        if (r < 0) {
                apply_run_done(&a);
                return r;
        }
        *ret = a;
        return 0;
}

/* Scan, plan the picks and execute. Returns test_run_plan()'s result. */
static inline int apply_execute(const char *qwen, const ApplyPick *picks, ActionStats *ret_stats) {
        ApplyRun a = {};
        int r;

        r = apply_prepare(qwen, picks, &a);
        if (r < 0)
                return r;
        r = test_run_plan(&a.plan, ret_stats);
        apply_run_done(&a);
        return r;
}

/* Count lines of qwen/usage_record.jsonl naming session id. */
static inline int apply_usage_lines(const char *qwen, const char *id) {
        char *buf = NULL;
        _cleanup_free_ char *needle = util_strprintf("\"sessionId\":\"%s\"", id);
        int n = 0;

        if (fixture_read(qwen, "usage_record.jsonl", &buf, NULL) < 0)
                return 0;
        for (char *l = buf; l && *l;) {
                char *nl = strchr(l, '\n');
                if (nl)
                        *nl = 0;
                if (strstr(l, needle))
                        n++;
                l = nl ? nl + 1 : NULL;
        }
        free(buf);
        return n;
}

/* Qwen's own salvage record for a transcript from golden/salvage.jsonl, plus '\n'. */
static inline char *apply_golden_record(const char *id) {
        char *buf = NULL, *ret = NULL;
        _cleanup_free_ char *needle =
                util_strprintf("\"record\":{\"version\":1,\"sessionId\":\"%s\"", id);
        const char *dir = fixture_testdata("corpus/golden");

        if (fixture_read(dir, "salvage.jsonl", &buf, NULL) < 0)
                return NULL;
        char *p = strstr(buf, needle);
        if (p) {
                char *start = p + strlen("\"record\":");
                char *nl = strchr(start, '\n');
                size_t len = nl ? (size_t)(nl - start) : strlen(start);
                /* drop the enclosing object's closing brace */
                if (len > 0 && start[len - 1] == '}')
                        ret = util_strprintf("%.*s\n", (int)len - 1, start);
        }
        free(buf);
        return ret;
}

/* A pid that is certainly not running: a reaped child's. */
static inline pid_t apply_dead_pid(void) {
        pid_t pid = fork();
        if (pid == 0)
                _exit(0);
        (void)waitpid(pid, NULL, 0);
        return pid;
}

/* Plant a dead runtime claim chats/<id>[.<pid>].runtime.json on this host. */
static inline int apply_plant_dead_claim(const char *qwen, const char *chats, const char *id,
                                         bool with_pid) {
        char host[256] = "localhost";
        pid_t pid = apply_dead_pid();
        (void)gethostname(host, sizeof host - 1);
        _cleanup_free_ char *rel =
                with_pid ? util_strprintf("%s/%s.%d.runtime.json", chats, id, (int)pid)
                         : util_strprintf("%s/%s.runtime.json", chats, id);
        _cleanup_free_ char *body = util_strprintf(
                "{\"schema_version\":1,\"pid\":%d,\"session_id\":\"%s\",\"work_dir\":\"/nowhere\","
                "\"hostname\":\"%s\",\"started_at\":1.5,\"qwen_version\":\"0.24.4\"}\n",
                (int)pid, id, host);
        return fixture_write(qwen, rel, body);
}
