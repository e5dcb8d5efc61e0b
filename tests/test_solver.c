/* solver: the desc and its defaults, every create error, the evaluate and job contracts
 * (argument checks, nothing written on failure, bit-identical results whatever the batch,
 * non-finite and far queries, no allocation, concurrent use), the documented per-method rules,
 * and the exact-predicate triangulation. Accuracy is in test_solver_accuracy.c, the blend
 * criteria in test_solver_property.c. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/solver.h"
#include "layouts.h"
#include "solvers/solver_impl.h"
#include "test_util.h"

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A standard layout for each kind, so that every contract test covers every method. */
typedef struct kind_case {
    cb_solver_desc desc;
    float nodes[2 * 20];
} kind_case;

static void make_case(kind_case *kc, cb_solver_kind kind)
{
    kind_case k;
    memset(&k, 0, sizeof k);
    int m;
    if (kind == CB_SOLVER_KIND_LINEAR_1D) {
        static const float t[] = {-1.0f, 0.0f, 0.5f, 0.5f, 2.0f};
        memcpy(k.nodes, t, sizeof t);
        m = 5;
    } else if (kind == CB_SOLVER_KIND_BILINEAR_2D) {
        cb_prng r = cb_prng_seed(7);
        m = layout_grid(&r, 3, 4, k.nodes);
    } else if (kind == CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D) {
        m = layout_standard8(k.nodes);
    } else {
        m = layout_locomotion17(k.nodes);
    }
    k.desc = (cb_solver_desc){.kind = kind,
                              .nodes = kind == CB_SOLVER_KIND_DIRECT ? NULL : k.nodes,
                              .node_count = (uint32_t)m};
    if (kind == CB_SOLVER_KIND_DIRECT) {
        k.desc.node_count = 6;
    }
    *kc = k;
    /* The desc points into the struct: fix it up after the copy. */
    kc->desc.nodes = kind == CB_SOLVER_KIND_DIRECT ? NULL : kc->nodes;
}

static cb_solver *create_ok(const cb_solver_desc *d)
{
    cb_solver *s = NULL;
    cb_error err = {0};
    cb_result r = cb_solver_create(d, &s, &err);
    CB_CHECK(r == CB_OK, "create %s: %s", cb_solver_kind_name(d->kind), err.message);
    return s;
}

/* Random query columns in a disc of twice the layout radius, with some NaN, Inf and far
 * queries sprinkled in. */
