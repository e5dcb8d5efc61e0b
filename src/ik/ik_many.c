/* Two-bone jobs solved together (ik_kernels.h cb_ik_two_bone_many_unchecked): W jobs at a time,
 * one per lane of cb_vf (simd/vf.h), where the scalar job (ik.c) solves one chain.
 *
 * Which jobs share lanes: consecutive jobs on one chain (skeleton, the three joints, mid_axis
 * and soften bit for bit), with no model matrices and `out` the pose itself or empty: the
 * graph's legs over a chunk of characters. Their decisions that depend only on the chain
 * (mid_axis given or not, the path of joints from the root) are taken once; everything that
 * depends on the pose, the target, the pole or the weight is computed in every lane, each
 * branch of the scalar solve becoming a select over both sides. Every other job, a lone job, a
 * weight of 0 and a lane whose pose fails a check (a frame out of range or not finite, a bone
 * too short, a target or pole out of range) go through cb_ik_two_bone_unchecked itself, which
 * refuses with the code (writing nothing) or does what it always does.
 *
 * Bit for bit: each lane runs exactly the scalar solve's IEEE operations on the same operands,
 * in the same order (a + b and a * b commute exactly, so operand order within one operation
 * may differ), never fused (vf.h, "one result everywhere"). The helpers below name their
 * scalar twin (base/scalar_math_t.h, ik.c) and follow it term by term; cb_soa_* (simd/soa.h)
 * are used where their order is the scalar one (quaternion product, rotation, normalize, the
 * local matrix); compose below is not cb_soa_mat34_mul, which adds the position in another
 * order. tests/test_ik_many.c compares every output bit with the scalar job's. */
#include <string.h>

#include "assets/asset_layout.h"
#include "base/base_impl.h"
#include "base/scalar_math.h"
#include "ik/ik_impl.h"
#include "ik/ik_kernels.h"
#include "simd/lane.h"
#include "simd/soa.h"
#include "simd/soa_mat.h"
#include "simd/vmath.h"

typedef cb_vf vf;
typedef cb_vm vm;
typedef cb_soa_vec3 lv3; /* W vec3s, one per lane */
typedef cb_soa_quat lq;  /* W quaternions */

/* ------------------------------------------------------------------------------------------ */
/* Lane forms of the scalar vector helpers (base/scalar_math_t.h)                              */

CB_INLINE vf one(void)
{
    return cb_vf_set1(1.0f);
}

CB_INLINE lv3 v_splat(const float a[3])
{
    return (lv3){cb_vf_set1(a[0]), cb_vf_set1(a[1]), cb_vf_set1(a[2])};
}

CB_INLINE lv3 v_add(lv3 a, lv3 b)
{
    return (lv3){cb_vf_add(a.x, b.x), cb_vf_add(a.y, b.y), cb_vf_add(a.z, b.z)};
}

CB_INLINE lv3 v_sub(lv3 a, lv3 b)
{
    return (lv3){cb_vf_sub(a.x, b.x), cb_vf_sub(a.y, b.y), cb_vf_sub(a.z, b.z)};
}

CB_INLINE lv3 v_scale(lv3 a, vf s)
{
    return (lv3){cb_vf_mul(a.x, s), cb_vf_mul(a.y, s), cb_vf_mul(a.z, s)};
}

/* (ax bx + ay by) + az bz, as cb_fv_dot. */
CB_INLINE vf v_dot(lv3 a, lv3 b)
{
    return cb_vf_add(cb_vf_add(cb_vf_mul(a.x, b.x), cb_vf_mul(a.y, b.y)), cb_vf_mul(a.z, b.z));
}

CB_INLINE vf v_len(lv3 a)
{
    return cb_vf_sqrt(v_dot(a, a));
}

CB_INLINE lv3 v_select(vm m, lv3 a, lv3 b)
{
    return (lv3){cb_vf_select(m, a.x, b.x), cb_vf_select(m, a.y, b.y), cb_vf_select(m, a.z, b.z)};
}

/* cb_fv_normalize_len: a * (1 / |a|), the zero vector where |a| is not > 0. */
CB_INLINE lv3 v_normalize_len(lv3 a, vf *len)
{
    vf l = v_len(a);
    *len = l;
    lv3 r = v_scale(a, cb_vf_div(one(), l));
    return v_select(cb_vf_gt(l, cb_vf_zero()), r, (lv3){cb_vf_zero(), cb_vf_zero(), cb_vf_zero()});
}

