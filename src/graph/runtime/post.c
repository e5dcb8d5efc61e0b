/* Stage 5: the post-process. The IK steps, in order, on each character's local pose in place
 * (crowdblend/ik.h), each computing its chain's model space from the pose, so a step sees the
 * corrections of the ones before it (a look-at over the spine, then a hand on the arm below).
 * A chunk of characters (batch.c) runs step by step: each step over the chunk's characters,
 * then the next. Within a character the steps keep their order, and a step on one character
 * reads and writes only that character's pose, state and outputs (the stats are sums), so the
 * bits are those of running each character's steps alone; a step can then hand the chunk's
 * chains to one kernel call (the foot lock's legs: foot_lock.c; the stride warp's legs:
 * run_stride).
 * The steps' jobs were validated when the graph was built (builder.c); per frame the kernels
 * check only what the frame brings. A step of weight 0 is skipped; one the kernel refuses (a
 * target beyond CB_IK_MAX_COORDINATE, a non-finite pose) leaves the pose as it is and is
 * counted. An orientation warp is a step too (its "target" is the angle parameter; the chunk's
 * warps go to one kernel call, as the foot lock's legs do), and so is
 * a stride warp (target: the scale and the direction's two parameters), and a foot lock
 * (foot_lock.c: its targets are its own state). Level of detail: a step whose max_lod is
 * below the character's LOD (the graph's LOD parameter) runs as at weight 0. */
#include <math.h>

#include "graph/runtime/runtime_impl.h"
#include "ik/ik_kernels.h"

/* A parameter as a finite float, 0 otherwise. */
static inline float param_or_zero(const pose_ctx *x, uint32_t p)
{
    float v = SR(x->s, params, p, x->i);
    return isfinite(v) ? v : 0.0f;
}

/* The step's weight for the character x points at: its parameter (1 without one) up to 1, and
 * as at weight 0 above the step's LOD (one rule). */
static float step_weight(const pose_ctx *x, const gik *ik)
{
    const cb_graph *g = x->g;
    /* The character's LOD: NaN, infinite (0 by now) or negative is full detail, as 0 is. */
    const float lod = g->lod_param == GNONE ? 0.0f : param_or_zero(x, g->lod_param);
    float w = ik->weight == GNONE ? 1.0f : param_or_zero(x, ik->weight);
    w = w < 1.0f ? w : 1.0f;
    return lod > ik->max_lod ? 0.0f : w;
}

size_t cb_graph_post_bytes(const cb_graph *g, uint32_t chunk)
{
    size_t bytes = 0;
    for (uint32_t k = 0; k < g->ik_count; ++k) {
        size_t b = g->iks[k].type == GIK_FOOT_LOCK ? cb_graph_foot_lock_bytes(chunk) : 0;
        bytes = b > bytes ? b : bytes;
    }
    return bytes;
}

/* A stride warp step over the chunk: every character whose warp is on (its scale clamped to the
 * job's range, its direction; a scale of 1, 0 or less, or not finite, or weight 0 skips it, the
 * pose keeping its bits) in one call; the jobs share the step's legs and each corrects its own
 * character's pose (ik_kernels.h's contract: the bits of each character's
 * cb_ik_stride_unchecked; a refusal writes nothing and is counted). */
static void run_stride(pose_ctx *x, const gik *ik, uint32_t base, uint32_t m,
                       cb_graph_scratch_stats *st)
{
    cb_ik_stride_leg legs[CB_IK_STRIDE_MAX_LEGS]; /* every job's: the step's legs */
    cb_ik_stride_job jobs[POSE_CHUNK];
    cb_result code[POSE_CHUNK];
    uint32_t n = 0;
    for (uint32_t j = 0; j < m; ++j) {
        pose_ctx_at(x, base + j);
        const float w = step_weight(x, ik);
        float k = SR(x->s, params, ik->target[0], x->i);
        if (!(w > 0.0f) || !(k > 0.0f) || !isfinite(k) || k == 1.0f) { /* 0: a default, off */
            continue;
        }
        k = k < CB_IK_STRIDE_MIN_SCALE ? CB_IK_STRIDE_MIN_SCALE : k;
        k = k > CB_IK_STRIDE_MAX_SCALE ? CB_IK_STRIDE_MAX_SCALE : k;
        jobs[n++] =
            gik_stride_job(ik, x->g->skeleton, chunk_pose(x, j), legs, k,
                           param_or_zero(x, ik->target[1]), param_or_zero(x, ik->target[2]), w);
    }
    st->refused_ik += cb_ik_stride_many_unchecked(jobs, n, code);
}

