/* Playback-rate warping of a blend space (graph.h cb_graph_rate_warp, docs/graph.md): the
 * crowd's root speed against the closed form computed here in double from the clips' own root
 * motion and the weights the crowd kept; the rate from the clips' time advance; a warp bounded
 * to [1, 1] gives the unwarped bits; JSON errors; continuity across the bounds; nesting in a
 * state machine; bit-identity over threads and batch sizes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"

static const float DT = 1.0f / 60.0f;

/* Idle, walk_f and run_f on a 1D blend space over "x"; the warp (WARP, without braces) on it
 * when given. */
#define GRAPH_HEAD                                                                                 \
    "{\"name\": \"warp\", \"parameters\": [{\"name\": \"x\"}, {\"name\": \"cmd\"}, "               \
    "{\"name\": \"flag\", \"type\": \"bool\"}, {\"name\": \"mode\", \"type\": \"int\"}],"
#define CLIPS                                                                                      \
    "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\"},"                                          \
    "\"walk\": {\"type\": \"clip\", \"clip\": \"walk_f\"},"                                        \
    "\"run\": {\"type\": \"clip\", \"clip\": \"run_f\"}"
#define LOCO(extra)                                                                                \
    "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\", " extra   \
    "\"children\": ["                                                                              \
    "{\"node\": \"idle\", \"position\": 0}, {\"node\": \"walk\", \"position\": 1.4},"              \
    "{\"node\": \"run\", \"position\": 3.5}]}"

static const char *const WARPED = GRAPH_HEAD
    "\"root\": \"loco\", \"nodes\": {" LOCO("\"rate_warp\": {\"speed_param\": \"cmd\"},") "," CLIPS
                                                                                          "}}";
static const char *const PLAIN =
    GRAPH_HEAD "\"root\": \"loco\", \"nodes\": {" LOCO("") "," CLIPS "}}";
static const char *const UNIT_BOUNDS = GRAPH_HEAD "\"root\": \"loco\", \"nodes\": {" LOCO(
    "\"rate_warp\": {\"speed_param\": \"cmd\", \"min_rate\": 1, \"max_rate\": 1},") "," CLIPS "}}";
/* Idle in a sync group of its own (as examples/graphs/locomotion_follow.json has it). */
static const char *const IDLE_OWN = GRAPH_HEAD "\"root\": \"loco\", \"nodes\": {" LOCO(
    "\"rate_warp\": {\"speed_param\": \"cmd\"},") ","
                                                  "\"idle\": {\"type\": \"clip\", \"clip\": "
                                                  "\"idle\", \"sync_group\": \"rest\"},"
                                                  "\"walk\": {\"type\": \"clip\", \"clip\": "
                                                  "\"walk_f\"},"
                                                  "\"run\": {\"type\": \"clip\", \"clip\": "
                                                  "\"run_f\"}}}";
/* The warped blend space as a state of a machine at speed 2 (which the warp replaces), beside
 * an idle state. */
static const char *const NESTED =
    GRAPH_HEAD "\"root\": \"sm\", \"nodes\": {"
               "\"sm\": {\"type\": \"state_machine\", \"initial\": \"move\", \"states\": ["
               "{\"name\": \"move\", \"node\": \"loco\", \"speed\": 2},"
               "{\"name\": \"stand\", \"node\": \"idle2\"}], \"transitions\": ["
               "{\"from\": \"move\", \"to\": \"stand\", \"conditions\": [{\"param\": \"flag\", "
               "\"op\": \"true\"}], \"duration\": 0.2}]},"
               "\"idle2\": {\"type\": \"clip\", \"clip\": \"idle\"}," LOCO(
                   "\"rate_warp\": {\"speed_param\": \"cmd\"},") "," CLIPS "}}";

typedef struct fixture {
    cb_embedded *set;
    cb_graph *graph;
    cb_crowd *crowd;
    uint32_t x, cmd;
    const cb_clip *clips[3]; /* the warped blend's: idle, walk, run */
} fixture;

static cb_result load(const cb_embedded *set, const char *json, cb_graph **out, cb_error *err)
{
    const cb_clip *clips[32];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(set, clips, 32);
    return cb_graph_load_json(json, strlen(json), &jd, out, err);
}

