/* A batch of characters of one graph through the six stages of a frame: parameters, weights,
 * time (over the whole batch, SoA), then per chunk of POSE_CHUNK characters the pose, the
 * post-process and local-to-model, so a chunk's poses stay in cache from blend to matrices. A flat
 * graph runs the same stages with their list building skipped (runtime_impl.h).
 *
 * Every character is computed alone (the solvers give the same bits for a character wherever it
 * sits in a batch; the post-process runs a chunk step by step, but a step on one character
 * reads and writes only that character's pose and state), so results do not depend on the
 * batch or the thread. */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "graph/runtime/runtime_impl.h"
#include "ltm/ltm_kernels.h"
#include "pose/pose_kernels.h"
#include "solvers/solver_kernels.h"

const cb_graph_kernels cb_graph_kernels_simd = {
    .solver = cb_solver_evaluate_unchecked,
    .blend = cb_pose_blend_unchecked,
    .ltm = cb_ltm_model_unchecked,
    .skin = cb_ltm_skin_unchecked,
    .ltm_stream = cb_ltm_model_stream_unchecked,
};

const cb_graph_kernels cb_graph_kernels_ref = {
    .solver = cb_solver_evaluate_unchecked_ref,
    .blend = cb_pose_blend_unchecked_ref,
    .ltm = cb_ltm_model_unchecked_ref,
    .skin = cb_ltm_skin_unchecked_ref,
    .ltm_stream = NULL,
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void lap(bool profile, uint64_t *mark, cb_graph_scratch_stats *st,
                       cb_crowd_stage stage)
{
    if (profile) {
        uint64_t t = now_ns();
        st->stage_ns[stage] += t - *mark;
        *mark = t;
    }
}

/* Stage 6 for character ch: its model matrices, and with inverse binds its skinning matrices
 * (the model ones then in the thread's scratch when the crowd keeps none). */
static void local_to_model(const pose_ctx *x, const cb_xform_group *pose, uint32_t ch,
                           const cb_graph_outputs *out)
{
    const cb_skeleton *skeleton = x->g->skeleton;
    float *model =
        out->matrices != NULL ? (float *)(out->matrices + (size_t)ch * out->matrix_stride) : NULL;
    if (out->stage != NULL && x->k->ltm_stream != NULL) {
        x->k->ltm_stream(skeleton, pose, out->layout, out->stage, model);
        return;
    }
    if (out->inverse_binds == NULL) {
        x->k->ltm(skeleton, pose, out->layout, model);
        return;
    }
    cb_ltm_skin skin = {
        .model_layout = model != NULL ? out->layout : CB_MATRIX_LAYOUT_MAT4,
        .model = model != NULL ? model : out->model_scratch,
        .inverse_binds = out->inverse_binds,
        .skinning_layout = out->skinning_layout,
        .skinning = (float *)(out->skinning + (size_t)ch * out->skinning_stride),
    };
    x->k->skin(skeleton, pose, &skin);
}

/* Stages 4 to 6 for characters [base, base + m) of the batch (m <= the scratch's chunk). The
 * post-process takes the chunk at once, step by step (post.c), so that a step can hand the
 * chunk's chains to one kernel call. */
static void pose_chunk(pose_ctx *x, uint32_t base, uint32_t m, const cb_graph_outputs *out,
                       bool profile, uint64_t *mark, cb_graph_scratch_stats *st)
{
    const cb_graph *g = x->g;
    for (uint32_t j = 0; j < m; ++j) {
        pose_ctx_at(x, base + j);
        x->root_out = chunk_pose(x, j).ptr;
        if (g->flat) {
            cb_graph_stage_pose_flat(x);
        } else {
            cb_graph_stage_pose(x);
        }
    }
    lap(profile, mark, st, CB_CROWD_STAGE_SAMPLE_BLEND);
    if (g->ik_count > 0) {
        cb_graph_stage_post(x, base, m, st);
        lap(profile, mark, st, CB_CROWD_STAGE_POST_PROCESS);
    }
    for (uint32_t j = 0; j < m; ++j) {
        local_to_model(x, chunk_pose(x, j).ptr, x->first + base + j, out);
    }
    lap(profile, mark, st, CB_CROWD_STAGE_LTM);
}

void cb_graph_run_batch(const cb_graph *g, cb_graph_block *b, const cb_graph_param_source *src,
                        uint32_t first, uint32_t n, float dt, cb_graph_scratch *s,
                        const cb_graph_kernels *k, const cb_graph_outputs *out, bool profile,
                        cb_graph_scratch_stats *st)
{
    CB_ASSERT(n <= s->batch);
    uint64_t mark = profile ? now_ns() : 0;
    cb_graph_stage_params(g, b, src, first, n, dt, s, st);
    lap(profile, &mark, st, CB_CROWD_STAGE_PARAMS);
    if (g->flat) {
        cb_graph_stage_weights_flat(g, n, s, k, st);
    } else {
        cb_graph_stage_weights(g, b, first, n, dt, s, k, st);
    }
    lap(profile, &mark, st, CB_CROWD_STAGE_WEIGHTS);
    if (g->flat) {
        cb_graph_stage_time_flat(g, b, first, n, dt, s, out, st);
    } else {
        cb_graph_stage_time(g, b, first, n, dt, s, out, st);
    }
    lap(profile, &mark, st, CB_CROWD_STAGE_TIME);
    pose_ctx x = {.g = g,
                  .b = b,
                  .s = s,
                  .k = k,
                  .first = first,
                  .pose_bytes = g->group_count * cb_simd_group_bytes(),
                  .capacity = g->max_entries + 4,
                  .dt = dt,
                  .root_motion = out->root_motion};
    for (uint32_t base = 0; base < n; base += s->chunk) {
        uint32_t m = n - base < s->chunk ? n - base : s->chunk;
        pose_chunk(&x, base, m, out, profile, &mark, st);
    }
}
