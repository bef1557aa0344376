/* config.c: the retention policy file (libconfig) → Config: the key table, parsing with every
 * error as "file:line: message", layering of files, project overrides, --explain, and the
 * root-mode merge in which a user's own file may only tighten the system policy. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "conftext.h"
#include "macro.h"
#include "util.h"

#define CONFIG_BUILTIN "built-in default"
#define CONFIG_DURATION_MAX (INT64_C(36500) * MSEC_PER_DAY) /* 100 years */
#define CONFIG_COUNT_MAX UINT64_C(1000000000)

typedef enum ConfigValueType {
        CONFIG_VALUE_ACTION,
        CONFIG_VALUE_DURATION,
        CONFIG_VALUE_COUNT,
        CONFIG_VALUE_SIZE,
        CONFIG_VALUE_BOOL,
        CONFIG_VALUE_PERCENT,
} ConfigValueType;

/* What "off" means for a key. */
typedef enum ConfigOff {
        CONFIG_OFF_NO,       /* "off" is refused */
        CONFIG_OFF_ZERO,     /* "off" is stored as 0; a literal zero is refused as ambiguous */
        CONFIG_OFF_INFINITY, /* "off" is stored as MSEC_INFINITY (never) */
} ConfigOff;

/* How config_merge_user() compares a user's value with the system's. */
typedef enum ConfigTighten {
        CONFIG_TIGHTEN_LIMIT,  /* smaller is tighter; 0 (off) is the loosest */
        CONFIG_TIGHTEN_LESS,   /* smaller is tighter (0 is a value) */
        CONFIG_TIGHTEN_BOOL,   /* false (protection off) is tighter */
        CONFIG_TIGHTEN_ACTION, /* delete is tighter than archive */
} ConfigTighten;

typedef struct ConfigKeyInfo {
        const char *name;
        ConfigValueType type;
        size_t offset;
        ConfigOff off;
        uint64_t min, max; /* bounds for durations (msec), counts and sizes */
        ConfigTighten tighten;
} ConfigKeyInfo;

#define KEY(k, n, t, field, o, lo, hi, tt)                                                         \
        [k] = { .name = n, .type = t, .offset = offsetof(Policy, field), .off = o, .min = lo,      \
                .max = hi, .tighten = tt }

/* Every policy key: name, type, field, meaning of "off", bounds, and how it tightens. */
static const ConfigKeyInfo config_keys[_POLICY_KEY_MAX] = {
        KEY(POLICY_KEY_ACTION, "action", CONFIG_VALUE_ACTION, action, CONFIG_OFF_NO, 0, 0,
            CONFIG_TIGHTEN_ACTION),
        KEY(POLICY_KEY_MAX_AGE, "max-age", CONFIG_VALUE_DURATION, max_age, CONFIG_OFF_ZERO,
            MSEC_PER_SEC, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LIMIT),
        KEY(POLICY_KEY_MAX_SESSIONS, "max-sessions", CONFIG_VALUE_COUNT, max_sessions,
            CONFIG_OFF_ZERO, 1, CONFIG_COUNT_MAX, CONFIG_TIGHTEN_LIMIT),
        KEY(POLICY_KEY_MAX_SIZE, "max-size", CONFIG_VALUE_SIZE, max_size, CONFIG_OFF_ZERO, 1,
            UINT64_MAX, CONFIG_TIGHTEN_LIMIT),
        KEY(POLICY_KEY_MIN_AGE, "min-age", CONFIG_VALUE_DURATION, min_age, CONFIG_OFF_NO, 0,
            CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_MIN_IDLE, "min-idle", CONFIG_VALUE_DURATION, min_idle, CONFIG_OFF_NO,
            MSEC_PER_MIN, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_KEEP_LATEST, "keep-latest", CONFIG_VALUE_COUNT, keep_latest, CONFIG_OFF_NO,
            0, CONFIG_COUNT_MAX, CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_KEEP_PINNED, "keep-pinned", CONFIG_VALUE_BOOL, keep_pinned, CONFIG_OFF_NO,
            0, 1, CONFIG_TIGHTEN_BOOL),
        KEY(POLICY_KEY_KEEP_TITLED, "keep-titled", CONFIG_VALUE_BOOL, keep_titled, CONFIG_OFF_NO,
            0, 1, CONFIG_TIGHTEN_BOOL),
        KEY(POLICY_KEY_KEEP_SCHEDULED, "keep-scheduled", CONFIG_VALUE_BOOL, keep_scheduled,
            CONFIG_OFF_NO, 0, 1, CONFIG_TIGHTEN_BOOL),
        KEY(POLICY_KEY_KEEP_WORKTREE, "keep-worktree", CONFIG_VALUE_BOOL, keep_worktree,
            CONFIG_OFF_NO, 0, 1, CONFIG_TIGHTEN_BOOL),
        KEY(POLICY_KEY_ARCHIVE_MAX_AGE, "archive-max-age", CONFIG_VALUE_DURATION, archive_max_age,
            CONFIG_OFF_ZERO, MSEC_PER_SEC, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LIMIT),
        KEY(POLICY_KEY_ARCHIVE_MAX_SIZE, "archive-max-size", CONFIG_VALUE_SIZE, archive_max_size,
            CONFIG_OFF_ZERO, 1, UINT64_MAX, CONFIG_TIGHTEN_LIMIT),
        KEY(POLICY_KEY_MAX_DELETIONS, "max-deletions", CONFIG_VALUE_COUNT, max_deletions,
            CONFIG_OFF_ZERO, 1, CONFIG_COUNT_MAX, CONFIG_TIGHTEN_LIMIT),
        KEY(POLICY_KEY_MAX_DELETIONS_PERCENT, "max-deletions-percent", CONFIG_VALUE_PERCENT,
            max_deletions_percent, CONFIG_OFF_ZERO, 0, 100, CONFIG_TIGHTEN_LIMIT),
        KEY(POLICY_KEY_ORPHAN_MIN_AGE, "orphan-min-age", CONFIG_VALUE_DURATION, orphan_min_age,
            CONFIG_OFF_INFINITY, MSEC_PER_HOUR, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_PROTECT, "protect", CONFIG_VALUE_BOOL, protect, CONFIG_OFF_NO, 0, 1,
            CONFIG_TIGHTEN_BOOL),
        KEY(POLICY_KEY_TOOL_RESULTS_MAX_AGE, "tool-results-max-age", CONFIG_VALUE_DURATION,
            tool_results_max_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_STALE_TMP_MIN_AGE, "stale-tmp-min-age", CONFIG_VALUE_DURATION,
            stale_tmp_min_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_DEBUG_PLANS_MIN_AGE, "debug-plans-min-age", CONFIG_VALUE_DURATION,
            debug_plans_min_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_LEGACY_MAX_AGE, "legacy-max-age", CONFIG_VALUE_DURATION, legacy_max_age,
            CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX, CONFIG_TIGHTEN_LESS),
        KEY(POLICY_KEY_STALE_PROJECT_MIN_AGE, "stale-project-min-age", CONFIG_VALUE_DURATION,
            stale_project_min_age, CONFIG_OFF_INFINITY, MSEC_PER_DAY, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS),
};

static const char *const config_top_names[] = { "defaults", "tree", "projects", "admin" };
static const char *const config_tree_names[] = { "max-size", "low-watermark", "keep-free",
                                                 "count" };
static const char *const config_admin_names[] = { "allow-user-files", "user-dirs", "metrics-file" };
static const char *const policy_action_table[_POLICY_ACTION_MAX] = {
        [POLICY_ACTION_ARCHIVE] = "archive",
        [POLICY_ACTION_DELETE] = "delete",
};
static const char *const config_count_table[] = { "apparent", "allocated" };

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

/* ------------------------------------------------------------------ errors */

void config_errors_done(ConfigErrors *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->msgs[i]);
        free(e->msgs);
        *e = (ConfigErrors){};
}

int config_errors_add(ConfigErrors *e, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;
        int n;

        if (greedy_realloc((void **)&e->msgs, &e->alloc, e->n + 1, sizeof(char *)) < 0)
                return -ENOMEM;
        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        e->msgs[e->n++] = s;
        return 0;
}

/* Append "loc: message" and return -EINVAL (or -ENOMEM). */
static int config_error(ConfigErrors *e, const char *loc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int config_error(ConfigErrors *e, const char *loc, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        return config_errors_add(e, "%s: %s", loc, msg) < 0 ? -ENOMEM : -EINVAL;
}

/* ------------------------------------------------------------------ lifecycle */

static void *config_mfree(void *p) {
        free(p);
        return NULL;
}

static void config_origin_done(PolicyOrigin *o) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                o->where[k] = config_mfree(o->where[k]);
}

/* Replace *p with a copy of s. 0 or -ENOMEM. */
static int config_set_str(char **p, const char *s) {
        char *t = strdup(s);
        if (!t)
                return -ENOMEM;
        free(*p);
        *p = t;
        return 0;
}

static void config_override_done(ProjectOverride *o) {
        free(o->pattern);
        free(o->file);
        config_origin_done(&o->origin);
        *o = (ProjectOverride){};
}

