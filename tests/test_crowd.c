/* crowd: the whole frame. Determinism across thread counts, batch sizes and update ranges;
 * views against own columns; the desc's validity table (and that of the blend-space graph the
 * tests run); bad input; no allocation per frame; time sync and root motion against the clips'
 * own figures. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowd/crowd_impl.h" /* cb_crowd_set_stream_bytes, cb_crowd_set_kernels */
#include "crowdblend/crowdblend.h"
#include "graph/graph_impl.h" /* struct cb_graph.flat: one test runs a flat graph unflattened */
#include "ltm/ltm_kernels.h"  /* cb_ltm_model_stream_unchecked */
#include "test_util.h"

static const char *const loco[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

static cb_embedded *set;
static const cb_clip *clips[17];
/* The fixtures: the 17 locomotion clips in a blend space, with (full) and without (bare) an
 * additive lean and an upper-body wave on top. */
static cb_graph *full_graph, *bare_graph;
/* The same as the one-graph lists a desc points at (a crowd reads them at create). */
static const cb_graph *full_list[1], *bare_list[1];

static cb_graph_blend_desc blend_desc(bool layers)
{
    cb_graph_blend_desc d = {
        .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = 17};
    if (layers) {
        d.additive.clip = cb_embedded_find_clip(set, "lean_add");
        d.upper_body = (cb_graph_blend_layer){.clip = cb_embedded_find_clip(set, "wave_upper"),
                                              .mask_joint = "spine_01"};
    }
    return d;
}

static cb_graph *blend_graph(bool layers)
{
    cb_graph_blend_desc d = blend_desc(layers);
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_create_blend(&d, &g, &err) == CB_OK, "blend graph: %s", err.message);
    return g;
}

/* A parameter's index in kind 0 of a crowd, by name. */
static uint32_t param(const cb_crowd *c, const char *name)
{
    uint32_t p = CB_INVALID_INDEX;
    CB_CHECK(cb_crowd_find_param(c, 0, name, &p) == CB_OK, "no parameter %s", name);
    return p;
}

static int setup_set(void **state)
{
    (void)state;
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK) {
        return -1;
    }
    for (int k = 0; k < 17; ++k) {
        clips[k] = cb_embedded_find_clip(set, loco[k]);
        if (clips[k] == NULL) {
            return -1;
        }
    }
    full_list[0] = full_graph = blend_graph(true);
    bare_list[0] = bare_graph = blend_graph(false);
    return 0;
}

static int teardown_set(void **state)
{
    (void)state;
    cb_graph_destroy(full_graph);
    cb_graph_destroy(bare_graph);
    cb_embedded_destroy(set);
    return 0;
}

/* A crowd desc running one graph (the full blend space unless changed). */
static cb_crowd_desc graph_desc(uint32_t capacity, const cb_graph *const *graphs)
{
    cb_crowd_desc d = {
        .skeleton = cb_embedded_skeleton(set),
        .capacity = capacity,
        .graphs = graphs,
        .graph_count = 1,
        .keep_weights = true,
    };
    return d;
}

static cb_crowd_desc base_desc(uint32_t capacity)
{
    return graph_desc(capacity, full_list);
}

/* Parameters that sweep the whole blend space and change every frame; a few NaN and
 * out-of-range layer weights on purpose. */
static void write_params(cb_crowd *c, uint32_t frame, uint32_t n)
{
    float *px = cb_crowd_param_column(c, 0, param(c, CB_GRAPH_BLEND_PARAM_PREFIX "0"));
    float *py = cb_crowd_param_column(c, 0, param(c, CB_GRAPH_BLEND_PARAM_PREFIX "1"));
    float *add = cb_crowd_param_column(c, 0, param(c, CB_GRAPH_BLEND_ADDITIVE_WEIGHT));
    float *up = cb_crowd_param_column(c, 0, param(c, CB_GRAPH_BLEND_UPPER_WEIGHT));
    for (uint32_t i = 0; i < n; ++i) {
        float a = 0.37f * (float)i + 0.05f * (float)frame;
        float s = 4.2f * (0.5f + 0.5f * sinf(0.11f * (float)i + 0.02f * (float)frame));
        px[i] = s * cosf(a);
        py[i] = s * sinf(a);
        add[i] = 0.5f + 0.5f * sinf((float)i);
        up[i] = (i % 5 == 0) ? 0.8f : 0.0f;
        if (i % 97 == 13) {
            px[i] = NAN;
        }
        if (i % 89 == 7) {
            up[i] = 1.7f;
        }
    }
}

/* A crowd of n characters of graph g at staggered phases. */
static cb_crowd *make_graph_crowd(const cb_graph *g, uint32_t n, uint32_t threads, uint32_t batch)
{
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc d = graph_desc(n, graphs);
    d.thread_count = threads;
    d.batch_size = batch;
    cb_crowd *c = NULL;
    cb_error err = {0};
    cb_result r = cb_crowd_create(&d, &c, &err);
    CB_CHECK(r == CB_OK, "create: %s", err.message);
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, (float)i * 0.0173f, &ch), CB_OK);
    }
    return c;
}

static cb_crowd *make_crowd(uint32_t n, uint32_t threads, uint32_t batch)
{
    return make_graph_crowd(full_graph, n, threads, batch);
}

/* Runs `frames` frames of a crowd of n characters with the given threads and batch size, and
 * returns the hash of the last frame's outputs. */
static uint64_t run_hash(uint32_t n, uint32_t threads, uint32_t batch, uint32_t frames)
{
    cb_crowd *c = make_crowd(n, threads, batch);
    for (uint32_t f = 0; f < frames; ++f) {
        write_params(c, f, n);
        assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f + 0.001f * (float)(f % 3)), CB_OK);
    }
    uint64_t h = cb_crowd_output_hash(c);
    cb_crowd_destroy(c);
    return h;
}

static void crowd_output_is_bit_identical_across_threads_and_batches(void **state)
{
    (void)state;
    /* Not a multiple of any batch size or W; 133 in slow builds (CB_TEST_SCALE below 1), which
     * still ends in a partial batch of every size but 1 and spans two or more of each but 512. */
    const uint32_t n = cb_test_scale() < 1.0 ? 133 : 333;
    uint64_t reference = run_hash(n, 1, 64, 12);
    const uint32_t threads[] = {1, 2, 4};
    const uint32_t batches[] = {1, 16, 64, 100, 512};
    for (size_t t = 0; t < 3; ++t) {
        for (size_t b = 0; b < 5; ++b) {
            uint64_t h = run_hash(n, threads[t], batches[b], 12);
            CB_CHECK(h == reference, "threads %u batch %u: hash %016llx != %016llx", threads[t],
                     batches[b], (unsigned long long)h, (unsigned long long)reference);
        }
    }
    cb_test_note("crowd determinism: %u characters, hash %016llx for threads 1/2/4 x batch "
                 "1/16/64/100/512",
                 n, (unsigned long long)reference);
}

