/* The graph builder: collects parameters, processors, nodes and post-process steps and checks
 * each as it is added, so an error names what was just added; each desc's defaults are resolved
 * by its cb_graph_query_* function. Children must exist before their parent, so node indices
 * already give a topological order (every edge goes from a larger index to a smaller one);
 * compile.c turns what was added into a cb_graph. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/scalar_math.h"
#include "graph/builder_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Growable arrays (build time only)                                                          */

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
    /* n = 0 on an empty vector has no data pointer: nothing may touch or offset it. */
    if (n > 0) {
        void *dst = (char *)v->data + v->count * v->elem;
        if (src != NULL) {
            memcpy(dst, src, n * v->elem);
        } else {
            memset(dst, 0, n * v->elem);
        }
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

/* ------------------------------------------------------------------------------------------ */
/* Create and destroy                                                                         */

static const char *clip_name_of(const void *ctx, uint32_t i)
{
    return cb_clip_name(((const cb_graph_builder *)ctx)->clips[i]);
}

static const char *node_name_of(const void *ctx, uint32_t i)
{
    return VEC_AT(((const cb_graph_builder *)ctx)->nodes, bnode, i).n.name;
}

static const char *group_name_of(const void *ctx, uint32_t i)
{
    return VEC_AT(((const cb_graph_builder *)ctx)->groups, bgroup, i).name;
}

static bool valid_name(const char *name)
{
    return name != NULL && name[0] != '\0' && strlen(name) <= CB_GRAPH_NAME_MAX;
}

cb_graph_builder_desc cb_graph_query_builder_desc(const cb_graph_builder_desc *desc)
{
    cb_graph_builder_desc d = desc != NULL ? *desc : (cb_graph_builder_desc){0};
    if (d.name == NULL) {
        d.name = CB_GRAPH_DEFAULT_NAME;
    }
    return d;
}

static cb_result check_builder_desc(const cb_graph_builder_desc *desc, cb_error *err)
{
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
    }
    return CB_OK;
}

cb_result cb_graph_builder_create(const cb_graph_builder_desc *desc, cb_graph_builder **out,
                                  cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "cb_graph_builder_create: desc or out is NULL");
    }
    cb_result r = check_builder_desc(desc, err);
    if (r != CB_OK) {
        return r;
    }
    cb_graph_builder_desc d = cb_graph_query_builder_desc(desc);
    cb_graph_builder *b = cb_alloc_zeroed(&d.allocator, sizeof *b, _Alignof(cb_graph_builder));
    if (b == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_builder_create");
    }
    b->allocator = d.allocator;
    snprintf(b->name, sizeof b->name, "%s", d.name);
    b->skeleton = d.skeleton;
    b->clip_count = d.clip_count;
    b->params.elem = sizeof(gparam);
    b->procs.elem = sizeof(gproc);
    b->nodes.elem = sizeof(bnode);
    b->edges.elem = sizeof(gedge);
    b->blend_params.elem = sizeof(uint32_t);
    b->layers.elem = sizeof(glayer);
    b->sms.elem = sizeof(gsm);
    b->states.elem = sizeof(gstate);
    b->transitions.elem = sizeof(gtransition);
    b->conditions.elem = sizeof(gcondition);
    b->iks.elem = sizeof(gik);
    b->groups.elem = sizeof(bgroup);
    b->root = GNONE;
    b->lod_param = GNONE;
    b->clips = cb_alloc(&b->allocator, (d.clip_count ? d.clip_count : 1) * sizeof(void *), 16);
    if (b->clips == NULL ||
        cb_name_table_init(&b->clip_names, &b->allocator, d.clip_count, clip_name_of, b) != CB_OK ||
        cb_name_table_init(&b->node_names, &b->allocator, CB_GRAPH_MAX_NODES, node_name_of, b) !=
            CB_OK ||
        cb_name_table_init(&b->group_names, &b->allocator, CB_GRAPH_MAX_NODES, group_name_of, b) !=
            CB_OK) {
        r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_builder_create");
        goto fail;
    }
    /* Clip names are looked up through a hash table (a JSON graph references clips by name
     * from every clip node): a name already there is a duplicate. */
    for (uint32_t i = 0; i < d.clip_count; ++i) {
        b->clips[i] = d.clips[i];
        if (cb_name_table_find(&b->clip_names, cb_clip_name(d.clips[i]), NULL) != UINT32_MAX) {
            r = cb_error_set(err, CB_ERR_DUPLICATE, "two clips are named '%s'",
                             cb_clip_name(d.clips[i]));
            goto fail;
        }
        cb_name_table_add(&b->clip_names, i);
    }
    *out = b;
    return CB_OK;
fail:
    cb_graph_builder_destroy(b);
    return r;
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
    vec *all[] = {&b->params,       &b->procs,      &b->nodes, &b->edges,
                  &b->blend_params, &b->layers,     &b->sms,   &b->states,
                  &b->transitions,  &b->conditions, &b->iks,   &b->groups};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        vec_free(a, all[i]);
    }
    cb_name_table_finish(&b->clip_names, a);
    cb_name_table_finish(&b->node_names, a);
    cb_name_table_finish(&b->group_names, a);
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
    uint32_t i = cb_name_table_find(&b->clip_names, name, NULL);
    if (i == UINT32_MAX) {
        return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: unknown clip '%s'", what, name);
    }
    *out = b->clips[i];
    return CB_OK;
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
    uint32_t found = cb_name_table_find(&b->group_names, name, NULL);
    if (found != UINT32_MAX) {
        *out = found;
        return CB_OK;
    }
    if (b->groups.count >= CB_GRAPH_MAX_NODES) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "%s: more than %d sync groups", what,
                            CB_GRAPH_MAX_NODES);
    }
    bgroup g;
    snprintf(g.name, sizeof g.name, "%s", name);
    size_t at;
    if (!vec_push(&b->allocator, &b->groups, &g, 1, &at)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    cb_name_table_add(&b->group_names, (uint32_t)at);
    *out = (uint32_t)at;
    return CB_OK;
}

static cb_result find_joint(const cb_graph_builder *b, const char *name, const char *what,
                            uint32_t *out, cb_error *err)
{
    if (name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: joint name is missing", what);
    }
    uint32_t j;
    if (cb_skeleton_find_joint(b->skeleton, name, &j) != CB_OK) {
        return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: unknown joint '%s'", what, name);
    }
    *out = (uint32_t)j;
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters and processors                                                                  */

/* A parameter's default for its type (type resolved): finite, an int's a whole number up to
 * 2^24 (exact in a float), a bool's or trigger's 0 or 1. */
static cb_result check_param_default(const char *name, cb_param_type type, float default_value,
                                     cb_error *err)
{
    if (!isfinite(default_value)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "parameter '%s': default is not finite", name);
    }
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
    return CB_OK;
}

