/* The graph builder: collects parameters, processors, nodes and post-process steps, checks each
 * as it is added (so an error names what was just added), and compiles them into a cb_graph.
 *
 * Children must exist before their parent, so node ids already give a topological order:
 * every edge goes from a larger id to a smaller one. The build keeps the nodes reachable from
 * the root, in descending id order (parents before children), and remaps ids. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_impl.h"

#include "crowdblend/sync.h"

/* ------------------------------------------------------------------------------------------ */
/* Growable arrays (build time only)                                                          */

typedef struct vec {
    void *data;
    size_t count, cap, elem;
} vec;

static bool vec_reserve(const cb_allocator *a, vec *v, size_t n)
{
    if (n <= v->cap) {
        return true;
    }
    size_t cap = v->cap ? v->cap * 2 : 8;
    while (cap < n) {
        cap *= 2;
    }
    void *d = cb_alloc(a, cap * v->elem, 16);
    if (d == NULL) {
        return false;
    }
    if (v->count > 0) {
        memcpy(d, v->data, v->count * v->elem);
    }
    cb_free(a, v->data, v->cap * v->elem);
    v->data = d;
    v->cap = cap;
    return true;
}

/* Appends n elements (copied from src, or zeroed when src is NULL); returns the first index. */
static bool vec_push(const cb_allocator *a, vec *v, const void *src, size_t n, size_t *at)
{
    if (!vec_reserve(a, v, v->count + n)) {
        return false;
    }
    void *dst = (char *)v->data + v->count * v->elem;
    if (src != NULL) {
        memcpy(dst, src, n * v->elem);
    } else {
        memset(dst, 0, n * v->elem);
    }
    if (at != NULL) {
        *at = v->count;
    }
    v->count += n;
    return true;
}

static void vec_free(const cb_allocator *a, vec *v)
{
    cb_free(a, v->data, v->cap * v->elem);
    v->data = NULL;
    v->count = v->cap = 0;
}

#define VEC_AT(v, type, i) (((type *)(v).data)[i])

/* ------------------------------------------------------------------------------------------ */

typedef struct bgroup {
    char name[CB_GRAPH_NAME_MAX + 1];
} bgroup;

/* A node as added: like gnode, plus what only the build needs. */
typedef struct bnode {
    gnode n;
    uint32_t explicit_group; /* blend spaces and clips: a named group, or GNONE */
    bool additive_clip;
} bnode;

struct cb_graph_builder {
    cb_allocator allocator;
    char name[CB_GRAPH_NAME_MAX + 1];
    const cb_skeleton *skeleton;
    const cb_clip **clips;
    uint32_t clip_count;
    vec params;      /* gparam */
    vec procs;       /* gproc */
    vec nodes;       /* bnode, in id order */
    vec edges;       /* gedge */
    vec edge_params; /* uint32_t */
    vec layers;      /* glayer (masks owned, freed with the builder) */
    vec sms;         /* gsm */
    vec states;      /* gstate */
    vec transitions; /* gtransition */
    vec conditions;  /* gcondition */
    vec iks;         /* gik */
    vec groups;      /* bgroup */
    uint32_t root;
    bool built; /* a builder builds once: the graph takes its solvers */
};

static bool valid_name(const char *name)
{
    return name != NULL && name[0] != '\0' && strlen(name) <= CB_GRAPH_NAME_MAX;
}

cb_result cb_graph_builder_create(const cb_graph_builder_desc *desc, cb_graph_builder **out,
                                  cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "cb_graph_builder_create: desc or out is NULL");
    }
    if (desc->_start_canary != 0 || desc->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cb_graph_builder_desc: a canary is not zero");
    }
    cb_result r = cb_allocator_check(&desc->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    if (desc->skeleton == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_builder_desc.skeleton is NULL");
    }
    if (desc->clip_count > 0 && desc->clips == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_builder_desc.clips is NULL");
    }
    for (uint32_t i = 0; i < desc->clip_count; ++i) {
        const cb_clip *c = desc->clips[i];
        if (c == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                                "cb_graph_builder_desc.clips[%u] is NULL", i);
        }
        if (cb_clip_skeleton_signature(c) != cb_skeleton_signature(desc->skeleton)) {
            return cb_error_set(err, CB_ERR_MISMATCH, "clip '%s' was built for another skeleton",
                                cb_clip_name(c));
        }
        for (uint32_t j = 0; j < i; ++j) {
            if (strcmp(cb_clip_name(c), cb_clip_name(desc->clips[j])) == 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE, "two clips are named '%s'",
                                    cb_clip_name(c));
            }
        }
    }
    cb_graph_builder *b = cb_alloc_zeroed(&desc->allocator, sizeof *b, _Alignof(cb_graph_builder));
    if (b == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_builder_create");
    }
    b->allocator = desc->allocator;
    snprintf(b->name, sizeof b->name, "%s", desc->name != NULL ? desc->name : "graph");
    b->skeleton = desc->skeleton;
    b->clip_count = desc->clip_count;
    b->clips =
        cb_alloc(&b->allocator, (desc->clip_count ? desc->clip_count : 1) * sizeof(void *), 16);
    if (b->clips == NULL) {
        cb_free(&b->allocator, b, sizeof *b);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_builder_create");
    }
    for (uint32_t i = 0; i < desc->clip_count; ++i) {
        b->clips[i] = desc->clips[i];
    }
    b->params.elem = sizeof(gparam);
    b->procs.elem = sizeof(gproc);
    b->nodes.elem = sizeof(bnode);
    b->edges.elem = sizeof(gedge);
    b->edge_params.elem = sizeof(uint32_t);
    b->layers.elem = sizeof(glayer);
    b->sms.elem = sizeof(gsm);
    b->states.elem = sizeof(gstate);
    b->transitions.elem = sizeof(gtransition);
    b->conditions.elem = sizeof(gcondition);
    b->iks.elem = sizeof(gik);
    b->groups.elem = sizeof(bgroup);
    b->root = CB_GRAPH_NO_NODE;
    *out = b;
    return CB_OK;
}

void cb_graph_builder_destroy(cb_graph_builder *b)
{
    if (b == NULL) {
        return;
    }
    const cb_allocator *a = &b->allocator;
    for (size_t i = 0; i < b->layers.count; ++i) {
        cb_free(a, VEC_AT(b->layers, glayer, i).mask,
                cb_skeleton_soa_joint_count(b->skeleton) * sizeof(float));
    }
    for (size_t i = 0; i < b->nodes.count; ++i) {
        bnode *n = &VEC_AT(b->nodes, bnode, i);
        if (n->n.type == GNODE_BLEND) {
            cb_solver_destroy(n->n.u.blend.solver);
        }
    }
    vec *all[] = {&b->params,      &b->procs,      &b->nodes, &b->edges,
                  &b->edge_params, &b->layers,     &b->sms,   &b->states,
                  &b->transitions, &b->conditions, &b->iks,   &b->groups};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        vec_free(a, all[i]);
    }
    cb_free(a, b->clips, (b->clip_count ? b->clip_count : 1) * sizeof(void *));
    cb_free(a, b, sizeof *b);
}

/* ------------------------------------------------------------------------------------------ */
/* Name resolution                                                                            */

static cb_result find_param(const cb_graph_builder *b, const char *name, const char *what,
                            uint32_t *out, cb_error *err)
{
    if (name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: parameter name is missing", what);
    }
    for (size_t i = 0; i < b->params.count; ++i) {
        if (strcmp(VEC_AT(b->params, gparam, i).name, name) == 0) {
            *out = (uint32_t)i;
            return CB_OK;
        }
    }
    return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: unknown parameter '%s'", what, name);
}

/* A parameter that must be numeric (float or int), e.g. a blend axis or an IK target. */
static cb_result find_number(const cb_graph_builder *b, const char *name, const char *what,
                             uint32_t *out, cb_error *err)
{
    cb_result r = find_param(b, name, what, out, err);
    if (r != CB_OK) {
        return r;
    }
    cb_param_type t = VEC_AT(b->params, gparam, *out).type;
    if (t != CB_PARAM_FLOAT && t != CB_PARAM_INT) {
        return cb_error_set(err, CB_ERR_MISMATCH, "%s: parameter '%s' is a %s, a number is needed",
                            what, name, t == CB_PARAM_BOOL ? "bool" : "trigger");
    }
    return CB_OK;
}

/* An optional numeric parameter: NULL gives GNONE. */
static cb_result find_optional_number(const cb_graph_builder *b, const char *name, const char *what,
                                      uint32_t *out, cb_error *err)
{
    *out = GNONE;
    return name == NULL ? CB_OK : find_number(b, name, what, out, err);
}

static cb_result find_clip(const cb_graph_builder *b, const char *name, const char *what,
                           const cb_clip **out, cb_error *err)
{
    if (name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: clip name is missing", what);
    }
    for (uint32_t i = 0; i < b->clip_count; ++i) {
        if (strcmp(cb_clip_name(b->clips[i]), name) == 0) {
            *out = b->clips[i];
            return CB_OK;
        }
    }
    return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: unknown clip '%s'", what, name);
}

