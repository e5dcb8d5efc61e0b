/* cb_crowd_query_transition (crowd.h): a state machine's running transition, frame by frame,
 * against a plain restatement of graph.h's rules kept in double here. A transition's elapsed
 * time is the sum of the dt of the updates since it fired (every dt a multiple of 1/128 s, so
 * the sums are exact in float and in double), its progress elapsed / duration, its blend what
 * the graph says or inertialization once it interrupts; before it fires and after it ends the
 * machine reports none. The crossfade's progress is also the one the pose uses: the kept clip
 * weights are smoothstep(progress). A machine without weight holds its transition still.
 * Characters move in dense order (swap-remove) with their transitions. Bad arguments get an
 * error code and a message, and leave *out alone. */
#include "graph_fixture.h"

enum { IDLE, WALK, RUN, NSTATE };
static const char *const states[NSTATE] = {"idle", "walk", "run"};
static const int state_clip[NSTATE] = {CLIP_A, CLIP_B, CLIP_C};

typedef struct rule {
    int from, to;
    cb_compare op; /* on "speed" */
    float value;
    float duration;
    cb_transition_blend blend;
    cb_interruption interruption;
} rule;

/* idle -> walk may be interrupted by idle -> run (its source's transitions). */
static const rule rules[] = {
    {IDLE, WALK, CB_COMPARE_GREATER, 0.5f, 0.25f, CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_SOURCE},
    {IDLE, RUN, CB_COMPARE_GREATER, 2.0f, 0.125f, CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_NONE},
    {WALK, IDLE, CB_COMPARE_LESS, 0.3f, 0.1875f, CB_TRANSITION_INERTIALIZE, CB_INTERRUPTION_NONE},
    {WALK, RUN, CB_COMPARE_GREATER, 2.0f, 0.125f, CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_NONE},
    {RUN, WALK, CB_COMPARE_LESS, 2.0f, 0.25f, CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_NONE},
};
enum { NRULES = sizeof rules / sizeof rules[0] };

/* The reference machine: the state, the running rule (-1: none), seconds into it, its blend. */
typedef struct ref_machine {
    int cur, next, rule;
    double elapsed;
    cb_transition_blend blend;
} ref_machine;

typedef struct coverage {
    uint32_t finished[_CB_TRANSITION_BLEND_COUNT]; /* transitions run to their end, by blend */
    uint32_t interrupted_early, interrupted_late;  /* the source kept, or switched to `to` */
    uint32_t active_frames;
} coverage;

static double smoothstep(double x)
{
    return x * x * (3.0 - 2.0 * x);
}

static bool passes(const rule *t, float speed)
{
    return t->op == CB_COMPARE_GREATER ? speed > t->value : speed < t->value;
}

static void ref_fire(ref_machine *m, int k, bool interrupting, coverage *cov)
{
    if (interrupting) {
        /* The state the pose is closer to becomes the source: the destination once the
         * crossfade shows it at half weight or more. */
        bool late = smoothstep(m->elapsed / rules[m->rule].duration) >= 0.5;
        cov->interrupted_late += late;
        cov->interrupted_early += !late;
        m->cur = late ? m->next : m->cur;
    }
    *m = (ref_machine){m->cur, rules[k].to, k, 0.0,
                       interrupting ? CB_TRANSITION_INERTIALIZE : rules[k].blend};
}

/* One update of dt: the running transition advances (and may end), then the source state's
 * transitions are tested in order, while one runs only if its interruption rule allows. */
static void ref_step(ref_machine *m, float speed, double dt, coverage *cov)
{
    if (m->next >= 0) {
        m->elapsed += dt;
        if (m->elapsed >= rules[m->rule].duration) {
            cov->finished[m->blend]++;
            m->cur = m->next, m->next = -1;
        } else if (rules[m->rule].interruption == CB_INTERRUPTION_NONE) {
            return;
        }
    }
    for (int k = 0; k < NRULES; ++k) {
        if (rules[k].from == m->cur && rules[k].to != m->next && passes(&rules[k], speed)) {
            ref_fire(m, k, m->next >= 0, cov);
            return;
        }
    }
}

