/* test_scan.c: the read-only scan on temporary copies of the corpus tree, with hostile entries;
 * roots resolution; inventory lookup. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "enrich.h"
#include "fixture.h"
#include "inventory.h"
#include "json.h"
#include "json-dialect.h"
#include "json-input.h"
#include "live.h"
#include "macro.h"
#include "owner.h"
#include "owner-test.h"
#include "policy.h"
#include "reason.h"
#include "qwen-store.h"
#include "roots.h"
#include "scan.h"
#include "scan-aggs.h"
#include "util.h"
#include "testskip.h"

/* ids of planted sessions: valid names (32-36 chars of [0-9a-f-]) */
#define ID_SYMLINK "aaaaaaaa-0000-4000-8000-000000000001"
#define ID_FIFO "aaaaaaaa-0000-4000-8000-000000000002"
#define ID_DIR "aaaaaaaa-0000-4000-8000-000000000003"
#define ID_FOREIGN "aaaaaaaa-0000-4000-8000-000000000004"
#define ID_EMPTY "aaaaaaaa-0000-4000-8000-000000000005"
#define ID_HUGE "aaaaaaaa-0000-4000-8000-000000000006"
#define ID_GLUED "aaaaaaaa-0000-4000-8000-000000000007"
#define ID_BADUTF8 "aaaaaaaa-0000-4000-8000-000000000008"
#define ID_MISMATCH "aaaaaaaa-0000-4000-8000-000000000009"
#define ID_NOTJSON "aaaaaaaa-0000-4000-8000-00000000000a"
#define ID_UPPER "AAAAAAAA-0000-4000-8000-00000000000B"
#define ID_LINKED "aaaaaaaa-0000-4000-8000-00000000000c"
#define ID_WORKTREE "aaaaaaaa-0000-4000-8000-00000000000d"
#define ID_MIGRATED "aaaaaaaa-0000-4000-8000-00000000000e"
#define ID_NOCWD "aaaaaaaa-0000-4000-8000-00000000000f"
#define ID_FUTURE "aaaaaaaa-0000-4000-8000-000000000010"
#define ID_ORPHAN_FH "bbbbbbbb-0000-4000-8000-000000000001"
#define ID_ORPHAN_SUB "bbbbbbbb-0000-4000-8000-000000000002"

#define WEBAPP "q/projects/-srv-demo-webapp"
#define CONFLICT_ID "582043e2-0a5b-430d-b2e9-daca37f89f10"

typedef FixtureCorpus Fx;

/* Scan fx->qwen (as --root) into fx->inv. */
static void scan_fx(Fx *fx) {
        assert_int_equal(fixture_corpus_scan(fx, 0), 0);
}

static const Session *find(const Fx *fx, const char *id) {
        const Session *s = inventory_find(fx->inv, 0, id);
        if (!s)
                print_error("session %s not found\n", id);
        assert_non_null(s);
        return s;
}

/* The owner reason of s as the plan shows it (reason.h), NULL when no check ran; valid until
 * the next call. */
static const char *owner_text(const Session *s) {
        static char *last = NULL;

        free(last);
        last = NULL;
        assert_int_equal(reason_owner(s, &last), 0);
        return last;
}

/* Hash of cwd from golden/paths.tsv (Qwen's own getProjectHash), or NULL. */
static char *golden_hash(const char *cwd) {
        _cleanup_free_ char *data = NULL;
        char *line, *save = NULL;

        assert_int_equal(fixture_read(fixture_testdata("corpus/golden"), "paths.tsv", &data, NULL),
                         0);
        for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                size_t n = strlen(cwd);
                char *tab;
                if (line[0] != '"' || !strneq(line + 1, cwd, n) || !strneq(line + 1 + n, "\"\t", 2))
                        continue;
                tab = strrchr(line, '\t');
                return tab ? strdup(tab + 1) : NULL;
        }
        return NULL;
}

/* A pid that certainly is not running now. */
static pid_t dead_pid(void) {
        pid_t p = fork();

        assert_true(p >= 0);
        if (p == 0)
                _exit(0);
        assert_int_equal(waitpid(p, NULL, 0), p);
        return p;
}

static void own_proc_start(char *buf, size_t n) {
        _cleanup_free_ char *boot = NULL;
        uint64_t ticks = 0;

        assert_int_equal(fixture_read("/proc/sys/kernel/random", "boot_id", &boot, NULL), 0);
        boot[strcspn(boot, "\n")] = 0;
        assert_int_equal(live_pid_start(getpid(), &ticks), 1);
        (void)snprintf(buf, n, "%s:%" PRIu64, boot, ticks);
}

static uint64_t own_pidns(void) {
        struct stat st;
        assert_int_equal(stat("/proc/self/ns/pid", &st), 0);
        return (uint64_t)st.st_ino;
}

static const char *own_hostname(void) {
        static char h[HOST_NAME_MAX + 1];
        assert_int_equal(gethostname(h, sizeof(h) - 1), 0);
        return h;
}

/* Rewrite the corpus runtime claims to name this host and a dead pid, so that the test does not
 * depend on the machine's hostname matching the corpus's ("vm"). */
static void claims_dead_here(Fx *fx) {
        static const char *const ids[] = { "6dcfb8c0-951c-475b-9ca1-0d8837bead38",
                                           "df25afd1-db41-477e-87bb-98d273af1115" };
        static const char *const cwds[] = { "/srv/demo/my.notes", "/srv/demo/my-notes" };

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                _cleanup_free_ char *rel = util_strprintf(
                        "q/projects/-srv-demo-my-notes/chats/%s.runtime.json", ids[i]);
                _cleanup_free_ char *json = util_strprintf(
                        "{\"schema_version\":1,\"pid\":%d,\"session_id\":\"%s\","
                        "\"work_dir\":\"%s\",\"hostname\":\"%s\",\"started_at\":1796010821.8}",
                        (int)dead_pid(), ids[i], cwds[i], own_hostname());
                assert_int_equal(fixture_write(fx->root, rel, json), 0);
        }
}

/* ------------------------------------------------------------------ corpus */

static const struct {
        const char *id, *cwd, *project;
        SessionState state;
} corpus_sessions[] = {
        { "aefd2a51-f2fc-4eed-a29c-91292bb022bf", "/srv/demo/webapp", "-srv-demo-webapp",
          SESSION_ACTIVE },
        { "dd3dc65a-7d32-4843-a56c-9eef3a13391d", "/srv/demo/webapp", "-srv-demo-webapp",
          SESSION_ACTIVE },
        { "c7bab6d3-4d35-4ebb-b856-81c884008a1e", "/srv/demo/webapp", "-srv-demo-webapp",
          SESSION_ACTIVE },
        { "6fae7d01-a2f7-4d92-839b-10504c3c7925", "/srv/demo/api-server", "-srv-demo-api-server",
          SESSION_ACTIVE },
        { "47406782-cafc-46f6-a948-02f7b5b53f92", "/srv/demo/api-server", "-srv-demo-api-server",
          SESSION_ACTIVE },
        { "8a7ded31-31b8-46e9-b4e0-9e1af37c0d0d", "/srv/demo/api-server", "-srv-demo-api-server",
          SESSION_ACTIVE },
        { "122b1556-a4f5-48b6-9bf1-eae6bac23f87", "/srv/demo/api-server", "-srv-demo-api-server",
          SESSION_ACTIVE },
        { "be0b1e35-4600-44b4-aba9-84b6d4d12748", "/srv/demo/my.notes", "-srv-demo-my-notes",
          SESSION_ACTIVE },
        { "df25afd1-db41-477e-87bb-98d273af1115", "/srv/demo/my-notes", "-srv-demo-my-notes",
          SESSION_ACTIVE },
        { "6dcfb8c0-951c-475b-9ca1-0d8837bead38", "/srv/demo/my.notes", "-srv-demo-my-notes",
          SESSION_ACTIVE },
        { "582043e2-0a5b-430d-b2e9-daca37f89f10", "/srv/demo/scratch", "-srv-demo-scratch",
          SESSION_ACTIVE },
        { "1a914264-8e49-442e-bc79-1cb2de9eae0c", "/srv/demo/scratch", "-srv-demo-scratch",
          SESSION_ARCHIVED },
};

static void test_scan_corpus_every_session_owned(void **state) {
        Fx *fx = *state;

        claims_dead_here(fx);
        scan_fx(fx);
        assert_int_equal(fx->inv->n_sessions, ELEMENTSOF(corpus_sessions));
        for (size_t i = 0; i < ELEMENTSOF(corpus_sessions); i++) {
                const Session *s = find(fx, corpus_sessions[i].id);
                _cleanup_free_ char *hash = golden_hash(corpus_sessions[i].cwd);

                print_message("  %s %s %s\n", s->id, inventory_owner_status_to_string(s->owner),
                              owner_text(s) ?: "");
                assert_int_equal(s->owner, OWNER_OK);
                assert_int_equal(s->state, corpus_sessions[i].state);
                assert_string_equal(s->project_dir, corpus_sessions[i].project);
                assert_non_null(s->cwd);
                assert_string_equal(s->cwd, corpus_sessions[i].cwd);
                assert_non_null(hash);
                assert_string_equal(s->hash, hash);
                assert_true(s->transcript_bytes > 0);
                assert_true(s->bytes >= s->transcript_bytes);
                assert_true(s->bytes_alloc > 0);
                assert_true(s->mtime > 0);
                assert_true(s->first_record > 0);
                assert_true(s->last_record >= s->first_record);
                assert_true(s->last_activity >= s->last_record);
                assert_true(s->last_write >= s->mtime);
                assert_false(s->empty);
                if (corpus_sessions[i].state == SESSION_ARCHIVED) {
                        assert_true(s->archived.present);
                        assert_false(s->active.present);
                } else {
                        assert_true(s->active.present);
                        assert_false(s->archived.present);
                }
                /* stale registry record (other boot) and claims with dead pids: not live */
                if (s->live != 0)
                        print_error("%s live: %s\n", s->id, s->live_reason);
                assert_int_equal(s->live, 0);
        }
        assert_int_equal(fx->inv->n_orphans, 0);
}

static void test_scan_corpus_collision_two_hashes(void **state) {
        Fx *fx = *state;
        const Session *a, *b;

        scan_fx(fx);
        a = find(fx, "df25afd1-db41-477e-87bb-98d273af1115"); /* my-notes */
        b = find(fx, "be0b1e35-4600-44b4-aba9-84b6d4d12748"); /* my.notes */
        assert_string_equal(a->project_dir, b->project_dir);
        assert_string_not_equal(a->hash, b->hash);
        assert_int_equal(a->owner, OWNER_OK);
        assert_int_equal(b->owner, OWNER_OK);
}

static void test_scan_corpus_sizes_include_sidecars(void **state) {
        Fx *fx = *state;
        const Session *s;
        struct stat st;
        _cleanup_free_ char *p = NULL;

        scan_fx(fx);
        /* df25afd1: transcript + runtime claim + file-history/<id>/ (3 backups) */
        s = find(fx, "df25afd1-db41-477e-87bb-98d273af1115");
        p = fixture_path(fx->qwen,
                         "projects/-srv-demo-my-notes/chats/df25afd1-db41-477e-87bb-98d273af1115.jsonl");
        assert_int_equal(lstat(p, &st), 0);
        assert_int_equal(s->transcript_bytes, (uint64_t)st.st_size);
        assert_int_equal(s->active.size, (uint64_t)st.st_size);
        assert_int_equal(s->active.ino, st.st_ino);
        /* 212 claim + 15 + 12 + backups of the third file */
        assert_true(s->bytes >= s->transcript_bytes + 212 + 15 + 12);
        /* dd3dc65a: subagents/<id>/ counted, and it is newer-or-equal than the transcript */
        s = find(fx, "dd3dc65a-7d32-4843-a56c-9eef3a13391d");
        assert_true(s->bytes > s->transcript_bytes);
}

static void test_scan_corpus_scheduled_task_unbound(void **state) {
        Fx *fx = *state;

        scan_fx(fx);
        /* the corpus task has no sessionId: bound to nobody */
        assert_int_equal(find(fx, "8a7ded31-31b8-46e9-b4e0-9e1af37c0d0d")->n_tasks, 0);
}

static void test_scan_tasks_bound_by_session_id(void **state) {
        Fx *fx = *state;
        const char *hash = "eaf4e3b21d9e4dffefffe05513fa8b1769d6422c03e7c712252f377e0f53310b";
        _cleanup_free_ char *rel = util_strprintf("q/tmp/%s/scheduled_tasks.json", hash);

        assert_int_equal(fixture_write(fx->root, rel,
                                       "[{\"id\":\"a\",\"cron\":\"* * * * *\",\"prompt\":\"x\","
                                       "\"recurring\":true,\"createdAt\":1,\"lastFiredAt\":null,"
                                       "\"sessionId\":\"6FAE7D01-A2F7-4D92-839B-10504C3C7925\"},"
                                       "{\"id\":\"b\",\"sessionId\":\"6fae7d01-a2f7-4d92-839b-"
                                       "10504c3c7925\"},{\"id\":\"c\"}]"),
                         0);
        scan_fx(fx);
        assert_int_equal(find(fx, "6fae7d01-a2f7-4d92-839b-10504c3c7925")->n_tasks, 2);
        assert_int_equal(find(fx, "47406782-cafc-46f6-a948-02f7b5b53f92")->n_tasks, 0);

        /* a malformed file binds every session of the hash (fail closed) */
        assert_int_equal(fixture_write(fx->root, rel, "[{\"id\":"), 0);
        scan_fx(fx);
        assert_int_equal(find(fx, "47406782-cafc-46f6-a948-02f7b5b53f92")->n_tasks, 1);
        assert_int_equal(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->n_tasks, 0);
}

