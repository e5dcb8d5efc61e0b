/* The example graphs (examples/graphs/): each loads from its file on the embedded data set and
 * does what docs/graph.md says it does, on a scripted walk: the state machines go where the
 * velocity says, the feet plant (events), the head looks at its target, the direct blend's
 * weights are its parameters normalized, and the output is the same on 1 and 2 threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"
#include "test_util.h"

static cb_embedded *set;
static const cb_clip *clips[32];
static uint32_t clip_count;

static int setup_set(void **state)
{
    (void)state;
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK) {
        return -1;
    }
    clip_count = (uint32_t)cb_embedded_clip_count(set);
    for (uint32_t k = 0; k < clip_count; ++k) {
        clips[k] = cb_embedded_clip(set, k);
    }
    return 0;
}

static int teardown_set(void **state)
{
    (void)state;
    cb_embedded_destroy(set);
    return 0;
}

static cb_graph *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", CB_EXAMPLES_DIR, name);
    cb_graph_json_desc d = {
        .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = clip_count};
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json_file(path, &d, &g, &err) == CB_OK, "%s: %s", path, err.message);
    return g;
}

static cb_crowd *crowd_of(const cb_graph *g, uint32_t n, uint32_t threads)
{
    const cb_graph *gs[1] = {g};
    cb_crowd_desc d = {.skeleton = cb_embedded_skeleton(set),
                       .capacity = n,
                       .graphs = gs,
                       .graph_count = 1,
                       .thread_count = threads,
                       .keep_weights = true,
                       .events = true};
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "crowd: %s", err.message);
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, 0.1f * (float)i, &ch), CB_OK);
    }
    return c;
}

static float *column(cb_crowd *c, const char *name)
{
    uint32_t p = 0;
    CB_CHECK(cb_crowd_find_param(c, 0, name, &p) == CB_OK, "no parameter %s", name);
    return cb_crowd_param_column(c, 0, p);
}

static uint32_t machine(const cb_graph *g, const char *name)
{
    uint32_t m = 0;
    CB_CHECK(cb_graph_find_state_machine(g, name, &m) == CB_OK, "no machine %s", name);
    return m;
}

/* The scripted walk: a velocity (right, forward) per second of the script. */
typedef struct leg {
    float seconds, right, forward;
    const char *top, *direction; /* the states expected by the leg's end (NULL: any) */
} leg;

static const leg script[] = {
    {1.0f, 0.0f, 0.0f, "idle", NULL},
    {2.0f, 0.0f, 1.4f, "moving", "forward"},
    {2.0f, 0.0f, 3.5f, "moving", "forward"},
    /* 69 degrees off forward: past the forward quadrant's 45 + 2 x 10 degrees of hysteresis. */
    {2.0f, 1.3f, 0.5f, "moving", "forward_right"},
    {2.0f, -1.3f, 0.5f, "moving", "forward_left"},
    {2.0f, 0.0f, -1.4f, "moving", "backward"},
    {2.0f, 1.3f, -0.5f, "moving", "backward_right"},
    {2.0f, -1.3f, -0.5f, "moving", "backward_left"},
    {2.0f, 0.0f, 0.0f, "idle", NULL},
};

static bool finite_matrices(const cb_crowd *c, uint32_t n)
{
    size_t floats = cb_crowd_joint_count(c) * 16;
    for (uint32_t i = 0; i < n; ++i) {
        const float *m = cb_crowd_matrices(c, 0, i);
        for (size_t k = 0; k < floats; ++k) {
            if (!isfinite(m[k])) {
                return false;
            }
        }
    }
    return true;
}

/* Runs the script on a locomotion example; checks the machines' states at each leg's end, that
 * the start state played on the way out of idle, and that feet planted while moving. */