static void config_strv_free(char **v, size_t n) {
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

void config_done(Config *c) {
        if (!c)
                return;
        config_origin_done(&c->defaults_origin);
        for (size_t i = 0; i < c->n_projects; i++)
                config_override_done(&c->projects[i]);
        free(c->projects);
        free(c->tree.origin_max_size);
        free(c->tree.origin_low_watermark);
        free(c->tree.origin_keep_free);
        free(c->tree.origin_count);
        config_strv_free(c->user_dirs, c->n_user_dirs);
        config_strv_free(c->files, c->n_files);
        config_strv_free(c->files_from, c->n_files);
        free(c->origin_allow_user_files);
        free(c->origin_user_dirs);
        free(c->metrics_file);
        free(c->origin_metrics_file);
        *c = (Config){};
}

int config_init_default(Config *c) {
        *c = (Config){
                .defaults = {
                        .action = POLICY_ACTION_ARCHIVE,
                        .max_age = 90 * MSEC_PER_DAY,
                        .min_age = 3 * MSEC_PER_DAY,
                        .min_idle = 24 * MSEC_PER_HOUR,
                        .keep_latest = 1,
                        .keep_pinned = true,
                        .keep_titled = true,
                        .keep_scheduled = true,
                        .keep_worktree = true,
                        .max_deletions = 100,
                        .max_deletions_percent = 50,
                        .orphan_min_age = 30 * MSEC_PER_DAY,
                        .tool_results_max_age = MSEC_INFINITY,
                        .stale_tmp_min_age = MSEC_INFINITY,
                        .debug_plans_min_age = MSEC_INFINITY,
                        .legacy_max_age = MSEC_INFINITY,
                        .stale_project_min_age = MSEC_INFINITY,
                },
                .tree = { .count_allocated = true },
                .allow_user_files = true,
        };
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                if (config_set_str(&c->defaults_origin.where[k], CONFIG_BUILTIN) < 0)
                        goto oom;
        if (config_set_str(&c->tree.origin_max_size, CONFIG_BUILTIN) < 0 ||
            config_set_str(&c->tree.origin_low_watermark, CONFIG_BUILTIN) < 0 ||
            config_set_str(&c->tree.origin_keep_free, CONFIG_BUILTIN) < 0 ||
            config_set_str(&c->tree.origin_count, CONFIG_BUILTIN) < 0 ||
            config_set_str(&c->origin_allow_user_files, CONFIG_BUILTIN) < 0 ||
            config_set_str(&c->origin_user_dirs, CONFIG_BUILTIN) < 0)
                goto oom;
        return 0;
oom:
        config_done(c);
        return -ENOMEM;
}

/* Copy n strings (NULL entries, or all of them when src is NULL, stay NULL). */
static int config_strv_copy(char **src, size_t n, char ***ret) {
        char **v = calloc(n ? n : 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (src && src[i] && !(v[i] = strdup(src[i]))) {
                        config_strv_free(v, i);
                        return -ENOMEM;
                }
        *ret = v;
        return 0;
}

static int config_origin_copy(const PolicyOrigin *src, PolicyOrigin *dst) {
        *dst = (PolicyOrigin){};
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                if (src->where[k] && !(dst->where[k] = strdup(src->where[k])))
                        return -ENOMEM;
        return 0;
}

int config_copy(const Config *src, Config *ret) {
        Config c = {
                .defaults = src->defaults,
                .tree = src->tree,
                .allow_user_files = src->allow_user_files,
        };
        bool ok = true;

        /* the struct copies above duplicated borrowed pointers: clear before filling */
        c.tree.origin_max_size = strdup_or_null(src->tree.origin_max_size);
        c.tree.origin_low_watermark = strdup_or_null(src->tree.origin_low_watermark);
        c.tree.origin_keep_free = strdup_or_null(src->tree.origin_keep_free);
        c.tree.origin_count = strdup_or_null(src->tree.origin_count);
        c.origin_allow_user_files = strdup_or_null(src->origin_allow_user_files);
        c.origin_user_dirs = strdup_or_null(src->origin_user_dirs);
        c.metrics_file = strdup_or_null(src->metrics_file);
        c.origin_metrics_file = strdup_or_null(src->origin_metrics_file);
        ok = ok && config_origin_copy(&src->defaults_origin, &c.defaults_origin) >= 0;
        ok = ok && config_strv_copy(src->user_dirs, src->n_user_dirs, &c.user_dirs) >= 0;
        if (ok)
                c.n_user_dirs = src->n_user_dirs;
        ok = ok && config_strv_copy(src->files, src->n_files, &c.files) >= 0;
        if (ok && config_strv_copy(src->files_from, src->n_files, &c.files_from) < 0) {
                config_strv_free(c.files, src->n_files);
                c.files = NULL;
                ok = false;
        }
        if (ok)
                c.n_files = src->n_files;
        if (ok && src->n_projects > 0) {
                c.projects = calloc(src->n_projects, sizeof(ProjectOverride));
                ok = c.projects;
        }
        for (size_t i = 0; ok && i < src->n_projects; i++) {
                const ProjectOverride *s = &src->projects[i];
                ProjectOverride *d = &c.projects[i];

                *d = (ProjectOverride){ .is_glob = s->is_glob, .set_mask = s->set_mask,
                                        .policy = s->policy, .line = s->line };
                c.n_projects++;
                d->pattern = strdup(s->pattern);
                d->file = strdup_or_null(s->file);
                ok = d->pattern && (d->file || !s->file) &&
                     config_origin_copy(&s->origin, &d->origin) >= 0;
        }
        if (!ok || (src->tree.origin_max_size && !c.tree.origin_max_size) ||
            (src->tree.origin_low_watermark && !c.tree.origin_low_watermark) ||
            (src->tree.origin_keep_free && !c.tree.origin_keep_free) ||
            (src->tree.origin_count && !c.tree.origin_count) ||
            (src->origin_allow_user_files && !c.origin_allow_user_files) ||
            (src->origin_user_dirs && !c.origin_user_dirs) ||
            (src->metrics_file && !c.metrics_file) ||
            (src->origin_metrics_file && !c.origin_metrics_file)) {
                config_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

/* ------------------------------------------------------------------ values */

static void *config_field(Policy *p, const ConfigKeyInfo *k) {
        return (uint8_t *)p + k->offset;
}

static const void *config_field_const(const Policy *p, const ConfigKeyInfo *k) {
        return (const uint8_t *)p + k->offset;
}

/* Copy key k's value from src to dst. */
static void config_key_copy(const ConfigKeyInfo *k, Policy *dst, const Policy *src) {
        size_t sz;
        switch (k->type) {
        case CONFIG_VALUE_ACTION:
                sz = sizeof(PolicyAction);
                break;
        case CONFIG_VALUE_BOOL:
                sz = sizeof(bool);
                break;
        case CONFIG_VALUE_DURATION:
                sz = sizeof(msec_t);
                break;
        case CONFIG_VALUE_PERCENT:
                sz = sizeof(double);
                break;
        default:
                sz = sizeof(uint64_t);
        }
        memcpy(config_field(dst, k), config_field_const(src, k), sz);
}

/* Render a key's value as the file would spell it ("90d", "off", "5G", "true"). */
static char *config_format_value(const ConfigKeyInfo *k, const Policy *p, char *buf, size_t n) {
        const void *f = config_field_const(p, k);

        switch (k->type) {
        case CONFIG_VALUE_ACTION:
                snprintf(buf, n, "%s", policy_action_to_string(*(const PolicyAction *)f));
                break;
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
        case CONFIG_VALUE_BOOL:
                snprintf(buf, n, "%s", *(const bool *)f ? "true" : "false");
                break;
        case CONFIG_VALUE_PERCENT:
                if (*(const double *)f == 0)
                        snprintf(buf, n, "off");
                else
                        snprintf(buf, n, "%g%%", *(const double *)f);
                break;
        }
        return buf;
}

static const char *config_type_name(int type) {
        switch (type) {
        case CONFIG_TYPE_GROUP:
                return "a group";
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
                return "an integer";
        case CONFIG_TYPE_FLOAT:
                return "a float";
        case CONFIG_TYPE_STRING:
                return "a string";
        case CONFIG_TYPE_BOOL:
                return "a boolean";
        case CONFIG_TYPE_ARRAY:
                return "an array";
        case CONFIG_TYPE_LIST:
                return "a list";
        default:
                return "something else";
        }
}

/* The literal of a scalar setting exactly as written (numbers, booleans), paired with it by
 * config_pair_values(); NULL for strings and groups. */
static const char *config_raw(const config_setting_t *s) {
        const ConfToken *t = config_setting_get_hook(s);
        return t ? t->raw : NULL;
}

/* "an integer (4294967297)", "a string (\"x\")", "a list": the type and the value as given,
 * for messages. NULL on ENOMEM. */
static char *config_describe(const config_setting_t *s) {
        int type = config_setting_type(s);
        const char *raw = config_raw(s);

        if (type == CONFIG_TYPE_STRING)
                return strprintf("a string (\"%s\")", config_setting_get_string(s));
        if (raw)
                return strprintf("%s (%s)", config_type_name(type), raw);
        return strdup(config_type_name(type));
}

/* Append "loc: <key>: expected <what>, got <s described>". */
static int config_error_expected(ConfigErrors *errs, const char *loc, const char *key,
                             const char *what, const config_setting_t *s) {
        _cleanup_free_ char *got = config_describe(s);

        if (!got)
                return -ENOMEM;
        return config_error(errs, loc, "%s: expected %s, got %s", key, what, got);
}

/* The exact value of an integer setting, from its literal: libconfig 1.5 reads 4294967297 as
 * 1 and 0x100000000 as 0, so its own value is not trusted. -ERANGE when the literal does not
 * fit in 64 bits; -EINVAL (with an error appended) when the literal is unknown. */
static int config_get_exact(const config_setting_t *s, const char *key, const char *loc,
                            long long *ret, ConfigErrors *errs) {
        const char *raw = config_raw(s);
        int r;

        r = raw ? conftext_integer(raw, ret) : -EINVAL;
        if (r == -EINVAL)
                return config_error(errs, loc, "%s: cannot tell the value as written", key);
        return r;
}

static bool config_is_off(const config_setting_t *s) {
        return config_setting_type(s) == CONFIG_TYPE_STRING &&
               streq(config_setting_get_string(s), "off");
}

static bool config_is_number(const config_setting_t *s) {
        return config_setting_type(s) == CONFIG_TYPE_INT ||
               config_setting_type(s) == CONFIG_TYPE_INT64;
}

/* A duration string ("90d") or "off", within the key's bounds. */
static int config_get_duration(const config_setting_t *s, const char *key, const char *loc,
                               ConfigOff off, msec_t min, msec_t max, msec_t *ret,
                               ConfigErrors *errs) {
        char buf[FORMAT_DURATION_MAX];
        const char *why = NULL, *v;
        msec_t d;

        if (config_is_number(s)) {
                const char *raw = config_raw(s) ? config_raw(s) : "?";
                bool plain = raw[strspn(raw, "0123456789")] == '\0' && strlen(raw) <= 6;
                return config_error(errs, loc,
                                    "%s: expected a duration string with a unit such as \"%sd\", "
                                    "got a bare number (%s)",
                                    key, plain ? raw : "90", raw);
        }
        if (config_setting_type(s) != CONFIG_TYPE_STRING)
                return config_error_expected(errs, loc, key, "a duration string such as \"90d\"", s);
        v = config_setting_get_string(s);
        if (streq(v, "off")) {
                if (off == CONFIG_OFF_NO)
                        return config_error(errs, loc, "%s cannot be \"off\"", key);
                *ret = off == CONFIG_OFF_ZERO ? 0 : MSEC_INFINITY;
                return 0;
        }
        if (parse_duration(v, &d, &why) < 0)
                return config_error(errs, loc, "%s: invalid duration \"%s\": %s", key, v, why);
        if (d == 0 && off != CONFIG_OFF_NO)
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (\"%s\"); write \"off\" to "
                                    "disable it",
                                    key, v);
        if (d < min)
                return config_error(errs, loc, "%s: %s is too short (at least %s)", key, v,
                                    format_duration_exact(buf, sizeof buf, min));
        if (d > max)
                return config_error(errs, loc, "%s: %s is out of range (at most %s)", key, v,
                                    format_duration_exact(buf, sizeof buf, max));
        *ret = d;
        return 0;
}

/* An integer count, or "off" when allowed; checked on the literal, not libconfig's value. */
static int config_get_count(const config_setting_t *s, const char *key, const char *loc,
                            bool allow_off, uint64_t min, uint64_t max, uint64_t *ret,
                            ConfigErrors *errs) {
        long long v = 0;
        int r;

        if (allow_off && config_is_off(s)) {
                *ret = 0;
                return 0;
        }
        if (!config_is_number(s))
                return config_error_expected(errs, loc, key,
                                         allow_off ? "an integer or \"off\"" : "an integer", s);
        r = config_get_exact(s, key, loc, &v, errs);
        if (r < 0 && r != -ERANGE)
                return r;
        if (r >= 0 && v == 0 && allow_off)
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (%s); write \"off\" to disable it",
                                    key, config_raw(s));
        if (r == -ERANGE || v < 0 || (uint64_t)v < min || (uint64_t)v > max)
                return config_error(errs, loc,
                                    "%s: %s is out of range (%" PRIu64 " to %" PRIu64 ")", key,
                                    config_raw(s), min, max);
        *ret = (uint64_t)v;
        return 0;
}

/* A size string ("5G", "10%" when allowed) or "off" (is_set false). */
static int config_get_size(const config_setting_t *s, const char *key, const char *loc,
                           bool allow_percent, SizeSpec *ret, ConfigErrors *errs) {
        const char *why = NULL, *v;
        SizeSpec sz;

        if (config_is_number(s))
                return config_error(errs, loc,
                                    "%s: expected a size string with a unit such as \"5G\", got a "
                                    "bare number (%s)",
                                    key, config_raw(s) ? config_raw(s) : "?");
        if (config_setting_type(s) != CONFIG_TYPE_STRING)
                return config_error_expected(errs, loc, key, "a size string such as \"5G\"", s);
        v = config_setting_get_string(s);
        if (streq(v, "off")) {
                *ret = (SizeSpec){};
                return 0;
        }
        if (parse_size(v, allow_percent, &sz, &why) < 0)
                return config_error(errs, loc, "%s: invalid size \"%s\": %s", key, v, why);
        if (sz.is_percent && strchr(v, '.'))
                return config_error(errs, loc,
                                    "%s: invalid size \"%s\": fractional percentages are not "
                                    "supported (write a whole number such as \"10%%\")",
                                    key, v);
        if ((sz.is_percent && sz.percent <= 0) || (!sz.is_percent && sz.bytes == 0))
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (\"%s\"); write \"off\" to "
                                    "disable it",
                                    key, v);
        if (v[strspn(v, "0123456789")] == '\0') /* "500": bytes, or a forgotten "M"? */
                return config_error(errs, loc,
                                    "%s: invalid size \"%s\": missing unit (K, M, G or T; B for "
                                    "bytes)",
                                    key, v);
        *ret = sz;
        return 0;
}

static int config_get_bool(const config_setting_t *s, const char *key, const char *loc, bool *ret,
                           ConfigErrors *errs) {
        if (config_setting_type(s) == CONFIG_TYPE_STRING)
                return config_error(errs, loc,
                                    "%s: expected true or false (without quotes), got a string "
                                    "(\"%s\")",
                                    key, config_setting_get_string(s));
        if (config_setting_type(s) != CONFIG_TYPE_BOOL)
                return config_error_expected(errs, loc, key, "true or false", s);
        *ret = config_setting_get_bool(s);
        return 0;
}

/* A percentage: 50, 12.5, "50%" or "off"; (0, 100]. */
static int config_get_percent(const config_setting_t *s, const char *key, const char *loc,
                              double *ret, ConfigErrors *errs) {
        _cleanup_free_ char *quoted = NULL;
        const char *shown = config_raw(s);
        long long v;
        double d;
        int r;

        switch (config_setting_type(s)) {
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
                r = config_get_exact(s, key, loc, &v, errs);
                if (r == -ERANGE)
                        return config_error(errs, loc,
                                            "%s: %s is out of range (more than 0, at most 100)",
                                            key, shown);
                if (r < 0)
                        return r;
                d = (double)v;
                break;
        case CONFIG_TYPE_FLOAT:
                d = config_setting_get_float(s);
                break;
        case CONFIG_TYPE_STRING: {
                const char *why = NULL;
                SizeSpec sz;

                shown = config_setting_get_string(s);
                if (streq(shown, "off")) {
                        *ret = 0;
                        return 0;
                }
                if (!strchr(shown, '%') ||
                    parse_size(shown, /* allow_percent= */ true, &sz, &why) < 0)
                        return config_error(errs, loc,
                                            "%s: invalid percentage \"%s\" (write 50, 12.5 or \"off\")",
                                            key, shown);
                d = sz.percent;
                shown = quoted = strprintf("\"%s\"", shown);
                if (!quoted)
                        return -ENOMEM;
                break;
        }
        default:
                return config_error_expected(errs, loc, key, "a percentage", s);
        }
        if (!shown)
                return config_error(errs, loc, "%s: cannot tell the value as written", key);
        if (d == 0)
                return config_error(errs, loc,
                                    "%s: a zero limit is ambiguous (%s); write \"off\" to disable it",
                                    key, shown);
        if (!(d > 0 && d <= 100))
                return config_error(errs, loc, "%s: %s is out of range (more than 0, at most 100)",
                                    key, shown);
        *ret = d;
        return 0;
}

/* One of a few fixed words. */
static int config_get_enum(const config_setting_t *s, const char *key, const char *loc,
                           const char *const *names, size_t n, int *ret, ConfigErrors *errs) {
        const char *v;

        if (config_setting_type(s) != CONFIG_TYPE_STRING) {
                _cleanup_free_ char *what = strprintf("\"%s\" or \"%s\"", names[0], names[1]);
                if (!what)
                        return -ENOMEM;
                return config_error_expected(errs, loc, key, what, s);
        }
        v = config_setting_get_string(s);
        for (size_t i = 0; i < n; i++)
                if (streq(v, names[i])) {
                        *ret = (int)i;
                        return 0;
                }
        return config_error(errs, loc, "%s: invalid value \"%s\" (expected \"%s\" or \"%s\")", key,
                            v, names[0], names[1]);
}

/* Parse setting s as policy key k into *p. */
static int config_get_policy_value(const ConfigKeyInfo *k, const config_setting_t *s,
                                   const char *loc, Policy *p, ConfigErrors *errs) {
        void *f = config_field(p, k);
        int r, v;

        switch (k->type) {
        case CONFIG_VALUE_ACTION:
                r = config_get_enum(s, k->name, loc, policy_action_table, _POLICY_ACTION_MAX, &v,
                                    errs);
                if (r >= 0)
                        *(PolicyAction *)f = (PolicyAction)v;
                return r;
        case CONFIG_VALUE_DURATION:
                return config_get_duration(s, k->name, loc, k->off, (msec_t)k->min, (msec_t)k->max,
                                           (msec_t *)f, errs);
        case CONFIG_VALUE_COUNT:
                return config_get_count(s, k->name, loc, k->off == CONFIG_OFF_ZERO, k->min, k->max,
                                        (uint64_t *)f, errs);
        case CONFIG_VALUE_SIZE: {
                SizeSpec sz;
                r = config_get_size(s, k->name, loc, /* allow_percent= */ false, &sz, errs);
                if (r >= 0)
                        *(uint64_t *)f = sz.is_set ? sz.bytes : 0;
                return r;
        }
        case CONFIG_VALUE_BOOL:
                return config_get_bool(s, k->name, loc, (bool *)f, errs);
        case CONFIG_VALUE_PERCENT:
                return config_get_percent(s, k->name, loc, (double *)f, errs);
        }
        return -EINVAL;
}

/* ------------------------------------------------------------------ unknown keys */

static size_t config_edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

        if (la >= ELEMENTSOF(prev) || lb >= ELEMENTSOF(prev))
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                prev[j] = j;
        for (size_t i = 1; i <= la; i++) {
                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
                                                    tolower((unsigned char)b[j - 1]));
                        cur[j] = MIN(MIN(prev[j] + 1, cur[j - 1] + 1), sub);
                }
                memcpy(prev, cur, (lb + 1) * sizeof(size_t));
        }
        return prev[lb];
}

