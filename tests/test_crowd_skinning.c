/* The crowd's skinning matrices (crowd.h, SKINNING; issue 10), on the committed packs of real
 * assets (the Fox with its locomotion graph, Cesium Man) and their own inverse binds:
 *  - every skinning matrix of every character over animated frames against the product model x
 *    inverse bind computed in double here from the crowd's model matrix, for both layouts and
 *    a mixed pair, within the rounding bound of a 4-term float dot product;
 *  - at the rest pose, against a model matrix computed in double here from the skeleton's rest
 *    TRS; and the bind-pose property (every joint's skinning is the mesh's frame: the identity
 *    for the Fox, a rotation for Cesium Man, whose vertices are stored Z-up);
 *  - skinning_only gives the same bits without keeping model matrices;
 *  - bit-identical for 1 or 2 threads, any batch size and update ranges;
 *  - host views (padded stride, kept across add/remove and switches), bad input refused, and
 *    failed allocations at create leave nothing behind. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "base/prng.h"
#include "crowdblend/crowdblend.h"
#include "test_util.h"

#define FOX_PACK CB_TEST_PACK_DIR "/fox.cbpack"
#define CESIUM_PACK CB_TEST_PACK_DIR "/cesium_man.cbpack"

enum { CHARACTERS = 37, CAPACITY = 48, FRAMES = 12 };

typedef struct fixture {
    cb_pack *pack;
    cb_graph *graph;
    uint32_t joints;
} fixture;

/* A pack and a graph for it: the one the pack stores, or a graph of its first clip. */
static fixture load(const char *path)
{
    fixture f = {0};
    cb_error err = {0};
    CB_CHECK(cb_pack_load_file(path, NULL, &f.pack, &err) == CB_OK, "%s", err.message);
    const cb_skeleton *sk = cb_pack_skeleton(f.pack);
    f.joints = cb_skeleton_joint_count(sk);
    assert_int_equal(cb_pack_inverse_binds(f.pack).count, f.joints * 16);
    cb_graph_json_desc jd = {
        .skeleton = sk, .clips = cb_pack_clips(f.pack), .clip_count = cb_pack_clip_count(f.pack)};
    if (cb_pack_graph_count(f.pack) > 0) {
        cb_pack_graph g = cb_pack_query_graph(f.pack, 0);
        CB_CHECK(cb_graph_load_json(g.text, g.length, &jd, &f.graph, &err) == CB_OK, "%s",
                 err.message);
        return f;
    }
    char text[512];
    snprintf(text, sizeof text,
             "{\"root\": \"c\", \"nodes\": {\"c\": {\"type\": \"clip\", "
             "\"clip\": \"%s\"}}}",
             cb_clip_name(cb_pack_clip(f.pack, 0)));
    CB_CHECK(cb_graph_load_json(text, strlen(text), &jd, &f.graph, &err) == CB_OK, "%s",
             err.message);
    return f;
}

static void unload(fixture *f)
{
    cb_graph_destroy(f->graph);
    cb_pack_destroy(f->pack);
}

static cb_crowd_desc skin_desc(const fixture *f, const cb_graph *const *graphs)
{
    return (cb_crowd_desc){.skeleton = cb_pack_skeleton(f->pack),
                           .capacity = CAPACITY,
                           .graphs = graphs,
                           .graph_count = 1,
                           .thread_count = 1,
                           .inverse_binds = cb_pack_inverse_binds(f->pack)};
}

static cb_crowd *create(const cb_crowd_desc *d)
{
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(d, &c, &err) == CB_OK, "crowd: %s", err.message);
    return c;
}

/* Characters at seeded phases; every float parameter of the graph (the Fox's vx, vy) random
 * per character, so they stand, walk and run in every direction. */
static void populate(cb_crowd *c, const char *seed_name)
{
    cb_prng r = cb_test_prng(seed_name);
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, (float)cb_prng_double(&r), &ch), CB_OK);
    }
    const char *names[] = {"vx", "vy"};
    for (int p = 0; p < 2; ++p) {
        uint32_t param;
        if (cb_crowd_find_param(c, 0, names[p], &param) != CB_OK) {
            continue;
        }
        float *col = cb_crowd_param_column(c, 0, param);
        for (uint32_t i = 0; i < CHARACTERS; ++i) {
            col[i] = cb_prng_range(&r, -4.0f, 4.0f);
        }
    }
}

