/* Character handles: generation-checked ids over dense, swap-removed storage.
 *
 * A handle's 64-bit id packs a slot (the low CB_HANDLE_SLOT_BITS = 22 bits) and that slot's
 * generation (the next 31 bits, never 0, so id 0 is never valid): 53 bits in all, so an id
 * survives a JSON number or a JavaScript double exactly (the server sends ids to browsers). Slots
 * are stable while the character lives; its data sits at a dense index that moves when another
 * character is removed (the last one moves into the hole, as ECS archetype tables do), so every
 * per-frame loop runs over [0, count) with no gaps. Removing bumps the slot's generation: a stale
 * handle names the right slot but the wrong generation, and is refused (sokol_gfx's resource ids
 * work the same way). A slot whose generation reaches CB_HANDLE_GENERATION_MAX is retired when that
 * character is removed (never reused), so no generation ever comes back: a removed id is refused
 * forever, at the cost of one slot of capacity per 2,147,483,647 characters that used it. */
#ifndef CROWDBLEND_CROWD_HANDLE_POOL_H
#define CROWDBLEND_CROWD_HANDLE_POOL_H

#include <stdint.h>

#include "crowdblend/base.h"

#define CB_HANDLE_SLOT_BITS 22u
#define CB_HANDLE_MAX_CAPACITY ((1u << CB_HANDLE_SLOT_BITS) - 1u)
#define CB_HANDLE_GENERATION_BITS 31u
#define CB_HANDLE_GENERATION_MAX ((1u << CB_HANDLE_GENERATION_BITS) - 1u)

typedef struct cb_handle_pool {
    uint32_t capacity;
    uint32_t count;          /* live handles = dense entries in use */
    uint32_t free_head;      /* first freed slot, or capacity when none */
    uint32_t fresh;          /* slots ever issued; [fresh, capacity) are not touched yet */
    uint32_t retired;        /* slots whose generation is spent */
    uint32_t *generation;    /* [capacity], 1..CB_HANDLE_GENERATION_MAX */
    uint32_t *dense_of_slot; /* [capacity]; for a free slot: the next free slot */
    uint32_t *slot_of_dense; /* [capacity] */
} cb_handle_pool;

/* Bytes of the three arrays for a capacity; the caller allocates one block of this size
 * (aligned to 4) and passes it to init. */
size_t cb_handle_pool_bytes(uint32_t capacity);
void cb_handle_pool_init(cb_handle_pool *pool, uint32_t capacity, void *memory);

/* A new handle at dense index pool->count - 1. CB_ERR_CAPACITY when full. */
cb_result cb_handle_pool_add(cb_handle_pool *pool, uint64_t *id_out);

/* The dense index of a live id, or CB_ERR_STALE_HANDLE (removed, or never issued). */
cb_result cb_handle_pool_lookup(const cb_handle_pool *pool, uint64_t id, uint32_t *dense_out);

/* Removes a live id. *moved_from receives the dense index whose data must be moved into
 * *moved_to (moved_from == moved_to when the removed one was last: nothing to move). */
cb_result cb_handle_pool_remove(cb_handle_pool *pool, uint64_t id, uint32_t *moved_from,
                                uint32_t *moved_to);

/* The id living at a dense index (< count). */
uint64_t cb_handle_pool_id_at(const cb_handle_pool *pool, uint32_t dense);

/* The slot and generation of an id. */
static inline uint32_t cb_handle_slot(uint64_t id)
{
    return (uint32_t)(id & CB_HANDLE_MAX_CAPACITY);
}

/* 0 (never valid) for an id with bits above the 53 an id uses. */
static inline uint32_t cb_handle_generation(uint64_t id)
{
    uint64_t g = id >> CB_HANDLE_SLOT_BITS;
    return g <= CB_HANDLE_GENERATION_MAX ? (uint32_t)g : 0u;
}

static inline uint64_t cb_handle_make(uint32_t slot, uint32_t generation)
{
    return (uint64_t)generation << CB_HANDLE_SLOT_BITS | slot;
}

#endif
