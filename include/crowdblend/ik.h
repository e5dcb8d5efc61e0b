/**
 * @file crowdblend/ik.h
 * @brief Inverse kinematics, the post-process, step (5) of the frame: two-bone IK (a leg or an
 *        arm reaching for a point), aim IK over a joint chain (look-at, pointing a weapon),
 *        orientation warping (the lower body turned towards the velocity, the upper body not)
 *        and stride warping (the legs' strides scaled along the motion).
 *
 * Both run on one character's LOCAL pose after blending and before local-to-model, as the graph
 * runtime's post-process stack does. They rotate chain joints only: every other joint, and every
 * translation and scale, is left exactly as it was. Like ozz-animation's IKTwoBoneJob and
 * IKAimJob, each also reports its raw corrections, so an engine can apply them itself.
 *
 * CORRECTIONS
 * A correction c of joint j is a unit quaternion (x, y, z, w) in the joint's own space: the new
 * local rotation is local[j].rotation * c (Hamilton product; c acts before the old rotation, as
 * a rotation of the joint's frame). Corrections have w >= 0.
 *
 * MODEL SPACE
 * The target, pole and the chain's positions are in model space (the space of cb_ltm_job's
 * output). A job either reads the model matrices of an up-to-date cb_ltm_job run (field `model`)
 * or, when `model` is empty, computes the model transforms of the chain and its ancestors from
 * the local pose itself (a few joints: about 5 for a humanoid leg, 9 for an arm). Per frame the
 * two cost within 10 % of each other (docs/performance.md): matrices save the products but need
 * a local-to-model before the jobs and a refresh after them. Computing from the pose needs no
 * model space before the post-process and lets jobs stack on overlapping chains (a look-at over
 * the spine, then a hand on the arm below it): each sees the corrections of the jobs before
 * it. Matrices are only right while no job before has moved the chain or its ancestors.
 * After a job, model matrices are stale for the subtree of `first_joint` (see the result
 * structs): refresh them with a cb_ltm_job over the range cb_ik_refresh_range() gives (or one
 * full run after all post-process jobs).
 *
 * SCALE
 * Exact for chains whose model matrices are rotations times a uniform scale (any uniform scale
 * per joint). Under non-uniform or sheared scale no rotation of the local joints can move the
 * chain rigidly, and the jobs compute the corrections as if the scale were uniform.
 *
 * UNITS AND RANGES
 * Metres and radians. Every target, pole and model-space coordinate of the chain must be finite
 * and within +-CB_IK_MAX_COORDINATE; bones must be at least CB_IK_MIN_BONE_LENGTH long.
 *
 * Threading: jobs with distinct outputs may run concurrently on one shared skeleton. Nothing
 * allocates. Results are bit-identical for identical inputs.
 */
#ifndef CROWDBLEND_IK_H
#define CROWDBLEND_IK_H

#include "crowdblend/base.h"
#include "crowdblend/ltm.h"
#include "crowdblend/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest magnitude of a model-space coordinate (target, pole, chain positions), metres. */
#define CB_IK_MAX_COORDINATE 1.0e9f

/** Shortest bone (distance between two chain joints) the jobs accept, metres. */
#define CB_IK_MIN_BONE_LENGTH 1.0e-6f

/**
 * Default soften ratio of cb_ik_two_bone_job: softening starts at 97 % of the chain's reach
 * (the value ozz-animation's two-bone IK sample starts with, samples/two_bone_ik).
 */
#define CB_IK_DEFAULT_SOFTEN 0.97f

/** Default angle limit of cb_ik_aim_job, radians: pi, no limit. */
#define CB_IK_AIM_DEFAULT_ANGLE_LIMIT 3.14159265f

/** Most joints in an aim chain. */
#define CB_IK_AIM_MAX_JOINTS 16

/**
 * Width of the ease of cb_ik_aim_job's angle limit, as a fraction of the limit: the turn
 * follows the target up to (1 - e) * limit, then eases into the limit, which it reaches when
 * the target is (1 + e) * limit away and holds beyond.
 */
#define CB_IK_AIM_LIMIT_EASE 0.1f

