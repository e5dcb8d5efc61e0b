/* graph_lod: the post-process's level of detail (graph.h cb_graph_set_lod_param,
 * cb_graph_lod_limit; docs/graph.md "Level of detail"), on the embedded humanoid's walk with
 * every kind of step (two-bone IK on an arm, aim IK on the head, orientation warp, stride warp,
 * foot lock with the root from parameters), each with its own weight parameter. The reference
 * is the same graph without "lod_param" and "max_lod", whose weights the test writes itself
 * from the rule restated here (a step runs where the character's LOD, NaN, infinite or
 * negative read as 0, is at most its max_lod; else it is as at weight 0):
 *  - all characters at or below every step's max_lod: the bits of the graph without limits;
 *    all above: the bits of the graph with every step's weight 0 (and each step on its own does
 *    change the pose here, so neither check is vacuous);
 *  - LODs per character between and beyond the steps' thresholds (-1, NaN, infinity, 0.5, ...)
 *    in one batch: each character's bits are those of the reference with its own weights; and
 *    characters alternately near and far have the bits of the all-near and all-far runs;
 *  - LODs that switch near -> far -> near every 23 frames: the bits and the foot lock's outputs
 *    of the reference whose lock weight switches 1 -> 0 -> 1 alike (state released as at weight
 *    0, locks again after); while far the lock's `locked` outputs are 0;
 *  - 1 and 2 threads, batch sizes 7 and 64: the same bits;
 *  - two foot locks, one per leg, with max_lod 0 and 2, or 0 and none: the time stage skips the
 *    planting weights only above the larger limit (a character that only the second lock runs
 *    for has the reference's bits, and that lock holds its foot);
 *  - each of the above on the clip alone and on a blend space of two clips (the runtime's flat
 *    path), whose time stages skip a far character's planting weights alike;
 *  - the C builder (cb_graph_set_lod_param, .lod) gives the JSON document's bits;
 *  - errors: a limit without a LOD parameter (C, at build; JSON, at the step), an unknown or
 *    bool LOD parameter, max_lod negative, NaN, or set while lod.on is false; a refused LOD
 *    parameter (bool, trigger) is not kept: the build still finds none. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"
#include "test_util.h"

enum { STEPS = 5, N = 12, FRAMES = 150 };
static const float DT = 1.0f / 60.0f;
static const float FAR = 3.0f; /* above every step's max_lod */
/* Each step's max_lod (two-bone, aim, orientation, stride, foot lock). */
static const float MAX_LOD[STEPS] = {0.0f, 1.0f, 2.0f, 0.5f, 1.0f};
/* Each step's own weight where it runs (the LOD does not change it). */
static const float BASE_W[STEPS] = {1.0f, 0.75f, 1.0f, 1.0f, 1.0f};

typedef struct world {
    cb_embedded *set;
    const cb_skeleton *s;
    size_t joints;
} world;

static world world_make(void)
{
    world w = {0};
    assert_int_equal(cb_embedded_create(NULL, &w.set, NULL), CB_OK);
    w.s = cb_embedded_skeleton(w.set);
    w.joints = cb_skeleton_joint_count(w.s);
    return w;
}

#define LEG(s) "{\"start\": \"thigh_" s "\", \"mid\": \"calf_" s "\", \"end\": \"ball_" s "\", "

/* A foot lock step on one leg (`s`: "l" or "r"), its weight, and its max_lod text. */
#define LOCK_STEP(s, w, ml)                                                                        \
    "{\"type\": \"foot_lock\", \"legs\": [" LEG(s) "\"mid_axis\": [1, 0, 0], \"locked\": "         \
                                                   "\"lock_" s "\", \"failed\": \"fail_" s         \
                                                   "\"}], \"root_position\": [\"rx\", \"ry\", "    \
                                                   "\"rz\"], \"root_yaw\": \"ryaw\", "             \
                                                   "\"weight\": \"" w "\", \"soften\": 0.99" ml    \
                                                   "}"

/* Which post-process doc_of writes. */
typedef enum steps_kind {
    FIVE_STEPS,     /* the five steps, weights w0 .. w4 */
    TWO_LOCKS,      /* a foot lock per leg: the left one w0 and MAX_LOD[0], the right one w2 and
                       MAX_LOD[2] (the time stage's planting skip is the larger's) */
    TWO_LOCKS_OPEN, /* the same, the right one without a limit (the planting is never skipped) */
} steps_kind;

