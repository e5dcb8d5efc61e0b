/* Transcendental functions on cb_vf (W lanes): atan2, log2, exp2 and what is built from them.
 *
 * The blend-weight solvers need angles (directional blend spaces), logarithms (thin-plate RBF)
 * and powers/exponentials (inverse-distance weights, Gaussian RBF) for a whole batch of
 * characters at once. libm works on one float at a time, so these are branch-free polynomial
 * versions over the vector layer of vf.h. Each reduces its argument to a short interval and
 * evaluates a near-minimax polynomial whose coefficients come from scripts/fit_vmath.py
 * (Chebyshev fits with mpmath; the script prints the approximation error quoted below).
 *
 * Error bounds (tests/test_vmath.c checks each against double-precision libm):
 *   cb_vf_atan2   absolute error <= 3.5e-7 rad (measured 2.7e-7: the polynomial's 1.8e-8 plus
 *                 float rounding of the reduction and of pi/2 - r, pi - r)
 *   cb_vf_log2    absolute error <= 2e-7 for x in [0.5, 2] (measured 1.1e-7), relative 1.2e-7
 *                 elsewhere (7.8e-8)
 *   cb_vf_exp2    relative error <= 2.5e-7 for x in [-126, 127] (measured 1.0e-7)
 * Results are the same bits on every kernel set (no estimate instructions, no fused
 * multiply-adds: vf.h); cb_vf_atan2 and cb_vf_exp2 also equal their scalar twins in
 * simd/detmath.h bit for bit.
 *
 * Integer operations on the float bits (exponent extraction and construction) live here too,
 * as a few width-specific wrappers: this header is part of src/simd, the only place that may
 * call SIMDe directly. */
#ifndef CROWDBLEND_SIMD_VMATH_H
#define CROWDBLEND_SIMD_VMATH_H

#include "simd/detmath.h"
#include "simd/vf.h"

/* ------------------------------------------------------------------------------------------ */
/* The float bits as 32-bit integers                                                          */

#if CB_SIMD_WIDTH == 16
typedef simde__m512i cb_vi;
CB_INLINE cb_vi cb_vi_from_bits(cb_vf a) { return simde_mm512_castps_si512(a); }
CB_INLINE cb_vf cb_vf_from_bits(cb_vi a) { return simde_mm512_castsi512_ps(a); }
CB_INLINE cb_vi cb_vi_set1(int32_t x) { return simde_mm512_set1_epi32(x); }
CB_INLINE cb_vi cb_vi_add(cb_vi a, cb_vi b) { return simde_mm512_add_epi32(a, b); }
CB_INLINE cb_vi cb_vi_sub(cb_vi a, cb_vi b) { return simde_mm512_sub_epi32(a, b); }
CB_INLINE cb_vi cb_vi_and(cb_vi a, cb_vi b) { return simde_mm512_and_si512(a, b); }
CB_INLINE cb_vi cb_vi_or(cb_vi a, cb_vi b) { return simde_mm512_or_si512(a, b); }
#define cb_vi_shl(a, n) simde_mm512_slli_epi32((a), (n))
#define cb_vi_shr(a, n) simde_mm512_srli_epi32((a), (n))
#elif CB_SIMD_WIDTH == 8
typedef simde__m256i cb_vi;
CB_INLINE cb_vi cb_vi_from_bits(cb_vf a) { return simde_mm256_castps_si256(a); }
CB_INLINE cb_vf cb_vf_from_bits(cb_vi a) { return simde_mm256_castsi256_ps(a); }
CB_INLINE cb_vi cb_vi_set1(int32_t x) { return simde_mm256_set1_epi32(x); }
CB_INLINE cb_vi cb_vi_add(cb_vi a, cb_vi b) { return simde_mm256_add_epi32(a, b); }
CB_INLINE cb_vi cb_vi_sub(cb_vi a, cb_vi b) { return simde_mm256_sub_epi32(a, b); }
CB_INLINE cb_vi cb_vi_and(cb_vi a, cb_vi b) { return simde_mm256_and_si256(a, b); }
CB_INLINE cb_vi cb_vi_or(cb_vi a, cb_vi b) { return simde_mm256_or_si256(a, b); }
#define cb_vi_shl(a, n) simde_mm256_slli_epi32((a), (n))
#define cb_vi_shr(a, n) simde_mm256_srli_epi32((a), (n))
#else
typedef simde__m128i cb_vi;
CB_INLINE cb_vi cb_vi_from_bits(cb_vf a) { return simde_mm_castps_si128(a); }
CB_INLINE cb_vf cb_vf_from_bits(cb_vi a) { return simde_mm_castsi128_ps(a); }
CB_INLINE cb_vi cb_vi_set1(int32_t x) { return simde_mm_set1_epi32(x); }
CB_INLINE cb_vi cb_vi_add(cb_vi a, cb_vi b) { return simde_mm_add_epi32(a, b); }
CB_INLINE cb_vi cb_vi_sub(cb_vi a, cb_vi b) { return simde_mm_sub_epi32(a, b); }
CB_INLINE cb_vi cb_vi_and(cb_vi a, cb_vi b) { return simde_mm_and_si128(a, b); }
CB_INLINE cb_vi cb_vi_or(cb_vi a, cb_vi b) { return simde_mm_or_si128(a, b); }
#define cb_vi_shl(a, n) simde_mm_slli_epi32((a), (n))
#define cb_vi_shr(a, n) simde_mm_srli_epi32((a), (n))
#endif

