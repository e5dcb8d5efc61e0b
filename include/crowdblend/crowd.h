/**
 * @file crowdblend/crowd.h
 * @brief A crowd: thousands of characters sharing one skeleton and one animation setup, updated
 *        every frame on all cores. The whole frame of crowdblend in one call.
 *
 * STEP BY STEP
 *   1. Create the assets once: a skeleton and its clips (or cb_embedded_create()).
 *   2. cb_crowd_create() with a desc: the skeleton, a capacity, the blend space (a solver kind
 *      over clips; for 2D blend spaces the node positions default to the clips' root
 *      velocities, so a locomotion blend space needs no numbers), optional additive and masked
 *      upper-body layers.
 *   3. cb_crowd_add() characters; write their parameters into the crowd's columns
 *      (cb_crowd_param_column()) or point the crowd at your own columns
 *      (cb_crowd_set_param_view()), both indexed by dense index.
 *   4. Every frame: cb_crowd_update(crowd, dt) runs every character on the crowd's thread pool;
 *      or, from your own scheduler, cb_crowd_update_range() over sub-ranges, one
 *      cb_crowd_scratch per thread.
 *   5. Read the outputs: model-space matrices (cb_crowd_matrices(), or your own buffer given in
 *      the desc), the frame's root motion per character, optionally the blend weights.
 *
 * THE FRAME, per batch of characters (docs/architecture.md):
 *   parameters -> weights (the solver, SIMD over the batch's characters) -> time & sync (one
 *   normalized phase per character advancing at the weight-averaged clip duration, so blended
 *   walk and run cycles stay in step; root motion) -> sample + blend (fused, SIMD over joints)
 *   -> local-to-model into the output.
 *
 * PARAMETERS
 *   Column p of cb_crowd_param_count() columns: first the blend space's parameters
 *   (cb_solver_param_count() of them: for a 2D locomotion space 0 = velocity to the right and
 *   1 = velocity forward, in m/s in the character's frame), then the additive layer's weight,
 *   then the upper-body layer's weight (cb_crowd_param_index() gives these). A NaN or infinite
 *   blend parameter is evaluated as 0 (see crowdblend/solver.h); a layer weight that is NaN,
 *   infinite or outside [0, 1] is clamped (NaN counts as 0). Both are counted in the stats.
 *
 * DENSE ORDER
 *   Characters live densely at indices [0, cb_crowd_count()). cb_crowd_remove() moves the last
 *   character into the hole (swap-remove), as ECS archetype tables do, so a host whose own
 *   columns mirror that move can hand them to the crowd as views and nothing is copied.
 *   Handles stay valid across moves; removed handles are refused with CB_ERR_STALE_HANDLE.
 *
 * DETERMINISM
 *   A character's outputs depend only on its own state, its parameters and dt: they are
 *   bit-identical whatever the thread count, the batch size and the update ranges.
 *
 * THREADS AND MEMORY
 *   Everything is allocated at create. Updates never allocate, lock or make system calls beyond
 *   waking the pool's sleeping workers. One cb_crowd_update at a time per crowd;
 *   cb_crowd_update_range calls on disjoint ranges may run concurrently, each with its own
 *   scratch. Adding, removing and changing views must not overlap an update.
 */
#ifndef CROWDBLEND_CROWD_H
#define CROWDBLEND_CROWD_H

#include "crowdblend/base.h"
#include "crowdblend/clip.h"
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

/** A character: a slot index and a generation. id 0 is never valid. */
typedef struct cb_character {
    uint32_t id;
} cb_character;

/** Most characters a crowd can hold. */
#define CB_CROWD_MAX_CAPACITY 4194303u

/** The blend space that drives each character's base pose. */
typedef struct cb_crowd_blend_space {
    /** Solver kind and options; nodes and node_count are ignored (they come from clips and
     *  positions below). Zero: CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D with its defaults. */
    cb_solver_desc solver;
    /** One clip per node, all looping and built for the crowd's skeleton. Required. */
    const cb_clip *const *clips;
    /** Number of clips (nodes), 1 to CB_SOLVER_MAX_NODES. */
    uint32_t clip_count;
    /** Node positions, cb_solver_param_count() floats per node. NULL: for 1D kinds the clips'
     *  forward speed, for 2D kinds their (right, forward) root velocity in m/s
     *  (cb_clip_query_root_motion()); DIRECT ignores positions. */
    const float *positions;
} cb_crowd_blend_space;

/** An optional layer on top of the base pose. */
typedef struct cb_crowd_layer {
    /** The layer's clip, NULL for no layer. Looping; additive for the additive layer. */
    const cb_clip *clip;
    /** Per-joint weights (cb_skeleton_soa_joint_count() floats), or empty. */
    cb_float_cspan mask;
    /** When mask is empty: a joint whose subtree gets weight 1 (everything else 0), e.g. the
     *  first spine joint for an upper-body layer. NULL: every joint. */
    const char *mask_joint;
} cb_crowd_layer;

