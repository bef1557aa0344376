/* test_deepcode.c: the read side of a Deep Code store (src/deepcode/): getProjectCode() against
 * vectors computed by Deep Code 0.2.1's own getProjectCode() (node on
 * tests/realdeepcode/deepcode-cli-038b3ed.tar.gz's build), a small store written here, the
 * process evidence with a real child process, and the corpus the real CLI wrote
 * (tests/data/deepcode/home.tar.gz, judged by dc-check.mjs: 5 projects, 58 sessions, 281
 * messages, 61 undo targets). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dc-messages.h"
#include "dc-process.h"
#include "dc-project.h"
#include "dc-store.h"
#include "fixture.h"
#include "inventory.h"
#include "macro.h"
#include "testdata.h"

#define NOW ((msec_t)1800000000000)

/* getProjectCode(path) as Deep Code 0.2.1 computed it. */
static const struct {
        const char *path, *code;
} vectors[] = {
        { "/srv/deepcode-demo/work/webapp", "-srv-deepcode-demo-work-webapp" },
        { "/srv/deepcode-demo/work/my project ñandú", "-srv-deepcode-demo-work-my project ñandú" },
        { "/srv/deepcode-demo/work/clients/acme-industries/platform/services/Überweisung Service (billing)",
          "berweisung-Service-billing-986ff60a9985f2bd" },
        { "C:\\Users\\me\\proj", "C-Users-me-proj" },
        { "/a/b:c", "-a-bc" },
        { "relative/dir", "relative-dir" },
        { "/", "-" },
        /* 64 units: the legacy code; 65: hashed */
        { "/home/u/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
          "-home-u-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" },
        { "/home/u/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-1d1cfc9744767f55" },
        /* UTF-16 units, not bytes or code points: 1 + 31 * 2 + 1 = 64 units, then 65 */
        { "/😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀a",
          "-😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀a" },
        { "/😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀", "project-d7c2ad2350647f0e" },
        { "/😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀", "project-16f8588db793c161" },
        /* path.resolve() first: "..", ".", "//" and the trailing '/' */
        { "/home/user/projects/very/long/path/that/goes/on/and/on/for/ever/../..//./résumé 😀 app/",
          "r-sum-app-70776c63023a3916" },
        { "/tmp/wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww/..", "tmp-e9671acd244849c5" },
        /* the basename sanitized: nothing left, [-.] trimmed, runs of '-' one, 47 units */
        { "/üüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüü",
          "project-5f13baddd66ca2d1" },
        { "/tmp/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz/日本語", "project-bdff26061ab7b703" },
        { "/tmp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/-.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b--.b-...",
          "b-.b-.b-.b-.b-.b-.b-.b-.b-.b-.b-.b-.b-.b-.b-.b-daa0d3715d36d6d2" },
        { "/tmp/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq/ééééééééééabc--------------------------------------------------def",
          "abc-def-9cf0db8a4494c7f8" },
        { "/tmp/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk/mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm",
          "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm-3c545cf66795e56f" },
};

static void test_dc_project_code(void **state) {
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(vectors); i++) {
                _cleanup_free_ char *code = NULL;

                assert_int_equal(dc_project_code(vectors[i].path, &code), 0);
                assert_string_equal(code, vectors[i].code);
        }
}

