#include "base/names.h"

#include <string.h>

uint32_t cb_name_hash(const char *name)
{
    return cb_fnv1a32(CB_FNV1A32_BASIS, name != NULL ? name : "", name != NULL ? strlen(name) : 0);
}

cb_result cb_name_table_init(cb_name_table *t, const cb_allocator *a, uint32_t capacity,
                             cb_name_of_fn name_of, const void *ctx)
{
    uint32_t slots = 4;
    while (slots < 2 * (uint64_t)capacity) {
        slots *= 2;
    }
    *t = (cb_name_table){.mask = slots - 1, .capacity = capacity, .name_of = name_of, .ctx = ctx};
    t->slots = cb_alloc_zeroed(a, 2 * (size_t)slots * sizeof(uint32_t), 16);
    if (t->slots == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    t->hashes = t->slots + slots;
    return CB_OK;
}

void cb_name_table_finish(cb_name_table *t, const cb_allocator *a)
{
    if (t->slots != NULL) {
        cb_free(a, t->slots, 2 * ((size_t)t->mask + 1) * sizeof(uint32_t));
    }
    *t = (cb_name_table){0};
}

uint32_t cb_name_table_find(const cb_name_table *t, const char *name, uint32_t *compares)
{
    if (t->slots == NULL || name == NULL) {
        return UINT32_MAX;
    }
    uint32_t h = cb_name_hash(name);
    for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
        uint32_t e = t->slots[i];
        if (e == 0) {
            return UINT32_MAX;
        }
        if (t->hashes[i] == h) {
            if (compares != NULL) {
                ++*compares;
            }
            if (strcmp(t->name_of(t->ctx, e - 1), name) == 0) {
                return e - 1;
            }
        }
    }
}

bool cb_name_table_add(cb_name_table *t, uint32_t index)
{
    if (t->count >= t->capacity) {
        return false;
    }
    uint32_t h = cb_name_hash(t->name_of(t->ctx, index));
    uint32_t i = h & t->mask;
    while (t->slots[i] != 0) {
        i = (i + 1) & t->mask;
    }
    t->slots[i] = index + 1;
    t->hashes[i] = h;
    t->count++;
    return true;
}
