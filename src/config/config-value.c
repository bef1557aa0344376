/* config-value.c: one setting of the policy file → one key's value. Every value error is
 * here, as "file:line: key: ...": the literal as written (libconfig's own integer value is not
 * trusted), bounds, "off", units, choices and paths; and "unknown key" with a did-you-mean. */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "config-int.h"
#include "conftext.h"
#include "macro.h"
#include "util.h"

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
char *config_describe(const config_setting_t *s) {
        int type = config_setting_type(s);
        const char *raw = config_raw(s);

        if (type == CONFIG_TYPE_STRING)
                return strprintf("a string (\"%s\")", config_setting_get_string(s));
        if (raw)
                return strprintf("%s (%s)", config_type_name(type), raw);
        return strdup(config_type_name(type));
}

int config_error_expected(ConfigErrors *errs, const char *loc, const char *key, const char *what,
                          const config_setting_t *s) {
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

/* A list of absolute paths: ( "/srv/home", ... ). All or nothing. */
static int config_get_path_list(const ConfigKeyInfo *k, const config_setting_t *s,
                                const char *loc, void *base, ConfigErrors *errs) {
        char ***list = config_key_ptr(k, base);
        size_t *count = config_key_count(k, base);
        int m = config_setting_length(s), r = 0;
        char **v;
        bool bad = false;

        if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
                _cleanup_free_ char *what = strprintf("a list of paths such as ( \"%s\" )",
                                                      k->example);
                if (!what)
                        return -ENOMEM;
                return config_error_expected(errs, loc, k->name, what, s);
        }
        v = calloc((size_t)m + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (int j = 0; j < m; j++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned)j);
                const char *d = config_setting_get_string(e);
                if (!d || d[0] != '/') {
                        _cleanup_free_ char *got = config_describe(e);
                        r = got ? config_error(errs, loc,
                                               "%s: entry %d, %s, is not an absolute path",
                                               k->name, j + 1, got)
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
                return -EINVAL;
        }
        config_strv_free(*list, *count);
        *list = v;
        *count = (size_t)m;
        return 0;
}

/* An absolute path. */
static int config_get_path(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                           void *base, ConfigErrors *errs) {
        const char *v = config_setting_get_string(s);

        if (!v || v[0] != '/') {
                _cleanup_free_ char *what = strprintf("an absolute path such as \"%s\"",
                                                      k->example);
                if (!what)
                        return -ENOMEM;
                return config_error_expected(errs, loc, k->name, what, s);
        }
        return config_set_str(config_key_ptr(k, base), v);
}

int config_value_read(const ConfigKeyInfo *k, const config_setting_t *s, const char *loc,
                      void *base, ConfigErrors *errs) {
        void *f = config_key_ptr(k, base);
        SizeSpec sz;
        int r, v = 0;

        switch (k->type) {
        case CONFIG_VALUE_CHOICE:
                r = config_get_enum(s, k->name, loc, k->words, k->n_words, &v, errs);
                if (r >= 0)
                        config_key_set_choice(k, base, v);
                return r;
        case CONFIG_VALUE_DURATION:
                return config_get_duration(s, k->name, loc, k->off, (msec_t)k->min, (msec_t)k->max,
                                           (msec_t *)f, errs);
        case CONFIG_VALUE_COUNT:
                return config_get_count(s, k->name, loc, k->off == CONFIG_OFF_ZERO, k->min, k->max,
                                        (uint64_t *)f, errs);
        case CONFIG_VALUE_SIZE:
                r = config_get_size(s, k->name, loc, /* allow_percent= */ false, &sz, errs);
                if (r >= 0)
                        *(uint64_t *)f = sz.is_set ? sz.bytes : 0;
                return r;
        case CONFIG_VALUE_SIZE_OR_PERCENT:
                r = config_get_size(s, k->name, loc, /* allow_percent= */ true, &sz, errs);
                if (r >= 0 && sz.is_percent && sz.percent >= (double)k->max)
                        r = config_error(errs, loc, "%s: %s is out of range (below %" PRIu64 "%%)",
                                         k->name, config_setting_get_string(s), k->max);
                if (r >= 0)
                        *(SizeSpec *)f = sz;
                return r;
        case CONFIG_VALUE_BOOL:
                return config_get_bool(s, k->name, loc, (bool *)f, errs);
        case CONFIG_VALUE_PERCENT:
                return config_get_percent(s, k->name, loc, (double *)f, errs);
        case CONFIG_VALUE_PATH:
                return config_get_path(k, s, loc, base, errs);
        case CONFIG_VALUE_PATH_LIST:
                return config_get_path_list(k, s, loc, base, errs);
        }
        return -EINVAL;
}

/* ------------------------------------------------------------------ unknown keys */

int config_unknown(ConfigErrors *errs, const char *loc, const char *name, const char *where,
                   const char *const *names, size_t n) {
        const char *s = closest_name(name, names, n);
        bool is_policy = config_key_find(CONFIG_SCOPE_POLICY, name) != NULL;
        bool is_tree = config_key_find(CONFIG_SCOPE_TREE, name) != NULL;

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

