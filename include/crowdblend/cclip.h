/**
 * @file crowdblend/cclip.h
 * @brief Compressed clips: a clip's key frames stored to a stated accuracy (error-bounded
 *        quantization, constant and default tracks dropped, key-rate reduction), decoded with
 *        SIMD over the W joints of a group so that sampling can stay fused with blending.
 *
 * THE ERROR BOUND
 * The accuracy is defined as in ACL (the animation compression library): for every joint, at
 * every source key, points on a shell of radius `shell_distance_m` around the joint (at +-d on
 * each of its three local axes) are carried to object space (local-to-model through the whole
 * hierarchy) once with the source keys and once with the decoded keys; the distance between the
 * two is the error, and its maximum over joints, keys and points must not exceed `max_error_m`.
 * Defaults: 0.1 mm at 3 cm (ACL's defaults). So an error in a hip rotation counts with the whole
 * leg it moves, and a joint may be coarse where nothing below it amplifies the error. A clip
 * that keeps fewer keys than source frames is also measured midway between source frames
 * (against the source lerped and normalized there, as the runtime samples it), since the sampler
 * interpolates between keys whose kinks are not the source's.
 *
 * WHAT IS STORED
 * The source is a uniform sequence of key frames (local transforms of every joint). The
 * compressor may keep fewer, uniformly spaced keys (key-rate reduction: the stored keys are the
 * source resampled at a lower rate, chosen per clip when that makes the clip smaller within the
 * bound). Per joint it keeps three tracks (translation, rotation, scale); each is either
 *  - default: equal to the joint's rest transform (identity for additive clips) within the
 *    bound: nothing stored;
 *  - quantized: per component an offset, a step and a width b of 0..24 bits; a key's value is
 *    offset + step * q with q an integer below 2^b (range reduction: the range is the track's
 *    own). b = 0 is a constant component. The compressor picks each track's precision as the
 *    coarsest that keeps the bound (searching per track, measured in object space).
 * Scale is stored as its deviation from 1; rotations as four components, made continuous in
 * time (each key on the side of the previous one), normalized after sampling.
 *
 * STORED FORM AND LOADED FORM
 * cb_cclip_serialize writes the stored form: per-joint data in a tight bit stream, independent
 * of the SIMD width W, so a file written by one build loads in any other. Loading (and
 * creating) packs it into joint groups of W: per group and component a common field width (the
 * largest of its W joints), fields laid out in 32-bit words, one word per lane ("vertical"
 * packing), so the decoder cuts a component out of W lanes with two shifts. Decoded values are
 * the same bits whatever W is: the loaded form only moves where each integer sits.
 *
 * DECODING
 * cb_cclip_decode writes the decoded keys of one frame as joint groups (SIMD, the group decoder
 * the fused sampler uses); cb_cclip_decode_stream_ref decodes the stored form one joint at a
 * time in plain C and is bit-identical to it (tests/test_cclip.c). cb_cclip_sample samples at a
 * normalized time like cb_pose_sample_job.
 *
 * ROOT TRACK
 * A clip's root-motion track (clip.h, ROOT MOTION: x y z yaw per source frame, relative to
 * frame 0) may be stored with it (cb_cclip_desc.root_track), quantized per component at every
 * source frame (offset, step and width as the joints' fields, range reduction over the track).
 * Its bound comes from the same max_error_m and shell: every decoded frame's position lies
 * within max_error_m / 4 of the source's (as a vector), and its yaw within
 * max_error_m / (4 max(shell_distance_m, reach)), reach being the farthest the root gets from
 * its frame-0 position. So a root delta (cb_clip_root_delta) between two times of one cycle is
 * within max_error_m of the raw track's in translation (two positions, and the start yaw turning
 * a displacement of at most 2 reach), and its yaw within max_error_m / (2 shell_distance_m): the
 * bound at the shell distance. A delta over k whole cycles adds up to k times the one-cycle
 * error. Frame 0 decodes to exactly zero.
 *
 * A compressed clip is immutable after create or load and may be shared by any threads.
 */
