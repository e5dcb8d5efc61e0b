/* The .cbpack layout shared by the reader and the writer (docs/formats.md has it byte by byte):
 * constants, and little-endian encoding of integers and floats that works on any host and any
 * alignment (every access is a byte copy). */
#ifndef CROWDBLEND_IO_PACK_FORMAT_H
#define CROWDBLEND_IO_PACK_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "crowdblend/pack.h"

/* "CBPACK\r\n": the CR LF pair catches a file that went through a text-mode conversion. */
#define CB_PACK_MAGIC "CBPACK\r\n"

enum {
    CB_PACK_MAGIC_BYTES = 8,
    /* magic, version u32, flags u32, file size u64, checksum u64 */
    CB_PACK_HEADER_BYTES = 32,
    /* section count u32, reserved u32, then the entries */
    CB_PACK_TABLE_HEAD_BYTES = 8,
    /* kind u32, version u32, offset u64, size u64 */
    CB_PACK_ENTRY_BYTES = 24,
    /* Sections start at multiples of 8 (zero bytes in between). */
    CB_PACK_SECTION_ALIGN = 8,
    CB_PACK_MAX_SECTIONS = 1 + CB_PACK_MAX_CLIPS + CB_PACK_MAX_MASKS + CB_PACK_MAX_GRAPHS,
};

/* Section kinds: four ASCII letters read as a little-endian u32. */
#define CB_PACK_FOURCC(a, b, c, d)                                                                 \
    ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define CB_PACK_KIND_SKELETON CB_PACK_FOURCC('S', 'K', 'E', 'L')
#define CB_PACK_KIND_CLIP CB_PACK_FOURCC('C', 'L', 'I', 'P')
#define CB_PACK_KIND_MASK CB_PACK_FOURCC('M', 'A', 'S', 'K')
#define CB_PACK_KIND_GRAPH CB_PACK_FOURCC('G', 'R', 'P', 'H')

/* Flag bits. Unknown bits are refused, so a later version can give them a meaning. */
enum {
    CB_PACK_SKEL_INVERSE_BINDS = 1u << 0,
    CB_PACK_CLIP_LOOPING = 1u << 0,
    CB_PACK_CLIP_ADDITIVE = 1u << 1,
    CB_PACK_CLIP_SCALE = 1u << 2,
    CB_PACK_MARKER_EVENT_ONLY = 1u << 0,
};

/* Clip frame encodings: plain float frames (crowdblend/clip.h, FRAMES), in every clip section
 * version; the compressed stored form (crowdblend/cclip.h, cb_cclip_serialize), from clip section
 * version 2, the root track raw after it; the compressed stored form holding the root track
 * (stream version 2), from clip section version 3, nothing after it. */
enum { CB_PACK_ENCODING_RAW = 0, CB_PACK_ENCODING_CCLIP = 1, CB_PACK_ENCODING_CCLIP_ROOT = 2 };

/* The clip section version the writer gives an encoding: 3 for encoding 2 only, so packs
 * without it stay readable by builds that read up to version 2. */
static inline uint32_t cb_pack_clip_version_for(uint32_t encoding)
{
    return encoding == CB_PACK_ENCODING_CCLIP_ROOT ? 3u : 2u;
}

/* Floats per rest transform: translation 3, rotation 4, scale 3. */
enum { CB_PACK_REST_FLOATS = 10 };

/* The fixed part of a CLIP section after its name: duration, frame count, joint count, flags,
 * encoding, root mode, root joint, origin (4), max error, error bound, marker count. */
enum { CB_PACK_CLIP_FIXED_BYTES = 14 * 4 };

static inline uint32_t cb_le_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t cb_le_u64(const unsigned char *p)
{
    return (uint64_t)cb_le_u32(p) | (uint64_t)cb_le_u32(p + 4) << 32;
}

static inline float cb_le_f32(const unsigned char *p)
{
    uint32_t u = cb_le_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline void cb_put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void cb_put_u64(unsigned char *p, uint64_t v)
{
    cb_put_u32(p, (uint32_t)v);
    cb_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline void cb_put_f32(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    cb_put_u32(p, u);
}

/* Bytes a stored name takes: u32 length, the bytes, a NUL, zeros up to a multiple of 4. */
static inline size_t cb_pack_name_bytes(size_t length)
{
    return 4 + (length + 1 + 3) / 4 * 4;
}

/* The checksum of a pack: XXH3-64 (seed 0) over every byte after the header. */
uint64_t cb_pack_checksum(const unsigned char *data, size_t size);

#endif
