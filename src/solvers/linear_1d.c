/* linear_1d: Unity's 1D blend tree. Thresholds are sorted; a query between two neighbouring
 * thresholds blends their nodes linearly, and beyond either end the end node takes all weight.
 *
 * Equal thresholds: a run of k nodes at the same threshold t is one knot of the piecewise-linear
 * interpolation. Its weight goes to the first of them (in the order given) for queries below t,
 * to the last for queries above t, and is shared evenly (1/k each) exactly at t. So a pair of
 * equal thresholds is a step: the blend switches clip at t, as a hard cut. Weights stay
 * continuous everywhere else.
 *
 * Vector path: every knot's hat weight min(rise, fall) clamped to [0, 1] (shared.c), O(knots)
 * per W queries with no search. Scalar path: binary search for the segment. Exactness: a query
 * equal to a threshold gives its node exactly 1 (the inverse spans are rounded so that the
 * neighbours' weights reach exactly 0 there). */
#include <string.h>

#include "solvers/solver_impl.h"

typedef struct lin1d {
    cb_hat hat;       /* one knot per distinct threshold */
    uint32_t *member; /* node indices sorted by (threshold, index) */
    uint32_t *first;  /* per knot: its first member's position in member[] */
    uint32_t *size;   /* per knot: how many nodes share the threshold */
    uint32_t *row;    /* per knot: the node row that receives the knot weight (first member) */
    bool grouped;     /* some knot has more than one node */
} lin1d;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    lin1d *d = tables;
    uint32_t m = n->nodes;
    d->hat.t = cb_layout_take(l, m * sizeof(float));
    d->hat.inv = cb_layout_take(l, m * sizeof(float));
    d->member = cb_layout_take(l, m * sizeof(uint32_t));
    d->first = cb_layout_take(l, m * sizeof(uint32_t));
    d->size = cb_layout_take(l, m * sizeof(uint32_t));
    d->row = cb_layout_take(l, m * sizeof(uint32_t));
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t m = desc->node_count;
    lin1d tmp;
    cb_result r = cb_solver_tables(s, sizeof tmp, plan, &(cb_plan_sizes){.nodes = m}, &tmp, err);
    if (r != CB_OK) {
        return r;
    }
    lin1d *d = s->data;

    /* Stable insertion sort by threshold (m <= 128). */
    for (uint32_t i = 0; i < m; ++i) {
        uint32_t j = i;
        while (j > 0 && desc->nodes[d->member[j - 1]] > desc->nodes[i]) {
            d->member[j] = d->member[j - 1];
            --j;
        }
        d->member[j] = i;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < m; ++i) {
        float t = desc->nodes[d->member[i]];
        if (n > 0 && t == d->hat.t[n - 1]) {
            d->size[n - 1]++;
            d->grouped = true;
            continue;
        }
        d->hat.t[n] = t;
        d->first[n] = i;
        d->size[n] = 1;
        d->row[n] = d->member[i];
        ++n;
    }
    d->hat.n = n;
    cb_hat_prepare(&d->hat);
    return CB_OK;
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const lin1d *d = s->data;
    cb_hat_block(&d->hat, in->x, out, ostride, d->row);
    if (!d->grouped) {
        return;
    }
    for (uint32_t g = 0; g < d->hat.n; ++g) {
        uint32_t k = d->size[g];
        if (k == 1) {
            continue;
        }
        cb_vf h = cb_vf_loadu(out + d->row[g] * ostride);
        cb_vf t = cb_vf_set1(d->hat.t[g]);
        cb_vm below = cb_vf_lt(in->x, t), above = cb_vf_gt(in->x, t);
        cb_vf share = cb_vf_mul(h, cb_vf_set1(1.0f / (float)k));
        for (uint32_t j = 0; j < k; ++j) {
            uint32_t node = d->member[d->first[g] + j];
            cb_vf w = cb_vf_select(below, j == 0 ? h : cb_vf_zero(),
                                   cb_vf_select(above, j == k - 1 ? h : cb_vf_zero(), share));
            cb_vf_storeu(out + node * ostride, w);
        }
    }
}

/* Adds knot g's weight h to its member nodes, per the equal-threshold rule. */
static void put_knot(const lin1d *d, uint32_t g, float u, float h, float *out)
{
    uint32_t k = d->size[g];
    float t = d->hat.t[g];
    for (uint32_t j = 0; j < k; ++j) {
        uint32_t node = d->member[d->first[g] + j];
        float w = u < t ? (j == 0 ? h : 0.0f) : u > t ? (j == k - 1 ? h : 0.0f) : h / (float)k;
        out[node] = w;
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const lin1d *d = s->data;
    memset(out, 0, s->node_count * sizeof(float));
    uint32_t lo;
    float f;
    cb_hat_one(&d->hat, q[0], &lo, &f);
    put_knot(d, lo, q[0], 1.0f - f, out);
    if (lo + 1 < d->hat.n) {
        put_knot(d, lo + 1, q[0], f, out);
    }
}

const cb_solver_ops cb_solver_ops_linear_1d = {create, block, one};
