/* The layouts of skeletons and clips: the assets module's one internal interface. The per-frame
 * kernels that read assets directly (pose sampling and blending, local-to-model, IK, marker
 * sync) include it, and so does the graph runtime's time stage (the root-motion blend,
 * runtime/time.c); nothing else outside the assets and compression code does
 * (docs/architecture.md, "Conventions"). */
#ifndef CROWDBLEND_ASSETS_ASSET_LAYOUT_H
#define CROWDBLEND_ASSETS_ASSET_LAYOUT_H

#include <math.h>

#include "base/base_impl.h"
#include "base/scalar_math.h"
#include "crowdblend/clip.h"
#include "crowdblend/skeleton.h"
#include "simd/dcol4.h"
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

/* ---- Root motion: the blend of root deltas, one entry at a time ----
 * cb_clip_blend_root_motion without the public checks, as the graph runtime's time stage runs
 * it: inline, the time stage adding its clips as it lists them. Entries hold by construction most
 * of what the public checks ask (clips, finite weights >= 0): the per-frame path does not re-run
 * public validators (docs/architecture.md). Only what a frame can break is checked, the times: a
 * non-finite time or a span beyond 2^24 cycles (a huge speed parameter) gives a zero delta, as
 * the checked function's refusal left it. Every path gives the bits of cb_clip_root_delta and
 * cb_clip_blend_root_motion (tests/test_root_clamp.c). */

/* The blend so far: the weighted sums in double (x y z yaw, and the weights), and whether an
 * entry's span refused it. */
typedef struct cb_root_blend {
    cb_dcol4 sum;
    double wsum;
    bool refused;
} cb_root_blend;

static inline cb_root_blend cb_root_blend_start(void)
{
    return (cb_root_blend){cb_dcol4_zero(), 0.0, false};
}

/* The span a root delta accepts: beyond 2^24 cycles a float time no longer resolves a frame.
 * False for NaN. */
static inline bool cb_root_span_ok(float from, float to)
{
    return fabs((double)to - (double)from) <= 16777216.0;
}

/* The interval of the root track that holds u in [0, 1] (every caller's u is a time wrapped or
 * clamped into [0, 1]): its first key, and u's fraction of it in *f. */
SM_INLINE const float *cb_root_key(const struct cb_clip *c, double u, double *f)
{
    double x = u * (double)c->intervals_f; /* in [0, N] (N exactly: N < CB_CLIP_MAX_FRAMES) */
    /* x >= 0 (or -0): truncation is its floor, and an integer, not a double floored and
     * converted; i = N (u = 1) is the end of the last interval, at f = 1. (double)i is +0 for
     * i = 0, so that f's sign is that of x - i (u = -0 gives f = -0). */
    size_t i = (size_t)(int64_t)x, last = (size_t)c->intervals - 1;
    if (i > last) {
        i = last;
    }
    *f = x - (double)(int64_t)i;
    return c->root + i * 4;
}

/* Component k of the root at fraction f from key a to the next: the keys' difference in float,
 * the interpolation in double. */
SM_INLINE double cb_root_lerp(const float *a, int k, double f)
{
    return a[k] + (a[k + 4] - a[k]) * f;
}

/* The root of a clip at position u in [0, 1] of a cycle, relative to frame 0: cb_root_lerp of
 * its four components at once (x y z yaw, each lane the same operations, so the same bits). Each
 * delta samples both of its ends: keeping each clip slot's last end sample per character (the
 * next frame's start) saved about 15 instructions per clip but cost a cache miss per active
 * clip once the block left the caches (docs/performance.md, "The kept root sample, removed"). */
SM_INLINE cb_dcol4 cb_root_sample_at(const struct cb_clip *c, double u)
{
    double f;
    const float *a = cb_root_key(c, u, &f);
    cb_col4 k = cb_col4_loadu(a), d = cb_col4_sub(cb_col4_loadu(a + 4), k);
    return cb_dcol4_add(cb_dcol4_from_col4(k),
                        cb_dcol4_mul(cb_dcol4_from_col4(d), cb_dcol4_set1(f)));
}

