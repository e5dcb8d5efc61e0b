/* natural_neighbor_2d: Sibson's natural-neighbour coordinates (R. Sibson, "A brief description
 * of natural neighbour interpolation", in Interpreting Multivariate Data, Wiley, 1981).
 *
 * Insert the query q into the Voronoi diagram of the nodes: its cell V(q) takes area from the
 * cells of its natural neighbours, and node i's weight is the share of V(q) taken from node i's
 * cell. The weights are exact at the nodes, sum to 1, reproduce linear functions
 * (sum_i w_i p_i = q) and are continuous, with continuous derivatives away from the nodes. They
 * are defined for q strictly inside the convex hull; on the hull boundary they reduce to linear
 * interpolation along the hull edge, and outside the hull the closest point of the hull is used
 * (as delaunay_2d does), within 1e-6 of the layout's diagonal inside the hull too (V(q) grows
 * without bound there and floats lose it). Collinear layouts: 1D linear along the line.
 *
 * Computation, SIMD over characters. The natural neighbours of q are the vertices of the
 * Delaunay triangles whose circumcircle contains q (the Bowyer-Watson cavity). The area of
 * V(q) taken from node a is a polygon whose vertices are the circumcentres C_T of the cavity
 * triangles around a and, where the cavity ends, the circumcentres g = circ(q, a, b) of the new
 * triangles. By the shoelace formula it splits into one term per cavity triangle T and corner a
 * (next edge a->b, previous edge c->a):
 *   1/2 [ X_ab x C_T + C_T x X_ca ]  + 1/2 (m_qa x g_ab) if ab ends the cavity
 *                                    + 1/2 (g_ca x m_qa) if ca ends the cavity
 * where X_e is g_e for an edge that ends the cavity and, for an edge inside it, any point of the
 * edge's perpendicular bisector (its midpoint): the cavity triangles on both sides pass through
 * it, so it cancels, and no circumcentre of a degenerate triangle (q on that edge) is ever
 * formed. m_qa = (q + a) / 2 closes the polygon along the bisector of q and a. All points are
 * taken relative to q. Each lane sums the terms of its own cavity (masks); triangles no lane of
 * the block needs are skipped, as are circumcentres g no lane needs. A query on a node (within
 * 1e-6 of the diagonal) gives that node 1. */
#include <math.h>
#include <string.h>

#include "simd/vmath.h"
#include "solvers/solver_impl.h"

