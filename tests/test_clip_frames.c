/* Clips from stored frames (cb_clip_create_from_frames, cb_clip_read_frames, the root track) and
 * the reference frame of root motion: a root that starts away from the origin and turned walks
 * along its own forward axis, checked against the closed form. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/pose.h"
#include "test_util.h"

#define CB_TEST_PI 3.14159265358979323846

/* ---- root motion: the frame of the deltas ------------------------------------------------- */

/* A two-joint rig whose root starts at (1, 0.9, 2) turned 90 degrees about +Y (its +Z axis
 * points along model +X) and walks at v along its own forward axis for one looping cycle of T
 * seconds, bobbing up and down; the child swings. Keys every 1/60 s. */
enum { RIG_KEYS = 61 };
static const double RIG_V = 1.4, RIG_T = 1.0, RIG_HEADING = CB_TEST_PI / 2;

typedef struct rig {
    cb_skeleton *skeleton;
    float times[RIG_KEYS], root_t[RIG_KEYS * 3], root_q[RIG_KEYS * 4], child_q[RIG_KEYS * 4];
    cb_clip_track tracks[3];
} rig;

static void rig_make(rig *r)
{
    const char *names[2] = {"root", "child"};
    const int32_t parents[2] = {-1, 0};
    cb_xform rest[2] = {cb_xform_identity(), cb_xform_identity()};
    rest[1].translation[1] = -0.5f;
    rest[1].translation[2] = 0.2f;
    cb_skeleton_desc sd = {.joint_count = 2, .names = names, .parents = parents, .rest_pose = rest};
    assert_int_equal(cb_skeleton_create(&sd, &r->skeleton, NULL), CB_OK);
    for (int k = 0; k < RIG_KEYS; ++k) {
        double t = RIG_T * k / (RIG_KEYS - 1);
        r->times[k] = (float)t;
        /* Forward (+Z) turned by the heading is (sin h, 0, cos h) = +X. */
        double s = RIG_V * t;
        r->root_t[k * 3 + 0] = (float)(1.0 + s * sin(RIG_HEADING));
        r->root_t[k * 3 + 1] = (float)(0.9 + 0.03 * sin(4 * CB_TEST_PI * t / RIG_T));
        r->root_t[k * 3 + 2] = (float)(2.0 + s * cos(RIG_HEADING));
        r->root_q[k * 4 + 0] = 0.0f;
        r->root_q[k * 4 + 1] = (float)sin(RIG_HEADING / 2);
        r->root_q[k * 4 + 2] = 0.0f;
        r->root_q[k * 4 + 3] = (float)cos(RIG_HEADING / 2);
        double a = 0.4 * sin(2 * CB_TEST_PI * t / RIG_T);
        r->child_q[k * 4 + 0] = (float)sin(a / 2);
        r->child_q[k * 4 + 1] = 0.0f;
        r->child_q[k * 4 + 2] = 0.0f;
        r->child_q[k * 4 + 3] = (float)cos(a / 2);
    }
    r->tracks[0] = (cb_clip_track){.joint = 0,
                                   .channel = CB_CHANNEL_TRANSLATION,
                                   .key_count = RIG_KEYS,
                                   .times = r->times,
                                   .values = r->root_t};
    r->tracks[1] = (cb_clip_track){.joint = 0,
                                   .channel = CB_CHANNEL_ROTATION,
                                   .key_count = RIG_KEYS,
                                   .times = r->times,
                                   .values = r->root_q};
    r->tracks[2] = (cb_clip_track){.joint = 1,
                                   .channel = CB_CHANNEL_ROTATION,
                                   .key_count = RIG_KEYS,
                                   .times = r->times,
                                   .values = r->child_q};
}

static cb_clip *rig_clip(rig *r, cb_root_motion mode)
{
    cb_clip_desc d = {.name = "walk",
                      .skeleton = r->skeleton,
                      .duration_s = (float)RIG_T,
                      .sample_rate_hz = 60.0f,
                      .tracks = r->tracks,
                      .track_count = 3,
                      .root_motion = mode};
    return cb_test_clip_create(&d);
}

/* A character on the ground: position and heading, moved by root deltas as a host does. */
typedef struct mover {
    double x, y, z, yaw;
} mover;

