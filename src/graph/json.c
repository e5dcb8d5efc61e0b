/* Graphs from JSON (docs/graph.md): jansson parses, this file maps the document onto the
 * builder, and every error names the line and column of the value at fault.
 *
 * jansson reports positions only for syntax errors; it keeps none for values. So the loader
 * tracks the path it is at (keys and array indices from the document's root) and, when it has
 * to report a problem, walks the text along that path (json_locate below) to find where the
 * value starts. The text is known to be valid JSON by then, which keeps the walk small.
 * Columns count characters (UTF-8 code points), as jansson's own do, so both kinds of message
 * point the same way.
 *
 * Where an error points: at the value that is wrong; at the key of an unknown key; at the
 * object that lacks a required member; at the object being added (parameter, processor, node,
 * post-process step) when the builder refuses it, its message naming the field.
 *
 * Nodes reference each other by name and may appear in any order; they are added to the
 * builder depth-first from the root (children before parents, in the order they are listed),
 * then any node the root does not reach, in document order. A reference back to a node still
 * being built is a cycle. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/names.h"
#include "crowdblend/graph.h"

/* Path segments the locator follows (the deepest path the loader builds has 7). */
enum { MAX_DEPTH = 24 };

/* Nodes nested deeper than this are refused: the loader adds a node's children before it, by
 * recursion, and a document must not be able to exhaust the stack (a chain of 100,000 nodes).
 * Hand-written graphs are a few levels deep. */
enum { MAX_NESTING = 64 };

/* Ints are floats per character, exact up to 2^24 (graph.h). */
#define INT_PARAM_LIMIT 16777216.0

/* ------------------------------------------------------------------------------------------ */
/* Locating a path in the text                                                                */

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

static bool hex4(const char *p, const char *end, uint32_t *out)
{
    if (end - p < 4) {
        return false;
    }
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) {
            return false;
        }
        v = v * 16 + (uint32_t)d;
    }
    *out = v;
    return true;
}

/* The UTF-8 bytes of code point cp (at most 4); returns their count. */
static size_t utf8_encode(uint32_t cp, unsigned char *out)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Does the string literal at p (a '"') decode to key? The key is jansson's decoded (UTF-8)
 * string; the literal may spell it with escapes ("a\"b", "\u00e9", surrogate pairs), so it is
 * decoded while it is compared. */
static bool key_equals(const char *p, const char *end, const char *key)
{
    const unsigned char *k = (const unsigned char *)key;
    for (p++; p < end && *p != '"';) {
        unsigned char buf[4];
        size_t n = 1;
        if (*p != '\\') {
            buf[0] = (unsigned char)*p++;
        } else if (end - p < 2) {
            return false;
        } else {
            char e = p[1];
            p += 2;
            uint32_t cp, low;
            switch (e) {
            case 'b':
                buf[0] = '\b';
                break;
            case 'f':
                buf[0] = '\f';
                break;
            case 'n':
                buf[0] = '\n';
                break;
            case 'r':
                buf[0] = '\r';
                break;
            case 't':
                buf[0] = '\t';
                break;
            case 'u':
                if (!hex4(p, end, &cp)) {
                    return false;
                }
                p += 4;
                /* jansson accepts a high surrogate only when a low one follows. */
                if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                    hex4(p + 2, end, &low) && low >= 0xDC00 && low < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    p += 6;
                }
                n = utf8_encode(cp, buf);
                break;
            default:
                buf[0] = (unsigned char)e;
                break; /* '"', '\\', '/' */
            }
        }
        for (size_t i = 0; i < n; ++i, ++k) {
            if (*k != buf[i]) {
                return false;
            }
        }
    }
    return *k == '\0';
}

/* Where the value at `path` starts (or, with at_key, where the last segment's key starts); the
 * place the walk stopped if the path cannot be followed. */
static const char *json_locate(const char *text, size_t len, const jseg *path, int depth,
                               bool at_key)
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
                const char *key_at = p;
                bool match = key_equals(p, end, path[d].key);
                p = skip_ws(skip_string(p, end), end);
                if (p < end && *p == ':') {
                    p = skip_ws(p + 1, end);
                }
                if (match) {
                    if (at_key && d + 1 == depth) {
                        return key_at;
                    }
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

/* 1-based line and column of `at`; the column counts code points (UTF-8 continuation bytes do
 * not start a character), as jansson's does. */
static void line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at; ++p) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)*p & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The loader                                                                                 */

typedef struct jnode {
    const char *name;
    json_t *value;
    int state;     /* 0 not built, 1 being built, 2 built */
    bool additive; /* a clip node playing an additive clip */
    cb_graph_node id;
} jnode;

typedef struct loader {
    const char *text;
    size_t len;
    const char *source;
    const cb_graph_json_desc *desc;
    cb_graph_builder *b;
    cb_error *err;
    jseg path[MAX_DEPTH];
    int depth;
    int nesting; /* nodes being built, one inside the other */
    jnode *nodes;
    size_t node_count;
    cb_name_table node_names; /* the document's nodes by name */
    cb_name_table clip_names; /* the desc's clips by name */
    /* The first reference to an additive clip node from anywhere but an additive layer: the
     * builder refuses it at build (when the node is reachable), and the error belongs there. */
    jseg misuse[MAX_DEPTH];
    int misuse_depth; /* -1: none */
    bool lod_param;   /* the document names a "lod_param": its steps may have a "max_lod" */
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
static cb_result vfail(loader *l, cb_result code, bool at_key, const char *fmt, va_list args)
{
    char msg[CB_ERROR_MESSAGE_SIZE];
    vsnprintf(msg, sizeof msg, fmt, args);
    int line, col;
    const char *at =
        json_locate(l->text, l->len, l->path, l->depth < MAX_DEPTH ? l->depth : MAX_DEPTH, at_key);
    line_col(l->text, at, &line, &col);
    return cb_error_set(l->err, code, "%s:%d:%d: %s", l->source, line, col, msg);
}

static cb_result fail(loader *l, cb_result code, const char *fmt, ...) CB_PRINTF_LIKE(3, 4);

static cb_result fail(loader *l, cb_result code, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    cb_result r = vfail(l, code, false, fmt, args);
    va_end(args);
    return r;
}

/* An error at the key of the current path's last member (an unknown key). */
static cb_result fail_key(loader *l, cb_result code, const char *fmt, ...) CB_PRINTF_LIKE(3, 4);

static cb_result fail_key(loader *l, cb_result code, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    cb_result r = vfail(l, code, true, fmt, args);
    va_end(args);
    return r;
}

/* A builder error, placed at the current path. */
static cb_result builder_fail(loader *l, cb_result code, const cb_error *inner)
{
    return fail(l, code, "%s", inner->message);
}

/* A member of an object; null counts as absent (the default applies). */
static json_t *member(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
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
            cb_result r = fail_key(l, CB_ERR_PARSE, "unknown key '%s' in %s", key, what);
            pop(l);
            return r;
        }
    }
    return CB_OK;
}

/* A number at the current path as a float. Numbers beyond the float range are refused here:
 * converted, they would become infinities that the builder reports as "not finite", a value
 * the document never held. Tiny numbers round to zero or a subnormal as C's conversion does. */
static cb_result to_float(loader *l, double v, const char *what, float *out)
{
    if (!(fabs(v) <= (double)FLT_MAX)) {
        return fail(l, CB_ERR_PARSE, "%s %g does not fit in a float (magnitude at most %g)", what,
                    v, (double)FLT_MAX);
    }
    *out = (float)v;
    return CB_OK;
}

/* Element i of an array at the current path, which must be a number. */
static cb_result element_float(loader *l, json_t *arr, size_t i, float *out)
{
    json_t *e = json_array_get(arr, i);
    push_index(l, i);
    cb_result r = json_is_number(e) ? to_float(l, json_number_value(e), "number", out)
                                    : fail(l, CB_ERR_PARSE, "expected a number");
    pop(l);
    return r;
}

/* Typed member access. Each reports a missing required member at the object, a wrong type at
 * the value. */
