/* bilinear_2d: bilinear interpolation over a rectangular grid of nodes, listed x fastest
 * (node iy * nx + ix), clamped outside the grid (the edge and corner nodes keep their weight).
 *
 * The weight of node (ix, iy) is the product of the 1D hat weights of ix along x and iy along y
 * (shared.c), so a query on a node gives it exactly 1 and the 1D exactness carries over. Rows
 * or columns of one node (nx or ny = 1) interpolate along the other axis only. */
#include <math.h>
#include <string.h>

#include "solvers/solver_impl.h"

typedef struct bilinear {
    uint32_t nx, ny;
    cb_hat hx, hy;
} bilinear;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    bilinear *d = tables;
    uint32_t nx = n->nx, ny = n->ny;
    d->hx.t = cb_layout_take(l, nx * sizeof(float));
    d->hx.inv = cb_layout_take(l, nx * sizeof(float));
    d->hy.t = cb_layout_take(l, ny * sizeof(float));
    d->hy.inv = cb_layout_take(l, ny * sizeof(float));
}

static cb_result grid_size(const cb_solver_desc *desc, uint32_t *nx, uint32_t *ny, cb_error *err)
{
    uint32_t m = desc->node_count;
    uint32_t gx = desc->grid_nx, gy = desc->grid_ny;
    if (gx == 0 && gy == 0) {
        gx = 1;
        while (gx < m && desc->nodes[2 * gx + 1] == desc->nodes[1]) {
            ++gx;
        }
    }
    if (gx == 0) {
        gx = gy <= m && m % gy == 0 ? m / gy : 0;
    }
    if (gy == 0) {
        gy = m % gx == 0 ? m / gx : 0;
    }
    if (gx == 0 || gy == 0 || (uint64_t)gx * gy != m) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "bilinear_2d: grid %u x %u does not hold node_count %u nodes",
                            desc->grid_nx, desc->grid_ny, m);
    }
    *nx = gx;
    *ny = gy;
    return CB_OK;
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t nx = 0, ny = 0;
    cb_result r = grid_size(desc, &nx, &ny, err);
    if (r != CB_OK) {
        return r;
    }
    const float *p = desc->nodes;
    for (uint32_t iy = 0; iy < ny; ++iy) {
        for (uint32_t ix = 0; ix < nx; ++ix) {
            uint32_t k = iy * nx + ix;
            if (p[2 * k] != p[2 * ix] || p[2 * k + 1] != p[2 * iy * nx + 1]) {
                return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                    "bilinear_2d: nodes[%u] = (%g, %g) is off the grid (x of "
                                    "column %u, y of row %u)",
                                    k, (double)p[2 * k], (double)p[2 * k + 1], ix, iy);
            }
        }
    }
    for (uint32_t ix = 1; ix < nx; ++ix) {
        if (!(p[2 * ix] > p[2 * (ix - 1)])) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "bilinear_2d: x must increase along a row (nodes[%u])", ix);
        }
    }
    for (uint32_t iy = 1; iy < ny; ++iy) {
        if (!(p[2 * iy * nx + 1] > p[2 * (iy - 1) * nx + 1])) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "bilinear_2d: y must increase along a column (nodes[%u])", iy * nx);
        }
    }
    bilinear tmp;
    r = cb_solver_tables(s, sizeof tmp, plan, &(cb_plan_sizes){.nx = nx, .ny = ny}, &tmp, err);
    if (r != CB_OK) {
        return r;
    }
    bilinear *d = s->data;
    d->nx = d->hx.n = nx;
    d->ny = d->hy.n = ny;
    for (uint32_t ix = 0; ix < nx; ++ix) {
        d->hx.t[ix] = p[2 * ix];
    }
    for (uint32_t iy = 0; iy < ny; ++iy) {
        d->hy.t[iy] = p[2 * iy * nx + 1];
    }
    cb_hat_prepare(&d->hx);
    cb_hat_prepare(&d->hy);
    return CB_OK;
}

/* Knot k's hat weight: the same operations as cb_hat_block, one knot at a time, so that the
 * x weights can be recomputed per grid row instead of kept in a scratch buffer. */
CB_INLINE cb_vf hat_weight(const cb_hat *h, uint32_t k, cb_vf u)
{
    cb_vf one = cb_vf_set1(1.0f);
    cb_vf w = one;
    if (k > 0) {
        w = cb_vf_mul(cb_vf_sub(u, cb_vf_set1(h->t[k - 1])), cb_vf_set1(h->inv[k - 1]));
    }
    if (k + 1 < h->n) {
        w = cb_vf_min(w,
                      cb_vf_fnmadd(cb_vf_sub(u, cb_vf_set1(h->t[k])), cb_vf_set1(h->inv[k]), one));
    }
    return cb_vf_clamp01(w);
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const bilinear *d = s->data;
    for (uint32_t iy = 0; iy < d->ny; ++iy) {
        cb_vf wy = hat_weight(&d->hy, iy, in->y);
        for (uint32_t ix = 0; ix < d->nx; ++ix) {
            cb_vf w = cb_vf_mul(hat_weight(&d->hx, ix, in->x), wy);
            cb_vf_storeu(out + (iy * d->nx + ix) * ostride, w);
        }
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const bilinear *d = s->data;
    memset(out, 0, s->node_count * sizeof(float));
    uint32_t ix, iy;
    float fx, fy;
    cb_hat_one(&d->hx, q[0], &ix, &fx);
    cb_hat_one(&d->hy, q[1], &iy, &fy);
    float wx[2] = {1.0f - fx, fx}, wy[2] = {1.0f - fy, fy};
    for (uint32_t a = 0; a < 2; ++a) {
        for (uint32_t b = 0; b < 2; ++b) {
            if (iy + a < d->ny && ix + b < d->nx) {
                out[(iy + a) * d->nx + ix + b] = wx[b] * wy[a];
            }
        }
    }
}

const cb_solver_ops cb_solver_ops_bilinear = {create, block, one};