static void fixture_init(fixture *f, const char *json, uint32_t n, uint32_t threads, uint32_t batch)
{
    memset(f, 0, sizeof *f);
    cb_error err = {0};
    assert_int_equal(cb_embedded_create(NULL, &f->set, NULL), CB_OK);
    CB_CHECK(load(f->set, json, &f->graph, &err) == CB_OK, "%s", err.message);
    const cb_graph *graphs[1] = {f->graph};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(f->set),
                        .capacity = n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = threads,
                        .batch_size = batch,
                        .keep_weights = true};
    CB_CHECK(cb_crowd_create(&cd, &f->crowd, &err) == CB_OK, "%s", err.message);
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(f->crowd, 0, 0.0f, &ch), CB_OK);
    }
    assert_int_equal(cb_crowd_find_param(f->crowd, 0, "x", &f->x), CB_OK);
    assert_int_equal(cb_crowd_find_param(f->crowd, 0, "cmd", &f->cmd), CB_OK);
    const char *names[3] = {"idle", "walk_f", "run_f"};
    for (int k = 0; k < 3; ++k) {
        f->clips[k] = cb_embedded_find_clip(f->set, names[k]);
    }
}

static void fixture_finish(fixture *f)
{
    cb_crowd_destroy(f->crowd);
    cb_graph_destroy(f->graph);
    cb_embedded_destroy(f->set);
}

/* The warped blend's clip slots (node order of the JSON: idle, walk, run follow the graph's
 * own clip order, found by the clip each slot plays). */
static void blend_slots(const fixture *f, uint32_t slot[3])
{
    for (int k = 0; k < 3; ++k) {
        slot[k] = UINT32_MAX;
        for (uint32_t s = 0; s < cb_graph_clip_count(f->graph); ++s) {
            const char *node = cb_graph_node_name(f->graph, cb_graph_clip_node(f->graph, s));
            if (cb_graph_clip(f->graph, s) == f->clips[k] && strcmp(node, "idle2") != 0) {
                slot[k] = s;
            }
        }
        assert_true(slot[k] != UINT32_MAX);
    }
}

/* The closed form in double: the blend's root speed at rate 1 with weights w (summing to 1).
 * The clips of one group move one cycle per weight-averaged duration; with idle_own, idle
 * plays in a group of its own (no root motion: it only holds its weight). The crowd blends
 * root displacements as vectors, so the speed is the length of the weighted displacement. */
static double speed_at_rate1(const fixture *f, const double w[3], bool idle_own)
{
    double dx = 0.0, dz = 0.0, dur = 0.0, wsum = 0.0;
    for (int k = idle_own ? 1 : 0; k < 3; ++k) {
        cb_clip_root_motion rm = cb_clip_query_root_motion(f->clips[k]);
        dx += w[k] * rm.displacement[0];
        dz += w[k] * rm.displacement[2];
        dur += w[k] * cb_clip_duration(f->clips[k]);
        wsum += w[k];
    }
    return dur > 0.0 ? hypot(dx, dz) / dur * wsum : 0.0;
}

static double warped_rate(double cmd, double v, double lo, double hi)
{
    return v > 0.0 ? fmin(fmax(cmd / v, lo), hi) : 1.0;
}

static void kept_weights(const fixture *f, const uint32_t slot[3], uint32_t i, double w[3])
{
    size_t stride;
    const float *kw = cb_crowd_weights(f->crowd, 0, &stride);
    for (int k = 0; k < 3; ++k) {
        w[k] = kw[slot[k] * stride + i];
    }
}

/* Blend positions x and commands: walk alone, idle + walk, walk + run; inside and outside the
 * bounds [0.5, 1.35]; idle alone (no root speed at rate 1: the rate is 1). */
static const float XS[] = {1.4f, 1.4f, 1.4f, 1.4f, 0.7f, 0.7f, 2.4f, 2.4f, 2.4f, 0.35f, 0.0f};
static const float CMDS[] = {1.0f, 1.7f, 0.3f, 2.5f, 0.5f, 1.2f, 2.0f, 3.0f, 0.9f, 0.6f, 1.0f};
enum { NCASE = sizeof XS / sizeof XS[0] };

