/* simple_directional_2d: Unity's 2D Simple Directional blend tree.
 *
 * The nodes away from the origin split the plane into angular sectors around it. A query
 * falls in the sector between the two nodes angularly closest to it on either side, p0 (the
 * clockwise one) and p1; solving q = t0 p0 + t1 p1 gives their influence clamp01(t0 + t1),
 * shared in proportion t0 : t1. What remains, 1 - clamp01(t0 + t1), is the centre's: it goes
 * to the node at the origin if there is one, else it is shared evenly by all nodes.
 *
 * Sectors that are not convex: in a sector wider than 180 degrees the query is not inside the
 * cone of p0 and p1 (the solution has a negative coefficient), and the influence is shared
 * 0.5 / 0.5. A sector of exactly 180 degrees (two opposite nodes with nothing between) and the
 * single sector of a lone direction node have no solution (nor, in practice, sectors within
 * 1e-6 rad of 180 degrees); there each of the two nodes gets
 * its projection max(0, q . p / |p|^2), and the influence is their clamped sum as above. With
 * sectors all narrower than 180 degrees (4 or 8 directions) the weights are continuous.
 *
 * Vector path: the query's angle (vector atan2) counts the node angles at or below it, which
 * names its sector; every sector's coefficients are then evaluated and selected per lane. The
 * node angles are computed at create by the same atan2 each path uses, so a query in a node's
 * direction lands on that node's sector boundary exactly. */
#include <math.h>
#include <string.h>

#include "simd/vmath.h"
#include "solvers/solver_impl.h"

typedef struct sector {
    float a0, b0, a1, b1; /* t0 = a0 x + b0 y, t1 = a1 x + b1 y */
    float reflex;         /* 1: wider than 180 degrees (shared 0.5 / 0.5), else 0 */
    uint32_t n0, n1;      /* the clockwise and the counter-clockwise node */
} sector;

typedef struct simple_dir {
    int32_t origin;     /* node at (0, 0), or -1 */
    uint32_t dirs;      /* nodes away from the origin = sectors */
    float *ang_v;       /* their angles in ascending order: vector atan2 */
    float *ang_s;       /* the same, libm atan2f */
    sector *sec;        /* sector k runs from direction k to direction k + 1 (mod dirs) */
    float centre_share; /* without an origin node, each node's share of the centre: 1 / M */
} simple_dir;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    simple_dir *d = tables;
    uint32_t dirs = n->nodes;
    d->ang_v = cb_layout_take(l, dirs * sizeof(float));
    d->ang_s = cb_layout_take(l, dirs * sizeof(float));
    d->sec = cb_layout_take(l, dirs * sizeof(sector));
}

/* The nodes sorted: the one at the origin (*origin, or -1), and the others' indices in order
 * of angle (order[0..*dirs), their angles in angle[]); two nodes at the origin, or two in the
 * same direction, are refused in the order the nodes come. */
static cb_result order_directions(const float *p, uint32_t m, int32_t *origin, uint32_t *order,
                                  double *angle, uint32_t *dirs, cb_error *err)
{
    *origin = -1;
    *dirs = 0;
    for (uint32_t i = 0; i < m; ++i) {
        double x = p[2 * i], y = p[2 * i + 1];
        if (x == 0.0 && y == 0.0) {
            if (*origin >= 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "simple_directional_2d: nodes[%d] and nodes[%u] are both at "
                                    "the origin",
                                    *origin, i);
            }
            *origin = (int32_t)i;
            continue;
        }
        /* Same direction: cross exactly 0 (products of floats are exact in double) and a
         * positive dot product. */
        for (uint32_t k = 0; k < *dirs; ++k) {
            double ox = p[2 * order[k]], oy = p[2 * order[k] + 1];
            if (x * oy - y * ox == 0.0 && x * ox + y * oy > 0.0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "simple_directional_2d: nodes[%u] and nodes[%u] point in the "
                                    "same direction (use freeform_directional_2d for several "
                                    "speeds per direction)",
                                    order[k], i);
            }
        }
        /* Insert by angle. */
        double a = atan2(y, x);
        uint32_t k = (*dirs)++;
        while (k > 0 && angle[k - 1] > a) {
            angle[k] = angle[k - 1];
            order[k] = order[k - 1];
            --k;
        }
        angle[k] = a;
        order[k] = i;
    }
    return CB_OK;
}

