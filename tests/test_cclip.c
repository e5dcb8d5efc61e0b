/* Compressed clips (crowdblend/cclip.h): the error bound against the source keys, measured here
 * in double precision in object space (tests/common/anim_test.c's reference local-to-model) on
 * the embedded clips, random skeletons with scale, and real assets read from tests/data/assets;
 * the SIMD group decoder against the scalar reference, bit for bit, and the pose jobs on
 * compressed clips against the same keys as uncompressed frames, bit for bit; the stored form
 * (round trip, truncation, corruption, another skeleton); bad parameters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "asset_reader.h"
#include "compress/cclip_decode.h" /* the group decoder's paths per group kind */
#include "compress/cclip_impl.h"   /* cb_cclip_clip_create: clips that stay compressed */
#include "test_util.h"

#ifndef CB_TEST_ASSET_DIR
#error "CB_TEST_ASSET_DIR must name tests/data/assets"
#endif

/* ------------------------------------------------------------------------------------------ */
/* The shell error, written from the contract in crowdblend/cclip.h                           */

static dref_xform to_dref(const cb_xform *x)
{
    dref_xform d;
    for (int k = 0; k < 3; ++k) {
        d.t[k] = x->translation[k];
        d.s[k] = x->scale[k];
    }
    for (int k = 0; k < 4; ++k) {
        d.q[k] = x->rotation[k];
    }
    dref_quat_normalize(d.q);
    return d;
}

/* Largest distance between a(p) and b(p) over p = +-d on each axis. */
static double shell_distance(const dref_mat *a, const dref_mat *b, double d)
{
    double worst = 0.0;
    for (int axis = 0; axis < 3; ++axis) {
        for (int sign = -1; sign <= 1; sign += 2) {
            double e2 = 0.0;
            for (int r = 0; r < 3; ++r) {
                double pa = a->m[3][r] + sign * d * a->m[axis][r];
                double pb = b->m[3][r] + sign * d * b->m[axis][r];
                e2 += (pa - pb) * (pa - pb);
            }
            worst = fmax(worst, sqrt(e2));
        }
    }
    return worst;
}

typedef struct bound_check {
    double max_error;
    size_t worst_joint, worst_frame;
} bound_check;

/* Decodes every key with the scalar reference from the stored form, samples it at each source
 * frame as the runtime does (the two keys around the frame lerped, rotation normalized), and
 * measures the shell error against the source frames after local-to-model. */
static bound_check measure(const cb_skeleton *s, const cb_cclip *clip, const cb_xform *src,
                           size_t frames)
{
    const size_t n = cb_skeleton_joint_count(s), keys = cb_cclip_key_count(clip);
    const cb_cclip_info info = cb_cclip_query_info(clip);
    size_t bytes = cb_cclip_stream_bytes(clip);
    unsigned char *stream = malloc(bytes);
    cb_xform *dec = malloc(keys * n * sizeof *dec);
    dref_xform *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb);
    dref_mat *ma = malloc(n * sizeof *ma), *mb = malloc(n * sizeof *mb);
    assert_int_equal(cb_cclip_serialize(clip, stream, bytes), CB_OK);
    for (size_t k = 0; k < keys; ++k) {
        cb_error err = {0};
        cb_result r =
            cb_cclip_decode_stream_ref(s, stream, bytes, k, (cb_xform_span){dec + k * n, n}, &err);
        CB_CHECK(r == CB_OK, "decode key %zu: %s", k, err.message);
    }
    bound_check out = {0, 0, 0};
    for (size_t f = 0; f < frames; ++f) {
        double x = (double)f * (double)(keys - 1) / (double)(frames - 1);
        size_t i = x >= (double)(keys - 1) ? keys - 2 : (size_t)x;
        double u = x - (double)i;
        for (size_t j = 0; j < n; ++j) {
            for (int c = 0; c < 3; ++c) {
                la[j].t[c] = (1 - u) * dec[i * n + j].translation[c] +
                             u * dec[(i + 1) * n + j].translation[c];
                la[j].s[c] = (1 - u) * dec[i * n + j].scale[c] + u * dec[(i + 1) * n + j].scale[c];
            }
            for (int c = 0; c < 4; ++c) {
                la[j].q[c] = (1 - u) * (double)dec[i * n + j].rotation[c] +
                             u * (double)dec[(i + 1) * n + j].rotation[c];
            }
            dref_quat_normalize(la[j].q);
            lb[j] = to_dref(&src[f * n + j]);
        }
        dref_local_to_model(cb_skeleton_parents(s), n, la, ma);
        dref_local_to_model(cb_skeleton_parents(s), n, lb, mb);
        for (size_t j = 0; j < n; ++j) {
            double e = shell_distance(&ma[j], &mb[j], info.shell_distance_m);
            if (e > out.max_error) {
                out = (bound_check){e, j, f};
            }
        }
    }
    free(stream), free(dec), free(la), free(lb), free(ma), free(mb);
    return out;
}

static cb_cclip *compress(const cb_skeleton *s, const cb_xform *frames, size_t count, bool additive,
                          float bound)
{
    cb_cclip_desc d = {
        .skeleton = s,
        .frames = {frames, count * cb_skeleton_joint_count(s)},
        .frame_count = count,
        .additive = additive,
        .max_error_m = bound,
    };
    cb_cclip *c = NULL;
    cb_error err = {0};
    cb_result r = cb_cclip_create(&d, &c, &err);
    CB_CHECK(r == CB_OK, "cb_cclip_create: %s", err.message);
    return c;
}

/* Compresses, checks the bound (with a margin of 1e-9 m for the double evaluation itself) and
 * that the clip's own report agrees with the measurement; returns the measured error. */
static double check_bound(const char *what, const cb_skeleton *s, const cb_xform *frames,
                          size_t count, bool additive, float bound)
{
    cb_cclip *c = compress(s, frames, count, additive, bound);
    bound_check b = measure(s, c, frames, count);
    cb_cclip_info info = cb_cclip_query_info(c);
    cb_test_note("%-22s %4zu frames -> %4u keys, %6zu -> %5zu bytes (%5.1fx), shell error "
                 "%.4f mm (bound %.3f mm; joint %zu, frame %zu)",
                 what, count, info.keys, info.source_bytes, info.stream_bytes,
                 (double)info.source_bytes / (double)info.stream_bytes, b.max_error * 1e3,
                 (double)bound * 1e3, b.worst_joint, b.worst_frame);
    CB_CHECK(b.max_error <= (double)bound + 1e-9, "%s: shell error %.6g m exceeds %.6g m", what,
             b.max_error, (double)bound);
    CB_CHECK(fabs(b.max_error - (double)info.measured_error_m) <= 1e-3 * (double)bound + 1e-9,
             "%s: measured %.6g, the clip reports %.6g", what, b.max_error,
             (double)info.measured_error_m);
    cb_cclip_destroy(c);
    return b.max_error;
}

/* ------------------------------------------------------------------------------------------ */
/* Bound                                                                                      */

/* The embedded clips the bound, root-track and decoder tests compress: every one in optimized
 * builds, every fourth where builds are slow (cb_test_scale() < 1: sanitizers, no
 * optimization, qemu), where each compression costs seconds; the decoder tests' checks that
 * every path was met still hold on the fourth. */
static size_t embedded_step(void)
{
    return cb_test_scale() < 1.0 ? 4 : 1;
}

static void cclip_embedded_within_bound(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    for (size_t i = 0; i < cb_embedded_clip_count(set); i += embedded_step()) {
        const cb_clip *clip = cb_embedded_clip(set, i);
        size_t frames = 0;
        cb_xform *src = cb_test_clip_frames(clip, &frames);
        check_bound(cb_clip_name(clip), s, src, frames, cb_clip_is_additive(clip),
                    CB_CCLIP_DEFAULT_MAX_ERROR_M);
        free(src);
    }
    cb_embedded_destroy(set);
}

/* Other bounds, and a tighter bound never gives a smaller clip. */
static void cclip_bounds_scale(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    size_t frames = 0;
    cb_xform *src = cb_test_clip_frames(cb_embedded_find_clip(set, "run_fl"), &frames);
    const float bounds[] = {1e-2f, 1e-3f, 1e-4f, 1e-5f};
    size_t last = 0;
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; ++b) {
        check_bound("run_fl", s, src, frames, false, bounds[b]);
        cb_cclip *c = compress(s, src, frames, false, bounds[b]);
        size_t bytes = cb_cclip_stream_bytes(c);
        CB_CHECK(bytes >= last, "bound %g gives %zu bytes, the looser one %zu", (double)bounds[b],
                 bytes, last);
        last = bytes;
        cb_cclip_destroy(c);
    }
    free(src);
    cb_embedded_destroy(set);
}

/* Random skeletons with non-uniform rest scales and random scaled clips: scale tracks, deep
 * chains, branching. */
static void cclip_random_within_bound(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("cclip_random_within_bound");
    for (int round = 0; round < 6; ++round) {
        size_t n = 4 + cb_prng_below(&r, 40);
        bool scaled = round % 2 == 1;
        cb_skeleton *s = cb_test_random_skeleton(&r, n, scaled, round % 3 == 0);
        cb_test_tracks t = cb_test_random_tracks(&r, s, 1.5f, n, scaled, 1.2f);
        cb_clip_desc d = {.skeleton = s,
                          .duration_s = t.duration,
                          .tracks = t.tracks,
                          .track_count = t.count,
                          .root_motion = CB_ROOT_MOTION_NONE,
                          .additive = round == 4 ? CB_ADDITIVE_FIRST_FRAME : CB_ADDITIVE_NONE};
        cb_clip *clip = cb_test_clip_create(&d);
        size_t frames = 0;
        cb_xform *src = cb_test_clip_frames(clip, &frames);
        char what[64];
        snprintf(what, sizeof what, "random %zu joints%s", n, scaled ? " s" : "");
        check_bound(what, s, src, frames, cb_clip_is_additive(clip), 1e-4f);
        free(src);
        cb_clip_destroy(clip);
        cb_test_tracks_free(&t);
        cb_skeleton_destroy(s);
    }
}

static void check_asset(const cb_test_asset *a, const char *file)
{
    for (size_t i = 0; i < a->clip_count; ++i) {
        char what[160];
        snprintf(what, sizeof what, "%s %s", file, a->clips[i].name);
        check_bound(what, a->skeleton, a->clips[i].frames, a->clips[i].frame_count, false,
                    CB_CCLIP_DEFAULT_MAX_ERROR_M);
    }
}

static void cclip_assets_within_bound(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        double scale;
    } glbs[] = {
        {"Fox/Fox.glb", 0.01}, /* authored in centimetres */
        {"CesiumMan/CesiumMan.glb", 1.0},
        {"RiggedFigure/RiggedFigure.glb", 1.0},
    };
    for (size_t i = 0; i < sizeof glbs / sizeof glbs[0]; ++i) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CB_TEST_ASSET_DIR, glbs[i].file);
        cb_test_asset a;
        cb_error err = {0};
        cb_result r = cb_test_read_glb(path, glbs[i].scale, &a, &err);
        CB_CHECK(r == CB_OK, "%s: %s", path, err.message);
        CB_CHECK(a.clip_count > 0, "%s has no animation", path);
        check_asset(&a, glbs[i].file);
        cb_test_asset_free(&a);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/CMU_walk_bvh/walk.bvh", CB_TEST_ASSET_DIR);
    cb_test_asset a;
    cb_error err = {0};
    /* Frame 0 is a rest-like pose; the walk starts at frame 1 (tests/data/assets/README). */
    cb_result r = cb_test_read_bvh(path, 0.0254 / 0.45, 1, &a, &err);
    CB_CHECK(r == CB_OK, "%s: %s", path, err.message);
    check_asset(&a, "CMU walk.bvh");
    cb_test_asset_free(&a);
}

/* ------------------------------------------------------------------------------------------ */
/* The root track                                                                             */

/* Root deltas of the decoded clip against the raw clip's, over many intervals within one cycle
 * (crowdblend/cclip.h, ROOT TRACK): translation within the bound, yaw within the bound at the
 * shell distance; and each decoded frame within its own bounds. */
