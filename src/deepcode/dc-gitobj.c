/* dc-gitobj.c: the objects of a checkpoint repository, read without git (dc-gitobj.h): loose
 * objects (objects/xx/<38 hex>: zlib of "type size\0body"), packs (objects/pack/<name>.idx,
 * version 2, and its .pack: whole objects, OFS_DELTA and REF_DELTA), refs (HEAD, loose refs/,
 * packed-refs). A walk from the roots reads commits (tree, parents), trees (entries; a gitlink,
 * mode 160000, is another repository's) and tags; a blob is never inflated, only its type read
 * (a blob named as a tree or a commit: unknown, as git fails on it). Each object is pushed once,
 * so the walk is linear in the objects times the delta depth. Checksums are not verified (git
 * does not verify them on a read either).
 *
 * Limits: every file here is the user's, and root reads it. Past one, or malformed, the figures
 * are unknown (never a failure of status). tests/fs/test_dc_gitobj.c tests each at its maximum
 * and one past it, at real size.
 *   - 64 MiB inflated of one object or delta result (DC_GITOBJ_MAX_OBJECT); a blob, never
 *     inflated, may be of any 64-bit size;
 *   - 4 GiB inflated in all (DC_GITOBJ_MAX_WORK), a delta's base counted each time it is;
 *   - 50 deltas on a base (DC_GITOBJ_MAX_DEPTH);
 *   - 1,000,000 objects (DC_GITOBJ_MAX_OBJECTS), each copy counted (loose, in each pack);
 *   - a pack index of 1,072 + 36 bytes per object, 36,001,072 bytes (DC_GITOBJ_MAX_IDX);
 *   - 512 packs (DC_GITOBJ_MAX_PACKS): each holds its descriptor open for the count, and
 *     systemd's default LimitNOFILE is 1024 (the unit sets none);
 *   - 1,000,000 refs, a loose ref and its packed copy each counted;
 *   - 4,096 bytes of a loose ref or HEAD (DC_GITOBJ_MAX_REF), 64 MiB of packed-refs
 *     (DC_GITOBJ_MAX_PACKED_REFS);
 *   - 16 directories under refs/ (DC_GITOBJ_MAX_REF_DEPTH), a ref's path under 4,096 bytes;
 *   - 5 symbolic refs followed (DC_GITOBJ_MAX_SYMREF): a loop guard, not a file's size; past
 *     it the ref is no root, and every ref of the chain is a root of its own (untested: it
 *     changes no count).
 * A pack and a loose object are read piecewise (pread, zlib), never whole. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "dc-gitobj.h"
#include "fs.h"
#include "hashmap.h"
#include "macro.h"

#define DC_GITOBJ_MAX_REF 4096 /* bytes of a loose ref or HEAD */
#define DC_GITOBJ_MAX_PACKED_REFS (64u << 20)
#define DC_GITOBJ_MAX_IDX                                                                          \
        (UINT64_C(1032) + UINT64_C(40) + (UINT64_C(28) + 8) * DC_GITOBJ_MAX_OBJECTS)
#define DC_GITOBJ_MAX_REF_DEPTH 16 /* directories under refs/ */
#define DC_GITOBJ_MAX_SYMREF 5     /* symbolic refs followed */
#define DC_GITOBJ_MAX_PACKS 512 /* each holds its descriptor open for the count */
#define DC_GITOBJ_CHUNK 65536

enum { OBJ_NONE, OBJ_COMMIT, OBJ_TREE, OBJ_BLOB, OBJ_TAG, OBJ_OFS_DELTA = 6, OBJ_REF_DELTA = 7 };
enum { CLS_NONE, CLS_LIVE, CLS_ORPHAN };

typedef struct Obj {
        uint8_t oid[20]; /* first: the hashmap's key */
        uint8_t cls;
        bool loose;
        uint32_t pack;   /* its pack (UINT32_MAX: loose only) */
        uint64_t offset; /* in it */
        uint64_t alloc;
} Obj;

typedef struct Pack {
        int fd;
        uint64_t size;
        uint64_t *offsets; /* sorted: an entry ends where the next begins (or at the trailer) */
        uint32_t n;
} Pack;

typedef struct Ref {
        char *name;
        char *target; /* a symbolic ref's */
        uint8_t oid[20];
        bool loose;
} Ref;

typedef struct Item {
        Obj *obj;
        uint8_t type; /* expected, OBJ_NONE when not known */
} Item;

typedef struct G {
        int fd, objfd;
        const DcGitInput *in;
        const char *why;
        Obj *objs;
        size_t n_objs, alloc_objs;
        Hashmap map;
        Hashmap kept; /* in->kept_ids */
        Pack *packs;
        size_t n_packs, alloc_packs;
        Ref *refs;
        size_t n_refs, alloc_refs;
        Item *stack;
        size_t n_stack;
        uint64_t work, overhead;
} G;

/* Malformed or over a limit: the figures are unknown. */
static int gitobj_bad(G *g, const char *why) {
        if (!g->why)
                g->why = why;
        return -EBADMSG;
}

static int gitobj_unhex(const char *s, uint8_t oid[20]) {
        for (size_t i = 0; i < 40; i++) {
                char c = s[i];
                int v = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (v < 0)
                        return -EINVAL;
                if (i % 2 == 0)
                        oid[i / 2] = (uint8_t)(v << 4);
                else
                        oid[i / 2] |= (uint8_t)v;
        }
        return 0;
}

static uint64_t gitobj_hash(const uint8_t oid[20]) {
        uint64_t h;

        memcpy(&h, oid, sizeof(h));
        return h;
}

