/**
 * @file crowdblend/clip.h
 * @brief Animation clips: built from keyframe tracks, resampled to a uniform rate, stored as
 *        frame-major SoA joint groups; root motion; memory figures.
 *
 * BUILDING
 * A clip is built once from keyframe tracks (any key times per joint and channel) for one
 * skeleton. Each track is resampled to a uniform rate (30 Hz by default): translation and scale
 * linearly, rotation by slerp, all in double precision. The rate is adjusted so that a whole
 * number of intervals N = round(duration * rate) spans the duration exactly; the clip stores
 * N + 1 frames, frame f at time f * duration / N. Joints or channels without a track take the
 * skeleton's rest pose. Rotations are kept in one hemisphere along time (frame f + 1 is flipped
 * to the side of frame f), so sampling never needs to flip between two adjacent frames.
 *
 * STORAGE
 * Frame-major: all joint groups of frame 0, then of frame 1, ... Sampling at a time reads the
 * two adjacent frames, which sit next to each other. Per joint and frame a clip stores
 * translation and rotation (28 bytes), plus scale (12 bytes more) only when some joint of the
 * clip is scaled; padding lanes count too (cb_clip_bytes_per_joint_frame()).
 *
 * PLAYBACK
 * Sampling uses a normalized time: 0 is the start, 1 the end. Looping clips wrap any time into
 * [0, 1) and their last stored frame is a copy of the first, so the last interval blends back
 * into frame 0 without a seam. Clamped clips clamp the time to [0, 1].
 *
 * ROOT MOTION
 * For non-additive clips, the motion of one root joint (joint 0 by default) is taken out of the
 * animation: its translation in the ground plane (X, Z; optionally Y) and its yaw (heading about
 * +Y). The stored frames then play in place, and the clip reports the motion separately: the
 * average velocity, the displacement over one cycle, and the root delta between any two
 * normalized times, including across loop wraps. Root-motion axes are model axes: +X left, +Y
 * up, +Z forward; a positive yaw turns forward (+Z) towards +X (left). These are the library's
 * one convention for the character's frame (docs/architecture.md, Conventions): direction
 * parameters use the same axes (a blend space's "blend_0", the example graphs' "vx", the
 * processors' lateral y of crowdblend/params.h are all velocities to the left), so a character
 * commanded along +x moves along +x. glTF fixes them: a model faces +Z with +Y up, so its left
 * is +X.
 *
 * The reference frame is the root's ground frame at the clip's first frame: its extracted
 * position m(0) (X, Z, and Y for the XYZ modes) and, for the _YAW modes, its heading psi(0),
 * the angle of the root's +Z axis projected on the ground. Both are removed from the stored
 * pose, so at frame f the pose holds M(f)^-1 root(f) with M(f) = (m(f), psi(f)): the root stands
 * over the model origin and, with yaw extraction, faces +Z. Deltas are expressed in that same
 * frame, so a character walks along its own forward axis whatever the source root's start
 * position and heading (a root that starts at (1, 0, 2) facing +X walks along the character's
 * +Z). Without yaw extraction the heading stays in the pose and deltas are in model axes, so the
 * pose and its motion still agree. The removed start, M(0), is kept (cb_clip_root_motion.origin):
 * the source pose at normalized time u is M(0) * delta(0, u) * pose(u).
 *
 * ADDITIVE CLIPS
 * An additive clip stores, per frame, the difference to a reference pose (its first frame, the
 * rest pose, or a given pose): translation t - t_ref, rotation conj(q_ref) * q, scale s / s_ref.
 * Applied with weight w on a pose (crowdblend/pose.h): t + w dt, q * nlerp(identity, dq, w),
 * s * (1 + w (ds - 1)). A delta of identity changes nothing, bit for bit.
 *
 * MARKERS
 * A clip may carry named markers at times within it (e.g. "foot_plant_l" where the left foot
 * touches down). They are given in seconds in the desc, like key times, and reported as
 * normalized times, sorted. Each name also has a 32-bit hash (cb_name_hash, FNV-1a), so
 * the per-frame code compares integers: a graph looks a name up once and keeps the hash.
 * Markers serve two purposes, both in crowdblend/sync.h: they are reported as events when
 * playback crosses them, and they align clips in a sync group (unless marked event_only).
 *
 * Clips are immutable after create and may be shared by any number of threads.
 */
