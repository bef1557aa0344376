/* hashmap.h: the one hash (FNV-1a, 64 bits) and the one open-addressed table of qgc.
 *
 * The table holds non-NULL entries (pointers, or small integers as pointers) next to each entry's
 * 64-bit hash; the caller owns the entries and says what equal means (eq), so one table serves
 * string sets, index maps over the caller's arrays and sets of indices. Linear probing, a power
 * of two of slots, at most half of them used; there is no removal (nothing in qgc removes).
 *
 * Every hash value stays in memory: no file name, output or on-disk format depends on the slot an
 * entry lands in. The one persisted FNV-1a value (the pending marker's name, recover.c) is the
 * same hashmap_hash_string() with the same offset basis, so old markers keep their names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_OFFSET UINT64_C(14695981039346656037)
#define HASH_FNV1A_PRIME UINT64_C(1099511628211)

/* FNV-1a of n bytes, of a C string, and of a C string with ASCII letters lowered (for keys
 * that compare ignoring ASCII case). */
uint64_t hashmap_hash_bytes(const void *p, size_t n);
uint64_t hashmap_hash_string(const char *s);
uint64_t hashmap_hash_string_ascii_lower(const char *s);

/* The slot index bits of a hash: FNV-1a's low bits depend only on the inputs' low bits, so the
 * high half is folded in. */
static inline size_t hashmap_fold(uint64_t h) {
        return (size_t)(h ^ (h >> 32));
}

typedef struct HashSlot {
        uint64_t hash;
        void *entry; /* NULL: empty */
} HashSlot;

typedef struct Hashmap {
        HashSlot *slots;
        size_t n, n_slots; /* entries; slots (0 or a power of two) */
} Hashmap;

/* Does entry (in the table) match key (what the caller looks up)? */
typedef bool (*hashmap_eq_fn)(const void *entry, const void *key);

/* Room for n more entries at a load of at most one half. 0 or -ENOMEM. */
int hashmap_reserve(Hashmap *h, size_t n);
/* The entry equal to key, or NULL. */
void *hashmap_get(const Hashmap *h, uint64_t hash, hashmap_eq_fn eq, const void *key);
/* The slot of key: its entry's, or the empty one where it would go (then needs room reserved:
 * fill it with hashmap_fill()). */
HashSlot *hashmap_slot(Hashmap *h, uint64_t hash, hashmap_eq_fn eq, const void *key);
void hashmap_fill(Hashmap *h, HashSlot *slot, uint64_t hash, void *entry);
/* Add entry without looking for an equal one (the caller knows it is new). 0 or -ENOMEM. */
int hashmap_put(Hashmap *h, uint64_t hash, void *entry);
/* Free the slots, and every entry with free_entry (may be NULL). */
void hashmap_done(Hashmap *h, void (*free_entry)(void *));

/* For _cleanup_(hashmap_donep): the slots only (entries the table does not own). */
static inline void hashmap_donep(Hashmap *h) {
        hashmap_done(h, NULL);
}

/* eq for entries that are C strings, looked up by a C string. */
bool hashmap_eq_string(const void *entry, const void *key);

/* Each entry (in slot order, which is not an order anyone may rely on). */
#define HASHMAP_FOREACH(e, h)                                                                      \
        for (size_t _i_ = 0; _i_ < (h)->n_slots; _i_++)                                            \
                if (((e) = (h)->slots[_i_].entry))
