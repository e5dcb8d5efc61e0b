/**
 * @file crowdblend/crowd.h
 * @brief A crowd: thousands of characters sharing one skeleton, playing one or several animation
 *        graphs, updated every frame on all cores. The whole frame of crowdblend in one call.
 *
 * STEP BY STEP
 *   1. Create the assets once: a skeleton and its clips (or cb_embedded_create()), and graphs
 *      (crowdblend/graph.h): built, loaded from JSON, or a locomotion blend space in one call
 *      (cb_graph_create_blend).
 *   2. cb_crowd_create() with a desc: the skeleton, a capacity and the graphs to run.
 *   3. cb_crowd_add() characters to a kind (a graph); write their parameters into the crowd's
 *      columns (cb_crowd_param_column()) or point the crowd at your own columns
 *      (cb_crowd_set_param_view()), both indexed by the character's dense index in its kind.
 *   4. Every frame: cb_crowd_update(crowd, dt) runs every character on the crowd's thread pool;
 *      or, from your own scheduler, cb_crowd_update_range() over sub-ranges of a kind, one
 *      cb_crowd_scratch per thread.
 *   5. Read the outputs: model-space matrices, skinning matrices (with inverse binds), the
 *      frame's root motion, events (markers crossed), current states, optionally the clip
 *      weights.
 *
 * KINDS
 *   Each graph the crowd runs is a kind, 0 .. cb_crowd_kind_count() - 1, with its own dense
 *   table of characters, like an ECS archetype: batches never mix kinds, so weights are still
 *   solved SIMD over characters of one graph.
 *
 * THE FRAME, per batch of characters of one kind (docs/architecture.md, docs/graph.md):
 *   parameters (and processors) -> weights (state machines step; solvers SIMD over the batch)
 *   -> time & sync (sync groups at weight-averaged durations, root motion, events) -> pose
 *   (fused sample + blend, crossfades, inertialization, layers) -> post-process (IK) ->
 *   local-to-model (and skinning).
 *
 * SKINNING
 *   Given the skeleton's inverse bind matrices (desc.inverse_binds, e.g. cb_pack_inverse_binds()
 *   of a pack), the crowd also writes each character's skinning matrices, model[j] x
 *   inverse_bind[j], what a vertex shader multiplies bind-pose vertices by
 *   (cb_crowd_skinning()), in their own layout (desc.skinning_layout: MAT4, or the 3x4 rows a
 *   shader's float3x4 reads: 25 % less to upload). They go to the crowd's own buffer, or per
 *   kind to a host buffer such as a mapped GPU buffer (cb_crowd_set_skinning_view()). An engine
 *   that only skins can drop the model matrices (desc.skinning_only): they are then computed
 *   in each thread's scratch and never stored (docs/performance.md, skinning, measures both).
 *
 * PARAMETERS
 *   The graph's parameters, by index (cb_crowd_find_param()); a blend-space graph's names are in
 *   crowdblend/graph.h (CB_GRAPH_BLEND_PARAM_PREFIX, ...).
 *   Non-finite values, one rule: a parameter that is NaN or infinite in its column or view is
 *   read as 0 at the start of the frame, before anything uses it, and counted once per
 *   character and frame (cb_crowd_stats.nonfinite_params). Every consumer then sees 0: the
 *   processors (a speed smoothing moves towards 0, a velocity blend reads a 0 component, a
 *   quadrant a 0 velocity: standing, it keeps its quadrant), blend spaces and direct blends (a
 *   0 coordinate or weight), state-machine conditions (compared as 0; a trigger is not set),
 *   clip speed parameters, layer weights, IK targets and weights, and the follow steps' inputs
 *   (orientation and stride warping, foot locking's root placement and weight;
 *   tests/test_crowd_traps.c runs every one of them against a twin that reads 0). The column
 *   itself keeps what the host wrote. Layer weights outside [0, 1] are clamped and counted
 *   (clamped_weights).
 *
 * DENSE ORDER
 *   A kind's characters live densely at [0, cb_crowd_count(kind)). cb_crowd_remove() moves the
 *   kind's last character into the hole (swap-remove), as ECS archetype tables do, so a host
 *   whose own columns mirror that move can hand them to the crowd as views and nothing is
 *   copied. Handles stay valid across moves; removed handles are refused
 *   (CB_ERR_STALE_HANDLE), forever (cb_character).
 *
 * DETERMINISM
 *   A character's outputs depend only on its own state, its parameters and dt: they are
 *   bit-identical whatever the thread count, the batch size and the update ranges.
 *
 * OWNERSHIP
 *   The crowd owns its characters' state, parameter columns, outputs, scratches and (desc.jobs
 *   NULL) its thread pool, and frees them all at cb_crowd_destroy. It borrows the rest, which
 *   must outlive it: the skeleton (not checked), the graphs (checked: a crowd counts as a user
 *   of each graph it runs, and cb_graph_destroy refuses with CB_ERR_IN_USE until every crowd
 *   running it is destroyed), desc.jobs, desc.matrices, parameter views (read at every update)
 *   and skinning views (written at every update, add and remove). desc.inverse_binds is
 *   copied at create (joint_count x 64 bytes), so a pack may be destroyed after it; the desc
 *   itself and the graphs array are read at create only. Pointers the crowd
 *   returns (columns, matrices, root motion, clip times, weights, events) stay valid until
 *   cb_crowd_destroy; what they hold changes at each update, add and remove.
 *
 * THREADS AND MEMORY
 *   Everything is allocated at create, but create writes nothing per slot: a character's
 *   graph state (236 bytes for a 17-clip blend space, with or without root motion),
 *   matrices and handle entries are first written when it is added, so with the C library's
 *   allocator their pages are only backed once used (docs/performance.md, creation cost).
 *   With the C library's allocator, an output of 32 MB or more (a kind's own matrices or
 *   skinning matrices: from 8,192 characters of 64 joints in 4x4) is aligned to 2 MB and, on
 *   Linux, advised as transparent huge pages (madvise MADV_HUGEPAGE; one TLB entry per 2 MB
 *   instead of per 4 KB), so where the kernel grants them it is backed in 2 MB steps as
 *   characters are added. From 32 MB on the C library maps the block on its own and unmaps it
 *   at cb_crowd_destroy, so the advice never outlives it. With
 *   desc.allocator's hooks the crowd asks them for the same sizes and alignments as without
 *   this rule and leaves their memory as it is: a host that wants huge pages gives them.
 *   Updates never allocate, lock or make system calls beyond waking the pool's sleeping
 *   workers. One cb_crowd_update at a time per crowd; cb_crowd_update_range calls on disjoint
 *   ranges may run concurrently, each with its own scratch. Adding, removing and changing
 *   views must not overlap an update.
 */
