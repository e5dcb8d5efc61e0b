/* jobs: the thread pool. Correctness under stress (every index exactly once, millions of tiny
 * jobs, many waits in a row), dependencies, create/destroy cycles, one-thread pools, argument
 * checks, and no allocation after create. The test command also runs this file under
 * ThreadSanitizer, which turns any data race in the pool into a failure. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/jobs.h"
#include "test_util.h"

/* Pools of 1, 2 and 4 threads: more threads than this machine's cores also exercises sleeping,
 * waking and preemption in the middle of a claim. */
static const uint32_t thread_counts[] = {1, 2, 4};
enum { THREAD_VARIANTS = sizeof thread_counts / sizeof thread_counts[0] };

static cb_jobs *make_pool(uint32_t threads)
{
    cb_jobs *jobs = NULL;
    cb_jobs_desc d = {.thread_count = threads, .spin_count = 200};
    cb_error err = {0};
    cb_result r = cb_jobs_create(&d, &jobs, &err);
    CB_CHECK(r == CB_OK, "cb_jobs_create(%u): %s", threads, err.message);
    return jobs;
}

/* ------------------------------------------------------------------------------------------ */

static void jobs_desc_defaults(void **state)
{
    (void)state;
    cb_jobs_desc d = cb_jobs_query_desc(NULL);
    assert_true(d.thread_count >= 1);
    assert_int_equal(d.queue_capacity, 4096);
    assert_int_equal(d.spin_count, 20000);
    assert_null(d.allocator.alloc_fn);
    cb_jobs_desc given = {.thread_count = 3, .queue_capacity = 100, .spin_count = 7};
    d = cb_jobs_query_desc(&given);
    assert_int_equal(d.thread_count, 3);
    assert_int_equal(d.queue_capacity, 100);
    assert_int_equal(d.spin_count, 7);
    /* The pool reports what it resolved. */
    cb_jobs *jobs = make_pool(0);
    assert_int_equal(cb_jobs_thread_count(jobs), cb_jobs_query_desc(NULL).thread_count);
    cb_jobs_destroy(jobs);
    cb_jobs_destroy(NULL);
}

static void *only_alloc(size_t size, size_t align, void *user)
{
    (void)user;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void jobs_create_rejects_bad_descs(void **state)
{
    (void)state;
    cb_jobs *jobs = (cb_jobs *)&jobs; /* must stay untouched on failure */
    cb_jobs *const before = jobs;
    cb_error err = {0};
    cb_jobs_desc canary = {._start_canary = 1};
    assert_int_equal(cb_jobs_create(&canary, &jobs, &err), CB_ERR_CANARY);
    cb_jobs_desc canary2 = {._end_canary = 5};
    assert_int_equal(cb_jobs_create(&canary2, &jobs, &err), CB_ERR_CANARY);
    cb_jobs_desc half = {.allocator = {.alloc_fn = only_alloc}};
    assert_int_equal(cb_jobs_create(&half, &jobs, &err), CB_ERR_ALLOCATOR);
    cb_jobs_desc many = {.thread_count = 5000};
    assert_int_equal(cb_jobs_create(&many, &jobs, &err), CB_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "thread_count"));
    cb_jobs_desc tiny = {.queue_capacity = 1};
    assert_int_equal(cb_jobs_create(&tiny, &jobs, &err), CB_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "queue_capacity"));
    cb_jobs_desc huge = {.queue_capacity = (1u << 24) + 1};
    assert_int_equal(cb_jobs_create(&huge, &jobs, &err), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_jobs_create(NULL, NULL, &err), CB_ERR_NULL_ARGUMENT);
    assert_ptr_equal(jobs, before);
}

/* ------------------------------------------------------------------------------------------ */
/* Parallel-for                                                                                */

typedef struct cover {
    atomic_int *hits;
    atomic_uint max_thread;
    size_t grain;
    atomic_int bad_chunks;
} cover;

static void cover_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    cover *c = user;
    /* Chunks are aligned to the grain and never longer than it. */
    if (begin % c->grain != 0 || end - begin > c->grain || end <= begin) {
        atomic_fetch_add(&c->bad_chunks, 1);
    }
    for (size_t i = begin; i < end; ++i) {
        atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
    }
    unsigned m = atomic_load(&c->max_thread);
    while (thread_index > m && !atomic_compare_exchange_weak(&c->max_thread, &m, thread_index)) {
    }
}

