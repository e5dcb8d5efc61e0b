/* The pose stage's unchecked kernels: the pose module's one internal interface, for the graph
 * runtime's per-frame path. They do the work of the public jobs (crowdblend/pose.h) without
 * validating: the runtime builds their arguments from a graph checked once at build (clips of
 * the graph's skeleton, masks of its length, weights and times finite, buffers of its size), so
 * checking again every frame would only throw the result away. Debug builds assert the public
 * validator's verdict instead (CB_ASSERT). The public jobs are these kernels after validation. */
#ifndef CROWDBLEND_POSE_POSE_KERNELS_H
#define CROWDBLEND_POSE_POSE_KERNELS_H

#include "crowdblend/pose.h"

/* cb_pose_blend_job_run on valid arguments: `count` entries into the skeleton's groups of out;
 * threshold resolved (> 0). */
void cb_pose_blend_unchecked(const cb_skeleton *skeleton, const cb_blend_entry *entries,
                             size_t count, float threshold, cb_xform_group *out);

/* The same through the scalar reference (cb_pose_blend_job_run_ref). */
void cb_pose_blend_unchecked_ref(const cb_skeleton *skeleton, const cb_blend_entry *entries,
                                 size_t count, float threshold, cb_xform_group *out);

/* cb_pose_crossfade_job_run on valid arguments; out may be from or to. mask (optional) holds
 * cb_skeleton_soa_joint_count() floats, padded as the graph stores its layer masks (the public
 * job also takes one float per joint). */
void cb_pose_crossfade_unchecked(const cb_skeleton *skeleton, const cb_xform_group *from,
                                 const cb_xform_group *to, float weight, const float *mask,
                                 cb_xform_group *out);

/* The layer stage of the blend job on its own: applies the OVERRIDE and ADDITIVE entries, in
 * order, onto a pose the caller computed (the graph runtime, above a crossfade or a blend of
 * whole subtrees), in place. NORMAL entries are ignored. */
void cb_pose_layers_unchecked(const cb_skeleton *skeleton, cb_xform_group *pose,
                              const cb_blend_entry *entries, size_t count);

#endif