static cb_result get_string(loader *l, json_t *obj, const char *key, bool required,
                            const char **out)
{
    json_t *v = member(obj, key);
    *out = NULL;
    if (v == NULL) {
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

/* A number member, multiplied by scale (degrees to radians) in double before it is rounded. */
static cb_result get_scaled(loader *l, json_t *obj, const char *key, bool required, double scale,
                            float *out)
{
    json_t *v = member(obj, key);
    if (v == NULL) {
        return required ? fail(l, CB_ERR_PARSE, "missing \"%s\"", key) : CB_OK;
    }
    push_key(l, key);
    char what[80];
    snprintf(what, sizeof what, "\"%s\"", key);
    cb_result r = json_is_number(v) ? to_float(l, json_number_value(v) * scale, what, out)
                                    : fail(l, CB_ERR_PARSE, "\"%s\" must be a number", key);
    pop(l);
    return r;
}

static cb_result get_number(loader *l, json_t *obj, const char *key, bool required, float *out)
{
    return get_scaled(l, obj, key, required, 1.0, out);
}

/* Angles are written in degrees; the builder takes radians. */
static cb_result get_degrees(loader *l, json_t *obj, const char *key, float *out_rad)
{
    return get_scaled(l, obj, key, false, 3.14159265358979323846 / 180.0, out_rad);
}

/* An optional whole number in [0, 65536] (counts and grid sizes). */
static cb_result get_count(loader *l, json_t *obj, const char *key, uint32_t *out)
{
    json_t *v = member(obj, key);
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
    json_t *v = member(obj, key);
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

/* An array of exactly n strings: parameter names of a vector ([x, y, z]) or joint names. A
 * single name stands for an array of one. */
static cb_result get_names(loader *l, json_t *obj, const char *key, size_t n, bool required,
                           const char *what, const char **out)
{
    json_t *v = member(obj, key);
    for (size_t i = 0; i < n; ++i) {
        out[i] = NULL;
    }
    if (v == NULL) {
        return required ? fail(l, CB_ERR_PARSE, "missing \"%s\"", key) : CB_OK;
    }
    if (n == 1 && json_is_string(v)) {
        out[0] = json_string_value(v);
        return CB_OK;
    }
    push_key(l, key);
    cb_result r = CB_OK;
    if ((!json_is_array(v) || json_array_size(v) != n) && n == 1) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must be a %s name (or an array of one)", key, what);
    } else if (!json_is_array(v) || json_array_size(v) != n) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must be an array of %zu %s names", key, n, what);
    }
    for (size_t i = 0; i < n && r == CB_OK; ++i) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e)) {
            push_index(l, i);
            r = fail(l, CB_ERR_PARSE, "a %s name must be a string", what);
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
    json_t *v = member(obj, key);
    if (v == NULL) {
        return CB_OK;
    }
    push_key(l, key);
    cb_result r = CB_OK;
    if (!json_is_array(v) || json_array_size(v) != 3) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must be an array of 3 numbers", key);
    }
    for (size_t i = 0; i < 3 && r == CB_OK; ++i) {
        r = element_float(l, v, i, &out[i]);
    }
    pop(l);
    return r;
}

/* Matches a string against a table of names; unknown names are a parse error naming the
 * choices. */
static cb_result get_enum(loader *l, json_t *obj, const char *key, const char *what,
                          const char *const *names, const int *values, int count, int *out)
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
        size_t used = strlen(choices);
        snprintf(choices + used, sizeof choices - used, "%s%s", i > 0 ? ", " : "", names[i]);
    }
    push_key(l, key);
    r = fail(l, CB_ERR_PARSE, "unknown %s '%s' (one of: %s)", what, s, choices);
    pop(l);
    return r;
}

/* An array member that must be present (else the error is at the object), an array, and hold
 * min to max elements (else the error is at the array). */
static cb_result get_array(loader *l, json_t *obj, const char *key, size_t min, size_t max,
                           const char *what, json_t **out)
{
    json_t *v = member(obj, key);
    *out = v;
    if (v == NULL) {
        return fail(l, CB_ERR_PARSE, "missing \"%s\"", key);
    }
    push_key(l, key);
    cb_result r = CB_OK;
    if (!json_is_array(v) || json_array_size(v) < min) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must be %s array of %s", key,
                 min > 0 ? "a non-empty" : "an", what);
    } else if (json_array_size(v) > max) {
        r = fail(l, CB_ERR_TOO_MANY, "\"%s\" has %zu elements, more than %zu", key,
                 json_array_size(v), max);
    }
    pop(l);
    return r;
}

/* An optional array member of at most max elements (else the error is at the member). */
static cb_result check_optional_array(loader *l, json_t *obj, const char *key, size_t max)
{
    json_t *v = member(obj, key);
    if (v == NULL) {
        return CB_OK;
    }
    push_key(l, key);
    cb_result r = CB_OK;
    if (!json_is_array(v)) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must be an array", key);
    } else if (json_array_size(v) > max) {
        r = fail(l, CB_ERR_TOO_MANY, "more than %zu %s", max, key);
    }
    pop(l);
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters and processors                                                                  */

static cb_result load_param(loader *l, json_t *p)
{
    static const char *const keys[] = {"name", "type", "default", NULL};
    static const char *const type_names[] = {"float", "int", "bool", "trigger"};
    static const int type_values[] = {CB_PARAM_FLOAT, CB_PARAM_INT, CB_PARAM_BOOL,
                                      CB_PARAM_TRIGGER};
    if (!json_is_object(p)) {
        return fail(l, CB_ERR_PARSE, "a parameter must be an object");
    }
    const char *name = NULL;
    int type = CB_PARAM_FLOAT;
    float def = 0.0f;
    cb_result r = check_keys(l, p, "a parameter", keys);
    if (r == CB_OK) {
        r = get_string(l, p, "name", true, &name);
    }
    if (r == CB_OK) {
        r = get_enum(l, p, "type", "parameter type", type_names, type_values, 4, &type);
    }
    /* The builder checks the default too, but as a float: 16777217 would arrive as 16777216. */
    json_t *d = member(p, "default");
    if (r == CB_OK && json_is_boolean(d)) {
        def = json_is_true(d) ? 1.0f : 0.0f;
    } else if (r == CB_OK && d != NULL) {
        r = get_number(l, p, "default", false, &def);
        double v = json_is_number(d) ? json_number_value(d) : 0.0;
        if (r == CB_OK && type == CB_PARAM_INT && (v != floor(v) || fabs(v) > INT_PARAM_LIMIT)) {
            push_key(l, "default");
            r = fail(l, CB_ERR_INVALID_ARGUMENT,
                     "\"default\" of int parameter '%s' must be a whole number within +-%.0f", name,
                     INT_PARAM_LIMIT);
            pop(l);
        }
    }
    if (r == CB_OK) {
        cb_error inner = {0};
        r = cb_graph_add_param(l->b, name, (cb_param_type)type, def, &inner);
        if (r != CB_OK) {
            r = builder_fail(l, r, &inner);
        }
    }
    return r;
}

static cb_result load_params(loader *l, json_t *root)
{
    json_t *params = member(root, "parameters");
    if (params == NULL) {
        return CB_OK;
    }
    push_key(l, "parameters");
    cb_result r =
        json_is_array(params) ? CB_OK : fail(l, CB_ERR_PARSE, "\"parameters\" must be an array");
    for (size_t i = 0; r == CB_OK && i < json_array_size(params); ++i) {
        push_index(l, i);
        r = load_param(l, json_array_get(params, i));
        pop(l);
    }
    pop(l);
    return r;
}

static cb_result load_velocity_blend(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {
        "type", "x", "y", "z", "forward", "backward", "left", "right", "speed", "min_sq_len", NULL};
    cb_graph_velocity_blend_desc d = {0};
    cb_result r = check_keys(l, p, "a velocity_blend processor", keys);
    const char **names[] = {&d.x, &d.y, &d.z, &d.forward, &d.backward, &d.left, &d.right, &d.speed};
    for (int k = 0; k < 8 && r == CB_OK; ++k) {
        r = get_string(l, p, keys[k + 1], k != 2 && k != 7, names[k]);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "min_sq_len", false, &d.min_sq_len);
    }
    return r == CB_OK ? cb_graph_add_velocity_blend(l->b, &d, inner) : r;
}

static cb_result load_interp_to(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {"type", "input", "output", "speed", NULL};
    cb_graph_interp_to_desc d = {0};
    cb_result r = check_keys(l, p, "an interp_to processor", keys);
    if (r == CB_OK) {
        r = get_string(l, p, "input", true, &d.input);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "output", true, &d.output);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "speed", true, &d.speed);
    }
    return r == CB_OK ? cb_graph_add_interp_to(l->b, &d, inner) : r;
}

