/* Graphs from JSON (docs/graph.md): jansson parses, this file maps the document onto the
 * builder, and every error names the line and column of the value at fault.
 *
 * jansson reports positions only for syntax errors; it keeps none for values. So the loader
 * tracks the path it is at (keys and array indices from the document's root) and, when it has
 * to report a problem, walks the text along that path (json_locate below) to find where the
 * value starts. The text is known to be valid JSON by then, which keeps the walk small.
 *
 * Nodes reference each other by name and may appear in any order; they are added to the
 * builder depth-first from the root (children before parents, in the order they are listed),
 * then any node the root does not reach, in document order. A reference back to a node still
 * being built is a cycle. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "graph/graph_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Locating a path in the text                                                                */

enum { MAX_DEPTH = 24 };

typedef struct jseg {
    const char *key; /* object member, or NULL for an array element */
    size_t index;
} jseg;

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
    }
    return p;
}

static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end && *p != '"'; p++) {
        if (*p == '\\') {
            p++;
        }
    }
    return p < end ? p + 1 : end;
}

static const char *skip_value(const char *p, const char *end)
{
    p = skip_ws(p, end);
    if (p >= end) {
        return end;
    }
    if (*p == '"') {
        return skip_string(p, end);
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < end; p++) {
            if (*p == '"') {
                p = skip_string(p, end) - 1;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0) {
                    return p + 1;
                }
            }
        }
        return end;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' &&
           *p != '\r' && *p != '\t') {
        p++;
    }
    return p;
}

/* Does the string literal at p (a '"') equal key? Keys in graphs are plain ASCII names. */
static bool key_equals(const char *p, const char *end, const char *key)
{
    size_t n = strlen(key);
    return (size_t)(end - p) > n + 1 && strncmp(p + 1, key, n) == 0 && p[n + 1] == '"';
}

/* Where the value at `path` starts; the document start if the path cannot be followed. */
static const char *json_locate(const char *text, size_t len, const jseg *path, int depth)
{
    const char *p = text, *end = text + len;
    p = skip_ws(p, end);
    for (int d = 0; d < depth; ++d) {
        if (p >= end) {
            return text;
        }
        if (path[d].key != NULL) {
            if (*p != '{') {
                return p;
            }
            p++;
            for (;;) {
                p = skip_ws(p, end);
                if (p >= end || *p != '"') {
                    return p;
                }
                bool match = key_equals(p, end, path[d].key);
                p = skip_ws(skip_string(p, end), end);
                if (p < end && *p == ':') {
                    p = skip_ws(p + 1, end);
                }
                if (match) {
                    break;
                }
                p = skip_ws(skip_value(p, end), end);
                if (p < end && *p == ',') {
                    p++;
                    continue;
                }
                return p;
            }
        } else {
            if (*p != '[') {
                return p;
            }
            p = skip_ws(p + 1, end);
            for (size_t i = 0; i < path[d].index; ++i) {
                p = skip_ws(skip_value(p, end), end);
                if (p < end && *p == ',') {
                    p = skip_ws(p + 1, end);
                }
            }
        }
    }
    return p;
}

static void line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at; ++p) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The loader                                                                                 */

typedef struct jnode {
    const char *name;
    json_t *value;
    int state; /* 0 not built, 1 being built, 2 built */
    cb_graph_node id;
} jnode;

typedef struct loader {
    const char *text;
    size_t len;
    const char *source;
    cb_graph_builder *b;
    cb_error *err;
    jseg path[MAX_DEPTH];
    int depth;
    jnode *nodes;
    size_t node_count;
} loader;

static void push_key(loader *l, const char *key)
{
    if (l->depth < MAX_DEPTH) {
        l->path[l->depth] = (jseg){key, 0};
    }
    l->depth++;
}

static void push_index(loader *l, size_t index)
{
    if (l->depth < MAX_DEPTH) {
        l->path[l->depth] = (jseg){NULL, index};
    }
    l->depth++;
}

static void pop(loader *l)
{
    l->depth--;
}

/* An error at the current path: "source:line:col: message". */
static cb_result fail(loader *l, cb_result code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static cb_result fail(loader *l, cb_result code, const char *fmt, ...)
{
    char msg[CB_ERROR_MESSAGE_SIZE];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    int line, col;
    const char *at =
        json_locate(l->text, l->len, l->path, l->depth < MAX_DEPTH ? l->depth : MAX_DEPTH);
    line_col(l->text, at, &line, &col);
    return cb_error_set(l->err, code, "%s:%d:%d: %s", l->source, line, col, msg);
}

/* A builder error, placed at the current path. */
static cb_result builder_fail(loader *l, cb_result code, const cb_error *inner)
{
    return fail(l, code, "%s", inner->message);
}

/* Keys an object may have: anything else is a typo, and refused. */
static cb_result check_keys(loader *l, json_t *obj, const char *what, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        bool ok = false;
        for (const char *const *a = allowed; *a != NULL && !ok; ++a) {
            ok = strcmp(*a, key) == 0;
        }
        if (!ok) {
            push_key(l, key);
            cb_result r = fail(l, CB_ERR_PARSE, "unknown key '%s' in %s", key, what);
            pop(l);
            return r;
        }
    }
    return CB_OK;
}

/* Typed member access. Each reports a missing required member at the object, a wrong type at
 * the value. */
static cb_result get_string(loader *l, json_t *obj, const char *key, bool required,
                            const char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (v == NULL || json_is_null(v)) {
        return required ? fail(l, CB_ERR_PARSE, "missing \"%s\"", key) : CB_OK;
    }
    if (!json_is_string(v)) {
        push_key(l, key);
        cb_result r = fail(l, CB_ERR_PARSE, "\"%s\" must be a string", key);
        pop(l);
        return r;
    }
    *out = json_string_value(v);
    return CB_OK;
}

