/* The stored form of compressed clips (layout in cclip_impl.h): validation, writing, the
 * scalar reference decoder, and loading into joint groups of W.
 *
 * The stored form knows nothing of W: per joint and component a field width, an offset and a
 * step, then the quantized integers key after key. Loading packs every group of W joints into
 * "vertical" words: for each component, the widest field of the group's joints sets a common
 * width, the components are laid out in order in 32-bit words (a field never straddles two
 * words), and lane l of a word belongs to joint g * W + l. A joint with a narrower field simply
 * leaves the high bits of its lane zero, so its integers, and with them every decoded value,
 * are the same for every W. */
#include <stdlib.h>
#include <string.h>

#include "compress/cclip_impl.h"
#include "crowdblend/config.h"

/* ------------------------------------------------------------------------------------------ */
/* Little-endian fields                                                                       */

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float rdf(const unsigned char *p)
{
    uint32_t u = rd32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static unsigned char *wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
    return p + 4;
}

static unsigned char *wr16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
    return p + 2;
}

static unsigned char *wrf(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return wr32(p, u);
}

/* `bits` (<= 24) bits at bit position pos of a least-significant-bit-first stream. Reads only
 * the bytes the field covers. */
static uint32_t read_bits(const unsigned char *data, uint64_t pos, unsigned bits)
{
    uint32_t v = 0;
    unsigned got = 0;
    while (got < bits) {
        unsigned in_byte = (unsigned)(pos & 7u);
        unsigned take = 8 - in_byte < bits - got ? 8 - in_byte : bits - got;
        uint32_t chunk = ((uint32_t)data[pos >> 3] >> in_byte) & ((1u << take) - 1u);
        v |= chunk << got;
        got += take;
        pos += take;
    }
    return v;
}

/* ------------------------------------------------------------------------------------------ */
/* Validation                                                                                 */

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* The n-byte little-endian two's complement integer at p (n <= 4). */
static int32_t rd_signed(const unsigned char *p, unsigned n)
{
    uint32_t u = 0;
    for (unsigned i = 0; i < n; ++i) {
        u |= (uint32_t)p[i] << (8 * i);
    }
    if (n > 0 && n < 4 && (u >> (8 * n - 1)) != 0) {
        u |= ~0u << (8 * n);
    }
    return (int32_t)u;
}

/* Bytes of the shortest two's complement form of v (0 for 0). */
static unsigned signed_length(int32_t v)
{
    for (unsigned n = 0; n < 4; ++n) {
        int64_t lo = n == 0 ? 0 : -((int64_t)1 << (8 * n - 1));
        int64_t hi = n == 0 ? 0 : ((int64_t)1 << (8 * n - 1)) - 1;
        if (v >= lo && v <= hi) {
            return n;
        }
    }
    return 4;
}

/* One component's description at *at (advanced past it), with the track's offset exponent.
 * Returns false when it runs past end, its width is out of range, or (version 4) its integer
 * is not in its shortest form or out of range. */
static bool read_component(unsigned version, const unsigned char **at, const unsigned char *end,
                           int exponent, cb_cclip_field *f)
{
    const unsigned char *p = *at;
    if (version < 4) {
        if (end - p < 5 || p[0] > CB_CCLIP_MAX_BITS) {
            return false;
        }
        f->bits = p[0];
        if (f->bits == 0) {
            f->offset = rdf(p + 1);
            f->step = 0.0f;
        } else {
            f->offset = cb_cclip_offset_value(rd16(p + 1), exponent);
            f->step = cb_cclip_step_value(rd16(p + 3));
        }
        *at = p + 5;
        return true;
    }
    if (end - p < 1) {
        return false;
    }
    const unsigned bits = p[0] & 31u, n = p[0] >> 5;
    const unsigned need = 1 + n + (bits > 0 ? 2 : 0);
    if (bits > CB_CCLIP_MAX_BITS || n > (bits > 0 ? 2u : 4u) || (size_t)(end - p) < need) {
        return false;
    }
    const int32_t v = rd_signed(p + 1, n);
    if (signed_length(v) != n ||
        (bits == 0 && (v > CB_CCLIP_CONSTANT_CODE_MAX || v < -CB_CCLIP_CONSTANT_CODE_MAX))) {
        return false;
    }
    f->bits = (uint8_t)bits;
    if (bits == 0) {
        f->offset = cb_cclip_constant_value(v, exponent);
        f->step = 0.0f;
    } else {
        f->offset = cb_cclip_offset_value((uint16_t)(v + 32768), exponent);
        f->step = cb_cclip_step_value(rd16(p + 1 + n));
    }
    *at = p + need;
    return true;
}

/* Writes a component description in the form of version `version`; returns the end. */
static unsigned char *write_component(unsigned version, const cb_cclip_field *f, int exponent,
                                      unsigned char *at)
{
    if (version < 4) {
        *at++ = f->bits;
        if (f->bits == 0) {
            return wrf(at, f->offset);
        }
        return wr16(wr16(at, cb_cclip_offset_code(f->offset, exponent)),
                    cb_cclip_step_code(f->step));
    }
    const int32_t v = f->bits == 0 ? cb_cclip_constant_code(f->offset, exponent)
                                   : (int32_t)cb_cclip_offset_code(f->offset, exponent) - 32768;
    const unsigned n = signed_length(v);
    *at++ = (unsigned char)(f->bits | n << 5);
    for (unsigned i = 0; i < n; ++i) {
        *at++ = (unsigned char)((uint32_t)v >> (8 * i));
    }
    return f->bits == 0 ? at : wr16(at, cb_cclip_step_code(f->step));
}

/* Bytes of a component description in the form of version `version`. */
static size_t component_bytes(unsigned version, const cb_cclip_field *f, int exponent)
{
    unsigned char scratch[8];
    return (size_t)(write_component(version, f, exponent, scratch) - scratch);
}

/* Bytes of the track map: version 3 2 bits per track, version 4 a code of 5 bits per joint;
 * versions 1 and 2 have none (a mode byte per track). */
static size_t map_bytes(unsigned version, uint32_t joints)
{
    size_t bits = version >= 4   ? (size_t)joints * CB_CCLIP_JOINT_CODE_BITS
                  : version == 3 ? (size_t)joints * CB_CCLIP_TRACKS * 2
                                 : 0;
    return (bits + 7) / 8;
}

/* Where the component descriptions start. */
static const unsigned char *first_description(const cb_cclip_parsed *p)
{
    return p->fields + map_bytes(p->version, p->joint_count);
}

/* The mode of track x of joint j (0 default, 1 every component described, 2 a rotation with
 * component *rebuilt rebuilt; parse_fields refuses other modes and a rebuilt component above
 * 3), *rebuilt -1 for modes other than 2. Versions 1, 2: the byte at *at, advanced past it (the
 * caller checked that it is there); version 3: the mode map, and for mode 2 the byte at *at,
 * advanced past it (4 when *at is end); version 4: the joint's code. */
static unsigned track_mode(const cb_cclip_parsed *p, const unsigned char **at,
                           const unsigned char *end, uint32_t j, int x, int *rebuilt)
{
    *rebuilt = -1;
    if (p->version < 3) {
        return *(*at)++;
    }
    if (p->version == 3) {
        size_t t = (size_t)j * CB_CCLIP_TRACKS + (size_t)x;
        unsigned mode = (p->fields[t / 4] >> (2 * (t % 4))) & 3u;
        if (mode == 2) {
            *rebuilt = *at < end ? *(*at)++ : 4;
        }
        return mode;
    }
    unsigned code =
        read_bits(p->fields, (uint64_t)j * CB_CCLIP_JOINT_CODE_BITS, CB_CCLIP_JOINT_CODE_BITS);
    if (x != 1) {
        return (code >> (x == 0 ? 0 : 4)) & 1u;
    }
    unsigned rotation = (code >> 1) & 7u;
    if (rotation >= 2) {
        *rebuilt = (int)rotation - 2;
        return 2;
    }
    return rotation;
}

