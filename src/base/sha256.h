/* sha256.h: SHA-256 in lower-case hex, through OpenSSL EVP. The only user of <openssl/evp.h>. */
#pragma once

#include <stddef.h>

#define SHA256_HEX_LEN 64
/* Writes 64 hex digits and a NUL into ret. Returns 0 or -EIO. */
int sha256_hex(const void *data, size_t len, char ret[SHA256_HEX_LEN + 1]);

/* The same over a stream: new, update with each piece, then final (writes the hex and frees h;
 * sha256_free() only for a stream given up before final). */
typedef struct Sha256 Sha256;
Sha256 *sha256_new(void);
int sha256_update(Sha256 *h, const void *data, size_t len);
int sha256_final(Sha256 *h, char ret[SHA256_HEX_LEN + 1]);
void sha256_free(Sha256 *h);