static void check_root(const char *what, const cb_clip *raw, const cb_skeleton *s, cb_err_track *te,
                       cb_err_track *ye, size_t *stored, size_t *rawb)
{
    size_t frames = 0;
    cb_xform *src = cb_test_clip_frames(raw, &frames);
    float *track = malloc(frames * 4 * sizeof *track), *dec = malloc(frames * 4 * sizeof *dec);
    assert_int_equal(cb_clip_read_root_track(raw, (cb_float_span){track, frames * 4}), CB_OK);
    const float bound = CB_CCLIP_DEFAULT_MAX_ERROR_M, shell = CB_CCLIP_DEFAULT_SHELL_M;
    cb_cclip_desc d = {
        .skeleton = s,
        .frames = {src, frames * cb_skeleton_joint_count(s)},
        .frame_count = frames,
        .root_track = {track, frames * 4},
    };
    cb_cclip *z = NULL;
    cb_error err = {0};
    CB_CHECK(cb_cclip_create(&d, &z, &err) == CB_OK, "%s: %s", what, err.message);
    cb_cclip_info info = cb_cclip_query_info(z);
    *stored += info.root_track_bytes;
    *rawb += frames * 16;
    assert_int_equal(cb_cclip_read_root_track(z, (cb_float_span){dec, frames * 4}), CB_OK);
    double reach = 0.0;
    for (size_t f = 0; f < frames; ++f) {
        const float *p = &track[f * 4];
        reach = fmax(reach, sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]));
    }
    for (size_t f = 0; f < frames; ++f) {
        double e2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            e2 += ((double)dec[f * 4 + k] - track[f * 4 + k]) *
                  ((double)dec[f * 4 + k] - track[f * 4 + k]);
        }
        CB_CHECK(sqrt(e2) <= bound / 4.0, "%s frame %zu: position off by %g m", what, f, sqrt(e2));
        double ey = fabs((double)dec[f * 4 + 3] - track[f * 4 + 3]);
        CB_CHECK(ey <= bound / (4.0 * fmax(shell, reach)), "%s frame %zu: yaw off by %g", what, f,
                 ey);
    }
    /* The decoded clip, as a pack's loader makes it. */
    cb_clip_root_motion rm = cb_clip_query_root_motion(raw);
    cb_clip_frames_desc fd = {
        .name = cb_clip_name(raw),
        .skeleton = s,
        .duration_s = cb_clip_duration(raw),
        .has_scale = cb_clip_frame_stride(raw) == 10,
        .wrap = cb_clip_is_looping(raw) ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .root_motion = rm.mode,
        .root_joint = rm.joint,
    };
    cb_clip *back = NULL;
    CB_CHECK(cb_cclip_to_clip(z, &fd, &back, &err) == CB_OK, "%s: %s", what, err.message);
    cb_prng rng = cb_test_prng(what);
    for (int i = 0; i < 2000; ++i) {
        float from = cb_prng_range(&rng, 0.0f, 1.0f);
        float to = from + cb_prng_range(&rng, -1.0f, 1.0f);
        cb_root_delta a, b;
        assert_int_equal(cb_clip_root_delta(raw, from, to, &a), CB_OK);
        assert_int_equal(cb_clip_root_delta(back, from, to, &b), CB_OK);
        double e2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            e2 += ((double)a.translation[k] - b.translation[k]) *
                  ((double)a.translation[k] - b.translation[k]);
        }
        cb_err_track_add(te, sqrt(e2) + 0.0, 0.0, (size_t)i);
        cb_err_track_add(ye, fabs((double)a.yaw - b.yaw) * shell, 0.0, (size_t)i);
    }
    cb_clip_destroy(back);
    cb_cclip_destroy(z);
    free(src), free(track), free(dec);
}

static void cclip_root_track_within_bound(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    cb_err_track te = cb_err_track_make("root delta translation (m)");
    cb_err_track ye = cb_err_track_make("root delta yaw at the shell distance (m)");
    size_t stored = 0, raw = 0, clips = 0;
    for (size_t i = 0; i < cb_embedded_clip_count(set); i += embedded_step()) {
        const cb_clip *c = cb_embedded_clip(set, (uint32_t)i);
        if (cb_clip_query_root_motion(c).mode != CB_ROOT_MOTION_NONE) {
            check_root(cb_clip_name(c), c, s, &te, &ye, &stored, &raw);
            clips++;
        }
    }
    /* A long turning walk: 12 m along a curve, 240 frames, every component animated. */
    enum { LONG = 240 };
    size_t n = cb_skeleton_joint_count(s), per = 7;
    float *frames = malloc(LONG * n * per * sizeof *frames),
          *track = malloc(LONG * 4 * sizeof *track);
    const cb_clip *walk = cb_embedded_find_clip(set, "walk_f");
    size_t wf = cb_clip_frame_count(walk);
    float *wframes = malloc(wf * n * per * sizeof *wframes);
    assert_int_equal(cb_clip_read_frames(walk, (cb_float_span){wframes, wf * n * per}), CB_OK);
    for (size_t f = 0; f < LONG; ++f) {
        memcpy(frames + f * n * per, wframes + (f % (wf - 1)) * n * per, n * per * sizeof(float));
        double u = (double)f / (LONG - 1), yaw = 1.3 * u * u;
        track[f * 4 + 0] = (float)(3.0 * sin(2.0 * u));
        track[f * 4 + 1] = (float)(0.02 * sin(40.0 * u));
        track[f * 4 + 2] = (float)(12.0 * u);
        track[f * 4 + 3] = (float)yaw;
    }
    cb_clip_frames_desc fd = {
        .name = "long_walk",
        .skeleton = s,
        .duration_s = 8.0f,
        .frame_count = LONG,
        .frames = {frames, LONG * n * per},
        .wrap = CB_CLIP_WRAP_CLAMP,
        .root_motion = CB_ROOT_MOTION_XYZ_YAW,
        .root_track = {track, LONG * 4},
    };
    cb_clip *longc = NULL;
    cb_error err = {0};
    CB_CHECK(cb_clip_create_from_frames(&fd, &longc, &err) == CB_OK, "long walk: %s", err.message);
    check_root("long_walk", longc, s, &te, &ye, &stored, &raw);
    cb_clip_destroy(longc);
    free(frames), free(track), free(wframes);
    cb_test_note("root tracks of %zu clips: %zu bytes raw, %zu stored (%.1fx)", clips + 1, raw,
                 stored, (double)raw / (double)stored);
    CB_CHECK(stored * 2 < raw, "root tracks stored in %zu bytes, raw %zu", stored, raw);
    cb_err_track_check(&te, CB_CCLIP_DEFAULT_MAX_ERROR_M);
    cb_err_track_check(&ye, CB_CCLIP_DEFAULT_MAX_ERROR_M / 2);
    cb_embedded_destroy(set);
}

/* ------------------------------------------------------------------------------------------ */
/* SIMD decoder = scalar reference                                                            */

static bool same_bits(const cb_xform *a, const cb_xform *b)
{
    return memcmp(a->rotation, b->rotation, sizeof a->rotation) == 0 &&
           memcmp(a->translation, b->translation, sizeof a->translation) == 0 &&
           memcmp(a->scale, b->scale, sizeof a->scale) == 0;
}

/* The loaded layout the SIMD decoder relies on (src/compress/cclip_impl.h): each component's
 * mask is its field in place and leaves bit 31 free (the AVX2 and SSE conversions are signed),
 * and its words start at word * active. */
static void check_layout(const char *what, const cb_cclip *c)
{
    for (size_t g = 0; g < c->group_count; ++g) {
        const cb_cclip_group *grp = &c->groups[g];
        for (uint32_t k = 0; k < c->components; ++k) {
            uint64_t want = ((1ull << grp->bits[k]) - 1u) << grp->shift[k];
            CB_CHECK(grp->mask[k] == want && want < (1ull << 31) &&
                         grp->at[k] == (uint32_t)grp->word[k] * grp->active,
                     "%s group %zu component %u: %u bits at %u, mask %#x, at %u", what, g, k,
                     grp->bits[k], grp->shift[k], grp->mask[k], grp->at[k]);
        }
    }
}

/* A clip with scale on a random skeleton (3..39 joints, random tracks with scale), compressed;
 * the skeleton in *skeleton, for the caller to destroy. */
static cb_cclip *random_scaled_cclip(cb_prng *r, cb_skeleton **skeleton)
{
    cb_skeleton *s = cb_test_random_skeleton(r, 3 + cb_prng_below(r, 37), true, false);
    cb_test_tracks t = cb_test_random_tracks(r, s, 1.0f, 40, true, 2.0f);
    cb_clip_desc d = {.skeleton = s,
                      .duration_s = t.duration,
                      .tracks = t.tracks,
                      .track_count = t.count,
                      .root_motion = CB_ROOT_MOTION_NONE};
    cb_clip *clip = cb_test_clip_create(&d);
    size_t frames = 0;
    cb_xform *src = cb_test_clip_frames(clip, &frames);
    cb_cclip *c = compress(s, src, frames, false, 1e-5f);
    CB_CHECK(cb_cclip_query_info(c).has_scale, "the random clip should keep scale");
    free(src);
    cb_clip_destroy(clip);
    cb_test_tracks_free(&t);
    *skeleton = s;
    return c;
}

/* Groups check_decoders saw that rebuild w alone, and other rotation components (the decoder's
 * two paths, src/compress/cclip_decode.h), and of each kind (cb_cclip_group_kind: its paths
 * per group). */
static size_t groups_rebuilding_w, groups_rebuilding_others, groups_of_kind[3];

/* The sample job's contract on a compressed clip, in scalar from the clip's decoded keys
 * (cb_cclip_decode, not the interpolating decoder): at time t, keys i and i + 1 around it
 * (cb_cclip_locate), each component lerped as u + f (v - u), the rotation normalized as the
 * jobs do (d = x x, then y y + d, z z + d, w w + d, each product and sum rounded; q times
 * 1 / sqrt(d); the identity below CB_QUAT_MIN_LENGTH_SQ), scale 1 + the lerped deviation:
 * at a key (f = 0) the key's own scale, between keys only for a clip without scale (deviation
 * 0, scale 1). At f = 1 (a clamped clip's end) key i + 1 alone. Into want, n joints. */
#define XF_ARGS(x)                                                                                 \
    (double)(x).translation[0], (double)(x).translation[1], (double)(x).translation[2],            \
        (double)(x).rotation[0], (double)(x).rotation[1], (double)(x).rotation[2],                 \
        (double)(x).rotation[3], (double)(x).scale[0], (double)(x).scale[1], (double)(x).scale[2]

static void sample_by_keys(const cb_cclip *z, float t, bool looping, const cb_skeleton *s,
                           cb_xform *want)
{
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    uint32_t i;
    float f;
    cb_cclip_locate(z, t, looping, &i, &f);
    uint32_t ia = i, ib = i + 1;
    if (f == 1.0f) { /* a clamped clip's end: the last key's bits (u + (v - u) may round) */
        ia = ib, f = 0.0f;
    }
    CB_CHECK(f == 0.0f || !cb_cclip_query_info(z).has_scale,
             "between keys the reference assumes a clip without scale");
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    cb_xform *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
    assert_int_equal(cb_cclip_decode(z, ia, (cb_xform_group_span){pose, groups}), CB_OK);
    assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){u, n}), CB_OK);
    assert_int_equal(cb_cclip_decode(z, ib, (cb_xform_group_span){pose, groups}), CB_OK);
    assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){v, n}), CB_OK);
    for (size_t j = 0; j < n; ++j) {
        float q[4];
        for (int k = 0; k < 3; ++k) {
            want[j].translation[k] =
                u[j].translation[k] + f * (v[j].translation[k] - u[j].translation[k]);
            want[j].scale[k] = f == 0.0f ? u[j].scale[k] : 1.0f;
        }
        for (int k = 0; k < 4; ++k) {
            q[k] = u[j].rotation[k] + f * (v[j].rotation[k] - u[j].rotation[k]);
        }
        float d = q[0] * q[0];
        d = q[1] * q[1] + d;
        d = q[2] * q[2] + d;
        d = q[3] * q[3] + d;
        const bool ok = d >= CB_QUAT_MIN_LENGTH_SQ && d < INFINITY;
        const float inv = 1.0f / sqrtf(ok ? d : 1.0f);
        for (int k = 0; k < 4; ++k) {
            want[j].rotation[k] = ok ? q[k] * inv : k == 3 ? 1.0f : 0.0f;
        }
    }
    free(pose), free(u), free(v);
}

/* The interpolated key of every group (cb_cclip_sample_group_at, SIMD) against the scalar rule
 * (cb_cclip_joint_lerp), bit for bit, for every joint and component, between every pair of
 * successive keys at fractions 0, 1 and three others; the group's lanes past the last joint
 * are the identity, bit for bit. */
