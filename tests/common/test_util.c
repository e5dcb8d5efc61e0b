#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and madvise under -std=c11 */
#endif
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

enum { DEFAULT_SEED = 20261121 };

uint64_t cb_test_seed(void)
{
    static uint64_t seed;
    static int have;
    if (!have) {
        const char *env = getenv("CB_TEST_SEED");
        seed = env != NULL && *env != '\0' ? strtoull(env, NULL, 0) : DEFAULT_SEED;
        have = 1;
    }
    return seed;
}

double cb_test_scale(void)
{
    const char *s = getenv("CB_TEST_SCALE");
    double v = s != NULL ? strtod(s, NULL) : 1.0;
    return v > 0.0 && v <= 1.0 ? v : 1.0;
}

size_t cb_test_scaled(size_t n, size_t least)
{
    size_t v = (size_t)((double)n * cb_test_scale());
    return v > least ? v : least;
}

cb_prng cb_test_prng(const char *case_name)
{
    /* FNV-1a of the name, mixed with the run seed. */
    uint64_t h = 1469598103934665603ull;
    for (const char *c = case_name; *c != '\0'; ++c) {
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    }
    cb_prng r = cb_prng_seed(cb_test_seed() ^ h);
    cb_prng_next(&r);
    return r;
}

void cb_test_note(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    printf("# ");
    vprintf(fmt, args);
    printf("\n");
    va_end(args);
    fflush(stdout);
}

int cb_test_run(const char *name, const struct CMUnitTest *tests, size_t count)
{
    cb_test_note("%s: seed %llu (set CB_TEST_SEED to replay)", name,
                 (unsigned long long)cb_test_seed());
    return _cmocka_run_group_tests(name, tests, count, NULL, NULL);
}

void cb_test_fail_at(const char *file, int line, const char *fmt, ...)
{
    char msg[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    print_error("%s (seed %llu; CB_TEST_SEED=%llu replays)\n", msg,
                (unsigned long long)cb_test_seed(), (unsigned long long)cb_test_seed());
    _fail(file, line);
}

void cb_err_track_add(cb_err_track *t, double got, double want, size_t index)
{
    double e = fabs(got - want);
    if (isnan(e)) {
        e = INFINITY;
    }
    if (e > t->max) {
        t->max = e;
        t->worst = index;
    }
    t->count++;
}

void cb_err_track_check(const cb_err_track *t, double bound)
{
    cb_test_note("%-34s max abs error %.3e (bound %.1e, %zu values)", t->what, t->max, bound,
                 t->count);
    CB_CHECK(t->max <= bound, "%s: max error %.3e at case %zu exceeds the bound %.1e", t->what,
             t->max, t->worst, bound);
}

/* The huge page advice of the mapping that holds p as /proc/self/smaps shows it (its VmFlags'
 * "hg"), and its AnonHugePages in KB into *huge_kb: -1 where smaps cannot be read. */
static int smaps_advice(const void *p, long *huge_kb)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) {
        return -1;
    }
    const unsigned long at = (unsigned long)(uintptr_t)p;
    char line[512];
    int found = 0, advised = -1;
    while (advised < 0 && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        char perms[8];
        /* A mapping's first line: "lo-hi perms ..."; its fields follow ("Name: value"). */
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
            found = lo <= at && at < hi;
        } else if (found && huge_kb != NULL && strncmp(line, "AnonHugePages:", 14) == 0) {
            *huge_kb = strtol(line + 14, NULL, 10);
        } else if (found && strncmp(line, "VmFlags:", 8) == 0) {
            advised = strstr(line + 8, " hg") != NULL;
        }
    }
    fclose(f);
    return advised;
}

/* Whether advice shows in smaps at all: a control mapping of its own, advised here, must show
 * "hg". It does not where the kernel has no transparent huge pages or where the process runs
 * under an emulator that takes madvise without passing it on (qemu-user, the test command's
 * aarch64 run). Asked once. */
static bool advice_observable(void)
{
    static int known = -1;
    if (known < 0) {
        known = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        const size_t size = (size_t)4 << 20;
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            known = madvise(m, size, MADV_HUGEPAGE) == 0 && smaps_advice(m, NULL) == 1;
            munmap(m, size);
        }
#endif
    }
    return known == 1;
}

int cb_test_huge_advised(const void *p, long *huge_kb)
{
    if (huge_kb != NULL) {
        *huge_kb = -1;
    }
    return advice_observable() ? smaps_advice(p, huge_kb) : -1;
}

int cb_test_libc_advises(void)
{
    const size_t size = (size_t)8 << 20;
    unsigned char *volatile p = malloc(size); /* volatile: the pair is not optimised away */
    if (p == NULL) {
        return -1;
    }
    int advised = cb_test_huge_advised(p + size / 2, NULL);
    free(p);
    return advised;
}

void *cb_test_bump_alloc(size_t size, size_t align, void *user)
{
    cb_test_bump *b = user;
    uintptr_t base = (uintptr_t)b->base;
    size_t at = (size_t)((base + b->used + align - 1) / align * align - base);
    b->allocs++;
    b->last_size = size;
    b->last_align = align;
    b->max_align = align > b->max_align ? align : b->max_align;
    if (at > b->size || size > b->size - at) {
        return NULL;
    }
    b->used = at + size;
    return b->base + at;
}

void cb_test_bump_free(void *ptr, size_t size, void *user)
{
    (void)ptr, (void)size;
    ((cb_test_bump *)user)->frees++;
}
