/* The test assets' reader (asset_reader.h). glTF 2.0 binary: the 12-byte header, a JSON chunk
 * (read with jansson) and a BIN chunk; accessors are bounds-checked against it. BVH: the
 * HIERARCHY block, then the MOTION block of whitespace-separated numbers. */
#include "asset_reader.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets/asset_layout.h" /* cb_test_clip_frames reads a clip's stored frames */
#include "base/base_impl.h"

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    unsigned char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
            if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
            } else {
                buf[n] = 0;
                *size = (size_t)n;
            }
        }
    }
    fclose(f);
    return buf;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ------------------------------------------------------------------------------------------ */
/* glTF                                                                                       */

typedef struct gltf {
    json_t *root;
    const unsigned char *bin;
    size_t bin_size;
} gltf;

/* Element `i` of a float accessor with `width` components, or false. */
typedef struct accessor {
    const unsigned char *base;
    size_t count, width, stride;
} accessor;

static bool get_accessor(const gltf *g, json_t *index, size_t width, accessor *out)
{
    json_t *acc =
        json_array_get(json_object_get(g->root, "accessors"), (size_t)json_integer_value(index));
    if (!json_is_integer(index) || acc == NULL ||
        json_integer_value(json_object_get(acc, "componentType")) != 5126) {
        return false;
    }
    const char *type = json_string_value(json_object_get(acc, "type"));
    size_t w = type == NULL                  ? 0
               : strcmp(type, "SCALAR") == 0 ? 1
               : strcmp(type, "VEC3") == 0   ? 3
               : strcmp(type, "VEC4") == 0   ? 4
                                             : 0;
    json_t *view = json_array_get(json_object_get(g->root, "bufferViews"),
                                  (size_t)json_integer_value(json_object_get(acc, "bufferView")));
    if (w != width || view == NULL) {
        return false;
    }
    size_t count = (size_t)json_integer_value(json_object_get(acc, "count"));
    size_t off = (size_t)json_integer_value(json_object_get(view, "byteOffset")) +
                 (size_t)json_integer_value(json_object_get(acc, "byteOffset"));
    size_t len = (size_t)json_integer_value(json_object_get(view, "byteLength"));
    size_t stride = (size_t)json_integer_value(json_object_get(view, "byteStride"));
    stride = stride == 0 ? w * 4 : stride;
    size_t view_end = (size_t)json_integer_value(json_object_get(view, "byteOffset")) + len;
    if (count == 0 || view_end > g->bin_size || off + (count - 1) * stride + w * 4 > view_end) {
        return false;
    }
    *out = (accessor){g->bin + off, count, w, stride};
    return true;
}