/* Room for one more parameter, and none of the builder's already named `name` or hashed alike. */
static cb_result check_param_new(const cb_graph_builder *b, const char *name, uint32_t hash,
                                 cb_error *err)
{
    if (b->params.count >= CB_GRAPH_MAX_PARAMS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "parameter '%s': more than %d parameters", name,
                            CB_GRAPH_MAX_PARAMS);
    }
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
    return CB_OK;
}

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
    uint32_t hash = cb_name_hash(name);
    cb_result r = check_param_default(name, type, default_value, err);
    if (r == CB_OK) {
        r = check_param_new(b, name, hash, err);
    }
    if (r != CB_OK) {
        return r;
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

cb_graph_velocity_blend_desc
cb_graph_query_velocity_blend_desc(const cb_graph_velocity_blend_desc *desc)
{
    cb_graph_velocity_blend_desc d = desc != NULL ? *desc : (cb_graph_velocity_blend_desc){0};
    if (d.min_sq_len == 0.0f) {
        d.min_sq_len = CB_GRAPH_DEFAULT_MIN_SQ_LEN;
    }
    return d;
}

cb_result cb_graph_add_velocity_blend(cb_graph_builder *b, const cb_graph_velocity_blend_desc *desc,
                                      cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "velocity blend: NULL argument");
    }
    const cb_graph_velocity_blend_desc dd = cb_graph_query_velocity_blend_desc(desc), *d = &dd;
    const char *what = "velocity blend";
    gproc p = {.type = GPROC_VELOCITY_BLEND, .in = {GNONE, GNONE, GNONE}, .a = d->min_sq_len};
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

cb_graph_quadrant_desc cb_graph_query_quadrant_desc(const cb_graph_quadrant_desc *desc)
{
    cb_graph_quadrant_desc d = desc != NULL ? *desc : (cb_graph_quadrant_desc){0};
    if (d.dead_zone_rad == 0.0f) {
        d.dead_zone_rad = CB_GRAPH_DEFAULT_DEAD_ZONE_RAD;
    }
    if (d.min_speed == 0.0f) {
        d.min_speed = CB_GRAPH_DEFAULT_MIN_SPEED;
    }
    return d;
}

cb_result cb_graph_add_quadrant(cb_graph_builder *b, const cb_graph_quadrant_desc *desc,
                                cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "quadrant: NULL argument");
    }
    const cb_graph_quadrant_desc dd = cb_graph_query_quadrant_desc(desc), *d = &dd;
    const char *what = "quadrant";
    gproc p = {.type = GPROC_QUADRANT,
               .in = {GNONE, GNONE, GNONE},
               .out = {GNONE, GNONE, GNONE, GNONE, GNONE},
               .a = d->dead_zone_rad,
               .b = d->min_speed};
    /* pi / 8: a wider band would overlap the next quadrant's (cb_params_quadrant). */
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
        if (cb_name_table_find(&b->node_names, name, NULL) != UINT32_MAX) {
            return cb_error_set(err, CB_ERR_DUPLICATE, "%s: a node has that name already", what);
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
        if (cb_graph_node_index(children[k]) >= b->nodes.count) {
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
    size_t first;
    if (!vec_reserve(&b->allocator, &b->nodes, b->nodes.count + 1) ||
        !vec_push(&b->allocator, &b->edges, NULL, child_count, &first)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    for (uint32_t k = 0; k < child_count; ++k) {
        VEC_AT(b->edges, gedge, first + k) =
            (gedge){.child = cb_graph_node_index(children[k]), .root_motion = true};
    }
    n->n.first_edge = (uint32_t)first;
    n->n.edge_count = child_count;
    size_t at;
    vec_push(&b->allocator, &b->nodes, n, 1, &at); /* reserved above */
    if (n->n.name[0] != '\0') {
        cb_name_table_add(&b->node_names, (uint32_t)at);
    }
    b->root = GNONE;
    if (out != NULL) {
        *out = (cb_graph_node){(uint32_t)at + 1};
    }
    return CB_OK;
}

cb_graph_clip_desc cb_graph_query_clip_desc(const cb_graph_clip_desc *desc)
{
    cb_graph_clip_desc d = desc != NULL ? *desc : (cb_graph_clip_desc){0};
    if (d.speed == 0.0f) {
        d.speed = CB_GRAPH_DEFAULT_SPEED;
    }
    return d;
}

cb_result cb_graph_add_clip(cb_graph_builder *b, const cb_graph_clip_desc *desc, cb_graph_node *out,
                            cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip node: NULL argument");
    }
    const cb_graph_clip_desc dd = cb_graph_query_clip_desc(desc), *d = &dd;
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
    c->speed = d->speed;
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

/* A blend node: its solver, its parameters (one per dimension, or one per child for DIRECT)
 * and its children. */
static cb_result push_blend(cb_graph_builder *b, bnode *n, const cb_solver_desc *sd,
                            const uint32_t *params, const cb_graph_node *children, const char *what,
                            cb_graph_node *out, cb_error *err)
{
    gblend *g = &n->n.u.blend;
    g->param_count = sd->kind == CB_SOLVER_KIND_DIRECT ? sd->node_count : sd->dimension;
    size_t first;
    if (!vec_push(&b->allocator, &b->blend_params, params, g->param_count, &first)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    g->first_param = (uint32_t)first;
    cb_error inner = {0};
    cb_result r = cb_solver_create(sd, &g->solver, &inner);
    if (r != CB_OK) {
        r = cb_error_set(err, r, "%s: %s", what, inner.message);
    } else {
        r = push_node(b, n, children, sd->node_count, what, out, err);
        if (r != CB_OK) {
            cb_solver_destroy(g->solver);
        }
    }
    if (r != CB_OK) {
        b->blend_params.count = first;
    }
    return r;
}

cb_graph_rate_warp cb_graph_query_rate_warp(const cb_graph_rate_warp *warp)
{
    cb_graph_rate_warp w = warp != NULL ? *warp : (cb_graph_rate_warp){0};
    if (w.min_rate == 0.0f) {
        w.min_rate = CB_GRAPH_DEFAULT_WARP_MIN_RATE;
    }
    if (w.max_rate == 0.0f) {
        w.max_rate = CB_GRAPH_DEFAULT_WARP_MAX_RATE;
    }
    if (w.speed_from == _CB_WARP_SPEED_FROM_DEFAULT) {
        w.speed_from = CB_WARP_SPEED_FROM_ROOT_MOTION;
    }
    return w;
}

/* Whether child clip c of a blend space whose clips take `group` keeps a group of its own. */
static bool own_group(const bnode *c, uint32_t group)
{
    return c->explicit_group != GNONE && c->explicit_group != group;
}

/* The names of cb_warp_speed_from in messages (JSON's "speed_from" values). */
static const char *warp_source_name(cb_warp_speed_from from)
{
    return from == CB_WARP_SPEED_FROM_POSITIONS ? "positions"
           : from == CB_WARP_SPEED_FROM_SPEEDS  ? "speeds"
                                                : "root_motion";
}

/* The root velocity child k of an in-place warp stands for (speed_from POSITIONS or SPEEDS), in
 * m/s along the blend space's axes (graph.h cb_graph_rate_warp). */
static void stated_velocity(const cb_graph_rate_warp *w, const cb_graph_blend_space_desc *d,
                            uint32_t dim, uint32_t k, float u[2])
{
    bool declared = w->speed_from == CB_WARP_SPEED_FROM_SPEEDS;
    u[0] = declared ? w->speeds[k] : d->positions[(size_t)k * dim];
    u[1] = declared || dim < 2 ? 0.0f : d->positions[(size_t)k * dim + 1];
}

/* The warp's speed source against what comes with it: a known source, speeds given exactly
 * when it says speeds, each finite and >= 0. */
static cb_result warp_source_of(const cb_graph_rate_warp *w, uint32_t child_count, const char *what,
                                cb_error *err)
{
    if (w->speed_from <= _CB_WARP_SPEED_FROM_DEFAULT ||
        w->speed_from >= _CB_WARP_SPEED_FROM_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: rate_warp: speed_from %d is not a cb_warp_speed_from", what,
                            (int)w->speed_from);
    }
    bool declared = w->speed_from == CB_WARP_SPEED_FROM_SPEEDS;
    if (declared && w->speeds == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "%s: rate_warp: speed_from speeds needs speeds (one per child)", what);
    }
    if (!declared && w->speeds != NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: rate_warp: speeds are given but speed_from is %s (declared "
                            "speeds need speed_from speeds)",
                            what, warp_source_name(w->speed_from));
    }
    for (uint32_t k = 0; declared && k < child_count; ++k) {
        if (!isfinite(w->speeds[k])) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "%s: rate_warp: the speed of child %u is not finite", what, k);
        }
        if (w->speeds[k] < 0.0f) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "%s: rate_warp: the speed of child %u is %g (a speed is >= 0)",
                                what, k, (double)w->speeds[k]);
        }
    }
    return CB_OK;
}

