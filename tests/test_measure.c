/* measure: the metrics of `crowdblend animate` (src/measure) against cases computed by hand.
 * Statistics (mean exact, quantiles within the bins' stated 0.14 %); which feet a clip's
 * markers plant (the embedded walk and run against their documented marker times); the skate
 * of a ball joint sliding at a known speed, of one pivoting about a turning root (the chord
 * speed 2 r sin(w dt / 2) / dt), the planting weight's threshold, the both-ends rule, the
 * bands; the pops of joints on a parabola (second difference 2a). */
#include <math.h>
#include <string.h>

#include "measure/measure.h"
#include "test_util.h"

/* Quantiles report a bin's geometric centre: within 2^(1/512) - 1 of the value. */
static const double BIN_TOLERANCE = 0.00136;

static void expect_near_rel(double got, double want, double rel, const char *what)
{
    CB_CHECK(fabs(got - want) <= rel * fabs(want), "%s: %.9g, want %.9g", what, got, want);
}

static void measure_stat_closed_forms(void **state)
{
    (void)state;
    cb_stat s;
    assert_true(cb_stat_init(&s, 5.0));
    assert_true(cb_stat_mean(&s) == 0.0 && cb_stat_quantile(&s, 0.5) == 0.0);
    for (int v = 1000; v >= 1; --v) {
        cb_stat_add(&s, v);
    }
    assert_true(cb_stat_mean(&s) == 500.5);
    assert_true(cb_stat_share_above(&s) == 0.995);
    expect_near_rel(cb_stat_quantile(&s, 0.5), 500.0, BIN_TOLERANCE, "median");
    expect_near_rel(cb_stat_quantile(&s, 0.95), 950.0, BIN_TOLERANCE, "p95");
    expect_near_rel(cb_stat_quantile(&s, 0.999), 999.0, BIN_TOLERANCE, "p99.9");
    expect_near_rel(cb_stat_quantile(&s, 1.0), 1000.0, BIN_TOLERANCE, "max");
    assert_true(s.max == 1000.0);
    cb_stat t;
    assert_true(cb_stat_init(&t, 5.0));
    cb_stat_add(&t, 0.0);
    cb_stat_add(&t, 1e-9);
    cb_stat_merge(&s, &t);
    assert_int_equal(s.count, 1002);
    assert_true(cb_stat_quantile(&t, 1.0) == 0.0); /* below 1e-4 counts as 0 */
    cb_stat_finish(&s);
    cb_stat_finish(&t);
}

/* The embedded gaits' documented markers (crowdblend/embedded.h): walk plants the left foot at
 * 0 and lifts it at 0.6, plants the right at 0.5 and lifts it at 0.1; run lifts at 0.33 and
 * 0.83. Idle has no markers: it never plants for the metric. */
static void measure_feet_from_markers(void **state)
{
    (void)state;
    cb_embedded *set;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    cb_clip_feet walk, run, idle;
    assert_true(cb_clip_feet_init(&walk, cb_embedded_find_clip(set, "walk_fl")));
    assert_true(cb_clip_feet_init(&run, cb_embedded_find_clip(set, "run_b")));
    assert_true(cb_clip_feet_init(&idle, cb_embedded_find_clip(set, "idle")));
    for (int k = 0; k < 1000; ++k) {
        float t = (k + 0.5f) / 1000.0f;
        CB_CHECK(cb_clip_feet_down(&walk, CB_FOOT_LEFT, t) == (t < 0.6f), "walk left at %g",
                 (double)t);
        CB_CHECK(cb_clip_feet_down(&walk, CB_FOOT_RIGHT, t) == (t >= 0.5f || t < 0.1f),
                 "walk right at %g", (double)t);
        CB_CHECK(cb_clip_feet_down(&run, CB_FOOT_LEFT, t) == (t < 0.33f), "run left at %g",
                 (double)t);
        CB_CHECK(cb_clip_feet_down(&run, CB_FOOT_RIGHT, t) == (t >= 0.5f && t < 0.83f),
                 "run right at %g", (double)t);
        CB_CHECK(!cb_clip_feet_down(&idle, CB_FOOT_LEFT, t), "idle plants");
    }
    cb_clip_feet none;
    assert_true(cb_clip_feet_init(&none, NULL));
    assert_false(cb_clip_feet_down(&none, CB_FOOT_RIGHT, 0.5f));
    cb_embedded_destroy(set);
}

