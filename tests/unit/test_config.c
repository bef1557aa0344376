/* test_config.c: the policy file: every key, every error kind with its file:line, layering,
 * project overrides, --explain and the root-mode merge. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "testdata.h"
#include "util.h"
#include "config-load.c" /* its static functions are tested here */

/* Apply a configuration text as config_load_file() applies a file's, name labelling messages */
static int config_load_string(Config *c, const char *text, const char *name, ConfigErrors *errs) {
        return config_load_apply(c, name ? name : "<string>", text, strlen(text), NULL,
                                 c->n_files == 0, errs);
}

/* A path under tests/data/config. */
static char *test_data(const char *name) {
        _cleanup_free_ char *rel = util_strprintf("config/%s", name);

        assert_non_null(rel);
        return test_data_path(rel);
}

/* Is there a message starting with "<prefix>" and containing `needle`? */
static bool test_has_msg(const ConfigErrors *e, const char *prefix, const char *needle) {
        for (size_t i = 0; i < e->n; i++)
                if (strneq(e->msgs[i], prefix, strlen(prefix)) && strstr(e->msgs[i], needle))
                        return true;
        return false;
}

static void test_dump(const ConfigErrors *e) {
        for (size_t i = 0; i < e->n; i++)
                print_message("  msg[%zu] %s\n", i, e->msgs[i]);
}

#define assert_msg(e, prefix, needle)                                                              \
        do {                                                                                       \
                if (!test_has_msg((e), (prefix), (needle))) {                                      \
                        test_dump(e);                                                              \
                        fail_msg("no message \"%s...%s\"", (prefix), (needle));                    \
                }                                                                                  \
        } while (0)

/* Parse one buffer on top of the built-in defaults; returns the result code. */
static int test_parse(Config *c, const char *text, ConfigErrors *e) {
        assert_int_equal(config_init_default(c), 0);
        return config_load_string(c, text, "t.conf", e);
}

/* Parse a buffer that must fail with exactly one error, and check it. */
static void test_one_error(const char *text, const char *prefix, const char *needle) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        if (test_parse(&c, text, &e) != -EINVAL || e.n != 1) {
                test_dump(&e);
                fail_msg("\"%s\": want one error, got %zu", text, e.n);
        }
        assert_msg(&e, prefix, needle);
}

static void test_config_init_default_values(void **state) {
        _cleanup_(config_done) Config c = {};

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(c.defaults.action, POLICY_ACTION_ARCHIVE);
        assert_int_equal(c.defaults.max_age, 90 * MSEC_PER_DAY);
        assert_int_equal(c.defaults.max_sessions, 0);
        assert_int_equal(c.defaults.max_size, 0);
        assert_int_equal(c.defaults.min_age, 3 * MSEC_PER_DAY);
        assert_int_equal(c.defaults.min_idle, 24 * MSEC_PER_HOUR);
        assert_int_equal(c.defaults.keep_latest, 1);
        assert_true(c.defaults.keep_pinned && c.defaults.keep_titled && c.defaults.keep_scheduled &&
                    c.defaults.keep_worktree);
        assert_int_equal(c.defaults.archive_max_age, 0); /* never deletes */
        assert_int_equal(c.defaults.archive_max_size, 0);
        assert_int_equal(c.defaults.max_deletions, 100);
        assert_true(c.defaults.max_deletions_percent == 50);
        assert_int_equal(c.defaults.orphan_min_age, 30 * MSEC_PER_DAY);
        assert_int_equal(c.tree.max_size, 0);
        assert_int_equal(c.tree.low_watermark, 0);
        assert_false(c.tree.keep_free.is_set);
        assert_true(c.tree.count_allocated);
        assert_true(c.allow_user_files);
        assert_int_equal(c.n_user_dirs, 0);
        assert_int_equal(c.n_projects, 0);
        assert_int_equal(c.n_files, 0);
        for (int k = 0; k < _POLICY_KEY_MAX; k++)
                assert_string_equal(c.defaults_origin.where[k], "built-in default");
        assert_string_equal(c.tree.origin_max_size, "built-in default");
}

static void test_config_done_accepts_zeroed(void **state) {
        Config c = {};
        config_done(&c);
        config_done(&c);
        config_done(NULL);
}

static void test_config_parse_string_empty_keeps_defaults(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c, "# nothing\n", &e), 0);
        assert_int_equal(e.n, 0);
        assert_int_equal(c.defaults.max_age, 90 * MSEC_PER_DAY);
        assert_int_equal(c.n_files, 1);
        assert_string_equal(c.files[0], "t.conf");
}

static void test_config_load_file_every_key(void **state) {
        _cleanup_free_ char *path = test_data("full.cfg");
        _cleanup_free_ char *o4 = NULL, *o17 = NULL, *o25 = NULL;
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        const Policy *p = &c.defaults;

        assert_int_equal(config_init_default(&c), 0);
        if (config_load_file(&c, path, &e) != 0) {
                test_dump(&e);
                fail();
        }
        assert_int_equal(p->action, POLICY_ACTION_DELETE);
        assert_int_equal(p->max_age, 60 * MSEC_PER_DAY);
        assert_int_equal(p->max_sessions, 40);
        assert_int_equal(p->max_size, UINT64_C(2) << 30);
        assert_int_equal(p->min_age, 2 * MSEC_PER_DAY);
        assert_int_equal(p->min_idle, 12 * MSEC_PER_HOUR);
        assert_int_equal(p->keep_latest, 2);
        assert_false(p->keep_pinned || p->keep_titled || p->keep_scheduled || p->keep_worktree);
        assert_int_equal(p->archive_max_age, 180 * MSEC_PER_DAY);
        assert_int_equal(p->archive_max_size, UINT64_C(512) << 20);
        assert_int_equal(p->max_deletions, 25);
        assert_true(p->max_deletions_percent == 12.5);
        assert_int_equal(p->orphan_min_age, MSEC_PER_WEEK);
        assert_int_equal(c.tree.max_size, UINT64_C(50) << 30);
        assert_int_equal(c.tree.low_watermark, UINT64_C(40) << 30);
        assert_true(c.tree.keep_free.is_set && c.tree.keep_free.is_percent &&
                    c.tree.keep_free.percent == 10);
        assert_false(c.tree.count_allocated);
        assert_false(c.allow_user_files);
        assert_int_equal(c.n_user_dirs, 2);
        assert_string_equal(c.user_dirs[0], "/srv/home");
        assert_string_equal(c.user_dirs[1], "/data/home");

        assert_int_equal(c.n_projects, 2);
        assert_string_equal(c.projects[0].pattern, "/srv/scratch/*");
        assert_true(c.projects[0].is_glob);
        assert_int_equal(c.projects[0].line, 29); /* where the block opens */
        assert_string_equal(c.projects[0].file, path);
        assert_int_equal(c.projects[0].set_mask,
                         (1u << POLICY_KEY_MAX_AGE) | (1u << POLICY_KEY_ACTION));
        assert_int_equal(c.projects[0].policy.max_age, 7 * MSEC_PER_DAY);
        assert_int_equal(c.projects[0].policy.action, POLICY_ACTION_ARCHIVE);
        assert_int_equal(c.projects[0].policy.max_sessions, 40); /* from defaults */
        assert_false(c.projects[1].is_glob);
        assert_int_equal(c.projects[1].policy.keep_latest, 5);
        assert_int_equal(c.projects[1].policy.max_sessions, 0); /* "off" */

        o4 = util_strprintf("%s:4", path);
        o17 = util_strprintf("%s:18", path);
        o25 = util_strprintf("%s:25", path);
        assert_string_equal(c.defaults_origin.where[POLICY_KEY_MAX_AGE], o4);
        assert_string_equal(c.defaults_origin.where[POLICY_KEY_ORPHAN_MIN_AGE], o17);
        assert_string_equal(c.tree.origin_count, o25);
        assert_string_equal(c.projects[0].origin.where[POLICY_KEY_MAX_SESSIONS],
                            c.defaults_origin.where[POLICY_KEY_MAX_SESSIONS]);
}

static void test_config_load_file_missing_is_enoent_silently(void **state) {
        _cleanup_free_ char *path = test_data("does-not-exist.cfg");
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, path, &e), -ENOENT);
        assert_int_equal(e.n, 0);
        assert_int_equal(c.n_files, 0);
}

static void test_config_load_file_directory_is_error(void **state) {
        _cleanup_free_ char *dir = test_data("");
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, dir, &e), -EINVAL);
        assert_int_equal(e.n, 1);
        assert_msg(&e, dir, "cannot read: Is a directory");
}

