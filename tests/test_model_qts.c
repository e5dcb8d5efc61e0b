/* model_qts: the compact model-space outputs of src/simd/model_qts.h.
 *  - unit: the validity tables of cb_model_qts_validate and cb_model_qts16_validate (every error
 *    code they return; qts16's scratch);
 *  - equivalence: the SIMD kernel gives the scalar prototype's bits, on random skeletons (with
 *    non-uniform scales, of which both read x; any parent order, several roots) and poses with
 *    hard cases, padding lanes NaN, and on every pair of quaternions with components in
 *    {+0, -0, 1, -1}; a NaN in one joint reaches the same elements in both (as NaN: its sign
 *    may differ, model_qts.h), and only its descendants;
 *  - accuracy: against 4x4 matrices composed in double from the local pose by the tests' own
 *    reference (dref_model_of_pose, tests/common/anim_test.c; uniform scales: what the layout
 *    holds), rotation, translation and scale compared;
 *  - qts16 dequantizes to the qts output within half a quantization step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "simd/model_qts.h"
#include "simd/soa.h"
#include "test_util.h"

/* Writes joint j's local transform into a pose of groups. */
static void set_joint(cb_xform_group *pose, size_t j, const float q[4], const float t[3],
                      const float s[3])
{
    struct cb_xform_group *g = &pose[j / CB_W];
    size_t l = j % CB_W;
    g->qx[l] = q[0], g->qy[l] = q[1], g->qz[l] = q[2], g->qw[l] = q[3];
    g->tx[l] = t[0], g->ty[l] = t[1], g->tz[l] = t[2];
    g->sx[l] = s[0], g->sy[l] = s[1], g->sz[l] = s[2];
}

/* A random local pose over joints [0, n), padding lanes left NaN (cb_test_pose_alloc). About
 * one joint in six is a hard case: identity, a half turn about an axis (w = 0) or the negated
 * (antipodal) quaternion; translations up to 0.5 m, some 0; scales in [0.8, 1.25], uniform
 * unless `nonuniform`. */
static cb_xform_group *random_pose(cb_prng *r, const cb_skeleton *s, bool nonuniform)
{
    const size_t n = cb_skeleton_joint_count(s);
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    for (size_t j = 0; j < n; ++j) {
        float q[4], t[3], sc[3];
        cb_prng_unit_quat(r, q);
        uint32_t kind = cb_prng_below(r, 18);
        if (kind < 4) {
            q[0] = q[1] = q[2] = q[3] = 0.0f;
            q[kind] = 1.0f; /* identity (kind 3) or a half turn about x, y or z */
        } else if (kind == 4) {
            for (int k = 0; k < 4; ++k) {
                q[k] = -q[k];
            }
        }
        for (int k = 0; k < 3; ++k) {
            t[k] = kind == 5 ? 0.0f : cb_prng_range(r, -0.5f, 0.5f);
        }
        sc[0] = cb_prng_range(r, 0.8f, 1.25f);
        sc[1] = nonuniform ? cb_prng_range(r, 0.8f, 1.25f) : sc[0];
        sc[2] = nonuniform ? cb_prng_range(r, 0.8f, 1.25f) : sc[0];
        set_joint(pose, j, q, t, sc);
    }
    return pose;
}

static float *qts_alloc(const cb_skeleton *s)
{
    float *out = malloc(cb_skeleton_joint_count(s) * 8 * sizeof(float) + 1);
    assert_non_null(out);
    return out;
}

/* ---- unit ---------------------------------------------------------------------------------- */

/* A validation's result and error: want, with a message naming `needle`. */
static void expect_refused(cb_result got, const cb_error *err, cb_result want, const char *needle)
{
    CB_CHECK(got == want && err->code == want && strstr(err->message, needle) != NULL,
             "want %s naming \"%s\", got %s: %s", cb_result_str(want), needle, cb_result_str(got),
             err->message);
    cb_test_note("%s", err->message);
}

static void expect_invalid(const cb_skeleton *s, cb_xform_group_cspan local, const void *out,
                           size_t out_count, float range, cb_result want, const char *needle)
{
    cb_error err = {0};
    expect_refused(cb_model_qts_validate(s, local, out, out_count, range, &err), &err, want,
                   needle);
}