#ifndef CROWDBLEND_CROWD_H
#define CROWDBLEND_CROWD_H

#include "crowdblend/base.h"
#include "crowdblend/clip.h"
#include "crowdblend/graph.h"
#include "crowdblend/jobs.h"
#include "crowdblend/ltm.h"
#include "crowdblend/skeleton.h"
#include "crowdblend/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A crowd (opaque). */
typedef struct cb_crowd cb_crowd;

/** Per-thread working memory for cb_crowd_update_range (opaque). */
typedef struct cb_crowd_scratch cb_crowd_scratch;

/**
 * A character: its slot (the low 22 bits, which also say its kind) and that slot's generation
 * (the next 31 bits). id 0 is never valid, and ids stay below 2^53, so they pass through a JSON
 * number or a JavaScript double exactly.
 *
 * A removed handle is never accepted again. Each removal gives its slot the next generation,
 * and a slot whose generation is spent (after 2,147,483,647 characters have used it) is retired
 * rather than wrapped: its kind holds one character less from then on (cb_crowd_add returns
 * CB_ERR_CAPACITY earlier). (The id used to be 32 bits with a 10-bit generation, and a handle
 * came back after 1,023 add/remove cycles of its slot.)
 */
typedef struct cb_character {
    uint64_t id;
} cb_character;

/** Most characters a crowd can hold, over all kinds. */
#define CB_CROWD_MAX_CAPACITY 4194303u

/** Most graphs (kinds) one crowd runs. */
#define CB_CROWD_MAX_KINDS 16

