/* `crowdblend inspect FILE.cbpack [--json]`: a pack's skeleton, clips (duration, frames, rate,
 * bytes in the file and in memory, the error the importer measured, looping, root motion,
 * markers), masks and graphs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

static const char *const mode_names[] = {"default", "none", "xz", "xz_yaw", "xyz", "xyz_yaw"};

/* Clip i's frames (or compressed form) and root track as the pack stores them. */
static size_t file_bytes(const cb_pack *p, size_t i)
{
    const cb_clip *c = cb_pack_clip(p, i);
    const cb_cclip *z = cb_pack_compressed_clip(p, i);
    size_t b = z != NULL
                   ? 4 + (cb_cclip_stream_bytes(z) + 3) / 4 * 4
                   : cb_clip_frame_count(c) * cb_clip_joint_count(c) * cb_clip_frame_stride(c) * 4;
    /* The root track: raw floats after the frames, unless the stored form holds it. */
    bool raw_root = cb_clip_query_root_motion(c).mode != CB_ROOT_MOTION_NONE &&
                    cb_cclip_query_info(z).root_track_bytes == 0;
    return b + (raw_root ? cb_clip_frame_count(c) * 16 : 0);
}

/* The rest pose's extent along +Y in model space: the figure's height. */
static double rest_height(const cb_skeleton *s)
{
    size_t n = cb_skeleton_joint_count(s);
    cb_xform *model = malloc(n * sizeof *model);
    double lo = 0.0, hi = 0.0;
    cb_ltm_job job = {.skeleton = s, .local = cb_skeleton_rest_pose(s), .model_xforms = {model, n}};
    if (model != NULL && cb_ltm_job_run(&job, NULL) == CB_OK) {
        lo = hi = model[0].translation[1];
        /* Comparisons, not fmin/fmax: gcc 12 for aarch64 stops with an internal error
         * vectorizing this reduction (docs/architecture.md, aarch64). */
        for (size_t j = 1; j < n; ++j) {
            double y = model[j].translation[1];
            lo = y < lo ? y : lo;
            hi = y > hi ? y : hi;
        }
    }
    free(model);
    return hi - lo;
}

static void print_number_or_null(double v)
{
    if (v >= 0.0) {
        printf("%.9g", v);
    } else {
        printf("null");
    }
}

/* Clip i's compression: source_bytes (its frames as raw 32-bit keys, 40 bytes per joint and
 * frame, as cb_cclip_info.source_bytes) for every clip, the rest for compressed ones. */
static void compression_json(const cb_pack *p, size_t i)
{
    const cb_clip *c = cb_pack_clip(p, i);
    const cb_cclip *z = cb_pack_compressed_clip(p, i);
    cb_cclip_info ci = cb_cclip_query_info(z);
    printf(", \"compressed\": %s, \"source_bytes\": %zu", z != NULL ? "true" : "false",
           (size_t)cb_clip_frame_count(c) * cb_clip_joint_count(c) * 40);
    if (z != NULL) {
        printf(", \"compressed_keys\": %u, \"compression_error_m\": %.9g, "
               "\"compression_bound_m\": %.9g, \"compression_shell_m\": %.9g",
               ci.keys, (double)ci.measured_error_m, (double)ci.max_error_m,
               (double)ci.shell_distance_m);
    }
}