static void model_qts_validity(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 2 * CB_W + 3, true, true);
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = cb_test_pose_alloc(s, false);
    float *out = qts_alloc(s);
    const cb_xform_group_cspan local = {pose, groups};
    expect_invalid(NULL, local, out, n * 8, 1, CB_ERR_NULL_ARGUMENT, "skeleton");
    expect_invalid(s, (cb_xform_group_cspan){NULL, groups}, out, n * 8, 1, CB_ERR_NULL_ARGUMENT,
                   "local");
    expect_invalid(s, local, NULL, n * 8, 1, CB_ERR_NULL_ARGUMENT, "out");
    expect_invalid(s, (cb_xform_group_cspan){pose, groups - 1}, out, n * 8, 1,
                   CB_ERR_SPAN_TOO_SHORT, "local");
    expect_invalid(s, (cb_xform_group_cspan){(const cb_xform_group *)((char *)pose + 4), groups},
                   out, n * 8, 1, CB_ERR_MISALIGNED, "local");
    expect_invalid(s, local, out, n * 8 - 1, 1, CB_ERR_SPAN_TOO_SHORT, "out");
    expect_invalid(s, local, out, n * 8, 0.0f, CB_ERR_INVALID_ARGUMENT, "range_m");
    expect_invalid(s, local, out, n * 8, -1.0f, CB_ERR_INVALID_ARGUMENT, "range_m");
    expect_invalid(s, local, out, n * 8, NAN, CB_ERR_INVALID_ARGUMENT, "range_m");
    expect_invalid(s, local, out, n * 8, INFINITY, CB_ERR_INVALID_ARGUMENT, "range_m");
    /* The minimal valid call: exact spans; a NULL err is allowed. */
    CB_CHECK(cb_model_qts_validate(s, local, out, n * 8, 1, NULL) == CB_OK, "valid call refused");
    free(out), free(pose);
    cb_skeleton_destroy(s);
}

static void expect_invalid16(const cb_skeleton *s, cb_xform_group_cspan local, const float *scratch,
                             size_t scratch_count, const int16_t *out, size_t out_count,
                             float range, cb_result want, const char *needle)
{
    cb_error err = {0};
    expect_refused(
        cb_model_qts16_validate(s, local, scratch, scratch_count, out, out_count, range, &err),
        &err, want, needle);
}

/* qts16 (cb_model_qts16_run): the qts checks on its out and range, then its scratch of
 * joint_count * 8 floats (model_qts.h), which cb_model_qts_run fills. */
static void model_qts16_validity(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 2 * CB_W + 3, true, true);
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = random_pose(&r, s, false);
    float *scratch = qts_alloc(s);
    int16_t *out = malloc(n * 8 * sizeof *out);
    assert_non_null(out);
    const cb_xform_group_cspan local = {pose, groups};
    expect_invalid16(NULL, local, scratch, n * 8, out, n * 8, 4, CB_ERR_NULL_ARGUMENT, "skeleton");
    expect_invalid16(s, local, scratch, n * 8, NULL, n * 8, 4, CB_ERR_NULL_ARGUMENT, "out");
    expect_invalid16(s, (cb_xform_group_cspan){pose, groups - 1}, scratch, n * 8, out, n * 8, 4,
                     CB_ERR_SPAN_TOO_SHORT, "local");
    expect_invalid16(s, local, scratch, n * 8, out, n * 8 - 1, 4, CB_ERR_SPAN_TOO_SHORT, "out");
    expect_invalid16(s, local, scratch, n * 8, out, n * 8, 0.0f, CB_ERR_INVALID_ARGUMENT,
                     "range_m");
    expect_invalid16(s, local, NULL, n * 8, out, n * 8, 4, CB_ERR_NULL_ARGUMENT, "scratch");
    expect_invalid16(s, local, scratch, n * 8 - 1, out, n * 8, 4, CB_ERR_SPAN_TOO_SHORT, "scratch");
    expect_invalid16(s, local, scratch, 0, out, n * 8, 4, CB_ERR_SPAN_TOO_SHORT, "scratch");
    /* The minimal valid call, and the run it allows: exact spans. */
    CB_CHECK(cb_model_qts16_validate(s, local, scratch, n * 8, out, n * 8, 4, NULL) == CB_OK,
             "valid qts16 call refused");
    cb_model_qts16_run(s, pose, 4.0f, scratch, out);
    free(out), free(scratch), free(pose);
    cb_skeleton_destroy(s);
}

/* ---- equivalence --------------------------------------------------------------------------- */