/* Why child k cannot take the warp's rate (NULL: it can): clips of the blend's group at a
 * fixed speed, or each in a group of its own. */
static const char *warp_child_refusal(const cb_graph_builder *b, const cb_graph_blend_space_desc *d,
                                      uint32_t group, uint32_t k)
{
    const bnode *c = &VEC_AT(b->nodes, bnode, cb_graph_node_index(d->children[k]));
    const char *why = c->n.type != GNODE_CLIP            ? "is not a clip node"
                      : c->n.u.clip.speed_param != GNONE ? "has a speed_param"
                                                         : NULL;
    for (uint32_t j = 0; why == NULL && j < k; ++j) {
        const bnode *o = &VEC_AT(b->nodes, bnode, cb_graph_node_index(d->children[j]));
        why = own_group(c, group) && c->explicit_group == o->explicit_group
                  ? "shares a sync group other than the blend space's with another child"
                  : NULL;
    }
    return why;
}

/* The children against the warp's speed source: with root motion, some clip must move; in
 * place, no clip may move (its root would not follow the stated speed) and some stated speed
 * must not be 0. */
static cb_result warp_speeds_of(const cb_graph_builder *b, const cb_graph_blend_space_desc *d,
                                const cb_graph_rate_warp *w, uint32_t dim, const char *what,
                                cb_error *err)
{
    bool in_place = w->speed_from != CB_WARP_SPEED_FROM_ROOT_MOTION, moves = false;
    for (uint32_t k = 0; k < d->child_count; ++k) {
        const bnode *c = &VEC_AT(b->nodes, bnode, cb_graph_node_index(d->children[k]));
        float root = cb_clip_query_root_motion(c->n.u.clip.clip).speed_mps, u[2] = {0, 0};
        if (in_place && root > 0.0f) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "%s: rate_warp: child %u ('%s') plays clip '%s', which moves its "
                                "root (%.3g m/s): speed_from %s is for clips that play in place "
                                "(leave speed_from at root_motion)",
                                what, k, c->n.name, cb_clip_name(c->n.u.clip.clip), (double)root,
                                warp_source_name(w->speed_from));
        }
        if (in_place) {
            stated_velocity(w, d, dim, k, u);
        }
        moves = moves || (in_place ? u[0] != 0.0f || u[1] != 0.0f : root > 0.0f);
    }
    if (moves) {
        return CB_OK;
    }
    return in_place
               ? cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                              "%s: rate_warp: every child's %s is 0 (nothing to match the "
                              "commanded speed with)",
                              what,
                              w->speed_from == CB_WARP_SPEED_FROM_SPEEDS ? "speed" : "position")
               : cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                              "%s: rate_warp: no child's clip has root motion (nothing to "
                              "match the commanded speed with; clips that play in place "
                              "take speed_from positions or speeds)",
                              what);
}

/* A blend space's rate warp (graph.h cb_graph_rate_warp) checked into bl: its parameter and
 * bounds, its speed source, and children the warp can drive. */
static cb_result rate_warp_of(const cb_graph_builder *b, const cb_graph_blend_space_desc *d,
                              uint32_t group, uint32_t dim, const char *what, gblend *bl,
                              cb_error *err)
{
    bl->warp_param = GNONE;
    if (d->rate_warp.speed_param == NULL) {
        return CB_OK;
    }
    const cb_graph_rate_warp w = cb_graph_query_rate_warp(&d->rate_warp);
    if (!isfinite(w.min_rate) || !isfinite(w.max_rate)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: rate_warp bounds are not finite", what);
    }
    if (!(w.min_rate > 0.0f && w.min_rate <= 1.0f && w.max_rate >= 1.0f &&
          w.max_rate <= CB_GRAPH_WARP_RATE_LIMIT)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: rate_warp bounds must satisfy 0 < min_rate <= 1 <= max_rate "
                            "<= %g (min_rate %g, max_rate %g)",
                            what, (double)CB_GRAPH_WARP_RATE_LIMIT, (double)w.min_rate,
                            (double)w.max_rate);
    }
    cb_result r = warp_source_of(&w, d->child_count, what, err);
    for (uint32_t k = 0; r == CB_OK && k < d->child_count; ++k) {
        const char *why = warp_child_refusal(b, d, group, k);
        const bnode *c = &VEC_AT(b->nodes, bnode, cb_graph_node_index(d->children[k]));
        if (why != NULL) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                             "%s: rate_warp: child %u ('%s') %s (the warp sets the rate of "
                             "clips in the blend space's group or each in a group of its own)",
                             what, k, c->n.name, why);
        }
    }
    if (r == CB_OK)
        r = warp_speeds_of(b, d, &w, dim, what, err);
    if (r == CB_OK)
        r = find_float(b, w.speed_param, what, &bl->warp_param, err);
    bl->warp_min = w.min_rate;
    bl->warp_max = w.max_rate;
    return r;
}

