/* testdata.h: what every test program needs from the test data and files, in one place: the
 * path of an entry of tests/data, whole-file readers and a directory opener that fail the test
 * (cmocka) when the file cannot be read or opened. Link tests/common/testdata.c and fixture.c
 * ($(TEST_COMMON)). */
#pragma once

#include "fixture.h"

/* $QGC_TESTDATA/rel (set by make check; else $QGC_SRCDIR/tests/data, else ./tests/data),
 * malloc'ed. */
char *test_data_path(const char *rel);
/* The whole of root/rel, NUL-terminated (rel NULL: root is the file). */
char *test_read_rel(const char *root, const char *rel);
/* The whole file at path, NUL-terminated. */
char *test_read(const char *path);
/* An fd on the directory root/rel (rel NULL: root itself), opened O_RDONLY|O_DIRECTORY|O_CLOEXEC,
 * as the tests hand a directory to the code under test. */
int test_open_dir(const char *root, const char *rel);
/* The golden file tests/data/rel must hold exactly out, else the test fails. Goldens are
 * rewritten only by `make update-golden`: with QGC_UPDATE_GOLDEN=1 (exactly; any other non-empty
 * value fails, and so does any value under CI=true) a golden that differs is replaced by out and
 * the test fails all the same, so the run that rewrote a golden never passes. lib.sh's
 * golden_compare has the same rules for the integration tests. */
void test_golden_compare(const char *rel, const char *out);
