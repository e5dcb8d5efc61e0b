/* glTF 2.0 export of an animated crowd (gltf.h). The JSON is written by hand: it is a fixed
 * shape of arrays and numbers, and the animation data goes to one binary buffer. */
#include "export/gltf.h"

#include "base/base_impl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per agent, in the buffer: frame times, then per node (the agent's, then each joint's) its
 * translations (3 floats per frame) and rotations (4 per frame); the STEP scale track (up to 3
 * keys) lives in a small buffer region of its own after everything else. */
struct cb_gltf {
    cb_gltf_desc d;
    size_t joints;
    const int32_t *parents;
    int64_t *ids;
    uint32_t *frames, *first;
    size_t *offset; /* per agent, in floats */
    float *data;
    size_t floats;
};

static size_t agent_floats(size_t frames, size_t joints)
{
    return frames * (1 + (1 + joints) * 7);
}

cb_result cb_gltf_create(const cb_gltf_desc *d, cb_gltf **out, cb_error *err)
{
    size_t joints = cb_skeleton_joint_count(d->skeleton);
    double bytes = 0.0;
    for (uint32_t a = 0; a < d->agent_count; ++a) {
        bytes += (double)agent_floats(d->frames[a], joints) * sizeof(float) + 6 * sizeof(float) +
                 9 * sizeof(float);
    }
    if (bytes > (double)CB_GLTF_MAX_BYTES) {
        return cb_error_set(
            err, CB_ERR_TOO_MANY,
            "--out: %.0f MiB of animation data is beyond the %zu MiB limit; export fewer "
            "frames (--out-rate, --seconds)",
            bytes / 1048576.0, CB_GLTF_MAX_BYTES >> 20);
    }
    cb_gltf *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "--out: out of memory");
    }
    g->d = *d;
    g->joints = joints;
    g->parents = cb_skeleton_parents(d->skeleton);
    size_t n = d->agent_count ? d->agent_count : 1;
    g->ids = malloc(n * sizeof *g->ids);
    g->frames = malloc(n * sizeof *g->frames);
    g->first = malloc(n * sizeof *g->first);
    g->offset = malloc(n * sizeof *g->offset);
    if (g->ids == NULL || g->frames == NULL || g->first == NULL || g->offset == NULL) {
        cb_gltf_destroy(g);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "--out: out of memory");
    }
    size_t floats = 0;
    for (uint32_t a = 0; a < d->agent_count; ++a) {
        g->ids[a] = d->agent_ids[a];
        g->frames[a] = d->frames[a];
        g->first[a] = d->first_frame[a];
        g->offset[a] = floats;
        floats += agent_floats(d->frames[a], joints);
    }
    g->d.agent_ids = g->ids;
    g->d.frames = g->frames;
    g->d.first_frame = g->first;
    g->floats = floats;
    g->data = calloc(floats ? floats : 1, sizeof(float));
    if (g->data == NULL) {
        cb_gltf_destroy(g);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "--out: out of memory for %.0f MiB",
                            bytes / 1048576.0);
    }
    for (uint32_t a = 0; a < d->agent_count; ++a) {
        for (uint32_t k = 0; k < d->frames[a]; ++k) {
            g->data[g->offset[a] + k] = (float)((double)(d->first_frame[a] + k) * d->dt_s);
        }
    }
    *out = g;
    return 0;
}

void cb_gltf_destroy(cb_gltf *g)
{
    if (g == NULL) {
        return;
    }
    free(g->ids);
    free(g->frames);
    free(g->first);
    free(g->offset);
    free(g->data);
    free(g);
}

/* Where node `node` (0: the agent, 1 + j: joint j) keeps its translations and rotations. */
static float *track(const cb_gltf *g, uint32_t agent, size_t node, bool rotation)
{
    size_t f = g->frames[agent];
    return g->data + g->offset[agent] + f + node * 7 * f + (rotation ? 3 * f : 0);
}

/* The rotation part of a column-major mat4 with its columns normalized (no scale). */
static void rotation_of(const float *m, double r[3][3])
{
    for (int c = 0; c < 3; ++c) {
        double len = sqrt((double)m[4 * c] * m[4 * c] + (double)m[4 * c + 1] * m[4 * c + 1] +
                          (double)m[4 * c + 2] * m[4 * c + 2]);
        for (int k = 0; k < 3; ++k) {
            r[k][c] = len > 0.0 ? m[4 * c + k] / len : (k == c);
        }
    }
}

