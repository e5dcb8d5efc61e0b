/**
 * @file crowdblend/graph.h
 * @brief Animation graphs: the Playable pipeline in data. A graph asset is built once (from C
 *        with the builder below, or from JSON), validated and compiled into a flat program that
 *        every character using it shares; a crowd runs many characters of many graphs.
 *
 * THE MODEL (docs/graph.md has the diagram)
 *   Parameters    float, int, bool and trigger values per character, named; looked up once by
 *                 name (cb_graph_find_param, or by 32-bit hash as Unity's StringToHash) and
 *                 then addressed by index. Triggers are consumed when a transition uses them.
 *   Processors    steps that derive parameters from parameters before anything else runs:
 *                 4-direction velocity blend, interp-to smoothing, movement quadrant with
 *                 hysteresis (crowdblend/params.h), in the order they were added.
 *   Pose nodes    a tree (a DAG: a node may have several parents) under one root:
 *     clip          one clip: speed (constant times an optional parameter), loop or clamp,
 *                   start offset, optional sync group;
 *     blend space   1D or 2D, any solver (crowdblend/solver.h), children are any nodes; the
 *                   children share a sync group (their own, unless one is named);
 *     direct        children weighted by parameters (clamped >= 0, normalized);
 *     layers        a base and layers on top: override or additive, each with a weight
 *                   parameter and an optional joint mask (a joint and its descendants);
 *     state machine states are nodes (state machines too); transitions with conditions on
 *                   parameters, exit time, duration, interruption rules, "any state"; blended
 *                   by crossfade (both states evaluated, mixed with slerp) or inertialization
 *                   (only the destination evaluated, the source's offset decays to zero).
 *   Sync groups   clips of one group keep in step: the heaviest clip leads, the others follow
 *                 it by their markers (foot plants), or by normalized time without markers;
 *                 the group advances at its clips' weight-averaged duration.
 *   Events        markers crossed by active clips are reported per character per frame.
 *   Post-process  after blending, in order: two-bone IK and aim IK (crowdblend/ik.h) on the
 *                 local pose, targets from parameters (model space), each with an optional
 *                 weight parameter; a step of weight 0 costs nothing; orientation and
 *                 stride warping; foot locking (state per character). Level of detail: a
 *                 step may run only up to a LOD that a parameter gives per character
 *                 (cb_graph_set_lod_param, cb_graph_lod_limit).
 *
 * OWNERSHIP
 *   Build descs and the builder copy what they are given (names, masks, solver nodes); nothing
 *   passed in is kept except the skeleton and the clips, which the graph borrows: they must
 *   outlive it (not checked). A built graph is immutable and may be shared by any number of
 *   crowds and threads; it owns its solvers and tables. Crowds count themselves as its users,
 *   and cb_graph_destroy refuses (CB_ERR_IN_USE) while one still runs it.
 */
#ifndef CROWDBLEND_GRAPH_H
#define CROWDBLEND_GRAPH_H

#include "crowdblend/base.h"
#include "crowdblend/clip.h"
#include "crowdblend/ik.h"
#include "crowdblend/skeleton.h"
#include "crowdblend/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A compiled graph asset (opaque, immutable). */
typedef struct cb_graph cb_graph;

/** A graph under construction (opaque). */
typedef struct cb_graph_builder cb_graph_builder;

/**
 * A node of a builder, returned by the cb_graph_add_* functions: a typed id, so that it cannot
 * be mixed up with the index of a node in a built graph (a plain uint32_t: the builder
 * renumbers the nodes it keeps, see cb_graph_node_count). id 0 is no node, so a zeroed field
 * names none.
 */
typedef struct cb_graph_node {
    uint32_t id;
} cb_graph_node;

/** Longest name of a parameter, node, state, sync group or layer: 63 bytes. */
#define CB_GRAPH_NAME_MAX 63

/** Most parameters, nodes, children of one node, states of one machine, transitions of one
 *  machine, conditions of one transition, layers, processors and IK steps of a graph (an aim
 *  step's chain holds at most CB_IK_AIM_MAX_JOINTS joints, crowdblend/ik.h). */
#define CB_GRAPH_MAX_PARAMS 256
#define CB_GRAPH_MAX_NODES 1024
#define CB_GRAPH_MAX_CHILDREN 128
#define CB_GRAPH_MAX_STATES 64
#define CB_GRAPH_MAX_TRANSITIONS 256
#define CB_GRAPH_MAX_CONDITIONS 8
#define CB_GRAPH_MAX_LAYERS 8
#define CB_GRAPH_MAX_IK 8

/** Defaults of the descs below (a zero field takes its default; cb_graph_query_*_desc() shows
 *  the resolved desc). */
#define CB_GRAPH_DEFAULT_NAME "graph"             /**< builder and JSON source name */
#define CB_GRAPH_DEFAULT_MIN_SQ_LEN 1e-4f         /**< velocity blend: (1 cm/s)^2 */
#define CB_GRAPH_DEFAULT_DEAD_ZONE_RAD 0.1745329f /**< quadrant: 10 degrees */
#define CB_GRAPH_DEFAULT_MIN_SPEED 0.1f           /**< quadrant: m/s */
#define CB_GRAPH_DEFAULT_SPEED 1.0f               /**< clip and state playback rate */

/* ----------------------------------------------------------------------------------------- */
/* Parameters                                                                                */

/** Types of parameters. All are stored as floats per character (ints exactly up to 2^24,
 *  bools and triggers as 0 or 1). */
typedef enum cb_param_type {
    _CB_PARAM_TYPE_DEFAULT = 0, /**< CB_PARAM_FLOAT */
    CB_PARAM_FLOAT,
    CB_PARAM_INT,
    CB_PARAM_BOOL,
    CB_PARAM_TRIGGER, /**< a bool that a transition resets to 0 when it fires on it */
    _CB_PARAM_TYPE_COUNT
} cb_param_type;

/* Graphs store and look names up by cb_name_hash (crowdblend/base.h). */

/* ----------------------------------------------------------------------------------------- */
/* The builder                                                                               */

/** What a builder resolves names against. */
typedef struct cb_graph_builder_desc {
    uint32_t _start_canary;
    /** The skeleton every clip and mask uses. Required; must outlive the graph. */
    const cb_skeleton *skeleton;
    /** The clips that clip nodes may name (by cb_clip_name()); they must outlive the graph. */
    const cb_clip *const *clips;
    uint32_t clip_count;
    /** Name of the graph, for messages. Default CB_GRAPH_DEFAULT_NAME. */
    const char *name;
    cb_allocator allocator;
    uint32_t _end_canary;
} cb_graph_builder_desc;

/**
 * Starts a graph.
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_MISMATCH (a clip built
 *         for another skeleton), CB_ERR_DUPLICATE (two clips with one name),
 *         CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_graph_builder_create(const cb_graph_builder_desc *desc, cb_graph_builder **out,
                                         cb_error *err);

/** Frees a builder (not the graphs it built). NULL does nothing. */
CB_API void cb_graph_builder_destroy(cb_graph_builder *builder);

