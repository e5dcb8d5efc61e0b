/* graph: what a builder accepts and refuses (every call's validity table, with the field named
 * in the message), and what a built graph answers about itself (its queries against what was
 * added). The compiler's passes are in test_graph_compile.c; what a graph does to a character
 * in test_graph_runtime.c. The scenes come from the shared fixture (common/graph_fixture.h). */
#include "graph_fixture.h"

/* ------------------------------------------------------------------------------------------ */
/* The builder                                                                                */

static void graph_builder_validity_table(void **state)
{
    graph_fx *fx = *state;
    cb_prng r = fx->r;
    scene *sc = fx->sc;
    cb_error err = {0};
    cb_graph_node n = {0}, a = {0}, bb = {0};

    /* Creating. */
    cb_graph_builder *b = NULL;
    cb_graph_builder_desc bd = {.skeleton = sc->sk, .clips = sc->clip_ptrs, .clip_count = NCLIP};
    assert_int_equal(cb_graph_builder_create(NULL, &b, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_builder_create(&bd, NULL, &err), CB_ERR_NULL_ARGUMENT);
    cb_graph_builder_desc bad = bd;
    bad._end_canary = 1;
    assert_int_equal(cb_graph_builder_create(&bad, &b, &err), CB_ERR_CANARY);
    bad = bd;
    bad.skeleton = NULL;
    assert_int_equal(cb_graph_builder_create(&bad, &b, &err), CB_ERR_NULL_ARGUMENT);
    const cb_clip *twice[2] = {sc->clips[0], sc->clips[0]};
    bad = bd;
    bad.clips = twice, bad.clip_count = 2;
    assert_int_equal(cb_graph_builder_create(&bad, &b, &err), CB_ERR_DUPLICATE);
    assert_non_null(strstr(err.message, "'a'"));
    cb_skeleton *other = cb_test_random_skeleton(&r, 5, false, false);
    bad = bd;
    bad.skeleton = other;
    assert_int_equal(cb_graph_builder_create(&bad, &b, &err), CB_ERR_MISMATCH);
    cb_skeleton_destroy(other);
    bad = bd;
    bad.allocator.alloc_fn = cb_test_counting_alloc; /* a half-set allocator */
    assert_int_equal(cb_graph_builder_create(&bad, &b, &err), CB_ERR_ALLOCATOR);
    bad = bd;
    bad.allocator = cb_test_failing_allocator();
    assert_int_equal(cb_graph_builder_create(&bad, &b, &err), CB_ERR_OUT_OF_MEMORY);
    b = builder_of(sc);

    /* Parameters. */
    assert_int_equal(cb_graph_add_param(b, "", CB_PARAM_FLOAT, 0.0f, &err),
                     CB_ERR_INVALID_ARGUMENT);
    char longname[80];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(cb_graph_add_param(b, longname, CB_PARAM_FLOAT, 0.0f, &err),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_graph_add_param(b, "t", (cb_param_type)99, 0.0f, &err),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_graph_add_param(b, "x", CB_PARAM_FLOAT, NAN, &err), CB_ERR_NOT_FINITE);
    OK(cb_graph_add_param(b, "x", CB_PARAM_FLOAT, 0.0f, &err));
    OK(cb_graph_add_param(b, "go", CB_PARAM_BOOL, 0.0f, &err));
    OK(cb_graph_add_param(b, "mode", CB_PARAM_INT, 0.0f, &err));
    OK(cb_graph_add_param(b, "jump", CB_PARAM_TRIGGER, 0.0f, &err));
    assert_int_equal(cb_graph_add_param(b, "x", CB_PARAM_FLOAT, 0.0f, &err), CB_ERR_DUPLICATE);
    /* "costarring" and "liquid" share their 32-bit FNV-1a hash (a known pair). */
    assert_int_equal(cb_name_hash("costarring"), cb_name_hash("liquid"));
    OK(cb_graph_add_param(b, "costarring", CB_PARAM_FLOAT, 0.0f, &err));
    assert_int_equal(cb_graph_add_param(b, "liquid", CB_PARAM_FLOAT, 0.0f, &err), CB_ERR_DUPLICATE);
    assert_non_null(strstr(err.message, "costarring"));
    assert_int_equal(cb_graph_add_param(b, "half", CB_PARAM_INT, 0.5f, &err),
                     CB_ERR_INVALID_ARGUMENT);

    /* Processors. */
    cb_graph_interp_to_desc it = {.input = "x", .output = "x", .speed = 4.0f};
    assert_int_equal(cb_graph_add_interp_to(b, &it, &err), CB_ERR_INVALID_ARGUMENT);
    it.output = "nope";
    assert_int_equal(cb_graph_add_interp_to(b, &it, &err), CB_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "nope"));
    it.output = "go";
    assert_int_equal(cb_graph_add_interp_to(b, &it, &err), CB_ERR_MISMATCH);
    cb_graph_quadrant_desc qd = {.x = "x", .y = "x", .output = "mode", .dead_zone_rad = 1.0f};
    assert_int_equal(cb_graph_add_quadrant(b, &qd, &err), CB_ERR_INVALID_ARGUMENT);
    cb_graph_velocity_blend_desc vd = {.x = "x",
                                       .y = "x",
                                       .forward = "x",
                                       .backward = "x",
                                       .left = "x",
                                       .right = "x",
                                       .min_sq_len = -1.0f};
    assert_int_equal(cb_graph_add_velocity_blend(b, &vd, &err), CB_ERR_INVALID_ARGUMENT);

    /* Clip nodes. */
    cb_graph_clip_desc cd = {.name = "a", .clip = "missing"};
    assert_int_equal(cb_graph_add_clip(b, &cd, &n, &err), CB_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "missing"));
    cd.clip = NULL;
    assert_int_equal(cb_graph_add_clip(b, &cd, &n, &err), CB_ERR_NULL_ARGUMENT);
    cd.clip = "a";
    cd.speed = NAN;
    assert_int_equal(cb_graph_add_clip(b, &cd, &n, &err), CB_ERR_NOT_FINITE);
    cd.speed = 0.0f;
    cd.start_offset = 1.0f;
    assert_int_equal(cb_graph_add_clip(b, &cd, &n, &err), CB_ERR_INVALID_ARGUMENT);
    cd.start_offset = 0.0f;
    cd.speed_param = "go";
    assert_int_equal(cb_graph_add_clip(b, &cd, &n, &err), CB_ERR_MISMATCH);
    cd.speed_param = NULL;
    OK(cb_graph_add_clip(b, &cd, &a, &err));
    assert_int_equal(cb_graph_add_clip(b, &cd, &n, &err), CB_ERR_DUPLICATE);
    bb = add_clip(b, "b", CLIP_B);

    /* Blend spaces. */
    cb_graph_node kids[2] = {a, bb};
    float pos[2] = {0.0f, 1.0f};
    cb_graph_blend_space_desc bs = {.name = "bs",
                                    .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                    .params = {"x"},
                                    .children = kids,
                                    .positions = pos,
                                    .child_count = 2};
    bs.child_count = 0;
    assert_int_equal(cb_graph_add_blend_space(b, &bs, &n, &err), CB_ERR_INVALID_ARGUMENT);
    bs.child_count = 2;
    cb_graph_node wrong[2] = {a, {999}};
    bs.children = wrong;
    assert_int_equal(cb_graph_add_blend_space(b, &bs, &n, &err), CB_ERR_INVALID_ARGUMENT);
    bs.children = kids;
    bs.params[0] = "go";
    assert_int_equal(cb_graph_add_blend_space(b, &bs, &n, &err), CB_ERR_MISMATCH);
    bs.params[0] = "x";
    float nan_pos[2] = {0.0f, NAN};
    bs.positions = nan_pos;
    assert_int_equal(cb_graph_add_blend_space(b, &bs, &n, &err), CB_ERR_NOT_FINITE);
    bs.positions = pos;

    /* Direct. */
    const char *dw[2] = {"x", "go"};
    cb_graph_direct_desc dd = {.name = "d", .children = kids, .weights = dw, .child_count = 2};
    assert_int_equal(cb_graph_add_direct(b, &dd, &n, &err), CB_ERR_MISMATCH);

    /* Layers. */
    cb_graph_layer ly = {.node = a, .mode = CB_LAYER_OVERRIDE, .mask_joint = "no_joint"};
    cb_graph_layers_desc ld = {.name = "l", .base = bb, .layers = &ly, .layer_count = 1};
    assert_int_equal(cb_graph_add_layers(b, &ld, &n, &err), CB_ERR_NOT_FOUND);
    ly.mask_joint = NULL;
    ly.mode = CB_LAYER_ADDITIVE; /* a normal clip in an additive layer */
    assert_int_equal(cb_graph_add_layers(b, &ld, &n, &err), CB_ERR_MISMATCH);
    float short_mask[2] = {1.0f, 1.0f};
    ly.mode = CB_LAYER_OVERRIDE;
    ly.mask = (cb_float_cspan){short_mask, 2};
    assert_int_equal(cb_graph_add_layers(b, &ld, &n, &err), CB_ERR_SPAN_TOO_SHORT);

    /* State machines. */
    cb_graph_state st[2] = {{.name = "s0", .node = a}, {.name = "s1", .node = bb}};
    cb_graph_condition cond = {.param = "go", .op = CB_COMPARE_TRUE};
    cb_graph_transition tr = {
        .from = "s0", .to = "s1", .conditions = &cond, .condition_count = 1, .duration_s = 0.2f};
    cb_graph_state_machine_desc sm = {
        .name = "sm", .states = st, .state_count = 2, .transitions = &tr, .transition_count = 1};
    tr.to = "s9";
    assert_int_equal(cb_graph_add_state_machine(b, &sm, &n, &err), CB_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "s9"));
    tr.to = "s1";
    tr.condition_count = 0;
    assert_int_equal(cb_graph_add_state_machine(b, &sm, &n, &err), CB_ERR_INVALID_ARGUMENT);
    tr.condition_count = 1;
    cond.op = CB_COMPARE_GREATER; /* a bool compared as a number */
    assert_int_equal(cb_graph_add_state_machine(b, &sm, &n, &err), CB_ERR_MISMATCH);
    cond = (cb_graph_condition){.param = "jump", .op = CB_COMPARE_FALSE};
    assert_int_equal(cb_graph_add_state_machine(b, &sm, &n, &err), CB_ERR_MISMATCH);
    cond = (cb_graph_condition){.param = "go", .op = CB_COMPARE_TRUE};
    tr.duration_s = -1.0f;
    assert_int_equal(cb_graph_add_state_machine(b, &sm, &n, &err), CB_ERR_INVALID_ARGUMENT);
    tr.duration_s = 0.2f;
    st[1].name = "s0";
    assert_int_equal(cb_graph_add_state_machine(b, &sm, &n, &err), CB_ERR_DUPLICATE);
    st[1].name = "s1";
    sm.initial = "s7";
    assert_int_equal(cb_graph_add_state_machine(b, &sm, &n, &err), CB_ERR_NOT_FOUND);
    sm.initial = NULL;
    OK(cb_graph_add_state_machine(b, &sm, &n, &err));

    /* IK steps. */
    const char *tgt[3] = {"x", "x", "x"};
    cb_graph_two_bone_ik_desc tb = {.start_joint = "j5",
                                    .mid_joint = "j6",
                                    .end_joint = "j99",
                                    .target = {tgt[0], tgt[1], tgt[2]}};
    assert_int_equal(cb_graph_add_two_bone_ik(b, &tb, &err), CB_ERR_NOT_FOUND);
    tb.end_joint = "j9"; /* not below j6 */
    assert_int_equal(cb_graph_add_two_bone_ik(b, &tb, &err), CB_ERR_HIERARCHY);
    tb.end_joint = "j7";
    tb.mid_axis[1] = NAN;
    assert_int_equal(cb_graph_add_two_bone_ik(b, &tb, &err), CB_ERR_NOT_FINITE);
    tb.mid_axis[1] = 0.0f;
    tb.soften = 1.5f;
    assert_int_equal(cb_graph_add_two_bone_ik(b, &tb, &err), CB_ERR_INVALID_ARGUMENT);
    tb.soften = 0.0f;
    tb.target[2] = "go";
    assert_int_equal(cb_graph_add_two_bone_ik(b, &tb, &err), CB_ERR_MISMATCH);
    const char *chain[2] = {"j8", "j2"}; /* the wrong way round */
    cb_graph_aim_ik_desc ad = {
        .joints = chain, .joint_count = 2, .target = {tgt[0], tgt[1], tgt[2]}};
    assert_int_equal(cb_graph_add_aim_ik(b, &ad, &err), CB_ERR_HIERARCHY);
    chain[0] = "j2", chain[1] = "j8";
    ad.limit_rad = 4.0f;
    assert_int_equal(cb_graph_add_aim_ik(b, &ad, &err), CB_ERR_INVALID_ARGUMENT);
    ad.limit_rad = 0.0f;
    ad.forward[1] = 1.0f; /* forward along the default up, with a pole: no twist is defined */
    ad.pole[1] = 1.0f;
    assert_int_equal(cb_graph_add_aim_ik(b, &ad, &err), CB_ERR_DEGENERATE);
    ad.joint_count = 0;
    assert_int_equal(cb_graph_add_aim_ik(b, &ad, &err), CB_ERR_INVALID_ARGUMENT);

    /* Root and build. */
    assert_int_equal(cb_graph_set_root(b, (cb_graph_node){12345}, &err), CB_ERR_INVALID_ARGUMENT);
    OK(cb_graph_set_root(b, n, &err));
    cb_graph *g = NULL;
    OK(cb_graph_build(b, &g, &err));
    cb_graph *again = NULL;
    assert_int_equal(cb_graph_build(b, &again, &err), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_graph_add_param(b, "late", CB_PARAM_FLOAT, 0.0f, &err),
                     CB_ERR_INVALID_ARGUMENT);
    cb_graph_builder_destroy(b);

    /* An additive clip played as a base pose is refused at build, alone or in a blend. */
    for (int blend = 0; blend < 2; ++blend) {
        b = builder_of(sc);
        OK(cb_graph_add_param(b, "x", CB_PARAM_FLOAT, 0.0f, &err));
        cb_graph_clip_desc lone = {.name = "add", .clip = "add"};
        OK(cb_graph_add_clip(b, &lone, &n, &err));
        if (blend) {
            cb_graph_node with_add[2] = {add_clip(b, "a", CLIP_A), n};
            bs.children = with_add;
            OK(cb_graph_add_blend_space(b, &bs, &n, &err));
        }
        assert_int_equal(cb_graph_build(b, &again, &err), CB_ERR_MISMATCH);
        assert_non_null(strstr(err.message, "add"));
        cb_graph_builder_destroy(b);
    }
    /* Nothing to play. */
    b = builder_of(sc);
    assert_int_equal(cb_graph_build(b, &again, &err), CB_ERR_TOO_FEW);
    cb_graph_builder_destroy(b);
    cb_graph_builder_destroy(NULL);
    cb_graph_destroy(g);
    cb_graph_destroy(NULL);
}

