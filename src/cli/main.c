/* main.c: qgc's command line: the options (arg_*, --help, --now's forms, the checks of options
 * against each other), and the pipeline they drive: config -> roots -> scan -> policy -> plan ->
 * (dry-run: render | run: lock, execute, journal), with errors mapped to exit codes. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "cold.h"
#include "config.h"
#include "hygiene.h"
#include "inventory.h"
#include "journal.h"
#include "js.h"
#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "plan.h"
#include "policy.h"
#include "deepcode-store.h"
#include "qwen-store.h"
#include "recover.h"
#include "restore.h"
#include "show.h"
#include "roots.h"
#include "scan.h"
#include "text.h"
#include "users.h"
#include "util.h"

#define MAIN_JOBS_DEFAULT_MAX 4
#define MAIN_JOBS_MAX 64

typedef enum Command {
        CMD_RUN,
        CMD_STATUS,
        CMD_CHECK_CONFIG,
        CMD_RESTORE,
        CMD_SHOW,
} Command;

static Command arg_command = CMD_RUN;
static bool arg_dry_run = false;
static bool arg_json = false;
static bool arg_force = false;
static bool arg_explain = false;
static bool arg_changes = false;
static bool arg_all_users = false;
static bool arg_quiet = false;
static int arg_verbose = 0;
static unsigned arg_jobs = 0; /* 0: main_default_jobs() */
static const char *arg_config = NULL;
static const char *arg_system_config = NULL;
static char **arg_roots = NULL;
static size_t arg_n_roots = 0;
static char **arg_users = NULL; /* --user NAME (repeatable): implies --all-users */
static size_t arg_n_users = 0;
static const char *arg_now = NULL;
static msec_t arg_now_msec = 0;
static msec_t arg_now_rel = 0; /* --now +D / -D: relative to the real clock */
static bool arg_now_is_rel = false;
static const char *arg_log_target = "auto";
static const char *arg_log_file = NULL;
static const char *arg_restore_id = NULL;
static const char *arg_restore_project = NULL;
static bool arg_restore_to_archive = false;
static msec_t arg_random_delay = 0;
static const char *arg_metrics_file = NULL;

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
                if (util_parse_duration(s + 1, &v, &why) < 0 || v == MSEC_INFINITY)
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
                s = name ? util_closest_name(name, names, n) : NULL;
        }
        if (s && !streq(s, name))
                log_error("did you mean '--%s'? (try 'qgc --help')", s);
        else
                log_error("try 'qgc --help'");
}

/* Parse the command line into arg_*: 1 to run, 0 when done (--help, --version), -errno on a
 * usage error (logged). */
