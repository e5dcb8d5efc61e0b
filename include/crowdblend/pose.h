/**
 * @file crowdblend/pose.h
 * @brief Pose jobs, step (4) of the frame: sample one clip; fused sample + blend of many clips
 *        with override and additive layers, joint masks and rest-pose fallback; and a slerp
 *        crossfade of two poses.
 *
 * Jobs are plain structs: fill in the spans and parameters, then call run (which validates
 * first). Nothing allocates, locks or calls the system. Poses are caller-owned arrays of joint
 * groups (crowdblend/skeleton.h); only the first cb_skeleton_group_count() groups of an output
 * are written, and in them the padding lanes are set to identity.
 *
 * Threading: a job reads its inputs and writes only its output, so jobs with distinct outputs
 * may run concurrently on shared skeletons and clips. Results are bit-identical for identical
 * inputs (no dependence on thread, call order or previous calls).
 *
 * FUSED SAMPLE + BLEND (cb_pose_blend_job)
 * For each joint group, the job samples every entry straight from the clip's two frames around
 * its time and accumulates, with no intermediate pose per clip:
 *   1. NORMAL entries (the default) form the base pose, the weighted mean of their samples.
 *      Per joint the weight is entry.weight * mask[joint] (mask 1 when absent); translation and
 *      scale are weighted means, rotations are summed (each flipped into the hemisphere of the
 *      running sum: the shorter arc) and normalized once at the end ("nlerp" blending). Entries
 *      whose weight is below CB_BLEND_WEIGHT_EPSILON are not sampled.
 *      Rest-pose fallback: where a joint's weight sum s is below `threshold`, the rest pose joins
 *      with weight threshold - s, so the pose fades smoothly into the rest pose as all weights go
 *      to zero (ozz-animation's BlendingJob does the same).
 *   2. OVERRIDE entries, in order: pose = nlerp(pose, sample, a) per joint, with
 *      a = clamp(weight * mask[joint], 0, 1). An upper-body override is an OVERRIDE entry with
 *      an upper-body mask.
 *   3. ADDITIVE entries (additive clips only), in order: with a = weight * mask[joint] and
 *      the sampled delta (dt, dq, ds), dq taken on the identity's side (w >= 0),
 *      t += a dt, q = q * nlerp(identity, dq, a), s *= 1 + a (ds - 1). a may exceed 1
 *      (exaggeration). A delta of identity (a frame equal to its reference) leaves the pose
 *      bit-identical.
 * Sampling a clip between frames i and i + 1 at fraction f: translation and scale are lerped,
 * rotation is (1 - f) q_i + f q_(i+1) (the frames are stored in one hemisphere), normalized with
 * everything else at the end (an OVERRIDE sample is normalized before its nlerp). The
 * hemisphere test of a NORMAL sample uses its first frame q_i against the running sum. A
 * compressed clip (crowdblend/pack.h, COMPRESSED CLIPS) is sampled the same way, its decoded
 * keys in place of frames; cb_pose_sample_job lerps each decoded component of one as
 * a + f (b - a) (at f = 1, a clamped clip's end, b itself): the same values up to float
 * rounding, not the same bits between keys. So a
 * blend of one clip at weight 1 gives cb_pose_sample_job's bits for an uncompressed clip
 * everywhere, and for a compressed one at its keys only: between them the two differ by
 * float rounding (up to 1.8e-7 per rotation component measured; tests/test_cclip.c).
 * Rotations are normalized once, after all layers.
 *
 * Accuracy (tests/test_pose.c, test_anim_accuracy.c, against a double-precision reference of
 * this contract): within 5e-7 per rotation component and 3e-7 m per translation for poses of
 * unit scale; after local-to-model on skeletons of up to 64 joints, joint positions within
 * 6e-6 m and rotations within 3e-6 rad (docs/performance.md has the measured figures).
 */
#ifndef CROWDBLEND_POSE_H
#define CROWDBLEND_POSE_H

#include "crowdblend/base.h"
#include "crowdblend/clip.h"
#include "crowdblend/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Entries with a weight below this (after the mask) are skipped. */
#define CB_BLEND_WEIGHT_EPSILON 1e-5f

/** Default rest-pose fallback threshold of cb_pose_blend_job (as ozz-animation's). */
#define CB_BLEND_DEFAULT_THRESHOLD 0.1f

/* ----------------------------------------------------------------------------------------- */
/* Sampling one clip                                                                          */

/**
 * Samples one clip at a normalized time into a pose: translation and scale lerped between the
 * two frames, rotation nlerped. For an additive clip the pose holds the deltas.
 */
typedef struct cb_pose_sample_job {
    const cb_clip *clip;     /**< required */
    float time;              /**< normalized time; wrapped (looping) or clamped; finite */
    cb_xform_group_span out; /**< >= the clip's group count, aligned to cb_simd_group_align() */
} cb_pose_sample_job;

/**
 * Checks a sample job.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (time), CB_ERR_SPAN_TOO_SHORT,
 *         CB_ERR_MISALIGNED.
 */
