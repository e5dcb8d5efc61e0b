/* Orientation warps solved together (ik_kernels.h cb_ik_orient_many_unchecked): W jobs at a
 * time, one per lane of cb_vf (simd/vf.h), where the scalar job (ik.c orient_solve) turns one
 * character's hip and spine.
 *
 * Which jobs share lanes: consecutive jobs on one chain (skeleton, hip joint, the spine's
 * joints and weights, angle_limit bit for bit), with no model matrices and `out` the pose
 * itself or empty: the graph's orientation step over a chunk of characters. What depends only
 * on the chain (the path of joints, each joint's share, whether two shares are the same turn)
 * is decided once; what depends on the pose or the angle is computed in every lane. A job
 * whose turn is 0 (t = weight x the clamped angle), a lone job, every other job and a lane
 * whose frames fail the range check go through cb_ik_orient_unchecked itself.
 *
 * Bit for bit: each lane runs the scalar solve's IEEE operations on the same operands in the
 * same order, never fused (ik_lanes.h): the chain's model frames (ik.c chain_frames from the
 * pose), the yaw turn (vmath.h cb_vf_sincos, the twin of cb_det_sincosf), to_local and the
 * corrected rotations. The scalar solve reuses a turn whose angle has the same bits as the joint
 * before's; the lanes reuse it where the share has the same bits (then every lane's angle
 * does) and compute it again otherwise, the same bits either way. tests/test_ik_many.c
 * compares every output bit with the scalar job's. */
#include <string.h>

#include "crowdblend/ik.h"
#include "ik/ik_kernels.h"
#include "ik/ik_lanes.h"
#include "simd/detmath.h"
#include "simd/vmath.h"

/* ik.c yaw_turn: a turn by `angle` about model +Y, in every lane. */
CB_INLINE lq yaw_turn(vf angle)
{
    vf s, c;
    cb_vf_sincos(cb_vf_mul(cb_vf_set1(0.5f), angle), &s, &c);
    return (lq){cb_vf_zero(), s, cb_vf_zero(), c};
}

/* ------------------------------------------------------------------------------------------ */
/* Groups of jobs                                                                              */

/* A job the lanes can take: frames from the pose, corrected in place or not at all. */
static bool lane_form(const void *p)
{
    const cb_ik_orient_job *job = p;
    return frames_from_pose(job->model.ptr, job->pose.ptr, job->out.ptr);
}

/* Two jobs on one chain: what the lanes take once for all. */
static bool same_chain(const void *pa, const void *pb)
{
    const cb_ik_orient_job *a = pa, *b = pb;
    if (a->skeleton != b->skeleton || a->hip_joint != b->hip_joint ||
        a->spine.count != b->spine.count ||
        memcmp(&a->angle_limit, &b->angle_limit, sizeof a->angle_limit) != 0) {
        return false;
    }
    for (size_t k = 0; k < a->spine.count && a->spine.ptr != b->spine.ptr; ++k) {
        const cb_ik_aim_joint *x = &a->spine.ptr[k], *y = &b->spine.ptr[k];
        if (x->joint != y->joint || memcmp(&x->weight, &y->weight, sizeof x->weight) != 0) {
            return false;
        }
    }
    return true;
}

/* The chain of a group, taken once: its joints (the hip, then the spine) and each one's share
 * of the turn (orient_solve's: 1 for the hip, minus the weight for a spine joint). */
typedef struct orient_chain {
    size_t n;
    uint32_t joints[CB_IK_AIM_MAX_JOINTS + 1];
    float share[CB_IK_AIM_MAX_JOINTS + 1];
} orient_chain;

/* The corrected rotation of every chain joint whose share is not 0 (`rot`, with `skip` the lanes
 * whose correction writes nothing), and the lanes whose frames are within range. Called with
 * `half` a constant (ik_many.c chain_frames). The chain's frames, as ik.c chain_frames: the hip
 * from the root, each next from the one before, composed onto it; each checked as
 * check_chain does, each turned as orient_solve does. */
CB_INLINE vm solve_lanes(const cb_ik_orient_job *job0, const orient_chain *ch, const lanes *ln,
                         bool half, vf t, bool writes, float (*rot)[4][CB_W], unsigned *skip)
{
    const struct cb_skeleton *s = job0->skeleton;
    vm ok = cb_vf_eq(cb_vf_zero(), cb_vf_zero());
    lframe acc;
    lq turn = cb_soa_quat_identity();
    bool have = false;
    uint32_t turned = 0; /* the bits of the share `turn` is for */
    for (size_t k = 0; k < ch->n; ++k) {
        int32_t stop = k == 0 ? -1 : (int32_t)ch->joints[k - 1];
        lq rotation; /* the joint's local rotation, as gathered for its frame */
        lframe rel = path_frame(s, ln, half, ch->joints[k], stop, &rotation);
        acc = k == 0 ? rel : compose(&acc, &rel);
        ok = cb_vm_and(ok, frame_in_range(&acc));
        const float share = ch->share[k];
        if (share == 0.0f) {
            continue; /* the identity: nothing written */
        }
        if (!have || cb_det_bits(share) != turned) {
            turn = yaw_turn(cb_vf_mul(cb_vf_set1(share), t));
            turned = cb_det_bits(share), have = true;
        }
        lq local = to_local(&acc, turn);
        if (writes) {
            vm sk;
            store_quat(rot[k], corrected(rotation, local, &sk));
            skip[k] = cb_vm_bits(sk);
        }
    }
    return ok;
}

