/* The crowd: setup, kinds, characters, parameter columns and views, outputs, stats. The frame
 * itself is in update.c. The crowd reaches its graphs through crowdblend/graph.h and the
 * runtime's interface (graph/runtime.h), never their layout. */
#include <math.h>
#include <string.h>

#include "crowd/crowd_impl.h"

enum { DEFAULT_BATCH_SIZE = 64, MAX_BATCH_SIZE = 4096 };

static const char *const stage_names[_CB_CROWD_STAGE_COUNT] = {
    "parameters", "weights", "time & sync", "sample+blend", "post-process", "local-to-model",
};

const char *cb_crowd_stage_name(cb_crowd_stage stage)
{
    return (unsigned)stage < _CB_CROWD_STAGE_COUNT ? stage_names[stage] : "?";
}

cb_crowd_desc cb_crowd_query_desc(const cb_crowd_desc *desc)
{
    cb_crowd_desc d = desc != NULL ? *desc : (cb_crowd_desc){0};
    if (d.jobs == NULL && d.thread_count == 0) {
        d.thread_count = cb_jobs_query_desc(NULL).thread_count;
    }
    if (d.batch_size == 0) {
        d.batch_size = DEFAULT_BATCH_SIZE;
    }
    size_t w = cb_simd_width();
    d.batch_size = (uint32_t)((d.batch_size + w - 1) / w * w);
    if (d.matrix_layout == _CB_MATRIX_LAYOUT_DEFAULT) {
        d.matrix_layout = CB_MATRIX_LAYOUT_MAT4;
    }
    if (d.skinning_layout == _CB_MATRIX_LAYOUT_DEFAULT && d.inverse_binds.ptr != NULL) {
        d.skinning_layout = CB_MATRIX_LAYOUT_MAT4; /* only with binds: without, it must stay 0 */
    }
    if (d.matrix_stride_bytes == 0 && d.skeleton != NULL) {
        d.matrix_stride_bytes = cb_skeleton_joint_count(d.skeleton) *
                                cb_ltm_matrix_floats(d.matrix_layout) * sizeof(float);
    }
    return d;
}

/* ------------------------------------------------------------------------------------------ */
/* Create and destroy                                                                         */

/* A kind's tables: handles, the graph's state block, views, outputs. The outputs (matrices
 * here, skinning in skinning.c) come from cb_alloc_large: from 32 MB on, with the C library's
 * allocator, in transparent huge pages, backed in 2 MB steps as characters are added. The
 * state stays in 4 KB pages: huge pages gained it nothing measurable, and its rows, each a
 * capacity long, would back 2 MB per row for a few characters (docs/performance.md, "Session
 * 11: huge pages for the crowd's outputs"). */
