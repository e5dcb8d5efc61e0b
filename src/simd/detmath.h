/* Scalar float functions that give the same bits on every CPU and C library: atan2, sine,
 * cosine and exp for the per-character scalar code of a frame (IK, root-motion angles, the
 * demo's steering), where libm's atan2f / sinf / cosf / expf cannot be used.
 *
 * Why not libm: glibc's float functions are not correctly rounded (before 2.41), their x86-64
 * builds pick an FMA or a non-FMA variant by CPU at load time, the aarch64 build contracts
 * multiply-adds, and other C libraries use other algorithms; any of these changes the last bit
 * of a pose on some machine (issue 11). Here each function is a fixed sequence of IEEE float
 * additions, multiplications, divisions and exact bit operations, so with -ffp-contract=off
 * (set by meson for the whole project) and FLT_EVAL_METHOD 0 (x86-64 SSE, aarch64) it gives
 * the same bits everywhere.
 *
 * This header knows no SIMD width, so W-agnostic code (and the command-line tool in a dispatch
 * build) may include it. The polynomials are shared with src/simd/vmath.h, whose cb_vf_atan2
 * is the same sequence of operations lane by lane: the two agree bit for bit
 * (tests/test_vmath.c). Coefficients: scripts/fit_vmath.py.
 *
 * Error bounds (tests/test_vmath.c, against double-precision libm):
 *   cb_det_atan2f  <= 3.5e-7 rad absolute (the bound of cb_vf_atan2)
 *   cb_det_sinf, cb_det_cosf, cb_det_sincosf  <= 1.5e-7 absolute for |x| <= 6000 (reduction exact
 * there); beyond, the reduction loses bits (still the same bits everywhere) cb_det_expf <= 2.5e-7
 * relative + 6e-8 |x| (the product x log2(e) is rounded once)
 */
#ifndef CROWDBLEND_SIMD_DETMATH_H
#define CROWDBLEND_SIMD_DETMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* atan(a) / a as a polynomial in a^2 on a in [0, 1] (error 1.8e-8), highest degree first. */
static const float cb_vmath_atan_coeffs[9] = {
    2.766283502e-3f,  -1.573124912e-2f, 4.213762359e-2f,  -7.456854826e-2f, 1.061837064e-1f,
    -1.419779779e-1f, 1.999187203e-1f,  -3.333303671e-1f, 9.999999818e-1f,
};

/* 2^f on f in [-1/2, 1/2] (error 2e-9; the constant term is 1, so 2^0 = 1 exactly). */
static const float cb_vmath_exp2_coeffs[7] = {1.54614447e-4f,
                                              1.340042818e-3f,
                                              9.618056679e-3f,
                                              5.550327227e-2f,
                                              2.402265092e-1f,
                                              6.931472067e-1f,
                                              1.0f};

/* (sin(r) - r) / r^3 and (cos(r) - 1 + r^2 / 2) / r^4 in r^2 on r in [-pi/4, pi/4]
 * (errors 9.7e-9 and 7.6e-10 on sin and cos). */
static const float cb_detmath_sin_coeffs[3] = {-1.958789088e-4f, 8.332748271e-3f, -1.666666466e-1f};
static const float cb_detmath_cos_coeffs[3] = {2.454794209e-5f, -1.388830304e-3f, 4.166666466e-2f};

static inline float cb_det_horner(float z, const float *c, int n)
{
    float acc = c[0];
    for (int i = 1; i < n; ++i) {
        acc = acc * z + c[i];
    }
    return acc;
}

static inline uint32_t cb_det_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float cb_det_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The vector layer's max and min (x86 maxps / minps): the second operand when either is NaN. */
static inline float cb_det_max(float a, float b)
{
    return a > b ? a : b;
}

static inline float cb_det_min(float a, float b)
{
    return a < b ? a : b;
}

/* a where `take_a`, else b, by bit masks rather than a branch: for conditions that change
 * unpredictably from one call to the next (the quadrant of a character's heading). */
static inline float cb_det_pick(int take_a, float a, float b)
{
    const uint32_t m = 0u - (uint32_t)(take_a != 0);
    return cb_det_from_bits((cb_det_bits(a) & m) | (cb_det_bits(b) & ~m));
}

/* atan2(y, x) in [-pi, pi] with C's conventions for zeros, infinities and NaN; the scalar
 * twin of cb_vf_atan2 (see it for the method). Both octant corrections are computed and
 * picked (cb_det_pick), as the vector form selects them: the same operations on the taken
 * path, without the two branches that a velocity's direction made unpredictable. */
