/* test_dc_gitobj.c: the read-only object reader of Deep Code's checkpoint repositories
 * (src/deepcode/dc-gitobj.c) against what git itself says (`git rev-list --objects` from the
 * roots, `git cat-file --batch-all-objects`, computed here): loose objects, packs with
 * OFS_DELTA and REF_DELTA, packed-refs, a session's branch gone from the index, an unreachable
 * commit, a checkpoint on no branch, a keep-ref and a tag; a corrupted pack and index; the corpus,
 * through qgc status's measure, adding up to its loose objects, with every atime unchanged. Each
 * limit of dc-gitobj.c's header at its maximum and one past it, at real size, in repositories
 * written here (zlib, hand-written packs and indexes): the delta chain, the inflated object, the
 * inflated repository, objects, the index's size, packs, refs, packed-refs, a loose ref and HEAD,
 * a ref's path and depth; a root blob's 64-bit size, a blob named as a directory. SKIP without
 * /usr/bin/git. */
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
        size_t n, alloc;
} Buf;

static void buf_add(Buf *b, const void *p, size_t n) {
        if (n == 0)
                return; /* p may be NULL */
        if (b->n + n > b->alloc) { /* doubling: a million adds stay linear (ASan copies) */
                b->alloc = MAX(b->alloc * 2, b->n + n);
                b->p = realloc(b->p, b->alloc);
                assert_non_null(b->p);
        }
        memcpy(b->p + b->n, p, n);
        b->n += n;
}

static void pack_hdr(Buf *b, int type, uint64_t size) {
        unsigned char h[16];
        size_t k = 0;

        h[k] = (unsigned char)(type << 4 | (size & 15));
        size >>= 4;
        while (size) {
                h[k++] |= 0x80;
                h[k] = size & 0x7f;
                size >>= 7;
        }
        buf_add(b, h, k + 1);
}

/* The base distance of an OFS_DELTA, as git encodes it. */
static size_t ofs_encode(uint64_t v, unsigned char out[16]) {
        unsigned char tmp[16];
        size_t t = 0, k = 0;

        tmp[t++] = v & 0x7f;
        while (v >>= 7)
                tmp[t++] = 0x80 | (--v & 0x7f);
        while (t > 0)
                out[k++] = tmp[--t];
        return k;
}

