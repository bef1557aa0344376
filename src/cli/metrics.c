/* metrics.c: node_exporter textfile metrics of the last run (--metrics-file). See metrics.h.
 *
 * Records: each recording process appends one block of lines "family\tsample\n" with a single
 * write(2) to a memfd opened with O_APPEND before any fork, so that the children of --all-users
 * (which dropped their privileges and could not open a root-owned file) can still report. The
 * parent groups the samples by family (the format wants a family's lines together), adds the
 * HELP and TYPE lines and writes the file atomically. Every metric is a gauge: the file says what
 * the last run did, it does not accumulate (so no _total suffix). */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fs.h"
#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "policy.h"
#include "text.h"
#include "util.h"

static char *metrics_path = NULL;
static char *metrics_source = NULL; /* what set the path, for messages: option or key and file */
static int metrics_fd = -1;
static double metrics_t0 = 0;

typedef struct MetricFamily {
        const char *name, *help;
} MetricFamily;

/* The families, in file order. Every recorded line names one of them. The file's first line is
 * the first family's HELP line: debian/postrm removes a file at purge only when it starts so. */
static const MetricFamily families[] = {
        { "qgc_last_run_timestamp_seconds", "Unix time at which the last qgc run ended." },
        { "qgc_last_run_duration_seconds",
          "Wall time of the last qgc run, including any --random-delay." },
        { "qgc_last_run_exit_code",
          "Exit status of the last qgc run: 0 ok, 1 some actions or users failed, 64 usage, "
          "75 a tree was locked, 78 invalid policy file." },
        { "qgc_last_run_archived_bytes", "Bytes of the sessions the last run archived." },
        { "qgc_last_run_freed_bytes",
          "Bytes the last run freed: deleted sessions and reclaimed orphans." },
        { "qgc_last_run_compressed_original_bytes",
          "Bytes of the archived sessions the last run compressed into the cold tier, before "
          "compression." },
        { "qgc_last_run_compressed_bytes",
          "Bytes of the compressed files the last run wrote for them." },
        { "qgc_last_run_actions",
          "Outcomes of the last run's actions (archived, deleted, compressed, orphans_reclaimed, "
          "salvaged, skipped, failed)." },
        { "qgc_sessions", "Sessions in the last run's plan, by verb and by the rule that decided." },
        { "qgc_held_back_sessions",
          "Sessions a rule selected but a protection kept, or the deletion limit postponed "
          "(blast-radius), in the last run." },
        { "qgc_tree_size_bytes",
          "Allocated bytes of a Qwen tree's sessions and orphans after the last run's planned "
          "deletions." },
        { "qgc_filesystem_size_bytes", "Size of the filesystem holding a Qwen tree." },
        { "qgc_filesystem_avail_bytes",
          "Bytes available to unprivileged users on the filesystem holding a Qwen tree, after "
          "the last run." },
        { "qgc_policy_tree_max_size_bytes", "The policy's tree max-size, where set." },
        { "qgc_policy_keep_free_bytes", "The policy's tree keep-free floor in bytes, where set." },
        { "qgc_last_run_users",
          "Users of the last --all-users run by outcome: ok, failed, skipped (no safe tree, or "
          "locked), invalid_policy (skipped: the user's own qgc.conf is invalid)." },
};

int metrics_init(const char *path, const char *source) {
        free(metrics_path);
        free(metrics_source);
        metrics_path = strdup(path);
        metrics_source = strdup(source);
        if (!metrics_path || !metrics_source)
                return log_error_errno(-ENOMEM, "out of memory");
        metrics_t0 = util_mono_sec();
        if (metrics_fd < 0) {
                metrics_fd = memfd_create("qgc-metrics", MFD_CLOEXEC);
                if (metrics_fd < 0)
                        return log_error_errno(-errno, "%s: memfd_create", metrics_source);
                /* O_APPEND: each child's single write lands whole after the others' */
                if (fcntl(metrics_fd, F_SETFL, O_APPEND) < 0)
                        return log_error_errno(-errno, "%s: fcntl", metrics_source);
        }
        return 0;
}

static bool metrics_enabled(void) {
        return metrics_path != NULL;
}

/* A label value: valid UTF-8 without controls (text_clean()), then the format's escapes
 * for backslash, double quote and newline. */