/* -c /dev/null: an empty policy, the built-in default. */
static void test_config_load_file_dev_null_is_empty(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, "/dev/null", &e), 0);
        assert_int_equal(e.n, 0);
        assert_int_equal(c.n_files, 1);
        assert_int_equal(c.defaults.max_age, 90 * MSEC_PER_DAY);
}

static void test_config_load_file_nul_byte_and_too_large(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        char tmp[] = "/tmp/qgc-test-config-XXXXXX";
        int fd = mkstemp(tmp);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, "a = 1;\0b = 2;\n", 14), 14);
        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, tmp, &e), -EINVAL);
        assert_msg(&e, tmp, "contains a NUL byte");
        assert_int_equal(ftruncate(fd, 5 * 1024 * 1024), 0);
        assert_int_equal(config_load_file(&c, tmp, &e), -EINVAL);
        assert_msg(&e, tmp, "larger than");
        close(fd);
        unlink(tmp);
}

static void test_config_load_file_syntax_error_line(void **state) {
        _cleanup_free_ char *path = test_data("syntax.cfg");
        _cleanup_free_ char *prefix = NULL;
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, path, &e), -EINVAL);
        assert_int_equal(e.n, 1);
        prefix = util_strprintf("%s:3: ", path);
        assert_msg(&e, prefix, "syntax error");
}

/* errors.cfg holds one problem per line; every one is reported, at its line, in one pass. */
static void test_config_load_file_reports_all_errors_at_once(void **state) {
        static const struct {
                int line;
                const char *needle;
        } want[] = {
                { 3, "max-age: expected a duration string" },
                { 4, "max-sessions: expected an integer or \"off\", got a string" },
                { 5, "unknown key 'keep_latest' in defaults; did you mean 'keep-latest'?" },
                { 6, "action: invalid value \"remove\"" },
                { 7, "min-age: invalid duration \"5m\": ambiguous unit 'm'" },
                { 8, "keep-pinned: expected true or false" },
                { 9, "max-deletions-percent: 150 is out of range" },
                { 10, "max-size: a zero limit is ambiguous" },
                { 13, "tree low-watermark 20G" },
                { 15, "keep-free: 100% is out of range" },
                { 16, "unknown key 'colour' in tree" },
                { 19, "path: \"relative/dir\" is not an absolute path" },
                { 20, "project block without a path" },
                { 21, "project '/srv/a': min-age 10d" },
                { 22, "project path '/srv/a' is already configured at " },
                { 24, "admin settings are only allowed in the system file" },
                { 25, "unknown key 'retention' in the top level" },
        };
        _cleanup_free_ char *path = test_data("errors.cfg");
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_user_file(&c, path, &e), -EINVAL);
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                _cleanup_free_ char *prefix = util_strprintf("%s:%d: ", path, want[i].line);
                assert_msg(&e, prefix, want[i].needle);
        }
        if (e.n != ELEMENTSOF(want)) {
                test_dump(&e);
                fail_msg("%zu messages, want %zu", e.n, ELEMENTSOF(want));
        }
}

typedef struct ErrorCase {
        const char *text;
        const char *prefix;
        const char *needle;
} ErrorCase;

/* Wrong types, bad values and out-of-range values, one at a time, each at its line. */
static void test_config_parse_string_value_errors(void **state) {
        static const ErrorCase cases[] = {
                { "defaults = { max-age = \"90\"; };", "t.conf:1: ", "missing unit" },
                { "defaults = { max-age = \"0d\"; };", "t.conf:1: ", "write \"off\"" },
                { "defaults = { max-age = 1.5; };", "t.conf:1: ", "got a float" },
                { "defaults = { max-age = \"36501d\"; };", "t.conf:1: ", "out of range" },
                { "defaults = {\n\n min-idle = \"30s\"; };", "t.conf:3: ", "too short" },
                { "defaults = { min-idle = \"off\"; };", "t.conf:1: ", "cannot be \"off\"" },
                { "defaults = { min-age = \"off\"; };", "t.conf:1: ", "cannot be \"off\"" },
                { "defaults = { orphan-min-age = \"30min\"; };", "t.conf:1: ", "too short" },
                { "defaults = { max-sessions = 0; };", "t.conf:1: ", "write \"off\"" },
                { "defaults = { max-sessions = -3; };", "t.conf:1: ", "out of range" },
                { "defaults = { max-sessions = 5000000000L; };", "t.conf:1: ", "out of range" },
                { "defaults = { max-sessions = \"ten\"; };", "t.conf:1: ", "got a string" },
                { "defaults = { keep-latest = -1; };", "t.conf:1: ", "out of range" },
                { "defaults = { keep-latest = true; };", "t.conf:1: ", "got a boolean" },
                { "defaults = { max-size = 5368709120L; };", "t.conf:1: ", "bare number" },
                { "defaults = { max-size = \"5GB\"; };", "t.conf:1: ", "invalid size" },
                { "defaults = { max-size = \"10%\"; };", "t.conf:1: ", "percentage is not allowed" },
                { "defaults = { archive-max-size = \"0K\"; };", "t.conf:1: ", "write \"off\"" },
                { "defaults = { keep-titled = 1; };", "t.conf:1: ", "got an integer" },
                { "defaults = { action = \"archive \"; };", "t.conf:1: ", "invalid value" },
                { "defaults = { action = 1; };", "t.conf:1: ", "got an integer" },
                { "defaults = { max-deletions-percent = 0; };", "t.conf:1: ", "write \"off\"" },
                { "defaults = { max-deletions-percent = 100.5; };", "t.conf:1: ", "out of range" },
                { "defaults = { max-deletions-percent = \"half\"; };", "t.conf:1: ", "invalid percentage" },
                { "defaults = { max-deletions-percent = true; };", "t.conf:1: ", "got a boolean" },
                { "defaults = { max-deletions = 0; };", "t.conf:1: ", "write \"off\"" },
                { "tree = { count = \"blocks\"; };", "t.conf:1: ", "count: invalid value" },
                { "tree = { keep-free = \"0%\"; };", "t.conf:1: ", "write \"off\"" },
                { "tree = { keep-free = 10; };", "t.conf:1: ", "bare number" },
                { "tree = { low-watermark = \"1G\"; };", "t.conf:1: ", "tree max-size is off" },
                { "tree = { max-size = \"1G\";\n low-watermark = \"1G\"; };", "t.conf:2: ",
                  "is not below max-size 1G" },
                { "tree = { max-age = \"1d\"; };", "t.conf:1: ", "'max-age' is a policy key" },
                { "defaults = { count = \"apparent\"; };", "t.conf:1: ", "'count' is a tree key" },
                { "default = { max-age = \"1d\"; };", "t.conf:1: ", "did you mean 'defaults'?" },
                { "max-age = \"1d\";", "t.conf:1: ", "'max-age' is a policy key" },
                { "defaults = ( 1 );", "t.conf:1: ", "defaults must be a group" },
                { "projects = { path = \"/x\"; };", "t.conf:1: ", "projects must be a list" },
                { "projects = ( 5 );", "t.conf:1: ", "must be a group" },
                { "projects = ( { path = 5; } );", "t.conf:1: ", "path: expected a string" },
                { "projects = ( { path = \"~/x\"; } );", "t.conf:1: ", "not an absolute path" },
                { "projects = ( { path = \"/x\"; keep-free = \"1G\"; } );", "t.conf:1: ",
                  "'keep-free' is a tree key" },
                { "projects = ( { path = \"/x\"; max-agee = \"1d\"; } );", "t.conf:1: ",
                  "did you mean 'max-age'?" },
                { "projects = ( { path = \"/x\"; },\n { path = \"/x/\"; } );", "t.conf:2: ",
                  "already configured at t.conf:1" },
                { "admin = { user-dirs = \"/srv\"; };", "t.conf:1: ", "expected a list of paths" },
                { "admin = { user-dirs = ( \"srv\" ); };", "t.conf:1: ", "not an absolute path" },
                { "admin = { allow-user-files = \"no\"; };", "t.conf:1: ", "without quotes" },
                { "admin = { allow-users = true; };", "t.conf:1: ", "unknown key 'allow-users' in admin" },
                { "defaults = {\n max-age = \"1d\"\n keep-latest = ; };", "t.conf:3: ", "syntax error" },
                /* libconfig's syntax errors with a hint (issue 24.8): a value with a unit or a
                 * word unquoted, and a string left open, at the line where it starts (libconfig
                 * says the next line, or the end) */
                { "defaults = {\n max-age = 10d;\n};", "t.conf:2: ",
                  "syntax error: a duration must be quoted: max-age = \"10d\";" },
                { "defaults = { max-age = 10d; };", "t.conf:1: ",
                  "syntax error: a duration must be quoted: max-age = \"10d\";" },
                { "tree = {\n max-size = 10G;\n};", "t.conf:2: ",
                  "syntax error: a size must be quoted: max-size = \"10G\";" },
                { "defaults = {\n action = delete;\n};", "t.conf:2: ",
                  "syntax error: a word (or true, false) must be quoted: action = \"delete\";" },
                { "defaults = {\n max-age = \"10d;\n min-age = \"3d\";\n};", "t.conf:2: ",
                  "syntax error: a string is not closed on this line" },
                { "defaults = {\n max-age = \"10d;\n};\n", "t.conf:2: ",
                  "syntax error: a string is not closed on this line" },
                { "# a \" in a comment\ndefaults = { /* \" */ max-age = \"10d\\\"\"; }\n}", "t.conf:3: ",
                  "syntax error" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                print_message("case %zu: %s\n", i, cases[i].text);
                test_one_error(cases[i].text, cases[i].prefix, cases[i].needle);
        }
}

/* A bad project entry does not stop the parse: later problems are reported too. */
static void test_config_parse_string_continues_after_bad_project(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c,
                                    "projects = ( 5,\n { path = \"/a\"; max-age = 3; } );\n"
                                    "tree = { bogus = 1; };",
                                    &e),
                         -EINVAL);
        assert_int_equal(e.n, 3);
        assert_msg(&e, "t.conf:1: ", "must be a group");
        assert_msg(&e, "t.conf:2: ", "max-age: expected a duration");
        assert_msg(&e, "t.conf:3: ", "unknown key 'bogus' in tree");
}