/**
 * The joint range a local-to-model job must recompute after the local transforms of `joint` and
 * its descendants changed (after an IK job whose result names `joint` as its first_joint):
 * [*from, *to) with *from = joint and *to one past its last descendant. In a skeleton whose
 * subtrees are contiguous (depth-first order, as exporters write them, and the embedded
 * humanoid) the range is exactly the subtree, e.g. 5 joints for the neck instead of 59 from it
 * to the end; otherwise it also holds joints outside the subtree, which a refresh recomputes to
 * the values they had. O(joint count x depth): call it once per chain, at setup.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (skeleton, from, to), CB_ERR_INVALID_ARGUMENT (joint out
 *         of range). Nothing is written on failure.
 */
CB_API cb_result cb_ik_refresh_range(const cb_skeleton *skeleton, uint32_t joint, uint32_t *from,
                                     uint32_t *to, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Two-bone IK                                                                               */

/** What a two-bone job reports besides the pose. */
typedef struct cb_ik_two_bone_result {
    /** Correction of start_joint (see the file comment); identity when weight is 0. */
    float start_correction[4];
    /** Correction of mid_joint: a rotation about the hinge axis. */
    float mid_correction[4];
    /**
     * True when the target lies where the chain reaches it exactly: between the folded reach
     * and the start of the soft zone. Weight does not enter (a weight below 1 reaches less), but
     * a weight of 0 reports false, as the job then skips all work.
     */
    bool reached;
    /** The first joint whose model transform changed: start_joint. */
    uint32_t first_joint;
} cb_ik_two_bone_result;

/**
 * Two-bone IK: turns start_joint and mid_joint so that end_joint reaches `target`, bending at
 * mid_joint about a hinge axis, in the plane that `pole` chooses.
 *
 * The three joints form a chain: mid_joint is a descendant of start_joint and end_joint of
 * mid_joint; joints between them (twist joints) move rigidly with their parents.
 *
 * Solution. The mid joint turns about its hinge axis n until the start-to-end distance is the
 * target distance d, then the start joint swings the end onto the target direction and twists
 * about it so that n is perpendicular to the plane of the target direction and the pole, with
 * the mid joint on the pole's side. The reach is exact (law of cosines on the bone parts
 * perpendicular to n), so it also holds for hinges that are not perpendicular to the bones.
 *
 * Soft limit (Andy Nicholas, "Soft IK", softimageblog.com/archives/108, 2009; ozz-animation's
 * soften parameter). With full reach D and soft start s = soften * D, a target at distance
 * d > s is pulled in to d' = D - (D - s) exp(-(d - s) / (D - s)): equal to d with slope 1 at
 * d = s, always below both d and D, and tending to D as d grows. The chain therefore never
 * snaps straight, and a target that keeps moving away drags the end along smoothly without
 * passing it. Targets closer than the folded reach are reached as far as the chain folds
 * (a hard, continuous clamp).
 *
 * Degenerate cases. A target at the start joint keeps the chain's current direction. A pole
 * that is zero or parallel to the target direction leaves the bending plane where the swing put
 * it. A straight (or fully folded) chain with no mid_axis bends towards the pole, or about an
 * arbitrary but fixed perpendicular when there is no usable pole either.
 */
typedef struct cb_ik_two_bone_job {
    const cb_skeleton *skeleton; /**< required */
    /** The local pose: >= group count groups, aligned to cb_simd_group_align(). Required. */
    cb_xform_group_cspan pose;
    /**
     * Where the corrected pose goes: the same array as `pose` (corrected in place: only the
     * rotations of start_joint and mid_joint are written), another array of >= group count
     * aligned groups (the whole pose is copied, then corrected; no partial overlap with
     * `pose`), or empty (the job only reports its result).
     */
    cb_xform_group_span out;
    /**
     * Optional model matrices of `pose`, as cb_ltm_job writes them in `model_layout`: joint
     * count * cb_ltm_matrix_floats(model_layout) floats, of which the job reads the three chain
     * joints' matrices. They must be up to date with `pose` (not checked). Empty: the job
     * computes what it needs from `pose`.
     */
    cb_float_cspan model;
    /** Layout of `model`: MAT4 (default) or MAT3X4; QTS is refused (not a matrix). */
    cb_matrix_layout model_layout;
    uint32_t start_joint; /**< e.g. "thigh_l" or "upperarm_l" */
    uint32_t mid_joint;   /**< e.g. "calf_l" or "lowerarm_l": a descendant of start_joint */
    uint32_t end_joint;   /**< e.g. "foot_l" or "hand_l": a descendant of mid_joint */
    /** Where end_joint should go, model space. Finite, within +-CB_IK_MAX_COORDINATE. */
    float target[3];
    /**
     * Model-space direction towards which the mid joint bends (a knee or elbow points at it);
     * any length. Default (zero): no preference, the bending plane stays where the swing of the
     * chain onto the target puts it.
     */
    float pole[3];
    /**
     * The hinge axis of mid_joint in its own local space, any length: the lower bone bends by a
     * positive (right-handed) rotation about it, and it never bends the other way. For the
     * embedded humanoid: (1, 0, 0) for the knees, (-1, 0, 0) for the elbows. Default (zero): the
     * normal of the plane the chain bends in now (for a straight chain, see the degenerate
     * cases); the hinge then follows the animation, which is fine for bent limbs but picks an
     * arbitrary roll for straight ones, so rigs should give it.
     */
    float mid_axis[3];
    /**
     * How much of the correction applies, in [0, 1]: each correction is nlerped from the
     * identity by it. 0 (the zero value) changes nothing, bit for bit, and skips all work.
     */
    float weight;
    /**
     * Where softening starts, as a fraction of the full reach, in [0, 1]. Default (0):
     * CB_IK_DEFAULT_SOFTEN. 1: no softening (the chain snaps straight at full reach).
     */
    float soften;
    /** Optional result (corrections, reached, first_joint); written on success. */
    cb_ik_two_bone_result *result;
} cb_ik_two_bone_job;

/**
 * Checks a two-bone job without running it (the geometry of the pose is checked by run).
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (job, skeleton, pose; model with a count but no pointer),
 *         CB_ERR_SPAN_TOO_SHORT (pose, out, model), CB_ERR_MISALIGNED (pose, out),
 *         CB_ERR_INVALID_ARGUMENT (a joint index out of range, a bad or QTS model_layout, weight or
 *         soften outside [0, 1], a target or pole coordinate beyond CB_IK_MAX_COORDINATE, out
 *         overlapping pose partially, no output at all), CB_ERR_HIERARCHY (the joints do not form
 *         a chain), CB_ERR_NOT_FINITE (target, pole, mid_axis, weight or soften). err names the
 *         field.
 */
CB_API cb_result cb_ik_two_bone_job_validate(const cb_ik_two_bone_job *job, cb_error *err);

/**
 * Validates, then solves and writes the corrected pose and the result. Writes nothing on
 * failure.
 * @return the codes of cb_ik_two_bone_job_validate, and: CB_ERR_NOT_FINITE (NaN or Inf in a
 *         chain joint's model transform or local rotation), CB_ERR_INVALID_ARGUMENT (a chain
 *         position beyond CB_IK_MAX_COORDINATE), CB_ERR_DEGENERATE (a bone shorter than
 *         CB_IK_MIN_BONE_LENGTH).
 */
CB_API cb_result cb_ik_two_bone_job_run(const cb_ik_two_bone_job *job, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Aim IK over a chain                                                                       */

/** One joint of an aim chain. */
typedef struct cb_ik_aim_joint {
    uint32_t joint; /**< joint index */
    /**
     * The share of the remaining turn this joint takes, in [0, 1] (the full turn that would
     * aim the chain from this joint is nlerped from the identity by it). Give the end joint 1
     * for the chain to aim exactly, and the joints before it less, e.g. spine 0.2, neck 0.4,
     * head 1.
     */
    float weight;
} cb_ik_aim_joint;

/** Read-only span of aim chain joints. */
typedef struct cb_ik_aim_joint_cspan {
    const cb_ik_aim_joint *ptr;
    size_t count;
} cb_ik_aim_joint_cspan;

/** What an aim job reports besides the pose. */
typedef struct cb_ik_aim_result {
    /**
     * True when the forward ray passes through the target: not limited, the end joint's weight
     * and the job's weight 1, and the target not too close to aim at (see cb_ik_aim_job).
     */
    bool reached;
    /** True when the angle limit changed the aim. */
    bool limited;
    /** The first chain joint with a non-zero weight (0 when the job's weight is 0). */
    uint32_t first_joint;
} cb_ik_aim_result;

/**
 * Aim IK over a chain: turns the chain's joints, first to last, so that the end joint's forward
 * axis points at `target`, each joint taking its weight's share of the turn still to do (the
 * ozz-animation look-at sample's scheme, in one job).
 *
 * The aimed ray starts at `offset` (end joint space, e.g. between the eyes) and runs along
 * `forward`. Each joint turns about its own position the shortest way that puts the target on
 * the ray; then, when a pole is given, twists about the direction to the target so that the
 * end's `up` axis leans towards the pole (a head stays upright). A target closer to a joint
 * than the ray's closest approach to it cannot be aimed at; the ray then turns as close as it
 * gets.
 *
 * Angle limit: the forward axis ends at most angle_limit away from where the animation pointed
 * it. The last joint takes the angle a between the animated forward axis and the one that would
 * hit the target, and turns the axis by ease(a) instead: a itself up to (1 - e) * limit, then
 * easing in (continuous slope) to the limit, which it reaches at (1 + e) * limit and holds
 * beyond, e = CB_IK_AIM_LIMIT_EASE. The joints before it aim at the target turned back by the
 * same ease as seen from the end joint, so that they do not turn past the limit themselves.
 * A target straight behind the forward axis prefers no side: near it the limited aim swings
 * from one side to the other, as a head following someone around its back does.
 */
typedef struct cb_ik_aim_job {
    const cb_skeleton *skeleton; /**< required */
    /** The local pose: >= group count groups, aligned. Required. */
    cb_xform_group_cspan pose;
    /**
     * Where the corrected pose goes: `pose` itself (in place: only the chain joints' rotations
     * are written), another aligned array of >= group count groups (copy, then correct; no
     * partial overlap), or empty.
     */
    cb_xform_group_span out;
    /** Optional model matrices of `pose`, as in cb_ik_two_bone_job (chain joints are read). */
    cb_float_cspan model;
    /** Layout of `model`: MAT4 (default) or MAT3X4; QTS is refused (not a matrix). */
    cb_matrix_layout model_layout;
    /**
     * The chain, from the joint nearest the root to the end joint (e.g. spine_03, neck,
     * head): 1..CB_IK_AIM_MAX_JOINTS joints, each a descendant of the one before. Required.
     */
    cb_ik_aim_joint_cspan chain;
    /** The point to aim at, model space; finite, within +-CB_IK_MAX_COORDINATE. */
    float target[3];
    /** The aimed axis in the end joint's space, any length. Default (zero): (0, 0, 1). */
    float forward[3];
    /**
     * The end joint's up axis in its space, any length, not parallel to forward; used only
     * with a pole. Default (zero): (0, 1, 0).
     */
    float up[3];
    /**
     * Model-space direction the up axis should lean towards (e.g. (0, 1, 0) to keep a head
     * upright). Default (zero): no twist, each joint turns the shortest way.
     */
    float pole[3];
    /**
     * Start of the aimed ray in the end joint's space (as a child joint's translation would be,
     * so the joint's scale applies). Default (zero): the joint itself.
     */
    float offset[3];
    /**
     * Largest turn of the forward axis, radians, in (0, pi]. Default (0):
     * CB_IK_AIM_DEFAULT_ANGLE_LIMIT, no limit.
     */
    float angle_limit;
    /**
     * How much of the aim applies, in [0, 1]: every correction is nlerped from the identity by
     * it. 0 changes nothing, bit for bit, and skips all work.
     */
    float weight;
    /**
     * Optional: 4 floats per chain joint, the corrections in chain order (x, y, z, w each).
     * Entries past chain.count * 4 are untouched.
     */
    cb_float_span corrections;
    /** Optional result; written on success. */
    cb_ik_aim_result *result;
} cb_ik_aim_job;

/**
 * Checks an aim job without running it.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (job, skeleton, pose, chain; model or corrections with a
 *         count but no pointer), CB_ERR_TOO_FEW (an empty chain), CB_ERR_TOO_MANY (more than
 *         CB_IK_AIM_MAX_JOINTS), CB_ERR_SPAN_TOO_SHORT (pose, out, model, corrections),
 *         CB_ERR_MISALIGNED (pose, out), CB_ERR_INVALID_ARGUMENT (a joint index out of range,
 *         a weight outside [0, 1], angle_limit outside [0, pi], a coordinate beyond
 *         CB_IK_MAX_COORDINATE, a bad layout, partial overlap, no output), CB_ERR_HIERARCHY
 *         (a chain joint that is not a descendant of the one before), CB_ERR_NOT_FINITE (any
 *         vector or number), CB_ERR_DEGENERATE (up parallel to forward while a pole is given).
 */
CB_API cb_result cb_ik_aim_job_validate(const cb_ik_aim_job *job, cb_error *err);

/**
 * Validates, then aims and writes the corrected pose, the corrections and the result. Writes
 * nothing on failure.
 * @return the codes of cb_ik_aim_job_validate, and: CB_ERR_NOT_FINITE (NaN or Inf in a chain
 *         joint's model transform or local rotation), CB_ERR_INVALID_ARGUMENT (a chain
 *         coordinate beyond CB_IK_MAX_COORDINATE), CB_ERR_DEGENERATE (the end joint's forward
 *         or up axis vanishes in model space: a zero scale).
 */
CB_API cb_result cb_ik_aim_job_run(const cb_ik_aim_job *job, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Orientation warping                                                                       */

/** Default angle limit of cb_ik_orient_job, radians: 90 degrees. */
#define CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT 1.57079633f

/** What an orientation warp reports besides the pose. */
typedef struct cb_ik_orient_result {
    /** The turn applied to the lower body, radians: weight x the angle clamped to
     *  +-angle_limit (0 when the job skipped all work). */
    float angle;
    /** True when the limit clamped the angle. */
    bool limited;
    /** The first joint whose model transform changed: hip_joint (0 when angle is 0). */
    uint32_t first_joint;
} cb_ik_orient_result;

/**
 * Orientation warping (Unreal's Orientation Warping node, as Lyra uses it): turns the lower
 * body about the model's vertical axis (+Y) while the upper body keeps facing where it faced.
 * A character whose root faces its heading, moving at angle a to it, plays its forward clip
 * with the hip turned by a: the legs stride along the velocity, the chest and head face the
 * heading.
 *
 * With t = weight x clamp(angle, -angle_limit, angle_limit): hip_joint (and with it everything
 * below it) turns by t about the vertical axis through the hip, then each spine joint k turns
 * back by t x spine[k].weight about the vertical axis through itself. Every turn is a rotation
 * in model space (a left product on the joint's model rotation), so turns about one axis add:
 * the model rotation of a joint below the last spine joint becomes R_y(t (1 - sum of the
 * shares)) times its old one. Shares summing to 1 leave the upper body's orientation exactly
 * as the animation had it (its position moves by the hip's turn of the spine below it); a sum
 * below 1 lets the upper body turn part of the way with the legs. Translations and scales are
 * not written; the hip's own position stays.
 *
 * Exact for joints whose model matrices are rotations times a uniform scale (as the other
 * jobs). An angle of 0 (or weight 0) changes nothing, bit for bit, and skips all work.
 */
typedef struct cb_ik_orient_job {
    const cb_skeleton *skeleton; /**< required */
    /** The local pose: >= group count groups, aligned. Required. */
    cb_xform_group_cspan pose;
    /** Where the warped pose goes: `pose` itself (in place: only the rotations of the hip and
     *  the spine joints are written), another aligned array (copy, then warp), or empty. */
    cb_xform_group_span out;
    /** Optional model matrices of `pose`, as in cb_ik_two_bone_job (the chain's are read). */
    cb_float_cspan model;
    /** Layout of `model`: MAT4 (default) or MAT3X4; QTS is refused (not a matrix). */
    cb_matrix_layout model_layout;
    /** The lower body's joint: the hips' common parent, e.g. "pelvis". */
    uint32_t hip_joint;
    /** The joints that turn back, from the hip up (e.g. spine_01, spine_02, spine_03): 0 to
     *  CB_IK_AIM_MAX_JOINTS, the first a descendant of hip_joint and each a descendant of the
     *  one before; each `weight` is the joint's share of the counter-turn, in [0, 1], and the
     *  shares sum to at most 1 (1 + 1e-5). */
    cb_ik_aim_joint_cspan spine;
    /** The lower body's turn about +Y, radians (positive turns +Z towards +X, as a heading);
     *  finite. Clamped to +-angle_limit. */
    float angle;
    /** Largest turn, radians, in [0, pi]. Default (0): CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT. */
    float angle_limit;
    /** How much of the turn applies, in [0, 1] (the turn is scaled by it). */
    float weight;
    /** Optional result; written on success. */
    cb_ik_orient_result *result;
} cb_ik_orient_job;

/**
 * Checks an orientation warp without running it.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (job, skeleton, pose; spine with a count but no
 *         pointer; model with a count but no pointer), CB_ERR_TOO_MANY (more than
 *         CB_IK_AIM_MAX_JOINTS spine joints), CB_ERR_SPAN_TOO_SHORT, CB_ERR_MISALIGNED,
 *         CB_ERR_INVALID_ARGUMENT (a joint out of range, a share or weight outside [0, 1],
 *         shares summing above 1, angle_limit outside [0, pi], a bad layout, partial overlap,
 *         no output), CB_ERR_HIERARCHY (a spine joint that is not a descendant of the joint
 *         before it, the hip for the first), CB_ERR_NOT_FINITE (angle, angle_limit, weight or a
 *         share).
 */
CB_API cb_result cb_ik_orient_job_validate(const cb_ik_orient_job *job, cb_error *err);

/**
 * Validates, then warps and writes the pose and the result. Writes nothing on failure.
 * @return the codes of cb_ik_orient_job_validate, and CB_ERR_NOT_FINITE (NaN or Inf in a chain
 *         joint's model transform or local rotation), CB_ERR_INVALID_ARGUMENT (a chain
 *         coordinate beyond CB_IK_MAX_COORDINATE).
 */
CB_API cb_result cb_ik_orient_job_run(const cb_ik_orient_job *job, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Stride warping                                                                            */

/** Most legs of a stride warp. */
#define CB_IK_STRIDE_MAX_LEGS 4

/** Range of the stride scale k a stride warp accepts (a graph clamps its parameter to it). */
#define CB_IK_STRIDE_MIN_SCALE 0.25f
#define CB_IK_STRIDE_MAX_SCALE 4.0f

/**
 * Width of a stride warp's engage ramp, in |k - 1|: the legs' IK weight is the job's weight
 * times smoothstep(|k - 1| / CB_IK_STRIDE_ENGAGE) (1 from there on). Two-bone IK is not the
 * identity at its own end joint's position: the soft limit pulls a nearly straight leg in by
 * millimetres and a knee bent against its hinge (a hyperextended blend) is turned the hinge's
 * way, the knee moving by centimetres; without the ramp a k leaving 1 would apply that in one
 * frame (measured: the pops p99.9 on crowd:it without foot locking rose from 1.71 to 3.03 cm).
 */
#define CB_IK_STRIDE_ENGAGE 0.1f

/** One leg of a stride warp: a two-bone chain (thigh, calf, and the joint placed: the foot or
 *  the ball), as cb_ik_two_bone_job names it. */
typedef struct cb_ik_stride_leg {
    uint32_t start_joint, mid_joint, end_joint;
    /** The knee's hinge axis in the calf's space (cb_ik_two_bone_job.mid_axis). */
    float mid_axis[3];
} cb_ik_stride_leg;

/** What a stride warp reports besides the pose. */
typedef struct cb_ik_stride_result {
    /** Where each leg's end joint was sent, model space (the closed form below); zero for the
     *  legs past leg_count and when the job skipped all work. */
    float target[CB_IK_STRIDE_MAX_LEGS][3];
    /** Legs whose two-bone IK reached its target exactly (cb_ik_two_bone_result.reached): a
     *  leg that did not was beyond its reach or in its soft zone, and fell short smoothly. */
    uint32_t reached;
    /** True when the job changed the pose (k != 1, weight > 0, a direction). */
    bool applied;
    /** The joint whose subtree holds every changed transform (cb_ik_refresh_range): the legs'
     *  nearest common ancestor (the leg's start_joint for one leg); 0 when not applied. */
    uint32_t first_joint;
} cb_ik_stride_result;

/**
 * Stride warping (after Unreal's Stride Warping node): the legs' strides along the motion
 * direction scaled by k, so a gait played at one speed covers k times its ground: a foot on the
 * ground moves backwards under the character k times as fast, and can stand still in the
 * world while the root moves k times faster than the clip's.
 *
 * Closed form. With h the hip joint's model position, u the unit horizontal direction
 * (direction[0], 0, direction[1]) / |direction| and f the leg's end joint's animated model
 * position, the leg's target is
 *     f' = f + (k - 1) ((f - h) . u) u
 * : the component of the foot's offset from the hip's ground projection along u scaled by k,
 * the perpendicular and vertical components kept. Every leg is then solved by the two-bone IK
 * of cb_ik_two_bone_job (the same solver and soften; no pole: the knee stays in the plane the
 * hinge gives) with weight x smoothstep(|k - 1| / CB_IK_STRIDE_ENGAGE), so the step engages
 * smoothly as k leaves 1 and the foot is on its target from |k - 1| >= 0.1 on; targets beyond
 * the leg's reach soften as that job's do (never NaN, the leg eased towards full length;
 * counted in the result's reached). Joints that are
 * not in a leg's chain (the hip, the spine, the arms) are not written. The result is, bit for
 * bit, that of cb_ik_two_bone_job run on the legs one after the other, in place, towards the
 * reported targets with that weight; each leg's model transforms are computed once, for its
 * target and its solve (the legs are disjoint, so solving one does not move another's).
 *
 * k == 1, weight 0 or a zero direction change nothing, bit for bit, and skip all work.
 */
typedef struct cb_ik_stride_job {
    const cb_skeleton *skeleton; /**< required */
    /** The local pose: >= group count groups, aligned. Required. */
    cb_xform_group_cspan pose;
    /** Where the warped pose goes: `pose` itself (in place: only the legs' start and mid
     *  rotations are written) or another aligned array (copy, then warp). Required. */
    cb_xform_group_span out;
    /** Optional model matrices of `pose`, as in cb_ik_two_bone_job. */
    cb_float_cspan model;
    /** Layout of `model`: MAT4 (default) or MAT3X4; QTS is refused (not a matrix). */
    cb_matrix_layout model_layout;
    /** The joint whose ground projection the strides are measured from, e.g. "pelvis". */
    uint32_t hip_joint;
    /** The legs: 1..CB_IK_STRIDE_MAX_LEGS chains, each start_joint a descendant of hip_joint,
     *  no two sharing a joint, none below another (disjoint subtrees). Required. */
    const cb_ik_stride_leg *legs;
    uint32_t leg_count;
    /** The motion direction in model space, (x, z) horizontal (+X the character's left, +Z
     *  forward), any length; finite. Zero: no direction, nothing to do. */
    float direction[2];
    /** The stride scale k, in [CB_IK_STRIDE_MIN_SCALE, CB_IK_STRIDE_MAX_SCALE]; 1 is off. */
    float scale;
    /** How much of each leg's IK correction applies, in [0, 1] (as cb_ik_two_bone_job). */
    float weight;
    /** Where each leg's reach softens (cb_ik_two_bone_job.soften). Default (0):
     *  CB_IK_DEFAULT_SOFTEN. */
    float soften;
    /** Optional result; written on success. */
    cb_ik_stride_result *result;
} cb_ik_stride_job;

/**
 * Checks a stride warp without running it.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (job, skeleton, pose, out, legs), CB_ERR_TOO_FEW (no
 *         leg), CB_ERR_TOO_MANY (more than CB_IK_STRIDE_MAX_LEGS), CB_ERR_SPAN_TOO_SHORT,
 *         CB_ERR_MISALIGNED, CB_ERR_INVALID_ARGUMENT (a joint out of range, a scale outside
 *         its range, a weight or soften outside [0, 1], a bad layout, partial overlap, legs
 *         sharing a joint), CB_ERR_HIERARCHY (a leg that is not a chain, not below the hip, or
 * below another leg), CB_ERR_NOT_FINITE (direction, scale, weight, soften, a mid_axis). err names
 * the field.
 */
CB_API cb_result cb_ik_stride_job_validate(const cb_ik_stride_job *job, cb_error *err);

/**
 * Validates, then warps and writes the pose and the result. Writes nothing on failure.
 * @return the codes of cb_ik_stride_job_validate, and those of cb_ik_two_bone_job_run for the
 *         legs' chains (CB_ERR_NOT_FINITE, CB_ERR_INVALID_ARGUMENT, CB_ERR_DEGENERATE).
 */
CB_API cb_result cb_ik_stride_job_run(const cb_ik_stride_job *job, cb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_IK_H */
