/* The float vector of width W over SIMDe, and the only place that knows W's vector type.
 *
 * Every operation is a `static inline` wrapper around `simde_` calls, so the same code builds
 * natively (SSE4.2 / AVX2+FMA / AVX-512) and, with isa=portable (SIMDE_NO_NATIVE), through
 * SIMDe's plain-C fallbacks. Code outside src/simd uses these wrappers, never SIMDe directly.
 *
 * Masks (cb_vm) are what comparisons return: a k-register (one bit per lane) at W = 16, an
 * all-ones/all-zeros float vector at W = 4 and 8. Only the cb_vm_* functions look inside.
 *
 * NaN conventions follow x86: min/max return the second operand when either is NaN, and
 * ordered comparisons (lt, le, gt, ge, eq) are false for NaN. cb_vf_clamp01 relies on that.
 *
 * One result everywhere (issue 11): every kernel set (W = 4, 8, 16, SIMDe's portable C, NEON
 * through SIMDe) gives the same bits, lane for lane, because every operation here is one IEEE
 * single-precision operation with round-to-nearest, which all of them implement exactly:
 *  - no estimate instructions (rsqrtps, rcpps, vrsqrte: their results differ between vendors
 *    and between the x86 and ARM tables); 1/sqrt is sqrt then div, both correctly rounded;
 *  - one multiply-add policy: never fused. cb_vf_fmadd is a multiply then an add (two
 *    roundings) on every set. Fusing where hardware has FMA would round once on AVX2, AVX-512
 *    and NEON (SIMDe maps _mm_fmadd_ps to vfmaq_f32 there) and twice on SSE4.2 and in SIMDe's
 *    emulation, so no single policy but "unfused" is available on every set at full speed.
 *    meson also passes -ffp-contract=off, so the compiler does not fuse a * b + c by itself;
 *  - nothing here adds lanes together; cb_vf_hsum (tests only) says what it depends on.
 */
#ifndef CROWDBLEND_SIMD_VF_H
#define CROWDBLEND_SIMD_VF_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crowdblend/config.h"

#if defined(__GNUC__) || defined(__clang__)
/* Kernels take and return small structs of vectors; they must inline even at -O0, or the debug
 * (sanitizer) build spends its time copying registers through memory. */
#define CB_INLINE static inline __attribute__((always_inline))
#else
#define CB_INLINE static inline
#endif

#if CB_SIMD_WIDTH == 16
#include <simde/x86/avx512.h>
typedef simde__m512 cb_vf;
typedef simde__mmask16 cb_vm;
#elif CB_SIMD_WIDTH == 8
#include <simde/x86/avx2.h>
typedef simde__m256 cb_vf;
typedef simde__m256 cb_vm;
#elif CB_SIMD_WIDTH == 4
#include <simde/x86/sse4.1.h>
typedef simde__m128 cb_vf;
typedef simde__m128 cb_vm;
#else
#error "CB_SIMD_WIDTH must be 4, 8 or 16 (set by meson from the isa option)"
#endif

#define CB_W CB_SIMD_WIDTH
#define CB_VF_BYTES (CB_SIMD_WIDTH * 4)

_Static_assert(sizeof(cb_vf) == CB_SIMD_WIDTH * sizeof(float),
               "the SIMDe vector type must hold exactly CB_SIMD_WIDTH floats");

/* Aligns a declaration to the vector size, for stack staging buffers. */
#define CB_VF_ALIGNED _Alignas(CB_VF_BYTES)

/* ------------------------------------------------------------------------------------------ */
#if CB_SIMD_WIDTH == 16