static void mover_apply(mover *m, const cb_root_delta *d)
{
    double c = cos(m->yaw), s = sin(m->yaw);
    /* x is the character's left, z its forward; a positive yaw turns +Z towards +X. */
    m->x += c * d->translation[0] + s * d->translation[2];
    m->z += -s * d->translation[0] + c * d->translation[2];
    m->y += d->translation[1];
    m->yaw += d->yaw;
}

static void root_motion_frame_is_the_roots_start(void **state)
{
    (void)state;
    rig r;
    rig_make(&r);
    cb_clip *c = rig_clip(&r, CB_ROOT_MOTION_XZ_YAW);
    const double dist = RIG_V * RIG_T, tol = 2e-5;

    /* One cycle moves the character by v T along its own forward axis, without turning, and the
     * start that was taken out of the pose is reported. */
    cb_clip_root_motion rm = cb_clip_query_root_motion(c);
    cb_test_note("cycle displacement (%g, %g, %g), yaw %g; origin (%g, %g, %g) yaw %g",
                 (double)rm.displacement[0], (double)rm.displacement[1], (double)rm.displacement[2],
                 (double)rm.displacement_yaw, (double)rm.origin[0], (double)rm.origin[1],
                 (double)rm.origin[2], (double)rm.origin_yaw);
    assert_true(fabs(rm.displacement[0]) < tol && fabs(rm.displacement[1]) < tol);
    assert_true(fabs(rm.displacement[2] - dist) < tol);
    assert_true(fabs(rm.displacement_yaw) < tol);
    assert_true(fabs(rm.forward_mps - RIG_V) < tol && fabs(rm.right_mps) < tol);
    assert_true(fabs(rm.origin[0] - 1.0) < tol && rm.origin[1] == 0.0f);
    assert_true(fabs(rm.origin[2] - 2.0) < tol && fabs(rm.origin_yaw - RIG_HEADING) < tol);

    /* A host that integrates the per-frame deltas from the world origin facing +Z walks along
     * +Z: after 2.5 cycles at 60 Hz it is at (0, 0, 2.5 v T), the closed form. */
    mover m = {0, 0, 0, 0};
    const int frames = 150;
    for (int f = 0; f < frames; ++f) {
        cb_root_delta d;
        float from = (float)f / 60.0f, to = (float)(f + 1) / 60.0f;
        assert_int_equal(cb_clip_root_delta(c, from, to, &d), CB_OK);
        mover_apply(&m, &d);
    }
    cb_test_note("after 2.5 cycles: (%g, %g, %g), yaw %g", m.x, m.y, m.z, m.yaw);
    assert_true(fabs(m.x) < 1e-4 && fabs(m.y) < 1e-6 && fabs(m.yaw) < 1e-5);
    assert_true(fabs(m.z - 2.5 * dist) < 1e-4);

    /* The in-place pose stands over the origin and faces +Z (the root's start heading is out
     * of it), and the source pose is origin * delta(0, u) * pose(u). */
    cb_xform_group *pose = cb_test_pose_alloc(r.skeleton, true);
    for (int k = 0; k <= 20; ++k) {
        float u = (float)k / 20.0f * 0.999f;
        cb_pose_sample_job job = {.clip = c, .time = u, .out = {pose, 1}};
        assert_int_equal(cb_pose_sample_job_run(&job, NULL), CB_OK);
        dref_xform x = dref_from_pose(pose, 0);
        double t = u * RIG_T;
        double bob = 0.9 + 0.03 * sin(4 * CB_TEST_PI * t / RIG_T);
        CB_CHECK(fabs(x.t[0]) < tol && fabs(x.t[2]) < tol && fabs(x.t[1] - bob) < 1e-4,
                 "u %g: in-place root at (%g, %g, %g)", (double)u, x.t[0], x.t[1], x.t[2]);
        double qlen = sqrt(x.q[0] * x.q[0] + x.q[1] * x.q[1] + x.q[2] * x.q[2] + x.q[3] * x.q[3]);
        CB_CHECK(fabs(fabs(x.q[3]) / qlen - 1.0) < 1e-6, "u %g: in-place root turned", (double)u);
        cb_root_delta d;
        cb_clip_root_delta(c, 0.0f, u, &d);
        /* origin * delta: the root's ground frame in source space. */
        double h = rm.origin_yaw, dx = d.translation[0], dz = d.translation[2];
        double gx = rm.origin[0] + cos(h) * dx + sin(h) * dz;
        double gz = rm.origin[2] - sin(h) * dx + cos(h) * dz;
        double want_x = 1.0 + RIG_V * t * sin(RIG_HEADING),
               want_z = 2.0 + RIG_V * t * cos(RIG_HEADING);
        CB_CHECK(fabs(gx + x.t[0] - want_x) < 1e-4 && fabs(gz + x.t[2] - want_z) < 1e-4,
                 "u %g: rebuilt root (%g, %g), source (%g, %g)", (double)u, gx, gz, want_x, want_z);
        CB_CHECK(fabs(h + d.yaw - RIG_HEADING) < 1e-5, "u %g: rebuilt heading", (double)u);
    }
    free(pose);
    cb_clip_destroy(c);

    /* Without yaw extraction the heading stays in the pose, and the deltas are in model axes:
     * the pose faces +X and moves along +X, which is again its own forward axis. */
    c = rig_clip(&r, CB_ROOT_MOTION_XZ);
    rm = cb_clip_query_root_motion(c);
    assert_true(fabs(rm.displacement[0] - dist) < tol && fabs(rm.displacement[2]) < tol);
    assert_true(rm.origin_yaw == 0.0f && fabs(rm.origin[0] - 1.0) < tol);
    cb_clip_destroy(c);
    cb_skeleton_destroy(r.skeleton);
}