/* Contradictory rules, in defaults and in project blocks. */
static void test_config_parse_string_contradictions(void **state) {
        static const ErrorCase cases[] = {
                { "defaults = { min-age = \"3d\";\n max-age = \"2d\"; };", "t.conf:2: ",
                  "min-age 3d (t.conf:1) is longer than max-age 2d (t.conf:2)" },
                { "defaults = { min-age = \"1h\";\n min-idle = \"2d\";\n max-age = \"1d\"; };",
                  "t.conf:3: ", "min-idle 2d (t.conf:2) is longer than max-age 1d (t.conf:3)" },
                { "defaults = { archive-max-age = \"1d\"; min-age = \"2d\"; };", "t.conf:1: ",
                  "min-age 2d (t.conf:1) is longer than archive-max-age 1d" },
                { "defaults = { keep-latest = 5;\n max-sessions = 4; };", "t.conf:2: ",
                  "keep-latest 5 (t.conf:1) is more than max-sessions 4 (t.conf:2)" },
                { "projects = ( { path = \"/p\";\n keep-latest = 3; max-sessions = 2; } );",
                  "t.conf:2: ", "project '/p': keep-latest 3" },
                { "defaults = { keep-latest = 3; };\nprojects = ( { path = \"/p\"; max-sessions = 2; } );",
                  "t.conf:2: ", "project '/p': keep-latest 3 (t.conf:1) is more than max-sessions 2" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                print_message("case %zu\n", i);
                test_one_error(cases[i].text, cases[i].prefix, cases[i].needle);
        }
}

/* A limit that is off contradicts nothing; equal values are fine (only strictly more is not). */
static void test_config_parse_string_no_contradiction_at_edges(void **state) {
        static const char *const ok[] = {
                "defaults = { max-age = \"off\"; min-age = \"400d\"; };",
                "defaults = { max-age = \"3d\"; };",                      /* == min-age */
                /* a built-in grace longer than a written limit just wins */
                "defaults = { max-age = \"1d\"; };",
                "defaults = { max-age = \"12h\"; archive-max-age = \"1h\"; };",
                "projects = ( { path = \"/p\"; max-age = \"1h\"; } );",
                "defaults = { min-age = \"1d\"; max-age = \"1d\"; min-idle = \"1d\"; };",
                "defaults = { keep-latest = 4; max-sessions = 4; };",
                "defaults = { keep-latest = 9; max-sessions = \"off\"; };",
                "tree = { max-size = \"10G\"; low-watermark = \"10239M\"; };",
                "defaults = { min-age = \"0s\"; max-deletions-percent = 100; };",
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                _cleanup_(config_done) Config c = {};
                _cleanup_(config_errors_done) ConfigErrors e = {};
                if (test_parse(&c, ok[i], &e) != 0) {
                        test_dump(&e);
                        fail_msg("\"%s\" was refused", ok[i]);
                }
        }
}

static void test_config_parse_string_off_values(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c,
                                    "defaults = { max-age = \"off\"; max-sessions = \"off\";"
                                    " max-size = \"off\"; archive-max-age = \"off\";"
                                    " archive-max-size = \"off\"; max-deletions = \"off\";"
                                    " max-deletions-percent = \"off\"; orphan-min-age = \"off\";"
                                    " keep-latest = 0; min-age = \"0s\"; };"
                                    "tree = { max-size = \"off\"; low-watermark = \"off\";"
                                    " keep-free = \"off\"; };",
                                    &e),
                         0);
        assert_int_equal(c.defaults.max_age, 0);
        assert_int_equal(c.defaults.max_sessions, 0);
        assert_int_equal(c.defaults.max_size, 0);
        assert_int_equal(c.defaults.archive_max_age, 0);
        assert_int_equal(c.defaults.archive_max_size, 0);
        assert_int_equal(c.defaults.max_deletions, 0);
        assert_true(c.defaults.max_deletions_percent == 0);
        assert_true(c.defaults.orphan_min_age == MSEC_INFINITY);
        assert_int_equal(c.defaults.keep_latest, 0);
        assert_int_equal(c.defaults.min_age, 0);
        assert_false(c.tree.keep_free.is_set);
}

static void test_config_parse_string_other_spellings(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c,
                                    "defaults = { max-deletions-percent = \"12.5%\";"
                                    " max-sessions = 7L; max-age = \"1w2d\"; };"
                                    "tree = { keep-free = \"20G\"; count = \"allocated\"; };",
                                    &e),
                         0);
        assert_true(c.defaults.max_deletions_percent == 12.5);
        assert_int_equal(c.defaults.max_sessions, 7);
        assert_int_equal(c.defaults.max_age, 9 * MSEC_PER_DAY);
        assert_true(c.tree.keep_free.is_set && !c.tree.keep_free.is_percent);
        assert_int_equal(c.tree.keep_free.bytes, UINT64_C(20) << 30);
        assert_true(c.tree.count_allocated);
}

/* admin is honoured in the first (system) file only. */
static void test_config_admin_only_in_system_file(void **state) {
        _cleanup_free_ char *user = test_data("user-admin.cfg");
        _cleanup_free_ char *prefix = util_strprintf("%s:2: ", user);
        _cleanup_(config_done) Config c = {}, d = {};
        _cleanup_(config_errors_done) ConfigErrors e = {}, f = {};

        assert_int_equal(test_parse(&c, "admin = { allow-user-files = false; };", &e), 0);
        assert_false(c.allow_user_files);
        assert_string_equal(c.origin_allow_user_files, "t.conf:1");
        /* second file: refused, whatever it is */
        assert_int_equal(config_load_string(&c, "admin = { allow-user-files = true; };", "u.conf", &e),
                         -EINVAL);
        assert_msg(&e, "u.conf:1: ", "admin settings are only allowed in the system file");
        assert_int_equal(e.n, 1);

        /* the user's file is refused even when it is the first one read */
        assert_int_equal(config_init_default(&d), 0);
        assert_int_equal(config_load_user_file(&d, user, &f), -EINVAL);
        assert_int_equal(f.n, 1);
        assert_msg(&f, prefix, "admin settings are only allowed in the system file");
}

/* A later file's defaults flow into an earlier file's override for keys it did not set. */
static void test_config_layering_defaults_flow_into_earlier_overrides(void **state) {
        _cleanup_free_ char *a = test_data("layer-override.cfg"), *b = test_data("layer-defaults.cfg");
        _cleanup_free_ char *ob = NULL;
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        const Policy *p;

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, a, &e), 0);
        assert_int_equal(config_load_file(&c, b, &e), 0);
        assert_int_equal(c.n_files, 2);
        p = config_policy_for(&c, "/p/x");
        assert_ptr_equal(p, &c.projects[0].policy);
        assert_int_equal(p->max_sessions, 9);
        assert_int_equal(p->max_age, 45 * MSEC_PER_DAY);
        assert_int_equal(p->keep_latest, 4);
        ob = util_strprintf("%s:2", b);
        assert_string_equal(c.projects[0].origin.where[POLICY_KEY_MAX_AGE], ob);
        assert_int_equal(c.defaults.max_age, 45 * MSEC_PER_DAY);
}