/* The graph: the walk (or with `flat`, a blend space of the walk and the run on "speed": the
 * runtime's flat path) with the steps of `kind`; with `lod`, "lod_param" and each step's
 * max_lod (MAX_LOD). */
static char *doc_of(bool lod, bool flat, steps_kind kind)
{
    char ml[STEPS][32], post[4096];
    for (int k = 0; k < STEPS; ++k) {
        bool open = kind == TWO_LOCKS_OPEN && k == 2;
        snprintf(ml[k], sizeof ml[k], lod && !open ? ", \"max_lod\": %g" : "", (double)MAX_LOD[k]);
    }
    if (kind != FIVE_STEPS) {
        snprintf(post, sizeof post, LOCK_STEP("l", "w0", "%s") ", " LOCK_STEP("r", "w2", "%s"),
                 ml[0], ml[2]);
    } else {
        snprintf(
            post, sizeof post,
            "{\"type\": \"two_bone_ik\", \"start\": \"upperarm_l\", \"mid\": \"lowerarm_l\", "
            "\"end\": \"hand_l\", \"target\": [\"tx\", \"ty\", \"tz\"], \"weight\": \"w0\"%s}, "
            "{\"type\": \"aim_ik\", \"joints\": [\"neck\", \"head\"], \"joint_weights\": [0.4, 1], "
            "\"target\": [\"lx\", \"ly\", \"lz\"], \"weight\": \"w1\"%s}, "
            "{\"type\": \"orientation_warp\", \"spine\": [\"spine_01\", \"spine_02\", "
            "\"spine_03\"], \"angle\": \"warp\", \"weight\": \"w2\"%s}, "
            "{\"type\": \"stride_warp\", \"legs\": [" LEG("l") "\"mid_axis\": [1, 0, 0]}, " LEG(
                "r") "\"mid_axis\": [1, 0, 0]}], \"scale\": \"stride\", "
                     "\"direction\": [\"sx\", \"sz\"], \"weight\": \"w3\", \"soften\": 0.99%s}, "
                     "{\"type\": \"foot_lock\", \"legs\": [" LEG(
                         "l") "\"mid_axis\": [1, 0, 0], \"locked\": \"lock_l\", \"failed\": "
                              "\"fail_l\"}, " LEG("r") "\"mid_axis\": [1, 0, 0], \"locked\": "
                                                       "\"lock_r\", \"failed\": \"fail_r\"}], "
                                                       "\"root_position\": [\"rx\", \"ry\", "
                                                       "\"rz\"], \"root_yaw\": \"ryaw\", "
                                                       "\"weight\": \"w4\", \"soften\": 0.99%s}",
            ml[0], ml[1], ml[2], ml[3], ml[4]);
    }
    size_t n = 8192;
    char *doc = malloc(n);
    snprintf(
        doc, n,
        "{\"parameters\": [{\"name\": \"lod\"}, {\"name\": \"tx\"}, {\"name\": \"ty\"}, "
        "{\"name\": \"tz\"}, {\"name\": \"lx\"}, {\"name\": \"ly\"}, {\"name\": \"lz\"}, "
        "{\"name\": \"warp\"}, {\"name\": \"stride\"}, {\"name\": \"sx\"}, {\"name\": \"sz\"}, "
        "{\"name\": \"rx\"}, {\"name\": \"ry\"}, {\"name\": \"rz\"}, {\"name\": \"ryaw\"}, "
        "{\"name\": \"w0\"}, {\"name\": \"w1\"}, {\"name\": \"w2\"}, {\"name\": \"w3\"}, "
        "{\"name\": \"w4\"}, {\"name\": \"lock_l\"}, {\"name\": \"fail_l\"}, "
        "{\"name\": \"lock_r\"}, {\"name\": \"fail_r\"}, {\"name\": \"speed\"}],%s"
        "\"root\": \"%s\", \"nodes\": {\"c\": {\"type\": \"clip\", \"clip\": \"walk_f\"}, "
        "\"r\": {\"type\": \"clip\", \"clip\": \"run_f\"}, \"b\": {\"type\": \"blend_space\", "
        "\"solver\": \"linear_1d\", \"params\": \"speed\", \"children\": [{\"node\": \"c\", "
        "\"position\": 0}, {\"node\": \"r\", \"position\": 2}]}}, \"post_process\": [%s]}",
        lod ? " \"lod_param\": \"lod\", " : " ", flat ? "b" : "c", post);
    return doc;
}