/* FNV-1a, 32 bits, as the test knows it (offset basis 2166136261, prime 16777619). */
static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s != '\0'; ++s) {
        h = (h ^ (uint8_t)*s) * 16777619u;
    }
    return h;
}

static void graph_queries_name_what_was_built(void **state)
{
    graph_fx *fx = *state;
    scene *sc = fx->sc;
    cb_graph_builder *b = builder_of(sc);
    cb_error err = {0};
    static const char *const pnames[4] = {"speed", "count", "on", "fire"};
    static const cb_param_type ptypes[4] = {CB_PARAM_FLOAT, CB_PARAM_INT, CB_PARAM_BOOL,
                                            CB_PARAM_TRIGGER};
    static const float pdefaults[4] = {1.5f, 3.0f, 1.0f, 0.0f};
    for (int k = 0; k < 4; ++k) {
        OK(cb_graph_add_param(b, pnames[k], ptypes[k], pdefaults[k], &err));
    }
    cb_graph_node a = add_clip(b, "walk", CLIP_A), cn = add_clip(b, "run", CLIP_C);
    cb_graph_state st[2] = {{.name = "slow", .node = a}, {.name = "fast", .node = cn}};
    cb_graph_condition cond = {.param = "fire", .op = CB_COMPARE_TRUE};
    cb_graph_transition tr = {
        .from = "slow", .to = "fast", .conditions = &cond, .condition_count = 1};
    cb_graph_state_machine_desc sm = {.name = "machine",
                                      .states = st,
                                      .state_count = 2,
                                      .transitions = &tr,
                                      .transition_count = 1,
                                      .initial = "fast"};
    cb_graph_node m = {0};
    OK(cb_graph_add_state_machine(b, &sm, &m, &err));
    cb_graph *g = build(b);

    assert_string_equal(cb_graph_name(g), "test");
    assert_ptr_equal(cb_graph_skeleton(g), sc->sk);
    assert_int_equal(cb_graph_param_count(g), 4);
    for (uint32_t k = 0; k < 4; ++k) {
        uint32_t i = 99, h = 99;
        assert_int_equal(cb_name_hash(pnames[k]), fnv1a(pnames[k]));
        assert_int_equal(cb_graph_find_param(g, pnames[k], &i), CB_OK);
        assert_int_equal(cb_graph_find_param_hash(g, fnv1a(pnames[k]), &h), CB_OK);
        assert_int_equal(i, h);
        assert_string_equal(cb_graph_param_name(g, i), pnames[k]);
        assert_int_equal(cb_graph_param_type(g, i), ptypes[k]);
        assert_true(cb_graph_param_default(g, i) == pdefaults[k]);
    }
    uint32_t i = 0;
    assert_int_equal(cb_graph_find_param(g, "nope", &i), CB_ERR_NOT_FOUND);
    assert_int_equal(cb_graph_find_param_hash(g, fnv1a("nope"), &i), CB_ERR_NOT_FOUND);
    assert_int_equal(cb_graph_find_param(g, NULL, &i), CB_ERR_NULL_ARGUMENT);
    assert_null(cb_graph_param_name(g, 4));

    assert_int_equal(cb_graph_state_machine_count(g), 1);
    uint32_t mi = 9, si = 9;
    assert_int_equal(cb_graph_find_state_machine(g, "machine", &mi), CB_OK);
    assert_int_equal(cb_graph_state_count(g, mi), 2);
    assert_string_equal(cb_graph_state_name(g, mi, 1), "fast");
    assert_int_equal(cb_graph_find_state(g, mi, "slow", &si), CB_OK);
    assert_int_equal(si, 0);
    assert_int_equal(cb_graph_find_state(g, mi, "none", &si), CB_ERR_NOT_FOUND);
    assert_int_equal(cb_graph_node_count(g), 3);

    /* Which clip each clip node plays: the clips given to add_clip, by slot and by node; the
     * machine is no clip node; indices out of range and a NULL graph answer invalid. */
    uint32_t walk = 99, run = 99;
    assert_int_equal(cb_graph_find_node(g, "walk", &walk), CB_OK);
    assert_int_equal(cb_graph_find_node(g, "run", &run), CB_OK);
    assert_int_equal(cb_graph_clip_count(g), 2);
    assert_ptr_equal(cb_graph_clip(g, cb_graph_node_clip(g, walk)), sc->clips[CLIP_A]);
    assert_ptr_equal(cb_graph_clip(g, cb_graph_node_clip(g, run)), sc->clips[CLIP_C]);
    for (uint32_t s = 0; s < 2; ++s) {
        assert_int_equal(cb_graph_node_clip(g, cb_graph_clip_node(g, s)), s);
    }
    assert_string_equal(cb_clip_name(cb_graph_clip(g, cb_graph_node_clip(g, run))),
                        clip_names[CLIP_C]);
    assert_int_equal(cb_graph_node_clip(g, 0), CB_INVALID_INDEX); /* the root: the machine */
    assert_int_equal(cb_graph_node_clip(g, 3), CB_INVALID_INDEX);
    assert_int_equal(cb_graph_node_clip(g, CB_INVALID_INDEX), CB_INVALID_INDEX);
    assert_int_equal(cb_graph_node_clip(NULL, walk), CB_INVALID_INDEX);
    assert_null(cb_graph_clip(g, 2));
    assert_null(cb_graph_clip(g, CB_INVALID_INDEX));
    assert_null(cb_graph_clip(NULL, 0));

    /* A character starts in the initial state with the parameters' defaults. */
    cb_crowd *c = crowd_of(sc, g, 8, 1, 0);
    add_characters(c, 3, 0.25f);
    assert_int_equal(cb_crowd_state(c, 0, mi, 2), 1);
    assert_true(column(c, "speed")[1] == 1.5f && column(c, "count")[2] == 3.0f);
    assert_int_equal(cb_crowd_state(c, 0, 5, 0), UINT32_MAX);
    assert_int_equal(cb_crowd_next_state(c, 0, mi, 0), UINT32_MAX);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GRAPH_CASE(graph_builder_validity_table),
        GRAPH_CASE(graph_queries_name_what_was_built),
    };
    return cmocka_run_group_tests(tests, graph_group_setup, graph_group_teardown);
}
