/* crowd: the traps a new user fell into (issue 11), each against a property or an independent
 * reference: stale handles after many add/remove cycles, a graph destroyed under a running
 * crowd, matrices read before the first update, joint masks of one float per joint, a 1D blend
 * space over in-place clips, NaN parameters. */
#include "graph_fixture.h"

static const char *const loco[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

/* The humanoid's 17 locomotion clips in a 2D blend space. */
static cb_graph *loco_graph(void)
{
    const cb_clip *clips[17];
    for (int k = 0; k < 17; ++k) {
        clips[k] = cb_embedded_find_clip(humanoid, loco[k]);
    }
    cb_graph_blend_desc d = {.skeleton = humanoid_skeleton(), .clips = clips, .clip_count = 17};
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_create_blend(&d, &g, &err) == CB_OK, "blend graph: %s", err.message);
    return g;
}

static cb_crowd *crowd_of_kinds(const cb_graph *const *graphs, uint32_t graph_count,
                                uint32_t capacity)
{
    cb_crowd_desc d = {.skeleton = humanoid_skeleton(),
                       .capacity = capacity,
                       .graphs = graphs,
                       .graph_count = graph_count,
                       .thread_count = 1};
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "crowd: %s", err.message);
    return c;
}

/* ------------------------------------------------------------------------------------------ */
/* 1. Stale handles                                                                            */

/* The slot freed last is reused first, so add/remove cycles hammer one slot; the 10-bit
 * generation let the first handle back in at cycle 1,023. Through 3,000 cycles on two kinds,
 * every earlier handle of the slot is refused by locate and by remove. */
static void stale_handles_stay_refused_after_many_cycles(void **state)
{
    (void)state;
    cb_graph *g = loco_graph();
    const cb_graph *graphs[2] = {g, g};
    cb_crowd *c = crowd_of_kinds(graphs, 2, 4);
    enum { CYCLES = 3000 };
    for (uint32_t kind = 0; kind < 2; ++kind) {
        cb_character keep;
        assert_int_equal(cb_crowd_add(c, kind, 0.0f, &keep), CB_OK); /* not in the cycle */
        cb_character first = {0}, prev = {0};
        for (uint32_t cycle = 0; cycle < CYCLES; ++cycle) {
            cb_character ch;
            uint32_t k, dense;
            assert_int_equal(cb_crowd_add(c, kind, 0.0f, &ch), CB_OK);
            assert_int_equal(cb_crowd_locate(c, ch, &k, &dense), CB_OK);
            assert_int_equal(k, kind);
            assert_int_equal(dense, 1);
            if (cycle == 0) {
                first = ch;
            } else {
                CB_CHECK(ch.id != first.id && ch.id != prev.id, "cycle %u reissued a handle",
                         cycle);
                CB_CHECK(cb_crowd_locate(c, first, &k, &dense) == CB_ERR_STALE_HANDLE,
                         "kind %u cycle %u: the first handle is accepted again", kind, cycle);
                assert_int_equal(cb_crowd_locate(c, prev, &k, &dense), CB_ERR_STALE_HANDLE);
                assert_int_equal(cb_crowd_remove(c, first), CB_ERR_STALE_HANDLE);
            }
            assert_int_equal(cb_crowd_remove(c, ch), CB_OK);
            assert_int_equal(cb_crowd_remove(c, ch), CB_ERR_STALE_HANDLE);
            prev = ch;
        }
        assert_int_equal(cb_crowd_count(c, kind), 1);
        uint32_t k, dense;
        assert_int_equal(cb_crowd_locate(c, keep, &k, &dense), CB_OK);
    }
    cb_crowd_destroy(c);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
}

/* ------------------------------------------------------------------------------------------ */
/* 3. A graph destroyed under a running crowd                                                  */

/* Output hash of a crowd of 40 characters on a graph after 5 frames of moving parameters. */
static uint64_t run_frames(cb_crowd *c)
{
    float *x = column(c, CB_GRAPH_BLEND_PARAM_PREFIX "0");
    float *y = column(c, CB_GRAPH_BLEND_PARAM_PREFIX "1");
    for (uint32_t f = 0; f < 5; ++f) {
        for (uint32_t i = 0; i < cb_crowd_count(c, 0); ++i) {
            x[i] = 0.1f * (float)((i + f) % 9) - 0.4f;
            y[i] = 0.2f * (float)((i * 3 + f) % 11) - 1.0f;
        }
        assert_int_equal(cb_crowd_update(c, 1.0f / 30.0f), CB_OK);
    }
    return cb_crowd_output_hash(c);
}

/* A test allocator: `left` allocations succeed, then every one fails; with `poison`, blocks
 * come filled with 0xFF bytes (NaN floats, huge indices). */
typedef struct test_alloc {
    uint32_t left;
    bool poison;
    uint8_t pattern; /* the poison's byte (0: 0xFF) */
} test_alloc;

