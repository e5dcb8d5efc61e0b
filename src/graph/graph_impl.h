/* Private to src/graph. A compiled graph: flat arrays the runtime walks, shared by every
 * character of the graph.
 *
 * Nodes are stored in a parents-before-children order (a topological order of the DAG from
 * the root), so one forward pass propagates weights from the root to the leaves and one
 * backward pass can gather from the leaves. Each node lists its children as edges (a child id
 * and, per kind, what the edge carries). Everything is resolved to indices at build: the
 * runtime never touches a name. */
#ifndef CROWDBLEND_GRAPH_IMPL_H
#define CROWDBLEND_GRAPH_IMPL_H

#include <stdatomic.h>

#include "base/base_impl.h"
#include "crowdblend/graph.h"
#include "crowdblend/ik.h"
#include "crowdblend/ltm.h"
#include "crowdblend/params.h"
#include "crowdblend/pose.h"

/* Direct blends are blend nodes whose solver is CB_SOLVER_KIND_DIRECT: one rule for both. */
typedef enum gnode_type {
    GNODE_CLIP,
    GNODE_BLEND,
    GNODE_LAYERS,
    GNODE_SM,
} gnode_type;

/* "no parameter" / "no group" */
#define GNONE UINT32_MAX

typedef struct gclip {
    const cb_clip *clip;
    float speed;
    uint32_t speed_param;
    bool clamp;
    float start_offset;
    uint32_t group;  /* sync group, or GNONE */
    uint32_t slot;   /* index among clip nodes: per-character clip state */
    uint32_t node;   /* the clip's node (in graph->clips, the per-slot copy) */
    bool base_path;  /* reached from the root other than through a layer */
    bool moves_root; /* base_path: its root motion counts (a clamped clip's up to its end) */
    float duration_s;
    bool additive;
    bool has_markers;    /* events are looked for */
    bool track_activity; /* its activity flag is read (time.c): not in a group synced by
                          * normalized time */
    uint32_t marker_first, marker_count; /* the clip's marker times in graph->marker_times */
} gclip;

typedef struct gblend {
    cb_solver *solver;
    uint32_t first_param; /* its parameters: graph->blend_params[first_param ..] */
    uint32_t param_count; /* the solver's: 1 or 2, or one per child for DIRECT */
    /* Playback-rate warping (graph.h cb_graph_rate_warp): the commanded speed's parameter, or
     * GNONE; the bounds of the rate. Its edges carry the clips' cycle lengths. */
    uint32_t warp_param;
    float warp_min, warp_max;
} gblend;

typedef struct glayers {
    uint32_t first_layer; /* into graph->layers; the node's edge 0 is the base */
    uint32_t layer_count;
} glayers;

typedef struct gsm_ref {
    uint32_t sm; /* index into graph->sms */
} gsm_ref;

typedef struct gnode {
    gnode_type type;
    char name[CB_GRAPH_NAME_MAX + 1];
    uint32_t first_edge, edge_count; /* into graph->edges */
    union {
        gclip clip;
        gblend blend;
        glayers layers;
        gsm_ref sm;
    } u;
} gnode;

typedef struct glayer {
    uint32_t node;
    cb_layer_mode mode;
    uint32_t weight_param; /* GNONE: 1 */
    float *mask;           /* soa_joint_count floats, or NULL: all joints */
} glayer;

typedef struct gcondition {
    uint32_t param;
    cb_compare op;
    float value;
    bool trigger;
} gcondition;

typedef struct gtransition {
    uint32_t from; /* state index, or GNONE for any state */
    uint32_t to;
    uint32_t first_condition, condition_count;
    bool has_exit_time;
    float exit_time;
    float duration_s;
    cb_transition_blend blend;
    cb_interruption interruption;
    bool to_self;
} gtransition;

typedef struct gstate {
    char name[CB_GRAPH_NAME_MAX + 1];
    uint32_t node;
    float speed;
} gstate;

typedef struct gsm {
    uint32_t node;
    uint32_t first_state, state_count;
    uint32_t initial;
    uint32_t first_transition, transition_count;
    uint32_t inert_slot; /* index among inertializing machines, or GNONE */
} gsm;

typedef enum gproc_type { GPROC_VELOCITY_BLEND, GPROC_INTERP_TO, GPROC_QUADRANT } gproc_type;

typedef struct gproc {
    gproc_type type;
    uint32_t in[3];  /* GNONE when unused (velocity z) */
    uint32_t out[5]; /* velocity blend: forward, backward, left, right, speed (or GNONE) */
    float a, b;      /* min_sq_len | speed | dead zone, min speed */
} gproc;

