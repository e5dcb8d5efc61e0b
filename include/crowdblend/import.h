/**
 * @file crowdblend/import.h
 * @brief crowdblend-import, the offline library: glTF 2.0, FBX, BVH and Collada files (through
 *        assimp) to a skeleton and clips held to a measured error bound, ready for a pack.
 *
 * This is a separate library (`crowdblend-import`, pkg-config `crowdblend-import`), so the
 * runtime library stays free of assimp. The usual use is the command `crowdblend import`; engines
 * with their own asset pipeline call it the same way:
 *
 *   cb_import_desc d = {.path = "Fox.glb"};
 *   cb_import *imp;
 *   if (cb_import_file(&d, &imp, &err) == CB_OK) {
 *       cb_pack_desc pd = cb_import_pack_desc(imp);
 *       cb_pack_save(&pd, "fox.cbpack", &err);
 *       cb_import_destroy(imp);
 *   }
 *
 * CONVENTION
 * The library's space is metres, +Y up, a character facing +Z, +X its left (crowdblend/clip.h).
 * glTF is already that. `scale` converts units (every translation is multiplied by it, and the
 * inverse bind matrices follow); FBX files are centimetres unless their header says otherwise,
 * so they are scaled by their UnitScaleFactor / 100 unless `scale` is given. `up` converts a +Z-up
 * file by a -90 degree turn about +X (+Z becomes +Y and -Y becomes +Z, forward in a Z-up file
 * whose characters face -Y). BVH has no units: give `scale` (CMU files: 0.05644, their unit is
 * 1/0.45 inch).
 *
 * SKELETON
 * From a skin when the file has one (the `skin`-th distinct set of skinned bones; glTF
 * `skins[n]` in file order), else from the node hierarchy: the subtree of `root` (default: the
 * lowest node above every animated node), without the branches no animation moves (BVH end
 * sites). A joint's parent is its nearest ancestor that is a joint; the nodes between (and, for
 * roots, every node above and the conversion) are folded into its transform. Joints are
 * reordered parents first where the source is not. Unnamed glTF nodes keep assimp's name,
 * "nodes[i]" with i the glTF node index.
 *
 * CLIPS AND THEIR ERROR
 * Each animation (or the ones `clips` names) is evaluated as its format specifies: glTF LINEAR
 * (lerp; slerp for rotations), STEP and CUBICSPLINE (Hermite with the file's tangents, rotations
 * normalized), BVH and others linear between keys. The clip is then resampled at the lowest
 * uniform rate whose stored clip stays within `max_error_m` of the source, measured as the
 * distance of every joint's model-space position (root motion put back) at every source key, at
 * every stored frame, and at a quarter, half and three quarters of every interval between them.
 * Candidates in order of size: the grid the source keys lie on (when they lie on one) and its
 * multiples, and rates from 15 Hz up (docs/import.md has the ladder); the first that holds the
 * bound is kept. The default bound is 0.1 mm, or 1e-4 of the skeleton's height for figures
 * taller than 2.5 m (float32 cannot hold 0.1 mm on a figure 100 m tall).
 *
 * COMPRESSION
 * By default each clip is then compressed (crowdblend/cclip.h) to `compression_error_m` on a
 * shell of `compression_shell_m` around every joint (defaults: the import bound, 0.1 mm, at
 * 3 cm; both scaled with the bound for figures taller than 2.5 m) against the clip's stored
 * frames, and the pack stores the compressed form. The clip the import gives (cb_import_clip)
 * is then created compressed (cb_clip_desc.compression, the library's one path to a compressed
 * clip): it samples its compressed keys in place, as a pack loaded with the default
 * CB_PACK_CLIP_FORM_COMPRESSED does, and the report's max_error_m is measured again on that
 * clip, as the pose jobs sample it, against the source. By default (compression_error_m 0) its
 * bound, error_bound_m, is the import bound itself: where the compressed clip is farther from
 * the source (the frames' error and the compression's add), the clip is compressed again at
 * half the compression bound, up to 6 times (1/64), and compression_bound_m reports the last.
 * With compression_error_m given, error_bound_m is the import bound plus it.
 * CB_IMPORT_COMPRESSION_NONE keeps the raw frames.
 *
 * LOOPING, ROOT MOTION, MARKERS
 * A clip loops when its first and last poses agree within the bound (relative to the root's
 * ground frame); `loop` forces either way, with a warning when a forced loop has a larger seam.
 * Root motion is extracted from `root_motion_joint` (default: joint 0) in `root_motion` mode
 * (default: XZ_YAW, or XZ when that joint's +Z axis comes within 30 degrees of vertical, where a
 * heading is not defined), relative to the clip's first frame (crowdblend/clip.h, ROOT MOTION).
 * Markers come from `markers_path` (JSON, {"Walk": [{"name": "foot_plant_l", "time_s": 0.1,
 * "event_only": false}]}) and from foot-plant detection on `foot_left` / `foot_right`: a foot
 * is planted where it is within 3 % of the skeleton's height above the ground under it (its
 * lowest point within half a second) and moves over the ground at less than one height per
 * second, for at least 50 ms (docs/import.md); each contact start is a "foot_plant_l" /
 * "foot_plant_r" marker and each end a "foot_lift_l" / "foot_lift_r" event.
 */