static void test_scan_organisation_pinned_grouped(void **state) {
        Fx *fx = *state;

        assert_int_equal(
                fixture_write(fx->root, WEBAPP "/session-organization.v1.json",
                              "{\"schemaVersion\":1,\"groups\":[],\"sessions\":{"
                              "\"aefd2a51-f2fc-4eed-a29c-91292bb022bf\":{\"groupId\":null,"
                              "\"pinnedAt\":1796010000000,\"updatedAt\":1},"
                              "\"c7bab6d3-4d35-4ebb-b856-81c884008a1e\":{\"groupId\":\"g1\","
                              "\"updatedAt\":1},"
                              "\"dd3dc65a-7d32-4843-a56c-9eef3a13391d\":{\"groupId\":null,"
                              "\"color\":\"red\",\"pinnedAt\":null,\"updatedAt\":1}}}"),
                0);
        scan_fx(fx);
        assert_true(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->pinned);
        assert_false(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->grouped);
        assert_false(find(fx, "c7bab6d3-4d35-4ebb-b856-81c884008a1e")->pinned);
        assert_true(find(fx, "c7bab6d3-4d35-4ebb-b856-81c884008a1e")->grouped);
        assert_false(find(fx, "dd3dc65a-7d32-4843-a56c-9eef3a13391d")->pinned);
        assert_true(find(fx, "dd3dc65a-7d32-4843-a56c-9eef3a13391d")->grouped);
        assert_false(find(fx, "6fae7d01-a2f7-4d92-839b-10504c3c7925")->pinned);
        assert_false(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->org_unreadable);

        /* json-c read this (a value, then more text); JSON.parse does not: Qwen shows no pin,
         * but the pins the person set may be in it, so every session of the project counts as
         * pinned (pins unknown) */
        assert_int_equal(
                fixture_write(fx->root, WEBAPP "/session-organization.v1.json",
                              "{\"schemaVersion\":1,\"groups\":[],\"sessions\":{"
                              "\"aefd2a51-f2fc-4eed-a29c-91292bb022bf\":{\"groupId\":null,"
                              "\"pinnedAt\":1796010000000,\"updatedAt\":1}}} x"),
                0);
        scan_fx(fx);
        assert_false(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->pinned);
        assert_true(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->org_unreadable);
        assert_true(find(fx, "c7bab6d3-4d35-4ebb-b856-81c884008a1e")->org_unreadable);
        /* another project's sessions are not affected */
        assert_false(find(fx, "6fae7d01-a2f7-4d92-839b-10504c3c7925")->org_unreadable);
}

static void test_scan_worktree_sidecar_live(void **state) {
        Fx *fx = *state;
        _cleanup_free_ char *wt = fixture_path(fx->root, "wt");
        _cleanup_free_ char *json = util_strprintf("{\"slug\":\"x\",\"worktreePath\":\"%s\"}", wt);
        const Session *s;
        uint64_t before;

        scan_fx(fx);
        before = find(fx, "c7bab6d3-4d35-4ebb-b856-81c884008a1e")->bytes;
        assert_int_equal(fixture_write(fx->root,
                                       WEBAPP "/chats/c7bab6d3-4d35-4ebb-b856-81c884008a1e"
                                              ".worktree.json",
                                       json),
                         0);
        assert_int_equal(fixture_write(fx->root,
                                       WEBAPP "/chats/aefd2a51-f2fc-4eed-a29c-91292bb022bf"
                                              ".worktree.json",
                                       "{\"worktreePath\":\"/nonexistent/qgc/wt\"}"),
                         0);
        scan_fx(fx);
        s = find(fx, "c7bab6d3-4d35-4ebb-b856-81c884008a1e");
        assert_false(s->live_worktree); /* the directory does not exist yet */
        assert_int_equal(s->bytes, before + strlen(json));
        assert_int_equal(fixture_mkdir(fx->root, "wt"), 0);
        scan_fx(fx);
        assert_true(find(fx, "c7bab6d3-4d35-4ebb-b856-81c884008a1e")->live_worktree);
        assert_false(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->live_worktree);

        /* a sidecar that does not parse (json-c read this one) cannot prove that no worktree is
         * in use: the session counts as having one */
        assert_int_equal(fixture_write(fx->root,
                                       WEBAPP "/chats/aefd2a51-f2fc-4eed-a29c-91292bb022bf"
                                              ".worktree.json",
                                       "{\"worktreePath\":\"/nonexistent/qgc/wt\"} x"),
                         0);
        scan_fx(fx);
        assert_true(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->live_worktree);
}

static void test_scan_dry_run_keeps_atimes(void **state) {
        Fx *fx = *state;
        _cleanup_free_ char *before = NULL, *after = NULL;
        const time_t old = 1000000000; /* 2001: relatime would update it on any read */

        for (size_t i = 0; i < ELEMENTSOF(corpus_sessions); i++) {
                _cleanup_free_ char *rel = util_strprintf(
                        "q/projects/%s/chats/%s%s.jsonl", corpus_sessions[i].project,
                        corpus_sessions[i].state == SESSION_ARCHIVED ? "archive/" : "",
                        corpus_sessions[i].id);
                assert_int_equal(fixture_set_times(fx->root, rel, old, -1), 0);
        }
        assert_int_equal(fixture_set_times(fx->root, "q/projects", old, -1), 0);
        assert_int_equal(fixture_set_times(fx->root, WEBAPP "/chats", old, -1), 0);
        assert_int_equal(fixture_snapshot_full(fx->root, "q", &before), 0);
        scan_fx(fx);
        assert_int_equal(fixture_snapshot_full(fx->root, "q", &after), 0);
        assert_string_equal(before, after);
}

/* ------------------------------------------------------------------ hostile entries */

static void write_record(Fx *fx, const char *rel, const char *id, const char *cwd) {
        _cleanup_free_ char *json = util_strprintf(
                "{\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"%s\","
                "\"timestamp\":\"2026-11-01T10:00:00.000Z\",\"type\":\"user\",\"cwd\":\"%s\","
                "\"version\":\"0.24.4\"}\n"
                "{\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"sessionId\":\"%s\","
                "\"timestamp\":\"2026-11-01T10:05:00.000Z\",\"type\":\"assistant\",\"cwd\":\"%s\"}"
                "\n",
                id, cwd, id, cwd);
        assert_int_equal(fixture_write(fx->root, rel, json), 0);
}

static void plant_hostile(Fx *fx) {
        _cleanup_free_ char *outside = fixture_path(fx->root, "outside.jsonl");
        _cleanup_free_ char *elsewhere = fixture_path(fx->root, "elsewhere");
        _cleanup_free_ char *huge = NULL, *claim = NULL;
        size_t huge_len = 2 * 1024 * 1024; /* well past the 1 MiB a head read accepts */

        write_record(fx, "outside.jsonl", ID_SYMLINK, "/srv/demo/webapp");
        assert_int_equal(fixture_symlink(fx->root, WEBAPP "/chats/" ID_SYMLINK ".jsonl", outside),
                         0);
        assert_int_equal(fixture_mkfifo(fx->root, WEBAPP "/chats/" ID_FIFO ".jsonl"), 0);
        assert_int_equal(fixture_mkdir(fx->root, WEBAPP "/chats/" ID_DIR ".jsonl"), 0);
        write_record(fx, WEBAPP "/chats/" ID_FOREIGN ".jsonl", ID_FOREIGN, "/srv/demo/api-server");
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_EMPTY ".jsonl", ""), 0);

        huge = malloc(huge_len + 1);
        assert_non_null(huge);
        memset(huge, 'x', huge_len);
        {
                const char *start = "{\"sessionId\":\"" ID_HUGE "\",\"cwd\":\"/srv/demo/webapp\",\"t\":\"";
                memcpy(huge, start, strlen(start));
        }
        huge[huge_len - 3] = '"';
        huge[huge_len - 2] = '}';
        huge[huge_len - 1] = '\n';
        huge[huge_len] = 0;
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_HUGE ".jsonl", huge), 0);

        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_GLUED ".jsonl",
                                       "{\"sessionId\":\"" ID_GLUED "\",\"cwd\":\"/srv/demo/webapp\","
                                       "\"timestamp\":\"2026-11-01T10:00:00.000Z\"}{\"sessionId\":"
                                       "\"" ID_GLUED "\",\"timestamp\":\"2026-11-01T11:00:00.000Z\"}\n"),
                         0);
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_BADUTF8 ".jsonl",
                                       "{\"sessionId\":\"" ID_BADUTF8 "\",\"cwd\":\"/srv/demo/webapp\","
                                       "\"message\":\"bad \xff\xfe\xc3 bytes\","
                                       "\"timestamp\":\"2026-11-01T10:00:00.000Z\"}\n"),
                         0);
        write_record(fx, WEBAPP "/chats/" ID_MISMATCH ".jsonl", ID_FOREIGN, "/srv/demo/webapp");
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_NOTJSON ".jsonl",
                                       "hello world\n"),
                         0);
        write_record(fx, WEBAPP "/chats/" ID_UPPER ".jsonl", "aaaaaaaa-0000-4000-8000-00000000000b",
                     "/srv/demo/webapp");
        write_record(fx, WEBAPP "/chats/" ID_WORKTREE ".jsonl", ID_WORKTREE,
                     "/srv/demo/webapp/.qwen/worktrees/feature-x");
        write_record(fx, WEBAPP "/chats/" ID_MIGRATED ".jsonl", ID_MIGRATED, "/srv/demo/old-place");
        claim = util_strprintf("{\"schema_version\":1,\"pid\":%d,\"session_id\":\"%s\","
                               "\"work_dir\":\"/srv/demo/webapp\",\"hostname\":\"%s\"}",
                               (int)dead_pid(), ID_MIGRATED, own_hostname());
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_MIGRATED ".4242.runtime.json",
                                       claim),
                         0);
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_NOCWD ".jsonl",
                                       "{\"sessionId\":\"" ID_NOCWD "\",\"cwd\":42}\n"),
                         0);
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/" ID_FUTURE ".jsonl",
                                       "{\"sessionId\":\"" ID_FUTURE "\",\"cwd\":\"/srv/demo/webapp\","
                                       "\"timestamp\":\"2099-01-01T00:00:00.000Z\"}"),
                         0);

        /* a chats/ that is a symlink to a directory outside the tree */
        write_record(fx, "elsewhere/" ID_LINKED ".jsonl", ID_LINKED, "/srv/demo/linked");
        assert_int_equal(fixture_mkdir(fx->root, "q/projects/-srv-demo-linked"), 0);
        assert_int_equal(fixture_symlink(fx->root, "q/projects/-srv-demo-linked/chats", elsewhere),
                         0);

        /* the same session in chats/ and chats/archive/ */
        assert_int_equal(fixture_copy_tree(fixture_testdata("corpus/tree/projects/-srv-demo-scratch"),
                                           fx->root, "copy"),
                         0);
        {
                _cleanup_free_ char *content = NULL;
                size_t len = 0;
                assert_int_equal(fixture_read(fx->root, "copy/chats/" CONFLICT_ID ".jsonl",
                                              &content, &len),
                                 0);
                assert_int_equal(fixture_write_bytes(fx->root,
                                                     "q/projects/-srv-demo-scratch/chats/archive/" CONFLICT_ID
                                                     ".jsonl",
                                                     content, len),
                                 0);
        }
}

static const struct {
        const char *id;
        OwnerStatus owner;
        const char *reason; /* substring of owner_reason */
} hostile_cases[] = {
        { ID_SYMLINK, OWNER_UNVERIFIED, "not a regular file (symlink)" },
        { ID_FIFO, OWNER_UNVERIFIED, "not a regular file (fifo)" },
        { ID_DIR, OWNER_UNVERIFIED, "not a regular file (directory)" },
        { ID_FOREIGN, OWNER_FOREIGN, "-srv-demo-api-server" },
        { ID_EMPTY, OWNER_UNVERIFIED, "" },
        { ID_HUGE, OWNER_UNVERIFIED, "1 MiB" },
        { ID_GLUED, OWNER_OK, "" },
        { ID_BADUTF8, OWNER_OK, "" },
        { ID_MISMATCH, OWNER_UNVERIFIED, "sessionId" },
        { ID_NOTJSON, OWNER_UNVERIFIED, "" },
        { ID_UPPER, OWNER_OK, "" },
        { ID_WORKTREE, OWNER_WORKTREE, "/srv/demo/webapp" },
        { ID_MIGRATED, OWNER_CLAIM, "runtime claim" },
        { ID_NOCWD, OWNER_UNVERIFIED, "cwd" },
        { ID_FUTURE, OWNER_OK, "" },
};