/* Non-temporal output (crowd/update.c): the SIMD kernels with the streaming kernel counted, so
 * that a test knows which path wrote the matrices. */
static atomic_uint streamed_characters;

static void counted_stream(const cb_skeleton *s, const cb_xform_group *local,
                           cb_matrix_layout layout, float *stage, float *model)
{
    atomic_fetch_add(&streamed_characters, 1u);
    cb_ltm_model_stream_unchecked(s, local, layout, stage, model);
}

/* `frames` frames of n characters in `layout` into a host buffer of `stride` bytes per
 * character starting `offset` bytes past a 64-byte boundary, streamed from `stream_bytes` of
 * output on; returns the buffer (pads included, filled with 0xA5 first) and the characters the
 * streaming kernel wrote. */
static unsigned run_streamed(cb_matrix_layout layout, uint32_t n, uint32_t frames, uint32_t threads,
                             uint32_t batch, size_t stride, size_t offset, size_t stream_bytes,
                             unsigned char *out)
{
    unsigned char *buf = aligned_alloc(64, (n * stride + offset + 63) / 64 * 64);
    assert_non_null(buf);
    memset(buf, 0xA5, n * stride + offset);
    static cb_graph_kernels counted;
    counted = cb_graph_kernels_simd;
    counted.ltm_stream = counted_stream;
    cb_crowd_desc d = base_desc(n);
    d.thread_count = threads;
    d.batch_size = batch;
    d.matrix_layout = layout;
    d.matrices = (float *)(buf + offset);
    d.matrix_stride_bytes = stride;
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "create: %s", err.message);
    cb_crowd_set_kernels(c, &counted);
    if (stream_bytes != CB_CROWD_STREAM_BYTES) {
        cb_crowd_set_stream_bytes(c, stream_bytes);
    }
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, (float)i * 0.0173f, &ch), CB_OK);
    }
    atomic_store(&streamed_characters, 0u);
    for (uint32_t f = 0; f < frames; ++f) {
        write_params(c, f, n);
        assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f + 0.001f * (float)(f % 3)), CB_OK);
    }
    unsigned count = atomic_load(&streamed_characters);
    cb_crowd_destroy(c);
    memcpy(out, buf + offset, n * stride);
    free(buf);
    return count;
}

/* The streamed output has the bits of the direct one (the same kernel writes the same values,
 * only through a stage and streaming stores), in each layout, for 1 and 2 threads, several
 * batch sizes and host strides; it is taken only where the slots allow 16-byte streaming
 * stores, and not below the size threshold. */
static void streamed_layout_is_bit_identical(cb_matrix_layout layout, uint32_t n)
{
    const size_t joints = cb_skeleton_joint_count(cb_embedded_skeleton(set));
    const size_t packed = joints * cb_ltm_matrix_floats(layout) * sizeof(float);
    const struct {
        size_t stride, offset;
        bool streams;
    } cases[] = {
        {packed, 0, true},
        {packed + 16, 16, true}, /* padded, 16-byte aligned: lines straddle the slots */
        {packed + 48, 32, true}, /* a 64-byte line holds one slot's end and the next's start */
        {packed + 4, 0, false},  /* slots not 16-byte aligned: written directly */
        {packed + 16, 8, false}, /* buffer not 16-byte aligned */
        {packed + 8, 16, false}, /* buffer aligned, stride not a multiple of 16 */
    };
    const uint32_t threads[] = {1, 2};
    const uint32_t batches[] = {1, 64, 100};
    unsigned char *want = malloc(n * (packed + 48));
    unsigned char *got = malloc(n * (packed + 48));
    assert_non_null(want);
    assert_non_null(got);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const size_t stride = cases[k].stride, bytes = n * stride;
        unsigned direct =
            run_streamed(layout, n, 12, 1, 64, stride, cases[k].offset, SIZE_MAX, want);
        assert_int_equal(direct, 0);
        for (size_t t = 0; t < 2; ++t) {
            for (size_t b = 0; b < 3; ++b) {
                unsigned streamed = run_streamed(layout, n, 12, threads[t], batches[b], stride,
                                                 cases[k].offset, 0, got);
                CB_CHECK(streamed == (cases[k].streams ? 12u * n : 0u),
                         "layout %d stride %zu offset %zu: %u characters streamed", (int)layout,
                         stride, cases[k].offset, streamed);
                size_t at = 0;
                while (at < bytes && got[at] == want[at]) {
                    at++;
                }
                CB_CHECK(at == bytes,
                         "layout %d stride %zu offset %zu threads %u batch %u: byte %zu "
                         "(character %zu, byte %zu of its slot) is %02x, direct %02x",
                         (int)layout, stride, cases[k].offset, threads[t], batches[b], at,
                         at / stride, at % stride, got[at], want[at]);
            }
        }
        /* Below the threshold: written directly. */
        unsigned below =
            run_streamed(layout, n, 12, 1, 64, stride, cases[k].offset, bytes + 1, got);
        assert_int_equal(below, 0);
        assert_memory_equal(got, want, bytes);
    }
    free(want);
    free(got);
    /* The default threshold: a kind whose output reaches CB_CROWD_STREAM_BYTES streams, one
     * character fewer does not (one frame each). */
    const uint32_t at = (uint32_t)((CB_CROWD_STREAM_BYTES + packed - 1) / packed);
    unsigned char *big = malloc(at * packed);
    assert_non_null(big);
    assert_int_equal(run_streamed(layout, at, 1, 1, 64, packed, 0, CB_CROWD_STREAM_BYTES, big), at);
    assert_int_equal(run_streamed(layout, at - 1, 1, 1, 64, packed, 0, CB_CROWD_STREAM_BYTES, big),
                     0);
    free(big);
}

static void crowd_streamed_output_is_bit_identical(void **state)
{
    (void)state;
    const uint32_t n = cb_test_scale() < 1.0 ? 133 : 333;
    const cb_matrix_layout layouts[] = {CB_MATRIX_LAYOUT_MAT4, CB_MATRIX_LAYOUT_MAT3X4,
                                        CB_MATRIX_LAYOUT_QTS};
    for (size_t l = 0; l < 3; ++l) {
        streamed_layout_is_bit_identical(layouts[l], n);
    }
    cb_test_note("streamed output: %u characters, MAT4, MAT3X4 and QTS each bit-identical to the "
                 "direct output for 6 strides x threads 1/2 x batch 1/64/100",
                 n);
}

/* The blend-space graph is flat (graph_impl.h): the runtime skips its stages' list building,
 * and the same graph run unflattened (the general path) gives the same bits. */
static void crowd_flat_path_matches_general_path(void **state)
{
    (void)state;
    uint64_t hash[2];
    cb_graph *unflat = blend_graph(true);
    assert_true(full_graph->flat && unflat->flat);
    unflat->flat = false;
    for (int general = 0; general < 2; ++general) {
        cb_crowd *c = make_graph_crowd(general ? unflat : full_graph, 200, 2, 64);
        for (uint32_t f = 0; f < 10; ++f) {
            write_params(c, f, 200);
            assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f + 0.001f * (float)(f % 3)), CB_OK);
        }
        hash[general] = cb_crowd_output_hash(c);
        cb_crowd_destroy(c);
    }
    CB_CHECK(hash[0] == hash[1], "flat path %016llx, general path %016llx",
             (unsigned long long)hash[0], (unsigned long long)hash[1]);
    cb_graph_destroy(unflat);
}