typedef enum gik_type { GIK_TWO_BONE, GIK_AIM, GIK_ORIENT, GIK_STRIDE, GIK_FOOT_LOCK } gik_type;

/* A foot_lock step's own fields (graph.h cb_graph_foot_lock_desc); its legs' joints are the
 * gik's joints, 3 per leg, their hinges its leg_axes. */
typedef struct gfoot_lock {
    uint32_t root[3], yaw;                        /* parameters; root[0] GNONE: root motion */
    uint32_t first_leg;                           /* the graph's lock legs: state and tables */
    uint32_t locked[CB_GRAPH_FOOT_LOCK_MAX_LEGS]; /* output parameters, or GNONE */
    uint32_t failed[CB_GRAPH_FOOT_LOCK_MAX_LEGS];
    char markers[CB_GRAPH_FOOT_LOCK_MAX_LEGS][2][CB_GRAPH_NAME_MAX + 1]; /* plant, lift */
    float release_s, fail_distance;
    float pelvis_drop; /* the largest pelvis drop, m; 0: off */
    uint32_t pelvis;   /* the joint it moves (GNONE when off) */
} gfoot_lock;

typedef struct gik {
    gik_type type;
    uint32_t joints[CB_IK_AIM_MAX_JOINTS]; /* two-bone: start, mid, end; aim: the chain;
                                              orientation warp: the hip, then the spine;
                                              stride warp: the hip, then 3 per leg */
    float joint_weights[CB_IK_AIM_MAX_JOINTS];
    uint32_t joint_count;
    uint32_t target[3], pole[3], weight; /* parameters; pole[0] GNONE: none; orientation
                                            warp: target[0] is the angle; stride warp:
                                            target[0] the scale, [1], [2] the direction */
    float max_lod;    /* the highest LOD the step runs at (cb_graph_lod_limit); INFINITY: any */
    bool lod_limited; /* a limit was given (the build checks that the graph has a LOD param) */
    float soften;
    float mid_axis[3];            /* two-bone: the hinge */
    float forward[3], up[3];      /* aim */
    float pole_dir[3], offset[3]; /* aim: constant pole direction and ray start */
    float limit_rad;
    float leg_axes[CB_IK_STRIDE_MAX_LEGS][3]; /* stride warp, foot lock: each knee's hinge */
    gfoot_lock lock;                          /* foot lock */
} gik;

/* The jobs of an IK step: the one place that builds them, for the builder (which validates a
 * step once, on the rest pose, with the frame's values at zero) and for the runtime (which runs
 * it on a character's pose in place, with the frame's target, pole and weight). */

/* A two-bone job on another pose, with another target and weight: the fields of a step's job
 * that change from character to character (a leg's jobs for a chunk share the rest). */
static inline void gik_job_move(cb_ik_two_bone_job *job, cb_xform_group_span pose,
                                const float target[3], float weight)
{
    job->pose = (cb_xform_group_cspan){pose.ptr, pose.count};
    job->out = pose;
    job->target[0] = target[0], job->target[1] = target[1], job->target[2] = target[2];
    job->weight = weight;
}

static inline cb_ik_two_bone_job gik_chain_job(const cb_skeleton *skeleton,
                                               cb_xform_group_span pose, const uint32_t joints[3],
                                               const float axis[3], float soften,
                                               const float target[3], const float pole[3],
                                               float weight)
{
    cb_ik_two_bone_job job = {
        .skeleton = skeleton,
        .start_joint = joints[0],
        .mid_joint = joints[1],
        .end_joint = joints[2],
        .pole = {pole[0], pole[1], pole[2]},
        .mid_axis = {axis[0], axis[1], axis[2]},
        .soften = soften,
    };
    gik_job_move(&job, pose, target, weight);
    return job;
}

static inline cb_ik_two_bone_job gik_two_bone_job(const gik *ik, const cb_skeleton *skeleton,
                                                  cb_xform_group_span pose, const float target[3],
                                                  const float pole[3], float weight)
{
    return gik_chain_job(skeleton, pose, ik->joints, ik->mid_axis, ik->soften, target, pole,
                         weight);
}

/* Leg l of a foot_lock step (its joints 3l .. 3l + 2, no pole). */
static inline cb_ik_two_bone_job gik_lock_leg_job(const gik *ik, uint32_t l,
                                                  const cb_skeleton *skeleton,
                                                  cb_xform_group_span pose, const float target[3],
                                                  float weight)
{
    const float none[3] = {0.0f, 0.0f, 0.0f};
    return gik_chain_job(skeleton, pose, &ik->joints[3 * l], ik->leg_axes[l], ik->soften, target,
                         none, weight);
}