static bool gitobj_eq(const void *entry, const void *key) {
        return memcmp(((const Obj *)entry)->oid, key, 20) == 0;
}

static Obj *gitobj_find(const G *g, const uint8_t oid[20]) {
        return hashmap_get(&g->map, gitobj_hash(oid), gitobj_eq, oid);
}

static int gitobj_add(G *g, const uint8_t oid[20], uint32_t pack, uint64_t offset, uint64_t alloc) {
        if (g->n_objs >= DC_GITOBJ_MAX_OBJECTS)
                return gitobj_bad(g, "more than 1000000 objects");
        if (util_greedy_realloc((void **)&g->objs, &g->alloc_objs, g->n_objs + 1, sizeof(Obj)) < 0)
                return -ENOMEM;
        g->objs[g->n_objs++] = (Obj){
                .loose = pack == UINT32_MAX, .pack = pack, .offset = offset, .alloc = alloc
        };
        memcpy(g->objs[g->n_objs - 1].oid, oid, 20);
        return 0;
}

/* ---------------------------------------------------------------- inflating */

typedef struct Inflater {
        z_stream z;
        int fd;
        uint64_t pos, end;
        bool ended;
        unsigned char in[DC_GITOBJ_CHUNK];
} Inflater;

static int gitobj_inflate_start(Inflater *f, int fd, uint64_t pos, uint64_t end) {
        *f = (Inflater){ .fd = fd, .pos = pos, .end = end };
        return inflateInit(&f->z) == Z_OK ? 0 : -ENOMEM;
}

/* Up to n bytes into out (fewer only at the stream's end): *ret_got. */
static int gitobj_inflate(G *g, Inflater *f, void *out, size_t n, size_t *ret_got) {
        f->z.next_out = out;
        f->z.avail_out = (uInt)n;
        while (f->z.avail_out > 0 && !f->ended) {
                int k;

                if (f->z.avail_in == 0) {
                        ssize_t m;

                        if (f->pos >= f->end)
                                return gitobj_bad(g, "a truncated object");
                        m = fs_pread_full(f->fd, f->in, (size_t)MIN(f->end - f->pos, sizeof(f->in)),
                                          (off_t)f->pos);
                        if (m <= 0)
                                return m < 0 ? (m == -ENOMEM
                                                        ? -ENOMEM
                                                        : gitobj_bad(g, "an object cannot be read"))
                                             : gitobj_bad(g, "a truncated object");
                        f->pos += (uint64_t)m;
                        f->z.next_in = f->in;
                        f->z.avail_in = (uInt)m;
                }
                k = inflate(&f->z, Z_NO_FLUSH);
                if (k == Z_STREAM_END)
                        f->ended = true;
                else if (k == Z_MEM_ERROR)
                        return -ENOMEM;
                else if (k != Z_OK && !(k == Z_BUF_ERROR && f->z.avail_in == 0))
                        return gitobj_bad(g, "an object is not zlib");
        }
        *ret_got = n - f->z.avail_out;
        return 0;
}

/* Exactly size bytes, then the stream's end, the first `have` of them already inflated at *ret:
 * *ret then an allocated copy (size + 1, NUL-terminated), left as it was on failure. */
static int gitobj_inflate_all(G *g, Inflater *f, uint64_t size, size_t have, unsigned char **ret) {
        _cleanup_free_ unsigned char *buf = NULL;
        size_t got;
        int r;

        if (size > DC_GITOBJ_MAX_OBJECT)
                return gitobj_bad(g, "an object over 64 MiB");
        g->work += size;
        if (g->work > DC_GITOBJ_MAX_WORK)
                return gitobj_bad(g, "more than 4 GiB to inflate");
        buf = malloc(size + 1);
        if (!buf)
                return -ENOMEM;
        if (have > size)
                return gitobj_bad(g, "an object longer than its header says");
        memcpy(buf, *ret, have);
        r = gitobj_inflate(g, f, buf + have, size + 1 - have, &got);
        if (r < 0)
                return r;
        if (have + got != size || !f->ended)
                return gitobj_bad(g, "an object's length is not its header's");
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---------------------------------------------------------------- reading objects */

static int gitobj_read(G *g, Obj *o, unsigned depth, bool header_only, int *ret_type,
                       unsigned char **ret, size_t *ret_size);

static int gitobj_type_of(const char *s, size_t n) {
        static const char *const names[] = {
                [OBJ_COMMIT] = "commit", [OBJ_TREE] = "tree", [OBJ_BLOB] = "blob", [OBJ_TAG] = "tag"
        };

        for (int t = OBJ_COMMIT; t <= OBJ_TAG; t++)
                if (strlen(names[t]) == n && memcmp(names[t], s, n) == 0)
                        return t;
        return OBJ_NONE;
}

static int gitobj_read_loose(G *g, const Obj *o, bool header_only, int *ret_type,
                             unsigned char **ret, size_t *ret_size) {
        static const char hex[] = "0123456789abcdef";
        _cleanup_close_ int fd = -EBADF;
        unsigned char hdr[64];
        char name[42], *sp, *nul;
        uint64_t size = 0;
        struct stat st;
        Inflater *f;
        size_t got = 0;
        int r;

        for (size_t i = 0, k = 0; i < 20; i++) {
                name[k++] = hex[o->oid[i] >> 4];
                name[k++] = hex[o->oid[i] & 15];
                if (i == 0)
                        name[k++] = '/';
        }
        name[41] = 0;
        fd = fs_open_noatime(g->objfd, name, O_RDONLY);
        if (fd < 0)
                return fd == -ENOMEM ? fd : gitobj_bad(g, "a loose object cannot be opened");
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return gitobj_bad(g, "a loose object is not a file");
        f = malloc(sizeof(Inflater));
        if (!f)
                return -ENOMEM;
        r = gitobj_inflate_start(f, fd, 0, (uint64_t)st.st_size);
        if (r >= 0)
                r = gitobj_inflate(g, f, hdr, sizeof(hdr), &got);
        sp = r >= 0 ? memchr(hdr, ' ', got) : NULL;
        nul = sp ? memchr(sp, 0, got - (size_t)((unsigned char *)sp - hdr)) : NULL;
        if (r >= 0 &&
            (!nul || nul == sp + 1 ||
             (*ret_type = gitobj_type_of((char *)hdr, (size_t)(sp - (char *)hdr))) == OBJ_NONE))
                r = gitobj_bad(g, "a loose object without a header");
        for (const char *p = r >= 0 ? sp + 1 : nul; p < nul; p++) {
                /* any 64-bit size: a blob is never inflated (the others: inflate_all()'s limit) */
                if (*p < '0' || *p > '9' ||
                    size > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
                        r = gitobj_bad(g, "a loose object's size is not a number");
                        break;
                }
                size = size * 10 + (uint64_t)(*p - '0');
        }
        if (r >= 0 && !header_only && *ret_type != OBJ_BLOB) { /* a blob: its type only */
                unsigned char *body = (unsigned char *)nul + 1; /* what came with the header */

                r = gitobj_inflate_all(g, f, size, got - (size_t)(body - hdr), &body);
                if (r >= 0) {
                        *ret = body;
                        *ret_size = (size_t)size;
                }
        }
        inflateEnd(&f->z);
        free(f);
        return r;
}

/* The varint of a delta's header (base and result size). */
static int gitobj_delta_size(const unsigned char **p, const unsigned char *end, uint64_t *ret) {
        uint64_t v = 0;

        for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
                unsigned char c = *(*p)++;
                v |= (uint64_t)(c & 0x7f) << shift;
                if (!(c & 0x80)) {
                        *ret = v;
                        return 0;
                }
        }
        return -EBADMSG;
}

