/* test_sha256.c: SHA-256 in hex (sha256.c) against the FIPS 180-2 vectors, one-shot and streamed
 * in pieces of every size. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "sha256.h"

static const struct {
        const char *in;
        const char *hex;
} vectors[] = {
        { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
        { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
        { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
          "lmnopqrsmnopqrstnopqrstu",
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

static void test_sha256_hex_vectors(void **state) {
        char h[SHA256_HEX_LEN + 1];

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(vectors); i++) {
                memset(h, 'x', sizeof h);
                assert_int_equal(sha256_hex(vectors[i].in, strlen(vectors[i].in), h), 0);
                assert_string_equal(h, vectors[i].hex);
        }
        /* no data: the empty string's hash; data missing for a length: refused */
        assert_int_equal(sha256_hex(NULL, 0, h), 0);
        assert_string_equal(h, vectors[0].hex);
        assert_int_equal(sha256_hex(NULL, 1, h), -EINVAL);
}

/* FIPS 180-2's long vector: one million 'a'. */
static void test_sha256_million_a(void **state) {
        static const char want[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
        char h[SHA256_HEX_LEN + 1];
        char *a = malloc(1000000);
        Sha256 *s;

        (void)state;
        assert_non_null(a);
        memset(a, 'a', 1000000);
        assert_int_equal(sha256_hex(a, 1000000, h), 0);
        assert_string_equal(h, want);
        /* streamed in uneven pieces */
        s = sha256_new();
        assert_non_null(s);
        for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 3 % 4097 + 1)
                assert_int_equal(sha256_update(s, a + off, step < 1000000 - off ? step : 1000000 - off), 0);
        assert_int_equal(sha256_final(s, h), 0);
        assert_string_equal(h, want);
        free(a);
}

/* The stream gives the one-shot result for every split of every vector, empty pieces included. */
static void test_sha256_stream_every_split(void **state) {
        char h[SHA256_HEX_LEN + 1];

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(vectors); i++) {
                size_t n = strlen(vectors[i].in);

                for (size_t cut = 0; cut <= n; cut++) {
                        Sha256 *s = sha256_new();

                        assert_non_null(s);
                        assert_int_equal(sha256_update(s, vectors[i].in, cut), 0);
                        assert_int_equal(sha256_update(s, NULL, 0), 0);
                        assert_int_equal(sha256_update(s, vectors[i].in + cut, n - cut), 0);
                        memset(h, 'x', sizeof h);
                        assert_int_equal(sha256_final(s, h), 0);
                        assert_string_equal(h, vectors[i].hex);
                }
        }
        /* a stream given up before final */
        sha256_free(sha256_new());
        sha256_free(NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sha256_hex_vectors),
                cmocka_unit_test(test_sha256_million_a),
                cmocka_unit_test(test_sha256_stream_every_split),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
