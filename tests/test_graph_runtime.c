/* graph runtime: what a graph does to a character, against independent references.
 *
 * The scenes (common/graph_fixture.h) are a small random skeleton with random clips whose keys
 * the test keeps: the double-precision reference of tests/common/anim_test.h resamples them, so
 * every pose here is checked against sampling, blending, slerp and local-to-model done in double
 * by code that shares nothing with the library. Weights, state sequences and times are checked
 * against closed forms or a plain re-statement of the rules in graph.h; a state machine's
 * inertialization against the quintic's closed form; IK and transitions on the embedded
 * humanoid. */
#include "graph_fixture.h"

/* ------------------------------------------------------------------------------------------ */
/* State machines                                                                             */

/* The rules of graph.h for one machine, restated plainly: transitions tested in order each
 * frame (any-state ones first), the first whose conditions hold fires; a trigger it used is
 * consumed; a transition with a duration runs to its end (interruption none) and blocks the
 * others meanwhile; an any-state transition does not restart the state it leads to. */
typedef struct ref_transition {
    int from, to; /* from -1: any state */
    int cond_count;
    struct {
        int param;
        cb_compare op;
        float value;
    } cond[2];
    float duration;
} ref_transition;

enum { P_SPEED, P_MODE, P_TIRED, P_SPRINT, P_COUNT };
static const char *const sm_params[P_COUNT] = {"speed", "mode", "tired", "sprint"};
static const cb_param_type sm_types[P_COUNT] = {CB_PARAM_FLOAT, CB_PARAM_INT, CB_PARAM_BOOL,
                                                CB_PARAM_TRIGGER};
static const char *const sm_states[3] = {"idle", "walk", "run"};
static const ref_transition sm_rules[] = {
    {-1, 0, 1, {{P_MODE, CB_COMPARE_EQUAL, 3.0f}}, 0.0f},
    {0, 1, 1, {{P_SPEED, CB_COMPARE_GREATER, 0.5f}}, 0.2f},
    {1, 2, 1, {{P_SPRINT, CB_COMPARE_TRUE, 0.0f}}, 0.1f},
    {1, 0, 1, {{P_SPEED, CB_COMPARE_LESS, 0.3f}}, 0.2f},
    {2, 1, 1, {{P_TIRED, CB_COMPARE_TRUE, 0.0f}}, 0.0f},
    {2, 0, 2, {{P_SPEED, CB_COMPARE_LESS, 0.3f}, {P_TIRED, CB_COMPARE_FALSE, 0.0f}}, 0.15f},
};
enum { SM_RULES = sizeof sm_rules / sizeof sm_rules[0] };

typedef struct ref_machine {
    int cur, next, rule;
    float elapsed;
} ref_machine;

static bool ref_holds(cb_compare op, float v, float value)
{
    switch (op) {
    case CB_COMPARE_TRUE:
        return v != 0.0f;
    case CB_COMPARE_FALSE:
        return v == 0.0f;
    case CB_COMPARE_GREATER:
        return v > value;
    case CB_COMPARE_LESS:
        return v < value;
    case CB_COMPARE_EQUAL:
        return v == value;
    default:
        return v != value;
    }
}

static void ref_step(ref_machine *m, float *params, float dt)
{
    if (m->next >= 0) {
        m->elapsed += dt;
        if (m->elapsed >= sm_rules[m->rule].duration) {
            m->cur = m->next, m->next = -1;
        } else {
            return; /* interruption none: nothing else may fire */
        }
    }
    for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < SM_RULES; ++k) {
            const ref_transition *t = &sm_rules[k];
            if ((t->from < 0) != (pass == 0) || (t->from >= 0 && t->from != m->cur)) {
                continue;
            }
            if (t->from < 0 && t->to == m->cur) {
                continue;
            }
            bool ok = true;
            for (int c = 0; c < t->cond_count; ++c) {
                ok = ok && ref_holds(t->cond[c].op, params[t->cond[c].param], t->cond[c].value);
            }
            if (!ok) {
                continue;
            }
            for (int c = 0; c < t->cond_count; ++c) {
                if (t->cond[c].param == P_SPRINT) {
                    params[P_SPRINT] = 0.0f;
                }
            }
            if (t->duration <= 0.0f) {
                m->cur = t->to;
            } else {
                m->next = t->to, m->rule = k, m->elapsed = 0.0f;
            }
            return;
        }
    }
}

static cb_graph *machine_graph(const scene *sc)
{
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    for (int p = 0; p < P_COUNT; ++p) {
        OK(cb_graph_add_param(b, sm_params[p], sm_types[p], 0.0f, &err));
    }
    cb_graph_state st[3];
    for (int s = 0; s < 3; ++s) {
        st[s] = (cb_graph_state){.name = sm_states[s], .node = add_clip(b, sm_states[s], s)};
    }
    cb_graph_transition tr[SM_RULES];
    cb_graph_condition conds[SM_RULES][2];
    for (int k = 0; k < SM_RULES; ++k) {
        const ref_transition *t = &sm_rules[k];
        for (int c = 0; c < t->cond_count; ++c) {
            conds[k][c] =
                (cb_graph_condition){sm_params[t->cond[c].param], t->cond[c].op, t->cond[c].value};
        }
        tr[k] = (cb_graph_transition){.from = t->from < 0 ? NULL : sm_states[t->from],
                                      .to = sm_states[t->to],
                                      .conditions = conds[k],
                                      .condition_count = (uint32_t)t->cond_count,
                                      .duration_s = t->duration,
                                      .blend = k == 5 ? CB_TRANSITION_INERTIALIZE
                                                      : CB_TRANSITION_CROSSFADE};
    }
    cb_graph_state_machine_desc sm = {.name = "locomotion",
                                      .states = st,
                                      .state_count = 3,
                                      .transitions = tr,
                                      .transition_count = SM_RULES};
    cb_graph_node m = {0};
    OK(cb_graph_add_state_machine(b, &sm, &m, &err));
    return build(b);
}

/* Random parameters for 48 characters over 600 frames: every frame, every character's state,
 * next state and trigger match the plain restatement of the rules. */
