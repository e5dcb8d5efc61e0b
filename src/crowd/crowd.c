/* The crowd: setup, characters, parameter columns and views, outputs, stats. The frame itself
 * is in update.c. */
#include <math.h>
#include <string.h>

#include "crowd/crowd_impl.h"

enum { DEFAULT_BATCH_SIZE = 64, MAX_BATCH_SIZE = 4096 };

static const char *const stage_names[CB_CROWD_STAGE_COUNT] = {
    "parameters", "weights", "time & sync", "sample+blend", "local-to-model",
};

const char *cb_crowd_stage_name(cb_crowd_stage stage)
{
    return (unsigned)stage < CB_CROWD_STAGE_COUNT ? stage_names[stage] : "?";
}

cb_crowd_desc cb_crowd_query_desc(const cb_crowd_desc *desc)
{
    cb_crowd_desc d = desc != NULL ? *desc : (cb_crowd_desc){0};
    d.blend.solver = cb_solver_query_desc(&d.blend.solver);
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
    if (d.matrix_stride_bytes == 0 && d.skeleton != NULL) {
        d.matrix_stride_bytes = cb_skeleton_joint_count(d.skeleton) *
                                cb_ltm_matrix_floats(d.matrix_layout) * sizeof(float);
    }
    return d;
}

/* ------------------------------------------------------------------------------------------ */
/* Create and destroy                                                                         */

static cb_result check_clip(const cb_crowd *c, const cb_clip *clip, bool additive,
                            const char *field, uint32_t index, cb_error *err)
{
    if (clip == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_desc.%s[%u] is NULL", field,
                            index);
    }
    if (cb_clip_skeleton_signature(clip) != cb_skeleton_signature(c->skeleton)) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cb_crowd_desc.%s[%u] ('%s') was built for another skeleton", field,
                            index, cb_clip_name(clip));
    }
    if (cb_clip_is_additive(clip) != additive) {
        return cb_error_set(err, CB_ERR_MISMATCH, "cb_crowd_desc.%s[%u] ('%s') %s additive",
                            field, index, cb_clip_name(clip), additive ? "must be" : "must not be");
    }
    if (!cb_clip_is_looping(clip)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.%s[%u] ('%s') must loop: the crowd wraps its phases",
                            field, index, cb_clip_name(clip));
    }
    return CB_OK;
}

/* The layer's mask: the given span (checked), a subtree of mask_joint, or NULL for all joints. */
static cb_result build_layer_mask(cb_crowd *c, const cb_crowd_layer *layer, const char *field,
                                  float **out, cb_error *err)
{
    *out = NULL;
    if (layer->clip == NULL || (layer->mask.count == 0 && layer->mask_joint == NULL)) {
        return CB_OK;
    }
    float *mask = cb_alloc(&c->allocator, c->soa_joint_count * sizeof(float), 64);
    if (mask == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_desc.%s: mask", field);
    }
    *out = mask;
    if (layer->mask.count > 0) {
        if (layer->mask.ptr == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_desc.%s.mask.ptr is NULL",
                                field);
        }
        if (layer->mask.count < c->joint_count) {
            return cb_error_set(err, CB_ERR_MISMATCH,
                                "cb_crowd_desc.%s.mask has %zu weights for %zu joints", field,
                                layer->mask.count, c->joint_count);
        }
        for (size_t j = 0; j < c->soa_joint_count; ++j) {
            float w = j < c->joint_count ? layer->mask.ptr[j] : 0.0f;
            if (!(w >= 0.0f && w <= 1.0f)) {
                return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                    "cb_crowd_desc.%s.mask[%zu] = %g is outside [0, 1]", field,
                                    j, (double)w);
            }
            mask[j] = w;
        }
        return CB_OK;
    }
    cb_mask_rule rule = {.joint = layer->mask_joint, .weight = 1.0f};
    cb_error inner = {0};
    cb_result r = cb_skeleton_build_mask(c->skeleton, 0.0f, &rule, 1,
                                         (cb_float_span){mask, c->soa_joint_count}, &inner);
    if (r != CB_OK) {
        return cb_error_set(err, r, "cb_crowd_desc.%s.mask_joint: %s", field, inner.message);
    }
    return CB_OK;
}