/* Element (row, col) of a matrix stored in a layout. */
static double at(const float *m, cb_matrix_layout layout, int row, int col)
{
    if (layout == CB_MATRIX_LAYOUT_MAT3X4) {
        return row < 3 ? m[4 * row + col] : (col == 3 ? 1.0 : 0.0);
    }
    return m[4 * col + row];
}

static size_t floats_of(cb_matrix_layout layout)
{
    return layout == CB_MATRIX_LAYOUT_MAT3X4 ? 12 : 16;
}

/* One character's skinning against model x inverse bind in double, element by element; the
 * bound is that of a float dot product of 4 terms rounded to float, 3u (FMA or not) plus the
 * last rounding, u = FLT_EPSILON / 2, over the sum of the terms' magnitudes. Returns the
 * largest error in units of that bound. */
static double check_product(const float *skin, cb_matrix_layout sl, const float *model,
                            cb_matrix_layout ml, const float *ibm, uint32_t joints)
{
    double worst = 0.0;
    for (uint32_t j = 0; j < joints; ++j) {
        const float *s = skin + j * floats_of(sl), *m = model + j * floats_of(ml);
        for (int row = 0; row < (sl == CB_MATRIX_LAYOUT_MAT3X4 ? 3 : 4); ++row) {
            for (int col = 0; col < 4; ++col) {
                double want = 0.0, mag = 0.0;
                for (int k = 0; k < 4; ++k) {
                    double t = at(m, ml, row, k) * ibm[j * 16 + 4 * col + k];
                    want += t;
                    mag += fabs(t);
                }
                double err = fabs(at(s, sl, row, col) - want);
                double bound = 2.0 * FLT_EPSILON * mag;
                CB_CHECK(err <= bound, "joint %u (%d,%d): %.9g, want %.9g (bound %.3g)", j, row,
                         col, at(s, sl, row, col), want, bound);
                worst = fmax(worst, bound > 0.0 ? err / bound : 0.0);
            }
        }
    }
    return worst;
}

/* ------------------------------------------------------------------------------------------ */

/* Every character, every frame, three layout pairs: skinning = model x inverse bind. */
static void skinning_is_model_times_inverse_bind(void **state)
{
    (void)state;
    static const cb_matrix_layout pairs[3][2] = {
        {CB_MATRIX_LAYOUT_MAT4, CB_MATRIX_LAYOUT_MAT4},
        {CB_MATRIX_LAYOUT_MAT3X4, CB_MATRIX_LAYOUT_MAT3X4},
        {CB_MATRIX_LAYOUT_MAT4, CB_MATRIX_LAYOUT_MAT3X4},
    };
    const char *packs[2] = {FOX_PACK, CESIUM_PACK};
    for (int p = 0; p < 2; ++p) {
        fixture f = load(packs[p]);
        const cb_graph *graphs[1] = {f.graph};
        const float *ibm = cb_pack_inverse_binds(f.pack).ptr;
        for (int q = 0; q < 3; ++q) {
            cb_crowd_desc d = skin_desc(&f, graphs);
            d.matrix_layout = pairs[q][0];
            d.skinning_layout = pairs[q][1];
            cb_crowd *c = create(&d);
            populate(c, "skinning_product");
            double worst = 0.0;
            for (int frame = 0; frame <= FRAMES; ++frame) {
                for (uint32_t i = 0; i < CHARACTERS; ++i) {
                    worst = fmax(worst, check_product(cb_crowd_skinning(c, 0, i), pairs[q][1],
                                                      cb_crowd_matrices(c, 0, i), pairs[q][0], ibm,
                                                      f.joints));
                }
                assert_int_equal(cb_crowd_update(c, 1.0f / 30.0f), CB_OK);
            }
            cb_test_note("%s, layouts %d/%d: worst error %.2f of the float dot-product bound",
                         packs[p], (int)pairs[q][0], (int)pairs[q][1], worst);
            cb_crowd_destroy(c);
        }
        unload(&f);
    }
}

