/**
 * @file crowdblend/follow.h
 * @brief Characters that follow a simulation: an engine's steering or a crowd simulator owns
 *        each agent's position, and the character's root goes exactly there.
 *
 * STEP BY STEP
 *   1. Create a crowd (crowdblend/crowd.h), then a follower for one of its kinds:
 *      cb_follow_create() with the crowd and the kind (by default as many characters may
 *      follow as the crowd holds of a kind: cb_crowd_capacity()).
 *   2. Add and remove characters through the follower (cb_follow_add(), cb_follow_remove()):
 *      it mirrors the crowd's dense order (swap-remove), so its per-character state moves with
 *      the crowd's. Do not add or remove characters of that kind behind its back.
 *   3. Every frame, before cb_crowd_update(): cb_follow_update() with each character's world
 *      position and velocity, in dense order. The follower
 *        - places the character's root exactly at the position (cb_follow_roots()),
 *        - turns its heading along the velocity, or holds it while the agent stands,
 *        - writes the velocity in the character's own frame (to its left, +X, and forward, +Z,
 *          m/s: the axes of root motion, crowdblend/clip.h)
 *          into the kind's two velocity parameters, which the graph or blend space turns into
 *          a walk, a run, a strafe.
 *   4. After cb_crowd_update(), a joint's world matrix is the root's (cb_follow_root_matrix())
 *      times the joint's model-space matrix (cb_crowd_matrices()). The crowd's root motion is
 *      not applied: the simulation decides where the character is.
 *
 * FRAME: the crowd's world, +Y up (the skeleton's convention, crowdblend/skeleton.h); metres,
 * seconds. A character at yaw 0 faces +Z; a positive yaw turns +Z towards +X (as root-motion
 * yaw does, crowdblend/clip.h). A trajectory in a Z-up ground plane (x, y) maps to
 * (X, Y, Z) = (x, elevation, -y).
 *
 * HEADING: with s the horizontal speed, below stand_speed_mps the heading is held; at or above
 * follow_speed_mps it is exactly the direction of the velocity; in between it turns towards
 * that direction by the fraction (s - stand) / (follow - stand) of the remaining angle on each
 * update, so starting and stopping turn the character smoothly rather than at one frame.
 *
 * THREADS AND MEMORY: everything is allocated at create; updates allocate nothing and run on
 * the calling thread (about 30 ns per character, 40 with warping, 130 with foot locking,
 * about 40 more with orientation warping, about 10 more with stride warping: docs/performance.md).
 * A follower is used by one thread at a time, never during cb_crowd_update() of its crowd.
 */
#ifndef CROWDBLEND_FOLLOW_H
#define CROWDBLEND_FOLLOW_H

#include "crowdblend/base.h"
#include "crowdblend/crowd.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A follower (opaque). */
typedef struct cb_follow cb_follow;

/**
 * PLAYBACK-RATE WARPING: the clips of one gait (a walk ring of the blend space: every walk clip
 * at the same root speed, gait_speed_mps) play at a rate r so that the blended root speed is
 * the commanded speed s, the root staying on the trajectory:
 *   r = clamp(s / gait_speed_mps, min_rate, max_rate)
 * is written into rate_param (the graph binds it to its clips' speed: "speed_param"), and the
 * velocity parameters receive the velocity divided by r. Within the bounds the blend space is
 * thus asked for exactly gait_speed_mps: a pure gait, played at r. Below min_rate x gait the
 * blend space is asked for s / min_rate, less than the gait: it blends the gait (at min_rate)
 * with idle, linearly in speed, so the root speed still matches and, below half of
 * min_rate x gait, idle holds most of the weight (the low-speed rule, docs/trajectories.md).
 * Above max_rate x gait it blends towards the faster ring (a run) at max_rate. The idle clip
 * must not take the rate, and must not share the gait's sync group (the group would play the
 * gait at the weight-averaged duration: examples/graphs/locomotion_follow.json).
 * The graph can warp by itself instead: a blend space's rate_warp (crowdblend/graph.h
 * cb_graph_rate_warp) takes the rate from its clips' own root motion and this frame's shares,
 * with no gait speed to name, but reads the commanded speed from a parameter, which the
 * follower does not write: a host that uses it writes the speed itself.
 */
typedef struct cb_follow_warp {
    /** The float parameter receiving the rate. NULL: no warping. */
    const char *rate_param;
    /** The gait's root speed at rate 1, m/s (the embedded walk: 1.4). Required with a rate. */
    float gait_speed_mps;
    /** Bounds of the rate, 0 < min_rate <= 1 <= max_rate <= 4. Defaults 0.5 and 1.35. */
    float min_rate, max_rate;
} cb_follow_warp;

