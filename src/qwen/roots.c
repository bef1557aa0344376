/* roots.c: where a user's Qwen trees are, resolved as Qwen Code's Storage does.
 *
 * R without $QWEN_RUNTIME_DIR is advanced.runtimeOutputDir of Qwen's merged settings
 * (settings.ts loadSettings()/mergeSettings()): the system settings file (Linux:
 * /etc/qwen-code/settings.json, or $QWEN_CODE_SYSTEM_SETTINGS_PATH) over the workspace's over
 * the user's G/settings.json over the system defaults (system-defaults.json beside the system
 * file, or $QWEN_CODE_SYSTEM_DEFAULTS_PATH); each file read by settings.c as Qwen reads it.
 *
 * Whose environment: in the user's own run, qgc's environment stands for the one Qwen started
 * in ($VAR in a setting, the two path variables). In root mode a user's login environment is
 * not known, so nothing is guessed: the default system paths, and a setting that names any
 * variable leaves R unknown.
 *
 * Unknown, never G (ROOTS_UNDETERMINED: the user's run stops, root mode skips the tree, the
 * reason said): a settings file that decides or might decide and that Qwen could not use (no
 * JSON object once its comments are stripped: Qwen refuses to start, as 0.24.4 does again for
 * the system, user and defaults files, though some versions between dropped that file's
 * settings, so sessions started before may use any value; unreadable; not read by qgc), a
 * truthy value that is no string (Qwen cannot start with it), a variable qgc does not know,
 * '~' with no usable home, a relative system settings or defaults path (Qwen's cwd).
 *
 * Incomplete (Tree.incomplete, ROOTS_PARTIAL_WHY): a RELATIVE advanced.runtimeOutputDir as
 * the merged value. Qwen resolves it against each project's cwd, so each project has its own
 * runtime root, which qgc does not see: R = G holds only the sessions from before, and as qgc
 * does not know every transcript of the tree, nothing that assumes it does is decided (the
 * G-level orphans: file-history, subagents, stale tmp/, debug logs, plans; the tree caps).
 *
 * Dotenv (Qwen 0.24's preResolveHomeEnvOverrides() before the settings, loadEnvironment() after
 * them; older versions differ): QWEN_RUNTIME_DIR and QWEN_HOME the environment lacks or has
 * empty come from the user's .env files: G/.env, ~/.qwen/.env (when G is elsewhere), ~/.env,
 * the first non-empty value winning. QWEN_RUNTIME_DIR found there wins over the settings, as
 * the variable does; a QWEN_HOME found there that names another G leaves R and G unknown, as
 * does a file qgc does not parse with certainty (settings_read_dotenv()) or a relative
 * QWEN_RUNTIME_DIR.
 *
 * Qwen 0.15.6 (alone: 0.15.10 and later skip the two variables there) also applies
 * env.QWEN_RUNTIME_DIR of the merged settings as the variable when the process lacks it, over
 * advanced.runtimeOutputDir: a value that does not name R leaves the tree incomplete
 * (ROOTS_ENV_WHY; roots_settings_env_runtime()), as the sessions 0.15.6 started are elsewhere.
 *
 * Not discovered (documented limits): the runtime roots such projects name; projects that
 * never wrote a session under R and whose orphan candidates in G have no usage_record.jsonl
 * line (a session still running, or one that crashed) are not known; per-request
 * (ACP/daemon async-context) runtime dirs and newer versions' pinned managed-workspace roots.
 * A settings path stat()
 * finds that is no regular file of at most 4 MiB (a directory, a FIFO, a device) is not read,
 * and R is unknown: Qwen would read it (or fail, or hang). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "hashmap.h"
#include "js.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "roots.h"
#include "settings.h"
#include "usage-index.h"

/* Lexically normalise an absolute path as node's path.resolve does: collapse "//", drop ".",
 * apply ".." (never above "/"), strip a trailing '/'. Returns a new string or NULL. */
static char *roots_normalize(const char *abs) {
        size_t n = strlen(abs);
        char *out = malloc(n + 2);
        size_t len = 0;
        const char *p = abs;

        if (!out)
                return NULL;
        out[len++] = '/';
        while (*p) {
                const char *seg;
                size_t k;

                while (*p == '/')
                        p++;
                seg = p;
                while (*p && *p != '/')
                        p++;
                k = (size_t)(p - seg);
                if (k == 0 || (k == 1 && seg[0] == '.'))
                        continue;
                if (k == 2 && seg[0] == '.' && seg[1] == '.') {
                        /* back to the previous '/' */
                        while (len > 1 && out[len - 1] != '/')
                                len--;
                        if (len > 1)
                                len--;
                        continue;
                }
                if (len > 1)
                        out[len++] = '/';
                memcpy(out + len, seg, k);
                len += k;
        }
        out[len] = 0;
        return out;
}

/* Qwen 0.24's resolvePath() keeps an absolute value as given, so the kernel applies its ".."
 * physically; qgc normalises lexically. The two agree when no ".." follows a symlink (or a
 * non-directory): true then (lstat() of each raw prefix before a ".."; a missing one is made
 * a directory by Qwen's recursive mkdir). */
static bool roots_dotdot_lexical(const char *abs) {
        _cleanup_free_ char *s = strdup(abs);
        size_t n;

        if (!s)
                return false;
        n = strlen(s);
        for (size_t i = 1; i + 1 < n + 1; i++) {
                struct stat st;
                if (s[i - 1] != '/' || s[i] != '.' || s[i + 1] != '.' ||
                    (s[i + 2] != '/' && s[i + 2] != 0))
                        continue;
                if (i == 1)
                        continue; /* "/.." is "/" either way */
                s[i - 1] = 0;
                /* a missing one: Qwen's recursive mkdir creates it as a directory */
                if (lstat(s, &st) < 0 ? errno != ENOENT : !S_ISDIR(st.st_mode))
                        return false;
                s[i - 1] = '/';
        }
        return true;
}

/* Qwen's resolvePath: "~", "~/x", "~\x" against home; relative against the cwd; normalised.
 * Returns 0 with *ret set, -EINVAL for an empty value, -ELOOP for an absolute value whose ".."
 * the kernel may apply otherwise than the lexical normalisation, -ENOMEM, or -errno from
 * getcwd. */
