/* freeform_directional_2d: Unity's 2D Freeform Directional blend tree, gradient band
 * interpolation in polar space (R. S. Johansen, "Automated Semi-Procedural Animation for
 * Character Locomotion", master's thesis, Aarhus University, 2009, section 6.3; the origin and
 * same-direction rules follow his reference implementation, PolarGradientBandInterpolator.cs of
 * the Unity Locomotion System, 2008).
 *
 * As in the Cartesian method, node i's influence is the minimum over the other nodes j of a
 * band value 1 - (v_iq . v_ij) / |v_ij|^2, but the vectors live in a (angle, magnitude) space,
 * so that direction dominates speed:
 *   v_ij = (2 phi_ij,  (|p_j| - |p_i|) / m_ij)      phi_ij = angle between p_i and p_j
 *   v_iq = (2 o_ij(q), (|q|   - |p_i|) / m_ij)      m_ij = (|p_i| + |p_j|) / 2
 * o_ij(q) is the angle from p_i to q, signed positive towards p_j; for nearly opposite nodes
 * (phi_ij >= 0.99 pi) it is the unsigned angle. Nodes in the same direction (phi_ij = 0) give a
 * purely radial band (walk and run forward). With the node at the origin c, the angle factor is
 * 1 and the pair terms simplify to
 *   ring node i against c:  B_i(q) = 4 |q| / (|p_i| (theta_i^2 + 4))
 *   c against ring node j:  1 - B_j(q)
 * where theta_i is the angle between p_i and q, so h_c = 1 - max_j B_j. At q = 0 the reference
 * takes o_ij = phi_ij; those influences are constants, precomputed. h_i = clamp(min, 0, 1); the
 * weights are h_i / sum_k h_k, and where every h is 0 (only at q = 0 without a node there) the
 * nodes of smallest magnitude (within 1e-6) share the weight evenly.
 *
 * Per pair the band value is 1 - K o - L (|q| - |p_i|) with K = 4 phi / D, L = v / (m_ij D),
 * D = |v_ij|^2, so the vector loop costs two fused operations and a min per pair, one atan2 per
 * query and one division per ring node (B_i). Angles of the nodes are computed at create with
 * the same functions the two evaluation paths use (vector atan2 / libm atan2f), so a query on a
 * node gives theta = 0 and |q| - |p_i| = 0 exactly. */
#include <math.h>
#include <string.h>

#include "simd/vmath.h"
#include "solvers/solver_impl.h"

static const double PI = 3.14159265358979323846;

typedef struct pair {
    float k, l;
} pair;

typedef struct polar {
    int32_t origin;                     /* node at (0, 0), or -1 */
    float *mag_v, *ang_v;               /* per node, computed by the vector path's functions */
    float *mag_s, *ang_s;               /* per node, computed by the scalar path's functions */
    float *inv4mag;                     /* 4 / |p_i| (0 for the origin node) */
    uint32_t *first, *n_signed, *n_abs; /* per node: its pairs, the signed-angle ones first */
    pair *pairs;
    float *at_zero;  /* the weights of q = (0, 0) */
    float *fallback; /* weights where every influence is 0 */
} polar;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    polar *d = tables;
    uint32_t m = n->nodes;
    d->mag_v = cb_layout_take(l, m * sizeof(float));
    d->ang_v = cb_layout_take(l, m * sizeof(float));
    d->mag_s = cb_layout_take(l, m * sizeof(float));
    d->ang_s = cb_layout_take(l, m * sizeof(float));
    d->inv4mag = cb_layout_take(l, m * sizeof(float));
    d->first = cb_layout_take(l, m * sizeof(uint32_t));
    d->n_signed = cb_layout_take(l, m * sizeof(uint32_t));
    d->n_abs = cb_layout_take(l, m * sizeof(uint32_t));
    d->pairs = cb_layout_take(l, (size_t)m * m * sizeof(pair));
    d->at_zero = cb_layout_take(l, m * sizeof(float));
    d->fallback = cb_layout_take(l, m * sizeof(float));
}

/* Band constants of the pair i, j (both away from the origin), and the band value at q = 0. */
static void pair_constants(double xi, double yi, double xj, double yj, double *k, double *l,
                           int *sign, double *at_zero)
{
    double mi = hypot(xi, yi), mj = hypot(xj, yj);
    double cross = xi * yj - yi * xj, dot = xi * xj + yi * yj;
    double phi = atan2(fabs(cross), dot);
    double u = 2.0 * phi, avg = 0.5 * (mi + mj), v = (mj - mi) / avg;
    double den = u * u + v * v;
    *k = 2.0 * u / den;
    *l = v / (avg * den);
    /* +1: o = theta_i, -1: o = -theta_i, 0: o = |theta_i| (nearly opposite nodes). */
    *sign = phi == 0.0 ? 1 : phi < 0.99 * PI ? (cross > 0.0 ? 1 : -1) : 0;
    /* At q = 0 the reference sets o = phi and |q| = 0. */
    *at_zero = 1.0 - *k * phi + *l * mi;
}

