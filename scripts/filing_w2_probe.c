/* follow_probe's `w2` world (bench/follow_world.c: follow_world_w2 without follower, the host
 * writing the local velocity) written against the API of b730d52, the tree main held when the
 * current wave's issues were filed, so that issue 12's goal ("within 25 % of today's cost") can
 * be timed against the W2 of that day beside today's follow_probe (docs/performance.md,
 * session 16). The same 17 clips in the same order, the same layers, phases, agents' motion and
 * timing (the median of the frames' thread CPU time per character). It builds against that tree
 * only (that day's crowd made its blend space from cb_crowd_desc.blend), not as part of this one:
 *
 *   git worktree add /tmp/filing b730d52 && cd /tmp/filing
 *   meson setup build/w8 --buildtype=release -Disa=x86-64-v3 && ninja -C build/w8
 *   gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Ibuild/w8/include -Ibuild/w8 \
 *       -o filing_w2 PATH/TO/scripts/filing_w2_probe.c build/w8/src/libcrowdblend_internal.a \
 *       -lm -lpthread -lxxhash
 *   ./filing_w2 10000 30 120      (CHARACTERS FRAMES WARMUP; isa=native for W = 16)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "crowdblend/crowdblend.h"

static const char *const names[17] = {"idle",    "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b",
                                      "walk_br", "walk_r", "walk_fr", "run_f",  "run_fl",  "run_l",
                                      "run_bl",  "run_b",  "run_br",  "run_r",  "run_fr"};

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 4 || atoi(argv[1]) < 1 || atoi(argv[2]) < 1 || atoi(argv[3]) < 0) {
        fprintf(stderr, "usage: filing_w2 CHARACTERS FRAMES WARMUP\n");
        return 2;
    }
    uint32_t n = (uint32_t)atoi(argv[1]), frames = (uint32_t)atoi(argv[2]),
             warm = (uint32_t)atoi(argv[3]);
    cb_embedded *set;
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK)
        return 1;
    const cb_clip *clips[17];
    for (int k = 0; k < 17; ++k)
        clips[k] = cb_embedded_find_clip(set, names[k]);
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(set),
                        .capacity = n,
                        .blend = {.clips = clips, .clip_count = 17},
                        .thread_count = 1};
    cd.additive.clip = cb_embedded_find_clip(set, "lean_add");
    cd.upper_body.clip = cb_embedded_find_clip(set, "wave_upper");
    cd.upper_body.mask_joint = "spine_01";
    cb_crowd *crowd;
    cb_error err;
    if (cb_crowd_create(&cd, &crowd, &err) != CB_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        float phase = (float)((i * 2654435761u) % 1000u) / 1000.0f;
        if (cb_crowd_add(crowd, 0, phase, &ch) != CB_OK)
            return 1;
    }
    float *right =
        cb_crowd_param_column(crowd, 0, cb_crowd_param_index(crowd, CB_CROWD_PARAM_BLEND, 0));
    float *forward =
        cb_crowd_param_column(crowd, 0, cb_crowd_param_index(crowd, CB_CROWD_PARAM_BLEND, 1));
    float *vel = calloc(3 * (size_t)n, sizeof(float)), *pos = calloc(3 * (size_t)n, sizeof(float));
    double *t = malloc(frames * sizeof(double));
    const float dt = 1.0f / 60.0f;
    for (uint32_t f = 0; f < warm + frames; ++f) {
        for (uint32_t i = 0; i < n; ++i) { /* follow_world_move */
            float speed = 0.4f + 3.0f * (float)(i % 7) / 7.0f;
            float turn = 0.2f + 0.1f * (float)(i % 5);
            float a = turn * dt * (float)f + (float)i;
            vel[3 * i] = speed * sinf(a);
            vel[3 * i + 2] = speed * cosf(a);
            pos[3 * i] += vel[3 * i] * dt;
            pos[3 * i + 2] += vel[3 * i + 2] * dt;
        }
        for (uint32_t i = 0; i < n; ++i) { /* follow_world_host_velocity */
            right[i] = 0.0f;
            forward[i] = hypotf(vel[3 * i], vel[3 * i + 2]);
        }
        double t0 = cpu_ns();
        cb_crowd_update(crowd, dt);
        if (f >= warm)
            t[f - warm] = cpu_ns() - t0;
    }
    qsort(t, frames, sizeof *t, cmp);
    printf("{\"mode\": \"old_w2\", \"characters\": %u, \"ns_per_character\": %.1f, \"hash\": "
           "\"%016llx\"}\n",
           n, t[frames / 2] / n, (unsigned long long)cb_crowd_output_hash(crowd));
    return 0;
}