static int roots_resolve_path(const char *value, const char *home, char **ret) {
        _cleanup_free_ char *joined = NULL, *cwd = NULL;
        char *out;

        if (!value || !*value)
                return -EINVAL;
        if (streq(value, "~") || strneq(value, "~/", 2) || strneq(value, "~\\", 2)) {
                if (!home || home[0] != '/')
                        return -EINVAL;
                joined = util_strprintf("%s/%s", home, value[1] ? value + 2 : "");
                /* Qwen splits the rest on both separators */
                if (joined)
                        for (char *c = joined + strlen(home); *c; c++)
                                if (*c == '\\')
                                        *c = '/';
        } else if (value[0] == '/') {
                if (!roots_dotdot_lexical(value))
                        return -ELOOP;
                joined = strdup(value);
        } else {
                cwd = getcwd(NULL, 0);
                if (!cwd)
                        return -errno;
                joined = util_strprintf("%s/%s", cwd, value);
        }
        if (!joined)
                return -ENOMEM;
        out = roots_normalize(joined);
        if (!out)
                return -ENOMEM;
        *ret = out;
        return 0;
}

enum { ROOTS_SYSTEM, ROOTS_USER, ROOTS_DEFAULTS, _ROOTS_FILES };
static const char *const roots_file_kind[_ROOTS_FILES] = {
        [ROOTS_SYSTEM] = "system settings",
        [ROOTS_USER] = "user settings",
        [ROOTS_DEFAULTS] = "system defaults",
};

/* path.join(path.dirname(system), "system-defaults.json") */
static char *roots_defaults_path(const char *system) {
        const char *slash = strrchr(system, '/');

        if (!slash)
                return strdup(SETTINGS_SYSTEM_DEFAULTS_NAME);
        return util_strprintf("%.*s/%s", (int)(slash - system), system,
                              SETTINGS_SYSTEM_DEFAULTS_NAME);
}

/* Why settings_read_file() did not give a file's object. */
static const char *roots_file_error(int r) {
        switch (r) {
        case -EBADMSG:
                return "no JSON object once its comments are stripped";
        case -EISDIR:
                return "a directory, not read";
        case SETTINGS_NOT_REGULAR:
                return "no regular file, not read";
        case -EFBIG:
                return "larger than 4 MiB, not read";
        case -ESTALE:
                return "it changed while read";
        case -ELOOP:
                return "nested deeper than qgc reads";
        default:
                return log_errno_to_string(r < 0 ? -r : r);
        }
}

static int roots_undetermined(char **ret_why, const char *fmt, ...) _printf_(2, 3);
static int roots_undetermined(char **ret_why, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;

        if (ret_why) {
                va_start(ap, fmt);
                if (vasprintf(&s, fmt, ap) < 0)
                        s = NULL;
                va_end(ap);
                free(*ret_why);
                *ret_why = s;
        }
        return ROOTS_UNDETERMINED;
}

/* The system settings, user settings and system defaults paths Qwen reads for the global dir
 * global_dir: 0, -EINVAL for a relative system settings or defaults path (resolved against
 * each Qwen process's cwd), -ENOMEM. */
static int roots_settings_paths(const RootsOptions *o, const char *global_dir,
                                char *ret[_ROOTS_FILES]) {
        if ((o->system_settings && *o->system_settings && o->system_settings[0] != '/') ||
            (o->system_defaults && *o->system_defaults && o->system_defaults[0] != '/'))
                return -EINVAL;
        ret[ROOTS_SYSTEM] = strdup(o->system_settings && *o->system_settings ?
                                           o->system_settings : SETTINGS_SYSTEM_PATH);
        ret[ROOTS_USER] = util_path_join(global_dir, "settings.json");
        if (!ret[ROOTS_SYSTEM] || !ret[ROOTS_USER])
                return -ENOMEM;
        ret[ROOTS_DEFAULTS] = o->system_defaults && *o->system_defaults ?
                                      strdup(o->system_defaults) :
                                      roots_defaults_path(ret[ROOTS_SYSTEM]);
        return ret[ROOTS_DEFAULTS] ? 0 : -ENOMEM;
}

static void roots_paths_done(char *(*p)[_ROOTS_FILES]) {
        for (size_t f = 0; f < _ROOTS_FILES; f++)
                free((*p)[f]);
}

/* advanced.runtimeOutputDir of Qwen's merged settings (settings.ts mergeSettings(): system
 * defaults, then user, then workspace, then system settings, the last one that has the key
 * winning, an "advanced" that is not an object clearing it; each file's strings with $VAR
 * resolved first) when it resolves to an absolute or ~-based path: *ret, else NULL (R = G).
 * The workspace file is per project: not read (a documented limit). Walks the files from the
 * strongest: the first that decides is the answer, so a file that does not parse matters only
 * when nothing stronger decided. */
