/* embedded: the procedural humanoid and locomotion set. Desc and errors, contents, determinism,
 * and the gait as properties measured through the whole pipeline (fused blend, local-to-model,
 * root motion): root velocities point in the eight directions at constant speeds, loops are
 * seamless, feet are planted during stance and never under the ground, walk and run put their
 * feet down in sync, arms counter-swing, the pelvis bobs; the layer clips do what they say. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anim_test.h"
#include "test_util.h"

#define PI 3.14159265358979323846

static const char *const directions[8] = {"f", "fl", "l", "bl", "b", "br", "r", "fr"};

static cb_embedded *make_set(void)
{
    cb_embedded *e = NULL;
    cb_error err = {0};
    cb_result r = cb_embedded_create(NULL, &e, &err);
    CB_CHECK(r == CB_OK, "embedded create: %s", err.message);
    return e;
}

static size_t joint(const cb_skeleton *s, const char *name)
{
    uint32_t j = 0;
    CB_CHECK(cb_skeleton_find_joint(s, name, &j) == CB_OK, "no joint %s", name);
    return j;
}

/* Pipeline helper: one character, model matrices for a blend at normalized time t. */
typedef struct rig {
    const cb_skeleton *s;
    size_t n, groups;
    cb_xform_group *pose;
    float *model;
} rig;

static rig rig_make(const cb_skeleton *s)
{
    rig r = {s, cb_skeleton_joint_count(s), cb_skeleton_group_count(s), cb_test_pose_alloc(s, true),
             malloc(cb_skeleton_joint_count(s) * 16 * sizeof(float))};
    return r;
}

static void rig_free(rig *r)
{
    free(r->pose), free(r->model);
}

static void rig_pose(rig *r, const cb_blend_entry *e, size_t count)
{
    cb_pose_blend_job bj = {r->s, {e, count}, 0.0f, {r->pose, r->groups}};
    assert_int_equal(cb_pose_blend_job_run(&bj, NULL), CB_OK);
    cb_ltm_job lj = {
        .skeleton = r->s, .local = {r->pose, r->groups}, .model = {r->model, r->n * 16}};
    assert_int_equal(cb_ltm_job_run(&lj, NULL), CB_OK);
}

static void model_pos(const rig *r, size_t j, double p[3])
{
    for (int k = 0; k < 3; ++k) {
        p[k] = r->model[16 * j + 12 + k];
    }
}

/* World position of joint j: root delta from time 0 to t, then the in-place model position. */
static void world_pos(const rig *r, const cb_clip *c, float t, size_t j, double w[3])
{
    cb_root_delta d;
    assert_int_equal(cb_clip_root_delta(c, 0.0f, t, &d), CB_OK);
    double p[3];
    model_pos(r, j, p);
    double cy = cos(d.yaw), sy = sin(d.yaw);
    w[0] = d.translation[0] + p[0] * cy + p[2] * sy;
    w[1] = d.translation[1] + p[1];
    w[2] = d.translation[2] - p[0] * sy + p[2] * cy;
}

/* ------------------------------------------------------------------------------------------ */

static void embedded_desc_defaults_and_errors(void **state)
{
    (void)state;
    cb_embedded_desc d = cb_embedded_query_desc(NULL);
    assert_true(d.sample_rate_hz == CB_CLIP_DEFAULT_RATE_HZ);
    assert_null(d.allocator.alloc_fn);
    cb_embedded_desc in = {.sample_rate_hz = 60.0f};
    assert_true(cb_embedded_query_desc(&in).sample_rate_hz == 60.0f);

    cb_embedded *e = (cb_embedded *)(uintptr_t)1;
    cb_error err = {0};
    assert_int_equal(cb_embedded_create(NULL, NULL, &err), CB_ERR_NULL_ARGUMENT);
    cb_embedded_desc bad = {._start_canary = 1};
    assert_int_equal(cb_embedded_create(&bad, &e, &err), CB_ERR_CANARY);
    bad = (cb_embedded_desc){._end_canary = 1};
    assert_int_equal(cb_embedded_create(&bad, &e, &err), CB_ERR_CANARY);
    bad = (cb_embedded_desc){.allocator = {.alloc_fn = cb_test_counting_alloc}};
    assert_int_equal(cb_embedded_create(&bad, &e, &err), CB_ERR_ALLOCATOR);
    const float rates[] = {-30.0f, NAN, INFINITY, 1001.0f};
    for (size_t i = 0; i < 4; ++i) {
        bad = (cb_embedded_desc){.sample_rate_hz = rates[i]};
        assert_int_equal(cb_embedded_create(&bad, &e, &err), CB_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "sample_rate_hz"));
    }
    bad = (cb_embedded_desc){.allocator = cb_test_failing_allocator()};
    assert_int_equal(cb_embedded_create(&bad, &e, &err), CB_ERR_OUT_OF_MEMORY);
    assert_true(e == (cb_embedded *)(uintptr_t)1);

    /* Everything goes through the given allocator and comes back on destroy. */
    cb_test_counter counter = {0};
    cb_embedded_desc good = {.allocator = cb_test_counting_allocator(&counter)};
    assert_int_equal(cb_embedded_create(&good, &e, &err), CB_OK);
    assert_true(counter.allocs > 20);
    cb_embedded_destroy(e);
    assert_int_equal(counter.allocs, counter.frees);
    assert_int_equal(counter.live_bytes, 0);
    cb_embedded_destroy(NULL);
}

