/**
 * @file crowdblend/embedded.h
 * @brief The embedded default data: a procedural humanoid skeleton and a procedural locomotion
 *        set, generated in memory by one call (no files). Demos, tests and benchmarks use it.
 *
 * SKELETON: 64 joints, +Y up, facing +Z, +X is the character's left, about 1.75 m tall. Joint 0
 * is "root", a ground-level joint that carries the root motion; then "pelvis", "spine_01" ..
 * "spine_03", "neck", "head", "jaw", "eye_l", "eye_r"; per side (suffix _l / _r) "clavicle",
 * "upperarm", "upperarm_twist", "lowerarm", "lowerarm_twist", "hand", three joints each of
 * "thumb", "index", "middle", "ring", "pinky" (e.g. "index_02_l"); "thigh", "thigh_twist",
 * "calf", "calf_twist", "foot", "ball". In the rest pose every local rotation is the identity,
 * the arms hang and the feet stand flat on the ground. The upper body is the subtree of
 * "spine_01" (cb_skeleton_build_mask with base 0 and the rule {"spine_01", 1}).
 *
 * CLIPS, all at 30 Hz unless the desc says otherwise, in this order:
 *  - "idle": standing, breathing, shifting weight; no root motion; loops.
 *  - "walk_<d>" and "run_<d>" for the eight directions d in f, fl, l, bl, b, br, r, fr
 *    (forward, forward-left, left, back-left, back, back-right, right, forward-right; "left" is
 *    +X). The character keeps facing +Z and moves in direction d at a constant speed (walk about
 *    1.4 m/s, run about 3.5 m/s); root motion reports it. Feet are planted (still on the ground)
 *    during stance, swing in an arc, and roll over the ball before toe-off; arms counter-swing,
 *    the pelvis bobs, sways and turns. Every walk and run clip puts the left foot down at
 *    normalized time 0 and the right foot at 0.5, so any of them can be blended in sync.
 *    Markers (crowdblend/clip.h) say so: "foot_plant_l" at 0 and "foot_plant_r" at 0.5, where
 *    each foot touches down, and "foot_lift_l" / "foot_lift_r" (event_only) where it leaves the
 *    ground: walk 0.6 / 0.1, run 0.33 / 0.83 (the end of each foot's stance). The plants are
 *    the sync markers of the set; idle and the layer clips have no markers.
 *  - "lean_add": an additive clip (reference: its first frame) that leans the upper body to the
 *    side and breathes.
 *  - "wave_upper": a waving right arm with the upper body, meant for an OVERRIDE layer with an
 *    upper-body mask.
 *
 * The data is deterministic (the same bytes for every call, platform rounding aside) and is
 * generated in a few milliseconds.
 */
#ifndef CROWDBLEND_EMBEDDED_H
#define CROWDBLEND_EMBEDDED_H

#include "crowdblend/base.h"
#include "crowdblend/clip.h"
#include "crowdblend/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The embedded skeleton and its clips (opaque; immutable after create). */
typedef struct cb_embedded cb_embedded;

/** How to generate the embedded data. */
typedef struct cb_embedded_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** Resampling rate of the clips in Hz. Default (0): CB_CLIP_DEFAULT_RATE_HZ (30). */
    float sample_rate_hz;
    /** Allocator for everything the set holds. Default (all zero): the C library. */
    cb_allocator allocator;
    uint32_t _end_canary; /**< must be 0 */
} cb_embedded_desc;

/** Returns desc with every zero (default) field resolved. A NULL desc counts as all zero. */
CB_API cb_embedded_desc cb_embedded_query_desc(const cb_embedded_desc *desc);

/**
 * Generates the skeleton and the clips.
 * @param desc  may be NULL (all defaults)
 * @param out   receives the set; untouched on failure
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (out), CB_ERR_CANARY, CB_ERR_ALLOCATOR,
 *         CB_ERR_INVALID_ARGUMENT (rate not finite or not in (0, 1000]), CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_embedded_create(const cb_embedded_desc *desc, cb_embedded **out, cb_error *err);

/** Frees the set with its skeleton and clips. NULL does nothing. */
CB_API void cb_embedded_destroy(cb_embedded *set);

/** The humanoid skeleton, owned by the set. */
CB_API const cb_skeleton *cb_embedded_skeleton(const cb_embedded *set);

/** Number of clips (19: idle, 8 walks, 8 runs, lean_add, wave_upper). */
CB_API uint32_t cb_embedded_clip_count(const cb_embedded *set);

/** Clip by index in the order of the file comment, or NULL when out of range. */
CB_API const cb_clip *cb_embedded_clip(const cb_embedded *set, uint32_t index);

/** Clip by name, or NULL when there is none. */
CB_API const cb_clip *cb_embedded_find_clip(const cb_embedded *set, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_EMBEDDED_H */