CB_INLINE cb_vf cb_vf_zero(void) { return simde_mm512_setzero_ps(); }
CB_INLINE cb_vf cb_vf_set1(float x) { return simde_mm512_set1_ps(x); }
CB_INLINE cb_vf cb_vf_load(const float *p) { return simde_mm512_load_ps(p); }
CB_INLINE cb_vf cb_vf_loadu(const float *p) { return simde_mm512_loadu_ps(p); }
CB_INLINE void cb_vf_store(float *p, cb_vf a) { simde_mm512_store_ps(p, a); }
CB_INLINE void cb_vf_storeu(float *p, cb_vf a) { simde_mm512_storeu_ps(p, a); }
CB_INLINE cb_vf cb_vf_add(cb_vf a, cb_vf b) { return simde_mm512_add_ps(a, b); }
CB_INLINE cb_vf cb_vf_sub(cb_vf a, cb_vf b) { return simde_mm512_sub_ps(a, b); }
CB_INLINE cb_vf cb_vf_mul(cb_vf a, cb_vf b) { return simde_mm512_mul_ps(a, b); }
CB_INLINE cb_vf cb_vf_div(cb_vf a, cb_vf b) { return simde_mm512_div_ps(a, b); }
CB_INLINE cb_vf cb_vf_min(cb_vf a, cb_vf b) { return simde_mm512_min_ps(a, b); }
CB_INLINE cb_vf cb_vf_max(cb_vf a, cb_vf b) { return simde_mm512_max_ps(a, b); }
CB_INLINE cb_vf cb_vf_sqrt(cb_vf a) { return simde_mm512_sqrt_ps(a); }
CB_INLINE cb_vf cb_vf_and(cb_vf a, cb_vf b) { return simde_mm512_and_ps(a, b); }
CB_INLINE cb_vf cb_vf_andnot(cb_vf a, cb_vf b) { return simde_mm512_andnot_ps(a, b); }
CB_INLINE cb_vf cb_vf_xor(cb_vf a, cb_vf b) { return simde_mm512_xor_ps(a, b); }
CB_INLINE cb_vf cb_vf_floor(cb_vf a) { return simde_mm512_floor_ps(a); }

CB_INLINE cb_vm cb_vf_lt(cb_vf a, cb_vf b) { return simde_mm512_cmp_ps_mask(a, b, SIMDE_CMP_LT_OQ); }
CB_INLINE cb_vm cb_vf_le(cb_vf a, cb_vf b) { return simde_mm512_cmp_ps_mask(a, b, SIMDE_CMP_LE_OQ); }
CB_INLINE cb_vm cb_vf_gt(cb_vf a, cb_vf b) { return simde_mm512_cmp_ps_mask(a, b, SIMDE_CMP_GT_OQ); }
CB_INLINE cb_vm cb_vf_ge(cb_vf a, cb_vf b) { return simde_mm512_cmp_ps_mask(a, b, SIMDE_CMP_GE_OQ); }
CB_INLINE cb_vm cb_vf_eq(cb_vf a, cb_vf b) { return simde_mm512_cmp_ps_mask(a, b, SIMDE_CMP_EQ_OQ); }

/* m ? a : b, lane by lane. */
CB_INLINE cb_vf cb_vf_select(cb_vm m, cb_vf a, cb_vf b) { return simde_mm512_mask_blend_ps(m, b, a); }
CB_INLINE cb_vm cb_vm_and(cb_vm a, cb_vm b) { return (cb_vm)(a & b); }
CB_INLINE cb_vm cb_vm_or(cb_vm a, cb_vm b) { return (cb_vm)(a | b); }
CB_INLINE cb_vm cb_vm_not(cb_vm a) { return (cb_vm)~a; }
/* One bit per lane, lane 0 in bit 0. */
CB_INLINE unsigned cb_vm_bits(cb_vm a) { return (unsigned)a; }
/* Two 8-lane halves joined: SIMDe 0.7's _mm512_setr_ps has no native path (gcc builds it lane
 * by lane, 15 dependent masked broadcasts). */
CB_INLINE cb_vf cb_vf_from_ptrs(const float *const *p, size_t k)
{
    const simde__m256 lo = simde_mm256_setr_ps(p[0][k], p[1][k], p[2][k], p[3][k], p[4][k],
                                               p[5][k], p[6][k], p[7][k]);
    const simde__m256 hi = simde_mm256_setr_ps(p[8][k], p[9][k], p[10][k], p[11][k], p[12][k],
                                               p[13][k], p[14][k], p[15][k]);
    return simde_mm512_insertf32x8(simde_mm512_castps256_ps512(lo), hi, 1);
}

