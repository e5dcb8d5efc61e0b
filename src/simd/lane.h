/* One joint of SoA joint groups, read and written a lane at a time: for the scalar code that
 * works joint by joint (IK chains, inertialization offsets, model-space TRS, the scalar
 * references). The layout is the one of struct cb_xform_group (simd/soa.h): W joints per group,
 * component-major, translation x y z, rotation x y z w, scale x y z, each W floats. Clip frames
 * use the same order with 7 components per group when they store no scale, so every function
 * takes the group's component count. This header is the only place outside the SIMD kernels
 * that spells the layout; it needs no SIMDe. */
#ifndef CROWDBLEND_SIMD_LANE_H
#define CROWDBLEND_SIMD_LANE_H

#include <stddef.h>

#include "crowdblend/base.h"
#include "crowdblend/config.h"
#include "crowdblend/simd.h"

/* The first component of each part, and the components of a pose's group. */
enum { CB_LANE_T = 0, CB_LANE_Q = 3, CB_LANE_S = 7, CB_LANE_COMPONENTS = 10 };

/* Where component k of joint j is in an array of groups of `stride` components, in floats from
 * the first group; its next components follow CB_SIMD_WIDTH floats apart. */
static inline size_t cb_lane_index(size_t stride, size_t j, size_t k)
{
    return (j / CB_SIMD_WIDTH) * stride * CB_SIMD_WIDTH + k * CB_SIMD_WIDTH + j % CB_SIMD_WIDTH;
}

/* Component k of joint j in an array of groups of `stride` components. */
static inline const float *cb_lane_cptr(const void *groups, size_t stride, size_t j, size_t k)
{
    return (const float *)groups + cb_lane_index(stride, j, k);
}

static inline float *cb_lane_ptr(void *groups, size_t stride, size_t j, size_t k)
{
    return (float *)groups + cb_lane_index(stride, j, k);
}

/* n components of joint j starting at component `first`, into out[0..n). */
static inline void cb_lane_get(const void *groups, size_t stride, size_t j, size_t first, size_t n,
                               float *out)
{
    const float *p = cb_lane_cptr(groups, stride, j, first);
    for (size_t k = 0; k < n; ++k) {
        out[k] = p[k * CB_SIMD_WIDTH];
    }
}

/* Writes in[0..n) into n components of joint j starting at `first`. */
static inline void cb_lane_set(void *groups, size_t stride, size_t j, size_t first, size_t n,
                               const float *in)
{
    float *p = cb_lane_ptr(groups, stride, j, first);
    for (size_t k = 0; k < n; ++k) {
        p[k * CB_SIMD_WIDTH] = in[k];
    }
}

/* Joint j of a pose as a transform. Its ten floats are read from one address (the lane's first
 * component), each at a constant offset: a chain of joints read one at a time computes the
 * address once per joint, not once per part. */
static inline cb_xform cb_lane_xform(const cb_xform_group *pose, size_t j)
{
    const float *p = cb_lane_cptr(pose, CB_LANE_COMPONENTS, j, 0);
    cb_xform x;
    for (size_t k = 0; k < 3; ++k) {
        x.translation[k] = p[(CB_LANE_T + k) * CB_SIMD_WIDTH];
        x.scale[k] = p[(CB_LANE_S + k) * CB_SIMD_WIDTH];
    }
    for (size_t k = 0; k < 4; ++k) {
        x.rotation[k] = p[(CB_LANE_Q + k) * CB_SIMD_WIDTH];
    }
    return x;
}

static inline void cb_lane_set_xform(cb_xform_group *pose, size_t j, const cb_xform *x)
{
    cb_lane_set(pose, CB_LANE_COMPONENTS, j, CB_LANE_T, 3, x->translation);
    cb_lane_set(pose, CB_LANE_COMPONENTS, j, CB_LANE_Q, 4, x->rotation);
    cb_lane_set(pose, CB_LANE_COMPONENTS, j, CB_LANE_S, 3, x->scale);
}

#endif
