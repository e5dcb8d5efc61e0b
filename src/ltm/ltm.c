/* Local-to-model: SoA local transforms to model-space matrices, skinning matrices and
 * model-space TRS (crowdblend/ltm.h).
 *
 * Two kinds of parallelism meet here. Turning local TRS into matrices is independent per joint,
 * so it runs W joints at a time on a whole group (cb_soa_xform_to_mat34). The products along
 * the hierarchy are not: a joint needs its parent's model matrix, and in a humanoid the parent
 * is usually the joint just before. So the product is done per joint, 4-wide over the columns of
 * the parent matrix with the local matrix's 12 elements broadcast from the group's SoA staging
 * (ozz-animation's LocalToModelJob makes the same split at W = 4). The alternative, SIMD over W
 * characters sharing a skeleton, is measured in bench/bench_anim.c (ltm_chars) and
 * docs/performance.md. */
#include <math.h>
#include <string.h>

#include "base/scalar_math.h"
#include "ltm/ltm_impl.h"
#include "simd/model_qts.h"
#include "simd/soa_mat.h"

size_t cb_ltm_matrix_floats(cb_matrix_layout layout)
{
    return cb_ltm_layout_floats(layout);
}

static bool layout_ok(cb_matrix_layout l)
{
    return l >= _CB_MATRIX_LAYOUT_DEFAULT && l < _CB_MATRIX_LAYOUT_COUNT;
}

static cb_result span_check(const void *ptr, size_t count, size_t need, const char *what,
                            cb_error *err)
{
    if (ptr == NULL && count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "ltm job: %s has a count but no pointer",
                            what);
    }
    if (ptr != NULL && count < need) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "ltm job: %s has %zu elements, needs %zu",
                            what, count, need);
    }
    return CB_OK;
}

cb_result cb_ltm_check(const cb_ltm_job *job, cb_error *err, size_t *to_out)
{
    if (job == NULL || job->skeleton == NULL || job->local.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "ltm job: %s is NULL",
                            job == NULL             ? "job"
                            : job->skeleton == NULL ? "skeleton"
                                                    : "local");
    }
    const struct cb_skeleton *s = job->skeleton;
    const size_t n = s->joint_count;
    if (job->local.count < s->group_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "ltm job: local has %zu groups, needs %zu",
                            job->local.count, s->group_count);
    }
    if (!cb_is_aligned(job->local.ptr, cb_simd_group_align())) {
        return cb_error_set(err, CB_ERR_MISALIGNED, "ltm job: local is not aligned to %zu bytes",
                            cb_simd_group_align());
    }
    if (!layout_ok(job->model_layout) || !layout_ok(job->skinning_layout)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "ltm job: model_layout or skinning_layout is not a cb_matrix_layout");
    }
    if (job->skinning_layout == CB_MATRIX_LAYOUT_QTS) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "ltm job: skinning_layout QTS is not a skinning layout (MAT4 or "
                            "MAT3X4)");
    }
    size_t to = job->to == 0 ? n : job->to;
    if (job->from > to || to > n) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "ltm job: joint range [%u, %zu) is not within [0, %zu]", job->from, to,
                            n);
    }
    cb_result r;
    if ((r = span_check(job->model.ptr, job->model.count,
                        n * cb_ltm_layout_floats(job->model_layout), "model (floats)", err)) !=
            CB_OK ||
        (r = span_check(job->skinning.ptr, job->skinning.count,
                        n * cb_ltm_layout_floats(job->skinning_layout), "skinning (floats)",
                        err)) != CB_OK ||
        (r = span_check(job->inverse_bind.ptr, job->inverse_bind.count, n * 16,
                        "inverse_bind (floats)", err)) != CB_OK ||
        (r = span_check(job->model_xforms.ptr, job->model_xforms.count, n, "model_xforms", err)) !=
            CB_OK) {
        return r;
    }
    if (job->model.ptr == NULL && job->model_xforms.ptr == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "ltm job: no output (model and model_xforms are both empty)");
    }
    if ((job->skinning.ptr == NULL) != (job->inverse_bind.ptr == NULL)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "ltm job: skinning and inverse_bind go together");
    }
    if (job->skinning.ptr != NULL && job->model.ptr == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "ltm job: skinning needs model (it holds the parents' matrices)");
    }
    /* A qts output is what a quaternion-skinning shader takes in place of skinning matrices;
     * the product with the inverse binds needs the model matrices themselves. */
    if (job->skinning.ptr != NULL && job->model_layout == CB_MATRIX_LAYOUT_QTS) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "ltm job: model_layout QTS with skinning: skinning = model x "
                            "inverse_bind needs model matrices (MAT4 or MAT3X4)");
    }
    *to_out = to;
    return CB_OK;
}

