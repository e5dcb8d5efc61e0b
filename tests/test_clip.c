/* clip: desc defaults and every validation error; resampling against a double-precision
 * reference; hemisphere continuity; loop and clamp playback; memory figures; root motion
 * (extraction, velocities, deltas across wraps, totals over a loop, blending); additive deltas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/pose.h"
#include "test_util.h"

#define CB_TEST_PI 3.14159265358979323846

/* Sampled frames against the double reference: translations of up to 0.5 m and unit
 * quaternions stored as float (half an ulp each, 3e-8 at 0.5), then lerped and (rotations)
 * normalized in float. Measured maxima over the three configurations: t 4.4e-8, q 1.5e-7,
 * s 1.0e-7; the bounds are about 3x. */
static const double BOUND_SAMPLE_T = 1.5e-7, BOUND_SAMPLE_Q = 4e-7, BOUND_SAMPLE_S = 3e-7;

static cb_xform_group *alloc_pose_groups(size_t groups)
{
    size_t align = cb_simd_group_align(), bytes = groups * cb_simd_group_bytes();
    void *p = aligned_alloc(align, (bytes + align - 1) / align * align);
    assert_non_null(p);
    return p;
}

static void clip_query_desc_defaults(void **state)
{
    (void)state;
    cb_clip_desc d = cb_clip_query_desc(NULL);
    assert_string_equal(d.name, "clip");
    assert_true(d.sample_rate_hz == CB_CLIP_DEFAULT_RATE_HZ);
    assert_true(d.sample_rate_hz == 30.0f);
    assert_int_equal(d.wrap, CB_CLIP_WRAP_LOOP);
    assert_int_equal(d.additive, CB_ADDITIVE_NONE);
    assert_int_equal(d.root_motion, CB_ROOT_MOTION_XZ_YAW);
    assert_int_equal(d.root_joint, 0);
    assert_null(d.skeleton);
    assert_null(d.tracks);
    assert_int_equal(d.track_count, 0);
    assert_true(d.duration_s == 0.0f); /* required: no default */
    assert_null(d.additive_reference.ptr);
    assert_null(d.allocator.alloc_fn);
    /* Additive clips default to no root motion. */
    cb_clip_desc a = {.additive = CB_ADDITIVE_FIRST_FRAME};
    d = cb_clip_query_desc(&a);
    assert_int_equal(d.root_motion, CB_ROOT_MOTION_NONE);
    /* Set fields are kept. */
    cb_clip_desc b = {.name = "x", .sample_rate_hz = 60.0f, .wrap = CB_CLIP_WRAP_CLAMP,
                      .root_motion = CB_ROOT_MOTION_XZ, .root_joint = 2};
    d = cb_clip_query_desc(&b);
    assert_string_equal(d.name, "x");
    assert_true(d.sample_rate_hz == 60.0f);
    assert_int_equal(d.wrap, CB_CLIP_WRAP_CLAMP);
    assert_int_equal(d.root_motion, CB_ROOT_MOTION_XZ);
    assert_int_equal(d.root_joint, 2);
}

