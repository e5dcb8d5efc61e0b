/* The public batch kernels over SoA columns (crowdblend/simd.h): W lanes per step.
 *
 * Host columns carry no alignment promise, so full steps use unaligned loads (as fast as
 * aligned ones on current x86 when the data happens to be aligned). The last n % W elements are
 * copied into aligned, padded stage buffers and go through the very same vector code, so
 * element i is bit-identical whatever n is; the padding (identity quaternions, zero vectors,
 * t = 0) is never written back. */
#include <string.h>

#include "base/base_impl.h"
#include "simd/soa.h"

size_t cb_simd_width(void)
{
    return CB_W;
}

size_t cb_simd_group_count(size_t joint_count)
{
    return (joint_count + CB_W - 1) / CB_W;
}

size_t cb_simd_group_bytes(void)
{
    return sizeof(struct cb_xform_group);
}

size_t cb_simd_group_align(void)
{
    return CB_VF_BYTES;
}

/* ------------------------------------------------------------------------------------------ */
/* Column access and tail staging                                                             */

typedef struct column_stage {
    CB_VF_ALIGNED float lane[4][CB_W];
} column_stage;

static bool quat_in_ok(cb_quat_csoa q)
{
    return q.x != NULL && q.y != NULL && q.z != NULL && q.w != NULL;
}

static bool quat_out_ok(cb_quat_soa q)
{
    return q.x != NULL && q.y != NULL && q.z != NULL && q.w != NULL;
}

static bool vec3_in_ok(cb_vec3_csoa v)
{
    return v.x != NULL && v.y != NULL && v.z != NULL;
}

static bool vec3_out_ok(cb_vec3_soa v)
{
    return v.x != NULL && v.y != NULL && v.z != NULL;
}

CB_INLINE cb_soa_quat load_quat(cb_quat_csoa q, size_t i)
{
    return (cb_soa_quat){cb_vf_loadu(q.x + i), cb_vf_loadu(q.y + i), cb_vf_loadu(q.z + i),
                         cb_vf_loadu(q.w + i)};
}

CB_INLINE void store_quat(cb_quat_soa q, size_t i, cb_soa_quat v)
{
    cb_vf_storeu(q.x + i, v.x);
    cb_vf_storeu(q.y + i, v.y);
    cb_vf_storeu(q.z + i, v.z);
    cb_vf_storeu(q.w + i, v.w);
}

CB_INLINE cb_soa_vec3 load_vec3(cb_vec3_csoa v, size_t i)
{
    return (cb_soa_vec3){cb_vf_loadu(v.x + i), cb_vf_loadu(v.y + i), cb_vf_loadu(v.z + i)};
}

CB_INLINE void store_vec3(cb_vec3_soa v, size_t i, cb_soa_vec3 x)
{
    cb_vf_storeu(v.x + i, x.x);
    cb_vf_storeu(v.y + i, x.y);
    cb_vf_storeu(v.z + i, x.z);
}

/* Copies count (< W) elements of up to four columns from index i into a stage, padding each
 * column with its fill value. */
static void stage_columns(column_stage *st, const float *const cols[4], const float fill[4],
                          int ncols, size_t i, size_t count)
{
    for (int c = 0; c < ncols; ++c) {
        for (size_t l = 0; l < CB_W; ++l) {
            st->lane[c][l] = l < count ? cols[c][i + l] : fill[c];
        }
    }
}

static void unstage_columns(const column_stage *st, float *const cols[4], int ncols, size_t i,
                            size_t count)
{
    for (int c = 0; c < ncols; ++c) {
        memcpy(cols[c] + i, st->lane[c], count * sizeof(float));
    }
}

static const float quat_fill[4] = {0.0f, 0.0f, 0.0f, 1.0f};
static const float zero_fill[4] = {0.0f, 0.0f, 0.0f, 0.0f};

static cb_quat_csoa stage_quat(column_stage *st, cb_quat_csoa q, size_t i, size_t count)
{
    const float *cols[4] = {q.x, q.y, q.z, q.w};
    stage_columns(st, cols, quat_fill, 4, i, count);
    return (cb_quat_csoa){st->lane[0], st->lane[1], st->lane[2], st->lane[3]};
}

static cb_vec3_csoa stage_vec3(column_stage *st, cb_vec3_csoa v, size_t i, size_t count)
{
    const float *cols[4] = {v.x, v.y, v.z, NULL};
    stage_columns(st, cols, zero_fill, 3, i, count);
    return (cb_vec3_csoa){st->lane[0], st->lane[1], st->lane[2]};
}

static const float *stage_scalar(column_stage *st, const float *s, size_t i, size_t count)
{
    const float *cols[4] = {s, NULL, NULL, NULL};
    stage_columns(st, cols, zero_fill, 1, i, count);
    return st->lane[0];
}

static cb_quat_soa stage_quat_out(column_stage *st)
{
    return (cb_quat_soa){st->lane[0], st->lane[1], st->lane[2], st->lane[3]};
}

static cb_vec3_soa stage_vec3_out(column_stage *st)
{
    return (cb_vec3_soa){st->lane[0], st->lane[1], st->lane[2]};
}

static void unstage_quat(const column_stage *st, cb_quat_soa out, size_t i, size_t count)
{
    float *cols[4] = {out.x, out.y, out.z, out.w};
    unstage_columns(st, cols, 4, i, count);
}

static void unstage_vec3(const column_stage *st, cb_vec3_soa out, size_t i, size_t count)
{
    float *cols[4] = {out.x, out.y, out.z, NULL};
    unstage_columns(st, cols, 3, i, count);
}