static void jobs_parallel_for_covers_every_index_once(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int v = 0; v < THREAD_VARIANTS; ++v) {
        cb_jobs *jobs = make_pool(thread_counts[v]);
        for (int round = 0; round < 60; ++round) {
            size_t count = 1 + cb_prng_below(&r, 5000);
            size_t grain = cb_prng_below(&r, 70); /* 0 means 1 */
            cover c = {.grain = grain == 0 ? 1 : grain};
            c.hits = calloc(count, sizeof *c.hits);
            assert_int_equal(cb_jobs_parallel_for(jobs, count, grain, cover_fn, &c), CB_OK);
            for (size_t i = 0; i < count; ++i) {
                CB_CHECK(atomic_load(&c.hits[i]) == 1, "threads %u count %zu grain %zu: index %zu ran %d times",
                         thread_counts[v], count, grain, i, atomic_load(&c.hits[i]));
            }
            CB_CHECK(atomic_load(&c.bad_chunks) == 0, "misaligned chunk");
            CB_CHECK(atomic_load(&c.max_thread) < thread_counts[v], "thread index out of range");
            free(c.hits);
        }
        cb_jobs_destroy(jobs);
    }
}

/* With one thread everything runs on the caller, in order, with thread index 0. */
typedef struct ordered {
    size_t next;
    bool in_order;
    uint32_t max_index;
} ordered;

static void ordered_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    ordered *o = user;
    o->in_order = o->in_order && begin == o->next;
    o->next = end;
    o->max_index = thread_index > o->max_index ? thread_index : o->max_index;
}

static void jobs_one_thread_runs_on_the_caller(void **state)
{
    (void)state;
    cb_jobs *jobs = make_pool(1);
    assert_int_equal(cb_jobs_thread_count(jobs), 1);
    ordered o = {.in_order = true};
    assert_int_equal(cb_jobs_parallel_for(jobs, 1000, 7, ordered_fn, &o), CB_OK);
    assert_true(o.in_order);
    assert_int_equal(o.next, 1000);
    assert_int_equal(o.max_index, 0);
    cb_jobs_destroy(jobs);
}

/* Millions of one-index chunks, summed through per-thread slots (no atomics in the job), so a
 * lost or doubled chunk shows in the total. */
typedef struct partial {
    _Alignas(64) uint64_t sum;
} partial;

typedef struct sums {
    partial slot[8];
} sums;

static void sum_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    sums *s = user;
    for (size_t i = begin; i < end; ++i) {
        s->slot[thread_index].sum += i;
    }
}

static void jobs_parallel_for_stress_tiny_chunks(void **state)
{
    (void)state;
    const size_t count = 2000000;
    for (int v = 0; v < THREAD_VARIANTS; ++v) {
        cb_jobs *jobs = make_pool(thread_counts[v]);
        sums s;
        memset(&s, 0, sizeof s);
        assert_int_equal(cb_jobs_parallel_for(jobs, count, 1, sum_fn, &s), CB_OK);
        uint64_t total = 0;
        for (int t = 0; t < 8; ++t) {
            total += s.slot[t].sum;
        }
        CB_CHECK(total == (uint64_t)count * (count - 1) / 2, "threads %u: sum %llu",
                 thread_counts[v], (unsigned long long)total);
        cb_jobs_destroy(jobs);
    }
}

static void jobs_parallel_for_many_in_a_row(void **state)
{
    (void)state;
    for (int v = 0; v < THREAD_VARIANTS; ++v) {
        cb_jobs *jobs = make_pool(thread_counts[v]);
        sums s;
        memset(&s, 0, sizeof s);
        for (int round = 0; round < 20000; ++round) {
            assert_int_equal(cb_jobs_parallel_for(jobs, 16, 1, sum_fn, &s), CB_OK);
        }
        uint64_t total = 0;
        for (int t = 0; t < 8; ++t) {
            total += s.slot[t].sum;
        }
        CB_CHECK(total == 20000ull * 120, "threads %u: sum %llu", thread_counts[v],
                 (unsigned long long)total);
        cb_jobs_destroy(jobs);
    }
}

/* A parallel-for inside a job of another parallel-for. */
typedef struct nested {
    cb_jobs *jobs;
    atomic_int inner_total;
} nested;

static void inner_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)thread_index;
    atomic_fetch_add(&((nested *)user)->inner_total, (int)(end - begin));
}

static void outer_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)thread_index;
    nested *n = user;
    for (size_t i = begin; i < end; ++i) {
        cb_jobs_parallel_for(n->jobs, 100, 3, inner_fn, n);
    }
}

