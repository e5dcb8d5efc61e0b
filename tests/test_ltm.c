/* ltm: the local-to-model job. Validity table; model matrices (both layouts), skinning matrices
 * and model-space TRS against a double-precision reference, for the SIMD job and its scalar
 * _ref twin; joint ranges; padding lanes that never leak; the QTS layout is the qts kernels'
 * output (simd/model_qts.h, whose own test holds them to double), also over joint ranges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "ltm/ltm_impl.h"
#include "simd/model_qts.h"
#include "test_util.h"

/* Errors in model space, relative to the largest element of the matrix (random skeletons have
 * per-joint scales of 0.6..1.6, which compound along chains of up to 70 joints): each level is
 * an affine product whose elements are 3-4 term fused sums, so the relative error grows by
 * about one rounding per level. Rotations are compared as angles, scale removed. Measured maxima
 * over the three configurations and both paths: elements 1.4e-6 (skinning), positions 1.3e-6
 * (model TRS), rotations 1.1e-6 rad; the bounds are about 2.2x. */
static const double BOUND_ELEM = 3e-6, BOUND_POS = 3e-6, BOUND_ROT = 2.5e-6;

typedef struct ltm_case {
    cb_skeleton *s;
    size_t n, groups;
    cb_xform_group *local;
    dref_xform *dlocal;
    dref_mat *model; /* reference */
    float *ib;       /* inverse bind, 16 per joint */
    dref_mat *dib;
} ltm_case;

static ltm_case case_make(cb_prng *r, size_t n, bool uniform)
{
    ltm_case c = {0};
    c.s = cb_test_random_skeleton(r, n, false, false);
    c.n = n;
    c.groups = cb_skeleton_group_count(c.s);
    c.local = cb_test_pose_alloc(c.s, true);
    c.dlocal = calloc(n, sizeof *c.dlocal);
    c.model = calloc(n, sizeof *c.model);
    c.ib = calloc(n * 16, sizeof(float));
    c.dib = calloc(n, sizeof *c.dib);
    cb_xform *x = calloc(n, sizeof *x);
    for (size_t j = 0; j < n; ++j) {
        x[j] = cb_test_random_xform(r, 0.4f);
        float s = cb_prng_range(r, 0.6f, 1.6f);
        for (int k = 0; k < 3; ++k) {
            x[j].scale[k] = uniform ? s : cb_prng_range(r, 0.6f, 1.6f);
        }
        /* Inverse bind: any affine matrix (here a random TRS), used as given. */
        cb_xform b = cb_test_random_xform(r, 1.0f);
        dref_xform db = {{b.translation[0], b.translation[1], b.translation[2]},
                         {b.rotation[0], b.rotation[1], b.rotation[2], b.rotation[3]},
                         {1, 1, 1}};
        dref_mat m = dref_mat_from_xform(&db);
        for (int col = 0; col < 4; ++col) {
            for (int row = 0; row < 4; ++row) {
                c.ib[16 * j + 4 * col + row] = (float)m.m[col][row];
                m.m[col][row] = c.ib[16 * j + 4 * col + row];
            }
        }
        c.dib[j] = m;
    }
    /* Pack over the NaN-filled buffer: the padding lanes get identity from the pack, so poison
     * them again afterwards. */
    assert_int_equal(cb_xform_pack((cb_xform_cspan){x, n}, c.local, c.groups), CB_OK);
    size_t w = cb_simd_width();
    float *f = (float *)c.local;
    for (size_t j = n; j < c.groups * w; ++j) {
        for (int k = 0; k < 10; ++k) {
            f[(j / w) * 10 * w + k * w + j % w] = NAN;
        }
    }
    for (size_t j = 0; j < n; ++j) {
        c.dlocal[j] = dref_from_pose(c.local, j);
    }
    dref_local_to_model(cb_skeleton_parents(c.s), n, c.dlocal, c.model);
    free(x);
    return c;
}

