/* test_config_table.c: the key table of qgc.conf (src/config/config.c): every key parses its own
 * default, bounds hold at exactly the limit, a key outside its group is refused, --explain shows
 * every key, and qgc.conf(5)'s key lists (POLICY KEYS, TREE KEYS, ADMIN SETTINGS, BUILT-IN
 * DEFAULT) are the table's, in both directions. */
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
#include "macro.h"
#include "testdata.h"
#include "util.h"
#include "config-load.c" /* its static functions are tested here */

/* Apply a configuration text as config_load_file() applies a file's, name labelling messages */
static int config_load_string(Config *c, const char *text, const char *name, ConfigErrors *errs) {
        return config_load_apply(c, name ? name : "<string>", text, strlen(text), NULL,
                                 c->n_files == 0, errs);
}

static void test_dump(const ConfigErrors *e) {
        for (size_t i = 0; i < e->n; i++)
                print_message("  msg[%zu] %s\n", i, e->msgs[i]);
}

/* The group a key is written in, as "<group> = { %s };" or a project block. */
static char *test_in_group(ConfigScope scope, bool project, const char *setting) {
        if (project)
                return util_strprintf("projects = ( { path = \"/p\"; %s } );", setting);
        return util_strprintf("%s = { %s };", config_scopes[scope].group, setting);
}

/* Parse text on top of the built-in defaults (as the first file: admin allowed). */
static int test_parse(Config *c, const char *text, ConfigErrors *e) {
        assert_int_equal(config_init_default(c), 0);
        return config_load_string(c, text, "t.conf", e);
}

/* The value of k in c: the defaults' for a policy key (or the first project's), else c's. */
static const void *test_base(const ConfigKeyInfo *k, const Config *c, bool project) {
        if (k->scope != CONFIG_SCOPE_POLICY)
                return c;
        return project ? (const void *)&c->projects[0].policy : (const void *)&c->defaults;
}

/* The key's built-in default written as the file would ("90d" quoted, 100 bare, "( )"). */
static char *test_default_literal(const ConfigKeyInfo *k, const Config *def) {
        _cleanup_free_ char *v = config_key_format(k, def);

        assert_non_null(v);
        switch (k->type) {
        case CONFIG_VALUE_COUNT:
        case CONFIG_VALUE_BOOL:
                return streq(v, "off") ? strdup("\"off\"") : strdup(v);
        case CONFIG_VALUE_PATH_LIST:
                return strdup("( )");
        default:
                return util_strprintf("\"%s\"", v);
        }
}

static void test_table_is_complete(void **state) {
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];

                if (!k->name || !k->help || !k->help[0])
                        fail_msg("config_keys[%zu] has no name or help", i);
                assert_true(k->size > 0);
                assert_ptr_equal(config_key_find(k->scope, k->name), k); /* unique in its group */
                assert_true((i < _POLICY_KEY_MAX) == (k->scope == CONFIG_SCOPE_POLICY));
                if (k->type == CONFIG_VALUE_CHOICE)
                        assert_true(k->n_words >= 2 && k->def < k->n_words);
                if (k->type == CONFIG_VALUE_PATH || k->type == CONFIG_VALUE_PATH_LIST)
                        assert_non_null(k->example);
        }
}

/* Every key, written with its own default (as --explain spells it), parses back to exactly
 * that value, in its group and (policy keys) in a project block. */