/**
 * Declares a parameter. Names are unique; two names with one hash are refused (their hashes
 * would make lookups ambiguous). An int's default is a whole number of at most 2^24 in
 * magnitude; a bool's or trigger's is 0 or 1.
 * @return CB_ERR_INVALID_ARGUMENT (bad name, type or default), CB_ERR_NOT_FINITE (default),
 *         CB_ERR_DUPLICATE (name, or hash collision), CB_ERR_TOO_MANY.
 */
CB_API cb_result cb_graph_add_param(cb_graph_builder *b, const char *name, cb_param_type type,
                                    float default_value, cb_error *err);

/** Processor: splits the velocity (x forward, y left, z up; z may be NULL) into four share
 *  parameters (see cb_params_velocity_blend_4dir). Every name must be a declared float. */
typedef struct cb_graph_velocity_blend_desc {
    const char *x, *y, *z;
    const char *forward, *backward, *left, *right;
    /** Optional float parameter that receives the speed, sqrt(x^2 + y^2 + z^2) (for
     *  conditions such as "moving"). NULL: none. */
    const char *speed;
    /** Squared speed below which all four are 0. Default CB_GRAPH_DEFAULT_MIN_SQ_LEN. */
    float min_sq_len;
} cb_graph_velocity_blend_desc;

/** Processor: output moves towards input at `speed` per second (cb_params_interp_to); the
 *  output keeps its value from frame to frame. Both must be declared floats, and differ. */
typedef struct cb_graph_interp_to_desc {
    const char *input, *output;
    /** Approach rate in 1/s; <= 0 snaps. */
    float speed;
} cb_graph_interp_to_desc;

/** Processor: the movement quadrant of the velocity (x forward, y left) into an int
 *  parameter: 0 none (standing), 1 forward, 2 right, 3 backward, 4 left (cb_quadrant), with a
 *  hysteresis band (cb_params_quadrant). Below min_speed the quadrant keeps its value. */
typedef struct cb_graph_quadrant_desc {
    const char *x, *y;
    const char *output; /**< an int parameter */
    /** Hysteresis half-band in radians, [0, pi/8]. Default CB_GRAPH_DEFAULT_DEAD_ZONE_RAD. */
    float dead_zone_rad;
    /** Speed below which the quadrant is held. Default CB_GRAPH_DEFAULT_MIN_SPEED. */
    float min_speed;
} cb_graph_quadrant_desc;

/** @return CB_ERR_NOT_FOUND (a parameter), CB_ERR_MISMATCH (a parameter of the wrong type),
 *          CB_ERR_INVALID_ARGUMENT, CB_ERR_TOO_MANY. */
CB_API cb_result cb_graph_add_velocity_blend(cb_graph_builder *b,
                                             const cb_graph_velocity_blend_desc *desc,
                                             cb_error *err);
CB_API cb_result cb_graph_add_interp_to(cb_graph_builder *b, const cb_graph_interp_to_desc *desc,
                                        cb_error *err);
CB_API cb_result cb_graph_add_quadrant(cb_graph_builder *b, const cb_graph_quadrant_desc *desc,
                                       cb_error *err);

/** A clip node. */
typedef struct cb_graph_clip_desc {
    /** Node name, unique among nodes, for messages and lookups. Optional. */
    const char *name;
    /** The clip's name (cb_clip_name) among the builder's clips. Required. */
    const char *clip;
    /** Playback rate multiplier. Default CB_GRAPH_DEFAULT_SPEED (0 means the default; use a
     *  speed parameter to stop a clip). */
    float speed;
    /** Optional float parameter that multiplies speed every frame (e.g. a stride scale). */
    const char *speed_param;
    /** Play once and hold the last frame, even if the clip loops. Default false: loop if the
     *  clip loops. */
    bool clamp;
    /** Normalized time at which the clip starts when its node becomes active, [0, 1). */
    float start_offset;
    /** Sync group (created on first use). NULL: the group of the nearest blend space above
     *  it, or none (the clip keeps its own time). */
    const char *sync_group;
} cb_graph_clip_desc;

/** Bounds of a blend space's playback-rate warp when left 0, and the largest max_rate. */
#define CB_GRAPH_DEFAULT_WARP_MIN_RATE 0.5f
#define CB_GRAPH_DEFAULT_WARP_MAX_RATE 1.35f
#define CB_GRAPH_WARP_RATE_LIMIT 4.0f

/** Where a blend space's playback-rate warp takes each clip's root speed from. */
typedef enum cb_warp_speed_from {
    _CB_WARP_SPEED_FROM_DEFAULT = 0, /**< CB_WARP_SPEED_FROM_ROOT_MOTION */
    /** Each clip's own root displacement per cycle (clips with root motion). */
    CB_WARP_SPEED_FROM_ROOT_MOTION,
    /** The child's blend-space position is the root velocity (m/s) its clip stands for: the
     *  blend space's parameters are a velocity, and the clips play in place. */
    CB_WARP_SPEED_FROM_POSITIONS,
    /** cb_graph_rate_warp.speeds: one root speed (m/s, >= 0) declared per child, the clips
     *  playing in place. */
    CB_WARP_SPEED_FROM_SPEEDS,
    _CB_WARP_SPEED_FROM_COUNT
} cb_warp_speed_from;

/**
 * PLAYBACK-RATE WARPING of a blend space (off while speed_param is NULL): every frame its
 * clips play at
 *   r = clamp(speed / v, min_rate, max_rate)
 * where speed is the float parameter speed_param (the commanded root speed, m/s) and v the
 * root speed the blend's clips give at rate 1 with this frame's shares w_k: they keep in step
 * in one sync group, which advances one cycle per weight-averaged duration, so
 *   v = |sum_k w_k D_k| / (sum_k w_k T_k)
 * with D_k clip k's horizontal root displacement per cycle (a vector: the crowd blends root
 * motion as vectors, so clips moving different ways partly cancel) and T_k its cycle length
 * at its own speed (duration / |speed|), both known at build; a clip in a sync group of its
 * own adds its velocity w_k D_k / T_k to the vector instead. The group's advance, and
 * so the root speed, scales by r: within the bounds the root moves at the commanded speed.
 * Where no clip with root motion has weight (v = 0: idle alone) r is 1, the clips' own rate.
 * r replaces the rate that reaches the blend space (a state's speed above it does not apply to
 * its clips: the warp's goal is an absolute root speed). Requirements, checked at add: every
 * child is a clip node without speed_param, in the blend space's sync group or in a group of
 * its own (two children sharing another group are refused), and some child's clip has root
 * motion.
 *
 * CLIPS THAT PLAY IN PLACE (imported packs: no root motion) take D_k = u_k T_k from a root
 * velocity u_k the graph states, by speed_from: CB_WARP_SPEED_FROM_POSITIONS, u_k the child's
 * blend-space position (1D: along one axis, so a negative position walks the other way; 2D: the
 * vector); CB_WARP_SPEED_FROM_SPEEDS, u_k = speeds[k] along one direction (scalars: they never
 * cancel; a directional blend space wants POSITIONS). v is then the formula above: where the
 * clips' strides are u_k T_k, the blended stride per weight-averaged cycle. Requirements of
 * both: no child's clip has root motion (the root would move by it, not by u_k), and some u_k
 * is not zero; speeds (SPEEDS only; NULL otherwise) holds child_count finite speeds >= 0.
 * docs/graph.md "Playback-rate warping".
 */