static cb_result load_quadrant(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {"type",          "x",         "y", "output",
                                       "dead_zone_deg", "min_speed", NULL};
    cb_graph_quadrant_desc d = {0};
    cb_result r = check_keys(l, p, "a quadrant processor", keys);
    if (r == CB_OK) {
        r = get_string(l, p, "x", true, &d.x);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "y", true, &d.y);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "output", true, &d.output);
    }
    if (r == CB_OK) {
        r = get_degrees(l, p, "dead_zone_deg", &d.dead_zone_rad);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "min_speed", false, &d.min_speed);
    }
    return r == CB_OK ? cb_graph_add_quadrant(l->b, &d, inner) : r;
}

static cb_result load_processor(loader *l, json_t *p)
{
    static const char *const type_names[] = {"velocity_blend", "interp_to", "quadrant"};
    static const int type_values[] = {0, 1, 2};
    int type = -1;
    cb_result r =
        json_is_object(p) ? CB_OK : fail(l, CB_ERR_PARSE, "a processor must be an object");
    if (r == CB_OK && member(p, "type") == NULL) {
        r = fail(l, CB_ERR_PARSE, "missing \"type\"");
    }
    if (r == CB_OK) {
        r = get_enum(l, p, "type", "processor type", type_names, type_values, 3, &type);
    }
    if (r != CB_OK) {
        return r;
    }
    cb_error inner = {0};
    if (type == 0) {
        r = load_velocity_blend(l, p, &inner);
    } else if (type == 1) {
        r = load_interp_to(l, p, &inner);
    } else {
        r = load_quadrant(l, p, &inner);
    }
    if (r != CB_OK && inner.message[0] != '\0') {
        r = builder_fail(l, r, &inner);
    }
    return r;
}

static cb_result load_processors(loader *l, json_t *root)
{
    json_t *procs = member(root, "processors");
    if (procs == NULL) {
        return CB_OK;
    }
    push_key(l, "processors");
    cb_result r =
        json_is_array(procs) ? CB_OK : fail(l, CB_ERR_PARSE, "\"processors\" must be an array");
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

/* The builder id of the node named by the string `ref` at the current path, building it first
 * if needed. `additive_layer`: the reference is the node of an additive layer, the one place an
 * additive clip node belongs. */
static cb_result resolve(loader *l, json_t *ref, bool additive_layer, cb_graph_node *out)
{
    if (!json_is_string(ref)) {
        return fail(l, CB_ERR_PARSE, "a node reference must be a node name (a string)");
    }
    const char *name = json_string_value(ref);
    uint32_t i = cb_name_table_find(&l->node_names, name, NULL);
    jnode *n = i != UINT32_MAX ? &l->nodes[i] : NULL;
    if (n == NULL) {
        return fail(l, CB_ERR_PARSE, "unknown node '%s'", name);
    }
    if (n->state == 1) {
        return fail(l, CB_ERR_PARSE, "cycle: node '%s' leads back to itself", name);
    }
    if (n->state == 0) {
        if (l->nesting >= MAX_NESTING) {
            return fail(l, CB_ERR_TOO_MANY, "nodes nested more than %d deep", MAX_NESTING);
        }
        /* Build it now, reporting its own errors at its own place. */
        int saved = l->depth;
        jseg saved_path[MAX_DEPTH];
        memcpy(saved_path, l->path, sizeof saved_path);
        l->depth = 0;
        push_key(l, "nodes");
        push_key(l, n->name);
        l->nesting++;
        cb_result r = build_node(l, n);
        l->nesting--;
        memcpy(l->path, saved_path, sizeof saved_path);
        l->depth = saved;
        if (r != CB_OK) {
            return r;
        }
    }
    if (n->additive && !additive_layer && l->misuse_depth < 0 && l->depth <= MAX_DEPTH) {
        memcpy(l->misuse, l->path, sizeof l->misuse);
        l->misuse_depth = l->depth;
    }
    *out = n->id;
    return CB_OK;
}

static cb_result resolve_member(loader *l, json_t *obj, const char *key, bool additive_layer,
                                cb_graph_node *out)
{
    json_t *v = member(obj, key);
    if (v == NULL) {
        return fail(l, CB_ERR_PARSE, "missing \"%s\"", key);
    }
    push_key(l, key);
    cb_result r = resolve(l, v, additive_layer, out);
    pop(l);
    return r;
}

static cb_result load_clip(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type",  "clip",         "speed",      "speed_param",
                                       "clamp", "start_offset", "sync_group", NULL};
    cb_graph_clip_desc d = {.name = n->name};
    cb_result r = check_keys(l, o, "a clip node", keys);
    if (r == CB_OK) {
        r = get_string(l, o, "clip", true, &d.clip);
    }
    if (r == CB_OK) {
        r = get_number(l, o, "speed", false, &d.speed);
    }
    if (r == CB_OK) {
        r = get_string(l, o, "speed_param", false, &d.speed_param);
    }
    if (r == CB_OK) {
        r = get_bool(l, o, "clamp", &d.clamp);
    }
    if (r == CB_OK) {
        r = get_number(l, o, "start_offset", false, &d.start_offset);
    }
    if (r == CB_OK) {
        r = get_string(l, o, "sync_group", false, &d.sync_group);
    }
    if (r == CB_OK) {
        r = cb_graph_add_clip(l->b, &d, &n->id, inner);
    }
    if (r == CB_OK) {
        /* The builder found the clip by this name, so the table does too. */
        n->additive =
            cb_clip_is_additive(l->desc->clips[cb_name_table_find(&l->clip_names, d.clip, NULL)]);
    }
    return r;
}

/* Solver kinds that take one or two parameters (solver.h, `dimension`): the count of "params"
 * decides. The others have their own dimension. */
static bool takes_1d_or_2d(cb_solver_kind kind)
{
    return kind == CB_SOLVER_KIND_IDW || kind == CB_SOLVER_KIND_KNN_IDW ||
           kind == CB_SOLVER_KIND_RBF;
}

/* "solver" and "options": {"power", "k", "kernel", "epsilon", "nx", "ny"}. */
static cb_result load_solver(loader *l, json_t *o, cb_solver_desc *sd)
{
    const char *name = NULL;
    cb_result r = get_string(l, o, "solver", false, &name);
    if (r == CB_OK && name != NULL &&
        (cb_solver_kind_from_name(name, &sd->kind) != CB_OK || sd->kind == CB_SOLVER_KIND_DIRECT)) {
        char choices[320] = "";
        for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
            size_t used = strlen(choices);
            if (k != CB_SOLVER_KIND_DIRECT) {
                snprintf(choices + used, sizeof choices - used, "%s%s", used > 0 ? ", " : "",
                         cb_solver_kind_name((cb_solver_kind)k));
            }
        }
        push_key(l, "solver");
        r = fail(l, CB_ERR_PARSE,
                 "unknown solver '%s' (one of: %s; direct weights are a node "
                 "of type \"direct\")",
                 name, choices);
        pop(l);
    }
    json_t *opts = member(o, "options");
    if (r != CB_OK || opts == NULL) {
        return r;
    }
    push_key(l, "options");
    static const char *const keys[] = {"power", "k", "kernel", "epsilon", "nx", "ny", NULL};
    r = json_is_object(opts) ? check_keys(l, opts, "solver options", keys)
                             : fail(l, CB_ERR_PARSE, "\"options\" must be an object");
    const char *kernel = NULL;
    if (r == CB_OK) {
        r = get_number(l, opts, "power", false, &sd->idw_power);
    }
    if (r == CB_OK) {
        r = get_count(l, opts, "k", &sd->knn_k);
    }
    if (r == CB_OK) {
        r = get_number(l, opts, "epsilon", false, &sd->rbf_epsilon);
    }
    if (r == CB_OK) {
        r = get_count(l, opts, "nx", &sd->grid_nx);
    }
    if (r == CB_OK) {
        r = get_count(l, opts, "ny", &sd->grid_ny);
    }
    if (r == CB_OK) {
        r = get_string(l, opts, "kernel", false, &kernel);
    }
    if (r == CB_OK && kernel != NULL && cb_rbf_kernel_from_name(kernel, &sd->rbf_kernel) != CB_OK) {
        push_key(l, "kernel");
        r = fail(l, CB_ERR_PARSE,
                 "unknown RBF kernel '%s' (one of: thin_plate, cubic, linear, gaussian)", kernel);
        pop(l);
    }
    pop(l);
    return r;
}

