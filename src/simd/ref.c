/* Scalar references of the batch kernels: the plain C anyone would write, one element at a time.
 *
 * They are the baseline of the benchmarks (bench/bench_simd.c reports SIMD/ref ratios) and the
 * second path of the equivalence tests. meson compiles this file with auto-vectorization off,
 * so "scalar" means scalar. The quaternion functions are the library's scalar ones
 * (base/scalar_math.h); slerp there is the textbook acos/sin form with an nlerp fallback for
 * tiny angles, which is what the SIMD kernel's sinc form replaces. */
#include <math.h>

#include "base/base_impl.h"
#include "base/scalar_math.h"
#include "simd/simd_impl.h"
#include "simd/soa.h"

typedef cb_fquat quat;

static quat quat_get(cb_quat_csoa q, size_t i)
{
    return (quat){q.x[i], q.y[i], q.z[i], q.w[i]};
}

static void quat_put(cb_quat_soa q, size_t i, quat v)
{
    q.x[i] = v.x;
    q.y[i] = v.y;
    q.z[i] = v.z;
    q.w[i] = v.w;
}

static bool quat_in_ok(cb_quat_csoa q)
{
    return q.x != NULL && q.y != NULL && q.z != NULL && q.w != NULL;
}

static bool quat_out_ok(cb_quat_soa q)
{
    return q.x != NULL && q.y != NULL && q.z != NULL && q.w != NULL;
}

cb_result cb_quat_normalize_soa_ref(cb_quat_csoa q, size_t n, cb_quat_soa out)
{
    if (n > 0 && (!quat_in_ok(q) || !quat_out_ok(out))) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        quat_put(out, i, cb_fq_normalize(quat_get(q, i)));
    }
    return CB_OK;
}

cb_result cb_quat_nlerp_soa_ref(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                                cb_quat_soa out)
{
    if (n > 0 && (!quat_in_ok(a) || !quat_in_ok(b) || t == NULL || !quat_out_ok(out))) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        quat_put(out, i, cb_fq_nlerp(quat_get(a, i), quat_get(b, i), t[i]));
    }
    return CB_OK;
}

cb_result cb_quat_slerp_soa_ref(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                                cb_quat_soa out)
{
    if (n > 0 && (!quat_in_ok(a) || !quat_in_ok(b) || t == NULL || !quat_out_ok(out))) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        quat_put(out, i, cb_fq_slerp(quat_get(a, i), quat_get(b, i), t[i]));
    }
    return CB_OK;
}

cb_result cb_quat_mul_soa_ref(cb_quat_csoa a, cb_quat_csoa b, size_t n, cb_quat_soa out)
{
    if (n > 0 && (!quat_in_ok(a) || !quat_in_ok(b) || !quat_out_ok(out))) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        quat_put(out, i, cb_fq_mul(quat_get(a, i), quat_get(b, i)));
    }
    return CB_OK;
}

cb_result cb_quat_rotate_soa_ref(cb_quat_csoa q, cb_vec3_csoa v, size_t n, cb_vec3_soa out)
{
    if (n > 0 && (!quat_in_ok(q) || v.x == NULL || v.y == NULL || v.z == NULL || out.x == NULL ||
                  out.y == NULL || out.z == NULL)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        /* q v q* written out as two quaternion products, the textbook way. */
        quat r = quat_get(q, i);
        quat p = {v.x[i], v.y[i], v.z[i], 0.0f};
        quat conj = {-r.x, -r.y, -r.z, r.w};
        quat o = cb_fq_mul(cb_fq_mul(r, p), conj);
        out.x[i] = o.x;
        out.y[i] = o.y;
        out.z[i] = o.z;
    }
    return CB_OK;
}

cb_result cb_vec3_lerp_soa_ref(cb_vec3_csoa a, cb_vec3_csoa b, const float *t, size_t n,
                               cb_vec3_soa out)
{
    if (n > 0 && (a.x == NULL || a.y == NULL || a.z == NULL || b.x == NULL || b.y == NULL ||
                  b.z == NULL || t == NULL || out.x == NULL || out.y == NULL || out.z == NULL)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        float u = cb_fclamp01(t[i]);
        float ax = a.x[i], ay = a.y[i], az = a.z[i];
        out.x[i] = (ax - u * ax) + u * b.x[i];
        out.y[i] = (ay - u * ay) + u * b.y[i];
        out.z[i] = (az - u * az) + u * b.z[i];
    }
    return CB_OK;
}

cb_result cb_xform_blend_groups_ref(const cb_xform_group *const *poses, const float *weights,
                                    size_t pose_count, size_t group_count, cb_xform_group *out)
{
    float inv_sum;
    cb_result r = cb_simd_blend_validate(poses, weights, pose_count, group_count, out, &inv_sum);
    if (r != CB_OK) {
        return r;
    }
    for (size_t g = 0; g < group_count; ++g) {
        for (size_t l = 0; l < CB_W; ++l) {
            float t[3] = {0}, s[3] = {0};
            quat q = {0.0f, 0.0f, 0.0f, 0.0f};
            for (size_t k = 0; k < pose_count; ++k) {
                const struct cb_xform_group *p = &poses[k][g];
                float w = weights[k];
                quat qk = {p->qx[l], p->qy[l], p->qz[l], p->qw[l]};
                if (cb_fq_dot(qk, q) < 0.0f) {
                    w = -w;
                }
                t[0] += weights[k] * p->tx[l];
                t[1] += weights[k] * p->ty[l];
                t[2] += weights[k] * p->tz[l];
                q.x += w * qk.x;
                q.y += w * qk.y;
                q.z += w * qk.z;
                q.w += w * qk.w;
                s[0] += weights[k] * p->sx[l];
                s[1] += weights[k] * p->sy[l];
                s[2] += weights[k] * p->sz[l];
            }
            q = cb_fq_normalize(q);
            struct cb_xform_group *o = &out[g];
            o->tx[l] = t[0] * inv_sum;
            o->ty[l] = t[1] * inv_sum;
            o->tz[l] = t[2] * inv_sum;
            o->qx[l] = q.x;
            o->qy[l] = q.y;
            o->qz[l] = q.z;
            o->qw[l] = q.w;
            o->sx[l] = s[0] * inv_sum;
            o->sy[l] = s[1] * inv_sum;
            o->sz[l] = s[2] * inv_sum;
        }
    }
    return CB_OK;
}
