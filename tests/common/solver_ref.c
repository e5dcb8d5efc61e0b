#include "solver_ref.h"

#include <math.h>

#include "solvers/solver_impl.h"
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

ref_space ref_space_from_desc(const cb_solver_desc *desc)
{
    cb_solver_desc d = cb_solver_query_desc(desc);
    ref_space s;
    memset(&s, 0, sizeof s);
    s.kind = d.kind;
    s.m = (int)d.node_count;
    s.dim = (int)d.dimension;
    for (int i = 0; i < s.m && d.nodes != NULL; ++i) {
        s.x[i] = d.nodes[i * s.dim];
        s.y[i] = s.dim == 2 ? d.nodes[i * s.dim + 1] : 0.0;
    }
    s.power = d.idw_power;
    s.k = (int)d.knn_k;
    s.kernel = d.rbf_kernel;
    s.epsilon = d.rbf_epsilon;
    s.nx = (int)d.grid_nx;
    s.ny = (int)d.grid_ny;
    if (s.kind == CB_SOLVER_KIND_BILINEAR_2D && s.nx == 0) {
        if (s.ny != 0) {
            s.nx = s.m / s.ny;
        } else {
            s.nx = 1;
            while (s.nx < s.m && s.y[s.nx] == s.y[0]) {
                ++s.nx;
            }
        }
    }
    if (s.kind == CB_SOLVER_KIND_BILINEAR_2D && s.ny == 0) {
        s.ny = s.m / s.nx;
    }
    if (s.kind != CB_SOLVER_KIND_DIRECT) {
        /* The limits are defined in float; the pull-in itself is done in double below. */
        float cx, cy, far;
        cb_solver_far_limits(d.nodes, d.node_count, d.dimension,
                             s.kind == CB_SOLVER_KIND_RBF ? CB_SOLVER_FAR_SIZES_RBF
                                                          : CB_SOLVER_FAR_SIZES,
                             &cx, &cy, &far);
        s.far_cx = cx, s.far_cy = cy, s.far = far;
    }
    return s;
}

double ref_max_diff(const double *a, const float *b, int m)
{
    double e = 0.0;
    for (int i = 0; i < m; ++i) {
        double d = fabs(a[i] - (double)b[i]);
        e = isnan(d) || d > e ? (isnan(d) ? INFINITY : d) : e;
    }
    return e;
}