static float acc_get(const accessor *a, size_t i, size_t c)
{
    uint32_t u = le32(a->base + i * a->stride + c * 4);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static cb_xform node_xform(json_t *node, double scale)
{
    cb_xform x = cb_xform_identity();
    json_t *t = json_object_get(node, "translation"), *r = json_object_get(node, "rotation");
    json_t *s = json_object_get(node, "scale");
    for (size_t k = 0; k < 3; ++k) {
        if (t != NULL) {
            x.translation[k] = (float)(json_number_value(json_array_get(t, k)) * scale);
        }
        if (s != NULL) {
            x.scale[k] = (float)json_number_value(json_array_get(s, k));
        }
    }
    for (size_t k = 0; r != NULL && k < 4; ++k) {
        x.rotation[k] = (float)json_number_value(json_array_get(r, k));
    }
    return x;
}

typedef struct joints {
    size_t count;
    size_t node[1024]; /* node of joint j (parents first) */
    int32_t parent[1024];
    char names[1024][24];
} joints;

/* Orders skins[0]'s joints parents first: a depth-first walk of the node tree from every node
 * that has no parent, keeping joint nodes; a joint's parent is its nearest joint ancestor. */
static bool order_joints(const gltf *g, joints *js)
{
    json_t *nodes = json_object_get(g->root, "nodes");
    json_t *skin_joints =
        json_object_get(json_array_get(json_object_get(g->root, "skins"), 0), "joints");
    size_t n = json_array_size(nodes);
    if (n == 0 || n > 1024 || json_array_size(skin_joints) == 0) {
        return false;
    }
    bool is_joint[1024] = {false}, has_parent[1024] = {false};
    for (size_t i = 0; i < json_array_size(skin_joints); ++i) {
        size_t k = (size_t)json_integer_value(json_array_get(skin_joints, i));
        if (k >= n) {
            return false;
        }
        is_joint[k] = true;
    }
    for (size_t i = 0; i < n; ++i) {
        json_t *ch = json_object_get(json_array_get(nodes, i), "children");
        for (size_t k = 0; k < json_array_size(ch); ++k) {
            size_t c = (size_t)json_integer_value(json_array_get(ch, k));
            if (c >= n) {
                return false;
            }
            has_parent[c] = true;
        }
    }
    /* Explicit stack of (node, nearest joint ancestor's index). */
    size_t stack_node[1024];
    int32_t stack_parent[1024];
    size_t top = 0;
    for (size_t i = n; i-- > 0;) {
        if (!has_parent[i]) {
            stack_node[top] = i, stack_parent[top] = -1, top++;
        }
    }
    js->count = 0;
    while (top > 0) {
        top--;
        size_t node = stack_node[top];
        int32_t parent = stack_parent[top];
        if (is_joint[node]) {
            js->node[js->count] = node;
            js->parent[js->count] = parent;
            const char *nm =
                json_string_value(json_object_get(json_array_get(nodes, node), "name"));
            snprintf(js->names[js->count], sizeof js->names[0], "%s", nm != NULL ? nm : "");
            if (nm == NULL || js->names[js->count][0] == 0) {
                snprintf(js->names[js->count], sizeof js->names[0], "node_%zu", node);
            }
            parent = (int32_t)js->count++;
        }
        json_t *ch = json_object_get(json_array_get(nodes, node), "children");
        for (size_t k = json_array_size(ch); k-- > 0;) {
            if (top == 1024) {
                return false;
            }
            stack_node[top] = (size_t)json_integer_value(json_array_get(ch, k));
            stack_parent[top] = parent;
            top++;
        }
    }
    return js->count == json_array_size(skin_joints);
}

static int joint_of_node(const joints *js, size_t node)
{
    for (size_t j = 0; j < js->count; ++j) {
        if (js->node[j] == node) {
            return (int)j;
        }
    }
    return -1;
}

/* Linear interpolation of a channel at time t (slerp-free: glTF LINEAR rotations are slerped,
 * but at the uniform source keys every evaluation lands on a key, where both agree). */
static void channel_at(const accessor *in, const accessor *out, double t, float *v)
{
    size_t n = in->count, k = 0;
    if (t <= acc_get(in, 0, 0) || n == 1) {
        k = 0;
    } else if (t >= acc_get(in, n - 1, 0)) {
        k = n - 1;
    } else {
        while (k + 1 < n && acc_get(in, k + 1, 0) <= t) {
            k++;
        }
        double t0 = acc_get(in, k, 0), t1 = acc_get(in, k + 1, 0);
        double u = (t - t0) / (t1 - t0);
        if (u > 1e-6) {
            for (size_t c = 0; c < out->width; ++c) {
                v[c] = (float)((1.0 - u) * acc_get(out, k, c) + u * acc_get(out, k + 1, c));
            }
            return;
        }
    }
    for (size_t c = 0; c < out->width; ++c) {
        v[c] = acc_get(out, k, c);
    }
}

static cb_result read_animation(const gltf *g, const joints *js, json_t *anim, double scale,
                                const cb_xform *rest, cb_test_asset_clip *clip, cb_error *err)
{
    json_t *samplers = json_object_get(anim, "samplers"),
           *channels = json_object_get(anim, "channels");
    double t0 = INFINITY, t1 = -INFINITY;
    size_t keys = 0;
    for (size_t i = 0; i < json_array_size(samplers); ++i) {
        json_t *s = json_array_get(samplers, i);
        const char *interp = json_string_value(json_object_get(s, "interpolation"));
        accessor in;
        if ((interp != NULL && strcmp(interp, "LINEAR") != 0) ||
            !get_accessor(g, json_object_get(s, "input"), 1, &in)) {
            return cb_error_set(err, CB_ERR_UNSUPPORTED, "sampler %zu: not LINEAR float", i);
        }
        t0 = fmin(t0, acc_get(&in, 0, 0));
        t1 = fmax(t1, acc_get(&in, in.count - 1, 0));
        keys = in.count > keys ? in.count : keys;
    }
    if (keys < 2 || !(t1 > t0)) {
        return cb_error_set(err, CB_ERR_PARSE, "animation has fewer than 2 keys");
    }
    const size_t n = js->count;
    clip->frame_count = keys;
    clip->rate_hz = (double)(keys - 1) / (t1 - t0);
    clip->frames = malloc(keys * n * sizeof(cb_xform));
    if (clip->frames == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "frames");
    }
    for (size_t f = 0; f < keys; ++f) {
        memcpy(&clip->frames[f * n], rest, n * sizeof(cb_xform));
    }
    for (size_t i = 0; i < json_array_size(channels); ++i) {
        json_t *ch = json_array_get(channels, i), *target = json_object_get(ch, "target");
        int j = joint_of_node(js, (size_t)json_integer_value(json_object_get(target, "node")));
        const char *path = json_string_value(json_object_get(target, "path"));
        json_t *s =
            json_array_get(samplers, (size_t)json_integer_value(json_object_get(ch, "sampler")));
        if (j < 0 || path == NULL || s == NULL) {
            continue; /* a channel on a node outside the skeleton */
        }
        int kind = strcmp(path, "translation") == 0 ? 0
                   : strcmp(path, "rotation") == 0  ? 1
                   : strcmp(path, "scale") == 0     ? 2
                                                    : -1;
        accessor in, out;
        if (kind < 0 || !get_accessor(g, json_object_get(s, "input"), 1, &in) ||
            !get_accessor(g, json_object_get(s, "output"), kind == 1 ? 4 : 3, &out) ||
            out.count != in.count) {
            return cb_error_set(err, CB_ERR_UNSUPPORTED, "channel %zu (%s)", i,
                                path != NULL ? path : "?");
        }
        for (size_t f = 0; f < keys; ++f) {
            double t = f + 1 == keys ? t1 : t0 + (t1 - t0) * (double)f / (double)(keys - 1);
            cb_xform *x = &clip->frames[f * n + (size_t)j];
            float v[4];
            channel_at(&in, &out, t, v);
            for (int c = 0; c < (kind == 1 ? 4 : 3); ++c) {
                if (kind == 0) {
                    x->translation[c] = (float)(v[c] * scale);
                } else if (kind == 1) {
                    x->rotation[c] = v[c];
                } else {
                    x->scale[c] = v[c];
                }
            }
        }
    }
    return CB_OK;
}

