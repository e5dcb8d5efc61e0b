/* The whole pose pipeline against a plain double-precision reference: keyframe tracks are
 * resampled, sampled, blended (NORMAL entries with masks, an OVERRIDE layer with a mask, an
 * ADDITIVE layer), and taken to model space; the errors are judged where they matter, in
 * object space: joint positions in metres and joint rotations in radians.
 *
 * One body, built twice (tests/meson.build): CB_TEST_REF=0 runs the SIMD jobs, =1 their scalar
 * _ref twins. The reference (tests/common/anim_test.c) shares no code with the library. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "test_util.h"

#if CB_TEST_REF
#define BLEND cb_pose_blend_job_run_ref
#define LTM cb_ltm_job_run_ref
#define PATH "ref"
#else
#define BLEND cb_pose_blend_job_run
#define LTM cb_ltm_job_run
#define PATH "simd"
#endif

/* Object-space bounds. Skeletons of up to 64 joints with bones of 0.05..0.3 m put joints up to
 * about 3 m from the root, where one float ulp is 2.4e-7; each of up to ~20 levels of the
 * chain adds the local pose's error (a few 1e-7 relative, test_pose) times the lever arm below
 * it, plus a matrix product's rounding. Measured maxima over the three configurations and both
 * paths: position 2.8e-6 m, rotation 1.3e-6 rad; bounds about 2.2x. */
static const double BOUND_POS_M = 6e-6, BOUND_ROT_RAD = 3e-6;

/* Runs the reference blend of the entries (clip k's reference frames in clips[k]) and
 * local-to-model, and tracks the library's model matrices against it: positions in metres,
 * rotations in radians. */
static void compare_in_object_space(const cb_skeleton *s, const cb_blend_entry *e,
                                    const dref_clip *const *clips, size_t count,
                                    const cb_xform *rest, const float *model, cb_err_track *ep,
                                    cb_err_track *er)
{
    size_t n = cb_skeleton_joint_count(s);
    dref_xform *dlocal = malloc(n * sizeof(dref_xform));
    dref_mat *dmodel = malloc(n * sizeof(dref_mat));
    dref_entry de[8];
    for (size_t k = 0; k < count; ++k) {
        de[k] = (dref_entry){clips[k], e[k].time, e[k].weight, e[k].mode, e[k].mask.ptr};
    }
    for (size_t j = 0; j < n; ++j) {
        dlocal[j] = dref_blend_joint(de, count, rest, j, CB_BLEND_DEFAULT_THRESHOLD);
    }
    dref_local_to_model(cb_skeleton_parents(s), n, dlocal, dmodel);
    for (size_t j = 0; j < n; ++j) {
        for (int k = 0; k < 3; ++k) {
            cb_err_track_add(ep, model[16 * j + 12 + k], dmodel[j].m[3][k], j);
        }
        cb_err_track_add(er, dref_rotation_error(&dmodel[j], model + 16 * j), 0.0, j);
    }
    free(dlocal), free(dmodel);
}

static void accuracy_pipeline_in_object_space(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track ep = cb_err_track_make(PATH " pipeline position (m)");
    cb_err_track er = cb_err_track_make(PATH " pipeline rotation (rad)");
    for (int it = 0; it < 24; ++it) {
        size_t n = it % 3 == 0 ? 64 : 1 + cb_prng_below(&r, 64);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, it % 4 == 1, it % 8 != 1);
        size_t groups = cb_skeleton_group_count(s), soa = cb_skeleton_soa_joint_count(s);
        cb_test_tracks tt[5];
        cb_clip *clips[5];
        dref_clip refs[5];
        for (int k = 0; k < 5; ++k) {
            float duration = cb_prng_range(&r, 0.4f, 1.5f);
            tt[k] = cb_test_random_tracks(&r, s, duration, n, k == 2, 1.0f);
            cb_clip_desc d = {.skeleton = s, .duration_s = duration, .tracks = tt[k].tracks,
                              .track_count = tt[k].count, .root_motion = CB_ROOT_MOTION_NONE,
                              .additive = k == 4 ? CB_ADDITIVE_FIRST_FRAME : CB_ADDITIVE_NONE};
            assert_int_equal(cb_clip_create(&d, &clips[k], NULL), CB_OK);
            refs[k] = dref_clip_build(&d);
        }
        float *upper = malloc(soa * sizeof(float)), *lower = malloc(soa * sizeof(float));
        cb_mask_rule rule = {cb_skeleton_joint_name(s, n / 4), 1.0f, false};
        assert_int_equal(cb_skeleton_build_mask(s, 0.0f, &rule, 1, (cb_float_span){upper, soa},
                                                NULL),
                         CB_OK);
        rule.weight = 0.3f;
        assert_int_equal(cb_skeleton_build_mask(s, 1.0f, &rule, 1, (cb_float_span){lower, soa},
                                                NULL),
                         CB_OK);
        cb_xform *rest = malloc(n * sizeof(cb_xform));
        for (size_t j = 0; j < n; ++j) {
            rest[j] = cb_skeleton_rest_xform(s, j);
        }
        cb_xform_group *pose = cb_test_pose_alloc(s, true);
        float *model = malloc(n * 16 * sizeof(float));
        for (int rep = 0; rep < 10; ++rep) {
            float t = cb_prng_range(&r, 0.0f, 1.0f);
            float w0 = cb_prng_range(&r, 0.1f, 1.0f), w1 = cb_prng_range(&r, 0.0f, 1.0f);
            cb_blend_entry e[5] = {
                {clips[0], t, w0},
                {clips[1], t, w1, CB_BLEND_MODE_NORMAL, {lower, soa}},
                {clips[2], t + 0.25f, 1.0f - w0, CB_BLEND_MODE_NORMAL, {upper, soa}},
                {clips[3], cb_prng_range(&r, 0, 1), cb_prng_range(&r, 0, 1),
                 CB_BLEND_MODE_OVERRIDE, {upper, soa}},
                {clips[4], cb_prng_range(&r, 0, 1), cb_prng_range(&r, 0, 1.3f),
                 CB_BLEND_MODE_ADDITIVE, {NULL, 0}},
            };
            size_t count = 3 + (size_t)(rep % 3);
            cb_pose_blend_job bj = {s, {e, count}, 0.0f, {pose, groups}};
            assert_int_equal(BLEND(&bj, NULL), CB_OK);
            cb_ltm_job lj = {.skeleton = s, .local = {pose, groups}, .model = {model, n * 16}};
            assert_int_equal(LTM(&lj, NULL), CB_OK);

            const dref_clip *used[5] = {&refs[0], &refs[1], &refs[2], &refs[3], &refs[4]};
            compare_in_object_space(s, e, used, count, rest, model, &ep, &er);
        }
        free(pose), free(model), free(rest), free(upper), free(lower);
        for (int k = 0; k < 5; ++k) {
            cb_clip_destroy(clips[k]);
            dref_clip_free(&refs[k]);
            cb_test_tracks_free(&tt[k]);
        }
        cb_skeleton_destroy(s);
    }
    cb_err_track_check(&ep, BOUND_POS_M);
    cb_err_track_check(&er, BOUND_ROT_RAD);
}

