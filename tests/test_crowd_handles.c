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
    uint64_t model[CAP];
    uint32_t count = 0;
    uint64_t *dead = malloc(STEPS * sizeof *dead);
    size_t dead_count = 0;
    for (int step = 0; step < STEPS; ++step) {
        bool add = count == 0 || (count < CAP && cb_prng_below(&r, 100) < 55);
        if (add) {
            uint64_t id = 0;
            assert_int_equal(cb_handle_pool_add(&pool, &id), CB_OK);
            CB_CHECK(id != 0 && id < (1ull << 53), "id %llx issued", (unsigned long long)id);
            model[count++] = id;
        } else {
            uint32_t d = cb_prng_below(&r, count);
            uint32_t from = 0, to = 0;
            assert_int_equal(cb_handle_pool_remove(&pool, model[d], &from, &to), CB_OK);
            CB_CHECK(to == d && from == count - 1, "remove moved %u -> %u, expected %u -> %u", from,
                     to, count - 1, d);
            dead[dead_count++] = model[d];
            model[d] = model[count - 1];
            count--;
        }
        CB_CHECK(pool.count == count, "count %u vs model %u", pool.count, count);
        /* Spot checks every step, a full check now and then. */
        uint32_t probe = count ? cb_prng_below(&r, count) : 0;
        for (uint32_t i = (step % 1000 == 0) ? 0 : probe;
             i < count && (step % 1000 == 0 || i == probe); ++i) {
            uint32_t dense = 99999;
            assert_int_equal(cb_handle_pool_lookup(&pool, model[i], &dense), CB_OK);
            CB_CHECK(dense == i, "id %llx at dense %u, model says %u", (unsigned long long)model[i],
                     dense, i);
            CB_CHECK(cb_handle_pool_id_at(&pool, i) == model[i], "id_at(%u)", i);
        }
        if (dead_count > 0) {
            uint64_t old = dead[cb_prng_below(&r, (uint32_t)dead_count)];
            bool alive = false;
            for (uint32_t i = 0; i < count; ++i) {
                alive = alive || model[i] == old;
            }
            uint32_t dense;
            /* A removed id stays refused (it cannot be live again: generations never wrap). */
            CB_CHECK(!alive, "id %llx issued twice", (unsigned long long)old);
            if (!alive) {
                CB_CHECK(cb_handle_pool_lookup(&pool, old, &dense) == CB_ERR_STALE_HANDLE,
                         "stale id %llx accepted", (unsigned long long)old);
                uint32_t a, b;
                CB_CHECK(cb_handle_pool_remove(&pool, old, &a, &b) == CB_ERR_STALE_HANDLE,
                         "stale id %llx removed", (unsigned long long)old);
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
    uint32_t dense, a, b;
    uint64_t id, again;
    assert_int_equal(cb_handle_pool_lookup(&pool, 0, &dense), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_lookup(&pool, UINT64_MAX, &dense), CB_ERR_STALE_HANDLE);
    /* A live id with a bit above the 53 an id uses is not that id. */
    uint64_t live;
    assert_int_equal(cb_handle_pool_add(&pool, &live), CB_OK);
    assert_int_equal(cb_handle_pool_lookup(&pool, live | 1ull << 60, &dense), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_remove(&pool, live, &a, &b), CB_OK);
    /* A slot that was never handed out, with the right generation, is still refused. */
    assert_int_equal(cb_handle_pool_lookup(&pool, cb_handle_make(2, 1), &dense),
                     CB_ERR_STALE_HANDLE);
    for (int i = 0; i < CAP; ++i) {
        assert_int_equal(cb_handle_pool_add(&pool, &id), CB_OK);
    }
    assert_int_equal(cb_handle_pool_add(&pool, &id), CB_ERR_CAPACITY);
    assert_int_equal(pool.count, CAP);
    assert_int_equal(cb_handle_pool_remove(&pool, id, &a, &b), CB_OK);
    assert_int_equal(cb_handle_pool_remove(&pool, id, &a, &b), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_add(&pool, &again), CB_OK);
    assert_int_not_equal(again, id); /* same slot, new generation */
    free(mem);
}

/* The trap of issue 11: the last freed slot is reused first, so one slot cycles; with a 10-bit
 * generation the first id came back at cycle 1,023. Every earlier id of the slot stays refused
 * through 5,000 cycles (past 1,023 and 2,046, where the old generation wrapped). */
static void handles_stay_refused_past_the_old_wrap(void **state)
{
    (void)state;
    enum { CAP = 2, CYCLES = 5000 };
    cb_handle_pool pool;
    void *mem = malloc(cb_handle_pool_bytes(CAP));
    cb_handle_pool_init(&pool, CAP, mem);
    uint64_t *ids = malloc(CYCLES * sizeof *ids);
    uint32_t dense, a, b;
    for (uint32_t cycle = 0; cycle < CYCLES; ++cycle) {
        assert_int_equal(cb_handle_pool_add(&pool, &ids[cycle]), CB_OK);
        CB_CHECK(cb_handle_slot(ids[cycle]) == 0, "cycle %u: the freed slot is reused", cycle);
        /* Every earlier id at the cycles around the old wraps, the first one and the last one
         * at every cycle. */
        bool all = cycle % 1023 <= 1;
        for (uint32_t old = 0; old < cycle; old = all || old + 1 == cycle ? old + 1 : cycle - 1) {
            CB_CHECK(ids[old] != ids[cycle], "cycle %u reissued the id of cycle %u", cycle, old);
            CB_CHECK(cb_handle_pool_lookup(&pool, ids[old], &dense) == CB_ERR_STALE_HANDLE,
                     "cycle %u: the id of cycle %u accepted", cycle, old);
        }
        assert_int_equal(cb_handle_pool_remove(&pool, ids[cycle], &a, &b), CB_OK);
    }
    free(ids);
    free(mem);
}

/* A slot whose generation is spent retires instead of wrapping: its ids stay refused and the
 * pool holds one fewer. The generation is set near its end directly (2 billion cycles would
 * take minutes). */
static void handles_retire_a_spent_slot(void **state)
{
    (void)state;
    enum { CAP = 2 };
    cb_handle_pool pool;
    void *mem = malloc(cb_handle_pool_bytes(CAP));
    cb_handle_pool_init(&pool, CAP, mem);
    uint64_t first, before_last, last, other, extra;
    uint32_t dense, a, b;
    assert_int_equal(cb_handle_pool_add(&pool, &first), CB_OK);
    assert_int_equal(cb_handle_pool_remove(&pool, first, &a, &b), CB_OK);
    pool.generation[0] = CB_HANDLE_GENERATION_MAX - 1; /* slot 0, free, as after 2^31 uses */
    assert_int_equal(cb_handle_pool_add(&pool, &before_last), CB_OK);
    assert_int_equal(cb_handle_slot(before_last), 0);
    assert_int_equal(cb_handle_pool_remove(&pool, before_last, &a, &b), CB_OK);
    assert_int_equal(cb_handle_pool_add(&pool, &last), CB_OK);
    assert_int_equal(cb_handle_generation(last), CB_HANDLE_GENERATION_MAX);
    assert_int_equal(cb_handle_pool_remove(&pool, last, &a, &b), CB_OK);
    assert_int_equal(pool.retired, 1);
    assert_int_equal(cb_handle_pool_add(&pool, &other), CB_OK);
    assert_int_equal(cb_handle_slot(other), 1); /* slot 0 is not reused */
    assert_int_equal(cb_handle_pool_add(&pool, &extra), CB_ERR_CAPACITY);
    assert_int_equal(cb_handle_pool_lookup(&pool, last, &dense), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_lookup(&pool, before_last, &dense), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_lookup(&pool, cb_handle_make(0, 1), &dense),
                     CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_handle_pool_lookup(&pool, other, &dense), CB_OK);
    free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handles_match_a_swap_remove_model),
        cmocka_unit_test(handles_refuse_garbage_and_overflow),
        cmocka_unit_test(handles_stay_refused_past_the_old_wrap),
        cmocka_unit_test(handles_retire_a_spent_slot),
    };
    return CB_RUN_TESTS(tests);
}
