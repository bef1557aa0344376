/* main-int.h: what qgc's command line (main-options.c) hands to the pipeline (main.c): the
 * command and the options' values. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

typedef enum Command {
        CMD_RUN,
        CMD_STATUS,
        CMD_CHECK_CONFIG,
        CMD_RESTORE,
        CMD_SHOW,
} Command;

extern Command arg_command;
extern bool arg_dry_run;
extern bool arg_json;
extern bool arg_force;
extern bool arg_explain;
extern bool arg_changes;
extern bool arg_all_users;
extern bool arg_quiet;
extern unsigned arg_jobs; /* 0: main_default_jobs() */
extern const char *arg_config;
extern const char *arg_system_config; /* NULL: CONFIG_SYSTEM_FILE */
extern char **arg_roots;
extern size_t arg_n_roots;
extern char **arg_users; /* --user NAME (repeatable): implies --all-users */
extern size_t arg_n_users;
extern const char *arg_now;
extern msec_t arg_now_msec;
extern msec_t arg_now_rel; /* --now +D / -D: relative to the real clock */
extern bool arg_now_is_rel;
extern const char *arg_log_target;
extern const char *arg_log_file;
extern const char *arg_restore_id;
extern const char *arg_restore_project;
extern bool arg_restore_to_archive;
extern msec_t arg_random_delay;
extern const char *arg_metrics_file; /* metrics.c */

/* Parse the command line into arg_*: 1 to run, 0 when done (--help, --version), -errno on a
 * usage error (logged). */
int main_options_parse(int argc, char *argv[]);
