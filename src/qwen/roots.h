/* roots.h: where a user's Qwen trees are, resolved as Qwen Code does (storage.ts, and the
 * settings files of settings.ts for advanced.runtimeOutputDir). */
#pragma once

#include <errno.h>
#include <sys/types.h>

#include "store.h"

/* What Qwen's process would have: the environment values (NULL or "" when unset). */
typedef struct RootsOptions {
        const char *home;
        const char *qwen_home;   /* $QWEN_HOME */
        const char *runtime_env; /* $QWEN_RUNTIME_DIR */
        const char *system_settings; /* $QWEN_CODE_SYSTEM_SETTINGS_PATH, else
                                      * SETTINGS_SYSTEM_PATH */
        const char *system_defaults; /* $QWEN_CODE_SYSTEM_DEFAULTS_PATH, else
                                      * system-defaults.json beside the system settings */
        char *const *env; /* what $VAR in a setting resolves against; NULL: nothing is known
                           * (root mode: the user's login environment is not qgc's) */
} RootsOptions;

/* Tree.incomplete_why when Qwen's settings give a relative runtimeOutputDir: each project has
 * its own runtime root (<cwd>/<value>), not seen, so the tree's transcripts are not all known:
 * no orphan, stale tmp/debug/plan or tree cap is decided for it (as for a tree not fully
 * listed); the sessions seen under R = G are handled as usual. */
#define ROOTS_PARTIAL_WHY                                                                  \
        "a relative advanced.runtimeOutputDir puts runtime roots in each project, which qgc " \
        "does not see"

/* Tree.incomplete_why when some project's own files (its workspace settings, a .env Qwen may
 * load for it) may give its sessions a runtime root other than the tree's: roots_workspaces(). */
#define ROOTS_WORKSPACE_WHY                                                                   \
        "a project's workspace settings or .env may put its sessions in a runtime directory " \
        "qgc does not see"

/* Tree.incomplete_why when the settings' env.QWEN_RUNTIME_DIR, which Qwen 0.15.6 applies, names
 * another runtime root than the tree's: the sessions 0.15.6 started are there, their plans in
 * G, so no G-level orphan, stale tmp/debug/plan or tree cap is decided for the tree. */
#define ROOTS_ENV_WHY                                                                          \
        "env.QWEN_RUNTIME_DIR in Qwen's settings put the sessions of Qwen 0.15.6 in a runtime " \
        "directory qgc does not see"

/* The runtime root cannot be determined (a settings file Qwen could not use, a variable qgc
 * does not know, a value Qwen cannot start with): nothing may be decided for that tree. */
#define ROOTS_UNDETERMINED (-ENXIO)

/* Resolve G and R for a user:
 *   G = $QWEN_HOME (with ~ expansion against home; relative values resolved against cwd)
 *       else <home>/.qwen
 *   R = $QWEN_RUNTIME_DIR (same expansion), else advanced.runtimeOutputDir merged as Qwen
 *       merges its settings files (system settings over user settings over system defaults)
 *       when it resolves to an absolute (or ~-based) path, else G.
 *   Incomplete (ROOTS_PARTIAL_WHY) for a relative runtimeOutputDir; incomplete (ROOTS_ENV_WHY,
 *   a notice naming the file) when G is ~/.qwen, $QWEN_RUNTIME_DIR is unset or empty and the
 *   settings' env.QWEN_RUNTIME_DIR, which Qwen 0.15.6 applies, does not name R (or a file that
 *   might set it cannot be read).
 * Fills *ret (strings owned by ret; user/uid left for the caller). Returns 0, -ENOMEM,
 * -EINVAL, or ROOTS_UNDETERMINED with *ret_why (when given) saying why; the text names only
 * the file, never anything read from it. */
int roots_resolve_opts(const RootsOptions *o, Tree *ret, char **ret_why);

/* --root DIR: DIR serves as both G and R. */
int roots_from_dir(const char *dir, Tree *ret);

/* The workspace check (may Qwen, started there, put sessions in another runtime root?) of each
 * distinct cwd of the sessions of each tree of store that is complete
 * (inventory sorted), and of the cwd ("project") G/usage_record.jsonl records for each session
 * that no scanned transcript has and that left G/file-history/<id>/ or G/plans/<id>.md (the
 * G-level orphan candidates; the usage file is read only when there are some): a tree with a
 * project that may is made incomplete (ROOTS_WORKSPACE_WHY; every tree of that G for the
 * candidates), each such project named in a notice. 0 or -ENOMEM. */
int roots_workspaces(Inventory *inv, const StoreOps *store, const char *home);