static cb_result get_number(loader *l, json_t *obj, const char *key, bool required, float *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return required ? fail(l, CB_ERR_PARSE, "missing \"%s\"", key) : CB_OK;
    }
    if (!json_is_number(v)) {
        push_key(l, key);
        cb_result r = fail(l, CB_ERR_PARSE, "\"%s\" must be a number", key);
        pop(l);
        return r;
    }
    *out = (float)json_number_value(v);
    return CB_OK;
}

/* An optional whole number in [0, 65536] (counts and grid sizes). */
static cb_result get_count(loader *l, json_t *obj, const char *key, uint32_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return CB_OK;
    }
    double d = json_is_number(v) ? json_number_value(v) : -1.0;
    if (!(d >= 0.0 && d <= 65536.0) || d != floor(d)) {
        push_key(l, key);
        cb_result r = fail(l, CB_ERR_PARSE, "\"%s\" must be a whole number from 0 to 65536", key);
        pop(l);
        return r;
    }
    *out = (uint32_t)d;
    return CB_OK;
}

static cb_result get_bool(loader *l, json_t *obj, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return CB_OK;
    }
    if (!json_is_boolean(v)) {
        push_key(l, key);
        cb_result r = fail(l, CB_ERR_PARSE, "\"%s\" must be true or false", key);
        pop(l);
        return r;
    }
    *out = json_is_true(v);
    return CB_OK;
}

/* An array of exactly n strings (parameter names of a vector: [x, y, z]). */
static cb_result get_names(loader *l, json_t *obj, const char *key, size_t n, bool required,
                           const char **out)
{
    json_t *v = json_object_get(obj, key);
    for (size_t i = 0; i < n; ++i) {
        out[i] = NULL;
    }
    if (v == NULL) {
        return required ? fail(l, CB_ERR_PARSE, "missing \"%s\"", key) : CB_OK;
    }
    push_key(l, key);
    cb_result r = CB_OK;
    if (!json_is_array(v) || json_array_size(v) != n) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must be an array of %zu parameter names", key, n);
    }
    for (size_t i = 0; i < n && r == CB_OK; ++i) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e)) {
            push_index(l, i);
            r = fail(l, CB_ERR_PARSE, "a parameter name must be a string");
            pop(l);
        } else {
            out[i] = json_string_value(e);
        }
    }
    pop(l);
    return r;
}

static cb_result get_vec3(loader *l, json_t *obj, const char *key, float out[3])
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return CB_OK;
    }
    push_key(l, key);
    cb_result r = CB_OK;
    if (!json_is_array(v) || json_array_size(v) != 3) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must be an array of 3 numbers", key);
    }
    for (size_t i = 0; i < 3 && r == CB_OK; ++i) {
        json_t *e = json_array_get(v, i);
        if (!json_is_number(e)) {
            push_index(l, i);
            r = fail(l, CB_ERR_PARSE, "expected a number");
            pop(l);
        } else {
            out[i] = (float)json_number_value(e);
        }
    }
    pop(l);
    return r;
}

/* Matches a string against a table of names; unknown names are a parse error naming the
 * choices. */