/* Compares both kernels' outputs bit by bit; `what` names the case in a failure. */
static void expect_same_bits(const cb_skeleton *s, const cb_xform_group *pose, const char *what,
                             int it)
{
    const size_t n = cb_skeleton_joint_count(s);
    float *got = qts_alloc(s), *want = qts_alloc(s);
    cb_model_qts_run(s, pose, got);
    cb_model_qts_run_ref(s, pose, want);
    for (size_t e = 0; e < n * 8; ++e) {
        CB_CHECK(memcmp(&got[e], &want[e], sizeof(float)) == 0,
                 "%s %d (%zu joints), joint %zu element %zu: %.9g, prototype %.9g", what, it, n,
                 e / 8, e % 8, (double)got[e], (double)want[e]);
    }
    free(got), free(want);
}

static void model_qts_simd_is_the_prototype(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    const int runs = (int)cb_test_scaled(200, 20);
    for (int it = 0; it < runs; ++it) {
        size_t n = 1 + cb_prng_below(&r, 70);
        bool nonuniform = it % 3 == 0;
        cb_skeleton *s = cb_test_random_skeleton(&r, n, true, !nonuniform);
        cb_xform_group *pose = random_pose(&r, s, nonuniform);
        expect_same_bits(s, pose, "skeleton", it);
        free(pose);
        cb_skeleton_destroy(s);
    }
}

/* The products and sums of the rotation meet signed zeros wherever a factor is 0: the lane-3
 * sum that model_qts.c negates as a pair, (-a) + (-b) against the prototype's -(a + b), differs
 * only when the pair sums +0 and -0 and the first pair is -0 (a half turn about y under a
 * rotation about z with w < 0, say). Random unit quaternions never get there; here a root and
 * its child take every quaternion with components in {+0, -0, 1, -1} (256 x 256 pairs, not
 * unit: the bit identity does not need it), translations with signed zeros too. */
static void model_qts_signed_zeros_match_the_prototype(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    const int32_t parents[2] = {-1, 0};
    const char *names[2] = {"root", "child"};
    cb_skeleton_desc d = {.joint_count = 2, .names = names, .parents = parents};
    cb_skeleton *s = NULL;
    cb_error err = {0};
    CB_CHECK(cb_skeleton_create(&d, &s, &err) == CB_OK, "skeleton: %s", err.message);
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    const float v[4] = {0.0f, -0.0f, 1.0f, -1.0f};
    const float tv[4] = {0.0f, -0.0f, 0.5f, -0.5f};
    for (int pq = 0; pq < 256; ++pq) {
        for (int lq = 0; lq < 256; ++lq) {
            for (int j = 0; j < 2; ++j) {
                int code = j == 0 ? pq : lq;
                float q[4], t[3], sc[3] = {1.0f, 1.0f, 1.0f};
                for (int k = 0; k < 4; ++k) {
                    q[k] = v[(code >> (2 * k)) & 3];
                }
                for (int k = 0; k < 3; ++k) {
                    t[k] = tv[cb_prng_below(&r, 4)];
                }
                set_joint(pose, (size_t)j, q, t, sc);
            }
            expect_same_bits(s, pose, "quaternion pair", pq * 256 + lq);
        }
    }
    free(pose);
    cb_skeleton_destroy(s);
}

/* cb_skeleton allows any parent before the child and several roots: parents that are not the
 * previous joint (the SIMD kernel reads them back from the output), roots after joint 0 (a
 * root's output is its local transform, exactly), chains that restart. */
static void model_qts_any_parent_order(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    const int runs = (int)cb_test_scaled(200, 20);
    for (int it = 0; it < runs; ++it) {
        const size_t n = 1 + cb_prng_below(&r, 70);
        int32_t *parents = malloc(n * sizeof *parents);
        char(*name)[16] = malloc(n * sizeof *name);
        const char **names = malloc(n * sizeof *names);
        assert_true(parents != NULL && name != NULL && names != NULL);
        for (size_t j = 0; j < n; ++j) {
            uint32_t kind = cb_prng_below(&r, 4);
            parents[j] = j == 0 || kind == 0 ? -1
                         : kind == 1         ? (int32_t)j - 1
                                             : (int32_t)cb_prng_below(&r, (uint32_t)j);
            snprintf(name[j], sizeof name[j], "j%zu", j);
            names[j] = name[j];
        }
        cb_skeleton_desc d = {.joint_count = (uint32_t)n, .names = names, .parents = parents};
        cb_skeleton *s = NULL;
        cb_error err = {0};
        CB_CHECK(cb_skeleton_create(&d, &s, &err) == CB_OK, "skeleton: %s", err.message);
        cb_xform_group *pose = random_pose(&r, s, false);
        expect_same_bits(s, pose, "skeleton", it);
        float *out = qts_alloc(s);
        cb_model_qts_run(s, pose, out);
        for (size_t j = 0; j < n; ++j) {
            if (parents[j] >= 0) {
                continue;
            }
            const struct cb_xform_group *g = &pose[j / CB_W];
            const size_t l = j % CB_W;
            const float want[8] = {g->qx[l], g->qy[l], g->qz[l], g->qw[l],
                                   g->tx[l], g->ty[l], g->tz[l], g->sx[l]};
            CB_CHECK(memcmp(out + j * 8, want, sizeof want) == 0,
                     "skeleton %d: root %zu's output is not its local transform", it, j);
        }
        free(out), free(pose), free(parents), free(name), free(names);
        cb_skeleton_destroy(s);
    }
}