/* update_range over uneven host-chosen ranges gives the same bits as update. */
static void crowd_update_range_matches_update(void **state)
{
    (void)state;
    const uint32_t n = 200;
    uint64_t reference = run_hash(n, 2, 64, 5);
    cb_crowd *c = make_crowd(n, 1, 0);
    cb_crowd_scratch *s1 = NULL, *s2 = NULL;
    assert_int_equal(cb_crowd_scratch_create(c, &s1), CB_OK);
    assert_int_equal(cb_crowd_scratch_create(c, &s2), CB_OK);
    const uint32_t cuts[] = {0, 7, 70, 71, 150, 200};
    for (uint32_t f = 0; f < 5; ++f) {
        write_params(c, f, n);
        float dt = 1.0f / 60.0f + 0.001f * (float)(f % 3);
        for (int k = 0; k + 1 < 6; ++k) {
            assert_int_equal(
                cb_crowd_update_range(c, k % 2 ? s1 : s2, dt, 0, cuts[k], cuts[k + 1] - cuts[k]),
                CB_OK);
        }
    }
    CB_CHECK(cb_crowd_output_hash(c) == reference, "update_range differs from update");
    cb_crowd_stats st = cb_crowd_query_stats(c);
    assert_int_equal(st.characters_updated, 5 * n);
    /* Ranges are checked. */
    assert_int_equal(cb_crowd_update_range(c, s1, 0.01f, 0, 150, 51), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_update_range(c, s1, 0.01f, 0, 201, 0), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_update_range(c, NULL, 0.01f, 0, 0, 1), CB_ERR_NULL_ARGUMENT);
    cb_crowd_scratch_destroy(c, s1);
    cb_crowd_scratch_destroy(c, s2);
    assert_int_equal(cb_crowd_query_stats(c).characters_updated, 5 * n);
    cb_crowd_destroy(c);
}

/* Host views (strided, interleaved) read the same values as the crowd's own columns. */
static void crowd_views_match_own_columns(void **state)
{
    (void)state;
    const uint32_t n = 150;
    uint64_t reference = run_hash(n, 1, 64, 4);
    cb_crowd *c = make_crowd(n, 2, 0);
    /* An array-of-structs component table, as an ECS might keep it. */
    typedef struct component {
        float pos[3];
        float vel[2];
        float weights[2];
    } component;
    component *table = calloc(n, sizeof *table);
    uint32_t pc = cb_crowd_param_count(c, 0);
    assert_int_equal(pc, 4);
    for (uint32_t p = 0; p < pc; ++p) {
        const float *base = p < 2 ? &table[0].vel[p] : &table[0].weights[p - 2];
        assert_int_equal(cb_crowd_set_param_view(c, 0, p, base, sizeof(component)), CB_OK);
    }
    for (uint32_t f = 0; f < 4; ++f) {
        /* Fill the own columns, then copy them into the table the views read. */
        write_params(c, f, n);
        for (uint32_t i = 0; i < n; ++i) {
            table[i].vel[0] = cb_crowd_param_column(c, 0, 0)[i];
            table[i].vel[1] = cb_crowd_param_column(c, 0, 1)[i];
            table[i].weights[0] = cb_crowd_param_column(c, 0, 2)[i];
            table[i].weights[1] = cb_crowd_param_column(c, 0, 3)[i];
            cb_crowd_param_column(c, 0, 0)[i] = 99.0f; /* the own column must not be read */
        }
        assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f + 0.001f * (float)(f % 3)), CB_OK);
    }
    CB_CHECK(cb_crowd_output_hash(c) == reference, "views differ from own columns");
    /* View errors. */
    assert_int_equal(cb_crowd_set_param_view(c, 0, pc, &table[0].vel[0], 8),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_set_param_view(c, 0, 0, &table[0].vel[0], 2),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_set_param_view(c, 0, 0, &table[0].vel[0], 6), CB_ERR_MISALIGNED);
    assert_int_equal(cb_crowd_set_param_view(c, 0, 0, (const float *)((const char *)table + 1), 8),
                     CB_ERR_MISALIGNED);
    assert_int_equal(cb_crowd_set_param_view(c, 0, 0, NULL, 0), CB_OK);
    free(table);
    cb_crowd_destroy(c);
}

/* ------------------------------------------------------------------------------------------ */

static void crowd_desc_defaults(void **state)
{
    (void)state;
    cb_crowd_desc d = cb_crowd_query_desc(NULL);
    assert_int_equal(d.batch_size, 64);
    assert_int_equal(d.matrix_layout, CB_MATRIX_LAYOUT_MAT4);
    assert_int_equal(d.thread_count, cb_jobs_query_desc(NULL).thread_count);
    assert_false(d.keep_weights);
    assert_false(d.profile);
    cb_crowd_desc given = base_desc(10);
    given.batch_size = 70;
    d = cb_crowd_query_desc(&given);
    assert_int_equal(d.batch_size % cb_simd_width(), 0);
    assert_true(d.batch_size >= 70);
    assert_int_equal(d.matrix_stride_bytes,
                     cb_skeleton_joint_count(given.skeleton) * 16 * sizeof(float));
    /* The blend-space graph's defaults. */
    cb_graph_blend_desc b = cb_graph_query_blend_desc(NULL);
    assert_int_equal(b.solver.kind, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D);
    assert_string_equal(b.name, CB_GRAPH_BLEND_DEFAULT_NAME);
    assert_null(b.clips);
    b = blend_desc(true);
    b.solver.kind = CB_SOLVER_KIND_DIRECT;
    b = cb_graph_query_blend_desc(&b);
    assert_int_equal(b.solver.kind, CB_SOLVER_KIND_DIRECT);
    assert_int_equal(b.clip_count, 17);
}

static void only_free(void *ptr, size_t size, void *user)
{
    (void)size, (void)user;
    free(ptr);
}