static void case_free(ltm_case *c)
{
    free(c->local), free(c->dlocal), free(c->model), free(c->ib), free(c->dib);
    cb_skeleton_destroy(c->s);
}

static cb_result run(const cb_ltm_job *j, bool ref)
{
    return ref ? cb_ltm_job_run_ref(j, NULL) : cb_ltm_job_run(j, NULL);
}

static double mat_scale(const dref_mat *m)
{
    double s = 1.0;
    for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 3; ++r) {
            s = fmax(s, fabs(m->m[c][r]));
        }
    }
    return s;
}

static void ltm_job_validity(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    ltm_case c = case_make(&r, 2 * cb_simd_width() + 1, false);
    size_t n = c.n;
    float *model = malloc(n * 16 * sizeof(float)), *skin = malloc(n * 16 * sizeof(float));
    cb_xform *xf = malloc(n * sizeof(cb_xform));
    memset(model, 0x5a, n * 16 * sizeof(float));
    float *before = malloc(n * 16 * sizeof(float));
    memcpy(before, model, n * 16 * sizeof(float));
    cb_ltm_job zero = {0};
    assert_int_equal(cb_ltm_job_validate(&zero, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_ltm_job_run(NULL, NULL), CB_ERR_NULL_ARGUMENT);
    const cb_ltm_job good = {
        .skeleton = c.s, .local = {c.local, c.groups}, .model = {model, n * 16}};
    struct {
        cb_result want;
        const char *needle;
    } cases[] = {
        {CB_ERR_NULL_ARGUMENT, "skeleton"},
        {CB_ERR_NULL_ARGUMENT, "local"},
        {CB_ERR_SPAN_TOO_SHORT, "local"},
        {CB_ERR_MISALIGNED, "local"},
        {CB_ERR_INVALID_ARGUMENT, "layout"},
        {CB_ERR_INVALID_ARGUMENT, "layout"},
        {CB_ERR_INVALID_ARGUMENT, "range"},
        {CB_ERR_INVALID_ARGUMENT, "range"},
        {CB_ERR_SPAN_TOO_SHORT, "model"},
        {CB_ERR_SPAN_TOO_SHORT, "model"},
        {CB_ERR_NULL_ARGUMENT, "model"},
        {CB_ERR_INVALID_ARGUMENT, "no output"},
        {CB_ERR_INVALID_ARGUMENT, "inverse_bind"},
        {CB_ERR_INVALID_ARGUMENT, "inverse_bind"},
        {CB_ERR_SPAN_TOO_SHORT, "inverse_bind"},
        {CB_ERR_SPAN_TOO_SHORT, "skinning"},
        {CB_ERR_SPAN_TOO_SHORT, "model_xforms"},
        {CB_ERR_INVALID_ARGUMENT, "skinning needs model"},
        {CB_ERR_INVALID_ARGUMENT, "skinning_layout QTS"},
        {CB_ERR_INVALID_ARGUMENT, "skinning_layout QTS"},
        {CB_ERR_INVALID_ARGUMENT, "model_layout QTS with skinning"},
        {CB_ERR_SPAN_TOO_SHORT, "model"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_ltm_job j = good;
        switch (k) {
        case 0:
            j.skeleton = NULL;
            break;
        case 1:
            j.local.ptr = NULL;
            break;
        case 2:
            j.local.count = c.groups - 1;
            break;
        case 3:
            j.local.ptr = (const cb_xform_group *)((const char *)c.local + 4);
            break;
        case 4:
            j.model_layout = _CB_MATRIX_LAYOUT_COUNT;
            break;
        case 5:
            j.skinning_layout = (cb_matrix_layout)-1;
            break;
        case 6:
            j.from = 3, j.to = 2;
            break;
        case 7:
            j.to = (uint32_t)n + 1;
            break;
        case 8:
            j.model.count = n * 16 - 1;
            break;
        case 9:
            j.model_layout = CB_MATRIX_LAYOUT_MAT3X4, j.model.count = n * 12 - 1;
            break;
        case 10:
            j.model.ptr = NULL;
            break;
        case 11:
            j.model = (cb_float_span){NULL, 0};
            break;
        case 12:
            j.skinning = (cb_float_span){skin, n * 16};
            break;
        case 13:
            j.inverse_bind = (cb_float_cspan){c.ib, n * 16};
            break;
        case 14:
            j.skinning = (cb_float_span){skin, n * 16};
            j.inverse_bind = (cb_float_cspan){c.ib, n * 16 - 1};
            break;
        case 15:
            j.skinning = (cb_float_span){skin, n * 12 - 1};
            j.skinning_layout = CB_MATRIX_LAYOUT_MAT3X4;
            j.inverse_bind = (cb_float_cspan){c.ib, n * 16};
            break;
        case 16:
            j.model_xforms = (cb_xform_span){xf, n - 1};
            break;
        case 17:
            j.model = (cb_float_span){NULL, 0};
            j.model_xforms = (cb_xform_span){xf, n};
            j.skinning = (cb_float_span){skin, n * 16};
            j.inverse_bind = (cb_float_cspan){c.ib, n * 16};
            break;
        case 18: /* QTS is never a skinning layout, also without skinning */
            j.skinning_layout = CB_MATRIX_LAYOUT_QTS;
            break;
        case 19:
            j.skinning_layout = CB_MATRIX_LAYOUT_QTS;
            j.skinning = (cb_float_span){skin, n * 16};
            j.inverse_bind = (cb_float_cspan){c.ib, n * 16};
            break;
        case 20: /* a QTS model cannot be skinned */
            j.model_layout = CB_MATRIX_LAYOUT_QTS;
            j.skinning = (cb_float_span){skin, n * 16};
            j.inverse_bind = (cb_float_cspan){c.ib, n * 16};
            break;
        case 21:
            j.model_layout = CB_MATRIX_LAYOUT_QTS, j.model.count = n * 8 - 1;
            break;
        }
        cb_error err = {0};
        cb_result got = cb_ltm_job_run(&j, &err);
        CB_CHECK(got == cases[k].want, "case %zu: %s, want %s (%s)", k, cb_result_str(got),
                 cb_result_str(cases[k].want), err.message);
        CB_CHECK(strstr(err.message, cases[k].needle) != NULL,
                 "case %zu: \"%s\" does not name \"%s\"", k, err.message, cases[k].needle);
        assert_int_equal(cb_ltm_job_run_ref(&j, NULL), cases[k].want);
        assert_memory_equal(model, before, n * 16 * sizeof(float));
    }
    assert_int_equal(cb_ltm_job_run(&good, NULL), CB_OK);
    cb_ltm_job only_xf = {.skeleton = c.s, .local = {c.local, c.groups}, .model_xforms = {xf, n}};
    assert_int_equal(cb_ltm_job_run(&only_xf, NULL), CB_OK);
    assert_int_equal(cb_ltm_matrix_floats(CB_MATRIX_LAYOUT_MAT4), 16);
    assert_int_equal(cb_ltm_matrix_floats(_CB_MATRIX_LAYOUT_DEFAULT), 16);
    assert_int_equal(cb_ltm_matrix_floats(CB_MATRIX_LAYOUT_MAT3X4), 12);
    assert_int_equal(cb_ltm_matrix_floats(CB_MATRIX_LAYOUT_QTS), 8);
    assert_int_equal(cb_ltm_matrix_floats(_CB_MATRIX_LAYOUT_COUNT), 0);
    free(model), free(skin), free(xf), free(before);
    case_free(&c);
}

/* Model and skinning matrices in both layouts, against double, for both paths. */
static void ltm_matrices_match_double_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int path = 0; path < 2; ++path) {
        cb_err_track ee =
            cb_err_track_make(path ? "ltm ref model elements (rel)" : "ltm model elements (rel)");
        cb_err_track ep =
            cb_err_track_make(path ? "ltm ref model position (rel)" : "ltm model position (rel)");
        cb_err_track er =
            cb_err_track_make(path ? "ltm ref model rotation (rad)" : "ltm model rotation (rad)");
        cb_err_track es = cb_err_track_make(path ? "ltm ref skinning elements (rel)"
                                                 : "ltm skinning elements (rel)");
        for (int it = 0; it < 60; ++it) {
            size_t n = 1 + cb_prng_below(&r, 70);
            ltm_case c = case_make(&r, n, it % 2 == 0);
            float *m4 = malloc(n * 16 * sizeof(float)), *m3 = malloc(n * 12 * sizeof(float));
            float *s4 = malloc(n * 16 * sizeof(float)), *s3 = malloc(n * 12 * sizeof(float));
            float *m3b = malloc(n * 12 * sizeof(float));
            cb_ltm_job j = {.skeleton = c.s,
                            .local = {c.local, c.groups},
                            .model = {m4, n * 16},
                            .inverse_bind = {c.ib, n * 16},
                            .skinning = {s4, n * 16}};
            assert_int_equal(run(&j, path), CB_OK);
            cb_ltm_job j3 = j;
            j3.model_layout = CB_MATRIX_LAYOUT_MAT3X4, j3.model = (cb_float_span){m3, n * 12};
            j3.skinning_layout = CB_MATRIX_LAYOUT_MAT3X4, j3.skinning = (cb_float_span){s3, n * 12};
            assert_int_equal(run(&j3, path), CB_OK);
            for (size_t k = 0; k < n; ++k) {
                const dref_mat *want = &c.model[k];
                double scale = mat_scale(want);
                dref_mat skin = dref_mat_mul(want, &c.dib[k]);
                double sscale = mat_scale(&skin);
                for (int col = 0; col < 4; ++col) {
                    for (int row = 0; row < 4; ++row) {
                        cb_err_track_add(&ee, m4[16 * k + 4 * col + row] / scale,
                                         want->m[col][row] / scale, k);
                        cb_err_track_add(&es, s4[16 * k + 4 * col + row] / sscale,
                                         skin.m[col][row] / sscale, k);
                        if (row < 3) {
                            /* The 3x4 layout holds the same numbers, transposed. */
                            CB_CHECK(m3[12 * k + 4 * row + col] == m4[16 * k + 4 * col + row],
                                     "3x4 model differs from 4x4 at joint %zu", k);
                            CB_CHECK(s3[12 * k + 4 * row + col] == s4[16 * k + 4 * col + row],
                                     "3x4 skinning differs from 4x4 at joint %zu", k);
                        }
                    }
                }
                for (int e = 0; e < 3; ++e) {
                    cb_err_track_add(&ep, m4[16 * k + 12 + e] / scale, want->m[3][e] / scale, k);
                }
                cb_err_track_add(&er, dref_rotation_error(want, m4 + 16 * k), 0.0, k);
            }
            /* Joint ranges: [0, k) then [k, n) is the whole job, bit for bit, in both layouts. */
            size_t split = cb_prng_below(&r, (uint32_t)n + 1);
            memset(m3b, 0, n * 12 * sizeof(float));
            cb_ltm_job a = j3, b = j3;
            a.model.ptr = b.model.ptr = m3b;
            a.skinning = b.skinning = (cb_float_span){NULL, 0};
            a.inverse_bind = b.inverse_bind = (cb_float_cspan){NULL, 0};
            a.to = (uint32_t)split;
            b.from = (uint32_t)split;
            if (split > 0) {
                assert_int_equal(run(&a, path), CB_OK);
            }
            assert_int_equal(run(&b, path), CB_OK);
            CB_CHECK(memcmp(m3b, m3, n * 12 * sizeof(float)) == 0,
                     "range split at %zu differs from the whole", split);
            free(m4), free(m3), free(s4), free(s3), free(m3b);
            case_free(&c);
        }
        cb_err_track_check(&ee, BOUND_ELEM);
        cb_err_track_check(&ep, BOUND_POS);
        cb_err_track_check(&er, BOUND_ROT);
        cb_err_track_check(&es, BOUND_ELEM);
    }
}

