/* Playback-rate warping of clips that play in place (graph.h cb_graph_rate_warp.speed_from,
 * docs/graph.md "Playback-rate warping"): the rate read from the clips' time advance against
 * the closed form computed here in double from the velocities the graph states (blend-space
 * positions, 1D and 2D, or declared speeds), with an idle in a group of its own; every JSON and
 * C error of the option; the Fox's example graph (examples/graphs/fox/locomotion_rate_warp.json)
 * on the committed pack. */
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

/* The in-place clip set: rest poses, no root motion, each its own cycle length. */
enum { NCLIP = 5 };
static const char *const CLIP_NAMES[NCLIP] = {"stand", "walk", "run", "walk_l", "walk_b"};
static const float DURATIONS[NCLIP] = {3.0f, 1.1f, 0.7f, 0.9f, 1.3f};

#define HEAD                                                                                       \
    "{\"name\": \"in_place\", \"parameters\": [{\"name\": \"x\"}, {\"name\": \"y\"}, "             \
    "{\"name\": \"cmd\"}], \"root\": \"loco\", \"nodes\": {"
#define CLIP_NODES(stand_extra)                                                                    \
    "\"stand\": {\"type\": \"clip\", \"clip\": \"stand\"" stand_extra "},"                         \
    "\"walk\": {\"type\": \"clip\", \"clip\": \"walk\"},"                                          \
    "\"run\": {\"type\": \"clip\", \"clip\": \"run\"},"                                            \
    "\"walk_l\": {\"type\": \"clip\", \"clip\": \"walk_l\"},"                                      \
    "\"walk_b\": {\"type\": \"clip\", \"clip\": \"walk_b\"}"

/* 1D over x: stand 0, walk 1.4, run 3.5, the speeds taken from the positions. */
#define LOCO_1D(warp, c0, c1, c2)                                                                  \
    "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\", "         \
    "\"rate_warp\": {\"speed_param\": \"cmd\"" warp "}, \"children\": ["                           \
    "{\"node\": \"stand\", \"position\": 0" c0 "}, {\"node\": \"walk\", \"position\": 1.4" c1 "}," \
    "{\"node\": \"run\", \"position\": 3.5" c2 "}]},"

static const char *const POSITIONS_1D =
    HEAD LOCO_1D(", \"speed_from\": \"positions\"", "", "", "") CLIP_NODES("") "}}";
/* The same blend with declared speeds that differ from the positions (the speeds must win). */
static const char *const SPEEDS_1D =
    HEAD LOCO_1D(", \"speed_from\": \"speeds\"", ", \"speed_mps\": 0", ", \"speed_mps\": 1.1",
                 ", \"speed_mps\": 2.9") CLIP_NODES("") "}}";
/* Stand in a sync group of its own: it only holds weight. */
static const char *const OWN_1D = HEAD LOCO_1D(", \"speed_from\": \"positions\"", "", "", "")
    CLIP_NODES(", \"sync_group\": \"rest\"") "}}";
/* 2D velocities (x left, y forward): the forward, left and backward walks and the run; between
 * two directions the stated velocities partly cancel. */
static const char *const POSITIONS_2D = HEAD
    "\"loco\": {\"type\": \"blend_space\", \"solver\": \"freeform_cartesian_2d\", "
    "\"params\": [\"x\", \"y\"], \"rate_warp\": {\"speed_param\": \"cmd\", \"speed_from\": "
    "\"positions\", \"min_rate\": 0.25, \"max_rate\": 2}, \"children\": ["
    "{\"node\": \"stand\", \"position\": [0, 0]}, {\"node\": \"walk\", \"position\": [0, 1.4]},"
    "{\"node\": \"run\", \"position\": [0, 3.5]}, {\"node\": \"walk_l\", \"position\": [1.3, 0]},"
    "{\"node\": \"walk_b\", \"position\": [0, -1.2]}]}," CLIP_NODES("") "}}";