static int main_options_parse(int argc, char *argv[]) {
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
                        if (util_parse_duration(optarg, &arg_random_delay, &why) < 0) {
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
                        const char *s = util_closest_name(verb, commands, ELEMENTSOF(commands));
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


static msec_t real_now_msec = 0; /* the wall clock, read once in main_run() */
static bool journal_from_parent = false; /* --all-users: the parent opened the action log */

/* The user's own policy file: $XDG_CONFIG_HOME/qgc/qgc.conf or ~/.config/qgc/qgc.conf. */
static char *main_user_config_path(void) {
        const char *xdg = getenv("XDG_CONFIG_HOME");
        const char *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
                return util_path_join(xdg, "qgc/qgc.conf");
        if (home && home[0] == '/')
                return util_path_join(home, ".config/qgc/qgc.conf");
        return NULL;
}

/* Config errors echo what a file said: in --all-users mode a user's file, shown on root's
 * terminal. Cleaned (text.h). */
static void main_print_config_errors_at(const ConfigErrors *errs, LogLevel level) {
        for (size_t i = 0; i < errs->n; i++) {
                log_prefix_level(level); /* "<3>" when stderr is the journal */
                (void)text_fputs_terminal(errs->msgs[i], strlen(errs->msgs[i]), stderr);
                fputc('\n', stderr);
        }
}
#define main_print_config_errors(errs) main_print_config_errors_at((errs), LOG_LEVEL_ERR)

/* check-config --explain, cleaned for the terminal like everything else that prints values
 * from policy files. */
static int main_explain(const Config *cfg) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r;

        if (!f)
                return -ENOMEM;
        r = config_explain(cfg, f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        return text_fputs_terminal(buf, len, stdout);
}

/* The drop-in directory of the system file: its directory + "/conf.d". */
static char *main_dropin_dir(const char *system_file) {
        const char *slash = strrchr(system_file, '/');
        _cleanup_free_ char *dir = slash ? strndup(system_file, (size_t)(slash - system_file))
                                         : strdup(".");

        return dir ? util_path_join(*dir ? dir : "/", "conf.d") : NULL;
}

/* Load the policy: -c FILE only, else the system file (--system-config FILE) and its drop-ins
 * then the user's file, else built-ins. */
static int main_load_config(Config *cfg) {
        _cleanup_(config_errors_done) ConfigErrors errs = {};
        int r;

        r = config_init_default(cfg);
        if (r < 0)
                return r;
        if (arg_config) {
                r = config_load_file(cfg, arg_config, &errs);
                if (r == -ENOENT) {
                        log_error("%s: no such file", arg_config);
                        return -EINVAL;
                }
                if (r < 0) {
                        main_print_config_errors(&errs);
                        return -EINVAL;
                }
                return 0;
        }
        const char *sys = arg_system_config ?: CONFIG_SYSTEM_FILE;
        r = config_load_system_file(cfg, sys, &errs);
        if (r < 0 && r != -ENOENT) {
                main_print_config_errors(&errs);
                return -EINVAL;
        }
        /* the admin's drop-ins, "*.conf" in conf.d/ next to the system file, lexical order */
        _cleanup_free_ char *dropins = main_dropin_dir(sys);
        if (!dropins)
                return -ENOMEM;
        r = config_load_dropins(cfg, dropins, &errs);
        if (r < 0) {
                main_print_config_errors(&errs);
                if (r != -EINVAL)
                        log_error_errno(r, "cannot read '%s'", dropins);
                return -EINVAL;
        }
        if (arg_all_users)
                return 0; /* each user's own file is merged in that user's child (users.c) */
        _cleanup_free_ char *user = main_user_config_path();
        if (!user)
                return 0;
        /* the admin's file is a cap: the user's own file may only tighten it (without one, it
         * layers freely on the built-in default) */
        Config merged = {};
        r = config_merge_user(&merged, cfg, user, &errs);
        if (r < 0) {
                main_print_config_errors(&errs);
                return r == -ENOMEM ? r : -EINVAL;
        }
        if (!arg_quiet) /* warnings about clamped values; cron would mail them on every run */
                main_print_config_errors_at(&errs, LOG_LEVEL_WARNING);
        config_done(cfg);
        *cfg = merged;
        return 0;
}

/* The stores, in the order they are asked whose a --root directory is: Qwen's, which takes any
 * directory, last. */
static const StoreOps *const main_stores[] = { &deepcode_store, &qwen_store };

/* --root DIR: the tree of the first store that says DIR is one of its roots (the last store's
 * when DIR cannot be opened: its scan says why). */
static int main_root_tree(const char *dir, Tree *ret) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
        size_t i = 0;

        for (; fd >= 0 && i + 1 < ELEMENTSOF(main_stores); i++) {
                int r = main_stores[i]->detect(fd, dir);

                if (r < 0)
                        return r;
                if (r > 0)
                        break;
        }
        return main_stores[i]->tree_from_dir(dir, ret);
}

/* The current user's trees, as Qwen and Deep Code find them (admin.stores), or the --root
 * directories (whatever store each one is). */
static int main_add_trees(Inventory *inv, int stores) {
        int r;

        if (arg_n_roots > 0) {
                for (size_t i = 0; i < arg_n_roots; i++) {
                        Tree t = {};
                        struct stat st;

                        /* a typo is an error, not "no sessions found" (exit 66, EX_NOINPUT) */
                        if (stat(arg_roots[i], &st) < 0)
                                return log_error_errno(-errno, "--root '%s'", arg_roots[i]),
                                       -ENOENT;
                        if (!S_ISDIR(st.st_mode))
                                return log_error("--root '%s': not a directory", arg_roots[i]),
                                       -ENOENT;
                        r = main_root_tree(arg_roots[i], &t);
                        if (r < 0)
                                return log_error_errno(r, "--root '%s'", arg_roots[i]);
                        t.uid = getuid();
                        r = inventory_add_tree(inv, &t, NULL);
                        if (r < 0)
                                return r;
                }
                return 0;
        }

        const char *home = getenv("HOME");
        struct passwd *pw = NULL;
        if (!home || home[0] != '/') {
                pw = getpwuid(getuid());
                if (!pw || !pw->pw_dir)
                        return log_error_errno(-ENOENT, "cannot find the home directory");
                home = pw->pw_dir;
        }
        if (stores != CONFIG_STORES_QWEN) {
                _cleanup_free_ char *dwhy = NULL;
                Tree d = {};

                r = deepcode_store.tree_for_home(home, &d, &dwhy);
                if (r >= 0) {
                        d.uid = getuid();
                        pw = getpwuid(getuid());
                        if (pw && pw->pw_name)
                                d.user = strdup(pw->pw_name);
                        r = inventory_add_tree(inv, &d, NULL);
                }
                if (r < 0 && r != -ENOENT)
                        return log_error_errno(r, "%s", dwhy ?: "cannot find the Deep Code store");
                if (stores == CONFIG_STORES_DEEPCODE)
                        return 0;
        }
        Tree t = {};
        _cleanup_free_ char *why = NULL;
        RootsOptions ro = {
                .home = home,
                .qwen_home = getenv("QWEN_HOME"),
                .runtime_env = getenv("QWEN_RUNTIME_DIR"),
                .system_settings = getenv("QWEN_CODE_SYSTEM_SETTINGS_PATH"),
                .system_defaults = getenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH"),
                .env = environ, /* Qwen started from this environment would see the same */
        };
        r = roots_resolve_opts(&ro, &t, &why);
        if (r == ROOTS_UNDETERMINED) {
                log_error("%s; nothing is done", why ?: "the runtime directory is not known");
                return r;
        }
        if (r < 0)
                return log_error_errno(r, "cannot resolve the Qwen directories");
        t.store = &qwen_store;
        t.uid = getuid();
        pw = getpwuid(getuid());
        if (pw && pw->pw_name)
                t.user = strdup(pw->pw_name);
        return inventory_add_tree(inv, &t, NULL);
}

/* Is this root's own run (no --root) of a tree that does not exist? An admin who typed `qgc`
 * meant every user's trees, most likely. */
static bool main_root_without_tree(const Inventory *inv) {
        struct stat st;

        return geteuid() == 0 && arg_n_roots == 0 && inv->n_trees == 1 &&
               (arg_command == CMD_RUN || arg_command == CMD_STATUS) &&
               stat(inv->trees[0].global_dir, &st) < 0 && errno == ENOENT;
}

static unsigned main_columns(void) {
        struct winsize w;
        const char *e = getenv("COLUMNS");
        if (e && atoi(e) > 20)
                return (unsigned)atoi(e);
        if (!isatty(STDOUT_FILENO))
                return 1000; /* a pipe or file gets whole reasons */
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20)
                return w.ws_col;
        return 100;
}