static void test_every_key_parses_its_default(void **state) {
        _cleanup_(config_done) Config def = {};

        assert_int_equal(config_init_default(&def), 0);
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];

                if (k->type == CONFIG_VALUE_PATH)
                        continue; /* no default: "none" */
                for (int project = 0; project <= (k->scope == CONFIG_SCOPE_POLICY); project++) {
                        _cleanup_(config_done) Config c = {};
                        _cleanup_(config_errors_done) ConfigErrors e = {};
                        _cleanup_free_ char *lit = test_default_literal(k, &def);
                        _cleanup_free_ char *setting = util_strprintf("%s = %s;", k->name, lit);
                        _cleanup_free_ char *text = test_in_group(k->scope, project, setting);
                        _cleanup_free_ char *got = NULL, *want = NULL;

                        if (test_parse(&c, text, &e) != 0) {
                                test_dump(&e);
                                fail_msg("the default of %s does not parse: %s", k->name, text);
                        }
                        got = config_key_format(k, test_base(k, &c, project));
                        want = config_key_format(k, &def);
                        assert_string_equal(got, want);
                        const void *vc = config_key_ptr_const(k, test_base(k, &c, project));
                        const void *vd = config_key_ptr_const(k, test_base(k, &def, false));

                        if (k->type != CONFIG_VALUE_PATH_LIST && memcmp(vc, vd, k->size) != 0)
                                fail_msg("%s: \"%s\" parses to another value", k->name, lit);
                        if (project)
                                assert_string_equal(c.projects[0].origin.where[i], "t.conf:1");
                        else
                                assert_string_equal(*config_key_origin(k, &c, &c.defaults_origin),
                                                    "t.conf:1");
                }
        }
}

/* Does "<key> = <lit>;" in the key's group parse? On refusal, the one error names the key. */
static bool test_accepts(const ConfigKeyInfo *k, const char *lit) {
        _cleanup_(config_done) Config c = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        /* a low-watermark needs a max-size above it */
        bool ctx = k == &config_keys[CONFIG_KEY_TREE_LOW_WATERMARK];
        _cleanup_free_ char *setting =
                util_strprintf("%s%s = %s;", ctx ? "max-size = \"1T\"; " : "", k->name, lit);
        _cleanup_free_ char *text = test_in_group(k->scope, false, setting);
        int r = test_parse(&c, text, &e);

        if (r == 0)
                return true;
        assert_int_equal(r, -EINVAL);
        if (e.n != 1 || !strneq(e.msgs[0], "t.conf:1: ", 10) || !strstr(e.msgs[0], k->name)) {
                test_dump(&e);
                fail_msg("%s = %s: want one error naming the key", k->name, lit);
        }
        return false;
}

static void test_accept(const ConfigKeyInfo *k, const char *lit) {
        if (!test_accepts(k, lit))
                fail_msg("%s = %s is refused, but is within the table's bounds", k->name, lit);
}

static void test_refuse(const ConfigKeyInfo *k, const char *lit) {
        if (test_accepts(k, lit))
                fail_msg("%s = %s is accepted, but is beyond the table's bounds", k->name, lit);
}

/* The table's bounds, at exactly the limit and one step beyond (a second for durations, one
 * for counts), for every key. */