/* Model-space TRS: for uniform scales it is exact, and agrees with the matrices. */
static void ltm_model_xforms_match_double_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track ep = cb_err_track_make("ltm model TRS position (rel)");
    cb_err_track er = cb_err_track_make("ltm model TRS rotation (rad)");
    cb_err_track es = cb_err_track_make("ltm model TRS scale (rel)");
    for (int it = 0; it < 60; ++it) {
        size_t n = 1 + cb_prng_below(&r, 70);
        ltm_case c = case_make(&r, n, true);
        cb_xform *xf = malloc(n * sizeof(cb_xform));
        cb_ltm_job j = {.skeleton = c.s, .local = {c.local, c.groups}, .model_xforms = {xf, n}};
        assert_int_equal(cb_ltm_job_run(&j, NULL), CB_OK);
        for (size_t k = 0; k < n; ++k) {
            const dref_mat *want = &c.model[k];
            dref_xform got = {
                {xf[k].translation[0], xf[k].translation[1], xf[k].translation[2]},
                {xf[k].rotation[0], xf[k].rotation[1], xf[k].rotation[2], xf[k].rotation[3]},
                {xf[k].scale[0], xf[k].scale[1], xf[k].scale[2]}};
            dref_mat gm = dref_mat_from_xform(&got);
            float g4[16];
            for (int col = 0; col < 4; ++col) {
                for (int row = 0; row < 4; ++row) {
                    g4[4 * col + row] = (float)gm.m[col][row];
                }
            }
            double scale = mat_scale(want);
            for (int e = 0; e < 3; ++e) {
                cb_err_track_add(&ep, got.t[e] / scale, want->m[3][e] / scale, k);
                double len = sqrt(want->m[e][0] * want->m[e][0] + want->m[e][1] * want->m[e][1] +
                                  want->m[e][2] * want->m[e][2]);
                cb_err_track_add(&es, got.s[e] / len, 1.0, k);
            }
            cb_err_track_add(&er, dref_rotation_error(want, g4), 0.0, k);
        }
        free(xf);
        case_free(&c);
    }
    cb_err_track_check(&ep, BOUND_POS);
    cb_err_track_check(&er, BOUND_ROT);
    /* Scale: products of per-level scales, one rounding each (measured 3.0e-7). */
    cb_err_track_check(&es, 8e-7);
}