/* The velocity each clip stands for in a graph above: (x, y) m/s. */
static const double V1D[NCLIP][2] = {{0, 0}, {1.4, 0}, {3.5, 0}, {0, 0}, {0, 0}};
static const double VSPEEDS[NCLIP][2] = {{0, 0}, {1.1, 0}, {2.9, 0}, {0, 0}, {0, 0}};
static const double V2D[NCLIP][2] = {{0, 0}, {0, 1.4}, {0, 3.5}, {1.3, 0}, {0, -1.2}};

typedef struct fixture {
    cb_embedded *set;
    cb_clip *clips[NCLIP];
    cb_graph *graph;
    cb_crowd *crowd;
    uint32_t slot_clip[8]; /* the clip of each slot */
    uint32_t slots;
} fixture;

static void clips_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(cb_embedded_create(NULL, &f->set, NULL), CB_OK);
    for (int k = 0; k < NCLIP; ++k) {
        cb_clip_desc d = {.name = CLIP_NAMES[k],
                          .skeleton = cb_embedded_skeleton(f->set),
                          .duration_s = DURATIONS[k]};
        f->clips[k] = cb_test_clip_create(&d);
        assert_true(cb_clip_query_root_motion(f->clips[k]).speed_mps == 0.0f);
    }
}

static cb_result load(const fixture *f, const char *json, cb_graph **out, cb_error *err)
{
    const cb_clip *clips[NCLIP];
    memcpy(clips, f->clips, sizeof clips);
    cb_graph_json_desc jd = {
        .skeleton = cb_embedded_skeleton(f->set), .clips = clips, .clip_count = NCLIP};
    return cb_graph_load_json(json, strlen(json), &jd, out, err);
}

static void fixture_init(fixture *f, const char *json, uint32_t n)
{
    clips_init(f);
    cb_error err = {0};
    CB_CHECK(load(f, json, &f->graph, &err) == CB_OK, "%s", err.message);
    const cb_graph *graphs[1] = {f->graph};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(f->set),
                        .capacity = n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = true};
    CB_CHECK(cb_crowd_create(&cd, &f->crowd, &err) == CB_OK, "%s", err.message);
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(f->crowd, 0, 0.0f, &ch), CB_OK);
    }
    f->slots = cb_graph_clip_count(f->graph);
    assert_true(f->slots <= NCLIP); /* clip nodes the root does not reach are left out */
    for (uint32_t s = 0; s < f->slots; ++s) {
        f->slot_clip[s] = UINT32_MAX;
        for (uint32_t k = 0; k < NCLIP; ++k) {
            if (cb_graph_clip(f->graph, s) == f->clips[k]) {
                f->slot_clip[s] = k;
            }
        }
        assert_true(f->slot_clip[s] != UINT32_MAX);
    }
}

static void clips_finish(fixture *f)
{
    for (int k = 0; k < NCLIP; ++k) {
        cb_clip_destroy(f->clips[k]);
    }
    cb_embedded_destroy(f->set);
}

static void fixture_finish(fixture *f)
{
    cb_crowd_destroy(f->crowd);
    cb_graph_destroy(f->graph);
    clips_finish(f);
}

/* The closed form in double (docs/graph.md): the clips of the blend's group move one cycle per
 * weight-averaged duration, each covering u_k T_k per cycle; a clip of its own group moves at
 * u_k; v is the length of the weighted velocity over the weight. */
static double stated_speed(const double w[NCLIP], const double u[NCLIP][2], int own)
{
    double gw = 0.0, gdur = 0.0, gd[2] = {0, 0}, vel[2] = {0, 0}, wsum = 0.0;
    for (int k = 0; k < NCLIP; ++k) {
        wsum += w[k];
        for (int a = 0; a < 2; ++a) {
            if (k == own) {
                vel[a] += w[k] * u[k][a];
            } else {
                gd[a] += w[k] * u[k][a] * DURATIONS[k];
            }
        }
        if (k != own) {
            gw += w[k];
            gdur += w[k] * DURATIONS[k];
        }
    }
    for (int a = 0; a < 2; ++a) {
        vel[a] += gdur > 0.0 ? gd[a] * gw / gdur : 0.0;
    }
    return wsum > 0.0 ? hypot(vel[0], vel[1]) / wsum : 0.0;
}

typedef struct warp_case {
    float x, y, cmd;
} warp_case;