/* The same pattern in a later file layers on the earlier block; later values win per key. */
static void test_config_layering_same_project_merges_across_files(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c, "projects = ( { path = \"/p\"; max-sessions = 9; max-age = \"20d\"; } );",
                                    &e),
                         0);
        assert_int_equal(config_load_string(&c, "projects = ( { path = \"/p/\"; max-age = \"10d\"; } );",
                                             "u.conf", &e),
                         0);
        assert_int_equal(c.n_projects, 1);
        assert_int_equal(c.projects[0].policy.max_sessions, 9);
        assert_int_equal(c.projects[0].policy.max_age, 10 * MSEC_PER_DAY);
        assert_string_equal(c.projects[0].origin.where[POLICY_KEY_MAX_AGE], "u.conf:1");
        assert_string_equal(c.projects[0].origin.where[POLICY_KEY_MAX_SESSIONS], "t.conf:1");
}

/* A contradiction created by a later file is reported at the later file's line. */
static void test_config_layering_contradiction_blames_later_file(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c, "projects = ( { path = \"/x\"; max-age = \"5d\"; } );", &e), 0);
        assert_int_equal(config_load_string(&c, "\ndefaults = { min-age = \"6d\"; };", "u.conf", &e),
                         -EINVAL);
        assert_int_equal(e.n, 1);
        assert_msg(&e, "u.conf:2: ", "project '/x': min-age 6d (u.conf:2) is longer than max-age 5d (t.conf:1)");
}

typedef struct MatchCase {
        const char *path;
        int want; /* index into projects, -1 = defaults */
} MatchCase;

static void test_config_policy_for_specificity(void **state) {
        static const MatchCase cases[] = {
                { "/srv/a/b", 0 },         /* exact beats every glob */
                { "/srv/a/b/", 0 },        /* trailing slash ignored */
                { "/srv/a/c", 1 },         /* 7 literals beat 5 */
                { "/srv/a/c/d", 1 },       /* '*' crosses '/' */
                { "/srv/z", 3 },           /* 5 literals each: the later block wins */
                { "/srv/zz", 2 },          /* only the star matches */
                { "/home/u/x", 5 },        /* 8 literals (a bracket counts none) vs 6 */
                { "/home/U/x", 4 },        /* bracket does not match */
                { "/other", -1 },
                { "/srv", -1 },            /* the glob needs the slash */
                { "", -1 },
        };
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c,
                                    "projects = (\n"
                                    " { path = \"/srv/a/b\"; max-sessions = 1; },\n"
                                    " { path = \"/srv/a/*\"; max-sessions = 2; },\n"
                                    " { path = \"/srv/*\"; max-sessions = 3; },\n"
                                    " { path = \"/srv/?\"; max-sessions = 4; },\n"
                                    " { path = \"/home/*\"; max-sessions = 5; },\n"
                                    " { path = \"/home/[a-z]/x\"; max-sessions = 6; }\n"
                                    ");",
                                    &e),
                         0);
        assert_int_equal(c.n_projects, 6);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const ProjectOverride *o = config_override_for(&c, cases[i].path);
                const Policy *p = config_policy_for(&c, cases[i].path);
                int got = o ? (int)(o - c.projects) : -1;
                if (got != cases[i].want)
                        fail_msg("\"%s\" matched %d, want %d", cases[i].path, got, cases[i].want);
                assert_ptr_equal(p, cases[i].want < 0 ? &c.defaults : &c.projects[cases[i].want].policy);
        }
        assert_null(config_override_for(&c, NULL));
        assert_ptr_equal(config_policy_for(&c, NULL), &c.defaults);
}

/* Equal specificity: the later block wins, whichever comes first in the list. */
static void test_config_policy_for_tie_later_wins(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c,
                                    "projects = ( { path = \"/w/*/x\"; max-sessions = 1; },"
                                    " { path = \"/w/a/*\"; max-sessions = 2; } );",
                                    &e),
                         0);
        assert_int_equal(config_policy_for(&c, "/w/a/x")->max_sessions, 2);
}

static void test_config_explain_shows_origins(void **state) {
        _cleanup_free_ char *path = test_data("full.cfg"), *out = NULL, *out2 = NULL;
        _cleanup_free_ char *o4 = NULL, *o31 = NULL;
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, path, &e), 0);
        f = open_memstream(&buf, &len);
        assert_non_null(f);
        assert_int_equal(config_explain(&c, f), 0);
        fclose(f);
        out = buf;
        o4 = util_strprintf("max-age                60d        %s:4\n", path);
        o31 = util_strprintf("max-age                1w         %s:31\n", path);
        assert_non_null(strstr(out, o4));
        assert_non_null(strstr(out, o31));
        assert_non_null(strstr(out, "project '/srv/scratch/*' (glob, "));
        assert_non_null(strstr(out, "project '/home/alice/work' (exact, "));
        assert_non_null(strstr(out, "from defaults: "));
        assert_non_null(strstr(out, "keep-free              10%"));
        assert_non_null(strstr(out, "/srv/home,/data/home"));
        /* every key appears */
        for (int k = 0; k < _POLICY_KEY_MAX; k++)
                assert_non_null(strstr(out, config_keys[k].name));
        /* stable */
        f = open_memstream(&buf, &len);
        assert_int_equal(config_explain(&c, f), 0);
        fclose(f);
        out2 = buf;
        assert_string_equal(out, out2);
}

static void test_config_explain_builtin(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        FILE *f;

        assert_int_equal(config_init_default(&c), 0);
        f = open_memstream(&out, &len);
        assert_int_equal(config_explain(&c, f), 0);
        fclose(f);
        assert_non_null(strstr(out, "files: none (built-in defaults only)"));
        assert_non_null(strstr(out, "max-age                90d        built-in default"));
        assert_non_null(strstr(out, "archive-max-age        off        built-in default"));
        assert_null(strstr(out, "project '"));
}

static void test_config_copy_is_deep(void **state) {
        _cleanup_free_ char *path = test_data("full.cfg");
        _cleanup_(config_done) Config c = {}, d = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_load_file(&c, path, &e), 0);
        c.user_timeout = 5 * MSEC_PER_MIN;
        c.stores = CONFIG_STORES_ALL;
        assert_int_equal(config_copy(&c, &d), 0);
        /* the admin's values too: a user's own run keeps the system's stores */
        assert_int_equal(d.user_timeout, 5 * MSEC_PER_MIN);
        assert_int_equal(d.stores, CONFIG_STORES_ALL);
        assert_int_equal(d.n_projects, c.n_projects);
        assert_ptr_not_equal(d.projects[0].pattern, c.projects[0].pattern);
        assert_string_equal(d.projects[1].pattern, c.projects[1].pattern);
        assert_string_equal(d.user_dirs[1], "/data/home");
        config_done(&c); /* d must survive */
        assert_string_equal(d.projects[0].origin.where[POLICY_KEY_MAX_AGE] + strlen(path), ":31");
        assert_int_equal(d.defaults.max_sessions, 40);
}

/* Load the system file and merge the user's; both from tests/data/config. */
static int test_merge(const char *sys, const char *user, Config *sysc, Config *merged,
                      ConfigErrors *e) {
        _cleanup_free_ char *s = test_data(sys), *u = test_data(user);
        assert_int_equal(config_init_default(sysc), 0);
        assert_int_equal(config_load_file(sysc, s, e), 0);
        return config_merge_user(merged, sysc, u, e);
}