/* Components a track of `mode` describes: none (default), all, or x y z (w rebuilt). */
static int described_components(unsigned mode, int x)
{
    return mode == 0 ? 0 : mode == 2 ? 3 : cb_cclip_track_size[x];
}

/* A version 3 or 4 map: within the bytes, padding bits 0. */
static cb_result parse_map(const cb_cclip_parsed *p, const unsigned char *end, cb_error *err)
{
    const size_t bytes = map_bytes(p->version, p->joint_count);
    if ((size_t)(end - p->fields) < bytes) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: truncated in the %s map",
                            p->version >= 4 ? "joint" : "mode");
    }
    const size_t bits =
        (size_t)p->joint_count * (p->version >= 4 ? CB_CCLIP_JOINT_CODE_BITS : CB_CCLIP_TRACKS * 2);
    if (bits % 8 != 0 && (p->fields[bytes - 1] >> (bits % 8)) != 0) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: %s map padding bits are not zero",
                            p->version >= 4 ? "joint" : "mode");
    }
    return CB_OK;
}

static cb_result parse_fields(const cb_cclip_parsed *p, const unsigned char *end,
                              const unsigned char **data_out, uint64_t *bits_out, cb_error *err)
{
    uint64_t bits = 0;
    if (p->version >= 3) {
        cb_result r = parse_map(p, end, err);
        if (r != CB_OK) {
            return r;
        }
    }
    const unsigned char *at = first_description(p);
    for (uint32_t j = 0; j < p->joint_count; ++j) {
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            if (p->version < 3 && at >= end) {
                return cb_error_set(err, CB_ERR_PARSE, "cclip stream: truncated at joint %u", j);
            }
            int rebuilt;
            unsigned mode = track_mode(p, &at, end, j, x, &rebuilt);
            const unsigned top = p->version < 3 ? 1u : x == 1 ? 2u : 1u;
            if (mode > top) {
                return cb_error_set(err, CB_ERR_PARSE,
                                    "cclip stream: joint %u track %d has mode %u (0..%u)", j, x,
                                    mode, top);
            }
            if (mode == 2 && rebuilt > 3) {
                return cb_error_set(err, CB_ERR_PARSE,
                                    "cclip stream: joint %u rotation: truncated or a rebuilt "
                                    "component other than 0..3",
                                    j);
            }
            for (int k = 0; k < described_components(mode, x); ++k) {
                cb_cclip_field f = {0};
                if (!read_component(p->version, &at, end, p->exponent[x], &f)) {
                    return cb_error_set(err, CB_ERR_PARSE,
                                        "cclip stream: joint %u track %d: truncated, a field "
                                        "wider than %d bits, or (version 4) a value not in its "
                                        "shortest form or out of range",
                                        j, x, CB_CCLIP_MAX_BITS);
                }
                if (!isfinite(f.offset)) {
                    return cb_error_set(err, CB_ERR_NOT_FINITE,
                                        "cclip stream: joint %u has a non-finite value", j);
                }
                bits += f.bits;
            }
        }
    }
    *data_out = at;
    *bits_out = bits;
    return CB_OK;
}

/* An unsigned LEB128 number at *at (advanced past it): at most 5 bytes, at most UINT32_MAX,
 * in its shortest form (no final zero byte after the first). False otherwise or past end. */
static bool read_varint(const unsigned char **at, const unsigned char *end, uint32_t *v)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < 5 && *at + i < end; ++i) {
        unsigned char byte = (*at)[i];
        x |= (uint64_t)(byte & 0x7Fu) << (7 * i);
        if ((byte & 0x80u) == 0) {
            if ((i > 0 && byte == 0) || x > UINT32_MAX) {
                return false;
            }
            *at += i + 1;
            *v = (uint32_t)x;
            return true;
        }
    }
    return false;
}

static unsigned char *write_varint(unsigned char *at, uint32_t v)
{
    while (v >= 0x80u) {
        *at++ = (unsigned char)(v | 0x80u);
        v >>= 7;
    }
    *at++ = (unsigned char)v;
    return at;
}

static size_t varint_bytes(uint32_t v)
{
    unsigned char scratch[5];
    return (size_t)(write_varint(scratch, v) - scratch);
}

/* The header after the version: versions 1-3 the fixed 44 bytes, version 4 the short form
 * (cclip_impl.h). Sets p's header fields, *flags and p->fields. */
static cb_result parse_header(const unsigned char *b, size_t size, cb_cclip_parsed *p,
                              unsigned *flags, cb_error *err)
{
    if (p->version < 4) {
        if (size < CB_CCLIP_HEADER_BYTES) {
            return cb_error_set(err, CB_ERR_PARSE, "cclip stream: shorter than its header");
        }
        *flags = (unsigned)b[6] | (unsigned)b[7] << 8;
        p->joint_count = rd32(b + 8);
        p->source_frames = rd32(b + 12);
        p->keys = rd32(b + 16);
        p->max_error_m = rdf(b + 20);
        p->shell_distance_m = rdf(b + 24);
        p->measured_error_m = rdf(b + 28);
        p->signature = rd64(b + 32);
        p->exponent[0] = (int8_t)b[40];
        p->exponent[2] = (int8_t)b[41];
        p->fields = b + CB_CCLIP_HEADER_BYTES;
        if (b[42] != 0 || b[43] != 0) {
            return cb_error_set(err, CB_ERR_PARSE, "cclip stream: reserved bytes are not zero");
        }
        return CB_OK;
    }
    if (size < 9) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: shorter than its header");
    }
    const unsigned char *at = b + 9, *end = b + size;
    if (!read_varint(&at, end, &p->joint_count) || !read_varint(&at, end, &p->source_frames) ||
        !read_varint(&at, end, &p->keys) || end - at < 20) {
        return cb_error_set(err, CB_ERR_PARSE,
                            "cclip stream: header truncated or a count not in its shortest form");
    }
    *flags = b[6];
    p->exponent[0] = (int8_t)b[7];
    p->exponent[2] = (int8_t)b[8];
    p->max_error_m = rdf(at);
    p->shell_distance_m = rdf(at + 4);
    p->measured_error_m = rdf(at + 8);
    p->signature = rd64(at + 12);
    p->fields = at + 20;
    return CB_OK;
}

/* The magic and the version, the first 6 bytes: *version set. */
static cb_result parse_version(const unsigned char *b, size_t size, unsigned *version,
                               cb_error *err)
{
    if (size < 6 || memcmp(b, CB_CCLIP_MAGIC, 4) != 0) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: %s",
                            size < 6 ? "shorter than its header" : "no CBCC magic");
    }
    *version = (unsigned)b[4] | (unsigned)b[5] << 8;
    if (*version == 0 || *version > CB_CCLIP_STREAM_VERSION) {
        return cb_error_set(err, CB_ERR_UNSUPPORTED, "cclip stream: version %u (this build: 1..%d)",
                            *version, CB_CCLIP_STREAM_VERSION);
    }
    return CB_OK;
}

static cb_result check_flags(unsigned version, unsigned flags, cb_error *err)
{
    if ((flags & ~(unsigned)(CB_CCLIP_FLAG_ADDITIVE | CB_CCLIP_FLAG_ROOT)) != 0) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: unknown flags 0x%x", flags);
    }
    /* One clip has one stored form: version 1 never has a root track, version 2 always,
     * versions 3 and 4 as flag bit 1 says. */
    if (version < 3 && ((flags & CB_CCLIP_FLAG_ROOT) != 0) != (version == 2)) {
        return cb_error_set(err, CB_ERR_PARSE,
                            "cclip stream: version %u %s a root track (version 2 exactly when "
                            "flag bit 1 is set)",
                            version, (flags & CB_CCLIP_FLAG_ROOT) ? "with" : "without");
    }
    return CB_OK;
}

