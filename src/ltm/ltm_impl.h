/* Private to src/ltm: what the SIMD job, its scalar reference and the over-characters variant
 * share. */
#ifndef CROWDBLEND_LTM_LTM_IMPL_H
#define CROWDBLEND_LTM_LTM_IMPL_H

#include "assets/asset_layout.h"
#include "ltm/ltm_kernels.h"

/* cb_ltm_matrix_floats, inlined where the frame's kernels build their jobs (an exported
 * function is not inlined into them: with QTS, calling it cost 21 instructions per character
 * in W1, callgrind). */
static inline size_t cb_ltm_layout_floats(cb_matrix_layout layout)
{
    switch (layout) {
    case _CB_MATRIX_LAYOUT_DEFAULT:
    case CB_MATRIX_LAYOUT_MAT4:
        return 16;
    case CB_MATRIX_LAYOUT_MAT3X4:
        return 12;
    case CB_MATRIX_LAYOUT_QTS:
        return 8;
    case _CB_MATRIX_LAYOUT_COUNT:
        break;
    }
    return 0;
}

/* The job of the unchecked kernels: every joint, model matrices only. */
static inline cb_ltm_job cb_ltm_model_job(const cb_skeleton *skeleton, const cb_xform_group *local,
                                          cb_matrix_layout layout, float *model)
{
    return (cb_ltm_job){
        .skeleton = skeleton,
        .local = {local, skeleton->group_count},
        .model_layout = layout,
        .model = {model, skeleton->joint_count * cb_ltm_layout_floats(layout)},
    };
}

/* The job of the skinning kernels: every joint, model and skinning matrices. */
static inline cb_ltm_job cb_ltm_skin_job(const cb_skeleton *skeleton, const cb_xform_group *local,
                                         const cb_ltm_skin *skin)
{
    const size_t n = skeleton->joint_count;
    return (cb_ltm_job){
        .skeleton = skeleton,
        .local = {local, skeleton->group_count},
        .model_layout = skin->model_layout,
        .model = {skin->model, n * cb_ltm_layout_floats(skin->model_layout)},
        .inverse_bind = {skin->inverse_binds, n * 16},
        .skinning_layout = skin->skinning_layout,
        .skinning = {skin->skinning, n * cb_ltm_layout_floats(skin->skinning_layout)},
    };
}

/* Checks shared by cb_ltm_job_run and its reference; on success *to holds the resolved end. */
cb_result cb_ltm_check(const cb_ltm_job *job, cb_error *err, size_t *to);

/* The model-space TRS output of a local-to-model job, joints [from, to): scalar, shared by the
 * SIMD job and its reference (the parent chain leaves nothing to vectorize). */
void cb_ltm_model_xforms(const cb_ltm_job *job, size_t from, size_t to);

/* Local-to-model with SIMD over W characters sharing a skeleton (ltm_chars.c): the measured
 * alternative to cb_ltm_job_run. locals: W pose pointers; models: W outputs of joint_count
 * column-major 4x4 matrices; scratch: cb_ltm_chars_scratch_bytes() bytes aligned to the vector
 * size. No validation: benchmarks and tests only. */
size_t cb_ltm_chars_scratch_bytes(const struct cb_skeleton *s);
void cb_ltm_chars_run(const struct cb_skeleton *s, const cb_xform_group *const *locals,
                      float *const *models, void *scratch);

#endif