/** Default bounds of the playback rate. */
#define CB_FOLLOW_DEFAULT_MIN_RATE 0.5f
#define CB_FOLLOW_DEFAULT_MAX_RATE 1.35f

/** The two feet, left then right. */
enum { CB_FOLLOW_FEET = 2 };

/**
 * FOOT LOCKING: the graph's foot_lock step (crowdblend/graph.h cb_graph_foot_lock_desc,
 * docs/graph.md "Foot locking") locks the feet, from this frame's clip times and weights: while
 * the clips say a foot is planted (the rule of cb_follow_clip_feet_down), its joint stays where
 * it was in the world when the plant began, through the step's own two-bone IK, and a lock the
 * leg cannot hold moves to where the leg got (a reach failure). The follower drives it: every
 * update it writes each root's placement (world x, y, z and yaw, exactly cb_follow_roots()) into
 * the four float parameters root_param, which the step names as root_position and root_yaw, and
 * 1 into weight_param when named, the step's `weight` (the example graphs' "lock", default 0:
 * the step is off for a host that does not place the root, and the follower turns it on); and
 * it reads the step's outputs locked_param and failed_param (each leg's `locked` and `failed`,
 * left foot first) back at the next update, for cb_follow_feet() (lock: the world point the
 * step holds the foot to, read from the step's state where the lock began or last moved,
 * cb_crowd_query_foot_lock(); weight: 1 while locked, then falling over release_s, which
 * should be the step's) and the stats (locks and reach_failures count the outputs' rises). All
 * must be float parameters. Each foot's joint must end a leg of the graph's foot_lock steps
 * whose step reads the root from root_param (so that its points are in the world) and whose
 * own outputs are the foot's locked_param and failed_param. Any matrix layout (the model
 * matrices are not read).
 */
typedef struct cb_follow_lock {
    /** The root placement parameters (x, y, z, yaw). NULL (all, with the outputs below): no
     *  foot locking; required when any lock parameter is named. */
    const char *root_param[4];
    /** The step's weight parameter, which the follower sets to 1 every update. NULL: not
     *  written (a step without a weight parameter runs at weight 1). */
    const char *weight_param;
    /** The step's outputs, left foot first. Required with root_param. */
    const char *locked_param[CB_FOLLOW_FEET], *failed_param[CB_FOLLOW_FEET];
    /** The locked joint of each foot: the end joint of a leg of the graph's foot_lock steps
     *  (cb_graph_foot_lock_leg_at_joint()). Default "ball_l", "ball_r". */
    const char *joint[CB_FOLLOW_FEET];
    /** Seconds over which cb_follow_feet()'s weight of a released lock fades out, >= 0 (the
     *  step's release_s). Default 0.15. */
    float release_s;
} cb_follow_lock;

#define CB_FOLLOW_DEFAULT_RELEASE_S 0.15f

/**
 * ORIENTATION WARPING (Lyra's, after Unreal's Orientation Warping node): while the heading and
 * the velocity part (the heading lagging behind a turn under max_turn_rps, or moving sideways),
 * the lower body turns towards the velocity and the upper body keeps facing the heading. With
 * a the velocity's angle from the heading (a yaw: positive towards the character's left), the
 * follower
 * keeps per character a turn w that moves towards
 *   target = clamp(a, -max_angle_rad, max_angle_rad)   (0 while the agent stands)
 * by at most rate_rps x dt per update (a rate limit: engaging and releasing never jump), and
 * writes it into angle_param, which the graph's orientation_warp step reads (it turns the
 * pelvis by w and the spine back by w: docs/graph.md). The velocity parameters then receive
 * the velocity in the lower body's frame (the heading turned by w), so the blend space plays
 * the clip of the remaining angle a - w: the forward clip while |a| <= max_angle_rad once w
 * has settled, and the legs stride along the velocity. The root stays exactly on the
 * position and keeps the heading. Behind the character (|a| > 90 degrees) the lower body
 * turns by the limit towards the velocity's side and the blend space plays the rest.
 */
typedef struct cb_follow_orient {
    /** The float parameter receiving the lower body's turn w, radians. NULL: no orientation
     *  warping. */
    const char *angle_param;
    /** Largest turn, radians, in (0, pi/2]. Default CB_FOLLOW_DEFAULT_ORIENT_MAX (45 degrees:
     *  the diagonal walks' angle). Keep the graph step's limit_deg at or above it. */
    float max_angle_rad;
    /** Most the turn changes per second, rad/s, in (0, 1000]. Default
     *  CB_FOLLOW_DEFAULT_ORIENT_RATE. */
    float rate_rps;
} cb_follow_orient;

