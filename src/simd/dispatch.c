/* The kernel set's choice (issue 11).
 *
 * A dispatch build (CB_DISPATCH) carries one renamed copy of the runtime per kernel set and
 * the generated dispatch_table.c, whose public entry points forward through the table chosen
 * here. The choice is made once, by the library's constructor when it is loaded (or by the
 * first call into it, if a host's constructor runs first), before any object can exist: the
 * width W shapes every clip, skeleton and crowd, so objects of one set must never meet the
 * kernels of another. It never changes afterwards.
 *
 * A fixed build (one set, chosen by the `isa` option) compiles this file into that set; it only
 * answers cb_simd_kernel_info().
 *
 * The choice: CROWDBLEND_ISA when it names a set this library carries and this CPU runs;
 * otherwise the widest such set. A request that cannot be honoured is refused, not guessed at,
 * and the reason says why; the library prints nothing (STYLE.md section 7), the command-line
 * tool shows the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simd/dispatch.h"

#ifndef CB_DISPATCH
#define CB_DISPATCH 0
#endif

static const unsigned set_widths[CB_KERNEL_SET_COUNT] = {
    [CB_KERNEL_SET_PORTABLE] = 4, [CB_KERNEL_SET_SSE4] = 4, [CB_KERNEL_SET_AVX2] = 8,
    [CB_KERNEL_SET_AVX512] = 16,  [CB_KERNEL_SET_NEON] = 4,
};

/* Written once by the thread that makes the choice, before `state` becomes CHOSEN. */
static cb_kernel_info chosen;
static char reason[200];
enum { IDLE, CHOOSING, CHOSEN };
static atomic_int state;

_Atomic(const void *) cb_dispatch_table;

static unsigned built_sets(void)
{
#if CB_DISPATCH
    unsigned bits = 0;
    for (int s = 0; s < CB_KERNEL_SET_COUNT; ++s) {
        bits |= cb_dispatch_tables[s] != NULL ? 1u << s : 0u;
    }
    return bits;
#else
    return 1u << CB_KERNEL_SET;
#endif
}

/* The widest set in `usable` (sets are numbered from narrow to wide on each architecture). */
static cb_kernel_set widest(unsigned usable)
{
    cb_kernel_set best = CB_KERNEL_SET_PORTABLE;
    for (int s = 0; s < CB_KERNEL_SET_COUNT; ++s) {
        if ((usable >> s) & 1u) {
            best = (cb_kernel_set)s;
        }
    }
    return best;
}

static void decide(cb_kernel_info *out, char *why, size_t why_size)
{
    unsigned built = built_sets(), supported = 0;
    for (int s = 0; s < CB_KERNEL_SET_COUNT; ++s) {
        supported |= cb_cpu_supports((cb_kernel_set)s) ? 1u << s : 0u;
    }
    const char *want = getenv("CROWDBLEND_ISA");
    if (want != NULL && (want[0] == '\0' || strcmp(want, "auto") == 0)) {
        want = NULL;
    }
    cb_kernel_set set = widest(built & supported), asked;
    bool refused = CB_DISPATCH && want != NULL;
    if (!CB_DISPATCH) {
        set = widest(built);
        snprintf(why, why_size, "fixed when the library was built (isa=%s)%s", CB_ISA_NAME,
                 want != NULL ? "; CROWDBLEND_ISA is ignored by a fixed build" : "");
    } else if (want == NULL) {
        snprintf(why, why_size, "the widest set this CPU runs (CROWDBLEND_ISA not set)");
    } else if (!cb_kernel_set_from_name(want, &asked)) {
        snprintf(why, why_size,
                 "CROWDBLEND_ISA=%s refused: not a kernel set (portable, sse4, avx2, avx512, "
                 "neon, auto); using the widest set this CPU runs",
                 want);
    } else if (!((built >> asked) & 1u)) {
        snprintf(why, why_size,
                 "CROWDBLEND_ISA=%s refused: this library does not carry it; using the widest "
                 "set this CPU runs",
                 want);
    } else if (!((supported >> asked) & 1u)) {
        snprintf(why, why_size,
                 "CROWDBLEND_ISA=%s refused: this CPU lacks %s; using the widest set it runs", want,
                 cb_cpu_missing(asked));
    } else {
        set = asked;
        refused = false;
        snprintf(why, why_size, "forced by CROWDBLEND_ISA=%s", want);
    }
    *out = (cb_kernel_info){
        .set = set,
        .name = cb_kernel_set_name(set),
        .simd_width = set_widths[set],
        .dispatch = CB_DISPATCH,
        .built = built,
        .supported = supported,
        .reason = why,
        .refused = refused,
    };
#if !CB_DISPATCH
    /* A fixed build's width is its own, whatever the set's usual one (portable_width). */
    out->simd_width = CB_SIMD_WIDTH;
#endif
}

const void *cb_dispatch_choose(void)
{
    int expected = IDLE;
    if (atomic_compare_exchange_strong(&state, &expected, CHOOSING)) {
        decide(&chosen, reason, sizeof reason);
#if CB_DISPATCH
        atomic_store_explicit(&cb_dispatch_table, cb_dispatch_tables[chosen.set],
                              memory_order_release);
#endif
        atomic_store_explicit(&state, CHOSEN, memory_order_release);
    } else {
        /* Another thread is choosing: a few microseconds of getenv and CPUID. */
        while (atomic_load_explicit(&state, memory_order_acquire) != CHOSEN) {
        }
    }
    return atomic_load_explicit(&cb_dispatch_table, memory_order_acquire);
}

/* The choice is made when the library is loaded, before the host's main(). */
__attribute__((constructor)) static void choose_when_loaded(void)
{
    (void)cb_dispatch_choose();
}

cb_kernel_info cb_simd_kernel_info(void)
{
    (void)cb_dispatch_choose();
    return chosen;
}
