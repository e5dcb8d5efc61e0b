/* The post-process stage's kernels for the graph runtime: the ik module's one internal
 * interface. A graph validates its IK steps once, at build (the job validator on the step's
 * skeleton, joints, axes and limits); per frame only what the frame brings is checked: the
 * target and pole, which come from parameters, and the chain's model transforms, which come
 * from the pose. Errors are returned as by the public jobs (nothing written then). */
#ifndef CROWDBLEND_IK_IK_KERNELS_H
#define CROWDBLEND_IK_IK_KERNELS_H

#include "crowdblend/ik.h"

cb_result cb_ik_two_bone_unchecked(const cb_ik_two_bone_job *job, cb_error *err);
cb_result cb_ik_aim_unchecked(const cb_ik_aim_job *job, cb_error *err);
cb_result cb_ik_orient_unchecked(const cb_ik_orient_job *job, cb_error *err);
cb_result cb_ik_stride_unchecked(const cb_ik_stride_job *job, cb_error *err);

/* Joint j's model-space position in a local pose (the path of local matrices the jobs compose
 * when they have no model matrices): for a step that reads where a joint is before and after
 * its IK (the graph's foot_lock). Not checked: j in range, the pose the skeleton's. */
void cb_ik_joint_position(const cb_skeleton *skeleton, const cb_xform_group *pose, uint32_t j,
                          float out[3]);

#endif