static int gitobj_apply(G *g, const unsigned char *base, size_t base_n, const unsigned char *d,
                        size_t d_n, unsigned char **ret, size_t *ret_size) {
        const unsigned char *p = d, *end = d + d_n;
        _cleanup_free_ unsigned char *out = NULL;
        uint64_t bn, rn;
        size_t o = 0;

        if (gitobj_delta_size(&p, end, &bn) < 0 || gitobj_delta_size(&p, end, &rn) < 0 ||
            bn != base_n)
                return gitobj_bad(g, "a delta's header does not fit its base");
        if (rn > DC_GITOBJ_MAX_OBJECT)
                return gitobj_bad(g, "an object over 64 MiB");
        g->work += rn;
        if (g->work > DC_GITOBJ_MAX_WORK)
                return gitobj_bad(g, "more than 4 GiB to inflate");
        out = malloc(rn + 1);
        if (!out)
                return -ENOMEM;
        while (p < end) {
                unsigned char c = *p++;

                if (c & 0x80) {
                        uint64_t off = 0, n = 0;

                        for (unsigned i = 0; i < 4; i++)
                                if (c & (1u << i)) {
                                        if (p >= end)
                                                return gitobj_bad(g, "a truncated delta");
                                        off |= (uint64_t)*p++ << (8 * i);
                                }
                        for (unsigned i = 0; i < 3; i++)
                                if (c & (0x10u << i)) {
                                        if (p >= end)
                                                return gitobj_bad(g, "a truncated delta");
                                        n |= (uint64_t)*p++ << (8 * i);
                                }
                        if (n == 0)
                                n = 0x10000;
                        if (off + n > base_n || n > rn - o)
                                return gitobj_bad(g, "a delta copies out of bounds");
                        memcpy(out + o, base + off, n);
                        o += n;
                } else if (c > 0) {
                        if (c > (size_t)(end - p) || c > rn - o)
                                return gitobj_bad(g, "a delta inserts out of bounds");
                        memcpy(out + o, p, c);
                        p += c;
                        o += c;
                } else
                        return gitobj_bad(g, "a delta's opcode 0");
        }
        if (o != rn)
                return gitobj_bad(g, "a delta's result is not its header's size");
        out[rn] = 0;
        *ret = TAKE_PTR(out);
        *ret_size = (size_t)rn;
        return 0;
}

/* The entry of pack p at off: its end (the next entry's start), or 0 when off starts none. */
static uint64_t gitobj_entry_end(const Pack *p, uint64_t off) {
        size_t lo = 0, hi = p->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (p->offsets[mid] < off)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo >= p->n || p->offsets[lo] != off)
                return 0;
        return lo + 1 < p->n ? p->offsets[lo + 1] : p->size - 20;
}