static void embedded_contents(void **state)
{
    (void)state;
    clock_t t0 = clock();
    cb_embedded *e = make_set();
    cb_test_note("embedded set generated in %.1f ms of CPU time (informational)",
                 1e3 * (double)(clock() - t0) / CLOCKS_PER_SEC);
    const cb_skeleton *s = cb_embedded_skeleton(e);
    assert_int_equal(cb_skeleton_joint_count(s), 64);
    const char *required[] = {"root",   "pelvis",     "spine_01",   "spine_02",   "spine_03",
                              "neck",   "head",       "clavicle_l", "upperarm_r", "lowerarm_l",
                              "hand_r", "thumb_03_l", "index_01_r", "pinky_02_l", "thigh_l",
                              "calf_r", "foot_l",     "ball_r"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i) {
        (void)joint(s, required[i]);
    }
    assert_int_equal(cb_skeleton_parents(s)[0], -1);
    assert_int_equal(cb_skeleton_parents(s)[joint(s, "calf_l")], (int32_t)joint(s, "thigh_l"));
    assert_int_equal(cb_skeleton_parents(s)[joint(s, "index_03_r")],
                     (int32_t)joint(s, "index_02_r"));
    /* Rest pose: feet flat on the ground, head about 1.6 m up. */
    rig r = rig_make(s);
    cb_ltm_job lj = {.skeleton = s, .local = cb_skeleton_rest_pose(s), .model = {r.model, 64 * 16}};
    assert_int_equal(cb_ltm_job_run(&lj, NULL), CB_OK);
    double p[3];
    model_pos(&r, joint(s, "ball_l"), p);
    CB_CHECK(fabs(p[1] - 0.02) < 1e-6 && p[0] > 0.0, "rest ball_l at %g %g %g", p[0], p[1], p[2]);
    model_pos(&r, joint(s, "head"), p);
    CB_CHECK(p[1] > 1.5 && p[1] < 1.7, "rest head height %g", p[1]);
    rig_free(&r);

    assert_int_equal(cb_embedded_clip_count(e), 19);
    const char *order[19] = {"idle"};
    char names[16][16];
    for (int g = 0; g < 2; ++g) {
        for (int d = 0; d < 8; ++d) {
            snprintf(names[8 * g + d], sizeof names[0], "%s_%s", g ? "run" : "walk", directions[d]);
            order[1 + 8 * g + d] = names[8 * g + d];
        }
    }
    order[17] = "lean_add";
    order[18] = "wave_upper";
    for (size_t i = 0; i < 19; ++i) {
        const cb_clip *c = cb_embedded_clip(e, i);
        assert_non_null(c);
        assert_string_equal(cb_clip_name(c), order[i]);
        assert_ptr_equal(cb_embedded_find_clip(e, order[i]), c);
        assert_true(cb_clip_skeleton_signature(c) == cb_skeleton_signature(s));
        assert_true(cb_clip_is_looping(c));
        assert_int_equal(cb_clip_is_additive(c), i == 17);
        CB_CHECK(fabs(cb_clip_sample_rate(c) - 30.0) < 1.5, "%s rate %g", order[i],
                 (double)cb_clip_sample_rate(c));
    }
    assert_null(cb_embedded_clip(e, 19));
    assert_null(cb_embedded_find_clip(e, "walk_up"));
    assert_null(cb_embedded_find_clip(e, NULL));
    cb_embedded_destroy(e);
}

