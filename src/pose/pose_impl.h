/* Private to src/pose: the argument checks that the SIMD blend job and its scalar reference
 * share. */
#ifndef CROWDBLEND_POSE_POSE_IMPL_H
#define CROWDBLEND_POSE_POSE_IMPL_H

#include "assets/asset_layout.h"
#include "pose/pose_kernels.h"

/* Checks shared by cb_pose_blend_job_run and its reference. On success *threshold holds the
 * resolved threshold. */
cb_result cb_pose_blend_check(const cb_pose_blend_job *job, cb_error *err, float *threshold);

#endif
