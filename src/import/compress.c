/* The import's compression step: a built clip's frames compressed to the bound on the shell
 * (crowdblend/cclip.h), and decoded back at the source frames (what a pack loaded raw gives the
 * crowd; a pack loaded compressed samples the same keys in place), so the importer measures
 * what will be played at those frames (fit.c). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "import/import_impl.h"

/* The clip's frames as transforms (scale 1 + the stored deviation): the compressor's input. */
static cb_xform *clip_xforms(const cb_clip *clip)
{
    const size_t frames = cb_clip_frame_count(clip), joints = cb_clip_joint_count(clip);
    const size_t stride = cb_clip_frame_stride(clip), floats = frames * joints * stride;
    float *raw = malloc(floats * sizeof *raw);
    cb_xform *x = malloc(frames * joints * sizeof *x);
    if (raw == NULL || x == NULL || cb_clip_read_frames(clip, (cb_float_span){raw, floats})) {
        free(raw);
        free(x);
        return NULL;
    }
    for (size_t i = 0; i < frames * joints; ++i) {
        const float *v = raw + i * stride;
        for (int k = 0; k < 3; ++k) {
            x[i].translation[k] = v[k];
            x[i].scale[k] = stride == 10 ? 1.0f + v[7 + k] : 1.0f;
        }
        memcpy(x[i].rotation, v + 3, sizeof x[i].rotation);
    }
    free(raw);
    return x;
}

/* Everything of `clip` but its frames, for cb_cclip_to_clip (track and markers are allocated
 * here, freed by the caller). */
static cb_result clip_shape(const cb_clip *clip, const cb_skeleton *skeleton,
                            cb_clip_frames_desc *fd, float **track, cb_clip_marker **markers)
{
    const size_t frames = cb_clip_frame_count(clip), count = cb_clip_marker_count(clip);
    cb_clip_root_motion rm = cb_clip_query_root_motion(clip);
    *track = rm.mode != CB_ROOT_MOTION_NONE ? malloc(frames * 4 * sizeof **track) : NULL;
    *markers = malloc((count ? count : 1) * sizeof **markers);
    if (*markers == NULL || (rm.mode != CB_ROOT_MOTION_NONE && *track == NULL)) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    if (*track != NULL) {
        cb_clip_read_root_track(clip, (cb_float_span){*track, frames * 4});
    }
    for (size_t k = 0; k < count; ++k) {
        cb_clip_query_marker(clip, k, &(*markers)[k]);
    }
    *fd = (cb_clip_frames_desc){
        .name = cb_clip_name(clip),
        .skeleton = skeleton,
        .duration_s = cb_clip_duration(clip),
        .has_scale = cb_clip_frame_stride(clip) == 10,
        .wrap = cb_clip_is_looping(clip) ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .additive = cb_clip_is_additive(clip),
        .root_motion = rm.mode,
        .root_joint = rm.joint,
        .root_track = {*track, *track != NULL ? frames * 4 : 0},
        .root_origin = {rm.origin[0], rm.origin[1], rm.origin[2]},
        .root_origin_yaw = rm.origin_yaw,
        .markers = *markers,
        .marker_count = count,
    };
    return CB_OK;
}

cb_result imp_compress_clip(const imp_clip_job *job, const cb_clip *clip, cb_cclip **packed,
                            cb_clip **decoded, double *seconds, cb_error *err)
{
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    const size_t frames = cb_clip_frame_count(clip);
    cb_xform *x = clip_xforms(clip);
    if (x == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: %s: compression",
                            cb_clip_name(clip));
    }
    /* The root track is compressed with the keys, to the same bound (cclip.h, ROOT TRACK). */
    float *root = NULL;
    if (cb_clip_query_root_motion(clip).mode != CB_ROOT_MOTION_NONE) {
        root = malloc(frames * 4 * sizeof *root);
        if (root == NULL) {
            free(x);
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: %s: compression",
                                cb_clip_name(clip));
        }
        cb_clip_read_root_track(clip, (cb_float_span){root, frames * 4});
    }
    cb_cclip_desc cd = {
        .skeleton = job->skeleton,
        .frames = {x, frames * cb_clip_joint_count(clip)},
        .frame_count = frames,
        .additive = cb_clip_is_additive(clip),
        .max_error_m = (float)job->compress_bound_m,
        .shell_distance_m = (float)job->compress_shell_m,
        .root_track = {root, root != NULL ? frames * 4 : 0},
    };
    cb_error inner = {0};
    cb_result r = cb_cclip_create(&cd, packed, &inner);
    free(x);
    free(root);
    if (r != CB_OK) {
        return cb_error_set(err, r, "import: %s: compression: %s", cb_clip_name(clip),
                            inner.message);
    }
    cb_clip_frames_desc fd;
    float *track = NULL;
    cb_clip_marker *markers = NULL;
    r = clip_shape(clip, job->skeleton, &fd, &track, &markers);
    if (r == CB_OK) {
        r = cb_cclip_to_clip(*packed, &fd, decoded, &inner);
    } else {
        inner.message[0] = '\0';
    }
    free(track);
    free(markers);
    if (r != CB_OK) {
        cb_cclip_destroy(*packed);
        *packed = NULL;
        return cb_error_set(err, r, "import: %s: decoding the compressed clip: %s",
                            cb_clip_name(clip), inner.message);
    }
    timespec_get(&t1, TIME_UTC);
    *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return CB_OK;
}