static void crowd_create_validity_table(void **state)
{
    (void)state;
    cb_crowd *c = (cb_crowd *)&c;
    cb_crowd *const untouched = c;
    cb_error err = {0};
    const cb_graph *with_null[2] = {full_graph, NULL};
    const cb_graph *many[CB_CROWD_MAX_KINDS + 1];
    for (int k = 0; k <= CB_CROWD_MAX_KINDS; ++k) {
        many[k] = full_graph;
    }
    typedef struct row {
        const char *what;
        cb_crowd_desc d;
        cb_result want;
    } row;
    row rows[16];
    int n = 0;
    cb_crowd_desc d;
#define ROW(label, code, ...)                                                                      \
    do {                                                                                           \
        d = base_desc(8);                                                                          \
        __VA_ARGS__;                                                                               \
        rows[n++] = (row){label, d, code};                                                         \
    } while (0)
    ROW("start canary", CB_ERR_CANARY, d._start_canary = 1);
    ROW("end canary", CB_ERR_CANARY, d._end_canary = 2);
    ROW("half allocator", CB_ERR_ALLOCATOR, d.allocator.free_fn = only_free);
    ROW("no skeleton", CB_ERR_NULL_ARGUMENT, d.skeleton = NULL);
    ROW("capacity 0", CB_ERR_INVALID_ARGUMENT, d.capacity = 0);
    ROW("capacity too large", CB_ERR_INVALID_ARGUMENT, d.capacity = CB_CROWD_MAX_CAPACITY + 1);
    ROW("no graph", CB_ERR_TOO_FEW, d.graphs = NULL; d.graph_count = 0);
    ROW("graphs NULL", CB_ERR_NULL_ARGUMENT, d.graphs = NULL);
    ROW("a NULL graph", CB_ERR_NULL_ARGUMENT, d.graphs = with_null; d.graph_count = 2);
    ROW("too many graphs", CB_ERR_TOO_MANY, d.graphs = many;
        d.graph_count = CB_CROWD_MAX_KINDS + 1);
    ROW("bad layout", CB_ERR_INVALID_ARGUMENT, d.matrix_layout = (cb_matrix_layout)9);
    ROW("stride too small", CB_ERR_INVALID_ARGUMENT, d.matrix_stride_bytes = 4);
    ROW("batch too large", CB_ERR_INVALID_ARGUMENT, d.batch_size = 100000);
#undef ROW
    for (int i = 0; i < n; ++i) {
        err = (cb_error){0};
        cb_result r = cb_crowd_create(&rows[i].d, &c, &err);
        CB_CHECK(r == rows[i].want, "%s: got %s, want %s (%s)", rows[i].what, cb_result_str(r),
                 cb_result_str(rows[i].want), err.message);
        CB_CHECK(strlen(err.message) > 0, "%s: no message", rows[i].what);
        CB_CHECK(c == untouched, "%s: out written on failure", rows[i].what);
    }
    assert_int_equal(cb_crowd_create(NULL, &c, &err), CB_ERR_NULL_ARGUMENT);
    /* A graph of another skeleton (one signature per skeleton: names and parents). */
    static const char *const names[1] = {"root"};
    static const int32_t parents[1] = {-1};
    cb_skeleton_desc sd = {.joint_count = 1, .names = names, .parents = parents};
    cb_skeleton *other = NULL;
    assert_int_equal(cb_skeleton_create(&sd, &other, NULL), CB_OK);
    d = base_desc(8);
    d.skeleton = other;
    assert_int_equal(cb_crowd_create(&d, &c, &err), CB_ERR_MISMATCH);
    assert_true(c == untouched);
    cb_skeleton_destroy(other);
    /* The minimal valid desc. */
    cb_crowd_desc ok = {.skeleton = cb_embedded_skeleton(set),
                        .capacity = 1,
                        .graphs = bare_list,
                        .graph_count = 1};
    assert_int_equal(cb_crowd_create(&ok, &c, &err), CB_OK);
    assert_int_equal(cb_crowd_param_count(c, 0), 4);
    cb_crowd_destroy(c);
    cb_crowd_destroy(NULL);
}

/* The blend-space graph refuses what the crowd used to refuse for it, and says where. */
static void crowd_blend_graph_validity_table(void **state)
{
    (void)state;
    cb_graph *g = (cb_graph *)&g;
    cb_graph *const untouched = g;
    cb_error err = {0};
    const cb_clip *with_null[2] = {clips[1], NULL};
    const cb_clip *with_additive[2] = {clips[1], cb_embedded_find_clip(set, "lean_add")};
    const cb_clip *twins[2] = {clips[1], clips[1]};
    typedef struct row {
        const char *what;
        cb_graph_blend_desc d;
        cb_result want;
    } row;
    row rows[12];
    int n = 0;
    cb_graph_blend_desc d;
#define ROW(label, code, ...)                                                                      \
    do {                                                                                           \
        d = blend_desc(true);                                                                      \
        __VA_ARGS__;                                                                               \
        rows[n++] = (row){label, d, code};                                                         \
    } while (0)
    ROW("start canary", CB_ERR_CANARY, d._start_canary = 1);
    ROW("half allocator", CB_ERR_ALLOCATOR, d.allocator.free_fn = only_free);
    ROW("no skeleton", CB_ERR_NULL_ARGUMENT, d.skeleton = NULL);
    ROW("no clips", CB_ERR_NULL_ARGUMENT, d.clips = NULL);
    ROW("clip count 0", CB_ERR_INVALID_ARGUMENT, d.clip_count = 0);
    ROW("a NULL clip", CB_ERR_NULL_ARGUMENT, d.clips = with_null; d.clip_count = 2);
    ROW("additive clip as node", CB_ERR_MISMATCH, d.clips = with_additive; d.clip_count = 2);
    ROW("normal clip as additive layer", CB_ERR_MISMATCH, d.additive.clip = clips[3]);
    ROW("two nodes at one position", CB_ERR_DUPLICATE, d.clips = twins; d.clip_count = 2);
    ROW("unknown mask joint", CB_ERR_NOT_FOUND, d.upper_body.mask_joint = "tail");
#undef ROW
    for (int i = 0; i < n; ++i) {
        err = (cb_error){0};
        cb_result r = cb_graph_create_blend(&rows[i].d, &g, &err);
        CB_CHECK(r == rows[i].want, "%s: got %s, want %s (%s)", rows[i].what, cb_result_str(r),
                 cb_result_str(rows[i].want), err.message);
        CB_CHECK(strlen(err.message) > 0, "%s: no message", rows[i].what);
        CB_CHECK(g == untouched, "%s: out written on failure", rows[i].what);
    }
    assert_int_equal(cb_graph_create_blend(NULL, &g, &err), CB_ERR_NULL_ARGUMENT);
    /* A clip built for another skeleton. */
    cb_embedded *other = NULL;
    cb_embedded_desc od = {.sample_rate_hz = 24.0f};
    assert_int_equal(cb_embedded_create(&od, &other, NULL), CB_OK);
    /* Same skeleton shape but a different skeleton object and signature? Only if the signature
     * differs; otherwise clips of a twin skeleton are legitimately interchangeable. */
    const cb_clip *foreign[1] = {cb_embedded_find_clip(other, "walk_f")};
    d = blend_desc(false);
    d.clips = foreign;
    d.clip_count = 1;
    cb_result r = cb_graph_create_blend(&d, &g, &err);
    if (cb_clip_skeleton_signature(foreign[0]) != cb_skeleton_signature(d.skeleton)) {
        CB_CHECK(r == CB_ERR_MISMATCH, "foreign clip accepted: %s", cb_result_str(r));
    } else if (r == CB_OK) {
        cb_graph_destroy(g);
    }
    cb_embedded_destroy(other);
}