/* The mask whose lane i is set when bit i of bits is (the inverse of cb_vm_bits), so that
 * masks can be kept as small integers. */
#if CB_SIMD_WIDTH == 16
CB_INLINE cb_vm cb_vm_from_bits(unsigned bits) { return (cb_vm)bits; }
#elif CB_SIMD_WIDTH == 8
CB_INLINE cb_vm cb_vm_from_bits(unsigned bits)
{
    simde__m256i lanes = simde_mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    simde__m256i set = simde_mm256_and_si256(simde_mm256_set1_epi32((int32_t)bits), lanes);
    return simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(set, lanes));
}
#else
CB_INLINE cb_vm cb_vm_from_bits(unsigned bits)
{
    simde__m128i lanes = simde_mm_setr_epi32(1, 2, 4, 8);
    simde__m128i set = simde_mm_and_si128(simde_mm_set1_epi32((int32_t)bits), lanes);
    return simde_mm_castsi128_ps(simde_mm_cmpeq_epi32(set, lanes));
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                              */

/* Rounds to the nearest integer (halfway cases up). Exact for |a| < 2^22. */
CB_INLINE cb_vf cb_vf_round(cb_vf a)
{
    return cb_vf_floor(cb_vf_add(a, cb_vf_set1(0.5f)));
}

/* Lanes where a is NaN: NaN is the only value not equal to itself. */
CB_INLINE cb_vm cb_vf_is_nan(cb_vf a)
{
    return cb_vm_not(cb_vf_eq(a, a));
}

/* Lanes whose sign bit is set, -0.0 included: +-1 with a's sign is compared with 0. */
CB_INLINE cb_vm cb_vf_sign_set(cb_vf a)
{
    return cb_vf_lt(cb_vf_xor(cb_vf_set1(1.0f), cb_vf_sign_bits(a)), cb_vf_zero());
}

/* |a| with the sign of s (the sign bit is copied, so -0.0 counts as negative). */
CB_INLINE cb_vf cb_vf_copysign(cb_vf a, cb_vf s)
{
    return cb_vf_xor(cb_vf_abs(a), cb_vf_sign_bits(s));
}

/* Evaluates c[0] z^(n-1) + ... + c[n-1] by Horner's rule with fused steps. */
#define CB_VF_HORNER(z, c, n, out)                                                             \
    do {                                                                                       \
        cb_vf horner_acc_ = cb_vf_set1((c)[0]);                                                \
        for (int horner_i_ = 1; horner_i_ < (n); ++horner_i_) {                                \
            horner_acc_ = cb_vf_fmadd(horner_acc_, (z), cb_vf_set1((c)[horner_i_]));           \
        }                                                                                      \
        (out) = horner_acc_;                                                                   \
    } while (0)

/* ------------------------------------------------------------------------------------------ */
/* atan2                                                                                      */

/* cb_vmath_atan_coeffs (simd/detmath.h): atan(a) / a in a^2 on [0, 1], error 1.8e-8. */

/* The angle of (x, y) in [-pi, pi], as C's atan2(y, x): the reduction takes
 * a = min(|x|, |y|) / max(|x|, |y|) in [0, 1], evaluates atan(a), then reflects it into the
 * octant of (x, y): pi/2 - r when |y| > |x|, pi - r when x < 0, and the sign of y.
 * Zero and sign conventions: atan2(+-0, +0) = +-0, atan2(+-0, x < 0) = +-pi (the sign bit of
 * y is copied, as in IEEE atan2), atan2(0, 0) never divides by zero. Infinite inputs give the
 * limiting angle of their direction; NaN in either input gives NaN.
 * Error: <= 3.5e-7 rad (tests/test_vmath.c). */
CB_INLINE cb_vf cb_vf_atan2(cb_vf y, cb_vf x)
{
    cb_vf ax = cb_vf_abs(x), ay = cb_vf_abs(y);
    cb_vf hi = cb_vf_max(ax, ay), lo = cb_vf_min(ax, ay);
    /* 0/0 at the origin and inf/inf for two infinities are replaced by 0/1 and 1/1. */
    cb_vm both_inf = cb_vm_and(cb_vf_eq(ax, cb_vf_set1(INFINITY)), cb_vf_eq(ay, ax));
    cb_vf num = cb_vf_select(both_inf, cb_vf_set1(1.0f), lo);
    cb_vf den = cb_vf_select(cb_vm_or(both_inf, cb_vf_eq(hi, cb_vf_zero())), cb_vf_set1(1.0f), hi);
    cb_vf a = cb_vf_div(num, den);
    cb_vf p;
    CB_VF_HORNER(cb_vf_mul(a, a), cb_vmath_atan_coeffs, 9, p);
    cb_vf r = cb_vf_mul(a, p);
    r = cb_vf_select(cb_vf_gt(ay, ax), cb_vf_sub(cb_vf_set1(1.57079632679489662f), r), r);
    /* x < 0, and x = -0.0 with y = +-0 (IEEE gives +-pi there), reflect to pi - r. */
    cb_vm neg_x = cb_vm_or(cb_vf_lt(x, cb_vf_zero()),
                           cb_vm_and(cb_vf_eq(hi, cb_vf_zero()), cb_vf_sign_set(x)));
    r = cb_vf_select(neg_x, cb_vf_sub(cb_vf_set1(3.14159265358979324f), r), r);
    r = cb_vf_copysign(r, y);
    cb_vm nan = cb_vm_or(cb_vf_is_nan(x), cb_vf_is_nan(y));
    return cb_vf_select(nan, cb_vf_add(x, y), r);
}

/* ------------------------------------------------------------------------------------------ */
/* sine and cosine                                                                            */

/* sin(x) and cos(x) together: the vector twin of cb_det_sincosf, bit for bit (the same
 * operations in the same order): x = k pi/2 + r with pi/2 in three parts, the two polynomials
 * in r^2, then the quadrant's swap and signs; NaN for a non-finite x (x - x), (x, 1) at
 * x = +-0. q = k - 4 floor(k / 4) is exact, so it is 0, 1, 2 or 3 (the scalar's (unsigned)q & 3)
 * for every finite k; a k that is not (x near FLT_MAX) gives a NaN r, and both forms return
 * the NaN of quadrant 0. */
CB_INLINE void cb_vf_sincos(cb_vf x, cb_vf *sin_out, cb_vf *cos_out)
{
    const cb_vf one = cb_vf_set1(1.0f);
    cb_vf k = cb_vf_floor(cb_vf_add(cb_vf_mul(x, cb_vf_set1(0.636619772f)), cb_vf_set1(0.5f)));
    cb_vf r = cb_vf_sub(cb_vf_sub(cb_vf_sub(x, cb_vf_mul(k, cb_vf_set1(1.5703125f))),
                                  cb_vf_mul(k, cb_vf_set1(4.838705062866211e-4f))),
                        cb_vf_mul(k, cb_vf_set1(-4.371138828673793e-8f)));
    cb_vf q =
        cb_vf_sub(k, cb_vf_mul(cb_vf_set1(4.0f), cb_vf_floor(cb_vf_mul(k, cb_vf_set1(0.25f)))));
    /* cb_det_sincos_reduced */
    cb_vf z = cb_vf_mul(r, r), hs, hc;
    CB_VF_HORNER(z, cb_detmath_sin_coeffs, 3, hs);
    CB_VF_HORNER(z, cb_detmath_cos_coeffs, 3, hc);
    cb_vf s = cb_vf_add(r, cb_vf_mul(cb_vf_mul(r, z), hs));
    cb_vf c =
        cb_vf_add(cb_vf_sub(one, cb_vf_mul(cb_vf_set1(0.5f), z)), cb_vf_mul(cb_vf_mul(z, z), hc));
    /* q = 0: (s, c); 1: (c, -s); 2: (-s, -c); 3: (-c, s) */
    cb_vm q1 = cb_vf_eq(q, one), q2 = cb_vf_eq(q, cb_vf_set1(2.0f)),
          q3 = cb_vf_eq(q, cb_vf_set1(3.0f));
    cb_vm odd = cb_vm_or(q1, q3);
    cb_vf a = cb_vf_select(odd, c, s), b = cb_vf_select(odd, s, c);
    a = cb_vf_select(cb_vm_or(q2, q3), cb_vf_neg(a), a);
    b = cb_vf_select(cb_vm_or(q1, q2), cb_vf_neg(b), b);
    cb_vm zero = cb_vf_eq(x, cb_vf_zero()), finite = cb_vf_is_finite(x);
    cb_vf nan = cb_vf_sub(x, x);
    *sin_out = cb_vf_select(finite, cb_vf_select(zero, x, a), nan);
    *cos_out = cb_vf_select(finite, cb_vf_select(zero, one, b), nan);
}

/* ------------------------------------------------------------------------------------------ */
/* log2                                                                                       */

/* log2(m) / t as a polynomial in t^2, t = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2))
 * (scripts/fit_vmath.py: error 3.5e-10). */
static const float cb_vmath_log2_coeffs[4] = {4.317176975e-1f, 5.76715186e-1f, 9.617988388e-1f,
                                              2.88539008f};

/* log2(x). x = m 2^e with m in [sqrt(1/2), sqrt(2)) read from the float bits; then
 * log2(x) = e + t P(t^2). log2(1) = 0 exactly (t = 0), so exact powers of two give exact
 * results. x below FLT_MIN (zero and denormals) gives -inf, x < 0 and NaN give NaN,
 * +inf gives +inf. Error: <= 2e-7 absolute near x = 1, 1e-7 relative elsewhere. */
CB_INLINE cb_vf cb_vf_log2(cb_vf x)
{
    cb_vi bits = cb_vi_from_bits(x);
    /* Mantissa with the exponent of 1.0: m in [1, 2). */
    cb_vf m = cb_vf_from_bits(
        cb_vi_or(cb_vi_and(bits, cb_vi_set1(0x007FFFFF)), cb_vi_set1(0x3F800000)));
    /* The biased exponent field as a float: OR it into the mantissa of 2^23 and subtract. */
    cb_vf e = cb_vf_sub(cb_vf_from_bits(cb_vi_or(cb_vi_and(cb_vi_shr(bits, 23), cb_vi_set1(0xFF)),
                                                 cb_vi_set1(0x4B000000))),
                        cb_vf_set1(8388608.0f + 127.0f));
    cb_vm big = cb_vf_gt(m, cb_vf_set1(1.41421356237309505f));
    m = cb_vf_select(big, cb_vf_mul(m, cb_vf_set1(0.5f)), m);
    e = cb_vf_select(big, cb_vf_add(e, cb_vf_set1(1.0f)), e);
    cb_vf t = cb_vf_div(cb_vf_sub(m, cb_vf_set1(1.0f)), cb_vf_add(m, cb_vf_set1(1.0f)));
    cb_vf p;
    CB_VF_HORNER(cb_vf_mul(t, t), cb_vmath_log2_coeffs, 4, p);
    cb_vf r = cb_vf_fmadd(t, p, e);
    r = cb_vf_select(cb_vf_lt(x, cb_vf_set1(1.17549435e-38f)), cb_vf_set1(-INFINITY), r);
    r = cb_vf_select(cb_vf_eq(x, cb_vf_set1(INFINITY)), x, r);
    cb_vm bad = cb_vm_or(cb_vf_lt(x, cb_vf_zero()), cb_vf_is_nan(x));
    return cb_vf_select(bad, cb_vf_set1(NAN), r);
}

/* ------------------------------------------------------------------------------------------ */
/* exp2                                                                                       */

/* cb_vmath_exp2_coeffs (simd/detmath.h): 2^f on [-1/2, 1/2], error 2e-9, exact at 0. */

/* 2^x. x = n + f with n = round(x) and f in [-1/2, 1/2]; 2^n is built in the exponent bits.
 * Integer x gives the exact power of two. x < -126 gives 0 (results would be denormal),
 * x > 127 gives 2^127 (finite: no caller needs overflow), NaN gives NaN.
 * Error: <= 2.5e-7 relative. */
CB_INLINE cb_vf cb_vf_exp2(cb_vf x)
{
    cb_vf xc = cb_vf_min(cb_vf_max(x, cb_vf_set1(-126.0f)), cb_vf_set1(127.0f));
    cb_vf n = cb_vf_round(xc);
    cb_vf f = cb_vf_sub(xc, n);
    cb_vf p;
    CB_VF_HORNER(f, cb_vmath_exp2_coeffs, 7, p);
    /* n + 1.5 * 2^23 holds n + 127 in its low mantissa bits once 127 is added; subtracting the
     * bits of 1.5 * 2^23 leaves the biased exponent, which is shifted into place. */
    cb_vi biased = cb_vi_sub(cb_vi_from_bits(cb_vf_add(n, cb_vf_set1(12582912.0f + 127.0f))),
                             cb_vi_from_bits(cb_vf_set1(12582912.0f)));
    cb_vf scale = cb_vf_from_bits(cb_vi_shl(biased, 23));
    cb_vf r = cb_vf_mul(p, scale);
    r = cb_vf_select(cb_vf_lt(x, cb_vf_set1(-126.0f)), cb_vf_zero(), r);
    return cb_vf_select(cb_vf_is_nan(x), x, r);
}

/* e^x = 2^(x log2 e). The product rounds once, so the relative error grows as 6e-8 |x|. */
CB_INLINE cb_vf cb_vf_exp(cb_vf x)
{
    return cb_vf_exp2(cb_vf_mul(x, cb_vf_set1(1.44269504088896341f)));
}

/* ln x = log2(x) ln 2; conventions as cb_vf_log2. */
CB_INLINE cb_vf cb_vf_log(cb_vf x)
{
    return cb_vf_mul(cb_vf_log2(x), cb_vf_set1(0.693147180559945309f));
}

#endif
