/* dc-process.h: a process that is Deep Code's to qgc (its command line names it, as the npm
 * bin `deepcode` does) working in a directory: the Deep Code tests' liveness evidence. */
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* Start a process whose argv[0] names Deep Code, its cwd work, in a process group of its own;
 * return once it runs. */
static inline pid_t dc_process_start(const char *work) {
        int pipefd[2];
        pid_t pid;
        char c;

        assert_int_equal(pipe(pipefd), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (setpgid(0, 0) < 0 || chdir(work) < 0 || dup2(pipefd[1], 3) < 0)
                        _exit(1);
                /* the shell stays (sleep is not its last command) */
                execl("/bin/sh", "deepcode", "-c", "echo x >&3; sleep 30; :", (char *)NULL);
                _exit(1);
        }
        close(pipefd[1]);
        assert_int_equal(read(pipefd[0], &c, 1), 1);
        close(pipefd[0]);
        return pid;
}

static inline void dc_process_stop(pid_t pid) {
        kill(-pid, SIGKILL);
        (void)waitpid(pid, NULL, 0);
}