static void pack_json(const char *path, long size, double load_ms, const cb_pack *p)
{
    const cb_skeleton *s = cb_pack_skeleton(p);
    size_t n = cb_skeleton_joint_count(s);
    printf("{\"file\": ");
    cb_json_string(stdout, path);
    printf(", \"bytes\": %ld, \"load_ms\": %.3f, \"skeleton\": {\"joints\": %zu, \"names\": [",
           size, load_ms, n);
    for (size_t j = 0; j < n; ++j) {
        printf(j ? ", " : "");
        cb_json_string(stdout, cb_skeleton_joint_name(s, j));
    }
    printf("], \"parents\": [");
    for (size_t j = 0; j < n; ++j) {
        printf("%s%d", j ? ", " : "", (int)cb_skeleton_parents(s)[j]);
    }
    printf("], \"height_m\": %.9g, \"inverse_binds\": %s}, \"clips\": [", rest_height(s),
           cb_pack_inverse_binds(p).count ? "true" : "false");
    for (size_t i = 0; i < cb_pack_clip_count(p); ++i) {
        const cb_clip *c = cb_pack_clip(p, i);
        cb_pack_clip_info info = cb_pack_query_clip_info(p, i);
        cb_clip_root_motion rm = cb_clip_query_root_motion(c);
        printf("%s{\"name\": ", i ? ", " : "");
        cb_json_string(stdout, cb_clip_name(c));
        printf(", \"duration_s\": %.9g, \"frames\": %u, \"rate_hz\": %.9g, \"bytes\": %zu, "
               "\"runtime_bytes\": %zu, \"max_error_m\": ",
               (double)cb_clip_duration(c), cb_clip_frame_count(c), (double)cb_clip_sample_rate(c),
               file_bytes(p, i), cb_clip_bytes(c));
        print_number_or_null(info.max_error_m);
        printf(", \"error_bound_m\": ");
        print_number_or_null(info.error_bound_m);
        compression_json(p, i);
        printf(", \"looping\": %s, \"additive\": %s, \"root_motion\": \"%s\", "
               "\"root_speed_mps\": %.9g, \"markers\": [",
               cb_clip_is_looping(c) ? "true" : "false", cb_clip_is_additive(c) ? "true" : "false",
               mode_names[rm.mode], (double)rm.speed_mps);
        for (size_t k = 0; k < cb_clip_marker_count(c); ++k) {
            cb_clip_marker m;
            cb_clip_query_marker(c, k, &m);
            printf("%s{\"name\": ", k ? ", " : "");
            cb_json_string(stdout, m.name);
            printf(", \"time\": %.9g, \"time_s\": %.9g, \"event_only\": %s}", (double)m.time,
                   (double)m.time_s, m.event_only ? "true" : "false");
        }
        printf("]}");
    }
    printf("], \"masks\": [");
    for (size_t i = 0; i < cb_pack_mask_count(p); ++i) {
        printf(i ? ", " : "");
        cb_json_string(stdout, cb_pack_query_mask(p, i).name);
    }
    printf("], \"graphs\": [");
    for (size_t i = 0; i < cb_pack_graph_count(p); ++i) {
        printf(i ? ", " : "");
        cb_json_string(stdout, cb_pack_query_graph(p, i).name);
    }
    printf("]}\n");
}

/* The skeleton as an indented tree, one joint a line (depth capped at 30 levels). */
static void skeleton_text(const cb_skeleton *s)
{
    size_t n = cb_skeleton_joint_count(s);
    const int32_t *parents = cb_skeleton_parents(s);
    for (size_t j = 0; j < n; ++j) {
        int d = 0;
        for (int32_t q = parents[j]; q >= 0; q = parents[q]) {
            ++d;
        }
        printf("  %3zu  %*s%s\n", j, 2 * (d < 30 ? d : 30), "", cb_skeleton_joint_name(s, j));
    }
}

/* One line per clip: timing, sizes, the importer's errors, looping and root motion. */
static void clips_text(const cb_pack *p)
{
    printf("\nClips (stored as SoA groups of W = %zu joints in memory):\n\n", cb_simd_width());
    printf("  %-16s %9s %7s %9s %10s %10s %11s %11s %-6s %-8s %9s\n", "name", "duration", "frames",
           "rate", "file B", "memory B", "max error", "bound", "loop", "root", "speed");
    for (size_t i = 0; i < cb_pack_clip_count(p); ++i) {
        const cb_clip *c = cb_pack_clip(p, i);
        cb_pack_clip_info info = cb_pack_query_clip_info(p, i);
        cb_clip_root_motion rm = cb_clip_query_root_motion(c);
        char err_text[32] = "-", bound_text[32] = "-";
        if (info.max_error_m >= 0.0f) {
            snprintf(err_text, sizeof err_text, "%.3gmm", 1e3 * (double)info.max_error_m);
        }
        if (info.error_bound_m >= 0.0f) {
            snprintf(bound_text, sizeof bound_text, "%.3gmm", 1e3 * (double)info.error_bound_m);
        }
        printf("  %-16.16s %8.3fs %7u %7.1fHz %10zu %10zu %11s %11s %-6s %-8s %7.3fm/s\n",
               cb_clip_name(c), (double)cb_clip_duration(c), cb_clip_frame_count(c),
               (double)cb_clip_sample_rate(c), file_bytes(p, i), cb_clip_bytes(c), err_text,
               bound_text, cb_clip_is_looping(c) ? "loop" : "clamp", mode_names[rm.mode],
               (double)rm.speed_mps);
    }
}

