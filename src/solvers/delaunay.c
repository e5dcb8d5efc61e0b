/* delaunay_2d: barycentric interpolation over the Delaunay triangulation of the nodes, the
 * blend space of Godot (BlendSpace2D) and Unreal.
 *
 * create triangulates once with exact predicates (triangulate.c). A query inside the convex
 * hull gets the barycentric coordinates of its triangle, so at most three nodes have weight and
 * the weights are linear inside each triangle (continuous across edges). Outside the hull the
 * closest point of the hull boundary is used: the two end nodes of that hull edge share the
 * weight linearly along it. If all nodes are collinear (or there are fewer than three) there is
 * no triangle, and the query is projected onto the nodes' line and interpolated along it (1D
 * linear, clamped at the ends); so does a layout whose nodes all lie within 1e-6 of its diagonal
 * from one line.
 *
 * Vector path: every triangle's barycentric coordinates are computed for all lanes, and each
 * lane keeps the triangle where its smallest coordinate is largest (the one it is deepest
 * inside; on a shared edge or vertex any of them gives the same weights). With
 * u1 = (q - p0) x (p2 - p0), u2 = (p1 - p0) x (q - p0) and det = (p1 - p0) x (p2 - p0) the
 * weights are u1 / det, u2 / det and 1 - both, computed with the same operations as det, so a
 * query on a vertex gives exactly 1 and 0. Lanes whose best triangle is more than 1e-6 outside
 * (in barycentric units) take the hull projection. Scalar path: the first triangle that
 * contains the query. */
#include <math.h>
#include <string.h>

#include "solvers/solver_impl.h"

