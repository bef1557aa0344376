/* test_utf8.c: the one UTF-8 decoder (utf8.h): Node's reading (maximal subparts) and the strict
 * one at every boundary, against an independent reference over all short sequences. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "utf8.h"

typedef struct NextCase {
        const char *in;
        size_t n;
        size_t k;     /* utf8_next() */
        uint32_t cp;
        size_t strict; /* utf8_decode() */
} NextCase;

static void test_utf8_next_table(void **state) {
        static const NextCase cases[] = {
                { "A", 1, 1, 'A', 1 },
                { "\x7f", 1, 1, 0x7f, 1 },
                { "\0", 1, 1, 0, 1 },
                { "\xc2\x80", 2, 2, 0x80, 2 },         /* first 2-byte */
                { "\xdf\xbf", 2, 2, 0x7ff, 2 },        /* last 2-byte */
                { "\xc0\x80", 2, 1, 0xfffd, 0 },       /* overlong NUL: C0 is never a lead */
                { "\xc1\xbf", 2, 1, 0xfffd, 0 },
                { "\xe0\xa0\x80", 3, 3, 0x800, 3 },    /* first 3-byte */
                { "\xe0\x9f\xbf", 3, 1, 0xfffd, 0 },   /* overlong */
                { "\xed\x9f\xbf", 3, 3, 0xd7ff, 3 },   /* last before the surrogates */
                { "\xed\xa0\x80", 3, 1, 0xfffd, 0 },   /* U+D800 */
                { "\xed\xbf\xbf", 3, 1, 0xfffd, 0 },   /* U+DFFF */
                { "\xee\x80\x80", 3, 3, 0xe000, 3 },
                { "\xef\xbf\xbd", 3, 3, 0xfffd, 3 },   /* a real U+FFFD is well-formed */
                { "\xef\xbf\xbf", 3, 3, 0xffff, 3 },
                { "\xf0\x90\x80\x80", 4, 4, 0x10000, 4 },
                { "\xf0\x8f\xbf\xbf", 4, 1, 0xfffd, 0 }, /* overlong */
                { "\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff, 4 },
                { "\xf4\x90\x80\x80", 4, 1, 0xfffd, 0 }, /* above U+10FFFF */
                { "\xf5\x80\x80\x80", 4, 1, 0xfffd, 0 },
                { "\xff", 1, 1, 0xfffd, 0 },
                { "\x80", 1, 1, 0xfffd, 0 },           /* stray continuation */
                { "\xe6\x97", 2, 2, 0xfffd, 0 },       /* cut: the maximal subpart is both */
                { "\xe6\x97" "A", 3, 2, 0xfffd, 0 },
                { "\xf0\x9f\x98", 3, 3, 0xfffd, 0 },   /* cut 4-byte: three bytes, one U+FFFD */
                { "\xf0\x9f\x98" "A", 4, 3, 0xfffd, 0 },
                { "\xe2\x82\xac", 2, 2, 0xfffd, 0 },   /* n cuts it */
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint32_t cp = 0, cp2 = 0x12345;
                size_t k = utf8_next(cases[i].in, cases[i].n, &cp);
                size_t s = utf8_decode(cases[i].in, cases[i].n, &cp2);

                if (k != cases[i].k || cp != cases[i].cp || s != cases[i].strict)
                        fail_msg("case %zu: next %zu U+%04X, decode %zu; want %zu U+%04X, %zu", i,
                                 k, (unsigned)cp, s, cases[i].k, (unsigned)cases[i].cp,
                                 cases[i].strict);
                assert_true(s == 0 ? cp2 == 0x12345 : cp2 == cp);
        }
        {
                uint32_t cp = 0;
                assert_int_equal(utf8_next("", 0, &cp), 0);
                assert_int_equal(cp, 0xfffd);
                assert_int_equal(utf8_decode("", 0, &cp), 0);
        }
}

/* An independent strict decoder (the text cleaner's before utf8.c), the oracle below. */
static size_t ref_decode(const unsigned char *s, size_t n, uint32_t *ret_cp) {
        uint32_t cp;
        size_t len;

        if (n == 0)
                return 0;
        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2, cp = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                len = 3, cp = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4, cp = s[0] & 0x07;
        else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return len;
}

static void check_same(const unsigned char *b, size_t n) {
        uint32_t a = 0, r = 0, c = 0;
        size_t ka = utf8_decode((const char *)b, n, &a), kr = ref_decode(b, n, &r);
        size_t kn = utf8_next((const char *)b, n, &c);

        if (ka != kr || (ka && a != r))
                fail_msg("%02x %02x %02x %02x (n %zu): %zu U+%04X, reference %zu U+%04X", b[0],
                         n > 1 ? b[1] : 0, n > 2 ? b[2] : 0, n > 3 ? b[3] : 0, n, ka,
                         (unsigned)a, kr, (unsigned)r);
        /* Node's reading agrees wherever the bytes are well-formed, and always moves on */
        if (ka && (kn != ka || c != a))
                fail_msg("utf8_next disagrees on a well-formed character");
        if (kn < 1 || kn > n)
                fail_msg("utf8_next consumed %zu of %zu", kn, n);
}

/* Every 1-, 2- and 3-byte input, and every 4-byte one with a lead F0-F4 and bytes around the
 * continuation range. */
static void test_utf8_decode_matches_reference(void **state) {
        unsigned char b[4];

        (void)state;
        for (unsigned x = 0; x < 256; x++) {
                b[0] = (unsigned char)x;
                check_same(b, 1);
                for (unsigned y = 0; y < 256; y++) {
                        b[1] = (unsigned char)y;
                        check_same(b, 2);
                        for (unsigned z = 0; z < 256; z++) {
                                b[2] = (unsigned char)z;
                                check_same(b, 3);
                        }
                }
        }
        for (unsigned x = 0xf0; x <= 0xf4; x++)
                for (unsigned y = 0x7f; y <= 0xc0; y++)
                        for (unsigned z = 0x7f; z <= 0xc0; z++)
                                for (unsigned w = 0x7f; w <= 0xc0; w++) {
                                        b[0] = (unsigned char)x, b[1] = (unsigned char)y;
                                        b[2] = (unsigned char)z, b[3] = (unsigned char)w;
                                        check_same(b, 4);
                                }
}

static void test_utf8_encode_roundtrip(void **state) {
        (void)state;
        for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
                char u[4];
                uint32_t back = 0;
                size_t k;

                if (cp >= 0xd800 && cp <= 0xdfff)
                        continue;
                k = utf8_encode(cp, u);
                assert_int_equal(k, cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
                assert_int_equal(utf8_decode(u, k, &back), k);
                assert_int_equal(back, cp);
        }
}

static void test_utf8_node_normalize(void **state) {
        size_t len = 0;
        _cleanup_free_ char *a = utf8_node_normalize("a\xff\xef\xbf\xbd\xe6\x97", 7, &len);
        _cleanup_free_ char *b = utf8_node_normalize("", 0, NULL);
        _cleanup_free_ char *c = utf8_node_normalize("\xf0\x9f\x98\x80\xed\xa0\x80", 7, &len);

        (void)state;
        assert_non_null(a);
        /* one U+FFFD for \xff, the real one kept, one for the cut \xe6\x97 */
        assert_memory_equal(a, "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 10);
        assert_string_equal(b, "");
        /* a surrogate's three bytes are three subparts of one byte each (ED then A0, 80) */
        assert_int_equal(len, 4 + 9);
        assert_memory_equal(c, "\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 13);
}

static void test_utf8_utf16_units(void **state) {
        size_t held = 9;

        (void)state;
        assert_int_equal(utf8_utf16_units("abc", 3, &held), 3);
        assert_int_equal(held, 0);
        /* U+1F600 is two units; a cut 4-byte sequence at the end is held back */
        assert_int_equal(utf8_utf16_units("\xf0\x9f\x98\x80x\xf0\x9f", 7, &held), 3);
        assert_int_equal(held, 2);
        /* an ill-formed end is not held: it is U+FFFD now */
        assert_int_equal(utf8_utf16_units("x\xff", 2, &held), 2);
        assert_int_equal(held, 0);
        assert_int_equal(utf8_utf16_units("", 0, &held), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf8_next_table),
                cmocka_unit_test(test_utf8_decode_matches_reference),
                cmocka_unit_test(test_utf8_encode_roundtrip),
                cmocka_unit_test(test_utf8_node_normalize),
                cmocka_unit_test(test_utf8_utf16_units),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