/* The model matrix of the rest pose in double, parents first, from the rest TRS. */
static void rest_model_ref(const cb_skeleton *sk, double (*model)[16])
{
    const int32_t *parents = cb_skeleton_parents(sk);
    for (uint32_t j = 0; j < cb_skeleton_joint_count(sk); ++j) {
        cb_xform x = cb_skeleton_rest_xform(sk, j);
        double qx = x.rotation[0], qy = x.rotation[1], qz = x.rotation[2], qw = x.rotation[3];
        double r[3][3] = {
            {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
            {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
            {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)},
        };
        double local[16] = {0};
        for (int col = 0; col < 3; ++col) {
            for (int row = 0; row < 3; ++row) {
                local[4 * col + row] = r[row][col] * x.scale[col];
            }
            local[12 + col] = x.translation[col];
        }
        local[15] = 1.0;
        for (int col = 0; col < 4; ++col) {
            for (int row = 0; row < 4; ++row) {
                double v = 0.0;
                for (int k = 0; k < 4; ++k) {
                    double pm = parents[j] < 0 ? (row == k) : model[parents[j]][4 * k + row];
                    v += pm * local[4 * col + k];
                }
                model[j][4 * col + row] = v;
            }
        }
    }
}

/* Element (row, col) of joint j's skinning at the rest pose, in double: the rest model matrix
 * computed here times the inverse bind. */
static double rest_skin_ref(double (*model)[16], const float *ibm, uint32_t j, int row, int col)
{
    double v = 0.0;
    for (int k = 0; k < 4; ++k) {
        v += model[j][4 * k + row] * ibm[j * 16 + 4 * col + k];
    }
    return v;
}

/* After add, before any update, a character's skinning is the rest pose's: against the rest
 * model computed here in double times the inverse bind, within the float error of a chain of
 * products (1e-5; translations relative to the figure's size). Then the bind-pose property:
 * glTF's inverse binds invert the joints' bind matrices, so where the bind pose is the rest
 * pose, every joint's skinning is one and the same matrix, the frame the mesh's vertices are
 * stored in: the identity for the Fox, a 90 degree turn about X for Cesium Man (its vertices
 * are stored Z-up), which must then be a rotation. */
static void rest_pose_skinning(void **state)
{
    (void)state;
    const char *packs[2] = {FOX_PACK, CESIUM_PACK};
    const bool mesh_frame_is_identity[2] = {true, false};
    for (int p = 0; p < 2; ++p) {
        fixture f = load(packs[p]);
        const cb_graph *graphs[1] = {f.graph};
        cb_crowd_desc d = skin_desc(&f, graphs);
        cb_crowd *c = create(&d);
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, 0.0f, &ch), CB_OK);
        const float *skin = cb_crowd_skinning(c, 0, 0);
        const float *ibm = cb_pack_inverse_binds(f.pack).ptr;
        double(*model)[16] = calloc(f.joints, sizeof *model);
        assert_non_null(model);
        rest_model_ref(cb_pack_skeleton(f.pack), model);
        double size = 1.0;
        for (uint32_t j = 0; j < f.joints; ++j) {
            size = fmax(size, fabs(model[j][12]) + fabs(model[j][13]) + fabs(model[j][14]));
        }
        double worst = 0.0, from_common = 0.0, from_identity = 0.0;
        for (uint32_t j = 0; j < f.joints; ++j) {
            for (int col = 0; col < 4; ++col) {
                double scale = col == 3 ? size : 1.0;
                for (int row = 0; row < 4; ++row) {
                    double want = rest_skin_ref(model, ibm, j, row, col);
                    double got = skin[j * 16 + 4 * col + row];
                    worst = fmax(worst, fabs(got - want) / scale);
                    from_common =
                        fmax(from_common, fabs(want - rest_skin_ref(model, ibm, 0, row, col)));
                    from_identity = fmax(from_identity, fabs(want - (row == col)) / scale);
                }
            }
        }
        cb_test_note("%s: rest skinning off double %.3g; joints differ by %.3g; from identity "
                     "%.3g",
                     packs[p], worst, from_common, from_identity);
        CB_CHECK(worst <= 1e-5, "%s: rest skinning off the double reference by %g", packs[p],
                 worst);
        CB_CHECK(from_common <= 1e-4 * size, "%s: rest skinning differs between joints by %g",
                 packs[p], from_common);
        if (mesh_frame_is_identity[p]) {
            CB_CHECK(from_identity <= 1e-4, "%s: rest skinning is %g from identity", packs[p],
                     from_identity);
        }
        for (int a = 0; a < 3; ++a) { /* the common matrix is a rotation: orthonormal columns */
            for (int b = 0; b < 3; ++b) {
                double dot = 0.0;
                for (int k = 0; k < 3; ++k) {
                    dot += rest_skin_ref(model, ibm, 0, k, a) * rest_skin_ref(model, ibm, 0, k, b);
                }
                CB_CHECK(fabs(dot - (a == b)) <= 1e-4, "%s: mesh frame columns %d.%d = %g",
                         packs[p], a, b, dot);
            }
        }
        free(model);
        cb_crowd_destroy(c);
        unload(&f);
    }
}

