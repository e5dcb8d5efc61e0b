/* crowd handles: random add/remove sequences against a plain model of what a host would keep
 * (a dense array that it swap-removes in step with the crowd). */
#include <stdlib.h>
#include <string.h>

#include "crowd/handle_pool.h"
#include "test_util.h"

static void handles_match_a_swap_remove_model(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { CAP = 300, STEPS = 200000 };
    cb_handle_pool pool;
    void *mem = malloc(cb_handle_pool_bytes(CAP));
    cb_handle_pool_init(&pool, CAP, mem);
    /* The model: ids in dense order, and every id ever removed. */
    uint32_t model[CAP];
    uint32_t count = 0;
    uint32_t *dead = malloc(STEPS * sizeof *dead);
    size_t dead_count = 0;
    for (int step = 0; step < STEPS; ++step) {
        bool add = count == 0 || (count < CAP && cb_prng_below(&r, 100) < 55);
        if (add) {
            uint32_t id = 0;
            assert_int_equal(cb_handle_pool_add(&pool, &id), CB_OK);
            CB_CHECK(id != 0, "id 0 issued");
            model[count++] = id;
        } else {
            uint32_t d = cb_prng_below(&r, count);
            uint32_t from = 0, to = 0;
            assert_int_equal(cb_handle_pool_remove(&pool, model[d], &from, &to), CB_OK);
            CB_CHECK(to == d && from == count - 1, "remove moved %u -> %u, expected %u -> %u",
                     from, to, count - 1, d);
            dead[dead_count++] = model[d];
            model[d] = model[count - 1];
            count--;
        }
        CB_CHECK(pool.count == count, "count %u vs model %u", pool.count, count);
        /* Spot checks every step, a full check now and then. */
        uint32_t probe = count ? cb_prng_below(&r, count) : 0;
        for (uint32_t i = (step % 1000 == 0) ? 0 : probe; i < count && (step % 1000 == 0 || i == probe); ++i) {
            uint32_t dense = 99999;
            assert_int_equal(cb_handle_pool_lookup(&pool, model[i], &dense), CB_OK);
            CB_CHECK(dense == i, "id %u at dense %u, model says %u", model[i], dense, i);
            CB_CHECK(cb_handle_pool_id_at(&pool, i) == model[i], "id_at(%u)", i);
        }
        if (dead_count > 0) {
            uint32_t old = dead[cb_prng_below(&r, (uint32_t)dead_count)];
            bool alive = false;
            for (uint32_t i = 0; i < count; ++i) {
                alive = alive || model[i] == old;
            }
            uint32_t dense;
            /* A removed id stays refused unless its generation wrapped (after 1023 reuses of
             * that slot), which this model tracks by checking the live set. */
            if (!alive) {
                CB_CHECK(cb_handle_pool_lookup(&pool, old, &dense) == CB_ERR_STALE_HANDLE,
                         "stale id %u accepted", old);
                uint32_t a, b;
                CB_CHECK(cb_handle_pool_remove(&pool, old, &a, &b) == CB_ERR_STALE_HANDLE,
                         "stale id %u removed", old);
            }
        }
    }
    free(dead);
    free(mem);
}

static void handles_refuse_garbage_and_overflow(void **state)
{
    (void)state;
    enum { CAP = 4 };
    cb_handle_pool pool;
    void *mem = malloc(cb_handle_pool_bytes(CAP));
    cb_handle_pool_init(&pool, CAP, mem);
    uint32_t dense, id, a, b;
    assert_int_equal(cb_handle_pool_lookup(&pool, 0, &dense), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_lookup(&pool, 0xFFFFFFFFu, &dense), CB_ERR_STALE_HANDLE);
    /* A slot that was never handed out, with the right generation, is still refused. */
    assert_int_equal(cb_handle_pool_lookup(&pool, (1u << CB_HANDLE_SLOT_BITS) | 2u, &dense),
                     CB_ERR_STALE_HANDLE);
    for (int i = 0; i < CAP; ++i) {
        assert_int_equal(cb_handle_pool_add(&pool, &id), CB_OK);
    }
    assert_int_equal(cb_handle_pool_add(&pool, &id), CB_ERR_CAPACITY);
    assert_int_equal(pool.count, CAP);
    assert_int_equal(cb_handle_pool_remove(&pool, id, &a, &b), CB_OK);
    assert_int_equal(cb_handle_pool_remove(&pool, id, &a, &b), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_add(&pool, &a), CB_OK);
    assert_int_not_equal(a, id); /* same slot, new generation */
    free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handles_match_a_swap_remove_model),
        cmocka_unit_test(handles_refuse_garbage_and_overflow),
    };
    return CB_RUN_TESTS(tests);
}