/* Sector c from node n0 to node n1 (p: the nodes' x, y), counter-clockwise; lone: the only
 * direction node, its own neighbour. */
static void fill_sector(sector *c, const float *p, uint32_t n0, uint32_t n1, bool lone)
{
    double x0 = p[2 * n0], y0 = p[2 * n0 + 1], x1 = p[2 * n1], y1 = p[2 * n1 + 1];
    c->n0 = n0;
    c->n1 = n1;
    /* cross(p0, p1): > 0 convex, < 0 reflex. Within 1e-6 rad of 180 degrees the solve
     * would blow up (coefficients ~ 1 / sin), so such a sector counts as straight. */
    double dd = x0 * y1 - y0 * x1;
    if (lone || fabs(dd) <= 1e-6 * hypot(x0, y0) * hypot(x1, y1)) {
        /* Projections onto each node (a lone node is its own neighbour: count it once). */
        double l0 = x0 * x0 + y0 * y0, l1 = x1 * x1 + y1 * y1;
        c->a0 = (float)(x0 / l0), c->b0 = (float)(y0 / l0);
        c->a1 = lone ? 0.0f : (float)(x1 / l1);
        c->b1 = lone ? 0.0f : (float)(y1 / l1);
        c->reflex = 0.0f;
    } else {
        /* Cramer's rule for q = t0 p0 + t1 p1. */
        c->a0 = (float)(y1 / dd), c->b0 = (float)(-x1 / dd);
        c->a1 = (float)(-y0 / dd), c->b1 = (float)(x0 / dd);
        c->reflex = dd < 0.0 ? 1.0f : 0.0f;
    }
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t m = desc->node_count;
    const float *p = desc->nodes;
    int32_t origin;
    uint32_t order[CB_SOLVER_MAX_NODES];
    double angle[CB_SOLVER_MAX_NODES];
    uint32_t dirs;
    cb_result r = order_directions(p, m, &origin, order, angle, &dirs, err);
    if (r != CB_OK) {
        return r;
    }
    if (dirs == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW,
                            "simple_directional_2d: needs a node away from the origin");
    }
    simple_dir tmp;
    r = cb_solver_tables(s, sizeof tmp, plan, &(cb_plan_sizes){.nodes = dirs}, &tmp, err);
    if (r != CB_OK) {
        return r;
    }
    simple_dir *d = s->data;
    d->origin = origin;
    d->dirs = dirs;
    d->centre_share = 1.0f / (float)m;
    for (uint32_t k = 0; k < dirs; ++k) {
        float x = p[2 * order[k]], y = p[2 * order[k] + 1];
        d->ang_v[k] = cb_vf_lane(cb_vf_atan2(cb_vf_set1(y), cb_vf_set1(x)), 0);
        d->ang_s[k] = atan2f(y, x);
    }
    for (uint32_t k = 0; k < dirs; ++k) {
        uint32_t n0 = order[k], n1 = order[(k + 1) % dirs];
        fill_sector(&d->sec[k], p, n0, n1, dirs == 1);
    }
    return CB_OK;
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const simple_dir *d = s->data;
    uint32_t dirs = d->dirs;
    cb_vf one = cb_vf_set1(1.0f);
    cb_vf theta = cb_vf_atan2(in->y, in->x);
    /* Directions at or below the query's angle; none means the wrap-around sector. */
    cb_vf below = cb_vf_zero();
    for (uint32_t k = 0; k < dirs; ++k) {
        below = cb_vf_add(
            below, cb_vf_select(cb_vf_le(cb_vf_set1(d->ang_v[k]), theta), one, cb_vf_zero()));
    }
    cb_vf sec =
        cb_vf_sub(cb_vf_select(cb_vf_eq(below, cb_vf_zero()), cb_vf_set1((float)dirs), below), one);
    cb_vf t0 = cb_vf_zero(), t1 = cb_vf_zero(), reflex = cb_vf_zero();
    cb_vf n0 = cb_vf_zero(), n1 = cb_vf_zero();
    for (uint32_t k = 0; k < dirs; ++k) {
        const sector *c = &d->sec[k];
        cb_vm in_k = cb_vf_eq(sec, cb_vf_set1((float)k));
        cb_vf a = cb_vf_fmadd(cb_vf_set1(c->a0), in->x, cb_vf_mul(cb_vf_set1(c->b0), in->y));
        cb_vf b = cb_vf_fmadd(cb_vf_set1(c->a1), in->x, cb_vf_mul(cb_vf_set1(c->b1), in->y));
        t0 = cb_vf_select(in_k, a, t0);
        t1 = cb_vf_select(in_k, b, t1);
        reflex = cb_vf_select(in_k, cb_vf_set1(c->reflex), reflex);
        n0 = cb_vf_select(in_k, cb_vf_set1((float)c->n0), n0);
        n1 = cb_vf_select(in_k, cb_vf_set1((float)c->n1), n1);
    }
    /* Inside a convex (or projected) sector the coefficients are >= 0 up to rounding. */
    cb_vm is_reflex = cb_vf_gt(reflex, cb_vf_zero());
    t0 = cb_vf_select(is_reflex, t0, cb_vf_max(t0, cb_vf_zero()));
    t1 = cb_vf_select(is_reflex, t1, cb_vf_max(t1, cb_vf_zero()));
    cb_vf sum = cb_vf_add(t0, t1);
    cb_vf influence = cb_vf_clamp01(sum);
    cb_vm share_ok = cb_vf_gt(sum, cb_vf_zero());
    cb_vf scale = cb_vf_div(influence, cb_vf_select(share_ok, sum, one));
    cb_vf half = cb_vf_mul(influence, cb_vf_set1(0.5f));
    /* min(., 1): t times the rounded influence / sum can exceed 1 by an ulp. */
    cb_vf w0 =
        cb_vf_select(is_reflex, half,
                     cb_vf_select(share_ok, cb_vf_min(cb_vf_mul(t0, scale), one), cb_vf_zero()));
    cb_vf w1 =
        cb_vf_select(is_reflex, half,
                     cb_vf_select(share_ok, cb_vf_min(cb_vf_mul(t1, scale), one), cb_vf_zero()));
    cb_vf centre = cb_vf_sub(one, influence);
    cb_vf spread = d->origin >= 0 ? cb_vf_zero() : cb_vf_mul(centre, cb_vf_set1(d->centre_share));
    for (uint32_t i = 0; i < s->node_count; ++i) {
        cb_vf fi = cb_vf_set1((float)i);
        cb_vf w = cb_vf_add(cb_vf_select(cb_vf_eq(n0, fi), w0, cb_vf_zero()),
                            cb_vf_select(cb_vf_eq(n1, fi), w1, cb_vf_zero()));
        /* The shares and the spread centre sum to at most 1, up to an ulp of rounding. */
        w = (int32_t)i == d->origin ? centre : cb_vf_min(cb_vf_add(w, spread), one);
        cb_vf_storeu(out + i * ostride, w);
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const simple_dir *d = s->data;
    float theta = atan2f(q[1], q[0]);
    uint32_t below = 0;
    for (uint32_t k = 0; k < d->dirs; ++k) {
        below += d->ang_s[k] <= theta;
    }
    const sector *c = &d->sec[below == 0 ? d->dirs - 1 : below - 1];
    float t0 = c->a0 * q[0] + c->b0 * q[1], t1 = c->a1 * q[0] + c->b1 * q[1];
    float w0, w1, influence;
    if (c->reflex > 0.0f) {
        float sum = t0 + t1;
        influence = sum > 0.0f ? (sum < 1.0f ? sum : 1.0f) : 0.0f;
        w0 = w1 = 0.5f * influence;
    } else {
        t0 = t0 > 0.0f ? t0 : 0.0f;
        t1 = t1 > 0.0f ? t1 : 0.0f;
        float sum = t0 + t1;
        influence = sum < 1.0f ? sum : 1.0f;
        w0 = sum > 0.0f ? fminf(t0 * (influence / sum), 1.0f) : 0.0f;
        w1 = sum > 0.0f ? fminf(t1 * (influence / sum), 1.0f) : 0.0f;
    }
    float centre = 1.0f - influence;
    float spread = d->origin >= 0 ? 0.0f : centre * d->centre_share;
    for (uint32_t i = 0; i < s->node_count; ++i) {
        out[i] = spread;
    }
    out[c->n0] = fminf(out[c->n0] + w0, 1.0f);
    out[c->n1] = fminf(out[c->n1] + w1, 1.0f);
    if (d->origin >= 0) {
        out[d->origin] = centre;
    }
}

const cb_solver_ops cb_solver_ops_simple_directional = {create, block, one};
