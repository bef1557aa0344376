/* test_roots_settings.c: settings.c and the runtime root roots.c takes from Qwen's merged
 * settings (settings.ts loadSettings()): the system settings file beats the user's, the user's
 * beats the system defaults, an "advanced" that is no object clears the key, comments are
 * stripped as strip-json-comments strips them, $VAR / ${VAR} resolve against the environment
 * qgc is given (none in root mode), and whatever Qwen could not have read makes the runtime
 * root unknown (ROOTS_UNDETERMINED), never G. The system paths come from RootsOptions. */
#include "autoconf.h"

#include <errno.h>
#include <json-c/json.h>
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
#include "inventory.h"
#include "json.h"
#include "macro.h"
#include "roots.h"
#include "settings.h"
#include "util.h"
#include "settings.c" /* its static functions are tested here */
#include "roots.c" /* its static functions are tested here */

static int roots_workspace_check(const Tree *tr, const char *cwd, const char *home,
                                 char **ret_why) {
        return roots_ws_check(tr, cwd, home, NULL, ret_why);
}

/* strip-json-comments (whitespace: true), then JSON.parse: 1 parses, 0 does not. */
static int strip_then_parse(const char *text) {
        _cleanup_free_ char *s = strdup(text);
        json_object *o = NULL;
        int r;

        assert_non_null(s);
        settings_strip_comments(s, strlen(s));
        r = json_parse(s, strlen(s), &o);
        json_object_put(o);
        return r == 0;
}

static void test_settings_strip_comments(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "{\"a\":1} // x\n", "{\"a\":1}     \n" },
                { "{\"a\":1} // x\r\n", "{\"a\":1}     \r\n" },
                { "/* a */{}", "       {}" },
                { "{\"u\":\"http://x\"}", "{\"u\":\"http://x\"}" },
                { "{\"q\":\"a\\\"//b\"}", "{\"q\":\"a\\\"//b\"}" },
                { "{\"q\":\"a\\\\\"//b\n}", "{\"q\":\"a\\\\\"   \n}" },
                { "{}/* open", "{}       " },
                { "{}/*/ x */", "{}        " },
                { "{}/* \t\n */", "{}   \t\n   " },
                { "{}// a /* b\n", "{}         \n" },
        };
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = strdup(cases[i].in);
                assert_non_null(s);
                settings_strip_comments(s, strlen(s));
                assert_string_equal(s, cases[i].out);
        }
        /* whitespace, not nothing: tokens on both sides of a comment stay apart */
        assert_false(strip_then_parse("{\"a\":1/**/2}"));
        assert_true(strip_then_parse("{\"a\"/**/:/**/12}"));
        /* a JavaScript space inside a comment is kept, and JSON.parse refuses it */
        assert_false(strip_then_parse("{} // \xc2\xa0\n"));
        assert_false(strip_then_parse("{} /* \xef\xbb\xbf */"));
        assert_true(strip_then_parse("{} // \xc3\xa9 \xe2\x80\x8b\n"));
        /* what JSON.parse refuses after the stripping: trailing commas, a BOM (which
         * settings_read_file() drops first, as Qwen's stripUtf8Bom(): test_roots_settings_bom) */
        assert_false(strip_then_parse("{\"a\":1,}"));
        assert_false(strip_then_parse("\xef\xbb\xbf{}"));
}

static void test_settings_resolve_env(void **state) {
        char *env[] = { (char *)"A=/x", (char *)"B_2=y", (char *)"E=", (char *)"C=D=z",
                        (char *)"SESSION_ID=s", (char *)"QWEN_SERVER_TOKEN=t", NULL };
        static const struct {
                const char *in, *out, *missing; /* out NULL: -ENOKEY naming missing */
        } cases[] = {
                { "/plain", "/plain", NULL },
                { "$A/rt", "/x/rt", NULL },
                { "${A}/rt", "/x/rt", NULL },
                { "$A$B_2", "/xy", NULL },
                { "${B_2}x", "yx", NULL },
                { "$Ax", NULL, "Ax" },
                { "${A x}", NULL, "A x" },
                { "$E/rt", "/rt", NULL },
                { "a$", "a$", NULL },
                { "a$-b", "a$-b", NULL },
                { "${}", "${}", NULL },
                { "${A", "${A", NULL },
                { "$", "$", NULL },
                { "$$A", "$/x", NULL },
                { "${C=D}", NULL, "C=D" },
                { "/r/$HOME", NULL, "HOME" },
                /* never substituted by Qwen 0.24, set or not, in any case */
                { "/r/$SESSION_ID", "/r/$SESSION_ID", NULL },
                { "/r/${qwen_code_session_id}", "/r/${qwen_code_session_id}", NULL },
                { "/r/$QWEN_SERVER_TOKEN/x", "/r/$QWEN_SERVER_TOKEN/x", NULL },
                { "${Qwen_Daemon_Token}", "${Qwen_Daemon_Token}", NULL },
                { "$QWEN_CODE_EXTERNAL_TOOL_GUARD_TOKEN", "$QWEN_CODE_EXTERNAL_TOOL_GUARD_TOKEN",
                  NULL },
                { "${QWEN_CODE_PRIVATE_ACP_CAPABILITY}", "${QWEN_CODE_PRIVATE_ACP_CAPABILITY}",
                  NULL },
                /* toUpperCase(): U+017F is 'S', U+0131 is 'I' */
                { "${\xc5\xbf" "e\xc5\xbf\xc5\xbf\xc4\xb1on_id}",
                  "${\xc5\xbf" "e\xc5\xbf\xc5\xbf\xc4\xb1on_id}", NULL },
                { "$SESSION_IDS", NULL, "SESSION_IDS" },
        };
        (void)state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL, *var = NULL;
                int r = settings_resolve_env(cases[i].in, env, &out, &var);
                if (cases[i].out) {
                        assert_int_equal(r, 0);
                        assert_string_equal(out, cases[i].out);
                        assert_null(var);
                } else {
                        assert_int_equal(r, -ENOKEY);
                        assert_null(out);
                        assert_string_equal(var, cases[i].missing);
                }
        }
        /* no environment (root mode): any variable is unknown, text without one is fine */
        {
                _cleanup_free_ char *out = NULL;
                assert_int_equal(settings_resolve_env("$A", NULL, &out, NULL), -ENOKEY);
                assert_int_equal(settings_resolve_env("/srv/a$", NULL, &out, NULL), 0);
                assert_string_equal(out, "/srv/a$");
        }
}