/* The warped blend node n's edges: each clip's root displacement per cycle (its own root
 * motion, or the velocity the graph states times the cycle), its cycle length, and whether it
 * keeps a group of its own. */
static void rate_warp_edges(cb_graph_builder *b, const bnode *n, const cb_graph_blend_space_desc *d,
                            uint32_t dim)
{
    const cb_graph_rate_warp w = cb_graph_query_rate_warp(&d->rate_warp);
    for (uint32_t e = 0; e < n->n.edge_count; ++e) {
        gedge *ed = &VEC_AT(b->edges, gedge, n->n.first_edge + e);
        const bnode *child = &VEC_AT(b->nodes, bnode, ed->child);
        const gclip *c = &child->n.u.clip;
        ed->warp_own = own_group(child, n->explicit_group);
        ed->warp_dur = c->duration_s / fabsf(c->speed);
        if (w.speed_from != CB_WARP_SPEED_FROM_ROOT_MOTION) {
            float u[2];
            stated_velocity(&w, d, dim, e, u);
            ed->warp_dx = u[0] * ed->warp_dur;
            ed->warp_dz = u[1] * ed->warp_dur;
            continue;
        }
        cb_clip_root_motion rm = cb_clip_query_root_motion(c->clip);
        float sign = c->speed < 0.0f ? -1.0f : 1.0f;
        ed->warp_dx = sign * rm.displacement[0];
        ed->warp_dz = sign * rm.displacement[2];
    }
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
    uint32_t params[2];
    for (uint32_t k = 0; k < sd.dimension && r == CB_OK; ++k) {
        r = find_number(b, d->params[k], what, &params[k], err);
    }
    if (r == CB_OK)
        r = find_group(b, d->sync_group, what, &n.explicit_group, err);
    if (r == CB_OK)
        r = rate_warp_of(b, d, n.explicit_group, sd.dimension, what, &n.n.u.blend, err);
    if (r != CB_OK) {
        return r;
    }
    sd.nodes = d->positions;
    r = push_blend(b, &n, &sd, params, d->children, what, out, err);
    if (r == CB_OK && n.n.u.blend.warp_param != GNONE) {
        rate_warp_edges(b, &VEC_AT(b->nodes, bnode, b->nodes.count - 1), d, sd.dimension);
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
    uint32_t params[CB_GRAPH_MAX_CHILDREN];
    for (uint32_t k = 0; k < d->child_count && r == CB_OK; ++k) {
        r = find_number(b, d->weights[k], what, &params[k], err);
    }
    if (r != CB_OK) {
        return r;
    }
    /* The direct rule is the DIRECT solver's (solvers/direct.c): one rule for both. */
    bnode n = {.n = {.type = GNODE_BLEND, .u.blend.warp_param = GNONE}, .explicit_group = GNONE};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    cb_solver_desc sd = {
        .kind = CB_SOLVER_KIND_DIRECT, .node_count = d->child_count, .allocator = b->allocator};
    sd = cb_solver_query_desc(&sd);
    return push_blend(b, &n, &sd, params, d->children, what, out, err);
}

cb_graph_layer cb_graph_query_layer(const cb_graph_layer *layer)
{
    cb_graph_layer l = layer != NULL ? *layer : (cb_graph_layer){0};
    if (l.mode == _CB_LAYER_MODE_DEFAULT) {
        l.mode = CB_LAYER_OVERRIDE;
    }
    return l;
}

/* A layer's mask (soa_joint_count floats, owned by the builder): the subtree of mask_joint, or
 * the explicit weights, or none (NULL: every joint). */
static cb_result layer_mask(cb_graph_builder *b, const cb_graph_layer *l, uint32_t k,
                            const char *what, float **out, cb_error *err)
{
    *out = NULL;
    size_t n = cb_skeleton_joint_count(b->skeleton), soa = cb_skeleton_soa_joint_count(b->skeleton);
    if (l->mask_joint == NULL && l->mask.count == 0) {
        return CB_OK;
    }
    if (l->mask_joint == NULL && (l->mask.ptr == NULL || l->mask.count < n)) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "%s: layer %u: the mask needs %zu weights",
                            what, k, n);
    }
    float *mask = cb_alloc(&b->allocator, soa * sizeof(float), 64);
    if (mask == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    cb_result r = CB_OK;
    if (l->mask_joint != NULL) {
        cb_mask_rule rule = {.joint = l->mask_joint, .weight = 1.0f};
        cb_error inner = {0};
        r = cb_skeleton_build_mask(b->skeleton, 0.0f, &rule, 1, (cb_float_span){mask, soa}, &inner);
        if (r != CB_OK) {
            r = cb_error_set(err, r, "%s: layer %u: %s", what, k, inner.message);
        }
    }
    for (size_t j = 0; j < soa && l->mask_joint == NULL && r == CB_OK; ++j) {
        float v = j < n ? l->mask.ptr[j] : 0.0f;
        if (!(v >= 0.0f && v <= 1.0f)) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                             "%s: layer %u: mask[%zu] = %g is outside [0, 1]", what, k, j,
                             (double)v);
        }
        mask[j] = v;
    }
    if (r != CB_OK) {
        cb_free(&b->allocator, mask, soa * sizeof(float));
        return r;
    }
    *out = mask;
    return CB_OK;
}

