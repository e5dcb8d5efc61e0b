/* Writing packs: the desc is checked, the size of every section computed, then the bytes are
 * written in the one canonical layout (sections in kind order, each at the next multiple of 8,
 * zero padding), so equal contents always give equal files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/base_impl.h"
#include "compress/cclip_impl.h"
#include "io/pack_format.h"

uint64_t cb_pack_checksum(const unsigned char *data, size_t size)
{
    return size > CB_PACK_HEADER_BYTES
               ? (uint64_t)XXH3_64bits(data + CB_PACK_HEADER_BYTES, size - CB_PACK_HEADER_BYTES)
               : (uint64_t)XXH3_64bits(NULL, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Checks                                                                                     */

static cb_result check_name(const char *what, size_t index, const char *name, cb_error *err)
{
    if (name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "pack desc: %s[%zu].name is NULL", what,
                            index);
    }
    size_t len = strlen(name);
    if (len == 0 || len > CB_JOINT_NAME_MAX) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "pack desc: %s[%zu].name has %zu bytes (1..%d)", what, index, len,
                            CB_JOINT_NAME_MAX);
    }
    return CB_OK;
}

static cb_result check_floats(const char *what, const float *v, size_t count, cb_error *err)
{
    for (size_t i = 0; i < count; ++i) {
        if (!isfinite(v[i])) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "pack desc: %s[%zu] is %g", what, i,
                                (double)v[i]);
        }
    }
    return CB_OK;
}

static cb_result check_rest(const cb_pack_desc *d, size_t n, cb_error *err)
{
    if (d->rest_pose.ptr == NULL) {
        return CB_OK;
    }
    if (d->rest_pose.count < n) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "pack desc: rest_pose has %zu transforms, the "
                            "skeleton %zu joints",
                            d->rest_pose.count, n);
    }
    for (size_t j = 0; j < n; ++j) {
        cb_xform a = d->rest_pose.ptr[j], b = cb_skeleton_rest_xform(d->skeleton, j);
        /* Translation and scale as the skeleton holds them; the rotation one whose
         * normalization the skeleton holds (it normalized what it was given). */
        bool same = memcmp(a.translation, b.translation, sizeof a.translation) == 0 &&
                    memcmp(a.scale, b.scale, sizeof a.scale) == 0;
        double len = 0.0;
        for (int k = 0; k < 4; ++k) {
            len += (double)a.rotation[k] * a.rotation[k];
        }
        len = sqrt(len);
        same = same && fabs(len - 1.0) <= CB_CLIP_FRAMES_UNIT_TOLERANCE;
        for (int k = 0; k < 4 && same; ++k) {
            same = fabs(a.rotation[k] / len - b.rotation[k]) <= 1e-6;
        }
        if (!same) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "pack desc: rest_pose[%zu] is not the skeleton's rest transform",
                                j);
        }
    }
    return CB_OK;
}

/* A compressed clip stored for clip i must decode to a clip like it (crowdblend/pack.h). */
static cb_result check_compressed(const cb_pack_desc *d, size_t i, cb_error *err)
{
    const cb_cclip *z = d->compressed != NULL ? d->compressed[i] : NULL;
    const cb_clip *c = d->clips[i];
    if (z == NULL) {
        return CB_OK;
    }
    const char *wrong =
        cb_cclip_skeleton_signature(z) != cb_clip_skeleton_signature(c) ? "another skeleton"
        : z->source_frames != cb_clip_frame_count(c)                    ? "another frame count"
        : z->additive != cb_clip_is_additive(c)                         ? "another additive flag"
        : cb_clip_frame_stride(c) != 10 && cb_cclip_stores_scale(z)
            ? "scale where the clip has none"
        : z->root_track != NULL && cb_clip_query_root_motion(c).mode == CB_ROOT_MOTION_NONE
            ? "a root track where the clip has no root motion"
            : NULL;
    if (wrong != NULL) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "pack desc: compressed[%zu] does not match clips[%zu] (\"%s\"): %s", i,
                            i, cb_clip_name(c), wrong);
    }
    return CB_OK;
}

