/* testdata.c: the test data path and the whole-file readers of the test programs (testdata.h). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "testdata.h"

char *test_data_path(const char *rel) {
        char *p = strdup(fixture_testdata(rel));

        assert_non_null(p);
        return p;
}

char *test_read_rel(const char *root, const char *rel) {
        char *buf = NULL;
        int k = fixture_read(root, rel, &buf, NULL);

        if (k < 0 || !buf)
                fail_msg("cannot read %s%s%s: %s", root, rel ? "/" : "", rel ? rel : "",
                         errno_to_string(-k));
        return buf;
}

char *test_read(const char *path) {
        return test_read_rel(path, NULL);
}