static cb_result get_enum(loader *l, json_t *obj, const char *key, const char *const *names,
                          const int *values, int count, int *out)
{
    const char *s;
    cb_result r = get_string(l, obj, key, false, &s);
    if (r != CB_OK || s == NULL) {
        return r;
    }
    for (int i = 0; i < count; ++i) {
        if (strcmp(names[i], s) == 0) {
            *out = values[i];
            return CB_OK;
        }
    }
    char choices[160] = "";
    for (int i = 0; i < count; ++i) {
        strncat(choices, names[i], sizeof choices - strlen(choices) - 3);
        if (i + 1 < count) {
            strncat(choices, ", ", sizeof choices - strlen(choices) - 1);
        }
    }
    push_key(l, key);
    r = fail(l, CB_ERR_PARSE, "unknown %s '%s' (one of: %s)", key, s, choices);
    pop(l);
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters and processors                                                                  */

static cb_result load_params(loader *l, json_t *root)
{
    json_t *params = json_object_get(root, "parameters");
    if (params == NULL) {
        return CB_OK;
    }
    push_key(l, "parameters");
    cb_result r = json_is_array(params) ? CB_OK
                                        : fail(l, CB_ERR_PARSE, "\"parameters\" must be an array");
    static const char *const keys[] = {"name", "type", "default", NULL};
    static const char *const type_names[] = {"float", "int", "bool", "trigger"};
    static const int type_values[] = {CB_PARAM_FLOAT, CB_PARAM_INT, CB_PARAM_BOOL, CB_PARAM_TRIGGER};
    for (size_t i = 0; r == CB_OK && i < json_array_size(params); ++i) {
        json_t *p = json_array_get(params, i);
        push_index(l, i);
        if (!json_is_object(p)) {
            r = fail(l, CB_ERR_PARSE, "a parameter must be an object");
        }
        const char *name = NULL;
        int type = CB_PARAM_FLOAT;
        float def = 0.0f;
        if (r == CB_OK) r = check_keys(l, p, "a parameter", keys);
        if (r == CB_OK) r = get_string(l, p, "name", true, &name);
        if (r == CB_OK) r = get_enum(l, p, "type", type_names, type_values, 4, &type);
        if (r == CB_OK) {
            json_t *d = json_object_get(p, "default");
            if (json_is_boolean(d)) {
                def = json_is_true(d) ? 1.0f : 0.0f;
            } else if (d != NULL) {
                r = get_number(l, p, "default", false, &def);
            }
        }
        if (r == CB_OK) {
            cb_error inner = {0};
            r = cb_graph_add_param(l->b, name, (cb_param_type)type, def, &inner);
            if (r != CB_OK) {
                r = builder_fail(l, r, &inner);
            }
        }
        pop(l);
    }
    pop(l);
    return r;
}

static cb_result load_processor(loader *l, json_t *p)
{
    static const char *const type_names[] = {"velocity_blend", "interp_to", "quadrant"};
    static const int type_values[] = {0, 1, 2};
    int type = -1;
    cb_result r = json_is_object(p) ? CB_OK : fail(l, CB_ERR_PARSE, "a processor must be an object");
    if (r == CB_OK && json_object_get(p, "type") == NULL) {
        r = fail(l, CB_ERR_PARSE, "missing \"type\"");
    }
    if (r == CB_OK) r = get_enum(l, p, "type", type_names, type_values, 3, &type);
    if (r != CB_OK) {
        return r;
    }
    cb_error inner = {0};
    if (type == 0) {
        static const char *const keys[] = {"type", "x", "y", "z", "forward", "backward", "left",
                                           "right", "min_sq_len", NULL};
        cb_graph_velocity_blend_desc d = {0};
        r = check_keys(l, p, "a velocity_blend processor", keys);
        if (r == CB_OK) r = get_string(l, p, "x", true, &d.x);
        if (r == CB_OK) r = get_string(l, p, "y", true, &d.y);
        if (r == CB_OK) r = get_string(l, p, "z", false, &d.z);
        if (r == CB_OK) r = get_string(l, p, "forward", true, &d.forward);
        if (r == CB_OK) r = get_string(l, p, "backward", true, &d.backward);
        if (r == CB_OK) r = get_string(l, p, "left", true, &d.left);
        if (r == CB_OK) r = get_string(l, p, "right", true, &d.right);
        if (r == CB_OK) r = get_number(l, p, "min_sq_len", false, &d.min_sq_len);
        if (r == CB_OK) r = cb_graph_add_velocity_blend(l->b, &d, &inner);
    } else if (type == 1) {
        static const char *const keys[] = {"type", "input", "output", "speed", NULL};
        cb_graph_interp_to_desc d = {0};
        r = check_keys(l, p, "an interp_to processor", keys);
        if (r == CB_OK) r = get_string(l, p, "input", true, &d.input);
        if (r == CB_OK) r = get_string(l, p, "output", true, &d.output);
        if (r == CB_OK) r = get_number(l, p, "speed", true, &d.speed);
        if (r == CB_OK) r = cb_graph_add_interp_to(l->b, &d, &inner);
    } else {
        static const char *const keys[] = {"type", "x", "y", "output", "dead_zone_deg",
                                           "min_speed", NULL};
        cb_graph_quadrant_desc d = {0};
        float dz = 0.0f;
        r = check_keys(l, p, "a quadrant processor", keys);
        if (r == CB_OK) r = get_string(l, p, "x", true, &d.x);
        if (r == CB_OK) r = get_string(l, p, "y", true, &d.y);
        if (r == CB_OK) r = get_string(l, p, "output", true, &d.output);
        if (r == CB_OK) r = get_number(l, p, "dead_zone_deg", false, &dz);
        if (r == CB_OK) r = get_number(l, p, "min_speed", false, &d.min_speed);
        d.dead_zone_rad = dz * 0.0174532925f;
        if (r == CB_OK) r = cb_graph_add_quadrant(l->b, &d, &inner);
    }
    if (r != CB_OK && inner.message[0] != '\0') {
        r = builder_fail(l, r, &inner);
    }
    return r;
}

static cb_result load_processors(loader *l, json_t *root)
{
    json_t *procs = json_object_get(root, "processors");
    if (procs == NULL) {
        return CB_OK;
    }
    push_key(l, "processors");
    cb_result r = json_is_array(procs) ? CB_OK
                                       : fail(l, CB_ERR_PARSE, "\"processors\" must be an array");
    for (size_t i = 0; r == CB_OK && i < json_array_size(procs); ++i) {
        push_index(l, i);
        r = load_processor(l, json_array_get(procs, i));
        pop(l);
    }
    pop(l);
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Nodes                                                                                      */

static cb_result build_node(loader *l, jnode *n);

/* The builder id of the node named by the string at member `key` of `obj` (or of element
 * `index` of an array when key is NULL: then obj is the string itself). */
static cb_result resolve(loader *l, json_t *ref, cb_graph_node *out)
{
    if (!json_is_string(ref)) {
        return fail(l, CB_ERR_PARSE, "a node reference must be a node name (a string)");
    }
    const char *name = json_string_value(ref);
    for (size_t i = 0; i < l->node_count; ++i) {
        jnode *n = &l->nodes[i];
        if (strcmp(n->name, name) != 0) {
            continue;
        }
        if (n->state == 1) {
            return fail(l, CB_ERR_PARSE, "cycle: node '%s' leads back to itself", name);
        }
        if (n->state == 0) {
            /* Build it now, reporting its own errors at its own place. */
            int saved = l->depth;
            jseg saved_path[MAX_DEPTH];
            memcpy(saved_path, l->path, sizeof saved_path);
            l->depth = 0;
            push_key(l, "nodes");
            push_key(l, n->name);
            cb_result r = build_node(l, n);
            memcpy(l->path, saved_path, sizeof saved_path);
            l->depth = saved;
            if (r != CB_OK) {
                return r;
            }
        }
        *out = n->id;
        return CB_OK;
    }
    return fail(l, CB_ERR_PARSE, "unknown node '%s'", name);
}

static cb_result resolve_member(loader *l, json_t *obj, const char *key, cb_graph_node *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return fail(l, CB_ERR_PARSE, "missing \"%s\"", key);
    }
    push_key(l, key);
    cb_result r = resolve(l, v, out);
    pop(l);
    return r;
}

static cb_result load_clip(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "clip", "speed", "speed_param", "clamp",
                                       "start_offset", "sync_group", NULL};
    cb_graph_clip_desc d = {.name = n->name};
    cb_result r = check_keys(l, o, "a clip node", keys);
    if (r == CB_OK) r = get_string(l, o, "clip", true, &d.clip);
    if (r == CB_OK) r = get_number(l, o, "speed", false, &d.speed);
    if (r == CB_OK) r = get_string(l, o, "speed_param", false, &d.speed_param);
    if (r == CB_OK) r = get_bool(l, o, "clamp", &d.clamp);
    if (r == CB_OK) r = get_number(l, o, "start_offset", false, &d.start_offset);
    if (r == CB_OK) r = get_string(l, o, "sync_group", false, &d.sync_group);
    if (r == CB_OK) r = cb_graph_add_clip(l->b, &d, &n->id, inner);
    return r;
}