/** How to build a crowd. Zero-initialise, then set what you need; zero means default. */
typedef struct cb_crowd_desc {
    uint32_t _start_canary;
    /** The skeleton every character uses. Required; must outlive the crowd. */
    const cb_skeleton *skeleton;
    /** Most characters at once, per kind, 1 to CB_CROWD_MAX_CAPACITY. Required. */
    uint32_t capacity;
    /** Graphs to run, one kind each, 1 to CB_CROWD_MAX_KINDS (they must use its skeleton; the
     *  crowd counts as their user until destroyed, see OWNERSHIP). Required. */
    const cb_graph *const *graphs;
    uint32_t graph_count;
    /** Thread pool to run cb_crowd_update on. NULL: the crowd creates its own. */
    cb_jobs *jobs;
    /** Threads of the crowd's own pool (when jobs is NULL). Default: online CPUs. */
    uint32_t thread_count;
    /** Characters per job. Default 64; rounded up to a multiple of cb_simd_width(). */
    uint32_t batch_size;
    /** Layout of the model-space matrices. Default CB_MATRIX_LAYOUT_MAT4. CB_MATRIX_LAYOUT_QTS
     *  (8 floats per joint: rotation, translation, uniform scale; crowdblend/ltm.h) is for
     *  hosts that skin with quaternions: not with inverse_binds. Foot locking (follow.h) takes
     *  any layout: it reads the foot_lock step's points, not the matrices. */
    cb_matrix_layout matrix_layout;
    /** Host buffer for kind 0's matrices: the character at dense index i writes joint_count
     *  matrices at (char *)matrices + i * matrix_stride_bytes. NULL: the crowd allocates. Other
     *  kinds always use crowd buffers. A kind's output of 32 MB or more (any matrix_layout), in
     *  16-byte aligned slots and without inverse_binds, is written with non-temporal stores:
     *  after the update the matrices are in memory, not in the cache (docs/performance.md).
     *  A stride that is a multiple of 64 bytes lets every line go out whole; otherwise the
     *  line where two slots meet may be a partial write (the same bits, a little slower). */
    float *matrices;
    /** Bytes between characters in `matrices`. Default: joint_count matrices, packed. */
    size_t matrix_stride_bytes;
    /** Keep each character's clip weights of the last frame (cb_crowd_weights()). */
    bool keep_weights;
    /** The skeleton's inverse bind matrices: joint_count column-major 4x4 (16 floats each,
     *  exactly joint_count x 16), finite, affine (bottom row 0 0 0 1 within 1e-6) and
     *  invertible; copied. Empty (default): no skinning matrices. */
    cb_float_cspan inverse_binds;
    /** Layout of the skinning matrices (needs inverse_binds): MAT4 (default) or MAT3X4. */
    cb_matrix_layout skinning_layout;
    /** Keep no model matrices, only skinning ones (needs inverse_binds; not with `matrices`):
     *  cb_crowd_matrices() then returns NULL. */
    bool skinning_only;
    /** Report the markers active clips cross (cb_crowd_events()). Off by default: looking for
     *  crossings costs a little per active clip with markers (docs/performance.md), and a
     *  crowd that only syncs on markers need not pay for it. */
    bool events;
    /** Leave root motion out: cb_crowd_root_motion() then gives zero deltas, and the frame
     *  does none of its work (about 740 instructions per character for three blended clips,
     *  docs/performance.md). For hosts that move their characters themselves. A kind whose
     *  graph plays no clip with root motion on its base path skips it anyway. */
    bool skip_root_motion;
    /** Time each stage (cb_crowd_query_stats()); costs a clock read per stage per batch. */
    bool profile;
    /** Allocation hooks for create. Default: the C library. */
    cb_allocator allocator;
    uint32_t _end_canary;
} cb_crowd_desc;

/** desc with every zero field that has a default replaced by it (desc may be NULL). */
CB_API cb_crowd_desc cb_crowd_query_desc(const cb_crowd_desc *desc);

