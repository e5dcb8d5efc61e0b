/* Private to src/graph/runtime: what the stages of a batch share. One file per stage:
 *   block.c     the per-character state block and the per-thread scratch
 *   params.c    (1) parameters and processors
 *   weights.c   (2) node weights and edge shares, parents first; blend nodes through their
 *               solver (direct blends too: the DIRECT solver), SIMD over the batch
 *   machine.c   (2, 3) state machines: conditions, transitions, their shares, state times
 *   time.c      (3) clip times, sync groups, root motion, events
 *   pose.c      (4) the pose: one fused blend where the tree flattens, else node by node
 *   inertial.c  (4) inertialization offsets: capture and decay
 *   post.c      (5) the IK steps
 *   foot_lock.c (3, 5) foot locking: the planting weights, the locks
 *   batch.c     the batch: the stages in order, local-to-model (6), timing
 * A flat graph (graph_impl.h) runs the same stages with their list building skipped: its
 * blend's shares need no compaction of characters, its clips are known in slot order, and its
 * pose's entries are the clips the time stage listed. */
#ifndef CROWDBLEND_GRAPH_RUNTIME_IMPL_H
#define CROWDBLEND_GRAPH_RUNTIME_IMPL_H

#include <float.h>

#include "crowdblend/sync.h"
#include "graph/graph_impl.h"
#include "graph/runtime.h"

#define NO_STATE UINT16_MAX
/* A group that had no clip with weight last frame: it restarts at its leader's start offset. */
#define NO_LEADER UINT16_MAX
/* A character just added: its groups and clips continue from the phase it was added with. */
#define FRESH_LEADER (UINT16_MAX - 1)
enum { CLIP_INACTIVE = 0, CLIP_ACTIVE = 1, CLIP_FRESH = 2 };
/* What an inertializing transition captures its offsets from at its first frame: the pose shown
 * the frame before, which is the source state, or the transition it interrupted (a crossfade,
 * or an inertialization in progress). */
enum { CAPTURE_NONE = 0, CAPTURE_STATE = 1, CAPTURE_CROSSFADE = 2, CAPTURE_INERTIAL = 3 };

/* Influence below this is nothing (as the pose job's own epsilon). */
#define EPS CB_BLEND_WEIGHT_EPSILON

/* Characters whose poses are blended, post-processed and turned into model matrices together
 * (at most; a batch smaller than this is one chunk, scratch's `chunk`). The post-process hands
 * each IK step's chains over the chunk to one lane-kernel call, W at a time, so a larger chunk
 * fills more lanes: at 32 a foot lock leg's call takes about 24 jobs in follow_probe, at 8 it
 * took 6 (docs/performance.md, session 13). The chunk's poses (32 x 2.5 KB for 64 joints) stay
 * in L2; 8 of them in L1 were measured no faster. A profiling run reads the clock per chunk. */
enum { POSE_CHUNK = 32 };

/* Floats of inertialization state per joint: rotation axis (3) and offset angle, translation
 * direction (3) and offset length (the decay time is kept once per character). */
enum { CB_INERT_FLOATS = 8 };

/* Floats of one foot lock's state per leg and character: the locked point (world, or this
 * frame's model space in the root-motion form), the release fade (1 held, falling to 0), held
 * and failed (0 or 1); where the end joint was shown last frame (same frame) and whether it
 * was (0 or 1: not on a character's first frame); with a pelvis drop, the leg's share of it on
 * its last held frame, m (foot_lock.c drop_pelvis: a release fades that share out). */
enum {
    LOCK_X,
    LOCK_Y,
    LOCK_Z,
    LOCK_FADE,
    LOCK_HELD,
    LOCK_FAILED,
    LOCK_PX,
    LOCK_PY,
    LOCK_PZ,
    LOCK_SHOWN,
    LOCK_DROP,
    CB_LOCK_FLOATS
};

/* Per-group state of one character during the time stage, in scratch. */
typedef struct group_acc {
    float wsum, dsum, best, step;
    float from, to; /* the leader's times, unwrapped: to = from + advance */
    float time;     /* the group's time this frame (wrapped or clamped) */
    uint32_t leader;
    cb_sync_pos pos; /* the leader's sync position at `to` (groups with sync markers) */
} group_acc;