static cb_result init_kind(cb_crowd *c, cb_crowd_kind *k, const cb_crowd_desc *d, bool first,
                           cb_error *err)
{
    const cb_graph *g = k->graph;
    k->clip_count = cb_graph_clip_count(g);
    k->param_count = cb_graph_param_count(g);
    k->handle_memory = cb_alloc(&c->allocator, cb_handle_pool_bytes(c->capacity), 64);
    /* Not touched here either: cb_crowd_add writes a character's whole state (the block's
     * every field, its root motion and kept weights), and nothing reads a slot before its add
     * (issue 11: the block was the ~250 B per slot create still cleared). */
    /* Decided once: a kind without root motion never computes it, and its deltas stay zero. */
    k->moves_root = cb_graph_moves_root(g) && !d->skip_root_motion;
    k->block_memory = cb_alloc(&c->allocator, cb_graph_block_bytes(g, c->capacity), 64);
    k->sources = cb_alloc_zeroed(
        &c->allocator, (k->param_count ? k->param_count : 1) * sizeof(cb_graph_param_source), 16);
    k->root_motion = cb_alloc(&c->allocator, c->capacity * sizeof(cb_root_delta), 64);
    size_t packed = c->joint_count * c->matrix_floats * sizeof(float);
    if (!c->keep_matrices) {
        k->matrices = NULL; /* skinning_only: the frame's model matrices stay in scratch */
    } else if (first && d->matrices != NULL) {
        k->matrices = (char *)d->matrices;
        k->matrix_stride = d->matrix_stride_bytes;
    } else {
        k->own_matrices = true;
        k->matrix_stride = first ? d->matrix_stride_bytes : packed;
        /* Not touched here: cb_crowd_add writes a character's matrices (the rest pose), so
         * memory follows use (issue 11: they were most of the 4.4 KB a slot cost at create). */
        k->matrices = cb_alloc_large(&c->allocator, c->capacity * k->matrix_stride, 64);
    }
    if (d->keep_weights) {
        k->kept_weights =
            cb_alloc(&c->allocator,
                     (size_t)(k->clip_count ? k->clip_count : 1) * c->capacity * sizeof(float), 64);
    }
    if (k->handle_memory == NULL || k->block_memory == NULL || k->sources == NULL ||
        k->root_motion == NULL || (c->keep_matrices && k->matrices == NULL) ||
        (d->keep_weights && k->kept_weights == NULL)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: state of %u characters",
                            c->capacity);
    }
    cb_result r = cb_crowd_init_kind_skinning(c, k, err);
    if (r != CB_OK) {
        return r;
    }
    cb_handle_pool_init(&k->handles, c->capacity, k->handle_memory);
    cb_graph_block_init(&k->block, g, c->capacity, k->block_memory);
    return CB_OK;
}

static void free_kind(cb_crowd *c, cb_crowd_kind *k)
{
    const cb_allocator *a = &c->allocator;
    const cb_graph *g = k->graph;
    if (g != NULL) {
        cb_graph_unuse(g);
        cb_free(a, k->block_memory, cb_graph_block_bytes(g, c->capacity));
        cb_free(a, k->sources,
                (k->param_count ? k->param_count : 1) * sizeof(cb_graph_param_source));
        cb_free(a, k->kept_weights,
                (size_t)(k->clip_count ? k->clip_count : 1) * c->capacity * sizeof(float));
    }
    cb_free(a, k->handle_memory, cb_handle_pool_bytes(c->capacity));
    cb_free(a, k->root_motion, c->capacity * sizeof(cb_root_delta));
    if (k->own_matrices) {
        cb_free(a, k->matrices, c->capacity * k->matrix_stride);
    }
    cb_crowd_free_kind_skinning(c, k);
}

/* The rest pose in model space, once: cb_crowd_add copies it to a new character. */
static cb_result init_rest_matrices(cb_crowd *c, cb_error *err)
{
    size_t floats = c->joint_count * c->matrix_floats;
    c->rest_matrices = cb_alloc(&c->allocator, floats * sizeof(float), 64);
    if (c->rest_matrices == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: rest matrices");
    }
    cb_ltm_job job = {.skeleton = c->skeleton,
                      .local = cb_skeleton_rest_pose(c->skeleton),
                      .model_layout = c->layout,
                      .model = {c->rest_matrices, floats}};
    return cb_ltm_job_run(&job, err);
}