/* cb_fv_reject: a - n (a . n). */
CB_INLINE lv3 v_reject(lv3 a, lv3 n)
{
    return v_sub(a, v_scale(n, v_dot(a, n)));
}

/* cb_fv_any_perpendicular: a x e for the basis axis e least aligned with a (ties to the first),
 * normalized. The cross product with e's 0s and 1s is the general one: a * 0 keeps its sign
 * and NaN, as the scalar code's does. */
CB_INLINE lv3 any_perpendicular(lv3 a)
{
    vf ax = cb_vf_abs(a.x), ay = cb_vf_abs(a.y), az = cb_vf_abs(a.z);
    vm ex = cb_vm_and(cb_vf_le(ax, ay), cb_vf_le(ax, az));
    vm ey = cb_vm_and(cb_vm_not(ex), cb_vf_le(ay, az));
    vm ez = cb_vm_not(cb_vm_or(ex, ey));
    lv3 e = {cb_vf_select(ex, one(), cb_vf_zero()), cb_vf_select(ey, one(), cb_vf_zero()),
             cb_vf_select(ez, one(), cb_vf_zero())};
    vf unused;
    return v_normalize_len(cb_soa_vec3_cross(a, e), &unused);
}

/* ------------------------------------------------------------------------------------------ */
/* Quaternions                                                                                 */

CB_INLINE lq q_select(vm m, lq a, lq b)
{
    return (lq){cb_vf_select(m, a.x, b.x), cb_vf_select(m, a.y, b.y), cb_vf_select(m, a.z, b.z),
                cb_vf_select(m, a.w, b.w)};
}

/* cb_fq_axis_half_angle. */
CB_INLINE lq axis_half_angle(lv3 n, vf c, vf s)
{
    return (lq){cb_vf_mul(n.x, s), cb_vf_mul(n.y, s), cb_vf_mul(n.z, s), c};
}

/* cb_fq_from_to: (a x b, |a + b|^2 / 2) normalized; a turn by pi about any_perpendicular(a)
 * where that w is below 1e-12 (opposite vectors). */
CB_INLINE lq from_to(lv3 a, lv3 b)
{
    lv3 h = v_add(a, b);
    vf w = cb_vf_mul(cb_vf_set1(0.5f), v_dot(h, h));
    lv3 c = cb_soa_vec3_cross(a, b);
    lq q = cb_soa_quat_normalize((lq){c.x, c.y, c.z, w});
    vm opposite = cb_vf_lt(w, cb_vf_set1(1e-12f));
    if (CB_UNLIKELY(cb_vm_any(opposite))) {
        lv3 n = any_perpendicular(a);
        q = q_select(opposite, (lq){n.x, n.y, n.z, cb_vf_zero()}, q);
    }
    return q;
}

/* cb_fq_weighted: q with w >= 0, nlerped from the identity by `weight` (exactly q at 1). */
CB_INLINE lq weighted(lq q, vf weight)
{
    vf flip = cb_vf_select(cb_vf_lt(q.w, cb_vf_zero()), cb_vf_sign_mask(), cb_vf_zero());
    q = (lq){cb_vf_xor_sign(q.x, flip), cb_vf_xor_sign(q.y, flip), cb_vf_xor_sign(q.z, flip),
             cb_vf_xor_sign(q.w, flip)};
    lq n = cb_soa_quat_normalize((lq){cb_vf_mul(weight, q.x), cb_vf_mul(weight, q.y),
                                      cb_vf_mul(weight, q.z),
                                      cb_vf_add(cb_vf_sub(one(), weight), cb_vf_mul(weight, q.w))});
    return q_select(cb_vf_ge(weight, one()), q, n);
}

/* ik.c half_angle: (cos(t/2), sin(t/2)) for the angle with cos t : sin t = c : s, from the
 * chord form that does not cancel on each side of c = 0; (1, 0) where both vanish. */
CB_INLINE void half_angle(vf c, vf s, vf *ch, vf *sh)
{
    vf r = cb_vf_sqrt(cb_vf_add(cb_vf_mul(c, c), cb_vf_mul(s, s)));
    vf sign = cb_vf_select(cb_vf_lt(s, cb_vf_zero()), cb_vf_set1(-1.0f), one());
    vm right = cb_vf_ge(c, cb_vf_zero());
    vf x = cb_vf_select(right, cb_vf_add(r, c), cb_vf_mul(sign, s));
    vf y = cb_vf_select(right, s, cb_vf_mul(sign, cb_vf_sub(r, c)));
    vf n2 = cb_vf_add(cb_vf_mul(x, x), cb_vf_mul(y, y));
    vm ok = cb_vf_gt(n2, cb_vf_zero());
    vf inv = cb_vf_div(one(), cb_vf_sqrt(n2));
    *ch = cb_vf_select(ok, cb_vf_mul(x, inv), one());
    *sh = cb_vf_select(ok, cb_vf_mul(y, inv), cb_vf_zero());
}

