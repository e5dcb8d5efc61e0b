/* The criteria of a good blend, measured for every solver over random locomotion-like layouts
 * (an idle node at the origin or not, 4 or 8 directions on one or two rings, jittered; grids
 * for bilinear; thresholds for 1D) with random queries inside and outside:
 *   exact       max |w(p_i) - e_i| over every node of every layout
 *   unity       max |sum w - 1|
 *   bounds      how far any weight leaves [0, 1]
 *   continuity  the largest change of any weight between neighbouring points of random lines
 *               across the layout, 1/2000 of its radius apart
 *   locality    how many nodes get weight > 1e-6, mean and largest, for queries within the
 *               layout's radius
 *   monotone    the largest rise of node i's weight along rays leaving p_i (samples 1/100 of
 *               the radius apart, out to twice the radius)
 *   density     adding a node 1/1000 of the radius from an existing one: the largest change of
 *               the pair's summed weight or of any other node's weight
 *   linear      max |sum w_i p_i - q| / radius for queries inside the convex hull
 * Each method asserts what it promises (docs/solvers.md says why); every number is printed as
 * a row of the table in docs/solvers.md (lines "# | ..."). The SIMD batch path is measured. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/solver.h"
#include "layouts.h"
#include "test_util.h"

enum { LAYOUTS = 16, QUERIES = 2000, LINE_STEPS = 4000, RAY_STEPS = 200 };

/* Layouts per method: all of them in optimized builds, fewer where tests scale down
 * (CB_TEST_SCALE, tests/meson.build). */
static int layout_count(void)
{
    return (int)cb_test_scaled(LAYOUTS, 4);
}
/* Bisections of a step that moves the weights: 16 halve it to 1/(1333 * 65536) of the radius,
 * where a continuous weight moves by float noise only. */
enum { REFINE = 16 };

typedef struct criteria {
    double exact, unity, bounds, continuity, coarse, monotone, density, density_ratio, linear;
    double local_sum;
    int local_max;
    size_t local_count;
} criteria;

/* What a method promises on a family of layouts; 0 means not promised (measured only).
 *   exact: bound on the error at the nodes (float rounding only);
 *   jump: bound on the jump left after bisection (continuity; a real discontinuity is ~0.1-1);
 *   monotone: bound on a rise along a ray; density: bound on the change from a near-duplicate
 *   as a multiple of (distance to the duplicate) / (closest spacing of the layout), so that
 *   first-order invariance passes and a real change (an O(1) share moving) fails;
 *   linear: bound on |sum w p - q| / radius inside the hull; locality: most weighted nodes. */
typedef struct promise {
    cb_solver_kind kind;
    int variant; /* 0: as measured in the table's main rows; 1: no idle node; 2: k = 1 */
    const char *layouts;
    double exact, jump, monotone, density, linear;
    int locality;
} promise;

static const promise PROMISES[] = {
    {CB_SOLVER_KIND_LINEAR_1D, 0, "thresholds", 1e-6, 1e-3, 1e-6, 5, 1e-5, 2},
    {CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, 0, "rings, idle", 1e-6, 1e-3, 0, 0, 1e-5, 3},
    {CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, 1, "rings, no idle", 1e-6, 0, 0, 0, 0, 0},
    {CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, 0, "rings, idle", 1e-5, 1e-3, 0, 0, 0, 0},
    {CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, 1, "rings, no idle", 1e-5, 0, 0, 0, 0, 0},
    {CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D, 0, "rings", 1e-6, 1e-3, 0, 0, 0, 0},
    {CB_SOLVER_KIND_DELAUNAY_2D, 0, "rings, grids", 1e-6, 1e-3, 1e-6, 0, 1e-5, 3},
    {CB_SOLVER_KIND_BILINEAR_2D, 0, "grids", 1e-6, 1e-3, 1e-6, 0, 1e-5, 4},
    {CB_SOLVER_KIND_IDW, 0, "rings", 1e-6, 1e-3, 0, 0, 0, 0},
    {CB_SOLVER_KIND_KNN_IDW, 0, "jittered rings, k = 4", 1e-6, 1e-3, 0, 0, 0, 4},
    {CB_SOLVER_KIND_KNN_IDW, 2, "rings, k = 1", 1e-6, 0, 0, 0, 0, 1},
    {CB_SOLVER_KIND_RBF, 0, "rings", 1e-4, 1e-3, 0, 0, 0, 0},
    {CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D, 0, "rings, grids", 1e-6, 1e-3, 0, 5, 1e-5, 0},
};