/* ------------------------------------------------------------------------------------------ */
#elif CB_SIMD_WIDTH == 8

CB_INLINE cb_vf cb_vf_zero(void) { return simde_mm256_setzero_ps(); }
CB_INLINE cb_vf cb_vf_set1(float x) { return simde_mm256_set1_ps(x); }
CB_INLINE cb_vf cb_vf_load(const float *p) { return simde_mm256_load_ps(p); }
CB_INLINE cb_vf cb_vf_loadu(const float *p) { return simde_mm256_loadu_ps(p); }
CB_INLINE void cb_vf_store(float *p, cb_vf a) { simde_mm256_store_ps(p, a); }
CB_INLINE void cb_vf_storeu(float *p, cb_vf a) { simde_mm256_storeu_ps(p, a); }
CB_INLINE cb_vf cb_vf_add(cb_vf a, cb_vf b) { return simde_mm256_add_ps(a, b); }
CB_INLINE cb_vf cb_vf_sub(cb_vf a, cb_vf b) { return simde_mm256_sub_ps(a, b); }
CB_INLINE cb_vf cb_vf_mul(cb_vf a, cb_vf b) { return simde_mm256_mul_ps(a, b); }
CB_INLINE cb_vf cb_vf_div(cb_vf a, cb_vf b) { return simde_mm256_div_ps(a, b); }
CB_INLINE cb_vf cb_vf_min(cb_vf a, cb_vf b) { return simde_mm256_min_ps(a, b); }
CB_INLINE cb_vf cb_vf_max(cb_vf a, cb_vf b) { return simde_mm256_max_ps(a, b); }
CB_INLINE cb_vf cb_vf_sqrt(cb_vf a) { return simde_mm256_sqrt_ps(a); }
CB_INLINE cb_vf cb_vf_and(cb_vf a, cb_vf b) { return simde_mm256_and_ps(a, b); }
CB_INLINE cb_vf cb_vf_andnot(cb_vf a, cb_vf b) { return simde_mm256_andnot_ps(a, b); }
CB_INLINE cb_vf cb_vf_xor(cb_vf a, cb_vf b) { return simde_mm256_xor_ps(a, b); }
CB_INLINE cb_vf cb_vf_floor(cb_vf a) { return simde_mm256_floor_ps(a); }

CB_INLINE cb_vm cb_vf_lt(cb_vf a, cb_vf b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_LT_OQ); }
CB_INLINE cb_vm cb_vf_le(cb_vf a, cb_vf b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_LE_OQ); }
CB_INLINE cb_vm cb_vf_gt(cb_vf a, cb_vf b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_GT_OQ); }
CB_INLINE cb_vm cb_vf_ge(cb_vf a, cb_vf b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_GE_OQ); }
CB_INLINE cb_vm cb_vf_eq(cb_vf a, cb_vf b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_EQ_OQ); }

CB_INLINE cb_vf cb_vf_select(cb_vm m, cb_vf a, cb_vf b) { return simde_mm256_blendv_ps(b, a, m); }
CB_INLINE cb_vm cb_vm_and(cb_vm a, cb_vm b) { return simde_mm256_and_ps(a, b); }
CB_INLINE cb_vm cb_vm_or(cb_vm a, cb_vm b) { return simde_mm256_or_ps(a, b); }
CB_INLINE cb_vm cb_vm_not(cb_vm a)
{
    return simde_mm256_xor_ps(a, simde_mm256_castsi256_ps(simde_mm256_set1_epi32(-1)));
}
CB_INLINE unsigned cb_vm_bits(cb_vm a) { return (unsigned)simde_mm256_movemask_ps(a); }
CB_INLINE cb_vf cb_vf_from_ptrs(const float *const *p, size_t k)
{
    return simde_mm256_setr_ps(p[0][k], p[1][k], p[2][k], p[3][k], p[4][k], p[5][k], p[6][k],
                               p[7][k]);
}

/* ------------------------------------------------------------------------------------------ */
#else /* CB_SIMD_WIDTH == 4 */

