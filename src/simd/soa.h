/* SoA quaternion, vec3 and transform kernels over W lanes, and the joint-group layout.
 *
 * Every kernel works on whole vectors (lane i of each operand is one element), so a batch of
 * characters or a group of joints is processed with no shuffles. Each states its error bound and
 * its behaviour at zero, NaN and antipodal inputs; tests/test_simd_accuracy.c checks the bounds
 * against a double-precision reference.
 *
 * Conventions: quaternions are (x, y, z, w) with w real; products are Hamilton products,
 * a * b rotates by b first (cglm's glm_quat_mul).
 */
#ifndef CROWDBLEND_SIMD_SOA_H
#define CROWDBLEND_SIMD_SOA_H

#include "crowdblend/simd.h"
#include "simd/vf.h"

typedef struct cb_soa_vec3 {
    cb_vf x, y, z;
} cb_soa_vec3;

typedef struct cb_soa_quat {
    cb_vf x, y, z, w;
} cb_soa_quat;

typedef struct cb_soa_xform {
    cb_soa_vec3 t;
    cb_soa_quat q;
    cb_soa_vec3 s;
} cb_soa_xform;

/* W joints, component-major. Every array is one vector, so the whole group stays aligned when
 * its first member is (ARCHITECTURE.md "Data layout"; ozz's SoaTransform with W = 4). */
struct cb_xform_group {
    CB_VF_ALIGNED float tx[CB_W];
    float ty[CB_W], tz[CB_W];
    float qx[CB_W], qy[CB_W], qz[CB_W], qw[CB_W];
    float sx[CB_W], sy[CB_W], sz[CB_W];
};

_Static_assert(sizeof(struct cb_xform_group) == 10 * CB_VF_BYTES, "joint groups are unpadded");

/* Squared lengths below this normalize to identity: 1e-30 keeps 1/sqrt finite and far from
 * the denormal range (FLT_MIN is 1.2e-38), so a quaternion of length 1e-15 is still a rotation
 * but "length 0" covers underflowed and zeroed data. */
#define CB_QUAT_MIN_LENGTH_SQ 1e-30f

/* ------------------------------------------------------------------------------------------ */
/* vec3                                                                                       */

CB_INLINE cb_soa_vec3 cb_soa_vec3_set1(float x, float y, float z)
{
    return (cb_soa_vec3){cb_vf_set1(x), cb_vf_set1(y), cb_vf_set1(z)};
}

CB_INLINE cb_soa_vec3 cb_soa_vec3_cross(cb_soa_vec3 a, cb_soa_vec3 b)
{
    return (cb_soa_vec3){
        cb_vf_fnmadd(a.z, b.y, cb_vf_mul(a.y, b.z)),
        cb_vf_fnmadd(a.x, b.z, cb_vf_mul(a.z, b.x)),
        cb_vf_fnmadd(a.y, b.x, cb_vf_mul(a.x, b.y)),
    };
}

/* (1 - t) a + t b as a - t a + t b: exactly a at t = 0 and exactly b at t = 1. t is clamped to
 * [0, 1], NaN t counts as 0; NaN in a or b propagates. Error: 2 roundings per component. */
CB_INLINE cb_soa_vec3 cb_soa_vec3_lerp(cb_soa_vec3 a, cb_soa_vec3 b, cb_vf t)
{
    t = cb_vf_clamp01(t);
    return (cb_soa_vec3){
        cb_vf_fmadd(t, b.x, cb_vf_fnmadd(t, a.x, a.x)),
        cb_vf_fmadd(t, b.y, cb_vf_fnmadd(t, a.y, a.y)),
        cb_vf_fmadd(t, b.z, cb_vf_fnmadd(t, a.z, a.z)),
    };
}

/* ------------------------------------------------------------------------------------------ */
/* Quaternions                                                                                */

CB_INLINE cb_soa_quat cb_soa_quat_identity(void)
{
    return (cb_soa_quat){cb_vf_zero(), cb_vf_zero(), cb_vf_zero(), cb_vf_set1(1.0f)};
}

CB_INLINE cb_vf cb_soa_quat_dot(cb_soa_quat a, cb_soa_quat b)
{
    cb_vf d = cb_vf_mul(a.x, b.x);
    d = cb_vf_fmadd(a.y, b.y, d);
    d = cb_vf_fmadd(a.z, b.z, d);
    return cb_vf_fmadd(a.w, b.w, d);
}