/* A blend-space child's position: a number (1D) or an array of dim numbers. */
static cb_result load_position(loader *l, json_t *c, uint32_t dim, float *out)
{
    json_t *pos = member(c, "position");
    if (pos == NULL) {
        return fail(l, CB_ERR_PARSE, "missing \"position\"");
    }
    push_key(l, "position");
    cb_result r = CB_OK;
    if (dim == 1 && json_is_number(pos)) {
        r = to_float(l, json_number_value(pos), "position", out);
    } else if (json_is_array(pos) && json_array_size(pos) == dim) {
        for (uint32_t k = 0; k < dim && r == CB_OK; ++k) {
            r = element_float(l, pos, k, &out[k]);
        }
    } else {
        r = fail(l, CB_ERR_PARSE, "\"position\" must be %s",
                 dim == 1 ? "a number" : "an array of 2 numbers");
    }
    pop(l);
    return r;
}

/* "rate_warp": {"speed_param", "min_rate", "max_rate", "speed_from"} (graph.h
 * cb_graph_rate_warp); "speeds" are the children's "speed_mps". */
static cb_result load_rate_warp(loader *l, json_t *o, cb_graph_rate_warp *out)
{
    json_t *w = member(o, "rate_warp");
    if (w == NULL) {
        return CB_OK;
    }
    push_key(l, "rate_warp");
    static const char *const keys[] = {"speed_param", "min_rate", "max_rate", "speed_from", NULL};
    static const char *const from_names[] = {"root_motion", "positions", "speeds"};
    static const int from_values[] = {CB_WARP_SPEED_FROM_ROOT_MOTION, CB_WARP_SPEED_FROM_POSITIONS,
                                      CB_WARP_SPEED_FROM_SPEEDS};
    int from = CB_WARP_SPEED_FROM_ROOT_MOTION;
    cb_result r = json_is_object(w) ? check_keys(l, w, "rate_warp", keys)
                                    : fail(l, CB_ERR_PARSE,
                                           "\"rate_warp\" must be an object {\"speed_param\", "
                                           "\"min_rate\", \"max_rate\", \"speed_from\"}");
    if (r == CB_OK) {
        r = get_string(l, w, "speed_param", true, &out->speed_param);
    }
    if (r == CB_OK) {
        r = get_number(l, w, "min_rate", false, &out->min_rate);
    }
    if (r == CB_OK) {
        r = get_number(l, w, "max_rate", false, &out->max_rate);
    }
    if (r == CB_OK) {
        r = get_enum(l, w, "speed_from", "rate_warp speed_from", from_names, from_values, 3, &from);
    }
    out->speed_from = (cb_warp_speed_from)from;
    pop(l);
    return r;
}

/* A blend-space child's "speed_mps" (cb_graph_rate_warp.speeds): required on every child of a
 * warp whose speeds are declared, refused elsewhere (nothing would read it). */
static cb_result load_child_speed(loader *l, json_t *c, bool declared, float *out)
{
    json_t *v = member(c, "speed_mps");
    if (v == NULL) {
        return declared ? fail(l, CB_ERR_PARSE,
                               "missing \"speed_mps\" (rate_warp \"speed_from\": \"speeds\" "
                               "needs one on every child)")
                        : CB_OK;
    }
    if (declared) {
        return get_number(l, c, "speed_mps", true, out);
    }
    push_key(l, "speed_mps");
    cb_result r = fail(l, CB_ERR_INVALID_ARGUMENT,
                       "\"speed_mps\" needs the blend space's \"rate_warp\" with \"speed_from\": "
                       "\"speeds\"");
    pop(l);
    return r;
}

/* A blend-space child {"node", "position", "speed_mps"}, at the current path. */
static cb_result load_blend_child(loader *l, json_t *c, uint32_t dim, bool declared,
                                  cb_graph_node *id, float *position, float *speed)
{
    static const char *const ckeys[] = {"node", "position", "speed_mps", NULL};
    cb_result r = json_is_object(c)
                      ? check_keys(l, c, "a blend-space child", ckeys)
                      : fail(l, CB_ERR_PARSE, "a child must be {\"node\", \"position\"}");
    if (r == CB_OK) {
        r = resolve_member(l, c, "node", false, id);
    }
    if (r == CB_OK) {
        r = load_position(l, c, dim, position);
    }
    if (r == CB_OK) {
        r = load_child_speed(l, c, declared, speed);
    }
    return r;
}

static cb_result load_blend_space(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type",     "solver",     "options",   "params",
                                       "children", "sync_group", "rate_warp", NULL};
    cb_graph_blend_space_desc d = {.name = n->name};
    cb_result r = check_keys(l, o, "a blend_space node", keys);
    if (r == CB_OK) {
        r = load_solver(l, o, &d.solver);
    }
    if (r != CB_OK) {
        return r;
    }
    cb_solver_desc resolved = cb_solver_query_desc(&d.solver);
    uint32_t dim = resolved.dimension;
    json_t *params = member(o, "params");
    size_t given = json_is_string(params) ? 1 : json_is_array(params) ? json_array_size(params) : 0;
    if (takes_1d_or_2d(resolved.kind) && (given == 1 || given == 2)) {
        dim = (uint32_t)given;
        d.solver.dimension = dim;
    }
    r = get_names(l, o, "params", dim, true, "parameter", d.params);
    if (r == CB_OK) {
        r = get_string(l, o, "sync_group", false, &d.sync_group);
    }
    if (r == CB_OK) {
        r = load_rate_warp(l, o, &d.rate_warp);
    }
    json_t *children = NULL;
    if (r == CB_OK) {
        r = get_array(l, o, "children", 1, CB_GRAPH_MAX_CHILDREN, "{\"node\", \"position\"}",
                      &children);
    }
    if (r != CB_OK) {
        return r;
    }
    size_t count = json_array_size(children);
    cb_graph_node ids[CB_GRAPH_MAX_CHILDREN];
    float positions[2 * CB_GRAPH_MAX_CHILDREN], speeds[CB_GRAPH_MAX_CHILDREN];
    bool declared = d.rate_warp.speed_from == CB_WARP_SPEED_FROM_SPEEDS;
    push_key(l, "children");
    for (size_t i = 0; r == CB_OK && i < count; ++i) {
        push_index(l, i);
        r = load_blend_child(l, json_array_get(children, i), dim, declared, &ids[i],
                             &positions[i * dim], &speeds[i]);
        pop(l);
    }
    pop(l);
    if (r != CB_OK) {
        return r;
    }
    d.children = ids;
    d.positions = positions;
    d.child_count = (uint32_t)count;
    d.rate_warp.speeds = declared ? speeds : NULL;
    return cb_graph_add_blend_space(l->b, &d, &n->id, inner);
}

static cb_result load_direct(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "children", NULL};
    json_t *children = NULL;
    cb_result r = check_keys(l, o, "a direct node", keys);
    if (r == CB_OK) {
        r = get_array(l, o, "children", 1, CB_GRAPH_MAX_CHILDREN, "{\"node\", \"weight\"}",
                      &children);
    }
    if (r != CB_OK) {
        return r;
    }
    size_t count = json_array_size(children);
    cb_graph_node ids[CB_GRAPH_MAX_CHILDREN];
    const char *weights[CB_GRAPH_MAX_CHILDREN];
    push_key(l, "children");
    for (size_t i = 0; r == CB_OK && i < count; ++i) {
        json_t *c = json_array_get(children, i);
        push_index(l, i);
        static const char *const ckeys[] = {"node", "weight", NULL};
        r = json_is_object(c) ? check_keys(l, c, "a direct child", ckeys)
                              : fail(l, CB_ERR_PARSE, "a child must be {\"node\", \"weight\"}");
        if (r == CB_OK) {
            r = resolve_member(l, c, "node", false, &ids[i]);
        }
        if (r == CB_OK) {
            r = get_string(l, c, "weight", true, &weights[i]);
        }
        pop(l);
    }
    pop(l);
    if (r != CB_OK) {
        return r;
    }
    cb_graph_direct_desc d = {
        .name = n->name, .children = ids, .weights = weights, .child_count = (uint32_t)count};
    return cb_graph_add_direct(l->b, &d, &n->id, inner);
}

