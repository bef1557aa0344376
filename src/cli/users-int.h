/* users-int.h: what the files of root mode share: users.c (the users, their children) and
 * users-path.c (the safe-path check). */
#pragma once

#include "macro.h"

/* Store a formatted reason in *ret (when ret is not NULL) and return r. */
_printf_(3, 4) int users_path_reason(char **ret, int r, const char *fmt, ...);
