/* config-int.h: what the config files share. Not an interface: only src/config*.c and the
 * config tests include it.
 *
 *   config-table.c    the key table (every key of every group) and the policy vocabulary
 *   config.c          the Config value: defaults, copy, free, errors, which block a project uses
 *   config-value.c    one setting → one key's value, with every value error
 *   config-parse.c    a file → groups → keys, contradictions, layering, includes, conf.d
 *   config-merge.c    root mode: a user's file may only tighten the system policy
 *   config-explain.c  check-config --explain
 */
#pragma once

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "util.h"

#define CONFIG_BUILTIN "built-in default"
#define CONFIG_DURATION_MAX (INT64_C(36500) * MSEC_PER_DAY) /* 100 years */
#define CONFIG_COUNT_MAX UINT64_C(1000000000)

/* Which group of the file a key belongs to. */
typedef enum ConfigScope {
        CONFIG_SCOPE_POLICY, /* defaults = { ... } and every project block; values in Policy */
        CONFIG_SCOPE_TREE,   /* tree = { ... }; values in Config.tree */
        CONFIG_SCOPE_ADMIN,  /* admin = { ... }: the system file, its conf.d and -c only */
        _CONFIG_SCOPE_MAX,
} ConfigScope;

typedef enum ConfigValueType {
        CONFIG_VALUE_CHOICE,   /* one of .words; an int (a bool for a field of that size) */
        CONFIG_VALUE_DURATION, /* msec_t, from "90d" */
        CONFIG_VALUE_COUNT,    /* uint64_t, from an integer */
        CONFIG_VALUE_SIZE,     /* uint64_t bytes, from "5G"; "off" is 0 */
        CONFIG_VALUE_SIZE_OR_PERCENT, /* SizeSpec: "20G" or a whole "10%" below .max percent */
        CONFIG_VALUE_BOOL,     /* bool */
        CONFIG_VALUE_PERCENT,  /* double in (0, 100], from 50, 12.5 or "50%" */
        CONFIG_VALUE_PATH,     /* char *, an absolute path; NULL is "none" */
        CONFIG_VALUE_PATH_LIST, /* char ** of absolute paths, its count at .offset_n */
} ConfigValueType;

/* What "off" means for a key. */
typedef enum ConfigOff {
        CONFIG_OFF_NO,       /* "off" is refused */
        CONFIG_OFF_ZERO,     /* "off" is stored as 0; a literal zero is refused as ambiguous */
        CONFIG_OFF_INFINITY, /* "off" is stored as MSEC_INFINITY (never) */
} ConfigOff;

/* How config_merge_user() compares a user's value with the system's. */
typedef enum ConfigTighten {
        CONFIG_TIGHTEN_LIMIT,     /* smaller is tighter; 0 (off) is the loosest */
        CONFIG_TIGHTEN_LESS,      /* smaller is tighter (0 is a value) */
        CONFIG_TIGHTEN_BOOL,      /* false (protection off) is tighter */
        CONFIG_TIGHTEN_CHOICE,    /* a later word is tighter (delete > archive, allocated >
                                   * apparent) */
        CONFIG_TIGHTEN_WATERMARK, /* compared as the effective value (0 = the tree max-size);
                                   * lowered to the system's without a warning */
        CONFIG_TIGHTEN_FLOOR,     /* more is tighter; a size and a percentage do not compare,
                                   * and then the system's wins */
        CONFIG_TIGHTEN_SYSTEM,    /* the system's value, always (a user file cannot set it) */
} ConfigTighten;

/* The keys of the tree and admin groups follow the policy keys (whose index is their PolicyKey). */
typedef enum ConfigKey {
        CONFIG_KEY_TREE_MAX_SIZE = _POLICY_KEY_MAX,
        CONFIG_KEY_TREE_LOW_WATERMARK,
        CONFIG_KEY_TREE_KEEP_FREE,
        CONFIG_KEY_TREE_COUNT,
        CONFIG_KEY_ALLOW_USER_FILES,
        CONFIG_KEY_USER_DIRS,
        CONFIG_KEY_METRICS_FILE,
        CONFIG_KEY_USER_TIMEOUT,
        _CONFIG_KEY_MAX,
} ConfigKey;

typedef struct ConfigKeyInfo {
        const char *name;
        ConfigScope scope;
        ConfigValueType type;
        size_t offset;        /* of the value: in Policy (policy keys) or in Config */
        size_t size;          /* of the value */
        size_t offset_n;      /* CONFIG_VALUE_PATH_LIST: of its size_t count in Config */
        size_t origin_offset; /* tree and admin keys: of its char * origin in Config */
        ConfigOff off;
        uint64_t min, max;    /* durations (msec), counts; SIZE_OR_PERCENT: percent below max */
        ConfigTighten tighten;
        const char *const *words; /* CONFIG_VALUE_CHOICE, n_words of them */
        size_t n_words;
        uint64_t def;         /* the built-in default: msec, count, bytes, bool, word index or
                               * percent; 0 for "off" and "none" */
        const char *example;  /* paths: an example for messages */
        const char *arg;      /* qgc.conf(5)'s name for the value, when not the type's
                               * ("duration", "count", ...) */
        const char *help;     /* one line */
} ConfigKeyInfo;