/* skinning_only: no model matrices kept, the same skinning bits as a crowd that keeps them. */
static void skinning_only_gives_the_same_bits(void **state)
{
    (void)state;
    fixture f = load(FOX_PACK);
    const cb_graph *graphs[1] = {f.graph};
    for (int l = 0; l < 2; ++l) {
        cb_crowd_desc d = skin_desc(&f, graphs);
        d.skinning_layout = l ? CB_MATRIX_LAYOUT_MAT3X4 : CB_MATRIX_LAYOUT_MAT4;
        d.matrix_layout = CB_MATRIX_LAYOUT_MAT3X4; /* the kept model layout does not matter */
        cb_crowd *both = create(&d);
        d.skinning_only = true;
        d.matrix_layout = _CB_MATRIX_LAYOUT_DEFAULT;
        cb_crowd *only = create(&d);
        populate(both, "skinning_only");
        populate(only, "skinning_only");
        size_t bytes = f.joints * floats_of(d.skinning_layout) * sizeof(float);
        for (int frame = 0; frame <= FRAMES; ++frame) {
            assert_null(cb_crowd_matrices(only, 0, 0));
            for (uint32_t i = 0; i < CHARACTERS; ++i) {
                CB_CHECK(memcmp(cb_crowd_skinning(both, 0, i), cb_crowd_skinning(only, 0, i),
                                bytes) == 0,
                         "frame %d character %u: skinning differs without model matrices", frame,
                         i);
            }
            assert_int_equal(cb_crowd_update(both, 1.0f / 30.0f), CB_OK);
            assert_int_equal(cb_crowd_update(only, 1.0f / 30.0f), CB_OK);
        }
        cb_crowd_destroy(both);
        cb_crowd_destroy(only);
    }
    unload(&f);
}

/* Runs FRAMES frames on a skinning_only 3x4 crowd with a thread count and batch size, or (ranges
 * true) through cb_crowd_update_range in uneven ranges; returns a copy of the skinning of every
 * character and the output hash. */
static float *run_variant(const fixture *f, uint32_t threads, uint32_t batch, bool ranges,
                          uint64_t *hash)
{
    const cb_graph *graphs[1] = {f->graph};
    cb_crowd_desc d = skin_desc(f, graphs);
    d.thread_count = threads;
    d.batch_size = batch;
    d.skinning_layout = CB_MATRIX_LAYOUT_MAT3X4;
    d.skinning_only = true;
    cb_crowd *c = create(&d);
    populate(c, "skinning_threads");
    cb_crowd_scratch *s = NULL;
    assert_int_equal(cb_crowd_scratch_create(c, &s), CB_OK);
    static const uint32_t cuts[] = {0, 5, 6, 19, 30, CHARACTERS};
    for (int frame = 0; frame < FRAMES; ++frame) {
        if (!ranges) {
            assert_int_equal(cb_crowd_update(c, 1.0f / 30.0f), CB_OK);
            continue;
        }
        for (int k = 0; k + 1 < (int)(sizeof cuts / sizeof cuts[0]); ++k) {
            assert_int_equal(
                cb_crowd_update_range(c, s, 1.0f / 30.0f, 0, cuts[k], cuts[k + 1] - cuts[k]),
                CB_OK);
        }
    }
    size_t bytes = f->joints * 12 * sizeof(float);
    float *all = malloc(bytes * CHARACTERS);
    assert_non_null(all);
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        memcpy((char *)all + i * bytes, cb_crowd_skinning(c, 0, i), bytes);
    }
    *hash = cb_crowd_output_hash(c);
    cb_crowd_destroy(c);
    return all;
}

