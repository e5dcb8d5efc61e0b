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
 * default). Measured in bench/bench_outputs.c and docs/performance.md ("Compact outputs"); the
 * ltm job's CB_MATRIX_LAYOUT_QTS (crowdblend/ltm.h) runs qts through these kernels, so a crowd
 * can output it.
 *
 * Two kernels, one result: cb_model_qts_run (4-wide quaternion products, simd/col4.h) gives
 * the bits of the scalar prototype cb_model_qts_run_ref for every input without NaN (the same
 * IEEE operations on the same operands in the same order per element; model_qts.c shows how).
 * A NaN input gives NaN in the same elements of both, but its sign bit may differ: the kernel
 * negates an operand (an XOR of the sign bit) where the prototype subtracts it, and a
 * subtraction passes a NaN operand's sign through.
 *
 * Error (tests/test_model_qts.c, against 4x4 matrices composed in double): a few float
 * roundings per level of the hierarchy, growing at most linearly along a chain (measured under
 * 2.2e-7 per level for rotation matrix elements, 1.1e-7 of the chain's length for translations).
 * Quaternions are not renormalized: the product's norm is the product of the norms, and the
 * translation's formula is a rotation only for a unit parent rotation (local poses from the
 * blend jobs are unit within float rounding; that drift is in the figures above). The
 * rotation's sign follows the product (q and -q are one rotation; no hemisphere is chosen), so a
 * host must not assume w >= 0. A zero scale collapses the descendants onto the joint.
 *
 * Arguments: local holds the skeleton's groups (cb_skeleton_group_count), aligned to
 * cb_simd_group_align(); out holds joint_count * 8 elements and must not alias local. Padding
 * lanes of the last group are never read into a result. NaN or infinite inputs propagate to
 * the joint and its descendants (nothing is checked per frame, as in local-to-model). The
 * kernels assert valid arguments; cb_model_qts_validate says what is wrong with them. Jobs with
 * disjoint outputs may run concurrently. */
#ifndef CROWDBLEND_SIMD_MODEL_QTS_H
#define CROWDBLEND_SIMD_MODEL_QTS_H

#include <stdint.h>

#include "crowdblend/skeleton.h"

/* Whether the kernels below can run on these arguments: CB_ERR_NULL_ARGUMENT (skeleton, local
 * or out NULL), CB_ERR_SPAN_TOO_SHORT (local shorter than the group count, out_count below
 * joint_count * 8), CB_ERR_MISALIGNED (local not aligned to cb_simd_group_align()),
 * CB_ERR_INVALID_ARGUMENT (qts16 only, range_m not finite and above 0; pass 1 for qts). The
 * first failing check fills err with a message naming the argument. For qts16 use
 * cb_model_qts16_validate, which checks its scratch too. */
cb_result cb_model_qts_validate(const cb_skeleton *skeleton, cb_xform_group_cspan local,
                                const void *out, size_t out_count, float range_m, cb_error *err);

/* Whether cb_model_qts16_run can run on these arguments: cb_model_qts_validate's checks (out:
 * out_count int16, range_m: its translation_range_m), then CB_ERR_NULL_ARGUMENT (scratch NULL)
 * and CB_ERR_SPAN_TOO_SHORT (scratch_count below joint_count * 8 floats). */
cb_result cb_model_qts16_validate(const cb_skeleton *skeleton, cb_xform_group_cspan local,
                                  const float *scratch, size_t scratch_count, const int16_t *out,
                                  size_t out_count, float range_m, cb_error *err);

/* Local pose (joint groups) to qts: joint_count * 8 floats, parents first. */
void cb_model_qts_run(const cb_skeleton *skeleton, const cb_xform_group *local, float *out);

/* The same through the scalar prototype, one joint and one float at a time: the reference. */
void cb_model_qts_run_ref(const cb_skeleton *skeleton, const cb_xform_group *local, float *out);

/* Joints [from, to) only (from <= to <= joint_count), as the ltm job's joint range: the results
 * of those joints are the whole run's bits, provided that the ancestors of the range's joints
 * before `from` already hold theirs in `out` (the kernels read them back). */
void cb_model_qts_range(const cb_skeleton *skeleton, const cb_xform_group *local, size_t from,
                        size_t to, float *out);
void cb_model_qts_range_ref(const cb_skeleton *skeleton, const cb_xform_group *local, size_t from,
                            size_t to, float *out);

/* cb_model_qts_run's bits into both `stage` (joint_count * 8 floats; the chain reads parents
 * back from it) and `out` (aligned to 16 bytes) with non-temporal stores, for outputs past the
 * last-level cache (ltm/ltm_kernels.h, cb_ltm_model_stream_unchecked, which also says what the
 * caller owes before `out` is read). */
void cb_model_qts_stream(const cb_skeleton *skeleton, const cb_xform_group *local, float *stage,
                         float *out);

/* The same (through cb_model_qts_run), quantized to qts16 (joint_count * 8 int16); scratch:
 * joint_count * 8 floats (the unquantized transforms). */
void cb_model_qts16_run(const cb_skeleton *skeleton, const cb_xform_group *local,
                        float translation_range_m, float *scratch, int16_t *out);

#endif