/* The machine of the rules, named "locomotion", its parameter "speed" added with it. */
static cb_graph_node add_locomotion(cb_graph_builder *b)
{
    cb_error err = {0};
    OK(cb_graph_add_param(b, "speed", CB_PARAM_FLOAT, 0.0f, &err));
    cb_graph_state st[NSTATE];
    for (int s = 0; s < NSTATE; ++s) {
        st[s] = (cb_graph_state){.name = states[s], .node = add_clip(b, states[s], state_clip[s])};
    }
    cb_graph_condition conds[NRULES];
    cb_graph_transition tr[NRULES];
    for (int k = 0; k < NRULES; ++k) {
        conds[k] = (cb_graph_condition){"speed", rules[k].op, rules[k].value};
        tr[k] = (cb_graph_transition){.from = states[rules[k].from],
                                      .to = states[rules[k].to],
                                      .conditions = &conds[k],
                                      .condition_count = 1,
                                      .duration_s = rules[k].duration,
                                      .blend = rules[k].blend,
                                      .interruption = rules[k].interruption};
    }
    cb_graph_state_machine_desc d = {.name = "locomotion",
                                     .states = st,
                                     .state_count = NSTATE,
                                     .transitions = tr,
                                     .transition_count = NRULES};
    cb_graph_node m = {0};
    OK(cb_graph_add_state_machine(b, &d, &m, &err));
    return m;
}

static cb_graph *machine_graph(const scene *sc)
{
    cb_graph_builder *b = builder_of(sc);
    add_locomotion(b);
    return build(b);
}

/* The locomotion machine as state "go" of a machine "outer", whose other state "stand" plays a
 * clip; "out" switches between them at once (no blend time). */
static cb_graph *nested_graph(const scene *sc)
{
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    cb_graph_node inner = add_locomotion(b);
    OK(cb_graph_add_param(b, "out", CB_PARAM_BOOL, 0.0f, &err));
    cb_graph_state st[2] = {{.name = "go", .node = inner},
                            {.name = "stand", .node = add_clip(b, "stand", CLIP_E)}};
    cb_graph_condition out_true = {"out", CB_COMPARE_TRUE, 0.0f};
    cb_graph_condition out_false = {"out", CB_COMPARE_FALSE, 0.0f};
    cb_graph_transition tr[2] = {
        {.from = "go", .to = "stand", .conditions = &out_true, .condition_count = 1},
        {.from = "stand", .to = "go", .conditions = &out_false, .condition_count = 1}};
    cb_graph_state_machine_desc d = {
        .name = "outer", .states = st, .state_count = 2, .transitions = tr, .transition_count = 2};
    cb_graph_node m = {0};
    OK(cb_graph_add_state_machine(b, &d, &m, &err));
    return build(b);
}

/* The crowd's answer for dense index i against the reference, and against the weights the
 * pose used (clip slots are the states' clips, in state order). */