static void test_scan_hostile_entries_reasons(void **state) {
        Fx *fx = *state;

        plant_hostile(fx);
        scan_fx(fx);
        for (size_t i = 0; i < ELEMENTSOF(hostile_cases); i++) {
                const Session *s = find(fx, hostile_cases[i].id);
                print_message("  %s %s: %s\n", s->id, inventory_owner_status_to_string(s->owner),
                              owner_text(s) ?: "(null)");
                assert_int_equal(s->owner, hostile_cases[i].owner);
                assert_non_null(owner_text(s));
                assert_non_null(strstr(owner_text(s), hostile_cases[i].reason));
                assert_string_equal(s->project_dir, "-srv-demo-webapp");
        }
        /* the transcript name keeps its case; lookups ignore it */
        assert_string_equal(find(fx, ID_UPPER)->id, ID_UPPER);
        /* cwd and hash are set whenever the first record had a cwd */
        assert_string_equal(find(fx, ID_FOREIGN)->cwd, "/srv/demo/api-server");
        assert_string_equal(find(fx, ID_FOREIGN)->hash,
                            "eaf4e3b21d9e4dffefffe05513fa8b1769d6422c03e7c712252f377e0f53310b");
        assert_string_equal(find(fx, ID_MIGRATED)->cwd, "/srv/demo/old-place");
        assert_null(find(fx, ID_NOCWD)->cwd);
        assert_null(find(fx, ID_NOCWD)->hash);
        /* the 0-byte transcript */
        assert_true(find(fx, ID_EMPTY)->empty);
        assert_true(find(fx, ID_EMPTY)->active.present);
        assert_int_equal(find(fx, ID_EMPTY)->transcript_bytes, 0);
        /* glued records: the last one's timestamp is the last record */
        assert_true(find(fx, ID_GLUED)->last_record > find(fx, ID_GLUED)->first_record);
        /* a claim with a dead pid proves ownership but not liveness */
        assert_int_equal(find(fx, ID_MIGRATED)->live, 0);
        /* the symlink's target is not read: no cwd */
        assert_null(find(fx, ID_SYMLINK)->cwd);
        assert_int_equal(find(fx, ID_SYMLINK)->transcript_bytes, 0);
        /* no newline at the end, timestamp in the future */
        assert_true(find(fx, ID_FUTURE)->tail_incomplete);
        assert_true(find(fx, ID_FUTURE)->future_clamped);
        assert_true(find(fx, ID_FUTURE)->last_activity <= util_now_msec());
        assert_false(find(fx, ID_GLUED)->tail_incomplete);
}

static void test_scan_hostile_symlinked_chats_not_followed(void **state) {
        Fx *fx = *state;

        plant_hostile(fx);
        scan_fx(fx);
        assert_null(inventory_find(fx->inv, 0, ID_LINKED));
        for (size_t i = 0; i < fx->inv->n_orphans; i++)
                assert_string_not_equal(fx->inv->orphans[i].name, "-srv-demo-linked");
}

static void test_scan_conflict_both_copies(void **state) {
        Fx *fx = *state;
        const Session *s;

        plant_hostile(fx);
        scan_fx(fx);
        s = find(fx, CONFLICT_ID);
        assert_int_equal(s->state, SESSION_CONFLICT);
        assert_true(s->active.present);
        assert_true(s->archived.present);
        assert_int_equal(s->transcript_bytes, s->active.size + s->archived.size);
        /* still exactly one record for the id */
        for (size_t i = 0, n = 0; i < fx->inv->n_sessions; i++)
                if (strcasecmp(fx->inv->sessions[i].id, CONFLICT_ID) == 0)
                        assert_int_equal(++n, 1);
}

/* ------------------------------------------------------------------ orphans */

static void test_scan_orphans(void **state) {
        Fx *fx = *state;
        bool seen[4] = {};

        assert_int_equal(fixture_write_size(fx->root, "q/file-history/" ID_ORPHAN_FH "/abc@v1", 100),
                         0);
        /* a file-history dir of an archived session and an upper-case twin: not orphans */
        assert_int_equal(fixture_write_size(fx->root,
                                            "q/file-history/1a914264-8e49-442e-bc79-1cb2de9eae0c/x@v1",
                                            10),
                         0);
        assert_int_equal(fixture_write_size(fx->root,
                                            "q/file-history/BE0B1E35-4600-44B4-ABA9-84B6D4D12748/x",
                                            10),
                         0);
        assert_int_equal(fixture_write_size(fx->root,
                                            "q/file-history/DF25AFD1-DB41-477E-87BB-98D273AF1115/x",
                                            10),
                         0);
        assert_int_equal(fixture_write_size(fx->root,
                                            WEBAPP "/subagents/" ID_ORPHAN_SUB "/agent-1.jsonl",
                                            300),
                         0);
        assert_int_equal(fixture_mkdir(fx->root, "q/projects/-srv-demo-gone"), 0);
        assert_int_equal(fixture_mkdir(fx->root, "q/projects/-srv-demo-gone2/chats/archive"), 0);
        assert_int_equal(fixture_write(fx->root, "q/projects/-srv-demo-kept/chats/notes.txt", "x"),
                         0);
        assert_int_equal(fixture_write(fx->root, "q/projects/-srv-demo-kept2/meta.json", "{}"), 0);
        scan_fx(fx);

        for (size_t i = 0; i < fx->inv->n_orphans; i++) {
                const Orphan *o = &fx->inv->orphans[i];
                print_message("  orphan %s %s %s %" PRIu64 "\n", inventory_orphan_kind_to_string(o->kind),
                              o->project_dir ? o->project_dir : "-", o->name, o->bytes);
                assert_true(o->dir.present);
                if (o->kind == ORPHAN_FILE_HISTORY) {
                        assert_string_equal(o->name, ID_ORPHAN_FH);
                        assert_null(o->project_dir);
                        assert_true(o->bytes >= 100);
                        assert_true(o->mtime > 0);
                        seen[0] = true;
                } else if (o->kind == ORPHAN_SUBAGENTS) {
                        assert_string_equal(o->name, ID_ORPHAN_SUB);
                        assert_string_equal(o->project_dir, "-srv-demo-webapp");
                        assert_true(o->bytes >= 300);
                        seen[1] = true;
                } else {
                        assert_int_equal(o->kind, ORPHAN_EMPTY_PROJECT);
                        if (streq(o->name, "-srv-demo-gone"))
                                seen[2] = true;
                        else if (streq(o->name, "-srv-demo-gone2"))
                                seen[3] = true;
                        else
                                fail_msg("unexpected empty project %s", o->name);
                }
        }
        assert_int_equal(fx->inv->n_orphans, 4);
        for (size_t i = 0; i < ELEMENTSOF(seen); i++)
                assert_true(seen[i]);
}

/* A directory named "unreadable" cannot be opened (ld --wrap=fs_open_noatime): the scan runs as
 * root in the tests, which a mode of 000 does not stop. */
int __real_fs_open_noatime(int dfd, const char *name, int flags);
int __wrap_fs_open_noatime(int dfd, const char *name, int flags);
int __wrap_fs_open_noatime(int dfd, const char *name, int flags) {
        if (streq(name, "unreadable"))
                return -EACCES;
        return __real_fs_open_noatime(dfd, name, flags);
}

#define ID_ORPHAN_DEEP "bbbbbbbb-0000-4000-8000-000000000003"
#define ID_ORPHAN_UNREAD "bbbbbbbb-0000-4000-8000-000000000004"

/* file-history/<id>/ or subagents/<id>/ not listed in full (deeper than SCAN_AGGS_DEPTH_MAX, a
 * directory inside that cannot be opened) is no orphan: its bytes and mtime are not known, and a
 * removal would take what the scan never saw. One listed in full beside them still is. */
static void test_scan_orphans_incomplete_kept(void **state) {
        Fx *fx = *state;
        char deep[64 + (SCAN_AGGS_DEPTH_MAX + 2) * 2] = "";
        _cleanup_free_ char *fh = NULL, *sub = NULL;

        for (unsigned i = 0; i < SCAN_AGGS_DEPTH_MAX + 1; i++)
                strcat(deep, "d/");
        strcat(deep, "x@v1");
        fh = util_strprintf("q/file-history/" ID_ORPHAN_DEEP "/%s", deep);
        sub = util_strprintf(WEBAPP "/subagents/" ID_ORPHAN_DEEP "/%s", deep);
        assert_int_equal(fixture_write_size(fx->root, fh, 10), 0);
        assert_int_equal(fixture_write_size(fx->root, sub, 10), 0);
        assert_int_equal(fixture_write_size(fx->root,
                                            "q/file-history/" ID_ORPHAN_UNREAD "/unreadable/x@v1", 10),
                         0);
        assert_int_equal(fixture_write_size(fx->root,
                                            WEBAPP "/subagents/" ID_ORPHAN_UNREAD "/unreadable/a.jsonl",
                                            10),
                         0);
        assert_int_equal(fixture_write_size(fx->root, "q/file-history/" ID_ORPHAN_FH "/abc@v1", 100),
                         0);
        scan_fx(fx);

        for (size_t i = 0; i < fx->inv->n_orphans; i++)
                print_message("  orphan %s %s %s\n",
                              inventory_orphan_kind_to_string(fx->inv->orphans[i].kind),
                              fx->inv->orphans[i].project_dir ?: "-", fx->inv->orphans[i].name);
        assert_int_equal(fx->inv->n_orphans, 1);
        assert_int_equal(fx->inv->orphans[0].kind, ORPHAN_FILE_HISTORY);
        assert_string_equal(fx->inv->orphans[0].name, ID_ORPHAN_FH);
}

/* Several directories of one id (file-history/ and a project's subagents/, the case aside):
 * every one is an orphan when no transcript has the id, none when one has. */
static void test_scan_orphans_shared_id(void **state) {
        Fx *fx = *state;
        size_t n_fh = 0, n_sub = 0;

        assert_int_equal(fixture_write_size(fx->root, "q/file-history/" ID_ORPHAN_FH "/a", 10), 0);
        assert_int_equal(fixture_write_size(fx->root,
                                            WEBAPP "/subagents/BBBBBBBB-0000-4000-8000-000000000001/x.jsonl",
                                            10),
                         0);
        assert_int_equal(fixture_write_size(fx->root, WEBAPP "/subagents/" ID_ORPHAN_FH "/y.jsonl", 10),
                         0);
        /* an archived session's id, in both places and in upper case: no orphan */
        assert_int_equal(fixture_write_size(fx->root,
                                            "q/file-history/1A914264-8E49-442E-BC79-1CB2DE9EAE0C/x",
                                            10),
                         0);
        assert_int_equal(fixture_write_size(fx->root,
                                            WEBAPP "/subagents/1a914264-8e49-442e-bc79-1cb2de9eae0c/z.jsonl",
                                            10),
                         0);
        scan_fx(fx);

        for (size_t i = 0; i < fx->inv->n_orphans; i++) {
                const Orphan *o = &fx->inv->orphans[i];

                if (o->kind == ORPHAN_EMPTY_PROJECT)
                        continue;
                assert_true(strcasecmp(o->name, ID_ORPHAN_FH) == 0);
                if (o->kind == ORPHAN_FILE_HISTORY)
                        n_fh++;
                else if (o->kind == ORPHAN_SUBAGENTS)
                        n_sub++;
        }
        assert_int_equal(n_fh, 1);
        assert_int_equal(n_sub, 2);
}

/* The scan's threads change nothing: the same inventory, in the same order, with 1 and 4 jobs
 * over a tree of many projects (hostile entries, orphans and empty projects included). */
static void scan_fx_jobs(Fx *fx, unsigned jobs, Inventory **ret) {
        ScanOptions o = { .now = INT64_C(1796083200000), .jobs = jobs };
        Tree t = {};

        assert_int_equal(inventory_new(ret), 0);
        assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t), 0);
        assert_int_equal(inventory_add_tree(*ret, &t, NULL), 0);
        assert_int_equal(scan_all(*ret, &o), 0);
}

static bool same_str(const char *a, const char *b) {
        return (!a && !b) || (a && b && streq(a, b));
}

static void assert_same_inventory(const Inventory *a, const Inventory *b) {
        assert_int_equal(a->n_sessions, b->n_sessions);
        for (size_t i = 0; i < a->n_sessions; i++) {
                const Session *x = &a->sessions[i], *y = &b->sessions[i];
                assert_string_equal(x->id, y->id);
                assert_true(same_str(x->project_dir, y->project_dir));
                assert_true(same_str(x->cwd, y->cwd));
                assert_int_equal(x->owner_cause, y->owner_cause);
                assert_true(same_str(x->owner_detail, y->owner_detail));
                assert_true(same_str(x->owner_dir, y->owner_dir));
                assert_true(same_str(x->title, y->title));
                assert_int_equal(x->owner, y->owner);
                assert_int_equal(x->state, y->state);
                assert_int_equal(x->bytes, y->bytes);
                assert_int_equal(x->first_record, y->first_record);
                assert_int_equal(x->last_record, y->last_record);
                assert_int_equal(x->live, y->live);
        }
        assert_int_equal(a->n_orphans, b->n_orphans);
        for (size_t i = 0; i < a->n_orphans; i++) {
                assert_int_equal(a->orphans[i].kind, b->orphans[i].kind);
                assert_string_equal(a->orphans[i].name, b->orphans[i].name);
                assert_true(same_str(a->orphans[i].project_dir, b->orphans[i].project_dir));
                assert_int_equal(a->orphans[i].bytes, b->orphans[i].bytes);
        }
}

