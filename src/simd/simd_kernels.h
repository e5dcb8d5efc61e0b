/* The SIMD layer's unchecked batch kernels: for the graph runtime's per-frame path (see
 * pose/pose_kernels.h for why unchecked). Declarations only: no SIMDe here. */
#ifndef CROWDBLEND_SIMD_SIMD_KERNELS_H
#define CROWDBLEND_SIMD_SIMD_KERNELS_H

#include "crowdblend/simd.h"

/* cb_xform_blend_groups on valid arguments: weights finite, >= 0, summing to more than 0; poses
 * and out aligned; out may be one of the poses. */
void cb_xform_blend_groups_unchecked(const cb_xform_group *const *poses, const float *weights,
                                     size_t pose_count, size_t group_count, cb_xform_group *out);

#endif