typedef struct cb_graph_rate_warp {
    /** Float parameter: the commanded root speed in m/s. NULL: no warping. */
    const char *speed_param;
    /** Bounds of r, 0 < min_rate <= 1 <= max_rate <= CB_GRAPH_WARP_RATE_LIMIT; 0: defaults
     *  CB_GRAPH_DEFAULT_WARP_MIN_RATE and CB_GRAPH_DEFAULT_WARP_MAX_RATE. */
    float min_rate, max_rate;
    /** Where each clip's root speed comes from. Default CB_WARP_SPEED_FROM_ROOT_MOTION. */
    cb_warp_speed_from speed_from;
    /** CB_WARP_SPEED_FROM_SPEEDS: the root speed of each child, m/s (child_count of them, in
     *  the order of the children). NULL for the other sources. */
    const float *speeds;
} cb_graph_rate_warp;

/** A blend space: children placed in a 1D or 2D parameter space, weighted by a solver. */
typedef struct cb_graph_blend_space_desc {
    const char *name;
    /** Solver kind and options; nodes/node_count are ignored (they come from positions). */
    cb_solver_desc solver;
    /** Parameter names: x (and y for 2D kinds; DIRECT takes one per child instead). */
    const char *params[2];
    /** The children, any nodes, and their positions (param count floats per child). */
    const cb_graph_node *children;
    const float *positions;
    uint32_t child_count;
    /** Sync group of the clips below, by name. NULL: a group of its own. */
    const char *sync_group;
    /** Playback-rate warping of its clips (above); zero: off. */
    cb_graph_rate_warp rate_warp;
} cb_graph_blend_space_desc;

/** A direct blend: children weighted by their own parameters (clamped >= 0, normalized to
 *  sum 1; all zero gives all zero, and the rest pose shows through). */
typedef struct cb_graph_direct_desc {
    const char *name;
    const cb_graph_node *children;
    const char *const *weights; /**< one float parameter per child */
    uint32_t child_count;
} cb_graph_direct_desc;

/** How a layer combines with what is below it. */
typedef enum cb_layer_mode {
    _CB_LAYER_MODE_DEFAULT = 0, /**< CB_LAYER_OVERRIDE */
    CB_LAYER_OVERRIDE,          /**< pose = slerp(pose, layer, weight * mask) */
    CB_LAYER_ADDITIVE,          /**< pose = pose + weight * mask * layer (additive clips) */
    _CB_LAYER_MODE_COUNT
} cb_layer_mode;

/** One layer of a layers node. */
typedef struct cb_graph_layer {
    /** The layer's input: any node; for an additive layer, a clip node with an additive
     *  clip. */
    cb_graph_node node;
    cb_layer_mode mode;
    /** Float parameter for the weight, [0, 1] (clamped). NULL: weight 1. */
    const char *weight;
    /** Joint whose subtree the layer affects (weight 1, the rest 0). NULL: every joint, unless
     *  mask is given. */
    const char *mask_joint;
    /** Explicit per-joint weights in [0, 1] (at least the skeleton's joint count), used when
     *  mask_joint is NULL. Empty: every joint. */
    cb_float_cspan mask;
} cb_graph_layer;

/** A base node with layers applied in order. */
typedef struct cb_graph_layers_desc {
    const char *name;
    cb_graph_node base;
    const cb_graph_layer *layers;
    uint32_t layer_count;
} cb_graph_layers_desc;

/** Comparison of a condition. */
typedef enum cb_compare {
    _CB_COMPARE_DEFAULT = 0, /**< CB_COMPARE_TRUE */
    CB_COMPARE_TRUE,         /**< bool or trigger is set (value ignored) */
    CB_COMPARE_FALSE,        /**< bool is not set */
    CB_COMPARE_GREATER,
    CB_COMPARE_LESS,
    CB_COMPARE_EQUAL, /**< ints: equal; floats: exactly equal */
    CB_COMPARE_NOT_EQUAL,
    _CB_COMPARE_COUNT
} cb_compare;

/** A condition on a parameter. Floats take GREATER/LESS; ints any comparison; bools TRUE and
 *  FALSE; triggers TRUE only. */
typedef struct cb_graph_condition {
    const char *param;
    cb_compare op;
    float value;
} cb_graph_condition;

/** How a transition blends source into destination. */
typedef enum cb_transition_blend {
    _CB_TRANSITION_BLEND_DEFAULT = 0, /**< CB_TRANSITION_CROSSFADE */
    CB_TRANSITION_CROSSFADE,          /**< both evaluated; slerp by progress (smoothstep) */
    CB_TRANSITION_INERTIALIZE,        /**< destination only; the source's offset decays */
    _CB_TRANSITION_BLEND_COUNT
} cb_transition_blend;

/** Which transitions may interrupt a running one (Unity's interruption source). */
typedef enum cb_interruption {
    _CB_INTERRUPTION_DEFAULT = 0, /**< CB_INTERRUPTION_NONE */
    CB_INTERRUPTION_NONE,         /**< the transition runs to its end */
    CB_INTERRUPTION_SOURCE,       /**< transitions out of the source state may interrupt */
    CB_INTERRUPTION_DESTINATION,  /**< transitions out of the destination state may */
    _CB_INTERRUPTION_COUNT
} cb_interruption;

/** A transition of a state machine. Transitions are tested in order each frame: any-state
 *  transitions first, then those of the current state; the first that passes fires. */
typedef struct cb_graph_transition {
    /** Source state name; NULL: any state (any-state transition). */
    const char *from;
    /** Destination state name. Required. */
    const char *to;
    /** All must hold (none: only exit_time decides, and one of the two is required). */
    const cb_graph_condition *conditions;
    uint32_t condition_count;
    /** Fires only once the source's normalized time reached this (>= 0); < 0 (set
     *  has_exit_time false): no exit time. */
    bool has_exit_time;
    float exit_time;
    /** Blend time in seconds, >= 0. */
    float duration_s;
    cb_transition_blend blend;
    cb_interruption interruption;
    /** Any-state transitions: may fire while already in the destination. Default false. */
    bool to_self;
} cb_graph_transition;

/** A state: a node played while the machine is in it. */
typedef struct cb_graph_state {
    const char *name;
    cb_graph_node node;
    /** Playback rate of the state's clips. Default CB_GRAPH_DEFAULT_SPEED (0 means the
     *  default). */
    float speed;
} cb_graph_state;

/** A state machine node. */
typedef struct cb_graph_state_machine_desc {
    const char *name;
    const cb_graph_state *states;
    uint32_t state_count;
    /** Initial state name. NULL: the first state. */
    const char *initial;
    const cb_graph_transition *transitions;
    uint32_t transition_count;
} cb_graph_state_machine_desc;

/**
 * Adds a node; children must be nodes added before (so a builder cannot make a cycle).
 * @param out  receives the node's id
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_INVALID_ARGUMENT (a bad value, a child id that does not
 *         exist, an empty blend space), CB_ERR_NOT_FOUND (a clip, parameter, state or joint
 *         name), CB_ERR_MISMATCH (a parameter of the wrong type, an additive clip where a normal
 *         one belongs or the reverse, positions that do not fit the solver), CB_ERR_DUPLICATE (a
 *         node or state name), CB_ERR_SPAN_TOO_SHORT (a layer mask shorter than the skeleton),
 *         CB_ERR_TOO_MANY, and the solver's create errors for a blend space. err names the node
 *         and the field.
 */