static inline float cb_det_atan2f(float y, float x)
{
    if (isnan(x) || isnan(y)) {
        return x + y;
    }
    float ax = fabsf(x), ay = fabsf(y);
    const int y_above = ay > ax; /* neither is NaN here: hi and lo as cb_det_max and min */
    float hi = cb_det_pick(y_above, ay, ax), lo = cb_det_pick(y_above, ax, ay);
    int both_inf = (ax == INFINITY) & (ay == ax);
    float num = cb_det_pick(both_inf, 1.0f, lo);
    float den = cb_det_pick(both_inf | (hi == 0.0f), 1.0f, hi);
    float a = num / den;
    float r = a * cb_det_horner(a * a, cb_vmath_atan_coeffs, 9);
    r = cb_det_pick(y_above, 1.57079632679489662f - r, r);
    r = cb_det_pick((x < 0.0f) | ((hi == 0.0f) & (signbit(x) != 0)), 3.14159265358979324f - r, r);
    return copysignf(r, y);
}

/* x = k pi/2 + r with r in about [-pi/4, pi/4]: pi/2 in three parts (8, 12 and 24 significant
 * bits), so k P1 and k P2 are exact for |k| < 4096 and r keeps full precision up to
 * |x| ~ 6000. Returns k mod 4. */
static inline unsigned cb_det_reduce_half_pi(float x, float *r)
{
    float k = floorf(x * 0.636619772f + 0.5f);
    *r = ((x - k * 1.5703125f) - k * 4.838705062866211e-4f) - k * -4.371138828673793e-8f;
    /* k is an integer-valued float; its residue mod 4 picks the quadrant. Beyond 2^24 every
     * float is a multiple of 4 and the residue is 0. */
    float q = k - 4.0f * floorf(k * 0.25f);
    return (unsigned)(int)q & 3u;
}

static inline void cb_det_sincos_reduced(float r, float *s, float *c)
{
    float z = r * r;
    *s = r + r * z * cb_det_horner(z, cb_detmath_sin_coeffs, 3);
    *c = (1.0f - 0.5f * z) + z * z * cb_det_horner(z, cb_detmath_cos_coeffs, 3);
}

/* sin(x) and cos(x) together; NaN and +-inf give NaN, sin(+-0) = +-0. Each quarter turn of
 * x's quadrant maps (sin, cos) to (cos, -sin): q turns, taken at once, swap and negate exactly
 * (the bits of the earlier one-turn-at-a-time loop, tests/test_vmath.c). The quadrant is
 * taken with bit operations, not branches: it is as good as random from one character to the
 * next, and without the branches follow_probe's modes 3 and 27 run 2-3 % faster
 * (docs/performance.md, session 18). Odd q swaps the two; q = 2, 3 negate the sine and
 * q = 1, 2 the cosine (a negation flips the sign bit, so the bits are those of -s and -c). */
static inline void cb_det_sincosf(float x, float *sin_out, float *cos_out)
{
    if (!isfinite(x)) {
        *sin_out = *cos_out = x - x;
        return;
    }
    if (x == 0.0f) {
        *sin_out = x;
        *cos_out = 1.0f;
        return;
    }
    float r, s, c;
    const uint32_t q = cb_det_reduce_half_pi(x, &r);
    cb_det_sincos_reduced(r, &s, &c);
    const uint32_t sb = cb_det_bits(s), cb = cb_det_bits(c), swap = 0u - (q & 1u);
    const uint32_t sin_bits = (sb & ~swap) | (cb & swap), cos_bits = (cb & ~swap) | (sb & swap);
    *sin_out = cb_det_from_bits(sin_bits ^ ((q & 2u) << 30));
    *cos_out = cb_det_from_bits(cos_bits ^ (((q + 1u) & 2u) << 30));
}

static inline float cb_det_sinf(float x)
{
    float s, c;
    cb_det_sincosf(x, &s, &c);
    return s;
}

static inline float cb_det_cosf(float x)
{
    float s, c;
    cb_det_sincosf(x, &s, &c);
    return c;
}

/* 2^x, the scalar twin of cb_vf_exp2: x < -126 gives 0, x > 127 gives 2^127, NaN gives NaN. */
static inline float cb_det_exp2f(float x)
{
    if (isnan(x)) {
        return x;
    }
    if (x < -126.0f) {
        return 0.0f;
    }
    float xc = cb_det_min(cb_det_max(x, -126.0f), 127.0f);
    float n = floorf(xc + 0.5f);
    float p = cb_det_horner(xc - n, cb_vmath_exp2_coeffs, 7);
    /* n + 127 is an integer in [1, 254]: the biased exponent of 2^n. */
    float scale = cb_det_from_bits((uint32_t)((int32_t)n + 127) << 23);
    return p * scale;
}

/* e^x = 2^(x log2 e), as cb_vf_exp. */
static inline float cb_det_expf(float x)
{
    return cb_det_exp2f(x * 1.44269504088896341f);
}

#endif