/* Many projects of a few sessions each, some archived, some owned elsewhere. */
static void plant_projects(Fx *fx) {
        plant_hostile(fx);
        for (unsigned p = 0; p < 40; p++)
                for (unsigned k = 0; k < 1 + p % 4; k++) {
                        _cleanup_free_ char *rel =
                                util_strprintf("q/projects/-srv-p%02u/chats/"
                                               "%s00000000-0000-4000-8000-0000000%02u%03u.jsonl",
                                               p, k == 3 ? "archive/" : "", p, k);
                        _cleanup_free_ char *id =
                                util_strprintf("00000000-0000-4000-8000-0000000%02u%03u", p, k);
                        _cleanup_free_ char *cwd = util_strprintf("/srv/p%02u", p);
                        assert_non_null(rel);
                        write_record(fx, rel, id, p % 7 == 3 ? "/elsewhere" : cwd);
                }
        for (unsigned p = 0; p < 5; p++) {
                _cleanup_free_ char *empty = util_strprintf("q/projects/-srv-empty%u/chats", p);
                _cleanup_free_ char *sub =
                        util_strprintf("q/projects/-srv-p%02u/subagents/"
                                       "00000000-0000-4000-8000-99999999900%u/a.jsonl",
                                       p, p);
                assert_int_equal(fixture_mkdir(fx->root, empty), 0);
                assert_int_equal(fixture_write_size(fx->root, sub, 10 + p), 0);
        }
}

static void test_scan_jobs_same_inventory(void **state) {
        Fx *fx = *state;
        _cleanup_(inventory_freep) Inventory *one = NULL, *four = NULL, *again = NULL;
        size_t verified = 0;

        plant_projects(fx);
        scan_fx_jobs(fx, 1, &one);
        scan_fx_jobs(fx, 4, &four);
        scan_fx_jobs(fx, 4, &again);
        assert_true(one->n_sessions > 100);
        assert_true(one->n_orphans >= 10);
        for (size_t i = 0; i < one->n_sessions; i++)
                verified += one->sessions[i].owner == OWNER_OK;
        assert_true(verified > 80);
        assert_same_inventory(one, four);
        assert_same_inventory(one, again);
}

/* ------------------------------------------------------------------ the prefetch (cold cache) */

/* The scan's prefetches, counted through the link (-Wl,--wrap=record_ends_advise): the scan
 * advises the kernel of a transcript's reads with one call each, from any of its threads. */
static unsigned long prefetches;

int __real_record_ends_advise(int fd, uint64_t size, bool want_title);
int __wrap_record_ends_advise(int fd, uint64_t size, bool want_title);
int __wrap_record_ends_advise(int fd, uint64_t size, bool want_title) {
        __atomic_fetch_add(&prefetches, 1, __ATOMIC_RELAXED);
        return __real_record_ends_advise(fd, size, want_title);
}

static unsigned long scan_prefetches(void) {
        return __atomic_load_n(&prefetches, __ATOMIC_RELAXED);
}

/* A page cache that holds nothing, through the link (-Wl,--wrap=preadv2): while cache_cold, every
 * no-wait read answers EAGAIN, so the scan's first read of every transcript finds it cold and
 * each prefetch finds it still to be advised: the scan prefetches ahead of every read, on any
 * cache (the real reads and the real advice follow). Set only while no scan thread runs. */
static bool cache_cold;

ssize_t __real_preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags);
ssize_t __wrap_preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags);
ssize_t __wrap_preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags) {
        if (cache_cold && (flags & RWF_NOWAIT)) {
                errno = EAGAIN;
                return -1;
        }
        return __real_preadv2(fd, iov, n, off, flags);
}

/* A transcript of about size bytes: write_record()'s records, filler, a custom title when
 * title, and a last record with a timestamp. */
static void write_record_sized(Fx *fx, const char *rel, const char *id, size_t size, bool title) {
        _cleanup_(strbuf_done) StrBuf b = {};

        assert_int_equal(strbuf_printf(&b, "{\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"%s\","
                                           "\"timestamp\":\"2026-11-01T10:00:00.000Z\",\"type\":\"user\","
                                           "\"cwd\":\"/srv/big\",\"version\":\"0.24.4\"}\n", id), 0);
        if (title)
                assert_int_equal(strbuf_printf(&b, "{\"type\":\"system\",\"subtype\":\"custom_title\","
                                                   "\"sessionId\":\"%s\",\"systemPayload\":{\"customTitle\":"
                                                   "\"Head %s\"}}\n", id, id), 0);
        while (b.len + 300 < size)
                assert_int_equal(strbuf_printf(&b, "{\"type\":\"user\",\"timestamp\":\"2026-11-01T10:01:00.000Z\","
                                                   "\"message\":\"%0200zu\"}\n", b.len), 0);
        assert_int_equal(strbuf_printf(&b, "{\"uuid\":\"u9\",\"sessionId\":\"%s\","
                                           "\"timestamp\":\"2026-11-02T10:00:00.000Z\",\"type\":\"assistant\"}\n", id), 0);
        assert_int_equal(fixture_write_bytes(fx->root, rel, b.buf, b.len), 0);
}

static int drop_cache_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)st;
        (void)ftw;
        if (type == FTW_F) {
                int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
                if (fd >= 0) {
                        (void)fdatasync(fd);
                        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
                        close(fd);
                }
        }
        return 0;
}

/* Drop the tree's files from the page cache: whether the filesystem let them go is what the
 * scan finds out (a tmpfs keeps them). */
static void drop_cache_tree(Fx *fx) {
        _cleanup_free_ char *q = fixture_path(fx->root, "q");

        assert_non_null(q);
        assert_int_equal(nftw(q, drop_cache_one, 16, FTW_PHYS), 0);
}

static size_t count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        size_t n = 0;

        assert_non_null(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* Scan fx's tree on jobs threads; cold: as if the page cache held none of it (cache_cold). */
static void scan_fx_prefetch(Fx *fx, unsigned jobs, bool cold, const TitleNeed *titles,
                             Inventory **ret) {
        ScanOptions o = { .now = INT64_C(1796083200000), .jobs = jobs, .titles = titles };
        Tree t = {};

        assert_int_equal(inventory_new(ret), 0);
        assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t), 0);
        assert_int_equal(inventory_add_tree(*ret, &t, NULL), 0);
        cache_cold = cold;
        assert_int_equal(scan_all(*ret, &o), 0);
        cache_cold = false;
}

/* The prefetch is advice only: with it for every transcript (a page cache that holds nothing,
 * cache_cold), with none (the warm tree), and where the reads find the page cache cold (after
 * the tree's pages were dropped), the same inventory, with every title, on 1 and 4 threads, and
 * no fd left open. */
static void test_scan_prefetch_same_inventory(void **state) {
        static const TitleNeed need = { .active_idle = 90 * MSEC_PER_DAY,
                                        .archived_idle = MSEC_INFINITY };
        Fx *fx = *state;
        const TitleNeed *const needs[] = { NULL, &need };
        size_t fds = count_fds();
        unsigned long before;

        plant_projects(fx);
        /* transcripts of every size the reads tell apart (a notitle read in one pread up to
         * 16 KiB, a title read in one up to 64 KiB), with and without titles */
        for (unsigned k = 0; k < 24; k++) {
                static const size_t sizes[] = { 100, 3000, 17000, 40000, 70000, 150000 };
                _cleanup_free_ char *id = util_strprintf("00000000-0000-4000-8000-0000001%05u", k);
                _cleanup_free_ char *rel = util_strprintf("q/projects/-srv-big/chats/%s%s.jsonl",
                                                          k % 5 == 4 ? "archive/" : "", id);
                _cleanup_free_ char *path = NULL;
                /* half of them old: the policy could select them, their titles are read */
                const struct timespec old[2] = { { .tv_sec = 1767225600 }, { .tv_sec = 1767225600 } };

                assert_non_null(rel);
                write_record_sized(fx, rel, id, sizes[k % ELEMENTSOF(sizes)], k % 3 == 0);
                path = fixture_path(fx->root, rel);
                assert_non_null(path);
                if (k % 2 == 0)
                        assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
        }
        for (size_t n = 0; n < ELEMENTSOF(needs); n++) {
                _cleanup_(inventory_freep) Inventory *off = NULL, *always = NULL, *four = NULL,
                                                     *cold = NULL;
                size_t titled = 0;

                /* warm (just written, or just read): nothing is advised */
                scan_fx_prefetch(fx, 1, false, needs[n], &off);
                before = scan_prefetches();
                off = inventory_free(off);
                scan_fx_prefetch(fx, 1, false, needs[n], &off);
                assert_int_equal(scan_prefetches(), before);
                scan_fx_prefetch(fx, 1, true, needs[n], &always);
                /* one per regular transcript but each thread's first (the hostile ones are not) */
                assert_true(scan_prefetches() - before > 100);
                before = scan_prefetches();
                scan_fx_prefetch(fx, 4, true, needs[n], &four);
                assert_true(scan_prefetches() - before > 100);
                drop_cache_tree(fx);
                scan_fx_prefetch(fx, 2, false, needs[n], &cold);
                assert_true(off->n_sessions > 120);
                for (size_t i = 0; i < off->n_sessions; i++)
                        titled += off->sessions[i].title != NULL;
                assert_true(titled >= (needs[n] ? 2u : 8u));
                assert_same_inventory(off, always);
                assert_same_inventory(off, four);
                assert_same_inventory(off, cold);
                for (size_t i = 0; i < off->n_sessions; i++) {
                        assert_int_equal(off->sessions[i].title_unread, always->sessions[i].title_unread);
                        assert_int_equal(off->sessions[i].last_activity, always->sessions[i].last_activity);
                        assert_int_equal(off->sessions[i].bytes_alloc, always->sessions[i].bytes_alloc);
                }
        }
        assert_int_equal(count_fds(), fds);
}

/* The default prefetch starts on a cold read: after the tree's pages were dropped, a scan
 * advises (where the filesystem lets pages go: else SKIP), and on the warm tree that follows,
 * it does not. */
static void test_scan_prefetch_starts_on_a_cold_read(void **state) {
        Fx *fx = *state;
        _cleanup_(inventory_freep) Inventory *cold = NULL, *warm = NULL;
        unsigned long before;

        for (unsigned k = 0; k < 40; k++) {
                _cleanup_free_ char *id = util_strprintf("00000000-0000-4000-8000-0000002%05u", k);
                _cleanup_free_ char *rel = util_strprintf("q/projects/-srv-big/chats/%s.jsonl", id);
                assert_non_null(rel);
                write_record_sized(fx, rel, id, 5000 + 1000 * k, false);
        }
        /* warm: the reads find every page, nothing is advised */
        scan_fx_prefetch(fx, 1, false, NULL, &warm);
        before = scan_prefetches();
        warm = inventory_free(warm);
        scan_fx_prefetch(fx, 1, false, NULL, &warm);
        assert_int_equal(scan_prefetches(), before);
        drop_cache_tree(fx);
        {
                _cleanup_free_ char *p = fixture_path(fx->root, "q/projects/-srv-big/chats/"
                                                                "00000000-0000-4000-8000-000000200000.jsonl");
                _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
                struct iovec iov;
                char c;

                assert_true(fd >= 0);
                iov = (struct iovec){ .iov_base = &c, .iov_len = 1 };
                /* a first read that finds it (this one starts reading it): nothing is cold */
                if (preadv2(fd, &iov, 1, 0, RWF_NOWAIT) >= 0)
                        test_skip("the page cache keeps the dropped file: nothing is cold here");
        }
        drop_cache_tree(fx);
        before = scan_prefetches();
        scan_fx_prefetch(fx, 1, false, NULL, &cold);
        assert_true(scan_prefetches() - before >= 16);
        assert_same_inventory(warm, cold);
}

static void test_scan_orphans_across_trees(void **state) {
        Fx *fx = *state;
        ScanOptions o = { .now = util_now_msec() };
        Tree t1 = {}, t2 = {};
        _cleanup_free_ char *second = fixture_path(fx->root, "second");

        /* tree 2 holds only file-history for a session that lives in tree 1 */
        assert_int_equal(fixture_write_size(fx->root,
                                            "second/file-history/aefd2a51-f2fc-4eed-a29c-91292bb022bf/x",
                                            10),
                         0);
        assert_int_equal(fixture_write_size(fx->root, "second/file-history/" ID_ORPHAN_FH "/x", 10),
                         0);
        assert_int_equal(inventory_new(&fx->inv), 0);
        assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t1), 0);
        assert_int_equal(inventory_add_tree(fx->inv, &t1, NULL), 0);
        assert_int_equal(qwen_store.tree_from_dir(second, &t2), 0);
        assert_int_equal(inventory_add_tree(fx->inv, &t2, NULL), 0);
        assert_int_equal(scan_all(fx->inv, &o), 0);
        assert_int_equal(fx->inv->n_orphans, 1);
        assert_string_equal(fx->inv->orphans[0].name, ID_ORPHAN_FH);
        assert_int_equal(fx->inv->orphans[0].tree, 1);
        assert_true(fx->inv->trees[0].fs_known);
        assert_true(fx->inv->trees[0].fs_size > 0);
}

