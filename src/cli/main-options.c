/* main-options.c: qgc's command line: the options' values (arg_*, main-int.h), --help, --now's
 * forms, and main_options_parse() with every check of options against each other. What they do
 * is main.c. */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "js.h"
#include "log.h"
#include "macro.h"
#include "main-int.h"
#include "metrics.h"
#include "util.h"

#define MAIN_JOBS_MAX 64

Command arg_command = CMD_RUN;
bool arg_dry_run = false;
bool arg_json = false;
bool arg_force = false;
bool arg_explain = false;
bool arg_changes = false;
bool arg_all_users = false;
bool arg_quiet = false;
static int arg_verbose = 0;
unsigned arg_jobs = 0; /* 0: main_default_jobs() */
const char *arg_config = NULL;
const char *arg_system_config = NULL;
char **arg_roots = NULL;
size_t arg_n_roots = 0;
char **arg_users = NULL; /* --user NAME (repeatable): implies --all-users */
size_t arg_n_users = 0;
const char *arg_now = NULL;
msec_t arg_now_msec = 0;
msec_t arg_now_rel = 0;      /* --now +D / -D: relative to the real clock */
bool arg_now_is_rel = false;
const char *arg_log_target = "auto";
const char *arg_log_file = NULL;
const char *arg_restore_id = NULL;
const char *arg_restore_project = NULL;
bool arg_restore_to_archive = false;
msec_t arg_random_delay = 0;
const char *arg_metrics_file = NULL; /* metrics.c */

static void main_help(void) {
        printf("Usage: qgc [OPTIONS]                 apply the retention policy\n"
               "       qgc --dry-run [--json]        print the plan, change nothing\n"
               "       qgc status [--json]           disk use per project\n"
               "       qgc check-config [--explain]  validate the policy file(s)\n"
               "       qgc restore SESSION_ID        move an archived session back (a unique\n"
               "                                     prefix of the id is enough)\n"
               "       qgc restore --project PATH    restore every archived session of a project\n"
               "       qgc restore --to-archive ID   a compressed session back to chats/archive/\n"
               "                                     only (without it: on to chats/)\n"
               "       qgc show SESSION_ID           write a session's transcript to stdout\n"
               "\n"
               "Archiving moves a session to chats/archive/ on the same disk: it frees no\n"
               "space. Only deletions (action = \"delete\", archive-max-age, the tree caps)\n"
               "free space.\n"
               "\n"
               "Options:\n"
               "  -n, --dry-run          print the exact plan with a reason per session\n"
               "  -j, --json             print the plan (status: disk use) as JSON\n"
               "      --changes          print only what changes, one line per session\n"
               "                         naming its project (implies --dry-run)\n"
               "  -c, --config FILE      read only this policy file\n"
               "      --system-config F  read F as the system policy (to try it first)\n"
               "  -r, --root DIR         a Qwen data directory (like ~/.qwen); repeatable\n"
               "      --all-users        root only: every user's trees, each as its user\n"
               "      --user NAME        root only: as --all-users, for NAME only; repeatable\n"
               "      --now TIME         pretend it is TIME: ISO 8601 (no zone: local time),\n"
               "                         @epoch, or +7d / -12h from now\n"
               "      --force            ignore the per-run deletion limit\n"
               "      --log-target T     auto, journal or stderr (default auto)\n"
               "      --log-file FILE    write the action log to FILE\n"
               "      --random-delay D   sleep a random time up to D first (e.g. 30min)\n"
               "      --jobs N           scan with N threads (default: CPUs, at most 4)\n"
               "      --metrics-file F   write the run's metrics for node_exporter to F\n"
               "  -q, --quiet            print nothing on success\n"
               "  -v, --verbose          more diagnostics (twice: debug)\n"
               "  -h, --help             this help\n"
               "  -V, --version          version\n");
}

enum {
        OPT_NOW = 0x100,
        OPT_FORCE,
        OPT_ALL_USERS,
        OPT_LOG_TARGET,
        OPT_LOG_FILE,
        OPT_EXPLAIN,
        OPT_RANDOM_DELAY,
        OPT_JOBS,
        OPT_METRICS_FILE,
        OPT_CHANGES,
        OPT_PROJECT,
        OPT_TO_ARCHIVE,
        OPT_USER,
        OPT_SYSTEM_CONFIG,
};

/* --now: "+7d"/"-12h" (from the real clock, applied when it is read), "@epoch", or ISO 8601;
 * a date or time without a zone (Z, +hh:mm) is local time, as with journalctl --since. */
