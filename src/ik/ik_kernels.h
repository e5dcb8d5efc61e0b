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

/* An affine model-space frame as the solves compute it from a pose (ik.c chain_frames): the
 * linear part's three columns, then the position. */
typedef struct cb_ik_frame {
    cb_fvec3 c[3];
    cb_fvec3 p;
} cb_ik_frame;

/* The job's chain's model frames (start, mid, end) from its pose, as its solve computes them,
 * and that solve's checks of them (CB_ERR_NOT_FINITE, CB_ERR_INVALID_ARGUMENT,
 * CB_ERR_DEGENERATE with its message; f is written either way): what
 * cb_ik_two_bone_known_unchecked takes (tests/test_ik_many.c). */
cb_result cb_ik_two_bone_frames(const cb_ik_two_bone_job *job, cb_ik_frame f[3], cb_error *err);

/* cb_ik_two_bone_unchecked with the chain's model frames given: `known` the start, mid and end
 * joints' frames, computed from the job's pose as the job computes them (the model matrices or
 * the path of local matrices) and passing its checks (within range and finite, no bone shorter
 * than CB_IK_MIN_BONE_LENGTH); the target and pole are checked. The same bits as
 * cb_ik_two_bone_unchecked on that pose. */
cb_result cb_ik_two_bone_known_unchecked(const cb_ik_two_bone_job *job, const cb_ik_frame known[3],
                                         cb_error *err);
cb_result cb_ik_aim_unchecked(const cb_ik_aim_job *job, cb_error *err);
cb_result cb_ik_orient_unchecked(const cb_ik_orient_job *job, cb_error *err);
cb_result cb_ik_stride_unchecked(const cb_ik_stride_job *job, cb_error *err);

/* The stride warp's first half: what cb_ik_stride_unchecked computes before it writes (its one
 * implementation, which that job and cb_ik_stride_job_run run too). */
typedef struct cb_ik_stride_plan {
    float target[CB_IK_STRIDE_MAX_LEGS][3];       /* leg l's target in model space */
    cb_ik_frame frames[CB_IK_STRIDE_MAX_LEGS][3]; /* leg l's start, mid, end model frames */
    float weight; /* the legs' weight: the job's x the engage ramp */
    bool on;      /* false: the warp has nothing to do (scale 1, weight 0, no direction) */
} cb_ik_stride_plan;

/* The job's direction check (as cb_ik_stride_unchecked), then, where the warp is on, the hip's
 * and every leg's model frames from the pose (each leg's kept in the plan), all of the job's
 * run-time checks and each leg's target and the weight: cb_ik_stride_unchecked's refusals with its
 * codes and messages, the pose not touched either way. The job as validated
 * (cb_ik_stride_job_validate). */
cb_result cb_ik_stride_plan_unchecked(const cb_ik_stride_job *job, cb_ik_stride_plan *plan,
                                      cb_error *err);

/* Leg l's two-bone job of a planned warp that is on: in place on the job's `out`, towards
 * plan->target[l] at plan->weight, reporting into `result` (may be NULL). The job's second
 * half is this job for each leg in turn with the plan's frames (cb_ik_two_bone_known_unchecked
 * with plan->frames[l]: it refuses nothing the plan passed), on `out` holding the pose: what
 * cb_ik_stride_unchecked writes, bit for bit, as the legs are disjoint chains below the hip,
 * none below another (the validator's rule), so a leg's frames do not change when the legs
 * before it are solved. Without model matrices, one leg's jobs of several characters share its
 * chain: cb_ik_two_bone_many_known_unchecked solves them in one call (the graph's stride step,
 * post.c). */
cb_ik_two_bone_job cb_ik_stride_leg_job(const cb_ik_stride_job *job, const cb_ik_stride_plan *plan,
                                        uint32_t l, cb_ik_two_bone_result *result);

/* n two-bone jobs solved together: exactly what cb_ik_two_bone_unchecked does on each job in
 * turn (every output bit, every result, the same refusals; no error message), results[j] job
 * j's code; returns how many were refused. Jobs that share one chain (skeleton, the three
 * joints, mid_axis, soften; no model matrices; `out` the pose itself or empty) may be solved
 * side by side, so no job's corrections may reach another job's chain: the jobs correct
 * different poses, or chains in disjoint subtrees of one pose (a character's legs). */
size_t cb_ik_two_bone_many_unchecked(const cb_ik_two_bone_job *jobs, size_t n, cb_result *results);

/* A two-bone job with its chain's model frames (frames[0..3): start, mid, end; as
 * cb_ik_two_bone_known_unchecked's `known`). */
typedef struct cb_ik_two_bone_known_job {
    cb_ik_two_bone_job job;
    const cb_ik_frame *frames;
} cb_ik_two_bone_known_job;

/* n two-bone jobs with their frames given, solved together: exactly what
 * cb_ik_two_bone_known_unchecked does on each job in turn (every output bit, every result, the
 * same refusals; no error message), results[j] job j's code; returns how many were refused.
 * The lanes take the frames as given (no path gathered, no products): the solve, the corrections
 * and the writes of cb_ik_two_bone_many_unchecked, on jobs that share a chain as there. */
size_t cb_ik_two_bone_many_known_unchecked(const cb_ik_two_bone_known_job *jobs, size_t n,
                                           cb_result *results);

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

/* Moves joint j (and its subtree) by `delta` in model space: its local translation changed by
 * delta expressed in its parent's model frame (which may be rotated and scaled; model space
 * itself for the root). false, the pose unchanged, when that frame is singular or not finite
 * or the translation would not be. */
bool cb_ik_translate_joint(const cb_skeleton *skeleton, cb_xform_group *pose, uint32_t j,
                           const float delta[3]);

#endif