/* A measurement over the embedded skeleton whose two clip slots play walk_f and run_f. */
typedef struct fixture {
    cb_embedded *set;
    const cb_clip *clips[2];
    cb_measure *m;
    uint32_t ball_l, ball_r, joints;
    float matrices[64 * 16];
} fixture;

static void fixture_init(fixture *f, float dt)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(cb_embedded_create(NULL, &f->set, NULL), CB_OK);
    const cb_skeleton *sk = cb_embedded_skeleton(f->set);
    f->clips[0] = cb_embedded_find_clip(f->set, "walk_f");
    f->clips[1] = cb_embedded_find_clip(f->set, "run_f");
    assert_int_equal(cb_skeleton_find_joint(sk, "ball_l", &f->ball_l), CB_OK);
    assert_int_equal(cb_skeleton_find_joint(sk, "ball_r", &f->ball_r), CB_OK);
    f->joints = (uint32_t)cb_skeleton_joint_count(sk);
    cb_measure_desc d = {.skeleton = sk,
                         .slot_clips = f->clips,
                         .slot_count = 2,
                         .ball_joint = {f->ball_l, f->ball_r},
                         .dt_s = dt,
                         .slots = 2};
    f->m = cb_measure_create(&d);
    assert_non_null(f->m);
    for (uint32_t j = 0; j < f->joints; ++j) {
        float *m = &f->matrices[16 * j];
        m[0] = m[5] = m[10] = m[15] = 1.0f;
    }
}

static void fixture_finish(fixture *f)
{
    cb_measure_destroy(f->m);
    cb_embedded_destroy(f->set);
}

static void set_joint(fixture *f, uint32_t joint, double x, double y, double z)
{
    f->matrices[16 * joint + 12] = (float)x;
    f->matrices[16 * joint + 13] = (float)y;
    f->matrices[16 * joint + 14] = (float)z;
}

/* A fresh fixture at 60 Hz with one history slot taken. */
static uint32_t start(fixture *f)
{
    fixture_init(f, 1.0f / 60.0f);
    return cb_measure_slot_take(f->m);
}

static cb_measure_frame frame_of(fixture *f, const float *weights, const float *times, double yaw,
                                 double speed, double turn)
{
    cb_measure_frame fr = {.matrices = f->matrices,
                           .weights = weights,
                           .times = times,
                           .speed_mps = speed,
                           .turn_rps = turn};
    cb_follow_root root = {.position = {3.0f, 0.0f, -2.0f}, .yaw = (float)yaw};
    cb_follow_root_matrix(&root, fr.root);
    return fr;
}

/* The left ball slides at 0.23 m/s in the model while walk_f (weight 1) has the left foot
 * down (t = 0.2) and the right one up: 23 cm/s in every planted left-foot frame, none from
 * the right foot. */
static void measure_skate_of_a_sliding_foot(void **state)
{
    (void)state;
    const float dt = 1.0f / 60.0f;
    fixture f;
    uint32_t slot = start(&f);
    const float w[2] = {1.0f, 0.0f}, t[2] = {0.2f, 0.2f};
    for (int k = 0; k < 50; ++k) {
        set_joint(&f, f.ball_l, 0.1, 0.0, 0.23 * k * dt);
        set_joint(&f, f.ball_r, -0.1, 0.05 * k, 0.0); /* up and off the ground: not planted */
        cb_measure_frame fr = frame_of(&f, w, t, 0.4, 1.0, 0.7);
        cb_measure_add(f.m, slot, &fr);
    }
    cb_measure_result r = cb_measure_query(f.m);
    assert_int_equal(r.character_frames, 50);
    assert_int_equal(r.planted_samples, 49); /* two frames make a sample */
    expect_near_rel(cb_stat_mean(r.skate), 23.0, 1e-5, "mean");
    expect_near_rel(cb_stat_quantile(r.skate, 0.5), 23.0, BIN_TOLERANCE, "median");
    expect_near_rel(cb_stat_quantile(r.skate, 0.95), 23.0, BIN_TOLERANCE, "p95");
    assert_true(cb_stat_share_above(r.skate) == 1.0);
    /* Trajectory speed 1.0 m/s: band 0.8-1.3; turn rate 0.7 rad/s: band 0.5-1.0. */
    assert_int_equal(r.skate_by_speed[2]->count, 49);
    assert_int_equal(r.skate_by_turn[2]->count, 49);
    assert_int_equal(r.skate_by_speed[1]->count + r.skate_by_speed[3]->count, 0);
    fixture_finish(&f);
}

