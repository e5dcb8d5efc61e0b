/* cb_graph_create_blend: the graph of a locomotion blend space, built through the public
 * builder. The clips become nodes of one blend space (or a direct blend), and on top of it, when
 * given, a masked override layer (CB_GRAPH_BLEND_UPPER_WEIGHT) and an additive layer
 * (CB_GRAPH_BLEND_ADDITIVE_WEIGHT). The blend's clips share one sync group, so one phase per
 * character advances at their weight-averaged duration, and the graph compiles flat; with
 * CB_GRAPH_BLEND_SYNC_MOVING each clip that plays in place keeps a group of its own. */
#include <stdio.h>
#include <string.h>

#include "graph/graph_impl.h"

cb_graph_blend_desc cb_graph_query_blend_desc(const cb_graph_blend_desc *desc)
{
    cb_graph_blend_desc d = desc != NULL ? *desc : (cb_graph_blend_desc){0};
    d.solver = cb_solver_query_desc(&d.solver);
    if (d.name == NULL) {
        d.name = CB_GRAPH_BLEND_DEFAULT_NAME;
    }
    if (d.sync == _CB_GRAPH_BLEND_SYNC_DEFAULT) {
        d.sync = CB_GRAPH_BLEND_SYNC_ALL;
    }
    return d;
}

static cb_result check_clip(const cb_graph_blend_desc *d, const cb_clip *clip, bool additive,
                            const char *field, uint32_t index, cb_error *err)
{
    if (clip == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_blend_desc.%s[%u] is NULL", field,
                            index);
    }
    if (cb_clip_skeleton_signature(clip) != cb_skeleton_signature(d->skeleton)) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cb_graph_blend_desc.%s[%u] ('%s') was built for another skeleton",
                            field, index, cb_clip_name(clip));
    }
    if (cb_clip_is_additive(clip) != additive) {
        return cb_error_set(err, CB_ERR_MISMATCH, "cb_graph_blend_desc.%s[%u] ('%s') %s additive",
                            field, index, cb_clip_name(clip), additive ? "must be" : "must not be");
    }
    if (!cb_clip_is_looping(clip)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_graph_blend_desc.%s[%u] ('%s') must loop: the crowd wraps its "
                            "phases",
                            field, index, cb_clip_name(clip));
    }
    return CB_OK;
}

/* Node positions for the solver: given, or the clips' root velocities. */
static void node_positions(const cb_graph_blend_desc *d, uint32_t dim, float *pos)
{
    for (uint32_t k = 0; k < d->clip_count; ++k) {
        if (d->positions != NULL) {
            for (uint32_t e = 0; e < dim; ++e) {
                pos[k * dim + e] = d->positions[k * dim + e];
            }
            continue;
        }
        cb_clip_root_motion rm = cb_clip_query_root_motion(d->clips[k]);
        if (dim == 1) {
            pos[k] = rm.forward_mps;
        } else {
            /* +X, to the left: the axes of the root motion (0 - r: an in-place clip stays +0). */
            pos[2 * k] = 0.0f - rm.right_mps;
            pos[2 * k + 1] = rm.forward_mps;
        }
    }
}

/* Whether two clips got the same derived position, and which: in-place clips all have root
 * speed 0, and a 1D space over them made a step of its weights (issue 11). */
static bool equal_positions(const float *pos, uint32_t dim, uint32_t count, uint32_t *first,
                            uint32_t *second)
{
    for (uint32_t i = 0; i < count; ++i) {
        for (uint32_t j = i + 1; j < count; ++j) {
            bool same = true;
            for (uint32_t e = 0; e < dim; ++e) {
                same = same && pos[i * dim + e] == pos[j * dim + e];
            }
            if (same) {
                *first = i, *second = j;
                return true;
            }
        }
    }
    return false;
}