static int metrics_label(StrBuf *b, const char *name, const char *value, bool first) {
        _cleanup_free_ char *clean = text_clean(value ? value : "", TEXT_TERMINAL);
        int r;

        if (!clean)
                return -ENOMEM;
        r = strbuf_printf(b, "%s%s=\"", first ? "" : ",", name);
        for (const char *c = clean; r >= 0 && *c; c++) {
                if (*c == '\\' || *c == '"')
                        r = strbuf_printf(b, "\\%c", *c);
                else if (*c == '\n')
                        r = strbuf_append(b, "\\n", 2);
                else
                        r = strbuf_append(b, c, 1);
        }
        return r < 0 ? r : strbuf_append(b, "\"", 1);
}

/* One record line: family TAB family{labels} value. Labels: NULL-terminated name/value pairs. */
static int metrics_line(StrBuf *b, const char *family, uint64_t value, ...) {
        va_list ap;
        int r;

        r = strbuf_printf(b, "%s\t%s{", family, family);
        va_start(ap, value);
        for (bool first = true; r >= 0; first = false) {
                const char *n = va_arg(ap, const char *);
                if (!n)
                        break;
                r = metrics_label(b, n, va_arg(ap, const char *), first);
        }
        va_end(ap);
        return r < 0 ? r : strbuf_printf(b, "} %" PRIu64 "\n", value);
}

typedef struct Count {
        const char *a, *b; /* static strings: verb and rule, or protection */
        uint64_t n;
} Count;

static int metrics_count(Count **c, size_t *n, size_t *alloc, const char *a, const char *b) {
        for (size_t i = 0; i < *n; i++)
                if (streq((*c)[i].a, a) && streq((*c)[i].b, b)) {
                        (*c)[i].n++;
                        return 0;
                }
        if (util_greedy_realloc((void **)c, alloc, *n + 1, sizeof(Count)) < 0)
                return -ENOMEM;
        (*c)[(*n)++] = (Count){ a, b, 1 };
        return 0;
}

