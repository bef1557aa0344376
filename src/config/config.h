/* config.h: the retention policy file (libconfig) as plain values.
 *
 * Layout of the file (see man/qgc.conf.5 and etc/qgc.conf):
 *   defaults = { action = "archive"; max-age = "90d"; ... };   # policy keys
 *   tree = { max-size = "50G"; low-watermark = "40G"; keep-free = "10%"; count = "allocated"; };
 *   projects = ( { path = "/srv/scratch"; max-age = "7d"; }, ... );
 *   admin = { allow-user-files = true; user-dirs = ( "/srv/home" ); };  # system file only
 *
 * A limit written "off" is stored as 0 (orphan-min-age "off" as MSEC_INFINITY: never).
 * Every key, its type, bounds and default are in the key table (config.c). Behind this header:
 *   config.c          the key table, the Config value (defaults, copy, free), the error list,
 *                     and which project block a project path uses
 *   config-load.c     a file (with its @includes) -> Config: values, contradictions, layering
 *   config-merge.c    root mode: a user's file may only tighten the system policy
 *   config-explain.c  check-config --explain
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

typedef enum PolicyAction {
        POLICY_ACTION_ARCHIVE,
        POLICY_ACTION_DELETE,
        _POLICY_ACTION_MAX,
        _POLICY_ACTION_INVALID = -22,
} PolicyAction;

/* admin.stores: which coding agents' stores qgc collects. Qwen's alone by default: an upgrade
 * does not start deleting another agent's data; the administrator opts in. */
typedef enum ConfigStores {
        CONFIG_STORES_QWEN,
        CONFIG_STORES_DEEPCODE,
        CONFIG_STORES_ALL,
        _CONFIG_STORES_MAX,
} ConfigStores;

/* Every per-project key, one bit each (set masks, origins). */
typedef enum PolicyKey {
        POLICY_KEY_ACTION,
        POLICY_KEY_MAX_AGE,
        POLICY_KEY_MAX_SESSIONS,
        POLICY_KEY_MAX_SIZE,
        POLICY_KEY_MIN_AGE,
        POLICY_KEY_MIN_IDLE,
        POLICY_KEY_KEEP_LATEST,
        POLICY_KEY_KEEP_PINNED,
        POLICY_KEY_KEEP_TITLED,
        POLICY_KEY_KEEP_SCHEDULED,
        POLICY_KEY_KEEP_WORKTREE,
        POLICY_KEY_ARCHIVE_MAX_AGE,
        POLICY_KEY_ARCHIVE_MAX_SIZE,
        POLICY_KEY_MAX_DELETIONS,
        POLICY_KEY_MAX_DELETIONS_PERCENT,
        POLICY_KEY_ORPHAN_MIN_AGE,
        POLICY_KEY_PROTECT,
        POLICY_KEY_TOOL_RESULTS_MAX_AGE,
        POLICY_KEY_STALE_TMP_MIN_AGE,
        POLICY_KEY_DEBUG_PLANS_MIN_AGE,
        POLICY_KEY_LEGACY_MAX_AGE,
        POLICY_KEY_STALE_PROJECT_MIN_AGE,
        POLICY_KEY_COMPRESS_AFTER,
        POLICY_KEY_COMPRESS_LEVEL,
        POLICY_KEY_RESTORE_GRACE,
        POLICY_KEY_COMPACT_MIN_IDLE,
        _POLICY_KEY_MAX,
        _POLICY_KEY_INVALID = -22,
} PolicyKey;

/* The effective rules for one project. 0 means "off" for limits. */
typedef struct Policy {
        PolicyAction action;        /* what max-age/max-sessions/max-size/tree caps do */
        msec_t max_age;             /* idle longer than this goes; 0 = off */
        uint64_t max_sessions;      /* newest N active sessions stay; 0 = off */
        uint64_t max_size;          /* project's active sessions above this shrink; 0 = off */
        msec_t min_age;             /* sessions younger than this are never touched */
        msec_t min_idle;            /* a write newer than this means "in use" */
        uint64_t keep_latest;       /* newest N sessions of each project always stay */
        bool keep_pinned;           /* pinned or grouped in session-organization.v1.json */
        bool keep_titled;           /* title set by a person */
        bool keep_scheduled;        /* bound to a scheduled task */
        bool keep_worktree;         /* has a live git worktree */
        msec_t archive_max_age;     /* archived sessions idle longer are deleted; 0 = never */
        uint64_t archive_max_size;  /* archived sessions of a project above this: oldest deleted */
        uint64_t max_deletions;     /* at most N deletions per run (all projects); 0 = no limit */
        double max_deletions_percent; /* at most P% of a project's sessions deleted per run; 0 = off */
        msec_t orphan_min_age;      /* orphans (file-history, subagents, empty projects) older go;
                                     * MSEC_INFINITY = never */
        bool protect;               /* no rule touches the project: not its own rules, not the
                                     * tree caps, not the reclaim of its orphans */
        /* tree hygiene (hygiene.h), tree-wide like orphan-min-age; MSEC_INFINITY = never */
        msec_t tool_results_max_age; /* tmp/<hash>/tool-results/ files and *.output older go */
        msec_t stale_tmp_min_age;    /* tmp/<hash>/ of no session, nothing newer inside */
        msec_t debug_plans_min_age;  /* debug/<id>.txt, plans/<id>.md with no transcript */
        msec_t legacy_max_age;       /* Qwen <= 0.1 chats/session-*.json and checkpoints */
        msec_t stale_project_min_age; /* projects/<p>/ of vanished temporary cwds: marked that
                                       * long ago and nothing newer inside */
        msec_t compress_after;       /* archived sessions idle longer are compressed (cold.h);
                                      * 0 = never */
        uint64_t compress_level;     /* their zstd level, 1..19 */
        msec_t restore_grace;        /* a session restored (qgc restore) less long ago stays */
        msec_t compact_min_idle;     /* a Deep Code checkpoint repository not written for this
                                      * long is compacted (dc-git.h); MSEC_INFINITY = never */
} Policy;

