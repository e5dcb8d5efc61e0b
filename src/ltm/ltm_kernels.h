/* The local-to-model stage's unchecked kernels: the ltm module's one internal interface, for the
 * graph runtime's per-frame path (see pose/pose_kernels.h for why unchecked). */
#ifndef CROWDBLEND_LTM_LTM_KERNELS_H
#define CROWDBLEND_LTM_LTM_KERNELS_H

#include "crowdblend/ltm.h"

/* cb_ltm_job_run on valid arguments, every joint, model matrices only: the skeleton's groups of
 * `local` into joint_count matrices of `layout` (MAT4 or MAT3X4) at `model`. */
void cb_ltm_model_unchecked(const cb_skeleton *skeleton, const cb_xform_group *local,
                            cb_matrix_layout layout, float *model);

/* The same through the scalar reference (cb_ltm_job_run_ref). */
void cb_ltm_model_unchecked_ref(const cb_skeleton *skeleton, const cb_xform_group *local,
                                cb_matrix_layout layout, float *model);

#endif