/* Runs the cases one character each for 240 frames and checks, every frame, the rate the
 * heaviest clip advances at against clamp(cmd / v, lo, hi) (1 where v = 0). */
static void rate_is_the_closed_form(const char *json, const double u[NCLIP][2], int own,
                                    const warp_case *cases, uint32_t n, double lo, double hi)
{
    fixture f;
    fixture_init(&f, json, n);
    uint32_t px, py, pc;
    assert_int_equal(cb_crowd_find_param(f.crowd, 0, "x", &px), CB_OK);
    assert_int_equal(cb_crowd_find_param(f.crowd, 0, "y", &py), CB_OK);
    assert_int_equal(cb_crowd_find_param(f.crowd, 0, "cmd", &pc), CB_OK);
    for (uint32_t i = 0; i < n; ++i) {
        cb_crowd_param_column(f.crowd, 0, px)[i] = cases[i].x;
        cb_crowd_param_column(f.crowd, 0, py)[i] = cases[i].y;
        cb_crowd_param_column(f.crowd, 0, pc)[i] = cases[i].cmd;
    }
    float prev[16][NCLIP];
    double worst = 0.0;
    uint32_t warped = 0, clamped = 0;
    assert_true(n <= 16);
    for (int k = 0; k < 240; ++k) {
        assert_int_equal(cb_crowd_update(f.crowd, DT), CB_OK);
        size_t stride;
        const float *kw = cb_crowd_weights(f.crowd, 0, &stride);
        for (uint32_t i = 0; i < n; ++i) {
            double w[NCLIP] = {0};
            float t[NCLIP] = {0};
            for (uint32_t s = 0; s < f.slots; ++s) {
                w[f.slot_clip[s]] = kw[s * stride + i];
                t[f.slot_clip[s]] = cb_crowd_clip_times(f.crowd, 0, s)[i];
            }
            double v = stated_speed(w, u, own);
            double r = v > 0.0 ? fmin(fmax(cases[i].cmd / v, lo), hi) : 1.0;
            int h = 0;
            for (int c = 1; c < NCLIP; ++c) {
                h = w[c] > w[h] ? c : h;
            }
            /* the heaviest clip's cycle: its own, or its group's weight-averaged one */
            double dur = 0.0, wsum = 0.0;
            for (int c = 0; c < NCLIP; ++c) {
                bool same = h == own ? c == own : c != own;
                dur += same ? w[c] * DURATIONS[c] : 0.0;
                wsum += same ? w[c] : 0.0;
            }
            double du = t[h] - (double)prev[i][h];
            du -= floor(du);
            if (k > 0) { /* the first frame starts the clips */
                double seen = du * dur / (wsum * DT);
                worst = fmax(worst, fabs(seen - r) / r);
                CB_CHECK(fabs(seen - r) < 5e-5 * r,
                         "x %g y %g cmd %g frame %d: rate %.7f, closed form %.7f (v %g)",
                         (double)cases[i].x, (double)cases[i].y, (double)cases[i].cmd, k, seen, r,
                         v);
                warped += k == 1 && r != 1.0 && r > lo && r < hi;
                clamped += k == 1 && (r == lo || r == hi);
            }
            memcpy(prev[i], t, sizeof t);
        }
    }
    /* the cases reach inside and both sides of the bounds */
    assert_true(warped > 0 && clamped > 0);
    cb_test_note("in-place rate: largest relative error %.2e over %u characters", worst, n);
    fixture_finish(&f);
}

/* 1D cases: walk alone inside and beyond both bounds; stand + walk; walk + run; stand alone
 * (v = 0: rate 1); run alone. */
static const warp_case CASES_1D[] = {
    {1.4f, 0, 1.0f}, {1.4f, 0, 0.3f}, {1.4f, 0, 2.5f}, {0.7f, 0, 0.5f}, {0.35f, 0, 0.6f},
    {2.4f, 0, 2.0f}, {2.4f, 0, 3.0f}, {0.0f, 0, 1.0f}, {3.5f, 0, 4.0f}, {3.5f, 0, 3.0f},
};
enum { N1D = sizeof CASES_1D / sizeof CASES_1D[0] };