static void clip_create_rejects_bad_descs(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 6, false, false);
    float times[3] = {0.0f, 0.5f, 1.0f};
    float rot[12] = {0, 0, 0, 1, 0, 0.6f, 0, 0.8f, 0, 0, 0, 1};
    float vec[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2};
    cb_clip_track tr[2] = {
        {.joint = 1, .channel = CB_CHANNEL_ROTATION, .key_count = 3, .times = times, .values = rot},
        {.joint = 2, .channel = CB_CHANNEL_TRANSLATION, .key_count = 3, .times = times,
         .values = vec},
    };
    const cb_clip_desc good = {.name = "c", .skeleton = s, .duration_s = 1.0f, .tracks = tr,
                               .track_count = 2};
    cb_clip *c = cb_test_clip_create(&good);
    cb_clip_destroy(c);

    assert_int_equal(cb_clip_create(NULL, &c, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_create(&good, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    cb_clip_desc d;
    d = good, d._start_canary = 7;
    cb_test_expect_clip_error(&d, CB_ERR_CANARY, "canary");
    d = good, d._end_canary = 7;
    cb_test_expect_clip_error(&d, CB_ERR_CANARY, "canary");
    d = good, d.allocator.free_fn = cb_test_counting_free;
    cb_test_expect_clip_error(&d, CB_ERR_ALLOCATOR, NULL);
    d = good, d.skeleton = NULL;
    cb_test_expect_clip_error(&d, CB_ERR_NULL_ARGUMENT, "skeleton");
    d = good, d.duration_s = 0.0f;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "duration_s");
    d = good, d.duration_s = NAN;
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "duration_s");
    d = good, d.sample_rate_hz = -30.0f;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "sample_rate_hz");
    d = good, d.sample_rate_hz = INFINITY;
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "sample_rate_hz");
    d = good, d.duration_s = 1000.0f, d.sample_rate_hz = 30.0f; /* 30001 frames */
    cb_test_expect_clip_error(&d, CB_ERR_TOO_MANY, "frames");
    d = good, d.wrap = (cb_clip_wrap)9;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "enum");
    d = good, d.root_motion = _CB_ROOT_MOTION_COUNT;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "enum");
    d = good, d.additive = (cb_additive)-3;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "enum");
    d = good, d.additive = CB_ADDITIVE_FIRST_FRAME, d.root_motion = CB_ROOT_MOTION_XZ;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "root motion");
    d = good, d.root_joint = 3; /* not a root of a random skeleton unless its parent is -1 */
    if (cb_skeleton_parents(s)[3] != -1) {
        cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "root_joint 3");
    }
    d = good, d.root_joint = 60;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "root_joint 60");
    d = good, d.name = "";
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "name");
    d = good, d.tracks = NULL;
    cb_test_expect_clip_error(&d, CB_ERR_NULL_ARGUMENT, "tracks");
    d = good, d.additive = CB_ADDITIVE_CUSTOM;
    cb_test_expect_clip_error(&d, CB_ERR_NULL_ARGUMENT, "additive_reference");
    cb_xform ref[6];
    for (int j = 0; j < 6; ++j) {
        ref[j] = cb_xform_identity();
    }
    d.additive_reference = (cb_xform_cspan){ref, 5};
    cb_test_expect_clip_error(&d, CB_ERR_MISMATCH, "additive_reference");
    d.additive_reference.count = 6;
    ref[4].scale[1] = 0.0f;
    cb_test_expect_clip_error(&d, CB_ERR_DEGENERATE, "additive_reference[4]");
    ref[4].scale[1] = 1.0f, ref[2].translation[0] = NAN;
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "additive_reference[2]");

    /* Tracks. */
    cb_clip_track bad[2];
    d = good, d.tracks = bad;
    memcpy(bad, tr, sizeof bad);
    bad[1].joint = 6;
    cb_test_expect_clip_error(&d, CB_ERR_MISMATCH, "tracks[1].joint 6");
    memcpy(bad, tr, sizeof bad);
    bad[1].joint_name = "nope";
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FOUND, "nope");
    memcpy(bad, tr, sizeof bad);
    bad[0].channel = _CB_CHANNEL_INVALID;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "tracks[0].channel");
    memcpy(bad, tr, sizeof bad);
    bad[0].key_count = 0;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "tracks[0]");
    memcpy(bad, tr, sizeof bad);
    bad[1].times = NULL;
    cb_test_expect_clip_error(&d, CB_ERR_NULL_ARGUMENT, "tracks[1].times");
    memcpy(bad, tr, sizeof bad);
    bad[1].values = NULL;
    cb_test_expect_clip_error(&d, CB_ERR_NULL_ARGUMENT, "tracks[1].values");
    float t2[3] = {0.0f, 0.5f, 0.5f};
    memcpy(bad, tr, sizeof bad);
    bad[1].times = t2;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "tracks[1].times[2]");
    t2[2] = 1.5f;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "tracks[1].times[2]");
    t2[2] = NAN;
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "tracks[1].times[2]");
    float v2[9] = {0, 0, 0, 1, INFINITY, 1, 2, 2, 2};
    memcpy(bad, tr, sizeof bad);
    bad[1].values = v2;
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "tracks[1]");
    float r2[12] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
    memcpy(bad, tr, sizeof bad);
    bad[0].values = r2;
    cb_test_expect_clip_error(&d, CB_ERR_DEGENERATE, "rotation key 1");
    memcpy(bad, tr, sizeof bad);
    bad[1] = bad[0];
    cb_test_expect_clip_error(&d, CB_ERR_DUPLICATE, "tracks[0] and tracks[1]");
    /* A duplicate through a name. */
    memcpy(bad, tr, sizeof bad);
    bad[1] = bad[0];
    bad[1].joint = 5;
    bad[1].joint_name = cb_skeleton_joint_name(s, 1);
    cb_test_expect_clip_error(&d, CB_ERR_DUPLICATE, "tracks[0] and tracks[1]");

    d = good, d.allocator = cb_test_failing_allocator();
    cb_test_expect_clip_error(&d, CB_ERR_OUT_OF_MEMORY, NULL);
    cb_skeleton_destroy(s);
}

/* Sampled poses against the reference, at the exact frame times and between them, for looping
 * and clamped clips, with and without scale, keys anywhere. */
static void clip_resampling_matches_double_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track et = cb_err_track_make("clip sample translation");
    cb_err_track eq = cb_err_track_make("clip sample rotation");
    cb_err_track es = cb_err_track_make("clip sample scale");
    for (int it = 0; it < 40; ++it) {
        size_t n = 1 + cb_prng_below(&r, 40);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, it % 2 == 0, false);
        float duration = cb_prng_range(&r, 0.05f, 2.5f);
        cb_test_tracks tt =
            cb_test_random_tracks(&r, s, duration, n / 2 + 1, it % 3 == 0,
                                  it % 4 == 0 ? 6.0f : 1.5f);
        cb_clip_desc d = {.skeleton = s, .duration_s = duration, .tracks = tt.tracks,
                          .track_count = tt.count,
                          .wrap = it % 2 ? CB_CLIP_WRAP_CLAMP : CB_CLIP_WRAP_LOOP,
                          .sample_rate_hz = it % 5 == 0 ? 24.0f : 0.0f,
                          .root_motion = CB_ROOT_MOTION_NONE};
        cb_clip *c = cb_test_clip_create(&d);
        dref_clip ref = dref_clip_build(&d);
        assert_int_equal(cb_clip_frame_count(c), ref.intervals + 1);
        size_t groups = cb_skeleton_group_count(s);
        cb_xform_group *pose = alloc_pose_groups(groups);
        for (unsigned k = 0; k <= 4 * ref.intervals; ++k) {
            float t = (float)k / (float)(4 * ref.intervals);
            cb_pose_sample_job job = {c, t, {pose, groups}};
            assert_int_equal(cb_pose_sample_job_run(&job, NULL), CB_OK);
            for (size_t j = 0; j < n; ++j) {
                dref_xform want = dref_clip_sample(&ref, t, j);
                dref_quat_normalize(want.q);
                dref_xform got = dref_from_pose(pose, j);
                double sign = want.q[0] * got.q[0] + want.q[1] * got.q[1] + want.q[2] * got.q[2] +
                                      want.q[3] * got.q[3] <
                                  0
                              ? -1
                              : 1;
                for (int e = 0; e < 3; ++e) {
                    cb_err_track_add(&et, got.t[e], want.t[e], (size_t)it);
                    cb_err_track_add(&es, got.s[e], want.s[e], (size_t)it);
                }
                for (int e = 0; e < 4; ++e) {
                    cb_err_track_add(&eq, got.q[e], sign * want.q[e], (size_t)it);
                }
            }
        }
        dref_clip_free(&ref);
        free(pose);
        cb_clip_destroy(c);
        cb_test_tracks_free(&tt);
        cb_skeleton_destroy(s);
    }
    cb_err_track_check(&et, BOUND_SAMPLE_T);
    cb_err_track_check(&eq, BOUND_SAMPLE_Q);
    cb_err_track_check(&es, BOUND_SAMPLE_S);
}

