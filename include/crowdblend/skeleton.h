/**
 * @file crowdblend/skeleton.h
 * @brief Skeletons (joint names, hierarchy, rest pose), pose buffers and joint masks.
 *
 * A skeleton is an immutable asset: created once, then shared read-only by any number of
 * threads and characters. Joints are ordered parents before children (validated at create), so
 * every per-frame walk over the hierarchy is one forward pass.
 *
 * OWNERSHIP: a skeleton owns its names, hierarchy and rest pose (one block, copied from the
 * desc at create). Clips, graphs and crowds built for it borrow it: destroy them first (not
 * checked; a graph in use is, crowdblend/graph.h). cb_skeleton_rest_pose() and the other
 * pointers it returns stay valid until cb_skeleton_destroy. A mask built by
 * cb_skeleton_build_mask() is the caller's array.
 *
 * Poses are arrays of SoA joint groups (cb_xform_group, crowdblend/simd.h): a skeleton of n
 * joints uses cb_skeleton_group_count() groups of W joints, and the W * groups - n padding lanes
 * of the last group are identity joints that no real joint ever reads. Hosts allocate pose
 * buffers themselves: cb_skeleton_pose_bytes() bytes aligned to cb_simd_group_align().
 *
 * Coordinate convention used by the whole animation module (as glTF): +Y is up, a character
 * faces +Z, +X is its left; metres and seconds; quaternions (x, y, z, w) with w real.
 */
#ifndef CROWDBLEND_SKELETON_H
#define CROWDBLEND_SKELETON_H

#include "crowdblend/base.h"
#include "crowdblend/simd.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most joints a skeleton may have. Joint indices fit in int32_t with room to spare. */
#define CB_SKELETON_MAX_JOINTS 65535

/** Longest joint name in bytes, without the terminating zero. */
#define CB_JOINT_NAME_MAX 127

/** Writable span of joint groups: `count` groups (not joints). */
typedef struct cb_xform_group_span {
    cb_xform_group *ptr;
    size_t count;
} cb_xform_group_span;

/** Read-only span of joint groups: `count` groups (not joints). */
typedef struct cb_xform_group_cspan {
    const cb_xform_group *ptr;
    size_t count;
} cb_xform_group_cspan;

/** An immutable skeleton (opaque). */
typedef struct cb_skeleton cb_skeleton;

/**
 * What a skeleton is made of. Read during cb_skeleton_create only; the arrays are copied.
 * Zero-initialize, then set the fields (`cb_skeleton_desc d = {0}; d.joint_count = ...`).
 */
typedef struct cb_skeleton_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** Number of joints, 1..CB_SKELETON_MAX_JOINTS. Required. */
    uint32_t joint_count;
    /**
     * joint_count joint names: non-empty, at most CB_JOINT_NAME_MAX bytes, all different.
     * Required.
     */
    const char *const *names;
    /**
     * joint_count parent indices: -1 for a root, else the parent's index, which must be smaller
     * than the joint's own (parents before children; this also rules out cycles). Joint 0 is
     * therefore always a root. Required.
     */
    const int32_t *parents;
    /**
     * joint_count local rest transforms (the bind pose, and the pose used where a clip has no
     * track and when blend weights fall to zero). Rotations need not be unit (they are
     * normalized) but must not be zero. Default (NULL): identity for every joint.
     */
    const cb_xform *rest_pose;
    /** Allocator for the skeleton's memory. Default (all zero): the C library. */
    cb_allocator allocator;
    uint32_t _end_canary; /**< must be 0 */
} cb_skeleton_desc;

/**
 * Returns desc with every zero (default) field replaced by its default. A NULL desc counts as
 * all zero. Nothing is validated.
 */
CB_API cb_skeleton_desc cb_skeleton_query_desc(const cb_skeleton_desc *desc);

/**
 * Validates desc and creates a skeleton.
 * @param desc  see cb_skeleton_desc
 * @param out   receives the skeleton; untouched on failure
 * @param err   optional detail on failure (names the field and joint index)
 * @return CB_OK; CB_ERR_NULL_ARGUMENT (desc, out, names, parents or a name is NULL),
 *         CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_TOO_FEW (joint_count 0),
 *         CB_ERR_TOO_MANY (over CB_SKELETON_MAX_JOINTS), CB_ERR_INVALID_ARGUMENT (an empty or
 *         too long name), CB_ERR_DUPLICATE (two joints with one name), CB_ERR_HIERARCHY (a parent
 *         index that is not -1 and not smaller than the joint's own: forward parent, self parent
 *         or cycle), CB_ERR_NOT_FINITE (a rest transform with NaN or Inf), CB_ERR_DEGENERATE
 *         (a zero rest rotation), CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_skeleton_create(const cb_skeleton_desc *desc, cb_skeleton **out, cb_error *err);

/** Frees a skeleton. NULL does nothing. Clips, graphs and crowds built for it must be
 *  destroyed first (see OWNERSHIP). */