static void embedded_is_deterministic(void **state)
{
    (void)state;
    cb_embedded *a = make_set(), *b = make_set();
    const cb_skeleton *s = cb_embedded_skeleton(a);
    cb_xform_group *pa = cb_test_pose_alloc(s, false), *pb = cb_test_pose_alloc(s, false);
    size_t groups = cb_skeleton_group_count(s);
    for (size_t i = 0; i < 19; ++i) {
        const cb_clip *ca = cb_embedded_clip(a, i), *cbb = cb_embedded_clip(b, i);
        assert_int_equal(cb_clip_bytes(ca), cb_clip_bytes(cbb));
        assert_int_equal(cb_clip_frame_count(ca), cb_clip_frame_count(cbb));
        for (size_t f = 0; f < cb_clip_frame_count(ca); ++f) {
            float t = (float)f / (float)(cb_clip_frame_count(ca) - 1) * 0.999f;
            cb_pose_sample_job ja = {ca, t, {pa, groups}}, jb = {cbb, t, {pb, groups}};
            assert_int_equal(cb_pose_sample_job_run(&ja, NULL), CB_OK);
            assert_int_equal(cb_pose_sample_job_run(&jb, NULL), CB_OK);
            CB_CHECK(memcmp(pa, pb, cb_skeleton_pose_bytes(s)) == 0, "%s differs at frame %zu",
                     cb_clip_name(ca), f);
        }
    }
    /* Another rate: same clips, twice the frames. */
    cb_embedded *c = NULL;
    cb_embedded_desc d60 = {.sample_rate_hz = 60.0f};
    assert_int_equal(cb_embedded_create(&d60, &c, NULL), CB_OK);
    for (size_t i = 0; i < 19; ++i) {
        size_t f30 = cb_clip_frame_count(cb_embedded_clip(a, i)) - 1;
        size_t f60 = cb_clip_frame_count(cb_embedded_clip(c, i)) - 1;
        CB_CHECK(f60 >= 2 * f30 - 1 && f60 <= 2 * f30 + 1, "60 Hz: %zu intervals vs %zu", f60, f30);
    }
    cb_embedded_destroy(c);
    free(pa), free(pb);
    cb_embedded_destroy(a), cb_embedded_destroy(b);
}

/* The blend space of issue 5 takes its node positions from these velocities. */
static void embedded_root_velocities_point_in_eight_directions(void **state)
{
    (void)state;
    cb_embedded *e = make_set();
    cb_clip_root_motion idle = cb_clip_query_root_motion(cb_embedded_find_clip(e, "idle"));
    CB_CHECK(idle.speed_mps < 1e-6 && fabs(idle.yaw_rate_rps) < 1e-6, "idle moves: %g m/s",
             (double)idle.speed_mps);
    for (int g = 0; g < 2; ++g) {
        double speeds[8];
        for (int d = 0; d < 8; ++d) {
            char name[16];
            snprintf(name, sizeof name, "%s_%s", g ? "run" : "walk", directions[d]);
            cb_clip_root_motion m = cb_clip_query_root_motion(cb_embedded_find_clip(e, name));
            /* Direction d is d * 45 degrees from forward towards the left (+X). */
            double want = d * PI / 4.0;
            double got = atan2(-m.right_mps, m.forward_mps); /* left = -right */
            double err = fabs(atan2(sin(got - want), cos(got - want)));
            CB_CHECK(err < 1e-4, "%s heads %.2f deg, want %.2f", name, got * 180 / PI,
                     want * 180 / PI);
            CB_CHECK(fabs(m.yaw_rate_rps) < 1e-5, "%s turns", name);
            CB_CHECK(fabs(m.displacement[1]) < 1e-5, "%s climbs", name);
            speeds[d] = m.speed_mps;
            CB_CHECK(g ? speeds[d] > 3.0 && speeds[d] < 4.0 : speeds[d] > 1.2 && speeds[d] < 1.6,
                     "%s speed %.3f m/s", name, speeds[d]);
        }
        for (int d = 1; d < 8; ++d) {
            CB_CHECK(fabs(speeds[d] - speeds[0]) < 0.05 * speeds[0],
                     "%s speeds differ: %.3f vs %.3f", g ? "run" : "walk", speeds[d], speeds[0]);
        }
    }
    cb_embedded_destroy(e);
}

/* The last frame blends into the first: across the wrap no value changes more than across the
 * largest ordinary frame step, in the local poses and in model space. */
static void embedded_loops_are_seamless(void **state)
{
    (void)state;
    cb_embedded *e = make_set();
    const cb_skeleton *s = cb_embedded_skeleton(e);
    rig a = rig_make(s), b = rig_make(s);
    for (size_t i = 0; i < 19; ++i) {
        const cb_clip *c = cb_embedded_clip(e, i);
        if (cb_clip_is_additive(c)) {
            continue;
        }
        size_t intervals = cb_clip_frame_count(c) - 1;
        double max_step = 0.0, wrap_step = 0.0;
        for (size_t f = 0; f < intervals; ++f) {
            cb_blend_entry ea = {c, (float)f / (float)intervals, 1.0f};
            cb_blend_entry eb = {c, (float)(f + 1) / (float)intervals, 1.0f};
            rig_pose(&a, &ea, 1);
            rig_pose(&b, &eb, 1);
            double step = 0.0;
            for (size_t j = 0; j < a.n; ++j) {
                double pa[3], pb[3];
                model_pos(&a, j, pa);
                model_pos(&b, j, pb);
                step = fmax(step, sqrt((pa[0] - pb[0]) * (pa[0] - pb[0]) +
                                       (pa[1] - pb[1]) * (pa[1] - pb[1]) +
                                       (pa[2] - pb[2]) * (pa[2] - pb[2])));
            }
            if (f + 1 == intervals) {
                wrap_step = step;
            } else {
                max_step = fmax(max_step, step);
            }
        }
        /* The wrap step is the step from frame N - 1 to frame N = frame 0. */
        CB_CHECK(wrap_step <= 1.05 * max_step + 1e-6,
                 "%s: step across the loop %.4f m, largest "
                 "other step %.4f m",
                 cb_clip_name(c), wrap_step, max_step);
        /* And t = 1 is t = 0. */
        cb_blend_entry e0 = {c, 0.0f, 1.0f}, e1 = {c, 1.0f, 1.0f};
        rig_pose(&a, &e0, 1);
        rig_pose(&b, &e1, 1);
        CB_CHECK(memcmp(a.model, b.model, a.n * 16 * sizeof(float)) == 0, "%s: t = 1 != t = 0",
                 cb_clip_name(c));
    }
    rig_free(&a), rig_free(&b);
    cb_embedded_destroy(e);
}