static void fill_queries(cb_prng *r, const cb_solver *s, float cols[][512], size_t n, float rad)
{
    size_t np = cb_solver_param_count(s);
    for (size_t c = 0; c < n; ++c) {
        for (size_t k = 0; k < np; ++k) {
            cols[k][c] = cb_prng_range(r, -2.0f * rad, 2.0f * rad);
        }
        switch (c % 13) {
        case 3:
            cols[0][c] = NAN;
            break;
        case 7:
            cols[np - 1][c] = -INFINITY;
            break;
        case 11:
            cols[0][c] = 1e25f;
            break;
        default:
            break;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Desc, names, create errors                                                                  */

static void solver_query_desc_defaults(void **state)
{
    (void)state;
    cb_solver_desc d = cb_solver_query_desc(NULL);
    assert_int_equal(d.kind, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D);
    assert_int_equal(d.dimension, 2);
    assert_true(d.idw_power == 2.0f);
    assert_int_equal(d.knn_k, 4);
    assert_int_equal(d.rbf_kernel, CB_RBF_KERNEL_THIN_PLATE);
    assert_true(d.rbf_epsilon == 0.0f);
    assert_int_equal(d.grid_nx, 0);
    assert_int_equal(d.grid_ny, 0);
    assert_null(d.allocator.alloc_fn);

    cb_solver_desc one = {.kind = CB_SOLVER_KIND_LINEAR_1D};
    assert_int_equal(cb_solver_query_desc(&one).dimension, 1);
    cb_solver_desc set = {.kind = CB_SOLVER_KIND_RBF,
                          .dimension = 1,
                          .idw_power = 3.0f,
                          .knn_k = 7,
                          .rbf_kernel = CB_RBF_KERNEL_GAUSSIAN,
                          .rbf_epsilon = 2.0f};
    cb_solver_desc q = cb_solver_query_desc(&set);
    assert_int_equal(q.dimension, 1);
    assert_true(q.idw_power == 3.0f);
    assert_int_equal(q.knn_k, 7);
    assert_int_equal(q.rbf_kernel, CB_RBF_KERNEL_GAUSSIAN);
    assert_true(q.rbf_epsilon == 2.0f);
}

static void solver_kind_names_round_trip(void **state)
{
    (void)state;
    static const char *const names[] = {"linear_1d",
                                        "simple_directional_2d",
                                        "freeform_directional_2d",
                                        "freeform_cartesian_2d",
                                        "delaunay_2d",
                                        "bilinear_2d",
                                        "direct",
                                        "idw",
                                        "knn_idw",
                                        "rbf",
                                        "natural_neighbor_2d"};
    assert_int_equal(sizeof names / sizeof names[0], _CB_SOLVER_KIND_COUNT - 1);
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        assert_string_equal(cb_solver_kind_name((cb_solver_kind)k), names[k - 1]);
        cb_solver_kind back = _CB_SOLVER_KIND_DEFAULT;
        assert_int_equal(cb_solver_kind_from_name(names[k - 1], &back), CB_OK);
        assert_int_equal(back, k);
    }
    cb_solver_kind untouched = CB_SOLVER_KIND_RBF;
    assert_int_equal(cb_solver_kind_from_name("Linear_1D", &untouched), CB_ERR_NOT_FOUND);
    assert_int_equal(cb_solver_kind_from_name("", &untouched), CB_ERR_NOT_FOUND);
    assert_int_equal(untouched, CB_SOLVER_KIND_RBF);
    assert_int_equal(cb_solver_kind_from_name(NULL, &untouched), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_solver_kind_from_name("idw", NULL), CB_ERR_NULL_ARGUMENT);
    assert_null(cb_solver_kind_name(_CB_SOLVER_KIND_DEFAULT));
    assert_null(cb_solver_kind_name(_CB_SOLVER_KIND_COUNT));

    static const char *const kernels[] = {"thin_plate", "cubic", "linear", "gaussian"};
    for (int k = 1; k < CB_RBF_KERNEL_COUNT; ++k) {
        assert_string_equal(cb_rbf_kernel_name((cb_rbf_kernel)k), kernels[k - 1]);
        cb_rbf_kernel back = _CB_RBF_KERNEL_DEFAULT;
        assert_int_equal(cb_rbf_kernel_from_name(kernels[k - 1], &back), CB_OK);
        assert_int_equal(back, k);
    }
    cb_rbf_kernel kr;
    assert_int_equal(cb_rbf_kernel_from_name("quintic", &kr), CB_ERR_NOT_FOUND);
    assert_int_equal(cb_rbf_kernel_from_name(NULL, &kr), CB_ERR_NULL_ARGUMENT);
    assert_null(cb_rbf_kernel_name(CB_RBF_KERNEL_COUNT));
}

/* Counts allocations and frees; can be told to fail from the n-th allocation on. */
typedef struct counting {
    int allocs, frees, fail_from;
    size_t live_bytes;
} counting;

static void *count_alloc(size_t size, size_t align, void *user)
{
    counting *c = user;
    if (c->fail_from > 0 && c->allocs + 1 >= c->fail_from) {
        return NULL;
    }
    c->allocs++;
    c->live_bytes += size;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void count_free(void *p, size_t size, void *user)
{
    counting *c = user;
    c->frees++;
    c->live_bytes -= size;
    free(p);
}

typedef struct bad_case {
    const char *what;
    cb_solver_desc desc;
    cb_result want;
} bad_case;

static void solver_create_rejects_bad_descs(void **state)
{
    (void)state;
    static const float nan_node[] = {0, 0, NAN, 1, 1, 0};
    static const float inf_node[] = {0, 0, 1, INFINITY, 1, 0};
    static const float big_node[] = {0, 0, 2e6f, 1, 1, 0};
    static const float dup[] = {0, 0, 1, 1, 1, 1};
    static const float near_dup[] = {0, 0, 1, 1, 1.0000001f, 1};
    static const float same_dir[] = {0, 0, 1, 1, 2, 2, -1, 0};
    static const float two_origins[] = {0, 0, 1, 0, 0, 0};
    static const float only_origin[] = {0, 0};
    static const float grid23[] = {0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1};
    static const float off_grid[] = {0, 0, 1, 0, 0, 1, 1, 1.5f};
    static const float decreasing[] = {0, 0, -1, 0, 0, 1, -1, 1};
    static const float ring[] = {0, 0, 1, 0, 0, 1, -1, 0, 0, -1};
    static float many[2 * (CB_SOLVER_MAX_NODES + 1)];
    const cb_solver_kind ff = CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D;
    cb_allocator half = {.alloc_fn = count_alloc};
    const bad_case cases[] = {
        {"start canary",
         {._start_canary = 1, .kind = ff, .nodes = ring, .node_count = 5},
         CB_ERR_CANARY},
        {"end canary",
         {._end_canary = 1, .kind = ff, .nodes = ring, .node_count = 5},
         CB_ERR_CANARY},
        {"half an allocator",
         {.kind = ff, .nodes = ring, .node_count = 5, .allocator = half},
         CB_ERR_ALLOCATOR},
        {"kind out of range",
         {.kind = _CB_SOLVER_KIND_COUNT, .nodes = ring, .node_count = 5},
         CB_ERR_INVALID_ARGUMENT},
        {"dimension 3",
         {.kind = ff, .nodes = ring, .node_count = 5, .dimension = 3},
         CB_ERR_INVALID_ARGUMENT},
        {"1D with 2D nodes",
         {.kind = CB_SOLVER_KIND_LINEAR_1D, .nodes = ring, .node_count = 5, .dimension = 2},
         CB_ERR_INVALID_ARGUMENT},
        {"no nodes", {.kind = ff, .nodes = ring, .node_count = 0}, CB_ERR_TOO_FEW},
        {"too many nodes",
         {.kind = ff, .nodes = many, .node_count = CB_SOLVER_MAX_NODES + 1},
         CB_ERR_TOO_MANY},
        {"NULL nodes", {.kind = ff, .node_count = 3}, CB_ERR_NULL_ARGUMENT},
        {"NaN node", {.kind = ff, .nodes = nan_node, .node_count = 3}, CB_ERR_NOT_FINITE},
        {"Inf node", {.kind = ff, .nodes = inf_node, .node_count = 3}, CB_ERR_NOT_FINITE},
        {"node beyond the limit",
         {.kind = ff, .nodes = big_node, .node_count = 3},
         CB_ERR_INVALID_ARGUMENT},
        {"idw_power NaN",
         {.kind = CB_SOLVER_KIND_IDW, .nodes = ring, .node_count = 5, .idw_power = NAN},
         CB_ERR_NOT_FINITE},
        {"idw_power negative",
         {.kind = CB_SOLVER_KIND_IDW, .nodes = ring, .node_count = 5, .idw_power = -1.0f},
         CB_ERR_INVALID_ARGUMENT},
        {"idw_power huge",
         {.kind = CB_SOLVER_KIND_IDW, .nodes = ring, .node_count = 5, .idw_power = 100.0f},
         CB_ERR_INVALID_ARGUMENT},
        {"knn_k too big",
         {.kind = CB_SOLVER_KIND_KNN_IDW,
          .nodes = ring,
          .node_count = 5,
          .knn_k = CB_SOLVER_MAX_KNN_K + 1},
         CB_ERR_INVALID_ARGUMENT},
        {"kernel out of range",
         {.kind = CB_SOLVER_KIND_RBF,
          .nodes = ring,
          .node_count = 5,
          .rbf_kernel = CB_RBF_KERNEL_COUNT},
         CB_ERR_INVALID_ARGUMENT},
        {"epsilon Inf",
         {.kind = CB_SOLVER_KIND_RBF, .nodes = ring, .node_count = 5, .rbf_epsilon = INFINITY},
         CB_ERR_NOT_FINITE},
        {"epsilon negative",
         {.kind = CB_SOLVER_KIND_RBF, .nodes = ring, .node_count = 5, .rbf_epsilon = -1.0f},
         CB_ERR_INVALID_ARGUMENT},
        {"duplicate nodes", {.kind = ff, .nodes = dup, .node_count = 3}, CB_ERR_DUPLICATE},
        {"nearly duplicate nodes",
         {.kind = CB_SOLVER_KIND_IDW, .nodes = near_dup, .node_count = 3},
         CB_ERR_DUPLICATE},
        {"duplicate on a grid",
         {.kind = CB_SOLVER_KIND_DELAUNAY_2D, .nodes = dup, .node_count = 3},
         CB_ERR_DUPLICATE},
        {"same direction",
         {.kind = CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, .nodes = same_dir, .node_count = 4},
         CB_ERR_DUPLICATE},
        {"two origins (simple)",
         {.kind = CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, .nodes = two_origins, .node_count = 3},
         CB_ERR_DUPLICATE},
        {"two origins (freeform)",
         {.kind = CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, .nodes = two_origins, .node_count = 3},
         CB_ERR_DUPLICATE},
        {"only an origin node",
         {.kind = CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, .nodes = only_origin, .node_count = 1},
         CB_ERR_TOO_FEW},
        {"grid mismatch",
         {.kind = CB_SOLVER_KIND_BILINEAR_2D, .nodes = grid23, .node_count = 6, .grid_nx = 4},
         CB_ERR_MISMATCH},
        {"grid product",
         {.kind = CB_SOLVER_KIND_BILINEAR_2D,
          .nodes = grid23,
          .node_count = 6,
          .grid_nx = 2,
          .grid_ny = 2},
         CB_ERR_MISMATCH},
        {"off the grid",
         {.kind = CB_SOLVER_KIND_BILINEAR_2D, .nodes = off_grid, .node_count = 4, .grid_nx = 2},
         CB_ERR_INVALID_ARGUMENT},
        {"grid x decreasing",
         {.kind = CB_SOLVER_KIND_BILINEAR_2D, .nodes = decreasing, .node_count = 4, .grid_nx = 2},
         CB_ERR_INVALID_ARGUMENT},
        {"singular RBF",
         {.kind = CB_SOLVER_KIND_RBF,
          .nodes = ring,
          .node_count = 5,
          .rbf_kernel = CB_RBF_KERNEL_GAUSSIAN,
          .rbf_epsilon = 1e-9f},
         CB_ERR_DEGENERATE},
    };
    cb_solver *sentinel = (cb_solver *)&many;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cb_solver *s = sentinel;
        cb_error err = {0};
        cb_result r = cb_solver_create(&cases[i].desc, &s, &err);
        CB_CHECK(r == cases[i].want, "%s: got %s, want %s", cases[i].what, cb_result_str(r),
                 cb_result_str(cases[i].want));
        CB_CHECK(err.code == r && err.message[0] != '\0', "%s: no error message", cases[i].what);
        CB_CHECK(s == sentinel, "%s: out was written", cases[i].what);
        cb_test_note("%-24s -> %s", cases[i].what, err.message);
    }
    cb_solver *s = NULL;
    cb_solver_desc ok = {.kind = ff, .nodes = ring, .node_count = 5};
    assert_int_equal(cb_solver_create(NULL, &s, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_solver_create(&ok, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    cb_solver_destroy(NULL);
}

/* The minimal valid desc of every kind creates, and reports its shape. */
static void solver_create_minimal_desc_of_every_kind(void **state)
{
    (void)state;
    static const float one_node[] = {0.5f, -0.25f};
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        cb_solver_desc d = {.kind = (cb_solver_kind)k, .nodes = one_node, .node_count = 1};
        if (k == CB_SOLVER_KIND_LINEAR_1D) {
            d.dimension = 1;
        }
        cb_solver *s = create_ok(&d);
        assert_int_equal(cb_solver_query_kind(s), k);
        assert_int_equal(cb_solver_node_count(s), 1);
        assert_int_equal(cb_solver_param_count(s),
                         k == CB_SOLVER_KIND_LINEAR_1D || k == CB_SOLVER_KIND_DIRECT ? 1 : 2);
        /* One node: every query gives it all the weight (DIRECT: its parameter, if > 0). */
        float q[2] = {3.0f, -7.0f}, w = -1.0f;
        assert_int_equal(cb_solver_evaluate_one(s, q, &w, NULL), CB_OK);
        CB_CHECK(w == 1.0f, "%s with one node: weight %g", cb_solver_kind_name(d.kind), (double)w);
        cb_solver_destroy(s);
    }
    cb_solver_desc zero = {.nodes = one_node, .node_count = 1};
    cb_solver *s = create_ok(&zero);
    assert_int_equal(cb_solver_query_kind(s), CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D);
    cb_solver_destroy(s);
    assert_int_equal(cb_solver_node_count(NULL), 0);
    assert_int_equal(cb_solver_param_count(NULL), 0);
}

/* Every allocation failure during create is reported, and nothing leaks. */
static void solver_create_reports_allocation_failure(void **state)
{
    (void)state;
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        kind_case kc;
        make_case(&kc, (cb_solver_kind)k);
        bool reached_success = false;
        for (int fail = 1; fail < 12 && !reached_success; ++fail) {
            counting c = {0, 0, fail, 0};
            kc.desc.allocator = (cb_allocator){count_alloc, count_free, &c};
            cb_solver *s = NULL;
            cb_error err = {0};
            cb_result r = cb_solver_create(&kc.desc, &s, &err);
            if (r == CB_OK) {
                reached_success = true;
                cb_solver_destroy(s);
            } else {
                CB_CHECK(r == CB_ERR_OUT_OF_MEMORY, "%s, allocation %d failing: %s",
                         cb_solver_kind_name(kc.desc.kind), fail, cb_result_str(r));
            }
            CB_CHECK(c.allocs == c.frees && c.live_bytes == 0, "%s: %d allocs, %d frees",
                     cb_solver_kind_name(kc.desc.kind), c.allocs, c.frees);
        }
        CB_CHECK(reached_success, "%s never succeeded", cb_solver_kind_name(kc.desc.kind));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Evaluate and job contracts                                                                  */

static void solver_evaluate_rejects_bad_arguments(void **state)
{
    (void)state;
    kind_case kc;
    make_case(&kc, CB_SOLVER_KIND_DELAUNAY_2D);
    cb_solver *s = create_ok(&kc.desc);
    size_t m = cb_solver_node_count(s);
    float x[8] = {0}, y[8] = {0};
    static float w[17 * 16];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
        w[i] = -5.0f;
    }
    const float *cols[2] = {x, y}, *half[2] = {x, NULL};
    size_t nf = 99;
    typedef cb_result (*eval_fn)(const cb_solver *, const float *const *, size_t, size_t, float *,
                                 size_t *);
    eval_fn fns[2] = {cb_solver_evaluate, cb_solver_evaluate_ref};
    for (int f = 0; f < 2; ++f) {
        nf = 99;
        assert_int_equal(fns[f](NULL, cols, 8, 8, w, &nf), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(fns[f](s, NULL, 8, 8, w, &nf), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(fns[f](s, half, 8, 8, w, &nf), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(fns[f](s, cols, 8, 8, NULL, &nf), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(fns[f](s, cols, 8, 7, w, &nf), CB_ERR_INVALID_ARGUMENT);
        assert_int_equal(fns[f](s, cols, 8, SIZE_MAX / 2, w, &nf), CB_ERR_INVALID_ARGUMENT);
        assert_int_equal(nf, 99);
        for (size_t i = 0; i < m * 16; ++i) {
            assert_true(w[i] == -5.0f);
        }
        /* count 0 succeeds with anything and reports no non-finite query. */
        assert_int_equal(fns[f](s, NULL, 0, 0, NULL, &nf), CB_OK);
        assert_int_equal(nf, 0);
    }
    float q[2] = {0}, out[17];
    assert_int_equal(cb_solver_evaluate_one(NULL, q, out, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_solver_evaluate_one(s, NULL, out, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_solver_evaluate_one(s, q, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    cb_solver_destroy(s);
}

static void solver_job_validity_table(void **state)
{
    (void)state;
    kind_case kc;
    make_case(&kc, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D);
    cb_solver *s = create_ok(&kc.desc);
    size_t m = cb_solver_node_count(s);
    enum { N = 21 };
    float x[N], y[N];
    cb_prng r = cb_test_prng(__func__);
    for (int i = 0; i < N; ++i) {
        x[i] = cb_prng_range(&r, -4, 4), y[i] = cb_prng_range(&r, -4, 4);
    }
    static float w[17 * 32], want[17 * 32];
    cb_float_cspan spans[2] = {{x, N}, {y, N}}, short_span[2] = {{x, N}, {y, N - 1}};
    cb_float_cspan null_span[2] = {{x, N}, {NULL, N}};
    size_t nf = 0;
    cb_solver_job ok = {s, spans, 2, N, {w, (m - 1) * 32 + N}, 32, &nf};
    cb_solver_job zero = {0};
    assert_int_equal(cb_solver_job_validate(&zero, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_solver_job_validate(NULL, NULL), CB_ERR_NULL_ARGUMENT);
    cb_solver_job j = ok;
    j.params = NULL;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_NULL_ARGUMENT);
    j = ok, j.params = null_span;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_NULL_ARGUMENT);
    j = ok, j.weights.ptr = NULL;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_NULL_ARGUMENT);
    j = ok, j.param_count = 1;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_MISMATCH);
    /* The error names the field at fault. */
    cb_error e = {0};
    assert_int_equal(cb_solver_job_validate(&j, &e), CB_ERR_MISMATCH);
    assert_int_equal(e.code, CB_ERR_MISMATCH);
    assert_non_null(strstr(e.message, "param_count"));
    j = ok, j.params = short_span;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_SPAN_TOO_SHORT);
    j = ok, j.weights.count -= 1;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_SPAN_TOO_SHORT);
    j = ok, j.stride = N - 1;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_INVALID_ARGUMENT);
    j = ok, j.stride = SIZE_MAX / 4;
    assert_int_equal(cb_solver_job_validate(&j, NULL), CB_ERR_INVALID_ARGUMENT);
    /* A failing run writes nothing. */
    for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
        w[i] = -5.0f;
    }
    j = ok, j.weights.count -= 1;
    assert_int_equal(cb_solver_job_run(&j, NULL), CB_ERR_SPAN_TOO_SHORT);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
        assert_true(w[i] == -5.0f);
    }
    /* The minimal valid job equals evaluate; stride 0 means count. */
    assert_int_equal(cb_solver_job_validate(&ok, NULL), CB_OK);
    assert_int_equal(cb_solver_job_run(&ok, NULL), CB_OK);
    const float *cols[2] = {x, y};
    assert_int_equal(cb_solver_evaluate(s, cols, N, 32, want, NULL), CB_OK);
    for (size_t i = 0; i < m; ++i) {
        for (size_t c = 0; c < N; ++c) {
            assert_true(same_bits(w[i * 32 + c], want[i * 32 + c]));
        }
    }
    cb_solver_job tight = {s, spans, 2, N, {w, m * N}, 0, NULL};
    assert_int_equal(cb_solver_job_run(&tight, NULL), CB_OK);
    for (size_t i = 0; i < m; ++i) {
        for (size_t c = 0; c < N; ++c) {
            assert_true(same_bits(w[i * N + c], want[i * 32 + c]));
        }
    }
    cb_solver_job empty = {s, spans, 2, 0, {w, 1}, 0, &nf};
    nf = 5;
    assert_int_equal(cb_solver_job_run(&empty, NULL), CB_OK);
    assert_int_equal(nf, 0);
    cb_solver_destroy(s);
}

/* A character's weights do not depend on the batch: any count, any start, any stride, with the
 * columns around the batch poisoned with NaN (a read outside the batch would be counted as a
 * non-finite query) and the output around it left untouched. Both paths. */
static void solver_bit_identical_for_any_batch(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { MAXN = 3 * CB_W + 5, POOL = 512 };
    static float cols[CB_SOLVER_MAX_NODES][512], poisoned[CB_SOLVER_MAX_NODES][512];
    static float full[20 * POOL], part[20 * (POOL + 8)];
    const float sentinel = -12345.0f;
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        kind_case kc;
        make_case(&kc, (cb_solver_kind)k);
        cb_solver *s = create_ok(&kc.desc);
        size_t m = cb_solver_node_count(s), np = cb_solver_param_count(s);
        fill_queries(&r, s, cols, MAXN + 8, 4.0f);
        for (int path = 0; path < 2; ++path) {
            cb_result (*eval)(const cb_solver *, const float *const *, size_t, size_t, float *,
                              size_t *) = path ? cb_solver_evaluate_ref : cb_solver_evaluate;
            const float *all[CB_SOLVER_MAX_NODES];
            for (size_t p = 0; p < np; ++p) {
                all[p] = cols[p];
            }
            assert_int_equal(eval(s, all, MAXN + 8, POOL, full, NULL), CB_OK);
            for (size_t off = 0; off < 3; ++off) {
                for (size_t n = 1; n + off <= MAXN; n += n < 2 * CB_W + 2 ? 1 : 3) {
                    size_t stride = n + (n % 3);
                    const float *sub[CB_SOLVER_MAX_NODES];
                    size_t want_nf = 0;
                    for (size_t c = 0; c < MAXN + 8; ++c) {
                        bool in = c >= off && c < off + n, finite = true;
                        for (size_t p = 0; p < np; ++p) {
                            poisoned[p][c] = in ? cols[p][c] : NAN;
                            finite = finite && isfinite(cols[p][c]);
                        }
                        want_nf += in && !finite;
                    }
                    for (size_t p = 0; p < np; ++p) {
                        sub[p] = poisoned[p] + off;
                    }
                    for (size_t i = 0; i < m * stride + 8; ++i) {
                        part[i] = sentinel;
                    }
                    size_t nf = 0;
                    assert_int_equal(eval(s, sub, n, stride, part, &nf), CB_OK);
                    CB_CHECK(nf == want_nf, "%s path %d n %zu off %zu: %zu non-finite, want %zu",
                             cb_solver_kind_name(kc.desc.kind), path, n, off, nf, want_nf);
                    for (size_t i = 0; i < m; ++i) {
                        for (size_t c = 0; c < stride; ++c) {
                            float got = part[i * stride + c];
                            float want = c < n ? full[i * POOL + off + c] : sentinel;
                            CB_CHECK(same_bits(got, want),
                                     "%s path %d n %zu off %zu stride %zu: node %zu char %zu: %g "
                                     "vs %g",
                                     cb_solver_kind_name(kc.desc.kind), path, n, off, stride, i, c,
                                     (double)got, (double)want);
                        }
                    }
                    for (size_t i = m * stride; i < m * stride + 8; ++i) {
                        assert_true(same_bits(part[i], sentinel));
                    }
                }
            }
        }
        cb_solver_destroy(s);
    }
}

/* The single-query convenience equals the scalar batch path, bit for bit. */
static void solver_evaluate_one_matches_scalar_batch(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static float cols[CB_SOLVER_MAX_NODES][512], w[20 * 64];
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        kind_case kc;
        make_case(&kc, (cb_solver_kind)k);
        cb_solver *s = create_ok(&kc.desc);
        size_t m = cb_solver_node_count(s), np = cb_solver_param_count(s);
        fill_queries(&r, s, cols, 64, 4.0f);
        const float *all[CB_SOLVER_MAX_NODES];
        for (size_t p = 0; p < np; ++p) {
            all[p] = cols[p];
        }
        assert_int_equal(cb_solver_evaluate_ref(s, all, 64, 64, w, NULL), CB_OK);
        for (size_t c = 0; c < 64; ++c) {
            float q[CB_SOLVER_MAX_NODES], one[CB_SOLVER_MAX_NODES];
            bool finite = true, nonfinite = false;
            for (size_t p = 0; p < np; ++p) {
                q[p] = cols[p][c];
                finite = finite && isfinite(q[p]);
            }
            assert_int_equal(cb_solver_evaluate_one(s, q, one, &nonfinite), CB_OK);
            assert_true(nonfinite == !finite);
            for (size_t i = 0; i < m; ++i) {
                assert_true(same_bits(one[i], w[i * 64 + c]));
            }
        }
        cb_solver_destroy(s);
    }
}

/* Direct weights are quotients w / sum at any scale: a subnormal sum (issue 11, finding 13:
 * {0, 1e-40, 0} gave {1, 1, 1} through an infinite reciprocal) gives the exact shares, on the
 * SIMD path (full blocks and tails), the scalar path and one query at a time. */
static void solver_direct_weights_survive_subnormal_sums(void **state)
{
    (void)state;
    cb_solver_desc d = {.kind = CB_SOLVER_KIND_DIRECT, .node_count = 3};
    cb_solver *s = create_ok(&d);
    static const float rows[][3] = {{0.0f, 1e-40f, 0.0f},
                                    {1e-40f, 3e-40f, 0.0f},
                                    {1e-45f, 0.0f, 1e-45f},
                                    {3e38f, 3e38f, 3e38f}};
    enum { N = 3 * CB_W + 1 }; /* full blocks and a tail */
    float p[3][N], w[3 * N];
    const float *cols[3] = {p[0], p[1], p[2]};
    for (size_t row = 0; row < sizeof rows / sizeof rows[0]; ++row) {
        /* The shares of the stored floats, in double (1e-40 is stored as 71362 x 2^-149). */
        double want[1][3], sum = 0.0;
        for (int k = 0; k < 3; ++k) {
            sum += rows[row][k];
        }
        for (int k = 0; k < 3; ++k) {
            want[0][k] = rows[row][k] / sum;
            for (int c = 0; c < N; ++c) {
                p[k][c] = rows[row][k];
            }
        }
        for (int path = 0; path < 2; ++path) {
            assert_int_equal(
                (path ? cb_solver_evaluate_ref : cb_solver_evaluate)(s, cols, N, N, w, NULL),
                CB_OK);
            for (int k = 0; k < 3; ++k) {
                for (int c = 0; c < N; ++c) {
                    CB_CHECK(fabs(w[k * N + c] - want[0][k]) <= 1e-7,
                             "row %zu path %d node %d query %d: %g, want %g", row, path, k, c,
                             (double)w[k * N + c], want[0][k]);
                }
            }
        }
        float one[3];
        assert_int_equal(cb_solver_evaluate_one(s, rows[row], one, NULL), CB_OK);
        for (int k = 0; k < 3; ++k) {
            CB_CHECK(fabs(one[k] - want[0][k]) <= 1e-7, "row %zu one node %d: %g", row, k,
                     (double)one[k]);
        }
    }
    cb_solver_destroy(s);
}

/* A query with a NaN or infinite parameter gets the weights of the origin (every parameter 0),
 * on both paths, and is counted. */
static void solver_nonfinite_queries_use_the_origin(void **state)
{
    (void)state;
    static const float bad[] = {NAN, -NAN, INFINITY, -INFINITY};
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        kind_case kc;
        make_case(&kc, (cb_solver_kind)k);
        cb_solver *s = create_ok(&kc.desc);
        size_t m = cb_solver_node_count(s), np = cb_solver_param_count(s);
        for (int path = 0; path < 2; ++path) {
            static float cols[CB_SOLVER_MAX_NODES][8];
            const float *all[CB_SOLVER_MAX_NODES];
            for (size_t p = 0; p < np; ++p) {
                for (int c = 0; c < 8; ++c) {
                    /* Query 0 is the origin, queries 1..7 each have one bad parameter. */
                    cols[p][c] = c > 0 && (size_t)(c - 1) % np == p ? bad[(c - 1) % 4] : 0.0f;
                }
                all[p] = cols[p];
            }
            float w[20 * 8];
            size_t nf = 0;
            assert_int_equal(
                (path ? cb_solver_evaluate_ref : cb_solver_evaluate)(s, all, 8, 8, w, &nf), CB_OK);
            assert_int_equal(nf, 7);
            for (size_t i = 0; i < m; ++i) {
                for (int c = 1; c < 8; ++c) {
                    CB_CHECK(same_bits(w[i * 8 + c], w[i * 8]), "%s path %d node %zu query %d",
                             cb_solver_kind_name(kc.desc.kind), path, i, c);
                }
            }
        }
        cb_solver_destroy(s);
    }
}

/* Queries far away are pulled in towards the layout along their line: the weights at 1e30 are
 * those at 1000 layout sizes in the same direction, valid and finite. */
static void solver_far_queries_are_pulled_in(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        if (k == CB_SOLVER_KIND_DIRECT) {
            continue;
        }
        kind_case kc;
        make_case(&kc, (cb_solver_kind)k);
        cb_solver *s = create_ok(&kc.desc);
        size_t m = cb_solver_node_count(s);
        float cx, cy, far;
        cb_solver_far_limits(kc.desc.nodes, kc.desc.node_count, cb_solver_param_count(s),
                             k == CB_SOLVER_KIND_RBF ? 4.0f : 1000.0f, &cx, &cy, &far);
        for (int t = 0; t < 50; ++t) {
            double a = cb_prng_double(&r) * 6.283185307179586;
            float ux = (float)cos(a), uy = (float)sin(a);
            float m_ = fmaxf(fabsf(ux), fabsf(uy));
            float huge[2] = {cx + ux * 1e30f, cy + uy * 1e30f};
            float at[2] = {cx + ux / m_ * far, cy + uy / m_ * far};
            float wh[20], wa[20];
            cb_solver_evaluate_one(s, huge, wh, NULL);
            cb_solver_evaluate_one(s, at, wa, NULL);
            double sum = 0;
            for (size_t i = 0; i < m; ++i) {
                CB_CHECK(isfinite(wh[i]) && wh[i] >= 0 && wh[i] <= 1, "%s: weight %g",
                         cb_solver_kind_name(kc.desc.kind), (double)wh[i]);
                CB_CHECK(fabsf(wh[i] - wa[i]) < 1e-4f, "%s: far %g vs at the limit %g",
                         cb_solver_kind_name(kc.desc.kind), (double)wh[i], (double)wa[i]);
                sum += wh[i];
            }
            CB_CHECK(fabs(sum - 1) < 1e-5, "%s: far weights sum to %g",
                     cb_solver_kind_name(kc.desc.kind), sum);
        }
        cb_solver_destroy(s);
    }
}

