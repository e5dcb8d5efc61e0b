/**
 * @file crowdblend/pack.h
 * @brief Packs (.cbpack): the library's own validated file of a skeleton (with inverse bind
 *        matrices), clips (frames, root tracks, markers), joint masks and graph JSON texts.
 *
 * A pack is what `crowdblend import` writes from a glTF, FBX, BVH or Collada file and what an
 * engine loads at run time: loading is a copy of stored frames into this build's SoA groups,
 * with no resampling and no importer. The format is versioned, little-endian and documented byte
 * by byte in docs/formats.md; files hold plain per-joint data, independent of the SIMD width W,
 * so a pack written by any build loads to bit-identical clip frames in every other build.
 *
 * LOADING
 * cb_pack_load_memory() validates every field before using it: sizes, counts and offsets inside
 * the data, the section layout, names (NUL-terminated, bounded, unique), parents before
 * children, finite values, unit quaternions, a clip's frames (crowdblend/clip.h, FRAMES) and
 * the XXH3-64 checksum over the payload. A bad pack gives an error code and a message that names
 * the section and field ("fox.cbpack: section 2 (clip \"Walk\"): frames: frame 3 joint 5
 * rotation has length 1.2, not 1"); nothing is half-built and nothing outside the data is read.
 * cb_pack_load_file() reads the file with one read and loads it.
 *
 * COMPRESSED CLIPS
 * A clip may be stored compressed (crowdblend/cclip.h: error-bounded, 6-19x smaller than raw
 * 32-bit keys on the test assets): cb_pack_desc.compressed gives the compressed form of each clip
 * to store that way. The file then holds the compressed stored form instead of the frames
 * (docs/formats.md, clip encoding 1), and loading validates it (cb_cclip_load). By default the
 * clip cb_pack_clip() gives keeps it compressed in memory: the pose jobs (crowdblend/pose.h)
 * decode its keys per joint group inside the fused sample + blend, so the clip costs its
 * compressed size at run time (cb_clip_bytes) and one clip's sample is within the clip's error
 * bound of its source (the keys are blended as decoded, not normalized first: at the default
 * bound a blend of two moves by under 0.1 degree more than the raw form's; at a bound of 1 cm,
 * by up to 4 degrees). cb_pack_load_desc.clip_form = CB_PACK_CLIP_FORM_RAW decodes it at load
 * instead into an ordinary clip at the source frames (cb_cclip_to_clip): the raw size, faster to
 * sample (docs/performance.md has both). cb_clip_read_frames() of a compressed clip decodes it the
 * same way, so both forms give the same frames. A compressed clip that stores its root track
 * (cb_cclip_desc. root_track, as `crowdblend import` makes them) is written with it (clip encoding
 * 2): the root track is then error-bounded too (crowdblend/cclip.h, ROOT TRACK) instead of raw
 * floats.
 *
 * VERSIONS
 * Version 2 added clip section version 2 and its encoding 1 (compressed), then clip section
 * version 3 and its encoding 2 (compressed with the root track). Version 1 packs (raw frames
 * only) and version 2 packs of clip sections 1 and 2 still load, unchanged; this build writes
 * version 2.
 *
 * SAVING
 * cb_pack_save_memory() / cb_pack_save() write what a cb_pack_desc names. cb_pack_contents()
 * describes a loaded pack, so saving it again gives the same bytes (save(load(p)) == p).
 *
 * Packs are immutable after load; their skeleton, clips, masks and texts may be shared by any
 * number of threads and live as long as the pack.
 */
#ifndef CROWDBLEND_PACK_H
#define CROWDBLEND_PACK_H

#include "crowdblend/base.h"
#include "crowdblend/cclip.h"
#include "crowdblend/clip.h"
#include "crowdblend/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The format version this build writes and the newest it reads. */
#define CB_PACK_VERSION 2

/** The newest version of each section kind this build reads and writes. Clip section
 *  version 2 (pack version 2) adds the compressed encoding, version 3 the compressed encoding
 *  whose stored form holds the root track too (encoding 2); a clip section takes version 3
 *  only when it uses encoding 2, so packs without it stay readable by older builds. */
#define CB_PACK_SKELETON_VERSION 1
#define CB_PACK_CLIP_VERSION 3
#define CB_PACK_MASK_VERSION 1
#define CB_PACK_GRAPH_VERSION 1

/** Limits of one pack. */
#define CB_PACK_MAX_CLIPS 4096
#define CB_PACK_MAX_MASKS 256
#define CB_PACK_MAX_GRAPHS 64
/** Longest graph JSON text in bytes. */
#define CB_PACK_MAX_GRAPH_BYTES (16u << 20)

