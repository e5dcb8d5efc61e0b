/* The thread pool: workers, the shared queue, counters with dependents, parallel-for.
 *
 * Waking protocol (no lost wake-ups): a worker that found nothing to do after spinning takes
 * the sleep mutex, increments `sleepers` (seq_cst), and sleeps only if the queue still looks
 * empty. A submitter pushes, then reads `sleepers` with a seq_cst read-modify-write; if it is
 * non-zero it signals under the mutex. The two RMWs on `sleepers` are totally ordered: either
 * the submitter sees the sleeper, or the sleeper's increment comes after (and synchronizes with)
 * the submitter's, so its check of the queue sees the pushed job. The mutex is held only around
 * going to sleep and waking, never while a job runs.
 *
 * Counters: `value` counts unfinished jobs; `waiters` is a lock-free stack of jobs held back by
 * cb_jobs_submit_after(), or WAITERS_CLOSED once the counter reached zero. The thread that
 * finishes the last job first swaps value to CLOSING (not zero), detaches the dependents, and
 * only then clears CLOSING: a waiter that sees zero may free the counter (or return from the
 * stack frame that holds it) at once, so nothing may touch it after zero is visible. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "base/base_impl.h"
#include "crowdblend/jobs.h"
#include "jobs/queue.h"

enum {
    DEFAULT_QUEUE_CAPACITY = 4096,
    MAX_QUEUE_CAPACITY = 1 << 24,
    DEFAULT_SPIN_COUNT = 20000,
    MAX_THREADS = 1024,
    /* A waiter that has spun this long without finding work yields its core: only reached when
     * the pool has more threads than cores or a job runs very long. */
    WAIT_SPINS_BEFORE_YIELD = 200000,
};

#define WAITERS_CLOSED ((uintptr_t)1)
#define VALUE_CLOSING (INT64_C(1) << 62)

struct cb_jobs_counter {
    _Alignas(CB_CACHE_LINE) _Atomic int64_t value;
    atomic_uintptr_t waiters;
};

typedef struct worker {
    cb_jobs *pool;
    uint32_t index;
    pthread_t thread;
} worker;

struct cb_jobs {
    cb_queue queue;
    uint32_t thread_count;
    uint32_t spin_count;
    cb_allocator allocator;
    cb_queue_cell *cells;
    size_t capacity;
    worker *workers; /* thread_count - 1 entries */
    uint32_t started;
    pthread_mutex_t sleep_mutex;
    pthread_cond_t wake;
    _Alignas(CB_CACHE_LINE) atomic_int sleepers;
    atomic_bool shutdown;
};

/* Which pool this thread works for, and its index there; 0 for threads outside the pool. */
static _Thread_local const cb_jobs *tls_pool;
static _Thread_local uint32_t tls_index;

