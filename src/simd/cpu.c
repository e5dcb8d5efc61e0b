/* What this CPU can run, and the names of the kernel sets (issue 11).
 *
 * Compiled for the architecture's baseline in a dispatch build (nothing here may use an
 * instruction the CPU has not been asked about yet). On x86-64 the compiler's CPU tests
 * (__builtin_cpu_supports, which reads CPUID once and, for AVX and AVX-512, also checks with
 * XGETBV that the operating system saves the wider registers) decide; each set asks for the
 * features its -march level lets the compiler use that can be tested by name with gcc and
 * clang alike. On aarch64 Advanced SIMD is part of the baseline. */
#include <string.h>

#include "simd/dispatch.h"

static const char *const set_names[CB_KERNEL_SET_COUNT] = {
    [CB_KERNEL_SET_PORTABLE] = "portable", [CB_KERNEL_SET_SSE4] = "sse4",
    [CB_KERNEL_SET_AVX2] = "avx2",         [CB_KERNEL_SET_AVX512] = "avx512",
    [CB_KERNEL_SET_NEON] = "neon",
};

const char *cb_kernel_set_name(cb_kernel_set set)
{
    return (unsigned)set < CB_KERNEL_SET_COUNT ? set_names[set] : "unknown";
}

bool cb_kernel_set_from_name(const char *name, cb_kernel_set *out)
{
    for (int s = 0; s < CB_KERNEL_SET_COUNT; ++s) {
        if (strcmp(name, set_names[s]) == 0) {
            *out = (cb_kernel_set)s;
            return true;
        }
    }
    return false;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

/* The first feature of `names` this CPU lacks, or NULL. */
#define FIRST_MISSING(...)                                                                         \
    do {                                                                                           \
        static const char *const names_[] = {__VA_ARGS__};                                         \
        for (size_t i_ = 0; i_ < sizeof names_ / sizeof names_[0]; ++i_) {                         \
            if (!cpu_has(names_[i_])) {                                                            \
                return names_[i_];                                                                 \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* __builtin_cpu_supports wants a string literal, so each name is spelled once here. */
static bool cpu_has(const char *name)
{
    __builtin_cpu_init();
#define HAS(feature)                                                                               \
    do {                                                                                           \
        if (strcmp(name, feature) == 0) {                                                          \
            return __builtin_cpu_supports(feature);                                                \
        }                                                                                          \
    } while (0)
    HAS("sse3");
    HAS("ssse3");
    HAS("sse4.1");
    HAS("sse4.2");
    HAS("popcnt");
    HAS("avx");
    HAS("avx2");
    HAS("bmi");
    HAS("bmi2");
    HAS("fma");
    HAS("avx512f");
    HAS("avx512bw");
    HAS("avx512cd");
    HAS("avx512dq");
    HAS("avx512vl");
#undef HAS
    return false;
}

/* x86-64-v2: SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT (and CMPXCHG16B, LAHF, which every CPU with
 * SSE4.2 has). */
static const char *missing_v2(void)
{
    FIRST_MISSING("sse3", "ssse3", "sse4.1", "sse4.2", "popcnt");
    return NULL;
}

/* x86-64-v3: v2 and AVX, AVX2, BMI1, BMI2, FMA (F16C, LZCNT and MOVBE come with them). */
static const char *missing_v3(void)
{
    FIRST_MISSING("avx", "avx2", "bmi", "bmi2", "fma");
    return missing_v2();
}

/* x86-64-v4: v3 and AVX-512 F, BW, CD, DQ, VL. */
static const char *missing_v4(void)
{
    FIRST_MISSING("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl");
    return missing_v3();
}

static const char *first_missing(cb_kernel_set set)
{
    switch (set) {
    case CB_KERNEL_SET_PORTABLE:
        return NULL;
    case CB_KERNEL_SET_SSE4:
        return missing_v2();
    case CB_KERNEL_SET_AVX2:
        return missing_v3();
    case CB_KERNEL_SET_AVX512:
        return missing_v4();
    default:
        return "an aarch64 CPU";
    }
}

#elif defined(__aarch64__)

static const char *first_missing(cb_kernel_set set)
{
    return set == CB_KERNEL_SET_PORTABLE || set == CB_KERNEL_SET_NEON ? NULL : "an x86-64 CPU";
}

#else

static const char *first_missing(cb_kernel_set set)
{
    return set == CB_KERNEL_SET_PORTABLE ? NULL : "a CPU this build knows how to test";
}

#endif

const char *cb_cpu_missing(cb_kernel_set set)
{
    if ((unsigned)set >= CB_KERNEL_SET_COUNT) {
        return "a known kernel set";
    }
    return first_missing(set);
}

bool cb_cpu_supports(cb_kernel_set set)
{
    return cb_cpu_missing(set) == NULL;
}
