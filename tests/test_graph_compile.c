/* graph compile: each pass of the graph compiler (src/graph/compile.h) on its own, on graphs
 * made through the public builder: what the root reaches and in which order, the layout, sync
 * groups and what moves the character, flat detection, sync tables, pose depth; the defaults
 * of every graph desc; and the one cleanup path under every failing allocation. */
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"
#include "graph/compile.h"
#include "test_util.h"

/* The fixture: a 3-joint chain and five looping clips. a and b put markers L, R and M at the
 * same normalized times; c puts them elsewhere in the same cyclic order; d orders them
 * differently (L, M, R); e has none. */
enum { CLIPS = 5 };
static cb_skeleton *sk;
static cb_clip *clips[CLIPS];
static const cb_clip *clip_ptrs[CLIPS];
static const char *const clip_names[CLIPS] = {"a", "b", "c", "d", "e"};

static int setup(void **state)
{
    (void)state;
    static const char *const joints[3] = {"root", "spine", "head"};
    static const int32_t parents[3] = {-1, 0, 1};
    cb_skeleton_desc sd = {.joint_count = 3, .names = joints, .parents = parents};
    if (cb_skeleton_create(&sd, &sk, NULL) != CB_OK) {
        return -1;
    }
    static const float durations[CLIPS] = {1.0f, 2.0f, 1.0f, 1.0f, 1.0f};
    static const float at[CLIPS][3] = {
        {0.1f, 0.4f, 0.7f}, {0.1f, 0.4f, 0.7f}, {0.2f, 0.5f, 0.9f}, {0.1f, 0.7f, 0.4f}};
    for (int k = 0; k < CLIPS; ++k) {
        cb_clip_marker_desc m[3] = {{"L", at[k][0] * durations[k], false},
                                    {"R", at[k][1] * durations[k], false},
                                    {"M", at[k][2] * durations[k], false}};
        cb_clip_desc cd = {.name = clip_names[k],
                           .skeleton = sk,
                           .duration_s = durations[k],
                           .sample_rate_hz = 10.0f,
                           .markers = k < 4 ? m : NULL,
                           .marker_count = k < 4 ? 3 : 0};
        if (cb_clip_create(&cd, &clips[k], NULL) != CB_OK) {
            return -1;
        }
        clip_ptrs[k] = clips[k];
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int k = 0; k < CLIPS; ++k) {
        cb_clip_destroy(clips[k]);
    }
    cb_skeleton_destroy(sk);
    return 0;
}

static cb_graph_builder *builder(const cb_allocator *a)
{
    cb_graph_builder_desc d = {.skeleton = sk, .clips = clip_ptrs, .clip_count = CLIPS};
    if (a != NULL) {
        d.allocator = *a;
    }
    cb_graph_builder *b = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_builder_create(&d, &b, &err) == CB_OK, "builder: %s", err.message);
    cb_graph_add_param(b, "x", CB_PARAM_FLOAT, 0.0f, NULL);
    cb_graph_add_param(b, "on", CB_PARAM_BOOL, 0.0f, NULL);
    return b;
}

static cb_graph_node clip(cb_graph_builder *b, const char *name, int k, const char *group)
{
    cb_graph_clip_desc d = {.name = name, .clip = clip_names[k], .sync_group = group};
    cb_graph_node n = {0};
    cb_error err = {0};
    CB_CHECK(cb_graph_add_clip(b, &d, &n, &err) == CB_OK, "clip %s: %s", name, err.message);
    return n;
}