static void test_config_merge_user_clamps_to_system(void **state) {
        _cleanup_free_ char *u = test_data("user.cfg");
        _cleanup_(config_done) Config s = {}, m = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        const Policy *p;

        assert_int_equal(test_merge("system.cfg", "user.cfg", &s, &m, &e), 1);
        /* tighter user values stay */
        assert_int_equal(m.defaults.action, POLICY_ACTION_DELETE);
        assert_int_equal(m.defaults.max_sessions, 20);
        assert_int_equal(m.defaults.min_idle, 2 * MSEC_PER_HOUR);
        /* looser ones are clamped, with a warning at the user's line */
        assert_int_equal(m.defaults.max_age, 30 * MSEC_PER_DAY);
        assert_false(m.defaults.keep_titled);
        assert_int_equal(m.tree.max_size, UINT64_C(20) << 30);
        assert_true(m.tree.count_allocated);
        {
                _cleanup_free_ char *l4 = util_strprintf("%s:4: warning: ", u);
                _cleanup_free_ char *l6 = util_strprintf("%s:6: warning: ", u);
                _cleanup_free_ char *l7 = util_strprintf("%s:7: warning: ", u);
                _cleanup_free_ char *l10 = util_strprintf("%s:10: warning: ", u);
                _cleanup_free_ char *l11 = util_strprintf("%s:11: warning: ", u);
                _cleanup_free_ char *l14 = util_strprintf("%s:14: warning: ", u);
                _cleanup_free_ char *l15 = util_strprintf("%s:15: warning: ", u);
                _cleanup_free_ char *l16 = util_strprintf("%s:16: warning: ", u);
                assert_msg(&e, l4, "max-age 90d keeps more than the system policy allows (max-age 30d");
                assert_msg(&e, l6, "keep-titled true");
                /* the whole text of a limit's and of a choice's warning */
                assert_msg(&e, l10, "tree max-size off keeps more than the system policy allows "
                                    "(20G, ");
                assert_msg(&e, l10, "/system.cfg:12); using it");
                assert_msg(&e, l11, "tree count \"apparent\" keeps more than the system policy "
                                    "allows (\"allocated\", built-in default); using it");
                assert_msg(&e, l14, "project '/srv/big': max-size 40G");
                assert_msg(&e, l15, "project '/srv/scratch/mine/*': max-age 10d");
                assert_msg(&e, l15, "project '/srv/scratch/mine/*': min-age 1d");
                /* inherited from the user's defaults: blamed on that line */
                assert_msg(&e, l7, "project '/srv/scratch/mine/*': min-idle 2h");
                assert_msg(&e, l16, "project '/home/u/proj': max-age off");
                assert_int_equal(e.n, 9);
        }
        /* an exact system block tightened by the user's same block */
        p = config_policy_for(&m, "/srv/big");
        assert_int_equal(p->max_size, UINT64_C(20) << 30);
        assert_int_equal(p->max_sessions, 20); /* inherits the user's tighter default */
        /* a new user glob inside an admin glob: held to the admin glob */
        p = config_policy_for(&m, "/srv/scratch/mine/a");
        assert_int_equal(p->max_age, 3 * MSEC_PER_DAY);
        assert_int_equal(p->min_age, MSEC_PER_HOUR);
        /* a new exact user path: held to what the system says for it */
        p = config_policy_for(&m, "/home/u/proj");
        assert_int_equal(p->max_age, 30 * MSEC_PER_DAY);
        assert_int_equal(p->max_sessions, 5);
        /* admin settings are the system's */
        assert_true(m.allow_user_files);
        assert_int_equal(m.n_user_dirs, 1);
        assert_int_equal(m.n_files, 2);
}

/* The property that matters: at every path, no key of the merged policy keeps more. */
static void test_config_merge_user_never_looser_anywhere(void **state) {
        static const char *const paths[] = {
                "/srv/big", "/srv/big/x", "/srv/scratch/a", "/srv/scratch/mine/a", "/srv/scratch/mine",
                "/home/u/proj", "/home/u/other", "/", "/srv",
        };
        _cleanup_(config_done) Config s = {}, m = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_merge("system.cfg", "user.cfg", &s, &m, &e), 1);
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                const Policy *a = config_policy_for(&s, paths[i]), *u = config_policy_for(&m, paths[i]);
#define LIMIT_OK(f) (a->f == 0 || (u->f != 0 && u->f <= a->f))
                print_message("path %s\n", paths[i]);
                assert_true(LIMIT_OK(max_age));
                assert_true(LIMIT_OK(max_sessions));
                assert_true(LIMIT_OK(max_size));
                assert_true(LIMIT_OK(archive_max_age));
                assert_true(LIMIT_OK(archive_max_size));
                assert_true(LIMIT_OK(max_deletions));
                assert_true(LIMIT_OK(max_deletions_percent));
#undef LIMIT_OK
                assert_true(u->min_age <= a->min_age);
                assert_true(u->min_idle <= a->min_idle);
                assert_true(u->keep_latest <= a->keep_latest);
                assert_true(u->orphan_min_age <= a->orphan_min_age);
                assert_true(!u->keep_pinned || a->keep_pinned);
                assert_true(!u->keep_titled || a->keep_titled);
                assert_true(!u->keep_scheduled || a->keep_scheduled);
                assert_true(!u->keep_worktree || a->keep_worktree);
                assert_true(a->action == POLICY_ACTION_ARCHIVE || u->action == POLICY_ACTION_DELETE);
        }
}

static void test_config_merge_user_forbidden_by_admin(void **state) {
        _cleanup_free_ char *u = test_data("user.cfg");
        _cleanup_(config_done) Config s = {}, m = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&s, "admin = { allow-user-files = false; };\n"
                                        "defaults = { max-age = \"60d\"; };",
                                    &e),
                         0);
        assert_int_equal(config_merge_user(&m, &s, u, &e), 0);
        assert_int_equal(e.n, 0);
        assert_int_equal(m.defaults.max_age, 60 * MSEC_PER_DAY);
        assert_int_equal(m.defaults.action, POLICY_ACTION_ARCHIVE);
        assert_int_equal(m.n_projects, 0);
        assert_int_equal(m.n_files, 1);
}

static void test_config_merge_user_missing_file(void **state) {
        _cleanup_(config_done) Config s = {}, m = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_merge("system.cfg", "no-such-user.cfg", &s, &m, &e), 0);
        assert_int_equal(e.n, 0);
        assert_int_equal(m.defaults.max_age, s.defaults.max_age);
        assert_int_equal(m.n_projects, s.n_projects);
}

static void test_config_merge_user_admin_group_refused(void **state) {
        _cleanup_free_ char *u = test_data("user-admin.cfg");
        _cleanup_free_ char *prefix = util_strprintf("%s:2: ", u);
        Config s = {}, m = { .n_files = 12345 };
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_merge("system.cfg", "user-admin.cfg", &s, &m, &e), -EINVAL);
        assert_msg(&e, prefix, "admin settings are only allowed in the system file");
        assert_int_equal(m.n_files, 12345); /* untouched on failure */
        config_done(&s);
}

/* A user's file that contradicts the system's values it inherits is an error, not a clamp. */
/* A grace of an earlier file wins over a shorter limit of a later one, as the built-in grace
 * does: the shipped /etc/qgc/qgc.conf (which writes min-age 3d) under a user's max-age 2d is
 * as valid as that user file alone (issue 11). The reverse order is still an error. */
static void test_config_layering_earlier_grace_wins(void **state) {
        _cleanup_(config_done) Config c = {}, alone = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c, "defaults = { min-age = \"3d\"; };", &e), 0);
        assert_int_equal(config_load_string(&c, "defaults = { max-age = \"2d\"; };", "u.conf", &e), 0);
        assert_int_equal(e.n, 0);
        assert_int_equal(config_init_default(&alone), 0);
        assert_int_equal(config_load_string(&alone, "defaults = { max-age = \"2d\"; };", "u.conf", &e), 0);
        assert_int_equal(c.defaults.min_age, alone.defaults.min_age);
        assert_int_equal(c.defaults.max_age, alone.defaults.max_age);
}

static void test_config_merge_user_contradiction_is_error(void **state) {
        _cleanup_(config_done) Config s = {}, m = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        _cleanup_free_ char *tmp = strdup("/tmp/qgc-test-config-XXXXXX");
        FILE *f;
        int fd;

        assert_int_equal(test_parse(&s, "defaults = { max-age = \"10d\"; };", &e), 0);
        fd = mkstemp(tmp);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        fputs("defaults = {\n min-age = \"20d\"; };\n", f);
        fclose(f);
        assert_int_equal(config_merge_user(&m, &s, tmp, &e), -EINVAL);
        unlink(tmp);
        assert_int_equal(e.n, 1);
        assert_non_null(strstr(e.msgs[0], ":2: min-age 20d"));
}

