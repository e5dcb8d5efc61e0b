/* idw: Shepard's inverse distance weighting, w_i = d_i^-p / sum_j d_j^-p (Shepard, "A
 * two-dimensional interpolation function for irregularly-spaced data", ACM national conference,
 * 1968).
 *
 * Computed as powers of distance ratios, r_i = d_min^2 / d_i^2 in [0, 1], w_i ~ r_i^(p/2):
 * the same weights after normalization, but nothing overflows or divides by zero. Every node at
 * the smallest distance has r = 1 exactly (so the sum is >= 1), and a query on a node gives that
 * node r = 1 and every other r = 0, hence weight exactly 1. p = 2 needs no power at all; other
 * powers use exp2(p/2 log2 r) from src/simd/vmath.h (r = 0 gives exactly 0). */
#include <math.h>

#include "simd/vmath.h"
#include "solvers/solver_impl.h"

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    cb_idw *d = tables;
    d->x = cb_layout_take(l, n->nodes * sizeof(float));
    d->y = cb_layout_take(l, n->nodes * sizeof(float));
    d->uniform = cb_layout_take(l, n->nodes * sizeof(float));
}

cb_result cb_idw_create(cb_solver *s, const cb_solver_desc *desc, uint32_t k, cb_error *err)
{
    uint32_t m = desc->node_count;
    cb_idw tmp;
    cb_result r = cb_solver_tables(s, sizeof tmp, plan, &(cb_plan_sizes){.nodes = m}, &tmp, err);
    if (r != CB_OK) {
        return r;
    }
    cb_idw *d = s->data;
    for (uint32_t i = 0; i < m; ++i) {
        d->x[i] = desc->nodes[(size_t)i * desc->dimension];
        d->y[i] = desc->dimension == 2 ? desc->nodes[(size_t)i * 2 + 1] : 0.0f;
        d->uniform[i] = 1.0f / (float)m;
    }
    d->half_power = 0.5f * desc->idw_power;
    d->square = desc->idw_power == 2.0f;
    d->k = k;
    return CB_OK;
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    /* k = node_count: every node takes part, no threshold. */
    return cb_idw_create(s, desc, desc->node_count, err);
}

/* r^(p/2) for r in [0, 1]. */
CB_INLINE cb_vf ratio_pow(const cb_idw *d, cb_vf r)
{
    return d->square ? r : cb_vf_exp2(cb_vf_mul(cb_vf_set1(d->half_power), cb_vf_log2(r)));
}

CB_INLINE cb_vf dist2(const cb_idw *d, uint32_t i, const cb_block_in *in)
{
    cb_vf dx = cb_vf_sub(in->x, cb_vf_set1(d->x[i])), dy = cb_vf_sub(in->y, cb_vf_set1(d->y[i]));
    return cb_vf_fmadd(dx, dx, cb_vf_mul(dy, dy));
}

/* d_min^2 / d^2, with 1 for the nodes at the minimum (0 / 0 included). */
CB_INLINE cb_vf ratio(cb_vf d2, cb_vf mind2)
{
    return cb_vf_select(cb_vf_eq(d2, mind2), cb_vf_set1(1.0f), cb_vf_div(mind2, d2));
}