#define CB_FOLLOW_DEFAULT_ORIENT_MAX 0.785398163f
#define CB_FOLLOW_DEFAULT_ORIENT_RATE 3.0f

/**
 * STRIDE WARPING (after Unreal's Stride Warping node): beyond the playback rate's upper bound,
 * the strides lengthen instead. Where the commanded speed s exceeds max_rate x gait (the rate
 * is clamped at max_rate), the follower moves each character's stride scale k towards
 *   target = clamp(s / (gait_speed_mps x rate), 1, max_scale)
 * (1 where the rate is not clamped) by at most rate_per_s x dt per update (so noise in a
 * trajectory's speed does not shake the legs; a step of k would move the feet by the step
 * times their offset from the hip in one frame), writes it into scale_param, which the graph's
 * stride_warp step reads (it scales each leg's end-joint offset from the hip along the motion
 * direction by k: docs/graph.md), and divides the velocity parameters by rate x k instead of the
 * rate alone: the blend space is asked for the gait (the walk at max_rate with strides k times as
 * long covers s) up to max_rate x max_scale x gait, and blends towards the faster ring only beyond.
 * Below the bound k is exactly 1 (the step is skipped, bit for bit, once k has come back to 1); k
 * rises continuously from 1 as s crosses it. With the rate limit the root speed still matches: the
 * velocity is divided by the k written. Needs warp.
 *
 * With foot locking: the graph's stride_warp step runs before the foot_lock step.
 * While a foot is locked the lock decides where it is (a world point); the stride warp moves
 * where the swinging foot goes, so the point the lock takes at the plant is the stride-warped
 * landing, which the root then passes at the commanded speed.
 */
typedef struct cb_follow_stride {
    /** The float parameter receiving k. NULL: no stride warping. */
    const char *scale_param;
    /** Optional float parameters receiving the motion direction in the character's frame
     *  (the root's: to its left, +X, and forward, +Z, m/s), for a stride_warp step that does
     *  not read the velocity parameters (with orientation warping those are the lower
     *  body's). NULL: not written. */
    const char *direction_param[2];
    /** Largest k, in [1, 2]. Default CB_FOLLOW_DEFAULT_STRIDE_MAX (1.3). */
    float max_scale;
    /** Most k changes per second, in (0, 1000]. Default CB_FOLLOW_DEFAULT_STRIDE_RATE. */
    float rate_per_s;
} cb_follow_stride;

#define CB_FOLLOW_DEFAULT_STRIDE_MAX 1.3f
#define CB_FOLLOW_DEFAULT_STRIDE_RATE 0.5f

/** How to create a follower. Zero-initialise, then set what you need; zero means default. */
typedef struct cb_follow_desc {
    uint32_t _start_canary;
    /** The crowd whose characters follow. Required; must outlive the follower. */
    cb_crowd *crowd;
    /** The kind (graph) whose characters follow. Default 0. */
    uint32_t kind;
    /** Most characters that follow at once, 1 to CB_CROWD_MAX_CAPACITY. Default (0): the
     *  crowd's capacity, cb_crowd_capacity(crowd), which a kind never exceeds (with a NULL
     *  crowd it stays 0, and create fails on the crowd). A smaller value caps the follower:
     *  cb_follow_add() then fails with CB_ERR_CAPACITY before the crowd is full. */
    uint32_t capacity;
    /** The float parameter receiving the velocity to the character's left (+X), m/s. Default:
     *  "vx" when the kind's graph has it (the example graphs), else "blend_0" (a blend-space
     *  crowd's first axis). */
    const char *left_param;
    /** The float parameter receiving the velocity forward, m/s. Default: "vy", else
     *  "blend_1". */
    const char *forward_param;
    /** Horizontal speed below which the heading is held, m/s, >= 0. Default 0.15. */
    float stand_speed_mps;
    /** Speed from which the heading is exactly along the velocity, m/s, > stand_speed_mps.
     *  Default 2 x stand_speed_mps (0.3). */
    float follow_speed_mps;
    /** Most the heading turns per second, rad/s, >= 0 (applied after the heading rule, with
     *  the dt of cb_follow_update). Default 0: no limit. A limit keeps noisy or cornered
     *  trajectories from swinging the whole body within a frame; the velocity's part across
     *  the heading then goes into the left parameter (a sidestep), and the root stays exactly
     *  on the position. */
    float max_turn_rps;
    /** Playback-rate warping (below); off unless warp.rate_param is set. */
    cb_follow_warp warp;
    /** Foot locking (above); off unless lock.root_param is set. */
    cb_follow_lock lock;
    /** Orientation warping (above); off unless orient.angle_param is set. */
    cb_follow_orient orient;
    /** Stride warping (above); off unless stride.scale_param is set (needs warp). */
    cb_follow_stride stride;
    /** For the follower's memory. Default: the C library. */
    cb_allocator allocator;
    uint32_t _end_canary;
} cb_follow_desc;