static void *test_alloc_fn(size_t size, size_t align, void *user)
{
    test_alloc *t = user;
    if (t->left == 0) {
        return NULL;
    }
    t->left--;
    void *p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p != NULL && t->poison) {
        memset(p, t->pattern ? t->pattern : 0xFF, size);
    }
    return p;
}

static void test_free_fn(void *ptr, size_t size, void *user)
{
    (void)size;
    (void)user;
    free(ptr);
}

/* Crowds count themselves as the graph's users: cb_graph_destroy refuses while one runs it
 * (the crowd still runs, bit for bit as a twin on an untouched graph), and frees it once the
 * last one is gone, also after creates that failed halfway. */
static void graph_in_use_is_not_destroyed(void **state)
{
    (void)state;
    cb_graph *g = loco_graph(), *twin = loco_graph();
    const cb_graph *both[2] = {g, g}, *one[1] = {g}, *other[1] = {twin};
    cb_crowd *a = crowd_of_kinds(one, 1, 64), *b = crowd_of_kinds(both, 2, 8);
    cb_crowd *t = crowd_of_kinds(other, 1, 64);
    add_characters(a, 40, 0.37f);
    add_characters(t, 40, 0.37f);
    assert_int_equal(cb_graph_destroy(g), CB_ERR_IN_USE);
    assert_int_equal(run_frames(a), run_frames(t));
    cb_crowd_destroy(a);
    assert_int_equal(cb_graph_destroy(g), CB_ERR_IN_USE); /* b runs it twice */
    cb_crowd_destroy(b);
    /* Creates that fail at every allocation in turn leave no user behind. */
    for (uint32_t n = 0; n < 40; ++n) {
        test_alloc f = {n, false};
        cb_crowd_desc d = {.skeleton = humanoid_skeleton(),
                           .capacity = 8,
                           .graphs = both,
                           .graph_count = 2,
                           .thread_count = 2,
                           .keep_weights = true,
                           .allocator = {test_alloc_fn, test_free_fn, &f}};
        cb_crowd *c = NULL;
        cb_result r = cb_crowd_create(&d, &c, NULL);
        CB_CHECK(r == CB_OK || r == CB_ERR_OUT_OF_MEMORY || r == CB_ERR_THREAD,
                 "create after %u allocations: %s", n, cb_result_str(r));
        cb_crowd_destroy(c);
    }
    assert_int_equal(cb_graph_destroy(g), CB_OK);
    cb_crowd_destroy(t);
    assert_int_equal(cb_graph_destroy(twin), CB_OK);
    assert_int_equal(cb_graph_destroy(NULL), CB_OK);
}

/* ------------------------------------------------------------------------------------------ */
/* 8. Matrices before the first update                                                         */

/* A scene's rest pose taken to model space in double, against a character's matrices in
 * either layout: the largest difference over every matrix entry. */
static double rest_error(const scene *sc, const float *m, cb_matrix_layout layout)
{
    dref_xform local[NJ];
    for (size_t j = 0; j < NJ; ++j) {
        for (int k = 0; k < 3; ++k) {
            local[j].t[k] = sc->rest[j].translation[k];
            local[j].s[k] = sc->rest[j].scale[k];
        }
        for (int k = 0; k < 4; ++k) {
            local[j].q[k] = sc->rest[j].rotation[k];
        }
    }
    dref_mat model[NJ];
    dref_local_to_model(sc->parents, NJ, local, model);
    double worst = 0.0;
    for (size_t j = 0; j < NJ; ++j) {
        for (int col = 0; col < 4; ++col) {
            for (int row = 0; row < (layout == CB_MATRIX_LAYOUT_MAT4 ? 4 : 3); ++row) {
                float got = layout == CB_MATRIX_LAYOUT_MAT4 ? m[16 * j + 4 * col + row]
                                                            : m[12 * j + 4 * row + col];
                double d = fabs((double)got - model[j].m[col][row]);
                worst = d > worst || isnan(d) ? d : worst;
            }
        }
    }
    return worst;
}

/* A character added and not yet updated reads the skeleton's rest pose (a double-precision
 * reference of the scene's rest transforms), in both layouts and in a host buffer; after an
 * update it reads its animated pose, and one added then still reads the rest pose. */
