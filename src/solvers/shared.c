/* Pieces several solvers share: 1D hat weights, normalization with a fallback, and the
 * closest point of a convex hull. */
#include <math.h>

#include "solvers/solver_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Hat weights over sorted knots                                                              */

void cb_hat_prepare(cb_hat *h)
{
    for (uint32_t k = 0; k + 1 < h->n; ++k) {
        float span = h->t[k + 1] - h->t[k];
        float inv = 1.0f / span;
        /* The query t[k+1] gives (t[k+1] - t[k]) * inv, whose exact value must be >= 1 so that
         * knot k+1 gets exactly 1 and knot k exactly 0 there (also when the product is fused
         * into 1 - a * inv). float * float is exact in double. */
        while ((double)span * (double)inv < 1.0) {
            inv = nextafterf(inv, INFINITY);
        }
        h->inv[k] = inv;
    }
}

void cb_hat_block(const cb_hat *h, cb_vf u, float *out, size_t ostride, const uint32_t *row)
{
    cb_vf one = cb_vf_set1(1.0f);
    cb_vf rise = one; /* (u - t[k-1]) inv[k-1] of the knot before, 1 for the first knot */
    for (uint32_t k = 0; k < h->n; ++k) {
        cb_vf w = rise;
        if (k + 1 < h->n) {
            cb_vf a = cb_vf_sub(u, cb_vf_set1(h->t[k]));
            cb_vf inv = cb_vf_set1(h->inv[k]);
            w = cb_vf_min(w, cb_vf_fnmadd(a, inv, one));
            rise = cb_vf_mul(a, inv);
        }
        cb_vf_storeu(out + (row != NULL ? row[k] : k) * ostride, cb_vf_clamp01(w));
    }
}

void cb_hat_one(const cb_hat *h, float u, uint32_t *lo, float *f)
{
    if (!(u > h->t[0]) || h->n == 1) {
        *lo = 0;
        *f = 0.0f;
        return;
    }
    if (u >= h->t[h->n - 1]) {
        *lo = h->n - 1;
        *f = 0.0f;
        return;
    }
    uint32_t a = 0, b = h->n - 1; /* t[a] < u < t[b]... or u == t[a] */
    while (b - a > 1) {
        uint32_t m = (a + b) / 2;
        if (h->t[m] <= u) {
            a = m;
        } else {
            b = m;
        }
    }
    float g = (u - h->t[a]) * h->inv[a];
    *lo = a;
    *f = g > 1.0f ? 1.0f : g;
}

/* ------------------------------------------------------------------------------------------ */
/* Normalization                                                                              */

void cb_normalize_block(float *out, size_t ostride, uint32_t n, const float *fallback)
{
    cb_vf sum = cb_vf_zero();
    for (uint32_t i = 0; i < n; ++i) {
        sum = cb_vf_add(sum, cb_vf_loadu(out + i * ostride));
    }
    cb_vm ok = cb_vf_gt(sum, cb_vf_zero());
    /* 1 / sum by division (not an estimate): a single node of weight 1 stays exactly 1. A lone
     * weight h times the rounded-up 1 / h can exceed 1 by an ulp, hence the min. */
    cb_vf inv = cb_vf_div(cb_vf_set1(1.0f), cb_vf_select(ok, sum, cb_vf_set1(1.0f)));
    for (uint32_t i = 0; i < n; ++i) {
        cb_vf w = cb_vf_min(cb_vf_mul(cb_vf_loadu(out + i * ostride), inv), cb_vf_set1(1.0f));
        cb_vf_storeu(out + i * ostride, cb_vf_select(ok, w, cb_vf_set1(fallback[i])));
    }
}

