/* Internals of compressed clips (crowdblend/cclip.h): the stored form's layout, the loaded
 * form (joint groups of W), the one rule that turns a quantized integer into a value, and the
 * compressor's entry point with the switches that docs/performance.md's alternatives use. */
#ifndef CROWDBLEND_COMPRESS_CCLIP_IMPL_H
#define CROWDBLEND_COMPRESS_CCLIP_IMPL_H

#include <math.h>

#include "base/base_impl.h"
#include "crowdblend/cclip.h"
#include "crowdblend/clip.h"

/* Components of a key, in stored order: translation x y z, rotation x y z w, scale - 1 x y z.
 * Tracks: translation (3), rotation (4), scale (3). */
enum {
    CB_CCLIP_COMPONENTS = 10,
    CB_CCLIP_TRACKS = 3,
    CB_CCLIP_COMPONENTS_NO_SCALE = 7,
    /* joint_bits marker of a component in a default track (nothing stored). */
    CB_CCLIP_DEFAULT_TRACK = 0xFF,
    /* joint_bits marker of the rotation component rebuilt from the other three (stored form
     * version 3, track mode 2: nothing stored for it). */
    CB_CCLIP_REBUILT = 0xFE,
};

/* Bits a field stores per key: 0 for the markers above. */
static inline unsigned cb_cclip_stored_bits(unsigned bits)
{
    return bits >= CB_CCLIP_REBUILT ? 0u : bits;
}

/* The rebuilt component of a rotation q (x y z w, the rebuilt one decoded as +0: offset 0, step
 * 0), >= 0: sqrt(1 - (((x x + y y) + z z) + w w)), the difference clamped at 0, each operation
 * rounded to float in this order (never fused), the square root exact (IEEE), so the SIMD
 * decoder (cclip_decode.h) gives the same bits. */
static inline float cb_cclip_rebuild(const float q[4])
{
    float xx = q[0] * q[0], yy = q[1] * q[1], zz = q[2] * q[2], ww = q[3] * q[3];
    float s = xx + yy;
    s = s + zz;
    s = s + ww;
    float d = 1.0f - s;
    return sqrtf(d > 0.0f ? d : 0.0f);
}

/* First component and component count of each track. */
static const uint8_t cb_cclip_track_first[CB_CCLIP_TRACKS] = {0, 3, 7};
static const uint8_t cb_cclip_track_size[CB_CCLIP_TRACKS] = {3, 4, 3};

/* The value of a quantized field: offset + step * q, a product and a sum each rounded to float
 * (never fused: every decoder, scalar or SIMD, with or without FMA hardware, computes these two
 * roundings, which is what makes them bit-identical). q < 2^24 converts exactly. A constant or
 * default component has step 0 and q 0. */
static inline float cb_cclip_value(float offset, float step, uint32_t q)
{
    float p = step * (float)q;
    return offset + p;
}

/* The stored value of a default track's component: the rest pose (identity for additive
 * clips), scale as its deviation from 1. */
float cb_cclip_default_value(const cb_skeleton *skeleton, bool additive, size_t joint,
                             int component);

