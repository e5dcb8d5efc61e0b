/* A compressed clip as a clip of the pose jobs: kept compressed (cb_cclip_clip_create, the
 * pose jobs decode its keys per joint group), or decoded into an uncompressed one at its source
 * frames (cb_cclip_to_clip, a pack loaded with CB_PACK_CLIP_FORM_RAW; cb_cclip_write_frames is
 * also what cb_clip_read_frames gives for a compressed clip). Decoding is load-time code: the keys
 * come from the group decoder (cb_cclip_decode, the same bits at every W as the scalar reference,
 * tests/test_cclip.c), then are lerped to each source frame and normalized in double precision
 * exactly where the compressor measured its error and rounded once to float, so every build,
 * whatever its W, writes the same frames. (The scalar reference decoder parses the stored form for
 * every key: 36x slower to load the CMU walk's 1716 keys.) */
#include <math.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "compress/cclip_decode.h"

/* Source frame f among `keys` keys spread over `frames` frames: keys i and i + 1, fraction u (the
 * compressor's own rule, compress.c key_pos). */
static void frame_keys(size_t frames, size_t keys, size_t f, size_t *i, double *u)
{
    if (keys == frames) {
        *i = f < keys - 1 ? f : keys - 2;
        *u = f < keys - 1 ? 0.0 : 1.0;
        return;
    }
    double x = (double)f * (double)(keys - 1) / (double)(frames - 1);
    size_t a = (size_t)x;
    a = a > keys - 2 ? keys - 2 : a;
    *i = a;
    *u = x - (double)a;
}

/* One joint of one frame in the FRAMES layout (crowdblend/clip.h) from two decoded keys. */
static void lerp_joint(const cb_xform *a, const cb_xform *b, double u, size_t stride, float *dst)
{
    double q[4], len = 0.0;
    for (int k = 0; k < 3; ++k) {
        dst[k] = (float)((1.0 - u) * a->translation[k] + u * (double)b->translation[k]);
    }
    for (int k = 0; k < 4; ++k) {
        q[k] = (1.0 - u) * a->rotation[k] + u * (double)b->rotation[k];
        len += q[k] * q[k];
    }
    len = sqrt(len);
    for (int k = 0; k < 4; ++k) {
        dst[3 + k] = (float)(q[k] / len);
    }
    for (int k = 0; k < 3 && stride == 10; ++k) {
        /* The decoder gives 1 + deviation rounded to float; the difference is exact. */
        double da = (double)a->scale[k] - 1.0, db = (double)b->scale[k] - 1.0;
        dst[7 + k] = (float)((1.0 - u) * da + u * db);
    }
}

/* Each rotation into the hemisphere of the previous frame's, and a looping clip's last frame
 * its first (the decoded end of a loop differs from its start by the quantization; the source's
 * agreed within CB_CLIP_FRAMES_SEAM_TOLERANCE, so the copy stays within the bound too). */
static void make_continuous(float *frames, size_t count, size_t joints, size_t stride, bool loop)
{
    const size_t per_frame = joints * stride;
    if (loop) {
        memcpy(frames + (count - 1) * per_frame, frames, per_frame * sizeof *frames);
    }
    for (size_t f = 1; f < count; ++f) {
        for (size_t j = 0; j < joints; ++j) {
            float *q = frames + f * per_frame + j * stride + 3;
            const float *p = q - per_frame;
            float dot = p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3];
            for (int k = 0; k < 4 && dot < 0.0f; ++k) {
                q[k] = -q[k];
            }
        }
    }
}

