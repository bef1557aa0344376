/* test_dc_gitobj.c: the read-only object reader of Deep Code's checkpoint repositories
 * (src/deepcode/dc-gitobj.c) against what git itself says (`git rev-list --objects` from the
 * roots, `git cat-file --batch-all-objects`, computed here): loose objects, packs with
 * OFS_DELTA and REF_DELTA, packed-refs, a session's branch gone from the index, an unreachable
 * commit, a checkpoint on no branch, a keep-ref and a tag; a corrupted pack and index; the delta
 * chain limit at its maximum and one past; the corpus, through qgc status's measure, adding up to
 * its loose objects, with every atime unchanged. SKIP without /usr/bin/git. */
#include "autoconf.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dc-git.h"
#include "dc-gitobj.h"
#include "dc-store.h"
#include "deepcode-store.h"
#include "fixture.h"
#include "inventory.h"
#include "macro.h"
#include "store.h"
#include "testdata.h"
#include "testskip.h"

#define KEPT "aaaaaaaa-0000-4000-8000-000000000001"
#define GONE "bbbbbbbb-0000-4000-8000-000000000002"
#define GIT                                                                                        \
        "GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t "          \
        "GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' "     \
        "GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' " DC_GIT_PROGRAM " -C r"

static bool have_git(void) {
        return access(DC_GIT_PROGRAM, X_OK) == 0;
}

/* The output of the shell command fmt run in root (it must exit 0). */
_printf_(2, 3) static char *sh(const char *root, const char *fmt, ...) {
        _cleanup_free_ char *cmd = NULL, *inner = NULL;
        char *out = NULL;
        size_t n = 0;
        FILE *f;
        va_list ap;

        va_start(ap, fmt);
        assert_true(vasprintf(&inner, fmt, ap) >= 0);
        va_end(ap);
        cmd = util_strprintf("cd '%s' && { %s; } 2>/dev/null", root, inner);
        assert_non_null(cmd);
        f = popen(cmd, "r");
        assert_non_null(f);
        if (getdelim(&out, &n, '\0', f) < 0) {
                assert_true(feof(f));
                free(out);
                out = strdup("");
        }
        if (pclose(f) != 0)
                fail_msg("failed: %s", cmd);
        return out;
}

typedef struct Expect {
        uint64_t objects[_DC_GITOBJ_CLASS_MAX], alloc[_DC_GITOBJ_CLASS_MAX];
} Expect;

static bool is_session_id_kept(const char *id, const char *const *kept, size_t n_kept) {
        for (size_t i = 0; i < n_kept; i++)
                if (streq(kept[i], id))
                        return true;
        return false;
}

/* *s with a and b appended. */
static void append(char **s, const char *a, const char *b) {
        char *n = util_strjoin(*s, a, b, NULL);

        assert_non_null(n);
        free(*s);
        *s = n;
}

/* What git says of repository dir (its work tree, or the directory holding .git): the roots as
 * dc-gitobj.h defines them, rev-list --objects from each class's roots, every object with its
 * objectsize:disk (a packed entry's bytes; a loose object counts its file's blocks). */