static int main_exit_code(int r) {
        switch (-r) {
        case EINVAL:
                return EX_USAGE;
        case EWOULDBLOCK:
                return EX_TEMPFAIL;
        default:
                return 1;
        }
}

/* The scan's threads when --jobs is not given: the CPUs this process may run on, at most
 * MAIN_JOBS_DEFAULT_MAX (the scan is bound by memory and the disk beyond that). */
static unsigned main_default_jobs(void) {
        cpu_set_t set;
        int n;

        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return 1;
        n = CPU_COUNT(&set);
        return (unsigned)MAX(1, MIN(n, MAIN_JOBS_DEFAULT_MAX));
}

/* The trees of inv, "A, B", for messages. */
static char *main_tree_list(const Inventory *inv) {
        _cleanup_(strbuf_done) StrBuf sb = {};

        for (size_t t = 0; t < inv->n_trees; t++)
                if (strbuf_printf(&sb, "%s'%s'", t > 0 ? ", " : "", inv->trees[t].runtime_dir) < 0)
                        return NULL;
        return sb.buf ? strbuf_steal(&sb) : strdup("no tree");
}

/* restore found nothing in inv's trees (what: "no session 'ID'", "project 'P' has no archived
 * session"). In root mode's child that user simply does not have it (users.c counts it, says
 * "found nowhere" when nobody has it): not an error. Root in its own trees is told how to reach
 * a user's. Returns -ENOENT. */
