/* Matrix kernels for local-to-model (src/ltm/ltm.c) on top of soa.h:
 *  - cb_soa_mat34: W affine 3x4 matrices in SoA form (one vector per element), built from SoA
 *    transforms and multiplied lane by lane (SIMD over joints or over characters);
 *  - cb_mat4c: a 4x4 matrix of cb_col4 columns (simd/col4.h), for the per-joint products along
 *    the hierarchy, where each product depends on its parent's;
 *  - cb_vf_transpose: a W x W transpose of W vectors, to move between "lanes are joints" and
 *    "lanes are characters".
 * A 4x4 matrix is column-major as in cglm: m[c][r], column c = (m[c][0], m[c][1], m[c][2],
 * m[c][3]).
 * Error bounds are stated per kernel and checked by tests/test_soa_mat.c against a
 * double-precision reference. */
#ifndef CROWDBLEND_SIMD_SOA_MAT_H
#define CROWDBLEND_SIMD_SOA_MAT_H

#include "simd/col4.h"
#include "simd/soa.h"

/* ------------------------------------------------------------------------------------------ */
/* SoA affine matrices                                                                        */

/* W affine matrices: c[col][row] for col 0..3 (col 3 is the translation), rows 0..2; the
 * implied bottom row is (0, 0, 0, 1). */
typedef struct cb_soa_mat34 {
    cb_vf c[4][3];
} cb_soa_mat34;

/* T * R * S for a unit rotation (Shoemake's quaternion-to-matrix formula with the doubled
 * products shared). Each rotation element has about 3 roundings (<= 4e-7 absolute for unit q);
 * a non-unit q scales the rotation part by |q|^2 (the formula assumes |q| = 1). NaN propagates;
 * no special case at zero. */
CB_INLINE cb_soa_mat34 cb_soa_xform_to_mat34(cb_soa_xform x)
{
    cb_soa_quat q = x.q;
    cb_vf x2 = cb_vf_add(q.x, q.x), y2 = cb_vf_add(q.y, q.y), z2 = cb_vf_add(q.z, q.z);
    cb_vf xx = cb_vf_mul(q.x, x2), yy = cb_vf_mul(q.y, y2), zz = cb_vf_mul(q.z, z2);
    cb_vf xy = cb_vf_mul(q.x, y2), xz = cb_vf_mul(q.x, z2), yz = cb_vf_mul(q.y, z2);
    cb_vf wx = cb_vf_mul(q.w, x2), wy = cb_vf_mul(q.w, y2), wz = cb_vf_mul(q.w, z2);
    cb_vf one = cb_vf_set1(1.0f);
    cb_soa_mat34 m;
    m.c[0][0] = cb_vf_mul(cb_vf_sub(one, cb_vf_add(yy, zz)), x.s.x);
    m.c[0][1] = cb_vf_mul(cb_vf_add(xy, wz), x.s.x);
    m.c[0][2] = cb_vf_mul(cb_vf_sub(xz, wy), x.s.x);
    m.c[1][0] = cb_vf_mul(cb_vf_sub(xy, wz), x.s.y);
    m.c[1][1] = cb_vf_mul(cb_vf_sub(one, cb_vf_add(xx, zz)), x.s.y);
    m.c[1][2] = cb_vf_mul(cb_vf_add(yz, wx), x.s.y);
    m.c[2][0] = cb_vf_mul(cb_vf_add(xz, wy), x.s.z);
    m.c[2][1] = cb_vf_mul(cb_vf_sub(yz, wx), x.s.z);
    m.c[2][2] = cb_vf_mul(cb_vf_sub(one, cb_vf_add(xx, yy)), x.s.z);
    m.c[3][0] = x.t.x;
    m.c[3][1] = x.t.y;
    m.c[3][2] = x.t.z;
    return m;
}

/* a * b for affine matrices, lane by lane: 36 multiply-adds. Each element is a 3-term (4 for
 * the translation) fused sum: error within 3-4 roundings of the largest product. */
