/* ik_many_probe: what two-bone IK costs per job, W jobs at a time in lanes against the scalar
 * job one at a time (issue 12; docs/performance.md, "Session 12: two-bone IK for W characters
 * at once"):
 *
 *   ik_many_probe MODE [CHARACTERS [FRAMES [ROUNDS]]]
 *
 * CHARACTERS (default 1000) embedded-humanoid poses, each a blend of 1-3 locomotion clips at a
 * random time; both legs of each get a target near where the foot is (moved 12 % of the way
 * towards the hip to 1 % away from it, then up to 2 cm on each axis, as a foot lock's small
 * corrections: most reachable, some in the soft zone; the probe prints how many), the
 * pole forward, the knee's hinge (1, 0, 0), weight 1, the default soften, in place. Each frame
 * restores the poses, then solves: per chunk of 8 characters, the left legs in one call of
 * cb_ik_two_bone_many_unchecked and the right legs in another (the graph's foot_lock pattern).
 *
 * MODE lanes: FRAMES frames through cb_ik_two_bone_many_unchecked, inside run_lanes();
 *      scalar: the same jobs through cb_ik_two_bone_unchecked one by one, inside run_scalar();
 *      time: ROUNDS (default 15) interleaved rounds of FRAMES frames of each, the median CPU
 *      ns per job of each and whether the two left the same bytes.
 * Count the instructions with
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=run_lanes ik_many_probe lanes
 * (run_scalar for scalar) and divide by 2 x CHARACTERS x FRAMES. Prints one JSON line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/prng.h"
#include "cli/cli.h"
#include "crowdblend/crowdblend.h"
#include "ik/ik_kernels.h"

enum { CHUNK = 8 };

typedef struct probe {
    cb_embedded *set;
    const cb_skeleton *s;
    size_t n, groups, bytes;
    cb_xform_group **pose, **start; /* the poses solved, and what each frame restores */
    cb_ik_two_bone_job *jobs;       /* per chunk: its left legs, then its right legs */
    cb_ik_two_bone_result *res;
    cb_result *codes;
} probe;

static uint32_t joint(const cb_skeleton *s, const char *name)
{
    uint32_t j = 0;
    if (cb_skeleton_find_joint(s, name, &j) != CB_OK) {
        fprintf(stderr, "no joint %s\n", name);
        exit(1);
    }
    return j;
}

static void probe_make(probe *p, size_t n)
{
    if (cb_embedded_create(NULL, &p->set, NULL) != CB_OK) {
        exit(1);
    }
    p->s = cb_embedded_skeleton(p->set);
    p->n = n;
    p->groups = cb_skeleton_group_count(p->s);
    p->bytes = cb_skeleton_pose_bytes(p->s);
    p->pose = calloc(n, sizeof *p->pose);
    p->start = calloc(n, sizeof *p->start);
    p->jobs = calloc(2 * n, sizeof *p->jobs);
    p->res = calloc(2 * n, sizeof *p->res);
    p->codes = calloc(2 * n, sizeof *p->codes);
    const uint32_t legs[2][3] = {
        {joint(p->s, "thigh_l"), joint(p->s, "calf_l"), joint(p->s, "foot_l")},
        {joint(p->s, "thigh_r"), joint(p->s, "calf_r"), joint(p->s, "foot_r")}};
    cb_prng r = cb_prng_seed(12);
    for (size_t i = 0; i < n; ++i) {
        p->pose[i] = aligned_alloc(cb_simd_group_align(), p->bytes);
        p->start[i] = aligned_alloc(cb_simd_group_align(), p->bytes);
        cb_blend_entry e[3];
        size_t k = 1 + cb_prng_below(&r, 3);
        float t = cb_prng_range(&r, 0.0f, 1.0f);
        for (size_t c = 0; c < k; ++c) {
            e[c] = (cb_blend_entry){cb_embedded_clip(p->set, cb_prng_below(&r, 17)),
                                    t,
                                    cb_prng_range(&r, 0.2f, 1.0f),
                                    CB_BLEND_MODE_NORMAL,
                                    {NULL, 0}};
        }
        cb_pose_blend_job b = {p->s, {e, k}, 0.0f, {p->start[i], p->groups}};
        if (cb_pose_blend_job_run(&b, NULL) != CB_OK) {
            exit(1);
        }
    }
    /* Jobs in chunk order: chunk c's left legs, then its right legs. */
    size_t at = 0;
    for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
        size_t c1 = c0 + CHUNK < n ? c0 + CHUNK : n;
        for (int leg = 0; leg < 2; ++leg) {
            for (size_t i = c0; i < c1; ++i, ++at) {
                cb_ik_two_bone_job *job = &p->jobs[at];
                *job = (cb_ik_two_bone_job){.skeleton = p->s,
                                            .pose = {p->pose[i], p->groups},
                                            .out = {p->pose[i], p->groups},
                                            .start_joint = legs[leg][0],
                                            .mid_joint = legs[leg][1],
                                            .end_joint = legs[leg][2],
                                            .pole = {0.0f, 0.0f, 1.0f},
                                            .mid_axis = {1.0f, 0.0f, 0.0f},
                                            .weight = 1.0f,
                                            .result = &p->res[at]};
                float hip[3], foot[3];
                cb_ik_joint_position(p->s, p->start[i], legs[leg][0], hip);
                cb_ik_joint_position(p->s, p->start[i], legs[leg][2], foot);
                float toward = cb_prng_range(&r, 0.88f, 1.01f);
                for (int k = 0; k < 3; ++k) {
                    job->target[k] =
                        hip[k] + (foot[k] - hip[k]) * toward + cb_prng_range(&r, -0.02f, 0.02f);
                }
            }
        }
    }
}

