/* testseam.c: the scan's prefetch counter (testseam.h). */
#include "autoconf.h"

#include "testseam.h"

static unsigned long prefetches;

void test_seam_count_prefetch(void) {
        __atomic_add_fetch(&prefetches, 1, __ATOMIC_RELAXED);
}

unsigned long test_seam_prefetches(void) {
        return __atomic_load_n(&prefetches, __ATOMIC_RELAXED);
}