static void graph_state_machine_follows_its_rules(void **state)
{
    graph_fx *fx = *state;
    cb_prng r = fx->r;
    scene *sc = fx->sc;
    cb_graph *g = machine_graph(sc);
    enum { N = 48, FRAMES = 600 };
    cb_crowd *c = crowd_of(sc, g, N, 2, 16);
    add_characters(c, N, 0.13f);
    float *cols[P_COUNT];
    for (int p = 0; p < P_COUNT; ++p) {
        cols[p] = column(c, sm_params[p]);
    }
    ref_machine ref[N];
    float params[N][P_COUNT];
    memset(params, 0, sizeof params);
    for (int i = 0; i < N; ++i) {
        ref[i] = (ref_machine){0, -1, 0, 0.0f};
    }
    size_t fired = 0, consumed = {0}, held = {0};
    for (int f = 0; f < FRAMES; ++f) {
        for (int i = 0; i < N; ++i) {
            float *p = params[i];
            p[P_SPEED] = fminf(fmaxf(p[P_SPEED] + cb_prng_range(&r, -0.15f, 0.15f), 0.0f), 1.0f);
            p[P_MODE] = cb_prng_below(&r, 40) == 0 ? 3.0f : (float)cb_prng_below(&r, 3);
            if (cb_prng_below(&r, 20) == 0) {
                p[P_TIRED] = p[P_TIRED] != 0.0f ? 0.0f : 1.0f;
            }
            if (cb_prng_below(&r, 15) == 0) {
                p[P_SPRINT] = 1.0f;
            }
            for (int k = 0; k < P_COUNT; ++k) {
                cols[k][i] = p[k];
            }
        }
        assert_int_equal(cb_crowd_update(c, DT), CB_OK);
        for (int i = 0; i < N; ++i) {
            int before = ref[i].cur;
            bool had = params[i][P_SPRINT] != 0.0f;
            ref_step(&ref[i], params[i], DT);
            fired += ref[i].cur != before || ref[i].next >= 0;
            consumed += had && params[i][P_SPRINT] == 0.0f;
            held += had && params[i][P_SPRINT] != 0.0f;
            CB_CHECK(cb_crowd_state(c, 0, 0, (uint32_t)i) == (uint32_t)ref[i].cur,
                     "frame %d character %d: state %u, rules say %d", f, i,
                     cb_crowd_state(c, 0, 0, (uint32_t)i), ref[i].cur);
            uint32_t want_next = ref[i].next < 0 ? UINT32_MAX : (uint32_t)ref[i].next;
            CB_CHECK(cb_crowd_next_state(c, 0, 0, (uint32_t)i) == want_next,
                     "frame %d character %d: next state %u, rules say %u", f, i,
                     cb_crowd_next_state(c, 0, 0, (uint32_t)i), want_next);
            CB_CHECK(cols[P_SPRINT][i] == params[i][P_SPRINT],
                     "frame %d character %d: trigger %g, rules say %g", f, i,
                     (double)cols[P_SPRINT][i], (double)params[i][P_SPRINT]);
        }
    }
    /* The run exercised what it claims to: transitions, consumed and waiting triggers. */
    cb_test_note("%zu transition frames, %zu triggers consumed, %zu trigger-frames waiting", fired,
                 consumed, held);
    assert_true(fired > 1000 && consumed > 50 && held > 200);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* A transition with an exit time fires on the first frame whose state time (cycles of the
 * state's clip at the state's speed, dt exact in binary) has reached it: counted in closed
 * form. */
static void graph_exit_time_fires_on_the_counted_frame(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    static const struct {
        float exit_time, state_speed;
        bool condition;
    } cases[] = {
        {0.75f, 1.0f, false}, {1.5f, 1.0f, false}, {0.75f, 2.0f, false}, {0.25f, 1.0f, true}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_graph_builder *b = builder_of(sc);
        cb_error err = {0};
        OK(cb_graph_add_param(b, "go", CB_PARAM_BOOL, 0.0f, &err));
        cb_graph_state st[2] = {
            {.name = "first", .node = add_clip(b, "a", CLIP_A), .speed = cases[k].state_speed},
            {.name = "second", .node = add_clip(b, "b", CLIP_B)}};
        cb_graph_condition cond = {.param = "go", .op = CB_COMPARE_TRUE};
        cb_graph_transition tr = {.from = "first",
                                  .to = "second",
                                  .has_exit_time = true,
                                  .exit_time = cases[k].exit_time,
                                  .conditions = cases[k].condition ? &cond : NULL,
                                  .condition_count = cases[k].condition ? 1 : 0};
        cb_graph_state_machine_desc sm = {
            .states = st, .state_count = 2, .transitions = &tr, .transition_count = 1};
        cb_graph_node m = {0};
        OK(cb_graph_add_state_machine(b, &sm, &m, &err));
        cb_graph *g = build(b);
        cb_crowd *c = crowd_of(sc, g, 4, 1, 0);
        add_characters(c, 1, 0.0f);
        /* Clip a lasts 1 s: the state time after f updates is f * dt * speed cycles; the
         * machine tests it before the frame's own advance, so frame f (from 1) fires when
         * (f - 1) * dt * speed >= exit_time; with a condition, not before it holds (frame 40). */
        int want = (int)ceil(cases[k].exit_time / (DT * cases[k].state_speed)) + 1;
        if (cases[k].condition && want < 40) {
            want = 40;
        }
        int got = -1;
        for (int f = 1; f <= 200 && got < 0; ++f) {
            column(c, "go")[0] = f >= 40 ? 1.0f : 0.0f;
            cb_crowd_update(c, DT);
            got = cb_crowd_state(c, 0, 0, 0) == 1 ? f : -1;
        }
        CB_CHECK(got == want, "case %zu: fired on frame %d, counted %d", k, got, want);
        cb_crowd_destroy(c);
        cb_graph_destroy(g);
    }
}

/* A two-state machine: a -> b when "go", duration 0.25 s, crossfade or inertialize; with a
 * third state and an interrupting transition when asked. */
typedef struct machine_opts {
    cb_transition_blend blend;
    cb_interruption interruption;
    float duration;
    bool third; /* state "c" and b -> c on "go2" (and a -> c on "go2" for SOURCE) */
} machine_opts;

static cb_graph *two_state_graph(const scene *sc, machine_opts o)
{
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    OK(cb_graph_add_param(b, "go", CB_PARAM_BOOL, 0.0f, &err));
    OK(cb_graph_add_param(b, "go2", CB_PARAM_BOOL, 0.0f, &err));
    cb_graph_clip_desc bd = {.name = "b", .clip = "b", .start_offset = 0.25f};
    cb_graph_node bn = {0};
    cb_graph_node an = add_clip(b, "a", CLIP_A);
    OK(cb_graph_add_clip(b, &bd, &bn, &err));
    cb_graph_state st[3] = {{.name = "a", .node = an},
                            {.name = "b", .node = bn},
                            {.name = "c", .node = add_clip(b, "c", CLIP_C)}};
    cb_graph_condition go = {.param = "go", .op = CB_COMPARE_TRUE};
    cb_graph_condition go2 = {.param = "go2", .op = CB_COMPARE_TRUE};
    cb_graph_transition tr[3] = {
        {.from = "a",
         .to = "b",
         .conditions = &go,
         .condition_count = 1,
         .duration_s = o.duration,
         .blend = o.blend,
         .interruption = o.interruption},
        {.from = "b",
         .to = "c",
         .conditions = &go2,
         .condition_count = 1,
         .duration_s = 0.3f,
         .blend = o.blend},
        {.from = "a",
         .to = "c",
         .conditions = &go2,
         .condition_count = 1,
         .duration_s = 0.3f,
         .blend = o.blend},
    };
    cb_graph_state_machine_desc sm = {.states = st,
                                      .state_count = o.third ? 3 : 2,
                                      .transitions = tr,
                                      .transition_count = o.third ? 3 : 1};
    cb_graph_node m = {0};
    OK(cb_graph_add_state_machine(b, &sm, &m, &err));
    return build(b);
}

/* Crossfade: during the transition the weights are 1 - s and s with s the smoothstep of the
 * elapsed fraction, the destination starts at its start offset and plays at its own rate, the
 * pose is the slerp of the two clips' poses (checked against the double reference). */
static void graph_crossfade_matches_the_reference(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    cb_graph *g = two_state_graph(
        sc, (machine_opts){CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_NONE, 0.25f, false});
    enum { N = 5 };
    cb_crowd *c = crowd_of(sc, g, N, 1, 0);
    add_characters(c, N, 0.21f);
    cb_err_track te = cb_err_track_make("crossfade pose translation (m)");
    cb_err_track re = cb_err_track_make("crossfade pose rotation (rad)");
    cb_err_track we = cb_err_track_make("crossfade weight");
    cb_err_track be = cb_err_track_make("destination time");
    int during = 0;
    for (int f = 0; f < 40; ++f) {
        for (uint32_t i = 0; i < N; ++i) {
            column(c, "go")[i] = f >= 10 + (int)i ? 1.0f : 0.0f; /* fires on frame 10 + i */
        }
        cb_crowd_update(c, DT);
        for (uint32_t i = 0; i < N; ++i) {
            int k = f - (10 + (int)i); /* frames since the firing frame */
            double s = 0.0;
            if (k >= 0) {
                double x = fmin(k * (double)DT / 0.25, 1.0);
                s = x * x * (3.0 - 2.0 * x);
                during += x < 1.0 && k > 0;
            }
            cb_err_track_add(&we, kept(c, 0, i), 1.0 - s, i);
            cb_err_track_add(&we, kept(c, 1, i), s, i);
            if (k > 0) {
                /* From its start offset, 0.25. */
                cb_err_track_add(&be, clip_time(c, 1, i), fmod(0.25 + k * (double)DT / 0.75, 1.0),
                                 i);
            }
            rpose pa = ref_clip(sc, CLIP_A, clip_time(c, 0, i));
            rpose pb = ref_clip(sc, CLIP_B, clip_time(c, 1, i));
            rpose want = s > 0.0 ? ref_slerp(&pa, &pb, s, NULL) : pa;
            if (s >= 1.0) {
                want = pb;
            }
            check_pose(&te, &re, sc, &want, cb_crowd_matrices(c, 0, i), (size_t)(f * N) + i);
        }
    }
    assert_true(during >= 5 * 6);
    cb_err_track_check(&we, 1e-6); /* the smoothstep in float */
    cb_err_track_check(&be, 1e-6); /* k additions of dt / 0.75 in float */
    cb_err_track_check(&te, POSE_T_BOUND);
    cb_err_track_check(&re, POSE_R_BOUND);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* The offset fraction left at u = t / t1 of an inertialization starting at rest: the quintic
 * with x(0) = 1, x'(0) = 0, x''(0) = -20 / t1^2 (Bollo's a0 for v0 = 0) and x, x', x'' zero at
 * t1, which factors as (1 - u)^4 (1 + 4u). */
static double inertial_fraction(double u)
{
    if (u >= 1.0) {
        return 0.0;
    }
    double v = 1.0 - u;
    return v * v * v * v * (1.0 + 4.0 * u);
}

/* Rotates unit quaternion q by angle about a unit axis (on the left). */
static void rotate_left(const double axis[3], double angle, const double q[4], double out[4])
{
    double h = 0.5 * angle, s = sin(h);
    double r[4] = {axis[0] * s, axis[1] * s, axis[2] * s, cos(h)};
    dref_quat_mul(r, q, out);
}

/* Inertialization, joint by joint on a flat skeleton: the first frame shows exactly the pose
 * of the frame before; then the pose is the destination plus the captured offset (axis-angle
 * and translation) scaled by the quintic's closed form; at the end it is the destination. */
static void graph_inertialization_follows_the_quintic(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    const float t1 = 0.25f;
    cb_graph *g = two_state_graph(
        sc, (machine_opts){CB_TRANSITION_INERTIALIZE, CB_INTERRUPTION_NONE, t1, false});
    cb_crowd *c = crowd_of(sc, g, 4, 1, 0);
    add_characters(c, 1, 0.4f);
    cb_err_track fe = cb_err_track_make("first frame against the previous (rad or m)");
    cb_err_track oe = cb_err_track_make("offset against the quintic (rad or m)");
    cb_err_track de = cb_err_track_make("after the end against the destination (rad or m)");
    rpose prev = {0}, dst0 = {0}, shown0 = {0};
    const int fire = 12;
    for (int f = 0; f < fire + 16; ++f) {
        column(c, "go")[0] = f >= fire ? 1.0f : 0.0f;
        cb_crowd_update(c, DT);
        rpose now = read_flat(cb_crowd_matrices(c, 0, 0));
        int k = f - fire;
        if (k >= 0) {
            rpose dst = ref_clip(sc, CLIP_B, clip_time(c, 1, 0));
            double frac = inertial_fraction(k * (double)DT / t1);
            if (k == 0) {
                double t, a;
                pose_diff(&now, &prev, &t, &a);
                cb_err_track_add(&fe, a, 0.0, 0);
                cb_err_track_add(&fe, t, 0.0, 0);
                dst0 = dst, shown0 = now;
            }
            for (size_t j = 0; j < NJ; ++j) {
                /* The offset captured: q_off = shown0 * conj(dst0) (short arc), t_off. */
                double conj[4] = {-dst0.x[j].q[0], -dst0.x[j].q[1], -dst0.x[j].q[2],
                                  dst0.x[j].q[3]};
                double off[4];
                dref_quat_mul(shown0.x[j].q, conj, off);
                if (off[3] < 0.0) {
                    for (int e = 0; e < 4; ++e) {
                        off[e] = -off[e];
                    }
                }
                double sn = sqrt(off[0] * off[0] + off[1] * off[1] + off[2] * off[2]);
                double angle = 2.0 * atan2(sn, off[3]);
                double axis[3] = {1.0, 0.0, 0.0};
                if (sn > 1e-12) {
                    axis[0] = off[0] / sn, axis[1] = off[1] / sn, axis[2] = off[2] / sn;
                }
                double want_q[4];
                rotate_left(axis, angle * frac, dst.x[j].q, want_q);
                cb_err_track *t = frac > 0.0 ? &oe : &de;
                cb_err_track_add(t, quat_angle(now.x[j].q, want_q), 0.0, (size_t)k);
                for (int e = 0; e < 3; ++e) {
                    double want_t = dst.x[j].t[e] + frac * (shown0.x[j].t[e] - dst0.x[j].t[e]);
                    cb_err_track_add(t, now.x[j].t[e], want_t, (size_t)k);
                }
            }
        }
        prev = now;
    }
    /* Offsets as an axis-angle and a vector in float, applied by one quaternion product: the
     * largest errors measured were about 1.5e-6; the bounds leave a 5x margin or more. */
    cb_err_track_check(&fe, 1e-5);
    cb_err_track_check(&oe, 1e-5);
    cb_err_track_check(&de, 1e-5);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* A transition interrupted mid-way continues from the pose shown (by inertializing), under
 * each rule, from a crossfade and from an inertialization: the frame it is interrupted on shows
 * the previous frame's pose again, then the pose reaches the new destination. Under
 * interruption none the running transition finishes first. */
static void graph_interruptions_continue_from_the_pose_shown(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    static const machine_opts cases[] = {
        {CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_DESTINATION, 0.5f, true},
        {CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_SOURCE, 0.5f, true},
        {CB_TRANSITION_INERTIALIZE, CB_INTERRUPTION_DESTINATION, 0.5f, true},
        {CB_TRANSITION_INERTIALIZE, CB_INTERRUPTION_SOURCE, 0.5f, true},
        {CB_TRANSITION_CROSSFADE, CB_INTERRUPTION_NONE, 0.5f, true},
    };
    cb_err_track ce = cb_err_track_make("interrupting frame against the previous (rad or m)");
    cb_err_track ee = cb_err_track_make("after the end against the destination (rad or m)");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_graph *g = two_state_graph(sc, cases[k]);
        cb_crowd *c = crowd_of(sc, g, 4, 1, 0);
        add_characters(c, 1, 0.7f);
        rpose prev = {0};
        const int go = 5, go2 = 12; /* 7 frames into a 16-frame transition */
        int entered_c = -1;
        for (int f = 0; f < 60; ++f) {
            column(c, "go")[0] = f >= go ? 1.0f : 0.0f;
            column(c, "go2")[0] = f >= go2 ? 1.0f : 0.0f;
            cb_crowd_update(c, DT);
            rpose now = read_flat(cb_crowd_matrices(c, 0, 0));
            uint32_t next = cb_crowd_next_state(c, 0, 0, 0), cur = cb_crowd_state(c, 0, 0, 0);
            if (entered_c < 0 && (next == 2 || cur == 2)) {
                entered_c = f;
                if (cases[k].interruption != CB_INTERRUPTION_NONE) {
                    double t, a;
                    pose_diff(&now, &prev, &t, &a);
                    cb_err_track_add(&ce, a, 0.0, k);
                    cb_err_track_add(&ce, t, 0.0, k);
                }
            }
            if (f == 59) {
                rpose dst = ref_clip(sc, CLIP_C, clip_time(c, 2, 0));
                double t, a;
                pose_diff(&now, &dst, &t, &a);
                cb_err_track_add(&ee, a, 0.0, k);
                cb_err_track_add(&ee, t, 0.0, k);
                CB_CHECK(cur == 2 && next == UINT32_MAX, "case %zu: ends in %u/%u", k, cur, next);
            }
            prev = now;
        }
        /* Interruptible: c is entered on the frame go2 is set; not interruptible: once the
         * 0.5 s transition from frame `go` has finished (16 frames), on the next test. */
        int want = cases[k].interruption != CB_INTERRUPTION_NONE ? go2 : go + 16;
        CB_CHECK(entered_c == want, "case %zu: entered c on frame %d, expected %d", k, entered_c,
                 want);
        cb_crowd_destroy(c);
        cb_graph_destroy(g);
    }
    cb_err_track_check(&ce, 1e-5);
    cb_err_track_check(&ee, 1e-5);
}

/* ------------------------------------------------------------------------------------------ */
/* Blend nodes and layers                                                                     */

/* A joint's subtree as a mask, from the parents (the test's own walk). */
static void subtree_mask(const scene *sc, int top, float *mask)
{
    for (int j = 0; j < NJ; ++j) {
        int k = j;
        while (k >= 0 && k != top) {
            k = sc->parents[k];
        }
        mask[j] = k == top ? 1.0f : 0.0f;
    }
}

/* Layers over a 1D blend space: an override clip masked to a subtree, an additive clip, and a
 * state machine as an override layer with a per-joint mask; and the same without the machine
 * (the all-clips form runs as one fused job). Poses against the double reference: the blend
 * job's contract for the clips, then the machine's pose slerped in by weight times mask. */
static void graph_layers_match_the_reference(void **state)
{
    graph_fx *fx = *state;
    cb_prng r = fx->r;
    scene *sc = fx->sc;
    float smmask[64] = {0};
    for (int j = 0; j < NJ; ++j) {
        smmask[j] = cb_prng_range(&r, 0.0f, 1.0f);
    }
    float upper[NJ];
    subtree_mask(sc, 2, upper);
    for (int with_machine = 0; with_machine < 2; ++with_machine) {
        cb_graph_builder *b = builder_of(sc);
        cb_error err = {0};
        static const char *const ps[] = {"x", "w_up", "w_add", "w_sm", "go"};
        for (int p = 0; p < 5; ++p) {
            OK(cb_graph_add_param(b, ps[p], p == 4 ? CB_PARAM_BOOL : CB_PARAM_FLOAT, 0.0f, &err));
        }
        cb_graph_node kids[2] = {add_clip(b, "a", CLIP_A), add_clip(b, "b", CLIP_B)};
        float pos[2] = {0.0f, 1.0f};
        cb_graph_blend_space_desc bs = {.name = "base",
                                        .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                        .params = {"x"},
                                        .children = kids,
                                        .positions = pos,
                                        .child_count = 2};
        cb_graph_node base = {0};
        OK(cb_graph_add_blend_space(b, &bs, &base, &err));
        cb_graph_node e = add_clip(b, "e", CLIP_E);
        cb_graph_node add = add_clip(b, "add", CLIP_ADD);
        cb_graph_state st[2] = {{.name = "c", .node = add_clip(b, "c", CLIP_C)},
                                {.name = "once", .node = add_clip(b, "once", CLIP_CLAMP)}};
        cb_graph_condition go = {.param = "go", .op = CB_COMPARE_TRUE};
        cb_graph_transition tr = {
            .from = "c", .to = "once", .conditions = &go, .condition_count = 1};
        cb_graph_state_machine_desc smd = {.name = "layer_machine",
                                           .states = st,
                                           .state_count = 2,
                                           .transitions = &tr,
                                           .transition_count = 1};
        cb_graph_node sm = {0};
        OK(cb_graph_add_state_machine(b, &smd, &sm, &err));
        cb_graph_layer layers[3] = {
            {.node = e, .mode = CB_LAYER_OVERRIDE, .weight = "w_up", .mask_joint = "j2"},
            {.node = add, .mode = CB_LAYER_ADDITIVE, .weight = "w_add"},
            {.node = sm, .mode = CB_LAYER_OVERRIDE, .weight = "w_sm", .mask = {smmask, NJ}},
        };
        cb_graph_layers_desc ld = {
            .name = "layers", .base = base, .layers = layers, .layer_count = with_machine ? 3 : 2};
        cb_graph_node root = {0};
        OK(cb_graph_add_layers(b, &ld, &root, &err));
        cb_graph *g = build(b);
        enum { N = 24 };
        cb_crowd *c = crowd_of(sc, g, N, 2, 8);
        add_characters(c, N, 0.37f);
        cb_err_track te = cb_err_track_make("layers pose translation (m)");
        cb_err_track re = cb_err_track_make("layers pose rotation (rad)");
        for (int f = 0; f < 30; ++f) {
            float *x = column(c, "x"), *wu = column(c, "w_up"), *wa = column(c, "w_add"),
                  *ws = column(c, "w_sm");
            for (uint32_t i = 0; i < N; ++i) {
                x[i] = cb_prng_range(&r, -0.2f, 1.2f); /* beyond both ends too */
                wu[i] = i % 4 == 0 ? 0.0f : cb_prng_range(&r, 0.0f, 1.0f);
                wa[i] = cb_prng_range(&r, 0.0f, 1.0f);
                ws[i] = i % 3 == 0 ? 1.0f : cb_prng_range(&r, 0.0f, 1.0f);
            }
            cb_crowd_update(c, DT);
            for (uint32_t i = 0; i < N; ++i) {
                double xb = fmin(fmax(x[i], 0.0), 1.0);
                dref_entry de[4] = {
                    {&sc->refs[CLIP_A], clip_time(c, 0, i), 1.0 - xb, CB_BLEND_MODE_NORMAL, NULL},
                    {&sc->refs[CLIP_B], clip_time(c, 1, i), xb, CB_BLEND_MODE_NORMAL, NULL},
                    {&sc->refs[CLIP_E], clip_time(c, 2, i), wu[i], CB_BLEND_MODE_OVERRIDE, upper},
                    {&sc->refs[CLIP_ADD], clip_time(c, 3, i), wa[i], CB_BLEND_MODE_ADDITIVE, NULL},
                };
                /* Entries of no weight are left out, as the graph leaves them out. */
                dref_entry used[4];
                size_t n = 0;
                for (int k = 0; k < 4; ++k) {
                    if (de[k].weight > 0.0) {
                        used[n++] = de[k];
                    }
                }
                rpose want = ref_blend(sc, used, n);
                if (with_machine) {
                    rpose mp = ref_clip(sc, CLIP_C, clip_time(c, 4, i));
                    want = ref_slerp(&want, &mp, ws[i], smmask);
                }
                check_pose(&te, &re, sc, &want, cb_crowd_matrices(c, 0, i), (size_t)(f * N) + i);
            }
        }
        cb_err_track_check(&te, POSE_T_BOUND);
        cb_err_track_check(&re, POSE_R_BOUND);
        cb_crowd_destroy(c);
        cb_graph_destroy(g);
    }
}

/* Direct blend: the kept weights are the parameters clamped at 0 and normalized, against a
 * double reference; a NaN parameter is read as 0 (the crowd's rule for every parameter,
 * counted); all zero leaves the rest pose. The graph's direct node runs the DIRECT solver's
 * rule: its weights equal cb_solver_evaluate_one's bit for bit, hard inputs included (huge,
 * subnormal: a sum of 1e-40 once gave every weight 1). */
static void graph_direct_weights_are_normalized_parameters(void **state)
{
    graph_fx *fx = *state;
    cb_prng r = fx->r;
    scene *sc = fx->sc;
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    static const char *const ws[3] = {"wa", "wb", "wc"};
    for (int k = 0; k < 3; ++k) {
        OK(cb_graph_add_param(b, ws[k], CB_PARAM_FLOAT, 0.0f, &err));
    }
    cb_graph_node kids[3] = {add_clip(b, "a", CLIP_A), add_clip(b, "b", CLIP_B),
                             add_clip(b, "c", CLIP_C)};
    cb_graph_direct_desc dd = {.name = "direct", .children = kids, .weights = ws, .child_count = 3};
    cb_graph_node d = {0};
    OK(cb_graph_add_direct(b, &dd, &d, &err));
    cb_graph *g = build(b);
    cb_solver_desc sd = {.kind = CB_SOLVER_KIND_DIRECT, .node_count = 3};
    cb_solver *direct = NULL;
    assert_int_equal(cb_solver_create(&sd, &direct, NULL), CB_OK);
    enum { N = 40 };
    cb_crowd *c = crowd_of(sc, g, N, 1, 0);
    add_characters(c, N, 0.11f);
    cb_err_track we = cb_err_track_make("direct weight");
    cb_err_track te = cb_err_track_make("direct pose translation (m)");
    cb_err_track re = cb_err_track_make("direct pose rotation (rad)");
    /* Hard rows: a subnormal alone, subnormals together, the largest floats, a zero sum. */
    static const float hard[][3] = {
        {0.0f, 1e-40f, 0.0f}, {1e-40f, 3e-40f, 0.0f}, {3e38f, 3e38f, 1.0f}, {0.0f, -1.0f, 0.0f}};
    uint64_t nonfinite = 0;
    for (int f = 0; f < 20; ++f) {
        float v[3][N];
        for (uint32_t i = 0; i < N; ++i) {
            for (int k = 0; k < 3; ++k) {
                float x = cb_prng_range(&r, -0.5f, 2.0f);
                v[k][i] = (i % 7 == 3) ? 0.0f : (i % 11 == 5 && k == 1) ? NAN : x;
                v[k][i] = i % 13 == 2 ? hard[(i / 13 + (uint32_t)f) % 4][k] : v[k][i];
            }
            nonfinite += isnan(v[1][i]);
        }
        for (int k = 0; k < 3; ++k) {
            memcpy(column(c, ws[k]), v[k], sizeof v[k]);
        }
        cb_crowd_update(c, DT);
        for (uint32_t i = 0; i < N; ++i) {
            double w[3], sum = 0.0;
            float q[3], one[3];
            for (int k = 0; k < 3; ++k) {
                w[k] = v[k][i] > 0.0f ? v[k][i] : 0.0; /* NaN: 0 */
                sum += w[k];
                q[k] = isnan(v[k][i]) ? 0.0f : v[k][i];
            }
            assert_int_equal(cb_solver_evaluate_one(direct, q, one, NULL), CB_OK);
            dref_entry de[3];
            size_t n = 0;
            for (int k = 0; k < 3; ++k) {
                double want = sum > 0.0 ? w[k] / sum : 0.0;
                /* Influence at or below CB_BLEND_WEIGHT_EPSILON is kept as none. */
                float got = kept(c, (uint32_t)k, i);
                float solver = one[k] > CB_BLEND_WEIGHT_EPSILON ? one[k] : 0.0f;
                cb_err_track_add(&we, got, want, i);
                CB_CHECK(memcmp(&got, &solver, sizeof got) == 0,
                         "character %u weight %d: graph %a, solver %a", i, k, (double)got,
                         (double)solver);
                if (got > CB_BLEND_WEIGHT_EPSILON) {
                    de[n++] = (dref_entry){&sc->refs[k], clip_time(c, (uint32_t)k, i), want,
                                           CB_BLEND_MODE_NORMAL, NULL};
                }
            }
            rpose p = ref_blend(sc, de, n); /* no entries: the rest pose */
            check_pose(&te, &re, sc, &p, cb_crowd_matrices(c, 0, i), (size_t)(f * N) + i);
        }
    }
    /* One division per weight in float, against the double quotient. */
    cb_err_track_check(&we, 2e-7);
    cb_err_track_check(&te, POSE_T_BOUND);
    cb_err_track_check(&re, POSE_R_BOUND);
    assert_int_equal(cb_crowd_query_stats(c).nonfinite_params, nonfinite);
    cb_solver_destroy(direct);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* Time: the clips of a blend space share a normalized time that advances at their
 * weight-averaged duration; a clip outside the group keeps its own rate, times its speed and
 * its speed parameter; a clamped clip stops at its end; layers play on at weight 0. */
static void graph_clip_times_follow_rates_and_sync_groups(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    OK(cb_graph_add_param(b, "x", CB_PARAM_FLOAT, 0.3f, &err));
    OK(cb_graph_add_param(b, "rate", CB_PARAM_FLOAT, 1.0f, &err));
    OK(cb_graph_add_param(b, "w", CB_PARAM_FLOAT, 0.5f, &err));
    cb_graph_node kids[2] = {add_clip(b, "a", CLIP_A), add_clip(b, "b", CLIP_B)};
    float pos[2] = {0.0f, 1.0f};
    cb_graph_blend_space_desc bs = {.solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                    .params = {"x"},
                                    .children = kids,
                                    .positions = pos,
                                    .child_count = 2};
    cb_graph_node base = {0};
    OK(cb_graph_add_blend_space(b, &bs, &base, &err));
    cb_graph_clip_desc ed = {
        .name = "e", .clip = "e", .speed = 2.0f, .speed_param = "rate", .start_offset = 0.25f};
    cb_graph_node e = {0};
    OK(cb_graph_add_clip(b, &ed, &e, &err));
    cb_graph_clip_desc od = {.name = "once", .clip = "once"};
    cb_graph_node once = {0};
    OK(cb_graph_add_clip(b, &od, &once, &err));
    cb_graph_layer layers[2] = {{.node = e, .weight = "w"}, {.node = once, .weight = "w"}};
    cb_graph_layers_desc ld = {.base = base, .layers = layers, .layer_count = 2};
    cb_graph_node root = {0};
    OK(cb_graph_add_layers(b, &ld, &root, &err));
    cb_graph *g = build(b);
    cb_crowd *c = crowd_of(sc, g, 4, 1, 0);
    add_characters(c, 1, 0.0f);
    cb_err_track ge = cb_err_track_make("sync group time (cycles)");
    cb_err_track ee = cb_err_track_make("layer clip time (cycles)");
    /* A character added with phase 0 starts every clip there (the add phase stands in for
     * start offsets, so a crowd can be spread over a cycle). */
    double group = 0.0, et = 0.0;
    for (int f = 0; f < 90; ++f) {
        float rate = f < 45 ? 1.0f : 0.5f;
        column(c, "rate")[0] = rate;
        /* A layer's clips play on while its weight is 0 (as Unity's layers do). */
        column(c, "w")[0] = f >= 30 && f < 40 ? 0.0f : 0.5f;
        cb_crowd_update(c, DT);
        /* Weights 0.7 and 0.3: one cycle lasts 0.7 * 1.0 + 0.3 * 0.75 = 0.925 s. */
        group = fmod(group + DT / 0.925, 1.0);
        cb_err_track_add(&ge, clip_time(c, 0, 0), group, (size_t)f);
        CB_CHECK(clip_time(c, 0, 0) == clip_time(c, 1, 0), "frame %d: a and b apart", f);
        /* The layer clip advances at 2 * rate / 0.9 cycles per second. */
        et = fmod(et + DT * 2.0 * rate / 0.9, 1.0);
        double got = clip_time(c, 2, 0);
        cb_err_track_add(&ee,
                         got + (got - et > 0.5   ? -1.0
                                : et - got > 0.5 ? 1.0
                                                 : 0.0),
                         et, (size_t)f);
        double clamped = fmin((f + 1) * (double)DT / 0.5, 1.0);
        cb_err_track_add(&ee, clip_time(c, 3, 0), clamped, (size_t)f);
    }
    /* 90 float additions of about 0.03 to a time in [0, 1): measured up to 8e-7. */
    cb_err_track_check(&ge, 5e-6);
    cb_err_track_check(&ee, 5e-6);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* Processors run before the nodes, in order, and their outputs are the library's params
 * functions applied to the inputs (those have their own accuracy tests). */
static void graph_processors_write_their_outputs(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    static const char *const fl[] = {"vx", "vy", "sx", "sy", "f", "bk", "l", "rt", "v"};
    for (int k = 0; k < 9; ++k) {
        OK(cb_graph_add_param(b, fl[k], CB_PARAM_FLOAT, 0.0f, &err));
    }
    OK(cb_graph_add_param(b, "quad", CB_PARAM_INT, 0.0f, &err));
    cb_graph_interp_to_desc i1 = {.input = "vx", .output = "sx", .speed = 6.0f};
    cb_graph_interp_to_desc i2 = {.input = "vy", .output = "sy", .speed = 6.0f};
    cb_graph_velocity_blend_desc vb = {.x = "sx",
                                       .y = "sy",
                                       .forward = "f",
                                       .backward = "bk",
                                       .left = "l",
                                       .right = "rt",
                                       .speed = "v"};
    cb_graph_quadrant_desc qd = {.x = "sx", .y = "sy", .output = "quad"};
    OK(cb_graph_add_interp_to(b, &i1, &err));
    OK(cb_graph_add_interp_to(b, &i2, &err));
    OK(cb_graph_add_velocity_blend(b, &vb, &err));
    OK(cb_graph_add_quadrant(b, &qd, &err));
    add_clip(b, "a", CLIP_A);
    cb_graph *g = build(b);
    enum { N = 21 };
    cb_crowd *c = crowd_of(sc, g, N, 1, 0);
    add_characters(c, N, 0.1f);
    float sx[N] = {0}, sy[N] = {0}, quad[N] = {0};
    cb_err_track pe = cb_err_track_make("processor outputs");
    size_t nonzero_quadrants = 0;
    for (int f = 0; f < 60; ++f) {
        float vx[N], vy[N];
        for (uint32_t i = 0; i < N; ++i) {
            float a = 0.3f * (float)i + 0.05f * (float)f, s = 2.0f * (float)(i % 4);
            vx[i] = s * cosf(a), vy[i] = s * sinf(a);
            column(c, "vx")[i] = vx[i], column(c, "vy")[i] = vy[i];
        }
        cb_crowd_update(c, DT);
        /* The same chain through the public functions, the quadrant on moving characters
         * (speed >= the default 0.1) with the default 10-degree dead zone. */
        assert_int_equal(cb_params_interp_to(sx, vx, N, DT, 6.0f, sx, NULL), CB_OK);
        assert_int_equal(cb_params_interp_to(sy, vy, N, DT, 6.0f, sy, NULL), CB_OK);
        float out[4][N];
        cb_velocity_blend o = {out[0], out[1], out[2], out[3]};
        assert_int_equal(cb_params_velocity_blend_4dir(sx, sy, NULL, N, 1e-4f, o, NULL), CB_OK);
        for (uint32_t i = 0; i < N; ++i) {
            if (sx[i] * sx[i] + sy[i] * sy[i] >= 0.1f * 0.1f) {
                float angle = atan2f(sy[i], sx[i]);
                uint8_t q = (uint8_t)quad[i];
                assert_int_equal(cb_params_quadrant(&angle, 1, 0.1745329f, &q, NULL), CB_OK);
                quad[i] = q;
            }
        }
        for (uint32_t i = 0; i < N; ++i) {
            cb_err_track_add(&pe, column(c, "sx")[i], sx[i], i);
            cb_err_track_add(&pe, column(c, "sy")[i], sy[i], i);
            cb_err_track_add(&pe, column(c, "f")[i], out[0][i], i);
            cb_err_track_add(&pe, column(c, "bk")[i], out[1][i], i);
            cb_err_track_add(&pe, column(c, "l")[i], out[2][i], i);
            cb_err_track_add(&pe, column(c, "rt")[i], out[3][i], i);
            cb_err_track_add(&pe, column(c, "quad")[i], quad[i], i);
            cb_err_track_add(&pe, column(c, "v")[i], sqrtf(sx[i] * sx[i] + sy[i] * sy[i]), i);
            nonzero_quadrants += quad[i] != 0.0f;
        }
    }
    cb_err_track_check(&pe, 0.0); /* the same float operations in the same order */
    assert_true(nonzero_quadrants > 0);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* ------------------------------------------------------------------------------------------ */
/* Events and marker sync                                                                     */

/* Crossings of a looping clip's marker at normalized time m by a frame from u0 to u1
 * (unwrapped, double): (u0, u1] forwards, [u1, u0) backwards, as crowdblend/sync.h counts. */
static int64_t crossings(double m, double u0, double u1)
{
    if (u1 >= u0) {
        return (int64_t)floor(u1 - m) - (int64_t)floor(u0 - m);
    }
    return (int64_t)ceil(u0 - m) - (int64_t)ceil(u1 - m);
}

/* One clip at a speed parameter that changes sign and size, over frames of random length
 * (1/240 s to 0.4 s, and a few of 3 s that cross more markers than a frame reports): every
 * frame reports the crossings of its interval, reported plus dropped equal the closed-form
 * count frame by frame (except where a marker lies within float rounding of a frame's end,
 * where it may move to the neighbouring frame), and over the run every crossing counts once. */
static void graph_events_fire_once_per_crossing(void **state)
{
    graph_fx *fx = *state;
    cb_prng r = fx->r;
    scene *sc = fx->sc;
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    OK(cb_graph_add_param(b, "rate", CB_PARAM_FLOAT, 1.0f, &err));
    cb_graph_clip_desc cd = {.name = "c", .clip = "c", .speed_param = "rate"};
    cb_graph_node cn = {0};
    OK(cb_graph_add_clip(b, &cd, &cn, &err));
    cb_graph *g = build(b);
    uint32_t c_index = CB_INVALID_INDEX; /* events name the built graph's node indices */
    assert_int_equal(cb_graph_find_node(g, "c", &c_index), CB_OK);
    cb_crowd *c = crowd_of(sc, g, 4, 1, 0);
    add_characters(c, 1, 0.2f);                 /* the first character starts at phase 0 */
    const double marks[3] = {0.10, 0.30, 0.60}; /* L, lift, R in time order */
    const uint32_t hashes[3] = {cb_name_hash("L"), cb_name_hash("lift"), cb_name_hash("R")};
    double u = 0.0; /* the unwrapped time, in double */
    int64_t want_total = 0, got_total = 0;
    size_t near = 0, frames_with_events = 0, backwards = 0;
    uint64_t dropped_before = 0;
    for (int f = 0; f < 3000; ++f) {
        float rate =
            f % 500 < 400 ? cb_prng_range(&r, 0.3f, 4.0f) : cb_prng_range(&r, -3.0f, -0.3f);
        float dt = f % 397 == 0 ? 3.0f : cb_prng_range(&r, 1.0f / 240.0f, 0.4f);
        column(c, "rate")[0] = rate;
        cb_crowd_update(c, dt);
        double u1 = u + (double)dt * (double)rate / 1.25;
        int64_t want = 0;
        bool close = false;
        for (int k = 0; k < 3; ++k) {
            want += crossings(marks[k], u, u1);
            double d0 = u - marks[k] - floor(u - marks[k]),
                   d1 = u1 - marks[k] - floor(u1 - marks[k]);
            close = close || fmin(d0, 1.0 - d0) < 1e-4 || fmin(d1, 1.0 - d1) < 1e-4;
        }
        uint32_t n = 0;
        const cb_graph_event *ev = cb_crowd_events(c, 0, 0, &n);
        uint64_t dropped = cb_crowd_query_stats(c).dropped_events;

        int64_t got = (int64_t)n + (int64_t)(dropped - dropped_before);
        dropped_before = dropped;
        for (uint32_t k = 0; k < n; ++k) {
            CB_CHECK(ev[k].node == c_index && ev[k].weight == 1.0f && ev[k].fraction >= 0.0f &&
                         ev[k].fraction <= 1.0f,
                     "frame %d event %u: node %u weight %g fraction %g", f, k, ev[k].node,
                     (double)ev[k].weight, (double)ev[k].fraction);
            CB_CHECK(ev[k].marker_hash == hashes[0] || ev[k].marker_hash == hashes[1] ||
                         ev[k].marker_hash == hashes[2],
                     "frame %d: unknown marker hash %08x", f, ev[k].marker_hash);
        }
        /* Consecutive events follow the markers' cyclic order in the direction of play. */
        for (uint32_t k = 1; k < n; ++k) {
            int a = 0, bb = 0;
            for (int q = 0; q < 3; ++q) {
                a = ev[k - 1].marker_hash == hashes[q] ? q : a;
                bb = ev[k].marker_hash == hashes[q] ? q : bb;
            }
            CB_CHECK(bb == (rate > 0.0f ? (a + 1) % 3 : (a + 2) % 3),
                     "frame %d: events out of order", f);
        }
        if (close) {
            near++;
        } else {
            CB_CHECK(got == want, "frame %d (dt %g, rate %g): %lld crossings, closed form %lld", f,
                     (double)dt, (double)rate, (long long)got, (long long)want);
        }
        want_total += want, got_total += got;
        frames_with_events += n > 0;
        backwards += rate < 0.0f && n > 0;
        u = u1;
    }
    cb_test_note("%lld crossings, %zu frames with events (%zu backwards), %zu frames near a "
                 "marker, %llu dropped",
                 (long long)want_total, frames_with_events, backwards, near,
                 (unsigned long long)dropped_before);
    /* Over the run the float times and the double reference part by less than a marker. */
    CB_CHECK(got_total == want_total, "%lld crossings, closed form %lld", (long long)got_total,
             (long long)want_total);
    assert_true(dropped_before > 0 && backwards > 50);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* The frames on which a clip node reported a marker. */
typedef struct plant_log {
    int frames[512];
    int count;
} plant_log;

static void log_events(const cb_crowd *c, int f, uint32_t node, uint32_t hash, plant_log *log)
{
    uint32_t n = 0;
    const cb_graph_event *ev = cb_crowd_events(c, 0, 0, &n);
    for (uint32_t k = 0; k < n; ++k) {
        if (ev[k].node == node && ev[k].marker_hash == hash && log->count < 512) {
            log->frames[log->count++] = f;
        }
    }
}

/* The largest distance, in frames, from a frame of `a` to the nearest frame of `b`. */
static int farthest(const plant_log *a, const plant_log *b)
{
    int worst = 0;
    for (int i = 0; i < a->count; ++i) {
        int best = 1 << 30;
        for (int k = 0; k < b->count; ++k) {
            int d = abs(a->frames[i] - b->frames[k]);
            best = d < best ? d : best;
        }
        worst = best > worst ? best : worst;
    }
    return worst;
}

/* Two clips whose plants lie at different normalized times, blended in one sync group (the
 * blend weight sweeping back and forth), and in a machine switching between them (crossfades
 * in one group): each plant of one clip has the other's within one frame. The same blend of
 * clips that share no marker name (synced by normalized time) puts them many frames apart,
 * which shows the test can fail. */
static void graph_sync_groups_keep_markers_in_step(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    for (int variant = 0; variant < 3; ++variant) {
        bool control = variant == 2, machine = variant == 1;
        int other = control ? CLIP_E2 : CLIP_E;
        cb_graph_builder *b = builder_of(sc);
        cb_error err = {0};
        OK(cb_graph_add_param(b, "x", CB_PARAM_FLOAT, 0.0f, &err));
        OK(cb_graph_add_param(b, "go", CB_PARAM_BOOL, 0.0f, &err));
        cb_graph_clip_desc c1 = {.name = "c", .clip = "c", .sync_group = "feet"};
        cb_graph_clip_desc c2 = {.name = "other", .clip = clip_names[other], .sync_group = "feet"};
        cb_graph_node kids[2];
        OK(cb_graph_add_clip(b, &c1, &kids[0], &err));
        OK(cb_graph_add_clip(b, &c2, &kids[1], &err));
        if (machine) {
            cb_graph_state st[2] = {{.name = "c", .node = kids[0]},
                                    {.name = "other", .node = kids[1]}};
            cb_graph_condition go = {.param = "go", .op = CB_COMPARE_TRUE};
            cb_graph_condition stop = {.param = "go", .op = CB_COMPARE_FALSE};
            cb_graph_transition tr[2] = {{.from = "c",
                                          .to = "other",
                                          .conditions = &go,
                                          .condition_count = 1,
                                          .duration_s = 0.6f},
                                         {.from = "other",
                                          .to = "c",
                                          .conditions = &stop,
                                          .condition_count = 1,
                                          .duration_s = 0.6f}};
            cb_graph_state_machine_desc smd = {
                .states = st, .state_count = 2, .transitions = tr, .transition_count = 2};
            cb_graph_node m = {0};
            OK(cb_graph_add_state_machine(b, &smd, &m, &err));
        } else {
            float pos[2] = {0.0f, 1.0f};
            cb_graph_blend_space_desc bs = {.solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                            .params = {"x"},
                                            .children = kids,
                                            .positions = pos,
                                            .child_count = 2};
            cb_graph_node root = {0};
            OK(cb_graph_add_blend_space(b, &bs, &root, &err));
        }
        cb_graph *g = build(b);
        /* Events name the graph's own node indices. */
        uint32_t built[2] = {CB_INVALID_INDEX, CB_INVALID_INDEX};
        assert_int_equal(cb_graph_find_node(g, "c", &built[0]), CB_OK);
        assert_int_equal(cb_graph_find_node(g, "other", &built[1]), CB_OK);
        assert_int_equal(cb_graph_clip_node(g, 1), built[1]);
        cb_crowd *c = crowd_of(sc, g, 4, 1, 0);
        add_characters(c, 1, 0.0f);
        uint32_t hl = cb_name_hash("L"), hr = cb_name_hash("R");
        uint32_t ol = cb_name_hash(control ? "L2" : "L"), orr = cb_name_hash(control ? "R2" : "R");
        plant_log logs[4] = {{{0}, 0}};
        int both = 0;
        for (int f = 0; f < 600; ++f) {
            /* Blend: the weight sweeps 0.2 .. 0.8 (both clips always play). Machine: switches
             * every 40 frames; plants are compared during the 0.6 s crossfades only. */
            column(c, "x")[0] = 0.5f + 0.3f * sinf(0.02f * (float)f);
            column(c, "go")[0] = (f / 40) % 2 ? 1.0f : 0.0f;
            cb_crowd_update(c, DT);
            bool blending = kept(c, 0, 0) > 0.0f && kept(c, 1, 0) > 0.0f;
            if (!blending) {
                continue;
            }
            both++;
            log_events(c, f, built[0], hl, &logs[0]);
            log_events(c, f, built[0], hr, &logs[1]);
            log_events(c, f, built[1], ol, &logs[2]);
            log_events(c, f, built[1], orr, &logs[3]);
        }
        /* Plants that happen while both play, matched both ways (a plant near the start or
         * end of a crossfade may have its partner just outside it: at most 2 such). */
        int apart = 0;
        for (int k = 0; k < 2; ++k) {
            int d1 = farthest(&logs[k], &logs[k + 2]), d2 = farthest(&logs[k + 2], &logs[k]);
            apart = d1 > apart ? d1 : apart;
            apart = d2 > apart ? d2 : apart;
        }
        cb_test_note("variant %d: %d frames with both clips, %d/%d plants of c, %d/%d of the "
                     "other, farthest %d frames apart",
                     variant, both, logs[0].count, logs[1].count, logs[2].count, logs[3].count,
                     apart);
        assert_true(logs[0].count >= 4 && logs[2].count >= 4);
        if (control) {
            CB_CHECK(apart >= 4, "normalized sync put the plants only %d frames apart", apart);
        } else if (!machine) {
            CB_CHECK(apart <= 1, "variant %d: plants %d frames apart", variant, apart);
        } else {
            /* A crossfade's first and last frames may hold a plant whose partner lies just
             * outside the frames where both play; inside, they coincide within one frame. */
            int inside = 0;
            for (int k = 0; k < 2; ++k) {
                for (int i = 0; i < logs[k].count; ++i) {
                    plant_log one = {{logs[k].frames[i]}, 1};
                    inside += farthest(&one, &logs[k + 2]) > 1;
                }
            }
            CB_CHECK(inside <= 2, "%d plants without a partner within one frame", inside);
        }
        cb_crowd_destroy(c);
        cb_graph_destroy(g);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* No pop                                                                                     */

/* The largest distance a joint moved between two frames' matrices (model space). */
static double largest_step(const float *a, const float *b, size_t joints)
{
    double worst = 0.0;
    for (size_t j = 0; j < joints; ++j) {
        double d = 0.0;
        for (int k = 12; k < 15; ++k) {
            double e = (double)a[16 * j + k] - (double)b[16 * j + k];
            d += e * e;
        }
        worst = d > worst ? d : worst;
    }
    return sqrt(worst);
}

/* The largest per-frame move of any joint during transitions, playing a schedule of targets
 * (seconds) at one frame rate; also the transition frames and interruptions seen. */
typedef struct move_run {
    double largest;
    int frames, interrupted;
} move_run;

static move_run run_schedule(cb_crowd *c, size_t nj, float dt, const double *at, const int *target,
                             int changes, float *prev)
{
    move_run out = {0.0, 0, 0};
    uint32_t last_next = UINT32_MAX;
    int k = 0;
    int frames = (int)(at[changes - 1] / dt) + 1;
    for (int f = 0; f < frames; ++f) {
        while (k < changes && at[k] <= f * (double)dt) {
            column(c, "target")[0] = (float)target[k++];
        }
        cb_crowd_update(c, dt);
        uint32_t next = cb_crowd_next_state(c, 0, 0, 0);
        out.interrupted += last_next != UINT32_MAX && next != UINT32_MAX && next != last_next;
        if (f > 0 && (next != UINT32_MAX || last_next != UINT32_MAX)) {
            double mv = largest_step(prev, cb_crowd_matrices(c, 0, 0), nj);
            out.largest = mv > out.largest ? mv : out.largest;
            out.frames++;
        }
        last_next = next;
        memcpy(prev, cb_crowd_matrices(c, 0, 0), nj * 16 * sizeof(float));
    }
    return out;
}

/* The humanoid's idle, walk, run and walk-back as states of a machine whose any-state
 * transitions (0.25 s) fire on a random schedule, often interrupting each other, with
 * crossfades and with inertialization. No pop: a pop is a jump that does not shrink with the
 * frame time, so the same schedule is played at 60 Hz and at 240 Hz, and the largest per-frame
 * move of any joint during transitions must shrink with the frame (to at most 0.35 of the 60 Hz
 * figure; 0.25 for motion that is continuous). Reported beside it: the clips' own largest
 * per-frame move, which a short transition between different poses may exceed by the motion
 * of the blend itself. */
static void graph_transitions_do_not_pop(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_embedded *set = humanoid;
    const cb_skeleton *sk = cb_embedded_skeleton(set);
    size_t nj = cb_skeleton_joint_count(sk);
    static const char *const names[4] = {"idle", "walk_f", "run_f", "walk_b"};
    const cb_clip *clips[4];
    for (int k = 0; k < 4; ++k) {
        clips[k] = cb_embedded_find_clip(set, names[k]);
    }
    float *prev = malloc(nj * 16 * sizeof(float));
    enum { CHANGES = 200 };
    double at[CHANGES];
    int target[CHANGES];
    double t = 0.0;
    for (int k = 0; k < CHANGES; ++k) {
        t += cb_prng_range(&r, 0.08f, 0.6f);
        at[k] = t, target[k] = (int)cb_prng_below(&r, 4);
    }
    /* The clips alone at 60 Hz: the largest per-frame move over two cycles each. */
    double range = 0.0;
    for (int k = 0; k < 4; ++k) {
        cb_graph_builder_desc bd = {.skeleton = sk, .clips = clips, .clip_count = 4};
        cb_graph_builder *b = NULL;
        cb_error err = {0};
        OK(cb_graph_builder_create(&bd, &b, &err));
        cb_graph_clip_desc cd = {.clip = names[k]};
        cb_graph_node n = {0};
        OK(cb_graph_add_clip(b, &cd, &n, &err));
        cb_graph *g = NULL;
        OK(cb_graph_build(b, &g, &err));
        cb_graph_builder_destroy(b);
        cb_crowd *c = graph_crowd(sk, g, 1, 1, 0);
        add_characters(c, 1, 0.0f);
        for (int f = 0; f < 360; ++f) {
            cb_crowd_update(c, 1.0f / 60.0f);
            if (f > 0) {
                double m = largest_step(prev, cb_crowd_matrices(c, 0, 0), nj);
                range = m > range ? m : range;
            }
            memcpy(prev, cb_crowd_matrices(c, 0, 0), nj * 16 * sizeof(float));
        }
        cb_crowd_destroy(c);
        cb_graph_destroy(g);
    }
    for (int blend = 0; blend < 2; ++blend) {
        cb_graph_builder_desc bd = {.skeleton = sk, .clips = clips, .clip_count = 4};
        cb_graph_builder *b = NULL;
        cb_error err = {0};
        OK(cb_graph_builder_create(&bd, &b, &err));
        OK(cb_graph_add_param(b, "target", CB_PARAM_INT, 0.0f, &err));
        cb_graph_state st[4];
        cb_graph_transition tr[4];
        cb_graph_condition conds[4];
        for (int k = 0; k < 4; ++k) {
            cb_graph_clip_desc cd = {
                .name = names[k], .clip = names[k], .sync_group = k > 0 ? "feet" : NULL};
            cb_graph_node n = {0};
            OK(cb_graph_add_clip(b, &cd, &n, &err));
            st[k] = (cb_graph_state){.name = names[k], .node = n};
            conds[k] = (cb_graph_condition){"target", CB_COMPARE_EQUAL, (float)k};
            tr[k] = (cb_graph_transition){.to = names[k],
                                          .conditions = &conds[k],
                                          .condition_count = 1,
                                          .duration_s = 0.25f,
                                          .blend = blend ? CB_TRANSITION_INERTIALIZE
                                                         : CB_TRANSITION_CROSSFADE,
                                          .interruption = CB_INTERRUPTION_DESTINATION};
        }
        cb_graph_state_machine_desc smd = {
            .states = st, .state_count = 4, .transitions = tr, .transition_count = 4};
        cb_graph_node m = {0};
        OK(cb_graph_add_state_machine(b, &smd, &m, &err));
        cb_graph *g = NULL;
        OK(cb_graph_build(b, &g, &err));
        cb_graph_builder_destroy(b);
        move_run runs[2];
        for (int rate = 0; rate < 2; ++rate) {
            cb_crowd *c = graph_crowd(sk, g, 1, 1, 0);
            add_characters(c, 1, 0.0f);
            runs[rate] =
                run_schedule(c, nj, rate ? 1.0f / 240.0f : 1.0f / 60.0f, at, target, CHANGES, prev);
            cb_crowd_destroy(c);
        }
        const char *what = blend ? "inertialization" : "crossfade";
        double ratio = runs[1].largest / runs[0].largest;
        cb_test_note("%s: %d transition frames at 60 Hz (%d interruptions): largest move "
                     "%.1f mm per frame, %.1f mm at 240 Hz (x%.3f); the clips alone %.1f mm",
                     what, runs[0].frames, runs[0].interrupted, 1e3 * runs[0].largest,
                     1e3 * runs[1].largest, ratio, 1e3 * range);
        assert_true(runs[0].frames > 500 && runs[0].interrupted > 20);
        CB_CHECK(ratio <= 0.35, "%s: the largest move shrank only x%.3f from 60 to 240 Hz", what,
                 ratio);
        cb_graph_destroy(g);
    }
    free(prev);
}

/* ------------------------------------------------------------------------------------------ */
/* Post-process                                                                               */

/* A column of the j-th matrix's translation. */
static void joint_position(const float *m, size_t j, double out[3])
{
    for (int k = 0; k < 3; ++k) {
        out[k] = m[16 * j + 12 + k];
    }
}

static uint32_t find_joint(const cb_skeleton *s, const char *name)
{
    uint32_t j = 0;
    CB_CHECK(cb_skeleton_find_joint(s, name, &j) == CB_OK, "no joint %s", name);
    return (uint32_t)j;
}

/* The embedded humanoid walking (a 1D blend of idle, walk and run), with or without two-bone IK
 * on both legs and a look-at over neck and head. With IK, every foot lands on its target
 * (targets pulled 8 % towards the hip, plus up to 1 cm per axis: short of the 97 % of the
 * leg's length where the reach softens, for a straight leg too), and the
 * head's forward axis points at its target; joints outside the chains are bit-identical to the
 * graph without IK; weight 0 is bit-identical everywhere. */
static cb_graph *walker_graph(const cb_embedded *set, bool ik)
{
    const cb_clip *clips[3] = {cb_embedded_find_clip(set, "idle"),
                               cb_embedded_find_clip(set, "walk_f"),
                               cb_embedded_find_clip(set, "run_f")};
    cb_graph_builder_desc bd = {
        .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = 3};
    cb_graph_builder *b = NULL;
    cb_error err = {0};
    OK(cb_graph_builder_create(&bd, &b, &err));
    static const char *const ps[] = {"speed", "lf_x",   "lf_y",   "lf_z",   "rf_x",   "rf_y",
                                     "rf_z",  "look_x", "look_y", "look_z", "w_feet", "w_look"};
    for (int k = 0; k < 12; ++k) {
        OK(cb_graph_add_param(b, ps[k], CB_PARAM_FLOAT, 0.0f, &err));
    }
    cb_graph_node kids[3];
    static const char *const names[3] = {"idle", "walk_f", "run_f"};
    for (int k = 0; k < 3; ++k) {
        cb_graph_clip_desc cd = {.clip = names[k]};
        OK(cb_graph_add_clip(b, &cd, &kids[k], &err));
    }
    float pos[3] = {0.0f, 1.4f, 3.5f};
    cb_graph_blend_space_desc bs = {.solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                    .params = {"speed"},
                                    .children = kids,
                                    .positions = pos,
                                    .child_count = 3};
    cb_graph_node root = {0};
    OK(cb_graph_add_blend_space(b, &bs, &root, &err));
    if (ik) {
        cb_graph_two_bone_ik_desc left = {.start_joint = "thigh_l",
                                          .mid_joint = "calf_l",
                                          .end_joint = "foot_l",
                                          .target = {"lf_x", "lf_y", "lf_z"},
                                          .weight = "w_feet",
                                          .mid_axis = {1.0f, 0.0f, 0.0f}};
        cb_graph_two_bone_ik_desc right = left;
        right.start_joint = "thigh_r", right.mid_joint = "calf_r", right.end_joint = "foot_r";
        right.target[0] = "rf_x", right.target[1] = "rf_y", right.target[2] = "rf_z";
        OK(cb_graph_add_two_bone_ik(b, &left, &err));
        OK(cb_graph_add_two_bone_ik(b, &right, &err));
        const char *chain[2] = {"neck", "head"};
        const float shares[2] = {0.4f, 1.0f};
        cb_graph_aim_ik_desc look = {.joints = chain,
                                     .joint_weights = shares,
                                     .joint_count = 2,
                                     .target = {"look_x", "look_y", "look_z"},
                                     .weight = "w_look",
                                     .pole = {0.0f, 1.0f, 0.0f}};
        OK(cb_graph_add_aim_ik(b, &look, &err));
    }
    cb_graph *g = NULL;
    OK(cb_graph_build(b, &g, &err));
    cb_graph_builder_destroy(b);
    return g;
}

static void graph_ik_reaches_its_targets(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_embedded *set = humanoid;
    const cb_skeleton *sk = cb_embedded_skeleton(set);
    size_t nj = cb_skeleton_joint_count(sk);
    cb_graph *plain = walker_graph(set, false), *with_ik = walker_graph(set, true);
    enum { N = 40 };
    cb_crowd *cp = graph_crowd(sk, plain, N, 2, 0), *ci = graph_crowd(sk, with_ik, N, 2, 0);
    add_characters(cp, N, 0.071f);
    add_characters(ci, N, 0.071f);
    uint32_t foot[2] = {find_joint(sk, "foot_l"), find_joint(sk, "foot_r")};
    uint32_t thigh[2] = {find_joint(sk, "thigh_l"), find_joint(sk, "thigh_r")};
    uint32_t head = find_joint(sk, "head"), neck = find_joint(sk, "neck");
    /* Joints in no chain's subtree: everything but the legs below the thighs and neck + head
     * and below. */
    bool in_chain[64] = {false};
    for (size_t j = 0; j < nj; ++j) {
        for (int32_t k = (int32_t)j; k >= 0; k = cb_skeleton_parents(sk)[k]) {
            in_chain[j] = in_chain[j] || k == (int32_t)thigh[0] || k == (int32_t)thigh[1] ||
                          k == (int32_t)neck;
        }
    }
    static const char *const foot_params[2][3] = {{"lf_x", "lf_y", "lf_z"},
                                                  {"rf_x", "rf_y", "rf_z"}};
    static const char *const look_params[3] = {"look_x", "look_y", "look_z"};
    cb_err_track fe = cb_err_track_make("foot against its target (m)");
    cb_err_track ae = cb_err_track_make("head forward against the target direction (rad)");
    size_t outside_checked = 0;
    for (int f = 0; f < 24; ++f) {
        bool off = f % 6 == 5; /* every sixth frame: weight 0 */
        for (uint32_t i = 0; i < N; ++i) {
            float speed = 3.5f * (float)i / N;
            column(cp, "speed")[i] = speed, column(ci, "speed")[i] = speed;
        }
        /* Targets come from the pose without IK of this very frame: update the plain crowd
         * first (same characters, same parameters, same times). */
        cb_crowd_update(cp, DT);
        double want[N][2][3], look[N][3];
        for (uint32_t i = 0; i < N; ++i) {
            const float *m = cb_crowd_matrices(cp, 0, i);
            for (int s = 0; s < 2; ++s) {
                double fp[3], hip[3];
                joint_position(m, foot[s], fp);
                joint_position(m, thigh[s], hip);
                for (int k = 0; k < 3; ++k) {
                    want[i][s][k] =
                        fp[k] + 0.08 * (hip[k] - fp[k]) + cb_prng_range(&r, -0.01f, 0.01f);
                    column(ci, foot_params[s][k])[i] = (float)want[i][s][k];
                }
            }
            double hp[3];
            joint_position(m, head, hp);
            /* Somewhere in front (+Z), 1 to 3 m away, within 60 degrees of straight ahead. */
            double yaw = cb_prng_range(&r, -1.0f, 1.0f), pitch = cb_prng_range(&r, -0.4f, 0.4f);
            double dist = cb_prng_range(&r, 1.0f, 3.0f);
            double dir[3] = {sin(yaw) * cos(pitch), sin(pitch), cos(yaw) * cos(pitch)};
            for (int k = 0; k < 3; ++k) {
                look[i][k] = hp[k] + dist * dir[k];
                column(ci, look_params[k])[i] = (float)look[i][k];
            }
            column(ci, "w_feet")[i] = off ? 0.0f : 1.0f;
            column(ci, "w_look")[i] = off ? 0.0f : 1.0f;
        }
        cb_crowd_update(ci, DT);
        for (uint32_t i = 0; i < N; ++i) {
            const float *mp = cb_crowd_matrices(cp, 0, i), *mi = cb_crowd_matrices(ci, 0, i);
            if (off) {
                CB_CHECK(memcmp(mp, mi, nj * 16 * sizeof(float)) == 0,
                         "frame %d character %u: weight 0 changed the pose", f, i);
                continue;
            }
            for (size_t j = 0; j < nj; ++j) {
                if (!in_chain[j]) {
                    CB_CHECK(memcmp(mp + 16 * j, mi + 16 * j, 16 * sizeof(float)) == 0,
                             "frame %d character %u: joint %zu outside the chains moved", f, i, j);
                    outside_checked++;
                }
            }
            for (int s = 0; s < 2; ++s) {
                double fp[3];
                joint_position(mi, foot[s], fp);
                double e = sqrt((fp[0] - want[i][s][0]) * (fp[0] - want[i][s][0]) +
                                (fp[1] - want[i][s][1]) * (fp[1] - want[i][s][1]) +
                                (fp[2] - want[i][s][2]) * (fp[2] - want[i][s][2]));
                cb_err_track_add(&fe, e, 0.0, i);
            }
            /* The head's +Z axis (column 2 of its matrix) against the direction to the
             * target. */
            const float *h = mi + 16 * head;
            double hp[3], fwd[3] = {h[8], h[9], h[10]}, to[3];
            joint_position(mi, head, hp);
            double nf = 0.0, nt = 0.0, dot = 0.0;
            for (int k = 0; k < 3; ++k) {
                to[k] = look[i][k] - hp[k];
                nf += fwd[k] * fwd[k], nt += to[k] * to[k], dot += fwd[k] * to[k];
            }
            double c = dot / sqrt(nf * nt);
            cb_err_track_add(&ae, acos(c > 1.0 ? 1.0 : c), 0.0, i);
        }
    }
    assert_true(outside_checked > 1000);
    /* The issue asks for 1 mm. Measured over seeds and configurations: 4.2e-7 m and 4.4e-7
     * rad (float rounding in the jobs and the local-to-model after them); bounds 10x that. */
    cb_err_track_check(&fe, 5e-6);
    cb_err_track_check(&ae, 5e-6);
    cb_crowd_stats st = cb_crowd_query_stats(ci);
    assert_int_equal(st.refused_ik, 0);
    assert_true(st.stage_ns[CB_CROWD_STAGE_POST_PROCESS] == 0); /* not profiled */
    cb_crowd_destroy(cp);
    cb_crowd_destroy(ci);
    cb_graph_destroy(plain);
    cb_graph_destroy(with_ik);
}

/* ------------------------------------------------------------------------------------------ */
/* Determinism                                                                                */

/* A graph with a bit of everything: processors, a machine whose states are a clip, a blend
 * space and a clamped clip, crossfades, an inertialization, interruptions, layers, IK. */
static cb_graph *busy_graph(const scene *sc)
{
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    static const char *const fl[] = {"vx", "sx", "w_up", "w_add"};
    for (int k = 0; k < 4; ++k) {
        OK(cb_graph_add_param(b, fl[k], CB_PARAM_FLOAT, 0.0f, &err));
    }
    OK(cb_graph_add_param(b, "jump", CB_PARAM_TRIGGER, 0.0f, &err));
    cb_graph_interp_to_desc it = {.input = "vx", .output = "sx", .speed = 5.0f};
    OK(cb_graph_add_interp_to(b, &it, &err));
    cb_graph_node idle = add_clip(b, "idle", CLIP_A);
    cb_graph_node kids[2] = {add_clip(b, "walk", CLIP_B), add_clip(b, "run", CLIP_C)};
    float pos[2] = {0.5f, 2.0f};
    cb_graph_blend_space_desc bs = {.name = "move",
                                    .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                    .params = {"sx"},
                                    .children = kids,
                                    .positions = pos,
                                    .child_count = 2};
    cb_graph_node move = {0};
    OK(cb_graph_add_blend_space(b, &bs, &move, &err));
    cb_graph_node jump = add_clip(b, "jump", CLIP_CLAMP);
    cb_graph_state st[3] = {{.name = "idle", .node = idle},
                            {.name = "move", .node = move, .speed = 1.25f},
                            {.name = "jump", .node = jump}};
    cb_graph_condition fast = {.param = "sx", .op = CB_COMPARE_GREATER, .value = 0.4f};
    cb_graph_condition slow = {.param = "sx", .op = CB_COMPARE_LESS, .value = 0.3f};
    cb_graph_condition jmp = {.param = "jump", .op = CB_COMPARE_TRUE};
    cb_graph_transition tr[4] = {
        {.from = NULL,
         .to = "jump",
         .conditions = &jmp,
         .condition_count = 1,
         .duration_s = 0.1f,
         .blend = CB_TRANSITION_INERTIALIZE},
        {.from = "idle",
         .to = "move",
         .conditions = &fast,
         .condition_count = 1,
         .duration_s = 0.3f,
         .interruption = CB_INTERRUPTION_DESTINATION},
        {.from = "move",
         .to = "idle",
         .conditions = &slow,
         .condition_count = 1,
         .duration_s = 0.25f,
         .interruption = CB_INTERRUPTION_SOURCE},
        {.from = "jump",
         .to = "idle",
         .has_exit_time = true,
         .exit_time = 0.9f,
         .duration_s = 0.2f,
         .blend = CB_TRANSITION_INERTIALIZE},
    };
    cb_graph_state_machine_desc smd = {
        .name = "loco", .states = st, .state_count = 3, .transitions = tr, .transition_count = 4};
    cb_graph_node sm = {0};
    OK(cb_graph_add_state_machine(b, &smd, &sm, &err));
    cb_graph_layer layers[2] = {
        {.node = add_clip(b, "wave", CLIP_E), .weight = "w_up", .mask_joint = "j2"},
        {.node = add_clip(b, "lean", CLIP_ADD), .mode = CB_LAYER_ADDITIVE, .weight = "w_add"},
    };
    cb_graph_layers_desc ld = {.base = sm, .layers = layers, .layer_count = 2};
    cb_graph_node root = {0};
    OK(cb_graph_add_layers(b, &ld, &root, &err));
    /* IK: a limb reaching for a point, and a look-at over two spine joints. */
    OK(cb_graph_add_param(b, "tx", CB_PARAM_FLOAT, 0.3f, &err));
    OK(cb_graph_add_param(b, "ty", CB_PARAM_FLOAT, 0.2f, &err));
    OK(cb_graph_add_param(b, "tz", CB_PARAM_FLOAT, 0.4f, &err));
    cb_graph_two_bone_ik_desc reach = {.start_joint = "j5",
                                       .mid_joint = "j6",
                                       .end_joint = "j7",
                                       .target = {"tx", "ty", "tz"},
                                       .weight = "w_up"};
    OK(cb_graph_add_two_bone_ik(b, &reach, &err));
    const char *chain[2] = {"j3", "j4"};
    cb_graph_aim_ik_desc look = {
        .joints = chain, .joint_count = 2, .target = {"tz", "tx", "ty"}, .limit_rad = 1.0f};
    OK(cb_graph_add_aim_ik(b, &look, &err));
    return build(b);
}

static void busy_params(cb_crowd *c, int f, uint32_t n)
{
    float *vx = column(c, "vx"), *wu = column(c, "w_up"), *wa = column(c, "w_add");
    float *jump = column(c, "jump");
    for (uint32_t i = 0; i < n; ++i) {
        vx[i] = 1.2f + 1.3f * sinf(0.07f * (float)f + 0.9f * (float)i);
        wu[i] = 0.5f + 0.5f * sinf(0.05f * (float)f + (float)i);
        wa[i] = (i % 3) * 0.4f;
        if ((f + (int)i) % 53 == 0) {
            jump[i] = 1.0f;
        }
    }
}

/* Every frame's output hash of a crowd of hash_n() characters running g is the same for each
 * configuration (threads[k], batches[k]) as for the first; the last updates through
 * update_range over uneven sub-ranges, in an order that changes every frame. params(c, f)
 * writes frame f's parameters, the same for every configuration. */
enum { HASH_FRAMES = 90, HASH_CONFIGS = 5 };

/* 203 characters; 141 in slow builds (CB_TEST_SCALE below 1): still past the last sub-range cut
 * (130) and every parameter pattern's period (53 at most), and a partial batch of every size. */
static uint32_t hash_n(void)
{
    return cb_test_scale() < 1.0 ? 141 : 203;
}

static void check_same_hashes(const scene *sc, const cb_graph *g,
                              const uint32_t threads[HASH_CONFIGS],
                              const uint32_t batches[HASH_CONFIGS],
                              void (*params)(cb_crowd *c, int f))
{
    uint64_t hashes[HASH_CONFIGS][HASH_FRAMES];
    const uint32_t n = hash_n();
    for (int k = 0; k < HASH_CONFIGS; ++k) {
        cb_crowd *c = crowd_of(sc, g, n, threads[k], batches[k]);
        add_characters(c, n, 0.173f);
        cb_crowd_scratch *scratch = NULL;
        if (k == HASH_CONFIGS - 1) {
            assert_int_equal(cb_crowd_scratch_create(c, &scratch), CB_OK);
        }
        for (int f = 0; f < HASH_FRAMES; ++f) {
            params(c, f);
            if (scratch == NULL) {
                assert_int_equal(cb_crowd_update(c, DT), CB_OK);
            } else {
                const uint32_t cuts[] = {0, 7, 40, 41, 130, n};
                for (int p = 0; p < 5; ++p) {
                    int q = (p + f) % 5;
                    assert_int_equal(
                        cb_crowd_update_range(c, scratch, DT, 0, cuts[q], cuts[q + 1] - cuts[q]),
                        CB_OK);
                }
            }
            hashes[k][f] = cb_crowd_output_hash(c);
        }
        cb_crowd_scratch_destroy(c, scratch);
        cb_crowd_destroy(c);
    }
    for (int k = 1; k < HASH_CONFIGS; ++k) {
        for (int f = 0; f < HASH_FRAMES; ++f) {
            CB_CHECK(hashes[k][f] == hashes[0][f], "config %d differs at frame %d", k, f);
        }
    }
}

static void busy_frame(cb_crowd *c, int f)
{
    busy_params(c, f, hash_n());
}

/* Every frame's output hash is the same for 1, 2 and 3 threads, batch sizes from one SIMD
 * width to 64, and update_range over uneven sub-ranges. */
static void graph_output_is_bit_identical_across_threads_and_batches(void **state)
{
    graph_fx *fx = *state;
    cb_graph *g = busy_graph(fx->sc);
    static const uint32_t threads[HASH_CONFIGS] = {1, 2, 3, 2, 1};
    uint32_t w = (uint32_t)cb_simd_width();
    const uint32_t batches[HASH_CONFIGS] = {64, w, 2 * w, 48, 0};
    check_same_hashes(fx->sc, g, threads, batches, busy_frame);
    cb_graph_destroy(g);
}

/* A subtree whose influence falls to EPS or below is skipped by the weights stage (its shares
 * and its machines' crossfade progress are not computed for that character), yet the pose stage
 * still evaluates it inside a state it crossfades from, at its share of that state: here a
 * direct node or an inner machine (itself crossfading) under a blend space that gives it a tiny
 * share, in a state on its way out. Neither may read what the batch row held last (another
 * character's, or last frame's): every frame's output hash is the same for every batch size,
 * thread count and sub-range split. */
static cb_graph *fading_subtree_graph(const scene *sc)
{
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    static const char *const fl[] = {"pa", "pb", "mix", "mode", "inner"};
    for (int k = 0; k < 5; ++k) {
        OK(cb_graph_add_param(b, fl[k], CB_PARAM_FLOAT, 0.0f, &err));
    }
    cb_graph_node ab[2] = {add_clip(b, "a", CLIP_A), add_clip(b, "b", CLIP_B)};
    cb_graph_direct_desc dd = {.name = "d", .children = ab, .weights = fl, .child_count = 2};
    cb_graph_node kids[2] = {{0}, {0}};
    OK(cb_graph_add_direct(b, &dd, &kids[0], &err));
    cb_graph_state ist[2] = {{.name = "c", .node = add_clip(b, "c", CLIP_C)},
                             {.name = "e2", .node = add_clip(b, "e2", CLIP_E2)}};
    cb_graph_condition ion = {.param = "inner", .op = CB_COMPARE_GREATER, .value = 0.5f};
    cb_graph_condition ioff = {.param = "inner", .op = CB_COMPARE_LESS, .value = 0.5f};
    cb_graph_transition itr[2] = {
        {.from = "c", .to = "e2", .conditions = &ion, .condition_count = 1, .duration_s = 0.4f},
        {.from = "e2", .to = "c", .conditions = &ioff, .condition_count = 1, .duration_s = 0.4f},
    };
    cb_graph_state_machine_desc ismd = {
        .name = "i", .states = ist, .state_count = 2, .transitions = itr, .transition_count = 2};
    OK(cb_graph_add_state_machine(b, &ismd, &kids[1], &err));
    float pos[2] = {0.0f, 1.0f};
    cb_graph_blend_space_desc bs = {.name = "move",
                                    .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                    .params = {"mix"},
                                    .children = kids,
                                    .positions = pos,
                                    .child_count = 2};
    cb_graph_node move = {0};
    OK(cb_graph_add_blend_space(b, &bs, &move, &err));
    cb_graph_state st[2] = {{.name = "move", .node = move},
                            {.name = "wave", .node = add_clip(b, "wave", CLIP_E)}};
    cb_graph_condition on = {.param = "mode", .op = CB_COMPARE_GREATER, .value = 0.5f};
    cb_graph_condition off = {.param = "mode", .op = CB_COMPARE_LESS, .value = 0.5f};
    cb_graph_transition tr[2] = {
        {.from = "move", .to = "wave", .conditions = &on, .condition_count = 1, .duration_s = 0.5f},
        {.from = "wave",
         .to = "move",
         .conditions = &off,
         .condition_count = 1,
         .duration_s = 0.5f},
    };
    cb_graph_state_machine_desc smd = {
        .name = "m", .states = st, .state_count = 2, .transitions = tr, .transition_count = 2};
    cb_graph_node sm = {0};
    OK(cb_graph_add_state_machine(b, &smd, &sm, &err));
    return build(b);
}

/* Frame f's parameters of the fading graph, drawn for each character from a seed of its own
 * (the case's PRNG, the frame and the character): the same in every configuration. */
static uint64_t fading_seed;

static void fading_frame(cb_crowd *c, int f)
{
    float *pa = column(c, "pa"), *pb = column(c, "pb"), *mix = column(c, "mix");
    float *mode = column(c, "mode"), *inner = column(c, "inner");
    for (uint32_t i = 0, n = hash_n(); i < n; ++i) {
        cb_prng r = cb_prng_seed(fading_seed ^ ((uint64_t)f << 32 | i));
        pa[i] = cb_prng_range(&r, 0.0f, 1.0f);
        pb[i] = cb_prng_range(&r, 0.0f, 1.0f);
        /* a share of 2e-5 to 5e-4 for the direct node, or for the inner machine */
        float tiny = cb_prng_range(&r, 2e-5f, 5e-4f);
        mix[i] = i % 2 == 0 ? 1.0f - tiny : tiny;
        mode[i] = (f + 7 * (int)i) % 40 < 20 ? 1.0f : 0.0f;
        inner[i] = (f + 3 * (int)i) % 24 < 12 ? 1.0f : 0.0f;
    }
}

/* One thread but for one configuration: the rows left over then depend on the batch alone. */
static void graph_fading_subtrees_do_not_read_other_rows(void **state)
{
    graph_fx *fx = *state;
    cb_graph *g = fading_subtree_graph(fx->sc);
    fading_seed = cb_prng_next(&fx->r);
    static const uint32_t threads[HASH_CONFIGS] = {1, 1, 2, 1, 1};
    uint32_t w = (uint32_t)cb_simd_width();
    const uint32_t batches[HASH_CONFIGS] = {64, w, 2 * w, 48, 0};
    check_same_hashes(fx->sc, g, threads, batches, fading_frame);
    cb_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GRAPH_CASE(graph_state_machine_follows_its_rules),
        GRAPH_CASE(graph_exit_time_fires_on_the_counted_frame),
        GRAPH_CASE(graph_crossfade_matches_the_reference),
        GRAPH_CASE_FLAT(graph_inertialization_follows_the_quintic),
        GRAPH_CASE_FLAT(graph_interruptions_continue_from_the_pose_shown),
        GRAPH_CASE(graph_layers_match_the_reference),
        GRAPH_CASE(graph_direct_weights_are_normalized_parameters),
        GRAPH_CASE(graph_clip_times_follow_rates_and_sync_groups),
        GRAPH_CASE(graph_processors_write_their_outputs),
        GRAPH_CASE(graph_events_fire_once_per_crossing),
        GRAPH_CASE(graph_sync_groups_keep_markers_in_step),
        cmocka_unit_test(graph_transitions_do_not_pop),
        cmocka_unit_test(graph_ik_reaches_its_targets),
        GRAPH_CASE(graph_output_is_bit_identical_across_threads_and_batches),
        GRAPH_CASE(graph_fading_subtrees_do_not_read_other_rows),
    };
    return cmocka_run_group_tests(tests, graph_group_setup, graph_group_teardown);
}