/* ik.c max_of(a, 0): a where a > 0, else +0 (NaN and -0 included). */
CB_INLINE vf positive_part(vf a)
{
    return cb_vf_select(cb_vf_gt(a, cb_vf_zero()), a, cb_vf_zero());
}

/* ------------------------------------------------------------------------------------------ */
/* Frames from W poses                                                                         */

/* W affine frames: the linear part's columns and the position (ik.c's frame, per lane). */
typedef struct lframe {
    lv3 c[3];
    lv3 p;
} lframe;

/* ik.c lin: (c0 v.x + c1 v.y) + c2 v.z. */
CB_INLINE lv3 lin(const lframe *f, lv3 v)
{
    return v_add(v_add(v_scale(f->c[0], v.x), v_scale(f->c[1], v.y)), v_scale(f->c[2], v.z));
}

/* a * b with ik.c compose4's bits: each column lin(a, column), the position lin(a, b.p) + a.p. */
CB_INLINE lframe compose(const lframe *a, const lframe *b)
{
    lframe r;
    for (int k = 0; k < 3; ++k) {
        r.c[k] = lin(a, b->c[k]);
    }
    r.p = v_add(lin(a, b->p), a->p);
    return r;
}

/* The lanes' poses: lane i reads pose[i]. Lanes past the group's jobs and jobs without work
 * read the pose of the first job with work, `lead`, so that every lane computes what a job
 * would (finite numbers, no rare case taken for nothing); nothing of theirs is written. A group
 * that fills at most half the lanes (the graph's chunks of 8 at W = 16) is `half`: only the
 * lower half is gathered, the upper lanes take lane lead's numbers from it. */
typedef struct lanes {
    bool half;
    size_t lead;
    const float *pose[CB_W];
} lanes;

/* Components [first, first + m) of joint j in lanes [0, count), one row per component. */
CB_INLINE void gather_lanes(const lanes *ln, size_t count, size_t j, size_t first, size_t m,
                            float (*buf)[CB_W])
{
    for (size_t i = 0; i < count; ++i) {
        const float *p = cb_lane_cptr(ln->pose[i], CB_LANE_COMPONENTS, j, first);
        for (size_t k = 0; k < m; ++k) {
            buf[k][i] = p[k * CB_W];
        }
    }
}

/* gather_lanes over every lane, or over the lower half with lane lead's numbers copied into the
 * upper. Both lane counts are constants, so the compiler unrolls the lanes. */
CB_INLINE void gather(const lanes *ln, bool half, size_t j, size_t first, size_t m,
                      float (*buf)[CB_W])
{
    if (!half) {
        gather_lanes(ln, CB_W, j, first, m, buf);
        return;
    }
    CB_VF_ALIGNED static const float lane_index[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                       8, 9, 10, 11, 12, 13, 14, 15};
    _Static_assert(CB_W <= 16, "lane_index covers every lane");
    const vm lower = cb_vf_lt(cb_vf_load(lane_index), cb_vf_set1((float)(CB_W / 2)));
    for (size_t k = 0; k < m; ++k) {
        cb_vf_store(buf[k], cb_vf_zero()); /* no undefined floats, even in discarded lanes */
    }
    gather_lanes(ln, CB_W / 2, j, first, m, buf);
    for (size_t k = 0; k < m; ++k) {
        cb_vf_store(buf[k], cb_vf_select(lower, cb_vf_load(buf[k]), cb_vf_set1(buf[k][ln->lead])));
    }
}

/* Joint j of every lane's pose, as W transforms: each lane's ten floats gathered (the reads of
 * cb_lane_xform) into a component-major buffer, then loaded a component at a time. */