static cb_result check_clips(const cb_pack_desc *d, cb_error *err)
{
    if (d->clip_count > CB_PACK_MAX_CLIPS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "pack desc: %u clips exceed %d", d->clip_count,
                            CB_PACK_MAX_CLIPS);
    }
    if (d->clips == NULL && d->clip_count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "pack desc: clips is NULL");
    }
    uint64_t sig = cb_skeleton_signature(d->skeleton);
    for (size_t i = 0; i < d->clip_count; ++i) {
        const cb_clip *c = d->clips[i];
        if (c == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "pack desc: clips[%zu] is NULL", i);
        }
        if (cb_clip_skeleton_signature(c) != sig) {
            return cb_error_set(err, CB_ERR_MISMATCH,
                                "pack desc: clips[%zu] (\"%s\") was built for another skeleton", i,
                                cb_clip_name(c));
        }
        for (size_t k = 0; k < i; ++k) {
            if (strcmp(cb_clip_name(d->clips[k]), cb_clip_name(c)) == 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "pack desc: clips[%zu] and clips[%zu] are both \"%s\"", k, i,
                                    cb_clip_name(c));
            }
        }
        cb_result r = check_compressed(d, i, err);
        if (r != CB_OK) {
            return r;
        }
        if (d->clip_info != NULL) {
            const cb_pack_clip_info *ci = &d->clip_info[i];
            if (!isfinite(ci->max_error_m) || !isfinite(ci->error_bound_m)) {
                return cb_error_set(err, CB_ERR_NOT_FINITE,
                                    "pack desc: clip_info[%zu] is not finite", i);
            }
        }
    }
    return CB_OK;
}

static cb_result check_masks(const cb_pack_desc *d, size_t n, cb_error *err)
{
    if (d->mask_count > CB_PACK_MAX_MASKS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "pack desc: %u masks exceed %d", d->mask_count,
                            CB_PACK_MAX_MASKS);
    }
    if (d->masks == NULL && d->mask_count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "pack desc: masks is NULL");
    }
    for (size_t i = 0; i < d->mask_count; ++i) {
        const cb_pack_mask *m = &d->masks[i];
        cb_result r = check_name("masks", i, m->name, err);
        if (r != CB_OK) {
            return r;
        }
        if (m->weights.ptr == NULL || m->weights.count < n) {
            return cb_error_set(err, CB_ERR_MISMATCH,
                                "pack desc: masks[%zu].weights has %zu values, the skeleton %zu "
                                "joints",
                                i, m->weights.ptr == NULL ? 0 : m->weights.count, n);
        }
        for (size_t j = 0; j < n; ++j) {
            float w = m->weights.ptr[j];
            if (!(w >= 0.0f && w <= 1.0f)) {
                return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                    "pack desc: masks[%zu].weights[%zu] = %g is outside [0, 1]", i,
                                    j, (double)w);
            }
        }
        for (size_t k = 0; k < i; ++k) {
            if (strcmp(d->masks[k].name, m->name) == 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "pack desc: masks[%zu] and masks[%zu] are both \"%s\"", k, i,
                                    m->name);
            }
        }
    }
    return CB_OK;
}

static cb_result check_graphs(const cb_pack_desc *d, cb_error *err)
{
    if (d->graph_count > CB_PACK_MAX_GRAPHS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "pack desc: %u graphs exceed %d", d->graph_count,
                            CB_PACK_MAX_GRAPHS);
    }
    if (d->graphs == NULL && d->graph_count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "pack desc: graphs is NULL");
    }
    for (size_t i = 0; i < d->graph_count; ++i) {
        const cb_pack_graph *g = &d->graphs[i];
        cb_result r = check_name("graphs", i, g->name, err);
        if (r != CB_OK) {
            return r;
        }
        if (g->text == NULL || g->length > CB_PACK_MAX_GRAPH_BYTES) {
            return cb_error_set(err, g->text == NULL ? CB_ERR_NULL_ARGUMENT : CB_ERR_TOO_MANY,
                                "pack desc: graphs[%zu].text is NULL or longer than %u bytes", i,
                                CB_PACK_MAX_GRAPH_BYTES);
        }
        if (memchr(g->text, '\0', g->length) != NULL) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "pack desc: graphs[%zu].text contains a NUL byte", i);
        }
        for (size_t k = 0; k < i; ++k) {
            if (strcmp(d->graphs[k].name, g->name) == 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "pack desc: graphs[%zu] and graphs[%zu] are both \"%s\"", k, i,
                                    g->name);
            }
        }
    }
    return CB_OK;
}