/* The header's numbers: exponents in range, the skeleton's, key and frame counts, and the
 * bound, shell and measured error. */
static cb_result check_header(const cb_skeleton *skeleton, const cb_cclip_parsed *p, cb_error *err)
{
    if (abs(p->exponent[0]) > CB_CCLIP_MAX_EXPONENT ||
        abs(p->exponent[2]) > CB_CCLIP_MAX_EXPONENT) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: exponents %d, %d out of range",
                            p->exponent[0], p->exponent[2]);
    }
    if (p->joint_count != cb_skeleton_joint_count(skeleton) ||
        p->signature != cb_skeleton_signature(skeleton)) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cclip stream: built for another skeleton (%u joints, signature "
                            "%016llx)",
                            p->joint_count, (unsigned long long)p->signature);
    }
    if (p->keys < 2 || p->keys > p->source_frames || p->source_frames > CB_CLIP_MAX_FRAMES) {
        return cb_error_set(err, CB_ERR_PARSE,
                            "cclip stream: %u keys of %u source frames (2 <= keys <= frames <= "
                            "%d)",
                            p->keys, p->source_frames, CB_CLIP_MAX_FRAMES);
    }
    if (!isfinite(p->max_error_m) || !isfinite(p->shell_distance_m) ||
        !isfinite(p->measured_error_m)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "cclip stream: a header number is not finite");
    }
    if (!(p->max_error_m > 0.0f) || !(p->shell_distance_m > 0.0f) || p->measured_error_m < 0.0f) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: bound, shell or error out of range");
    }
    return CB_OK;
}

/* What follows the field descriptions (bits per key): the keys, exactly, and with a root track
 * the root track's block after them. */
static cb_result parse_keys(cb_cclip_parsed *p, const unsigned char *end, uint64_t bits, bool root,
                            cb_error *err)
{
    uint64_t data_bits = bits * p->keys;
    uint64_t data_bytes = (data_bits + 7) / 8;
    uint64_t left = (uint64_t)(end - p->data);
    if (root ? left < data_bytes : left != data_bytes) {
        return cb_error_set(
            err, CB_ERR_PARSE, "cclip stream: %llu bytes of keys%s, expected %llu (%s)",
            (unsigned long long)left, root ? " and root track" : "", (unsigned long long)data_bytes,
            left < data_bytes ? "truncated" : "trailing bytes");
    }
    /* Padding bits are zero, so one clip has one stored form. */
    if (data_bits % 8 != 0 && (p->data[data_bytes - 1] >> (data_bits % 8)) != 0) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: padding bits are not zero");
    }
    if (root) {
        p->root = p->data + data_bytes;
        p->root_bytes = (size_t)(left - data_bytes);
        return cb_cclip_root_parse(p->version, p->root, p->root_bytes, p->source_frames, err);
    }
    return CB_OK;
}

cb_result cb_cclip_parse(const cb_skeleton *skeleton, const void *bytes, size_t size,
                         cb_cclip_parsed *p, cb_error *err)
{
    if (skeleton == NULL || bytes == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cclip stream: %s is NULL",
                            skeleton == NULL ? "skeleton" : "bytes");
    }
    const unsigned char *b = bytes, *end = b + size;
    unsigned version = 0;
    cb_result r = parse_version(b, size, &version, err);
    if (r != CB_OK) {
        return r;
    }
    *p = (cb_cclip_parsed){.version = version, .size = size};
    unsigned flags = 0;
    r = parse_header(b, size, p, &flags, err);
    if (r != CB_OK) {
        return r;
    }
    r = check_flags(version, flags, err);
    if (r != CB_OK) {
        return r;
    }
    p->additive = (flags & CB_CCLIP_FLAG_ADDITIVE) != 0;
    r = check_header(skeleton, p, err);
    if (r != CB_OK) {
        return r;
    }
    uint64_t bits = 0;
    r = parse_fields(p, end, &p->data, &bits, err);
    if (r != CB_OK) {
        return r;
    }
    p->bits_per_key = (uint32_t)bits;
    return parse_keys(p, end, bits, (flags & CB_CCLIP_FLAG_ROOT) != 0, err);
}

/* ------------------------------------------------------------------------------------------ */
/* The root track's block                                                                     */

/* The four component descriptions of a root block at [at, end) into f: versions 2, 3 u8 bits,
 * f32 offset, f32 step each; version 4 u8 bits, then for bits > 0 a u16 step code
 * (cb_cclip_step_value), the offset 0. Returns their bytes, or 0 when they run past end. */
static size_t root_fields(unsigned version, const unsigned char *at, const unsigned char *end,
                          cb_cclip_root_field *f)
{
    const unsigned char *p = at;
    for (int k = 0; k < CB_CCLIP_ROOT_COMPONENTS; ++k) {
        if (version < 4) {
            if (end - p < CB_CCLIP_ROOT_FIELD_BYTES) {
                return 0;
            }
            f[k] = (cb_cclip_root_field){p[0], rdf(p + 1), rdf(p + 5)};
            p += CB_CCLIP_ROOT_FIELD_BYTES;
            continue;
        }
        if (end - p < 1 || (p[0] > 0 && end - p < 3)) {
            return 0;
        }
        f[k] =
            (cb_cclip_root_field){p[0], 0.0f, p[0] > 0 ? cb_cclip_step_value(rd16(p + 1)) : 0.0f};
        p += p[0] > 0 ? 3 : 1;
    }
    return (size_t)(p - at);
}

cb_result cb_cclip_root_parse(unsigned version, const unsigned char *at, size_t size,
                              uint32_t frames, cb_error *err)
{
    cb_cclip_root_field f[CB_CCLIP_ROOT_COMPONENTS];
    const size_t head = root_fields(version, at, at + size, f);
    if (head == 0) {
        return cb_error_set(err, CB_ERR_PARSE, "cclip stream: root track truncated");
    }
    uint64_t bits = 0;
    for (int k = 0; k < CB_CCLIP_ROOT_COMPONENTS; ++k) {
        if (!isfinite(f[k].offset) || !isfinite(f[k].step)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "cclip stream: root track component %d is not finite", k);
        }
        double reach = cb_cclip_root_reach(&f[k]);
        if (f[k].bits > CB_CCLIP_MAX_BITS || f[k].step < 0.0f ||
            (f[k].bits == 0 && f[k].step != 0.0f) || !(reach <= CB_CCLIP_ROOT_MAX_VALUE)) {
            return cb_error_set(err, CB_ERR_PARSE,
                                "cclip stream: root track component %d: %u bits, offset %g, "
                                "step %g out of range",
                                k, f[k].bits, (double)f[k].offset, (double)f[k].step);
        }
        bits += f[k].bits;
    }
    uint64_t data_bits = bits * frames, data_bytes = (data_bits + 7) / 8;
    if ((uint64_t)(size - head) != data_bytes) {
        return cb_error_set(err, CB_ERR_PARSE,
                            "cclip stream: root track has %llu bytes of keys, expected %llu (%s)",
                            (unsigned long long)(size - head), (unsigned long long)data_bytes,
                            size - head < data_bytes ? "truncated" : "trailing bytes");
    }
    if (data_bits % 8 != 0 && (at[head + data_bytes - 1] >> (data_bits % 8)) != 0) {
        return cb_error_set(err, CB_ERR_PARSE,
                            "cclip stream: root track padding bits are not zero");
    }
    return CB_OK;
}

