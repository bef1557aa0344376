/* config.c: the Config value: the built-in default (from the key table), copy, free,
 * config_error() (the error list is conftext.h's), and which project block a project path uses
 * (exact paths, globs, specificity). The key table is config-table.c; parsing a file
 * config-parse.c (values: config-value.c); the root-mode merge config-merge.c; --explain
 * config-explain.c. */
#include "autoconf.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-int.h"
#include "macro.h"
#include "util.h"

/* ------------------------------------------------------------------ errors */

/* Append "loc: message" and return -EINVAL (or -ENOMEM). */
int config_error(ConfigErrors *e, const char *loc, const char *fmt, ...) {
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

void config_origin_done(PolicyOrigin *o) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++)
                o->where[k] = config_mfree(o->where[k]);
}

/* Replace *p with a copy of s. 0 or -ENOMEM. */
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

                *d = strdup_or_null(so);
                ok = *d || !so;
                if (ok && k->type == CONFIG_VALUE_PATH) {
                        const char *v = *(char *const *)config_key_ptr_const(k, src);
                        char **dv = config_key_ptr(k, &c);

                        *dv = strdup_or_null(v);
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
                d->file = strdup_or_null(s->file);
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

bool config_pattern_is_glob(const char *p) {
        return strpbrk(p, "*?[\\") != NULL;
}

/* Number of characters of a glob that match only themselves (the specificity). */
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

/* Length of the literal prefix before the first wildcard. */
size_t config_pattern_prefix(const char *p) {
        return strcspn(p, "*?[\\");
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

/* Copy the defaults into every override for the keys the override does not set. */
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

bool config_origin_in(const char *origin, const char *name) {
        size_t l = strlen(name);
        return origin && strneq(origin, name, l) && origin[l] == ':';
}

/* Is origin in one of n files? */
bool config_origin_in_files(const char *origin, char *const *files, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (config_origin_in(origin, files[i]))
                        return true;
        return false;
}