static void crowd_bad_input_is_refused_and_counted(void **state)
{
    (void)state;
    cb_crowd_desc d = base_desc(3);
    d.thread_count = 1;
    cb_crowd *c = NULL;
    assert_int_equal(cb_crowd_create(&d, &c, NULL), CB_OK);
    cb_character a, b, x;
    assert_int_equal(cb_crowd_add(c, 0, 0.0f, &a), CB_OK);
    assert_int_equal(cb_crowd_add(c, 0, NAN, &x), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_crowd_add(c, 0, 0.5f, &b), CB_OK);
    assert_int_equal(cb_crowd_add(c, 0, 0.2f, &x), CB_OK);
    cb_character full;
    assert_int_equal(cb_crowd_add(c, 0, 0.0f, &full), CB_ERR_CAPACITY);
    assert_int_equal(cb_crowd_count(c, 0), 3);
    assert_int_equal(cb_crowd_capacity(c), 3); /* full at what it reports */
    assert_int_equal(cb_crowd_capacity(NULL), 0);
    /* Removing swap-moves the last character (x) into b's index. */
    uint32_t ix, ib, kind;
    assert_int_equal(cb_crowd_locate(c, b, &kind, &ib), CB_OK);
    assert_int_equal(kind, 0);
    assert_int_equal(cb_crowd_remove(c, b), CB_OK);
    assert_int_equal(cb_crowd_remove(c, b), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_crowd_locate(c, b, &kind, &ix), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_crowd_locate(c, x, &kind, &ix), CB_OK);
    assert_int_equal(ix, ib);
    assert_int_equal(cb_crowd_character_at(c, 0, ix).id, x.id);
    assert_int_equal(cb_crowd_remove(c, (cb_character){0}), CB_ERR_STALE_HANDLE);
    /* dt */
    uint64_t before = cb_crowd_output_hash(c);
    assert_int_equal(cb_crowd_update(c, NAN), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_crowd_update(c, INFINITY), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_crowd_update(c, -0.01f), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_update(c, 7200.0f), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_crowd_output_hash(c), before);
    assert_int_equal(cb_crowd_update(NULL, 0.01f), CB_ERR_NULL_ARGUMENT);
    /* NaN parameters and out-of-range layer weights give finite outputs and are counted: a
     * non-finite value is read as 0 (counted once, then in range: not clamped). */
    float *px = cb_crowd_param_column(c, 0, 0);
    float *up = cb_crowd_param_column(c, 0, param(c, CB_GRAPH_BLEND_UPPER_WEIGHT));
    px[0] = NAN;
    px[1] = INFINITY;
    up[0] = -3.0f;
    up[1] = NAN;
    assert_int_equal(cb_crowd_update(c, 0.016f), CB_OK);
    cb_crowd_stats st = cb_crowd_query_stats(c);
    assert_int_equal(st.nonfinite_params, 3);
    assert_int_equal(st.clamped_weights, 1);
    for (uint32_t i = 0; i < cb_crowd_count(c, 0); ++i) {
        const float *m = cb_crowd_matrices(c, 0, i);
        for (size_t k = 0; k < cb_crowd_joint_count(c) * 16; ++k) {
            CB_CHECK(isfinite(m[k]), "character %u matrix float %zu is not finite", i, k);
        }
        CB_CHECK(isfinite(cb_crowd_root_motion(c, 0)[i].translation[0]), "root motion NaN");
    }
    assert_null(cb_crowd_matrices(c, 0, cb_crowd_count(c, 0)));
    assert_null(cb_crowd_param_column(c, 0, cb_crowd_param_count(c, 0)));
    uint32_t none = 7;
    assert_int_equal(cb_crowd_find_param(c, 0, CB_GRAPH_BLEND_PARAM_PREFIX "5", &none),
                     CB_ERR_NOT_FOUND);
    assert_int_equal(none, 7);
    assert_int_equal(cb_crowd_state(c, 0, 0, 0), CB_INVALID_INDEX); /* no machine */
    cb_crowd_destroy(c);
}

/* ------------------------------------------------------------------------------------------ */

typedef struct counting {
    atomic_long calls, allocs, frees;
} counting;

static void *count_alloc(size_t size, size_t align, void *user)
{
    atomic_fetch_add(&((counting *)user)->calls, 1);
    atomic_fetch_add(&((counting *)user)->allocs, 1);
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void count_free(void *ptr, size_t size, void *user)
{
    (void)size;
    atomic_fetch_add(&((counting *)user)->calls, 1);
    atomic_fetch_add(&((counting *)user)->frees, 1);
    free(ptr);
}

static void crowd_update_does_not_allocate(void **state)
{
    (void)state;
    counting k;
    atomic_init(&k.calls, 0);
    atomic_init(&k.allocs, 0);
    atomic_init(&k.frees, 0);
    cb_crowd_desc d = base_desc(300);
    d.thread_count = 3;
    d.profile = true;
    d.allocator = (cb_allocator){count_alloc, count_free, &k};
    cb_crowd *c = NULL;
    assert_int_equal(cb_crowd_create(&d, &c, NULL), CB_OK);
    for (uint32_t i = 0; i < 300; ++i) {
        cb_character ch;
        cb_crowd_add(c, 0, 0.01f * (float)i, &ch);
    }
    long setup = atomic_load(&k.calls);
    for (uint32_t f = 0; f < 30; ++f) {
        write_params(c, f, 300);
        assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f), CB_OK);
    }
    assert_int_equal(atomic_load(&k.calls), setup);
    cb_crowd_stats st = cb_crowd_query_stats(c);
    assert_int_equal(st.updates, 30);
    assert_int_equal(st.characters_updated, 30 * 300);
    for (int s = 0; s < _CB_CROWD_STAGE_COUNT; ++s) {
        /* A blend-space crowd has no IK steps: its post-process stage does not run. */
        bool runs = s != CB_CROWD_STAGE_POST_PROCESS;
        CB_CHECK((st.stage_ns[s] > 0) == runs, "stage %s: %llu ns",
                 cb_crowd_stage_name((cb_crowd_stage)s), (unsigned long long)st.stage_ns[s]);
    }
    cb_crowd_destroy(c);
    /* Everything the crowd allocated, it freed. */
    assert_int_equal(atomic_load(&k.allocs), atomic_load(&k.frees));
}

/* The outputs (matrices, skinning matrices): from CB_ALLOC_LARGE_BYTES on, with the C library's
 * allocator, on a 2 MB boundary and advised as huge pages (where /proc/self/smaps tells); the
 * state (graph block, root motion, kept weights, handles) 64-byte aligned and not advised, also
 * where it passes a huge page; with the host's hooks every table comes from the hooks at the
 * alignment asked before (64 bytes at most) and none is advised. The bits are the same both ways,
 * the whole capacity is used (every slot's state and matrices written), and everything allocated is
 * freed (the hooks' count; an ASan build checks the library's side). */