static void test_bounds_at_the_limit(void **state) {
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];
                char b[FORMAT_DURATION_MAX + 2];
                _cleanup_free_ char *lit = NULL;

                switch (k->type) {
                case CONFIG_VALUE_DURATION:
                        if (k->min > 0) {
                                b[0] = '"';
                                util_format_duration_exact(b + 1, sizeof b - 2, (msec_t)k->min);
                                strcat(b, "\"");
                                test_accept(k, b);
                                util_format_duration_exact(b + 1, sizeof b - 2,
                                                           (msec_t)k->min - MSEC_PER_SEC);
                                strcat(b, "\"");
                                test_refuse(k, b);
                        } else
                                test_accept(k, "\"0s\"");
                        util_format_duration_exact(b + 1, sizeof b - 2, (msec_t)k->max);
                        strcat(b, "\"");
                        test_accept(k, b);
                        util_format_duration_exact(b + 1, sizeof b - 2,
                                                   (msec_t)k->max + MSEC_PER_SEC);
                        strcat(b, "\"");
                        test_refuse(k, b);
                        break;
                case CONFIG_VALUE_COUNT:
                        lit = util_strprintf("%" PRIu64, k->min);
                        test_accept(k, lit);
                        free(lit);
                        lit = util_strprintf("%" PRId64, (int64_t)k->min - 1);
                        test_refuse(k, lit);
                        free(lit);
                        lit = util_strprintf("%" PRIu64, k->max);
                        test_accept(k, lit);
                        free(lit);
                        lit = util_strprintf("%" PRIu64, k->max + 1);
                        test_refuse(k, lit);
                        break;
                case CONFIG_VALUE_PERCENT: /* (min, max] */
                        lit = util_strprintf("%" PRIu64, k->max);
                        test_accept(k, lit);
                        free(lit);
                        lit = util_strprintf("%" PRIu64 ".5", k->max);
                        test_refuse(k, lit);
                        free(lit);
                        lit = util_strprintf("%" PRIu64, k->min);
                        test_refuse(k, lit);
                        free(lit);
                        lit = util_strprintf("%" PRIu64 ".5", k->min);
                        test_accept(k, lit);
                        break;
                case CONFIG_VALUE_SIZE_OR_PERCENT: /* a percentage below max */
                        lit = util_strprintf("\"%" PRIu64 "%%\"", k->max - 1);
                        test_accept(k, lit);
                        free(lit);
                        lit = util_strprintf("\"%" PRIu64 "%%\"", k->max);
                        test_refuse(k, lit);
                        test_accept(k, "\"1B\"");
                        test_refuse(k, "\"0B\"");
                        break;
                case CONFIG_VALUE_SIZE:
                        test_accept(k, "\"1B\"");
                        test_refuse(k, "\"0B\"");
                        break;
                case CONFIG_VALUE_CHOICE:
                        for (size_t w = 0; w < k->n_words; w++) {
                                free(lit);
                                lit = util_strprintf("\"%s\"", k->words[w]);
                                test_accept(k, lit);
                        }
                        test_refuse(k, "\"none-of-these\"");
                        break;
                case CONFIG_VALUE_BOOL:
                        test_accept(k, "true");
                        test_accept(k, "false");
                        test_refuse(k, "\"true\"");
                        break;
                case CONFIG_VALUE_PATH:
                        test_accept(k, "\"/an/absolute/path\"");
                        test_refuse(k, "\"relative\"");
                        break;
                case CONFIG_VALUE_PATH_LIST:
                        test_accept(k, "( \"/a\", \"/b\" )");
                        test_refuse(k, "( \"/a\", \"relative\" )");
                        break;
                }
                /* "off": a limit (stored as 0 or never), or refused */
                if (k->type != CONFIG_VALUE_PATH && k->type != CONFIG_VALUE_PATH_LIST &&
                    k->type != CONFIG_VALUE_CHOICE && k->type != CONFIG_VALUE_BOOL) {
                        if (k->off == CONFIG_OFF_NO)
                                test_refuse(k, "\"off\"");
                        else
                                test_accept(k, "\"off\"");
                }
        }
}

