/* What assimp 5.2 drops from glTF animations: each sampler's interpolation (it hands every key
 * over as if LINEAR) and the tangents of CUBICSPLINE samplers (it keeps only the values). This
 * reads the document's JSON (and, for cubic samplers, the output accessors) to put both back, so
 * the source is evaluated as the glTF specification says (section 3.11, and Appendix C for the
 * cubic spline). Buffers: a .glb's BIN chunk, files next to a .gltf, or base64 data: URIs. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import/import_impl.h"

typedef struct gltf_file {
    json_t *root;
    unsigned char *bin; /* the GLB BIN chunk, or NULL */
    size_t bin_size;
    char dir[1024]; /* the document's folder, for external buffers */
} gltf_file;

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    unsigned char *data = NULL;
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc((size_t)len + 1);
        if (data != NULL && fread(data, 1, (size_t)len, f) != (size_t)len) {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    *size = data != NULL ? (size_t)len : 0;
    return data;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static cb_result open_gltf(const char *path, gltf_file *g, cb_error *err)
{
    memset(g, 0, sizeof *g);
    size_t size = 0;
    unsigned char *data = read_all(path, &size);
    if (data == NULL) {
        return cb_error_set(err, CB_ERR_IO, "import: %s: cannot read", path);
    }
    const char *json = (const char *)data;
    size_t json_len = size;
    if (size >= 12 && memcmp(data, "glTF", 4) == 0) {
        /* GLB: header (12 bytes), then chunks of length u32, type u32, data. */
        size_t at = 12;
        json = NULL;
        while (at + 8 <= size) {
            size_t len = le32(data + at), type = le32(data + at + 4);
            if (len > size - at - 8) {
                break;
            }
            if (type == 0x4E4F534Au && json == NULL) { /* "JSON" */
                json = (const char *)data + at + 8;
                json_len = len;
            } else if (type == 0x004E4942u && g->bin == NULL) { /* "BIN\0" */
                g->bin = malloc(len ? len : 1);
                if (g->bin != NULL) {
                    memcpy(g->bin, data + at + 8, len);
                    g->bin_size = len;
                }
            }
            at += 8 + (len + 3) / 4 * 4;
        }
    }
    json_error_t jerr;
    g->root = json != NULL ? json_loadb(json, json_len, 0, &jerr) : NULL;
    free(data);
    if (g->root == NULL) {
        free(g->bin);
        return cb_error_set(err, CB_ERR_PARSE, "import: %s: the glTF JSON does not parse", path);
    }
    const char *slash = strrchr(path, '/');
    size_t dlen = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    if (dlen < sizeof g->dir) {
        memcpy(g->dir, path, dlen);
        g->dir[dlen] = '\0';
    }
    return CB_OK;
}

static void close_gltf(gltf_file *g)
{
    json_decref(g->root);
    free(g->bin);
}

static int b64_value(unsigned char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+'             ? 62
           : c == '/'             ? 63
                                  : -1;
}

static unsigned char *b64_decode(const char *s, size_t *size)
{
    size_t len = strlen(s), o = 0;
    unsigned char *out = malloc(len / 4 * 3 + 3);
    if (out == NULL) {
        return NULL;
    }
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; ++i) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) {
            continue; /* padding '=' and line breaks */
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    *size = o;
    return out;
}

/* Buffer `index`'s bytes (caller frees when *owned). */
static const unsigned char *buffer_bytes(const gltf_file *g, size_t index, size_t *size,
                                         unsigned char **owned)
{
    *owned = NULL;
    json_t *b = json_array_get(json_object_get(g->root, "buffers"), index);
    const char *uri = json_string_value(json_object_get(b, "uri"));
    if (b == NULL) {
        return NULL;
    }
    if (uri == NULL) {
        *size = g->bin_size;
        return g->bin;
    }
    if (strncmp(uri, "data:", 5) == 0) {
        const char *comma = strchr(uri, ',');
        *owned = comma != NULL ? b64_decode(comma + 1, size) : NULL;
        return *owned;
    }
    char path[2048];
    snprintf(path, sizeof path, "%s%s", g->dir, uri);
    *owned = read_all(path, size);
    return *owned;
}

/* Reads `count` elements of `width` components of accessor `index` as doubles (float or
 * normalized integer components, as glTF allows for animation outputs). */
