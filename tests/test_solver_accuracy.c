/* Accuracy of every solver against its double-precision reference (tests/common/solver_ref.c).
 *
 * One body, built twice (tests/meson.build): CB_TEST_REF=0 checks the SIMD batch path
 * (cb_solver_evaluate), =1 the scalar per-query path (cb_solver_evaluate_ref). Each method runs
 * over many random locomotion-like layouts (and grids, thresholds, collinear and scattered sets
 * where the method takes them) with random queries inside and outside the layout plus the hard
 * ones: every node, the origin, points on the segments between nodes, far away, NaN and Inf.
 * The largest absolute weight error is asserted against a bound per method, or per query
 * against the weights' condition there where the method's float error depends on the layout;
 * the bounds and the reason for each are in the table below, the measured maxima in
 * docs/solvers.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/solver.h"
#include "layouts.h"
#include "solver_ref.h"
#include "test_util.h"

#if CB_TEST_REF
#define EVALUATE cb_solver_evaluate_ref
#define PATH "scalar"
#else
#define EVALUATE cb_solver_evaluate
#define PATH "simd"
#endif

enum { QUERIES = 1500, LAYOUTS = 24 };

/* Bounds on the largest absolute weight error over all layouts and queries: about twice the
 * largest value measured over the three build configurations and both paths (float weights
 * in [0, 1]: 1 ulp at 1 is 1.2e-7; the measured maxima are in docs/solvers.md):
 *   1D, bilinear, direct, cartesian bands: a few roundings per weight (measured <= 2.9e-7).
 *   IDW: ratio of squared distances, then a normalization (3.8e-7).
 *   simple directional: the sector solve and the shares (5.5e-7).
 *   freeform directional: angles (vector atan2, 2.7e-7 rad) times band slopes ~ 1 / (angle
 *     between nodes), then a normalization (9.7e-7).
 * Delaunay, KNN, RBF and natural neighbours are checked per query against their own condition
 * instead (below): their float error depends on the layout and the query, not on the method
 * alone, and fixed bounds failed random seeds with correct solvers. */
typedef struct bound {
    cb_solver_kind kind;
    double main, second;
    /* Near queries are checked against their own condition: main and second are in units of
     * 2^-24 kappa(q) (solver_ref.h), not absolute. */
    bool per_condition;
} bound;

/* Per condition: a fixed bound cannot hold for every layout, because what
 * float arithmetic can resolve depends on the geometry around the query.
 * Delaunay: along a collinear layout the weights move by du / h for a rounding du of the
 * position along the line (about 2^-24 times the query's distance from the line's origin) and
 * h the spacing of the two knots around it: random collinear nodes 0.05 apart put an error of
 * 3e-6 within reach of a correct float solver (seeds 2 and 6 broke the old 1e-6 that way).
 * Inside, a thin triangle costs 1 / sin(smallest angle); outside, the hull edge's length.
 * kappa(q) is that sensitivity, computed by the reference from the geometry of its answer
 * (tests/common/solver_ref.c), and each weight error must stay within
 * REF_KAPPA_ULPS * 2^-24 * kappa(q): one rule for rings, grids, collinear and scattered nodes.
 * RBF: each weight is an (M + 3)-term sum of float inverse-matrix entries times float kernel
 * values. Where nodes lie much closer together than the layout's size (random 1D thresholds
 * 0.006 apart, seeds 44 and 47), the entries reach 5e4 against kernel values of 64: terms of
 * 3.5e6 that cancel to a weight of 0.2, so one rounding of each term is already 0.2 (the old
 * fixed 3e-3 saw 0.49). kappa(q) (ref_rbf_condition) is that first-order sum of the terms'
 * magnitudes over the weights, with their rounding count folded in: the bound is 1 unit.
 * KNN: the kept terms d_i^-p minus the cut-off term, renormalized (knn_condition): where the
 * k-th and (k+1)-th distances nearly agree, and far out where all do, the difference keeps
 * little of each term (seed 10: 4.5e-6 near; seed 1: 2.7e-4 far, both correct). 1 unit.
 * natural neighbours: the Delaunay kappa of the triangles whose circumcircle holds q
 * (ref_natural_neighbor_condition): a sliver on a nearly straight stretch of the hull (seed 8:
 * three nodes 1.3e-4 off a line 3 long, kappa 2e4) put 5e-4 within reach of a correct solver,
 * and jittered rings broke the old fixed 8e-6 too (seeds 28, 37, 50: up to 3.2e-5). The
 * circumcentre sums round more often than barycentric coordinates, by a count not derived:
 * NN_KAPPA_ULPS.
 * second: random scattered nodes (thin triangles) and, for RBF, clustered 1D thresholds: the
 * same per-condition rule as main, tracked apart.
 * far: queries pulled in to 1000 layout sizes (4 for RBF) in float, checked against an
 * allowance per query (far_allowance): the near one, plus what rounding the pulled-in
 * coordinates moves the weights by. */