/* One joint, one rotation track whose keys flip sign every time: the stored frames must still
 * be continuous (dot of neighbours >= 0), and a sample between two keys is the short-arc
 * interpolation. */
static void clip_rotations_stay_in_one_hemisphere_along_time(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 1, false, false);
    enum { KEYS = 31 };
    float times[KEYS], values[KEYS * 4];
    for (int k = 0; k < KEYS; ++k) {
        times[k] = (float)k / 30.0f;
        double a = 0.2 * k, sign = k % 2 ? -1.0 : 1.0;
        values[4 * k + 0] = (float)(sign * sin(a / 2));
        values[4 * k + 1] = 0.0f;
        values[4 * k + 2] = 0.0f;
        values[4 * k + 3] = (float)(sign * cos(a / 2));
    }
    cb_clip_track tr = {.joint = 0, .channel = CB_CHANNEL_ROTATION, .key_count = KEYS,
                        .times = times, .values = values};
    cb_clip_desc d = {.skeleton = s, .duration_s = 1.0f, .tracks = &tr, .track_count = 1,
                      .wrap = CB_CLIP_WRAP_CLAMP, .root_motion = CB_ROOT_MOTION_NONE};
    cb_clip *c = cb_test_clip_create(&d);
    cb_xform_group *pose = alloc_pose_groups(1);
    float prev[4] = {0};
    for (int k = 0; k <= 120; ++k) {
        cb_pose_sample_job job = {c, (float)k / 120.0f, {pose, 1}};
        assert_int_equal(cb_pose_sample_job_run(&job, NULL), CB_OK);
        dref_xform x = dref_from_pose(pose, 0);
        if (k > 0) {
            double dot = x.q[0] * prev[0] + x.q[1] * prev[1] + x.q[2] * prev[2] + x.q[3] * prev[3];
            CB_CHECK(dot > 0.99, "sample %d turned away from the previous one (dot %g)", k, dot);
        }
        /* The angle about x is 0.2 rad per key = 6 rad/s, whatever the stored signs. */
        double angle = 2.0 * atan2(fabs(x.q[0]), fabs(x.q[3]));
        double want = 6.0 * k / 120.0;
        want = fmod(want, 2.0 * CB_TEST_PI);
        want = want > CB_TEST_PI ? 2.0 * CB_TEST_PI - want : want;
        CB_CHECK(fabs(angle - want) < 2e-3, "sample %d: angle %g, want %g", k, angle, want);
        for (int e = 0; e < 4; ++e) {
            prev[e] = (float)x.q[e];
        }
    }
    free(pose);
    cb_clip_destroy(c);
    cb_skeleton_destroy(s);
}

static double pose_distance(const cb_xform_group *a, const cb_xform_group *b, size_t n)
{
    double m = 0.0;
    for (size_t j = 0; j < n; ++j) {
        dref_xform x = dref_from_pose(a, j), y = dref_from_pose(b, j);
        double dot = 0;
        for (int e = 0; e < 4; ++e) {
            dot += x.q[e] * y.q[e];
        }
        double sign = dot < 0 ? -1 : 1;
        for (int e = 0; e < 3; ++e) {
            m = fmax(m, fabs(x.t[e] - y.t[e]));
            m = fmax(m, fabs(x.s[e] - y.s[e]));
        }
        for (int e = 0; e < 4; ++e) {
            m = fmax(m, fabs(x.q[e] - sign * y.q[e]));
        }
    }
    return m;
}

static void sample_into(const cb_clip *c, float t, cb_xform_group *pose, size_t groups)
{
    cb_pose_sample_job job = {c, t, {pose, groups}};
    assert_int_equal(cb_pose_sample_job_run(&job, NULL), CB_OK);
}

/* Looping: the end meets the start without a seam, and whole cycles do not matter. Clamped:
 * times outside [0, 1] hold the end frames. */
static void clip_loop_wrap_is_seamless_and_clamp_holds(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    size_t n = 2 * cb_simd_width() + 3;
    cb_skeleton *s = cb_test_random_skeleton(&r, n, true, false);
    cb_test_tracks tt = cb_test_random_tracks(&r, s, 1.3f, n, true, 2.0f);
    size_t groups = cb_skeleton_group_count(s);
    cb_xform_group *a = alloc_pose_groups(groups), *b = alloc_pose_groups(groups);
    for (int wrap = 0; wrap < 2; ++wrap) {
        cb_clip_desc d = {.skeleton = s, .duration_s = tt.duration, .tracks = tt.tracks,
                          .track_count = tt.count, .root_motion = CB_ROOT_MOTION_NONE,
                          .wrap = wrap ? CB_CLIP_WRAP_CLAMP : CB_CLIP_WRAP_LOOP};
        cb_clip *c = cb_test_clip_create(&d);
        assert_int_equal(cb_clip_is_looping(c), !wrap);
        if (!wrap) {
            /* 1 - 1e-6 and 0 are 1e-6 cycles apart: continuous means close. The largest
             * change of any value across one frame bounds the slope. */
            double max_step = 0.0;
            size_t frames = cb_clip_frame_count(c);
            for (size_t f = 0; f + 1 < frames; ++f) {
                sample_into(c, (float)f / (float)(frames - 1), a, groups);
                sample_into(c, (float)(f + 1) / (float)(frames - 1), b, groups);
                max_step = fmax(max_step, pose_distance(a, b, n));
            }
            sample_into(c, 0.0f, a, groups);
            sample_into(c, 1.0f - 1e-6f, b, groups);
            double seam = pose_distance(a, b, n);
            double slope_bound = max_step * 1e-6 * (double)(frames - 1) + 1e-6;
            CB_CHECK(seam <= slope_bound, "loop seam %.3g exceeds %.3g", seam, slope_bound);
            /* t = 1 is t = 0 again; any whole number of cycles lands on the same pose. */
            sample_into(c, 1.0f, b, groups);
            CB_CHECK(pose_distance(a, b, n) <= 1e-6, "t = 1 differs from t = 0");
            for (int k = 0; k < 20; ++k) {
                float t = cb_prng_range(&r, 0.0f, 1.0f);
                float cycles = (float)(int)cb_prng_below(&r, 9) - 4.0f;
                sample_into(c, t, a, groups);
                sample_into(c, t + cycles, b, groups);
                /* t + cycles rounds t to the ulp of the sum (<= 4.8e-7 here). */
                CB_CHECK(pose_distance(a, b, n) <= max_step * 1e-5 * (double)frames + 1e-6,
                         "t %g and t %+g cycles differ", (double)t, (double)cycles);
            }
        } else {
            sample_into(c, 1.0f, a, groups);
            sample_into(c, 3.5f, b, groups);
            assert_memory_equal(a, b, groups * cb_simd_group_bytes());
            sample_into(c, 0.0f, a, groups);
            sample_into(c, -2.0f, b, groups);
            assert_memory_equal(a, b, groups * cb_simd_group_bytes());
        }
        cb_clip_destroy(c);
    }
    free(a), free(b);
    cb_test_tracks_free(&tt);
    cb_skeleton_destroy(s);
}