typedef struct natural {
    bool collinear;
    cb_line1d line;
    uint32_t tri_count;
    uint32_t (*v)[3];         /* vertices, counter-clockwise */
    int32_t (*adj)[3];        /* neighbour across the edge opposite vertex k, or -1 */
    float *ux, *uy;           /* circumcentre relative to the triangle's vertex 0 */
    float (*mx)[3], (*my)[3]; /* midpoint of the edge opposite vertex k */
    float *x, *y;             /* nodes */
    float inside_tol;         /* hull distance below which the hull projection is used */
    float snap2;              /* squared distance below which a query is on a node */
    cb_hull hull;
} natural;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    natural *d = tables;
    uint32_t m = n->nodes, tris = n->tris, hull = n->hull;
    cb_line1d_take(l, &d->line, m);
    d->v = cb_layout_take(l, tris * sizeof *d->v);
    d->adj = cb_layout_take(l, tris * sizeof *d->adj);
    d->ux = cb_layout_take(l, tris * sizeof(float));
    d->uy = cb_layout_take(l, tris * sizeof(float));
    d->mx = cb_layout_take(l, tris * sizeof *d->mx);
    d->my = cb_layout_take(l, tris * sizeof *d->my);
    d->x = cb_layout_take(l, m * sizeof(float));
    d->y = cb_layout_take(l, m * sizeof(float));
    cb_hull_take(l, &d->hull, hull);
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t m = desc->node_count;
    const float *p = desc->nodes;
    cb_tri_mesh mesh;
    cb_result r = cb_tri_mesh_build(p, m, &s->allocator, &mesh, err);
    if (r != CB_OK) {
        return r;
    }
    natural tmp;
    cb_plan_sizes n = {.nodes = m, .tris = mesh.tri_count, .hull = mesh.hull_count};
    if ((r = cb_solver_tables(s, sizeof tmp, plan, &n, &tmp, err)) != CB_OK) {
        cb_tri_mesh_free(&mesh, &s->allocator);
        return r;
    }
    natural *d = s->data;
    d->collinear = mesh.collinear;
    if (mesh.collinear) {
        cb_line1d_prepare(&d->line, &mesh, p, m);
    }
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (uint32_t i = 0; i < m; ++i) {
        d->x[i] = p[2 * i], d->y[i] = p[2 * i + 1];
        for (int k = 0; k < 2; ++k) {
            lo[k] = fmin(lo[k], p[2 * i + k]), hi[k] = fmax(hi[k], p[2 * i + k]);
        }
    }
    double diag = hypot(hi[0] - lo[0], hi[1] - lo[1]);
    d->inside_tol = (float)(1e-6 * diag);
    d->snap2 = (float)(1e-12 * diag * diag);
    d->tri_count = mesh.tri_count;
    for (uint32_t t = 0; t < mesh.tri_count; ++t) {
        double q[3][2];
        for (int k = 0; k < 3; ++k) {
            uint32_t vk = mesh.tri[t][k];
            d->v[t][k] = vk;
            d->adj[t][k] = mesh.adj[t][k];
            q[k][0] = p[2 * vk], q[k][1] = p[2 * vk + 1];
        }
        /* Circumcentre relative to vertex 0, in double. */
        double ax = q[1][0] - q[0][0], ay = q[1][1] - q[0][1];
        double bx = q[2][0] - q[0][0], by = q[2][1] - q[0][1];
        double den = 2.0 * (ax * by - ay * bx);
        double a2 = ax * ax + ay * ay, b2 = bx * bx + by * by;
        double ux = (by * a2 - ay * b2) / den, uy = (ax * b2 - bx * a2) / den;
        d->ux[t] = (float)ux, d->uy[t] = (float)uy;
        for (int k = 0; k < 3; ++k) {
            const double *e0 = q[(k + 1) % 3], *e1 = q[(k + 2) % 3];
            d->mx[t][k] = (float)(0.5 * (e0[0] + e1[0]));
            d->my[t][k] = (float)(0.5 * (e0[1] + e1[1]));
        }
    }
    cb_hull_prepare(&d->hull, &mesh, p);
    cb_tri_mesh_free(&mesh, &s->allocator);
    return CB_OK;
}

CB_INLINE cb_vf cross(cb_vf ax, cb_vf ay, cb_vf bx, cb_vf by)
{
    return cb_vf_fnmadd(ay, bx, cb_vf_mul(ax, by));
}

/* Lanes where q is strictly inside triangle t's circumcircle. With a the triangle's vertex 0,
 * u = C - a and d = q - a, |q - C|^2 - R^2 = |d|^2 - 2 d . u: all O(1) but d . u. Written as
 * |q - C|^2 < R^2 in absolute coordinates, a sliver at the hull (nearly collinear nodes, a
 * circle of radius 1e5) compares two numbers of 1e10 whose float rounding exceeds their
 * difference, and queries well inside the hull were taken into its cavity. */
CB_INLINE cb_vm in_circle(const natural *d, uint32_t t, cb_vf x, cb_vf y)
{
    uint32_t a = d->v[t][0];
    cb_vf dx = cb_vf_sub(x, cb_vf_set1(d->x[a])), dy = cb_vf_sub(y, cb_vf_set1(d->y[a]));
    cb_vf du = cb_vf_fmadd(dx, cb_vf_set1(d->ux[t]), cb_vf_mul(dy, cb_vf_set1(d->uy[t])));
    cb_vf dd = cb_vf_fmadd(dx, dx, cb_vf_mul(dy, dy));
    return cb_vf_lt(cb_vf_fnmadd(cb_vf_set1(2.0f), du, dd), cb_vf_zero());
}

/* For each edge e of triangle t (opposite vertex e), the lanes where it ends q's cavity (env),
 * and X_e relative to q: the circumcentre of q and the edge where it ends the cavity, else the
 * edge's own stored point. p: the vertices relative to q; own: the lanes whose cavity holds t. */