typedef struct Files {
        const char *system, *defaults, *user; /* NULL: no file */
} Files;

/* The three files under root as f has them (etc/settings.json, etc/system-defaults.json,
 * home/.qwen/settings.json; NULL: none), and home/.qwen/. */
static void write_files(const char *root, const Files *f) {
        const char *const rel[] = { "etc/settings.json", "etc/system-defaults.json",
                                    "home/.qwen/settings.json" };
        const char *const text[] = { f->system, f->defaults, f->user };

        for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
                _cleanup_free_ char *p = fixture_path(root, rel[i]);
                (void)unlink(p);
                if (text[i])
                        assert_int_equal(fixture_write(root, rel[i], text[i]), 0);
        }
        assert_int_equal(fixture_mkdir(root, "home/.qwen"), 0);
}

/* Write the three files under root (etc/settings.json, etc/system-defaults.json,
 * home/.qwen/settings.json), resolve with env, and return roots_resolve_opts()'s result with
 * the runtime dir (or the reason) in *ret. */
static int resolve(const char *root, const Files *f, char *const *env, char **ret) {
        _cleanup_free_ char *home = fixture_path(root, "home");
        _cleanup_free_ char *sys = fixture_path(root, "etc/settings.json");
        _cleanup_(inventory_tree_done) Tree t = {};
        _cleanup_free_ char *why = NULL;
        RootsOptions o = { .home = home, .system_settings = sys, .env = env };
        int r;

        write_files(root, f);
        r = roots_resolve_opts(&o, &t, &why);
        if (r == 0) {
                _cleanup_free_ char *g = util_strprintf("%s/.qwen", home);
                assert_string_equal(t.global_dir, g);
                *ret = strdup(t.runtime_dir);
                assert_null(why);
        } else
                *ret = TAKE_PTR(why);
        return r;
}

#define RT(v) "{\"advanced\":{\"runtimeOutputDir\":\"" v "\"}}"
#define X10(s) s s s s s s s s s s
#define TOO_DEEP "{\"z\":" X10(X10(X10("[["))) X10(X10(X10("]]"))) "}"