static void check_character(const cb_crowd *c, uint32_t i, const ref_machine *m, int frame)
{
    cb_crowd_transition t;
    cb_error err = {0};
    CB_CHECK(cb_crowd_query_transition(c, 0, 0, i, &t, &err) == CB_OK, "%s", err.message);
    CB_CHECK(t.from == (uint32_t)m->cur && t.from == cb_crowd_state(c, 0, 0, i),
             "frame %d character %u: from %u, rules say %d", frame, i, t.from, m->cur);
    CB_CHECK(t.to == cb_crowd_next_state(c, 0, 0, i), "frame %d character %u", frame, i);
    if (m->next < 0) {
        CB_CHECK(
            !t.active && t.to == CB_INVALID_INDEX && t.elapsed_s == 0.0f && t.duration_s == 0.0f &&
                t.progress == 0.0f && t.blend == _CB_TRANSITION_BLEND_DEFAULT,
            "frame %d character %u: a transition to %u reported, rules say none", frame, i, t.to);
        CB_CHECK(fabsf(kept(c, (uint32_t)m->cur, i) - 1.0f) < 1e-6f, "frame %d", frame);
        return;
    }
    double d = rules[m->rule].duration, x = m->elapsed / d;
    CB_CHECK(t.active && t.to == (uint32_t)m->next && t.blend == m->blend,
             "frame %d character %u: active %d to %u blend %d, rules say to %d blend %d", frame, i,
             t.active, t.to, t.blend, m->next, m->blend);
    CB_CHECK(t.elapsed_s == m->elapsed && t.duration_s == d,
             "frame %d character %u: %.9g s of %.9g, rules say %.9g of %.9g", frame, i,
             (double)t.elapsed_s, (double)t.duration_s, m->elapsed, d);
    CB_CHECK(t.progress >= 0.0f && t.progress < 1.0f && fabs(t.progress - x) <= 1e-7,
             "frame %d character %u: progress %.9g, rules say %.9g", frame, i, (double)t.progress,
             x);
    /* What the pose shows of the destination: smoothstep(progress), or all of it. */
    double to_w = m->blend == CB_TRANSITION_CROSSFADE ? smoothstep(x) : 1.0;
    CB_CHECK(fabs(kept(c, (uint32_t)m->next, i) - to_w) <= 2e-5 &&
                 fabs(kept(c, (uint32_t)m->cur, i) - (1.0 - to_w)) <= 2e-5,
             "frame %d character %u: weights %g, %g; progress says %g", frame, i,
             (double)kept(c, (uint32_t)m->next, i), (double)kept(c, (uint32_t)m->cur, i), to_w);
}

/* Speeds of 0, 1 and 3 m/s held for a few frames each, dt from 1/128 to 5/128 s; every 97th
 * frame the character at dense index 1 is removed (the last moves into its place, its
 * reference with it) and a new one added. */
