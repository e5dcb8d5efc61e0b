/* crowdblend-cclip-report: the figures of docs/performance.md's "Compressed clips" section.
 *
 *   crowdblend-cclip-report [--assets DIR] [--samples N] [--no-timing] [--no-sizes]
 *   crowdblend-cclip-report --profile blend|sample raw|compressed [--passes N]
 *
 * 1. Per clip of the embedded set and of the test assets (tests/data/assets: Fox, CesiumMan,
 *    RiggedFigure, the CMU walk): the source as raw 32-bit keys (joints x source keys x 40
 *    bytes), today's uncompressed clip (resampled to 30 Hz, this build's W), the stored form,
 *    the loaded form, keys kept, the largest shell error and the compression time.
 * 2. The alternatives the compressor was measured against (cb_cclip_options), as totals.
 * 3. Sampling cost, compressed against uncompressed: the fused blend of 3 clips per character
 *    and single-clip sampling, samples of the two alternating (A/B, so load bursts hit both),
 *    medians and the ratio, for the 17-clip set (hot in L2) and 32 copies of it (544 clips).
 * --profile: only N passes (default 20) of one operation on one form of the 17-clip set, for
 *    instruction counts: valgrind --tool=callgrind --collect-atstart=no
 *    --toggle-collect=cb_bench_clip_set_blend (or _sample); Ir / (N x 1,024) per character. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asset_reader.h"
#include "bench_cclip_set.h"

#ifndef CB_REPORT_ASSET_DIR
#define CB_REPORT_ASSET_DIR "tests/data/assets"
#endif

static double now_ns(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------------------------------------ */
/* 1 and 2: sizes and errors                                                                  */

enum { ALTERNATIVES = 6 };
static const char *const alt_names[ALTERNATIVES] = {
    "chosen design (per-track search, key reduction, trim)",
    "keys at the source rate (no key reduction)",
    "one precision for every animated track",
    "no range reduction (fixed ranges)",
    "no trim pass",
    "every rotation component stored (no rebuilt component: stored form version 2's choice)",
};

typedef struct totals {
    size_t source, uncompressed, stream[ALTERNATIVES], loaded[ALTERNATIVES];
    double worst_error[ALTERNATIVES], seconds[ALTERNATIVES];
    size_t loaded_w[3];           /* the chosen design's loaded form at W = 4, 8, 16 */
    size_t root_raw, root_stored; /* root tracks: 16 bytes per frame raw, and in the stored form */
} totals;

/* Today's uncompressed clip of the same keys: tracks keyed at the source frames, resampled to
 * the default 30 Hz. */
static size_t uncompressed_bytes(const cb_skeleton *s, const cb_xform *frames, size_t count,
                                 double rate_hz, bool additive)
{
    const size_t n = cb_skeleton_joint_count(s);
    cb_clip_track *tracks = calloc(3 * n, sizeof *tracks);
    float *times = malloc(count * sizeof *times);
    float *values = malloc(count * n * 10 * sizeof *values);
    size_t bytes = 0;
    if (tracks != NULL && times != NULL && values != NULL) {
        float duration = (float)((double)(count - 1) / rate_hz);
        for (size_t f = 0; f < count; ++f) {
            times[f] = f + 1 == count ? duration : (float)((double)f / rate_hz);
        }
        for (size_t j = 0; j < n; ++j) {
            float *t = values + j * count * 10, *q = t + count * 3, *sc = q + count * 4;
            for (size_t f = 0; f < count; ++f) {
                const cb_xform *x = &frames[f * n + j];
                memcpy(t + f * 3, x->translation, 12);
                memcpy(q + f * 4, x->rotation, 16);
                memcpy(sc + f * 3, x->scale, 12);
            }
            tracks[3 * j] =
                (cb_clip_track){(uint32_t)j, NULL, CB_CHANNEL_TRANSLATION, count, times, t};
            tracks[3 * j + 1] =
                (cb_clip_track){(uint32_t)j, NULL, CB_CHANNEL_ROTATION, count, times, q};
            tracks[3 * j + 2] =
                (cb_clip_track){(uint32_t)j, NULL, CB_CHANNEL_SCALE, count, times, sc};
        }
        cb_clip_desc d = {.skeleton = s,
                          .duration_s = duration,
                          .tracks = tracks,
                          .track_count = 3 * n,
                          .root_motion = CB_ROOT_MOTION_NONE,
                          .additive = additive ? CB_ADDITIVE_REST_POSE : CB_ADDITIVE_NONE};
        cb_clip *c = NULL;
        if (cb_clip_create(&d, &c, NULL) == CB_OK) {
            bytes = cb_clip_bytes(c);
        }
        cb_clip_destroy(c);
    }
    free(tracks), free(times), free(values);
    return bytes;
}

