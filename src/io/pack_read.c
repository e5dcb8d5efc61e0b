/* Loading packs. The bytes are untrusted: every count, size and offset is checked against what is
 * left before it is used, sizes are computed only from counts already bounded (so no product can
 * overflow), and every value reaches the skeleton and clip constructors, whose own checks (and
 * messages) come on top. Errors name the source, the section and the field. On failure nothing
 * is kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_impl.h"
#include "compress/cclip_impl.h"
#include "io/pack_format.h"

struct cb_pack {
    cb_allocator allocator;
    cb_skeleton *skeleton;
    size_t joint_count;
    cb_xform *rest;       /* joint_count: the rest transforms as the file has them */
    float *inverse_binds; /* joint_count * 16, or NULL */
    cb_clip **clips;
    cb_cclip **compressed; /* per clip: the form it was stored in, or NULL (raw) */
    cb_pack_clip_info *infos;
    uint32_t clip_count;
    cb_pack_mask *masks; /* names and weights (soa joint count) owned */
    uint32_t mask_count;
    cb_pack_graph *graphs; /* names and texts (NUL-terminated) owned */
    uint32_t graph_count;
    size_t clip_cap, mask_cap, graph_cap; /* table sizes: the section counts */
};

/* ------------------------------------------------------------------------------------------ */
/* Errors and reading                                                                         */

typedef struct loader {
    const unsigned char *data;
    size_t size;
    const char *source;
    const cb_allocator *alloc;
    cb_error *err;
    bool raw_clips;           /* decode compressed clips at load (CB_PACK_CLIP_FORM_RAW) */
    uint32_t version;         /* the pack's format version */
    uint32_t section;         /* the section being read */
    uint32_t section_version; /* and its version */
    char where[96];           /* "section 2 (clip \"Walk\")": the part being read, for messages */
} loader;

static cb_result fail(loader *l, cb_result code, const char *fmt, ...) CB_PRINTF_LIKE(3, 4);
static cb_result fail(loader *l, cb_result code, const char *fmt, ...)
{
    char msg[CB_ERROR_MESSAGE_SIZE];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    return cb_error_set(l->err, code, "%s: %s%s%s", l->source, l->where,
                        l->where[0] != '\0' ? ": " : "", msg);
}

/* Passes a constructor's error on with the place in front. */
static cb_result pass_on(loader *l, cb_result code, const cb_error *inner)
{
    return fail(l, code, "%s", inner->message);
}

/* The bytes of one section, read front to back. */
typedef struct cursor {
    const unsigned char *p;
    size_t left;
} cursor;

static bool take(cursor *c, size_t n, const unsigned char **out)
{
    if (c->left < n) {
        return false;
    }
    *out = c->p;
    c->p += n;
    c->left -= n;
    return true;
}

static cb_result read_u32(loader *l, cursor *c, const char *field, uint32_t *v)
{
    const unsigned char *p;
    if (!take(c, 4, &p)) {
        return fail(l, CB_ERR_PARSE, "%s: the section ends before it", field);
    }
    *v = cb_le_u32(p);
    return CB_OK;
}

static cb_result read_f32(loader *l, cursor *c, const char *field, float *v)
{
    uint32_t u = 0;
    cb_result r = read_u32(l, c, field, &u);
    memcpy(v, &u, sizeof *v);
    if (r == CB_OK && !isfinite(*v)) {
        return fail(l, CB_ERR_NOT_FINITE, "%s is %g", field, (double)*v);
    }
    return r;
}

/* count floats into dst (decoded from little-endian); finite. */
static cb_result read_floats(loader *l, cursor *c, const char *field, float *dst, size_t count)
{
    const unsigned char *p;
    if (count > c->left / 4 || !take(c, count * 4, &p)) {
        return fail(l, CB_ERR_PARSE, "%s: %zu floats do not fit in the %zu bytes left", field,
                    count, c->left);
    }
    for (size_t i = 0; i < count; ++i) {
        dst[i] = cb_le_f32(p + i * 4);
        if (!isfinite(dst[i])) {
            return fail(l, CB_ERR_NOT_FINITE, "%s[%zu] is %g", field, i, (double)dst[i]);
        }
    }
    return CB_OK;
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (p[i] != 0) {
            return false;
        }
    }
    return true;
}

/* A stored name: u32 length (1..max), the bytes (no NUL among them), a NUL, zeros to a multiple
 * of 4. *out points into the data, where the name is NUL-terminated. */
static cb_result read_name(loader *l, cursor *c, const char *field, size_t max, const char **out)
{
    uint32_t len = 0;
    cb_result r = read_u32(l, c, field, &len);
    if (r != CB_OK) {
        return r;
    }
    if (len == 0 || len > max) {
        return fail(l, CB_ERR_PARSE, "%s: length %u is outside 1..%zu", field, len, max);
    }
    const unsigned char *p;
    size_t padded = cb_pack_name_bytes(len) - 4;
    if (!take(c, padded, &p)) {
        return fail(l, CB_ERR_PARSE, "%s: %u bytes run past the section's end", field, len);
    }
    if (memchr(p, '\0', len) != NULL || !all_zero(p + len, padded - len)) {
        return fail(l, CB_ERR_PARSE, "%s: a NUL inside the name, or padding that is not zero",
                    field);
    }
    *out = (const char *)p;
    return CB_OK;
}

static cb_result expect_end(loader *l, const cursor *c)
{
    if (c->left != 0) {
        return fail(l, CB_ERR_PARSE,
                    "%zu bytes are left after the last field (the section's size "
                    "does not match its counts)",
                    c->left);
    }
    return CB_OK;
}

static void *pack_alloc(loader *l, size_t bytes)
{
    return bytes == 0 ? NULL : cb_alloc(l->alloc, bytes, 16);
}

/* ------------------------------------------------------------------------------------------ */
/* The pack object                                                                            */