static void crowd_large_outputs_take_huge_pages_without_hooks(void **state)
{
    (void)state;
    const uint32_t n = 20000; /* outputs of 80 MB; the state block passes 2 MB */
    const size_t large = CB_ALLOC_LARGE_BYTES, page = CB_HUGE_PAGE_BYTES;
    const size_t joints = cb_skeleton_joint_count(cb_embedded_skeleton(set));
    float *binds = malloc(joints * 16 * sizeof(float)); /* identity: skinning = model */
    assert_non_null(binds);
    for (size_t j = 0; j < joints * 16; ++j) {
        binds[j] = j % 16 % 5 == 0 ? 1.0f : 0.0f;
    }
    /* The host's memory: one block this large is a fresh mapping of its own, which no advice
     * given to the library's own outputs can reach. */
    cb_test_bump b = {.size = (size_t)256 << 20};
    b.base = malloc(b.size);
    assert_non_null(b.base);
    const bool libc_advises = cb_test_libc_advises() == 1;
    if (libc_advises) {
        cb_test_note("the C library advises its own large blocks as huge pages here "
                     "(GLIBC_TUNABLES glibc.malloc.hugetlb=1?): the tables left alone are not "
                     "checked");
    }
    uint64_t hash[2];
    for (int hooked = 0; hooked < 2; ++hooked) {
        cb_crowd_desc d = base_desc(n);
        d.thread_count = 2;
        d.inverse_binds = (cb_float_cspan){binds, joints * 16};
        if (hooked) {
            d.allocator = (cb_allocator){cb_test_bump_alloc, cb_test_bump_free, &b};
        }
        cb_crowd *c = NULL;
        cb_error err = {0};
        CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "create: %s", err.message);
        const cb_crowd_kind *k = &c->kinds[0];
        const struct {
            const char *name;
            const void *ptr;
            size_t bytes;
            bool output;
        } tables[] = {
            {"matrices", k->matrices, n * k->matrix_stride, true},
            {"skinning", k->own_skinning, n * cb_crowd_skinning_bytes(c), true},
            {"state block", k->block_memory, cb_graph_block_bytes(k->graph, n), false},
            {"root motion", k->root_motion, n * sizeof(cb_root_delta), false},
            {"kept weights", k->kept_weights, (size_t)k->clip_count * n * sizeof(float), false},
            {"handles", k->handle_memory, cb_handle_pool_bytes(n), false},
        };
        for (size_t t = 0; t < 3; ++t) {
            CB_CHECK(tables[t].bytes >= (tables[t].output ? large : page), "%s: %zu bytes, too few",
                     tables[t].name, tables[t].bytes);
        }
        for (uint32_t i = 0; i < n; ++i) {
            cb_character ch;
            assert_int_equal(cb_crowd_add(c, 0, 0.01f * (float)(i % 100), &ch), CB_OK);
        }
        for (uint32_t f = 0; f < 2; ++f) {
            write_params(c, f, n);
            assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f), CB_OK);
        }
        int advised_outputs = 0;
        for (size_t t = 0; t < sizeof tables / sizeof tables[0]; ++t) {
            const bool huge = !hooked && tables[t].output && tables[t].bytes >= large;
            const unsigned char *last = (const unsigned char *)tables[t].ptr + tables[t].bytes - 1;
            CB_CHECK(cb_is_aligned(tables[t].ptr, huge ? page : 64),
                     "%s: %zu bytes at %p, hooks %d", tables[t].name, tables[t].bytes,
                     tables[t].ptr, hooked);
            if (hooked) {
                CB_CHECK((const unsigned char *)tables[t].ptr >= b.base && last < b.base + b.used,
                         "%s: not from the hooks", tables[t].name);
            }
            int advised = cb_test_huge_advised(tables[t].ptr, NULL);
            /* Where malloc advises its own blocks (glibc.malloc.hugetlb=1), an unadvised table
             * cannot be told from one crowdblend left alone: only the outputs are checked. */
            if (advised >= 0 && (huge || !libc_advises)) {
                CB_CHECK(advised == huge, "%s (%zu bytes, hooks %d): advised %d", tables[t].name,
                         tables[t].bytes, hooked, advised);
                advised_outputs += huge && advised;
            }
        }
        if (!hooked) {
            long kb = -1;
            cb_test_huge_advised(k->matrices, &kb);
            cb_test_note("%u characters: %d outputs advised as huge pages; the matrices' mapping "
                         "holds %ld KB of them (-1: not known here)",
                         n, advised_outputs, kb);
        }
        hash[hooked] = cb_crowd_output_hash(c);
        cb_crowd_destroy(c);
    }
    assert_true(b.allocs > 0);
    assert_int_equal(b.frees, b.allocs);
    CB_CHECK(b.max_align <= 64, "the hooks were asked for %zu-byte alignment", b.max_align);
    CB_CHECK(hash[0] == hash[1],
             "outputs differ: %016llx with the library's memory, %016llx "
             "with the host's",
             (unsigned long long)hash[0], (unsigned long long)hash[1]);
    free(b.base);
    free(binds);
}

/* ------------------------------------------------------------------------------------------ */
/* Time sync and root motion against the clips' own figures.                                  */

/* A crowd of one character of graphs[0], on one thread, at phase 0. */
static cb_crowd *one_character(const cb_graph *const *graphs)
{
    cb_crowd_desc d = graph_desc(1, graphs);
    d.thread_count = 1;
    cb_crowd *c = NULL;
    assert_int_equal(cb_crowd_create(&d, &c, NULL), CB_OK);
    cb_character ch;
    assert_int_equal(cb_crowd_add(c, 0, 0.0f, &ch), CB_OK);
    return c;
}

/* A character exactly on one node plays that clip alone: its phase advances by dt / duration
 * and a full cycle of root motion adds up to the clip's displacement. */
static void crowd_single_clip_root_motion_matches_the_clip(void **state)
{
    (void)state;
    const cb_clip *walk = cb_embedded_find_clip(set, "walk_fr");
    cb_clip_root_motion rm = cb_clip_query_root_motion(walk);
    cb_crowd *c = one_character(bare_list);
    cb_crowd_param_column(c, 0, 0)[0] = -rm.right_mps; /* blend_0 is +X, the left */
    cb_crowd_param_column(c, 0, 1)[0] = rm.forward_mps;
    const float dur = cb_clip_duration(walk);
    const int steps = 100;
    double total[3] = {0, 0, 0};
    for (int s = 0; s < steps; ++s) {
        assert_int_equal(cb_crowd_update(c, dur / steps), CB_OK);
        size_t stride;
        const float *w = cb_crowd_weights(c, 0, &stride);
        CB_CHECK(fabsf(w[8 * stride] - 1.0f) < 1e-5f, "on the walk_fr node its weight is %g",
                 (double)w[8 * stride]);
        /* Deltas are in the frame at the start of the step; the clip's heading does not turn,
         * so they add up directly. */
        for (int e = 0; e < 3; ++e) {
            total[e] += cb_crowd_root_motion(c, 0)[0].translation[e];
        }
    }
    /* The clips of the blend space share one sync group: any of them holds its time. */
    float phase = cb_crowd_clip_times(c, 0, 8)[0];
    CB_CHECK(fminf(phase, 1.0f - phase) < 1e-4f, "a full cycle ended at phase %g", (double)phase);
    for (int e = 0; e < 3; ++e) {
        CB_CHECK(fabs(total[e] - rm.displacement[e]) < 1e-3 * (1.0 + fabs(rm.displacement[e])),
                 "axis %d: crowd moved %.5f m over one cycle, the clip says %.5f", e, total[e],
                 (double)rm.displacement[e]);
    }
    cb_crowd_destroy(c);
}