/* Weights are finite, in [0, 1] and sum to 1 for every query, including the awkward ones:
 * on nodes, a hair off them, on the origin, denormal, on node-to-node segments. */
static void solver_weights_valid_for_awkward_queries(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        if (k == CB_SOLVER_KIND_DIRECT) {
            continue;
        }
        for (int l = 0; l < 6; ++l) {
            float xy[2 * 40];
            int m;
            if (k == CB_SOLVER_KIND_LINEAR_1D) {
                m = layout_thresholds(&r, 2 + l, l % 2 == 0, xy);
            } else if (k == CB_SOLVER_KIND_BILINEAR_2D) {
                m = layout_grid(&r, 2 + l % 3, 1 + l % 4, xy);
            } else {
                m = layout_rings(&r, l % 2 ? 8 : 4,
                                 k == CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D ? 1 : 2, l % 3 != 0,
                                 l > 1, xy);
            }
            cb_solver_desc d = {.kind = (cb_solver_kind)k, .nodes = xy, .node_count = (uint32_t)m};
            cb_solver *s = create_ok(&d);
            int dim = (int)cb_solver_param_count(s);
            enum { Q = 400 };
            static float qx[Q], qy[Q], w[40 * Q];
            for (int c = 0; c < Q; ++c) {
                int i = (int)cb_prng_below(&r, (uint32_t)m),
                    j = (int)cb_prng_below(&r, (uint32_t)m);
                float px = xy[i * dim], py = dim == 2 ? xy[i * dim + 1] : 0.0f;
                float jx = xy[j * dim], jy = dim == 2 ? xy[j * dim + 1] : 0.0f;
                float f = cb_prng_range(&r, 0, 1);
                switch (c % 6) {
                case 0:
                    qx[c] = px, qy[c] = py;
                    break;
                case 1:
                    qx[c] = nextafterf(px, INFINITY), qy[c] = py;
                    break;
                case 2:
                    qx[c] = px + 1e-7f * f, qy[c] = py - 3e-8f;
                    break;
                case 3:
                    qx[c] = px + f * (jx - px), qy[c] = py + f * (jy - py);
                    break;
                case 4:
                    qx[c] = 1e-41f * f, qy[c] = -1e-42f;
                    break;
                default:
                    qx[c] = f * px, qy[c] = f * py;
                    break;
                }
            }
            const float *cols[2] = {qx, qy};
            for (int path = 0; path < 2; ++path) {
                assert_int_equal(
                    (path ? cb_solver_evaluate_ref : cb_solver_evaluate)(s, cols, Q, Q, w, NULL),
                    CB_OK);
                for (int c = 0; c < Q; ++c) {
                    double sum = 0;
                    for (int i = 0; i < m; ++i) {
                        float v = w[i * Q + c];
                        CB_CHECK(isfinite(v) && v >= 0.0f && v <= 1.0f,
                                 "%s path %d: weight %g at (%g, %g)", cb_solver_kind_name(d.kind),
                                 path, (double)v, (double)qx[c], (double)qy[c]);
                        sum += v;
                    }
                    CB_CHECK(fabs(sum - 1) < 2e-6, "%s path %d: sum %.9g at (%g, %g)",
                             cb_solver_kind_name(d.kind), path, sum, (double)qx[c], (double)qy[c]);
                }
            }
            cb_solver_destroy(s);
        }
    }
}

