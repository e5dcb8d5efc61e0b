/* Double-precision, one-query-at-a-time reference implementations of every solver, written
 * from the method descriptions (docs/solvers.md), not from the library's code: they share no
 * precomputed tables, and the geometric ones use independent algorithms (brute-force Delaunay
 * candidates, Voronoi cells by half-plane clipping, a fresh linear solve per RBF query).
 * The accuracy tests compare both library paths with these. */
#ifndef CROWDBLEND_TEST_SOLVER_REF_H
#define CROWDBLEND_TEST_SOLVER_REF_H

#include <stdbool.h>
#include <stddef.h>

#include "crowdblend/solver.h"

/* A blend space as the references see it: the desc's kind and options, nodes in double. */
typedef struct ref_space {
    cb_solver_kind kind;
    int m;
    int dim;
    double x[CB_SOLVER_MAX_NODES], y[CB_SOLVER_MAX_NODES];
    double power;               /* idw, knn */
    int k;                      /* knn */
    cb_rbf_kernel kernel;       /* rbf */
    double epsilon;             /* rbf gaussian (0: the documented default) */
    int nx, ny;                 /* bilinear */
    double far_cx, far_cy, far; /* the documented pull-in of far queries */
} ref_space;

/* Copies a desc (defaults resolved as documented in solver.h). */
ref_space ref_space_from_desc(const cb_solver_desc *desc);

/* The query as the solvers see it (solver.h): non-finite -> origin (returns false), far ->
 * pulled in towards the layout. q has 2 coordinates (y ignored for 1D). */
bool ref_sanitize(const ref_space *s, const double *q, double out[2]);

/* Weights of one query into w[0..m). For DIRECT, q holds m parameters. Non-finite queries are
 * evaluated at the origin, as documented; returns false for them. */
bool ref_weights(const ref_space *s, const double *q, double *w);

/* For DELAUNAY_2D: the references' candidate answers for a sanitized query. Co-circular
 * layouts have several valid Delaunay triangulations, hence several correct answers inside
 * their cells; this fills up to max candidates (each m weights) and returns how many. Outside
 * the hull and for collinear layouts there is exactly one.
 * *cond (optional): the weights' condition at q, kappa: a float evaluation that rounds its
 * inputs and intermediates (relative 2^-24 each) moves a weight by a small multiple of
 * 2^-24 kappa. From the geometry of the answer: the knot spacing along a collinear layout's
 * line, the hull edge's length outside the hull, the triangle's shape inside (the largest
 * over the candidates); 1 or more. */
int ref_delaunay_candidates(const ref_space *s, const double *q, double *w, int max, double *cond);

/* What a float evaluation of Delaunay weights may err by, in units of 2^-24 kappa, to first
 * order. Inside a triangle: u1 = d x b from rounded differences d = q - p0 and b, two products
 * and their difference errs by at most 4 units of |d| |b| (Cauchy-Schwarz bounds
 * |dx| |by| + |dy| |bx| by |d| |b|), the area a x b by 4 of |a| |b|, so l1 = u1 / (a x b) by
 * 4 (|d| |b| + l1 |a| |b|) / |a x b| + 1 unit; l0 = 1 - l1 - l2 adds both and 2 roundings, the
 * renormalization 2 more: at most 4 kappa + 6 <= 10 kappa (kappa >= 1). The hull projection
 * (3 kappa + 2) and the collinear hat weights (4 kappa + 3) stay inside it. Measured at most
 * 2.1 over seeds 0..50, both paths (docs/solvers.md). */
#define REF_KAPPA_ULPS 10.0

/* For NATURAL_NEIGHBOR_2D: the weights' condition at a sanitized query, with the Delaunay
 * rule: the largest triangle condition (2 r L + L^2) / |det| over the Delaunay triangles whose
 * circumcircle holds q (the ones whose circumcentres the Sibson areas are summed from); along
 * a collinear layout, the knot spacing's. A sliver on a nearly straight stretch of the hull
 * (three nodes 1e-4 off a line 3 long) puts 2e4 there. */
double ref_natural_neighbor_condition(const ref_space *s, const double *q);

/* For RBF: the weights' condition at a sanitized query, kappa, such that a float evaluation
 * of the documented method (coefficients A^-1 of the augmented system rounded to float, the
 * kernel values and the basis b(q) in float, M + poly fused accumulations, then the clamp and
 * the renormalization) errs by at most about 2^-24 kappa, to first order. With n = M + poly
 * terms, a_i = sum_k |(A^-1)_ik| s_k(q), s_k = |phi| + |r phi'(r)| (a relative rounding of the
 * distance r moves phi by r phi'), S the sum of the clamped exact weights:
 *     kappa = (n + REF_RBF_ROUNDINGS) (max_i a_i + sum_i a_i) / S   (at least 1).
 * Each of the n accumulations rounds the running sum (at most sum_k |terms|); a coefficient's
 * own rounding and the kernel's operations (the distance, one sqrt, log or exp, products)
 * are REF_RBF_ROUNDINGS more. a_i is large where the system is ill-conditioned: nodes much
 * closer together than the layout's size (clustered 1D thresholds) give inverse entries of
 * 1e4-1e5 against kernel values of 10-100, sums of 1e6 that cancel to a weight below 1. */
double ref_rbf_condition(const ref_space *s, const double *q);
#define REF_RBF_ROUNDINGS 4.0

/* Sum of |a - b| over m weights, and the largest |a - b|. */
double ref_max_diff(const double *a, const float *b, int m);

#endif