CB_API cb_result cb_graph_add_clip(cb_graph_builder *b, const cb_graph_clip_desc *desc,
                                   cb_graph_node *out, cb_error *err);
/** The warp with its defaults filled in (graph.h's query convention): the bounds, and
 *  speed_from CB_WARP_SPEED_FROM_ROOT_MOTION for _CB_WARP_SPEED_FROM_DEFAULT. */
CB_API cb_graph_rate_warp cb_graph_query_rate_warp(const cb_graph_rate_warp *warp);
CB_API cb_result cb_graph_add_blend_space(cb_graph_builder *b,
                                          const cb_graph_blend_space_desc *desc, cb_graph_node *out,
                                          cb_error *err);
CB_API cb_result cb_graph_add_direct(cb_graph_builder *b, const cb_graph_direct_desc *desc,
                                     cb_graph_node *out, cb_error *err);
CB_API cb_result cb_graph_add_layers(cb_graph_builder *b, const cb_graph_layers_desc *desc,
                                     cb_graph_node *out, cb_error *err);
CB_API cb_result cb_graph_add_state_machine(cb_graph_builder *b,
                                            const cb_graph_state_machine_desc *desc,
                                            cb_graph_node *out, cb_error *err);

/**
 * Level of detail of the post-process (docs/graph.md "Level of detail"). A graph may name one
 * numeric parameter that carries each character's LOD (0: full detail, higher: coarser; the
 * host writes it, e.g. from the distance to the camera). A step with a limit runs only for
 * characters whose LOD is at most its max_lod; above it the step is exactly as at weight 0
 * (skipped, the pose keeps its bits; a foot lock releases at once and keeps releasing, as its
 * weight 0 does). A LOD that is NaN, infinite (read as 0, crowd.h) or negative counts as 0:
 * full detail. Steps without a limit run at every LOD, and a graph without the parameter runs
 * every step for every character. A second call replaces the first; a refused call leaves the
 * graph's LOD parameter as it was.
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FOUND (no such parameter), CB_ERR_MISMATCH (a bool
 *         or trigger), CB_ERR_INVALID_ARGUMENT (already built).
 */
CB_API cb_result cb_graph_set_lod_param(cb_graph_builder *b, const char *name, cb_error *err);

/** A post-process step's level-of-detail limit. Zeroed: none, the step runs at every LOD. */
typedef struct cb_graph_lod_limit {
    /** Limit the step to max_lod (the graph then needs its LOD parameter,
     *  cb_graph_set_lod_param: cb_graph_build refuses a limit without one, CB_ERR_NOT_FOUND). */
    bool on;
    /** The highest LOD the step runs at, finite and >= 0 (0: full detail only). Must stay 0
     *  while `on` is false. */
    float max_lod;
} cb_graph_lod_limit;

/** Post-process: two-bone IK (start, mid, end joints: e.g. shoulder, elbow, wrist). */
typedef struct cb_graph_two_bone_ik_desc {
    const char *start_joint, *mid_joint, *end_joint;
    /** Float parameters of the target position, in model space (metres). Required. */
    const char *target[3];
    /** Float parameters of the pole: the model-space direction the mid joint bends towards
     *  (a knee or elbow points at it; any length). NULL: keep the current bending plane. */
    const char *pole[3];
    /** Float parameter of the weight [0, 1] (clamped; 0 skips the step). NULL: 1. */
    const char *weight;
    /** The mid joint's hinge axis in its own space (e.g. (1, 0, 0) for the embedded humanoid's
     *  knees, (-1, 0, 0) for its elbows; see cb_ik_two_bone_job). Default (zero): the normal
     *  of the plane the chain bends in now. */
    float mid_axis[3];
    /** Fraction of the chain's length beyond which the reach softens, (0, 1]. Default
     *  CB_IK_DEFAULT_SOFTEN; 1 disables softening. */
    float soften;
    /** Level of detail: the highest LOD the step runs at (cb_graph_lod_limit). Default: none. */
    cb_graph_lod_limit lod;
} cb_graph_two_bone_ik_desc;

/** Post-process: aim / look-at IK over a chain ending in a joint that should face a target. */
typedef struct cb_graph_aim_ik_desc {
    /** The chain, from the joint closest to the root to the aiming joint (e.g. spine_03, neck,
     *  head). Each must be an ancestor of the next. */
    const char *const *joints;
    /** Share of the turn each joint takes, one per joint, in [0, 1]. NULL: the last joint
     *  turns alone. */
    const float *joint_weights;
    uint32_t joint_count;
    /** Float parameters of the target position in model space. Required. */
    const char *target[3];
    /** Float parameter of the weight [0, 1] (clamped; 0 skips the step). NULL: 1. */
    const char *weight;
    /** The aiming joint's forward and up axes in its own space. Default +Z forward, +Y up. */
    float forward[3], up[3];
    /** Model-space direction the up axis leans towards (e.g. (0, 1, 0) keeps a head upright).
     *  Default (zero): no twist. */
    float pole[3];
    /** Start of the aimed ray in the aiming joint's space (e.g. between the eyes). Default: the
     *  joint itself. */
    float offset[3];
    /** Largest turn in radians, (0, pi]. Default CB_IK_AIM_DEFAULT_ANGLE_LIMIT (pi: no
     *  limit). */
    float limit_rad;
    /** Level of detail: the highest LOD the step runs at (cb_graph_lod_limit). Default: none. */
    cb_graph_lod_limit lod;
} cb_graph_aim_ik_desc;

/**
 * Post-process: orientation warping (cb_ik_orient_job): the lower body turned about the
 * vertical by an angle parameter, the spine turned back so the upper body keeps facing where
 * it faced. A follower computes the angle from the heading and the velocity
 * (cb_follow_desc.orient, crowdblend/follow.h); any host may write it.
 */
typedef struct cb_graph_orientation_warp_desc {
    /** The lower body's joint (the hips' common parent). Default "pelvis". */
    const char *hip_joint;
    /** The joints that turn back, from the hip up (each a descendant of the one before, the
     *  first of the hip), 0 to CB_IK_AIM_MAX_JOINTS - 1 of them. */
    const char *const *spine_joints;
    /** Each spine joint's share of the counter-turn, in [0, 1], summing to at most 1. NULL:
     *  equal shares summing to 1 (the upper body keeps its orientation exactly). */
    const float *spine_weights;
    uint32_t spine_count;
    /** Numeric parameter of the lower body's turn about +Y, radians (positive turns +Z
     *  towards +X). Required. */
    const char *angle;
    /** Numeric parameter of the weight [0, 1] (clamped; 0 skips the step). NULL: 1. */
    const char *weight;
    /** Largest turn, radians, (0, pi]: the parameter is clamped to it. Default
     *  CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT (90 degrees). */
    float limit_rad;
    /** Level of detail: the highest LOD the step runs at (cb_graph_lod_limit). Default: none. */
    cb_graph_lod_limit lod;
} cb_graph_orientation_warp_desc;

