/* The post-process stage's kernels for the graph runtime: the ik module's one internal
 * interface. A graph validates its IK steps once, at build (the job validator on the step's
 * skeleton, joints, axes and limits); per frame only what the frame brings is checked: the
 * target and pole, which come from parameters, and the chain's model transforms, which come
 * from the pose. Errors are returned as by the public jobs (nothing written then). */
#ifndef CROWDBLEND_IK_IK_KERNELS_H
#define CROWDBLEND_IK_IK_KERNELS_H

#include "base/scalar_math.h"
#include "crowdblend/ik.h"

cb_result cb_ik_two_bone_unchecked(const cb_ik_two_bone_job *job, cb_error *err);
cb_result cb_ik_aim_unchecked(const cb_ik_aim_job *job, cb_error *err);
cb_result cb_ik_orient_unchecked(const cb_ik_orient_job *job, cb_error *err);
cb_result cb_ik_stride_unchecked(const cb_ik_stride_job *job, cb_error *err);

/* n two-bone jobs solved together: exactly what cb_ik_two_bone_unchecked does on each job in
 * turn (every output bit, every result, the same refusals; no error message), results[j] job
 * j's code; returns how many were refused. Jobs that share one chain (skeleton, the three
 * joints, mid_axis, soften; no model matrices; `out` the pose itself or empty) may be solved
 * side by side, so no job's corrections may reach another job's chain: the jobs correct
 * different poses, or chains in disjoint subtrees of one pose (a character's legs). */
size_t cb_ik_two_bone_many_unchecked(const cb_ik_two_bone_job *jobs, size_t n, cb_result *results);

/* n stride warps solved together: exactly what cb_ik_stride_unchecked does on each job in turn
 * (every output bit, the same refusals; no error message), results[j] job j's code; returns how
 * many were refused. Consecutive jobs on the same legs (skeleton, hip_joint, the legs' joints and
 * mid_axis, soften), in place, without model matrices or a result, with at most two legs (the
 * graph's stride step) are solved W at a time, every leg of each in lanes; the others one by
 * one. The lanes read every pose before any leg is written, so the jobs must warp different
 * poses (each of the graph's characters has one job). */
size_t cb_ik_stride_many_unchecked(const cb_ik_stride_job *jobs, size_t n, cb_result *results);

/* n orientation warps solved together (ik_orient_many.c): exactly what cb_ik_orient_unchecked
 * does on each job in turn (every output bit, every result, the same refusals; no error
 * message), results[j] job j's code; returns how many were refused. Jobs that share one chain
 * (skeleton, hip_joint, the spine's joints and weights, angle_limit; no model matrices; `out`
 * the pose itself or empty) may be solved side by side, so no job's corrections may reach
 * another job's chain: such jobs correct different poses (the graph's characters). */
size_t cb_ik_orient_many_unchecked(const cb_ik_orient_job *jobs, size_t n, cb_result *results);

/* Joint j's model-space position in a local pose (the path of local matrices the jobs compose
 * when they have no model matrices): for a step that reads where a joint is before and after
 * its IK (the graph's foot_lock). Not checked: j in range, the pose the skeleton's. */
void cb_ik_joint_position(const cb_skeleton *skeleton, const cb_xform_group *pose, uint32_t j,
                          float out[3]);

/* The distance from the job's start joint within which its two-bone solve reaches a target
 * exactly (cb_ik_two_bone_result.reached: where the soft zone starts, soften x the full reach
 * about the hinge, at least the folded reach), and the start joint's model position; the same
 * rule and arithmetic as the solve. Translating the chain does not change it. false (nothing
 * written) where the solve would refuse the chain (frames out of range, a bone shorter than
 * CB_IK_MIN_BONE_LENGTH) or has no exact reach (a hinge along a bone). Reads the pose only. */
bool cb_ik_two_bone_reach(const cb_ik_two_bone_job *job, float start[3], float *reach);

/* A two-bone job's exact reach and where it goes (cb_ik_two_bone_reach's `start` and `reach`);
 * the job's target, weight, out and result are not read. */
typedef struct cb_ik_two_bone_reach_job {
    cb_ik_two_bone_job job;
    float *start; /* 3 floats */
    float *reach;
} cb_ik_two_bone_reach_job;

/* n reaches worked out together: exactly what cb_ik_two_bone_reach does on each job in turn (the
 * same bits; nothing written where it returns false; no pose written), results[j] CB_OK where
 * job j's reach was written, else CB_ERR_DEGENERATE; returns how many have none. Consecutive
 * jobs on one chain (skeleton, the three joints, mid_axis, soften) without model matrices share
 * lanes, whatever their `out`: one leg over a chunk of characters (the foot lock's pelvis
 * drop). */
size_t cb_ik_two_bone_reach_many(const cb_ik_two_bone_reach_job *jobs, size_t n,
                                 cb_result *results);

/* Moves joint j (and its subtree) by `delta` in model space: its local translation changed by
 * delta expressed in its parent's model frame (which may be rotated and scaled; model space
 * itself for the root). false, the pose unchanged, when that frame is singular or not finite
 * or the translation would not be. */
bool cb_ik_translate_joint(const cb_skeleton *skeleton, cb_xform_group *pose, uint32_t j,
                           const float delta[3]);

#endif
