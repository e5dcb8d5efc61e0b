/* The local-to-model stage's unchecked kernels: the ltm module's one internal interface, for the
 * graph runtime's per-frame path (see pose/pose_kernels.h for why unchecked). */
#ifndef CROWDBLEND_LTM_LTM_KERNELS_H
#define CROWDBLEND_LTM_LTM_KERNELS_H

#include "crowdblend/ltm.h"

/* cb_ltm_job_run on valid arguments, every joint, model matrices only: the skeleton's groups of
 * `local` into joint_count elements of `layout` (MAT4, MAT3X4, or QTS's 8 floats through
 * simd/model_qts.h) at `model`. */
void cb_ltm_model_unchecked(const cb_skeleton *skeleton, const cb_xform_group *local,
                            cb_matrix_layout layout, float *model);

/* The same through the scalar reference (cb_ltm_job_run_ref). */
void cb_ltm_model_unchecked_ref(const cb_skeleton *skeleton, const cb_xform_group *local,
                                cb_matrix_layout layout, float *model);

/* cb_ltm_model_unchecked's output in `layout` (MAT4, MAT3X4 or QTS) into both `stage`
 * (joint_count elements of the layout, aligned to the vector size; the chain reads the parents
 * back from it, in L1) and `model` (aligned to 16 bytes) with non-temporal stores: the output's
 * lines go to memory without being read first and without taking cache space, for outputs past
 * the last-level cache (crowd/update.c). The joints are written in order, 16 bytes at a time,
 * so the stores fill every line of the output whole, also where a line holds parts of two
 * joints (MAT3X4's 48 bytes), but for a line the slot shares with padding or with a slot
 * written by another chunk or thread (a partial write; a stride of a multiple of 64 bytes has
 * none). The bits are cb_ltm_model_unchecked's. Before another thread
 * reads `model`, or before the work's end is signalled, the writing thread calls
 * cb_ltm_stream_fence (an sfence: streaming stores are weakly ordered). */
void cb_ltm_model_stream_unchecked(const cb_skeleton *skeleton, const cb_xform_group *local,
                                   cb_matrix_layout layout, float *stage, float *model);
void cb_ltm_stream_fence(void);

/* The outputs of a skinning local-to-model: model matrices (which the hierarchy reads back, so
 * they are always written, into a scratch when the caller does not keep them) and skinning
 * matrices = model x inverse bind. */
typedef struct cb_ltm_skin {
    cb_matrix_layout model_layout;
    float *model;               /* joint_count matrices of model_layout */
    const float *inverse_binds; /* joint_count column-major 4x4, checked (below) */
    cb_matrix_layout skinning_layout;
    float *skinning; /* joint_count matrices of skinning_layout */
} cb_ltm_skin;

/* cb_ltm_job_run on valid arguments, every joint, model and skinning matrices. */
void cb_ltm_skin_unchecked(const cb_skeleton *skeleton, const cb_xform_group *local,
                           const cb_ltm_skin *skin);

/* The same through the scalar reference. */
void cb_ltm_skin_unchecked_ref(const cb_skeleton *skeleton, const cb_xform_group *local,
                               const cb_ltm_skin *skin);

/* Whether `inverse_binds` can skin `joint_count` joints: exactly joint_count x 16 floats, all
 * finite, each matrix affine (bottom row 0 0 0 1 within 1e-6, the pack format's rule) and
 * invertible (the 3x3 part's determinant at least 1e-6 of the product of its column lengths:
 * an inverse bind is the inverse of a matrix, so a singular one is corrupt data). The message
 * starts with `what` and names the joint and the fault. */
cb_result cb_ltm_check_inverse_binds(cb_float_cspan inverse_binds, size_t joint_count,
                                     const char *what, cb_error *err);

#endif