/* No code can be proven for a long relative path or ill-formed UTF-8. */
static void test_dc_project_code_refused(void **state) {
        char *code = NULL;

        (void)state;
        assert_int_equal(dc_project_code("relative/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                                         &code), -EINVAL);
        assert_int_equal(dc_project_code("/a/\xff", &code), -EINVAL);
        assert_int_equal(dc_project_code("/a/\xed\xa0\x80", &code), -EINVAL); /* a surrogate */
        assert_null(code);
}

static const DcProject *find_project(const DcStore *s, const char *code) {
        for (size_t i = 0; i < s->n_projects; i++)
                if (streq(s->projects[i].code, code))
                        return &s->projects[i];
        fail_msg("no project %s", code);
        return NULL;
}

static const DcSession *find_session(const DcProject *p, const char *id) {
        for (size_t i = 0; i < p->n_sessions; i++)
                if (streq(p->sessions[i].id, id))
                        return &p->sessions[i];
        fail_msg("no session %s", id);
        return NULL;
}

#define ID_A "aaaaaaaa-0000-4000-8000-000000000001"
#define ID_B "bbbbbbbb-0000-4000-8000-000000000002"
#define ID_C "cccccccc-0000-4000-8000-000000000003"
#define ID_D "dddddddd-0000-4000-8000-000000000004"
#define ID_E "eeeeeeee-0000-4000-8000-000000000005"
#define H1 "0f4e0e6a8069e5f7a9cfb5e651447fdf9275e201"
#define H2 "75ba3a8c0000000000000000000000000000abcd"
#define P "projects/-nonexistent-qgc-dc-proj/"

static void test_dc_store_fixture(void **state) {
        const char *root = *state;
        _cleanup_free_ char *store_path = fixture_path(root, "s/.deepcode");
        DcStore *s = NULL;
        const DcProject *p;
        const DcSession *a, *b, *c, *d, *e;
        Inventory *inv = NULL;
        Tree t = { .global_dir = strdup("x"), .runtime_dir = strdup("x") };
        size_t ti;
        char idx[2048];

        (void)snprintf(idx, sizeof(idx),
                       "{\n  \"version\": 1,\n  \"entries\": [\n"
                       "    {\"id\": \"%s\", \"summary\": \"Set up the login\", \"status\": \"completed\","
                       " \"createTime\": \"2026-12-05T01:24:00.000Z\", \"updateTime\": \"2026-12-05T01:25:00.000Z\"},\n"
                       "    {\"id\": \"%s\", \"summary\": \"My renamed chat\", \"status\": \"processing\","
                       " \"createTime\": \"2026-12-05T01:24:00.000Z\", \"updateTime\": \"%s\","
                       " \"forkedFrom\": {\"sessionId\": \"%s\", \"messageId\": \"m1\"}},\n"
                       "    {\"id\": \"%s\", \"summary\": \"x\", \"status\": \"bogus\"},\n"
                       "    {\"id\": 7}\n  ],\n  \"originalPath\": \"/nonexistent/qgc-dc/proj\"\n}",
                       ID_A, ID_B, "2027-01-15T08:00:00.000Z", ID_A, ID_C);
        assert_int_equal(fixture_write(root, "s/.deepcode/" P "sessions-index.json", idx), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/" P ID_A ".jsonl",
                "{\"id\":\"m0\",\"sessionId\":\"" ID_A "\",\"role\":\"system\",\"content\":\"sys\"}\n"
                "\n"
                "{\"id\":\"m1\",\"sessionId\":\"" ID_A "\",\"role\":\"user\",\"content\":\"Set up the login page.\","
                "\"meta\":{\"userPrompt\":{\"text\":\"Set up the login page.\"}},\"checkpointHash\":\"" H1 "\"}\r\n"
                "{\"id\":\"m2\",\"sessionId\":\"" ID_A "\",\"role\":\"user\",\"content\":\"more\",\"checkpointHash\":\"" H2 "\"}\n"
                "{\"id\":\"m3\",\"sessionId\":\"" ID_A "\",\"role\":\"assistant\",\"checkpointHash\":\"" H1 "\"}\n"
                "{\"id\":\"m4\",\"sessionId\":\"" ID_A "\",\"role\":\"user\",\"checkpointHash\":\"not-a-hash\"}\n"), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/" P ID_B ".jsonl",
                "{\"id\":\"m1\",\"sessionId\":\"" ID_B "\",\"role\":\"user\",\"content\":\"Set up the login page.\"}\n"
                "{\"id\":\"m2\",\"sessionId\":\"" ID_B "\",\"role\":\"assistant\",\"content\":\"no newline\"}"), 0);
        /* C: a message of another session */
        assert_int_equal(fixture_write(root, "s/.deepcode/" P ID_C ".jsonl",
                "{\"id\":\"m1\",\"sessionId\":\"" ID_C "\",\"role\":\"user\"}\n"
                "{\"id\":\"m2\",\"sessionId\":\"" ID_A "\",\"role\":\"user\"}\n"), 0);
        /* a sessionId written with escapes is the same string; one with a NUL is not */
        assert_int_equal(fixture_write(root, "s/.deepcode/projects/-elsewhere/" ID_B ".jsonl",
                "{\"sessionId\":\"\\u0062bbbbbbb-0000-4000-8000-000000000002\"}\n"), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/projects/-elsewhere/" ID_C ".jsonl",
                "{\"sessionId\":\"" ID_C "\\u0000x\"}\n"), 0);
        /* D: a .jsonl the index does not name; E: images/<id>/ alone */
        assert_int_equal(fixture_write(root, "s/.deepcode/" P ID_D ".jsonl",
                "{\"id\":\"m1\",\"sessionId\":\"" ID_D "\",\"role\":\"user\",\"checkpointHash\":\"" H2 "\"}\n"), 0);
        assert_int_equal(fixture_write_size(root, "s/.deepcode/" P "images/" ID_A "/1.png", 1000), 0);
        assert_int_equal(fixture_write_size(root, "s/.deepcode/" P "images/" ID_E "/2.png", 300), 0);
        assert_int_equal(fixture_write_size(root, "s/.deepcode/" P "file-history/.git/objects/0f/4e0e", 77), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/" P "file-history/.git/HEAD", "ref: refs/heads/master\n"), 0);
        /* an index whose originalPath does not map to its directory; a malformed one */
        assert_int_equal(fixture_write(root, "s/.deepcode/projects/-elsewhere/sessions-index.json",
                "{\"version\":1,\"entries\":[{\"id\":\"" ID_A "\"}],\"originalPath\":\"/other\"}"), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/projects/-elsewhere/" ID_A ".jsonl",
                "{\"sessionId\":\"" ID_A "\"}\n"), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/projects/-broken/sessions-index.json",
                "\xef\xbb\xbf{\"version\":1,\"entries\":[],\"originalPath\":\"/broken\"}"), 0);
        assert_int_equal(fixture_write(root, "s/.deepcode/logs/error.log", "{}\n"), 0);
        /* past the limits: an index over DC_INDEX_MAX, a line over DC_LINE_MAX */
        assert_int_equal(fixture_write_size(root, "s/.deepcode/projects/-huge/sessions-index.json",
                                            DC_INDEX_MAX + 1), 0);
        assert_int_equal(fixture_write_size(root, "s/.deepcode/projects/-huge/" ID_A ".jsonl",
                                            DC_LINE_MAX + 1), 0);
        assert_int_equal(fixture_set_mtime(root, "s/.deepcode/" P ID_A ".jsonl", 1700000000), 0);
        assert_int_equal(fixture_set_mtime(root, "s/.deepcode/" P "images/" ID_A "/1.png", 1700000100), 0);
        assert_int_equal(fixture_set_mtime(root, "s/.deepcode/" P "images/" ID_A, 1700000050), 0);

        assert_int_equal(dc_store_scan(store_path, NOW, &s), 0);
        assert_int_equal(s->n_projects, 4);
        assert_true(s->error_log.present);
        assert_int_equal(s->error_log.size, 3);
        p = find_project(s, "-nonexistent-qgc-dc-proj");
        assert_int_equal(p->index_state, DC_INDEX_OK);
        assert_string_equal(p->original_path, "/nonexistent/qgc-dc/proj");
        assert_true(p->code_proven);
        assert_int_equal(p->root, DC_ROOT_GONE);
        assert_int_equal(p->live, 0);
        assert_int_equal(p->n_nameless, 1);
        assert_int_equal(p->n_sessions, 5);
        assert_true(p->has_file_history);
        assert_true(p->file_history.bytes > 77 + 23);
        assert_false(p->images_empty);
        assert_true(p->index.present);

        a = find_session(p, ID_A);
        assert_true(a->indexed && a->proven);
        assert_null(a->why);
        assert_false(a->summary_manual);
        assert_int_equal(a->status, DC_STATUS_COMPLETED);
        assert_int_equal(a->messages.n_messages, 5);
        assert_int_equal(a->messages.n_checkpoints, 2);
        assert_string_equal(a->messages.checkpoints[0], H1);
        assert_string_equal(a->messages.checkpoints[1], H2);
        assert_true(a->has_images);
        assert_true(a->images.bytes >= 1000);
        assert_int_equal(a->last_write, (msec_t)1700000100 * 1000);
        assert_int_equal(a->live, 0);
        assert_false(a->messages.tail_incomplete);

        b = find_session(p, ID_B);
        assert_true(b->indexed && b->proven);
        assert_true(b->summary_manual);
        assert_string_equal(b->forked_from, ID_A);
        assert_int_equal(b->status, DC_STATUS_PROCESSING);
        assert_int_equal(b->live, DC_LIVE_STATUS); /* updateTime after NOW */
        assert_true(b->messages.tail_incomplete);

        c = find_session(p, ID_C);
        assert_true(c->indexed);
        assert_false(c->proven);
        assert_string_equal(c->why, "line 2: its sessionId is not " ID_C);
        assert_int_equal(c->status, DC_STATUS_PENDING);

        d = find_session(p, ID_D);
        assert_false(d->indexed);
        assert_true(d->proven); /* the messages are its own; the index does not list it */
        assert_int_equal(d->messages.n_checkpoints, 1);

        e = find_session(p, ID_E);
        assert_false(e->indexed || e->jsonl.present);
        assert_true(e->has_images);

        p = find_project(s, "-elsewhere");
        assert_false(p->code_proven);
        assert_false(p->sessions[0].proven);
        assert_true(find_session(p, ID_B)->messages.proven);
        assert_false(find_session(p, ID_C)->messages.proven);
        p = find_project(s, "-broken");
        assert_int_equal(p->index_state, DC_INDEX_MALFORMED); /* a BOM: JSON.parse refuses it */
        assert_null(p->original_path);
        p = find_project(s, "-huge");
        assert_int_equal(p->index_state, DC_INDEX_TOO_BIG);
        assert_false(p->sessions[0].proven || p->sessions[0].messages.complete);
        assert_string_equal(p->sessions[0].why, "line 1 is 16777216 bytes or longer");

        /* the store-neutral records */
        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(inventory_add_tree(inv, &t, &ti), 0);
        assert_int_equal(dc_store_inventory(s, inv, ti, NOW), 0);
        /* A, B, C, -elsewhere's 3 and -huge's; not D (an orphan: proven, unindexed), not E */
        assert_int_equal(inv->n_sessions, 7);
        assert_int_equal(dc_store_orphans(s, inv, ti), 0);
        /* error.log is 3 bytes: not reported; two projects of a vanished originalPath */
        assert_int_equal(inv->n_orphans, 4);
        for (size_t i = 0, n_stale = 0; i < 4; i++) {
                const Orphan *o = &inv->orphans[i];

                if (o->kind == ORPHAN_STALE_PROJECT) {
                        assert_string_equal(o->project_dir, "projects");
                        assert_string_equal(o->stale_why,
                                            streq(o->name, "-elsewhere") ?
                                            "its index does not prove the project's directory" :
                                            "a session is not proven the project's");
                        assert_true(++n_stale <= 2);
                        continue;
                }
                assert_string_equal(o->project_dir, "-nonexistent-qgc-dc-proj");
                if (o->kind == ORPHAN_DC_UNINDEXED) {
                        assert_string_equal(o->name, ID_D);
                        assert_true(o->dir.present && o->bytes == d->jsonl.size);
                } else {
                        assert_int_equal(o->kind, ORPHAN_DC_IMAGES);
                        assert_string_equal(o->name, "images/" ID_E);
                        assert_true(o->bytes >= 300);
                }
        }
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *r = &inv->sessions[i];

                if (streq(r->id, ID_A) && streq(r->project_dir, "-nonexistent-qgc-dc-proj")) {
                        assert_int_equal(r->owner, OWNER_OK);
                        assert_string_equal(r->cwd, "/nonexistent/qgc-dc/proj");
                        assert_string_equal(r->title, "Set up the login");
                        assert_false(r->title_manual);
                        assert_int_equal(r->bytes, r->transcript_bytes + a->images.bytes);
                } else if (streq(r->id, ID_B) && streq(r->project_dir, "-nonexistent-qgc-dc-proj")) {
                        assert_int_equal(r->owner, OWNER_OK);
                        assert_true(r->title_manual);
                        assert_int_equal(r->live, LIVE_CLAIM);
                        assert_true(r->tail_incomplete);
                        assert_non_null(strstr(r->live_reason, "processing"));
                } else {
                        assert_int_equal(r->owner, OWNER_UNVERIFIED);
                        assert_non_null(r->owner_detail);
                }
        }
        inventory_free(inv);
        dc_store_free(s);
}