static cb_graph_node blend(cb_graph_builder *b, const char *name, const cb_graph_node *kids,
                           uint32_t count)
{
    float pos[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    cb_graph_blend_space_desc d = {.name = name,
                                   .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
                                   .params = {"x"},
                                   .children = kids,
                                   .positions = pos,
                                   .child_count = count};
    cb_graph_node n = {0};
    cb_error err = {0};
    CB_CHECK(cb_graph_add_blend_space(b, &d, &n, &err) == CB_OK, "blend %s: %s", name, err.message);
    return n;
}

static cb_graph_node machine(cb_graph_builder *b, cb_graph_node s0, cb_graph_node s1)
{
    cb_graph_state st[2] = {{.name = "s0", .node = s0}, {.name = "s1", .node = s1}};
    cb_graph_condition on = {.param = "on"};
    cb_graph_transition tr = {.from = "s0", .to = "s1", .conditions = &on, .condition_count = 1};
    cb_graph_state_machine_desc d = {
        .name = "sm", .states = st, .state_count = 2, .transitions = &tr, .transition_count = 1};
    cb_graph_node n = {0};
    cb_error err = {0};
    CB_CHECK(cb_graph_add_state_machine(b, &d, &n, &err) == CB_OK, "machine: %s", err.message);
    return n;
}

/* Runs the passes up to and including `last` (1 renumber ... 6 pose depth). */
static cb_result run_passes(cb_graph_compile *c, int last)
{
    cb_result r = CB_OK;
    cb_result (*const failing[])(cb_graph_compile *) = {
        cb_graph_pass_renumber, cb_graph_pass_layout, cb_graph_pass_sync_groups};
    for (int p = 0; p < 3 && p < last && r == CB_OK; ++p) {
        r = failing[p](c);
    }
    if (r == CB_OK && last >= 4) {
        cb_graph_pass_flat(c);
    }
    if (r == CB_OK && last >= 5) {
        r = cb_graph_pass_sync_tables(c);
    }
    if (r == CB_OK && last >= 6) {
        cb_graph_pass_pose_depth(c);
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */

/* Renumber: the nodes the root reaches, parents before children; the rest are dropped. An
 * additive clip outside an additive layer is refused, naming both nodes. */
static void compile_renumber_keeps_what_the_root_reaches_parents_first(void **state)
{
    (void)state;
    cb_graph_builder *b = builder(NULL);
    cb_graph_node a = clip(b, "a", 0, NULL), bb = clip(b, "b", 1, NULL);
    cb_graph_node unused = clip(b, "unused", 4, NULL);
    cb_graph_node kids[2] = {a, bb};
    cb_graph_node inner = blend(b, "inner", kids, 2);
    cb_graph_node outer_kids[2] = {inner, a}; /* a has two parents */
    blend(b, "outer", outer_kids, 2);
    cb_error err = {0};
    cb_graph_compile c = {.b = b, .err = &err};
    assert_int_equal(cb_graph_pass_renumber(&c), CB_OK);
    assert_int_equal(c.node_count, 4);
    assert_int_equal(c.edge_count, 4);
    assert_int_equal(c.clip_count, 2);
    assert_int_equal(c.newid[c.root], 0);
    assert_int_equal(c.newid[unused.id - 1], GNONE);
    /* Parents first: every edge goes from a smaller index to a larger one. */
    for (uint32_t i = 0; i < c.total; ++i) {
        const bnode *n = &VEC_AT(b->nodes, bnode, i);
        for (uint32_t e = 0; c.newid[i] != GNONE && e < n->n.edge_count; ++e) {
            uint32_t child = VEC_AT(b->edges, gedge, n->n.first_edge + e).child;
            CB_CHECK(c.newid[child] > c.newid[i], "edge %u -> %u", c.newid[i], c.newid[child]);
        }
    }
    cb_graph_compile_abandon(&c);
    assert_null(c.newid);
    cb_graph_builder_destroy(b);

    /* An additive clip as a blend's child. */
    cb_clip_desc ad = {
        .name = "add", .skeleton = sk, .duration_s = 1.0f, .additive = CB_ADDITIVE_FIRST_FRAME};
    cb_clip *add = NULL;
    assert_int_equal(cb_clip_create(&ad, &add, NULL), CB_OK);
    const cb_clip *with_add[2] = {clips[0], add};
    cb_graph_builder_desc bd = {.skeleton = sk, .clips = with_add, .clip_count = 2};
    assert_int_equal(cb_graph_builder_create(&bd, &b, NULL), CB_OK);
    cb_graph_add_param(b, "x", CB_PARAM_FLOAT, 0.0f, NULL);
    cb_graph_clip_desc cd = {.name = "plus", .clip = "add"};
    cb_graph_node plus = {0};
    assert_int_equal(cb_graph_add_clip(b, &cd, &plus, NULL), CB_OK);
    cb_graph_node mixed[2] = {clip(b, "a", 0, NULL), plus};
    blend(b, "mix", mixed, 2);
    c = (cb_graph_compile){.b = b, .err = &err};
    assert_int_equal(cb_graph_pass_renumber(&c), CB_ERR_MISMATCH);
    assert_non_null(strstr(err.message, "'mix'"));
    assert_non_null(strstr(err.message, "'plus'"));
    cb_graph_compile_abandon(&c);
    cb_graph_builder_destroy(b);
    cb_clip_destroy(add);
}

/* Layout: the arrays in the new numbering; clip slots in the order clips were added, whatever
 * the node order; blend parameters and the most one blend reads. */
static void compile_layout_renumbers_nodes_and_keeps_clip_order(void **state)
{
    (void)state;
    cb_graph_builder *b = builder(NULL);
    cb_graph_node a = clip(b, "a", 0, NULL), bb = clip(b, "b", 1, NULL);
    cb_graph_node kids[2] = {bb, a};
    blend(b, "root", kids, 2);
    cb_error err = {0};
    cb_graph_compile c = {.b = b, .err = &err};
    assert_int_equal(run_passes(&c, 2), CB_OK);
    const cb_graph *g = c.g;
    assert_int_equal(g->node_count, 3);
    assert_int_equal(g->nodes[0].type, GNODE_BLEND);
    assert_string_equal(g->nodes[0].name, "root");
    assert_int_equal(g->nodes[0].u.blend.param_count, 1);
    assert_int_equal(g->max_blend_params, 1);
    assert_string_equal(g->params[g->blend_params[g->nodes[0].u.blend.first_param]].name, "x");
    /* Edge order is the builder's (b, a); slots follow the adding order (a, b). */
    assert_string_equal(g->nodes[g->edges[0].child].name, "b");
    assert_string_equal(g->nodes[g->edges[1].child].name, "a");
    assert_string_equal(g->nodes[g->clip_nodes[0]].name, "a");
    assert_string_equal(g->nodes[g->clip_nodes[1]].name, "b");
    cb_graph_compile_abandon(&c);
    assert_null(c.g);
    cb_graph_builder_destroy(b);
}

/* Sync groups: a clip takes its own named group, else its nearest blend space's (named, or one
 * of its own; a direct node makes none); a machine or a layer edge starts afresh. Layer clips do
 * not move the character. */
static void compile_sync_groups_follow_the_nearest_blend_space(void **state)
{
    (void)state;
    cb_graph_builder *b = builder(NULL);
    cb_graph_node a = clip(b, "a", 0, NULL), bb = clip(b, "b", 1, NULL);
    cb_graph_node own = clip(b, "own", 2, "mine");
    cb_graph_node kids[3] = {a, bb, own};
    cb_graph_node bl = blend(b, "walks", kids, 3);
    cb_graph_node free0 = clip(b, "free0", 3, NULL), free1 = clip(b, "free1", 4, NULL);
    cb_graph_node sm = machine(b, free0, free1);
    cb_graph_node layer_clip = clip(b, "layer", 4, NULL);
    cb_graph_layer ly = {.node = layer_clip};
    cb_graph_node base_kids[2] = {bl, sm};
    cb_graph_node base = blend(b, "base", base_kids, 2);
    cb_graph_layers_desc ld = {.name = "top", .base = base, .layers = &ly, .layer_count = 1};
    cb_graph_node top = {0};
    assert_int_equal(cb_graph_add_layers(b, &ld, &top, NULL), CB_OK);
    cb_error err = {0};
    cb_graph_compile c = {.b = b, .err = &err};
    assert_int_equal(run_passes(&c, 3), CB_OK);
    const cb_graph *g = c.g;
    uint32_t id;
    const gclip *by_name[6] = {0};
    static const char *const names[6] = {"a", "b", "own", "free0", "free1", "layer"};
    for (int k = 0; k < 6; ++k) {
        assert_int_equal(cb_graph_find_node(g, names[k], &id), CB_OK);
        by_name[k] = &g->clips[g->nodes[id].u.clip.slot];
    }
    /* One named group ("mine"), then the blends' own: walks and base. */
    assert_int_equal(g->group_count_sync, 3);
    assert_int_equal(by_name[0]->group, by_name[1]->group);
    assert_true(by_name[0]->group >= 1);
    assert_int_equal(by_name[2]->group, 0);
    assert_int_equal(by_name[3]->group, GNONE);
    assert_int_equal(by_name[4]->group, GNONE);
    assert_int_equal(by_name[5]->group, GNONE);
    /* The machine's clips know their state; the layer clip does not move the character. */
    assert_int_equal(by_name[3]->base_path, true);
    assert_int_equal(by_name[5]->base_path, false);
    assert_int_equal(by_name[3]->moves_root, true);
    assert_int_equal(by_name[5]->moves_root, false);
    assert_int_equal(g->clip_states[by_name[4]->slot].count, 1);
    assert_int_equal(g->clip_states[by_name[4]->slot].state[0], 1);
    assert_true(g->uniform_rate);
    assert_int_equal(g->layer_slot[0], by_name[5]->slot);
    cb_graph_compile_abandon(&c);
    cb_graph_builder_destroy(b);

    /* A direct node makes no group: its children keep the group above them (here none). */
    b = builder(NULL);
    cb_graph_node d_kids[2] = {clip(b, "d0", 0, NULL), clip(b, "d1", 1, NULL)};
    const char *weights[2] = {"x", "x"};
    cb_graph_direct_desc dd = {
        .name = "direct", .children = d_kids, .weights = weights, .child_count = 2};
    cb_graph_node dn = {0};
    assert_int_equal(cb_graph_add_direct(b, &dd, &dn, NULL), CB_OK);
    c = (cb_graph_compile){.b = b, .err = &err};
    assert_int_equal(run_passes(&c, 3), CB_OK);
    assert_int_equal(c.g->group_count_sync, 0);
    assert_int_equal(c.g->clips[0].group, GNONE);
    assert_int_equal(c.g->clips[1].group, GNONE);
    cb_graph_compile_abandon(&c);
    cb_graph_builder_destroy(b);
}

/* Flat detection: [layers of clips over] a blend of the clips of one group (or alone in a
 * group of their own), each once, no machine; at any clip speed and speed parameter (the flat
 * time stage rates clips as the general one does: tests/test_rate_warp_paths.c). */
static void compile_flat_detection(void **state)
{
    (void)state;
    for (int variant = 0; variant < 10; ++variant) {
        cb_graph_builder *b = builder(NULL);
        /* 6, 8, 9: a child in a sync group of its own (as the idle of locomotion_follow.json);
         * 7: every child alone in a group of its own (no shared group at all) */
        cb_graph_node a = clip(b, "a", 0, variant == 7 ? "own_a" : NULL),
                      bb = clip(b, "b", 1, variant >= 6 ? "own" : NULL);
        cb_graph_node kids[2] = {a, variant == 2 ? a : bb}; /* 2: a clip twice */
        cb_graph_node root = blend(b, "bl", kids, 2);
        bool want = true;
        if (variant == 1) { /* layers of clips over it */
            cb_graph_layer ly = {.node = clip(b, "l", 4, NULL)};
            cb_graph_layers_desc ld = {.base = root, .layers = &ly, .layer_count = 1};
            assert_int_equal(cb_graph_add_layers(b, &ld, &root, NULL), CB_OK);
        } else if (variant == 2) {
            want = false;
        } else if (variant == 3) { /* a machine */
            machine(b, root, clip(b, "e", 4, NULL));
            want = false;
        } else if (variant == 4) { /* a clip at another rate, times a parameter */
            cb_graph_clip_desc fast = {
                .name = "fast", .clip = "e", .speed = 2.0f, .speed_param = "x"};
            cb_graph_node f = {0};
            assert_int_equal(cb_graph_add_clip(b, &fast, &f, NULL), CB_OK);
            cb_graph_node three[3] = {a, bb, f};
            blend(b, "bl3", three, 3);
        } else if (variant == 5) { /* a layer that is not a clip */
            cb_graph_layer ly = {.node = root};
            cb_graph_layers_desc ld = {.base = a, .layers = &ly, .layer_count = 1};
            assert_int_equal(cb_graph_add_layers(b, &ld, &root, NULL), CB_OK);
            want = false;
        } else if (variant == 8 || variant == 9) {
            /* 8: the child alone in its group is a layer too (one node, two parents); 9: a
             * layer clip in that group (the group is then not the child's alone) */
            cb_graph_layer ly = {.node = variant == 8 ? bb : clip(b, "l", 4, "own")};
            cb_graph_layers_desc ld = {.base = root, .layers = &ly, .layer_count = 1};
            assert_int_equal(cb_graph_add_layers(b, &ld, &root, NULL), CB_OK);
            want = false;
        }
        cb_error err = {0};
        cb_graph_compile c = {.b = b, .err = &err};
        assert_int_equal(run_passes(&c, 4), CB_OK);
        CB_CHECK(c.g->flat == want, "variant %d: flat %d", variant, c.g->flat);
        if (want) {
            assert_int_equal(c.g->nodes[c.g->flat_blend].type, GNODE_BLEND);
            assert_int_equal(c.g->flat_layers, variant == 1 ? 0 : GNONE);
            assert_true(c.g->flat_in_order);
            assert_int_equal(c.g->flat_slot[0], 0);
            assert_int_equal(c.g->flat_slot[1], 1);
            /* the one group with more than one clip, if any */
            assert_int_equal(c.g->flat_group, variant >= 6 ? GNONE : c.g->clips[0].group);
        }
        cb_graph_compile_abandon(&c);
        cb_graph_builder_destroy(b);
    }
}

/* Sync tables: clips that put their shared markers at the same normalized times sync by
 * normalized time (no names); others on the shared names; an order they disagree on is refused
 * with the group named. */
static void compile_sync_tables_name_the_markers_that_matter(void **state)
{
    (void)state;
    static const struct {
        int other;
        cb_result want;
        uint32_t names;
    } cases[] = {{1, CB_OK, 0}, {2, CB_OK, 3}, {3, CB_ERR_MISMATCH, 0}, {4, CB_OK, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_graph_builder *b = builder(NULL);
        cb_graph_node kids[2] = {clip(b, "a", 0, "feet"), clip(b, "o", cases[k].other, "feet")};
        blend(b, "bl", kids, 2);
        cb_error err = {0};
        cb_graph_compile c = {.b = b, .err = &err};
        cb_result r = run_passes(&c, 5);
        CB_CHECK(r == cases[k].want, "case %zu: %s (%s)", k, cb_result_str(r), err.message);
        if (r == CB_OK) {
            assert_int_equal(c.g->sync_count[0], cases[k].names);
            assert_int_equal(c.g->clips[0].marker_count, 3);
            assert_true(c.g->clips[0].track_activity == (cases[k].names > 0));
        } else {
            assert_non_null(strstr(err.message, "sync group 'feet'"));
        }
        cb_graph_compile_abandon(&c);
        cb_graph_builder_destroy(b);
    }
}

/* Pose depth: the pose buffers an evaluation holds at once (runtime/pose.c): two per node that
 * does not flatten, three for a machine (an interrupted crossfade's capture), none for a clip;
 * plus the chunk's two. */
static void compile_pose_depth_counts_the_buffers(void **state)
{
    (void)state;
    for (int shape = 0; shape < 3; ++shape) {
        cb_graph_builder *b = builder(NULL);
        cb_graph_node a = clip(b, "a", 0, NULL), bb = clip(b, "b", 1, NULL);
        cb_graph_node kids[2] = {a, bb};
        if (shape >= 1) {
            cb_graph_node bl = blend(b, "bl", kids, 2);
            if (shape == 2) {
                machine(b, bl, a);
            }
        }
        cb_graph_compile c = {.b = b};
        assert_int_equal(run_passes(&c, 6), CB_OK);
        static const uint32_t want[3] = {2, 4, 7};
        CB_CHECK(c.g->max_pose_depth == want[shape], "shape %d: %u", shape, c.g->max_pose_depth);
        assert_int_equal(c.g->max_entries, c.g->clip_count + c.g->layer_count + 1);
        cb_graph_compile_abandon(&c);
        cb_graph_builder_destroy(b);
    }
}

/* Every allocation of a build may fail: the build reports it, frees everything it took (one
 * cleanup path), leaves the builder able to build, and a later build succeeds. */
typedef struct budget {
    long left;  /* allocations that succeed; -1: all */
    long live;  /* allocations not freed */
    long calls; /* allocations asked for */
} budget;

static void *budget_alloc(size_t size, size_t align, void *user)
{
    budget *bu = user;
    bu->calls++;
    if (bu->left == 0) {
        return NULL;
    }
    bu->left -= bu->left > 0;
    bu->live++;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void budget_free(void *ptr, size_t size, void *user)
{
    (void)size;
    if (ptr != NULL) {
        ((budget *)user)->live--;
        free(ptr);
    }
}

static void compile_failing_allocations_leave_nothing(void **state)
{
    (void)state;
    budget bu = {.left = -1};
    cb_allocator a = {budget_alloc, budget_free, &bu};
    long failures = 0;
    for (long k = 0;; ++k) {
        bu.left = -1;
        cb_graph_builder *b = builder(&a);
        cb_graph_node kids[3] = {clip(b, "a", 0, "g"), clip(b, "b", 1, "g"), clip(b, "c", 2, "g")};
        cb_graph_node bl = blend(b, "bl", kids, 3);
        machine(b, bl, kids[0]);
        long live = bu.live;
        bu.calls = 0;
        bu.left = k;
        cb_graph *g = NULL;
        cb_error err = {0};
        cb_result r = cb_graph_build(b, &g, &err);
        long calls = bu.calls;
        if (r == CB_OK) {
            cb_graph_destroy(g);
            cb_graph_builder_destroy(b);
            assert_int_equal(bu.live, 0);
            CB_CHECK(calls == k, "a build of %ld allocations succeeded with %ld allowed", calls, k);
            break;
        }
        failures++;
        CB_CHECK(r == CB_ERR_OUT_OF_MEMORY, "allocation %ld: %s", k, cb_result_str(r));
        CB_CHECK(bu.live == live, "allocation %ld failed: %ld blocks leaked", k, bu.live - live);
        bu.left = -1;
        assert_int_equal(cb_graph_build(b, &g, &err), CB_OK); /* the builder is intact */
        cb_graph_destroy(g);
        cb_graph_builder_destroy(b);
        assert_int_equal(bu.live, 0);
    }
    cb_test_note("cb_graph_build: %ld allocations, each failure clean", failures);
}

/* ------------------------------------------------------------------------------------------ */

/* Every default of every graph desc, through its query function, and a set field kept. */
static void compile_desc_defaults(void **state)
{
    (void)state;
    cb_graph_builder_desc bd = cb_graph_query_builder_desc(NULL);
    assert_string_equal(bd.name, CB_GRAPH_DEFAULT_NAME);
    cb_graph_velocity_blend_desc vb = cb_graph_query_velocity_blend_desc(NULL);
    assert_true(vb.min_sq_len == CB_GRAPH_DEFAULT_MIN_SQ_LEN);
    vb.min_sq_len = 0.5f;
    assert_true(cb_graph_query_velocity_blend_desc(&vb).min_sq_len == 0.5f);
    cb_graph_quadrant_desc qd = cb_graph_query_quadrant_desc(NULL);
    assert_true(qd.dead_zone_rad == CB_GRAPH_DEFAULT_DEAD_ZONE_RAD);
    assert_true(qd.min_speed == CB_GRAPH_DEFAULT_MIN_SPEED);
    cb_graph_clip_desc cd = cb_graph_query_clip_desc(NULL);
    assert_true(cd.speed == CB_GRAPH_DEFAULT_SPEED);
    assert_false(cd.clamp);
    assert_int_equal(cb_graph_query_layer(NULL).mode, CB_LAYER_OVERRIDE);
    assert_int_equal(cb_graph_query_condition(NULL).op, CB_COMPARE_TRUE);
    cb_graph_transition tr = cb_graph_query_transition(NULL);
    assert_int_equal(tr.blend, CB_TRANSITION_CROSSFADE);
    assert_int_equal(tr.interruption, CB_INTERRUPTION_NONE);
    assert_true(cb_graph_query_state(NULL).speed == CB_GRAPH_DEFAULT_SPEED);
    assert_true(cb_graph_query_two_bone_ik_desc(NULL).soften == CB_IK_DEFAULT_SOFTEN);
    cb_graph_aim_ik_desc ad = cb_graph_query_aim_ik_desc(NULL);
    assert_true(ad.forward[0] == 0.0f && ad.forward[1] == 0.0f && ad.forward[2] == 1.0f);
    assert_true(ad.up[0] == 0.0f && ad.up[1] == 1.0f && ad.up[2] == 0.0f);
    assert_true(ad.limit_rad == CB_IK_AIM_DEFAULT_ANGLE_LIMIT);
    assert_null(ad.joint_weights);
    ad = (cb_graph_aim_ik_desc){.forward = {1.0f, 0.0f, 0.0f}, .limit_rad = 1.0f};
    ad = cb_graph_query_aim_ik_desc(&ad);
    assert_true(ad.forward[0] == 1.0f && ad.forward[2] == 0.0f && ad.limit_rad == 1.0f);
    assert_string_equal(cb_graph_query_json_desc(NULL).source_name, CB_GRAPH_DEFAULT_NAME);
    assert_string_equal(cb_graph_query_blend_desc(NULL).name, CB_GRAPH_BLEND_DEFAULT_NAME);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compile_renumber_keeps_what_the_root_reaches_parents_first),
        cmocka_unit_test(compile_layout_renumbers_nodes_and_keeps_clip_order),
        cmocka_unit_test(compile_sync_groups_follow_the_nearest_blend_space),
        cmocka_unit_test(compile_flat_detection),
        cmocka_unit_test(compile_sync_tables_name_the_markers_that_matter),
        cmocka_unit_test(compile_pose_depth_counts_the_buffers),
        cmocka_unit_test(compile_failing_allocations_leave_nothing),
        cmocka_unit_test(compile_desc_defaults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