static void expect_git(const char *dir, const char *const *kept, size_t n_kept,
                       const char *const *named, size_t n_named, Expect *e) {
        _cleanup_free_ char *refs =
                sh(dir, DC_GIT_PROGRAM " for-each-ref --format='%%(objectname) %%(refname)'");
        _cleanup_free_ char *head = sh(dir, DC_GIT_PROGRAM " rev-parse -q --verify HEAD || true");
        _cleanup_free_ char *live_roots = strdup(head), *orphan_roots = strdup("");
        _cleanup_free_ char *live = NULL, *orphan = NULL, *all = NULL, *packs = NULL;
        uint64_t packed = 0, pack_alloc = 0;

        *e = (Expect){};
        for (char *l = refs; *l;) {
                char *nl = strchr(l, '\n'), *name = l + 41, **to;

                *nl = 0;
                to = strneq(name, "refs/heads/", 11) && dc_git_is_session_id(name + 11) &&
                                     !is_session_id_kept(name + 11, kept, n_kept)
                             ? &orphan_roots
                             : &live_roots;
                l[40] = 0;
                append(to, l, "\n");
                l = nl + 1;
        }
        for (size_t i = 0; i < n_named; i++) {
                _cleanup_free_ char *ok =
                        sh(dir, DC_GIT_PROGRAM " cat-file -e %s && echo yes || true", named[i]);

                if (streq(ok, "yes\n"))
                        append(&live_roots, named[i], "\n");
        }
        live = sh(dir,
                  "printf '%%s' '%s' | " DC_GIT_PROGRAM " rev-list --objects --stdin | cut -c1-40",
                  live_roots);
        orphan = sh(dir,
                    "printf '%%s' '%s' | sed 's/^/^/' > ../not.txt; printf '%%s' '%s' | cat - "
                    "../not.txt | " DC_GIT_PROGRAM " rev-list --objects --stdin | cut -c1-40",
                    live_roots, orphan_roots);
        all = sh(
                dir, DC_GIT_PROGRAM
                " cat-file --batch-all-objects --batch-check='%%(objectname) %%(objectsize:disk)'");
        for (char *l = all; *l;) {
                char *nl = strchr(l, '\n');
                _cleanup_free_ char *loose = NULL;
                DcGitobjClass c;
                struct stat st;
                uint64_t bytes;

                *nl = 0;
                l[40] = 0;
                bytes = strtoull(l + 41, NULL, 10);
                loose = util_strprintf("%s/.git/objects/%.2s/%s", dir, l, l + 2);
                if (stat(loose, &st) == 0)
                        bytes = (uint64_t)st.st_blocks * 512;
                else
                        packed += bytes;
                c = strstr(live, l)     ? DC_GITOBJ_LIVE
                    : strstr(orphan, l) ? DC_GITOBJ_ORPHAN
                                        : DC_GITOBJ_UNREACHABLE;
                e->objects[c]++;
                e->alloc[c] += bytes;
                l = nl + 1;
        }
        packs = sh(
                dir,
                "find .git/objects/pack -name '*.pack' -o -name '*.idx' | xargs -r stat -c %%b | "
                "awk '{ s += $1 } END { print s + 0 }'");
        pack_alloc = strtoull(packs, NULL, 10) * 512;
        e->alloc[DC_GITOBJ_LIVE] += pack_alloc - packed;
}