static void pack_entry(Buf *pack, int type, uint64_t size, const unsigned char *extra,
                       size_t n_extra, const void *data, size_t n) {
        unsigned char z[8192];
        uLongf zn = sizeof(z);

        pack_hdr(pack, type, size);
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
                        size_t dn = put_varint(d, n);

                        dn += put_varint(d + dn, n + 1);
                        d[dn++] = 0x80 | 0x01 | 0x02 | 0x10 | 0x20; /* copy: offset 0, size n */
                        d[dn++] = 0, d[dn++] = 0, d[dn++] = (unsigned char)(n & 0xff),
                        d[dn++] = (unsigned char)(n >> 8);
                        d[dn++] = 1, d[dn++] = 'x'; /* insert "x" */
                        pack_entry(&pack, 6, dn, ofs, ofs_encode(off - prev_off, ofs), d, dn);
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

/* ---------------------------------------------------------------- the limits, each at its
 * maximum and one past it */

#define EMPTY_TREE "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#define SIG "author t <t@t> 0 +0000\ncommitter t <t@t> 0 +0000\n\n"
#define PACKS "r/.git/objects/pack/"

static void tohex(const unsigned char oid[20], char out[41]) {
        for (size_t i = 0; i < 20; i++)
                sprintf(out + 2 * i, "%02x", oid[i]);
}

static DcGitobjCounts expect_known(const char *root) {
        const char *kept[] = { KEPT };
        DcGitobjCounts c;

        count(root, "r", kept, 1, NULL, 0, &c);
        if (!c.known)
                fail_msg("unknown: %s", c.why);
        return c;
}

static void expect_unknown(const char *root, const char *why) {
        const char *kept[] = { KEPT };
        DcGitobjCounts c;

        count(root, "r", kept, 1, NULL, 0, &c);
        print_message("# %s\n", c.known ? "known" : c.why);
        assert_false(c.known);
        assert_string_equal(c.why, why);
}

/* n bytes at p into z, then the stream's end when flush is Z_FINISH. */
static void zfeed(z_stream *z, Buf *out, const void *p, size_t n, int flush) {
        unsigned char o[65536];
        int k;

        z->next_in = (Bytef *)(uintptr_t)p;
        z->avail_in = (uInt)n;
        do {
                z->next_out = o;
                z->avail_out = sizeof(o);
                k = deflate(z, flush);
                assert_true(k == Z_OK || k == Z_STREAM_END || k == Z_BUF_ERROR);
                buf_add(out, o, sizeof(o) - z->avail_out);
        } while (z->avail_in > 0 || (flush == Z_FINISH && k != Z_STREAM_END));
}

/* Loose object "type size\0" head, then `fill` bytes 'x' (streamed: 64 MiB cost no buffer of
 * it); its name in oid. */
static void loose(const char *root, const char *type, const void *head, size_t n_head,
                  uint64_t fill, unsigned char oid[20]) {
        static unsigned char xs[65536];
        _cleanup_free_ char *path = NULL, *dir = NULL;
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        char h[64], name[41];
        size_t hn = (size_t)snprintf(h, sizeof(h), "%s %" PRIu64, type, n_head + fill) + 1;
        z_stream z = {};
        Buf out = {};

        memset(xs, 'x', sizeof(xs));
        assert_non_null(md);
        assert_int_equal(EVP_DigestInit_ex(md, EVP_sha1(), NULL), 1);
        assert_int_equal(deflateInit(&z, 1), Z_OK);
        EVP_DigestUpdate(md, h, hn);
        zfeed(&z, &out, h, hn, Z_NO_FLUSH);
        EVP_DigestUpdate(md, head, n_head);
        zfeed(&z, &out, head, n_head, Z_NO_FLUSH);
        for (uint64_t left = fill; left > 0;) {
                size_t k = (size_t)MIN(left, sizeof(xs));

                EVP_DigestUpdate(md, xs, k);
                zfeed(&z, &out, xs, k, Z_NO_FLUSH);
                left -= k;
        }
        zfeed(&z, &out, NULL, 0, Z_FINISH);
        deflateEnd(&z);
        assert_int_equal(EVP_DigestFinal_ex(md, oid, NULL), 1);
        EVP_MD_CTX_free(md);
        tohex(oid, name);
        dir = util_strprintf("r/.git/objects/%.2s", name);
        path = util_strprintf("%s/%s", dir, name + 2);
        assert_int_equal(fixture_mkdir(root, dir), 0);
        assert_int_equal(fixture_write_bytes(root, path, out.p, out.n), 0);
        free(out.p);
}

/* A loose blob named oid (no hash of it) whose header says `size` bytes, as digits, but whose
 * stream ends after three: enough for a reader that reads no blob past its header. */
static void blob_header(const char *root, const char *size, const char *oid) {
        _cleanup_free_ char *path = util_strprintf("r/.git/objects/%.2s/%s", oid, oid + 2);
        _cleanup_free_ char *dir = util_strprintf("r/.git/objects/%.2s", oid);
        unsigned char obj[64], z[128];
        size_t n = (size_t)snprintf((char *)obj, sizeof(obj), "blob %s", size) + 1;
        uLongf zn = sizeof(z);

        memcpy(obj + n, "abc", 3);
        assert_int_equal(compress(z, &zn, obj, n + 3), Z_OK);
        assert_int_equal(fixture_mkdir(root, dir), 0);
        assert_int_equal(fixture_write_bytes(root, path, z, zn), 0);
}

/* A commit object's text: tree, parent (NULL: none), the signature lines. */
static size_t commit_head(char *out, size_t size, const char *tree, const char *parent) {
        return (size_t)snprintf(out, size, "tree %s\n%s%s%s" SIG, tree, parent ? "parent " : "",
                                parent ?: "", parent ? "\n" : "");
}

/* refs/heads/KEPT names oid. */
static void ref_kept(const char *root, const unsigned char oid[20]) {
        char h[42];

        tohex(oid, h);
        h[40] = '\n', h[41] = 0;
        assert_int_equal(fixture_write(root, "r/.git/refs/heads/" KEPT, h), 0);
}

/* zlib of p as one stored block: a million of them cost no deflateInit(). n < 65536. */
static size_t zstored(unsigned char *out, const void *p, size_t n) {
        uLong a = adler32(adler32(0L, Z_NULL, 0), p, (uInt)n);

        out[0] = 0x78, out[1] = 0x01, out[2] = 0x01;
        out[3] = (unsigned char)n, out[4] = (unsigned char)(n >> 8);
        out[5] = (unsigned char)~n, out[6] = (unsigned char)(~n >> 8);
        memcpy(out + 7, p, n);
        for (int i = 0; i < 4; i++)
                out[7 + n + (size_t)i] = (unsigned char)(a >> (24 - 8 * i));
        return n + 11;
}

/* A pack written by hand, and its .idx as git index-pack writes it. */
typedef struct PackObj {
        unsigned char oid[20];
        uint64_t off;
        uint32_t crc;
} PackObj;

typedef struct PackW {
        Buf b;
        PackObj *o;
        size_t n;
} PackW;

static void packw_start(PackW *w, size_t max) {
        static const unsigned char hdr[12] = "PACK\0\0\0\2";

        *w = (PackW){ .o = calloc(max, sizeof(PackObj)) };
        assert_non_null(w->o);
        buf_add(&w->b, hdr, sizeof(hdr));
}

/* An entry named oid: type and (inflated) size, extra (an OFS_DELTA's base distance), zlib z. */
static uint64_t packw_add(PackW *w, const unsigned char oid[20], int type, uint64_t size,
                          const void *extra, size_t n_extra, const void *z, size_t zn) {
        PackObj *o = &w->o[w->n++];

        o->off = w->b.n;
        pack_hdr(&w->b, type, size);
        buf_add(&w->b, extra, n_extra);
        buf_add(&w->b, z, zn);
        memcpy(o->oid, oid, 20);
        o->crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), w->b.p + o->off, (uInt)(w->b.n - o->off));
        return o->off;
}