static void restore(probe *p)
{
    for (size_t i = 0; i < p->n; ++i) {
        memcpy(p->pose[i], p->start[i], p->bytes);
    }
}

/* One frame's solves, each chunk's legs a call: what the graph's foot_lock hands over. */
__attribute__((noinline)) static void run_lanes(probe *p)
{
    for (size_t c0 = 0; c0 < p->n; c0 += CHUNK) {
        size_t m = c0 + CHUNK < p->n ? CHUNK : p->n - c0;
        cb_ik_two_bone_many_unchecked(&p->jobs[2 * c0], m, &p->codes[2 * c0]);
        cb_ik_two_bone_many_unchecked(&p->jobs[2 * c0 + m], m, &p->codes[2 * c0 + m]);
    }
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void run_scalar(probe *p)
{
    for (size_t j = 0; j < 2 * p->n; ++j) {
        p->codes[j] = cb_ik_two_bone_unchecked(&p->jobs[j], NULL);
    }
    __asm__ volatile("" ::: "memory");
}

/* FNV-1a over the poses and the results. */
static unsigned long long state_hash(const probe *p)
{
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < p->n; ++i) {
        const unsigned char *b = (const unsigned char *)p->pose[i];
        for (size_t k = 0; k < p->bytes; ++k) {
            h = (h ^ b[k]) * 1099511628211ull;
        }
    }
    for (size_t j = 0; j < 2 * p->n; ++j) {
        const float *q = p->res[j].start_correction;
        const unsigned char *b = (const unsigned char *)q;
        for (size_t k = 0; k < 8 * sizeof(float); ++k) { /* both corrections */
            h = (h ^ b[k]) * 1099511628211ull;
        }
        h = (h ^ (unsigned)p->res[j].reached ^ ((unsigned)p->codes[j] << 1)) * 1099511628211ull;
    }
    return h;
}

/* Frames of one mode, timed as a whole (ns). */
static double frames(probe *p, bool lanes, size_t count)
{
    double total = 0.0;
    for (size_t f = 0; f < count; ++f) {
        restore(p);
        uint64_t t0 = cb_thread_cpu_ns();
        if (lanes) {
            run_lanes(p);
        } else {
            run_scalar(p);
        }
        total += (double)(cb_thread_cpu_ns() - t0);
    }
    return total;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ik_many_probe lanes|scalar|time [CHARACTERS [FRAMES [ROUNDS]]]\n");
        return 2;
    }
    const char *mode = argv[1];
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
    size_t nf = argc > 3 ? strtoul(argv[3], NULL, 10) : 10;
    size_t rounds = argc > 4 ? strtoul(argv[4], NULL, 10) : 15;
    if (n == 0 || nf == 0 || rounds == 0 || rounds > 1000) {
        return 2;
    }
    probe p = {0};
    probe_make(&p, n);
    const double jobs = 2.0 * (double)n * (double)nf;
    if (strcmp(mode, "time") == 0) {
        double tl[1000], ts[1000];
        unsigned long long hl = 0, hs = 0;
        for (size_t r = 0; r < rounds; ++r) {
            tl[r] = frames(&p, true, nf) / jobs;
            hl = state_hash(&p);
            ts[r] = frames(&p, false, nf) / jobs;
            hs = state_hash(&p);
        }
        double ml = cb_median(tl, rounds), ms = cb_median(ts, rounds);
        printf("{\"w\": %d, \"jobs_per_round\": %.0f, \"lanes_ns_per_job\": %.1f, "
               "\"scalar_ns_per_job\": %.1f, \"ratio\": %.3f, \"same_bytes\": %s}\n",
               (int)cb_simd_width(), jobs, ml, ms, ml / ms, hl == hs ? "true" : "false");
    } else {
        bool lanes = strcmp(mode, "lanes") == 0;
        if (!lanes && strcmp(mode, "scalar") != 0) {
            return 2;
        }
        frames(&p, lanes, nf);
        size_t reached = 0, refused = 0;
        for (size_t j = 0; j < 2 * n; ++j) {
            reached += p.res[j].reached;
            refused += p.codes[j] != CB_OK;
        }
        printf("{\"w\": %d, \"mode\": \"%s\", \"jobs\": %.0f, \"reached\": %zu, \"not_reached\": "
               "%zu, \"refused\": %zu, \"hash\": \"%016llx\"}\n",
               (int)cb_simd_width(), mode, jobs, reached, 2 * n - reached - refused, refused,
               state_hash(&p));
    }
    for (size_t i = 0; i < n; ++i) {
        free(p.pose[i]), free(p.start[i]);
    }
    free(p.pose), free(p.start), free(p.jobs), free(p.res), free(p.codes);
    cb_embedded_destroy(p.set);
    return 0;
}
