/* `crowdblend inspect`: shows the embedded data set, the humanoid's joint hierarchy and each
 * clip with its duration, frames, memory and root-motion speed, as text or as JSON. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

/* Joint and clip names are plain identifiers, but escape anyway so the JSON stays valid for any
 * data a later importer might bring. */
static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; ++c) {
        if (*c == '"' || *c == '\\') {
            printf("\\%c", *c);
        } else if (*c < 0x20) {
            printf("\\u%04x", *c);
        } else {
            putchar(*c);
        }
    }
    putchar('"');
}

static void print_json(const cb_embedded *set)
{
    const cb_skeleton *s = cb_embedded_skeleton(set);
    size_t n = cb_skeleton_joint_count(s);
    const int32_t *parents = cb_skeleton_parents(s);
    printf("{\"skeleton\": {\"joints\": %zu, \"names\": [", n);
    for (size_t j = 0; j < n; ++j) {
        printf(j ? ", " : "");
        json_string(cb_skeleton_joint_name(s, j));
    }
    printf("], \"parents\": [");
    for (size_t j = 0; j < n; ++j) {
        printf("%s%d", j ? ", " : "", (int)parents[j]);
    }
    printf("]}, \"clips\": [");
    for (size_t i = 0; i < cb_embedded_clip_count(set); ++i) {
        const cb_clip *c = cb_embedded_clip(set, i);
        printf("%s{\"name\": ", i ? ", " : "");
        json_string(cb_clip_name(c));
        printf(", \"duration_s\": %.6g, \"frames\": %u, \"bytes\": %zu, "
               "\"root_speed_mps\": %.6g, \"looping\": %s}",
               (double)cb_clip_duration(c), cb_clip_frame_count(c), cb_clip_bytes(c),
               (double)cb_clip_query_root_motion(c).speed_mps,
               cb_clip_is_looping(c) ? "true" : "false");
    }
    printf("]}\n");
}

static int depth_of(const int32_t *parents, size_t j)
{
    int d = 0;
    for (int32_t p = parents[j]; p >= 0; p = parents[p]) {
        ++d;
    }
    return d;
}

/* Markers, one line per clip that has any: name@normalized time, "(event)" for event-only ones
 * (crowdblend/clip.h). */
static void print_markers(const cb_embedded *set)
{
    printf("\nMarkers (normalized time; sync markers align clips, events only are reported):\n\n");
    for (size_t i = 0; i < cb_embedded_clip_count(set); ++i) {
        const cb_clip *c = cb_embedded_clip(set, i);
        if (cb_clip_marker_count(c) == 0) {
            continue;
        }
        printf("  %-12s", cb_clip_name(c));
        for (size_t k = 0; k < cb_clip_marker_count(c); ++k) {
            cb_clip_marker m;
            cb_clip_query_marker(c, k, &m);
            printf(" %s@%.3f%s", m.name, (double)m.time, m.event_only ? " (event)" : "");
        }
        printf("\n");
    }
}

static void print_text(const cb_embedded *set)
{
    const cb_skeleton *s = cb_embedded_skeleton(set);
    size_t n = cb_skeleton_joint_count(s);
    const int32_t *parents = cb_skeleton_parents(s);
    printf("Embedded skeleton: %zu joints (+Y up, facing +Z, +X is the left; metres)\n\n", n);
    /* Parents come before children, so printing in index order with indentation by depth
     * draws the tree. */
    for (size_t j = 0; j < n; ++j) {
        cb_xform x = cb_skeleton_rest_xform(s, j);
        int d = depth_of(parents, j);
        printf("  %3zu  %*s%-*s  offset (%6.3f %6.3f %6.3f)\n", j, 2 * d, "",
               36 - 2 * d > 1 ? 36 - 2 * d : 1, cb_skeleton_joint_name(s, j),
               (double)x.translation[0], (double)x.translation[1], (double)x.translation[2]);
    }
    printf("\nClips (resampled to a uniform rate, stored as SoA joint groups, W = %zu):\n\n",
           cb_simd_width());
    printf("  %-12s %9s %7s %9s %9s %10s %10s %8s  %s\n", "name", "duration", "frames", "rate",
           "bytes", "B/joint-f", "speed m/s", "heading", "kind");
    for (size_t i = 0; i < cb_embedded_clip_count(set); ++i) {
        const cb_clip *c = cb_embedded_clip(set, i);
        cb_clip_root_motion rm = cb_clip_query_root_motion(c);
        /* Heading of the root velocity, degrees from forward towards the left. */
        double heading = rm.speed_mps > 1e-6f
                             ? 57.29577951308232 * atan2(-(double)rm.right_mps, rm.forward_mps)
                             : 0.0;
        char head[16] = "-";
        if (rm.speed_mps > 1e-6f) {
            snprintf(head, sizeof head, "%+.0f", heading);
        }
        printf("  %-12s %8.3fs %7u %7.1fHz %9zu %10zu %10.3f %8s  %s%s\n", cb_clip_name(c),
               (double)cb_clip_duration(c), cb_clip_frame_count(c), (double)cb_clip_sample_rate(c),
               cb_clip_bytes(c), cb_clip_bytes_per_joint_frame(c), (double)rm.speed_mps, head,
               cb_clip_is_looping(c) ? "loop" : "clamp",
               cb_clip_is_additive(c) ? ", additive" : "");
    }
    printf("\nbytes: the clip's whole memory; B/joint-f: bytes per joint and frame (28 without\n"
           "scale, 40 with); speed and heading: root motion over one cycle.\n");
    print_markers(set);
}

int cb_cmd_inspect(int argc, char **argv)
{
    bool help = false, json = false;
    const cb_opt opts[] = {
        {"json", CB_OPT_FLAG, &json, "print one JSON object"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    const char *pack_path[1] = {NULL};
    if (!cb_opts_parse("crowdblend inspect", argc, argv, 2, opts, pack_path, 1, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help("crowdblend inspect [FILE.cbpack] [--json]   (a pack, or the embedded "
                           "humanoid and clips)",
                           opts);
        return CB_EXIT_OK;
    }
    if (pack_path[0] != NULL) {
        return cb_inspect_pack(pack_path[0], json);
    }
    cb_embedded *set = NULL;
    cb_error err = {0};
    if (cb_embedded_create(NULL, &set, &err) != CB_OK) {
        fprintf(stderr, "crowdblend inspect: cannot build the embedded data: %s\n", err.message);
        return CB_EXIT_FAILURE;
    }
    if (json) {
        print_json(set);
    } else {
        print_text(set);
    }
    cb_embedded_destroy(set);
    return CB_EXIT_OK;
}
