/* test_scan.c: the read-only scan on temporary copies of the corpus tree, with hostile entries. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "macro.h"

static int setup_root(void **state) {
        char *root = NULL;

        if (fixture_new(&root) < 0)
                return -1;
        *state = root;
        return 0;
}

static int teardown_root(void **state) {
        fixture_free(*state);
        return 0;
}

static void test_fixture_build_and_snapshot(void **state) {
        const char *root = *state;
        const char *specs[] = { "a/b/", "a/c.jsonl 4K 40d", "x 100", NULL };
        _cleanup_free_ char *s1 = NULL, *s2 = NULL, *content = NULL;
        size_t len = 0;

        assert_int_equal(fixture_build(root, specs), 0);
        assert_true(fixture_exists(root, "a/b"));
        assert_int_equal(fixture_read(root, "a/c.jsonl", &content, &len), 0);
        assert_int_equal(len, 4096);
        assert_int_equal(fixture_copy_tree(fixture_testdata("corpus/tree"), root, "q"), 0);
        assert_true(fixture_exists(root, "q/projects/-srv-demo-webapp/chats"));
        assert_int_equal(fixture_snapshot_full(root, NULL, &s1), 0);
        assert_int_equal(fixture_snapshot_full(root, NULL, &s2), 0);
        assert_string_equal(s1, s2);
        assert_int_equal(fixture_write(root, "x", "changed"), 0);
        free(s2);
        s2 = NULL;
        assert_int_equal(fixture_snapshot_full(root, NULL, &s2), 0);
        assert_string_not_equal(s1, s2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_fixture_build_and_snapshot, setup_root,
                                                teardown_root),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