/* NaN in every padding lane of the local pose changes nothing. */
static void ltm_padding_lanes_never_leak(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    ltm_case c = case_make(&r, 3 * cb_simd_width() + 1, false); /* padding already NaN */
    size_t n = c.n;
    cb_xform_group *clean = cb_test_pose_alloc(c.s, false);
    memcpy(clean, c.local, cb_skeleton_pose_bytes(c.s));
    size_t w = cb_simd_width();
    float *f = (float *)clean;
    for (size_t j = n; j < c.groups * w; ++j) {
        for (int k = 0; k < 10; ++k) {
            f[(j / w) * 10 * w + k * w + j % w] = k == 6 || k >= 7 ? 1.0f : 0.0f;
        }
    }
    float *a = malloc(n * 16 * sizeof(float)), *b = malloc(n * 16 * sizeof(float));
    cb_xform *xa = malloc(n * sizeof(cb_xform)), *xb = malloc(n * sizeof(cb_xform));
    for (int path = 0; path < 2; ++path) {
        cb_ltm_job j = {.skeleton = c.s,
                        .local = {c.local, c.groups},
                        .model = {a, n * 16},
                        .model_xforms = {xa, n}};
        assert_int_equal(run(&j, path), CB_OK);
        j.local.ptr = clean, j.model.ptr = b, j.model_xforms.ptr = xb;
        assert_int_equal(run(&j, path), CB_OK);
        assert_memory_equal(a, b, n * 16 * sizeof(float));
        for (size_t k = 0; k < n; ++k) {
            assert_memory_equal(xa[k].rotation, xb[k].rotation, sizeof xa[k].rotation);
            assert_memory_equal(xa[k].translation, xb[k].translation, sizeof xa[k].translation);
            assert_memory_equal(xa[k].scale, xb[k].scale, sizeof xa[k].scale);
        }
    }
    free(a), free(b), free(xa), free(xb), free(clean);
    case_free(&c);
}