#ifndef CROWDBLEND_IMPORT_H
#define CROWDBLEND_IMPORT_H

#include "crowdblend/crowdblend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Up axis of the source file. */
typedef enum cb_import_up {
    _CB_IMPORT_UP_DEFAULT = 0, /**< Y, or the FBX header's */
    CB_IMPORT_UP_Y,
    CB_IMPORT_UP_Z,
    _CB_IMPORT_UP_COUNT
} cb_import_up;

/** Looping decision. */
typedef enum cb_import_loop {
    _CB_IMPORT_LOOP_DEFAULT = 0, /**< CB_IMPORT_LOOP_AUTO */
    CB_IMPORT_LOOP_AUTO,         /**< loops when the first and last poses agree */
    CB_IMPORT_LOOP_FORCE,        /**< loops (warning when the seam exceeds the bound) */
    CB_IMPORT_LOOP_NEVER,        /**< clamps */
    _CB_IMPORT_LOOP_COUNT
} cb_import_loop;

/** Whether clips are stored compressed. */
typedef enum cb_import_compression {
    _CB_IMPORT_COMPRESSION_DEFAULT = 0, /**< CB_IMPORT_COMPRESSION_ON */
    CB_IMPORT_COMPRESSION_ON,           /**< error-bounded compression (crowdblend/cclip.h) */
    CB_IMPORT_COMPRESSION_NONE,         /**< raw frames */
    _CB_IMPORT_COMPRESSION_COUNT
} cb_import_compression;

/** What to import and how. Zero-initialize; only `path` is required. */
typedef struct cb_import_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** The source file; required. The format follows the file name's extension. */
    const char *path;
    /** Which skin (>= 0); default (-1 or when no skin): the first. Ignored when `root` is set. */
    int skin;
    /** A node: the skeleton is the hierarchy under it, even when the file has a skin. */
    const char *root;
    /** Units to metres, > 0. Default (0): 1, or the FBX header's. */
    float scale;
    /** The source's up axis. Default: Y (FBX: its header's). */
    cb_import_up up;
    /** Only these animations (by name; unnamed ones are "clip<i>"), in this order. Default: all. */
    const char *const *clips;
    uint32_t clip_count;
    /** The error bound in metres, > 0. Default (0): see CLIPS AND THEIR ERROR. */
    float max_error_m;
    /** Looping. Default: auto. */
    cb_import_loop loop;
    /** Root-motion mode. Default: see LOOPING, ROOT MOTION, MARKERS. */
    cb_root_motion root_motion;
    /** The joint root motion is taken from (a root of the skeleton). Default: joint 0. */
    const char *root_motion_joint;
    /** Optional sidecar marker file (JSON). */
    const char *markers_path;
    /** Optional foot joints for foot-plant detection (both or neither). */
    const char *foot_left;
    const char *foot_right;
    /** Compression. Default: on (see COMPRESSION). */
    cb_import_compression compression;
    /** The compression's bound in metres on the shell, > 0. Default (0): the import bound. */
    float compression_error_m;
    /** The shell distance in metres, > 0. Default (0): 3 cm (scaled as the bound). */
    float compression_shell_m;
    uint32_t _end_canary; /**< must be 0 */
} cb_import_desc;