/* etc/qgc.conf parses, documents every key, and shows exactly the built-in defaults. */
static void test_config_etc_example_matches_builtin(void **state) {
        const char *src = getenv("QGC_SRCDIR");
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_(config_done) Config c = {}, d = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        if (!src)
                fail_msg("QGC_SRCDIR is not set (run through make check)");
        path = util_strprintf("%s/etc/qgc.conf", src);
        assert_int_equal(config_init_default(&c), 0);
        assert_int_equal(config_init_default(&d), 0);
        if (config_load_file(&c, path, &e) != 0) {
                test_dump(&e);
                fail();
        }
        assert_memory_equal(&c.defaults, &d.defaults, sizeof(Policy));
        assert_int_equal(c.tree.max_size, d.tree.max_size);
        assert_int_equal(c.tree.low_watermark, d.tree.low_watermark);
        assert_int_equal(c.tree.keep_free.is_set, d.tree.keep_free.is_set);
        assert_int_equal(c.tree.count_allocated, d.tree.count_allocated);
        assert_int_equal(c.allow_user_files, d.allow_user_files);
        assert_int_equal(c.n_projects, 0);
        /* and every value there is written in the file, not left to the built-ins */
        for (int k = 0; k < _POLICY_KEY_MAX; k++)
                assert_string_not_equal(c.defaults_origin.where[k], "built-in default");

        text = test_read(path);
        for (int k = 0; k < _POLICY_KEY_MAX; k++)
                assert_non_null(strstr(text, config_keys[k].name));
        static const char *const more[] = { "low-watermark", "keep-free", "count", "projects",
                                            "path", "allow-user-files", "user-dirs" };
        for (size_t i = 0; i < ELEMENTSOF(more); i++)
                assert_non_null(strstr(text, more[i]));
}

/* ------------------------------------------------------------------ numbers out of range */

typedef struct RangeCase {
        const char *group; /* "defaults", "tree", "admin" or "projects" */
        const char *key;
        const char *value; /* as written in the file */
        const char *echo;  /* what the message must contain: the value as given */
} RangeCase;

/* Every numeric key with values that do not fit it: each is an error at the value's line that
 * names the key and echoes the value exactly as written. libconfig 1.5 reads a plain integer
 * modulo 2^32 (4294967297 as 1, 4294967296 as 0), so these once passed or echoed a wrong
 * number. */
static void test_config_parse_string_numbers_out_of_range(void **state) {
#define COUNT_CASES(g, k)                                                                          \
        { g, k, "4294967297", "4294967297" }, { g, k, "4294967296", "4294967296" },                \
        { g, k, "2147483648", "2147483648" }, { g, k, "9223372036854775807", "9223372036854775807" }, \
        { g, k, "9223372036854775808", "9223372036854775808" },                                    \
        { g, k, "99999999999999999999", "99999999999999999999" }, { g, k, "-1", "-1" },            \
        { g, k, "-4294967295", "-4294967295" }, { g, k, "4294967297L", "4294967297L" },            \
        { g, k, "9223372036854775807L", "9223372036854775807L" },                                  \
        { g, k, "99999999999999999999L", "99999999999999999999L" },                                \
        { g, k, "-9223372036854775809L", "-9223372036854775809L" },                                \
        { g, k, "0x100000001", "0x100000001" }, { g, k, "0xFFFFFFFF", "0xFFFFFFFF" },              \
        { g, k, "0x1FFFFFFFFFFFFFFFFL", "0x1FFFFFFFFFFFFFFFFL" }, { g, k, "2.5", "2.5" },          \
        { g, k, "1e3", "1e3" }, { g, k, "\"0.5%\"", "\"0.5%\"" }, { g, k, "\"12\"", "\"12\"" }
#define DURATION_CASES(g, k)                                                                       \
        { g, k, "4294967297", "4294967297" }, { g, k, "4294967297L", "4294967297L" },              \
        { g, k, "-1", "-1" }, { g, k, "0x100000001", "0x100000001" }, { g, k, "2.5", "2.5" },      \
        { g, k, "\"1.5d\"", "\"1.5d\"" }, { g, k, "\"0.5h\"", "\"0.5h\"" },                        \
        { g, k, "\"-1d\"", "\"-1d\"" }, { g, k, "\"36501d\"", "36501d" },                          \
        { g, k, "\"9999999999999999999999d\"", "9999999999999999999999d" },                        \
        { g, k, "\"4294967297w\"", "4294967297w" }, { g, k, "\"10%\"", "\"10%\"" }
#define SIZE_CASES(g, k)                                                                           \
        { g, k, "4294967297", "4294967297" }, { g, k, "4294967296L", "4294967296L" },              \
        { g, k, "-1", "-1" }, { g, k, "0x100000001", "0x100000001" }, { g, k, "2.5", "2.5" },      \
        { g, k, "\"1.5G\"", "\"1.5G\"" }, { g, k, "\"0.5T\"", "\"0.5T\"" },                        \
        { g, k, "\"-1G\"", "\"-1G\"" }, { g, k, "\"16777216T\"", "\"16777216T\"" },               \
        { g, k, "\"99999999999999999999B\"", "\"99999999999999999999B\"" }
        static const RangeCase cases[] = {
                COUNT_CASES("defaults", "max-sessions"),
                COUNT_CASES("defaults", "keep-latest"),
                COUNT_CASES("defaults", "max-deletions"),
                COUNT_CASES("projects", "max-sessions"),
                COUNT_CASES("projects", "keep-latest"),
                DURATION_CASES("defaults", "max-age"),
                DURATION_CASES("defaults", "min-age"),
                DURATION_CASES("defaults", "min-idle"),
                DURATION_CASES("defaults", "archive-max-age"),
                DURATION_CASES("defaults", "orphan-min-age"),
                DURATION_CASES("projects", "max-age"),
                SIZE_CASES("defaults", "max-size"),
                SIZE_CASES("defaults", "archive-max-size"),
                SIZE_CASES("projects", "archive-max-size"),
                SIZE_CASES("tree", "max-size"),
                SIZE_CASES("tree", "low-watermark"),
                SIZE_CASES("tree", "keep-free"),
                { "defaults", "max-sessions", "\"4294967297\"", "\"4294967297\"" },
                { "defaults", "max-sessions", "true", "true" },
                /* percentages: a fraction is fine for max-deletions-percent, not for keep-free */
                { "defaults", "max-deletions-percent", "4294967346", "4294967346" },
                { "defaults", "max-deletions-percent", "4294967296", "4294967296" },
                { "defaults", "max-deletions-percent", "4294967346L", "4294967346L" },
                { "defaults", "max-deletions-percent", "0x100000032", "0x100000032" },
                { "defaults", "max-deletions-percent", "9223372036854775807", "9223372036854775807" },
                { "defaults", "max-deletions-percent", "18446744073709551666",
                  "18446744073709551666" },
                { "defaults", "max-deletions-percent", "-1", "-1" },
                { "defaults", "max-deletions-percent", "-0.5", "-0.5" },
                { "defaults", "max-deletions-percent", "100.5", "100.5" },
                { "defaults", "max-deletions-percent", "1e400", "1e400" },
                { "defaults", "max-deletions-percent", "\"150%\"", "\"150%\"" },
                { "defaults", "max-deletions-percent", "\"-5%\"", "\"-5%\"" },
                { "projects", "max-deletions-percent", "4294967346", "4294967346" },
                { "tree", "keep-free", "\"0.5%\"", "\"0.5%\"" },
                { "tree", "keep-free", "\"10.0%\"", "\"10.0%\"" },
                { "tree", "keep-free", "\"99.9%\"", "\"99.9%\"" },
                { "tree", "keep-free", "\"100%\"", "100%" },
                { "tree", "keep-free", "\"150%\"", "\"150%\"" },
                { "tree", "keep-free", "\"-10%\"", "\"-10%\"" },
                { "admin", "allow-user-files", "4294967297", "4294967297" },
                { "admin", "allow-user-files", "0x100000001", "0x100000001" },
        };
#undef COUNT_CASES
#undef DURATION_CASES
#undef SIZE_CASES

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const RangeCase *t = &cases[i];
                _cleanup_(config_done) Config c = {};
                _cleanup_(config_errors_done) ConfigErrors e = {};
                _cleanup_free_ char *text = NULL, *needle = NULL;
                bool found = false;
                int r;

                if (streq(t->group, "projects"))
                        text = util_strprintf("projects = ( { path = \"/p\";\n  %s = %s;\n} );\n",
                                              t->key, t->value);
                else
                        text = util_strprintf("%s = {\n  %s = %s;\n};\n", t->group, t->key,
                                              t->value);
                needle = util_strprintf("%s: ", t->key);
                assert_non_null(text);
                assert_non_null(needle);
                r = test_parse(&c, text, &e);
                for (size_t j = 0; j < e.n; j++)
                        found = found || (strneq(e.msgs[j], "t.conf:2: ", 10) &&
                                          strstr(e.msgs[j], needle) && strstr(e.msgs[j], t->echo));
                if (r != -EINVAL || !found) {
                        test_dump(&e);
                        fail_msg("case %zu: %s %s = %s: got %d, want an error at t.conf:2 naming "
                                 "the key and echoing %s",
                                 i, t->group, t->key, t->value, r, t->echo);
                }
        }
}