static cb_result check_desc(const cb_crowd_desc *desc, cb_error *err)
{
    if (desc->_start_canary != 0 || desc->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY,
                            "cb_crowd_desc: a canary is not zero (initialise with {0})");
    }
    cb_result r = cb_allocator_check(&desc->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    if (desc->skeleton == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_desc.skeleton is NULL");
    }
    if (desc->capacity == 0 || desc->capacity > CB_CROWD_MAX_CAPACITY) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.capacity %u is outside 1..%u", desc->capacity,
                            CB_CROWD_MAX_CAPACITY);
    }
    if (desc->graph_count == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW,
                            "cb_crowd_desc.graph_count is 0: a crowd runs "
                            "graphs (cb_graph_create_blend makes a "
                            "blend-space one)");
    }
    if (desc->graphs == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_desc.graphs is NULL");
    }
    if (desc->graph_count > CB_CROWD_MAX_KINDS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "cb_crowd_desc.graph_count %u exceeds %d",
                            desc->graph_count, CB_CROWD_MAX_KINDS);
    }
    if ((uint64_t)desc->capacity * desc->graph_count > CB_HANDLE_MAX_CAPACITY) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc: capacity x graph_count exceeds %u",
                            CB_HANDLE_MAX_CAPACITY);
    }
    cb_result sr = cb_crowd_check_skinning_desc(desc, cb_skeleton_joint_count(desc->skeleton), err);
    if (sr != CB_OK) {
        return sr;
    }
    for (uint32_t k = 0; k < desc->graph_count; ++k) {
        if (desc->graphs[k] == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_desc.graphs[%u] is NULL", k);
        }
        if (cb_skeleton_signature(cb_graph_skeleton(desc->graphs[k])) !=
            cb_skeleton_signature(desc->skeleton)) {
            return cb_error_set(err, CB_ERR_MISMATCH,
                                "cb_crowd_desc.graphs[%u] ('%s') uses another skeleton", k,
                                cb_graph_name(desc->graphs[k]));
        }
    }
    return CB_OK;
}

/* The values cb_crowd_query_desc fills in when 0: the batch size, the matrix layout and the
 * stride (desc: as given, for the messages). *matrix_floats: the layout's floats per matrix. */
static cb_result check_queried_desc(const cb_crowd_desc *desc, const cb_crowd_desc *d,
                                    size_t *matrix_floats, cb_error *err)
{
    if (d->batch_size > MAX_BATCH_SIZE) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "cb_crowd_desc.batch_size %u exceeds %d",
                            desc->batch_size, MAX_BATCH_SIZE);
    }
    *matrix_floats = cb_ltm_matrix_floats(d->matrix_layout);
    if (*matrix_floats == 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "cb_crowd_desc.matrix_layout %d",
                            (int)desc->matrix_layout);
    }
    size_t packed = cb_skeleton_joint_count(d->skeleton) * *matrix_floats * sizeof(float);
    if (d->matrix_stride_bytes < packed || d->matrix_stride_bytes % sizeof(float) != 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.matrix_stride_bytes %zu: need a multiple of 4 and at "
                            "least %zu",
                            d->matrix_stride_bytes, packed);
    }
    return CB_OK;
}

/* The crowd itself, its settings from the desc, each kind holding its graph; NULL when out of
 * memory. */
static cb_crowd *new_crowd(const cb_crowd_desc *d, size_t matrix_floats)
{
    cb_crowd *c = cb_alloc_zeroed(&d->allocator, sizeof *c, _Alignof(cb_crowd));
    if (c == NULL) {
        return NULL;
    }
    c->allocator = d->allocator;
    c->skeleton = d->skeleton;
    c->joint_count = (uint32_t)cb_skeleton_joint_count(d->skeleton);
    c->capacity = d->capacity;
    c->batch_size = d->batch_size;
    c->layout = d->matrix_layout;
    c->matrix_floats = matrix_floats;
    c->keep_matrices = !d->skinning_only;
    c->profile = d->profile;
    c->events = d->events;
    c->kernels = &cb_graph_kernels_simd;
    c->stream_bytes = CB_CROWD_STREAM_BYTES;
    for (uint32_t k = 0; k < d->graph_count; ++k) {
        c->kinds[k].graph = d->graphs[k];
        cb_graph_use(d->graphs[k]); /* free_kind drops it, also when create fails */
    }
    c->kind_count = d->graph_count;
    return c;
}

/* The desc's job system, or one of the crowd's own. */
static cb_result init_jobs(cb_crowd *c, const cb_crowd_desc *d, cb_error *err)
{
    if (d->jobs != NULL) {
        c->jobs = d->jobs;
        return CB_OK;
    }
    cb_jobs_desc jd = {.thread_count = d->thread_count, .allocator = d->allocator};
    cb_result r = cb_jobs_create(&jd, &c->jobs, err);
    c->own_jobs = r == CB_OK;
    return r;
}