/** Returns desc with every zero (default) field resolved (skin -1 stays -1: the first). */
CB_API cb_import_desc cb_import_query_desc(const cb_import_desc *desc);

/** An import's result: skeleton, clips, inverse binds and what was measured (opaque). */
typedef struct cb_import cb_import;

/** What the importer chose and measured for one clip. */
typedef struct cb_import_clip_report {
    const char *name;           /**< the clip's name */
    float duration_s;           /**< seconds */
    uint32_t source_keys;       /**< distinct key times of the source */
    float source_grid_hz;       /**< the coarsest uniform grid holding every key; 0: none */
    bool source_even;           /**< every point of that grid is a key (evenly spaced keys) */
    uint32_t frames;            /**< stored frames (N + 1) */
    float rate_hz;              /**< N / duration */
    size_t pack_bytes;          /**< the clip's frames and root track in a pack file */
    size_t runtime_bytes;       /**< cb_clip_bytes() in this build (SoA groups of W joints) */
    float max_error_m;          /**< largest joint distance to the source over the checked times */
    float error_bound_m;        /**< the bound it was held to */
    bool bound_met;             /**< false: no rate up to CB_CLIP_MAX_FRAMES held the bound */
    uint32_t candidates;        /**< rates tried */
    bool looping;               /**< as built */
    float seam_m;               /**< distance between the first and last poses (looping test) */
    cb_root_motion root_motion; /**< the mode used */
    float root_speed_mps;       /**< root motion speed over one cycle */
    uint32_t markers;           /**< markers stored (sidecar and detected) */
    float ground_speed_mps;     /**< speed of the ground under a planted foot (detection); 0 */
    bool compressed;            /**< stored compressed (then the fields below are set) */
    size_t compressed_bytes;    /**< the compressed stored form in the pack */
    size_t source_bytes;        /**< the frames as raw 32-bit keys: joints x frames x 40 */
    uint32_t compressed_keys;   /**< keys the compressed form stores (<= frames) */
    float compression_error_m;  /**< shell error of the compression, measured (cclip.h) */
    float compression_bound_m;  /**< the shell bound it was held to */
    float compress_ms;          /**< time to compress and decode the clip */
} cb_import_clip_report;

/**
 * Imports a file (see the file comment).
 * @param out  receives the import; untouched on failure
 * @param err  optional detail: what assimp said, or the field, joint or clip at fault
 * @return CB_OK; CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_INVALID_ARGUMENT (an option out of
 *         range), CB_ERR_IO (assimp could not read the file), CB_ERR_NOT_FOUND (a named skin,
 *         root, joint or clip is not in the file), CB_ERR_UNSUPPORTED (nothing to import: no
 *         skeleton or no animation), CB_ERR_PARSE (a bad marker file), the skeleton's and clip's
 *         creation codes, CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_import_file(const cb_import_desc *desc, cb_import **out, cb_error *err);

/** Frees an import. NULL does nothing. */
CB_API void cb_import_destroy(cb_import *imp);

/** The skeleton. */
CB_API const cb_skeleton *cb_import_skeleton(const cb_import *imp);
/** Clips, in import order. */
CB_API uint32_t cb_import_clip_count(const cb_import *imp);
CB_API const cb_clip *cb_import_clip(const cb_import *imp, uint32_t index);
/** The report of clip `index` (all zero out of range). */
CB_API cb_import_clip_report cb_import_query_report(const cb_import *imp, uint32_t index);
/** Notes and warnings of the import, in order ("Walk: forced loop has a 3 mm seam"). */
CB_API uint32_t cb_import_warning_count(const cb_import *imp);
CB_API const char *cb_import_warning(const cb_import *imp, uint32_t index);
/** A desc for cb_pack_save with everything imported (valid as long as the import). */
CB_API cb_pack_desc cb_import_pack_desc(const cb_import *imp);
/** The compressed form of clip `index` (what the pack stores), or NULL (raw, out of range). */
CB_API const cb_cclip *cb_import_compressed_clip(const cb_import *imp, uint32_t index);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_IMPORT_H */