void cb_cclip_root_decode(unsigned version, const unsigned char *block, size_t size,
                          uint32_t frames, float *out)
{
    cb_cclip_root_field f[CB_CCLIP_ROOT_COMPONENTS];
    const unsigned char *data = block + root_fields(version, block, block + size, f);
    float first[CB_CCLIP_ROOT_COMPONENTS];
    uint64_t pos = 0;
    for (uint32_t i = 0; i < frames; ++i) {
        for (int k = 0; k < CB_CCLIP_ROOT_COMPONENTS; ++k) {
            uint32_t q = f[k].bits > 0 ? read_bits(data, pos, f[k].bits) : 0;
            pos += f[k].bits;
            float v = cb_cclip_value(f[k].offset, f[k].step, q);
            first[k] = i == 0 ? v : first[k];
            out[(size_t)i * CB_CCLIP_ROOT_COMPONENTS + (size_t)k] = v - first[k];
        }
    }
}

void cb_cclip_parsed_fields(const cb_cclip_parsed *p, const cb_skeleton *skeleton,
                            cb_cclip_field *fields)
{
    const unsigned char *at = first_description(p);
    for (uint32_t j = 0; j < p->joint_count; ++j) {
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            int rebuilt;
            unsigned mode = track_mode(p, &at, p->data, j, x, &rebuilt);
            for (int k = 0; k < cb_cclip_track_size[x]; ++k) {
                int comp = cb_cclip_track_first[x] + k;
                cb_cclip_field *f = &fields[(size_t)j * CB_CCLIP_COMPONENTS + (size_t)comp];
                if (mode == 0) {
                    *f = (cb_cclip_field){CB_CCLIP_DEFAULT_TRACK,
                                          cb_cclip_default_value(skeleton, p->additive, j, comp),
                                          0.0f};
                    continue;
                }
                if (k == rebuilt) {
                    *f = (cb_cclip_field){CB_CCLIP_REBUILT, 0.0f, 0.0f};
                    continue;
                }
                read_component(p->version, &at, p->data, p->exponent[x], f);
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                    */

typedef struct bit_writer {
    unsigned char *at;
    uint64_t acc;
    unsigned count;
} bit_writer;

static void put_bits(bit_writer *w, uint32_t v, unsigned bits)
{
    w->acc |= (uint64_t)v << w->count;
    w->count += bits;
    while (w->count >= 8) {
        *w->at++ = (unsigned char)w->acc;
        w->acc >>= 8;
        w->count -= 8;
    }
}

size_t cb_cclip_root_write(unsigned version, const cb_cclip_root_field *fields, const uint32_t *q,
                           uint32_t frames, unsigned char *dst)
{
    uint64_t bits = 0;
    size_t head = 0;
    for (int k = 0; k < CB_CCLIP_ROOT_COMPONENTS; ++k) {
        bits += fields[k].bits;
        head += version < 4 ? CB_CCLIP_ROOT_FIELD_BYTES : fields[k].bits > 0 ? 3 : 1;
    }
    size_t total = head + (bits * frames + 7) / 8;
    if (dst == NULL) {
        return total;
    }
    unsigned char *at = dst;
    for (int k = 0; k < CB_CCLIP_ROOT_COMPONENTS; ++k) {
        *at++ = fields[k].bits;
        if (version < 4) {
            at = wrf(wrf(at, fields[k].offset), fields[k].step);
        } else if (fields[k].bits > 0) {
            at = wr16(at, cb_cclip_step_code(fields[k].step));
        }
    }
    bit_writer w = {at, 0, 0};
    for (size_t i = 0; i < frames; ++i) {
        for (int k = 0; k < CB_CCLIP_ROOT_COMPONENTS; ++k) {
            if (fields[k].bits > 0) {
                put_bits(&w, q[i * CB_CCLIP_ROOT_COMPONENTS + (size_t)k], fields[k].bits);
            }
        }
    }
    if (w.count > 0) {
        *w.at++ = (unsigned char)w.acc;
    }
    CB_ASSERT((size_t)(w.at - dst) == total);
    return total;
}

/* Which component of a rotation's fields f is rebuilt, or -1. */
static int rebuilt_of(const cb_cclip_field *f)
{
    for (int k = 0; k < 4; ++k) {
        if (f[k].bits == CB_CCLIP_REBUILT) {
            return k;
        }
    }
    return -1;
}

/* The mode of a track's fields f (track x): 0 default, 2 a rotation component rebuilt, else 1. */
static unsigned mode_of(const cb_cclip_field *f, int x)
{
    if (f[0].bits == CB_CCLIP_DEFAULT_TRACK) {
        return 0;
    }
    return x == 1 && rebuilt_of(f) >= 0 ? 2 : 1;
}

/* The version a stored form is written in: h->version (4 for what the compressor makes),
 * except that versions 1 and 2 follow the root track as they define it. */
static unsigned written_version(const cb_cclip_parsed *h)
{
    return h->version >= 3 ? h->version : h->root != NULL ? 2u : 1u;
}

/* A joint's version 4 code (cclip_impl.h) from its fields f (10). */
static unsigned joint_code(const cb_cclip_field *f)
{
    unsigned rotation = mode_of(f + 3, 1);
    rotation = rotation == 2 ? 2u + (unsigned)rebuilt_of(f + 3) : rotation;
    return mode_of(f, 0) | rotation << 1 | mode_of(f + 7, 2) << 4;
}

/* The track descriptions: versions 1, 2 a mode byte per track, version 3 the mode map (and a
 * byte per rebuilt component), version 4 the joint map; then the component descriptions.
 * Returns the end. */
static unsigned char *write_descriptions(const cb_cclip_parsed *h, const cb_cclip_field *fields,
                                         unsigned char *at)
{
    const size_t n = h->joint_count;
    const unsigned version = written_version(h);
    if (version == 3) {
        memset(at, 0, map_bytes(version, h->joint_count));
        for (size_t t = 0; t < n * CB_CCLIP_TRACKS; ++t) {
            int x = (int)(t % CB_CCLIP_TRACKS);
            unsigned mode = mode_of(
                &fields[t / CB_CCLIP_TRACKS * CB_CCLIP_COMPONENTS + cb_cclip_track_first[x]], x);
            at[t / 4] |= (unsigned char)(mode << (2 * (t % 4)));
        }
    } else if (version >= 4) {
        bit_writer w = {at, 0, 0};
        for (size_t j = 0; j < n; ++j) {
            put_bits(&w, joint_code(&fields[j * CB_CCLIP_COMPONENTS]), CB_CCLIP_JOINT_CODE_BITS);
        }
        if (w.count > 0) {
            *w.at++ = (unsigned char)w.acc;
        }
    }
    at += map_bytes(version, h->joint_count);
    for (size_t j = 0; j < n; ++j) {
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            const cb_cclip_field *f = &fields[j * CB_CCLIP_COMPONENTS + cb_cclip_track_first[x]];
            unsigned mode = mode_of(f, x);
            if (version < 3) {
                *at++ = (unsigned char)mode;
            }
            if (mode == 2 && version == 3) {
                *at++ = (unsigned char)rebuilt_of(f);
            }
            for (int k = 0; k < cb_cclip_track_size[x] && mode != 0; ++k) {
                if (f[k].bits != CB_CCLIP_REBUILT) {
                    at = write_component(version, &f[k], h->exponent[x], at);
                }
            }
        }
    }
    return at;
}

/* Bytes of the header up to the track map or descriptions. */
static size_t header_bytes(const cb_cclip_parsed *h, unsigned version)
{
    if (version < 4) {
        return CB_CCLIP_HEADER_BYTES;
    }
    return 9 + varint_bytes(h->joint_count) + varint_bytes(h->source_frames) +
           varint_bytes(h->keys) + 20;
}

/* Bytes of the header and the track descriptions written in version; *bits: the stored bits of
 * one key. */
static size_t described_bytes(const cb_cclip_parsed *h, const cb_cclip_field *fields,
                              unsigned version, uint64_t *bits)
{
    size_t header = header_bytes(h, version) + map_bytes(version, h->joint_count);
    *bits = 0;
    for (size_t j = 0; j < h->joint_count; ++j) {
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            const cb_cclip_field *f = &fields[j * CB_CCLIP_COMPONENTS + cb_cclip_track_first[x]];
            const unsigned mode = mode_of(f, x);
            header += (version < 3 ? 1 : 0) + (mode == 2 && version == 3 ? 1 : 0);
            for (int k = 0; k < cb_cclip_track_size[x] && mode != 0; ++k) {
                header += f[k].bits == CB_CCLIP_REBUILT
                              ? 0
                              : component_bytes(version, &f[k], h->exponent[x]);
                *bits += cb_cclip_stored_bits(f[k].bits);
            }
        }
    }
    return header;
}

/* The header up to the track map or descriptions (header_bytes of them). Returns the end. */
static unsigned char *write_header(const cb_cclip_parsed *h, unsigned version, unsigned char *dst)
{
    memcpy(dst, CB_CCLIP_MAGIC, 4);
    dst[4] = (unsigned char)version, dst[5] = 0;
    const unsigned char flags = (unsigned char)((h->additive ? CB_CCLIP_FLAG_ADDITIVE : 0) |
                                                (h->root != NULL ? CB_CCLIP_FLAG_ROOT : 0));
    unsigned char *at;
    if (version >= 4) {
        dst[6] = flags;
        dst[7] = (unsigned char)h->exponent[0];
        dst[8] = (unsigned char)h->exponent[2];
        at = write_varint(write_varint(write_varint(dst + 9, h->joint_count), h->source_frames),
                          h->keys);
        at = wrf(wrf(wrf(at, h->max_error_m), h->shell_distance_m), h->measured_error_m);
        at = wr32(wr32(at, (uint32_t)h->signature), (uint32_t)(h->signature >> 32));
    } else {
        dst[6] = flags;
        dst[7] = 0;
        at = wr32(dst + 8, h->joint_count);
        at = wr32(at, h->source_frames);
        at = wr32(at, h->keys);
        at = wrf(at, h->max_error_m);
        at = wrf(at, h->shell_distance_m);
        at = wrf(at, h->measured_error_m);
        at = wr32(wr32(at, (uint32_t)h->signature), (uint32_t)(h->signature >> 32));
        *at++ = (unsigned char)h->exponent[0];
        *at++ = (unsigned char)h->exponent[2];
        *at++ = 0;
        *at++ = 0;
    }
    CB_ASSERT((size_t)(at - dst) == header_bytes(h, version));
    return at;
}

/* The keys' stored bits, key by key, joint by joint, component by component. Returns the end. */
static unsigned char *write_keys(const cb_cclip_parsed *h, const cb_cclip_field *fields,
                                 uint32_t (*get_q)(const void *user, size_t key, size_t joint,
                                                   int component),
                                 const void *user, unsigned char *at)
{
    bit_writer w = {at, 0, 0};
    for (size_t i = 0; i < h->keys; ++i) {
        for (size_t j = 0; j < h->joint_count; ++j) {
            for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
                unsigned b = cb_cclip_stored_bits(fields[j * CB_CCLIP_COMPONENTS + (size_t)k].bits);
                if (b > 0) {
                    put_bits(&w, get_q(user, i, j, k), b);
                }
            }
        }
    }
    if (w.count > 0) {
        *w.at++ = (unsigned char)w.acc;
    }
    return w.at;
}

