/* Compact model-space outputs (model_qts.h).
 *
 * The chain allows no parallelism across joints (ltm.c's reasoning): a joint waits for its
 * parent. So the SIMD kernel works inside one joint, 4 wide, as local-to-model does with a
 * matrix's columns, and leaves to the group everything that does not wait for the parent:
 *  - per block of 4 joints, one 4x4 transpose turns the group's SoA rotations (and translations
 *    with scale) into one register per joint;
 *  - per joint, the local rotation's four sign-permuted copies (below), also independent of the
 *    parent, so they overlap the previous joint's chain;
 *  - on the chain: 4 parent broadcasts, 4 products and 3 sums for the rotation, two cross
 *    products for the rotated translation, one product for the scale.
 * The scalar prototype (cb_model_qts_run_ref) stays as the reference the tests hold it to. */
#include "simd/model_qts.h"

#include <math.h>

#include "base/base_impl.h"
#include "simd/soa_mat.h"

cb_result cb_model_qts_validate(const cb_skeleton *skeleton, cb_xform_group_cspan local,
                                const void *out, size_t out_count, float range_m, cb_error *err)
{
    if (skeleton == NULL || local.ptr == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "model qts: %s is NULL",
                            skeleton == NULL    ? "skeleton"
                            : local.ptr == NULL ? "local"
                                                : "out");
    }
    const size_t n = cb_skeleton_joint_count(skeleton);
    const size_t groups = cb_skeleton_group_count(skeleton);
    if (local.count < groups) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "model qts: local has %zu groups, needs %zu", local.count, groups);
    }
    if (!cb_is_aligned(local.ptr, cb_simd_group_align())) {
        return cb_error_set(err, CB_ERR_MISALIGNED, "model qts: local is not aligned to %zu bytes",
                            cb_simd_group_align());
    }
    if (out_count < n * 8) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "model qts: out has %zu elements, needs %zu (8 per joint)", out_count,
                            n * 8);
    }
    if (!(range_m > 0.0f && isfinite(range_m))) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "model qts: range_m is %g, needs a finite value above 0",
                            (double)range_m);
    }
    return CB_OK;
}

cb_result cb_model_qts16_validate(const cb_skeleton *skeleton, cb_xform_group_cspan local,
                                  const float *scratch, size_t scratch_count, const int16_t *out,
                                  size_t out_count, float range_m, cb_error *err)
{
    cb_result r = cb_model_qts_validate(skeleton, local, out, out_count, range_m, err);
    if (r != CB_OK) {
        return r;
    }
    const size_t n = cb_skeleton_joint_count(skeleton);
    if (scratch == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "model qts16: scratch is NULL");
    }
    if (scratch_count < n * 8) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "model qts16: scratch has %zu floats, needs %zu (8 per joint)",
                            scratch_count, n * 8);
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The scalar prototype: the reference                                                        */

/* Joint j of a local pose: rotation, translation, scale x. */
static void local_at(const cb_xform_group *pose, size_t j, float q[4], float t[3], float *s)
{
    const struct cb_xform_group *g = &pose[j / CB_W];
    size_t l = j % CB_W;
    q[0] = g->qx[l], q[1] = g->qy[l], q[2] = g->qz[l], q[3] = g->qw[l];
    t[0] = g->tx[l], t[1] = g->ty[l], t[2] = g->tz[l];
    *s = g->sx[l];
}

/* out = parent composed with (q, t, s): 8 floats. The sums are written as two pairs so that
 * the rotation, which the next joint waits for, is three operations deep instead of four. */
static void compose(const float *p, const float q[4], const float t[3], float s, float *out)
{
    const float px = p[0], py = p[1], pz = p[2], pw = p[3], ps = p[7];
    out[0] = (pw * q[0] + px * q[3]) + (py * q[2] - pz * q[1]);
    out[1] = (pw * q[1] - px * q[2]) + (py * q[3] + pz * q[0]);
    out[2] = (pw * q[2] + px * q[1]) + (pz * q[3] - py * q[0]);
    out[3] = (pw * q[3] - px * q[0]) - (py * q[1] + pz * q[2]);
    /* t_parent + s_parent (v + 2 w (u x v) + 2 u x (u x v)), u the parent's vector part. */
    float v[3] = {ps * t[0], ps * t[1], ps * t[2]};
    float c1[3] = {py * v[2] - pz * v[1], pz * v[0] - px * v[2], px * v[1] - py * v[0]};
    float c2[3] = {py * c1[2] - pz * c1[1], pz * c1[0] - px * c1[2], px * c1[1] - py * c1[0]};
    for (int k = 0; k < 3; ++k) {
        out[4 + k] = p[4 + k] + v[k] + 2.0f * (pw * c1[k] + c2[k]);
    }
    out[7] = ps * s;
}