static uint32_t current_index(const cb_jobs *p)
{
    return tls_pool == p ? tls_index : 0;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* Queue access with wake-ups                                                                 */

static void wake_workers(cb_jobs *p, size_t how_many)
{
    /* A read-modify-write, not a fence + load: RMWs on one variable are totally ordered, so
     * either this reads the sleeper's increment, or the sleeper's increment reads ours and
     * with it sees the push (ThreadSanitizer also understands this form, not fences). */
    if (atomic_fetch_add_explicit(&p->sleepers, 0, memory_order_seq_cst) > 0) {
        pthread_mutex_lock(&p->sleep_mutex);
        if (how_many > 1) {
            pthread_cond_broadcast(&p->wake);
        } else {
            pthread_cond_signal(&p->wake);
        }
        pthread_mutex_unlock(&p->sleep_mutex);
    }
}

static void run_job(cb_jobs *p, cb_job *job);

/* Queues a job, or runs it here when the queue is full (the queue bounds memory, not work). */
static void push_or_run(cb_jobs *p, cb_job *job)
{
    if (!cb_queue_push(&p->queue, job)) {
        run_job(p, job);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Counters                                                                                   */

static void counter_add(cb_jobs_counter *c, int64_t n)
{
    int64_t old = atomic_fetch_add_explicit(&c->value, n, memory_order_acq_rel);
    if (old == 0) {
        /* Reopen: dependents submitted from now on wait for the new work. */
        atomic_store_explicit(&c->waiters, 0, memory_order_release);
    }
}

/* Takes n finished jobs off c; the thread that takes the last ones releases the dependents. */
static void counter_sub(cb_jobs *p, cb_jobs_counter *c, int64_t n)
{
    int64_t v = atomic_load_explicit(&c->value, memory_order_relaxed);
    int64_t next;
    do {
        next = v - n;
        if (next == 0) {
            next = VALUE_CLOSING;
        }
    } while (!atomic_compare_exchange_weak_explicit(&c->value, &v, next, memory_order_acq_rel,
                                                    memory_order_relaxed));
    if (next != VALUE_CLOSING) {
        return;
    }
    uintptr_t list = atomic_exchange_explicit(&c->waiters, WAITERS_CLOSED, memory_order_acq_rel);
    /* From here on c may be freed by a waiter: clear CLOSING last and do not touch c again. A
     * submit racing in meanwhile added to value, which the subtraction keeps. */
    atomic_fetch_sub_explicit(&c->value, VALUE_CLOSING, memory_order_release);
    size_t released = 0;
    for (cb_job *job = (cb_job *)list; list > WAITERS_CLOSED && job != NULL;) {
        /* Read the link before queueing: once queued the job may run and be reused. */
        cb_job *next_job = job->_pool[0];
        push_or_run(p, job);
        released++;
        job = next_job;
    }
    if (released > 0) {
        wake_workers(p, released);
    }
}

/* Holds job back until `after` reaches zero, or queues it now if it already has. */
static void attach_dependent(cb_jobs *p, cb_jobs_counter *after, cb_job *job)
{
    uintptr_t head = atomic_load_explicit(&after->waiters, memory_order_acquire);
    for (;;) {
        if (head == WAITERS_CLOSED ||
            atomic_load_explicit(&after->value, memory_order_acquire) == 0) {
            /* Finished. The closing thread may not have cleared VALUE_CLOSING yet (its last
             * touch of the counter, a few instructions after it closed the list): wait for it,
             * since once this job has run the host may free the counter. */
            while (atomic_load_explicit(&after->value, memory_order_acquire) >= VALUE_CLOSING) {
                cpu_relax();
            }
            push_or_run(p, job);
            wake_workers(p, 1);
            return;
        }
        job->_pool[0] = (void *)head;
        /* Fails if the list changed, in particular if the counter closed meanwhile. */
        if (atomic_compare_exchange_weak_explicit(&after->waiters, &head, (uintptr_t)job,
                                                  memory_order_acq_rel, memory_order_acquire)) {
            return;
        }
    }
}

static void run_job(cb_jobs *p, cb_job *job)
{
    job->fn(job->user, job->begin, job->end, current_index(p));
    cb_jobs_counter *signal = job->_pool[1];
    if (signal != NULL) {
        counter_sub(p, signal, 1);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Workers                                                                                    */

static void *worker_main(void *arg)
{
    worker *w = arg;
    cb_jobs *p = w->pool;
    tls_pool = p;
    tls_index = w->index;
    for (;;) {
        cb_job *job = cb_queue_pop(&p->queue);
        for (uint32_t spin = 0; job == NULL && spin < p->spin_count; ++spin) {
            if (atomic_load_explicit(&p->shutdown, memory_order_acquire)) {
                break;
            }
            cpu_relax();
            job = cb_queue_pop(&p->queue);
        }
        if (job != NULL) {
            run_job(p, job);
            continue;
        }
        if (atomic_load(&p->shutdown)) {
            /* The queue was empty after the shutdown flag was set: everything ran. */
            if (cb_queue_looks_empty(&p->queue)) {
                return NULL;
            }
            continue;
        }
        pthread_mutex_lock(&p->sleep_mutex);
        atomic_fetch_add(&p->sleepers, 1);
        while (cb_queue_looks_empty(&p->queue) && !atomic_load(&p->shutdown)) {
            pthread_cond_wait(&p->wake, &p->sleep_mutex);
        }
        atomic_fetch_sub(&p->sleepers, 1);
        pthread_mutex_unlock(&p->sleep_mutex);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Create and destroy                                                                         */

cb_jobs_desc cb_jobs_query_desc(const cb_jobs_desc *desc)
{
    cb_jobs_desc d = desc != NULL ? *desc : (cb_jobs_desc){0};
    if (d.thread_count == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        d.thread_count = online < 1 ? 1u : online > MAX_THREADS ? MAX_THREADS : (uint32_t)online;
    }
    if (d.queue_capacity == 0) {
        d.queue_capacity = DEFAULT_QUEUE_CAPACITY;
    }
    if (d.spin_count == 0) {
        d.spin_count = DEFAULT_SPIN_COUNT;
    }
    return d;
}

static void stop_workers(cb_jobs *p)
{
    atomic_store(&p->shutdown, true);
    pthread_mutex_lock(&p->sleep_mutex);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->sleep_mutex);
    for (uint32_t i = 0; i < p->started; ++i) {
        pthread_join(p->workers[i].thread, NULL);
    }
    p->started = 0;
}

static void free_pool(cb_jobs *p)
{
    cb_allocator a = p->allocator;
    cb_free(&a, p->workers, (p->thread_count - 1) * sizeof(worker));
    cb_free(&a, p->cells, p->capacity * sizeof(cb_queue_cell));
    cb_free(&a, p, sizeof *p);
}

/* Frees a pool whose workers are stopped, with its wake-up mutex and condition. */
static void close_pool(cb_jobs *p)
{
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->sleep_mutex);
    free_pool(p);
}

/* The desc with its defaults filled in, once it is known to be usable: the canaries, the
 * allocator, then the limits on threads and queue capacity. */
static cb_result settle_desc(const cb_jobs_desc *desc, cb_jobs_desc *d, cb_error *err)
{
    if (desc != NULL && (desc->_start_canary != 0 || desc->_end_canary != 0)) {
        return cb_error_set(err, CB_ERR_CANARY,
                            "cb_jobs_desc: a canary is not zero (initialise with {0})");
    }
    cb_result r = cb_allocator_check(desc != NULL ? &desc->allocator : NULL, err);
    if (r != CB_OK) {
        return r;
    }
    *d = cb_jobs_query_desc(desc);
    if (d->thread_count > MAX_THREADS) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_jobs_desc.thread_count %u exceeds the maximum %d", d->thread_count,
                            MAX_THREADS);
    }
    if (d->queue_capacity < 2 || d->queue_capacity > MAX_QUEUE_CAPACITY) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_jobs_desc.queue_capacity %u is outside 2..%d", d->queue_capacity,
                            MAX_QUEUE_CAPACITY);
    }
    return CB_OK;
}

/* The queue's cell count: the smallest power of two, at least 2, that holds `requested`. */
static size_t queue_cells_for(uint32_t requested)
{
    size_t capacity = 2;
    while (capacity < requested) {
        capacity *= 2;
    }
    return capacity;
}

/* The pool with its queue cells and worker slots allocated and its queue, counters and sleep
 * mutex initialised; no thread is started yet. */
static cb_result create_pool(const cb_jobs_desc *d, size_t capacity, cb_jobs **out, cb_error *err)
{
    cb_jobs *p = cb_alloc_zeroed(&d->allocator, sizeof *p, _Alignof(cb_jobs));
    if (p == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_jobs_create: pool");
    }
    p->allocator = d->allocator;
    p->thread_count = d->thread_count;
    p->spin_count = d->spin_count;
    p->capacity = capacity;
    p->cells = cb_alloc(&p->allocator, capacity * sizeof(cb_queue_cell), CB_CACHE_LINE);
    p->workers = d->thread_count > 1
                     ? cb_alloc_zeroed(&p->allocator, (d->thread_count - 1) * sizeof(worker),
                                       _Alignof(worker))
                     : NULL;
    if (p->cells == NULL || (d->thread_count > 1 && p->workers == NULL)) {
        free_pool(p);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_jobs_create: queue of %zu jobs",
                            capacity);
    }
    cb_queue_init(&p->queue, p->cells, capacity);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->shutdown, false);
    pthread_mutex_init(&p->sleep_mutex, NULL);
    pthread_cond_init(&p->wake, NULL);
    *out = p;
    return CB_OK;
}

