/* Root motion through the crowd's time stage.
 *
 * A clamped clip moves the character (issue 10): a one-shot clip node (clamp: true) carries its
 * root motion up to its end and then stands, alone or as a state machine's one-shot start that
 * hands over to idle at its end, so the deltas the crowd reports over the whole
 * play add up, composed frame by frame in double precision here, to the clip's own
 * start-to-end delta (cb_clip_root_delta(clip, 0, 1)); before, such a clip moved 0 m.
 *
 * A looping clip under any speed parameter: the time stage blends root motion without the
 * public entry checks (issue 13), so the one check it keeps is tried here: each frame's delta
 * is the public cb_clip_root_delta over the clip times the crowd reports, and a speed so large
 * that a frame spans more than 2^24 cycles (or an infinite one) gives a zero delta, never
 * undefined arithmetic (the sanitizer build runs this), with normal frames after it. */
#include <math.h>

#include "crowdblend/crowdblend.h"
#include "test_util.h"

enum { FRAMES = 150 };

/* The graph: the clamped walk alone, or a machine "start" (the clamped walk) -> "stand" (idle,
 * no root motion) at the walk's end, with no blend time. */
static cb_graph_node add_one_shot(cb_graph_builder *b, bool in_machine, cb_error *err)
{
    cb_graph_clip_desc cd = {.name = "once", .clip = "walk_f", .clamp = true};
    cb_graph_node once = {0};
    CB_CHECK(cb_graph_add_clip(b, &cd, &once, err) == CB_OK, "%s", err->message);
    if (!in_machine) {
        return once;
    }
    cb_graph_clip_desc idle_desc = {.name = "idle", .clip = "idle"};
    cb_graph_node idle = {0};
    CB_CHECK(cb_graph_add_clip(b, &idle_desc, &idle, err) == CB_OK, "%s", err->message);
    cb_graph_state states[2] = {{.name = "start", .node = once}, {.name = "stand", .node = idle}};
    cb_graph_transition t = {
        .from = "start", .to = "stand", .has_exit_time = true, .exit_time = 1.0f};
    cb_graph_state_machine_desc md = {
        .name = "sm", .states = states, .state_count = 2, .transitions = &t, .transition_count = 1};
    cb_graph_node sm = {0};
    CB_CHECK(cb_graph_add_state_machine(b, &md, &sm, err) == CB_OK, "%s", err->message);
    return sm;
}

/* A crowd of one character at the given phase playing the graph the builder holds (built
 * and destroyed here; *graph receives it, to be destroyed after the crowd). */
static cb_crowd *crowd_of_one(const cb_embedded *set, cb_graph_builder *b, float phase,
                              cb_graph **graph)
{
    cb_error err = {0};
    CB_CHECK(cb_graph_build(b, graph, &err) == CB_OK, "%s", err.message);
    cb_graph_builder_destroy(b);
    const cb_graph *graphs[] = {*graph};
    cb_crowd_desc desc = {.skeleton = cb_embedded_skeleton(set),
                          .capacity = 1,
                          .graphs = graphs,
                          .graph_count = 1,
                          .thread_count = 1};
    cb_crowd *crowd = NULL;
    CB_CHECK(cb_crowd_create(&desc, &crowd, &err) == CB_OK, "%s", err.message);
    cb_character ch;
    assert_int_equal(cb_crowd_add(crowd, 0, phase, &ch), CB_OK);
    return crowd;
}

static void one_shot_moves_the_root_once(bool in_machine)
{
    cb_error err = {0};
    cb_embedded *set = NULL;
    CB_CHECK(cb_embedded_create(NULL, &set, &err) == CB_OK, "%s", err.message);
    const cb_clip *clips[64];
    uint32_t n = cb_embedded_clip_count(set);
    assert_true(n <= 64);
    for (uint32_t i = 0; i < n; ++i) {
        clips[i] = cb_embedded_clip(set, i);
    }
    const cb_clip *walk = cb_embedded_find_clip(set, "walk_f");
    assert_non_null(walk);
    cb_graph_builder_desc bd = {
        .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = n};
    cb_graph_builder *b = NULL;
    CB_CHECK(cb_graph_builder_create(&bd, &b, &err) == CB_OK, "%s", err.message);
    add_one_shot(b, in_machine, &err); /* the last node added: the root */
    cb_graph *g = NULL;
    cb_crowd *crowd = crowd_of_one(set, b, 0.0f, &g);

    /* The play lasts the clip's duration; the frames run well past it. */
    const double dt = 1.0 / 60.0, duration = cb_clip_duration(walk);
    assert_true(duration < (FRAMES - 30) * dt);
    double x = 0.0, y = 0.0, z = 0.0, yaw = 0.0, after_end = 0.0;
    for (int f = 0; f < FRAMES; ++f) {
        assert_int_equal(cb_crowd_update(crowd, (float)dt), CB_OK);
        const cb_root_delta *d = cb_crowd_root_motion(crowd, 0);
        /* Each delta is in the character's frame at the start of the frame (clip.h). */
        double c = cos(yaw), s = sin(yaw);
        double dx = d->translation[0], dz = d->translation[2];
        x += c * dx + s * dz;
        y += d->translation[1];
        z += -s * dx + c * dz;
        yaw += d->yaw;
        if ((f + 1) * dt > duration + dt) {
            after_end += fabs(dx) + fabs(dz) + fabs((double)d->yaw);
        }
    }
    cb_root_delta whole;
    assert_int_equal(cb_clip_root_delta(walk, 0.0f, 1.0f, &whole), CB_OK);
    double dist = hypot(whole.translation[0], whole.translation[2]);
    cb_test_note("walk_f played once (%.3f s)%s: the crowd moved (%.4f, %.4f) m, the clip's delta "
                 "is (%.4f, %.4f) m",
                 duration, in_machine ? " in a state machine" : "", x, z,
                 (double)whole.translation[0], (double)whole.translation[2]);
    CB_CHECK(dist > 0.3, "walk_f should move: %.3f m", dist);
    CB_CHECK(fabs(x - whole.translation[0]) < 2e-3 && fabs(z - whole.translation[2]) < 2e-3 &&
                 fabs(y - whole.translation[1]) < 2e-3,
             "moved (%.5f, %.5f, %.5f), the clip says (%.5f, %.5f, %.5f)", x, y, z,
             (double)whole.translation[0], (double)whole.translation[1],
             (double)whole.translation[2]);
    CB_CHECK(fabs(yaw - whole.yaw) < 1e-3, "turned %.5f, the clip says %.5f", yaw,
             (double)whole.yaw);
    CB_CHECK(after_end == 0.0, "it kept moving after its end: %g", after_end);

    cb_crowd_destroy(crowd);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
    cb_embedded_destroy(set);
}