static cb_result check_desc(const cb_pack_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "pack desc: a canary is not 0");
    }
    if (d->skeleton == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "pack desc: skeleton is NULL");
    }
    size_t n = cb_skeleton_joint_count(d->skeleton);
    cb_result r = check_rest(d, n, err);
    if (r == CB_OK && d->inverse_binds.ptr != NULL) {
        r = d->inverse_binds.count < n * 16
                ? cb_error_set(err, CB_ERR_MISMATCH,
                               "pack desc: inverse_binds has %zu floats, needs %zu",
                               d->inverse_binds.count, n * 16)
                : check_floats("inverse_binds", d->inverse_binds.ptr, n * 16, err);
        for (size_t j = 0; r == CB_OK && j < n; ++j) {
            /* The loader's rule, so that whatever saves also loads (a damaged asset's matrix
             * once saved and was then refused). */
            const float *m = d->inverse_binds.ptr + j * 16;
            if (fabsf(m[3]) > 1e-6f || fabsf(m[7]) > 1e-6f || fabsf(m[11]) > 1e-6f ||
                fabsf(m[15] - 1.0f) > 1e-6f) {
                r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                 "pack desc: inverse_binds[%zu] is not affine (bottom row %g %g "
                                 "%g %g)",
                                 j, (double)m[3], (double)m[7], (double)m[11], (double)m[15]);
            }
        }
    }
    if (r == CB_OK) {
        r = check_clips(d, err);
    }
    if (r == CB_OK) {
        r = check_masks(d, n, err);
    }
    if (r == CB_OK) {
        r = check_graphs(d, err);
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Sizes                                                                                      */

static size_t skeleton_bytes(const cb_pack_desc *d)
{
    size_t n = cb_skeleton_joint_count(d->skeleton), names = 0;
    for (size_t j = 0; j < n; ++j) {
        names += strlen(cb_skeleton_joint_name(d->skeleton, j)) + 1;
    }
    size_t ibm = d->inverse_binds.ptr != NULL ? n * 16 * 4 : 0;
    return 12 + (names + 3) / 4 * 4 + n * 4 + n * CB_PACK_REST_FLOATS * 4 + ibm;
}

/* The compressed clip of clips[i], or NULL. */
static const cb_cclip *compressed_of(const cb_pack_desc *d, size_t i)
{
    return d->compressed != NULL ? d->compressed[i] : NULL;
}

/* How a clip is stored: raw (z NULL), compressed, or compressed with its root track. */
static uint32_t encoding_of(const cb_cclip *z)
{
    return z == NULL               ? CB_PACK_ENCODING_RAW
           : z->root_track != NULL ? CB_PACK_ENCODING_CCLIP_ROOT
                                   : CB_PACK_ENCODING_CCLIP;
}

/* Whether the root track follows the frames as raw floats. */
static bool raw_root_track(const cb_clip *c, const cb_cclip *z)
{
    return cb_clip_query_root_motion(c).mode != CB_ROOT_MOTION_NONE &&
           encoding_of(z) != CB_PACK_ENCODING_CCLIP_ROOT;
}

static size_t clip_bytes(const cb_clip *c, const cb_cclip *z)
{
    size_t bytes = cb_pack_name_bytes(strlen(cb_clip_name(c))) + CB_PACK_CLIP_FIXED_BYTES;
    for (size_t k = 0; k < cb_clip_marker_count(c); ++k) {
        cb_clip_marker m;
        cb_clip_query_marker(c, k, &m);
        bytes += 8 + cb_pack_name_bytes(strlen(m.name));
    }
    size_t frames = cb_clip_frame_count(c);
    bytes += z != NULL ? 4 + (cb_cclip_stream_bytes(z) + 3) / 4 * 4
                       : frames * cb_clip_joint_count(c) * cb_clip_frame_stride(c) * 4;
    if (raw_root_track(c, z)) {
        bytes += frames * 4 * 4;
    }
    return bytes;
}

static size_t mask_bytes(const cb_pack_mask *m, size_t n)
{
    return cb_pack_name_bytes(strlen(m->name)) + 4 + n * 4;
}

static size_t graph_bytes(const cb_pack_graph *g)
{
    return cb_pack_name_bytes(strlen(g->name)) + 4 + (g->length + 3) / 4 * 4;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                    */

/* A write position; every section is sized exactly beforehand, so no bounds checks here. */
typedef struct writer {
    unsigned char *p;
} writer;

static void w_u32(writer *w, uint32_t v)
{
    cb_put_u32(w->p, v);
    w->p += 4;
}

static void w_f32(writer *w, float v)
{
    cb_put_f32(w->p, v);
    w->p += 4;
}

static void w_floats(writer *w, const float *v, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        w_f32(w, v[i]);
    }
}

static void w_bytes_padded(writer *w, const void *bytes, size_t len, size_t padded)
{
    memcpy(w->p, bytes, len);
    memset(w->p + len, 0, padded - len);
    w->p += padded;
}

static void w_name(writer *w, const char *name)
{
    size_t len = strlen(name);
    w_u32(w, (uint32_t)len);
    w_bytes_padded(w, name, len, cb_pack_name_bytes(len) - 4);
}

static void write_skeleton(writer *w, const cb_pack_desc *d)
{
    const cb_skeleton *s = d->skeleton;
    size_t n = cb_skeleton_joint_count(s), names = 0;
    for (size_t j = 0; j < n; ++j) {
        names += strlen(cb_skeleton_joint_name(s, j)) + 1;
    }
    w_u32(w, (uint32_t)n);
    w_u32(w, d->inverse_binds.ptr != NULL ? CB_PACK_SKEL_INVERSE_BINDS : 0);
    w_u32(w, (uint32_t)names);
    unsigned char *start = w->p;
    for (size_t j = 0; j < n; ++j) {
        const char *name = cb_skeleton_joint_name(s, j);
        memcpy(w->p, name, strlen(name) + 1);
        w->p += strlen(name) + 1;
    }
    size_t padded = (names + 3) / 4 * 4;
    memset(w->p, 0, padded - names);
    w->p = start + padded;
    for (size_t j = 0; j < n; ++j) {
        w_u32(w, (uint32_t)cb_skeleton_parents(s)[j]);
    }
    for (size_t j = 0; j < n; ++j) {
        cb_xform x = d->rest_pose.ptr != NULL ? d->rest_pose.ptr[j] : cb_skeleton_rest_xform(s, j);
        w_floats(w, x.translation, 3);
        w_floats(w, x.rotation, 4);
        w_floats(w, x.scale, 3);
    }
    if (d->inverse_binds.ptr != NULL) {
        w_floats(w, d->inverse_binds.ptr, n * 16);
    }
}

/* The compressed stored form: its size, the bytes, zeros to a multiple of 4. */
static void write_compressed(writer *w, const cb_cclip *z)
{
    size_t len = cb_cclip_stream_bytes(z), padded = (len + 3) / 4 * 4;
    w_u32(w, (uint32_t)len);
    cb_result r = cb_cclip_serialize(z, w->p, len);
    CB_ASSERT(r == CB_OK);
    (void)r;
    memset(w->p + len, 0, padded - len);
    w->p += padded;
}

/* Writes a clip; frames and root track are read through `scratch` (large enough for both). */
/* Fails only where a compressed clip saved raw cannot be decoded (cb_clip_read_frames
 * allocates through the clip's allocator for it). */
static cb_result write_clip(writer *w, const cb_clip *c, const cb_cclip *z,
                            const cb_pack_clip_info *info, float *scratch)
{
    cb_clip_root_motion rm = cb_clip_query_root_motion(c);
    size_t frames = cb_clip_frame_count(c), n = cb_clip_joint_count(c);
    size_t stride = cb_clip_frame_stride(c);
    w_name(w, cb_clip_name(c));
    w_f32(w, cb_clip_duration(c));
    w_u32(w, (uint32_t)frames);
    w_u32(w, (uint32_t)n);
    w_u32(w, (cb_clip_is_looping(c) ? CB_PACK_CLIP_LOOPING : 0) |
                 (cb_clip_is_additive(c) ? CB_PACK_CLIP_ADDITIVE : 0) |
                 (stride == 10 ? CB_PACK_CLIP_SCALE : 0));
    w_u32(w, encoding_of(z));
    w_u32(w, (uint32_t)rm.mode);
    w_u32(w, rm.joint);
    w_floats(w, rm.origin, 3);
    w_f32(w, rm.origin_yaw);
    w_f32(w, info != NULL ? info->max_error_m : -1.0f);
    w_f32(w, info != NULL ? info->error_bound_m : -1.0f);
    w_u32(w, cb_clip_marker_count(c));
    for (size_t k = 0; k < cb_clip_marker_count(c); ++k) {
        cb_clip_marker m;
        cb_clip_query_marker(c, k, &m);
        w_f32(w, m.time);
        w_u32(w, m.event_only ? CB_PACK_MARKER_EVENT_ONLY : 0);
        w_name(w, m.name);
    }
    if (z != NULL) {
        write_compressed(w, z);
    } else {
        size_t count = frames * n * stride;
        cb_result r = cb_clip_read_frames(c, (cb_float_span){scratch, count});
        if (r != CB_OK) {
            return r;
        }
        w_floats(w, scratch, count);
    }
    if (raw_root_track(c, z)) {
        cb_clip_read_root_track(c, (cb_float_span){scratch, frames * 4});
        w_floats(w, scratch, frames * 4);
    }
    return CB_OK;
}

static void write_mask(writer *w, const cb_pack_mask *m, size_t n)
{
    w_name(w, m->name);
    w_u32(w, (uint32_t)n);
    w_floats(w, m->weights.ptr, n);
}

static void write_graph(writer *w, const cb_pack_graph *g)
{
    w_name(w, g->name);
    w_u32(w, (uint32_t)g->length);
    w_bytes_padded(w, g->text, g->length, (g->length + 3) / 4 * 4);
}

/* The sections in canonical order: kind, size; one call computes them, the next writes. */
typedef struct section_plan {
    uint32_t kind, version;
    size_t index; /* into the desc's clips, masks or graphs */
    size_t offset, size;
} section_plan;

static size_t plan_sections(const cb_pack_desc *d, section_plan *plan)
{
    size_t n = cb_skeleton_joint_count(d->skeleton), count = 0;
    size_t at = CB_PACK_HEADER_BYTES + CB_PACK_TABLE_HEAD_BYTES +
                (1 + d->clip_count + d->mask_count + d->graph_count) * CB_PACK_ENTRY_BYTES;
    const size_t total = 1 + d->clip_count + d->mask_count + d->graph_count;
    for (size_t i = 0; i < total; ++i) {
        section_plan s = {0};
        if (i == 0) {
            s = (section_plan){CB_PACK_KIND_SKELETON, CB_PACK_SKELETON_VERSION, 0, 0,
                               skeleton_bytes(d)};
        } else if (i <= d->clip_count) {
            s = (section_plan){CB_PACK_KIND_CLIP,
                               cb_pack_clip_version_for(encoding_of(compressed_of(d, i - 1))),
                               i - 1, 0, clip_bytes(d->clips[i - 1], compressed_of(d, i - 1))};
        } else if (i <= d->clip_count + d->mask_count) {
            size_t k = i - 1 - d->clip_count;
            s = (section_plan){CB_PACK_KIND_MASK, CB_PACK_MASK_VERSION, k, 0,
                               mask_bytes(&d->masks[k], n)};
        } else {
            size_t k = i - 1 - d->clip_count - d->mask_count;
            s = (section_plan){CB_PACK_KIND_GRAPH, CB_PACK_GRAPH_VERSION, k, 0,
                               graph_bytes(&d->graphs[k])};
        }
        at = cb_round_up(at, CB_PACK_SECTION_ALIGN);
        s.offset = at;
        at += s.size;
        if (plan != NULL) {
            plan[count] = s;
        }
        ++count;
    }
    return at;
}

/* The largest float scratch a clip needs to be written. */
static size_t clip_scratch_floats(const cb_pack_desc *d)
{
    size_t most = 1;
    for (size_t i = 0; i < d->clip_count; ++i) {
        const cb_clip *c = d->clips[i];
        size_t f = cb_clip_frame_count(c) * cb_clip_joint_count(c) * cb_clip_frame_stride(c);
        most = f > most ? f : most;
    }
    return most;
}

/* The header and the section table's count; the entries are written with their sections. */
static void write_header(unsigned char *out, size_t total, size_t sections)
{
    memcpy(out, CB_PACK_MAGIC, CB_PACK_MAGIC_BYTES);
    cb_put_u32(out + 8, CB_PACK_VERSION);
    cb_put_u32(out + 12, 0);
    cb_put_u64(out + 16, total);
    cb_put_u32(out + CB_PACK_HEADER_BYTES, (uint32_t)sections);
}

/* Section i's entry in the table. */
static void write_entry(unsigned char *out, size_t i, const section_plan *s)
{
    unsigned char *e =
        out + CB_PACK_HEADER_BYTES + CB_PACK_TABLE_HEAD_BYTES + i * CB_PACK_ENTRY_BYTES;
    cb_put_u32(e, s->kind);
    cb_put_u32(e + 4, s->version);
    cb_put_u64(e + 8, s->offset);
    cb_put_u64(e + 16, s->size);
}

/* One section's body at its planned offset; only a clip can fail (its frames not decodable). */
static cb_result write_section(unsigned char *out, const cb_pack_desc *desc, const section_plan *s,
                               size_t n, float *scratch)
{
    writer w = {out + s->offset};
    if (s->kind == CB_PACK_KIND_SKELETON) {
        write_skeleton(&w, desc);
    } else if (s->kind == CB_PACK_KIND_CLIP) {
        size_t k = s->index;
        cb_result r = write_clip(&w, desc->clips[k], compressed_of(desc, k),
                                 desc->clip_info ? &desc->clip_info[k] : NULL, scratch);
        if (r != CB_OK) {
            return r;
        }
    } else if (s->kind == CB_PACK_KIND_MASK) {
        write_mask(&w, &desc->masks[s->index], n);
    } else {
        write_graph(&w, &desc->graphs[s->index]);
    }
    CB_ASSERT(w.p == out + s->offset + s->size);
    return CB_OK;
}

cb_result cb_pack_save_memory(const cb_pack_desc *desc, void *dst, size_t capacity, size_t *size,
                              cb_error *err)
{
    if (desc == NULL || size == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_pack_save_memory: %s is NULL",
                            desc == NULL ? "desc" : "size");
    }
    cb_result r = check_desc(desc, err);
    if (r != CB_OK) {
        return r;
    }
    const size_t total = plan_sections(desc, NULL);
    *size = total;
    if (dst == NULL) {
        return CB_OK;
    }
    if (capacity < total) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "cb_pack_save_memory: the pack takes %zu bytes, capacity is %zu", total,
                            capacity);
    }
    const size_t sections = 1 + desc->clip_count + desc->mask_count + desc->graph_count;
    section_plan *plan = malloc(sections * sizeof *plan);
    float *scratch = malloc(clip_scratch_floats(desc) * sizeof(float));
    if (plan == NULL || scratch == NULL) {
        free(plan);
        free(scratch);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_pack_save_memory: work memory");
    }
    plan_sections(desc, plan);
    unsigned char *out = dst;
    memset(out, 0, total);
    write_header(out, total, sections);
    size_t n = cb_skeleton_joint_count(desc->skeleton);
    for (size_t i = 0; i < sections; ++i) {
        write_entry(out, i, &plan[i]);
        r = write_section(out, desc, &plan[i], n, scratch);
        if (r != CB_OK) {
            /* nothing half-written is handed back: the caller's buffer is cleared */
            memset(out, 0, total);
            const cb_clip *failed = desc->clips[plan[i].index];
            free(plan);
            free(scratch);
            return cb_error_set(err, r,
                                "pack: clip \"%s\" cannot be decoded to write it "
                                "uncompressed",
                                cb_clip_name(failed));
        }
    }
    cb_put_u64(out + 24, cb_pack_checksum(out, total));
    free(plan);
    free(scratch);
    return CB_OK;
}

cb_result cb_pack_save(const cb_pack_desc *desc, const char *path, cb_error *err)
{
    if (path == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_pack_save: path is NULL");
    }
    size_t size = 0;
    cb_result r = cb_pack_save_memory(desc, NULL, 0, &size, err);
    if (r != CB_OK) {
        return r;
    }
    unsigned char *bytes = malloc(size);
    if (bytes == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_pack_save: %zu bytes", size);
    }
    r = cb_pack_save_memory(desc, bytes, size, &size, err);
    if (r != CB_OK) {
        free(bytes);
        return r;
    }
    /* Into a temporary file next to the target, then renamed: readers of `path` see the old file
     * or the whole new one, never a part. */
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (tmp == NULL) {
        free(bytes);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_pack_save: path");
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    FILE *f = fopen(tmp, "wb");
    bool ok = f != NULL && fwrite(bytes, 1, size, f) == size;
    ok = (f != NULL && fclose(f) == 0) && ok;
    if (ok && rename(tmp, path) != 0) {
        ok = false;
    }
    if (!ok) {
        remove(tmp);
        r = cb_error_set(err, CB_ERR_IO, "cb_pack_save: cannot write %s", path);
    }
    free(tmp);
    free(bytes);
    return r;
}
