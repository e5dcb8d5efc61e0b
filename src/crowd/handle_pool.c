#include "crowd/handle_pool.h"

#include "base/base_impl.h"

size_t cb_handle_pool_bytes(uint32_t capacity)
{
    return 3 * (size_t)capacity * sizeof(uint32_t);
}

void cb_handle_pool_init(cb_handle_pool *pool, uint32_t capacity, void *memory)
{
    uint32_t *m = memory;
    CB_ASSERT(capacity <= CB_HANDLE_MAX_CAPACITY);
    pool->capacity = capacity;
    pool->count = 0;
    pool->retired = 0;
    pool->generation = m;
    pool->dense_of_slot = m + capacity;
    pool->slot_of_dense = m + 2 * (size_t)capacity;
    /* Nothing is written: slots are taken in order the first time (fresh), so memory is
     * touched as characters arrive, not at create. */
    pool->free_head = capacity;
    pool->fresh = 0;
}

cb_result cb_handle_pool_add(cb_handle_pool *pool, uint64_t *id_out)
{
    uint32_t slot;
    if (pool->free_head < pool->capacity) {
        slot = pool->free_head;
        pool->free_head = pool->dense_of_slot[slot];
    } else if (pool->fresh < pool->capacity) {
        slot = pool->fresh++;
        pool->generation[slot] = 1;
    } else {
        return CB_ERR_CAPACITY;
    }
    uint32_t dense = pool->count++;
    pool->dense_of_slot[slot] = dense;
    pool->slot_of_dense[dense] = slot;
    *id_out = cb_handle_make(slot, pool->generation[slot]);
    return CB_OK;
}

cb_result cb_handle_pool_lookup(const cb_handle_pool *pool, uint64_t id, uint32_t *dense_out)
{
    uint32_t slot = cb_handle_slot(id);
    uint32_t generation = cb_handle_generation(id);
    if (slot >= pool->fresh || generation == 0 || pool->generation[slot] != generation) {
        return CB_ERR_STALE_HANDLE;
    }
    uint32_t dense = pool->dense_of_slot[slot];
    /* A free slot keeps its generation until reused, so also check that it is in use. */
    if (dense >= pool->count || pool->slot_of_dense[dense] != slot) {
        return CB_ERR_STALE_HANDLE;
    }
    *dense_out = dense;
    return CB_OK;
}

cb_result cb_handle_pool_remove(cb_handle_pool *pool, uint64_t id, uint32_t *moved_from,
                                uint32_t *moved_to)
{
    uint32_t dense;
    cb_result r = cb_handle_pool_lookup(pool, id, &dense);
    if (r != CB_OK) {
        return r;
    }
    uint32_t slot = cb_handle_slot(id);
    uint32_t last = --pool->count;
    uint32_t last_slot = pool->slot_of_dense[last];
    pool->slot_of_dense[dense] = last_slot;
    pool->dense_of_slot[last_slot] = dense;
    *moved_from = last;
    *moved_to = dense;
    /* A new generation, then free; a spent generation would wrap to an old one: retire the slot
     * instead (its generation stays, so its last id is refused as a free slot's). */
    if (pool->generation[slot] == CB_HANDLE_GENERATION_MAX) {
        pool->dense_of_slot[slot] = pool->capacity;
        pool->retired++;
        return CB_OK;
    }
    pool->generation[slot]++;
    pool->dense_of_slot[slot] = pool->free_head;
    pool->free_head = slot;
    return CB_OK;
}

uint64_t cb_handle_pool_id_at(const cb_handle_pool *pool, uint32_t dense)
{
    uint32_t slot = pool->slot_of_dense[dense];
    return cb_handle_make(slot, pool->generation[slot]);
}