typedef struct delaunay {
    bool collinear;
    cb_line1d line;
    uint32_t tri_count;
    uint32_t *v0, *v1, *v2;             /* vertices, counter-clockwise */
    float *x0, *y0, *ax, *ay, *bx, *by; /* p0, p1 - p0, p2 - p0 */
    float *det, *inv_det;
    cb_hull hull;
} delaunay;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    delaunay *d = tables;
    uint32_t m = n->nodes, tris = n->tris, hull = n->hull;
    cb_line1d_take(l, &d->line, m);
    d->v0 = cb_layout_take(l, tris * sizeof(uint32_t));
    d->v1 = cb_layout_take(l, tris * sizeof(uint32_t));
    d->v2 = cb_layout_take(l, tris * sizeof(uint32_t));
    float **f[] = {&d->x0, &d->y0, &d->ax, &d->ay, &d->bx, &d->by, &d->det, &d->inv_det};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; ++k) {
        *f[k] = cb_layout_take(l, tris * sizeof(float));
    }
    cb_hull_take(l, &d->hull, hull);
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t m = desc->node_count;
    cb_tri_mesh mesh;
    cb_result r = cb_tri_mesh_build(desc->nodes, m, &s->allocator, &mesh, err);
    if (r != CB_OK) {
        return r;
    }
    delaunay tmp;
    cb_plan_sizes n = {.nodes = m, .tris = mesh.tri_count, .hull = mesh.hull_count};
    if ((r = cb_solver_tables(s, sizeof tmp, plan, &n, &tmp, err)) != CB_OK) {
        cb_tri_mesh_free(&mesh, &s->allocator);
        return r;
    }
    delaunay *d = s->data;
    const float *p = desc->nodes;
    d->collinear = mesh.collinear;
    if (mesh.collinear) {
        cb_line1d_prepare(&d->line, &mesh, p, m);
    }
    d->tri_count = 0;
    for (uint32_t k = 0; k < mesh.tri_count; ++k) {
        uint32_t a = mesh.tri[k][0], b = mesh.tri[k][1], c = mesh.tri[k][2];
        uint32_t t = d->tri_count;
        d->v0[t] = a, d->v1[t] = b, d->v2[t] = c;
        d->x0[t] = p[2 * a], d->y0[t] = p[2 * a + 1];
        /* The edge vectors as the query differences will round them (q - p0 with q = p1). */
        d->ax[t] = p[2 * b] - p[2 * a], d->ay[t] = p[2 * b + 1] - p[2 * a + 1];
        d->bx[t] = p[2 * c] - p[2 * a], d->by[t] = p[2 * c + 1] - p[2 * a + 1];
        /* In float, with the operations the vector path uses for u1 (two products, one
         * difference): u1 at q = p1 equals det bit for bit. */
        float det = d->ax[t] * d->by[t] - d->ay[t] * d->bx[t];
        /* A sliver whose float area rounds to zero or below cannot be divided by; its points
         * lie within rounding of the neighbouring triangles, which take them within the 1e-6
         * tolerance below. */
        if (!(det > 0.0f)) {
            continue;
        }
        d->det[t] = det;
        d->inv_det[t] = 1.0f / det;
        d->tri_count++;
    }
    cb_hull_prepare(&d->hull, &mesh, p);
    cb_tri_mesh_free(&mesh, &s->allocator);
    return CB_OK;
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const delaunay *d = s->data;
    uint32_t m = s->node_count;
    if (d->collinear) {
        cb_line1d_block(&d->line, in->x, in->y, out, ostride);
        return;
    }
    cb_vf best = cb_vf_set1(-INFINITY), bu1 = cb_vf_zero(), bu2 = cb_vf_zero();
    cb_vf bdet = cb_vf_set1(1.0f);
    cb_vf n0 = cb_vf_zero(), n1 = cb_vf_zero(), n2 = cb_vf_zero();
    for (uint32_t t = 0; t < d->tri_count; ++t) {
        cb_vf dx = cb_vf_sub(in->x, cb_vf_set1(d->x0[t])),
              dy = cb_vf_sub(in->y, cb_vf_set1(d->y0[t]));
        cb_vf det = cb_vf_set1(d->det[t]);
        cb_vf u1 =
            cb_vf_sub(cb_vf_mul(dx, cb_vf_set1(d->by[t])), cb_vf_mul(dy, cb_vf_set1(d->bx[t])));
        cb_vf u2 =
            cb_vf_sub(cb_vf_mul(cb_vf_set1(d->ax[t]), dy), cb_vf_mul(cb_vf_set1(d->ay[t]), dx));
        cb_vf u0 = cb_vf_sub(cb_vf_sub(det, u1), u2);
        cb_vf score = cb_vf_mul(cb_vf_min(u0, cb_vf_min(u1, u2)), cb_vf_set1(d->inv_det[t]));
        cb_vm better = cb_vf_gt(score, best);
        best = cb_vf_select(better, score, best);
        bu1 = cb_vf_select(better, u1, bu1);
        bu2 = cb_vf_select(better, u2, bu2);
        bdet = cb_vf_select(better, det, bdet);
        n0 = cb_vf_select(better, cb_vf_set1((float)d->v0[t]), n0);
        n1 = cb_vf_select(better, cb_vf_set1((float)d->v1[t]), n1);
        n2 = cb_vf_select(better, cb_vf_set1((float)d->v2[t]), n2);
    }
    /* Barycentric weights; within the tolerance outside a triangle they are clamped to >= 0
     * and renormalized (exact queries on vertices and edges are unaffected). */
    cb_vf one = cb_vf_set1(1.0f);
    cb_vf l1 = cb_vf_max(cb_vf_div(bu1, bdet), cb_vf_zero());
    cb_vf l2 = cb_vf_max(cb_vf_div(bu2, bdet), cb_vf_zero());
    cb_vf l0 = cb_vf_max(cb_vf_sub(cb_vf_sub(one, l1), l2), cb_vf_zero());
    cb_vf inv = cb_vf_div(one, cb_vf_add(cb_vf_add(l0, l1), l2));
    /* min(., 1): a lone weight times the rounded-up 1 / sum can exceed 1 by an ulp. */
    l0 = cb_vf_min(cb_vf_mul(l0, inv), one), l1 = cb_vf_min(cb_vf_mul(l1, inv), one);
    l2 = cb_vf_min(cb_vf_mul(l2, inv), one);
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf fi = cb_vf_set1((float)i);
        cb_vf w = cb_vf_add(cb_vf_add(cb_vf_select(cb_vf_eq(n0, fi), l0, cb_vf_zero()),
                                      cb_vf_select(cb_vf_eq(n1, fi), l1, cb_vf_zero())),
                            cb_vf_select(cb_vf_eq(n2, fi), l2, cb_vf_zero()));
        cb_vf_storeu(out + i * ostride, w);
    }
    cb_vm outside = cb_vf_lt(best, cb_vf_set1(-1e-6f));
    if (cb_vm_any(outside)) {
        cb_vf inside_d, edge, t;
        cb_hull_block(&d->hull, in->x, in->y, &inside_d, &edge, &t);
        cb_hull_write_block(&d->hull, outside, edge, t, out, ostride, m);
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const delaunay *d = s->data;
    uint32_t m = s->node_count;
    if (d->collinear) {
        cb_line1d_one(&d->line, q[0], q[1], out, m);
        return;
    }
    float best = -INFINITY, bu1 = 0.0f, bu2 = 0.0f, bdet = 1.0f;
    uint32_t bt = 0;
    for (uint32_t t = 0; t < d->tri_count && best < 0.0f; ++t) {
        float dx = q[0] - d->x0[t], dy = q[1] - d->y0[t];
        float u1 = dx * d->by[t] - dy * d->bx[t];
        float u2 = d->ax[t] * dy - d->ay[t] * dx;
        float u0 = d->det[t] - u1 - u2;
        float lo = u0 < u1 ? u0 : u1;
        lo = lo < u2 ? lo : u2;
        float score = lo * d->inv_det[t];
        if (score > best) {
            best = score, bu1 = u1, bu2 = u2, bdet = d->det[t], bt = t;
        }
    }
    memset(out, 0, m * sizeof(float));
    if (best < -1e-6f) {
        float inside;
        uint32_t e;
        float t;
        cb_hull_one(&d->hull, q[0], q[1], &inside, &e, &t);
        out[d->hull.a[e]] = 1.0f - t;
        out[d->hull.b[e]] += t;
        return;
    }
    float l1 = fmaxf(bu1 / bdet, 0.0f), l2 = fmaxf(bu2 / bdet, 0.0f);
    float l0 = fmaxf(1.0f - l1 - l2, 0.0f);
    float inv = 1.0f / (l0 + l1 + l2);
    out[d->v0[bt]] = fminf(l0 * inv, 1.0f);
    out[d->v1[bt]] = fminf(l1 * inv, 1.0f);
    out[d->v2[bt]] = fminf(l2 * inv, 1.0f);
}

const cb_solver_ops cb_solver_ops_delaunay = {create, block, one};