size_t cb_cclip_write_stream(const cb_cclip_parsed *h, const cb_cclip_field *fields,
                             uint32_t (*get_q)(const void *user, size_t key, size_t joint,
                                               int component),
                             const void *user, unsigned char *dst)
{
    const unsigned version = written_version(h);
    uint64_t bits;
    size_t header = described_bytes(h, fields, version, &bits);
    size_t keys_end = header + (size_t)((bits * h->keys + 7) / 8);
    size_t total = keys_end + (h->root != NULL ? h->root_bytes : 0);
    if (dst == NULL) {
        return total;
    }
    unsigned char *at = write_header(h, version, dst);
    at = write_descriptions(h, fields, at);
    at = write_keys(h, fields, get_q, user, at);
    CB_ASSERT((size_t)(at - dst) == keys_end);
    if (h->root != NULL) {
        memcpy(at, h->root, h->root_bytes);
    }
    return total;
}

/* ------------------------------------------------------------------------------------------ */
/* Scalar reference decoder                                                                   */

/* What a decode asks for: an existing key, and room for every joint. */
static cb_result check_decode_request(const cb_cclip_parsed *p, uint32_t key, cb_xform_span out,
                                      cb_error *err)
{
    if (key >= p->keys) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "cclip decode: key %u of %u", key,
                            p->keys);
    }
    if (out.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cclip decode: out is NULL");
    }
    if (out.count < p->joint_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "cclip decode: out has %zu transforms, "
                            "needs %u",
                            out.count, p->joint_count);
    }
    return CB_OK;
}

/* Track x of joint j into its components of v: its description read at *at, its stored bits
 * at bit *pos of the key (both advanced). Returns the rebuilt component, or -1. */
static int decode_track_ref(const cb_skeleton *skeleton, const cb_cclip_parsed *p, uint32_t j,
                            int x, const unsigned char **at, uint64_t *pos, float *v)
{
    int rebuilt;
    unsigned mode = track_mode(p, at, p->data, j, x, &rebuilt);
    for (int k = 0; k < cb_cclip_track_size[x]; ++k) {
        int comp = cb_cclip_track_first[x] + k;
        if (mode == 0) {
            v[comp] =
                cb_cclip_value(cb_cclip_default_value(skeleton, p->additive, j, comp), 0.0f, 0);
            continue;
        }
        if (k == rebuilt) { /* +0 until the other three are read */
            v[comp] = cb_cclip_value(0.0f, 0.0f, 0);
            continue;
        }
        cb_cclip_field f = {0};
        read_component(p->version, at, p->data, p->exponent[x], &f);
        uint32_t q = 0;
        if (f.bits > 0) {
            q = read_bits(p->data, *pos, f.bits);
            *pos += f.bits;
        }
        v[comp] = cb_cclip_value(f.offset, f.step, q);
    }
    return rebuilt;
}

/* The transform of a joint's decoded components v. */
static void xform_of_components(const float *v, cb_xform *o)
{
    for (int k = 0; k < 3; ++k) {
        o->translation[k] = v[k];
        o->scale[k] = 1.0f + v[7 + k];
    }
    for (int k = 0; k < 4; ++k) {
        o->rotation[k] = v[3 + k];
    }
}

cb_result cb_cclip_decode_stream_ref(const cb_skeleton *skeleton, const void *bytes, size_t size,
                                     uint32_t key, cb_xform_span out, cb_error *err)
{
    cb_cclip_parsed p;
    cb_result r = cb_cclip_parse(skeleton, bytes, size, &p, err);
    if (r == CB_OK) {
        r = check_decode_request(&p, key, out, err);
    }
    if (r != CB_OK) {
        return r;
    }
    const unsigned char *at = first_description(&p);
    uint64_t pos = (uint64_t)key * p.bits_per_key;
    for (uint32_t j = 0; j < p.joint_count; ++j) {
        float v[CB_CCLIP_COMPONENTS];
        int rotation_rebuilt = -1;
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            int rebuilt = decode_track_ref(skeleton, &p, j, x, &at, &pos, v);
            rotation_rebuilt = x == 1 ? rebuilt : rotation_rebuilt;
        }
        if (rotation_rebuilt >= 0) { /* +0 plus its value, as the decoders add it */
            v[3 + rotation_rebuilt] = v[3 + rotation_rebuilt] + cb_cclip_rebuild(v + 3);
        }
        xform_of_components(v, &out.ptr[j]);
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Loading: packing into joint groups                                                         */

/* Whether rotation component k of a joint (bits: its 10 field widths) is rebuilt at every key:
 * rebuilt, with some other component stored. A rebuilt component of a constant rotation is the
 * same at every key; the loader keeps its value as the offset (fold_constant_rebuilt), so the
 * group decoder does not rebuild it. */
static bool rebuilt_per_key(const uint8_t *bits, int k)
{
    if (bits[3 + k] != CB_CCLIP_REBUILT) {
        return false;
    }
    for (int i = 3; i < 7; ++i) {
        if (cb_cclip_stored_bits(bits[i]) > 0) {
            return true;
        }
    }
    return false;
}

/* The rebuilt components of constant rotations, rebuilt once: the offset becomes what the
 * decoders give at every key, +0 plus cb_cclip_rebuild of the other three (each offset + 0),
 * so offset + 0 in the group decoder is the same bits. fields: joint_count x 10. */
static void fold_constant_rebuilt(cb_cclip_field *fields, size_t joints)
{
    for (size_t j = 0; j < joints; ++j) {
        cb_cclip_field *f = &fields[j * CB_CCLIP_COMPONENTS + 3];
        uint8_t bits[CB_CCLIP_COMPONENTS];
        for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
            bits[k] = fields[j * CB_CCLIP_COMPONENTS + (size_t)k].bits;
        }
        for (int k = 0; k < 4; ++k) {
            if (f[k].bits != CB_CCLIP_REBUILT || rebuilt_per_key(bits, k)) {
                continue;
            }
            float q[4];
            for (int i = 0; i < 4; ++i) {
                q[i] = cb_cclip_value(i == k ? 0.0f : f[i].offset, 0.0f, 0);
            }
            f[k].offset = q[k] + cb_cclip_rebuild(q);
        }
    }
}

