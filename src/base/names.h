/* A fixed-capacity table from names to indices, for build-time lookups by name (a graph's
 * nodes and clips, a JSON document's nodes): open addressing on the names' 32-bit hashes
 * (cb_name_hash), linear probing, at most half full, so a lookup costs a hash and, almost
 * always, one string comparison, where a scan costs one per entry. The table keeps indices and
 * hashes only; the caller owns the names and says how to read one. Nothing per frame uses it. */
#ifndef CROWDBLEND_BASE_NAMES_H
#define CROWDBLEND_BASE_NAMES_H

#include "base/base_impl.h"

/* The name of entry `index`, from the caller's own storage. */
typedef const char *(*cb_name_of_fn)(const void *ctx, uint32_t index);

typedef struct cb_name_table {
    uint32_t *slots;   /* entry index + 1; 0 is an empty slot */
    uint32_t *hashes;  /* the hash of each slot's name */
    uint32_t mask;     /* slot count - 1 (a power of two) */
    uint32_t count;    /* entries */
    uint32_t capacity; /* most entries */
    cb_name_of_fn name_of;
    const void *ctx;
} cb_name_table;

/* Room for `capacity` names read through name_of(ctx, index). CB_ERR_OUT_OF_MEMORY. */
cb_result cb_name_table_init(cb_name_table *t, const cb_allocator *a, uint32_t capacity,
                             cb_name_of_fn name_of, const void *ctx);

/* Frees the slots; a zeroed table does nothing. */
void cb_name_table_finish(cb_name_table *t, const cb_allocator *a);

/* The index of `name`, or UINT32_MAX when absent. *compares (when not NULL) is increased by the
 * string comparisons made, so tests can tell a hashed lookup from a scan. */
uint32_t cb_name_table_find(const cb_name_table *t, const char *name, uint32_t *compares);

/* Adds entry `index` under its name (name_of(ctx, index)), which must not be in the table yet;
 * false when the table is full. */
bool cb_name_table_add(cb_name_table *t, uint32_t index);

#endif