static int main_restore_absent(const char *what, const char *trees) {
        if (arg_all_users)
                log_info("restore: %s in %s", what, trees);
        else if (geteuid() == 0 && arg_n_roots == 0)
                log_error("restore: %s in %s (root's own trees); a user's: qgc restore ... "
                          "--user NAME, or --all-users to look in every user's trees",
                          what, trees);
        else
                log_error("restore: %s in %s", what, trees);
        return -ENOENT;
}

/* The session arg_restore_id names: a unique prefix of an id the scan listed, else the whole
 * id (it may be in the cold tier only, which the scan does not list). -EINVAL (logged) when it
 * names more than one. */
static int main_resolve_id(const Inventory *inv, const char *verb, const char **ret) {
        const char *other = NULL;
        int r = restore_resolve(inv, arg_restore_id, ret, &other);

        if (r == -ENOTUNIQ) {
                log_error("%s: '%s' names more than one session (%s, %s, ...); give more of the id",
                          verb, arg_restore_id, *ret, other);
                return -EINVAL;
        }
        if (r == -ENOENT)
                *ret = arg_restore_id;
        return 0;
}

/* The plan of qgc restore: a session by its id or a unique prefix of it, or every archived
 * session of --project PATH. Errors say "restore" and name the trees looked in. */
static int main_restore_plan(const Inventory *inv, msec_t now, Plan **ret) {
        _cleanup_free_ char *trees = main_tree_list(inv);
        const char *id = NULL;
        int r;

        if (!trees)
                return -ENOMEM;
        if (arg_restore_project) {
                r = restore_plan(inv, NULL, arg_restore_project, arg_restore_to_archive, now,
                                 ret);
                if (r == -ENOENT) {
                        _cleanup_free_ char *what = util_strprintf(
                                "project '%s' has no archived session", arg_restore_project);
                        return main_restore_absent(what ?: "project not found", trees);
                }
                return r < 0 ? log_error_errno(r, "restore: cannot plan it") : 0;
        }
        r = main_resolve_id(inv, "restore", &id);
        if (r < 0)
                return r;
        r = restore_plan(inv, id, NULL, arg_restore_to_archive, now, ret);
        if (r == -ENOENT) {
                _cleanup_free_ char *what = util_strprintf("no session '%s'", arg_restore_id);
                return main_restore_absent(what ?: "no such session", trees);
        }
        if (r < 0)
                return log_error_errno(r, "restore: cannot plan it");
        /* the id names a session that is not in the archive: the person's mistake, not a
         * failed restore (nothing is journaled or counted; exit 1 like an unknown id) */
        if ((*ret)->n_steps == 1 && (*ret)->steps[0].why &&
            (*ret)->steps[0].session < inv->n_sessions &&
            inv->sessions[(*ret)->steps[0].session].state == SESSION_ACTIVE) {
                log_error("restore: session %s is not archived (it is in %s): nothing to restore",
                          (*ret)->steps[0].session_id, trees);
                *ret = plan_free(*ret);
                return -ENOENT;
        }
        return 0;
}

/* After a real restore: one line per session moved back (not under --quiet). */
static void main_report_restore(const Plan *plan) {
        for (size_t i = 0; i < plan->n_steps; i++) {
                const PlanStep *st = &plan->steps[i];
                _cleanup_free_ char *to = NULL;
                char *slash;

                if (st->kind != PLAN_STEP_RESTORE || st->why || st->n_paths == 0)
                        continue;
                to = text_clean(st->paths[0].to, TEXT_TERMINAL);
                if (!to)
                        continue;
                slash = strrchr(to, '/');
                if (slash)
                        *slash = '\0';
                if (st->session == SIZE_MAX) /* from the cold tier (restore.c) */
                        printf("qgc: %srestored session %s from the compressed archive to %s\n",
                               log_user_prefix(), st->session_id, to);
                else
                        printf("qgc: %srestored session %s into %s\n", log_user_prefix(),
                               st->session_id, to);
        }
}

