/* freeform_cartesian_2d: Unity's 2D Freeform Cartesian blend tree, gradient band
 * interpolation (R. S. Johansen, "Automated Semi-Procedural Animation for Character
 * Locomotion", master's thesis, Aarhus University, 2009, section 6.3).
 *
 * Each pair of nodes i, j defines a band across which node i's influence falls linearly from 1
 * (at p_i) to 0 (at p_j); node i's influence is the smallest over all j:
 *   h_i(q) = clamp01( min_j 1 - ((q - p_i) . (p_j - p_i)) / |p_j - p_i|^2 )
 * and the weights are h_i / sum_k h_k. The node nearest to q always has h >= 1/2 (q is at most
 * half-way to any other node), so the sum never vanishes. Cost: M (M - 1) pairs, three vector
 * operations each, with g_ij = (p_j - p_i) / |p_j - p_i|^2 precomputed. */
#include <math.h>

#include "solvers/solver_impl.h"

typedef struct cartesian {
    float *x, *y;   /* node positions */
    float *gx, *gy; /* g_ij at [i * (M - 1) + n], n running over j != i */
    float *uniform; /* fallback weights (never needed: the sum is >= 1/2) */
} cartesian;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    cartesian *d = tables;
    uint32_t m = n->nodes;
    size_t pairs = (size_t)m * (m - 1);
    d->x = cb_layout_take(l, m * sizeof(float));
    d->y = cb_layout_take(l, m * sizeof(float));
    d->gx = cb_layout_take(l, pairs * sizeof(float));
    d->gy = cb_layout_take(l, pairs * sizeof(float));
    d->uniform = cb_layout_take(l, m * sizeof(float));
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t m = desc->node_count;
    cartesian tmp;
    cb_result r = cb_solver_tables(s, sizeof tmp, plan, &(cb_plan_sizes){.nodes = m}, &tmp, err);
    if (r != CB_OK) {
        return r;
    }
    cartesian *d = s->data;
    for (uint32_t i = 0; i < m; ++i) {
        d->x[i] = desc->nodes[2 * i];
        d->y[i] = desc->nodes[2 * i + 1];
        d->uniform[i] = 1.0f / (float)m;
    }
    for (uint32_t i = 0; i < m; ++i) {
        size_t n = (size_t)i * (m - 1);
        for (uint32_t j = 0; j < m; ++j) {
            if (j == i) {
                continue;
            }
            double ex = (double)d->x[j] - d->x[i], ey = (double)d->y[j] - d->y[i];
            double len2 = ex * ex + ey * ey;
            d->gx[n] = (float)(ex / len2);
            d->gy[n] = (float)(ey / len2);
            ++n;
        }
    }
    return CB_OK;
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const cartesian *d = s->data;
    uint32_t m = s->node_count;
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf dx = cb_vf_sub(in->x, cb_vf_set1(d->x[i]));
        cb_vf dy = cb_vf_sub(in->y, cb_vf_set1(d->y[i]));
        const float *gx = d->gx + (size_t)i * (m - 1), *gy = d->gy + (size_t)i * (m - 1);
        /* The largest projection t_ij; h_i = clamp01(1 - max_j t_ij). */
        cb_vf tmax = cb_vf_set1(-INFINITY);
        for (uint32_t n = 0; n + 1 < m; ++n) {
            cb_vf t = cb_vf_fmadd(dx, cb_vf_set1(gx[n]), cb_vf_mul(dy, cb_vf_set1(gy[n])));
            tmax = cb_vf_max(tmax, t);
        }
        cb_vf_storeu(out + i * ostride, cb_vf_clamp01(cb_vf_sub(cb_vf_set1(1.0f), tmax)));
    }
    cb_normalize_block(out, ostride, m, d->uniform);
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const cartesian *d = s->data;
    uint32_t m = s->node_count;
    for (uint32_t i = 0; i < m; ++i) {
        float dx = q[0] - d->x[i], dy = q[1] - d->y[i];
        const float *gx = d->gx + (size_t)i * (m - 1), *gy = d->gy + (size_t)i * (m - 1);
        float h = 1.0f;
        for (uint32_t n = 0; n + 1 < m; ++n) {
            float v = 1.0f - (dx * gx[n] + dy * gy[n]);
            h = v < h ? v : h;
        }
        out[i] = h > 0.0f ? h : 0.0f;
    }
    cb_normalize_one(out, m, d->uniform);
}

const cb_solver_ops cb_solver_ops_freeform_cartesian = {create, block, one};