static cb_graph *load(const world *w, const char *doc)
{
    const cb_clip *clips[64];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(w->set, clips, 64);
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json(doc, strlen(doc), &jd, &g, &err) == CB_OK, "%s", err.message);
    return g;
}

/* How character i's LOD is chosen at frame f. */
typedef enum lod_mode { ALL_NEAR, ALL_FAR, MIXED, ALTERNATE, SWITCHING } lod_mode;

/* Per-character LODs of MIXED: between, at and beyond the thresholds, and the ones that count
 * as 0. */
static float mixed_lod(uint32_t i)
{
    static const float lods[N] = {0.0f,     1.0f, 2.0f, 3.0f,  -1.0f,     NAN,
                                  INFINITY, 0.5f, 1.5f, 0.25f, -INFINITY, 0.75f};
    return lods[i % N];
}

static float lod_at(lod_mode m, uint32_t i, int f)
{
    switch (m) {
    case ALL_NEAR:
        return 0.0f;
    case ALL_FAR:
        return FAR;
    case MIXED:
        return mixed_lod(i);
    case ALTERNATE:
        return i % 2 ? FAR : 0.0f;
    default:
        /* near, far and back, every 23 frames, each character in its own phase */
        return ((uint32_t)f / 23u + i) % 3u == 1u ? FAR : 0.0f;
    }
}

/* The rule, restated: step k runs for a character at `lod` (NaN, infinite or negative: 0). */
static bool runs(float lod, int k)
{
    float l = isfinite(lod) && lod > 0.0f ? lod : 0.0f;
    return l <= MAX_LOD[k];
}

typedef struct run_opts {
    bool lod_graph;  /* the graph with limits (the LOD written), else the reference */
    lod_mode mode;   /* the LODs (the reference writes the weights they give) */
    int off;         /* the reference: step `off` at weight 0 throughout (-1: none) */
    bool flat;       /* the blend-space graph (doc_of) */
    steps_kind kind; /* its post-process (doc_of) */
    uint32_t threads, batch;
    const cb_graph *graph; /* a graph of the LOD document built elsewhere (C), or NULL */
} run_opts;

/* Every character's matrices and the lock's outputs, every frame. */
typedef struct record {
    float *m;      /* FRAMES x N x joints x 16 */
    float *outs;   /* FRAMES x N x 4: lock_l, fail_l, lock_r, fail_r */
    size_t per_ch; /* floats of one character's matrices */
} record;

static void param_write(cb_crowd *c, const cb_graph *g, const char *name, uint32_t i, float v)
{
    uint32_t p;
    assert_int_equal(cb_graph_find_param(g, name, &p), CB_OK);
    cb_crowd_param_column(c, 0, p)[i] = v;
}

static float param_read(cb_crowd *c, const cb_graph *g, const char *name, uint32_t i)
{
    uint32_t p;
    assert_int_equal(cb_graph_find_param(g, name, &p), CB_OK);
    return cb_crowd_param_column(c, 0, p)[i];
}