/* Natural neighbours, in units of 2^-24 kappa(q): about twice the largest measured over seeds
 * 0..50 (docs/solvers.md), as the fixed bounds above. */
#define NN_KAPPA_ULPS 55.0

static const bound BOUNDS[] = {
    {CB_SOLVER_KIND_LINEAR_1D, 4e-7, 0},
    {CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, 1.1e-6, 0},
    {CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, 2e-6, 0},
    {CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D, 6e-7, 0},
    {CB_SOLVER_KIND_DELAUNAY_2D, REF_KAPPA_ULPS, REF_KAPPA_ULPS, true},
    {CB_SOLVER_KIND_BILINEAR_2D, 4.5e-7, 0},
    {CB_SOLVER_KIND_DIRECT, 2.5e-7, 0},
    {CB_SOLVER_KIND_IDW, 8e-7, 0},
    {CB_SOLVER_KIND_KNN_IDW, 1, 0, true},
    {CB_SOLVER_KIND_RBF, 1, 1, true},
    {CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D, NN_KAPPA_ULPS, NN_KAPPA_ULPS, true},
};

/* Far queries: the solver pulls them in in float (solver.h) and its first difference q - p
 * rounds at the pulled-in magnitude: the centre's subtraction, the scale, the product, the
 * centre's addition and q - p, each a relative 2^-24 of |q| in each coordinate. */
#define FAR_ROUNDINGS 5.0

static const bound *bound_for(cb_solver_kind k)
{
    for (size_t i = 0; i < sizeof BOUNDS / sizeof BOUNDS[0]; ++i) {
        if (BOUNDS[i].kind == k) {
            return &BOUNDS[i];
        }
    }
    return &BOUNDS[0];
}

static double second_bound_of(cb_solver_kind k)
{
    return bound_for(k)->second;
}

static double bound_of(cb_solver_kind k)
{
    return bound_for(k)->main;
}

/* Far-query errors of the current test case, a second family of layouts (random scattered
 * nodes; for RBF, 1D thresholds) tracked apart because its conditioning is worse, and how
 * many offenders the case has printed. */
static cb_err_track far_errors, second_errors;
static cb_err_track *const far_track = &far_errors;
static cb_err_track *const second_track = &second_errors;
static int shown;

/* Queries for a layout: random in a disc of twice the layout's radius (about a quarter
 * outside it), then the hard ones; the far ones (pulled in, solver.h) come last, from index
 * *n_near on. Returns the count. */