static void bit_identical_across_threads_and_batches(void **state)
{
    (void)state;
    fixture f = load(FOX_PACK);
    uint64_t h0, h;
    float *base = run_variant(&f, 1, 1, false, &h0);
    size_t bytes = (size_t)f.joints * 12 * sizeof(float) * CHARACTERS;
#ifdef CB_TEST_OUT_DIR
    /* scripts/test.sh compares this file across every kernel set and the sanitized build:
     * the same skinning bits everywhere, not only the same bits at any thread count. */
    FILE *out = fopen(CB_TEST_OUT_DIR "/skinning_hash.txt", "w");
    assert_non_null(out);
    fprintf(out, "fox.cbpack skinning 3x4, %d characters, %d frames: %016llx\n", CHARACTERS, FRAMES,
            (unsigned long long)h0);
    assert_int_equal(fclose(out), 0);
#endif
    const struct {
        uint32_t threads, batch;
        bool ranges;
    } v[] = {{2, 64, false}, {2, 8, false}, {1, 32, true}};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; ++k) {
        float *other = run_variant(&f, v[k].threads, v[k].batch, v[k].ranges, &h);
        CB_CHECK(memcmp(base, other, bytes) == 0 && h == h0,
                 "%u threads, batch %u, ranges %d: skinning differs from 1 thread", v[k].threads,
                 v[k].batch, (int)v[k].ranges);
        free(other);
    }
    free(base);
    unload(&f);
}

/* A host view with a padded stride holds what the crowd's own buffer holds, from the moment it
 * is set, across updates, adds and removes (the last character moves into the hole), and the
 * crowd's buffer holds them again after the view is dropped. */
static void host_view_follows_the_characters(void **state)
{
    (void)state;
    fixture f = load(FOX_PACK);
    const cb_graph *graphs[1] = {f.graph};
    cb_crowd_desc d = skin_desc(&f, graphs);
    cb_crowd *own = create(&d), *viewed = create(&d);
    populate(own, "skinning_view");
    populate(viewed, "skinning_view");
    assert_int_equal(cb_crowd_update(own, 0.1f), CB_OK);
    assert_int_equal(cb_crowd_update(viewed, 0.1f), CB_OK);
    size_t bytes = f.joints * 16 * sizeof(float), stride = bytes + 64;
    char *host = malloc(stride * CAPACITY);
    assert_non_null(host);
    assert_int_equal(cb_crowd_set_skinning_view(viewed, 0, (float *)host, stride), CB_OK);
    for (int step = 0; step < 6; ++step) {
        uint32_t n = cb_crowd_count(own, 0);
        for (uint32_t i = 0; i < n; ++i) {
            const float *mine = cb_crowd_skinning(own, 0, i);
            assert_ptr_equal(cb_crowd_skinning(viewed, 0, i), host + i * stride);
            CB_CHECK(memcmp(mine, host + i * stride, bytes) == 0, "step %d character %u", step, i);
        }
        /* Alternate: remove the third character, add one, update. */
        if (step % 3 == 0) {
            assert_int_equal(cb_crowd_remove(own, cb_crowd_character_at(own, 0, 2)), CB_OK);
            assert_int_equal(cb_crowd_remove(viewed, cb_crowd_character_at(viewed, 0, 2)), CB_OK);
        } else if (step % 3 == 1) {
            cb_character ch;
            assert_int_equal(cb_crowd_add(own, 0, 0.25f, &ch), CB_OK);
            assert_int_equal(cb_crowd_add(viewed, 0, 0.25f, &ch), CB_OK);
        } else {
            assert_int_equal(cb_crowd_update(own, 0.05f), CB_OK);
            assert_int_equal(cb_crowd_update(viewed, 0.05f), CB_OK);
        }
    }
    memset(host, 0xff, stride * CAPACITY); /* the crowd must not read the view back */
    assert_int_equal(cb_crowd_update(own, 0.05f), CB_OK);
    assert_int_equal(cb_crowd_update(viewed, 0.05f), CB_OK);
    assert_int_equal(cb_crowd_set_skinning_view(viewed, 0, NULL, 0), CB_OK);
    assert_true(cb_crowd_output_hash(own) == cb_crowd_output_hash(viewed));
    /* Bad views: nothing changes. */
    assert_int_equal(cb_crowd_set_skinning_view(viewed, 0, (float *)host, bytes - 4),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_set_skinning_view(viewed, 0, (float *)(host + 2), stride),
                     CB_ERR_MISALIGNED);
    assert_int_equal(cb_crowd_set_skinning_view(viewed, 0, (float *)host, stride + 2),
                     CB_ERR_MISALIGNED);
    assert_int_equal(cb_crowd_set_skinning_view(viewed, 1, (float *)host, stride),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_set_skinning_view(NULL, 0, (float *)host, stride),
                     CB_ERR_NULL_ARGUMENT);
    assert_true(cb_crowd_output_hash(own) == cb_crowd_output_hash(viewed));
    /* A crowd without inverse binds has no skinning to view. */
    d.inverse_binds = (cb_float_cspan){0};
    cb_crowd *plain = create(&d);
    assert_int_equal(cb_crowd_set_skinning_view(plain, 0, (float *)host, stride),
                     CB_ERR_INVALID_ARGUMENT);
    cb_character ch;
    assert_int_equal(cb_crowd_add(plain, 0, 0.0f, &ch), CB_OK);
    assert_null(cb_crowd_skinning(plain, 0, 0));
    assert_non_null(cb_crowd_matrices(plain, 0, 0));
    cb_crowd_destroy(plain);
    free(host);
    cb_crowd_destroy(own);
    cb_crowd_destroy(viewed);
    unload(&f);
}