static void pack_free(cb_pack *p)
{
    if (p == NULL) {
        return;
    }
    const cb_allocator *a = &p->allocator;
    for (size_t i = 0; i < p->clip_count; ++i) {
        cb_clip_destroy(p->clips[i]);
        cb_cclip_destroy(p->compressed[i]);
    }
    cb_free(a, p->clips, p->clip_cap * sizeof *p->clips);
    cb_free(a, p->compressed, p->clip_cap * sizeof *p->compressed);
    cb_free(a, p->infos, p->clip_cap * sizeof *p->infos);
    size_t soa = p->skeleton != NULL ? cb_skeleton_soa_joint_count(p->skeleton) : 0;
    for (size_t i = 0; i < p->mask_count; ++i) {
        cb_free(a, (void *)p->masks[i].name, strlen(p->masks[i].name) + 1);
        cb_free(a, (void *)p->masks[i].weights.ptr, soa * sizeof(float));
    }
    cb_free(a, p->masks, p->mask_cap * sizeof *p->masks);
    for (size_t i = 0; i < p->graph_count; ++i) {
        cb_free(a, (void *)p->graphs[i].name, strlen(p->graphs[i].name) + 1);
        cb_free(a, (void *)p->graphs[i].text, p->graphs[i].length + 1);
    }
    cb_free(a, p->graphs, p->graph_cap * sizeof *p->graphs);
    cb_free(a, p->rest, p->joint_count * sizeof(cb_xform));
    cb_free(a, p->inverse_binds, p->joint_count * 16 * sizeof(float));
    cb_skeleton_destroy(p->skeleton);
    cb_allocator copy = *a;
    cb_free(&copy, p, sizeof *p);
}

void cb_pack_destroy(cb_pack *pack)
{
    pack_free(pack);
}