/* A scratch per thread of the job system. */
static cb_result init_thread_scratch(cb_crowd *c, cb_error *err)
{
    c->thread_count = cb_jobs_thread_count(c->jobs);
    c->thread_scratch = cb_alloc_zeroed(&c->allocator, c->thread_count * sizeof(void *), 16);
    cb_result r = c->thread_scratch != NULL
                      ? CB_OK
                      : cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "thread scratch");
    for (uint32_t t = 0; t < c->thread_count && r == CB_OK; ++t) {
        r = cb_crowd_scratch_alloc(c, &c->thread_scratch[t]);
        if (r != CB_OK) {
            cb_error_set(err, r, "cb_crowd_create: thread scratch");
        }
    }
    return r;
}

cb_result cb_crowd_create(const cb_crowd_desc *desc, cb_crowd **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_create: desc or out is NULL");
    }
    cb_result r = check_desc(desc, err);
    if (r != CB_OK) {
        return r;
    }
    cb_crowd_desc d = cb_crowd_query_desc(desc);
    size_t matrix_floats = 0;
    r = check_queried_desc(desc, &d, &matrix_floats, err);
    if (r != CB_OK) {
        return r;
    }
    cb_crowd *c = new_crowd(&d, matrix_floats);
    if (c == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: crowd");
    }
    r = init_rest_matrices(c, err);
    if (r == CB_OK) {
        r = cb_crowd_init_skinning(c, &d, err);
    }
    for (uint32_t k = 0; k < c->kind_count && r == CB_OK; ++k) {
        r = init_kind(c, &c->kinds[k], &d, k == 0, err);
    }
    if (r == CB_OK) {
        r = init_jobs(c, &d, err);
    }
    if (r == CB_OK) {
        r = init_thread_scratch(c, err);
    }
    if (r != CB_OK) {
        cb_crowd_destroy(c);
        return r;
    }
    *out = c;
    return CB_OK;
}

void cb_crowd_destroy(cb_crowd *c)
{
    if (c == NULL) {
        return;
    }
    cb_allocator a = c->allocator;
    for (cb_crowd_scratch *s = c->scratch_list; s != NULL;) {
        cb_crowd_scratch *next = s->next;
        cb_free(&a, s, s->bytes);
        s = next;
    }
    if (c->own_jobs) {
        cb_jobs_destroy(c->jobs);
    }
    cb_free(&a, c->thread_scratch, c->thread_count * sizeof(void *));
    cb_free(&a, c->rest_matrices, c->joint_count * c->matrix_floats * sizeof(float));
    cb_crowd_free_skinning(c);
    for (uint32_t k = 0; k < CB_CROWD_MAX_KINDS; ++k) {
        if (c->kinds[k].graph != NULL) {
            free_kind(c, &c->kinds[k]);
        }
    }
    cb_free(&a, c, sizeof *c);
}

uint32_t cb_crowd_kind_count(const cb_crowd *c)
{
    return c != NULL ? c->kind_count : 0;
}

