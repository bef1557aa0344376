/* testskip.h: test_skip(FORMAT, ...) ends the running cmocka test case as SKIP, its reason in
 * the log as a TAP comment "# SKIP: <reason>" just before the case's result line, where .ci/run's
 * SKIP list (tests/skip-list.sh) reads it; a skip() without one is listed as "no reason given"
 * and fails .ci/run. Like skip(), it jumps past the _cleanup_ handlers: call it before any
 * _cleanup_ allocation, or free them first. Include after <cmocka.h>. */
#pragma once

#define test_skip(...)                                   \
        do {                                             \
                print_message("# SKIP: " __VA_ARGS__);   \
                print_message("\n");                     \
                skip();                                  \
        } while (0)