static void test_roots_settings_precedence(void **state) {
        const char *root = *state;
        _cleanup_free_ char *g = fixture_path(root, "home/.qwen");
        static const struct {
                Files f;
                const char *want; /* NULL: G */
        } cases[] = {
                /* the admin's file moves every user's runtime root */
                { { RT("/sys/rt"), NULL, NULL }, "/sys/rt" },
                { { RT("/sys/x/../rt/"), NULL, NULL }, "/sys/rt" },
                /* system settings beat the user's, which beat the system defaults */
                { { RT("/sys/rt"), RT("/def/rt"), RT("/user/rt") }, "/sys/rt" },
                { { NULL, RT("/def/rt"), RT("/user/rt") }, "/user/rt" },
                { { "{}", RT("/def/rt"), "{\"advanced\":{}}" }, "/def/rt" },
                { { "{\"advanced\":{\"other\":1}}", RT("/def/rt"), NULL }, "/def/rt" },
                /* the last file with the key wins, also with an empty or null value */
                { { RT(""), NULL, RT("/user/rt") }, NULL },
                { { "{\"advanced\":{\"runtimeOutputDir\":null}}", NULL, RT("/user/rt") }, NULL },
                /* an "advanced" that is no object replaces the whole object */
                { { "{\"advanced\":null}", RT("/def/rt"), RT("/user/rt") }, NULL },
                { { NULL, RT("/def/rt"), "{\"advanced\":[]}" }, NULL },
                /* comments, as strip-json-comments removes them */
                { { "// admin\n{ /* moved */ \"advanced\": {\"runtimeOutputDir\": \"/c/rt\"} } "
                    "// end",
                    NULL, RT("/user/rt") },
                  "/c/rt" },
                { { RT("/s//t"), NULL, NULL }, "/s/t" },
                /* ~ against the user's home, relative: per project, not discovered */
                { { RT("~/rt"), NULL, NULL }, "HOME/rt" },
                { { RT(".qwen-rt"), NULL, RT("/user/rt") }, NULL },
                /* a file the system one decides over does not matter, broken or not */
                { { RT("/sys/rt"), "{", "not json" }, "/sys/rt" },
                { { NULL, "[1]", RT("/user/rt") }, "/user/rt" },
                /* one leading BOM is dropped (stripUtf8Bom(), Qwen 0.24) */
                { { "\xef\xbb\xbf" RT("/bom/rt"), NULL, RT("/user/rt") }, "/bom/rt" },
                { { NULL, NULL, "\xef\xbb\xbf// c\n" RT("/bom/u") }, "/bom/u" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = NULL, *want = NULL;
                print_message("  case %zu\n", i);
                assert_int_equal(resolve(root, &cases[i].f, NULL, &got), 0);
                if (!cases[i].want)
                        want = strdup(g);
                else if (strneq(cases[i].want, "HOME", 4))
                        want = util_strprintf("%s/home%s", root, cases[i].want + 4);
                else
                        want = strdup(cases[i].want);
                assert_string_equal(got, want);
        }
}

/* Whatever Qwen could not have read, or reads into a value qgc cannot know, leaves the runtime
 * root unknown: an error with the reason (naming the file only), never G. */
static void test_roots_settings_undetermined(void **state) {
        const char *root = *state;
        static const struct {
                Files f;
                const char *why;
        } cases[] = {
                /* not JSON after the comments: older Qwen refuses to start (FatalConfigError),
                 * newer Qwen resets that scope to {} (or its .orig backup); sessions started
                 * before may use any value */
                { { "{\"advanced\": {\"runtimeOutputDir\": \"/a\",}}", NULL, RT("/user/rt") },
                  "the system settings file" },
                { { "{\"a\":1/**/2}", NULL, NULL }, "the system settings file" },
                { { "[]", NULL, NULL }, "the system settings file" },
                { { "null", NULL, NULL }, "the system settings file" },
                { { NULL, NULL, "{ broken" }, "the user settings file" },
                { { NULL, "{ broken", "{}" }, "the system defaults file" },
                /* only one BOM is dropped; JSON.parse refuses the second */
                { { "\xef\xbb\xbf\xef\xbb\xbf{}", NULL, NULL }, "the system settings file" },
                /* Qwen's setRuntimeBaseDir() cannot start with a truthy non-string */
                { { "{\"advanced\":{\"runtimeOutputDir\":42}}", NULL, NULL }, "is not a string" },
                { { NULL, NULL, "{\"advanced\":{\"runtimeOutputDir\":{}}}" }, "is not a string" },
                /* JSON.parse reads it; qgc does not go that deep */
                { { NULL, NULL, TOO_DEEP }, "nested deeper than qgc reads" },
                /* a path with a NUL: not the prefix before it */
                { { NULL, NULL, RT("/srv/a\\u0000b") }, "NUL character" },
                /* no environment known (root mode) */
                { { RT("$RT_BASE/rt"), NULL, NULL }, "names an environment variable" },
                { { NULL, NULL, RT("${HOME}/rt") }, "root mode" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *why = NULL;
                print_message("  case %zu\n", i);
                assert_int_equal(resolve(root, &cases[i].f, NULL, &why), ROOTS_UNDETERMINED);
                assert_non_null(why);
                print_message("    %s\n", why);
                assert_non_null(strstr(why, cases[i].why));
                /* the reason carries nothing read from the file */
                assert_null(strstr(why, "/user/rt"));
                assert_null(strstr(why, "RT_BASE"));
        }
}

/* In the user's own run the environment qgc runs in stands for Qwen's: $VAR and ${VAR}
 * resolve; a variable it does not have is not guessed. QWEN_RUNTIME_DIR still wins over every
 * file, also a broken one. */
static void test_roots_settings_env(void **state) {
        const char *root = *state;
        char *env[] = { (char *)"RT_BASE=/scratch", (char *)"EMPTY=", NULL };
        _cleanup_free_ char *g = fixture_path(root, "home/.qwen");

        {
                _cleanup_free_ char *got = NULL;
                Files f = { RT("$RT_BASE/rt"), NULL, RT("/user/rt") };
                assert_int_equal(resolve(root, &f, env, &got), 0);
                assert_string_equal(got, "/scratch/rt");
        }
        {
                _cleanup_free_ char *got = NULL;
                Files f = { NULL, NULL, RT("${RT_BASE}/u/$RT_BASE") };
                assert_int_equal(resolve(root, &f, env, &got), 0);
                assert_string_equal(got, "/scratch/u/scratch");
        }
        {
                _cleanup_free_ char *got = NULL;
                Files f = { RT("$EMPTY"), NULL, RT("/user/rt") };
                assert_int_equal(resolve(root, &f, env, &got), 0);
                assert_string_equal(got, g); /* "" after resolution: reset to G */
        }
        {
                _cleanup_free_ char *why = NULL;
                Files f = { RT("$UNSET_HERE/rt"), NULL, NULL };
                assert_int_equal(resolve(root, &f, env, &why), ROOTS_UNDETERMINED);
                assert_non_null(strstr(why, "not set here"));
        }
        {
                _cleanup_free_ char *home = fixture_path(root, "home");
                _cleanup_free_ char *sys = fixture_path(root, "etc/settings.json");
                _cleanup_(inventory_tree_done) Tree t = {};
                RootsOptions o = { .home = home, .system_settings = sys, .env = env,
                                   .runtime_env = "/env/rt" };
                assert_int_equal(fixture_write(root, "etc/settings.json", "{ broken"), 0);
                assert_int_equal(roots_resolve_opts(&o, &t, NULL), 0);
                assert_string_equal(t.runtime_dir, "/env/rt");
        }
}

/* The system defaults live beside the system settings unless named; an empty path option is
 * unset (Qwen tests the variables for truthiness). */
static void test_roots_settings_paths(void **state) {
        const char *root = *state;
        _cleanup_free_ char *home = fixture_path(root, "home");
        _cleanup_free_ char *sys = fixture_path(root, "other/qwen.json");
        _cleanup_free_ char *defs = fixture_path(root, "defaults.json");

        assert_int_equal(fixture_write(root, "other/system-defaults.json", RT("/beside")), 0);
        assert_int_equal(fixture_write(root, "defaults.json", RT("/named")), 0);
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                RootsOptions o = { .home = home, .system_settings = sys };
                assert_int_equal(roots_resolve_opts(&o, &t, NULL), 0);
                assert_string_equal(t.runtime_dir, "/beside");
        }
        {
                _cleanup_(inventory_tree_done) Tree t = {};
                RootsOptions o = { .home = home, .system_settings = sys, .system_defaults = defs };
                assert_int_equal(roots_resolve_opts(&o, &t, NULL), 0);
                assert_string_equal(t.runtime_dir, "/named");
        }
        {
                /* a path stat() does not find is no file to Qwen (fs.existsSync()): a symlink
                 * loop is skipped, not an error */
                _cleanup_(inventory_tree_done) Tree t = {};
                _cleanup_free_ char *loop = fixture_path(root, "loop.json");
                RootsOptions o = { .home = home, .system_settings = loop, .system_defaults = defs };
                assert_int_equal(symlink(loop, loop), 0);
                assert_int_equal(roots_resolve_opts(&o, &t, NULL), 0);
                assert_string_equal(t.runtime_dir, "/named");
        }
        {
                /* a settings path stat() finds but qgc does not read (a directory, a FIFO, a
                 * device, over 4 MiB) is no "no file": Qwen reads it (or fails, or hangs), so
                 * R is unknown and the reason names the file */
                _cleanup_free_ char *dsys = fixture_path(root, "other/sub");
                _cleanup_free_ char *fifo = fixture_path(root, "fifo.json");
                _cleanup_free_ char *big = fixture_path(root, "big.json");
                _cleanup_free_ char *text = malloc(4 * 1024 * 1024 + 2);
                const char *paths[] = { dsys, fifo, "/dev/null", big };
                assert_int_equal(fixture_mkdir(root, "other/sub"), 0);
                assert_int_equal(mkfifo(fifo, 0600), 0);
                assert_non_null(text);
                memset(text, ' ', 4 * 1024 * 1024 + 1);
                text[0] = '{';
                text[4 * 1024 * 1024] = '}';
                text[4 * 1024 * 1024 + 1] = 0;
                assert_int_equal(fixture_write(root, "big.json", text), 0);
                for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                        _cleanup_(inventory_tree_done) Tree t = {};
                        _cleanup_free_ char *why = NULL;
                        RootsOptions o = { .home = home, .system_settings = paths[i],
                                           .system_defaults = "" };
                        assert_int_equal(roots_resolve_opts(&o, &t, &why), ROOTS_UNDETERMINED);
                        assert_non_null(why);
                        assert_non_null(strstr(why, paths[i]));
                        assert_non_null(strstr(why, "not read"));
                }
        }
}