static int cmp_oid(const void *a, const void *b) {
        return memcmp(a, b, 20);
}

static void buf_be32(Buf *b, uint32_t v) {
        unsigned char p[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
                               (unsigned char)(v >> 8), (unsigned char)v };

        buf_add(b, p, 4);
}

/* <base>.pack of the first n entries and <base>.idx (version 2); all_large: every offset in the
 * 64-bit table (git puts there only those past 2 GiB; the index is then its largest). */
static void packw_write(PackW *w, const char *root, const char *base, size_t n, bool all_large) {
        _cleanup_free_ char *pack = util_strprintf("%s/%s.pack", root, base);
        _cleanup_free_ char *idx = util_strprintf("%s/%s.idx", root, base);
        size_t end = n < w->n ? (size_t)w->o[n].off : w->b.n, k = 0;
        PackObj *o = malloc(MAX(n, (size_t)1) * sizeof(PackObj));
        unsigned char sum[20], isum[20];
        Buf x = {};
        FILE *f;

        assert_non_null(o);
        w->b.p[8] = (unsigned char)(n >> 24), w->b.p[9] = (unsigned char)(n >> 16);
        w->b.p[10] = (unsigned char)(n >> 8), w->b.p[11] = (unsigned char)n;
        sha1(w->b.p, end, sum);
        f = fopen(pack, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(w->b.p, 1, end, f), end);
        assert_int_equal(fwrite(sum, 1, 20, f), 20);
        assert_int_equal(fclose(f), 0);
        if (n > 0)
                memcpy(o, w->o, n * sizeof(PackObj));
        if (n > 0)
                qsort(o, n, sizeof(PackObj), cmp_oid);
        buf_add(&x, "\377tOc\0\0\0\2", 8);
        for (unsigned i = 0, j = 0; i < 256; i++) {
                while (j < n && o[j].oid[0] <= i)
                        j++;
                buf_be32(&x, j);
        }
        for (size_t i = 0; i < n; i++)
                buf_add(&x, o[i].oid, 20);
        for (size_t i = 0; i < n; i++)
                buf_be32(&x, o[i].crc);
        for (size_t i = 0; i < n; i++)
                buf_be32(&x, all_large || o[i].off >= 0x80000000u ? 0x80000000u | (uint32_t)k++
                                                                  : (uint32_t)o[i].off);
        for (size_t i = 0; i < n; i++)
                if (all_large || o[i].off >= 0x80000000u) {
                        buf_be32(&x, (uint32_t)(o[i].off >> 32));
                        buf_be32(&x, (uint32_t)o[i].off);
                }
        buf_add(&x, sum, 20);
        sha1(x.p, x.n, isum);
        buf_add(&x, isum, 20);
        f = fopen(idx, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(x.p, 1, x.n, f), x.n);
        assert_int_equal(fclose(f), 0);
        free(x.p);
        free(o);
}