static record run(const world *w, run_opts o)
{
    char *doc = o.graph == NULL ? doc_of(o.lod_graph, o.flat, o.kind) : NULL;
    cb_graph *own = doc != NULL ? load(w, doc) : NULL;
    const cb_graph *g = own != NULL ? own : o.graph;
    free(doc);
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc cd = {.skeleton = w->s,
                        .capacity = N,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = o.threads,
                        .batch_size = o.batch};
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&cd, &c, &err) == CB_OK, "%s", err.message);
    for (uint32_t i = 0; i < N; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, (float)i / (float)N, &ch), CB_OK);
    }
    record r = {.per_ch = w->joints * 16};
    r.m = malloc((size_t)FRAMES * N * r.per_ch * sizeof(float));
    r.outs = malloc((size_t)FRAMES * N * 4 * sizeof(float));
    static const char *const outs[4] = {"lock_l", "fail_l", "lock_r", "fail_r"};
    for (int f = 0; f < FRAMES; ++f) {
        double t = f * (double)DT;
        for (uint32_t i = 0; i < N; ++i) {
            float lod = lod_at(o.mode, i, f);
            if (o.flat) {
                param_write(c, g, "speed", i, 0.7f);
            }
            param_write(c, g, "tx", i, 0.35f + 0.1f * (float)sin(2.0 * t + i));
            param_write(c, g, "ty", i, 1.1f);
            param_write(c, g, "tz", i, 0.3f);
            param_write(c, g, "lx", i, (float)sin(t + i));
            param_write(c, g, "ly", i, 1.6f);
            param_write(c, g, "lz", i, 2.0f);
            param_write(c, g, "warp", i, 0.4f);
            param_write(c, g, "stride", i, 1.3f);
            param_write(c, g, "sz", i, 1.0f);
            param_write(c, g, "rx", i, 3.0f * (float)i);
            param_write(c, g, "rz", i, (float)(1.4 * t));
            for (int k = 0; k < STEPS; ++k) {
                char name[4] = {'w', (char)('0' + k), 0};
                bool open = o.kind == TWO_LOCKS_OPEN && k == 2; /* no limit: runs at any LOD */
                bool on = o.lod_graph || ((runs(lod, k) || open) && k != o.off);
                param_write(c, g, name, i, on ? BASE_W[k] : 0.0f);
            }
            if (o.lod_graph) {
                param_write(c, g, "lod", i, lod);
            }
        }
        assert_int_equal(cb_crowd_update(c, DT), CB_OK);
        for (uint32_t i = 0; i < N; ++i) {
            size_t at = (size_t)f * N + i;
            memcpy(r.m + at * r.per_ch, cb_crowd_matrices(c, 0, i), r.per_ch * sizeof(float));
            for (int k = 0; k < 4; ++k) {
                r.outs[at * 4 + k] = param_read(c, g, outs[k], i);
            }
        }
    }
    cb_crowd_destroy(c);
    cb_graph_destroy(own);
    return r;
}

static void record_free(record *r)
{
    free(r->m);
    free(r->outs);
}

static bool same_character(const record *a, const record *b, uint32_t i)
{
    for (int f = 0; f < FRAMES; ++f) {
        size_t at = (size_t)f * N + i;
        if (memcmp(a->m + at * a->per_ch, b->m + at * b->per_ch, a->per_ch * sizeof(float)) != 0 ||
            memcmp(a->outs + at * 4, b->outs + at * 4, 4 * sizeof(float)) != 0) {
            print_error("character %u differs at frame %d\n", i, f);
            return false;
        }
    }
    return true;
}

static bool same(const record *a, const record *b)
{
    bool ok = true;
    for (uint32_t i = 0; i < N && ok; ++i) {
        ok = same_character(a, b, i);
    }
    return ok;
}

/* The graph form the tests below run: the clip, then the blend space (each test runs both). */
static bool flat_form;

static run_opts lod_run(lod_mode m)
{
    return (run_opts){.lod_graph = true, .mode = m, .off = -1, .threads = 1, .flat = flat_form};
}

static run_opts ref_run(lod_mode m)
{
    return (run_opts){.lod_graph = false, .mode = m, .off = -1, .threads = 1, .flat = flat_form};
}

/* A test body run on the clip, then on the blend space. */
static void both_forms(void (*body)(void))
{
    for (int flat = 0; flat < 2; ++flat) {
        flat_form = flat != 0;
        body();
    }
    flat_form = false;
}

/* All near: the graph without limits; all far: every step at weight 0. Each step on its own
 * changes the pose (its weight 0 differs from the run with every step on). */
static void near_and_far_are_no_limit_and_weight_zero_once(void)
{
    world w = world_make();
    record near = run(&w, lod_run(ALL_NEAR)), ref_near = run(&w, ref_run(ALL_NEAR));
    record far = run(&w, lod_run(ALL_FAR)), ref_far = run(&w, ref_run(ALL_FAR));
    assert_true(same(&near, &ref_near));
    assert_true(same(&far, &ref_far));
    for (int k = 0; k < STEPS; ++k) {
        run_opts o = ref_run(ALL_NEAR);
        o.off = k;
        record one_off = run(&w, o);
        CB_CHECK(memcmp(one_off.m, ref_near.m, (size_t)FRAMES * N * near.per_ch * 4) != 0,
                 "step %d changes nothing here", k);
        record_free(&one_off);
    }
    record_free(&near), record_free(&ref_near), record_free(&far), record_free(&ref_far);
    cb_embedded_destroy(w.set);
}

/* Per-character LODs in one batch: each character has its own weights' bits; alternately near
 * and far characters have the all-near and all-far runs' bits. */