/* ---- stored frames ------------------------------------------------------------------------ */

/* Reads a clip's frames and root track into fresh arrays. */
typedef struct stored {
    float *frames, *root;
    size_t frame_floats, root_floats;
    cb_clip_marker markers[64];
    size_t marker_count;
} stored;

static stored read_stored(const cb_clip *c)
{
    stored s = {0};
    s.frame_floats = cb_clip_frame_count(c) * cb_clip_joint_count(c) * cb_clip_frame_stride(c);
    s.frames = malloc(s.frame_floats * sizeof(float));
    assert_non_null(s.frames);
    assert_int_equal(cb_clip_read_frames(c, (cb_float_span){s.frames, s.frame_floats}), CB_OK);
    s.root_floats = cb_clip_frame_count(c) * 4;
    s.root = malloc(s.root_floats * sizeof(float));
    assert_non_null(s.root);
    cb_result r = cb_clip_read_root_track(c, (cb_float_span){s.root, s.root_floats});
    assert_true(r == CB_OK || r == CB_ERR_NOT_FOUND);
    if (r == CB_ERR_NOT_FOUND) {
        free(s.root);
        s.root = NULL;
        s.root_floats = 0;
    }
    s.marker_count = cb_clip_marker_count(c);
    assert_true(s.marker_count <= 64);
    for (size_t k = 0; k < s.marker_count; ++k) {
        cb_clip_query_marker(c, k, &s.markers[k]);
    }
    return s;
}

static void stored_free(stored *s)
{
    free(s->frames);
    free(s->root);
}

/* The frames desc that rebuilds clip c from s. */
static cb_clip_frames_desc frames_desc_of(const cb_clip *c, const cb_skeleton *skel,
                                          const stored *s)
{
    cb_clip_root_motion rm = cb_clip_query_root_motion(c);
    return (cb_clip_frames_desc){
        .name = cb_clip_name(c),
        .skeleton = skel,
        .duration_s = cb_clip_duration(c),
        .frame_count = cb_clip_frame_count(c),
        .has_scale = cb_clip_frame_stride(c) == 10,
        .frames = {s->frames, s->frame_floats},
        .wrap = cb_clip_is_looping(c) ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .additive = cb_clip_is_additive(c),
        .root_motion = rm.mode,
        .root_joint = rm.joint,
        .root_track = {s->root, s->root_floats},
        .root_origin = {rm.origin[0], rm.origin[1], rm.origin[2]},
        .root_origin_yaw = rm.origin_yaw,
        .markers = s->markers,
        .marker_count = s->marker_count,
    };
}