/* Foot contact, measured: the ball joint low (< 3 cm) and slow (< 0.3 m/s in the world). */
typedef struct gait_stats {
    double contact_start[2]; /* normalized time the first contact interval starts */
    int intervals[2];        /* contact intervals per cycle */
    double contact_share[2]; /* fraction of the cycle in contact */
    double drift[2];         /* largest world movement of the ball within one contact */
    double min_ball_y, min_ankle_y, max_ball_y[2];
    double pelvis_min, pelvis_max;
    double hand_ankle_corr; /* correlation of left hand z and left ankle z (model space) */
} gait_stats;

enum { STEPS_PER_FRAME = 8 };

static gait_stats measure_gait(const cb_skeleton *s, const cb_clip *c)
{
    size_t ball[2] = {joint(s, "ball_l"), joint(s, "ball_r")};
    size_t ankle[2] = {joint(s, "foot_l"), joint(s, "foot_r")};
    size_t pelvis = joint(s, "pelvis"), hand = joint(s, "hand_l");
    size_t steps = (cb_clip_frame_count(c) - 1) * STEPS_PER_FRAME;
    double dt = cb_clip_duration(c) / (double)steps;
    rig r = rig_make(s);
    double(*w)[2][3] = calloc(steps, sizeof *w);
    double *hz = calloc(steps, sizeof *hz), *az = calloc(steps, sizeof *az);
    gait_stats g = {.min_ball_y = 1e9, .min_ankle_y = 1e9, .pelvis_min = 1e9, .pelvis_max = -1e9};
    cb_clip_root_motion rm = cb_clip_query_root_motion(c);
    for (size_t i = 0; i < steps; ++i) {
        float t = (float)i / (float)steps;
        cb_blend_entry en = {c, t, 1.0f};
        rig_pose(&r, &en, 1);
        double p[3];
        for (int f = 0; f < 2; ++f) {
            world_pos(&r, c, t, ball[f], w[i][f]);
            g.min_ball_y = fmin(g.min_ball_y, w[i][f][1]);
            g.max_ball_y[f] = fmax(g.max_ball_y[f], w[i][f][1]);
            model_pos(&r, ankle[f], p);
            g.min_ankle_y = fmin(g.min_ankle_y, p[1]);
        }
        model_pos(&r, pelvis, p);
        g.pelvis_min = fmin(g.pelvis_min, p[1]);
        g.pelvis_max = fmax(g.pelvis_max, p[1]);
        model_pos(&r, hand, p);
        hz[i] = p[2];
        model_pos(&r, ankle[0], p);
        az[i] = p[2];
    }
    for (int f = 0; f < 2; ++f) {
        /* Contact flags over the cycle, circular. */
        bool *in = calloc(steps, sizeof *in);
        for (size_t i = 0; i < steps; ++i) {
            size_t prev = (i + steps - 1) % steps;
            double dx = w[i][f][0] - w[prev][f][0], dz = w[i][f][2] - w[prev][f][2];
            if (i == 0) {
                /* Across the wrap the world position continues by one cycle's displacement:
                 * measure the speed from the step after instead. */
                dx = w[1][f][0] - w[0][f][0], dz = w[1][f][2] - w[0][f][2];
            }
            double speed = sqrt(dx * dx + dz * dz) / dt;
            in[i] = w[i][f][1] < 0.03 && speed < 0.3;
        }
        size_t count = 0, starts = 0;
        double first_start = -1.0;
        for (size_t i = 0; i < steps; ++i) {
            count += in[i];
            if (in[i] && !in[(i + steps - 1) % steps]) {
                starts++;
                double t = (double)i / steps;
                /* The start nearest to the foot's nominal touch-down (0 left, 0.5 right). */
                double nominal = f == 0 ? 0.0 : 0.5;
                double d = fabs(remainder(t - nominal, 1.0));
                if (first_start < 0 || d < fabs(remainder(first_start - nominal, 1.0))) {
                    first_start = t;
                }
                /* Drift over this contact interval; past the wrap the world position is one
                 * cycle's displacement further on (the clips walk straight). */
                double x0 = w[i][f][0], z0 = w[i][f][2];
                for (size_t k = i; in[k % steps] && k < i + steps; ++k) {
                    double wrap = k >= steps ? 1.0 : 0.0;
                    double x = w[k % steps][f][0] + wrap * rm.displacement[0];
                    double z = w[k % steps][f][2] + wrap * rm.displacement[2];
                    g.drift[f] = fmax(g.drift[f], hypot(x - x0, z - z0));
                }
            }
        }
        g.intervals[f] = (int)starts;
        g.contact_start[f] = first_start;
        g.contact_share[f] = (double)count / steps;
        free(in);
    }
    /* Correlation of hand and ankle fore-aft positions. */
    double mh = 0, ma = 0;
    for (size_t i = 0; i < steps; ++i) {
        mh += hz[i], ma += az[i];
    }
    mh /= steps, ma /= steps;
    double sha = 0, shh = 0, saa = 0;
    for (size_t i = 0; i < steps; ++i) {
        sha += (hz[i] - mh) * (az[i] - ma);
        shh += (hz[i] - mh) * (hz[i] - mh);
        saa += (az[i] - ma) * (az[i] - ma);
    }
    g.hand_ankle_corr = sha / sqrt(shh * saa + 1e-30);
    free(w), free(hz), free(az);
    rig_free(&r);
    return g;
}

