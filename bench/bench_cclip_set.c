/* The compressed-clip benchmarks' clip set (bench_cclip_set.h). */
#include "bench_cclip_set.h"

#include <stdlib.h>
#include <string.h>

#include "asset_reader.h" /* cb_test_clip_frames: a clip's stored frames as the source */
#include "base/prng.h"

enum { LOCOMOTION = 17 };

/* Clips 0 .. 16 of the embedded set are idle, the walks and the runs. */
static bool compress_base(const cb_embedded *e, cb_cclip **out)
{
    const cb_skeleton *sk = cb_embedded_skeleton(e);
    for (size_t i = 0; i < LOCOMOTION; ++i) {
        size_t frames = 0;
        cb_xform *src = cb_test_clip_frames(cb_embedded_clip(e, i), &frames);
        cb_cclip_desc d = {.skeleton = sk,
                           .frames = {src, frames * cb_skeleton_joint_count(sk)},
                           .frame_count = frames};
        cb_result r = src != NULL ? cb_cclip_create(&d, &out[i], NULL) : CB_ERR_OUT_OF_MEMORY;
        free(src);
        if (r != CB_OK) {
            return false;
        }
    }
    return true;
}

/* A copy of a compressed clip through its stored form (as a pack would load it). */
static cb_cclip *copy_packed(const cb_cclip *c, const cb_skeleton *sk)
{
    size_t bytes = cb_cclip_stream_bytes(c);
    unsigned char *stream = malloc(bytes);
    cb_cclip *out = NULL;
    cb_cclip_load_desc ld = {.skeleton = sk};
    if (stream != NULL && cb_cclip_serialize(c, stream, bytes) == CB_OK) {
        cb_cclip_load(stream, bytes, &ld, &out, NULL);
    }
    free(stream);
    return out;
}

/* The compressed clip as a clip of the pose jobs, with the uncompressed one's wrap (the
 * benchmark blends joints only: no root motion, no markers). */
static cb_clip *as_clip(const cb_cclip *z, const cb_clip *raw, const cb_skeleton *sk)
{
    cb_clip_frames_desc fd = {
        .name = cb_clip_name(raw),
        .skeleton = sk,
        .duration_s = cb_clip_duration(raw),
        .has_scale = cb_clip_frame_stride(raw) == 10,
        .wrap = cb_clip_is_looping(raw) ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .root_motion = CB_ROOT_MOTION_NONE,
    };
    cb_clip *c = NULL;
    return cb_cclip_clip_create(z, &fd, &c, NULL) == CB_OK ? c : NULL;
}

