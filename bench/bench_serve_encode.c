/* The cost of encoding a frame for `crowdblend serve` (docs/performance.md), per character,
 * for each encoding: a crowd of the demo's wandering characters on the default graph is run
 * for a second, then its frame is encoded in rounds, the encodings interleaved within each
 * round so that a busy machine slows them alike; medians of the rounds. Run it under
 * `valgrind --tool=callgrind --toggle-collect=cb_frame_encode_character` for instruction
 * counts, which a loaded machine does not disturb.
 * Usage: bench_serve_encode [characters] [rounds] [encoding: f32, q16, pos16; default all] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/scene.h"
#include "serve/protocol.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 1000;
    int rounds = argc > 2 ? atoi(argv[2]) : 21;
    cb_frame_encoding only = CB_FRAME_ENCODING_COUNT;
    if (argc > 3 && cb_frame_encoding_from_name(argv[3], &only) != CB_OK) {
        fprintf(stderr, "unknown encoding '%s'\n", argv[3]);
        return 2;
    }
    if (n < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: bench_serve_encode [characters] [rounds <= 1000]\n");
        return 2;
    }
    cb_scene_desc sd = {.characters = n,
                        .threads = 1,
                        .layers = true,
                        .seed = 1,
                        .graph = "locomotion_upper_body_look_at"};
    cb_scene *scene = cb_scene_create(&sd);
    if (scene == NULL) {
        return 1;
    }
    cb_crowd *crowd = cb_scene_crowd(scene);
    for (int f = 0; f < 60; ++f) {
        cb_scene_host_step(scene, 1.0f / 60.0f);
        cb_crowd_update(crowd, 1.0f / 60.0f);
    }
    uint32_t joints = (uint32_t)cb_crowd_joint_count(crowd);
    float scale = cb_frame_position_scale(2.3f);
    uint8_t *buf = malloc(cb_frame_bytes(CB_FRAME_F32, n, joints));
    double *t[CB_FRAME_ENCODING_COUNT];
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
        t[e] = malloc(sizeof(double) * (size_t)rounds);
    }
    uint32_t clamped = 0;
    for (int r = 0; r < rounds; ++r) {
        for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
            if (only != CB_FRAME_ENCODING_COUNT && e != (int)only) {
                t[e][r] = 0.0;
                continue;
            }
            size_t rec = cb_frame_record_bytes(e, joints);
            double t0 = now_s();
            for (uint32_t i = 0; i < n; ++i) {
                float pos[3], yaw, rot[4] = {0, 0, 0, 1};
                cb_scene_root(scene, i, pos, &yaw);
                clamped += cb_frame_encode_character(e, scale, i + 1, pos, rot,
                                                     cb_crowd_matrices(crowd, 0, i), joints,
                                                     buf + 64 + i * rec);
            }
            t[e][r] = (now_s() - t0) / n * 1e9;
        }
    }
    printf("{\"characters\": %u, \"joints\": %u, \"rounds\": %d, \"ns_per_character\": {", n,
           joints, rounds);
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
        qsort(t[e], (size_t)rounds, sizeof(double), cmp);
        printf("%s\"%s\": %.1f", e ? ", " : "", cb_frame_encoding_name(e), t[e][rounds / 2]);
        free(t[e]);
    }
    printf("}, \"bytes_per_frame\": {\"f32\": %zu, \"q16\": %zu, \"pos16\": %zu}, "
           "\"clamped\": %u}\n",
           cb_frame_bytes(CB_FRAME_F32, n, joints), cb_frame_bytes(CB_FRAME_Q16, n, joints),
           cb_frame_bytes(CB_FRAME_POS16, n, joints), clamped);
    free(buf);
    cb_scene_destroy(scene);
    return 0;
}