#ifndef CROWDBLEND_CCLIP_H
#define CROWDBLEND_CCLIP_H

#include "crowdblend/base.h"
#include "crowdblend/clip.h"
#include "crowdblend/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A compressed clip (opaque). */
typedef struct cb_cclip cb_cclip;

/** Default error bound of cb_cclip_desc, in metres (ACL's default: 0.1 mm). */
#define CB_CCLIP_DEFAULT_MAX_ERROR_M 1e-4f
/** Default shell distance of cb_cclip_desc, in metres (ACL's default: 3 cm). */
#define CB_CCLIP_DEFAULT_SHELL_M 0.03f
/** Widest quantized field, in bits (values stay exact in a float's 24-bit significand). */
#define CB_CCLIP_MAX_BITS 24
/** Newest version of the stored form: 2 adds the root track; 3 describes the tracks with a
 *  2-bit mode map and may store a rotation as three components with the fourth rebuilt from
 *  them (sqrt(1 - the others' squares)), the root track optional; 4 is version 3 in fewer
 *  bytes (a shorter header, a 5-bit code per joint, constants on a grid of 2^-23 of the track
 *  type's extent in 1-5 bytes, offsets in 1-3, the root track's offsets dropped and steps as
 *  codes). The compressor writes version 4; cb_cclip_serialize writes a clip in the version it
 *  was loaded from; cb_cclip_load reads 1..4. */
#define CB_CCLIP_STREAM_VERSION 4

/** Whether the compressor may store fewer keys than the source has. */
typedef enum cb_cclip_keys {
    _CB_CCLIP_KEYS_DEFAULT = 0, /**< CB_CCLIP_KEYS_REDUCE */
    CB_CCLIP_KEYS_REDUCE,       /**< try lower uniform key rates, keep the smallest result */
    CB_CCLIP_KEYS_SOURCE,       /**< keep every source key */
    _CB_CCLIP_KEYS_COUNT
} cb_cclip_keys;

/** How to compress a clip. Read during cb_cclip_create only; nothing is kept. */
typedef struct cb_cclip_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** The skeleton: hierarchy (for the object-space error), rest pose (default tracks) and
     *  joint count. Required; the clip keeps its signature, not a pointer. */
    const cb_skeleton *skeleton;
    /** The source keys: frame_count frames of joint_count local transforms each, frame-major
     *  (frame f, joint j at [f * joint_count + j]), uniformly spaced in time. Rotations need
     *  not be unit or continuous (they are normalized and made continuous), must not be zero.
     *  Required. */
    cb_xform_cspan frames;
    /** Number of source frames, 2..CB_CLIP_MAX_FRAMES (16384). Required. */
    uint32_t frame_count;
    /** The keys are differences to a reference pose (an additive clip): default tracks are
     *  then the identity, not the rest pose. Default: false. */
    bool additive;
    /** Largest error allowed, in metres, > 0 and finite. Default (0):
     *  CB_CCLIP_DEFAULT_MAX_ERROR_M. */
    float max_error_m;
    /** Radius of the error shell, in metres, > 0 and finite. Default (0):
     *  CB_CCLIP_DEFAULT_SHELL_M. */
    float shell_distance_m;
    /** Key-rate reduction. Default: CB_CCLIP_KEYS_REDUCE. */
    cb_cclip_keys keys;
    /** The root-motion track to store with the keys (see ROOT TRACK): frame_count * 4 finite
     *  floats, x y z yaw per source frame, frame 0 all zero (cb_clip_read_root_track()).
     *  Default (NULL): none. */
    cb_float_cspan root_track;
    /** Allocator for the clip and the compressor's working memory. Default: the C library. */
    cb_allocator allocator;
    uint32_t _end_canary; /**< must be 0 */
} cb_cclip_desc;

/** Returns desc with every zero (default) field resolved. A NULL desc counts as all zero. */
CB_API cb_cclip_desc cb_cclip_query_desc(const cb_cclip_desc *desc);

