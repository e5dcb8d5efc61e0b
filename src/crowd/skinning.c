/* The crowd's skinning output (crowd.h, SKINNING): the desc's checks, the crowd's copy of the
 * inverse binds, the per-kind buffers and host views. The frame writes the matrices through
 * the graph runtime's local-to-model stage (cb_graph_outputs.skinning, update.c). */
#include <string.h>

#include "crowd/crowd_impl.h"
#include "ltm/ltm_kernels.h"

cb_result cb_crowd_check_skinning_desc(const cb_crowd_desc *d, size_t joint_count, cb_error *err)
{
    bool skin = d->inverse_binds.ptr != NULL || d->inverse_binds.count != 0;
    if (!skin && (d->skinning_layout != _CB_MATRIX_LAYOUT_DEFAULT || d->skinning_only)) {
        /* Most likely the binds were forgotten, not the layout set by accident. */
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.%s is set but inverse_binds is empty: skinning "
                            "needs the skeleton's inverse bind matrices",
                            d->skinning_only ? "skinning_only" : "skinning_layout");
    }
    if (!skin) {
        return CB_OK;
    }
    if (cb_ltm_matrix_floats(d->skinning_layout) == 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "cb_crowd_desc.skinning_layout %d",
                            (int)d->skinning_layout);
    }
    /* QTS is for hosts that skin with quaternions in the shader: it takes the place of the
     * skinning matrices, and the product with the inverse binds needs model matrices. */
    if (d->skinning_layout == CB_MATRIX_LAYOUT_QTS || d->matrix_layout == CB_MATRIX_LAYOUT_QTS) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.%s is QTS, which does not go with inverse_binds: "
                            "skinning matrices are MAT4 or MAT3X4, made from model matrices "
                            "(a QTS output is skinned in the shader instead)",
                            d->skinning_layout == CB_MATRIX_LAYOUT_QTS ? "skinning_layout"
                                                                       : "matrix_layout");
    }
    if (d->skinning_only && d->matrices != NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_crowd_desc.skinning_only keeps no model matrices, but matrices "
                            "(a host buffer for them) is set");
    }
    return cb_ltm_check_inverse_binds(d->inverse_binds, joint_count, "cb_crowd_desc.inverse_binds",
                                      err);
}

/* The inverse binds copied, and the rest pose's model and skinning matrices: what a character
 * holds from cb_crowd_add to its first update. */
cb_result cb_crowd_init_skinning(cb_crowd *c, const cb_crowd_desc *d, cb_error *err)
{
    CB_ASSERT(d->inverse_binds.ptr == NULL || d->skinning_layout != _CB_MATRIX_LAYOUT_DEFAULT);
    if (d->inverse_binds.ptr == NULL) {
        return CB_OK;
    }
    size_t n = c->joint_count;
    c->skinning_layout = d->skinning_layout; /* resolved by cb_crowd_query_desc */
    c->skinning_floats = cb_ltm_matrix_floats(c->skinning_layout);
    c->inverse_binds = cb_alloc(&c->allocator, n * 16 * sizeof(float), 64);
    c->rest_skinning = cb_alloc(&c->allocator, n * c->skinning_floats * sizeof(float), 64);
    if (c->inverse_binds == NULL || c->rest_skinning == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_crowd_create: inverse binds");
    }
    memcpy(c->inverse_binds, d->inverse_binds.ptr, n * 16 * sizeof(float));
    cb_ltm_job job = {.skeleton = c->skeleton,
                      .local = cb_skeleton_rest_pose(c->skeleton),
                      .model_layout = c->layout,
                      .model = {c->rest_matrices, n * c->matrix_floats},
                      .inverse_bind = {c->inverse_binds, n * 16},
                      .skinning_layout = c->skinning_layout,
                      .skinning = {c->rest_skinning, n * c->skinning_floats}};
    return cb_ltm_job_run(&job, err);
}

void cb_crowd_free_skinning(cb_crowd *c)
{
    size_t n = c->joint_count;
    cb_free(&c->allocator, c->inverse_binds, n * 16 * sizeof(float));
    cb_free(&c->allocator, c->rest_skinning, n * c->skinning_floats * sizeof(float));
}

size_t cb_crowd_skinning_bytes(const cb_crowd *c)
{
    return c->joint_count * c->skinning_floats * sizeof(float);
}

/* A kind's own skinning buffer; like the matrices, untouched until characters are added. */
cb_result cb_crowd_init_kind_skinning(cb_crowd *c, cb_crowd_kind *k, cb_error *err)
{
    if (c->inverse_binds == NULL) {
        return CB_OK;
    }
    k->own_skinning = cb_alloc_large(&c->allocator, c->capacity * cb_crowd_skinning_bytes(c), 64);
    if (k->own_skinning == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY,
                            "cb_crowd_create: skinning matrices of %u characters", c->capacity);
    }
    k->skinning = k->own_skinning;
    k->skinning_stride = cb_crowd_skinning_bytes(c);
    return CB_OK;
}

void cb_crowd_free_kind_skinning(cb_crowd *c, cb_crowd_kind *k)
{
    if (k->own_skinning != NULL) {
        cb_free(&c->allocator, k->own_skinning, c->capacity * cb_crowd_skinning_bytes(c));
    }
}

const float *cb_crowd_skinning(const cb_crowd *c, uint32_t kind, uint32_t dense)
{
    if (c == NULL || kind >= c->kind_count || dense >= c->kinds[kind].handles.count ||
        c->kinds[kind].skinning == NULL) {
        return NULL;
    }
    return (const float *)(c->kinds[kind].skinning + dense * c->kinds[kind].skinning_stride);
}

cb_result cb_crowd_set_skinning_view(cb_crowd *c, uint32_t kind, float *base, size_t stride_bytes)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (kind >= c->kind_count || c->inverse_binds == NULL) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    cb_crowd_kind *k = &c->kinds[kind];
    size_t bytes = cb_crowd_skinning_bytes(c);
    char *to = (char *)base;
    if (base == NULL) {
        to = k->own_skinning;
        stride_bytes = bytes;
    } else if (stride_bytes < bytes) {
        return CB_ERR_INVALID_ARGUMENT;
    } else if (!cb_is_aligned(base, sizeof(float)) || stride_bytes % sizeof(float) != 0) {
        return CB_ERR_MISALIGNED;
    }
    /* The characters keep their matrices across the switch (the header asks for a buffer that
     * does not overlap the current one; the same one again copies nothing). */
    for (uint32_t i = 0; i < k->handles.count && to != k->skinning; ++i) {
        memcpy(to + i * stride_bytes, k->skinning + i * k->skinning_stride, bytes);
    }
    k->skinning = to;
    k->skinning_stride = stride_bytes;
    return CB_OK;
}
