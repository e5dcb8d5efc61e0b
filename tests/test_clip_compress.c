/* Clips compressed at creation (cb_clip_desc.compression, issue 13): sampled as the pose jobs
 * sample them, every joint's shell error in object space against the clip's resampled frames
 * computed in double precision by the test's own reference (anim_test.h), at every frame and
 * midway between frames; the same clip saved in a pack and loaded samples the same bits; root
 * motion and markers carried over; bad bounds refused by name; every failed allocation
 * reported and nothing leaked. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/cclip.h"
#include "crowdblend/pack.h"
#include "crowdblend/pose.h"
#include "test_util.h"

/* Float rounding of the pipeline (frames stored as float, sampled and normalized in float),
 * as the raw clip shows against the same reference: the compressed clip may exceed its bound
 * by this much. Checked on the raw clip itself below, so it is not a free allowance. */
#define FLOAT_SLACK_M 2e-6

/* The largest distance between a(p) and b(p) over the shell points p = +-d e_axis of one
 * joint (column-major 4x4 in double). */
static double shell_error(const dref_mat *a, const dref_mat *b, double d)
{
    double worst = 0.0;
    for (int axis = 0; axis < 3; ++axis) {
        for (int sign = -1; sign <= 1; sign += 2) {
            double e2 = 0.0;
            for (int r = 0; r < 3; ++r) {
                double e = (a->m[3][r] - b->m[3][r]) + sign * d * (a->m[axis][r] - b->m[axis][r]);
                e2 += e * e;
            }
            worst = e2 > worst ? e2 : worst;
        }
    }
    return sqrt(worst);
}

/* The largest shell error of `clip` sampled by the pose job against the double reference of
 * the desc it was made from, over every frame and every midpoint between frames. */
static double max_shell_error(const cb_skeleton *s, const cb_clip *clip, const dref_clip *ref,
                              double shell)
{
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    dref_mat *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    dref_xform *local = malloc(n * sizeof *local);
    assert_non_null(got);
    assert_non_null(want);
    assert_non_null(local);
    double worst = 0.0;
    for (unsigned p = 0; p <= 2 * ref->intervals; ++p) {
        double t = 0.5 * p / ref->intervals;
        cb_pose_sample_job job = {.clip = clip, .time = (float)t, .out = {pose, groups}};
        assert_int_equal(cb_pose_sample_job_run(&job, NULL), CB_OK);
        dref_model_of_pose(s, pose, got);
        for (size_t j = 0; j < n; ++j) {
            local[j] = dref_clip_sample(ref, (double)(float)t, j);
        }
        dref_local_to_model(cb_skeleton_parents(s), n, local, want);
        for (size_t j = 0; j < n; ++j) {
            double e = shell_error(&got[j], &want[j], shell);
            worst = e > worst ? e : worst;
        }
    }
    free(local);
    free(want);
    free(got);
    free(pose);
    return worst;
}

typedef struct accuracy_case {
    const char *what;
    size_t joints, animated;
    bool scale;
    cb_clip_wrap wrap;
    cb_additive additive;
    float max_error_m, shell_m; /* 0: the defaults */
} accuracy_case;

/* Compresses the clip of desc d (raw frames) to z and checks it against the double reference;
 * returns the keys kept. */
static uint32_t check_desc(const char *what, const cb_skeleton *s, cb_clip_desc d,
                           const cb_clip_compression *z)
{
    d.compression = NULL;
    cb_clip *raw = cb_test_clip_create(&d);
    d.compression = z;
    cb_clip *packed = cb_test_clip_create(&d);
    dref_clip ref = dref_clip_build(&d);

    const cb_cclip *form = cb_clip_compressed_form(packed);
    assert_non_null(form);
    assert_null(cb_clip_compressed_form(raw));
    cb_cclip_info info = cb_cclip_query_info(form);
    const double bound = z->max_error_m > 0.0f ? z->max_error_m : CB_CCLIP_DEFAULT_MAX_ERROR_M;
    const double shell =
        z->shell_distance_m > 0.0f ? z->shell_distance_m : CB_CCLIP_DEFAULT_SHELL_M;
    assert_float_equal(info.max_error_m, bound, 0.0);
    assert_float_equal(info.shell_distance_m, shell, 0.0);
    assert_true(info.measured_error_m <= bound);
    /* The clip's shape is the raw clip's. */
    assert_int_equal(cb_clip_frame_count(packed), cb_clip_frame_count(raw));
    assert_int_equal(info.source_frames, cb_clip_frame_count(raw));
    assert_int_equal(cb_clip_is_looping(packed), cb_clip_is_looping(raw));
    assert_int_equal(cb_clip_is_additive(packed), cb_clip_is_additive(raw));
    assert_float_equal(cb_clip_duration(packed), cb_clip_duration(raw), 0.0);
    assert_true(info.stream_bytes < info.source_bytes);

    double e_raw = max_shell_error(s, raw, &ref, shell);
    double e_packed = max_shell_error(s, packed, &ref, shell);
    cb_test_note("%s: %u keys of %u frames, stored %zu of %zu bytes, held %zu (raw %zu); shell "
                 "error %.4g mm (raw clip %.3g mm, bound %.3g mm at %.3g m)",
                 what, info.keys, info.source_frames, info.stream_bytes, info.source_bytes,
                 cb_clip_bytes(packed), cb_clip_bytes(raw), e_packed * 1e3, e_raw * 1e3,
                 bound * 1e3, shell);
    assert_true(e_raw <= FLOAT_SLACK_M);
    assert_true(e_packed <= bound + FLOAT_SLACK_M);
    /* A bound far above the quantization's rounding is used, not met by accident at full
     * precision: the error is a good part of it. */
    assert_true(e_packed > 0.05 * bound);
    uint32_t keys = info.keys;
    dref_clip_free(&ref);
    cb_clip_destroy(packed);
    cb_clip_destroy(raw);
    return keys;
}