/* One layer of a layers node, checked; its mask is allocated last (nothing to undo before). */
static cb_result make_layer(cb_graph_builder *b, const cb_graph_layer *desc, uint32_t k,
                            const char *what, glayer *out, cb_error *err)
{
    const cb_graph_layer l = cb_graph_query_layer(desc);
    *out = (glayer){.node = cb_graph_node_index(l.node), .mode = l.mode};
    if (out->node >= b->nodes.count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: layer %u's node does not exist",
                            what, k);
    }
    if ((unsigned)l.mode >= _CB_LAYER_MODE_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: layer %u: unknown mode", what, k);
    }
    const bnode *ln = &VEC_AT(b->nodes, bnode, out->node);
    bool additive = ln->n.type == GNODE_CLIP && ln->additive_clip;
    if (l.mode == CB_LAYER_ADDITIVE && !additive) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "%s: layer %u is additive: its node must be a clip node with an "
                            "additive clip",
                            what, k);
    }
    if (l.mode == CB_LAYER_OVERRIDE && additive) {
        return cb_error_set(err, CB_ERR_MISMATCH, "%s: layer %u overrides with an additive clip",
                            what, k);
    }
    cb_result r = find_optional_number(b, l.weight, what, &out->weight_param, err);
    return r != CB_OK ? r : layer_mask(b, &l, k, what, &out->mask, err);
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
    if (cb_graph_node_index(d->base) >= b->nodes.count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: base is not a node", what);
    }
    if (d->layer_count > CB_GRAPH_MAX_LAYERS || (d->layer_count > 0 && d->layers == NULL)) {
        return cb_error_set(err, d->layers == NULL ? CB_ERR_NULL_ARGUMENT : CB_ERR_TOO_MANY,
                            "%s: layers missing or more than %d", what, CB_GRAPH_MAX_LAYERS);
    }
    cb_graph_node children[CB_GRAPH_MAX_LAYERS + 1] = {d->base};
    size_t first_layer = b->layers.count, first_edge = b->edges.count;
    size_t mask_bytes = cb_skeleton_soa_joint_count(b->skeleton) * sizeof(float);
    for (uint32_t k = 0; k < d->layer_count && r == CB_OK; ++k) {
        glayer g;
        r = make_layer(b, &d->layers[k], k, what, &g, err);
        if (r == CB_OK && !vec_push(&b->allocator, &b->layers, &g, 1, NULL)) {
            cb_free(&b->allocator, g.mask, mask_bytes);
            r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
        }
        children[k + 1] = d->layers[k].node;
    }
    bnode n = {.n = {.type = GNODE_LAYERS}, .explicit_group = GNONE};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    n.n.u.layers.first_layer = (uint32_t)first_layer;
    n.n.u.layers.layer_count = d->layer_count;
    if (r == CB_OK) {
        r = push_node(b, &n, children, d->layer_count + 1, what, out, err);
    }
    if (r != CB_OK) {
        for (size_t i = first_layer; i < b->layers.count; ++i) {
            cb_free(&b->allocator, VEC_AT(b->layers, glayer, i).mask, mask_bytes);
        }
        b->layers.count = first_layer;
        return r;
    }
    for (size_t i = first_layer; i < b->layers.count; ++i) {
        gparam *p = VEC_AT(b->layers, glayer, i).weight_param != GNONE
                        ? &VEC_AT(b->params, gparam, VEC_AT(b->layers, glayer, i).weight_param)
                        : NULL;
        if (p != NULL) {
            p->is_weight = true;
        }
    }
    /* Layers do not move the character: only the base carries root motion. */
    for (uint32_t k = 1; k <= d->layer_count; ++k) {
        VEC_AT(b->edges, gedge, first_edge + k).root_motion = false;
    }
    return CB_OK;
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

cb_graph_condition cb_graph_query_condition(const cb_graph_condition *condition)
{
    cb_graph_condition c = condition != NULL ? *condition : (cb_graph_condition){0};
    if (c.op == _CB_COMPARE_DEFAULT) {
        c.op = CB_COMPARE_TRUE;
    }
    return c;
}

cb_graph_transition cb_graph_query_transition(const cb_graph_transition *transition)
{
    cb_graph_transition t = transition != NULL ? *transition : (cb_graph_transition){0};
    if (t.blend == _CB_TRANSITION_BLEND_DEFAULT) {
        t.blend = CB_TRANSITION_CROSSFADE;
    }
    if (t.interruption == _CB_INTERRUPTION_DEFAULT) {
        t.interruption = CB_INTERRUPTION_NONE;
    }
    return t;
}

cb_graph_state cb_graph_query_state(const cb_graph_state *state)
{
    cb_graph_state s = state != NULL ? *state : (cb_graph_state){0};
    if (s.speed == 0.0f) {
        s.speed = CB_GRAPH_DEFAULT_SPEED;
    }
    return s;
}

/* Which comparisons apply to a parameter type (graph.h, cb_graph_condition). */
static bool comparison_applies(cb_param_type type, cb_compare op)
{
    bool is_truth = op == CB_COMPARE_TRUE || op == CB_COMPARE_FALSE;
    switch (type) {
    case CB_PARAM_FLOAT:
        return op == CB_COMPARE_GREATER || op == CB_COMPARE_LESS;
    case CB_PARAM_INT:
        return !is_truth;
    case CB_PARAM_BOOL:
        return is_truth;
    default: /* trigger */
        return op == CB_COMPARE_TRUE;
    }
}

static cb_result add_condition(cb_graph_builder *b, const cb_graph_condition *desc,
                               const char *what, uint32_t t, cb_error *err)
{
    const cb_graph_condition c = cb_graph_query_condition(desc);
    gcondition g = {.op = c.op, .value = c.value};
    cb_result r = find_param(b, c.param, what, &g.param, err);
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
    if (!comparison_applies(p->type, g.op)) {
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

/* State s of a machine being added, checked against the states before it. */
static cb_result make_state(const cb_graph_builder *b, const cb_graph_state *desc, uint32_t s,
                            const gstate *before, const char *what, gstate *out, cb_error *err)
{
    const cb_graph_state st = cb_graph_query_state(desc);
    if (!valid_name(st.name)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: state %u has no valid name", what,
                            s);
    }
    for (uint32_t o = 0; o < s; ++o) {
        if (strcmp(before[o].name, st.name) == 0) {
            return cb_error_set(err, CB_ERR_DUPLICATE, "%s: two states are named '%s'", what,
                                st.name);
        }
    }
    if (cb_graph_node_index(st.node) >= b->nodes.count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: state '%s' has no valid node", what,
                            st.name);
    }
    if (!isfinite(st.speed)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: state '%s': speed is not finite", what,
                            st.name);
    }
    *out = (gstate){.node = cb_graph_node_index(st.node), .speed = st.speed};
    snprintf(out->name, sizeof out->name, "%s", st.name);
    return CB_OK;
}

