/* config-table.c: the key table of qgc.conf: every key of the defaults/project, tree and admin
 * groups with its type, scope, bounds, built-in default, how a user's file may tighten it, and
 * a line of help (tmux's options-table.c is the model). Parsing, the defaults, --explain, the
 * root-mode clamp and the check of qgc.conf(5)'s key list all read it. Also the policy file's
 * vocabulary: the words of `action` (policy_action_*) and of the tree's `count`, and the
 * typed access to a key's value. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-int.h"
#include "macro.h"
#include "util.h"

static const char *const policy_action_table[_POLICY_ACTION_MAX] = {
        [POLICY_ACTION_ARCHIVE] = "archive",
        [POLICY_ACTION_DELETE] = "delete",
};
static const char *const config_count_words[] = { "apparent", "allocated" };

_Static_assert(_POLICY_KEY_MAX <= 32, "a project block's set_mask has one bit per policy key");

const char *const config_top_names[4] = { "defaults", "tree", "projects", "admin" };

const ConfigScopeInfo config_scopes[_CONFIG_SCOPE_MAX] = {
        [CONFIG_SCOPE_POLICY] = { .group = "defaults", .explain = "defaults:" },
        [CONFIG_SCOPE_TREE] = { .group = "tree",
                                .explain = "tree:  # disk caps always delete (action does not "
                                           "apply)" },
        [CONFIG_SCOPE_ADMIN] = { .group = "admin", .explain = "admin:", .system_only = true },
};

#define FIELD_SIZE(type, field) sizeof(((type *)NULL)->field)

/* A policy key: name, type, Policy field, meaning of "off", bounds, tightening, default, help. */
#define KEY(k, n, t, field, o, lo, hi, tt, d, h, ...)                                              \
        [k] = { .name = n, .scope = CONFIG_SCOPE_POLICY, .type = t,                                \
                .offset = offsetof(Policy, field), .size = FIELD_SIZE(Policy, field), .off = o,    \
                .min = lo, .max = hi, .tighten = tt, .def = (uint64_t)(d), .help = h, __VA_ARGS__ }
/* A tree or admin key: the same with its Config field and origin. */
#define CKEY(k, s, n, t, field, origin, o, lo, hi, tt, d, h, ...)                                 \
        [k] = { .name = n, .scope = s, .type = t, .offset = offsetof(Config, field),               \
                .size = FIELD_SIZE(Config, field), .origin_offset = offsetof(Config, origin),      \
                .off = o, .min = lo, .max = hi, .tighten = tt, .def = (uint64_t)(d), .help = h,    \
                __VA_ARGS__ }
#define WORDS(w) .words = w, .n_words = ELEMENTSOF(w)

