/* Running a graph for a batch of characters: the graph module's one internal interface, for the
 * crowd. A character's state lives in a block (SoA over the characters of one graph in a
 * crowd), each thread works in its own scratch, and a batch runs the six stages of a frame
 * (src/graph/runtime/). The graph itself stays opaque here: the crowd reaches it through
 * crowdblend/graph.h and the few queries below. */
#ifndef CROWDBLEND_GRAPH_RUNTIME_H
#define CROWDBLEND_GRAPH_RUNTIME_H

#include "base/base_impl.h"
#include "crowdblend/crowd.h"
#include "crowdblend/graph.h"
#include "crowdblend/pose.h"
#include "ltm/ltm_kernels.h"

/* A crowd that runs a graph counts itself among its users from create to destroy, and
 * cb_graph_destroy refuses while there is any (CB_ERR_IN_USE). */
void cb_graph_use(const cb_graph *graph);
void cb_graph_unuse(const cb_graph *graph);

/* Events a character can report per frame; more are dropped and counted. */
#define CB_GRAPH_EVENTS_PER_FRAME 8

/* Per-character state, each array SoA over `capacity` characters (row r of a field holds that
 * field's item r for every character). The crowd reads clip times, events and machine states
 * from it for its outputs. */
typedef struct cb_graph_block {
    const cb_graph *graph;
    uint32_t capacity;
    float *params;          /* param_count rows */
    float *clip_time;       /* clip rows: normalized time, [0, 1] */
    uint8_t *clip_active;   /* clip rows: the clip had weight last frame */
    float *group_time;      /* sync-group rows: the leader's normalized time */
    uint16_t *group_leader; /* sync-group rows: the leader's clip slot, UINT16_MAX none */
    uint16_t *sm_current;   /* state-machine rows */
    uint16_t *sm_next;      /* UINT16_MAX: no transition */
    uint16_t *sm_transition;
    float *sm_time;         /* normalized time (cycles) in the current state */
    float *sm_next_time;    /* ... in the next state during a transition */
    float *sm_elapsed;      /* seconds into the transition */
    uint8_t *sm_inert;      /* the running transition inertializes (offsets captured) */
    uint8_t *sm_capture;    /* the offsets are to be captured this frame: CAPTURE_* */
    uint16_t *sm_from_cur;  /* what was shown when the transition fired: a state, or ... */
    uint16_t *sm_from_next; /* ... a transition into this state that it interrupted, ... */
    float *sm_from_x;       /* ... at this crossfade progress (or inertialization time) */
    float *inert;           /* inert_count x capacity x (1 + joint_count x CB_INERT_FLOATS) */
    float *foot_lock;       /* lock legs x capacity x CB_LOCK_FLOATS (runtime/foot_lock.c) */
    cb_graph_event *events; /* capacity x CB_GRAPH_EVENTS_PER_FRAME */
    uint8_t *event_count;   /* capacity */
    size_t bytes;
} cb_graph_block;

/* Bytes of the block's arrays for a capacity. */
size_t cb_graph_block_bytes(const cb_graph *g, uint32_t capacity);

/* Points the block's arrays into `memory` (cb_graph_block_bytes, 64-byte aligned). */
void cb_graph_block_init(cb_graph_block *b, const cb_graph *g, uint32_t capacity, void *memory);

/* Character i starts: defaults, initial states, clips at `phase`. Writes every field of slot i
 * that a frame or a query reads (events beyond event_count are never read), so the block's
 * memory need not be cleared: a frame reads the slots [first, first + n) of its batch only,
 * never a SIMD padding lane past the last character (those lanes live in the scratch). */
void cb_graph_block_reset(cb_graph_block *b, uint32_t i, float phase);

/* Copies character `from`'s state to `to` (swap-remove). */
void cb_graph_block_move(cb_graph_block *b, uint32_t from, uint32_t to);

/* Machine m's running transition for character i as crowd.h reports it (machine.c): a query
 * between updates, never part of a frame. */
void cb_graph_machine_transition(const cb_graph_block *b, uint32_t m, uint32_t i,
                                 cb_crowd_transition *out);

/* Whether the graph writes parameter `param` itself (a processor output or a trigger a
 * transition consumes): its column is state, not input, so it cannot be a host view. */
bool cb_graph_param_is_state(const cb_graph *g, uint32_t param);

/* Whether a clip on the graph's base path has root motion (decided when it was compiled):
 * without one, every root delta of the graph is zero. */
bool cb_graph_moves_root(const cb_graph *g);

/* Where one parameter is read from: the block's own column, or a host view. */
typedef struct cb_graph_param_source {
    const char *base; /* NULL: the block's own column */
    size_t stride;
} cb_graph_param_source;

/* The kernels a frame runs: the SIMD ones, or their scalar references (the benchmarks time a
 * whole frame both ways in one run). A frame's arguments were validated when its graph was
 * built, so these are the unchecked internal entry points. A kernel set is also where a build
 * for several CPUs would choose per ISA. */