/* chain: room for ik->joint_count joints, filled here. */
static inline cb_ik_aim_job gik_aim_job(const gik *ik, const cb_skeleton *skeleton,
                                        cb_xform_group_span pose, cb_ik_aim_joint *chain,
                                        const float target[3], float weight)
{
    for (uint32_t j = 0; j < ik->joint_count; ++j) {
        chain[j] = (cb_ik_aim_joint){ik->joints[j], ik->joint_weights[j]};
    }
    return (cb_ik_aim_job){
        .skeleton = skeleton,
        .pose = {pose.ptr, pose.count},
        .out = pose,
        .chain = {chain, ik->joint_count},
        .target = {target[0], target[1], target[2]},
        .forward = {ik->forward[0], ik->forward[1], ik->forward[2]},
        .up = {ik->up[0], ik->up[1], ik->up[2]},
        .pole = {ik->pole_dir[0], ik->pole_dir[1], ik->pole_dir[2]},
        .offset = {ik->offset[0], ik->offset[1], ik->offset[2]},
        .angle_limit = ik->limit_rad,
        .weight = weight,
    };
}

/* spine: room for ik->joint_count - 1 joints, filled here. */
static inline cb_ik_orient_job gik_orient_job(const gik *ik, const cb_skeleton *skeleton,
                                              cb_xform_group_span pose, cb_ik_aim_joint *spine,
                                              float angle, float weight)
{
    for (uint32_t j = 1; j < ik->joint_count; ++j) {
        spine[j - 1] = (cb_ik_aim_joint){ik->joints[j], ik->joint_weights[j]};
    }
    return (cb_ik_orient_job){
        .skeleton = skeleton,
        .pose = {pose.ptr, pose.count},
        .out = pose,
        .hip_joint = ik->joints[0],
        .spine = {spine, ik->joint_count - 1},
        .angle = angle,
        .angle_limit = ik->limit_rad,
        .weight = weight,
    };
}

/* legs: room for CB_IK_STRIDE_MAX_LEGS, filled here; (joint_count - 1) / 3 legs. */
static inline cb_ik_stride_job gik_stride_job(const gik *ik, const cb_skeleton *skeleton,
                                              cb_xform_group_span pose, cb_ik_stride_leg *legs,
                                              float scale, float dx, float dz, float weight)
{
    uint32_t n = (ik->joint_count - 1) / 3;
    for (uint32_t l = 0; l < n; ++l) {
        legs[l] = (cb_ik_stride_leg){ik->joints[1 + 3 * l],
                                     ik->joints[2 + 3 * l],
                                     ik->joints[3 + 3 * l],
                                     {ik->leg_axes[l][0], ik->leg_axes[l][1], ik->leg_axes[l][2]}};
    }
    return (cb_ik_stride_job){
        .skeleton = skeleton,
        .pose = {pose.ptr, pose.count},
        .out = pose,
        .hip_joint = ik->joints[0],
        .legs = legs,
        .leg_count = n,
        .direction = {dx, dz},
        .scale = scale,
        .weight = weight,
        .soften = ik->soften,
    };
}

typedef struct gparam {
    char name[CB_GRAPH_NAME_MAX + 1];
    uint32_t hash;
    cb_param_type type;
    float default_value;
    bool written_by_graph; /* a processor output or a trigger: the crowd keeps its column */
    bool is_weight;        /* a layer weight: values outside [0, 1] are clamped and counted */
} gparam;

/* A clip's place inside state machines: for each machine above it, the state containing it, so
 * the runtime can sum a state's clip durations (its normalized time drives exit times). */
enum { GCLIP_MAX_SM_DEPTH = 4 };

typedef struct gclip_states {
    uint32_t count;
    uint32_t sm[GCLIP_MAX_SM_DEPTH], state[GCLIP_MAX_SM_DEPTH];
} gclip_states;

/* An edge from a node to a child. */
typedef struct gedge {
    uint32_t child;
    bool root_motion; /* false on layer edges: layers do not move the character */
    /* Edges of a rate-warped blend space: the child clip's horizontal root displacement per
     * cycle as played (x and z, m; reversed for a negative speed) and its cycle length at its
     * own speed (s); 0 elsewhere. A vector, not a length: the crowd's root motion is the
     * weighted mean of the clips' displacements, so clips moving different ways partly cancel
     * (a diagonal between a forward and a side walk moves at less than their mean speed).
     * warp_own: the clip keeps a sync group of its own, apart from the blend's. */
    float warp_dx, warp_dz, warp_dur;
    bool warp_own;
} gedge;