CB_INLINE cb_soa_xform gather_xform(const lanes *ln, bool half, size_t j)
{
    CB_VF_ALIGNED float buf[CB_LANE_COMPONENTS][CB_W];
    gather(ln, half, j, 0, CB_LANE_COMPONENTS, buf);
    return (cb_soa_xform){
        {cb_vf_load(buf[CB_LANE_T]), cb_vf_load(buf[CB_LANE_T + 1]),
         cb_vf_load(buf[CB_LANE_T + 2])},
        {cb_vf_load(buf[CB_LANE_Q]), cb_vf_load(buf[CB_LANE_Q + 1]), cb_vf_load(buf[CB_LANE_Q + 2]),
         cb_vf_load(buf[CB_LANE_Q + 3])},
        {cb_vf_load(buf[CB_LANE_S]), cb_vf_load(buf[CB_LANE_S + 1]),
         cb_vf_load(buf[CB_LANE_S + 2])},
    };
}

/* Joint j's local rotation in every lane. */
CB_INLINE lq gather_rotation(const lanes *ln, size_t j)
{
    CB_VF_ALIGNED float buf[4][CB_W];
    gather(ln, ln->half, j, CB_LANE_Q, 4, buf);
    return (lq){cb_vf_load(buf[0]), cb_vf_load(buf[1]), cb_vf_load(buf[2]), cb_vf_load(buf[3])};
}

/* ik.c local_frame4: T R S (cb_soa_xform_to_mat34 is Shoemake's formula with col4.h's bits). */
CB_INLINE lframe local_frame(const lanes *ln, bool half, size_t j)
{
    cb_soa_xform x = gather_xform(ln, half, j);
    cb_soa_mat34 m = cb_soa_xform_to_mat34(x);
    lframe f;
    for (int k = 0; k < 3; ++k) {
        f.c[k] = (lv3){m.c[k][0], m.c[k][1], m.c[k][2]};
    }
    f.p = x.t;
    return f;
}

/* ik.c path_frame: the local matrices from `stop` (exclusive; -1: the root) down to j,
 * accumulated bottom-up. */
CB_INLINE lframe path_frame(const struct cb_skeleton *s, const lanes *ln, bool half, size_t j,
                            int32_t stop)
{
    lframe acc = local_frame(ln, half, j);
    for (int32_t p = s->parents[j]; p != stop; p = s->parents[p]) {
        lframe parent = local_frame(ln, half, (size_t)p);
        acc = compose(&parent, &acc);
    }
    return acc;
}

/* ik.c chain_frames from the pose: the start from the root, each next from the one before,
 * composed onto it. Called with `half` a constant, so that each form has its own unrolled
 * gathers (a run-time test in each gather cost 4 % more instructions per full group). */
CB_INLINE void chain_frames(const cb_ik_two_bone_job *job, const lanes *ln, bool half, lframe f[3])
{
    const struct cb_skeleton *s = job->skeleton;
    f[0] = path_frame(s, ln, half, job->start_joint, -1);
    lframe rel = path_frame(s, ln, half, job->mid_joint, (int32_t)job->start_joint);
    f[1] = compose(&f[0], &rel);
    rel = path_frame(s, ln, half, job->end_joint, (int32_t)job->mid_joint);
    f[2] = compose(&f[1], &rel);
}

/* Lanes whose v is within +-CB_IK_MAX_COORDINATE on every axis (NaN and infinities fail). */
CB_INLINE vm vec_in_range(lv3 v)
{
    const vf max = cb_vf_set1(CB_IK_MAX_COORDINATE);
    return cb_vm_and(cb_vm_and(cb_vf_le(cb_vf_abs(v.x), max), cb_vf_le(cb_vf_abs(v.y), max)),
                     cb_vf_le(cb_vf_abs(v.z), max));
}

