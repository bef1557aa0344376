/* config-explain.c: check-config --explain: the effective policy, every key of every group from
 * the key table with its value as the file would spell it and where it was set (a file:line, an
 * include, the built-in default, or the system policy a user's value was clamped to). */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "macro.h"
#include "util.h"

static void config_explain_policy(const Policy *p, const PolicyOrigin *o, unsigned set_mask,
                                  bool is_project, FILE *f) {
        for (size_t k = 0; k < _POLICY_KEY_MAX; k++) {
                char v[32];
                bool inherited = is_project && !(set_mask & (1u << k));

                fprintf(f, "        %-22s %-10s %s%s\n", config_keys[k].name,
                        config_key_format_buf(&config_keys[k], p, v, sizeof v),
                        inherited ? "from defaults: " : "", o->where[k] ? o->where[k] : "?");
        }
}

/* The keys of the tree or admin group. */
static int config_explain_group(const Config *c, ConfigScope scope, FILE *f) {
        for (size_t i = 0; i < _CONFIG_KEY_MAX; i++) {
                const ConfigKeyInfo *k = &config_keys[i];
                _cleanup_free_ char *v = NULL;
                const char *origin;

                if (k->scope != scope)
                        continue;
                v = config_key_format(k, c);
                if (!v)
                        return -ENOMEM;
                origin = *config_key_origin(k, (Config *)c, NULL);
                fprintf(f, "        %-22s %-10s %s\n", k->name, v, origin ? origin : "?");
        }
        return 0;
}

int config_explain(const Config *c, FILE *f) {
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
        for (size_t s = 0; s < _CONFIG_SCOPE_MAX; s++) {
                fprintf(f, "\n%s\n", config_scopes[s].explain);
                if (s == CONFIG_SCOPE_POLICY)
                        config_explain_policy(&c->defaults, &c->defaults_origin, ~0u, false, f);
                else if (config_explain_group(c, (ConfigScope)s, f) < 0)
                        return -ENOMEM;
        }

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