/** How to build a crowd. Zero-initialise, then set what you need; zero means default. */
typedef struct cb_crowd_desc {
    uint32_t _start_canary;
    /** The skeleton every character uses. Required; must outlive the crowd. */
    const cb_skeleton *skeleton;
    /** Most characters at once, 1 to CB_CROWD_MAX_CAPACITY. Required. */
    uint32_t capacity;
    /** The base-pose blend space. Required (its clips). */
    cb_crowd_blend_space blend;
    /** Optional additive layer (weight: parameter "additive weight"). */
    cb_crowd_layer additive;
    /** Optional override layer, usually masked to the upper body (weight: parameter
     *  "upper-body weight"). */
    cb_crowd_layer upper_body;
    /** Thread pool to run cb_crowd_update on. NULL: the crowd creates its own. */
    cb_jobs *jobs;
    /** Threads of the crowd's own pool (when jobs is NULL). Default: online CPUs. */
    uint32_t thread_count;
    /** Characters per job. Default 64; rounded up to a multiple of cb_simd_width(). */
    uint32_t batch_size;
    /** Layout of the model-space matrices. Default CB_MATRIX_LAYOUT_MAT4. */
    cb_matrix_layout matrix_layout;
    /** Host buffer for the matrices: character at dense index i writes joint_count matrices at
     *  (char *)matrices + i * matrix_stride_bytes. NULL: the crowd allocates its own. */
    float *matrices;
    /** Bytes between characters in `matrices`. Default: joint_count matrices, packed. */
    size_t matrix_stride_bytes;
    /** Keep each character's blend weights of the last frame (cb_crowd_weights()). */
    bool keep_weights;
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
 * @return CB_OK or: CB_ERR_NULL_ARGUMENT (desc, out, skeleton, clips or a clip NULL),
 *   CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_INVALID_ARGUMENT (capacity 0 or too large, a
 *   layout, a batch size, a non-looping clip, a matrix stride too small), CB_ERR_MISMATCH (a
 *   clip built for another skeleton, an additive clip where a normal one belongs or the
 *   reverse, a mask of the wrong length), CB_ERR_NOT_FOUND (mask_joint), the solver's errors
 *   (CB_ERR_DUPLICATE for two clips with one root velocity, ...), CB_ERR_OUT_OF_MEMORY,
 *   CB_ERR_THREAD. err names the field.
 */
CB_API cb_result cb_crowd_create(const cb_crowd_desc *desc, cb_crowd **out, cb_error *err);

/** Destroys the crowd (and its own pool). NULL does nothing. */
CB_API void cb_crowd_destroy(cb_crowd *crowd);

/* ----------------------------------------------------------------------------------------- */
/* Characters                                                                                */

/**
 * Adds a character at dense index cb_crowd_count() - 1, with every parameter 0 and every clip
 * phase at `phase` (normalized, wrapped into [0, 1); e.g. random phases stagger a crowd).
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (phase), CB_ERR_CAPACITY (full).
 */
CB_API cb_result cb_crowd_add(cb_crowd *crowd, float phase, cb_character *out);

/**
 * Removes a character: the last character moves into its dense index (and its parameters with
 * it in the crowd's own columns; views are the host's to move).
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_STALE_HANDLE.
 */
CB_API cb_result cb_crowd_remove(cb_crowd *crowd, cb_character character);

/** Characters in the crowd. */
CB_API uint32_t cb_crowd_count(const cb_crowd *crowd);

/** The dense index of a live character. @return CB_ERR_NULL_ARGUMENT, CB_ERR_STALE_HANDLE. */
CB_API cb_result cb_crowd_index_of(const cb_crowd *crowd, cb_character character,
                                   uint32_t *dense);

/** The character at a dense index (< cb_crowd_count()). */
CB_API cb_character cb_crowd_character_at(const cb_crowd *crowd, uint32_t dense);

/* ----------------------------------------------------------------------------------------- */
/* Parameters                                                                                */

/** Roles of parameter columns, for cb_crowd_param_index(). */
typedef enum cb_crowd_param {
    CB_CROWD_PARAM_BLEND,           /**< blend-space parameter `which` */
    CB_CROWD_PARAM_ADDITIVE_WEIGHT, /**< the additive layer's weight, [0, 1] */
    CB_CROWD_PARAM_UPPER_WEIGHT,    /**< the upper-body layer's weight, [0, 1] */
} cb_crowd_param;

/** Number of parameter columns: the blend space's parameters plus the two layer weights. */
CB_API uint32_t cb_crowd_param_count(const cb_crowd *crowd);

/** Column index of a parameter role (which: the blend parameter's index, else ignored).
 *  Returns cb_crowd_param_count() for an invalid request. */
CB_API uint32_t cb_crowd_param_index(const cb_crowd *crowd, cb_crowd_param role, uint32_t which);

/**
 * The crowd's own column of a parameter: capacity floats, character at dense index i at [i].
 * Write it between updates. Returns NULL for an invalid index.
 */
CB_API float *cb_crowd_param_column(cb_crowd *crowd, uint32_t param);

/**
 * Reads a parameter from host memory instead: character i's value is the float at
 * (const char *)base + i * stride_bytes. The memory must cover cb_crowd_count() characters at
 * every update. base NULL goes back to the crowd's own column.
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_INVALID_ARGUMENT (index, stride below sizeof(float)),
 *         CB_ERR_MISALIGNED (base or stride not a multiple of 4).
 */
CB_API cb_result cb_crowd_set_param_view(cb_crowd *crowd, uint32_t param, const float *base,
                                         size_t stride_bytes);

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

/** Frees scratch created for this crowd. NULL does nothing. */
CB_API void cb_crowd_scratch_destroy(cb_crowd *crowd, cb_crowd_scratch *scratch);

/**
 * The work of cb_crowd_update for the characters [first, first + count) only, on the calling
 * thread: for engines with their own scheduler. Ranges of one frame must not overlap, and each
 * character must be updated once per frame with the same dt to match cb_crowd_update.
 * @return as cb_crowd_update, plus CB_ERR_NULL_ARGUMENT (scratch) and CB_ERR_INVALID_ARGUMENT
 *         (the range goes past cb_crowd_count()).
 */
CB_API cb_result cb_crowd_update_range(cb_crowd *crowd, cb_crowd_scratch *scratch, float dt_s,
                                       uint32_t first, uint32_t count);

/* ----------------------------------------------------------------------------------------- */
/* Outputs                                                                                   */

/** Joints per character (matrices per character). */
CB_API size_t cb_crowd_joint_count(const cb_crowd *crowd);

/** The model-space matrices of the character at a dense index (layout per the desc), or NULL
 *  for an index past the count. */
CB_API const float *cb_crowd_matrices(const cb_crowd *crowd, uint32_t dense);

/** Root motion of the last update per dense index (cb_crowd_count() entries): the blended
 *  displacement and heading change in the character's frame at the start of that update. */
CB_API const cb_root_delta *cb_crowd_root_motion(const cb_crowd *crowd);

/** Normalized phase of the base blend per dense index (cb_crowd_count() entries). */
CB_API const float *cb_crowd_phases(const cb_crowd *crowd);

/**
 * Blend weights of the last update (desc.keep_weights): weight of node n for dense index i at
 * [n * *stride + i]. NULL without keep_weights.
 */
CB_API const float *cb_crowd_weights(const cb_crowd *crowd, size_t *stride);

/**
 * 64-bit FNV-1a hash of every output of the last update: all matrices of all characters, then
 * their root motion, in dense order. Two runs that hash equal produced the same bits.
 */
CB_API uint64_t cb_crowd_output_hash(const cb_crowd *crowd);

/** The stages of a frame, for timing. */
typedef enum cb_crowd_stage {
    CB_CROWD_STAGE_PARAMS,       /**< reading and checking parameters */
    CB_CROWD_STAGE_WEIGHTS,      /**< the blend-space solver */
    CB_CROWD_STAGE_TIME,         /**< phases, sync, root motion */
    CB_CROWD_STAGE_SAMPLE_BLEND, /**< fused sample + blend and layers */
    CB_CROWD_STAGE_LTM,          /**< local-to-model into the output */
    CB_CROWD_STAGE_COUNT
} cb_crowd_stage;

/** A stage's name: "parameters", "weights", "time & sync", "sample+blend", "local-to-model". */
CB_API const char *cb_crowd_stage_name(cb_crowd_stage stage);

/** Counters since create or the last cb_crowd_reset_stats(). */
typedef struct cb_crowd_stats {
    uint64_t updates;             /**< cb_crowd_update calls */
    uint64_t characters_updated;  /**< characters processed, by update or update_range */
    uint64_t nonfinite_params;    /**< blend parameters that were NaN or infinite */
    uint64_t clamped_weights;     /**< layer weights outside [0, 1] or NaN */
    /** Thread-seconds per stage, in ns, summed over the threads (desc.profile; else 0). */
    uint64_t stage_ns[CB_CROWD_STAGE_COUNT];
} cb_crowd_stats;

/** Sums the counters of the crowd's own scratch and of every scratch created for it. */
CB_API cb_crowd_stats cb_crowd_query_stats(const cb_crowd *crowd);

/** Zeroes every counter. */
CB_API void cb_crowd_reset_stats(cb_crowd *crowd);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_CROWD_H */