CB_INLINE cb_soa_quat cb_soa_quat_conjugate(cb_soa_quat q)
{
    return (cb_soa_quat){cb_vf_neg(q.x), cb_vf_neg(q.y), cb_vf_neg(q.z), q.w};
}

/* Negates the lanes of q whose dot with ref is negative, so that blending q with ref takes the
 * shorter arc (q and -q are the same rotation; ozz blending_job.cc does the same flip).
 * The test is dot < 0, not the dot's sign bit: a zero accumulator gives a dot of -0.0 when a
 * component product is -0 (e.g. -0.3 * +0), and flipping on it would put the whole blend in
 * the opposite hemisphere of its first input. */
CB_INLINE cb_soa_quat cb_soa_quat_align(cb_soa_quat q, cb_soa_quat ref)
{
    cb_vf s = cb_vf_select(cb_vf_lt(cb_soa_quat_dot(q, ref), cb_vf_zero()), cb_vf_sign_mask(),
                           cb_vf_zero());
    return (cb_soa_quat){cb_vf_xor_sign(q.x, s), cb_vf_xor_sign(q.y, s), cb_vf_xor_sign(q.z, s),
                         cb_vf_xor_sign(q.w, s)};
}

/* q / |q|. Squared lengths below CB_QUAT_MIN_LENGTH_SQ, NaN or Inf (including overflow of the
 * squared length past FLT_MAX) give the identity: a defined rotation for zeroed, underflowed or
 * corrupt data, never a NaN. Error: within 2.5e-7 per component of the exact result. */
CB_INLINE cb_soa_quat cb_soa_quat_normalize(cb_soa_quat q)
{
    cb_vf one = cb_vf_set1(1.0f);
    cb_vf len2 = cb_soa_quat_dot(q, q);
    /* Both comparisons are ordered: a NaN length fails them and takes the identity. */
    cb_vm ok = cb_vm_and(cb_vf_ge(len2, cb_vf_set1(CB_QUAT_MIN_LENGTH_SQ)),
                         cb_vf_lt(len2, cb_vf_set1(INFINITY)));
    /* Feed 1 to the lanes that will be discarded, so rsqrt never sees 0, NaN or Inf. */
    cb_vf inv = cb_vf_rsqrt(cb_vf_select(ok, len2, one));
    return (cb_soa_quat){
        cb_vf_select(ok, cb_vf_mul(q.x, inv), cb_vf_zero()),
        cb_vf_select(ok, cb_vf_mul(q.y, inv), cb_vf_zero()),
        cb_vf_select(ok, cb_vf_mul(q.z, inv), cb_vf_zero()),
        cb_vf_select(ok, cb_vf_mul(q.w, inv), one),
    };
}

/* Hamilton product a * b. Error: 4 roundings per component (each is a 4-term fused sum). */
CB_INLINE cb_soa_quat cb_soa_quat_mul(cb_soa_quat a, cb_soa_quat b)
{
    cb_soa_quat r;
    r.x = cb_vf_fnmadd(a.z, b.y, cb_vf_fmadd(a.y, b.z, cb_vf_fmadd(a.x, b.w, cb_vf_mul(a.w, b.x))));
    r.y = cb_vf_fmadd(a.z, b.x, cb_vf_fmadd(a.y, b.w, cb_vf_fnmadd(a.x, b.z, cb_vf_mul(a.w, b.y))));
    r.z = cb_vf_fmadd(a.z, b.w, cb_vf_fnmadd(a.y, b.x, cb_vf_fmadd(a.x, b.y, cb_vf_mul(a.w, b.z))));
    r.w = cb_vf_fnmadd(a.z, b.z, cb_vf_fnmadd(a.y, b.y, cb_vf_fnmadd(a.x, b.x, cb_vf_mul(a.w, b.w))));
    return r;
}

/* Rotates v by unit q: v + w t + u x t with u = q.xyz and t = 2 (u x v), the form with two
 * cross products instead of two quaternion products (15 multiplies fewer). q is not
 * normalized here: a non-unit q also scales v by |q|^2. */