static void root_speed_is_the_closed_form(const char *json, bool nested, bool idle_own)
{
    fixture f;
    fixture_init(&f, json, NCASE, 1, 0);
    float *x = cb_crowd_param_column(f.crowd, 0, f.x),
          *cmd = cb_crowd_param_column(f.crowd, 0, f.cmd);
    for (uint32_t i = 0; i < NCASE; ++i) {
        x[i] = XS[i], cmd[i] = CMDS[i];
    }
    uint32_t slot[3];
    blend_slots(&f, slot);
    const int frames = 360;
    double travelled[NCASE] = {0}, rate_err[NCASE] = {0};
    float prev_t[NCASE];
    for (int k = 0; k < frames; ++k) {
        assert_int_equal(cb_crowd_update(f.crowd, DT), CB_OK);
        const cb_root_delta *rm = cb_crowd_root_motion(f.crowd, 0);
        for (uint32_t i = 0; i < NCASE; ++i) {
            travelled[i] += hypot(rm[i].translation[0], rm[i].translation[2]);
            double w[3];
            kept_weights(&f, slot, i, w);
            double v = speed_at_rate1(&f, w, idle_own), r = warped_rate(CMDS[i], v, 0.5, 1.35);
            /* The normalized advance of the heaviest clip's group: dt r sum(w) / sum(w T) over
             * the group (idle alone when it keeps a group of its own). */
            int h = w[0] >= w[1] && w[0] >= w[2] ? 0 : w[1] >= w[2] ? 1 : 2;
            int lo = idle_own && h > 0 ? 1 : 0, hi = idle_own && h == 0 ? 1 : 3;
            double dur = 0.0, wsum = 0.0;
            for (int c = lo; c < hi; ++c) {
                dur += w[c] * cb_clip_duration(f.clips[c]), wsum += w[c];
            }
            float t = cb_crowd_clip_times(f.crowd, 0, slot[h])[i];
            double du = t - (k > 0 ? prev_t[i] : 0.0);
            du -= floor(du);
            if (k > 0) { /* the first frame starts the group */
                double seen = du * dur / (wsum * DT);
                rate_err[i] = fmax(rate_err[i], fabs(seen - r) / r);
            }
            prev_t[i] = t;
        }
    }
    for (uint32_t i = 0; i < NCASE; ++i) {
        double w[3];
        kept_weights(&f, slot, i, w);
        double v = speed_at_rate1(&f, w, idle_own), r = warped_rate(CMDS[i], v, 0.5, 1.35);
        double speed = travelled[i] / (frames * (double)DT);
        bool inside = CMDS[i] >= 0.5 * v && CMDS[i] <= 1.35 * v;
        /* The procedural clips' roots move at a constant speed: the only error is float
         * rounding of times and deltas over the run. */
        CB_CHECK(fabs(speed - r * v) < 1e-4 * (1.0 + r * v),
                 "%s x %g cmd %g: root speed %g, closed form %g (rate %g, v %g)",
                 nested ? "nested" : "top", (double)XS[i], (double)CMDS[i], speed, r * v, r, v);
        if (inside) {
            CB_CHECK(fabs(speed - CMDS[i]) < 1e-4 * (1.0 + CMDS[i]), "x %g: %g, commanded %g",
                     (double)XS[i], speed, (double)CMDS[i]);
        }
        CB_CHECK(rate_err[i] < 5e-5, /* a float time advances by ~0.006 a frame: 1e-5 of it */
                 "x %g cmd %g: rate off its closed form by %g (relative)", (double)XS[i],
                 (double)CMDS[i], rate_err[i]);
    }
    fixture_finish(&f);
}

static void warp_root_speed_matches_the_command(void **state)
{
    (void)state;
    root_speed_is_the_closed_form(WARPED, false, false);
}

/* Idle in a group of its own: the walk keeps its own cycle, idle only holds weight. */
static void warp_with_idle_in_its_own_group(void **state)
{
    (void)state;
    root_speed_is_the_closed_form(IDLE_OWN, false, true);
}

