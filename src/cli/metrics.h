/* metrics.h: --metrics-file: the last run's numbers for node_exporter's textfile collector, in
 * the Prometheus text exposition format (0.0.4), written atomically at the end of the run.
 * In root mode each user's child records its own numbers (label user=) into a buffer shared
 * across fork (a memfd opened before any child exists); the parent writes the file. */
#pragma once

#include <stdbool.h>

#include "actions.h"
#include "config.h"
#include "plan.h"

/* Remember path and open the shared buffer; call while parsing options, before any fork. source
 * names what set the path in every message ("--metrics-file", or "admin.metrics-file (FILE:LINE)").
 * 0 or -errno (logged). */
int metrics_init(const char *path, const char *source);

/* In the process that executed the plan (a user's child in --all-users): append this run's
 * numbers for its user: plan verdicts per verb and rule, held-back sessions, action outcomes and
 * bytes (archived, freed, compressed: before and after), each tree's size and filesystem, the
 * tree caps of cfg. No-op when not enabled. */
void metrics_record(const Plan *p, const ActionStats *st, const Config *cfg);

/* In the --all-users parent, after the last user: how many users' runs ended how (the
 * qgc_last_run_users family). No-op when not enabled. */
void metrics_record_users(unsigned ok, unsigned failed, unsigned skipped,
                          unsigned invalid_policy);

/* Write the file: what was recorded, plus the run's timestamp, duration and exit code. Temp file
 * in the same directory, fsync, mode 0644 (node_exporter reads it), rename, fsync the directory.
 * No-op when not enabled. 0 or -errno (logged; the run's exit code is not changed). */
int metrics_finish(int exit_code);

