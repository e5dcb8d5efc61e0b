/* AoS <-> SoA joint-group transposes and the weighted blend of whole poses. */
#include <math.h>

#include "base/base_impl.h"
#include "simd/simd_impl.h"
#include "simd/simd_kernels.h"
#include "simd/soa.h"

cb_result cb_xform_pack(cb_xform_cspan in, cb_xform_group *out, size_t group_count)
{
    if ((in.ptr == NULL && in.count > 0) || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (group_count < cb_simd_group_count(in.count)) {
        return CB_ERR_SPAN_TOO_SHORT;
    }
    if (!cb_is_aligned(out, CB_VF_BYTES)) {
        return CB_ERR_MISALIGNED;
    }
    const cb_xform identity = cb_xform_identity();
    /* A plain transpose: this runs when data is loaded, not per frame. Lanes past in.count in
     * the last used group become identity, so later kernels may process them harmlessly. */
    for (size_t g = 0; g < cb_simd_group_count(in.count); ++g) {
        struct cb_xform_group *dst = &out[g];
        for (size_t l = 0; l < CB_W; ++l) {
            size_t j = g * CB_W + l;
            const cb_xform *x = j < in.count ? &in.ptr[j] : &identity;
            dst->tx[l] = x->translation[0];
            dst->ty[l] = x->translation[1];
            dst->tz[l] = x->translation[2];
            dst->qx[l] = x->rotation[0];
            dst->qy[l] = x->rotation[1];
            dst->qz[l] = x->rotation[2];
            dst->qw[l] = x->rotation[3];
            dst->sx[l] = x->scale[0];
            dst->sy[l] = x->scale[1];
            dst->sz[l] = x->scale[2];
        }
    }
    return CB_OK;
}

cb_result cb_xform_unpack(const cb_xform_group *in, size_t group_count, cb_xform_span out)
{
    if (in == NULL || (out.ptr == NULL && out.count > 0)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (group_count < cb_simd_group_count(out.count)) {
        return CB_ERR_SPAN_TOO_SHORT;
    }
    if (!cb_is_aligned(in, CB_VF_BYTES)) {
        return CB_ERR_MISALIGNED;
    }
    for (size_t j = 0; j < out.count; ++j) {
        const struct cb_xform_group *src = &in[j / CB_W];
        size_t l = j % CB_W;
        cb_xform *x = &out.ptr[j];
        x->translation[0] = src->tx[l];
        x->translation[1] = src->ty[l];
        x->translation[2] = src->tz[l];
        x->rotation[0] = src->qx[l];
        x->rotation[1] = src->qy[l];
        x->rotation[2] = src->qz[l];
        x->rotation[3] = src->qw[l];
        x->scale[0] = src->sx[l];
        x->scale[1] = src->sy[l];
        x->scale[2] = src->sz[l];
    }
    return CB_OK;
}

cb_result cb_simd_blend_validate(const cb_xform_group *const *poses, const float *weights,
                                 size_t pose_count, size_t group_count, const cb_xform_group *out,
                                 float *inv_weight_sum)
{
    if (poses == NULL || weights == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (pose_count == 0) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (!cb_is_aligned(out, CB_VF_BYTES)) {
        return CB_ERR_MISALIGNED;
    }
    float sum = 0.0f;
    for (size_t k = 0; k < pose_count; ++k) {
        if (poses[k] == NULL) {
            return CB_ERR_NULL_ARGUMENT;
        }
        if (!cb_is_aligned(poses[k], CB_VF_BYTES)) {
            return CB_ERR_MISALIGNED;
        }
        /* !(w >= 0) also rejects NaN. */
        if (!(weights[k] >= 0.0f) || !isfinite(weights[k])) {
            return CB_ERR_INVALID_ARGUMENT;
        }
        sum += weights[k];
    }
    if (!(sum > 0.0f) || !isfinite(sum)) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    (void)group_count;
    *inv_weight_sum = 1.0f / sum;
    return CB_OK;
}

/* The blend itself: the checks are done (inv_sum = 1 / the weights' sum). */
static void blend_groups(const cb_xform_group *const *poses, const float *weights,
                         size_t pose_count, size_t group_count, float inv_sum, cb_xform_group *out)
{
    cb_vf inv = cb_vf_set1(inv_sum);
    for (size_t g = 0; g < group_count; ++g) {
        cb_soa_xform acc = cb_soa_xform_zero();
        for (size_t k = 0; k < pose_count; ++k) {
            cb_soa_xform_accumulate(&acc, cb_soa_xform_load(&poses[k][g]), cb_vf_set1(weights[k]));
        }
        /* Stored after all inputs of group g are read: out may be one of the poses. */
        cb_soa_xform_store(&out[g], cb_soa_xform_finish(acc, inv));
    }
}

cb_result cb_xform_blend_groups(const cb_xform_group *const *poses, const float *weights,
                                size_t pose_count, size_t group_count, cb_xform_group *out)
{
    float inv_sum;
    cb_result r = cb_simd_blend_validate(poses, weights, pose_count, group_count, out, &inv_sum);
    if (r == CB_OK) {
        blend_groups(poses, weights, pose_count, group_count, inv_sum, out);
    }
    return r;
}

void cb_xform_blend_groups_unchecked(const cb_xform_group *const *poses, const float *weights,
                                     size_t pose_count, size_t group_count, cb_xform_group *out)
{
    float sum = 0.0f; /* summed as the validator does */
    for (size_t k = 0; k < pose_count; ++k) {
        sum += weights[k];
    }
    CB_ASSERT(sum > 0.0f && cb_simd_blend_validate(poses, weights, pose_count, group_count, out,
                                                   &(float){0.0f}) == CB_OK);
    blend_groups(poses, weights, pose_count, group_count, 1.0f / sum, out);
}