/* Starts the workers in index order. If one does not start, the ones already running are
 * stopped and joined and the pool is freed: the caller has nothing left to undo. */
static cb_result start_workers(cb_jobs *p, cb_error *err)
{
    const uint32_t thread_count = p->thread_count; /* for the message, after p is freed */
    for (uint32_t i = 0; i + 1 < thread_count; ++i) {
        worker *w = &p->workers[i];
        w->pool = p;
        w->index = i + 1;
        int e = pthread_create(&w->thread, NULL, worker_main, w);
        if (e != 0) {
            stop_workers(p);
            close_pool(p);
            return cb_error_set(err, CB_ERR_THREAD,
                                "cb_jobs_create: worker thread %u of %u did not start (error %d)",
                                i + 1, thread_count - 1, e);
        }
        p->started++;
    }
    return CB_OK;
}

cb_result cb_jobs_create(const cb_jobs_desc *desc, cb_jobs **out, cb_error *err)
{
    if (out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_jobs_create: out is NULL");
    }
    cb_jobs_desc d = {0};
    cb_result r = settle_desc(desc, &d, err);
    if (r != CB_OK) {
        return r;
    }
    cb_jobs *p = NULL;
    r = create_pool(&d, queue_cells_for(d.queue_capacity), &p, err);
    if (r != CB_OK) {
        return r;
    }
    r = start_workers(p, err);
    if (r != CB_OK) {
        return r;
    }
    *out = p;
    return CB_OK;
}

