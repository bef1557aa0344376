/* dc-proc.c: the Deep Code processes of this host and their project codes (see dc-proc.h).
 * /proc is read by pid directory fd: cmdline by fs_pread_full(), the cwd by readlinkat(). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dc-proc.h"
#include "dc-project.h"
#include "fs.h"
#include "macro.h"
#include "util.h"

void dc_proc_done(DcProcs *p) {
        for (size_t i = 0; i < p->n; i++)
                free(p->procs[i].code);
        free(p->procs);
        *p = (DcProcs){};
}

static bool dc_proc_names_deepcode(const char *s, size_t n) {
        static const char word[] = "deepcode";

        for (size_t i = 0; i + sizeof(word) - 1 <= n; i++)
                if (util_ascii_strncasecmp(s + i, word, sizeof(word) - 1) == 0)
                        return true;
        return false;
}

/* The process of /proc/<name>: 1 with *ret filled when it is Deep Code's, 0 when not (or gone),
 * -ENOMEM. */
static int dc_proc_one(int procfd, const char *name, DcProc *ret) {
        _cleanup_close_ int pfd = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int cfd = -EBADF;
        char cmd[DC_PROC_CMDLINE_MAX], cwd[PATH_MAX];
        struct stat st;
        ssize_t n;

        if (pfd < 0 || fstat(pfd, &st) < 0)
                return 0;
        cfd = openat(pfd, "cmdline", O_RDONLY | O_CLOEXEC);
        n = cfd < 0 ? -1 : fs_pread_full(cfd, cmd, sizeof(cmd), 0);
        if (n <= 0 || !dc_proc_names_deepcode(cmd, (size_t)n))
                return 0;
        *ret = (DcProc){ .pid = (pid_t)strtol(name, NULL, 10), .uid = st.st_uid };
        n = readlinkat(pfd, "cwd", cwd, sizeof(cwd) - 1);
        if (n < 0)
                return errno == ENOENT ? 0 : 1; /* gone, or in doubt */
        cwd[n] = 0;
        return dc_project_code(cwd, &ret->code) == -ENOMEM ? -ENOMEM : 1;
}

int dc_proc_scan(DcProcs *ret) {
        _cleanup_close_ int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        size_t alloc = 0;
        int k;

        *ret = (DcProcs){};
        if (!d)
                return -ENOMEM;
        if (procfd < 0) {
                ret->overflow = true;
                return 0;
        }
        fs_dir_init(d, procfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                DcProc p;
                int r;

                if (name[strspn(name, "0123456789")] != 0 || strtol(name, NULL, 10) == getpid())
                        continue; /* not a process, or qgc itself (its arguments may name a store) */
                r = dc_proc_one(procfd, name, &p);
                if (r < 0) {
                        dc_proc_done(ret);
                        return r;
                }
                if (r == 0)
                        continue;
                if (ret->n >= DC_PROC_MAX) {
                        free(p.code);
                        ret->overflow = true;
                        break;
                }
                if (util_greedy_realloc((void **)&ret->procs, &alloc, ret->n + 1,
                                        sizeof(DcProc)) < 0) {
                        free(p.code);
                        dc_proc_done(ret);
                        return -ENOMEM;
                }
                ret->procs[ret->n++] = p;
        }
        if (k < 0)
                ret->overflow = true;
        return 0;
}

int dc_proc_find(const DcProcs *p, const char *code, uid_t uid, pid_t *ret_pid) {
        bool doubt = p->overflow;

        for (size_t i = 0; i < p->n; i++) {
                if (p->procs[i].code && streq(p->procs[i].code, code)) {
                        *ret_pid = p->procs[i].pid;
                        return 1;
                }
                if (!p->procs[i].code && (p->procs[i].uid == uid || p->procs[i].uid == 0))
                        doubt = true;
        }
        return doubt ? -EUCLEAN : 0;
}