/* recover_scan() into a plan of its own, in a thread beside the policy and plan_build(): it
 * only lists directories of the trees (the inventory's trees are all it reads), a second walk
 * that took 0.06 s of the dry run's serial part at 100k sessions. */
typedef struct MainRecover {
        Plan *steps;
        pthread_t thread;
        bool started;
        int r;
} MainRecover;

static void *main_recover_thread(void *userdata) {
        MainRecover *m = userdata;

        m->r = recover_scan(m->steps);
        cold_default_free(); /* a restore's plan checked a compressed file in this thread */
        return NULL;
}

/* Wait for the thread (if any); the result of recover_scan(). */
static int main_recover_join(MainRecover *m) {
        if (m->started) {
                (void)pthread_join(m->thread, NULL);
                m->started = false;
        }
        return m->r;
}

static void main_recover_done(MainRecover *m) {
        (void)main_recover_join(m);
        m->steps = plan_free(m->steps);
}

/* The plan of this command: the restore plan, or the policy's plan with the recovery steps of
 * an interrupted run in front. Read-only. */
static int main_build_plan(Inventory *inv, const Config *cfg, msec_t now, Plan **ret) {
        _cleanup_(policy_verdicts_freep) Verdicts *verdicts = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(main_recover_done) MainRecover rec = {};
        PolicyOptions po = { .force = arg_force, .real_now = real_now_msec };
        double t0;
        int r;

        if (arg_command == CMD_RESTORE)
                return main_restore_plan(inv, now, ret);
        t0 = util_mono_sec();
        r = plan_new_steps(inv, now, &rec.steps);
        if (r < 0)
                return log_error_errno(r, "cannot build the plan");
        /* --jobs 1: one thread, as everywhere */
        if (arg_jobs != 1)
                rec.started = pthread_create(&rec.thread, NULL, main_recover_thread, &rec) == 0;
        r = policy_evaluate(inv, cfg, now, &po, &verdicts);
        if (r < 0)
                return log_error_errno(r, "policy evaluation failed");
        log_debug("policy: %.3f s", util_mono_sec() - t0);
        t0 = util_mono_sec();
        r = plan_build(inv, &verdicts, now, &plan);
        if (r < 0)
                return log_error_errno(r, "cannot build the plan");
        r = rec.started ? main_recover_join(&rec) : recover_scan(rec.steps);
        if (r >= 0)
                r = plan_take_steps(plan, rec.steps);
        if (r < 0)
                return log_error_errno(r, "cannot look for leftovers of an interrupted run");
        log_debug("plan: %.3f s", util_mono_sec() - t0);
        *ret = TAKE_PTR(plan);
        return 0;
}

/* Does the restore plan refuse some session? (reported like a failed action: exit 1) */
static bool main_plan_refuses(const Plan *p) {
        for (size_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].why && p->steps[i].kind == PLAN_STEP_RESTORE)
                        return true;
        return false;
}

static int main_report_warning(void *userdata, const char *w, bool limit) {
        (void)userdata;
        log_warning("warning: %s%s", w, limit ? " (use --force, or raise the limit)" : "");
        return 0;
}

/* The line after a real run: what happened, space freed and moved to the archive apart
 * (archiving frees nothing); then, even under --quiet (cron mails it), the plan's warnings: a
 * cap left unmet, sessions the deletion limits held back. */