/* The layer's clip node and its entry in the layers node. */
static cb_result add_layer(cb_graph_builder *b, const cb_graph_blend_layer *l, cb_layer_mode mode,
                           const char *weight, uint32_t index, cb_graph_layer *out, cb_error *err)
{
    char name[32];
    snprintf(name, sizeof name, "layer_%u", index);
    cb_graph_clip_desc cd = {.name = name, .clip = cb_clip_name(l->clip)};
    cb_graph_node node;
    cb_result r = cb_graph_add_clip(b, &cd, &node, err);
    *out = (cb_graph_layer){
        .node = node, .mode = mode, .weight = weight, .mask_joint = l->mask_joint, .mask = l->mask};
    return r;
}

/* Does clip k play in place (its root speed below CB_GRAPH_BLEND_IN_PLACE_MPS)? */
static bool in_place(const cb_graph_blend_desc *d, uint32_t k)
{
    return cb_clip_query_root_motion(d->clips[k]).speed_mps < CB_GRAPH_BLEND_IN_PLACE_MPS;
}

/* Does any of the blend's clips move its root? */
static bool any_moves(const cb_graph_blend_desc *d)
{
    for (uint32_t k = 0; k < d->clip_count; ++k) {
        if (!in_place(d, k)) {
            return true;
        }
    }
    return false;
}

static cb_result check_blend_desc(const cb_graph_blend_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cb_graph_blend_desc: a canary is not zero");
    }
    if (d->skeleton == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_blend_desc.skeleton is NULL");
    }
    if (d->clips == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_blend_desc.clips is NULL");
    }
    if (d->clip_count == 0 || d->clip_count > CB_SOLVER_MAX_NODES) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_graph_blend_desc.clip_count %u is outside 1..%d", d->clip_count,
                            CB_SOLVER_MAX_NODES);
    }
    if ((unsigned)d->sync >= _CB_GRAPH_BLEND_SYNC_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_graph_blend_desc.sync %d is not a cb_graph_blend_sync",
                            (int)d->sync);
    }
    cb_result r = CB_OK;
    for (uint32_t k = 0; k < d->clip_count && r == CB_OK; ++k) {
        r = check_clip(d, d->clips[k], false, "clips", k, err);
    }
    if (r == CB_OK && d->additive.clip != NULL) {
        r = check_clip(d, d->additive.clip, true, "additive.clip", 0, err);
    }
    if (r == CB_OK && d->upper_body.clip != NULL) {
        r = check_clip(d, d->upper_body.clip, false, "upper_body.clip", 0, err);
    }
    if (r == CB_OK && d->sync == CB_GRAPH_BLEND_SYNC_MOVING && !any_moves(d)) {
        r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                         "cb_graph_blend_desc.sync MOVING: no clip moves its root (every root "
                         "speed is below CB_GRAPH_BLEND_IN_PLACE_MPS), so none would keep in "
                         "step: use CB_GRAPH_BLEND_SYNC_ALL");
    }
    return r;
}

/* The builder resolves clips by name: give it every clip once (the blend's, then the layers'
 * clips, in the desc's order). Returns their count. */
static uint32_t distinct_clips(const cb_graph_blend_desc *d, const cb_clip **clips)
{
    const cb_clip *all[CB_SOLVER_MAX_NODES + 2];
    uint32_t all_count = 0, clip_count = 0;
    for (uint32_t k = 0; k < d->clip_count; ++k) {
        all[all_count++] = d->clips[k];
    }
    if (d->upper_body.clip != NULL) {
        all[all_count++] = d->upper_body.clip;
    }
    if (d->additive.clip != NULL) {
        all[all_count++] = d->additive.clip;
    }
    for (uint32_t k = 0; k < all_count; ++k) {
        bool seen = false;
        for (uint32_t j = 0; j < clip_count; ++j) {
            seen = seen || clips[j] == all[k];
        }
        if (!seen) {
            clips[clip_count++] = all[k];
        }
    }
    return clip_count;
}

/* The blend's parameters (one per clip for a direct blend, one per dimension for a blend space)
 * and the two layer weights. names holds the parameters' text, param_names points into it. */