/* The group decoder's path for a laid-out group (cclip_impl.h, cb_cclip_group_kind): the
 * rotation path takes groups whose only fields are rotation x, y and z, with w rebuilt in some
 * lane (and constant in the others). */
static uint8_t group_kind(const cb_cclip_group *grp, uint32_t components)
{
    if (grp->words == 0) {
        return CB_CCLIP_GROUP_CONSTANT;
    }
    bool rotation = grp->rebuilt == 8;
    for (uint32_t k = 0; k < components; ++k) {
        rotation = rotation && (grp->bits[k] > 0) == (k >= 3 && k < 6);
    }
    return rotation ? CB_CCLIP_GROUP_ROTATION : CB_CCLIP_GROUP_GENERAL;
}

/* The common field widths of group g of `width` joints, where each component sits, and which
 * lanes store words (ranks[l]: the lane's position among them, or -1). bits: joint_count x 10
 * field widths (CB_CCLIP_DEFAULT_TRACK for default tracks). width is the build's W, except when
 * cb_cclip_loaded_bytes sizes the loaded form for another W. */
static cb_cclip_group layout_group(const uint8_t *bits, size_t joints, size_t g, size_t width,
                                   uint32_t components, int32_t *ranks)
{
    cb_cclip_group grp = {0};
    uint32_t pos = 0; /* bit position in the lane's words */
    for (uint32_t k = 0; k < components; ++k) {
        unsigned widest = 0;
        for (size_t l = 0; l < width && g * width + l < joints; ++l) {
            unsigned b = cb_cclip_stored_bits(bits[(g * width + l) * CB_CCLIP_COMPONENTS + k]);
            widest = b > widest ? b : widest;
        }
        if (widest > 0 && pos % 32 + widest > 31) {
            /* A field never straddles two words, nor reaches bit 31 (cclip_impl.h). */
            pos = (pos / 32 + 1) * 32;
        }
        grp.bits[k] = (uint8_t)widest;
        grp.word[k] = widest > 0 ? (uint8_t)(pos / 32) : 0;
        grp.shift[k] = widest > 0 ? (uint8_t)(pos % 32) : 0;
        grp.mask[k] = (uint32_t)((1ull << widest) - 1u) << grp.shift[k];
        pos += widest;
    }
    grp.words = (pos + 31) / 32;
    for (size_t l = 0; l < width; ++l) {
        size_t j = g * width + l;
        bool stores = false;
        for (uint32_t k = 0; j < joints && k < components; ++k) {
            stores = stores || cb_cclip_stored_bits(bits[j * CB_CCLIP_COMPONENTS + k]) > 0;
        }
        ranks[l] = stores ? (int32_t)grp.active++ : -1;
        for (uint32_t k = 0; j < joints && k < 4; ++k) {
            if (rebuilt_per_key(bits + j * CB_CCLIP_COMPONENTS, (int)k)) {
                grp.rebuilt |= 1u << k;
            }
        }
    }
    for (uint32_t k = 0; k < components; ++k) {
        grp.at[k] = grp.word[k] * grp.active;
    }
    grp.kind = group_kind(&grp, components);
    return grp;
}

static bool needs_scale(const cb_cclip_field *fields, size_t joints)
{
    for (size_t j = 0; j < joints; ++j) {
        for (int k = 7; k < CB_CCLIP_COMPONENTS; ++k) {
            const cb_cclip_field *f = &fields[j * CB_CCLIP_COMPONENTS + (size_t)k];
            /* -0.0 counts as scaled too, so that the stored form survives a load unchanged. */
            if (cb_cclip_stored_bits(f->bits) > 0 || f->offset != 0.0f || signbit(f->offset)) {
                return true;
            }
        }
    }
    return false;
}

/* Identity of a padding lane, per component. */
static const float padding_value[CB_CCLIP_COMPONENTS] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0};

static void fill_ranges(struct cb_cclip *c, const cb_cclip_field *fields, float *ranges)
{
    for (size_t g = 0; g < c->group_count; ++g) {
        for (uint32_t k = 0; k < c->components; ++k) {
            float *off = ranges + (g * c->components + k) * 2 * CB_SIMD_WIDTH;
            float *step = off + CB_SIMD_WIDTH;
            for (size_t l = 0; l < CB_SIMD_WIDTH; ++l) {
                size_t j = g * CB_SIMD_WIDTH + l;
                if (j >= c->joint_count) {
                    off[l] = padding_value[k], step[l] = 0.0f;
                    continue;
                }
                const cb_cclip_field *f = &fields[j * CB_CCLIP_COMPONENTS + k];
                off[l] = f->offset;
                step[l] = cb_cclip_stored_bits(f->bits) == 0
                              ? 0.0f
                              : cb_cclip_group_scaled_step(f->step, c->groups[g].shift[k]);
            }
        }
    }
}

/* Rows of W floats a group's rebuilt components take in the loaded form (cb_cclip.rebuild):
 * none, w's alone (the common case), or one per component. */
static uint32_t rebuild_rows(uint32_t rebuilt)
{
    return rebuilt == 0 ? 0u : rebuilt == 8 ? 1u : 4u;
}

static void fill_rebuild(struct cb_cclip *c, float *rebuild)
{
    for (size_t g = 0; g < c->group_count; ++g) {
        const cb_cclip_group *grp = &c->groups[g];
        const uint32_t rows = rebuild_rows(grp->rebuilt);
        for (uint32_t row = 0; row < rows; ++row) {
            const int k = rows == 1 ? 3 : (int)row;
            for (size_t l = 0; l < CB_SIMD_WIDTH; ++l) {
                size_t j = g * CB_SIMD_WIDTH + l;
                bool r = j < c->joint_count &&
                         rebuilt_per_key(c->joint_bits + j * CB_CCLIP_COMPONENTS, k);
                rebuild[grp->rebuild_at + row * CB_SIMD_WIDTH + l] = r ? 1.0f : 0.0f;
            }
        }
    }
}

/* What the groups of a layout take together: words per key, and rows of rebuilt components. */
typedef struct group_totals {
    size_t key_words, rebuild_rows;
} group_totals;

static group_totals sum_groups(const uint8_t *bits, size_t joints, size_t width,
                               uint32_t components)
{
    group_totals t = {0, 0};
    int32_t ranks[16];
    for (size_t g = 0; g * width < joints; ++g) {
        cb_cclip_group grp = layout_group(bits, joints, g, width, components, ranks);
        t.key_words += (size_t)grp.words * grp.active;
        t.rebuild_rows += rebuild_rows(grp.rebuilt);
    }
    return t;
}