/* ------------------------------------------------------------------------------------------ */
/* Stored form (little-endian)                                                                */
/*
 *   0  "CBCC"           magic
 *   4  u16 version      CB_CCLIP_STREAM_VERSION
 *   6  u16 flags        bit 0: additive; other bits 0
 *   8  u32 joint_count
 *  12  u32 source_frames
 *  16  u32 keys         2 <= keys <= source_frames <= CB_CLIP_MAX_FRAMES
 *  20  f32 max_error_m, f32 shell_distance_m, f32 measured_error_m
 *  32  u64 skeleton signature
 *  40  i8 translation exponent e_t, i8 scale exponent e_s (-60..60), u16 0
 *  44  (versions 1, 2) per joint, per track (translation, rotation, scale): u8 mode, then
 *      the track's component descriptions;
 *      (version 3) the mode map: 2 bits per track (track j * 3 + x at bit 2 (j * 3 + x),
 *      least significant first), ceil(6 joint_count / 8) bytes, padding bits 0; then per joint
 *      and track of mode 1 or 2 its component descriptions.
 *        Modes: 0 default (nothing stored), 1 quantized (every component described), 2 (version
 *        3, rotations only) one component rebuilt from the other three: u8 r (0..3: x y z w),
 *        then the descriptions of the three others in order; component r decodes to
 *        cb_cclip_rebuild of the four with it taken as 0 (>= 0: the compressor stores the track
 *        times the sign that component keeps in every key, the same rotations).
 *        A component description: u8 bits (0..24), then for 0 bits f32 value, else u16 offset
 *        code and u16 step code (cb_cclip_offset_value with the track's exponent, 0 for
 *        rotations; cb_cclip_step_value)
 *      then the keys: key after key, joint after joint, component after component, each
 *      quantized field of `bits` bits, least significant bit first, in one bit stream padded
 *      with zero bits to a whole byte.
 *   (version 2; version 3 with flag bit 1) the root track: per component (x, y, z, yaw) u8
 *      bits (0..24),
 *      f32 offset, f32 step (0 when bits is 0); then source_frames keys of the four fields,
 *      as above in their own bit stream padded to a whole byte. Frame f decodes to
 *      value(f) - value(0) per component (cb_cclip_value each, in float), so frame 0 is
 *      exactly zero as clip.h's root tracks are.
 *   Nothing follows. Version 1 streams (no root track) still load.
 *
 * Version 4 (what the compressor writes): the same parts, shorter.
 *   0  "CBCC", u16 version 4, u8 flags (as above), i8 e_t, i8 e_s (-60..60)
 *   9  joint_count, source_frames, keys: each an unsigned LEB128 number (7 bits a byte, least
 *      significant first, high bit set on every byte but the last; at most 5 bytes, in its
 *      shortest form)
 *      f32 max_error_m, f32 shell_distance_m, f32 measured_error_m, u64 skeleton signature
 *      the joint map: CB_CCLIP_JOINT_CODE_BITS (5) bits per joint, least significant first,
 *      ceil(5 joint_count / 8) bytes, padding bits 0: bit 0 translation mode (0 default, 1
 *      quantized), bits 1-3 rotation (0 default, 1 quantized, 2 + r with component r rebuilt;
 *      6, 7 refused), bit 4 scale mode;
 *      per joint and track not default, its component descriptions (none for the rebuilt
 *      one): u8 (bits | n << 5), bits 0..24, then an n-byte little-endian two's complement
 *      integer v in its shortest form (n 0 for v 0): for 0 bits (n <= 4, |v| <= 2^24) the
 *      constant cb_cclip_constant_value(v, e), else (n <= 2) the offset code v + 32768 and
 *      then the u16 step code as above;
 *      the keys as above;
 *      (flag bit 1) the root track: per component (x, y, z, yaw) u8 bits (0..24), then for
 *      bits > 0 a u16 step code (cb_cclip_step_value), the offset 0; the keys as above.
 */
#define CB_CCLIP_MAGIC "CBCC"
enum {
    CB_CCLIP_HEADER_BYTES = 44,
    CB_CCLIP_FLAG_ADDITIVE = 1,
    CB_CCLIP_FLAG_ROOT = 2,
    CB_CCLIP_MAX_EXPONENT = 60,
    /* Root track: its four components and the bytes of their descriptions. */
    CB_CCLIP_ROOT_COMPONENTS = 4,
    CB_CCLIP_ROOT_FIELD_BYTES = 9,
    /* Version 4: bits of a joint's code in the joint map. */
    CB_CCLIP_JOINT_CODE_BITS = 5,
    /* Version 4: the largest magnitude of a constant's code (exact in float). */
    CB_CCLIP_CONSTANT_CODE_MAX = 1 << 24,
};

/* Largest magnitude a root field may reach (offset + step (2^bits - 1)), metres or radians:
 * the loader refuses more, so every decoded value and difference is finite. */
#define CB_CCLIP_ROOT_MAX_VALUE 1e6

