/* Animation benchmarks on the embedded 64-joint humanoid and its locomotion clips.
 *
 * Every benchmark animates C characters per iteration; each character has its own clips (drawn
 * from the 16 walk and run clips and idle), normalized time and weights, so clip data is read
 * from all over the set as in a crowd. Items are characters; "per_char" is ns per character.
 *   pose_fused<K>_{simd,ref}/C/64     fused sample + blend of K clips (scalar reference twin)
 *   pose_separate<K>_simd/C/64        the same result the way ozz-animation does it: K sample
 *                                     jobs into K poses, then a blend of the K poses
 *   ltm_joints_{simd,ref}/C/64        local-to-model, 4x4 matrices, SIMD over joints (the job)
 *   ltm_chars_simd/C/64               the same, SIMD over W characters sharing the skeleton,
 *                                     transposes in and out included
 *   frame3_{simd,ref}/C/64            the yardstick: fused blend of 3 clips + local-to-model
 *   frame3_separate_simd/C/64         the same with separate sampling and blending
 * Outputs: each character writes its own model matrices (as a host buffer would hold them);
 * local poses go to one scratch pose that stays in L1, as the crowd runtime will use it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/prng.h"
#include "bench_all.h"
#include "crowdblend/crowdblend.h"
#include "ltm/ltm_impl.h" /* cb_ltm_chars_run: the over-characters variant, measured here */
#include "shim.h"

enum { MAX_K = 4 };

typedef struct workload {
    cb_embedded *set;
    const cb_skeleton *skel;
    size_t chars, groups, joints, k;
    cb_blend_entry *entries; /* chars * k */
    cb_xform_group *pose;    /* one scratch pose */
    cb_xform_group *samples; /* k scratch poses for the separate path */
    cb_xform_group *locals;  /* chars poses (LTM input) */
    float *models;           /* chars * joints * 16 */
    void *scratch;           /* over-characters scratch */
} workload;

static void *aligned(size_t bytes)
{
    size_t a = 64;
    void *p = aligned_alloc(a, (bytes + a - 1) / a * a);
    if (p != NULL) {
        memset(p, 0, bytes);
    }
    return p;
}

static void workload_free(workload *w)
{
    cb_embedded_destroy(w->set);
    free(w->entries), free(w->pose), free(w->samples), free(w->locals), free(w->models);
    free(w->scratch);
}

static bool workload_make(workload *w, size_t chars, size_t k)
{
    memset(w, 0, sizeof *w);
    if (cb_embedded_create(NULL, &w->set, NULL) != CB_OK) {
        return false;
    }
    w->skel = cb_embedded_skeleton(w->set);
    w->chars = chars;
    w->k = k;
    w->groups = cb_skeleton_group_count(w->skel);
    w->joints = cb_skeleton_joint_count(w->skel);
    size_t pose_bytes = cb_skeleton_pose_bytes(w->skel);
    w->entries = calloc(chars * (k ? k : 1), sizeof *w->entries);
    w->pose = aligned(pose_bytes);
    w->samples = aligned(pose_bytes * MAX_K);
    w->locals = aligned(pose_bytes * chars);
    w->models = aligned(chars * w->joints * 16 * sizeof(float));
    w->scratch = aligned(cb_ltm_chars_scratch_bytes(w->skel));
    if (!w->entries || !w->pose || !w->samples || !w->locals || !w->models || !w->scratch) {
        workload_free(w);
        return false;
    }
    /* Clips 0..16: idle, 8 walks, 8 runs. Each character blends k distinct ones (a blend-space
     * neighbourhood in practice: weights normalized, one shared normalized time). */
    cb_prng r = cb_prng_seed(0xB1E7D + chars * 31 + k);
    for (size_t c = 0; c < chars; ++c) {
        float t = cb_prng_range(&r, 0.0f, 1.0f), sum = 0.0f;
        size_t used[MAX_K] = {0};
        for (size_t e = 0; e < k; ++e) {
            size_t clip;
            bool dup;
            do {
                clip = cb_prng_below(&r, 17);
                dup = false;
                for (size_t q = 0; q < e; ++q) {
                    dup = dup || used[q] == clip;
                }
            } while (dup);
            used[e] = clip;
            float wgt = cb_prng_range(&r, 0.2f, 1.0f);
            sum += wgt;
            w->entries[c * k + e] = (cb_blend_entry){
                cb_embedded_clip(w->set, clip), t, wgt, CB_BLEND_MODE_NORMAL, {NULL, 0}};
        }
        for (size_t e = 0; e < k; ++e) {
            w->entries[c * k + e].weight /= sum;
        }
        /* A local pose per character for the LTM-only benchmarks. */
        if (k > 0) {
            cb_pose_blend_job job = {
                w->skel,
                {&w->entries[c * k], k},
                0.0f,
                {(cb_xform_group *)((char *)w->locals + c * pose_bytes), w->groups}};
            cb_pose_blend_job_run(&job, NULL);
        }
    }
    return true;
}

static cb_xform_group *local_of(const workload *w, size_t c)
{
    return (cb_xform_group *)((char *)w->locals + c * cb_skeleton_pose_bytes(w->skel));
}

static void blend_fused(const workload *w, size_t c, cb_xform_group *out, bool ref)
{
    cb_pose_blend_job job = {w->skel, {&w->entries[c * w->k], w->k}, 0.0f, {out, w->groups}};
    if (ref) {
        cb_pose_blend_job_run_ref(&job, NULL);
    } else {
        cb_pose_blend_job_run(&job, NULL);
    }
}