struct cb_graph_scratch {
    uint32_t batch;
    uint32_t chunk;  /* characters per pose chunk: POSE_CHUNK, or the batch where it is smaller */
    float *params;   /* param rows of batch */
    float *w;        /* node rows: influence */
    float *rate;     /* node rows: playback rate (weighted sum until the node is visited) */
    float *ew;       /* edge rows: the child's share of its parent */
    uint8_t *shadow; /* node rows: weightless, but evaluated for an inertialization's capture */
    float *alpha;    /* state-machine rows: crossfade progress of this frame */
    float *cparams;  /* max_blend_params rows of batch: compacted solver input */
    float *cweights; /* CB_GRAPH_MAX_CHILDREN rows of batch: compacted solver output */
    uint32_t *cidx;  /* batch: compacted character indices */
    float *qa, *qb;  /* batch floats: quadrant scratch */
    uint8_t *qstate;
    float *sm_acc;            /* sm rows x 4: sum w and sum w d of the current and next states */
    struct group_acc *groups; /* per sync group, one character at a time */
    uint32_t *active;         /* clip slots with weight, one character at a time */
    float *active_w, *active_d;
    uint8_t *flat_active; /* flat graphs: per character of the batch, its active edges */
    uint8_t *flat_count;
    uint64_t *live;        /* general path: live_words rows of batch, bit c % 64 of row c / 64 set
                              where clip slot c has influence (time.c) */
    float *plant;          /* lock-leg rows of batch: this frame's planting weight (foot_lock.c) */
    float *plant_soon;     /* ... and a frame on at this frame's rates */
    cb_xform_group *poses; /* chunk + max_pose_depth poses */
    cb_blend_entry *entries;
    void *post; /* the post-process's per-chunk arrays (cb_graph_post_bytes), off the stack */
};

/* Element i of row r of a field of the block. */
#define AT(b, field, r, i) ((b)->field[(size_t)(r) * (b)->capacity + (i)])

/* Row r of a scratch field, element i. */
#define SR(s, field, r, i) ((s)->field[(size_t)(r) * (s)->batch + (i)])

/* Floats of one character's inertialization state: the decay time, then each joint's. */
/* The words of a character's live-clip bits (scratch live): one per 64 clip slots. */
static inline size_t cb_graph_live_words(const cb_graph *g)
{
    return g->clip_count > 0 ? ((size_t)g->clip_count + 63) / 64 : 1;
}

static inline size_t inert_floats(const cb_graph *g)
{
    return 1 + g->joint_count * CB_INERT_FLOATS;
}

static inline float *inert_of(const cb_graph_block *b, uint32_t slot, uint32_t i)
{
    return b->inert + ((size_t)slot * b->capacity + i) * inert_floats(b->graph);
}

/* Pose buffer k of the scratch: 0 .. chunk - 1 hold a chunk's finished poses, the ones
 * above are the evaluation stack. */
static inline cb_xform_group *pose_at(const cb_graph *g, cb_graph_scratch *s, uint32_t k)
{
    return (cb_xform_group *)((char *)s->poses +
                              (size_t)k * g->group_count * cb_simd_group_bytes());
}

/* A layer's weight for a character from its parameter (GNONE: 1), clamped to [0, 1]. */
static inline float layer_weight_of(const cb_graph_scratch *s, uint32_t param, uint32_t i)
{
    if (param == GNONE) {
        return 1.0f;
    }
    float w = SR(s, params, param, i);
    return w > 0.0f ? (w < 1.0f ? w : 1.0f) : 0.0f;
}

/* ---- stage 1: parameters (params.c) ---- */

/* Reads the batch's parameters, runs the processors and sanitizes what compares exactly. */
void cb_graph_stage_params(const cb_graph *g, cb_graph_block *b, const cb_graph_param_source *src,
                           uint32_t first, uint32_t n, float dt, cb_graph_scratch *s,
                           cb_graph_scratch_stats *st);

/* ---- stage 2: weights (weights.c, machine.c) ---- */

/* Every node's influence and every edge's share, parents first; machines step. */
void cb_graph_stage_weights(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                            float dt, cb_graph_scratch *s, const cb_graph_kernels *k,
                            cb_graph_scratch_stats *st);