/* preResolveHomeEnvOverrides() (Qwen 0.24): QWEN_RUNTIME_DIR and QWEN_HOME from G/.env, then
 * ~/.env, when the environment lacks them; what is not parsed with certainty, or a QWEN_HOME
 * that moves G, leaves the directories unknown. */
static void test_roots_settings_dotenv(void **state) {
        const char *root = *state;
        _cleanup_free_ char *home = fixture_path(root, "home");
        _cleanup_free_ char *g = fixture_path(root, "home/.qwen");
        _cleanup_free_ char *sys = fixture_path(root, "etc/settings.json");
        _cleanup_free_ char *same = util_strprintf("QWEN_HOME=%s\n", g);
        static const struct {
                const char *genv, *henv; /* G/.env, ~/.env (NULL: none) */
                const char *want;        /* R, NULL: ROOTS_UNDETERMINED */
        } cases[] = {
                { NULL, NULL, "/sys/rt" },
                { "QWEN_RUNTIME_DIR=/dot/rt\n", NULL, "/dot/rt" },
                { NULL, "# c\nexport QWEN_RUNTIME_DIR='/q/rt' # c\r\n", "/q/rt" },
                { "QWEN_RUNTIME_DIR = \"/g/rt\"\n", "QWEN_RUNTIME_DIR=/h/rt\n", "/g/rt" },
                { "QWEN_RUNTIME_DIR=\n", "QWEN_RUNTIME_DIR=/h/rt\n", "/h/rt" },
                { "QWEN_RUNTIME_DIR=/a\nQWEN_RUNTIME_DIR=/b #x\n", NULL, "/b" },
                { "XQWEN_RUNTIME_DIR=/x\nA=1\n", NULL, "/sys/rt" },
                { "# QWEN_RUNTIME_DIR=/x\n", NULL, "/sys/rt" },
                /* a quote over lines: dotenv joins them */
                { "A=\"x\nQWEN_RUNTIME_DIR=/y\n\"\n", NULL, NULL },
                { "A:\nQWEN_RUNTIME_DIR=/y\n", NULL, NULL },
                { "QWEN_RUNTIME_DIR=\"/a\\nb\"\n", NULL, NULL },
                { "QWEN_RUNTIME_DIR=/a\rB=1\n", NULL, NULL },
                { "QWEN_RUNTIME_DIR=rel/rt\n", NULL, NULL },
                /* QWEN_HOME moves G: only the same G is known */
                { NULL, "QWEN_HOME=/elsewhere\n", NULL },
        };

        assert_int_equal(fixture_mkdir(root, "home/.qwen"), 0);
        assert_int_equal(fixture_write(root, "etc/settings.json", RT("/sys/rt")), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(inventory_tree_done) Tree t = {};
                _cleanup_free_ char *why = NULL;
                _cleanup_free_ char *p1 = fixture_path(root, "home/.qwen/.env");
                _cleanup_free_ char *p2 = fixture_path(root, "home/.env");
                RootsOptions o = { .home = home, .system_settings = sys };
                int r;

                print_message("  case %zu\n", i);
                (void)unlink(p1);
                (void)unlink(p2);
                if (cases[i].genv)
                        assert_int_equal(fixture_write(root, "home/.qwen/.env", cases[i].genv), 0);
                if (cases[i].henv)
                        assert_int_equal(fixture_write(root, "home/.env", cases[i].henv), 0);
                r = roots_resolve_opts(&o, &t, &why);
                if (cases[i].want) {
                        assert_int_equal(r, 0);
                        assert_string_equal(t.runtime_dir, cases[i].want);
                } else {
                        assert_int_equal(r, ROOTS_UNDETERMINED);
                        assert_non_null(strstr(why, "dotenv"));
                }
        }
        {
                /* a relative system settings or defaults path is against Qwen's cwd */
                _cleanup_(inventory_tree_done) Tree t = {}, t2 = {};
                _cleanup_free_ char *p2 = fixture_path(root, "home/.env");
                assert_int_equal(unlink(p2), 0);
                RootsOptions o0 = { .home = home, .system_settings = sys };
                assert_int_equal(roots_resolve_opts(&o0, &t2, NULL), 0);
                RootsOptions o = { .home = home, .system_settings = "etc/settings.json" };
                RootsOptions o2 = { .home = home, .system_settings = sys,
                                    .system_defaults = "d.json" };
                assert_int_equal(roots_resolve_opts(&o, &t, NULL), ROOTS_UNDETERMINED);
                assert_int_equal(roots_resolve_opts(&o2, &t, NULL), ROOTS_UNDETERMINED);
        }
        {
                /* an empty value is unset to loadEnvironment(): the .env's wins (Qwen 0.24.4's
                 * loadSettings() and Storage say /h/rt); the same G is fine; a .env
                 * directory is ignored (Qwen catches the read error) */
                _cleanup_(inventory_tree_done) Tree t = {}, t2 = {};
                RootsOptions o = { .home = home, .system_settings = sys, .runtime_env = "" };
                assert_int_equal(fixture_write(root, "home/.env", "QWEN_RUNTIME_DIR=/h/rt\n"), 0);
                assert_int_equal(roots_resolve_opts(&o, &t, NULL), 0);
                assert_string_equal(t.runtime_dir, "/h/rt");
                assert_int_equal(fixture_write(root, "home/.env", same), 0);
                assert_int_equal(fixture_mkdir(root, "home/.qwen/.env"), 0);
                o.runtime_env = NULL;
                assert_int_equal(roots_resolve_opts(&o, &t2, NULL), 0);
                assert_string_equal(t2.runtime_dir, "/sys/rt");
        }
        {
                /* $QWEN_HOME elsewhere: loadEnvironment() still reads ~/.qwen/.env, then
                 * ~/.env, after G/.env (Qwen 0.24.4 moves R so) */
                _cleanup_(inventory_tree_done) Tree t = {}, t2 = {}, t3 = {}, t4 = {};
                _cleanup_free_ char *cg = fixture_path(root, "cg");
                _cleanup_free_ char *p1 = fixture_path(root, "home/.qwen/.env");
                _cleanup_free_ char *p2 = fixture_path(root, "home/.env");
                RootsOptions o = { .home = home, .system_settings = sys, .qwen_home = cg };
                (void)rmdir(p1);
                (void)unlink(p2);
                assert_int_equal(fixture_mkdir(root, "cg"), 0);
                assert_int_equal(roots_resolve_opts(&o, &t, NULL), 0);
                assert_string_equal(t.runtime_dir, "/sys/rt");
                assert_int_equal(fixture_write(root, "home/.env", "QWEN_RUNTIME_DIR=/h/rt\n"), 0);
                assert_int_equal(roots_resolve_opts(&o, &t2, NULL), 0);
                assert_string_equal(t2.runtime_dir, "/h/rt");
                assert_int_equal(fixture_write(root, "home/.qwen/.env",
                                               "QWEN_RUNTIME_DIR=/hq/rt\n"), 0);
                assert_int_equal(roots_resolve_opts(&o, &t3, NULL), 0);
                assert_string_equal(t3.runtime_dir, "/hq/rt");
                assert_int_equal(fixture_write(root, "cg/.env", "QWEN_RUNTIME_DIR=/g/rt\n"), 0);
                assert_int_equal(roots_resolve_opts(&o, &t4, NULL), 0);
                assert_string_equal(t4.runtime_dir, "/g/rt");
        }
}