/* The general delta (clip.c: any heading, any number of cycles), out of line: the blend's rare
 * frames (a turning clip, several cycles in one frame), whose rotations' calls would make the
 * blend's loop keep its values in memory. |to - from| <= 2^24, the clip has a root track. */
cb_root_delta cb_clip_root_delta_general(const struct cb_clip *c, float from, float to);

/* The delta of a clip that never turns (root_turns false) over a frame that crosses at most one
 * cycle boundary forward, into *d (x y z yaw), the yaw 0: with every heading 0, the general
 * delta's compose and between (clip.c, root_delta) are sums and differences of the positions,
 * so these are the same operations on the same values and give the same bits, without the
 * rotations' branches, the heading's arithmetic or the general cycle count. A component whose
 * keys are all 0 (y where root_moves_y is false, the yaw) is +0, as the general delta leaves it,
 * not computed. False (*d untouched) for other frames, which the general delta takes. This is
 * the crowd's common case: three of these per character and frame on W1. */
SM_INLINE bool cb_root_straight_delta(const struct cb_clip *c, float from, float to, cb_col4 *d)
{
    double u0, u1;
    bool next = false; /* `to` is one cycle on */
    if (c->looping) {
        double k0 = floor((double)from), k1 = floor((double)to);
        if (k1 != k0) { /* (most frames stay in their cycle: that test first) */
            if (k1 - k0 != 1.0) {
                return false;
            }
            next = true;
        }
        u0 = (double)from - k0, u1 = (double)to - k1;
    } else {
        u0 = from < 0.0f ? 0.0 : from > 1.0f ? 1.0 : from;
        u1 = to < 0.0f ? 0.0 : to > 1.0f ? 1.0 : to;
    }
    cb_dcol4 s0 = cb_root_sample_at(c, u0), s1 = cb_root_sample_at(c, u1);
    if (next) { /* the cycle's displacement (the root at 1), then the position in the next */
        s1 = cb_dcol4_add(cb_root_sample_at(c, 1.0), s1);
    }
    cb_col4 v = cb_dcol4_to_col4(cb_dcol4_sub(s1, s0));
    *d = c->root_moves_y ? cb_col4_keep_xyz(v) : cb_col4_keep_xz(v);
    return true;
}

/* Adds clip c's delta from `from` to `to` at weight w > 0 to the blend, in entry order (an entry
 * at weight 0 only refuses the blend when its span does: clip.c, blend_root_motion_trusted). */
SM_INLINE void cb_root_blend_add(cb_root_blend *b, const struct cb_clip *c, float from, float to,
                                 float w)
{
    if (!cb_root_span_ok(from, to)) {
        b->refused = true;
        return;
    }
    if (c->root != NULL) {
        cb_col4 d; /* x y z yaw */
        if (c->root_turns || !cb_root_straight_delta(c, from, to, &d)) {
            cb_root_delta g = cb_clip_root_delta_general(c, from, to);
            d = cb_col4_setr(g.translation[0], g.translation[1], g.translation[2], g.yaw);
        }
        b->sum = cb_dcol4_add(b->sum, cb_dcol4_mul(cb_dcol4_set1(w), cb_dcol4_from_col4(d)));
    }
    b->wsum += w;
}

/* The blend's delta: the weighted mean, or zero (as the checked function's refusal left it)
 * when an entry was refused. */
static inline cb_root_delta cb_root_blend_result(const cb_root_blend *b)
{
    if (b->refused) {
        return (cb_root_delta){{0, 0, 0}, 0};
    }
    double inv = b->wsum > 0.0 ? 1.0 / b->wsum : 0.0;
    float m[4];
    cb_col4_storeu(m, cb_dcol4_to_col4(cb_dcol4_mul(b->sum, cb_dcol4_set1(inv))));
    return (cb_root_delta){{m[0], m[1], m[2]}, m[3]};
}

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