static cb_result add_params(cb_graph_builder *b, const cb_graph_blend_desc *d, char (*names)[20],
                            const char **param_names, cb_error *inner)
{
    bool direct = d->solver.kind == CB_SOLVER_KIND_DIRECT;
    uint32_t param_count = direct ? d->clip_count : d->solver.dimension;
    cb_result r = CB_OK;
    for (uint32_t p = 0; p < param_count && r == CB_OK; ++p) {
        snprintf(names[p], sizeof names[p], CB_GRAPH_BLEND_PARAM_PREFIX "%u", p);
        param_names[p] = names[p];
        r = cb_graph_add_param(b, names[p], CB_PARAM_FLOAT, 0.0f, inner);
    }
    if (r == CB_OK)
        r = cb_graph_add_param(b, CB_GRAPH_BLEND_ADDITIVE_WEIGHT, CB_PARAM_FLOAT, 0.0f, inner);
    if (r == CB_OK)
        r = cb_graph_add_param(b, CB_GRAPH_BLEND_UPPER_WEIGHT, CB_PARAM_FLOAT, 0.0f, inner);
    return r;
}

/* Does clip k keep to a group of its own (desc.sync MOVING, and the clip plays in place)? */
static bool apart(const cb_graph_blend_desc *d, uint32_t k)
{
    return d->sync == CB_GRAPH_BLEND_SYNC_MOVING && in_place(d, k);
}

/* One clip node per blend clip, clip_<k>. */
static cb_result add_clip_nodes(cb_graph_builder *b, const cb_graph_blend_desc *d,
                                cb_graph_node *children, cb_error *inner)
{
    bool direct = d->solver.kind == CB_SOLVER_KIND_DIRECT;
    cb_result r = CB_OK;
    for (uint32_t k = 0; k < d->clip_count && r == CB_OK; ++k) {
        char name[32], group[32];
        snprintf(name, sizeof name, "clip_%u", k);
        snprintf(group, sizeof group, "in_place_%u", k);
        /* The blend's clips keep in step (a blend space's do by default; a direct node's
         * children are given the group by name), but for a clip kept apart. */
        cb_graph_clip_desc cd = {.name = name,
                                 .clip = cb_clip_name(d->clips[k]),
                                 .sync_group = apart(d, k) ? group
                                               : direct    ? "blend"
                                                           : NULL};
        r = cb_graph_add_clip(b, &cd, &children[k], inner);
    }
    return r;
}

/* A blend space needs its nodes apart: refuses derived positions that coincide. */
static cb_result check_distinct_positions(const cb_graph_blend_desc *d, const float *positions,
                                          cb_error *err)
{
    uint32_t i, j;
    if (d->positions == NULL &&
        equal_positions(positions, d->solver.dimension, d->clip_count, &i, &j)) {
        return cb_error_set(err, CB_ERR_DUPLICATE,
                            "cb_graph_blend_desc.clips[%u] ('%s') and [%u] ('%s') have the "
                            "same root velocity, and positions is NULL: give positions (clips "
                            "that play in place all have velocity 0)",
                            i, cb_clip_name(d->clips[i]), j, cb_clip_name(d->clips[j]));
    }
    return CB_OK;
}

/* The node the layers go over: a direct blend of the clip nodes, or a blend space over them at
 * positions. */
static cb_result add_base(cb_graph_builder *b, const cb_graph_blend_desc *d,
                          const char **param_names, cb_graph_node *children, const float *positions,
                          cb_graph_node *base, cb_error *inner)
{
    if (d->solver.kind == CB_SOLVER_KIND_DIRECT) {
        cb_graph_direct_desc direct_desc = {.name = "blend",
                                            .children = children,
                                            .weights = param_names,
                                            .child_count = d->clip_count};
        return cb_graph_add_direct(b, &direct_desc, base, inner);
    }
    cb_graph_blend_space_desc bs = {
        .name = "blend",
        .solver = d->solver,
        .params = {param_names[0], d->solver.dimension > 1 ? param_names[1] : NULL},
        .children = children,
        .positions = positions,
        .child_count = d->clip_count};
    return cb_graph_add_blend_space(b, &bs, base, inner);
}