/* A flat graph's weights: its blend's shares for every character, nothing to propagate. */
void cb_graph_stage_weights_flat(const cb_graph *g, uint32_t n, cb_graph_scratch *s,
                                 const cb_graph_kernels *k, cb_graph_scratch_stats *st);

/* Adds a parent's contribution to a child (weights.c). */
void cb_graph_contribute(const cb_graph *g, cb_graph_scratch *s, uint32_t child, uint32_t i,
                         float w, float rate);

/* The rate of rate-warped blend node `node`'s clips for character i of the batch, from its
 * shares of this frame (graph.h cb_graph_rate_warp). */
float cb_graph_warp_rate(const cb_graph *g, const gnode *node, const cb_graph_scratch *s,
                         uint32_t i);

/* Machine node `node` for character i (= first + ch): stepped (it has weight w > 0) or only
 * evaluated for a capture (w == 0), then its states' shares and contributions. */
void cb_graph_machine_shares(const cb_graph *g, cb_graph_block *b, const gnode *node,
                             cb_graph_scratch *s, uint32_t i, uint32_t ch, float w, float rate,
                             float dt);

/* ---- stage 3: time (time.c, machine.c) ---- */

void cb_graph_stage_time(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n, float dt,
                         cb_graph_scratch *s, const cb_graph_outputs *out,
                         cb_graph_scratch_stats *st);

void cb_graph_stage_time_flat(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                              float dt, cb_graph_scratch *s, const cb_graph_outputs *out,
                              cb_graph_scratch_stats *st);

/* State times: each machine's current (and next) state advances by its active clips'
 * weight-averaged cycle rate (the active lists of the time stage, `na` clips). */
void cb_graph_machine_times(const cb_graph *g, cb_graph_block *b, uint32_t ch, uint32_t na,
                            float dt, cb_graph_scratch *s);

/* ---- stage 4: pose (pose.c, inertial.c) ---- */

typedef struct pose_ctx {
    const cb_graph *g;
    cb_graph_block *b;
    cb_graph_scratch *s;
    const cb_graph_kernels *k;
    uint32_t first;                   /* the batch's first character */
    size_t pose_bytes;                /* one pose: group_count groups (pose_at's step) */
    uint32_t i, ch;                   /* the character: of the batch, of the block (first + i) */
    uint32_t entries;                 /* used */
    uint32_t capacity;                /* of s->entries */
    cb_xform_group *root_out;         /* depth 0: the character's pose in the chunk */
    float dt;                         /* the frame's seconds (foot locks release over them) */
    const cb_root_delta *root_motion; /* the frame's deltas by character, or NULL */
} pose_ctx;

/* Points x at character i of the batch. */
static inline void pose_ctx_at(pose_ctx *x, uint32_t i)
{
    x->i = i;
    x->ch = x->first + i;
}

/* The finished pose of character j of the chunk: pose_at(g, s, j), with the pose's size
 * taken once per batch (cb_simd_group_bytes is a call), as a span. */
static inline cb_xform_group_span chunk_pose(const pose_ctx *x, uint32_t j)
{
    cb_xform_group *pose = (cb_xform_group *)((char *)x->s->poses + j * x->pose_bytes);
    return (cb_xform_group_span){pose, x->g->group_count};
}

/* The character's pose into x->root_out. */
void cb_graph_stage_pose(pose_ctx *x);
void cb_graph_stage_pose_flat(pose_ctx *x);

/* Inertialization of machine node n at the pose `out` (its destination's), capturing the
 * offsets first on the transition's first frame; src is a free pose buffer. */
void cb_graph_inert_capture(const pose_ctx *x, float *state, const cb_xform_group *src,
                            const cb_xform_group *dst, float t1);
void cb_graph_inert_apply(const pose_ctx *x, const float *state, cb_xform_group *pose, float t);

/* ---- stage 5: post-process (post.c) ---- */

/* The post-process of the chunk of characters [base, base + m) of the batch (m <= the scratch's
 * chunk), their poses in the chunk's buffers (chunk_pose): step by step, each over the chunk. */
void cb_graph_stage_post(pose_ctx *x, uint32_t base, uint32_t m, cb_graph_scratch_stats *st);

