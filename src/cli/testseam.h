/* testseam.h: the library's test seams. Each is a setting only a test program sets (the cmocka
 * programs link libqgc.a and call the setter); none is read from the environment or a file, so
 * nothing outside a test can turn one on in the installed qgc. */
#pragma once

#include <stdbool.h>

/* Crash after a mutating step: with n > 0, the executor (actions.c) calls _exit(99) right after
 * its nth mutating step (usage append, rename, unlink, mkdir, directory removal). 0: off, the
 * default. tests/faults/test_faults.c sets it in a forked child, crashes after every step and
 * checks that a rerun completes the work. */
void test_seam_set_crash_after_step(unsigned n);
unsigned test_seam_crash_after_step(void);

/* Cap the executor's group commit (actions-batch.c) at n sessions per batch, 1 up to
 * ACTIONS_BATCH_MAX; 0 (the default) or any other value: no cap but the executor's own.
 * tests/faults crashes after every step with batches of 1, 2, 3 and the default. */
void test_seam_set_batch_sessions(unsigned n);
unsigned test_seam_batch_sessions(void);

/* With on, the executor's group commit (actions.c) closes a batch on its size alone (and where
 * the tree changes or an orphan comes): no time window (ACTIONS_BATCH_MSEC...), no early commit
 * while the salvage thread catches up, and a batch with deletes holds ACTIONS_BATCH_MAX however
 * long the last one's shared-file edits took, so that a loaded machine cannot change a batch a
 * test counts the fsyncs or writes of. false: off, the default. */
void test_seam_set_batch_untimed(bool on);
bool test_seam_batch_untimed(void);

/* Count the scan's prefetches (scan-session.c: each transcript it advised the kernel of) for
 * tests/unit/test_scan_prefetch.c; the count is kept whatever the setting. */
void test_seam_count_prefetch(void);
unsigned long test_seam_prefetches(void);

/* Called with the directory fd after each listing a delete's step takes of a directory it looks
 * into (actions-erase.c): a test creates a file there after the listing. NULL turns it off. */
void actions_test_set_list_hook(void (*hook)(void *userdata, int dir_fd), void *userdata);
