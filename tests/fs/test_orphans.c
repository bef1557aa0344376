/* test_orphans.c: orphans.c on real trees: the look for a transcript of an id in every runtime
 * root (chats/, chats/archive/, the cold tier's .jsonl.zst, either case, through a symlinked
 * project as Qwen follows one, failing closed), and orphans_reclaim()'s re-checks before it
 * removes file-history/<id>/ or subagents/<id>/ (the identity the scan saw, no transcript now)
 * or an empty project (rmdir only: never a project with something left in it). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "fs.h"
#include "inventory.h"
#include "macro.h"
#include "orphans.h"
#include "testdata.h"

#define ID "aaaaaaaa-0000-4000-8000-000000000001"
#define ID_UPPER "AAAAAAAA-0000-4000-8000-000000000001"

static bool anywhere(const char *root, const char *rel, const char *id) {
        _cleanup_close_ int fd = test_open_dir(root, rel);
        return orphans_transcript_anywhere(&fd, 1, id);
}

/* An Orphan as the scan leaves it: kind, name and the identity of root/rel/name. */
static Orphan orphan_of(const char *root, const char *rel, const char *name, OrphanKind kind) {
        _cleanup_free_ char *r = util_strprintf("%s/%s", rel, name);
        _cleanup_free_ char *p = fixture_path(root, r);
        Orphan o = { .kind = kind, .name = (char *)name };
        struct stat st;

        assert_int_equal(lstat(p, &st), 0);
        fs_fileid_from_stat(&o.dir, &st);
        return o;
}

static void count_step(void *userdata, const char *step) {
        (void)step;
        (*(unsigned *)userdata)++;
}

static void test_orphans_transcript_places(void **state) {
        const char *root = *state;
        static const char *const places[] = {
                "r/projects/-p/chats/" ID ".jsonl",
                "r/projects/-p/chats/archive/" ID ".jsonl",
                "r/projects/-p/chats/archive/.qgc-cold/" ID ".jsonl.zst",
                "r/projects/-p/chats/" ID_UPPER ".jsonl",
                "r/projects/-p/chats/archive/" ID_UPPER ".jsonl",
        };

        /* no projects/ at all: nothing anywhere */
        assert_int_equal(fixture_mkdir(root, "r"), 0);
        assert_false(anywhere(root, "r", ID));
        /* a project with sidecars only, another project, hidden entries: still nothing */
        assert_int_equal(fixture_write(root, "r/projects/-p/chats/" ID ".worktree.json", "{}"), 0);
        assert_int_equal(fixture_write(root, "r/projects/-p/chats/" ID ".1.runtime.json", "{}"), 0);
        assert_int_equal(fixture_write(root, "r/projects/-p/chats/" ID ".jsonl.tmp", ""), 0);
        assert_int_equal(fixture_write(root, "r/projects/-q/chats/bbbbbbbb-0000-4000-8000-000000000002.jsonl", "{}\n"), 0);
        assert_int_equal(fixture_write(root, "r/projects/.hidden/chats/" ID ".jsonl", "{}\n"), 0);
        assert_int_equal(fixture_mkdir(root, "r/projects/-nochats"), 0);
        assert_int_equal(fixture_write(root, "r/projects/afile", ""), 0);
        assert_false(anywhere(root, "r", ID));

        for (size_t i = 0; i < ELEMENTSOF(places); i++) {
                _cleanup_free_ char *p = fixture_path(root, places[i]);

                assert_int_equal(fixture_write(root, places[i], "{}\n"), 0);
                if (!anywhere(root, "r", ID))
                        fail_msg("%s not found", places[i]);
                /* the id's case in the question does not matter either */
                assert_true(anywhere(root, "r", ID_UPPER));
                assert_int_equal(unlink(p), 0);
                assert_false(anywhere(root, "r", ID));
        }
}

/* A project that is a symlink is followed (Qwen lists it); a dangling one or one to a file is
 * no project. */
static void test_orphans_transcript_symlinked_project(void **state) {
        const char *root = *state;
        _cleanup_free_ char *elsewhere = fixture_path(root, "elsewhere/-p");

        assert_int_equal(fixture_mkdir(root, "r/projects"), 0);
        assert_int_equal(fixture_symlink(root, "r/projects/-dangling", "/nonexistent/qgc-x"), 0);
        assert_int_equal(fixture_write(root, "afile", ""), 0);
        assert_int_equal(fixture_symlink(root, "r/projects/-file", "../../afile"), 0);
        assert_false(anywhere(root, "r", ID));
        assert_int_equal(fixture_write(root, "elsewhere/-p/chats/" ID ".jsonl", "{}\n"), 0);
        assert_int_equal(fixture_symlink(root, "r/projects/-p", elsewhere), 0);
        assert_true(anywhere(root, "r", ID));
}

/* Every root is looked at; a root that cannot be looked at (a negative fd) or a chats/ that is
 * not a directory means "cannot tell": a transcript may exist. */
