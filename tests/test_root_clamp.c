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
 * undefined arithmetic (the sanitizer build runs this), with normal frames after it.
 *
 * The blend the time stage calls takes a shorter path for clips that never turn (issue 13):
 * a blend of one entry at weight 1 is that entry's delta, so it must give the bits of the public
 * cb_clip_root_delta, which takes the general path, over every kind of frame (within a cycle,
 * across one boundary, several, backwards) for looping and clamped clips, with and without a
 * vertical root track, and for a turning one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The embedded set, created into *set, and its walk_f. */
static const cb_clip *embedded_walk(cb_embedded **set)
{
    cb_error err = {0};
    CB_CHECK(cb_embedded_create(NULL, set, &err) == CB_OK, "%s", err.message);
    const cb_clip *walk = cb_embedded_find_clip(*set, "walk_f");
    assert_non_null(walk);
    return walk;
}

/* Walks walk_f looping at the rate in the parameter "rate", one frame per rate. */
static void looping_clip_delta_under_any_speed(void **state)
{
    (void)state;
    cb_error err = {0};
    cb_embedded *set = NULL;
    const cb_clip *walk = embedded_walk(&set);
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

/* A copy of clip src with its root track, wrapped as `wrap`; with `lift`, the track's y gets a
 * bump (the root rising and falling once per cycle), with `turn` its yaw a turn of 0.3 rad per
 * cycle; the copy then records the mode that keeps them. */
static cb_clip *root_copy(const cb_embedded *set, const cb_clip *src, cb_clip_wrap wrap, bool lift,
                          bool turn)
{
    size_t n = cb_clip_frame_count(src);
    size_t floats = n * cb_clip_joint_count(src) * cb_clip_frame_stride(src);
    float *frames = malloc(floats * sizeof *frames), *track = malloc(n * 4 * sizeof *track);
    assert_true(frames != NULL && track != NULL);
    assert_int_equal(cb_clip_read_frames(src, (cb_float_span){frames, floats}), CB_OK);
    assert_int_equal(cb_clip_read_root_track(src, (cb_float_span){track, n * 4}), CB_OK);
    for (size_t i = 0; i < n; ++i) {
        double u = (double)i / (double)(n - 1);
        track[i * 4 + 1] = lift ? (float)(0.04 * sin(3.14159265358979323846 * u)) : 0.0f;
        track[i * 4 + 3] = turn ? (float)(0.3 * u) : 0.0f;
    }
    cb_clip_frames_desc d = {
        .name = cb_clip_name(src),
        .skeleton = cb_embedded_skeleton(set),
        .duration_s = cb_clip_duration(src),
        .frame_count = (uint32_t)n,
        .has_scale = cb_clip_frame_stride(src) == 10,
        .frames = {frames, floats},
        .wrap = wrap,
        .root_motion = lift ? (turn ? CB_ROOT_MOTION_XYZ_YAW : CB_ROOT_MOTION_XYZ)
                            : (turn ? CB_ROOT_MOTION_XZ_YAW : CB_ROOT_MOTION_XZ),
        .root_track = {track, n * 4},
    };
    cb_clip *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_clip_create_from_frames(&d, &c, &err) == CB_OK, "root copy: %s", err.message);
    free(frames);
    free(track);
    return c;
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* The kind of a copy of walk_f (root_copy's arguments). */
typedef struct copy_kind {
    cb_clip_wrap wrap;
    bool lift, turn;
} copy_kind;

enum { SET_CLIPS = 96, SET_COPIES = 6 };

/* The embedded set's clips, then copies of its walk_f of the given kinds (at most SET_COPIES). */
typedef struct clip_set {
    cb_embedded *set;
    cb_clip *copies[SET_COPIES];
    size_t copy_count, count;
    const cb_clip *clips[SET_CLIPS];
} clip_set;

static void clip_set_init(clip_set *s, const copy_kind *kinds, size_t copies)
{
    assert_true(copies <= SET_COPIES);
    const cb_clip *walk = embedded_walk(&s->set);
    s->copy_count = copies, s->count = 0;
    for (uint32_t i = 0; i < cb_embedded_clip_count(s->set) && s->count < SET_CLIPS - copies; ++i) {
        s->clips[s->count++] = cb_embedded_clip(s->set, i);
    }
    for (size_t i = 0; i < copies; ++i) {
        s->copies[i] = root_copy(s->set, walk, kinds[i].wrap, kinds[i].lift, kinds[i].turn);
        s->clips[s->count++] = s->copies[i];
    }
}

static void clip_set_finish(clip_set *s)
{
    for (size_t i = 0; i < s->copy_count; ++i) {
        cb_clip_destroy(s->copies[i]);
    }
    cb_embedded_destroy(s->set);
}

static void blend_of_one_entry_is_its_delta(void **state)
{
    (void)state;
    const copy_kind kinds[] = {
        {CB_CLIP_WRAP_LOOP, true, false},  {CB_CLIP_WRAP_CLAMP, false, false},
        {CB_CLIP_WRAP_CLAMP, true, false}, {CB_CLIP_WRAP_LOOP, false, true},
        {CB_CLIP_WRAP_CLAMP, true, true},  {CB_CLIP_WRAP_LOOP, false, false},
    };
    clip_set cs;
    clip_set_init(&cs, kinds, sizeof kinds / sizeof kinds[0]);
    const cb_clip *const *clips = cs.clips;
    const size_t count = cs.count;
    /* Spans: within a cycle, up to about one cycle, several, forward and backward. */
    const double spans[] = {0.02, 0.3, 1.1, 3.5};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    size_t compared = 0, moved = 0;
    for (size_t c = 0; c < count; ++c) {
        for (int k = 0; k < 4000; ++k) {
            double r0 = (double)(next_random(&rng) >> 11) / 9007199254740992.0;
            double r1 = (double)(next_random(&rng) >> 11) / 9007199254740992.0;
            float from = (float)(r0 * 4.0 - 1.5);
            float to = (float)(from + (r1 - 0.25) * spans[k % 4]);
            if (k % 97 == 0) {
                to = ceilf(from); /* ends on a cycle boundary */
            }
            cb_root_delta want, got;
            assert_int_equal(cb_clip_root_delta(clips[c], from, to, &want), CB_OK);
            cb_root_motion_entry e = {clips[c], from, to, 1.0f};
            assert_int_equal(cb_clip_blend_root_motion(&e, 1, &got), CB_OK);
            CB_CHECK(memcmp(&want, &got, sizeof want) == 0,
                     "clip %zu (%s) from %a to %a: the blend gives (%a %a %a %a), the delta "
                     "(%a %a %a %a)",
                     c, cb_clip_name(clips[c]), (double)from, (double)to,
                     (double)got.translation[0], (double)got.translation[1],
                     (double)got.translation[2], (double)got.yaw, (double)want.translation[0],
                     (double)want.translation[1], (double)want.translation[2], (double)want.yaw);
            compared++;
            moved += want.translation[1] != 0.0f || want.yaw != 0.0f;
        }
    }
    cb_test_note("%zu deltas over %zu clips: the blend of one entry gives the delta's bits (%zu "
                 "with a vertical or turning part)",
                 compared, count, moved);
    CB_CHECK(moved > 0, "the copies with a y bump and a turn should move vertically or turn");
    clip_set_finish(&cs);
}

/* Component k of a root track of n keys (x y z yaw per key) at u in [0, 1], as the root delta
 * interpolates it, written out here in its plain form: the interval floor(u (n - 1)) (the last
 * one at u = 1), the keys' difference in float, the interpolation in double. */
static double track_at(const float *track, size_t n, double u, int k)
{
    double last = (double)(n - 1), x = u * last, fl = floor(x), f;
    size_t i;
    if (fl >= last) {
        i = n - 2, f = x - (last - 1.0);
    } else {
        i = (size_t)fl, f = x - (fl + 0.0); /* (+0 for fl = -0: f keeps the sign of x) */
    }
    float a = track[i * 4 + (size_t)k], d = track[(i + 1) * 4 + (size_t)k] - a;
    return (double)a + (double)d * f;
}

/* A clip that never turns, over a frame that crosses at most one cycle boundary forward (the
 * crowd's common case, the blend's short path since issue 13), moves by the difference of its
 * track interpolated at both ends (the end one cycle on plus the cycle's displacement, the
 * track at 1, when it crosses), rounded to float; a component whose keys are all 0 gives +0.
 * The public delta and the blend of one entry must give exactly the bits of that reference,
 * computed here from the track the clip reads back, at random times and at the edges: key
 * times, cycle boundaries, -0 and 1 and beyond for clamped clips, empty spans. */
static void straight_delta_is_the_track_interpolated(void **state)
{
    (void)state;
    const copy_kind kinds[] = {
        {CB_CLIP_WRAP_LOOP, true, false},
        {CB_CLIP_WRAP_CLAMP, false, false},
        {CB_CLIP_WRAP_CLAMP, true, false},
        {CB_CLIP_WRAP_LOOP, false, false},
    };
    clip_set cs;
    clip_set_init(&cs, kinds, sizeof kinds / sizeof kinds[0]);
    const cb_clip *const *clips = cs.clips;
    const size_t count = cs.count;
    uint64_t rng = 0x243f6a8885a308d3ull;
    size_t compared = 0, crossed = 0, lifted = 0, clamped = 0;
    for (size_t c = 0; c < count; ++c) {
        size_t n = cb_clip_frame_count(clips[c]);
        float *track = malloc(n * 4 * sizeof *track);
        assert_non_null(track);
        if (cb_clip_read_root_track(clips[c], (cb_float_span){track, n * 4}) != CB_OK) {
            free(track);
            continue; /* no root motion */
        }
        bool moves_y = false, turns = false;
        for (size_t i = 0; i < n; ++i) {
            moves_y = moves_y || track[i * 4 + 1] != 0.0f;
            turns = turns || track[i * 4 + 3] != 0.0f;
        }
        if (turns) {
            free(track);
            continue; /* the general delta: turns compose (blend_of_one_entry_is_its_delta) */
        }
        bool looping = cb_clip_is_looping(clips[c]);
        for (int k = 0; k < 3000; ++k) {
            double r0 = (double)(next_random(&rng) >> 11) / 9007199254740992.0;
            double r1 = (double)(next_random(&rng) >> 11) / 9007199254740992.0;
            float from = (float)(r0 * 4.0 - 1.5);
            float to = (float)(from + r1 * 0.999);
            switch (k % 8) {
            case 1: /* both ends on keys */
                from = (float)(next_random(&rng) % n) / (float)(n - 1);
                to = (float)(next_random(&rng) % n) / (float)(n - 1);
                to = to < from ? to + 1.0f : to;
                break;
            case 2: /* ends on a cycle boundary */
                to = ceilf(from);
                break;
            case 3: /* starts on one */
                from = floorf(from), to = from + (float)(r1 * 0.999);
                break;
            case 4: /* -0, 0, 1 and beyond */
                from = (k / 8) % 2 ? -0.0f : 0.0f;
                to = (float)(r1 * 1.5);
                break;
            case 5: /* an empty span */
                to = from;
                break;
            default:
                break;
            }
            double u0, u1, e[3] = {0, 0, 0};
            bool cross = false;
            if (looping) {
                double k0 = floor((double)from), k1 = floor((double)to);
                if (k1 - k0 != 0.0 && k1 - k0 != 1.0) {
                    continue; /* (to - from < 1: not reached) */
                }
                if (k1 - k0 == 1.0) {
                    cross = true;
                    for (int j = 0; j < 3; ++j) {
                        e[j] = track_at(track, n, 1.0, j);
                    }
                    crossed++;
                }
                u0 = (double)from - k0, u1 = (double)to - k1;
            } else {
                u0 = from < 0.0f ? 0.0 : from > 1.0f ? 1.0 : from;
                u1 = to < 0.0f ? 0.0 : to > 1.0f ? 1.0 : to;
                clamped++;
            }
            cb_root_delta want = {{0, 0, 0}, 0};
            for (int j = 0; j < 3; ++j) {
                double end = track_at(track, n, u1, j);
                end = cross ? e[j] + end : end;
                want.translation[j] = (float)(end - track_at(track, n, u0, j));
            }
            if (!moves_y) {
                want.translation[1] = 0.0f;
            }
            cb_root_delta got, blend;
            assert_int_equal(cb_clip_root_delta(clips[c], from, to, &got), CB_OK);
            cb_root_motion_entry en = {clips[c], from, to, 1.0f};
            assert_int_equal(cb_clip_blend_root_motion(&en, 1, &blend), CB_OK);
            CB_CHECK(
                memcmp(&want, &got, sizeof want) == 0 && memcmp(&want, &blend, sizeof want) == 0,
                "clip %zu (%s) from %a to %a: the track gives (%a %a %a %a), the delta "
                "(%a %a %a %a), the blend (%a %a %a %a)",
                c, cb_clip_name(clips[c]), (double)from, (double)to, (double)want.translation[0],
                (double)want.translation[1], (double)want.translation[2], (double)want.yaw,
                (double)got.translation[0], (double)got.translation[1], (double)got.translation[2],
                (double)got.yaw, (double)blend.translation[0], (double)blend.translation[1],
                (double)blend.translation[2], (double)blend.yaw);
            compared++;
            lifted += moves_y;
        }
        free(track);
    }
    cb_test_note("%zu straight deltas (%zu across a cycle boundary, %zu clamped, %zu with a "
                 "vertical part): the delta and the blend give the track's interpolated bits",
                 compared, crossed, clamped, lifted);
    CB_CHECK(crossed > 100 && clamped > 100 && lifted > 100, "every kind of frame should be tried");
    clip_set_finish(&cs);
}

/* The blend of several entries is the weighted mean of their deltas, summed in double in entry
 * order (weight times delta, the weights apart) and scaled by the inverse of the weights' sum:
 * the public blend must give exactly the bits of that mean, computed here from each entry's
 * public delta, whatever the entries' kinds (turning, lifted, clamped, looping; entries at
 * weight 0 skipped). */
static void blend_of_entries_is_the_weighted_mean(void **state)
{
    (void)state;
    const copy_kind kinds[] = {
        {CB_CLIP_WRAP_LOOP, true, false},
        {CB_CLIP_WRAP_CLAMP, true, true},
        {CB_CLIP_WRAP_LOOP, false, true},
        {CB_CLIP_WRAP_CLAMP, false, false},
    };
    clip_set cs;
    clip_set_init(&cs, kinds, sizeof kinds / sizeof kinds[0]);
    const cb_clip *const *clips = cs.clips;
    const size_t count = cs.count;
    uint64_t rng = 0x13198a2e03707344ull;
    size_t turned = 0;
    for (int k = 0; k < 20000; ++k) {
        cb_root_motion_entry es[5];
        size_t m = 1 + next_random(&rng) % 5;
        double sum[4] = {0, 0, 0, 0}, wsum = 0.0;
        for (size_t j = 0; j < m; ++j) {
            double r0 = (double)(next_random(&rng) >> 11) / 9007199254740992.0;
            double r1 = (double)(next_random(&rng) >> 11) / 9007199254740992.0;
            uint64_t r = next_random(&rng);
            float w = r % 7 == 0 ? 0.0f : (float)((r >> 8) % 1000) / 997.0f;
            es[j] =
                (cb_root_motion_entry){clips[(r >> 20) % count], (float)(r0 * 4.0 - 1.5), 0.0f, w};
            es[j].to = (float)(es[j].from + (r1 - 0.25) * ((r >> 40) % 2 ? 0.05 : 1.3));
            if (w == 0.0f) {
                continue;
            }
            cb_root_delta d;
            assert_int_equal(cb_clip_root_delta(es[j].clip, es[j].from, es[j].to, &d), CB_OK);
            const float v[4] = {d.translation[0], d.translation[1], d.translation[2], d.yaw};
            for (int q = 0; q < 4; ++q) {
                sum[q] += (double)w * v[q];
            }
            wsum += w;
            turned += d.yaw != 0.0f;
        }
        double inv = wsum > 0.0 ? 1.0 / wsum : 0.0;
        cb_root_delta want = {{(float)(sum[0] * inv), (float)(sum[1] * inv), (float)(sum[2] * inv)},
                              (float)(sum[3] * inv)};
        cb_root_delta got;
        assert_int_equal(cb_clip_blend_root_motion(es, m, &got), CB_OK);
        CB_CHECK(memcmp(&want, &got, sizeof want) == 0,
                 "blend %d of %zu entries gives (%a %a %a %a), the weighted mean (%a %a %a %a)", k,
                 m, (double)got.translation[0], (double)got.translation[1],
                 (double)got.translation[2], (double)got.yaw, (double)want.translation[0],
                 (double)want.translation[1], (double)want.translation[2], (double)want.yaw);
    }
    cb_test_note("20000 blends of 1 to 5 entries give the weighted mean's bits (%zu turning "
                 "entries)",
                 turned);
    CB_CHECK(turned > 100, "the turning copies should take part");
    clip_set_finish(&cs);
}

/* The crowd's root motion is the time stage's inline blend (asset_layout.h, cb_root_blend_add),
 * which until session 10 started each frame's delta from a root sample kept per clip slot and
 * character; it now samples both ends, as the public blend does. Five free clips (walk_f, run_f,
 * walk_fr, and copies of walk_l, looping, and run_b, clamped, whose roots rise and fall so that
 * the y component counts; no sync group) under a direct blend whose weights change per
 * character and frame, dropping clips out (a clip that comes back restarts at 0) while characters
 * are added and removed (a removal moves the last character into the gap): every frame, each
 * character's delta must be the bits of the public cb_clip_blend_root_motion, which samples both
 * ends, over its active clips' intervals as the crowd reports them (the clip times before and after
 * the frame, the kept weights). */
static void crowd_root_motion_gives_the_public_blend(void **state)
{
    (void)state;
    cb_error err = {0};
    cb_embedded *set = NULL;
    CB_CHECK(cb_embedded_create(NULL, &set, &err) == CB_OK, "%s", err.message);
    enum { CLIPS = 5, CAPACITY = 8, STEPS = 240 };
    static const char *const names[CLIPS] = {"walk_f", "run_f", "walk_fr", "walk_l", "run_b"};
    static const char *const params[CLIPS] = {"w0", "w1", "w2", "w3", "w4"};
    const cb_clip *clips[CLIPS];
    for (int k = 0; k < CLIPS; ++k) {
        clips[k] = cb_embedded_find_clip(set, names[k]);
        assert_non_null(clips[k]);
    }
    cb_clip *lifted[2] = {root_copy(set, clips[3], CB_CLIP_WRAP_LOOP, true, false),
                          root_copy(set, clips[4], CB_CLIP_WRAP_CLAMP, true, false)};
    clips[3] = lifted[0], clips[4] = lifted[1];
    cb_graph_builder_desc bd = {
        .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = CLIPS};
    cb_graph_builder *b = NULL;
    CB_CHECK(cb_graph_builder_create(&bd, &b, &err) == CB_OK, "%s", err.message);
    cb_graph_node nodes[CLIPS];
    for (int k = 0; k < CLIPS; ++k) {
        CB_CHECK(cb_graph_add_param(b, params[k], CB_PARAM_FLOAT, 1.0f, &err) == CB_OK, "%s",
                 err.message);
        cb_graph_clip_desc cd = {.name = params[k], .clip = names[k]};
        CB_CHECK(cb_graph_add_clip(b, &cd, &nodes[k], &err) == CB_OK, "%s", err.message);
    }
    cb_graph_direct_desc dd = {
        .name = "blend", .children = nodes, .weights = params, .child_count = CLIPS};
    cb_graph_node blend = {0};
    CB_CHECK(cb_graph_add_direct(b, &dd, &blend, &err) == CB_OK, "%s", err.message);
    cb_graph *g = NULL;
    CB_CHECK(cb_graph_build(b, &g, &err) == CB_OK, "%s", err.message);
    cb_graph_builder_destroy(b);
    const cb_graph *graphs[] = {g};
    cb_crowd_desc desc = {.skeleton = cb_embedded_skeleton(set),
                          .capacity = CAPACITY,
                          .graphs = graphs,
                          .graph_count = 1,
                          .thread_count = 1,
                          .keep_weights = true};
    cb_crowd *crowd = NULL;
    CB_CHECK(cb_crowd_create(&desc, &crowd, &err) == CB_OK, "%s", err.message);
    cb_character ch[CAPACITY];
    bool fresh[CAPACITY] = {false}; /* added since the last update: its clips start at its phase */
    for (uint32_t i = 0; i < 5; ++i) {
        assert_int_equal(cb_crowd_add(crowd, 0, 0.17f * (float)i, &ch[i]), CB_OK);
        fresh[i] = true;
    }
    float was[CLIPS][CAPACITY] = {{0}}; /* kept weights of the last update */
    const float dt = 1.0f / 60.0f;
    size_t compared = 0, restarted = 0, lifted_moves = 0;
    for (int f = 0; f < STEPS; ++f) {
        if (f == 60 || f == 150) { /* the first, then the second: the last moves into the gap */
            uint32_t gone = f == 60 ? 0 : 1, last = cb_crowd_count(crowd, 0) - 1;
            assert_int_equal(cb_crowd_remove(crowd, ch[gone]), CB_OK);
            ch[gone] = ch[last], fresh[gone] = fresh[last];
            for (int k = 0; k < CLIPS; ++k) {
                was[k][gone] = was[k][last];
            }
        }
        if (f == 100 || f == 151) {
            uint32_t n = cb_crowd_count(crowd, 0);
            assert_int_equal(cb_crowd_add(crowd, 0, 0.05f * (float)f, &ch[n]), CB_OK);
            fresh[n] = true;
        }
        uint32_t n = cb_crowd_count(crowd, 0);
        float from[CLIPS][CAPACITY];
        for (int k = 0; k < CLIPS; ++k) {
            float *w = cb_crowd_param_column(crowd, 0, (uint32_t)k);
            const float *t = cb_crowd_clip_times(crowd, 0, (uint32_t)k);
            for (uint32_t i = 0; i < n; ++i) {
                /* each clip out for a stretch now and then, by character */
                bool out = (f / 9 + (int)i * 3 + k * 5) % 7 == 0;
                w[i] = out ? 0.0f : 0.2f + 0.15f * (float)((f + (int)i * 11 + k * 23) % 9);
                /* where the crowd starts the clip: its time, or 0 when it comes back */
                from[k][i] = fresh[i] || was[k][i] > 0.0f ? t[i] : 0.0f;
            }
        }
        assert_int_equal(cb_crowd_update(crowd, dt), CB_OK);
        size_t stride = 0;
        const float *kept = cb_crowd_weights(crowd, 0, &stride);
        assert_non_null(kept);
        const cb_root_delta *got = cb_crowd_root_motion(crowd, 0);
        for (uint32_t i = 0; i < n; ++i) {
            cb_root_motion_entry e[CLIPS];
            size_t count = 0;
            for (int k = 0; k < CLIPS; ++k) {
                float w = kept[(size_t)k * stride + i];
                if (w > 0.0f) {
                    /* the crowd wraps its reported time: a frame moves less than a cycle */
                    float t = cb_crowd_clip_times(crowd, 0, (uint32_t)k)[i];
                    float to = t >= from[k][i] ? t : t + 1.0f;
                    e[count++] = (cb_root_motion_entry){clips[k], from[k][i], to, w};
                    restarted += !fresh[i] && was[k][i] == 0.0f;
                }
                was[k][i] = w;
            }
            fresh[i] = false;
            cb_root_delta want;
            assert_int_equal(cb_clip_blend_root_motion(e, count, &want), CB_OK);
            CB_CHECK(memcmp(&want, &got[i], sizeof want) == 0,
                     "frame %d, character %u: the crowd moved (%a %a %a %a), the public blend "
                     "(%a %a %a %a)",
                     f, i, (double)got[i].translation[0], (double)got[i].translation[1],
                     (double)got[i].translation[2], (double)got[i].yaw, (double)want.translation[0],
                     (double)want.translation[1], (double)want.translation[2], (double)want.yaw);
            compared++;
            lifted_moves += want.translation[1] != 0.0f;
        }
    }
    cb_test_note("%zu deltas (%zu with a vertical part), %zu clip restarts: the crowd's root "
                 "motion gives the public blend's bits",
                 compared, lifted_moves, restarted);
    CB_CHECK(restarted > 50, "the weights should drop clips out and bring them back: %zu",
             restarted);
    CB_CHECK(lifted_moves > 0, "the lifted copies should move characters vertically");
    cb_crowd_destroy(crowd);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
    cb_clip_destroy(lifted[0]);
    cb_clip_destroy(lifted[1]);
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clamped_clip_moves_the_root_once),
        cmocka_unit_test(one_shot_state_moves_the_root_once),
        cmocka_unit_test(looping_clip_delta_under_any_speed),
        cmocka_unit_test(blend_of_one_entry_is_its_delta),
        cmocka_unit_test(straight_delta_is_the_track_interpolated),
        cmocka_unit_test(blend_of_entries_is_the_weighted_mean),
        cmocka_unit_test(crowd_root_motion_gives_the_public_blend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