#ifndef CROWDBLEND_CLIP_H
#define CROWDBLEND_CLIP_H

#include "crowdblend/base.h"
#include "crowdblend/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An immutable clip (opaque). */
typedef struct cb_clip cb_clip;

/** Default sample rate of clips, in Hz. */
#define CB_CLIP_DEFAULT_RATE_HZ 30.0f

/** Most stored frames a clip may have (about 9 minutes at 30 Hz). */
#define CB_CLIP_MAX_FRAMES 16384

/** Which part of a joint transform a track animates. 0 is invalid, so a zeroed track fails. */
typedef enum cb_channel {
    _CB_CHANNEL_INVALID = 0,
    CB_CHANNEL_TRANSLATION, /**< 3 floats per key: x, y, z (metres) */
    CB_CHANNEL_ROTATION,    /**< 4 floats per key: x, y, z, w (any non-zero length) */
    CB_CHANNEL_SCALE,       /**< 3 floats per key: x, y, z */
    _CB_CHANNEL_COUNT
} cb_channel;

/** Keyframes of one channel of one joint. */
typedef struct cb_clip_track {
    /** Joint index; used when joint_name is NULL. */
    uint32_t joint;
    /** Optional joint name, looked up in the skeleton (then `joint` is ignored). */
    const char *joint_name;
    /** The channel animated; required. */
    cb_channel channel;
    /** Number of keys, >= 1. */
    uint32_t key_count;
    /** key_count key times in seconds, strictly increasing, each in [0, duration_s]. */
    const float *times;
    /** key_count * 3 (translation, scale) or key_count * 4 (rotation) finite values. */
    const float *values;
} cb_clip_track;

/** Playback at the ends of a clip. */
typedef enum cb_clip_wrap {
    _CB_CLIP_WRAP_DEFAULT = 0, /**< CB_CLIP_WRAP_LOOP */
    CB_CLIP_WRAP_LOOP,         /**< times wrap into [0, 1); the end blends into the start */
    CB_CLIP_WRAP_CLAMP,        /**< times clamp to [0, 1] */
    _CB_CLIP_WRAP_COUNT
} cb_clip_wrap;

/** Which components of the root joint's motion are extracted as root motion. */
typedef enum cb_root_motion {
    _CB_ROOT_MOTION_DEFAULT = 0, /**< CB_ROOT_MOTION_XZ_YAW (additive clips: NONE) */
    CB_ROOT_MOTION_NONE,         /**< nothing extracted; the root moves in the pose */
    CB_ROOT_MOTION_XZ,           /**< ground-plane translation */
    CB_ROOT_MOTION_XZ_YAW,       /**< ground-plane translation and heading */
    CB_ROOT_MOTION_XYZ,          /**< all translation */
    CB_ROOT_MOTION_XYZ_YAW,      /**< all translation and heading */
    _CB_ROOT_MOTION_COUNT
} cb_root_motion;

/** Whether a clip is additive, and against which reference pose. */
typedef enum cb_additive {
    _CB_ADDITIVE_DEFAULT = 0, /**< CB_ADDITIVE_NONE */
    CB_ADDITIVE_NONE,         /**< an ordinary clip */
    CB_ADDITIVE_FIRST_FRAME,  /**< differences to the clip's own first frame */
    CB_ADDITIVE_REST_POSE,    /**< differences to the skeleton's rest pose */
    CB_ADDITIVE_CUSTOM,       /**< differences to cb_clip_desc.additive_reference */
    _CB_ADDITIVE_COUNT
} cb_additive;

/** Longest marker name in bytes, without the terminating zero. */
#define CB_MARKER_NAME_MAX 63