/* Offsets of quantized fields lie on a grid of 2^(e - 15) in [-2^e, 2^e), where 2^e bounds the
 * track type's values in the clip: code o is (o - 32768) 2^(e - 15), exact in float. 16 bits
 * instead of a float's 32, at the cost of an offset up to one grid step below the minimum,
 * which the field's range absorbs. */
static inline float cb_cclip_offset_value(uint16_t code, int exponent)
{
    return ldexpf((float)((int32_t)code - 32768), exponent - 15);
}

/* The code of an offset on the grid (exact: the value came from a code). */
static inline uint16_t cb_cclip_offset_code(float offset, int exponent)
{
    return (uint16_t)(int32_t)(ldexpf(offset, 15 - exponent) + 32768.0f);
}

/* Version 4 stores a constant component on a grid of 2^(e - 23) (e the track type's
 * exponent, as for offsets): code v is v 2^(e - 23), |v| <= 2^24, exact in float. */
static inline float cb_cclip_constant_value(int32_t code, int exponent)
{
    return ldexpf((float)code, exponent - 23);
}

/* The code of a constant on the grid (exact: the value came from a code). */
static inline int32_t cb_cclip_constant_code(float value, int exponent)
{
    return (int32_t)ldexpf(value, 23 - exponent);
}

/* The grid value nearest v (the compressor's constants; clamped to the codes' range). */
static inline float cb_cclip_constant_round(double v, int exponent)
{
    double code = nearbyint(ldexp(v, 23 - exponent));
    const double top = (double)CB_CCLIP_CONSTANT_CODE_MAX;
    code = code > top ? top : code < -top ? -top : code;
    return cb_cclip_constant_value((int32_t)code, exponent);
}

/* Steps keep 11 significant bits: code (x << 10 | m) is (1024 + m) 2^(x - 50), exact in float,
 * from 2^-40 to 2047 * 2^13. Rounded up, a step covers its range; 1 part in 1024 coarser. */
static inline float cb_cclip_step_value(uint16_t code)
{
    return ldexpf((float)(1024 + (code & 1023u)), (int)(code >> 10) - 50);
}

/* The code of the smallest representable step >= step (clamped to the representable range). */
static inline uint16_t cb_cclip_step_code(float step)
{
    int e;
    float m = frexpf(step, &e); /* step = m 2^e, m in [0.5, 1) */
    uint32_t mant = (uint32_t)ceilf(m * 2048.0f);
    if (mant >= 2048u) {
        mant = 1024u, e++;
    }
    int x = e - 11 + 50;
    if (!(step > 0.0f) || x < 0) {
        return 0;
    }
    return x > 63 ? 0xFFFFu : (uint16_t)((uint32_t)x << 10 | (mant - 1024u));
}

/* One component of a joint as the stored form describes it. */
typedef struct cb_cclip_field {
    uint8_t bits; /* 0..24, or CB_CCLIP_DEFAULT_TRACK */
    float offset;
    float step;
} cb_cclip_field;

/* A validated stored form: the header and where its parts are. */
typedef struct cb_cclip_parsed {
    uint32_t version;
    uint32_t joint_count, source_frames, keys;
    bool additive;
    int8_t exponent[CB_CCLIP_TRACKS]; /* per track type; rotations 0 */
    float max_error_m, shell_distance_m, measured_error_m;
    uint64_t signature;
    const unsigned char *fields; /* the per-joint descriptions (version 3: the mode map, 4: the
                                    joint map) */
    const unsigned char *data;   /* the bit stream */
    uint32_t bits_per_key;
    const unsigned char *root; /* the root track's block (version 2, flag bit 1), or NULL */
    size_t root_bytes;
    size_t size;
} cb_cclip_parsed;

/* Validates bytes as a stored form for skeleton (joint count and signature); on success fills
 * p. Never reads outside [bytes, bytes + size). */
cb_result cb_cclip_parse(const cb_skeleton *skeleton, const void *bytes, size_t size,
                         cb_cclip_parsed *p, cb_error *err);

/* Reads the field descriptions of a parsed stream into fields[joint_count * 10] (defaults
 * resolved: bits CB_CCLIP_DEFAULT_TRACK, offset the default value, step 0). */