CB_INLINE cb_soa_vec3 cb_soa_quat_rotate(cb_soa_quat q, cb_soa_vec3 v)
{
    cb_soa_vec3 u = {q.x, q.y, q.z};
    cb_soa_vec3 t = cb_soa_vec3_cross(u, v);
    cb_vf two = cb_vf_set1(2.0f);
    t = (cb_soa_vec3){cb_vf_mul(t.x, two), cb_vf_mul(t.y, two), cb_vf_mul(t.z, two)};
    cb_soa_vec3 ut = cb_soa_vec3_cross(u, t);
    return (cb_soa_vec3){
        cb_vf_add(cb_vf_fmadd(q.w, t.x, v.x), ut.x),
        cb_vf_add(cb_vf_fmadd(q.w, t.y, v.y), ut.y),
        cb_vf_add(cb_vf_fmadd(q.w, t.z, v.z), ut.z),
    };
}

/* Normalized lerp on the shorter arc: normalize((1 - t) a + t align(b, a)). t clamped to
 * [0, 1] (NaN counts as 0). Inputs need not be unit; degenerate results become identity (see
 * cb_soa_quat_normalize). q and -q give q.
 * The weighted-sum form rounds each term at its own scale; a + t (b - a) rounds at the scale
 * of |b - a|, which for inputs of very different lengths (9.3 and 0.2, say) cost 2e-6.
 * Error: within 3e-7 per component. */
CB_INLINE cb_soa_quat cb_soa_quat_nlerp(cb_soa_quat a, cb_soa_quat b, cb_vf t)
{
    t = cb_vf_clamp01(t);
    cb_vf ta = cb_vf_sub(cb_vf_set1(1.0f), t);
    b = cb_soa_quat_align(b, a);
    cb_soa_quat r = {
        cb_vf_fmadd(t, b.x, cb_vf_mul(ta, a.x)),
        cb_vf_fmadd(t, b.y, cb_vf_mul(ta, a.y)),
        cb_vf_fmadd(t, b.z, cb_vf_mul(ta, a.z)),
        cb_vf_fmadd(t, b.w, cb_vf_mul(ta, a.w)),
    };
    return cb_soa_quat_normalize(r);
}

/* atan(s / c) for 0 <= s <= c, c > 0, i.e. an angle in [0, pi/4].
 * Range reduction and polynomial from Cephes atanf (S. L. Moshier, netlib.org/cephes,
 * atanf.c): above tan(pi/8) use atan(r) = pi/4 + atan((r - 1) / (r + 1)), which here is
 * (s - c) / (s + c), so one division serves both branches. Cephes states a peak relative error
 * of 1.9e-7 for the polynomial on |z| <= tan(pi/8). */
CB_INLINE cb_vf cb_soa_atan_ratio(cb_vf s, cb_vf c)
{
    cb_vm big = cb_vf_gt(s, cb_vf_mul(c, cb_vf_set1(0.414213562373095f)));
    cb_vf num = cb_vf_select(big, cb_vf_sub(s, c), s);
    cb_vf den = cb_vf_select(big, cb_vf_add(s, c), c);
    cb_vf z = cb_vf_div(num, den);
    cb_vf z2 = cb_vf_mul(z, z);
    cb_vf p = cb_vf_fmadd(cb_vf_set1(8.05374449538e-2f), z2, cb_vf_set1(-1.38776856032e-1f));
    p = cb_vf_fmadd(p, z2, cb_vf_set1(1.99777106478e-1f));
    p = cb_vf_fmadd(p, z2, cb_vf_set1(-3.33329491539e-1f));
    cb_vf base = cb_vf_select(big, cb_vf_set1(0.785398163397448f), cb_vf_zero());
    return cb_vf_add(base, cb_vf_fmadd(cb_vf_mul(z, z2), p, z));
}

/* sin(x) / x for u = x^2, x in [0, pi/2]: the Taylor series to x^12. The first omitted term,
 * x^14 / 15!, is below 4e-10 on that range, far under float rounding. */