/** Default stand speed, m/s: below a slow shuffle, above the sway of tracked standing people. */
#define CB_FOLLOW_DEFAULT_STAND_SPEED 0.15f

/** Whether graph has the velocity parameters a follower writes when cb_follow_desc.left_param
 *  and forward_param are NULL: "vx" or else "blend_0", and "vy" or else "blend_1" (the
 *  example graphs' and a blend-space graph's). A graph without them needs the names given. */
CB_API bool cb_follow_graph_takes_velocity(const cb_graph *graph);

/** desc with every zero field that has a default replaced by it (desc may be NULL): capacity
 *  becomes cb_crowd_capacity(desc->crowd) when the crowd is given. The parameter names are not
 *  resolved here (they depend on the crowd's graph). */
CB_API cb_follow_desc cb_follow_query_desc(const cb_follow_desc *desc);

/**
 * Creates a follower for desc->kind of desc->crowd, with no characters. The kind must have no
 * characters yet (they must all be added through the follower).
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (desc, out, crowd), CB_ERR_CANARY, CB_ERR_ALLOCATOR,
 *         CB_ERR_INVALID_ARGUMENT (kind, capacity, speeds, a kind that already has
 *         characters, the bounds of a feature), CB_ERR_NOT_FOUND (a velocity or lock
 *         parameter, a lock joint, or one that ends no foot_lock leg), CB_ERR_MISMATCH (a
 *         parameter that is not a float, or one parameter named for two of the values the
 *         follower writes: velocity, rate, stride scale and direction, angle, lock targets and
 *         weights or root placement; a foot's leg whose step reads its root from other
 *         parameters or whose outputs are not the foot's),
 * CB_ERR_OUT_OF_MEMORY. err names the field.
 */
CB_API cb_result cb_follow_create(const cb_follow_desc *desc, cb_follow **out, cb_error *err);

/** Destroys the follower (not the crowd or its characters). NULL does nothing. */
CB_API void cb_follow_destroy(cb_follow *follow);

/**
 * Adds a character to the crowd (cb_crowd_add() with this phase) facing heading_rad, placed at
 * the origin until the next update.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (phase or heading), CB_ERR_CAPACITY
 *         (the follower's or the crowd's), CB_ERR_MISMATCH (the kind's count changed behind
 *         the follower's back); nothing changes on failure.
 */
CB_API cb_result cb_follow_add(cb_follow *follow, float phase, float heading_rad,
                               cb_character *out);

/**
 * Removes a character from the crowd (cb_crowd_remove()); the kind's last character moves into
 * its dense index, in the crowd and in the follower.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_STALE_HANDLE, CB_ERR_INVALID_ARGUMENT (a
 *         character of another kind), CB_ERR_MISMATCH (the kind's count changed behind the
 *         follower's back).
 */
CB_API cb_result cb_follow_remove(cb_follow *follow, cb_character character);

/** Characters following (equal to cb_crowd_count() of the kind when used as documented). */
CB_API uint32_t cb_follow_count(const cb_follow *follow);

/**
 * Places every character and sets its velocity parameters, for the next cb_crowd_update().
 * Character i (dense index) reads 3 floats at (const char *)positions + i * stride_bytes and
 * 3 at (const char *)velocities + i * stride_bytes: world X, Y, Z (+Y up), metres and m/s.
 * With warping, it also writes the rate; with foot locking, it first reads the crowd's outputs
 * of the previous update (call it once per cb_crowd_update) and then writes the root placement.
 * @param stride_bytes  bytes between characters; 0 means 3 floats (packed)
 * @param dt_s  the time the coming cb_crowd_update advances, s, >= 0 (the lock's release)
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (positions or velocities with characters to place),
 *         CB_ERR_MISALIGNED (stride not a multiple of 4), CB_ERR_INVALID_ARGUMENT (stride
 *         below 12, a coordinate beyond 1e9 m or a speed beyond 1e4 m/s), CB_ERR_NOT_FINITE,
 *         CB_ERR_MISMATCH (the kind's count changed behind the follower's back). Nothing
 *         changes on failure.
 */