static void run_script(const char *name, bool look_at)
{
    cb_graph *g = load(name);
    enum { N = 4 };
    cb_crowd *c = crowd_of(g, N, 1), *c2 = crowd_of(g, N, 2);
    uint32_t top = machine(g, "locomotion"), dir = machine(g, "direction");
    const float dt = 1.0f / 60.0f;
    uint32_t plant_l = cb_name_hash("foot_plant_l"), plant_r = cb_name_hash("foot_plant_r");
    size_t plants = 0, moving_frames = 0, started = 0;
    double worst_look = 0.0;
    uint32_t head = 0;
    if (look_at) {
        assert_int_equal(cb_skeleton_find_joint(cb_embedded_skeleton(set), "head", &head), CB_OK);
    }
    for (size_t l = 0; l < sizeof script / sizeof script[0]; ++l) {
        int frames = (int)(script[l].seconds / dt);
        for (int f = 0; f < frames; ++f) {
            cb_crowd *both[2] = {c, c2};
            for (int k = 0; k < 2; ++k) {
                for (uint32_t i = 0; i < N; ++i) {
                    column(both[k], "vx")[i] = script[l].right;
                    column(both[k], "vy")[i] = script[l].forward;
                    if (look_at) {
                        /* Something 3 m away, 40 degrees to the left, at eye height. */
                        column(both[k], "look")[i] = 1.0f;
                        column(both[k], "look_x")[i] = 3.0f * sinf(0.7f);
                        column(both[k], "look_y")[i] = 1.6f;
                        column(both[k], "look_z")[i] = 3.0f * cosf(0.7f);
                        column(both[k], "wave")[i] = l % 2 ? 1.0f : 0.0f;
                    }
                }
                assert_int_equal(cb_crowd_update(both[k], dt), CB_OK);
            }
            CB_CHECK(cb_crowd_output_hash(c) == cb_crowd_output_hash(c2),
                     "%s: 1 and 2 threads differ in leg %zu frame %d", name, l, f);
            started += cb_crowd_state(c, 0, top, 0) == 1;
            bool moving = script[l].forward != 0.0f || script[l].right != 0.0f;
            moving_frames += moving;
            uint32_t n = 0;
            const cb_graph_event *ev = cb_crowd_events(c, 0, 0, &n);
            for (uint32_t k = 0; k < n; ++k) {
                plants += moving && (ev[k].marker_hash == plant_l || ev[k].marker_hash == plant_r);
            }
            if (look_at && f == frames - 1) {
                /* The head's forward axis against the direction to the target (within the
                 * 75-degree limit, so it reaches it up to the IK's accuracy). */
                const float *m = cb_crowd_matrices(c, 0, 0) + 16 * head;
                double to[3] = {3.0 * sin(0.7) - m[12], 1.6 - m[13], 3.0 * cos(0.7) - m[14]};
                double fwd[3] = {m[8], m[9], m[10]}, d = 0, nf = 0, nt = 0;
                for (int k = 0; k < 3; ++k) {
                    d += fwd[k] * to[k], nf += fwd[k] * fwd[k], nt += to[k] * to[k];
                }
                /* The aim is taken from a point 10 cm ahead of the head: allow the parallax. */
                double angle = acos(fmin(1.0, d / sqrt(nf * nt)));
                worst_look = angle > worst_look ? angle : worst_look;
            }
        }
        const char *got_top = cb_graph_state_name(g, top, cb_crowd_state(c, 0, top, 0));
        CB_CHECK(strcmp(got_top, script[l].top) == 0, "%s: leg %zu ends in %s, not %s", name, l,
                 got_top, script[l].top);
        if (script[l].direction != NULL) {
            const char *got = cb_graph_state_name(g, dir, cb_crowd_state(c, 0, dir, 0));
            CB_CHECK(strcmp(got, script[l].direction) == 0, "%s: leg %zu ends in %s, not %s", name,
                     l, got, script[l].direction);
        }
        CB_CHECK(finite_matrices(c, N), "%s: non-finite matrices in leg %zu", name, l);
    }
    /* Walking plants a foot about twice a second per gait cycle. */
    cb_test_note("%s: %zu frames in the start state, %zu foot plants in %zu moving frames", name,
                 started, plants, moving_frames);
    assert_true(started > 10);
    assert_true(plants > moving_frames / 60);
    if (look_at) {
        cb_test_note("%s: head forward vs target direction, worst %.4f rad", name, worst_look);
        assert_true(worst_look < 0.06); /* 10 cm of parallax at 3 m: about 0.03 rad */
    }
    cb_crowd_destroy(c);
    cb_crowd_destroy(c2);
    cb_graph_destroy(g);
}

static void graph_example_locomotion_follows_the_velocity(void **state)
{
    (void)state;
    run_script("locomotion_8dir", false);
}

static void graph_example_upper_body_and_look_at(void **state)
{
    (void)state;
    run_script("locomotion_upper_body_look_at", true);
}

/* The direct example: each clip's weight is its parameter over their sum. */
static void graph_example_direct_blend_weights(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_graph *g = load("direct_blend");
    enum { N = 16 };
    cb_crowd *c = crowd_of(g, N, 1);
    static const char *const ws[5] = {"w_idle", "w_walk", "w_run", "w_left", "w_right"};
    static const char *const nodes[5] = {"idle", "walk", "run", "left", "right"};
    cb_err_track we = cb_err_track_make("direct weights");
    for (int f = 0; f < 30; ++f) {
        float v[5][N];
        for (int k = 0; k < 5; ++k) {
            for (uint32_t i = 0; i < N; ++i) {
                v[k][i] = cb_prng_range(&r, 0.0f, 1.0f);
                column(c, ws[k])[i] = v[k][i];
            }
        }
        cb_crowd_update(c, 1.0f / 60.0f);
        size_t stride = 0;
        const float *kept = cb_crowd_weights(c, 0, &stride);
        for (uint32_t i = 0; i < N; ++i) {
            double sum = 0.0;
            for (int k = 0; k < 5; ++k) {
                sum += v[k][i];
            }
            for (int k = 0; k < 5; ++k) {
                uint32_t node = 0, clip = UINT32_MAX;
                assert_int_equal(cb_graph_find_node(g, nodes[k], &node), CB_OK);
                for (uint32_t s = 0; s < cb_graph_clip_count(g); ++s) {
                    clip = cb_graph_clip_node(g, s) == node ? s : clip;
                }
                cb_err_track_add(&we, kept[clip * stride + i], v[k][i] / sum, i);
            }
        }
    }
    cb_err_track_check(&we, 3e-7); /* a float division and product */
    CB_CHECK(finite_matrices(c, N), "non-finite matrices");
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(graph_example_locomotion_follows_the_velocity),
        cmocka_unit_test(graph_example_upper_body_and_look_at),
        cmocka_unit_test(graph_example_direct_blend_weights),
    };
    return setup_set(NULL) == 0 ? (CB_RUN_TESTS(tests) | teardown_set(NULL)) : 1;
}