/* Lines longer than the reader's chunk and first buffer, cut across reads. */
static void test_dc_messages_long_lines(void **state) {
        const char *root = *state;
        _cleanup_free_ char *pad = malloc(300001), *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        DcMessages m;

        assert_non_null(pad);
        memset(pad, 'p', 300000);
        pad[300000] = 0;
        text = util_strprintf("{\"sessionId\":\"" ID_A "\",\"content\":\"%s\"}\n"
                              "{\"sessionId\":\"" ID_A "\",\"content\":\"%.70000s\"}\r\n"
                              "{\"content\":\"%.1000s\",\"sessionId\":\"" ID_A
                              "\",\"checkpointHash\":\"%s\"}\n",
                              pad, pad, pad, "ABCDEF0123456789ABCDEF0123456789ABCDEF01");
        assert_int_equal(fixture_write(root, ID_A ".jsonl", text), 0);
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(dc_messages_read(fd, ID_A, &m), 0);
        assert_true(m.complete && m.proven);
        assert_false(m.tail_incomplete);
        assert_int_equal(m.n_messages, 3);
        assert_int_equal(m.n_checkpoints, 1);
        assert_string_equal(m.checkpoints[0], "abcdef0123456789abcdef0123456789abcdef01");
        assert_int_equal(m.file.size, strlen(text));
        dc_messages_done(&m);
        assert_int_equal(dc_messages_read(fd, ID_B, &m), -ENOENT);
}