static int roots_settings_runtime_dir(const RootsOptions *o, const char *global_dir, char **ret,
                                      bool *ret_partial, char **ret_why) {
        _cleanup_(roots_paths_done) char *paths[_ROOTS_FILES] = {};
        _cleanup_free_ char *resolved = NULL;
        json_object *doc = NULL, *adv = NULL, *val = NULL;
        size_t f;
        int r = 0;

        *ret = NULL;
        r = roots_settings_paths(o, global_dir, paths);
        if (r == -EINVAL)
                /* Qwen resolves a relative path against its own cwd, which is not known here */
                return roots_undetermined(ret_why,
                                          "a relative QWEN_CODE_SYSTEM_SETTINGS_PATH or "
                                          "QWEN_CODE_SYSTEM_DEFAULTS_PATH is resolved against "
                                          "each Qwen process's directory, so the runtime "
                                          "directory is not known");
        if (r < 0)
                return r;
        for (f = 0; f < _ROOTS_FILES; f++) {
                r = settings_read_file(paths[f], &doc);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return roots_undetermined(
                                ret_why,
                                "the %s file '%s' cannot be used as Qwen reads it (%s), so the "
                                "runtime directory is not known",
                                roots_file_kind[f], paths[f],
                                roots_file_error(r));
                if (!doc)
                        continue;
                if (!json_object_object_get_ex(doc, "advanced", &adv)) {
                        json_object_put(TAKE_PTR(doc));
                        continue;
                }
                if (!json_object_is_type(adv, json_type_object) ||
                    json_object_object_get_ex(adv, "runtimeOutputDir", &val))
                        break; /* this file decides (an "advanced" of another type: unset) */
                json_object_put(TAKE_PTR(doc));
        }
        if (f == _ROOTS_FILES || !js_truthy(val, true)) {
                /* unset, null, "", false, 0: Storage.setRuntimeBaseDir() resets to G */
                json_object_put(doc);
                return 0;
        }
        if (!json_object_is_type(val, json_type_string)) {
                json_object_put(doc);
                return roots_undetermined(ret_why,
                                          "advanced.runtimeOutputDir in the %s file '%s' is not a "
                                          "string (Qwen cannot start with it), so the runtime "
                                          "directory is not known",
                                          roots_file_kind[f], paths[f]);
        }
        if ((size_t)json_object_get_string_len(val) != strlen(json_object_get_string(val))) {
                json_object_put(doc);
                return roots_undetermined(ret_why,
                                          "advanced.runtimeOutputDir in the %s file '%s' holds a "
                                          "NUL character, so the runtime directory is not known",
                                          roots_file_kind[f], paths[f]);
        }
        r = settings_resolve_env(json_object_get_string(val), o->env, &resolved, NULL);
        json_object_put(doc);
        if (r == -ENOKEY)
                return roots_undetermined(ret_why,
                                          "advanced.runtimeOutputDir in the %s file '%s' names an "
                                          "environment variable %s, so the runtime directory is "
                                          "not known",
                                          roots_file_kind[f], paths[f],
                                          o->env ? "that is not set here" :
                                                   "(a user's environment is not known in "
                                                   "root mode)");
        if (r < 0)
                return r;
        if (resolved[0] == '/' || streq(resolved, "~") || strneq(resolved, "~/", 2) ||
            strneq(resolved, "~\\", 2))
        {
                r = roots_resolve_path(resolved, o->home, ret);
                if (r == -ELOOP)
                        return roots_undetermined(ret_why,
                                                  "advanced.runtimeOutputDir in the %s file '%s' "
                                                  "has '..' after a symlink, so the runtime "
                                                  "directory is not known",
                                                  roots_file_kind[f], paths[f]);
                if (r == -EINVAL) /* "~" with no usable home */
                        return roots_undetermined(ret_why,
                                                  "advanced.runtimeOutputDir in the %s file '%s' "
                                                  "starts with '~' and the home is not known, so "
                                                  "the runtime directory is not known",
                                                  roots_file_kind[f], paths[f]);
        } else if (*resolved) {
                /* per project (<cwd>/<value>): those runtime roots are not known */
                log_debug("'%s': a relative advanced.runtimeOutputDir is per project",
                          paths[f]);
                *ret_partial = true;
        }
        return r == -EINVAL ? 0 : r;
}

/* env.QWEN_RUNTIME_DIR of the settings, which Qwen 0.15.6 applies and no other release does
 * (0.15.6's loadEnvironment(), at the end of loadSettings(): each string of the merged "env"
 * object becomes the variable when the process does not have it; "env" is merged shallowly,
 * the strongest file's key winning, a falsy "env" clearing the weaker ones; 0.15.10 and later
 * skip QWEN_HOME and QWEN_RUNTIME_DIR there, PROJECT_ENV_HARDCODED_EXCLUSIONS). So the sessions
 * 0.15.6 started went to that root while newer versions put theirs in R, and their plans stay
 * in G: unless the value names R itself, the tree is incomplete (the conservative reading:
 * whether 0.15.6 took the variable from a .env file first depends on the first .env file it
 * found from each project's cwd up, so the dotenv files are not looked at here). Not applied
 * when QWEN_RUNTIME_DIR is in the environment, nor for a global dir other than ~/.qwen (0.15.6
 * has no QWEN_HOME: its sessions left nothing in another G). The workspace settings are per
 * project: roots_ws_check(). 1 with *ret_why (the file's name, not its text) when the
 * tree is incomplete, 0 when not, -ENOMEM. */
static int roots_settings_env_runtime(const RootsOptions *o, const char *g, const char *r_dir,
                                      char **ret_why) {
        _cleanup_(roots_paths_done) char *paths[_ROOTS_FILES] = {};
        _cleanup_free_ char *resolved = NULL, *path = NULL;
        json_object *doc = NULL, *env = NULL, *val = NULL;
        size_t f;
        int r;

        *ret_why = NULL;
        if (o->runtime_env && *o->runtime_env)
                return 0;
        if (o->home && o->home[0] == '/') {
                _cleanup_free_ char *legacy = util_path_join(o->home, ".qwen"), *legacy_n = NULL;
                legacy_n = legacy ? roots_normalize(legacy) : NULL;
                if (!legacy_n)
                        return -ENOMEM;
                if (!streq(legacy_n, g))
                        return 0;
        }
        r = roots_settings_paths(o, g, paths);
        if (r == -EINVAL) {
                *ret_why = strdup("a relative QWEN_CODE_SYSTEM_SETTINGS_PATH or "
                                  "QWEN_CODE_SYSTEM_DEFAULTS_PATH names settings files qgc does "
                                  "not know, whose env.QWEN_RUNTIME_DIR Qwen 0.15.6 applies");
                return *ret_why ? 1 : -ENOMEM;
        }
        if (r < 0)
                return r;
        for (f = 0; f < _ROOTS_FILES; f++) {
                r = settings_read_file(paths[f], &doc);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        *ret_why =
                                util_strprintf("the %s file '%s' cannot be used as Qwen reads it "
                                               "(%s), and Qwen 0.15.6 applies env.QWEN_RUNTIME_DIR "
                                               "from it",
                                               roots_file_kind[f], paths[f], roots_file_error(r));
                        return *ret_why ? 1 : -ENOMEM;
                }
                if (!doc)
                        continue;
                if (json_object_object_get_ex(doc, "env", &env)) {
                        if (!js_truthy(env, true))
                                break; /* clears the weaker files' "env" */
                        if (json_object_is_type(env, json_type_object) &&
                            json_object_object_get_ex(env, "QWEN_RUNTIME_DIR", &val))
                                break; /* this file decides */
                }
                json_object_put(TAKE_PTR(doc));
        }
        if (f == _ROOTS_FILES || !val || !json_object_is_type(val, json_type_string) ||
            json_object_get_string_len(val) == 0)
                r = 0; /* none, or one 0.15.6 does not apply (not a string; "" is unset) */
        else if ((size_t)json_object_get_string_len(val) != strlen(json_object_get_string(val)))
                r = 1; /* a NUL: not compared */
        else {
                r = settings_resolve_env(json_object_get_string(val), o->env, &resolved, NULL);
                if (r == -ENOKEY)
                        r = 1; /* a variable qgc does not know */
                else if (r < 0) {
                        json_object_put(doc);
                        return r;
                } else if (strchr(resolved, '$'))
                        r = 1; /* 0.15.6 resolves every name, qgc keeps some literal */
                else if (!*resolved)
                        r = 0; /* "" after resolution: unset for Storage */
                else if (resolved[0] == '/' || streq(resolved, "~") ||
                         strneq(resolved, "~/", 2) || strneq(resolved, "~\\", 2)) {
                        r = roots_resolve_path(resolved, o->home, &path);
                        if (r == -ENOMEM) {
                                json_object_put(doc);
                                return r;
                        }
                        r = r < 0 || !streq(path, r_dir);
                } else
                        r = 1; /* relative: per project (<cwd>/<value>) */
        }
        json_object_put(doc);
        if (r == 0)
                return 0;
        *ret_why =
                util_strprintf("env.QWEN_RUNTIME_DIR in the %s file '%s' (Qwen 0.15.6 applies it) "
                               "may have put sessions in a runtime directory qgc does not see",
                               roots_file_kind[f], paths[f]);
        return *ret_why ? 1 : -ENOMEM;
}