static cb_result find_group(cb_graph_builder *b, const char *name, const char *what, uint32_t *out,
                            cb_error *err)
{
    *out = GNONE;
    if (name == NULL) {
        return CB_OK;
    }
    if (!valid_name(name)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: bad sync group name", what);
    }
    for (size_t i = 0; i < b->groups.count; ++i) {
        if (strcmp(VEC_AT(b->groups, bgroup, i).name, name) == 0) {
            *out = (uint32_t)i;
            return CB_OK;
        }
    }
    bgroup g;
    snprintf(g.name, sizeof g.name, "%s", name);
    size_t at;
    if (!vec_push(&b->allocator, &b->groups, &g, 1, &at)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    *out = (uint32_t)at;
    return CB_OK;
}

static cb_result find_joint(const cb_graph_builder *b, const char *name, const char *what,
                            uint32_t *out, cb_error *err)
{
    if (name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: joint name is missing", what);
    }
    size_t j;
    if (cb_skeleton_find_joint(b->skeleton, name, &j) != CB_OK) {
        return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: unknown joint '%s'", what, name);
    }
    *out = (uint32_t)j;
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters and processors                                                                  */

cb_result cb_graph_add_param(cb_graph_builder *b, const char *name, cb_param_type type,
                             float default_value, cb_error *err)
{
    if (b == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_add_param: builder is NULL");
    }
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "parameter: the builder has already built");
    }
    if (!valid_name(name)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "parameter: the name must have 1 to %d characters", CB_GRAPH_NAME_MAX);
    }
    if (type == _CB_PARAM_TYPE_DEFAULT) {
        type = CB_PARAM_FLOAT;
    }
    if ((unsigned)type >= _CB_PARAM_TYPE_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "parameter '%s': unknown type %d", name,
                            (int)type);
    }
    if (!isfinite(default_value)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "parameter '%s': default is not finite", name);
    }
    /* Ints are exact in a float up to 2^24; bools and triggers are 0 or 1. */
    if (type == CB_PARAM_INT &&
        (default_value != floorf(default_value) || fabsf(default_value) > 16777216.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "parameter '%s': an int's default must be a whole number up to 2^24 "
                            "(%g)",
                            name, (double)default_value);
    }
    if ((type == CB_PARAM_BOOL || type == CB_PARAM_TRIGGER) && default_value != 0.0f &&
        default_value != 1.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "parameter '%s': a bool's or trigger's default is 0 or 1 (%g)", name,
                            (double)default_value);
    }
    if (b->params.count >= CB_GRAPH_MAX_PARAMS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "parameter '%s': more than %d parameters", name,
                            CB_GRAPH_MAX_PARAMS);
    }
    uint32_t hash = cb_name_hash(name);
    for (size_t i = 0; i < b->params.count; ++i) {
        const gparam *p = &VEC_AT(b->params, gparam, i);
        if (strcmp(p->name, name) == 0) {
            return cb_error_set(err, CB_ERR_DUPLICATE, "parameter '%s' is declared twice", name);
        }
        if (p->hash == hash) {
            return cb_error_set(err, CB_ERR_DUPLICATE,
                                "parameters '%s' and '%s' have the same hash %08x: rename one",
                                p->name, name, hash);
        }
    }
    gparam p = {.hash = hash, .type = type, .written_by_graph = type == CB_PARAM_TRIGGER};
    snprintf(p.name, sizeof p.name, "%s", name);
    if (type == CB_PARAM_BOOL || type == CB_PARAM_TRIGGER) {
        p.default_value = default_value != 0.0f ? 1.0f : 0.0f;
    } else if (type == CB_PARAM_INT) {
        p.default_value = truncf(default_value);
    } else {
        p.default_value = default_value;
    }
    if (!vec_push(&b->allocator, &b->params, &p, 1, NULL)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "parameter '%s'", name);
    }
    return CB_OK;
}

static cb_result push_proc(cb_graph_builder *b, const gproc *p, const char *what, cb_error *err)
{
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: the builder has already built",
                            what);
    }
    if (b->procs.count >= CB_GRAPH_MAX_PARAMS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "%s: too many processors", what);
    }
    for (int k = 0; k < 5; ++k) {
        if (p->out[k] != GNONE) {
            gparam *out = &VEC_AT(b->params, gparam, p->out[k]);
            bool twice = false;
            for (int q = 0; q < k; ++q) {
                twice = twice || p->out[q] == p->out[k];
            }
            if (out->written_by_graph || twice) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "%s: parameter '%s' is already written by the graph", what,
                                    out->name);
            }
        }
    }
    for (int k = 0; k < 5; ++k) {
        if (p->out[k] != GNONE) {
            VEC_AT(b->params, gparam, p->out[k]).written_by_graph = true;
        }
    }
    if (!vec_push(&b->allocator, &b->procs, p, 1, NULL)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    return CB_OK;
}

/* A float parameter (processor inputs and outputs). */
static cb_result find_float(const cb_graph_builder *b, const char *name, const char *what,
                            uint32_t *out, cb_error *err)
{
    cb_result r = find_param(b, name, what, out, err);
    if (r == CB_OK && VEC_AT(b->params, gparam, *out).type != CB_PARAM_FLOAT) {
        return cb_error_set(err, CB_ERR_MISMATCH, "%s: parameter '%s' must be a float", what, name);
    }
    return r;
}

cb_result cb_graph_add_velocity_blend(cb_graph_builder *b, const cb_graph_velocity_blend_desc *d,
                                      cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "velocity blend: NULL argument");
    }
    const char *what = "velocity blend";
    gproc p = {.type = GPROC_VELOCITY_BLEND,
               .in = {GNONE, GNONE, GNONE},
               .a = d->min_sq_len == 0.0f ? 1e-4f : d->min_sq_len};
    if (!isfinite(p.a) || p.a < 0.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: min_sq_len must be >= 0", what);
    }
    cb_result r = find_float(b, d->x, what, &p.in[0], err);
    if (r == CB_OK)
        r = find_float(b, d->y, what, &p.in[1], err);
    if (r == CB_OK && d->z != NULL)
        r = find_float(b, d->z, what, &p.in[2], err);
    const char *outs[4] = {d->forward, d->backward, d->left, d->right};
    for (int k = 0; k < 4 && r == CB_OK; ++k) {
        r = find_float(b, outs[k], what, &p.out[k], err);
    }
    if (r == CB_OK && d->speed != NULL) {
        r = find_float(b, d->speed, what, &p.out[4], err);
    }
    return r != CB_OK ? r : push_proc(b, &p, what, err);
}

cb_result cb_graph_add_interp_to(cb_graph_builder *b, const cb_graph_interp_to_desc *d,
                                 cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "interp-to: NULL argument");
    }
    const char *what = "interp-to";
    gproc p = {.type = GPROC_INTERP_TO,
               .in = {GNONE, GNONE, GNONE},
               .out = {GNONE, GNONE, GNONE, GNONE, GNONE},
               .a = d->speed};
    if (!isfinite(d->speed)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: speed is not finite", what);
    }
    cb_result r = find_float(b, d->input, what, &p.in[0], err);
    if (r == CB_OK)
        r = find_float(b, d->output, what, &p.out[0], err);
    if (r == CB_OK && p.in[0] == p.out[0]) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: input and output are both '%s'",
                            what, d->input);
    }
    return r != CB_OK ? r : push_proc(b, &p, what, err);
}

cb_result cb_graph_add_quadrant(cb_graph_builder *b, const cb_graph_quadrant_desc *d, cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "quadrant: NULL argument");
    }
    const char *what = "quadrant";
    gproc p = {.type = GPROC_QUADRANT,
               .in = {GNONE, GNONE, GNONE},
               .out = {GNONE, GNONE, GNONE, GNONE, GNONE},
               .a = d->dead_zone_rad == 0.0f ? 0.1745329f : d->dead_zone_rad,
               .b = d->min_speed == 0.0f ? 0.1f : d->min_speed};
    if (!(p.a >= 0.0f && p.a <= 0.3926991f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: dead_zone_rad must be in [0, pi/8]",
                            what);
    }
    if (!(p.b >= 0.0f) || !isfinite(p.b)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: min_speed must be >= 0", what);
    }
    cb_result r = find_float(b, d->x, what, &p.in[0], err);
    if (r == CB_OK)
        r = find_float(b, d->y, what, &p.in[1], err);
    if (r == CB_OK)
        r = find_param(b, d->output, what, &p.out[0], err);
    if (r == CB_OK && VEC_AT(b->params, gparam, p.out[0]).type != CB_PARAM_INT) {
        return cb_error_set(err, CB_ERR_MISMATCH, "%s: output '%s' must be an int", what,
                            d->output);
    }
    return r != CB_OK ? r : push_proc(b, &p, what, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Nodes                                                                                      */

/* Common checks and the new node's slot; `what` receives "<kind> '<name>'" for messages. */
static cb_result begin_node(cb_graph_builder *b, const char *kind, const char *name, char *what,
                            size_t what_size, cb_error *err)
{
    snprintf(what, what_size, "%s '%s'", kind, name != NULL ? name : "");
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: the builder has already built its graph", what);
    }
    if (b->nodes.count >= CB_GRAPH_MAX_NODES) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "%s: more than %d nodes", what,
                            CB_GRAPH_MAX_NODES);
    }
    if (name != NULL && name[0] != '\0') {
        if (strlen(name) > CB_GRAPH_NAME_MAX) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: name longer than %d", what,
                                CB_GRAPH_NAME_MAX);
        }
        for (size_t i = 0; i < b->nodes.count; ++i) {
            if (strcmp(VEC_AT(b->nodes, bnode, i).n.name, name) == 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE, "%s: a node has that name already",
                                    what);
            }
        }
    }
    return CB_OK;
}