static void characters_mix_in_one_batch_once(void)
{
    world w = world_make();
    record mixed = run(&w, lod_run(MIXED)), ref = run(&w, ref_run(MIXED));
    assert_true(same(&mixed, &ref));
    record alt = run(&w, lod_run(ALTERNATE));
    record near = run(&w, lod_run(ALL_NEAR)), far = run(&w, lod_run(ALL_FAR));
    for (uint32_t i = 0; i < N; ++i) {
        assert_true(same_character(&alt, i % 2 ? &far : &near, i));
    }
    record_free(&mixed), record_free(&ref), record_free(&alt), record_free(&near),
        record_free(&far);
    cb_embedded_destroy(w.set);
}

/* A foot lock that goes far and comes back: as its weight going 0 and back to 1. */
static void switching_is_weight_going_to_zero_and_back_once(void)
{
    world w = world_make();
    record sw = run(&w, lod_run(SWITCHING)), ref = run(&w, ref_run(SWITCHING));
    assert_true(same(&sw, &ref));
    size_t locked_near_after_far = 0;
    for (int f = 0; f < FRAMES; ++f) {
        for (uint32_t i = 0; i < N; ++i) {
            const float *o = sw.outs + ((size_t)f * N + i) * 4;
            if (lod_at(SWITCHING, i, f) == FAR) {
                CB_CHECK(o[0] == 0.0f && o[2] == 0.0f, "held while far: character %u frame %d", i,
                         f);
            } else if (f >= 46) {
                locked_near_after_far += (o[0] == 1.0f) + (o[2] == 1.0f);
            }
        }
    }
    assert_true(locked_near_after_far > 0); /* the lock works again once near */
    record_free(&sw), record_free(&ref);
    cb_embedded_destroy(w.set);
}

/* Several foot locks with different limits (TWO_LOCKS: max_lod 0 and 2; TWO_LOCKS_OPEN: 0 and
 * none): the time stage may skip the planting weights only above every lock's limit, so a
 * character that only the second lock runs for has the reference's bits and locks its foot. */
static void several_locks_once(void)
{
    world w = world_make();
    const steps_kind kinds[2] = {TWO_LOCKS, TWO_LOCKS_OPEN};
    const lod_mode modes[2] = {MIXED, SWITCHING};
    for (int k = 0; k < 2; ++k) {
        for (int m = 0; m < 2; ++m) {
            run_opts lo = lod_run(modes[m]), ro = ref_run(modes[m]);
            lo.kind = ro.kind = kinds[k];
            record lr = run(&w, lo), ref = run(&w, ro);
            CB_CHECK(same(&lr, &ref), "steps %d mode %d", (int)kinds[k], (int)modes[m]);
            size_t right_only = 0; /* frames the right foot is held where only its lock runs */
            for (int f = 0; f < FRAMES; ++f) {
                for (uint32_t i = 0; i < N; ++i) {
                    float lod = lod_at(modes[m], i, f);
                    const float *o = lr.outs + ((size_t)f * N + i) * 4;
                    if (!runs(lod, 0) && (runs(lod, 2) || kinds[k] == TWO_LOCKS_OPEN)) {
                        CB_CHECK(o[0] == 0.0f, "left held above its limit: %u frame %d", i, f);
                        right_only += o[2] == 1.0f;
                    }
                }
            }
            /* (switching with two limits: far is above both, no character has the right alone) */
            bool none = kinds[k] == TWO_LOCKS && modes[m] == SWITCHING;
            CB_CHECK(none || right_only > 0, "steps %d mode %d: the right lock never holds alone",
                     (int)kinds[k], (int)modes[m]);
            record_free(&lr), record_free(&ref);
        }
    }
    cb_embedded_destroy(w.set);
}

static void threads_and_batches_once(void)
{
    world w = world_make();
    const lod_mode modes[2] = {MIXED, SWITCHING};
    for (int m = 0; m < 2; ++m) {
        record one = run(&w, lod_run(modes[m]));
        const uint32_t threads[3] = {2, 1, 2}, batch[3] = {0, 7, 64};
        for (int k = 0; k < 3; ++k) {
            run_opts o = lod_run(modes[m]);
            o.threads = threads[k];
            o.batch = batch[k];
            record other = run(&w, o);
            CB_CHECK(same(&one, &other), "threads %u batch %u", threads[k], batch[k]);
            record_free(&other);
        }
        record_free(&one);
    }
    cb_embedded_destroy(w.set);
}

static void near_and_far_are_no_limit_and_weight_zero(void **state)
{
    (void)state;
    both_forms(near_and_far_are_no_limit_and_weight_zero_once);
}