/* ------------------------------------------------------------------------------------------ */

typedef struct space {
    cb_solver *s;
    int m, dim;
    float xy[2 * CB_SOLVER_MAX_NODES];
    float radius;
    double spacing; /* the smallest distance between two nodes */
} space;

/* KNN_IDW's k for the current variant (0: the default). */
static uint32_t knn_k;

static bool make_space(space *sp, cb_solver_kind kind, const float *xy, int m, int dim)
{
    sp->m = m, sp->dim = dim;
    memcpy(sp->xy, xy, sizeof(float) * (size_t)(m * dim));
    sp->radius = layout_radius(xy, m, dim);
    sp->spacing = INFINITY;
    for (int i = 0; i < m; ++i) {
        for (int j = i + 1; j < m; ++j) {
            double dx = xy[i * dim] - xy[j * dim],
                   dy = dim == 2 ? xy[i * 2 + 1] - xy[j * 2 + 1] : 0;
            sp->spacing = fmin(sp->spacing, hypot(dx, dy));
        }
    }
    cb_solver_desc d = {.kind = kind,
                        .nodes = sp->xy,
                        .node_count = (uint32_t)m,
                        .dimension = (uint32_t)dim,
                        .knn_k = knn_k};
    cb_error err = {0};
    cb_result r = cb_solver_create(&d, &sp->s, &err);
    CB_CHECK(r == CB_OK, "create %s: %s", cb_solver_kind_name(kind), err.message);
    return r == CB_OK;
}

/* Weights of n queries (SIMD batch path) into w[i * n + c]. */
static void eval(const space *sp, const float *qx, const float *qy, size_t n, float *w)
{
    const float *cols[2] = {qx, qy};
    assert_int_equal(cb_solver_evaluate(sp->s, cols, n, n, w, NULL), CB_OK);
}

static void layout_for(cb_prng *r, cb_solver_kind kind, int variant, int l, float *xy, int *m,
                       int *dim)
{
    *dim = 2;
    if (kind == CB_SOLVER_KIND_LINEAR_1D) {
        *dim = 1;
        *m = layout_thresholds(r, 2 + l % 10, false, xy);
    } else if (kind == CB_SOLVER_KIND_BILINEAR_2D ||
               (kind == CB_SOLVER_KIND_DELAUNAY_2D && l % 4 == 3) ||
               (kind == CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D && l % 4 == 3)) {
        *m = layout_grid(r, 2 + l % 3, 2 + (l / 3) % 3, xy);
    } else {
        bool simple = kind == CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D;
        /* Directional methods are measured with an idle node (without one they are discontinuous
         * at the origin, by design); the others both ways. */
        bool idle =
            simple || kind == CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D ? variant != 1 : l % 2 == 0;
        /* KNN is measured on jittered rings: in a symmetric ring more than k nodes can tie as
         * nearest (the centre of 8 directions for k = 4), its documented discontinuity. */
        bool jitter = kind == CB_SOLVER_KIND_KNN_IDW && variant == 0 ? true : l % 3 != 0;
        *m = layout_rings(r, l % 4 < 2 ? 8 : 4, simple ? 1 : 1 + l % 2, idle, jitter, xy);
    }
}

/* Random queries: 3/4 within the radius, the rest out to twice it. */
static void random_queries(cb_prng *r, const space *sp, float *qx, float *qy, size_t n)
{
    for (size_t c = 0; c < n; ++c) {
        double rad = sp->radius * (c % 4 == 3 ? 1.0 + cb_prng_double(r) : sqrt(cb_prng_double(r)));
        double a = cb_prng_double(r) * 6.283185307179586;
        qx[c] = (float)(rad * cos(a));
        qy[c] = sp->dim == 2 ? (float)(rad * sin(a)) : 0.0f;
    }
}