static void jobs_parallel_for_nests(void **state)
{
    (void)state;
    for (int v = 0; v < THREAD_VARIANTS; ++v) {
        nested n = {.jobs = make_pool(thread_counts[v])};
        atomic_init(&n.inner_total, 0);
        assert_int_equal(cb_jobs_parallel_for(n.jobs, 50, 2, outer_fn, &n), CB_OK);
        assert_int_equal(atomic_load(&n.inner_total), 50 * 100);
        cb_jobs_destroy(n.jobs);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Jobs, counters, dependencies                                                                */

static void add_one(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)begin;
    (void)end;
    (void)thread_index;
    atomic_fetch_add_explicit((atomic_long *)user, 1, memory_order_relaxed);
}

static void jobs_submit_and_wait_many_times(void **state)
{
    (void)state;
    for (int v = 0; v < THREAD_VARIANTS; ++v) {
        cb_jobs *jobs = make_pool(thread_counts[v]);
        cb_jobs_counter *c = NULL;
        assert_int_equal(cb_jobs_counter_create(jobs, &c), CB_OK);
        assert_true(cb_jobs_counter_done(c));
        atomic_long n;
        atomic_init(&n, 0);
        for (int round = 0; round < 20000; ++round) {
            cb_job job = {.fn = add_one, .user = &n};
            assert_int_equal(cb_jobs_submit(jobs, &job, 1, c), CB_OK);
            cb_jobs_wait(jobs, c);
            CB_CHECK(cb_jobs_counter_done(c), "counter not done after wait");
            CB_CHECK(atomic_load(&n) == round + 1, "round %d: %ld jobs ran", round,
                     atomic_load(&n));
        }
        cb_jobs_counter_destroy(jobs, c);
        cb_jobs_destroy(jobs);
    }
}

/* Millions of queued jobs through a small queue: the full-queue path runs jobs on the
 * submitter, and nothing is lost. */
static void jobs_submit_stress_millions(void **state)
{
    (void)state;
    enum { BATCH = 5000, ROUNDS = 400 };
    static cb_job batch[BATCH];
    for (int v = 0; v < THREAD_VARIANTS; ++v) {
        cb_jobs *jobs = NULL;
        cb_jobs_desc d = {.thread_count = thread_counts[v], .queue_capacity = 256, .spin_count = 100};
        assert_int_equal(cb_jobs_create(&d, &jobs, NULL), CB_OK);
        cb_jobs_counter *c = NULL;
        assert_int_equal(cb_jobs_counter_create(jobs, &c), CB_OK);
        atomic_long n;
        atomic_init(&n, 0);
        for (int round = 0; round < ROUNDS; ++round) {
            for (int i = 0; i < BATCH; ++i) {
                batch[i] = (cb_job){.fn = add_one, .user = &n};
            }
            assert_int_equal(cb_jobs_submit(jobs, batch, BATCH, c), CB_OK);
            cb_jobs_wait(jobs, c);
        }
        CB_CHECK(atomic_load(&n) == (long)BATCH * ROUNDS, "threads %u: %ld of %ld jobs ran",
                 thread_counts[v], atomic_load(&n), (long)BATCH * ROUNDS);
        cb_jobs_counter_destroy(jobs, c);
        cb_jobs_destroy(jobs);
    }
}

/* Stage s+1 jobs are held back until every stage s job finished: each job checks, when it
 * starts, that the previous stage's count is complete. A diamond joins two stages. */
enum { STAGE_JOBS = 40, STAGES = 5 };

typedef struct stages {
    atomic_int done[STAGES + 1];
    atomic_int violations;
} stages;

typedef struct stage_job_user {
    stages *s;
    int stage;
    int requires_stage; /* -1: none */
    int requires_count;
} stage_job_user;

static void stage_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)begin;
    (void)end;
    (void)thread_index;
    stage_job_user *u = user;
    if (u->requires_stage >= 0 && atomic_load(&u->s->done[u->requires_stage]) != u->requires_count) {
        atomic_fetch_add(&u->s->violations, 1);
    }
    /* A little work, so that later stages would overtake if they were not held back. */
    volatile double x = 0;
    for (int i = 0; i < 2000; ++i) {
        x += i;
    }
    atomic_fetch_add(&u->s->done[u->stage], 1);
}