/**
 * Creates a crowd with no characters.
 * @return CB_OK or: CB_ERR_NULL_ARGUMENT (desc, out, skeleton, graphs or a graph NULL),
 *   CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_INVALID_ARGUMENT (capacity 0 or too large, a
 *   layout, a batch size, a matrix stride too small, skinning_layout or skinning_only without
 *   inverse_binds, skinning_only with matrices, an inverse bind that is not affine),
 *   CB_ERR_TOO_FEW (no graph), CB_ERR_TOO_MANY (graphs), CB_ERR_MISMATCH (a graph built for
 *   another skeleton, inverse_binds not joint_count x 16 floats), CB_ERR_NOT_FINITE and
 *   CB_ERR_DEGENERATE (an inverse bind NaN or infinite, or singular), CB_ERR_OUT_OF_MEMORY,
 *   CB_ERR_THREAD. err names the field (and the joint).
 */
CB_API cb_result cb_crowd_create(const cb_crowd_desc *desc, cb_crowd **out, cb_error *err);

/** Destroys the crowd (and its own pool; not the graphs, which are the caller's: they may be
 *  destroyed once no crowd runs them). NULL does nothing. */
CB_API void cb_crowd_destroy(cb_crowd *crowd);

/** Number of kinds (graphs). */
CB_API uint32_t cb_crowd_kind_count(const cb_crowd *crowd);

/** The graph a kind runs. */
CB_API const cb_graph *cb_crowd_graph(const cb_crowd *crowd, uint32_t kind);

/* ----------------------------------------------------------------------------------------- */
/* Characters                                                                                */

/**
 * Adds a character to a kind at dense index cb_crowd_count(kind) - 1: parameters at their
 * defaults, state machines in their initial states, every clip and sync group at normalized
 * time `phase` (wrapped into [0, 1); random phases stagger a crowd). Until its first update its
 * matrices hold the skeleton's rest pose in model space (written by this call, also into a
 * host's desc.matrices), its root motion is zero and it has no events.
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_INVALID_ARGUMENT (kind), CB_ERR_NOT_FINITE (phase),
 *         CB_ERR_CAPACITY (the kind is full).
 */
CB_API cb_result cb_crowd_add(cb_crowd *crowd, uint32_t kind, float phase, cb_character *out);

/**
 * Removes a character: its kind's last character moves into its dense index (its state and its
 * parameters in the crowd's own columns with it; views are the host's to move).
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_STALE_HANDLE.
 */
CB_API cb_result cb_crowd_remove(cb_crowd *crowd, cb_character character);

/** Characters of a kind. */
CB_API uint32_t cb_crowd_count(const cb_crowd *crowd, uint32_t kind);

/** Most characters of each kind at once (the desc's capacity); 0 for NULL. Hosts size their
 *  per-character arrays (a follower, parameter views) from it. */
CB_API uint32_t cb_crowd_capacity(const cb_crowd *crowd);

/** The kind and dense index of a live character.
 *  @return CB_ERR_NULL_ARGUMENT, CB_ERR_STALE_HANDLE. */
CB_API cb_result cb_crowd_locate(const cb_crowd *crowd, cb_character character, uint32_t *kind,
                                 uint32_t *dense);

/** The character at a dense index of a kind (id 0 if out of range). */
CB_API cb_character cb_crowd_character_at(const cb_crowd *crowd, uint32_t kind, uint32_t dense);

/* ----------------------------------------------------------------------------------------- */
/* Parameters                                                                                */

/** Parameters of a kind (its graph's). */
CB_API uint32_t cb_crowd_param_count(const cb_crowd *crowd, uint32_t kind);

/** The index of a kind's parameter by name (CB_ERR_NOT_FOUND, CB_ERR_NULL_ARGUMENT,
 *  CB_ERR_INVALID_ARGUMENT for a bad kind). */
CB_API cb_result cb_crowd_find_param(const cb_crowd *crowd, uint32_t kind, const char *name,
                                     uint32_t *param);

/**
 * The crowd's own column of a parameter: capacity floats, character at dense index i at [i].
 * Write it between updates. NULL for an invalid kind or parameter. Entries from
 * cb_crowd_count(kind) on hold no character and are unspecified (create does not clear them:
 * memory follows use); cb_crowd_add writes the parameter's default into its character's.
 */
CB_API float *cb_crowd_param_column(cb_crowd *crowd, uint32_t kind, uint32_t param);