static int main_report_run(const Plan *plan, const ActionStats *st, int r) {
        char fs[FORMAT_BYTES_MAX], as[FORMAT_BYTES_MAX];

        if (!arg_quiet || r > 0) {
                printf("qgc: %sarchived %u (%s moved to the archive), deleted %u, orphans "
                       "reclaimed %u, skipped %u, failed %u",
                       log_user_prefix(), st->n_archived,
                       util_format_bytes(as, sizeof as, st->bytes_archived), st->n_deleted,
                       st->n_orphans, st->n_skipped, st->n_failed);
                if (st->n_recovered > 0)
                        printf(", recovered %u", st->n_recovered);
                if (st->n_compressed > 0) {
                        char ci[FORMAT_BYTES_MAX], co[FORMAT_BYTES_MAX];
                        printf(", compressed %u (%s into %s)", st->n_compressed,
                               util_format_bytes(ci, sizeof ci, st->bytes_compressed_in),
                               util_format_bytes(co, sizeof co, st->bytes_compressed_out));
                }
                printf("; freed %s\n",
                       util_format_bytes(fs, sizeof fs, st->bytes_deleted + st->bytes_orphans));
        }
        /* an interactive run: where each action is recorded */
        if (!arg_quiet && isatty(STDOUT_FILENO)) {
                _cleanup_free_ char *c = arg_log_file ? text_clean(arg_log_file, TEXT_TERMINAL)
                                                      : NULL;
                if (c)
                        printf("qgc: every action is in %s\n", c);
                else if (!streq(arg_log_target, "stderr") && journal_available())
                        printf("qgc: every action is in the journal: journalctl -t qgc\n");
        }
        /* once in the journal: under a service whose stderr is the journal, the run-summary
         * entry already carries the warnings at PRIORITY=4 */
        if (!(log_to_journal_stream() && !arg_log_file && !streq(arg_log_target, "stderr") &&
              journal_available())) {
                int k;

                fflush(stdout);
                k = plan_foreach_warning(plan, main_report_warning, NULL);
                if (k < 0)
                        return k;
        }
        return r;
}

/* qgc show: the transcript's bytes exactly, into a pipe or a file; on a terminal through the
 * one cleaner (text.h): a transcript holds what a model or a tool printed, and no control
 * sequence of it reaches the terminal raw. */
static int main_show(const Inventory *inv, const char *id) {
        if (!isatty(STDOUT_FILENO))
                return show_session(inv, id, STDOUT_FILENO);
        return show_session_terminal(inv, id, stdout);
}

/* A real run on a terminal: one line per change it made (or held back at the last moment, or
 * failed), from the action log's own entries, as --changes lists the plan's; into userdata (a
 * FILE), printed after the run (the progress line shares the terminal meanwhile). */
static void main_echo_change(void *userdata, const JournalEntry *e) {
        _cleanup_free_ char *what = NULL, *proj = NULL, *why = NULL;
        char b[FORMAT_BYTES_MAX] = "";
        bool with_why = e->event == JOURNAL_SKIPPED || e->event == JOURNAL_FAILED;

        switch (e->event) {
        case JOURNAL_ARCHIVED:
        case JOURNAL_DELETED:
        case JOURNAL_ORPHAN_RECLAIMED:
        case JOURNAL_COMPRESSED:
        case JOURNAL_RECOVERED:
        case JOURNAL_STALE_MARK:
        case JOURNAL_SKIPPED:
        case JOURNAL_FAILED:
                break;
        default:
                return; /* the run's start and summary, a delete's salvage and erased rows */
        }
        what = text_clean(e->session ?: e->path ?: "", TEXT_TERMINAL);
        proj = e->project ? text_clean(e->project, TEXT_TERMINAL) : NULL;
        why = with_why && e->reason ? text_clean(e->reason, TEXT_TERMINAL) : NULL;
        if (e->has_bytes)
                util_format_bytes(b, sizeof b, e->bytes);
        fprintf(userdata, "%-16s %s %6s  %s%s%s\n", journal_event_to_string(e->event),
                what ?: "?", b, proj ?: "", why ? "  " : "", why ?: "");
}

/* Scan, build the plan, then the one fork: render it (dry run) or execute it (the executor
 * takes the locks and opens the action log). */