typedef struct cb_graph_kernels {
    size_t (*solver)(const cb_solver *s, const float *const *params, size_t count, size_t stride,
                     float *weights);
    void (*blend)(const cb_skeleton *s, const cb_blend_entry *entries, size_t count,
                  float threshold, cb_xform_group *out);
    void (*ltm)(const cb_skeleton *s, const cb_xform_group *local, cb_matrix_layout layout,
                float *model);
    void (*skin)(const cb_skeleton *s, const cb_xform_group *local, const cb_ltm_skin *skin);
    /* Model matrices or qts through a stage to a streamed output
     * (cb_ltm_model_stream_unchecked); NULL in the reference set, which then writes the output
     * directly. */
    void (*ltm_stream)(const cb_skeleton *s, const cb_xform_group *local, cb_matrix_layout layout,
                       float *stage, float *model);
} cb_graph_kernels;

extern const cb_graph_kernels cb_graph_kernels_simd, cb_graph_kernels_ref;

/* Outputs of a batch. */
typedef struct cb_graph_outputs {
    char *matrices; /* character i at matrices + i * matrix_stride; NULL: not kept */
    size_t matrix_stride;
    cb_matrix_layout layout;
    /* Skinning (inverse_binds not NULL): character i's at skinning + i * skinning_stride. When
     * matrices is NULL the model matrices go to model_scratch (MAT4, the thread's own). */
    const float *inverse_binds;
    char *skinning;
    size_t skinning_stride;
    cb_matrix_layout skinning_layout;
    float *model_scratch;
    /* Not NULL (only with matrices of any layout, no inverse_binds, 16-byte aligned slots):
     * the matrices go to their slots with non-temporal stores through this stage, joint_count
     * MAT4 in size, the largest layout (kernels' ltm_stream); the caller then owes a
     * cb_ltm_stream_fence before the matrices are read elsewhere. */
    float *stage;
    cb_root_delta *root_motion; /* per character; NULL: no root motion (the time stage skips
                                 * it, and writes nothing: cb_graph_moves_root); non-NULL
                                 * only for a block initialized with `root` */
    float *kept_weights;        /* per clip slot rows of kept_stride, or NULL */
    size_t kept_stride;
    bool events; /* report the markers crossed */
} cb_graph_outputs;

typedef struct cb_graph_scratch_stats {
    uint64_t nonfinite_params, clamped_weights, dropped_events, refused_ik;
    uint64_t stage_ns[_CB_CROWD_STAGE_COUNT];
} cb_graph_scratch_stats;

/* Per-thread working memory for batches of at most batch_size characters. */
typedef struct cb_graph_scratch cb_graph_scratch;

size_t cb_graph_scratch_bytes(const cb_graph *g, uint32_t batch_size);
cb_graph_scratch *cb_graph_scratch_init(const cb_graph *g, uint32_t batch_size, void *memory);

/* Runs characters [first, first + n) (n <= batch_size) for dt seconds: the six stages. */
void cb_graph_run_batch(const cb_graph *g, cb_graph_block *b, const cb_graph_param_source *src,
                        uint32_t first, uint32_t n, float dt, cb_graph_scratch *s,
                        const cb_graph_kernels *kernels, const cb_graph_outputs *out, bool profile,
                        cb_graph_scratch_stats *stats);

/* Lock leg `leg` of character i after the last frame (crowdblend/crowd.h cb_crowd_query_foot_lock):
 * the point the step holds the foot to (in its frame F: runtime/foot_lock.c) and its held and
 * failed flags. leg < the graph's lock_leg_count, i < the block's capacity. */
void cb_graph_block_foot_lock(const cb_graph_block *b, uint32_t leg, uint32_t i, float point[3],
                              bool *held, bool *failed);

/* Which feet the clips plant: the one implementation of the rule that foot locking (the
 * foot_lock step, runtime/foot_lock.c), the follower (crowdblend/follow.h
 * cb_follow_clip_feet_*) and the skate measurement (src/measure, through the follower's
 * functions) use (graph/feet.c). A foot is down at normalized time t when the last of its
 * plant and lift markers at or before t, cyclically, is a plant. */

/* A clip's markers named `plant` or `lift` (clip may be NULL: none), in time order, into
 * time[] and is_plant[] (room for max); returns their count, 0 when the clip lacks either
 * name (a foot that never lifts or never plants says nothing), or UINT32_MAX when there are
 * more than max. */
uint32_t cb_graph_foot_markers(const cb_clip *clip, const char *plant, const char *lift,
                               float *time, bool *is_plant, uint32_t max);

/* Whether the markers (n of them, from cb_graph_foot_markers) hold the foot down at normalized
 * time t. n == 0: never. */
static inline bool cb_graph_foot_down(const float *time, const bool *is_plant, uint32_t n, float t)
{
    if (n == 0) {
        return false;
    }
    /* The last marker at or before t; before the first one, the last of the cycle. */
    uint32_t last = n - 1;
    for (uint32_t k = 0; k < n && time[k] <= t; ++k) {
        last = k;
    }
    return is_plant[last];
}

#endif