static void check_interpolated(const char *what, const cb_cclip *c)
{
    static const float fractions[5] = {0.0f, 0.3f, 0.5f, 0.8125f, 1.0f};
    const size_t comps = c->has_scale ? 10 : 7;
    for (uint32_t k = 0; k + 1 < c->keys; ++k) {
        for (int fi = 0; fi < 5; ++fi) {
            const float f = fractions[fi];
            for (size_t g = 0; g < c->group_count; ++g) {
                cb_key_group s;
                memset(&s, 0x5A, sizeof s);
                cb_cclip_sample_group_at(c, cb_cclip_key_words(c, k), cb_cclip_key_words(c, k + 1),
                                         g, cb_vf_set1(f), c->has_scale, &s);
                CB_VF_ALIGNED float lanes[10 * CB_SIMD_WIDTH];
                memcpy(lanes, &s, sizeof lanes);
                for (size_t l = 0; l < CB_SIMD_WIDTH; ++l) {
                    const size_t j = g * CB_SIMD_WIDTH + l;
                    for (size_t x = 0; x < comps; ++x) {
                        /* A lane past the joints: the identity (t 0, q (0, 0, 0, 1), ds 0). */
                        const float want = j < c->joint_count
                                               ? cb_cclip_joint_lerp(c, k, f, j, (int)x)
                                           : x == 6 ? 1.0f
                                                    : 0.0f;
                        const float got = lanes[x * CB_SIMD_WIDTH + l];
                        CB_CHECK(memcmp(&want, &got, sizeof got) == 0,
                                 "%s keys %u-%u f %g joint %zu component %zu: SIMD %.9g, "
                                 "reference %.9g",
                                 what, k, k + 1, (double)f, j, x, (double)got, (double)want);
                    }
                }
            }
        }
    }
}

static cb_clip *clip_of(const cb_skeleton *s, const cb_cclip *z, const char *name, bool loop,
                        bool raw);

static bool same_xform(const cb_xform *a, const cb_xform *b)
{
    return memcmp(a->rotation, b->rotation, sizeof a->rotation) == 0 &&
           memcmp(a->translation, b->translation, sizeof a->translation) == 0 &&
           memcmp(a->scale, b->scale, sizeof a->scale) == 0;
}

/* The clip clamped at its end (t = 1, where the key lookup gives the last span at f = 1):
 * cb_cclip_sample and the sample job give the last key's bits (sample_by_keys), not
 * a + 1 (b - a), which can round away from b. */
static void check_clamped_end(const char *what, const cb_skeleton *s, const cb_cclip *c)
{
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    cb_xform *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    sample_by_keys(c, 1.0f, false, s, want);
    cb_clip *clip = clip_of(s, c, what, false, false);
    for (int job = 0; job < 2; ++job) {
        if (job == 0) {
            assert_int_equal(cb_cclip_sample(c, 1.0f, false, (cb_xform_group_span){pose, groups}),
                             CB_OK);
        } else {
            cb_pose_sample_job sj = {clip, 1.0f, {pose, groups}};
            assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
        }
        assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){got, n}), CB_OK);
        for (size_t j = 0; j < n; ++j) {
            CB_CHECK(same_xform(&got[j], &want[j]),
                     "%s: %s at the clamped end, joint %zu: %a %a %a | %a %a %a %a | %a %a %a, "
                     "the last key %a %a %a | %a %a %a %a | %a %a %a",
                     what, job ? "the sample job" : "cb_cclip_sample", j, XF_ARGS(got[j]),
                     XF_ARGS(want[j]));
        }
    }
    cb_clip_destroy(clip);
    free(pose), free(want), free(got);
}

static void check_decoders(const char *what, const cb_skeleton *s, const cb_cclip *c)
{
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    check_layout(what, c);
    for (size_t g = 0; g < c->group_count; ++g) {
        groups_rebuilding_w += c->groups[g].rebuilt == 8;
        groups_rebuilding_others += c->groups[g].rebuilt != 0 && c->groups[g].rebuilt != 8;
        assert_true(c->groups[g].kind < 3);
        groups_of_kind[c->groups[g].kind]++;
    }
    size_t bytes = cb_cclip_stream_bytes(c);
    unsigned char *stream = malloc(bytes);
    assert_int_equal(cb_cclip_serialize(c, stream, bytes), CB_OK);
    cb_xform *ref = malloc(n * sizeof *ref), *simd = malloc(n * sizeof *simd);
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    for (size_t k = 0; k < cb_cclip_key_count(c); ++k) {
        assert_int_equal(
            cb_cclip_decode_stream_ref(s, stream, bytes, k, (cb_xform_span){ref, n}, NULL), CB_OK);
        assert_int_equal(cb_cclip_decode(c, k, (cb_xform_group_span){pose, groups}), CB_OK);
        assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){simd, n}), CB_OK);
        for (size_t j = 0; j < n; ++j) {
            CB_CHECK(same_bits(&ref[j], &simd[j]),
                     "%s key %zu joint %zu: SIMD %.9g %.9g %.9g "
                     "%.9g, reference %.9g %.9g %.9g %.9g",
                     what, k, j, simd[j].rotation[0], simd[j].rotation[1], simd[j].rotation[2],
                     simd[j].rotation[3], ref[j].rotation[0], ref[j].rotation[1],
                     ref[j].rotation[2], ref[j].rotation[3]);
        }
    }
    free(stream), free(ref), free(simd), free(pose);
    check_interpolated(what, c);
    check_clamped_end(what, s, c);
}

static void cclip_simd_matches_ref(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    for (size_t i = 0; i < cb_embedded_clip_count(set); i += embedded_step()) {
        const cb_clip *clip = cb_embedded_clip(set, i);
        size_t frames = 0;
        cb_xform *src = cb_test_clip_frames(clip, &frames);
        /* A tight and a loose bound: wide and narrow fields, groups with and without words. */
        for (int b = 0; b < 2; ++b) {
            cb_cclip *c = compress(s, src, frames, cb_clip_is_additive(clip), b ? 1e-6f : 1e-2f);
            check_decoders(cb_clip_name(clip), s, c);
            cb_cclip_destroy(c);
        }
        free(src);
    }
    cb_embedded_destroy(set);
    /* Scaled random skeletons: ten components per key. */
    cb_prng r = cb_test_prng("cclip_simd_matches_ref");
    for (int round = 0; round < 4; ++round) {
        cb_skeleton *s2 = NULL;
        cb_cclip *c = random_scaled_cclip(&r, &s2);
        check_decoders("random scaled", s2, c);
        cb_cclip_destroy(c);
        cb_skeleton_destroy(s2);
    }
    /* Both of the decoder's rebuilding paths were compared with the reference. */
    CB_CHECK(groups_rebuilding_w > 0 && groups_rebuilding_others > 0,
             "groups rebuilding w alone: %zu, other components: %zu", groups_rebuilding_w,
             groups_rebuilding_others);
    cb_test_note("compared: %zu groups rebuilding w alone, %zu rebuilding other components",
                 groups_rebuilding_w, groups_rebuilding_others);
    /* And each of the decoder's paths per group. */
    CB_CHECK(groups_of_kind[CB_CCLIP_GROUP_CONSTANT] > 0 &&
                 groups_of_kind[CB_CCLIP_GROUP_ROTATION] > 0 &&
                 groups_of_kind[CB_CCLIP_GROUP_GENERAL] > 0,
             "groups constant: %zu, rotation: %zu, general: %zu",
             groups_of_kind[CB_CCLIP_GROUP_CONSTANT], groups_of_kind[CB_CCLIP_GROUP_ROTATION],
             groups_of_kind[CB_CCLIP_GROUP_GENERAL]);
    cb_test_note("compared: %zu constant groups, %zu rotation groups, %zu general groups",
                 groups_of_kind[CB_CCLIP_GROUP_CONSTANT], groups_of_kind[CB_CCLIP_GROUP_ROTATION],
                 groups_of_kind[CB_CCLIP_GROUP_GENERAL]);
}

/* The kind of group g read from its lanes' fields alone (joint_bits), independently of the
 * loader's layout: constant when no lane stores a field; rotation when the fields stored are
 * exactly rotation x, y and z (each in some lane) and the only component rebuilt at every key
 * (rebuilt, with a stored component beside it) is w, in some lane; else general. */
static int kind_of_lanes(const cb_cclip *c, size_t g)
{
    bool stored[CB_CCLIP_COMPONENTS] = {false}, any = false, rebuilds_w = false;
    bool rebuilds_other = false;
    for (size_t l = 0; l < CB_SIMD_WIDTH && g * CB_SIMD_WIDTH + l < c->joint_count; ++l) {
        const uint8_t *b = c->joint_bits + (g * CB_SIMD_WIDTH + l) * CB_CCLIP_COMPONENTS;
        bool rotation_stored = false;
        for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
            bool st = b[k] != 0 && b[k] != CB_CCLIP_REBUILT && b[k] != CB_CCLIP_DEFAULT_TRACK;
            stored[k] = stored[k] || st;
            any = any || st;
            rotation_stored = rotation_stored || (st && k >= 3 && k < 7);
        }
        for (int k = 3; k < 7 && rotation_stored; ++k) {
            rebuilds_w = rebuilds_w || (k == 6 && b[k] == CB_CCLIP_REBUILT);
            rebuilds_other = rebuilds_other || (k != 6 && b[k] == CB_CCLIP_REBUILT);
        }
    }
    if (!any) {
        return CB_CCLIP_GROUP_CONSTANT;
    }
    bool rotation = rebuilds_w && !rebuilds_other;
    for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
        rotation = rotation && stored[k] == (k >= 3 && k < 6);
    }
    return rotation ? CB_CCLIP_GROUP_ROTATION : CB_CCLIP_GROUP_GENERAL;
}

/* Rotation groups seen by check_group_paths in scaled clips, and with a lane that stores
 * nothing (a constant joint, or padding past the last joint). */
static size_t rotation_groups_scaled, rotation_groups_idle_lane;

/* Each group's kind is the one its fields give (kind_of_lanes), and the decoder's paths for
 * constant and rotation groups give the same bits as its general path (the same clip with every
 * group marked general), for every pair of successive keys, with and without the scale
 * deviations: the keys (cb_cclip_decode_group2) and the interpolated key between them
 * (cb_cclip_sample_group_at). */
static void check_group_paths(const char *what, const cb_cclip *c)
{
    cb_cclip_group *general = malloc(c->group_count * sizeof *general);
    memcpy(general, c->groups, c->group_count * sizeof *general);
    for (size_t g = 0; g < c->group_count; ++g) {
        CB_CHECK(c->groups[g].kind == kind_of_lanes(c, g), "%s group %zu: kind %d, its fields %d",
                 what, g, c->groups[g].kind, kind_of_lanes(c, g));
        general[g].kind = CB_CCLIP_GROUP_GENERAL;
        if (c->groups[g].kind == CB_CCLIP_GROUP_ROTATION) {
            rotation_groups_scaled += c->has_scale;
            bool idle = false;
            for (size_t l = 0; l < CB_SIMD_WIDTH; ++l) {
                size_t j = g * CB_SIMD_WIDTH + l;
                idle = idle || j >= c->joint_count || c->rank[j] == 0xFF;
            }
            rotation_groups_idle_lane += idle;
        }
    }
    struct cb_cclip all_general = *c;
    all_general.groups = general;
    for (uint32_t k = 0; k < c->keys; ++k) {
        const uint32_t kb = k + 1 < c->keys ? k + 1 : k;
        for (int scaled = 0; scaled <= (int)c->has_scale; ++scaled) {
            for (size_t g = 0; g < c->group_count; ++g) {
                cb_key_group a[2], b[2];
                memset(a, 0x5A, sizeof a), memset(b, 0x5A, sizeof b);
                cb_cclip_decode_group2(c, k, kb, g, scaled, &a[0], &b[0]);
                cb_cclip_decode_group2(&all_general, k, kb, g, scaled, &a[1], &b[1]);
                CB_CHECK(memcmp(&a[0], &a[1], sizeof a[0]) == 0 &&
                             memcmp(&b[0], &b[1], sizeof b[0]) == 0,
                         "%s keys %u, %u group %zu (kind %d, scaled %d): not the general path's",
                         what, k, kb, g, c->groups[g].kind, scaled);
                const cb_vf f = cb_vf_set1(0.375f);
                cb_cclip_sample_group_at(c, cb_cclip_key_words(c, k), cb_cclip_key_words(c, kb), g,
                                         f, scaled, &a[0]);
                cb_cclip_sample_group_at(&all_general, cb_cclip_key_words(c, k),
                                         cb_cclip_key_words(c, kb), g, f, scaled, &a[1]);
                CB_CHECK(memcmp(&a[0], &a[1], sizeof a[0]) == 0,
                         "%s keys %u, %u group %zu (kind %d, scaled %d): the interpolated key is "
                         "not the general path's",
                         what, k, kb, g, c->groups[g].kind, scaled);
            }
        }
    }
    free(general);
}

/* The group kinds and their decoder paths (check_group_paths) on the embedded clips (tight and
 * loose bounds), with scale on one joint (the root's group general, the others of the
 * skeleton rotation groups in a scaled clip) and with a constant joint (a lane that stores
 * nothing), and on random skeletons with scale. */