/* Lanes whose every frame element is within range (ik.c chain_in_range). */
CB_INLINE vm frames_in_range(const lframe f[3])
{
    vm ok = vec_in_range(f[0].p);
    for (int k = 0; k < 3; ++k) {
        for (int c = 0; c < 3; ++c) {
            ok = cb_vm_and(ok, vec_in_range(f[k].c[c]));
        }
        if (k > 0) {
            ok = cb_vm_and(ok, vec_in_range(f[k].p));
        }
    }
    return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* The solve (ik.c chain_hinge, soften_distance, solve_two_bone, two_bone_solve)               */

/* What the lanes hold besides the frames: the jobs' targets, poles and weights. */
typedef struct lane_inputs {
    lv3 target, pole;
    vf weight;
} lane_inputs;

typedef struct lane_solution {
    lq start, mid; /* model-space turns (solve_two_bone's) */
    vf mid_c, mid_s;
    vm reached;
} lane_solution;

/* ik.c soften_distance: the distance given to the chain and the gap to the full reach; the
 * exponential only when a lane is in the soft zone. */
CB_INLINE vf soften_distance(vf d, vf dmin, vf dmax, float soften, vf *gap, vm *reached)
{
    vf scaled = cb_vf_mul(cb_vf_set1(soften), dmax);
    vf start = cb_vf_select(cb_vf_gt(scaled, dmin), scaled, dmin); /* soft_start's max_of */
    vf zone = cb_vf_sub(dmax, start);
    vm below = cb_vf_lt(d, dmin);
    vm inside = cb_vm_and(cb_vm_not(below), cb_vf_le(d, start));
    vm soft = cb_vm_not(cb_vm_or(below, inside));
    vm zoned = cb_vf_gt(zone, cb_vf_zero());
    vf soft_gap = cb_vf_zero(), soft_d = dmax;
    if (cb_vm_any(cb_vm_and(soft, zoned))) {
        vf e = cb_vf_exp(cb_vf_div(cb_vf_neg(cb_vf_sub(d, start)), zone));
        vf g = cb_vf_mul(zone, e);
        soft_gap = cb_vf_select(zoned, g, cb_vf_zero());
        soft_d = cb_vf_select(zoned, cb_vf_sub(dmax, g), dmax);
    }
    *reached = inside;
    *gap = cb_vf_select(below, cb_vf_sub(dmax, dmin),
                        cb_vf_select(inside, cb_vf_sub(dmax, d), soft_gap));
    return cb_vf_select(below, dmin, cb_vf_select(inside, d, soft_d));
}

/* ik.c solve_two_bone, chain_hinge written in: each lane's model-space turns of the mid joint
 * (about the hinge) and of the start joint (the swing onto the target, then the pole's twist). */
CB_INLINE lane_solution solve_two_bone(const cb_ik_two_bone_job *job, const lane_inputs *in,
                                       const lframe *fs, const lframe *fm, const lframe *fe,
                                       float soften)
{
    /* chain_hinge */
    lv3 u = v_sub(fm->p, fs->p), l = v_sub(fe->p, fm->p);
    vf a, b, pole_len;
    lv3 uhat = v_normalize_len(u, &a);
    (void)v_normalize_len(l, &b);
    lv3 pole = v_normalize_len(in->pole, &pole_len);
    lv3 n;
    const float *axis = job->mid_axis;
    if (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2] > 0.0f) {
        vf nl;
        n = v_normalize_len(lin(fm, v_splat(axis)), &nl);
        vm none = cb_vm_not(cb_vf_gt(nl, cb_vf_zero()));
        if (CB_UNLIKELY(cb_vm_any(none))) {
            n = v_select(none, any_perpendicular(uhat), n);
        }
    } else {
        vf cl;
        n = v_normalize_len(cb_soa_vec3_cross(u, l), &cl);
        vm straight =
            cb_vm_not(cb_vf_gt(cl, cb_vf_mul(cb_vf_mul(cb_vf_set1(CB_IK_STRAIGHT_EPS), a), b)));
        if (cb_vm_any(straight)) {
            vf pl;
            lv3 np = v_normalize_len(cb_soa_vec3_cross(pole, uhat), &pl);
            vm usable = cb_vf_gt(pl, cb_vf_set1(CB_IK_DIR_EPS));
            if (!cb_vm_all(cb_vm_or(usable, cb_vm_not(straight)))) {
                np = v_select(usable, np, any_perpendicular(uhat));
            }
            n = v_select(straight, np, n);
        }
    }
    vf un = v_dot(u, n), ln = v_dot(l, n);
    lv3 up = v_reject(u, n), lp = v_reject(l, n);
    vf p = v_len(up), q = v_len(lp);
    vf ab = cb_vf_add(a, b);
    vm turns = cb_vf_gt(cb_vf_mul(p, q), cb_vf_mul(cb_vf_mul(cb_vf_set1(CB_IK_HINGE_EPS), ab), ab));
    vf sum = cb_vf_add(un, ln), sum2 = cb_vf_mul(sum, sum);
    vf pq_sum = cb_vf_add(p, q), pq_diff = cb_vf_sub(p, q);
    vf dmax = cb_vf_sqrt(cb_vf_add(sum2, cb_vf_mul(pq_sum, pq_sum)));
    vf dmin = cb_vf_sqrt(cb_vf_add(sum2, cb_vf_mul(pq_diff, pq_diff)));

    /* Target direction; at the start joint, the chain's current direction. */
    const vf near = cb_vf_mul(cb_vf_set1(CB_IK_NEAR_EPS), ab);
    vf d;
    lv3 t = v_normalize_len(v_sub(in->target, fs->p), &d);
    vm at_start = cb_vm_not(cb_vf_gt(d, near));
    if (CB_UNLIKELY(cb_vm_any(at_start))) {
        vf de;
        lv3 te = v_normalize_len(v_sub(fe->p, fs->p), &de);
        te = v_select(cb_vf_gt(de, near), te, uhat);
        t = v_select(at_start, te, t);
        d = cb_vf_select(at_start, cb_vf_zero(), d);
    }

    /* The mid joint's turn, where the hinge turns (else the identity, l unchanged). */
    lane_solution out;
    vf gap;
    vf dd = soften_distance(d, dmin, dmax, soften, &gap, &out.reached);
    vf inv4pq = cb_vf_div(one(), cb_vf_mul(cb_vf_mul(cb_vf_set1(4.0f), p), q));
    vf ct = cb_vf_sqrt(
        positive_part(cb_vf_mul(cb_vf_mul(cb_vf_sub(dd, dmin), cb_vf_add(dd, dmin)), inv4pq)));
    vf st = cb_vf_sqrt(positive_part(cb_vf_mul(cb_vf_mul(gap, cb_vf_add(dmax, dd)), inv4pq)));
    vf r = cb_vf_div(one(), cb_vf_sqrt(cb_vf_add(cb_vf_mul(ct, ct), cb_vf_mul(st, st))));
    ct = cb_vf_mul(ct, r), st = cb_vf_mul(st, r);
    vf cc, sc;
    half_angle(v_dot(up, lp), v_dot(cb_soa_vec3_cross(up, lp), n), &cc, &sc);
    vf mid_c = cb_vf_add(cb_vf_mul(ct, cc), cb_vf_mul(st, sc));
    vf mid_s = cb_vf_sub(cb_vf_mul(st, cc), cb_vf_mul(ct, sc));
    lq mid = axis_half_angle(n, mid_c, mid_s);
    out.mid_c = cb_vf_select(turns, mid_c, one());
    out.mid_s = cb_vf_select(turns, mid_s, cb_vf_zero());
    out.mid = q_select(turns, mid, cb_soa_quat_identity());
    out.reached = cb_vm_and(out.reached, turns);
    lv3 l_new = v_select(turns, cb_soa_quat_rotate(mid, l), l);

    /* The start joint: swing the end onto t, then twist the hinge normal to (t, pole). */
    vf fl;
    lv3 f = v_normalize_len(v_add(u, l_new), &fl);
    lq swing = q_select(cb_vf_gt(fl, near), from_to(f, t), cb_soa_quat_identity());
    lq start = swing;
    vm has_pole = cb_vf_gt(pole_len, cb_vf_zero());
    if (cb_vm_any(has_pole)) {
        vf rl, nl;
        lv3 nref = v_normalize_len(cb_soa_vec3_cross(pole, t), &rl);
        lv3 n1 = v_normalize_len(v_reject(cb_soa_quat_rotate(swing, n), t), &nl);
        const vf dir_eps = cb_vf_set1(CB_IK_DIR_EPS);
        vm twist = cb_vm_and(has_pole, cb_vm_and(cb_vf_gt(rl, dir_eps), cb_vf_gt(nl, dir_eps)));
        vf c, s;
        half_angle(v_dot(n1, nref), v_dot(cb_soa_vec3_cross(n1, nref), t), &c, &s);
        start = q_select(twist, cb_soa_quat_mul(axis_half_angle(t, c, s), swing), swing);
    }
    out.start = start;
    return out;
}