/* Qwen 0.24 keeps an absolute runtimeOutputDir as given, so ".." is the kernel's: after a
 * symlink, qgc's lexical normalisation would name another directory. */
static void test_roots_settings_dotdot(void **state) {
        const char *root = *state;
        _cleanup_free_ char *home = fixture_path(root, "home");
        _cleanup_free_ char *sys = fixture_path(root, "etc/settings.json");
        _cleanup_free_ char *target = fixture_path(root, "real/sub");
        _cleanup_free_ char *lnk = fixture_path(root, "lnk");
        const char *rel[] = { "lnk/../x", "real/sub/../x", "nope/../x" };
        const char *want[] = { NULL, "real/x", "x" };

        assert_int_equal(fixture_mkdir(root, "real/sub"), 0);
        assert_int_equal(fixture_mkdir(root, "home/.qwen"), 0);
        assert_int_equal(symlink(target, lnk), 0);
        for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
                _cleanup_(inventory_tree_done) Tree t = {};
                _cleanup_free_ char *why = NULL;
                _cleanup_free_ char *text = util_strprintf(RT("%s/%s"), root, rel[i]);
                RootsOptions o = { .home = home, .system_settings = sys };

                assert_int_equal(fixture_write(root, "etc/settings.json", text), 0);
                if (want[i]) {
                        _cleanup_free_ char *w = fixture_path(root, want[i]);
                        assert_int_equal(roots_resolve_opts(&o, &t, &why), 0);
                        assert_string_equal(t.runtime_dir, w);
                } else {
                        assert_int_equal(roots_resolve_opts(&o, &t, &why), ROOTS_UNDETERMINED);
                        assert_non_null(strstr(why, "after a symlink"));
                }
        }
}

