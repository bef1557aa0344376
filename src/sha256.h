/* sha256.h: SHA-256 in lower-case hex, through OpenSSL EVP. The only user of <openssl/evp.h>. */
#pragma once

#include <stddef.h>

#define SHA256_HEX_LEN 64
/* Writes 64 hex digits and a NUL into ret. Returns 0 or -EIO. */
int sha256_hex(const void *data, size_t len, char ret[SHA256_HEX_LEN + 1]);