static void clamped_clip_moves_the_root_once(void **state)
{
    (void)state;
    one_shot_moves_the_root_once(false);
}

static void one_shot_state_moves_the_root_once(void **state)
{
    (void)state;
    one_shot_moves_the_root_once(true);
}

/* Walks walk_f looping at the rate in the parameter "rate", one frame per rate. */
static void looping_clip_delta_under_any_speed(void **state)
{
    (void)state;
    cb_error err = {0};
    cb_embedded *set = NULL;
    CB_CHECK(cb_embedded_create(NULL, &set, &err) == CB_OK, "%s", err.message);
    const cb_clip *walk = cb_embedded_find_clip(set, "walk_f");
    assert_non_null(walk);
    cb_graph_builder_desc bd = {
        .skeleton = cb_embedded_skeleton(set), .clips = &walk, .clip_count = 1};
    cb_graph_builder *b = NULL;
    CB_CHECK(cb_graph_builder_create(&bd, &b, &err) == CB_OK, "%s", err.message);
    CB_CHECK(cb_graph_add_param(b, "rate", CB_PARAM_FLOAT, 1.0f, &err) == CB_OK, "%s", err.message);
    cb_graph_clip_desc cd = {.name = "walk", .clip = "walk_f", .speed_param = "rate"};
    cb_graph_node node = {0};
    CB_CHECK(cb_graph_add_clip(b, &cd, &node, &err) == CB_OK, "%s", err.message);
    cb_graph *g = NULL;
    cb_crowd *crowd = crowd_of_one(set, b, 0.25f, &g);
    float *rate = cb_crowd_param_column(crowd, 0, 0);
    assert_non_null(rate);

    const float dt = 1.0f / 60.0f;
    const float rates[] = {1.0f, 0.5f, -1.0f, 2.0f, 1e30f, 1.0f, INFINITY, NAN, 1.0f, 3e38f, 1.0f};
    const double cycles_per_s = 1.0 / cb_clip_duration(walk);
    for (size_t f = 0; f < sizeof rates / sizeof rates[0]; ++f) {
        float t0 = cb_crowd_clip_times(crowd, 0, 0)[0];
        rate[0] = rates[f];
        assert_int_equal(cb_crowd_update(crowd, dt), CB_OK);
        const cb_root_delta *d = cb_crowd_root_motion(crowd, 0);
        /* A non-finite speed parameter plays the clip at rate 0 (docs/graph.md, speed_param). */
        float played = isfinite(rates[f]) ? rates[f] : 0.0f;
        double span = dt * (double)played * cycles_per_s;
        if (!(fabs(span) <= 16777216.0)) {
            CB_CHECK(d->translation[0] == 0.0f && d->translation[1] == 0.0f &&
                         d->translation[2] == 0.0f && d->yaw == 0.0f,
                     "rate %g: a frame of %g cycles moved the root (%g, %g, %g)", (double)rates[f],
                     span, (double)d->translation[0], (double)d->translation[1],
                     (double)d->translation[2]);
            continue;
        }
        /* The public function over the same interval: the clip's time before the frame and the
         * interval's length at this rate (the crowd wraps its reported time into [0, 1)). */
        cb_root_delta want;
        assert_int_equal(cb_clip_root_delta(walk, t0, (float)(t0 + span), &want), CB_OK);
        for (int k = 0; k < 3; ++k) {
            CB_CHECK(fabs((double)d->translation[k] - want.translation[k]) < 1e-6,
                     "rate %g: delta %d is %.9g, the clip says %.9g", (double)rates[f], k,
                     (double)d->translation[k], (double)want.translation[k]);
        }
        CB_CHECK(fabs((double)d->yaw - want.yaw) < 1e-6, "rate %g: yaw %.9g, the clip says %.9g",
                 (double)rates[f], (double)d->yaw, (double)want.yaw);
        CB_CHECK(played == 0.0f || hypot(want.translation[0], want.translation[2]) > 1e-3,
                 "rate %g: the walk should move in a frame", (double)rates[f]);
    }
    cb_crowd_destroy(crowd);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clamped_clip_moves_the_root_once),
        cmocka_unit_test(one_shot_state_moves_the_root_once),
        cmocka_unit_test(looping_clip_delta_under_any_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