/* Between a walk and a run node the phase advances at the weight-averaged duration. */
static void crowd_phase_advances_at_the_weight_averaged_duration(void **state)
{
    (void)state;
    cb_crowd_desc d = base_desc(1);
    d.thread_count = 1;
    cb_crowd *c = NULL;
    assert_int_equal(cb_crowd_create(&d, &c, NULL), CB_OK);
    cb_character ch;
    assert_int_equal(cb_crowd_add(c, 0, 0.25f, &ch), CB_OK);
    cb_clip_root_motion walk = cb_clip_query_root_motion(clips[1]);
    cb_clip_root_motion run = cb_clip_query_root_motion(clips[9]);
    cb_crowd_param_column(c, 0, 0)[0] = -0.5f * (walk.right_mps + run.right_mps); /* +X: left */
    cb_crowd_param_column(c, 0, 1)[0] = 0.5f * (walk.forward_mps + run.forward_mps);
    const float dt = 0.01f;
    assert_int_equal(cb_crowd_update(c, dt), CB_OK);
    size_t stride;
    const float *w = cb_crowd_weights(c, 0, &stride);
    double wsum = 0, dsum = 0;
    for (int k = 0; k < 17; ++k) {
        if (w[k * stride] > CB_BLEND_WEIGHT_EPSILON) {
            wsum += w[k * stride];
            dsum += w[k * stride] * cb_clip_duration(clips[k]);
        }
    }
    double want = 0.25 + dt * wsum / dsum;
    CB_CHECK(fabs(cb_crowd_clip_times(c, 0, 1)[0] - want) < 1e-6, "phase %.7f, want %.7f",
             (double)cb_crowd_clip_times(c, 0, 1)[0], want);
    CB_CHECK(w[1 * stride] > 0.2f && w[9 * stride] > 0.2f, "midway: walk %g run %g",
             (double)w[stride], (double)w[9 * stride]);
    cb_crowd_destroy(c);
}

/* A character between idle and walk_f, its parameters fixed, stepped through `cycles` cycles
 * of the walk as sync says it plays: its own duration when idle is apart (MOVING), idle's and
 * its weight-averaged duration when they share the group (ALL). The walk's phase must be back
 * at 0 then (it played at that rate), and the root's forward displacement must be the closed
 * form: the walk did `cycles` cycles at its weight, idle (no root motion) none, so w_walk x
 * cycles x the walk's displacement (root motion is the weighted mean of the clips' deltas). */
static void idle_walk_cycles(cb_graph_blend_sync sync, int cycles)
{
    cb_graph_blend_desc bd = blend_desc(false);
    bd.sync = sync;
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_create_blend(&bd, &g, &err) == CB_OK, "blend graph: %s", err.message);
    const cb_graph *list[1] = {g};
    cb_crowd *c = one_character(list);
    const cb_clip *walk = clips[1];
    cb_clip_root_motion rm = cb_clip_query_root_motion(walk);
    cb_crowd_param_column(c, 0, 0)[0] = 0.0f;
    cb_crowd_param_column(c, 0, 1)[0] = 0.4f * rm.forward_mps;
    /* One step to read the weights (they stay: the parameters do), then the walk's phase is
     * stepped to whole cycles: dt from the group's own cycle, idle's 3 s and the walk's
     * weight-averaged when they share it. */
    assert_int_equal(cb_crowd_update(c, 0.0f), CB_OK);
    size_t stride;
    const float *w = cb_crowd_weights(c, 0, &stride);
    double w_idle = w[0], w_walk = w[stride], rest = 0.0;
    for (int k = 2; k < 17; ++k) {
        rest += w[k * stride];
    }
    CB_CHECK(w_idle > 0.3 && w_walk > 0.3 && rest < 1e-6, "idle %g walk %g others %g", w_idle,
             w_walk, rest);
    double cycle = sync == CB_GRAPH_BLEND_SYNC_MOVING
                       ? cb_clip_duration(walk)
                       : (w_idle * cb_clip_duration(clips[0]) + w_walk * cb_clip_duration(walk)) /
                             (w_idle + w_walk);
    const int steps = 60;
    double forward = 0.0;
    for (int s = 0; s < steps * cycles; ++s) {
        assert_int_equal(cb_crowd_update(c, (float)(cycle / steps)), CB_OK);
        forward += cb_crowd_root_motion(c, 0)[0].translation[2];
    }
    float phase = cb_crowd_clip_times(c, 0, 1)[0];
    CB_CHECK(fminf(phase, 1.0f - phase) < 1e-3f, "the walk ended %d cycles at phase %g", cycles,
             (double)phase);
    double want = w_walk / (w_idle + w_walk) * cycles * rm.displacement[2];
    CB_CHECK(fabs(forward - want) < 2e-3 * fabs(want), "forward %.5f m after %d cycles, want %.5f",
             forward, cycles, want);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
}

/* CB_GRAPH_BLEND_SYNC_MOVING keeps idle out of the walk's group: the walk plays at its own
 * rate, so the root covers the same distance in the walk's own cycles, where the shared group
 * (the default) takes idle's weighted share longer for it. */
static void crowd_in_place_clips_apart_keep_the_walk_at_its_rate(void **state)
{
    (void)state;
    idle_walk_cycles(CB_GRAPH_BLEND_SYNC_MOVING, 4);
    idle_walk_cycles(CB_GRAPH_BLEND_SYNC_ALL, 4);
    cb_graph_blend_desc bd = blend_desc(false);
    bd.sync = _CB_GRAPH_BLEND_SYNC_COUNT;
    cb_graph *g = NULL;
    cb_error err = {0};
    assert_int_equal(cb_graph_create_blend(&bd, &g, &err), CB_ERR_INVALID_ARGUMENT);
    CB_CHECK(strstr(err.message, "sync") != NULL, "%s", err.message);
    assert_null(g);
    /* Idle alone moves nothing: with MOVING no clip would keep in step, so it is refused. */
    bd.sync = CB_GRAPH_BLEND_SYNC_MOVING;
    bd.clip_count = 1;
    assert_int_equal(cb_graph_create_blend(&bd, &g, &err), CB_ERR_INVALID_ARGUMENT);
    CB_CHECK(strstr(err.message, "no clip moves its root") != NULL, "%s", err.message);
    assert_null(g);
}

/* ------------------------------------------------------------------------------------------ */
/* Root motion left out                                                                       */