CB_INLINE cb_soa_mat34 cb_soa_mat34_mul(const cb_soa_mat34 *a, const cb_soa_mat34 *b)
{
    cb_soa_mat34 r;
    for (int c = 0; c < 3; ++c) {
        for (int i = 0; i < 3; ++i) {
            cb_vf v = cb_vf_mul(a->c[0][i], b->c[c][0]);
            v = cb_vf_fmadd(a->c[1][i], b->c[c][1], v);
            r.c[c][i] = cb_vf_fmadd(a->c[2][i], b->c[c][2], v);
        }
    }
    for (int i = 0; i < 3; ++i) {
        cb_vf v = cb_vf_fmadd(a->c[0][i], b->c[3][0], a->c[3][i]);
        v = cb_vf_fmadd(a->c[1][i], b->c[3][1], v);
        r.c[3][i] = cb_vf_fmadd(a->c[2][i], b->c[3][2], v);
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* 4x4 matrices of columns (simd/col4.h)                                                     */

/* The four columns of a 4x4 matrix. */
typedef struct cb_mat4c {
    cb_col4 c[4];
} cb_mat4c;

/* Transposes 4 columns in place (rows become columns): the classic unpack/move sequence. */
CB_INLINE cb_mat4c cb_mat4c_transpose(cb_mat4c m)
{
    cb_col4 t0 = simde_mm_unpacklo_ps(m.c[0], m.c[1]);
    cb_col4 t1 = simde_mm_unpacklo_ps(m.c[2], m.c[3]);
    cb_col4 t2 = simde_mm_unpackhi_ps(m.c[0], m.c[1]);
    cb_col4 t3 = simde_mm_unpackhi_ps(m.c[2], m.c[3]);
    return (cb_mat4c){{simde_mm_movelh_ps(t0, t1), simde_mm_movehl_ps(t1, t0),
                       simde_mm_movelh_ps(t2, t3), simde_mm_movehl_ps(t3, t2)}};
}

/* Element (c, r) of lane `lane` of W affine matrices stored as 12 arrays of W floats, element
 * (c, r) at soa[(3 c + r) W + lane] (what storing a cb_soa_mat34 gives). */
CB_INLINE float cb_soa_mat34_elem(const float *soa, int c, int r, size_t lane)
{
    return soa[(size_t)(3 * c + r) * CB_W + lane];
}

/* parent * local, where local is the affine matrix in lane `lane` of a stored cb_soa_mat34
 * (each element broadcast once, straight from memory). The parent may be any 4x4.
 * 12 broadcasts and 12 multiply-adds: the per-joint cost of local-to-model.
 * Error: 3-term fused sums per element (4 for the translation). */
CB_INLINE cb_mat4c cb_mat4c_mul_affine(const cb_mat4c *p, const float *soa, size_t lane)
{
    cb_mat4c r;
    for (int c = 0; c < 3; ++c) {
        cb_col4 v = cb_col4_mul(p->c[0], cb_col4_set1(cb_soa_mat34_elem(soa, c, 0, lane)));
        v = cb_col4_fmadd(p->c[1], cb_col4_set1(cb_soa_mat34_elem(soa, c, 1, lane)), v);
        r.c[c] = cb_col4_fmadd(p->c[2], cb_col4_set1(cb_soa_mat34_elem(soa, c, 2, lane)), v);
    }
    cb_col4 v = cb_col4_fmadd(p->c[0], cb_col4_set1(cb_soa_mat34_elem(soa, 3, 0, lane)), p->c[3]);
    v = cb_col4_fmadd(p->c[1], cb_col4_set1(cb_soa_mat34_elem(soa, 3, 1, lane)), v);
    r.c[3] = cb_col4_fmadd(p->c[2], cb_col4_set1(cb_soa_mat34_elem(soa, 3, 2, lane)), v);
    return r;
}

/* Stores a cb_soa_mat34 as 12 arrays of W floats (the layout the two functions above read). */
CB_INLINE void cb_soa_mat34_store(float *soa, const cb_soa_mat34 *m)
{
    for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 3; ++r) {
            cb_vf_store(soa + (size_t)(3 * c + r) * CB_W, m->c[c][r]);
        }
    }
}

/* a * b for general 4x4 matrices, b given as 16 column-major floats (inverse bind matrices).
 * 16 broadcasts, 16 multiply-adds; 4-term fused sums per element. */
CB_INLINE cb_mat4c cb_mat4c_mul(const cb_mat4c *a, const float *b)
{
    cb_mat4c r;
    for (int c = 0; c < 4; ++c) {
        cb_col4 v = cb_col4_mul(a->c[0], cb_col4_set1(b[4 * c + 0]));
        v = cb_col4_fmadd(a->c[1], cb_col4_set1(b[4 * c + 1]), v);
        v = cb_col4_fmadd(a->c[2], cb_col4_set1(b[4 * c + 2]), v);
        r.c[c] = cb_col4_fmadd(a->c[3], cb_col4_set1(b[4 * c + 3]), v);
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* W x W transpose                                                                            */

/* r[i] lane j becomes r[j] lane i. Exact (only moves data). The standard unpack / shuffle
 * ladders: log2(W) stages of W shuffles each. */
CB_INLINE void cb_vf_transpose(cb_vf r[CB_W])
{
#if CB_SIMD_WIDTH == 4
    cb_vf t0 = simde_mm_unpacklo_ps(r[0], r[1]), t1 = simde_mm_unpacklo_ps(r[2], r[3]);
    cb_vf t2 = simde_mm_unpackhi_ps(r[0], r[1]), t3 = simde_mm_unpackhi_ps(r[2], r[3]);
    r[0] = simde_mm_movelh_ps(t0, t1);
    r[1] = simde_mm_movehl_ps(t1, t0);
    r[2] = simde_mm_movelh_ps(t2, t3);
    r[3] = simde_mm_movehl_ps(t3, t2);
#elif CB_SIMD_WIDTH == 8
    cb_vf t[8], u[8];
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = simde_mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = simde_mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {
        u[4 * i + 0] = simde_mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = simde_mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = simde_mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = simde_mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int j = 0; j < 4; ++j) {
        r[j] = simde_mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[4 + j] = simde_mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
#else
    cb_vf t[16], u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = simde_mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = simde_mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* u[4i + j], 128-bit block k: rows 4i..4i+3 of column 4k + j. */
    for (int i = 0; i < 4; ++i) {
        u[4 * i + 0] = simde_mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = simde_mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = simde_mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = simde_mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int j = 0; j < 4; ++j) {
        cb_vf a0 = simde_mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
        cb_vf a1 = simde_mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
        cb_vf b0 = simde_mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
        cb_vf b1 = simde_mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
        r[j] = simde_mm512_shuffle_f32x4(a0, b0, 0x88);
        r[8 + j] = simde_mm512_shuffle_f32x4(a0, b0, 0xDD);
        r[4 + j] = simde_mm512_shuffle_f32x4(a1, b1, 0x88);
        r[12 + j] = simde_mm512_shuffle_f32x4(a1, b1, 0xDD);
    }
#endif
}

#endif