/* ik.c to_local: the model-space turn q seen in the joint's frame f. */
CB_INLINE lq to_local(const lframe *f, lq q)
{
    lv3 v = {q.x, q.y, q.z};
    vf vl = v_len(v);
    lv3 y = {v_dot(f->c[0], v), v_dot(f->c[1], v), v_dot(f->c[2], v)};
    vf yl = v_len(y);
    vm ok = cb_vm_and(cb_vf_gt(vl, cb_vf_zero()), cb_vf_gt(yl, cb_vf_zero()));
    y = v_scale(y, cb_vf_div(vl, yl));
    return q_select(ok, (lq){y.x, y.y, y.z, q.w}, cb_soa_quat_identity());
}

/* ik.c apply_correction, its new rotation: normalize(rotation * c), c itself where the product
 * has no length. `skip`: the lanes whose c is the identity's xyz, which write nothing. */
CB_INLINE lq corrected(lq rotation, lq c, vm *skip)
{
    *skip = cb_vm_and(cb_vm_and(cb_vf_eq(c.x, cb_vf_zero()), cb_vf_eq(c.y, cb_vf_zero())),
                      cb_vf_eq(c.z, cb_vf_zero()));
    lq q = cb_soa_quat_mul(rotation, c);
    vm has_length = cb_vf_ge(cb_soa_quat_dot(q, q), cb_vf_set1(1e-30f));
    return q_select(has_length, cb_soa_quat_normalize(q), c);
}