/* The upper-body and additive layers over base, those the desc gives, under one layers node. */
static cb_result add_layers(cb_graph_builder *b, const cb_graph_blend_desc *d, cb_graph_node base,
                            cb_error *inner)
{
    cb_graph_layer layers[2];
    uint32_t layer_count = 0;
    cb_result r = CB_OK;
    if (d->upper_body.clip != NULL) {
        r = add_layer(b, &d->upper_body, CB_LAYER_OVERRIDE, CB_GRAPH_BLEND_UPPER_WEIGHT,
                      layer_count, &layers[layer_count], inner);
        layer_count++;
    }
    if (r == CB_OK && d->additive.clip != NULL) {
        r = add_layer(b, &d->additive, CB_LAYER_ADDITIVE, CB_GRAPH_BLEND_ADDITIVE_WEIGHT,
                      layer_count, &layers[layer_count], inner);
        layer_count++;
    }
    if (r == CB_OK && layer_count > 0) {
        cb_graph_layers_desc ld = {
            .name = "layers", .base = base, .layers = layers, .layer_count = layer_count};
        cb_graph_node root;
        r = cb_graph_add_layers(b, &ld, &root, inner);
    }
    return r;
}

cb_result cb_graph_create_blend(const cb_graph_blend_desc *desc, cb_graph **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "cb_graph_create_blend: desc or out is NULL");
    }
    cb_result r = check_blend_desc(desc, err);
    if (r != CB_OK) {
        return r;
    }
    const cb_graph_blend_desc dd = cb_graph_query_blend_desc(desc), *d = &dd;
    const cb_clip *clips[CB_SOLVER_MAX_NODES + 2];
    uint32_t clip_count = distinct_clips(d, clips);
    cb_graph_builder_desc bd = {.skeleton = d->skeleton,
                                .clips = clips,
                                .clip_count = clip_count,
                                .name = d->name,
                                .allocator = d->allocator};
    cb_graph_builder *b = NULL;
    cb_error inner = {0};
    r = cb_graph_builder_create(&bd, &b, &inner);
    if (r != CB_OK) {
        return cb_error_set(err, r, "cb_graph_blend_desc: %s", inner.message);
    }
    char names[CB_SOLVER_MAX_NODES][20]; /* "blend_" and any uint32_t */
    const char *param_names[CB_SOLVER_MAX_NODES];
    r = add_params(b, d, names, param_names, &inner);
    cb_graph_node children[CB_SOLVER_MAX_NODES];
    if (r == CB_OK) {
        r = add_clip_nodes(b, d, children, &inner);
    }
    float positions[2 * CB_SOLVER_MAX_NODES] = {0}; /* a DIRECT blend has none */
    if (r == CB_OK && d->solver.kind != CB_SOLVER_KIND_DIRECT) {
        node_positions(d, d->solver.dimension, positions);
        cb_result same = check_distinct_positions(d, positions, err);
        if (same != CB_OK) {
            cb_graph_builder_destroy(b);
            return same;
        }
    }
    cb_graph_node base = {0};
    if (r == CB_OK) {
        r = add_base(b, d, param_names, children, positions, &base, &inner);
    }
    if (r == CB_OK) {
        r = add_layers(b, d, base, &inner);
    }
    if (r == CB_OK) {
        r = cb_graph_build(b, out, &inner);
    }
    cb_graph_builder_destroy(b);
    if (r != CB_OK) {
        /* The builder's message names the node; say which desc part made it. */
        const char *part = strstr(inner.message, "layer") != NULL ? "layers" : "blend";
        return cb_error_set(err, r, "cb_graph_blend_desc (%s): %s", part, inner.message);
    }
    return CB_OK;
}