static int main_run_trees(Inventory *inv, const Config *cfg, msec_t now) {
        _cleanup_(plan_freep) Plan *plan = NULL;
        RenderOptions ro = { .columns = main_columns(), .show_keep = true,
                             .changes = arg_changes };
        ScanOptions so = { .now = now,
                           .jobs = arg_jobs > 0 ? arg_jobs : main_default_jobs() };
        ActionsRunOptions ao = {
                .log_target = journal_target_from_string(arg_log_target),
                .log_file = arg_log_file,
                .quiet = arg_quiet,
                .log_is_open = journal_from_parent,
                .one_thread = arg_jobs == 1,
        };
        ActionStats st = {};
        TitleNeed titles;
        double t0;
        int r;

        /* only the JSON plan shows titles; the rules need them only where they could act */
        policy_title_need(cfg, arg_dry_run && arg_json, &titles);
        so.titles = &titles;
        so.hygiene = hygiene_need(&cfg->defaults);
        t0 = util_mono_sec();
        r = scan_all(inv, &so);
        log_debug("scan: %zu sessions, %zu orphans in %.3f s (%u jobs)", inv->n_sessions,
                  inv->n_orphans, util_mono_sec() - t0, so.jobs);
        if (r == -ENOENT)
                log_info("a Qwen tree does not exist (nothing to do there)");
        else if (r < 0)
                log_warning_errno(r, "some trees could not be scanned");

        /* the scan's threads are gone: stdout needs no locking per character from here on */
        __fsetlocking(stdout, FSETLOCKING_BYCALLER);
        if (arg_command == CMD_STATUS) {
                /* below the per-project table: every byte of each tree by kind (tree-size.h) */
                if (arg_json)
                        return plan_json_render_status(inv, now, cfg->tree.count_allocated,
                                                       stdout);
                r = render_status_text(inv, now, &ro, stdout);
                if (r >= 0)
                        r = render_status_caps(inv, &cfg->tree, stdout);
                return r < 0 ? r : render_status_trees(inv, cfg->tree.count_allocated, stdout);
        }
        if (arg_command == CMD_SHOW) {
                const char *id = NULL;

                if (main_resolve_id(inv, "show", &id) < 0)
                        return EX_USAGE;
                r = main_show(inv, id);
                if (r == -ENOENT)
                        return log_error_errno(r, "no session %s in any tree", arg_restore_id), 1;
                if (r < 0 && cold_damage_why(r))
                        return log_error("cannot show session %s: %s", arg_restore_id,
                                         cold_damage_why(r)), 1;
                return r < 0 ? log_error_errno(r, "cannot show session %s", arg_restore_id), 1 : 0;
        }

        r = main_build_plan(inv, cfg, now, &plan);
        if (r < 0)
                return r;

        if (arg_dry_run) {
                t0 = util_mono_sec();
                r = arg_json ? plan_json_render(plan, stdout) : render_text(plan, &ro, stdout);
                log_debug("render: %.3f s", util_mono_sec() - t0);
                if (r >= 0 && plan->is_restore && main_plan_refuses(plan))
                        r = 1;
                return r;
        }

        /* on a terminal, what was done, one line each (not under --quiet; a restore says it) */
        _cleanup_free_ char *done = NULL;
        size_t done_len = 0;
        FILE *done_f = !arg_quiet && !plan->is_restore && isatty(STDOUT_FILENO)
                               ? open_memstream(&done, &done_len)
                               : NULL;
        if (done_f)
                journal_set_echo(main_echo_change, done_f);
        r = actions_run(plan, &ao, &st);
        if (done_f) {
                journal_set_echo(NULL, NULL);
                if (fclose(done_f) == 0 && done_len > 0)
                        fputs(done, stdout);
        }
        if (r < 0)
                return r;
        metrics_record(plan, &st, cfg); /* metrics.c; no-op without --metrics-file */
        if (plan->is_restore) {
                if (r == 0 && !arg_quiet)
                        main_report_restore(plan);
                return r;
        }
        return main_report_run(plan, &st, r);
}

/* --all-users: runs in each user's child, after the privilege drop. -ENOENT only for a restore
 * that this user's trees do not have (users.h). */
static int main_user_cb(Inventory *inv, const Config *cfg, void *userdata) {
        int r = main_run_trees(inv, cfg, *(const msec_t *)userdata);

        return r == -ENOENT && arg_command != CMD_RESTORE ? -EIO : r;
}