/* Inside a state machine whose state plays at speed 2: the warp's rate replaces it. */
static void warp_nested_in_a_state_machine(void **state)
{
    (void)state;
    root_speed_is_the_closed_form(NESTED, true, false);
}

static uint64_t run_hash(const char *json, uint32_t n, uint32_t threads, uint32_t batch, int frames)
{
    fixture f;
    fixture_init(&f, json, n, threads, batch);
    float *x = cb_crowd_param_column(f.crowd, 0, f.x),
          *cmd = cb_crowd_param_column(f.crowd, 0, f.cmd);
    for (int k = 0; k < frames; ++k) {
        for (uint32_t i = 0; i < n; ++i) { /* speeds crossing the bounds, different per agent */
            double u = (double)((i * 37u + (uint32_t)k * 5u) % 101u) / 100.0;
            x[i] = (float)(3.5 * u);
            cmd[i] = (float)(0.1 + 3.0 * fmod(u * 1.7, 1.0));
        }
        assert_int_equal(cb_crowd_update(f.crowd, DT), CB_OK);
    }
    uint64_t h = cb_crowd_output_hash(f.crowd);
    fixture_finish(&f);
    return h;
}

/* A warp bounded to [1, 1] plays every clip at rate 1: the bits of the graph without the key. */
static void warp_at_unit_bounds_is_the_plain_graph(void **state)
{
    (void)state;
    /* 200 characters; 101 in slow builds (CB_TEST_SCALE below 1), still every one of
     * run_hash's 101 speed and command pairs on every frame. */
    const uint32_t n = cb_test_scale() < 1.0 ? 101 : 200;
    const uint64_t plain = run_hash(PLAIN, n, 1, 0, 90);
    assert_true(plain == run_hash(UNIT_BOUNDS, n, 1, 0, 90));
    /* and the warp does change the output where it can */
    assert_true(plain != run_hash(WARPED, n, 1, 0, 90));
}

static void warp_bits_do_not_depend_on_threads_or_batches(void **state)
{
    (void)state;
    /* 1,000 characters; 205 in slow builds (CB_TEST_SCALE below 1): every one of run_hash's
     * 101 speed and command pairs on every frame, and a partial batch of 7, 64 and W. */
    const uint32_t n = cb_test_scale() < 1.0 ? 205 : 1000;
    uint64_t ref = run_hash(WARPED, n, 1, 0, 40);
    const uint32_t threads[] = {2, 4, 3}, batches[] = {0, 7, 64};
    for (int k = 0; k < 3; ++k) {
        CB_CHECK(run_hash(WARPED, n, threads[k], batches[k], 40) == ref,
                 "threads %u batch %u: other bits", threads[k], batches[k]);
    }
    /* the same on every kernel set (scripts/test.sh runs this test once per set) */
    cb_test_note("rate warp determinism: %u characters, hash %016llx", n, (unsigned long long)ref);
}

/* The root speed and the joints stay continuous while the command ramps across both bounds:
 * the root speed moves no more per frame than the clamped closed form does, and no joint's
 * second difference exceeds what the walk shows by itself at the highest rate. */