/* The previous joint's result stays in a local copy: in a depth-first skeleton it is usually
 * the parent, and reading it back from the output would put a store-to-load delay on every
 * link of the chain (ltm.c keeps its previous matrix in registers for the same reason). A range
 * starting at `from` > 0 starts that copy from joint from - 1 in the output: it is read only
 * where it is the parent of `from`, and then it is an ancestor the caller has written. */
void cb_model_qts_range_ref(const cb_skeleton *skeleton, const cb_xform_group *local, size_t from,
                            size_t to, float *out)
{
    CB_ASSERT(skeleton != NULL && local != NULL && out != NULL);
    CB_ASSERT(from <= to && to <= cb_skeleton_joint_count(skeleton));
    const int32_t *parents = cb_skeleton_parents(skeleton);
    float prev[8] = {0, 0, 0, 1, 0, 0, 0, 1};
    if (from > 0) {
        for (int k = 0; k < 8; ++k) {
            prev[k] = out[(from - 1) * 8 + k];
        }
    }
    for (size_t j = from; j < to; ++j) {
        float q[4], t[3], s, o[8];
        local_at(local, j, q, t, &s);
        int32_t p = parents[j];
        if (p < 0) {
            o[0] = q[0], o[1] = q[1], o[2] = q[2], o[3] = q[3];
            o[4] = t[0], o[5] = t[1], o[6] = t[2], o[7] = s;
        } else {
            compose((size_t)p + 1 == j ? prev : out + (size_t)p * 8, q, t, s, o);
        }
        for (int k = 0; k < 8; ++k) {
            out[j * 8 + k] = prev[k] = o[k];
        }
    }
}

void cb_model_qts_run_ref(const cb_skeleton *skeleton, const cb_xform_group *local, float *out)
{
    cb_model_qts_range_ref(skeleton, local, 0, cb_skeleton_joint_count(skeleton), out);
}

/* ------------------------------------------------------------------------------------------ */
/* The SIMD kernel                                                                            */

/* One joint's qts in registers: the rotation (qx, qy, qz, qw), the translation in lanes 0-2
 * (lane 3 unspecified) and the scale in every lane. The scale is kept apart from the
 * translation, as the output stores them together, because a child's translation starts with
 * its parent's scale: taken from the stored register it would wait for the parent's whole
 * translation, and the chain would be one joint's translation deep per joint instead of one
 * product (measured in bench_outputs at 1,000 characters: 699 ns per character that way, 636
 * with the scale apart, for 175 more instructions per character). */
typedef struct qts {
    cb_col4 r, t, s;
} qts;

CB_INLINE cb_col4 splat_w(cb_col4 a)
{
    return CB_COL4_SHUFFLE(a, a, 3, 3, 3, 3);
}

/* Flips the sign of the lanes where `signs` holds -0.0f (exact: a negation). */
CB_INLINE cb_col4 flip(cb_col4 a, cb_col4 signs)
{
    return simde_mm_xor_ps(a, signs);
}

/* The product p l of quaternions, written as pw L0 + px L1 + py L2 + pz L3 with the L the
 * local rotation l = (x, y, z, w) with its lanes permuted and signed:
 *   L0 = ( x,  y,  z,  w)   L1 = ( w, -z,  y, -x)   L2 = ( z,  w, -x, -y)   L3 = (-y,  x,  w, -z)
 * (the Hamilton product's columns). The prototype sums each element as (pw.. + px..) +
 * (py.. + pz..); for lane 3 it subtracts the second pair, so L2 and L3 are built with +y and +z
 * there and the pair's sum is negated: (-a) + (-b) would give +0 where the prototype's
 * -(a + b) gives -0, and that is the only place the two forms could differ (test_model_qts,
 * model_qts_signed_zeros_match_the_prototype). x - y and x + (-y) are the same IEEE operation,
 * and so are (-a) * b and -(a * b), so every element gets the prototype's bits. NaN aside: the
 * negation flips a NaN's sign bit, which a subtraction passes through, so a NaN may come out
 * with the other sign (still NaN in the same elements; model_qts.h). */
typedef struct local_rot {
    cb_col4 l0, l1, l2, l3;
} local_rot;