/* A unit quaternion (x, y, z, w) from a rotation matrix r[row][col] (Shepperd's method: the
 * largest of the four squared components is taken from the diagonal, the others from it). */
static void quat_of(double r[3][3], double q[4])
{
    double tr = r[0][0] + r[1][1] + r[2][2];
    if (tr > 0.0) {
        double s = 2.0 * sqrt(1.0 + tr);
        q[3] = 0.25 * s;
        q[0] = (r[2][1] - r[1][2]) / s;
        q[1] = (r[0][2] - r[2][0]) / s;
        q[2] = (r[1][0] - r[0][1]) / s;
    } else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
        double s = 2.0 * sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]);
        q[3] = (r[2][1] - r[1][2]) / s;
        q[0] = 0.25 * s;
        q[1] = (r[0][1] + r[1][0]) / s;
        q[2] = (r[0][2] + r[2][0]) / s;
    } else if (r[1][1] > r[2][2]) {
        double s = 2.0 * sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]);
        q[3] = (r[0][2] - r[2][0]) / s;
        q[0] = (r[0][1] + r[1][0]) / s;
        q[1] = 0.25 * s;
        q[2] = (r[1][2] + r[2][1]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]);
        q[3] = (r[1][0] - r[0][1]) / s;
        q[0] = (r[0][2] + r[2][0]) / s;
        q[1] = (r[1][2] + r[2][1]) / s;
        q[2] = 0.25 * s;
    }
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; ++k) {
        q[k] /= len;
    }
}

/* Stores a rotation, flipped into the hemisphere of the previous frame's so that
 * interpolation between keys takes the short way. */
static void put_rotation(float *rot, uint32_t frame, const double q[4])
{
    double sign = 1.0;
    if (frame > 0) {
        const float *p = rot + 4 * (frame - 1);
        sign = p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3] < 0.0 ? -1.0 : 1.0;
    }
    for (int k = 0; k < 4; ++k) {
        rot[4 * frame + k] = (float)(sign * q[k]);
    }
}

void cb_gltf_record(cb_gltf *g, uint32_t agent, uint32_t frame, const float root_position[3],
                    const float root_rotation[4], const float *model)
{
    if (agent >= g->d.agent_count || frame >= g->frames[agent]) {
        return;
    }
    memcpy(track(g, agent, 0, false) + 3 * frame, root_position, 3 * sizeof(float));
    double rq[4] = {root_rotation[0], root_rotation[1], root_rotation[2], root_rotation[3]};
    put_rotation(track(g, agent, 0, true), frame, rq);
    for (size_t j = 0; j < g->joints; ++j) {
        /* local = parent^-1 * model: with rigid matrices, R_p^T R and R_p^T (t - t_p). */
        double r[3][3], t[3], local_r[3][3], local_t[3], q[4];
        const float *m = model + 16 * j;
        rotation_of(m, r);
        for (int k = 0; k < 3; ++k) {
            t[k] = m[12 + k];
        }
        int32_t parent = g->parents[j];
        if (parent < 0) {
            memcpy(local_r, r, sizeof r);
            memcpy(local_t, t, sizeof t);
        } else {
            double pr[3][3];
            const float *pm = model + 16 * (size_t)parent;
            rotation_of(pm, pr);
            for (int a = 0; a < 3; ++a) {
                local_t[a] = 0.0;
                for (int b = 0; b < 3; ++b) {
                    local_t[a] += pr[b][a] * (t[b] - pm[12 + b]);
                    local_r[a][b] = pr[0][a] * r[0][b] + pr[1][a] * r[1][b] + pr[2][a] * r[2][b];
                }
            }
        }
        quat_of(local_r, q);
        float *tr = track(g, agent, 1 + j, false) + 3 * frame;
        for (int k = 0; k < 3; ++k) {
            tr[k] = (float)local_t[k];
        }
        put_rotation(track(g, agent, 1 + j, true), frame, q);
    }
}

/* ---- writing ------------------------------------------------------------------------------ */