static void test_scan_missing_root_is_error_others_scanned(void **state) {
        Fx *fx = *state;
        ScanOptions o = { .now = util_now_msec() };
        Tree t1 = {}, t2 = {};

        assert_int_equal(inventory_new(&fx->inv), 0);
        assert_int_equal(qwen_store.tree_from_dir("/nonexistent/qgc-test-root", &t1), 0);
        assert_int_equal(inventory_add_tree(fx->inv, &t1, NULL), 0);
        assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t2), 0);
        assert_int_equal(inventory_add_tree(fx->inv, &t2, NULL), 0);
        assert_int_equal(scan_all(fx->inv, &o), -ENOENT);
        assert_int_equal(fx->inv->n_sessions, ELEMENTSOF(corpus_sessions));
}

/* ------------------------------------------------------------------ liveness */

static void test_scan_live_registry_own_pid(void **state) {
        Fx *fx = *state;
        char ps[128];
        _cleanup_free_ char *rec = NULL, *rel = NULL, *bad = NULL, *rel2 = NULL;

        claims_dead_here(fx);
        own_proc_start(ps, sizeof(ps));
        rec = util_strprintf(
                "{\"schemaVersion\":1,\"pid\":%d,\"procStart\":\"%s\",\"pidNs\":%" PRIu64
                ",\"sessionId\":\"df25afd1-db41-477e-87bb-98d273af1115\","
                "\"cwd\":\"/srv/demo/my-notes\",\"kind\":\"tui\"}",
                (int)getpid(), ps, own_pidns());
        rel = util_strprintf("q/sessions/%d.json", (int)getpid());
        assert_int_equal(fixture_write(fx->root, rel, rec), 0);
        /* same pid, other start ticks: a reused pid, not live */
        bad = util_strprintf(
                "{\"schemaVersion\":1,\"pid\":%d,\"procStart\":\"%.*s:1\",\"pidNs\":%" PRIu64
                ",\"sessionId\":\"be0b1e35-4600-44b4-aba9-84b6d4d12748\"}",
                (int)getpid(), (int)strcspn(ps, ":"), ps, own_pidns());
        rel2 = util_strprintf("q/sessions/%d-0123abcd.json", (int)getpid());
        assert_int_equal(fixture_write(fx->root, rel2, bad), 0);
        scan_fx(fx);
        assert_int_equal(find(fx, "df25afd1-db41-477e-87bb-98d273af1115")->live, LIVE_REGISTRY);
        assert_non_null(find(fx, "df25afd1-db41-477e-87bb-98d273af1115")->live_reason);
        assert_int_equal(find(fx, "be0b1e35-4600-44b4-aba9-84b6d4d12748")->live, 0);
        /* the corpus's stale 8887.json (another boot) */
        assert_int_equal(find(fx, "6dcfb8c0-951c-475b-9ca1-0d8837bead38")->live, 0);
}

static void test_scan_live_registry_other_namespace_unknown(void **state) {
        Fx *fx = *state;
        char ps[128];
        _cleanup_free_ char *rec = NULL;

        claims_dead_here(fx);
        own_proc_start(ps, sizeof(ps));
        rec = util_strprintf(
                "{\"schemaVersion\":1,\"pid\":4242,\"procStart\":\"%s\",\"pidNs\":%" PRIu64
                ",\"sessionId\":\"be0b1e35-4600-44b4-aba9-84b6d4d12748\"}",
                ps, own_pidns() + 1);
        assert_int_equal(fixture_write(fx->root, "q/sessions/4242.json", rec), 0);
        scan_fx(fx);
        assert_int_equal(find(fx, "be0b1e35-4600-44b4-aba9-84b6d4d12748")->live, LIVE_UNKNOWN);
}

/* A record of another pid namespace and another boot (a container's, before a reboot): the boot
 * proves the process gone (issue 24.12: the namespace was tested first, and the session stayed in
 * use forever). */
static void test_scan_live_registry_other_namespace_other_boot_dead(void **state) {
        Fx *fx = *state;
        _cleanup_free_ char *rec = NULL;

        claims_dead_here(fx);
        rec = util_strprintf("{\"schemaVersion\":1,\"pid\":4242,\"procStart\":"
                             "\"00000000-0000-4000-8000-000000000000:123\",\"pidNs\":%" PRIu64
                             ",\"sessionId\":\"be0b1e35-4600-44b4-aba9-84b6d4d12748\"}",
                             own_pidns() + 1);
        assert_int_equal(fixture_write(fx->root, "q/sessions/4242.json", rec), 0);
        scan_fx(fx);
        assert_int_equal(find(fx, "be0b1e35-4600-44b4-aba9-84b6d4d12748")->live, 0);
}

static void test_scan_live_claims(void **state) {
        Fx *fx = *state;
        _cleanup_free_ char *alive = util_strprintf(
                "{\"schema_version\":1,\"pid\":%d,\"session_id\":"
                "\"aefd2a51-f2fc-4eed-a29c-91292bb022bf\",\"work_dir\":\"/srv/demo/webapp\","
                "\"hostname\":\"%s\"}",
                (int)getpid(), own_hostname());

        claims_dead_here(fx);
        assert_int_equal(fixture_write(fx->root,
                                       WEBAPP "/chats/aefd2a51-f2fc-4eed-a29c-91292bb022bf.77."
                                              "runtime.json",
                                       alive),
                         0);
        /* foreign host: live whatever the pid */
        assert_int_equal(fixture_write(fx->root,
                                       WEBAPP "/chats/c7bab6d3-4d35-4ebb-b856-81c884008a1e."
                                              "runtime.json",
                                       "{\"pid\":1,\"session_id\":\"c7bab6d3-4d35-4ebb-b856-"
                                       "81c884008a1e\",\"hostname\":\"qgc-other-host.invalid\"}"),
                         0);
        /* malformed claim named after the session: cannot evaluate */
        assert_int_equal(fixture_write(fx->root,
                                       WEBAPP "/chats/dd3dc65a-7d32-4843-a56c-9eef3a13391d."
                                              "runtime.json",
                                       "{not json"),
                         0);
        scan_fx(fx);
        assert_int_equal(find(fx, "aefd2a51-f2fc-4eed-a29c-91292bb022bf")->live, LIVE_CLAIM);
        assert_int_equal(find(fx, "c7bab6d3-4d35-4ebb-b856-81c884008a1e")->live, LIVE_CLAIM);
        assert_int_equal(find(fx, "dd3dc65a-7d32-4843-a56c-9eef3a13391d")->live, LIVE_UNKNOWN);
        assert_int_equal(find(fx, "df25afd1-db41-477e-87bb-98d273af1115")->live, 0);
}

/* json.h: every input of the table is read as Qwen reads it, with JSON.parse's grammar. json-c's
 * tokener, which read them before, took each of these texts; JSON.parse throws on all of them. */
static void test_json_inputs_read_as_json_parse(void **state) {
        static const char *const refused[] = {
                "{\"pid\":1} trailing",  "{\"pid\":NaN}",         "{'pid':1}",
                "{\"pid\":1 /* c */}",   "\xef\xbb\xbf{\"pid\":1}", "{\"s\":\"a\tb\"}",
                "null",                  "",                      "{\"pid\":1}}",
        };
        Fx *fx = *state;
        _cleanup_free_ char *dir = fixture_path(fx->root, "json");
        _cleanup_close_ int dfd = -EBADF;
        json_object *o = NULL;
        char big[70 * 1024];

        for (JsonInput i = 0; i < _JSON_INPUT_MAX; i++) {
                const JsonInputInfo *info = json_input_info(i);
                assert_int_equal(info->dialect, JSON_DIALECT_PARSE);
                assert_non_null(info->file);
                assert_non_null(info->qwen);
                assert_non_null(info->qgc);
                assert_true(info->max >= 64 * 1024);
        }
        assert_string_equal(json_input_dialect_to_string(JSON_DIALECT_PARSE), "JSON.parse");

        assert_int_equal(fixture_write(fx->root, "json/ok", " {\"pid\":1,\"pid\":2}\n"), 0);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(json_input_read(dfd, "ok", JSON_INPUT_CLAIM, &o), 0);
        assert_int_equal(json_object_get_int64(json_object_object_get(o, "pid")), 2);
        json_object_put(o);
        o = NULL;
        for (size_t k = 0; k < ELEMENTSOF(refused); k++) {
                assert_int_equal(fixture_write(fx->root, "json/bad", refused[k]), 0);
                for (JsonInput i = 0; i < _JSON_INPUT_MAX; i++)
                        if (json_input_read(dfd, "bad", i, &o) != -EBADMSG) {
                                print_error("'%s' as %s: not refused\n", refused[k],
                                            json_input_info(i)->file);
                                fail();
                        }
        }
        assert_int_equal(symlinkat("ok", dfd, "link"), 0);
        assert_int_equal(json_input_read(dfd, "link", JSON_INPUT_REGISTRY, &o), -ELOOP);
        assert_int_equal(json_input_read(dfd, "none", JSON_INPUT_REGISTRY, &o), -ENOENT);
        memset(big, ' ', sizeof big);
        big[sizeof big - 3] = '{';
        big[sizeof big - 2] = '}';
        big[sizeof big - 1] = 0;
        assert_int_equal(fixture_write(fx->root, "json/big", big), 0);
        assert_int_equal(json_input_read(dfd, "big", JSON_INPUT_TASKS_LOCK, &o), -EFBIG);
        assert_int_equal(json_input_read(dfd, "big", JSON_INPUT_TASKS, &o), 0);
        json_object_put(o);
}

/* What the grammar changes for liveness: a dead claim json-c read past its trailing bytes keeps
 * its session now (Qwen cannot read it: 'incomplete'), and a task file JSON.parse refuses binds
 * every session of its hash. */
static void test_scan_json_parse_keeps_what_qwen_cannot_read(void **state) {
        Fx *fx = *state;
        const char *hash = "eaf4e3b21d9e4dffefffe05513fa8b1769d6422c03e7c712252f377e0f53310b";
        _cleanup_free_ char *tasks = util_strprintf("q/tmp/%s/scheduled_tasks.json", hash);
        _cleanup_free_ char *claim = util_strprintf(
                "{\"schema_version\":1,\"pid\":%d,\"session_id\":"
                "\"df25afd1-db41-477e-87bb-98d273af1115\",\"work_dir\":\"/srv/demo/my-notes\","
                "\"hostname\":\"%s\",\"started_at\":1796010821.8} x",
                (int)dead_pid(), own_hostname());

        claims_dead_here(fx);
        scan_fx(fx);
        assert_int_equal(find(fx, "df25afd1-db41-477e-87bb-98d273af1115")->live, 0);
        assert_int_equal(fixture_write(fx->root,
                                       "q/projects/-srv-demo-my-notes/chats/"
                                       "df25afd1-db41-477e-87bb-98d273af1115.runtime.json",
                                       claim),
                         0);
        assert_int_equal(fixture_write(fx->root, tasks, "[{\"id\":\"c\"}] x"), 0);
        scan_fx(fx);
        assert_int_equal(find(fx, "df25afd1-db41-477e-87bb-98d273af1115")->live, LIVE_UNKNOWN);
        assert_int_equal(find(fx, "47406782-cafc-46f6-a948-02f7b5b53f92")->n_tasks, 1);
}

static void test_scan_live_writer_locks(void **state) {
        Fx *fx = *state;
        char ps[128];
        _cleanup_free_ char *held = NULL, *stale = NULL;
        char *colon;

        claims_dead_here(fx);
        own_proc_start(ps, sizeof(ps));
        held = util_strprintf("{\"schema_version\":1,\"session_id\":\"47406782-cafc-46f6-a948-"
                              "02f7b5b53f92\",\"pid\":%d,\"process_start_identity\":\"linux:%s\","
                              "\"hostname\":\"%s\",\"process_kind\":\"acp\"}",
                              (int)getpid(), ps, own_hostname());
        colon = strrchr(ps, ':');
        *colon = 0;
        stale = util_strprintf("{\"schema_version\":2,\"state\":\"active\",\"pid\":%d,"
                               "\"process_start_identity\":\"linux:%s:12\",\"hostname\":\"%s\"}",
                               (int)dead_pid(), ps, own_hostname());
        assert_int_equal(fixture_write(fx->root,
                                       "q/tmp/session-writer-locks/47406782-cafc-46f6-a948-"
                                       "02f7b5b53f92.lock",
                                       held),
                         0);
        assert_int_equal(fixture_write(fx->root,
                                       "q/tmp/session-writer-locks/6fae7d01-a2f7-4d92-839b-"
                                       "10504c3c7925.lock",
                                       stale),
                         0);
        assert_int_equal(fixture_write(fx->root,
                                       "q/tmp/session-writer-locks/122b1556-a4f5-48b6-9bf1-"
                                       "eae6bac23f87.lock",
                                       "garbage"),
                         0);
        assert_int_equal(fixture_write(fx->root,
                                       "q/tmp/session-writer-locks/8a7ded31-31b8-46e9-b4e0-"
                                       "9e1af37c0d0d.lock",
                                       "{\"schema_version\":3,\"state\":\"sealed\",\"pid\":1}"),
                         0);
        scan_fx(fx);
        assert_int_equal(find(fx, "47406782-cafc-46f6-a948-02f7b5b53f92")->live, LIVE_LOCK);
        assert_int_equal(find(fx, "6fae7d01-a2f7-4d92-839b-10504c3c7925")->live, 0);
        assert_int_equal(find(fx, "122b1556-a4f5-48b6-9bf1-eae6bac23f87")->live, LIVE_LOCK);
        assert_int_equal(find(fx, "8a7ded31-31b8-46e9-b4e0-9e1af37c0d0d")->live, LIVE_LOCK);
        assert_non_null(strstr(find(fx, "8a7ded31-31b8-46e9-b4e0-9e1af37c0d0d")->live_reason,
                               "sealed"));
}

