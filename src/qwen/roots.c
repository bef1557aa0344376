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
 * A project's own files: roots-workspace.c.
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

#include "fsutil.h"
#include "hashmap.h"
#include "js.h"
#include "log.h"
#include "macro.h"
#include "qwen.h"
#include "roots.h"
#include "roots-int.h"
#include "settings.h"

/* Lexically normalise an absolute path as node's path.resolve does: collapse "//", drop ".",
 * apply ".." (never above "/"), strip a trailing '/'. Returns a new string or NULL. */
char *roots_normalize(const char *abs) {
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
bool roots_dotdot_lexical(const char *abs) {
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
int roots_resolve_path(const char *value, const char *home, char **ret) {
        _cleanup_free_ char *joined = NULL, *cwd = NULL;
        char *out;

        if (!value || !*value)
                return -EINVAL;
        if (streq(value, "~") || strneq(value, "~/", 2) || strneq(value, "~\\", 2)) {
                if (!home || home[0] != '/')
                        return -EINVAL;
                joined = strprintf("%s/%s", home, value[1] ? value + 2 : "");
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
                joined = strprintf("%s/%s", cwd, value);
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
        return strprintf("%.*s/%s", (int)(slash - system), system, SETTINGS_SYSTEM_DEFAULTS_NAME);
}

/* Why settings_read_file() did not give a file's object. */
const char *roots_file_error(int r) {
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
                return errno_to_string(r < 0 ? -r : r);
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
static int roots_settings_paths(const RootsOptions *o, const char *global_dir, char **ret_sys,
                                char **ret_user, char **ret_defaults) {
        _cleanup_free_ char *sys = NULL, *user = NULL, *defaults = NULL;

        if ((o->system_settings && *o->system_settings && o->system_settings[0] != '/') ||
            (o->system_defaults && *o->system_defaults && o->system_defaults[0] != '/'))
                return -EINVAL;
        sys = strdup(o->system_settings && *o->system_settings ? o->system_settings :
                                                                  SETTINGS_SYSTEM_PATH);
        user = path_join(global_dir, "settings.json");
        if (!sys || !user)
                return -ENOMEM;
        defaults = o->system_defaults && *o->system_defaults ? strdup(o->system_defaults) :
                                                               roots_defaults_path(sys);
        if (!defaults)
                return -ENOMEM;
        *ret_sys = TAKE_PTR(sys);
        *ret_user = TAKE_PTR(user);
        *ret_defaults = TAKE_PTR(defaults);
        return 0;
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
        _cleanup_free_ char *sys = NULL, *user = NULL, *defaults = NULL, *resolved = NULL;
        const char *paths[_ROOTS_FILES];
        json_object *doc = NULL, *adv = NULL, *val = NULL;
        size_t f;
        int r = 0;

        *ret = NULL;
        r = roots_settings_paths(o, global_dir, &sys, &user, &defaults);
        if (r == -EINVAL)
                /* Qwen resolves a relative path against its own cwd, which is not known here */
                return roots_undetermined(ret_why,
                                          "a relative QWEN_CODE_SYSTEM_SETTINGS_PATH or "
                                          "QWEN_CODE_SYSTEM_DEFAULTS_PATH is resolved against "
                                          "each Qwen process's directory, so the runtime "
                                          "directory is not known");
        if (r < 0)
                return r;
        paths[ROOTS_SYSTEM] = sys;
        paths[ROOTS_USER] = user;
        paths[ROOTS_DEFAULTS] = defaults;

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
 * project: roots_workspace_check(). 1 with *ret_why (the file's name, not its text) when the
 * tree is incomplete, 0 when not, -ENOMEM. */
static int roots_settings_env_runtime(const RootsOptions *o, const char *g, const char *r_dir,
                                      char **ret_why) {
        _cleanup_free_ char *sys = NULL, *user = NULL, *defaults = NULL, *resolved = NULL;
        _cleanup_free_ char *path = NULL;
        const char *paths[_ROOTS_FILES];
        json_object *doc = NULL, *env = NULL, *val = NULL;
        size_t f;
        int r;

        *ret_why = NULL;
        if (o->runtime_env && *o->runtime_env)
                return 0;
        if (o->home && o->home[0] == '/') {
                _cleanup_free_ char *legacy = path_join(o->home, ".qwen"), *legacy_n = NULL;
                legacy_n = legacy ? roots_normalize(legacy) : NULL;
                if (!legacy_n)
                        return -ENOMEM;
                if (!streq(legacy_n, g))
                        return 0;
        }
        r = roots_settings_paths(o, g, &sys, &user, &defaults);
        if (r == -EINVAL) {
                *ret_why = strdup("a relative QWEN_CODE_SYSTEM_SETTINGS_PATH or "
                                  "QWEN_CODE_SYSTEM_DEFAULTS_PATH names settings files qgc does "
                                  "not know, whose env.QWEN_RUNTIME_DIR Qwen 0.15.6 applies");
                return *ret_why ? 1 : -ENOMEM;
        }
        if (r < 0)
                return r;
        paths[ROOTS_SYSTEM] = sys;
        paths[ROOTS_USER] = user;
        paths[ROOTS_DEFAULTS] = defaults;

        for (f = 0; f < _ROOTS_FILES; f++) {
                r = settings_read_file(paths[f], &doc);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        *ret_why = strprintf("the %s file '%s' cannot be used as Qwen reads it "
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
        *ret_why = strprintf("env.QWEN_RUNTIME_DIR in the %s file '%s' (Qwen 0.15.6 applies it) "
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

        files[n_files++] = path_join(g, ".env");
        if (o->home && o->home[0] == '/') {
                legacy = path_join(o->home, ".qwen");
                legacy_n = legacy ? roots_normalize(legacy) : NULL;
                if (!legacy_n)
                        r = -ENOMEM;
                else if (!streq(legacy_n, g))
                        files[n_files++] = path_join(legacy_n, ".env");
                files[n_files++] = path_join(o->home, ".env");
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
                h = path_join(home, ".qwen");
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

int roots_resolve(const char *home, const char *qwen_home, const char *runtime_env, Tree *ret) {
        RootsOptions o = {
                .home = home,
                .qwen_home = qwen_home,
                .runtime_env = runtime_env,
        };

        return roots_resolve_opts(&o, ret, NULL);
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
                joined = path_join(cwd, dir);
                g = joined ? roots_normalize(joined) : NULL;
        }
        if (!g)
                return -ENOMEM;
        return roots_take(ret, &g, &r_dir);
}