static int gitobj_read_packed(G *g, uint32_t pi, uint64_t off, unsigned depth, bool header_only,
                              int *ret_type, unsigned char **ret, size_t *ret_size) {
        const Pack *p = &g->packs[pi];
        uint64_t end = gitobj_entry_end(p, off), size, base_off = 0;
        unsigned char hdr[32], *delta = NULL, *base = NULL;
        size_t n, h = 1, base_n = 0, delta_n;
        Obj *base_obj = NULL;
        Inflater *f;
        ssize_t m;
        int type, r;

        if (end == 0)
                return gitobj_bad(g, "a delta's base is no entry of its pack");
        m = fs_pread_full(p->fd, hdr, (size_t)MIN(sizeof(hdr), end - off), (off_t)off);
        if (m <= 0)
                return m == -ENOMEM ? -ENOMEM : gitobj_bad(g, "a pack cannot be read");
        n = (size_t)m;
        type = (hdr[0] >> 4) & 7;
        size = hdr[0] & 15;
        for (unsigned shift = 4; hdr[h - 1] & 0x80; shift += 7) {
                if (h >= n || shift > 57)
                        return gitobj_bad(g, "a pack entry's header is malformed");
                size |= (uint64_t)(hdr[h] & 0x7f) << shift;
                h++;
        }
        if (type == OBJ_OFS_DELTA) {
                uint64_t v;

                if (h >= n)
                        return gitobj_bad(g, "a pack entry's header is malformed");
                v = hdr[h] & 0x7f;
                while (hdr[h++] & 0x80) {
                        if (h >= n || v >= (UINT64_C(1) << 56))
                                return gitobj_bad(g, "a pack entry's header is malformed");
                        v = ((v + 1) << 7) | (hdr[h] & 0x7f);
                }
                if (v == 0 || v > off)
                        return gitobj_bad(g, "a delta's base is out of its pack");
                base_off = off - v;
        } else if (type == OBJ_REF_DELTA) {
                if (h + 20 > n)
                        return gitobj_bad(g, "a pack entry's header is malformed");
                base_obj = gitobj_find(g, hdr + h);
                if (!base_obj)
                        return gitobj_bad(g, "a delta's base is missing");
                h += 20;
        } else if (type < OBJ_COMMIT || type > OBJ_TAG)
                return gitobj_bad(g, "a pack entry of an unknown type");
        if (type == OBJ_OFS_DELTA || type == OBJ_REF_DELTA) {
                if (depth >= DC_GITOBJ_MAX_DEPTH)
                        return gitobj_bad(g, "a delta chain longer than 50");
                r = base_obj ? gitobj_read(g, base_obj, depth + 1, header_only, &type, &base,
                                           &base_n)
                             : gitobj_read_packed(g, pi, base_off, depth + 1, header_only, &type,
                                                  &base, &base_n);
                if (r < 0 || header_only) {
                        *ret_type = type;
                        return r;
                }
        }
        *ret_type = type;
        if (header_only || type == OBJ_BLOB) /* a blob (or a delta on one): its type only */
                return 0;
        f = malloc(sizeof(Inflater));
        if (!f) {
                free(base);
                return -ENOMEM;
        }
        r = gitobj_inflate_start(f, p->fd, off + h, end);
        delta = hdr; /* nothing inflated yet */
        if (r >= 0)
                r = gitobj_inflate_all(g, f, size, 0, &delta);
        inflateEnd(&f->z);
        free(f);
        if (r >= 0 && base) {
                delta_n = (size_t)size;
                r = gitobj_apply(g, base, base_n, delta, delta_n, ret, ret_size);
                free(delta);
        } else if (r >= 0) {
                *ret = delta;
                *ret_size = (size_t)size;
        }
        free(base);
        return r;
}

/* Object o's type (header_only, or a blob: never inflated), or its type and body (*ret, to
 * free). */
static int gitobj_read(G *g, Obj *o, unsigned depth, bool header_only, int *ret_type,
                       unsigned char **ret, size_t *ret_size) {
        if (o->loose)
                return gitobj_read_loose(g, o, header_only, ret_type, ret, ret_size);
        return gitobj_read_packed(g, o->pack, o->offset, depth, header_only, ret_type, ret,
                                  ret_size);
}

/* ---------------------------------------------------------------- finding objects */

static bool gitobj_is_hex(const char *s, size_t n) {
        return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

static int gitobj_loose(G *g) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir)), *d2 = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int k;

        if (!d || !d2)
                return -ENOMEM;
        fs_dir_init(d, g->objfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                _cleanup_close_ int fd = -EBADF;
                char hex[41];
                const char *n2;
                int k2;

                if (!gitobj_is_hex(name, 2))
                        continue;
                memcpy(hex, name, 2);
                fd = fs_open_noatime(g->objfd, name, O_RDONLY | O_DIRECTORY);
                if (fd < 0)
                        return fd == -ENOMEM ? fd : gitobj_bad(g, "objects/ cannot be listed");
                fs_dir_init(d2, fd);
                while ((k2 = fs_dir_next(d2, &n2, &type)) > 0) {
                        uint8_t oid[20];
                        struct stat st;
                        int r;

                        if (!gitobj_is_hex(n2, 38))
                                continue; /* git's temporary files */
                        if (fs_statat(fd, n2, &st, NULL) < 0 || !S_ISREG(st.st_mode))
                                return gitobj_bad(g, "a loose object is not a file");
                        memcpy(hex + 2, n2, 39);
                        (void)gitobj_unhex(hex, oid);
                        r = gitobj_add(g, oid, UINT32_MAX, 0, (uint64_t)st.st_blocks * 512);
                        if (r < 0)
                                return r;
                }
                if (k2 < 0)
                        return k2 == -ENOMEM ? k2 : gitobj_bad(g, "objects/ cannot be listed");
        }
        return k < 0 ? (k == -ENOMEM ? k : gitobj_bad(g, "objects/ cannot be listed")) : 0;
}