static size_t make_queries(cb_prng *r, const float *xy, int m, int dim, float *qx, float *qy,
                           size_t max, size_t *n_near)
{
    float rad = layout_radius(xy, m, dim);
    rad = rad > 0 ? rad : 1.0f;
    size_t n = 0;
    *n_near = max;
    for (; n < QUERIES; ++n) {
        double a = cb_prng_double(r) * 6.283185307179586, d = 2.0 * rad * sqrt(cb_prng_double(r));
        qx[n] = (float)(d * cos(a));
        qy[n] = dim == 2 ? (float)(d * sin(a)) : 0.0f;
    }
    for (int i = 0; i < m && n + 3 < max; ++i) {
        /* The node itself, and points on the segments to the next node and to the origin. */
        qx[n] = xy[i * dim], qy[n] = dim == 2 ? xy[i * dim + 1] : 0.0f, ++n;
        int j = (i + 1) % m;
        float f = cb_prng_range(r, 0.0f, 1.0f);
        qx[n] = xy[i * dim] + f * (xy[j * dim] - xy[i * dim]);
        qy[n] = dim == 2 ? xy[i * dim + 1] + f * (xy[j * dim + 1] - xy[i * dim + 1]) : 0.0f;
        ++n;
        qx[n] = f * xy[i * dim], qy[n] = dim == 2 ? f * xy[i * dim + 1] : 0.0f, ++n;
    }
    static const float hard[][2] = {{0.0f, 0.0f},      {NAN, 1.0f},       {INFINITY, 0.0f},
                                    {0.5f, -INFINITY}, {1e-30f, -1e-30f}, {1e6f, -3e6f},
                                    {-1e20f, 1e19f},   {3e30f, 2e30f}};
    enum { HARD = sizeof hard / sizeof hard[0], FAR = 3 };
    for (size_t k = 0; k < HARD && n < max; ++k, ++n) {
        if (k == HARD - FAR) {
            *n_near = n;
        }
        qx[n] = hard[k][0], qy[n] = dim == 2 ? hard[k][1] : 0.0f;
    }
    return n;
}

/* KNN weights are d_i^-p - d_c^-p (d_c the (k+1)-th smallest distance), renormalized. Far out
 * the distances agree to 1e-3 and the difference keeps 1e-3 of each term: a term's own
 * rounding, relative (p + 4) 2^-24 (the squared distance's two roundings scaled by p / 2 and
 * then log2, the product, exp2 and the difference), moves weight i by that times
 * (T_i + T_c + w_i sum_j (T_j + T_c)) / sum_j (T_j - T_c) (T_c = 0 when k covers every node).
 * Returns that sensitivity, in units of 2^-24 (at least 1; a query on a node: 1). */
static double knn_condition(const ref_space *rs, const double *qs)
{
    double d[CB_SOLVER_MAX_NODES], sorted[CB_SOLVER_MAX_NODES];
    int m = rs->m;
    for (int i = 0; i < m; ++i) {
        d[i] = sorted[i] = hypot(qs[0] - rs->x[i], qs[1] - rs->y[i]);
    }
    for (int i = 1; i < m; ++i) {
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; --j) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1], sorted[j - 1] = t;
        }
    }
    double tc = rs->k < m ? pow(sorted[rs->k], -rs->power) : 0.0, net = 0, gross = 0, top = 0;
    for (int i = 0; i < m; ++i) {
        double t = pow(d[i], -rs->power);
        if (t > tc) {
            net += t - tc, gross += t + tc, top = fmax(top, t + tc);
        }
    }
    return net > 0 ? fmax(1.0, (rs->power + 4) * (top + gross) / net) : 1.0;
}

/* The error of one query against the reference (several candidates where the method is
 * legitimately ambiguous); *cond: the weights' condition at q where the reference gives it
 * (Delaunay, RBF, KNN), else 1. */