/* The word of joint j that holds component k, in key `key`. */
static size_t word_index(const struct cb_cclip *c, size_t key, size_t j, int k)
{
    const cb_cclip_group *grp = &c->groups[j / CB_SIMD_WIDTH];
    return key * c->key_words + grp->word_offset + (size_t)grp->word[k] * grp->active + c->rank[j];
}

static void fill_words(struct cb_cclip *c, const cb_cclip_parsed *p, const cb_cclip_field *fields,
                       uint32_t *words)
{
    uint64_t pos = 0;
    for (size_t i = 0; i < c->keys; ++i) {
        for (size_t j = 0; j < c->joint_count; ++j) {
            for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
                unsigned b = cb_cclip_stored_bits(fields[j * CB_CCLIP_COMPONENTS + (size_t)k].bits);
                if (b == 0) {
                    continue;
                }
                uint32_t q = read_bits(p->data, pos, b);
                pos += b;
                /* k < components here: a scale field with bits makes the clip scaled. */
                words[word_index(c, i, j, k)] |= q << c->groups[j / CB_SIMD_WIDTH].shift[k];
            }
        }
    }
}

/* Offsets of the parts of a loaded clip's block. */
typedef struct block_layout {
    size_t groups, perms, ranges, rebuild, words, bits, rank, root_track, root_block, total;
} block_layout;

/* root_frames: the root track's frames (0 without one), root_bytes: its stored block. */
static block_layout plan_block(size_t groups, size_t joints, uint32_t components, size_t keys,
                               group_totals totals, size_t width, size_t perm_bytes,
                               size_t root_frames, size_t root_bytes)
{
    const size_t align = width * sizeof(float);
    block_layout b;
    b.groups = cb_round_up(sizeof(struct cb_cclip), _Alignof(cb_cclip_group));
    b.perms = cb_round_up(b.groups + groups * sizeof(cb_cclip_group), align);
    b.ranges = cb_round_up(b.perms + groups * perm_bytes, align);
    b.rebuild = cb_round_up(b.ranges + groups * components * 2 * width * sizeof(float), align);
    b.words = b.rebuild + totals.rebuild_rows * width * sizeof(float);
    b.bits = b.words + (keys * totals.key_words + width) * sizeof(uint32_t);
    b.rank = b.bits + joints * CB_CCLIP_COMPONENTS;
    b.root_track = cb_round_up(b.rank + joints, _Alignof(float));
    b.root_block = b.root_track + root_frames * CB_CCLIP_ROOT_COMPONENTS * sizeof(float);
    b.total = b.root_block + root_bytes;
    return b;
}

/* Each group's layout in the block, with its words' and rebuild rows' places, its lanes'
 * permutation and each joint's rank among the lanes that store words (0xFF: none). */
static void lay_out_groups(unsigned char *block, const block_layout *bl, const uint8_t *bits,
                           size_t joints, size_t groups, uint32_t components)
{
    cb_cclip_group *grps = (cb_cclip_group *)(block + bl->groups);
    uint8_t *rank = block + bl->rank;
    int32_t ranks[CB_SIMD_WIDTH];
    uint32_t word_offset = 0, rebuild_at = 0;
    for (size_t g = 0; g < groups; ++g) {
        grps[g] = layout_group(bits, joints, g, CB_SIMD_WIDTH, components, ranks);
        grps[g].word_offset = word_offset;
        word_offset += grps[g].words * grps[g].active;
        grps[g].rebuild_at = rebuild_at;
        rebuild_at += rebuild_rows(grps[g].rebuilt) * CB_SIMD_WIDTH;
        cb_cclip_lane_perm_init(block + bl->perms + g * cb_cclip_lane_perm_bytes(), ranks);
        for (size_t l = 0; l < CB_SIMD_WIDTH && g * CB_SIMD_WIDTH + l < joints; ++l) {
            rank[g * CB_SIMD_WIDTH + l] = ranks[l] < 0 ? 0xFF : (uint8_t)ranks[l];
        }
    }
}

/* The clip's description at the start of its block, pointing into the block's parts. */
static void describe_clip(unsigned char *block, const block_layout *bl, const cb_cclip_parsed *p,
                          const cb_allocator *allocator, size_t groups, uint32_t components,
                          size_t key_words)
{
    *(struct cb_cclip *)block = (struct cb_cclip){
        .allocator = allocator != NULL ? *allocator : (cb_allocator){0},
        .alloc_bytes = bl->total,
        .skeleton_signature = p->signature,
        .joint_count = p->joint_count,
        .group_count = (uint32_t)groups,
        .keys = p->keys,
        .source_frames = p->source_frames,
        .components = components,
        .key_words = (uint32_t)key_words,
        .bits_per_key = p->bits_per_key,
        .stream_version = p->version,
        .additive = p->additive,
        .has_scale = components == CB_CCLIP_COMPONENTS,
        .exponent = {p->exponent[0], p->exponent[1], p->exponent[2]},
        .max_error_m = p->max_error_m,
        .shell_distance_m = p->shell_distance_m,
        .measured_error_m = p->measured_error_m,
        .keys_f = (float)(p->keys - 1),
        .stream_bytes = p->size,
        .groups = (cb_cclip_group *)(block + bl->groups),
        .ranges = (const float *)(block + bl->ranges),
        .rebuild = (const float *)(block + bl->rebuild),
        .words = (const uint32_t *)(block + bl->words),
        .perms = block + bl->perms,
        .joint_bits = block + bl->bits,
        .rank = block + bl->rank,
    };
}

/* The root track's stored block, copied, and its frames decoded once. */
static void load_root_track(struct cb_cclip *c, unsigned char *block, const block_layout *bl,
                            const cb_cclip_parsed *p)
{
    memcpy(block + bl->root_block, p->root, p->root_bytes);
    cb_cclip_root_decode(p->version, p->root, p->root_bytes, p->source_frames,
                         (float *)(block + bl->root_track));
    c->root_block = block + bl->root_block;
    c->root_block_bytes = p->root_bytes;
    c->root_track = (const float *)(block + bl->root_track);
}

cb_result cb_cclip_build(const cb_cclip_parsed *p, const cb_skeleton *skeleton,
                         const cb_allocator *allocator, cb_cclip **out, cb_error *err)
{
    const size_t n = p->joint_count, groups = cb_skeleton_group_count(skeleton);
    const size_t field_bytes = n * CB_CCLIP_COMPONENTS * sizeof(cb_cclip_field);
    cb_cclip_field *fields = cb_alloc(allocator, field_bytes, _Alignof(cb_cclip_field));
    if (fields == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cclip load: %zu bytes", field_bytes);
    }
    cb_cclip_parsed_fields(p, skeleton, fields);
    fold_constant_rebuilt(fields, n);
    const uint32_t components = needs_scale(fields, n) ? (uint32_t)CB_CCLIP_COMPONENTS
                                                       : (uint32_t)CB_CCLIP_COMPONENTS_NO_SCALE;
    uint8_t *bits = cb_alloc(allocator, n * CB_CCLIP_COMPONENTS, 1);
    if (bits == NULL) {
        cb_free(allocator, fields, field_bytes);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cclip load: %zu bytes",
                            n * CB_CCLIP_COMPONENTS);
    }
    for (size_t i = 0; i < n * CB_CCLIP_COMPONENTS; ++i) {
        bits[i] = fields[i].bits;
    }
    const group_totals totals = sum_groups(bits, n, CB_SIMD_WIDTH, components);
    const size_t root_frames = p->root != NULL ? p->source_frames : 0;
    block_layout bl = plan_block(groups, n, components, p->keys, totals, CB_SIMD_WIDTH,
                                 cb_cclip_lane_perm_bytes(), root_frames, p->root_bytes);
    unsigned char *block = cb_alloc_zeroed(allocator, bl.total, cb_simd_group_align());
    if (block == NULL) {
        cb_free(allocator, bits, n * CB_CCLIP_COMPONENTS);
        cb_free(allocator, fields, field_bytes);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cclip load: %zu bytes", bl.total);
    }
    struct cb_cclip *c = (struct cb_cclip *)block;
    lay_out_groups(block, &bl, bits, n, groups, components);
    memcpy(block + bl.bits, bits, n * CB_CCLIP_COMPONENTS);
    cb_free(allocator, bits, n * CB_CCLIP_COMPONENTS);
    describe_clip(block, &bl, p, allocator, groups, components, totals.key_words);
    if (p->root != NULL) {
        load_root_track(c, block, &bl, p);
    }
    fill_ranges(c, fields, (float *)(block + bl.ranges));
    fill_rebuild(c, (float *)(block + bl.rebuild));
    fill_words(c, p, fields, (uint32_t *)(block + bl.words));
    cb_free(allocator, fields, field_bytes);
    *out = c;
    return CB_OK;
}