/* Is q strictly inside the convex hull of the nodes (by 1e-3 of the radius)? */
static bool inside_hull(const space *sp, float x, float y)
{
    if (sp->dim == 1) {
        float lo = sp->xy[0], hi = sp->xy[0];
        for (int i = 1; i < sp->m; ++i) {
            lo = fminf(lo, sp->xy[i]), hi = fmaxf(hi, sp->xy[i]);
        }
        return x > lo && x < hi;
    }
    /* A half-plane test against every pair: q is outside iff some line through two nodes has
     * every node on one side and q on the other. */
    double tol = 1e-3 * sp->radius;
    for (int i = 0; i < sp->m; ++i) {
        for (int j = 0; j < sp->m; ++j) {
            if (i == j) {
                continue;
            }
            double ax = sp->xy[2 * i], ay = sp->xy[2 * i + 1];
            double ex = sp->xy[2 * j] - ax, ey = sp->xy[2 * j + 1] - ay, len = hypot(ex, ey);
            bool all_left = true;
            for (int k = 0; k < sp->m && all_left; ++k) {
                all_left = ex * (sp->xy[2 * k + 1] - ay) - ey * (sp->xy[2 * k] - ax) >= -1e-9 * len;
            }
            if (all_left && (ex * (y - ay) - ey * (x - ax)) / len < tol) {
                return false;
            }
        }
    }
    return true;
}

/* The largest weight change between a and b after REFINE bisections towards the half that
 * changes more. */
static double refine_jump(const space *sp, float ax, float ay, float bx, float by)
{
    float wa[CB_SOLVER_MAX_NODES], wb[CB_SOLVER_MAX_NODES], wm[CB_SOLVER_MAX_NODES];
    float qa[2] = {ax, ay}, qb[2] = {bx, by};
    cb_solver_evaluate_one(sp->s, qa, wa, NULL);
    cb_solver_evaluate_one(sp->s, qb, wb, NULL);
    double jump = 0;
    for (int it = 0; it < REFINE; ++it) {
        float qm[2] = {0.5f * (qa[0] + qb[0]), 0.5f * (qa[1] + qb[1])};
        cb_solver_evaluate_one(sp->s, qm, wm, NULL);
        double ja = 0, jb = 0;
        for (int i = 0; i < sp->m; ++i) {
            ja = fmax(ja, fabs(wm[i] - wa[i]));
            jb = fmax(jb, fabs(wb[i] - wm[i]));
        }
        if (ja >= jb) {
            memcpy(qb, qm, sizeof qm), memcpy(wb, wm, sizeof wm);
        } else {
            memcpy(qa, qm, sizeof qm), memcpy(wa, wm, sizeof wm);
        }
        jump = fmax(ja, jb);
    }
    return jump;
}