static void warp_has_no_pop_across_the_bounds(void **state)
{
    (void)state;
    fixture ramp, fast;
    fixture_init(&ramp, WARPED, 1, 1, 0);
    fixture_init(&fast, WARPED, 1, 1, 0);
    cb_crowd_param_column(ramp.crowd, 0, ramp.x)[0] = 1.4f;
    cb_crowd_param_column(fast.crowd, 0, fast.x)[0] = 1.4f;
    cb_crowd_param_column(fast.crowd, 0, fast.cmd)[0] = 1.35f * 1.4f;
    float *cmd = cb_crowd_param_column(ramp.crowd, 0, ramp.cmd);
    uint32_t joints = cb_crowd_joint_count(ramp.crowd);
    const int frames = 600;
    double prev_speed = -1.0, max_jump = 0.0, max_step = 0.0, pop[2] = {0};
    static float hist[2][3][64 * 3];
    assert_true(joints <= 64);
    double v = speed_at_rate1(&ramp, (double[3]){0, 1, 0}, false);
    for (int k = 0; k < frames; ++k) {
        double c = 0.2 + 2.4 * k / (double)frames; /* 0.2 .. 2.6 m/s: below, inside, above */
        double c_prev = 0.2 + 2.4 * (k - 1) / (double)frames;
        cmd[0] = (float)c;
        fixture *fs[2] = {&ramp, &fast};
        for (int m = 0; m < 2; ++m) {
            assert_int_equal(cb_crowd_update(fs[m]->crowd, DT), CB_OK);
            const float *mat = cb_crowd_matrices(fs[m]->crowd, 0, 0);
            float *now = hist[m][k % 3];
            for (uint32_t j = 0; j < joints; ++j) {
                memcpy(&now[3 * j], &mat[16 * j + 12], 3 * sizeof(float));
            }
            for (uint32_t j = 0; k >= 2 && j < 3 * joints; ++j) {
                double d2 = now[j] - 2.0 * hist[m][(k + 2) % 3][j] + hist[m][(k + 1) % 3][j];
                pop[m] = fmax(pop[m], fabs(d2));
            }
        }
        const cb_root_delta *rm = cb_crowd_root_motion(ramp.crowd, 0);
        double speed = hypot(rm[0].translation[0], rm[0].translation[2]) / DT;
        if (prev_speed >= 0.0) {
            max_jump = fmax(max_jump, fabs(speed - prev_speed));
            max_step = fmax(max_step, fabs(warped_rate(c, v, 0.5, 1.35) * v -
                                           warped_rate(c_prev, v, 0.5, 1.35) * v));
        }
        prev_speed = speed;
    }
    CB_CHECK(max_jump <= max_step + 1e-3, "root speed jumps %g m/s in a frame; the closed form %g",
             max_jump, max_step);
    CB_CHECK(pop[0] <= pop[1] * 1.05 + 1e-5,
             "ramp: joint second difference %g m, the walk at "
             "max rate %g m",
             pop[0], pop[1]);
    fixture_finish(&ramp);
    fixture_finish(&fast);
}

typedef struct bad_case {
    const char *warp;  /* the blend space's extra keys */
    const char *nodes; /* extra nodes */
    cb_result code;
    const char *message; /* a part of the message */
} bad_case;