/* Node positions for the solver: given, or the clips' root velocities. */
static cb_result node_positions(const cb_crowd_desc *d, cb_solver_desc *sd, float *pos,
                                cb_error *err)
{
    uint32_t dim = sd->kind == CB_SOLVER_KIND_DIRECT ? 0 : sd->dimension;
    if (dim == 0) {
        sd->nodes = NULL;
        return CB_OK;
    }
    for (uint32_t k = 0; k < d->blend.clip_count; ++k) {
        if (d->blend.positions != NULL) {
            for (uint32_t e = 0; e < dim; ++e) {
                pos[k * dim + e] = d->blend.positions[k * dim + e];
            }
            continue;
        }
        cb_clip_root_motion rm = cb_clip_query_root_motion(d->blend.clips[k]);
        if (dim == 1) {
            pos[k] = rm.forward_mps;
        } else {
            pos[2 * k] = rm.right_mps;
            pos[2 * k + 1] = rm.forward_mps;
        }
    }
    (void)err;
    sd->nodes = pos;
    return CB_OK;
}

/* Carves the per-character arrays out of one block. */
static void *carve(char **cursor, size_t bytes)
{
    void *p = *cursor;
    *cursor += cb_round_up(bytes, 64);
    return p;
}

static size_t state_bytes(uint32_t capacity, uint32_t param_count, uint32_t node_count,
                          bool keep_weights)
{
    size_t n = capacity;
    size_t b = 3 * cb_round_up(n * sizeof(float), 64) + cb_round_up(n * sizeof(cb_root_delta), 64) +
               cb_round_up(param_count * sizeof(cb_crowd_column), 64) +
               param_count * cb_round_up(n * sizeof(float), 64);
    if (keep_weights) {
        b += node_count * cb_round_up(n * sizeof(float), 64);
    }
    return b;
}

static cb_result create_solver(cb_crowd *c, const cb_crowd_desc *d, cb_error *err)
{
    cb_solver_desc sd = d->blend.solver;
    sd.node_count = d->blend.clip_count;
    sd.allocator = d->allocator;
    sd = cb_solver_query_desc(&sd);
    float *pos = cb_alloc(&c->allocator, (size_t)d->blend.clip_count * 2 * sizeof(float), 16);
    if (pos == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: node positions");
    }
    cb_result r = node_positions(d, &sd, pos, err);
    cb_error inner = {0};
    if (r == CB_OK) {
        r = cb_solver_create(&sd, &c->solver, &inner);
        if (r != CB_OK) {
            cb_error_set(err, r, "cb_crowd_desc.blend: %s", inner.message);
        }
    }
    cb_free(&c->allocator, pos, (size_t)d->blend.clip_count * 2 * sizeof(float));
    return r;
}