CB_INLINE void cavity_edges(const natural *d, uint32_t t, const unsigned *bits, cb_vm own,
                            const cb_vf *px, const cb_vf *py, cb_vf x, cb_vf y, cb_vf *ex,
                            cb_vf *ey, cb_vm *env)
{
    const cb_vf half = cb_vf_set1(0.5f);
    for (int e = 0; e < 3; ++e) {
        int32_t nb = d->adj[t][e];
        env[e] = nb < 0 ? own : cb_vm_and(own, cb_vm_not(cb_vm_from_bits(bits[nb])));
        ex[e] = cb_vf_sub(cb_vf_set1(d->mx[t][e]), x);
        ey[e] = cb_vf_sub(cb_vf_set1(d->my[t][e]), y);
        if (!cb_vm_any(env[e])) {
            continue;
        }
        /* g = circumcentre of (q, a, b) relative to q, for the edge a -> b. */
        int ia = (e + 1) % 3, ib = (e + 2) % 3;
        cb_vf a2 = cb_vf_fmadd(px[ia], px[ia], cb_vf_mul(py[ia], py[ia]));
        cb_vf b2 = cb_vf_fmadd(px[ib], px[ib], cb_vf_mul(py[ib], py[ib]));
        cb_vf inv = cb_vf_div(half, cross(px[ia], py[ia], px[ib], py[ib]));
        /* (b_y |a|^2 - a_y |b|^2, a_x |b|^2 - b_x |a|^2) / (2 a x b). */
        cb_vf gx = cb_vf_mul(cross(py[ib], py[ia], b2, a2), inv);
        cb_vf gy = cb_vf_mul(cross(px[ia], px[ib], a2, b2), inv);
        ex[e] = cb_vf_select(env[e], gx, ex[e]);
        ey[e] = cb_vf_select(env[e], gy, ey[e]);
    }
}

/* What q's cell steals from the cells of triangle t's corners, in the lanes whose cavity holds
 * t, added to their rows of out. */
CB_INLINE void triangle_share_block(const natural *d, uint32_t t, const unsigned *bits, cb_vf x,
                                    cb_vf y, float *out, size_t ostride)
{
    cb_vm own = cb_vm_from_bits(bits[t]);
    const uint32_t *v = d->v[t];
    /* Vertices relative to q. */
    cb_vf px[3], py[3];
    for (int k = 0; k < 3; ++k) {
        px[k] = cb_vf_sub(cb_vf_set1(d->x[v[k]]), x);
        py[k] = cb_vf_sub(cb_vf_set1(d->y[v[k]]), y);
    }
    /* C - q = u + (a - q), with a - q = (px[0], py[0]). */
    cb_vf ccx = cb_vf_add(cb_vf_set1(d->ux[t]), px[0]),
          ccy = cb_vf_add(cb_vf_set1(d->uy[t]), py[0]);
    cb_vf ex[3], ey[3];
    cb_vm env[3];
    cavity_edges(d, t, bits, own, px, py, x, y, ex, ey, env);
    /* Per corner k, with n = edge k -> k+1 (index k+2) and p = edge k+2 -> k (index k+1):
     *   2 area_k = C x X_p - C x X_n + [n ends the cavity] m_qk x X_n
     *                                - [p ends the cavity] m_qk x X_p,    m_qk = p_k / 2.
     * Each edge's C x X_e serves both its corners, so it is computed once. */
    cb_vf cc[3], tn[3], tp[3];
    for (int e = 0; e < 3; ++e) {
        cc[e] = cross(ccx, ccy, ex[e], ey[e]);
        tn[e] = tp[e] = cb_vf_zero();
        if (cb_vm_any(env[e])) {
            /* Edge e is the n edge of corner e+1 and the p edge of corner e+2. */
            int kn = (e + 1) % 3, kp = (e + 2) % 3;
            tn[e] = cb_vf_select(env[e], cross(px[kn], py[kn], ex[e], ey[e]), cb_vf_zero());
            tp[e] = cb_vf_select(env[e], cross(px[kp], py[kp], ex[e], ey[e]), cb_vf_zero());
        }
    }
    const cb_vf half = cb_vf_set1(0.5f), quarter = cb_vf_set1(0.25f);
    for (int k = 0; k < 3; ++k) {
        int en = (k + 2) % 3, ep = (k + 1) % 3;
        /* (C x X_p - C x X_n) / 2 + (p_k x X_n - p_k x X_p) / 4. */
        cb_vf area = cb_vf_fmadd(cb_vf_sub(tn[en], tp[ep]), quarter,
                                 cb_vf_mul(half, cb_vf_sub(cc[ep], cc[en])));
        float *row = out + v[k] * ostride;
        cb_vf_storeu(row, cb_vf_add(cb_vf_loadu(row), cb_vf_select(own, area, cb_vf_zero())));
    }
}