/* The documented limits, written out: a change of the table's bounds fails here. */
static void test_bounds_as_documented(void **state) {
        static const struct {
                ConfigScope scope;
                const char *key, *at_limit, *beyond;
        } t[] = {
                { CONFIG_SCOPE_POLICY, "max-age", "\"1s\"", "\"999ms\"" },
                { CONFIG_SCOPE_POLICY, "max-age", "\"36500d\"", "\"36500d1s\"" },
                { CONFIG_SCOPE_POLICY, "min-age", "\"0s\"", "\"36501d\"" },
                { CONFIG_SCOPE_POLICY, "min-idle", "\"1min\"", "\"59s\"" },
                { CONFIG_SCOPE_POLICY, "orphan-min-age", "\"1h\"", "\"59min59s\"" },
                { CONFIG_SCOPE_POLICY, "tool-results-max-age", "\"1d\"", "\"23h59min59s\"" },
                { CONFIG_SCOPE_POLICY, "stale-tmp-min-age", "\"1d\"", "\"23h\"" },
                { CONFIG_SCOPE_POLICY, "debug-plans-min-age", "\"24h\"", "\"86399s\"" },
                { CONFIG_SCOPE_POLICY, "legacy-max-age", "\"1d\"", "\"1439min\"" },
                { CONFIG_SCOPE_POLICY, "archive-max-age", "\"1s\"", "\"0s\"" },
                { CONFIG_SCOPE_POLICY, "max-sessions", "1000000000", "1000000001" },
                { CONFIG_SCOPE_POLICY, "max-sessions", "1", "0" },
                { CONFIG_SCOPE_POLICY, "keep-latest", "0", "-1" },
                { CONFIG_SCOPE_POLICY, "keep-latest", "1000000000", "1000000001" },
                { CONFIG_SCOPE_POLICY, "max-deletions", "1000000000", "1000000001" },
                { CONFIG_SCOPE_POLICY, "max-deletions-percent", "100", "100.5" },
                { CONFIG_SCOPE_POLICY, "max-deletions-percent", "0.5", "0" },
                { CONFIG_SCOPE_TREE, "keep-free", "\"99%\"", "\"100%\"" },
                { CONFIG_SCOPE_TREE, "low-watermark", "\"1B\"", "\"0B\"" },
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                const ConfigKeyInfo *k = config_key_find(t[i].scope, t[i].key);

                assert_non_null(k);
                test_accept(k, t[i].at_limit);
                test_refuse(k, t[i].beyond);
        }
}

/* Is there a key of that name in scope (read from the table, not through the parser)? */
static bool test_name_in_scope(const char *name, ConfigScope scope) {
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++)
                if (config_keys[i].scope == scope && streq(config_keys[i].name, name))
                        return true;
        return false;
}

/* A key outside its group, and a name that is no key, are refused with "file:line:". */
static void test_unknown_key_refused(void **state) {
        _cleanup_(config_done) Config def_config = {};
        const Config *def = &def_config;

        assert_int_equal(config_init_default(&def_config), 0);
        for (size_t s = 0; s < _CONFIG_SCOPE_MAX; s++)
                for (int project = 0; project <= (s == CONFIG_SCOPE_POLICY); project++) {
                        _cleanup_(config_done) Config c = {};
                        _cleanup_(config_errors_done) ConfigErrors e = {};
                        _cleanup_free_ char *text =
                                test_in_group((ConfigScope)s, project, "no-such-key = 1;");

                        assert_int_equal(test_parse(&c, text, &e), -EINVAL);
                        assert_int_equal(e.n, 1);
                        assert_non_null(
                                strstr(e.msgs[0], "t.conf:1: unknown key 'no-such-key' in "));
                }
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++)
                for (size_t s = 0; s < _CONFIG_SCOPE_MAX; s++) {
                        const ConfigKeyInfo *k = &config_keys[i];
                        _cleanup_(config_done) Config c = {};
                        _cleanup_(config_errors_done) ConfigErrors e = {};
                        _cleanup_free_ char *setting = NULL, *text = NULL;

                        if (s == k->scope || test_name_in_scope(k->name, (ConfigScope)s))
                                continue; /* its own group, or a key of that name there */
                        /* a value valid for the key: only the group can refuse it */
                        if (k->type == CONFIG_VALUE_PATH)
                                setting = util_strprintf("%s = \"%s\";", k->name, k->example);
                        else {
                                _cleanup_free_ char *lit = test_default_literal(k, def);
                                setting = util_strprintf("%s = %s;", k->name, lit);
                        }
                        text = test_in_group((ConfigScope)s, false, setting);
                        if (test_parse(&c, text, &e) != -EINVAL || e.n != 1 ||
                            !strneq(e.msgs[0], "t.conf:1: ", 10)) {
                                test_dump(&e);
                                fail_msg("%s is accepted in %s", k->name, config_scopes[s].group);
                        }
                }
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) { /* nor at the top level */
                _cleanup_(config_done) Config c = {};
                _cleanup_(config_errors_done) ConfigErrors e = {};
                _cleanup_free_ char *text = util_strprintf("%s = 1;", config_keys[i].name);

                assert_int_equal(test_parse(&c, text, &e), -EINVAL);
        }
}