static void clip_reports_its_figures(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 37, false, false);
    size_t soa = cb_skeleton_soa_joint_count(s);
    for (int scaled = 0; scaled < 2; ++scaled) {
        cb_test_tracks tt = cb_test_random_tracks(&r, s, 1.0f, 10, scaled, 1.0f);
        cb_test_counter counter = {0};
        cb_clip_desc d = {.name = scaled ? "scaled" : "plain", .skeleton = s, .duration_s = 1.0f,
                          .tracks = tt.tracks, .track_count = tt.count,
                          .sample_rate_hz = 20.0f,
                          .allocator = cb_test_counting_allocator(&counter)};
        cb_clip *c = cb_test_clip_create(&d);
        assert_string_equal(cb_clip_name(c), scaled ? "scaled" : "plain");
        assert_true(cb_clip_duration(c) == 1.0f);
        assert_int_equal(cb_clip_frame_count(c), 21);
        assert_true(fabsf(cb_clip_sample_rate(c) - 20.0f) < 1e-5f);
        assert_int_equal(cb_clip_joint_count(c), 37);
        assert_false(cb_clip_is_additive(c));
        assert_true(cb_clip_skeleton_signature(c) == cb_skeleton_signature(s));
        size_t bpjf = cb_clip_bytes_per_joint_frame(c);
        assert_int_equal(bpjf, scaled ? 40 : 28);
        size_t frames_bytes = 21 * soa * bpjf;
        assert_true(cb_clip_bytes(c) >= frames_bytes);
        assert_true(cb_clip_bytes(c) <= frames_bytes + 21 * 16 + 1024);
        /* The clip holds one block, and the build's temporaries are returned. */
        assert_int_equal(counter.allocs - counter.frees, 1);
        assert_true(counter.live_bytes == (long long)cb_clip_bytes(c));
        cb_clip_destroy(c);
        assert_int_equal(counter.live_bytes, 0);
        cb_test_tracks_free(&tt);
    }
    cb_clip_destroy(NULL);
    cb_skeleton_destroy(s);
}

/* ------------------------------------------------------------------------------------------ */
/* Root motion                                                                                */

typedef struct rigid {
    double x, y, z, yaw;
} rigid;

static rigid rigid_then(rigid a, rigid b)
{
    double c = cos(a.yaw), s = sin(a.yaw);
    return (rigid){a.x + b.x * c + b.z * s, a.y + b.y, a.z - b.x * s + b.z * c, a.yaw + b.yaw};
}

static rigid from_delta(cb_root_delta d)
{
    return (rigid){d.translation[0], d.translation[1], d.translation[2], d.yaw};
}

/* A root that walks an arc: translation keys along a curve, heading turning. Keys at odd
 * times, and the last key at the duration so the cycle's displacement is defined. */
static cb_clip *arc_clip(const cb_skeleton *s, cb_root_motion mode, cb_clip_wrap wrap,
                         float *times, float *pos, float *rot, size_t keys, float duration)
{
    for (size_t k = 0; k < keys; ++k) {
        double u = (double)k / (keys - 1);
        times[k] = (float)(duration * (k == keys - 1 ? 1.0 : pow(u, 1.2)));
        double heading = 0.9 * u + 0.1 * sin(6.0 * u); /* turns left, wobbling */
        pos[3 * k + 0] = (float)(0.8 * u * u + 0.05 * sin(9.0 * u));
        /* Height and tilt are periodic, so that the looping clip's seam keeps the motion. */
        pos[3 * k + 1] = (float)(0.03 * sin(4.0 * CB_TEST_PI * u));
        pos[3 * k + 2] = (float)(1.5 * u);
        /* Heading about +Y, plus a tilt about the forward axis that must stay in the pose. */
        double h[4] = {0, sin(heading / 2), 0, cos(heading / 2)};
        double tilt = 0.2 * sin(2.0 * CB_TEST_PI * u);
        double tq[4] = {0, 0, sin(tilt / 2), cos(tilt / 2)}, q[4];
        dref_quat_mul(h, tq, q);
        for (int e = 0; e < 4; ++e) {
            rot[4 * k + e] = (float)q[e];
        }
    }
    cb_clip_track tr[2] = {
        {.joint = 0, .channel = CB_CHANNEL_TRANSLATION, .key_count = keys, .times = times,
         .values = pos},
        {.joint = 0, .channel = CB_CHANNEL_ROTATION, .key_count = keys, .times = times,
         .values = rot},
    };
    cb_clip_desc d = {.skeleton = s, .duration_s = duration, .tracks = tr, .track_count = 2,
                      .root_motion = mode, .wrap = wrap, .sample_rate_hz = 30.0f};
    return cb_test_clip_create(&d);
}