CB_API void cb_skeleton_destroy(cb_skeleton *skeleton);

/** Number of joints. */
CB_API uint32_t cb_skeleton_joint_count(const cb_skeleton *skeleton);

/** Number of SoA joint groups in a pose of this skeleton: ceil(joints / W). */
CB_API uint32_t cb_skeleton_group_count(const cb_skeleton *skeleton);

/**
 * Joints including the padding lanes: group_count * W, the floats of a pose's component across
 * all groups. Joint masks need not be this long: every API that takes one (crowdblend/pose.h,
 * crowdblend/graph.h) takes one float per joint (cb_skeleton_joint_count()), padded or not.
 */
CB_API uint32_t cb_skeleton_soa_joint_count(const cb_skeleton *skeleton);

/** Bytes of one pose buffer: group_count * cb_simd_group_bytes(). */
CB_API size_t cb_skeleton_pose_bytes(const cb_skeleton *skeleton);

/** Name of a joint, or NULL when joint >= joint count. Valid as long as the skeleton. */
CB_API const char *cb_skeleton_joint_name(const cb_skeleton *skeleton, uint32_t joint);

/** The joint_count parent indices (-1 for roots). Valid as long as the skeleton. */
CB_API const int32_t *cb_skeleton_parents(const cb_skeleton *skeleton);

/**
 * Looks a joint up by name (exact, case-sensitive; a linear search, meant for setup).
 * @param index  receives the joint index on success
 * @return CB_OK, CB_ERR_NULL_ARGUMENT or CB_ERR_NOT_FOUND.
 */
CB_API cb_result cb_skeleton_find_joint(const cb_skeleton *skeleton, const char *name,
                                        uint32_t *index);

/**
 * The rest pose as joint groups (padding lanes are identity). Valid as long as the skeleton;
 * may be passed where a pose is read (for example as a crossfade input).
 */
CB_API cb_xform_group_cspan cb_skeleton_rest_pose(const cb_skeleton *skeleton);

/** Rest transform of one joint (rotation normalized); identity when joint is out of range. */
CB_API cb_xform cb_skeleton_rest_xform(const cb_skeleton *skeleton, uint32_t joint);

/**
 * A 64-bit fingerprint of the joint count, names and parents. Clips remember the fingerprint
 * of the skeleton they were built for, and jobs refuse clips whose fingerprint differs.
 */
CB_API uint64_t cb_skeleton_signature(const cb_skeleton *skeleton);

/* ----------------------------------------------------------------------------------------- */
/* Joint masks                                                                               */

/**
 * One rule of a joint mask: give `weight` to the joint named `joint` and, unless joint_only,
 * to all its descendants. Rules apply in order, later ones overriding earlier ones.
 * Upper body: base 0, rule {"spine_01", 1}. Lower body: base 1, rule {"spine_01", 0}.
 */
typedef struct cb_mask_rule {
    const char *joint; /**< joint name; required */
    float weight;      /**< weight in [0, 1] */
    bool joint_only;   /**< false (default): the joint and its subtree; true: the joint only */
} cb_mask_rule;

/**
 * Builds a per-joint weight array (a joint mask) for the blend jobs (crowdblend/pose.h).
 * @param base_weight  weight of the joints no rule touches, in [0, 1]
 * @param rules        rule_count rules (may be NULL when rule_count is 0)
 * @param out          at least cb_skeleton_joint_count() floats (one per joint); entry j is
 *                     joint j's weight. When out holds cb_skeleton_soa_joint_count() floats or
 *                     more, the padding entries (joint_count .. soa_joint_count - 1) get 0;
 *                     entries past that are untouched. The pose jobs (crowdblend/pose.h) and a
 *                     graph layer's mask (crowdblend/graph.h) take either length.
 * @param err          optional detail on failure
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_SPAN_TOO_SHORT, CB_ERR_INVALID_ARGUMENT (a weight
 *         outside [0, 1] or NaN), CB_ERR_NOT_FOUND (an unknown joint name). Nothing is written
 *         on failure.
 */
CB_API cb_result cb_skeleton_build_mask(const cb_skeleton *skeleton, float base_weight,
                                        const cb_mask_rule *rules, uint32_t rule_count,
                                        cb_float_span out, cb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_SKELETON_H */
