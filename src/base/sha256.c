/* sha256.c: SHA-256 in lower-case hex through OpenSSL's EVP interface. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <openssl/evp.h>

#include "sha256.h"

/* The digest md (SHA256_HEX_LEN / 2 bytes) as 64 lower-case hex digits plus a NUL. */
static void sha256_to_hex(const unsigned char *md, char ret[SHA256_HEX_LEN + 1]) {
        static const char hex[] = "0123456789abcdef";

        for (unsigned i = 0; i < SHA256_HEX_LEN / 2; i++) {
                ret[2 * i] = hex[md[i] >> 4];
                ret[2 * i + 1] = hex[md[i] & 0xf];
        }
        ret[SHA256_HEX_LEN] = '\0';
}

/* Hash len bytes of data and write 64 lower-case hex digits plus a NUL into ret. */
int sha256_hex(const void *data, size_t len, char ret[SHA256_HEX_LEN + 1]) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned md_len = 0;

        if (!data && len > 0)
                return -EINVAL;
        if (EVP_Digest(data ? data : "", len, md, &md_len, EVP_sha256(), NULL) != 1 ||
            md_len != SHA256_HEX_LEN / 2)
                return -EIO;
        sha256_to_hex(md, ret);
        return 0;
}

struct Sha256 {
        EVP_MD_CTX *ctx;
};

Sha256 *sha256_new(void) {
        Sha256 *h = calloc(1, sizeof(Sha256));

        if (!h)
                return NULL;
        h->ctx = EVP_MD_CTX_new();
        if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
                sha256_free(h);
                return NULL;
        }
        return h;
}

int sha256_update(Sha256 *h, const void *data, size_t len) {
        return len == 0 || EVP_DigestUpdate(h->ctx, data, len) == 1 ? 0 : -EIO;
}

int sha256_final(Sha256 *h, char ret[SHA256_HEX_LEN + 1]) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned md_len = 0;

        int r = EVP_DigestFinal_ex(h->ctx, md, &md_len) == 1 && md_len == SHA256_HEX_LEN / 2;

        sha256_free(h);
        if (!r)
                return -EIO;
        sha256_to_hex(md, ret);
        return 0;
}

void sha256_free(Sha256 *h) {
        if (!h)
                return;
        EVP_MD_CTX_free(h->ctx);
        free(h);
}