static cb_result load_layer(loader *l, json_t *ly, cb_graph_layer *out)
{
    static const char *const keys[] = {"node", "mode", "weight", "mask_joint", NULL};
    static const char *const mode_names[] = {"override", "additive"};
    static const int mode_values[] = {CB_LAYER_OVERRIDE, CB_LAYER_ADDITIVE};
    int mode = CB_LAYER_OVERRIDE;
    *out = (cb_graph_layer){.mode = CB_LAYER_OVERRIDE};
    cb_result r = json_is_object(ly) ? check_keys(l, ly, "a layer", keys)
                                     : fail(l, CB_ERR_PARSE, "a layer must be an object");
    if (r == CB_OK) {
        r = get_enum(l, ly, "mode", "layer mode", mode_names, mode_values, 2, &mode);
    }
    if (r == CB_OK) {
        r = resolve_member(l, ly, "node", mode == CB_LAYER_ADDITIVE, &out->node);
    }
    if (r == CB_OK) {
        r = get_string(l, ly, "weight", false, &out->weight);
    }
    if (r == CB_OK) {
        r = get_string(l, ly, "mask_joint", false, &out->mask_joint);
    }
    out->mode = (cb_layer_mode)mode;
    return r;
}

static cb_result load_layers(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "base", "layers", NULL};
    cb_graph_layers_desc d = {.name = n->name};
    cb_graph_layer layers[CB_GRAPH_MAX_LAYERS];
    json_t *ls = NULL;
    cb_result r = check_keys(l, o, "a layers node", keys);
    if (r == CB_OK) {
        r = resolve_member(l, o, "base", false, &d.base);
    }
    if (r == CB_OK) {
        r = get_array(l, o, "layers", 0, CB_GRAPH_MAX_LAYERS, "layers", &ls);
    }
    if (r != CB_OK) {
        return r;
    }
    push_key(l, "layers");
    for (size_t i = 0; r == CB_OK && i < json_array_size(ls); ++i) {
        push_index(l, i);
        r = load_layer(l, json_array_get(ls, i), &layers[i]);
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
    if (r == CB_OK) {
        r = get_string(l, c, "param", true, &out->param);
    }
    if (r == CB_OK) {
        r = get_enum(l, c, "op", "comparison", op_names, op_values, 6, &op);
    }
    if (r == CB_OK) {
        r = get_number(l, c, "value", false, &out->value);
    }
    out->op = (cb_compare)op;
    return r;
}

/* A transition's source and destination states. */
static cb_result load_transition_ends(loader *l, json_t *t, cb_graph_transition *out)
{
    /* "from" is required: "any" (any-state transition) must be said, so that a forgotten source
     * does not silently make a transition that fires from every state. */
    cb_result r = get_string(l, t, "from", true, &out->from);
    if (r == CB_OK && strcmp(out->from, "any") == 0) {
        out->from = NULL;
    }
    if (r == CB_OK) {
        r = get_string(l, t, "to", true, &out->to);
    }
    return r;
}

/* A transition's timing and blending: exit time, duration, blend, interruption, to_self. */
static cb_result load_transition_blend(loader *l, json_t *t, cb_graph_transition *out)
{
    static const char *const blend_names[] = {"crossfade", "inertialize"};
    static const int blend_values[] = {CB_TRANSITION_CROSSFADE, CB_TRANSITION_INERTIALIZE};
    static const char *const int_names[] = {"none", "source", "destination"};
    static const int int_values[] = {CB_INTERRUPTION_NONE, CB_INTERRUPTION_SOURCE,
                                     CB_INTERRUPTION_DESTINATION};
    int blend = CB_TRANSITION_CROSSFADE, interruption = CB_INTERRUPTION_NONE;
    cb_result r = CB_OK;
    if (member(t, "exit_time") != NULL) {
        out->has_exit_time = true;
        r = get_number(l, t, "exit_time", false, &out->exit_time);
    }
    if (r == CB_OK) {
        r = get_number(l, t, "duration", false, &out->duration_s);
    }
    if (r == CB_OK) {
        r = get_enum(l, t, "blend", "blend", blend_names, blend_values, 2, &blend);
    }
    if (r == CB_OK) {
        r = get_enum(l, t, "interruption", "interruption", int_names, int_values, 3, &interruption);
    }
    if (r == CB_OK) {
        r = get_bool(l, t, "to_self", &out->to_self);
    }
    out->blend = (cb_transition_blend)blend;
    out->interruption = (cb_interruption)interruption;
    return r;
}

/* A transition's conditions, into conds (CB_GRAPH_MAX_CONDITIONS of room). */
static cb_result load_conditions(loader *l, json_t *t, cb_graph_transition *out,
                                 cb_graph_condition *conds)
{
    json_t *cs = member(t, "conditions");
    cb_result r = check_optional_array(l, t, "conditions", CB_GRAPH_MAX_CONDITIONS);
    if (r != CB_OK || cs == NULL) {
        return r;
    }
    push_key(l, "conditions");
    for (size_t c = 0; r == CB_OK && c < json_array_size(cs); ++c) {
        push_index(l, c);
        r = load_condition(l, json_array_get(cs, c), &conds[c]);
        pop(l);
    }
    out->conditions = conds;
    out->condition_count = (uint32_t)json_array_size(cs);
    pop(l);
    return r;
}

/* One transition; its conditions go to conds (CB_GRAPH_MAX_CONDITIONS of room). */
static cb_result load_transition(loader *l, json_t *t, cb_graph_transition *out,
                                 cb_graph_condition *conds)
{
    static const char *const keys[] = {"from",         "to",       "conditions",
                                       "exit_time",    "duration", "blend",
                                       "interruption", "to_self",  NULL};
    *out = (cb_graph_transition){0};
    cb_result r = json_is_object(t) ? check_keys(l, t, "a transition", keys)
                                    : fail(l, CB_ERR_PARSE, "a transition must be an object");
    if (r == CB_OK) {
        r = load_transition_ends(l, t, out);
    }
    if (r == CB_OK) {
        r = load_transition_blend(l, t, out);
    }
    if (r == CB_OK) {
        r = load_conditions(l, t, out, conds);
    }
    return r;
}

static cb_result load_state(loader *l, json_t *s, cb_graph_state *out)
{
    static const char *const keys[] = {"name", "node", "speed", NULL};
    *out = (cb_graph_state){0};
    cb_result r = json_is_object(s) ? check_keys(l, s, "a state", keys)
                                    : fail(l, CB_ERR_PARSE, "a state must be an object");
    if (r == CB_OK) {
        r = get_string(l, s, "name", true, &out->name);
    }
    if (r == CB_OK && strcmp(out->name, "any") == 0) {
        push_key(l, "name");
        r = fail(l, CB_ERR_PARSE,
                 "a state cannot be named 'any': \"from\": \"any\" means any state");
        pop(l);
    }
    if (r == CB_OK) {
        r = resolve_member(l, s, "node", false, &out->node);
    }
    if (r == CB_OK) {
        r = get_number(l, s, "speed", false, &out->speed);
    }
    return r;
}

/* The states of a state machine, into st (CB_GRAPH_MAX_STATES of room). */
static cb_result load_states(loader *l, json_t *states, cb_graph_state *st)
{
    cb_result r = CB_OK;
    push_key(l, "states");
    for (size_t i = 0; r == CB_OK && i < json_array_size(states); ++i) {
        push_index(l, i);
        r = load_state(l, json_array_get(states, i), &st[i]);
        pop(l);
    }
    pop(l);
    return r;
}

/* The transitions ts (an array of at most CB_GRAPH_MAX_TRANSITIONS, or absent) into d, then the
 * state machine to the builder. */