static void positions_1d(void **state)
{
    (void)state;
    rate_is_the_closed_form(POSITIONS_1D, V1D, -1, CASES_1D, N1D, 0.5, 1.35);
}

static void declared_speeds_1d(void **state)
{
    (void)state;
    rate_is_the_closed_form(SPEEDS_1D, VSPEEDS, -1, CASES_1D, N1D, 0.5, 1.35);
}

static void stand_in_its_own_group(void **state)
{
    (void)state;
    rate_is_the_closed_form(OWN_1D, V1D, 0, CASES_1D, N1D, 0.5, 1.35);
}

/* 2D: forward, left, between them (the velocities partly cancel), back, forward-run, stand. */
static void positions_2d(void **state)
{
    (void)state;
    const warp_case cases[] = {
        {0, 1.4f, 1.0f},     {1.3f, 0, 1.0f},     {0.65f, 0.7f, 1.0f}, {0.9f, 0.9f, 0.2f},
        {0, -1.2f, 0.8f},    {0, 2.8f, 2.6f},     {0.2f, 0.2f, 0.3f},  {0, 0, 1.0f},
        {-0.3f, 0.5f, 3.0f}, {0.6f, -0.6f, 1.1f},
    };
    rate_is_the_closed_form(POSITIONS_2D, V2D, -1, cases, sizeof cases / sizeof cases[0], 0.25,
                            2.0);
}

/* In-place clips under the root-motion source (the default, or said): refused, the message
 * pointing at the in-place sources. */
static void root_motion_source_refuses_in_place_clips(void **state)
{
    (void)state;
    fixture f;
    clips_init(&f);
    cb_graph *g = NULL;
    cb_error err = {0};
    const char *rm = "{\"name\": \"rm\", \"parameters\": [{\"name\": \"x\"}, {\"name\": \"cmd\"}],"
                     "\"root\": \"loco\", \"nodes\": {\"loco\": {\"type\": \"blend_space\", "
                     "\"solver\": \"linear_1d\", \"params\": \"x\", \"rate_warp\": "
                     "{\"speed_param\": \"cmd\", \"speed_from\": \"root_motion\"}, \"children\": "
                     "[{\"node\": \"walk\", \"position\": 0}]}, \"walk\": {\"type\": \"clip\", "
                     "\"clip\": \"walk\"}}}";
    assert_int_equal(load(&f, rm, &g, &err), CB_ERR_INVALID_ARGUMENT);
    CB_CHECK(strstr(err.message, "clips that play in place take speed_from positions or speeds") !=
                 NULL,
             "%s", err.message);
    assert_null(g);
    clips_finish(&f);
}

typedef struct bad_case {
    const char *json;
    cb_result code;
    const char *message;
} bad_case;

#define BAD_1D(warp, c0, c1)                                                                       \
    HEAD "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\", "    \
         "" warp " \"children\": [{\"node\": \"stand\", \"position\": 0" c0 "}, "                  \
         "{\"node\": \"walk\", \"position\": 1.4" c1 "}]}," CLIP_NODES("") "}}"
#define WARP(extra) "\"rate_warp\": {\"speed_param\": \"cmd\"" extra "},"