static void jobs_dependencies_are_honoured(void **state)
{
    (void)state;
    for (int v = 0; v < THREAD_VARIANTS; ++v) {
        for (int round = 0; round < 30; ++round) {
            cb_jobs *jobs = make_pool(thread_counts[v]);
            stages s;
            memset(&s, 0, sizeof s);
            static cb_job records[STAGES][STAGE_JOBS];
            static stage_job_user users[STAGES][STAGE_JOBS];
            cb_jobs_counter *counters[STAGES];
            for (int st = 0; st < STAGES; ++st) {
                assert_int_equal(cb_jobs_counter_create(jobs, &counters[st]), CB_OK);
                for (int j = 0; j < STAGE_JOBS; ++j) {
                    users[st][j] = (stage_job_user){&s, st, st - 1, STAGE_JOBS};
                    records[st][j] = (cb_job){.fn = stage_fn, .user = &users[st][j]};
                }
            }
            /* A chain 0 -> 1 -> 2, then a diamond: 3 and 4 both after 2... and a final job
             * after 3. Submitted in reverse order of running, so only the counters order it. */
            cb_jobs_counter *tail = NULL;
            assert_int_equal(cb_jobs_counter_create(jobs, &tail), CB_OK);
            for (int j = 0; j < STAGE_JOBS; ++j) {
                users[4][j].requires_stage = 2;
            }
            cb_job final_job = {.fn = stage_fn};
            stage_job_user final_user = {&s, STAGES, 3, STAGE_JOBS};
            final_job.user = &final_user;
            /* Counter 0 must count its jobs before anything attaches to it. */
            assert_int_equal(cb_jobs_submit(jobs, records[0], STAGE_JOBS, counters[0]), CB_OK);
            assert_int_equal(cb_jobs_submit_after(jobs, counters[0], records[1], STAGE_JOBS, counters[1]), CB_OK);
            assert_int_equal(cb_jobs_submit_after(jobs, counters[1], records[2], STAGE_JOBS, counters[2]), CB_OK);
            assert_int_equal(cb_jobs_submit_after(jobs, counters[2], records[3], STAGE_JOBS, counters[3]), CB_OK);
            assert_int_equal(cb_jobs_submit_after(jobs, counters[2], records[4], STAGE_JOBS, counters[4]), CB_OK);
            assert_int_equal(cb_jobs_submit_after(jobs, counters[3], &final_job, 1, tail), CB_OK);
            cb_jobs_wait(jobs, tail);
            cb_jobs_wait(jobs, counters[4]);
            CB_CHECK(atomic_load(&s.violations) == 0, "threads %u round %d: %d jobs started early",
                     thread_counts[v], round, atomic_load(&s.violations));
            for (int st = 0; st < STAGES; ++st) {
                CB_CHECK(atomic_load(&s.done[st]) == STAGE_JOBS, "stage %d ran %d jobs", st,
                         atomic_load(&s.done[st]));
                cb_jobs_counter_destroy(jobs, counters[st]);
            }
            CB_CHECK(atomic_load(&s.done[STAGES]) == 1, "the final job ran %d times",
                     atomic_load(&s.done[STAGES]));
            cb_jobs_counter_destroy(jobs, tail);
            cb_jobs_destroy(jobs);
        }
    }
}

/* A dependent of a counter that is already zero runs at once. */
static void jobs_submit_after_a_finished_counter_runs(void **state)
{
    (void)state;
    cb_jobs *jobs = make_pool(2);
    cb_jobs_counter *zero = NULL, *done = NULL;
    assert_int_equal(cb_jobs_counter_create(jobs, &zero), CB_OK);
    assert_int_equal(cb_jobs_counter_create(jobs, &done), CB_OK);
    atomic_long n;
    atomic_init(&n, 0);
    cb_job job = {.fn = add_one, .user = &n};
    assert_int_equal(cb_jobs_submit_after(jobs, zero, &job, 1, done), CB_OK);
    cb_jobs_wait(jobs, done);
    assert_int_equal(atomic_load(&n), 1);
    /* And again after the counter went up and down once. */
    assert_int_equal(cb_jobs_submit(jobs, &job, 1, zero), CB_OK);
    cb_jobs_wait(jobs, zero);
    cb_job job2 = {.fn = add_one, .user = &n};
    assert_int_equal(cb_jobs_submit_after(jobs, zero, &job2, 1, done), CB_OK);
    cb_jobs_wait(jobs, done);
    assert_int_equal(atomic_load(&n), 3);
    cb_jobs_counter_destroy(jobs, zero);
    cb_jobs_counter_destroy(jobs, done);
    cb_jobs_destroy(jobs);
}

static void jobs_create_destroy_in_a_loop(void **state)
{
    (void)state;
    atomic_long n;
    atomic_init(&n, 0);
    for (int round = 0; round < 300; ++round) {
        cb_jobs *jobs = make_pool(1 + (uint32_t)(round % 4));
        /* Some rounds leave queued work behind: destroy must run it, not drop it. */
        cb_job job[3] = {{.fn = add_one, .user = &n}, {.fn = add_one, .user = &n},
                         {.fn = add_one, .user = &n}};
        if (round % 3 == 0) {
            assert_int_equal(cb_jobs_submit(jobs, job, 3, NULL), CB_OK);
        }
        cb_jobs_destroy(jobs);
    }
    assert_int_equal(atomic_load(&n), 100 * 3);
}