static cb_result add_state_machine(loader *l, jnode *n, json_t *ts, cb_graph_state_machine_desc *d,
                                   cb_error *inner)
{
    size_t tcount = json_array_size(ts);
    /* Up to 256 transitions of 8 conditions: too much for the stack of a recursive loader. */
    const cb_allocator *a = &l->desc->allocator;
    size_t tr_bytes = (tcount ? tcount : 1) * sizeof(cb_graph_transition);
    size_t cond_bytes =
        (tcount ? tcount : 1) * CB_GRAPH_MAX_CONDITIONS * sizeof(cb_graph_condition);
    cb_graph_transition *tr = cb_alloc_zeroed(a, tr_bytes, 16);
    cb_graph_condition *conds = cb_alloc_zeroed(a, cond_bytes, 16);
    cb_result r = CB_OK;
    if (tr == NULL || conds == NULL) {
        r = fail(l, CB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    push_key(l, "transitions");
    for (size_t i = 0; r == CB_OK && i < tcount; ++i) {
        push_index(l, i);
        r = load_transition(l, json_array_get(ts, i), &tr[i], &conds[i * CB_GRAPH_MAX_CONDITIONS]);
        pop(l);
    }
    pop(l);
    if (r == CB_OK) {
        d->transitions = tr;
        d->transition_count = (uint32_t)tcount;
        r = cb_graph_add_state_machine(l->b, d, &n->id, inner);
    }
    cb_free(a, tr, tr_bytes);
    cb_free(a, conds, cond_bytes);
    return r;
}

static cb_result load_state_machine(loader *l, jnode *n, json_t *o, cb_error *inner)
{
    static const char *const keys[] = {"type", "initial", "states", "transitions", NULL};
    cb_graph_state_machine_desc d = {.name = n->name};
    json_t *states = NULL;
    cb_result r = check_keys(l, o, "a state_machine node", keys);
    if (r == CB_OK) {
        r = get_string(l, o, "initial", false, &d.initial);
    }
    if (r == CB_OK) {
        r = get_array(l, o, "states", 1, CB_GRAPH_MAX_STATES, "states", &states);
    }
    if (r == CB_OK) {
        r = check_optional_array(l, o, "transitions", CB_GRAPH_MAX_TRANSITIONS);
    }
    if (r != CB_OK) {
        return r;
    }
    cb_graph_state st[CB_GRAPH_MAX_STATES];
    r = load_states(l, states, st);
    if (r != CB_OK) {
        return r;
    }
    d.states = st;
    d.state_count = (uint32_t)json_array_size(states);
    return add_state_machine(l, n, member(o, "transitions"), &d, inner);
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
    if (member(o, "type") == NULL) {
        r = fail(l, CB_ERR_PARSE, "node '%s' has no \"type\"", n->name);
    }
    if (r == CB_OK) {
        r = get_enum(l, o, "type", "node type", type_names, type_values, 5, &type);
    }
    cb_error inner = {0};
    if (r == CB_OK) {
        switch (type) {
        case 0:
            r = load_clip(l, n, o, &inner);
            break;
        case 1:
            r = load_blend_space(l, n, o, &inner);
            break;
        case 2:
            r = load_direct(l, n, o, &inner);
            break;
        case 3:
            r = load_layers(l, n, o, &inner);
            break;
        default:
            r = load_state_machine(l, n, o, &inner);
            break;
        }
    }
    if (r != CB_OK && inner.message[0] != '\0') {
        r = builder_fail(l, r, &inner);
    }
    n->state = r == CB_OK ? 2 : 1;
    return r;
}

static const char *node_name_of(const void *ctx, uint32_t i)
{
    return ((const loader *)ctx)->nodes[i].name;
}

static const char *clip_name_of(const void *ctx, uint32_t i)
{
    return cb_clip_name(((const loader *)ctx)->desc->clips[i]);
}

static cb_result load_nodes(loader *l, json_t *root, cb_graph_node *root_id)
{
    json_t *nodes = member(root, "nodes");
    if (nodes == NULL) {
        return fail(l, CB_ERR_PARSE, "missing \"nodes\"");
    }
    if (!json_is_object(nodes) || json_object_size(nodes) == 0) {
        push_key(l, "nodes");
        cb_result r = fail(l, CB_ERR_PARSE, "\"nodes\" must be an object with at least one node");
        pop(l);
        return r;
    }
    l->node_count = json_object_size(nodes);
    l->nodes = cb_alloc_zeroed(&l->desc->allocator, l->node_count * sizeof *l->nodes, 16);
    if (l->nodes == NULL) {
        return fail(l, CB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (cb_name_table_init(&l->node_names, &l->desc->allocator, (uint32_t)l->node_count,
                           node_name_of, l) != CB_OK) {
        return fail(l, CB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    uint32_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(nodes, key, v)
    {
        l->nodes[i] = (jnode){.name = key, .value = v};
        cb_name_table_add(&l->node_names, i++); /* keys are unique (JSON_REJECT_DUPLICATES) */
    }
    /* The root first (its subtree in dependency order), then the rest in document order. */
    json_t *rootname = member(root, "root");
    if (rootname == NULL) {
        return fail(l, CB_ERR_PARSE, "missing \"root\": the node to play");
    }
    push_key(l, "root");
    cb_result r = resolve(l, rootname, false, root_id);
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

/* A step's "max_lod" (cb_graph_lod_limit): a number, in a graph with a "lod_param" (refused
 * here, at the step, where the builder would refuse it at build); its range is the builder's. */
static cb_result get_max_lod(loader *l, json_t *p, cb_graph_lod_limit *out)
{
    if (member(p, "max_lod") == NULL) {
        return CB_OK;
    }
    cb_result r = get_number(l, p, "max_lod", true, &out->max_lod);
    if (r == CB_OK && !l->lod_param) {
        push_key(l, "max_lod");
        r = fail(l, CB_ERR_NOT_FOUND,
                 "\"max_lod\" needs the graph's \"lod_param\" (the parameter that carries "
                 "each character's LOD)");
        pop(l);
    }
    out->on = true;
    return r;
}

static cb_result load_two_bone_ik(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {"type",   "start",    "mid",    "end",     "target", "pole",
                                       "weight", "mid_axis", "soften", "max_lod", NULL};
    cb_graph_two_bone_ik_desc d = {0};
    cb_result r = check_keys(l, p, "a two_bone_ik step", keys);
    if (r == CB_OK) {
        r = get_string(l, p, "start", true, &d.start_joint);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "mid", true, &d.mid_joint);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "end", true, &d.end_joint);
    }
    if (r == CB_OK) {
        r = get_names(l, p, "target", 3, true, "parameter", d.target);
    }
    if (r == CB_OK) {
        r = get_names(l, p, "pole", 3, false, "parameter", d.pole);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "weight", false, &d.weight);
    }
    if (r == CB_OK) {
        r = get_vec3(l, p, "mid_axis", d.mid_axis);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "soften", false, &d.soften);
    }
    if (r == CB_OK) {
        r = get_max_lod(l, p, &d.lod);
    }
    return r == CB_OK ? cb_graph_add_two_bone_ik(l->b, &d, inner) : r;
}

/* An optional array of one number per joint (jc of them) into weights; *out points at it when
 * the key is there. */
static cb_result get_joint_weights(loader *l, json_t *p, const char *key, size_t jc, float *weights,
                                   const float **out)
{
    json_t *jw = member(p, key);
    if (jw == NULL) {
        return CB_OK;
    }
    push_key(l, key);
    cb_result r = CB_OK;
    if (!json_is_array(jw) || json_array_size(jw) != jc) {
        r = fail(l, CB_ERR_PARSE, "\"%s\" must have one number per joint (%zu)", key, jc);
    }
    for (size_t k = 0; r == CB_OK && k < jc; ++k) {
        r = element_float(l, jw, k, &weights[k]);
    }
    pop(l);
    *out = weights;
    return r;
}

static cb_result load_aim_ik(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {"type",    "joints", "joint_weights", "target", "weight",
                                       "forward", "up",     "pole",          "offset", "limit_deg",
                                       "max_lod", NULL};
    cb_graph_aim_ik_desc d = {0};
    const char *joints[CB_IK_AIM_MAX_JOINTS];
    float weights[CB_IK_AIM_MAX_JOINTS];
    json_t *js = NULL;
    cb_result r = check_keys(l, p, "an aim_ik step", keys);
    if (r == CB_OK) {
        r = get_array(l, p, "joints", 1, CB_IK_AIM_MAX_JOINTS, "joint names", &js);
    }
    size_t jc = r == CB_OK ? json_array_size(js) : 0;
    if (r == CB_OK) {
        r = get_names(l, p, "joints", jc, true, "joint", joints);
    }
    if (r == CB_OK) {
        r = get_joint_weights(l, p, "joint_weights", jc, weights, &d.joint_weights);
    }
    if (r == CB_OK) {
        r = get_names(l, p, "target", 3, true, "parameter", d.target);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "weight", false, &d.weight);
    }
    if (r == CB_OK) {
        r = get_vec3(l, p, "forward", d.forward);
    }
    if (r == CB_OK) {
        r = get_vec3(l, p, "up", d.up);
    }
    if (r == CB_OK) {
        r = get_vec3(l, p, "pole", d.pole);
    }
    if (r == CB_OK) {
        r = get_vec3(l, p, "offset", d.offset);
    }
    if (r == CB_OK) {
        r = get_degrees(l, p, "limit_deg", &d.limit_rad);
    }
    d.joints = joints;
    d.joint_count = (uint32_t)jc;
    if (r == CB_OK) {
        r = get_max_lod(l, p, &d.lod);
    }
    return r == CB_OK ? cb_graph_add_aim_ik(l->b, &d, inner) : r;
}

static cb_result load_orientation_warp(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {
        "type", "hip", "spine", "spine_weights", "angle", "weight", "limit_deg", "max_lod", NULL};
    cb_graph_orientation_warp_desc d = {0};
    const char *spine[CB_IK_AIM_MAX_JOINTS - 1];
    float weights[CB_IK_AIM_MAX_JOINTS - 1];
    json_t *js = NULL;
    cb_result r = check_keys(l, p, "an orientation_warp step", keys);
    if (r == CB_OK) {
        r = get_string(l, p, "hip", false, &d.hip_joint);
    }
    if (r == CB_OK && member(p, "spine") != NULL) {
        r = get_array(l, p, "spine", 1, CB_IK_AIM_MAX_JOINTS - 1, "joint names", &js);
    }
    size_t jc = r == CB_OK && js != NULL ? json_array_size(js) : 0;
    if (r == CB_OK && jc > 0) {
        r = get_names(l, p, "spine", jc, true, "joint", spine);
    }
    if (r == CB_OK) {
        r = get_joint_weights(l, p, "spine_weights", jc, weights, &d.spine_weights);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "angle", true, &d.angle);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "weight", false, &d.weight);
    }
    if (r == CB_OK) {
        r = get_degrees(l, p, "limit_deg", &d.limit_rad);
    }
    d.spine_joints = spine;
    d.spine_count = (uint32_t)jc;
    if (r == CB_OK) {
        r = get_max_lod(l, p, &d.lod);
    }
    return r == CB_OK ? cb_graph_add_orientation_warp(l->b, &d, inner) : r;
}