/* A planted ball 0.3 m beside the root while the root turns at 1.5 rad/s: the foot sweeps an
 * arc; the per-frame chord gives 2 r sin(w dt / 2) / dt (about w r = 45 cm/s). The issue's
 * "24 cm/s per rad/s" is this effect at the embedded feet's radius. */
static void measure_skate_of_a_pivoting_foot(void **state)
{
    (void)state;
    const float dt = 1.0f / 60.0f;
    const double w_rps = 1.5, radius = 0.3;
    fixture f;
    uint32_t slot = start(&f);
    /* walk_f at 0.05 has both feet down; run_f at 0.95 neither: each foot has weight 0.5. */
    const float w[2] = {0.5f, 0.5f}, t[2] = {0.05f, 0.95f};
    set_joint(&f, f.ball_l, radius, 0.0, 0.0);
    set_joint(&f, f.ball_r, -radius, 0.0, 0.0);
    for (int k = 0; k < 120; ++k) {
        cb_measure_frame fr = frame_of(&f, w, t, w_rps * k * dt, 0.1, w_rps);
        cb_measure_add(f.m, slot, &fr);
    }
    cb_measure_result r = cb_measure_query(f.m);
    double want = 100.0 * 2.0 * radius * sin(w_rps * dt / 2.0) / dt;
    cb_test_note("pivot at %.1f rad/s, %.2f m: %.4f cm/s (w r = %.1f)", w_rps, radius,
                 cb_stat_mean(r.skate), 100.0 * w_rps * radius);
    assert_int_equal(r.planted_samples, 2 * 119);
    /* The root yaw is a float: 1e-5 relative covers its rounding over 2 s. */
    expect_near_rel(cb_stat_mean(r.skate), want, 1e-4, "mean");
    expect_near_rel(cb_stat_quantile(r.skate, 0.95), want, BIN_TOLERANCE + 1e-4, "p95");
    assert_int_equal(r.skate_by_speed[0]->count, 2 * 119);
    assert_int_equal(r.skate_by_turn[3]->count, 2 * 119);
    fixture_finish(&f);
}

/* The planting clips need half the weight; a foot counts only over a frame that starts and
 * ends planted. */