static void clip_root_motion_extraction_and_deltas(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 5, false, false);
    enum { KEYS = 17 };
    float times[KEYS], pos[KEYS * 3], rot[KEYS * 4];
    const float duration = 1.7f;
    cb_clip *c = arc_clip(s, CB_ROOT_MOTION_XZ_YAW, CB_CLIP_WRAP_LOOP, times, pos, rot, KEYS,
                          duration);
    size_t groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = alloc_pose_groups(groups);

    /* The in-place root keeps frame 0's ground position and heading: with the root at the
     * origin and heading 0 at frame 0, x and z stay 0 and the forward axis stays on +Z... */
    cb_clip_track src[2] = {
        {.joint = 0, .channel = CB_CHANNEL_TRANSLATION, .key_count = KEYS, .times = times,
         .values = pos},
        {.joint = 0, .channel = CB_CHANNEL_ROTATION, .key_count = KEYS, .times = times,
         .values = rot},
    };
    cb_clip_desc dd = {.skeleton = s, .duration_s = duration, .tracks = src, .track_count = 2,
                       .wrap = CB_CLIP_WRAP_CLAMP, .root_motion = CB_ROOT_MOTION_NONE};
    dref_clip ref = dref_clip_build(&dd); /* the motion before extraction */
    cb_err_track ew = cb_err_track_make("root motion: world root position");
    cb_err_track eh = cb_err_track_make("root motion: world root rotation at frames");
    cb_err_track eb = cb_err_track_make("root motion: world root rotation between");
    const int per_frame = 4, samples = 51 * per_frame; /* 1.7 s at 30 Hz = 51 intervals */
    for (int k = 0; k < samples; ++k) {
        float t = (float)k / (float)samples;
        sample_into(c, t, pose, groups);
        dref_xform in_place = dref_from_pose(pose, 0);
        CB_CHECK(fabs(in_place.t[0]) < 1e-6 && fabs(in_place.t[2]) < 1e-6,
                 "in-place root drifted at t = %g: (%g, %g)", (double)t, in_place.t[0],
                 in_place.t[2]);
        /* ...and the height and the tilt are still there. World = delta(0 -> t) then the
         * in-place root must reproduce the original track. */
        cb_root_delta d;
        assert_int_equal(cb_clip_root_delta(c, 0.0f, t, &d), CB_OK);
        double cy = cos(d.yaw), sy = sin(d.yaw);
        double wx = d.translation[0] + in_place.t[0] * cy + in_place.t[2] * sy;
        double wz = d.translation[2] - in_place.t[0] * sy + in_place.t[2] * cy;
        double wy = d.translation[1] + in_place.t[1];
        dref_xform want = dref_clip_sample(&ref, t, 0);
        dref_quat_normalize(want.q);
        cb_err_track_add(&ew, wx, want.t[0], (size_t)k);
        cb_err_track_add(&ew, wy, want.t[1], (size_t)k);
        cb_err_track_add(&ew, wz, want.t[2], (size_t)k);
        double hq[4] = {0, sin(d.yaw / 2), 0, cos(d.yaw / 2)}, world_q[4];
        dref_quat_mul(hq, in_place.q, world_q);
        /* The angle of conj(want) * world, from its vector part (precise near 0). */
        double cw[4] = {-want.q[0], -want.q[1], -want.q[2], want.q[3]}, rel[4];
        dref_quat_mul(cw, world_q, rel);
        double angle = 2.0 * atan2(sqrt(rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2]),
                                   fabs(rel[3]));
        cb_err_track_add(k % per_frame == 0 ? &eh : &eb, angle, 0.0, (size_t)k);
    }
    /* Root track stored in float, composed in double: about an ulp of values up to 1.7 m
     * (1 ulp = 1.2e-7; measured 9.9e-8). */
    cb_err_track_check(&ew, 3e-7);
    /* Heading extracted in double and stored as float, recomposed: a few float roundings of
     * angles up to 1 rad (measured 4.3e-8). */
    cb_err_track_check(&eh, 1.5e-7);
    /* Between frames the heading is interpolated linearly and the rest of the rotation by
     * nlerp, while the original rotation is nlerped as a whole: the two differ at second order
     * in the per-frame change (here 0.03 rad of heading against 0.04 rad of tilt per frame,
     * measured 2.7e-4 rad). Not an error of the arithmetic but of splitting an interpolation. */
    cb_err_track_check(&eb, 5e-4);

    /* The summary: displacement over one cycle and the velocities derived from it. */
    cb_clip_root_motion rm = cb_clip_query_root_motion(c);
    assert_int_equal(rm.mode, CB_ROOT_MOTION_XZ_YAW);
    assert_int_equal(rm.joint, 0);
    cb_root_delta full;
    assert_int_equal(cb_clip_root_delta(c, 0.0f, 1.0f, &full), CB_OK);
    const double end_heading = 0.9 + 0.1 * sin(6.0);
    CB_CHECK(fabs(rm.displacement_yaw - end_heading) < 1e-5, "cycle yaw %g, want %g",
             (double)rm.displacement_yaw, end_heading);
    CB_CHECK(fabs(full.yaw - rm.displacement_yaw) < 1e-6, "delta(0, 1) yaw != displacement");
    for (int e = 0; e < 3; ++e) {
        CB_CHECK(fabs(full.translation[e] - rm.displacement[e]) < 1e-6,
                 "delta(0, 1) != displacement");
        CB_CHECK(fabs(rm.displacement[e] - pos[3 * (KEYS - 1) + e]) < 1e-5,
                 "displacement[%d] %g != last key %g", e, (double)rm.displacement[e],
                 (double)pos[3 * (KEYS - 1) + e]);
    }
    CB_CHECK(fabs(rm.forward_mps - rm.displacement[2] / duration) < 1e-6, "forward_mps");
    CB_CHECK(fabs(rm.right_mps + rm.displacement[0] / duration) < 1e-6, "right_mps");
    CB_CHECK(fabs(rm.yaw_rate_rps - rm.displacement_yaw / duration) < 1e-6, "yaw_rate_rps");
    CB_CHECK(fabs(rm.speed_mps - hypot(rm.displacement[0], rm.displacement[2]) / duration) < 1e-6,
             "speed_mps");

    /* Totals: many small steps across several wraps compose to the one-call delta, and one
     * whole loop in 97 steps gives the cycle displacement. */
    for (int trial = 0; trial < 3; ++trial) {
        double from = trial == 0 ? 0.0 : cb_prng_range(&r, -1.0f, 1.0f);
        double to = trial == 0 ? 1.0 : from + cb_prng_range(&r, 0.5f, 4.0f);
        int steps = 97 * (int)ceil(to - from);
        rigid acc = {0, 0, 0, 0};
        for (int k = 0; k < steps; ++k) {
            float a = (float)(from + (to - from) * k / steps);
            float b = (float)(from + (to - from) * (k + 1) / steps);
            cb_root_delta d;
            assert_int_equal(cb_clip_root_delta(c, a, b, &d), CB_OK);
            acc = rigid_then(acc, from_delta(d));
        }
        cb_root_delta one;
        assert_int_equal(cb_clip_root_delta(c, (float)from, (float)to, &one), CB_OK);
        CB_CHECK(fabs(acc.x - one.translation[0]) < 2e-5 &&
                     fabs(acc.z - one.translation[2]) < 2e-5 &&
                     fabs(acc.y - one.translation[1]) < 2e-5 && fabs(acc.yaw - one.yaw) < 2e-5,
                 "trial %d: %d steps sum to (%g %g %g, %g), one call (%g %g %g, %g)", trial, steps,
                 acc.x, acc.y, acc.z, acc.yaw, (double)one.translation[0],
                 (double)one.translation[1], (double)one.translation[2], (double)one.yaw);
        if (trial == 0) {
            CB_CHECK(fabs(acc.x - rm.displacement[0]) < 2e-5 &&
                         fabs(acc.z - rm.displacement[2]) < 2e-5,
                     "one loop in steps != displacement");
        }
    }
    /* A thousand cycles in one call: the cycle composed with itself, which turns the path into
     * a circle-like walk. Checked against a plain loop of compositions. */
    rigid cycle = from_delta(full), acc = {0, 0, 0, 0};
    for (int k = 0; k < 1000; ++k) {
        acc = rigid_then(acc, cycle);
    }
    cb_root_delta big;
    assert_int_equal(cb_clip_root_delta(c, 0.25f, 1000.25f, &big), CB_OK);
    cb_root_delta head, tail;
    cb_clip_root_delta(c, 0.25f, 1.0f, &head);
    cb_clip_root_delta(c, 0.0f, 0.25f, &tail);
    /* delta(0.25, 1000.25) = delta(0.25, 1) . C^999 . delta(0, 0.25); as a check it must equal
     * delta(0.25, 1) . (C^1000 with the first C replaced) — written as a plain composition. */
    rigid want = from_delta(head);
    for (int k = 0; k < 999; ++k) {
        want = rigid_then(want, cycle);
    }
    want = rigid_then(want, from_delta(tail));
    CB_CHECK(fabs(want.x - big.translation[0]) < 1e-3 && fabs(want.z - big.translation[2]) < 1e-3 &&
                 fabs(want.yaw - big.yaw) < 1e-3,
             "1000 cycles: (%g, %g, %g) vs (%g, %g, %g)", (double)big.translation[0],
             (double)big.translation[2], (double)big.yaw, want.x, want.z, want.yaw);
    /* Backwards undoes forwards. */
    cb_root_delta fwd, back;
    cb_clip_root_delta(c, 0.3f, 2.9f, &fwd);
    cb_clip_root_delta(c, 2.9f, 0.3f, &back);
    rigid id = rigid_then(from_delta(fwd), from_delta(back));
    CB_CHECK(fabs(id.x) < 1e-5 && fabs(id.z) < 1e-5 && fabs(id.yaw) < 1e-5,
             "forward then back is not identity: (%g, %g, %g)", id.x, id.z, id.yaw);

    /* Errors. */
    cb_root_delta d;
    assert_int_equal(cb_clip_root_delta(NULL, 0, 1, &d), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_root_delta(c, 0, 1, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_root_delta(c, NAN, 1, &d), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_clip_root_delta(c, 0, INFINITY, &d), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_clip_root_delta(c, 0, 3e7f, &d), CB_ERR_INVALID_ARGUMENT);
    dref_clip_free(&ref);
    free(pose);
    cb_clip_destroy(c);
    cb_skeleton_destroy(s);
}