/* Creates a crowd from a desc that must be refused with `want`, its message naming `needle`. */
static void refused(const cb_crowd_desc *d, cb_result want, const char *needle)
{
    cb_crowd *c = NULL;
    cb_error err = {0};
    cb_result r = cb_crowd_create(d, &c, &err);
    CB_CHECK(r == want, "want %s, got %s (%s)", cb_result_str(want), cb_result_str(r), err.message);
    CB_CHECK(c == NULL, "a refused crowd was returned");
    CB_CHECK(strstr(err.message, needle) != NULL, "message '%s' does not name '%s'", err.message,
             needle);
}

static void bad_inverse_binds_are_refused(void **state)
{
    (void)state;
    fixture f = load(CESIUM_PACK);
    const cb_graph *graphs[1] = {f.graph};
    size_t n = (size_t)f.joints * 16;
    float *ibm = malloc(n * sizeof(float));
    assert_non_null(ibm);
    const float *good = cb_pack_inverse_binds(f.pack).ptr;
    cb_crowd_desc d = skin_desc(&f, graphs);

    /* Defaults: the skinning layout resolves to MAT4 only when there are binds. */
    assert_int_equal(cb_crowd_query_desc(&d).skinning_layout, CB_MATRIX_LAYOUT_MAT4);
    assert_false(cb_crowd_query_desc(&d).skinning_only);
    cb_crowd_desc none = d;
    none.inverse_binds = (cb_float_cspan){0};
    assert_int_equal(cb_crowd_query_desc(&none).skinning_layout, _CB_MATRIX_LAYOUT_DEFAULT);

    d.inverse_binds = (cb_float_cspan){good, n - 16};
    refused(&d, CB_ERR_MISMATCH, "inverse_binds has");
    d.inverse_binds = (cb_float_cspan){good, n + 16};
    refused(&d, CB_ERR_MISMATCH, "inverse_binds has");
    d.inverse_binds = (cb_float_cspan){NULL, n};
    refused(&d, CB_ERR_NULL_ARGUMENT, "inverse_binds");

    d.inverse_binds = (cb_float_cspan){ibm, n};
    memcpy(ibm, good, n * sizeof(float));
    ibm[5 * 16 + 13] = NAN;
    refused(&d, CB_ERR_NOT_FINITE, "inverse_binds[5]");
    memcpy(ibm, good, n * sizeof(float));
    ibm[3 * 16 + 7] = 0.5f; /* bottom row, column 1 */
    refused(&d, CB_ERR_INVALID_ARGUMENT, "inverse_binds[3] is not affine");
    memcpy(ibm, good, n * sizeof(float));
    for (int k = 0; k < 3; ++k) { /* column 2 = column 0: flat */
        ibm[7 * 16 + 8 + k] = ibm[7 * 16 + k];
    }
    refused(&d, CB_ERR_DEGENERATE, "inverse_binds[7] is singular");
    memset(ibm + 16, 0, 16 * sizeof(float));
    ibm[16 + 15] = 1.0f;
    refused(&d, CB_ERR_DEGENERATE, "inverse_binds[1] is singular");

    d.inverse_binds = (cb_float_cspan){good, n};
    d.skinning_layout = (cb_matrix_layout)7;
    refused(&d, CB_ERR_INVALID_ARGUMENT, "skinning_layout");
    d.skinning_layout = _CB_MATRIX_LAYOUT_DEFAULT;
    float host[16];
    d.matrices = host;
    d.skinning_only = true;
    refused(&d, CB_ERR_INVALID_ARGUMENT, "skinning_only");
    d.matrices = NULL;

    none.skinning_only = true;
    refused(&none, CB_ERR_INVALID_ARGUMENT, "skinning_only");
    none.skinning_only = false;
    none.skinning_layout = CB_MATRIX_LAYOUT_MAT3X4;
    refused(&none, CB_ERR_INVALID_ARGUMENT, "skinning_layout");

    /* The crowd copied the binds: clearing the caller's array after create changes nothing. */
    memcpy(ibm, good, n * sizeof(float));
    d.inverse_binds = (cb_float_cspan){ibm, n};
    cb_crowd *copied = create(&d);
    memset(ibm, 0, n * sizeof(float));
    d.inverse_binds = (cb_float_cspan){good, n};
    cb_crowd *twin = create(&d);
    populate(copied, "skinning_copy");
    populate(twin, "skinning_copy");
    assert_int_equal(cb_crowd_update(copied, 0.2f), CB_OK);
    assert_int_equal(cb_crowd_update(twin, 0.2f), CB_OK);
    assert_true(cb_crowd_output_hash(copied) == cb_crowd_output_hash(twin));
    cb_crowd_destroy(copied);
    cb_crowd_destroy(twin);
    free(ibm);
    unload(&f);
}