CB_INLINE cb_vf cb_vf_zero(void) { return simde_mm_setzero_ps(); }
CB_INLINE cb_vf cb_vf_set1(float x) { return simde_mm_set1_ps(x); }
CB_INLINE cb_vf cb_vf_load(const float *p) { return simde_mm_load_ps(p); }
CB_INLINE cb_vf cb_vf_loadu(const float *p) { return simde_mm_loadu_ps(p); }
CB_INLINE void cb_vf_store(float *p, cb_vf a) { simde_mm_store_ps(p, a); }
CB_INLINE void cb_vf_storeu(float *p, cb_vf a) { simde_mm_storeu_ps(p, a); }
CB_INLINE cb_vf cb_vf_add(cb_vf a, cb_vf b) { return simde_mm_add_ps(a, b); }
CB_INLINE cb_vf cb_vf_sub(cb_vf a, cb_vf b) { return simde_mm_sub_ps(a, b); }
CB_INLINE cb_vf cb_vf_mul(cb_vf a, cb_vf b) { return simde_mm_mul_ps(a, b); }
CB_INLINE cb_vf cb_vf_div(cb_vf a, cb_vf b) { return simde_mm_div_ps(a, b); }
CB_INLINE cb_vf cb_vf_min(cb_vf a, cb_vf b) { return simde_mm_min_ps(a, b); }
CB_INLINE cb_vf cb_vf_max(cb_vf a, cb_vf b) { return simde_mm_max_ps(a, b); }
CB_INLINE cb_vf cb_vf_sqrt(cb_vf a) { return simde_mm_sqrt_ps(a); }
CB_INLINE cb_vf cb_vf_and(cb_vf a, cb_vf b) { return simde_mm_and_ps(a, b); }
CB_INLINE cb_vf cb_vf_andnot(cb_vf a, cb_vf b) { return simde_mm_andnot_ps(a, b); }
CB_INLINE cb_vf cb_vf_xor(cb_vf a, cb_vf b) { return simde_mm_xor_ps(a, b); }
CB_INLINE cb_vf cb_vf_floor(cb_vf a) { return simde_mm_floor_ps(a); }

CB_INLINE cb_vm cb_vf_lt(cb_vf a, cb_vf b) { return simde_mm_cmplt_ps(a, b); }
CB_INLINE cb_vm cb_vf_le(cb_vf a, cb_vf b) { return simde_mm_cmple_ps(a, b); }
CB_INLINE cb_vm cb_vf_gt(cb_vf a, cb_vf b) { return simde_mm_cmpgt_ps(a, b); }
CB_INLINE cb_vm cb_vf_ge(cb_vf a, cb_vf b) { return simde_mm_cmpge_ps(a, b); }
CB_INLINE cb_vm cb_vf_eq(cb_vf a, cb_vf b) { return simde_mm_cmpeq_ps(a, b); }

CB_INLINE cb_vf cb_vf_select(cb_vm m, cb_vf a, cb_vf b) { return simde_mm_blendv_ps(b, a, m); }
CB_INLINE cb_vm cb_vm_and(cb_vm a, cb_vm b) { return simde_mm_and_ps(a, b); }
CB_INLINE cb_vm cb_vm_or(cb_vm a, cb_vm b) { return simde_mm_or_ps(a, b); }
CB_INLINE cb_vm cb_vm_not(cb_vm a)
{
    return simde_mm_xor_ps(a, simde_mm_castsi128_ps(simde_mm_set1_epi32(-1)));
}
CB_INLINE unsigned cb_vm_bits(cb_vm a) { return (unsigned)simde_mm_movemask_ps(a); }
CB_INLINE cb_vf cb_vf_from_ptrs(const float *const *p, size_t k)
{
    return simde_mm_setr_ps(p[0][k], p[1][k], p[2][k], p[3][k]);
}

#endif

/* cb_vf_from_ptrs(p, k): lane i is p[i][k], W scalars from W addresses (a gather of one float
 * per lane, built in registers: a vector load of W scalar stores would wait for them, as the
 * store buffer cannot forward several stores to one load; docs/performance.md, session 13). */