/* Solver options of a blend space: "options": {"power", "k", "kernel", "epsilon", "nx", "ny"}. */
static cb_result load_solver(loader *l, json_t *o, cb_solver_desc *sd)
{
    const char *name = NULL;
    cb_result r = get_string(l, o, "solver", false, &name);
    if (r == CB_OK && name != NULL && cb_solver_kind_from_name(name, &sd->kind) != CB_OK) {
        char choices[320] = "";
        for (int k = 1; k < CB_SOLVER_KIND_COUNT; ++k) {
            size_t used = strlen(choices);
            snprintf(choices + used, sizeof choices - used, "%s%s", k > 1 ? ", " : "",
                     cb_solver_kind_name((cb_solver_kind)k));
        }
        push_key(l, "solver");
        r = fail(l, CB_ERR_PARSE, "unknown solver '%s' (one of: %s)", name, choices);
        pop(l);
    }
    json_t *opts = json_object_get(o, "options");
    if (r != CB_OK || opts == NULL) {
        return r;
    }
    push_key(l, "options");
    static const char *const keys[] = {"power", "k", "kernel", "epsilon", "nx", "ny", NULL};
    r = json_is_object(opts) ? check_keys(l, opts, "solver options", keys)
                             : fail(l, CB_ERR_PARSE, "\"options\" must be an object");
    const char *kernel = NULL;
    if (r == CB_OK) r = get_number(l, opts, "power", false, &sd->idw_power);
    if (r == CB_OK) r = get_count(l, opts, "k", &sd->knn_k);
    if (r == CB_OK) r = get_number(l, opts, "epsilon", false, &sd->rbf_epsilon);
    if (r == CB_OK) r = get_count(l, opts, "nx", &sd->grid_nx);
    if (r == CB_OK) r = get_count(l, opts, "ny", &sd->grid_ny);
    if (r == CB_OK) r = get_string(l, opts, "kernel", false, &kernel);
    if (r == CB_OK && kernel != NULL && cb_rbf_kernel_from_name(kernel, &sd->rbf_kernel) != CB_OK) {
        push_key(l, "kernel");
        r = fail(l, CB_ERR_PARSE, "unknown RBF kernel '%s'", kernel);
        pop(l);
    }
    pop(l);
    return r;
}

static cb_result load_blend_space(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "solver", "options", "params", "children",
                                       "sync_group", NULL};
    cb_graph_blend_space_desc d = {.name = n->name};
    cb_result r = check_keys(l, o, "a blend_space node", keys);
    if (r == CB_OK) r = load_solver(l, o, &d.solver);
    if (r != CB_OK) {
        return r;
    }
    cb_solver_desc resolved = cb_solver_query_desc(&d.solver);
    uint32_t dim = resolved.kind == CB_SOLVER_KIND_DIRECT ? 1 : resolved.dimension;
    json_t *params = json_object_get(o, "params");
    if (json_is_string(params) && dim == 1) {
        d.params[0] = json_string_value(params);
    } else {
        r = get_names(l, o, "params", dim, true, d.params);
    }
    if (r == CB_OK) r = get_string(l, o, "sync_group", false, &d.sync_group);
    json_t *children = json_object_get(o, "children");
    if (r == CB_OK && (children == NULL || !json_is_array(children))) {
        r = fail(l, CB_ERR_PARSE, "\"children\" must be an array of {\"node\", \"position\"}");
    }
    if (r != CB_OK) {
        return r;
    }
    size_t count = json_array_size(children);
    if (count == 0) {
        push_key(l, "children");
        r = fail(l, CB_ERR_PARSE, "empty blend space: it needs at least one child");
        pop(l);
        return r;
    }
    if (count > CB_GRAPH_MAX_CHILDREN) {
        push_key(l, "children");
        r = fail(l, CB_ERR_TOO_MANY, "more than %d children", CB_GRAPH_MAX_CHILDREN);
        pop(l);
        return r;
    }
    cb_graph_node ids[CB_GRAPH_MAX_CHILDREN];
    float positions[2 * CB_GRAPH_MAX_CHILDREN];
    push_key(l, "children");
    for (size_t i = 0; r == CB_OK && i < count; ++i) {
        json_t *c = json_array_get(children, i);
        push_index(l, i);
        static const char *const ckeys[] = {"node", "position", NULL};
        r = json_is_object(c) ? check_keys(l, c, "a blend-space child", ckeys)
                              : fail(l, CB_ERR_PARSE, "a child must be {\"node\", \"position\"}");
        if (r == CB_OK) r = resolve_member(l, c, "node", &ids[i]);
        json_t *pos = json_object_get(c, "position");
        if (r == CB_OK) {
            push_key(l, "position");
            if (dim == 1 && json_is_number(pos)) {
                positions[i] = (float)json_number_value(pos);
            } else if (json_is_array(pos) && json_array_size(pos) == dim) {
                for (uint32_t k = 0; k < dim && r == CB_OK; ++k) {
                    json_t *e = json_array_get(pos, k);
                    if (!json_is_number(e)) {
                        push_index(l, k);
                        r = fail(l, CB_ERR_PARSE, "expected a number");
                        pop(l);
                    } else {
                        positions[i * dim + k] = (float)json_number_value(e);
                    }
                }
            } else {
                r = fail(l, CB_ERR_PARSE, "\"position\" must be %s",
                         dim == 1 ? "a number" : "an array of 2 numbers");
            }
            pop(l);
        }
        pop(l);
    }
    pop(l);
    if (r != CB_OK) {
        return r;
    }
    d.children = ids;
    d.positions = positions;
    d.child_count = (uint32_t)count;
    return cb_graph_add_blend_space(l->b, &d, &n->id, inner);
}