static int main_parse_now(const char *s) {
        const char *why = NULL, *t;
        struct tm tm = {};
        msec_t v, ms;
        time_t secs;

        if (s[0] == '+' || s[0] == '-') {
                if (parse_duration(s + 1, &v, &why) < 0 || v == MSEC_INFINITY)
                        return -EINVAL;
                arg_now_rel = s[0] == '-' ? -v : v;
                arg_now_is_rel = true;
                return 0;
        }
        if (js_parse_timestamp(s, &v) < 0)
                return -EINVAL;
        arg_now_is_rel = false;
        arg_now_msec = v;
        if (s[0] == '@')
                return 0;
        /* a zone is a Z or a sign after the time (the date's own '-' come before it) */
        t = strpbrk(s, "Tt ");
        if (t && strpbrk(t, "Zz+-"))
                return 0;
        secs = (time_t)(v >= 0 ? v / 1000 : (v - 999) / 1000);
        ms = v - (msec_t)secs * 1000;
        if (!gmtime_r(&secs, &tm))
                return -EINVAL;
        tm.tm_isdst = -1;
        secs = mktime(&tm);
        if (secs == (time_t)-1)
                return -EINVAL;
        arg_now_msec = (msec_t)secs * 1000 + ms;
        return 0;
}

/* After getopt_long()'s message about arg (an unknown option, or one without its argument): the
 * closest long option to an unknown "--name", and --help. */
static void main_usage_hint(const struct option *options, const char *arg) {
        const char *names[64], *s = NULL;
        _cleanup_free_ char *name = NULL;
        size_t n = 0;

        if (arg && strncmp(arg, "--", 2) == 0) {
                name = strndup(arg + 2, strcspn(arg + 2, "="));
                for (; options[n].name && n < ELEMENTSOF(names); n++)
                        names[n] = options[n].name;
                s = name ? closest_name(name, names, n) : NULL;
        }
        if (s && !streq(s, name))
                log_error("did you mean '--%s'? (try 'qgc --help')", s);
        else
                log_error("try 'qgc --help'");
}