/* create allocates through the desc's allocator; evaluate never allocates; destroy frees
 * everything. */
static void solver_evaluate_never_allocates(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static float cols[CB_SOLVER_MAX_NODES][512], w[20 * 512];
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        kind_case kc;
        make_case(&kc, (cb_solver_kind)k);
        counting c = {0, 0, 0, 0};
        kc.desc.allocator = (cb_allocator){count_alloc, count_free, &c};
        cb_solver *s = create_ok(&kc.desc);
        int after_create = c.allocs;
        CB_CHECK(after_create > 0, "%s allocated nothing through its allocator",
                 cb_solver_kind_name(kc.desc.kind));
        size_t np = cb_solver_param_count(s);
        fill_queries(&r, s, cols, 300, 4.0f);
        const float *all[CB_SOLVER_MAX_NODES];
        for (size_t p = 0; p < np; ++p) {
            all[p] = cols[p];
        }
        cb_solver_evaluate(s, all, 300, 512, w, NULL);
        cb_solver_evaluate_ref(s, all, 300, 512, w, NULL);
        float one[20];
        cb_solver_evaluate_one(s, all[0], one, NULL);
        CB_CHECK(c.allocs == after_create, "%s allocated while evaluating",
                 cb_solver_kind_name(kc.desc.kind));
        cb_solver_destroy(s);
        CB_CHECK(c.allocs == c.frees && c.live_bytes == 0, "%s leaked",
                 cb_solver_kind_name(kc.desc.kind));
    }
}