static void count(const char *root, const char *dir, const char *const *kept, size_t n_kept,
                  const char *const *named, size_t n_named, DcGitobjCounts *c) {
        _cleanup_free_ char *git = util_strprintf("%s/%s/.git", root, dir);
        _cleanup_close_ int fd = open(git, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DcGitInput in = { .kept_ids = kept, .n_kept = n_kept, .named = named, .n_named = n_named };

        assert_true(fd >= 0);
        assert_int_equal(dc_gitobj_count(fd, &in, c), 0);
}

static void check(const char *root, const char *const *kept, size_t n_kept,
                  const char *const *named, size_t n_named) {
        _cleanup_free_ char *dir = fixture_path(root, "r");
        DcGitobjCounts c;
        Expect e;

        expect_git(dir, kept, n_kept, named, n_named, &e);
        count(root, "r", kept, n_kept, named, n_named, &c);
        if (!c.known)
                fail_msg("unknown: %s", c.why);
        for (int k = 0; k < _DC_GITOBJ_CLASS_MAX; k++) {
                print_message("# class %d: %" PRIu64 " objects %" PRIu64 " bytes (git: %" PRIu64
                              " %" PRIu64 ")\n",
                              k, c.objects[k], c.alloc[k], e.objects[k], e.alloc[k]);
                assert_int_equal(c.objects[k], e.objects[k]);
                assert_int_equal(c.alloc[k], e.alloc[k]);
        }
}

/* Repository r: session KEPT's branch (3 commits; /undo moved it back one, the dropped commit
 * named by its transcript), session GONE's branch forked from it (2 commits of its own), a
 * commit of nothing, a keep-ref and an annotated tag; HEAD on the unborn master, as Deep Code's.
 * Similar large files, so that a repack makes deltas. */
static char named_hash[41];

static void plant(const char *root) {
        _cleanup_free_ char *h = NULL;

        free(sh(root,
                "mkdir r && " GIT " init -q && " GIT " checkout -q -b " KEPT " && "
                "seq 1 3000 > r/f && " GIT " add f && " GIT " commit -q -m a && "
                "seq 2 3001 > r/f && mkdir r/d && echo x > r/d/g && " GIT " add -A && " GIT
                " commit -q -m b && "
                "seq 3 3002 > r/f && " GIT " commit -q -am c && " GIT
                " rev-parse HEAD > named.txt && " GIT " update-ref refs/heads/" KEPT
                " HEAD~1 && " GIT " checkout -q -b " GONE " && seq 4 3003 > r/f && " GIT
                " commit -q -am d && "
                "seq 5 3004 > r/f && " GIT " commit -q -am e && " GIT
                " checkout -q --orphan tmp && seq 6 3005 > r/f && " GIT
                " commit -q -am lost && " GIT " update-ref refs/qgc/keep/$(" GIT
                " rev-parse HEAD~0) HEAD && "
                "seq 9 3008 > r/f && " GIT " commit -q -am tagged && " GIT " tag -a -m t v1 && "
                "seq 7 3006 > r/f && " GIT " commit -q -am unreachable && " GIT
                " symbolic-ref HEAD refs/heads/master && " GIT " update-ref -d refs/heads/tmp"));
        h = sh(root, "cat named.txt");
        memcpy(named_hash, h, 40);
        named_hash[40] = 0;
}

static void test_dc_gitobj_git(void **state) {
        const char *root = *state;
        const char *kept[] = { KEPT, "cccccccc-0000-4000-8000-000000000003" },
                   *named[] = { named_hash };
        _cleanup_free_ char *deltas = NULL;
        DcGitobjCounts c;

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        plant(root);
        check(root, kept, 2, named, 1); /* loose */
        count(root, "r", kept, 2, named, 1, &c);
        assert_true(c.objects[DC_GITOBJ_ORPHAN] >= 4); /* d, e, their trees and blobs */
        assert_true(c.objects[DC_GITOBJ_UNREACHABLE] >= 3);
        check(root, kept, 1, NULL, 0); /* the named commit is unreachable now */
        free(sh(root, GIT " repack -q -adk -f --window=50 --depth=50 && " GIT " pack-refs --all"));
        deltas = sh(root, DC_GIT_PROGRAM
                    " verify-pack -v r/.git/objects/pack/*.idx | grep -c 'chain length' || true");
        assert_true(atoi(deltas) > 0); /* OFS_DELTA entries */
        check(root, kept, 2, named, 1);
        free(sh(root, GIT
                " -c repack.useDeltaBaseOffset=false repack -q -adk -f --window=50 --depth=50"));
        check(root, kept, 2, named, 1); /* REF_DELTA entries */
        /* loose and packed at once: a new loose commit on the gone branch */
        free(sh(root, GIT " checkout -q -f " GONE " && seq 8 3007 > r/f && " GIT
                          " commit -q -am f && " GIT " symbolic-ref HEAD refs/heads/master"));
        check(root, kept, 2, named, 1);
}

/* A corrupted index or pack: unknown, never a crash. */
static void test_dc_gitobj_corrupt(void **state) {
        const char *root = *state;
        const char *kept[] = { KEPT }, *named[] = { named_hash };
        static const char *const damage[] = {
                "truncate -s 2000 r/.git/objects/pack/*.idx", /* truncated */
                "printf '\\377\\377\\377\\377' | dd of=$(ls r/.git/objects/pack/*.idx) bs=1 "
                "seek=12 conv=notrunc", /* fan-out */
                "printf '\\377\\377\\377\\377' | dd of=$(ls r/.git/objects/pack/*.idx) bs=1 "
                "seek=$((1032 + 24 * $(" GIT
                " count-objects -v | sed -n 's/^in-pack: //p'))) conv=notrunc", /* an offset */
                "truncate -s 100 r/.git/objects/pack/*.pack",                   /* truncated */
                "f=$(ls r/.git/objects/pack/*.pack) && head -c 12 $f > p && head -c $(($(stat -c "
                "%s $f) - 12)) /dev/urandom >> p && cat p > $f",
                "printf 'PACK\\0\\0\\0\\011' | dd of=$(ls r/.git/objects/pack/*.pack) bs=1 "
                "conv=notrunc", /* version 9 */
        };

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        plant(root);
        free(sh(root, GIT " repack -q -adk -f --window=50 --depth=50 && cp -a r r.good"));
        for (size_t i = 0; i < ELEMENTSOF(damage); i++) {
                DcGitobjCounts c;

                free(sh(root, "rm -rf r && cp -a r.good r && chmod -R u+w r/.git/objects && %s",
                        damage[i]));
                count(root, "r", kept, 1, named, 1, &c);
                print_message("# damage %zu: %s\n", i, c.known ? "known" : c.why);
                assert_false(c.known);
                assert_non_null(c.why);
        }
        /* a loose object that is not zlib */
        free(sh(root, "rm -rf r && cp -a r.good r && " GIT " commit-tree -m x $(" GIT
                      " write-tree) > c.txt && " GIT " update-ref refs/heads/" KEPT
                      " $(cat c.txt) && f=r/.git/objects/$(cut -c1-2 c.txt)/$(cut -c3-40 c.txt) && "
                      "chmod u+w $f && echo garbage > $f"));
        {
                DcGitobjCounts c;

                count(root, "r", kept, 1, named, 1, &c);
                assert_false(c.known);
        }
}

/* ---------------------------------------------------------------- the delta chain limit */

static void sha1(const void *p, size_t n, unsigned char out[20]) {
        assert_int_equal(EVP_Digest(p, n, out, NULL, EVP_sha1(), NULL), 1);
}

static size_t put_varint(unsigned char *p, uint64_t v) {
        size_t n = 0;

        do {
                p[n] = (unsigned char)(v & 0x7f);
                v >>= 7;
                if (v)
                        p[n] |= 0x80;
                n++;
        } while (v);
        return n;
}

typedef struct Buf {
        unsigned char *p;
        size_t n;
} Buf;

static void buf_add(Buf *b, const void *p, size_t n) {
        if (n == 0)
                return; /* p may be NULL */
        b->p = realloc(b->p, b->n + n);
        assert_non_null(b->p);
        memcpy(b->p + b->n, p, n);
        b->n += n;
}

static void pack_entry(Buf *pack, int type, uint64_t size, const unsigned char *extra,
                       size_t n_extra, const void *data, size_t n) {
        unsigned char h[16], z[8192];
        uLongf zn = sizeof(z);
        size_t k = 0;

        h[k] = (unsigned char)(type << 4 | (size & 15));
        size >>= 4;
        while (size) {
                h[k++] |= 0x80;
                h[k] = size & 0x7f;
                size >>= 7;
        }
        buf_add(pack, h, k + 1);
        buf_add(pack, extra, n_extra);
        assert_int_equal(compress(z, &zn, data, n), Z_OK);
        buf_add(pack, z, zn);
}

/* A pack of one commit and a chain of `deltas` OFS_DELTAs on it (each adds a byte to the
 * message), indexed by git index-pack; refs/heads/KEPT names the last. */
static void chain(const char *root, unsigned deltas) {
        char commit[4096], ref[42];
        unsigned char obj[4200], oid[20], hdr[12] = "PACK\0\0\0\2", trailer[20];
        uint64_t prev_off = 0;
        Buf pack = {};
        size_t n;

        free(sh(root, "rm -rf r && mkdir r && " GIT " init -q"));
        hdr[8] = 0, hdr[9] = 0, hdr[10] = (unsigned char)((deltas + 1) >> 8),
        hdr[11] = (unsigned char)(deltas + 1);
        buf_add(&pack, hdr, 12);
        n = (size_t)snprintf(
                commit, sizeof(commit),
                "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor t <t@t> 0 +0000\n"
                "committer t <t@t> 0 +0000\n\nm");
        for (unsigned i = 0; i <= deltas; i++) {
                uint64_t off = pack.n;

                if (i == 0)
                        pack_entry(&pack, 1, n, NULL, 0, commit, n);
                else {
                        unsigned char d[32], ofs[16];
                        size_t dn = put_varint(d, n), k = 0;
                        uint64_t v = off - prev_off;

                        dn += put_varint(d + dn, n + 1);
                        d[dn++] = 0x80 | 0x01 | 0x02 | 0x10 | 0x20; /* copy: offset 0, size n */
                        d[dn++] = 0, d[dn++] = 0, d[dn++] = (unsigned char)(n & 0xff),
                        d[dn++] = (unsigned char)(n >> 8);
                        d[dn++] = 1, d[dn++] = 'x'; /* insert "x" */
                        /* the base's offset, as git encodes it */
                        unsigned char tmp[16];
                        size_t t = 0;
                        tmp[t++] = v & 0x7f;
                        while (v >>= 7)
                                tmp[t++] = 0x80 | (--v & 0x7f);
                        while (t > 0)
                                ofs[k++] = tmp[--t];
                        pack_entry(&pack, 6, dn, ofs, k, d, dn);
                        commit[n++] = 'x';
                }
                prev_off = off;
        }
        sha1(pack.p, pack.n, trailer);
        buf_add(&pack, trailer, 20);
        assert_int_equal(fixture_write_bytes(root, "chain.pack", pack.p, pack.n), 0);
        free(pack.p);
        free(sh(root, "cd r && " DC_GIT_PROGRAM
                      " index-pack -o .git/objects/pack/pack-chain.idx ../chain.pack >/dev/null && "
                      "mv ../chain.pack .git/objects/pack/pack-chain.pack"));
        {
                size_t h = (size_t)snprintf((char *)obj, sizeof(obj), "commit %zu", n) + 1;

                memcpy(obj + h, commit, n);
                sha1(obj, h + n, oid);
        }
        for (size_t i = 0; i < 20; i++)
                sprintf(ref + 2 * i, "%02x", oid[i]);
        ref[40] = '\n', ref[41] = 0;
        assert_int_equal(fixture_write(root, "r/.git/refs/heads/" KEPT, ref), 0);
        free(sh(root, GIT " cat-file -e " KEPT)); /* git finds it: the ref is right */
}

static void test_dc_gitobj_depth(void **state) {
        const char *root = *state;
        const char *kept[] = { KEPT };
        DcGitobjCounts c;

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        chain(root, DC_GITOBJ_MAX_DEPTH); /* the maximum */
        count(root, "r", kept, 1, NULL, 0, &c);
        assert_true(c.known); /* the last commit read through the whole chain; the others
                               * are commits of their own that nothing reaches */
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 1);
        assert_int_equal(c.objects[DC_GITOBJ_UNREACHABLE], DC_GITOBJ_MAX_DEPTH);
        check(root, kept, 1, NULL, 0);
        chain(root, DC_GITOBJ_MAX_DEPTH + 1); /* one past */
        count(root, "r", kept, 1, NULL, 0, &c);
        assert_false(c.known);
        assert_string_equal(c.why, "a delta chain longer than 50");
}

