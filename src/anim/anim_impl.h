/* Internals shared by the sources of src/anim: the layouts of skeletons and clips, and the
 * argument checks that the SIMD jobs and their scalar references share. */
#ifndef CROWDBLEND_ANIM_IMPL_H
#define CROWDBLEND_ANIM_IMPL_H

#include <math.h>

#include "base/base_impl.h"
#include "crowdblend/clip.h"
#include "crowdblend/ltm.h"
#include "crowdblend/pose.h"
#include "crowdblend/skeleton.h"

struct cb_skeleton {
    cb_allocator allocator;
    size_t alloc_bytes; /* the single block this struct heads */
    size_t joint_count;
    size_t group_count;
    uint64_t signature;
    cb_xform_group *rest; /* group_count groups, padding lanes identity */
    int32_t *parents;     /* joint_count */
    const char **names;   /* joint_count pointers into the same block */
};

/* Components stored per joint group of a clip frame, each W floats: translation x y z, rotation
 * x y z w, then (only when the clip has scale) scale - 1 for x y z. Storing the scale as its
 * deviation from 1 lets an unscaled clip skip the channel and still blend to exactly 1. */
enum {
    CB_CLIP_T = 0,
    CB_CLIP_Q = 3,
    CB_CLIP_S = 7,
    CB_CLIP_STRIDE_NO_SCALE = 7,
    CB_CLIP_STRIDE_SCALE = 10,
};

struct cb_clip {
    cb_allocator allocator;
    size_t alloc_bytes;
    char name[CB_JOINT_NAME_MAX + 1];
    uint64_t skeleton_signature;
    uint32_t joint_count;
    uint32_t group_count;
    uint32_t intervals; /* N: frames are 0..N */
    uint32_t stride;    /* components per group: 7 or 10 */
    float duration_s;
    float intervals_f; /* (float)N */
    bool looping;
    bool additive;
    bool has_scale;
    cb_root_motion root_mode; /* resolved; NONE when nothing was extracted */
    uint32_t root_joint;
    const float *frames;  /* (N + 1) * group_count * stride * W floats, vector-aligned */
    const float *root;    /* (N + 1) * 4 floats: x y z yaw relative to frame 0, or NULL */
    float root_origin[4]; /* x y z yaw of the root's ground frame at frame 0 (source space) */
    /* Markers, sorted by normalized time (ties in desc order), in parallel arrays so the
     * per-frame searches (events, sync) touch only the times and hashes. */
    uint32_t marker_count;
    const float *marker_times;     /* normalized: [0, 1) looping, [0, 1] clamped */
    const uint32_t *marker_hashes; /* cb_clip_marker_hash of each name */
    const bool *marker_event_only; /* not a sync point */
    const char *marker_names;      /* marker_count slots of CB_MARKER_NAME_MAX + 1 bytes */
};

/* Bytes of one marker name slot. */
enum { CB_MARKER_NAME_SLOT = CB_MARKER_NAME_MAX + 1 };

/* Floats of one frame of a clip. */
static inline size_t cb_clip_frame_floats(const struct cb_clip *c)
{
    return (size_t)c->group_count * c->stride * CB_SIMD_WIDTH;
}

/* Group g of frame f. */
static inline const float *cb_clip_group_ptr(const struct cb_clip *c, uint32_t f, size_t g)
{
    return c->frames + (size_t)f * cb_clip_frame_floats(c) + g * c->stride * CB_SIMD_WIDTH;
}

/* Where a normalized time falls: frames i and i + 1 (0 <= i < N), fraction f in [0, 1].
 * Looping clips wrap t into [0, 1) (t - floor(t), which may round up to exactly 1: that is the
 * copy of frame 0, so it is still right); clamped clips clamp. One definition for every path,
 * so the SIMD jobs, the references and the root motion agree on the frame a time selects. */
static inline void cb_clip_locate(const struct cb_clip *c, float t, uint32_t *i, float *f)
{
    if (c->looping) {
        t = t - floorf(t);
    } else {
        t = !(t > 0.0f) ? 0.0f : t > 1.0f ? 1.0f : t;
    }
    float x = t * c->intervals_f;
    uint32_t k = (uint32_t)x;
    if (k >= c->intervals) {
        k = c->intervals - 1;
    }
    *i = k;
    *f = x - (float)k;
}

/* Checks shared by cb_pose_blend_job_run and its reference. On success *group_count holds the
 * skeleton's group count and *threshold the resolved threshold. */
cb_result cb_pose_blend_check(const cb_pose_blend_job *job, cb_error *err, float *threshold);

/* The layer stage of cb_pose_blend_job_run on its own: applies the OVERRIDE and ADDITIVE
 * entries, in order, onto a pose the caller computed (the graph runtime, above a crossfade or a
 * blend of whole subtrees), in place. NORMAL entries are ignored. The entries must be valid for
 * the skeleton (the caller built them from a checked graph). */
void cb_pose_apply_layers(const cb_skeleton *skeleton, cb_xform_group *pose,
                          const cb_blend_entry *entries, size_t count);

/* Checks shared by cb_ltm_job_run and its reference; on success *to holds the resolved end. */
cb_result cb_ltm_check(const cb_ltm_job *job, cb_error *err, size_t *to);

/* The model-space TRS output of a local-to-model job, joints [from, to): scalar, shared by the
 * SIMD job and its reference (the parent chain leaves nothing to vectorize). */
void cb_ltm_model_xforms(const cb_ltm_job *job, size_t from, size_t to);

/* Local-to-model with SIMD over W characters sharing a skeleton (ltm_chars.c): the measured
 * alternative to cb_ltm_job_run. locals: W pose pointers; models: W outputs of joint_count
 * column-major 4x4 matrices; scratch: cb_ltm_chars_scratch_bytes() bytes aligned to the vector
 * size. No validation: benchmarks and tests only. */
size_t cb_ltm_chars_scratch_bytes(const struct cb_skeleton *s);
void cb_ltm_chars_run(const struct cb_skeleton *s, const cb_xform_group *const *locals,
                      float *const *models, void *scratch);

/* Is joint j in the subtree of joint root (root itself included)? Parents precede children, so
 * walking up from j can stop as soon as the index drops below root. */
bool cb_skeleton_in_subtree(const struct cb_skeleton *s, size_t j, size_t root);

#endif