/** One leg of a stride warp: a two-bone chain as cb_graph_two_bone_ik_desc names it. */
typedef struct cb_graph_stride_leg {
    const char *start_joint, *mid_joint, *end_joint; /**< e.g. thigh_l, calf_l, ball_l */
    /** The knee's hinge axis in the calf's space (e.g. (1, 0, 0) for the embedded humanoid).
     *  Default (zero): the normal of the plane the leg bends in now. */
    float mid_axis[3];
} cb_graph_stride_leg;

/**
 * Post-process: stride warping (cb_ik_stride_job): each leg's end joint moved along the motion
 * direction so that its offset from the hip's ground projection along it is scaled by the
 * stride scale k, then placed there by two-bone IK. A follower computes k where playback-rate
 * warping hits its bound (cb_follow_desc.stride, crowdblend/follow.h); any host may write it.
 * k == 1 (also k <= 0, a parameter's default 0, or not finite), weight 0 or a zero direction
 * skip the step, bit for bit.
 */
typedef struct cb_graph_stride_warp_desc {
    /** The joint whose ground projection strides are measured from. Default "pelvis". */
    const char *hip_joint;
    /** The legs, 1 to CB_IK_STRIDE_MAX_LEGS, each below the hip, no two sharing a joint. */
    const cb_graph_stride_leg *legs;
    uint32_t leg_count;
    /** Numeric parameter of the stride scale k (1: off). Its value is clamped to
     *  [CB_IK_STRIDE_MIN_SCALE, CB_IK_STRIDE_MAX_SCALE]. Required. */
    const char *scale;
    /** Numeric parameters of the motion direction in model space: to the left (+X) and forward
     *  (+Z), any length (the velocity parameters do). Required. */
    const char *direction[2];
    /** Numeric parameter of the weight [0, 1] (clamped; 0 skips the step). NULL: 1. */
    const char *weight;
    /** Where each leg's reach softens, (0, 1]. Default CB_IK_DEFAULT_SOFTEN. */
    float soften;
    /** Level of detail: the highest LOD the step runs at (cb_graph_lod_limit). Default: none. */
    cb_graph_lod_limit lod;
} cb_graph_stride_warp_desc;

/** Most legs of a foot_lock step (the stride warp's limit). */
#define CB_GRAPH_FOOT_LOCK_MAX_LEGS CB_IK_STRIDE_MAX_LEGS
/** Most plant and lift markers of one leg in one clip. */
#define CB_GRAPH_FOOT_MAX_MARKERS 32
/** Defaults of a foot_lock step, and the planting weight from which a foot is down. */
#define CB_GRAPH_DEFAULT_LOCK_RELEASE_S 0.15f
#define CB_GRAPH_DEFAULT_LOCK_FAIL_DISTANCE_M 0.01f
#define CB_GRAPH_LOCK_PLANT_WEIGHT 0.5f

/** One leg of a foot_lock step: a two-bone chain (as a stride warp's leg), the markers that
 *  plant and lift its foot, and optional output parameters. */
typedef struct cb_graph_foot_lock_leg {
    /** start, mid and end joints (thigh_l, calf_l, ball_l: the end joint is the one locked),
     *  and the knee's hinge axis. */
    cb_graph_stride_leg chain;
    /** Marker names: the foot is down from a plant marker to the next lift marker of a clip.
     *  Defaults: legs 0 and 1 "foot_plant_l"/"foot_lift_l" and "foot_plant_r"/"foot_lift_r";
     *  required for further legs. */
    const char *plant_marker, *lift_marker;
    /** Optional float parameters the step writes every frame (the host reads them with
     *  cb_crowd_param_column): 1 while the foot is locked (0 otherwise), and 1 while this plant
     *  had a reach failure (0 otherwise). NULL: not written. */
    const char *locked, *failed;
} cb_graph_foot_lock_leg;

/**
 * Post-process: foot locking. For each leg, the planting weight is the sum of this frame's
 * blend weights (cb_crowd_weights) of the clips that hold the foot down at their time (the
 * last of the leg's plant and lift markers at or before it, cyclically, is a plant); from
 * CB_GRAPH_LOCK_PLANT_WEIGHT on the foot is down. On the frame it goes down, the IK pulls the
 * end joint to its position in the WORLD as it was shown the frame before (where it lands when
 * that is not known), and where it is shown then is kept (per character, in the crowd: the
 * same point unless the soft IK falls short of it); while it stays down a two-bone
 * IK (cb_ik_two_bone_job, weight 1) pins the end joint there, the point converted into this
 * frame's model space; when it lifts, the IK weight falls to 0 along a smoothstep over
 * release_s, the point held, so the leg returns to the animation without a jump.
 *
 * The world: with root_position and root_yaw named, the root's world placement is read from
 * those float parameters every frame (the host writes where the character is: world X, Y, Z,
 * +Y up, and the yaw about +Y, a positive yaw turning +Z towards +X, as crowdblend/follow.h);
 * with neither named, the locked point moves by the inverse of the frame's root motion (the
 * crowd's cb_crowd_root_motion: the host must apply exactly those deltas to the root; with
 * skip_root_motion, or a graph without root motion, the point is held in model space).
 *
 * A reach failure: after the IK the end joint is more than fail_distance_m from the locked
 * point (beyond the leg's reach or in its soft zone). The point then moves to where the leg got
 * (the foot slides only as far as the leg falls short) and the leg's `failed` output is 1 until
 * the foot lifts (a weight below 1 is not meant to reach the point: no check then). Weight 0,
 * or no clip with the leg's markers, leaves the pose's bits as they are (and releases the lock
 * at once). docs/graph.md "Foot locking".
 */
typedef struct cb_graph_foot_lock_desc {
    /** The legs, 1 to CB_GRAPH_FOOT_LOCK_MAX_LEGS, in disjoint subtrees: no two sharing a
     *  joint (CB_ERR_INVALID_ARGUMENT), no leg's start joint above another leg's joints
     *  (CB_ERR_HIERARCHY), so that no leg's IK moves another leg. */
    const cb_graph_foot_lock_leg *legs;
    uint32_t leg_count;
    /** Float parameters of the root's world position (x, y, z) and yaw (radians). All four or
     *  none (then the root-motion form, above). */
    const char *root_position[3];
    const char *root_yaw;
    /** Numeric parameter of the weight [0, 1] (clamped; 0 skips the step). NULL: 1. */
    const char *weight;
    /** Seconds over which a lifted foot's lock fades out, [0, 10]; 0 takes the default
     *  CB_GRAPH_DEFAULT_LOCK_RELEASE_S (a release at once: any value below one frame). */
    float release_s;
    /** Distance beyond which a lock counts as a reach failure, m, (0, 1]. Default
     *  CB_GRAPH_DEFAULT_LOCK_FAIL_DISTANCE_M. */
    float fail_distance_m;
    /** Where each leg's reach softens, (0, 1]. Default CB_IK_DEFAULT_SOFTEN. */
    float soften;
    /** The pelvis drop: the largest distance, m, [0, 1], by which the step may lower the
     *  pelvis joint along model +Y so that locked legs reach their points (0: off, the step's
     *  output unchanged bit for bit). Each frame, before the legs' solves, the least drop that
     *  brings every locked leg's point within the distance its two-bone solve reaches exactly
     *  (cb_ik_two_bone_result.reached) is computed in closed form, clamped to [0,
     *  pelvis_drop_m] and scaled by the leg's lock weight (the step's weight times the
     *  release's smoothstep; a releasing leg asks for no more than on its last held frame),
     *  the largest over the legs applied. Legs not locked, and the rest of the pelvis's
     *  subtree, move down with it and are not solved back. docs/graph.md "Foot locking". */
    float pelvis_drop_m;
    /** The joint the drop moves: an ancestor of every leg's start joint (not a leg's joint).
     *  NULL: the legs' nearest common ancestor (the humanoid's pelvis), looked for only when
     *  pelvis_drop_m is above 0 (a step without a drop needs none: a leg may start at the
     *  root). */
    const char *pelvis_joint;
    /** Level of detail: the highest LOD the step runs at (cb_graph_lod_limit). Default: none. */
    cb_graph_lod_limit lod;
} cb_graph_foot_lock_desc;

