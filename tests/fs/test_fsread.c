/* test_fsread.c: the readers' side of the safe-filesystem layer on real files, in both modes of
 * fs.c (openat2 and the fallback walk): fs_open_noatime() (fsread.c: no symlink, never
 * blocking, no atime update where permitted) and json_read_file()/json_input_read() (jsonfile.c:
 * JSON.parse's dialect, the size limit, regular files only). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fixture.h"
#include "force-walk.h"
#include "fs.h"
#include "json.h"
#include "json-input.h"
#include "macro.h"
#include "testdata.h"
#include "json-input.c" /* its static functions are tested here */

static const bool modes[] = { false, true }; /* force the walk? */

/* fixture_root_teardown(), and back to openat2 for the next test. */
static int teardown(void **state) {
        fs_test_force_walk(false);
        return fixture_root_teardown(state);
}

/* A regular file opens non-blocking and, being ours, with O_NOATIME; a symlink does not open,
 * as the last component or on the way; a FIFO opens without waiting for a writer. */
static void test_fs_open_noatime(void **state) {
        const char *root = *state;
        _cleanup_close_ int dfd = -EBADF;

        assert_int_equal(fixture_write(root, "d/f.json", "{}"), 0);
        assert_int_equal(fixture_symlink(root, "link.json", "d/f.json"), 0);
        assert_int_equal(fixture_symlink(root, "dl", "d"), 0);
        assert_int_equal(fixture_mkfifo(root, "fifo"), 0);
        dfd = test_open_dir(root, NULL);
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                int fd, fl;

                fs_test_force_walk(modes[m]);
                fd = fs_open_noatime(dfd, "d/f.json", O_RDONLY);
                assert_true(fd >= 0);
                fl = fcntl(fd, F_GETFL);
                assert_true(fl & O_NONBLOCK);
                assert_true(fl & O_NOATIME); /* the file is ours */
                assert_false(fl & O_ACCMODE);
                close(fd);
                assert_int_equal(fs_open_noatime(dfd, "link.json", O_RDONLY), -ELOOP);
                assert_true(fs_open_noatime(dfd, "dl/f.json", O_RDONLY) < 0);
                assert_int_equal(fs_open_noatime(dfd, "missing", O_RDONLY), -ENOENT);
                assert_true(fs_open_noatime(dfd, "../x", O_RDONLY) < 0);
                fd = fs_open_noatime(dfd, "fifo", O_RDONLY); /* O_NONBLOCK: no writer needed */
                assert_true(fd >= 0);
                close(fd);
        }
}

typedef struct ReadCase {
        const char *name, *content;
        int r;
} ReadCase;

/* json_read_file(): JSON.parse's dialect on the whole file, nothing of json-c's leniency. */
static void test_json_read_file_dialect(void **state) {
        static const ReadCase cases[] = {
                { "ok.json", "{\"session_id\": \"abc\", \"pid\": 12}\n", 0 },
                { "array.json", " [1, 2] ", 0 },
                { "nan.json", "{\"a\": NaN}", -EBADMSG },
                { "comment.json", "// c\n{}", -EBADMSG },
                { "bom.json", "\xef\xbb\xbf{}", -EBADMSG },
                { "quotes.json", "{'a': 1}", -EBADMSG },
                { "trailing.json", "{} {}", -EBADMSG },
                { "comma.json", "{\"a\": 1,}", -EBADMSG },
                { "null.json", "null", -EBADMSG }, /* no reader wants null */
                { "empty.json", "", -EBADMSG },
                { "control.json", "{\"a\": \"x\x01y\"}", -EBADMSG },
        };
        const char *root = *state;
        _cleanup_close_ int dfd = -EBADF;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_int_equal(fixture_write(root, cases[i].name, cases[i].content), 0);
        dfd = test_open_dir(root, NULL);
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                fs_test_force_walk(modes[m]);
                for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                        json_object *o = NULL;
                        int r = json_read_file(dfd, cases[i].name, 1024, JSON_DIALECT_PARSE, &o);

                        if (r != cases[i].r)
                                fail_msg("%s: %d, want %d", cases[i].name, r, cases[i].r);
                        if (r == 0)
                                assert_non_null(o);
                        json_object_put(o);
                }
        }
}