static double query_error(const ref_space *rs, const double *q, const float *got, double *cond)
{
    enum { MAXC = 64 };
    static double want[CB_SOLVER_MAX_NODES * MAXC];
    int m = rs->m;
    *cond = 1.0;
    if (rs->kind == CB_SOLVER_KIND_DELAUNAY_2D) {
        /* Co-circular layouts have several correct triangulations: the nearest candidate. */
        double qq[2];
        ref_sanitize(rs, q, qq);
        int nc = ref_delaunay_candidates(rs, qq, want, MAXC, cond);
        CB_CHECK(nc > 0, "delaunay: no reference candidate for (%g, %g)", qq[0], qq[1]);
        double e = INFINITY;
        for (int k = 0; k < nc; ++k) {
            e = fmin(e, ref_max_diff(want + (size_t)k * m, got, m));
        }
        return e;
    }
    ref_weights(rs, q, want);
    double e = ref_max_diff(want, got, m);
    if (rs->kind == CB_SOLVER_KIND_RBF || rs->kind == CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D) {
        double qs[2];
        ref_sanitize(rs, q, qs);
        *cond = rs->kind == CB_SOLVER_KIND_RBF ? ref_rbf_condition(rs, qs)
                                               : ref_natural_neighbor_condition(rs, qs);
    }
    if (rs->kind == CB_SOLVER_KIND_KNN_IDW) {
        double qs[2];
        ref_sanitize(rs, q, qs);
        *cond = knn_condition(rs, qs);
    }
    if (rs->kind == CB_SOLVER_KIND_KNN_IDW && rs->k < m) {
        /* More than k nodes tied at the smallest distance (within float resolution) is the
         * documented discontinuity: there the tied nodes share the weight evenly. */
        double qs[2], d[CB_SOLVER_MAX_NODES], dmin = INFINITY;
        ref_sanitize(rs, q, qs);
        for (int i = 0; i < m; ++i) {
            d[i] = hypot(qs[0] - rs->x[i], qs[1] - rs->y[i]);
            dmin = fmin(dmin, d[i]);
        }
        int tied = 0;
        for (int i = 0; i < m; ++i) {
            tied += d[i] <= dmin * (1 + 1e-6);
        }
        if (tied > rs->k) {
            for (int i = 0; i < m; ++i) {
                want[i] = d[i] <= dmin * (1 + 1e-6) ? 1.0 / tied : 0.0;
            }
            e = fmin(e, ref_max_diff(want, got, m));
        }
    }
    if (rs->kind == CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D && isfinite(q[0]) && isfinite(q[1])) {
        /* A query exactly in a node's direction is on a sector boundary, where the method is
         * discontinuous next to a sector wider than 180 degrees: either side is correct. */
        for (int side = -1; side <= 1; side += 2) {
            double a = side * 1e-7, c = cos(a), sn = sin(a);
            double qr[2] = {q[0] * c - q[1] * sn, q[0] * sn + q[1] * c};
            ref_weights(rs, qr, want);
            e = fmin(e, ref_max_diff(want, got, m));
        }
    }
    return e;
}

/* What a far query's weights may err by: the bound of a near query (per condition where the
 * method has one), plus FAR_ROUNDINGS roundings of each pulled-in coordinate u (relative
 * 2^-24 of |u|) times the weights' sensitivity to it, |dw/du| by a one-sided difference of
 * the reference (inwards, so the step is not pulled in again). Far out the weights of the
 * gradient methods are differences of nearly equal terms (KNN: distances 1000 layout sizes
 * away; cartesian bands: a projection across an edge's normal), and this is what float can
 * resolve of them. */
static double far_allowance(const ref_space *rs, const double *q, double cond)
{
    const bound *b = bound_for(rs->kind);
    double allow = b->per_condition ? b->main * 0x1p-24 * cond : b->main;
    double qs[2], w0[CB_SOLVER_MAX_NODES], w1[CB_SOLVER_MAX_NODES];
    ref_sanitize(rs, q, qs);
    ref_weights(rs, qs, w0);
    for (int k = 0; k < rs->dim; ++k) {
        double h = 1e-6 * fmax(fabs(qs[k]), rs->far * 1e-3), qh[2] = {qs[0], qs[1]};
        qh[k] -= qs[k] - rs->far_cx * (k == 0) - rs->far_cy * (k == 1) > 0 ? h : -h;
        ref_weights(rs, qh, w1);
        double slope = 0;
        for (int i = 0; i < rs->m; ++i) {
            slope = fmax(slope, fabs(w1[i] - w0[i]) / h);
        }
        allow += FAR_ROUNDINGS * 0x1p-24 * fabs(qs[k]) * slope;
    }
    return allow;
}

/* Evaluates the layout's queries with the path under test and tracks the error against the
 * reference: near is every query but the far ones, which go to far. */