cb_result cb_test_read_glb(const char *path, double scale, cb_test_asset *out, cb_error *err)
{
    memset(out, 0, sizeof *out);
    size_t size = 0;
    unsigned char *buf = read_file(path, &size);
    if (buf == NULL) {
        return cb_error_set(err, CB_ERR_IO, "cannot read %s", path);
    }
    cb_result r = CB_OK;
    gltf g = {0};
    joints *js = calloc(1, sizeof *js);
    cb_xform *rest = NULL;
    if (js == NULL || size < 28 || memcmp(buf, "glTF", 4) != 0 || le32(buf + 16) != 0x4E4F534Au) {
        r = cb_error_set(err, CB_ERR_PARSE, "%s: not a glTF binary", path);
        goto done;
    }
    size_t json_len = le32(buf + 12);
    if (20 + json_len + 8 > size || le32(buf + 20 + json_len + 4) != 0x004E4942u) {
        r = cb_error_set(err, CB_ERR_PARSE, "%s: chunks out of bounds", path);
        goto done;
    }
    g.bin = buf + 20 + json_len + 8;
    g.bin_size = le32(buf + 20 + json_len);
    if (g.bin_size > size - (20 + json_len + 8)) {
        r = cb_error_set(err, CB_ERR_PARSE, "%s: BIN chunk out of bounds", path);
        goto done;
    }
    g.root = json_loadb((const char *)buf + 20, json_len, 0, NULL);
    if (g.root == NULL || !order_joints(&g, js)) {
        r = cb_error_set(err, CB_ERR_PARSE, "%s: no readable skin", path);
        goto done;
    }
    rest = malloc(js->count * sizeof *rest);
    const char *names[1024];
    json_t *nodes = json_object_get(g.root, "nodes");
    for (size_t j = 0; rest != NULL && j < js->count; ++j) {
        rest[j] = node_xform(json_array_get(nodes, js->node[j]), scale);
        names[j] = js->names[j];
    }
    cb_skeleton_desc sd = {
        .joint_count = js->count, .names = names, .parents = js->parent, .rest_pose = rest};
    if (rest == NULL || (r = cb_skeleton_create(&sd, &out->skeleton, err)) != CB_OK) {
        r = r != CB_OK ? r : CB_ERR_OUT_OF_MEMORY;
        goto done;
    }
    json_t *anims = json_object_get(g.root, "animations");
    for (size_t a = 0; a < json_array_size(anims) && a < CB_TEST_ASSET_MAX_CLIPS; ++a) {
        json_t *anim = json_array_get(anims, a);
        cb_test_asset_clip *clip = &out->clips[out->clip_count];
        const char *nm = json_string_value(json_object_get(anim, "name"));
        snprintf(clip->name, sizeof clip->name, "%s", nm != NULL ? nm : "animation");
        r = read_animation(&g, js, anim, scale, rest, clip, err);
        if (r != CB_OK) {
            goto done;
        }
        out->clip_count++;
    }
done:
    if (r != CB_OK) {
        cb_test_asset_free(out);
    }
    json_decref(g.root);
    free(rest);
    free(js);
    free(buf);
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* BVH                                                                                        */

typedef struct bvh_joint {
    char name[64];
    int32_t parent;
    double offset[3];
    int channels;
    int order[6]; /* 0..2 position x y z, 3..5 rotation x y z, in file order */
} bvh_joint;

static const char *next_token(const char **p, char *tok, size_t cap)
{
    const char *s = *p;
    while (*s != 0 && isspace((unsigned char)*s)) {
        s++;
    }
    size_t n = 0;
    while (s[n] != 0 && !isspace((unsigned char)s[n])) {
        n++;
    }
    if (n == 0 || n >= cap) {
        return NULL;
    }
    memcpy(tok, s, n);
    tok[n] = 0;
    *p = s + n;
    return tok;
}

static int channel_code(const char *t)
{
    static const char *names[6] = {"Xposition", "Yposition", "Zposition",
                                   "Xrotation", "Yrotation", "Zrotation"};
    for (int i = 0; i < 6; ++i) {
        if (strcmp(t, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* The HIERARCHY block; *p is left after "MOTION". */
static bool bvh_hierarchy(const char **p, bvh_joint *js, size_t *count)
{
    char tok[64];
    int32_t stack[64];
    int depth = 0, end_site = 0;
    *count = 0;
    int32_t current = -1;
    while (next_token(p, tok, sizeof tok) != NULL) {
        if (strcmp(tok, "MOTION") == 0) {
            return *count > 0 && depth == 0;
        }
        if (strcmp(tok, "ROOT") == 0 || strcmp(tok, "JOINT") == 0) {
            if (*count == 256 || next_token(p, tok, sizeof tok) == NULL) {
                return false;
            }
            bvh_joint *j = &js[*count];
            memset(j, 0, sizeof *j);
            snprintf(j->name, sizeof j->name, "%s", tok);
            j->parent = current;
            current = (int32_t)(*count)++;
        } else if (strcmp(tok, "End") == 0) {
            next_token(p, tok, sizeof tok); /* "Site" */
            end_site = 1;
        } else if (strcmp(tok, "{") == 0) {
            if (depth == 64) {
                return false;
            }
            stack[depth++] = end_site ? -2 : current;
            end_site = 0;
        } else if (strcmp(tok, "}") == 0) {
            if (depth == 0) {
                return false;
            }
            int32_t closed = stack[--depth];
            if (closed >= 0) {
                current = js[closed].parent;
            }
        } else if (strcmp(tok, "OFFSET") == 0) {
            double o[3];
            for (int k = 0; k < 3; ++k) {
                if (next_token(p, tok, sizeof tok) == NULL) {
                    return false;
                }
                o[k] = strtod(tok, NULL);
            }
            if (depth > 0 && stack[depth - 1] >= 0) {
                memcpy(js[stack[depth - 1]].offset, o, sizeof o);
            }
        } else if (strcmp(tok, "CHANNELS") == 0) {
            if (next_token(p, tok, sizeof tok) == NULL || current < 0) {
                return false;
            }
            int n = atoi(tok);
            if (n < 0 || n > 6) {
                return false;
            }
            js[current].channels = n;
            for (int k = 0; k < n; ++k) {
                if (next_token(p, tok, sizeof tok) == NULL ||
                    (js[current].order[k] = channel_code(tok)) < 0) {
                    return false;
                }
            }
        }
    }
    return false;
}

/* q = q * rotation about an axis (0 x, 1 y, 2 z) by deg degrees: BVH applies the channels in
 * file order, R = R_first R_second R_third. */
static void rotate_by(double q[4], int axis, double deg)
{
    double h = deg * 3.14159265358979323846 / 360.0, s = sin(h), c = cos(h);
    double r[4] = {0, 0, 0, c};
    r[axis] = s;
    double o[4] = {
        q[3] * r[0] + q[0] * r[3] + q[1] * r[2] - q[2] * r[1],
        q[3] * r[1] - q[0] * r[2] + q[1] * r[3] + q[2] * r[0],
        q[3] * r[2] + q[0] * r[1] - q[1] * r[0] + q[2] * r[3],
        q[3] * r[3] - q[0] * r[0] - q[1] * r[1] - q[2] * r[2],
    };
    memcpy(q, o, sizeof o);
}

cb_result cb_test_read_bvh(const char *path, double scale, size_t first_frame, cb_test_asset *out,
                           cb_error *err)
{
    memset(out, 0, sizeof *out);
    size_t size = 0;
    unsigned char *buf = read_file(path, &size);
    if (buf == NULL) {
        return cb_error_set(err, CB_ERR_IO, "cannot read %s", path);
    }
    const char *p = (const char *)buf;
    char tok[64];
    bvh_joint *js = calloc(256, sizeof *js);
    size_t n = 0;
    cb_result r = CB_OK;
    if (js == NULL || next_token(&p, tok, sizeof tok) == NULL || strcmp(tok, "HIERARCHY") != 0 ||
        !bvh_hierarchy(&p, js, &n)) {
        r = cb_error_set(err, CB_ERR_PARSE, "%s: bad HIERARCHY", path);
        goto done;
    }
    long frames = 0;
    double frame_time = 0.0;
    if (next_token(&p, tok, sizeof tok) == NULL || strcmp(tok, "Frames:") != 0 ||
        next_token(&p, tok, sizeof tok) == NULL || (frames = atol(tok)) < 2 ||
        next_token(&p, tok, sizeof tok) == NULL || next_token(&p, tok, sizeof tok) == NULL ||
        next_token(&p, tok, sizeof tok) == NULL || !((frame_time = strtod(tok, NULL)) > 0.0) ||
        (size_t)frames < first_frame + 2) {
        r = cb_error_set(err, CB_ERR_PARSE, "%s: bad MOTION header", path);
        goto done;
    }
    const char *names[256];
    int32_t parents[256];
    cb_xform rest[256];
    for (size_t j = 0; j < n; ++j) {
        names[j] = js[j].name;
        parents[j] = js[j].parent;
        rest[j] = cb_xform_identity();
        for (int k = 0; k < 3; ++k) {
            rest[j].translation[k] = (float)(js[j].offset[k] * scale);
        }
    }
    cb_skeleton_desc sd = {.joint_count = n, .names = names, .parents = parents, .rest_pose = rest};
    if ((r = cb_skeleton_create(&sd, &out->skeleton, err)) != CB_OK) {
        goto done;
    }
    cb_test_asset_clip *clip = &out->clips[0];
    snprintf(clip->name, sizeof clip->name, "walk");
    clip->frame_count = (size_t)frames - first_frame;
    clip->rate_hz = 1.0 / frame_time;
    clip->frames = malloc(clip->frame_count * n * sizeof(cb_xform));
    if (clip->frames == NULL) {
        r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "frames");
        goto done;
    }
    out->clip_count = 1;
    for (size_t f = 0; f < (size_t)frames; ++f) {
        for (size_t j = 0; j < n; ++j) {
            double q[4] = {0, 0, 0, 1}, t[3] = {js[j].offset[0], js[j].offset[1], js[j].offset[2]};
            for (int k = 0; k < js[j].channels; ++k) {
                if (next_token(&p, tok, sizeof tok) == NULL) {
                    r = cb_error_set(err, CB_ERR_PARSE, "%s: frame %zu is short", path, f);
                    goto done;
                }
                double v = strtod(tok, NULL);
                int code = js[j].order[k];
                if (code < 3) {
                    t[code] = v;
                } else {
                    rotate_by(q, code - 3, v);
                }
            }
            if (f < first_frame) {
                continue;
            }
            cb_xform *x = &clip->frames[(f - first_frame) * n + j];
            *x = cb_xform_identity();
            for (int k = 0; k < 3; ++k) {
                x->translation[k] = (float)(t[k] * scale);
            }
            for (int k = 0; k < 4; ++k) {
                x->rotation[k] = (float)q[k];
            }
        }
    }
done:
    if (r != CB_OK) {
        cb_test_asset_free(out);
    }
    free(js);
    free(buf);
    return r;
}

void cb_test_asset_free(cb_test_asset *a)
{
    for (size_t i = 0; i < CB_TEST_ASSET_MAX_CLIPS; ++i) {
        free(a->clips[i].frames);
    }
    cb_skeleton_destroy(a->skeleton);
    memset(a, 0, sizeof *a);
}

cb_xform *cb_test_clip_frames(const cb_clip *clip, size_t *frame_count)
{
    const struct cb_clip *c = clip;
    if (c->frames == NULL) {
        return NULL; /* a compressed clip: read its frames with cb_clip_read_frames */
    }
    const size_t n = c->joint_count, frames = (size_t)c->intervals + 1, w = CB_SIMD_WIDTH;
    cb_xform *out = malloc(frames * n * sizeof *out);
    for (size_t f = 0; out != NULL && f < frames; ++f) {
        for (size_t j = 0; j < n; ++j) {
            const float *g = cb_clip_group_ptr(c, (uint32_t)f, j / w);
            size_t l = j % w;
            cb_xform *x = &out[f * n + j];
            *x = cb_xform_identity();
            for (int k = 0; k < 3; ++k) {
                x->translation[k] = g[(CB_CLIP_T + k) * w + l];
                if (c->has_scale) {
                    x->scale[k] = 1.0f + g[(CB_CLIP_S + k) * w + l];
                }
            }
            for (int k = 0; k < 4; ++k) {
                x->rotation[k] = g[(CB_CLIP_Q + k) * w + l];
            }
        }
    }
    *frame_count = frames;
    return out;
}