static void measure_layout(criteria *c, cb_prng *r, const space *sp, cb_solver_kind kind)
{
    int m = sp->m;
    static float qx[LINE_STEPS + 1], qy[LINE_STEPS + 1];
    static float w[CB_SOLVER_MAX_NODES * (LINE_STEPS + 1)];
    /* exactness */
    for (int i = 0; i < m; ++i) {
        qx[i] = sp->xy[i * sp->dim], qy[i] = sp->dim == 2 ? sp->xy[i * 2 + 1] : 0.0f;
    }
    eval(sp, qx, qy, (size_t)m, w);
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < m; ++j) {
            c->exact = fmax(c->exact, fabs(w[j * m + i] - (i == j)));
        }
    }
    /* unity, bounds, locality, linear precision */
    random_queries(r, sp, qx, qy, QUERIES);
    eval(sp, qx, qy, QUERIES, w);
    for (size_t q = 0; q < QUERIES; ++q) {
        double sum = 0, sx = 0, sy = 0;
        int used = 0;
        for (int i = 0; i < m; ++i) {
            double v = w[i * QUERIES + q];
            sum += v;
            sx += v * sp->xy[i * sp->dim];
            sy += sp->dim == 2 ? v * sp->xy[i * 2 + 1] : 0.0;
            c->bounds = fmax(c->bounds, fmax(-v, v - 1.0));
            used += v > 1e-6;
        }
        c->unity = fmax(c->unity, fabs(sum - 1));
        if (hypot(qx[q], qy[q]) <= sp->radius) {
            c->local_sum += used;
            c->local_count++;
            c->local_max = used > c->local_max ? used : c->local_max;
        }
        if (inside_hull(sp, qx[q], qy[q])) {
            c->linear = fmax(c->linear, hypot(sx - qx[q], sy - qy[q]) / sp->radius);
        }
    }
    /* continuity: two random lines across the layout, the first through the origin (where
     * the directional methods are special); every step whose weights move by more than 1e-3 is
     * bisected REFINE times towards its larger half, so a steep but continuous stretch shrinks
     * to float noise while a jump keeps its size. */
    for (int line = 0; line < 2; ++line) {
        double a = cb_prng_double(r) * 6.283185307179586;
        double off = line == 0 ? 0.0 : cb_prng_range(r, -0.9f, 0.9f);
        double dx = cos(a), dy = sp->dim == 2 ? sin(a) : 0.0, len = 3.0 * sp->radius;
        if (sp->dim == 1) {
            dx = 1.0, off = 0.0;
        }
        for (int k = 0; k <= LINE_STEPS; ++k) {
            double t = -0.5 * len + len * k / LINE_STEPS;
            qx[k] = (float)(t * dx - off * sp->radius * dy);
            qy[k] = (float)(t * dy + off * sp->radius * dx);
        }
        eval(sp, qx, qy, LINE_STEPS + 1, w);
        for (int k = 0; k < LINE_STEPS; ++k) {
            double jump = 0;
            for (int i = 0; i < m; ++i) {
                float *row = w + (size_t)i * (LINE_STEPS + 1);
                jump = fmax(jump, fabs(row[k + 1] - row[k]));
            }
            c->coarse = fmax(c->coarse, jump);
            if (jump > 1e-3) {
                c->continuity =
                    fmax(c->continuity, refine_jump(sp, qx[k], qy[k], qx[k + 1], qy[k + 1]));
            }
        }
    }
    /* monotonicity: rays from each of three nodes */
    for (int ray = 0; ray < 3; ++ray) {
        int i = (int)cb_prng_below(r, (uint32_t)m);
        double a = cb_prng_double(r) * 6.283185307179586;
        double dx = sp->dim == 2 ? cos(a) : (ray % 2 ? 1.0 : -1.0),
               dy = sp->dim == 2 ? sin(a) : 0.0;
        for (int k = 0; k <= RAY_STEPS; ++k) {
            double t = 2.0 * sp->radius * k / RAY_STEPS;
            qx[k] = (float)(sp->xy[i * sp->dim] + t * dx);
            qy[k] = sp->dim == 2 ? (float)(sp->xy[i * 2 + 1] + t * dy) : 0.0f;
        }
        eval(sp, qx, qy, RAY_STEPS + 1, w);
        float *row = w + (size_t)i * (RAY_STEPS + 1);
        for (int k = 0; k < RAY_STEPS; ++k) {
            c->monotone = fmax(c->monotone, row[k + 1] - row[k]);
        }
    }
    /* density: a near-duplicate of one node (not the idle node: the directional methods treat
     * the origin specially) */
    if (kind != CB_SOLVER_KIND_BILINEAR_2D) {
        int k = (int)cb_prng_below(r, (uint32_t)m);
        if (sp->dim == 2 && sp->xy[2 * k] == 0 && sp->xy[2 * k + 1] == 0) {
            k = (k + 1) % m;
        }
        float xy[2 * CB_SOLVER_MAX_NODES];
        memcpy(xy, sp->xy, sizeof(float) * (size_t)(m * sp->dim));
        double a = cb_prng_double(r) * 6.283185307179586, eps = 1e-3 * sp->radius;
        xy[m * sp->dim] = (float)(sp->xy[k * sp->dim] + eps * cos(a));
        if (sp->dim == 2) {
            xy[m * 2 + 1] = (float)(sp->xy[k * 2 + 1] + eps * sin(a));
        }
        space more;
        if (make_space(&more, kind, xy, m + 1, sp->dim)) {
            random_queries(r, sp, qx, qy, QUERIES);
            static float w2[CB_SOLVER_MAX_NODES * QUERIES];
            eval(sp, qx, qy, QUERIES, w);
            eval(&more, qx, qy, QUERIES, w2);
            for (size_t q = 0; q < QUERIES; ++q) {
                /* Inside the hull only: outside it the methods extend the weights by choice
                 * (projections onto the hull), and a near-duplicate on a straight side of the
                 * hull changes which nodes are on the boundary. */
                if (!inside_hull(sp, qx[q], qy[q])) {
                    continue;
                }
                for (int i = 0; i < m; ++i) {
                    double now = w2[i * QUERIES + q] + (i == k ? w2[m * QUERIES + q] : 0.0);
                    c->density = fmax(c->density, fabs(now - w[i * QUERIES + q]));
                    c->density_ratio = fmax(c->density_ratio,
                                            fabs(now - w[i * QUERIES + q]) / (eps / sp->spacing));
                }
            }
            cb_solver_destroy(more.s);
        }
    }
}