static void new_characters_read_the_rest_pose(void **state)
{
    graph_fx *fx = *state;
    cb_error err = {0};
    cb_graph_builder *b = builder_of(fx->sc);
    add_clip(b, "a", CLIP_A);
    cb_graph *g = build(b);
    const cb_graph *gs[1] = {g};
    for (int layout = CB_MATRIX_LAYOUT_MAT4; layout <= CB_MATRIX_LAYOUT_MAT3X4; ++layout) {
        size_t floats = NJ * cb_ltm_matrix_floats((cb_matrix_layout)layout);
        float *host = malloc(5 * floats * sizeof(float) + 64);
        for (size_t i = 0; i < 5 * floats + 16; ++i) {
            host[i] = NAN; /* what the host had there */
        }
        cb_crowd_desc d = {.skeleton = fx->sc->sk,
                           .capacity = 5,
                           .graphs = gs,
                           .graph_count = 1,
                           .thread_count = 1,
                           .matrix_layout = (cb_matrix_layout)layout,
                           .matrices = layout == CB_MATRIX_LAYOUT_MAT3X4 ? host : NULL,
                           .matrix_stride_bytes = (floats + 4) * sizeof(float)};
        cb_crowd *c = NULL;
        OK(cb_crowd_create(&d, &c, &err));
        add_characters(c, 3, 0.3f);
        for (uint32_t i = 0; i < 3; ++i) {
            double e = rest_error(fx->sc, cb_crowd_matrices(c, 0, i), (cb_matrix_layout)layout);
            CB_CHECK(e < 1e-5, "layout %d character %u: %g off the rest pose", layout, i, e);
        }
        assert_int_equal(cb_crowd_update(c, DT), CB_OK);
        double animated = rest_error(fx->sc, cb_crowd_matrices(c, 0, 1), (cb_matrix_layout)layout);
        CB_CHECK(animated > 1e-3, "the clip moves the pose (%g off rest)", animated);
        add_characters(c, 1, 0.0f);
        double e = rest_error(fx->sc, cb_crowd_matrices(c, 0, 3), (cb_matrix_layout)layout);
        CB_CHECK(e < 1e-5, "layout %d: added after an update, %g off the rest pose", layout, e);
        cb_crowd_destroy(c);
        free(host);
    }
    assert_int_equal(cb_graph_destroy(g), CB_OK);
}

/* ------------------------------------------------------------------------------------------ */
/* 7. Joint masks of one float per joint                                                       */

/* Whether joint j is `root` or below it, walking the parents. */
static bool below(const int32_t *parents, int32_t j, int32_t root)
{
    while (j > root) {
        j = parents[j];
    }
    return j == root;
}

/* cb_skeleton_build_mask fills a buffer of exactly one float per joint (nothing past it), for
 * joint counts around the SIMD width, against the subtrees walked from the parents here; one
 * float short is refused with the joint count in the message; a buffer with room for the
 * padding gets zeros there. */
static void joint_masks_take_one_float_per_joint(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    const uint32_t counts[] = {1, 5, 7, 9, 15, 17, 31, 33, 40};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        uint32_t n = counts[c];
        cb_skeleton *sk = cb_test_random_skeleton(&r, n, false, false);
        uint32_t soa = cb_skeleton_soa_joint_count(sk);
        const int32_t *parents = cb_skeleton_parents(sk);
        uint32_t sub = cb_prng_below(&r, n), one = cb_prng_below(&r, n);
        char sub_name[16], one_name[16];
        snprintf(sub_name, sizeof sub_name, "j%u", sub);
        snprintf(one_name, sizeof one_name, "j%u", one);
        cb_mask_rule rules[2] = {{.joint = sub_name, .weight = 0.75f},
                                 {.joint = one_name, .weight = 0.5f, .joint_only = true}};
        float *buf = malloc((soa + 8) * sizeof(float));
        for (uint32_t j = 0; j < soa + 8; ++j) {
            buf[j] = -1.0f;
        }
        assert_int_equal(cb_skeleton_build_mask(sk, 0.25f, rules, 2, (cb_float_span){buf, n}, NULL),
                         CB_OK);
        for (uint32_t j = 0; j < n; ++j) {
            float want = j == one ? 0.5f : below(parents, (int32_t)j, (int32_t)sub) ? 0.75f : 0.25f;
            CB_CHECK(buf[j] == want, "%u joints: mask[%u] = %g, want %g", n, j, (double)buf[j],
                     (double)want);
        }
        for (uint32_t j = n; j < soa + 8; ++j) {
            CB_CHECK(buf[j] == -1.0f, "%u joints: wrote past the joints at %u", n, j);
        }
        cb_error err = {0};
        assert_int_equal(
            cb_skeleton_build_mask(sk, 0.25f, rules, 2, (cb_float_span){buf, n - 1}, &err),
            CB_ERR_SPAN_TOO_SHORT);
        char needs[32];
        snprintf(needs, sizeof needs, "needs %u ", n);
        CB_CHECK(strstr(err.message, needs) != NULL, "message: %s", err.message);
        assert_int_equal(
            cb_skeleton_build_mask(sk, 0.25f, rules, 2, (cb_float_span){buf, soa + 8}, NULL),
            CB_OK);
        for (uint32_t j = n; j < soa + 8; ++j) {
            CB_CHECK(buf[j] == (j < soa ? 0.0f : -1.0f), "%u joints: padding entry %u = %g", n, j,
                     (double)buf[j]);
        }
        free(buf);
        cb_skeleton_destroy(sk);
    }
}

/* A blend graph's upper-body layer with a mask of exactly joint_count floats (built by
 * cb_skeleton_build_mask) runs bit for bit as the same layer given by its joint. */