static cb_result check_children(const cb_graph_builder *b, const cb_graph_node *children,
                                uint32_t count, const char *what, cb_error *err)
{
    if (count == 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: no children (an empty blend)", what);
    }
    if (children == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: children is NULL", what);
    }
    if (count > CB_GRAPH_MAX_CHILDREN) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "%s: more than %d children", what,
                            CB_GRAPH_MAX_CHILDREN);
    }
    for (uint32_t k = 0; k < count; ++k) {
        if (children[k] >= b->nodes.count) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: child %u is not a node", what,
                                k);
        }
    }
    return CB_OK;
}

static cb_result push_node(cb_graph_builder *b, bnode *n, const cb_graph_node *children,
                           uint32_t child_count, const char *what, cb_graph_node *out,
                           cb_error *err)
{
    size_t first = b->edges.count;
    for (uint32_t k = 0; k < child_count; ++k) {
        gedge e = {.child = children[k], .root_motion = true};
        if (!vec_push(&b->allocator, &b->edges, &e, 1, NULL)) {
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
        }
    }
    n->n.first_edge = (uint32_t)first;
    n->n.edge_count = child_count;
    size_t at;
    if (!vec_push(&b->allocator, &b->nodes, n, 1, &at)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    b->root = CB_GRAPH_NO_NODE;
    if (out != NULL) {
        *out = (cb_graph_node)at;
    }
    return CB_OK;
}

cb_result cb_graph_add_clip(cb_graph_builder *b, const cb_graph_clip_desc *d, cb_graph_node *out,
                            cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip node: NULL argument");
    }
    char what[96];
    cb_result r = begin_node(b, "clip node", d->name, what, sizeof what, err);
    bnode n = {.n = {.type = GNODE_CLIP}};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    gclip *c = &n.n.u.clip;
    if (r == CB_OK)
        r = find_clip(b, d->clip, what, &c->clip, err);
    if (r != CB_OK) {
        return r;
    }
    c->speed = d->speed == 0.0f ? 1.0f : d->speed;
    if (!isfinite(c->speed)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: speed is not finite", what);
    }
    if (!(d->start_offset >= 0.0f && d->start_offset < 1.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: start_offset must be in [0, 1)",
                            what);
    }
    c->start_offset = d->start_offset;
    c->clamp = d->clamp || !cb_clip_is_looping(c->clip);
    c->duration_s = cb_clip_duration(c->clip);
    c->additive = cb_clip_is_additive(c->clip);
    c->has_markers = cb_clip_marker_count(c->clip) > 0;
    r = find_optional_number(b, d->speed_param, what, &c->speed_param, err);
    if (r == CB_OK)
        r = find_group(b, d->sync_group, what, &n.explicit_group, err);
    if (r != CB_OK) {
        return r;
    }
    n.additive_clip = c->additive;
    c->group = GNONE;
    return push_node(b, &n, NULL, 0, what, out, err);
}

cb_result cb_graph_add_blend_space(cb_graph_builder *b, const cb_graph_blend_space_desc *d,
                                   cb_graph_node *out, cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "blend space: NULL argument");
    }
    char what[96];
    cb_result r = begin_node(b, "blend space", d->name, what, sizeof what, err);
    if (r == CB_OK)
        r = check_children(b, d->children, d->child_count, what, err);
    if (r != CB_OK) {
        return r;
    }
    cb_solver_desc sd = d->solver;
    sd.node_count = d->child_count;
    sd.allocator = b->allocator;
    sd = cb_solver_query_desc(&sd);
    if (sd.kind == CB_SOLVER_KIND_DIRECT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: use a direct node for direct weights, not a direct blend space",
                            what);
    }
    if (d->positions == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: positions is NULL", what);
    }
    bnode n = {.n = {.type = GNODE_BLEND}};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    gblend *g = &n.n.u.blend;
    g->param_count = sd.dimension;
    for (uint32_t k = 0; k < g->param_count && r == CB_OK; ++k) {
        r = find_number(b, d->params[k], what, &g->params[k], err);
    }
    if (r == CB_OK)
        r = find_group(b, d->sync_group, what, &n.explicit_group, err);
    if (r != CB_OK) {
        return r;
    }
    sd.nodes = d->positions;
    cb_error inner = {0};
    r = cb_solver_create(&sd, &g->solver, &inner);
    if (r != CB_OK) {
        return cb_error_set(err, r, "%s: %s", what, inner.message);
    }
    r = push_node(b, &n, d->children, d->child_count, what, out, err);
    if (r != CB_OK) {
        cb_solver_destroy(g->solver);
    }
    return r;
}

cb_result cb_graph_add_direct(cb_graph_builder *b, const cb_graph_direct_desc *d,
                              cb_graph_node *out, cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "direct blend: NULL argument");
    }
    char what[96];
    cb_result r = begin_node(b, "direct blend", d->name, what, sizeof what, err);
    if (r == CB_OK)
        r = check_children(b, d->children, d->child_count, what, err);
    if (r == CB_OK && d->weights == NULL) {
        r = cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: weights is NULL", what);
    }
    if (r != CB_OK) {
        return r;
    }
    bnode n = {.n = {.type = GNODE_DIRECT}};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    size_t first = b->edge_params.count;
    for (uint32_t k = 0; k < d->child_count; ++k) {
        uint32_t p;
        r = find_number(b, d->weights[k], what, &p, err);
        if (r != CB_OK) {
            b->edge_params.count = first;
            return r;
        }
        if (!vec_push(&b->allocator, &b->edge_params, &p, 1, NULL)) {
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
        }
    }
    n.n.u.direct_first_param = (uint32_t)first;
    n.explicit_group = GNONE;
    return push_node(b, &n, d->children, d->child_count, what, out, err);
}

cb_result cb_graph_add_layers(cb_graph_builder *b, const cb_graph_layers_desc *d,
                              cb_graph_node *out, cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "layers: NULL argument");
    }
    char what[96];
    cb_result r = begin_node(b, "layers", d->name, what, sizeof what, err);
    if (r != CB_OK) {
        return r;
    }
    if (d->base >= b->nodes.count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: base is not a node", what);
    }
    if (d->layer_count > CB_GRAPH_MAX_LAYERS || (d->layer_count > 0 && d->layers == NULL)) {
        return cb_error_set(err, d->layers == NULL ? CB_ERR_NULL_ARGUMENT : CB_ERR_TOO_MANY,
                            "%s: layers missing or more than %d", what, CB_GRAPH_MAX_LAYERS);
    }
    cb_graph_node children[CB_GRAPH_MAX_LAYERS + 1];
    children[0] = d->base;
    size_t first_layer = b->layers.count;
    size_t soa = cb_skeleton_soa_joint_count(b->skeleton);
    for (uint32_t k = 0; k < d->layer_count; ++k) {
        const cb_graph_layer *l = &d->layers[k];
        glayer g = {.node = l->node,
                    .mode = l->mode == _CB_LAYER_MODE_DEFAULT ? CB_LAYER_OVERRIDE : l->mode};
        if (l->node >= b->nodes.count) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: layer %u's node does not exist",
                             what, k);
        } else if ((unsigned)g.mode >= _CB_LAYER_MODE_COUNT) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: layer %u: unknown mode", what, k);
        } else {
            const bnode *ln = &VEC_AT(b->nodes, bnode, l->node);
            bool additive = ln->n.type == GNODE_CLIP && ln->additive_clip;
            if (g.mode == CB_LAYER_ADDITIVE && !additive) {
                r = cb_error_set(err, CB_ERR_MISMATCH,
                                 "%s: layer %u is additive: its node must be a clip node with an "
                                 "additive clip",
                                 what, k);
            } else if (g.mode == CB_LAYER_OVERRIDE && additive) {
                r = cb_error_set(err, CB_ERR_MISMATCH,
                                 "%s: layer %u overrides with an additive clip", what, k);
            }
        }
        if (r == CB_OK)
            r = find_optional_number(b, l->weight, what, &g.weight_param, err);
        if (r == CB_OK && g.weight_param != GNONE) {
            VEC_AT(b->params, gparam, g.weight_param).is_weight = true;
        }
        if (r == CB_OK && l->mask_joint == NULL && l->mask.count > 0) {
            if (l->mask.ptr == NULL || l->mask.count < cb_skeleton_joint_count(b->skeleton)) {
                r = cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                                 "%s: layer %u: the mask needs %zu weights", what, k,
                                 cb_skeleton_joint_count(b->skeleton));
            } else if ((g.mask = cb_alloc(&b->allocator, soa * sizeof(float), 64)) == NULL) {
                r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
            } else {
                for (size_t j = 0; j < soa && r == CB_OK; ++j) {
                    float v = j < cb_skeleton_joint_count(b->skeleton) ? l->mask.ptr[j] : 0.0f;
                    if (!(v >= 0.0f && v <= 1.0f)) {
                        r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                         "%s: layer %u: mask[%zu] = %g is outside [0, 1]", what, k,
                                         j, (double)v);
                    }
                    g.mask[j] = v;
                }
                if (r != CB_OK) {
                    cb_free(&b->allocator, g.mask, soa * sizeof(float));
                    g.mask = NULL;
                }
            }
        }
        if (r == CB_OK && l->mask_joint != NULL) {
            g.mask = cb_alloc(&b->allocator, soa * sizeof(float), 64);
            if (g.mask == NULL) {
                r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
            } else {
                cb_mask_rule rule = {.joint = l->mask_joint, .weight = 1.0f};
                cb_error inner = {0};
                r = cb_skeleton_build_mask(b->skeleton, 0.0f, &rule, 1,
                                           (cb_float_span){g.mask, soa}, &inner);
                if (r != CB_OK) {
                    cb_free(&b->allocator, g.mask, soa * sizeof(float));
                    r = cb_error_set(err, r, "%s: layer %u: %s", what, k, inner.message);
                }
            }
        }
        if (r == CB_OK && !vec_push(&b->allocator, &b->layers, &g, 1, NULL)) {
            cb_free(&b->allocator, g.mask, soa * sizeof(float));
            r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
        }
        if (r != CB_OK) {
            for (size_t i = first_layer; i < b->layers.count; ++i) {
                cb_free(&b->allocator, VEC_AT(b->layers, glayer, i).mask, soa * sizeof(float));
            }
            b->layers.count = first_layer;
            return r;
        }
        children[k + 1] = l->node;
    }
    bnode n = {.n = {.type = GNODE_LAYERS}, .explicit_group = GNONE};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    n.n.u.layers.first_layer = (uint32_t)first_layer;
    n.n.u.layers.layer_count = d->layer_count;
    size_t first_edge = b->edges.count;
    r = push_node(b, &n, children, d->layer_count + 1, what, out, err);
    if (r == CB_OK) {
        /* Layers do not move the character: only the base carries root motion. */
        for (uint32_t k = 1; k <= d->layer_count; ++k) {
            VEC_AT(b->edges, gedge, first_edge + k).root_motion = false;
        }
    }
    return r;
}