/* The checks of a transition's own values (its states are looked up by the caller). */
static cb_result check_transition(const cb_graph_transition *tr, const char *what, uint32_t t,
                                  cb_error *err)
{
    if (!isfinite(tr->duration_s) || tr->duration_s < 0.0f ||
        (tr->has_exit_time && !(tr->exit_time >= 0.0f && isfinite(tr->exit_time)))) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: transition %u: duration and exit time must be finite and >= 0",
                            what, t);
    }
    if ((unsigned)tr->blend >= _CB_TRANSITION_BLEND_COUNT ||
        (unsigned)tr->interruption >= _CB_INTERRUPTION_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: transition %u: bad blend or interruption", what, t);
    }
    if (tr->condition_count > CB_GRAPH_MAX_CONDITIONS ||
        (tr->condition_count > 0 && tr->conditions == NULL)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: transition %u: conditions missing or more than %d", what, t,
                            CB_GRAPH_MAX_CONDITIONS);
    }
    if (tr->condition_count == 0 && !tr->has_exit_time) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: transition %u has neither conditions nor an exit time: it would "
                            "fire every frame",
                            what, t);
    }
    return CB_OK;
}

/* Transition t of a machine: its states resolved, its conditions pushed, then itself. */
static cb_result add_transition(cb_graph_builder *b, const cb_graph_transition *desc, uint32_t t,
                                const gstate *states, uint32_t state_count, const char *what,
                                gsm *sm, cb_error *err)
{
    const cb_graph_transition tr = cb_graph_query_transition(desc);
    gtransition g = {
        .from = GNONE,
        .first_condition = (uint32_t)b->conditions.count,
        .condition_count = tr.condition_count,
        .has_exit_time = tr.has_exit_time,
        .exit_time = tr.exit_time,
        .duration_s = tr.duration_s,
        .blend = tr.blend,
        .interruption = tr.interruption,
        .to_self = tr.to_self,
    };
    cb_result r = CB_OK;
    if (tr.from != NULL) {
        r = find_state(states, state_count, tr.from, what, "source", &g.from, err);
    }
    if (r == CB_OK)
        r = find_state(states, state_count, tr.to, what, "destination", &g.to, err);
    if (r == CB_OK)
        r = check_transition(&tr, what, t, err);
    for (uint32_t c = 0; c < tr.condition_count && r == CB_OK; ++c) {
        r = add_condition(b, &tr.conditions[c], what, t, err);
    }
    if (r == CB_OK && !vec_push(&b->allocator, &b->transitions, &g, 1, NULL)) {
        r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    if (r == CB_OK &&
        (g.blend == CB_TRANSITION_INERTIALIZE || g.interruption != CB_INTERRUPTION_NONE)) {
        /* An interrupted transition continues from the pose shown by inertializing: the
         * machine needs offsets per character. Marked; numbered at build. */
        sm->inert_slot = 0;
    }
    return r;
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
    for (uint32_t s = 0; s < d->state_count && r == CB_OK; ++s) {
        r = make_state(b, &d->states[s], s, states, what, &states[s], err);
        children[s] = d->states[s].node;
    }
    gsm sm = {.state_count = d->state_count,
              .transition_count = d->transition_count,
              .inert_slot = GNONE};
    if (r == CB_OK && d->initial != NULL) {
        r = find_state(states, d->state_count, d->initial, what, "initial", &sm.initial, err);
    }
    if (r != CB_OK) {
        return r;
    }
    size_t first_transition = b->transitions.count, first_condition = b->conditions.count;
    size_t first_state = b->states.count, sm_index = b->sms.count;
    for (uint32_t t = 0; t < d->transition_count && r == CB_OK; ++t) {
        r = add_transition(b, &d->transitions[t], t, states, d->state_count, what, &sm, err);
    }
    sm.first_state = (uint32_t)first_state;
    sm.first_transition = (uint32_t)first_transition;
    sm.node = (uint32_t)b->nodes.count;
    bnode n = {.n = {.type = GNODE_SM}, .explicit_group = GNONE};
    snprintf(n.n.name, sizeof n.n.name, "%s", d->name != NULL ? d->name : "");
    n.n.u.sm.sm = (uint32_t)sm_index;
    if (r == CB_OK && (!vec_push(&b->allocator, &b->states, states, d->state_count, NULL) ||
                       !vec_push(&b->allocator, &b->sms, &sm, 1, NULL))) {
        r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", what);
    }
    if (r == CB_OK) {
        r = push_node(b, &n, children, d->state_count, what, out, err);
    }
    if (r != CB_OK) {
        b->transitions.count = first_transition;
        b->conditions.count = first_condition;
        b->states.count = first_state;
        b->sms.count = sm_index;
    }
    return r;
}

cb_result cb_graph_set_root(cb_graph_builder *b, cb_graph_node root, cb_error *err)
{
    if (b == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_set_root: builder is NULL");
    }
    if (cb_graph_node_index(root) >= b->nodes.count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_graph_set_root: node %u does not exist", root.id);
    }
    b->root = cb_graph_node_index(root);
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

cb_result cb_graph_set_lod_param(cb_graph_builder *b, const char *name, cb_error *err)
{
    const char *what = "LOD parameter";
    if (b == NULL || name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: NULL argument", what);
    }
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: the builder has already built",
                            what);
    }
    /* Only once found and numeric: a refused name leaves the builder's LOD parameter as it was
     * (find_param writes the index before find_number checks the type). */
    uint32_t p;
    cb_result r = find_number(b, name, what, &p, err);
    if (r == CB_OK) {
        b->lod_param = p;
    }
    return r;
}

/* A step with its LOD limit (cb_graph_lod_limit): none runs at any LOD (max_lod INFINITY, which
 * no LOD is above). Whether the graph has its parameter is checked at build (compile.c). */
