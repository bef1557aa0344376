/* test_strtable.c: the enum <-> string lookups (strtable.h) at their edges, and the tables of
 * the modules that use them. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "inventory.h"
#include "journal.h"
#include "strtable.h"
#include "tree-size.h"
#include "journal.c" /* its static functions are tested here */

typedef enum Color {
        COLOR_RED,
        COLOR_GREEN, /* a hole: no string */
        COLOR_BLUE,
        _COLOR_MAX,
        _COLOR_INVALID = -EINVAL,
} Color;

static const char *const color_table[_COLOR_MAX] = {
        [COLOR_RED] = "red",
        [COLOR_BLUE] = "blue",
};

const char *color_to_string(Color c);
Color color_from_string(const char *s);
DEFINE_STRING_TABLE_LOOKUP(color, Color);

static void test_strtable_edges(void **state) {
        (void)state;
        assert_string_equal(color_to_string(COLOR_RED), "red");
        assert_string_equal(color_to_string(COLOR_BLUE), "blue");
        assert_null(color_to_string(COLOR_GREEN));
        assert_null(color_to_string(_COLOR_MAX));
        assert_null(color_to_string(_COLOR_INVALID));
        assert_null(color_to_string((Color)-1));
        assert_int_equal(color_from_string("red"), COLOR_RED);
        assert_int_equal(color_from_string("blue"), COLOR_BLUE);
        assert_int_equal(color_from_string("green"), _COLOR_INVALID);
        assert_int_equal(color_from_string(""), _COLOR_INVALID);
        assert_int_equal(color_from_string("Red"), _COLOR_INVALID);
        assert_int_equal(color_from_string(NULL), _COLOR_INVALID);
}

/* Every value of the project's tables has its string, and the round trip holds. */
static void test_strtable_project_tables(void **state) {
        (void)state;
        for (int i = 0; i < _SESSION_STATE_MAX; i++)
                assert_non_null(inventory_session_state_to_string((SessionState)i));
        assert_null(inventory_session_state_to_string(_SESSION_STATE_MAX));
        assert_string_equal(inventory_owner_status_to_string(OWNER_UNVERIFIED), "unverified");
        assert_null(inventory_owner_status_to_string(_OWNER_STATUS_INVALID));
        assert_string_equal(inventory_orphan_kind_to_string(ORPHAN_LEGACY), "legacy");
        for (int i = 0; i < _JOURNAL_EVENT_MAX; i++) {
                assert_non_null(journal_event_to_string((JournalEvent)i));
                assert_non_null(journal_event_message_id((JournalEvent)i));
        }
        assert_null(journal_event_to_string(_JOURNAL_EVENT_MAX));
        assert_null(journal_event_message_id(_JOURNAL_EVENT_INVALID));
        for (int i = 0; i < _JOURNAL_TARGET_MAX; i++)
                assert_int_not_equal(journal_target_from_string("nonsense"), i);
        assert_int_equal(journal_target_from_string("stderr"), JOURNAL_TARGET_STDERR);
        assert_int_equal(journal_target_from_string("file"), JOURNAL_TARGET_FILE);
        assert_int_equal(journal_target_from_string(NULL), _JOURNAL_TARGET_INVALID);
        assert_int_equal(journal_target_from_string("Journal"), _JOURNAL_TARGET_INVALID);
        assert_string_equal(tree_size_kind_to_string(TREE_KIND_SESSIONS), "active sessions");
        assert_string_equal(tree_size_kind_key(TREE_KIND_SESSIONS), "sessions");
        assert_null(tree_size_kind_key(_TREE_KIND_MAX));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_strtable_edges),
                cmocka_unit_test(test_strtable_project_tables),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