/* The user's .env files (Qwen 0.24; older versions read no .env before the settings):
 * preResolveHomeEnvOverrides() takes QWEN_HOME and QWEN_RUNTIME_DIR that the environment does not
 * have from G/.env, then (without $QWEN_HOME) ~/.env, before the settings; loadEnvironment(),
 * at the end of loadSettings() and before Storage resolves R, takes any variable that is unset
 * or empty from the home-scoped files findEnvFiles() lists (a project's own .env may set
 * neither: PROJECT_ENV_HARDCODED_EXCLUSIONS): G/.env, ~/.qwen/.env when G is elsewhere, ~/.env.
 * Together: for a variable unset or empty, the first of those files giving a non-empty value
 * wins (Qwen 0.24.4's loadSettings() and Storage agree: QWEN_RUNTIME_DIR="" with ~/.env setting
 * it, or $QWEN_HOME elsewhere with ~/.env or ~/.qwen/.env setting it, moves R). A file that is
 * not there or that Qwen cannot read (EACCES, EISDIR: it ignores the error) gives nothing.
 * *ret_home and *ret_rt: what was found (NULL: nothing); *ret_file: the file that gave
 * QWEN_HOME. */
static int roots_dotenv(const RootsOptions *o, const char *g, char **ret_home, char **ret_rt,
                        char **ret_file, char **ret_why) {
        static const char *const keys[] = { "QWEN_HOME", "QWEN_RUNTIME_DIR" };
        _cleanup_free_ char *legacy = NULL, *legacy_n = NULL;
        char *files[3] = {};
        char **out[] = { ret_home, ret_rt };
        bool need[] = { !o->qwen_home || !*o->qwen_home, !o->runtime_env || !*o->runtime_env };
        size_t n_files = 0;
        int r = 0;

        files[n_files++] = util_path_join(g, ".env");
        if (o->home && o->home[0] == '/') {
                legacy = util_path_join(o->home, ".qwen");
                legacy_n = legacy ? roots_normalize(legacy) : NULL;
                if (!legacy_n)
                        r = -ENOMEM;
                else if (!streq(legacy_n, g))
                        files[n_files++] = util_path_join(legacy_n, ".env");
                files[n_files++] = util_path_join(o->home, ".env");
        }
        for (size_t f = 0; f < n_files && r >= 0; f++) {
                if (!files[f]) {
                        r = -ENOMEM;
                        break;
                }
                for (size_t k = 0; k < ELEMENTSOF(keys) && r >= 0; k++) {
                        _cleanup_free_ char *v = NULL;
                        if (!need[k] || *out[k])
                                continue;
                        r = settings_read_dotenv(files[f], keys[k], &v);
                        if (r == -EACCES || r == -EISDIR) {
                                r = 0;
                                break; /* Qwen catches the read error: nothing from it */
                        }
                        if (r == -ENOMEM)
                                break;
                        if (r < 0) {
                                r = roots_undetermined(
                                        ret_why,
                                        "the dotenv file '%s' (where Qwen 0.24 reads %s) cannot be "
                                        "used (%s), so the Qwen directories are not known",
                                        files[f], keys[k],
                                        r == -EBADMSG ? "not parsed with certainty" :
                                                        roots_file_error(r));
                                break;
                        }
                        if (v) {
                                *out[k] = TAKE_PTR(v);
                                if (k == 0 && !*ret_file)
                                        *ret_file = strdup(files[f]);
                        }
                }
        }
        for (size_t f = 0; f < ELEMENTSOF(files); f++)
                free(files[f]);
        return r;
}

/* Move the global dir *g and the runtime dir *r_dir (NULL: the same as the global dir) into
 * ret. */
static int roots_take(Tree *ret, char **g, char **r_dir) {
        if (!*r_dir) {
                *r_dir = strdup(*g);
                if (!*r_dir)
                        return -ENOMEM;
        }
        ret->global_dir = TAKE_PTR(*g);
        ret->runtime_dir = TAKE_PTR(*r_dir);
        return 0;
}

/* roots_resolve_path() of the environment variable var's value: '..' after a symlink leaves
 * the Qwen directories unknown (ROOTS_UNDETERMINED, saying so). */
static int roots_resolve_var(const char *var, const char *value, const char *home, char **ret,
                             char **ret_why) {
        int r = roots_resolve_path(value, home, ret);

        if (r == -ELOOP)
                return roots_undetermined(ret_why,
                                          "%s has '..' after a symlink, so the Qwen directories "
                                          "are not known",
                                          var);
        return r;
}