static cb_result push_ik(cb_graph_builder *b, const gik *step, const cb_graph_lod_limit *lod,
                         const char *what, cb_error *err)
{
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: the builder has already built",
                            what);
    }
    if (b->iks.count >= CB_GRAPH_MAX_IK) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "%s: more than %d IK steps", what,
                            CB_GRAPH_MAX_IK);
    }
    if (!isfinite(lod->max_lod)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: max_lod is not finite", what);
    }
    if (!(lod->max_lod >= 0.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: max_lod (%g) must be >= 0", what,
                            (double)lod->max_lod);
    }
    if (!lod->on && lod->max_lod != 0.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: max_lod (%g) is set but lod.on is false", what,
                            (double)lod->max_lod);
    }
    gik g = *step;
    g.lod_limited = lod->on;
    g.max_lod = lod->on ? lod->max_lod : INFINITY;
    if (!vec_push(&b->allocator, &b->iks, &g, 1, NULL)) {
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

/* A step's job, validated now as the runtime will run it (in place on a pose of the skeleton)
 * with the frame's values at zero: what depends on the frame (target, pole, the pose) is left to
 * the frame; everything else is checked once, here, by the job's own validator. The rest pose
 * stands in for the character's pose: validation reads only its size and alignment. */
static cb_result validate_ik(const cb_graph_builder *b, const gik *g, const char *what,
                             cb_error *err)
{
    cb_xform_group_cspan rest = cb_skeleton_rest_pose(b->skeleton);
    cb_xform_group_span pose = {(cb_xform_group *)rest.ptr, rest.count}; /* not written */
    const float zero[3] = {0.0f, 0.0f, 0.0f};
    cb_error inner = {0};
    cb_result r;
    if (g->type == GIK_TWO_BONE) {
        cb_ik_two_bone_job job = gik_two_bone_job(g, b->skeleton, pose, zero, zero, 1.0f);
        r = cb_ik_two_bone_job_validate(&job, &inner);
    } else if (g->type == GIK_AIM) {
        cb_ik_aim_joint chain[CB_IK_AIM_MAX_JOINTS];
        cb_ik_aim_job job = gik_aim_job(g, b->skeleton, pose, chain, zero, 1.0f);
        r = cb_ik_aim_job_validate(&job, &inner);
    } else if (g->type == GIK_ORIENT) {
        cb_ik_aim_joint spine[CB_IK_AIM_MAX_JOINTS];
        cb_ik_orient_job job = gik_orient_job(g, b->skeleton, pose, spine, 0.0f, 1.0f);
        r = cb_ik_orient_job_validate(&job, &inner);
    } else {
        cb_ik_stride_leg legs[CB_IK_STRIDE_MAX_LEGS];
        cb_ik_stride_job job = gik_stride_job(g, b->skeleton, pose, legs, 1.0f, 0.0f, 0.0f, 1.0f);
        r = cb_ik_stride_job_validate(&job, &inner);
    }
    /* The job's message after its own "<job>: " prefix: `what` names the step. */
    const char *msg = strstr(inner.message, ": ");
    return r == CB_OK ? CB_OK
                      : cb_error_set(err, r, "%s: %s", what, msg != NULL ? msg + 2 : inner.message);
}

cb_graph_two_bone_ik_desc cb_graph_query_two_bone_ik_desc(const cb_graph_two_bone_ik_desc *desc)
{
    cb_graph_two_bone_ik_desc d = desc != NULL ? *desc : (cb_graph_two_bone_ik_desc){0};
    if (d.soften == 0.0f) {
        d.soften = CB_IK_DEFAULT_SOFTEN;
    }
    return d;
}

cb_result cb_graph_add_two_bone_ik(cb_graph_builder *b, const cb_graph_two_bone_ik_desc *desc,
                                   cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "two-bone IK: NULL argument");
    }
    const cb_graph_two_bone_ik_desc dd = cb_graph_query_two_bone_ik_desc(desc), *d = &dd;
    const char *what = "two-bone IK";
    gik g = {.type = GIK_TWO_BONE, .joint_count = 3, .soften = d->soften};
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
    /* The job accepts 0 as "the default"; here 0 was resolved, so (0, 1]. */
    if (!(g.soften > 0.0f && g.soften <= 1.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: soften must be in (0, 1]", what);
    }
    memcpy(g.mid_axis, d->mid_axis, sizeof g.mid_axis);
    r = validate_ik(b, &g, what, err);
    if (r == CB_OK)
        r = target_params(b, d->target, what, "target", g.target, false, err);
    if (r == CB_OK)
        r = target_params(b, d->pole, what, "pole", g.pole, true, err);
    if (r == CB_OK)
        r = find_optional_number(b, d->weight, what, &g.weight, err);
    return r != CB_OK ? r : push_ik(b, &g, &d->lod, what, err);
}

cb_graph_aim_ik_desc cb_graph_query_aim_ik_desc(const cb_graph_aim_ik_desc *desc)
{
    cb_graph_aim_ik_desc d = desc != NULL ? *desc : (cb_graph_aim_ik_desc){0};
    if (d.forward[0] == 0.0f && d.forward[1] == 0.0f && d.forward[2] == 0.0f) {
        d.forward[2] = 1.0f; /* +Z */
    }
    if (d.up[0] == 0.0f && d.up[1] == 0.0f && d.up[2] == 0.0f) {
        d.up[1] = 1.0f; /* +Y */
    }
    if (d.limit_rad == 0.0f) {
        d.limit_rad = CB_IK_AIM_DEFAULT_ANGLE_LIMIT;
    }
    return d;
}

cb_result cb_graph_add_aim_ik(cb_graph_builder *b, const cb_graph_aim_ik_desc *desc, cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "aim IK: NULL argument");
    }
    const cb_graph_aim_ik_desc dd = cb_graph_query_aim_ik_desc(desc), *d = &dd;
    const char *what = "aim IK";
    if (d->joint_count == 0 || d->joint_count > CB_IK_AIM_MAX_JOINTS || d->joints == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: 1 to %d joints are needed", what,
                            CB_IK_AIM_MAX_JOINTS);
    }
    gik g = {.type = GIK_AIM, .joint_count = d->joint_count, .limit_rad = d->limit_rad};
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
        g.joint_weights[k] = d->joint_weights != NULL ? d->joint_weights[k]
                                                      : (k + 1 == d->joint_count ? 1.0f : 0.0f);
    }
    memcpy(g.forward, d->forward, sizeof g.forward);
    memcpy(g.up, d->up, sizeof g.up);
    memcpy(g.pole_dir, d->pole, sizeof g.pole_dir);
    memcpy(g.offset, d->offset, sizeof g.offset);
    if (!(g.limit_rad > 0.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: limit_rad must be in (0, pi]", what);
    }
    cb_result r = validate_ik(b, &g, what, err);
    g.pole[0] = g.pole[1] = g.pole[2] = GNONE;
    if (r == CB_OK)
        r = target_params(b, d->target, what, "target", g.target, false, err);
    if (r == CB_OK)
        r = find_optional_number(b, d->weight, what, &g.weight, err);
    return r != CB_OK ? r : push_ik(b, &g, &d->lod, what, err);
}

cb_graph_orientation_warp_desc
cb_graph_query_orientation_warp_desc(const cb_graph_orientation_warp_desc *desc)
{
    cb_graph_orientation_warp_desc d = desc != NULL ? *desc : (cb_graph_orientation_warp_desc){0};
    if (d.hip_joint == NULL) {
        d.hip_joint = "pelvis";
    }
    if (d.limit_rad == 0.0f) {
        d.limit_rad = CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT;
    }
    return d;
}