/* The SIMD-over-characters variant (kept for the measurement in docs/performance.md) computes
 * the same numbers as the job. */
static void ltm_over_characters_matches_the_job(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    size_t w = cb_simd_width();
    for (int it = 0; it < 10; ++it) {
        size_t n = 1 + cb_prng_below(&r, 70);
        ltm_case cases[16];
        cb_xform_group *locals[16];
        float *want[16], *got[16];
        cases[0] = case_make(&r, n, false);
        for (size_t c = 0; c < w; ++c) {
            if (c > 0) {
                /* Same skeleton, other poses: a new case shares nothing but n, so build the
                 * poses on case 0's skeleton by packing fresh random transforms. */
                cases[c] = cases[0];
                cases[c].local = cb_test_pose_alloc(cases[0].s, true);
                cb_xform *x = calloc(n, sizeof *x);
                for (size_t j = 0; j < n; ++j) {
                    x[j] = cb_test_random_xform(&r, 0.5f);
                    x[j].scale[1] = cb_prng_range(&r, 0.7f, 1.3f);
                }
                assert_int_equal(
                    cb_xform_pack((cb_xform_cspan){x, n}, cases[c].local, cases[0].groups), CB_OK);
                free(x);
            }
            locals[c] = cases[c].local;
            want[c] = malloc(n * 16 * sizeof(float));
            got[c] = malloc(n * 16 * sizeof(float));
            cb_ltm_job j = {.skeleton = cases[0].s,
                            .local = {locals[c], cases[0].groups},
                            .model = {want[c], n * 16}};
            assert_int_equal(cb_ltm_job_run(&j, NULL), CB_OK);
        }
        size_t bytes = cb_ltm_chars_scratch_bytes(cases[0].s);
        void *scratch = aligned_alloc(64, (bytes + 63) / 64 * 64);
        cb_ltm_chars_run(cases[0].s, (const cb_xform_group *const *)locals, got, scratch);
        for (size_t c = 0; c < w; ++c) {
            /* Equal values; only the bottom row's zeros may differ in sign (the job computes
             * them, 0 * x can be -0; this variant writes constants). */
            for (size_t e = 0; e < n * 16; ++e) {
                CB_CHECK(want[c][e] == got[c][e],
                         "character %zu (%zu joints): joint %zu element %zu: %.9g vs %.9g", c, n,
                         e / 16, e % 16, (double)want[c][e], (double)got[c][e]);
            }
            if (c > 0) {
                free(cases[c].local);
            }
            free(want[c]), free(got[c]);
        }
        free(scratch);
        case_free(&cases[0]);
    }
}

