/* hygiene-reclaim.h: the executor's side of tree hygiene (hygiene.h: what the scan found). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "hygiene.h"
#include "orphans.h"

/* Carry out a stale project entry's verdict below root_fd (R, on dev): mark > 0 writes its
 * marker, mark < 0 removes it (the identity the scan saw), remove (a delete verdict) removes the
 * entry once everything the scan found still holds afresh (no transcript left, nothing unknown,
 * no cwd back, the same marker, nothing newer, no live Qwen process of the project): all but the
 * marker, then the entry renamed to ".<name>.qgc-tmp", then hygiene_reclaim_stale_rest(). 1 done,
 * 0 skipped, -errno failed, with *ret_why. */
int hygiene_reclaim_stale(const Inventory *inv, const Orphan *o, int mark, bool remove, int root_fd,
                          dev_t dev, OrphansStepFn step, void *userdata, const char **ret_why);

/* The end of a removal: projects/<name>/ (pfd; on dev), qgc's temporary name of an entry emptied
 * of all but its marker, removed: the marker, then the directory. One that holds anything else is
 * left as it is (-ENOTEMPTY). 1 removed, 0 gone already, -errno. */
int hygiene_reclaim_stale_rest(int pfd, const char *name, dev_t dev, OrphansStepFn step,
                               void *userdata);

/* Reclaim hygiene item o below root_fd (R, or G for ORPHAN_PLAN; on dev when dev != 0): the
 * identity the scan saw, for debug and plans no transcript for the id in any runtime root now,
 * for a stale tmp/<hash>/ still nothing unknown, no task, no lock of a live process and nothing
 * newer inside; then
 * unlink (files) or rm_rf_at() (the directory). 1 reclaimed, 0 skipped, -errno failed, both
 * with *ret_why a static reason. */
int hygiene_reclaim_orphan(const Orphan *o, int root_fd, dev_t dev, const int *runtime_fds,
                           size_t n_runtime, OrphansStepFn step, void *userdata,
                           const char **ret_why);