const ConfigKeyInfo config_keys[_CONFIG_KEY_MAX] = {
        /* policy keys: defaults = { ... } and project blocks */
        KEY(POLICY_KEY_ACTION, "action", CONFIG_VALUE_CHOICE, action, CONFIG_OFF_NO, 0, 0,
            CONFIG_TIGHTEN_CHOICE, POLICY_ACTION_ARCHIVE,
            "what max-age, max-sessions and max-size do to a session: archive or delete",
            WORDS(policy_action_table)),
        KEY(POLICY_KEY_MAX_AGE, "max-age", CONFIG_VALUE_DURATION, max_age, CONFIG_OFF_ZERO,
            MSEC_PER_SEC, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LIMIT, 90 * MSEC_PER_DAY,
            "a session idle longer goes"),
        KEY(POLICY_KEY_MAX_SESSIONS, "max-sessions", CONFIG_VALUE_COUNT, max_sessions,
            CONFIG_OFF_ZERO, 1, CONFIG_COUNT_MAX, CONFIG_TIGHTEN_LIMIT, 0,
            "the newest N active sessions of a project stay"),
        KEY(POLICY_KEY_MAX_SIZE, "max-size", CONFIG_VALUE_SIZE, max_size, CONFIG_OFF_ZERO, 1,
            UINT64_MAX, CONFIG_TIGHTEN_LIMIT, 0,
            "a project's active sessions above this shrink, oldest first"),
        KEY(POLICY_KEY_MIN_AGE, "min-age", CONFIG_VALUE_DURATION, min_age, CONFIG_OFF_NO, 0,
            CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS, 3 * MSEC_PER_DAY,
            "a session younger than this is never touched"),
        KEY(POLICY_KEY_MIN_IDLE, "min-idle", CONFIG_VALUE_DURATION, min_idle, CONFIG_OFF_NO,
            MSEC_PER_MIN, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS, 24 * MSEC_PER_HOUR,
            "a write newer than this means the session is in use"),
        KEY(POLICY_KEY_KEEP_LATEST, "keep-latest", CONFIG_VALUE_COUNT, keep_latest, CONFIG_OFF_NO,
            0, CONFIG_COUNT_MAX, CONFIG_TIGHTEN_LESS, 1,
            "the newest N sessions of each project always stay"),
        KEY(POLICY_KEY_KEEP_PINNED, "keep-pinned", CONFIG_VALUE_BOOL, keep_pinned, CONFIG_OFF_NO,
            0, 1, CONFIG_TIGHTEN_BOOL, true, "pinned or grouped sessions stay"),
        KEY(POLICY_KEY_KEEP_TITLED, "keep-titled", CONFIG_VALUE_BOOL, keep_titled, CONFIG_OFF_NO,
            0, 1, CONFIG_TIGHTEN_BOOL, true, "sessions a person gave a title stay"),
        KEY(POLICY_KEY_KEEP_SCHEDULED, "keep-scheduled", CONFIG_VALUE_BOOL, keep_scheduled,
            CONFIG_OFF_NO, 0, 1, CONFIG_TIGHTEN_BOOL, true,
            "sessions bound to a scheduled task stay"),
        KEY(POLICY_KEY_KEEP_WORKTREE, "keep-worktree", CONFIG_VALUE_BOOL, keep_worktree,
            CONFIG_OFF_NO, 0, 1, CONFIG_TIGHTEN_BOOL, true,
            "sessions with a live git worktree stay"),
        KEY(POLICY_KEY_ARCHIVE_MAX_AGE, "archive-max-age", CONFIG_VALUE_DURATION, archive_max_age,
            CONFIG_OFF_ZERO, MSEC_PER_SEC, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LIMIT, 0,
            "an archived session idle longer is deleted"),
        KEY(POLICY_KEY_ARCHIVE_MAX_SIZE, "archive-max-size", CONFIG_VALUE_SIZE, archive_max_size,
            CONFIG_OFF_ZERO, 1, UINT64_MAX, CONFIG_TIGHTEN_LIMIT, 0,
            "a project's archived sessions above this: the oldest are deleted"),
        KEY(POLICY_KEY_MAX_DELETIONS, "max-deletions", CONFIG_VALUE_COUNT, max_deletions,
            CONFIG_OFF_ZERO, 1, CONFIG_COUNT_MAX, CONFIG_TIGHTEN_LIMIT, 100,
            "at most N deletions per run, all projects together"),
        KEY(POLICY_KEY_MAX_DELETIONS_PERCENT, "max-deletions-percent", CONFIG_VALUE_PERCENT,
            max_deletions_percent, CONFIG_OFF_ZERO, 0, 100, CONFIG_TIGHTEN_LIMIT, 50,
            "at most this share of a project's sessions is deleted per run"),
        KEY(POLICY_KEY_ORPHAN_MIN_AGE, "orphan-min-age", CONFIG_VALUE_DURATION, orphan_min_age,
            CONFIG_OFF_INFINITY, MSEC_PER_HOUR, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS,
            30 * MSEC_PER_DAY, "orphans (file-history, subagents, empty projects) older go"),
        KEY(POLICY_KEY_PROTECT, "protect", CONFIG_VALUE_BOOL, protect, CONFIG_OFF_NO, 0, 1,
            CONFIG_TIGHTEN_BOOL, false, "no rule touches the project, nor its orphans"),
        KEY(POLICY_KEY_TOOL_RESULTS_MAX_AGE, "tool-results-max-age", CONFIG_VALUE_DURATION,
            tool_results_max_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS, MSEC_INFINITY,
            "tmp/<hash>/tool-results/ files and *.output older go"),
        KEY(POLICY_KEY_STALE_TMP_MIN_AGE, "stale-tmp-min-age", CONFIG_VALUE_DURATION,
            stale_tmp_min_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS, MSEC_INFINITY,
            "tmp/<hash>/ of no session with nothing newer inside goes"),
        KEY(POLICY_KEY_DEBUG_PLANS_MIN_AGE, "debug-plans-min-age", CONFIG_VALUE_DURATION,
            debug_plans_min_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS, MSEC_INFINITY,
            "debug/<id>.txt and plans/<id>.md with no transcript older go"),
        KEY(POLICY_KEY_LEGACY_MAX_AGE, "legacy-max-age", CONFIG_VALUE_DURATION, legacy_max_age,
            CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS,
            MSEC_INFINITY, "Qwen 0.1's chats/session-*.json and checkpoints older go"),
        KEY(POLICY_KEY_STALE_PROJECT_MIN_AGE, "stale-project-min-age", CONFIG_VALUE_DURATION,
            stale_project_min_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS, MSEC_INFINITY,
            "projects/<dir>/ of vanished temporary cwds, marked that long ago, goes"),
        KEY(POLICY_KEY_COMPRESS_AFTER, "compress-after", CONFIG_VALUE_DURATION, compress_after,
            CONFIG_OFF_ZERO, MSEC_PER_HOUR, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LIMIT, 0,
            "an archived session idle longer is compressed into the cold tier"),
        KEY(POLICY_KEY_COMPRESS_LEVEL, "compress-level", CONFIG_VALUE_COUNT, compress_level,
            CONFIG_OFF_NO, 1, 19, CONFIG_TIGHTEN_LESS, 3, "the zstd level of compress-after",
            .arg = "level"),
        KEY(POLICY_KEY_RESTORE_GRACE, "restore-grace", CONFIG_VALUE_DURATION, restore_grace,
            CONFIG_OFF_NO, 0, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS, 30 * MSEC_PER_DAY,
            "a session restored less long ago is never archived, compressed or deleted"),

        /* tree = { ... } */
        CKEY(CONFIG_KEY_TREE_MAX_SIZE, CONFIG_SCOPE_TREE, "max-size", CONFIG_VALUE_SIZE,
             tree.max_size, tree.origin_max_size, CONFIG_OFF_ZERO, 1, UINT64_MAX,
             CONFIG_TIGHTEN_LIMIT, 0, "all sessions of a tree above this: the oldest are deleted"),
        CKEY(CONFIG_KEY_TREE_LOW_WATERMARK, CONFIG_SCOPE_TREE, "low-watermark", CONFIG_VALUE_SIZE,
             tree.low_watermark, tree.origin_low_watermark, CONFIG_OFF_ZERO, 1, UINT64_MAX,
             CONFIG_TIGHTEN_WATERMARK, 0, "what max-size shrinks the tree to; off: max-size"),
        CKEY(CONFIG_KEY_TREE_KEEP_FREE, CONFIG_SCOPE_TREE, "keep-free",
             CONFIG_VALUE_SIZE_OR_PERCENT, tree.keep_free, tree.origin_keep_free, CONFIG_OFF_ZERO,
             0, 100, CONFIG_TIGHTEN_FLOOR, 0,
             "free space kept on the tree's file system, a size or a percentage"),
        CKEY(CONFIG_KEY_TREE_COUNT, CONFIG_SCOPE_TREE, "count", CONFIG_VALUE_CHOICE,
             tree.count_allocated, tree.origin_count, CONFIG_OFF_NO, 0, 0, CONFIG_TIGHTEN_CHOICE,
             1, "size caps count allocated blocks or apparent sizes", WORDS(config_count_words)),

        /* admin = { ... } */
        CKEY(CONFIG_KEY_ALLOW_USER_FILES, CONFIG_SCOPE_ADMIN, "allow-user-files",
             CONFIG_VALUE_BOOL, allow_user_files, origin_allow_user_files, CONFIG_OFF_NO, 0, 1,
             CONFIG_TIGHTEN_SYSTEM, true,
             "users' own qgc.conf apply in root mode (tightening only)"),
        CKEY(CONFIG_KEY_USER_DIRS, CONFIG_SCOPE_ADMIN, "user-dirs", CONFIG_VALUE_PATH_LIST,
             user_dirs, origin_user_dirs, CONFIG_OFF_NO, 0, 0, CONFIG_TIGHTEN_SYSTEM, 0,
             "directories holding homes the user database does not list",
             .offset_n = offsetof(Config, n_user_dirs), .example = "/srv/home"),
        CKEY(CONFIG_KEY_METRICS_FILE, CONFIG_SCOPE_ADMIN, "metrics-file", CONFIG_VALUE_PATH,
             metrics_file, origin_metrics_file, CONFIG_OFF_NO, 0, 0, CONFIG_TIGHTEN_SYSTEM, 0,
             "node_exporter textfile written by every real run as root",
             .example = "/var/lib/prometheus/node-exporter/qgc.prom"),
        CKEY(CONFIG_KEY_USER_TIMEOUT, CONFIG_SCOPE_ADMIN, "user-timeout", CONFIG_VALUE_DURATION,
             user_timeout, origin_user_timeout, CONFIG_OFF_ZERO, MSEC_PER_SEC,
             CONFIG_DURATION_MAX, CONFIG_TIGHTEN_SYSTEM, 30 * MSEC_PER_MIN,
             "--all-users: one user's run is killed after this, the next user goes on"),
};