typedef struct text {
    char *s;
    size_t n, cap;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...)
{
    if (t->failed) {
        return;
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = (t->cap + (size_t)k + 1) * 2;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

/* The scale keys of an agent: hidden before its first frame and after its last. */
static int visibility_keys(const cb_gltf *g, uint32_t a, float times[3], float scales[3])
{
    int n = 0;
    double dt = g->d.dt_s;
    if (g->first[a] > 0) {
        times[n] = 0.0f;
        scales[n++] = 0.0f;
    }
    times[n] = (float)(g->first[a] * dt);
    scales[n++] = 1.0f;
    uint32_t end = g->first[a] + g->frames[a];
    if (end < g->d.total_frames) {
        times[n] = (float)(end * dt);
        scales[n++] = 0.0f;
    }
    return n;
}

/* A JSON string: a pack's joint names may hold quotes, backslashes or control bytes (UTF-8
 * bytes pass through as they are). */
static void put_string(text *j, const char *s)
{
    put(j, "\"");
    for (; *s != '\0'; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put(j, "\\%c", c);
        } else if (c < 0x20) {
            put(j, "\\u%04x", c);
        } else {
            put(j, "%c", c);
        }
    }
    put(j, "\"");
}

static void accessor(text *j, bool *first, size_t offset_floats, size_t count, const char *type,
                     const float *min, const float *max)
{
    put(j,
        "%s{\"bufferView\":0,\"byteOffset\":%zu,\"componentType\":5126,\"count\":%zu,"
        "\"type\":\"%s\"",
        *first ? "" : ",", offset_floats * sizeof(float), count, type);
    if (min != NULL) {
        put(j, ",\"min\":[%.9g],\"max\":[%.9g]", (double)*min, (double)*max);
    }
    put(j, "}");
    *first = false;
}

/* The scale tracks' data, appended after the recorded floats: per agent 3 times and 3 vec3. */
static float *scale_data(const cb_gltf *g, size_t *count)
{
    *count = (size_t)g->d.agent_count * 12;
    float *s = calloc(*count ? *count : 1, sizeof(float));
    for (uint32_t a = 0; s != NULL && a < g->d.agent_count; ++a) {
        float times[3], scales[3];
        int n = visibility_keys(g, a, times, scales);
        for (int k = 0; k < n; ++k) {
            s[12 * a + k] = times[k];
            for (int c = 0; c < 3; ++c) {
                s[12 * a + 3 + 3 * k + c] = scales[k];
            }
        }
    }
    return s;
}

static void write_nodes(const cb_gltf *g, text *j)
{
    size_t per = 1 + g->joints;
    put(j, "\"scene\":0,\"scenes\":[{\"nodes\":[");
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        put(j, "%s%zu", a ? "," : "", a * per);
    }
    put(j, "]}],\"nodes\":[");
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        for (size_t node = 0; node < per; ++node) {
            const float *t = track(g, a, node, false), *r = track(g, a, node, true);
            if (node == 0) {
                put(j, "%s{\"name\":\"agent %lld\"", a ? "," : "", (long long)g->ids[a]);
            } else {
                put(j, ",{\"name\":");
                put_string(j, cb_skeleton_joint_name(g->d.skeleton, node - 1));
            }
            put(j, ",\"translation\":[%.9g,%.9g,%.9g],\"rotation\":[%.9g,%.9g,%.9g,%.9g]",
                (double)t[0], (double)t[1], (double)t[2], (double)r[0], (double)r[1], (double)r[2],
                (double)r[3]);
            bool any = false;
            for (size_t c = 0; c < g->joints; ++c) {
                if (g->parents[c] == (int32_t)node - 1) {
                    put(j, "%s%zu", any ? "," : ",\"children\":[", a * per + 1 + c);
                    any = true;
                }
            }
            put(j, any ? "]}" : "}");
        }
    }
    put(j, "]");
}

/* Accessors (3 per node track pair + time, per agent; then the scale tracks) and the one
 * animation. */