static void test_orphans_transcript_fails_closed(void **state) {
        const char *root = *state;
        int fds[2] = { -EBADF, -EBADF };

        assert_int_equal(fixture_mkdir(root, "r1/projects/-p/chats"), 0);
        assert_int_equal(fixture_write(root, "r2/projects/-p/chats/archive/" ID ".jsonl", "{}\n"), 0);
        fds[0] = test_open_dir(root, "r1");
        assert_false(orphans_transcript_anywhere(fds, 1, ID));
        fds[1] = test_open_dir(root, "r2");
        assert_true(orphans_transcript_anywhere(fds, 2, ID));
        macro_safe_close(fds[1]);
        fds[1] = -EBADF;
        assert_true(orphans_transcript_anywhere(fds, 2, ID));

        assert_int_equal(fixture_write(root, "r1/projects/-q/chats", "not a directory"), 0);
        assert_true(orphans_transcript_anywhere(fds, 1, ID));
        macro_safe_close(fds[0]);
}

/* file-history/<id>/ goes (recursively) when it is what the scan saw and no transcript exists
 * now; not when a transcript appeared, not when the directory was replaced. */
static void test_orphans_reclaim_file_history(void **state) {
        const char *root = *state;
        _cleanup_close_ int gfd = -EBADF, rfd = -EBADF;
        const char *why = NULL;
        unsigned steps = 0;
        int bad = -EBADF;
        Orphan o;

        assert_int_equal(fixture_write(root, "g/file-history/" ID "/abc@v1", "x"), 0);
        assert_int_equal(fixture_write(root, "g/file-history/" ID "/sub/abc@v2", "y"), 0);
        assert_int_equal(fixture_mkdir(root, "r/projects/-p/chats"), 0);
        gfd = test_open_dir(root, "g");
        rfd = test_open_dir(root, "r");
        o = orphan_of(root, "g/file-history", ID, ORPHAN_FILE_HISTORY);

        /* a transcript appeared since the scan: kept */
        assert_int_equal(fixture_write(root, "r/projects/-p/chats/archive/" ID ".jsonl", "{}\n"), 0);
        assert_int_equal(orphans_reclaim(&o, gfd, "file-history", 0, &rfd, 1, count_step, &steps, &why), 0);
        assert_string_equal(why, "a transcript for this id exists now");
        assert_true(fixture_exists(root, "g/file-history/" ID "/sub/abc@v2"));
        assert_int_equal(steps, 0);
        /* a root that cannot be looked at: kept too */
        assert_int_equal(orphans_reclaim(&o, gfd, "file-history", 0, &bad, 1, count_step, &steps, &why), 0);
        assert_string_equal(why, "a transcript for this id exists now");
        assert_true(fixture_exists(root, "g/file-history/" ID "/sub/abc@v2"));

        /* replaced by another directory of the same name: changed since the scan */
        {
                _cleanup_free_ char *a = fixture_path(root, "g/file-history/" ID);
                _cleanup_free_ char *b = fixture_path(root, "g/file-history/moved");
                assert_int_equal(rename(a, b), 0);
                assert_int_equal(fixture_write(root, "g/file-history/" ID "/new@v1", "z"), 0);
        }
        assert_int_equal(orphans_reclaim(&o, gfd, "file-history", 0, &rfd, 1, count_step, &steps, &why), 0);
        assert_string_equal(why, "changed since scan");
        assert_true(fixture_exists(root, "g/file-history/" ID "/new@v1"));
        /* gone already: skipped, not failed */
        {
                _cleanup_free_ char *p = fixture_path(root, "g/file-history/" ID);
                assert_int_equal(fixture_rm_rf(p), 0);
        }
        assert_int_equal(orphans_reclaim(&o, gfd, "file-history", 0, &rfd, 1, count_step, &steps, &why), 0);
        assert_string_equal(why, "changed since scan");

        /* the transcript gone again, the scan's directory: reclaimed, one step */
        {
                _cleanup_free_ char *t = fixture_path(root, "r/projects/-p/chats/archive/" ID ".jsonl");
                assert_int_equal(unlink(t), 0);
        }
        o = orphan_of(root, "g/file-history", "moved", ORPHAN_FILE_HISTORY);
        assert_int_equal(orphans_reclaim(&o, gfd, "file-history", 0, &rfd, 1, count_step, &steps, &why), 1);
        assert_null(why);
        assert_int_equal(steps, 1);
        assert_false(fixture_exists(root, "g/file-history/moved"));
        assert_true(fixture_exists(root, "g/file-history"));
}

/* subagents/<id>/ under a project: the same re-checks, the id's transcript in another project
 * counting too. */