static void check_accuracy(const accuracy_case *k)
{
    cb_prng r = cb_test_prng(k->what);
    cb_skeleton *s = cb_test_random_skeleton(&r, k->joints, k->scale, false);
    cb_test_tracks tr = cb_test_random_tracks(&r, s, 1.2f, k->animated, k->scale, 2.0f);
    cb_clip_compression z = {k->max_error_m, k->shell_m};
    cb_clip_desc d = {
        .skeleton = s,
        .duration_s = tr.duration,
        .tracks = tr.tracks,
        .track_count = tr.count,
        .wrap = k->wrap,
        .additive = k->additive,
        .root_motion = CB_ROOT_MOTION_NONE, /* the reference does not model root motion */
    };
    check_desc(k->what, s, d, &z);
    cb_test_tracks_free(&tr);
    cb_skeleton_destroy(s);
}

static void compressed_clip_within_its_bound(void **state)
{
    (void)state;
    static const accuracy_case cases[] = {
        {"24 joints, 16 animated, looping", 24, 16, false, CB_CLIP_WRAP_LOOP, CB_ADDITIVE_NONE, 0,
         0},
        {"20 joints with scale, clamped", 20, 20, true, CB_CLIP_WRAP_CLAMP, CB_ADDITIVE_NONE, 0, 0},
        {"additive against the first frame", 16, 10, false, CB_CLIP_WRAP_LOOP,
         CB_ADDITIVE_FIRST_FRAME, 0, 0},
        {"1 mm at 10 cm", 24, 24, false, CB_CLIP_WRAP_LOOP, CB_ADDITIVE_NONE, 1e-3f, 0.1f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        check_accuracy(&cases[i]);
    }
}

/* A small rig with root motion and markers: a root walking forward, a swinging child. */
enum { RIG_KEYS = 25 };
typedef struct rig {
    cb_skeleton *skeleton;
    float times[RIG_KEYS], root_t[RIG_KEYS * 3], child_q[RIG_KEYS * 4];
    cb_clip_track tracks[2];
    cb_clip_marker_desc markers[2];
} rig;

static cb_clip_track key_track(uint32_t joint, cb_channel channel, const float *times,
                               const float *values)
{
    return (cb_clip_track){.joint = joint,
                           .channel = channel,
                           .key_count = RIG_KEYS,
                           .times = times,
                           .values = values};
}

static void rig_make(rig *r)
{
    const char *names[3] = {"root", "child", "tip"};
    const int32_t parents[3] = {-1, 0, 1};
    cb_xform rest[3] = {cb_xform_identity(), cb_xform_identity(), cb_xform_identity()};
    rest[1].translation[1] = 0.9f;
    rest[2].translation[1] = -0.5f;
    cb_skeleton_desc sd = {.joint_count = 3, .names = names, .parents = parents, .rest_pose = rest};
    assert_int_equal(cb_skeleton_create(&sd, &r->skeleton, NULL), CB_OK);
    for (int k = 0; k < RIG_KEYS; ++k) {
        double t = (double)k / (RIG_KEYS - 1), a = 0.5 * sin(6.283185307179586 * t);
        r->times[k] = (float)t;
        r->root_t[k * 3 + 0] = (float)(0.02 * sin(6.283185307179586 * t));
        r->root_t[k * 3 + 1] = (float)(0.9 + 0.03 * cos(12.566370614359172 * t));
        r->root_t[k * 3 + 2] = (float)(1.4 * t);
        r->child_q[k * 4 + 0] = (float)sin(a / 2);
        r->child_q[k * 4 + 1] = 0.0f;
        r->child_q[k * 4 + 2] = 0.0f;
        r->child_q[k * 4 + 3] = (float)cos(a / 2);
    }
    r->tracks[0] = key_track(0, CB_CHANNEL_TRANSLATION, r->times, r->root_t);
    r->tracks[1] = key_track(1, CB_CHANNEL_ROTATION, r->times, r->child_q);
    r->markers[0] = (cb_clip_marker_desc){.name = "foot_plant_l", .time_s = 0.25f};
    r->markers[1] = (cb_clip_marker_desc){.name = "foot_plant_r", .time_s = 0.75f};
}

static cb_clip_desc rig_desc(const rig *r, const cb_clip_compression *z)
{
    return (cb_clip_desc){
        .name = "walk",
        .skeleton = r->skeleton,
        .duration_s = 1.0f,
        .tracks = r->tracks,
        .track_count = 2,
        .markers = r->markers,
        .marker_count = 2,
        .compression = z,
    };
}

/* A smooth clip at a coarse bound keeps fewer keys than frames: sampled between its keys, it is
 * still within the bound at every frame and midpoint (what a705d13 made the compressor
 * measure). */
static void compressed_clip_with_fewer_keys_within_its_bound(void **state)
{
    (void)state;
    rig r;
    rig_make(&r);
    const cb_clip_compression z = {2e-3f, 0.0f};
    cb_clip_desc d = rig_desc(&r, NULL);
    d.root_motion = CB_ROOT_MOTION_NONE; /* the reference does not model root motion */
    d.wrap = CB_CLIP_WRAP_CLAMP;         /* a looping copy would jump back at the seam */
    d.sample_rate_hz = 48.0f;            /* twice the keys' rate: every other frame is a key */
    uint32_t keys = check_desc("smooth rig at 48 Hz, 2 mm at 3 cm", r.skeleton, d, &z);
    assert_true(keys < 49);
    cb_skeleton_destroy(r.skeleton);
}

/* Root motion within the bound (cclip.h, ROOT TRACK: a delta's translation within max_error_m),
 * markers and name as the raw clip's; saved in a pack with its compressed form and loaded, the
 * clip samples the same bits. */
static void compressed_clip_keeps_root_motion_markers_and_packs(void **state)
{
    (void)state;
    rig r;
    rig_make(&r);
    const cb_clip_compression z = {0};
    cb_clip_desc d = rig_desc(&r, NULL);
    cb_clip *raw = cb_test_clip_create(&d);
    d = rig_desc(&r, &z);
    cb_clip *packed = cb_test_clip_create(&d);
    assert_string_equal(cb_clip_name(packed), "walk");
    assert_int_equal(cb_clip_marker_count(packed), 2);
    for (size_t k = 0; k < 2; ++k) {
        cb_clip_marker a, b;
        assert_int_equal(cb_clip_query_marker(raw, k, &a), CB_OK);
        assert_int_equal(cb_clip_query_marker(packed, k, &b), CB_OK);
        assert_string_equal(a.name, b.name);
        assert_float_equal(a.time, b.time, 0.0);
    }
    cb_clip_root_motion ra = cb_clip_query_root_motion(raw), rb = cb_clip_query_root_motion(packed);
    assert_int_equal(rb.mode, ra.mode);
    for (int i = 0; i < 64; ++i) {
        float from = i / 64.0f, to = from + 0.3f + i / 50.0f;
        cb_root_delta a, b;
        assert_int_equal(cb_clip_root_delta(raw, from, to, &a), CB_OK);
        assert_int_equal(cb_clip_root_delta(packed, from, to, &b), CB_OK);
        double dx = a.translation[0] - b.translation[0], dy = a.translation[1] - b.translation[1];
        double dz = a.translation[2] - b.translation[2];
        /* A span past one cycle adds the cycle's error once more (cclip.h, ROOT TRACK). */
        assert_true(sqrt(dx * dx + dy * dy + dz * dz) <= 2 * CB_CCLIP_DEFAULT_MAX_ERROR_M + 1e-6);
    }

    /* Into a pack with its compressed form, and back: the same samples, bit for bit. */
    const cb_clip *clips[1] = {packed};
    const cb_cclip *forms[1] = {cb_clip_compressed_form(packed)};
    cb_pack_desc pd = {
        .skeleton = r.skeleton, .clips = clips, .clip_count = 1, .compressed = forms};
    size_t size = 0;
    assert_int_equal(cb_pack_save_memory(&pd, NULL, 0, &size, NULL), CB_OK);
    void *bytes = malloc(size);
    assert_non_null(bytes);
    assert_int_equal(cb_pack_save_memory(&pd, bytes, size, &size, NULL), CB_OK);
    cb_pack *pack = NULL;
    assert_int_equal(cb_pack_load_memory(bytes, size, NULL, &pack, NULL), CB_OK);
    const cb_clip *loaded = cb_pack_clip(pack, 0);
    assert_non_null(cb_clip_compressed_form(loaded));
    const size_t groups = cb_skeleton_group_count(r.skeleton);
    cb_xform_group *a = cb_test_pose_alloc(r.skeleton, true);
    cb_xform_group *b = cb_test_pose_alloc(cb_pack_skeleton(pack), true);
    for (int i = 0; i <= 100; ++i) {
        cb_pose_sample_job ja = {.clip = packed, .time = i / 100.0f, .out = {a, groups}};
        cb_pose_sample_job jb = {.clip = loaded, .time = i / 100.0f, .out = {b, groups}};
        assert_int_equal(cb_pose_sample_job_run(&ja, NULL), CB_OK);
        assert_int_equal(cb_pose_sample_job_run(&jb, NULL), CB_OK);
        assert_memory_equal(a, b, groups * cb_simd_group_bytes());
    }
    free(a);
    free(b);
    cb_pack_destroy(pack);
    free(bytes);
    cb_clip_destroy(packed);
    cb_clip_destroy(raw);
    cb_skeleton_destroy(r.skeleton);
}

static void compression_refuses_bad_bounds(void **state)
{
    (void)state;
    rig r;
    rig_make(&r);
    static const struct {
        float max_error_m, shell_m;
        cb_result want;
        const char *needle;
    } bad[] = {
        {NAN, 0.0f, CB_ERR_NOT_FINITE, "compression.max_error_m is not finite"},
        {INFINITY, 0.0f, CB_ERR_NOT_FINITE, "compression.max_error_m is not finite"},
        {0.0f, -INFINITY, CB_ERR_NOT_FINITE, "compression.shell_distance_m is not finite"},
        {-1e-4f, 0.0f, CB_ERR_INVALID_ARGUMENT, "compression.max_error_m is -0.0001"},
        {0.0f, -0.03f, CB_ERR_INVALID_ARGUMENT, "compression.shell_distance_m is -0.03"},
        /* Below what a float key can hold: no precision meets it. */
        {1e-12f, 0.0f, CB_ERR_INVALID_ARGUMENT, "cannot be met"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cb_clip_compression z = {bad[i].max_error_m, bad[i].shell_m};
        cb_clip_desc d = rig_desc(&r, &z);
        cb_test_expect_clip_error(&d, bad[i].want, bad[i].needle);
    }
    cb_skeleton_destroy(r.skeleton);
}

/* Every allocation of a compressed create fails in turn: CB_ERR_OUT_OF_MEMORY, nothing left
 * allocated; the clip that finally succeeds frees everything (its compressed keys too). */
static void compression_out_of_memory(void **state)
{
    (void)state;
    rig r;
    rig_make(&r);
    const cb_clip_compression z = {0};
    size_t failures = 0;
    for (size_t fail_at = 0;; ++fail_at) {
        cb_test_failing_nth f = {.fail_at = fail_at};
        cb_clip_desc d = rig_desc(&r, &z);
        d.allocator = cb_test_failing_nth_allocator(&f);
        cb_clip *clip = (cb_clip *)&f; /* must stay untouched on failure */
        cb_error err = {0};
        cb_result res = cb_clip_create(&d, &clip, &err);
        if (res == CB_OK) {
            assert_non_null(cb_clip_compressed_form(clip));
            cb_clip_destroy(clip);
            assert_int_equal(f.count.live_bytes, 0);
            break;
        }
        assert_int_equal(res, CB_ERR_OUT_OF_MEMORY);
        assert_int_equal(err.code, CB_ERR_OUT_OF_MEMORY);
        assert_ptr_equal(clip, (cb_clip *)&f);
        assert_int_equal(f.count.live_bytes, 0);
        failures++;
        assert_true(fail_at < 10000);
    }
    cb_test_note("%zu allocations failed in turn, each reported", failures);
    assert_true(failures > 3);
    cb_skeleton_destroy(r.skeleton);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compressed_clip_within_its_bound),
        cmocka_unit_test(compressed_clip_with_fewer_keys_within_its_bound),
        cmocka_unit_test(compressed_clip_keeps_root_motion_markers_and_packs),
        cmocka_unit_test(compression_refuses_bad_bounds),
        cmocka_unit_test(compression_out_of_memory),
    };
    return CB_RUN_TESTS(tests);
}
