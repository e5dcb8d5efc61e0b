/* Internals shared by every module: assertions, error reporting, allocation, hashing and the
 * rule for a transform a caller gives.
 * Declared here, not in include/, because hosts never call them. */
#ifndef CROWDBLEND_BASE_IMPL_H
#define CROWDBLEND_BASE_IMPL_H

#include <stdarg.h>

#include "crowdblend/base.h"

/* Internal invariants only: user input is validated and reported, never asserted. Override by
 * defining CB_ASSERT before including any crowdblend source (e.g. to route into an engine's
 * crash handler). */
#ifndef CB_ASSERT
#include <assert.h>
#define CB_ASSERT(cond) assert(cond)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CB_PRINTF_LIKE(fmt_index, args_index) __attribute__((format(printf, fmt_index, args_index)))
#define CB_LIKELY(x) __builtin_expect(!!(x), 1)
#define CB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define CB_PRINTF_LIKE(fmt_index, args_index)
#define CB_LIKELY(x) (x)
#define CB_UNLIKELY(x) (x)
#endif

/* Fills err (when not NULL) with code and a formatted message, and returns code, so that a
 * check reads: `if (bad) return cb_error_set(err, CB_ERR_..., "field %s ...", ...);` */
cb_result cb_error_set(cb_error *err, cb_result code, const char *fmt, ...) CB_PRINTF_LIKE(3, 4);

/* Checks that an allocator supplies both functions or neither. */
cb_result cb_allocator_check(const cb_allocator *a, cb_error *err);

/* Allocates size bytes aligned to align (a power of two) through a, or the C library when a is
 * NULL or all zero. Returns NULL on failure or when size is 0. */
void *cb_alloc(const cb_allocator *a, size_t size, size_t align);

/* Same, zero-filled. */
void *cb_alloc_zeroed(const cb_allocator *a, size_t size, size_t align);

/* A transparent huge page: the unit the kernel maps as one TLB entry (x86-64, and aarch64 with
 * 4 KB pages). cb_alloc_large aligns its blocks to it. */
#define CB_HUGE_PAGE_BYTES ((size_t)2 << 20)

/* From this size on, cb_alloc_large asks for huge pages. 32 MB is glibc's largest dynamic mmap
 * threshold on 64-bit systems: a block this large is always a mapping of its own (unless the host
 * turned mmap off, M_MMAP_MAX 0), unmapped at free, so the advice leaves with it. A smaller block
 * can come from the heap, where the advice would outlive the block and reach later allocations. */
#define CB_ALLOC_LARGE_BYTES ((size_t)32 << 20)

/* cb_alloc for large buffers written densely every frame (a crowd's output matrices). With the C
 * library allocator and at least CB_ALLOC_LARGE_BYTES, the block is aligned to CB_HUGE_PAGE_BYTES
 * and, on Linux, advised as huge pages (madvise MADV_HUGEPAGE: a machine whose transparent huge
 * pages are in `madvise` mode grants them only so; a refusal is not an error). With the host's
 * hooks, or smaller, exactly cb_alloc: the hooks see the same size and alignment as before. Freed
 * with cb_free. Create time only: a system call. */
void *cb_alloc_large(const cb_allocator *a, size_t size, size_t align);

/* Frees what cb_alloc or cb_alloc_large returned for this size; NULL does nothing. */
void cb_free(const cb_allocator *a, void *ptr, size_t size);

/* Is x a multiple of align (a power of two)? */
static inline bool cb_is_aligned(const void *p, size_t align)
{
    return ((uintptr_t)p & (uintptr_t)(align - 1)) == 0;
}

/* Rounds n up to a multiple of m (m > 0). */
static inline size_t cb_round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

/* FNV-1a (Fowler, Noll and Vo): xor each byte in, then multiply by the FNV prime. The one
 * implementation of the library's hashes: 32 bits for names (cb_name_hash), 64 bits for the
 * output checksum (cb_crowd_output_hash). Start from the offset basis, or from a previous
 * result to hash more bytes. */
#define CB_FNV1A32_BASIS 2166136261u
#define CB_FNV1A64_BASIS 14695981039346656037ull

static inline uint32_t cb_fnv1a32(uint32_t h, const void *data, size_t bytes)
{
    for (const unsigned char *p = data, *end = p + bytes; p != end; ++p) {
        h = (h ^ *p) * 16777619u;
    }
    return h;
}

static inline uint64_t cb_fnv1a64(uint64_t h, const void *data, size_t bytes)
{
    for (const unsigned char *p = data, *end = p + bytes; p != end; ++p) {
        h = (h ^ *p) * 1099511628211ull;
    }
    return h;
}

/* The one rule for a transform a caller gives (rest poses, clip frames, additive references):
 * every component finite, and a rotation that can be normalized. */
typedef enum cb_xform_fault {
    CB_XFORM_VALID,
    CB_XFORM_NOT_FINITE,
    CB_XFORM_ZERO_ROTATION,
} cb_xform_fault;

/* A rotation's squared length, summed in double. */
double cb_rotation_length2(const float q[4]);

/* Can q be normalized? Its squared length is at least 1e-12 (false for NaN). */
bool cb_rotation_normalizable(const float q[4]);

/* What is wrong with x, if anything: CB_XFORM_NOT_FINITE before CB_XFORM_ZERO_ROTATION. */
cb_xform_fault cb_xform_check(const cb_xform *x);

#endif
