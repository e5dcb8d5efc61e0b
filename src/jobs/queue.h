/* A bounded multi-producer multi-consumer queue of job pointers, lock-free.
 *
 * Dmitry Vyukov's bounded MPMC queue (1024cores.net, "Bounded MPMC queue"): each cell carries a
 * sequence number that says whose turn it is. A producer claims position p by CAS on
 * enqueue_pos when cell[p].seq == p, writes the pointer, then publishes seq = p + 1 (release);
 * a consumer claims p when seq == p + 1, reads, then frees the cell for the next lap with
 * seq = p + capacity. No cell is ever shared by two claims, so the pointer itself needs no
 * atomic access. Push fails only when the ring is full, pop only when it is empty. */
#ifndef CROWDBLEND_JOBS_QUEUE_H
#define CROWDBLEND_JOBS_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crowdblend/jobs.h"

/* One cache line per hot index, so producers and consumers do not false-share. */
#define CB_CACHE_LINE 64

typedef struct cb_queue_cell {
    atomic_size_t seq;
    cb_job *job;
} cb_queue_cell;

typedef struct cb_queue {
    cb_queue_cell *cells; /* capacity cells, capacity a power of two */
    size_t mask;
    _Alignas(CB_CACHE_LINE) atomic_size_t enqueue_pos;
    _Alignas(CB_CACHE_LINE) atomic_size_t dequeue_pos;
} cb_queue;

/* cells must hold mask + 1 entries. */
static inline void cb_queue_init(cb_queue *q, cb_queue_cell *cells, size_t capacity)
{
    q->cells = cells;
    q->mask = capacity - 1;
    for (size_t i = 0; i < capacity; ++i) {
        atomic_init(&cells[i].seq, i);
        cells[i].job = NULL;
    }
    atomic_init(&q->enqueue_pos, 0);
    atomic_init(&q->dequeue_pos, 0);
}

static inline bool cb_queue_push(cb_queue *q, cb_job *job)
{
    size_t pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
    cb_queue_cell *cell;
    for (;;) {
        cell = &q->cells[pos & q->mask];
        size_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        intptr_t diff = (intptr_t)seq - (intptr_t)pos;
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->enqueue_pos, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                break;
            }
        } else if (diff < 0) {
            return false; /* a full lap behind the consumers: full */
        } else {
            pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
        }
    }
    cell->job = job;
    atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
    return true;
}

static inline cb_job *cb_queue_pop(cb_queue *q)
{
    size_t pos = atomic_load_explicit(&q->dequeue_pos, memory_order_relaxed);
    cb_queue_cell *cell;
    for (;;) {
        cell = &q->cells[pos & q->mask];
        size_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        intptr_t diff = (intptr_t)seq - (intptr_t)(pos + 1);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->dequeue_pos, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                break;
            }
        } else if (diff < 0) {
            return NULL; /* not yet published: empty */
        } else {
            pos = atomic_load_explicit(&q->dequeue_pos, memory_order_relaxed);
        }
    }
    cb_job *job = cell->job;
    atomic_store_explicit(&cell->seq, pos + q->mask + 1, memory_order_release);
    return job;
}

/* A sequentially consistent look at whether anything was claimed for pushing but not for
 * popping; sleeping workers use it under the sleep mutex (see jobs.c for the wake protocol). */
static inline bool cb_queue_looks_empty(cb_queue *q)
{
    size_t e = atomic_load(&q->enqueue_pos);
    size_t d = atomic_load(&q->dequeue_pos);
    return e == d;
}

#endif