const char *policy_action_to_string(PolicyAction a) {
        if (a < 0 || a >= _POLICY_ACTION_MAX)
                return NULL;
        return policy_action_table[a];
}

PolicyAction policy_action_from_string(const char *s) {
        for (size_t i = 0; s && i < _POLICY_ACTION_MAX; i++)
                if (streq(s, policy_action_table[i]))
                        return (PolicyAction)i;
        return _POLICY_ACTION_INVALID;
}

const char *policy_key_to_string(PolicyKey k) {
        if (k < 0 || k >= _POLICY_KEY_MAX)
                return NULL;
        return config_keys[k].name;
}

const ConfigKeyInfo *config_key_find(ConfigScope scope, const char *name) {
        for (size_t i = 0; name && i < _CONFIG_KEY_MAX; i++)
                if (config_keys[i].scope == scope && streq(config_keys[i].name, name))
                        return &config_keys[i];
        return NULL;
}

size_t config_key_names(ConfigScope scope, const char *extra, const char **names) {
        size_t n = 0;

        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++)
                if (config_keys[i].scope == scope)
                        names[n++] = config_keys[i].name;
        if (extra)
                names[n++] = extra;
        return n;
}

void *config_key_ptr(const ConfigKeyInfo *k, void *base) {
        return (uint8_t *)base + k->offset;
}