static bool read_accessor(const gltf_file *g, size_t index, size_t count, int width, double *out)
{
    json_t *acc = json_array_get(json_object_get(g->root, "accessors"), index);
    json_t *view = json_array_get(json_object_get(g->root, "bufferViews"),
                                  (size_t)json_integer_value(json_object_get(acc, "bufferView")));
    if (acc == NULL || view == NULL || json_object_get(acc, "sparse") != NULL ||
        (size_t)json_integer_value(json_object_get(acc, "count")) != count) {
        return false;
    }
    int type = (int)json_integer_value(json_object_get(acc, "componentType"));
    size_t csize = type == 5126 ? 4 : type == 5122 || type == 5123 ? 2 : 1;
    bool normalized = json_is_true(json_object_get(acc, "normalized"));
    if (type != 5126 && !normalized) {
        return false;
    }
    size_t bsize = 0;
    unsigned char *owned = NULL;
    const unsigned char *bytes = buffer_bytes(
        g, (size_t)json_integer_value(json_object_get(view, "buffer")), &bsize, &owned);
    size_t offset = (size_t)json_integer_value(json_object_get(view, "byteOffset")) +
                    (size_t)json_integer_value(json_object_get(acc, "byteOffset"));
    size_t stride = (size_t)json_integer_value(json_object_get(view, "byteStride"));
    stride = stride ? stride : csize * (size_t)width;
    bool ok = bytes != NULL && count > 0 && offset <= bsize &&
              (count - 1) <= (bsize - offset) / stride &&
              (count - 1) * stride + csize * (size_t)width <= bsize - offset;
    for (size_t i = 0; ok && i < count; ++i) {
        for (int c = 0; c < width; ++c) {
            const unsigned char *p = bytes + offset + i * stride + (size_t)c * csize;
            double v;
            if (type == 5126) {
                uint32_t u = le32(p);
                float f;
                memcpy(&f, &u, 4);
                v = f;
            } else if (type == 5120) {
                v = (double)(signed char)p[0] / 127.0;
                v = v < -1.0 ? -1.0 : v;
            } else if (type == 5121) {
                v = p[0] / 255.0;
            } else if (type == 5122) {
                v = (double)(int16_t)(p[0] | p[1] << 8) / 32767.0;
                v = v < -1.0 ? -1.0 : v;
            } else {
                v = (p[0] | p[1] << 8) / 65535.0;
            }
            out[i * (size_t)width + (size_t)c] = v;
        }
    }
    free(owned);
    return ok;
}

/* The name assimp gives a glTF node: its name, else "nodes[i]". */
static void node_name(json_t *nodes, size_t index, char *out, size_t size)
{
    const char *name = json_string_value(json_object_get(json_array_get(nodes, index), "name"));
    if (name != NULL && name[0] != '\0') {
        snprintf(out, size, "%s", name);
    } else {
        snprintf(out, size, "nodes[%zu]", index);
    }
}

/* Cubic: the output accessor holds in-tangent, value, out-tangent per key. */
static cb_result patch_cubic(const gltf_file *g, size_t output, imp_keys *k, const char *anim,
                             cb_error *err)
{
    size_t n = k->count, w = (size_t)k->width;
    double *all = malloc(n * 3 * w * sizeof(double));
    k->in = malloc(n * w * sizeof(double));
    k->out = malloc(n * w * sizeof(double));
    if (all == NULL || k->in == NULL || k->out == NULL) {
        free(all);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: tangents");
    }
    if (!read_accessor(g, output, n * 3, (int)w, all)) {
        free(all);
        return cb_error_set(err, CB_ERR_UNSUPPORTED,
                            "import: animation \"%s\": a CUBICSPLINE sampler's output accessor "
                            "%zu cannot be read (sparse, or not float / normalized)",
                            anim, output);
    }
    for (size_t i = 0; i < n; ++i) {
        memcpy(k->in + i * w, all + (i * 3) * w, w * sizeof(double));
        memcpy(k->values + i * w, all + (i * 3 + 1) * w, w * sizeof(double));
        memcpy(k->out + i * w, all + (i * 3 + 2) * w, w * sizeof(double));
    }
    free(all);
    k->interp = IMP_CUBIC;
    return CB_OK;
}

/* The scene's path index of a glTF target path: translation, rotation, scale; -1 for others. */
static int path_index(const char *path)
{
    return strcmp(path, "translation") == 0 ? 0
           : strcmp(path, "rotation") == 0  ? 1
           : strcmp(path, "scale") == 0     ? 2
                                            : -1;
}

/* The first channel of anim that moves the node named name on path p with keys, or NULL. */
static imp_channel *find_channel(const imp_scene *scene, imp_anim *anim, const char *name, int p)
{
    for (size_t c = 0; c < anim->channel_count; ++c) {
        imp_channel *ch = &anim->channels[c];
        if (ch->node < 0 || ch->path[p].count == 0) {
            continue;
        }
        /* The scene's node names are assimp's, which node_name reproduces. */
        if (strcmp(name, scene->nodes[ch->node].name) == 0) {
            return ch;
        }
    }
    return NULL;
}