static uint32_t gitobj_be32(const unsigned char *p) {
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The offset of an index's entry i: its 32-bit one, or its 64-bit one when the high bit says so.
 * -EBADMSG: that is out of the n_large 64-bit ones. */
static int gitobj_idx_offset(const unsigned char *off32, const unsigned char *off64,
                             uint64_t n_large, uint32_t i, uint64_t *ret) {
        uint64_t o = gitobj_be32(off32 + 4 * (size_t)i);

        if (o & 0x80000000u) {
                o &= 0x7fffffffu;
                if (o >= n_large)
                        return -EBADMSG;
                o = (uint64_t)gitobj_be32(off64 + 8 * o) << 32 | gitobj_be32(off64 + 8 * o + 4);
        }
        *ret = o;
        return 0;
}

static int gitobj_cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* Pack <base>.idx and <base>.pack (base without ".idx") in objects/pack open at dfd. */
static int gitobj_pack(G *g, int dfd, const char *idx_name) {
        _cleanup_free_ char *buf = NULL, *pack_name = NULL;
        _cleanup_close_ int ifd = -EBADF, pfd = -EBADF;
        const unsigned char *b, *sha, *off32, *off64;
        unsigned char head[12];
        struct stat ist, pst;
        uint64_t sum = 0, n_large;
        size_t size;
        Pack *p;
        uint32_t n;
        int r;

        pack_name = util_strprintf("%.*s.pack", (int)(strlen(idx_name) - 4), idx_name);
        if (!pack_name)
                return -ENOMEM;
        if (g->n_packs >= DC_GITOBJ_MAX_PACKS)
                return gitobj_bad(g, "more than 512 packs");
        ifd = fs_open_noatime(dfd, idx_name, O_RDONLY);
        pfd = fs_open_noatime(dfd, pack_name, O_RDONLY);
        if (ifd == -ENOMEM || pfd == -ENOMEM)
                return -ENOMEM;
        if (ifd < 0 || pfd < 0 || fstat(ifd, &ist) < 0 || fstat(pfd, &pst) < 0 ||
            !S_ISREG(ist.st_mode) || !S_ISREG(pst.st_mode))
                return gitobj_bad(g, "a pack or its index cannot be opened");
        r = fs_read_fd(ifd, DC_GITOBJ_MAX_IDX, &buf, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return gitobj_bad(g, "a pack index cannot be read, or is too large");
        b = (const unsigned char *)buf;
        if (size < 8 + 1024 + 40 || memcmp(b, "\377tOc", 4) != 0 || gitobj_be32(b + 4) != 2)
                return gitobj_bad(g, "a pack index is not version 2");
        n = gitobj_be32(b + 8 + 255 * 4);
        for (unsigned i = 1; i < 256; i++)
                if (gitobj_be32(b + 8 + 4 * i) < gitobj_be32(b + 8 + 4 * (i - 1)))
                        return gitobj_bad(g, "a pack index's fan-out is not sorted");
        if (n > DC_GITOBJ_MAX_OBJECTS)
                return gitobj_bad(g, "more than 1000000 objects");
        if (size < 1032 + 28 * (uint64_t)n + 40 ||
            (size - 1032 - 28 * (uint64_t)n - 40) % 8 != 0)
                return gitobj_bad(g, "a pack index's size does not fit its count");
        n_large = (size - 1032 - 28 * (uint64_t)n - 40) / 8;
        if (fs_pread_full(pfd, head, sizeof(head), 0) != sizeof(head) ||
            memcmp(head, "PACK", 4) != 0 ||
            (gitobj_be32(head + 4) != 2 && gitobj_be32(head + 4) != 3) ||
            gitobj_be32(head + 8) != n || (uint64_t)pst.st_size < 32)
                return gitobj_bad(g, "a pack's header does not fit its index");
        if (util_greedy_realloc((void **)&g->packs, &g->alloc_packs, g->n_packs + 1, sizeof(Pack)) <
            0)
                return -ENOMEM;
        p = &g->packs[g->n_packs];
        *p = (Pack){ .fd = -EBADF,
                     .size = (uint64_t)pst.st_size,
                     .n = n,
                     .offsets = malloc(((size_t)n + 1) * sizeof(uint64_t)) };
        if (!p->offsets)
                return -ENOMEM;
        g->n_packs++;
        p->fd = TAKE_FD(pfd);
        sha = b + 1032;
        off32 = sha + 24 * (size_t)n;
        off64 = off32 + 4 * (size_t)n;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t o;

                if (i > 0 && memcmp(sha + 20 * (size_t)(i - 1), sha + 20 * (size_t)i, 20) >= 0)
                        return gitobj_bad(g, "a pack index's names are not sorted");
                if (gitobj_idx_offset(off32, off64, n_large, i, &o) < 0)
                        return gitobj_bad(g, "a pack index's large offset is out of it");
                if (o < 12 || o >= p->size - 20)
                        return gitobj_bad(g, "a pack index's offset is out of its pack");
                p->offsets[i] = o;
        }
        if (n > 0) /* offsets may be NULL then, which qsort() may not take */
                qsort(p->offsets, n, sizeof(uint64_t), gitobj_cmp_u64);
        for (uint32_t i = 1; i < n; i++)
                if (p->offsets[i] == p->offsets[i - 1])
                        return gitobj_bad(g, "two objects at one offset of a pack");
        for (uint32_t i = 0; i < n; i++) {
                uint64_t o = 0, end;

                (void)gitobj_idx_offset(off32, off64, n_large, i, &o); /* checked above */
                end = gitobj_entry_end(p, o);
                sum += end - o;
                r = gitobj_add(g, sha + 20 * (size_t)i, (uint32_t)(g->n_packs - 1), o, end - o);
                if (r < 0)
                        return r;
        }
        sum = MIN(sum, (uint64_t)(pst.st_blocks + ist.st_blocks) * 512);
        g->overhead += (uint64_t)(pst.st_blocks + ist.st_blocks) * 512 - sum;
        return 0;
}

static int gitobj_packs(G *g) {
        _cleanup_close_ int fd = fs_open_noatime(g->objfd, "pack", O_RDONLY | O_DIRECTORY);
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int k;

        if (!d)
                return -ENOMEM;
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd == -ENOMEM ? fd : gitobj_bad(g, "objects/pack cannot be opened");
        fs_dir_init(d, fd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                size_t n = strlen(name);
                int r;

                if (n <= 4 || !streq(name + n - 4, ".idx"))
                        continue;
                r = gitobj_pack(g, fd, name);
                if (r < 0)
                        return r;
        }
        return k < 0 ? (k == -ENOMEM ? k : gitobj_bad(g, "objects/pack cannot be listed")) : 0;
}

/* The objects as one set: a copy of an object already seen adds its bytes. */
static int gitobj_index(G *g) {
        if (hashmap_reserve(&g->map, g->n_objs) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < g->n_objs; i++) {
                Obj *o = &g->objs[i];
                HashSlot *slot = hashmap_slot(&g->map, gitobj_hash(o->oid), gitobj_eq, o->oid);

                if (slot->entry) {
                        ((Obj *)slot->entry)->alloc += o->alloc;
                        continue;
                }
                hashmap_fill(&g->map, slot, gitobj_hash(o->oid), o);
        }
        return 0;
}

/* ---------------------------------------------------------------- refs */

/* A ref's value (a loose ref's file, HEAD, packed-refs' hash), its line ends ignored: a hash, in
 * oid, or "ref: <name>" (*ret_target, of *ret_n bytes; else NULL). -EINVAL: neither. */
static int gitobj_ref_value(const char *value, size_t n, uint8_t oid[20], const char **ret_target,
                            size_t *ret_n) {
        while (n > 0 && (value[n - 1] == '\n' || value[n - 1] == '\r'))
                n--;
        *ret_target = NULL;
        if (n >= 5 && strneq(value, "ref: ", 5)) {
                *ret_target = value + 5;
                *ret_n = n - 5;
                return 0;
        }
        return n == 40 && gitobj_unhex(value, oid) >= 0 ? 0 : -EINVAL;
}

static int gitobj_ref_add(G *g, const char *name, const char *value, size_t n, bool loose) {
        const char *target;
        size_t target_n = 0;
        Ref *ref;

        if (g->n_refs >= DC_GITOBJ_MAX_OBJECTS)
                return gitobj_bad(g, "more than 1000000 refs");
        if (util_greedy_realloc((void **)&g->refs, &g->alloc_refs, g->n_refs + 1, sizeof(Ref)) < 0)
                return -ENOMEM;
        ref = &g->refs[g->n_refs];
        *ref = (Ref){ .name = strdup(name), .loose = loose };
        if (!ref->name)
                return -ENOMEM;
        g->n_refs++;
        if (gitobj_ref_value(value, n, ref->oid, &target, &target_n) < 0)
                return gitobj_bad(g, "a ref is neither a hash nor symbolic");
        if (target) {
                ref->target = strndup(target, target_n);
                return ref->target ? 0 : -ENOMEM;
        }
        return 0;
}

static int gitobj_loose_refs(G *g, int dfd, char *path, size_t len, unsigned depth) {
        _cleanup_free_ FsDir *d = malloc(sizeof(FsDir));
        const char *name;
        unsigned char type;
        int k;

        if (!d)
                return -ENOMEM;
        if (depth > DC_GITOBJ_MAX_REF_DEPTH)
                return gitobj_bad(g, "refs nested too deep");
        fs_dir_init(d, dfd);
        while ((k = fs_dir_next(d, &name, &type)) > 0) {
                size_t n = strlen(name);
                struct stat st;
                int r;

                if (len + 1 + n >= 4096)
                        return gitobj_bad(g, "a ref's name is too long");
                path[len] = '/';
                memcpy(path + len + 1, name, n + 1);
                if (fs_statat(dfd, name, &st, NULL) < 0)
                        return gitobj_bad(g, "a ref cannot be read");
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int fd = fs_open_noatime(dfd, name, O_RDONLY | O_DIRECTORY);

                        if (fd < 0)
                                return fd == -ENOMEM ? fd : gitobj_bad(g, "refs/ cannot be listed");
                        r = gitobj_loose_refs(g, fd, path, len + 1 + n, depth + 1);
                } else if (S_ISREG(st.st_mode) && !fs_is_temp_name(name) &&
                           !(n > 5 && streq(name + n - 5, ".lock"))) {
                        _cleanup_close_ int fd = fs_open_noatime(dfd, name, O_RDONLY);
                        _cleanup_free_ char *v = NULL;
                        size_t vn;

                        r = fd < 0 ? fd : fs_read_fd(fd, DC_GITOBJ_MAX_REF, &v, &vn);
                        if (r == -ENOMEM)
                                return r;
                        r = r < 0 ? gitobj_bad(g, "a ref cannot be read")
                                  : gitobj_ref_add(g, path, v, vn, true);
                } else
                        r = gitobj_bad(g, "a ref is not a file"); /* a symlink is never followed */
                path[len] = 0;
                if (r < 0)
                        return r;
        }
        return k < 0 ? (k == -ENOMEM ? k : gitobj_bad(g, "refs/ cannot be listed")) : 0;
}