static void test_orphans_reclaim_subagents(void **state) {
        const char *root = *state;
        _cleanup_close_ int rfd = -EBADF;
        const char *why = NULL;
        Orphan o;

        assert_int_equal(fixture_write(root, "r/projects/-p/subagents/" ID "/agent-1.jsonl", "{}\n"), 0);
        assert_int_equal(fixture_write(root, "r/projects/-q/chats/" ID_UPPER ".jsonl", "{}\n"), 0);
        rfd = test_open_dir(root, "r");
        o = orphan_of(root, "r/projects/-p/subagents", ID, ORPHAN_SUBAGENTS);
        assert_int_equal(orphans_reclaim(&o, rfd, "projects/-p/subagents", 0, &rfd, 1, NULL, NULL, &why), 0);
        assert_string_equal(why, "a transcript for this id exists now");
        assert_true(fixture_exists(root, "r/projects/-p/subagents/" ID "/agent-1.jsonl"));

        {
                _cleanup_free_ char *q = fixture_path(root, "r/projects/-q");
                assert_int_equal(fixture_rm_rf(q), 0);
        }
        assert_int_equal(orphans_reclaim(&o, rfd, "projects/-p/subagents", 0, &rfd, 1, NULL, NULL, &why), 1);
        assert_false(fixture_exists(root, "r/projects/-p/subagents/" ID));
        /* a parent path through a symlink is not followed */
        assert_int_equal(fixture_write(root, "r/projects/-p/subagents/" ID "/agent-1.jsonl", "{}\n"), 0);
        o = orphan_of(root, "r/projects/-p/subagents", ID, ORPHAN_SUBAGENTS);
        assert_int_equal(fixture_symlink(root, "r/projects/-link", "-p"), 0);
        assert_int_equal(orphans_reclaim(&o, rfd, "projects/-link/subagents", 0, &rfd, 1, NULL, NULL, &why), 0);
        assert_true(fixture_exists(root, "r/projects/-p/subagents/" ID "/agent-1.jsonl"));
}

/* An empty project goes by rmdir() of its empty chats/archive/.qgc-cold/, chats/archive/,
 * chats/, subagents/ and itself; a project with anything in it stays ("no longer empty"). */
static void test_orphans_reclaim_empty_project(void **state) {
        const char *root = *state;
        _cleanup_close_ int rfd = -EBADF;
        const char *why = NULL;
        unsigned steps = 0;
        Orphan o;

        assert_int_equal(fixture_mkdir(root, "r/projects/-p/chats/archive/.qgc-cold"), 0);
        assert_int_equal(fixture_mkdir(root, "r/projects/-p/subagents"), 0);
        assert_int_equal(fixture_write(root, "r/projects/-p/chats/" ID ".jsonl", "{}\n"), 0);
        rfd = test_open_dir(root, "r");
        o = orphan_of(root, "r/projects", "-p", ORPHAN_EMPTY_PROJECT);
        assert_int_equal(orphans_reclaim(&o, rfd, "projects", 0, &rfd, 1, count_step, &steps, &why), 0);
        assert_string_equal(why, "no longer empty");
        assert_true(fixture_exists(root, "r/projects/-p/chats/" ID ".jsonl"));

        /* a file in the project itself */
        {
                _cleanup_free_ char *t = fixture_path(root, "r/projects/-p/chats/" ID ".jsonl");
                assert_int_equal(unlink(t), 0);
        }
        assert_int_equal(fixture_write(root, "r/projects/-p/notes", "x"), 0);
        o = orphan_of(root, "r/projects", "-p", ORPHAN_EMPTY_PROJECT);
        assert_int_equal(orphans_reclaim(&o, rfd, "projects", 0, &rfd, 1, count_step, &steps, &why), 0);
        assert_string_equal(why, "no longer empty");
        assert_true(fixture_exists(root, "r/projects/-p/notes"));

        /* an empty project: every empty directory goes, one step each */
        {
                _cleanup_free_ char *t = fixture_path(root, "r/projects/-p/notes");
                assert_int_equal(unlink(t), 0);
        }
        assert_int_equal(fixture_mkdir(root, "r/projects/-p/chats/archive/.qgc-cold"), 0);
        assert_int_equal(fixture_mkdir(root, "r/projects/-p/subagents"), 0);
        o = orphan_of(root, "r/projects", "-p", ORPHAN_EMPTY_PROJECT);
        steps = 0;
        assert_int_equal(orphans_reclaim(&o, rfd, "projects", 0, &rfd, 1, count_step, &steps, &why), 1);
        assert_null(why);
        assert_false(fixture_exists(root, "r/projects/-p"));
        assert_true(fixture_exists(root, "r/projects"));
        assert_int_equal(steps, 5);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_orphans_transcript_places, fixture_root_setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_orphans_transcript_symlinked_project, fixture_root_setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_orphans_transcript_fails_closed, fixture_root_setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_orphans_reclaim_file_history, fixture_root_setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_orphans_reclaim_subagents, fixture_root_setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_orphans_reclaim_empty_project, fixture_root_setup, fixture_root_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