static cb_result find_state(const gstate *states, uint32_t count, const char *name,
                            const char *what, const char *field, uint32_t *out, cb_error *err)
{
    if (name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: %s state is missing", what, field);
    }
    for (uint32_t s = 0; s < count; ++s) {
        if (strcmp(states[s].name, name) == 0) {
            *out = s;
            return CB_OK;
        }
    }
    return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: %s state '%s' does not exist", what, field,
                        name);
}

static cb_result add_condition(cb_graph_builder *b, const cb_graph_condition *c, const char *what,
                               uint32_t t, cb_error *err)
{
    gcondition g = {.op = c->op == _CB_COMPARE_DEFAULT ? CB_COMPARE_TRUE : c->op,
                    .value = c->value};
    cb_result r = find_param(b, c->param, what, &g.param, err);
    if (r != CB_OK) {
        return r;
    }
    const gparam *p = &VEC_AT(b->params, gparam, g.param);
    if ((unsigned)g.op >= _CB_COMPARE_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: transition %u: unknown comparison",
                            what, t);
    }
    if (!isfinite(g.value)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE,
                            "%s: transition %u: a condition value is not finite", what, t);
    }
    bool is_truth = g.op == CB_COMPARE_TRUE || g.op == CB_COMPARE_FALSE;
    bool ok;
    switch (p->type) {
    case CB_PARAM_FLOAT:
        ok = g.op == CB_COMPARE_GREATER || g.op == CB_COMPARE_LESS;
        break;
    case CB_PARAM_INT:
        ok = !is_truth;
        break;
    case CB_PARAM_BOOL:
        ok = is_truth;
        break;
    default: /* trigger */
        ok = g.op == CB_COMPARE_TRUE;
        break;
    }
    if (!ok) {
        static const char *const types[] = {"", "float", "int", "bool", "trigger"};
        return cb_error_set(
            err, CB_ERR_MISMATCH,
            "%s: transition %u: this comparison does not apply to %s parameter '%s'", what, t,
            types[p->type], p->name);
    }
    g.trigger = p->type == CB_PARAM_TRIGGER;
    if (!vec_push(&b->allocator, &b->conditions, &g, 1, NULL)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    return CB_OK;
}

cb_result cb_graph_add_state_machine(cb_graph_builder *b, const cb_graph_state_machine_desc *d,
                                     cb_graph_node *out, cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "state machine: NULL argument");
    }
    char what[96];
    cb_result r = begin_node(b, "state machine", d->name, what, sizeof what, err);
    if (r != CB_OK) {
        return r;
    }
    if (d->state_count == 0 || d->states == NULL) {
        return cb_error_set(err, CB_ERR_TOO_FEW, "%s: no states", what);
    }
    if (d->state_count > CB_GRAPH_MAX_STATES || d->transition_count > CB_GRAPH_MAX_TRANSITIONS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "%s: more than %d states or %d transitions", what,
                            CB_GRAPH_MAX_STATES, CB_GRAPH_MAX_TRANSITIONS);
    }
    if (d->transition_count > 0 && d->transitions == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: transitions is NULL", what);
    }
    gstate states[CB_GRAPH_MAX_STATES];
    cb_graph_node children[CB_GRAPH_MAX_STATES];
    for (uint32_t s = 0; s < d->state_count; ++s) {
        const cb_graph_state *st = &d->states[s];
        if (!valid_name(st->name)) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: state %u has no valid name",
                                what, s);
        }
        for (uint32_t o = 0; o < s; ++o) {
            if (strcmp(states[o].name, st->name) == 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE, "%s: two states are named '%s'", what,
                                    st->name);
            }
        }
        if (st->node >= b->nodes.count) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: state '%s' has no valid node",
                                what, st->name);
        }
        float speed = st->speed == 0.0f ? 1.0f : st->speed;
        if (!isfinite(speed)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: state '%s': speed is not finite", what,
                                st->name);
        }
        states[s] = (gstate){.node = st->node, .speed = speed};
        snprintf(states[s].name, sizeof states[s].name, "%s", st->name);
        children[s] = st->node;
    }
    gsm sm = {.state_count = d->state_count,
              .transition_count = d->transition_count,
              .inert_slot = GNONE};
    if (d->initial != NULL) {
        r = find_state(states, d->state_count, d->initial, what, "initial", &sm.initial, err);
        if (r != CB_OK) {
            return r;
        }
    }
    size_t first_transition = b->transitions.count, first_condition = b->conditions.count;
    for (uint32_t t = 0; t < d->transition_count && r == CB_OK; ++t) {
        const cb_graph_transition *tr = &d->transitions[t];
        gtransition g = {
            .from = GNONE,
            .first_condition = (uint32_t)b->conditions.count,
            .condition_count = tr->condition_count,
            .has_exit_time = tr->has_exit_time,
            .exit_time = tr->exit_time,
            .duration_s = tr->duration_s,
            .blend =
                tr->blend == _CB_TRANSITION_BLEND_DEFAULT ? CB_TRANSITION_CROSSFADE : tr->blend,
            .interruption = tr->interruption == _CB_INTERRUPTION_DEFAULT ? CB_INTERRUPTION_NONE
                                                                         : tr->interruption,
            .to_self = tr->to_self};
        if (tr->from != NULL) {
            r = find_state(states, d->state_count, tr->from, what, "source", &g.from, err);
        }
        if (r == CB_OK)
            r = find_state(states, d->state_count, tr->to, what, "destination", &g.to, err);
        if (r != CB_OK) {
            break;
        }
        if (!isfinite(tr->duration_s) || tr->duration_s < 0.0f ||
            (tr->has_exit_time && !(tr->exit_time >= 0.0f && isfinite(tr->exit_time)))) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                             "%s: transition %u: duration and exit time must be finite and >= 0",
                             what, t);
        } else if ((unsigned)g.blend >= _CB_TRANSITION_BLEND_COUNT ||
                   (unsigned)g.interruption >= _CB_INTERRUPTION_COUNT) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                             "%s: transition %u: bad blend or interruption", what, t);
        } else if (tr->condition_count > CB_GRAPH_MAX_CONDITIONS ||
                   (tr->condition_count > 0 && tr->conditions == NULL)) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                             "%s: transition %u: conditions missing or more "
                             "than %d",
                             what, t, CB_GRAPH_MAX_CONDITIONS);
        } else if (tr->condition_count == 0 && !tr->has_exit_time) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                             "%s: transition %u has neither conditions nor an exit time: it would "
                             "fire every frame",
                             what, t);
        }
        for (uint32_t c = 0; c < tr->condition_count && r == CB_OK; ++c) {
            r = add_condition(b, &tr->conditions[c], what, t, err);
        }
        if (r == CB_OK && !vec_push(&b->allocator, &b->transitions, &g, 1, NULL)) {
            r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
        }
        if (r == CB_OK &&
            (g.blend == CB_TRANSITION_INERTIALIZE || g.interruption != CB_INTERRUPTION_NONE)) {
            /* An interrupted transition continues from the pose shown by inertializing: the
             * machine needs offsets per character. Marked; numbered at build. */
            sm.inert_slot = 0;
        }
    }
    if (r != CB_OK) {
        b->transitions.count = first_transition;
        b->conditions.count = first_condition;
        return r;
    }
    size_t first_state;
    if (!vec_push(&b->allocator, &b->states, states, d->state_count, &first_state)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    sm.first_state = (uint32_t)first_state;
    sm.first_transition = (uint32_t)first_transition;
    size_t sm_index;
    if (!vec_push(&b->allocator, &b->sms, &sm, 1, &sm_index)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    bnode n = {.n = {.type = GNODE_SM}, .explicit_group = GNONE};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    n.n.u.sm.sm = (uint32_t)sm_index;
    r = push_node(b, &n, children, d->state_count, what, out, err);
    if (r == CB_OK) {
        VEC_AT(b->sms, gsm, sm_index).node = (uint32_t)(b->nodes.count - 1);
    }
    return r;
}

cb_result cb_graph_set_root(cb_graph_builder *b, cb_graph_node root, cb_error *err)
{
    if (b == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_set_root: builder is NULL");
    }
    if (root >= b->nodes.count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_graph_set_root: node %u does not exist", root);
    }
    b->root = root;
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Post-process                                                                               */

static cb_result target_params(const cb_graph_builder *b, const char *const names[3],
                               const char *what, const char *field, uint32_t out[3], bool optional,
                               cb_error *err)
{
    if (optional && names[0] == NULL && names[1] == NULL && names[2] == NULL) {
        out[0] = out[1] = out[2] = GNONE;
        return CB_OK;
    }
    for (int k = 0; k < 3; ++k) {
        if (names[k] == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: %s needs three parameters", what,
                                field);
        }
        cb_result r = find_number(b, names[k], what, &out[k], err);
        if (r != CB_OK) {
            return r;
        }
    }
    return CB_OK;
}

static cb_result push_ik(cb_graph_builder *b, const gik *g, const char *what, cb_error *err)
{
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: the builder has already built",
                            what);
    }
    if (b->iks.count >= CB_GRAPH_MAX_IK) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "%s: more than %d IK steps", what,
                            CB_GRAPH_MAX_IK);
    }
    if (!vec_push(&b->allocator, &b->iks, g, 1, NULL)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    return CB_OK;
}