/* --explain shows every key of the table once in its group, with the default's spelling. */
static void test_explain_shows_every_key(void **state) {
        _cleanup_(config_done) Config c = {};
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        FILE *f;

        assert_int_equal(config_init_default(&c), 0);
        f = open_memstream(&out, &len);
        assert_non_null(f);
        assert_int_equal(config_explain(&c, f), 0);
        fclose(f);
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];
                _cleanup_free_ char *v = config_key_format(k, test_base(k, &c, false));
                _cleanup_free_ char *head =
                        util_strprintf("\n%s\n", config_scopes[k->scope].explain);
                _cleanup_free_ char *line =
                        util_strprintf("\n        %-22s %-10s %s\n", k->name, v, CONFIG_BUILTIN);
                const char *sect = strstr(out, head), *at = sect ? strstr(sect, line) : NULL;

                if (!at)
                        fail_msg("--explain does not show %s = %s in %s\n%s", k->name, v,
                                 config_scopes[k->scope].group, out);
        }
}

static char *test_man_page(void) {
        const char *src = getenv("QGC_SRCDIR");
        _cleanup_free_ char *path = NULL;

        if (!src)
                fail_msg("QGC_SRCDIR is not set (run through make check)");
        path = util_strprintf("%s/man/qgc.conf.5", src);
        return test_read(path);
}

/* qgc.conf(5)'s synopsis of a key's value, in mdoc ("Ar duration | Qo off Qc"). */
static char *test_synopsis(const ConfigKeyInfo *k) {
        const char *off = k->off == CONFIG_OFF_NO ? "" : " | Qo off Qc";

        if (k->arg)
                return util_strprintf("Ar %s%s", k->arg, off);

        switch (k->type) {
        case CONFIG_VALUE_CHOICE: {
                StrBuf b = {};
                for (size_t i = 0; i < k->n_words; i++)
                        if (strbuf_printf(&b, "%sQo %s Qc", i > 0 ? " | " : "", k->words[i]) < 0) {
                                strbuf_done(&b);
                                return NULL;
                        }
                return strbuf_steal(&b);
        }
        case CONFIG_VALUE_DURATION:
                return util_strprintf("Ar duration%s", off);
        case CONFIG_VALUE_COUNT:
                return util_strprintf("Ar count%s", off);
        case CONFIG_VALUE_SIZE:
                return util_strprintf("Ar size%s", off);
        case CONFIG_VALUE_SIZE_OR_PERCENT:
                return util_strprintf("Ar size | Ar percent%s", off);
        case CONFIG_VALUE_BOOL:
                return strdup("Ar boolean");
        case CONFIG_VALUE_PERCENT:
                return util_strprintf("Ar percent%s", off);
        case CONFIG_VALUE_PATH:
                return strdup("Qq Ar path");
        case CONFIG_VALUE_PATH_LIST:
                return strdup("( Ar path , ... )");
        }
        return NULL;
}

/* qgc.conf(5): ".It Cm <key> No = <synopsis>" under POLICY KEYS, TREE KEYS and ADMIN SETTINGS
 * is exactly the table, key for key and in both directions, with the value's synopsis. */