/* Every allocation of a skinning crowd's create failing in turn: out of memory, nothing left
 * allocated, nothing returned; then the create that fails nothing works. */
static void failed_allocations_leave_nothing(void **state)
{
    (void)state;
    fixture f = load(CESIUM_PACK);
    const cb_graph *graphs[1] = {f.graph};
    for (int only = 0; only < 2; ++only) {
        bool created = false;
        for (int n = 0; !created && n < 200; ++n) {
            cb_test_failing_nth b = {.fail_at = (size_t)n};
            cb_crowd_desc d = skin_desc(&f, graphs);
            d.skinning_only = only;
            d.allocator = cb_test_failing_nth_allocator(&b);
            cb_crowd *c = NULL;
            cb_error err = {0};
            cb_result r = cb_crowd_create(&d, &c, &err);
            created = r == CB_OK;
            if (created) {
                populate(c, "skinning_budget");
                assert_int_equal(cb_crowd_update(c, 0.1f), CB_OK);
                assert_non_null(cb_crowd_skinning(c, 0, CHARACTERS - 1));
                cb_crowd_destroy(c);
            } else {
                CB_CHECK(r == CB_ERR_OUT_OF_MEMORY || r == CB_ERR_THREAD,
                         "allocation %d failed: %s (%s)", n, cb_result_str(r), err.message);
                assert_null(c);
            }
            CB_CHECK(b.count.live_bytes == 0, "allocation %d failed: %lld bytes left", n,
                     b.count.live_bytes);
        }
        assert_true(created);
    }
    unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(skinning_is_model_times_inverse_bind),
        cmocka_unit_test(rest_pose_skinning),
        cmocka_unit_test(skinning_only_gives_the_same_bits),
        cmocka_unit_test(bit_identical_across_threads_and_batches),
        cmocka_unit_test(host_view_follows_the_characters),
        cmocka_unit_test(bad_inverse_binds_are_refused),
        cmocka_unit_test(failed_allocations_leave_nothing),
    };
    return CB_RUN_TESTS(tests);
}