static void layer_masks_take_one_float_per_joint(void **state)
{
    (void)state;
    const cb_skeleton *sk = humanoid_skeleton();
    uint32_t n = cb_skeleton_joint_count(sk);
    float *mask = malloc(n * sizeof(float));
    cb_mask_rule upper = {.joint = "spine_01", .weight = 1.0f};
    assert_int_equal(cb_skeleton_build_mask(sk, 0.0f, &upper, 1, (cb_float_span){mask, n}, NULL),
                     CB_OK);
    const cb_clip *clips[17];
    for (int k = 0; k < 17; ++k) {
        clips[k] = cb_embedded_find_clip(humanoid, loco[k]);
    }
    uint64_t hash[2];
    for (int by_floats = 0; by_floats < 2; ++by_floats) {
        cb_graph_blend_desc d = {.skeleton = sk, .clips = clips, .clip_count = 17};
        d.upper_body.clip = cb_embedded_find_clip(humanoid, "wave_upper");
        if (by_floats) {
            d.upper_body.mask = (cb_float_cspan){mask, n};
        } else {
            d.upper_body.mask_joint = "spine_01";
        }
        cb_graph *g = NULL;
        cb_error err = {0};
        OK(cb_graph_create_blend(&d, &g, &err));
        const cb_graph *gs[1] = {g};
        cb_crowd *c = crowd_of_kinds(gs, 1, 64);
        add_characters(c, 40, 0.37f);
        hash[by_floats] = run_frames(c);
        cb_crowd_destroy(c);
        assert_int_equal(cb_graph_destroy(g), CB_OK);
    }
    assert_true(hash[0] == hash[1]);
    free(mask);
}

/* ------------------------------------------------------------------------------------------ */
/* 6. A blend space over in-place clips                                                        */

/* The scene's looping clips play in place (root speed 0): a blend graph that derives its
 * positions from root velocities is refused, naming two of the clips, for 1D kinds as for 2D
 * (1D made a step of the weights at 0 and returned CB_OK); given positions, the 1D space
 * blends linearly between neighbours (the closed form, at a query between two of them). */
static void in_place_blend_spaces_need_positions(void **state)
{
    graph_fx *fx = *state;
    const cb_clip *loops[3] = {fx->sc->clips[CLIP_A], fx->sc->clips[CLIP_B], fx->sc->clips[CLIP_C]};
    const cb_solver_kind kinds[] = {CB_SOLVER_KIND_LINEAR_1D, CB_SOLVER_KIND_IDW,
                                    CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D,
                                    CB_SOLVER_KIND_DELAUNAY_2D};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        cb_graph_blend_desc d = {
            .skeleton = fx->sc->sk, .clips = loops, .clip_count = 3, .solver = {.kind = kinds[k]}};
        if (kinds[k] == CB_SOLVER_KIND_IDW) {
            d.solver.dimension = 1;
        }
        cb_graph *g = NULL;
        cb_error err = {0};
        assert_int_equal(cb_graph_create_blend(&d, &g, &err), CB_ERR_DUPLICATE);
        assert_null(g);
        CB_CHECK(strstr(err.message, cb_clip_name(loops[0])) != NULL &&
                     strstr(err.message, cb_clip_name(loops[1])) != NULL &&
                     strstr(err.message, "positions") != NULL,
                 "solver %d: %s", (int)kinds[k], err.message);
    }
    /* Direct weights need no positions. */
    cb_graph_blend_desc direct = {.skeleton = fx->sc->sk,
                                  .clips = loops,
                                  .clip_count = 3,
                                  .solver = {.kind = CB_SOLVER_KIND_DIRECT}};
    cb_graph *g = NULL;
    cb_error err = {0};
    OK(cb_graph_create_blend(&direct, &g, &err));
    assert_int_equal(cb_graph_destroy(g), CB_OK);
    /* Given positions, a 1D space blends. */
    const float at[3] = {0.0f, 1.0f, 2.5f};
    cb_graph_blend_desc d = {.skeleton = fx->sc->sk,
                             .clips = loops,
                             .clip_count = 3,
                             .positions = at,
                             .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D}};
    OK(cb_graph_create_blend(&d, &g, &err));
    cb_crowd *c = crowd_of(fx->sc, g, 8, 1, 0);
    add_characters(c, 3, 0.0f);
    float *x = column(c, CB_GRAPH_BLEND_PARAM_PREFIX "0");
    const float query[3] = {0.25f, 1.75f, 0.0f};
    for (uint32_t i = 0; i < 3; ++i) {
        x[i] = query[i];
    }
    assert_int_equal(cb_crowd_update(c, DT), CB_OK);
    for (uint32_t i = 0; i < 3; ++i) {
        double q = query[i], want[3] = {0.0, 0.0, 0.0};
        uint32_t lo = q < at[1] ? 0 : 1;
        double f = (q - at[lo]) / (at[lo + 1] - at[lo]);
        want[lo] = 1.0 - f, want[lo + 1] = f;
        for (uint32_t n = 0; n < 3; ++n) {
            CB_CHECK(fabs(kept(c, n, i) - want[n]) < 1e-6, "x = %g: clip %u weight %g, want %g", q,
                     n, (double)kept(c, n, i), want[n]);
        }
    }
    cb_crowd_destroy(c);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
}

