/* Lock-free handoff between the simulation thread and the network thread.
 *
 * A board is a triple buffer: the writer fills its back slot and swaps it with the middle one;
 * the reader swaps the middle slot into its front one when the middle is fresh. Neither ever
 * waits for the other, the writer never overwrites what the reader holds, and the reader always
 * gets the newest publication: a slow reader skips publications instead of queueing them. That
 * is the server's drop policy for frames (docs/serve.md). One writer thread and one reader
 * thread per board; both sides are a handful of instructions and one atomic exchange.
 *
 * A ring is a bounded single-producer single-consumer queue of fixed-size items (commands from
 * the network thread, replies from the simulation). */
#ifndef CROWDBLEND_SERVE_BOARD_H
#define CROWDBLEND_SERVE_BOARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CB_BOARD_FRESH = 4u };

typedef struct cb_board {
    uint8_t *base[3];
    uint8_t *data[3]; /* base + headroom: what is published */
    size_t len[3];
    uint64_t seq[3];         /* publication number, 0 = never written */
    uint64_t tag[3];         /* a word of metadata published with the bytes */
    size_t capacity;         /* bytes of data per slot */
    _Atomic uint32_t middle; /* slot index | CB_BOARD_FRESH */
    uint32_t back;           /* the writer's */
    uint32_t front;          /* the reader's */
    uint64_t published;      /* the writer's count */
} cb_board;

/* Allocates three slots of `capacity` bytes, each preceded by `headroom` bytes (libwebsockets
 * writes its frame header there). False when out of memory. */
static inline bool cb_board_init(cb_board *b, size_t capacity, size_t headroom)
{
    memset(b, 0, sizeof *b);
    for (int k = 0; k < 3; ++k) {
        b->base[k] = malloc(headroom + (capacity ? capacity : 1));
        if (b->base[k] == NULL) {
            return false;
        }
        b->data[k] = b->base[k] + headroom;
    }
    b->capacity = capacity;
    b->back = 0;
    atomic_init(&b->middle, 1u);
    b->front = 2;
    return true;
}

static inline void cb_board_finish(cb_board *b)
{
    for (int k = 0; k < 3; ++k) {
        free(b->base[k]);
    }
    memset(b, 0, sizeof *b);
}

/* Writer: the slot to fill (capacity bytes). */
static inline uint8_t *cb_board_back(cb_board *b)
{
    return b->data[b->back];
}

/* Writer: publishes the back slot's first len bytes. */
static inline void cb_board_publish(cb_board *b, size_t len, uint64_t tag)
{
    b->len[b->back] = len;
    b->tag[b->back] = tag;
    b->seq[b->back] = ++b->published;
    /* acq_rel: the slot's bytes are visible before the index, and the slot we get back is no
     * longer read. */
    uint32_t old =
        atomic_exchange_explicit(&b->middle, b->back | CB_BOARD_FRESH, memory_order_acq_rel);
    b->back = old & 3u;
}

/* Reader: the newest publication (seq 0: none yet). The bytes stay valid until the next call. */
static inline const uint8_t *cb_board_read(cb_board *b, size_t *len, uint64_t *seq, uint64_t *tag)
{
    if (atomic_load_explicit(&b->middle, memory_order_relaxed) & CB_BOARD_FRESH) {
        uint32_t old = atomic_exchange_explicit(&b->middle, b->front, memory_order_acq_rel);
        b->front = old & 3u;
    }
    *len = b->len[b->front];
    *seq = b->seq[b->front];
    if (tag != NULL) {
        *tag = b->tag[b->front];
    }
    return b->data[b->front];
}

typedef struct cb_ring {
    uint8_t *items;
    size_t item_size;
    size_t capacity;     /* a power of two */
    _Atomic size_t head; /* next to write (producer) */
    _Atomic size_t tail; /* next to read (consumer) */
} cb_ring;

static inline bool cb_ring_init(cb_ring *r, size_t item_size, size_t capacity_pow2)
{
    memset(r, 0, sizeof *r);
    r->items = calloc(capacity_pow2, item_size);
    r->item_size = item_size;
    r->capacity = capacity_pow2;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    return r->items != NULL;
}

static inline void cb_ring_finish(cb_ring *r)
{
    free(r->items);
    memset(r, 0, sizeof *r);
}

/* Producer: copies an item in; false when full. */
static inline bool cb_ring_push(cb_ring *r, const void *item)
{
    size_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h - t >= r->capacity) {
        return false;
    }
    memcpy(r->items + (h & (r->capacity - 1)) * r->item_size, item, r->item_size);
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return true;
}

/* Consumer: copies the oldest item out; false when empty. */
static inline bool cb_ring_pop(cb_ring *r, void *item)
{
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    if (t == h) {
        return false;
    }
    memcpy(item, r->items + (t & (r->capacity - 1)) * r->item_size, r->item_size);
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return true;
}

#endif
