/* cb_clip_desc.compression (crowdblend/clip.h): a clip compressed at creation. The clip is first
 * built as always (resampled frames, root motion extracted, markers); its frames and root track
 * are then the compressor's source (cb_cclip_create, the one compressor, which `crowdblend
 * import` reaches through this same path), and the result is a clip that owns its compressed
 * keys and samples them in place, like a pack's clip loaded compressed. */
#include <stdio.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "compress/cclip_impl.h"

/* The clip's frames as transforms (scale 1 + the stored deviation, as cb_cclip_desc takes
 * them); frame_floats is scratch of the FRAMES layout. */
static void frames_to_xforms(const float *frame_floats, size_t count, size_t stride, cb_xform *x)
{
    for (size_t i = 0; i < count; ++i) {
        const float *v = frame_floats + i * stride;
        for (int k = 0; k < 3; ++k) {
            x[i].translation[k] = v[k];
            x[i].scale[k] = stride == CB_CCLIP_COMPONENTS ? 1.0f + v[7 + k] : 1.0f;
        }
        memcpy(x[i].rotation, v + 3, sizeof x[i].rotation);
    }
}

/* Compresses the frames of raw (and its root track) to d's bound: *z on success. */
static cb_result compress_frames(const cb_clip *raw, const cb_clip_desc *d, cb_cclip **z,
                                 cb_error *err)
{
    const size_t frames = (size_t)raw->intervals + 1, joints = raw->joint_count;
    const size_t stride = cb_clip_frame_stride(raw), count = frames * joints;
    const size_t float_bytes = count * stride * sizeof(float), x_bytes = count * sizeof(cb_xform);
    float *floats = cb_alloc(&d->allocator, float_bytes, _Alignof(float));
    cb_xform *x = cb_alloc(&d->allocator, x_bytes, _Alignof(cb_xform));
    cb_result r = floats == NULL || x == NULL ? CB_ERR_OUT_OF_MEMORY : CB_OK;
    r = r == CB_OK ? cb_clip_read_frames(raw, (cb_float_span){floats, count * stride}) : r;
    cb_error inner = {0};
    if (r == CB_OK) {
        frames_to_xforms(floats, count, stride, x);
        cb_cclip_desc cd = {
            .skeleton = d->skeleton,
            .frames = {x, count},
            .frame_count = (uint32_t)frames,
            .additive = raw->additive,
            .max_error_m = d->compression->max_error_m,
            .shell_distance_m = d->compression->shell_distance_m,
            /* The root track is compressed with the keys, to the same bound (cclip.h). */
            .root_track = {raw->root, raw->root != NULL ? frames * 4 : 0},
            .allocator = d->allocator,
        };
        r = cb_cclip_create(&cd, z, &inner);
    } else {
        snprintf(inner.message, sizeof inner.message, "%zu bytes of frames", float_bytes + x_bytes);
    }
    cb_free(&d->allocator, floats, float_bytes);
    cb_free(&d->allocator, x, x_bytes);
    return r == CB_OK
               ? CB_OK
               : cb_error_set(err, r, "clip \"%s\": compression: %s", raw->name, inner.message);
}

cb_result cb_clip_compress_created(const cb_clip *raw, const cb_clip_desc *d, cb_clip **out,
                                   cb_error *err)
{
    cb_cclip *z = NULL;
    cb_result r = compress_frames(raw, d, &z, err);
    if (r != CB_OK) {
        return r;
    }
    /* Everything of raw but its keys: metadata, root motion, markers (names stay raw's until
     * the new clip has copied them). */
    const size_t marker_count = raw->marker_count,
                 marker_bytes = marker_count * sizeof(cb_clip_marker);
    cb_clip_marker *markers =
        marker_count > 0 ? cb_alloc(&d->allocator, marker_bytes, _Alignof(cb_clip_marker)) : NULL;
    if (marker_count > 0 && markers == NULL) {
        cb_cclip_destroy(z);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "clip \"%s\": %zu bytes of markers",
                            raw->name, marker_bytes);
    }
    for (size_t k = 0; k < marker_count; ++k) {
        cb_clip_query_marker(raw, k, &markers[k]);
    }
    cb_clip_root_motion rm = cb_clip_query_root_motion(raw);
    cb_clip_frames_desc fd = {
        .name = raw->name,
        .skeleton = d->skeleton,
        .duration_s = raw->duration_s,
        /* A scale track stored where the frames had none (a scale of exactly 1 against a
         * scaled rest pose) keeps the layout with scale. */
        .has_scale = raw->has_scale || cb_cclip_stores_scale(z),
        .wrap = raw->looping ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .additive = raw->additive,
        .root_motion = raw->root_mode,
        .root_joint = raw->root_joint,
        .root_origin = {rm.origin[0], rm.origin[1], rm.origin[2]},
        .root_origin_yaw = rm.origin_yaw,
        .markers = markers,
        .marker_count = marker_count,
        .allocator = d->allocator,
    };
    r = cb_cclip_clip_create(z, &fd, out, err);
    cb_free(&d->allocator, markers, marker_bytes);
    if (r != CB_OK) {
        cb_cclip_destroy(z);
        return r;
    }
    (*out)->owns_packed = true;
    return CB_OK;
}