static void check_layout(cb_err_track *t, cb_err_track *t_far, const cb_solver_desc *desc,
                         cb_prng *r)
{
    cb_solver *s = NULL;
    cb_error err = {0};
    cb_result res = cb_solver_create(desc, &s, &err);
    CB_CHECK(res == CB_OK, "create %s: %s", cb_solver_kind_name(desc->kind), err.message);
    ref_space rs = ref_space_from_desc(desc);
    int m = (int)desc->node_count;
    enum { MAXQ = QUERIES + 3 * CB_SOLVER_MAX_NODES + 16 };
    static float qx[MAXQ], qy[MAXQ], w[CB_SOLVER_MAX_NODES * (MAXQ + 3)];
    static float cols[CB_SOLVER_MAX_NODES][MAXQ];
    size_t n, n_near = 0;
    const float *params[CB_SOLVER_MAX_NODES];
    if (desc->kind == CB_SOLVER_KIND_DIRECT) {
        /* Parameters: mixed signs, zeros, one huge, occasional NaN. */
        n = n_near = QUERIES;
        for (int k = 0; k < m; ++k) {
            for (size_t c = 0; c < n; ++c) {
                float v = cb_prng_range(r, -0.5f, 1.0f);
                cols[k][c] = c % 11 == 0 ? 0.0f : c % 97 == 5 ? 1e20f : c % 89 == 3 ? NAN : v;
            }
            params[k] = cols[k];
        }
    } else {
        n = make_queries(r, desc->nodes, m, (int)rs.dim, qx, qy, MAXQ, &n_near);
        params[0] = qx, params[1] = qy;
    }
    size_t stride = n + 3, nonfinite = 0;
    CB_CHECK(EVALUATE(s, params, n, stride, w, &nonfinite) == CB_OK, "evaluate");
    for (size_t c = 0; c < n; ++c) {
        double q[CB_SOLVER_MAX_NODES];
        for (size_t k = 0; k < cb_solver_param_count(s); ++k) {
            q[k] = params[k][c];
        }
        float got[CB_SOLVER_MAX_NODES];
        for (int i = 0; i < m; ++i) {
            got[i] = w[(size_t)i * stride + c];
        }
        double cond;
        double e = query_error(&rs, q, got, &cond);
        bool near = c < n_near;
        /* Per condition (near queries): the error in units of 2^-24 kappa(q); far ones in
         * units of their allowance. */
        const bound *b = bound_for(desc->kind);
        bool second = t == second_track;
        double v = !near              ? e / far_allowance(&rs, q, cond)
                   : b->per_condition ? e / (0x1p-24 * cond)
                                      : e;
        cb_err_track_add(near ? t : t_far, v, 0.0, c);
        if (v > (!near ? 1.0 : second ? b->second : b->main)) {
            /* Name the first few offenders: layout, query, both weight vectors. */
            if (shown++ < 3) {
                double want[CB_SOLVER_MAX_NODES];
                ref_weights(&rs, q, want);
                cb_test_note("%s: error %.3g (condition %.3g) at query (%g, %g) of a %d-node "
                             "layout:",
                             cb_solver_kind_name(desc->kind), e, cond, q[0],
                             desc->kind == CB_SOLVER_KIND_DIRECT || rs.dim == 1 ? 0.0 : q[1], m);
                for (int i = 0; i < m && rs.kind != CB_SOLVER_KIND_DIRECT; ++i) {
                    cb_test_note("  node %d (%g, %g): got %.7f want %.7f", i, rs.x[i], rs.y[i],
                                 (double)got[i], want[i]);
                }
            }
        }
    }
    cb_solver_destroy(s);
}

static cb_solver_desc desc_of(cb_solver_kind kind, const float *nodes, int m)
{
    return (cb_solver_desc){.kind = kind, .nodes = nodes, .node_count = (uint32_t)m};
}

/* Ring layouts of every shape the property suite uses, plus the 17-node locomotion space. */
static void ring_layouts(cb_err_track *t, cb_solver_kind kind, cb_prng *r, bool two_rings_ok,
                         void (*tweak)(cb_solver_desc *, int))
{
    float xy[2 * CB_SOLVER_MAX_NODES];
    for (int l = 0; l < LAYOUTS; ++l) {
        int dirs = l % 2 ? 8 : 4, rings = two_rings_ok && l % 4 >= 2 ? 2 : 1;
        bool centre = l % 3 != 0, jitter = l % 5 != 0;
        int m = layout_rings(r, dirs, rings, centre, jitter, xy);
        cb_solver_desc d = desc_of(kind, xy, m);
        if (tweak != NULL) {
            tweak(&d, l);
        }
        check_layout(t, far_track, &d, r);
    }
    int m = layout_locomotion17(xy);
    if (two_rings_ok) {
        cb_solver_desc d = desc_of(kind, xy, m);
        check_layout(t, far_track, &d, r);
    }
}

