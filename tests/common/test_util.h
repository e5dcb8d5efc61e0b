/* Shared by every test program: the seed, checks that report the seed, error trackers.
 *
 * Every randomized test draws from cb_test_prng(). The seed is fixed by default (CI is
 * reproducible), printed at start as a TAP comment, and CB_TEST_SEED=<n> in the environment
 * replaces it, so a failure seen with one seed can be replayed. */
#ifndef CROWDBLEND_TEST_UTIL_H
#define CROWDBLEND_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "base/prng.h"

/* The seed of this run (CB_TEST_SEED or the default), read once. */
uint64_t cb_test_seed(void);

/* A fresh stream for one test case: seeded from the run seed and the case's name, so cases do
 * not shift each other's numbers when one is added. */
cb_prng cb_test_prng(const char *case_name);

/* CB_TEST_SCALE from the environment, in (0, 1] (1 when unset): meson sets it below 1 in
 * unoptimized, sanitized and emulated builds (tests/meson.build). */
double cb_test_scale(void);

/* n scaled by cb_test_scale(), at least `least`: the case count of a heavy randomized test, so
 * that it finishes well inside meson's default timeout in every build (issue 11). */
size_t cb_test_scaled(size_t n, size_t least);

/* Prints "# <text>" (a TAP comment): figures that belong in the test log. */
void cb_test_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs a cmocka group after printing the seed; use instead of cmocka_run_group_tests. */
#define CB_RUN_TESTS(tests) cb_test_run(#tests, tests, sizeof(tests) / sizeof((tests)[0]))
int cb_test_run(const char *name, const struct CMUnitTest *tests, size_t count);

/* Fails the test with a message that carries the seed when !(cond). */
#define CB_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            cb_test_fail_at(__FILE__, __LINE__, __VA_ARGS__);                                      \
        }                                                                                          \
    } while (0)
void cb_test_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Allocation hooks (cb_allocator: cb_test_bump_alloc, cb_test_bump_free, &bump) that hand out
 * consecutive pieces of one block the test owns (base, size) and count the calls; free only
 * counts. For checks on the memory a host gives: no one else ever touches or advises it. */
typedef struct cb_test_bump {
    unsigned char *base;
    size_t size, used;
    size_t allocs, frees, last_size, last_align, max_align;
} cb_test_bump;

void *cb_test_bump_alloc(size_t size, size_t align, void *user);
void cb_test_bump_free(void *ptr, size_t size, void *user);

/* The transparent huge page advice of the mapping that holds p, read from /proc/self/smaps: 1
 * when its VmFlags carry "hg" (madvise MADV_HUGEPAGE was applied to it), 0 when not, -1 where
 * this cannot be told (not Linux, no /proc, a kernel without transparent huge pages, an
 * emulator such as qemu-user that does not pass madvise on: a control mapping advised by the
 * test itself must show the flag first). With
 * huge_kb (may be NULL) the mapping's AnonHugePages in KB, or -1. */
int cb_test_huge_advised(const void *p, long *huge_kb);

/* Whether the C library advises its own large blocks as huge pages (glibc 2.35 on does under
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1): cb_test_huge_advised of a fresh 8 MB malloc block, 1,
 * 0 or -1 as there. Where 1, a block from malloc shows "hg" whoever allocated it, so a check
 * that crowdblend left one unadvised cannot be made. */
int cb_test_libc_advises(void);

/* Largest error seen and where: accuracy tests feed every comparison through one. */
typedef struct cb_err_track {
    const char *what;
    double max;
    size_t worst; /* index of the worst case */
    size_t count;
} cb_err_track;

static inline cb_err_track cb_err_track_make(const char *what)
{
    return (cb_err_track){what, 0.0, 0, 0};
}

/* Records |got - want| (NaN counts as infinite error). */
void cb_err_track_add(cb_err_track *t, double got, double want, size_t index);

/* Prints the maximum as a TAP comment and fails if it exceeds bound. */
void cb_err_track_check(const cb_err_track *t, double bound);

#endif