/**
 * Reads a parameter from host memory instead: character i's value is the float at
 * (const char *)base + i * stride_bytes. The memory must cover cb_crowd_count(kind) characters
 * at every update. base NULL goes back to the crowd's own column. Triggers and processor
 * outputs are written by the graph and cannot be views.
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_INVALID_ARGUMENT (kind, index, stride below
 *         sizeof(float), a parameter the graph writes), CB_ERR_MISALIGNED (base or stride not a
 *         multiple of 4).
 */
CB_API cb_result cb_crowd_set_param_view(cb_crowd *crowd, uint32_t kind, uint32_t param,
                                         const float *base, size_t stride_bytes);

/* ----------------------------------------------------------------------------------------- */
/* The frame                                                                                 */

/**
 * Advances every character by dt_s seconds and writes the outputs, on the crowd's pool.
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (dt), CB_ERR_INVALID_ARGUMENT (dt negative
 *         or above 3600 s); nothing changes then.
 */
CB_API cb_result cb_crowd_update(cb_crowd *crowd, float dt_s);

/**
 * Creates working memory for cb_crowd_update_range (one per thread that calls it).
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_crowd_scratch_create(cb_crowd *crowd, cb_crowd_scratch **out);

/** Frees scratch created for this crowd (its counters stay in the stats). NULL does nothing. */
CB_API void cb_crowd_scratch_destroy(cb_crowd *crowd, cb_crowd_scratch *scratch);

/**
 * The work of cb_crowd_update for the characters [first, first + count) of one kind only, on
 * the calling thread: for engines with their own scheduler. Ranges of one frame must not
 * overlap, and each character must be updated once per frame with the same dt to match
 * cb_crowd_update.
 * @return as cb_crowd_update, plus CB_ERR_NULL_ARGUMENT (scratch), CB_ERR_MISMATCH (scratch of
 *         another crowd) and CB_ERR_INVALID_ARGUMENT (kind, or the range goes past
 *         cb_crowd_count(kind)).
 */
CB_API cb_result cb_crowd_update_range(cb_crowd *crowd, cb_crowd_scratch *scratch, float dt_s,
                                       uint32_t kind, uint32_t first, uint32_t count);

/* ----------------------------------------------------------------------------------------- */
/* Outputs                                                                                   */

/** Joints per character (matrices per character). */
CB_API uint32_t cb_crowd_joint_count(const cb_crowd *crowd);

/** The layout of cb_crowd_matrices() (the desc's, defaults resolved), or _CB_MATRIX_LAYOUT_DEFAULT
 *  (0) when the crowd keeps no model matrices (desc.skinning_only) or crowd is NULL. Hosts that
 *  read the matrices (foot locking in follow.h) check it once. */
CB_API cb_matrix_layout cb_crowd_matrix_layout(const cb_crowd *crowd);

/** The model-space matrices of a character (layout per the desc), or NULL out of range or with
 *  desc.skinning_only: those of its last update, or the rest pose before its first one
 *  (cb_crowd_add). */
CB_API const float *cb_crowd_matrices(const cb_crowd *crowd, uint32_t kind, uint32_t dense);

/** The skinning matrices of a character, joint_count of desc.skinning_layout (model x inverse
 *  bind; SKINNING), in the kind's skinning view if it has one; NULL out of range or without
 *  desc.inverse_binds. Like the matrices: the last update's, or the rest pose's after add. */
CB_API const float *cb_crowd_skinning(const cb_crowd *crowd, uint32_t kind, uint32_t dense);

/**
 * Writes a kind's skinning matrices into host memory from now on: the character at dense index
 * i writes its joint_count matrices at (char *)base + i * stride_bytes, at every update, add
 * and remove (remove moves the last character's matrices into the hole, as in the crowd's own
 * buffer). The memory must cover cb_crowd_count(kind) characters, up to the kind's capacity as
 * characters are added, and must not overlap the kind's current view (the same base again
 * copies nothing). The kind's current skinning matrices are copied into it now, so it holds
 * valid matrices at once; base NULL copies them back and returns to the crowd's own buffer.
 * Must not overlap an update.
 * @return CB_ERR_NULL_ARGUMENT (crowd), CB_ERR_INVALID_ARGUMENT (kind, a crowd without
 *         inverse binds, stride below joint_count matrices), CB_ERR_MISALIGNED (base or stride
 *         not a multiple of 4). Nothing changes on failure.
 */