/* Where a value came from, for check-config --explain: "built-in default" or "file:line". */
typedef struct PolicyOrigin {
        char *where[_POLICY_KEY_MAX];
} PolicyOrigin;

typedef struct ProjectOverride {
        char *pattern;       /* project path (cwd), exact or fnmatch(3) glob */
        bool is_glob;
        unsigned set_mask;   /* 1 << PolicyKey for each key set in this block */
        Policy policy;       /* defaults with the block's keys applied */
        PolicyOrigin origin;
        char *file;          /* where the block is */
        int line;
} ProjectOverride;

typedef struct TreeLimits {
        uint64_t max_size;       /* all sessions of a tree; 0 = off */
        uint64_t low_watermark;  /* shrink to this once max-size is exceeded; 0 = max-size */
        SizeSpec keep_free;      /* free-space floor on the tree's filesystem */
        bool count_allocated;    /* size caps count st_blocks*512 (true) or st_size (false) */
        char *origin_max_size, *origin_low_watermark, *origin_keep_free, *origin_count;
} TreeLimits;

typedef struct Config {
        Policy defaults;
        PolicyOrigin defaults_origin;
        ProjectOverride *projects;
        size_t n_projects;
        TreeLimits tree;
        /* admin group, honoured only from the system file */
        bool allow_user_files;   /* users' own qgc.conf may tighten the system policy */
        char **user_dirs;        /* extra locations holding users' homes/trees (--all-users) */
        size_t n_user_dirs;
        char **files;            /* files loaded, in order, each followed by its includes */
        char **files_from;       /* per file: "file:line" of its @include; NULL for a main file */
        size_t n_files;
        char *metrics_file;      /* admin: node_exporter textfile of each real run, or NULL */
        msec_t user_timeout;     /* admin: --all-users: one user's run is killed after this;
                                  * 0 = off */
        int stores;              /* admin: ConfigStores, the stores a user's trees are found in
                                  * (per user and --all-users; --root takes what it finds) */
        char *origin_allow_user_files, *origin_user_dirs, *origin_metrics_file;
        char *origin_user_timeout, *origin_stores;
} Config;

#define CONFIG_BUILTIN "built-in default"

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
        CONFIG_KEY_STORES,
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
                               * ("duration", "count", ...): the man page's check */
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

/* The key named `name` in `scope`, or NULL. */
const ConfigKeyInfo *config_key_find(ConfigScope scope, const char *name);
/* Its index in config_keys[]. */
static inline size_t config_key_index(const ConfigKeyInfo *k) {
        return (size_t)(k - config_keys);
}

/* The value of key k: base is a Policy for policy keys, the Config for the others. */
static inline void *config_key_ptr(const ConfigKeyInfo *k, void *base) {
        return (uint8_t *)base + k->offset;
}
static inline const void *config_key_ptr_const(const ConfigKeyInfo *k, const void *base) {
        return (const uint8_t *)base + k->offset;
}
/* A CONFIG_VALUE_PATH_LIST's count, in the Config base. */
static inline size_t *config_key_count(const ConfigKeyInfo *k, void *base) {
        return (size_t *)(void *)((uint8_t *)base + k->offset_n);
}
/* Where key k's origin is kept: in o for policy keys, in c for the others. */
char **config_key_origin(const ConfigKeyInfo *k, Config *c, PolicyOrigin *o);
/* A CHOICE value's word index; durations, counts, sizes and bools as a number. */
uint64_t config_key_number(const ConfigKeyInfo *k, const void *base);
void config_key_set_choice(const ConfigKeyInfo *k, void *base, int v);
/* Copy a policy key's value (scalar) from src to dst. */
void config_key_copy(const ConfigKeyInfo *k, Policy *dst, const Policy *src);
/* The value as the file spells it ("90d", "off", "5G", "true", "none", "/a,/b"); NULL on ENOMEM. */
char *config_key_format(const ConfigKeyInfo *k, const void *base);
/* The same into a buffer, for the scalar types. */
char *config_key_format_buf(const ConfigKeyInfo *k, const void *base, char *buf, size_t n);