static double cross3(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

static double unsigned_angle(double ax, double ay, double bx, double by)
{
    if ((ax == 0 && ay == 0) || (bx == 0 && by == 0)) {
        return 0.0;
    }
    return atan2(fabs(ax * by - ay * bx), ax * bx + ay * by);
}

/* ------------------------------------------------------------------------------------------ */
/* 1D: piecewise linear over the distinct thresholds; equal thresholds form steps.             */

static void linear_1d(const ref_space *s, double q, double *w)
{
    int idx[CB_SOLVER_MAX_NODES];
    for (int i = 0; i < s->m; ++i) {
        idx[i] = i;
    }
    /* Stable sort by threshold. */
    for (int i = 1; i < s->m; ++i) {
        for (int j = i; j > 0 && s->x[idx[j - 1]] > s->x[idx[j]]; --j) {
            int t = idx[j];
            idx[j] = idx[j - 1], idx[j - 1] = t;
        }
    }
    memset(w, 0, sizeof(double) * (size_t)s->m);
    /* Groups of equal thresholds: start positions in idx. */
    int start[CB_SOLVER_MAX_NODES + 1], ng = 0;
    for (int i = 0; i < s->m; ++i) {
        if (i == 0 || s->x[idx[i]] != s->x[idx[i - 1]]) {
            start[ng++] = i;
        }
    }
    start[ng] = s->m;
    double gw[CB_SOLVER_MAX_NODES] = {0};
    double t0 = s->x[idx[start[0]]], tn = s->x[idx[start[ng - 1]]];
    if (q <= t0) {
        gw[0] = 1.0;
    } else if (q >= tn) {
        gw[ng - 1] = 1.0;
    } else {
        for (int g = 0; g + 1 < ng; ++g) {
            double a = s->x[idx[start[g]]], b = s->x[idx[start[g + 1]]];
            if (q >= a && q < b) {
                double f = (q - a) / (b - a);
                gw[g] = 1.0 - f;
                gw[g + 1] = f;
                break;
            }
        }
    }
    for (int g = 0; g < ng; ++g) {
        int k = start[g + 1] - start[g];
        double t = s->x[idx[start[g]]];
        for (int j = 0; j < k; ++j) {
            int node = idx[start[g] + j];
            if (q < t) {
                w[node] = j == 0 ? gw[g] : 0.0;
            } else if (q > t) {
                w[node] = j == k - 1 ? gw[g] : 0.0;
            } else {
                w[node] = gw[g] / k;
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Unity 2D simple directional                                                                 */

static void simple_directional(const ref_space *s, double qx, double qy, double *w)
{
    int origin = -1, dirs[CB_SOLVER_MAX_NODES], nd = 0;
    for (int i = 0; i < s->m; ++i) {
        if (s->x[i] == 0 && s->y[i] == 0) {
            origin = i;
        } else {
            dirs[nd++] = i;
        }
    }
    /* lo: the direction with the largest angle <= the query's (wrapping to the largest). */
    double th = atan2(qy, qx);
    int lo = -1, hi = -1;
    double best = -INFINITY, top = -INFINITY;
    int top_i = -1;
    for (int k = 0; k < nd; ++k) {
        double a = atan2(s->y[dirs[k]], s->x[dirs[k]]);
        if (a <= th && a > best) {
            best = a, lo = dirs[k];
        }
        if (a > top) {
            top = a, top_i = dirs[k];
        }
    }
    if (lo < 0) {
        lo = top_i;
    }
    /* hi: the next direction counter-clockwise after lo. */
    double alo = atan2(s->y[lo], s->x[lo]), bestd = INFINITY;
    for (int k = 0; k < nd; ++k) {
        if (dirs[k] == lo) {
            continue;
        }
        double d = atan2(s->y[dirs[k]], s->x[dirs[k]]) - alo;
        if (d <= 0) {
            d += 2 * PI;
        }
        if (d < bestd) {
            bestd = d, hi = dirs[k];
        }
    }
    double x0 = s->x[lo], y0 = s->y[lo];
    double t0, t1 = 0.0;
    bool reflex = false;
    if (hi < 0) {
        t0 = fmax(0.0, (qx * x0 + qy * y0) / (x0 * x0 + y0 * y0));
        hi = lo;
    } else {
        double x1 = s->x[hi], y1 = s->y[hi];
        double det = x0 * y1 - y0 * x1;
        if (fabs(det) <= 1e-6 * hypot(x0, y0) * hypot(x1, y1)) {
            t0 = fmax(0.0, (qx * x0 + qy * y0) / (x0 * x0 + y0 * y0));
            t1 = fmax(0.0, (qx * x1 + qy * y1) / (x1 * x1 + y1 * y1));
        } else {
            t0 = (qx * y1 - qy * x1) / det;
            t1 = (x0 * qy - y0 * qx) / det;
            reflex = det < 0;
            if (!reflex) {
                t0 = fmax(t0, 0.0), t1 = fmax(t1, 0.0);
            }
        }
    }
    double sum = t0 + t1, infl = fmin(1.0, fmax(0.0, sum)), w0, w1;
    if (reflex) {
        w0 = w1 = 0.5 * infl;
    } else {
        w0 = sum > 0 ? infl * t0 / sum : 0.0;
        w1 = sum > 0 ? infl * t1 / sum : 0.0;
    }
    double centre = 1.0 - infl;
    for (int i = 0; i < s->m; ++i) {
        w[i] = origin >= 0 ? 0.0 : centre / s->m;
    }
    w[lo] += w0;
    w[hi] += w1;
    if (origin >= 0) {
        w[origin] = centre;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Gradient bands                                                                             */

static void normalize(double *w, int m, const double *fallback)
{
    double sum = 0;
    for (int i = 0; i < m; ++i) {
        sum += w[i];
    }
    for (int i = 0; i < m; ++i) {
        w[i] = sum > 0 ? w[i] / sum : fallback[i];
    }
}

static void freeform_cartesian(const ref_space *s, double qx, double qy, double *w)
{
    double fallback[CB_SOLVER_MAX_NODES];
    for (int i = 0; i < s->m; ++i) {
        double h = 1.0;
        for (int j = 0; j < s->m; ++j) {
            if (j == i) {
                continue;
            }
            double ex = s->x[j] - s->x[i], ey = s->y[j] - s->y[i];
            double v = 1.0 - ((qx - s->x[i]) * ex + (qy - s->y[i]) * ey) / (ex * ex + ey * ey);
            h = fmin(h, v);
        }
        w[i] = fmax(h, 0.0);
        fallback[i] = 1.0 / s->m;
    }
    normalize(w, s->m, fallback);
}

/* Johansen's polar gradient band, pair by pair as in his reference implementation. */
static double polar_band(const ref_space *s, int i, int j, double qx, double qy)
{
    double xi = s->x[i], yi = s->y[i], xj = s->x[j], yj = s->y[j];
    double mi = hypot(xi, yi), mj = hypot(xj, yj), mq = hypot(qx, qy);
    bool zi = mi == 0, zj = mj == 0, zq = mq == 0;
    double ij_a, ij_m, io_a, io_m, avg;
    if (zi) {
        avg = mj / 2;
        ij_a = unsigned_angle(qx, qy, xj, yj), ij_m = mj / avg;
        io_a = 0.0, io_m = mq / avg;
    } else if (zj) {
        avg = mi / 2;
        double a = unsigned_angle(qx, qy, xi, yi);
        ij_a = a, ij_m = -mi / avg;
        io_a = a, io_m = (mq - mi) / avg;
    } else {
        avg = (mi + mj) / 2;
        double phi = unsigned_angle(xi, yi, xj, yj), o = 0.0, om = mq;
        if (phi > 0) {
            if (zq) {
                o = phi, om = 0.0;
            } else {
                o = unsigned_angle(xi, yi, qx, qy);
                double c_iq = xi * qy - yi * qx, c_ij = xi * yj - yi * xj;
                if (phi < 0.99 * PI && c_iq * c_ij < 0) {
                    o = -o;
                }
            }
        }
        ij_a = 2 * phi, ij_m = (mj - mi) / avg;
        io_a = 2 * o, io_m = (om - mi) / avg;
    }
    return 1.0 - (ij_a * io_a + ij_m * io_m) / (ij_a * ij_a + ij_m * ij_m);
}

static void freeform_directional(const ref_space *s, double qx, double qy, double *w)
{
    int origin = -1;
    double min_mag = INFINITY;
    for (int i = 0; i < s->m; ++i) {
        double mg = hypot(s->x[i], s->y[i]);
        if (mg == 0) {
            origin = i;
        } else {
            min_mag = fmin(min_mag, mg);
        }
    }
    double fallback[CB_SOLVER_MAX_NODES];
    int inner = 0;
    for (int i = 0; i < s->m; ++i) {
        inner += i != origin && hypot(s->x[i], s->y[i]) <= min_mag * (1 + 1e-6);
    }
    for (int i = 0; i < s->m; ++i) {
        double h = 1.0;
        for (int j = 0; j < s->m; ++j) {
            if (j != i) {
                h = fmin(h, polar_band(s, i, j, qx, qy));
            }
        }
        /* Influences that cancel to 0 in exact arithmetic round to 1e-16 in double. */
        w[i] = h > 1e-9 ? h : 0.0;
        fallback[i] = origin >= 0
                          ? (i == origin)
                          : (hypot(s->x[i], s->y[i]) <= min_mag * (1 + 1e-6) ? 1.0 / inner : 0.0);
    }
    normalize(w, s->m, fallback);
}

/* ------------------------------------------------------------------------------------------ */
/* Hull, collinear layouts, Delaunay                                                           */

static double layout_diag(const ref_space *s)
{
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int i = 0; i < s->m; ++i) {
        lo[0] = fmin(lo[0], s->x[i]), hi[0] = fmax(hi[0], s->x[i]);
        lo[1] = fmin(lo[1], s->y[i]), hi[1] = fmax(hi[1], s->y[i]);
    }
    return hypot(hi[0] - lo[0], hi[1] - lo[1]);
}

/* Collinear as documented: every node within 1e-6 of the diagonal from the line through the
 * two nodes farthest apart. */
static bool all_collinear(const ref_space *s, int *a, int *b)
{
    double best = -1;
    *a = 0, *b = 0;
    for (int i = 0; i < s->m; ++i) {
        for (int j = i + 1; j < s->m; ++j) {
            double d = hypot(s->x[i] - s->x[j], s->y[i] - s->y[j]);
            if (d > best) {
                best = d, *a = i, *b = j;
            }
        }
    }
    if (s->m < 3) {
        return true;
    }
    double diag = layout_diag(s);
    for (int k = 0; k < s->m; ++k) {
        double c = cross3(s->x[*a], s->y[*a], s->x[*b], s->y[*b], s->x[k], s->y[k]) / best;
        if (fabs(c) > 1e-6 * diag) {
            return false;
        }
    }
    return true;
}

/* 1D linear along the line through nodes a and b, the query projected on it. */
static void along_line(const ref_space *s, int a, int b, double qx, double qy, double *w)
{
    ref_space line = *s;
    double dx = s->m > 1 ? s->x[b] - s->x[a] : 1.0, dy = s->m > 1 ? s->y[b] - s->y[a] : 0.0;
    double len = hypot(dx, dy);
    dx /= len, dy /= len;
    for (int i = 0; i < s->m; ++i) {
        line.x[i] = (s->x[i] - s->x[a]) * dx + (s->y[i] - s->y[a]) * dy;
    }
    linear_1d(&line, (qx - s->x[a]) * dx + (qy - s->y[a]) * dy, w);
}

/* Condition of the collinear weights at q: the hat weights move by du / h for a change du of
 * the position u = (q - a) . d along the line, h the knot spacing of u's segment. Rounded
 * direction components, the differences q - a and the products move u by a few units of
 * 2^-24 times |qx - ax| |dx| + |qy - ay| |dy|, and the rounded knots by 2^-24 times their
 * magnitude: kappa = (that sum + the largest |knot|) / h. Clamped beyond the end knots (no
 * dependence on u) it is that of the end segment, as a query rounding across the end sees. */
static double line_condition(const ref_space *s, int a, int b, double qx, double qy)
{
    if (s->m < 2) {
        return 1.0;
    }
    double dx = s->x[b] - s->x[a], dy = s->y[b] - s->y[a], len = hypot(dx, dy);
    dx /= len, dy /= len;
    double t[CB_SOLVER_MAX_NODES], tabs = 0;
    for (int i = 0; i < s->m; ++i) {
        double v = (s->x[i] - s->x[a]) * dx + (s->y[i] - s->y[a]) * dy;
        int k = i;
        for (; k > 0 && t[k - 1] > v; --k) {
            t[k] = t[k - 1];
        }
        t[k] = v, tabs = fmax(tabs, fabs(v));
    }
    double u = (qx - s->x[a]) * dx + (qy - s->y[a]) * dy;
    u = fmin(fmax(u, t[0]), t[s->m - 1]);
    /* On a knot both neighbouring segments apply: the narrower one. */
    double h = INFINITY;
    for (int k = 0; k + 1 < s->m; ++k) {
        if (t[k] <= u && u <= t[k + 1]) {
            h = fmin(h, t[k + 1] - t[k]);
        }
    }
    return (fabs(qx - s->x[a]) * fabs(dx) + fabs(qy - s->y[a]) * fabs(dy) + tabs) / h;
}

/* Hull boundary edges (i, j), counter-clockwise, without nodes strictly inside them. */
static int hull_edges(const ref_space *s, int (*e)[2])
{
    int n = 0;
    double d2 = layout_diag(s) * layout_diag(s);
    for (int i = 0; i < s->m; ++i) {
        for (int j = 0; j < s->m; ++j) {
            if (i == j) {
                continue;
            }
            bool ok = true;
            for (int k = 0; k < s->m && ok; ++k) {
                if (k == i || k == j) {
                    continue;
                }
                double c = cross3(s->x[i], s->y[i], s->x[j], s->y[j], s->x[k], s->y[k]);
                if (c < -1e-12 * d2) {
                    ok = false;
                } else if (fabs(c) <= 1e-12 * d2) {
                    /* On the line: must not lie between i and j. */
                    double t = ((s->x[k] - s->x[i]) * (s->x[j] - s->x[i]) +
                                (s->y[k] - s->y[i]) * (s->y[j] - s->y[i])) /
                               (pow(s->x[j] - s->x[i], 2) + pow(s->y[j] - s->y[i], 2));
                    if (t > 0 && t < 1) {
                        ok = false;
                    }
                }
            }
            if (ok) {
                e[n][0] = i, e[n][1] = j;
                ++n;
            }
        }
    }
    return n;
}

/* Signed distance of q inside the hull (min over edges) and the closest hull point's weights.
 * *cond (optional): their condition, (|qx - ax| |ex| + |qy - ay| |ey|) / |e|^2 + 1 for the
 * chosen edge from a to a + e: t = (q - a) . e / |e|^2 moves by a few units of 2^-24 times
 * that (the differences, the products and the rounded 1 / |e|^2), and 1 - t by one more. */
static double hull_project(const ref_space *s, double qx, double qy, double *w, double *cond)
{
    int e[2 * CB_SOLVER_MAX_NODES][2];
    int n = hull_edges(s, e);
    double best = INFINITY, inside = INFINITY;
    memset(w, 0, sizeof(double) * (size_t)s->m);
    int ba = 0, bb = 0;
    double bt = 0;
    for (int k = 0; k < n; ++k) {
        double ax = s->x[e[k][0]], ay = s->y[e[k][0]];
        double ex = s->x[e[k][1]] - ax, ey = s->y[e[k][1]] - ay;
        double len2 = ex * ex + ey * ey;
        inside = fmin(inside, (ex * (qy - ay) - ey * (qx - ax)) / sqrt(len2));
        double t = fmin(1.0, fmax(0.0, ((qx - ax) * ex + (qy - ay) * ey) / len2));
        double d = hypot(qx - ax - t * ex, qy - ay - t * ey);
        if (d < best) {
            best = d, ba = e[k][0], bb = e[k][1], bt = t;
        }
    }
    w[ba] = 1.0 - bt;
    w[bb] += bt;
    if (cond != NULL) {
        double ex = s->x[bb] - s->x[ba], ey = s->y[bb] - s->y[ba];
        *cond = (fabs(qx - s->x[ba]) * fabs(ex) + fabs(qy - s->y[ba]) * fabs(ey)) /
                    (ex * ex + ey * ey) +
                1.0;
    }
    return inside;
}

/* Condition of barycentric coordinates in triangle (i, j, k) at q: with p0 any vertex,
 * a = p1 - p0, b = p2 - p0, d = q - p0, a coordinate is (d x b) / (a x b) or (a x d) / (a x b);
 * rounding d, a, b and the products moves the numerators by a few units of 2^-24 times
 * |d| (|a| + |b|) and the denominator |a x b| (twice the area) by as many times |a| |b|. With
 * L the longest edge and any vertex as p0 (the solver's order is its own), kappa =
 * (r (|a| + |b|) + |a| |b|) / |a x b| <= (2 r L + L^2) / |a x b|, r the farthest vertex from q:
 * about 3 / sin(smallest angle) inside a triangle, growing as the triangle thins. */
static double triangle_condition(const ref_space *s, int i, int j, int k, double qx, double qy,
                                 double det)
{
    int v[3] = {i, j, k};
    double l2 = 0, r2 = 0; /* squared: this runs for every triangle of every query */
    for (int e = 0; e < 3; ++e) {
        int p = v[e], n = v[(e + 1) % 3];
        double ex = s->x[n] - s->x[p], ey = s->y[n] - s->y[p];
        double qpx = qx - s->x[p], qpy = qy - s->y[p];
        l2 = fmax(l2, ex * ex + ey * ey);
        r2 = fmax(r2, qpx * qpx + qpy * qpy);
    }
    return (2 * sqrt(r2 * l2) + l2) / fabs(det);
}

/* The in-circle determinant of (px, py) against the counter-clockwise triangle o: > 0
 * inside. */
static double in_circle(const ref_space *s, const int o[3], double px, double py)
{
    double m3[3][3];
    for (int r = 0; r < 3; ++r) {
        double dx = s->x[o[r]] - px, dy = s->y[o[r]] - py;
        m3[r][0] = dx, m3[r][1] = dy, m3[r][2] = dx * dx + dy * dy;
    }
    return m3[0][0] * (m3[1][1] * m3[2][2] - m3[1][2] * m3[2][1]) -
           m3[0][1] * (m3[1][0] * m3[2][2] - m3[1][2] * m3[2][0]) +
           m3[0][2] * (m3[1][0] * m3[2][1] - m3[1][1] * m3[2][0]);
}

/* No node strictly inside the circumcircle of o (co-circular nodes allowed). */
static bool empty_circle(const ref_space *s, const int o[3], double scale4)
{
    for (int t = 0; t < s->m; ++t) {
        if (t != o[0] && t != o[1] && t != o[2] &&
            in_circle(s, o, s->x[t], s->y[t]) > 1e-10 * scale4) {
            return false;
        }
    }
    return true;
}

int ref_delaunay_candidates(const ref_space *s, const double *q, double *w, int max, double *cond)
{
    double qx = q[0], qy = q[1];
    int a, b;
    if (all_collinear(s, &a, &b)) {
        along_line(s, a, b, qx, qy, w);
        if (cond != NULL) {
            *cond = line_condition(s, a, b, qx, qy);
        }
        return 1;
    }
    double diag = layout_diag(s), hull_cond;
    bool outside = hull_project(s, qx, qy, w, &hull_cond) < 1e-9 * diag;
    if (outside && cond == NULL) {
        return 1;
    }
    /* The solver takes a triangle's coordinates wherever one holds q to within 1e-6 in
     * barycentric units (delaunay.c), on either side of the hull boundary, and picks among
     * them by coordinates it computes in float: any Delaunay triangle whose coordinates at q
     * can round up to -1e-6 (within REF_KAPPA_ULPS units of 2^-24 kappa) may be the one it
     * uses, such as a sliver along the hull that q lies next to. The condition is the
     * largest over those triangles (and the hull edge's, outside). */
    double unused;
    cond = cond != NULL ? cond : &unused;
    *cond = outside ? hull_cond : 1.0;
    int n = 0;
    double scale4 = pow(diag, 4);
    for (int i = 0; i < s->m && n < max; ++i) {
        for (int j = i + 1; j < s->m && n < max; ++j) {
            for (int k = j + 1; k < s->m && n < max; ++k) {
                double det = cross3(s->x[i], s->y[i], s->x[j], s->y[j], s->x[k], s->y[k]);
                if (fabs(det) < 1e-12 * diag * diag) {
                    continue;
                }
                double l1 = cross3(s->x[i], s->y[i], qx, qy, s->x[k], s->y[k]) / det;
                double l2 = cross3(s->x[i], s->y[i], s->x[j], s->y[j], qx, qy) / det;
                double l0 = 1 - l1 - l2;
                double lo = fmin(l0, fmin(l1, l2));
                double kappa = triangle_condition(s, i, j, k, qx, qy, det);
                if (lo < -1e-6 - REF_KAPPA_ULPS * 0x1p-24 * kappa) {
                    continue;
                }
                /* Empty circumcircle (co-circular nodes allowed). */
                int o[3] = {i, j, k};
                if (det < 0) {
                    o[1] = k, o[2] = j;
                }
                if (!empty_circle(s, o, scale4)) {
                    continue;
                }
                *cond = fmax(*cond, kappa);
                if (outside || lo < -1e-9) {
                    continue;
                }
                double *c = w + (size_t)n * s->m;
                memset(c, 0, sizeof(double) * (size_t)s->m);
                c[i] = l0, c[j] = l1, c[k] = l2;
                ++n;
            }
        }
    }
    return outside ? 1 : n;
}

double ref_natural_neighbor_condition(const ref_space *s, const double *q)
{
    int a, b;
    if (all_collinear(s, &a, &b)) {
        return line_condition(s, a, b, q[0], q[1]);
    }
    double diag = layout_diag(s), scale4 = pow(diag, 4), cond = 1.0, w[CB_SOLVER_MAX_NODES], hull;
    if (hull_project(s, q[0], q[1], w, &hull) <= 1e-6 * diag) {
        cond = hull; /* on or outside the hull: the projection onto its edge */
    }
    for (int i = 0; i < s->m; ++i) {
        for (int j = i + 1; j < s->m; ++j) {
            for (int k = j + 1; k < s->m; ++k) {
                double det = cross3(s->x[i], s->y[i], s->x[j], s->y[j], s->x[k], s->y[k]);
                if (fabs(det) < 1e-12 * diag * diag) {
                    continue;
                }
                int o[3] = {i, det < 0 ? k : j, det < 0 ? j : k};
                /* A natural-neighbour triangle: Delaunay, its circumcircle holds q. */
                if (in_circle(s, o, q[0], q[1]) >= -1e-10 * scale4 && empty_circle(s, o, scale4)) {
                    cond = fmax(cond, triangle_condition(s, i, j, k, q[0], q[1], det));
                }
            }
        }
    }
    return cond;
}

/* ------------------------------------------------------------------------------------------ */
/* Bilinear, direct, inverse distance                                                          */

static void axis_weights(const double *t, int n, double u, int *lo, double *f)
{
    if (n == 1 || u <= t[0]) {
        *lo = 0, *f = 0;
        return;
    }
    if (u >= t[n - 1]) {
        *lo = n - 1, *f = 0;
        return;
    }
    int k = 0;
    while (!(u >= t[k] && u < t[k + 1])) {
        ++k;
    }
    *lo = k, *f = (u - t[k]) / (t[k + 1] - t[k]);
}

static void bilinear(const ref_space *s, double qx, double qy, double *w)
{
    double tx[CB_SOLVER_MAX_NODES], ty[CB_SOLVER_MAX_NODES];
    for (int i = 0; i < s->nx; ++i) {
        tx[i] = s->x[i];
    }
    for (int j = 0; j < s->ny; ++j) {
        ty[j] = s->y[j * s->nx];
    }
    int ix, iy;
    double fx, fy;
    axis_weights(tx, s->nx, qx, &ix, &fx);
    axis_weights(ty, s->ny, qy, &iy, &fy);
    memset(w, 0, sizeof(double) * (size_t)s->m);
    for (int a = 0; a < 2; ++a) {
        for (int b = 0; b < 2; ++b) {
            if (iy + a < s->ny && ix + b < s->nx) {
                w[(iy + a) * s->nx + ix + b] += (a ? fy : 1 - fy) * (b ? fx : 1 - fx);
            }
        }
    }
}

static void direct(const ref_space *s, const double *q, double *w)
{
    double sum = 0;
    for (int i = 0; i < s->m; ++i) {
        w[i] = fmin(fmax(q[i], 0.0), 1e30);
        sum += w[i];
    }
    for (int i = 0; i < s->m; ++i) {
        w[i] = sum > 0 ? w[i] / sum : 0.0;
    }
}

static void inverse_distance(const ref_space *s, double qx, double qy, int k, double *w)
{
    double d[CB_SOLVER_MAX_NODES], sorted[CB_SOLVER_MAX_NODES], dmin = INFINITY;
    for (int i = 0; i < s->m; ++i) {
        d[i] = hypot(qx - s->x[i], qy - s->y[i]);
        dmin = fmin(dmin, d[i]);
        sorted[i] = d[i];
    }
    int at_min = 0;
    for (int i = 0; i < s->m; ++i) {
        at_min += d[i] == dmin;
    }
    if (dmin == 0) {
        for (int i = 0; i < s->m; ++i) {
            w[i] = d[i] == 0 ? 1.0 / at_min : 0.0;
        }
        return;
    }
    double cut = 0;
    if (k < s->m) {
        for (int i = 1; i < s->m; ++i) {
            for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; --j) {
                double t = sorted[j];
                sorted[j] = sorted[j - 1], sorted[j - 1] = t;
            }
        }
        cut = pow(sorted[k], -s->power);
    }
    double sum = 0;
    for (int i = 0; i < s->m; ++i) {
        w[i] = fmax(0.0, pow(d[i], -s->power) - cut);
        sum += w[i];
    }
    for (int i = 0; i < s->m; ++i) {
        w[i] = sum > 0 ? w[i] / sum : (d[i] == dmin ? 1.0 / at_min : 0.0);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* RBF: a fresh solve of the augmented system per query                                        */

static double kernel(const ref_space *s, double r, double eps)
{
    switch (s->kernel) {
    case CB_RBF_KERNEL_THIN_PLATE:
        return r > 0 ? r * r * log(r) : 0.0;
    case CB_RBF_KERNEL_CUBIC:
        return r * r * r;
    case CB_RBF_KERNEL_LINEAR:
        return r;
    default:
        return exp(-(eps * r) * (eps * r));
    }
}

/* Solves a x = b (n x n, row-major, destroyed) by Gaussian elimination, partial pivoting. */
static void solve(double *a, double *b, int n)
{
    for (int c = 0; c < n; ++c) {
        int p = c;
        for (int r = c + 1; r < n; ++r) {
            if (fabs(a[r * n + c]) > fabs(a[p * n + c])) {
                p = r;
            }
        }
        for (int k = 0; k < n; ++k) {
            double t = a[c * n + k];
            a[c * n + k] = a[p * n + k], a[p * n + k] = t;
        }
        double t = b[c];
        b[c] = b[p], b[p] = t;
        for (int r = c + 1; r < n; ++r) {
            double f = a[r * n + c] / a[c * n + c];
            for (int k = c; k < n; ++k) {
                a[r * n + k] -= f * a[c * n + k];
            }
            b[r] -= f * b[c];
        }
    }
    for (int r = n - 1; r >= 0; --r) {
        double acc = b[r];
        for (int k = r + 1; k < n; ++k) {
            acc -= a[r * n + k] * b[k];
        }
        b[r] = acc / a[r * n + r];
    }
}

/* The augmented system of a query: mat (n x n, row-major) and rhs = b(q), n = m + poly
 * terms. Coordinates relative to the nodes' centroid (the same interpolant: radial kernels and
 * linear polynomials are translation invariant), so that the polynomial terms of b(q) measure
 * what a float evaluation rounds. *scale (optional): for each term k of b(q), a bound on how
 * far one relative rounding of the query's distance to node k moves it, in units of that
 * rounding: |phi| + |r phi'(r)| for a kernel term, |b_k| + 1 for a polynomial one. */
static int rbf_system(const ref_space *s, double qx, double qy, double *mat, double *rhs,
                      double *scale)
{
    int m = s->m;
    double eps = s->epsilon;
    if (eps == 0 && m > 1) {
        double mean = 0;
        for (int i = 0; i < m; ++i) {
            double best = INFINITY;
            for (int j = 0; j < m; ++j) {
                if (j != i) {
                    best = fmin(best, hypot(s->x[i] - s->x[j], s->y[i] - s->y[j]));
                }
            }
            mean += best / m;
        }
        eps = 1.0 / mean;
    }
    double cx = 0, cy = 0;
    for (int i = 0; i < m; ++i) {
        cx += s->x[i] / m, cy += s->y[i] / m;
    }
    /* Polynomial basis: 1, plus the coordinate along the line (collinear) or x and y. */
    int a, b, poly = m == 1 ? 1 : 3;
    double lx = 1, ly = 0;
    if (m > 1 && all_collinear(s, &a, &b)) {
        poly = 2;
        double len = hypot(s->x[b] - s->x[a], s->y[b] - s->y[a]);
        lx = (s->x[b] - s->x[a]) / len, ly = (s->y[b] - s->y[a]) / len;
    }
    int n = m + poly;
    memset(mat, 0, sizeof(double) * (size_t)n * n);
    for (int i = 0; i < m; ++i) {
        double px = s->x[i] - cx, py = s->y[i] - cy;
        double basis[3] = {1.0, poly == 2 ? px * lx + py * ly : px, py};
        for (int j = 0; j < m; ++j) {
            mat[i * n + j] = kernel(s, hypot(s->x[i] - s->x[j], s->y[i] - s->y[j]), eps);
        }
        for (int k = 0; k < poly; ++k) {
            mat[i * n + m + k] = mat[(m + k) * n + i] = basis[k];
        }
        double r = hypot(qx - s->x[i], qy - s->y[i]), phi = kernel(s, r, eps);
        rhs[i] = phi;
        if (scale != NULL) {
            /* r phi'(r) of each kernel */
            double rd = s->kernel == CB_RBF_KERNEL_THIN_PLATE
                            ? (r > 0 ? r * r * (2 * log(r) + 1) : 0)
                        : s->kernel == CB_RBF_KERNEL_CUBIC  ? 3 * phi
                        : s->kernel == CB_RBF_KERNEL_LINEAR ? phi
                                                            : 2 * (eps * r) * (eps * r) * phi;
            scale[i] = fabs(phi) + fabs(rd);
        }
    }
    double qb[3] = {1.0, poly == 2 ? (qx - cx) * lx + (qy - cy) * ly : qx - cx, qy - cy};
    for (int k = 0; k < poly; ++k) {
        rhs[m + k] = qb[k];
        if (scale != NULL) {
            scale[m + k] = fabs(qb[k]) + 1.0;
        }
    }
    return n;
}

/* The clamped, renormalized weights from the interpolant's values raw[0..m). */
static void clamp_normalize(const double *raw, int m, double *w)
{
    double sum = 0;
    for (int i = 0; i < m; ++i) {
        w[i] = fmin(1.0, fmax(0.0, raw[i]));
        sum += w[i];
    }
    for (int i = 0; i < m; ++i) {
        w[i] /= sum;
    }
}

enum { RBF_MAXN = CB_SOLVER_MAX_NODES + 3 };

static void rbf(const ref_space *s, double qx, double qy, double *w)
{
    static double mat[RBF_MAXN * RBF_MAXN], rhs[RBF_MAXN];
    int n = rbf_system(s, qx, qy, mat, rhs, NULL);
    solve(mat, rhs, n);
    clamp_normalize(rhs, s->m, w);
}

/* Inverts a (n x n, row-major, destroyed) into inv by Gauss-Jordan, partial pivoting. */
static void invert(double *a, double *inv, int n)
{
    for (int i = 0; i < n * n; ++i) {
        inv[i] = i % (n + 1) == 0 ? 1.0 : 0.0;
    }
    for (int c = 0; c < n; ++c) {
        int p = c;
        for (int r = c + 1; r < n; ++r) {
            p = fabs(a[r * n + c]) > fabs(a[p * n + c]) ? r : p;
        }
        for (int k = 0; k < n; ++k) {
            double t = a[c * n + k];
            a[c * n + k] = a[p * n + k], a[p * n + k] = t;
            t = inv[c * n + k];
            inv[c * n + k] = inv[p * n + k], inv[p * n + k] = t;
        }
        double pv = a[c * n + c];
        for (int k = 0; k < n; ++k) {
            a[c * n + k] /= pv, inv[c * n + k] /= pv;
        }
        for (int r = 0; r < n; ++r) {
            double f = a[r * n + c];
            for (int k = 0; k < n && r != c; ++k) {
                a[r * n + k] -= f * a[c * n + k], inv[r * n + k] -= f * inv[c * n + k];
            }
        }
    }
}

double ref_rbf_condition(const ref_space *s, const double *q)
{
    static double mat[RBF_MAXN * RBF_MAXN], inv[RBF_MAXN * RBF_MAXN];
    double rhs[RBF_MAXN], scale[RBF_MAXN];
    int m = s->m, n = rbf_system(s, q[0], q[1], mat, rhs, scale);
    invert(mat, inv, n);
    /* a_i: what roundings of relative size 1 in every coefficient and basis value move the
     * raw weight i by; the clamp does not amplify, the renormalization by the sum S divides
     * weight i's change and adds w_i times the sum's. */
    double amax = 0, asum = 0, sum = 0;
    for (int i = 0; i < m; ++i) {
        double ai = 0, raw = 0;
        for (int k = 0; k < n; ++k) {
            ai += fabs(inv[i * n + k]) * scale[k];
            raw += inv[i * n + k] * rhs[k];
        }
        amax = fmax(amax, ai), asum += ai;
        sum += fmin(1.0, fmax(0.0, raw));
    }
    return fmax(1.0, (n + REF_RBF_ROUNDINGS) * (amax + asum) / sum);
}

/* ------------------------------------------------------------------------------------------ */
/* Natural neighbours by clipping Voronoi cells                                                */

typedef struct poly {
    int n;
    double x[2 * CB_SOLVER_MAX_NODES + 8], y[2 * CB_SOLVER_MAX_NODES + 8];
} poly;

/* Keeps the part of p closer to (ax, ay) than to (bx, by). */
static void clip(poly *p, double ax, double ay, double bx, double by)
{
    /* Half-plane n . x <= c with n = b - a, c = (|b|^2 - |a|^2) / 2. */
    double nx = bx - ax, ny = by - ay;
    double c = 0.5 * (bx * bx + by * by - ax * ax - ay * ay);
    poly out;
    out.n = 0;
    for (int i = 0; i < p->n; ++i) {
        int j = (i + 1) % p->n;
        double di = nx * p->x[i] + ny * p->y[i] - c, dj = nx * p->x[j] + ny * p->y[j] - c;
        if (di <= 0) {
            out.x[out.n] = p->x[i], out.y[out.n] = p->y[i], ++out.n;
        }
        if ((di < 0 && dj > 0) || (di > 0 && dj < 0)) {
            double t = di / (di - dj);
            out.x[out.n] = p->x[i] + t * (p->x[j] - p->x[i]);
            out.y[out.n] = p->y[i] + t * (p->y[j] - p->y[i]);
            ++out.n;
        }
    }
    *p = out;
}

static double area(const poly *p)
{
    double a = 0;
    for (int i = 0; i < p->n; ++i) {
        int j = (i + 1) % p->n;
        a += p->x[i] * p->y[j] - p->x[j] * p->y[i];
    }
    return 0.5 * a;
}

static void natural_neighbor(const ref_space *s, double qx, double qy, double *w)
{
    int a, b;
    if (all_collinear(s, &a, &b)) {
        along_line(s, a, b, qx, qy, w);
        return;
    }
    double diag = layout_diag(s);
    /* A query on a node (within 1e-6 of the diagonal, the documented snap) is that node. */
    int near = 0;
    for (int i = 1; i < s->m; ++i) {
        if (hypot(qx - s->x[i], qy - s->y[i]) < hypot(qx - s->x[near], qy - s->y[near])) {
            near = i;
        }
    }
    if (hypot(qx - s->x[near], qy - s->y[near]) <= 1e-6 * diag) {
        memset(w, 0, sizeof(double) * (size_t)s->m);
        w[near] = 1.0;
        return;
    }
    if (hull_project(s, qx, qy, w, NULL) <= 1e-6 * diag) {
        return;
    }
    /* V(q), inside a box far larger than any cell of a query 1e-6 inside the hull needs. */
    poly vq = {4, {0}, {0}};
    double big = 1e9 * diag;
    double bx[4] = {-big, big, big, -big}, by[4] = {-big, -big, big, big};
    for (int k = 0; k < 4; ++k) {
        vq.x[k] = qx + bx[k], vq.y[k] = qy + by[k];
    }
    for (int j = 0; j < s->m; ++j) {
        clip(&vq, qx, qy, s->x[j], s->y[j]);
    }
    double total = 0;
    for (int i = 0; i < s->m; ++i) {
        poly part = vq;
        for (int j = 0; j < s->m && part.n > 0; ++j) {
            if (j != i) {
                clip(&part, s->x[i], s->y[i], s->x[j], s->y[j]);
            }
        }
        w[i] = part.n > 2 ? area(&part) : 0.0;
        total += w[i];
    }
    for (int i = 0; i < s->m; ++i) {
        w[i] /= total;
    }
}

/* ------------------------------------------------------------------------------------------ */

bool ref_sanitize(const ref_space *s, const double *q, double out[2])
{
    double qx = q[0], qy = s->dim == 2 ? q[1] : 0.0;
    bool finite = isfinite(qx) && isfinite(qy);
    if (!finite) {
        qx = qy = 0.0;
    }
    double dx = qx - s->far_cx, dy = qy - s->far_cy, mq = fmax(fabs(dx), fabs(dy));
    if (mq > s->far) {
        qx = s->far_cx + dx * (s->far / mq);
        qy = s->far_cy + dy * (s->far / mq);
    }
    out[0] = qx, out[1] = qy;
    return finite;
}

bool ref_weights(const ref_space *s, const double *q, double *w)
{
    bool finite = true;
    double qs[2] = {0.0, 0.0};
    if (s->kind == CB_SOLVER_KIND_DIRECT) {
        for (int k = 0; k < s->m; ++k) {
            finite = finite && isfinite(q[k]);
        }
        double z[CB_SOLVER_MAX_NODES] = {0};
        direct(s, finite ? q : z, w);
        return finite;
    }
    finite = ref_sanitize(s, q, qs);
    double qx = qs[0], qy = qs[1];
    switch (s->kind) {
    case CB_SOLVER_KIND_LINEAR_1D:
        linear_1d(s, qx, w);
        break;
    case CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D:
        simple_directional(s, qx, qy, w);
        break;
    case CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D:
        freeform_directional(s, qx, qy, w);
        break;
    case CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D:
        freeform_cartesian(s, qx, qy, w);
        break;
    case CB_SOLVER_KIND_DELAUNAY_2D:
        ref_delaunay_candidates(s, qs, w, 1, NULL);
        break;
    case CB_SOLVER_KIND_BILINEAR_2D:
        bilinear(s, qx, qy, w);
        break;
    case CB_SOLVER_KIND_IDW:
        inverse_distance(s, qx, qy, s->m, w);
        break;
    case CB_SOLVER_KIND_KNN_IDW:
        inverse_distance(s, qx, qy, s->k, w);
        break;
    case CB_SOLVER_KIND_RBF:
        rbf(s, qx, qy, w);
        break;
    case CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D:
        natural_neighbor(s, qx, qy, w);
        break;
    default:
        break;
    }
    return finite;
}