/* ------------------------------------------------------------------------------------------ */
/* Quaternion and vec3 kernels                                                                */

cb_result cb_quat_normalize_soa(cb_quat_csoa q, size_t n, cb_quat_soa out)
{
    if (n == 0) {
        return CB_OK;
    }
    if (!quat_in_ok(q) || !quat_out_ok(out)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t i = 0;
    for (; i + CB_W <= n; i += CB_W) {
        store_quat(out, i, cb_soa_quat_normalize(load_quat(q, i)));
    }
    if (i < n) {
        column_stage sq, so;
        cb_quat_csoa tq = stage_quat(&sq, q, i, n - i);
        store_quat(stage_quat_out(&so), 0, cb_soa_quat_normalize(load_quat(tq, 0)));
        unstage_quat(&so, out, i, n - i);
    }
    return CB_OK;
}

/* nlerp and slerp share their shape: two quaternion columns and a t column in, one out.
 * `slerp` is a compile-time constant at both call sites, so the test folds away once this is
 * inlined; a function pointer here was not inlined at W = 8 and cost a call per chunk. */
CB_INLINE cb_soa_quat interp(cb_soa_quat a, cb_soa_quat b, cb_vf t, bool slerp)
{
    return slerp ? cb_soa_quat_slerp(a, b, t) : cb_soa_quat_nlerp(a, b, t);
}

CB_INLINE cb_result quat_interp(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                                cb_quat_soa out, bool slerp)
{
    if (n == 0) {
        return CB_OK;
    }
    if (!quat_in_ok(a) || !quat_in_ok(b) || t == NULL || !quat_out_ok(out)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t i = 0;
    for (; i + CB_W <= n; i += CB_W) {
        store_quat(out, i, interp(load_quat(a, i), load_quat(b, i), cb_vf_loadu(t + i), slerp));
    }
    if (i < n) {
        column_stage sa, sb, st, so;
        cb_quat_csoa ta = stage_quat(&sa, a, i, n - i);
        cb_quat_csoa tb = stage_quat(&sb, b, i, n - i);
        const float *tt = stage_scalar(&st, t, i, n - i);
        store_quat(stage_quat_out(&so), 0,
                   interp(load_quat(ta, 0), load_quat(tb, 0), cb_vf_load(tt), slerp));
        unstage_quat(&so, out, i, n - i);
    }
    return CB_OK;
}

cb_result cb_quat_nlerp_soa(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                            cb_quat_soa out)
{
    return quat_interp(a, b, t, n, out, false);
}

cb_result cb_quat_slerp_soa(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                            cb_quat_soa out)
{
    return quat_interp(a, b, t, n, out, true);
}

cb_result cb_quat_mul_soa(cb_quat_csoa a, cb_quat_csoa b, size_t n, cb_quat_soa out)
{
    if (n == 0) {
        return CB_OK;
    }
    if (!quat_in_ok(a) || !quat_in_ok(b) || !quat_out_ok(out)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t i = 0;
    for (; i + CB_W <= n; i += CB_W) {
        store_quat(out, i, cb_soa_quat_mul(load_quat(a, i), load_quat(b, i)));
    }
    if (i < n) {
        column_stage sa, sb, so;
        cb_quat_csoa ta = stage_quat(&sa, a, i, n - i);
        cb_quat_csoa tb = stage_quat(&sb, b, i, n - i);
        store_quat(stage_quat_out(&so), 0, cb_soa_quat_mul(load_quat(ta, 0), load_quat(tb, 0)));
        unstage_quat(&so, out, i, n - i);
    }
    return CB_OK;
}

cb_result cb_quat_rotate_soa(cb_quat_csoa q, cb_vec3_csoa v, size_t n, cb_vec3_soa out)
{
    if (n == 0) {
        return CB_OK;
    }
    if (!quat_in_ok(q) || !vec3_in_ok(v) || !vec3_out_ok(out)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t i = 0;
    for (; i + CB_W <= n; i += CB_W) {
        store_vec3(out, i, cb_soa_quat_rotate(load_quat(q, i), load_vec3(v, i)));
    }
    if (i < n) {
        column_stage sq, sv, so;
        cb_quat_csoa tq = stage_quat(&sq, q, i, n - i);
        cb_vec3_csoa tv = stage_vec3(&sv, v, i, n - i);
        store_vec3(stage_vec3_out(&so), 0, cb_soa_quat_rotate(load_quat(tq, 0), load_vec3(tv, 0)));
        unstage_vec3(&so, out, i, n - i);
    }
    return CB_OK;
}

cb_result cb_vec3_lerp_soa(cb_vec3_csoa a, cb_vec3_csoa b, const float *t, size_t n,
                           cb_vec3_soa out)
{
    if (n == 0) {
        return CB_OK;
    }
    if (!vec3_in_ok(a) || !vec3_in_ok(b) || t == NULL || !vec3_out_ok(out)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t i = 0;
    for (; i + CB_W <= n; i += CB_W) {
        store_vec3(out, i, cb_soa_vec3_lerp(load_vec3(a, i), load_vec3(b, i), cb_vf_loadu(t + i)));
    }
    if (i < n) {
        column_stage sa, sb, st, so;
        cb_vec3_csoa ta = stage_vec3(&sa, a, i, n - i);
        cb_vec3_csoa tb = stage_vec3(&sb, b, i, n - i);
        const float *tt = stage_scalar(&st, t, i, n - i);
        store_vec3(stage_vec3_out(&so), 0,
                   cb_soa_vec3_lerp(load_vec3(ta, 0), load_vec3(tb, 0), cb_vf_load(tt)));
        unstage_vec3(&so, out, i, n - i);
    }
    return CB_OK;
}