static void warp_json_errors(void **state)
{
    (void)state;
    const bad_case cases[] = {
        {"\"rate_warp\": \"cmd\",", "", CB_ERR_PARSE, "must be an object"},
        {"\"rate_warp\": {\"param\": \"cmd\"},", "", CB_ERR_PARSE, "param"},
        {"\"rate_warp\": {},", "", CB_ERR_PARSE, "missing \"speed_param\""},
        {"\"rate_warp\": {\"speed_param\": 3},", "", CB_ERR_PARSE, "must be a string"},
        {"\"rate_warp\": {\"speed_param\": \"nope\"},", "", CB_ERR_NOT_FOUND, "nope"},
        {"\"rate_warp\": {\"speed_param\": \"flag\"},", "", CB_ERR_MISMATCH, "must be a float"},
        {"\"rate_warp\": {\"speed_param\": \"mode\"},", "", CB_ERR_MISMATCH, "must be a float"},
        {"\"rate_warp\": {\"speed_param\": \"cmd\", \"min_rate\": 1.2},", "",
         CB_ERR_INVALID_ARGUMENT, "0 < min_rate <= 1 <= max_rate <= 4"},
        {"\"rate_warp\": {\"speed_param\": \"cmd\", \"min_rate\": -0.5},", "",
         CB_ERR_INVALID_ARGUMENT, "min_rate -0.5"},
        {"\"rate_warp\": {\"speed_param\": \"cmd\", \"max_rate\": 0.9},", "",
         CB_ERR_INVALID_ARGUMENT, "max_rate 0.9"},
        {"\"rate_warp\": {\"speed_param\": \"cmd\", \"max_rate\": 5},", "", CB_ERR_INVALID_ARGUMENT,
         "max_rate 5"},
        {"\"rate_warp\": {\"speed_param\": \"cmd\", \"min_rate\": \"fast\"},", "", CB_ERR_PARSE,
         "must be a number"},
    };
    cb_embedded *set;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    char json[4096];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        snprintf(json, sizeof json,
                 GRAPH_HEAD "\"root\": \"loco\", \"nodes\": {"
                            "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", "
                            "\"params\": \"x\", %s "
                            "\"children\": [{\"node\": \"idle\", \"position\": 0}, "
                            "{\"node\": \"walk\", \"position\": 1.4}, "
                            "{\"node\": \"run\", \"position\": 3.5}]}, %s" CLIPS "}}",
                 cases[k].warp, cases[k].nodes);
        cb_graph *g = NULL;
        cb_error err = {0};
        cb_result r = load(set, json, &g, &err);
        CB_CHECK(r == cases[k].code && strstr(err.message, cases[k].message) != NULL,
                 "case %zu: %s (%d), want %s (%d) with '%s'", k, err.message, (int)r,
                 cb_result_str(cases[k].code), (int)cases[k].code, cases[k].message);
        assert_null(g);
    }
    /* Children the warp cannot drive. */
    const char *const bad_children[][2] = {
        {"\"walk\": {\"type\": \"clip\", \"clip\": \"walk_f\", \"speed_param\": \"x\"},"
         "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\"}",
         "has a speed_param"},
        {"\"walk\": {\"type\": \"clip\", \"clip\": \"walk_f\", \"sync_group\": \"own\"},"
         "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\", \"sync_group\": \"own\"}",
         "shares a sync group other than the blend space's"},
        {"\"walk\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\", "
         "\"children\": ["
         "{\"node\": \"w\", \"position\": 0}]}, \"w\": {\"type\": \"clip\", \"clip\": \"walk_f\"},"
         "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\"}",
         "is not a clip node"},
        {"\"walk\": {\"type\": \"clip\", \"clip\": \"idle\"},"
         "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\"}",
         "no child's clip has root motion"},
    };
    for (size_t k = 0; k < sizeof bad_children / sizeof bad_children[0]; ++k) {
        snprintf(
            json, sizeof json,
            GRAPH_HEAD
            "\"root\": \"loco\", \"nodes\": {"
            "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\", "
            "\"rate_warp\": {\"speed_param\": \"cmd\"}, "
            "\"children\": [{\"node\": \"idle\", \"position\": 0}, "
            "{\"node\": \"walk\", \"position\": 1.4}]}, %s}}",
            bad_children[k][0]);
        cb_graph *g = NULL;
        cb_error err = {0};
        cb_result r = load(set, json, &g, &err);
        CB_CHECK(r == CB_ERR_INVALID_ARGUMENT && strstr(err.message, bad_children[k][1]) != NULL,
                 "child case %zu: %s (%d), want '%s'", k, err.message, (int)r, bad_children[k][1]);
        assert_null(g);
    }
    cb_embedded_destroy(set);
}

/* tests/data/graphs/locomotion_rate_warp.json (the graph docs/trajectories.md measures): the
 * speed comes from a velocity_blend processor, idle keeps a group of its own; between walk and
 * run the group's weight-averaged duration slowed the root, and the warp makes it the
 * command. */
