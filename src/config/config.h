/* config.h: the retention policy file (libconfig) as plain values.
 *
 * Layout of the file (see man/qgc.conf.5 and etc/qgc.conf):
 *   defaults = { action = "archive"; max-age = "90d"; ... };   # policy keys
 *   tree = { max-size = "50G"; low-watermark = "40G"; keep-free = "10%"; count = "allocated"; };
 *   projects = ( { path = "/srv/scratch"; max-age = "7d"; }, ... );
 *   admin = { allow-user-files = true; user-dirs = ( "/srv/home" ); };  # system file only
 *
 * A limit written "off" is stored as 0 (orphan-min-age "off" as MSEC_INFINITY: never).
 * Every key, its type, bounds and default are in the key table (config-table.c); the files
 * behind this interface are listed in config-int.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conftext.h"
#include "util.h"

typedef enum PolicyAction {
        POLICY_ACTION_ARCHIVE,
        POLICY_ACTION_DELETE,
        _POLICY_ACTION_MAX,
        _POLICY_ACTION_INVALID = -22,
} PolicyAction;

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
        char *origin_allow_user_files, *origin_user_dirs, *origin_metrics_file;
        char *origin_user_timeout;
} Config;

/* ConfigErrors, the list of "file:line: message" errors, is conftext.h's (the reader under the
 * parse appends to it too). */

/* Fill *c with the built-in default (archive after 90d idle, delete nothing). */
int config_init_default(Config *c);
void config_done(Config *c);

/* Apply a file's (or buffer's) settings on top of *c. Every problem is appended to *errs as
 * "name:line: message"; returns -EINVAL when any error was found (then *c must not be used),
 * -ENOENT when the file does not exist, 0 on success. `name` labels the buffer in messages.
 * `@include` lines are expanded first through the bounded reader (conftext.h); the files read
 * are appended to c->files, each include with the "file:line" that pulled it in. */
int config_parse_string(Config *c, const char *text, const char *name, ConfigErrors *errs);
int config_load_file(Config *c, const char *path, ConfigErrors *errs);
/* The same for the system file, which must be a regular file (a FIFO is refused, not read). */
int config_load_system_file(Config *c, const char *path, ConfigErrors *errs);
/* The `admin` group is honoured only in the system file, which config_load_file() and
 * config_parse_string() take to be the first file applied on top of the built-in default (the
 * system file, or the single -c file). config_load_user_file() refuses `admin` whatever the
 * order, for the user's $XDG_CONFIG_HOME/qgc/qgc.conf, and anything but a regular file (in root
 * mode a user's FIFO must not hang the run). */
int config_load_user_file(Config *c, const char *path, ConfigErrors *errs);

/* The admin's drop-ins: every "*.conf" in dir (conf.d in the system file's directory),
 * applied after the system file in lexical (strcmp) order, each a regular file, with `admin`
 * allowed. Returns the number of files applied, 0 when dir does not exist, -EINVAL on errors
 * (in *errs), -ENOMEM. */
int config_load_dropins(Config *c, const char *dir, ConfigErrors *errs);

/* Deep copy of src into *ret (which need not be initialized). 0 or -ENOMEM. */
int config_copy(const Config *src, Config *ret);

/* Root mode (--all-users): *merged = system policy + the user's own file, where the user may
 * only tighten (keep less, never more). A looser user value is clamped to the system's and a
 * "file:line: warning: ..." is appended to *errs. When system->allow_user_files is false the
 * user file is not read. Returns 1 when the user file was applied, 0 when it was ignored or
 * does not exist (*merged = copy of system), -EINVAL on errors (*merged untouched), -ENOMEM.
 * See "USER FILES IN ROOT MODE" in qgc.conf(5). */
int config_merge_user(Config *merged, const Config *system, const char *user_file,
                      ConfigErrors *errs);

/* The files qgc reads when -c is not given: the system file, then the user's
 * ($XDG_CONFIG_HOME/qgc/qgc.conf or ~/.config/qgc/qgc.conf). */
#ifdef SYSCONFDIR
#define CONFIG_SYSTEM_FILE SYSCONFDIR "/qgc/qgc.conf" /* /etc/qgc/qgc.conf with --sysconfdir=/etc */
#else
#define CONFIG_SYSTEM_FILE "/etc/qgc/qgc.conf"
#endif

/* Effective policy for a project path (cwd; may be NULL for unverified sessions). Borrowed. */
const Policy *config_policy_for(const Config *c, const char *project_path);
/* Same, and which override matched (NULL for defaults). */
const ProjectOverride *config_override_for(const Config *c, const char *project_path);

/* check-config --explain: print the effective policy and each value's origin. */
int config_explain(const Config *c, FILE *f);

/* The words of the action key and the names of the policy keys (config-table.c). */
const char *policy_action_to_string(PolicyAction a);
PolicyAction policy_action_from_string(const char *s);
const char *policy_key_to_string(PolicyKey k);
