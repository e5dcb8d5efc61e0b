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
 * The same lanes serve two kernels built on the solve: stride warps
 * (cb_ik_stride_many_unchecked: the hip's and every leg's frames of W characters, each leg's
 * target, then each leg's solve on those frames, as ik.c stride_solve does one character at a
 * time) and reaches (cb_ik_two_bone_reach_many: the chain's frames and hinge, for the foot
 * lock's pelvis drop). Each has its own eligible jobs and hands the others to its scalar job.
 *
 * Bit for bit: each lane runs exactly the scalar solve's IEEE operations on the same operands,
 * in the same order (a + b and a * b commute exactly, so operand order within one operation
 * may differ), never fused (vf.h, "one result everywhere"). The helpers here and in
 * ik_lanes.h (the general ones, shared with the orientation warp's lanes) name their scalar
 * twin (base/scalar_math_t.h, ik.c) and follow it term by term; cb_soa_* (simd/soa.h) are used
 * where their order is the scalar one (quaternion product, rotation, normalize, the local
 * matrix); ik_lanes.h's compose is not cb_soa_mat34_mul, which adds the position in another
 * order. tests/test_ik_many.c compares every output bit with the scalar job's. */
#include <string.h>

#include "base/scalar_math.h"
#include "ik/ik_kernels.h"
#include "ik/ik_lanes.h"

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
/* The chain's frames (the gathers and products: ik_lanes.h)                                   */

/* ik.c chain_frames from the pose: the start from the root, each next from the one before,
 * composed onto it. Called with `half` a constant, so that each form has its own unrolled
 * gathers (a run-time test in each gather cost 4 % more instructions per full group).
 * rotation[0], rotation[1]: the start and mid joints' local rotations, as gathered for their
 * frames (the corrections' gather_rotation, not gathered again). */
CB_INLINE void chain_frames(const struct cb_skeleton *s, uint32_t start, uint32_t mid, uint32_t end,
                            const lanes *ln, bool half, lframe f[3], lq rotation[2])
{
    f[0] = path_frame(s, ln, half, start, -1, &rotation[0]);
    lframe rel = path_frame(s, ln, half, mid, (int32_t)start, &rotation[1]);
    f[1] = compose(&f[0], &rel);
    rel = path_frame(s, ln, half, end, (int32_t)mid, NULL);
    f[2] = compose(&f[1], &rel);
}

/* A two-bone job's chain_frames. */
CB_INLINE void job_frames(const cb_ik_two_bone_job *job, const lanes *ln, bool half, lframe f[3],
                          lq rotation[2])
{
    chain_frames(job->skeleton, job->start_joint, job->mid_joint, job->end_joint, ln, half, f,
                 rotation);
}

/* Lanes whose every frame element is within range (ik.c chain_in_range). */
CB_INLINE vm frames_in_range(const lframe f[3])
{
    return cb_vm_and(cb_vm_and(frame_in_range(&f[0]), frame_in_range(&f[1])),
                     frame_in_range(&f[2]));
}

/* Lanes whose chain passes two_bone_frames' checks: every frame within range and finite, both
 * bones at least CB_IK_MIN_BONE_LENGTH long. */
CB_INLINE vm chain_ok(const lframe f[3])
{
    const vf min_bone = cb_vf_set1(CB_IK_MIN_BONE_LENGTH);
    vm ok = frames_in_range(f);
    ok = cb_vm_and(ok, cb_vf_ge(v_len(v_sub(f[1].p, f[0].p)), min_bone));
    return cb_vm_and(ok, cb_vf_ge(v_len(v_sub(f[2].p, f[1].p)), min_bone));
}

/* ------------------------------------------------------------------------------------------ */
/* The solve (ik.c chain_hinge, soft_start, soften_distance, solve_two_bone)                   */

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

/* ik.c soft_start: where the soft zone starts, max_of(soften dmax, dmin). */
CB_INLINE vf soft_start(vf dmin, vf dmax, float soften)
{
    vf scaled = cb_vf_mul(cb_vf_set1(soften), dmax);
    return cb_vf_select(cb_vf_gt(scaled, dmin), scaled, dmin);
}

/* ik.c soften_distance: the distance given to the chain and the gap to the full reach; the
 * exponential only when a lane is in the soft zone. */
CB_INLINE vf soften_distance(vf d, vf dmin, vf dmax, float soften, vf *gap, vm *reached)
{
    vf start = soft_start(dmin, dmax, soften);
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

/* ik.c hinge, per lane: the bones (u, l; lengths a, b; u's direction), the unit pole, the hinge
 * axis n in model space, the bones' parts across it (up, lp; lengths p, q) and the reach
 * interval [dmin, dmax] of turning about it; `turns` the lanes whose hinge does not run along a
 * bone (elsewhere dmin and dmax are not read). */
typedef struct lane_hinge {
    lv3 u, l, uhat, pole, n, up, lp;
    vf a, b, pole_len, p, q, dmin, dmax;
    vm turns;
} lane_hinge;

/* ik.c chain_hinge: the chain's hinge from its frames and each lane's pole. */
CB_INLINE lane_hinge chain_hinge(const cb_ik_two_bone_job *job, lv3 pole_in, const lframe *fs,
                                 const lframe *fm, const lframe *fe)
{
    lane_hinge h;
    lv3 u = h.u = v_sub(fm->p, fs->p), l = h.l = v_sub(fe->p, fm->p);
    vf a, b;
    lv3 uhat = h.uhat = v_normalize_len(u, &a);
    (void)v_normalize_len(l, &b);
    lv3 pole = h.pole = v_normalize_len(pole_in, &h.pole_len);
    h.a = a, h.b = b;
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
    h.n = n;
    vf un = v_dot(u, n), ln = v_dot(l, n);
    h.up = v_reject(u, n), h.lp = v_reject(l, n);
    vf p = h.p = v_len(h.up), q = h.q = v_len(h.lp);
    vf ab = cb_vf_add(a, b);
    h.turns = cb_vf_gt(cb_vf_mul(p, q), cb_vf_mul(cb_vf_mul(cb_vf_set1(CB_IK_HINGE_EPS), ab), ab));
    vf sum = cb_vf_add(un, ln), sum2 = cb_vf_mul(sum, sum);
    vf pq_sum = cb_vf_add(p, q), pq_diff = cb_vf_sub(p, q);
    h.dmax = cb_vf_sqrt(cb_vf_add(sum2, cb_vf_mul(pq_sum, pq_sum)));
    h.dmin = cb_vf_sqrt(cb_vf_add(sum2, cb_vf_mul(pq_diff, pq_diff)));
    return h;
}

/* ik.c solve_two_bone: each lane's model-space turns of the mid joint (about the hinge) and of
 * the start joint (the swing onto the target, then the pole's twist). */
CB_INLINE lane_solution solve_two_bone(const cb_ik_two_bone_job *job, const lane_inputs *in,
                                       const lframe *fs, const lframe *fm, const lframe *fe,
                                       float soften)
{
    const lane_hinge h = chain_hinge(job, in->pole, fs, fm, fe);
    const lv3 u = h.u, l = h.l, uhat = h.uhat, pole = h.pole, n = h.n, up = h.up, lp = h.lp;
    const vf p = h.p, q = h.q, dmin = h.dmin, dmax = h.dmax, pole_len = h.pole_len;
    const vm turns = h.turns;
    const vf ab = cb_vf_add(h.a, h.b);

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

/* ------------------------------------------------------------------------------------------ */
/* Groups of jobs                                                                              */

/* A job the lanes can take: frames from the pose, corrected in place or not at all. */
static bool lane_form(const void *p)
{
    const cb_ik_two_bone_job *job = p;
    return frames_from_pose(job->model.ptr, job->pose.ptr, job->out.ptr);
}

/* Two jobs on one chain: what the lanes take once for all. */
static bool same_chain(const void *pa, const void *pb)
{
    const cb_ik_two_bone_job *a = pa, *b = pb;
    return a->skeleton == b->skeleton && a->start_joint == b->start_joint &&
           a->mid_joint == b->mid_joint && a->end_joint == b->end_joint &&
           memcmp(a->mid_axis, b->mid_axis, sizeof a->mid_axis) == 0 &&
           memcmp(&a->soften, &b->soften, sizeof a->soften) == 0;
}

static cb_result scalar_job(const void *job)
{
    return cb_ik_two_bone_unchecked(job, NULL);
}

/* Where a group's jobs write: job i's pose (its `out`, the pose itself; NULL: none) and its
 * result (NULL: none). */
typedef struct lane_outputs {
    cb_xform_group *out[CB_W];
    cb_ik_two_bone_result *result[CB_W];
} lane_outputs;

/* The lanes' solve on one chain (job0's joints, mid_axis and soften) from its frames f, then
 * the writes of jobs [0, n) in `solved`: each one's corrections into its pose (`writes`: some
 * job has one; rotation: the start and mid joints' local rotations, as gathered), its result.
 * ik.c two_bone_solve after its frames. */
CB_INLINE void solve_write(const cb_ik_two_bone_job *job0, const lane_inputs *in, const lframe f[3],
                           const lq rotation[2], bool writes, unsigned solved, size_t n,
                           const lane_outputs *o)
{
    lane_solution sol = solve_two_bone(job0, in, &f[0], &f[1], &f[2], cb_ik_job_soften(job0));
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
    cs = weighted(cs, in->weight);
    cm = weighted(cm, in->weight);

    CB_VF_ALIGNED float cs_f[4][CB_W], cm_f[4][CB_W], rs_f[4][CB_W], rm_f[4][CB_W];
    store_quat(cs_f, cs);
    store_quat(cm_f, cm);
    unsigned skip_s = 0, skip_m = 0;
    if (writes) {
        /* The chain's two rotations, stored by the lanes whose job has an `out`. */
        vm skip;
        store_quat(rs_f, corrected(rotation[0], cs, &skip));
        skip_s = cb_vm_bits(skip);
        store_quat(rm_f, corrected(rotation[1], cm, &skip));
        skip_m = cb_vm_bits(skip);
    }
    const unsigned reached = cb_vm_bits(sol.reached);
    /* The chain's joints, every job's (same_chain), and their rotations' places in a pose,
     * worked out once for the group (the stores below may alias job0: read per job, they
     * would be read and worked out again for each). */
    const uint32_t start_joint = job0->start_joint;
    const size_t start_at = cb_lane_index(CB_LANE_COMPONENTS, start_joint, CB_LANE_Q);
    const size_t mid_at = cb_lane_index(CB_LANE_COMPONENTS, job0->mid_joint, CB_LANE_Q);
    for (size_t i = 0; i < n; ++i) {
        if (!((solved >> i) & 1u)) {
            continue;
        }
        if (o->out[i] != NULL) {
            if (!((skip_s >> i) & 1u)) {
                set_lane_rotation_at(o->out[i], start_at, rs_f, i);
            }
            if (!((skip_m >> i) & 1u)) {
                set_lane_rotation_at(o->out[i], mid_at, rm_f, i);
            }
        }
        cb_ik_two_bone_result *res = o->result[i];
        if (res != NULL) {
            store_lane_quat(cs_f, i, res->start_correction);
            store_lane_quat(cm_f, i, res->mid_correction);
            res->reached = (reached >> i) & 1u;
            res->first_joint = start_joint;
        }
    }
}

/* Jobs [0, n) of one chain, n <= W, each eligible (lane_form, same_chain as jobs[0]). Returns
 * the jobs the lanes solved (bit i: job i, its outputs written); the others are left untouched
 * for the scalar job (run_batches). */
static unsigned solve_group(const void *p, size_t n)
{
    const cb_ik_two_bone_job *jobs = p, *job0 = &jobs[0];
    /* Lanes with work: weight > 0 (weight 0 is the scalar job's no-op). */
    unsigned active = 0;
    bool writes = false;
    for (size_t i = 0; i < n; ++i) {
        writes |= jobs[i].out.ptr != NULL;
        active |= (unsigned)(jobs[i].weight > 0.0f) << i;
    }
    if (active == 0) {
        return 0;
    }
    lanes ln;
    lanes_open(&ln, active, n);
    const float *target[CB_W], *pole[CB_W], *weight[CB_W]; /* each lane's (gather's way) */
    for (size_t i = 0; i < CB_W; ++i) {
        const cb_ik_two_bone_job *job = &jobs[(active >> i) & 1u ? i : ln.lead];
        ln.pose[i] = (const float *)job->pose.ptr;
        target[i] = job->target, pole[i] = job->pole, weight[i] = &job->weight;
    }
    const lane_inputs in = {
        {cb_vf_from_ptrs(target, 0), cb_vf_from_ptrs(target, 1), cb_vf_from_ptrs(target, 2)},
        {cb_vf_from_ptrs(pole, 0), cb_vf_from_ptrs(pole, 1), cb_vf_from_ptrs(pole, 2)},
        cb_vf_from_ptrs(weight, 0)};
    lframe f[3];
    lq rotation[2]; /* the start and mid joints' local rotations (from the pose) */
    if (ln.half) {
        job_frames(job0, &ln, true, f, rotation);
    } else {
        job_frames(job0, &ln, false, f, rotation);
    }
    /* The checks of cb_ik_two_bone_unchecked and two_bone_frames; a lane that fails one goes
     * to the scalar job, which refuses it with its code and message. */
    vm ok = cb_vm_and(vec_in_range(in.target), vec_in_range(in.pole));
    ok = cb_vm_and(ok, chain_ok(f));
    const unsigned solved = active & cb_vm_bits(ok);
    lane_outputs o;
    for (size_t i = 0; i < n; ++i) {
        /* What cb_ik_two_bone_unchecked asserts once the target and pole are checked. */
        CB_ASSERT(!((solved >> i) & 1u) || cb_ik_two_bone_job_validate(&jobs[i], NULL) == CB_OK);
        o.out[i] = jobs[i].out.ptr, o.result[i] = jobs[i].result;
    }
    solve_write(job0, &in, f, rotation, writes, solved, n, &o);
    return solved;
}

static const lane_kernel kernel = {sizeof(cb_ik_two_bone_job), lane_form, same_chain, solve_group,
                                   scalar_job};

size_t cb_ik_two_bone_many_unchecked(const cb_ik_two_bone_job *jobs, size_t n, cb_result *results)
{
    return run_batches(&kernel, jobs, n, results);
}

/* ------------------------------------------------------------------------------------------ */
/* Stride warps: every leg of W characters                                                     */

/* The most legs a warp in the lanes has: every leg's frames stay live from its checks to its
 * solve, and at W = 16 four legs' took stride_group 17 KB of stack (two: 11 KB; the
 * post-process keeps within 20 KB, docs/architecture.md). Bipeds, every example graph's stride
 * step, have two; a warp of more legs goes to the scalar warp. */
#define STRIDE_LANE_LEGS 2

/* A warp the lanes take: frames from the pose, in place, no result (the graph's), at most
 * STRIDE_LANE_LEGS legs. */
static bool stride_lane_form(const void *p)
{
    const cb_ik_stride_job *job = p;
    return job->model.ptr == NULL && job->out.ptr == job->pose.ptr && job->result == NULL &&
           job->leg_count <= STRIDE_LANE_LEGS;
}

/* Two warps on the same legs: the skeleton, the hip, each leg's joints and hinge, the soften. */
static bool same_legs(const void *pa, const void *pb)
{
    const cb_ik_stride_job *a = pa, *b = pb;
    return a->skeleton == b->skeleton && a->hip_joint == b->hip_joint &&
           a->leg_count == b->leg_count && memcmp(&a->soften, &b->soften, sizeof a->soften) == 0 &&
           (a->legs == b->legs || memcmp(a->legs, b->legs, a->leg_count * sizeof *a->legs) == 0);
}

static cb_result scalar_stride(const void *job)
{
    return cb_ik_stride_unchecked(job, NULL);
}

/* What each lane's warp brings: its unit direction, k - 1 and the legs' weight. */
typedef struct stride_inputs {
    vf ux, uz, k1, weight;
} stride_inputs;

/* ik.c stride_targets, a leg's target: the end joint e moved along u by (k - 1) ((e - hip) . u). */
CB_INLINE lv3 stride_target(const stride_inputs *in, lv3 e, lv3 hip)
{
    vf along = cb_vf_add(cb_vf_mul(cb_vf_sub(e.x, hip.x), in->ux),
                         cb_vf_mul(cb_vf_sub(e.z, hip.z), in->uz));
    vf shift = cb_vf_mul(in->k1, along);
    return (lv3){cb_vf_add(e.x, cb_vf_mul(shift, in->ux)), e.y,
                 cb_vf_add(e.z, cb_vf_mul(shift, in->uz))};
}

/* Warps [0, n) on the same legs whose lanes are `on`: ik.c stride_solve in lanes. The hip's and
 * every leg's frames from the pose and each leg's target, with stride_targets' checks; then,
 * for the lanes that pass them all, each leg's two-bone solve on its frames (the legs are
 * disjoint: solving one leaves another's frames as they were) and its writes. Returns those
 * lanes; the others write nothing. Called with `half` a constant (job_frames says why). */
CB_INLINE unsigned stride_lanes(const cb_ik_stride_job *jobs, size_t n, const lanes *ln, bool half,
                                unsigned on, const stride_inputs *in)
{
    const cb_ik_stride_job *job0 = &jobs[0];
    const struct cb_skeleton *s = job0->skeleton;
    const lframe hip = path_frame(s, ln, half, job0->hip_joint, -1, NULL);
    vm ok = frame_in_range(&hip);
    lframe f[STRIDE_LANE_LEGS][3];
    lq rotation[STRIDE_LANE_LEGS][2];
    lv3 target[STRIDE_LANE_LEGS];
    for (uint32_t l = 0; l < job0->leg_count; ++l) {
        const cb_ik_stride_leg *leg = &job0->legs[l];
        chain_frames(s, leg->start_joint, leg->mid_joint, leg->end_joint, ln, half, f[l],
                     rotation[l]);
        ok = cb_vm_and(ok, chain_ok(f[l]));
        target[l] = stride_target(in, f[l][2].p, hip.p);
        ok = cb_vm_and(ok, vec_in_range(target[l]));
    }
    const unsigned solved = on & cb_vm_bits(ok);
    if (solved == 0) {
        return 0;
    }
    lane_outputs o;
    for (size_t i = 0; i < n; ++i) {
        o.out[i] = jobs[i].out.ptr, o.result[i] = NULL;
    }
    const lv3 no_pole = {cb_vf_zero(), cb_vf_zero(), cb_vf_zero()};
    for (uint32_t l = 0; l < job0->leg_count; ++l) {
        const cb_ik_stride_leg *leg = &job0->legs[l];
        /* ik.c stride_leg_job: what solve_write reads of the chain */
        const cb_ik_two_bone_job chain = {
            .start_joint = leg->start_joint,
            .mid_joint = leg->mid_joint,
            .end_joint = leg->end_joint,
            .mid_axis = {leg->mid_axis[0], leg->mid_axis[1], leg->mid_axis[2]},
            .soften = job0->soften,
        };
        const lane_inputs leg_in = {target[l], no_pole, in->weight};
        solve_write(&chain, &leg_in, f[l], rotation[l], true, solved, n, &o);
    }
    return solved;
}

/* Warps [0, n) on the same legs, 2 <= n <= W: the lanes with work (a direction that passes the
 * unchecked warp's check, cb_ik_stride_on, a weight above 0 after the engage ramp) to
 * stride_lanes, the others (and any that fails a check) to the scalar warp. */
static unsigned stride_group(const void *p, size_t n)
{
    const cb_ik_stride_job *jobs = p;
    CB_VF_ALIGNED float ux[CB_W], uz[CB_W], k1[CB_W], weight[CB_W];
    unsigned on = 0;
    for (size_t i = 0; i < n; ++i) {
        weight[i] = cb_ik_stride_weight(&jobs[i]);
        if (cb_ik_stride_direction_ok(&jobs[i]) && cb_ik_stride_on(&jobs[i], &ux[i], &uz[i]) &&
            weight[i] > 0.0f) {
            on |= 1u << i;
        }
    }
    if (on == 0) {
        return 0;
    }
    lanes ln;
    lanes_open(&ln, on, n);
    for (size_t i = 0; i < CB_W; ++i) {
        const size_t at = (on >> i) & 1u ? i : ln.lead; /* past n: no bit */
        ln.pose[i] = (const float *)jobs[at].pose.ptr;
        ux[i] = ux[at], uz[i] = uz[at], weight[i] = weight[at];
        k1[i] = jobs[at].scale - 1.0f;
    }
    const stride_inputs in = {cb_vf_load(ux), cb_vf_load(uz), cb_vf_load(k1), cb_vf_load(weight)};
    return ln.half ? stride_lanes(jobs, n, &ln, true, on, &in)
                   : stride_lanes(jobs, n, &ln, false, on, &in);
}

static const lane_kernel stride_kernel = {sizeof(cb_ik_stride_job), stride_lane_form, same_legs,
                                          stride_group, scalar_stride};

size_t cb_ik_stride_many_unchecked(const cb_ik_stride_job *jobs, size_t n, cb_result *results)
{
    return run_batches(&stride_kernel, jobs, n, results);
}

/* ------------------------------------------------------------------------------------------ */
/* Reaches (the foot lock's pelvis drop)                                                       */

/* A reach the lanes can take: frames from the pose (nothing is written to it). */
static bool reach_lane_form(const void *p)
{
    const cb_ik_two_bone_job *job = p;
    return job->model.ptr == NULL;
}

/* Jobs [0, n) of one chain, 2 <= n <= W, each a cb_ik_two_bone_reach_job: ik.c
 * cb_ik_two_bone_reach in lanes (two_bone_frames, chain_hinge, soft_start). Returns the jobs
 * whose reach it wrote; the others (a frame out of range or not finite, a bone shorter than
 * CB_IK_MIN_BONE_LENGTH, a hinge along a bone) go to the scalar form, which returns false. */
static unsigned reach_group(const void *p, size_t n)
{
    const cb_ik_two_bone_reach_job *jobs = p;
    const cb_ik_two_bone_job *job0 = &jobs[0].job;
    lanes ln;
    lanes_open(&ln, 1u, n); /* every job has work */
    const float *pole[CB_W];
    for (size_t i = 0; i < CB_W; ++i) {
        const cb_ik_two_bone_job *job = &jobs[i < n ? i : 0].job;
        ln.pose[i] = (const float *)job->pose.ptr;
        pole[i] = job->pole;
    }
    lframe f[3];
    lq rotation[2]; /* not read */
    if (ln.half) {
        job_frames(job0, &ln, true, f, rotation);
    } else {
        job_frames(job0, &ln, false, f, rotation);
    }
    const lv3 pole_in = {cb_vf_from_ptrs(pole, 0), cb_vf_from_ptrs(pole, 1),
                         cb_vf_from_ptrs(pole, 2)};
    const lane_hinge h = chain_hinge(job0, pole_in, &f[0], &f[1], &f[2]);
    const vf min_bone = cb_vf_set1(CB_IK_MIN_BONE_LENGTH);
    vm ok = cb_vm_and(frames_in_range(f), h.turns);
    ok = cb_vm_and(ok, cb_vm_and(cb_vf_ge(h.a, min_bone), cb_vf_ge(h.b, min_bone)));
    CB_VF_ALIGNED float reach[CB_W], start[3][CB_W];
    cb_vf_store(reach, soft_start(h.dmin, h.dmax, cb_ik_job_soften(job0)));
    cb_vf_store(start[0], f[0].p.x), cb_vf_store(start[1], f[0].p.y);
    cb_vf_store(start[2], f[0].p.z);
    const unsigned solved = cb_vm_bits(ok) & ((1u << n) - 1u);
    for (size_t i = 0; i < n; ++i) {
        if ((solved >> i) & 1u) {
            *jobs[i].reach = reach[i];
            for (size_t k = 0; k < 3; ++k) {
                jobs[i].start[k] = start[k][i];
            }
        }
    }
    return solved;
}

static cb_result scalar_reach(const void *p)
{
    const cb_ik_two_bone_reach_job *job = p;
    return cb_ik_two_bone_reach(&job->job, job->start, job->reach) ? CB_OK : CB_ERR_DEGENERATE;
}

static const lane_kernel reach_kernel = {sizeof(cb_ik_two_bone_reach_job), reach_lane_form,
                                         same_chain, reach_group, scalar_reach};

size_t cb_ik_two_bone_reach_many(const cb_ik_two_bone_reach_job *jobs, size_t n, cb_result *results)
{
    return run_batches(&reach_kernel, jobs, n, results);
}