/* A skeleton with two roots: the motion of the second (a prop, say) is extracted, the first
 * keeps its own. */
static void clip_root_motion_from_another_root(void **state)
{
    (void)state;
    static const char *const names[] = {"body", "spine", "prop"};
    static const int32_t parents[] = {-1, 0, -1};
    cb_skeleton_desc sd = {.joint_count = 3, .names = names, .parents = parents};
    cb_skeleton *s = NULL;
    assert_int_equal(cb_skeleton_create(&sd, &s, NULL), CB_OK);
    float times[2] = {0.0f, 1.0f}, pos[6] = {0, 0, 0, -0.5f, 0, 2.0f};
    cb_clip_track tr[2] = {
        {.joint = 2, .channel = CB_CHANNEL_TRANSLATION, .key_count = 2, .times = times,
         .values = pos},
        {.joint = 0, .channel = CB_CHANNEL_TRANSLATION, .key_count = 2, .times = times,
         .values = pos},
    };
    cb_clip_desc d = {.skeleton = s, .duration_s = 1.0f, .tracks = tr, .track_count = 2,
                      .root_joint = 2, .wrap = CB_CLIP_WRAP_CLAMP};
    cb_clip *c = cb_test_clip_create(&d);
    cb_clip_root_motion rm = cb_clip_query_root_motion(c);
    assert_int_equal(rm.joint, 2);
    CB_CHECK(fabs(rm.displacement[0] + 0.5) < 1e-6 && fabs(rm.displacement[2] - 2.0) < 1e-6,
             "displacement (%g, %g)", (double)rm.displacement[0], (double)rm.displacement[2]);
    CB_CHECK(fabs(rm.forward_mps - 2.0) < 1e-6 && fabs(rm.right_mps - 0.5) < 1e-6,
             "forward %g, right %g", (double)rm.forward_mps, (double)rm.right_mps);
    cb_xform_group *pose = alloc_pose_groups(1);
    sample_into(c, 0.5f, pose, 1);
    dref_xform prop = dref_from_pose(pose, 2), body = dref_from_pose(pose, 0);
    CB_CHECK(fabs(prop.t[0]) < 1e-6 && fabs(prop.t[2]) < 1e-6, "the prop still moves");
    CB_CHECK(fabs(body.t[2] - 1.0) < 1e-6, "the other root lost its motion (z %g)", body.t[2]);
    free(pose);
    cb_clip_destroy(c);
    cb_skeleton_destroy(s);
}