static void cclip_group_kinds_match_fields(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    const size_t n = cb_skeleton_joint_count(s);
    size_t kinds[3] = {0, 0, 0};
    for (size_t i = 0; i < cb_embedded_clip_count(set); i += embedded_step()) {
        const cb_clip *clip = cb_embedded_clip(set, i);
        size_t frames = 0;
        cb_xform *src = cb_test_clip_frames(clip, &frames);
        const bool additive = cb_clip_is_additive(clip);
        for (int variant = 0; variant < 4; ++variant) {
            if (variant == 2) { /* joint 0 scaled, in and out by up to 5 % */
                for (size_t f = 0; f < frames; ++f) {
                    src[f * n].scale[f % 3] *= 1.0f + 0.05f * sinf((float)f * 0.3f);
                }
            }
            if (variant == 3) { /* joint n - 2 held at its first frame */
                for (size_t f = 1; f < frames; ++f) {
                    src[f * n + n - 2] = src[n - 2];
                }
            }
            cb_cclip *c = compress(s, src, frames, additive, variant == 1 ? 1e-2f : 1e-5f);
            check_group_paths(cb_clip_name(clip), c);
            for (size_t g = 0; g < c->group_count; ++g) {
                kinds[c->groups[g].kind]++;
            }
            cb_cclip_destroy(c);
        }
        free(src);
    }
    cb_embedded_destroy(set);
    cb_prng r = cb_test_prng(__func__);
    for (int round = 0; round < 4; ++round) {
        cb_skeleton *s2 = NULL;
        cb_cclip *c = random_scaled_cclip(&r, &s2);
        check_group_paths("random scaled", c);
        cb_cclip_destroy(c);
        cb_skeleton_destroy(s2);
    }
    cb_test_note("kinds: %zu constant, %zu rotation, %zu general groups; rotation groups: %zu in "
                 "scaled clips, %zu with a lane that stores nothing",
                 kinds[0], kinds[1], kinds[2], rotation_groups_scaled, rotation_groups_idle_lane);
    CB_CHECK(kinds[0] > 0 && kinds[1] > 0 && kinds[2] > 0 && rotation_groups_scaled > 0 &&
                 rotation_groups_idle_lane > 0,
             "each path compared: kinds %zu %zu %zu, rotation scaled %zu, idle lane %zu", kinds[0],
             kinds[1], kinds[2], rotation_groups_scaled, rotation_groups_idle_lane);
}

/* Sampling at a key's time gives that key normalized; halfway gives the normalized lerp. */
static void cclip_sample_matches_keys(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    size_t frames = 0;
    cb_xform *src = cb_test_clip_frames(cb_embedded_find_clip(set, "walk_fl"), &frames);
    cb_cclip *c = compress(s, src, frames, false, 1e-4f);
    cb_xform_group *pose = cb_test_pose_alloc(s, true), *key = cb_test_pose_alloc(s, true);
    cb_xform_group *key2 = cb_test_pose_alloc(s, true);
    cb_err_track e = cb_err_track_make("sample vs decoded keys");
    size_t keys = cb_cclip_key_count(c);
    for (size_t k = 0; k + 1 < keys; ++k) {
        for (int half = 0; half < 2; ++half) {
            float t = ((float)k + 0.5f * (float)half) / (float)(keys - 1);
            assert_int_equal(
                cb_cclip_sample(c, t + 3.0f, true, (cb_xform_group_span){pose, groups}), CB_OK);
            cb_cclip_decode(c, k, (cb_xform_group_span){key, groups});
            cb_cclip_decode(c, k + 1, (cb_xform_group_span){key2, groups});
            for (size_t j = 0; j < n; ++j) {
                dref_xform got = dref_from_pose(pose, j), a = dref_from_pose(key, j);
                dref_xform b = dref_from_pose(key2, j);
                double u = 0.5 * half, q[4];
                for (int i = 0; i < 4; ++i) {
                    q[i] = (1 - u) * a.q[i] + u * b.q[i];
                }
                dref_quat_normalize(q);
                for (int i = 0; i < 4; ++i) {
                    cb_err_track_add(&e, got.q[i], q[i], j);
                }
                for (int i = 0; i < 3; ++i) {
                    cb_err_track_add(&e, got.t[i], (1 - u) * a.t[i] + u * b.t[i], j);
                }
            }
        }
    }
    /* Float lerp and normalization of unit-length data: a few ulps. */
    cb_err_track_check(&e, 1e-6);
    assert_int_equal(cb_cclip_sample(c, NAN, true, (cb_xform_group_span){pose, groups}),
                     CB_ERR_NOT_FINITE);
    free(pose), free(key), free(key2), free(src);
    cb_cclip_destroy(c);
    cb_embedded_destroy(set);
}

/* ------------------------------------------------------------------------------------------ */
/* Compressed clips in the pose jobs (the fused sampler)                                      */

/* A clip whose keys stay compressed (what a pack gives by default), or the same decoded to
 * frames at the source rate (a pack loaded with CB_PACK_CLIP_FORM_RAW). */
static cb_clip *clip_of(const cb_skeleton *s, const cb_cclip *z, const char *name, bool loop,
                        bool raw)
{
    cb_clip_frames_desc fd = {
        .name = name,
        .skeleton = s,
        .duration_s = 1.0f,
        .has_scale = true,
        .wrap = loop ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .additive = z->additive,
        .root_motion = CB_ROOT_MOTION_NONE,
    };
    cb_clip *c = NULL;
    cb_error err = {0};
    cb_result r = raw ? cb_cclip_to_clip(z, &fd, &c, &err) : cb_cclip_clip_create(z, &fd, &c, &err);
    CB_CHECK(r == CB_OK, "%s: %s", name, err.message);
    return c;
}

/* The reference clip of a compressed one: its keys decoded from the stored form by the scalar
 * reference decoder, in double, as frames between which dref interpolates. */
static dref_clip dref_of_keys(const cb_skeleton *s, const cb_cclip *z, bool loop)
{
    const size_t n = cb_skeleton_joint_count(s), keys = cb_cclip_key_count(z);
    size_t bytes = cb_cclip_stream_bytes(z);
    unsigned char *stream = malloc(bytes);
    cb_xform *dec = malloc(keys * n * sizeof *dec);
    assert_int_equal(cb_cclip_serialize(z, stream, bytes), CB_OK);
    dref_clip d = {n, (unsigned)(keys - 1), loop, z->additive,
                   malloc(keys * n * sizeof(dref_xform))};
    for (size_t k = 0; k < keys; ++k) {
        assert_int_equal(
            cb_cclip_decode_stream_ref(s, stream, bytes, k, (cb_xform_span){dec + k * n, n}, NULL),
            CB_OK);
    }
    for (size_t i = 0; i < keys * n; ++i) {
        dref_xform *x = &d.frames[i];
        for (int c = 0; c < 3; ++c) {
            x->t[c] = dec[i].translation[c];
            x->s[c] = dec[i].scale[c];
        }
        for (int c = 0; c < 4; ++c) {
            x->q[c] = dec[i].rotation[c];
        }
    }
    free(stream), free(dec);
    return d;
}

enum { PC_CLIPS = 5 };

/* Compressed embedded clips of every kind a blend takes: three NORMAL (two looping, one
 * clamped), an OVERRIDE and an ADDITIVE one (which the compressor stores with fewer keys than
 * source frames: 25 of 73, checked below). */
typedef struct packed_scene {
    cb_embedded *set;
    const cb_skeleton *s;
    cb_cclip *z[PC_CLIPS];
    cb_clip *packed[PC_CLIPS], *raw[PC_CLIPS];
    dref_clip ref[PC_CLIPS];
} packed_scene;

static packed_scene packed_scene_make(void)
{
    packed_scene p = {0};
    assert_int_equal(cb_embedded_create(NULL, &p.set, NULL), CB_OK);
    p.s = cb_embedded_skeleton(p.set);
    static const char *const names[PC_CLIPS] = {"walk_f", "run_fl", "idle", "wave_upper",
                                                "lean_add"};
    static const bool loop[PC_CLIPS] = {true, true, false, true, true};
    for (int i = 0; i < PC_CLIPS; ++i) {
        const cb_clip *src_clip = cb_embedded_find_clip(p.set, names[i]);
        size_t frames = 0;
        cb_xform *src = cb_test_clip_frames(src_clip, &frames);
        p.z[i] = compress(p.s, src, frames, cb_clip_is_additive(src_clip), 1e-4f);
        free(src);
        p.packed[i] = clip_of(p.s, p.z[i], names[i], loop[i], false);
        p.raw[i] = clip_of(p.s, p.z[i], names[i], loop[i], true);
        p.ref[i] = dref_of_keys(p.s, p.z[i], loop[i]);
    }
    CB_CHECK(cb_cclip_key_count(p.z[4]) < cb_clip_frame_count(p.raw[4]),
             "lean_add kept all %u keys: the test wants a key-reduced clip",
             cb_cclip_key_count(p.z[4]));
    return p;
}

static void packed_scene_free(packed_scene *p)
{
    for (int i = 0; i < PC_CLIPS; ++i) {
        cb_clip_destroy(p->packed[i]);
        cb_clip_destroy(p->raw[i]);
        cb_cclip_destroy(p->z[i]);
        dref_clip_free(&p->ref[i]);
    }
    cb_embedded_destroy(p->set);
}

/* The scene the pose-job tests share, built once: its five compressions were most of each
 * test's time in slow builds (about 12 s of each under qemu, 3 s with sanitizers). The tests
 * only read it; it is freed at exit, before the leak check. */
static packed_scene shared;
static bool shared_made;

static void shared_scene_free(void)
{
    if (shared_made) {
        packed_scene_free(&shared);
    }
}

static packed_scene shared_scene(void)
{
    if (!shared_made) {
        shared = packed_scene_make();
        shared_made = true;
        atexit(shared_scene_free);
    }
    return shared;
}

/* Random entries: 1..3 NORMAL among the first three clips, maybe the OVERRIDE and the
 * ADDITIVE layer, at times beyond [0, 1] (wrapped or clamped). */
static size_t packed_entries(cb_prng *r, cb_clip *const *clips, cb_blend_entry *e)
{
    size_t k = 0, normal = 1 + cb_prng_below(r, 3);
    for (size_t i = 0; i < normal; ++i) {
        e[k++] = (cb_blend_entry){clips[i],
                                  cb_prng_range(r, -2.0f, 3.0f),
                                  cb_prng_below(r, 6) == 0 ? 0.0f : cb_prng_range(r, 0.0f, 1.0f),
                                  CB_BLEND_MODE_NORMAL,
                                  {NULL, 0}};
    }
    if (cb_prng_below(r, 3) != 0) {
        e[k++] = (cb_blend_entry){clips[3],
                                  cb_prng_range(r, -1.0f, 2.0f),
                                  cb_prng_range(r, 0.0f, 1.2f),
                                  CB_BLEND_MODE_OVERRIDE,
                                  {NULL, 0}};
    }
    if (cb_prng_below(r, 3) != 0) {
        e[k++] = (cb_blend_entry){clips[4],
                                  cb_prng_range(r, -1.0f, 2.0f),
                                  cb_prng_range(r, 0.0f, 1.5f),
                                  CB_BLEND_MODE_ADDITIVE,
                                  {NULL, 0}};
    }
    return k;
}

/* The entries e with each clip from[i] (i < PC_CLIPS) replaced by to[i], into out. */
static void swap_clips(const cb_blend_entry *e, size_t count, cb_clip *const *from,
                       cb_clip *const *to, cb_blend_entry *out)
{
    for (size_t k = 0; k < count; ++k) {
        out[k] = e[k];
        for (int i = 0; i < PC_CLIPS; ++i) {
            out[k].clip = e[k].clip == from[i] ? to[i] : out[k].clip;
        }
    }
}

static void track_joint(const dref_xform *want, const dref_xform *got, size_t j, cb_err_track *et,
                        cb_err_track *eq, cb_err_track *es)
{
    double dot = 0;
    for (int c = 0; c < 4; ++c) {
        dot += want->q[c] * got->q[c];
    }
    for (int c = 0; c < 3; ++c) {
        cb_err_track_add(et, got->t[c], want->t[c], j);
        cb_err_track_add(es, got->s[c], want->s[c], j);
    }
    for (int c = 0; c < 4; ++c) {
        cb_err_track_add(eq, got->q[c], (dot < 0 ? -1 : 1) * want->q[c], j);
    }
}

/* The blend job (SIMD and its scalar reference) and the sample job on compressed clips against
 * the blend contract evaluated in double on the keys decoded by the scalar stream decoder:
 * NORMAL (looping, clamped, key-reduced), OVERRIDE and ADDITIVE layers, rest fallback. What is
 * left is the float rounding of the blend arithmetic (the decoded keys are exact: the decoders
 * agree bit for bit): the bounds of tests/test_pose.c's uncompressed comparison. */