static void json_errors(void **state)
{
    (void)state;
    const bad_case cases[] = {
        {BAD_1D(WARP(", \"speed_from\": \"feet\""), "", ""), CB_ERR_PARSE,
         "unknown rate_warp speed_from 'feet' (one of: root_motion, positions, speeds)"},
        {BAD_1D(WARP(", \"speed_from\": 2"), "", ""), CB_ERR_PARSE,
         "\"speed_from\" must be a string"},
        {BAD_1D(WARP(", \"speeds\": [0, 1]"), "", ""), CB_ERR_PARSE, "unknown key 'speeds'"},
        /* a child's speed_mps where nothing reads it */
        {BAD_1D(WARP(""), "", ", \"speed_mps\": 1.4"), CB_ERR_INVALID_ARGUMENT,
         "\"speed_mps\" needs the blend space's \"rate_warp\" with \"speed_from\": \"speeds\""},
        {BAD_1D(WARP(", \"speed_from\": \"positions\""), "", ", \"speed_mps\": 1.4"),
         CB_ERR_INVALID_ARGUMENT, "\"speed_mps\" needs"},
        {BAD_1D("", "", ", \"speed_mps\": 1.4"), CB_ERR_INVALID_ARGUMENT, "\"speed_mps\" needs"},
        /* declared speeds: on every child, numbers, >= 0, one not 0 */
        {BAD_1D(WARP(", \"speed_from\": \"speeds\""), ", \"speed_mps\": 0", ""), CB_ERR_PARSE,
         "missing \"speed_mps\" (rate_warp \"speed_from\": \"speeds\" needs one on every child)"},
        {BAD_1D(WARP(", \"speed_from\": \"speeds\""), ", \"speed_mps\": 0",
                ", \"speed_mps\": \"fast\""),
         CB_ERR_PARSE, "\"speed_mps\" must be a number"},
        {BAD_1D(WARP(", \"speed_from\": \"speeds\""), ", \"speed_mps\": 0",
                ", \"speed_mps\": -1.4"),
         CB_ERR_INVALID_ARGUMENT, "the speed of child 1 is -1.4 (a speed is >= 0)"},
        {BAD_1D(WARP(", \"speed_from\": \"speeds\""), ", \"speed_mps\": 0",
                ", \"speed_mps\": 1e39"),
         CB_ERR_PARSE, "does not fit in a float"},
        {BAD_1D(WARP(", \"speed_from\": \"speeds\""), ", \"speed_mps\": 0", ", \"speed_mps\": 0"),
         CB_ERR_INVALID_ARGUMENT, "every child's speed is 0 (nothing to match"},
        /* positions: some child away from 0 */
        {HEAD "\"loco\": {\"type\": \"blend_space\", \"solver\": \"freeform_cartesian_2d\", "
              "\"params\": [\"x\", \"y\"], " WARP(
                  ", \"speed_from\": \"positions\"") "\"children\": "
                                                     "[{\"node\": \"stand\", \"position\": [0, "
                                                     "0]}]}," CLIP_NODES("") "}}",
         CB_ERR_INVALID_ARGUMENT, "every child's position is 0"},
    };
    fixture f;
    clips_init(&f);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_graph *g = NULL;
        cb_error err = {0};
        cb_result r = load(&f, cases[k].json, &g, &err);
        CB_CHECK(r == cases[k].code && strstr(err.message, cases[k].message) != NULL,
                 "case %zu: %s (%s), want %s with '%s'", k, err.message, cb_result_str(r),
                 cb_result_str(cases[k].code), cases[k].message);
        assert_null(g);
    }
    clips_finish(&f);

    /* Clips with root motion (the embedded walks) under an in-place source: the root would
     * move by its own motion, not by the stated speed. */
    cb_embedded *set;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const char *moving =
        "{\"name\": \"m\", \"parameters\": [{\"name\": \"x\"}, {\"name\": \"cmd\"}], "
        "\"root\": \"loco\", \"nodes\": {\"loco\": {\"type\": \"blend_space\", \"solver\": "
        "\"linear_1d\", \"params\": \"x\", \"rate_warp\": {\"speed_param\": \"cmd\", "
        "\"speed_from\": \"positions\"}, \"children\": [{\"node\": \"idle\", \"position\": 0}, "
        "{\"node\": \"walk\", \"position\": 1.4}]}, \"idle\": {\"type\": \"clip\", \"clip\": "
        "\"idle\"}, \"walk\": {\"type\": \"clip\", \"clip\": \"walk_f\"}}}";
    const cb_clip *clips[32];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(set, clips, 32);
    cb_graph *g = NULL;
    cb_error err = {0};
    assert_int_equal(cb_graph_load_json(moving, strlen(moving), &jd, &g, &err),
                     CB_ERR_INVALID_ARGUMENT);
    CB_CHECK(
        strstr(err.message, "child 1 ('walk') plays clip 'walk_f', which moves its root") != NULL &&
            strstr(err.message, "speed_from positions is for clips that play in place") != NULL,
        "%s", err.message);
    assert_null(g);
    cb_embedded_destroy(set);
}

/* The C desc: what JSON cannot write (an unknown enum value, NULL or NaN speeds, speeds with
 * another source) and the query's defaults. */
