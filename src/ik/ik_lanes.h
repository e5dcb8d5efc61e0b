/* Lane helpers of the IK kernels that solve W jobs at once (ik_many.c: two-bone,
 * ik_orient_many.c: the orientation warp), one character per lane of cb_vf (simd/vf.h), where
 * the scalar jobs (ik.c) solve one chain: the lane forms of the scalar vector helpers, the
 * gather of a chain's local transforms from W poses and its bottom-up model frames, the range
 * check, to_local, and the rotation a correction writes. Each names its scalar twin
 * (base/scalar_math_t.h, ik.c) and follows it term by term: each lane runs the scalar
 * operations on the same operands in the same order (a + b and a * b commute exactly), never
 * fused (vf.h, "one result everywhere"); cb_soa_* (simd/soa.h) are used where their order is
 * the scalar one. Internal to src/ik; included by the .c files only. */
#ifndef CROWDBLEND_IK_IK_LANES_H
#define CROWDBLEND_IK_IK_LANES_H

#include "assets/asset_layout.h"
#include "base/base_impl.h"
#include "ik/ik_impl.h"
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

/* ------------------------------------------------------------------------------------------ */
/* Quaternions                                                                                 */

CB_INLINE lq q_select(vm m, lq a, lq b)
{
    return (lq){cb_vf_select(m, a.x, b.x), cb_vf_select(m, a.y, b.y), cb_vf_select(m, a.z, b.z),
                cb_vf_select(m, a.w, b.w)};
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
 * that fills at most half the lanes (at W = 16, a chunk's last jobs, or a chunk of 8) is `half`:
 * its upper lanes read lane lead's pose, whatever their own pointers. */
typedef struct lanes {
    bool half;
    size_t lead;
    const float *pose[CB_W];
} lanes;

/* The lanes of a group of n jobs, `active` (not 0) the jobs with work: half when the group
 * fills at most half the lanes, lead the first job with work. The caller sets the poses. */
CB_INLINE void lanes_open(lanes *ln, unsigned active, size_t n)
{
    ln->half = n <= CB_W / 2;
    ln->lead = 0;
    while (!((active >> ln->lead) & 1u)) {
        ++ln->lead;
    }
}

/* Components [first, first + m) of joint j in every lane, one row per component, or (half)
 * in the lower half with lane lead's numbers in the upper. Each row is built in registers from
 * the lanes' addresses (cb_vf_from_ptrs), then stored whole: scalar stores into the row, which
 * this did before, left each vector load of it waiting for W stores (docs/performance.md,
 * session 13: -7.2 % time in follow_probe mode 31 at W = 8, no change at W = 16). */
CB_INLINE void gather(const lanes *ln, bool half, size_t j, size_t first, size_t m,
                      float (*buf)[CB_W])
{
    const float *p[CB_W];
    for (size_t i = 0; i < CB_W; ++i) {
        const size_t from = half && i >= CB_W / 2 ? ln->lead : i;
        p[i] = cb_lane_cptr(ln->pose[from], CB_LANE_COMPONENTS, j, first);
    }
    for (size_t k = 0; k < m; ++k) {
        cb_vf_store(buf[k], cb_vf_from_ptrs(p, k * CB_W));
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

/* ik.c local_frame4: T R S (cb_soa_xform_to_mat34 is Shoemake's formula with col4.h's bits).
 * `rotation`, where not NULL, gets the joint's local rotation as gathered (gather_rotation's
 * floats, without gathering them again). */
CB_INLINE lframe local_frame(const lanes *ln, bool half, size_t j, lq *rotation)
{
    cb_soa_xform x = gather_xform(ln, half, j);
    if (rotation != NULL) {
        *rotation = x.q;
    }
    cb_soa_mat34 m = cb_soa_xform_to_mat34(x);
    lframe f;
    for (int k = 0; k < 3; ++k) {
        f.c[k] = (lv3){m.c[k][0], m.c[k][1], m.c[k][2]};
    }
    f.p = x.t;
    return f;
}

/* ik.c path_frame: the local matrices from `stop` (exclusive; -1: the root) down to j,
 * accumulated bottom-up; `rotation` as local_frame's, j's. */
CB_INLINE lframe path_frame(const struct cb_skeleton *s, const lanes *ln, bool half, size_t j,
                            int32_t stop, lq *rotation)
{
    lframe acc = local_frame(ln, half, j, rotation);
    for (int32_t p = s->parents[j]; p != stop; p = s->parents[p]) {
        lframe parent = local_frame(ln, half, (size_t)p, NULL);
        acc = compose(&parent, &acc);
    }
    return acc;
}

/* Lanes whose v is within +-CB_IK_MAX_COORDINATE on every axis (NaN and infinities fail). */
CB_INLINE vm vec_in_range(lv3 v)
{
    const vf max = cb_vf_set1(CB_IK_MAX_COORDINATE);
    return cb_vm_and(cb_vm_and(cb_vf_le(cb_vf_abs(v.x), max), cb_vf_le(cb_vf_abs(v.y), max)),
                     cb_vf_le(cb_vf_abs(v.z), max));
}

/* Lanes whose frame has every element within range (ik.c chain_in_range, one frame). */
CB_INLINE vm frame_in_range(const lframe *f)
{
    return cb_vm_and(cb_vm_and(vec_in_range(f->c[0]), vec_in_range(f->c[1])),
                     cb_vm_and(vec_in_range(f->c[2]), vec_in_range(f->p)));
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

/* Lane i of q (as store_quat left it) into out[0..4). */
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

/* Writes lane i of the rotation q (as store_quat left it) to a joint's rotation in a pose, `at`
 * its place in floats (cb_lane_index of the joint's CB_LANE_Q), worked out once for a group's
 * jobs rather than per job and joint. */
CB_INLINE void set_lane_rotation_at(cb_xform_group *pose, size_t at, float q[4][CB_W], size_t i)
{
    float *p = (float *)pose + at;
    for (size_t k = 0; k < 4; ++k) {
        p[k * CB_W] = q[k][i];
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Batches of jobs                                                                             */

/* A kernel's jobs as its batch driver sees them: `size` bytes each; which the lanes take
 * (lane_form), which two share a chain (same_chain), a group's solve (at most W jobs, each
 * lane_form and on jobs[0]'s chain; returns the jobs it solved, bit i job i, every other job
 * untouched) and the scalar job. The functions are constants where run_batches is inlined, so
 * the calls are direct. */
typedef struct lane_kernel {
    size_t size;
    bool (*lane_form)(const void *job);
    bool (*same_chain)(const void *a, const void *b);
    unsigned (*solve_group)(const void *jobs, size_t n);
    cb_result (*scalar)(const void *job);
} lane_kernel;

/* A job whose frames the lanes compute from its pose and which corrects it in place or not at
 * all: no model matrices, `out` the pose itself or empty. */
CB_INLINE bool frames_from_pose(const void *model, const void *pose, const void *out)
{
    return model == NULL && (out == NULL || out == pose);
}

/* n jobs in runs of consecutive jobs on one chain, at most W each: a run of two or more to the
 * group's solve, the jobs it did not solve (a lone job, a lane that failed a check) to the
 * scalar job. results[i]: job i's code; returns how many were refused. */
CB_INLINE size_t run_batches(const lane_kernel *kn, const void *jobs, size_t n, cb_result *results)
{
    const char *p = (const char *)jobs;
    size_t refused = 0;
    size_t j = 0;
    while (j < n) {
        const char *first = p + j * kn->size;
        size_t k = j + 1;
        if (kn->lane_form(first)) {
            while (k < n && k - j < CB_W && kn->lane_form(p + k * kn->size) &&
                   kn->same_chain(first, p + k * kn->size)) {
                ++k;
            }
        }
        const unsigned solved = k - j >= 2 ? kn->solve_group(first, k - j) : 0u;
        for (size_t i = 0; i < k - j; ++i) {
            cb_result r = (solved >> i) & 1u ? CB_OK : kn->scalar(first + i * kn->size);
            results[j + i] = r;
            refused += r != CB_OK;
        }
        j = k;
    }
    return refused;
}

#endif