/* A copy of an embedded clip with the same stored pose frames and no root track. */
static cb_clip *still_copy(const cb_clip *src)
{
    size_t floats = cb_clip_frame_count(src) * cb_clip_joint_count(src) * cb_clip_frame_stride(src);
    float *frames = malloc(floats * sizeof *frames);
    assert_non_null(frames);
    assert_int_equal(cb_clip_read_frames(src, (cb_float_span){frames, floats}), CB_OK);
    cb_clip_frames_desc d = {
        .name = cb_clip_name(src),
        .skeleton = cb_embedded_skeleton(set),
        .duration_s = cb_clip_duration(src),
        .frame_count = cb_clip_frame_count(src),
        .has_scale = cb_clip_frame_stride(src) == 10,
        .frames = {frames, floats},
        .root_motion = CB_ROOT_MOTION_NONE,
    };
    cb_clip *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_clip_create_from_frames(&d, &c, &err) == CB_OK, "still copy: %s", err.message);
    free(frames);
    return c;
}

/* W1's graph: a DIRECT blend of three clips. */
static cb_graph *direct_graph(const cb_clip *const *three)
{
    cb_graph_blend_desc d = {
        .skeleton = cb_embedded_skeleton(set), .clips = three, .clip_count = 3};
    d.solver.kind = CB_SOLVER_KIND_DIRECT;
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_create_blend(&d, &g, &err) == CB_OK, "direct graph: %s", err.message);
    return g;
}

enum { STILL_N = 150, STILL_FRAMES = 40 };

/* Runs a crowd of graph g for STILL_FRAMES frames with weights that change per character and
 * frame; its matrices into m, its summed |root motion| into *motion. */
static void run_still(const cb_graph *g, bool skip, float *m, double *motion)
{
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc d = graph_desc(STILL_N, graphs);
    d.thread_count = 2;
    d.batch_size = 32;
    d.skip_root_motion = skip;
    cb_crowd *c = NULL;
    assert_int_equal(cb_crowd_create(&d, &c, NULL), CB_OK);
    for (uint32_t i = 0; i < STILL_N; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, (float)i * 0.0173f, &ch), CB_OK);
    }
    *motion = 0.0;
    for (uint32_t f = 0; f < STILL_FRAMES; ++f) {
        for (uint32_t k = 0; k < 3; ++k) {
            char name[32];
            snprintf(name, sizeof name, CB_GRAPH_BLEND_PARAM_PREFIX "%u", k);
            float *w = cb_crowd_param_column(c, 0, param(c, name));
            for (uint32_t i = 0; i < STILL_N; ++i) {
                w[i] = 0.5f + 0.5f * sinf(0.7f * (float)(i + 3 * k) + 0.13f * (float)f);
            }
        }
        assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f + 0.002f * (float)(f % 4)), CB_OK);
        const cb_root_delta *rm = cb_crowd_root_motion(c, 0);
        assert_non_null(rm);
        for (uint32_t i = 0; i < STILL_N; ++i) {
            *motion += fabs(rm[i].translation[0]) + fabs(rm[i].translation[1]) +
                       fabs(rm[i].translation[2]) + fabs(rm[i].yaw);
        }
    }
    size_t per = (size_t)cb_crowd_joint_count(c) * 16; /* 4x4, the default layout */
    for (uint32_t i = 0; i < STILL_N; ++i) {
        memcpy(m + i * per, cb_crowd_matrices(c, 0, i), per * sizeof(float));
    }
    cb_crowd_destroy(c);
}

/* Root motion is left out where a graph's clips have none (decided when the graph is built) and
 * where the host asks (desc.skip_root_motion): the poses are the bits the crowd gives with root
 * motion computed, the deltas are zero; where clips have root motion and the host keeps it, the
 * deltas move the characters (their values: crowd_single_clip_root_motion_matches_the_clip). */
static void crowd_root_motion_is_skipped_without_changing_poses(void **state)
{
    (void)state;
    const cb_clip *moving[3] = {clips[1], clips[9], clips[8]}; /* walk_f, run_f, walk_fr */
    cb_clip *still[3];
    for (int k = 0; k < 3; ++k) {
        still[k] = still_copy(moving[k]);
    }
    const cb_clip *still_c[3] = {still[0], still[1], still[2]};
    cb_graph *gm = direct_graph(moving), *gs = direct_graph(still_c);
    assert_true(gm->moves_root);
    assert_false(gs->moves_root);
    size_t floats = (size_t)STILL_N * cb_skeleton_joint_count(cb_embedded_skeleton(set)) * 16;
    float *ref = malloc(floats * sizeof(float)), *got = malloc(floats * sizeof(float));
    assert_true(ref != NULL && got != NULL);
    double motion;
    /* The reference: root motion computed from the clips' tracks. */
    run_still(gm, false, ref, &motion);
    CB_CHECK(motion > 1.0, "walking clips moved the crowd by only %g", motion);
    /* The host left it out. */
    run_still(gm, true, got, &motion);
    assert_true(motion == 0.0);
    assert_memory_equal(got, ref, floats * sizeof(float));
    /* The clips have none: skipped by the graph. */
    run_still(gs, false, got, &motion);
    assert_true(motion == 0.0);
    assert_memory_equal(got, ref, floats * sizeof(float));
    /* The same graph with the skip defeated: root motion computed over clips without it. */
    gs->moves_root = true;
    run_still(gs, false, got, &motion);
    assert_true(motion == 0.0);
    assert_memory_equal(got, ref, floats * sizeof(float));
    free(ref);
    free(got);
    cb_graph_destroy(gm);
    cb_graph_destroy(gs);
    for (int k = 0; k < 3; ++k) {
        cb_clip_destroy(still[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crowd_desc_defaults),
        cmocka_unit_test(crowd_create_validity_table),
        cmocka_unit_test(crowd_blend_graph_validity_table),
        cmocka_unit_test(crowd_bad_input_is_refused_and_counted),
        cmocka_unit_test(crowd_output_is_bit_identical_across_threads_and_batches),
        cmocka_unit_test(crowd_streamed_output_is_bit_identical),
        cmocka_unit_test(crowd_update_range_matches_update),
        cmocka_unit_test(crowd_flat_path_matches_general_path),
        cmocka_unit_test(crowd_views_match_own_columns),
        cmocka_unit_test(crowd_update_does_not_allocate),
        cmocka_unit_test(crowd_large_outputs_take_huge_pages_without_hooks),
        cmocka_unit_test(crowd_single_clip_root_motion_matches_the_clip),
        cmocka_unit_test(crowd_in_place_clips_apart_keep_the_walk_at_its_rate),
        cmocka_unit_test(crowd_phase_advances_at_the_weight_averaged_duration),
        cmocka_unit_test(crowd_root_motion_is_skipped_without_changing_poses),
    };
    if (setup_set(NULL) != 0) {
        fprintf(stderr, "the embedded set could not be built\n");
        return 1;
    }
    int failed = CB_RUN_TESTS(tests);
    teardown_set(NULL);
    return failed;
}