void cb_jobs_destroy(cb_jobs *p)
{
    if (p == NULL) {
        return;
    }
    stop_workers(p);
    /* With no workers (thread_count 1) queued jobs are still waiting for a caller: run them. */
    for (cb_job *job; (job = cb_queue_pop(&p->queue)) != NULL;) {
        run_job(p, job);
    }
    close_pool(p);
}

uint32_t cb_jobs_thread_count(const cb_jobs *p)
{
    return p != NULL ? p->thread_count : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Counters, submit, wait                                                                     */

cb_result cb_jobs_counter_create(cb_jobs *p, cb_jobs_counter **out)
{
    if (p == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    cb_jobs_counter *c = cb_alloc(&p->allocator, sizeof *c, _Alignof(cb_jobs_counter));
    if (c == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    atomic_init(&c->value, 0);
    atomic_init(&c->waiters, 0);
    *out = c;
    return CB_OK;
}

void cb_jobs_counter_destroy(cb_jobs *p, cb_jobs_counter *c)
{
    if (p != NULL && c != NULL) {
        cb_free(&p->allocator, c, sizeof *c);
    }
}

bool cb_jobs_counter_done(const cb_jobs_counter *c)
{
    return c == NULL ||
           atomic_load_explicit(&((cb_jobs_counter *)c)->value, memory_order_acquire) == 0;
}

/* The checks shared by both submits; on success counts the n jobs on signal (before any is
 * queued: a job may finish before the next one is queued) and sets each job's signal. */
static cb_result prepare_submit(cb_jobs *p, cb_job *jobs, size_t n, cb_jobs_counter *signal)
{
    if (p == NULL || (n > 0 && jobs == NULL)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        if (jobs[i].fn == NULL) {
            return CB_ERR_NULL_ARGUMENT;
        }
    }
    if (signal != NULL && n > 0) {
        counter_add(signal, (int64_t)n);
    }
    for (size_t i = 0; i < n; ++i) {
        jobs[i]._pool[0] = NULL;
        jobs[i]._pool[1] = signal;
    }
    return CB_OK;
}

cb_result cb_jobs_submit(cb_jobs *p, cb_job *jobs, size_t n, cb_jobs_counter *signal)
{
    cb_result r = prepare_submit(p, jobs, n, signal);
    if (r != CB_OK || n == 0) {
        return r;
    }
    for (size_t i = 0; i < n; ++i) {
        push_or_run(p, &jobs[i]);
    }
    wake_workers(p, n);
    return CB_OK;
}

cb_result cb_jobs_submit_after(cb_jobs *p, cb_jobs_counter *after, cb_job *jobs, size_t n,
                               cb_jobs_counter *signal)
{
    if (after == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    cb_result r = prepare_submit(p, jobs, n, signal);
    if (r != CB_OK) {
        return r;
    }
    for (size_t i = 0; i < n; ++i) {
        attach_dependent(p, after, &jobs[i]);
    }
    return CB_OK;
}

void cb_jobs_wait(cb_jobs *p, cb_jobs_counter *c)
{
    if (p == NULL || c == NULL) {
        return;
    }
    uint32_t idle = 0;
    while (atomic_load_explicit(&c->value, memory_order_acquire) != 0) {
        cb_job *job = cb_queue_pop(&p->queue);
        if (job != NULL) {
            run_job(p, job);
            idle = 0;
        } else if (++idle < WAIT_SPINS_BEFORE_YIELD) {
            cpu_relax();
        } else {
            sched_yield();
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Parallel-for                                                                               */

/* One record on the caller's stack, queued once per helper: every helper and the caller claim
 * chunks from one atomic index until it passes count. Chunk i is always [i grain, (i+1) grain),
 * whoever runs it. */
typedef struct parallel_for {
    cb_job job;
    _Alignas(CB_CACHE_LINE) atomic_size_t next;
    size_t count, grain;
    cb_jobs_range_fn fn;
    void *user;
    struct cb_jobs_counter done;
} parallel_for;

static void parallel_for_claim(parallel_for *pf, uint32_t thread_index)
{
    for (;;) {
        size_t begin = atomic_fetch_add_explicit(&pf->next, pf->grain, memory_order_relaxed);
        if (begin >= pf->count) {
            return;
        }
        size_t end = pf->count - begin > pf->grain ? begin + pf->grain : pf->count;
        pf->fn(pf->user, begin, end, thread_index);
    }
}

static void parallel_for_helper(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)begin;
    (void)end;
    parallel_for_claim(user, thread_index);
}

cb_result cb_jobs_parallel_for(cb_jobs *p, size_t count, size_t grain, cb_jobs_range_fn fn,
                               void *user)
{
    if (p == NULL || fn == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (count > SIZE_MAX / 2) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (count == 0) {
        return CB_OK;
    }
    grain = grain == 0 ? 1 : grain > count ? count : grain;
    size_t chunks = (count - 1) / grain + 1;
    size_t helpers = chunks - 1 < p->thread_count - 1 ? chunks - 1 : p->thread_count - 1;
    uint32_t self = current_index(p);
    if (helpers == 0) {
        for (size_t begin = 0; begin < count; begin += grain) {
            fn(user, begin, count - begin > grain ? begin + grain : count, self);
        }
        return CB_OK;
    }

    parallel_for pf = {
        .job = {.fn = parallel_for_helper, .user = &pf},
        .count = count,
        .grain = grain,
        .fn = fn,
        .user = user,
    };
    atomic_init(&pf.next, 0);
    atomic_init(&pf.done.value, (int64_t)helpers);
    atomic_init(&pf.done.waiters, 0);
    pf.job._pool[1] = &pf.done;
    size_t queued = 0;
    for (; queued < helpers; ++queued) {
        if (!cb_queue_push(&p->queue, &pf.job)) {
            break;
        }
    }
    if (queued < helpers) {
        /* Queue full: this thread does the missing helpers' share itself. */
        atomic_fetch_sub(&pf.done.value, (int64_t)(helpers - queued));
    }
    wake_workers(p, queued);
    parallel_for_claim(&pf, self);
    /* The index is exhausted; helpers still queued find nothing and finish at once. Waiting
     * also pops them, so no worker has to wake up just to return. */
    cb_jobs_wait(p, &pf.done);
    return CB_OK;
}