/* ------------------------------------------------------------------------------------------ */
/* Width-independent operations, built from the ones above.                                   */

/* All W bits of a full mask. */
#define CB_VM_ALL_BITS ((1u << CB_SIMD_WIDTH) - 1u)

CB_INLINE bool cb_vm_any(cb_vm a) { return cb_vm_bits(a) != 0; }
CB_INLINE bool cb_vm_all(cb_vm a) { return cb_vm_bits(a) == CB_VM_ALL_BITS; }

/* A vector with only the sign bit set in every lane. */
CB_INLINE cb_vf cb_vf_sign_mask(void) { return cb_vf_set1(-0.0f); }
CB_INLINE cb_vf cb_vf_neg(cb_vf a) { return cb_vf_xor(a, cb_vf_sign_mask()); }
CB_INLINE cb_vf cb_vf_abs(cb_vf a) { return cb_vf_andnot(cb_vf_sign_mask(), a); }
/* The sign bits of a (0 or -0.0 per lane). */
CB_INLINE cb_vf cb_vf_sign_bits(cb_vf a) { return cb_vf_and(a, cb_vf_sign_mask()); }
/* Negates the lanes of a where sign_bits (from cb_vf_sign_bits) is set: branch-free flips. */
CB_INLINE cb_vf cb_vf_xor_sign(cb_vf a, cb_vf sign_bits) { return cb_vf_xor(a, sign_bits); }

/* a * b + c, rounded twice (the multiply, then the add) on every kernel set: the one
 * multiply-add policy of the file comment. The name stays because the kernels read as fused
 * sums; what they cost against real FMA is in docs/performance.md (issue 11). */
CB_INLINE cb_vf cb_vf_fmadd(cb_vf a, cb_vf b, cb_vf c) { return cb_vf_add(cb_vf_mul(a, b), c); }

/* c - a * b, rounded twice. Equal, bit for bit, to -(a * b) + c. */
CB_INLINE cb_vf cb_vf_fnmadd(cb_vf a, cb_vf b, cb_vf c) { return cb_vf_sub(c, cb_vf_mul(a, b)); }

/* 1 / sqrt(a): a correctly rounded square root, then a correctly rounded division, so every
 * kernel set gets the same bits (within 1.5 ulp of the exact value, about 1.8e-7 relative).
 * It replaces a hardware estimate refined by Newton-Raphson, whose first guess differs between
 * CPU vendors and between x86 and ARM. a = 0 gives +inf, a < 0 or NaN gives NaN: callers
 * select away lanes that are not strictly positive. */
CB_INLINE cb_vf cb_vf_rsqrt(cb_vf a)
{
    return cb_vf_div(cb_vf_set1(1.0f), cb_vf_sqrt(a));
}

/* Clamps to [0, 1]; NaN becomes 0. max(a, 0) returns its second operand, 0, when a is NaN. */
CB_INLINE cb_vf cb_vf_clamp01(cb_vf a)
{
    return cb_vf_min(cb_vf_max(a, cb_vf_zero()), cb_vf_set1(1.0f));
}

/* Lanes where a is finite (not NaN, not +-Inf): |a| < Inf is false for both. */
CB_INLINE cb_vm cb_vf_is_finite(cb_vf a)
{
    return cb_vf_lt(cb_vf_abs(a), cb_vf_set1(INFINITY));
}

/* Sum of the lanes, in lane order, so the result does not depend on how the compiler would
 * have paired them. It does depend on W (it adds W lanes), so no result of the library may
 * come from it: tests and debugging only. */
CB_INLINE float cb_vf_hsum(cb_vf a)
{
    CB_VF_ALIGNED float lanes[CB_W];
    cb_vf_store(lanes, a);
    float s = 0.0f;
    for (int i = 0; i < CB_W; ++i) {
        s += lanes[i];
    }
    return s;
}

/* Lane i of a (tests and debugging). */
CB_INLINE float cb_vf_lane(cb_vf a, int i)
{
    CB_VF_ALIGNED float lanes[CB_W];
    cb_vf_store(lanes, a);
    return lanes[i];
}

#endif