CB_INLINE cb_vf cb_soa_sinc_sq(cb_vf u)
{
    cb_vf p = cb_vf_set1(1.0f / 6227020800.0f);
    p = cb_vf_fmadd(p, u, cb_vf_set1(-1.0f / 39916800.0f));
    p = cb_vf_fmadd(p, u, cb_vf_set1(1.0f / 362880.0f));
    p = cb_vf_fmadd(p, u, cb_vf_set1(-1.0f / 5040.0f));
    p = cb_vf_fmadd(p, u, cb_vf_set1(1.0f / 120.0f));
    p = cb_vf_fmadd(p, u, cb_vf_set1(-1.0f / 6.0f));
    return cb_vf_fmadd(p, u, cb_vf_set1(1.0f));
}

/* Spherical linear interpolation on the shorter arc, at constant angular speed (Shoemake,
 * "Animating Rotation with Quaternion Curves", SIGGRAPH 1985).
 *
 * The inputs are normalized (degenerate ones become identity) and b is flipped into a's
 * hemisphere, so the 4D angle theta between them is in [0, pi/2]; q and -q give q.
 *
 * Two numeric traps are avoided rather than patched:
 *  - theta from acos(dot) loses half its digits near 0, where dot rounds to 1. Here
 *    theta/2 = atan(|a - b| / |a + b|): the chord |a - b| is computed from differences and
 *    keeps full relative precision at any angle.
 *  - sin(t theta) / sin(theta) divides 0 by 0 as theta -> 0, which is why textbook slerp
 *    switches to nlerp below a threshold. Written with sinc(x) = sin(x)/x as
 *    t sinc(t theta) / sinc(theta), it is a smooth function of theta (sinc(theta) >= 2/pi on
 *    [0, pi/2]) that tends to the nlerp weights 1 - t and t, so no branch is needed.
 * t is clamped to [0, 1] (NaN counts as 0). No final renormalization: the weights are exact to
 * a few ulp, so the result is unit within about 3e-7.
 * Error: within 4.5e-7 per component of the double-precision slerp (measured 2.9e-7, see
 * docs/performance.md). */
CB_INLINE cb_soa_quat cb_soa_quat_slerp(cb_soa_quat a, cb_soa_quat b, cb_vf t)
{
    t = cb_vf_clamp01(t);
    a = cb_soa_quat_normalize(a);
    b = cb_soa_quat_align(cb_soa_quat_normalize(b), a);

    cb_vf dx = cb_vf_sub(a.x, b.x), dy = cb_vf_sub(a.y, b.y);
    cb_vf dz = cb_vf_sub(a.z, b.z), dw = cb_vf_sub(a.w, b.w);
    cb_vf ax = cb_vf_add(a.x, b.x), ay = cb_vf_add(a.y, b.y);
    cb_vf az = cb_vf_add(a.z, b.z), aw = cb_vf_add(a.w, b.w);
    cb_vf chord_minus = cb_vf_sqrt(
        cb_vf_fmadd(dw, dw, cb_vf_fmadd(dz, dz, cb_vf_fmadd(dy, dy, cb_vf_mul(dx, dx)))));
    /* >= sqrt(2) for unit inputs in one hemisphere: never zero. */
    cb_vf chord_plus = cb_vf_sqrt(
        cb_vf_fmadd(aw, aw, cb_vf_fmadd(az, az, cb_vf_fmadd(ay, ay, cb_vf_mul(ax, ax)))));
    cb_vf theta = cb_vf_mul(cb_vf_set1(2.0f), cb_soa_atan_ratio(chord_minus, chord_plus));

    cb_vf ta = cb_vf_sub(cb_vf_set1(1.0f), t);
    cb_vf xa = cb_vf_mul(ta, theta);
    cb_vf xb = cb_vf_mul(t, theta);
    cb_vf inv_sinc = cb_vf_div(cb_vf_set1(1.0f), cb_soa_sinc_sq(cb_vf_mul(theta, theta)));
    cb_vf wa = cb_vf_mul(cb_vf_mul(ta, cb_soa_sinc_sq(cb_vf_mul(xa, xa))), inv_sinc);
    cb_vf wb = cb_vf_mul(cb_vf_mul(t, cb_soa_sinc_sq(cb_vf_mul(xb, xb))), inv_sinc);

    return (cb_soa_quat){
        cb_vf_fmadd(wa, a.x, cb_vf_mul(wb, b.x)),
        cb_vf_fmadd(wa, a.y, cb_vf_mul(wb, b.y)),
        cb_vf_fmadd(wa, a.z, cb_vf_mul(wb, b.z)),
        cb_vf_fmadd(wa, a.w, cb_vf_mul(wb, b.w)),
    };
}

