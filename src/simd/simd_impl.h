/* Internals shared by the SIMD and scalar-reference sources of src/simd. */
#ifndef CROWDBLEND_SIMD_IMPL_H
#define CROWDBLEND_SIMD_IMPL_H

#include "crowdblend/simd.h"

/* The checks of cb_xform_blend_groups and its _ref twin, written once. On success stores
 * 1 / (sum of weights) in *inv_weight_sum. */
cb_result cb_simd_blend_validate(const cb_xform_group *const *poses, const float *weights,
                                 size_t pose_count, size_t group_count, const cb_xform_group *out,
                                 float *inv_weight_sum);

#endif