static void crowd_transition_follows_the_rules(void **state)
{
    graph_fx *fx = *state;
    cb_prng r = fx->r;
    cb_graph *g = machine_graph(fx->sc);
    enum { N = 16, FRAMES = 900 };
    static const float speeds[3] = {0.0f, 1.0f, 3.0f};
    cb_crowd *c = crowd_of(fx->sc, g, N, 2, 8);
    add_characters(c, N, 0.1f);
    float *speed = column(c, "speed");
    ref_machine ref[N];
    for (int i = 0; i < N; ++i) {
        ref[i] = (ref_machine){IDLE, -1, -1, 0.0, _CB_TRANSITION_BLEND_DEFAULT};
    }
    coverage cov = {0};
    for (int f = 0; f < FRAMES; ++f) {
        if (f % 97 == 96) {
            cb_character ch;
            assert_int_equal(cb_crowd_remove(c, cb_crowd_character_at(c, 0, 1)), CB_OK);
            ref[1] = ref[N - 1];
            assert_int_equal(cb_crowd_add(c, 0, 0.0f, &ch), CB_OK);
            ref[N - 1] = (ref_machine){IDLE, -1, -1, 0.0, _CB_TRANSITION_BLEND_DEFAULT};
            speed[N - 1] = 0.0f;
        }
        double dt = (double)(1 + cb_prng_below(&r, 5)) / 128.0;
        for (int i = 0; i < N; ++i) {
            if (cb_prng_below(&r, 10) == 0) {
                speed[i] = speeds[cb_prng_below(&r, 3)];
            }
        }
        assert_int_equal(cb_crowd_update(c, (float)dt), CB_OK);
        for (int i = 0; i < N; ++i) {
            ref_step(&ref[i], speed[i], dt, &cov);
            check_character(c, (uint32_t)i, &ref[i], f);
            cov.active_frames += ref[i].next >= 0;
        }
    }
    /* Every path was taken: transitions of both blends ran to their end, and idle -> walk was
     * interrupted both before and after its crossfade's midpoint. */
    print_message("# %u active frames; finished %u crossfades, %u inertializations; interrupted "
                  "%u early, %u late\n",
                  cov.active_frames, cov.finished[CB_TRANSITION_CROSSFADE],
                  cov.finished[CB_TRANSITION_INERTIALIZE], cov.interrupted_early,
                  cov.interrupted_late);
    assert_true(cov.finished[CB_TRANSITION_CROSSFADE] > 0);
    assert_true(cov.finished[CB_TRANSITION_INERTIALIZE] > 0);
    assert_true(cov.interrupted_early > 0 && cov.interrupted_late > 0);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* One transition of 0.25 s at a constant 1/32 s a frame: active for exactly 8 updates (elapsed
 * 0, 1/32, ..., 7/32 s), inactive before it fires and from the update that reaches 0.25 s. */
static void crowd_transition_one_crossfade(void **state)
{
    graph_fx *fx = *state;
    cb_graph *g = machine_graph(fx->sc);
    cb_crowd *c = crowd_of(fx->sc, g, 1, 1, 8);
    add_characters(c, 1, 0.0f);
    cb_crowd_transition t;
    int active = 0;
    for (int f = 0; f < 20; ++f) {
        column(c, "speed")[0] = f >= 5 ? 1.0f : 0.0f; /* fires in update 5 */
        assert_int_equal(cb_crowd_update(c, DT), CB_OK);
        assert_int_equal(cb_crowd_query_transition(c, 0, 0, 0, &t, NULL), CB_OK);
        bool want = f >= 5 && f < 13;
        CB_CHECK(t.active == want, "update %d: active %d", f, t.active);
        CB_CHECK(t.from == (uint32_t)(f < 13 ? IDLE : WALK), "update %d: from %u", f, t.from);
        if (want) {
            CB_CHECK(t.elapsed_s == (float)(f - 5) * DT && t.duration_s == 0.25f &&
                         t.progress == (float)(f - 5) / 8.0f && t.to == WALK,
                     "update %d: %g s of %g, progress %g", f, (double)t.elapsed_s,
                     (double)t.duration_s, (double)t.progress);
        }
        active += t.active;
    }
    assert_int_equal(active, 8);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* A machine steps only in the updates where it has weight: while "outer" stands, the inner
 * transition holds its elapsed time, and it goes on from there when "go" has weight again
 * (the outer machine steps first in an update, so its switch counts in that same update). */
static void crowd_transition_holds_without_weight(void **state)
{
    graph_fx *fx = *state;
    cb_graph *g = nested_graph(fx->sc);
    uint32_t loco;
    assert_int_equal(cb_graph_find_state_machine(g, "locomotion", &loco), CB_OK);
    cb_crowd *c = crowd_of(fx->sc, g, 1, 1, 8);
    add_characters(c, 1, 0.0f);
    cb_crowd_transition t;
    int stepped = -1; /* updates of the inner machine since its transition fired */
    for (int f = 0; f < 24; ++f) {
        bool out = f >= 5 && f < 10;
        column(c, "speed")[0] = f >= 2 ? 1.0f : 0.0f; /* fires in update 2 */
        column(c, "out")[0] = out ? 1.0f : 0.0f;
        assert_int_equal(cb_crowd_update(c, DT), CB_OK);
        stepped += f >= 2 && !out;
        assert_int_equal(cb_crowd_query_transition(c, 0, loco, 0, &t, NULL), CB_OK);
        bool want = stepped >= 0 && stepped < 8; /* 0.25 s is 8 updates of DT */
        CB_CHECK(t.active == want && (!want || t.elapsed_s == (float)stepped * DT),
                 "update %d: active %d, %g s; %d updates of the machine since it fired", f,
                 t.active, (double)t.elapsed_s, stepped);
    }
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* A crowd of two kinds, the second a plain clip without machines. */
static cb_crowd *two_kinds(const scene *sc, cb_graph *g, cb_graph **plain)
{
    cb_graph_builder *b = builder_of(sc);
    add_clip(b, "alone", CLIP_A);
    *plain = build(b);
    const cb_graph *gs[2] = {g, *plain};
    cb_crowd_desc d = {
        .skeleton = sc->sk, .capacity = 4, .graphs = gs, .graph_count = 2, .thread_count = 1};
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "%s", err.message);
    cb_character ch;
    for (uint32_t kind = 0; kind < 2; ++kind) {
        for (int k = 0; k < 2; ++k) {
            assert_int_equal(cb_crowd_add(c, kind, 0.0f, &ch), CB_OK);
        }
    }
    return c;
}

static void expect_refused(const cb_crowd *c, uint32_t kind, uint32_t machine, uint32_t dense,
                           bool null_out, cb_result want, const char *names)
{
    cb_crowd_transition t, before;
    memset(&t, 0xA5, sizeof t);
    before = t;
    cb_error err = {0};
    cb_result got = cb_crowd_query_transition(c, kind, machine, dense, null_out ? NULL : &t, &err);
    CB_CHECK(got == want && err.code == want && strstr(err.message, names) != NULL,
             "kind %u machine %u dense %u: %s, \"%s\"; want %s naming %s", kind, machine, dense,
             cb_result_str(got), err.message, cb_result_str(want), names);
    assert_memory_equal(&t, &before, sizeof t);
    /* err is optional. */
    assert_int_equal(cb_crowd_query_transition(c, kind, machine, dense, null_out ? NULL : &t, NULL),
                     want);
}

static void crowd_transition_bad_arguments(void **state)
{
    graph_fx *fx = *state;
    cb_graph *g = machine_graph(fx->sc), *plain = NULL;
    cb_crowd *c = two_kinds(fx->sc, g, &plain);
    cb_crowd_transition t;
    expect_refused(NULL, 0, 0, 0, false, CB_ERR_NULL_ARGUMENT, "crowd");
    expect_refused(c, 0, 0, 0, true, CB_ERR_NULL_ARGUMENT, "out");
    expect_refused(c, 2, 0, 0, false, CB_ERR_INVALID_ARGUMENT, "kind 2");
    expect_refused(c, UINT32_MAX, 0, 0, false, CB_ERR_INVALID_ARGUMENT, "kind");
    expect_refused(c, 0, 1, 0, false, CB_ERR_INVALID_ARGUMENT, "machine 1");
    expect_refused(c, 1, 0, 0, false, CB_ERR_INVALID_ARGUMENT, "0 state machines");
    expect_refused(c, 0, 0, 2, false, CB_ERR_INVALID_ARGUMENT, "dense index 2");
    expect_refused(c, 0, 0, UINT32_MAX, false, CB_ERR_INVALID_ARGUMENT, "dense");
    /* A removed character's dense index is out of range once its kind shrank. */
    assert_int_equal(cb_crowd_query_transition(c, 0, 0, 1, &t, NULL), CB_OK);
    assert_int_equal(cb_crowd_remove(c, cb_crowd_character_at(c, 0, 1)), CB_OK);
    expect_refused(c, 0, 0, 1, false, CB_ERR_INVALID_ARGUMENT, "1 characters");
    /* A new character starts in the initial state, with no transition. */
    assert_int_equal(cb_crowd_query_transition(c, 0, 0, 0, &t, NULL), CB_OK);
    assert_true(!t.active && t.from == IDLE && t.to == CB_INVALID_INDEX);
    cb_crowd_destroy(c);
    cb_graph_destroy(plain);
    cb_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GRAPH_CASE(crowd_transition_follows_the_rules),
        GRAPH_CASE(crowd_transition_one_crossfade),
        GRAPH_CASE(crowd_transition_holds_without_weight),
        GRAPH_CASE(crowd_transition_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