/* A copy of a name (for the pack to own). */
static char *copy_name(loader *l, const char *name)
{
    size_t len = strlen(name) + 1;
    char *s = pack_alloc(l, len);
    if (s != NULL) {
        memcpy(s, name, len);
    }
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* Sections                                                                                   */

static cb_result read_names(loader *l, cursor *c, size_t n, const char **names)
{
    uint32_t bytes = 0;
    cb_result r = read_u32(l, c, "names_bytes", &bytes);
    if (r != CB_OK) {
        return r;
    }
    const unsigned char *p;
    size_t padded = ((size_t)bytes + 3) / 4 * 4;
    if (bytes < 2 * n || !take(c, padded, &p)) {
        return fail(l, CB_ERR_PARSE, "names_bytes %u does not fit %zu names in the section", bytes,
                    n);
    }
    size_t at = 0;
    for (size_t j = 0; j < n; ++j) {
        const unsigned char *end = memchr(p + at, '\0', bytes - at);
        size_t len = end != NULL ? (size_t)(end - (p + at)) : 0;
        if (end == NULL || len == 0 || len > CB_JOINT_NAME_MAX) {
            return fail(l, CB_ERR_PARSE, "names[%zu]: not a NUL-terminated name of 1..%d bytes", j,
                        CB_JOINT_NAME_MAX);
        }
        names[j] = (const char *)(p + at);
        at += len + 1;
    }
    if (at != bytes || !all_zero(p + bytes, padded - bytes)) {
        return fail(l, CB_ERR_PARSE,
                    "names: %u bytes hold %zu names in %zu bytes, or the padding is not zero",
                    bytes, n, at);
    }
    return CB_OK;
}

static cb_result read_rest(loader *l, cursor *c, size_t n, cb_xform *rest)
{
    float v[CB_PACK_REST_FLOATS] = {0};
    for (size_t j = 0; j < n; ++j) {
        char field[32];
        snprintf(field, sizeof field, "rest[%zu]", j);
        cb_result r = read_floats(l, c, field, v, CB_PACK_REST_FLOATS);
        if (r != CB_OK) {
            return r;
        }
        rest[j] = (cb_xform){{v[3], v[4], v[5], v[6]}, {v[0], v[1], v[2]}, {v[7], v[8], v[9]}};
        double len = sqrt((double)v[3] * v[3] + (double)v[4] * v[4] + (double)v[5] * v[5] +
                          (double)v[6] * v[6]);
        if (!(fabs(len - 1.0) <= CB_CLIP_FRAMES_UNIT_TOLERANCE)) {
            return fail(l, CB_ERR_PARSE, "rest[%zu].rotation has length %g, not 1", j, len);
        }
    }
    return CB_OK;
}

static cb_result read_inverse_binds(loader *l, cursor *c, size_t n, float *ibm)
{
    cb_result r = read_floats(l, c, "inverse_binds", ibm, n * 16);
    for (size_t j = 0; j < n && r == CB_OK; ++j) {
        const float *m = ibm + j * 16;
        /* Column-major: the bottom row is floats 3, 7, 11, 15. */
        if (fabsf(m[3]) > 1e-6f || fabsf(m[7]) > 1e-6f || fabsf(m[11]) > 1e-6f ||
            fabsf(m[15] - 1.0f) > 1e-6f) {
            r = fail(l, CB_ERR_PARSE, "inverse_binds[%zu] is not affine (bottom row %g %g %g %g)",
                     j, (double)m[3], (double)m[7], (double)m[11], (double)m[15]);
        }
    }
    return r;
}

static cb_result read_skeleton(loader *l, cursor *c, cb_pack *p)
{
    uint32_t n = 0, flags = 0;
    cb_result r = read_u32(l, c, "joint_count", &n);
    if (r == CB_OK && (n == 0 || n > CB_SKELETON_MAX_JOINTS)) {
        r = fail(l, CB_ERR_PARSE, "joint_count %u is outside 1..%d", n, CB_SKELETON_MAX_JOINTS);
    }
    if (r == CB_OK) {
        r = read_u32(l, c, "flags", &flags);
    }
    if (r == CB_OK && (flags & ~(uint32_t)CB_PACK_SKEL_INVERSE_BINDS) != 0) {
        r = fail(l, CB_ERR_PARSE, "flags 0x%x has unknown bits", flags);
    }
    if (r != CB_OK) {
        return r;
    }
    const char **names = pack_alloc(l, n * sizeof *names);
    int32_t *parents = pack_alloc(l, n * sizeof *parents);
    p->rest = pack_alloc(l, n * sizeof(cb_xform));
    p->joint_count = n;
    if (flags & CB_PACK_SKEL_INVERSE_BINDS) {
        p->inverse_binds = pack_alloc(l, (size_t)n * 16 * sizeof(float));
    }
    if (names == NULL || parents == NULL || p->rest == NULL ||
        ((flags & CB_PACK_SKEL_INVERSE_BINDS) && p->inverse_binds == NULL)) {
        r = fail(l, CB_ERR_OUT_OF_MEMORY, "%u joints", n);
    }
    if (r == CB_OK) {
        r = read_names(l, c, n, names);
    }
    for (size_t j = 0; j < n && r == CB_OK; ++j) {
        uint32_t u = 0;
        r = read_u32(l, c, "parents", &u);
        parents[j] = (int32_t)u;
    }
    if (r == CB_OK) {
        r = read_rest(l, c, n, p->rest);
    }
    if (r == CB_OK && p->inverse_binds != NULL) {
        r = read_inverse_binds(l, c, n, p->inverse_binds);
    }
    if (r == CB_OK) {
        r = expect_end(l, c);
    }
    if (r == CB_OK) {
        cb_skeleton_desc sd = {.joint_count = n,
                               .names = names,
                               .parents = parents,
                               .rest_pose = p->rest,
                               .allocator = *l->alloc};
        cb_error inner = {0};
        cb_result cr = cb_skeleton_create(&sd, &p->skeleton, &inner);
        if (cr != CB_OK) {
            r = pass_on(l, cr, &inner);
        }
    }
    cb_free(l->alloc, names, n * sizeof *names);
    cb_free(l->alloc, parents, n * sizeof *parents);
    return r;
}

/* The fixed fields of a clip section, after its name. */
typedef struct clip_head {
    const char *name;
    float duration;
    uint32_t frames, joints, flags, encoding, root_mode, root_joint, marker_count;
    float origin[4];
    cb_pack_clip_info info;
} clip_head;

static cb_result read_clip_head(loader *l, cursor *c, size_t n, clip_head *h)
{
    cb_result r = read_name(l, c, "name", CB_JOINT_NAME_MAX, &h->name);
    if (r == CB_OK) {
        snprintf(l->where, sizeof l->where, "section %u (clip \"%s\")", l->section, h->name);
        r = read_f32(l, c, "duration_s", &h->duration);
    }
    uint32_t *u[] = {&h->frames,   &h->joints,    &h->flags,
                     &h->encoding, &h->root_mode, &h->root_joint};
    static const char *const un[] = {"frame_count", "joint_count", "flags",
                                     "encoding",    "root_motion", "root_joint"};
    for (int k = 0; k < 6 && r == CB_OK; ++k) {
        r = read_u32(l, c, un[k], u[k]);
    }
    if (r == CB_OK) {
        r = read_floats(l, c, "root_origin", h->origin, 4);
    }
    if (r == CB_OK) {
        r = read_f32(l, c, "max_error_m", &h->info.max_error_m);
    }
    if (r == CB_OK) {
        r = read_f32(l, c, "error_bound_m", &h->info.error_bound_m);
    }
    if (r == CB_OK) {
        r = read_u32(l, c, "marker_count", &h->marker_count);
    }
    if (r != CB_OK) {
        return r;
    }
    if (h->frames < 2 || h->frames > CB_CLIP_MAX_FRAMES) {
        return fail(l, CB_ERR_PARSE, "frame_count %u is outside 2..%d", h->frames,
                    CB_CLIP_MAX_FRAMES);
    }
    if (h->joints != n) {
        return fail(l, CB_ERR_PARSE, "joint_count %u, the skeleton has %zu", h->joints, n);
    }
    if ((h->flags &
         ~(uint32_t)(CB_PACK_CLIP_LOOPING | CB_PACK_CLIP_ADDITIVE | CB_PACK_CLIP_SCALE)) != 0) {
        return fail(l, CB_ERR_PARSE, "flags 0x%x has unknown bits", h->flags);
    }
    /* Encoding e is defined from section version e + 1; version 3 holds encoding 2 only, as
     * the writer makes them (one pack, one form). */
    if (h->encoding > CB_PACK_ENCODING_CCLIP_ROOT || l->section_version < h->encoding + 1 ||
        (l->section_version >= 3) != (h->encoding == CB_PACK_ENCODING_CCLIP_ROOT)) {
        return fail(l, CB_ERR_PARSE, "encoding %u is not defined in clip section version %u",
                    h->encoding, l->section_version);
    }
    if (h->root_mode <= _CB_ROOT_MOTION_DEFAULT || h->root_mode >= _CB_ROOT_MOTION_COUNT) {
        return fail(l, CB_ERR_PARSE, "root_motion %u is not a cb_root_motion", h->root_mode);
    }
    if (h->encoding == CB_PACK_ENCODING_CCLIP_ROOT && h->root_mode == CB_ROOT_MOTION_NONE) {
        return fail(l, CB_ERR_PARSE, "encoding 2 (the root track compressed) without root motion");
    }
    if (h->marker_count > CB_CLIP_MAX_MARKERS) {
        return fail(l, CB_ERR_PARSE, "marker_count %u exceeds %d", h->marker_count,
                    CB_CLIP_MAX_MARKERS);
    }
    return CB_OK;
}

static cb_result read_markers(loader *l, cursor *c, uint32_t count, cb_clip_marker *m)
{
    cb_result r = CB_OK;
    for (uint32_t k = 0; k < count && r == CB_OK; ++k) {
        char field[40];
        uint32_t flags = 0;
        snprintf(field, sizeof field, "markers[%u].time", k);
        r = read_f32(l, c, field, &m[k].time);
        if (r == CB_OK) {
            snprintf(field, sizeof field, "markers[%u].flags", k);
            r = read_u32(l, c, field, &flags);
        }
        if (r == CB_OK && (flags & ~(uint32_t)CB_PACK_MARKER_EVENT_ONLY) != 0) {
            r = fail(l, CB_ERR_PARSE, "markers[%u].flags 0x%x has unknown bits", k, flags);
        }
        if (r == CB_OK) {
            snprintf(field, sizeof field, "markers[%u].name", k);
            r = read_name(l, c, field, CB_MARKER_NAME_MAX, &m[k].name);
        }
        m[k].event_only = (flags & CB_PACK_MARKER_EVENT_ONLY) != 0;
    }
    return r;
}

/* The raw encoding: frame_count x joint_count x stride floats. */
static cb_result read_raw_frames(loader *l, cursor *c, const clip_head *h, size_t n,
                                 size_t root_floats, float **frames, size_t *count)
{
    const size_t stride = (h->flags & CB_PACK_CLIP_SCALE) ? 10 : 7;
    /* Bounded above: 16384 frames x 65535 joints x 10 floats, far below SIZE_MAX on 64 bits,
     * and checked against the bytes left before anything is allocated. */
    const size_t frame_floats = (size_t)h->frames * n * stride;
    if ((frame_floats + root_floats) * 4 != c->left) {
        return fail(l, CB_ERR_PARSE,
                    "frames: %u frames x %zu joints x %zu floats%s need %zu bytes, the section has "
                    "%zu left",
                    h->frames, n, stride, root_floats ? " and the root track" : "",
                    (frame_floats + root_floats) * 4, c->left);
    }
    *frames = pack_alloc(l, frame_floats * sizeof(float));
    if (*frames == NULL) {
        return fail(l, CB_ERR_OUT_OF_MEMORY, "frames");
    }
    *count = frame_floats;
    return read_floats(l, c, "frames", *frames, frame_floats);
}

/* The compressed encoding: u32 size, the stored form (crowdblend/cclip.h), zeros to a multiple
 * of 4. The stored form's own loader validates it against the pack's skeleton. */
static cb_result read_compressed(loader *l, cursor *c, const clip_head *h, size_t root_floats,
                                 const cb_skeleton *skeleton, cb_cclip **out)
{
    uint32_t len = 0;
    cb_result r = read_u32(l, c, "compressed_bytes", &len);
    const size_t padded = ((size_t)len + 3) / 4 * 4;
    const unsigned char *bytes = NULL;
    if (r == CB_OK && (padded > c->left || c->left - padded != root_floats * 4)) {
        r = fail(l, CB_ERR_PARSE,
                 "compressed_bytes %u (%zu with padding)%s need %zu bytes, the section has %zu "
                 "left",
                 len, padded, root_floats ? " and the root track" : "", padded + root_floats * 4,
                 c->left);
    }
    if (r == CB_OK && (!take(c, padded, &bytes) || !all_zero(bytes + len, padded - len))) {
        r = fail(l, CB_ERR_PARSE, "the padding after the compressed clip is not zero");
    }
    if (r != CB_OK) {
        return r;
    }
    cb_cclip_load_desc ld = {.skeleton = skeleton, .allocator = *l->alloc};
    cb_error inner = {0};
    cb_result cr = cb_cclip_load(bytes, len, &ld, out, &inner);
    if (cr != CB_OK) {
        return fail(l, cr, "compressed clip: %s", inner.message);
    }
    cb_cclip_info info = cb_cclip_query_info(*out);
    if (info.source_frames != h->frames) {
        return fail(l, CB_ERR_PARSE,
                    "frame_count %u, the compressed clip was made from %u source frames", h->frames,
                    info.source_frames);
    }
    /* Encoding 2 stores the root track in the stored form; encoding 1 never does (its track
     * follows raw). */
    const bool wants = h->encoding == CB_PACK_ENCODING_CCLIP_ROOT;
    if ((info.root_track_bytes > 0) != wants) {
        return fail(l, CB_ERR_PARSE, "the compressed clip %s a root track (encoding %u, %s)",
                    info.root_track_bytes > 0 ? "holds" : "lacks", h->encoding,
                    h->root_mode != CB_ROOT_MOTION_NONE ? "root motion" : "no root motion");
    }
    return CB_OK;
}

/* The clip from frames, or from its compressed form: kept compressed (the pack keeps z alive as
 * long as the clip) or decoded to frames (crowdblend/pack.h, COMPRESSED CLIPS). */
static cb_result make_clip(loader *l, cb_pack *p, const clip_head *h, cb_float_cspan frames,
                           cb_float_cspan track, const cb_clip_marker *markers, const cb_cclip *z)
{
    cb_clip_frames_desc fd = {
        .name = h->name,
        .skeleton = p->skeleton,
        .duration_s = h->duration,
        .frame_count = h->frames,
        .has_scale = (h->flags & CB_PACK_CLIP_SCALE) != 0,
        .frames = frames,
        .wrap = (h->flags & CB_PACK_CLIP_LOOPING) ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
        .additive = (h->flags & CB_PACK_CLIP_ADDITIVE) != 0,
        .root_motion = (cb_root_motion)h->root_mode,
        .root_joint = h->root_joint,
        .root_track = track,
        .root_origin = {h->origin[0], h->origin[1], h->origin[2]},
        .root_origin_yaw = h->origin[3],
        .markers = markers,
        .marker_count = h->marker_count,
        .allocator = *l->alloc,
    };
    cb_error inner = {0};
    cb_clip **out = &p->clips[p->clip_count];
    cb_result cr = z == NULL      ? cb_clip_create_from_frames(&fd, out, &inner)
                   : l->raw_clips ? cb_cclip_to_clip(z, &fd, out, &inner)
                                  : cb_cclip_clip_create(z, &fd, out, &inner);
    return cr != CB_OK ? pass_on(l, cr, &inner) : CB_OK;
}

static cb_result read_clip(loader *l, cursor *c, cb_pack *p)
{
    const size_t n = p->joint_count;
    clip_head h = {0};
    cb_result r = read_clip_head(l, c, n, &h);
    if (r != CB_OK) {
        return r;
    }
    for (size_t i = 0; i < p->clip_count; ++i) {
        if (strcmp(cb_clip_name(p->clips[i]), h.name) == 0) {
            return fail(l, CB_ERR_DUPLICATE, "name: clip %zu has the same name", i);
        }
    }
    /* The raw root track after the frames (encoding 2 holds it in the stored form). */
    const bool root =
        h.root_mode != CB_ROOT_MOTION_NONE && h.encoding != CB_PACK_ENCODING_CCLIP_ROOT;
    const size_t root_floats = root ? h.frames * 4u : 0;
    cb_clip_marker *markers = pack_alloc(l, h.marker_count * sizeof *markers);
    if (h.marker_count > 0 && markers == NULL) {
        return fail(l, CB_ERR_OUT_OF_MEMORY, "markers");
    }
    r = read_markers(l, c, h.marker_count, markers);
    float *frames = NULL, *track = NULL;
    size_t frame_floats = 0;
    cb_cclip *z = NULL;
    if (r == CB_OK) {
        r = h.encoding != CB_PACK_ENCODING_RAW
                ? read_compressed(l, c, &h, root_floats, p->skeleton, &z)
                : read_raw_frames(l, c, &h, n, root_floats, &frames, &frame_floats);
    }
    if (r == CB_OK && root) {
        track = pack_alloc(l, root_floats * sizeof(float));
        r = track == NULL ? fail(l, CB_ERR_OUT_OF_MEMORY, "root_track")
                          : read_floats(l, c, "root_track", track, root_floats);
    }
    if (r == CB_OK) {
        r = make_clip(l, p, &h, (cb_float_cspan){frames, frame_floats},
                      (cb_float_cspan){track, root_floats}, markers, z);
    }
    if (r == CB_OK) {
        p->compressed[p->clip_count] = z;
        p->infos[p->clip_count++] = h.info;
    } else {
        cb_cclip_destroy(z);
    }
    cb_free(l->alloc, frames, frame_floats * sizeof(float));
    cb_free(l->alloc, track, root_floats * sizeof(float));
    cb_free(l->alloc, markers, h.marker_count * sizeof *markers);
    return r;
}

static cb_result read_mask(loader *l, cursor *c, cb_pack *p)
{
    const char *name = NULL;
    uint32_t joints = 0;
    cb_result r = read_name(l, c, "name", CB_JOINT_NAME_MAX, &name);
    if (r == CB_OK) {
        r = read_u32(l, c, "joint_count", &joints);
    }
    if (r == CB_OK && joints != p->joint_count) {
        r = fail(l, CB_ERR_PARSE, "joint_count %u, the skeleton has %zu", joints, p->joint_count);
    }
    for (size_t i = 0; i < p->mask_count && r == CB_OK; ++i) {
        if (strcmp(p->masks[i].name, name) == 0) {
            r = fail(l, CB_ERR_DUPLICATE, "name \"%s\": mask %zu has the same name", name, i);
        }
    }
    if (r != CB_OK) {
        return r;
    }
    size_t soa = cb_skeleton_soa_joint_count(p->skeleton);
    float *w = pack_alloc(l, soa * sizeof(float));
    char *copy = copy_name(l, name);
    if (w == NULL || copy == NULL) {
        r = fail(l, CB_ERR_OUT_OF_MEMORY, "weights");
    } else {
        memset(w, 0, soa * sizeof(float));
        r = read_floats(l, c, "weights", w, joints);
    }
    for (size_t j = 0; j < joints && r == CB_OK; ++j) {
        if (!(w[j] >= 0.0f && w[j] <= 1.0f)) {
            r = fail(l, CB_ERR_PARSE, "weights[%zu] = %g is outside [0, 1]", j, (double)w[j]);
        }
    }
    if (r == CB_OK) {
        r = expect_end(l, c);
    }
    if (r != CB_OK) {
        cb_free(l->alloc, w, soa * sizeof(float));
        cb_free(l->alloc, copy, copy != NULL ? strlen(copy) + 1 : 0);
        return r;
    }
    p->masks[p->mask_count++] = (cb_pack_mask){copy, {w, soa}};
    return CB_OK;
}

static cb_result read_graph(loader *l, cursor *c, cb_pack *p)
{
    const char *name = NULL;
    uint32_t length = 0;
    cb_result r = read_name(l, c, "name", CB_JOINT_NAME_MAX, &name);
    if (r == CB_OK) {
        r = read_u32(l, c, "text_bytes", &length);
    }
    const unsigned char *text = NULL;
    size_t padded = ((size_t)length + 3) / 4 * 4;
    if (r == CB_OK && (length > CB_PACK_MAX_GRAPH_BYTES || !take(c, padded, &text))) {
        r = fail(l, CB_ERR_PARSE, "text_bytes %u runs past the section's end (or exceeds %u)",
                 length, CB_PACK_MAX_GRAPH_BYTES);
    }
    if (r == CB_OK &&
        (memchr(text, '\0', length) != NULL || !all_zero(text + length, padded - length))) {
        r = fail(l, CB_ERR_PARSE, "text: a NUL inside the text, or padding that is not zero");
    }
    for (size_t i = 0; i < p->graph_count && r == CB_OK; ++i) {
        if (strcmp(p->graphs[i].name, name) == 0) {
            r = fail(l, CB_ERR_DUPLICATE, "name \"%s\": graph %zu has the same name", name, i);
        }
    }
    if (r == CB_OK) {
        r = expect_end(l, c);
    }
    if (r != CB_OK) {
        return r;
    }
    char *t = pack_alloc(l, (size_t)length + 1), *copy = copy_name(l, name);
    if (t == NULL || copy == NULL) {
        cb_free(l->alloc, t, (size_t)length + 1);
        cb_free(l->alloc, copy, copy != NULL ? strlen(copy) + 1 : 0);
        return fail(l, CB_ERR_OUT_OF_MEMORY, "text");
    }
    memcpy(t, text, length);
    t[length] = '\0';
    p->graphs[p->graph_count++] = (cb_pack_graph){copy, t, length};
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Header and section table                                                                   */

static cb_result read_header(loader *l)
{
    const unsigned char *d = l->data;
    snprintf(l->where, sizeof l->where, "header");
    if (l->size < CB_PACK_HEADER_BYTES + CB_PACK_TABLE_HEAD_BYTES) {
        return fail(l, CB_ERR_PARSE, "%zu bytes; a pack has at least %d (truncated?)", l->size,
                    CB_PACK_HEADER_BYTES + CB_PACK_TABLE_HEAD_BYTES);
    }
    if (memcmp(d, CB_PACK_MAGIC, CB_PACK_MAGIC_BYTES) != 0) {
        return fail(l, CB_ERR_PARSE, "magic: not a crowdblend pack");
    }
    uint32_t version = cb_le_u32(d + 8), flags = cb_le_u32(d + 12);
    l->version = version;
    if (version == 0 || version > CB_PACK_VERSION) {
        return fail(l, version == 0 ? CB_ERR_PARSE : CB_ERR_UNSUPPORTED,
                    "version %u: this build reads versions 1..%d", version, CB_PACK_VERSION);
    }
    if (flags != 0) {
        return fail(l, CB_ERR_PARSE, "flags 0x%x: no flag is defined in version %d", flags,
                    CB_PACK_VERSION);
    }
    uint64_t file_size = cb_le_u64(d + 16);
    if (file_size != l->size) {
        return fail(l, CB_ERR_PARSE, "file_size says %llu bytes, the data has %zu (truncated?)",
                    (unsigned long long)file_size, l->size);
    }
    uint64_t stored = cb_le_u64(d + 24), computed = cb_pack_checksum(d, l->size);
    if (stored != computed) {
        return fail(l, CB_ERR_PARSE,
                    "checksum %016llx does not match the data's %016llx (the file is damaged)",
                    (unsigned long long)stored, (unsigned long long)computed);
    }
    return CB_OK;
}

/* The order kinds must come in: the skeleton, then clips, masks, graphs. */
static int kind_rank(uint32_t kind)
{
    return kind == CB_PACK_KIND_SKELETON ? 0
           : kind == CB_PACK_KIND_CLIP   ? 1
           : kind == CB_PACK_KIND_MASK   ? 2
           : kind == CB_PACK_KIND_GRAPH  ? 3
                                         : -1;
}

static const char *kind_name(uint32_t kind)
{
    static const char *const names[] = {"skeleton", "clip", "mask", "graph"};
    int r = kind_rank(kind);
    return r >= 0 ? names[r] : "unknown";
}

/* The newest version of a section kind that a pack of format `version` may hold: version 1
 * packs were written before clip section version 2 existed. */
static int kind_version(uint32_t kind, uint32_t version)
{
    static const int versions[] = {CB_PACK_SKELETON_VERSION, CB_PACK_CLIP_VERSION,
                                   CB_PACK_MASK_VERSION, CB_PACK_GRAPH_VERSION};
    int rank = kind_rank(kind);
    return rank < 0 ? 0 : version < 2 ? 1 : versions[rank];
}

/* Checks one section table entry against the canonical layout; *end is where the previous
 * section ended and becomes this one's end. */
static cb_result check_entry(loader *l, const unsigned char *e, uint32_t i, int *rank, size_t *end)
{
    uint32_t kind = cb_le_u32(e), version = cb_le_u32(e + 4);
    uint64_t offset = cb_le_u64(e + 8), size = cb_le_u64(e + 16);
    snprintf(l->where, sizeof l->where, "section %u", i);
    int k = kind_rank(kind);
    if (k < 0) {
        return fail(l, CB_ERR_PARSE, "kind 0x%08x is not SKEL, CLIP, MASK or GRPH", kind);
    }
    snprintf(l->where, sizeof l->where, "section %u (%s)", i, kind_name(kind));
    if ((i == 0) != (k == 0) || k < *rank) {
        return fail(l, CB_ERR_PARSE,
                    "kind: the skeleton comes first and only once, then clips, "
                    "masks and graphs in that order");
    }
    *rank = k;
    const int newest = kind_version(kind, l->version);
    if (version == 0 || (int64_t)version > newest) {
        return fail(
            l,
            version == 0 || newest < kind_version(kind, CB_PACK_VERSION) ? CB_ERR_PARSE
                                                                         : CB_ERR_UNSUPPORTED,
            "version %u: a version %u pack holds versions 1..%d", version, l->version, newest);
    }
    size_t expected = cb_round_up(*end, CB_PACK_SECTION_ALIGN);
    /* The padding before the section must itself lie inside the data (found by fuzzing: a table
     * ending within 7 bytes of the end made the padding check read past it). */
    if (expected > l->size) {
        return fail(l, CB_ERR_PARSE,
                    "the section would start at %zu, past the end of the data "
                    "(%zu bytes)",
                    expected, l->size);
    }
    if (offset != expected) {
        return fail(l, CB_ERR_PARSE,
                    "offset %llu, expected %zu (sections follow the table in order, each at the "
                    "next multiple of 8)",
                    (unsigned long long)offset, expected);
    }
    if (size > l->size - expected) {
        return fail(l, CB_ERR_PARSE, "size %llu runs past the end of the data (%zu bytes)",
                    (unsigned long long)size, l->size);
    }
    if (!all_zero(l->data + *end, expected - *end)) {
        return fail(l, CB_ERR_PARSE, "the padding before the section is not zero");
    }
    *end = expected + (size_t)size;
    return CB_OK;
}

static cb_result read_section(loader *l, uint32_t kind, cursor *c, cb_pack *p)
{
    switch (kind_rank(kind)) {
    case 0:
        return read_skeleton(l, c, p);
    case 1:
        return read_clip(l, c, p);
    case 2:
        return read_mask(l, c, p);
    default:
        return read_graph(l, c, p);
    }
}

/* Entry i of the section table at t. */
static const unsigned char *table_entry(const unsigned char *t, uint32_t i)
{
    return t + CB_PACK_TABLE_HEAD_BYTES + i * CB_PACK_ENTRY_BYTES;
}

/* The section table's head and then every entry against the canonical layout, before any
 * section is read; the last section must end where the data does. */
static cb_result check_table(loader *l, const unsigned char *t, uint32_t *count)
{
    uint32_t reserved = cb_le_u32(t + 4);
    *count = cb_le_u32(t);
    snprintf(l->where, sizeof l->where, "section table");
    if (*count == 0 || *count > CB_PACK_MAX_SECTIONS || reserved != 0) {
        return fail(l, CB_ERR_PARSE, "section_count %u is outside 1..%d, or reserved %u is not 0",
                    *count, CB_PACK_MAX_SECTIONS, reserved);
    }
    size_t table_end =
        CB_PACK_HEADER_BYTES + CB_PACK_TABLE_HEAD_BYTES + (size_t)*count * CB_PACK_ENTRY_BYTES;
    if (table_end > l->size) {
        return fail(l, CB_ERR_PARSE, "%u entries run past the end of the data", *count);
    }
    size_t end = table_end;
    int rank = 0;
    for (uint32_t i = 0; i < *count; ++i) {
        cb_result r = check_entry(l, table_entry(t, i), i, &rank, &end);
        if (r != CB_OK) {
            return r;
        }
    }
    if (end != l->size) {
        snprintf(l->where, sizeof l->where, "section table");
        return fail(l, CB_ERR_PARSE, "%zu bytes follow the last section", l->size - end);
    }
    return CB_OK;
}

/* The pack's tables, sized by the section counts of each kind, once those are within the
 * limits. */
static cb_result alloc_tables(loader *l, const unsigned char *t, uint32_t count, cb_pack *p)
{
    size_t per_kind[4] = {0};
    for (uint32_t i = 0; i < count; ++i) {
        per_kind[kind_rank(cb_le_u32(table_entry(t, i)))]++;
    }
    if (per_kind[1] > CB_PACK_MAX_CLIPS || per_kind[2] > CB_PACK_MAX_MASKS ||
        per_kind[3] > CB_PACK_MAX_GRAPHS) {
        return fail(l, CB_ERR_PARSE, "%zu clip, %zu mask and %zu graph sections exceed %d, %d, %d",
                    per_kind[1], per_kind[2], per_kind[3], CB_PACK_MAX_CLIPS, CB_PACK_MAX_MASKS,
                    CB_PACK_MAX_GRAPHS);
    }
    p->clip_cap = per_kind[1] ? per_kind[1] : 1;
    p->mask_cap = per_kind[2] ? per_kind[2] : 1;
    p->graph_cap = per_kind[3] ? per_kind[3] : 1;
    p->clips = cb_alloc_zeroed(l->alloc, p->clip_cap * sizeof *p->clips, 16);
    p->compressed = cb_alloc_zeroed(l->alloc, p->clip_cap * sizeof *p->compressed, 16);
    p->infos = cb_alloc_zeroed(l->alloc, p->clip_cap * sizeof *p->infos, 16);
    p->masks = cb_alloc_zeroed(l->alloc, p->mask_cap * sizeof *p->masks, 16);
    p->graphs = cb_alloc_zeroed(l->alloc, p->graph_cap * sizeof *p->graphs, 16);
    if (p->clips == NULL || p->compressed == NULL || p->infos == NULL || p->masks == NULL ||
        p->graphs == NULL) {
        return fail(l, CB_ERR_OUT_OF_MEMORY, "the pack's tables");
    }
    return CB_OK;
}

static cb_result read_sections(loader *l, cb_pack *p)
{
    const unsigned char *t = l->data + CB_PACK_HEADER_BYTES;
    uint32_t count = 0;
    /* The whole table first: the layout is checked before any section is read. */
    cb_result r = check_table(l, t, &count);
    if (r != CB_OK) {
        return r;
    }
    /* The layout is sound: the tables are sized by the section counts, within the limits. */
    r = alloc_tables(l, t, count, p);
    if (r != CB_OK) {
        return r;
    }
    for (uint32_t i = 0; i < count; ++i) {
        const unsigned char *e = table_entry(t, i);
        uint32_t kind = cb_le_u32(e);
        snprintf(l->where, sizeof l->where, "section %u (%s)", i, kind_name(kind));
        l->section = i;
        l->section_version = cb_le_u32(e + 4);
        cursor c = {l->data + cb_le_u64(e + 8), (size_t)cb_le_u64(e + 16)};
        r = read_section(l, kind, &c, p);
        if (r != CB_OK) {
            return r;
        }
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry points                                                                               */

cb_pack_load_desc cb_pack_query_load_desc(const cb_pack_load_desc *desc)
{
    cb_pack_load_desc d = {0};
    if (desc != NULL) {
        d = *desc;
    }
    if (d.source_name == NULL) {
        d.source_name = "pack";
    }
    return d;
}

cb_result cb_pack_load_memory(const void *data, size_t size, const cb_pack_load_desc *desc,
                              cb_pack **out, cb_error *err)
{
    if (data == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_pack_load_memory: %s is NULL",
                            data == NULL ? "data" : "out");
    }
    cb_pack_load_desc d = cb_pack_query_load_desc(desc);
    if (d._start_canary != 0 || d._end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "pack load desc: a canary is not 0");
    }
    if (d.clip_form < _CB_PACK_CLIP_FORM_DEFAULT || d.clip_form >= _CB_PACK_CLIP_FORM_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "pack load desc: clip_form %d is not a cb_pack_clip_form",
                            (int)d.clip_form);
    }
    cb_result r = cb_allocator_check(&d.allocator, err);
    if (r != CB_OK) {
        return r;
    }
    loader l = {.data = data,
                .size = size,
                .source = d.source_name,
                .alloc = &d.allocator,
                .err = err,
                .raw_clips = d.clip_form == CB_PACK_CLIP_FORM_RAW};
    r = read_header(&l);
    if (r != CB_OK) {
        return r;
    }
    cb_pack *p = cb_alloc_zeroed(&d.allocator, sizeof *p, _Alignof(cb_pack));
    if (p == NULL) {
        return fail(&l, CB_ERR_OUT_OF_MEMORY, "the pack");
    }
    p->allocator = d.allocator;
    r = read_sections(&l, p);
    if (r != CB_OK) {
        pack_free(p);
        return r;
    }
    *out = p;
    return CB_OK;
}

cb_result cb_pack_load_file(const char *path, const cb_pack_load_desc *desc, cb_pack **out,
                            cb_error *err)
{
    if (path == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_pack_load_file: %s is NULL",
                            path == NULL ? "path" : "out");
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return cb_error_set(err, CB_ERR_IO, "%s: cannot open", path);
    }
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) {
        len = ftell(f);
    }
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return cb_error_set(err, CB_ERR_IO, "%s: cannot find its size", path);
    }
    cb_pack_load_desc d = cb_pack_query_load_desc(desc);
    if (desc == NULL || desc->source_name == NULL) {
        d.source_name = path;
    }
    size_t size = (size_t)len;
    unsigned char *bytes = cb_alloc(&d.allocator, size ? size : 1, 16);
    if (bytes == NULL) {
        fclose(f);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s: %zu bytes", path, size);
    }
    size_t got = fread(bytes, 1, size, f);
    fclose(f);
    cb_result r = got == size
                      ? cb_pack_load_memory(bytes, size, &d, out, err)
                      : cb_error_set(err, CB_ERR_IO, "%s: read %zu of %zu bytes", path, got, size);
    cb_free(&d.allocator, bytes, size ? size : 1);
    return r;
}