/** @return CB_ERR_NOT_FOUND (a joint or parameter), CB_ERR_MISMATCH (a parameter type),
 *          CB_ERR_HIERARCHY (joints that do not form a chain), CB_ERR_INVALID_ARGUMENT (also a
 *          lod.max_lod below 0, or set while lod.on is false), CB_ERR_NOT_FINITE (lod.max_lod),
 *          CB_ERR_TOO_MANY. */
CB_API cb_result cb_graph_add_two_bone_ik(cb_graph_builder *b,
                                          const cb_graph_two_bone_ik_desc *desc, cb_error *err);
CB_API cb_result cb_graph_add_aim_ik(cb_graph_builder *b, const cb_graph_aim_ik_desc *desc,
                                     cb_error *err);
CB_API cb_result cb_graph_add_orientation_warp(cb_graph_builder *b,
                                               const cb_graph_orientation_warp_desc *desc,
                                               cb_error *err);
CB_API cb_result cb_graph_add_stride_warp(cb_graph_builder *b,
                                          const cb_graph_stride_warp_desc *desc, cb_error *err);
/** Also CB_ERR_DUPLICATE (an output parameter the graph already writes), CB_ERR_NOT_FINITE (a
 *  pelvis_drop_m that is not finite), CB_ERR_HIERARCHY (a pelvis_joint that is not an
 *  ancestor of every leg's start joint). Marker names that no clip has are no error: that leg
 *  never locks. */