static void packw_done(PackW *w) {
        free(w->b.p);
        free(w->o);
}

/* A pack entry of a small blob "<i>\n" (stored, not deflated). */
static void packw_blob(PackW *w, size_t i) {
        unsigned char obj[64], z[64], oid[20];
        char data[32];
        size_t dn = (size_t)snprintf(data, sizeof(data), "%zu\n", i);
        size_t on = (size_t)snprintf((char *)obj, sizeof(obj), "blob %zu", dn) + 1;

        memcpy(obj + on, data, dn);
        sha1(obj, on + dn, oid);
        packw_add(w, oid, 3, dn, NULL, 0, z, zstored(z, data, dn));
}

/* 1,000,000 objects in one pack (its index at its largest too), and one more: loose, or in the
 * pack. */
static void test_dc_gitobj_objects(void **state) {
        const char *root = *state;
        const size_t max = DC_GITOBJ_MAX_OBJECTS;
        unsigned char oid[20];
        DcGitobjCounts c;
        struct stat st;
        PackW w;

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        free(sh(root, "mkdir r && " GIT " init -q"));
        packw_start(&w, max + 1);
        for (size_t i = 0; i <= max; i++)
                packw_blob(&w, i);
        packw_write(&w, root, PACKS "pack-max", max, false);
        free(sh(root, GIT " count-objects -v | grep -qx 'in-pack: 1000000'")); /* git reads it */
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_UNREACHABLE], max);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE] + c.objects[DC_GITOBJ_ORPHAN], 0);
        /* the index at its largest: every offset 64-bit */
        packw_write(&w, root, PACKS "pack-max", max, true);
        {
                _cleanup_free_ char *idx = fixture_path(root, PACKS "pack-max.idx");

                assert_int_equal(stat(idx, &st), 0);
                assert_int_equal((uint64_t)st.st_size, 1072 + 36 * (uint64_t)max);
        }
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_UNREACHABLE], max);
        free(sh(root, "printf x >> " PACKS "pack-max.idx"));
        expect_unknown(root, "a pack index cannot be read, or is too large");
        /* one object more, loose */
        packw_write(&w, root, PACKS "pack-max", max, false);
        loose(root, "blob", "y", 1, 0, oid);
        expect_unknown(root, "more than 1000000 objects");
        /* one more in the pack */
        free(sh(root, "rm -r r/.git/objects/??"));
        expect_known(root);
        packw_write(&w, root, PACKS "pack-max", max + 1, false);
        expect_unknown(root, "more than 1000000 objects");
        packw_done(&w);
}

/* 1,000,000 refs in a packed-refs of 64 MiB, one ref more, and one byte more; a loose ref and
 * HEAD of 4096 bytes, and one more; a ref's path of 4095 bytes and 4096, 16 directories deep
 * and 17. */