CB_API cb_result cb_pose_sample_job_validate(const cb_pose_sample_job *job, cb_error *err);
/** Validates, then samples. Writes nothing on failure. */
CB_API cb_result cb_pose_sample_job_run(const cb_pose_sample_job *job, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Fused sample + blend                                                                       */

/** How an entry of a blend job combines with the pose (see the file comment). */
typedef enum cb_blend_mode {
    _CB_BLEND_MODE_DEFAULT = 0, /**< CB_BLEND_MODE_NORMAL */
    CB_BLEND_MODE_NORMAL,       /**< joins the weighted mean that forms the base pose */
    CB_BLEND_MODE_OVERRIDE,     /**< nlerps the pose towards the sample by weight * mask */
    CB_BLEND_MODE_ADDITIVE,     /**< adds an additive clip's delta, scaled by weight * mask */
    _CB_BLEND_MODE_COUNT
} cb_blend_mode;

/** One clip in a blend. */
typedef struct cb_blend_entry {
    const cb_clip *clip; /**< required; built for the job's skeleton */
    float time;          /**< normalized time; wrapped (looping clips) or clamped; finite */
    float weight;        /**< >= 0, finite; NORMAL weights need not sum to 1 */
    cb_blend_mode mode;  /**< default NORMAL; ADDITIVE if and only if the clip is additive */
    /**
     * Optional joint mask: per-joint factors on the weight, one float per joint: at least
     * cb_skeleton_joint_count() floats (cb_skeleton_build_mask()), each finite and >= 0; entry
     * j is joint j's factor. A longer span (e.g. padded to cb_skeleton_soa_joint_count()) is
     * accepted and entries past the joints are ignored; nothing past `count` is read. A padded
     * and an unpadded mask give bit-identical poses. Default (NULL): 1 for every joint. Not
     * checked per value at run time: a negative or NaN factor gives an undefined (but
     * memory-safe) pose for that joint. Shorter than the joint count: CB_ERR_SPAN_TOO_SHORT.
     */
    cb_float_cspan mask;
} cb_blend_entry;

/** Read-only span of blend entries. */
typedef struct cb_blend_entry_cspan {
    const cb_blend_entry *ptr;
    size_t count;
} cb_blend_entry_cspan;

/** Fused sample + blend of any number of clips into one local pose. */
typedef struct cb_pose_blend_job {
    const cb_skeleton *skeleton;  /**< required */
    cb_blend_entry_cspan entries; /**< may be empty: the result is then the rest pose */
    /**
     * Rest-pose fallback threshold: where a joint's NORMAL weight sum is below it, the rest pose
     * fills the gap. Default (0): CB_BLEND_DEFAULT_THRESHOLD. Must be finite and >= 0 (a value
     * of 0 means the default, so the base weight sum is never zero).
     */
    float threshold;
    /** The local pose written: >= group count groups, aligned to cb_simd_group_align(). */
    cb_xform_group_span out;
} cb_pose_blend_job;

/**
 * Checks a blend job without running it.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (job, skeleton, out, entries with count > 0, a clip),
 *         CB_ERR_SPAN_TOO_SHORT (out, a mask shorter than the joint count), CB_ERR_MISALIGNED
 *         (out), CB_ERR_NOT_FINITE
 *         (a weight, time or the threshold), CB_ERR_INVALID_ARGUMENT (a negative weight or
 *         threshold, a bad mode), CB_ERR_MISMATCH (a clip built for another skeleton, an additive
 *         clip in a non-ADDITIVE entry or the reverse). err names the entry.
 */
CB_API cb_result cb_pose_blend_job_validate(const cb_pose_blend_job *job, cb_error *err);

/** Validates, then blends. Writes nothing on failure. */
CB_API cb_result cb_pose_blend_job_run(const cb_pose_blend_job *job, cb_error *err);

/**
 * Scalar reference of cb_pose_blend_job_run: the same contract, one joint at a time in plain
 * float C. The baseline of the benchmarks and the second path of the equivalence tests.
 */
CB_API cb_result cb_pose_blend_job_run_ref(const cb_pose_blend_job *job, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Crossfade of two poses                                                                     */

/**
 * out = slerp(from, to, weight * mask[joint]) per joint, translation and scale lerped. True
 * slerp moves at constant angular speed, for transitions where nlerp's speed distortion would
 * show (on a 90-degree turn nlerp starts about 10 % slow and is about 5 % fast mid-way).
 */
typedef struct cb_pose_crossfade_job {
    const cb_skeleton *skeleton; /**< required: sets the group count */
    cb_xform_group_cspan from;   /**< >= group count groups, aligned */
    cb_xform_group_cspan to;     /**< >= group count groups, aligned */
    float weight;                /**< in [0, 1]: 0 gives from, 1 gives to */
    cb_float_cspan mask;         /**< optional, as cb_blend_entry.mask: >= joint count */
    /** >= group count groups, aligned; may be the same array as from or to. */
    cb_xform_group_span out;
} cb_pose_crossfade_job;

/**
 * Checks a crossfade job.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_SPAN_TOO_SHORT (a pose, or a mask shorter than
 *         the joint count), CB_ERR_MISALIGNED, CB_ERR_NOT_FINITE (weight),
 *         CB_ERR_INVALID_ARGUMENT (weight outside [0, 1]).
 */
CB_API cb_result cb_pose_crossfade_job_validate(const cb_pose_crossfade_job *job, cb_error *err);
/** Validates, then crossfades. Writes nothing on failure. */
CB_API cb_result cb_pose_crossfade_job_run(const cb_pose_crossfade_job *job, cb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_POSE_H */