/* Whether joint d is joint a or below it. */
static bool descends(const int32_t *parents, int32_t d, int32_t a)
{
    for (; d >= 0; d = parents[d]) {
        if (d == a) {
            return true;
        }
    }
    return false;
}

static void model_qts_nan_reaches_descendants_only(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 30; ++it) {
        size_t n = 2 + cb_prng_below(&r, 40);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, true, true);
        const int32_t *parents = cb_skeleton_parents(s);
        cb_xform_group *pose = random_pose(&r, s, false);
        float *clean = qts_alloc(s), *got = qts_alloc(s), *want = qts_alloc(s);
        cb_model_qts_run(s, pose, clean);
        int32_t bad = (int32_t)cb_prng_below(&r, (uint32_t)n);
        /* A NaN in one component: rotation, translation or scale. */
        struct cb_xform_group *g = &pose[(size_t)bad / CB_W];
        float *comp[] = {g->qy, g->tx, g->sx};
        comp[it % 3][(size_t)bad % CB_W] = NAN;
        cb_model_qts_run(s, pose, got);
        cb_model_qts_run_ref(s, pose, want);
        for (size_t e = 0; e < n * 8; ++e) {
            int32_t j = (int32_t)(e / 8);
            CB_CHECK(isnan(got[e]) == isnan(want[e]) &&
                         (isnan(got[e]) || memcmp(&got[e], &want[e], sizeof(float)) == 0),
                     "case %d, joint %d element %zu: %.9g, prototype %.9g", it, j, e % 8,
                     (double)got[e], (double)want[e]);
            CB_CHECK(descends(parents, j, bad) || memcmp(&got[e], &clean[e], sizeof(float)) == 0,
                     "case %d: NaN at joint %d changed joint %d, not below it", it, bad, j);
        }
        /* The NaN joint's own rotation (case 0) or scale (case 2) is NaN in the output. */
        CB_CHECK(it % 3 == 1 || isnan(got[(size_t)bad * 8 + (it % 3 == 0 ? 1 : 7)]),
                 "case %d: joint %d's NaN did not reach its output", it, bad);
        free(clean), free(got), free(want), free(pose);
        cb_skeleton_destroy(s);
    }
}

/* ---- accuracy ------------------------------------------------------------------------------ */

/* Bounds per level of the hierarchy (a joint at depth d, the root at 0, is allowed d + 1
 * times the bound: each composition adds its roundings to the parent's error, which a rotation
 * carries over unchanged, so the error grows at most linearly along a chain). A level rounds a
 * handful of products and sums of terms up to 1 (the rotation: 4 products and 3 sums per
 * element, a few ulp of 1, 2^-24 = 6e-8), and the rotated translation about 10 operations on
 * terms up to the vector's length (relative to the chain's length, the sum of s_parent |t| from
 * the root), the scale one product. Measured maxima over six seeds (TAP comments; 2.2e-7,
 * 1.1e-7 and 3.6e-8) times about 2.5. */
static const double BOUND_ROT = 5e-7, BOUND_TRANS = 3e-7, BOUND_SCALE = 1e-7;