/* Inlined into the step's loop over the chunk: as a call (per step and character, mostly to a
 * warp that has nothing to do) it cost 47 instructions per character-frame more in
 * follow_probe mode 3 (docs/performance.md, session 12). */
#if defined(__GNUC__) || defined(__clang__)
#define STEP_INLINE static inline __attribute__((always_inline))
#else
#define STEP_INLINE static inline
#endif

/* A step other than a foot lock, an orientation or a stride warp (those run over the chunk) on the
 * character's pose, at weight w > 0. */
STEP_INLINE void run_step(const pose_ctx *x, const gik *ik, cb_xform_group_span span, float w,
                          cb_graph_scratch_stats *st)
{
    const cb_graph *g = x->g;
    cb_result r;
    float target[3], pole[3] = {0.0f, 0.0f, 0.0f};
    for (int c = 0; c < 3; ++c) {
        target[c] = param_or_zero(x, ik->target[c]);
        pole[c] = ik->pole[0] != GNONE ? param_or_zero(x, ik->pole[c]) : 0.0f;
    }
    if (ik->type == GIK_TWO_BONE) {
        cb_ik_two_bone_job job = gik_two_bone_job(ik, g->skeleton, span, target, pole, w);
        r = cb_ik_two_bone_unchecked(&job, NULL);
    } else {
        cb_ik_aim_joint chain[CB_IK_AIM_MAX_JOINTS];
        cb_ik_aim_job job = gik_aim_job(ik, g->skeleton, span, chain, target, w);
        r = cb_ik_aim_unchecked(&job, NULL);
    }
    st->refused_ik += r != CB_OK;
}

/* An orientation warp over the chunk: every character with a weight above 0 and an angle that
 * is not 0 (the others keep their pose's bits) in one call; the jobs share the step's chain
 * and each corrects its own character's pose (ik_kernels.h's contract). */
static void run_orient(pose_ctx *x, const gik *ik, uint32_t base, uint32_t m,
                       cb_graph_scratch_stats *st)
{
    cb_ik_aim_joint spine[CB_IK_AIM_MAX_JOINTS];
    cb_ik_orient_job jobs[POSE_CHUNK];
    cb_result code[POSE_CHUNK];
    /* What the jobs share, built once; each takes its character's pose, angle and weight. */
    const cb_ik_orient_job step =
        gik_orient_job(ik, x->g->skeleton, chunk_pose(x, 0), spine, 0.0f, 0.0f);
    uint32_t n = 0;
    for (uint32_t j = 0; j < m; ++j) {
        pose_ctx_at(x, base + j);
        const float w = step_weight(x, ik);
        const float angle = w > 0.0f ? param_or_zero(x, ik->target[0]) : 0.0f;
        if (angle != 0.0f) {
            const cb_xform_group_span pose = chunk_pose(x, j);
            jobs[n] = step;
            jobs[n].pose = (cb_xform_group_cspan){pose.ptr, pose.count};
            jobs[n].out = pose;
            jobs[n].angle = angle, jobs[n].weight = w;
            ++n;
        }
    }
    st->refused_ik += cb_ik_orient_many_unchecked(jobs, n, code);
}

void cb_graph_stage_post(pose_ctx *x, uint32_t base, uint32_t m, cb_graph_scratch_stats *st)
{
    const cb_graph *g = x->g;
    for (uint32_t k = 0; k < g->ik_count; ++k) {
        const gik *ik = &g->iks[k];
        if (ik->type == GIK_FOOT_LOCK) {
            float w[POSE_CHUNK];
            for (uint32_t j = 0; j < m; ++j) {
                pose_ctx_at(x, base + j);
                w[j] = step_weight(x, ik);
            }
            cb_graph_foot_lock(x, ik, base, m, w, st); /* keeps state, weight 0 included */
            continue;
        }
        if (ik->type == GIK_ORIENT) {
            run_orient(x, ik, base, m, st);
            continue;
        }
        if (ik->type == GIK_STRIDE) {
            run_stride(x, ik, base, m, st);
            continue;
        }
        for (uint32_t j = 0; j < m; ++j) {
            pose_ctx_at(x, base + j);
            float w = step_weight(x, ik);
            if (w > 0.0f) {
                run_step(x, ik, chunk_pose(x, j), w, st);
            }
        }
    }
}