/* Is `ancestor` an ancestor of (or equal to) `joint`? */
static bool is_ancestor(const cb_skeleton *s, uint32_t ancestor, uint32_t joint)
{
    const int32_t *parents = cb_skeleton_parents(s);
    for (int32_t j = (int32_t)joint; j >= 0; j = parents[j]) {
        if ((uint32_t)j == ancestor) {
            return true;
        }
    }
    return false;
}

cb_result cb_graph_add_two_bone_ik(cb_graph_builder *b, const cb_graph_two_bone_ik_desc *d,
                                   cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "two-bone IK: NULL argument");
    }
    const char *what = "two-bone IK";
    gik g = {
        .type = GIK_TWO_BONE, .joint_count = 3, .soften = d->soften == 0.0f ? 0.97f : d->soften};
    cb_result r = find_joint(b, d->start_joint, what, &g.joints[0], err);
    if (r == CB_OK)
        r = find_joint(b, d->mid_joint, what, &g.joints[1], err);
    if (r == CB_OK)
        r = find_joint(b, d->end_joint, what, &g.joints[2], err);
    if (r != CB_OK) {
        return r;
    }
    if (!is_ancestor(b->skeleton, g.joints[0], g.joints[1]) || g.joints[0] == g.joints[1] ||
        !is_ancestor(b->skeleton, g.joints[1], g.joints[2]) || g.joints[1] == g.joints[2]) {
        return cb_error_set(err, CB_ERR_HIERARCHY,
                            "%s: '%s' -> '%s' -> '%s' is not a chain of ancestors", what,
                            d->start_joint, d->mid_joint, d->end_joint);
    }
    if (!(g.soften > 0.0f && g.soften <= 1.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: soften must be in (0, 1]", what);
    }
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(d->mid_axis[k])) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: mid_axis is not finite", what);
        }
        g.mid_axis[k] = d->mid_axis[k];
    }
    r = target_params(b, d->target, what, "target", g.target, false, err);
    if (r == CB_OK)
        r = target_params(b, d->pole, what, "pole", g.pole, true, err);
    if (r == CB_OK)
        r = find_optional_number(b, d->weight, what, &g.weight, err);
    return r != CB_OK ? r : push_ik(b, &g, what, err);
}

