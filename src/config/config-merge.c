/* config-merge.c: root mode (--all-users): a user's own file layered on the system policy,
 * where the user may only tighten (keep less, never more). Each key of the table says how it
 * tightens; a looser user value is clamped to the system's with a warning at its line. See
 * "USER FILES IN ROOT MODE" in qgc.conf(5). */
#include "autoconf.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"
#include "util.h"

/* Does u keep more than a for key k? Both are bases as for config_key_ptr(). */
static bool config_merge_looser(const ConfigKeyInfo *k, const void *u, const void *a) {
        uint64_t x = config_key_number(k, u), y = config_key_number(k, a);

        switch (k->tighten) {
        case CONFIG_TIGHTEN_CHOICE:
                return x < y;
        case CONFIG_TIGHTEN_BOOL:
                return x && !y;
        case CONFIG_TIGHTEN_LIMIT:
                if (k->type == CONFIG_VALUE_PERCENT) {
                        double dx = *(const double *)config_key_ptr_const(k, u);
                        double dy = *(const double *)config_key_ptr_const(k, a);
                        return dy != 0 && (dx == 0 || dx > dy);
                }
                return y != 0 && (x == 0 || x > y);
        case CONFIG_TIGHTEN_LESS:
                return x > y;
        case CONFIG_TIGHTEN_WATERMARK: /* config_merge_clamp_tree() */
        case CONFIG_TIGHTEN_FLOOR:
        case CONFIG_TIGHTEN_SYSTEM:
                break;
        }
        return false;
}

/* The tightest of several system policies, with (borrowed) origins. */
typedef struct ConfigMergeBound {
        Policy policy;
        const char *where[_POLICY_KEY_MAX];
} ConfigMergeBound;

static void config_merge_bound_fold(ConfigMergeBound *b, const Policy *p, const PolicyOrigin *o) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                if (config_merge_looser(&config_keys[k], &b->policy, p)) {
                        config_key_copy(&config_keys[k], &b->policy, p);
                        b->where[k] = o->where[k];
                }
}

/* Might two project patterns match a common path? Conservative: true unless proven apart. */
static bool config_merge_overlap(const ProjectOverride *a, const ProjectOverride *b) {
        size_t la, lb;

        if (!a->is_glob && !b->is_glob)
                return config_path_equal(a->pattern, b->pattern);
        if (!a->is_glob)
                return fnmatch(b->pattern, a->pattern, 0) == 0;
        if (!b->is_glob)
                return fnmatch(a->pattern, b->pattern, 0) == 0;
        la = strcspn(a->pattern, "*?[\\"); /* the literal prefixes */
        lb = strcspn(b->pattern, "*?[\\");
        return strneq(a->pattern, b->pattern, MIN(la, lb));
}