/* Scattered and collinear layouts for the triangulation-based methods. */
static void scattered_layouts(cb_err_track *t, cb_solver_kind kind, cb_prng *r)
{
    float xy[2 * CB_SOLVER_MAX_NODES];
    for (int l = 0; l < 8; ++l) {
        int m = 3 + (int)cb_prng_below(r, 20);
        for (int i = 0; i < m; ++i) {
            xy[2 * i] = cb_prng_range(r, -3.0f, 3.0f);
            xy[2 * i + 1] = cb_prng_range(r, -3.0f, 3.0f);
        }
        cb_solver_desc d = desc_of(kind, xy, m);
        check_layout(second_track, far_track, &d, r);
    }
    for (int l = 0; l < 3; ++l) {
        int m = l + 1 + (l == 2 ? 3 : 0);
        for (int i = 0; i < m; ++i) {
            float s = cb_prng_range(r, -2.0f, 2.0f);
            xy[2 * i] = s * 0.6f + 0.25f, xy[2 * i + 1] = s * 0.8f;
        }
        cb_solver_desc d = desc_of(kind, xy, m);
        check_layout(t, far_track, &d, r);
    }
    for (int l = 0; l < 4; ++l) {
        int m = layout_grid(r, 2 + l % 3, 2 + l / 2, xy);
        cb_solver_desc d = desc_of(kind, xy, m);
        check_layout(t, far_track, &d, r);
    }
}

static void finish(cb_err_track *t, cb_solver_kind kind)
{
    cb_err_track_check(t, bound_of(kind));
    if (second_errors.count > 0) {
        cb_err_track_check(&second_errors, second_bound_of(kind));
    }
    cb_err_track_check(&far_errors, 1.0);
}

/* Starts a test case: resets the side trackers and returns the main one. */
static cb_err_track track(const char *name, const char *second)
{
    static char far_name[96], second_name[96];
    snprintf(far_name, sizeof far_name, "%s %s, far queries", PATH, name);
    snprintf(second_name, sizeof second_name, "%s %s, %s", PATH, name, second);
    shown = 0;
    far_errors = cb_err_track_make(far_name);
    second_errors = cb_err_track_make(second_name);
    static char main_name[96];
    snprintf(main_name, sizeof main_name, "%s %s", PATH, name);
    return cb_err_track_make(main_name);
}

#define TRACK(kind, second) track(#kind, second)

static void solver_accuracy_linear_1d(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(linear_1d, "scattered nodes");
    float th[CB_SOLVER_MAX_NODES];
    for (int l = 0; l < LAYOUTS; ++l) {
        int m = layout_thresholds(&r, 1 + l % 16, l % 3 == 0, th);
        cb_solver_desc d = desc_of(CB_SOLVER_KIND_LINEAR_1D, th, m);
        check_layout(&t, far_track, &d, &r);
    }
    finish(&t, CB_SOLVER_KIND_LINEAR_1D);
}

static void solver_accuracy_simple_directional(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(simple_directional_2d, "scattered nodes");
    ring_layouts(&t, CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, &r, false, NULL);
    /* Sectors wider than 180 degrees, exactly 180, and a lone direction. */
    static const float odd[][8] = {
        {1, 0, 0, 1, 0, 0, -1, 0.2f}, {1, 0, -1, 0, 0, 0, 0, 0}, {0, 0, 2, 1, 0, 0, 0, 0}};
    static const int odd_m[] = {4, 3, 2};
    for (int k = 0; k < 3; ++k) {
        cb_solver_desc d = desc_of(CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D, odd[k], odd_m[k]);
        check_layout(&t, far_track, &d, &r);
    }
    finish(&t, CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D);
}

static void solver_accuracy_freeform_directional(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(freeform_directional_2d, "scattered nodes");
    ring_layouts(&t, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, &r, true, NULL);
    finish(&t, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D);
}

static void solver_accuracy_freeform_cartesian(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(freeform_cartesian_2d, "scattered nodes");
    ring_layouts(&t, CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D, &r, true, NULL);
    finish(&t, CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D);
}