CB_API cb_result cb_crowd_set_skinning_view(cb_crowd *crowd, uint32_t kind, float *base,
                                            size_t stride_bytes);

/** Root motion of the last update per dense index of a kind: the blended displacement and
 *  heading change, in the character's frame at the start of that update. Never NULL for a
 *  valid kind: all zero where the kind has none (desc.skip_root_motion, or no clip of its
 *  graph's base path has root motion; such a kind skips the work per frame). */
CB_API const cb_root_delta *cb_crowd_root_motion(const cb_crowd *crowd, uint32_t kind);

/** Normalized time of a clip node per dense index of a kind (clip: the clip nodes in the order
 *  they were added to the graph). NULL for an invalid kind or clip. */
CB_API const float *cb_crowd_clip_times(const cb_crowd *crowd, uint32_t kind, uint32_t clip);

/**
 * Clip weights of the last update (desc.keep_weights): the influence of clip node c (as in
 * cb_crowd_clip_times) for dense index i at [c * *stride + i]. NULL without keep_weights.
 */
CB_API const float *cb_crowd_weights(const cb_crowd *crowd, uint32_t kind, size_t *stride);

/** A foot_lock leg of a character after the last update (crowdblend/graph.h
 *  cb_graph_foot_lock_desc; the leg as cb_graph_foot_lock_leg_at_joint() numbers it). */
typedef struct cb_crowd_foot_lock {
    /** Where the step holds the foot: in the world where its step reads the root's placement
     *  (root_position and root_yaw: cb_graph_foot_lock_leg_info.root_params), else in the last
     *  update's model space. Set when a plant locks and moved where the leg falls short (a
     *  reach failure); kept through the release and after it (0 before the character's first
     *  lock). Where the leg holds it at weight 1, the foot's end joint is shown there, within
     *  the IK's reach (crowdblend/graph.h, docs/graph.md "Foot locking"). */
    float point[3];
    bool held;   /**< locked in the last update (the step's `locked` output) */
    bool failed; /**< the leg fell short of the point during this plant (`failed`) */
} cb_crowd_foot_lock;

/**
 * Lock leg `leg` of a character (leg: below cb_graph_foot_lock_leg_count() of the kind's graph;
 * dense: its dense index in the kind), after the last update: a read of the step's own state
 * (no matrix is read), for a host that reports or draws the locks. It writes only *out, which
 * it leaves untouched on error.
 * @return CB_OK or: CB_ERR_NULL_ARGUMENT (crowd or out), CB_ERR_INVALID_ARGUMENT (kind, leg or
 *         dense out of range). err (optional) names the argument and its range.
 */
CB_API cb_result cb_crowd_query_foot_lock(const cb_crowd *crowd, uint32_t kind, uint32_t leg,
                                          uint32_t dense, cb_crowd_foot_lock *out, cb_error *err);

/** The events of the last update for a character (desc.events; else none): markers its active
 *  clips crossed, in clip order (at most 8 per update; more are dropped and counted). */
CB_API const cb_graph_event *cb_crowd_events(const cb_crowd *crowd, uint32_t kind, uint32_t dense,
                                             uint32_t *count);

/** A state machine's current state for a character (cb_graph_state_name()), or CB_INVALID_INDEX for
 *  an invalid request. */
CB_API uint32_t cb_crowd_state(const cb_crowd *crowd, uint32_t kind, uint32_t machine,
                               uint32_t dense);

/** The state a running transition leads to, or CB_INVALID_INDEX when there is none. */
CB_API uint32_t cb_crowd_next_state(const cb_crowd *crowd, uint32_t kind, uint32_t machine,
                                    uint32_t dense);

/**
 * A state machine's transition for one character, as it stands after the last update
 * (cb_crowd_query_transition). A transition starts in the update whose conditions fire it
 * (elapsed_s 0 after that update) and runs while elapsed_s < duration_s; the update where
 * elapsed_s reaches duration_s ends it, and the machine is then in `to`. A transition of
 * duration 0 switches states within one update and is never seen running.
 */