/** Most markers one clip may carry. */
#define CB_CLIP_MAX_MARKERS 1024

/** A named marker of a clip, as given to cb_clip_create. */
typedef struct cb_clip_marker_desc {
    /** Name: 1..CB_MARKER_NAME_MAX bytes, copied; required. One name may appear at several
     *  times (a clip of two steps has two "foot_plant_l"), but not twice at the same time. */
    const char *name;
    /** Time in seconds from the start of the clip, finite: in [0, duration) for looping clips
     *  (the end is the start again: put such a marker at 0), [0, duration] for clamped ones. */
    float time_s;
    /** Default (false): the marker is an event and a sync point. true: an event only; marker
     *  sync ignores it (for markers whose order differs between clips of one sync group, e.g.
     *  foot lift-off, which comes before the other foot's plant when walking and after it when
     *  running). */
    bool event_only;
} cb_clip_marker_desc;

/**
 * A clip compressed at creation (cb_clip_desc.compression): the resampled frames are compressed
 * to an error bound on a shell around every joint, in object space (crowdblend/cclip.h, THE
 * ERROR BOUND: the compressor `crowdblend import` uses, keeping fewer keys where that meets the
 * bound), and the clip keeps only the compressed keys, which the pose jobs decode in place.
 * Zero fields take the defaults.
 */
typedef struct cb_clip_compression {
    /** Largest error allowed, in metres, > 0 and finite. Default (0): 0.1 mm
     *  (CB_CCLIP_DEFAULT_MAX_ERROR_M). */
    float max_error_m;
    /** Radius of the error shell, in metres, > 0 and finite. Default (0): 3 cm
     *  (CB_CCLIP_DEFAULT_SHELL_M). */
    float shell_distance_m;
} cb_clip_compression;

/** How to build a clip. Read during cb_clip_create only; nothing is kept. */
typedef struct cb_clip_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** Name, at most CB_JOINT_NAME_MAX bytes, copied. Default (NULL): "clip". */
    const char *name;
    /** The skeleton the clip animates; required. The clip keeps its signature, not a pointer. */
    const cb_skeleton *skeleton;
    /** Duration in seconds, > 0 and finite; required. */
    float duration_s;
    /** Resampling rate in Hz, > 0. Default (0): CB_CLIP_DEFAULT_RATE_HZ. */
    float sample_rate_hz;
    /** track_count tracks; at most one per (joint, channel). May be NULL when track_count is 0. */
    const cb_clip_track *tracks;
    uint32_t track_count;
    /** Playback at the ends. Default: loop. */
    cb_clip_wrap wrap;
    /** Root-motion extraction. Default: ground plane and yaw (none for additive clips). */
    cb_root_motion root_motion;
    /** Joint whose motion is extracted; must be a root (parent -1). Default: 0. */
    uint32_t root_joint;
    /** Additive clip and its reference. Default: not additive. */
    cb_additive additive;
    /** With CB_ADDITIVE_CUSTOM: joint_count local transforms, the reference pose. */
    cb_xform_cspan additive_reference;
    /** marker_count markers, in any order (stored sorted by time, ties in the given order);
     *  at most CB_CLIP_MAX_MARKERS. May be NULL when marker_count is 0. Default: none. */
    const cb_clip_marker_desc *markers;
    uint32_t marker_count;
    /** Compress the clip at creation to this bound (see cb_clip_compression): the clip then
     *  holds the compressed keys (cb_clip_compressed_form()), a fraction of its frames' memory
     *  (docs/performance.md), and samples them in place; creation takes milliseconds to a second (a
     * search per track and key rate). Default (NULL): raw frames, the fastest to sample. */
    const cb_clip_compression *compression;
    /** Allocator for the clip's memory and the build's temporary buffers. Default: C library. */
    cb_allocator allocator;
    uint32_t _end_canary; /**< must be 0 */
} cb_clip_desc;

/** Returns desc with every zero (default) field resolved. A NULL desc counts as all zero. */
CB_API cb_clip_desc cb_clip_query_desc(const cb_clip_desc *desc);