CB_API cb_result cb_follow_update(cb_follow *follow, const float *positions,
                                  const float *velocities, size_t stride_bytes, float dt_s);

/** Where a character's root is, after cb_follow_update(). */
typedef struct cb_follow_root {
    float position[3]; /**< exactly the position given, world */
    float yaw;         /**< heading about +Y, radians in (-pi, pi] */
    float rotation[4]; /**< the same as a quaternion (x, y, z, w) */
    float speed_mps;   /**< horizontal speed given */
    float left_mps;    /**< commanded velocity to the character's left, +X (with orientation
                            warping, to the lower body's left); the parameter written is this
                            divided by rate x stride when warping runs, this otherwise */
    float forward_mps; /**< commanded velocity forward (the lower body's), written as left_mps */
    float warp_rad;    /**< the lower body's turn from the heading (orientation warping) */
    float stride;      /**< the stride scale k written (stride warping; 1 otherwise) */
} cb_follow_root;

/** The roots of the characters, by dense index (cb_follow_count() of them). */
CB_API const cb_follow_root *cb_follow_roots(const cb_follow *follow);

/** A foot of a character, after cb_follow_update(). */
typedef struct cb_follow_foot {
    float lock[3]; /**< the locked world position (while weight > 0) */
    float weight;  /**< 1 while locked, falling over release_s after (the step's IK weight) */
    bool locked;   /**< held (weight 1), not releasing */
    bool failed;   /**< the leg fell short of the lock during this plant (reach failure) */
} cb_follow_foot;

/** The feet of the characters, CB_FOLLOW_FEET per dense index (NULL without locking). */
CB_API const cb_follow_foot *cb_follow_feet(const cb_follow *follow);

/** Counts since create. */
typedef struct cb_follow_stats {
    uint64_t locks;          /**< plants locked */
    uint64_t reach_failures; /**< plants during which the leg could not hold the lock */
    uint64_t rate_clamped;   /**< character-updates whose rate hit a bound */
    uint64_t stride_warped;  /**< character-updates with a stride scale above 1 */
} cb_follow_stats;

CB_API cb_follow_stats cb_follow_query_stats(const cb_follow *follow);

/** A root as a 4x4 column-major matrix (cglm mat4 order): rotation about +Y by yaw, then the
 *  translation. */
CB_API void cb_follow_root_matrix(const cb_follow_root *root, float out[16]);

/**
 * The heading rule on its own (what cb_follow_update does per character): the heading after
 * an update from `heading_rad` with horizontal velocity (vx, vz), for a desc's speeds (after
 * cb_follow_query_desc). Offline tools use it to see the heading a trajectory will get.
 */
CB_API float cb_follow_heading(float heading_rad, float vx, float vz, float stand_speed_mps,
                               float follow_speed_mps);

/* ----------------------------------------------------------------------------------------- */
/* Which feet the clips plant (used by foot locking and by the skate measurement)             */

/** Most plant and lift markers per foot in one clip. */
enum { CB_FOLLOW_MAX_FOOT_MARKERS = 32 };

/** A clip's "foot_plant_l/r" and "foot_lift_l/r" markers of each foot, in time order. */
typedef struct cb_follow_clip_feet {
    uint32_t count[CB_FOLLOW_FEET];
    float time[CB_FOLLOW_FEET][CB_FOLLOW_MAX_FOOT_MARKERS];
    bool plant[CB_FOLLOW_FEET][CB_FOLLOW_MAX_FOOT_MARKERS];
} cb_follow_clip_feet;

/** Reads a clip's foot markers (clip may be NULL: none). A foot without both a plant and a
 *  lift marker gets none. @return false when a foot has more than CB_FOLLOW_MAX_FOOT_MARKERS. */
CB_API bool cb_follow_clip_feet_init(cb_follow_clip_feet *feet, const cb_clip *clip);

/** Whether the clip holds foot (0 left, 1 right) down at normalized time t: the last of that
 *  foot's plant and lift markers at or before t, cyclically, is a plant. */
CB_API bool cb_follow_clip_feet_down(const cb_follow_clip_feet *feet, int foot, float t);

/** The planting weight from which a foot counts as planted. */
#define CB_FOLLOW_PLANT_WEIGHT 0.5f

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_FOLLOW_H */