static void clip_root_motion_modes_and_clamping(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 3, false, false);
    enum { KEYS = 9 };
    float times[KEYS], pos[KEYS * 3], rot[KEYS * 4];
    size_t groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = alloc_pose_groups(groups);

    /* XZ only: the heading stays in the pose, the deltas have no yaw. */
    cb_clip *c = arc_clip(s, CB_ROOT_MOTION_XZ, CB_CLIP_WRAP_LOOP, times, pos, rot, KEYS, 1.0f);
    cb_clip_root_motion rm = cb_clip_query_root_motion(c);
    assert_true(rm.displacement_yaw == 0.0f);
    sample_into(c, 0.5f, pose, groups);
    dref_xform x = dref_from_pose(pose, 0);
    CB_CHECK(fabs(x.q[1]) > 0.1, "XZ mode must leave the heading in the pose");
    CB_CHECK(fabs(x.t[1]) > 1e-3, "XZ mode must leave the height in the pose");
    cb_clip_destroy(c);

    /* XYZ_YAW takes the height too. */
    c = arc_clip(s, CB_ROOT_MOTION_XYZ_YAW, CB_CLIP_WRAP_LOOP, times, pos, rot, KEYS, 1.0f);
    for (int k = 0; k < 10; ++k) {
        sample_into(c, (float)k / 10.0f, pose, groups);
        x = dref_from_pose(pose, 0);
        CB_CHECK(fabs(x.t[1]) < 1e-6, "XYZ mode left height %g", x.t[1]);
    }
    cb_clip_destroy(c);

    /* NONE: no deltas, all motion in the pose. */
    c = arc_clip(s, CB_ROOT_MOTION_NONE, CB_CLIP_WRAP_LOOP, times, pos, rot, KEYS, 1.0f);
    cb_root_delta d;
    assert_int_equal(cb_clip_root_delta(c, 0.1f, 7.3f, &d), CB_OK);
    assert_true(d.translation[0] == 0.0f && d.translation[2] == 0.0f && d.yaw == 0.0f);
    assert_int_equal(cb_clip_query_root_motion(c).mode, CB_ROOT_MOTION_NONE);
    sample_into(c, 0.9f, pose, groups);
    x = dref_from_pose(pose, 0);
    CB_CHECK(x.t[2] > 1.0, "without extraction the root moves in the pose (z = %g)", x.t[2]);
    cb_clip_destroy(c);

    /* Clamped: times past the end hold. */
    c = arc_clip(s, CB_ROOT_MOTION_XZ_YAW, CB_CLIP_WRAP_CLAMP, times, pos, rot, KEYS, 1.0f);
    cb_root_delta a, b;
    cb_clip_root_delta(c, 0.5f, 1.0f, &a);
    cb_clip_root_delta(c, 0.5f, 9.0f, &b);
    assert_memory_equal(&a, &b, sizeof a);
    cb_clip_root_delta(c, -3.0f, 0.5f, &a);
    cb_clip_root_delta(c, 0.0f, 0.5f, &b);
    assert_memory_equal(&a, &b, sizeof a);

    /* Blending root motion: the weighted mean of the deltas. */
    cb_clip *c2 =
        arc_clip(s, CB_ROOT_MOTION_XZ_YAW, CB_CLIP_WRAP_LOOP, times, pos, rot, KEYS, 2.0f);
    cb_root_motion_entry es[3] = {{c, 0.2f, 0.4f, 1.0f}, {c2, 0.2f, 1.4f, 3.0f}, {c, 0, 1, 0.0f}};
    cb_root_delta m, d1, d2;
    assert_int_equal(cb_clip_blend_root_motion(es, 3, &m), CB_OK);
    cb_clip_root_delta(c, 0.2f, 0.4f, &d1);
    cb_clip_root_delta(c2, 0.2f, 1.4f, &d2);
    for (int e = 0; e < 3; ++e) {
        double want = (d1.translation[e] + 3.0 * d2.translation[e]) / 4.0;
        CB_CHECK(fabs(m.translation[e] - want) < 1e-6,
                 "blended root translation %d", e);
    }
    CB_CHECK(fabs(m.yaw - (d1.yaw + 3.0 * d2.yaw) / 4.0) < 1e-6, "blended yaw");
    es[0].weight = 0.0f, es[1].weight = 0.0f;
    assert_int_equal(cb_clip_blend_root_motion(es, 3, &m), CB_OK);
    assert_true(m.translation[0] == 0.0f && m.yaw == 0.0f);
    es[1].weight = -1.0f;
    assert_int_equal(cb_clip_blend_root_motion(es, 3, &m), CB_ERR_INVALID_ARGUMENT);
    es[1].weight = NAN;
    assert_int_equal(cb_clip_blend_root_motion(es, 3, &m), CB_ERR_NOT_FINITE);
    es[1].weight = 1.0f, es[1].clip = NULL;
    assert_int_equal(cb_clip_blend_root_motion(es, 3, &m), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_blend_root_motion(NULL, 1, &m), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_blend_root_motion(es, 0, NULL), CB_ERR_NULL_ARGUMENT);
    cb_clip_destroy(c), cb_clip_destroy(c2);
    free(pose);
    cb_skeleton_destroy(s);
}

/* ------------------------------------------------------------------------------------------ */
/* Additive clips and tracks by name                                                          */

