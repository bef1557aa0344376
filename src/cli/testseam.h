/* testseam.h: the scan's prefetch counter (the scan helper removes it). */
#pragma once

/* Count the scan's prefetches (scan-session.c: each transcript it advised the kernel of) for
 * tests/unit/test_scan_prefetch.c; the count is kept whatever the setting. */
void test_seam_count_prefetch(void);
unsigned long test_seam_prefetches(void);