static void cclip_pose_jobs_match_double(void **state)
{
    (void)state;
    packed_scene p = shared_scene();
    const size_t n = cb_skeleton_joint_count(p.s), groups = cb_skeleton_group_count(p.s);
    cb_xform rest[128];
    assert_true(n <= 128);
    for (size_t j = 0; j < n; ++j) {
        rest[j] = cb_skeleton_rest_xform(p.s, j);
    }
    cb_xform_group *out = cb_test_pose_alloc(p.s, true);
    cb_prng r = cb_test_prng(__func__);
    for (int path = 0; path < 3; ++path) {
        static const char *const what[3][3] = {
            {"blend job translation", "blend job rotation", "blend job scale"},
            {"blend job ref translation", "blend job ref rotation", "blend job ref scale"},
            {"sample job translation", "sample job rotation", "sample job scale"}};
        cb_err_track et = cb_err_track_make(what[path][0]);
        cb_err_track eq = cb_err_track_make(what[path][1]);
        cb_err_track es = cb_err_track_make(what[path][2]);
        for (int round = 0; round < 200; ++round) {
            cb_blend_entry e[5];
            size_t count = packed_entries(&r, p.packed, e);
            dref_entry de[5];
            for (size_t k = 0; k < count; ++k) {
                int ci = 0;
                while (p.packed[ci] != e[k].clip) {
                    ++ci;
                }
                de[k] = (dref_entry){&p.ref[ci], e[k].time, e[k].weight, e[k].mode, NULL};
            }
            if (path == 2) {
                cb_pose_sample_job job = {e[0].clip, e[0].time, {out, groups}};
                assert_int_equal(cb_pose_sample_job_run(&job, NULL), CB_OK);
            } else {
                cb_pose_blend_job job = {p.s, {e, count}, 0.0f, {out, groups}};
                assert_int_equal(path == 0 ? cb_pose_blend_job_run(&job, NULL)
                                           : cb_pose_blend_job_run_ref(&job, NULL),
                                 CB_OK);
            }
            for (size_t j = 0; j < n; ++j) {
                dref_xform want;
                if (path == 2) {
                    want = dref_clip_sample(de[0].clip, de[0].time, j);
                    dref_quat_normalize(want.q);
                } else {
                    want = dref_blend_joint(de, count, rest, j, CB_BLEND_DEFAULT_THRESHOLD);
                }
                dref_xform got = dref_from_pose(out, j);
                track_joint(&want, &got, j, &et, &eq, &es);
            }
        }
        cb_err_track_check(&et, 3e-7);
        cb_err_track_check(&eq, 5e-7);
        cb_err_track_check(&es, 8e-7);
    }
    free(out);
}

/* The compressed path against the same clip decoded to frames at load: both are within the
 * compression bound of the source, so model-space joint positions agree within twice the bound
 * (each side within it; at a key-reduced clip's frames the two coincide, between them the
 * frames path interpolates the decoded frames, the compressed path the keys), measured in
 * double after local-to-model. */
static void cclip_pose_compressed_vs_raw(void **state)
{
    (void)state;
    packed_scene p = shared_scene();
    const size_t n = cb_skeleton_joint_count(p.s), groups = cb_skeleton_group_count(p.s);
    const int32_t *parents = cb_skeleton_parents(p.s);
    cb_xform_group *a = cb_test_pose_alloc(p.s, true), *b = cb_test_pose_alloc(p.s, true);
    dref_xform *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb);
    dref_mat *ma = malloc(n * sizeof *ma), *mb = malloc(n * sizeof *mb);
    cb_prng r = cb_test_prng(__func__);
    double bound = 0.0;
    for (int i = 0; i < PC_CLIPS; ++i) {
        bound = fmax(bound, cb_cclip_query_info(p.z[i]).max_error_m);
    }
    cb_err_track ep = cb_err_track_make("compressed vs decoded-at-load joint positions (m)");
    for (int round = 0; round < 300; ++round) {
        cb_blend_entry ea[5], eb[5];
        size_t count = packed_entries(&r, p.packed, ea);
        swap_clips(ea, count, p.packed, p.raw, eb);
        cb_pose_blend_job ja = {p.s, {ea, count}, 0.0f, {a, groups}};
        cb_pose_blend_job jb = {p.s, {eb, count}, 0.0f, {b, groups}};
        assert_int_equal(cb_pose_blend_job_run(&ja, NULL), CB_OK);
        assert_int_equal(cb_pose_blend_job_run(&jb, NULL), CB_OK);
        for (size_t j = 0; j < n; ++j) {
            la[j] = dref_from_pose(a, j), lb[j] = dref_from_pose(b, j);
        }
        dref_local_to_model(parents, n, la, ma);
        dref_local_to_model(parents, n, lb, mb);
        for (size_t j = 0; j < n; ++j) {
            double d2 = 0;
            for (int c = 0; c < 3; ++c) {
                d2 += (ma[j].m[3][c] - mb[j].m[3][c]) * (ma[j].m[3][c] - mb[j].m[3][c]);
            }
            cb_err_track_add(&ep, sqrt(d2), 0.0, j);
        }
    }
    cb_err_track_check(&ep, 2.0 * bound);
    free(a), free(b), free(la), free(lb), free(ma), free(mb);
}

/* An uncompressed clip whose frames are z's keys as cb_cclip_decode gives them (the scalar
 * reference's values, bit for bit: cclip_simd_matches_ref), for a clip without scale. */
static cb_clip *keys_as_frames(const cb_skeleton *s, const cb_cclip *z, bool loop)
{
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    const size_t keys = cb_cclip_key_count(z);
    cb_xform_group *pose = cb_test_pose_alloc(s, true);
    cb_xform *x = malloc(n * sizeof *x);
    float *frames = malloc(keys * n * 7 * sizeof *frames);
    for (size_t k = 0; k < keys; ++k) {
        assert_int_equal(cb_cclip_decode(z, (uint32_t)k, (cb_xform_group_span){pose, groups}),
                         CB_OK);
        assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){x, n}), CB_OK);
        for (size_t j = 0; j < n; ++j) {
            memcpy(&frames[(k * n + j) * 7], x[j].translation, 3 * sizeof(float));
            memcpy(&frames[(k * n + j) * 7 + 3], x[j].rotation, 4 * sizeof(float));
        }
    }
    cb_clip_frames_desc fd = {
        .name = "keys",
        .skeleton = s,
        .duration_s = 1.0f,
        .frame_count = (uint32_t)keys,
        .frames = {frames, keys * n * 7},
        .wrap = loop ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .additive = z->additive,
        .root_motion = CB_ROOT_MOTION_NONE,
    };
    cb_clip *c = NULL;
    cb_error err = {0};
    cb_result r = cb_clip_create_from_frames(&fd, &c, &err);
    CB_CHECK(r == CB_OK, "keys as frames: %s", err.message);
    free(pose), free(x), free(frames);
    return c;
}

/* The entries' times moved onto keys of their (compressed) clips: times t in [0, 1) where the
 * clip's key lookup (cb_cclip_locate, the same arithmetic as cb_clip_locate on a clip of as
 * many frames) gives a fraction of exactly 0. */
static int clip_index(const packed_scene *p, const cb_clip *c)
{
    int ci = 0;
    while (ci < PC_CLIPS && p->packed[ci] != c) {
        ++ci;
    }
    CB_CHECK(ci < PC_CLIPS, "not a compressed clip of the scene");
    return ci;
}

static void times_at_keys(cb_prng *r, const packed_scene *p, cb_blend_entry *e, size_t count)
{
    for (size_t k = 0; k < count; ++k) {
        const cb_cclip *z = p->z[clip_index(p, e[k].clip)];
        for (int tries = 0;; ++tries) {
            const uint32_t key = tries < 8 ? cb_prng_below(r, z->keys - 1) : 0;
            const float t = (float)key / z->keys_f;
            uint32_t i;
            float f;
            cb_cclip_locate(z, t, true, &i, &f);
            if (f == 0.0f && i == key) {
                e[k].time = t;
                break;
            }
        }
    }
}

/* The fused sampler decodes a compressed clip's two keys per group in registers and then
 * blends them exactly as it blends an uncompressed clip's two frames: so the blend job on
 * compressed clips gives the same bits as on uncompressed clips whose frames are the decoded
 * keys, whatever path each group takes in the decoder (cb_cclip_group_kind). The sample job
 * decodes a compressed clip's interpolated key (cb_cclip_sample_group_at), which rounds
 * differently from two frames lerped between keys (both against the double reference:
 * cclip_pose_jobs_match_double) and is the key itself at a key: there it gives the same bits.
 * Between keys it is held bit for bit to its own contract, computed in scalar from the keys
 * cb_cclip_decode gives (sample_by_keys), at a random time of a random clip each round. */
static void cclip_pose_jobs_match_decoded_keys(void **state)
{
    (void)state;
    packed_scene p = shared_scene();
    const size_t groups = cb_skeleton_group_count(p.s), bytes = cb_skeleton_pose_bytes(p.s);
    cb_clip *keys[PC_CLIPS];
    for (int i = 0; i < PC_CLIPS; ++i) {
        keys[i] = keys_as_frames(p.s, p.z[i], cb_clip_is_looping(p.packed[i]));
    }
    cb_xform_group *a = cb_test_pose_alloc(p.s, true), *b = cb_test_pose_alloc(p.s, true);
    const size_t n = cb_skeleton_joint_count(p.s);
    cb_xform *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    cb_prng r = cb_test_prng(__func__);
    for (int round = 0; round < 400; ++round) {
        cb_blend_entry ea[5], eb[5];
        size_t count = packed_entries(&r, p.packed, ea);
        swap_clips(ea, count, p.packed, keys, eb);
        cb_pose_blend_job ja = {p.s, {ea, count}, 0.0f, {a, groups}};
        cb_pose_blend_job jb = {p.s, {eb, count}, 0.0f, {b, groups}};
        assert_int_equal(cb_pose_blend_job_run(&ja, NULL), CB_OK);
        assert_int_equal(cb_pose_blend_job_run(&jb, NULL), CB_OK);
        CB_CHECK(memcmp(a, b, bytes) == 0, "blend job, round %d: compressed differs from its keys",
                 round);
        times_at_keys(&r, &p, ea, 1);
        cb_pose_sample_job sa = {ea[0].clip, ea[0].time, {a, groups}};
        cb_pose_sample_job sb = {keys[clip_index(&p, ea[0].clip)], ea[0].time, {b, groups}};
        assert_int_equal(cb_pose_sample_job_run(&sa, NULL), CB_OK);
        assert_int_equal(cb_pose_sample_job_run(&sb, NULL), CB_OK);
        CB_CHECK(memcmp(a, b, bytes) == 0, "sample job, round %d: compressed differs from its keys",
                 round);
        /* The clamped clip's end (t = 1, and past it): its last key, as the frames give it. */
        for (int ci = 0; ci < PC_CLIPS; ++ci) {
            if (!cb_clip_is_looping(p.packed[ci])) {
                const float t_end = round % 2 == 0 ? 1.0f : cb_prng_range(&r, 1.0f, 3.0f);
                cb_pose_sample_job ea_end = {p.packed[ci], t_end, {a, groups}};
                cb_pose_sample_job eb_end = {keys[ci], t_end, {b, groups}};
                assert_int_equal(cb_pose_sample_job_run(&ea_end, NULL), CB_OK);
                assert_int_equal(cb_pose_sample_job_run(&eb_end, NULL), CB_OK);
                CB_CHECK(memcmp(a, b, bytes) == 0,
                         "sample job, round %d, clamped clip %d at t %.9g: not its last key", round,
                         ci, (double)t_end);
            }
        }
        /* Between keys: the sample job against its contract from the decoded keys, bit for bit,
         * at a random time of a random clip (wrapped or clamped past its ends). */
        const int ci = (int)cb_prng_below(&r, PC_CLIPS);
        const bool looping = cb_clip_is_looping(p.packed[ci]);
        const float t = cb_prng_range(&r, -1.5f, 2.5f);
        cb_pose_sample_job sc = {p.packed[ci], t, {a, groups}};
        assert_int_equal(cb_pose_sample_job_run(&sc, NULL), CB_OK);
        assert_int_equal(cb_xform_unpack(a, groups, (cb_xform_span){got, n}), CB_OK);
        sample_by_keys(p.z[ci], t, looping, p.s, want);
        for (size_t j = 0; j < n; ++j) {
            CB_CHECK(same_xform(&got[j], &want[j]),
                     "sample job, round %d, clip %d at t %.9g, joint %zu: %a %a %a | %a %a %a %a | "
                     "%a %a %a, reference %a %a %a | %a %a %a %a | %a %a %a",
                     round, ci, (double)t, j, XF_ARGS(got[j]), XF_ARGS(want[j]));
        }
    }
    for (int i = 0; i < PC_CLIPS; ++i) {
        cb_clip_destroy(keys[i]);
    }
    free(a), free(b), free(got), free(want);
}