static void c_errors_and_defaults(void **state)
{
    (void)state;
    fixture f;
    clips_init(&f);
    const cb_clip *clips[2] = {f.clips[0], f.clips[1]}; /* stand, walk */
    cb_graph_node kids[2];
    cb_graph_blend_space_desc d;
    cb_graph_builder *b = cb_test_two_clip_blend(cb_embedded_skeleton(f.set), clips, kids, &d);
    cb_error err = {0};
    const float nan_speeds[2] = {0.0f, NAN}, speeds[2] = {0.0f, 1.2f};
    const struct {
        cb_warp_speed_from from;
        const float *speeds;
        cb_result code;
        const char *message;
    } cases[] = {
        {(cb_warp_speed_from)7, NULL, CB_ERR_INVALID_ARGUMENT,
         "blend space 'loco': rate_warp: speed_from 7 is not a cb_warp_speed_from"},
        {(cb_warp_speed_from)-1, NULL, CB_ERR_INVALID_ARGUMENT, "speed_from -1 is not"},
        {CB_WARP_SPEED_FROM_SPEEDS, NULL, CB_ERR_NULL_ARGUMENT,
         "speed_from speeds needs speeds (one per child)"},
        {CB_WARP_SPEED_FROM_POSITIONS, speeds, CB_ERR_INVALID_ARGUMENT,
         "speeds are given but speed_from is positions"},
        {_CB_WARP_SPEED_FROM_DEFAULT, speeds, CB_ERR_INVALID_ARGUMENT,
         "speeds are given but speed_from is root_motion"},
        {CB_WARP_SPEED_FROM_SPEEDS, nan_speeds, CB_ERR_NOT_FINITE,
         "the speed of child 1 is not finite"},
        {_CB_WARP_SPEED_FROM_DEFAULT, NULL, CB_ERR_INVALID_ARGUMENT,
         "no child's clip has root motion"},
    };
    cb_graph_node node;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        d.rate_warp.speed_from = cases[k].from;
        d.rate_warp.speeds = cases[k].speeds;
        cb_result r = cb_graph_add_blend_space(b, &d, &node, &err);
        CB_CHECK(r == cases[k].code && strstr(err.message, cases[k].message) != NULL,
                 "case %zu: %s (%s), want '%s'", k, err.message, cb_result_str(r),
                 cases[k].message);
    }
    d.rate_warp.speed_from = CB_WARP_SPEED_FROM_SPEEDS;
    d.rate_warp.speeds = speeds;
    assert_int_equal(cb_graph_add_blend_space(b, &d, &node, &err), CB_OK);
    d.name = "loco2";
    d.rate_warp.speed_from = CB_WARP_SPEED_FROM_POSITIONS;
    d.rate_warp.speeds = NULL;
    assert_int_equal(cb_graph_add_blend_space(b, &d, &node, &err), CB_OK);
    cb_graph_builder_destroy(b);
    clips_finish(&f);

    cb_graph_rate_warp w = cb_graph_query_rate_warp(&(cb_graph_rate_warp){.speed_param = "s"});
    assert_int_equal(w.speed_from, CB_WARP_SPEED_FROM_ROOT_MOTION);
    assert_null(w.speeds);
    w = cb_graph_query_rate_warp(&(cb_graph_rate_warp){
        .speed_param = "s", .speed_from = CB_WARP_SPEED_FROM_SPEEDS, .speeds = speeds});
    assert_int_equal(w.speed_from, CB_WARP_SPEED_FROM_SPEEDS);
    assert_ptr_equal(w.speeds, speeds);
    assert_true(w.min_rate == CB_GRAPH_DEFAULT_WARP_MIN_RATE);
    assert_int_equal(cb_graph_query_rate_warp(NULL).speed_from, CB_WARP_SPEED_FROM_ROOT_MOTION);
}

/* The Fox (tests/data/packs/fox.cbpack, clips in place) on examples/graphs/fox/
 * locomotion_rate_warp.json: walking or running alone (the speed parameter settled, in the
 * moving state), Walk / Run advance at clamp(speed / u, 0.3, 1.35) with u their positions,
 * 1.38 and 2.59 m/s. The host's velocity goes into vx, vy (velocity_blend: raw_speed). */