cb_result cb_cclip_write_frames(const cb_cclip *clip, size_t stride, bool loop,
                                const cb_allocator *allocator, float *frames)
{
    const size_t n = clip->joint_count, key_count = clip->keys, count = clip->source_frames;
    const size_t group_bytes = (size_t)clip->group_count * cb_simd_group_bytes();
    const size_t key_bytes = key_count * n * sizeof(cb_xform);
    cb_xform_group *groups = cb_alloc(allocator, group_bytes, cb_simd_group_align());
    cb_xform *keys = cb_alloc(allocator, key_bytes, 16);
    cb_result r = groups == NULL || keys == NULL ? CB_ERR_OUT_OF_MEMORY : CB_OK;
    for (size_t k = 0; k < key_count && r == CB_OK; ++k) {
        r = cb_cclip_decode(clip, k, (cb_xform_group_span){groups, clip->group_count});
        r = r == CB_OK
                ? cb_xform_unpack(groups, clip->group_count, (cb_xform_span){keys + k * n, n})
                : r;
    }
    for (size_t f = 0; f < count && r == CB_OK; ++f) {
        size_t i;
        double u;
        frame_keys(count, key_count, f, &i, &u);
        for (size_t j = 0; j < n; ++j) {
            lerp_joint(&keys[i * n + j], &keys[(i + 1) * n + j], u, stride,
                       frames + (f * n + j) * stride);
        }
    }
    if (r == CB_OK) {
        make_continuous(frames, count, n, stride, loop);
    }
    cb_free(allocator, groups, group_bytes);
    cb_free(allocator, keys, key_bytes);
    return r;
}

bool cb_cclip_stores_scale(const cb_cclip *c)
{
    for (size_t j = 0; j < c->joint_count; ++j) {
        for (int k = 7; k < CB_CCLIP_COMPONENTS; ++k) {
            if (c->joint_bits[j * CB_CCLIP_COMPONENTS + k] != CB_CCLIP_DEFAULT_TRACK) {
                return true;
            }
        }
    }
    return false;
}

static cb_result check_match(const cb_cclip *clip, const cb_clip_frames_desc *d, cb_error *err)
{
    if (d->skeleton == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cclip to clip: skeleton is NULL");
    }
    if (cb_skeleton_signature(d->skeleton) != clip->skeleton_signature) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cclip to clip: the clip was compressed for another skeleton");
    }
    if (d->additive != clip->additive) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cclip to clip: the desc says %sadditive, the compressed clip is %s",
                            d->additive ? "" : "not ", clip->additive ? "additive" : "not");
    }
    if (!d->has_scale && cb_cclip_stores_scale(clip)) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cclip to clip: the compressed clip has scale, the desc has none");
    }
    if (d->root_motion != _CB_ROOT_MOTION_DEFAULT && d->root_motion != CB_ROOT_MOTION_NONE &&
        clip->root_track == NULL && d->root_track.ptr != NULL &&
        d->root_track.count < (size_t)clip->source_frames * 4) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "cclip to clip: root_track has %zu floats, %u frames need %u",
                            d->root_track.count, clip->source_frames, clip->source_frames * 4);
    }
    return CB_OK;
}

/* desc resolved and checked against the compressed clip, its frame count and root track the
 * clip's own where it has them: what both forms of a pack clip are made from. */
static cb_result resolve_desc(const cb_cclip *clip, const cb_clip_frames_desc *desc, cb_clip **out,
                              cb_clip_frames_desc *d, cb_error *err)
{
    if (clip == NULL || desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_cclip_to_clip: %s is NULL",
                            clip == NULL   ? "clip"
                            : desc == NULL ? "desc"
                                           : "out");
    }
    *d = cb_clip_query_frames_desc(desc);
    cb_result r = cb_allocator_check(&d->allocator, err);
    if (r == CB_OK) {
        r = check_match(clip, d, err);
    }
    d->frame_count = clip->source_frames;
    if (clip->root_track != NULL) {
        /* The clip's own track, decoded (ROOT TRACK in crowdblend/cclip.h). */
        d->root_track = (cb_float_cspan){clip->root_track, (size_t)clip->source_frames * 4};
    }
    return r;
}

