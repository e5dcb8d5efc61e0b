/* follow_probe: the frames of one follow world (follow_world.h) in one process, for callgrind
 * instruction counts and for wall-clock medians that two builds can interleave (docs/
 * performance.md, "The follow features' cost, second step"):
 *
 *   follow_probe [--weights] CHARACTERS MODE FRAMES [WARMUP [NEAR_PERCENT]]
 *
 * MODE: w2 (the W2 blend-space crowd, the host writing the local velocity) or the feature bits
 * of follow_world_features (0 none, 1 warp, 2 lock, 4 turn limit, 8 orientation, 16 stride,
 * 32 the lock's pelvis drop).
 * WARMUP frames (default 120: two seconds, so that feet lock and release as in a running crowd)
 * run first, then FRAMES frames, each timed on the thread's CPU clock: the follower's update
 * and the crowd's, the agents' motion outside. One thread. Count the timed frames' instructions
 * with
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=step_measured follow_probe ...
 * and divide by CHARACTERS x FRAMES. NEAR_PERCENT (0 to 100, feature modes only) puts the graph's
 * post-process under level of detail (follow_world_features_lod): that share of the characters
 * at LOD 0, the rest above every step's max_lod (100 gives the bits of no NEAR_PERCENT). Prints one
 * JSON line: the median CPU ns per character of the timed frames, the shares of characters with the
 * lower body turned and a stride scale above 1 at the end, the crowd's output hash and, with
 * --weights, a hash of the clip weights (cb_crowd_weights, which the output hash does not cover;
 * 0 without), so that two builds can be compared bit for bit. --weights makes a feature world's
 * crowd keep its weights, which costs it 4-8 ns per character: time without it, as the w2 world,
 * which keeps none (docs/performance.md, session 18). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "follow_world.h"

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The follower's update and the crowd's: what a frame of the measured part costs. Not inlined,
 * so that callgrind can count the timed frames alone (--toggle-collect=step_measured). */
static void step(follow_world *w)
{
    if (w->follow != NULL) {
        cb_follow_update(w->follow, w->pos, w->vel, 0, 1.0f / 60.0f);
    }
    cb_crowd_update(w->crowd, 1.0f / 60.0f);
}

__attribute__((noinline)) static void step_measured(follow_world *w)
{
    step(w);
    __asm__ volatile("" ::: "memory"); /* keeps it a function of its own */
}

/* Frame f: the agents move, then the follower places them and the crowd animates (timed when
 * `measured`). */
static double frame(follow_world *w, uint32_t f, bool measured)
{
    follow_world_move(w, f);
    if (w->follow == NULL) {
        follow_world_host_velocity(w);
    }
    if (!measured) {
        step(w);
        return 0.0;
    }
    double t0 = cpu_ns();
    step_measured(w);
    return cpu_ns() - t0;
}

/* FNV-1a over the kept weights of the feature world's clips (0 when it keeps none). */
static unsigned long long weights_hash(const follow_world *w)
{
    size_t stride = 0;
    const float *kw = w->graph != NULL ? cb_crowd_weights(w->crowd, 0, &stride) : NULL;
    if (kw == NULL) {
        return 0;
    }
    unsigned long long h = 14695981039346656037ull;
    const unsigned char *p = (const unsigned char *)kw;
    size_t clips = cb_graph_clip_count(w->graph);
    for (size_t c = 0; c < clips; ++c) {
        for (size_t b = 0; b < w->n * sizeof(float); ++b) {
            h = (h ^ p[c * stride * sizeof(float) + b]) * 1099511628211ull;
        }
    }
    return h;
}

int main(int argc, char **argv)
{
    const bool keep = argc >= 2 && strcmp(argv[1], "--weights") == 0;
    if (keep) {
        --argc, ++argv; /* argv[0] is not read again */
    }
    uint32_t n = argc >= 4 ? (uint32_t)strtoul(argv[1], NULL, 10) : 0;
    bool w2 = argc >= 4 && strcmp(argv[2], "w2") == 0;
    int mode = argc >= 4 && !w2 ? atoi(argv[2]) : 0;
    int frames = argc >= 4 ? atoi(argv[3]) : 0;
    int warmup = argc >= 5 ? atoi(argv[4]) : 120;
    int near = argc >= 6 ? atoi(argv[5]) : -1;
    if (n == 0 || frames <= 0 || warmup < 0 || mode < 0 || mode > 63 || argc > 6 ||
        (argc >= 6 && (near < 0 || near > 100 || w2))) {
        fprintf(stderr, "usage: follow_probe [--weights] CHARACTERS w2|MODE FRAMES [WARMUP "
                        "[NEAR_PERCENT]]\n");
        return 2;
    }
    follow_world w;
    bool ok =
        w2 ? follow_world_w2(&w, n, false) : follow_world_features_lod(&w, n, mode, near, keep);
    double *ns = malloc((size_t)frames * sizeof *ns);
    if (!ok || ns == NULL) {
        fprintf(stderr, "follow_probe: setup failed\n");
        follow_world_destroy(&w);
        free(ns);
        return 1;
    }
    uint32_t f = 0;
    for (; f < (uint32_t)warmup; ++f) {
        frame(&w, f, false);
    }
    for (int k = 0; k < frames; ++k, ++f) {
        ns[k] = frame(&w, f, true) / (double)n;
    }
    qsort(ns, (size_t)frames, sizeof *ns, cmp_double);
    uint32_t warped = 0, strided = 0;
    const cb_follow_root *roots = w.follow != NULL ? cb_follow_roots(w.follow) : NULL;
    for (uint32_t i = 0; roots != NULL && i < n; ++i) {
        warped += roots[i].warp_rad != 0.0f;
        strided += roots[i].stride > 1.0f;
    }
    printf("{\"mode\": \"%s\", \"near_percent\": %d, \"characters\": %u, \"frames\": %d, "
           "\"warmup\": %d, "
           "\"ns_per_character\": %.1f, \"warped\": %.3f, \"strided\": %.3f, "
           "\"hash\": \"%016llx\", \"weights_hash\": \"%016llx\"}\n",
           argv[2], near, n, frames, warmup, ns[frames / 2], (double)warped / (double)n,
           (double)strided / (double)n, (unsigned long long)cb_crowd_output_hash(w.crowd),
           weights_hash(&w));
    free(ns);
    follow_world_destroy(&w);
    return 0;
}