/* ------------------------------------------------------------------------------------------ */
/* 4. Non-finite parameters: one rule                                                          */

static cb_graph *load_full_graph(void)
{
    uint32_t clip_count = cb_embedded_clip_count(humanoid);
    const cb_clip **all = malloc(clip_count * sizeof *all);
    for (uint32_t k = 0; k < clip_count; ++k) {
        all[k] = cb_embedded_clip(humanoid, k);
    }
    cb_graph_json_desc d = {.skeleton = humanoid_skeleton(),
                            .clips = all,
                            .clip_count = clip_count,
                            .source_name = "full.json"};
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json_file(CB_TEST_GRAPH_DIR "/full.json", &d, &g, &err) == CB_OK,
             "full.json: %s", err.message);
    free(all);
    return g;
}

/* A host value for parameter p of pair `pair` at frame f, in the range its type uses. */
static float host_value(cb_param_type type, uint32_t p, uint32_t pair, uint32_t f)
{
    uint32_t h = (p * 2654435761u) ^ (pair * 40503u) ^ ((f / 6) * 2246822519u);
    h ^= h >> 13;
    switch (type) {
    case CB_PARAM_INT:
        return (float)(1 + h % 4);
    case CB_PARAM_BOOL:
        return (float)(h % 2);
    case CB_PARAM_TRIGGER:
        return (float)(f % 9 == pair % 9);
    default:
        return -1.0f + 4.0f * (float)(h % 1000) / 1000.0f;
    }
}

/* full.json's parameters the host writes (processor outputs are the graph's) into host[];
 * returns their count. */
static uint32_t host_params(const cb_graph *g, uint32_t host[64])
{
    static const char *const outputs[] = {"fwd",  "back",   "left",     "right",    "speed",
                                          "quad", "vspeed", "locked_l", "failed_l", "locked_r"};
    uint32_t hc = 0;
    for (uint32_t p = 0; p < cb_graph_param_count(g) && hc < 64; ++p) {
        bool out = false;
        for (size_t o = 0; o < sizeof outputs / sizeof outputs[0]; ++o) {
            out = out || strcmp(cb_graph_param_name(g, p), outputs[o]) == 0;
        }
        if (!out) {
            host[hc++] = p;
        }
    }
    return hc;
}

/* full.json runs every processor and every node kind (clip speeds, blend spaces, direct
 * blends, layers, nested state machines with int, bool, trigger and float conditions, two-bone
 * and aim IK, orientation and stride warping, foot locking with its root placement). For each
 * parameter the host writes, one character of a pair reads NaN, +inf or -inf in it during frames 10
 * to 29 and its twin reads 0; everything else is equal. The twins' outputs (matrices, root motion,
 * clip times, machine states) stay bit-identical on every frame, during and after (the speed
 * smoothing used to hold its value on a NaN target: the character kept moving), and each non-finite
 * value is counted once. */
static void nonfinite_parameters_read_as_zero_everywhere(void **state)
{
    (void)state;
    cb_graph *g = load_full_graph();
    const cb_graph *gs[1] = {g};
    uint32_t host[64], hc = host_params(g, host);
    cb_crowd *c = crowd_of_kinds(gs, 1, 2 * hc);
    for (uint32_t pair = 0; pair < hc; ++pair) {
        cb_character ch;
        float phase = 0.07f * (float)pair;
        assert_int_equal(cb_crowd_add(c, 0, phase, &ch), CB_OK);
        assert_int_equal(cb_crowd_add(c, 0, phase, &ch), CB_OK);
    }
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    uint64_t written = 0, locked = 0; /* character-frames with a foot locked: the step ran */
    uint32_t locked_l = UINT32_MAX;
    assert_int_equal(cb_graph_find_param(g, "locked_l", &locked_l), CB_OK);
    uint32_t joints = cb_crowd_joint_count(c), clips = cb_graph_clip_count(g);
    uint32_t machines = cb_graph_state_machine_count(g);
    for (uint32_t f = 0; f < 45; ++f) {
        for (uint32_t q = 0; q < hc; ++q) {
            float *col = cb_crowd_param_column(c, 0, host[q]);
            cb_param_type type = cb_graph_param_type(g, host[q]);
            for (uint32_t pair = 0; pair < hc; ++pair) {
                float v = host_value(type, host[q], pair, f);
                bool hit = pair == q && f >= 10 && f < 30;
                col[2 * pair] = hit ? 0.0f : v;
                col[2 * pair + 1] = hit ? bad[f % 3] : v;
                written += hit;
            }
        }
        assert_int_equal(cb_crowd_update(c, 1.0f / 30.0f), CB_OK);
        const cb_root_delta *rm = cb_crowd_root_motion(c, 0);
        const float *lock_col = cb_crowd_param_column(c, 0, locked_l);
        for (uint32_t pair = 0; pair < hc; ++pair) {
            uint32_t a = 2 * pair, b = a + 1;
            locked += lock_col[a] == 1.0f;
            const char *name = cb_graph_param_name(g, host[pair]);
            CB_CHECK(memcmp(cb_crowd_matrices(c, 0, a), cb_crowd_matrices(c, 0, b),
                            joints * 16 * sizeof(float)) == 0,
                     "frame %u, '%s' non-finite: the pose differs from the twin's at 0", f, name);
            CB_CHECK(memcmp(&rm[a], &rm[b], sizeof rm[a]) == 0,
                     "frame %u, '%s' non-finite: root motion (%g, %g) vs (%g, %g)", f, name,
                     (double)rm[b].translation[0], (double)rm[b].translation[2],
                     (double)rm[a].translation[0], (double)rm[a].translation[2]);
            for (uint32_t k = 0; k < clips; ++k) {
                const float *t = cb_crowd_clip_times(c, 0, k);
                CB_CHECK(memcmp(&t[a], &t[b], sizeof t[a]) == 0,
                         "frame %u, '%s' non-finite: clip %u time", f, name, k);
            }
            for (uint32_t m = 0; m < machines; ++m) {
                CB_CHECK(cb_crowd_state(c, 0, m, a) == cb_crowd_state(c, 0, m, b) &&
                             cb_crowd_next_state(c, 0, m, a) == cb_crowd_next_state(c, 0, m, b),
                         "frame %u, '%s' non-finite: machine %u", f, name, m);
            }
        }
    }
    assert_int_equal(cb_crowd_query_stats(c).nonfinite_params, written);
    CB_CHECK(locked > 0, "the foot lock never locked: its parameters were not exercised");
    cb_crowd_destroy(c);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
}