static void characters_mix_in_one_batch(void **state)
{
    (void)state;
    both_forms(characters_mix_in_one_batch_once);
}

static void switching_is_weight_going_to_zero_and_back(void **state)
{
    (void)state;
    both_forms(switching_is_weight_going_to_zero_and_back_once);
}

static void threads_and_batches(void **state)
{
    (void)state;
    both_forms(threads_and_batches_once);
}

static void several_locks(void **state)
{
    (void)state;
    both_forms(several_locks_once);
}

/* ---- the C builder ----------------------------------------------------------------------- */

static cb_graph_builder *builder_of(const world *w, const cb_clip **clips)
{
    cb_graph_json_desc jd = cb_test_embedded_json_desc(w->set, clips, 64);
    cb_graph_builder_desc bd = {
        .skeleton = jd.skeleton, .clips = jd.clips, .clip_count = jd.clip_count};
    cb_graph_builder *b = NULL;
    assert_int_equal(cb_graph_builder_create(&bd, &b, NULL), CB_OK);
    return b;
}

/* The LOD document's graph, built in C. */
static cb_graph *build_in_c(const world *w)
{
    const cb_clip *clips[64];
    cb_graph_builder *b = builder_of(w, clips);
    static const char *const names[] = {"lod",    "tx",     "ty",     "tz",   "lx", "ly", "lz",
                                        "warp",   "stride", "sx",     "sz",   "rx", "ry", "rz",
                                        "ryaw",   "w0",     "w1",     "w2",   "w3", "w4", "lock_l",
                                        "fail_l", "lock_r", "fail_r", "speed"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
        assert_int_equal(cb_graph_add_param(b, names[k], CB_PARAM_FLOAT, 0.0f, NULL), CB_OK);
    }
    cb_graph_node node;
    assert_int_equal(cb_graph_add_clip(b, &(cb_graph_clip_desc){.clip = "walk_f"}, &node, NULL),
                     CB_OK);
    cb_error err = {0};
    const cb_graph_two_bone_ik_desc two = {"upperarm_l",   "lowerarm_l",
                                           "hand_l",       .target = {"tx", "ty", "tz"},
                                           .weight = "w0", .lod = {true, MAX_LOD[0]}};
    CB_CHECK(cb_graph_add_two_bone_ik(b, &two, &err) == CB_OK, "%s", err.message);
    const char *const chain[2] = {"neck", "head"};
    const float chain_w[2] = {0.4f, 1.0f};
    const cb_graph_aim_ik_desc aim = {.joints = chain,
                                      .joint_weights = chain_w,
                                      .joint_count = 2,
                                      .target = {"lx", "ly", "lz"},
                                      .weight = "w1",
                                      .lod = {true, MAX_LOD[1]}};
    CB_CHECK(cb_graph_add_aim_ik(b, &aim, &err) == CB_OK, "%s", err.message);
    const char *const spine[3] = {"spine_01", "spine_02", "spine_03"};
    const cb_graph_orientation_warp_desc orient = {.spine_joints = spine,
                                                   .spine_count = 3,
                                                   .angle = "warp",
                                                   .weight = "w2",
                                                   .lod = {true, MAX_LOD[2]}};
    CB_CHECK(cb_graph_add_orientation_warp(b, &orient, &err) == CB_OK, "%s", err.message);
    const cb_graph_stride_leg legs[2] = {{"thigh_l", "calf_l", "ball_l", {1, 0, 0}},
                                         {"thigh_r", "calf_r", "ball_r", {1, 0, 0}}};
    const cb_graph_stride_warp_desc stride = {.legs = legs,
                                              .leg_count = 2,
                                              .scale = "stride",
                                              .direction = {"sx", "sz"},
                                              .weight = "w3",
                                              .soften = 0.99f,
                                              .lod = {true, MAX_LOD[3]}};
    CB_CHECK(cb_graph_add_stride_warp(b, &stride, &err) == CB_OK, "%s", err.message);
    const cb_graph_foot_lock_leg lock_legs[2] = {{legs[0], NULL, NULL, "lock_l", "fail_l"},
                                                 {legs[1], NULL, NULL, "lock_r", "fail_r"}};
    const cb_graph_foot_lock_desc lock = {.legs = lock_legs,
                                          .leg_count = 2,
                                          .root_position = {"rx", "ry", "rz"},
                                          .root_yaw = "ryaw",
                                          .weight = "w4",
                                          .soften = 0.99f,
                                          .lod = {true, MAX_LOD[4]}};
    CB_CHECK(cb_graph_add_foot_lock(b, &lock, &err) == CB_OK, "%s", err.message);
    CB_CHECK(cb_graph_set_lod_param(b, "lod", &err) == CB_OK, "%s", err.message);
    cb_graph *g = NULL;
    CB_CHECK(cb_graph_build(b, &g, &err) == CB_OK, "%s", err.message);
    cb_graph_builder_destroy(b);
    return g;
}

