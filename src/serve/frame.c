/* The binary frame codec (docs/serve.md, "Frames"). Bytes are written one by one in
 * little-endian order, so the format does not depend on the host's byte order or alignment. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "serve/protocol.h"

static const char *const encoding_names[CB_FRAME_ENCODING_COUNT] = {"f32", "q16", "pos16"};

const char *cb_frame_encoding_name(cb_frame_encoding e)
{
    return (unsigned)e < CB_FRAME_ENCODING_COUNT ? encoding_names[e] : "unknown";
}

cb_result cb_frame_encoding_from_name(const char *name, cb_frame_encoding *out)
{
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
        if (strcmp(name, encoding_names[e]) == 0) {
            *out = (cb_frame_encoding)e;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

/* ---- little-endian bytes ----------------------------------------------------------------- */

/* On little-endian hosts a store is the byte order already (memcpy compiles to one move);
 * elsewhere the bytes are written one by one. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CB_HOST_LE 1
#else
#define CB_HOST_LE 0
#endif

static void put_u16(uint8_t *p, uint16_t v)
{
    if (CB_HOST_LE) {
        memcpy(p, &v, 2);
        return;
    }
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    if (CB_HOST_LE) {
        memcpy(p, &v, 4);
        return;
    }
    for (int k = 0; k < 4; ++k) {
        p[k] = (uint8_t)(v >> (8 * k));
    }
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int k = 0; k < 8; ++k) {
        p[k] = (uint8_t)(v >> (8 * k));
    }
}

static void put_f32(uint8_t *p, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    put_u32(p, v);
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | ((uint64_t)get_u32(p + 4) << 32);
}

static float get_f32(const uint8_t *p)
{
    uint32_t v = get_u32(p);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* ---- sizes ------------------------------------------------------------------------------- */

/* id (8) + root position (12) + root rotation: 16 bytes of floats (f32) or 6 packed (+2). */
enum { ID_BYTES = 8, ROOT_POSITION_AT = ID_BYTES, ROOT_ROTATION_AT = ID_BYTES + 12 };

static size_t record_head_bytes(cb_frame_encoding e)
{
    return ROOT_ROTATION_AT + (e == CB_FRAME_F32 ? 16 : 8);
}

static size_t joint_bytes(cb_frame_encoding e)
{
    static const size_t bytes[CB_FRAME_ENCODING_COUNT] = {28, 12, 6};
    return bytes[e];
}

size_t cb_frame_record_bytes(cb_frame_encoding e, uint32_t joints)
{
    if ((unsigned)e >= CB_FRAME_ENCODING_COUNT) {
        return 0;
    }
    size_t n = record_head_bytes(e) + joint_bytes(e) * joints;
    return (n + 3) & ~(size_t)3;
}

size_t cb_frame_bytes(cb_frame_encoding e, uint32_t characters, uint32_t joints)
{
    return CB_FRAME_HEADER_BYTES + (size_t)characters * cb_frame_record_bytes(e, joints);
}

float cb_frame_position_scale(float reach_m)
{
    float s = 4.0f * reach_m / 32767.0f;
    return s > 1.0f / 8192.0f ? s : 1.0f / 8192.0f;
}

/* ---- header ------------------------------------------------------------------------------ */

void cb_frame_write_header(const cb_frame_header *h, uint8_t *out)
{
    memset(out, 0, CB_FRAME_HEADER_BYTES);
    put_u32(out + 0, CB_FRAME_MAGIC);
    put_u16(out + 4, CB_FRAME_VERSION);
    put_u16(out + 6, (uint16_t)h->encoding);
    put_u64(out + 8, h->frame);
    uint64_t t;
    memcpy(&t, &h->sim_time_s, 8);
    put_u64(out + 16, t);
    put_u64(out + 24, h->wall_us);
    put_u32(out + 32, h->characters);
    put_u16(out + 36, h->joints);
    put_u16(out + 38, h->flags);
    put_f32(out + 40, h->encoding == CB_FRAME_F32 ? 0.0f : h->position_scale);
    put_u32(out + 44, (uint32_t)cb_frame_record_bytes(h->encoding, h->joints));
    put_u32(out + 48, h->epoch);
    put_u32(out + 52, h->step_us);
}

static cb_result refuse(char *why, const char *text)
{
    if (why != NULL) {
        snprintf(why, CB_ERROR_MESSAGE_SIZE, "%s", text);
    }
    return CB_ERR_PARSE;
}

