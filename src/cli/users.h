/* users.h: root mode (--all-users): find every user with Qwen trees and handle each in a child
 * that dropped to that user before opening anything in the home. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "inventory.h"

/* Called in the child, after the drop to the user: inv holds that user's tree(s) (with user and
 * uid set), cfg is the system policy merged with the user's own file (admin caps win).
 * Returns what main's pipeline returns (0 ok, 1 some failed, -errno); -ENOENT: what a restore
 * asked for is not in this user's trees (not a failure: users_run_all() fails the run only when
 * no user has it). */
typedef int (*users_run_cb)(Inventory *inv, const Config *cfg, void *userdata);

/* What the parent writes around each child's output on stdout. */
typedef struct UsersOutput {
        bool json;    /* one JSON document: {"version": 1, "users": [{"user": NAME, "plan":
                       * <the child's plan or null>, "status": ..., "reason": ...}, ...]} */
        bool headers; /* a "user NAME:" line before each user's text output */
        char **only;  /* --user NAME...: only these users (NULL: every user) */
        size_t n_only;
} UsersOutput;

/* For every user whose home holds Qwen trees (getpwent, plus cfg->user_dirs): fork, drop to the
 * user (initgroups, setresgid, setresuid, verify root cannot be regained), resolve the user's
 * trees, merge configs, call cb, exit with its result. Returns 0 when every user's run
 * succeeded, 1 when some failed, -errno on a fatal error. The caller checked that it is root. */
int users_run_all(const Config *system_cfg, users_run_cb cb, void *userdata,
                  const UsersOutput *out);