/* root: the clip's root track (count * 4 floats), stored with it; NULL: none. */
static void report_clip(const char *asset, const char *name, const cb_skeleton *s,
                        const cb_xform *frames, size_t count, double rate_hz, bool additive,
                        const float *root, size_t uncompressed, totals *t)
{
    const size_t n = cb_skeleton_joint_count(s);
    cb_cclip_desc d = {.skeleton = s,
                       .frames = {frames, count * n},
                       .frame_count = count,
                       .additive = additive,
                       .root_track = {root, root != NULL ? count * 4 : 0}};
    cb_cclip_info chosen = {0};
    double chosen_ms = 0.0;
    for (int a = 0; a < ALTERNATIVES; ++a) {
        cb_cclip_options o = {0};
        d.keys = a == 1 ? CB_CCLIP_KEYS_SOURCE : CB_CCLIP_KEYS_REDUCE;
        o.uniform_precision = a == 2;
        o.no_range_reduction = a == 3;
        o.no_trim = a == 4;
        o.no_rebuilt = a == 5;
        cb_cclip *c = NULL;
        cb_cclip_compress_stats st = {0};
        cb_error err = {0};
        if (cb_cclip_create_ex(&d, &o, &c, &st, &err) != CB_OK) {
            printf("| %s | %s | failed: %s |\n", asset, name, err.message);
            return;
        }
        cb_cclip_info info = cb_cclip_query_info(c);
        t->stream[a] += info.stream_bytes;
        t->loaded[a] += info.bytes;
        t->seconds[a] += st.seconds;
        t->worst_error[a] =
            info.measured_error_m > t->worst_error[a] ? info.measured_error_m : t->worst_error[a];
        if (a == 0) {
            chosen = info;
            chosen_ms = 1e3 * st.seconds;
            for (int w = 0; w < 3; ++w) {
                t->loaded_w[w] += cb_cclip_loaded_bytes(c, (size_t)4 << w);
            }
        }
        cb_cclip_destroy(c);
    }
    t->source += chosen.source_bytes;
    t->uncompressed += uncompressed;
    t->root_raw += root != NULL ? count * 16 : 0;
    t->root_stored += chosen.root_track_bytes;
    printf("| %s | %s | %zu | %zu (%.0f Hz) | %zu | %zu | %zu | **%.1fx** | %zu (%.1fx) | %u | "
           "%.4f | %.0f |\n",
           asset, name, n, count, rate_hz, chosen.source_bytes, uncompressed, chosen.stream_bytes,
           (double)chosen.source_bytes / (double)chosen.stream_bytes, chosen.bytes,
           (double)chosen.source_bytes / (double)chosen.bytes, chosen.keys,
           1e3 * chosen.measured_error_m, chosen_ms);
    fflush(stdout);
}

static void report_asset(const char *label, const cb_test_asset *a, totals *t)
{
    for (size_t i = 0; i < a->clip_count; ++i) {
        const cb_test_asset_clip *c = &a->clips[i];
        size_t raw = uncompressed_bytes(a->skeleton, c->frames, c->frame_count, c->rate_hz, false);
        report_clip(label, c->name, a->skeleton, c->frames, c->frame_count, c->rate_hz, false, NULL,
                    raw, t);
    }
}