/* Bytes of the scratch's `post` area for a chunk of `chunk` characters: the largest that one of
 * the graph's steps takes (a foot lock's pulls, placements and leg jobs; 0 without one;
 * 64-byte aligned). Steps run one after another, so they share it. */
size_t cb_graph_post_bytes(const cb_graph *g, uint32_t chunk);

/* A foot lock step's share of it (foot_lock.c). */
size_t cb_graph_foot_lock_bytes(uint32_t chunk);

/* ---- foot locking (foot_lock.c) ---- */

/* Character i's (= ch) planting weight of every lock leg into s->plant, from its active list
 * (na clips) and their times of this frame, and into s->plant_soon at their times a frame of dt
 * on (0 where the foot is down now: the post-process reads it only for a foot that is not): the
 * time stage's last step. */
void cb_graph_lock_planting(const cb_graph *g, const cb_graph_block *b, uint32_t ch, uint32_t i,
                            uint32_t na, float dt, cb_graph_scratch *s);

/* A lock weight that turns the step on: above 0 and finite (what the post-process reads as
 * more than 0 after turning a non-finite parameter into 0). */
static inline bool cb_graph_lock_weight_on(float w)
{
    return (w > 0.0f) & (w <= FLT_MAX); /* no branch: the gate scans a row */
}

/* Whether a LOD puts every foot lock above its max_lod (as the post-process reads it: not
 * finite is 0; a parameter is finite by the time stage anyway, stage 1). */
static inline bool cb_graph_lock_lod_off(const cb_graph *g, float lod)
{
    return (lod > g->lock_max_lod) & (lod <= FLT_MAX); /* no branch: the gate scans a row */
}

/* Whether the graph's foot locking may be on for character i (of the batch) this frame: false
 * when every foot_lock step has the same weight parameter (g->lock_gate) and it is not finite
 * and above 0, or when the character's LOD is above every step's max_lod (g->lock_max_lod,
 * docs/graph.md "Level of detail": as at weight 0). Where it is off the time stage skips
 * cb_graph_lock_planting: a step that is off reads none of its legs' planting weights (it
 * releases them), the post-process reads its weight and the LOD as this does, and between the
 * two stages a parameter can only be consumed (a trigger set to 0; a LOD is a number), so a
 * step off here is off there. */
static inline bool cb_graph_lock_on(const cb_graph *g, const cb_graph_scratch *s, uint32_t i)
{
    if (g->lod_param != GNONE && cb_graph_lock_lod_off(g, SR(s, params, g->lod_param, i))) {
        return false;
    }
    if (g->lock_gate == GNONE) {
        return true;
    }
    return cb_graph_lock_weight_on(SR(s, params, g->lock_gate, i));
}

/* Whether the time stage must ask cb_graph_lock_on character by character: the graph has lock
 * legs, and a shared weight parameter that is off, or a LOD above the locks' max_lod, for one
 * of the batch's n characters or more. One pass over each row, so that a batch whose locks are
 * all on pays no test per character. */
static inline bool cb_graph_lock_gated(const cb_graph *g, const cb_graph_scratch *s, uint32_t n)
{
    if (g->lock_leg_count == 0) {
        return false;
    }
    int off = 0;
    if (g->lock_gate != GNONE) {
        const float *w = &SR(s, params, g->lock_gate, 0);
        for (uint32_t i = 0; i < n; ++i) {
            off |= !cb_graph_lock_weight_on(w[i]);
        }
    }
    if (g->lod_param != GNONE && g->lock_max_lod <= FLT_MAX) {
        const float *lod = &SR(s, params, g->lod_param, 0);
        for (uint32_t i = 0; i < n; ++i) {
            off |= cb_graph_lock_lod_off(g, lod[i]);
        }
    }
    return off != 0;
}

/* A foot_lock step on the chunk [base, base + m) (as cb_graph_stage_post), w[j] the step's
 * weight for character base + j (<= 0: released). */
void cb_graph_foot_lock(pose_ctx *x, const gik *ik, uint32_t base, uint32_t m, const float *w,
                        cb_graph_scratch_stats *st);

/* A character's lock state at its start: nothing held. */
static inline float *lock_state_of(const cb_graph_block *b, uint32_t leg, uint32_t i)
{
    return b->foot_lock + ((size_t)leg * b->capacity + i) * CB_LOCK_FLOATS;
}

#endif