typedef struct thread_job {
    const cb_solver *s;
    const float *const *cols;
    size_t n;
    float *out;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    for (int rep = 0; rep < 20; ++rep) {
        cb_solver_evaluate(j->s, j->cols, j->n, j->n, j->out, NULL);
    }
    return NULL;
}

/* Many threads may evaluate one solver at once; each gets the single-threaded result. */
static void solver_concurrent_evaluate(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static float cols[CB_SOLVER_MAX_NODES][512], ref[20 * 300], outs[3][20 * 300];
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        kind_case kc;
        make_case(&kc, (cb_solver_kind)k);
        cb_solver *s = create_ok(&kc.desc);
        size_t m = cb_solver_node_count(s), np = cb_solver_param_count(s);
        fill_queries(&r, s, cols, 300, 4.0f);
        const float *all[CB_SOLVER_MAX_NODES];
        for (size_t p = 0; p < np; ++p) {
            all[p] = cols[p];
        }
        cb_solver_evaluate(s, all, 300, 300, ref, NULL);
        pthread_t th[3];
        thread_job jobs[3];
        for (int t = 0; t < 3; ++t) {
            jobs[t] = (thread_job){s, all, 300, outs[t]};
            assert_int_equal(pthread_create(&th[t], NULL, thread_main, &jobs[t]), 0);
        }
        for (int t = 0; t < 3; ++t) {
            pthread_join(th[t], NULL);
            assert_memory_equal(outs[t], ref, m * 300 * sizeof(float));
        }
        cb_solver_destroy(s);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Documented per-method rules                                                                 */

static void weights_of(cb_solver *s, float x, float y, float *w)
{
    float q[2] = {x, y};
    /* Through the SIMD path (a one-element batch), and the scalar path must agree. */
    const float *cols[2] = {&q[0], &q[1]};
    size_t m = cb_solver_node_count(s);
    float ws[CB_SOLVER_MAX_NODES];
    assert_int_equal(cb_solver_evaluate(s, cols, 1, 1, w, NULL), CB_OK);
    assert_int_equal(cb_solver_evaluate_one(s, q, ws, NULL), CB_OK);
    for (size_t i = 0; i < m; ++i) {
        CB_CHECK(fabsf(w[i] - ws[i]) < 2e-6f, "paths differ at node %zu: %g vs %g", i, (double)w[i],
                 (double)ws[i]);
    }
}

static void expect(const float *got, const float *want, int m, double tol, const char *what)
{
    for (int i = 0; i < m; ++i) {
        CB_CHECK(fabs(got[i] - want[i]) <= tol, "%s: node %d is %.7f, want %.7f", what, i,
                 (double)got[i], (double)want[i]);
    }
}

static void solver_linear_1d_equal_thresholds_form_a_step(void **state)
{
    (void)state;
    /* Nodes 1 and 2 share threshold 1, given in that order. */
    static const float t[] = {0.0f, 1.0f, 1.0f, 2.0f};
    cb_solver_desc d = {.kind = CB_SOLVER_KIND_LINEAR_1D, .nodes = t, .node_count = 4};
    cb_solver *s = create_ok(&d);
    float w[4];
    weights_of(s, -3.0f, 0, w);
    expect(w, (float[]){1, 0, 0, 0}, 4, 0, "below the first threshold");
    weights_of(s, 0.25f, 0, w);
    expect(w, (float[]){0.75f, 0.25f, 0, 0}, 4, 1e-7, "below the step: the first of the pair");
    weights_of(s, 1.0f, 0, w);
    expect(w, (float[]){0, 0.5f, 0.5f, 0}, 4, 0, "on the step: shared");
    weights_of(s, 1.75f, 0, w);
    expect(w, (float[]){0, 0, 0.25f, 0.75f}, 4, 1e-7, "above the step: the last of the pair");
    weights_of(s, 2.0f, 0, w);
    expect(w, (float[]){0, 0, 0, 1}, 4, 0, "on the last threshold");
    weights_of(s, 9.0f, 0, w);
    expect(w, (float[]){0, 0, 0, 1}, 4, 0, "beyond the last threshold");
    cb_solver_destroy(s);
    /* Unsorted thresholds are sorted. */
    static const float u[] = {2.0f, -1.0f, 0.5f};
    cb_solver_desc du = {.kind = CB_SOLVER_KIND_LINEAR_1D, .nodes = u, .node_count = 3};
    s = create_ok(&du);
    weights_of(s, 1.25f, 0, w);
    expect(w, (float[]){0.5f, 0, 0.5f}, 3, 1e-7, "unsorted");
    cb_solver_destroy(s);
}

static void solver_simple_directional_rules(void **state)
{
    (void)state;
    /* 4 directions + centre: half way to a node, the centre keeps half. */
    static const float four[] = {0, 0, 1, 0, 0, 1, -1, 0, 0, -1};
    cb_solver_desc d = {
        .kind = CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, .nodes = four, .node_count = 5};
    cb_solver *s = create_ok(&d);
    float w[5];
    weights_of(s, 0.5f, 0, w);
    expect(w, (float[]){0.5f, 0.5f, 0, 0, 0}, 5, 1e-7, "half way to +x");
    weights_of(s, 0.3f, 0.3f, w);
    expect(w, (float[]){0.4f, 0.3f, 0.3f, 0, 0}, 5, 1e-6, "inside the sector, t = (0.3, 0.3)");
    weights_of(s, 2.0f, 1.0f, w);
    expect(w, (float[]){0, 2.0f / 3, 1.0f / 3, 0, 0}, 5, 1e-6, "beyond the nodes");
    weights_of(s, 0, 0, w);
    expect(w, (float[]){1, 0, 0, 0, 0}, 5, 0, "at the centre");
    cb_solver_destroy(s);
    /* Without a centre node the centre share spreads evenly. */
    d.nodes = four + 2, d.node_count = 4;
    s = create_ok(&d);
    weights_of(s, 0.5f, 0, w);
    expect(w, (float[]){0.5f + 0.125f, 0.125f, 0.125f, 0.125f}, 4, 1e-7, "no centre node");
    cb_solver_destroy(s);
    /* A sector wider than 180 degrees shares 0.5 / 0.5. */
    static const float wide[] = {1, 0, 0, 1, 0, 0};
    d.nodes = wide, d.node_count = 3;
    s = create_ok(&d);
    weights_of(s, -0.5f, -0.5f, w);
    /* q = t0 (0, 1) + t1 (1, 0) with t = (-0.5, -0.5): influence clamps to 0. */
    expect(w, (float[]){0, 0, 1}, 3, 1e-7, "reflex sector, negative influence");
    weights_of(s, -0.2f, 0.6f, w);
    /* Sector from (0, 1) around to (1, 0): t0 = 0.6, t1 = -0.2, influence 0.4 shared evenly. */
    expect(w, (float[]){0.2f, 0.2f, 0.6f}, 3, 1e-6, "reflex sector, shared evenly");
    cb_solver_destroy(s);
    /* Two opposite nodes: projections. */
    static const float opposite[] = {1, 0, -2, 0, 0, 0};
    d.nodes = opposite, d.node_count = 3;
    s = create_ok(&d);
    weights_of(s, 0.5f, 0.7f, w);
    expect(w, (float[]){0.5f, 0, 0.5f}, 3, 1e-6, "straight sector projects");
    weights_of(s, -1.0f, -3.0f, w);
    expect(w, (float[]){0, 0.5f, 0.5f}, 3, 1e-6, "straight sector projects, other side");
    cb_solver_destroy(s);
    /* A lone direction. */
    static const float lone[] = {0, 0, 0, 2};
    d.nodes = lone, d.node_count = 2;
    s = create_ok(&d);
    weights_of(s, 5.0f, 1.0f, w);
    expect(w, (float[]){0.5f, 0.5f}, 2, 1e-6, "lone node: its projection");
    cb_solver_destroy(s);
}

static void solver_freeform_directional_rules(void **state)
{
    (void)state;
    float xy[34];
    int m = layout_locomotion17(xy);
    cb_solver_desc d = {
        .kind = CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, .nodes = xy, .node_count = (uint32_t)m};
    cb_solver *s = create_ok(&d);
    float w[17];
    weights_of(s, 0, 0, w);
    CB_CHECK(w[0] == 1.0f, "origin: idle %g", (double)w[0]);
    /* Straight ahead between walk (1.4) and run (3.5): a radial band between those two only,
     * linear in the speed (the angle terms vanish, every other band is wider). */
    for (float v = 1.4f; v <= 3.5f; v += 0.3f) {
        weights_of(s, v, 0, w);
        float t = (v - 1.4f) / 2.1f;
        float want[17] = {0};
        want[1] = 1 - t, want[9] = t;
        expect(w, want, m, 2e-6, "walk to run, straight ahead");
    }
    /* From idle to walk straight ahead: idle fades linearly to walk. */
    weights_of(s, 0.7f, 0, w);
    float want[17] = {0};
    want[0] = 0.5f, want[1] = 0.5f;
    expect(w, want, m, 2e-6, "idle to walk, straight ahead");
    /* Beyond run speed the run node keeps everything. */
    weights_of(s, 0, 9.0f, w);
    memset(want, 0, sizeof want);
    want[11] = 1.0f;
    expect(w, want, m, 2e-6, "beyond run, straight left");
    /* Without an idle node, the origin shares among the innermost ring. */
    d.nodes = xy + 2, d.node_count = 16;
    cb_solver_destroy(s);
    s = create_ok(&d);
    weights_of(s, 0, 0, w);
    for (int i = 0; i < 16; ++i) {
        CB_CHECK(fabsf(w[i] - (i < 8 ? 0.125f : 0.0f)) < 1e-7f, "no idle: node %d %g", i,
                 (double)w[i]);
    }
    cb_solver_destroy(s);
}

static void solver_delaunay_collinear_and_cocircular_layouts(void **state)
{
    (void)state;
    /* Collinear: 1D along the line, the query projected. */
    static const float line[] = {0, 0, 2, 2, 1, 1, -1, -1};
    cb_solver_desc d = {.kind = CB_SOLVER_KIND_DELAUNAY_2D, .nodes = line, .node_count = 4};
    for (int k = 0; k < 2; ++k) {
        d.kind = k ? CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D : CB_SOLVER_KIND_DELAUNAY_2D;
        cb_solver *s = create_ok(&d);
        float w[4];
        weights_of(s, 1.5f, 0.5f, w); /* projects to (1, 1) */
        expect(w, (float[]){0, 0, 1, 0}, 4, 1e-6, "collinear, on a node after projection");
        weights_of(s, 0.0f, 1.0f, w); /* projects to (0.5, 0.5) */
        expect(w, (float[]){0.5f, 0, 0.5f, 0}, 4, 1e-6, "collinear, between nodes");
        weights_of(s, 10.0f, 11.0f, w);
        expect(w, (float[]){0, 1, 0, 0}, 4, 1e-6, "collinear, beyond the end");
        cb_solver_destroy(s);
    }
    /* A 3 x 3 grid is co-circular in every cell: the triangulation must still be valid, so
     * every query inside gets weights that reproduce it linearly, and nodes are exact. */
    static const float grid[] = {0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1, 0, 2, 1, 2, 2, 2};
    for (int k = 0; k < 2; ++k) {
        cb_solver_desc g = {.kind =
                                k ? CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D : CB_SOLVER_KIND_DELAUNAY_2D,
                            .nodes = grid,
                            .node_count = 9};
        cb_solver *s = create_ok(&g);
        cb_prng r = cb_test_prng(__func__);
        for (int c = 0; c < 500; ++c) {
            float x = cb_prng_range(&r, 0.01f, 1.99f), y = cb_prng_range(&r, 0.01f, 1.99f), w[9];
            weights_of(s, x, y, w);
            double sx = 0, sy = 0;
            for (int i = 0; i < 9; ++i) {
                sx += w[i] * grid[2 * i], sy += w[i] * grid[2 * i + 1];
            }
            CB_CHECK(fabs(sx - x) < 2e-6 && fabs(sy - y) < 2e-6,
                     "%s: (%g, %g) reproduced as (%g, %g)", cb_solver_kind_name(g.kind), (double)x,
                     (double)y, sx, sy);
        }
        for (int i = 0; i < 9; ++i) {
            float w[9], want[9] = {0};
            want[i] = 1;
            weights_of(s, grid[2 * i], grid[2 * i + 1], w);
            expect(w, want, 9, 0, "grid node");
        }
        cb_solver_destroy(s);
    }
}

static void solver_bilinear_grid_inference(void **state)
{
    (void)state;
    static const float grid[] = {0, 0, 1, 0, 3, 0, 0, 2, 1, 2, 3, 2};
    cb_solver_desc variants[] = {
        {.kind = CB_SOLVER_KIND_BILINEAR_2D, .nodes = grid, .node_count = 6},
        {.kind = CB_SOLVER_KIND_BILINEAR_2D, .nodes = grid, .node_count = 6, .grid_nx = 3},
        {.kind = CB_SOLVER_KIND_BILINEAR_2D, .nodes = grid, .node_count = 6, .grid_ny = 2},
        {.kind = CB_SOLVER_KIND_BILINEAR_2D,
         .nodes = grid,
         .node_count = 6,
         .grid_nx = 3,
         .grid_ny = 2},
    };
    for (size_t v = 0; v < 4; ++v) {
        cb_solver *s = create_ok(&variants[v]);
        float w[6];
        weights_of(s, 2.0f, 0.5f, w);
        /* x between columns 1 and 2 at 1/2; y between rows at 1/4. */
        expect(w, (float[]){0, 0.375f, 0.375f, 0, 0.125f, 0.125f}, 6, 1e-7, "bilinear");
        weights_of(s, -1.0f, 5.0f, w);
        expect(w, (float[]){0, 0, 0, 1, 0, 0}, 6, 0, "clamped to the corner");
        cb_solver_destroy(s);
    }
    /* A single row interpolates along x only. */
    cb_solver_desc row = {.kind = CB_SOLVER_KIND_BILINEAR_2D, .nodes = grid, .node_count = 3};
    cb_solver *s = create_ok(&row);
    float w[3];
    weights_of(s, 2.5f, 7.0f, w);
    expect(w, (float[]){0, 0.25f, 0.75f}, 3, 1e-7, "one row");
    cb_solver_destroy(s);
}

static void solver_direct_normalizes_and_zero_is_rest_pose(void **state)
{
    (void)state;
    cb_solver_desc d = {.kind = CB_SOLVER_KIND_DIRECT, .node_count = 4};
    cb_solver *s = create_ok(&d);
    float w[4];
    assert_int_equal(cb_solver_evaluate_one(s, (float[]){1, 3, 0, -2}, w, NULL), CB_OK);
    expect(w, (float[]){0.25f, 0.75f, 0, 0}, 4, 1e-7, "normalized, negative clamped");
    assert_int_equal(cb_solver_evaluate_one(s, (float[]){0, -1, 0, 0}, w, NULL), CB_OK);
    expect(w, (float[]){0, 0, 0, 0}, 4, 0, "all zero: rest pose");
    static float cols[4][5] = {
        {0, 1, 2, 0, 1e38f}, {0, 1, 2, 0, 1e38f}, {0, 1, 0, -1, 1e38f}, {0, 1, 0, -1, 1e38f}};
    const float *c[4] = {cols[0], cols[1], cols[2], cols[3]};
    float ws[4 * 5];
    assert_int_equal(cb_solver_evaluate(s, c, 5, 5, ws, NULL), CB_OK);
    for (int i = 0; i < 4; ++i) {
        CB_CHECK(ws[i * 5] == 0 && ws[i * 5 + 3] == 0, "all-zero queries give zero");
        CB_CHECK(fabsf(ws[i * 5 + 1] - 0.25f) < 1e-7f, "equal parameters share");
        CB_CHECK(fabsf(ws[i * 5 + 4] - 0.25f) < 1e-7f, "huge parameters do not overflow");
    }
    cb_solver_destroy(s);
}

static void solver_inverse_distance_exact_and_ties(void **state)
{
    (void)state;
    static const float sq[] = {-1, -1, 1, -1, 1, 1, -1, 1};
    for (int k = 0; k < 2; ++k) {
        cb_solver_desc d = {.kind = k ? CB_SOLVER_KIND_KNN_IDW : CB_SOLVER_KIND_IDW,
                            .nodes = sq,
                            .node_count = 4,
                            .knn_k = 1,
                            .idw_power = 3.0f};
        cb_solver *s = create_ok(&d);
        float w[4];
        weights_of(s, 1, -1, w);
        expect(w, (float[]){0, 1, 0, 0}, 4, 0, "on a node");
        weights_of(s, 0, 0, w);
        expect(w, (float[]){0.25f, 0.25f, 0.25f, 0.25f}, 4, 1e-7, "all tied");
        weights_of(s, 0.9f, 0.9f, w);
        if (k) {
            expect(w, (float[]){0, 0, 1, 0}, 4, 2e-7, "k = 1: the nearest only");
        }
        cb_solver_destroy(s);
    }
    /* k = 2 on the square, at the middle of an edge: the two nearest tie, the others are cut. */
    cb_solver_desc d = {.kind = CB_SOLVER_KIND_KNN_IDW, .nodes = sq, .node_count = 4, .knn_k = 2};
    cb_solver *s = create_ok(&d);
    float w[4];
    weights_of(s, 0, -1, w);
    expect(w, (float[]){0.5f, 0.5f, 0, 0}, 4, 1e-7, "k = 2, edge middle");
    cb_solver_destroy(s);
}

/* ------------------------------------------------------------------------------------------ */
/* Triangulation                                                                               */

static void solver_exact_predicates(void **state)
{
    (void)state;
    double a[2] = {0, 0}, b[2] = {1, 0}, c[2] = {0, 1}, d[2] = {1, 1};
    assert_int_equal(cb_orient2d_exact(a, b, c), 1);
    assert_int_equal(cb_orient2d_exact(a, c, b), -1);
    double mid[2] = {0.5, 0.5};
    assert_int_equal(cb_orient2d_exact(b, c, mid), 0);
    /* Four corners of a square are co-circular: exactly 0; a hair in or out decides. */
    assert_int_equal(cb_incircle_exact(a, b, c, d), 0);
    double in[2] = {1, nextafter(1.0, 0.0)}, out[2] = {1, nextafter(1.0, 2.0)};
    assert_int_equal(cb_incircle_exact(a, b, d, in), 1);
    assert_int_equal(cb_incircle_exact(a, b, d, out), -1);
    /* Nearly collinear points far from the origin, where a double determinant cancels. */
    double p[2] = {1e6 + 0.1, 1e6 + 0.1}, q[2] = {1e6 + 0.2, 1e6 + 0.2};
    double r[2] = {1e6 + 0.3, nextafter(1e6 + 0.3, 0.0)};
    assert_int_equal(cb_orient2d_exact(p, q, r), -1);
    /* The 8 directions of a circle, rounded to float, are not exactly co-circular; whatever
     * the exact sign, swapping two points must flip it (a rounded evaluation need not). */
    float xy[18];
    layout_standard8(xy);
    double s0[2] = {xy[2], xy[3]}, s1[2] = {xy[4], xy[5]}, s2[2] = {xy[6], xy[7]},
           s3[2] = {xy[8], xy[9]};
    int sign = cb_incircle_exact(s0, s1, s2, s3);
    assert_int_equal(cb_incircle_exact(s1, s0, s2, s3), -sign);
}

static void solver_triangulation_is_delaunay(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int l = 0; l < 60; ++l) {
        float xy[2 * CB_SOLVER_MAX_NODES];
        int n;
        switch (l % 5) {
        case 0:
            n = layout_rings(&r, l % 2 ? 8 : 4, 1 + l % 2, l % 3 == 0, l % 4 == 0, xy);
            break;
        case 1:
            n = layout_grid(&r, 2 + l % 4, 2 + (l / 2) % 4, xy);
            break;
        case 2:
            n = layout_standard8(xy);
            break;
        default:
            n = 3 + (int)cb_prng_below(&r, 60);
            for (int i = 0; i < n; ++i) {
                /* Integer lattice points: many collinear and co-circular quadruples. */
                xy[2 * i] = (float)cb_prng_below(&r, l % 5 == 3 ? 5 : 1000);
                xy[2 * i + 1] = (float)cb_prng_below(&r, l % 5 == 3 ? 5 : 1000);
                for (int j = 0; j < i; ++j) {
                    if (xy[2 * j] == xy[2 * i] && xy[2 * j + 1] == xy[2 * i + 1]) {
                        --i;
                        break;
                    }
                }
                if (l % 5 == 3 && i >= 24) {
                    n = i + 1;
                    break;
                }
            }
        }
        cb_tri_mesh mesh;
        assert_int_equal(cb_tri_mesh_build(xy, (uint32_t)n, NULL, &mesh, NULL), CB_OK);
        if (mesh.collinear) {
            cb_tri_mesh_free(&mesh, NULL);
            continue;
        }
        double p[CB_SOLVER_MAX_NODES][2];
        for (int i = 0; i < n; ++i) {
            p[i][0] = xy[2 * i], p[i][1] = xy[2 * i + 1];
        }
        /* Euler: T = 2n - 2 - h, every node used, every triangle counter-clockwise, empty
         * circumcircles, symmetric adjacency. */
        CB_CHECK(mesh.tri_count == (uint32_t)(2 * n - 2) - mesh.hull_count,
                 "layout %d: %u triangles for %d nodes and %u hull vertices", l, mesh.tri_count, n,
                 mesh.hull_count);
        for (uint32_t t = 0; t < mesh.tri_count; ++t) {
            const uint32_t *v = mesh.tri[t];
            CB_CHECK(cb_orient2d_exact(p[v[0]], p[v[1]], p[v[2]]) > 0, "layout %d: triangle %u", l,
                     t);
            for (int i = 0; i < n; ++i) {
                if ((uint32_t)i != v[0] && (uint32_t)i != v[1] && (uint32_t)i != v[2]) {
                    CB_CHECK(cb_incircle_exact(p[v[0]], p[v[1]], p[v[2]], p[i]) <= 0,
                             "layout %d: node %d inside the circumcircle of triangle %u", l, i, t);
                }
            }
            for (int k = 0; k < 3; ++k) {
                int32_t o = mesh.adj[t][k];
                if (o < 0) {
                    continue;
                }
                bool back = false;
                for (int kk = 0; kk < 3; ++kk) {
                    back = back || mesh.adj[o][kk] == (int32_t)t;
                }
                CB_CHECK(back, "layout %d: adjacency %u -> %d not symmetric", l, t, o);
            }
        }
        cb_tri_mesh_free(&mesh, NULL);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Found by fuzzing (issue 11)                                                                */

static cb_result try_create(cb_solver_kind kind, const float *nodes, uint32_t m, uint32_t dim)
{
    cb_solver_desc d = {.kind = kind, .nodes = nodes, .node_count = m, .dimension = dim};
    cb_solver *s = NULL;
    cb_result r = cb_solver_create(&d, &s, NULL);
    cb_solver_destroy(s);
    return r;
}

/* Both paths of one query: finite, in [0, 1], summing to 1. */
static void check_valid_weights(cb_solver *s, const float *q, const char *what)
{
    size_t m = cb_solver_node_count(s), np = cb_solver_param_count(s);
    const float *cols[2] = {&q[0], np > 1 ? &q[1] : &q[0]};
    float w[2][CB_SOLVER_MAX_NODES];
    assert_int_equal(cb_solver_evaluate(s, cols, 1, 1, w[0], NULL), CB_OK);
    assert_int_equal(cb_solver_evaluate_one(s, q, w[1], NULL), CB_OK);
    for (int path = 0; path < 2; ++path) {
        double sum = 0;
        for (size_t i = 0; i < m; ++i) {
            CB_CHECK(isfinite(w[path][i]) && w[path][i] >= 0 && w[path][i] <= 1,
                     "%s, path %d: weight %zu is %g", what, path, i, (double)w[path][i]);
            sum += w[path][i];
        }
        CB_CHECK(fabs(sum - 1) <= 1e-5, "%s, path %d: weights sum to %.9g", what, path, sum);
    }
}

/* Finding 12: spacings whose reciprocal overflows (1e-40: 1 / span is inf, and 0 * inf is NaN
 * at the knot) gave [0, 0] on the SIMD path and NaN on the scalar one. Such layouts are refused
 * for every kind that inverts a spacing; CB_SOLVER_MIN_SPACING itself still works. */
static void solver_denormal_spacing_is_refused(void **state)
{
    (void)state;
    static const float t2[] = {0.0f, 1e-40f}, t3[] = {0.0f, 1e-40f, 2e-40f};
    assert_int_equal(try_create(CB_SOLVER_KIND_LINEAR_1D, t2, 2, 1), CB_ERR_DUPLICATE);
    assert_int_equal(try_create(CB_SOLVER_KIND_LINEAR_1D, t3, 3, 1), CB_ERR_DUPLICATE);
    static const float grid[] = {0, 0, 1e-40f, 0, 0, 1, 1e-40f, 1};
    assert_int_equal(try_create(CB_SOLVER_KIND_BILINEAR_2D, grid, 4, 2), CB_ERR_DUPLICATE);
    static const float pair[] = {0, 0, 0, 5.6e-45f};
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        if (k != CB_SOLVER_KIND_LINEAR_1D && k != CB_SOLVER_KIND_DIRECT &&
            k != CB_SOLVER_KIND_BILINEAR_2D) {
            CB_CHECK(try_create((cb_solver_kind)k, pair, 2, 2) == CB_ERR_DUPLICATE,
                     "%s accepted nodes 5.6e-45 apart", cb_solver_kind_name((cb_solver_kind)k));
        }
    }
    /* At the limit: valid weights on and between the knots, on both paths. */
    const float h = CB_SOLVER_MIN_SPACING;
    const float lim[] = {0.0f, h, 2.0f * h};
    cb_solver_desc d = {.kind = CB_SOLVER_KIND_LINEAR_1D, .nodes = lim, .node_count = 3};
    cb_solver *s = create_ok(&d);
    const float q1[] = {0.0f, h, 1.5f * h, 2.0f * h, -1.0f, 1.0f};
    for (size_t i = 0; i < sizeof q1 / sizeof q1[0]; ++i) {
        check_valid_weights(s, &q1[i], "linear_1d at the minimum spacing");
    }
    cb_solver_destroy(s);
    const float seg[] = {0, 0, 0, h};
    d = (cb_solver_desc){.kind = CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D, .nodes = seg, .node_count = 2};
    s = create_ok(&d);
    const float q2[][2] = {{0, 0}, {0, h}, {0, 0.5f * h}, {1, 1}};
    for (size_t i = 0; i < 4; ++i) {
        check_valid_weights(s, q2[i], "collinear natural_neighbor_2d at the minimum spacing");
    }
    cb_solver_destroy(s);
}

/* Finding 14: natural neighbours over nodes a few ulps apart near 1.75 passed the duplicate test
 * (relative to the bounding box only) and their weights summed to 1.03-1.10. Such nodes are now
 * duplicates (relative to the coordinates' magnitude too); layouts just above the limit give
 * weights that sum to 1. */
static void solver_nodes_ulps_apart(void **state)
{
    (void)state;
    float u = nextafterf(1.75f, 2.0f) - 1.75f;
    const float ulps[] = {1.75f, 1.75f,         1.75f + 2 * u, 1.75f,
                          1.75f, 1.75f + 2 * u, 1.75f + 3 * u, 1.75f + 3 * u};
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        if (k != CB_SOLVER_KIND_LINEAR_1D && k != CB_SOLVER_KIND_DIRECT &&
            k != CB_SOLVER_KIND_BILINEAR_2D) {
            CB_CHECK(try_create((cb_solver_kind)k, ulps, 4, 2) == CB_ERR_DUPLICATE,
                     "%s accepted nodes 2 ulps apart", cb_solver_kind_name((cb_solver_kind)k));
        }
    }
    cb_prng r = cb_test_prng(__func__);
    for (int l = 0; l < 40; ++l) {
        /* 6 to 9 nodes on a lattice of spacing just above 1e-6 * 1.75, queries among them. */
        float step = 1.75e-6f * (1.05f + (float)cb_prng_double(&r)), xy[2 * 9];
        uint32_t n = 0;
        for (int i = 0; i < 9 && n < 6 + (uint32_t)(l % 4); ++i) {
            float x = 1.75f + step * (float)(cb_prng_below(&r, 5));
            float y = 1.75f + step * (float)(cb_prng_below(&r, 5));
            bool dup = false;
            for (uint32_t j = 0; j < n; ++j) {
                dup = dup || (xy[2 * j] == x && xy[2 * j + 1] == y);
            }
            if (!dup) {
                xy[2 * n] = x, xy[2 * n + 1] = y, ++n;
            }
        }
        cb_solver_desc d = {
            .kind = CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D, .nodes = xy, .node_count = n};
        cb_solver *s = NULL;
        if (cb_solver_create(&d, &s, NULL) != CB_OK) {
            continue; /* a lattice that happened to be collinear or too close */
        }
        for (int q = 0; q < 32; ++q) {
            float p[2] = {1.75f + 4.0f * step * (float)cb_prng_double(&r),
                          1.75f + 4.0f * step * (float)cb_prng_double(&r)};
            check_valid_weights(s, p, "natural_neighbor_2d near 1.75");
        }
        cb_solver_destroy(s);
    }
}