/* Samples both clips at the same times, through the SIMD job and the scalar reference, and
 * compares bit for bit; root deltas too. */
static void expect_same_samples(const cb_clip *a, const cb_clip *b, const cb_skeleton *skel,
                                cb_prng *rng)
{
    size_t bytes = cb_skeleton_pose_bytes(skel);
    cb_xform_group *pa = cb_test_pose_alloc(skel, false), *pb = cb_test_pose_alloc(skel, false);
    for (int k = 0; k < 200; ++k) {
        float u = k < 2 ? (float)k : cb_prng_range(rng, -1.5f, 2.5f);
        cb_pose_sample_job ja = {.clip = a, .time = u, .out = {pa, cb_skeleton_group_count(skel)}};
        cb_pose_sample_job jb = {.clip = b, .time = u, .out = {pb, cb_skeleton_group_count(skel)}};
        assert_int_equal(cb_pose_sample_job_run(&ja, NULL), CB_OK);
        assert_int_equal(cb_pose_sample_job_run(&jb, NULL), CB_OK);
        CB_CHECK(memcmp(pa, pb, bytes) == 0, "sample at %g differs", (double)u);
        cb_blend_entry ea = {.clip = a,
                             .time = u,
                             .weight = 1.0f,
                             .mode = cb_clip_is_additive(a) ? CB_BLEND_MODE_ADDITIVE : 0};
        cb_blend_entry eb = ea;
        eb.clip = b;
        cb_pose_blend_job ba = {.skeleton = skel, .entries = {&ea, 1}, .out = {pa, 64}};
        cb_pose_blend_job bb = {.skeleton = skel, .entries = {&eb, 1}, .out = {pb, 64}};
        ba.out.count = bb.out.count = cb_skeleton_group_count(skel);
        assert_int_equal(cb_pose_blend_job_run_ref(&ba, NULL), CB_OK);
        assert_int_equal(cb_pose_blend_job_run_ref(&bb, NULL), CB_OK);
        CB_CHECK(memcmp(pa, pb, bytes) == 0, "reference blend at %g differs", (double)u);
        cb_root_delta da, db;
        cb_clip_root_delta(a, 0.1f, u, &da);
        cb_clip_root_delta(b, 0.1f, u, &db);
        CB_CHECK(memcmp(&da, &db, sizeof da) == 0, "root delta to %g differs", (double)u);
    }
    free(pa);
    free(pb);
}

