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

/* The columns of R(q) S for a unit quaternion q = (x, y, z, w) and scale s: Shoemake's
 * quaternion-to-matrix formula in its cb_col4 form, each column's three elements at once (the
 * fourth lane is not used), for the hierarchies that build one local matrix at a time (IK's model
 * frames from a pose). Every element is the same operations on the same operands, in the same
 * order, as the other two forms, so all three give the same bits:
 *  - cb_fq_scaled_columns (base/scalar_math_t.h): the scalar reference (ltm_ref.c, the _ref
 *    twin of local-to-model), written out element by element to be read and checked;
 *  - cb_soa_xform_to_mat34 (simd/soa_mat.h): W joints at once, one element per vector, for
 *    local-to-model over whole joint groups.
 * One form per width: the formula is short, and each form fits its callers' data layout (a
 * shuffle form would not serve W lanes, a lane-per-joint form not one joint). */
CB_COL4_INLINE void cb_col4_scaled_columns(const float q[4], const float s[3], cb_col4 out[3])
{
    cb_col4 v = cb_col4_setr(q[0], q[1], q[2], q[3]);
    cb_col4 v2 = cb_col4_add(v, v); /* (x2, y2, z2, w2) */
    /* (yy + zz, xx + zz, xx + yy) */
    cb_col4 d = cb_col4_add(
        cb_col4_mul(CB_COL4_SHUFFLE(v, v, 1, 0, 0, 0), CB_COL4_SHUFFLE(v2, v2, 1, 0, 0, 0)),
        cb_col4_mul(CB_COL4_SHUFFLE(v, v, 2, 2, 1, 1), CB_COL4_SHUFFLE(v2, v2, 2, 2, 1, 1)));
    cb_col4 diag = cb_col4_sub(cb_col4_set1(1.0f), d);
    /* (xy, xz, yz) and (wz, wy, wx) */
    cb_col4 o = cb_col4_mul(CB_COL4_SHUFFLE(v, v, 0, 0, 1, 1), CB_COL4_SHUFFLE(v2, v2, 1, 2, 2, 2));
    cb_col4 w = cb_col4_mul(CB_COL4_SHUFFLE(v, v, 3, 3, 3, 3), CB_COL4_SHUFFLE(v2, v2, 2, 1, 0, 0));
    cb_col4 plus = cb_col4_add(o, w), minus = cb_col4_sub(o, w);
    /* (1 - (yy + zz), xy + wz, xz - wy), (xy - wz, 1 - (xx + zz), yz + wx),
     * (xz + wy, yz - wx, 1 - (xx + yy)) */
    cb_col4 c0 = CB_COL4_SHUFFLE(CB_COL4_SHUFFLE(diag, plus, 0, 0, 0, 0), minus, 0, 2, 1, 1);
    cb_col4 c1 = CB_COL4_SHUFFLE(CB_COL4_SHUFFLE(minus, diag, 0, 0, 1, 1), plus, 0, 2, 2, 2);
    cb_col4 c2 = CB_COL4_SHUFFLE(CB_COL4_SHUFFLE(plus, minus, 1, 1, 2, 2), diag, 0, 2, 2, 2);
    out[0] = cb_col4_mul(c0, cb_col4_set1(s[0]));
    out[1] = cb_col4_mul(c1, cb_col4_set1(s[1]));
    out[2] = cb_col4_mul(c2, cb_col4_set1(s[2]));
}

#endif