/* ------------------------------------------------------------------------------------------ */
/* 2. Memory follows use                                                                       */

/* Create no longer clears the matrices and handle tables (pages are touched as characters
 * arrive): whatever the memory held, adds, removes and frames give the same bits as on clean
 * memory, and before a frame the rest pose. */
static void crowd_memory_is_not_read_before_it_is_written(void **state)
{
    (void)state;
    cb_graph *g = loco_graph();
    const cb_graph *gs[2] = {g, g};
    uint64_t hash[2];
    for (int poisoned = 0; poisoned < 2; ++poisoned) {
        cb_crowd_desc d = {.skeleton = humanoid_skeleton(),
                           .capacity = 70,
                           .graphs = gs,
                           .graph_count = 2,
                           .thread_count = 2,
                           .keep_weights = true};
        test_alloc poison = {UINT32_MAX, true};
        if (poisoned) {
            d.allocator = (cb_allocator){test_alloc_fn, test_free_fn, &poison};
        }
        cb_crowd *c = NULL;
        assert_int_equal(cb_crowd_create(&d, &c, NULL), CB_OK);
        cb_character ch[2][70];
        for (uint32_t kind = 0; kind < 2; ++kind) {
            for (uint32_t i = 0; i < 70; ++i) {
                assert_int_equal(cb_crowd_add(c, kind, 0.013f * (float)i, &ch[kind][i]), CB_OK);
            }
            for (uint32_t i = 0; i < 70; i += 3) {
                assert_int_equal(cb_crowd_remove(c, ch[kind][i]), CB_OK);
            }
        }
        const float *m = cb_crowd_matrices(c, 1, 5);
        for (uint32_t k = 0; k < cb_crowd_joint_count(c) * 16; ++k) {
            CB_CHECK(isfinite(m[k]), "poisoned %d: matrix float %u before a frame", poisoned, k);
        }
        for (uint32_t kind = 0; kind < 2; ++kind) {
            float *x = cb_crowd_param_column(c, kind, 0), *y = cb_crowd_param_column(c, kind, 1);
            for (uint32_t i = 0; i < cb_crowd_count(c, kind); ++i) {
                x[i] = 0.05f * (float)(i % 13) - 0.3f;
                y[i] = 0.1f * (float)(i % 17);
            }
        }
        for (int f = 0; f < 4; ++f) {
            assert_int_equal(cb_crowd_update(c, 1.0f / 30.0f), CB_OK);
        }
        hash[poisoned] = cb_crowd_output_hash(c);
        cb_crowd_destroy(c);
    }
    assert_true(hash[0] == hash[1]);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
}

/* The graph state block is not cleared at create either: cb_crowd_add writes a slot's whole
 * state, and a frame reads only the slots of its characters. On full.json (processors, blend
 * spaces, layers, nested state machines with inertializing and interrupted transitions, IK,
 * events, kept weights), a crowd of CAP slots whose memory comes filled with a pattern runs k
 * characters bit for bit as a crowd of exactly k slots on the C library's memory: matrices,
 * root motion, clip times and weights, events, machine states and transitions, every frame.
 * Halfway, some characters leave and as many arrive in the slots they left (holding the old
 * characters' state): the newcomers run bit for bit as in a fresh crowd of their own. */
enum { SLOT_CAP = 300, SLOT_K = 37, SLOT_SWAP = 12, SLOT_FRAMES = 40, SLOT_SWAP_AT = 18 };

