/* Character handles: generation-checked ids over dense, swap-removed storage.
 *
 * A handle's id packs a slot (the low CB_HANDLE_SLOT_BITS) and that slot's generation (the high
 * bits, never 0, so id 0 is never valid). Slots are stable while the character lives; its data
 * sits at a dense index that moves when another character is removed (the last one moves into
 * the hole, as ECS archetype tables do), so every per-frame loop runs over [0, count) with no
 * gaps. Removing bumps the slot's generation: a stale handle names the right slot but the wrong
 * generation, and is refused (sokol_gfx's resource ids work the same way). */
#ifndef CROWDBLEND_CROWD_HANDLE_POOL_H
#define CROWDBLEND_CROWD_HANDLE_POOL_H

#include <stdint.h>

#include "crowdblend/base.h"

#define CB_HANDLE_SLOT_BITS 22u
#define CB_HANDLE_MAX_CAPACITY ((1u << CB_HANDLE_SLOT_BITS) - 1u)

typedef struct cb_handle_pool {
    uint32_t capacity;
    uint32_t count;         /* live handles = dense entries in use */
    uint32_t free_head;     /* first free slot, or capacity when none */
    uint32_t *generation;   /* [capacity], 1..(2^(32-SLOT_BITS) - 1) */
    uint32_t *dense_of_slot;/* [capacity]; for a free slot: the next free slot */
    uint32_t *slot_of_dense;/* [capacity] */
} cb_handle_pool;

/* Bytes of the three arrays for a capacity; the caller allocates one block of this size
 * (aligned to 4) and passes it to init. */
size_t cb_handle_pool_bytes(uint32_t capacity);
void cb_handle_pool_init(cb_handle_pool *pool, uint32_t capacity, void *memory);

/* A new handle at dense index pool->count - 1. CB_ERR_CAPACITY when full. */
cb_result cb_handle_pool_add(cb_handle_pool *pool, uint32_t *id_out);

/* The dense index of a live id, or CB_ERR_STALE_HANDLE (removed, or never issued). */
cb_result cb_handle_pool_lookup(const cb_handle_pool *pool, uint32_t id, uint32_t *dense_out);

/* Removes a live id. *moved_from receives the dense index whose data must be moved into
 * *moved_to (moved_from == moved_to when the removed one was last: nothing to move). */
cb_result cb_handle_pool_remove(cb_handle_pool *pool, uint32_t id, uint32_t *moved_from,
                                uint32_t *moved_to);

/* The id living at a dense index (< count). */
uint32_t cb_handle_pool_id_at(const cb_handle_pool *pool, uint32_t dense);

#endif