static int metrics_record_buf(StrBuf *b, const Plan *p, const ActionStats *st, const Config *cfg) {
        const Inventory *inv = p->inv;
        _cleanup_free_ Count *verbs = NULL, *held = NULL;
        _cleanup_free_ uint64_t *tree_bytes = NULL;
        size_t n_verbs = 0, a_verbs = 0, n_held = 0, a_held = 0;
        const char *user = NULL;
        struct passwd *pw;
        int r;

        /* the user this process runs as (after the drop, in root mode) */
        pw = getpwuid(geteuid());
        user = pw && pw->pw_name ? pw->pw_name : NULL;
        if (!user && inv->n_trees > 0)
                user = inv->trees[0].user;
        _cleanup_free_ char *uid_str = util_strprintf("%u", (unsigned)geteuid());
        if (!uid_str)
                return -ENOMEM;
        if (!user)
                user = uid_str;

        tree_bytes = calloc(inv->n_trees ? inv->n_trees : 1, sizeof(uint64_t));
        if (!tree_bytes)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_items; i++) {
                const PlanItem *it = &p->items[i];
                const Verdict *vd = it->verdict;
                Verb v = plan_item_verb(it);
                uint64_t bytes;
                size_t tree;

                if (it->is_orphan) {
                        bytes = inv->orphans[it->index].bytes_alloc;
                        tree = inv->orphans[it->index].tree;
                } else {
                        bytes = inv->sessions[it->index].bytes_alloc;
                        tree = inv->sessions[it->index].tree;
                        r = metrics_count(&verbs, &n_verbs, &a_verbs, policy_verb_to_string(v),
                                          vd && vd->rule ? vd->rule : "none");
                        if (r < 0)
                                return r;
                        /* held back: a rule selected it and a protection kept it, or the
                         * per-run deletion limit (blast-radius) postponed it */
                        if (vd && vd->rule &&
                            ((v == VERB_KEEP && !streq(vd->rule, "none")) ||
                             (v == VERB_SKIP && (vd->protections & PROT_BLAST)))) {
                                r = metrics_count(&held, &n_held, &a_held, vd->rule, "");
                                if (r < 0)
                                        return r;
                        }
                }
                if (tree < inv->n_trees && v != VERB_DELETE)
                        tree_bytes[tree] += bytes;
        }

        r = metrics_line(b, "qgc_last_run_archived_bytes", st->bytes_archived, "user", user, NULL);
        if (r >= 0)
                r = metrics_line(b, "qgc_last_run_freed_bytes",
                                 st->bytes_deleted + st->bytes_orphans, "user", user, NULL);
        if (r >= 0)
                r = metrics_line(b, "qgc_last_run_compressed_original_bytes",
                                 st->bytes_compressed_in, "user", user, NULL);
        if (r >= 0)
                r = metrics_line(b, "qgc_last_run_compressed_bytes", st->bytes_compressed_out,
                                 "user", user, NULL);
        const struct {
                const char *outcome;
                unsigned n;
        } outcomes[] = {
                { "archived", st->n_archived }, { "deleted", st->n_deleted },
                { "compressed", st->n_compressed },
                { "orphans_reclaimed", st->n_orphans }, { "salvaged", st->n_salvaged },
                { "skipped", st->n_skipped },   { "failed", st->n_failed },
        };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(outcomes); i++)
                r = metrics_line(b, "qgc_last_run_actions", outcomes[i].n, "user", user, "outcome",
                                 outcomes[i].outcome, NULL);
        for (size_t i = 0; r >= 0 && i < n_verbs; i++)
                r = metrics_line(b, "qgc_sessions", verbs[i].n, "user", user, "verb", verbs[i].a,
                                 "rule", verbs[i].b, NULL);
        for (size_t i = 0; r >= 0 && i < n_held; i++)
                r = metrics_line(b, "qgc_held_back_sessions", held[i].n, "user", user,
                                 "protection", held[i].a, NULL);
        for (size_t t = 0; r >= 0 && t < inv->n_trees; t++) {
                const Tree *tr = &inv->trees[t];
                const char *path = tr->runtime_dir ? tr->runtime_dir : tr->global_dir;
                struct statvfs vfs;
                bool have_fs = path && statvfs(path, &vfs) == 0;
                uint64_t fs_size = have_fs ? (uint64_t)vfs.f_blocks * vfs.f_frsize : tr->fs_size;
                uint64_t fs_avail = have_fs ? (uint64_t)vfs.f_bavail * vfs.f_frsize : tr->fs_avail;

                r = metrics_line(b, "qgc_tree_size_bytes", tree_bytes[t], "user", user, "tree",
                                 path, NULL);
                if (r >= 0 && (have_fs || tr->fs_known))
                        r = metrics_line(b, "qgc_filesystem_size_bytes", fs_size, "user", user,
                                         "tree", path, NULL);
                if (r >= 0 && (have_fs || tr->fs_known))
                        r = metrics_line(b, "qgc_filesystem_avail_bytes", fs_avail, "user", user,
                                         "tree", path, NULL);
                if (r >= 0 && cfg && cfg->tree.max_size > 0)
                        r = metrics_line(b, "qgc_policy_tree_max_size_bytes", cfg->tree.max_size,
                                         "user", user, "tree", path, NULL);
                if (r >= 0 && cfg && cfg->tree.keep_free.is_set &&
                    (!cfg->tree.keep_free.is_percent || have_fs || tr->fs_known))
                        r = metrics_line(b, "qgc_policy_keep_free_bytes",
                                         cfg->tree.keep_free.is_percent
                                                 ? (uint64_t)((double)fs_size *
                                                              cfg->tree.keep_free.percent / 100.0)
                                                 : cfg->tree.keep_free.bytes,
                                         "user", user, "tree", path, NULL);
        }
        return r;
}

void metrics_record(const Plan *p, const ActionStats *st, const Config *cfg) {
        StrBuf b = {};
        int r;

        if (!metrics_enabled() || metrics_fd < 0)
                return;
        r = metrics_record_buf(&b, p, st, cfg);
        if (r >= 0 && b.len > 0) {
                /* one write: the block lands whole (O_APPEND), whatever the other children do */
                ssize_t n = write(metrics_fd, b.buf, b.len);
                if (n < 0)
                        r = -errno;
                else if ((size_t)n != b.len)
                        r = -EIO;
        }
        if (r < 0)
                log_warning_errno(r, "%s: cannot record this run's metrics", metrics_source);
        strbuf_done(&b);
}

void metrics_record_users(unsigned ok, unsigned failed, unsigned skipped,
                          unsigned invalid_policy) {
        const struct {
                const char *outcome;
                unsigned n;
        } o[] = { { "ok", ok }, { "failed", failed }, { "skipped", skipped },
                  { "invalid_policy", invalid_policy } };
        StrBuf b = {};
        int r = 0;

        if (!metrics_enabled() || metrics_fd < 0)
                return;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(o); i++)
                r = metrics_line(&b, "qgc_last_run_users", o[i].n, "outcome", o[i].outcome, NULL);
        if (r >= 0 && write(metrics_fd, b.buf, b.len) != (ssize_t)b.len)
                r = -EIO;
        if (r < 0)
                log_warning_errno(r, "--metrics-file: cannot record the users' outcomes");
        strbuf_done(&b);
}