int main_options_parse(int argc, char *argv[]) {
        static const struct option options[] = {
                { "dry-run", no_argument, NULL, 'n' },
                { "json", no_argument, NULL, 'j' },
                { "config", required_argument, NULL, 'c' },
                { "system-config", required_argument, NULL, OPT_SYSTEM_CONFIG },
                { "root", required_argument, NULL, 'r' },
                { "all-users", no_argument, NULL, OPT_ALL_USERS },
                { "now", required_argument, NULL, OPT_NOW },
                { "force", no_argument, NULL, OPT_FORCE },
                { "log-target", required_argument, NULL, OPT_LOG_TARGET },
                { "log-file", required_argument, NULL, OPT_LOG_FILE },
                { "explain", no_argument, NULL, OPT_EXPLAIN },
                { "random-delay", required_argument, NULL, OPT_RANDOM_DELAY },
                { "jobs", required_argument, NULL, OPT_JOBS },
                { "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
                { "changes", no_argument, NULL, OPT_CHANGES },
                { "project", required_argument, NULL, OPT_PROJECT },
                { "to-archive", no_argument, NULL, OPT_TO_ARCHIVE },
                { "user", required_argument, NULL, OPT_USER },
                { "quiet", no_argument, NULL, 'q' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "njc:r:qvhV", options, NULL)) >= 0) {
                switch (c) {
                case 'n':
                        arg_dry_run = true;
                        break;
                case 'j':
                        arg_json = true;
                        break;
                case 'c':
                        arg_config = optarg;
                        break;
                case OPT_SYSTEM_CONFIG:
                        arg_system_config = optarg;
                        break;
                case 'r': {
                        char **n = realloc(arg_roots, (arg_n_roots + 1) * sizeof(char *));
                        if (!n)
                                return -ENOMEM;
                        arg_roots = n;
                        arg_roots[arg_n_roots++] = optarg;
                        break;
                }
                case OPT_ALL_USERS:
                        arg_all_users = true;
                        break;
                case OPT_USER: {
                        char **n = realloc(arg_users, (arg_n_users + 1) * sizeof(char *));
                        if (!n)
                                return -ENOMEM;
                        arg_users = n;
                        arg_users[arg_n_users++] = optarg;
                        arg_all_users = true; /* root mode, for the named users only */
                        break;
                }
                case OPT_NOW:
                        if (main_parse_now(optarg) < 0) {
                                log_error("--now '%s': expected ISO 8601 (2027-01-01T00:00:00Z; "
                                          "without a zone: local time), @epoch, or +D/-D "
                                          "from now (+7d)",
                                          optarg);
                                return -EINVAL;
                        }
                        arg_now = optarg;
                        break;
                case OPT_FORCE:
                        arg_force = true;
                        break;
                case OPT_LOG_TARGET:
                        if (journal_target_from_string(optarg) < 0 || streq(optarg, "file")) {
                                log_error("--log-target: expected auto, journal or stderr, got '%s'",
                                          optarg);
                                return -EINVAL;
                        }
                        arg_log_target = optarg;
                        break;
                case OPT_LOG_FILE:
                        arg_log_file = optarg;
                        break;
                case OPT_EXPLAIN:
                        arg_explain = true;
                        break;
                case OPT_PROJECT:
                        arg_restore_project = optarg;
                        break;
                case OPT_TO_ARCHIVE:
                        arg_restore_to_archive = true;
                        break;
                case OPT_CHANGES:
                        arg_changes = true;
                        arg_dry_run = true; /* a view of the plan: never a run */
                        break;
                case OPT_RANDOM_DELAY: {
                        const char *why = NULL;
                        if (parse_duration(optarg, &arg_random_delay, &why) < 0) {
                                log_error("--random-delay '%s': %s", optarg, why);
                                return -EINVAL;
                        }
                        break;
                }
                case OPT_JOBS: {
                        char *end = NULL;
                        unsigned long v;

                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno != 0 || !end || *end || end == optarg || optarg[0] == '-' ||
                            v < 1 || v > MAIN_JOBS_MAX) {
                                log_error("--jobs '%s': not a number from 1 to %u", optarg,
                                          MAIN_JOBS_MAX);
                                return -EINVAL;
                        }
                        arg_jobs = (unsigned)v;
                        break;
                }
                case OPT_METRICS_FILE:
                        arg_metrics_file = optarg;
                        break;
                case 'q':
                        arg_quiet = true;
                        break;
                case 'v':
                        arg_verbose++;
                        break;
                case 'h':
                        main_help();
                        return 0;
                case 'V':
#ifdef QGC_PACKAGE_VERSION
                        /* the package's version changes without the source's (a new revision) */
                        printf("qgc %s (package %s)\n", PACKAGE_VERSION, QGC_PACKAGE_VERSION);
#else
                        printf("qgc %s\n", PACKAGE_VERSION);
#endif
                        return 0;
                default:
                        /* getopt_long() said what argv[optind - 1] lacks */
                        main_usage_hint(options, optind > 0 ? argv[optind - 1] : NULL);
                        return -EINVAL;
                }
        }

        if (optind < argc) {
                const char *verb = argv[optind++];
                if (streq(verb, "status"))
                        arg_command = CMD_STATUS;
                else if (streq(verb, "check-config"))
                        arg_command = CMD_CHECK_CONFIG;
                else if (streq(verb, "restore")) {
                        arg_command = CMD_RESTORE;
                        if (optind < argc && !arg_restore_project)
                                arg_restore_id = argv[optind++];
                        else if (!arg_restore_project) {
                                log_error("restore: missing SESSION_ID (or --project PATH)");
                                return -EINVAL;
                        }
                } else if (streq(verb, "show")) {
                        arg_command = CMD_SHOW;
                        if (optind >= argc) {
                                log_error("show: missing SESSION_ID");
                                return -EINVAL;
                        }
                        arg_restore_id = argv[optind++]; /* the session named, as for restore */
                } else if (streq(verb, "run"))
                        arg_command = CMD_RUN;
                else {
                        static const char *const commands[] = { "run", "status", "check-config",
                                                                "restore", "show" };
                        const char *s = closest_name(verb, commands, ELEMENTSOF(commands));
                        if (s)
                                log_error("unknown command '%s'; did you mean '%s'? (try 'qgc "
                                          "--help')",
                                          verb, s);
                        else
                                log_error("unknown command '%s' (try 'qgc --help')", verb);
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                log_error("unexpected argument '%s' (try 'qgc --help')", argv[optind]);
                return -EINVAL;
        }
        if (arg_json && arg_command != CMD_STATUS &&
            !(arg_dry_run && (arg_command == CMD_RUN || arg_command == CMD_RESTORE))) {
                log_error("--json goes with --dry-run or status");
                return -EINVAL;
        }
        if (arg_restore_project && arg_command != CMD_RESTORE) {
                log_error("--project goes with restore");
                return -EINVAL;
        }
        if (arg_restore_to_archive && arg_command != CMD_RESTORE) {
                log_error("--to-archive goes with restore");
                return -EINVAL;
        }
        if (arg_changes && (arg_json || arg_command != CMD_RUN)) {
                log_error("--changes is a text view of the plan: not with --json or a command");
                return -EINVAL;
        }
        if (arg_explain && arg_command != CMD_CHECK_CONFIG) {
                log_error("--explain goes with check-config");
                return -EINVAL;
        }
        if (arg_all_users && arg_n_roots > 0) {
                log_error("--all-users (or --user) and --root exclude each other");
                return -EINVAL;
        }
        /* metrics (metrics.c): the shared buffer is opened before any fork */
        if (arg_metrics_file) {
                if (arg_dry_run || arg_command != CMD_RUN) {
                        log_error("--metrics-file goes with a real run");
                        return -EINVAL;
                }
                if (metrics_init(arg_metrics_file, "--metrics-file") < 0)
                        return -EINVAL;
        }
        if (arg_quiet)
                log_set_max_level(LOG_LEVEL_WARNING);
        if (arg_verbose == 1)
                log_set_max_level(LOG_LEVEL_INFO);
        else if (arg_verbose >= 2)
                log_set_max_level(LOG_LEVEL_DEBUG);
        return 1;
}