static void model_qts_matches_double_matrices(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track er = cb_err_track_make("rotation matrix element per level");
    cb_err_track et = cb_err_track_make("translation / chain length per level");
    cb_err_track es = cb_err_track_make("relative scale per level");
    const int runs = (int)cb_test_scaled(200, 20);
    size_t index = 0;
    for (int it = 0; it < runs; ++it) {
        size_t n = 1 + cb_prng_below(&r, 70);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, true, true);
        const int32_t *parents = cb_skeleton_parents(s);
        cb_xform_group *pose = random_pose(&r, s, false);
        float *out = qts_alloc(s);
        cb_model_qts_run(s, pose, out);
        /* The model matrices from the shared double reference (anim_test.h), whose local
         * matrices are T R S with the pose's three scales, here uniform. */
        dref_mat *model = malloc(n * sizeof *model);
        double *scale = malloc(n * sizeof *scale), *length = malloc(n * sizeof *length);
        int *depth = malloc(n * sizeof *depth);
        assert_true(model != NULL && scale != NULL && length != NULL && depth != NULL);
        dref_model_of_pose(s, pose, model);
        for (size_t j = 0; j < n; ++j, ++index) {
            const struct cb_xform_group *g = &pose[j / CB_W];
            const size_t l = j % CB_W;
            int32_t p = parents[j];
            double tl = sqrt((double)g->tx[l] * g->tx[l] + (double)g->ty[l] * g->ty[l] +
                             (double)g->tz[l] * g->tz[l]);
            scale[j] = p < 0 ? g->sx[l] : scale[p] * g->sx[l];
            length[j] = p < 0 ? tl : length[p] + scale[p] * tl;
            depth[j] = p < 0 ? 0 : depth[p] + 1;
            /* The reference scale is the length of the double matrix's first column, its
             * rotation the 3x3 part over that length. */
            const double *c0 = model[j].m[0];
            const double sd = sqrt(c0[0] * c0[0] + c0[1] * c0[1] + c0[2] * c0[2]);
            const float *o = out + j * 8;
            double x = o[0], y = o[1], z = o[2], w = o[3], levels = depth[j] + 1;
            /* The qts rotation as a matrix, without normalizing: a quaternion whose length
             * drifts shows as error. */
            double rq[3][3] = {
                {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)},
                {2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)},
                {2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)},
            };
            for (int c = 0; c < 3; ++c) {
                for (int k = 0; k < 3; ++k) {
                    cb_err_track_add(&er, rq[c][k] / levels, model[j].m[c][k] / sd / levels, index);
                }
                double len = length[j] > 1e-3 ? length[j] : 1e-3;
                cb_err_track_add(&et, o[4 + c] / len / levels, model[j].m[3][c] / len / levels,
                                 index);
            }
            cb_err_track_add(&es, o[7] / sd / levels, 1.0 / levels, index);
        }
        free(model), free(scale), free(length), free(depth), free(out), free(pose);
        cb_skeleton_destroy(s);
    }
    cb_err_track_check(&er, BOUND_ROT);
    cb_err_track_check(&et, BOUND_TRANS);
    cb_err_track_check(&es, BOUND_SCALE);
}

/* qts16 is the qts output rounded to its grid: each element within half a step of it, plus the
 * float roundings of the scaling (two, of values below 32768: 2^-8 steps at most), or the
 * largest step count with the value's sign where the value is past the range (a scale above 4). */
static void model_qts16_is_qts_quantized(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 40; ++it) {
        size_t n = 1 + cb_prng_below(&r, 50);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, true, true);
        cb_xform_group *pose = random_pose(&r, s, false);
        float *qts = qts_alloc(s), *scratch = qts_alloc(s);
        int16_t *q16 = malloc(n * 8 * sizeof *q16);
        assert_non_null(q16);
        cb_model_qts_run(s, pose, qts);
        double range = 0.0;
        for (size_t j = 0; j < n; ++j) {
            for (int k = 4; k < 7; ++k) {
                range = fmax(range, 2.0 * fabs(qts[j * 8 + k]));
            }
        }
        range = fmax(range, 0.01);
        const float range_f = (float)range;
        cb_model_qts16_run(s, pose, range_f, scratch, q16);
        for (size_t e = 0; e < n * 8; ++e) {
            int k = (int)(e % 8);
            double step = k < 4 ? 1.0 / 32767 : k < 7 ? range_f / 32767.0 : 1.0 / 8192;
            double want = qts[e] / step;
            bool ok = fabs(want) > 32767 ? q16[e] == (want > 0 ? 32767 : -32767)
                                         : fabs(q16[e] - want) <= 0.5 + 1.0 / 256;
            CB_CHECK(ok, "case %d, joint %zu element %d: %d steps of %g for %.9g", it, e / 8, k,
                     q16[e], step, (double)qts[e]);
        }
        free(qts), free(scratch), free(q16), free(pose);
        cb_skeleton_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_qts_validity),
        cmocka_unit_test(model_qts16_validity),
        cmocka_unit_test(model_qts_simd_is_the_prototype),
        cmocka_unit_test(model_qts_signed_zeros_match_the_prototype),
        cmocka_unit_test(model_qts_any_parent_order),
        cmocka_unit_test(model_qts_nan_reaches_descendants_only),
        cmocka_unit_test(model_qts_matches_double_matrices),
        cmocka_unit_test(model_qts16_is_qts_quantized),
    };
    return CB_RUN_TESTS(tests);
}