static void print_totals(const char *what, const totals *t)
{
    printf("\n%s: source %zu bytes, uncompressed clips %zu bytes\n\n", what, t->source,
           t->uncompressed);
    printf("| alternative | stored bytes | ratio | loaded bytes (W = %zu) | ratio | worst error "
           "(mm) | compression (s) |\n|---|---|---|---|---|---|---|\n",
           cb_simd_width());
    for (int a = 0; a < ALTERNATIVES; ++a) {
        printf("| %s | %zu | %.1fx | %zu | %.1fx | %.4f | %.2f |\n", alt_names[a], t->stream[a],
               (double)t->source / (double)t->stream[a], t->loaded[a],
               (double)t->source / (double)t->loaded[a], 1e3 * t->worst_error[a], t->seconds[a]);
    }
    if (t->root_raw > 0) {
        printf("\nRoot tracks (in the stored bytes above): %zu bytes raw (16 per frame), %zu "
               "stored (%.1fx)\n",
               t->root_raw, t->root_stored, (double)t->root_raw / (double)t->root_stored);
    }
    printf("\nLoaded form of the chosen design by SIMD width: W = 4: %zu bytes (%.1fx), W = 8: %zu "
           "(%.1fx), W = 16: %zu (%.1fx)\n",
           t->loaded_w[0], (double)t->source / (double)t->loaded_w[0], t->loaded_w[1],
           (double)t->source / (double)t->loaded_w[1], t->loaded_w[2],
           (double)t->source / (double)t->loaded_w[2]);
}

static void sizes(const char *dir)
{
    printf("| asset | clip | joints | source keys | raw 32-bit keys (bytes) | uncompressed "
           "clip, 30 Hz (bytes) | stored | ratio | loaded (ratio) | keys kept | max shell "
           "error (mm) | compression (ms) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    totals emb = {0}, real = {0};
    cb_embedded *set = NULL;
    if (cb_embedded_create(NULL, &set, NULL) == CB_OK) {
        const cb_skeleton *s = cb_embedded_skeleton(set);
        for (size_t i = 0; i < cb_embedded_clip_count(set); ++i) {
            const cb_clip *clip = cb_embedded_clip(set, i);
            size_t frames = 0;
            cb_xform *src = cb_test_clip_frames(clip, &frames);
            float *root = malloc(frames * 4 * sizeof *root);
            if (root != NULL &&
                cb_clip_read_root_track(clip, (cb_float_span){root, frames * 4}) != CB_OK) {
                free(root);
                root = NULL;
            }
            report_clip("embedded", cb_clip_name(clip), s, src, frames, cb_clip_sample_rate(clip),
                        cb_clip_is_additive(clip), root, cb_clip_bytes(clip), &emb);
            free(root);
            free(src);
        }
        cb_embedded_destroy(set);
    }
    static const struct {
        const char *file, *label;
        double scale;
    } glbs[] = {
        {"Fox/Fox.glb", "Fox (cm, x 0.01)", 0.01},
        {"CesiumMan/CesiumMan.glb", "CesiumMan", 1.0},
        {"RiggedFigure/RiggedFigure.glb", "RiggedFigure", 1.0},
    };
    char path[1024];
    for (size_t i = 0; i < sizeof glbs / sizeof glbs[0]; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, glbs[i].file);
        cb_test_asset a;
        cb_error err = {0};
        if (cb_test_read_glb(path, glbs[i].scale, &a, &err) != CB_OK) {
            printf("| %s | unreadable: %s |\n", glbs[i].label, err.message);
            continue;
        }
        report_asset(glbs[i].label, &a, &real);
        cb_test_asset_free(&a);
    }
    snprintf(path, sizeof path, "%s/CMU_walk_bvh/walk.bvh", dir);
    cb_test_asset a;
    cb_error err = {0};
    if (cb_test_read_bvh(path, 0.0254 / 0.45, 1, &a, &err) == CB_OK) {
        report_asset("CMU walk (BVH)", &a, &real);
        cb_test_asset_free(&a);
    } else {
        printf("| CMU walk | unreadable: %s |\n", err.message);
    }
    print_totals("Embedded set (19 clips)", &emb);
    print_totals("Test assets (6 clips)", &real);
}

/* ------------------------------------------------------------------------------------------ */
/* 3: sampling cost                                                                           */