static void warp_graph_file_moves_at_the_velocity(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof f);
    cb_error err = {0};
    assert_int_equal(cb_embedded_create(NULL, &f.set, NULL), CB_OK);
    const cb_clip *clips[32];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(f.set, clips, 32);
    CB_CHECK(cb_graph_load_json_file(CB_TEST_GRAPH_DIR "/locomotion_rate_warp.json", &jd, &f.graph,
                                     &err) == CB_OK,
             "%s", err.message);
    const cb_graph *graphs[1] = {f.graph};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(f.set),
                        .capacity = 10,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1};
    CB_CHECK(cb_crowd_create(&cd, &f.crowd, &err) == CB_OK, "%s", err.message);
    /* Forward, then diagonal and sideways (+X left): between two walk directions the clips'
     * displacements partly cancel, so the warp must use the length of their weighted sum, not
     * the mean of their speeds (a mean of lengths left the root 7.6 % slow at 22.5 degrees). */
    enum { N = 10 };
    const float speed_cmd[N] = {1.0f, 1.7f, 2.0f, 2.6f, 1.2f, 1.2f, 1.2f, 1.2f, 1.2f, 2.2f};
    const float angle_deg[N] = {0, 0, 0, 0, 22.5f, 45.0f, 67.5f, 90.0f, -45.0f, 22.5f};
    uint32_t px, py;
    assert_int_equal(cb_crowd_find_param(f.crowd, 0, "vx", &px), CB_OK);
    assert_int_equal(cb_crowd_find_param(f.crowd, 0, "vy", &py), CB_OK);
    for (uint32_t i = 0; i < N; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(f.crowd, 0, 0.0f, &ch), CB_OK);
        double a = angle_deg[i] * 3.14159265358979323846 / 180.0;
        cb_crowd_param_column(f.crowd, 0, px)[i] = (float)(speed_cmd[i] * sin(a));
        cb_crowd_param_column(f.crowd, 0, py)[i] = (float)(speed_cmd[i] * cos(a));
    }
    double travelled[N] = {0};
    const int frames = 300;
    for (int k = 0; k < frames; ++k) {
        assert_int_equal(cb_crowd_update(f.crowd, DT), CB_OK);
        const cb_root_delta *rm = cb_crowd_root_motion(f.crowd, 0);
        for (uint32_t i = 0; i < N; ++i) {
            travelled[i] += hypot(rm[i].translation[0], rm[i].translation[2]);
        }
    }
    for (uint32_t i = 0; i < N; ++i) {
        double speed = travelled[i] / (frames * (double)DT);
        CB_CHECK(fabs(speed - speed_cmd[i]) < 1e-3 * (1.0 + speed_cmd[i]),
                 "commanded %g m/s at %g degrees: the root moves %g", (double)speed_cmd[i],
                 (double)angle_deg[i], speed);
    }
    fixture_finish(&f);
}

/* The C desc: defaults filled by the query, and what JSON cannot write (a NaN bound). */
static void warp_query_defaults(void **state)
{
    (void)state;
    cb_embedded *set;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_clip *clips[2] = {cb_embedded_find_clip(set, "idle"),
                               cb_embedded_find_clip(set, "walk_f")};
    cb_graph_node kids[2];
    cb_graph_blend_space_desc d;
    cb_graph_builder *b = cb_test_two_clip_blend(cb_embedded_skeleton(set), clips, kids, &d);
    cb_error err = {0};
    d.rate_warp.min_rate = NAN;
    cb_graph_node node;
    assert_int_equal(cb_graph_add_blend_space(b, &d, &node, &err), CB_ERR_NOT_FINITE);
    assert_non_null(strstr(err.message, "blend space 'loco': rate_warp bounds are not finite"));
    d.rate_warp.min_rate = 0.0f; /* the defaults */
    assert_int_equal(cb_graph_add_blend_space(b, &d, &node, &err), CB_OK);
    cb_graph_builder_destroy(b);
    cb_embedded_destroy(set);

    cb_graph_rate_warp w = cb_graph_query_rate_warp(&(cb_graph_rate_warp){.speed_param = "s"});
    assert_true(w.min_rate == CB_GRAPH_DEFAULT_WARP_MIN_RATE);
    assert_true(w.max_rate == CB_GRAPH_DEFAULT_WARP_MAX_RATE);
    w = cb_graph_query_rate_warp(NULL);
    assert_null(w.speed_param);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(warp_root_speed_matches_the_command),
        cmocka_unit_test(warp_with_idle_in_its_own_group),
        cmocka_unit_test(warp_nested_in_a_state_machine),
        cmocka_unit_test(warp_at_unit_bounds_is_the_plain_graph),
        cmocka_unit_test(warp_bits_do_not_depend_on_threads_or_batches),
        cmocka_unit_test(warp_has_no_pop_across_the_bounds),
        cmocka_unit_test(warp_json_errors),
        cmocka_unit_test(warp_graph_file_moves_at_the_velocity),
        cmocka_unit_test(warp_query_defaults),
    };
    return CB_RUN_TESTS(tests);
}