/* ------------------------------------------------------------------------------------------ */
/* Groups of jobs                                                                              */

/* A job the lanes can take: frames from the pose, corrected in place or not at all. */
static bool lane_form(const cb_ik_two_bone_job *job)
{
    return job->model.ptr == NULL &&
           (job->out.ptr == NULL || (const void *)job->out.ptr == (const void *)job->pose.ptr);
}

/* Two jobs on one chain: what the lanes take once for all. */
static bool same_chain(const cb_ik_two_bone_job *a, const cb_ik_two_bone_job *b)
{
    return a->skeleton == b->skeleton && a->start_joint == b->start_joint &&
           a->mid_joint == b->mid_joint && a->end_joint == b->end_joint &&
           memcmp(a->mid_axis, b->mid_axis, sizeof a->mid_axis) == 0 &&
           memcmp(&a->soften, &b->soften, sizeof a->soften) == 0;
}

/* Writes 4 lanes of q (lane i) into out[0..4). */
CB_INLINE void store_lane_quat(float q[4][CB_W], size_t i, float out[4])
{
    for (size_t k = 0; k < 4; ++k) {
        out[k] = q[k][i];
    }
}

CB_INLINE void store_quat(float out[4][CB_W], lq q)
{
    cb_vf_store(out[0], q.x), cb_vf_store(out[1], q.y), cb_vf_store(out[2], q.z);
    cb_vf_store(out[3], q.w);
}

/* Jobs [0, n) of one chain, n <= W, each eligible (lane_form, same_chain as jobs[0]). Returns how
 * many were refused. */