/**
 * Validates desc, resamples its tracks and creates the clip; with desc->compression, then
 * compresses the frames (the resampled clip is the compressor's source: its error is measured
 * against them, at every frame and, where keys are dropped, between frames).
 * @param out  receives the clip; untouched on failure
 * @param err  optional detail on failure (names the track, key and field)
 * @return CB_OK; CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_INVALID_ARGUMENT
 *         (duration, rate, an enum value, a channel, key times not increasing or outside
 *         [0, duration], an empty track, a root joint that is not a root, a name too long),
 *         CB_ERR_NOT_FINITE (a key time or value, a reference transform), CB_ERR_DEGENERATE
 *         (a zero rotation key, a zero reference scale), CB_ERR_MISMATCH (a track joint index
 *         outside the skeleton, a reference pose shorter than the skeleton),
 *         CB_ERR_NOT_FOUND (a track joint name not in the skeleton), CB_ERR_DUPLICATE (two tracks
 *         for one joint and channel), CB_ERR_TOO_MANY (more than CB_CLIP_MAX_FRAMES frames),
 *         CB_ERR_OUT_OF_MEMORY.
 *         Markers: CB_ERR_NULL_ARGUMENT (markers NULL with a count, a NULL name),
 *         CB_ERR_TOO_MANY (more than CB_CLIP_MAX_MARKERS), CB_ERR_INVALID_ARGUMENT (an empty or
 *         too long name, a time outside the clip), CB_ERR_NOT_FINITE (a time),
 *         CB_ERR_DUPLICATE (one name twice at the same time, or two names with the same hash).
 *         Compression: CB_ERR_NOT_FINITE (a bound or shell distance NaN or infinite),
 *         CB_ERR_INVALID_ARGUMENT (a bound or shell distance < 0, a bound no 24-bit field can
 *         meet), CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_clip_create(const cb_clip_desc *desc, cb_clip **out, cb_error *err);

/** Frees a clip. NULL does nothing. */
CB_API void cb_clip_destroy(cb_clip *clip);

/** The clip's name. */
CB_API const char *cb_clip_name(const cb_clip *clip);
/** Duration in seconds. */
CB_API float cb_clip_duration(const cb_clip *clip);
/** Stored frames, N + 1 (the last is the end of the last interval). */
CB_API uint32_t cb_clip_frame_count(const cb_clip *clip);
/** Actual rate after resampling, N / duration, in Hz. */
CB_API float cb_clip_sample_rate(const cb_clip *clip);
/** Joints of the skeleton the clip was built for. */
CB_API uint32_t cb_clip_joint_count(const cb_clip *clip);
/** Whether times wrap (CB_CLIP_WRAP_LOOP) rather than clamp. */
CB_API bool cb_clip_is_looping(const cb_clip *clip);
/** Whether the clip stores differences to a reference pose. */
CB_API bool cb_clip_is_additive(const cb_clip *clip);
/** Bytes stored per joint and frame: 28 (translation + rotation) or 40 (with scale). */
CB_API size_t cb_clip_bytes_per_joint_frame(const cb_clip *clip);
/** All memory the clip holds, in bytes: frames (padding lanes included), root track, header;
 *  for a clip that keeps its keys compressed, the loaded compressed form instead of frames. */
CB_API size_t cb_clip_bytes(const cb_clip *clip);
/** Signature of the skeleton the clip was built for (cb_skeleton_signature()). */
CB_API uint64_t cb_clip_skeleton_signature(const cb_clip *clip);

struct cb_cclip;
/**
 * The compressed keys a clip samples (crowdblend/cclip.h), or NULL for a clip of raw frames:
 * the clip's own for one created with cb_clip_desc.compression (freed with the clip), the
 * pack's for a pack clip kept compressed (crowdblend/pack.h). Valid as long as the clip; give
 * it to cb_pack_desc.compressed to save the clip compressed, to cb_cclip_query_info() for its
 * sizes and measured error.
 */