/* roots_workspace_check(): what a project's own files may do to its runtime root. */
#define WSF "home/src/p/.qwen/settings.json"
#define ROD(v) "{\"advanced\":{\"runtimeOutputDir\":" v "}}"
static void test_roots_workspace_check(void **state) {
        const char *root = *state;
        _cleanup_free_ char *home = fixture_path(root, "home");
        _cleanup_free_ char *g = fixture_path(root, "home/.qwen");
        _cleanup_free_ char *proj = fixture_path(root, "home/src/p");
        _cleanup_free_ char *out = fixture_path(root, "out/p");
        _cleanup_free_ char *same =
                util_strprintf("{\"advanced\":{\"runtimeOutputDir\":\"%s\"}}", g);
        _cleanup_free_ char *fifo = fixture_path(root, "home/src/p/.qwen/settings.json");
        Tree t = { .global_dir = g, .runtime_dir = g, .uid = getuid() };
        Tree t2 = { .global_dir = g, .runtime_dir = (char *)"/rt", .uid = getuid() };
        static const struct {
                const char *file, *text;
                int want, want_other; /* with R = G, with R = /rt */
        } cases[] = {
                { NULL, NULL, 0, 0 },
                { WSF, "{}", 0, 0 },
                { WSF, "{\"advanced\":{}}", 0, 0 },
                /* unset in the merge: the root is G */
                { WSF, ROD("\"\""), 0, 1 },
                { WSF, ROD("null"), 0, 1 },
                { WSF, "{\"advanced\":7}", 0, 1 },
                { WSF, ROD("\"/rt\""), 1, 0 },
                { WSF, ROD("\"/rt/x/..\""), 1, 0 },
                { WSF, ROD("\"~/.qwen\""), 0, 1 },
                { WSF, ROD("\"../../.qwen\""), 0, 1 },
                { WSF, ROD("1"), 1, 1 },
                { WSF, ROD("\"${X}\""), 1, 1 },
                { WSF, "\xef\xbb\xbf{\"env\":{\"QWEN_HOME\":\"\"}}", 1, 1 },
                { WSF, "[]", 1, 1 },
                { "home/src/p/.env", "A=1\n", 0, 0 },
                { "home/src/p/.env", "QWEN_RUNTIME_DIR=/rt\n", 1, 0 },
                { "home/src/p/.env", "QWEN_RUNTIME_DIR=../../.qwen\n", 0, 1 },
                { "home/src/.qwen/.env", "QWEN_HOME=~/.qwen\n", 0, 0 },
                { "home/src/.qwen/.env", "QWEN_HOME=/h\n", 1, 1 },
                { "home/src/.env", "QWEN_RUNTIME_DIR='a\n", 1, 1 },
                /* the home's own: the user's, read by roots_resolve_opts() */
                { "home/.env", "QWEN_RUNTIME_DIR=/x\n", 0, 0 },
                { "home/.qwen/.env", "QWEN_RUNTIME_DIR=/x\n", 0, 0 },
        };

        assert_int_equal(fixture_mkdir(root, "home/.qwen"), 0);
        assert_int_equal(fixture_mkdir(root, "home/src/p/.qwen"), 0);
        assert_int_equal(fixture_mkdir(root, "home/src/.qwen"), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *why = NULL, *why2 = NULL, *path = NULL;

                print_message("  case %zu\n", i);
                if (cases[i].file)
                        assert_int_equal(fixture_write(root, cases[i].file, cases[i].text), 0);
                assert_int_equal(roots_workspace_check(&t, proj, home, &why), cases[i].want);
                assert_int_equal(roots_workspace_check(&t2, proj, home, &why2),
                                 cases[i].want_other);
                assert_true(!why == !cases[i].want);
                assert_true(!why2 == !cases[i].want_other);
                if (cases[i].file) {
                        path = fixture_path(root, cases[i].file);
                        assert_int_equal(unlink(path), 0);
                }
        }
        {
                /* the home itself: no workspace settings there */
                _cleanup_free_ char *why = NULL;
                assert_int_equal(fixture_write(root, "home/.qwen/settings.json",
                                               "{\"advanced\":{\"runtimeOutputDir\":\"/x\"}}"), 0);
                assert_int_equal(roots_workspace_check(&t, home, home, &why), 0);
        }
        {
                /* a cwd that is gone; a relative one; a FIFO is never opened */
                _cleanup_free_ char *why = NULL;
                assert_int_equal(roots_workspace_check(&t, out, home, &why), 0);
                assert_int_equal(roots_workspace_check(&t, "rel/p", home, &why), 0);
                assert_int_equal(mkfifo(fifo, 0600), 0);
                assert_int_equal(roots_workspace_check(&t, proj, home, &why), 1);
                assert_non_null(strstr(why, "no regular file"));
                assert_int_equal(unlink(fifo), 0);
        }
        {
                /* the same file named by a symlink: not followed */
                _cleanup_free_ char *why = NULL, *target = fixture_path(root, "same.json");
                assert_int_equal(fixture_write(root, "same.json", same), 0);
                assert_int_equal(symlink(target, fifo), 0);
                assert_int_equal(roots_workspace_check(&t, proj, home, &why), 1);
                assert_non_null(strstr(why, "symlink"));
                assert_int_equal(unlink(fifo), 0);
                free(why);
                why = NULL;
                assert_int_equal(fixture_write(root, "home/src/p/.qwen/settings.json", same), 0);
                assert_int_equal(roots_workspace_check(&t, proj, home, &why), 0);
        }
        if (geteuid() == 0) {
                /* as root, another user's file is not read */
                _cleanup_free_ char *why = NULL;
                assert_int_equal(chown(fifo, 4242, 4242), 0);
                assert_int_equal(roots_workspace_check(&t, proj, home, &why), 1);
                assert_non_null(strstr(why, "another user"));
                assert_int_equal(chown(fifo, 0, 0), 0);
                free(why);
                why = NULL;
                assert_int_equal(roots_workspace_check(&t, proj, home, &why), 0);
        } else
                print_message("  (not root: the owner test is not run)\n");
}

