/* The layouts of skeletons and clips: the assets module's one internal interface. The per-frame
 * kernels that read assets directly (pose sampling and blending, local-to-model, IK, marker
 * sync) include it; nothing else does (docs/architecture.md, "Conventions"). */
#ifndef CROWDBLEND_ASSETS_ASSET_LAYOUT_H
#define CROWDBLEND_ASSETS_ASSET_LAYOUT_H

#include <math.h>

#include "base/base_impl.h"
#include "crowdblend/clip.h"
#include "crowdblend/skeleton.h"
#include "simd/lane.h"

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
    CB_CLIP_T = CB_LANE_T,
    CB_CLIP_Q = CB_LANE_Q,
    CB_CLIP_S = CB_LANE_S,
    CB_CLIP_STRIDE_NO_SCALE = CB_LANE_S,
    CB_CLIP_STRIDE_SCALE = CB_LANE_COMPONENTS,
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
    /* The keys: either frames (uncompressed) or a compressed clip, never both. frames is
     * (N + 1) * group_count * stride * W floats, vector-aligned; packed (src/compress) is
     * sampled with its group decoder inside the pose jobs and outlives the clip: a pack's is
     * the pack's (it keeps both), a clip compressed at creation owns its own (owns_packed:
     * cb_clip_destroy frees it). N stays the source's frame intervals either way: the root
     * track and the markers are per source frame. */
    const float *frames;
    const struct cb_cclip *packed;
    bool owns_packed;
    const float *root;    /* (N + 1) * 4 floats: x y z yaw relative to frame 0, or NULL */
    float root_origin[4]; /* x y z yaw of the root's ground frame at frame 0 (source space) */
    /* Whether any key of the root track has a y or a yaw other than 0: most tracks move the
     * character on the ground (modes without y) and never turn it, and a root delta skips
     * those components there, whose interpolation gives exactly 0 (clip.c, root_at). */
    bool root_moves_y, root_turns;
    /* Markers, sorted by normalized time (ties in desc order), in parallel arrays so the
     * per-frame searches (events, sync) touch only the times and hashes. */
    uint32_t marker_count;
    const float *marker_times;     /* normalized: [0, 1) looping, [0, 1] clamped */
    const uint32_t *marker_hashes; /* cb_name_hash of each name */
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

/* cb_clip_blend_root_motion for the graph runtime's time stage, whose entries hold by
 * construction most of what the public checks ask (clips, finite weights >= 0): the per-frame
 * path does not re-run public validators (docs/architecture.md). It checks only what a frame
 * can break, the times: a non-finite time or a span beyond 2^24 cycles (a huge speed
 * parameter) gives a zero delta, as the checked function's refusal left it. */
void cb_clip_blend_root_motion_trusted(const cb_root_motion_entry *entries, size_t count,
                                       cb_root_delta *out);

/* A clip whose keys are the compressed clip `packed` instead of frames (the metadata, root
 * track and markers come from d, whose frames are ignored; d's has_scale sets the layout
 * cb_clip_read_frames writes). packed must be for d's skeleton and source frame count and
 * outlive the clip; cb_clip_destroy does not free it. Validation as cb_clip_create_from_frames
 * apart from the frames. */
cb_result cb_clip_create_packed(const cb_clip_frames_desc *d, const struct cb_cclip *packed,
                                cb_clip **out, cb_error *err);

/* cb_clip_desc.compression (src/compress/from_clip.c): the clip `raw`, just built from d,
 * compressed to d->compression with the compressor of crowdblend/cclip.h into a clip that owns
 * its compressed keys and samples them in place. raw is left to the caller. Allocates with
 * d->allocator. */
cb_result cb_clip_compress_created(const cb_clip *raw, const cb_clip_desc *d, cb_clip **out,
                                   cb_error *err);

/* Is joint j in the subtree of joint root (root itself included)? Parents precede children, so
 * walking up from j can stop as soon as the index drops below root. */
bool cb_skeleton_in_subtree(const struct cb_skeleton *s, size_t j, size_t root);

#endif