static void clip_additive_stores_differences(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    size_t n = 11;
    cb_skeleton *s = cb_test_random_skeleton(&r, n, true, true);
    cb_test_tracks tt = cb_test_random_tracks(&r, s, 0.9f, n, true, 1.0f);
    size_t groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = alloc_pose_groups(groups), *base = alloc_pose_groups(groups);
    cb_xform custom[11];
    for (size_t j = 0; j < n; ++j) {
        custom[j] = cb_test_random_xform(&r, 0.5f);
        for (int e = 0; e < 3; ++e) {
            custom[j].scale[e] = cb_prng_range(&r, 0.5f, 2.0f);
        }
    }
    cb_clip_desc plain = {.skeleton = s, .duration_s = tt.duration, .tracks = tt.tracks,
                          .track_count = tt.count, .root_motion = CB_ROOT_MOTION_NONE};
    cb_clip *pc = cb_test_clip_create(&plain);
    cb_err_track eq = cb_err_track_make("additive delta rotation");
    cb_err_track et = cb_err_track_make("additive delta translation, scale");
    for (int kind = 0; kind < 3; ++kind) {
        cb_clip_desc d = plain;
        d.root_motion = _CB_ROOT_MOTION_DEFAULT;
        d.additive = kind == 0   ? CB_ADDITIVE_FIRST_FRAME
                     : kind == 1 ? CB_ADDITIVE_REST_POSE
                                 : CB_ADDITIVE_CUSTOM;
        d.additive_reference = (cb_xform_cspan){custom, n};
        cb_clip *c = cb_test_clip_create(&d);
        assert_true(cb_clip_is_additive(c));
        assert_int_equal(cb_clip_query_root_motion(c).mode, CB_ROOT_MOTION_NONE);
        sample_into(pc, 0.0f, base, groups);
        for (int k = 0; k < 8; ++k) {
            float t = k == 0 ? 0.0f : cb_prng_range(&r, 0.0f, 1.0f);
            sample_into(c, t, pose, groups);
            cb_xform_group *full = alloc_pose_groups(groups);
            sample_into(pc, t, full, groups);
            for (size_t j = 0; j < n; ++j) {
                dref_xform ref = kind == 0 ? dref_from_pose(base, j) : (dref_xform){{0}};
                if (kind > 0) {
                    cb_xform x = kind == 1 ? cb_skeleton_rest_xform(s, j) : custom[j];
                    for (int e = 0; e < 3; ++e) {
                        ref.t[e] = x.translation[e], ref.s[e] = x.scale[e];
                    }
                    for (int e = 0; e < 4; ++e) {
                        ref.q[e] = x.rotation[e];
                    }
                    dref_quat_normalize(ref.q);
                }
                dref_xform got = dref_from_pose(pose, j), src = dref_from_pose(full, j);
                double conj[4] = {-ref.q[0], -ref.q[1], -ref.q[2], ref.q[3]}, want[4];
                dref_quat_mul(conj, src.q, want);
                double sign = want[0] * got.q[0] + want[1] * got.q[1] + want[2] * got.q[2] +
                                          want[3] * got.q[3] <
                                      0
                                  ? -1
                                  : 1;
                for (int e = 0; e < 4; ++e) {
                    cb_err_track_add(&eq, got.q[e], sign * want[e], j);
                }
                for (int e = 0; e < 3; ++e) {
                    cb_err_track_add(&et, got.t[e], src.t[e] - ref.t[e], j);
                    cb_err_track_add(&et, got.s[e], src.s[e] / ref.s[e], j);
                }
                if (kind == 0 && t == 0.0f) {
                    /* The first frame against itself is the identity. */
                    CB_CHECK(fabs(got.q[3]) > 1.0 - 1e-6 && fabs(got.t[0]) < 1e-6,
                             "first-frame delta of joint %zu is not identity", j);
                }
            }
            free(full);
        }
        cb_clip_destroy(c);
    }
    /* Delta = conj(ref) q from float inputs: a quaternion product of two float-rounded unit
     * quaternions and the lerp/normalize of sampling (measured 1.6e-7); translation differences
     * of values up to 0.8 m and scale quotients up to 4 (measured 2.8e-7). */
    cb_err_track_check(&eq, 4e-7);
    cb_err_track_check(&et, 6e-7);
    free(pose), free(base);
    cb_clip_destroy(pc);
    cb_test_tracks_free(&tt);
    cb_skeleton_destroy(s);
}

static void clip_tracks_may_name_their_joints(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = cb_test_random_skeleton(&r, 4, false, false);
    float times[1] = {0.0f}, v[3] = {1.0f, 2.0f, 3.0f};
    cb_clip_track tr = {.joint = 0, .joint_name = "j3", .channel = CB_CHANNEL_TRANSLATION,
                        .key_count = 1, .times = times, .values = v};
    cb_clip_desc d = {.skeleton = s, .duration_s = 0.5f, .tracks = &tr, .track_count = 1,
                      .root_motion = CB_ROOT_MOTION_NONE};
    cb_clip *c = cb_test_clip_create(&d);
    cb_xform_group *pose = alloc_pose_groups(1);
    sample_into(c, 0.3f, pose, 1);
    dref_xform x = dref_from_pose(pose, 3);
    assert_true(x.t[0] == 1.0 && x.t[1] == 2.0 && x.t[2] == 3.0);
    dref_xform y = dref_from_pose(pose, 0);
    cb_xform rest0 = cb_skeleton_rest_xform(s, 0);
    assert_true(y.t[0] == rest0.translation[0]); /* the index was ignored */
    free(pose);
    cb_clip_destroy(c);
    cb_skeleton_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clip_query_desc_defaults),
        cmocka_unit_test(clip_create_rejects_bad_descs),
        cmocka_unit_test(clip_resampling_matches_double_reference),
        cmocka_unit_test(clip_rotations_stay_in_one_hemisphere_along_time),
        cmocka_unit_test(clip_loop_wrap_is_seamless_and_clamp_holds),
        cmocka_unit_test(clip_reports_its_figures),
        cmocka_unit_test(clip_root_motion_extraction_and_deltas),
        cmocka_unit_test(clip_root_motion_from_another_root),
        cmocka_unit_test(clip_root_motion_modes_and_clamping),
        cmocka_unit_test(clip_additive_stores_differences),
        cmocka_unit_test(clip_tracks_may_name_their_joints),
    };
    return CB_RUN_TESTS(tests);
}