/* A compressed clip alone at weight 1 in the blend (the two keys, w (1 - f) and w f) against
 * the sample job (the interpolated key, u + f (v - u)): the same bits at every key's time, and
 * between keys both within float rounding of the contract evaluated in double on the decoded
 * keys (cb_cclip_decode; lerp and normalization exact). The bound, in units of 2^-24: a
 * translation or scale component rounds three times in either (the sample's difference,
 * product and sum, each within 2^-24 of at most 2 M, M = max |u|, |v|; the blend's 1 - f, two
 * products and a sum, within 2^-24 M each): 6 M. A rotation component the same 6 before the
 * normalization, divided by the lerp's length L (above 0.7 for successive keys, checked), and
 * the normalization's own seven roundings (four in the squared length, square root, division,
 * product): 6 / L + 7. crowdblend/pose.h states this exception to "weight 1 is the sample". */
static void cclip_blend_weight_one_vs_sample(void **state)
{
    (void)state;
    packed_scene p = shared_scene();
    const size_t n = cb_skeleton_joint_count(p.s), groups = cb_skeleton_group_count(p.s);
    const size_t bytes = cb_skeleton_pose_bytes(p.s);
    cb_xform_group *a = cb_test_pose_alloc(p.s, true), *b = cb_test_pose_alloc(p.s, true);
    cb_xform_group *key = cb_test_pose_alloc(p.s, true);
    cb_xform *got[2] = {malloc(n * sizeof(cb_xform)), malloc(n * sizeof(cb_xform))};
    cb_xform *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
    const double ulp = 0x1p-24;
    double worst = 0, apart = 0; /* the largest error in bound units; sample vs blend */
    size_t at_keys = 0, between = 0;
    cb_prng r = cb_test_prng(__func__);
    for (int ci = 0; ci < PC_CLIPS; ++ci) {
        if (cb_clip_is_additive(p.packed[ci])) {
            continue; /* an additive clip blends onto the pose, not alone */
        }
        const cb_cclip *z = p.z[ci];
        const bool looping = cb_clip_is_looping(p.packed[ci]);
        CB_CHECK(!cb_cclip_query_info(z).has_scale, "the bound assumes a clip without scale");
        for (int it = 0; it < 300; ++it) {
            /* Every third time on a key (its time, where the lookup gives f = 0), the rest
             * anywhere, past the ends too. */
            float t = cb_prng_range(&r, -1.5f, 2.5f);
            if (it % 3 == 0) {
                const uint32_t k = cb_prng_below(&r, z->keys - 1);
                t = (float)k / z->keys_f;
            }
            uint32_t i;
            float f;
            cb_cclip_locate(z, t, looping, &i, &f);
            cb_pose_sample_job sj = {p.packed[ci], t, {a, groups}};
            assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
            const cb_blend_entry e = {p.packed[ci], t, 1.0f, CB_BLEND_MODE_NORMAL, {NULL, 0}};
            cb_pose_blend_job bj = {p.s, {&e, 1}, 0.0f, {b, groups}};
            assert_int_equal(cb_pose_blend_job_run(&bj, NULL), CB_OK);
            if (f == 0.0f || f == 1.0f) { /* a key, or the clamped end: the last key */
                CB_CHECK(memcmp(a, b, bytes) == 0,
                         "clip %d at key %u (t %.9g): the weight-1 blend is not the sample", ci, i,
                         (double)t);
                ++at_keys;
                continue;
            }
            ++between;
            assert_int_equal(cb_cclip_decode(z, i, (cb_xform_group_span){key, groups}), CB_OK);
            assert_int_equal(cb_xform_unpack(key, groups, (cb_xform_span){u, n}), CB_OK);
            assert_int_equal(cb_cclip_decode(z, i + 1, (cb_xform_group_span){key, groups}), CB_OK);
            assert_int_equal(cb_xform_unpack(key, groups, (cb_xform_span){v, n}), CB_OK);
            assert_int_equal(cb_xform_unpack(a, groups, (cb_xform_span){got[0], n}), CB_OK);
            assert_int_equal(cb_xform_unpack(b, groups, (cb_xform_span){got[1], n}), CB_OK);
            for (size_t j = 0; j < n; ++j) {
                double q[4], len = 0;
                for (int k = 0; k < 4; ++k) {
                    q[k] = u[j].rotation[k] +
                           (double)f * (v[j].rotation[k] - (double)u[j].rotation[k]);
                    len += q[k] * q[k];
                }
                len = sqrt(len);
                CB_CHECK(len > 0.7, "clip %d keys %u, %u joint %zu: lerp length %g", ci, i, i + 1,
                         j, len);
                for (int w = 0; w < 2; ++w) {
                    const cb_xform *x = &got[w][j];
                    for (int k = 0; k < 3; ++k) {
                        const double m = fmax(fabs(u[j].translation[k]), fabs(v[j].translation[k]));
                        const double want =
                            u[j].translation[k] +
                            (double)f * ((double)v[j].translation[k] - u[j].translation[k]);
                        const double err = fabs(x->translation[k] - want) / (6 * m * ulp);
                        worst = fmax(worst, m > 0 ? err : 0);
                        CB_CHECK(fabs(x->translation[k] - want) <= 6 * m * ulp,
                                 "clip %d t %.9g joint %zu: %s translation %.9g, double %.9g", ci,
                                 (double)t, j, w ? "blend" : "sample", (double)x->translation[k],
                                 want);
                        CB_CHECK(x->scale[k] == 1.0f, "clip %d t %.9g joint %zu: scale %.9g", ci,
                                 (double)t, j, (double)x->scale[k]);
                    }
                    const double bound = (6 / len + 7) * ulp;
                    for (int k = 0; k < 4; ++k) {
                        const double err = fabs(x->rotation[k] - q[k] / len);
                        worst = fmax(worst, err / bound);
                        CB_CHECK(err <= bound,
                                 "clip %d t %.9g joint %zu: %s rotation %.9g, double %.9g", ci,
                                 (double)t, j, w ? "blend" : "sample", (double)x->rotation[k],
                                 q[k] / len);
                        if (w == 1) {
                            apart = fmax(
                                apart, fabs((double)got[1][j].rotation[k] - got[0][j].rotation[k]));
                        }
                    }
                }
            }
        }
    }
    CB_CHECK(at_keys > 100 && between > 100, "%zu times at keys, %zu between", at_keys, between);
    cb_test_note("weight-1 blend vs sample on compressed clips: %zu times at keys (bits equal), "
                 "%zu between (largest error %.2f of the bound; rotations apart by up to %.3g)",
                 at_keys, between, worst, apart);
    free(a), free(b), free(key), free(got[0]), free(got[1]), free(u), free(v);
}

/* Blends whose entries mix compressed clips with uncompressed ones (the keys of
 * keys_as_frames), with joint masks on some entries, and more entries than the blend locates
 * up front (its 16 spans; the rest per group), give the same bits as with the uncompressed
 * keys only: each entry takes its own form's path in the compressed instance of the loop. */
static void cclip_pose_jobs_mixed_forms_and_masks(void **state)
{
    (void)state;
    packed_scene p = shared_scene();
    const size_t n = cb_skeleton_joint_count(p.s), groups = cb_skeleton_group_count(p.s);
    const size_t bytes = cb_skeleton_pose_bytes(p.s);
    cb_clip *keys[PC_CLIPS];
    for (int i = 0; i < PC_CLIPS; ++i) {
        keys[i] = keys_as_frames(p.s, p.z[i], cb_clip_is_looping(p.packed[i]));
    }
    cb_prng r = cb_test_prng(__func__);
    enum { MASKS = 3, EXTRA = 14, MAX = 5 + EXTRA };
    float *masks = malloc(MASKS * n * sizeof *masks);
    for (size_t i = 0; i < MASKS * n; ++i) { /* zeros, ones and fractions */
        const uint32_t pick = cb_prng_below(&r, 3);
        masks[i] = pick == 0 ? 0.0f : pick == 1 ? 1.0f : cb_prng_range(&r, 0.0f, 1.0f);
    }
    cb_xform_group *a = cb_test_pose_alloc(p.s, true), *b = cb_test_pose_alloc(p.s, true);
    size_t mixed = 0;
    for (int round = 0; round < 300; ++round) {
        cb_blend_entry ea[MAX], eb[MAX];
        size_t count = packed_entries(&r, p.packed, ea);
        const size_t extra = round % 2 == 0 ? EXTRA : cb_prng_below(&r, 3);
        for (size_t k = 0; k < extra; ++k) { /* more NORMAL entries, after the layers */
            ea[count++] = (cb_blend_entry){p.packed[cb_prng_below(&r, 3)],
                                           cb_prng_range(&r, -2.0f, 3.0f),
                                           cb_prng_range(&r, 0.0f, 1.0f),
                                           CB_BLEND_MODE_NORMAL,
                                           {NULL, 0}};
        }
        for (size_t k = 0; k < count; ++k) {
            const uint32_t m = cb_prng_below(&r, MASKS + 1);
            ea[k].mask = m < MASKS ? (cb_float_cspan){masks + m * n, n} : (cb_float_cspan){NULL, 0};
        }
        swap_clips(ea, count, p.packed, keys, eb);
        cb_blend_entry em[MAX]; /* each entry in either form */
        bool any_packed = false, any_raw = false;
        for (size_t k = 0; k < count; ++k) {
            const bool packed = cb_prng_below(&r, 2) == 0;
            em[k] = packed ? ea[k] : eb[k];
            any_packed = any_packed || packed, any_raw = any_raw || !packed;
        }
        mixed += any_packed && any_raw;
        cb_pose_blend_job jm = {p.s, {em, count}, 0.0f, {a, groups}};
        cb_pose_blend_job jb = {p.s, {eb, count}, 0.0f, {b, groups}};
        assert_int_equal(cb_pose_blend_job_run(&jm, NULL), CB_OK);
        assert_int_equal(cb_pose_blend_job_run(&jb, NULL), CB_OK);
        CB_CHECK(memcmp(a, b, bytes) == 0,
                 "blend job, round %d (%zu entries): mixed forms differ from the keys", round,
                 count);
    }
    CB_CHECK(mixed > 100, "only %zu rounds mixed both forms", mixed);
    for (int i = 0; i < PC_CLIPS; ++i) {
        cb_clip_destroy(keys[i]);
    }
    free(a), free(b), free(masks);
}

/* A stored form passes its own loader with any finite fields, so a crafted one can decode to a
 * zero rotation; a clip kept compressed is refused then (the sampler would normalize zero), as
 * the frames decoded at load are by the frame checks. Here joint 5's rotation fields are zeroed
 * in the loaded form, and the component it rebuilds (if any) no longer rebuilt. */
static void cclip_packed_clip_refuses_bad_keys(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    size_t frames = 0;
    cb_xform *src = cb_test_clip_frames(cb_embedded_find_clip(set, "walk_f"), &frames);
    cb_cclip *z = compress(s, src, frames, false, 1e-4f);
    free(src);
    cb_clip *ok = clip_of(s, z, "walk_f", true, false);
    cb_clip_destroy(ok);
    const size_t j = 5, g = j / CB_SIMD_WIDTH, l = j % CB_SIMD_WIDTH;
    float *ranges = (float *)(uintptr_t)z->ranges;
    for (size_t k = 3; k < 7; ++k) {
        float *off = ranges + (g * z->components + k) * 2 * CB_SIMD_WIDTH;
        off[l] = 0.0f, off[CB_SIMD_WIDTH + l] = 0.0f;
        const cb_cclip_group *grp = &z->groups[g];
        if (grp->rebuilt & (1u << (k - 3))) { /* its row: w's alone, or one per component */
            size_t row = grp->rebuilt == 8 ? 0 : k - 3;
            ((float *)(uintptr_t)z->rebuild)[grp->rebuild_at + row * CB_SIMD_WIDTH + l] = 0.0f;
        }
        ((uint8_t *)(uintptr_t)z->joint_bits)[j * CB_CCLIP_COMPONENTS + k] = 0;
    }
    cb_clip_frames_desc fd = {.name = "walk_f",
                              .skeleton = s,
                              .duration_s = 1.0f,
                              .has_scale = true,
                              .root_motion = CB_ROOT_MOTION_NONE};
    cb_clip *c = NULL;
    cb_error err = {0};
    assert_int_equal(cb_cclip_clip_create(z, &fd, &c, &err), CB_ERR_DEGENERATE);
    assert_null(c);
    CB_CHECK(strstr(err.message, "key 0 joint 5") != NULL, "%s", err.message);
    cb_cclip_destroy(z);
    cb_embedded_destroy(set);
}