static void test_scan_last_write_from_subagents(void **state) {
        Fx *fx = *state;
        const char *id = "dd3dc65a-7d32-4843-a56c-9eef3a13391d";
        _cleanup_free_ char *t = util_strprintf(WEBAPP "/chats/%s.jsonl", id);
        _cleanup_free_ char *sub =
                util_strprintf(WEBAPP "/subagents/%s/agent-general-purpose-call_mock_10.jsonl", id);
        const Session *s;

        assert_int_equal(fixture_set_mtime(fx->root, t, 1700000000), 0);
        assert_int_equal(fixture_set_mtime(fx->root, sub, 1800000000), 0);
        scan_fx(fx);
        s = find(fx, id);
        assert_int_equal(s->mtime, INT64_C(1700000000) * 1000);
        assert_int_equal(s->last_write, INT64_C(1800000000) * 1000);
}


/* The executor's re-check of s: a fresh probe of tree t and the claims of chats_fd read afresh
 * (the registry and claims as they are now, not at scan time). */
static int live_recheck(const Tree *t, Session *s, int chats_fd) {
        _cleanup_(claims_done) ClaimSet claims = {};
        _cleanup_(live_probe_freep) LiveProbe *fresh = NULL;
        int r;

        r = live_probe_new(t, &fresh);
        if (r < 0)
                return r;
        assert_int_equal(claims_load(&claims, chats_fd), 0);
        return live_check_claims(fresh, s, &claims);
}

/* Registry records read (ld --wrap=json_input_read), for what a probe reads again. */
static unsigned registry_reads;
int __real_json_input_read(int dfd, const char *name, JsonInput input, struct json_object **ret);
int __wrap_json_input_read(int dfd, const char *name, JsonInput input, struct json_object **ret);
int __wrap_json_input_read(int dfd, const char *name, JsonInput input, struct json_object **ret) {
        if (input == JSON_INPUT_REGISTRY)
                registry_reads++;
        return __real_json_input_read(dfd, name, input, ret);
}

static void test_live_check_rereads_registry_and_claims(void **state) {
        Fx *fx = *state;
        _cleanup_(live_probe_freep) LiveProbe *probe = NULL;
        _cleanup_free_ char *chats = fixture_path(fx->root, WEBAPP "/chats");
        _cleanup_free_ char *rec = NULL, *rel = NULL;
        _cleanup_close_ int cfd = -EBADF;
        Session s = { .id = "c7bab6d3-4d35-4ebb-b856-81c884008a1e" };
        HeadInfo h = { .session_id = (char *)"c7bab6d3-4d35-4ebb-b856-81c884008a1e",
                       .cwd = (char *)"/srv/demo/elsewhere" };
        char ps[128];

        scan_fx(fx);
        assert_int_equal(live_probe_new(&fx->inv->trees[0], &probe), 0);
        cfd = open(chats, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(cfd >= 0);
        assert_int_equal(live_recheck(&fx->inv->trees[0], &s, cfd), 0);
        assert_int_equal(s.live, 0);

        /* a Qwen process starts after the probe was made: the re-check sees it */
        own_proc_start(ps, sizeof(ps));
        rec = util_strprintf(
                "{\"schemaVersion\":1,\"pid\":%d,\"procStart\":\"%s\",\"pidNs\":%" PRIu64
                ",\"sessionId\":\"%s\"}",
                (int)getpid(), ps, own_pidns(), s.id);
        rel = util_strprintf("q/sessions/%d.json", (int)getpid());
        assert_int_equal(fixture_write(fx->root, rel, rec), 0);
        assert_int_equal(live_recheck(&fx->inv->trees[0], &s, cfd), 0);
        assert_int_equal(s.live, LIVE_REGISTRY);

        /* owner_check reads the claims of chats/ itself: a /cd-migrated session */
        assert_int_equal(owner_test_check(&s, &h, NULL, "-srv-demo-webapp", cfd), 0);
        assert_int_equal(s.owner, OWNER_FOREIGN);
        assert_int_equal(fixture_write(fx->root, WEBAPP "/chats/c7bab6d3-4d35-4ebb-b856-81c884008a1e.runtime.json",
                                       "{\"pid\":0,\"session_id\":\"C7BAB6D3-4d35-4ebb-b856-81c884008a1e\","
                                       "\"work_dir\":\"/srv/demo/webapp\"}"),
                         0);
        assert_int_equal(owner_test_check(&s, &h, NULL, "-srv-demo-webapp", cfd), 0);
        assert_int_equal(s.owner, OWNER_CLAIM);
        assert_string_equal(s.cwd, "/srv/demo/elsewhere");
        /* no head: unverified with the caller's reason */
        assert_int_equal(owner_test_check(&s, NULL, "empty transcript", "-srv-demo-webapp", cfd), 0);
        assert_int_equal(s.owner, OWNER_UNVERIFIED);
        assert_string_equal(owner_text(&s), "empty transcript");
        inventory_session_done(&s);
}


/* The executor's probe is refreshed, not remade: an unchanged registry is not read again, a
 * replaced record is, and only that one. */
static void test_live_probe_refresh_reads_only_changes(void **state) {
        Fx *fx = *state;
        _cleanup_(live_probe_freep) LiveProbe *probe = NULL;
        _cleanup_free_ char *sessions = fixture_path(fx->root, "q/sessions");
        _cleanup_free_ char *rec = NULL, *rel = NULL, *from = NULL, *to = NULL;
        const char *id_a = "aaaaaaaa-0000-4000-8000-00000000000a";
        const char *id_b = "bbbbbbbb-0000-4000-8000-00000000000b";
        struct timespec old[2] = { { .tv_sec = 1700000000 }, { .tv_sec = 1700000000 } };
        Session s = {};
        unsigned n0, base;
        char ps[128];

        scan_fx(fx);
        own_proc_start(ps, sizeof(ps));
        rec = util_strprintf(
                "{\"schemaVersion\":1,\"pid\":%d,\"procStart\":\"%s\",\"pidNs\":%" PRIu64
                ",\"sessionId\":\"%s\"}",
                (int)getpid(), ps, own_pidns(), id_a);
        rel = util_strprintf("q/sessions/%d.json", (int)getpid());
        assert_int_equal(fixture_write(fx->root, rel, rec), 0);
        assert_int_equal(fixture_write(fx->root, "q/sessions/2147483646.json", "{\"pid\":1}"), 0);
        assert_int_equal(fixture_write(fx->root, "q/sessions/2147483645.json", "not json"), 0);
        assert_int_equal(utimensat(AT_FDCWD, sessions, old, 0), 0);

        base = registry_reads;
        assert_int_equal(live_probe_new(&fx->inv->trees[0], &probe), 0);
        n0 = registry_reads - base; /* the fixture's records and these three */
        assert_true(n0 >= 3);
        snprintf(s.id, sizeof s.id, "%s", id_a);
        assert_int_equal(live_check_claims(probe, &s, NULL), 0);
        assert_int_equal(s.live, LIVE_REGISTRY);
        inventory_session_done(&s);
        s = (Session){};

        /* nothing changed: nothing is read */
        for (int i = 0; i < 3; i++)
                assert_int_equal(live_probe_refresh(probe), 0);
        assert_int_equal(registry_reads - base, n0);

        /* /clear: Qwen rewrites the record by rename; that record alone is read again */
        free(rec);
        rec = util_strprintf(
                "{\"schemaVersion\":1,\"pid\":%d,\"procStart\":\"%s\",\"pidNs\":%" PRIu64
                ",\"sessionId\":\"%s\"}",
                (int)getpid(), ps, own_pidns(), id_b);
        assert_int_equal(fixture_write(fx->root, "q/sessions/tmp-record", rec), 0);
        from = fixture_path(fx->root, "q/sessions/tmp-record");
        to = fixture_path(fx->root, rel);
        assert_int_equal(rename(from, to), 0);
        assert_int_equal(live_probe_refresh(probe), 0);
        assert_int_equal(registry_reads - base, n0 + 1);
        snprintf(s.id, sizeof s.id, "%s", id_a);
        assert_int_equal(live_check_claims(probe, &s, NULL), 0);
        assert_int_equal(s.live, 0);
        inventory_session_done(&s);
        s = (Session){};
        snprintf(s.id, sizeof s.id, "%s", id_b);
        assert_int_equal(live_check_claims(probe, &s, NULL), 0);
        assert_int_equal(s.live, LIVE_REGISTRY);
        inventory_session_done(&s);
        s = (Session){};

        /* listed again (the directory changed within the last second), nothing read again */
        assert_int_equal(live_probe_refresh(probe), 0);
        assert_int_equal(registry_reads - base, n0 + 1);
}

static void test_claims_load_sort_range_of_a_directory(void **state) {
        Fx *fx = *state;
        _cleanup_(claims_done) ClaimSet set = {};
        _cleanup_free_ char *dir = fixture_path(fx->root, "claims");
        _cleanup_close_ int dfd = -EBADF;
        static const char *const ids[] = { "cccccccc-0000-4000-8000-000000000003",
                                           "aaaaaaaa-0000-4000-8000-000000000001",
                                           "bbbbbbbb-0000-4000-8000-000000000002" };
        size_t first, end, hits;

        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                for (int k = 0; k < 3; k++) {
                        _cleanup_free_ char *rel =
                                util_strprintf("claims/%s.%d.runtime.json", ids[i], k);
                        _cleanup_free_ char *json =
                                util_strprintf("{\"pid\":%d,\"session_id\":\"%s\"}", k, ids[i]);
                        assert_int_equal(fixture_write(fx->root, rel, json), 0);
                }
        /* malformed, named after b in upper case */
        assert_int_equal(fixture_write(fx->root,
                                       "claims/BBBBBBBB-0000-4000-8000-000000000002.runtime.json",
                                       "nope"),
                         0);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(claims_load(&set, dfd), 0);
        assert_int_equal(set.n, 10);
        claims_sort(&set);
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                claims_range(&set, ids[i], &first, &end);
                hits = 0;
                for (size_t j = first; j < end; j++)
                        if (claims_match(&set.claims[j], ids[i]))
                                hits++;
                assert_int_equal(hits, i == 2 ? 4 : 3);
                assert_int_equal(end - first, hits);
        }
        claims_range(&set, "dddddddd-0000-4000-8000-000000000004", &first, &end);
        assert_int_equal(end, first);
}

/* ------------------------------------------------------------------ roots */

static void test_roots_resolve_default(void **state) {
        _cleanup_(inventory_tree_done) Tree t = {};
        (void)state;

        assert_int_equal(fixture_roots_resolve("/nonexistent/home/u", NULL, NULL, &t), 0);
        assert_string_equal(t.global_dir, "/nonexistent/home/u/.qwen");
        assert_string_equal(t.runtime_dir, "/nonexistent/home/u/.qwen");
}

static void test_roots_resolve_env_expansion(void **state) {
        static const struct {
                const char *qwen_home, *runtime, *g, *r;
        } cases[] = {
                { "~", NULL, "/h", "/h" },
                { "~/q", "~/r", "/h/q", "/h/r" },
                { "~\\q\\x", NULL, "/h/q/x", "/h/q/x" },
                { "/a//b/../c/", "/run//x/./", "/a/c", "/run/x" },
                { "", "", "/h/.qwen", "/h/.qwen" }, /* empty = unset, as in JS */
                { "/..", NULL, "/", "/" },
        };
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(inventory_tree_done) Tree t = {};
                print_message("  case %zu: %s %s\n", i, cases[i].qwen_home,
                              cases[i].runtime ? cases[i].runtime : "(null)");
                assert_int_equal(fixture_roots_resolve("/h", cases[i].qwen_home, cases[i].runtime, &t), 0);
                assert_string_equal(t.global_dir, cases[i].g);
                assert_string_equal(t.runtime_dir, cases[i].r);
        }
}

static void test_roots_resolve_relative_against_cwd(void **state) {
        _cleanup_(inventory_tree_done) Tree t = {}, u = {};
        _cleanup_free_ char *cwd = getcwd(NULL, 0), *want = NULL;
        (void)state;

        assert_non_null(cwd);
        want = util_strprintf("%s/rel/q", streq(cwd, "/") ? "" : cwd);
        assert_int_equal(fixture_roots_resolve("/h", "rel/q", NULL, &t), 0);
        assert_string_equal(t.global_dir, want);
        assert_int_equal(roots_from_dir("rel/./q/", &u), 0);
        assert_string_equal(u.global_dir, want);
        assert_string_equal(u.runtime_dir, want);
}