static void write_animation(const cb_gltf *g, text *j, size_t scale_offset)
{
    size_t per = 1 + g->joints;
    put(j, ",\"accessors\":[");
    bool first = true;
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        size_t f = g->frames[a];
        const float *times = g->data + g->offset[a];
        accessor(j, &first, g->offset[a], f, "SCALAR", &times[0], &times[f - 1]);
        for (size_t node = 0; node < per; ++node) {
            accessor(j, &first, (size_t)(track(g, a, node, false) - g->data), f, "VEC3", NULL,
                     NULL);
            accessor(j, &first, (size_t)(track(g, a, node, true) - g->data), f, "VEC4", NULL, NULL);
        }
    }
    size_t base = (size_t)g->d.agent_count * (1 + 2 * per);
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        float times[3], scales[3];
        int n = visibility_keys(g, a, times, scales);
        accessor(j, &first, scale_offset + 12 * a, (size_t)n, "SCALAR", &times[0], &times[n - 1]);
        accessor(j, &first, scale_offset + 12 * a + 3, (size_t)n, "VEC3", NULL, NULL);
    }
    put(j, "],\"animations\":[{\"name\":\"crowd\",\"samplers\":[");
    size_t samplers = 0;
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        size_t acc = (size_t)a * (1 + 2 * per);
        for (size_t k = 0; k < 2 * per; ++k) {
            put(j, "%s{\"input\":%zu,\"output\":%zu}", samplers++ ? "," : "", acc, acc + 1 + k);
        }
    }
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        put(j, ",{\"input\":%zu,\"output\":%zu,\"interpolation\":\"STEP\"}", base + 2 * a,
            base + 2 * a + 1);
    }
    put(j, "],\"channels\":[");
    size_t s = 0;
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        for (size_t node = 0; node < per; ++node, s += 2) {
            put(j,
                "%s{\"sampler\":%zu,\"target\":{\"node\":%zu,\"path\":\"translation\"}},"
                "{\"sampler\":%zu,\"target\":{\"node\":%zu,\"path\":\"rotation\"}}",
                s ? "," : "", s, a * per + node, s + 1, a * per + node);
        }
    }
    for (uint32_t a = 0; a < g->d.agent_count; ++a) {
        put(j, ",{\"sampler\":%zu,\"target\":{\"node\":%zu,\"path\":\"scale\"}}", s + a,
            (size_t)a * per);
    }
    put(j, "]}]");
}

static bool write_all(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n;
}

/* Does s end in suffix, letters in either case? */
static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n < k) {
        return false;
    }
    for (size_t i = 0; i < k; ++i) {
        if (tolower((unsigned char)s[n - k + i]) != tolower((unsigned char)suffix[i])) {
            return false;
        }
    }
    return true;
}

cb_gltf_file cb_gltf_file_of(const char *path)
{
    return ends_with(path, ".glb")    ? CB_GLTF_FILE_GLB
           : ends_with(path, ".gltf") ? CB_GLTF_FILE_GLTF
                                      : CB_GLTF_FILE_NONE;
}

enum { PATH_BYTES = 4096 };

/* The .bin beside a .gltf: the path with ".gltf" (if any) replaced, and its file name alone for
 * the buffer's uri. False when the path is too long. */
static bool bin_path_of(const char *path, char bin_path[PATH_BYTES], char bin_name[PATH_BYTES])
{
    size_t stem = strlen(path) - (ends_with(path, ".gltf") ? 5 : 0);
    if (stem + 5 > PATH_BYTES) {
        return false;
    }
    snprintf(bin_path, PATH_BYTES, "%.*s.bin", (int)stem, path);
    const char *slash = strrchr(bin_path, '/');
    snprintf(bin_name, PATH_BYTES, "%s", slash != NULL ? slash + 1 : bin_path);
    return true;
}

/* A file name as a URI path segment (RFC 3986, which glTF's uri is): unreserved bytes as they
 * are, every other byte percent-encoded, so that a name with a quote, a backslash, a space or a
 * '%' still makes valid JSON and a URI that names the file. */
static void put_uri_segment(text *j, const char *name)
{
    for (const unsigned char *c = (const unsigned char *)name; *c != '\0'; ++c) {
        bool unreserved = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                          (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_' ||
                          *c == '~';
        if (unreserved) {
            put(j, "%c", *c);
        } else {
            put(j, "%%%02X", *c);
        }
    }
}

/* The whole JSON document; in a .gltf the buffer names its .bin, in a GLB it is the binary
 * chunk. */
static void write_json(const cb_gltf *g, text *j, size_t bin_bytes, bool glb, const char *bin_name)
{
    put(j, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"crowdblend animate\"},");
    write_nodes(g, j);
    write_animation(g, j, g->floats);
    put(j, ",\"buffers\":[{\"byteLength\":%zu", bin_bytes);
    if (!glb) {
        put(j, ",\"uri\":\"");
        put_uri_segment(j, bin_name);
        put(j, "\"");
    }
    put(j, "}],\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":%zu}]}", bin_bytes);
    /* GLB chunks are 4-byte aligned: the JSON is padded with spaces. */
    while (glb && !j->failed && j->n % 4 != 0) {
        put(j, " ");
    }
}

/* The binary buffer: the recorded floats, then the scale tracks' data. */
static size_t buffer_bytes(const cb_gltf *g, size_t scale_count)
{
    return (g->floats + scale_count) * sizeof(float);
}

