/* A compact model-space output beside the 3x4 and 4x4 matrices of crowdblend/ltm.h, for hosts
 * that skin on the GPU with quaternions (dual-quaternion or quaternion-translation skinning):
 * per joint the model rotation, translation and one uniform scale.
 *  - qts:   8 floats, 32 bytes: qx qy qz qw tx ty tz s (half of a 4x4 matrix);
 *  - qts16: 8 int16, 16 bytes: the rotation as snorm16 (q * 32767), the translation as
 *           t / range * 32767 (range: the host's bound on |t|, e.g. 4 m for a human), the
 *           scale as s * 8192 (0 .. 4).
 * Composition along the hierarchy: q = q_parent q_local, s = s_parent s_local,
 * t = t_parent + s_parent rotate(q_parent, t_local); exact for uniform scales (a non-uniform
 * scale is taken from its x component: the layout cannot hold shear, which is why 4x4 stays the
 * default). A prototype measured in bench/bench_outputs.c; issue 13's second step makes it a
 * cb_matrix_layout of the ltm job. */
#ifndef CROWDBLEND_SIMD_MODEL_QTS_H
#define CROWDBLEND_SIMD_MODEL_QTS_H

#include <stdint.h>

#include "crowdblend/skeleton.h"

/* Local pose (joint groups) to qts: joint_count * 8 floats, parents first. */
void cb_model_qts_run(const cb_skeleton *skeleton, const cb_xform_group *local, float *out);

/* The same, quantized to qts16 (joint_count * 8 int16); scratch: joint_count * 8 floats (the
 * parents' unquantized transforms). */
void cb_model_qts16_run(const cb_skeleton *skeleton, const cb_xform_group *local,
                        float translation_range_m, float *scratch, int16_t *out);

#endif