typedef struct slot_crowd {
    cb_crowd *c;
    test_alloc alloc;
    cb_character ch[SLOT_K + SLOT_SWAP]; /* by logical id; id 0 = none */
    bool live[SLOT_K + SLOT_SWAP];
} slot_crowd;

static void slot_crowd_make(slot_crowd *s, const cb_graph *g, uint32_t capacity, int pattern)
{
    const cb_graph *gs[1] = {g};
    cb_crowd_desc d = {.skeleton = humanoid_skeleton(),
                       .capacity = capacity,
                       .graphs = gs,
                       .graph_count = 1,
                       .thread_count = 2,
                       .keep_weights = true,
                       .events = true};
    memset(s, 0, sizeof *s);
    s->alloc = (test_alloc){UINT32_MAX, pattern >= 0, (uint8_t)pattern};
    if (pattern >= 0) {
        d.allocator = (cb_allocator){test_alloc_fn, test_free_fn, &s->alloc};
    }
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &s->c, &err) == CB_OK, "crowd: %s", err.message);
}

static void slot_add(slot_crowd *s, uint32_t id)
{
    assert_int_equal(cb_crowd_add(s->c, 0, 0.071f * (float)id, &s->ch[id]), CB_OK);
    s->live[id] = true;
}

static uint32_t slot_dense(const slot_crowd *s, uint32_t id)
{
    uint32_t kind, dense;
    assert_int_equal(cb_crowd_locate(s->c, s->ch[id], &kind, &dense), CB_OK);
    return dense;
}

/* The host's values for frame f, by the character's logical id (not its dense index). */
static void slot_params(slot_crowd *s, const cb_graph *g, const uint32_t *host, uint32_t hc,
                        uint32_t f)
{
    for (uint32_t id = 0; id < SLOT_K + SLOT_SWAP; ++id) {
        for (uint32_t q = 0; s->live[id] && q < hc; ++q) {
            cb_crowd_param_column(s->c, 0, host[q])[slot_dense(s, id)] =
                host_value(cb_graph_param_type(g, host[q]), host[q], id, f);
        }
    }
}

/* Character id's outputs in a and b agree bit for bit. */
static void slot_compare(const slot_crowd *a, const slot_crowd *b, const cb_graph *g, uint32_t id,
                         uint32_t f, const char *what)
{
    uint32_t da = slot_dense(a, id), db = slot_dense(b, id);
    uint32_t joints = cb_crowd_joint_count(a->c), clips = cb_graph_clip_count(g);
    CB_CHECK(memcmp(cb_crowd_matrices(a->c, 0, da), cb_crowd_matrices(b->c, 0, db),
                    joints * 16 * sizeof(float)) == 0,
             "%s, frame %u, character %u: matrices", what, f, id);
    CB_CHECK(memcmp(&cb_crowd_root_motion(a->c, 0)[da], &cb_crowd_root_motion(b->c, 0)[db],
                    sizeof(cb_root_delta)) == 0,
             "%s, frame %u, character %u: root motion", what, f, id);
    size_t sa, sb;
    const float *wa = cb_crowd_weights(a->c, 0, &sa), *wb = cb_crowd_weights(b->c, 0, &sb);
    for (uint32_t k = 0; k < clips; ++k) {
        CB_CHECK(memcmp(&cb_crowd_clip_times(a->c, 0, k)[da], &cb_crowd_clip_times(b->c, 0, k)[db],
                        sizeof(float)) == 0 &&
                     memcmp(&wa[k * sa + da], &wb[k * sb + db], sizeof(float)) == 0,
                 "%s, frame %u, character %u: clip %u's time or weight", what, f, id, k);
    }
    uint32_t na, nb;
    const cb_graph_event *ea = cb_crowd_events(a->c, 0, da, &na);
    const cb_graph_event *eb = cb_crowd_events(b->c, 0, db, &nb);
    CB_CHECK(na == nb && memcmp(ea, eb, na * sizeof *ea) == 0,
             "%s, frame %u, character %u: events (%u vs %u)", what, f, id, na, nb);
    for (uint32_t m = 0; m < cb_graph_state_machine_count(g); ++m) {
        cb_crowd_transition ta, tb;
        assert_int_equal(cb_crowd_query_transition(a->c, 0, m, da, &ta, NULL), CB_OK);
        assert_int_equal(cb_crowd_query_transition(b->c, 0, m, db, &tb, NULL), CB_OK);
        CB_CHECK(cb_crowd_state(a->c, 0, m, da) == cb_crowd_state(b->c, 0, m, db) &&
                     cb_crowd_next_state(a->c, 0, m, da) == cb_crowd_next_state(b->c, 0, m, db) &&
                     ta.active == tb.active && ta.from == tb.from && ta.to == tb.to &&
                     memcmp(&ta.elapsed_s, &tb.elapsed_s, sizeof ta.elapsed_s) == 0 &&
                     ta.blend == tb.blend,
                 "%s, frame %u, character %u: machine %u", what, f, id, m);
    }
}