/* The QTS layout: the SIMD job gives cb_model_qts_run's bits and the reference job the
 * prototype's (the same bits, model_qts.c), whole and over joint ranges cut anywhere (within
 * a group, at a group's edge, empty), with model_xforms beside it unchanged; nothing past the
 * joint count is written. Random skeletons of 1 to 40 joints, uniform scales. */
static void ltm_qts_is_the_qts_kernel(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    const int runs = (int)cb_test_scaled(60, 10);
    for (int it = 0; it < runs; ++it) {
        ltm_case c = case_make(&r, 1 + cb_prng_below(&r, 40), true);
        const size_t n = c.n;
        float *want = malloc((n * 8 + 8) * sizeof(float));
        float *want_ref = malloc(n * 8 * sizeof(float));
        float *got = malloc((n * 8 + 8) * sizeof(float));
        cb_xform *xf = malloc(n * sizeof *xf), *xf_alone = malloc(n * sizeof *xf_alone);
        assert_true(want && want_ref && got && xf && xf_alone);
        cb_model_qts_run(c.s, c.local, want);
        cb_model_qts_run_ref(c.s, c.local, want_ref);
        assert_memory_equal(want, want_ref, n * 8 * sizeof(float));
        cb_ltm_job alone = {
            .skeleton = c.s, .local = {c.local, c.groups}, .model_xforms = {xf_alone, n}};
        assert_int_equal(cb_ltm_job_run(&alone, NULL), CB_OK);
        for (int path = 0; path < 2; ++path) {
            /* Whole, with model_xforms. */
            for (size_t k = 0; k < n * 8 + 8; ++k) {
                got[k] = NAN;
            }
            cb_ltm_job j = {.skeleton = c.s,
                            .local = {c.local, c.groups},
                            .model_layout = CB_MATRIX_LAYOUT_QTS,
                            .model = {got, n * 8},
                            .model_xforms = {xf, n}};
            assert_int_equal(run(&j, path == 1), CB_OK);
            CB_CHECK(memcmp(got, want, n * 8 * sizeof(float)) == 0,
                     "path %d, %zu joints: QTS "
                     "job differs from the kernel",
                     path, n);
            for (size_t k = 0; k < n; ++k) { /* by field: cb_xform has padding */
                CB_CHECK(memcmp(xf[k].rotation, xf_alone[k].rotation, 4 * sizeof(float)) == 0 &&
                             memcmp(xf[k].translation, xf_alone[k].translation,
                                    3 * sizeof(float)) == 0 &&
                             memcmp(xf[k].scale, xf_alone[k].scale, 3 * sizeof(float)) == 0,
                         "path %d joint %zu: model_xforms changed", path, k);
            }
            for (size_t k = n * 8; k < n * 8 + 8; ++k) {
                CB_CHECK(isnan(got[k]), "path %d: float %zu past the joints written", path, k);
            }
            /* Three ranges [0, a), [a, b), [b, n) in this order: the same bits. */
            size_t a = cb_prng_below(&r, (uint32_t)n + 1), b = cb_prng_below(&r, (uint32_t)n + 1);
            if (a > b) {
                size_t t = a;
                a = b, b = t;
            }
            for (size_t k = 0; k < n * 8; ++k) {
                got[k] = NAN;
            }
            const size_t cuts[4] = {0, a, b, n};
            for (int p = 0; p < 3; ++p) {
                cb_ltm_job part = {.skeleton = c.s,
                                   .local = {c.local, c.groups},
                                   .from = (uint32_t)cuts[p],
                                   .to = (uint32_t)cuts[p + 1],
                                   .model_layout = CB_MATRIX_LAYOUT_QTS,
                                   .model = {got, n * 8}};
                if (cuts[p + 1] == 0) {
                    continue; /* to = 0 means the joint count */
                }
                assert_int_equal(run(&part, path == 1), CB_OK);
            }
            CB_CHECK(memcmp(got, want, n * 8 * sizeof(float)) == 0,
                     "path %d, %zu joints, ranges cut at %zu and %zu: differs from the whole run",
                     path, n, a, b);
        }
        free(want), free(want_ref), free(got), free(xf), free(xf_alone);
        case_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ltm_job_validity),
        cmocka_unit_test(ltm_matrices_match_double_reference),
        cmocka_unit_test(ltm_model_xforms_match_double_reference),
        cmocka_unit_test(ltm_padding_lanes_never_leak),
        cmocka_unit_test(ltm_over_characters_matches_the_job),
        cmocka_unit_test(ltm_qts_is_the_qts_kernel),
    };
    return CB_RUN_TESTS(tests);
}
