/* swap-hook.h: a test's hook into the window of a shared-file edit (erase-edit.c) between its
 * temp file and the exchange that puts it in place (a concurrent writer goes there). The test
 * links with -Wl,--wrap=renameat2, and its __wrap_renameat2() calls swap_hook_run() first: the
 * hook runs before each renameat2(RENAME_EXCHANGE), with the name the exchange replaces. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

static void (*swap_hook)(void *userdata, const char *name);
static void *swap_hook_userdata;

/* NULL turns it off. */
static inline void swap_hook_set(void (*hook)(void *userdata, const char *name), void *userdata) {
        swap_hook = hook;
        swap_hook_userdata = userdata;
}

static inline void swap_hook_run(unsigned flags, const char *newname) {
        static bool running; /* not for the hook's own renames */

        if (!(flags & RENAME_EXCHANGE) || !swap_hook || running)
                return;
        running = true;
        swap_hook(swap_hook_userdata, newname);
        running = false;
}