cb_result cb_ltm_job_validate(const cb_ltm_job *job, cb_error *err)
{
    size_t to;
    return cb_ltm_check(job, err, &to);
}

/* Inverse binds: the crowd checks them once at create, so the frame can trust them. */

/* Determinant of a column-major matrix's 3x3 part over the product of its column lengths: 1
 * for a rotation times any scale, 0 for a matrix that flattens space. */
static double relative_det3(const float *m)
{
    double c[3][3], len = 1.0;
    for (int k = 0; k < 3; ++k) {
        for (int r = 0; r < 3; ++r) {
            c[k][r] = m[4 * k + r];
        }
        len *= sqrt(c[k][0] * c[k][0] + c[k][1] * c[k][1] + c[k][2] * c[k][2]);
    }
    double det = c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) -
                 c[1][0] * (c[0][1] * c[2][2] - c[0][2] * c[2][1]) +
                 c[2][0] * (c[0][1] * c[1][2] - c[0][2] * c[1][1]);
    return len > 0.0 ? fabs(det) / len : 0.0;
}

static cb_result check_inverse_bind(const float *m, size_t j, const char *what, cb_error *err)
{
    for (int e = 0; e < 16; ++e) {
        if (!isfinite(m[e])) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "%s[%zu] element %d is %g", what, j, e,
                                (double)m[e]);
        }
    }
    /* Column-major: the bottom row is floats 3, 7, 11, 15. */
    if (fabsf(m[3]) > 1e-6f || fabsf(m[7]) > 1e-6f || fabsf(m[11]) > 1e-6f ||
        fabsf(m[15] - 1.0f) > 1e-6f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s[%zu] is not affine (bottom row %g %g %g %g, want 0 0 0 1)", what, j,
                            (double)m[3], (double)m[7], (double)m[11], (double)m[15]);
    }
    double d = relative_det3(m);
    if (!(d >= 1e-6)) {
        return cb_error_set(err, CB_ERR_DEGENERATE,
                            "%s[%zu] is singular (relative determinant %g): not the inverse of "
                            "a bind matrix",
                            what, j, d);
    }
    return CB_OK;
}

