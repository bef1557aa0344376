/* config-parse.c: a policy file → Config: libconfig's tree paired with the literals of the
 * bounded reader (conftext.h), the groups (defaults, tree, admin: each key read through the key
 * table), project blocks, contradictions between rules, and the layering of files (the system
 * file, conf.d drop-ins, a user's file, -c), each with its @includes. */
#include "autoconf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "config-int.h"
#include "conftext.h"
#include "macro.h"
#include "util.h"

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

/* Parse every key of a group of `scope` into base (the Policy of defaults or a project block,
 * or the Config), the origins and *mask (project blocks: their "path" is not a key). */
static int config_parse_group(ConfigParse *cp, const config_setting_t *g, ConfigScope scope,
                              const char *where, void *base, PolicyOrigin *o, unsigned *mask) {
        const char *names[_CONFIG_KEY_MAX + 1];
        bool is_project = mask != NULL;
        size_t n_names = config_key_names(scope, is_project ? "path" : NULL, names);
        int n = config_setting_length(g);

        for (int i = 0; i < n; i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
                const char *name = config_setting_name(s);
                _cleanup_free_ char *loc = config_loc(cp, s);
                const ConfigKeyInfo *k;
                char **origin;
                int r;

                if (!loc)
                        return -ENOMEM;
                if (is_project && name && streq(name, "path"))
                        continue;
                k = config_key_find(scope, name);
                if (!k) {
                        r = config_unknown(cp->errs, loc, name ? name : "?", where, names, n_names);
                        if (r == -ENOMEM)
                                return r;
                        continue;
                }
                r = config_value_read(k, s, loc, base, cp->errs);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                origin = config_key_origin(k, cp->c, o);
                free(*origin);
                *origin = TAKE_PTR(loc);
                if (mask)
                        *mask |= 1u << config_key_index(k);
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
        r = config_parse_group(cp, g, CONFIG_SCOPE_POLICY, where, &p, &o, &mask);
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

/* ------------------------------------------------------------------ contradictions */

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
                            config_keys[ka].name,
                            config_key_format_buf(&config_keys[ka], p, va, sizeof va), oa,
                            relation, config_keys[kb].name,
                            config_key_format_buf(&config_keys[kb], p, vb, sizeof vb), ob);
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
/* A grace that must not exceed a limit (when the limit is on). */
static const struct {
        PolicyKey grace, limit;
        const char *relation;
} config_pairs[] = {
        { POLICY_KEY_MIN_AGE, POLICY_KEY_MAX_AGE, "longer than" },
        { POLICY_KEY_MIN_IDLE, POLICY_KEY_MAX_AGE, "longer than" },
        { POLICY_KEY_MIN_AGE, POLICY_KEY_ARCHIVE_MAX_AGE, "longer than" },
        { POLICY_KEY_KEEP_LATEST, POLICY_KEY_MAX_SESSIONS, "more than" },
};

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

        for (size_t i = 0; i < ELEMENTSOF(config_pairs) && r != -ENOMEM; i++) {
                PolicyKey g = config_pairs[i].grace, l = config_pairs[i].limit;
                uint64_t vg = config_key_number(&config_keys[g], p);
                uint64_t vl = config_key_number(&config_keys[l], p);

                if (vl > 0 && vg > vl && TOUCHES(g, l))
                        r = config_check_pair(cp, p, o, ctx, g, l, config_pairs[i].relation);
        }
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
                int scope = -1;

                if (!loc)
                        return -ENOMEM;
                if (streq(name, "projects")) {
                        r = config_parse_projects(cp, s);
                        if (r < 0)
                                return r;
                        continue;
                }
                for (size_t j = 0; j < _CONFIG_SCOPE_MAX; j++)
                        if (streq(name, config_scopes[j].group))
                                scope = (int)j;
                if (scope < 0)
                        r = config_unknown(cp->errs, loc, name, "the top level", config_top_names,
                                           ELEMENTSOF(config_top_names));
                else if (!config_setting_is_group(s))
                        r = config_error(cp->errs, loc, "%s must be a group: %s = { ... };", name,
                                         name);
                else if (config_scopes[scope].system_only && !cp->allow_admin)
                        r = config_error(cp->errs, loc,
                                         "%s settings are only allowed in the system file", name);
                else if (scope == CONFIG_SCOPE_POLICY)
                        r = config_parse_group(cp, s, CONFIG_SCOPE_POLICY, name, &cp->c->defaults,
                                               &cp->c->defaults_origin, NULL);
                else
                        r = config_parse_group(cp, s, (ConfigScope)scope, name, cp->c, NULL, NULL);
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

/* libconfig's syntax error at line err_line of text (the expanded text), made useful: the line
 * and a hint for the two mistakes people make. A string left open (libconfig takes the next
 * lines into it and fails a line or more later, or at the end): the line where it starts. A
 * value with a unit, or a word, without quotes (`max-age = 10d;`): how to quote it. One pass over
 * the text (comments # // and block comments, strings with escapes); *ret_line is err_line when
 * there is no better one, *ret_hint NULL when there is no hint. */
static int config_syntax_hint(const char *text, unsigned err_line, unsigned *ret_line,
                              char **ret_hint) {
        unsigned line = 1, open_line = 0;
        const char *at = NULL; /* the start of err_line */

        *ret_line = err_line;
        *ret_hint = NULL;
        for (const char *p = text; *p; p++) {
                if (line == err_line && !at)
                        at = p;
                if (*p == '\n') {
                        line++;
                        continue;
                }
                if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
                        p += strcspn(p, "\n") - 1;
                        continue;
                }
                if (p[0] == '/' && p[1] == '*') {
                        for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
                                line += *p == '\n';
                        if (!*p)
                                break;
                        p++;
                        continue;
                }
                if (*p != '"')
                        continue;
                for (p++; *p && *p != '"' && *p != '\n'; p++)
                        if (*p == '\\' && p[1] && p[1] != '\n')
                                p++;
                if (*p != '"') { /* the line ends, or the text, inside the string */
                        open_line = line;
                        break;
                }
        }
        if (open_line > 0 && open_line <= err_line) {
                *ret_line = open_line;
                *ret_hint = strdup("a string is not closed on this line (a missing '\"')");
                return *ret_hint ? 0 : -ENOMEM;
        }
        if (!at)
                return 0;
        /* KEY = VALUE on the error line, VALUE unquoted: a number with a unit, or a word */
        size_t eol = strcspn(at, "\n");
        for (const char *eq = at; (eq = memchr(eq, '=', eol - (size_t)(eq - at))); eq++) {
                const char *k = eq, *v = eq + 1 + strspn(eq + 1, " \t");
                size_t vn = strcspn(v, ";,}\n#"), kn;
                bool digits = isdigit((unsigned char)*v), unit = false;

                while (k > at && strchr(" \t", k[-1]))
                        k--;
                kn = (size_t)(k - at);
                while (k > at && (isalnum((unsigned char)k[-1]) || k[-1] == '-' || k[-1] == '_'))
                        k--;
                kn -= (size_t)(k - at);
                while (vn > 0 && strchr(" \t", v[vn - 1]))
                        vn--;
                for (size_t i = 0; i < vn; i++)
                        unit = unit || isalpha((unsigned char)v[i]);
                if (kn == 0 || vn == 0 || !(digits ? unit : isalpha((unsigned char)*v)))
                        continue; /* quoted, a number, true/false are not the mistake */
                _cleanup_free_ char *val = strndup(v, vn);
                msec_t d;
                SizeSpec sz;

                if (!val)
                        return -ENOMEM;
                if (!digits && (ascii_strcasecmp(val, "true") == 0 ||
                                 ascii_strcasecmp(val, "false") == 0))
                        continue;
                const char *what = !digits ? "a word (or true, false)"
                                   : parse_duration(val, &d, NULL) >= 0     ? "a duration"
                                   : parse_size(val, false, &sz, NULL) >= 0 ? "a size"
                                                                            : "a value with a unit";
                *ret_hint = strprintf("%s must be quoted: %.*s = \"%s\";", what, (int)kn, k, val);
                return *ret_hint ? 0 : -ENOMEM;
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
                _cleanup_free_ char *loc = NULL, *hint = NULL;
                unsigned line;

                r = config_syntax_hint(src->text, (unsigned)MAX(config_error_line(&cf), 0), &line,
                                       &hint);
                loc = r >= 0 ? conftext_loc(src, line) : NULL;
                r = loc ? config_errors_add(errs, "%s: %s%s%s", loc, config_error_text(&cf),
                                            hint ? ": " : "", hint ?: "")
                        : -ENOMEM;
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