/* ---------------------------------------------------------------- the corpus */

/* The atimes of the files (find's own listing changes the directories'). */
static char *atimes(const char *root) {
        return sh(root, "find home -type f -printf '%%A@ %%p\\n' | sort");
}

/* The corpus the real Deep Code wrote, measured as qgc status measures it: each project's three
 * figures as git classifies its objects, adding up to its loose objects; no atime changed. */
static void test_dc_gitobj_corpus(void **state) {
        const char *root = *state;
        _cleanup_free_ char *tarball = test_data_path("deepcode/home.tar.gz");
        _cleanup_free_ char *store = fixture_path(root, "home/.deepcode");
        _cleanup_free_ char *before = NULL, *after = NULL;
        Tree t = { .global_dir = strdup(store),
                   .runtime_dir = strdup(store),
                   .store = &deepcode_store };
        uint64_t sum = 0, loose = 0;
        Inventory *inv = NULL;
        StoreSize size = {};
        DcStore *s = NULL;
        size_t ti;

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        free(sh(root,
                "tar xzf '%s' -C . && find home -exec touch -h -d 2026-06-01 {} + && "
                "find home -exec touch -a -h -d 2001-01-01 {} +",
                tarball));
        before = atimes(root);
        assert_int_equal(inventory_new(&inv), 0);
        assert_int_equal(inventory_add_tree(inv, &t, &ti), 0);
        assert_int_equal(deepcode_store.measure(inv, ti, &size), 0);
        after = atimes(root);
        assert_string_equal(before, after);
        free(after);
        free(sh(root, "cat home/.deepcode/projects/*/file-history/.git/HEAD >/dev/null"));
        after = atimes(root);
        assert_string_not_equal(before, after); /* a read without O_NOATIME is seen */
        assert_int_equal(dc_store_scan(store, util_now_msec(), &s), 0);
        assert_int_equal(size.n_parts, 5);
        for (size_t i = 0; i < size.n_parts; i++) {
                const StoreSizePart *part = &size.parts[i];
                const DcProject *p = NULL;
                _cleanup_free_ const char **kept = NULL, **named = NULL;
                _cleanup_free_ char *dir = NULL;
                size_t n_kept, n_named;
                uint64_t total = 0;
                Expect e;

                for (size_t j = 0; j < s->n_projects; j++)
                        if (streq(s->projects[j].code, part->name))
                                p = &s->projects[j];
                if (!p)
                        return fail();
                assert_true(part->known);
                assert_int_equal(dc_store_git_input(p, &kept, &n_kept, &named, &n_named), 0);
                dir = util_strprintf("%s/projects/%s/file-history", store, p->code);
                expect_git(dir, kept, n_kept, named, n_named, &e);
                for (int k = 0; k < STORE_SIZE_WAYS; k++) {
                        assert_int_equal(part->objects[k], e.objects[k]);
                        assert_int_equal(part->alloc[k], e.alloc[k]);
                        total += part->alloc[k];
                }
                print_message("# %s: live %" PRIu64 " (%" PRIu64 " B), orphan-ref-only %" PRIu64
                              " (%" PRIu64 " B), unreachable %" PRIu64 " (%" PRIu64
                              " B); loose %" PRIu64 " B\n",
                              p->code, part->objects[0], part->alloc[0], part->objects[1],
                              part->alloc[1], part->objects[2], part->alloc[2], p->git_loose_alloc);
                assert_int_equal(total, p->git_loose_alloc);
                assert_int_equal(part->objects[0] + part->objects[1] + part->objects[2],
                                 p->git_loose);
                sum += total;
                loose += p->git_loose_alloc;
        }
        assert_int_equal(sum, loose);
        dc_store_free(s);
        store_size_done(&size);
        inventory_free(inv);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_dc_gitobj_git, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_gitobj_corrupt, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_gitobj_depth, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_gitobj_corpus, fixture_root_setup,
                                                fixture_root_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