/* A list of "file:line: message" errors. */
typedef struct ConfigErrors {
        char **msgs;
        size_t n;
        size_t alloc;
} ConfigErrors;

void config_errors_done(ConfigErrors *e);
/* Append "loc: message" (just "message" when loc is NULL) and return -EINVAL, or -ENOMEM. */
int config_error(ConfigErrors *e, const char *loc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Fill *c with the built-in default (archive after 90d idle, no session deleted; orphans after
 * orphan-min-age 30d, Deep Code compaction after compact-min-idle 1d: the key table). */
int config_init_default(Config *c);
void config_done(Config *c);
/* Deep copy of src into *ret (which need not be initialized). 0 or -ENOMEM. */
int config_copy(const Config *src, Config *ret);

/* Effective policy for a project path (cwd; may be NULL for unverified sessions). Borrowed. */
const Policy *config_policy_for(const Config *c, const char *project_path);
/* Same, and which override matched (NULL for defaults). */
const ProjectOverride *config_override_for(const Config *c, const char *project_path);

int config_set_str(char **p, const char *s);
void config_strv_free(char **v, size_t n);
void config_origin_done(PolicyOrigin *o);
bool config_path_equal(const char *a, const char *b);
/* A glob's characters that match only themselves (its specificity). */
size_t config_pattern_literals(const char *p);
/* Copy the defaults into every override for the keys the override does not set. */
int config_inherit_defaults(Config *c);
/* Is origin ("file:line") in one of n files? */
bool config_origin_in_files(const char *origin, char *const *files, size_t n);

/* config-load.c: apply a file's (or buffer's) settings on top of *c. Every problem is appended
 * to *errs as "name:line: message"; returns -EINVAL when any error was found (then *c must not
 * be used), -ENOENT when the file does not exist, 0 on success. `name` labels the buffer in
 * messages. Includes (see "INCLUDES" in qgc.conf(5)) are expanded by qgc, each a regular file;
 * the files read are appended to c->files, each include with the "file:line" that pulled it in.
 * The `admin` group is honoured only in the first file applied on top of the built-in default
 * (the system file, or the single -c file). */
int config_load_file(Config *c, const char *path, ConfigErrors *errs);
/* The same for the system file, which must be a regular file (a FIFO is refused, not read). */
int config_load_system_file(Config *c, const char *path, ConfigErrors *errs);
/* The user's $XDG_CONFIG_HOME/qgc/qgc.conf: `admin` is refused whatever the order, and anything
 * but a regular file (in root mode a user's FIFO must not hang the run). */
int config_load_user_file(Config *c, const char *path, ConfigErrors *errs);
/* The admin's drop-ins: every "*.conf" in dir, applied in lexical (strcmp) order, each a regular
 * file, with `admin` allowed. Returns the number of files applied, 0 when dir does not exist,
 * -EINVAL on errors (in *errs), -ENOMEM. */
int config_load_dropins(Config *c, const char *dir, ConfigErrors *errs);

/* config-merge.c: root mode (--all-users): *merged = system policy + the user's own file, where
 * the user may only tighten (keep less, never more). A looser user value is clamped to the
 * system's and a "file:line: warning: ..." is appended to *errs. When system->allow_user_files
 * is false the user file is not read. When system holds no file (no admin policy), the user's
 * file layers freely on it, as in a user's own run. Returns 1 when the user file was applied, 0 when it was
 * ignored or does not exist (*merged = copy of system), -EINVAL on errors (*merged untouched),
 * -ENOMEM. See "USER FILES IN ROOT MODE" in qgc.conf(5). */
int config_merge_user(Config *merged, const Config *system, const char *user_file,
                      ConfigErrors *errs);

/* config-explain.c: check-config --explain: the effective policy and each value's origin. */
int config_explain(const Config *c, FILE *f);

/* The files qgc reads when -c is not given: the system file, then the user's
 * ($XDG_CONFIG_HOME/qgc/qgc.conf or ~/.config/qgc/qgc.conf). */
#ifdef SYSCONFDIR
#define CONFIG_SYSTEM_FILE SYSCONFDIR "/qgc/qgc.conf" /* /etc/qgc/qgc.conf with --sysconfdir=/etc */
#else
#define CONFIG_SYSTEM_FILE "/etc/qgc/qgc.conf"
#endif