CB_API const struct cb_cclip *cb_clip_compressed_form(const cb_clip *clip);

/* ----------------------------------------------------------------------------------------- */
/* Root motion                                                                               */

/** What a clip's root does over one cycle (one play from normalized time 0 to 1). */
typedef struct cb_clip_root_motion {
    cb_root_motion mode; /**< resolved extraction mode (NONE: all fields below are 0) */
    uint32_t joint;      /**< the joint whose motion was extracted */
    /**
     * Root displacement over one cycle in the character's frame at the cycle's start:
     * x left, y up, z forward (metres); and the heading change (radians, positive = left).
     */
    float displacement[3];
    float displacement_yaw;
    /** Average ground-plane velocity over a cycle, displacement / duration, in m/s. */
    float forward_mps;  /**< along +Z (negative: backwards) */
    float right_mps;    /**< along -X (negative: to the left) */
    float speed_mps;    /**< length of the ground-plane displacement / duration */
    float yaw_rate_rps; /**< heading change / duration, radians per second */
    /**
     * Where the root's ground frame was at the first frame, in the source's model space: the
     * extracted position (metres; y is 0 unless the mode extracts Y) and heading (radians about
     * +Y; 0 unless the mode extracts yaw). Removed from the stored pose; the source pose at
     * normalized time u is origin * cb_clip_root_delta(0, u) * pose(u) (see ROOT MOTION).
     */
    float origin[3];
    float origin_yaw;
} cb_clip_root_motion;

/** Root motion summary of a clip (all zero but `joint` for clips without root motion). */
CB_API cb_clip_root_motion cb_clip_query_root_motion(const cb_clip *clip);

/** A root-motion delta: how the character's root moved, in its frame at the start. */
typedef struct cb_root_delta {
    float translation[3]; /**< metres: x left, y up, z forward, in the frame at the start */
    float yaw;            /**< radians about +Y, positive turns left */
} cb_root_delta;

/**
 * The root motion between two normalized times of a clip: the displacement and heading change
 * from `from` to `to`, in the character's frame at `from`. For looping clips the times are
 * unwrapped: `to` = from + 2.5 means two and a half cycles later, and every full cycle adds
 * the clip's cycle displacement, turned by the heading reached so far (so clips that turn
 * describe arcs). Negative spans play backwards. Clamped clips clamp both times to [0, 1].
 * Clips without root motion give a zero delta.
 * Thread-safe; allocates nothing.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (a time is NaN or infinite),
 *         CB_ERR_INVALID_ARGUMENT (|to - from| beyond 2^24 cycles).
 */
CB_API cb_result cb_clip_root_delta(const cb_clip *clip, float from, float to, cb_root_delta *out);

/** One clip's share of a blended root delta. */
typedef struct cb_root_motion_entry {
    const cb_clip *clip; /**< required */
    float from, to;      /**< normalized times as in cb_clip_root_delta */
    float weight;        /**< >= 0, finite */
} cb_root_motion_entry;

/**
 * The weighted mean of the entries' root deltas: what a character playing a blend of the
 * clips moved. Entries with weight 0 are skipped; a zero weight sum gives a zero delta.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE, CB_ERR_INVALID_ARGUMENT (a negative
 *         weight); out is untouched on failure.
 */
CB_API cb_result cb_clip_blend_root_motion(const cb_root_motion_entry *entries, size_t count,
                                           cb_root_delta *out);

/* ----------------------------------------------------------------------------------------- */
/* Markers                                                                                   */

/* Marker names are hashed with cb_name_hash (crowdblend/base.h): stable across platforms and
 * builds, so hashes may be stored in files. Distinct names may share a hash; cb_clip_create
 * rejects two such names in one clip, and hosts that keep their own name tables should check
 * theirs the same way. */

/** One marker of a clip, as stored. */
typedef struct cb_clip_marker {
    const char *name;   /**< zero-terminated, owned by the clip */
    uint32_t name_hash; /**< cb_name_hash(name) */
    float time;         /**< normalized time: [0, 1) for looping clips, [0, 1] for clamped */
    float time_s;       /**< the same in seconds (time * duration) */
    bool event_only;    /**< as in the desc: not a sync point */
} cb_clip_marker;