cb_result cb_cclip_to_clip(const cb_cclip *clip, const cb_clip_frames_desc *desc, cb_clip **out,
                           cb_error *err)
{
    cb_clip_frames_desc d;
    cb_result r = resolve_desc(clip, desc, out, &d, err);
    if (r != CB_OK) {
        return r;
    }
    const size_t stride = d.has_scale ? 10 : 7;
    const size_t frame_bytes = (size_t)clip->source_frames * clip->joint_count * stride * 4;
    float *frames = cb_alloc(&d.allocator, frame_bytes, 16);
    r = frames == NULL ? CB_ERR_OUT_OF_MEMORY
                       : cb_cclip_write_frames(clip, stride, d.wrap == CB_CLIP_WRAP_LOOP,
                                               &d.allocator, frames);
    if (r != CB_OK) {
        r = cb_error_set(err, r, "cb_cclip_to_clip: out of memory (%zu bytes of frames)",
                         frame_bytes);
    } else {
        d.frames = (cb_float_cspan){frames, frame_bytes / sizeof(float)};
        r = cb_clip_create_from_frames(&d, out, err);
    }
    cb_free(&d.allocator, frames, frame_bytes);
    return r;
}

/* The message of a bad key (joint j of key k), read with the scalar decoder. */
static cb_result key_error(const cb_cclip *clip, const char *name, uint32_t k, size_t j,
                           cb_error *err)
{
    double len = 0.0, dot = 0.0;
    for (int c = CB_CLIP_Q; c < CB_CLIP_Q + 4; ++c) {
        double q = cb_cclip_joint_value(clip, k, j, c);
        len += q * q;
        dot += k > 0 ? q * (double)cb_cclip_joint_value(clip, k - 1, j, c) : 0.25;
    }
    return cb_error_set(
        err, CB_ERR_DEGENERATE, "clip \"%s\": compressed key %u joint %zu: rotation of length %g%s",
        name, k, j, sqrt(len), dot >= 0.0 ? "" : ", in the other hemisphere from the key before");
}

/* What the sampler needs of a compressed clip's keys, checked once instead of at every sample:
 * each decoded rotation near unit length and in the hemisphere of the previous key's, so that
 * the lerp of two keys never nears zero length (the compressor writes nothing else; a stored
 * form that passed its own loader may still, if crafted). Decoding at load used to refuse such
 * clips through cb_clip_create_from_frames's frame checks. SIMD over the joints of a group with
 * the group decoder (the CMU walk's 1,716 keys: part of its 2 ms load). */
static cb_result check_keys(const cb_cclip *clip, const char *name, cb_error *err)
{
    const double tol = CB_CCLIP_KEY_UNIT_TOLERANCE;
    const cb_vf lo = cb_vf_set1((float)((1.0 - tol) * (1.0 - tol)));
    const cb_vf hi = cb_vf_set1((float)((1.0 + tol) * (1.0 + tol))), zero = cb_vf_zero();
    for (size_t g = 0; g < clip->group_count; ++g) {
        size_t valid = clip->joint_count - g * CB_W;
        unsigned real = valid >= CB_W ? CB_VM_ALL_BITS : (1u << valid) - 1u;
        for (uint32_t k = 0; k < clip->keys; ++k) {
            cb_key_group a, b;
            cb_cclip_decode_group2(clip, k > 0 ? k - 1 : k, k, g, false, &a, &b);
            cb_vf len2 = cb_soa_quat_dot(b.q, b.q), dot = cb_soa_quat_dot(a.q, b.q);
            unsigned ok = cb_vm_bits(cb_vf_ge(len2, lo)) & cb_vm_bits(cb_vf_ge(hi, len2)) &
                          cb_vm_bits(cb_vf_ge(dot, zero));
            if ((ok & real) != real) {
                unsigned bad = ~ok & real;
                size_t lane = 0;
                while (!(bad & (1u << lane))) {
                    ++lane;
                }
                return key_error(clip, name, k, g * CB_W + lane, err);
            }
        }
    }
    return CB_OK;
}

cb_result cb_cclip_clip_create(const cb_cclip *clip, const cb_clip_frames_desc *desc, cb_clip **out,
                               cb_error *err)
{
    cb_clip_frames_desc d;
    cb_result r = resolve_desc(clip, desc, out, &d, err);
    r = r == CB_OK ? check_keys(clip, d.name, err) : r;
    return r == CB_OK ? cb_clip_create_packed(&d, clip, out, err) : r;
}