const void *config_key_ptr_const(const ConfigKeyInfo *k, const void *base) {
        return (const uint8_t *)base + k->offset;
}

size_t *config_key_count(const ConfigKeyInfo *k, void *base) {
        return (size_t *)(void *)((uint8_t *)base + k->offset_n);
}

char **config_key_origin(const ConfigKeyInfo *k, Config *c, PolicyOrigin *o) {
        if (k->scope == CONFIG_SCOPE_POLICY)
                return &o->where[config_key_index(k)];
        return (char **)(void *)((uint8_t *)c + k->origin_offset);
}

uint64_t config_key_number(const ConfigKeyInfo *k, const void *base) {
        const void *f = config_key_ptr_const(k, base);

        switch (k->type) {
        case CONFIG_VALUE_CHOICE:
                if (k->size == sizeof(bool))
                        return *(const bool *)f;
                return (uint64_t)*(const int *)f;
        case CONFIG_VALUE_BOOL:
                return *(const bool *)f;
        case CONFIG_VALUE_DURATION:
                return (uint64_t)*(const msec_t *)f;
        case CONFIG_VALUE_COUNT:
        case CONFIG_VALUE_SIZE:
                return *(const uint64_t *)f;
        default:
                return 0;
        }
}

void config_key_set_choice(const ConfigKeyInfo *k, void *base, int v) {
        void *f = config_key_ptr(k, base);

        if (k->size == sizeof(bool))
                *(bool *)f = v != 0;
        else
                *(int *)f = v;
}

void config_key_copy(const ConfigKeyInfo *k, Policy *dst, const Policy *src) {
        memcpy(config_key_ptr(k, dst), config_key_ptr_const(k, src), k->size);
}

void config_key_set_default(const ConfigKeyInfo *k, void *base) {
        void *f = config_key_ptr(k, base);

        switch (k->type) {
        case CONFIG_VALUE_CHOICE:
                config_key_set_choice(k, base, (int)k->def);
                break;
        case CONFIG_VALUE_BOOL:
                *(bool *)f = k->def != 0;
                break;
        case CONFIG_VALUE_DURATION:
                *(msec_t *)f = (msec_t)k->def;
                break;
        case CONFIG_VALUE_COUNT:
        case CONFIG_VALUE_SIZE:
                *(uint64_t *)f = k->def;
                break;
        case CONFIG_VALUE_SIZE_OR_PERCENT:
                *(SizeSpec *)f = k->def ? (SizeSpec){ .is_set = true, .bytes = k->def }
                                        : (SizeSpec){};
                break;
        case CONFIG_VALUE_PERCENT:
                *(double *)f = (double)k->def;
                break;
        case CONFIG_VALUE_PATH:
        case CONFIG_VALUE_PATH_LIST:
                break; /* none */
        }
}