/* The node at the origin (*origin, or -1); a second one there is refused. */
static cb_result find_origin(const float *p, uint32_t m, int32_t *origin, cb_error *err)
{
    *origin = -1;
    for (uint32_t i = 0; i < m; ++i) {
        if (p[2 * i] == 0.0f && p[2 * i + 1] == 0.0f) {
            if (*origin >= 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "freeform_directional_2d: nodes[%d] and nodes[%u] are both "
                                    "at the origin",
                                    *origin, i);
            }
            *origin = (int32_t)i;
        }
    }
    return CB_OK;
}

/* Ring node i's pairs, from d->pairs[*n] on (signed pairs first, then the nearly opposite,
 * unsigned ones), and its influence at q = 0. */
static double ring_pairs(polar *d, const float *p, uint32_t m, uint32_t i, uint32_t *n)
{
    double h0 = 1.0;
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t j = 0; j < m; ++j) {
            if (j == i || (int32_t)j == d->origin) {
                continue;
            }
            double k, lc, z;
            int sign;
            pair_constants(p[2 * i], p[2 * i + 1], p[2 * j], p[2 * j + 1], &k, &lc, &sign, &z);
            if ((sign == 0) != (pass == 1)) {
                continue;
            }
            d->pairs[(*n)++] = (pair){(float)(sign < 0 ? -k : k), (float)lc};
            d->n_signed[i] += pass == 0;
            d->n_abs[i] += pass == 1;
            h0 = fmin(h0, z);
        }
    }
    /* Against the origin node, B_i(0) = 0. */
    return d->origin >= 0 ? 0.0 : h0;
}

/* Weights at q = 0 from the influences h0 there, and the fallback: the origin node, or the
 * innermost nodes (magnitude min_mag) evenly. The influences at q = 0 cancel to 0 for nodes on
 * a common ring (1 - phi / phi), which double rounding leaves at 1e-16; below 1e-9 they count
 * as 0. "Innermost" allows the 1e-6 relative spread that float coordinates of one ring have. */
static void weights_at_zero(polar *d, const float *p, uint32_t m, double *h0, double min_mag)
{
    const int32_t origin = d->origin;
    double sum0 = 0.0;
    uint32_t inner = 0;
    bool is_inner[CB_SOLVER_MAX_NODES];
    for (uint32_t i = 0; i < m; ++i) {
        h0[i] = h0[i] > 1e-9 ? h0[i] : 0.0;
        sum0 += h0[i];
        is_inner[i] = (int32_t)i != origin && hypot(p[2 * i], p[2 * i + 1]) <= min_mag * (1 + 1e-6);
        inner += is_inner[i];
    }
    for (uint32_t i = 0; i < m; ++i) {
        d->fallback[i] = origin >= 0 ? ((int32_t)i == origin ? 1.0f : 0.0f)
                                     : (is_inner[i] ? 1.0f / (float)inner : 0.0f);
        d->at_zero[i] = sum0 > 0.0 ? (float)(h0[i] / sum0) : d->fallback[i];
    }
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t m = desc->node_count;
    const float *p = desc->nodes;
    int32_t origin;
    cb_result r = find_origin(p, m, &origin, err);
    if (r != CB_OK) {
        return r;
    }
    polar tmp;
    r = cb_solver_tables(s, sizeof tmp, plan, &(cb_plan_sizes){.nodes = m}, &tmp, err);
    if (r != CB_OK) {
        return r;
    }
    polar *d = s->data;
    d->origin = origin;
    double h0[CB_SOLVER_MAX_NODES];
    double min_mag = INFINITY;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m; ++i) {
        float x = p[2 * i], y = p[2 * i + 1];
        cb_vf vx = cb_vf_set1(x), vy = cb_vf_set1(y);
        d->mag_v[i] = cb_vf_lane(cb_vf_sqrt(cb_vf_fmadd(vx, vx, cb_vf_mul(vy, vy))), 0);
        d->ang_v[i] = cb_vf_lane(cb_vf_atan2(vy, vx), 0);
        d->mag_s[i] = sqrtf(x * x + y * y);
        d->ang_s[i] = atan2f(y, x);
        d->first[i] = n;
        h0[i] = 1.0;
        if ((int32_t)i != origin) {
            d->inv4mag[i] = (float)(4.0 / hypot(x, y));
            min_mag = fmin(min_mag, hypot(x, y));
            h0[i] = ring_pairs(d, p, m, i, &n);
        }
    }
    weights_at_zero(d, p, m, h0, min_mag);
    return CB_OK;
}