static void embedded_feet_plant_and_gaits_sync(void **state)
{
    (void)state;
    cb_embedded *e = make_set();
    const cb_skeleton *s = cb_embedded_skeleton(e);
    for (int d = 0; d < 8; ++d) {
        gait_stats gs[2];
        for (int g = 0; g < 2; ++g) {
            char name[16];
            snprintf(name, sizeof name, "%s_%s", g ? "run" : "walk", directions[d]);
            const cb_clip *c = cb_embedded_find_clip(e, name);
            gait_stats st = measure_gait(s, c);
            gs[g] = st;
            cb_test_note("%-8s contact L %.3f R %.3f, share %.2f %.2f, drift %.1f %.1f mm, "
                         "lift %.0f mm, pelvis %.3f..%.3f m, hand/ankle corr %+.2f",
                         name, st.contact_start[0], st.contact_start[1], st.contact_share[0],
                         st.contact_share[1], 1e3 * st.drift[0], 1e3 * st.drift[1],
                         1e3 * fmin(st.max_ball_y[0], st.max_ball_y[1]), st.pelvis_min,
                         st.pelvis_max, st.hand_ankle_corr);
            for (int f = 0; f < 2; ++f) {
                /* One stance per foot per cycle, of a plausible length. */
                CB_CHECK(st.intervals[f] == 1, "%s foot %d: %d contacts per cycle", name, f,
                         st.intervals[f]);
                CB_CHECK(g ? st.contact_share[f] > 0.2 && st.contact_share[f] < 0.45
                           : st.contact_share[f] > 0.45 && st.contact_share[f] < 0.7,
                         "%s foot %d: in contact %.2f of the cycle", name, f, st.contact_share[f]);
                /* Planted: the ball moves less than 1.2 cm in the world during a contact (the
                 * interpolation between 30 Hz frames accounts for most of it). */
                CB_CHECK(st.drift[f] < 0.012, "%s foot %d slides %.1f mm", name, f,
                         1e3 * st.drift[f]);
                /* Swinging: lifted at least 5 cm. */
                CB_CHECK(st.max_ball_y[f] > 0.05, "%s foot %d lifts only %.3f m", name, f,
                         st.max_ball_y[f]);
                /* Touch-down at 0 (left) and 0.5 (right), within a frame or so. */
                double nominal = f == 0 ? 0.0 : 0.5;
                CB_CHECK(fabs(remainder(st.contact_start[f] - nominal, 1.0)) < 0.05,
                         "%s foot %d touches down at %.3f", name, f, st.contact_start[f]);
            }
            /* Never below the ground (the ball joint sits 2 cm above the sole, the ankle 7). */
            CB_CHECK(st.min_ball_y > 0.01 && st.min_ankle_y > 0.05,
                     "%s: a foot goes through the ground (ball %.3f, ankle %.3f)", name,
                     st.min_ball_y, st.min_ankle_y);
            /* The pelvis bobs, by a plausible amount. */
            double bob = st.pelvis_max - st.pelvis_min;
            CB_CHECK(bob > 0.02 && bob < 0.13, "%s: pelvis bob %.3f m", name, bob);
            /* Arms counter-swing (forward and backward gaits; sideways they hardly swing). */
            if (d == 0 || d == 4) {
                CB_CHECK(st.hand_ankle_corr < -0.5,
                         "%s: left hand follows the left foot "
                         "(correlation %+.2f)",
                         name, st.hand_ankle_corr);
            }
        }
        /* Walk and run of one direction put each foot down at the same phase. */
        for (int f = 0; f < 2; ++f) {
            CB_CHECK(fabs(remainder(gs[0].contact_start[f] - gs[1].contact_start[f], 1.0)) < 0.04,
                     "%s: walk and run touch down at %.3f and %.3f", directions[d],
                     gs[0].contact_start[f], gs[1].contact_start[f]);
        }
    }
    /* Idle: both feet planted all the time. */
    gait_stats idle = measure_gait(s, cb_embedded_find_clip(e, "idle"));
    CB_CHECK(idle.contact_share[0] == 1.0 && idle.contact_share[1] == 1.0 && idle.drift[0] < 1e-4 &&
                 idle.drift[1] < 1e-4,
             "idle feet move: share %.2f %.2f, drift %.4f %.4f", idle.contact_share[0],
             idle.contact_share[1], idle.drift[0], idle.drift[1]);
    cb_embedded_destroy(e);
}