static void config_merge_bound_from(ConfigMergeBound *b, const Policy *p, const PolicyOrigin *o) {
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
static void config_merge_bound_for(const Config *system, const ProjectOverride *po,
                                   ConfigMergeBound *ret) {
        size_t n = config_pattern_literals(po->pattern);
        const ProjectOverride *so;

        for (size_t i = 0; i < system->n_projects; i++)
                if (streq(system->projects[i].pattern, po->pattern)) {
                        config_merge_bound_from(ret, &system->projects[i].policy,
                                          &system->projects[i].origin);
                        return;
                }
        if (!po->is_glob) {
                so = config_override_for(system, po->pattern);
                if (so)
                        config_merge_bound_from(ret, &so->policy, &so->origin);
                else
                        config_merge_bound_from(ret, &system->defaults, &system->defaults_origin);
                return;
        }
        config_merge_bound_from(ret, &system->defaults, &system->defaults_origin);
        for (size_t i = 0; i < system->n_projects; i++) {
                so = &system->projects[i];
                if (so->is_glob && config_pattern_literals(so->pattern) <= n &&
                    config_merge_overlap(so, po))
                        config_merge_bound_fold(ret, &so->policy, &so->origin);
        }
}

/* Clamp every key of p looser than the bound; warn at the value's origin. */
static int config_merge_clamp_policy(Policy *p, PolicyOrigin *o, unsigned *mask,
                                     const ConfigMergeBound *b, const char *ctx,
                                     char *const *user_files, size_t n_user_files,
                                     const char *fallback_loc, ConfigErrors *errs) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++) {
                const ConfigKeyInfo *ki = &config_keys[k];
                char vu[32], va[32];
                char *origin;
                const char *loc;

                if (!config_merge_looser(ki, p, &b->policy))
                        continue;
                /* the user's line; a value the user did not write is blamed on the block */
                loc = config_origin_in_files(o->where[k], user_files, n_user_files) ? o->where[k]
                                                                                   : fallback_loc;
                config_key_format_buf(ki, p, vu, sizeof vu);
                config_key_format_buf(ki, &b->policy, va, sizeof va);
                if (config_error(errs, loc,
                                 "warning: %s%s %s keeps more than the system policy allows (%s "
                                 "%s, %s); using %s",
                                 ctx, ki->name, vu, ki->name, va, b->where[k], va) == -ENOMEM)
                        return -ENOMEM;
                origin = util_strprintf("%s (clamped to the system policy)", b->where[k]);
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

/* Clamp the tree keys of m to the system's, each as the table says it tightens. */
static int config_merge_clamp_tree(Config *m, const Config *system, const char *user_file,
                                   ConfigErrors *errs) {
        TreeLimits *t = &m->tree;
        const TreeLimits *a = &system->tree;

        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];
                char **uo, x[64], y[64];
                const char *ao, *loc;

                if (k->scope != CONFIG_SCOPE_TREE)
                        continue;
                uo = config_key_origin(k, m, NULL);
                ao = *config_key_origin(k, (Config *)system, NULL);
                loc = *uo ? *uo : user_file;
                switch (k->tighten) {
                case CONFIG_TIGHTEN_LIMIT:
                case CONFIG_TIGHTEN_CHOICE: {
                        /* a choice's values are quoted in the warning */
                        const char *q = k->tighten == CONFIG_TIGHTEN_CHOICE ? "\"" : "";

                        if (!config_merge_looser(k, m, system))
                                break;
                        if (config_error(errs, loc,
                                         "warning: tree %s %s%s%s keeps more than the system "
                                         "policy allows (%s%s%s, %s); using it",
                                         k->name, q, config_key_format_buf(k, m, x, sizeof x), q,
                                         q, config_key_format_buf(k, system, y, sizeof y), q,
                                         ao) == -ENOMEM ||
                            config_set_str(uo, ao) < 0)
                                return -ENOMEM;
                        memcpy(config_key_ptr(k, m), config_key_ptr_const(k, system), k->size);
                        break;
                }
                case CONFIG_TIGHTEN_WATERMARK: {
                        /* watermarks compare as effective values (0 = the max-size) */
                        uint64_t low_u = t->low_watermark ? t->low_watermark : t->max_size;
                        uint64_t low_a = a->low_watermark ? a->low_watermark : a->max_size;

                        if (low_a != 0 && (low_u == 0 || low_u > low_a)) {
                                t->low_watermark = low_a >= t->max_size ? 0 : low_a;
                                if (config_set_str(uo, ao) < 0)
                                        return -ENOMEM;
                        }
                        break;
                }
                case CONFIG_TIGHTEN_FLOOR: {
                        SizeSpec *u = config_key_ptr(k, m);
                        const SizeSpec *s = config_key_ptr_const(k, system);
                        bool looser;

                        if (!s->is_set)
                                break;
                        looser = !u->is_set || u->is_percent != s->is_percent ||
                                 (u->is_percent ? u->percent < s->percent : u->bytes < s->bytes);
                        if (!looser)
                                break;
                        if (u->is_set &&
                            config_error(errs, loc,
                                         "warning: tree %s is less than or not comparable with "
                                         "the system policy's (%s); using the system's",
                                         k->name, ao) == -ENOMEM)
                                return -ENOMEM;
                        *u = *s;
                        if (config_set_str(uo, ao) < 0)
                                return -ENOMEM;
                        break;
                }
                case CONFIG_TIGHTEN_LESS:
                case CONFIG_TIGHTEN_BOOL:
                case CONFIG_TIGHTEN_SYSTEM:
                        break; /* no tree key */
                }
        }
        return 0;
}

/* Clamp the layered user config m to the system's limits, key by key. The user's file and its
 * includes are m->files from first_user_file on. */
static int config_merge_clamp(Config *m, const Config *system, const char *user_file,
                              size_t first_user_file, ConfigErrors *errs) {
        char *const *ufiles = m->files + first_user_file;
        size_t n_ufiles = m->n_files - first_user_file;
        ConfigMergeBound b;
        int r;

        config_merge_bound_from(&b, &system->defaults, &system->defaults_origin);
        r = config_merge_clamp_policy(&m->defaults, &m->defaults_origin, NULL, &b, "", ufiles,
                                      n_ufiles, user_file, errs);
        if (r < 0)
                return r;
        r = config_inherit_defaults(m);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_projects; i++) {
                ProjectOverride *po = &m->projects[i];
                _cleanup_free_ char *ctx = util_strprintf("project '%s': ", po->pattern);
                _cleanup_free_ char *loc = util_strprintf("%s:%d", po->file, po->line);

                if (!ctx || !loc)
                        return -ENOMEM;
                config_merge_bound_for(system, po, &b);
                r = config_merge_clamp_policy(&po->policy, &po->origin, &po->set_mask, &b, ctx,
                                              ufiles, n_ufiles, loc, errs);
                if (r < 0)
                        return r;
        }
        return config_merge_clamp_tree(m, system, user_file, errs);
}

int config_merge_user(Config *merged, const Config *system, const char *user_file,
                      ConfigErrors *errs) {
        Config m = {};
        size_t first;
        int r;

        r = config_copy(system, &m);
        if (r < 0)
                return r;
        if (system->n_files == 0 && user_file) {
                /* no admin policy: the user's file layers freely on the built-in default */
                r = config_load_user_file(&m, user_file, errs);
                if (r < 0 && r != -ENOENT) {
                        config_done(&m);
                        return r;
                }
                *merged = m;
                return r >= 0;
        }
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
                r = config_merge_clamp(&m, system, user_file, first, errs);
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
