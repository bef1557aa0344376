/* testdata.c: the test data path, the whole-file readers and the directory opener of the test
 * programs (testdata.h). */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
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

int test_open_dir(const char *root, const char *rel) {
        _cleanup_free_ char *p = fixture_path(root, rel);
        int fd;

        assert_non_null(p);
        fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                fail_msg("cannot open the directory %s: %s", p, errno_to_string(errno));
        return fd;
}