CB_INLINE local_rot local_rot_of(cb_col4 l)
{
    const cb_col4 s1 = cb_col4_setr(0.0f, -0.0f, 0.0f, -0.0f);
    const cb_col4 s2 = cb_col4_setr(0.0f, 0.0f, -0.0f, 0.0f);
    const cb_col4 s3 = cb_col4_setr(-0.0f, 0.0f, 0.0f, 0.0f);
    return (local_rot){l, flip(CB_COL4_SHUFFLE(l, l, 3, 2, 1, 0), s1),
                       flip(CB_COL4_SHUFFLE(l, l, 2, 3, 0, 1), s2),
                       flip(CB_COL4_SHUFFLE(l, l, 1, 0, 3, 2), s3)};
}

CB_INLINE cb_col4 rotation(cb_col4 p, const local_rot *l)
{
    const cb_col4 neg_w = cb_col4_setr(0.0f, 0.0f, 0.0f, -0.0f);
    cb_col4 a = cb_col4_add(cb_col4_mul(splat_w(p), l->l0), cb_col4_mul(cb_col4_splat_x(p), l->l1));
    cb_col4 b =
        cb_col4_add(cb_col4_mul(cb_col4_splat_y(p), l->l2), cb_col4_mul(cb_col4_splat_z(p), l->l3));
    return cb_col4_add(a, flip(b, neg_w));
}

/* u x v for the first three lanes (lane 3 is u.w v.w - u.w v.w, never used): the prototype's
 * order, (u.y v.z - u.z v.y, u.z v.x - u.x v.z, u.x v.y - u.y v.x). */
CB_INLINE cb_col4 cross(cb_col4 u_yzx, cb_col4 u_zxy, cb_col4 v)
{
    return cb_col4_sub(cb_col4_mul(u_yzx, CB_COL4_SHUFFLE(v, v, 2, 0, 1, 3)),
                       cb_col4_mul(u_zxy, CB_COL4_SHUFFLE(v, v, 1, 2, 0, 3)));
}

/* The translation t_p + v + 2 (w c1 + c2) with v = s_p t, c1 = u x v, c2 = u x c1: the
 * rotation of v by the unit quaternion (u, w) in its cross-product form, 18 products
 * (https://fgiesen.wordpress.com/2019/02/09/rotating-a-single-vector-using-a-quaternion/). */
CB_INLINE cb_col4 translation(const qts *p, cb_col4 t)
{
    const cb_col4 u = p->r;
    const cb_col4 v = cb_col4_mul(p->s, t);
    const cb_col4 u_yzx = CB_COL4_SHUFFLE(u, u, 1, 2, 0, 3);
    const cb_col4 u_zxy = CB_COL4_SHUFFLE(u, u, 2, 0, 1, 3);
    const cb_col4 c1 = cross(u_yzx, u_zxy, v);
    const cb_col4 c2 = cross(u_yzx, u_zxy, c1);
    cb_col4 h = cb_col4_add(cb_col4_mul(splat_w(u), c1), c2);
    /* h + h is 2 h exactly (the prototype's 2.0f * h). */
    return cb_col4_add(cb_col4_add(p->t, v), cb_col4_add(h, h));
}

/* A joint read back from the output (8 floats). */
CB_INLINE qts qts_load(const float *x)
{
    cb_col4 ts = cb_col4_loadu(x + 4);
    return (qts){cb_col4_loadu(x), ts, splat_w(ts)};
}

/* (t.x, t.y, t.z, s) into 8 floats with the rotation: two shuffles, where a blend would need
 * SSE4.1. Where `stream` is not NULL the same two registers also go there with non-temporal
 * stores (cb_model_qts_stream). */
CB_INLINE void qts_store(float *x, float *stream, const qts *a)
{
    cb_col4 zw = simde_mm_unpackhi_ps(a->t, a->s); /* (t.z, s, t.w, s) */
    const cb_col4 ts = CB_COL4_SHUFFLE(a->t, zw, 0, 1, 0, 3);
    cb_col4_storeu(x, a->r);
    cb_col4_storeu(x + 4, ts);
    if (stream != NULL) {
        simde_mm_stream_ps(stream, a->r);
        simde_mm_stream_ps(stream + 4, ts);
    }
}

/* Joint j from its local (r, ts): a root as it is; else composed with its parent, the joint
 * just before from registers (prev, as in the prototype) or any other from the output. */
CB_INLINE qts joint(const int32_t *parents, size_t j, const float *out, const qts *prev, cb_col4 r,
                    cb_col4 ts)
{
    int32_t p = parents[j];
    if (p < 0) {
        return (qts){r, ts, splat_w(ts)};
    }
    qts pp = (size_t)p + 1 == j ? *prev : qts_load(out + (size_t)p * 8);
    local_rot l = local_rot_of(r);
    /* s_p s, the prototype's product; on the chain, one multiply per joint. */
    return (qts){rotation(pp.r, &l), translation(&pp, ts), cb_col4_mul(pp.s, splat_w(ts))};
}

