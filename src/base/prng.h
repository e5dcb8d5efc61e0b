/* A small seeded PRNG for tests, benchmarks and the demo: reproducible streams from a 64-bit
 * seed. splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014; constants as in Vigna's public-domain splitmix64.c). Not for cryptography. */
#ifndef CROWDBLEND_BASE_PRNG_H
#define CROWDBLEND_BASE_PRNG_H

#include <math.h>
#include <stdint.h>

typedef struct cb_prng {
    uint64_t state;
} cb_prng;

static inline cb_prng cb_prng_seed(uint64_t seed)
{
    return (cb_prng){seed};
}

static inline uint64_t cb_prng_next(cb_prng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 random bits. */
static inline double cb_prng_double(cb_prng *r)
{
    return (double)(cb_prng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [lo, hi). */
static inline float cb_prng_range(cb_prng *r, float lo, float hi)
{
    return (float)(lo + (hi - lo) * cb_prng_double(r));
}

/* Uniform integer in [0, n), n > 0 (the tiny modulo bias is irrelevant here). */
static inline uint32_t cb_prng_below(cb_prng *r, uint32_t n)
{
    return (uint32_t)(cb_prng_next(r) % n);
}

/* A uniformly distributed unit quaternion (x, y, z, w): Shoemake, "Uniform random rotations",
 * Graphics Gems III, 1992. */
static inline void cb_prng_unit_quat(cb_prng *r, float out[4])
{
    const double two_pi = 6.283185307179586;
    double u1 = cb_prng_double(r), u2 = cb_prng_double(r), u3 = cb_prng_double(r);
    double a = sqrt(1.0 - u1), b = sqrt(u1);
    out[0] = (float)(a * sin(two_pi * u2));
    out[1] = (float)(a * cos(two_pi * u2));
    out[2] = (float)(b * sin(two_pi * u3));
    out[3] = (float)(b * cos(two_pi * u3));
}

#endif
