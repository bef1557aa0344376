/* recover.h: the leftovers of an interrupted run, found before the policy's actions and
 * executed first by the executor: half-done deletes, proven by a pending marker
 * that the delete wrote before its first step, and qgc's own stale temporary files. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "fs.h"
#include "plan.h"
#include "recover-marker.h"

/* Add the recovery steps of every tree of p->inv to p: one RECOVER_DELETE per pending marker,
 * one RECOVER_TEMP per temporary file of qgc's (right name, a regular file owned by the tree's
 * user) in G/.qgc/pending/, every projects/<dir>/, chats/, chats/archive/ and tmp/<hash>/. Read-only (directories are
 * listed with O_NOATIME where permitted). Returns the number of steps added or -errno. */
int recover_scan(Plan *p);

/* Execute a RECOVER_DELETE step: when no transcript of the session exists, remove every file the
 * marker lists that still has its recorded identity, then the marker. When a transcript exists
 * (the delete never began, or a new copy appeared), only the marker goes (and *ret_why says so).
 * Returns the number of files removed, or -errno (*ret_why set; -ESTALE: the marker is not the
 * one the plan saw); the marker stays when something could not be removed. */
int recover_finish_delete(int global_fd, dev_t global_dev, int runtime_fd, dev_t runtime_dev,
                          const PlanStep *st, RecoverStepFn step, void *userdata,
                          const char **ret_why);
/* Execute a RECOVER_TEMP step: unlink the file if it still has its scan-time identity. 1 removed,
 * 0 gone or changed (left alone), -errno. The caller holds the tree lock: no other qgc runs. */
int recover_remove_temp(int root_fd, dev_t dev, const PlanStep *st, RecoverStepFn step,
                        void *userdata);