static void check_method(cb_solver_kind kind, int variant)
{
    const promise *p = NULL;
    for (size_t i = 0; i < sizeof PROMISES / sizeof PROMISES[0]; ++i) {
        p = PROMISES[i].kind == kind && PROMISES[i].variant == variant ? &PROMISES[i] : p;
    }
    assert_non_null(p);
    knn_k = variant == 2 ? 1 : 0;
    char seed_name[64];
    snprintf(seed_name, sizeof seed_name, "%s/%d", cb_solver_kind_name(kind), variant);
    cb_prng r = cb_test_prng(seed_name);
    criteria c;
    memset(&c, 0, sizeof c);
    for (int l = 0; l < layout_count(); ++l) {
        float xy[2 * CB_SOLVER_MAX_NODES];
        int m, dim;
        layout_for(&r, kind, variant, l, xy, &m, &dim);
        space sp;
        if (!make_space(&sp, kind, xy, m, dim)) {
            return;
        }
        measure_layout(&c, &r, &sp, kind);
        cb_solver_destroy(sp.s);
    }
    double mean_local = c.local_count ? c.local_sum / (double)c.local_count : 0;
    /* The docs table row. */
    char density[48];
    snprintf(density, sizeof density, kind == CB_SOLVER_KIND_BILINEAR_2D ? "n/a" : "%.1e (%.2g)",
             c.density, c.density_ratio);
    cb_test_note("| %s | %s | %.1e | %.1e | %.1e | %.1e / %.1e | %.1f / %d | %.1e | %s | %.1e |",
                 cb_solver_kind_name(kind), p->layouts, c.exact, c.unity, c.bounds + 0.0,
                 c.continuity, c.coarse, mean_local, c.local_max, c.monotone, density, c.linear);

    const char *name = cb_solver_kind_name(kind);
    CB_CHECK(c.exact <= p->exact, "%s: not exact at the nodes (%.3g)", name, c.exact);
    CB_CHECK(c.unity <= 2e-6, "%s: weights sum to 1 within %.3g", name, c.unity);
    CB_CHECK(c.bounds <= 0.0, "%s: a weight leaves [0, 1] by %.3g", name, c.bounds);
    if (p->jump > 0) {
        CB_CHECK(c.continuity <= p->jump, "%s: a jump of %.3g is left after bisection", name,
                 c.continuity);
    }
    if (p->locality > 0) {
        CB_CHECK(c.local_max <= p->locality, "%s: %d nodes with weight", name, c.local_max);
    }
    if (p->monotone > 0) {
        CB_CHECK(c.monotone <= p->monotone, "%s: weight rises by %.3g along a ray", name,
                 c.monotone);
    }
    if (p->density > 0) {
        CB_CHECK(c.density_ratio <= p->density,
                 "%s: a near-duplicate node changes weights by %.3g (%.3g x eps / spacing)", name,
                 c.density, c.density_ratio);
    }
    if (p->linear > 0) {
        CB_CHECK(c.linear <= p->linear, "%s: sum w p misses q by %.3g radius", name, c.linear);
    }
}

#define METHOD_TEST(fn, kind, variant)                                                             \
    static void fn(void **state)                                                                   \
    {                                                                                              \
        (void)state;                                                                               \
        check_method(kind, variant);                                                               \
    }