/* One leg of a stride_warp step: {"start", "mid", "end", "mid_axis"}. */
static cb_result load_stride_leg(loader *l, json_t *legs, size_t i, cb_graph_stride_leg *leg)
{
    static const char *const keys[] = {"start", "mid", "end", "mid_axis", NULL};
    json_t *p = json_array_get(legs, i);
    push_index(l, i);
    cb_result r = json_is_object(p) ? CB_OK : fail(l, CB_ERR_PARSE, "a leg must be an object");
    if (r == CB_OK) {
        r = check_keys(l, p, "a stride_warp leg", keys);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "start", true, &leg->start_joint);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "mid", true, &leg->mid_joint);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "end", true, &leg->end_joint);
    }
    if (r == CB_OK) {
        r = get_vec3(l, p, "mid_axis", leg->mid_axis);
    }
    pop(l);
    return r;
}

static cb_result load_stride_warp(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {"type",   "hip",    "legs",    "scale", "direction",
                                       "weight", "soften", "max_lod", NULL};
    cb_graph_stride_warp_desc d = {0};
    cb_graph_stride_leg legs[CB_IK_STRIDE_MAX_LEGS] = {{0}};
    json_t *jl = NULL;
    cb_result r = check_keys(l, p, "a stride_warp step", keys);
    if (r == CB_OK) {
        r = get_string(l, p, "hip", false, &d.hip_joint);
    }
    if (r == CB_OK) {
        r = get_array(l, p, "legs", 1, CB_IK_STRIDE_MAX_LEGS, "legs", &jl);
    }
    size_t n = r == CB_OK ? json_array_size(jl) : 0;
    if (n > 0) {
        push_key(l, "legs");
        for (size_t i = 0; i < n && r == CB_OK; ++i) {
            r = load_stride_leg(l, jl, i, &legs[i]);
        }
        pop(l);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "scale", true, &d.scale);
    }
    if (r == CB_OK) {
        r = get_names(l, p, "direction", 2, true, "parameter", d.direction);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "weight", false, &d.weight);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "soften", false, &d.soften);
    }
    d.legs = legs;
    d.leg_count = (uint32_t)n;
    if (r == CB_OK) {
        r = get_max_lod(l, p, &d.lod);
    }
    return r == CB_OK ? cb_graph_add_stride_warp(l->b, &d, inner) : r;
}

/* One leg of a foot_lock step: {"start", "mid", "end", "mid_axis", "plant", "lift", "locked",
 * "failed"}. */
static cb_result load_foot_lock_leg(loader *l, json_t *legs, size_t i, cb_graph_foot_lock_leg *leg)
{
    static const char *const keys[] = {"start", "mid",    "end",    "mid_axis", "plant",
                                       "lift",  "locked", "failed", NULL};
    json_t *p = json_array_get(legs, i);
    push_index(l, i);
    cb_result r = json_is_object(p) ? CB_OK : fail(l, CB_ERR_PARSE, "a leg must be an object");
    if (r == CB_OK) {
        r = check_keys(l, p, "a foot_lock leg", keys);
    }
    const char *const names[] = {"start", "mid", "end", "plant", "lift", "locked", "failed"};
    const char **fields[] = {
        &leg->chain.start_joint, &leg->chain.mid_joint, &leg->chain.end_joint, &leg->plant_marker,
        &leg->lift_marker,       &leg->locked,          &leg->failed};
    for (int k = 0; k < 7 && r == CB_OK; ++k) {
        r = get_string(l, p, names[k], k < 3, fields[k]);
    }
    if (r == CB_OK) {
        r = get_vec3(l, p, "mid_axis", leg->chain.mid_axis);
    }
    pop(l);
    return r;
}

static cb_result load_foot_lock(loader *l, json_t *p, cb_error *inner)
{
    static const char *const keys[] = {"type",          "legs",      "root_position",   "root_yaw",
                                       "weight",        "release_s", "fail_distance_m", "soften",
                                       "pelvis_drop_m", "pelvis",    "max_lod",         NULL};
    cb_graph_foot_lock_desc d = {0};
    cb_graph_foot_lock_leg legs[CB_GRAPH_FOOT_LOCK_MAX_LEGS] = {{{0}}};
    json_t *jl = NULL;
    cb_result r = check_keys(l, p, "a foot_lock step", keys);
    if (r == CB_OK) {
        r = get_array(l, p, "legs", 1, CB_GRAPH_FOOT_LOCK_MAX_LEGS, "legs", &jl);
    }
    size_t n = r == CB_OK ? json_array_size(jl) : 0;
    if (n > 0) {
        push_key(l, "legs");
        for (size_t i = 0; i < n && r == CB_OK; ++i) {
            r = load_foot_lock_leg(l, jl, i, &legs[i]);
        }
        pop(l);
    }
    if (r == CB_OK) {
        r = get_names(l, p, "root_position", 3, false, "parameter", d.root_position);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "root_yaw", false, &d.root_yaw);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "weight", false, &d.weight);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "release_s", false, &d.release_s);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "fail_distance_m", false, &d.fail_distance_m);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "soften", false, &d.soften);
    }
    if (r == CB_OK) {
        r = get_number(l, p, "pelvis_drop_m", false, &d.pelvis_drop_m);
    }
    if (r == CB_OK) {
        r = get_string(l, p, "pelvis", false, &d.pelvis_joint);
    }
    if (r == CB_OK) {
        r = get_max_lod(l, p, &d.lod);
    }
    d.legs = legs;
    d.leg_count = (uint32_t)n;
    return r == CB_OK ? cb_graph_add_foot_lock(l->b, &d, inner) : r;
}