int roots_resolve_opts(const RootsOptions *o, Tree *ret, char **ret_why) {
        _cleanup_free_ char *g = NULL, *r_dir = NULL;
        _cleanup_free_ char *env_home = NULL, *env_rt = NULL, *env_file = NULL, *env_why = NULL;
        const char *home = o->home;
        bool partial = false;
        int r;

        if (o->qwen_home && *o->qwen_home) {
                r = roots_resolve_var("QWEN_HOME", o->qwen_home, home, &g, ret_why);
                if (r < 0)
                        return r;
        } else {
                _cleanup_free_ char *h = NULL;
                if (!home || home[0] != '/')
                        return -EINVAL;
                h = util_path_join(home, ".qwen");
                if (!h)
                        return -ENOMEM;
                g = roots_normalize(h);
                if (!g)
                        return -ENOMEM;
        }

        r = roots_dotenv(o, g, &env_home, &env_rt, &env_file, ret_why);
        if (r < 0)
                return r;
        if (env_home) {
                /* QWEN_HOME from a .env moves G: only the same G is known */
                _cleanup_free_ char *g2 = NULL;
                r = roots_resolve_path(env_home, home, &g2);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || !streq(g2, g))
                        return roots_undetermined(ret_why,
                                                  "QWEN_HOME in the dotenv file '%s' moves Qwen's "
                                                  "global directory (Qwen 0.24 reads it), so the "
                                                  "Qwen directories are not known",
                                                  env_file ?: "?");
        }
        if (env_rt && env_rt[0] != '/' && env_rt[0] != '~')
                /* resolved against each Qwen process's cwd */
                return roots_undetermined(ret_why,
                                          "a relative QWEN_RUNTIME_DIR in a dotenv file (Qwen "
                                          "0.24 reads it) is per project, so the runtime "
                                          "directory is not known");
        if (env_rt) {
                r = roots_resolve_var("QWEN_RUNTIME_DIR", env_rt, home, &r_dir, ret_why);
                if (r < 0)
                        return r;
        } else if (o->runtime_env && *o->runtime_env) {
                r = roots_resolve_var("QWEN_RUNTIME_DIR", o->runtime_env, home, &r_dir,
                                      ret_why);
                if (r < 0)
                        return r;
        } else {
                r = roots_settings_runtime_dir(o, g, &r_dir, &partial, ret_why);
                if (r < 0)
                        return r;
        }
        r = roots_settings_env_runtime(o, g, r_dir ?: g, &env_why);
        if (r < 0)
                return r;
        if (r > 0)
                log_notice("'%s': %s", g, env_why);
        r = roots_take(ret, &g, &r_dir);
        if (r >= 0 && partial) {
                ret->incomplete = true;
                ret->incomplete_why = ROOTS_PARTIAL_WHY;
        } else if (r >= 0 && env_why) {
                ret->incomplete = true;
                ret->incomplete_why = ROOTS_ENV_WHY;
        }
        return r;
}

int roots_from_dir(const char *dir, Tree *ret) {
        _cleanup_free_ char *g = NULL, *r_dir = NULL;

        if (!dir || !*dir)
                return -EINVAL;
        /* no ~ expansion (the shell does it for arguments): "~x" is a relative name here */
        if (dir[0] == '/')
                g = roots_normalize(dir);
        else {
                _cleanup_free_ char *cwd = getcwd(NULL, 0), *joined = NULL;
                if (!cwd)
                        return -errno;
                joined = util_path_join(cwd, dir);
                g = joined ? roots_normalize(joined) : NULL;
        }
        if (!g)
                return -ENOMEM;
        return roots_take(ret, &g, &r_dir);
}

/* ------------------------------------------------------------------ a project's own files
 *
 * Runtime roots a project may have of its own (roots_workspaces(), after the scan). Qwen merges
 * the workspace settings <cwd>/.qwen/settings.json of a trusted workspace (folder trust is off
 * by default) between the user's and the system's, so advanced.runtimeOutputDir there gives the
 * sessions started in that project another runtime root, while file-history/, plans/ and
 * usage_record.jsonl stay in G; Qwen 0.15.6 also took QWEN_RUNTIME_DIR and QWEN_HOME from a
 * project's .env and from settings.env (0.15.10 and later never: the hardcoded project
 * exclusions). Those runtime roots are not scanned: the projects are the cwds of the scanned
 * transcripts and, for a G-level orphan candidate (file-history/<id>, plans/<id>.md of a
 * session not found), the "project" of its usage_record.jsonl line; a tree with a project
 * whose files may (or that qgc cannot read, parse, or look at without following a symlink) is
 * incomplete (ROOTS_WORKSPACE_WHY), as for a relative runtimeOutputDir. */

/* Does the value v (from a project's file, Qwen resolving it against cwd) name the runtime
 * root R exactly? Only a value qgc resolves with certainty does: no variable, no '..' after a
 * symlink, the same normalised path. */
static int roots_ws_same(const char *v, const char *cwd, const char *home, const char *r_dir,
                         bool *ret) {
        _cleanup_free_ char *resolved = NULL, *path = NULL, *joined = NULL;
        int r;

        *ret = false;
        r = settings_resolve_env(v, NULL, &resolved, NULL);
        if (r == -ENOKEY)
                return 0;
        if (r < 0)
                return r;
        if (resolved[0] == '/' || streq(resolved, "~") || strneq(resolved, "~/", 2) ||
            strneq(resolved, "~\\", 2)) {
                r = roots_resolve_path(resolved, home, &path);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return 0;
        } else {
                joined = util_strprintf("%s/%s", cwd, resolved);
                if (!joined)
                        return -ENOMEM;
                if (!roots_dotdot_lexical(joined))
                        return 0;
                path = roots_normalize(joined);
                if (!path)
                        return -ENOMEM;
        }
        *ret = streq(path, r_dir);
        return 0;
}

/* Why a project file qgc did not read or parse counts as "may". */
static const char *roots_ws_error(int r, bool dotenv) {
        switch (r) {
        case -ELOOP:
                return "it is a symlink, not followed";
        case -EPERM:
                return "it belongs to another user, not read as root";
        case -EBADMSG:
                return dotenv ? "not parsed with certainty" :
                                "no JSON object once its comments are stripped";
        default:
                return roots_file_error(r);
        }
}