/* Whatever bound a clip is compressed to, its keys pass the loader's key check: the compressor
 * keeps each decoded rotation near unit length and in the hemisphere of the key before (a
 * review found Fox clips compressed at 3 and 10 cm, and Cesium Man at 30 cm, that the importer
 * wrote and every load then refused: "rotation of length 0.88"). */
static void cclip_loose_bounds_stay_loadable(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        double scale;
    } glbs[] = {{"Fox/Fox.glb", 0.01}, {"CesiumMan/CesiumMan.glb", 1.0}};
    const float bounds[] = {0.01f, 0.03f, 0.1f, 0.3f, 1.0f};
    for (size_t i = 0; i < sizeof glbs / sizeof glbs[0]; ++i) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CB_TEST_ASSET_DIR, glbs[i].file);
        cb_test_asset a;
        cb_error err = {0};
        CB_CHECK(cb_test_read_glb(path, glbs[i].scale, &a, &err) == CB_OK, "%s", err.message);
        for (size_t k = 0; k < a.clip_count; ++k) {
            for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; ++b) {
                cb_cclip *z = compress(a.skeleton, a.clips[k].frames, a.clips[k].frame_count, false,
                                       bounds[b]);
                cb_clip *c = clip_of(a.skeleton, z, a.clips[k].name, true, false);
                cb_test_note("%s %s at %g m: %zu bytes, loads", glbs[i].file, a.clips[k].name,
                             (double)bounds[b], cb_cclip_query_info(z).stream_bytes);
                cb_clip_destroy(c);
                cb_cclip_destroy(z);
            }
        }
        cb_test_asset_free(&a);
    }
}

/* A compressed clip's frames (cb_clip_read_frames) are its decoding at the source frames, the
 * same floats as the clip decoded at load holds; its memory is the compressed form's. */
static void cclip_packed_clip_frames(void **state)
{
    (void)state;
    packed_scene p = shared_scene();
    for (int i = 0; i < PC_CLIPS; ++i) {
        size_t floats = cb_clip_frame_count(p.raw[i]) * cb_clip_joint_count(p.raw[i]) *
                        cb_clip_frame_stride(p.raw[i]);
        assert_int_equal(cb_clip_frame_count(p.packed[i]), cb_clip_frame_count(p.raw[i]));
        assert_int_equal(cb_clip_frame_stride(p.packed[i]), cb_clip_frame_stride(p.raw[i]));
        float *fa = malloc(floats * sizeof *fa), *fb = malloc(floats * sizeof *fb);
        assert_int_equal(cb_clip_read_frames(p.packed[i], (cb_float_span){fa, floats}), CB_OK);
        assert_int_equal(cb_clip_read_frames(p.raw[i], (cb_float_span){fb, floats}), CB_OK);
        assert_memory_equal(fa, fb, floats * sizeof *fa);
        assert_true(cb_clip_bytes(p.packed[i]) < cb_clip_bytes(p.raw[i]));
        assert_true(cb_clip_bytes(p.packed[i]) >= cb_cclip_query_info(p.z[i]).bytes);
        free(fa), free(fb);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Stored form                                                                                */

typedef struct fixture {
    cb_embedded *set;
    const cb_skeleton *s;
    cb_cclip *clip;
    unsigned char *stream;
    size_t bytes;
} fixture;

static fixture fixture_make(void)
{
    fixture f = {0};
    assert_int_equal(cb_embedded_create(NULL, &f.set, NULL), CB_OK);
    f.s = cb_embedded_skeleton(f.set);
    size_t frames = 0;
    const cb_clip *run_b = cb_embedded_find_clip(f.set, "run_b");
    cb_xform *src = cb_test_clip_frames(run_b, &frames);
    /* With its root track, so that every truncation and corruption below covers it too. */
    float *root = malloc(frames * 4 * sizeof *root);
    assert_int_equal(cb_clip_read_root_track(run_b, (cb_float_span){root, frames * 4}), CB_OK);
    cb_cclip_desc d = {
        .skeleton = f.s,
        .frames = {src, frames * cb_skeleton_joint_count(f.s)},
        .frame_count = frames,
        .root_track = {root, frames * 4},
    };
    cb_error err = {0};
    CB_CHECK(cb_cclip_create(&d, &f.clip, &err) == CB_OK, "cb_cclip_create: %s", err.message);
    assert_true(cb_cclip_query_info(f.clip).root_track_bytes > 0);
    free(root);
    free(src);
    f.bytes = cb_cclip_stream_bytes(f.clip);
    f.stream = malloc(f.bytes);
    assert_int_equal(cb_cclip_serialize(f.clip, f.stream, f.bytes), CB_OK);
    return f;
}

static void fixture_free(fixture *f)
{
    free(f->stream);
    cb_cclip_destroy(f->clip);
    cb_embedded_destroy(f->set);
}

static cb_result load(const cb_skeleton *s, const void *bytes, size_t size, cb_cclip **out,
                      cb_error *err)
{
    cb_cclip_load_desc d = {.skeleton = s};
    return cb_cclip_load(bytes, size, &d, out, err);
}

static void cclip_stream_roundtrip(void **state)
{
    (void)state;
    fixture f = fixture_make();
    cb_cclip *again = NULL;
    assert_int_equal(load(f.s, f.stream, f.bytes, &again, NULL), CB_OK);
    unsigned char *copy = malloc(f.bytes);
    assert_int_equal(cb_cclip_serialize(again, copy, f.bytes), CB_OK);
    CB_CHECK(memcmp(copy, f.stream, f.bytes) == 0, "serialize(load(stream)) differs");
    cb_cclip_info a = cb_cclip_query_info(f.clip), b = cb_cclip_query_info(again);
    CB_CHECK(a.keys == b.keys && a.measured_error_m == b.measured_error_m &&
                 a.stream_bytes == b.stream_bytes && a.bytes == b.bytes,
             "loaded clip reports differently");
    assert_int_equal(cb_cclip_serialize(again, copy, f.bytes - 1), CB_ERR_SPAN_TOO_SHORT);
    free(copy);
    cb_cclip_destroy(again);
    fixture_free(&f);
}

static void expect_load_error(const cb_skeleton *s, const void *bytes, size_t size, cb_result want,
                              const char *what)
{
    cb_cclip *out = (cb_cclip *)(uintptr_t)0x1;
    cb_error err = {0};
    cb_result r = load(s, bytes, size, &out, &err);
    CB_CHECK(r == want, "%s: got %s, want %s (%s)", what, cb_result_str(r), cb_result_str(want),
             err.message);
    CB_CHECK(out == (cb_cclip *)(uintptr_t)0x1, "%s: out was written", what);
    CB_CHECK(err.code == want, "%s: err.code %d", what, (int)err.code);
}

/* Where the parts of a version 4 stored form's header start (its layout in
 * src/compress/cclip_impl.h): the three counts as LEB128 numbers from byte 9, then 20 bytes of
 * floats and the signature, then the joint map (5 bits per joint), then the descriptions. */
typedef struct v4_layout {
    size_t frames_at, keys_at, floats_at, map_at, desc_at;
} v4_layout;

static size_t varint_end(const unsigned char *b, size_t at)
{
    while (b[at] & 0x80u) {
        at++;
    }
    return at + 1;
}

static v4_layout v4_layout_of(const unsigned char *b, size_t joints)
{
    v4_layout l = {.frames_at = varint_end(b, 9)};
    l.keys_at = varint_end(b, l.frames_at);
    l.floats_at = varint_end(b, l.keys_at);
    l.map_at = l.floats_at + 20;
    l.desc_at = l.map_at + (5 * joints + 7) / 8;
    return l;
}

/* Where the fixture's root block starts. */
static size_t root_at_of(const fixture *f)
{
    return f->bytes - cb_cclip_query_info(f->clip).root_track_bytes;
}

/* Loads bytes that must be refused with CB_ERR_PARSE and a message containing `says`. */
static void expect_parse_error_saying(const cb_skeleton *s, const unsigned char *bytes, size_t size,
                                      const char *says, const char *what)
{
    cb_cclip *out = NULL;
    cb_error err = {0};
    cb_result r = load(s, bytes, size, &out, &err);
    CB_CHECK(r == CB_ERR_PARSE && strstr(err.message, says) != NULL, "%s: %s (%s)", what,
             cb_result_str(r), err.message);
    cb_cclip_destroy(out);
}

static void cclip_stream_errors(void **state)
{
    (void)state;
    fixture f = fixture_make();
    unsigned char *b = malloc(f.bytes + 1);
    /* Every truncation is refused, and read no byte beyond its end (ASan in the test build). */
    for (size_t len = 0; len < f.bytes; ++len) {
        unsigned char *exact = malloc(len > 0 ? len : 1);
        memcpy(exact, f.stream, len);
        cb_cclip *out = NULL;
        CB_CHECK(load(f.s, exact, len, &out, NULL) != CB_OK, "a %zu-byte prefix loaded", len);
        free(exact);
    }
    memcpy(b, f.stream, f.bytes);
    b[f.bytes] = 0;
    expect_load_error(f.s, b, f.bytes + 1, CB_ERR_PARSE, "a trailing byte");
    b[0] = 'X';
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "bad magic");
    memcpy(b, f.stream, f.bytes);
    assert_int_equal(b[4], CB_CCLIP_STREAM_VERSION);
    b[4] = 5;
    expect_load_error(f.s, b, f.bytes, CB_ERR_UNSUPPORTED, "version 5");
    b[4] = 3; /* version 4's short header read as version 3's 44 bytes */
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "version 4 read as version 3");
    b[4] = 1;
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "version 4 read as version 1");
    b[4] = 2;
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "version 4 read as version 2");
    memcpy(b, f.stream, f.bytes);
    b[6] &= (unsigned char)~CB_CCLIP_FLAG_ROOT;
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "root bytes without flag bit 1");
    memcpy(b, f.stream, f.bytes);
    b[6] = 0x80;
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "unknown flag");
    memcpy(b, f.stream, f.bytes);
    b[7] = 100;
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "translation exponent 100");
    const size_t n = cb_skeleton_joint_count(f.s);
    const v4_layout l = v4_layout_of(f.stream, n);
    memcpy(b, f.stream, f.bytes);
    memset(b + l.floats_at, 0xFF, 4);
    expect_load_error(f.s, b, f.bytes, CB_ERR_NOT_FINITE, "NaN bound");
    /* The key count: one key is refused (the fixture's count takes one byte). */
    assert_true(f.stream[l.keys_at] < 0x80 && f.stream[l.keys_at] >= 2);
    memcpy(b, f.stream, f.bytes);
    b[l.keys_at] = 1;
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "one key");
    /* A count not in its shortest form (the joint count with a zero byte after it): refused,
     * so that one clip has one stored form. */
    unsigned char *longer = malloc(f.bytes + 1);
    assert_true(f.stream[9] < 0x80);
    memcpy(longer, f.stream, 9);
    longer[9] = (unsigned char)(f.stream[9] | 0x80u);
    longer[10] = 0;
    memcpy(longer + 11, f.stream + 10, f.bytes - 10);
    expect_parse_error_saying(f.s, longer, f.bytes + 1, "header", "a count of two bytes");
    /* The joint map: rotation codes 6 and 7 (a rebuilt component 4 or 5) are refused. */
    for (unsigned code = 6; code <= 7; ++code) {
        memcpy(b, f.stream, f.bytes);
        b[l.map_at] = (unsigned char)((b[l.map_at] & ~0x0Eu) | code << 1);
        expect_parse_error_saying(f.s, b, f.bytes, "rebuilt component", "rotation code 6 or 7");
    }
    /* A component description: an integer of 7 bytes is refused, and one byte longer than its
     * shortest form too (the first description's integer sign-extended by a byte). */
    memcpy(b, f.stream, f.bytes);
    b[l.desc_at] |= 0xE0u;
    expect_parse_error_saying(f.s, b, f.bytes, "track", "a description's 7-byte integer");
    size_t desc = l.desc_at; /* the first description whose integer can take a byte more */
    while ((f.stream[desc] >> 5) >= ((f.stream[desc] & 31u) > 0 ? 2u : 4u)) {
        desc += 1 + (f.stream[desc] >> 5) + ((f.stream[desc] & 31u) > 0 ? 2 : 0);
        assert_true(desc < root_at_of(&f));
    }
    const unsigned width = f.stream[desc] & 31u, bytes = f.stream[desc] >> 5;
    const size_t int_end = desc + 1 + bytes;
    memcpy(longer, f.stream, int_end);
    longer[desc] = (unsigned char)(width | (bytes + 1) << 5);
    longer[int_end] = bytes > 0 && (f.stream[int_end - 1] & 0x80u) ? 0xFF : 0x00;
    memcpy(longer + int_end + 1, f.stream + int_end, f.bytes - int_end);
    expect_parse_error_saying(f.s, longer, f.bytes + 1, "shortest form",
                              "a description's integer one byte too long");
    free(longer);
    /* The root block (version 4: per component a width, then for a width above 0 a step
     * code; the keys). A 25-bit field, a step reaching beyond the largest value, a cut. */
    const size_t root_at = root_at_of(&f);
    memcpy(b, f.stream, f.bytes);
    b[root_at] = CB_CCLIP_MAX_BITS + 1;
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "a 25-bit root field");
    size_t animated = root_at;
    while (animated < root_at + 4 && f.stream[animated] == 0) {
        animated++; /* a width-0 component takes one byte */
    }
    assert_true(animated < root_at + 4 && f.stream[animated] <= CB_CCLIP_MAX_BITS);
    memcpy(b, f.stream, f.bytes);
    b[animated + 1] = b[animated + 2] = 0xFF; /* 2047 2^13 */
    expect_load_error(f.s, b, f.bytes, CB_ERR_PARSE, "a root step beyond the largest value");
    expect_load_error(f.s, f.stream, root_at + 1, CB_ERR_PARSE, "the root block cut short");
    memcpy(b, f.stream, f.bytes);
    b[f.bytes - 1] |= 0x80;
    cb_cclip *out = NULL;
    cb_result r = load(f.s, b, f.bytes, &out, NULL);
    /* The last byte may be all data (then any value loads) or end in padding (must be 0). */
    CB_CHECK(r == CB_OK || r == CB_ERR_PARSE, "padding: %s", cb_result_str(r));
    cb_cclip_destroy(out);
    /* Another skeleton. */
    cb_prng rng = cb_test_prng("cclip_stream_errors");
    cb_skeleton *other = cb_test_random_skeleton(&rng, 64, false, false);
    expect_load_error(other, f.stream, f.bytes, CB_ERR_MISMATCH, "another skeleton");
    cb_skeleton_destroy(other);
    /* Random corruption: loads or is refused, never crashes; what loads decodes. */
    const size_t groups = cb_skeleton_group_count(f.s);
    cb_xform_group *pose = cb_test_pose_alloc(f.s, false);
    cb_xform *ref = malloc(64 * sizeof *ref);
    for (int round = 0; round < 400; ++round) {
        memcpy(b, f.stream, f.bytes);
        for (int k = 0; k < 1 + round % 4; ++k) {
            b[cb_prng_below(&rng, (uint32_t)f.bytes)] ^=
                (unsigned char)(1u << cb_prng_below(&rng, 8));
        }
        out = NULL;
        if (load(f.s, b, f.bytes, &out, NULL) == CB_OK) {
            for (size_t k = 0; k < cb_cclip_key_count(out); ++k) {
                assert_int_equal(cb_cclip_decode(out, k, (cb_xform_group_span){pose, groups}),
                                 CB_OK);
                assert_int_equal(
                    cb_cclip_decode_stream_ref(f.s, b, f.bytes, k, (cb_xform_span){ref, 64}, NULL),
                    CB_OK);
            }
            cb_cclip_destroy(out);
        }
    }
    expect_load_error(f.s, NULL, 10, CB_ERR_NULL_ARGUMENT, "NULL bytes");
    cb_cclip_load_desc canary = {._end_canary = 1, .skeleton = f.s};
    out = NULL;
    assert_int_equal(cb_cclip_load(f.stream, f.bytes, &canary, &out, NULL), CB_ERR_CANARY);
    free(ref), free(pose), free(b);
    fixture_free(&f);
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters                                                                                 */