static void c_builder_gives_the_json_bits(void **state)
{
    (void)state;
    world w = world_make();
    cb_graph *g = build_in_c(&w);
    run_opts o = lod_run(MIXED);
    o.graph = g;
    record c = run(&w, o), json = run(&w, lod_run(MIXED));
    assert_true(same(&c, &json));
    record_free(&c), record_free(&json);
    cb_graph_destroy(g);
    cb_embedded_destroy(w.set);
}

static void c_errors(void **state)
{
    (void)state;
    world w = world_make();
    const cb_clip *clips[64];
    cb_graph_builder *b = builder_of(&w, clips);
    cb_error err = {0};
    assert_int_equal(cb_graph_add_param(b, "lod", CB_PARAM_FLOAT, 0.0f, NULL), CB_OK);
    assert_int_equal(cb_graph_add_param(b, "lvl", CB_PARAM_INT, 0.0f, NULL), CB_OK);
    assert_int_equal(cb_graph_add_param(b, "near", CB_PARAM_BOOL, 0.0f, NULL), CB_OK);
    assert_int_equal(cb_graph_add_param(b, "a", CB_PARAM_FLOAT, 0.0f, NULL), CB_OK);
    cb_graph_node node;
    assert_int_equal(cb_graph_add_clip(b, &(cb_graph_clip_desc){.clip = "walk_f"}, &node, NULL),
                     CB_OK);
    assert_int_equal(cb_graph_set_lod_param(NULL, "lod", &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_set_lod_param(b, NULL, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_set_lod_param(b, "lood", &err), CB_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "LOD parameter: unknown parameter 'lood'"));
    assert_int_equal(cb_graph_set_lod_param(b, "near", &err), CB_ERR_MISMATCH);
    assert_int_equal(cb_graph_set_lod_param(b, "lvl", &err), CB_OK); /* an int is a number */

    cb_graph_orientation_warp_desc d = {.angle = "a"};
    assert_int_equal(cb_graph_query_orientation_warp_desc(&d).lod.on, false);
    d.lod = (cb_graph_lod_limit){.on = true, .max_lod = -1.0f};
    assert_int_equal(cb_graph_add_orientation_warp(b, &d, &err), CB_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "orientation warp: max_lod (-1) must be >= 0"));
    d.lod.max_lod = NAN;
    assert_int_equal(cb_graph_add_orientation_warp(b, &d, &err), CB_ERR_NOT_FINITE);
    d.lod.max_lod = INFINITY;
    assert_int_equal(cb_graph_add_orientation_warp(b, &d, &err), CB_ERR_NOT_FINITE);
    d.lod = (cb_graph_lod_limit){.on = false, .max_lod = 1.0f};
    assert_int_equal(cb_graph_add_orientation_warp(b, &d, &err), CB_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "max_lod (1) is set but lod.on is false"));
    cb_graph_builder_destroy(b);

    /* A limit in a graph without a LOD parameter: refused at build, whatever the order. A
     * refused LOD parameter (a bool, a trigger) is not kept: the graph still has none. */
    b = builder_of(&w, clips);
    assert_int_equal(cb_graph_add_param(b, "a", CB_PARAM_FLOAT, 0.0f, NULL), CB_OK);
    assert_int_equal(cb_graph_add_param(b, "near", CB_PARAM_BOOL, 0.0f, NULL), CB_OK);
    assert_int_equal(cb_graph_add_param(b, "jump", CB_PARAM_TRIGGER, 0.0f, NULL), CB_OK);
    assert_int_equal(cb_graph_add_clip(b, &(cb_graph_clip_desc){.clip = "walk_f"}, &node, NULL),
                     CB_OK);
    d.lod = (cb_graph_lod_limit){.on = true, .max_lod = 0.0f};
    assert_int_equal(cb_graph_add_orientation_warp(b, &d, &err), CB_OK);
    assert_int_equal(cb_graph_set_lod_param(b, "near", &err), CB_ERR_MISMATCH);
    assert_int_equal(cb_graph_set_lod_param(b, "jump", &err), CB_ERR_MISMATCH);
    assert_non_null(strstr(err.message, "LOD parameter: parameter 'jump' is a trigger"));
    cb_graph *g = NULL;
    assert_int_equal(cb_graph_build(b, &g, &err), CB_ERR_NOT_FOUND);
    assert_null(g);
    assert_non_null(strstr(err.message, "post-process step 0 has a max_lod, but the graph names "
                                        "no LOD parameter"));
    assert_int_equal(cb_graph_add_param(b, "lod", CB_PARAM_FLOAT, 0.0f, NULL), CB_OK);
    assert_int_equal(cb_graph_set_lod_param(b, "lod", &err), CB_OK); /* after the step: fine */
    CB_CHECK(cb_graph_build(b, &g, &err) == CB_OK, "%s", err.message);
    assert_int_equal(cb_graph_set_lod_param(b, "lod", &err), CB_ERR_INVALID_ARGUMENT);
    cb_graph_destroy(g);
    cb_graph_builder_destroy(b);
    cb_embedded_destroy(w.set);
}