void cb_cclip_parsed_fields(const cb_cclip_parsed *p, const cb_skeleton *skeleton,
                            cb_cclip_field *fields);

/* Writes a stored form. fields: joint_count * 10 (defaults marked as above); get_q(user, key,
 * joint, component) gives the integers of the fields with bits; header->root (root_bytes) is
 * copied after them when not NULL (flag bit 1). Returns the bytes written, or the bytes needed
 * when dst is NULL. */
size_t cb_cclip_write_stream(const cb_cclip_parsed *header, const cb_cclip_field *fields,
                             uint32_t (*get_q)(const void *user, size_t key, size_t joint,
                                               int component),
                             const void *user, unsigned char *dst);

/* ---- the root track's block (stream.c: validation, decoding, writing; root.c: compression) */

typedef struct cb_cclip_root_field {
    uint8_t bits; /* 0..24 */
    float offset, step;
} cb_cclip_root_field;

/* How far a field's values can reach, the quantity CB_CCLIP_ROOT_MAX_VALUE bounds: the loader
 * refuses a field beyond it, and the compressor does not write one. */
static inline double cb_cclip_root_reach(const cb_cclip_root_field *f)
{
    return fabs((double)f->offset) + (double)f->step * ldexp(1.0, f->bits);
}

/* Validates the root block at [at, at + size) for `frames` frames, in the form of stored form
 * `version` (2..4): it must take exactly size bytes. Never reads outside it. */
cb_result cb_cclip_root_parse(unsigned version, const unsigned char *at, size_t size,
                              uint32_t frames, cb_error *err);

/* The track of a validated block (size bytes, stored form `version`): frames * 4 floats, x y z
 * yaw per frame, frame 0 zero. */
void cb_cclip_root_decode(unsigned version, const unsigned char *block, size_t size,
                          uint32_t frames, float *out);

/* Writes a block in the form of stored form `version` from its fields (version 4: offsets 0,
 * steps on their codes) and integers q (frames * 4); the bytes written, or the bytes needed
 * when dst is NULL. */
size_t cb_cclip_root_write(unsigned version, const cb_cclip_root_field *fields, const uint32_t *q,
                           uint32_t frames, unsigned char *dst);

/* Compresses a root track (frames * 4 floats, frame 0 zero) to the bound of crowdblend/cclip.h
 * (ROOT TRACK) into a block allocated with `a` (*bytes of it); the largest errors measured per
 * frame (position as a vector, m; yaw, rad) into pos_err and yaw_err. */
