/* testlocale.h: test_locale_utf8() sets LC_CTYPE to C.UTF-8 for a test of display widths, or
 * fails the test with the reason. C.UTF-8 ships with the C library (glibc 2.35 and later; on
 * Debian 12, libc-bin's /usr/lib/locale/C.utf8): a host without it is missing a part of libc,
 * and the width tests must not vanish there. Include after <cmocka.h>. */
#pragma once

#include <locale.h>

static inline void test_locale_utf8(void) {
        if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "C.utf8"))
                fail_msg("no C.UTF-8 locale (it ships with the C library: glibc 2.35 and later, "
                         "Debian 12's libc-bin): the display width tests cannot run");
}