/* Where a foot is at normalized time t of a clip: world position of its ball joint, and the
 * model-space height of its ankle. */
static void foot_at_time(rig *r, const cb_clip *c, float t, size_t ball, size_t ankle, double w[3],
                         double *ankle_y)
{
    cb_blend_entry en = {c, t, 1.0f};
    rig_pose(r, &en, 1);
    world_pos(r, c, t, ball, w);
    double p[3];
    model_pos(r, ankle, p);
    *ankle_y = p[1];
}

/* The foot markers of the walk and run clips sit where the gait plants and lifts each foot,
 * measured through the pipeline (fused blend, local-to-model, root motion): at a foot_plant
 * marker the foot is flat on the ground (ball and ankle at their standing heights) and still in
 * the world; at a foot_lift marker the ball is still on the ground and still, the heel up; and
 * the contact measured as in measure_gait (ball low and slow, 8 samples per frame) starts within
 * one frame of the plant marker and ends within one frame of the lift marker. Idle and the
 * layer clips carry no markers. */
static void embedded_foot_markers_sit_where_feet_plant(void **state)
{
    (void)state;
    cb_embedded *e = make_set();
    const cb_skeleton *s = cb_embedded_skeleton(e);
    const size_t ball[2] = {joint(s, "ball_l"), joint(s, "ball_r")};
    const size_t ankle[2] = {joint(s, "foot_l"), joint(s, "foot_r")};
    static const char *const plant[2] = {"foot_plant_l", "foot_plant_r"};
    static const char *const lift[2] = {"foot_lift_l", "foot_lift_r"};
    rig r = rig_make(s);
    double worst_plant_y = 0, worst_plant_ankle = 0, worst_plant_speed = 0, worst_lift_y = 0;
    double worst_lift_speed = 0, worst_start = 0, worst_end = 0, min_heel = 1e9;
    double worst_frame_step = 0;
    for (size_t i = 0; i < cb_embedded_clip_count(e); ++i) {
        const cb_clip *c = cb_embedded_clip(e, i);
        const char *name = cb_clip_name(c);
        bool locomotion = strncmp(name, "walk_", 5) == 0 || strncmp(name, "run_", 4) == 0;
        if (!locomotion) {
            CB_CHECK(cb_clip_marker_count(c) == 0, "%s has %u markers", name,
                     cb_clip_marker_count(c));
            continue;
        }
        assert_int_equal(cb_clip_marker_count(c), 4);
        size_t intervals = cb_clip_frame_count(c) - 1;
        double frame = 1.0 / (double)intervals, frame_s = cb_clip_duration(c) * frame;
        size_t steps = intervals * STEPS_PER_FRAME;
        for (int f = 0; f < 2; ++f) {
            uint32_t ip, il;
            cb_clip_marker mp, ml;
            assert_int_equal(cb_clip_find_marker_name(c, plant[f], &ip), CB_OK);
            assert_int_equal(cb_clip_find_marker_name(c, lift[f], &il), CB_OK);
            cb_clip_query_marker(c, ip, &mp);
            cb_clip_query_marker(c, il, &ml);
            CB_CHECK(!mp.event_only && ml.event_only, "%s: plants sync, lifts are events only",
                     name);
            /* At the plant: flat on the ground, and still over the following frame. */
            double w0[3], w1[3], ay, ay1;
            foot_at_time(&r, c, mp.time, ball[f], ankle[f], w0, &ay);
            foot_at_time(&r, c, mp.time + (float)frame, ball[f], ankle[f], w1, &ay1);
            double speed = hypot(w1[0] - w0[0], w1[2] - w0[2]) / frame_s;
            worst_plant_y = fmax(worst_plant_y, fabs(w0[1] - 0.02));
            worst_plant_ankle = fmax(worst_plant_ankle, fabs(ay - 0.07));
            worst_plant_speed = fmax(worst_plant_speed, speed);
            /* Measured at most 1.6 mm, 1.7 mm and 0.16 m/s (running at 3.5 m/s: the leg's
             * rotations are interpolated between 30 Hz frames, so the foot wobbles between
             * them); bounds about 1.5-2x. Between the two stored frames that follow the marker
             * the ball does not move at all (to float precision), bound 0.1 mm. */
            CB_CHECK(fabs(w0[1] - 0.02) < 3e-3 && fabs(ay - 0.07) < 3e-3 && speed < 0.25,
                     "%s %s: ball %.4f m, ankle %.4f m up, moving %.3f m/s", name, plant[f], w0[1],
                     ay, speed);
            float next = (float)(ceil(mp.time * (double)intervals) * frame);
            foot_at_time(&r, c, next, ball[f], ankle[f], w0, &ay);
            foot_at_time(&r, c, next + (float)frame, ball[f], ankle[f], w1, &ay1);
            double step = hypot(w1[0] - w0[0], w1[2] - w0[2]);
            worst_frame_step = fmax(worst_frame_step, step);
            CB_CHECK(step < 1e-4,
                     "%s %s: the ball moves %.3f mm between the stored frames after "
                     "the marker",
                     name, plant[f], 1e3 * step);
            /* At the lift: the foot leaves the ground during the frame interval that holds
             * the marker (the clip stores 30 frames a second and interpolates between them),
             * so at the last stored frame at or before the marker the ball is still down and
             * was still over the frame before; moving forwards, the heel is raised (the foot
             * rolled over the ball; backwards the gait keeps the foot flat). */
            float last = (float)(floor(ml.time * (double)intervals) * frame);
            foot_at_time(&r, c, last - (float)frame, ball[f], ankle[f], w0, &ay);
            foot_at_time(&r, c, last, ball[f], ankle[f], w1, &ay1);
            speed = hypot(w1[0] - w0[0], w1[2] - w0[2]) / frame_s;
            worst_lift_y = fmax(worst_lift_y, fabs(w1[1] - 0.02));
            worst_lift_speed = fmax(worst_lift_speed, speed);
            bool forward = cb_clip_query_root_motion(c).forward_mps > 0.5f;
            min_heel = forward ? fmin(min_heel, ay1 - 0.07) : min_heel;
            CB_CHECK(fabs(w1[1] - 0.02) < 1e-3 && speed < 0.01 && (!forward || ay1 > 0.08),
                     "%s %s: ball %.4f m up, moving %.3f m/s, ankle %.4f m", name, lift[f], w1[1],
                     speed, ay1);
            /* Contact measured as in measure_gait; the interval that starts nearest the plant
             * marker (the foot has one per cycle, test above). */
            bool *in = calloc(steps, sizeof *in);
            double(*w)[3] = calloc(steps, sizeof *w);
            for (size_t k = 0; k < steps; ++k) {
                foot_at_time(&r, c, (float)k / (float)steps, ball[f], ankle[f], w[k], &ay);
            }
            for (size_t k = 0; k < steps; ++k) {
                /* Speed over the step after the sample; across the wrap the world position
                 * jumps by one cycle's displacement, so the last sample uses the step before. */
                size_t a = k + 1 == steps ? k - 1 : k, b = a + 1;
                double v =
                    hypot(w[b][0] - w[a][0], w[b][2] - w[a][2]) * steps / cb_clip_duration(c);
                in[k] = w[k][1] < 0.03 && v < 0.3;
            }
            double t_start = 2.0, t_end = 2.0;
            for (size_t k = 0; k < steps; ++k) {
                double d = remainder((double)k / steps - mp.time, 1.0);
                if (in[k] && !in[(k + steps - 1) % steps] && fabs(d) < fabs(t_start)) {
                    size_t end = k;
                    while (in[(end + 1) % steps] && (end + 1) % steps != k) {
                        end = (end + 1) % steps;
                    }
                    t_start = d;
                    t_end = remainder((double)(end + 1) / steps - ml.time, 1.0);
                }
            }
            worst_start = fmax(worst_start, fabs(t_start) / frame);
            worst_end = fmax(worst_end, fabs(t_end) / frame);
            CB_CHECK(fabs(t_start) <= frame && fabs(t_end) <= frame,
                     "%s foot %d: contact from %+.3f to %+.3f frames off the markers", name, f,
                     t_start / frame, t_end / frame);
            free(in), free(w);
        }
    }
    cb_test_note("foot markers: at plants the ball is within %.2f mm and the ankle within %.2f mm "
                 "of standing height, moving %.3f m/s at most (%.4f mm between stored frames); "
                 "at lifts the ball is within %.2f "
                 "mm, moving %.3f m/s, the heel up %.0f mm or more (forwards); contact starts "
                 "%.2f and ends %.2f frames from the markers at most",
                 1e3 * worst_plant_y, 1e3 * worst_plant_ankle, worst_plant_speed,
                 1e3 * worst_frame_step, 1e3 * worst_lift_y, worst_lift_speed, 1e3 * min_heel,
                 worst_start, worst_end);
    rig_free(&r);
    cb_embedded_destroy(e);
}