/* Joints [from, to): the blocks of 4 start at a multiple of 4 (the transposes read whole
 * blocks), and a range's first joint takes `prev` from the output, as in the prototype. Inlined
 * into the whole-skeleton kernel with from = 0, so that one keeps its loop as it was. `stream`
 * is NULL but in cb_model_qts_stream, where each joint also goes there and `out` is the
 * caller's stage, which the chain reads parents back from. */
CB_INLINE void qts_range(const cb_skeleton *skeleton, const cb_xform_group *local, size_t from,
                         size_t to, float *out, float *stream)
{
    const int32_t *parents = cb_skeleton_parents(skeleton);
    qts prev = {cb_col4_setr(0, 0, 0, 1), cb_col4_set1(0.0f), cb_col4_set1(1.0f)};
    if (from > 0) {
        prev = qts_load(out + (from - 1) * 8);
    }
    for (size_t j0 = from / 4 * 4; j0 < to; j0 += 4) {
        /* W is a multiple of 4, so a block of 4 joints never straddles two groups; the padding
         * lanes of the last block are transposed but never used. */
        const struct cb_xform_group *g = &local[j0 / CB_W];
        const size_t l = j0 % CB_W;
        cb_mat4c q =
            cb_mat4c_transpose((cb_mat4c){{cb_col4_loadu(g->qx + l), cb_col4_loadu(g->qy + l),
                                           cb_col4_loadu(g->qz + l), cb_col4_loadu(g->qw + l)}});
        cb_mat4c ts =
            cb_mat4c_transpose((cb_mat4c){{cb_col4_loadu(g->tx + l), cb_col4_loadu(g->ty + l),
                                           cb_col4_loadu(g->tz + l), cb_col4_loadu(g->sx + l)}});
        const size_t k0 = j0 < from ? from - j0 : 0;
        const size_t k1 = to - j0 < 4 ? to - j0 : 4;
        for (size_t k = k0; k < k1; ++k) {
            prev = joint(parents, j0 + k, out, &prev, q.c[k], ts.c[k]);
            qts_store(out + (j0 + k) * 8, stream != NULL ? stream + (j0 + k) * 8 : NULL, &prev);
        }
    }
}

void cb_model_qts_run(const cb_skeleton *skeleton, const cb_xform_group *local, float *out)
{
    CB_ASSERT(skeleton != NULL && local != NULL && out != NULL);
    qts_range(skeleton, local, 0, cb_skeleton_joint_count(skeleton), out, NULL);
}

void cb_model_qts_stream(const cb_skeleton *skeleton, const cb_xform_group *local, float *stage,
                         float *out)
{
    CB_ASSERT(skeleton != NULL && local != NULL && stage != NULL && out != NULL);
    CB_ASSERT((uintptr_t)out % 16 == 0);
    qts_range(skeleton, local, 0, cb_skeleton_joint_count(skeleton), stage, out);
}

void cb_model_qts_range(const cb_skeleton *skeleton, const cb_xform_group *local, size_t from,
                        size_t to, float *out)
{
    CB_ASSERT(skeleton != NULL && local != NULL && out != NULL);
    CB_ASSERT(from <= to && to <= cb_skeleton_joint_count(skeleton));
    qts_range(skeleton, local, from, to, out, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* qts16                                                                                      */

static int16_t snorm16(float x)
{
    float r = nearbyintf(x);
    return (int16_t)(r > 32767.0f ? 32767.0f : r < -32767.0f ? -32767.0f : r);
}

void cb_model_qts16_run(const cb_skeleton *skeleton, const cb_xform_group *local,
                        float translation_range_m, float *scratch, int16_t *out)
{
    CB_ASSERT(translation_range_m > 0.0f && scratch != NULL && out != NULL);
    cb_model_qts_run(skeleton, local, scratch);
    const size_t n = cb_skeleton_joint_count(skeleton);
    const float tq = 32767.0f / translation_range_m;
    for (size_t j = 0; j < n; ++j) {
        const float *x = scratch + j * 8;
        int16_t *o = out + j * 8;
        for (int k = 0; k < 4; ++k) {
            o[k] = snorm16(x[k] * 32767.0f);
        }
        for (int k = 0; k < 3; ++k) {
            o[4 + k] = snorm16(x[4 + k] * tq);
        }
        o[7] = snorm16(x[7] * 8192.0f);
    }
}