/* The workspace settings <cwd>/.qwen/settings.json (cfd: cwd opened), as Qwen merges them over
 * the user's (settings.ts mergeSettings(): a trusted workspace's file between the user's and
 * the system's; folder trust is not looked at, as a workspace may have been trusted when
 * its sessions were written): 1 with *ret_why when they may give that project another runtime
 * root than tr's (an advanced.runtimeOutputDir, an "advanced" that is no object, or an
 * env.QWEN_RUNTIME_DIR / env.QWEN_HOME, which Qwen 0.15.6 applies, unless the value names
 * R itself), 0 when not, -ENOMEM. */
static int roots_ws_settings(int cfd, const char *cwd, const Tree *tr, const char *home,
                             char **ret_why) {
        _cleanup_close_ int qfd = -EBADF;
        json_object *doc = NULL, *adv = NULL, *val = NULL, *env = NULL;
        struct stat st;
        bool same = false;
        int r = 0;

        if (fstatat(cfd, ".qwen", &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                r = -errno;
        } else if (S_ISLNK(st.st_mode))
                r = -ELOOP;
        else if (!S_ISDIR(st.st_mode))
                return 0; /* no .qwen/settings.json to find */
        if (r == 0) {
                qfd = openat(cfd, ".qwen", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = qfd < 0 ? (errno == ENOENT ? 0 : -errno) : 1;
                if (r == 0)
                        return 0;
        }
        if (r == 1)
                r = settings_read_file_at(qfd, "settings.json", tr->uid, &doc);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret_why =
                        util_strprintf("its workspace settings '%s/.qwen/settings.json' cannot be "
                                       "used (%s)",
                                       cwd, roots_ws_error(r, false));
                return *ret_why ? 1 : -ENOMEM;
        }
        if (!doc)
                return 0;
        if (json_object_object_get_ex(doc, "env", &env) &&
            json_object_is_type(env, json_type_object) &&
            (json_object_object_get_ex(env, "QWEN_RUNTIME_DIR", NULL) ||
             json_object_object_get_ex(env, "QWEN_HOME", NULL))) {
                json_object_put(doc);
                *ret_why = util_strprintf("its workspace settings '%s/.qwen/settings.json' set "
                                          "QWEN_RUNTIME_DIR or QWEN_HOME in env (Qwen 0.15.6 "
                                          "applies them)",
                                          cwd);
                return *ret_why ? 1 : -ENOMEM;
        }
        if (!json_object_object_get_ex(doc, "advanced", &adv) ||
            (json_object_is_type(adv, json_type_object) &&
             !json_object_object_get_ex(adv, "runtimeOutputDir", &val))) {
                json_object_put(doc);
                return 0;
        }
        if (!json_object_is_type(adv, json_type_object) || !js_truthy(val, true))
                /* the merged value is unset: the runtime root is G */
                same = streq(tr->global_dir, tr->runtime_dir);
        else if (json_object_is_type(val, json_type_string) &&
                 (size_t)json_object_get_string_len(val) == strlen(json_object_get_string(val))) {
                r = roots_ws_same(json_object_get_string(val), cwd, home, tr->runtime_dir, &same);
                if (r < 0) {
                        json_object_put(doc);
                        return r;
                }
        }
        json_object_put(doc);
        if (same)
                return 0;
        *ret_why = util_strprintf("its workspace settings '%s/.qwen/settings.json' set "
                                  "advanced.runtimeOutputDir",
                                  cwd);
        return *ret_why ? 1 : -ENOMEM;
}

static void roots_pair_free(char *(*v)[2]) {
        free((*v)[0]);
        free((*v)[1]);
}

/* The .env files Qwen may load for a process started in cwd (settings.ts findEnvFile(): in each
 * directory from cwd up, .qwen/.env then .env; the home directory's are the user's, which
 * roots_resolve_opts() reads). Qwen 0.15.6 takes QWEN_RUNTIME_DIR and QWEN_HOME from the first
 * it finds (0.15.10 and later never from a project's file); which one it found depends on
 * folder trust, so every one up to the home (or "/") is looked at: 1 with *ret_why when one
 * sets either (unless it names R, or G itself), or cannot be read or parsed with certainty;
 * 0 when none does; -ENOMEM. */
/* Record the directories cwd .. (not including) the first stop_len bytes of cwd as looked at
 * and clean in the set clean (the walks of other projects end there). 0 or -ENOMEM. */
static int roots_ws_remember(Hashmap *clean, const char *cwd, size_t stop_len, bool root) {
        size_t len = strlen(cwd);

        for (;;) {
                char *key;

                if (len == 0 ? !root : len <= stop_len)
                        return 0;
                key = len == 0 ? strdup("/") : strndup(cwd, len);
                if (!key || hashmap_put(clean, hashmap_hash_string(key), key) < 0) {
                        free(key);
                        return -ENOMEM;
                }
                if (len == 0)
                        return 0;
                while (len > 0 && cwd[len - 1] != '/')
                        len--;
                if (len > 0)
                        len--; /* "/a/b" -> "/a"; "/a" -> "" ("/") */
        }
}

static int roots_ws_dotenv(const char *cwd, const Tree *tr, const char *home, Hashmap *clean,
                           char **ret_why) {
        static const char *const keys[] = { "QWEN_RUNTIME_DIR", "QWEN_HOME", NULL };
        _cleanup_free_ char *dir = strdup(streq(cwd, "/") ? "" : cwd);
        int r = 0;

        if (!dir)
                return -ENOMEM;
        for (;;) { /* dir "" stands for "/" */
                _cleanup_close_ int dfd = -EBADF, qfd = -EBADF;
                char *slash;

                if (home && streq(dir, home))
                        return clean ? roots_ws_remember(clean, cwd, strlen(dir), false) : 0;
                if (clean && hashmap_get(clean, hashmap_hash_string(*dir ? dir : "/"), hashmap_eq_string,
                                         *dir ? dir : "/"))
                        return roots_ws_remember(clean, cwd, *dir ? strlen(dir) : 0, false);
                dfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0 && errno != ENOENT && errno != ENOTDIR) {
                        *ret_why = util_strprintf("'%s' cannot be searched for the .env files Qwen "
                                                  "loads (%s)",
                                                  *dir ? dir : "/", log_errno_to_string(errno));
                        return *ret_why ? 1 : -ENOMEM;
                }
                for (int f = 0; dfd >= 0 && f < 2; f++) {
                        _cleanup_(roots_pair_free) char *v[2] = {};
                        const char *name = f == 0 ? ".env" : ".qwen/.env";
                        int at = dfd;

                        if (f == 1) {
                                struct stat st;
                                if (fstatat(dfd, ".qwen", &st, AT_SYMLINK_NOFOLLOW) < 0)
                                        r = errno == ENOENT || errno == ENOTDIR ? 1 : -errno;
                                else if (S_ISLNK(st.st_mode))
                                        r = -ELOOP; /* Qwen follows it, qgc does not */
                                else if (!S_ISDIR(st.st_mode))
                                        r = 1;
                                else {
                                        qfd = openat(dfd, ".qwen", O_PATH | O_DIRECTORY |
                                                                     O_NOFOLLOW | O_CLOEXEC);
                                        r = qfd >= 0 ? 0 : errno == ENOENT ? 1 : -errno;
                                }
                                if (r == 1) {
                                        r = 0;
                                        continue; /* no .qwen/.env there */
                                }
                                at = qfd;
                                name = ".env";
                        }
                        if (r == 0)
                                r = settings_read_dotenv_at(at, name, tr->uid, keys, v);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) {
                                *ret_why = util_strprintf(
                                        "the .env file '%s/%s' Qwen may load cannot "
                                        "be used (%s)",
                                        *dir ? dir : "", f == 0 ? ".env" : ".qwen/.env",
                                        roots_ws_error(r, true));
                                return *ret_why ? 1 : -ENOMEM;
                        }
                        for (size_t k = 0; k < 2; k++) {
                                bool same = false;
                                if (!v[k])
                                        continue;
                                r = roots_ws_same(v[k], cwd, home,
                                                  k == 0 ? tr->runtime_dir : tr->global_dir,
                                                  &same);
                                if (r < 0)
                                        return r;
                                if (same)
                                        continue;
                                *ret_why = util_strprintf("the .env file '%s/%s' sets %s (Qwen "
                                                          "0.15.6 applies it)",
                                                          *dir ? dir : "",
                                                          f == 0 ? ".env" : ".qwen/.env", keys[k]);
                                return *ret_why ? 1 : -ENOMEM;
                        }
                        r = 0;
                }
                if (!*dir)
                        return clean ? roots_ws_remember(clean, cwd, 0, true) : 0;
                slash = strrchr(dir, '/');
                if (!slash)
                        return 0;
                *slash = 0; /* "/a" -> "" stands for "/" */
        }
}