/* sessions-index.json is read at exactly DC_INDEX_MAX bytes and refused one byte past it. */
static void test_dc_index_at_max_and_one_past(void **state) {
        const char *root = *state;
        const char *head = "{\"version\":1,\"entries\":[{\"id\":\"" ID_A "\"}],\"originalPath\":\"/x\"";
        size_t n = DC_INDEX_MAX;
        _cleanup_free_ char *text = malloc(n + 2);
        _cleanup_close_ int fd = -EBADF;
        DcIndex idx;

        assert_non_null(text);
        /* JSON's whitespace pads the object to the limit: the text is valid at any size */
        memcpy(text, head, strlen(head));
        memset(text + strlen(head), ' ', n - strlen(head) - 1);
        text[n - 1] = '}';
        text[n] = 0;
        assert_int_equal(fixture_write(root, "sessions-index.json", text), 0);
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(dc_index_read(fd, &idx), 0);
        assert_int_equal(idx.state, DC_INDEX_OK);
        assert_int_equal(idx.n_entries, 1);
        assert_string_equal(idx.entries[0].id, ID_A);
        assert_string_equal(idx.original_path, "/x");
        dc_index_done(&idx);

        text[n - 1] = ' ';
        text[n] = '}';
        text[n + 1] = 0;
        assert_int_equal(fixture_write(root, "sessions-index.json", text), 0);
        assert_int_equal(dc_index_read(fd, &idx), 0);
        assert_int_equal(idx.state, DC_INDEX_TOO_BIG);
        assert_int_equal(idx.n_entries, 0);
        dc_index_done(&idx);
}