/** A loaded pack (opaque). */
typedef struct cb_pack cb_pack;

/** What an importer measured for a clip, kept with it in the pack. */
typedef struct cb_pack_clip_info {
    /**
     * Largest distance, in metres (model units), between any joint of the stored clip and the
     * source animation over the times the importer checked; < 0: not measured.
     */
    float max_error_m;
    /** The bound the importer held the clip to; < 0: none. */
    float error_bound_m;
} cb_pack_clip_info;

/** A named joint mask (crowdblend/skeleton.h), as stored. */
typedef struct cb_pack_mask {
    /** 1..CB_JOINT_NAME_MAX bytes, unique among the pack's masks. */
    const char *name;
    /**
     * Per-joint weights in [0, 1]. Saving reads the first joint_count; a loaded pack gives
     * cb_skeleton_soa_joint_count() entries (padding lanes 0), ready for cb_blend_entry.mask.
     */
    cb_float_cspan weights;
} cb_pack_mask;

/** A named graph description (crowdblend/graph.h, JSON), stored as text. */
typedef struct cb_pack_graph {
    /** 1..CB_JOINT_NAME_MAX bytes, unique among the pack's graphs. */
    const char *name;
    /** `length` bytes of UTF-8 JSON, no NUL inside; a loaded pack adds a terminating NUL. */
    const char *text;
    size_t length;
} cb_pack_graph;

/** What to save. Read during cb_pack_save* only. */
typedef struct cb_pack_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** The skeleton; required. */
    const cb_skeleton *skeleton;
    /**
     * Optional: the rest transforms to write instead of the skeleton's (joint_count entries, each
     * within 1e-5 of the skeleton's). cb_skeleton_create normalizes rest rotations, which can move
     * an already unit float quaternion by a bit, so cb_pack_contents() passes the values as they
     * were in the file: saving a loaded pack then writes the same bytes.
     */
    cb_xform_cspan rest_pose;
    /** Optional inverse bind matrices: joint_count column-major 4x4 (16 floats each), finite. */
    cb_float_cspan inverse_binds;
    /** clip_count clips built for the skeleton, names unique; at most CB_PACK_MAX_CLIPS. */
    const cb_clip *const *clips;
    uint32_t clip_count;
    /** Optional, clip_count entries (default: not measured). */
    const cb_pack_clip_info *clip_info;
    /**
     * Optional, clip_count entries: clips[i] compressed (cb_cclip_create from the frames
     * cb_clip_read_frames gives, same skeleton, source frames and additive flag), stored instead
     * of its frames; a NULL entry (or a NULL array) stores that clip raw. The clip still gives the
     * name, duration, wrap, root motion and markers.
     */
    const cb_cclip *const *compressed;
    /** mask_count masks; at most CB_PACK_MAX_MASKS. */
    const cb_pack_mask *masks;
    uint32_t mask_count;
    /** graph_count graph texts; at most CB_PACK_MAX_GRAPHS. */
    const cb_pack_graph *graphs;
    uint32_t graph_count;
    uint32_t _end_canary; /**< must be 0 */
} cb_pack_desc;

/**
 * Writes a pack into memory.
 * @param dst       capacity bytes, or NULL to ask for the size only
 * @param size      receives the pack's size in bytes (also when dst is NULL)
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_INVALID_ARGUMENT (a name, a mask
 *         weight outside [0, 1], a graph text with a NUL, a rest pose too far from the
 *         skeleton's), CB_ERR_NOT_FINITE (inverse binds, clip info), CB_ERR_MISMATCH (a clip of
 *         another skeleton, short spans, a compressed clip that does not match its clip),
 * CB_ERR_DUPLICATE (two clips, masks or graphs with one name), CB_ERR_TOO_MANY,
 * CB_ERR_SPAN_TOO_SHORT (capacity; nothing is written).
 */
CB_API cb_result cb_pack_save_memory(const cb_pack_desc *desc, void *dst, size_t capacity,
                                     size_t *size, cb_error *err);

/**
 * Writes a pack file: into `path`.tmp, then renamed over `path`, so a failed save never leaves
 * a half-written file. Results as cb_pack_save_memory, and CB_ERR_IO, CB_ERR_OUT_OF_MEMORY.
 */
CB_API cb_result cb_pack_save(const cb_pack_desc *desc, const char *path, cb_error *err);