static int gitobj_packed_refs(G *g) {
        _cleanup_close_ int fd = fs_open_noatime(g->fd, "packed-refs", O_RDONLY);
        _cleanup_free_ char *buf = NULL;
        size_t n;
        int r;

        if (fd == -ENOENT)
                return 0;
        r = fd < 0 ? fd : fs_read_fd(fd, DC_GITOBJ_MAX_PACKED_REFS, &buf, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return gitobj_bad(g, "packed-refs cannot be read, or is too large");
        for (char *l = buf, *nl; l < buf + n; l = nl + 1) {
                nl = memchr(l, '\n', (size_t)(buf + n - l));
                if (!nl)
                        nl = buf + n;
                *nl = 0;
                if (*l == '#' || *l == '^' || *l == 0)
                        continue; /* the header, a tag's peeled value */
                if (nl - l < 42 || l[40] != ' ')
                        return gitobj_bad(g, "packed-refs holds a malformed line");
                r = gitobj_ref_add(g, l + 41, l, 40, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int gitobj_cmp_ref(const void *a, const void *b) {
        const Ref *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        return c != 0 ? c : (int)y->loose - (int)x->loose; /* the loose one first */
}

static const Ref *gitobj_ref_find(const G *g, const char *name) {
        size_t lo = 0, hi = g->n_refs;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(g->refs[mid].name, name);

                if (c == 0)
                        return &g->refs[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static int gitobj_refs(G *g) {
        _cleanup_close_ int fd = fs_open_noatime(g->fd, "refs", O_RDONLY | O_DIRECTORY);
        _cleanup_free_ char *path = malloc(4096);
        size_t w = 0;
        int r;

        if (!path)
                return -ENOMEM;
        if (fd < 0 && fd != -ENOENT)
                return fd == -ENOMEM ? fd : gitobj_bad(g, "refs/ cannot be opened");
        r = gitobj_packed_refs(g);
        strcpy(path, "refs");
        if (r >= 0 && fd >= 0)
                r = gitobj_loose_refs(g, fd, path, 4, 0);
        if (r < 0)
                return r;
        if (g->n_refs > 0) /* refs is NULL then, which qsort() may not take */
                qsort(g->refs, g->n_refs, sizeof(Ref), gitobj_cmp_ref);
        for (size_t i = 0; i < g->n_refs; i++) { /* a loose ref hides its packed copy */
                if (w > 0 && streq(g->refs[w - 1].name, g->refs[i].name)) {
                        free(g->refs[i].name);
                        free(g->refs[i].target);
                        continue;
                }
                g->refs[w++] = g->refs[i];
        }
        g->n_refs = w;
        return 0;
}

/* ---------------------------------------------------------------- the walk */

static void gitobj_push(G *g, Obj *o, uint8_t cls, uint8_t type) {
        if (!o || o->cls != CLS_NONE)
                return;
        o->cls = cls;
        g->stack[g->n_stack++] = (Item){ .obj = o, .type = type }; /* once each: room for all */
}

static void gitobj_push_hex(G *g, const char *s, uint8_t cls, uint8_t type) {
        uint8_t oid[20];

        if (gitobj_unhex(s, oid) >= 0)
                gitobj_push(g, gitobj_find(g, oid), cls, type);
}

static int gitobj_walk(G *g, uint8_t cls) {
        while (g->n_stack > 0) {
                Item it = g->stack[--g->n_stack];
                _cleanup_free_ unsigned char *body = NULL;
                size_t n = 0;
                int type, r;

                if (it.type == OBJ_NONE) { /* a root: its type first (a blob is not inflated) */
                        r = gitobj_read(g, it.obj, 0, true, &type, NULL, NULL);
                        if (r < 0)
                                return r;
                        it.type = (uint8_t)type;
                }
                if (it.type == OBJ_BLOB)
                        continue; /* nothing inside */
                r = gitobj_read(g, it.obj, 0, false, &type, &body, &n);
                if (r < 0)
                        return r;
                if (type != it.type) /* a blob named as a tree is not read as one (git fails) */
                        return gitobj_bad(g, "an object is not of the type that names it");
                if (type == OBJ_COMMIT || type == OBJ_TAG) {
                        const char *end = (const char *)body + n, *tag_type = NULL;

                        for (const char *l = (const char *)body; l < end && *l != '\n';) {
                                const char *nl = memchr(l, '\n', (size_t)(end - l));
                                size_t len = nl ? (size_t)(nl - l) : (size_t)(end - l);

                                if (type == OBJ_COMMIT && len == 45 && strneq(l, "tree ", 5))
                                        gitobj_push_hex(g, l + 5, cls, OBJ_TREE);
                                else if (type == OBJ_COMMIT && len == 47 && strneq(l, "parent ", 7))
                                        gitobj_push_hex(g, l + 7, cls, OBJ_COMMIT);
                                else if (type == OBJ_TAG && len > 5 && strneq(l, "type ", 5))
                                        tag_type = l + 5;
                                if (!nl)
                                        break;
                                l = nl + 1;
                        }
                        if (type == OBJ_TAG && n >= 48 && strneq((const char *)body, "object ", 7))
                                gitobj_push_hex(g, (const char *)body + 7, cls,
                                                tag_type
                                                        ? (uint8_t)gitobj_type_of(
                                                                  tag_type, strcspn(tag_type, "\n"))
                                                        : OBJ_NONE);
                } else if (type == OBJ_TREE) {
                        const unsigned char *p = body, *end = body + n;

                        while (p < end) {
                                const unsigned char *sp = memchr(p, ' ', (size_t)(end - p));
                                const unsigned char *nul =
                                        sp ? memchr(sp, 0, (size_t)(end - sp)) : NULL;
                                size_t mode_n = sp ? (size_t)(sp - p) : 0;

                                if (!nul || end - nul < 21)
                                        return gitobj_bad(g, "a tree is malformed");
                                if (!(mode_n == 6 && memcmp(p, "160000", 6) == 0)) /* a gitlink */
                                        gitobj_push(g, gitobj_find(g, nul + 1), cls,
                                                    mode_n == 5 && memcmp(p, "40000", 5) == 0
                                                            ? OBJ_TREE
                                                            : OBJ_BLOB);
                                p = nul + 21;
                        }
                }
        }
        return 0;
}

/* Is ref (resolved through symbolic refs) a root, and of which class? CLS_NONE: none. */
static uint8_t gitobj_ref_class(const G *g, const Ref *ref, const Ref **ret) {
        const char *id;

        for (unsigned i = 0; ref && ref->target; i++) {
                if (i >= DC_GITOBJ_MAX_SYMREF)
                        return CLS_NONE;
                ref = gitobj_ref_find(g, ref->target);
        }
        if (!ref)
                return CLS_NONE; /* HEAD of an unborn branch (Deep Code's master) */
        *ret = ref;
        if (!strneq(ref->name, "refs/heads/", 11) || !dc_git_is_session_id(ref->name + 11))
                return CLS_LIVE; /* keep-refs, and refs that compaction never changes */
        id = ref->name + 11;
        return hashmap_get(&g->kept, hashmap_hash_string(id), hashmap_eq_string, id) ? CLS_LIVE
                                                                                     : CLS_ORPHAN;
}

static int gitobj_roots(G *g, uint8_t cls, const Ref *head) {
        for (size_t i = 0; i <= g->n_refs; i++) {
                const Ref *ref = i < g->n_refs ? &g->refs[i] : head, *to = NULL;

                if (ref && gitobj_ref_class(g, ref, &to) == cls)
                        gitobj_push(g, gitobj_find(g, to->oid), cls, OBJ_NONE);
        }
        if (cls == CLS_LIVE)
                for (size_t i = 0; i < g->in->n_named; i++)
                        if (g->in->named[i] && strlen(g->in->named[i]) == 40)
                                gitobj_push_hex(g, g->in->named[i], cls, OBJ_NONE);
        return gitobj_walk(g, cls);
}

static int gitobj_run(G *g, DcGitobjCounts *ret) {
        _cleanup_close_ int hfd = fs_open_noatime(g->fd, "HEAD", O_RDONLY);
        _cleanup_free_ char *v = NULL;
        Ref head = { .name = (char *)"HEAD" };
        const char *target;
        size_t target_n = 0;
        bool have_head = false;
        size_t vn;
        Obj *o;
        int r;

        if (hashmap_reserve(&g->kept, g->in->n_kept) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < g->in->n_kept; i++) {
                const char *id = g->in->kept_ids[i];
                HashSlot *slot;

                if (!id)
                        continue;
                slot = hashmap_slot(&g->kept, hashmap_hash_string(id), hashmap_eq_string, id);
                if (!slot->entry)
                        hashmap_fill(&g->kept, slot, hashmap_hash_string(id), (void *)id);
        }
        g->objfd = fs_open_noatime(g->fd, "objects", O_RDONLY | O_DIRECTORY);
        if (g->objfd < 0)
                return g->objfd == -ENOMEM ? -ENOMEM : gitobj_bad(g, "objects/ cannot be opened");
        r = gitobj_loose(g);
        if (r >= 0)
                r = gitobj_packs(g);
        if (r >= 0)
                r = gitobj_index(g);
        if (r >= 0)
                r = gitobj_refs(g);
        if (r < 0)
                return r;
        if (hfd >= 0) {
                r = fs_read_fd(hfd, DC_GITOBJ_MAX_REF, &v, &vn);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return gitobj_bad(g, "HEAD cannot be read");
                if (gitobj_ref_value(v, vn, head.oid, &target, &target_n) < 0)
                        return gitobj_bad(g, "HEAD is neither a hash nor symbolic");
                if (target) {
                        v[5 + target_n] = 0;
                        head.target = v + 5;
                }
                have_head = true;
        }
        g->stack = malloc(MAX(g->n_objs, (size_t)1) * sizeof(Item));
        if (!g->stack)
                return -ENOMEM;
        r = gitobj_roots(g, CLS_LIVE, have_head ? &head : NULL);
        if (r >= 0)
                r = gitobj_roots(g, CLS_ORPHAN, have_head ? &head : NULL);
        if (r < 0)
                return r;
        HASHMAP_FOREACH (o, &g->map) {
                DcGitobjClass c = o->cls == CLS_LIVE     ? DC_GITOBJ_LIVE
                                  : o->cls == CLS_ORPHAN ? DC_GITOBJ_ORPHAN
                                                         : DC_GITOBJ_UNREACHABLE;
                ret->objects[c]++;
                ret->alloc[c] += o->alloc;
        }
        ret->alloc[DC_GITOBJ_LIVE] += g->overhead;
        return 0;
}

int dc_gitobj_count(int git_fd, const DcGitInput *in, DcGitobjCounts *ret) {
        G g = { .fd = git_fd, .objfd = -EBADF, .in = in };
        int r;

        *ret = (DcGitobjCounts){};
        r = gitobj_run(&g, ret);
        for (size_t i = 0; i < g.n_packs; i++) {
                macro_safe_close(g.packs[i].fd);
                free(g.packs[i].offsets);
        }
        for (size_t i = 0; i < g.n_refs; i++) {
                free(g.refs[i].name);
                free(g.refs[i].target);
        }
        macro_safe_close(g.objfd);
        free(g.packs);
        free(g.refs);
        free(g.objs);
        free(g.stack);
        hashmap_done(&g.map, NULL);
        hashmap_done(&g.kept, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret = (DcGitobjCounts){ .why = g.why ?: "the repository cannot be read" };
                return 0;
        }
        ret->known = true;
        return 0;
}