cb_result cb_crowd_create(const cb_crowd_desc *desc, cb_crowd **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_create: desc or out is NULL");
    }
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
    if (desc->blend.clips == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_crowd_desc.blend.clips is NULL");
    }
    if (desc->blend.clip_count == 0 || desc->blend.clip_count > CB_SOLVER_MAX_NODES) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.blend.clip_count %u is outside 1..%d",
                            desc->blend.clip_count, CB_SOLVER_MAX_NODES);
    }
    cb_crowd_desc d = cb_crowd_query_desc(desc);
    if (d.batch_size > MAX_BATCH_SIZE) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.batch_size %u exceeds %d", desc->batch_size,
                            MAX_BATCH_SIZE);
    }
    size_t matrix_floats = cb_ltm_matrix_floats(d.matrix_layout);
    if (matrix_floats == 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "cb_crowd_desc.matrix_layout %d",
                            (int)desc->matrix_layout);
    }
    size_t joint_count = cb_skeleton_joint_count(d.skeleton);
    size_t packed = joint_count * matrix_floats * sizeof(float);
    if (d.matrix_stride_bytes < packed || d.matrix_stride_bytes % sizeof(float) != 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.matrix_stride_bytes %zu: need a multiple of 4 and at "
                            "least %zu",
                            d.matrix_stride_bytes, packed);
    }

    cb_crowd *c = cb_alloc_zeroed(&d.allocator, sizeof *c, _Alignof(cb_crowd));
    if (c == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: crowd");
    }
    c->allocator = d.allocator;
    c->skeleton = d.skeleton;
    c->joint_count = joint_count;
    c->group_count = cb_skeleton_group_count(d.skeleton);
    c->soa_joint_count = cb_skeleton_soa_joint_count(d.skeleton);
    c->capacity = d.capacity;
    c->batch_size = d.batch_size;
    c->node_count = d.blend.clip_count;
    c->layout = d.matrix_layout;
    c->matrix_floats = matrix_floats;
    c->matrix_stride = d.matrix_stride_bytes;
    c->profile = d.profile;

    for (uint32_t k = 0; k < d.blend.clip_count && r == CB_OK; ++k) {
        r = check_clip(c, d.blend.clips[k], false, "blend.clips", k, err);
    }
    if (r == CB_OK && d.additive.clip != NULL) {
        r = check_clip(c, d.additive.clip, true, "additive.clip", 0, err);
    }
    if (r == CB_OK && d.upper_body.clip != NULL) {
        r = check_clip(c, d.upper_body.clip, false, "upper_body.clip", 0, err);
    }
    if (r == CB_OK) {
        r = create_solver(c, &d, err);
    }
    if (r == CB_OK) {
        r = build_layer_mask(c, &d.additive, "additive", &c->additive_mask, err);
    }
    if (r == CB_OK) {
        r = build_layer_mask(c, &d.upper_body, "upper_body", &c->upper_mask, err);
    }
    if (r != CB_OK) {
        cb_crowd_destroy(c);
        return r;
    }
    c->blend_param_count = (uint32_t)cb_solver_param_count(c->solver);
    c->param_count = c->blend_param_count + 2;
    c->additive_clip = d.additive.clip;
    c->upper_clip = d.upper_body.clip;
    c->additive_duration = c->additive_clip ? cb_clip_duration(c->additive_clip) : 1.0f;
    c->upper_duration = c->upper_clip ? cb_clip_duration(c->upper_clip) : 1.0f;

    c->clips = cb_alloc(&c->allocator, c->node_count * sizeof *c->clips, 16);
    c->durations = cb_alloc(&c->allocator, c->node_count * sizeof(float), 16);
    c->handle_memory = cb_alloc(&c->allocator, cb_handle_pool_bytes(c->capacity), 64);
    c->state_bytes = state_bytes(c->capacity, c->param_count, c->node_count, d.keep_weights);
    c->state_memory = cb_alloc_zeroed(&c->allocator, c->state_bytes, 64);
    if (d.matrices == NULL) {
        c->own_matrices = true;
        c->matrices = cb_alloc_zeroed(&c->allocator, c->capacity * c->matrix_stride, 64);
    } else {
        c->matrices = (char *)d.matrices;
    }
    if (c->clips == NULL || c->durations == NULL || c->handle_memory == NULL ||
        c->state_memory == NULL || c->matrices == NULL) {
        cb_crowd_destroy(c);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY,
                            "cb_crowd_create: state for %u characters", c->capacity);
    }
    for (uint32_t k = 0; k < c->node_count; ++k) {
        c->clips[k] = d.blend.clips[k];
        c->durations[k] = cb_clip_duration(d.blend.clips[k]);
    }
    cb_handle_pool_init(&c->handles, c->capacity, c->handle_memory);
    char *cursor = c->state_memory;
    size_t n = c->capacity;
    c->phase = carve(&cursor, n * sizeof(float));
    c->additive_phase = carve(&cursor, n * sizeof(float));
    c->upper_phase = carve(&cursor, n * sizeof(float));
    c->root_motion = carve(&cursor, n * sizeof(cb_root_delta));
    c->columns = carve(&cursor, c->param_count * sizeof(cb_crowd_column));
    for (uint32_t p = 0; p < c->param_count; ++p) {
        c->columns[p].own = carve(&cursor, n * sizeof(float));
    }
    if (d.keep_weights) {
        c->kept_weights = carve(&cursor, (size_t)c->node_count * n * sizeof(float));
    }

    if (d.jobs != NULL) {
        c->jobs = d.jobs;
    } else {
        cb_jobs_desc jd = {.thread_count = d.thread_count, .allocator = d.allocator};
        r = cb_jobs_create(&jd, &c->jobs, err);
        if (r != CB_OK) {
            cb_crowd_destroy(c);
            return r;
        }
        c->own_jobs = true;
    }
    c->thread_count = cb_jobs_thread_count(c->jobs);
    c->thread_scratch = cb_alloc_zeroed(&c->allocator, c->thread_count * sizeof(void *), 16);
    if (c->thread_scratch == NULL) {
        cb_crowd_destroy(c);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: thread scratch");
    }
    for (uint32_t t = 0; t < c->thread_count; ++t) {
        if (cb_crowd_scratch_alloc(c, &c->thread_scratch[t]) != CB_OK) {
            cb_crowd_destroy(c);
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: thread scratch");
        }
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
    if (c->own_matrices) {
        cb_free(&a, c->matrices, c->capacity * c->matrix_stride);
    }
    cb_free(&a, c->state_memory, c->state_bytes);
    cb_free(&a, c->handle_memory, cb_handle_pool_bytes(c->capacity));
    cb_free(&a, c->durations, c->node_count * sizeof(float));
    cb_free(&a, c->clips, c->node_count * sizeof *c->clips);
    cb_free(&a, c->additive_mask, c->soa_joint_count * sizeof(float));
    cb_free(&a, c->upper_mask, c->soa_joint_count * sizeof(float));
    cb_solver_destroy(c->solver);
    cb_free(&a, c, sizeof *c);
}