bool cb_bench_clip_set_make(cb_bench_clip_set *s, size_t copies, size_t chars, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    copies = copies < 1 ? 1 : copies;
    s->copies = copies;
    s->clips = copies * LOCOMOTION;
    s->chars = chars;
    s->sets = calloc(copies, sizeof *s->sets);
    s->raw = calloc(s->clips, sizeof *s->raw);
    s->packed = calloc(s->clips, sizeof *s->packed);
    s->packed_clips = calloc(s->clips, sizeof *s->packed_clips);
    s->raw_entries = calloc(chars * 3, sizeof *s->raw_entries);
    s->cclip_entries = calloc(chars * 3, sizeof *s->cclip_entries);
    if (!s->sets || !s->raw || !s->packed || !s->packed_clips || !s->raw_entries ||
        !s->cclip_entries) {
        cb_bench_clip_set_free(s);
        return false;
    }
    for (size_t c = 0; c < copies; ++c) {
        if (cb_embedded_create(NULL, &s->sets[c], NULL) != CB_OK) {
            cb_bench_clip_set_free(s);
            return false;
        }
        for (size_t i = 0; i < LOCOMOTION; ++i) {
            s->raw[c * LOCOMOTION + i] = cb_embedded_clip(s->sets[c], i);
            s->raw_bytes += cb_clip_bytes(s->raw[c * LOCOMOTION + i]);
        }
    }
    s->skeleton = cb_embedded_skeleton(s->sets[0]);
    s->joints = cb_skeleton_joint_count(s->skeleton);
    s->groups = cb_skeleton_group_count(s->skeleton);
    if (!compress_base(s->sets[0], s->packed)) {
        cb_bench_clip_set_free(s);
        return false;
    }
    for (size_t i = LOCOMOTION; i < s->clips; ++i) {
        if ((s->packed[i] = copy_packed(s->packed[i % LOCOMOTION], s->skeleton)) == NULL) {
            cb_bench_clip_set_free(s);
            return false;
        }
    }
    for (size_t i = 0; i < s->clips; ++i) {
        if ((s->packed_clips[i] = as_clip(s->packed[i], s->raw[i], s->skeleton)) == NULL) {
            cb_bench_clip_set_free(s);
            return false;
        }
        s->packed_bytes += cb_clip_bytes(s->packed_clips[i]);
    }
    s->pose = aligned_alloc(cb_simd_group_align(), cb_skeleton_pose_bytes(s->skeleton));
    if (s->pose == NULL) {
        cb_bench_clip_set_free(s);
        return false;
    }
    cb_prng r = cb_prng_seed(seed);
    for (size_t ch = 0; ch < chars; ++ch) {
        float t = cb_prng_range(&r, 0.0f, 1.0f), w[3], sum = 0.0f;
        size_t used[3];
        for (size_t e = 0; e < 3; ++e) {
            bool dup;
            do {
                used[e] = cb_prng_below(&r, (uint32_t)s->clips);
                dup = (e > 0 && used[e] == used[0]) || (e > 1 && used[e] == used[1]);
            } while (dup);
            w[e] = cb_prng_range(&r, 0.2f, 1.0f);
            sum += w[e];
        }
        for (size_t e = 0; e < 3; ++e) {
            s->raw_entries[ch * 3 + e] =
                (cb_blend_entry){s->raw[used[e]], t, w[e] / sum, CB_BLEND_MODE_NORMAL, {NULL, 0}};
            s->cclip_entries[ch * 3 + e] = s->raw_entries[ch * 3 + e];
            s->cclip_entries[ch * 3 + e].clip = s->packed_clips[used[e]];
        }
    }
    return true;
}

void cb_bench_clip_set_free(cb_bench_clip_set *s)
{
    for (size_t i = 0; s->packed != NULL && i < s->clips; ++i) {
        cb_clip_destroy(s->packed_clips != NULL ? s->packed_clips[i] : NULL);
        cb_cclip_destroy(s->packed[i]);
    }
    for (size_t c = 0; s->sets != NULL && c < s->copies; ++c) {
        cb_embedded_destroy(s->sets[c]);
    }
    free(s->sets), free(s->raw), free(s->packed), free(s->packed_clips), free(s->raw_entries);
    free(s->cclip_entries);
    free(s->pose);
    memset(s, 0, sizeof *s);
}

void cb_bench_clip_set_blend(const cb_bench_clip_set *s, bool compressed)
{
    const cb_blend_entry *entries = compressed ? s->cclip_entries : s->raw_entries;
    for (size_t c = 0; c < s->chars; ++c) {
        cb_pose_blend_job job = {s->skeleton, {&entries[c * 3], 3}, 0.0f, {s->pose, s->groups}};
        cb_pose_blend_job_run(&job, NULL);
    }
}

void cb_bench_clip_set_sample(const cb_bench_clip_set *s, bool compressed)
{
    const cb_blend_entry *entries = compressed ? s->cclip_entries : s->raw_entries;
    for (size_t c = 0; c < s->chars; ++c) {
        const cb_blend_entry *e = &entries[c * 3];
        cb_pose_sample_job job = {e->clip, e->time, {s->pose, s->groups}};
        cb_pose_sample_job_run(&job, NULL);
    }
}