static size_t solve_group(const cb_ik_two_bone_job *jobs, size_t n, cb_result *results)
{
    const cb_ik_two_bone_job *job0 = &jobs[0];
    /* Lanes with work: weight > 0 (weight 0 is the scalar job's no-op). */
    unsigned active = 0;
    size_t lead = n;
    bool writes = false;
    for (size_t i = 0; i < n; ++i) {
        writes |= jobs[i].out.ptr != NULL;
        if (jobs[i].weight > 0.0f) {
            active |= 1u << i;
            lead = lead < n ? lead : i;
        }
    }
    size_t refused = 0;
    if (lead < n) {
        lanes ln;
        ln.half = n <= CB_W / 2;
        ln.lead = lead;
        CB_VF_ALIGNED float in_f[7][CB_W];
        for (size_t i = 0; i < CB_W; ++i) {
            const cb_ik_two_bone_job *job = &jobs[(active >> i) & 1u ? i : lead];
            ln.pose[i] = (const float *)job->pose.ptr;
            for (int k = 0; k < 3; ++k) {
                in_f[k][i] = job->target[k];
                in_f[3 + k][i] = job->pole[k];
            }
            in_f[6][i] = job->weight;
        }
        lane_inputs in = {{cb_vf_load(in_f[0]), cb_vf_load(in_f[1]), cb_vf_load(in_f[2])},
                          {cb_vf_load(in_f[3]), cb_vf_load(in_f[4]), cb_vf_load(in_f[5])},
                          cb_vf_load(in_f[6])};
        /* ik.c chain_frames from the pose: the start from the root, each next from the one
         * before, composed onto it. */
        lframe f[3];
        if (ln.half) {
            chain_frames(job0, &ln, true, f);
        } else {
            chain_frames(job0, &ln, false, f);
        }
        /* The checks of cb_ik_two_bone_unchecked and two_bone_frames; a lane that fails one
         * goes to the scalar job, which refuses it with its code and message. */
        const vf min_bone = cb_vf_set1(CB_IK_MIN_BONE_LENGTH);
        vm ok = cb_vm_and(vec_in_range(in.target), vec_in_range(in.pole));
        ok = cb_vm_and(ok, frames_in_range(f));
        ok = cb_vm_and(ok, cb_vf_ge(v_len(v_sub(f[1].p, f[0].p)), min_bone));
        ok = cb_vm_and(ok, cb_vf_ge(v_len(v_sub(f[2].p, f[1].p)), min_bone));
        unsigned solved = active & cb_vm_bits(ok);

        float soften = job0->soften == 0.0f ? CB_IK_DEFAULT_SOFTEN : job0->soften;
        lane_solution sol = solve_two_bone(job0, &in, &f[0], &f[1], &f[2], soften);
        lq cs = to_local(&f[0], sol.start), cm;
        const float *axis = job0->mid_axis;
        if (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2] > 0.0f) {
            /* The turn is about the given axis: written from the axis itself. */
            cb_fvec3 unit = cb_fv_normalize_len((cb_fvec3){axis[0], axis[1], axis[2]}, NULL);
            cm = axis_half_angle(v_splat((const float[3]){unit.x, unit.y, unit.z}), sol.mid_c,
                                 sol.mid_s);
        } else {
            cm = to_local(&f[1], sol.mid);
        }
        cs = weighted(cs, in.weight);
        cm = weighted(cm, in.weight);

        CB_VF_ALIGNED float cs_f[4][CB_W], cm_f[4][CB_W], rs_f[4][CB_W], rm_f[4][CB_W];
        store_quat(cs_f, cs);
        store_quat(cm_f, cm);
        unsigned skip_s = 0, skip_m = 0;
        if (writes) {
            /* In place (lane_form): the chain's two rotations, stored by the lanes whose job
             * has an `out`. */
            vm skip;
            store_quat(rs_f, corrected(gather_rotation(&ln, job0->start_joint), cs, &skip));
            skip_s = cb_vm_bits(skip);
            store_quat(rm_f, corrected(gather_rotation(&ln, job0->mid_joint), cm, &skip));
            skip_m = cb_vm_bits(skip);
        }
        const unsigned reached = cb_vm_bits(sol.reached);
        for (size_t i = 0; i < n; ++i) {
            if (!((solved >> i) & 1u)) {
                continue;
            }
            const cb_ik_two_bone_job *job = &jobs[i];
            /* What cb_ik_two_bone_unchecked asserts once the target and pole are checked. */
            CB_ASSERT(cb_ik_two_bone_job_validate(job, NULL) == CB_OK);
            if (job->out.ptr != NULL) {
                float q[4];
                if (!((skip_s >> i) & 1u)) {
                    store_lane_quat(rs_f, i, q);
                    cb_lane_set(job->out.ptr, CB_LANE_COMPONENTS, job->start_joint, CB_LANE_Q, 4,
                                q);
                }
                if (!((skip_m >> i) & 1u)) {
                    store_lane_quat(rm_f, i, q);
                    cb_lane_set(job->out.ptr, CB_LANE_COMPONENTS, job->mid_joint, CB_LANE_Q, 4, q);
                }
            }
            if (job->result != NULL) {
                store_lane_quat(cs_f, i, job->result->start_correction);
                store_lane_quat(cm_f, i, job->result->mid_correction);
                job->result->reached = (reached >> i) & 1u;
                job->result->first_joint = job->start_joint;
            }
            results[i] = CB_OK;
        }
        active = solved ^ ((1u << n) - 1u); /* the rest: the scalar job's */
    } else {
        active = (1u << n) - 1u;
    }
    for (size_t i = 0; i < n; ++i) {
        if ((active >> i) & 1u) {
            results[i] = cb_ik_two_bone_unchecked(&jobs[i], NULL);
            refused += results[i] != CB_OK;
        }
    }
    return refused;
}

size_t cb_ik_two_bone_many_unchecked(const cb_ik_two_bone_job *jobs, size_t n, cb_result *results)
{
    size_t refused = 0;
    size_t j = 0;
    while (j < n) {
        size_t k = j + 1;
        if (lane_form(&jobs[j])) {
            while (k < n && k - j < CB_W && lane_form(&jobs[k]) && same_chain(&jobs[j], &jobs[k])) {
                ++k;
            }
        }
        if (k - j >= 2) {
            refused += solve_group(jobs + j, k - j, results + j);
        } else {
            results[j] = cb_ik_two_bone_unchecked(&jobs[j], NULL);
            refused += results[j] != CB_OK;
        }
        j = k;
    }
    return refused;
}