static void clip_frames_round_trip_is_exact(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("clip_frames_round_trip_is_exact");
    for (int trial = 0; trial < 24; ++trial) {
        size_t n = 1 + cb_prng_below(&rng, 40);
        cb_skeleton *skel = cb_test_random_skeleton(&rng, n, trial % 3 == 0, false);
        bool additive = trial % 4 == 3, scale = trial % 2 == 0;
        cb_test_tracks tr = cb_test_random_tracks(&rng, skel, cb_prng_range(&rng, 0.3f, 2.0f),
                                                  1 + cb_prng_below(&rng, n), scale, 3.0f);
        cb_clip_marker_desc md[3] = {
            {"foot_plant_l", 0.0f, false},
            {"foot_plant_r", tr.duration * 0.5f, false},
            {"foot_lift_l", tr.duration * 0.3f, true},
        };
        cb_clip_desc d = {
            .name = "random",
            .skeleton = skel,
            .duration_s = tr.duration,
            .sample_rate_hz = cb_prng_range(&rng, 10.0f, 90.0f),
            .tracks = tr.tracks,
            .track_count = tr.count,
            .wrap = trial % 3 == 1 ? CB_CLIP_WRAP_CLAMP : CB_CLIP_WRAP_LOOP,
            .root_motion =
                additive ? CB_ROOT_MOTION_NONE : (cb_root_motion)(1 + cb_prng_below(&rng, 5)),
            .additive = additive ? CB_ADDITIVE_FIRST_FRAME : CB_ADDITIVE_NONE,
            .markers = md,
            .marker_count = trial % 2 ? 3 : 0,
        };
        cb_clip *a = cb_test_clip_create(&d);
        stored s = read_stored(a);
        cb_clip_frames_desc fd = frames_desc_of(a, skel, &s);
        cb_clip *b = NULL;
        cb_error err = {0};
        cb_result r = cb_clip_create_from_frames(&fd, &b, &err);
        CB_CHECK(r == CB_OK, "trial %d: %s", trial, err.message);
        /* Everything reads back the same. */
        assert_string_equal(cb_clip_name(b), cb_clip_name(a));
        assert_true(cb_clip_duration(b) == cb_clip_duration(a));
        assert_int_equal(cb_clip_frame_count(b), cb_clip_frame_count(a));
        assert_int_equal(cb_clip_bytes(b), cb_clip_bytes(a));
        assert_int_equal(cb_clip_is_looping(b), cb_clip_is_looping(a));
        assert_int_equal(cb_clip_is_additive(b), cb_clip_is_additive(a));
        assert_int_equal(cb_clip_skeleton_signature(b), cb_clip_skeleton_signature(a));
        cb_clip_root_motion ra = cb_clip_query_root_motion(a), rb = cb_clip_query_root_motion(b);
        assert_memory_equal(&ra, &rb, sizeof ra);
        stored t = read_stored(b);
        assert_memory_equal(s.frames, t.frames, s.frame_floats * sizeof(float));
        assert_int_equal(s.root_floats, t.root_floats);
        if (s.root != NULL) {
            assert_memory_equal(s.root, t.root, s.root_floats * sizeof(float));
        }
        assert_int_equal(s.marker_count, t.marker_count);
        for (size_t k = 0; k < s.marker_count; ++k) {
            assert_string_equal(s.markers[k].name, t.markers[k].name);
            assert_true(s.markers[k].time == t.markers[k].time);
            assert_true(s.markers[k].time_s == t.markers[k].time_s);
            assert_int_equal(s.markers[k].name_hash, t.markers[k].name_hash);
            assert_int_equal(s.markers[k].event_only, t.markers[k].event_only);
        }
        expect_same_samples(a, b, skel, &rng);
        stored_free(&t);
        stored_free(&s);
        cb_clip_destroy(a);
        cb_clip_destroy(b);
        cb_test_tracks_free(&tr);
        cb_skeleton_destroy(skel);
    }
}

static void clip_frames_query_desc_defaults(void **state)
{
    (void)state;
    cb_clip_frames_desc d = cb_clip_query_frames_desc(NULL);
    assert_string_equal(d.name, "clip");
    assert_int_equal(d.wrap, CB_CLIP_WRAP_LOOP);
    assert_int_equal(d.root_motion, CB_ROOT_MOTION_NONE);
    assert_int_equal(d.root_joint, 0);
    assert_false(d.has_scale);
    assert_false(d.additive);
    assert_null(d.frames.ptr);
    assert_null(d.markers);
    cb_clip_frames_desc set = {
        .name = "x", .wrap = CB_CLIP_WRAP_CLAMP, .root_motion = CB_ROOT_MOTION_XZ};
    d = cb_clip_query_frames_desc(&set);
    assert_string_equal(d.name, "x");
    assert_int_equal(d.wrap, CB_CLIP_WRAP_CLAMP);
    assert_int_equal(d.root_motion, CB_ROOT_MOTION_XZ);
}

/* Expects cb_clip_create_from_frames to fail with `want` naming `needle`, output untouched. */
static void expect_frames_error(const cb_clip_frames_desc *d, cb_result want, const char *needle)
{
    cb_clip *out = (cb_clip *)(uintptr_t)0x1;
    cb_error err = {0};
    cb_result r = cb_clip_create_from_frames(d, &out, &err);
    if (want == CB_OK) {
        CB_CHECK(r == CB_OK, "expected success: %s", err.message);
        cb_clip_destroy(out);
        return;
    }
    CB_CHECK(r == want, "got %s, want %s (%s)", cb_result_str(r), cb_result_str(want), err.message);
    assert_int_equal(err.code, want);
    assert_true(out == (cb_clip *)(uintptr_t)0x1);
    if (needle != NULL) {
        CB_CHECK(strstr(err.message, needle) != NULL, "message '%s' lacks '%s'", err.message,
                 needle);
    }
}