static void sibson_block(const natural *d, uint32_t m, cb_vf x, cb_vf y, float *out, size_t ostride)
{
    unsigned bits[2 * CB_SOLVER_MAX_NODES];
    for (uint32_t t = 0; t < d->tri_count; ++t) {
        bits[t] = cb_vm_bits(in_circle(d, t, x, y));
    }
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf_storeu(out + i * ostride, cb_vf_zero());
    }
    for (uint32_t t = 0; t < d->tri_count; ++t) {
        if (bits[t] != 0) {
            triangle_share_block(d, t, bits, x, y, out, ostride);
        }
    }
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const natural *d = s->data;
    uint32_t m = s->node_count;
    if (d->collinear) {
        cb_line1d_block(&d->line, in->x, in->y, out, ostride);
        return;
    }
    cb_vf inside_d, edge, t;
    cb_hull_block(&d->hull, in->x, in->y, &inside_d, &edge, &t);
    cb_vm inside = cb_vf_gt(inside_d, cb_vf_set1(d->inside_tol));
    /* On a node: the nearest node within the snap radius takes all weight. */
    cb_vf near2 = cb_vf_set1(INFINITY), near_i = cb_vf_set1(-1.0f);
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf dx = cb_vf_sub(in->x, cb_vf_set1(d->x[i])),
              dy = cb_vf_sub(in->y, cb_vf_set1(d->y[i]));
        cb_vf d2 = cb_vf_fmadd(dx, dx, cb_vf_mul(dy, dy));
        cb_vm closer = cb_vf_lt(d2, near2);
        near2 = cb_vf_select(closer, d2, near2);
        near_i = cb_vf_select(closer, cb_vf_set1((float)i), near_i);
    }
    cb_vm on_node = cb_vf_le(near2, cb_vf_set1(d->snap2));
    cb_vm sibson = cb_vm_and(inside, cb_vm_not(on_node));
    if (cb_vm_any(sibson)) {
        sibson_block(d, m, in->x, in->y, out, ostride);
    }
    /* Normalize the stolen areas; other lanes get the hull projection or their node. */
    cb_vf sum = cb_vf_zero();
    for (uint32_t i = 0; i < m; ++i) {
        sum = cb_vf_add(sum, cb_vf_loadu(out + i * ostride));
    }
    cb_vf inv = cb_vf_div(cb_vf_set1(1.0f), cb_vf_select(sibson, sum, cb_vf_set1(1.0f)));
    for (uint32_t i = 0; i < m; ++i) {
        float *row = out + i * ostride;
        cb_vf w =
            cb_vf_select(sibson, cb_vf_clamp01(cb_vf_mul(cb_vf_loadu(row), inv)), cb_vf_zero());
        w = cb_vf_select(
            on_node,
            cb_vf_select(cb_vf_eq(near_i, cb_vf_set1((float)i)), cb_vf_set1(1.0f), cb_vf_zero()),
            w);
        cb_vf_storeu(row, w);
    }
    cb_vm project = cb_vm_and(cb_vm_not(inside), cb_vm_not(on_node));
    if (cb_vm_any(project)) {
        cb_hull_write_block(&d->hull, project, edge, t, out, ostride, m);
    }
}