cb_pack_desc cb_pack_contents(const cb_pack *p)
{
    cb_pack_desc d = {0};
    if (p == NULL) {
        return d;
    }
    d.skeleton = p->skeleton;
    d.rest_pose = (cb_xform_cspan){p->rest, p->joint_count};
    d.inverse_binds =
        (cb_float_cspan){p->inverse_binds, p->inverse_binds ? p->joint_count * 16 : 0};
    d.clips = (const cb_clip *const *)p->clips;
    d.clip_count = p->clip_count;
    d.clip_info = p->infos;
    d.compressed = (const cb_cclip *const *)p->compressed;
    d.masks = p->masks;
    d.mask_count = p->mask_count;
    d.graphs = p->graphs;
    d.graph_count = p->graph_count;
    return d;
}

const cb_skeleton *cb_pack_skeleton(const cb_pack *p)
{
    return p != NULL ? p->skeleton : NULL;
}

cb_float_cspan cb_pack_inverse_binds(const cb_pack *p)
{
    if (p == NULL || p->inverse_binds == NULL) {
        return (cb_float_cspan){NULL, 0};
    }
    return (cb_float_cspan){p->inverse_binds, p->joint_count * 16};
}

uint32_t cb_pack_clip_count(const cb_pack *p)
{
    return p != NULL ? p->clip_count : 0;
}