static void test_dc_gitobj_refs(void **state) {
        const char *root = *state;
        const size_t max = DC_GITOBJ_MAX_OBJECTS, max_file = UINT64_C(64) << 20;
        char head[256], h[41], line[80];
        _cleanup_free_ char *big = malloc(4098);
        unsigned char oid[20];
        DcGitobjCounts c;
        Buf b = {};

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        assert_non_null(big);
        free(sh(root, "mkdir r && " GIT " init -q"));
        loose(root, "commit", head, commit_head(head, sizeof(head), EMPTY_TREE, NULL), 0, oid);
        tohex(oid, h);
        /* lines of 67 bytes, the first of 68: exactly 64 MiB, as git reads it */
        buf_add(&b, "# pack-refs with: peeled fully-peeled sorted \n", 46);
        for (size_t i = 0; i < max; i++)
                buf_add(&b, line,
                        (size_t)snprintf(line, sizeof(line), "%s refs/r/%018zu%s\n", h, i,
                                         i < max_file - 46 - 67 * max ? "x" : ""));
        assert_int_equal(b.n, max_file);
        assert_int_equal(fixture_write_bytes(root, "r/.git/packed-refs", b.p, b.n), 0);
        free(b.p);
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 1);
        free(sh(root, GIT " rev-parse -q --verify refs/r/000000000000999999")); /* as git's */
        ref_kept(root, oid); /* one ref more */
        expect_unknown(root, "more than 1000000 refs");
        free(sh(root, "rm r/.git/refs/heads/" KEPT " && printf '\\n' >> r/.git/packed-refs"));
        expect_unknown(root, "packed-refs cannot be read, or is too large");
        /* a loose ref of 4096 bytes (its newlines ignored, as git does), and 4097 */
        free(sh(root, "rm r/.git/packed-refs"));
        memcpy(big, h, 40);
        memset(big + 40, '\n', 4096 - 40);
        big[4096] = 0;
        assert_int_equal(fixture_write(root, "r/.git/refs/heads/" KEPT, big), 0);
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 1);
        big[4096] = '\n', big[4097] = 0;
        assert_int_equal(fixture_write(root, "r/.git/refs/heads/" KEPT, big), 0);
        expect_unknown(root, "a ref cannot be read");
        big[4096] = 0;
        assert_int_equal(fixture_write(root, "r/.git/refs/heads/" KEPT, big), 0);
        /* HEAD */
        assert_int_equal(fixture_write(root, "r/.git/HEAD", big), 0);
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 1);
        big[4096] = '\n';
        assert_int_equal(fixture_write(root, "r/.git/HEAD", big), 0);
        expect_unknown(root, "HEAD cannot be read");
        /* a ref 16 directories under refs/ whose path is 4095 bytes, one of 4096, one 17 deep */
        assert_int_equal(fixture_write(root, "r/.git/HEAD", "ref: refs/heads/master\n"), 0);
        free(sh(root, "rm r/.git/refs/heads/" KEPT " && cd r/.git/refs && for i in $(seq 16); do "
                      "d=$(printf %%0250d $i) && mkdir $d && cd $d || exit 1; done && "
                      "echo %s > f$(printf %%073d 0)",
                h));
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 1);
        free(sh(root, "cd r/.git/refs && p=$(find . -name 'f0*') && mv $p ${p%%/*}/x${p##*/}"));
        expect_unknown(root, "a ref's name is too long");
        free(sh(root, "rm -r r/.git/refs/0* && cd r/.git/refs && mkdir -p $(seq -s/ 16) && "
                      "echo %s > $(seq -s/ 16)/f",
                h));
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 1);
        free(sh(root, "cd r/.git/refs/$(seq -s/ 16) && mkdir 17 && mv f 17/f"));
        expect_unknown(root, "refs nested too deep");
}

/* 512 packs, then 513: each holds its descriptor open for the count (the service's
 * LimitNOFILE is 1024). */
static void test_dc_gitobj_packs(void **state) {
        const char *root = *state;
        const size_t max = 512;
        DcGitobjCounts c;

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        free(sh(root, "mkdir r && " GIT " init -q"));
        for (size_t i = 0; i <= max; i++) {
                _cleanup_free_ char *base = util_strprintf(PACKS "pack-%04zu", i);
                PackW w;

                if (i == max) {
                        c = expect_known(root);
                        assert_int_equal(c.objects[DC_GITOBJ_UNREACHABLE], max);
                }
                packw_start(&w, 1);
                packw_blob(&w, i);
                packw_write(&w, root, base, 1, false);
                packw_done(&w);
        }
        /* the index as git writes it */
        free(sh(root, "cd r && " DC_GIT_PROGRAM " index-pack -o ../git.idx .git/objects/pack/"
                      "pack-0000.pack >/dev/null && rm -f .git/objects/pack/*.rev ../git.rev && "
                      "cmp ../git.idx .git/objects/pack/pack-0000.idx"));
        expect_unknown(root, "more than 512 packs");
}

/* A commit of 64 MiB, and one byte more; a blob over 64 MiB, named by a tree, never inflated;
 * a blob of 2^64 - 1 bytes by its header (a keep-ref's), and one more; a blob named as a
 * directory. */