/* Scalar: the same decomposition over the triangles whose circumcircle holds q. */
static bool in_circle_one(const natural *d, int32_t t, float x, float y)
{
    uint32_t a = d->v[t][0];
    float dx = x - d->x[a], dy = y - d->y[a];
    return dx * dx + dy * dy - 2.0f * (dx * d->ux[t] + dy * d->uy[t]) < 0.0f;
}

static float cross1(float ax, float ay, float bx, float by)
{
    return ax * by - ay * bx;
}

/* What q's cell steals from the cells of triangle tr's corners (tr's circumcircle holds q),
 * added to their entries of out. */
static void triangle_share(const natural *d, uint32_t tr, float x, float y, float *out)
{
    const uint32_t *v = d->v[tr];
    float px[3], py[3], ex[3], ey[3];
    bool env[3];
    for (int k = 0; k < 3; ++k) {
        px[k] = d->x[v[k]] - x, py[k] = d->y[v[k]] - y;
    }
    float ccx = d->ux[tr] + px[0], ccy = d->uy[tr] + py[0];
    for (int k = 0; k < 3; ++k) {
        int32_t nb = d->adj[tr][k];
        env[k] = nb < 0 || !in_circle_one(d, nb, x, y);
        if (!env[k]) {
            ex[k] = d->mx[tr][k] - x, ey[k] = d->my[tr][k] - y;
            continue;
        }
        int ia = (k + 1) % 3, ib = (k + 2) % 3;
        float a2 = px[ia] * px[ia] + py[ia] * py[ia], b2 = px[ib] * px[ib] + py[ib] * py[ib];
        float inv = 0.5f / cross1(px[ia], py[ia], px[ib], py[ib]);
        ex[k] = cross1(py[ib], py[ia], b2, a2) * inv;
        ey[k] = cross1(px[ia], px[ib], a2, b2) * inv;
    }
    float cc[3], tn[3], tp[3];
    for (int k = 0; k < 3; ++k) {
        cc[k] = cross1(ccx, ccy, ex[k], ey[k]);
        int kn = (k + 1) % 3, kp = (k + 2) % 3;
        tn[k] = env[k] ? cross1(px[kn], py[kn], ex[k], ey[k]) : 0.0f;
        tp[k] = env[k] ? cross1(px[kp], py[kp], ex[k], ey[k]) : 0.0f;
    }
    for (int k = 0; k < 3; ++k) {
        int en = (k + 2) % 3, ep = (k + 1) % 3;
        out[v[k]] += 0.5f * (cc[ep] - cc[en]) + 0.25f * (tn[en] - tp[ep]);
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const natural *d = s->data;
    uint32_t m = s->node_count;
    if (d->collinear) {
        cb_line1d_one(&d->line, q[0], q[1], out, m);
        return;
    }
    float x = q[0], y = q[1];
    memset(out, 0, m * sizeof(float));
    float near2 = INFINITY;
    uint32_t near_i = 0;
    for (uint32_t i = 0; i < m; ++i) {
        float dx = x - d->x[i], dy = y - d->y[i];
        float d2 = dx * dx + dy * dy;
        if (d2 < near2) {
            near2 = d2, near_i = i;
        }
    }
    if (near2 <= d->snap2) {
        out[near_i] = 1.0f;
        return;
    }
    float inside, t;
    uint32_t e;
    cb_hull_one(&d->hull, x, y, &inside, &e, &t);
    if (!(inside > d->inside_tol)) {
        out[d->hull.a[e]] = 1.0f - t;
        out[d->hull.b[e]] += t;
        return;
    }
    for (uint32_t tr = 0; tr < d->tri_count; ++tr) {
        if (in_circle_one(d, (int32_t)tr, x, y)) {
            triangle_share(d, tr, x, y, out);
        }
    }
    float sum = 0.0f;
    for (uint32_t i = 0; i < m; ++i) {
        sum += out[i];
    }
    float inv = 1.0f / sum;
    for (uint32_t i = 0; i < m; ++i) {
        float w = out[i] * inv;
        out[i] = w > 0.0f ? (w < 1.0f ? w : 1.0f) : 0.0f;
    }
}

const cb_solver_ops cb_solver_ops_natural_neighbor = {create, block, one};