/* The settings' env.QWEN_RUNTIME_DIR, which Qwen 0.15.6's loadEnvironment() applies when the
 * process lacks the variable (merged shallowly: the strongest file with the key wins, a falsy
 * "env" clears the weaker ones; a non-string or "" is not applied): unless it names R, the
 * sessions 0.15.6 started are in a root qgc does not see and the tree is incomplete. Returns
 * what roots_resolve_opts() returned; *ret_incomplete: 1 incomplete for this reason, 0 not. */
static int resolve_env_rt(const char *root, const Files *f, const RootsOptions *extra,
                          int *ret_incomplete, char **ret_rt) {
        _cleanup_free_ char *home = fixture_path(root, "home");
        _cleanup_free_ char *sys = fixture_path(root, "etc/settings.json");
        _cleanup_(inventory_tree_done) Tree t = {};
        _cleanup_free_ char *why = NULL;
        RootsOptions o = *extra;
        int r;

        o.home = home;
        o.system_settings = sys;
        write_files(root, f);
        r = roots_resolve_opts(&o, &t, &why);
        *ret_incomplete = -1;
        if (r == 0) {
                *ret_incomplete = t.incomplete && t.incomplete_why &&
                                  streq(t.incomplete_why, ROOTS_ENV_WHY);
                assert_true(t.incomplete == !!*ret_incomplete);
                *ret_rt = strdup(t.runtime_dir);
        }
        return r;
}