/* The JSON errors, at their step (graph_json has the places in a small document). */
static void json_errors(void **state)
{
    (void)state;
    world w = world_make();
    static const struct {
        const char *lod_param, *step;
        cb_result want;
        const char *needle;
    } bad[] = {
        {NULL, "{\"type\": \"orientation_warp\", \"angle\": \"a\", \"max_lod\": 1}",
         CB_ERR_NOT_FOUND, "\"max_lod\" needs the graph's \"lod_param\""},
        {NULL,
         "{\"type\": \"foot_lock\", \"legs\": [" LEG("l") "\"mid_axis\": [1, 0, 0]}], "
                                                          "\"max_lod\": 0}",
         CB_ERR_NOT_FOUND, "\"max_lod\" needs the graph's \"lod_param\""},
        {"\"lod\"", "{\"type\": \"orientation_warp\", \"angle\": \"a\", \"max_lod\": \"far\"}",
         CB_ERR_PARSE, "\"max_lod\" must be a number"},
        {"\"lod\"", "{\"type\": \"orientation_warp\", \"angle\": \"a\", \"max_lod\": -2}",
         CB_ERR_INVALID_ARGUMENT, "orientation warp: max_lod (-2) must be >= 0"},
        {"\"lod\"", "{\"type\": \"orientation_warp\", \"angle\": \"a\", \"max_lod\": 1e300}",
         CB_ERR_PARSE, "does not fit in a float"},
        {"\"lood\"", "{\"type\": \"orientation_warp\", \"angle\": \"a\"}", CB_ERR_NOT_FOUND,
         "LOD parameter: unknown parameter 'lood'"},
        {"\"on\"", "{\"type\": \"orientation_warp\", \"angle\": \"a\"}", CB_ERR_MISMATCH,
         "LOD parameter: parameter 'on' is a bool"},
        {"1", "{\"type\": \"orientation_warp\", \"angle\": \"a\"}", CB_ERR_PARSE,
         "\"lod_param\" must be a string"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        char doc[1024], label[32], lp[64] = "";
        if (bad[k].lod_param != NULL) {
            snprintf(lp, sizeof lp, "\"lod_param\": %s, ", bad[k].lod_param);
        }
        snprintf(doc, sizeof doc,
                 "{\"parameters\": [{\"name\": \"lod\"}, {\"name\": \"a\"}, {\"name\": \"on\", "
                 "\"type\": \"bool\"}], %s\"root\": \"c\", \"nodes\": {\"c\": {\"type\": "
                 "\"clip\", \"clip\": \"walk_f\"}}, \"post_process\": [%s]}",
                 lp, bad[k].step);
        snprintf(label, sizeof label, "case %zu", k);
        cb_test_expect_embedded_json_error(w.set, doc, bad[k].want, bad[k].needle, label);
    }
    cb_embedded_destroy(w.set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(near_and_far_are_no_limit_and_weight_zero),
        cmocka_unit_test(characters_mix_in_one_batch),
        cmocka_unit_test(switching_is_weight_going_to_zero_and_back),
        cmocka_unit_test(threads_and_batches),
        cmocka_unit_test(several_locks),
        cmocka_unit_test(c_builder_gives_the_json_bits),
        cmocka_unit_test(c_errors),
        cmocka_unit_test(json_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