static void test_roots_resolve_settings_runtime_dir(void **state) {
        Fx *fx = *state;
        _cleanup_free_ char *home = fixture_path(fx->root, "home");
        _cleanup_free_ char *g = fixture_path(fx->root, "home/.qwen");
        static const struct {
                const char *settings, *runtime; /* NULL runtime: == G; "!": not known */
        } cases[] = {
                { "{\"advanced\":{\"runtimeOutputDir\":\"/srv/qwen-run\"}}", "/srv/qwen-run" },
                { "{\"advanced\":{\"runtimeOutputDir\":\".qwen\"}}", NULL }, /* relative: per project */
                { "{\"advanced\":{\"runtimeOutputDir\":\"\"}}", NULL },
                { "{\"advanced\":{\"runtimeOutputDir\":42}}", "!" }, /* Qwen cannot start */
                { "{\"general\":{}}", NULL },
                { "not json", "!" }, /* Qwen could not read it: not known */
                { "{\"advanced\":{\"runtimeOutputDir\":\"~/rt\"}}", "HOME/rt" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(inventory_tree_done) Tree t = {}, e = {};
                _cleanup_free_ char *want = NULL;
                assert_int_equal(fixture_write(fx->root, "home/.qwen/settings.json",
                                               cases[i].settings),
                                 0);
                if (cases[i].runtime && streq(cases[i].runtime, "!")) {
                        assert_int_equal(fixture_roots_resolve(home, NULL, NULL, &t), ROOTS_UNDETERMINED);
                        assert_int_equal(fixture_roots_resolve(home, NULL, "/env/rt", &e), 0);
                        assert_string_equal(e.runtime_dir, "/env/rt");
                        continue;
                }
                assert_int_equal(fixture_roots_resolve(home, NULL, NULL, &t), 0);
                if (!cases[i].runtime)
                        want = strdup(g);
                else if (strneq(cases[i].runtime, "HOME", 4))
                        want = util_strprintf("%s%s", home, cases[i].runtime + 4);
                else
                        want = strdup(cases[i].runtime);
                print_message("  %s -> %s\n", cases[i].settings, t.runtime_dir);
                assert_string_equal(t.global_dir, g);
                assert_string_equal(t.runtime_dir, want);
                /* QWEN_RUNTIME_DIR wins over the setting */
                assert_int_equal(fixture_roots_resolve(home, NULL, "/env/rt", &e), 0);
                assert_string_equal(e.runtime_dir, "/env/rt");
        }
}

/* ------------------------------------------------------------------ inventory */

static void add_session(Inventory *inv, size_t tree, const char *id, const char *project) {
        Session s = { .tree = tree };

        strncpy(s.id, id, SESSION_ID_MAX);
        s.project_dir = strdup(project);
        assert_int_equal(inventory_add_session(inv, &s), 0);
}

static void test_inventory_find_case_insensitive_indexed(void **state) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        Tree t = {};
        char id[SESSION_ID_MAX + 1];
        (void)state;

        assert_int_equal(inventory_new(&inv), 0);
        t.global_dir = strdup("/a");
        assert_int_equal(inventory_add_tree(inv, &t, NULL), 0);
        assert_null(t.global_dir); /* ownership moved */
        for (int i = 999; i >= 0; i--) {
                (void)snprintf(id, sizeof(id), "%08x-0000-4000-8000-%012x", i, i);
                add_session(inv, (size_t)(i % 2), id, i % 3 ? "-p" : "-q");
        }
        /* linear before the index */
        assert_non_null(inventory_find(inv, 0, "0000000A-0000-4000-8000-00000000000A"));
        assert_int_equal(inventory_index(inv), 0);
        inventory_sort(inv);
        assert_null(inv->by_id); /* sorting moves sessions: the index is dropped */
        assert_int_equal(inventory_index(inv), 0);
        assert_int_equal(inv->n_by_id, 1000);
        for (int i = 0; i < 1000; i++) {
                const Session *s;
                (void)snprintf(id, sizeof(id), "%08X-0000-4000-8000-%012X", i, i);
                s = inventory_find(inv, (size_t)(i % 2), id);
                assert_non_null(s);
                assert_int_equal(strcasecmp(s->id, id), 0);
                assert_null(inventory_find(inv, (size_t)((i + 1) % 2), id));
                assert_non_null(inventory_find(inv, SIZE_MAX, id));
        }
        assert_null(inventory_find(inv, 0, "ffffffff-0000-4000-8000-000000000000"));
        /* sorted by (tree, project_dir, cwd, id) */
        for (size_t i = 1; i < inv->n_sessions; i++) {
                const Session *a = &inv->sessions[i - 1], *b = &inv->sessions[i];
                assert_true(a->tree < b->tree ||
                            (a->tree == b->tree && strcmp(a->project_dir, b->project_dir) < 0) ||
                            (a->tree == b->tree && streq(a->project_dir, b->project_dir) &&
                             strcmp(a->id, b->id) < 0));
        }
        /* adding drops the index; find still works (linearly) */
        add_session(inv, 1, "ABCDEF01-0000-4000-8000-000000000000", "-z");
        assert_null(inv->by_id);
        assert_non_null(inventory_find(inv, 1, "abcdef01-0000-4000-8000-000000000000"));
}

static void test_inventory_to_string(void **state) {
        char buf[64], small[12];
        (void)state;

        assert_string_equal(inventory_session_state_to_string(SESSION_CONFLICT), "conflict");
        assert_null(inventory_session_state_to_string(_SESSION_STATE_MAX));
        assert_string_equal(inventory_owner_status_to_string(OWNER_UNVERIFIED), "unverified");
        assert_null(inventory_owner_status_to_string(_OWNER_STATUS_INVALID));
        assert_string_equal(inventory_orphan_kind_to_string(ORPHAN_EMPTY_PROJECT), "empty-project");
        assert_string_equal(inventory_live_flags_to_string(buf, sizeof(buf), 0), "");
        assert_string_equal(inventory_live_flags_to_string(buf, sizeof(buf), LIVE_REGISTRY | LIVE_LOCK),
                            "registry,lock");
        assert_string_equal(inventory_live_flags_to_string(buf, sizeof(buf), LIVE_UNKNOWN), "unknown");
        assert_string_equal(inventory_live_flags_to_string(small, sizeof(small),
                                                 LIVE_REGISTRY | LIVE_CLAIM | LIVE_LOCK),
                            "registry");
}

/* ------------------------------------------------------------------ fixture */

static void test_fixture_build_and_snapshot(void **state) {
        Fx *fx = *state;
        const char *specs[] = { "a/b/", "a/c.jsonl 4K 40d", "x 100", NULL };
        _cleanup_free_ char *s1 = NULL, *s2 = NULL, *content = NULL;
        size_t len = 0;
        struct stat st;
        _cleanup_free_ char *c = fixture_path(fx->root, "a/c.jsonl");

        assert_int_equal(fixture_build(fx->root, specs), 0);
        assert_true(fixture_exists(fx->root, "a/b"));
        assert_int_equal(fixture_read(fx->root, "a/c.jsonl", &content, &len), 0);
        assert_int_equal(len, 4096);
        assert_int_equal(stat(c, &st), 0);
        assert_true(time(NULL) - st.st_mtime >= 40 * 86400 - 5);
        assert_int_equal(fixture_snapshot_full(fx->root, NULL, &s1), 0);
        assert_int_equal(fixture_snapshot_full(fx->root, NULL, &s2), 0);
        assert_string_equal(s1, s2);
        assert_int_equal(fixture_write(fx->root, "x", "changed"), 0);
        free(s2);
        s2 = NULL;
        assert_int_equal(fixture_snapshot_full(fx->root, NULL, &s2), 0);
        assert_string_not_equal(s1, s2);
}

/* Equal project_dir, cwd and owner_detail strings are shared, distinct ones kept apart, and all
 * of them freed once (ASan checks the frees) across many set resizes. */
static void test_inventory_add_session_interns_strings(void **state) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        char id[SESSION_ID_MAX + 1], buf[64];
        (void)state;

        assert_int_equal(inventory_new(&inv), 0);
        for (int i = 0; i < 3000; i++) {
                Session s = { .tree = 0 };
                (void)snprintf(id, sizeof(id), "%08x-0000-4000-8000-%012x", i, i);
                memcpy(s.id, id, sizeof(s.id));
                (void)snprintf(buf, sizeof(buf), "-p-%d", i % 700);
                s.project_dir = strdup(buf);
                (void)snprintf(buf, sizeof(buf), "/p/%d", i % 700);
                s.cwd = i % 5 == 0 ? NULL : strdup(buf);
                s.owner_detail = strdup(i % 2 ? "cwd matches the project directory" : "other");
                s.title = strdup("a title");
                assert_int_equal(inventory_add_session(inv, &s), 0);
                assert_null(s.project_dir); /* moved */
        }
        assert_int_equal(inv->n_sessions, 3000);
        assert_int_equal(inv->strings.n, 700 + 560 + 2); /* no cwd where i % 5 == 0, so 140 never */
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i], *o = &inv->sessions[(i + 700) % 2800];
                (void)snprintf(buf, sizeof(buf), "-p-%zu", i % 700);
                assert_string_equal(s->project_dir, buf);
                assert_ptr_equal(s->project_dir, o->project_dir);
                assert_ptr_not_equal(s->project_dir, inv->sessions[(i + 1) % 3000].project_dir);
                if (i % 5 == 0)
                        assert_null(s->cwd);
                else {
                        (void)snprintf(buf, sizeof(buf), "/p/%zu", i % 700);
                        assert_string_equal(s->cwd, buf);
                }
                assert_string_equal(s->owner_detail,
                                    i % 2 ? "cwd matches the project directory" : "other");
                assert_ptr_equal(s->owner_detail, inv->sessions[(i + 2) % 3000].owner_detail);
                assert_ptr_not_equal(s->title, inv->sessions[(i + 1) % 3000].title);
        }
}

/* Sessions arriving in ordered project blocks (the scan's order) end up exactly as a full sort
 * puts them: by tree, project_dir, cwd (none first), id; also when a block recurs later. */
static void test_inventory_sort_blocks(void **state) {
        static const struct {
                size_t tree;
                const char *project, *cwd, *id;
        } in[] = {
                { 0, "-a", "/a", "cc" }, { 0, "-a", NULL, "bb" }, { 0, "-a", "/a", "aa" },
                { 0, "-a", "/0", "zz" }, { 0, "-b", "/b", "bb" }, { 0, "-b", "/b", "Ab" },
                { 1, "-a", "/a", "bb" }, { 1, "-a", "/a", "aa" }, { 1, "-c", "/c", "x" },
        };
        static const unsigned want[] = { 1, 3, 2, 0, 5, 4, 7, 6, 8 };
        (void)state;

        for (unsigned pass = 0; pass < 2; pass++) {
                _cleanup_(inventory_freep) Inventory *inv = NULL;

                assert_int_equal(inventory_new(&inv), 0);
                for (size_t i = 0; i < ELEMENTSOF(in); i++) {
                        Session s = { .tree = in[i].tree };
                        strcpy(s.id, in[i].id);
                        s.project_dir = strdup(in[i].project);
                        s.cwd = in[i].cwd ? strdup(in[i].cwd) : NULL;
                        assert_int_equal(inventory_add_session(inv, &s), 0);
                }
                if (pass == 1) {
                        /* a block out of order: the whole array is sorted instead */
                        Session t = { .tree = 0, .id = "dd" };
                        t.project_dir = strdup("-a");
                        assert_int_equal(inventory_add_session(inv, &t), 0);
                }
                inventory_sort(inv);
                if (pass == 0) {
                        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                                const Session *s = &inv->sessions[i];
                                assert_string_equal(s->id, in[want[i]].id);
                                assert_int_equal(s->tree, in[want[i]].tree);
                                assert_string_equal(s->project_dir, in[want[i]].project);
                        }
                        continue;
                }
                /* tree 0, -a: no cwd (bb, dd), /0 (zz), /a (aa, cc), then as before */
                assert_int_equal(inv->n_sessions, ELEMENTSOF(in) + 1);
                static const char *const ids[] = { "bb", "dd", "zz", "aa", "cc", "Ab",
                                                   "bb", "aa", "bb", "x" };
                for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                        assert_string_equal(inv->sessions[i].id, ids[i]);
        }
}

/* The cache gives the same verdicts and hashes as the uncached check, also when the cwd or the
 * project directory changes between calls. */