cb_result cb_graph_add_orientation_warp(cb_graph_builder *b,
                                        const cb_graph_orientation_warp_desc *desc, cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "orientation warp: NULL argument");
    }
    const cb_graph_orientation_warp_desc dd = cb_graph_query_orientation_warp_desc(desc), *d = &dd;
    const char *what = "orientation warp";
    if (d->spine_count > CB_IK_AIM_MAX_JOINTS - 1 ||
        (d->spine_count > 0 && d->spine_joints == NULL)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: 0 to %d spine joints are needed",
                            what, CB_IK_AIM_MAX_JOINTS - 1);
    }
    if (!(d->limit_rad > 0.0f && d->limit_rad <= CB_FPI)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: limit_rad (%g) must be in (0, pi]",
                            what, (double)d->limit_rad);
    }
    gik g = {.type = GIK_ORIENT, .joint_count = d->spine_count + 1, .limit_rad = d->limit_rad};
    cb_result r = find_joint(b, d->hip_joint, what, &g.joints[0], err);
    for (uint32_t k = 0; k < d->spine_count && r == CB_OK; ++k) {
        r = find_joint(b, d->spine_joints[k], what, &g.joints[k + 1], err);
        if (r == CB_OK && (!is_ancestor(b->skeleton, g.joints[k], g.joints[k + 1]) ||
                           g.joints[k] == g.joints[k + 1])) {
            r = cb_error_set(err, CB_ERR_HIERARCHY, "%s: '%s' is not an ancestor of '%s'", what,
                             k == 0 ? d->hip_joint : d->spine_joints[k - 1], d->spine_joints[k]);
        }
        g.joint_weights[k + 1] =
            d->spine_weights != NULL ? d->spine_weights[k] : 1.0f / (float)d->spine_count;
    }
    if (r == CB_OK)
        r = validate_ik(b, &g, what, err);
    g.target[1] = g.target[2] = g.pole[0] = g.pole[1] = g.pole[2] = GNONE;
    if (r == CB_OK && d->angle == NULL) {
        r = cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: the angle parameter is missing", what);
    }
    if (r == CB_OK)
        r = find_number(b, d->angle, what, &g.target[0], err);
    if (r == CB_OK)
        r = find_optional_number(b, d->weight, what, &g.weight, err);
    return r != CB_OK ? r : push_ik(b, &g, &d->lod, what, err);
}

cb_graph_stride_warp_desc cb_graph_query_stride_warp_desc(const cb_graph_stride_warp_desc *desc)
{
    cb_graph_stride_warp_desc d = desc != NULL ? *desc : (cb_graph_stride_warp_desc){0};
    if (d.hip_joint == NULL) {
        d.hip_joint = "pelvis";
    }
    if (d.soften == 0.0f) {
        d.soften = CB_IK_DEFAULT_SOFTEN;
    }
    return d;
}

/* The stride warp's legs: names to joints (the job's validator checks the chains). */
static cb_result stride_legs(cb_graph_builder *b, const cb_graph_stride_warp_desc *d, gik *g,
                             const char *what, cb_error *err)
{
    cb_result r = CB_OK;
    for (uint32_t l = 0; l < d->leg_count && r == CB_OK; ++l) {
        const cb_graph_stride_leg *leg = &d->legs[l];
        const char *names[3] = {leg->start_joint, leg->mid_joint, leg->end_joint};
        for (int k = 0; k < 3 && r == CB_OK; ++k) {
            r = find_joint(b, names[k], what, &g->joints[1 + 3 * l + k], err);
        }
        memcpy(g->leg_axes[l], leg->mid_axis, sizeof g->leg_axes[l]);
    }
    return r;
}

cb_result cb_graph_add_stride_warp(cb_graph_builder *b, const cb_graph_stride_warp_desc *desc,
                                   cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "stride warp: NULL argument");
    }
    const cb_graph_stride_warp_desc dd = cb_graph_query_stride_warp_desc(desc), *d = &dd;
    const char *what = "stride warp";
    if (d->leg_count == 0 || d->leg_count > CB_IK_STRIDE_MAX_LEGS || d->legs == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: 1 to %d legs are needed", what,
                            CB_IK_STRIDE_MAX_LEGS);
    }
    if (!(d->soften > 0.0f && d->soften <= 1.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: soften must be in (0, 1]", what);
    }
    gik g = {.type = GIK_STRIDE, .joint_count = 1 + 3 * d->leg_count, .soften = d->soften};
    cb_result r = find_joint(b, d->hip_joint, what, &g.joints[0], err);
    if (r == CB_OK)
        r = stride_legs(b, d, &g, what, err);
    if (r == CB_OK)
        r = validate_ik(b, &g, what, err);
    g.pole[0] = g.pole[1] = g.pole[2] = GNONE;
    if (r == CB_OK && (d->scale == NULL || d->direction[0] == NULL || d->direction[1] == NULL)) {
        r = cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                         "%s: the scale and both direction parameters are needed", what);
    }
    if (r == CB_OK)
        r = find_number(b, d->scale, what, &g.target[0], err);
    if (r == CB_OK)
        r = find_number(b, d->direction[0], what, &g.target[1], err);
    if (r == CB_OK)
        r = find_number(b, d->direction[1], what, &g.target[2], err);
    if (r == CB_OK)
        r = find_optional_number(b, d->weight, what, &g.weight, err);
    return r != CB_OK ? r : push_ik(b, &g, &d->lod, what, err);
}

/* ------------------------------------------------------------------------------------------ */
/* For the steps added in files of their own (foot_lock.c): the lookups and checks above.     */

cb_result cb_graph_builder_joint(const cb_graph_builder *b, const char *name, const char *what,
                                 uint32_t *out, cb_error *err)
{
    return find_joint(b, name, what, out, err);
}

cb_result cb_graph_builder_float(const cb_graph_builder *b, const char *name, const char *what,
                                 uint32_t *out, cb_error *err)
{
    return find_float(b, name, what, out, err);
}

cb_result cb_graph_builder_number(const cb_graph_builder *b, const char *name, const char *what,
                                  uint32_t *out, cb_error *err)
{
    return find_optional_number(b, name, what, out, err);
}

cb_result cb_graph_builder_check_ik(const cb_graph_builder *b, const gik *g, const char *what,
                                    cb_error *err)
{
    return validate_ik(b, g, what, err);
}

cb_result cb_graph_builder_push_ik(cb_graph_builder *b, const gik *g, const cb_graph_lod_limit *lod,
                                   const char *what, cb_error *err)
{
    return push_ik(b, g, lod, what, err);
}
