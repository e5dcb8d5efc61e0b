/* Scalar reference of the local-to-model job: the same contract, one joint and one float at a
 * time as anyone would write it without SIMD. The baseline of the benchmark ratios and the
 * second path of the equivalence tests; meson compiles this file with auto-vectorization off,
 * so "scalar" stays scalar. */
#include "base/scalar_math.h"
#include "ltm/ltm_impl.h"
#include "simd/model_qts.h"

/* Column-major 4x4 m[c][r]. */
typedef struct mat4 {
    float m[4][4];
} mat4;

static mat4 local_matrix(const cb_xform_group *local, size_t j)
{
    cb_xform x = cb_lane_xform(local, j);
    cb_fvec3 c[3];
    cb_fq_scaled_columns((cb_fquat){x.rotation[0], x.rotation[1], x.rotation[2], x.rotation[3]},
                         cb_fv(x.scale[0], x.scale[1], x.scale[2]), c);
    mat4 r = {{
        {c[0].x, c[0].y, c[0].z, 0.0f},
        {c[1].x, c[1].y, c[1].z, 0.0f},
        {c[2].x, c[2].y, c[2].z, 0.0f},
        {x.translation[0], x.translation[1], x.translation[2], 1.0f},
    }};
    return r;
}

static mat4 mat4_mul(const mat4 *a, const mat4 *b)
{
    mat4 r;
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            float v = 0.0f;
            for (int k = 0; k < 4; ++k) {
                v += a->m[k][i] * b->m[c][k];
            }
            r.m[c][i] = v;
        }
    }
    return r;
}

static mat4 load(const float *p, cb_matrix_layout layout)
{
    mat4 r;
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            if (layout == CB_MATRIX_LAYOUT_MAT3X4) {
                r.m[c][i] = i < 3 ? p[4 * i + c] : (c == 3 ? 1.0f : 0.0f);
            } else {
                r.m[c][i] = p[4 * c + i];
            }
        }
    }
    return r;
}

static void store(float *p, const mat4 *x, cb_matrix_layout layout)
{
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            if (layout == CB_MATRIX_LAYOUT_MAT3X4) {
                if (i < 3) {
                    p[4 * i + c] = x->m[c][i];
                }
            } else {
                p[4 * c + i] = x->m[c][i];
            }
        }
    }
}

/* Model matrices of joints [from, to) of the job (its `model` span), one joint at a time. QTS
 * goes to the scalar prototype of the qts kernels (simd/model_qts.h: plain float C despite the
 * folder; the SIMD kernel gives its bits). */
static void model_matrices(const cb_ltm_job *job, size_t from, size_t to)
{
    const struct cb_skeleton *s = job->skeleton;
    if (job->model_layout == CB_MATRIX_LAYOUT_QTS) {
        cb_model_qts_range_ref(s, job->local.ptr, from, to, job->model.ptr);
        return;
    }
    cb_matrix_layout ml = job->model_layout == CB_MATRIX_LAYOUT_MAT3X4 ? CB_MATRIX_LAYOUT_MAT3X4
                                                                       : CB_MATRIX_LAYOUT_MAT4;
    cb_matrix_layout sl = job->skinning_layout == CB_MATRIX_LAYOUT_MAT3X4 ? CB_MATRIX_LAYOUT_MAT3X4
                                                                          : CB_MATRIX_LAYOUT_MAT4;
    size_t mf = cb_ltm_layout_floats(ml), sf = cb_ltm_layout_floats(sl);
    for (size_t j = from; j < to; ++j) {
        mat4 x = local_matrix(job->local.ptr, j);
        int32_t p = s->parents[j];
        if (p >= 0) {
            mat4 pm = load(job->model.ptr + (size_t)p * mf, ml);
            x = mat4_mul(&pm, &x);
        }
        store(job->model.ptr + j * mf, &x, ml);
        if (job->skinning.ptr != NULL) {
            mat4 ib = load(job->inverse_bind.ptr + j * 16, CB_MATRIX_LAYOUT_MAT4);
            ib.m[0][3] = ib.m[1][3] = ib.m[2][3] = 0.0f; /* affine: not read (ltm.h) */
            mat4 sk = mat4_mul(&x, &ib);
            store(job->skinning.ptr + j * sf, &sk, sl);
        }
    }
}

void cb_ltm_model_unchecked_ref(const cb_skeleton *skeleton, const cb_xform_group *local,
                                cb_matrix_layout layout, float *model)
{
    const cb_ltm_job job = cb_ltm_model_job(skeleton, local, layout, model);
    model_matrices(&job, 0, skeleton->joint_count);
}

void cb_ltm_skin_unchecked_ref(const cb_skeleton *skeleton, const cb_xform_group *local,
                               const cb_ltm_skin *skin)
{
    const cb_ltm_job job = cb_ltm_skin_job(skeleton, local, skin);
    model_matrices(&job, 0, skeleton->joint_count);
}

cb_result cb_ltm_job_run_ref(const cb_ltm_job *job, cb_error *err)
{
    size_t to;
    cb_result r = cb_ltm_check(job, err, &to);
    if (r != CB_OK) {
        return r;
    }
    if (job->model.ptr != NULL) {
        model_matrices(job, job->from, to);
    }
    if (job->model_xforms.ptr != NULL) {
        cb_ltm_model_xforms(job, job->from, to);
    }
    return CB_OK;
}