cb_result cb_ltm_check_inverse_binds(cb_float_cspan ibm, size_t joint_count, const char *what,
                                     cb_error *err)
{
    if (ibm.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s has %zu floats but no pointer", what,
                            ibm.count);
    }
    if (ibm.count != joint_count * 16) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "%s has %zu floats; the skeleton's %zu joints need %zu (16 each)", what,
                            ibm.count, joint_count, joint_count * 16);
    }
    cb_result r = CB_OK;
    for (size_t j = 0; j < joint_count && r == CB_OK; ++j) {
        r = check_inverse_bind(ibm.ptr + j * 16, j, what, err);
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Matrices                                                                                   */

CB_INLINE cb_mat4c load_matrix(const float *m, cb_matrix_layout layout)
{
    if (layout == CB_MATRIX_LAYOUT_MAT3X4) {
        cb_mat4c rows = {{cb_col4_loadu(m), cb_col4_loadu(m + 4), cb_col4_loadu(m + 8),
                          cb_col4_setr(0.0f, 0.0f, 0.0f, 1.0f)}};
        return cb_mat4c_transpose(rows);
    }
    return (cb_mat4c){
        {cb_col4_loadu(m), cb_col4_loadu(m + 4), cb_col4_loadu(m + 8), cb_col4_loadu(m + 12)}};
}

/* The matrix as its layout stores it: four columns (MAT4) or the first three rows (MAT3X4),
 * 16 bytes each, at m and, where `stream` is not NULL, then at stream too with non-temporal
 * stores in the same order (cb_ltm_model_stream_unchecked). */
CB_INLINE void store_matrix(float *m, float *stream, cb_mat4c x, cb_matrix_layout layout)
{
    const bool rows = layout == CB_MATRIX_LAYOUT_MAT3X4;
    const cb_mat4c v = rows ? cb_mat4c_transpose(x) : x;
    const int n = rows ? 3 : 4;
    for (int c = 0; c < n; ++c) {
        cb_col4_storeu(m + 4 * c, v.c[c]);
    }
    if (stream != NULL) {
        for (int c = 0; c < n; ++c) {
            simde_mm_stream_ps(stream + 4 * c, v.c[c]);
        }
    }
}

/* model x inverse bind for an affine inverse bind: its bottom row's first three elements
 * (floats 3, 7, 11) are taken as 0 and their products (model column 3 x 0) left out of columns
 * 0 to 2: 3 of the 16 broadcasts and products. Each of those columns starts from +0 instead,
 * so its bottom element, a sum of signed zeros, is +0 as in the full product (a MAT4 output's
 * bottom row reads 0 0 0 1, never -0). Column 3 keeps all four terms, so a float 15 of 1 adds
 * the translation exactly. */
CB_INLINE cb_mat4c mul_inverse_bind(const cb_mat4c *m, const float *ib)
{
    const cb_col4 zero = cb_col4_set1(0.0f);
    cb_mat4c r;
    for (int c = 0; c < 3; ++c) {
        cb_col4 v = cb_col4_fmadd(m->c[0], cb_col4_set1(ib[4 * c + 0]), zero);
        v = cb_col4_fmadd(m->c[1], cb_col4_set1(ib[4 * c + 1]), v);
        r.c[c] = cb_col4_fmadd(m->c[2], cb_col4_set1(ib[4 * c + 2]), v);
    }
    cb_col4 v = cb_col4_mul(m->c[0], cb_col4_set1(ib[12]));
    v = cb_col4_fmadd(m->c[1], cb_col4_set1(ib[13]), v);
    v = cb_col4_fmadd(m->c[2], cb_col4_set1(ib[14]), v);
    r.c[3] = cb_col4_fmadd(m->c[3], cb_col4_set1(ib[15]), v);
    return r;
}

/* The layouts and `skin` are template parameters in effect: each call site passes constants,
 * so the compiler builds one loop per combination with no per-joint branch on them (sl only
 * matters with skin). A loop without skinning carries none of its code: sharing one loop made
 * the crowd's model-only frame 5 % more instructions (callgrind, the Fox). `stream` is NULL
 * but in cb_ltm_model_stream_unchecked (model only, 16-byte aligned): each joint's matrix also
 * goes there with non-temporal stores, and `model` is then the caller's stage in L1, which the
 * chain reads parents back from (a line written by a streaming store is read from memory). */
CB_INLINE void matrices(const cb_ltm_job *job, size_t from, size_t to, cb_matrix_layout ml,
                        cb_matrix_layout sl, bool skin, float *stream)
{
    const struct cb_skeleton *s = job->skeleton;
    const size_t mf = cb_ltm_layout_floats(ml);
    const size_t sf = cb_ltm_layout_floats(sl);
    float *model = job->model.ptr;
    CB_VF_ALIGNED float local[12 * CB_W];
    /* The last joint's model matrix stays in registers: in a skeleton laid out depth first the
     * parent is usually the joint just before, and reading it back from memory would put a
     * store-to-load forwarding delay on the critical path of every chain. */
    const cb_mat4c identity = {{cb_col4_setr(1, 0, 0, 0), cb_col4_setr(0, 1, 0, 0),
                                cb_col4_setr(0, 0, 1, 0), cb_col4_setr(0, 0, 0, 1)}};
    cb_mat4c prev = identity;
    for (size_t g = from / CB_W; g * CB_W < to; ++g) {
        cb_soa_mat34 m = cb_soa_xform_to_mat34(cb_soa_xform_load(&job->local.ptr[g]));
        cb_soa_mat34_store(local, &m);
        size_t l0 = g * CB_W < from ? from - g * CB_W : 0;
        size_t l1 = to - g * CB_W < CB_W ? to - g * CB_W : CB_W;
        for (size_t l = l0; l < l1; ++l) {
            size_t j = g * CB_W + l;
            int32_t p = s->parents[j];
            /* Only the parent is chosen per case; the product is written once, so that the
             * compiler folds the 12 broadcasts of the local matrix into the multiply-adds
             * (it hoisted them into registers when each case had its own product). A root's
             * parent is the identity, which gives the local matrix exactly. */
            cb_mat4c pm;
            if (p < 0) {
                pm = identity;
            } else if ((size_t)p + 1 == j && j > from) {
                pm = prev;
            } else {
                pm = load_matrix(model + (size_t)p * mf, ml);
            }
            cb_mat4c x = cb_mat4c_mul_affine(&pm, local, l);
            store_matrix(model + j * mf, stream != NULL ? stream + j * mf : NULL, x, ml);
            prev = x;
            if (skin) {
                store_matrix(job->skinning.ptr + j * sf, NULL,
                             mul_inverse_bind(&x, job->inverse_bind.ptr + j * 16), sl);
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Model-space TRS: scalar, per joint (the chain allows nothing wider; see the file comment)  */

void cb_ltm_model_xforms(const cb_ltm_job *job, size_t from, size_t to)
{
    const struct cb_skeleton *s = job->skeleton;
    cb_xform *out = job->model_xforms.ptr;
    for (size_t j = from; j < to; ++j) {
        cb_xform x = cb_lane_xform(job->local.ptr, j);
        int32_t p = s->parents[j];
        if (p >= 0) {
            /* model = parent * local: rotations multiply, the translation is the parent's
             * rotation of its scale times ours, plus its own; scales multiply. */
            const cb_xform *pp = &out[p];
            cb_fquat pq = {pp->rotation[0], pp->rotation[1], pp->rotation[2], pp->rotation[3]};
            cb_fquat q = cb_fq_mul(
                pq, (cb_fquat){x.rotation[0], x.rotation[1], x.rotation[2], x.rotation[3]});
            cb_fvec3 v = cb_fq_rotate(pq, cb_fv(pp->scale[0] * x.translation[0],
                                                pp->scale[1] * x.translation[1],
                                                pp->scale[2] * x.translation[2]));
            x.rotation[0] = q.x, x.rotation[1] = q.y, x.rotation[2] = q.z, x.rotation[3] = q.w;
            x.translation[0] = pp->translation[0] + v.x;
            x.translation[1] = pp->translation[1] + v.y;
            x.translation[2] = pp->translation[2] + v.z;
            for (int k = 0; k < 3; ++k) {
                x.scale[k] *= pp->scale[k];
            }
        }
        out[j] = x;
    }
}

/* The variants of `matrices`: model only in either layout, or model and skinning in each pair
 * of layouts. Inlined, so that the frame's kernels below (from = 0, every joint) get loops with
 * the range folded in, as they had before skinning joined them. */
CB_INLINE void model_only(const cb_ltm_job *job, size_t from, size_t to)
{
    const cb_matrix_layout m4 = CB_MATRIX_LAYOUT_MAT4, m34 = CB_MATRIX_LAYOUT_MAT3X4;
    if (job->model_layout == m34) {
        matrices(job, from, to, m34, m4, false, NULL);
    } else {
        matrices(job, from, to, m4, m4, false, NULL);
    }
}

CB_INLINE void model_and_skinning(const cb_ltm_job *job, size_t from, size_t to)
{
    const cb_matrix_layout m4 = CB_MATRIX_LAYOUT_MAT4, m34 = CB_MATRIX_LAYOUT_MAT3X4;
    const bool model34 = job->model_layout == m34;
    const bool skin34 = job->skinning_layout == m34;
    if (model34 && skin34) {
        matrices(job, from, to, m34, m34, true, NULL);
    } else if (model34) {
        matrices(job, from, to, m34, m4, true, NULL);
    } else if (skin34) {
        matrices(job, from, to, m4, m34, true, NULL);
    } else {
        matrices(job, from, to, m4, m4, true, NULL);
    }
}

/* QTS goes straight to its kernel (simd/model_qts.h, the whole skeleton); model_only's loops
 * are the matrix layouts'. */
void cb_ltm_model_unchecked(const cb_skeleton *skeleton, const cb_xform_group *local,
                            cb_matrix_layout layout, float *model)
{
    const cb_ltm_job job = cb_ltm_model_job(skeleton, local, layout, model);
    CB_ASSERT(cb_ltm_job_validate(&job, NULL) == CB_OK);
    if (layout == CB_MATRIX_LAYOUT_QTS) {
        cb_model_qts_run(skeleton, local, model);
        return;
    }
    model_only(&job, 0, skeleton->joint_count);
}

/* Every layout writes its joints in order, 16 bytes at a time, so the streaming stores go to
 * consecutive addresses and fill each 64-byte line of the output whole: with MAT4 a joint is
 * one line (a 64-byte aligned one when the slot is), with MAT3X4 (48 bytes) and QTS (32 bytes)
 * a line holds parts of two joints or two whole ones, which matters nowhere as long as the
 * order holds. A line that a slot shares with the host's padding, or with a neighbouring slot
 * written by another chunk or thread, goes out as a partial write (the bits are the same; a
 * slot stride that is a multiple of 64 bytes avoids it). The stage keeps what the chain reads
 * back, in the layout's own form. The caller (crowd/update.c) checked the 16-byte alignment
 * that the streaming stores need. */
void cb_ltm_model_stream_unchecked(const cb_skeleton *skeleton, const cb_xform_group *local,
                                   cb_matrix_layout layout, float *stage, float *model)
{
    const cb_matrix_layout m4 = CB_MATRIX_LAYOUT_MAT4, m34 = CB_MATRIX_LAYOUT_MAT3X4;
    CB_ASSERT(stage != NULL && model != NULL && (uintptr_t)model % 16 == 0);
    if (layout == CB_MATRIX_LAYOUT_QTS) {
        cb_model_qts_stream(skeleton, local, stage, model);
        return;
    }
    const cb_ltm_job job = cb_ltm_model_job(skeleton, local, layout, stage);
    if (layout == m34) {
        matrices(&job, 0, skeleton->joint_count, m34, m4, false, model);
    } else {
        matrices(&job, 0, skeleton->joint_count, m4, m4, false, model);
    }
}

void cb_ltm_skin_unchecked(const cb_skeleton *skeleton, const cb_xform_group *local,
                           const cb_ltm_skin *skin)
{
    const cb_ltm_job job = cb_ltm_skin_job(skeleton, local, skin);
    CB_ASSERT(cb_ltm_job_validate(&job, NULL) == CB_OK);
    model_and_skinning(&job, 0, skeleton->joint_count);
}

void cb_ltm_stream_fence(void)
{
    simde_mm_sfence();
}

cb_result cb_ltm_job_run(const cb_ltm_job *job, cb_error *err)
{
    size_t to;
    cb_result r = cb_ltm_check(job, err, &to);
    if (r != CB_OK) {
        return r;
    }
    if (job->model.ptr != NULL && job->skinning.ptr != NULL) {
        model_and_skinning(job, job->from, to);
    } else if (job->model.ptr != NULL && job->model_layout == CB_MATRIX_LAYOUT_QTS) {
        cb_model_qts_range(job->skeleton, job->local.ptr, job->from, to, job->model.ptr);
    } else if (job->model.ptr != NULL) {
        model_only(job, job->from, to);
    }
    if (job->model_xforms.ptr != NULL) {
        cb_ltm_model_xforms(job, job->from, to);
    }
    return CB_OK;
}
