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
#include <stdio.h>
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
                         log_errno_to_string(-k));
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
                fail_msg("cannot open the directory %s: %s", p, log_errno_to_string(errno));
        return fd;
}

void test_golden_compare(const char *rel, const char *out) {
        _cleanup_free_ char *path = test_data_path(rel), *want = NULL;
        const char *update = getenv("QGC_UPDATE_GOLDEN"), *ci = getenv("CI");
        FILE *g;

        if (update && *update) {
                if (!streq(update, "1"))
                        fail_msg("QGC_UPDATE_GOLDEN='%s': only 1 rewrites goldens (make update-golden)",
                                 update);
                if (ci && streq(ci, "true"))
                        fail_msg("QGC_UPDATE_GOLDEN=1 under CI=true: goldens are not rewritten in CI");
        }
        if (fixture_read(path, NULL, &want, NULL) >= 0 && want && streq(want, out))
                return;
        if (update && *update) {
                g = fopen(path, "we");
                if (!g)
                        fail_msg("cannot write the golden %s: %s", path, log_errno_to_string(errno));
                fputs(out, g);
                if (fclose(g) != 0)
                        fail_msg("cannot write the golden %s: %s", path, log_errno_to_string(errno));
                fail_msg("golden %s rewritten: review the diff (git diff), then make check", path);
        }
        if (!want)
                fail_msg("cannot read the golden %s", path);
        assert_string_equal(out, want);
}