static void test_dc_gitobj_object(void **state) {
        const char *root = *state;
        const char *kept[] = { KEPT };
        const uint64_t max = DC_GITOBJ_MAX_OBJECT;
        unsigned char oid[20], blob[20], tree[20], t[64];
        char head[256], h[41];
        size_t hn = commit_head(head, sizeof(head), EMPTY_TREE, NULL), tn;
        DcGitobjCounts c;

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        free(sh(root, "mkdir r && " GIT " init -q"));
        loose(root, "commit", head, hn, max - hn, oid);
        ref_kept(root, oid);
        check(root, kept, 1, NULL, 0);
        free(sh(root, "rm -r r/.git/objects/??"));
        loose(root, "commit", head, hn, max - hn + 1, oid);
        ref_kept(root, oid);
        expect_unknown(root, "an object over 64 MiB");
        /* a blob over 64 MiB: never inflated */
        free(sh(root, "rm -r r/.git/objects/??"));
        loose(root, "blob", "", 0, max + 1, blob);
        tn = (size_t)snprintf((char *)t, sizeof(t), "100644 big") + 1;
        memcpy(t + tn, blob, 20);
        loose(root, "tree", t, tn + 20, 0, tree);
        tohex(tree, h);
        loose(root, "commit", head, commit_head(head, sizeof(head), h, NULL), 0, oid);
        ref_kept(root, oid);
        check(root, kept, 1, NULL, 0);
        /* a root blob of 2^64 - 1 bytes by its header: its type read, not its body */
        blob_header(root, "18446744073709551615", "b10b000000000000000000000000000000000001");
        assert_int_equal(fixture_write(root, "r/.git/refs/qgc/keep/b",
                                       "b10b000000000000000000000000000000000001\n"),
                         0);
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 4);
        blob_header(root, "18446744073709551616", "b10b000000000000000000000000000000000001");
        expect_unknown(root, "a loose object's size is not a number");
        blob_header(root, "1000000000000", "b10b000000000000000000000000000000000001");
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 4);
        /* a blob named as a directory: git fails on it; never read as a tree */
        tn = (size_t)snprintf((char *)t, sizeof(t), "40000 d") + 1;
        memcpy(t + tn, "\xb1\x0b\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 20);
        free(sh(root, "rm r/.git/refs/qgc/keep/b"));
        loose(root, "tree", t, tn + 20, 0, tree);
        tohex(tree, h);
        loose(root, "commit", head, commit_head(head, sizeof(head), h, NULL), 0, oid);
        ref_kept(root, oid);
        expect_unknown(root, "an object is not of the type that names it");
}

/* Pack pack-work: commit B (a 4 KiB message, unreachable), and k OFS_DELTAs on it, commits of
 * `size` bytes each, each the parent of the next (the last in last). Their names are not their
 * hashes (the reader checks none; hashing 4 GiB would cost the test seconds). What reading the
 * k commits inflates: B again for each, its delta, and the commit. */
