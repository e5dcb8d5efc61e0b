/* Kernel-set choice and the run-time dispatch of a dispatch build (issue 11; dispatch.c, cpu.c,
 * the generated dispatch_table.c, docs/architecture.md "Kernel sets and run-time dispatch"). */
#ifndef CROWDBLEND_SIMD_DISPATCH_H
#define CROWDBLEND_SIMD_DISPATCH_H

#include <stdatomic.h>
#include <stdbool.h>

#include "crowdblend/simd.h"

/* cpu.c: the first feature of `set` this CPU lacks (a static string), or NULL when it can run
 * the set. Compiled for the baseline; safe to call on any CPU of the architecture. */
const char *cb_cpu_missing(cb_kernel_set set);
bool cb_cpu_supports(cb_kernel_set set);

/* cpu.c: the set CROWDBLEND_ISA spells `name`; false for an unknown name. */
bool cb_kernel_set_from_name(const char *name, cb_kernel_set *out);

/* dispatch_table.c (generated): per set, the address of its table of public entry points, or
 * NULL for a set this library does not carry. */
extern const void *const cb_dispatch_tables[CB_KERNEL_SET_COUNT];

/* dispatch.c: the table of the chosen set, NULL until the choice is made. */
extern _Atomic(const void *) cb_dispatch_table;

/* dispatch.c: makes the choice (once; concurrent callers wait for it) and returns the table. */
const void *cb_dispatch_choose(void);

/* The table every forwarder calls through: one load, a well-predicted branch, and after the
 * first call (or the library's constructor) never the slow path. */
static inline const void *cb_dispatch_active(void)
{
    const void *t = atomic_load_explicit(&cb_dispatch_table, memory_order_acquire);
    return t != NULL ? t : cb_dispatch_choose();
}

#endif