/* The layer clips on top of locomotion: an upper-body OVERRIDE with the wave raises the right
 * hand above the head and leaves the legs alone; the additive lean bends the spine sideways a
 * few degrees and leaves the legs alone too. Walk and run blend in sync. */
static void embedded_layers_on_locomotion(void **state)
{
    (void)state;
    cb_embedded *e = make_set();
    const cb_skeleton *s = cb_embedded_skeleton(e);
    size_t soa = cb_skeleton_soa_joint_count(s);
    float *upper = malloc(soa * sizeof(float));
    cb_mask_rule rule = {"spine_01", 1.0f, false};
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, &rule, 1, (cb_float_span){upper, soa}, NULL),
                     CB_OK);
    rig base = rig_make(s), layered = rig_make(s);
    size_t hand = joint(s, "hand_r"), head = joint(s, "head"), chest = joint(s, "spine_03");
    size_t legs[] = {joint(s, "ball_l"), joint(s, "ball_r"), joint(s, "calf_l"),
                     joint(s, "foot_r")};
    const cb_clip *walk = cb_embedded_find_clip(e, "walk_f");
    const cb_clip *run = cb_embedded_find_clip(e, "run_f");
    const cb_clip *wave = cb_embedded_find_clip(e, "wave_upper");
    const cb_clip *lean = cb_embedded_find_clip(e, "lean_add");
    double max_lean = 0.0;
    for (int k = 0; k < 40; ++k) {
        float t = (float)k / 40.0f;
        cb_blend_entry en[4] = {
            {walk, t, 0.5f},
            {run, t, 0.5f},
            {wave, t, 1.0f, CB_BLEND_MODE_OVERRIDE, {upper, soa}},
            {lean, t, 1.0f, CB_BLEND_MODE_ADDITIVE, {upper, soa}},
        };
        rig_pose(&base, en, 2);
        rig_pose(&layered, en, 3);
        double ph[3], pd[3];
        model_pos(&layered, hand, ph);
        model_pos(&layered, head, pd);
        CB_CHECK(ph[1] > pd[1], "waving hand below the head at t %.2f (%.2f vs %.2f)", (double)t,
                 ph[1], pd[1]);
        for (size_t i = 0; i < 4; ++i) {
            double a[3], b[3];
            model_pos(&base, legs[i], a);
            model_pos(&layered, legs[i], b);
            CB_CHECK(fabs(a[0] - b[0]) + fabs(a[1] - b[1]) + fabs(a[2] - b[2]) < 1e-5,
                     "the upper-body override moved a leg joint at t %.2f", (double)t);
        }
        /* The blended walk/run still plants the feet low at the sync points. */
        if (k == 0) {
            double bl[3];
            model_pos(&base, legs[0], bl);
            CB_CHECK(bl[1] < 0.03, "walk+run blend: left ball at %.3f m at t 0", bl[1]);
        }
        rig_pose(&layered, en, 4);
        for (size_t i = 0; i < 4; ++i) {
            double a[3], b[3];
            model_pos(&base, legs[i], a);
            model_pos(&layered, legs[i], b);
            CB_CHECK(fabs(a[0] - b[0]) + fabs(a[1] - b[1]) + fabs(a[2] - b[2]) < 1e-5,
                     "the masked additive moved a leg joint");
        }
        /* The lean tilts the chest: compare its up axis with and without the additive. */
        cb_blend_entry no_add[3] = {en[0], en[1], en[2]};
        rig_pose(&base, no_add, 3);
        const float *ua = base.model + 16 * chest + 4, *ub = layered.model + 16 * chest + 4;
        double dot = (ua[0] * ub[0] + ua[1] * ub[1] + ua[2] * ub[2]) /
                     sqrt((ua[0] * ua[0] + ua[1] * ua[1] + ua[2] * ua[2]) *
                          (ub[0] * ub[0] + ub[1] * ub[1] + ub[2] * ub[2]));
        max_lean = fmax(max_lean, acos(fmin(1.0, dot)));
    }
    CB_CHECK(max_lean > 0.1 && max_lean < 0.5, "lean_add tilts the chest by %.3f rad", max_lean);
    free(upper);
    rig_free(&base), rig_free(&layered);
    cb_embedded_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(embedded_desc_defaults_and_errors),
        cmocka_unit_test(embedded_contents),
        cmocka_unit_test(embedded_is_deterministic),
        cmocka_unit_test(embedded_root_velocities_point_in_eight_directions),
        cmocka_unit_test(embedded_loops_are_seamless),
        cmocka_unit_test(embedded_feet_plant_and_gaits_sync),
        cmocka_unit_test(embedded_foot_markers_sit_where_feet_plant),
        cmocka_unit_test(embedded_layers_on_locomotion),
    };
    return CB_RUN_TESTS(tests);
}