METHOD_TEST(solver_criteria_linear_1d, CB_SOLVER_KIND_LINEAR_1D, 0)
METHOD_TEST(solver_criteria_simple_directional, CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, 0)
METHOD_TEST(solver_criteria_simple_directional_no_idle, CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, 1)
METHOD_TEST(solver_criteria_freeform_directional, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, 0)
METHOD_TEST(solver_criteria_freeform_directional_no_idle, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, 1)
METHOD_TEST(solver_criteria_freeform_cartesian, CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D, 0)
METHOD_TEST(solver_criteria_delaunay, CB_SOLVER_KIND_DELAUNAY_2D, 0)
METHOD_TEST(solver_criteria_bilinear, CB_SOLVER_KIND_BILINEAR_2D, 0)
METHOD_TEST(solver_criteria_idw, CB_SOLVER_KIND_IDW, 0)
METHOD_TEST(solver_criteria_knn_idw, CB_SOLVER_KIND_KNN_IDW, 0)
METHOD_TEST(solver_criteria_knn_idw_k1, CB_SOLVER_KIND_KNN_IDW, 2)
METHOD_TEST(solver_criteria_rbf, CB_SOLVER_KIND_RBF, 0)
METHOD_TEST(solver_criteria_natural_neighbor, CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D, 0)

/* DIRECT has no parameter space geometry: its criteria are on the parameters themselves. The
 * weights are the clamped parameters normalized: proportional, in [0, 1], summing to 1 unless
 * every parameter is <= 0 (then all 0), a unit vector gives itself, and only the nodes with a
 * positive parameter get weight. */
static void solver_criteria_direct(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (uint32_t m = 1; m <= 16; ++m) {
        cb_solver_desc d = {.kind = CB_SOLVER_KIND_DIRECT, .node_count = m};
        cb_solver *s;
        assert_int_equal(cb_solver_create(&d, &s, NULL), CB_OK);
        enum { N = 300 };
        static float cols[16][N], w[16 * N];
        const float *c[16];
        for (uint32_t k = 0; k < m; ++k) {
            for (int q = 0; q < N; ++q) {
                cols[k][q] =
                    q < (int)m ? (q == (int)k ? 1.0f : 0.0f) : cb_prng_range(&r, -1.0f, 3.0f);
            }
            c[k] = cols[k];
        }
        assert_int_equal(cb_solver_evaluate(s, c, N, N, w, NULL), CB_OK);
        for (int q = 0; q < N; ++q) {
            double sum = 0, psum = 0;
            for (uint32_t k = 0; k < m; ++k) {
                psum += fmax(cols[k][q], 0.0);
            }
            for (uint32_t k = 0; k < m; ++k) {
                float v = w[k * N + q];
                CB_CHECK(v >= 0 && v <= 1, "direct: weight %g", (double)v);
                CB_CHECK((v > 0) == (cols[k][q] > 0), "direct: locality");
                if (psum > 0) {
                    CB_CHECK(fabs(v - fmax(cols[k][q], 0.0) / psum) < 2e-7, "direct: proportion");
                }
                sum += v;
            }
            CB_CHECK(psum > 0 ? fabs(sum - 1) < 2e-6 : sum == 0, "direct: sum %g", sum);
        }
        cb_solver_destroy(s);
    }
    cb_test_note(
        "| direct | parameters | exact | 1 (0 when all <= 0) | in [0, 1] | continuous in the "
        "parameters | only nodes with a positive parameter | - | - | - |");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(solver_criteria_linear_1d),
        cmocka_unit_test(solver_criteria_simple_directional),
        cmocka_unit_test(solver_criteria_simple_directional_no_idle),
        cmocka_unit_test(solver_criteria_freeform_directional),
        cmocka_unit_test(solver_criteria_freeform_directional_no_idle),
        cmocka_unit_test(solver_criteria_freeform_cartesian),
        cmocka_unit_test(solver_criteria_delaunay),
        cmocka_unit_test(solver_criteria_bilinear),
        cmocka_unit_test(solver_criteria_direct),
        cmocka_unit_test(solver_criteria_idw),
        cmocka_unit_test(solver_criteria_knn_idw),
        cmocka_unit_test(solver_criteria_knn_idw_k1),
        cmocka_unit_test(solver_criteria_rbf),
        cmocka_unit_test(solver_criteria_natural_neighbor),
    };
    return CB_RUN_TESTS(tests);
}