static int main_run(void) {
        _cleanup_(config_done) Config cfg = {};
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        msec_t now;
        int r;

        if (arg_all_users && geteuid() != 0) {
                /* refused before anything is read: EX_NOPERM (77), not a usage error */
                log_error("--all-users needs root (it runs each user's trees as that user); run "
                          "it as root, or without --all-users for your own trees");
                return EX_NOPERM;
        }
        r = main_load_config(&cfg);
        if (r < 0)
                return EX_CONFIG;
        /* the admin's metrics-file (system file only) for root's real runs, as the system timer
         * makes them; --metrics-file wins. Before any fork, as metrics_init() needs. */
        if (!arg_metrics_file && cfg.metrics_file && geteuid() == 0 && !arg_dry_run &&
            arg_command == CMD_RUN) {
                _cleanup_free_ char *source =
                        util_strprintf("admin.metrics-file (%s)", cfg.origin_metrics_file ?: "?");
                if (!source || metrics_init(cfg.metrics_file, source) < 0)
                        return 1;
        }
        if (arg_command == CMD_CHECK_CONFIG) {
                if (arg_explain)
                        return main_explain(&cfg) < 0 ? 1 : 0;
                if (!arg_quiet)
                        printf("configuration OK\n");
                return 0;
        }

        if (arg_random_delay > 0 && !arg_dry_run) {
                struct timespec ts;
                msec_t d;
                srandom((unsigned)(util_now_msec() ^ getpid()));
                d = (msec_t)((double)random() / RAND_MAX * (double)arg_random_delay);
                ts.tv_sec = d / 1000;
                ts.tv_nsec = (d % 1000) * 1000000;
                (void)nanosleep(&ts, NULL);
        }

        /* the clock is read once, after any random delay */
        real_now_msec = util_now_msec();
        now = !arg_now ? real_now_msec : arg_now_is_rel ? real_now_msec + arg_now_rel : arg_now_msec;

        if (arg_all_users) {
                if (!arg_dry_run && arg_command != CMD_STATUS && arg_command != CMD_SHOW) {
                        /* the action log is opened by root, before the drop: a root-owned
                         * --log-file could not be opened by the users' children, and one run id
                         * covers every user; each child's executor writes to it */
                        ActionsRunOptions ao = {
                                .log_target = journal_target_from_string(arg_log_target),
                                .log_file = arg_log_file,
                                .quiet = arg_quiet,
                        };
                        r = actions_open_log(&ao);
                        if (r < 0)
                                return 1;
                        journal_from_parent = true;
                }
                r = users_run_all(&cfg, main_user_cb, &now,
                                  &(const UsersOutput){
                                          .json = arg_json, /* a plan or status each */
                                          .headers = !arg_json && !arg_quiet &&
                                                     arg_command != CMD_CHECK_CONFIG,
                                          .only = arg_users,
                                          .n_only = arg_n_users,
                                  });
                if (journal_from_parent)
                        journal_close();
                return r < 0 ? main_exit_code(r) : r;
        }

        r = inventory_new(&inv);
        if (r < 0)
                return log_error_errno(r, "out of memory"), 1;
        r = main_add_trees(inv, cfg.stores);
        if (r == -ENOENT)
                return EX_NOINPUT;
        if (r < 0)
                return main_exit_code(r);
        bool root_no_tree = main_root_without_tree(inv);
        r = main_run_trees(inv, &cfg, now);
        fflush(stdout);
        if (root_no_tree && !arg_json) /* after the plan or the run line: the way on */
                log_notice("root has no Qwen tree of its own ('%s'); to collect every user's "
                           "trees, each as its user: qgc --all-users",
                           inv->trees[0].global_dir);
        return r < 0 ? main_exit_code(r) : r;
}

int main(int argc, char *argv[]) {
        const char *codeset;
        int r;

        /* display widths (wcwidth) and whether the terminal takes UTF-8 come from the locale;
         * everything else stays "C" (numbers, messages) */
        (void)setlocale(LC_CTYPE, "");
        codeset = nl_langinfo(CODESET);
        text_set_terminal_utf8(codeset && (streq(codeset, "UTF-8") || streq(codeset, "utf8")));

        r = main_options_parse(argc, argv);
        if (r <= 0) {
                free(arg_roots);
                free(arg_users);
                return r < 0 ? EX_USAGE : 0;
        }
        r = main_run();
        (void)metrics_finish(r); /* metrics.c; no-op without --metrics-file */
        free(arg_roots);
        free(arg_users);
        return r;
}
