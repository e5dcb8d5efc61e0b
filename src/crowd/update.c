/* The crowd's frame: every kind's characters in batches, each batch through its graph
 * (src/graph/runtime.c: parameters -> weights -> time & sync -> pose -> local-to-model).
 *
 * A character's outputs depend only on its own state, its parameters and dt, and every stage
 * computes each character alone (the solvers give a character the same bits wherever it sits in
 * a batch). That is the whole argument for "bit-identical whatever the thread count, batch size
 * and update ranges"; tests/test_crowd.c checks it. */
#include <math.h>

#include "crowd/crowd_impl.h"
#include "ltm/ltm_kernels.h"

/* dt above an hour is almost certainly a unit error (ms passed as s, say); refuse it. */
#define MAX_DT_S 3600.0f

cb_result cb_crowd_check_dt(float dt_s)
{
    if (!isfinite(dt_s)) {
        return CB_ERR_NOT_FINITE;
    }
    if (dt_s < 0.0f || dt_s > MAX_DT_S) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    return CB_OK;
}

/* Whether a kind's matrices go out through the thread's stage with non-temporal stores
 * (cb_ltm_model_stream_unchecked): matrices of any layout (MAT4, MAT3X4, QTS) kept in 16-byte
 * aligned slots, no skinning, and the kind's output at least c->stream_bytes
 * (CB_CROWD_STREAM_BYTES unless a test set it). An output that large does not stay in the
 * last-level cache through the frame anyway, and the stores then skip reading each line from
 * memory before writing it. The stage is joint_count MAT4, the largest layout. */
static bool stream_output(const cb_crowd *c, const cb_crowd_kind *k, uint32_t kind)
{
    return c->inverse_binds == NULL && k->matrices != NULL && (uintptr_t)k->matrices % 16 == 0 &&
           k->matrix_stride % 16 == 0 &&
           (size_t)cb_crowd_count(c, kind) * k->matrix_stride >= c->stream_bytes;
}

void cb_crowd_run_range(cb_crowd *c, cb_crowd_scratch *s, float dt, uint32_t kind, uint32_t first,
                        uint32_t count)
{
    cb_crowd_kind *k = &c->kinds[kind];
    cb_graph_outputs out = {
        .matrices = k->matrices,
        .matrix_stride = k->matrix_stride,
        .layout = c->layout,
        .root_motion = k->moves_root ? k->root_motion : NULL,
        .kept_weights = k->kept_weights,
        .kept_stride = c->capacity,
        .events = c->events,
        .inverse_binds = c->inverse_binds,
        .skinning = k->skinning,
        .skinning_stride = k->skinning_stride,
        .skinning_layout = c->skinning_layout,
        .model_scratch = s->model_scratch,
        .stage = stream_output(c, k, kind) ? s->stage : NULL,
    };
    for (uint32_t b = 0; b < count; b += c->batch_size) {
        uint32_t n = count - b < c->batch_size ? count - b : c->batch_size;
        cb_graph_run_batch(k->graph, &k->block, k->sources, first + b, n, dt, s->graph[kind],
                           c->kernels, &out, c->profile, &s->stats);
    }
    if (out.stage != NULL) {
        cb_ltm_stream_fence();
    }
    s->characters_updated += count;
}

/* The pool sees one index space: kind k occupies [offset_k, offset_k + padded count_k), each
 * kind padded to whole batches so a chunk of batch_size never mixes kinds. */
typedef struct update_ctx {
    cb_crowd *crowd;
    float dt;
    uint32_t offset[CB_CROWD_MAX_KINDS + 1];
} update_ctx;

static void update_chunk(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    update_ctx *u = user;
    cb_crowd *c = u->crowd;
    uint32_t kind = 0;
    while (begin >= u->offset[kind + 1]) {
        kind++;
    }
    uint32_t first = (uint32_t)(begin - u->offset[kind]);
    uint32_t count = cb_crowd_count(c, kind);
    uint32_t last = (uint32_t)(end - u->offset[kind]);
    last = last < count ? last : count;
    if (first < last) {
        cb_crowd_run_range(c, c->thread_scratch[thread_index], u->dt, kind, first, last - first);
    }
}

cb_result cb_crowd_update(cb_crowd *c, float dt_s)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    cb_result r = cb_crowd_check_dt(dt_s);
    if (r != CB_OK) {
        return r;
    }
    update_ctx u = {.crowd = c, .dt = dt_s};
    for (uint32_t k = 0; k < c->kind_count; ++k) {
        uint32_t n = cb_crowd_count(c, k);
        u.offset[k + 1] = u.offset[k] + (n + c->batch_size - 1) / c->batch_size * c->batch_size;
    }
    r = cb_jobs_parallel_for(c->jobs, u.offset[c->kind_count], c->batch_size, update_chunk, &u);
    c->updates++;
    return r;
}

cb_result cb_crowd_update_range(cb_crowd *c, cb_crowd_scratch *s, float dt_s, uint32_t kind,
                                uint32_t first, uint32_t count)
{
    if (c == NULL || s == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (s->crowd != c) {
        return CB_ERR_MISMATCH;
    }
    cb_result r = cb_crowd_check_dt(dt_s);
    if (r != CB_OK) {
        return r;
    }
    if (kind >= c->kind_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    uint32_t n = cb_crowd_count(c, kind);
    if (first > n || count > n - first) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    cb_crowd_run_range(c, s, dt_s, kind, first, count);
    return CB_OK;
}