static bool write_buffer(FILE *f, const cb_gltf *g, const float *scales, size_t scale_count)
{
    return write_all(f, g->data, g->floats * sizeof(float)) &&
           write_all(f, scales, scale_count * sizeof(float));
}

/* A GLB: the header, the JSON chunk, then the binary buffer's chunk. */
static bool write_glb(FILE *f, const cb_gltf *g, const text *j, const float *scales,
                      size_t scale_count)
{
    size_t bin_bytes = buffer_bytes(g, scale_count);
    uint32_t header[3] = {0x46546C67u, 2u, (uint32_t)(12 + 8 + j->n + 8 + bin_bytes)};
    uint32_t json_chunk[2] = {(uint32_t)j->n, 0x4E4F534Au};
    uint32_t bin_chunk[2] = {(uint32_t)bin_bytes, 0x004E4942u};
    return write_all(f, header, sizeof header) && write_all(f, json_chunk, sizeof json_chunk) &&
           write_all(f, j->s, j->n) && write_all(f, bin_chunk, sizeof bin_chunk) &&
           write_buffer(f, g, scales, scale_count);
}

/* What a file of the export is written from. */
typedef struct write_ctx {
    const cb_gltf *g;
    const text *j;
    const float *scales;
    size_t scale_count;
} write_ctx;

static bool glb_body(FILE *f, const write_ctx *c)
{
    return write_glb(f, c->g, c->j, c->scales, c->scale_count);
}

static bool json_body(FILE *f, const write_ctx *c)
{
    return write_all(f, c->j->s, c->j->n);
}

static bool bin_body(FILE *f, const write_ctx *c)
{
    return write_buffer(f, c->g, c->scales, c->scale_count);
}

/* Writes one file with body: 0, or the errno of the step that failed (EIO where it set none).
 * *opened says whether the file was opened, and so holds what this call wrote. */
static int write_file(const char *path, bool (*body)(FILE *, const write_ctx *), const write_ctx *c,
                      bool *opened)
{
    errno = 0;
    FILE *f = fopen(path, "wb");
    *opened = f != NULL;
    if (f == NULL) {
        return errno != 0 ? errno : EIO;
    }
    errno = 0;
    int e = body(f, c) ? 0 : (errno != 0 ? errno : EIO);
    errno = 0;
    if (fclose(f) != 0 && e == 0) {
        e = errno != 0 ? errno : EIO;
    }
    return e;
}

/* The files of a .gltf (and its .bin) or a GLB; on a failure the files this call opened are
 * removed (no half-written export is left, and nothing it did not write), and err says which
 * file failed and why. */
static cb_result write_files(const char *path, bool glb, const char *bin_path, const write_ctx *c,
                             cb_error *err)
{
    bool opened = false, bin_opened = false;
    const char *failed = path;
    int e = write_file(path, glb ? glb_body : json_body, c, &opened);
    if (e == 0 && !glb) {
        failed = bin_path;
        e = write_file(bin_path, bin_body, c, &bin_opened);
    }
    if (e == 0) {
        return CB_OK;
    }
    if (bin_opened) {
        remove(bin_path);
    }
    if (opened) {
        remove(path);
    }
    return cb_error_set(err, CB_ERR_IO, "--out: cannot write '%s': %s", failed, strerror(e));
}

cb_result cb_gltf_write(const cb_gltf *g, const char *path, cb_error *err)
{
    const cb_gltf_file kind = cb_gltf_file_of(path);
    if (kind == CB_GLTF_FILE_NONE) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "--out: '%s' is neither a .gltf nor a .glb file", path);
    }
    const bool glb = kind == CB_GLTF_FILE_GLB;
    size_t scale_count;
    float *scales = scale_data(g, &scale_count);
    if (scales == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "--out: out of memory");
    }
    size_t bin_bytes = buffer_bytes(g, scale_count);
    char bin_path[PATH_BYTES], bin_name[PATH_BYTES];
    if (!bin_path_of(path, bin_path, bin_name)) {
        free(scales);
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "--out: path too long");
    }
    text j = {0};
    write_json(g, &j, bin_bytes, glb, bin_name);
    if (j.failed) {
        free(j.s);
        free(scales);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "--out: out of memory for the JSON");
    }
    const write_ctx c = {g, &j, scales, scale_count};
    cb_result r = write_files(path, glb, bin_path, &c, err);
    free(j.s);
    free(scales);
    return r;
}
