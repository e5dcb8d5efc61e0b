/* Four doubles over SIMDe: the root-motion blend's x y z yaw, interpolated and summed in double
 * (asset_layout.h, the crowd's time stage). It is 4 doubles for every kernel set (not the width
 * W): one AVX register where the set has AVX, else two SSE2 halves (x y, z yaw; SIMDe's plain C
 * or NEON for those), so that a set without AVX passes no 32-byte vectors. It follows vf.h's
 * rules: one IEEE operation per lane, never fused, so each lane gives the bits of the scalar
 * double code it replaces, on every set. Conversions round to nearest (float to double is
 * exact). */
#ifndef CROWDBLEND_SIMD_DCOL4_H
#define CROWDBLEND_SIMD_DCOL4_H

#include <simde/x86/sse2.h>

#include "simd/col4.h"

#if defined(SIMDE_X86_AVX_NATIVE)
#include <simde/x86/avx.h>

typedef simde__m256d cb_dcol4;

CB_COL4_INLINE cb_dcol4 cb_dcol4_zero(void)
{
    return simde_mm256_setzero_pd();
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_set1(double x)
{
    return simde_mm256_set1_pd(x);
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_add(cb_dcol4 a, cb_dcol4 b)
{
    return simde_mm256_add_pd(a, b);
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_sub(cb_dcol4 a, cb_dcol4 b)
{
    return simde_mm256_sub_pd(a, b);
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_mul(cb_dcol4 a, cb_dcol4 b)
{
    return simde_mm256_mul_pd(a, b);
}
/* The floats of a, widened (exactly), and a rounded to floats. */
CB_COL4_INLINE cb_dcol4 cb_dcol4_from_col4(cb_col4 a)
{
    return simde_mm256_cvtps_pd(a);
}
CB_COL4_INLINE cb_col4 cb_dcol4_to_col4(cb_dcol4 a)
{
    return simde_mm256_cvtpd_ps(a);
}

#else

typedef struct cb_dcol4 {
    simde__m128d lo, hi;
} cb_dcol4;

CB_COL4_INLINE cb_dcol4 cb_dcol4_zero(void)
{
    return (cb_dcol4){simde_mm_setzero_pd(), simde_mm_setzero_pd()};
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_set1(double x)
{
    return (cb_dcol4){simde_mm_set1_pd(x), simde_mm_set1_pd(x)};
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_add(cb_dcol4 a, cb_dcol4 b)
{
    return (cb_dcol4){simde_mm_add_pd(a.lo, b.lo), simde_mm_add_pd(a.hi, b.hi)};
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_sub(cb_dcol4 a, cb_dcol4 b)
{
    return (cb_dcol4){simde_mm_sub_pd(a.lo, b.lo), simde_mm_sub_pd(a.hi, b.hi)};
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_mul(cb_dcol4 a, cb_dcol4 b)
{
    return (cb_dcol4){simde_mm_mul_pd(a.lo, b.lo), simde_mm_mul_pd(a.hi, b.hi)};
}
CB_COL4_INLINE cb_dcol4 cb_dcol4_from_col4(cb_col4 a)
{
    return (cb_dcol4){simde_mm_cvtps_pd(a), simde_mm_cvtps_pd(simde_mm_movehl_ps(a, a))};
}
CB_COL4_INLINE cb_col4 cb_dcol4_to_col4(cb_dcol4 a)
{
    return simde_mm_movelh_ps(simde_mm_cvtpd_ps(a.lo), simde_mm_cvtpd_ps(a.hi));
}

#endif

/* a with the lanes that a root track does not move set to +0: the yaw (keep_xyz), or y and
 * the yaw (keep_xz). */
CB_COL4_INLINE cb_col4 cb_col4_keep_xyz(cb_col4 a)
{
    return simde_mm_and_ps(a, simde_mm_castsi128_ps(simde_mm_setr_epi32(-1, -1, -1, 0)));
}
CB_COL4_INLINE cb_col4 cb_col4_keep_xz(cb_col4 a)
{
    return simde_mm_and_ps(a, simde_mm_castsi128_ps(simde_mm_setr_epi32(-1, 0, -1, 0)));
}

#endif