cb_result cb_cclip_load(const void *bytes, size_t size, const cb_cclip_load_desc *desc,
                        cb_cclip **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_cclip_load: %s is NULL",
                            desc == NULL ? "desc" : "out");
    }
    if (desc->_start_canary != 0 || desc->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cclip load desc: a canary is not 0");
    }
    cb_result r = cb_allocator_check(&desc->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    cb_cclip_parsed p;
    r = cb_cclip_parse(desc->skeleton, bytes, size, &p, err);
    if (r != CB_OK) {
        return r;
    }
    return cb_cclip_build(&p, desc->skeleton, &desc->allocator, out, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Writing the stored form of a loaded clip                                                   */

/* The integer of joint j, component k, key i, read back from the packed words. */
static uint32_t loaded_q(const void *user, size_t key, size_t joint, int k)
{
    const struct cb_cclip *c = user;
    const cb_cclip_group *grp = &c->groups[joint / CB_SIMD_WIDTH];
    uint32_t w = c->words[word_index(c, key, joint, k)];
    unsigned b = cb_cclip_stored_bits(c->joint_bits[joint * CB_CCLIP_COMPONENTS + (size_t)k]);
    return (w >> grp->shift[k]) & ((1u << b) - 1u);
}

/* Fields of a loaded clip, from its lanes. Components beyond c->components were constant
 * zero-offset scale fields (or default with unit rest scale), recovered as such. */
static cb_cclip_field loaded_field(const struct cb_cclip *c, size_t j, int k)
{
    cb_cclip_field f = {c->joint_bits[j * CB_CCLIP_COMPONENTS + (size_t)k], 0.0f, 0.0f};
    if ((uint32_t)k < c->components) {
        const float *off =
            c->ranges + ((j / CB_SIMD_WIDTH) * c->components + (size_t)k) * 2 * CB_SIMD_WIDTH;
        f.offset = off[j % CB_SIMD_WIDTH];
        f.step = cb_cclip_group_step(off[CB_SIMD_WIDTH + j % CB_SIMD_WIDTH],
                                     c->groups[j / CB_SIMD_WIDTH].shift[k]);
    }
    return f;
}

size_t cb_cclip_loaded_bytes(const cb_cclip *c, size_t width)
{
    if (c == NULL || width == 0 || width > 16 || (width & (width - 1)) != 0) {
        return 0;
    }
    const size_t groups = (c->joint_count + width - 1) / width;
    const group_totals totals = sum_groups(c->joint_bits, c->joint_count, width, c->components);
    /* A lane permutation: an index per lane. */
    size_t perm = 4 * width;
    return plan_block(groups, c->joint_count, c->components, c->keys, totals, width, perm,
                      c->root_track != NULL ? c->source_frames : 0, c->root_block_bytes)
        .total;
}

size_t cb_cclip_stream_bytes(const cb_cclip *c)
{
    return c != NULL ? c->stream_bytes : 0;
}

cb_result cb_cclip_serialize(const cb_cclip *c, void *dst, size_t capacity)
{
    if (c == NULL || dst == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (capacity < c->stream_bytes) {
        return CB_ERR_SPAN_TOO_SHORT;
    }
    cb_cclip_parsed h = {
        .version = c->stream_version,
        .joint_count = c->joint_count,
        .source_frames = c->source_frames,
        .keys = c->keys,
        .additive = c->additive,
        .exponent = {c->exponent[0], c->exponent[1], c->exponent[2]},
        .max_error_m = c->max_error_m,
        .shell_distance_m = c->shell_distance_m,
        .measured_error_m = c->measured_error_m,
        .signature = c->skeleton_signature,
        .root = c->root_block,
        .root_bytes = c->root_block_bytes,
    };
    cb_allocator a = c->allocator;
    size_t field_bytes = (size_t)c->joint_count * CB_CCLIP_COMPONENTS * sizeof(cb_cclip_field);
    cb_cclip_field *fields = cb_alloc(&a, field_bytes, _Alignof(cb_cclip_field));
    if (fields == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    for (size_t j = 0; j < c->joint_count; ++j) {
        for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
            fields[j * CB_CCLIP_COMPONENTS + (size_t)k] = loaded_field(c, j, k);
        }
    }
    size_t written = cb_cclip_write_stream(&h, fields, loaded_q, c, dst);
    cb_free(&a, fields, field_bytes);
    CB_ASSERT(written == c->stream_bytes);
    (void)written;
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Queries                                                                                    */

void cb_cclip_destroy(cb_cclip *c)
{
    if (c != NULL) {
        cb_allocator a = c->allocator;
        cb_free(&a, c, c->alloc_bytes);
    }
}

cb_cclip_info cb_cclip_query_info(const cb_cclip *c)
{
    cb_cclip_info info = {0};
    if (c == NULL) {
        return info;
    }
    info.joint_count = c->joint_count;
    info.source_frames = c->source_frames;
    info.keys = c->keys;
    info.has_scale = c->has_scale;
    for (size_t j = 0; j < c->joint_count; ++j) {
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            const uint8_t *b = &c->joint_bits[j * CB_CCLIP_COMPONENTS + cb_cclip_track_first[x]];
            unsigned sum = 0;
            for (int k = 0; k < cb_cclip_track_size[x]; ++k) {
                sum += cb_cclip_stored_bits(b[k]);
            }
            if (b[0] == CB_CCLIP_DEFAULT_TRACK) {
                info.tracks_default++;
            } else if (sum == 0) {
                info.tracks_constant++;
            } else {
                info.tracks_animated++;
            }
        }
    }
    info.bits_per_key = c->bits_per_key;
    info.stream_bytes = c->stream_bytes;
    info.root_track_bytes = c->root_block_bytes;
    info.bytes = c->alloc_bytes;
    info.source_bytes = (size_t)c->joint_count * c->source_frames * 40;
    info.max_error_m = c->max_error_m;
    info.shell_distance_m = c->shell_distance_m;
    info.measured_error_m = c->measured_error_m;
    return info;
}

uint32_t cb_cclip_key_count(const cb_cclip *c)
{
    return c->keys;
}

uint32_t cb_cclip_joint_count(const cb_cclip *c)
{
    return c->joint_count;
}

uint64_t cb_cclip_skeleton_signature(const cb_cclip *c)
{
    return c->skeleton_signature;
}

cb_result cb_cclip_read_root_track(const cb_cclip *c, cb_float_span out)
{
    if (c == NULL || out.ptr == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (c->root_track == NULL) {
        return CB_ERR_NOT_FOUND;
    }
    size_t floats = (size_t)c->source_frames * CB_CCLIP_ROOT_COMPONENTS;
    if (out.count < floats) {
        return CB_ERR_SPAN_TOO_SHORT;
    }
    memcpy(out.ptr, c->root_track, floats * sizeof(float));
    return CB_OK;
}