typedef struct cb_crowd_transition {
    /** A transition is running. When false: `from` is the current state, `to` is
     *  CB_INVALID_INDEX, the times and progress are 0 and blend is _CB_TRANSITION_BLEND_DEFAULT. */
    bool active;
    /** The state it leaves: cb_crowd_state(). (When an interrupting transition fires, the
     *  state the pose was closer to becomes the source: graph.h, interruption.) */
    uint32_t from;
    /** The state it leads to: cb_crowd_next_state(). */
    uint32_t to;
    /** Seconds since it fired: the sum of the dt of every update since, which stepped its
     *  machine (a machine under a branch of no weight, such as a layer at weight 0, is not
     *  stepped and holds still), summed in float as the runtime does; below duration_s. */
    float elapsed_s;
    /** Its blend time in seconds, as the graph's transition says (> 0). */
    float duration_s;
    /** elapsed_s / duration_s, in [0, 1). A crossfade shows the destination with weight
     *  smoothstep(progress) (3x^2 - 2x^3). */
    float progress;
    /** How it blends: as the graph's transition says, except that an interrupting transition
     *  inertializes (graph.h). */
    cb_transition_blend blend;
} cb_crowd_transition;

/**
 * A state machine's transition for a character (machine: cb_graph_state_machine_count() of the
 * kind's graph; dense: its dense index in the kind). A query between updates: it reads the
 * crowd's state and writes only *out, which it leaves untouched on error.
 * @return CB_OK or: CB_ERR_NULL_ARGUMENT (crowd or out), CB_ERR_INVALID_ARGUMENT (kind,
 *         machine or dense out of range). err (optional) names the argument and its range.
 */
CB_API cb_result cb_crowd_query_transition(const cb_crowd *crowd, uint32_t kind, uint32_t machine,
                                           uint32_t dense, cb_crowd_transition *out, cb_error *err);

/**
 * 64-bit FNV-1a hash of every output of the last update: all model matrices of all characters
 * (none with skinning_only), then their skinning matrices (with inverse binds), then their root
 * motion, kind by kind in dense order. Two runs that hash equal produced the same
 * bits.
 */
CB_API uint64_t cb_crowd_output_hash(const cb_crowd *crowd);

/** The stages of a frame, for timing. */
typedef enum cb_crowd_stage {
    CB_CROWD_STAGE_PARAMS,       /**< reading parameters, processors */
    CB_CROWD_STAGE_WEIGHTS,      /**< state machines and blend-space solvers */
    CB_CROWD_STAGE_TIME,         /**< clip times, sync, root motion, events */
    CB_CROWD_STAGE_SAMPLE_BLEND, /**< fused sample + blend, crossfades, layers */
    CB_CROWD_STAGE_POST_PROCESS, /**< IK steps on the local pose */
    CB_CROWD_STAGE_LTM,          /**< local-to-model (and skinning) into the outputs */
    _CB_CROWD_STAGE_COUNT
} cb_crowd_stage;

/** A stage's name: "parameters", "weights", "time & sync", "sample+blend", "post-process",
 *  "local-to-model". */
CB_API const char *cb_crowd_stage_name(cb_crowd_stage stage);

/** Counters since create or the last cb_crowd_reset_stats(). */
typedef struct cb_crowd_stats {
    uint64_t updates;            /**< cb_crowd_update calls */
    uint64_t characters_updated; /**< characters processed, by update or update_range */
    uint64_t nonfinite_params;   /**< parameters that were NaN or infinite */
    uint64_t clamped_weights;    /**< layer weights outside [0, 1] or NaN */
    uint64_t dropped_events;     /**< events beyond 8 per character per update */
    uint64_t refused_ik;         /**< IK steps skipped: a target beyond CB_IK_MAX_COORDINATE */
    /** Thread time per stage in nanoseconds, summed over the threads (desc.profile; else 0). */
    uint64_t stage_ns[_CB_CROWD_STAGE_COUNT];
} cb_crowd_stats;

/** Sums the counters of the crowd's own scratch and of every scratch created for it. */
CB_API cb_crowd_stats cb_crowd_query_stats(const cb_crowd *crowd);

/** Zeroes every counter. */
CB_API void cb_crowd_reset_stats(cb_crowd *crowd);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_CROWD_H */
