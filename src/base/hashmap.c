/* hashmap.c: FNV-1a and the open-addressed table (hashmap.h). */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

/* FNV-1a continued: h (HASH_FNV1A_OFFSET to start, or a previous result) over n more bytes, so
 * data read in pieces hashes as one. */
static uint64_t hash_bytes_more(uint64_t h, const void *p, size_t n) {
        const unsigned char *s = p;

        for (size_t i = 0; i < n; i++)
                h = (h ^ s[i]) * HASH_FNV1A_PRIME;
        return h;
}

uint64_t hashmap_hash_bytes(const void *p, size_t n) {
        return hash_bytes_more(HASH_FNV1A_OFFSET, p, n);
}

uint64_t hashmap_hash_string(const char *s) {
        uint64_t h = HASH_FNV1A_OFFSET;

        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * HASH_FNV1A_PRIME;
        return h;
}

uint64_t hashmap_hash_string_ascii_lower(const char *s) {
        uint64_t h = HASH_FNV1A_OFFSET;

        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c >= 'A' && c <= 'Z')
                        c = (unsigned char)(c - 'A' + 'a');
                h = (h ^ c) * HASH_FNV1A_PRIME;
        }
        return h;
}

/* The first slot at or after hash's home that holds an equal entry or is empty. */
static HashSlot *hashmap_probe(const Hashmap *h, uint64_t hash, hashmap_eq_fn eq, const void *key) {
        size_t mask = h->n_slots - 1;

        for (size_t i = hashmap_fold(hash) & mask;; i = (i + 1) & mask) {
                HashSlot *s = &h->slots[i];
                if (!s->entry || (eq && s->hash == hash && eq(s->entry, key)))
                        return s;
        }
}

int hashmap_reserve(Hashmap *h, size_t n) {
        size_t n_slots = h->n_slots ? h->n_slots : 16;
        HashSlot *old = h->slots, *slots;

        if (n > SIZE_MAX / 4 - h->n)
                return -ENOMEM;
        while ((h->n + n) * 2 > n_slots)
                n_slots *= 2;
        if (n_slots == h->n_slots)
                return 0;
        slots = calloc(n_slots, sizeof(HashSlot));
        if (!slots)
                return -ENOMEM;
        h->slots = slots;
        for (size_t i = 0; i < h->n_slots; i++)
                if (old[i].entry) {
                        size_t mask = n_slots - 1, j = hashmap_fold(old[i].hash) & mask;
                        while (slots[j].entry)
                                j = (j + 1) & mask;
                        slots[j] = old[i];
                }
        h->n_slots = n_slots;
        free(old);
        return 0;
}

void *hashmap_get(const Hashmap *h, uint64_t hash, hashmap_eq_fn eq, const void *key) {
        if (h->n == 0)
                return NULL;
        return hashmap_probe(h, hash, eq, key)->entry;
}

HashSlot *hashmap_slot(Hashmap *h, uint64_t hash, hashmap_eq_fn eq, const void *key) {
        return hashmap_probe(h, hash, eq, key);
}

void hashmap_fill(Hashmap *h, HashSlot *slot, uint64_t hash, void *entry) {
        slot->hash = hash;
        slot->entry = entry;
        h->n++;
}

int hashmap_put(Hashmap *h, uint64_t hash, void *entry) {
        int r = hashmap_reserve(h, 1);

        if (r < 0)
                return r;
        hashmap_fill(h, hashmap_probe(h, hash, NULL, NULL), hash, entry);
        return 0;
}

void hashmap_done(Hashmap *h, void (*free_entry)(void *)) {
        if (free_entry)
                for (size_t i = 0; i < h->n_slots; i++)
                        if (h->slots[i].entry)
                                free_entry(h->slots[i].entry);
        free(h->slots);
        *h = (Hashmap){};
}

bool hashmap_eq_string(const void *entry, const void *key) {
        return strcmp(entry, key) == 0;
}