static void test_man_page_key_lists_are_the_table(void **state) {
        static const char *const sections[_CONFIG_SCOPE_MAX] = {
                [CONFIG_SCOPE_POLICY] = "POLICY KEYS",
                [CONFIG_SCOPE_TREE] = "TREE KEYS",
                [CONFIG_SCOPE_ADMIN] = "ADMIN SETTINGS",
        };
        _cleanup_free_ char *text = test_man_page();
        bool seen[_CONFIG_KEY_MAX] = {};
        int scope = -1;

        for (char *line = text, *next; line && *line; line = next) {
                char *name, *syn, *end;
                const ConfigKeyInfo *k;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (strneq(line, ".Sh ", 4)) {
                        scope = -1;
                        for (size_t s = 0; s < _CONFIG_SCOPE_MAX; s++)
                                if (streq(line + 4, sections[s]))
                                        scope = (int)s;
                        continue;
                }
                if (scope < 0 || !strneq(line, ".It Cm ", 7))
                        continue;
                name = line + 7;
                end = strchr(name, ' ');
                if (end)
                        *end = '\0';
                syn = end && strneq(end + 1, "No = ", 5) ? end + 6 : NULL;
                k = config_key_find((ConfigScope)scope, name);
                if (!k)
                        fail_msg("qgc.conf(5) documents '%s' under %s, which is no key there", name,
                                 sections[scope]);
                if (seen[config_key_index(k)])
                        fail_msg("qgc.conf(5) documents '%s' twice", name);
                seen[config_key_index(k)] = true;
                _cleanup_free_ char *want = test_synopsis(k);
                if (!syn || !streq(syn, want))
                        fail_msg("qgc.conf(5): '%s' is written \"%s\", the table says \"%s\"", name,
                                 syn ? syn : "(none)", want);
        }
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++)
                if (!seen[i])
                        fail_msg("qgc.conf(5) lacks '%s' (%s) under %s", config_keys[i].name,
                                 config_keys[i].help, sections[config_keys[i].scope]);
}

/* qgc.conf(5)'s BUILT-IN DEFAULT is a policy file that sets every key that has a default
 * (not the paths, which have none), each to the table's default, and nothing else. */
static void test_man_page_builtin_default_is_the_table(void **state) {
        _cleanup_free_ char *text = test_man_page();
        _cleanup_(config_done) Config c = {}, def = {};
        _cleanup_(config_errors_done) ConfigErrors e = {};
        char *block, *end;

        block = strstr(text, "\n.Sh BUILT-IN DEFAULT\n.Bd -literal -offset indent\n");
        assert_non_null(block);
        block = strchr(strchr(block + 1, '\n') + 1, '\n') + 1;
        end = strstr(block, "\n.Ed\n");
        assert_non_null(end);
        end[1] = '\0';
        assert_int_equal(config_init_default(&def), 0);
        if (test_parse(&c, block, &e) != 0) { /* an unknown key, a bad value */
                test_dump(&e);
                fail_msg("qgc.conf(5)'s BUILT-IN DEFAULT is not a valid file:\n%s", block);
        }
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];
                const char *o = *config_key_origin(k, &c, &c.defaults_origin);
                _cleanup_free_ char *got = config_key_format(k, test_base(k, &c, false));
                _cleanup_free_ char *want = config_key_format(k, test_base(k, &def, false));

                if (k->type == CONFIG_VALUE_PATH || k->type == CONFIG_VALUE_PATH_LIST)
                        continue;
                if (streq(o, CONFIG_BUILTIN))
                        fail_msg("qgc.conf(5)'s BUILT-IN DEFAULT lacks %s (default %s)", k->name,
                                 want);
                if (!streq(got, want))
                        fail_msg("qgc.conf(5)'s BUILT-IN DEFAULT has %s = %s, the table %s",
                                 k->name, got, want);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table_is_complete),
                cmocka_unit_test(test_every_key_parses_its_default),
                cmocka_unit_test(test_bounds_at_the_limit),
                cmocka_unit_test(test_bounds_as_documented),
                cmocka_unit_test(test_unknown_key_refused),
                cmocka_unit_test(test_explain_shows_every_key),
                cmocka_unit_test(test_man_page_key_lists_are_the_table),
                cmocka_unit_test(test_man_page_builtin_default_is_the_table),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