const cb_graph *cb_crowd_graph(const cb_crowd *c, uint32_t kind)
{
    return c != NULL && kind < c->kind_count ? c->kinds[kind].graph : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Scratch                                                                                    */

cb_result cb_crowd_scratch_alloc(cb_crowd *c, cb_crowd_scratch **out)
{
    size_t bytes = cb_round_up(sizeof(cb_crowd_scratch), 64);
    size_t at[CB_CROWD_MAX_KINDS];
    for (uint32_t k = 0; k < c->kind_count; ++k) {
        at[k] = bytes;
        bytes += cb_round_up(cb_graph_scratch_bytes(c->kinds[k].graph, c->batch_size), 64);
    }
    /* skinning_only: the model matrices of the character being skinned; otherwise the
     * staging of a character's output on its way to a large output (update.c). */
    size_t model_at = bytes;
    bytes += c->joint_count * 16 * sizeof(float);
    size_t align = cb_simd_group_align() > 64 ? cb_simd_group_align() : 64;
    char *m = cb_alloc_zeroed(&c->allocator, bytes, align);
    if (m == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    cb_crowd_scratch *s = (cb_crowd_scratch *)m;
    s->crowd = c;
    s->bytes = bytes;
    s->model_scratch = c->keep_matrices ? NULL : (float *)(m + model_at);
    s->stage = c->keep_matrices ? (float *)(m + model_at) : NULL;
    for (uint32_t k = 0; k < c->kind_count; ++k) {
        s->graph[k] = cb_graph_scratch_init(c->kinds[k].graph, c->batch_size, m + at[k]);
    }
    s->next = c->scratch_list;
    c->scratch_list = s;
    *out = s;
    return CB_OK;
}

cb_result cb_crowd_scratch_create(cb_crowd *c, cb_crowd_scratch **out)
{
    if (c == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    return cb_crowd_scratch_alloc(c, out);
}

void cb_crowd_scratch_destroy(cb_crowd *c, cb_crowd_scratch *s)
{
    if (c == NULL || s == NULL || s->crowd != c) {
        return;
    }
    /* Its counters stay in the totals: fold them into a thread scratch first. */
    cb_crowd_scratch *keep = c->thread_scratch[0];
    keep->characters_updated += s->characters_updated;
    keep->stats.nonfinite_params += s->stats.nonfinite_params;
    keep->stats.clamped_weights += s->stats.clamped_weights;
    keep->stats.dropped_events += s->stats.dropped_events;
    keep->stats.refused_ik += s->stats.refused_ik;
    for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
        keep->stats.stage_ns[k] += s->stats.stage_ns[k];
    }
    for (cb_crowd_scratch **link = &c->scratch_list; *link != NULL; link = &(*link)->next) {
        if (*link == s) {
            *link = s->next;
            break;
        }
    }
    cb_free(&c->allocator, s, s->bytes);
}

/* ------------------------------------------------------------------------------------------ */
/* Characters                                                                                 */

/* Handle ids carry their kind: kind k's slots are offset by k * capacity (still a slot, as
 * capacity x kinds <= CB_HANDLE_MAX_CAPACITY). */
static uint64_t to_global(const cb_crowd *c, uint32_t kind, uint64_t id)
{
    return cb_handle_make(cb_handle_slot(id) + kind * c->capacity, cb_handle_generation(id));
}

static bool to_local(const cb_crowd *c, uint64_t id, uint32_t *kind, uint64_t *local)
{
    uint32_t slot = cb_handle_slot(id);
    uint32_t k = slot / c->capacity;
    if (k >= c->kind_count) {
        return false;
    }
    *kind = k;
    *local = cb_handle_make(slot - k * c->capacity, cb_handle_generation(id));
    return true;
}

cb_result cb_crowd_add(cb_crowd *c, uint32_t kind, float phase, cb_character *out)
{
    if (c == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (kind >= c->kind_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (!isfinite(phase)) {
        return CB_ERR_NOT_FINITE;
    }
    cb_crowd_kind *k = &c->kinds[kind];
    uint64_t id;
    cb_result r = cb_handle_pool_add(&k->handles, &id);
    if (r != CB_OK) {
        return r;
    }
    uint32_t i = k->handles.count - 1;
    float p = phase - floorf(phase);
    cb_graph_block_reset(&k->block, i, p < 1.0f ? p : 0.0f);
    k->root_motion[i] = (cb_root_delta){{0.0f, 0.0f, 0.0f}, 0.0f};
    if (k->matrices != NULL) {
        memcpy(k->matrices + i * k->matrix_stride, c->rest_matrices,
               c->joint_count * c->matrix_floats * sizeof(float));
    }
    if (k->skinning != NULL) {
        memcpy(k->skinning + i * k->skinning_stride, c->rest_skinning, cb_crowd_skinning_bytes(c));
    }
    if (k->kept_weights != NULL) {
        for (uint32_t n = 0; n < k->clip_count; ++n) {
            k->kept_weights[(size_t)n * c->capacity + i] = 0.0f;
        }
    }
    out->id = to_global(c, kind, id);
    return CB_OK;
}

cb_result cb_crowd_remove(cb_crowd *c, cb_character ch)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    uint32_t kind, from, to;
    uint64_t local;
    if (!to_local(c, ch.id, &kind, &local)) {
        return CB_ERR_STALE_HANDLE;
    }
    cb_crowd_kind *k = &c->kinds[kind];
    cb_result r = cb_handle_pool_remove(&k->handles, local, &from, &to);
    if (r != CB_OK || from == to) {
        return r;
    }
    cb_graph_block_move(&k->block, from, to);
    k->root_motion[to] = k->root_motion[from];
    if (k->kept_weights != NULL) {
        for (uint32_t n = 0; n < k->clip_count; ++n) {
            float *row = k->kept_weights + (size_t)n * c->capacity;
            row[to] = row[from];
        }
    }
    /* Outputs follow the character, so `to` reads correct matrices until the next update. */
    if (k->matrices != NULL) {
        memcpy(k->matrices + to * k->matrix_stride, k->matrices + from * k->matrix_stride,
               c->joint_count * c->matrix_floats * sizeof(float));
    }
    if (k->skinning != NULL) {
        memcpy(k->skinning + to * k->skinning_stride, k->skinning + from * k->skinning_stride,
               cb_crowd_skinning_bytes(c));
    }
    return CB_OK;
}

uint32_t cb_crowd_count(const cb_crowd *c, uint32_t kind)
{
    return c != NULL && kind < c->kind_count ? c->kinds[kind].handles.count : 0;
}

uint32_t cb_crowd_capacity(const cb_crowd *c)
{
    return c != NULL ? c->capacity : 0;
}

cb_result cb_crowd_locate(const cb_crowd *c, cb_character ch, uint32_t *kind, uint32_t *dense)
{
    if (c == NULL || kind == NULL || dense == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    uint32_t k;
    uint64_t local;
    if (!to_local(c, ch.id, &k, &local)) {
        return CB_ERR_STALE_HANDLE;
    }
    cb_result r = cb_handle_pool_lookup(&c->kinds[k].handles, local, dense);
    if (r == CB_OK) {
        *kind = k;
    }
    return r;
}

cb_character cb_crowd_character_at(const cb_crowd *c, uint32_t kind, uint32_t dense)
{
    cb_character ch = {0};
    if (c != NULL && kind < c->kind_count && dense < c->kinds[kind].handles.count) {
        ch.id = to_global(c, kind, cb_handle_pool_id_at(&c->kinds[kind].handles, dense));
    }
    return ch;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters                                                                                 */

uint32_t cb_crowd_param_count(const cb_crowd *c, uint32_t kind)
{
    return c != NULL && kind < c->kind_count ? c->kinds[kind].param_count : 0;
}

cb_result cb_crowd_find_param(const cb_crowd *c, uint32_t kind, const char *name, uint32_t *param)
{
    if (c == NULL || name == NULL || param == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (kind >= c->kind_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    return cb_graph_find_param(c->kinds[kind].graph, name, param);
}

float *cb_crowd_param_column(cb_crowd *c, uint32_t kind, uint32_t param)
{
    if (c == NULL || kind >= c->kind_count || param >= c->kinds[kind].param_count) {
        return NULL;
    }
    return c->kinds[kind].block.params + (size_t)param * c->capacity;
}

cb_result cb_crowd_set_param_view(cb_crowd *c, uint32_t kind, uint32_t param, const float *base,
                                  size_t stride_bytes)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (kind >= c->kind_count || param >= c->kinds[kind].param_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    cb_crowd_kind *k = &c->kinds[kind];
    if (base == NULL) {
        k->sources[param].base = NULL;
        return CB_OK;
    }
    if (cb_graph_param_is_state(k->graph, param) || stride_bytes < sizeof(float)) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (!cb_is_aligned(base, sizeof(float)) || stride_bytes % sizeof(float) != 0) {
        return CB_ERR_MISALIGNED;
    }
    k->sources[param].base = (const char *)base;
    k->sources[param].stride = stride_bytes;
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Outputs and stats                                                                          */

uint32_t cb_crowd_joint_count(const cb_crowd *c)
{
    return c != NULL ? c->joint_count : 0;
}

cb_matrix_layout cb_crowd_matrix_layout(const cb_crowd *c)
{
    return c != NULL && c->keep_matrices ? c->layout : _CB_MATRIX_LAYOUT_DEFAULT;
}

const float *cb_crowd_matrices(const cb_crowd *c, uint32_t kind, uint32_t dense)
{
    if (c == NULL || kind >= c->kind_count || dense >= c->kinds[kind].handles.count ||
        c->kinds[kind].matrices == NULL) {
        return NULL;
    }
    return (const float *)(c->kinds[kind].matrices + dense * c->kinds[kind].matrix_stride);
}

const cb_root_delta *cb_crowd_root_motion(const cb_crowd *c, uint32_t kind)
{
    return c != NULL && kind < c->kind_count ? c->kinds[kind].root_motion : NULL;
}

const float *cb_crowd_clip_times(const cb_crowd *c, uint32_t kind, uint32_t clip)
{
    if (c == NULL || kind >= c->kind_count || clip >= c->kinds[kind].clip_count) {
        return NULL;
    }
    return c->kinds[kind].block.clip_time + (size_t)clip * c->capacity;
}

const float *cb_crowd_weights(const cb_crowd *c, uint32_t kind, size_t *stride)
{
    if (c == NULL || kind >= c->kind_count || c->kinds[kind].kept_weights == NULL) {
        return NULL;
    }
    if (stride != NULL) {
        *stride = c->capacity;
    }
    return c->kinds[kind].kept_weights;
}

const cb_graph_event *cb_crowd_events(const cb_crowd *c, uint32_t kind, uint32_t dense,
                                      uint32_t *count)
{
    if (count != NULL) {
        *count = 0;
    }
    if (c == NULL || kind >= c->kind_count || dense >= c->kinds[kind].handles.count) {
        return NULL;
    }
    const cb_graph_block *b = &c->kinds[kind].block;
    if (count != NULL) {
        *count = b->event_count[dense];
    }
    return &b->events[(size_t)dense * CB_GRAPH_EVENTS_PER_FRAME];
}

/* A per-character query's arguments: crowd and out given, kind, item (below the kind's graph's
 * count `items`: each a `what`, all `whats`) and dense index in range; err names the first
 * that is not. */
static cb_result check_query(const cb_crowd *c, const void *out, uint32_t kind, uint32_t item,
                             uint32_t (*items)(const cb_graph *), const char *what,
                             const char *whats, uint32_t dense, const char *fn, cb_error *err)
{
    if (c == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: %s is NULL", fn,
                            c == NULL ? "crowd" : "out");
    }
    if (kind >= c->kind_count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: kind %u, the crowd has %u", fn, kind,
                            c->kind_count);
    }
    const cb_crowd_kind *k = &c->kinds[kind];
    uint32_t n = items(k->graph);
    if (item >= n) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: %s %u, kind %u's graph has %u %s",
                            fn, what, item, kind, n, whats);
    }
    if (dense >= k->handles.count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: dense index %u, kind %u has %u characters", fn, dense, kind,
                            k->handles.count);
    }
    return CB_OK;
}

cb_result cb_crowd_query_foot_lock(const cb_crowd *c, uint32_t kind, uint32_t leg, uint32_t dense,
                                   cb_crowd_foot_lock *out, cb_error *err)
{
    cb_result r = check_query(c, out, kind, leg, cb_graph_foot_lock_leg_count, "leg", "lock legs",
                              dense, "cb_crowd_query_foot_lock", err);
    if (r == CB_OK) {
        cb_graph_block_foot_lock(&c->kinds[kind].block, leg, dense, out->point, &out->held,
                                 &out->failed);
    }
    return r;
}

static uint32_t machine_field(const cb_crowd *c, uint32_t kind, uint32_t machine, uint32_t dense,
                              bool next)
{
    if (c == NULL || kind >= c->kind_count || dense >= c->kinds[kind].handles.count ||
        machine >= cb_graph_state_machine_count(c->kinds[kind].graph)) {
        return CB_INVALID_INDEX;
    }
    const cb_graph_block *b = &c->kinds[kind].block;
    uint16_t v = (next ? b->sm_next : b->sm_current)[(size_t)machine * c->capacity + dense];
    return v == UINT16_MAX ? CB_INVALID_INDEX : v;
}

uint32_t cb_crowd_state(const cb_crowd *c, uint32_t kind, uint32_t machine, uint32_t dense)
{
    return machine_field(c, kind, machine, dense, false);
}

uint32_t cb_crowd_next_state(const cb_crowd *c, uint32_t kind, uint32_t machine, uint32_t dense)
{
    return machine_field(c, kind, machine, dense, true);
}

cb_result cb_crowd_query_transition(const cb_crowd *c, uint32_t kind, uint32_t machine,
                                    uint32_t dense, cb_crowd_transition *out, cb_error *err)
{
    cb_result r = check_query(c, out, kind, machine, cb_graph_state_machine_count, "machine",
                              "state machines", dense, "cb_crowd_query_transition", err);
    if (r == CB_OK) {
        cb_graph_machine_transition(&c->kinds[kind].block, machine, dense, out);
    }
    return r;
}

uint64_t cb_crowd_output_hash(const cb_crowd *c)
{
    uint64_t h = CB_FNV1A64_BASIS;
    if (c == NULL) {
        return h;
    }
    size_t bytes = c->joint_count * c->matrix_floats * sizeof(float);
    for (uint32_t kind = 0; kind < c->kind_count; ++kind) {
        const cb_crowd_kind *k = &c->kinds[kind];
        for (uint32_t i = 0; i < k->handles.count && k->matrices != NULL; ++i) {
            h = cb_fnv1a64(h, k->matrices + i * k->matrix_stride, bytes);
        }
        for (uint32_t i = 0; i < k->handles.count && k->skinning != NULL; ++i) {
            h = cb_fnv1a64(h, k->skinning + i * k->skinning_stride, cb_crowd_skinning_bytes(c));
        }
        h = cb_fnv1a64(h, k->root_motion, k->handles.count * sizeof(cb_root_delta));
    }
    return h;
}

cb_crowd_stats cb_crowd_query_stats(const cb_crowd *c)
{
    cb_crowd_stats total = {0};
    if (c == NULL) {
        return total;
    }
    total.updates = c->updates;
    for (const cb_crowd_scratch *s = c->scratch_list; s != NULL; s = s->next) {
        total.characters_updated += s->characters_updated;
        total.nonfinite_params += s->stats.nonfinite_params;
        total.clamped_weights += s->stats.clamped_weights;
        total.dropped_events += s->stats.dropped_events;
        total.refused_ik += s->stats.refused_ik;
        for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
            total.stage_ns[k] += s->stats.stage_ns[k];
        }
    }
    return total;
}

void cb_crowd_reset_stats(cb_crowd *c)
{
    if (c == NULL) {
        return;
    }
    c->updates = 0;
    for (cb_crowd_scratch *s = c->scratch_list; s != NULL; s = s->next) {
        memset(&s->stats, 0, sizeof s->stats);
        s->characters_updated = 0;
    }
}

void cb_crowd_set_stream_bytes(cb_crowd *c, size_t bytes)
{
    c->stream_bytes = bytes;
}

void cb_crowd_set_kernels(cb_crowd *c, const cb_graph_kernels *kernels)
{
    c->kernels = kernels;
}