/** Number of markers of a clip (0 for NULL). */
CB_API uint32_t cb_clip_marker_count(const cb_clip *clip);

/**
 * Marker `index`; markers are sorted by time (markers at equal times in desc order).
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_INVALID_ARGUMENT (index >= count); out is
 *         untouched on failure.
 */
CB_API cb_result cb_clip_query_marker(const cb_clip *clip, uint32_t index, cb_clip_marker *out);

/**
 * The first marker at or after index `start` whose name has hash `name_hash`: loop with
 * start = previous + 1 to visit every occurrence. Within one clip a hash names one name.
 * Thread-safe; allocates nothing.
 * @return CB_OK with *index set, CB_ERR_NOT_FOUND (none; *index untouched),
 *         CB_ERR_NULL_ARGUMENT.
 */
CB_API cb_result cb_clip_find_marker(const cb_clip *clip, uint32_t name_hash, uint32_t start,
                                     uint32_t *index);

/**
 * The first marker named `name` (compared as a string, not only by hash).
 * @return CB_OK with *index set, CB_ERR_NOT_FOUND, CB_ERR_NULL_ARGUMENT.
 */
CB_API cb_result cb_clip_find_marker_name(const cb_clip *clip, const char *name, uint32_t *index);

/* ----------------------------------------------------------------------------------------- */
/* Clips from stored frames (what a pack file holds)                                          */

/**
 * FRAMES
 * A clip's stored data in plain per-joint form, independent of the SIMD width W: frame-major
 * (all joints of frame 0, then of frame 1, ...), per joint 7 floats, translation x y z and
 * rotation x y z w, followed by 3 more when the clip stores scale: the scale's deviation from 1,
 * s - 1, for x y z (kept as the deviation, as the clip stores it, so that nothing is lost near
 * 1). Frame f is at normalized time f / (frame_count - 1). Rotations are unit and each frame's
 * rotation lies in the hemisphere of the previous frame's (dot >= 0). A looping clip's last frame
 * repeats its first (the rotation possibly negated, into the hemisphere of the frame before).
 * The root track, when there is one, holds per frame x y z yaw of the root relative to frame 0
 * (frame 0 is all zero), in the frame described under ROOT MOTION.
 * cb_clip_read_frames() and cb_clip_read_root_track() write exactly this, and
 * cb_clip_create_from_frames() reads it back into a clip whose stored values are bit-identical:
 * this is how crowdblend/pack.h saves and loads clips in any build.
 */

/** Most a stored rotation's length may differ from 1 in cb_clip_create_from_frames. */
#define CB_CLIP_FRAMES_UNIT_TOLERANCE 1e-3f

/** Most a looping clip's last frame may differ from its first, per component. */
#define CB_CLIP_FRAMES_SEAM_TOLERANCE 1e-5f

