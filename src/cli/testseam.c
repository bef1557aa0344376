/* testseam.c: the values of the test seams (testseam.h). */
#include "autoconf.h"

#include "testseam.h"

static unsigned crash_after_step;
static unsigned batch_sessions;

void test_seam_set_crash_after_step(unsigned n) {
        crash_after_step = n;
}

unsigned test_seam_crash_after_step(void) {
        return crash_after_step;
}

void test_seam_set_batch_sessions(unsigned n) {
        batch_sessions = n;
}

unsigned test_seam_batch_sessions(void) {
        return batch_sessions;
}

static bool batch_untimed;

void test_seam_set_batch_untimed(bool on) {
        batch_untimed = on;
}

bool test_seam_batch_untimed(void) {
        return batch_untimed;
}

static unsigned long prefetches;

void test_seam_count_prefetch(void) {
        __atomic_add_fetch(&prefetches, 1, __ATOMIC_RELAXED);
}

unsigned long test_seam_prefetches(void) {
        return __atomic_load_n(&prefetches, __ATOMIC_RELAXED);
}