/**
 * Validates desc, compresses the frames and creates the clip in its loaded form.
 * Compression is an offline step: it searches per track and per key rate, measuring the error
 * in double precision (milliseconds to a second per clip; docs/performance.md has figures).
 * @param out  receives the clip; untouched on failure
 * @param err  optional detail on failure (names the field, frame or joint)
 * @return CB_OK; CB_ERR_NULL_ARGUMENT (desc, out, skeleton, frames), CB_ERR_CANARY,
 *         CB_ERR_ALLOCATOR, CB_ERR_INVALID_ARGUMENT (frame_count outside 2..16384, a bound or
 *         shell distance <= 0, a bad enum value), CB_ERR_SPAN_TOO_SHORT (frames),
 *         CB_ERR_NOT_FINITE (a value, the bound, the shell distance), CB_ERR_DEGENERATE (a zero
 *         rotation), CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_cclip_create(const cb_cclip_desc *desc, cb_cclip **out, cb_error *err);

/** Frees a compressed clip. NULL does nothing. */
CB_API void cb_cclip_destroy(cb_cclip *clip);

/** What a compressed clip holds and how well it meets its bound. */
typedef struct cb_cclip_info {
    uint32_t joint_count;
    uint32_t source_frames;   /**< frames of the source */
    uint32_t keys;            /**< keys stored (<= source_frames) */
    bool has_scale;           /**< some decoded scale differs from 1 */
    uint32_t tracks_default;  /**< tracks equal to the rest pose: nothing stored */
    uint32_t tracks_constant; /**< quantized tracks whose components are all 0 bits */
    uint32_t tracks_animated; /**< the other quantized tracks */
    uint32_t bits_per_key;    /**< bits of one key of the whole skeleton, stored form */
    size_t stream_bytes;      /**< size of the stored form (cb_cclip_serialize) */
    size_t root_track_bytes;  /**< of which the root track (0 without one) */
    size_t bytes;             /**< memory held by the loaded clip (this build's W) */
    size_t source_bytes;      /**< the source as raw 32-bit keys: joints x frames x 40 bytes */
    float max_error_m;        /**< the bound the clip was compressed to */
    float shell_distance_m;   /**< its shell distance */
    float measured_error_m;   /**< the largest shell error measured at create, over all joints
                                   and source frames (stored in the stream) */
} cb_cclip_info;

/** Information on a clip (all zero for NULL). */
CB_API cb_cclip_info cb_cclip_query_info(const cb_cclip *clip);

/** Stored keys (>= 2). */
CB_API uint32_t cb_cclip_key_count(const cb_cclip *clip);
/** Joints of the skeleton the clip was built for. */
CB_API uint32_t cb_cclip_joint_count(const cb_cclip *clip);
/** Signature of the skeleton the clip was built for (cb_skeleton_signature()). */
CB_API uint64_t cb_cclip_skeleton_signature(const cb_cclip *clip);

/**
 * Writes the decoded root track (source_frames * 4 floats: x y z yaw per source frame, frame 0
 * zero; see ROOT TRACK). The same bits in every build.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FOUND (the clip stores no root track),
 *         CB_ERR_SPAN_TOO_SHORT (nothing written).
 */
CB_API cb_result cb_cclip_read_root_track(const cb_cclip *clip, cb_float_span out);

/* ----------------------------------------------------------------------------------------- */
/* Stored form                                                                                */

/** Bytes cb_cclip_serialize writes. */
CB_API size_t cb_cclip_stream_bytes(const cb_cclip *clip);

/**
 * Writes the stored form (little-endian, independent of W) into dst.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_SPAN_TOO_SHORT (capacity below
 *         cb_cclip_stream_bytes(); nothing written).
 */
CB_API cb_result cb_cclip_serialize(const cb_cclip *clip, void *dst, size_t capacity);

/** What cb_cclip_load needs besides the bytes. */
typedef struct cb_cclip_load_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** The skeleton the clip was compressed for (its rest pose fills default tracks; the
     *  signature must match). Required. */
    const cb_skeleton *skeleton;
    /** Allocator for the loaded clip. Default: the C library. */
    cb_allocator allocator;
    uint32_t _end_canary; /**< must be 0 */
} cb_cclip_load_desc;

