/**
 * @file crowdblend/ltm.h
 * @brief Local-to-model, step (6) of the frame: local joint transforms to model-space matrices
 *        (4x4 or 3x4) or compact rotation-translation-scale (qts), skinning matrices
 *        (model x inverse bind) and model-space TRS.
 *
 * The job walks the joints parents first: model[j] = model[parent[j]] x local[j], with
 * local[j] = T * R * S (translation, rotation, scale). Each local group is turned into matrices
 * W joints at a time (SIMD over joints); the products along the hierarchy are 4-wide SIMD over
 * a matrix's columns. Measured against "SIMD over W characters that share a skeleton" in
 * docs/performance.md, which also says why this form was chosen.
 *
 * MATRIX LAYOUTS
 *  - CB_MATRIX_LAYOUT_MAT4: 16 floats per joint, column-major (cglm mat4 / mat4s, OpenGL):
 *    column c is floats 4c..4c+3; the translation is floats 12..14, float 15 is 1.
 *  - CB_MATRIX_LAYOUT_MAT3X4: 12 floats per joint, the top three rows of the 4x4 matrix, row-major
 *    (HLSL float3x4 as shaders use for skinning): row r is floats 4r..4r+3, translation in
 *    floats 3, 7 and 11.
 *  - CB_MATRIX_LAYOUT_QTS: 8 floats per joint, 32 bytes (half of MAT4): the model rotation
 *    qx qy qz qw (w real; the sign follows the product along the chain, so w may be negative),
 *    the translation tx ty tz and one uniform scale s. Composed in quaternion form along the
 *    hierarchy (q = q_parent q_local, s = s_parent s_local, t = t_parent + s_parent
 *    rotate(q_parent, t_local)), for hosts that skin with quaternions (quaternion-translation or
 *    dual-quaternion skinning). It is the MAT4 matrix for uniform scales, within float rounding:
 *    a few roundings per level of the hierarchy (under 2.2e-7 per level for the rotation
 *    matrix's elements, 1.1e-7 of the chain's length for translations; src/simd/model_qts.h).
 *    A non-uniform local scale is taken from its x component, as the layout cannot hold shear
 *    (use MAT4 or MAT3X4 then). Quaternions are not renormalized (local poses from the blend
 *    jobs are unit within float rounding). Not a skinning layout, and not with inverse_bind:
 *    a qts output is for skinning in the shader, which takes it in place of a matrix palette.
 *    The IK jobs and foot locking read matrices, and refuse it (crowdblend/ik.h, follow.h).
 *    Measured against the matrices in docs/performance.md ("Compact outputs").
 *
 * A joint range [from, to) computes only those joints; the model matrices of their ancestors
 * outside the range must already be in `model` (from an earlier run), as the job reads them.
 *
 * Threading: jobs with distinct outputs may run concurrently on a shared skeleton. Nothing
 * allocates. Results are bit-identical for identical inputs.
 */
#ifndef CROWDBLEND_LTM_H
#define CROWDBLEND_LTM_H

#include "crowdblend/base.h"
#include "crowdblend/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Memory layout of the matrices a job writes. */
typedef enum cb_matrix_layout {
    _CB_MATRIX_LAYOUT_DEFAULT = 0, /**< CB_MATRIX_LAYOUT_MAT4 */
    CB_MATRIX_LAYOUT_MAT4,         /**< 16 floats, column-major (cglm mat4) */
    CB_MATRIX_LAYOUT_MAT3X4,       /**< 12 floats: rows 0..2 of the 4x4, row-major */
    CB_MATRIX_LAYOUT_QTS,          /**< 8 floats: qx qy qz qw tx ty tz s (above) */
    _CB_MATRIX_LAYOUT_COUNT
} cb_matrix_layout;

/** Floats per joint for a layout (16, 12 or 8; 0 for an invalid value). */
CB_API size_t cb_ltm_matrix_floats(cb_matrix_layout layout);

/** Local-to-model job. */
typedef struct cb_ltm_job {
    const cb_skeleton *skeleton; /**< required */
    /** The local pose: >= group count groups, aligned to cb_simd_group_align(). */
    cb_xform_group_cspan local;
    /** First joint computed (default 0). */
    uint32_t from;
    /** One past the last joint computed; default (0): the joint count. */
    uint32_t to;
    /** Layout of `model` (default MAT4; QTS only without skinning). */
    cb_matrix_layout model_layout;
    /**
     * Model-space matrices, joint_count * cb_ltm_matrix_floats(model_layout) floats (no alignment
     * needed). Joints in [from, to) are written; joints before `from` are read where they are
     * ancestors of the range. Required unless only `model_xforms` is wanted (then empty).
     */
    cb_float_span model;
    /**
     * Optional inverse bind matrices: joint_count column-major 4x4 matrices (16 floats each,
     * any affine matrix: floats 3, 7 and 11, the bottom row's first three, are taken as 0 and
     * not read). With them the job also writes skinning = model x inverse_bind.
     */
    cb_float_cspan inverse_bind;
    /** Layout of `skinning` (default MAT4; MAT4 or MAT3X4). */
    cb_matrix_layout skinning_layout;
    /** Skinning matrices out, joint_count * cb_ltm_matrix_floats(skinning_layout) floats. */
    cb_float_span skinning;
    /**
     * Optional model-space TRS out: joint_count transforms, composed as rotation
     * q = q_parent q_local, scale s = s_parent * s_local, translation
     * t = t_parent + q_parent (s_parent * t_local). Exact for uniform scales; with non-uniform
     * parent scale and rotation the model matrix has shear, which TRS cannot hold.
     */
    cb_xform_span model_xforms;
} cb_ltm_job;

/**
 * Checks a local-to-model job.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (job, skeleton, local; an output span with a count but
 *         no pointer), CB_ERR_SPAN_TOO_SHORT, CB_ERR_MISALIGNED (local), CB_ERR_INVALID_ARGUMENT
 *         (a bad layout, from > to or to > joint count, no output at all, skinning without
 *         inverse_bind or the reverse, skinning without model, a QTS skinning layout, a QTS
 *         model layout with skinning).
 */
CB_API cb_result cb_ltm_job_validate(const cb_ltm_job *job, cb_error *err);

/** Validates, then computes. Writes nothing on failure. */
CB_API cb_result cb_ltm_job_run(const cb_ltm_job *job, cb_error *err);

/**
 * Scalar reference of cb_ltm_job_run: the same contract in plain float C, one element at a
 * time (benchmark baseline and equivalence tests).
 */
CB_API cb_result cb_ltm_job_run_ref(const cb_ltm_job *job, cb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_LTM_H */