void cb_normalize_one(float *out, uint32_t n, const float *fallback)
{
    float sum = 0.0f;
    for (uint32_t i = 0; i < n; ++i) {
        sum += out[i];
    }
    if (!(sum > 0.0f)) {
        for (uint32_t i = 0; i < n; ++i) {
            out[i] = fallback[i];
        }
        return;
    }
    float inv = 1.0f / sum;
    for (uint32_t i = 0; i < n; ++i) {
        out[i] = fminf(out[i] * inv, 1.0f);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Collinear layouts                                                                          */

void cb_line1d_take(cb_layout *l, cb_line1d *d, uint32_t n)
{
    d->hat.t = cb_layout_take(l, n * sizeof(float));
    d->hat.inv = cb_layout_take(l, n * sizeof(float));
    d->row = cb_layout_take(l, n * sizeof(uint32_t));
}

void cb_line1d_prepare(cb_line1d *d, const cb_tri_mesh *mesh, const float *xy, uint32_t n)
{
    d->ox = (float)mesh->line_origin[0], d->oy = (float)mesh->line_origin[1];
    d->dx = (float)mesh->line_dir[0], d->dy = (float)mesh->line_dir[1];
    /* Positions along the line in double, sorted by insertion (n <= 128). Distinct nodes are
     * at least 1e-6 of the layout apart (solver.c), so the float knots stay distinct. */
    double u[CB_SOLVER_MAX_NODES];
    for (uint32_t i = 0; i < n; ++i) {
        double v = ((double)xy[2 * i] - mesh->line_origin[0]) * mesh->line_dir[0] +
                   ((double)xy[2 * i + 1] - mesh->line_origin[1]) * mesh->line_dir[1];
        uint32_t k = i;
        while (k > 0 && u[k - 1] > v) {
            u[k] = u[k - 1];
            d->row[k] = d->row[k - 1];
            --k;
        }
        u[k] = v;
        d->row[k] = i;
    }
    for (uint32_t k = 0; k < n; ++k) {
        d->hat.t[k] = (float)u[k];
    }
    d->hat.n = n;
    cb_hat_prepare(&d->hat);
}

void cb_line1d_block(const cb_line1d *d, cb_vf x, cb_vf y, float *out, size_t ostride)
{
    cb_vf u = cb_vf_fmadd(cb_vf_sub(x, cb_vf_set1(d->ox)), cb_vf_set1(d->dx),
                          cb_vf_mul(cb_vf_sub(y, cb_vf_set1(d->oy)), cb_vf_set1(d->dy)));
    cb_hat_block(&d->hat, u, out, ostride, d->row);
}

void cb_line1d_one(const cb_line1d *d, float x, float y, float *out, uint32_t n)
{
    float u = (x - d->ox) * d->dx + (y - d->oy) * d->dy;
    for (uint32_t i = 0; i < n; ++i) {
        out[i] = 0.0f;
    }
    uint32_t lo;
    float f;
    cb_hat_one(&d->hat, u, &lo, &f);
    out[d->row[lo]] = 1.0f - f;
    if (lo + 1 < d->hat.n) {
        out[d->row[lo + 1]] = f;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Closest point of a convex hull                                                             */

void cb_hull_take(cb_layout *l, cb_hull *h, uint32_t n)
{
    h->n = n;
    h->a = cb_layout_take(l, n * sizeof(uint32_t));
    h->b = cb_layout_take(l, n * sizeof(uint32_t));
    h->ax = cb_layout_take(l, n * sizeof(float));
    h->ay = cb_layout_take(l, n * sizeof(float));
    h->ex = cb_layout_take(l, n * sizeof(float));
    h->ey = cb_layout_take(l, n * sizeof(float));
    h->inv_len2 = cb_layout_take(l, n * sizeof(float));
    h->inv_len = cb_layout_take(l, n * sizeof(float));
}

void cb_hull_prepare(cb_hull *h, const cb_tri_mesh *mesh, const float *xy)
{
    for (uint32_t e = 0; e < h->n; ++e) {
        uint32_t a = mesh->hull[e], b = mesh->hull[(e + 1) % h->n];
        h->a[e] = a;
        h->b[e] = b;
        h->ax[e] = xy[2 * a];
        h->ay[e] = xy[2 * a + 1];
        h->ex[e] = xy[2 * b] - xy[2 * a];
        h->ey[e] = xy[2 * b + 1] - xy[2 * a + 1];
        double len2 = (double)h->ex[e] * h->ex[e] + (double)h->ey[e] * h->ey[e];
        h->inv_len2[e] = (float)(1.0 / len2);
        h->inv_len[e] = (float)(1.0 / sqrt(len2));
    }
}

/* The closest point of the hull boundary, chosen by feature rather than by comparing
 * distances, which for a point outside near a vertex differ only in the second order (a
 * projection that lands 1e-4 along an edge is 1e-8 closer than the vertex: float rounding of
 * the squared distances would pick either, and the weights would differ by 1e-4):
 *   inside (every signed distance >= 0): among the edges whose foot point lies on the edge,
 *     the one with the smallest signed distance (hull vertices on a straight side make several
 *     edges share a line; only one of them holds the foot point);
 *   outside, in an edge's region (the query outside that edge, its foot point on it):
 *     that edge, at the foot point;
 *   outside, in a vertex's region: the nearest vertex (first-order well separated there). */
void cb_hull_block(const cb_hull *h, cb_vf x, cb_vf y, cb_vf *inside, cb_vf *edge, cb_vf *t)
{
    cb_vf inf = cb_vf_set1(INFINITY), one = cb_vf_set1(1.0f), zero = cb_vf_zero();
    cb_vf min_s = inf, any_e = zero, any_t = zero;
    cb_vf in_s = inf, in_e = zero, in_t = zero;
    cb_vf reg_s = inf, reg_e = zero, reg_t = zero;
    cb_vf v_d2 = inf, v_e = zero;
    for (uint32_t e = 0; e < h->n; ++e) {
        cb_vf fe = cb_vf_set1((float)e);
        cb_vf dx = cb_vf_sub(x, cb_vf_set1(h->ax[e])), dy = cb_vf_sub(y, cb_vf_set1(h->ay[e]));
        cb_vf ex = cb_vf_set1(h->ex[e]), ey = cb_vf_set1(h->ey[e]);
        /* Signed distance to the edge's line, positive on the left (inside: the hull runs
         * counter-clockwise), and the unclamped parameter of the foot point. */
        cb_vf sd =
            cb_vf_mul(cb_vf_fmadd(ex, dy, cb_vf_neg(cb_vf_mul(ey, dx))), cb_vf_set1(h->inv_len[e]));
        cb_vf te = cb_vf_mul(cb_vf_fmadd(dx, ex, cb_vf_mul(dy, ey)), cb_vf_set1(h->inv_len2[e]));
        cb_vm on_edge = cb_vm_and(cb_vf_ge(te, zero), cb_vf_le(te, one));
        /* Strict comparisons: ties keep the earlier edge, as the scalar path does. */
        cb_vm b = cb_vf_lt(sd, min_s);
        min_s = cb_vf_select(b, sd, min_s);
        any_e = cb_vf_select(b, fe, any_e);
        any_t = cb_vf_select(b, cb_vf_clamp01(te), any_t);
        b = cb_vm_and(on_edge, cb_vf_lt(sd, in_s));
        in_s = cb_vf_select(b, sd, in_s);
        in_e = cb_vf_select(b, fe, in_e);
        in_t = cb_vf_select(b, te, in_t);
        cb_vf as = cb_vf_abs(sd);
        b = cb_vm_and(cb_vm_and(on_edge, cb_vf_lt(sd, zero)), cb_vf_lt(as, reg_s));
        reg_s = cb_vf_select(b, as, reg_s);
        reg_e = cb_vf_select(b, fe, reg_e);
        reg_t = cb_vf_select(b, te, reg_t);
        /* The edge's start vertex: every hull vertex starts one edge. */
        cb_vf d2 = cb_vf_fmadd(dx, dx, cb_vf_mul(dy, dy));
        b = cb_vf_lt(d2, v_d2);
        v_d2 = cb_vf_select(b, d2, v_d2);
        v_e = cb_vf_select(b, fe, v_e);
    }
    cb_vm is_in = cb_vf_ge(min_s, zero);
    cb_vm has_in = cb_vf_lt(in_s, inf), has_region = cb_vf_lt(reg_s, inf);
    cb_vf e_in = cb_vf_select(has_in, in_e, any_e), t_in = cb_vf_select(has_in, in_t, any_t);
    *inside = min_s;
    *edge = cb_vf_select(is_in, e_in, cb_vf_select(has_region, reg_e, v_e));
    *t = cb_vf_select(is_in, t_in, cb_vf_select(has_region, reg_t, zero));
}

void cb_hull_write_block(const cb_hull *h, cb_vm mask, cb_vf edge, cb_vf t, float *out,
                         size_t ostride, uint32_t node_count)
{
    /* Each lane's edge endpoints as node indices (floats hold them exactly). */
    cb_vf na = cb_vf_set1(-1.0f), nb = cb_vf_set1(-1.0f);
    for (uint32_t e = 0; e < h->n; ++e) {
        cb_vm m = cb_vf_eq(edge, cb_vf_set1((float)e));
        na = cb_vf_select(m, cb_vf_set1((float)h->a[e]), na);
        nb = cb_vf_select(m, cb_vf_set1((float)h->b[e]), nb);
    }
    cb_vf wa = cb_vf_sub(cb_vf_set1(1.0f), t);
    for (uint32_t i = 0; i < node_count; ++i) {
        cb_vf fi = cb_vf_set1((float)i);
        cb_vf w = cb_vf_add(cb_vf_select(cb_vf_eq(na, fi), wa, cb_vf_zero()),
                            cb_vf_select(cb_vf_eq(nb, fi), t, cb_vf_zero()));
        float *row = out + i * ostride;
        cb_vf_storeu(row, cb_vf_select(mask, w, cb_vf_loadu(row)));
    }
}

void cb_hull_one(const cb_hull *h, float x, float y, float *inside, uint32_t *edge, float *t)
{
    float min_s = INFINITY, any_t = 0.0f, in_s = INFINITY, in_t = 0.0f, reg_s = INFINITY;
    float reg_t = 0.0f, v_d2 = INFINITY;
    uint32_t any_e = 0, in_e = 0, reg_e = 0, v_e = 0;
    for (uint32_t e = 0; e < h->n; ++e) {
        float dx = x - h->ax[e], dy = y - h->ay[e];
        float sd = (h->ex[e] * dy - h->ey[e] * dx) * h->inv_len[e];
        float te = (dx * h->ex[e] + dy * h->ey[e]) * h->inv_len2[e];
        bool on_edge = te >= 0.0f && te <= 1.0f;
        if (sd < min_s) {
            min_s = sd, any_e = e, any_t = te > 0.0f ? (te < 1.0f ? te : 1.0f) : 0.0f;
        }
        if (on_edge && sd < in_s) {
            in_s = sd, in_e = e, in_t = te;
        }
        if (on_edge && sd < 0.0f && -sd < reg_s) {
            reg_s = -sd, reg_e = e, reg_t = te;
        }
        float d2 = dx * dx + dy * dy;
        if (d2 < v_d2) {
            v_d2 = d2, v_e = e;
        }
    }
    *inside = min_s;
    if (min_s >= 0.0f) {
        bool has_in = in_s < INFINITY;
        *edge = has_in ? in_e : any_e, *t = has_in ? in_t : any_t;
    } else if (reg_s < INFINITY) {
        *edge = reg_e, *t = reg_t;
    } else {
        *edge = v_e, *t = 0.0f;
    }
}
