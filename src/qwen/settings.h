/* settings.h: Qwen Code's settings files, read as its loadSettings() reads them
 * (packages/cli/src/config/settings.ts): one leading UTF-8 BOM dropped (stripUtf8Bom()),
 * strip-json-comments, then JSON.parse, then $VAR and
 * ${VAR} resolved in string values. roots.c merges the files and takes
 * advanced.runtimeOutputDir from them. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

struct json_object;

/* Qwen's defaults on Linux (getSystemSettingsPath(), getSystemDefaultsPath()); the environment
 * variables QWEN_CODE_SYSTEM_SETTINGS_PATH and QWEN_CODE_SYSTEM_DEFAULTS_PATH replace them. */
#define SETTINGS_SYSTEM_PATH "/etc/qwen-code/settings.json"
#define SETTINGS_SYSTEM_DEFAULTS_NAME "system-defaults.json"

/* A settings path that is neither a regular file nor a directory (a FIFO, a device, a socket):
 * never opened for reading. */
#define SETTINGS_NOT_REGULAR (-ENODEV)

/* One settings file as Qwen reads it. Returns 0 with *ret the object, 0 with *ret NULL when
 * there is no file (none that stat() finds, as fs.existsSync()), -EBADMSG when Qwen could not
 * use it (not JSON after stripping the comments, or not an object), -EISDIR (a directory),
 * SETTINGS_NOT_REGULAR, -EFBIG (over 4 MiB), -ESTALE (changed or grew while read) or another
 * -errno when it exists but qgc does not read it, -ENOMEM. */
int settings_read_file(const char *path, struct json_object **ret);

/* A settings file of a project (<cwd>/.qwen/settings.json) as settings_read_file() reads it,
 * named by name in the directory dfd, never through a symlink: 0 with *ret (NULL: nothing of
 * that name), -ELOOP (a symlink: Qwen would follow it, qgc does not), -EPERM (qgc runs as root
 * and the file belongs to neither root nor owner; (uid_t)-1: no such test), -EBADMSG (no JSON
 * object, or nested deeper than qgc reads), settings_read_file()'s other errors. */
int settings_read_file_at(int dfd, const char *name, uid_t owner, struct json_object **ret);

/* resolveEnvVarsInString() (packages/cli/src/utils/envVarResolver.ts): each "$NAME" (NAME of
 * [A-Za-z0-9_]) and "${NAME}" (NAME any run of characters but '}') replaced by NAME's value
 * in env (a NULL-terminated "NAME=value" array, NULL: none), except the names Qwen never
 * substitutes (SESSION_ID, QWEN_CODE_SESSION_ID and its internal secrets such as
 * QWEN_SERVER_TOKEN, in any case), which stay literal. Qwen keeps a placeholder whose
 * variable is unset; qgc does not guess what the Qwen process had: when a variable is not in
 * env, returns -ENOKEY (and *ret_var, when given, is its name). 0 with *ret, or -ENOMEM. */
int settings_resolve_env(const char *s, char *const *env, char **ret, char **ret_var);

/* The value of key in the dotenv file path as dotenv.parse() gives it (the last entry wins; an
 * empty value is none), for preResolveHomeEnvOverrides(): 0 with *ret (NULL: no file that stat()
 * finds, no entry or an empty one), -EBADMSG when the text is not one qgc parses with
 * certainty (quotes over lines, escapes, a line it may join), or settings_read_file()'s errors
 * of the read. */
int settings_read_dotenv(const char *path, const char *key, char **ret);

/* settings_read_dotenv() of each of keys (NULL-terminated) in the file name of the directory
 * dfd, read once and as settings_read_file_at() opens it: 1 with ret[i] each key's value
 * (NULL: none) when the file is there, 0 (all NULL) when nothing has that name, or the
 * errors of both (a symlink: -ELOOP). */
int settings_read_dotenv_at(int dfd, const char *name, uid_t owner, const char *const *keys,
                            char **ret);