/* The compressed clips' streams against their raw keys; nothing, not even the heading, when no
 * clip is compressed. */
static void compression_text(const cb_pack *p)
{
    bool first = true;
    for (size_t i = 0; i < cb_pack_clip_count(p); ++i) {
        cb_cclip_info ci = cb_cclip_query_info(cb_pack_compressed_clip(p, i));
        if (ci.keys > 0) {
            printf("%s  %s: %zu bytes compressed, %zu as raw keys (%.1fx), %u of %u keys, "
                   "shell error %.3g mm (bound %.3g mm at %.3g cm)\n",
                   !first ? ""
                          : "\nCompression (memory B: kept compressed, sampled by the pose "
                            "jobs):\n\n",
                   cb_clip_name(cb_pack_clip(p, i)), ci.stream_bytes, ci.source_bytes,
                   (double)ci.source_bytes / (double)ci.stream_bytes, ci.keys, ci.source_frames,
                   1e3 * (double)ci.measured_error_m, 1e3 * (double)ci.max_error_m,
                   1e2 * (double)ci.shell_distance_m);
            first = false;
        }
    }
}

/* Every clip's markers on one line each. */
static void markers_text(const cb_pack *p)
{
    printf("\nMarkers (normalized time; \"(event)\": an event only, not a sync point):\n\n");
    for (size_t i = 0; i < cb_pack_clip_count(p); ++i) {
        const cb_clip *c = cb_pack_clip(p, i);
        printf("  %-16.16s", cb_clip_name(c));
        for (size_t k = 0; k < cb_clip_marker_count(c); ++k) {
            cb_clip_marker m;
            cb_clip_query_marker(c, k, &m);
            printf(" %s@%.3f%s", m.name, (double)m.time, m.event_only ? " (event)" : "");
        }
        printf("%s\n", cb_clip_marker_count(c) ? "" : " none");
    }
}

static void pack_text(const char *path, long size, double load_ms, const cb_pack *p)
{
    const cb_skeleton *s = cb_pack_skeleton(p);
    size_t n = cb_skeleton_joint_count(s);
    /* The up axis is the importer's (converted); the facing is the asset's own, which the
     * crowd takes to be +Z whatever it is (an asset facing +X walks sideways). */
    printf("%s: %ld bytes, loaded in %.2f ms; skeleton of %zu joints%s (+Y up, metres; the "
           "crowd takes +Z as forward, and import keeps the asset's own facing)\n\n",
           path, size, load_ms, n,
           cb_pack_inverse_binds(p).count ? " with inverse bind matrices" : "");
    skeleton_text(s);
    clips_text(p);
    compression_text(p);
    markers_text(p);
    for (size_t i = 0; i < cb_pack_mask_count(p); ++i) {
        printf("%s  mask %s\n", i ? "" : "\n", cb_pack_query_mask(p, i).name);
    }
    for (size_t i = 0; i < cb_pack_graph_count(p); ++i) {
        cb_pack_graph g = cb_pack_query_graph(p, i);
        printf("%s  graph %s (%zu bytes of JSON)\n", i ? "" : "\n", g.name, g.length);
    }
}

int cb_inspect_pack(const char *path, bool json)
{
    cb_pack *p = NULL;
    cb_error err = {0};
    uint64_t t0 = cb_now_ns();
    cb_result r = cb_pack_load_file(path, NULL, &p, &err);
    double load_ms = (double)(cb_now_ns() - t0) * 1e-6;
    if (r != CB_OK) {
        fprintf(stderr, "crowdblend inspect: %s\n", err.message);
        return CB_EXIT_FAILURE;
    }
    long size = -1;
    FILE *f = fopen(path, "rb");
    if (f != NULL && fseek(f, 0, SEEK_END) == 0) {
        size = ftell(f);
    }
    if (f != NULL) {
        fclose(f);
    }
    if (json) {
        pack_json(path, size, load_ms, p);
    } else {
        pack_text(path, size, load_ms, p);
    }
    cb_pack_destroy(p);
    return CB_EXIT_OK;
}