/* May Qwen, started in cwd, put that project's sessions in another runtime root than tr's?
 * Looks at what Qwen reads there, as the calling process (the tree's user in root mode) and
 * never through a symlink inside cwd (nor, as root, a file of another user): the workspace
 * settings <cwd>/.qwen/settings.json (advanced.runtimeOutputDir, env.QWEN_RUNTIME_DIR or
 * env.QWEN_HOME) and the .env files from cwd up to home (QWEN_RUNTIME_DIR, QWEN_HOME); a value
 * that names tr's own root does not count. 1 with *ret_why (the files' names, not their text)
 * when it may, or when a file cannot be read or parsed with certainty; 0 when not (also for a
 * cwd that does not exist, or the home itself); -ENOMEM. */
static int roots_ws_check(const Tree *tr, const char *cwd_raw, const char *home,
                          Hashmap *clean, char **ret_why) {
        _cleanup_close_ int cfd = -EBADF;
        _cleanup_free_ char *h = NULL, *cwd = NULL;
        struct stat st, hst;
        int r;

        *ret_why = NULL;
        if (!cwd_raw || cwd_raw[0] != '/')
                return 0;
        cwd = roots_normalize(cwd_raw);
        if (!cwd)
                return -ENOMEM;
        if (home && home[0] == '/') {
                h = roots_normalize(home);
                if (!h)
                        return -ENOMEM;
        }
        cfd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cfd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0; /* gone: no Qwen starts there, and what it read is gone */
                *ret_why = util_strprintf("its directory '%s' cannot be looked at (%s)", cwd,
                                          log_errno_to_string(errno));
                return *ret_why ? 1 : -ENOMEM;
        }
        /* Qwen loads no workspace settings in the home directory, and there only the home's
         * .env files, which are the user's */
        if (h && fstat(cfd, &st) >= 0 && stat(h, &hst) >= 0 && st.st_dev == hst.st_dev &&
            st.st_ino == hst.st_ino)
                return 0;
        r = roots_ws_settings(cfd, cwd, tr, h, ret_why);
        if (r != 0)
                return r;
        return roots_ws_dotenv(cwd, tr, h, clean, ret_why);
}

static void roots_clean_done(Hashmap *h) {
        hashmap_done(h, free);
}

static int roots_ws_idcmp(const void *a, const void *b) {
        return util_ascii_strcasecmp(*(char *const *)a, *(char *const *)b);
}

/* The session ids of G's entries that are kept per session and that no scanned transcript has:
 * G/file-history/<id>/ and G/plans/<id>.md (the G-level orphans qgc may reclaim). *ret: a
 * sorted array (n: *ret_n). 0, -ENOMEM; a directory that cannot be listed gives nothing (the
 * scan then decides nothing of it either). */