void cb_idw_block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const cb_idw *d = s->data;
    uint32_t m = s->node_count;
    bool knn = d->k < m;
    /* The k + 1 smallest squared distances so far, ascending (KNN only). */
    cb_vf best[CB_SOLVER_MAX_KNN_K + 1];
    for (uint32_t j = 0; j <= d->k && knn; ++j) {
        best[j] = cb_vf_set1(INFINITY);
    }
    cb_vf mind2 = cb_vf_set1(INFINITY);
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf d2 = dist2(d, i, in);
        cb_vf_storeu(out + i * ostride, d2);
        mind2 = cb_vf_min(mind2, d2);
        if (knn) {
            /* One pass of insertion: the larger value moves on. */
            cb_vf v = d2;
            for (uint32_t j = 0; j <= d->k; ++j) {
                cb_vf lo = cb_vf_min(best[j], v);
                v = cb_vf_max(best[j], v);
                best[j] = lo;
            }
        }
    }
    /* KNN subtracts the (k+1)-th nearest node's term, so weights fade to 0 before a node
     * leaves the k nearest (continuous); plain IDW subtracts nothing. */
    cb_vf cut = knn ? ratio_pow(d, ratio(best[d->k], mind2)) : cb_vf_zero();
    cb_vf sum = cb_vf_zero(), ties = cb_vf_zero();
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf d2 = cb_vf_loadu(out + i * ostride);
        cb_vf w = cb_vf_max(cb_vf_sub(ratio_pow(d, ratio(d2, mind2)), cut), cb_vf_zero());
        cb_vf_storeu(out + i * ostride, w);
        sum = cb_vf_add(sum, w);
        ties = cb_vf_add(ties, cb_vf_select(cb_vf_eq(d2, mind2), cb_vf_set1(1.0f), cb_vf_zero()));
    }
    if (!knn) {
        /* The nodes at the minimum have 1 each: the sum is >= 1. */
        cb_normalize_block(out, ostride, m, d->uniform);
        return;
    }
    /* Every term vanishes only when more than k nodes tie at the smallest distance: they share
     * the weight evenly. */
    cb_vm ok = cb_vf_gt(sum, cb_vf_zero());
    cb_vf inv = cb_vf_div(cb_vf_set1(1.0f), cb_vf_select(ok, sum, cb_vf_set1(1.0f)));
    cb_vf share = cb_vf_div(cb_vf_set1(1.0f), cb_vf_max(ties, cb_vf_set1(1.0f)));
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf w = cb_vf_min(cb_vf_mul(cb_vf_loadu(out + i * ostride), inv), cb_vf_set1(1.0f));
        cb_vf tie = cb_vf_select(cb_vf_eq(dist2(d, i, in), mind2), share, cb_vf_zero());
        cb_vf_storeu(out + i * ostride, cb_vf_select(ok, w, tie));
    }
}

static float ratio_pow_one(const cb_idw *d, float r)
{
    return d->square ? r : powf(r, d->half_power);
}

void cb_idw_one(const cb_solver *s, const float *q, float *out)
{
    const cb_idw *d = s->data;
    uint32_t m = s->node_count;
    bool knn = d->k < m;
    float best[CB_SOLVER_MAX_KNN_K + 1];
    uint32_t nbest = 0;
    float mind2 = INFINITY;
    for (uint32_t i = 0; i < m; ++i) {
        float dx = q[0] - d->x[i], dy = q[1] - d->y[i];
        float d2 = dx * dx + dy * dy;
        out[i] = d2;
        mind2 = fminf(mind2, d2);
        if (knn) {
            /* Keep the k + 1 smallest, ascending (insertion into a short sorted list). */
            uint32_t j;
            if (nbest < d->k + 1) {
                j = nbest++;
            } else if (d2 < best[d->k]) {
                j = d->k;
            } else {
                continue;
            }
            while (j > 0 && best[j - 1] > d2) {
                best[j] = best[j - 1];
                --j;
            }
            best[j] = d2;
        }
    }
    float cut = 0.0f;
    if (knn) {
        float t = best[d->k];
        cut = ratio_pow_one(d, t == mind2 ? 1.0f : mind2 / t);
    }
    float sum = 0.0f;
    uint32_t ties = 0;
    for (uint32_t i = 0; i < m; ++i) {
        float d2 = out[i];
        float r = d2 == mind2 ? 1.0f : mind2 / d2;
        float w = ratio_pow_one(d, r) - cut;
        out[i] = w > 0.0f ? w : 0.0f;
        sum += out[i];
        ties += d2 == mind2;
    }
    if (!(sum > 0.0f)) {
        /* More than k nodes tie at the smallest distance: recompute which, share evenly. */
        for (uint32_t i = 0; i < m; ++i) {
            float dx = q[0] - d->x[i], dy = q[1] - d->y[i];
            out[i] = dx * dx + dy * dy == mind2 ? 1.0f / (float)ties : 0.0f;
        }
        return;
    }
    float inv = 1.0f / sum;
    for (uint32_t i = 0; i < m; ++i) {
        out[i] = fminf(out[i] * inv, 1.0f);
    }
}

const cb_solver_ops cb_solver_ops_idw = {create, cb_idw_block, cb_idw_one};