cb_result cb_graph_add_aim_ik(cb_graph_builder *b, const cb_graph_aim_ik_desc *d, cb_error *err)
{
    if (b == NULL || d == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "aim IK: NULL argument");
    }
    const char *what = "aim IK";
    if (d->joint_count == 0 || d->joint_count > GIK_MAX_CHAIN || d->joints == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: 1 to %d joints are needed", what,
                            GIK_MAX_CHAIN);
    }
    gik g = {.type = GIK_AIM,
             .joint_count = d->joint_count,
             .limit_rad = d->limit_rad == 0.0f ? 3.14159265f : d->limit_rad};
    for (uint32_t k = 0; k < d->joint_count; ++k) {
        cb_result r = find_joint(b, d->joints[k], what, &g.joints[k], err);
        if (r != CB_OK) {
            return r;
        }
        if (k > 0 && (!is_ancestor(b->skeleton, g.joints[k - 1], g.joints[k]) ||
                      g.joints[k - 1] == g.joints[k])) {
            return cb_error_set(err, CB_ERR_HIERARCHY, "%s: '%s' is not an ancestor of '%s'", what,
                                d->joints[k - 1], d->joints[k]);
        }
        float w = d->joint_weights != NULL ? d->joint_weights[k]
                                           : (k + 1 == d->joint_count ? 1.0f : 0.0f);
        if (!(w >= 0.0f) || !isfinite(w)) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: joint weight %u must be >= 0",
                                what, k);
        }
        g.joint_weights[k] = w;
    }
    const float fwd[3] = {0, 0, 1}, up[3] = {0, 1, 0};
    bool has_fwd = d->forward[0] != 0.0f || d->forward[1] != 0.0f || d->forward[2] != 0.0f;
    bool has_up = d->up[0] != 0.0f || d->up[1] != 0.0f || d->up[2] != 0.0f;
    for (int k = 0; k < 3; ++k) {
        g.forward[k] = has_fwd ? d->forward[k] : fwd[k];
        g.up[k] = has_up ? d->up[k] : up[k];
        g.pole_dir[k] = d->pole[k];
        g.offset[k] = d->offset[k];
        if (!isfinite(d->forward[k]) || !isfinite(d->up[k]) || !isfinite(d->pole[k]) ||
            !isfinite(d->offset[k])) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "%s: forward, up, pole and offset must be finite", what);
        }
    }
    /* The aim job refuses an up axis along forward only when a pole asks for a twist. */
    float cx = g.forward[1] * g.up[2] - g.forward[2] * g.up[1];
    float cy = g.forward[2] * g.up[0] - g.forward[0] * g.up[2];
    float cz = g.forward[0] * g.up[1] - g.forward[1] * g.up[0];
    bool has_pole = d->pole[0] != 0.0f || d->pole[1] != 0.0f || d->pole[2] != 0.0f;
    if (has_pole && cx * cx + cy * cy + cz * cz == 0.0f) {
        return cb_error_set(err, CB_ERR_DEGENERATE, "%s: up is parallel to forward", what);
    }
    if (!(g.limit_rad > 0.0f && g.limit_rad <= 3.14159266f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: limit_rad must be in (0, pi]", what);
    }
    cb_result r = target_params(b, d->target, what, "target", g.target, false, err);
    g.pole[0] = g.pole[1] = g.pole[2] = GNONE;
    if (r == CB_OK)
        r = find_optional_number(b, d->weight, what, &g.weight, err);
    return r != CB_OK ? r : push_ik(b, &g, what, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Build                                                                                      */

/* Layout of the graph's single allocation. */
typedef struct layout {
    size_t params, procs, nodes, edges, edge_params, layers, sms, states, transitions, conditions,
        iks, clip_nodes, clip_states, clips, flat_order, flat_slot, layer_slot, masks, total;
} layout;

static size_t take(size_t *cursor, size_t bytes)
{
    size_t at = *cursor;
    *cursor += cb_round_up(bytes, 64);
    return at;
}

/* Whether every clip has the sync markers `names` at the same normalized times, in the same
 * order: then syncing on them is syncing by normalized time, which costs nothing per frame (the
 * embedded walks and runs all plant the left foot at 0 and the right at 0.5). */
static bool same_layout(const cb_clip *const *clips, size_t count, const uint32_t *names,
                        size_t name_count)
{
    size_t n0 = cb_clip_marker_count(clips[0]);
    for (size_t c = 1; c < count; ++c) {
        size_t n = cb_clip_marker_count(clips[c]);
        size_t i = 0, k = 0;
        for (;;) {
            cb_clip_marker a = {0}, bm = {0};
            bool more_a = false, more_b = false;
            /* The next sync marker named in `names` of each clip. */
            for (; i < n0 && !more_a; ++i) {
                cb_clip_query_marker(clips[0], i, &a);
                for (size_t q = 0; q < name_count && !a.event_only && !more_a; ++q) {
                    more_a = a.name_hash == names[q];
                }
            }
            for (; k < n && !more_b; ++k) {
                cb_clip_query_marker(clips[c], k, &bm);
                for (size_t q = 0; q < name_count && !bm.event_only && !more_b; ++q) {
                    more_b = bm.name_hash == names[q];
                }
            }
            if (more_a != more_b ||
                (more_a && (a.name_hash != bm.name_hash || a.time != bm.time))) {
                return false;
            }
            if (!more_a) {
                break;
            }
        }
    }
    return true;
}

/* A build that fails once the graph's memory exists: the memory goes; the solvers, which move to
 * the graph only when nothing can fail any more, stay with the builder. */
static cb_result abandon(cb_graph_builder *b, cb_graph *g, cb_result r)
{
    cb_free(&b->allocator, g->sync_first, g->sync_bytes ? g->sync_bytes : 4);
    cb_free(&b->allocator, g->memory, g->memory_bytes);
    return r;
}

/* Copies a builder vector's items (memcpy from a NULL vector is undefined even for 0 bytes). */
static void copy_all(void *dst, const vec *v, size_t item)
{
    if (v->count > 0) {
        memcpy(dst, v->data, v->count * item);
    }
}

cb_result cb_graph_build(cb_graph_builder *b, cb_graph **out, cb_error *err)
{
    if (b == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_build: builder or out is NULL");
    }
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "graph '%s': the builder has already built it", b->name);
    }
    if (b->nodes.count == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW, "graph '%s' has no node", b->name);
    }
    uint32_t root = b->root != CB_GRAPH_NO_NODE ? b->root : (uint32_t)(b->nodes.count - 1);
    uint32_t total = (uint32_t)b->nodes.count;
    const bnode *rn = &VEC_AT(b->nodes, bnode, root);
    if (rn->n.type == GNODE_CLIP && rn->additive_clip) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "the root '%s' plays an additive clip: it belongs in an additive layer",
                            rn->n.name);
    }
    /* Reachability from the root, and the new ids: descending old ids are parents-first. */
    uint32_t *newid = cb_alloc(&b->allocator, total * sizeof(uint32_t), 16);
    if (newid == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build");
    }
    for (uint32_t i = 0; i < total; ++i) {
        newid[i] = GNONE;
    }
    newid[root] = 0;
    for (uint32_t i = root + 1; i-- > 0;) {
        if (newid[i] == GNONE) {
            continue;
        }
        const bnode *n = &VEC_AT(b->nodes, bnode, i);
        for (uint32_t e = 0; e < n->n.edge_count; ++e) {
            newid[VEC_AT(b->edges, gedge, n->n.first_edge + e).child] = 0;
        }
    }
    uint32_t node_count = 0, edge_count = 0, clip_count = 0;
    for (uint32_t i = root + 1; i-- > 0;) {
        if (newid[i] != GNONE) {
            newid[i] = node_count++;
            const bnode *n = &VEC_AT(b->nodes, bnode, i);
            edge_count += n->n.edge_count;
            clip_count += n->n.type == GNODE_CLIP;
            /* An additive clip belongs only in an additive layer. */
            for (uint32_t e = 0; e < n->n.edge_count; ++e) {
                const bnode *c =
                    &VEC_AT(b->nodes, bnode, VEC_AT(b->edges, gedge, n->n.first_edge + e).child);
                bool additive_edge =
                    n->n.type == GNODE_LAYERS && e > 0 &&
                    VEC_AT(b->layers, glayer, n->n.u.layers.first_layer + e - 1).mode ==
                        CB_LAYER_ADDITIVE;
                if (c->n.type == GNODE_CLIP && c->additive_clip && !additive_edge) {
                    cb_free(&b->allocator, newid, total * sizeof(uint32_t));
                    return cb_error_set(
                        err, CB_ERR_MISMATCH,
                        "node '%s' uses additive clip node '%s' outside an additive "
                        "layer",
                        n->n.name, c->n.name);
                }
            }
        }
    }

    size_t soa = cb_skeleton_soa_joint_count(b->skeleton);
    layout L = {0};
    size_t cur = cb_round_up(sizeof(struct cb_graph), 64);
    L.params = take(&cur, b->params.count * sizeof(gparam));
    L.procs = take(&cur, b->procs.count * sizeof(gproc));
    L.nodes = take(&cur, node_count * sizeof(gnode));
    L.edges = take(&cur, edge_count * sizeof(gedge));
    L.edge_params = take(&cur, b->edge_params.count * sizeof(uint32_t));
    L.layers = take(&cur, b->layers.count * sizeof(glayer));
    L.sms = take(&cur, b->sms.count * sizeof(gsm));
    L.states = take(&cur, b->states.count * sizeof(gstate));
    L.transitions = take(&cur, b->transitions.count * sizeof(gtransition));
    L.conditions = take(&cur, b->conditions.count * sizeof(gcondition));
    L.iks = take(&cur, b->iks.count * sizeof(gik));
    L.clip_nodes = take(&cur, clip_count * sizeof(uint32_t));
    L.clip_states = take(&cur, clip_count * sizeof(gclip_states));
    L.clips = take(&cur, clip_count * sizeof(gclip));
    L.flat_order = take(&cur, (clip_count ? clip_count : 1) * sizeof(uint32_t));
    L.flat_slot = take(&cur, (clip_count ? clip_count : 1) * sizeof(uint32_t));
    L.layer_slot = take(&cur, (b->layers.count ? b->layers.count : 1) * sizeof(uint32_t));
    L.masks = take(&cur, b->layers.count * soa * sizeof(float));
    L.total = cur;
    char *m = cb_alloc_zeroed(&b->allocator, L.total, 64);
    if (m == NULL) {
        cb_free(&b->allocator, newid, total * sizeof(uint32_t));
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build: %zu bytes", L.total);
    }
    cb_graph *g = (cb_graph *)m;
    g->allocator = b->allocator;
    g->memory = m;
    g->memory_bytes = L.total;
    snprintf(g->name, sizeof g->name, "%s", b->name);
    g->skeleton = b->skeleton;
    g->joint_count = cb_skeleton_joint_count(b->skeleton);
    g->soa_joint_count = soa;
    g->group_count = cb_skeleton_group_count(b->skeleton);
    g->params = (gparam *)(m + L.params);
    g->procs = (gproc *)(m + L.procs);
    g->nodes = (gnode *)(m + L.nodes);
    g->edges = (gedge *)(m + L.edges);
    g->edge_params = (uint32_t *)(m + L.edge_params);
    g->layers = (glayer *)(m + L.layers);
    g->sms = (gsm *)(m + L.sms);
    g->states = (gstate *)(m + L.states);
    g->transitions = (gtransition *)(m + L.transitions);
    g->conditions = (gcondition *)(m + L.conditions);
    g->iks = (gik *)(m + L.iks);
    g->clip_nodes = (uint32_t *)(m + L.clip_nodes);
    g->clip_states = (gclip_states *)(m + L.clip_states);
    g->clips = (gclip *)(m + L.clips);
    g->flat_order = (uint32_t *)(m + L.flat_order);
    g->flat_slot = (uint32_t *)(m + L.flat_slot);
    g->layer_slot = (uint32_t *)(m + L.layer_slot);
    float *masks = (float *)(m + L.masks);

    g->param_count = (uint32_t)b->params.count;
    copy_all(g->params, &b->params, sizeof(gparam));
    g->proc_count = (uint32_t)b->procs.count;
    copy_all(g->procs, &b->procs, sizeof(gproc));
    g->edge_param_count = (uint32_t)b->edge_params.count;
    copy_all(g->edge_params, &b->edge_params, sizeof(uint32_t));
    g->condition_count = (uint32_t)b->conditions.count;
    copy_all(g->conditions, &b->conditions, sizeof(gcondition));
    g->transition_count = (uint32_t)b->transitions.count;
    copy_all(g->transitions, &b->transitions, sizeof(gtransition));
    g->state_count = (uint32_t)b->states.count;
    copy_all(g->states, &b->states, sizeof(gstate));
    g->ik_count = (uint32_t)b->iks.count;
    copy_all(g->iks, &b->iks, sizeof(gik));
    g->layer_count = (uint32_t)b->layers.count;
    for (uint32_t l = 0; l < g->layer_count; ++l) {
        g->layers[l] = VEC_AT(b->layers, glayer, l);
        g->layers[l].node = newid[g->layers[l].node];
        if (g->layers[l].mask != NULL) {
            memcpy(masks + l * soa, g->layers[l].mask, soa * sizeof(float));
            g->layers[l].mask = masks + l * soa;
        }
    }
    for (uint32_t s = 0; s < g->state_count; ++s) {
        g->states[s].node = newid[g->states[s].node];
    }
    /* Reachable state machines only, renumbered; their nodes are remapped below. */
    uint32_t inert = 0, sm_count = 0;
    uint32_t sm_newid[CB_GRAPH_MAX_NODES];
    for (uint32_t s = 0; s < b->sms.count; ++s) {
        gsm sm = VEC_AT(b->sms, gsm, s);
        sm_newid[s] = GNONE;
        if (newid[sm.node] == GNONE) {
            continue;
        }
        sm.node = newid[sm.node];
        if (sm.inert_slot != GNONE) {
            sm.inert_slot = inert++;
        }
        sm_newid[s] = sm_count;
        g->sms[sm_count++] = sm;
    }
    g->sm_count = sm_count;
    g->inert_count = inert;
    g->group_count_sync = (uint32_t)b->groups.count;

    /* Nodes and edges in the new order. Solvers move to the graph (the builder keeps a copy of
     * the pointer, so it creates a fresh solver for the next build: see below). */
    uint32_t edge_at = 0;
    for (uint32_t i = root + 1; i-- > 0;) {
        if (newid[i] == GNONE) {
            continue;
        }
        const bnode *bn = &VEC_AT(b->nodes, bnode, i);
        gnode *n = &g->nodes[newid[i]];
        *n = bn->n;
        n->first_edge = edge_at;
        for (uint32_t e = 0; e < bn->n.edge_count; ++e) {
            gedge ed = VEC_AT(b->edges, gedge, bn->n.first_edge + e);
            ed.child = newid[ed.child];
            g->edges[edge_at++] = ed;
        }
        if (n->type == GNODE_SM) {
            n->u.sm.sm = sm_newid[n->u.sm.sm];
        }
    }
    g->node_count = node_count;
    g->edge_count = edge_count;
    g->clip_count = clip_count;
    /* Clip slots (per-character clip state, kept weights) follow the order clips were added. */
    uint32_t slot = 0;
    for (uint32_t i = 0; i <= root; ++i) {
        if (newid[i] != GNONE && g->nodes[newid[i]].type == GNODE_CLIP) {
            g->nodes[newid[i]].u.clip.slot = slot;
            g->clip_nodes[slot++] = newid[i];
        }
    }

    /* Sync groups, top-down: a clip takes its own named group, else the group of the nearest
     * blend space above it (its named group, or an implicit one per blend space). State
     * machines and layer edges start a fresh context. Several parents: the first one wins. */
    uint32_t *ctx = cb_alloc(&b->allocator, node_count * sizeof(uint32_t), 16);
    gclip_states *cst = cb_alloc_zeroed(&b->allocator, node_count * sizeof(gclip_states), 16);
    bool *seen = cb_alloc_zeroed(&b->allocator, node_count, 16);
    if (ctx == NULL || cst == NULL || seen == NULL) {
        cb_free(&b->allocator, ctx, node_count * sizeof(uint32_t));
        cb_free(&b->allocator, cst, node_count * sizeof(gclip_states));
        cb_free(&b->allocator, seen, node_count);
        cb_free(&b->allocator, newid, total * sizeof(uint32_t));
        return abandon(b, g, cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build"));
    }
    uint32_t implicit = g->group_count_sync;
    uint32_t group_owner[CB_GRAPH_MAX_NODES]; /* implicit group -> its blend space */
    ctx[0] = GNONE;
    seen[0] = true;
    /* base[id]: the node is reached from the root through base edges (not only via layers). */
    bool *base = cb_alloc_zeroed(&b->allocator, node_count, 16);
    if (base == NULL) {
        cb_free(&b->allocator, ctx, node_count * sizeof(uint32_t));
        cb_free(&b->allocator, cst, node_count * sizeof(gclip_states));
        cb_free(&b->allocator, seen, node_count);
        cb_free(&b->allocator, newid, total * sizeof(uint32_t));
        return abandon(b, g, cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build"));
    }
    base[0] = true;
    for (uint32_t i = root + 1; i-- > 0;) {
        if (newid[i] == GNONE) {
            continue;
        }
        uint32_t id = newid[i];
        gnode *n = &g->nodes[id];
        const bnode *bn = &VEC_AT(b->nodes, bnode, i);
        uint32_t mine = ctx[id];
        if (n->type == GNODE_BLEND) {
            mine = bn->explicit_group != GNONE ? bn->explicit_group : implicit++;
            if (bn->explicit_group == GNONE && mine < CB_GRAPH_MAX_NODES) {
                group_owner[mine - (uint32_t)b->groups.count] = id;
            }
        } else if (n->type == GNODE_CLIP) {
            n->u.clip.group = bn->explicit_group != GNONE ? bn->explicit_group : ctx[id];
        }
        for (uint32_t e = 0; e < n->edge_count; ++e) {
            const gedge *ed = &g->edges[n->first_edge + e];
            uint32_t c = ed->child;
            base[c] = base[c] || (base[id] && ed->root_motion);
            if (seen[c]) {
                continue;
            }
            seen[c] = true;
            bool fresh = n->type == GNODE_SM || (n->type == GNODE_LAYERS && e > 0);
            ctx[c] = fresh ? GNONE : mine;
            cst[c] = cst[id];
            if (n->type == GNODE_SM && cst[c].count < GCLIP_MAX_SM_DEPTH) {
                cst[c].sm[cst[c].count] = n->u.sm.sm;
                cst[c].state[cst[c].count] = e;
                cst[c].count++;
            }
        }
    }
    g->group_count_sync = implicit;
    g->uniform_rate = true;
    for (uint32_t s = 0; s < g->state_count; ++s) {
        g->uniform_rate = g->uniform_rate && g->states[s].speed == 1.0f;
    }
    for (uint32_t s = 0; s < clip_count; ++s) {
        gclip *c = &g->nodes[g->clip_nodes[s]].u.clip;
        g->clip_states[s] = cst[g->clip_nodes[s]];
        c->node = g->clip_nodes[s];
        c->base_path = base[g->clip_nodes[s]];
        g->uniform_rate = g->uniform_rate && c->speed == 1.0f && c->speed_param == GNONE;
        g->clips[s] = *c;
    }
    cb_free(&b->allocator, base, node_count);
    for (uint32_t l = 0; l < g->layer_count; ++l) {
        uint32_t node = g->layers[l].node;
        g->layer_slot[l] =
            node != GNONE && g->nodes[node].type == GNODE_CLIP ? g->nodes[node].u.clip.slot : GNONE;
    }

    /* Flat graphs get the runtime's fast path (see graph_impl.h). */
    {
        uint32_t blend = 0, layers = GNONE;
        if (g->nodes[0].type == GNODE_LAYERS) {
            layers = 0;
            blend = g->edges[g->nodes[0].first_edge].child;
        }
        const gnode *bn = &g->nodes[blend];
        bool flat = g->uniform_rate && g->sm_count == 0 &&
                    (bn->type == GNODE_BLEND || bn->type == GNODE_DIRECT) && bn->edge_count > 0;
        uint32_t group = GNONE;
        for (uint32_t e = 0; flat && e < bn->edge_count; ++e) {
            const gnode *c = &g->nodes[g->edges[bn->first_edge + e].child];
            flat = c->type == GNODE_CLIP && c->u.clip.group != GNONE &&
                   (group == GNONE || c->u.clip.group == group);
            group = flat ? c->u.clip.group : group;
        }
        if (flat && layers != GNONE) {
            const gnode *ln = &g->nodes[layers];
            for (uint32_t l = 0; l < ln->u.layers.layer_count && flat; ++l) {
                const gnode *c = &g->nodes[g->layers[ln->u.layers.first_layer + l].node];
                flat = c->type == GNODE_CLIP && c->u.clip.group == GNONE;
            }
        }
        /* The blend's clips alone in their group, each once. */
        for (uint32_t s = 0; flat && s < clip_count; ++s) {
            const gclip *c = &g->clips[s];
            bool child = false;
            for (uint32_t e = 0; e < bn->edge_count; ++e) {
                child = child || g->edges[bn->first_edge + e].child == c->node;
            }
            flat = (c->group == group) == child;
        }
        for (uint32_t e = 0; flat && e < bn->edge_count; ++e) {
            for (uint32_t f = 0; f < e; ++f) {
                flat = flat &&
                       g->edges[bn->first_edge + e].child != g->edges[bn->first_edge + f].child;
            }
        }
        g->flat = flat;
        g->flat_blend = blend;
        g->flat_group = group;
        if (flat) {
            /* Edges in slot order: the order the general time stage visits the clips in. */
            uint32_t k = 0;
            for (uint32_t cs = 0; cs < clip_count; ++cs) {
                for (uint32_t e = 0; e < bn->edge_count; ++e) {
                    if (g->edges[bn->first_edge + e].child == g->clips[cs].node) {
                        g->flat_order[k++] = e;
                        g->flat_slot[e] = cs;
                    }
                }
            }
            g->flat_in_order = true;
            for (uint32_t e = 0; e < bn->edge_count; ++e) {
                g->flat_in_order = g->flat_in_order && g->flat_order[e] == e;
                g->flat_any_clamp = g->flat_any_clamp || g->clips[g->flat_slot[e]].clamp;
            }
            const gnode *ln = layers != GNONE ? &g->nodes[layers] : NULL;
            for (uint32_t l = 0; ln != NULL && l < ln->u.layers.layer_count; ++l) {
                const glayer *ly = &g->layers[ln->u.layers.first_layer + l];
                const gclip *c = &g->clips[g->layer_slot[ln->u.layers.first_layer + l]];
                g->flat_layer[l] = (struct gflat_layer){
                    .clip = c->clip,
                    .slot = c->slot,
                    .weight_param = ly->weight_param,
                    .duration_s = c->duration_s,
                    .start_offset = c->start_offset,
                    .clamp = c->clamp,
                    .mode = ly->mode == CB_LAYER_ADDITIVE ? CB_BLEND_MODE_ADDITIVE
                                                          : CB_BLEND_MODE_OVERRIDE,
                    .mask = ly->mask,
                };
                g->flat_layer_count = l + 1;
            }
        }
    }

    /* Sync markers per group: the names every clip of the group has, in an order they all
     * agree on (cb_sync_group_names); a group of one clip, or whose clips share none, syncs by
     * normalized time. Clips that order their shared markers differently are refused. */
    {
        uint32_t gc = g->group_count_sync;
        const cb_clip **members =
            cb_alloc(&b->allocator, (clip_count ? clip_count : 1) * sizeof(cb_clip *), 16);
        uint32_t *tmp = cb_alloc(&b->allocator, CB_CLIP_MAX_MARKERS * sizeof(uint32_t), 16);
        size_t names_total = 0;
        cb_result r = members != NULL && tmp != NULL ? CB_OK : CB_ERR_OUT_OF_MEMORY;
        cb_error inner = {0};
        size_t markers_total = 0;
        for (uint32_t c = 0; c < clip_count; ++c) {
            markers_total += cb_clip_marker_count(g->clips[c].clip);
        }
        for (int pass = 0; pass < 2 && r == CB_OK; ++pass) {
            if (pass == 1) {
                g->sync_bytes = (2 * (size_t)gc + names_total + markers_total) * sizeof(uint32_t);
                g->sync_first = cb_alloc(&b->allocator, g->sync_bytes ? g->sync_bytes : 4, 16);
                if (g->sync_first == NULL) {
                    r = CB_ERR_OUT_OF_MEMORY;
                    break;
                }
                g->sync_count = g->sync_first + gc;
                g->sync_hashes = g->sync_count + gc;
                g->marker_times = (float *)(g->sync_hashes + names_total);
                names_total = 0;
                /* Each clip's marker times, for the runtime's quick "nothing crossed" test. */
                size_t at = 0;
                for (uint32_t c = 0; c < clip_count; ++c) {
                    gclip *gc_ = &g->clips[c];
                    gc_->marker_first = (uint32_t)at;
                    gc_->marker_count = (uint32_t)cb_clip_marker_count(gc_->clip);
                    for (uint32_t mi = 0; mi < gc_->marker_count; ++mi) {
                        cb_clip_marker mk;
                        cb_clip_query_marker(gc_->clip, mi, &mk);
                        g->marker_times[at++] = mk.time;
                    }
                }
            }
            for (uint32_t grp = 0; grp < gc && r == CB_OK; ++grp) {
                size_t k = 0;
                for (uint32_t c = 0; c < clip_count; ++c) {
                    bool dup = false;
                    for (size_t q = 0; q < k; ++q) {
                        dup = dup || members[q] == g->clips[c].clip;
                    }
                    if (g->clips[c].group == grp && !dup) {
                        members[k++] = g->clips[c].clip;
                    }
                }
                size_t count = 0;
                if (k > 1) {
                    r = cb_sync_group_names(members, k, NULL, tmp, CB_CLIP_MAX_MARKERS, &count,
                                            &inner);
                }
                if (r == CB_OK && count > 0 && same_layout(members, k, tmp, count)) {
                    count = 0; /* markers at the same normalized times: normalized sync is exact */
                }
                if (r == CB_OK && pass == 1) {
                    g->sync_first[grp] = (uint32_t)names_total;
                    g->sync_count[grp] = (uint32_t)count;
                    memcpy(g->sync_hashes + names_total, tmp, count * sizeof(uint32_t));
                }
                names_total += count;
                if (r != CB_OK && r != CB_ERR_OUT_OF_MEMORY) {
                    const char *label = grp < b->groups.count
                                            ? VEC_AT(b->groups, bgroup, grp).name
                                            : g->nodes[group_owner[grp - b->groups.count]].name;
                    cb_error_set(err, r, "sync group '%s': %s", label, inner.message);
                }
            }
        }
        cb_free(&b->allocator, members, (clip_count ? clip_count : 1) * sizeof(cb_clip *));
        cb_free(&b->allocator, tmp, CB_CLIP_MAX_MARKERS * sizeof(uint32_t));
        if (r != CB_OK) {
            cb_free(&b->allocator, ctx, node_count * sizeof(uint32_t));
            cb_free(&b->allocator, cst, node_count * sizeof(gclip_states));
            cb_free(&b->allocator, seen, node_count);
            cb_free(&b->allocator, newid, total * sizeof(uint32_t));
            if (r == CB_ERR_OUT_OF_MEMORY) {
                cb_error_set(err, r, "cb_graph_build");
            }
            return abandon(b, g, r);
        }
    }

    /* Pose buffers: a node that cannot be flattened into one fused blend needs its own pose and
     * its inputs' (see runtime.c). Bottom-up over the parents-first order. */
    uint32_t *need = ctx; /* reuse */
    uint32_t max_entries = 0;
    for (uint32_t id = node_count; id-- > 0;) {
        const gnode *n = &g->nodes[id];
        uint32_t deepest = 0;
        for (uint32_t e = 0; e < n->edge_count; ++e) {
            uint32_t c = g->edges[n->first_edge + e].child;
            deepest = need[c] > deepest ? need[c] : deepest;
        }
        /* A machine capturing the pose of an interrupted crossfade holds three poses. */
        need[id] = n->type == GNODE_CLIP ? 0 : deepest + (n->type == GNODE_SM ? 3 : 2);
    }
    g->max_pose_depth = need[0] + 2;
    max_entries = clip_count + g->layer_count + 1;
    g->max_entries = max_entries;
    /* Nothing can fail any more: the solvers move to the graph now (had an allocation above
     * failed, the builder would still own them, and free them). */
    for (uint32_t i = 0; i <= root; ++i) {
        if (newid[i] != GNONE && VEC_AT(b->nodes, bnode, i).n.type == GNODE_BLEND) {
            VEC_AT(b->nodes, bnode, i).n.u.blend.solver = NULL;
        }
    }
    cb_free(&b->allocator, ctx, node_count * sizeof(uint32_t));
    cb_free(&b->allocator, cst, node_count * sizeof(gclip_states));
    cb_free(&b->allocator, seen, node_count);
    cb_free(&b->allocator, newid, total * sizeof(uint32_t));

    /* The graph took the reachable nodes' solvers (their builder copies are NULL now); the
     * builder still frees those of unreachable nodes, and refuses to build again. */
    b->built = true;
    *out = g;
    return CB_OK;
}

void cb_graph_destroy(cb_graph *g)
{
    if (g == NULL) {
        return;
    }
    for (uint32_t i = 0; i < g->node_count; ++i) {
        if (g->nodes[i].type == GNODE_BLEND) {
            cb_solver_destroy(g->nodes[i].u.blend.solver);
        }
    }
    cb_allocator a = g->allocator;
    cb_free(&a, g->sync_first, g->sync_bytes ? g->sync_bytes : 4);
    cb_free(&a, g->memory, g->memory_bytes);
}

/* ------------------------------------------------------------------------------------------ */
/* Queries                                                                                    */

const char *cb_graph_name(const cb_graph *g)
{
    return g != NULL ? g->name : NULL;
}

const cb_skeleton *cb_graph_skeleton(const cb_graph *g)
{
    return g != NULL ? g->skeleton : NULL;
}

uint32_t cb_graph_param_count(const cb_graph *g)
{
    return g != NULL ? g->param_count : 0;
}

cb_result cb_graph_find_param(const cb_graph *g, const char *name, uint32_t *index)
{
    if (g == NULL || name == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    return cb_graph_find_param_hash(g, cb_name_hash(name), index);
}

cb_result cb_graph_find_param_hash(const cb_graph *g, uint32_t hash, uint32_t *index)
{
    if (g == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t i = 0; i < g->param_count; ++i) {
        if (g->params[i].hash == hash) {
            *index = i;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

const char *cb_graph_param_name(const cb_graph *g, uint32_t i)
{
    return g != NULL && i < g->param_count ? g->params[i].name : NULL;
}

cb_param_type cb_graph_param_type(const cb_graph *g, uint32_t i)
{
    return g != NULL && i < g->param_count ? g->params[i].type : _CB_PARAM_TYPE_DEFAULT;
}

float cb_graph_param_default(const cb_graph *g, uint32_t i)
{
    return g != NULL && i < g->param_count ? g->params[i].default_value : 0.0f;
}

uint32_t cb_graph_state_machine_count(const cb_graph *g)
{
    return g != NULL ? g->sm_count : 0;
}

cb_result cb_graph_find_state_machine(const cb_graph *g, const char *name, uint32_t *index)
{
    if (g == NULL || name == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t s = 0; s < g->sm_count; ++s) {
        if (strcmp(g->nodes[g->sms[s].node].name, name) == 0) {
            *index = s;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

uint32_t cb_graph_state_count(const cb_graph *g, uint32_t machine)
{
    return g != NULL && machine < g->sm_count ? g->sms[machine].state_count : 0;
}

const char *cb_graph_state_name(const cb_graph *g, uint32_t machine, uint32_t state)
{
    if (g == NULL || machine >= g->sm_count || state >= g->sms[machine].state_count) {
        return NULL;
    }
    return g->states[g->sms[machine].first_state + state].name;
}

cb_result cb_graph_find_state(const cb_graph *g, uint32_t machine, const char *name,
                              uint32_t *state)
{
    if (g == NULL || name == NULL || state == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (machine >= g->sm_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    const gsm *sm = &g->sms[machine];
    for (uint32_t s = 0; s < sm->state_count; ++s) {
        if (strcmp(g->states[sm->first_state + s].name, name) == 0) {
            *state = s;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

uint32_t cb_graph_node_count(const cb_graph *g)
{
    return g != NULL ? g->node_count : 0;
}

const char *cb_graph_node_name(const cb_graph *g, uint32_t node)
{
    return g != NULL && node < g->node_count ? g->nodes[node].name : NULL;
}

cb_result cb_graph_find_node(const cb_graph *g, const char *name, uint32_t *node)
{
    if (g == NULL || name == NULL || node == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t i = 0; i < g->node_count; ++i) {
        if (name[0] != '\0' && strcmp(g->nodes[i].name, name) == 0) {
            *node = i;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

uint32_t cb_graph_clip_count(const cb_graph *g)
{
    return g != NULL ? g->clip_count : 0;
}

uint32_t cb_graph_clip_node(const cb_graph *g, uint32_t clip)
{
    return g != NULL && clip < g->clip_count ? g->clip_nodes[clip] : UINT32_MAX;
}