/* Finding 15: a non-finite query on a layout far from the origin. The SIMD path pulled the
 * origin in towards the layout, the scalar path returned before the far rule and evaluated the
 * origin itself: weights differed by up to 0.5. Both now pull it in (solver.h). */
static void solver_nonfinite_query_far_layout_paths_agree(void **state)
{
    (void)state;
    float xy[2 * 9];
    for (int i = 0; i < 9; ++i) {
        xy[2 * i] = 5000.0f + (float)(i % 3) + 0.25f * (float)(i / 3);
        xy[2 * i + 1] = -7000.0f + (float)(i / 3);
    }
    static const float bad[] = {NAN, INFINITY, -INFINITY};
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        if (k == CB_SOLVER_KIND_DIRECT || k == CB_SOLVER_KIND_LINEAR_1D ||
            k == CB_SOLVER_KIND_BILINEAR_2D) {
            continue;
        }
        cb_solver_desc d = {
            .kind = (cb_solver_kind)k, .nodes = xy, .node_count = 9, .dimension = 2};
        cb_solver *s = create_ok(&d);
        size_t m = cb_solver_node_count(s);
        for (int b = 0; b < 3; ++b) {
            float q[2] = {bad[b], 1.0f}, origin[2] = {0.0f, 0.0f};
            float ws[CB_SOLVER_MAX_NODES], wo[CB_SOLVER_MAX_NODES], wv[CB_SOLVER_MAX_NODES];
            bool nf = false;
            const float *cols[2] = {&q[0], &q[1]};
            assert_int_equal(cb_solver_evaluate(s, cols, 1, 1, wv, NULL), CB_OK);
            assert_int_equal(cb_solver_evaluate_one(s, q, ws, &nf), CB_OK);
            assert_true(nf);
            assert_int_equal(cb_solver_evaluate_one(s, origin, wo, NULL), CB_OK);
            for (size_t i = 0; i < m; ++i) {
                CB_CHECK(same_bits(ws[i], wo[i]), "%s: scalar non-finite %g vs origin %g",
                         cb_solver_kind_name(d.kind), (double)ws[i], (double)wo[i]);
                CB_CHECK(fabsf(ws[i] - wv[i]) < 2e-6f, "%s: node %zu scalar %g vs SIMD %g",
                         cb_solver_kind_name(d.kind), i, (double)ws[i], (double)wv[i]);
            }
        }
        cb_solver_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(solver_query_desc_defaults),
        cmocka_unit_test(solver_kind_names_round_trip),
        cmocka_unit_test(solver_create_rejects_bad_descs),
        cmocka_unit_test(solver_create_minimal_desc_of_every_kind),
        cmocka_unit_test(solver_create_reports_allocation_failure),
        cmocka_unit_test(solver_evaluate_rejects_bad_arguments),
        cmocka_unit_test(solver_job_validity_table),
        cmocka_unit_test(solver_bit_identical_for_any_batch),
        cmocka_unit_test(solver_evaluate_one_matches_scalar_batch),
        cmocka_unit_test(solver_nonfinite_queries_use_the_origin),
        cmocka_unit_test(solver_direct_weights_survive_subnormal_sums),
        cmocka_unit_test(solver_far_queries_are_pulled_in),
        cmocka_unit_test(solver_weights_valid_for_awkward_queries),
        cmocka_unit_test(solver_evaluate_never_allocates),
        cmocka_unit_test(solver_concurrent_evaluate),
        cmocka_unit_test(solver_linear_1d_equal_thresholds_form_a_step),
        cmocka_unit_test(solver_simple_directional_rules),
        cmocka_unit_test(solver_freeform_directional_rules),
        cmocka_unit_test(solver_delaunay_collinear_and_cocircular_layouts),
        cmocka_unit_test(solver_bilinear_grid_inference),
        cmocka_unit_test(solver_direct_normalizes_and_zero_is_rest_pose),
        cmocka_unit_test(solver_inverse_distance_exact_and_ties),
        cmocka_unit_test(solver_exact_predicates),
        cmocka_unit_test(solver_triangulation_is_delaunay),
        cmocka_unit_test(solver_denormal_spacing_is_refused),
        cmocka_unit_test(solver_nodes_ulps_apart),
        cmocka_unit_test(solver_nonfinite_query_far_layout_paths_agree),
    };
    return CB_RUN_TESTS(tests);
}