static void ab(const char *what, cb_bench_clip_set *set, bool blend, int samples)
{
    enum { MAX_SAMPLES = 101 };
    double raw[MAX_SAMPLES], packed[MAX_SAMPLES], ratio[MAX_SAMPLES];
    samples = samples > MAX_SAMPLES ? MAX_SAMPLES : samples;
    /* Each sample is a whole pass over the characters; passes alternate. */
    for (int s = -2; s < samples; ++s) {
        double t0 = now_ns();
        blend ? cb_bench_clip_set_blend(set, false) : cb_bench_clip_set_sample(set, false);
        double t1 = now_ns();
        blend ? cb_bench_clip_set_blend(set, true) : cb_bench_clip_set_sample(set, true);
        double t2 = now_ns();
        if (s >= 0) {
            raw[s] = t1 - t0;
            packed[s] = t2 - t1;
            ratio[s] = (t2 - t1) / (t1 - t0);
        }
    }
    double items = (double)set->chars * (blend ? 3.0 : 1.0) * (double)set->joints;
    double r = median(raw, (size_t)samples), p = median(packed, (size_t)samples);
    double q = median(ratio, (size_t)samples);
    printf("| %s | %zu | %zu | %.1f MB | %.1f MB | %.3f | %.3f | %.2fx (pairs: %.2fx to %.2fx) |\n",
           what, set->clips, set->chars, (double)set->raw_bytes / 1e6,
           (double)set->packed_bytes / 1e6, r / items, p / items, q, ratio[0], ratio[samples - 1]);
    fflush(stdout);
}

static void timing(int samples)
{
    printf("\n| operation | clips | characters | clips, uncompressed | clips, compressed | "
           "uncompressed ns per joint and clip | compressed | compressed / uncompressed "
           "(median; pairs from - to) |\n|---|---|---|---|---|---|---|---|\n");
    static const struct {
        size_t copies, chars;
    } sets[] = {{1, 1024}, {32, 4096}};
    for (size_t i = 0; i < 2; ++i) {
        cb_bench_clip_set set;
        if (!cb_bench_clip_set_make(&set, sets[i].copies, sets[i].chars, 0xC11Fu)) {
            printf("clip set: failed\n");
            return;
        }
        ab("fused blend of 3 clips", &set, true, samples);
        ab("sample 1 clip", &set, false, samples);
        cb_bench_clip_set_free(&set);
    }
}

/* The --profile mode: passes of one operation on one form, nothing printed. */
static int profile(const char *op, const char *form, int passes)
{
    bool blend = strcmp(op, "blend") == 0, packed = strcmp(form, "compressed") == 0;
    if ((!blend && strcmp(op, "sample") != 0) || (!packed && strcmp(form, "raw") != 0)) {
        fprintf(stderr, "--profile: blend|sample raw|compressed\n");
        return 2;
    }
    cb_bench_clip_set set;
    if (!cb_bench_clip_set_make(&set, 1, 1024, 0xC11Fu)) {
        fprintf(stderr, "clip set: failed\n");
        return 1;
    }
    for (int p = 0; p < passes; ++p) {
        blend ? cb_bench_clip_set_blend(&set, packed) : cb_bench_clip_set_sample(&set, packed);
    }
    cb_bench_clip_set_free(&set);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = CB_REPORT_ASSET_DIR;
    int samples = 31;
    bool timed = true, sized = true;
    const char *prof_op = NULL, *prof_form = NULL;
    int passes = 20;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--assets") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            samples = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--no-timing") == 0) {
            timed = false;
        } else if (strcmp(argv[i], "--no-sizes") == 0) {
            sized = false;
        } else if (strcmp(argv[i], "--profile") == 0 && i + 2 < argc) {
            prof_op = argv[++i];
            prof_form = argv[++i];
        } else if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc) {
            passes = atoi(argv[++i]);
        } else {
            fprintf(stderr,
                    "usage: %s [--assets DIR] [--samples N] [--no-timing] [--no-sizes]\n"
                    "       %s --profile blend|sample raw|compressed [--passes N]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (prof_op != NULL) {
        return profile(prof_op, prof_form, passes < 1 ? 1 : passes);
    }
    samples = samples < 1 ? 1 : samples;
    cb_build_info b = cb_query_build_info();
    printf("crowdblend-cclip-report: isa %s, W = %u; bound 0.1 mm at a 3 cm shell\n\n", b.isa,
           b.simd_width);
    if (sized) {
        sizes(dir);
    }
    if (timed) {
        timing(samples);
    }
    return 0;
}