/* theta - alpha wrapped into (-pi, pi]: both are in [-pi, pi], so one step suffices. */
CB_INLINE cb_vf wrap(cb_vf a)
{
    cb_vf two_pi = cb_vf_set1(6.28318530717958648f);
    a = cb_vf_select(cb_vf_gt(a, cb_vf_set1(3.14159265358979324f)), cb_vf_sub(a, two_pi), a);
    return cb_vf_select(cb_vf_le(a, cb_vf_set1(-3.14159265358979324f)), cb_vf_add(a, two_pi), a);
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const polar *d = s->data;
    uint32_t m = s->node_count;
    cb_vf one = cb_vf_set1(1.0f);
    cb_vf r = cb_vf_sqrt(cb_vf_fmadd(in->x, in->x, cb_vf_mul(in->y, in->y)));
    cb_vf theta_q = cb_vf_atan2(in->y, in->x);
    cb_vf max_b = cb_vf_zero();
    for (uint32_t i = 0; i < m; ++i) {
        if ((int32_t)i == d->origin) {
            continue;
        }
        cb_vf theta = wrap(cb_vf_sub(theta_q, cb_vf_set1(d->ang_v[i])));
        cb_vf abs_theta = cb_vf_abs(theta);
        cb_vf dm = cb_vf_sub(r, cb_vf_set1(d->mag_v[i]));
        cb_vf h = one;
        const pair *pp = d->pairs + d->first[i];
        for (uint32_t n = 0; n < d->n_signed[i]; ++n, ++pp) {
            cb_vf v =
                cb_vf_fnmadd(cb_vf_set1(pp->k), theta, cb_vf_fnmadd(cb_vf_set1(pp->l), dm, one));
            h = cb_vf_min(h, v);
        }
        for (uint32_t n = 0; n < d->n_abs[i]; ++n, ++pp) {
            cb_vf v = cb_vf_fnmadd(cb_vf_set1(pp->k), abs_theta,
                                   cb_vf_fnmadd(cb_vf_set1(pp->l), dm, one));
            h = cb_vf_min(h, v);
        }
        if (d->origin >= 0) {
            cb_vf b = cb_vf_div(cb_vf_mul(r, cb_vf_set1(d->inv4mag[i])),
                                cb_vf_fmadd(theta, theta, cb_vf_set1(4.0f)));
            h = cb_vf_min(h, b);
            max_b = cb_vf_max(max_b, b);
        }
        cb_vf_storeu(out + i * ostride, cb_vf_max(h, cb_vf_zero()));
    }
    if (d->origin >= 0) {
        cb_vf_storeu(out + (size_t)d->origin * ostride, cb_vf_clamp01(cb_vf_sub(one, max_b)));
    }
    cb_normalize_block(out, ostride, m, d->fallback);
    cb_vm zero = cb_vm_and(cb_vf_eq(in->x, cb_vf_zero()), cb_vf_eq(in->y, cb_vf_zero()));
    if (cb_vm_any(zero)) {
        for (uint32_t i = 0; i < m; ++i) {
            float *row = out + i * ostride;
            cb_vf_storeu(row, cb_vf_select(zero, cb_vf_set1(d->at_zero[i]), cb_vf_loadu(row)));
        }
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const polar *d = s->data;
    uint32_t m = s->node_count;
    if (q[0] == 0.0f && q[1] == 0.0f) {
        memcpy(out, d->at_zero, m * sizeof(float));
        return;
    }
    float r = sqrtf(q[0] * q[0] + q[1] * q[1]);
    float theta_q = atan2f(q[1], q[0]);
    float max_b = 0.0f;
    for (uint32_t i = 0; i < m; ++i) {
        if ((int32_t)i == d->origin) {
            continue;
        }
        float theta = theta_q - d->ang_s[i];
        if (theta > (float)PI) {
            theta -= (float)(2.0 * PI);
        } else if (theta <= -(float)PI) {
            theta += (float)(2.0 * PI);
        }
        float dm = r - d->mag_s[i];
        float h = 1.0f;
        const pair *pp = d->pairs + d->first[i];
        for (uint32_t n = 0; n < d->n_signed[i] + d->n_abs[i]; ++n) {
            float o = n < d->n_signed[i] ? theta : fabsf(theta);
            float v = 1.0f - pp[n].k * o - pp[n].l * dm;
            h = v < h ? v : h;
        }
        if (d->origin >= 0) {
            float b = r * d->inv4mag[i] / (theta * theta + 4.0f);
            h = b < h ? b : h;
            max_b = b > max_b ? b : max_b;
        }
        out[i] = h > 0.0f ? h : 0.0f;
    }
    if (d->origin >= 0) {
        float c = 1.0f - max_b;
        out[d->origin] = c > 0.0f ? (c < 1.0f ? c : 1.0f) : 0.0f;
    }
    cb_normalize_one(out, m, d->fallback);
}

const cb_solver_ops cb_solver_ops_freeform_directional = {create, block, one};