/* Values at the edges that do fit are still taken, with their exact value. */
static void test_config_parse_string_numbers_in_range(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(test_parse(&c,
                                    "defaults = { max-sessions = 1000000000; keep-latest = 0x10;"
                                    " max-deletions = 7L; max-deletions-percent = 0x64; };\n"
                                    "tree = { keep-free = \"99%\"; };",
                                    &e),
                         0);
        assert_int_equal(c.defaults.max_sessions, 1000000000);
        assert_int_equal(c.defaults.keep_latest, 16);
        assert_int_equal(c.defaults.max_deletions, 7);
        assert_true(c.defaults.max_deletions_percent == 100);
        assert_true(c.tree.keep_free.is_percent && c.tree.keep_free.percent == 99);
}

/* ------------------------------------------------------------------ @include */

/* A fresh directory for include tests; removed by test_rmdir(). */
static char *test_mkdir(void) {
        const char *tmp = getenv("TMPDIR");
        char *d = util_strprintf("%s/qgc-inc.XXXXXX", tmp && *tmp ? tmp : "/tmp");

        assert_non_null(d);
        assert_non_null(mkdtemp(d));
        return d;
}

static void test_rmdir(char **d) {
        if (*d) {
                _cleanup_free_ char *cmd = util_strprintf("rm -rf '%s'", *d);
                if (cmd)
                        (void)!system(cmd);
                free(*d);
        }
}

/* Write dir/name with text; returns the path. */
static char *test_write(const char *dir, const char *name, const char *text) {
        char *p = util_strprintf("%s/%s", dir, name);
        FILE *f;

        assert_non_null(p);
        f = fopen(p, "we");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
        return p;
}

/* Load dir/main.conf on top of the defaults. */
static int test_load_main(const char *dir, Config *c, ConfigErrors *e) {
        _cleanup_free_ char *p = util_strprintf("%s/main.conf", dir);

        assert_int_equal(config_init_default(c), 0);
        return config_load_file(c, p, e);
}

/* An included file's text takes the directive's place; a relative path is taken from the
 * including file's directory; errors inside an included file carry its own file:line. */
static void test_config_include_nested_file_line(void **state) {
        _cleanup_(test_rmdir) char *d = test_mkdir();
        _cleanup_free_ char *m = NULL, *a = NULL, *b = NULL, *sub = util_strprintf("%s/sub", d);
        _cleanup_free_ char *where = NULL;
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};

        assert_int_equal(mkdir(sub, 0700), 0);
        m = test_write(d, "main.conf",
                       "defaults = {\n  max-age = \"30d\";\n  @include \"sub/a.conf\" # more\n"
                       "  min-age = \"1d\";\n};\n");
        a = test_write(sub, "a.conf", "# a\nkeep-latest = 2;\n@include \"b.conf\"\n");
        b = test_write(sub, "b.conf", "\nmax-sessions = 7;"); /* no final newline */
        assert_int_equal(test_load_main(d, &c, &e), 0);
        assert_int_equal(c.defaults.max_age, 30 * MSEC_PER_DAY);
        assert_int_equal(c.defaults.min_age, MSEC_PER_DAY);
        assert_int_equal(c.defaults.keep_latest, 2);
        assert_int_equal(c.defaults.max_sessions, 7);
        where = util_strprintf("%s/sub/b.conf:2", d);
        assert_string_equal(c.defaults_origin.where[POLICY_KEY_MAX_SESSIONS], where);
        free(where);
        where = util_strprintf("%s/main.conf:4", d);
        assert_string_equal(c.defaults_origin.where[POLICY_KEY_MIN_AGE], where);
        assert_int_equal(c.n_files, 3);
        assert_string_equal(c.files[0], m);
        assert_string_equal(c.files[1], a);
        assert_string_equal(c.files[2], b);
        assert_null(c.files_from[0]);
        free(where);
        where = util_strprintf("%s:3", m);
        assert_string_equal(c.files_from[1], where);

        /* an error inside the innermost file, and one after the includes, each at its line */
        config_done(&c);
        config_errors_done(&e);
        free(b);
        b = test_write(sub, "b.conf", "\nmax-sessions = 4294967297;\n");
        free(m);
        m = test_write(d, "main.conf", "defaults = {\n  @include \"sub/a.conf\"\n  min-age = 5;\n};\n");
        assert_int_equal(test_load_main(d, &c, &e), -EINVAL);
        free(where);
        where = util_strprintf("%s:2: ", b);
        assert_msg(&e, where, "max-sessions: 4294967297 is out of range");
        free(where);
        where = util_strprintf("%s:3: ", m);
        assert_msg(&e, where, "min-age: expected a duration string");
}

/* --explain lists the main file and each include, in order, with where it was included. */
static void test_config_include_explain_lists_files(void **state) {
        _cleanup_(test_rmdir) char *d = test_mkdir();
        _cleanup_free_ char *m = NULL, *a = NULL, *b = NULL, *out = NULL, *line = NULL;
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        size_t n = 0;
        FILE *f;

        m = test_write(d, "main.conf", "@include \"a.conf\"\n@include \"b.conf\"\n");
        a = test_write(d, "a.conf", "defaults = { max-age = \"20d\"; };\n");
        b = test_write(d, "b.conf", "tree = { max-size = \"5G\"; };\n");
        assert_int_equal(test_load_main(d, &c, &e), 0);
        f = open_memstream(&out, &n);
        assert_non_null(f);
        assert_int_equal(config_explain(&c, f), 0);
        assert_int_equal(fclose(f), 0);
        line = util_strprintf("files: %s %s %s\n", m, a, b);
        assert_non_null(strstr(out, line));
        free(line);
        line = util_strprintf("%s included from %s:1\n", a, m);
        assert_non_null(strstr(out, line));
        free(line);
        line = util_strprintf("%s included from %s:2\n", b, m);
        assert_non_null(strstr(out, line));
        assert_true(strstr(out, a) < strstr(out, b));
}

typedef struct IncludeCase {
        const char *name;
        const char *main;   /* main.conf */
        const char *needle; /* in the error at <at>:<line> */
        const char *at;
        unsigned line;
} IncludeCase;

/* Includes that are refused, quickly and at the directive's file:line: a FIFO (never opened for
 * reading), a device, a directory, a missing file, a cycle, too deep, an oversized file, and
 * malformed directives. */
static void test_config_include_refused(void **state) {
        _cleanup_(test_rmdir) char *d = test_mkdir();
        _cleanup_free_ char *fifo = util_strprintf("%s/fifo", d),
                            *dir = util_strprintf("%s/dir", d);
        _cleanup_free_ char *big = util_strprintf("%s/big.conf", d);
        static const IncludeCase cases[] = {
                { "fifo", "defaults = {\n@include \"fifo\"\n};\n", "not a regular file", "main.conf", 2 },
                { "device", "@include \"/dev/zero\"\n", "not a regular file", "main.conf", 1 },
                { "/dev/null", "@include \"/dev/null\"\n", "not a regular file", "main.conf", 1 },
                { "directory", "\n@include \"dir\"\n", "Is a directory", "main.conf", 2 },
                { "missing", "@include \"nope.conf\"\n", "No such file", "main.conf", 1 },
                { "self", "@include \"main.conf\"\n", "include cycle", "main.conf", 1 },
                { "cycle", "@include \"cyc1.conf\"\n", "include cycle", "cyc2.conf", 2 },
                { "deep", "@include \"d1.conf\"\n", "nested too deep", "d10.conf", 1 },
                { "oversized", "@include \"big.conf\"\n", "larger than 4194304 bytes", "main.conf", 1 },
                { "empty path", "@include \"\"\n", "empty path", "main.conf", 1 },
                { "text after", "@include \"ok.conf\" defaults = {};\n", "only a comment", "main.conf", 1 },
                { "unterminated", "@include \"ok.conf\n", "unterminated", "main.conf", 1 },
                { "unterminated comment", "@include \"opencomment.conf\"\n", "unterminated comment",
                  "opencomment.conf", 2 },
        };
        FILE *f;

        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(mkdir(dir, 0700), 0);
        free(test_write(d, "ok.conf", ""));
        free(test_write(d, "cyc1.conf", "@include \"cyc2.conf\"\n"));
        free(test_write(d, "cyc2.conf", "# back to the first\n@include \"cyc1.conf\"\n"));
        free(test_write(d, "opencomment.conf", "/* no end\n"));
        for (int i = 1; i <= 12; i++) {
                _cleanup_free_ char *name = util_strprintf("d%d.conf", i);
                _cleanup_free_ char *text = util_strprintf("@include \"d%d.conf\"\n", i + 1);
                free(test_write(d, name, text));
        }
        free(test_write(d, "d13.conf", ""));
        f = fopen(big, "we");
        assert_non_null(f);
        for (int i = 0; i < 4 * 1024 + 1; i++)
                for (int j = 0; j < 1024 / 16; j++)
                        assert_true(fputs("# padding......\n", f) >= 0);
        assert_int_equal(fclose(f), 0);

        alarm(20); /* a FIFO opened for reading would block: fail instead of hanging */
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const IncludeCase *t = &cases[i];
                _cleanup_(config_done) Config c = {};
                _cleanup_(config_errors_done) ConfigErrors e = {};
                _cleanup_free_ char *prefix = NULL;
                int r;

                free(test_write(d, "main.conf", t->main));
                prefix = util_strprintf("%s/%s:%u: ", d, t->at, t->line);
                r = test_load_main(d, &c, &e);
                if (r != -EINVAL || !test_has_msg(&e, prefix, t->needle)) {
                        test_dump(&e);
                        fail_msg("%s: got %d, want an error \"%s...%s\"", t->name, r, prefix,
                                 t->needle);
                }
        }
        alarm(0);
}