/* ------------------------------------------------------------------------------------------ */
/* Scratch                                                                                    */

cb_result cb_crowd_scratch_alloc(cb_crowd *c, cb_crowd_scratch **out)
{
    size_t batch = c->batch_size, nodes = c->node_count;
    size_t entries = nodes + CB_CROWD_LAYER_ENTRIES;
    size_t bytes = cb_round_up(sizeof(cb_crowd_scratch), 64) +
                   cb_round_up(c->blend_param_count * batch * sizeof(float), 64) +
                   cb_round_up(2 * batch * sizeof(float), 64) +
                   cb_round_up(nodes * batch * sizeof(float), 64) + cb_round_up(batch, 64) +
                   cb_round_up(batch * nodes, 64) +
                   cb_round_up(CB_CROWD_POSE_CHUNK * c->group_count * cb_simd_group_bytes(), 64) +
                   cb_round_up(entries * sizeof(cb_blend_entry), 64) +
                   cb_round_up(nodes * sizeof(cb_root_motion_entry), 64);
    size_t align = cb_simd_group_align() > 64 ? cb_simd_group_align() : 64;
    char *m = cb_alloc_zeroed(&c->allocator, bytes, align);
    if (m == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    cb_crowd_scratch *s = (cb_crowd_scratch *)m;
    char *cursor = m + cb_round_up(sizeof(cb_crowd_scratch), 64);
    s->crowd = c;
    s->bytes = bytes;
    s->params = carve(&cursor, c->blend_param_count * batch * sizeof(float));
    s->layer_weights = carve(&cursor, 2 * batch * sizeof(float));
    s->weights = carve(&cursor, nodes * batch * sizeof(float));
    s->active_count = carve(&cursor, batch);
    s->active = carve(&cursor, batch * nodes);
    s->poses = carve(&cursor, CB_CROWD_POSE_CHUNK * c->group_count * cb_simd_group_bytes());
    s->entries = carve(&cursor, entries * sizeof(cb_blend_entry));
    s->root_entries = carve(&cursor, nodes * sizeof(cb_root_motion_entry));
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
    keep->stats.characters_updated += s->stats.characters_updated;
    keep->stats.nonfinite_params += s->stats.nonfinite_params;
    keep->stats.clamped_weights += s->stats.clamped_weights;
    for (int k = 0; k < CB_CROWD_STAGE_COUNT; ++k) {
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

cb_result cb_crowd_add(cb_crowd *c, float phase, cb_character *out)
{
    if (c == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(phase)) {
        return CB_ERR_NOT_FINITE;
    }
    uint32_t id;
    cb_result r = cb_handle_pool_add(&c->handles, &id);
    if (r != CB_OK) {
        return r;
    }
    uint32_t i = c->handles.count - 1;
    float p = phase - floorf(phase);
    c->phase[i] = c->additive_phase[i] = c->upper_phase[i] = p < 1.0f ? p : 0.0f;
    c->root_motion[i] = (cb_root_delta){{0.0f, 0.0f, 0.0f}, 0.0f};
    for (uint32_t k = 0; k < c->param_count; ++k) {
        c->columns[k].own[i] = 0.0f;
    }
    if (c->kept_weights != NULL) {
        for (uint32_t n = 0; n < c->node_count; ++n) {
            c->kept_weights[(size_t)n * c->capacity + i] = 0.0f;
        }
    }
    out->id = id;
    return CB_OK;
}

cb_result cb_crowd_remove(cb_crowd *c, cb_character ch)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    uint32_t from, to;
    cb_result r = cb_handle_pool_remove(&c->handles, ch.id, &from, &to);
    if (r != CB_OK || from == to) {
        return r;
    }
    c->phase[to] = c->phase[from];
    c->additive_phase[to] = c->additive_phase[from];
    c->upper_phase[to] = c->upper_phase[from];
    c->root_motion[to] = c->root_motion[from];
    for (uint32_t k = 0; k < c->param_count; ++k) {
        c->columns[k].own[to] = c->columns[k].own[from];
    }
    if (c->kept_weights != NULL) {
        for (uint32_t n = 0; n < c->node_count; ++n) {
            float *row = c->kept_weights + (size_t)n * c->capacity;
            row[to] = row[from];
        }
    }
    /* Outputs follow the character, so dense index `to` reads correct matrices until the next
     * update. */
    memcpy(c->matrices + to * c->matrix_stride, c->matrices + from * c->matrix_stride,
           c->joint_count * c->matrix_floats * sizeof(float));
    return CB_OK;
}

uint32_t cb_crowd_count(const cb_crowd *c)
{
    return c != NULL ? c->handles.count : 0;
}

cb_result cb_crowd_index_of(const cb_crowd *c, cb_character ch, uint32_t *dense)
{
    if (c == NULL || dense == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    return cb_handle_pool_lookup(&c->handles, ch.id, dense);
}

cb_character cb_crowd_character_at(const cb_crowd *c, uint32_t dense)
{
    cb_character ch = {0};
    if (c != NULL && dense < c->handles.count) {
        ch.id = cb_handle_pool_id_at(&c->handles, dense);
    }
    return ch;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters                                                                                 */

uint32_t cb_crowd_param_count(const cb_crowd *c)
{
    return c != NULL ? c->param_count : 0;
}

uint32_t cb_crowd_param_index(const cb_crowd *c, cb_crowd_param role, uint32_t which)
{
    if (c == NULL) {
        return 0;
    }
    switch (role) {
    case CB_CROWD_PARAM_BLEND:
        return which < c->blend_param_count ? which : c->param_count;
    case CB_CROWD_PARAM_ADDITIVE_WEIGHT:
        return c->blend_param_count;
    case CB_CROWD_PARAM_UPPER_WEIGHT:
        return c->blend_param_count + 1;
    }
    return c->param_count;
}

float *cb_crowd_param_column(cb_crowd *c, uint32_t param)
{
    return c != NULL && param < c->param_count ? c->columns[param].own : NULL;
}

cb_result cb_crowd_set_param_view(cb_crowd *c, uint32_t param, const float *base,
                                  size_t stride_bytes)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (param >= c->param_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (base == NULL) {
        c->columns[param].view = NULL;
        return CB_OK;
    }
    if (stride_bytes < sizeof(float)) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (!cb_is_aligned(base, sizeof(float)) || stride_bytes % sizeof(float) != 0) {
        return CB_ERR_MISALIGNED;
    }
    c->columns[param].view = (const char *)base;
    c->columns[param].view_stride = stride_bytes;
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Outputs and stats                                                                          */

size_t cb_crowd_joint_count(const cb_crowd *c)
{
    return c != NULL ? c->joint_count : 0;
}

const float *cb_crowd_matrices(const cb_crowd *c, uint32_t dense)
{
    if (c == NULL || dense >= c->handles.count) {
        return NULL;
    }
    return (const float *)(c->matrices + dense * c->matrix_stride);
}

const cb_root_delta *cb_crowd_root_motion(const cb_crowd *c)
{
    return c != NULL ? c->root_motion : NULL;
}

const float *cb_crowd_phases(const cb_crowd *c)
{
    return c != NULL ? c->phase : NULL;
}

const float *cb_crowd_weights(const cb_crowd *c, size_t *stride)
{
    if (c == NULL || c->kept_weights == NULL) {
        return NULL;
    }
    if (stride != NULL) {
        *stride = c->capacity;
    }
    return c->kept_weights;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

uint64_t cb_crowd_output_hash(const cb_crowd *c)
{
    uint64_t h = 14695981039346656037ull;
    if (c == NULL) {
        return h;
    }
    size_t bytes = c->joint_count * c->matrix_floats * sizeof(float);
    for (uint32_t i = 0; i < c->handles.count; ++i) {
        h = fnv1a(h, c->matrices + i * c->matrix_stride, bytes);
    }
    return fnv1a(h, c->root_motion, c->handles.count * sizeof(cb_root_delta));
}

cb_crowd_stats cb_crowd_query_stats(const cb_crowd *c)
{
    cb_crowd_stats total = {0};
    if (c == NULL) {
        return total;
    }
    total.updates = c->updates;
    for (const cb_crowd_scratch *s = c->scratch_list; s != NULL; s = s->next) {
        total.characters_updated += s->stats.characters_updated;
        total.nonfinite_params += s->stats.nonfinite_params;
        total.clamped_weights += s->stats.clamped_weights;
        for (int k = 0; k < CB_CROWD_STAGE_COUNT; ++k) {
            total.stage_ns[k] += s->stats.stage_ns[k];
        }
    }
    return total;
}

void cb_crowd_use_reference_kernels(cb_crowd *c, bool use_ref)
{
    c->use_ref = use_ref;
}

void cb_crowd_reset_stats(cb_crowd *c)
{
    if (c == NULL) {
        return;
    }
    c->updates = 0;
    for (cb_crowd_scratch *s = c->scratch_list; s != NULL; s = s->next) {
        memset(&s->stats, 0, sizeof s->stats);
    }
}
