/* users.h: root mode (--all-users): find every user with Qwen trees and handle each in a child
 * that dropped to that user before opening anything in the home. */
#pragma once

#include <stdbool.h>

#include "config.h"

/* Returns 0 when every user's run succeeded, 1 when some failed, -errno on a fatal error. */
int users_run_all(const Config *system_cfg, msec_t now, bool dry_run, bool json, bool force);