static int roots_ws_candidates(const Inventory *inv, int gfd, char ***ret, size_t *ret_n) {
        static const char *const dirs[] = { "file-history", "plans" };
        char **v = NULL;
        size_t n = 0, alloc = 0;

        for (size_t d = 0; d < ELEMENTSOF(dirs); d++) {
                /* listed without moving its atime, as the scan lists it */
                _cleanup_close_ int dfd = fs_open_noatime(gfd, dirs[d], O_RDONLY | O_DIRECTORY |
                                                                            O_CLOEXEC);
                _cleanup_free_ FsDir *dir = NULL;
                const char *name;
                unsigned char type;
                int k;

                if (dfd < 0)
                        continue;
                dir = malloc(sizeof(FsDir));
                if (!dir)
                        goto oom;
                fs_dir_init(dir, dfd);
                while ((k = fs_dir_next(dir, &name, &type)) > 0) {
                        char id[SESSION_ID_MAX + 1];
                        size_t len = strlen(name);

                        if (d == 1) { /* plans/<id>.md */
                                if (len < 4 || !streq(name + len - 3, ".md"))
                                        continue;
                                len -= 3;
                        }
                        if (len > SESSION_ID_MAX)
                                continue;
                        memcpy(id, name, len);
                        id[len] = 0;
                        if (!qwen_session_id_valid(id))
                                continue;
                        if (n == alloc) {
                                char **nv = reallocarray(v, alloc ? alloc * 2 : 16, sizeof(char *));
                                if (!nv)
                                        goto oom;
                                v = nv;
                                alloc = alloc ? alloc * 2 : 16;
                        }
                        v[n] = strdup(id);
                        if (!v[n])
                                goto oom;
                        n++;
                }
                if (k == -ENOMEM)
                        goto oom;
        }
        if (n > 0) {
                /* drop the ids of scanned sessions: a look-up of each session in the few
                 * candidates, as scan_orphans() does, not an index of every session */
                _cleanup_free_ bool *found = calloc(n, sizeof(bool));
                size_t m = 0;

                if (!found)
                        goto oom;
                qsort(v, n, sizeof(char *), roots_ws_idcmp);
                for (size_t i = 1; i < n; i++) /* an id in both directories: once */
                        found[i] = roots_ws_idcmp(&v[i - 1], &v[i]) == 0;
                for (size_t i = 0; i < inv->n_sessions; i++) {
                        const char *key = inv->sessions[i].id;
                        char **hit = bsearch(&key, v, n, sizeof(char *), roots_ws_idcmp);
                        if (!hit)
                                continue;
                        /* every copy of that id */
                        size_t j = (size_t)(hit - v), lo = j;
                        while (lo > 0 && roots_ws_idcmp(&v[lo - 1], hit) == 0)
                                lo--;
                        for (; j < n && roots_ws_idcmp(&v[j], hit) == 0; j++)
                                found[j] = true;
                        for (; lo < (size_t)(hit - v); lo++)
                                found[lo] = true;
                }
                for (size_t i = 0; i < n; i++) {
                        if (found[i]) {
                                free(v[i]);
                                continue;
                        }
                        v[m++] = v[i]; /* stays sorted */
                }
                n = m;
        }
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
        return -ENOMEM;
}

int roots_workspaces(Inventory *inv, const StoreOps *store, const char *home) {
        _cleanup_free_ bool *before = calloc(inv->n_trees ?: 1, sizeof(bool));
        _cleanup_(roots_clean_done) Hashmap clean = {}; /* dirs whose .env files are clean, of
                                                         * the tree prev_tree */
        const char *prev = NULL;
        size_t prev_tree = SIZE_MAX;

        if (!before)
                return -ENOMEM;
        /* a tree incomplete already decides nothing that this could stop; another store's
         * trees are not Qwen's */
        for (size_t t = 0; t < inv->n_trees; t++)
                before[t] = inv->trees[t].incomplete || inv->trees[t].store != store;
        for (size_t i = 0; i < inv->n_sessions; i++) {
                const Session *s = &inv->sessions[i];
                Tree *tr = &inv->trees[s->tree];
                _cleanup_free_ char *why = NULL;
                int r;

                /* sorted by (tree, project, cwd): a project's cwd is looked at once */
                if (before[s->tree] || !s->cwd ||
                    (s->tree == prev_tree && prev && streq(prev, s->cwd)))
                        continue;
                if (s->tree != prev_tree)
                        roots_clean_done(&clean); /* a value's meaning depends on the tree */
                prev = s->cwd;
                prev_tree = s->tree;
                r = roots_ws_check(tr, s->cwd, home, &clean, &why);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                log_notice("'%s': the sessions of '%s' may be in a runtime directory qgc does not "
                           "see: %s",
                           tr->global_dir, s->cwd, why);
                tr->incomplete = true;
                tr->incomplete_why = ROOTS_WORKSPACE_WHY;
        }
        /* sessions qgc did not find whose file-history or plan is in G: the project
         * usage_record.jsonl names for them (a session's line is written when it ends) may
         * have put them in a runtime root of its own; looked at only when there are such */
        for (size_t t = 0; t < inv->n_trees; t++) {
                Tree *tr = &inv->trees[t];
                _cleanup_close_ int gfd = -EBADF;
                char **ids = NULL, **cwds = NULL;
                size_t n_ids = 0, n_cwds = 0;
                bool seen = false;
                int r;

                for (size_t u = 0; u < t; u++)
                        seen = seen || streq(inv->trees[u].global_dir, tr->global_dir);
                if (before[t] || tr->incomplete || seen)
                        continue;
                gfd = open(tr->global_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (gfd < 0)
                        continue;
                r = roots_ws_candidates(inv, gfd, &ids, &n_ids);
                if (r >= 0 && n_ids > 0)
                        r = usage_index_projects(gfd, (const char *const *)ids, n_ids, &cwds, &n_cwds);
                for (size_t i = 0; r >= 0 && i < n_cwds; i++) {
                        _cleanup_free_ char *why = NULL;
                        r = roots_ws_check(tr, cwds[i], home, NULL, &why);
                        if (r <= 0)
                                continue;
                        log_notice("'%s': sessions of '%s' (named in usage_record.jsonl) may be in "
                                   "a runtime directory qgc does not see: %s",
                                   tr->global_dir, cwds[i], why);
                        r = 0;
                        for (size_t u = t; u < inv->n_trees; u++)
                                if (streq(inv->trees[u].global_dir, tr->global_dir) &&
                                    !inv->trees[u].incomplete) {
                                        inv->trees[u].incomplete = true;
                                        inv->trees[u].incomplete_why = ROOTS_WORKSPACE_WHY;
                                }
                }
                for (size_t i = 0; i < n_ids; i++)
                        free(ids[i]);
                free(ids);
                for (size_t i = 0; i < n_cwds; i++)
                        free(cwds[i]);
                free(cwds);
                if (r < 0)
                        return r;
        }
        return 0;
}