/* Size limit, file kinds and the input table's rows. */
static void test_json_read_file_limits(void **state) {
        const char *root = *state;
        _cleanup_close_ int dfd = -EBADF;
        json_object *o = NULL;

        assert_int_equal(fixture_write(root, "small.json", "{\"a\":1}"), 0); /* 7 bytes */
        assert_int_equal(fixture_mkdir(root, "dir.json"), 0);
        assert_int_equal(fixture_symlink(root, "link.json", "small.json"), 0);
        assert_int_equal(fixture_write(root, "x.runtime.json", "{\"session_id\":\"X\",\"pid\":1}"), 0);
        dfd = test_open_dir(root, NULL);
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                fs_test_force_walk(modes[m]);
                assert_int_equal(json_read_file(dfd, "small.json", 7, JSON_DIALECT_PARSE, &o), 0);
                json_object_put(o);
                o = NULL;
                assert_int_equal(json_read_file(dfd, "small.json", 6, JSON_DIALECT_PARSE, &o),
                                 -EFBIG);
                assert_int_equal(json_read_file(dfd, "dir.json", 1024, JSON_DIALECT_PARSE, &o),
                                 -EBADFD);
                assert_int_equal(json_read_file(dfd, "link.json", 1024, JSON_DIALECT_PARSE, &o),
                                 -ELOOP);
                assert_int_equal(json_read_file(dfd, "missing.json", 1024, JSON_DIALECT_PARSE, &o),
                                 -ENOENT);
                assert_int_equal(json_read_file(dfd, "small.json", 1024, _JSON_DIALECT_MAX, &o),
                                 -EINVAL);
                assert_null(o);
                assert_int_equal(json_input_read(dfd, "x.runtime.json", JSON_INPUT_CLAIM, &o), 0);
                assert_string_equal(json_get_string(o, "session_id"), "X");
                json_object_put(o);
                o = NULL;
        }
}

/* Every row of the input table (json.h) at its maximum and one byte past it: a valid document of
 * exactly max bytes (an object with one long string, so the parse is as long as the file) is
 * read, the same with one more space is -EFBIG. */
static void test_json_inputs_at_max_and_one_past(void **state) {
        const char *root = *state;
        _cleanup_close_ int dfd = -EBADF;

        dfd = test_open_dir(root, NULL);
        for (JsonInput in = 0; in < _JSON_INPUT_MAX; in++) {
                const JsonInputInfo *i = json_input_info(in);
                _cleanup_free_ char *text = malloc(i->max + 2);
                json_object *o = NULL, *v = NULL;

                assert_non_null(text);
                assert_true(i->max > 16);
                memcpy(text, "{\"pad\":\"", 8);
                memset(text + 8, 'p', i->max - 10);
                memcpy(text + i->max - 2, "\"}", 3);
                assert_int_equal(strlen(text), i->max);
                assert_int_equal(fixture_write(root, "in.json", text), 0);
                if (json_input_read(dfd, "in.json", in, &o) != 0)
                        fail_msg("%s: not read at its maximum (%zu bytes)", i->file, i->max);
                assert_true(json_object_object_get_ex(o, "pad", &v));
                assert_int_equal(json_object_get_string_len(v), i->max - 10);
                json_object_put(o);
                o = NULL;
                strcat(text, " ");
                assert_int_equal(fixture_write(root, "in.json", text), 0);
                if (json_input_read(dfd, "in.json", in, &o) != -EFBIG)
                        fail_msg("%s: read one byte past its maximum", i->file);
                assert_null(o);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_fs_open_noatime, fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_json_read_file_dialect, fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_json_read_file_limits, fixture_root_setup, teardown),
                cmocka_unit_test_setup_teardown(test_json_inputs_at_max_and_one_past,
                                                fixture_root_setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