/* The system file and a user's own file must be regular files: a FIFO with a writer that never
 * writes (a user's in root mode) would hang the run. -c FILE may still be a pipe. */
static void test_config_user_and_system_file_fifo_refused(void **state) {
        _cleanup_(test_rmdir) char *d = test_mkdir();
        _cleanup_free_ char *fifo = util_strprintf("%s/qgc.conf", d);
        int wfd;
        (void)state;

        assert_int_equal(mkfifo(fifo, 0600), 0);
        /* a writer that never writes: reading the FIFO would block for ever */
        wfd = open(fifo, O_RDWR | O_CLOEXEC);
        assert_true(wfd >= 0);
        alarm(20);
        {
                _cleanup_(config_done) Config c = {};
                _cleanup_(config_errors_done) ConfigErrors e = {};
                assert_int_equal(config_init_default(&c), 0);
                assert_int_equal(config_load_user_file(&c, fifo, &e), -EINVAL);
                assert_true(test_has_msg(&e, fifo, "not a regular file"));
        }
        {
                _cleanup_(config_done) Config c = {};
                _cleanup_(config_errors_done) ConfigErrors e = {};
                assert_int_equal(config_init_default(&c), 0);
                assert_int_equal(config_load_system_file(&c, fifo, &e), -EINVAL);
                assert_true(test_has_msg(&e, fifo, "not a regular file"));
        }
        alarm(0);
        close(wfd);
}

/* What is not a directive is not expanded: an @include inside a comment or a string, or with
 * text before it on the line (a syntax error, as libconfig has it). */
static void test_config_include_only_at_line_start(void **state) {
        _cleanup_(test_rmdir) char *d = test_mkdir();
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        _cleanup_free_ char *m = NULL, *prefix = NULL;

        free(test_write(d, "x.conf", "defaults = { max-age = \"1d\"; };\n"));
        m = test_write(d, "main.conf",
                       "/*\n@include \"x.conf\"\n*/\n# @include \"x.conf\"\n"
                       "projects = ( { path = \"/a\n@include \\\"x.conf\\\"\"; } );\n");
        assert_int_equal(test_load_main(d, &c, &e), 0);
        assert_int_equal(c.n_files, 1);
        assert_int_equal(c.defaults.max_age, 90 * MSEC_PER_DAY);
        config_done(&c);
        free(m);
        m = test_write(d, "main.conf", "defaults = {}; @include \"x.conf\"\n");
        assert_int_equal(test_load_main(d, &c, &e), -EINVAL);
        prefix = util_strprintf("%s:1: ", m);
        assert_msg(&e, prefix, "syntax error");
}

/* qgc.conf(5) documents every key. */
static void test_config_man_page_documents_every_key(void **state) {
        const char *src = getenv("QGC_SRCDIR");
        _cleanup_free_ char *path = NULL, *text = NULL;
        static const char *const more[] = { "low-watermark", "keep-free", "count",
                                            "allow-user-files", "user-dirs" };

        if (!src)
                fail_msg("QGC_SRCDIR is not set (run through make check)");
        path = util_strprintf("%s/man/qgc.conf.5", src);
        text = test_read(path);
        for (int k = 0; k < _POLICY_KEY_MAX; k++) {
                _cleanup_free_ char *needle = util_strprintf("Cm %s", config_keys[k].name);
                if (!strstr(text, needle))
                        fail_msg("qgc.conf.5 does not document %s", config_keys[k].name);
        }
        for (size_t i = 0; i < ELEMENTSOF(more); i++) {
                _cleanup_free_ char *needle = util_strprintf("Cm %s", more[i]);
                if (!strstr(text, needle))
                        fail_msg("qgc.conf.5 does not document %s", more[i]);
        }
}

/* The words of action and the names of the keys are the table's; a word is matched exactly. */
static void test_config_policy_action_and_key_strings(void **state) {
        const ConfigKeyInfo *a = &config_keys[POLICY_KEY_ACTION];

        assert_int_equal(a->n_words, _POLICY_ACTION_MAX);
        assert_string_equal(a->words[POLICY_ACTION_DELETE], "delete");
        assert_string_equal(a->words[POLICY_ACTION_ARCHIVE], "archive");
        test_one_error("defaults = { action = \"Archive\"; };", "t.conf:1: ",
                       "action: invalid value \"Archive\"");
        assert_string_equal(config_keys[POLICY_KEY_MAX_DELETIONS_PERCENT].name,
                            "max-deletions-percent");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_config_init_default_values),
                cmocka_unit_test(test_config_done_accepts_zeroed),
                cmocka_unit_test(test_config_parse_string_empty_keeps_defaults),
                cmocka_unit_test(test_config_load_file_every_key),
                cmocka_unit_test(test_config_load_file_missing_is_enoent_silently),
                cmocka_unit_test(test_config_load_file_directory_is_error),
                cmocka_unit_test(test_config_load_file_dev_null_is_empty),
                cmocka_unit_test(test_config_load_file_nul_byte_and_too_large),
                cmocka_unit_test(test_config_load_file_syntax_error_line),
                cmocka_unit_test(test_config_load_file_reports_all_errors_at_once),
                cmocka_unit_test(test_config_parse_string_value_errors),
                cmocka_unit_test(test_config_parse_string_continues_after_bad_project),
                cmocka_unit_test(test_config_parse_string_contradictions),
                cmocka_unit_test(test_config_parse_string_no_contradiction_at_edges),
                cmocka_unit_test(test_config_parse_string_off_values),
                cmocka_unit_test(test_config_parse_string_other_spellings),
                cmocka_unit_test(test_config_admin_only_in_system_file),
                cmocka_unit_test(test_config_layering_defaults_flow_into_earlier_overrides),
                cmocka_unit_test(test_config_layering_same_project_merges_across_files),
                cmocka_unit_test(test_config_layering_contradiction_blames_later_file),
                cmocka_unit_test(test_config_policy_for_specificity),
                cmocka_unit_test(test_config_policy_for_tie_later_wins),
                cmocka_unit_test(test_config_explain_shows_origins),
                cmocka_unit_test(test_config_explain_builtin),
                cmocka_unit_test(test_config_copy_is_deep),
                cmocka_unit_test(test_config_merge_user_clamps_to_system),
                cmocka_unit_test(test_config_merge_user_never_looser_anywhere),
                cmocka_unit_test(test_config_merge_user_forbidden_by_admin),
                cmocka_unit_test(test_config_merge_user_missing_file),
                cmocka_unit_test(test_config_merge_user_admin_group_refused),
                cmocka_unit_test(test_config_merge_user_contradiction_is_error),
                cmocka_unit_test(test_config_layering_earlier_grace_wins),
                cmocka_unit_test(test_config_etc_example_matches_builtin),
                cmocka_unit_test(test_config_parse_string_numbers_out_of_range),
                cmocka_unit_test(test_config_parse_string_numbers_in_range),
                cmocka_unit_test(test_config_include_nested_file_line),
                cmocka_unit_test(test_config_include_explain_lists_files),
                cmocka_unit_test(test_config_include_refused),
                cmocka_unit_test(test_config_user_and_system_file_fifo_refused),
                cmocka_unit_test(test_config_include_only_at_line_start),
                cmocka_unit_test(test_config_man_page_documents_every_key),
                cmocka_unit_test(test_config_policy_action_and_key_strings),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
