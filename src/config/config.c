/* config.c: the Config value. The key table of qgc.conf (every key of the defaults/project,
 * tree and admin groups with its type, bounds, built-in default, how a user's file may tighten
 * it, and a line of help; tmux's options-table.c is the model) and the typed access to a key's
 * value; the built-in default, copy and free; the error list; and which project block a
 * project path uses (exact paths, globs, specificity). */
#include "autoconf.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"
#include "util.h"

#define CONFIG_DURATION_MAX (INT64_C(36500) * MSEC_PER_DAY) /* 100 years */
#define CONFIG_COUNT_MAX UINT64_C(1000000000)

static const char *const config_action_words[_POLICY_ACTION_MAX] = {
        [POLICY_ACTION_ARCHIVE] = "archive",
        [POLICY_ACTION_DELETE] = "delete",
};
static const char *const config_count_words[] = { "apparent", "allocated" };
static const char *const config_stores_words[_CONFIG_STORES_MAX] = {
        [CONFIG_STORES_QWEN] = "qwen",
        [CONFIG_STORES_DEEPCODE] = "deepcode",
        [CONFIG_STORES_ALL] = "all",
};

_Static_assert(_POLICY_KEY_MAX <= 32, "a project block's set_mask has one bit per policy key");

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
            WORDS(config_action_words)),
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
        KEY(POLICY_KEY_COMPACT_MIN_IDLE, "compact-min-idle", CONFIG_VALUE_DURATION,
            compact_min_idle, CONFIG_OFF_INFINITY, MSEC_PER_HOUR, CONFIG_DURATION_MAX,
            CONFIG_TIGHTEN_LESS, MSEC_PER_DAY,
            "a Deep Code checkpoint repository not written for longer is compacted"),

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
        CKEY(CONFIG_KEY_STORES, CONFIG_SCOPE_ADMIN, "stores", CONFIG_VALUE_CHOICE, stores,
             origin_stores, CONFIG_OFF_NO, 0, 0, CONFIG_TIGHTEN_SYSTEM, CONFIG_STORES_QWEN,
             "the agents' stores found in users' homes: qwen, deepcode or all",
             WORDS(config_stores_words)),
};

const ConfigKeyInfo *config_key_find(ConfigScope scope, const char *name) {
        for (size_t i = 0; name && i < _CONFIG_KEY_MAX; i++)
                if (config_keys[i].scope == scope && streq(config_keys[i].name, name))
                        return &config_keys[i];
        return NULL;
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

static void config_key_set_default(const ConfigKeyInfo *k, void *base) {
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
                        util_format_duration_exact(buf, n, d);
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
                        util_format_size_exact(buf, n, *(const uint64_t *)f);
                break;
        case CONFIG_VALUE_SIZE_OR_PERCENT: {
                const SizeSpec *sz = f;
                if (!sz->is_set)
                        snprintf(buf, n, "off");
                else if (sz->is_percent)
                        snprintf(buf, n, "%g%%", sz->percent);
                else
                        util_format_size_exact(buf, n, sz->bytes);
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

/* ------------------------------------------------------------------ the value, errors */

void config_errors_done(ConfigErrors *e) {
        config_strv_free(e->msgs, e->n);
        *e = (ConfigErrors){};
}

int config_error(ConfigErrors *e, const char *loc, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (n < 0 ||
            util_greedy_realloc((void **)&e->msgs, &e->alloc, e->n + 1, sizeof(char *)) < 0)
                return -ENOMEM;
        e->msgs[e->n] = loc ? util_strprintf("%s: %s", loc, msg) : TAKE_PTR(msg);
        if (!e->msgs[e->n])
                return -ENOMEM;
        e->n++;
        return -EINVAL;
}

/* ------------------------------------------------------------------ lifecycle */

void config_origin_done(PolicyOrigin *o) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                free(o->where[k]);
        *o = (PolicyOrigin){};
}

int config_set_str(char **p, const char *s) {
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

void config_strv_free(char **v, size_t n) {
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
        for (size_t i = _POLICY_KEY_MAX; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];

                free(*config_key_origin(k, c, NULL));
                if (k->type == CONFIG_VALUE_PATH)
                        free(*(char **)config_key_ptr(k, c));
                else if (k->type == CONFIG_VALUE_PATH_LIST)
                        config_strv_free(*(char ***)config_key_ptr(k, c), *config_key_count(k, c));
        }
        config_strv_free(c->files, c->n_files);
        config_strv_free(c->files_from, c->n_files);
        *c = (Config){};
}

int config_init_default(Config *c) {
        *c = (Config){};
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];

                config_key_set_default(k, k->scope == CONFIG_SCOPE_POLICY ? (void *)&c->defaults
                                                                          : (void *)c);
                char **origin = config_key_origin(k, c, &c->defaults_origin);

                if (config_set_str(origin, CONFIG_BUILTIN) < 0) {
                        config_done(c);
                        return -ENOMEM;
                }
        }
        return 0;
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
                .user_timeout = src->user_timeout,
                .stores = src->stores,
        };
        bool ok;

        /* the struct copies above duplicated borrowed pointers: clear before filling */
        for (size_t i = _POLICY_KEY_MAX; i < _CONFIG_KEY_MAX; i++)
                *config_key_origin(&config_keys[i], &c, NULL) = NULL;
        ok = config_origin_copy(&src->defaults_origin, &c.defaults_origin) >= 0;
        for (size_t i = _POLICY_KEY_MAX; ok && i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];
                const char *so = *config_key_origin(k, (Config *)src, NULL);
                char **d = config_key_origin(k, &c, NULL);

                *d = util_strdup_or_null(so);
                ok = *d || !so;
                if (ok && k->type == CONFIG_VALUE_PATH) {
                        const char *v = *(char *const *)config_key_ptr_const(k, src);
                        char **dv = config_key_ptr(k, &c);

                        *dv = util_strdup_or_null(v);
                        ok = *dv || !v;
                } else if (ok && k->type == CONFIG_VALUE_PATH_LIST) {
                        size_t n = *config_key_count(k, (Config *)src);

                        ok = config_strv_copy(*(char **const *)config_key_ptr_const(k, src), n,
                                              config_key_ptr(k, &c)) >= 0;
                        if (ok)
                                *config_key_count(k, &c) = n;
                }
        }
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
                d->file = util_strdup_or_null(s->file);
                ok = d->pattern && (d->file || !s->file) &&
                     config_origin_copy(&s->origin, &d->origin) >= 0;
        }
        if (!ok) {
                config_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

/* ------------------------------------------------------------------ project patterns */

size_t config_pattern_literals(const char *p) {
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

/* Compare paths ignoring trailing slashes. */
bool config_path_equal(const char *a, const char *b) {
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

int config_inherit_defaults(Config *c) {
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

bool config_origin_in_files(const char *origin, char *const *files, size_t n) {
        for (size_t i = 0; origin && i < n; i++) {
                size_t l = strlen(files[i]);
                if (strneq(origin, files[i], l) && origin[l] == ':')
                        return true;
        }
        return false;
}