char *config_key_format_buf(const ConfigKeyInfo *k, const void *base, char *buf, size_t n) {
        const void *f = config_key_ptr_const(k, base);

        switch (k->type) {
        case CONFIG_VALUE_CHOICE: {
                uint64_t v = config_key_number(k, base);
                snprintf(buf, n, "%s", v < k->n_words ? k->words[v] : "?");
                break;
        }
        case CONFIG_VALUE_DURATION: {
                msec_t d = *(const msec_t *)f;
                if ((k->off == CONFIG_OFF_ZERO && d == 0) ||
                    (k->off == CONFIG_OFF_INFINITY && d == MSEC_INFINITY))
                        snprintf(buf, n, "off");
                else
                        format_duration_exact(buf, n, d);
                break;
        }
        case CONFIG_VALUE_COUNT:
                if (k->off == CONFIG_OFF_ZERO && *(const uint64_t *)f == 0)
                        snprintf(buf, n, "off");
                else
                        snprintf(buf, n, "%" PRIu64, *(const uint64_t *)f);
                break;
        case CONFIG_VALUE_SIZE:
                if (*(const uint64_t *)f == 0)
                        snprintf(buf, n, "off");
                else
                        format_size_exact(buf, n, *(const uint64_t *)f);
                break;
        case CONFIG_VALUE_SIZE_OR_PERCENT: {
                const SizeSpec *sz = f;
                if (!sz->is_set)
                        snprintf(buf, n, "off");
                else if (sz->is_percent)
                        snprintf(buf, n, "%g%%", sz->percent);
                else
                        format_size_exact(buf, n, sz->bytes);
                break;
        }
        case CONFIG_VALUE_BOOL:
                snprintf(buf, n, "%s", *(const bool *)f ? "true" : "false");
                break;
        case CONFIG_VALUE_PERCENT:
                if (*(const double *)f == 0)
                        snprintf(buf, n, "off");
                else
                        snprintf(buf, n, "%g%%", *(const double *)f);
                break;
        case CONFIG_VALUE_PATH:
        case CONFIG_VALUE_PATH_LIST:
                snprintf(buf, n, "?"); /* not a scalar: config_key_format() */
                break;
        }
        return buf;
}

char *config_key_format(const ConfigKeyInfo *k, const void *base) {
        char buf[64];

        if (k->type == CONFIG_VALUE_PATH) {
                const char *v = *(char *const *)config_key_ptr_const(k, base);
                return strdup(v ? v : "none");
        }
        if (k->type == CONFIG_VALUE_PATH_LIST) {
                char *const *v = *(char *const *const *)config_key_ptr_const(k, base);
                size_t n = *config_key_count(k, (void *)base);
                StrBuf b = {};

                for (size_t i = 0; i < n; i++)
                        if (strbuf_printf(&b, "%s%s", i > 0 ? "," : "", v[i]) < 0) {
                                strbuf_done(&b);
                                return NULL;
                        }
                if (!b.buf)
                        return strdup("none");
                return strbuf_steal(&b);
        }
        return strdup(config_key_format_buf(k, base, buf, sizeof buf));
}

char *config_key_synopsis(const ConfigKeyInfo *k) {
        const char *off = k->off == CONFIG_OFF_NO ? "" : " | Qo off Qc";

        if (k->arg)
                return strprintf("Ar %s%s", k->arg, off);

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
                return strprintf("Ar duration%s", off);
        case CONFIG_VALUE_COUNT:
                return strprintf("Ar count%s", off);
        case CONFIG_VALUE_SIZE:
                return strprintf("Ar size%s", off);
        case CONFIG_VALUE_SIZE_OR_PERCENT:
                return strprintf("Ar size | Ar percent%s", off);
        case CONFIG_VALUE_BOOL:
                return strdup("Ar boolean");
        case CONFIG_VALUE_PERCENT:
                return strprintf("Ar percent%s", off);
        case CONFIG_VALUE_PATH:
                return strdup("Qq Ar path");
        case CONFIG_VALUE_PATH_LIST:
                return strdup("( Ar path , ... )");
        }
        return NULL;
}