/* The closest known name within a small edit distance, or NULL. */
static const char *config_suggest(const char *name, const char *const *names, size_t n) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX, limit = strlen(name) >= 8 ? 3 : 2;

        for (size_t i = 0; i < n; i++) {
                size_t d = config_edit_distance(name, names[i]);
                if (d < best_d) {
                        best_d = d;
                        best = names[i];
                }
        }
        return best_d <= limit ? best : NULL;
}

static int config_policy_key_from_name(const char *name) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                if (streq(name, config_keys[k].name))
                        return (int)k;
        return -1;
}

/* "unknown key 'x' in <where>" with a did-you-mean from `names` and a hint for known keys that
 * belong to another group. */
static int config_unknown(ConfigErrors *errs, const char *loc, const char *name, const char *where,
                          const char *const *names, size_t n) {
        const char *s = config_suggest(name, names, n);
        bool is_policy = config_policy_key_from_name(name) >= 0;
        bool is_tree = false;

        for (size_t i = 0; i < ELEMENTSOF(config_tree_names); i++)
                is_tree = is_tree || streq(name, config_tree_names[i]);
        if (s)
                return config_error(errs, loc, "unknown key '%s' in %s; did you mean '%s'?", name,
                                    where, s);
        if (is_policy)
                return config_error(errs, loc,
                                    "'%s' is a policy key: put it in defaults = { ... } or a "
                                    "project block",
                                    name);
        if (is_tree)
                return config_error(errs, loc, "'%s' is a tree key: put it in tree = { ... }",
                                    name);
        return config_error(errs, loc, "unknown key '%s' in %s", name, where);
}