/* ------------------------------------------------------------------------------------------ */
/* Transforms and joint groups                                                                */

CB_INLINE cb_soa_xform cb_soa_xform_identity(void)
{
    return (cb_soa_xform){cb_soa_vec3_set1(0.0f, 0.0f, 0.0f), cb_soa_quat_identity(),
                          cb_soa_vec3_set1(1.0f, 1.0f, 1.0f)};
}

CB_INLINE cb_soa_xform cb_soa_xform_zero(void)
{
    cb_vf z = cb_vf_zero();
    return (cb_soa_xform){{z, z, z}, {z, z, z, z}, {z, z, z}};
}

CB_INLINE cb_soa_xform cb_soa_xform_load(const struct cb_xform_group *g)
{
    return (cb_soa_xform){
        {cb_vf_load(g->tx), cb_vf_load(g->ty), cb_vf_load(g->tz)},
        {cb_vf_load(g->qx), cb_vf_load(g->qy), cb_vf_load(g->qz), cb_vf_load(g->qw)},
        {cb_vf_load(g->sx), cb_vf_load(g->sy), cb_vf_load(g->sz)},
    };
}

CB_INLINE void cb_soa_xform_store(struct cb_xform_group *g, cb_soa_xform x)
{
    cb_vf_store(g->tx, x.t.x);
    cb_vf_store(g->ty, x.t.y);
    cb_vf_store(g->tz, x.t.z);
    cb_vf_store(g->qx, x.q.x);
    cb_vf_store(g->qy, x.q.y);
    cb_vf_store(g->qz, x.q.z);
    cb_vf_store(g->qw, x.q.w);
    cb_vf_store(g->sx, x.s.x);
    cb_vf_store(g->sy, x.s.y);
    cb_vf_store(g->sz, x.s.z);
}

/* acc += w * x, where w is per lane (a clip weight times a joint mask, say). The rotation is
 * first flipped into the hemisphere of the running sum, so opposite-signed copies of one
 * rotation add up instead of cancelling; while the sum is still zero the dot is +0 and nothing
 * flips. Weights must be finite and >= 0. */
CB_INLINE void cb_soa_xform_accumulate(cb_soa_xform *acc, cb_soa_xform x, cb_vf w)
{
    acc->t.x = cb_vf_fmadd(w, x.t.x, acc->t.x);
    acc->t.y = cb_vf_fmadd(w, x.t.y, acc->t.y);
    acc->t.z = cb_vf_fmadd(w, x.t.z, acc->t.z);
    cb_soa_quat q = cb_soa_quat_align(x.q, acc->q);
    acc->q.x = cb_vf_fmadd(w, q.x, acc->q.x);
    acc->q.y = cb_vf_fmadd(w, q.y, acc->q.y);
    acc->q.z = cb_vf_fmadd(w, q.z, acc->q.z);
    acc->q.w = cb_vf_fmadd(w, q.w, acc->q.w);
    acc->s.x = cb_vf_fmadd(w, x.s.x, acc->s.x);
    acc->s.y = cb_vf_fmadd(w, x.s.y, acc->s.y);
    acc->s.z = cb_vf_fmadd(w, x.s.z, acc->s.z);
}

/* Turns an accumulated sum into a transform: translation and scale times inv_weight_sum (the
 * weighted mean), rotation normalized (a rotation sum of ~0 becomes identity). */
CB_INLINE cb_soa_xform cb_soa_xform_finish(cb_soa_xform acc, cb_vf inv_weight_sum)
{
    return (cb_soa_xform){
        {cb_vf_mul(acc.t.x, inv_weight_sum), cb_vf_mul(acc.t.y, inv_weight_sum),
         cb_vf_mul(acc.t.z, inv_weight_sum)},
        cb_soa_quat_normalize(acc.q),
        {cb_vf_mul(acc.s.x, inv_weight_sum), cb_vf_mul(acc.s.y, inv_weight_sum),
         cb_vf_mul(acc.s.z, inv_weight_sum)},
    };
}

#endif