static cb_result load_direct(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "children", NULL};
    cb_result r = check_keys(l, o, "a direct node", keys);
    json_t *children = json_object_get(o, "children");
    if (r == CB_OK && (children == NULL || !json_is_array(children))) {
        r = fail(l, CB_ERR_PARSE, "\"children\" must be an array of {\"node\", \"weight\"}");
    }
    if (r != CB_OK) {
        return r;
    }
    size_t count = json_array_size(children);
    if (count == 0 || count > CB_GRAPH_MAX_CHILDREN) {
        push_key(l, "children");
        r = fail(l, count == 0 ? CB_ERR_PARSE : CB_ERR_TOO_MANY,
                 count == 0 ? "empty direct blend: it needs at least one child"
                            : "too many children");
        pop(l);
        return r;
    }
    cb_graph_node ids[CB_GRAPH_MAX_CHILDREN];
    const char *weights[CB_GRAPH_MAX_CHILDREN];
    push_key(l, "children");
    for (size_t i = 0; r == CB_OK && i < count; ++i) {
        json_t *c = json_array_get(children, i);
        push_index(l, i);
        static const char *const ckeys[] = {"node", "weight", NULL};
        r = json_is_object(c) ? check_keys(l, c, "a direct child", ckeys)
                              : fail(l, CB_ERR_PARSE, "a child must be {\"node\", \"weight\"}");
        if (r == CB_OK) r = resolve_member(l, c, "node", &ids[i]);
        if (r == CB_OK) r = get_string(l, c, "weight", true, &weights[i]);
        pop(l);
    }
    pop(l);
    if (r != CB_OK) {
        return r;
    }
    cb_graph_direct_desc d = {.name = n->name, .children = ids, .weights = weights,
                              .child_count = (uint32_t)count};
    return cb_graph_add_direct(l->b, &d, &n->id, inner);
}

static cb_result load_layers(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "base", "layers", NULL};
    cb_graph_layers_desc d = {.name = n->name};
    cb_graph_layer layers[CB_GRAPH_MAX_LAYERS];
    cb_result r = check_keys(l, o, "a layers node", keys);
    if (r == CB_OK) r = resolve_member(l, o, "base", &d.base);
    json_t *ls = json_object_get(o, "layers");
    if (r == CB_OK && (ls == NULL || !json_is_array(ls))) {
        r = fail(l, CB_ERR_PARSE, "\"layers\" must be an array");
    }
    if (r == CB_OK && json_array_size(ls) > CB_GRAPH_MAX_LAYERS) {
        push_key(l, "layers");
        r = fail(l, CB_ERR_TOO_MANY, "more than %d layers", CB_GRAPH_MAX_LAYERS);
        pop(l);
    }
    if (r != CB_OK) {
        return r;
    }
    push_key(l, "layers");
    static const char *const mode_names[] = {"override", "additive"};
    static const int mode_values[] = {CB_LAYER_OVERRIDE, CB_LAYER_ADDITIVE};
    for (size_t i = 0; r == CB_OK && i < json_array_size(ls); ++i) {
        json_t *ly = json_array_get(ls, i);
        push_index(l, i);
        static const char *const lkeys[] = {"node", "mode", "weight", "mask_joint", NULL};
        layers[i] = (cb_graph_layer){.mode = CB_LAYER_OVERRIDE};
        int mode = CB_LAYER_OVERRIDE;
        r = json_is_object(ly) ? check_keys(l, ly, "a layer", lkeys)
                               : fail(l, CB_ERR_PARSE, "a layer must be an object");
        if (r == CB_OK) r = resolve_member(l, ly, "node", &layers[i].node);
        if (r == CB_OK) r = get_enum(l, ly, "mode", mode_names, mode_values, 2, &mode);
        if (r == CB_OK) r = get_string(l, ly, "weight", false, &layers[i].weight);
        if (r == CB_OK) r = get_string(l, ly, "mask_joint", false, &layers[i].mask_joint);
        layers[i].mode = (cb_layer_mode)mode;
        pop(l);
    }
    pop(l);
    if (r != CB_OK) {
        return r;
    }
    d.layers = layers;
    d.layer_count = (uint32_t)json_array_size(ls);
    return cb_graph_add_layers(l->b, &d, &n->id, inner);
}

static cb_result load_condition(loader *l, json_t *c, cb_graph_condition *out)
{
    static const char *const keys[] = {"param", "op", "value", NULL};
    static const char *const op_names[] = {"true", "false", ">", "<", "==", "!="};
    static const int op_values[] = {CB_COMPARE_TRUE, CB_COMPARE_FALSE, CB_COMPARE_GREATER,
                                    CB_COMPARE_LESS, CB_COMPARE_EQUAL, CB_COMPARE_NOT_EQUAL};
    int op = CB_COMPARE_TRUE;
    *out = (cb_graph_condition){0};
    cb_result r = json_is_object(c) ? check_keys(l, c, "a condition", keys)
                                    : fail(l, CB_ERR_PARSE, "a condition must be an object");
    if (r == CB_OK) r = get_string(l, c, "param", true, &out->param);
    if (r == CB_OK) r = get_enum(l, c, "op", op_names, op_values, 6, &op);
    if (r == CB_OK) r = get_number(l, c, "value", false, &out->value);
    out->op = (cb_compare)op;
    return r;
}