static void noop_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)user;
    (void)begin;
    (void)end;
    (void)thread_index;
}

static void jobs_reject_bad_arguments(void **state)
{
    (void)state;
    cb_jobs *jobs = make_pool(2);
    assert_int_equal(cb_jobs_parallel_for(NULL, 10, 1, noop_fn, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_parallel_for(jobs, 10, 1, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_parallel_for(jobs, SIZE_MAX, 1, noop_fn, NULL),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_jobs_parallel_for(jobs, 0, 1, noop_fn, NULL), CB_OK);
    cb_job no_fn = {0};
    assert_int_equal(cb_jobs_submit(jobs, &no_fn, 1, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_submit(jobs, NULL, 1, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_submit(NULL, &no_fn, 1, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_submit(jobs, NULL, 0, NULL), CB_OK);
    cb_jobs_counter *c = NULL;
    assert_int_equal(cb_jobs_counter_create(jobs, &c), CB_OK);
    cb_job ok = {.fn = noop_fn};
    assert_int_equal(cb_jobs_submit_after(jobs, NULL, &ok, 1, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_submit_after(jobs, c, &no_fn, 1, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_counter_create(NULL, &c), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_counter_create(jobs, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_jobs_thread_count(NULL), 0);
    cb_jobs_wait(jobs, NULL);
    cb_jobs_wait(NULL, c);
    cb_jobs_counter_destroy(jobs, c);
    cb_jobs_counter_destroy(jobs, NULL);
    cb_jobs_destroy(jobs);
}

/* After create, the pool never calls its allocator: parallel-for, submit and wait are
 * allocation-free. */
typedef struct counting {
    atomic_long calls;
} counting;

static void *count_alloc(size_t size, size_t align, void *user)
{
    atomic_fetch_add(&((counting *)user)->calls, 1);
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void count_free(void *ptr, size_t size, void *user)
{
    (void)size;
    atomic_fetch_add(&((counting *)user)->calls, 1);
    free(ptr);
}

static void jobs_no_allocation_after_create(void **state)
{
    (void)state;
    counting c;
    atomic_init(&c.calls, 0);
    cb_jobs_desc d = {.thread_count = 3, .allocator = {count_alloc, count_free, &c}};
    cb_jobs *jobs = NULL;
    assert_int_equal(cb_jobs_create(&d, &jobs, NULL), CB_OK);
    cb_jobs_counter *counter = NULL;
    assert_int_equal(cb_jobs_counter_create(jobs, &counter), CB_OK);
    long after_setup = atomic_load(&c.calls);
    assert_true(after_setup > 0);
    sums s;
    memset(&s, 0, sizeof s);
    atomic_long n;
    atomic_init(&n, 0);
    for (int frame = 0; frame < 200; ++frame) {
        cb_jobs_parallel_for(jobs, 1000, 10, sum_fn, &s);
        cb_job job[4] = {{.fn = add_one, .user = &n}, {.fn = add_one, .user = &n},
                         {.fn = add_one, .user = &n}, {.fn = add_one, .user = &n}};
        cb_jobs_submit(jobs, job, 4, counter);
        cb_jobs_wait(jobs, counter);
    }
    assert_int_equal(atomic_load(&c.calls), after_setup);
    cb_jobs_counter_destroy(jobs, counter);
    cb_jobs_destroy(jobs);
    /* Everything allocated was freed. */
    assert_int_equal(atomic_load(&c.calls), 2 * after_setup);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobs_desc_defaults),
        cmocka_unit_test(jobs_create_rejects_bad_descs),
        cmocka_unit_test(jobs_parallel_for_covers_every_index_once),
        cmocka_unit_test(jobs_one_thread_runs_on_the_caller),
        cmocka_unit_test(jobs_parallel_for_stress_tiny_chunks),
        cmocka_unit_test(jobs_parallel_for_many_in_a_row),
        cmocka_unit_test(jobs_parallel_for_nests),
        cmocka_unit_test(jobs_submit_and_wait_many_times),
        cmocka_unit_test(jobs_submit_stress_millions),
        cmocka_unit_test(jobs_dependencies_are_honoured),
        cmocka_unit_test(jobs_submit_after_a_finished_counter_runs),
        cmocka_unit_test(jobs_create_destroy_in_a_loop),
        cmocka_unit_test(jobs_reject_bad_arguments),
        cmocka_unit_test(jobs_no_allocation_after_create),
    };
    return CB_RUN_TESTS(tests);
}