static void test_owner_check_cached_matches_uncached(void **state) {
        /* sha256 hex of the cwd strings (python3 hashlib) */
#define HA "b068a6cef8334eebe19e2f82e1599894124d282d70224287abc4327dcc812316"
#define HB "6294551d7d0fa129dbc0086a2cfc13e1d19caf1480e6def1ccb1c04fb40be1ec"
#define HW "0bd02e8d3108bf9f1f7171490f1e9003c6ed787b82ce2a64d1f6caa0b3ec9686"
        static const struct {
                const char *cwd, *project_dir, *hash;
        } cases[] = {
                { "/srv/a", "-srv-a", HA }, { "/srv/a", "-srv-a", HA }, { "/srv/a", "-srv-b", HA },
                { "/srv/b", "-srv-a", HB }, { "/srv/b", "-srv-b", HB }, { "/srv/a", "-srv-a", HA },
                { "/srv/a/.qwen/worktrees/x", "-srv-a", HW },           { "/srv/a", "-srv-a", HA },
        };
#undef HA
#undef HB
#undef HW
        _cleanup_(owner_cache_done) OwnerCache cache = {};
        ClaimSet claims = {};
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Session a = { .id = "c7bab6d3-4d35-4ebb-b856-81c884008a1e" }, b = a;
                HeadInfo h = { .session_id = (char *)"c7bab6d3-4d35-4ebb-b856-81c884008a1e",
                               .cwd = (char *)cases[i].cwd };

                assert_int_equal(owner_test_check_claims(&a, &h, NULL, cases[i].project_dir, &claims), 0);
                assert_int_equal(owner_test_check_cached(&b, &h, NULL, cases[i].project_dir, &claims,
                                                    &cache),
                                 0);
                assert_int_equal(a.owner, b.owner);
                assert_int_equal(a.owner_cause, b.owner_cause);
                assert_true(same_str(a.owner_detail, b.owner_detail));
                assert_true(same_str(a.owner_dir, b.owner_dir));
                assert_string_equal(a.hash, b.hash);
                assert_string_equal(b.hash, cases[i].hash);
                assert_int_equal(b.owner, strstr(cases[i].cwd, "worktrees") ? OWNER_WORKTREE :
                                          streq(cases[i].cwd + 5, cases[i].project_dir + 5) ?
                                                                     OWNER_OK :
                                                                     OWNER_FOREIGN);
                inventory_session_done(&a);
                inventory_session_done(&b);
        }
}

/* The scan reads a title exactly where a rule could select the session, by the policy's own
 * test (policy_age_selects()): at now - mtime == max-age no rule selects it (its idle is at most
 * now - mtime), so its title stays unread; a millisecond later it is read. */
static void test_scan_title_read_where_the_policy_could_select(void **state) {
        Fx *fx = *state;
        const msec_t limit = 90 * MSEC_PER_DAY, m = INT64_C(1790000000000);
        TitleNeed need = { .active_idle = limit, .archived_idle = MSEC_INFINITY };
        const struct timespec ts[2] = { { .tv_sec = m / 1000 }, { .tv_sec = m / 1000 } };
        _cleanup_free_ char *path =
                fixture_path(fx->root, "q/projects/-srv-demo-my-notes/chats/"
                                       "be0b1e35-4600-44b4-aba9-84b6d4d12748.jsonl");

        assert_non_null(path);
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
        for (msec_t k = 0; k < 2; k++) {
                ScanOptions o = { .now = m + limit + k, .titles = &need };
                Tree t = {};
                const Session *s;

                fx->inv = inventory_free(fx->inv);
                assert_int_equal(inventory_new(&fx->inv), 0);
                assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t), 0);
                assert_int_equal(inventory_add_tree(fx->inv, &t, NULL), 0);
                assert_int_equal(scan_all(fx->inv, &o), 0);
                s = find(fx, "be0b1e35-4600-44b4-aba9-84b6d4d12748");
                assert_int_equal(s->state, SESSION_ACTIVE);
                assert_int_equal(s->mtime, m);
                assert_int_equal(policy_age_selects(limit, o.now - s->mtime), k == 1);
                assert_int_equal(s->title_unread, k == 0);
        }
}

/* ------------------------------------------------------------------ the passes after the scan */

#define PASS_ID0 "c7bab6d3-4d35-4ebb-b856-81c884008a10"
#define PASS_ID1 "c7bab6d3-4d35-4ebb-b856-81c884008a11"
#define PASS_ID2 "c7bab6d3-4d35-4ebb-b856-81c884008a12"
#define PASS_ID3 "c7bab6d3-4d35-4ebb-b856-81c884008a13"
#define PASS_HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The ownership pass decides from what the scan read, in order: a copy's problem is the reason
 * (and is taken), an unreadable first record says why, a readable one is checked. */
static void test_ownership_pass_decides_from_facts(void **state) {
        _cleanup_(owner_cache_done) OwnerCache cache = {};
        Session s[3] = { { .id = PASS_ID0 }, { .id = PASS_ID1 }, { .id = PASS_ID2 } };
        OwnerFacts f[3] = {
                { .problem = strdup("not a regular file (fifo)") },
                { .head_ok = true,
                  .head = { .session_id = strdup(PASS_ID1), .cwd = strdup("/srv/a") } },
                { .head_why = "first record unreadable" },
        };
        ClaimSet claims = {};
        (void)state;

        assert_non_null(f[0].problem);
        assert_int_equal(owner_pass(s, f, ELEMENTSOF(s), "-srv-a", &claims, &cache), 0);
        assert_int_equal(s[0].owner, OWNER_UNVERIFIED);
        assert_string_equal(owner_text(&s[0]), "not a regular file (fifo)");
        assert_null(f[0].problem);
        assert_null(s[0].cwd);
        assert_int_equal(s[1].owner, OWNER_OK);
        assert_string_equal(s[1].cwd, "/srv/a");
        assert_string_equal(s[1].hash,
                            "b068a6cef8334eebe19e2f82e1599894124d282d70224287abc4327dcc812316");
        assert_int_equal(s[2].owner, OWNER_UNVERIFIED);
        assert_string_equal(owner_text(&s[2]), "first record unreadable");
        for (size_t i = 0; i < ELEMENTSOF(s); i++) {
                owner_facts_done(&f[i]);
                inventory_session_done(&s[i]);
        }
}

/* The enrichment pass reads what the scan listed, and only that: a worktree sidecar the scan
 * listed (its worktreePath exists or not), a compressed one (not read: live), one the scan did
 * not list (not read); tasks and prompt-history rows of the session's hash, read once; the
 * organization entry. */
static void test_enrich_pass_reads_what_the_scan_listed(void **state) {
        Fx *fx = *state;
        _cleanup_(enrich_cache_done) EnrichCache cache = {};
        _cleanup_free_ char *exists = NULL, *tmp = NULL, *chats = NULL;
        _cleanup_close_ int tmp_fd = -EBADF, chats_fd = -EBADF;
        Session s[4] = { { .id = PASS_ID0 }, { .id = PASS_ID1 }, { .id = PASS_ID2 },
                         { .id = PASS_ID3 } };
        EnrichFacts f[4] = {
                { .worktree_cold = true },
                { .worktree = { true }, .worktree_id = { PASS_ID1 } },
                { .worktree = { true }, .worktree_id = { PASS_ID2 } },
                { .worktree = { false }, .worktree_id = { PASS_ID3 } },
        };
        json_object *org = json_tokener_parse("{\"" PASS_ID1 "\": {\"pinnedAt\": \"x\"}, \""
                                              PASS_ID2 "\": {\"color\": \"red\"}}");
        char wt[PATH_MAX + 64];

        exists = fixture_path(fx->root, "exists");
        assert_int_equal(fixture_mkdir(fx->root, "exists"), 0);
        snprintf(wt, sizeof wt, "{\"worktreePath\": \"%s\"}", exists);
        assert_int_equal(fixture_write(fx->root, "c/" PASS_ID1 ".worktree.json", wt), 0);
        assert_int_equal(fixture_write(fx->root, "c/" PASS_ID2 ".worktree.json",
                                       "{\"worktreePath\": \"/nonexistent/qgc-test\"}"),
                         0);
        assert_int_equal(fixture_write(fx->root, "c/" PASS_ID3 ".worktree.json", wt), 0);
        assert_int_equal(fixture_write(fx->root, "t/" PASS_HASH "/scheduled_tasks.json",
                                       "[{\"sessionId\": \"" PASS_ID1 "\"}]"),
                         0);
        assert_int_equal(fixture_write(fx->root, "t/" PASS_HASH "/logs.json",
                                       "[{\"sessionId\": \"" PASS_ID1 "\"}, {\"sessionId\": \""
                                       PASS_ID1 "\"}, {\"sessionId\": \"" PASS_ID2 "\"}]"),
                         0);
        chats = fixture_path(fx->root, "c");
        tmp = fixture_path(fx->root, "t");
        chats_fd = open(chats, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(chats_fd >= 0 && tmp_fd >= 0);
        for (size_t i = 1; i < 3; i++)
                s[i].hash = strdup(PASS_HASH);

        EnrichProject p = { .tmp_fd = tmp_fd, .chats_fd = chats_fd, .archive_fd = -EBADF,
                            .review_fd = -EBADF, .org = org };
        assert_int_equal(enrich_pass(&p, s, f, ELEMENTSOF(s), &cache), 0);
        assert_true(s[0].live_worktree);
        assert_true(s[1].live_worktree);
        assert_false(s[2].live_worktree);
        assert_false(s[3].live_worktree); /* not listed by the scan: not read */
        assert_int_equal(s[1].n_tasks, 1);
        assert_int_equal(s[1].n_log_rows, 2);
        assert_int_equal(s[2].n_tasks, 0);
        assert_int_equal(s[2].n_log_rows, 1);
        assert_int_equal(s[3].n_log_rows, 0); /* no hash: no tmp/<hash>/ */
        assert_int_equal(cache.n_tasks, 1);
        assert_true(s[1].pinned && s[1].org_entry && !s[1].grouped);
        assert_true(s[2].grouped && !s[2].pinned);
        assert_false(s[0].org_entry);
        json_object_put(org);
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                inventory_session_done(&s[i]);
}

/* The liveness pass: without a probe every session is undecidable; subagents not listed in full
 * make a session undecidable too, after the probe's signals. */
static void test_live_pass_without_probe_and_incomplete_subagents(void **state) {
        Fx *fx = *state;
        _cleanup_(live_probe_freep) LiveProbe *probe = NULL;
        Session s[2] = { { .id = PASS_ID0 }, { .id = PASS_ID1 } };
        LiveFacts f[2] = { { .subagents_incomplete = false }, { .subagents_incomplete = true } };
        ClaimSet claims = {};
        _cleanup_(inventory_tree_done) Tree t = {};

        assert_int_equal(live_pass(NULL, s, f, ELEMENTSOF(s), &claims), 0);
        for (size_t i = 0; i < ELEMENTSOF(s); i++) {
                assert_int_equal(s[i].live, LIVE_UNKNOWN);
                assert_string_equal(s[i].live_reason, "liveness probe unavailable");
                inventory_session_done(&s[i]);
                s[i] = (Session){};
        }
        memcpy(s[0].id, PASS_ID0, sizeof(PASS_ID0));
        memcpy(s[1].id, PASS_ID1, sizeof(PASS_ID1));
        assert_int_equal(qwen_store.tree_from_dir(fx->qwen, &t), 0);
        assert_int_equal(live_probe_new(&t, &probe), 0);
        assert_int_equal(live_pass(probe, s, f, ELEMENTSOF(s), &claims), 0);
        assert_int_equal(s[0].live, 0);
        assert_null(s[0].live_reason);
        assert_int_equal(s[1].live, LIVE_UNKNOWN);
        assert_string_equal(s[1].live_reason, "subagents/ could not be listed");
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                inventory_session_done(&s[i]);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fixture_corpus_setup, fixture_corpus_teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                T(test_scan_corpus_every_session_owned),
                T(test_scan_corpus_collision_two_hashes),
                T(test_scan_corpus_sizes_include_sidecars),
                T(test_scan_corpus_scheduled_task_unbound),
                T(test_scan_tasks_bound_by_session_id),
                T(test_scan_organisation_pinned_grouped),
                T(test_scan_worktree_sidecar_live),
                T(test_scan_dry_run_keeps_atimes),
                T(test_scan_hostile_entries_reasons),
                T(test_scan_hostile_symlinked_chats_not_followed),
                T(test_scan_conflict_both_copies),
                T(test_scan_title_read_where_the_policy_could_select),
                T(test_scan_orphans),
                T(test_scan_orphans_across_trees),
                T(test_scan_orphans_shared_id),
                T(test_scan_orphans_incomplete_kept),
                T(test_scan_jobs_same_inventory),
                T(test_scan_prefetch_same_inventory),
                T(test_scan_prefetch_starts_on_a_cold_read),
                T(test_scan_missing_root_is_error_others_scanned),
                T(test_scan_live_registry_own_pid),
                T(test_scan_live_registry_other_namespace_unknown),
                T(test_scan_live_registry_other_namespace_other_boot_dead),
                T(test_scan_live_claims),
                T(test_json_inputs_read_as_json_parse),
                T(test_scan_json_parse_keeps_what_qwen_cannot_read),
                T(test_scan_live_writer_locks),
                T(test_scan_last_write_from_subagents),
                T(test_live_check_rereads_registry_and_claims),
                T(test_claims_load_sort_range_of_a_directory),
                T(test_live_probe_refresh_reads_only_changes),
                cmocka_unit_test(test_roots_resolve_default),
                cmocka_unit_test(test_roots_resolve_env_expansion),
                cmocka_unit_test(test_roots_resolve_relative_against_cwd),
                T(test_roots_resolve_settings_runtime_dir),
                cmocka_unit_test(test_inventory_find_case_insensitive_indexed),
                cmocka_unit_test(test_inventory_to_string),
                cmocka_unit_test(test_inventory_add_session_interns_strings),
                cmocka_unit_test(test_inventory_sort_blocks),
                cmocka_unit_test(test_owner_check_cached_matches_uncached),
                T(test_fixture_build_and_snapshot),
                cmocka_unit_test(test_ownership_pass_decides_from_facts),
                T(test_enrich_pass_reads_what_the_scan_listed),
                T(test_live_pass_without_probe_and_incomplete_subagents),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