/* The key times as the file has them: assimp passes them through float milliseconds, which
 * moves a key at 1.0416670 s to 1.0416699 s. Times that cannot be read, or are not increasing
 * from zero or later, leave assimp's. */
static void patch_times(const gltf_file *g, json_t *sampler, imp_keys *k)
{
    size_t input = (size_t)json_integer_value(json_object_get(sampler, "input"));
    double *times = malloc(k->count * sizeof *times);
    if (times != NULL && read_accessor(g, input, k->count, 1, times)) {
        bool increasing = true;
        for (size_t i = 1; i < k->count && increasing; ++i) {
            increasing = times[i] > times[i - 1];
        }
        if (increasing && times[0] >= 0.0) {
            memcpy(k->times, times, k->count * sizeof *times);
        }
    }
    free(times);
}

/* The sampler's interpolation onto k: LINEAR is what assimp gave, STEP is marked, CUBICSPLINE
 * brings its tangents; anything else is refused. */
static cb_result patch_interp(const gltf_file *g, json_t *sampler, const char *interp, imp_keys *k,
                              const char *anim, cb_error *err)
{
    if (strcmp(interp, "LINEAR") == 0) {
        return CB_OK;
    }
    if (strcmp(interp, "STEP") == 0) {
        k->interp = IMP_STEP;
        return CB_OK;
    }
    if (strcmp(interp, "CUBICSPLINE") == 0) {
        return patch_cubic(g, (size_t)json_integer_value(json_object_get(sampler, "output")), k,
                           anim, err);
    }
    return cb_error_set(err, CB_ERR_PARSE,
                        "import: animation \"%s\": interpolation \"%s\" is not LINEAR, STEP "
                        "or CUBICSPLINE",
                        anim, interp);
}

static cb_result patch_channel(const gltf_file *g, json_t *channel, json_t *samplers, json_t *nodes,
                               const imp_scene *scene, imp_anim *anim, cb_error *err)
{
    json_t *target = json_object_get(channel, "target");
    const char *path = json_string_value(json_object_get(target, "path"));
    json_t *sampler =
        json_array_get(samplers, (size_t)json_integer_value(json_object_get(channel, "sampler")));
    const char *interp = json_string_value(json_object_get(sampler, "interpolation"));
    if (path == NULL || sampler == NULL) {
        return CB_OK;
    }
    interp = interp != NULL ? interp : "LINEAR";
    int p = path_index(path);
    if (p < 0) {
        return CB_OK; /* morph weights: not part of a skeleton */
    }
    char name[CB_JOINT_NAME_MAX + 1];
    node_name(nodes, (size_t)json_integer_value(json_object_get(target, "node")), name,
              sizeof name);
    imp_channel *ch = find_channel(scene, anim, name, p);
    if (ch == NULL) {
        return CB_OK;
    }
    patch_times(g, sampler, &ch->path[p]);
    return patch_interp(g, sampler, interp, &ch->path[p], anim->name, err);
}

cb_result imp_gltf_patch_interpolation(const char *path, imp_scene *scene, cb_error *err)
{
    gltf_file g;
    cb_result r = open_gltf(path, &g, err);
    if (r != CB_OK) {
        return r;
    }
    json_t *anims = json_object_get(g.root, "animations"),
           *nodes = json_object_get(g.root, "nodes");
    for (size_t a = 0; a < scene->anim_count && a < json_array_size(anims) && r == CB_OK; ++a) {
        json_t *an = json_array_get(anims, a);
        json_t *channels = json_object_get(an, "channels"),
               *samplers = json_object_get(an, "samplers");
        for (size_t c = 0; c < json_array_size(channels) && r == CB_OK; ++c) {
            r = patch_channel(&g, json_array_get(channels, c), samplers, nodes, scene,
                              &scene->anims[a], err);
        }
    }
    close_gltf(&g);
    return r;
}

cb_result imp_gltf_precheck(const char *path, cb_error *err)
{
    gltf_file g;
    cb_result r = open_gltf(path, &g, err);
    if (r != CB_OK) {
        /* assimp reports unreadable documents itself, with its own words. */
        return CB_OK;
    }
    json_t *skins = json_object_get(g.root, "skins");
    for (size_t i = 0; i < json_array_size(skins) && r == CB_OK; ++i) {
        if (!json_is_integer(json_object_get(json_array_get(skins, i), "inverseBindMatrices"))) {
            r = cb_error_set(err, CB_ERR_UNSUPPORTED,
                             "import: %s: skins[%zu] has no inverseBindMatrices accessor; the "
                             "specification allows that (identity matrices), but assimp 5.2 "
                             "crashes reading such a file (docs/reliability.md)",
                             path, i);
        }
    }
    close_gltf(&g);
    return r;
}