static uint64_t deltas(const char *root, unsigned k, uint64_t size, unsigned char last[20]) {
        const size_t msg = 4096;
        char head[256], parent[41];
        size_t hn = commit_head(head, sizeof(head), EMPTY_TREE, NULL), bn = hn + msg;
        _cleanup_free_ unsigned char *b = malloc(bn), *zb = malloc(compressBound(bn));
        uLongf zn = compressBound(bn);
        uint64_t base, work = 0;
        unsigned char oid[20];
        PackW w;

        assert_true(b && zb);
        memcpy(b, head, hn);
        memset(b + hn, 'x', msg);
        assert_int_equal(compress(zb, &zn, b, bn), Z_OK);
        {
                char h[64];
                size_t n = (size_t)snprintf(h, sizeof(h), "commit %zu", bn) + 1;
                EVP_MD_CTX *md = EVP_MD_CTX_new();

                EVP_DigestInit_ex(md, EVP_sha1(), NULL);
                EVP_DigestUpdate(md, h, n);
                EVP_DigestUpdate(md, b, bn);
                EVP_DigestFinal_ex(md, oid, NULL);
                EVP_MD_CTX_free(md);
        }
        packw_start(&w, k + 1);
        base = packw_add(&w, oid, 1, bn, NULL, 0, zb, zn);
        for (unsigned i = 0; i < k; i++) {
                char text[256];
                size_t tn = commit_head(text, sizeof(text), EMPTY_TREE, i > 0 ? parent : NULL);
                Buf d = {};
                unsigned char v[16], ofs[16], *z;
                uLongf dz;

                buf_add(&d, v, put_varint(v, bn));
                buf_add(&d, v, put_varint(v, size));
                for (size_t o = 0; o < tn; o += 127) { /* insert the commit's text */
                        unsigned char c = (unsigned char)MIN(tn - o, (size_t)127);

                        buf_add(&d, &c, 1);
                        buf_add(&d, text + o, c);
                }
                for (uint64_t left = size - tn; left > 0;) { /* copy B's message */
                        uint64_t n = MIN(left, (uint64_t)msg);
                        unsigned char op[8] = { 0xff,
                                                (unsigned char)hn,
                                                (unsigned char)(hn >> 8),
                                                0,
                                                0,
                                                (unsigned char)n,
                                                (unsigned char)(n >> 8),
                                                (unsigned char)(n >> 16) };

                        buf_add(&d, op, sizeof(op));
                        left -= n;
                }
                dz = compressBound(d.n) + 11;
                z = malloc(dz);
                assert_non_null(z);
                if (d.n < 65536) /* stored: sixty thousand deflateInit()s would cost seconds */
                        dz = zstored(z, d.p, d.n);
                else
                        assert_int_equal(compress(z, &dz, d.p, d.n), Z_OK);
                {
                        char name[32];

                        snprintf(name, sizeof(name), "delta %u", i);
                        sha1(name, strlen(name), oid);
                }
                packw_add(&w, oid, 6, d.n, ofs, ofs_encode(w.b.n - base, ofs), z, dz);
                tohex(oid, parent);
                work += bn + d.n + size;
                free(z);
                free(d.p);
        }
        memcpy(last, oid, 20);
        packw_write(&w, root, PACKS "pack-work", k + 1, false);
        packw_done(&w);
        return work;
}

/* 4 GiB inflated in a repository: commits of 64 KiB (their buffers reused: the sanitizers' and
 * glibc's mmap() and fault in each larger one), deltas on one small base (300 bytes of disk each),
 * and a last loose commit of what is left, and one byte more. */
static void test_dc_gitobj_work(void **state) {
        const char *root = *state;
        const uint64_t max = DC_GITOBJ_MAX_WORK, size = UINT64_C(64) << 10;
        const unsigned k = (unsigned)((max - size) / (size + 4096 + 512)); /* B and a delta: less */
        unsigned char last[20], oid[20];
        char head[256], parent[41];
        uint64_t work, hn;
        DcGitobjCounts c;

        if (!have_git())
                test_skip("no " DC_GIT_PROGRAM);
        free(sh(root, "mkdir r && " GIT " init -q"));
        /* a delta's result at 64 MiB, and one byte more */
        deltas(root, 1, DC_GITOBJ_MAX_OBJECT, last);
        ref_kept(root, last);
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], 1);
        deltas(root, 1, DC_GITOBJ_MAX_OBJECT + 1, last);
        ref_kept(root, last);
        expect_unknown(root, "an object over 64 MiB");
        /* the repository's */
        work = deltas(root, k, size, last);
        tohex(last, parent);
        hn = commit_head(head, sizeof(head), EMPTY_TREE, parent);
        assert_true(work + hn < max && max - work <= DC_GITOBJ_MAX_OBJECT);
        print_message("# %u deltas inflate %" PRIu64 " bytes, the last commit %" PRIu64 "\n", k,
                      work, max - work);
        loose(root, "commit", head, hn, max - work - hn, oid);
        ref_kept(root, oid);
        c = expect_known(root);
        assert_int_equal(c.objects[DC_GITOBJ_LIVE], k + 1);
        assert_int_equal(c.objects[DC_GITOBJ_UNREACHABLE], 1);
        free(sh(root, "rm -r r/.git/objects/??"));
        loose(root, "commit", head, hn, max - work - hn + 1, oid);
        ref_kept(root, oid);
        expect_unknown(root, "more than 4 GiB to inflate");
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
                cmocka_unit_test_setup_teardown(test_dc_gitobj_object, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_gitobj_work, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_gitobj_packs, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_gitobj_refs, fixture_root_setup,
                                                fixture_root_teardown),
                cmocka_unit_test_setup_teardown(test_dc_gitobj_objects, fixture_root_setup,
                                                fixture_root_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