/* A process naming Deep Code whose cwd is the project's root makes the project live. */
static void test_dc_store_process(void **state) {
        const char *root = *state;
        _cleanup_free_ char *store_path = fixture_path(root, ".deepcode");
        _cleanup_free_ char *work = fixture_path(root, "work/proj"), *code = NULL, *rel = NULL;
        _cleanup_free_ char *idx = NULL;
        DcStore *s = NULL;
        pid_t pid;

        assert_int_equal(fixture_mkdir(root, "work/proj"), 0);
        assert_int_equal(dc_project_code(work, &code), 0);
        rel = util_strprintf(".deepcode/projects/%s/sessions-index.json", code);
        idx = util_strprintf(
                "{\"version\":1,\"entries\":[{\"id\":\"%s\",\"status\":\"completed\"}],"
                "\"originalPath\":\"%s\"}",
                ID_A, work);
        assert_int_equal(fixture_write(root, rel, idx), 0);
        pid = dc_process_start(work);
        assert_int_equal(dc_store_scan(store_path, NOW, &s), 0);
        dc_process_stop(pid);
        assert_int_equal(s->n_projects, 1);
        assert_true(s->projects[0].code_proven);
        assert_int_equal(s->projects[0].root, DC_ROOT_EXISTS);
        assert_int_equal(s->projects[0].live, DC_LIVE_PROCESS);
        assert_int_equal(s->projects[0].live_pid, pid);
        assert_int_equal(s->projects[0].sessions[0].live, DC_LIVE_PROCESS);
        dc_store_free(s);
}

/* du's two numbers of a directory. */
static void du(const char *dir, bool apparent, uint64_t *ret) {
        _cleanup_free_ char *cmd =
                util_strprintf("du -s -B1 %s '%s'", apparent ? "--apparent-size" : "", dir);
        FILE *f = popen(cmd, "r");
        unsigned long long v = 0;

        assert_non_null(f);
        assert_int_equal(fscanf(f, "%llu", &v), 1);
        assert_int_equal(pclose(f), 0);
        *ret = v;
}

/* The store the real Deep Code 0.2.1 wrote (tests/data/deepcode/): every project's code proven,
 * every session proven and its checkpoints found, the counts dc-check.mjs reports. */
