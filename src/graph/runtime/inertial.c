/* Stage 4: inertialization offsets, captured from the pose shown and decayed to nothing. */
#include <math.h>

#include "base/scalar_math.h"
#include "graph/runtime/runtime_impl.h"
#include "simd/detmath.h"
#include "simd/lane.h"

/* ---- inertialization (Bollo, "Inertialization: High-Performance Animation Transitions in
 * Gears of War", GDC 2018): at the switch, the offset from the destination to the pose shown is
 * stored per joint as an angle about an axis and a length along a direction; each frame it
 * decays to zero along a quintic x(t) with x(t1) = x'(t1) = x''(t1) = 0, which removes the
 * source's pose smoothly while only the destination is sampled. The offset starts with zero
 * velocity (the source's velocity is not sampled), so the pose eases out of the switch. With
 * x'(0) = 0, Bollo's start acceleration is x''(0) = -20 x0 / t1^2 and the quintic factors as
 * x(t) = x0 (1 - u)^4 (1 + 4u), u = t / t1: one factor per frame serves every joint. ---- */

/* The share of the offset left at time t of a decay over t1 (see above). */
static float inertial_fraction(float t, float t1)
{
    if (!(t < t1) || t1 <= 0.0f) {
        return 0.0f;
    }
    float u = t / t1, v = 1.0f - u, v2 = v * v;
    return v2 * v2 * (1.0f + 4.0f * u);
}

/* sin and cos of h in [0, pi/2] (a half angle of at most pi), by their Taylor series to x^11
 * and x^12: truncation below 7e-8 on the interval, cheaper than libm's range reduction. */
static void sincos_half(float h, float *s, float *c)
{
    float h2 = h * h;
    *s = h * (1.0f +
              h2 * (-1.0f / 6 +
                    h2 * (1.0f / 120 +
                          h2 * (-1.0f / 5040 + h2 * (1.0f / 362880 + h2 * (-1.0f / 39916800))))));
    *c = 1.0f +
         h2 * (-0.5f +
               h2 * (1.0f / 24 +
                     h2 * (-1.0f / 720 + h2 * (1.0f / 40320 +
                                               h2 * (-1.0f / 3628800 + h2 * (1.0f / 479001600))))));
}

/* Joint j's translation and rotation in a pose. */
static void joint_tq(const cb_xform_group *pose, size_t j, cb_fvec3 *t, cb_fquat *q)
{
    float v[7];
    cb_lane_get(pose, CB_LANE_COMPONENTS, j, CB_LANE_T, 7, v);
    *t = cb_fv(v[0], v[1], v[2]);
    *q = (cb_fquat){v[3], v[4], v[5], v[6]};
}

void cb_graph_inert_capture(const pose_ctx *x, float *st, const cb_xform_group *src,
                            const cb_xform_group *dst, float t1)
{
    st[0] = t1;
    for (size_t j = 0; j < x->g->joint_count; ++j) {
        cb_fvec3 ta, tb;
        cb_fquat qa, qb;
        joint_tq(src, j, &ta, &qa);
        joint_tq(dst, j, &tb, &qb);
        float *o = st + 1 + j * CB_INERT_FLOATS;
        /* The rotation offset q_src * conj(q_dst) on the short arc, as an axis and an angle. */
        cb_fquat q = cb_fq_positive_w(cb_fq_mul(qa, cb_fq_conj(qb)));
        float s;
        cb_fvec3 axis = cb_fv_normalize_len(cb_fv(q.x, q.y, q.z), &s);
        bool tiny = s < 1e-9f;
        o[0] = tiny ? 1.0f : axis.x, o[1] = tiny ? 0.0f : axis.y, o[2] = tiny ? 0.0f : axis.z;
        o[3] = tiny ? 0.0f : 2.0f * cb_det_atan2f(s, q.w); /* in [0, pi] */
        /* The translation offset as a direction and a length. */
        float len;
        cb_fvec3 d = cb_fv_normalize_len(cb_fv_sub(ta, tb), &len);
        bool zero = len < 1e-9f;
        o[4] = zero ? 0.0f : d.x, o[5] = zero ? 0.0f : d.y, o[6] = zero ? 0.0f : d.z;
        o[7] = zero ? 0.0f : len;
    }
}

void cb_graph_inert_apply(const pose_ctx *x, const float *st, cb_xform_group *pose, float t)
{
    float f = inertial_fraction(t, st[0]);
    if (f == 0.0f) {
        return; /* the offsets have decayed: the destination alone */
    }
    for (size_t j = 0; j < x->g->joint_count; ++j) {
        const float *o = st + 1 + j * CB_INERT_FLOATS;
        if (o[3] == 0.0f && o[7] == 0.0f) {
            continue; /* the source and the destination agreed on this joint */
        }
        cb_fvec3 p;
        cb_fquat q;
        joint_tq(pose, j, &p, &q);
        float sh, ch;
        sincos_half(0.5f * o[3] * f, &sh, &ch);
        q = cb_fq_mul(cb_fq_axis_half_angle(cb_fv(o[0], o[1], o[2]), ch, sh), q);
        p = cb_fv_add(p, cb_fv_scale(cb_fv(o[4], o[5], o[6]), o[7] * f));
        cb_lane_set(pose, CB_LANE_COMPONENTS, j, CB_LANE_T, 7,
                    (const float[7]){p.x, p.y, p.z, q.x, q.y, q.z, q.w});
    }
}
