/* The lock-free handoff between the simulation and network threads (src/serve/board.h), with
 * real threads (and under ThreadSanitizer in the test script): a reader never sees a torn
 * publication, never goes back in time and always ends on the newest; the ring loses nothing,
 * duplicates nothing and keeps order. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "serve/board.h"
#include "test_util.h"

enum { SLOT = 4096, PUBLICATIONS = 20000 };

typedef struct shared {
    cb_board board;
    cb_ring ring;
    _Atomic bool done;
} shared;

/* Writer: publication n fills the slot with the byte n % 251 and a length that depends on n. */
/* pthreads, not C11 <threads.h>: glibc's thrd_create bypasses the sanitizers' interception of
 * pthread_create, and ThreadSanitizer then crashes in the new thread. */
static void *writer(void *arg)
{
    shared *s = arg;
    for (uint32_t n = 1; n <= PUBLICATIONS; ++n) {
        size_t len = 64 + (n * 37) % (SLOT - 64);
        memset(cb_board_back(&s->board), (int)(n % 251), len);
        cb_board_publish(&s->board, len, n);
        for (volatile int spin = 0; spin < 2000; ++spin) {
        } /* a frame's worth of other work, so that reads interleave with writes */
    }
    atomic_store(&s->done, true);
    return NULL;
}

static void serve_board_reader_sees_whole_newest_publications(void **state)
{
    (void)state;
    shared *s = calloc(1, sizeof *s);
    assert_true(cb_board_init(&s->board, SLOT, 16));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, s), 0);
    uint64_t last = 0, reads = 0, skipped = 0;
    for (;;) {
        bool finished = atomic_load(&s->done);
        size_t len;
        uint64_t seq, tag;
        const uint8_t *p = cb_board_read(&s->board, &len, &seq, &tag);
        if (seq != 0) {
            CB_CHECK(seq >= last, "went back from %llu to %llu", (unsigned long long)last,
                     (unsigned long long)seq);
            CB_CHECK(tag == seq && len == 64 + (seq * 37) % (SLOT - 64), "torn metadata");
            for (size_t k = 0; k < len; ++k) {
                if (p[k] != (uint8_t)(seq % 251)) {
                    CB_CHECK(false, "torn publication %llu at byte %zu", (unsigned long long)seq,
                             k);
                    break;
                }
            }
            skipped += seq > last + 1 ? seq - last - 1 : 0;
            last = seq;
            ++reads;
        }
        if (finished && last == PUBLICATIONS) {
            break;
        }
        CB_CHECK(!finished || seq == PUBLICATIONS, "the newest was not read after the end");
    }
    pthread_join(t, NULL);
    cb_test_note("%llu distinct reads, %llu publications skipped", (unsigned long long)reads,
                 (unsigned long long)skipped);
    cb_board_finish(&s->board);
    free(s);
}

typedef struct item {
    uint64_t n;
    uint8_t fill[56];
} item;

static void *producer(void *arg)
{
    shared *s = arg;
    for (uint64_t n = 1; n <= PUBLICATIONS; ++n) {
        item it = {.n = n};
        memset(it.fill, (int)(n & 0xff), sizeof it.fill);
        while (!cb_ring_push(&s->ring, &it)) {
            sched_yield(); /* full: the consumer is behind */
        }
    }
    return NULL;
}

static void serve_ring_delivers_everything_in_order(void **state)
{
    (void)state;
    shared *s = calloc(1, sizeof *s);
    assert_true(cb_ring_init(&s->ring, sizeof(item), 64));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, s), 0);
    uint64_t expect = 1;
    while (expect <= PUBLICATIONS) {
        item it;
        if (!cb_ring_pop(&s->ring, &it)) {
            sched_yield();
            continue;
        }
        CB_CHECK(it.n == expect, "got %llu, expected %llu", (unsigned long long)it.n,
                 (unsigned long long)expect);
        CB_CHECK(it.fill[0] == (uint8_t)(expect & 0xff) && it.fill[55] == it.fill[0], "torn");
        ++expect;
    }
    pthread_join(t, NULL);
    item it;
    assert_false(cb_ring_pop(&s->ring, &it));
    /* Bounded: 64 items fit, the 65th is refused. */
    for (int k = 0; k < 64; ++k) {
        assert_true(cb_ring_push(&s->ring, &it));
    }
    assert_false(cb_ring_push(&s->ring, &it));
    cb_ring_finish(&s->ring);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(serve_board_reader_sees_whole_newest_publications),
        cmocka_unit_test(serve_ring_delivers_everything_in_order),
    };
    return CB_RUN_TESTS(tests);
}