#define ENV(v) "{\"env\":{\"QWEN_RUNTIME_DIR\":" v "}}"
static void test_roots_settings_env_runtime(void **state) {
        const char *root = *state;
        _cleanup_free_ char *g = fixture_path(root, "home/.qwen");
        _cleanup_free_ char *g_env = util_strprintf("GQ=%s", g);
        _cleanup_free_ char *user_g = util_strprintf("{\"env\":{\"QWEN_RUNTIME_DIR\":\"%s/\"}}", g);
        _cleanup_free_ char *other_g = fixture_path(root, "elsewhere");
        char *env[] = { (char *)"RT_BASE=/scratch", g_env, NULL };
        const struct {
                Files f;
                RootsOptions o;
                int want; /* 1: incomplete (ROOTS_ENV_WHY) */
                const char *rt; /* NULL: G */
        } cases[] = {
                /* no env: nothing changes */
                { { NULL, NULL, NULL }, {}, 0, NULL },
                { { NULL, NULL, "{\"env\":{\"A\":\"1\"}}" }, {}, 0, NULL },
                /* the user's, the system's, the defaults': 0.15.6 put its sessions there */
                { { NULL, NULL, ENV("\"/e/rt\"") }, {}, 1, NULL },
                { { ENV("\"/e/rt\""), NULL, NULL }, {}, 1, NULL },
                { { NULL, ENV("\"/e/rt\""), "{}" }, {}, 1, NULL },
                /* over advanced.runtimeOutputDir in 0.15.6, ignored by later versions */
                { { NULL, NULL, "{\"advanced\":{\"runtimeOutputDir\":\"/u/rt\"},"
                                "\"env\":{\"QWEN_RUNTIME_DIR\":\"/e/rt\"}}" },
                  {}, 1, "/u/rt" },
                /* a value naming R itself changes nothing */
                { { NULL, NULL, "{\"advanced\":{\"runtimeOutputDir\":\"/u/rt\"},"
                                "\"env\":{\"QWEN_RUNTIME_DIR\":\"/u/x/../rt\"}}" },
                  {}, 0, "/u/rt" },
                { { NULL, NULL, ENV("\"~/.qwen\"") }, {}, 0, NULL },
                { { NULL, NULL, user_g }, {}, 0, NULL },
                /* the strongest file with the key wins: a non-string or "" is not applied */
                { { ENV("5"), NULL, ENV("\"/e/rt\"") }, {}, 0, NULL },
                { { ENV("\"\""), NULL, ENV("\"/e/rt\"") }, {}, 0, NULL },
                { { ENV("\"/e/rt\""), NULL, ENV("\"~/.qwen\"") }, {}, 1, NULL },
                /* a falsy "env" clears the weaker ones; a truthy non-object does not */
                { { "{\"env\":null}", NULL, ENV("\"/e/rt\"") }, {}, 0, NULL },
                { { NULL, "{\"env\":{\"QWEN_RUNTIME_DIR\":\"/e/rt\"}}", "{\"env\":0}" },
                  {}, 0, NULL },
                { { "{\"env\":\"x\"}", NULL, ENV("\"/e/rt\"") }, {}, 1, NULL },
                { { "{\"env\":{\"B\":\"1\"}}", NULL, ENV("\"/e/rt\"") }, {}, 1, NULL },
                /* QWEN_HOME: 0.15.6 has none, its G is always ~/.qwen */
                { { NULL, NULL, "{\"env\":{\"QWEN_HOME\":\"/h\"}}" }, {}, 0, NULL },
                /* relative: per project */
                { { NULL, NULL, ENV("\".rt\"") }, {}, 1, NULL },
                /* variables: resolved in the user's run, unknown in root mode */
                { { NULL, NULL, ENV("\"$GQ\"") }, { .env = env }, 0, NULL },
                { { NULL, NULL, ENV("\"${RT_BASE}/rt\"") }, { .env = env }, 1, NULL },
                { { NULL, NULL, ENV("\"$GQ\"") }, {}, 1, NULL },
                { { NULL, NULL, ENV("\"$SESSION_ID\"") }, { .env = env }, 1, NULL },
                /* the variable in the environment wins in every version */
                { { NULL, NULL, ENV("\"/e/rt\"") }, { .runtime_env = "/v/rt" }, 0, "/v/rt" },
                /* a file that may set it and that qgc cannot read: incomplete, not unknown
                 * (the system file decides advanced.runtimeOutputDir) */
                { { RT("/sys/rt"), NULL, "{ broken" }, {}, 1, "/sys/rt" },
                { { RT("/sys/rt"), NULL, TOO_DEEP }, {}, 1, "/sys/rt" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *rt = NULL;
                int inc;

                print_message("  case %zu\n", i);
                assert_int_equal(resolve_env_rt(root, &cases[i].f, &cases[i].o, &inc, &rt), 0);
                assert_int_equal(inc, cases[i].want);
                assert_string_equal(rt, cases[i].rt ?: g);
        }
        {
                /* another G (QWEN_HOME): 0.15.6 has no QWEN_HOME and never wrote there */
                _cleanup_free_ char *rt = NULL;
                Files f = { NULL, NULL, NULL };
                RootsOptions o = { .qwen_home = other_g };
                int inc;

                assert_int_equal(fixture_write(root, "elsewhere/settings.json",
                                               ENV("\"/e/rt\"")), 0);
                assert_int_equal(resolve_env_rt(root, &f, &o, &inc, &rt), 0);
                assert_int_equal(inc, 0);
                assert_string_equal(rt, other_g);
                /* the same file as ~/.qwen's: 0.15.6 read it */
                free(rt);
                rt = NULL;
                f.user = ENV("\"/e/rt\"");
                o.qwen_home = g;
                assert_int_equal(resolve_env_rt(root, &f, &o, &inc, &rt), 0);
                assert_int_equal(inc, 1);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_settings_strip_comments),
                cmocka_unit_test(test_settings_resolve_env),
                cmocka_unit_test_setup_teardown(test_roots_settings_precedence,
                                                fixture_root_setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_roots_settings_undetermined,
                                                fixture_root_setup, fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_roots_settings_env, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_roots_settings_paths, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_roots_settings_dotenv, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_roots_settings_dotdot, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_roots_workspace_check, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_roots_settings_env_runtime,
                                                fixture_root_setup, fixture_root_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