/* The embedded locomotion set through the whole pipeline, against the reference built from the
 * same clips' frames: three synced walk/run clips (the yardstick workload) plus the two layer
 * clips. The reference reads the clip frames through sampling at exact frame times, so this
 * checks blending and local-to-model on real data at real scale. */
static void accuracy_embedded_frame(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    float *model = malloc(n * 16 * sizeof(float));
    cb_xform rest[64];
    for (size_t j = 0; j < n; ++j) {
        rest[j] = cb_skeleton_rest_xform(s, j);
    }
    /* Reference frames of each clip, read back by sampling exactly at the frames. */
    dref_clip refs[19];
    cb_xform_group *tmp = cb_test_pose_alloc(s, false);
    for (size_t i = 0; i < 19; ++i) {
        const cb_clip *c = cb_embedded_clip(set, i);
        size_t frames = cb_clip_frame_count(c);
        refs[i] = (dref_clip){n, (unsigned)(frames - 1), true, cb_clip_is_additive(c),
                              calloc(frames * n, sizeof(dref_xform))};
        for (size_t f = 0; f < frames; ++f) {
            /* A frame sampled at its own time: f / N * N rounds to f exactly for these N. */
            cb_pose_sample_job sj = {c, (float)f / (float)(frames - 1), {tmp, groups}};
            assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
            for (size_t j = 0; j < n; ++j) {
                refs[i].frames[f * n + j] = dref_from_pose(tmp, j);
            }
        }
    }
    size_t soa = cb_skeleton_soa_joint_count(s);
    float *upper = malloc(soa * sizeof(float));
    cb_mask_rule rule = {"spine_01", 1.0f, false};
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, &rule, 1, (cb_float_span){upper, soa}, NULL),
                     CB_OK);
    cb_err_track ep = cb_err_track_make(PATH " embedded frame position (m)");
    cb_err_track er = cb_err_track_make(PATH " embedded frame rotation (rad)");
    for (int rep = 0; rep < 200; ++rep) {
        float t = cb_prng_range(&r, 0.0f, 1.0f);
        size_t a = 1 + cb_prng_below(&r, 16), b = 1 + cb_prng_below(&r, 16);
        size_t c = cb_prng_below(&r, 17);
        float wa = cb_prng_range(&r, 0, 1), wb = cb_prng_range(&r, 0, 1);
        float wc = cb_prng_range(&r, 0, 1);
        cb_blend_entry e[5] = {
            {cb_embedded_clip(set, a), t, wa},
            {cb_embedded_clip(set, b), t, wb},
            {cb_embedded_clip(set, c), t, wc},
            {cb_embedded_clip(set, 18), t, 0.8f, CB_BLEND_MODE_OVERRIDE, {upper, soa}},
            {cb_embedded_clip(set, 17), t, 1.0f, CB_BLEND_MODE_ADDITIVE, {upper, soa}},
        };
        size_t count = rep % 2 ? 5 : 3;
        cb_pose_blend_job bj = {s, {e, count}, 0.0f, {pose, groups}};
        assert_int_equal(BLEND(&bj, NULL), CB_OK);
        cb_ltm_job lj = {.skeleton = s, .local = {pose, groups}, .model = {model, n * 16}};
        assert_int_equal(LTM(&lj, NULL), CB_OK);
        const dref_clip *used[5] = {&refs[a], &refs[b], &refs[c], &refs[18], &refs[17]};
        compare_in_object_space(s, e, used, count, rest, model, &ep, &er);
    }
    /* Joints within 2 m of the root, 1 ulp = 1.2e-7 there; the frames are the clips' own float
     * values, so only blending and local-to-model are measured (measured 5.7e-7 m, 4.7e-7 rad). */
    cb_err_track_check(&ep, 1.5e-6);
    cb_err_track_check(&er, 1.2e-6);
    for (size_t i = 0; i < 19; ++i) {
        free(refs[i].frames);
    }
    free(tmp), free(upper), free(pose), free(model);
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accuracy_pipeline_in_object_space),
        cmocka_unit_test(accuracy_embedded_frame),
    };
    return CB_RUN_TESTS(tests);
}