static void solver_accuracy_delaunay(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    /* Near queries in units of 2^-24 kappa(q): see BOUNDS. */
    cb_test_note("delaunay_2d: near-query errors below are in units of 2^-24 kappa(q)");
    cb_err_track t = TRACK(delaunay_2d, "scattered nodes");
    ring_layouts(&t, CB_SOLVER_KIND_DELAUNAY_2D, &r, true, NULL);
    scattered_layouts(&t, CB_SOLVER_KIND_DELAUNAY_2D, &r);
    finish(&t, CB_SOLVER_KIND_DELAUNAY_2D);
}

static void solver_accuracy_bilinear(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(bilinear_2d, "scattered nodes");
    float xy[2 * CB_SOLVER_MAX_NODES];
    for (int l = 0; l < LAYOUTS; ++l) {
        int m = layout_grid(&r, 1 + l % 5, 1 + (l / 5) % 5, xy);
        cb_solver_desc d = desc_of(CB_SOLVER_KIND_BILINEAR_2D, xy, m);
        check_layout(&t, far_track, &d, &r);
    }
    finish(&t, CB_SOLVER_KIND_BILINEAR_2D);
}

static void solver_accuracy_direct(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(direct, "scattered nodes");
    for (int m = 1; m <= 16; ++m) {
        cb_solver_desc d = desc_of(CB_SOLVER_KIND_DIRECT, NULL, m);
        check_layout(&t, far_track, &d, &r);
    }
    finish(&t, CB_SOLVER_KIND_DIRECT);
}

static void idw_powers(cb_solver_desc *d, int l)
{
    static const float powers[] = {2.0f, 1.0f, 3.5f, 6.0f};
    d->idw_power = powers[l % 4];
    d->knn_k = (uint32_t)(1 + l % 9);
}

static void solver_accuracy_idw(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(idw, "scattered nodes");
    ring_layouts(&t, CB_SOLVER_KIND_IDW, &r, true, idw_powers);
    float th[CB_SOLVER_MAX_NODES];
    int m = layout_thresholds(&r, 7, false, th);
    cb_solver_desc d = {.kind = CB_SOLVER_KIND_IDW, .nodes = th, .node_count = 7, .dimension = 1};
    (void)m;
    check_layout(&t, far_track, &d, &r);
    finish(&t, CB_SOLVER_KIND_IDW);
}

static void solver_accuracy_knn_idw(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(knn_idw, "scattered nodes");
    ring_layouts(&t, CB_SOLVER_KIND_KNN_IDW, &r, true, idw_powers);
    finish(&t, CB_SOLVER_KIND_KNN_IDW);
}

static void rbf_kernels(cb_solver_desc *d, int l)
{
    d->rbf_kernel = (cb_rbf_kernel)(1 + l % 4);
}

static void solver_accuracy_rbf(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(rbf, "1D thresholds");
    ring_layouts(&t, CB_SOLVER_KIND_RBF, &r, true, rbf_kernels);
    float th[CB_SOLVER_MAX_NODES];
    layout_thresholds(&r, 6, false, th);
    for (int k = 1; k < CB_RBF_KERNEL_COUNT; ++k) {
        cb_solver_desc d = {.kind = CB_SOLVER_KIND_RBF,
                            .nodes = th,
                            .node_count = 6,
                            .dimension = 1,
                            .rbf_kernel = (cb_rbf_kernel)k};
        check_layout(second_track, far_track, &d, &r);
    }
    finish(&t, CB_SOLVER_KIND_RBF);
}

static void solver_accuracy_natural_neighbor(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track t = TRACK(natural_neighbor_2d, "scattered nodes");
    ring_layouts(&t, CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D, &r, true, NULL);
    scattered_layouts(&t, CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D, &r);
    finish(&t, CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(solver_accuracy_linear_1d),
        cmocka_unit_test(solver_accuracy_simple_directional),
        cmocka_unit_test(solver_accuracy_freeform_directional),
        cmocka_unit_test(solver_accuracy_freeform_cartesian),
        cmocka_unit_test(solver_accuracy_delaunay),
        cmocka_unit_test(solver_accuracy_bilinear),
        cmocka_unit_test(solver_accuracy_direct),
        cmocka_unit_test(solver_accuracy_idw),
        cmocka_unit_test(solver_accuracy_knn_idw),
        cmocka_unit_test(solver_accuracy_rbf),
        cmocka_unit_test(solver_accuracy_natural_neighbor),
    };
    return CB_RUN_TESTS(tests);
}