/* ------------------------------------------------------------------ project patterns */

static bool config_pattern_is_glob(const char *p) {
        return strpbrk(p, "*?[\\") != NULL;
}

/* Number of characters of a glob that match only themselves (the specificity). */
static size_t config_pattern_literals(const char *p) {
        size_t n = 0;

        while (*p) {
                if (*p == '*' || *p == '?')
                        p++;
                else if (*p == '[') {
                        const char *q = p + 1;
                        if (*q == '!' || *q == '^')
                                q++;
                        if (*q == ']')
                                q++;
                        q = strchr(q, ']');
                        if (!q) { /* unmatched '[' matches itself in fnmatch(3) */
                                n++;
                                p++;
                        } else
                                p = q + 1;
                } else if (*p == '\\' && p[1]) {
                        n++;
                        p += 2;
                } else {
                        n++;
                        p++;
                }
        }
        return n;
}

/* Length of the literal prefix before the first wildcard. */
static size_t config_pattern_prefix(const char *p) {
        return strcspn(p, "*?[\\");
}

/* Compare paths ignoring trailing slashes. */
static bool config_path_equal(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        while (la > 1 && a[la - 1] == '/')
                la--;
        while (lb > 1 && b[lb - 1] == '/')
                lb--;
        return la == lb && strneq(a, b, la);
}

const ProjectOverride *config_override_for(const Config *c, const char *project_path) {
        const ProjectOverride *best = NULL;
        size_t best_n = 0;

        if (!c || !project_path)
                return NULL;
        for (size_t i = 0; i < c->n_projects; i++) {
                const ProjectOverride *o = &c->projects[i];
                if (!o->is_glob && config_path_equal(o->pattern, project_path))
                        return o; /* exact beats any glob; patterns are unique */
        }
        for (size_t i = 0; i < c->n_projects; i++) {
                const ProjectOverride *o = &c->projects[i];
                size_t n;

                if (!o->is_glob || fnmatch(o->pattern, project_path, 0) != 0)
                        continue;
                n = config_pattern_literals(o->pattern);
                if (!best || n >= best_n) { /* equal specificity: the later block wins */
                        best = o;
                        best_n = n;
                }
        }
        return best;
}

const Policy *config_policy_for(const Config *c, const char *project_path) {
        const ProjectOverride *o = config_override_for(c, project_path);
        return o ? &o->policy : &c->defaults;
}

/* ------------------------------------------------------------------ parsing a file */

typedef struct ConfigParse {
        Config *c;
        const char *name; /* the file name, or the buffer's label */
        const ConfText *src; /* the text parsed, with its includes and line map */
        bool allow_admin;
        ConfigErrors *errs;
        size_t *seen;     /* indexes of c->projects configured by this file */
        char **seen_loc;  /* and where */
        size_t n_seen, alloc_seen, alloc_loc;
} ConfigParse;

/* "file:line" of a setting, through the line map (the text may hold several files). */
static char *config_loc(const ConfigParse *cp, const config_setting_t *s) {
        return conftext_loc(cp->src, config_setting_source_line(s));
}

/* Was origin ("file:line") set by one of the files of this parse? */
static bool config_parse_owns(const ConfigParse *cp, const char *origin);

/* Parse every key of a policy group (defaults or a project block) into p, o and *mask. */
static int config_parse_policy_group(ConfigParse *cp, const config_setting_t *g, const char *where,
                                     Policy *p, PolicyOrigin *o, unsigned *mask) {
        const char *names[_POLICY_KEY_MAX + 1];
        bool is_project = mask != NULL;
        int n = config_setting_length(g);

        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                names[k] = config_keys[k].name;
        names[_POLICY_KEY_MAX] = "path";
        for (int i = 0; i < n; i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
                const char *name = config_setting_name(s);
                _cleanup_free_ char *loc = config_loc(cp, s);
                int k, r;

                if (!loc)
                        return -ENOMEM;
                if (is_project && name && streq(name, "path"))
                        continue;
                k = name ? config_policy_key_from_name(name) : -1;
                if (k < 0) {
                        r = config_unknown(cp->errs, loc, name ? name : "?", where, names,
                                           _POLICY_KEY_MAX + is_project);
                        if (r == -ENOMEM)
                                return r;
                        continue;
                }
                r = config_get_policy_value(&config_keys[k], s, loc, p, cp->errs);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                free(o->where[k]);
                o->where[k] = TAKE_PTR(loc);
                if (mask)
                        *mask |= 1u << k;
        }
        return 0;
}

static int config_parse_tree(ConfigParse *cp, const config_setting_t *g) {
        TreeLimits *t = &cp->c->tree;
        int n = config_setting_length(g);

        for (int i = 0; i < n; i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
                const char *name = config_setting_name(s);
                _cleanup_free_ char *loc = config_loc(cp, s);
                char **origin = NULL;
                SizeSpec sz;
                int r = 0, v;

                if (!loc)
                        return -ENOMEM;
                if (streq(name, "max-size")) {
                        r = config_get_size(s, name, loc, /* allow_percent= */ false, &sz,
                                            cp->errs);
                        if (r >= 0) {
                                t->max_size = sz.is_set ? sz.bytes : 0;
                                origin = &t->origin_max_size;
                        }
                } else if (streq(name, "low-watermark")) {
                        r = config_get_size(s, name, loc, /* allow_percent= */ false, &sz,
                                            cp->errs);
                        if (r >= 0) {
                                t->low_watermark = sz.is_set ? sz.bytes : 0;
                                origin = &t->origin_low_watermark;
                        }
                } else if (streq(name, "keep-free")) {
                        r = config_get_size(s, name, loc, /* allow_percent= */ true, &sz, cp->errs);
                        if (r >= 0 && sz.is_percent && sz.percent >= 100)
                                r = config_error(cp->errs, loc,
                                                 "keep-free: %s is out of range (below 100%%)",
                                                 config_setting_get_string(s));
                        if (r >= 0) {
                                t->keep_free = sz;
                                origin = &t->origin_keep_free;
                        }
                } else if (streq(name, "count")) {
                        r = config_get_enum(s, name, loc, config_count_table,
                                            ELEMENTSOF(config_count_table), &v, cp->errs);
                        if (r >= 0) {
                                t->count_allocated = v == 1;
                                origin = &t->origin_count;
                        }
                } else
                        r = config_unknown(cp->errs, loc, name, "tree", config_tree_names,
                                           ELEMENTSOF(config_tree_names));
                if (r == -ENOMEM)
                        return r;
                if (origin) {
                        free(*origin);
                        *origin = TAKE_PTR(loc);
                }
        }
        return 0;
}