const cb_clip *cb_pack_clip(const cb_pack *p, uint32_t index)
{
    return p != NULL && index < p->clip_count ? p->clips[index] : NULL;
}

const cb_clip *const *cb_pack_clips(const cb_pack *p)
{
    return p != NULL ? (const cb_clip *const *)p->clips : NULL;
}

cb_result cb_pack_find_clip(const cb_pack *p, const char *name, uint32_t *index)
{
    if (p == NULL || name == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t i = 0; i < p->clip_count; ++i) {
        if (strcmp(cb_clip_name(p->clips[i]), name) == 0) {
            *index = i;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

const cb_cclip *cb_pack_compressed_clip(const cb_pack *p, uint32_t index)
{
    return p != NULL && index < p->clip_count ? p->compressed[index] : NULL;
}

cb_pack_clip_info cb_pack_query_clip_info(const cb_pack *p, uint32_t index)
{
    if (p == NULL || index >= p->clip_count) {
        return (cb_pack_clip_info){-1.0f, -1.0f};
    }
    return p->infos[index];
}

uint32_t cb_pack_mask_count(const cb_pack *p)
{
    return p != NULL ? p->mask_count : 0;
}

cb_pack_mask cb_pack_query_mask(const cb_pack *p, uint32_t index)
{
    cb_pack_mask m = {0};
    if (p != NULL && index < p->mask_count) {
        m = p->masks[index];
    }
    return m;
}

uint32_t cb_pack_graph_count(const cb_pack *p)
{
    return p != NULL ? p->graph_count : 0;
}

cb_pack_graph cb_pack_query_graph(const cb_pack *p, uint32_t index)
{
    cb_pack_graph g = {0};
    if (p != NULL && index < p->graph_count) {
        g = p->graphs[index];
    }
    return g;
}