static cb_result load_post(loader *l, json_t *root)
{
    json_t *post = member(root, "post_process");
    if (post == NULL) {
        return CB_OK;
    }
    push_key(l, "post_process");
    cb_result r =
        json_is_array(post) ? CB_OK : fail(l, CB_ERR_PARSE, "\"post_process\" must be an array");
    static const char *const type_names[] = {"two_bone_ik", "aim_ik", "orientation_warp",
                                             "stride_warp", "foot_lock"};
    static const int type_values[] = {0, 1, 2, 3, 4};
    for (size_t i = 0; r == CB_OK && i < json_array_size(post); ++i) {
        json_t *p = json_array_get(post, i);
        push_index(l, i);
        int type = -1;
        cb_error inner = {0};
        r = json_is_object(p) ? CB_OK : fail(l, CB_ERR_PARSE, "a step must be an object");
        if (r == CB_OK && member(p, "type") == NULL) {
            r = fail(l, CB_ERR_PARSE, "missing \"type\"");
        }
        if (r == CB_OK) {
            r = get_enum(l, p, "type", "post-process step", type_names, type_values, 5, &type);
        }
        if (r == CB_OK) {
            r = type == 0   ? load_two_bone_ik(l, p, &inner)
                : type == 1 ? load_aim_ik(l, p, &inner)
                : type == 2 ? load_orientation_warp(l, p, &inner)
                : type == 3 ? load_stride_warp(l, p, &inner)
                            : load_foot_lock(l, p, &inner);
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

/* The format's version: 1, the only one this build reads (docs/graph.md). A later version may
 * mean what this loader would read differently, so it is refused rather than guessed at. */
static cb_result check_version(loader *l, json_t *root)
{
    json_t *v = member(root, "version");
    if (v == NULL) {
        return CB_OK;
    }
    push_key(l, "version");
    cb_result r = CB_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 1) {
        r = fail(l, CB_ERR_PARSE, "\"version\" must be a whole number >= 1");
    } else if (json_integer_value(v) > CB_GRAPH_JSON_VERSION) {
        r = fail(l, CB_ERR_UNSUPPORTED, "format version %lld: this build reads version %d",
                 (long long)json_integer_value(v), CB_GRAPH_JSON_VERSION);
    }
    pop(l);
    return r;
}

/* The graph's "lod_param": one declared numeric parameter (cb_graph_set_lod_param). */
static cb_result load_lod_param(loader *l, json_t *root)
{
    const char *name = NULL;
    cb_result r = get_string(l, root, "lod_param", false, &name);
    if (r != CB_OK || name == NULL) {
        return r;
    }
    cb_error inner = {0};
    r = cb_graph_set_lod_param(l->b, name, &inner);
    if (r != CB_OK) {
        push_key(l, "lod_param");
        r = builder_fail(l, r, &inner);
        pop(l);
    }
    l->lod_param = r == CB_OK;
    return r;
}

static cb_result load_document(loader *l, json_t *root, cb_graph **out)
{
    if (!json_is_object(root)) {
        return fail(l, CB_ERR_PARSE, "a graph must be a JSON object");
    }
    static const char *const keys[] = {"version",      "name", "parameters", "processors", "nodes",
                                       "post_process", "root", "lod_param",  NULL};
    const char *name = NULL;
    cb_result r = check_keys(l, root, "the graph", keys);
    if (r == CB_OK) {
        r = check_version(l, root);
    }
    if (r == CB_OK) {
        r = get_string(l, root, "name", false, &name);
    }
    if (r == CB_OK) {
        cb_graph_builder_desc bd = {.skeleton = l->desc->skeleton,
                                    .clips = l->desc->clips,
                                    .clip_count = l->desc->clip_count,
                                    .name = name != NULL ? name : l->source,
                                    .allocator = l->desc->allocator};
        r = cb_graph_builder_create(&bd, &l->b, l->err);
    }
    if (r == CB_OK) {
        r = load_params(l, root);
    }
    if (r == CB_OK) {
        r = load_lod_param(l, root);
    }
    if (r == CB_OK) {
        r = load_processors(l, root);
    }
    cb_graph_node root_id = {0};
    if (r == CB_OK) {
        r = load_nodes(l, root, &root_id);
    }
    if (r == CB_OK) {
        r = load_post(l, root);
    }
    if (r == CB_OK) {
        cb_error inner = {0};
        r = cb_graph_set_root(l->b, root_id, &inner);
        if (r == CB_OK) {
            r = cb_graph_build(l->b, out, &inner);
        }
        if (r != CB_OK) {
            /* The one build-time refusal that a place explains: an additive clip node used
             * outside an additive layer. Anything else concerns the whole document. */
            l->depth = 0;
            if (r == CB_ERR_MISMATCH && l->misuse_depth >= 0) {
                memcpy(l->path, l->misuse, sizeof l->path);
                l->depth = l->misuse_depth;
            }
            r = builder_fail(l, r, &inner);
        }
    }
    return r;
}

cb_graph_json_desc cb_graph_query_json_desc(const cb_graph_json_desc *desc)
{
    cb_graph_json_desc d = desc != NULL ? *desc : (cb_graph_json_desc){0};
    if (d.source_name == NULL) {
        d.source_name = CB_GRAPH_DEFAULT_NAME;
    }
    return d;
}

cb_result cb_graph_load_json(const char *text, size_t length, const cb_graph_json_desc *desc,
                             cb_graph **out, cb_error *err)
{
    if (text == NULL || desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_load_json: a NULL argument");
    }
    if (desc->_start_canary != 0 || desc->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cb_graph_json_desc: a canary is not zero");
    }
    cb_result r = cb_allocator_check(&desc->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    const char *source = cb_graph_query_json_desc(desc).source_name;
    json_error_t jerr;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        /* jansson's place: the last character it read. At the end of a text that ends in a
         * newline it says column 0; the place is the start of that (empty) line. */
        int line = jerr.line, col = jerr.column;
        if (line < 1 && jerr.position >= 0 && (size_t)jerr.position <= length) {
            line_col(text, text + jerr.position, &line, &col);
        }
        return cb_error_set(err, CB_ERR_PARSE, "%s:%d:%d: %s", source, line > 0 ? line : 1,
                            col > 0 ? col : 1, jerr.text);
    }
    loader l = {.text = text,
                .len = length,
                .source = source,
                .desc = desc,
                .err = err,
                .misuse_depth = -1};
    r = cb_name_table_init(&l.clip_names, &desc->allocator, desc->clip_count, clip_name_of, &l);
    for (uint32_t c = 0; r == CB_OK && c < desc->clip_count; ++c) {
        /* A NULL clip or a duplicate name is the builder's to report. */
        if (desc->clips != NULL && desc->clips[c] != NULL &&
            cb_name_table_find(&l.clip_names, cb_clip_name(desc->clips[c]), NULL) == UINT32_MAX) {
            cb_name_table_add(&l.clip_names, c);
        }
    }
    r = r == CB_OK ? load_document(&l, root, out)
                   : cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_graph_load_json");
    cb_graph_builder_destroy(l.b);
    cb_name_table_finish(&l.node_names, &desc->allocator);
    cb_name_table_finish(&l.clip_names, &desc->allocator);
    cb_free(&desc->allocator, l.nodes, l.node_count * sizeof *l.nodes);
    json_decref(root);
    return r;
}

cb_result cb_graph_load_json_file(const char *path, const cb_graph_json_desc *desc, cb_graph **out,
                                  cb_error *err)
{
    if (path == NULL || desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_load_json_file: a NULL argument");
    }
    if (desc->_start_canary != 0 || desc->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cb_graph_json_desc: a canary is not zero");
    }
    cb_result r = cb_allocator_check(&desc->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return cb_error_set(err, CB_ERR_IO, "%s: %s", path, strerror(errno));
    }
    const cb_allocator *a = &desc->allocator;
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t grown_cap = cap ? cap * 2 : 65536;
            char *grown = cb_alloc(a, grown_cap, 16);
            if (grown == NULL) {
                cb_free(a, text, cap);
                fclose(f);
                return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
            }
            if (len > 0) {
                memcpy(grown, text, len);
            }
            cb_free(a, text, cap);
            text = grown;
            cap = grown_cap;
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
        cb_free(a, text, cap);
        return cb_error_set(err, CB_ERR_IO, "%s: read error", path);
    }
    cb_graph_json_desc d = *desc;
    if (d.source_name == NULL) {
        d.source_name = path;
    }
    r = cb_graph_load_json(text, len, &d, out, err);
    cb_free(a, text, cap);
    return r;
}