static cb_result load_state_machine(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "initial", "states", "transitions", NULL};
    cb_graph_state_machine_desc d = {.name = n->name};
    cb_result r = check_keys(l, o, "a state_machine node", keys);
    if (r == CB_OK) r = get_string(l, o, "initial", false, &d.initial);
    json_t *states = json_object_get(o, "states");
    if (r == CB_OK && (states == NULL || !json_is_array(states) || json_array_size(states) == 0)) {
        r = fail(l, CB_ERR_PARSE, "\"states\" must be a non-empty array");
    }
    if (r == CB_OK && json_array_size(states) > CB_GRAPH_MAX_STATES) {
        r = fail(l, CB_ERR_TOO_MANY, "more than %d states", CB_GRAPH_MAX_STATES);
    }
    if (r != CB_OK) {
        return r;
    }
    cb_graph_state st[CB_GRAPH_MAX_STATES];
    push_key(l, "states");
    for (size_t i = 0; r == CB_OK && i < json_array_size(states); ++i) {
        json_t *s = json_array_get(states, i);
        push_index(l, i);
        static const char *const skeys[] = {"name", "node", "speed", NULL};
        st[i] = (cb_graph_state){0};
        r = json_is_object(s) ? check_keys(l, s, "a state", skeys)
                              : fail(l, CB_ERR_PARSE, "a state must be an object");
        if (r == CB_OK) r = get_string(l, s, "name", true, &st[i].name);
        if (r == CB_OK) r = resolve_member(l, s, "node", &st[i].node);
        if (r == CB_OK) r = get_number(l, s, "speed", false, &st[i].speed);
        pop(l);
    }
    pop(l);
    json_t *ts = json_object_get(o, "transitions");
    size_t tcount = ts != NULL ? json_array_size(ts) : 0;
    if (r == CB_OK && ts != NULL && !json_is_array(ts)) {
        r = fail(l, CB_ERR_PARSE, "\"transitions\" must be an array");
    }
    if (r == CB_OK && tcount > CB_GRAPH_MAX_TRANSITIONS) {
        r = fail(l, CB_ERR_TOO_MANY, "more than %d transitions", CB_GRAPH_MAX_TRANSITIONS);
    }
    if (r != CB_OK) {
        return r;
    }
    static cb_graph_transition tr_storage[CB_GRAPH_MAX_TRANSITIONS];
    static cb_graph_condition cond_storage[CB_GRAPH_MAX_TRANSITIONS][CB_GRAPH_MAX_CONDITIONS];
    (void)tr_storage, (void)cond_storage;
    cb_graph_transition *tr = calloc(tcount ? tcount : 1, sizeof *tr);
    cb_graph_condition *conds = calloc((tcount ? tcount : 1) * CB_GRAPH_MAX_CONDITIONS, sizeof *conds);
    if (tr == NULL || conds == NULL) {
        free(tr), free(conds);
        return fail(l, CB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    push_key(l, "transitions");
    static const char *const blend_names[] = {"crossfade", "inertialize"};
    static const int blend_values[] = {CB_TRANSITION_CROSSFADE, CB_TRANSITION_INERTIALIZE};
    static const char *const int_names[] = {"none", "source", "destination"};
    static const int int_values[] = {CB_INTERRUPTION_NONE, CB_INTERRUPTION_SOURCE,
                                     CB_INTERRUPTION_DESTINATION};
    for (size_t i = 0; r == CB_OK && i < tcount; ++i) {
        json_t *t = json_array_get(ts, i);
        push_index(l, i);
        static const char *const tkeys[] = {"from", "to", "conditions", "exit_time", "duration",
                                            "blend", "interruption", "to_self", NULL};
        int blend = CB_TRANSITION_CROSSFADE, interruption = CB_INTERRUPTION_NONE;
        r = json_is_object(t) ? check_keys(l, t, "a transition", tkeys)
                              : fail(l, CB_ERR_PARSE, "a transition must be an object");
        if (r == CB_OK) r = get_string(l, t, "from", false, &tr[i].from);
        if (r == CB_OK && tr[i].from != NULL && strcmp(tr[i].from, "any") == 0) {
            tr[i].from = NULL;
        }
        if (r == CB_OK) r = get_string(l, t, "to", true, &tr[i].to);
        if (r == CB_OK && json_object_get(t, "exit_time") != NULL) {
            tr[i].has_exit_time = true;
            r = get_number(l, t, "exit_time", false, &tr[i].exit_time);
        }
        if (r == CB_OK) r = get_number(l, t, "duration", false, &tr[i].duration_s);
        if (r == CB_OK) r = get_enum(l, t, "blend", blend_names, blend_values, 2, &blend);
        if (r == CB_OK) r = get_enum(l, t, "interruption", int_names, int_values, 3, &interruption);
        if (r == CB_OK) r = get_bool(l, t, "to_self", &tr[i].to_self);
        tr[i].blend = (cb_transition_blend)blend;
        tr[i].interruption = (cb_interruption)interruption;
        json_t *cs = json_object_get(t, "conditions");
        if (r == CB_OK && cs != NULL) {
            push_key(l, "conditions");
            if (!json_is_array(cs) || json_array_size(cs) > CB_GRAPH_MAX_CONDITIONS) {
                r = fail(l, CB_ERR_PARSE, "\"conditions\" must be an array of at most %d",
                         CB_GRAPH_MAX_CONDITIONS);
            }
            for (size_t c = 0; r == CB_OK && c < json_array_size(cs); ++c) {
                push_index(l, c);
                r = load_condition(l, json_array_get(cs, c), &conds[i * CB_GRAPH_MAX_CONDITIONS + c]);
                pop(l);
            }
            tr[i].conditions = &conds[i * CB_GRAPH_MAX_CONDITIONS];
            tr[i].condition_count = (uint32_t)json_array_size(cs);
            pop(l);
        }
        pop(l);
    }
    pop(l);
    if (r == CB_OK) {
        d.states = st;
        d.state_count = (uint32_t)json_array_size(states);
        d.transitions = tr;
        d.transition_count = (uint32_t)tcount;
        r = cb_graph_add_state_machine(l->b, &d, &n->id, inner);
    }
    free(tr);
    free(conds);
    return r;
}

static cb_result build_node(loader *l, jnode *n)
{
    json_t *o = n->value;
    n->state = 1;
    if (!json_is_object(o)) {
        return fail(l, CB_ERR_PARSE, "node '%s' must be an object", n->name);
    }
    static const char *const type_names[] = {"clip", "blend_space", "direct", "layers",
                                             "state_machine"};
    static const int type_values[] = {0, 1, 2, 3, 4};
    int type = -1;
    cb_result r = CB_OK;
    if (json_object_get(o, "type") == NULL) {
        r = fail(l, CB_ERR_PARSE, "node '%s' has no \"type\"", n->name);
    }
    if (r == CB_OK) {
        const char *t = NULL;
        get_string(l, o, "type", false, &t);
        r = get_enum(l, o, "type", type_names, type_values, 5, &type);
        if (r != CB_OK) {
            /* Name it as what it is: an unknown node type. */
            push_key(l, "type");
            r = fail(l, CB_ERR_PARSE, "unknown node type '%s' (one of: clip, blend_space, direct, "
                     "layers, state_machine)", t != NULL ? t : "");
            pop(l);
        }
    }
    cb_error inner = {0};
    if (r == CB_OK) {
        switch (type) {
        case 0: r = load_clip(l, n, o, &inner); break;
        case 1: r = load_blend_space(l, n, o, &inner); break;
        case 2: r = load_direct(l, n, o, &inner); break;
        case 3: r = load_layers(l, n, o, &inner); break;
        default: r = load_state_machine(l, n, o, &inner); break;
        }
    }
    if (r != CB_OK && inner.message[0] != '\0') {
        r = builder_fail(l, r, &inner);
    }
    n->state = r == CB_OK ? 2 : 1;
    return r;
}

static cb_result load_nodes(loader *l, json_t *root, cb_graph_node *root_id)
{
    json_t *nodes = json_object_get(root, "nodes");
    if (nodes == NULL || !json_is_object(nodes) || json_object_size(nodes) == 0) {
        if (nodes != NULL) {
            push_key(l, "nodes");
        }
        cb_result r = fail(l, CB_ERR_PARSE, "\"nodes\" must be an object with at least one node");
        l->depth = 0;
        return r;
    }
    l->node_count = json_object_size(nodes);
    l->nodes = calloc(l->node_count, sizeof *l->nodes);
    if (l->nodes == NULL) {
        return fail(l, CB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(nodes, key, v)
    {
        l->nodes[i++] = (jnode){.name = key, .value = v};
    }
    /* The root first (its subtree in dependency order), then the rest in document order. */
    json_t *rootname = json_object_get(root, "root");
    push_key(l, "root");
    cb_result r = rootname != NULL ? resolve(l, rootname, root_id)
                                   : fail(l, CB_ERR_PARSE, "missing \"root\": the node to play");
    pop(l);
    for (size_t k = 0; r == CB_OK && k < l->node_count; ++k) {
        if (l->nodes[k].state == 0) {
            push_key(l, "nodes");
            push_key(l, l->nodes[k].name);
            r = build_node(l, &l->nodes[k]);
            pop(l);
            pop(l);
        }
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Post-process                                                                               */

static cb_result load_post(loader *l, json_t *root)
{
    json_t *post = json_object_get(root, "post_process");
    if (post == NULL) {
        return CB_OK;
    }
    push_key(l, "post_process");
    cb_result r = json_is_array(post) ? CB_OK
                                      : fail(l, CB_ERR_PARSE, "\"post_process\" must be an array");
    static const char *const type_names[] = {"two_bone_ik", "aim_ik"};
    static const int type_values[] = {0, 1};
    for (size_t i = 0; r == CB_OK && i < json_array_size(post); ++i) {
        json_t *p = json_array_get(post, i);
        push_index(l, i);
        int type = -1;
        cb_error inner = {0};
        r = json_is_object(p) ? CB_OK : fail(l, CB_ERR_PARSE, "a step must be an object");
        if (r == CB_OK && json_object_get(p, "type") == NULL) {
            r = fail(l, CB_ERR_PARSE, "missing \"type\"");
        }
        if (r == CB_OK) r = get_enum(l, p, "type", type_names, type_values, 2, &type);
        if (r == CB_OK && type == 0) {
            static const char *const keys[] = {"type", "start", "mid", "end", "target", "pole",
                                               "weight", "soften", NULL};
            cb_graph_two_bone_ik_desc d = {0};
            r = check_keys(l, p, "a two_bone_ik step", keys);
            if (r == CB_OK) r = get_string(l, p, "start", true, &d.start_joint);
            if (r == CB_OK) r = get_string(l, p, "mid", true, &d.mid_joint);
            if (r == CB_OK) r = get_string(l, p, "end", true, &d.end_joint);
            if (r == CB_OK) r = get_names(l, p, "target", 3, true, d.target);
            if (r == CB_OK) r = get_names(l, p, "pole", 3, false, d.pole);
            if (r == CB_OK) r = get_string(l, p, "weight", false, &d.weight);
            if (r == CB_OK) r = get_number(l, p, "soften", false, &d.soften);
            if (r == CB_OK) r = cb_graph_add_two_bone_ik(l->b, &d, &inner);
        } else if (r == CB_OK) {
            static const char *const keys[] = {"type", "joints", "joint_weights", "target",
                                               "weight", "forward", "up", "limit_deg", NULL};
            cb_graph_aim_ik_desc d = {0};
            const char *joints[GIK_MAX_CHAIN];
            float weights[GIK_MAX_CHAIN];
            float limit = 0.0f;
            r = check_keys(l, p, "an aim_ik step", keys);
            json_t *js = json_object_get(p, "joints");
            if (r == CB_OK && (!json_is_array(js) || json_array_size(js) == 0 ||
                               json_array_size(js) > GIK_MAX_CHAIN)) {
                r = fail(l, CB_ERR_PARSE, "\"joints\" must be an array of 1 to %d joint names",
                         GIK_MAX_CHAIN);
            }
            size_t jc = r == CB_OK ? json_array_size(js) : 0;
            if (r == CB_OK) r = get_names(l, p, "joints", jc, true, joints);
            json_t *jw = json_object_get(p, "joint_weights");
            if (r == CB_OK && jw != NULL) {
                push_key(l, "joint_weights");
                if (!json_is_array(jw) || json_array_size(jw) != jc) {
                    r = fail(l, CB_ERR_PARSE, "\"joint_weights\" must have one number per joint");
                }
                for (size_t k = 0; r == CB_OK && k < jc; ++k) {
                    json_t *e = json_array_get(jw, k);
                    if (!json_is_number(e)) {
                        push_index(l, k);
                        r = fail(l, CB_ERR_PARSE, "expected a number");
                        pop(l);
                    } else {
                        weights[k] = (float)json_number_value(e);
                    }
                }
                pop(l);
                d.joint_weights = weights;
            }
            if (r == CB_OK) r = get_names(l, p, "target", 3, true, d.target);
            if (r == CB_OK) r = get_string(l, p, "weight", false, &d.weight);
            if (r == CB_OK) r = get_vec3(l, p, "forward", d.forward);
            if (r == CB_OK) r = get_vec3(l, p, "up", d.up);
            if (r == CB_OK) r = get_number(l, p, "limit_deg", false, &limit);
            d.limit_rad = limit * 0.0174532925f;
            d.joints = joints;
            d.joint_count = (uint32_t)jc;
            if (r == CB_OK) r = cb_graph_add_aim_ik(l->b, &d, &inner);
        }
        if (r != CB_OK && inner.message[0] != '\0') {
            r = builder_fail(l, r, &inner);
        }
        pop(l);
    }
    pop(l);
    return r;
}

/* ------------------------------------------------------------------------------------------ */

cb_result cb_graph_load_json(const char *text, size_t length, const cb_graph_json_desc *desc,
                             cb_graph **out, cb_error *err)
{
    if (text == NULL || desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_load_json: a NULL argument");
    }
    if (desc->_start_canary != 0 || desc->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cb_graph_json_desc: a canary is not zero");
    }
    const char *source = desc->source_name != NULL ? desc->source_name : "graph";
    json_error_t jerr;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        return cb_error_set(err, CB_ERR_PARSE, "%s:%d:%d: %s", source, jerr.line, jerr.column,
                            jerr.text);
    }
    loader l = {.text = text, .len = length, .source = source, .err = err};
    cb_result r = CB_OK;
    if (!json_is_object(root)) {
        r = fail(&l, CB_ERR_PARSE, "a graph must be a JSON object");
    }
    static const char *const keys[] = {"name", "parameters", "processors", "nodes", "root",
                                       "post_process", NULL};
    if (r == CB_OK) r = check_keys(&l, root, "the graph", keys);
    const char *name = NULL;
    if (r == CB_OK) r = get_string(&l, root, "name", false, &name);
    if (r == CB_OK) {
        cb_graph_builder_desc bd = {.skeleton = desc->skeleton, .clips = desc->clips,
                                    .clip_count = desc->clip_count,
                                    .name = name != NULL ? name : source,
                                    .allocator = desc->allocator};
        r = cb_graph_builder_create(&bd, &l.b, err);
    }
    if (r == CB_OK) r = load_params(&l, root);
    if (r == CB_OK) r = load_processors(&l, root);
    cb_graph_node root_id = CB_GRAPH_NO_NODE;
    if (r == CB_OK) r = load_nodes(&l, root, &root_id);
    if (r == CB_OK) r = load_post(&l, root);
    if (r == CB_OK) {
        cb_error inner = {0};
        r = cb_graph_set_root(l.b, root_id, &inner);
        if (r == CB_OK) r = cb_graph_build(l.b, out, &inner);
        if (r != CB_OK) {
            l.depth = 0;
            r = builder_fail(&l, r, &inner);
        }
    }
    cb_graph_builder_destroy(l.b);
    free(l.nodes);
    json_decref(root);
    return r;
}

cb_result cb_graph_load_json_file(const char *path, const cb_graph_json_desc *desc,
                                  cb_graph **out, cb_error *err)
{
    if (path == NULL || desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_load_json_file: a NULL argument");
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return cb_error_set(err, CB_ERR_IO, "%s: %s", path, strerror(errno));
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = realloc(text, cap);
            if (grown == NULL) {
                free(text);
                fclose(f);
                return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            break;
        }
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(text);
        return cb_error_set(err, CB_ERR_IO, "%s: read error", path);
    }
    cb_graph_json_desc d = *desc;
    if (d.source_name == NULL) {
        d.source_name = path;
    }
    cb_result r = cb_graph_load_json(text, len, &d, out, err);
    free(text);
    return r;
}