static cb_result scalar_job(const void *job)
{
    return cb_ik_orient_unchecked(job, NULL);
}

/* Jobs [0, n) of one chain, n <= W, each eligible (lane_form, same_chain as jobs[0]). Returns the
 * jobs the lanes solved (bit i: job i, its outputs written); the others are left untouched for
 * the scalar job (run_batches). */
static unsigned solve_group(const void *p, size_t n)
{
    const cb_ik_orient_job *jobs = p;
    const cb_ik_orient_job *job0 = &jobs[0];
    const float limit =
        job0->angle_limit == 0.0f ? CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT : job0->angle_limit;
    /* orient_solve's turn per job; the lanes with work: t != 0 (t = 0 writes no rotation). */
    float t_of[CB_W], a_of[CB_W];
    unsigned active = 0;
    bool writes = false;
    for (size_t i = 0; i < n; ++i) {
        const cb_ik_orient_job *job = &jobs[i];
        const float a = job->angle < -limit ? -limit : job->angle > limit ? limit : job->angle;
        a_of[i] = a, t_of[i] = job->weight * a;
        if (t_of[i] != 0.0f) {
            active |= 1u << i;
            writes |= job->out.ptr != NULL;
        }
    }
    unsigned solved = 0; /* the jobs the lanes solved */
    if (active != 0) {
        orient_chain ch = {
            .n = job0->spine.count + 1, .joints = {job0->hip_joint}, .share = {1.0f}};
        for (size_t k = 1; k < ch.n; ++k) {
            ch.joints[k] = job0->spine.ptr[k - 1].joint;
            ch.share[k] = -job0->spine.ptr[k - 1].weight;
        }
        lanes ln;
        lanes_open(&ln, active, n);
        CB_VF_ALIGNED float tf[CB_W];
        for (size_t i = 0; i < CB_W; ++i) {
            const size_t from = i < n && ((active >> i) & 1u) ? i : ln.lead;
            ln.pose[i] = (const float *)jobs[from].pose.ptr;
            tf[i] = t_of[from];
        }
        CB_VF_ALIGNED float rot[CB_IK_AIM_MAX_JOINTS + 1][4][CB_W];
        unsigned skip[CB_IK_AIM_MAX_JOINTS + 1];
        vm ok = ln.half ? solve_lanes(job0, &ch, &ln, true, cb_vf_load(tf), writes, rot, skip)
                        : solve_lanes(job0, &ch, &ln, false, cb_vf_load(tf), writes, rot, skip);
        solved = active & cb_vm_bits(ok);
        /* Per chain joint, once for the group: the lanes that write its rotation (a share of
         * 0 writes nothing, nor does a lane whose correction is the identity's) and where the
         * rotation is in a pose. */
        unsigned write[CB_IK_AIM_MAX_JOINTS + 1];
        size_t at[CB_IK_AIM_MAX_JOINTS + 1];
        for (size_t k = 0; k < ch.n; ++k) {
            write[k] = writes && ch.share[k] != 0.0f ? ~skip[k] : 0u;
            at[k] = cb_lane_index(CB_LANE_COMPONENTS, ch.joints[k], CB_LANE_Q);
        }
        for (size_t i = 0; i < n; ++i) {
            if (!((solved >> i) & 1u)) {
                continue;
            }
            const cb_ik_orient_job *job = &jobs[i];
            CB_ASSERT(cb_ik_orient_job_validate(job, NULL) == CB_OK);
            for (size_t k = 0; k < ch.n && job->out.ptr != NULL; ++k) {
                if ((write[k] >> i) & 1u) {
                    set_lane_rotation_at(job->out.ptr, at[k], rot[k], i);
                }
            }
            if (job->result != NULL) {
                job->result->angle = t_of[i];
                job->result->limited = a_of[i] != job->angle;
                job->result->first_joint = job->hip_joint;
            }
        }
    }
    return solved;
}

static const lane_kernel kernel = {sizeof(cb_ik_orient_job), lane_form, same_chain, solve_group,
                                   scalar_job};

size_t cb_ik_orient_many_unchecked(const cb_ik_orient_job *jobs, size_t n, cb_result *results)
{
    return run_batches(&kernel, jobs, n, results);
}