cb_result cb_cclip_root_compress(const float *track, uint32_t frames, float max_error_m,
                                 float shell_m, const cb_allocator *a, unsigned char **block,
                                 size_t *bytes, double *pos_err, double *yaw_err, cb_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Loaded form                                                                                */

/* Where each component of one joint group sits in a key: all W lanes of component k share the
 * field `bits` wide at bit `shift` of word `word` (of the group's `words` words per lane); a
 * field never reaches bit 31 (so it converts as a signed integer at every W). Only the `active`
 * lanes (joints with some field of more than 0 bits) are stored: word m of the group is
 * `active` consecutive words, which the group's lane permutation puts back in their lanes.
 * What the group decoder reads per component: `at`, where its words start among the group's
 * (word * active), and `mask`, the field's bits in place (0 for width 0). It converts the
 * masked word, q 2^shift, and the group's ranges hold step 2^-shift: the product is step q,
 * exactly (cb_cclip_group_step). */
/* What a group stores, for the group decoder's paths (cclip_decode.h): nothing (every
 * component constant), only rotations' x y z with w rebuilt (every other component constant:
 * most groups of a skeleton below its root), or anything else. */
typedef enum cb_cclip_group_kind {
    CB_CCLIP_GROUP_CONSTANT = 0,
    CB_CCLIP_GROUP_ROTATION = 1,
    CB_CCLIP_GROUP_GENERAL = 2,
} cb_cclip_group_kind;

typedef struct cb_cclip_group {
    uint32_t word_offset; /* first word of the group in a key */
    uint32_t words;       /* words per lane; 0 when every component of the group is constant */
    uint32_t active;      /* lanes stored */
    uint8_t word[CB_CCLIP_COMPONENTS];
    uint8_t shift[CB_CCLIP_COMPONENTS];
    uint8_t bits[CB_CCLIP_COMPONENTS];
    uint8_t kind; /* cb_cclip_group_kind (in what was padding: the group is no larger) */
    uint32_t at[CB_CCLIP_COMPONENTS];
    uint32_t mask[CB_CCLIP_COMPONENTS];
    uint32_t rebuilt;    /* bit k (0..3): some lane rebuilds rotation component k at every key */
    uint32_t rebuild_at; /* where the group's rows start in cb_cclip.rebuild (floats) */
} cb_cclip_group;

/* A field's step from the decoder's (scaled by 2^-shift; exact both ways, steps being at least
 * 2^-40 and shifts below 31), and back. */
static inline float cb_cclip_group_step(float scaled, unsigned shift)
{
    return scaled * (float)(1u << shift);
}
static inline float cb_cclip_group_scaled_step(float step, unsigned shift)
{
    return step / (float)(1u << shift);
}

struct cb_cclip {
    cb_allocator allocator;
    size_t alloc_bytes;
    uint64_t skeleton_signature;
    uint32_t joint_count;
    uint32_t group_count;
    uint32_t keys;
    uint32_t source_frames;
    uint32_t components; /* 7, or 10 when some decoded scale differs from 1 */
    uint32_t key_words;  /* words of one key, all groups */
    uint32_t bits_per_key;
    uint32_t stream_version; /* what it was loaded from (serialize writes it again) */
    bool additive;
    bool has_scale;
    int8_t exponent[CB_CCLIP_TRACKS];
    float max_error_m, shell_distance_m, measured_error_m;
    float keys_f; /* (float)(keys - 1): intervals, for locating a time */
    size_t stream_bytes;
    const cb_cclip_group *groups; /* group_count */
    /* Per group, per component: offset[W] then step[W] 2^-shift (cb_cclip_group_step; padding
     * and unstored lanes: step 0). */
    const float *ranges;
    /* Per group with rebuilt components (from its rebuild_at): one row of W floats for w alone
     * (rebuilt == 8), else one per rotation component x y z w: 1 in the lanes that rebuild the
     * component at every key, else 0. The component is (offset + step q) + d cb_cclip_rebuild,
     * exact since d is 0 or 1 and the first term is +0 where d is 1. A constant rotation's
     * rebuilt component is rebuilt once at load, into its offset (d 0). */
    const float *rebuild;
    const uint32_t *words;     /* keys * key_words, then W zero words (vector loads of a
                                  group's last word may read past its active lanes) */
    const void *perms;         /* group_count lane permutations (cb_cclip_lane_perm_bytes()) */
    const uint8_t *joint_bits; /* joint_count * 10: bits, or CB_CCLIP_DEFAULT_TRACK */
    const uint8_t *rank;       /* joint_count: position among its group's active lanes, or
                                  0xFF when the joint stores no words */
    const unsigned char *root_block; /* the stored root block (serialize copies it), or NULL */
    size_t root_block_bytes;
    const float *root_track; /* source_frames * 4 decoded floats, or NULL */
};

/* Bytes and alignment of one group's lane permutation (src/simd/vbits.h), and its
 * construction from src[W] (lane l takes stored element src[l], or 0 when src[l] < 0). */
size_t cb_cclip_lane_perm_bytes(void);
void cb_cclip_lane_perm_init(void *perm, const int32_t *src);

/* Whether some joint's scale track is stored (not default): a clip without scale (frames of 7
 * floats, scale 1) can drop the decoded scale, which is the rest scale of default tracks. */
bool cb_cclip_stores_scale(const cb_cclip *c);

/* The clip decoded at its source frames into frames (source_frames * joint_count * stride
 * floats, the FRAMES layout of crowdblend/clip.h, stride 7 or 10): the keys from the group
 * decoder, lerped to each frame and normalized in double where the compressor measured, rounded
 * once (the same bits at every W); each rotation on the side of the previous frame's, a looping
 * clip's last frame its first. Scratch from allocator: CB_OK or CB_ERR_OUT_OF_MEMORY. */
cb_result cb_cclip_write_frames(const cb_cclip *clip, size_t stride, bool loop,
                                const cb_allocator *allocator, float *frames);

/* How far from unit length a decoded key's rotation may be for cb_cclip_clip_create: the
 * quantization moves it by far less (the bound on the shell), the sampler normalizes, and
 * anything near zero is refused. */
#define CB_CCLIP_KEY_UNIT_TOLERANCE 0.1

/* A clip (crowdblend/clip.h) whose keys are `clip` itself, sampled compressed by the pose jobs
 * (cb_clip_create_packed): desc as cb_cclip_to_clip takes it. clip must outlive the result.
 * Also CB_ERR_DEGENERATE: a decoded rotation far from unit length, or in the other hemisphere
 * from the previous key's. */
cb_result cb_cclip_clip_create(const cb_cclip *clip, const cb_clip_frames_desc *desc, cb_clip **out,
                               cb_error *err);

/* Bytes the loaded form of clip c would hold in a build of SIMD width `width` (4, 8 or 16), for
 * the figures of docs/performance.md; c's own cb_cclip_query_info().bytes is this for W. */
size_t cb_cclip_loaded_bytes(const cb_cclip *c, size_t width);

/* Packs a validated stored form into joint groups (the one path of create and load). */
cb_result cb_cclip_build(const cb_cclip_parsed *p, const cb_skeleton *skeleton,
                         const cb_allocator *allocator, cb_cclip **out, cb_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Compressor                                                                                 */

/* Switches for measuring the design against its alternatives (docs/performance.md). All zero:
 * what cb_cclip_create does. */
typedef struct cb_cclip_options {
    /* One precision for every animated track (the coarsest that meets the bound) instead of a
     * search per track. */
    bool uniform_precision;
    /* Quantize over fixed ranges ([-1, 1] for rotations, +-the clip's largest magnitude for
     * translations and scales) instead of each component's own range. */
    bool no_range_reduction;
    /* Skip the last pass that coarsens tracks one level at a time while the bound holds. */
    bool no_trim;
    /* Skip the pass after it that coarsens single components one bit at a time. */
    bool no_component_trim;
    /* Store every rotation's four components (as stored form versions 1 and 2 do) instead of
     * rebuilding one from the other three where it keeps its sign away from 0. */
    bool no_rebuilt;
} cb_cclip_options;

/* What the compressor did (for the report and docs). */
typedef struct cb_cclip_compress_stats {
    double seconds;       /* wall time of the whole compression */
    uint32_t candidates;  /* key rates tried */
    uint32_t feasible;    /* of which met the bound */
    uint32_t chosen_keys; /* keys of the result */
    uint32_t fixup_steps; /* precision raises after the per-track start */
    uint32_t trim_steps;  /* precision lowerings kept by the trim pass */
    /* The root track's largest errors per frame (position as a vector, yaw). */
    double root_pos_error_m, root_yaw_error_rad;
} cb_cclip_compress_stats;

/* cb_cclip_create with switches; stats may be NULL. */
cb_result cb_cclip_create_ex(const cb_cclip_desc *desc, const cb_cclip_options *options,
                             cb_cclip **out, cb_cclip_compress_stats *stats, cb_error *err);

/* Where a normalized time falls between keys i and i + 1 (fraction f), as cb_clip_locate. */
static inline void cb_cclip_locate(const struct cb_cclip *c, float t, bool looping, uint32_t *i,
                                   float *f)
{
    if (looping) {
        t = t - floorf(t);
    } else {
        t = !(t > 0.0f) ? 0.0f : t > 1.0f ? 1.0f : t;
    }
    float x = t * c->keys_f;
    uint32_t k = (uint32_t)x;
    if (k >= c->keys - 1) {
        k = c->keys - 2;
    }
    *i = k;
    *f = x - (float)k;
}

#endif