static void measure_skate_weight_and_both_ends(void **state)
{
    (void)state;
    const float dt = 1.0f / 60.0f;
    fixture f;
    uint32_t slot = start(&f);
    /* Weight 0.49 on walk_f with the left foot down (the right up), 0.51 on run_f at 0.4 with
     * both feet up: nothing. */
    const float light[2] = {0.49f, 0.51f}, t_up[2] = {0.2f, 0.4f};
    for (int k = 0; k < 10; ++k) {
        set_joint(&f, f.ball_l, 0.1, 0.0, 0.5 * k * dt);
        cb_measure_frame fr = frame_of(&f, light, t_up, 0.0, 1.0, 0.0);
        cb_measure_add(f.m, slot, &fr);
    }
    assert_int_equal(cb_measure_query(f.m).planted_samples, 0);
    /* Exactly 0.5: planted. */
    const float half[2] = {0.5f, 0.5f};
    cb_measure_slot_release(f.m, slot);
    slot = cb_measure_slot_take(f.m);
    for (int k = 0; k < 10; ++k) {
        set_joint(&f, f.ball_l, 0.1, 0.0, 0.5 * k * dt);
        cb_measure_frame fr = frame_of(&f, half, t_up, 0.0, 1.0, 0.0);
        cb_measure_add(f.m, slot, &fr);
    }
    assert_int_equal(cb_measure_query(f.m).planted_samples, 9);
    /* Left foot planted, lifted (walk_f at 0.7 plants the right one), planted again: only
     * the last frame gives a sample; none spans the lift. */
    const float one[2] = {1.0f, 0.0f}, t_lift[2] = {0.7f, 0.7f}, t_down[2] = {0.2f, 0.2f};
    const float *times[4] = {t_down, t_lift, t_down, t_down};
    cb_measure_slot_release(f.m, slot);
    slot = cb_measure_slot_take(f.m);
    for (int k = 0; k < 4; ++k) {
        set_joint(&f, f.ball_l, 0.1, 0.0, 0.5 * k * dt);
        cb_measure_frame fr = frame_of(&f, one, times[k], 0.0, 1.0, 0.0);
        cb_measure_add(f.m, slot, &fr);
    }
    assert_int_equal(cb_measure_query(f.m).planted_samples, 10);
    /* A fresh slot has no history: its first frame gives no sample. */
    assert_int_equal(cb_measure_slot_take(f.m) != UINT32_MAX, true);
    assert_int_equal(cb_measure_slot_take(f.m), UINT32_MAX);
    fixture_finish(&f);
}

/* Every joint on p(k) = a k^2 (world, a in metres): the second difference is 2a, i.e. 200a cm,
 * at every joint of every frame from the third on. */
static void measure_pops_of_a_parabola(void **state)
{
    (void)state;
    fixture f;
    uint32_t slot = start(&f);
    const double a = 0.0007;
    const float w[2] = {0, 0}, t[2] = {0, 0};
    for (int k = 0; k < 20; ++k) {
        for (uint32_t j = 0; j < f.joints; ++j) {
            set_joint(&f, j, 0.01 * j, 0.0, a * k * k);
        }
        cb_measure_frame fr = frame_of(&f, w, t, 0.0, 1.0, 0.0);
        cb_measure_add(f.m, slot, &fr);
    }
    cb_measure_result r = cb_measure_query(f.m);
    assert_int_equal(r.pops->count, 18 * f.joints);
    /* Model positions are floats (up to 0.27 m here): 1e-3 relative on 0.14 cm. */
    expect_near_rel(cb_stat_mean(r.pops), 200.0 * a, 1e-3, "mean");
    expect_near_rel(cb_stat_quantile(r.pops, 0.999), 200.0 * a, 1e-3 + BIN_TOLERANCE, "p99.9");
    fixture_finish(&f);
}

static void measure_bands(void **state)
{
    (void)state;
    assert_int_equal(cb_measure_band(cb_measure_speed_edges, 5, 0.0), 0);
    assert_int_equal(cb_measure_band(cb_measure_speed_edges, 5, 0.29), 0);
    assert_int_equal(cb_measure_band(cb_measure_speed_edges, 5, 0.3), 1);
    assert_int_equal(cb_measure_band(cb_measure_speed_edges, 5, 1.79), 3);
    assert_int_equal(cb_measure_band(cb_measure_speed_edges, 5, 9.0), 4);
    assert_int_equal(cb_measure_band(cb_measure_turn_edges, 5, 0.5), 2);
    assert_int_equal(cb_measure_band(cb_measure_turn_edges, 5, 2.0), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measure_stat_closed_forms),
        cmocka_unit_test(measure_feet_from_markers),
        cmocka_unit_test(measure_skate_of_a_sliding_foot),
        cmocka_unit_test(measure_skate_of_a_pivoting_foot),
        cmocka_unit_test(measure_skate_weight_and_both_ends),
        cmocka_unit_test(measure_pops_of_a_parabola),
        cmocka_unit_test(measure_bands),
    };
    return CB_RUN_TESTS(tests);
}
