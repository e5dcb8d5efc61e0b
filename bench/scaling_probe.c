/* crowdblend-scaling-probe: what limits a crowd's scaling from 1 to 2 threads
 * (docs/performance.md, "W2's scaling").
 *
 *   crowdblend-scaling-probe CHARACTERS FRAMES [fixed]
 *
 * Runs the bench scene (W2's blend space with layers, or W1's three fixed clips with `fixed`)
 * twice, on a 1-thread and a 2-thread pool, frames alternating between the two (so a burst of
 * load hits both), through the public per-range entry point cb_crowd_update_range called from
 * the pool's parallel-for, the same split cb_crowd_update makes. Per frame it records when the
 * helper thread ran its first chunk, what share of the chunks it ran and how long the host step
 * before the frame took; then it runs the same pairs on a control of pure arithmetic. Prints the
 * medians: the paired speed-up, the helper's start and share, the host step, the control. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/scene.h"
#include "crowdblend/crowdblend.h"

enum { MAX_FRAMES = 4096 };

typedef struct probe {
    cb_crowd *crowd;
    cb_crowd_scratch *scratch[2];
    float dt;
    uint64_t t0, first[2];
    uint32_t chunks[2];
    double *sink; /* control */
} probe;

static void crowd_chunk(void *user, size_t begin, size_t end, uint32_t thread)
{
    probe *p = user;
    if (p->chunks[thread]++ == 0) {
        p->first[thread] = cb_now_ns() - p->t0;
    }
    uint32_t n = cb_crowd_count(p->crowd, 0), last = end < n ? (uint32_t)end : n;
    if (begin < last) {
        cb_crowd_update_range(p->crowd, p->scratch[thread], p->dt, 0, (uint32_t)begin,
                              last - (uint32_t)begin);
    }
}

/* The control: 1,000 dependent multiply-adds per index, no memory but one store. */
static void control_chunk(void *user, size_t begin, size_t end, uint32_t thread)
{
    probe *p = user;
    if (p->chunks[thread]++ == 0) {
        p->first[thread] = cb_now_ns() - p->t0;
    }
    for (size_t i = begin; i < end; ++i) {
        double a = 1.0 + 1e-9 * (double)i;
        for (int k = 0; k < 1000; ++k) {
            a = a * 0.9999999 + 1e-7;
        }
        p->sink[i] = a;
    }
}

typedef struct side {
    cb_scene *scene;
    cb_jobs *jobs;
    probe p;
} side;

static bool side_make(side *s, uint32_t chars, uint32_t threads, bool fixed)
{
    memset(s, 0, sizeof *s);
    cb_jobs_desc jd = {.thread_count = threads};
    cb_scene_desc sd = {
        .characters = chars, .threads = 1, .layers = !fixed, .fixed_three_clips = fixed, .seed = 7};
    if (cb_jobs_create(&jd, &s->jobs, NULL) != CB_OK || (s->scene = cb_scene_create(&sd)) == NULL) {
        return false;
    }
    s->p.crowd = cb_scene_crowd(s->scene);
    s->p.dt = 1.0f / 60.0f;
    s->p.sink = malloc((chars + 63) / 64 * 64 * sizeof(double)); /* padded batches */
    return s->p.sink != NULL && cb_crowd_scratch_create(s->p.crowd, &s->p.scratch[0]) == CB_OK &&
           cb_crowd_scratch_create(s->p.crowd, &s->p.scratch[1]) == CB_OK;
}

static void side_free(side *s)
{
    if (s->p.crowd != NULL) {
        cb_crowd_scratch_destroy(s->p.crowd, s->p.scratch[0]);
        cb_crowd_scratch_destroy(s->p.crowd, s->p.scratch[1]);
    }
    cb_scene_destroy(s->scene);
    cb_jobs_destroy(s->jobs);
    free(s->p.sink);
}

static double frame(side *s, uint32_t chars, bool control)
{
    memset(s->p.chunks, 0, sizeof s->p.chunks);
    s->p.first[1] = 0;
    s->p.t0 = cb_now_ns();
    cb_jobs_parallel_for(s->jobs, (chars + 63) / 64 * 64, 64, control ? control_chunk : crowd_chunk,
                         &s->p);
    return (double)(cb_now_ns() - s->p.t0);
}

static void pairs(side *one, side *two, uint32_t chars, int frames, bool control)
{
    static double t1[MAX_FRAMES], t2[MAX_FRAMES], ratio[MAX_FRAMES], start[MAX_FRAMES],
        share[MAX_FRAMES], host[MAX_FRAMES];
    for (int f = -3; f < frames; ++f) {
        uint64_t h0 = cb_now_ns();
        if (!control) {
            cb_scene_host_step(one->scene, one->p.dt);
            cb_scene_host_step(two->scene, two->p.dt);
        }
        double h = (double)(cb_now_ns() - h0) / 2.0;
        double a = frame(one, chars, control), b = frame(two, chars, control);
        if (f < 0) {
            continue;
        }
        t1[f] = a, t2[f] = b, ratio[f] = a / b, host[f] = h;
        uint32_t c0 = two->p.chunks[0], c1 = two->p.chunks[1];
        start[f] = c1 > 0 ? (double)two->p.first[1] : b;
        share[f] = (double)c1 / (double)(c0 + c1);
    }
    size_t n = (size_t)frames;
    double m1 = cb_median(t1, n), m2 = cb_median(t2, n), r = cb_median(ratio, n);
    double lo = ratio[0], hi = ratio[n - 1];
    printf("%-8s %7u chars: 1 thread %8.3f ms, 2 threads %8.3f ms; paired speed-up %.2fx "
           "(frames from %.2fx to %.2fx); helper: first chunk %.0f us after the start, %.2f of "
           "the chunks; host step %.0f us\n",
           control ? "control" : "crowd", chars, m1 / 1e6, m2 / 1e6, r, lo, hi,
           cb_median(start, n) / 1e3, cb_median(share, n), cb_median(host, n) / 1e3);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CHARACTERS FRAMES [fixed]\n", argv[0]);
        return 2;
    }
    uint32_t chars = (uint32_t)strtoul(argv[1], NULL, 10);
    int frames = atoi(argv[2]);
    bool fixed = argc > 3 && strcmp(argv[3], "fixed") == 0;
    if (chars < 1 || chars > 1000000 || frames < 1 || frames > MAX_FRAMES) {
        fprintf(stderr, "%s: 1..1000000 characters, 1..%d frames\n", argv[0], MAX_FRAMES);
        return 2;
    }
    side one, two;
    if (!side_make(&one, chars, 1, fixed) || !side_make(&two, chars, 2, fixed)) {
        fprintf(stderr, "%s: setup failed\n", argv[0]);
        return 1;
    }
    pairs(&one, &two, chars, frames, false);
    pairs(&one, &two, chars, frames, true);
    side_free(&one);
    side_free(&two);
    return 0;
}