struct cb_graph {
    cb_allocator allocator;
    /* Crowds running the graph: cb_graph_destroy refuses while any does (crowd create and
     * destroy may run on different threads, hence atomic). */
    _Atomic uint32_t users;
    char name[CB_GRAPH_NAME_MAX + 1];
    const cb_skeleton *skeleton;
    size_t joint_count, soa_joint_count, group_count;

    gparam *params;
    uint32_t param_count;
    gproc *procs;
    uint32_t proc_count;
    gnode *nodes; /* in topological order, root first */
    uint32_t node_count;
    gedge *edges;
    uint32_t edge_count;
    uint32_t *blend_params; /* parameters of blend nodes (gblend.first_param) */
    uint32_t blend_param_count;
    uint32_t max_blend_params; /* the most parameters one blend node reads */
    glayer *layers;
    uint32_t layer_count;
    gsm *sms;
    uint32_t sm_count;
    gstate *states;
    uint32_t state_count;
    gtransition *transitions;
    uint32_t transition_count;
    gcondition *conditions;
    uint32_t condition_count;
    gik *iks;
    uint32_t ik_count;
    uint32_t lod_param;        /* the characters' LOD (cb_graph_set_lod_param), or GNONE */
    uint32_t group_count_sync; /* sync groups */
    uint32_t clip_count;       /* clip nodes */
    uint32_t *clip_nodes;      /* clip slot -> node */
    gclip *clips;              /* clip slot -> a copy of its node's data, for the time stage */
    gclip_states *clip_states; /* per clip slot */
    uint32_t inert_count;      /* machines with inertializing transitions */
    bool uniform_rate;         /* no clip, speed parameter or state changes speed */
    uint32_t *layer_slot;      /* per layer: its node's clip slot, or GNONE if not a clip */
    /* Some clip on the base path has a root track (cb_clip_query_root_motion().mode is not
     * NONE). Without one every root delta is zero, and the crowd leaves root motion out. */
    bool moves_root;
    /* A flat graph: [layers of clips over] one blend node whose children are all clips of one
     * sync group (or alone in a group of their own), no state machine; rates of any clip speed
     * and speed parameter and of the blend's rate_warp. The runtime runs the same stages for it
     * with their list building skipped: the lists are these tables (runtime/). */
    bool flat;
    uint32_t flat_blend;     /* the blend node */
    uint32_t flat_layers;    /* the layers node above it, or GNONE */
    uint32_t flat_group;     /* the blend's sync group (GNONE: every child alone in its own) */
    uint32_t *flat_order;    /* the blend's edge indices sorted by their clip's slot */
    uint32_t *flat_slot;     /* the blend's edge index -> its clip's slot */
    bool flat_in_order;      /* flat_order is 0, 1, 2, ...: slot order is edge order */
    uint32_t max_pose_depth; /* pose buffers the evaluator may need at once */
    uint32_t max_entries;    /* blend entries one fused job may get */
    /* Sync markers per group (cb_sync_group_names): names sync_hashes[sync_first[g] ..
     * + sync_count[g]]; count 0 syncs by normalized time. A second allocation (its size is
     * known only once the groups are). */
    uint32_t *sync_first, *sync_count, *sync_hashes;
    float *marker_times; /* every clip's marker times (normalized), after the names */
    size_t sync_bytes;
    /* Foot locking: the legs of every foot_lock step (gfoot_lock.first_leg), and for each leg
     * and clip slot the plant and lift markers of its foot (foot_first, foot_count into
     * foot_time, foot_plant: the rule of graph/runtime.h). A third allocation, none without. */
    uint32_t lock_leg_count;
    /* The weight parameter of every foot_lock step when they share one (the legs' planting
     * weights are read only while it is on: cb_graph_lock_on), GNONE when a step has none or
     * they differ (always read). */
    uint32_t lock_gate;
    /* The largest max_lod of the foot_lock steps (INFINITY when one has no limit, or the graph
     * no LOD parameter): above it every lock is as at weight 0, and the planting weights are
     * not read either (cb_graph_lock_on). */
    float lock_max_lod;
    uint32_t *foot_first, *foot_count; /* lock_leg_count x clip_count */
    float *foot_time;
    bool *foot_plant;
    size_t foot_bytes;
    void *memory; /* one allocation for every array above but the sync names */
    size_t memory_bytes;
};

#endif