/* Every key of every group: type, scope, bounds, default, how it tightens, help. */
extern const ConfigKeyInfo config_keys[_CONFIG_KEY_MAX];

typedef struct ConfigScopeInfo {
        const char *group; /* its name at the top level of the file */
        const char *explain; /* its heading in --explain */
        bool system_only;  /* refused outside the system file, its conf.d and -c */
} ConfigScopeInfo;

extern const ConfigScopeInfo config_scopes[_CONFIG_SCOPE_MAX];

/* The top-level names of the file, for did-you-mean. */
extern const char *const config_top_names[4];

/* The key named `name` in `scope`, or NULL. */
const ConfigKeyInfo *config_key_find(ConfigScope scope, const char *name);
/* Its index in config_keys[]. */
static inline size_t config_key_index(const ConfigKeyInfo *k) {
        return (size_t)(k - config_keys);
}
/* The names of a scope's keys in table order, plus `extra` (or NULL) at the end. Returns the
 * count; names must hold _CONFIG_KEY_MAX + 1. */
size_t config_key_names(ConfigScope scope, const char *extra, const char **names);

/* The value of key k: base is a Policy for policy keys, the Config for the others. */
void *config_key_ptr(const ConfigKeyInfo *k, void *base);
const void *config_key_ptr_const(const ConfigKeyInfo *k, const void *base);
/* A CONFIG_VALUE_PATH_LIST's count, in the Config base. */
size_t *config_key_count(const ConfigKeyInfo *k, void *base);
/* Where key k's origin is kept: in o for policy keys, in c for the others. */
char **config_key_origin(const ConfigKeyInfo *k, Config *c, PolicyOrigin *o);
/* A CHOICE value's word index; durations, counts, sizes and bools as a number. */
uint64_t config_key_number(const ConfigKeyInfo *k, const void *base);
void config_key_set_choice(const ConfigKeyInfo *k, void *base, int v);
/* Copy a policy key's value (scalar) from src to dst. */
void config_key_copy(const ConfigKeyInfo *k, Policy *dst, const Policy *src);
/* Store key k's built-in default (scalars; paths stay none). */
void config_key_set_default(const ConfigKeyInfo *k, void *base);
/* The value as the file spells it ("90d", "off", "5G", "true", "none", "/a,/b"); NULL on ENOMEM. */
char *config_key_format(const ConfigKeyInfo *k, const void *base);
/* The same into a buffer, for the scalar types. */
char *config_key_format_buf(const ConfigKeyInfo *k, const void *base, char *buf, size_t n);
/* qgc.conf(5)'s synopsis of the key's value, in mdoc ("Ar duration | Qo off Qc"). */
char *config_key_synopsis(const ConfigKeyInfo *k);

/* Append "loc: message" to errs and return -EINVAL (or -ENOMEM). */
int config_error(ConfigErrors *e, const char *loc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* config.c */
int config_set_str(char **p, const char *s);
void config_strv_free(char **v, size_t n);
void config_origin_done(PolicyOrigin *o);
bool config_path_equal(const char *a, const char *b);
bool config_pattern_is_glob(const char *p);
size_t config_pattern_literals(const char *p);
size_t config_pattern_prefix(const char *p);
/* Copy the defaults into every override for the keys the override does not set. */
int config_inherit_defaults(Config *c);
/* Is origin ("file:line") in file `name`? In one of n files? */
bool config_origin_in(const char *origin, const char *name);
bool config_origin_in_files(const char *origin, char *const *files, size_t n);

/* config-value.c: read setting s as key k into base (see config_key_ptr). Every problem is
 * appended to errs as "loc: ..." and returns -EINVAL; -ENOMEM. */
int config_value_read(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                      void *base, ConfigErrors *errs);
/* "a string (\"x\")", "an integer (12)", "a list": for messages. NULL on ENOMEM. */
char *config_describe(const config_setting_t *s);
/* Append "loc: <key>: expected <what>, got <s described>". */
int config_error_expected(ConfigErrors *errs, const char *loc, const char *key, const char *what,
                          const config_setting_t *s);
/* "unknown key 'x' in <where>" with a did-you-mean from names, and a hint for a policy or tree
 * key in the wrong group. */
int config_unknown(ConfigErrors *errs, const char *loc, const char *name, const char *where,
                   const char *const *names, size_t n);
