/* What ik.c and ik_many.c share: the two-bone solve's thresholds, so that the lane form of
 * ik_many.c makes every decision the scalar solve makes, on the same numbers, and the stride
 * warp's per-job numbers, which both take from here. */
#ifndef CROWDBLEND_IK_IK_IMPL_H
#define CROWDBLEND_IK_IK_IMPL_H

#include <math.h>
#include <stdbool.h>

#include "base/scalar_math.h"
#include "crowdblend/ik.h"

/* Thresholds, all relative (scale-free):
 *  - CB_IK_DIR_EPS: a projection of a unit vector shorter than this has no usable direction (the
 *    pole along the target axis, an up axis along the aim); 1e-4 keeps the direction of what
 *    is left accurate to about 1e-3 rad in float.
 *  - CB_IK_STRAIGHT_EPS: a chain whose bend has a sine below this counts as straight (or folded),
 * so its plane is not taken from the pose; at 1e-3 (0.06 degree) the plane normal of a chain just
 * above it is still good to about 1e-4 rad.
 *  - CB_IK_NEAR_EPS: a target (or end) this close to the start joint, relative to the chain's
 *    length, has no direction.
 *  - CB_IK_HINGE_EPS: bone parts perpendicular to the hinge whose product p q is this small
 * relative to the squared chain length cannot change the reach in float: the reach interval, dmax^2
 * - dmin^2 = 4 p q, would be below the rounding of dmax^2 (a hinge along a bone, or a bone scaled
 * to almost nothing). */
#define CB_IK_DIR_EPS 1e-4f
#define CB_IK_STRAIGHT_EPS 1e-3f
#define CB_IK_NEAR_EPS 1e-5f
#define CB_IK_HINGE_EPS 1e-5f

/* A two-bone job's soften with its default resolved (the solve's and the reach's, scalar and in
 * lanes). */
static inline float cb_ik_job_soften(const cb_ik_two_bone_job *job)
{
    return job->soften == 0.0f ? CB_IK_DEFAULT_SOFTEN : job->soften;
}

/* The stride warp's unit horizontal motion direction, false when there is none. The squared
 * length is bounded (|direction| <= 1e9), so it neither overflows nor, above 1e-30, loses the
 * ratio. */
static inline bool cb_ik_stride_direction(const float d[2], float *ux, float *uz)
{
    float len2 = d[0] * d[0] + d[1] * d[1];
    if (!(len2 > 1e-30f)) {
        return false;
    }
    float inv = 1.0f / sqrtf(len2);
    *ux = d[0] * inv, *uz = d[1] * inv;
    return true;
}

/* What the unchecked warp checks of the job's scalars: the direction, which the frame brings,
 * finite and within CB_IK_MAX_COORDINATE. */
static inline bool cb_ik_stride_direction_ok(const cb_ik_stride_job *job)
{
    return fabsf(job->direction[0]) <= CB_IK_MAX_COORDINATE &&
           fabsf(job->direction[1]) <= CB_IK_MAX_COORDINATE;
}

/* Whether the warp has work (k != 1, weight > 0, a direction; its direction then in ux, uz). */
static inline bool cb_ik_stride_on(const cb_ik_stride_job *job, float *ux, float *uz)
{
    return job->scale != 1.0f && job->weight > 0.0f &&
           cb_ik_stride_direction(job->direction, ux, uz);
}

/* The legs' weight: the job's, times the engage ramp (ik.h), which fades the correction in with
 * |k - 1| along a smoothstep (scale is finite: checked; cb_fsmoothstep clamps e >= 1 to 1). */
static inline float cb_ik_stride_weight(const cb_ik_stride_job *job)
{
    return job->weight * cb_fsmoothstep(fabsf(job->scale - 1.0f) / CB_IK_STRIDE_ENGAGE);
}

#endif