static void fox_example_graph(void **state)
{
    (void)state;
    cb_pack *pack = NULL;
    cb_error err = {0};
    CB_CHECK(cb_pack_load_file(CB_TEST_PACK_DIR "/fox.cbpack", NULL, &pack, &err) == CB_OK, "%s",
             err.message);
    cb_graph_json_desc jd = {.skeleton = cb_pack_skeleton(pack),
                             .clips = cb_pack_clips(pack),
                             .clip_count = cb_pack_clip_count(pack)};
    cb_graph *graph = NULL;
    CB_CHECK(cb_graph_load_json_file(CB_EXAMPLES_DIR "/fox/locomotion_rate_warp.json", &jd, &graph,
                                     &err) == CB_OK,
             "%s", err.message);
    const cb_graph *graphs[1] = {graph};
    cb_crowd_desc cd = {.skeleton = cb_pack_skeleton(pack),
                        .capacity = 4,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = true};
    cb_crowd *crowd = NULL;
    CB_CHECK(cb_crowd_create(&cd, &crowd, &err) == CB_OK, "%s", err.message);
    /* walk inside the bounds, walk at 0.3 x 1.38 = 0.414 (the lower bound), run inside and
     * beyond the upper bound */
    const double speed[4] = {0.5, 0.9, 3.2, 4.0}, placed[4] = {1.38, 1.38, 2.59, 2.59};
    uint32_t vy;
    assert_int_equal(cb_crowd_find_param(crowd, 0, "vy", &vy), CB_OK);
    for (uint32_t i = 0; i < 4; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(crowd, 0, 0.0f, &ch), CB_OK);
        cb_crowd_param_column(crowd, 0, vy)[i] = (float)speed[i];
    }
    uint32_t slot[2] = {UINT32_MAX, UINT32_MAX}; /* Walk, Run */
    for (uint32_t s = 0; s < cb_graph_clip_count(graph); ++s) {
        const char *name = cb_clip_name(cb_graph_clip(graph, s));
        if (strcmp(name, "Walk") == 0) {
            slot[0] = s;
        } else if (strcmp(name, "Run") == 0) {
            slot[1] = s;
        }
    }
    assert_true(slot[0] != UINT32_MAX && slot[1] != UINT32_MAX);
    float prev[4] = {0};
    for (int k = 0; k < 300; ++k) { /* 3 s to settle (interp_to at 4 m/s^2, a 0.3 s blend) */
        assert_int_equal(cb_crowd_update(crowd, DT), CB_OK);
        size_t stride;
        const float *kw = cb_crowd_weights(crowd, 0, &stride);
        for (uint32_t i = 0; i < 4; ++i) {
            int c = placed[i] < 2.0 ? 0 : 1;
            const cb_clip *clip = cb_graph_clip(graph, slot[c]);
            float t = cb_crowd_clip_times(crowd, 0, slot[c])[i];
            if (k >= 240) {
                CB_CHECK(kw[slot[c] * stride + i] == 1.0f, "fox %g m/s: weight %g", speed[i],
                         (double)kw[slot[c] * stride + i]);
                double du = t - (double)prev[i];
                du -= floor(du);
                double seen = du * cb_clip_duration(clip) / DT;
                double r = fmin(fmax(speed[i] / placed[i], 0.3), 1.35);
                CB_CHECK(fabs(seen - r) < 5e-5 * r, "fox %g m/s: rate %.7f, closed form %.7f",
                         speed[i], seen, r);
            }
            prev[i] = t;
        }
    }
    cb_crowd_destroy(crowd);
    cb_graph_destroy(graph);
    cb_pack_destroy(pack);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(positions_1d),
        cmocka_unit_test(declared_speeds_1d),
        cmocka_unit_test(stand_in_its_own_group),
        cmocka_unit_test(positions_2d),
        cmocka_unit_test(root_motion_source_refuses_in_place_clips),
        cmocka_unit_test(json_errors),
        cmocka_unit_test(c_errors_and_defaults),
        cmocka_unit_test(fox_example_graph),
    };
    return CB_RUN_TESTS(tests);
}