/** A clip from already-sampled frames. Read during cb_clip_create_from_frames only. */
typedef struct cb_clip_frames_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** Name, 1..CB_JOINT_NAME_MAX bytes, copied. Default (NULL): "clip". */
    const char *name;
    /** The skeleton the frames animate; required (its joint count sizes a frame). */
    const cb_skeleton *skeleton;
    /** Duration in seconds, > 0 and finite; required. */
    float duration_s;
    /** Stored frames, N + 1: 2..CB_CLIP_MAX_FRAMES; required. */
    uint32_t frame_count;
    /** Whether each joint carries the 3 scale floats (10 per joint), else 7. Default: false. */
    bool has_scale;
    /** frame_count * joint_count * (7 or 10) finite floats, laid out as under FRAMES. */
    cb_float_cspan frames;
    /** Playback at the ends. Default: loop. */
    cb_clip_wrap wrap;
    /** Whether the frames are additive deltas (crowdblend/pose.h). Default: false. */
    bool additive;
    /** The mode the root track was extracted with. Default (0): CB_ROOT_MOTION_NONE here (no
     *  track), unlike cb_clip_desc. Additive clips take none. */
    cb_root_motion root_motion;
    /** The joint the root track belongs to; must be a root. Default: 0. */
    uint32_t root_joint;
    /** With a root-motion mode: frame_count * 4 finite floats, x y z yaw per frame, frame 0
     *  all zero. Ignored without. */
    cb_float_cspan root_track;
    /** cb_clip_root_motion.origin and origin_yaw: finite; default 0. */
    float root_origin[3];
    float root_origin_yaw;
    /**
     * marker_count markers as cb_clip_query_marker() reports them: `name`, `time` (normalized:
     * [0, 1) looping, [0, 1] clamped) and `event_only` are read; time_s and name_hash are
     * recomputed. Sorted by time (non-decreasing); at most CB_CLIP_MAX_MARKERS; the name rules
     * of cb_clip_marker_desc apply. May be NULL when marker_count is 0.
     */
    const cb_clip_marker *markers;
    uint32_t marker_count;
    /** Allocator for the clip's memory. Default: the C library. */
    cb_allocator allocator;
    uint32_t _end_canary; /**< must be 0 */
} cb_clip_frames_desc;

/** Returns desc with every zero (default) field resolved. A NULL desc counts as all zero. */
CB_API cb_clip_frames_desc cb_clip_query_frames_desc(const cb_clip_frames_desc *desc);

/**
 * Creates a clip from stored frames (see FRAMES): no resampling, no extraction; the values are
 * packed into the SoA joint groups of this build as they are, so the clip samples exactly as the
 * clip they were read from.
 * @param out  receives the clip; untouched on failure
 * @param err  optional detail on failure, naming the field, frame, joint and component
 * @return CB_OK; CB_ERR_NULL_ARGUMENT (desc, out, skeleton, frames, root_track with a mode,
 *         markers with a count, a marker name), CB_ERR_CANARY, CB_ERR_ALLOCATOR,
 *         CB_ERR_INVALID_ARGUMENT (name, duration, frame_count, an enum, a root joint that is
 *         not a root, root motion on an additive clip, a root track that does not start at
 *         zero, a marker name, time or order), CB_ERR_SPAN_TOO_SHORT (frames, root_track),
 *         CB_ERR_NOT_FINITE (a value), CB_ERR_DEGENERATE (a rotation that is not unit within
 *         CB_CLIP_FRAMES_UNIT_TOLERANCE, consecutive rotations in opposite hemispheres, a
 *         looping clip whose last frame is not its first), CB_ERR_TOO_MANY (markers),
 *         CB_ERR_DUPLICATE (markers, as cb_clip_create), CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_clip_create_from_frames(const cb_clip_frames_desc *desc, cb_clip **out,
                                            cb_error *err);

/** Floats per joint and frame in the FRAMES layout: 7, or 10 when the clip stores scale. */
CB_API size_t cb_clip_frame_stride(const cb_clip *clip);

/**
 * Writes the clip's stored frames in the FRAMES layout (frame_count * joint_count *
 * cb_clip_frame_stride() floats). Thread-safe. A clip that keeps its keys compressed (a pack's,
 * crowdblend/pack.h, COMPRESSED CLIPS) writes its decoding at the frames (cb_cclip_to_clip's
 * frames), with scratch from the clip's allocator.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_SPAN_TOO_SHORT (nothing written),
 *         CB_ERR_OUT_OF_MEMORY (compressed clips only).
 */
CB_API cb_result cb_clip_read_frames(const cb_clip *clip, cb_float_span out);

/**
 * Writes the clip's root track (frame_count * 4 floats: x y z yaw per frame, relative to
 * frame 0). Thread-safe.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FOUND (the clip has no root motion),
 *         CB_ERR_SPAN_TOO_SHORT (nothing written).
 */
CB_API cb_result cb_clip_read_root_track(const cb_clip *clip, cb_float_span out);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_CLIP_H */
