/* One 4-float matrix column over SIMDe's SSE: for the products of single matrices along a
 * hierarchy (local-to-model's per-joint products, IK's model frames from a pose), where each
 * product depends on the one before and the parallelism is inside one matrix. It is 4 floats
 * for every kernel set (not the width W), needs only SSE (or SIMDe's plain C), and follows
 * vf.h's rules: one IEEE operation per lane, never fused, so the same bits everywhere. */
#ifndef CROWDBLEND_SIMD_COL4_H
#define CROWDBLEND_SIMD_COL4_H

#include <simde/x86/sse.h>

#if defined(__GNUC__) || defined(__clang__)
#define CB_COL4_INLINE static inline __attribute__((always_inline))
#else
#define CB_COL4_INLINE static inline
#endif

typedef simde__m128 cb_col4;

CB_COL4_INLINE cb_col4 cb_col4_loadu(const float *p)
{
    return simde_mm_loadu_ps(p);
}
CB_COL4_INLINE void cb_col4_storeu(float *p, cb_col4 a)
{
    simde_mm_storeu_ps(p, a);
}
CB_COL4_INLINE cb_col4 cb_col4_set1(float x)
{
    return simde_mm_set1_ps(x);
}
CB_COL4_INLINE cb_col4 cb_col4_setr(float a, float b, float c, float d)
{
    return simde_mm_setr_ps(a, b, c, d);
}
CB_COL4_INLINE cb_col4 cb_col4_add(cb_col4 a, cb_col4 b)
{
    return simde_mm_add_ps(a, b);
}
CB_COL4_INLINE cb_col4 cb_col4_sub(cb_col4 a, cb_col4 b)
{
    return simde_mm_sub_ps(a, b);
}
CB_COL4_INLINE cb_col4 cb_col4_mul(cb_col4 a, cb_col4 b)
{
    return simde_mm_mul_ps(a, b);
}
/* |a|, lane by lane (the sign bit cleared). */
CB_COL4_INLINE cb_col4 cb_col4_abs(cb_col4 a)
{
    return simde_mm_andnot_ps(simde_mm_set1_ps(-0.0f), a);
}
/* Masks: a <= b lane by lane (false where either is NaN), their conjunction, and whether every
 * lane of a mask is set. */
CB_COL4_INLINE cb_col4 cb_col4_le(cb_col4 a, cb_col4 b)
{
    return simde_mm_cmple_ps(a, b);
}
CB_COL4_INLINE cb_col4 cb_col4_and(cb_col4 a, cb_col4 b)
{
    return simde_mm_and_ps(a, b);
}
CB_COL4_INLINE int cb_col4_all(cb_col4 mask)
{
    return simde_mm_movemask_ps(mask) == 0xf;
}
/* a * b + c with two roundings, on every kernel set (the multiply-add policy of vf.h). */
CB_COL4_INLINE cb_col4 cb_col4_fmadd(cb_col4 a, cb_col4 b, cb_col4 c)
{
    return simde_mm_add_ps(simde_mm_mul_ps(a, b), c);
}

/* (a[i0], a[i1], b[i2], b[i3]) for constant lane numbers (a macro: the shuffle's lanes must be
 * constants the compiler sees, at every optimization level). */
#define CB_COL4_SHUFFLE(a, b, i0, i1, i2, i3)                                                      \
    simde_mm_shuffle_ps((a), (b), SIMDE_MM_SHUFFLE((i3), (i2), (i1), (i0)))

/* Lane 0, 1 or 2 of a in every lane. */
CB_COL4_INLINE cb_col4 cb_col4_splat_x(cb_col4 a)
{
    return CB_COL4_SHUFFLE(a, a, 0, 0, 0, 0);
}
CB_COL4_INLINE cb_col4 cb_col4_splat_y(cb_col4 a)
{
    return CB_COL4_SHUFFLE(a, a, 1, 1, 1, 1);
}
CB_COL4_INLINE cb_col4 cb_col4_splat_z(cb_col4 a)
{
    return CB_COL4_SHUFFLE(a, a, 2, 2, 2, 2);
}

#endif
