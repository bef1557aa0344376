/* roots.c: where a user's Qwen trees are, resolved as Qwen Code's Storage does.
 *
 * Not discovered (documented limits): a RELATIVE advanced.runtimeOutputDir (Qwen resolves it
 * against each project's root, so each project has its own runtime root, known only from the
 * projects' settings files), per-request (ACP/daemon async-context) runtime dirs and newer
 * versions' pinned managed-workspace roots. Such a relative setting is ignored here: R = G. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "roots.h"

#define ROOTS_SETTINGS_MAX (4 * 1024 * 1024)

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

/* Qwen's resolvePath: "~", "~/x", "~\x" against home; relative against the cwd; normalised.
 * Returns 0 with *ret set, -EINVAL for an empty value, -ENOMEM, or -errno from getcwd. */
static int roots_resolve_path(const char *value, const char *home, char **ret) {
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
        } else if (value[0] == '/')
                joined = strdup(value);
        else {
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

/* advanced.runtimeOutputDir from G/settings.json when it is absolute (or ~-based); NULL else.
 * A missing or unparsable settings file is not an error (Qwen starts with defaults then). */
static int roots_settings_runtime_dir(const char *global_dir, const char *home, char **ret) {
        _cleanup_free_ char *path = path_join(global_dir, "settings.json");
        _cleanup_close_ int fd = -EBADF;
        json_object *root = NULL, *adv = NULL, *val = NULL;
        const char *s;
        struct stat st;
        int r = 0;

        *ret = NULL;
        if (!path)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return 0;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > ROOTS_SETTINGS_MAX) {
                log_debug("'%s': not a regular file of sane size, ignored", path);
                return 0;
        }
        root = json_object_from_fd(fd);
        if (!root) {
                log_debug("'%s': not JSON, ignored", path);
                return 0;
        }
        if (json_object_object_get_ex(root, "advanced", &adv) &&
            json_object_is_type(adv, json_type_object) &&
            json_object_object_get_ex(adv, "runtimeOutputDir", &val) &&
            json_object_is_type(val, json_type_string)) {
                s = json_object_get_string(val);
                if (s[0] == '/' || streq(s, "~") || strneq(s, "~/", 2) || strneq(s, "~\\", 2))
                        r = roots_resolve_path(s, home, ret);
                else if (*s)
                        log_debug("'%s': relative advanced.runtimeOutputDir '%s' is per project, "
                                  "not discovered",
                                  path, s);
        }
        json_object_put(root);
        return r == -EINVAL ? 0 : r;
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

int roots_resolve(const char *home, const char *qwen_home, const char *runtime_env, Tree *ret) {
        _cleanup_free_ char *g = NULL, *r_dir = NULL;
        int r;

        if (qwen_home && *qwen_home) {
                r = roots_resolve_path(qwen_home, home, &g);
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

        if (runtime_env && *runtime_env) {
                r = roots_resolve_path(runtime_env, home, &r_dir);
                if (r < 0)
                        return r;
        } else {
                r = roots_settings_runtime_dir(g, home, &r_dir);
                if (r < 0)
                        return r;
        }
        return roots_take(ret, &g, &r_dir);
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