/** How a loaded pack holds its compressed clips in memory (see COMPRESSED CLIPS). */
typedef enum cb_pack_clip_form {
    _CB_PACK_CLIP_FORM_DEFAULT = 0, /**< CB_PACK_CLIP_FORM_COMPRESSED */
    /** As stored: the pose jobs decode the keys inside the fused sample + blend. */
    CB_PACK_CLIP_FORM_COMPRESSED,
    /** Decoded at load into uncompressed frames at the source rate (cb_cclip_to_clip): the
     *  raw size in memory, for a host that wants the fastest sampling of a few clips. */
    CB_PACK_CLIP_FORM_RAW,
    _CB_PACK_CLIP_FORM_COUNT
} cb_pack_clip_form;

/** How to load. Zero-initialize; every field has a default. */
typedef struct cb_pack_load_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** Name of the data in messages. Default: "pack" (cb_pack_load_file: the path). */
    const char *source_name;
    /** For the pack, its skeleton, clips and texts, and the load's temporary buffers. */
    cb_allocator allocator;
    /** Compressed clips stay compressed (default) or are decoded to frames at load. Clips the
     *  file stores raw are raw either way. */
    cb_pack_clip_form clip_form;
    uint32_t _end_canary; /**< must be 0 */
} cb_pack_load_desc;

/** Returns desc with every zero (default) field resolved. A NULL desc counts as all zero. */
CB_API cb_pack_load_desc cb_pack_query_load_desc(const cb_pack_load_desc *desc);

/**
 * Validates and loads a pack from memory (see LOADING). The data is not kept.
 * @param data, size  the bytes of the pack
 * @param desc        may be NULL (all defaults)
 * @param out         receives the pack; untouched on failure
 * @return CB_OK; CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_PARSE (anything
 *         wrong with the bytes: magic, sizes, offsets, the layout, the checksum, a field),
 *         CB_ERR_UNSUPPORTED (a newer format or section version), and the codes of the
 *         skeleton and clip creation the fields feed (CB_ERR_HIERARCHY, CB_ERR_DUPLICATE,
 *         CB_ERR_NOT_FINITE, CB_ERR_DEGENERATE, ...), CB_ERR_OUT_OF_MEMORY. err names the section
 *         and field.
 */
CB_API cb_result cb_pack_load_memory(const void *data, size_t size, const cb_pack_load_desc *desc,
                                     cb_pack **out, cb_error *err);

/** Reads a whole file (one read) and calls cb_pack_load_memory. Also CB_ERR_IO. */
CB_API cb_result cb_pack_load_file(const char *path, const cb_pack_load_desc *desc, cb_pack **out,
                                   cb_error *err);

/** Frees a pack with its skeleton, clips, masks and texts. NULL does nothing. */
CB_API void cb_pack_destroy(cb_pack *pack);

/** Everything the pack holds, as a desc for cb_pack_save* (valid as long as the pack). */
CB_API cb_pack_desc cb_pack_contents(const cb_pack *pack);

/** The pack's skeleton. */
CB_API const cb_skeleton *cb_pack_skeleton(const cb_pack *pack);

/** The inverse bind matrices (joint_count x 16 floats, column-major), or an empty span. */
CB_API cb_float_cspan cb_pack_inverse_binds(const cb_pack *pack);

/** Clips: count, each by index (NULL out of range), all of them as an array (for
 *  cb_graph_json_desc.clips), lookup by name (CB_ERR_NOT_FOUND, CB_ERR_NULL_ARGUMENT). */
CB_API uint32_t cb_pack_clip_count(const cb_pack *pack);
CB_API const cb_clip *cb_pack_clip(const cb_pack *pack, uint32_t index);
CB_API const cb_clip *const *cb_pack_clips(const cb_pack *pack);
CB_API cb_result cb_pack_find_clip(const cb_pack *pack, const char *name, uint32_t *index);
/** The compressed form clip `index` was stored in, or NULL (stored raw, or out of range). The
 *  clip cb_pack_clip() gives samples it directly, or its decoding when the pack was loaded with
 *  CB_PACK_CLIP_FORM_RAW (see COMPRESSED CLIPS). */
CB_API const cb_cclip *cb_pack_compressed_clip(const cb_pack *pack, uint32_t index);
/** What the importer measured for clip `index` (all negative out of range). */
CB_API cb_pack_clip_info cb_pack_query_clip_info(const cb_pack *pack, uint32_t index);

/** Masks and graph texts: counts, and each by index (all zero out of range). */
CB_API uint32_t cb_pack_mask_count(const cb_pack *pack);
CB_API cb_pack_mask cb_pack_query_mask(const cb_pack *pack, uint32_t index);
CB_API uint32_t cb_pack_graph_count(const cb_pack *pack);
CB_API cb_pack_graph cb_pack_query_graph(const cb_pack *pack, uint32_t index);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_PACK_H */