static void cclip_desc_defaults(void **state)
{
    (void)state;
    cb_cclip_desc d = cb_cclip_query_desc(NULL);
    assert_true(d.max_error_m == CB_CCLIP_DEFAULT_MAX_ERROR_M);
    assert_true(d.shell_distance_m == CB_CCLIP_DEFAULT_SHELL_M);
    assert_int_equal(d.keys, CB_CCLIP_KEYS_REDUCE);
    assert_false(d.additive);
    assert_null(d.skeleton);
    cb_cclip_desc set = {
        .max_error_m = 2e-3f, .shell_distance_m = 0.1f, .keys = CB_CCLIP_KEYS_SOURCE};
    d = cb_cclip_query_desc(&set);
    assert_true(d.max_error_m == 2e-3f && d.shell_distance_m == 0.1f);
    assert_int_equal(d.keys, CB_CCLIP_KEYS_SOURCE);
}

static void expect_create_error(const cb_cclip_desc *d, cb_result want, const char *needle)
{
    cb_cclip *out = (cb_cclip *)(uintptr_t)0x1;
    cb_error err = {0};
    cb_result r = cb_cclip_create(d, &out, &err);
    CB_CHECK(r == want, "want %s, got %s (%s)", cb_result_str(want), cb_result_str(r), err.message);
    CB_CHECK(out == (cb_cclip *)(uintptr_t)0x1, "out was written on failure");
    CB_CHECK(err.code == want, "err.code %d", (int)err.code);
    CB_CHECK(needle == NULL || strstr(err.message, needle) != NULL,
             "message \"%s\" does not name \"%s\"", err.message, needle);
}

static void cclip_bad_parameters(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    size_t frames = 0;
    cb_xform *src = cb_test_clip_frames(cb_embedded_find_clip(set, "walk_l"), &frames);
    const size_t n = cb_skeleton_joint_count(s);
    const cb_cclip_desc good = {.skeleton = s, .frames = {src, frames * n}, .frame_count = frames};
    cb_cclip_desc d;
    cb_cclip *out = NULL;
    assert_int_equal(cb_cclip_create(NULL, &out, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_cclip_create(&good, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    d = good, d._start_canary = 1;
    expect_create_error(&d, CB_ERR_CANARY, "canary");
    d = good, d._end_canary = 1;
    expect_create_error(&d, CB_ERR_CANARY, "canary");
    d = good, d.allocator.alloc_fn = cb_test_counting_alloc;
    expect_create_error(&d, CB_ERR_ALLOCATOR, NULL);
    d = good, d.skeleton = NULL;
    expect_create_error(&d, CB_ERR_NULL_ARGUMENT, "skeleton");
    d = good, d.frames.ptr = NULL;
    expect_create_error(&d, CB_ERR_NULL_ARGUMENT, "frames");
    d = good, d.frame_count = 1;
    expect_create_error(&d, CB_ERR_INVALID_ARGUMENT, "frame_count");
    d = good, d.frame_count = CB_CLIP_MAX_FRAMES + 1;
    expect_create_error(&d, CB_ERR_INVALID_ARGUMENT, "frame_count");
    d = good, d.frames.count = frames * n - 1;
    expect_create_error(&d, CB_ERR_SPAN_TOO_SHORT, "frames");
    d = good, d.max_error_m = -1e-4f;
    expect_create_error(&d, CB_ERR_INVALID_ARGUMENT, "max_error_m");
    d = good, d.max_error_m = NAN;
    expect_create_error(&d, CB_ERR_NOT_FINITE, "max_error_m");
    d = good, d.shell_distance_m = -0.03f;
    expect_create_error(&d, CB_ERR_INVALID_ARGUMENT, "shell_distance_m");
    d = good, d.shell_distance_m = INFINITY;
    expect_create_error(&d, CB_ERR_NOT_FINITE, "shell_distance_m");
    d = good, d.keys = _CB_CCLIP_KEYS_COUNT;
    expect_create_error(&d, CB_ERR_INVALID_ARGUMENT, "keys");
    /* A bound float arithmetic cannot reach. */
    d = good, d.max_error_m = 1e-12f;
    expect_create_error(&d, CB_ERR_INVALID_ARGUMENT, "cannot be met");
    /* A root track within the desc's range whose fields, at a huge bound, would reach past what
     * the loader takes: refused as a track that cannot be held, not as a damaged stream. (Stored
     * form version 4 has no root offsets: a field reaches step 2^bits, here 3 bits of a
     * 144 km step.) */
    float *track = calloc(frames * 4, sizeof *track);
    assert_non_null(track);
    track[4] = -2.4e5f, track[8] = 2.4e5f;
    d = good, d.root_track = (cb_float_cspan){track, frames * 4}, d.max_error_m = 1e6f;
    expect_create_error(&d, CB_ERR_INVALID_ARGUMENT, "root track");
    d.max_error_m = 1.0f; /* the same track at a bound 22-bit fields hold is taken */
    assert_int_equal(cb_cclip_create(&d, &out, NULL), CB_OK);
    cb_cclip_destroy(out);
    free(track);
    /* Bad values, named by frame and joint. */
    cb_xform saved = src[3 * n + 5];
    src[3 * n + 5].translation[1] = NAN;
    expect_create_error(&good, CB_ERR_NOT_FINITE, "frame 3 joint 5");
    src[3 * n + 5] = saved;
    saved = src[2 * n + 7];
    memset(src[2 * n + 7].rotation, 0, sizeof src[0].rotation);
    expect_create_error(&good, CB_ERR_DEGENERATE, "frame 2 joint 7");
    src[2 * n + 7] = saved;
    /* Allocation failure is reported, never a crash. */
    d = good, d.allocator = cb_test_failing_allocator();
    expect_create_error(&d, CB_ERR_OUT_OF_MEMORY, NULL);
    /* The minimal valid desc passes, and a counting allocator sees every byte returned. */
    cb_test_counter counter = {0};
    d = good, d.allocator = cb_test_counting_allocator(&counter);
    assert_int_equal(cb_cclip_create(&d, &out, NULL), CB_OK);
    cb_cclip_destroy(out);
    CB_CHECK(counter.live_bytes == 0, "%lld bytes leaked through the allocator",
             counter.live_bytes);
    /* Decoders refuse bad calls. */
    out = compress(s, src, frames, false, 1e-4f);
    cb_xform_group *pose = cb_test_pose_alloc(s, false);
    size_t groups = cb_skeleton_group_count(s);
    assert_int_equal(
        cb_cclip_decode(out, cb_cclip_key_count(out), (cb_xform_group_span){pose, groups}),
        CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_cclip_decode(out, 0, (cb_xform_group_span){pose, groups - 1}),
                     CB_ERR_SPAN_TOO_SHORT);
    assert_int_equal(
        cb_cclip_decode(out, 0,
                        (cb_xform_group_span){(cb_xform_group *)((char *)pose + 4), groups}),
        CB_ERR_MISALIGNED);
    assert_int_equal(cb_cclip_decode(NULL, 0, (cb_xform_group_span){pose, groups}),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_cclip_sample(out, 0.5f, true, (cb_xform_group_span){NULL, groups}),
                     CB_ERR_NULL_ARGUMENT);
    size_t bytes = cb_cclip_stream_bytes(out);
    unsigned char *stream = malloc(bytes);
    cb_cclip_serialize(out, stream, bytes);
    cb_xform one[64];
    assert_int_equal(
        cb_cclip_decode_stream_ref(s, stream, bytes, 0, (cb_xform_span){one, 63}, NULL),
        CB_ERR_SPAN_TOO_SHORT);
    assert_int_equal(
        cb_cclip_decode_stream_ref(s, stream, bytes, 1u << 20, (cb_xform_span){one, 64}, NULL),
        CB_ERR_INVALID_ARGUMENT);
    free(stream), free(pose);
    cb_cclip_destroy(out);
    cb_cclip_destroy(NULL);
    cb_cclip_info none = cb_cclip_query_info(NULL);
    assert_int_equal(none.joint_count, 0);
    free(src);
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cclip_desc_defaults),
        cmocka_unit_test(cclip_bad_parameters),
        cmocka_unit_test(cclip_embedded_within_bound),
        cmocka_unit_test(cclip_bounds_scale),
        cmocka_unit_test(cclip_random_within_bound),
        cmocka_unit_test(cclip_assets_within_bound),
        cmocka_unit_test(cclip_simd_matches_ref),
        cmocka_unit_test(cclip_sample_matches_keys),
        cmocka_unit_test(cclip_pose_jobs_match_double),
        cmocka_unit_test(cclip_pose_compressed_vs_raw),
        cmocka_unit_test(cclip_pose_jobs_match_decoded_keys),
        cmocka_unit_test(cclip_blend_weight_one_vs_sample),
        cmocka_unit_test(cclip_group_kinds_match_fields),
        cmocka_unit_test(cclip_pose_jobs_mixed_forms_and_masks),
        cmocka_unit_test(cclip_packed_clip_frames),
        cmocka_unit_test(cclip_packed_clip_refuses_bad_keys),
        cmocka_unit_test(cclip_loose_bounds_stay_loadable),
        cmocka_unit_test(cclip_stream_roundtrip),
        cmocka_unit_test(cclip_stream_errors),
        cmocka_unit_test(cclip_root_track_within_bound),
    };
    return CB_RUN_TESTS(tests);
}