static void clip_frames_rejects_bad_input(void **state)
{
    (void)state;
    rig r;
    rig_make(&r);
    cb_clip *c = rig_clip(&r, CB_ROOT_MOTION_XZ_YAW);
    stored s = read_stored(c);
    const cb_clip_frames_desc good = frames_desc_of(c, r.skeleton, &s);
    cb_clip *ok = NULL;
    assert_int_equal(cb_clip_create_from_frames(&good, &ok, NULL), CB_OK);
    cb_clip_destroy(ok);
    assert_int_equal(cb_clip_create_from_frames(NULL, &ok, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_create_from_frames(&good, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    const size_t stride = 7, n = 2;
    cb_clip_frames_desc d;
#define CASE(edit, want, needle)                                                                   \
    do {                                                                                           \
        d = good;                                                                                  \
        edit;                                                                                      \
        expect_frames_error(&d, want, needle);                                                     \
    } while (0)
    CASE(d.skeleton = NULL, CB_ERR_NULL_ARGUMENT, "skeleton");
    CASE(d._start_canary = 1, CB_ERR_CANARY, "canary");
    CASE(d._end_canary = 1, CB_ERR_CANARY, "canary");
    CASE(d.allocator.alloc_fn = cb_test_counting_alloc, CB_ERR_ALLOCATOR, NULL);
    CASE(d.name = "", CB_ERR_INVALID_ARGUMENT, "name");
    CASE(d.duration_s = 0.0f, CB_ERR_INVALID_ARGUMENT, "duration_s");
    CASE(d.duration_s = NAN, CB_ERR_NOT_FINITE, "duration_s");
    CASE(d.frame_count = 1, CB_ERR_INVALID_ARGUMENT, "frame_count");
    CASE(d.frame_count = CB_CLIP_MAX_FRAMES + 1, CB_ERR_INVALID_ARGUMENT, "frame_count");
    CASE(d.wrap = _CB_CLIP_WRAP_COUNT, CB_ERR_INVALID_ARGUMENT, "wrap");
    CASE(d.root_motion = _CB_ROOT_MOTION_COUNT, CB_ERR_INVALID_ARGUMENT, "root_motion");
    CASE(d.additive = true, CB_ERR_INVALID_ARGUMENT, "additive");
    CASE(d.root_joint = 1, CB_ERR_INVALID_ARGUMENT, "root_joint");
    CASE(d.frames.ptr = NULL, CB_ERR_NULL_ARGUMENT, "frames");
    CASE(d.root_track.ptr = NULL, CB_ERR_NULL_ARGUMENT, "root_track");
    CASE(d.frames.count -= 1, CB_ERR_SPAN_TOO_SHORT, "frames");
    CASE(d.root_track.count -= 1, CB_ERR_SPAN_TOO_SHORT, "root_track");
    CASE(d.has_scale = true, CB_ERR_SPAN_TOO_SHORT, "frames");
    CASE(d.root_origin[1] = INFINITY, CB_ERR_NOT_FINITE, "origin");
    /* Values: edit a copy of the frames. */
    float *f = malloc(s.frame_floats * sizeof(float)), *rt = malloc(s.root_floats * sizeof(float));
    assert_non_null(f);
    assert_non_null(rt);
#define VALUE_CASE(edit, want, needle)                                                             \
    do {                                                                                           \
        memcpy(f, s.frames, s.frame_floats * sizeof(float));                                       \
        memcpy(rt, s.root, s.root_floats * sizeof(float));                                         \
        d = good;                                                                                  \
        d.frames.ptr = f;                                                                          \
        d.root_track.ptr = rt;                                                                     \
        edit;                                                                                      \
        expect_frames_error(&d, want, needle);                                                     \
    } while (0)
    VALUE_CASE(f[(5 * n + 1) * stride + 2] = NAN, CB_ERR_NOT_FINITE, "frame 5 joint 1 tz");
    VALUE_CASE(f[(3 * n + 0) * stride + 6] *= 1.01f, CB_ERR_DEGENERATE, "frame 3 joint 0 rotation");
    VALUE_CASE(for (int k = 3; k < 7; ++k) f[(7 * n + 1) * stride + k] *= -1.0f, CB_ERR_DEGENERATE,
               "hemisphere");
    /* The seam: a looping clip's last frame must repeat its first. */
    VALUE_CASE(f[(60 * n + 1) * stride + 0] += 0.01f, CB_ERR_DEGENERATE, "last frame");
    VALUE_CASE(rt[2] = 0.5f, CB_ERR_INVALID_ARGUMENT, "frame 0 must be zero");
    VALUE_CASE(rt[9] = NAN, CB_ERR_NOT_FINITE, "root_track[9]");
    /* Clamped clips have no seam. */
    memcpy(f, s.frames, s.frame_floats * sizeof(float));
    f[(60 * n + 1) * stride + 0] += 0.01f;
    d = good;
    d.frames.ptr = f;
    d.wrap = CB_CLIP_WRAP_CLAMP;
    assert_int_equal(cb_clip_create_from_frames(&d, &ok, NULL), CB_OK);
    cb_clip_destroy(ok);
    /* Markers. */
    cb_clip_marker m[3] = {
        {.name = "a", .time = 0.1f}, {.name = "b", .time = 0.5f}, {.name = "a", .time = 0.7f}};
    CASE((d.markers = m, d.marker_count = 3), CB_OK, NULL);
    CASE((d.markers = NULL, d.marker_count = 1), CB_ERR_NULL_ARGUMENT, "markers");
    CASE((d.markers = m, d.marker_count = CB_CLIP_MAX_MARKERS + 1), CB_ERR_TOO_MANY, "markers");
    cb_clip_marker bad[2] = {{.name = "a", .time = 0.5f}, {.name = "b", .time = 0.1f}};
    CASE((d.markers = bad, d.marker_count = 2), CB_ERR_INVALID_ARGUMENT, "sorted");
    cb_clip_marker one[1] = {{.name = "a", .time = 1.0f}};
    CASE((d.markers = one, d.marker_count = 1), CB_ERR_INVALID_ARGUMENT, "markers[0].time");
    CASE((d.markers = one, d.marker_count = 1, d.wrap = CB_CLIP_WRAP_CLAMP), CB_OK, NULL);
    one[0].time = NAN;
    CASE((d.markers = one, d.marker_count = 1), CB_ERR_NOT_FINITE, "markers[0].time");
    one[0] = (cb_clip_marker){.name = "", .time = 0.0f};
    CASE((d.markers = one, d.marker_count = 1), CB_ERR_INVALID_ARGUMENT, "name");
    one[0].name = NULL;
    CASE((d.markers = one, d.marker_count = 1), CB_ERR_NULL_ARGUMENT, "name");
    cb_clip_marker twice[2] = {{.name = "a", .time = 0.5f}, {.name = "a", .time = 0.5f}};
    CASE((d.markers = twice, d.marker_count = 2), CB_ERR_DUPLICATE, "both");
#undef CASE
#undef VALUE_CASE
    /* A failing allocator fails cleanly. */
    d = good;
    d.allocator = cb_test_failing_allocator();
    expect_frames_error(&d, CB_ERR_OUT_OF_MEMORY, NULL);
    /* Reading back: spans and clips without root motion. */
    assert_int_equal(cb_clip_read_frames(c, (cb_float_span){f, s.frame_floats - 1}),
                     CB_ERR_SPAN_TOO_SHORT);
    assert_int_equal(cb_clip_read_frames(NULL, (cb_float_span){f, s.frame_floats}),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_read_root_track(c, (cb_float_span){rt, s.root_floats - 1}),
                     CB_ERR_SPAN_TOO_SHORT);
    cb_clip *none = rig_clip(&r, CB_ROOT_MOTION_NONE);
    assert_int_equal(cb_clip_read_root_track(none, (cb_float_span){rt, s.root_floats}),
                     CB_ERR_NOT_FOUND);
    assert_int_equal(cb_clip_frame_stride(none), 7);
    cb_clip_destroy(none);
    free(f);
    free(rt);
    stored_free(&s);
    cb_clip_destroy(c);
    cb_skeleton_destroy(r.skeleton);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(root_motion_frame_is_the_roots_start),
        cmocka_unit_test(clip_frames_query_desc_defaults),
        cmocka_unit_test(clip_frames_round_trip_is_exact),
        cmocka_unit_test(clip_frames_rejects_bad_input),
    };
    return CB_RUN_TESTS(tests);
}