/* The family of a record line, or -1. */
static int metrics_family(const char *line, size_t len) {
        const char *tab = memchr(line, '\t', len);
        if (!tab)
                return -1;
        for (size_t f = 0; f < ELEMENTSOF(families); f++)
                if (strlen(families[f].name) == (size_t)(tab - line) &&
                    memcmp(families[f].name, line, (size_t)(tab - line)) == 0)
                        return (int)f;
        return -1;
}

/* The exposition text from recorded lines ("family\tsample\n"): each family's samples together
 * under its HELP and TYPE lines, and the run's own families. */
static char *metrics_render(const char *records, size_t len, double timestamp,
                            double duration, int exit_code) {
        StrBuf b = {};
        int r = 0;

        for (size_t f = 0; r >= 0 && f < ELEMENTSOF(families); f++) {
                bool header = false;

                for (size_t off = 0; r >= 0 && off < len;) {
                        const char *line = records + off;
                        const char *nl = memchr(line, '\n', len - off);
                        size_t l = nl ? (size_t)(nl - line) : len - off;
                        off += l + 1;
                        if (metrics_family(line, l) != (int)f)
                                continue;
                        const char *sample = (const char *)memchr(line, '\t', l) + 1;
                        if (!header) {
                                r = strbuf_printf(&b, "# HELP %s %s\n# TYPE %s gauge\n",
                                                  families[f].name, families[f].help,
                                                  families[f].name);
                                header = true;
                        }
                        if (r >= 0)
                                r = strbuf_append(&b, sample, l - (size_t)(sample - line));
                        if (r >= 0)
                                r = strbuf_append(&b, "\n", 1);
                }
                if (r < 0 || header)
                        continue;
                /* the run's own families have no records: written here */
                if (f == 0)
                        r = strbuf_printf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %.3f\n",
                                          families[f].name, families[f].help, families[f].name,
                                          families[f].name, timestamp);
                else if (f == 1)
                        r = strbuf_printf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %.3f\n",
                                          families[f].name, families[f].help, families[f].name,
                                          families[f].name, duration);
                else if (f == 2)
                        r = strbuf_printf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n",
                                          families[f].name, families[f].help, families[f].name,
                                          families[f].name, exit_code);
        }
        if (r < 0) {
                strbuf_done(&b);
                return NULL;
        }
        return strbuf_steal(&b);
}

/* The warning of a file that could not be written: what set the path; on a read-only file
 * system (qgc.service's sandbox: ProtectSystem=strict) the directory the unit lets qgc write. */
static int metrics_warn_write(int r, const char *what) {
        log_warning("%s: %s '%s': %s%s", metrics_source, what, metrics_path,
                    log_errno_to_string(-r),
                    r == -EROFS ? " (qgc.service may write only under "
                                  "/var/lib/prometheus/node-exporter; another directory needs "
                                  "ReadWritePaths= in a drop-in)"
                                : "");
        return r;
}

int metrics_finish(int exit_code) {
        _cleanup_free_ char *records = NULL, *text = NULL, *dir = NULL, *tmp = NULL;
        _cleanup_close_ int fd = -1, dfd = -1;
        size_t len = 0;
        int r;

        if (!metrics_enabled())
                return 0;
        r = metrics_fd >= 0 ? fs_read_fd(metrics_fd, SIZE_MAX - 1, &records, &len) : 0;
        if (r >= 0 && !records)
                records = strdup("");
        if (r < 0 || !records)
                return log_warning_errno(r < 0 ? r : -ENOMEM, "%s: cannot read the records",
                                         metrics_source);
        text = metrics_render(records, len, (double)util_now_msec() / 1000.0,
                              util_mono_sec() - metrics_t0, exit_code);
        _cleanup_free_ char *path_copy = strdup(metrics_path);
        if (!text || !path_copy)
                return log_warning_errno(-ENOMEM, "%s: out of memory", metrics_source);
        dir = strdup(dirname(path_copy));
        tmp = util_strprintf("%s.tmp.XXXXXX", metrics_path);
        if (!dir || !tmp)
                return log_warning_errno(-ENOMEM, "%s: out of memory", metrics_source);

        /* a temporary name the textfile collector ignores (it reads only *.prom) */
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return metrics_warn_write(-errno, "cannot create a file next to");
        r = util_write_all(fd, text, strlen(text));
        if (r >= 0 && fchmod(fd, 0644) < 0) /* UMask=0077 in the unit; node_exporter must read */
                r = -errno;
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && rename(tmp, metrics_path) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlink(tmp);
                return metrics_warn_write(r, "cannot write");
        }
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                (void)fsync(dfd);
        return 0;
}