/* ozz's way: sample each clip into its own pose, then blend the poses. */
static void blend_separate(const workload *w, size_t c, cb_xform_group *out)
{
    const cb_xform_group *poses[MAX_K];
    float weights[MAX_K];
    size_t pose_bytes = cb_skeleton_pose_bytes(w->skel);
    for (size_t e = 0; e < w->k; ++e) {
        const cb_blend_entry *en = &w->entries[c * w->k + e];
        cb_xform_group *dst = (cb_xform_group *)((char *)w->samples + e * pose_bytes);
        cb_pose_sample_job sj = {en->clip, en->time, {dst, w->groups}};
        cb_pose_sample_job_run(&sj, NULL);
        poses[e] = dst;
        weights[e] = en->weight;
    }
    cb_xform_blend_groups(poses, weights, w->k, w->groups, out);
}

static void ltm(const workload *w, const cb_xform_group *local, size_t c, bool ref)
{
    cb_ltm_job job = {.skeleton = w->skel,
                      .local = {local, w->groups},
                      .model = {w->models + c * w->joints * 16, w->joints * 16}};
    if (ref) {
        cb_ltm_job_run_ref(&job, NULL);
    } else {
        cb_ltm_job_run(&job, NULL);
    }
}

typedef enum kind {
    FUSED,
    FUSED_REF,
    SEPARATE,
    LTM_JOINTS,
    LTM_JOINTS_REF,
    LTM_CHARS,
    FRAME,
    FRAME_REF,
    FRAME_SEPARATE,
} kind;

static void run_kind(const workload *w, kind kd)
{
    size_t width = cb_simd_width();
    switch (kd) {
    case FUSED:
    case FUSED_REF:
        for (size_t c = 0; c < w->chars; ++c) {
            blend_fused(w, c, w->pose, kd == FUSED_REF);
            cb_bench_keep(w->pose);
        }
        break;
    case SEPARATE:
        for (size_t c = 0; c < w->chars; ++c) {
            blend_separate(w, c, w->pose);
            cb_bench_keep(w->pose);
        }
        break;
    case LTM_JOINTS:
    case LTM_JOINTS_REF:
        for (size_t c = 0; c < w->chars; ++c) {
            ltm(w, local_of(w, c), c, kd == LTM_JOINTS_REF);
        }
        break;
    case LTM_CHARS:
        for (size_t c = 0; c + width <= w->chars; c += width) {
            const cb_xform_group *locals[16];
            float *models[16];
            for (size_t l = 0; l < width; ++l) {
                locals[l] = local_of(w, c + l);
                models[l] = w->models + (c + l) * w->joints * 16;
            }
            cb_ltm_chars_run(w->skel, locals, models, w->scratch);
        }
        break;
    case FRAME:
    case FRAME_REF:
    case FRAME_SEPARATE:
        for (size_t c = 0; c < w->chars; ++c) {
            if (kd == FRAME_SEPARATE) {
                blend_separate(w, c, w->pose);
            } else {
                blend_fused(w, c, w->pose, kd == FRAME_REF);
            }
            ltm(w, w->pose, c, kd == FRAME_REF);
        }
        break;
    }
    cb_bench_keep(w->models);
}

/* user carries the kind and K: kind * 16 + K. */
static void bench(cb_bench_state *st, void *user)
{
    kind kd = (kind)((intptr_t)user / 16);
    size_t k = (size_t)((intptr_t)user % 16);
    size_t chars = (size_t)cb_bench_range(st, 0);
    workload w;
    if (!workload_make(&w, chars, k)) {
        cb_bench_skip_with_error(st, "out of memory");
        return;
    }
    if (kd == LTM_CHARS && chars % cb_simd_width() != 0) {
        cb_bench_skip_with_error(st, "characters must be a multiple of W");
        workload_free(&w);
        return;
    }
    run_kind(&w, kd); /* warm */
    while (cb_bench_keep_running(st)) {
        run_kind(&w, kd);
    }
    double items = (double)chars * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    cb_bench_set_counter(st, "per_char", items, CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    workload_free(&w);
}

static void reg(const char *name, kind kd, size_t k)
{
    cb_bench *b = cb_bench_register(name, bench, (void *)(intptr_t)(kd * 16 + (int)k));
    if (kd != LTM_CHARS) {
        cb_bench_args2(b, 1, 64);
    }
    cb_bench_args2(b, 1024, 64);
}

void cb_bench_register_anim(void)
{
    char name[64];
    for (size_t k = 1; k <= MAX_K; ++k) {
        snprintf(name, sizeof name, "pose_fused%zu_simd", k);
        reg(name, FUSED, k);
        snprintf(name, sizeof name, "pose_fused%zu_ref", k);
        reg(name, FUSED_REF, k);
        snprintf(name, sizeof name, "pose_separate%zu_simd", k);
        reg(name, SEPARATE, k);
    }
    reg("ltm_joints_simd", LTM_JOINTS, 3);
    reg("ltm_joints_ref", LTM_JOINTS_REF, 3);
    reg("ltm_chars_simd", LTM_CHARS, 3);
    reg("frame3_simd", FRAME, 3);
    reg("frame3_ref", FRAME_REF, 3);
    reg("frame3_separate_simd", FRAME_SEPARATE, 3);
}