CB_API cb_result cb_graph_add_foot_lock(cb_graph_builder *b, const cb_graph_foot_lock_desc *desc,
                                        cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Defaults                                                                                  */

/** Each returns its desc with every zero field that has a default replaced by it, as the
 *  builder resolves it (desc may be NULL: all defaults). Pointers and names are copied as they
 *  are; an aim step's NULL joint_weights stays NULL (the last joint turns alone). */
CB_API cb_graph_builder_desc cb_graph_query_builder_desc(const cb_graph_builder_desc *desc);
CB_API cb_graph_velocity_blend_desc
cb_graph_query_velocity_blend_desc(const cb_graph_velocity_blend_desc *desc);
CB_API cb_graph_quadrant_desc cb_graph_query_quadrant_desc(const cb_graph_quadrant_desc *desc);
CB_API cb_graph_clip_desc cb_graph_query_clip_desc(const cb_graph_clip_desc *desc);
CB_API cb_graph_layer cb_graph_query_layer(const cb_graph_layer *layer);
CB_API cb_graph_condition cb_graph_query_condition(const cb_graph_condition *condition);
CB_API cb_graph_transition cb_graph_query_transition(const cb_graph_transition *transition);
CB_API cb_graph_state cb_graph_query_state(const cb_graph_state *state);
CB_API cb_graph_two_bone_ik_desc
cb_graph_query_two_bone_ik_desc(const cb_graph_two_bone_ik_desc *desc);
CB_API cb_graph_aim_ik_desc cb_graph_query_aim_ik_desc(const cb_graph_aim_ik_desc *desc);
/** hip_joint "pelvis", limit_rad CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT; spine_weights stays NULL
 *  (equal shares). */
CB_API cb_graph_orientation_warp_desc
cb_graph_query_orientation_warp_desc(const cb_graph_orientation_warp_desc *desc);
/** hip_joint "pelvis", soften CB_IK_DEFAULT_SOFTEN. */
CB_API cb_graph_stride_warp_desc
cb_graph_query_stride_warp_desc(const cb_graph_stride_warp_desc *desc);
/** release_s, fail_distance_m and soften resolved; legs stays as given (each leg's default
 *  markers are resolved by cb_graph_query_foot_lock_leg), and so do pelvis_drop_m (0: off) and
 *  pelvis_joint (NULL: resolved at build, from the skeleton). */
CB_API cb_graph_foot_lock_desc cb_graph_query_foot_lock_desc(const cb_graph_foot_lock_desc *desc);
/** Leg `index` of a foot_lock step with its default marker names (NULL stays NULL beyond leg
 *  1). */
CB_API cb_graph_foot_lock_leg cb_graph_query_foot_lock_leg(const cb_graph_foot_lock_leg *leg,
                                                           uint32_t index);

/** Sets the root node (the last node added is the root if this is never called). */
CB_API cb_result cb_graph_set_root(cb_graph_builder *b, cb_graph_node root, cb_error *err);

/**
 * Compiles what was added into a graph: the nodes reachable from the root, in a flat order.
 * A builder builds once (the graph takes over its solvers); afterwards it can only be
 * destroyed, and further calls return CB_ERR_INVALID_ARGUMENT.
 * @return CB_ERR_TOO_FEW (no node), CB_ERR_MISMATCH (an additive clip node used outside an
 *         additive layer), CB_ERR_NOT_FOUND (a post-process step with a LOD limit in a graph
 *         without a LOD parameter, cb_graph_set_lod_param), CB_ERR_INVALID_ARGUMENT (already
 *         built), CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_graph_build(cb_graph_builder *b, cb_graph **out, cb_error *err);

/**
 * Frees a graph, unless a crowd still runs it: crowds count themselves as its users from
 * cb_crowd_create to cb_crowd_destroy, and while there is one this frees nothing and returns
 * CB_ERR_IN_USE (destroy the crowds first, then call it again). NULL does nothing (CB_OK).
 * @return CB_OK (freed), CB_ERR_IN_USE (nothing changed).
 */
CB_API cb_result cb_graph_destroy(cb_graph *graph);

/** An event: a marker that an active clip crossed during the last update (crowdblend/sync.h
 *  says which crossings count: each once, at any frame rate, speed and number of loops). */
typedef struct cb_graph_event {
    /** The hash of the marker's name: cb_name_hash(name). */
    uint32_t marker_hash;
    /** The clip node that crossed it (cb_graph_node_name()). */
    uint32_t node;
    /** The clip's weight when it crossed, (0, 1]: its share of the pose, or, in a layer, of
     *  the layer (the layer's own weight is a parameter the host knows). */
    float weight;
    /** Where in the update the crossing lies, [0, 1] (e.g. to time a footstep's sound). */
    float fraction;
} cb_graph_event;

/* ----------------------------------------------------------------------------------------- */
/* JSON                                                                                      */

/** What a JSON graph is resolved against (as cb_graph_builder_desc). */
typedef struct cb_graph_json_desc {
    uint32_t _start_canary;
    /** The skeleton, as cb_graph_builder_desc.skeleton. Required; must outlive the graph. */
    const cb_skeleton *skeleton;
    /** The clips that "clip" members name, as cb_graph_builder_desc.clips. */
    const cb_clip *const *clips;
    uint32_t clip_count;
    /** Name of the source (file name) in messages. Default CB_GRAPH_DEFAULT_NAME
     *  (cb_graph_load_json_file: the path). */
    const char *source_name;
    /** For the loader's own memory and the graph's. Default: the C library. (jansson's parse
     *  tree, freed before returning, uses jansson's allocator.) */
    cb_allocator allocator;
    uint32_t _end_canary;
} cb_graph_json_desc;

/** The version of the JSON format this build reads; a document's optional "version" above it
 *  is refused with CB_ERR_UNSUPPORTED. */
#define CB_GRAPH_JSON_VERSION 1

/** desc with its defaults resolved (desc may be NULL). */
CB_API cb_graph_json_desc cb_graph_query_json_desc(const cb_graph_json_desc *desc);

/**
 * Builds a graph from its JSON description (docs/graph.md). Nodes are added to a builder
 * depth-first from the root, children before their parent in the order they are listed, then
 * the nodes the root does not reach in document order; so clip slots (cb_crowd_clip_times)
 * follow that order. Every error starts with the place at fault, "source:line:column: ", the
 * column counted in characters: the value that is wrong, the key of an unknown key, the object
 * that lacks a member, the object (parameter, processor, node, post-process step) that the
 * builder refused, whose message follows ("graph.json:12:7: clip node 'walk': unknown clip
 * 'wlak_f'"); for malformed JSON, jansson's place and message.
 * @param text    the document, UTF-8; length bytes are read (no terminating zero needed)
 * @param out     receives the graph; untouched on failure
 * @return CB_OK, or CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_PARSE
 *         (malformed JSON; an unknown key, node type or enum value; a value of the wrong type;
 *         a missing member; a number beyond the float range or a count that is not a whole
 *         number; an unknown node name; a cycle between nodes), CB_ERR_TOO_MANY (an array
 *         longer than its limit in graph.h, nodes nested more than 64 deep),
 *         CB_ERR_INVALID_ARGUMENT (an int default that is not a whole number within 2^24),
 *         CB_ERR_UNSUPPORTED (a "version" above CB_GRAPH_JSON_VERSION), the builder's codes
 *         (CB_ERR_NOT_FOUND, CB_ERR_MISMATCH, CB_ERR_DUPLICATE, ...), CB_ERR_OUT_OF_MEMORY.
 *         Thread-safe: distinct calls share nothing.
 */
CB_API cb_result cb_graph_load_json(const char *text, size_t length, const cb_graph_json_desc *desc,
                                    cb_graph **out, cb_error *err);

/** Reads a file and calls cb_graph_load_json (source_name defaults to the path).
 *  @return also CB_ERR_IO. */
CB_API cb_result cb_graph_load_json_file(const char *path, const cb_graph_json_desc *desc,
                                         cb_graph **out, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* A blend-space graph in one call                                                           */

/** The parameters of a graph made by cb_graph_create_blend: CB_GRAPH_BLEND_PARAM_PREFIX "0",
 *  "1", ... (the solver's parameters: for a 2D locomotion space "blend_0" is the velocity along
 *  +X, to the character's left, and "blend_1" the velocity forward (+Z), in m/s in the
 *  character's frame, the axes of its root motion (crowdblend/clip.h); for DIRECT one per
 *  clip), then the two layer weights, [0, 1]. Look them up with cb_graph_find_param or
 *  cb_crowd_find_param. */
#define CB_GRAPH_BLEND_PARAM_PREFIX "blend_"
#define CB_GRAPH_BLEND_ADDITIVE_WEIGHT "additive_weight"
#define CB_GRAPH_BLEND_UPPER_WEIGHT "upper_weight"

/** Default name of a blend-space graph. */
#define CB_GRAPH_BLEND_DEFAULT_NAME "blend space"

/** A clip whose root speed (cb_clip_root_motion.speed_mps) is below this plays in place (an
 *  idle): what CB_GRAPH_BLEND_SYNC_MOVING keeps out of the moving clips' sync group, m/s. */
#define CB_GRAPH_BLEND_IN_PLACE_MPS 0.05f

/** Which of a blend-space graph's clips keep in step (share one sync group). */
typedef enum cb_graph_blend_sync {
    _CB_GRAPH_BLEND_SYNC_DEFAULT = 0, /**< CB_GRAPH_BLEND_SYNC_ALL */
    /** Every clip in one group: one phase per character, advancing at the weight-averaged
     *  duration of the clips it blends. An in-place clip blended in lengthens that duration, so
     *  the moving clips play slower and the root moves slower than the blend-space position
     *  asks: a 3 s idle at weight 0.5 beside a 1 s walk plays the walk at half its rate. */
    CB_GRAPH_BLEND_SYNC_ALL,
    /** The clips that play in place (root speed below CB_GRAPH_BLEND_IN_PLACE_MPS) each in a
     *  group of their own; the moving clips keep in step at their own weight-averaged
     *  duration. For hosts that command a velocity (a crowd simulation): between idle and a
     *  walk the root then moves as fast as asked (the embedded set asked for 0.5 m/s: 0.50,
     *  against 0.22 with SYNC_ALL); between a walk and a run the group's weight-averaged
     *  duration still differs from each clip's own, which a rate warp corrects. Refused
     *  (CB_ERR_INVALID_ARGUMENT) when no clip moves: none would keep in step. */
    CB_GRAPH_BLEND_SYNC_MOVING,
    _CB_GRAPH_BLEND_SYNC_COUNT
} cb_graph_blend_sync;

/** An optional layer on top of the blend. */
typedef struct cb_graph_blend_layer {
    /** The layer's clip, NULL for no layer. Looping; additive for the additive layer. */
    const cb_clip *clip;
    /** Per-joint weights (at least the joint count), or empty. */
    cb_float_cspan mask;
    /** When mask is empty: a joint whose subtree gets weight 1 (everything else 0), e.g. the
     *  first spine joint for an upper-body layer. NULL: every joint. */
    const char *mask_joint;
} cb_graph_blend_layer;

/** A locomotion blend space over clips, with an optional masked override layer and an
 *  optional additive layer: the common crowd graph, without the builder. */
typedef struct cb_graph_blend_desc {
    uint32_t _start_canary;
    /** The skeleton of every clip. Required; must outlive the graph. */
    const cb_skeleton *skeleton;
    /** Solver kind and options; nodes and node_count are ignored (they come from clips and
     *  positions below). Zero: CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D with its defaults. DIRECT
     *  weighs the clips by one parameter each. */
    cb_solver_desc solver;
    /** One clip per node, all looping and built for the skeleton; they must outlive the
     *  graph. */
    const cb_clip *const *clips;
    /** Number of clips (nodes), 1 to CB_SOLVER_MAX_NODES. */
    uint32_t clip_count;
    /** Node positions, cb_solver_param_count() floats per node. NULL: for 1D
     *  kinds the clips' forward speed, for 2D kinds their (left, forward) root velocity in m/s
     *  (+X and +Z: cb_clip_query_root_motion() displacement / duration); two clips with the
     *  same one (in-place clips all have speed 0) are refused with CB_ERR_DUPLICATE, naming
     *  them, for every kind: a 1D kind would make a step of them (CB_SOLVER_KIND_LINEAR_1D),
     *  which given positions may ask for but derived ones never mean. DIRECT ignores
     *  positions. */
    const float *positions;
    /** Override layer, usually masked to the upper body (weight CB_GRAPH_BLEND_UPPER_WEIGHT). */
    cb_graph_blend_layer upper_body;
    /** Additive layer (weight CB_GRAPH_BLEND_ADDITIVE_WEIGHT). */
    cb_graph_blend_layer additive;
    /** Which clips keep in step. Default CB_GRAPH_BLEND_SYNC_ALL; CB_GRAPH_BLEND_SYNC_MOVING
     *  keeps an idle out of the walks' group, so the root moves as fast as the position asks. */
    cb_graph_blend_sync sync;
    /** The graph's name. Default CB_GRAPH_BLEND_DEFAULT_NAME. */
    const char *name;
    cb_allocator allocator;
    uint32_t _end_canary;
} cb_graph_blend_desc;

/** desc with its defaults resolved (desc may be NULL). */
CB_API cb_graph_blend_desc cb_graph_query_blend_desc(const cb_graph_blend_desc *desc);

/**
 * Builds the graph of a blend space: clip nodes in clip order (their slots), one blend space or
 * direct node over them whose clips share a sync group (desc.sync: all of them, or the moving
 * ones), then the upper-body and additive layer clips. Free it with cb_graph_destroy.
 * @return CB_ERR_NULL_ARGUMENT (desc, out, skeleton, clips or a clip NULL), CB_ERR_CANARY,
 *         CB_ERR_INVALID_ARGUMENT (clip count, a non-looping clip, sync), CB_ERR_MISMATCH (a clip
 *         built for another skeleton, an additive clip where a normal one belongs or the
 *         reverse, a mask of the wrong length), CB_ERR_NOT_FOUND (mask_joint), the solver's
 *         errors (CB_ERR_DUPLICATE for two clips with one root velocity, ...),
 *         CB_ERR_OUT_OF_MEMORY. err names the field.
 */
CB_API cb_result cb_graph_create_blend(const cb_graph_blend_desc *desc, cb_graph **out,
                                       cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Queries on a built graph                                                                  */

CB_API const char *cb_graph_name(const cb_graph *graph);
CB_API const cb_skeleton *cb_graph_skeleton(const cb_graph *graph);

/** Parameters: count, lookup by name or hash (CB_ERR_NOT_FOUND), name, type, default. */
CB_API uint32_t cb_graph_param_count(const cb_graph *graph);
CB_API cb_result cb_graph_find_param(const cb_graph *graph, const char *name, uint32_t *index);
CB_API cb_result cb_graph_find_param_hash(const cb_graph *graph, uint32_t hash, uint32_t *index);
CB_API const char *cb_graph_param_name(const cb_graph *graph, uint32_t index);
CB_API cb_param_type cb_graph_param_type(const cb_graph *graph, uint32_t index);
CB_API float cb_graph_param_default(const cb_graph *graph, uint32_t index);

/** A lock leg of the graph's foot_lock steps, as built: its end joint (the foot), the
 *  parameters its step reads the root's placement from (x, y, z, yaw; CB_INVALID_INDEX each in
 *  the root-motion form, where the step's points are in model space) and the leg's own
 *  `locked` and `failed` outputs (CB_INVALID_INDEX where not named). */
typedef struct cb_graph_foot_lock_leg_info {
    uint32_t end_joint;
    uint32_t root_params[4];
    uint32_t locked_param, failed_param;
} cb_graph_foot_lock_leg_info;

/** The lock legs of the graph's foot_lock steps, numbered across the steps (each step's legs
 *  in order, the steps in the order they were added), as cb_crowd_query_foot_lock() takes
 *  them: how many; the first whose end joint is `joint` (CB_ERR_NOT_FOUND where none,
 *  CB_ERR_NULL_ARGUMENT); and what one reads and writes (CB_ERR_NULL_ARGUMENT,
 *  CB_ERR_INVALID_ARGUMENT for a leg out of range; *out untouched on error). */
CB_API uint32_t cb_graph_foot_lock_leg_count(const cb_graph *graph);
CB_API cb_result cb_graph_foot_lock_leg_at_joint(const cb_graph *graph, uint32_t joint,
                                                 uint32_t *leg);
CB_API cb_result cb_graph_query_foot_lock_leg_info(const cb_graph *graph, uint32_t leg,
                                                   cb_graph_foot_lock_leg_info *out);

/** State machines, in the order they were added: count, lookup by node name, state count and
 *  names. */
CB_API uint32_t cb_graph_state_machine_count(const cb_graph *graph);
CB_API cb_result cb_graph_find_state_machine(const cb_graph *graph, const char *name,
                                             uint32_t *index);
CB_API uint32_t cb_graph_state_count(const cb_graph *graph, uint32_t machine);
CB_API const char *cb_graph_state_name(const cb_graph *graph, uint32_t machine, uint32_t state);
CB_API cb_result cb_graph_find_state(const cb_graph *graph, uint32_t machine, const char *name,
                                     uint32_t *state);

/** Nodes: count, name (may be empty), lookup by name (CB_ERR_NOT_FOUND). A built graph numbers
 *  its nodes itself (the root is 0): these indices, not the builder's ids, are what events and
 *  queries use. */
CB_API uint32_t cb_graph_node_count(const cb_graph *graph);
CB_API const char *cb_graph_node_name(const cb_graph *graph, uint32_t node);
CB_API cb_result cb_graph_find_node(const cb_graph *graph, const char *name, uint32_t *node);

/** Clip nodes, in the order they were added (the `clip` index of cb_crowd_clip_times and
 *  cb_crowd_weights): count, and each one's node index (CB_INVALID_INDEX out of range). */
CB_API uint32_t cb_graph_clip_count(const cb_graph *graph);
CB_API uint32_t cb_graph_clip_node(const cb_graph *graph, uint32_t clip);

/** The clip that clip slot `clip` plays (the pointer the graph was given in its builder, JSON
 *  or blend desc's clips; cb_clip_name() names it), so a host can map the slots of
 *  cb_crowd_clip_times and cb_crowd_weights, or the nodes of events, to clip data (markers,
 *  root motion). NULL for a slot out of range. */
CB_API const cb_clip *cb_graph_clip(const cb_graph *graph, uint32_t clip);

/** The clip slot of node `node` (a node index of the built graph, as cb_graph_find_node and
 *  events give): CB_INVALID_INDEX when the node is out of range or is not a clip node. */
CB_API uint32_t cb_graph_node_clip(const cb_graph *graph, uint32_t node);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_GRAPH_H */
