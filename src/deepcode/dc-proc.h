/* dc-proc.h: the Deep Code processes of this host and the project each works in. Deep Code has
 * no registry and no lock; its project root is its cwd (the CLI's process.cwd()), so a process
 * whose command line names Deep Code and whose cwd maps to projects/<code>/ may write there. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* At most this many Deep Code processes are told apart; past it, every project is in doubt. */
#define DC_PROC_MAX 4096
/* The bytes of /proc/<pid>/cmdline looked at. */
#define DC_PROC_CMDLINE_MAX 4096

typedef struct DcProc {
        pid_t pid;
        uid_t uid;
        char *code; /* dc_project_code() of its cwd; NULL when the cwd cannot be read */
} DcProc;

typedef struct DcProcs {
        DcProc *procs;
        size_t n;
        bool overflow; /* more than DC_PROC_MAX, or /proc could not be listed */
} DcProcs;

/* Every process of /proc whose command line contains "deepcode" (ASCII case ignored: the
 * installed `deepcode` bin, @vegamo/deepcode-cli, a deepcode-cli checkout), with its cwd's
 * project code. 0 or -ENOMEM; what cannot be read is in ret (overflow, code NULL). */
int dc_proc_scan(DcProcs *ret);
void dc_proc_done(DcProcs *p);
/* May a Deep Code process be writing projects/<code>/ of a store owned by uid? 1 when one works
 * there (*ret_pid), -EUCLEAN when it cannot be told (a process of uid or root whose cwd cannot
 * be read, or overflow), 0 when none. */
int dc_proc_find(const DcProcs *p, const char *code, uid_t uid, pid_t *ret_pid);
