#if defined(__linux__)
#ifndef _DEFAULT_SOURCE /* a build's -D_DEFAULT_SOURCE (value 1) must not meet a redefinition */
#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE under -std=c11 */
#endif
#include <sys/mman.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "base/base_impl.h"

static bool uses_hooks(const cb_allocator *a)
{
    return a != NULL && a->alloc_fn != NULL && a->free_fn != NULL;
}

cb_result cb_allocator_check(const cb_allocator *a, cb_error *err)
{
    if (a != NULL && (a->alloc_fn == NULL) != (a->free_fn == NULL)) {
        return cb_error_set(err, CB_ERR_ALLOCATOR,
                            "allocator: alloc_fn and free_fn must both be set or both be NULL");
    }
    return CB_OK;
}

void *cb_alloc(const cb_allocator *a, size_t size, size_t align)
{
    if (size == 0) {
        return NULL;
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    if (uses_hooks(a)) {
        return a->alloc_fn(size, align, a->user_data);
    }
    /* aligned_alloc wants a size that is a multiple of the alignment. */
    if (size > SIZE_MAX - align) {
        return NULL;
    }
    return aligned_alloc(align, cb_round_up(size, align));
}

void *cb_alloc_large(const cb_allocator *a, size_t size, size_t align)
{
    if (uses_hooks(a) || size < CB_ALLOC_LARGE_BYTES) {
        return cb_alloc(a, size, align);
    }
    void *p = cb_alloc(a, size, align > CB_HUGE_PAGE_BYTES ? align : CB_HUGE_PAGE_BYTES);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != NULL) {
        /* Only the 2 MB ranges wholly inside [p, p + size) can become huge pages, so the bytes
         * past size never cost a page of their own. A kernel without transparent huge pages
         * refuses (EINVAL): the memory is still good, in 4 KB pages. */
        (void)madvise(p, size, MADV_HUGEPAGE);
    }
#endif
    return p;
}

void *cb_alloc_zeroed(const cb_allocator *a, size_t size, size_t align)
{
    void *p = cb_alloc(a, size, align);
    if (p != NULL) {
        memset(p, 0, size);
    }
    return p;
}

void cb_free(const cb_allocator *a, void *ptr, size_t size)
{
    if (ptr == NULL) {
        return;
    }
    if (uses_hooks(a)) {
        a->free_fn(ptr, size, a->user_data);
    } else {
        free(ptr);
    }
}