/**
 * Validates a stored form and loads it, packing the joints into groups of W.
 * @return CB_OK; CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_PARSE (bad magic,
 *         truncated, a field out of range, trailing bytes), CB_ERR_UNSUPPORTED (another
 *         version), CB_ERR_NOT_FINITE (an offset or step), CB_ERR_MISMATCH (built for another
 *         skeleton), CB_ERR_OUT_OF_MEMORY. Never reads outside [bytes, bytes + size).
 */
CB_API cb_result cb_cclip_load(const void *bytes, size_t size, const cb_cclip_load_desc *desc,
                               cb_cclip **out, cb_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Decoding                                                                                   */

/**
 * Decodes stored key `key` into joint groups (SIMD over the W joints of a group): translation,
 * rotation as stored (four decoded components, not normalized), scale 1 + the decoded
 * deviation. Padding lanes are identity.
 * @param out  >= cb_skeleton_group_count() groups, aligned to cb_simd_group_align()
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_INVALID_ARGUMENT (key >= key count),
 *         CB_ERR_SPAN_TOO_SHORT, CB_ERR_MISALIGNED.
 */
CB_API cb_result cb_cclip_decode(const cb_cclip *clip, uint32_t key, cb_xform_group_span out);

/**
 * Scalar reference decoder of the stored form: key `key` of the stream, one joint at a time,
 * into joint_count transforms (as cb_cclip_decode: rotation as stored, scale 1 + deviation).
 * Bit-identical to cb_cclip_decode of the loaded clip.
 * @return as cb_cclip_load, plus CB_ERR_INVALID_ARGUMENT (key), CB_ERR_SPAN_TOO_SHORT (out).
 */
CB_API cb_result cb_cclip_decode_stream_ref(const cb_skeleton *skeleton, const void *bytes,
                                            size_t size, uint32_t key, cb_xform_span out,
                                            cb_error *err);

/**
 * Samples at a normalized time t (wrapped into [0, 1) when `looping`, else clamped) into joint
 * groups: keys i and i + 1 around t, each decoded component lerped as a + f (b - a) (a
 * component constant in the clip is its value), the rotation then normalized (at f = 1, a
 * clamped clip's end, key i + 1 alone: its bits); the same arithmetic as cb_pose_sample_job
 * on the clip.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (t), CB_ERR_SPAN_TOO_SHORT,
 *         CB_ERR_MISALIGNED.
 */
CB_API cb_result cb_cclip_sample(const cb_cclip *clip, float t, bool looping,
                                 cb_xform_group_span out);

/* ----------------------------------------------------------------------------------------- */
/* Decoding into an uncompressed clip (a pack loaded with CB_PACK_CLIP_FORM_RAW)                */

/**
 * Creates an uncompressed clip (crowdblend/clip.h) holding what `clip` decodes to at each of its
 * source frames: the stored keys lerped to the frame (as the compressor measured its error),
 * rotations normalized and made continuous; a looping clip's last frame is set to its first.
 * Packs use it when loaded with CB_PACK_CLIP_FORM_RAW (crowdblend/pack.h); by default they keep
 * the compressed form and the pose jobs sample it directly. Every field of `desc` but `frames`
 * and `frame_count` is used as given (name, duration, wrap, root motion and its track of 4 floats
 * per source frame, markers, allocator), except that a clip storing its own root track uses that
 * (decoded) and ignores desc->root_track; `has_scale` must be true when the clip stores a scale
 * track (without it, the decoded scale is dropped: default tracks decode to the rest scale, which
 * the clip's source without scale did not have), and `additive` must match the clip. The frames are
 * the same bits in every build.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_ALLOCATOR, CB_ERR_MISMATCH (another skeleton, the
 *         additive flag, scale), CB_ERR_SPAN_TOO_SHORT (root_track), CB_ERR_OUT_OF_MEMORY, and
 *         the codes of cb_clip_create_from_frames.
 */
CB_API cb_result cb_cclip_to_clip(const cb_cclip *clip, const cb_clip_frames_desc *desc,
                                  cb_clip **out, cb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_CCLIP_H */