/* Every live character of big against exact (capacity), and each newcomer against fresh. */
static void slot_compare_all(const slot_crowd *big, const slot_crowd *exact,
                             const slot_crowd *fresh, const cb_graph *g, uint32_t f,
                             const char *when)
{
    char what[96];
    for (uint32_t id = 0; id < SLOT_K + SLOT_SWAP; ++id) {
        if (big->live[id]) {
            snprintf(what, sizeof what, "capacity %d vs %d, %s", SLOT_CAP, SLOT_K, when);
            slot_compare(big, exact, g, id, f, what);
        }
        if (fresh->live[id]) {
            snprintf(what, sizeof what, "reused slot vs fresh, %s", when);
            slot_compare(big, fresh, g, id, f, what);
        }
    }
}

static void slot_state_is_written_at_add(void **state)
{
    (void)state;
    cb_graph *g = load_full_graph();
    uint32_t host[64], hc = host_params(g, host);
    static const int patterns[] = {0xFF, 0x5A, 0x81};
    uint64_t transitions_seen = 0, events_seen = 0;
    for (size_t pi = 0; pi < sizeof patterns / sizeof patterns[0]; ++pi) {
        slot_crowd big, exact, fresh;
        slot_crowd_make(&big, g, SLOT_CAP, patterns[pi]);
        slot_crowd_make(&exact, g, SLOT_K, -1);
        slot_crowd_make(&fresh, g, SLOT_SWAP, -1);
        for (uint32_t id = 0; id < SLOT_K; ++id) {
            slot_add(&big, id);
            slot_add(&exact, id);
        }
        for (uint32_t f = 0; f < SLOT_FRAMES; ++f) {
            if (f == SLOT_SWAP_AT) {
                /* Every third character leaves; the newcomers take the freed slots. */
                for (uint32_t r = 0; r < SLOT_SWAP; ++r) {
                    uint32_t gone = 3 * r;
                    assert_int_equal(cb_crowd_remove(big.c, big.ch[gone]), CB_OK);
                    assert_int_equal(cb_crowd_remove(exact.c, exact.ch[gone]), CB_OK);
                    big.live[gone] = exact.live[gone] = false;
                }
                for (uint32_t id = SLOT_K; id < SLOT_K + SLOT_SWAP; ++id) {
                    slot_add(&big, id);
                    slot_add(&exact, id);
                    slot_add(&fresh, id);
                }
            }
            if (f == 0 || f == SLOT_SWAP_AT) {
                /* What an add leaves, before any frame: the same everywhere too. */
                slot_compare_all(&big, &exact, &fresh, g, f, "after the adds");
            }
            slot_params(&big, g, host, hc, f);
            slot_params(&exact, g, host, hc, f);
            slot_params(&fresh, g, host, hc, f);
            assert_int_equal(cb_crowd_update(big.c, 1.0f / 30.0f), CB_OK);
            assert_int_equal(cb_crowd_update(exact.c, 1.0f / 30.0f), CB_OK);
            assert_int_equal(cb_crowd_update(fresh.c, 1.0f / 30.0f), CB_OK);
            slot_compare_all(&big, &exact, &fresh, g, f, "after the frame");
            for (uint32_t id = 0; id < SLOT_K + SLOT_SWAP; ++id) {
                if (fresh.live[id]) {
                    uint32_t n, d = slot_dense(&fresh, id);
                    cb_crowd_events(fresh.c, 0, d, &n);
                    events_seen += n;
                    for (uint32_t m = 0; m < cb_graph_state_machine_count(g); ++m) {
                        transitions_seen +=
                            cb_crowd_next_state(fresh.c, 0, m, d) != CB_INVALID_INDEX;
                    }
                }
            }
        }
        cb_crowd_destroy(big.c);
        cb_crowd_destroy(exact.c);
        cb_crowd_destroy(fresh.c);
    }
    /* The newcomers did run transitions (and cross markers): the comparison was not vacuous. */
    CB_CHECK(transitions_seen > 0, "no newcomer ever ran a transition");
    cb_test_note("newcomer frames with a transition running: %llu, events: %llu",
                 (unsigned long long)transitions_seen, (unsigned long long)events_seen);
    assert_int_equal(cb_graph_destroy(g), CB_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_handles_stay_refused_after_many_cycles),
        cmocka_unit_test(graph_in_use_is_not_destroyed),
        GRAPH_CASE(new_characters_read_the_rest_pose),
        cmocka_unit_test(joint_masks_take_one_float_per_joint),
        cmocka_unit_test(layer_masks_take_one_float_per_joint),
        GRAPH_CASE(in_place_blend_spaces_need_positions),
        cmocka_unit_test(nonfinite_parameters_read_as_zero_everywhere),
        cmocka_unit_test(crowd_memory_is_not_read_before_it_is_written),
        cmocka_unit_test(slot_state_is_written_at_add),
    };
    return cmocka_run_group_tests(tests, graph_group_setup, graph_group_teardown);
}