static void test_dc_store_corpus(void **state) {
        const char *root = *state;
        _cleanup_free_ char *tarball = test_data_path("deepcode/home.tar.gz");
        _cleanup_free_ char *cmd = util_strprintf("tar xzf '%s' -C '%s'", tarball, root);
        _cleanup_free_ char *store_path = fixture_path(root, "home/.deepcode");
        size_t n = 0, msgs = 0, cps = 0, indexed = 0;
        uint64_t bytes, alloc;
        DcStore *s = NULL;
        const DcProject *p;

        assert_int_equal(system(cmd), 0);
        assert_int_equal(dc_store_scan(store_path, NOW, &s), 0);
        assert_false(s->incomplete);
        assert_int_equal(s->n_projects, 5);
        for (size_t i = 0; i < s->n_projects; i++) {
                p = &s->projects[i];
                assert_int_equal(p->index_state, DC_INDEX_OK);
                assert_true(p->code_proven);
                assert_int_equal(p->root, DC_ROOT_GONE);
                assert_true(p->has_file_history);
                assert_true(p->file_history.bytes > 0);
                assert_false(p->incomplete || p->total.incomplete);
                for (size_t j = 0; j < p->n_sessions; j++) {
                        const DcSession *d = &p->sessions[j];

                        assert_true(d->proven);
                        assert_true(d->indexed); /* no orphan file in this store */
                        assert_true(d->jsonl.present);
                        assert_false(d->summary_manual);
                        assert_true(d->messages.complete);
                        indexed++;
                        msgs += d->messages.n_messages;
                        cps += d->messages.n_checkpoints;
                        n += d->has_images;
                }
        }
        assert_int_equal(indexed, 58);
        assert_int_equal(msgs, 281);
        assert_int_equal(cps, 61);
        assert_int_equal(n, 1); /* the PNG prompt of "my project ñandú" */
        p = find_project(s, "-srv-deepcode-demo-work-busy");
        assert_int_equal(p->n_sessions, 50); /* Deep Code's cap */
        assert_true(p->images_empty);        /* what the cap left of images/ */
        p = find_project(s, "-srv-deepcode-demo-work-webapp");
        assert_string_equal(find_session(p, "ee4d9d2d-c295-4317-96f1-f5ea2c929a74")->forked_from,
                            "458313f1-0b4f-420b-9d20-b6c7a466945d");
        assert_int_equal(find_session(p, "72cee8f0-20db-42b4-868e-8c3b65c70415")->status,
                         DC_STATUS_FAILED);
        find_project(s, "berweisung-Service-billing-986ff60a9985f2bd");
        find_project(s, "-srv-deepcode-demo-work-my project ñandú");
        /* the store's total is what du says */
        du(store_path, true, &bytes);
        du(store_path, false, &alloc);
        assert_int_equal(s->total.bytes, bytes);
        assert_int_equal(s->total.alloc, alloc);
        dc_store_free(s);
}

/* dc_index_id_valid(): the one id rule, at its bounds. */
static void test_dc_index_id_valid_bounds(void **state) {
        char id[DC_INDEX_ID_MAX + 2];

        (void)state;
        memset(id, 'a', sizeof(id));
        assert_true(dc_index_id_valid(id, DC_INDEX_ID_MAX));
        assert_false(dc_index_id_valid(id, DC_INDEX_ID_MAX + 1));
        assert_false(dc_index_id_valid(id, 0));
        assert_false(dc_index_id_valid(NULL, 0));
        assert_true(dc_index_id_valid("notes-1", 7));
        assert_true(dc_index_id_valid("aaaaaaaa-0000-4000-8000-000000000001", 36));
        assert_true(dc_index_id_valid("a.b", 3));
        assert_false(dc_index_id_valid(".a", 2));
        assert_false(dc_index_id_valid("a/b", 3));
        assert_false(dc_index_id_valid("a\nb", 3));
        assert_false(dc_index_id_valid("a\x7f", 2));
        assert_false(dc_index_id_valid("a\0b", 3));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dc_index_id_valid_bounds),
                cmocka_unit_test(test_dc_project_code),
                cmocka_unit_test(test_dc_project_code_refused),
                cmocka_unit_test_setup_teardown(test_dc_store_fixture, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_messages_long_lines, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_index_at_max_and_one_past, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_store_process, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_store_corpus, fixture_root_setup,
                                                fixture_root_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