static int config_parse_admin(ConfigParse *cp, const config_setting_t *g) {
        Config *c = cp->c;
        int n = config_setting_length(g);

        for (int i = 0; i < n; i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
                const char *name = config_setting_name(s);
                _cleanup_free_ char *loc = config_loc(cp, s);
                int r = 0;

                if (!loc)
                        return -ENOMEM;
                if (streq(name, "allow-user-files")) {
                        r = config_get_bool(s, name, loc, &c->allow_user_files, cp->errs);
                        if (r >= 0) {
                                free(c->origin_allow_user_files);
                                c->origin_allow_user_files = TAKE_PTR(loc);
                        }
                } else if (streq(name, "user-dirs")) {
                        int m = config_setting_length(s);
                        char **v;
                        bool bad = false;

                        if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
                                r = config_error_expected(cp->errs, loc, "user-dirs",
                                                      "a list of paths such as ( \"/srv/home\" )",
                                                      s);
                                if (r == -ENOMEM)
                                        return r;
                                continue;
                        }
                        v = calloc((size_t)m + 1, sizeof(char *));
                        if (!v)
                                return -ENOMEM;
                        for (int j = 0; j < m; j++) {
                                const config_setting_t *e = config_setting_get_elem(s, (unsigned)j);
                                const char *d = config_setting_get_string(e);
                                if (!d || d[0] != '/') {
                                        _cleanup_free_ char *got = config_describe(e);
                                        r = got ? config_error(cp->errs, loc,
                                                               "user-dirs: entry %d, %s, is not "
                                                               "an absolute path",
                                                               j + 1, got)
                                                : -ENOMEM;
                                        bad = true;
                                } else if (!(v[j] = strdup(d)))
                                        r = -ENOMEM;
                                if (r == -ENOMEM) {
                                        config_strv_free(v, (size_t)m);
                                        return r;
                                }
                        }
                        if (bad) {
                                config_strv_free(v, (size_t)m);
                                continue;
                        }
                        config_strv_free(c->user_dirs, c->n_user_dirs);
                        c->user_dirs = v;
                        c->n_user_dirs = (size_t)m;
                        free(c->origin_user_dirs);
                        c->origin_user_dirs = TAKE_PTR(loc);
                } else if (streq(name, "metrics-file")) {
                        const char *v = config_setting_get_string(s);
                        if (!v || v[0] != '/') {
                                r = config_error_expected(cp->errs, loc, "metrics-file",
                                                          "an absolute path such as \"/var/lib/"
                                                          "prometheus/node-exporter/qgc.prom\"",
                                                          s);
                                if (r == -ENOMEM)
                                        return r;
                                continue;
                        }
                        free(c->metrics_file);
                        c->metrics_file = strdup(v);
                        if (!c->metrics_file)
                                return -ENOMEM;
                        free(c->origin_metrics_file);
                        c->origin_metrics_file = TAKE_PTR(loc);
                } else
                        r = config_unknown(cp->errs, loc, name, "admin", config_admin_names,
                                           ELEMENTSOF(config_admin_names));
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

/* Validate and normalize a project path: absolute (or a glob starting with a wildcard), no
 * trailing slash. */
static int config_project_pattern(const config_setting_t *g, const char *loc, ConfigErrors *errs,
                                  char **ret) {
        const config_setting_t *s = config_setting_get_member(g, "path");
        const char *v;
        char *p;
        size_t l;

        if (!s)
                return config_error(errs, loc, "project block without a path");
        if (config_setting_type(s) != CONFIG_TYPE_STRING)
                return config_error_expected(errs, loc, "path", "a string", s);
        v = config_setting_get_string(s);
        if (v[0] != '/' && v[0] != '*')
                return config_error(errs, loc,
                                    "path: \"%s\" is not an absolute path (or a glob starting "
                                    "with '*')",
                                    v);
        p = strdup(v);
        if (!p)
                return -ENOMEM;
        l = strlen(p);
        while (l > 1 && p[l - 1] == '/')
                p[--l] = '\0';
        *ret = p;
        return 0;
}

/* Record that this file configured c->projects[idx] at loc. */
static int config_parse_seen(ConfigParse *cp, size_t idx, const char *loc) {
        char *l = strdup(loc);
        if (!l)
                return -ENOMEM;
        if (greedy_realloc((void **)&cp->seen, &cp->alloc_seen, cp->n_seen + 1, sizeof(size_t)) <
                    0 ||
            greedy_realloc((void **)&cp->seen_loc, &cp->alloc_loc, cp->n_seen + 1,
                           sizeof(char *)) < 0) {
                free(l);
                return -ENOMEM;
        }
        cp->seen[cp->n_seen] = idx;
        cp->seen_loc[cp->n_seen++] = l;
        return 0;
}

static int config_parse_project(ConfigParse *cp, const config_setting_t *g) {
        Config *c = cp->c;
        _cleanup_free_ char *loc = config_loc(cp, g), *pattern = NULL,
                            *where = NULL;
        PolicyOrigin o = {};
        Policy p = c->defaults;
        unsigned mask = 0;
        ProjectOverride *po = NULL;
        int r;

        if (!loc)
                return -ENOMEM;
        if (!config_setting_is_group(g)) {
                r = config_error(cp->errs, loc,
                                 "each entry of projects must be a group: { path = \"...\"; ... }");
                return r == -ENOMEM ? r : 0; /* go on: report the file's other errors too */
        }
        r = config_project_pattern(g, loc, cp->errs, &pattern);
        if (r == -ENOMEM)
                return r;
        where = strprintf("project '%s'", pattern ? pattern : "?");
        if (!where)
                return -ENOMEM;
        r = config_parse_policy_group(cp, g, where, &p, &o, &mask);
        if (r < 0 || !pattern)
                goto finish;

        for (size_t i = 0; i < cp->n_seen; i++)
                if (streq(c->projects[cp->seen[i]].pattern, pattern)) {
                        r = config_error(cp->errs, loc, "project path '%s' is already configured at %s",
                                         pattern, cp->seen_loc[i]);
                        goto finish;
                }
        for (size_t i = 0; i < c->n_projects; i++)
                if (streq(c->projects[i].pattern, pattern))
                        po = &c->projects[i]; /* from an earlier file: layer on top of it */
        if (!po) {
                /* no capacity is kept: grow by one each time (a file has few blocks) */
                if (greedy_realloc((void **)&c->projects, &(size_t){ c->n_projects }, c->n_projects + 1,
                                   sizeof(ProjectOverride)) < 0) {
                        r = -ENOMEM;
                        goto finish;
                }
                const char *file;
                unsigned line;

                conftext_where(cp->src, config_setting_source_line(g), &file, &line);
                po = &c->projects[c->n_projects++];
                *po = (ProjectOverride){ .pattern = TAKE_PTR(pattern), .policy = c->defaults,
                                         .line = (int)line };
                po->is_glob = config_pattern_is_glob(po->pattern);
                po->file = strdup(file);
                if (!po->file) {
                        r = -ENOMEM;
                        goto finish;
                }
        }
        r = config_parse_seen(cp, (size_t)(po - c->projects), loc);
        if (r < 0)
                goto finish;
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++) {
                if (!(mask & (1u << k)))
                        continue;
                config_key_copy(&config_keys[k], &po->policy, &p);
                free(po->origin.where[k]);
                po->origin.where[k] = TAKE_PTR(o.where[k]);
        }
        po->set_mask |= mask;
        r = 0;
finish:
        config_origin_done(&o);
        return r == -ENOMEM ? r : 0;
}