cb_result cb_frame_read_header(const uint8_t *data, size_t size, cb_frame_header *out,
                               char why[CB_ERROR_MESSAGE_SIZE])
{
    if (data == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (size < CB_FRAME_HEADER_BYTES) {
        return refuse(why, "frame shorter than its header");
    }
    if (get_u32(data) != CB_FRAME_MAGIC) {
        return refuse(why, "bad magic");
    }
    cb_frame_header h = {.version = get_u16(data + 4)};
    if (h.version != CB_FRAME_VERSION) {
        return refuse(why, "unsupported version");
    }
    uint16_t enc = get_u16(data + 6);
    if (enc >= CB_FRAME_ENCODING_COUNT) {
        return refuse(why, "unknown encoding");
    }
    h.encoding = (cb_frame_encoding)enc;
    h.frame = get_u64(data + 8);
    uint64_t t = get_u64(data + 16);
    memcpy(&h.sim_time_s, &t, 8);
    h.wall_us = get_u64(data + 24);
    h.characters = get_u32(data + 32);
    h.joints = get_u16(data + 36);
    h.flags = get_u16(data + 38);
    h.position_scale = get_f32(data + 40);
    h.record_bytes = get_u32(data + 44);
    h.epoch = get_u32(data + 48);
    h.step_us = get_u32(data + 52);
    if (h.joints > CB_FRAME_MAX_JOINTS) {
        return refuse(why, "too many joints");
    }
    if (h.record_bytes != cb_frame_record_bytes(h.encoding, h.joints)) {
        return refuse(why, "record size does not match encoding and joints");
    }
    if (h.encoding != CB_FRAME_F32 && !(h.position_scale > 0.0f && isfinite(h.position_scale))) {
        return refuse(why, "position scale not positive and finite");
    }
    /* characters * record_bytes cannot overflow 64 bits: both are below 2^32 and 2^15. */
    if ((uint64_t)size - CB_FRAME_HEADER_BYTES != (uint64_t)h.characters * h.record_bytes) {
        return refuse(why, "frame size does not match its character count");
    }
    *out = h;
    return CB_OK;
}

/* ---- rotations --------------------------------------------------------------------------- */

void cb_quat_from_mat4(const float m[16], float q[4])
{
    /* Per joint and frame, so in float: the result is normalized once at the end, and float
     * keeps the angle within 2e-7 rad of a double conversion (test_serve_protocol.c). Columns
     * are normalized only when they are not already unit (a scaled joint). Shepperd's method:
     * divide by the largest of the four estimates, never by a small number (Shepperd,
     * "Quaternion from rotation matrix", J. Guidance and Control 1(3), 1978). */
    float c[3][3];
    for (int j = 0; j < 3; ++j) {
        float x = m[4 * j], y = m[4 * j + 1], z = m[4 * j + 2];
        float n = x * x + y * y + z * z;
        float inv = fabsf(n - 1.0f) < 1e-5f ? 1.0f : (n > 1e-30f ? 1.0f / sqrtf(n) : 0.0f);
        c[j][0] = x * inv;
        c[j][1] = y * inv;
        c[j][2] = z * inv;
    }
    /* r(row, col) = c[col][row] */
    float r00 = c[0][0], r11 = c[1][1], r22 = c[2][2], x, y, z, w;
    if (r00 + r11 + r22 > 0.0f) {
        float t = 1.0f + r00 + r11 + r22;
        w = t;
        x = c[1][2] - c[2][1];
        y = c[2][0] - c[0][2];
        z = c[0][1] - c[1][0];
    } else if (r00 > r11 && r00 > r22) {
        float t = 1.0f + r00 - r11 - r22;
        w = c[1][2] - c[2][1];
        x = t;
        y = c[1][0] + c[0][1];
        z = c[2][0] + c[0][2];
    } else if (r11 > r22) {
        float t = 1.0f + r11 - r00 - r22;
        w = c[2][0] - c[0][2];
        x = c[1][0] + c[0][1];
        y = t;
        z = c[2][1] + c[1][2];
    } else {
        float t = 1.0f + r22 - r00 - r11;
        w = c[0][1] - c[1][0];
        x = c[2][0] + c[0][2];
        y = c[2][1] + c[1][2];
        z = t;
    }
    /* Each branch is 4 t q scaled by a common factor: one normalization removes it. */
    float n = x * x + y * y + z * z + w * w;
    if (!(n > 1e-30f) || !isfinite(n)) {
        q[0] = q[1] = q[2] = 0.0f;
        q[3] = 1.0f;
        return;
    }
    float inv = 1.0f / sqrtf(n);
    q[0] = x * inv;
    q[1] = y * inv;
    q[2] = z * inv;
    q[3] = w * inv;
}

/* The three small components lie in [-1/sqrt2, 1/sqrt2]; each is stored in 15 bits, so the
 * step is sqrt2 / 32767 = 4.3e-5 and the rounding error at most half that per component. The
 * index of the dropped (largest) component takes the top bits of the first two words. */
#define SQRT1_2 0.70710678118654752
static uint16_t pack15(float c)
{
    /* c in [-1/sqrt2, 1/sqrt2] -> [0, 32767], rounded to nearest (u >= 0, so + 0.5 floors). */
    float u = (c * (float)(0.5 / SQRT1_2) + 0.5f) * 32767.0f + 0.5f;
    u = u < 0.0f ? 0.0f : (u > 32767.0f ? 32767.0f : u);
    return (uint16_t)u;
}

static double unpack15(uint16_t v)
{
    return ((double)(v & 0x7fff) / 32767.0 - 0.5) * 2.0 * SQRT1_2;
}

/* The packing proper, for a finite unit quaternion (what cb_quat_from_mat4 returns). */
static void pack48_unit(const float v[4], uint16_t out[3])
{
    float a0 = fabsf(v[0]), a1 = fabsf(v[1]), a2 = fabsf(v[2]), a3 = fabsf(v[3]);
    int b01 = a1 > a0, b23 = a3 > a2 ? 3 : 2;
    float m01 = b01 ? a1 : a0, m23 = b23 == 3 ? a3 : a2;
    int big = m23 > m01 ? b23 : b01;
    /* q and -q are one rotation: make the dropped component positive so it needs no sign. */
    float s = v[big] < 0.0f ? -1.0f : 1.0f;
    static const uint8_t rest[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    out[0] = (uint16_t)(pack15(v[rest[big][0]] * s) | ((big >> 1) << 15));
    out[1] = (uint16_t)(pack15(v[rest[big][1]] * s) | ((big & 1) << 15));
    out[2] = pack15(v[rest[big][2]] * s);
}

void cb_quat_pack48(const float q[4], uint16_t out[3])
{
    float v[4], n = 0.0f;
    for (int k = 0; k < 4; ++k) {
        v[k] = isfinite(q[k]) ? q[k] : 0.0f;
        n += v[k] * v[k];
    }
    if (!(n > 1e-30f) || !isfinite(n)) {
        v[0] = v[1] = v[2] = 0.0f;
        v[3] = 1.0f;
    } else if (fabsf(n - 1.0f) > 1e-6f) {
        float inv = 1.0f / sqrtf(n);
        for (int k = 0; k < 4; ++k) {
            v[k] *= inv;
        }
    }
    pack48_unit(v, out);
}

void cb_quat_unpack48(const uint16_t in[3], float q[4])
{
    int big = ((in[0] >> 15) << 1) | (in[1] >> 15);
    double c[3] = {unpack15(in[0]), unpack15(in[1]), unpack15(in[2])};
    double small = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    /* An encoder never writes small components whose squares sum past 1, but a corrupt frame
     * can (the fuzzer found one): scale them back so the result is still a unit rotation. */
    double rest = 1.0 - small, inv = 1.0;
    if (rest < 0.0) {
        inv = 1.0 / sqrt(small);
        rest = 0.0;
    }
    int r = 0;
    for (int k = 0; k < 4; ++k) {
        q[k] = k == big ? (float)sqrt(rest) : (float)(c[r++] * inv);
    }
}

/* ---- records ----------------------------------------------------------------------------- */

static int16_t quantize(float v, float inv_scale, uint32_t *clamped)
{
    float u = v * inv_scale;
    if (!(u >= -32767.0f && u <= 32767.0f)) {
        ++*clamped;
        u = u > 0.0f ? 32767.0f : (u < 0.0f ? -32767.0f : 0.0f); /* NaN -> 0 */
    }
    /* Round half away from zero without lrintf's call: |u| <= 32767, exact in float. */
    return (int16_t)(u >= 0.0f ? (int32_t)(u + 0.5f) : -(int32_t)(0.5f - u));
}

uint32_t cb_frame_encode_character(cb_frame_encoding e, float position_scale, uint64_t id,
                                   const float root_position[3], const float root_rotation[4],
                                   const float *matrices, uint32_t joints, uint8_t *out)
{
    uint32_t clamped = 0;
    put_u64(out, id);
    for (int k = 0; k < 3; ++k) {
        put_f32(out + ROOT_POSITION_AT + 4 * k, root_position[k]);
    }
    uint8_t *p = out + ROOT_ROTATION_AT;
    if (e == CB_FRAME_F32) {
        for (int k = 0; k < 4; ++k) {
            put_f32(p + 4 * k, root_rotation[k]);
        }
        p += 16;
    } else {
        uint16_t w[3];
        cb_quat_pack48(root_rotation, w);
        for (int k = 0; k < 3; ++k) {
            put_u16(p + 2 * k, w[k]);
        }
        put_u16(p + 6, 0);
        p += 8;
    }
    float inv = e == CB_FRAME_F32 ? 1.0f : 1.0f / position_scale;
    for (uint32_t j = 0; j < joints; ++j) {
        const float *m = matrices + 16 * (size_t)j;
        if (e == CB_FRAME_F32) {
            float q[4];
            cb_quat_from_mat4(m, q);
            for (int k = 0; k < 3; ++k) {
                put_f32(p + 4 * k, m[12 + k]);
            }
            for (int k = 0; k < 4; ++k) {
                put_f32(p + 12 + 4 * k, q[k]);
            }
            p += 28;
            continue;
        }
        for (int k = 0; k < 3; ++k) {
            put_u16(p + 2 * k, (uint16_t)quantize(m[12 + k], inv, &clamped));
        }
        p += 6;
        if (e == CB_FRAME_Q16) {
            float q[4];
            uint16_t w[3];
            cb_quat_from_mat4(m, q); /* finite and unit: no need for pack48's checks */
            pack48_unit(q, w);
            for (int k = 0; k < 3; ++k) {
                put_u16(p + 2 * k, w[k]);
            }
            p += 6;
        }
    }
    size_t used = (size_t)(p - out), total = cb_frame_record_bytes(e, joints);
    memset(p, 0, total - used);
    return clamped;
}

cb_result cb_frame_decode_character(const uint8_t *data, size_t size, const cb_frame_header *h,
                                    uint32_t index, uint64_t *id, float root_position[3],
                                    float root_rotation[4], float *positions, float *rotations)
{
    if (data == NULL || h == NULL || id == NULL || root_position == NULL || root_rotation == NULL ||
        positions == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (index >= h->characters ||
        h->record_bytes != cb_frame_record_bytes(h->encoding, h->joints) ||
        size < CB_FRAME_HEADER_BYTES + ((size_t)index + 1) * h->record_bytes) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    const uint8_t *p = data + CB_FRAME_HEADER_BYTES + (size_t)index * h->record_bytes;
    cb_frame_encoding e = h->encoding;
    *id = get_u64(p);
    for (int k = 0; k < 3; ++k) {
        root_position[k] = get_f32(p + ROOT_POSITION_AT + 4 * k);
    }
    p += ROOT_ROTATION_AT;
    if (e == CB_FRAME_F32) {
        for (int k = 0; k < 4; ++k) {
            root_rotation[k] = get_f32(p + 4 * k);
        }
        p += 16;
    } else {
        uint16_t w[3] = {get_u16(p), get_u16(p + 2), get_u16(p + 4)};
        cb_quat_unpack48(w, root_rotation);
        p += 8;
    }
    for (uint32_t j = 0; j < h->joints; ++j) {
        float *pos = positions + 3 * (size_t)j;
        float *rot = rotations != NULL ? rotations + 4 * (size_t)j : NULL;
        if (e == CB_FRAME_F32) {
            for (int k = 0; k < 3; ++k) {
                pos[k] = get_f32(p + 4 * k);
            }
            for (int k = 0; rot != NULL && k < 4; ++k) {
                rot[k] = get_f32(p + 12 + 4 * k);
            }
            p += 28;
            continue;
        }
        for (int k = 0; k < 3; ++k) {
            pos[k] = (float)(int16_t)get_u16(p + 2 * k) * h->position_scale;
        }
        p += 6;
        if (e == CB_FRAME_Q16) {
            uint16_t w[3] = {get_u16(p), get_u16(p + 2), get_u16(p + 4)};
            if (rot != NULL) {
                cb_quat_unpack48(w, rot);
            }
            p += 6;
        }
    }
    return CB_OK;
}
