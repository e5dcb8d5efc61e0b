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
 * refuses with the code (writing nothing) or does what it always does. Jobs with their frames
 * given (cb_ik_two_bone_many_known_unchecked: the stride warp's legs, whose plan computed them)
 * run the same solve on those frames (solve_jobs, its `known` form), the scalar job there being
 * cb_ik_two_bone_known_unchecked.
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
CB_INLINE void chain_frames(const cb_ik_two_bone_job *job, const lanes *ln, bool half, lframe f[3],
                            lq rotation[2])
{
    const struct cb_skeleton *s = job->skeleton;
    f[0] = path_frame(s, ln, half, job->start_joint, -1, &rotation[0]);
    lframe rel = path_frame(s, ln, half, job->mid_joint, (int32_t)job->start_joint, &rotation[1]);
    f[1] = compose(&f[0], &rel);
    rel = path_frame(s, ln, half, job->end_joint, (int32_t)job->mid_joint, NULL);
    f[2] = compose(&f[1], &rel);
}

/* Lanes whose every frame element is within range (ik.c chain_in_range). */
CB_INLINE vm frames_in_range(const lframe f[3])
{
    return cb_vm_and(cb_vm_and(frame_in_range(&f[0]), frame_in_range(&f[1])),
                     frame_in_range(&f[2]));
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

/* The lanes' given frames (lane i: frames[i][0..3), 36 floats; solve_jobs gives every lane
 * without work lane lead's, as gather does), transposed into W frames, each row built in
 * registers (cb_vf_from_ptrs; scalar stores into a buffer made each row's load wait for them:
 * docs/performance.md, session 13). */
CB_INLINE void known_frames(const cb_ik_frame *const frames[CB_W], lframe f[3])
{
    enum { FLOATS = 3 * sizeof(cb_ik_frame) / sizeof(float) };
    _Static_assert(sizeof(cb_fvec3) == 3 * sizeof(float), "a cb_fvec3 is 3 floats");
    _Static_assert(sizeof(cb_ik_frame) == 12 * sizeof(float), "a frame is 12 floats");
    const float *src[CB_W];
    for (size_t i = 0; i < CB_W; ++i) {
        src[i] = (const float *)(const void *)frames[i]; /* 3 frames of 12 floats, no padding */
    }
    vf v[FLOATS];
    for (size_t k = 0; k < FLOATS; ++k) {
        v[k] = cb_vf_from_ptrs(src, k);
    }
    for (int j = 0; j < 3; ++j) {
        const vf *e = &v[12 * j];
        for (int k = 0; k < 3; ++k) {
            f[j].c[k] = (lv3){e[3 * k], e[3 * k + 1], e[3 * k + 2]};
        }
        f[j].p = (lv3){e[9], e[10], e[11]};
    }
}

/* Jobs [0, n) of one chain, n <= W, each eligible (lane_form, same_chain as jobs[0]), `size`
 * bytes apart, each a cb_ik_two_bone_job first; `known`: each a cb_ik_two_bone_known_job, its
 * frames given (else computed from the pose and checked). Returns the jobs the lanes solved
 * (bit i: job i, its outputs written); the others are left untouched for the scalar job
 * (run_batches). Called with `known` a constant: one solve, two forms. */
CB_INLINE unsigned solve_jobs(const char *p, size_t size, size_t n, bool known)
{
#define JOB(i) ((const cb_ik_two_bone_job *)(const void *)(p + (i)*size))
    const cb_ik_two_bone_job *job0 = JOB(0);
    /* Lanes with work: weight > 0 (weight 0 is the scalar job's no-op). */
    unsigned active = 0;
    size_t lead = n;
    bool writes = false;
    for (size_t i = 0; i < n; ++i) {
        writes |= JOB(i)->out.ptr != NULL;
        if (JOB(i)->weight > 0.0f) {
            active |= 1u << i;
            lead = lead < n ? lead : i;
        }
    }
    unsigned solved = 0; /* the jobs the lanes solved */
    if (lead < n) {
        lanes ln;
        ln.half = n <= CB_W / 2;
        ln.lead = lead;
        const float *target[CB_W], *pole[CB_W], *weight[CB_W]; /* each lane's (gather's way) */
        const cb_ik_frame *given[CB_W];
        for (size_t i = 0; i < CB_W; ++i) {
            const size_t at = (active >> i) & 1u ? i : lead;
            const cb_ik_two_bone_job *job = JOB(at);
            ln.pose[i] = (const float *)job->pose.ptr;
            if (known) {
                given[i] = ((const cb_ik_two_bone_known_job *)(const void *)job)->frames;
            }
            target[i] = job->target, pole[i] = job->pole, weight[i] = &job->weight;
        }
        lane_inputs in = {
            {cb_vf_from_ptrs(target, 0), cb_vf_from_ptrs(target, 1), cb_vf_from_ptrs(target, 2)},
            {cb_vf_from_ptrs(pole, 0), cb_vf_from_ptrs(pole, 1), cb_vf_from_ptrs(pole, 2)},
            cb_vf_from_ptrs(weight, 0)};
        lframe f[3];
        lq rotation[2]; /* the start and mid joints' local rotations (from the pose) */
        if (known) {
            known_frames(given, f); /* checked by the caller */
        } else if (ln.half) {
            /* ik.c chain_frames from the pose: the start from the root, each next from the one
             * before, composed onto it. */
            chain_frames(job0, &ln, true, f, rotation);
        } else {
            chain_frames(job0, &ln, false, f, rotation);
        }
        /* The checks of cb_ik_two_bone_unchecked and two_bone_frames (the frames' where they
         * come from the pose); a lane that fails one goes to the scalar job, which refuses it
         * with its code and message. */
        vm ok = cb_vm_and(vec_in_range(in.target), vec_in_range(in.pole));
        if (!known) {
            const vf min_bone = cb_vf_set1(CB_IK_MIN_BONE_LENGTH);
            ok = cb_vm_and(ok, frames_in_range(f));
            ok = cb_vm_and(ok, cb_vf_ge(v_len(v_sub(f[1].p, f[0].p)), min_bone));
            ok = cb_vm_and(ok, cb_vf_ge(v_len(v_sub(f[2].p, f[1].p)), min_bone));
        }
        solved = active & cb_vm_bits(ok);

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
             * has an `out`; the known form's frames come without the pose's rotations. */
            if (known) {
                rotation[0] = gather_rotation(&ln, job0->start_joint);
                rotation[1] = gather_rotation(&ln, job0->mid_joint);
            }
            vm skip;
            store_quat(rs_f, corrected(rotation[0], cs, &skip));
            skip_s = cb_vm_bits(skip);
            store_quat(rm_f, corrected(rotation[1], cm, &skip));
            skip_m = cb_vm_bits(skip);
        }
        const unsigned reached = cb_vm_bits(sol.reached);
        /* The chain's joints, every job's (same_chain), and their rotations' places in a pose,
         * worked out once for the group (the stores below may alias job0: read per job, they
         * were read and worked out again for each). */
        const uint32_t start_joint = job0->start_joint;
        const size_t start_at = cb_lane_index(CB_LANE_COMPONENTS, start_joint, CB_LANE_Q);
        const size_t mid_at = cb_lane_index(CB_LANE_COMPONENTS, job0->mid_joint, CB_LANE_Q);
        for (size_t i = 0; i < n; ++i) {
            if (!((solved >> i) & 1u)) {
                continue;
            }
            const cb_ik_two_bone_job *job = JOB(i);
            /* What cb_ik_two_bone_unchecked asserts once the target and pole are checked. */
            CB_ASSERT(cb_ik_two_bone_job_validate(job, NULL) == CB_OK);
            if (job->out.ptr != NULL) {
                if (!((skip_s >> i) & 1u)) {
                    set_lane_rotation_at(job->out.ptr, start_at, rs_f, i);
                }
                if (!((skip_m >> i) & 1u)) {
                    set_lane_rotation_at(job->out.ptr, mid_at, rm_f, i);
                }
            }
            if (job->result != NULL) {
                store_lane_quat(cs_f, i, job->result->start_correction);
                store_lane_quat(cm_f, i, job->result->mid_correction);
                job->result->reached = (reached >> i) & 1u;
                job->result->first_joint = start_joint;
            }
        }
    }
    return solved;
#undef JOB
}

static unsigned solve_group(const void *p, size_t n)
{
    return solve_jobs(p, sizeof(cb_ik_two_bone_job), n, false);
}

static const lane_kernel kernel = {sizeof(cb_ik_two_bone_job), lane_form, same_chain, solve_group,
                                   scalar_job};

size_t cb_ik_two_bone_many_unchecked(const cb_ik_two_bone_job *jobs, size_t n, cb_result *results)
{
    return run_batches(&kernel, jobs, n, results);
}

/* ------------------------------------------------------------------------------------------ */
/* Jobs with their frames given                                                                */

static unsigned solve_known_group(const void *p, size_t n)
{
    return solve_jobs(p, sizeof(cb_ik_two_bone_known_job), n, true);
}

static cb_result scalar_known_job(const void *p)
{
    const cb_ik_two_bone_known_job *job = p;
    return cb_ik_two_bone_known_unchecked(&job->job, job->frames, NULL);
}

static const lane_kernel known_kernel = {sizeof(cb_ik_two_bone_known_job), lane_form, same_chain,
                                         solve_known_group, scalar_known_job};

size_t cb_ik_two_bone_many_known_unchecked(const cb_ik_two_bone_known_job *jobs, size_t n,
                                           cb_result *results)
{
    return run_batches(&known_kernel, jobs, n, results);
}