static int config_parse_projects(ConfigParse *cp, const config_setting_t *l) {
        int n = config_setting_length(l);

        if (!config_setting_is_list(l)) {
                _cleanup_free_ char *loc = config_loc(cp, l);
                if (!loc)
                        return -ENOMEM;
                int r = config_error(cp->errs, loc,
                                     "projects must be a list: projects = ( { path = \"...\"; ... }, "
                                     "... );");
                return r == -ENOMEM ? r : 0;
        }
        for (int i = 0; i < n; i++) {
                int r = config_parse_project(cp, config_setting_get_elem(l, (unsigned)i));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Copy the defaults into every override for the keys the override does not set. */
static int config_inherit_defaults(Config *c) {
        for (size_t i = 0; i < c->n_projects; i++) {
                ProjectOverride *po = &c->projects[i];
                for (size_t k = 0; k < _POLICY_KEY_MAX; k++) {
                        if (po->set_mask & (1u << k))
                                continue;
                        config_key_copy(&config_keys[k], &po->policy, &c->defaults);
                        if (config_set_str(&po->origin.where[k], c->defaults_origin.where[k]) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* ------------------------------------------------------------------ contradictions */

static bool config_origin_in(const char *origin, const char *name) {
        size_t l = strlen(name);
        return origin && strneq(origin, name, l) && origin[l] == ':';
}

/* Is origin in one of n files? */
static bool config_origin_in_files(const char *origin, char *const *files, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (config_origin_in(origin, files[i]))
                        return true;
        return false;
}

static bool config_parse_owns(const ConfigParse *cp, const char *origin) {
        for (size_t i = 0; i < cp->src->n_files; i++)
                if (config_origin_in(origin, cp->src->files[i].path))
                        return true;
        return false;
}

/* Report "a > b" for keys ka, kb of a policy, at the line of whichever this file set. */
static int config_check_pair(ConfigParse *cp, const Policy *p, const PolicyOrigin *o,
                             const char *ctx, PolicyKey ka, PolicyKey kb, const char *relation) {
        char va[32], vb[32];
        const char *oa = o->where[ka], *ob = o->where[kb];
        const char *loc = config_parse_owns(cp, ob) ? ob : config_parse_owns(cp, oa) ? oa : ob;

        return config_error(cp->errs, loc, "%s%s %s (%s) is %s %s %s (%s)", ctx,
                            config_keys[ka].name, config_format_value(&config_keys[ka], p, va, sizeof va),
                            oa, relation, config_keys[kb].name,
                            config_format_value(&config_keys[kb], p, vb, sizeof vb), ob);
}

/* The position in c->files of the file an origin ("file:line") names; -1 when none. */
static ssize_t config_origin_rank(const Config *c, const char *origin) {
        const char *colon = strrchr(origin, ':');
        size_t len = colon ? (size_t)(colon - origin) : strlen(origin);

        for (size_t i = c->n_files; i > 0; i--)
                if (strlen(c->files[i - 1]) == len && strneq(c->files[i - 1], origin, len))
                        return (ssize_t)(i - 1);
        return -1;
}

/* Rules that contradict each other within one effective policy. Only pairs touching `mask`
 * are reported, so a contradiction in the defaults is not repeated for every project. A grace
 * (min-age, min-idle, keep-latest) longer than a limit is reported only when a file wrote both
 * and the grace comes from the same file as the limit or a later one: a grace of an earlier
 * layer (the built-in default, the system file, a drop-in) simply wins over a short limit of a
 * later one, so "max-age 1d" is valid alone and under the shipped /etc/qgc/qgc.conf alike,
 * which writes the built-in values (issue 11). */
static int config_check_policy(ConfigParse *cp, const Policy *p, const PolicyOrigin *o,
                               unsigned mask, const char *ctx) {
#define WRITTEN(k) (o->where[k] && !streq(o->where[k], CONFIG_BUILTIN))
#define TOUCHES(a, b)                                                                              \
        ((mask & ((1u << (a)) | (1u << (b)))) && WRITTEN(a) && WRITTEN(b) &&                      \
         config_origin_rank(cp->c, o->where[a]) >= config_origin_rank(cp->c, o->where[b]))
        int r = 0;

        if (p->max_age > 0 && p->min_age > p->max_age && TOUCHES(POLICY_KEY_MIN_AGE, POLICY_KEY_MAX_AGE))
                r = config_check_pair(cp, p, o, ctx, POLICY_KEY_MIN_AGE, POLICY_KEY_MAX_AGE,
                                      "longer than");
        if (r != -ENOMEM && p->max_age > 0 && p->min_idle > p->max_age &&
            TOUCHES(POLICY_KEY_MIN_IDLE, POLICY_KEY_MAX_AGE))
                r = config_check_pair(cp, p, o, ctx, POLICY_KEY_MIN_IDLE, POLICY_KEY_MAX_AGE,
                                      "longer than");
        if (r != -ENOMEM && p->archive_max_age > 0 && p->min_age > p->archive_max_age &&
            TOUCHES(POLICY_KEY_MIN_AGE, POLICY_KEY_ARCHIVE_MAX_AGE))
                r = config_check_pair(cp, p, o, ctx, POLICY_KEY_MIN_AGE,
                                      POLICY_KEY_ARCHIVE_MAX_AGE, "longer than");
        if (r != -ENOMEM && p->max_sessions > 0 && p->keep_latest > p->max_sessions &&
            TOUCHES(POLICY_KEY_KEEP_LATEST, POLICY_KEY_MAX_SESSIONS))
                r = config_check_pair(cp, p, o, ctx, POLICY_KEY_KEEP_LATEST,
                                      POLICY_KEY_MAX_SESSIONS, "more than");
        return r == -ENOMEM ? r : 0;
#undef TOUCHES
#undef WRITTEN
}

static int config_check_tree(ConfigParse *cp) {
        const TreeLimits *t = &cp->c->tree;
        char a[FORMAT_SIZE_EXACT_MAX], b[FORMAT_SIZE_EXACT_MAX];
        const char *loc;
        int r = 0;

        if (t->low_watermark == 0)
                return 0;
        loc = config_parse_owns(cp, t->origin_low_watermark) ? t->origin_low_watermark
                                                                  : t->origin_max_size;
        if (t->max_size == 0)
                r = config_error(cp->errs, loc,
                                 "tree low-watermark %s (%s) is set but tree max-size is off",
                                 format_size_exact(a, sizeof a, t->low_watermark),
                                 t->origin_low_watermark);
        else if (t->low_watermark >= t->max_size)
                r = config_error(cp->errs, loc,
                                 "tree low-watermark %s (%s) is not below max-size %s (%s)",
                                 format_size_exact(a, sizeof a, t->low_watermark),
                                 t->origin_low_watermark,
                                 format_size_exact(b, sizeof b, t->max_size), t->origin_max_size);
        return r == -ENOMEM ? r : 0;
}

static int config_check(ConfigParse *cp) {
        Config *c = cp->c;
        int r;

        r = config_check_policy(cp, &c->defaults, &c->defaults_origin, ~0u, "");
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->n_projects; i++) {
                _cleanup_free_ char *ctx = strprintf("project '%s': ", c->projects[i].pattern);
                if (!ctx)
                        return -ENOMEM;
                r = config_check_policy(cp, &c->projects[i].policy, &c->projects[i].origin,
                                        c->projects[i].set_mask, ctx);
                if (r < 0)
                        return r;
        }
        return config_check_tree(cp);
}

/* ------------------------------------------------------------------ applying */

static int config_apply_root(ConfigParse *cp, const config_setting_t *root) {
        int n = config_setting_length(root);
        int r;

        for (int i = 0; i < n; i++) {
                const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
                const char *name = config_setting_name(s);
                _cleanup_free_ char *loc = config_loc(cp, s);

                if (!loc)
                        return -ENOMEM;
                if (streq(name, "projects")) {
                        r = config_parse_projects(cp, s);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!streq(name, "defaults") && !streq(name, "tree") && !streq(name, "admin")) {
                        r = config_unknown(cp->errs, loc, name, "the top level", config_top_names,
                                           ELEMENTSOF(config_top_names));
                } else if (!config_setting_is_group(s))
                        r = config_error(cp->errs, loc, "%s must be a group: %s = { ... };", name,
                                         name);
                else if (streq(name, "defaults"))
                        r = config_parse_policy_group(cp, s, "defaults", &cp->c->defaults,
                                                      &cp->c->defaults_origin, NULL);
                else if (streq(name, "tree"))
                        r = config_parse_tree(cp, s);
                else if (!cp->allow_admin)
                        r = config_error(cp->errs, loc,
                                         "admin settings are only allowed in the system file");
                else
                        r = config_parse_admin(cp, s);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

/* Pair every scalar setting, in document order, with the literal the scanner saw (as the
 * setting's hook). A setting libconfig read from a file of its own, a kind that differs, or a
 * count that differs means the two scanners disagree: -EBADMSG, and the file is refused. */
static int config_pair_values(config_setting_t *s, const ConfText *src, size_t *i) {
        int type = config_setting_type(s);
        const ConfToken *t;
        long long v;
        bool ok;

        if (config_setting_source_file(s))
                return -EBADMSG; /* libconfig opened an include itself: never */
        if (type == CONFIG_TYPE_GROUP || type == CONFIG_TYPE_LIST || type == CONFIG_TYPE_ARRAY) {
                int n = config_setting_length(s);
                for (int j = 0; j < n; j++) {
                        int r = config_pair_values(config_setting_get_elem(s, (unsigned)j), src, i);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (*i >= src->n_tokens)
                return -EBADMSG;
        t = &src->tokens[(*i)++];
        switch (type) {
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
                ok = t->kind == CONF_TOKEN_INTEGER && t->raw &&
                     conftext_integer(t->raw, &v) != -EINVAL;
                /* where libconfig cannot go wrong, it must agree */
                if (ok && conftext_integer(t->raw, &v) >= 0 && v >= INT32_MIN && v <= INT32_MAX)
                        ok = v == config_setting_get_int64(s);
                break;
        case CONFIG_TYPE_FLOAT:
                ok = t->kind == CONF_TOKEN_FLOAT;
                break;
        case CONFIG_TYPE_STRING:
                ok = t->kind == CONF_TOKEN_STRING;
                break;
        case CONFIG_TYPE_BOOL:
                ok = t->kind == CONF_TOKEN_BOOL;
                break;
        default:
                ok = false;
        }
        if (!ok)
                return -EBADMSG;
        config_setting_set_hook(s, (void *)t);
        return 0;
}

/* Record the files of src in c->files, in order. */
static int config_add_files(Config *c, const ConfText *src) {
        size_t n = c->n_files + src->n_files;
        char **files, **from;

        files = realloc(c->files, MAX(n, (size_t)1) * sizeof(char *));
        if (!files)
                return -ENOMEM;
        c->files = files;
        from = realloc(c->files_from, MAX(n, (size_t)1) * sizeof(char *));
        if (!from)
                return -ENOMEM;
        c->files_from = from;
        for (size_t i = 0; i < src->n_files; i++) {
                char *f = strdup(src->files[i].path);
                char *w = strdup_or_null(src->files[i].included_at);

                if (!f || (src->files[i].included_at && !w)) {
                        free(f);
                        free(w);
                        return -ENOMEM;
                }
                c->files[c->n_files] = f;
                c->files_from[c->n_files++] = w;
        }
        return 0;
}

/* Parse src (a file with its includes expanded) and apply it on top of *c. */
static int config_apply_text(Config *c, const ConfText *src, bool allow_admin, ConfigErrors *errs) {
        ConfigParse cp = { .c = c, .name = src->files[0].path, .src = src,
                           .allow_admin = allow_admin, .errs = errs };
        size_t n_before = errs->n, n_paired = 0;
        config_t cf;
        int r;

        r = config_add_files(c, src);
        if (r < 0)
                return r;

        /* no include directory: qgc expanded every @include, libconfig opens nothing */
        config_init(&cf);
        if (!config_read_string(&cf, src->text)) {
                _cleanup_free_ char *loc = conftext_loc(src, (unsigned)MAX(config_error_line(&cf), 0));
                r = loc ? config_errors_add(errs, "%s: %s", loc, config_error_text(&cf)) : -ENOMEM;
                config_destroy(&cf);
                return r < 0 ? -ENOMEM : -EINVAL;
        }
        r = config_pair_values(config_root_setting(&cf), src, &n_paired);
        if (r >= 0 && n_paired != src->n_tokens)
                r = -EBADMSG;
        if (r < 0) {
                config_destroy(&cf);
                return config_errors_add(errs,
                                         "%s: cannot match the values read with the text; "
                                         "refusing the file",
                                         cp.name) < 0
                               ? -ENOMEM
                               : -EINVAL;
        }
        r = config_apply_root(&cp, config_root_setting(&cf));
        /* every string was copied out above: libconfig's memory goes now */
        config_destroy(&cf);
        if (r >= 0)
                r = config_inherit_defaults(c);
        if (r >= 0)
                r = config_check(&cp);
        for (size_t i = 0; i < cp.n_seen; i++)
                free(cp.seen_loc[i]);
        free(cp.seen_loc);
        free(cp.seen);
        if (r < 0)
                return r;
        return errs->n > n_before ? -EINVAL : 0;
}

int config_parse_string(Config *c, const char *text, const char *name, ConfigErrors *errs) {
        _cleanup_(conftext_done) ConfText src = {};
        int r;

        r = conftext_from_string(&src, text, name ? name : "<string>", errs);
        if (r < 0)
                return r;
        return config_apply_text(c, &src, c->n_files == 0, errs);
}

static int config_load(Config *c, const char *path, bool allow_admin, bool regular_only,
                       ConfigErrors *errs) {
        _cleanup_(conftext_done) ConfText src = {};
        int r;

        r = conftext_load(&src, path, regular_only, errs);
        if (r < 0)
                return r;
        return config_apply_text(c, &src, allow_admin, errs);
}

int config_load_file(Config *c, const char *path, ConfigErrors *errs) {
        return config_load(c, path, c->n_files == 0, /* regular_only= */ false, errs);
}

int config_load_system_file(Config *c, const char *path, ConfigErrors *errs) {
        return config_load(c, path, c->n_files == 0, /* regular_only= */ true, errs);
}

static int config_cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Free a NULL-terminated array of strings (for _cleanup_). */
static void config_names_freep(char ***p) {
        for (char **q = *p; q && *q; q++)
                free(*q);
        free(*p);
}

int config_load_dropins(Config *c, const char *dir, ConfigErrors *errs) {
        _cleanup_(config_names_freep) char **names = NULL;
        size_t n = 0, alloc = 0;
        DIR *d;
        struct dirent *de;
        int r = 0, applied = 0;

        d = opendir(dir);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);

                if (de->d_name[0] == '.' || len <= 5 || !streq(de->d_name + len - 5, ".conf"))
                        continue;
                if (greedy_realloc((void **)&names, &alloc, n + 2, sizeof(char *)) < 0 ||
                    !(names[n] = strdup(de->d_name))) {
                        closedir(d);
                        return -ENOMEM;
                }
                names[++n] = NULL;
        }
        closedir(d);
        if (n == 0)
                return 0;
        qsort(names, n, sizeof(char *), config_cmp_names);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = path_join(dir, names[i]);
                int k;

                if (!path)
                        return -ENOMEM;
                k = config_load(c, path, /* allow_admin= */ true, /* regular_only= */ true, errs);
                if (k == -ENOENT)
                        continue; /* removed meanwhile */
                if (k < 0 && r >= 0)
                        r = k;
                else if (k >= 0)
                        applied++;
        }
        return r < 0 ? r : applied;
}

int config_load_user_file(Config *c, const char *path, ConfigErrors *errs) {
        return config_load(c, path, /* allow_admin= */ false, /* regular_only= */ true, errs);
}

/* ------------------------------------------------------------------ explain */

static int config_explain_policy(const Policy *p, const PolicyOrigin *o, unsigned set_mask,
                                 bool is_project, FILE *f) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++) {
                char v[32];
                bool inherited = is_project && !(set_mask & (1u << k));

                fprintf(f, "        %-22s %-10s %s%s\n", config_keys[k].name,
                        config_format_value(&config_keys[k], p, v, sizeof v),
                        inherited ? "from defaults: " : "", o->where[k] ? o->where[k] : "?");
        }
        return 0;
}

int config_explain(const Config *c, FILE *f) {
        char a[FORMAT_SIZE_EXACT_MAX], b[FORMAT_SIZE_EXACT_MAX], kf[32];
        const TreeLimits *t = &c->tree;

        fputs("# effective qgc policy; each value is followed by where it was set\n", f);
        fputs("files:", f);
        if (c->n_files == 0)
                fputs(" none (built-in defaults only)", f);
        for (size_t i = 0; i < c->n_files; i++)
                fprintf(f, " %s", c->files[i]);
        fputc('\n', f);
        /* every file pulled in, in the order read, with the @include that did it */
        for (size_t i = 0; c->files_from && i < c->n_files; i++)
                if (c->files_from[i])
                        fprintf(f, "        %s included from %s\n", c->files[i], c->files_from[i]);
        fputs("\ndefaults:\n", f);
        config_explain_policy(&c->defaults, &c->defaults_origin, ~0u, false, f);

        if (!t->keep_free.is_set)
                snprintf(kf, sizeof kf, "off");
        else if (t->keep_free.is_percent)
                snprintf(kf, sizeof kf, "%g%%", t->keep_free.percent);
        else
                format_size_exact(kf, sizeof kf, t->keep_free.bytes);
        fputs("\ntree:  # disk caps always delete (action does not apply)\n", f);
        fprintf(f, "        %-22s %-10s %s\n", "max-size",
                t->max_size ? format_size_exact(a, sizeof a, t->max_size) : "off",
                t->origin_max_size ? t->origin_max_size : "?");
        fprintf(f, "        %-22s %-10s %s\n", "low-watermark",
                t->low_watermark ? format_size_exact(b, sizeof b, t->low_watermark) : "off",
                t->origin_low_watermark ? t->origin_low_watermark : "?");
        fprintf(f, "        %-22s %-10s %s\n", "keep-free", kf,
                t->origin_keep_free ? t->origin_keep_free : "?");
        fprintf(f, "        %-22s %-10s %s\n", "count", t->count_allocated ? "allocated" : "apparent",
                t->origin_count ? t->origin_count : "?");

        fputs("\nadmin:\n", f);
        fprintf(f, "        %-22s %-10s %s\n", "allow-user-files",
                c->allow_user_files ? "true" : "false",
                c->origin_allow_user_files ? c->origin_allow_user_files : "?");
        StrBuf dirs = {};
        for (size_t i = 0; i < c->n_user_dirs; i++)
                if (strbuf_printf(&dirs, "%s%s", i > 0 ? "," : "", c->user_dirs[i]) < 0) {
                        strbuf_done(&dirs);
                        return -ENOMEM;
                }
        fprintf(f, "        %-22s %-10s %s\n", "user-dirs", dirs.buf ? dirs.buf : "none",
                c->origin_user_dirs ? c->origin_user_dirs : "?");
        strbuf_done(&dirs);
        fprintf(f, "        %-22s %-10s %s\n", "metrics-file",
                c->metrics_file ? c->metrics_file : "none",
                c->origin_metrics_file ? c->origin_metrics_file : CONFIG_BUILTIN);

        for (size_t i = 0; i < c->n_projects; i++) {
                const ProjectOverride *o = &c->projects[i];
                fprintf(f, "\nproject '%s' (%s, %s:%d):\n", o->pattern,
                        o->is_glob ? "glob" : "exact", o->file ? o->file : "?", o->line);
                if (o->policy.protect)
                        fputs("        # protected: no rule touches this project (its own rules, "
                              "the tree caps, the reclaim of its orphans)\n",
                              f);
                config_explain_policy(&o->policy, &o->origin, o->set_mask, true, f);
        }
        if (c->n_projects > 0)
                fputs("\n# matching: an exact path beats any glob; among globs the one with the "
                      "most literal characters wins, then the later one\n",
                      f);
        return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------------ root mode: merge */

/* Does u keep more than a for key k? */
static bool config_key_looser(const ConfigKeyInfo *k, const Policy *u, const Policy *a) {
        const void *fu = config_field_const(u, k), *fa = config_field_const(a, k);

        switch (k->type) {
        case CONFIG_VALUE_ACTION:
                return *(const PolicyAction *)fu == POLICY_ACTION_ARCHIVE &&
                       *(const PolicyAction *)fa == POLICY_ACTION_DELETE;
        case CONFIG_VALUE_BOOL:
                return *(const bool *)fu && !*(const bool *)fa;
        case CONFIG_VALUE_DURATION: {
                msec_t x = *(const msec_t *)fu, y = *(const msec_t *)fa;
                if (k->tighten == CONFIG_TIGHTEN_LIMIT)
                        return y != 0 && (x == 0 || x > y);
                return x > y;
        }
        case CONFIG_VALUE_COUNT:
        case CONFIG_VALUE_SIZE: {
                uint64_t x = *(const uint64_t *)fu, y = *(const uint64_t *)fa;
                if (k->tighten == CONFIG_TIGHTEN_LIMIT)
                        return y != 0 && (x == 0 || x > y);
                return x > y;
        }
        case CONFIG_VALUE_PERCENT: {
                double x = *(const double *)fu, y = *(const double *)fa;
                return y != 0 && (x == 0 || x > y);
        }
        }
        return false;
}

/* The tightest of several system policies, with (borrowed) origins. */
typedef struct ConfigBound {
        Policy policy;
        const char *where[_POLICY_KEY_MAX];
} ConfigBound;

static void config_bound_fold(ConfigBound *b, const Policy *p, const PolicyOrigin *o) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                if (config_key_looser(&config_keys[k], &b->policy, p)) {
                        config_key_copy(&config_keys[k], &b->policy, p);
                        b->where[k] = o->where[k];
                }
}

/* Might two project patterns match a common path? Conservative: true unless proven apart. */
static bool config_patterns_overlap(const ProjectOverride *a, const ProjectOverride *b) {
        size_t la, lb;

        if (!a->is_glob && !b->is_glob)
                return config_path_equal(a->pattern, b->pattern);
        if (!a->is_glob)
                return fnmatch(b->pattern, a->pattern, 0) == 0;
        if (!b->is_glob)
                return fnmatch(a->pattern, b->pattern, 0) == 0;
        la = config_pattern_prefix(a->pattern);
        lb = config_pattern_prefix(b->pattern);
        return strneq(a->pattern, b->pattern, MIN(la, lb));
}

static void config_bound_from(ConfigBound *b, const Policy *p, const PolicyOrigin *o) {
        b->policy = *p;
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                b->where[k] = o->where[k];
}

/* The system's limits a merged override must not exceed. Wherever an override wins in the
 * merged config, the system's own winner there is: the same block, if the system has it; for a
 * new exact path, the system's policy for that path; for a new glob, the system defaults or a
 * system glob it might overlap and beats (no more literal characters; exact paths beat it).
 * Overlap of two globs is judged by their literal prefixes, so the bound errs on the tight
 * side. */
static void config_bound_for(const Config *system, const ProjectOverride *po, ConfigBound *ret) {
        size_t n = config_pattern_literals(po->pattern);
        const ProjectOverride *so;

        for (size_t i = 0; i < system->n_projects; i++)
                if (streq(system->projects[i].pattern, po->pattern)) {
                        config_bound_from(ret, &system->projects[i].policy,
                                          &system->projects[i].origin);
                        return;
                }
        if (!po->is_glob) {
                so = config_override_for(system, po->pattern);
                if (so)
                        config_bound_from(ret, &so->policy, &so->origin);
                else
                        config_bound_from(ret, &system->defaults, &system->defaults_origin);
                return;
        }
        config_bound_from(ret, &system->defaults, &system->defaults_origin);
        for (size_t i = 0; i < system->n_projects; i++) {
                so = &system->projects[i];
                if (so->is_glob && config_pattern_literals(so->pattern) <= n &&
                    config_patterns_overlap(so, po))
                        config_bound_fold(ret, &so->policy, &so->origin);
        }
}

/* Clamp every key of p looser than the bound; warn at the value's origin. */
static int config_clamp_policy(Policy *p, PolicyOrigin *o, unsigned *mask, const ConfigBound *b,
                               const char *ctx, char *const *user_files, size_t n_user_files,
                               const char *fallback_loc, ConfigErrors *errs) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++) {
                const ConfigKeyInfo *ki = &config_keys[k];
                char vu[32], va[32];
                char *origin;
                const char *loc;

                if (!config_key_looser(ki, p, &b->policy))
                        continue;
                /* point at the user's line; a value the user did not write is blamed on the block */
                loc = config_origin_in_files(o->where[k], user_files, n_user_files) ? o->where[k]
                                                                                   : fallback_loc;
                config_format_value(ki, p, vu, sizeof vu);
                config_format_value(ki, &b->policy, va, sizeof va);
                if (config_errors_add(errs,
                                      "%s: warning: %s%s %s keeps more than the system policy "
                                      "allows (%s %s, %s); using %s",
                                      loc, ctx, ki->name, vu, ki->name, va, b->where[k], va) < 0)
                        return -ENOMEM;
                origin = strprintf("%s (clamped to the system policy)", b->where[k]);
                if (!origin)
                        return -ENOMEM;
                config_key_copy(ki, p, &b->policy);
                free(o->where[k]);
                o->where[k] = origin;
                if (mask)
                        *mask |= 1u << k;
        }
        return 0;
}

static int config_clamp_tree(TreeLimits *t, const TreeLimits *a, const char *user_file,
                             ConfigErrors *errs) {
        char x[FORMAT_SIZE_EXACT_MAX], y[FORMAT_SIZE_EXACT_MAX];
        uint64_t low_u, low_a;

        if (a->max_size != 0 && (t->max_size == 0 || t->max_size > a->max_size)) {
                if (config_errors_add(errs,
                                      "%s: warning: tree max-size %s keeps more than the system "
                                      "policy allows (%s, %s); using it",
                                      t->origin_max_size, t->max_size ? format_size_exact(x, sizeof x, t->max_size) : "off",
                                      format_size_exact(y, sizeof y, a->max_size),
                                      a->origin_max_size) < 0 ||
                    config_set_str(&t->origin_max_size, a->origin_max_size) < 0)
                        return -ENOMEM;
                t->max_size = a->max_size;
        }
        /* watermarks compare as effective values (0 = the max-size) */
        low_u = t->low_watermark ? t->low_watermark : t->max_size;
        low_a = a->low_watermark ? a->low_watermark : a->max_size;
        if (low_a != 0 && (low_u == 0 || low_u > low_a)) {
                t->low_watermark = low_a >= t->max_size ? 0 : low_a;
                if (config_set_str(&t->origin_low_watermark, a->origin_low_watermark) < 0)
                        return -ENOMEM;
        }
        if (a->keep_free.is_set) {
                const SizeSpec *u = &t->keep_free, *s = &a->keep_free;
                bool looser = !u->is_set || u->is_percent != s->is_percent ||
                              (u->is_percent ? u->percent < s->percent : u->bytes < s->bytes);
                if (looser) {
                        if (u->is_set &&
                            config_errors_add(errs,
                                              "%s: warning: tree keep-free is less than or not "
                                              "comparable with the system policy's (%s); using "
                                              "the system's",
                                              t->origin_keep_free, a->origin_keep_free) < 0)
                                return -ENOMEM;
                        t->keep_free = a->keep_free;
                        if (config_set_str(&t->origin_keep_free, a->origin_keep_free) < 0)
                                return -ENOMEM;
                }
        }
        if (a->count_allocated && !t->count_allocated) {
                t->count_allocated = true;
                if (config_errors_add(errs,
                                      "%s: warning: tree count \"apparent\" keeps more than the "
                                      "system policy allows (\"allocated\", %s); using it",
                                      t->origin_count ? t->origin_count : user_file,
                                      a->origin_count) < 0 ||
                    config_set_str(&t->origin_count, a->origin_count) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Clamp the layered user config m to the system's limits, key by key. The user's file and its
 * includes are m->files from first_user_file on. */
static int config_clamp(Config *m, const Config *system, const char *user_file,
                        size_t first_user_file, ConfigErrors *errs) {
        char *const *ufiles = m->files + first_user_file;
        size_t n_ufiles = m->n_files - first_user_file;
        ConfigBound b;
        int r;

        config_bound_from(&b, &system->defaults, &system->defaults_origin);
        r = config_clamp_policy(&m->defaults, &m->defaults_origin, NULL, &b, "", ufiles, n_ufiles,
                                user_file, errs);
        if (r < 0)
                return r;
        r = config_inherit_defaults(m);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_projects; i++) {
                ProjectOverride *po = &m->projects[i];
                _cleanup_free_ char *ctx = strprintf("project '%s': ", po->pattern);
                _cleanup_free_ char *loc = strprintf("%s:%d", po->file, po->line);

                if (!ctx || !loc)
                        return -ENOMEM;
                config_bound_for(system, po, &b);
                r = config_clamp_policy(&po->policy, &po->origin, &po->set_mask, &b, ctx, ufiles,
                                        n_ufiles, loc, errs);
                if (r < 0)
                        return r;
        }
        return config_clamp_tree(&m->tree, &system->tree, user_file, errs);
}

int config_merge_user(Config *merged, const Config *system, const char *user_file,
                      ConfigErrors *errs) {
        Config m = {};
        size_t first;
        int r;

        r = config_copy(system, &m);
        if (r < 0)
                return r;
        if (!system->allow_user_files || !user_file) {
                *merged = m;
                return 0;
        }
        first = m.n_files;
        r = config_load_user_file(&m, user_file, errs);
        if (r == -ENOENT) { /* nothing was applied */
                *merged = m;
                return 0;
        }
        if (r >= 0)
                r = config_clamp(&m, system, user_file, first, errs);
        if (r < 0) {
                config_done(&m);
                return r;
        }
        /* the admin's settings are the system's whatever the user wrote (the user file may
         * not contain them anyway) */
        m.allow_user_files = system->allow_user_files;
        *merged = m;
        return 1;
}
