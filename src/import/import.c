/* cb_import_file: scene (assimp) -> rig -> skeleton -> one clip per animation, each held to the
 * error bound; the result owns everything a pack needs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_impl.h"

enum { MAX_WARNINGS = 64, WARNING_BYTES = 256 };

struct cb_import {
    cb_skeleton *skeleton;
    cb_clip **clips;
    /* Per clip, the compressed form its clip samples and owns (cb_clip_compressed_form), or
     * NULL (raw): what the pack stores. */
    const cb_cclip **compressed;
    cb_import_clip_report *reports;
    cb_pack_clip_info *infos;
    uint32_t clip_count;
    float *inverse_binds; /* joint_count * 16 or NULL */
    size_t joint_count;
    char (*warnings)[WARNING_BYTES];
    uint32_t warning_count;
};

cb_import_desc cb_import_query_desc(const cb_import_desc *desc)
{
    cb_import_desc d = {0};
    if (desc != NULL) {
        d = *desc;
    }
    if (d.loop == _CB_IMPORT_LOOP_DEFAULT) {
        d.loop = CB_IMPORT_LOOP_AUTO;
    }
    if (d.compression == _CB_IMPORT_COMPRESSION_DEFAULT) {
        d.compression = CB_IMPORT_COMPRESSION_ON;
    }
    return d;
}

static cb_result validate(const cb_import_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "import desc: a canary is not 0");
    }
    if (d->path == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "import desc: path is NULL");
    }
    if (!isfinite(d->scale) || d->scale < 0.0f || !isfinite(d->max_error_m) ||
        d->max_error_m < 0.0f || !(d->compression_error_m >= 0.0f) ||
        !isfinite(d->compression_error_m) || !(d->compression_shell_m >= 0.0f) ||
        !isfinite(d->compression_shell_m)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "import desc: scale, max_error_m, compression_error_m and "
                            "compression_shell_m must be finite and > 0 (or 0 for the default)");
    }
    if (d->up < _CB_IMPORT_UP_DEFAULT || d->up >= _CB_IMPORT_UP_COUNT ||
        d->loop <= _CB_IMPORT_LOOP_DEFAULT || d->loop >= _CB_IMPORT_LOOP_COUNT ||
        d->compression <= _CB_IMPORT_COMPRESSION_DEFAULT ||
        d->compression >= _CB_IMPORT_COMPRESSION_COUNT ||
        d->root_motion < _CB_ROOT_MOTION_DEFAULT || d->root_motion >= _CB_ROOT_MOTION_COUNT ||
        d->skin < -1) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "import desc: up, loop, root_motion, compression or skin is out of "
                            "range");
    }
    if ((d->foot_left == NULL) != (d->foot_right == NULL)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "import desc: foot-plant detection needs both feet");
    }
    if (d->clips == NULL && d->clip_count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "import desc: clips is NULL");
    }
    return CB_OK;
}

static void warn(cb_import *imp, const char *text)
{
    if (text[0] != '\0' && imp->warning_count < MAX_WARNINGS) {
        snprintf(imp->warnings[imp->warning_count++], WARNING_BYTES, "%.255s", text);
    }
}

void cb_import_destroy(cb_import *imp)
{
    if (imp == NULL) {
        return;
    }
    for (size_t i = 0; i < imp->clip_count; ++i) {
        cb_clip_destroy(imp->clips[i]);
    }
    free(imp->clips);
    free((void *)imp->compressed);
    free(imp->reports);
    free(imp->infos);
    free(imp->inverse_binds);
    free(imp->warnings);
    cb_skeleton_destroy(imp->skeleton);
    free(imp);
}

static cb_result make_skeleton(const imp_scene *s, const imp_rig *rig, cb_import *imp,
                               cb_error *err)
{
    size_t n = rig->joint_count;
    cb_xform *rest = malloc(n * sizeof *rest);
    if (rest == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: rest pose");
    }
    for (size_t j = 0; j < n; ++j) {
        dxf x = imp_joint_local(s, rig, NULL, j, 0.0);
        for (int k = 0; k < 3; ++k) {
            rest[j].translation[k] = (float)x.t[k];
            rest[j].scale[k] = (float)x.s[k];
        }
        for (int k = 0; k < 4; ++k) {
            rest[j].rotation[k] = (float)x.q[k];
        }
    }
    cb_skeleton_desc sd = {
        .joint_count = n, .names = rig->names, .parents = rig->parents, .rest_pose = rest};
    cb_error inner = {0};
    cb_result r = cb_skeleton_create(&sd, &imp->skeleton, &inner);
    free(rest);
    if (r != CB_OK) {
        return cb_error_set(err, r, "import: skeleton: %s", inner.message);
    }
    imp->joint_count = n;
    if (rig->inverse_binds != NULL) {
        imp->inverse_binds = malloc(n * 16 * sizeof(float));
        if (imp->inverse_binds == NULL) {
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: inverse binds");
        }
        for (size_t i = 0; i < n * 16; ++i) {
            imp->inverse_binds[i] = (float)rig->inverse_binds[i];
        }
    }
    return CB_OK;
}

static bool scene_has_anim(const void *ctx, const char *name)
{
    const imp_scene *s = ctx;
    for (size_t a = 0; a < s->anim_count; ++a) {
        if (strcmp(s->anims[a].name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* The animations to import, in order; NULL entries never (names are checked). */
static cb_result pick_anims(const imp_scene *s, const cb_import_desc *d, const imp_anim **out,
                            size_t *count, cb_error *err)
{
    if (s->anim_count == 0) {
        return cb_error_set(err, CB_ERR_UNSUPPORTED, "import: %s has no animation", d->path);
    }
    if (d->clip_count == 0) {
        for (size_t a = 0; a < s->anim_count; ++a) {
            out[a] = &s->anims[a];
        }
        *count = s->anim_count;
        return CB_OK;
    }
    for (size_t i = 0; i < d->clip_count; ++i) {
        out[i] = NULL;
        for (size_t a = 0; a < s->anim_count && out[i] == NULL; ++a) {
            out[i] = strcmp(s->anims[a].name, d->clips[i]) == 0 ? &s->anims[a] : NULL;
        }
        if (out[i] == NULL) {
            return cb_error_set(err, CB_ERR_NOT_FOUND, "import: clip \"%s\" is not in %s",
                                d->clips[i], d->path);
        }
    }
    *count = d->clip_count;
    return CB_OK;
}

static cb_result check_feet(const imp_rig *rig, const cb_import_desc *d, cb_error *err)
{
    const char *feet[2] = {d->foot_left, d->foot_right};
    for (int k = 0; k < 2 && feet[k] != NULL; ++k) {
        bool found = false;
        for (size_t j = 0; j < rig->joint_count && !found; ++j) {
            found = strcmp(rig->names[j], feet[k]) == 0;
        }
        if (!found) {
            return cb_error_set(err, CB_ERR_NOT_FOUND,
                                "import: --detect-foot-plants: \"%s\" is not a joint", feet[k]);
        }
    }
    return CB_OK;
}

/* Clips of one import share a pack, so a name repeated in the file is made unique. */
static void unique_names(imp_scene *s, cb_import *imp)
{
    for (size_t a = 1; a < s->anim_count; ++a) {
        for (size_t b = 0; b < a; ++b) {
            if (strcmp(s->anims[a].name, s->anims[b].name) == 0) {
                char note[2 * WARNING_BYTES], name[CB_JOINT_NAME_MAX + 1];
                snprintf(name, sizeof name, "%.100s_%zu", s->anims[a].name, a);
                snprintf(note, sizeof note,
                         "two animations are named \"%.100s\": the second is now "
                         "\"%.120s\"",
                         s->anims[a].name, name);
                warn(imp, note);
                memcpy(s->anims[a].name, name, sizeof name);
                break;
            }
        }
    }
}

static cb_result build_clips(const imp_scene *s, const imp_rig *rig, const cb_import_desc *d,
                             const imp_marker_file *mf, cb_import *imp, cb_error *err)
{
    const imp_anim **anims = malloc((s->anim_count + d->clip_count + 1) * sizeof *anims);
    size_t count = 0;
    cb_result r = anims == NULL ? cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: clips")
                                : pick_anims(s, d, anims, &count, err);
    if (r == CB_OK) {
        imp->clips = calloc(count, sizeof *imp->clips);
        imp->compressed = calloc(count, sizeof *imp->compressed);
        imp->reports = calloc(count, sizeof *imp->reports);
        imp->infos = calloc(count, sizeof *imp->infos);
        if (imp->clips == NULL || imp->compressed == NULL || imp->reports == NULL ||
            imp->infos == NULL) {
            r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: clips");
        }
    }
    const double bound = d->max_error_m > 0.0f ? (double)d->max_error_m
                         : rig->height <= 2.5  ? 1e-4
                                               : 1e-4 * rig->height;
    /* The compression's bound and shell scale with the import's (tall figures, float32). */
    const double compress_bound =
        d->compression_error_m > 0.0f ? (double)d->compression_error_m : bound;
    const double compress_shell = d->compression_shell_m > 0.0f
                                      ? (double)d->compression_shell_m
                                      : CB_CCLIP_DEFAULT_SHELL_M * (compress_bound / 1e-4);
    for (size_t i = 0; i < count && r == CB_OK; ++i) {
        imp_clip_job job = {s, rig, anims[i], imp->skeleton, d, bound, NULL, 0};
        job.markers = imp_markers_for(mf, anims[i]->name, &job.marker_count);
        job.compress = d->compression == CB_IMPORT_COMPRESSION_ON;
        job.compress_bound_m = compress_bound;
        job.compress_within_bound = d->compression_error_m == 0.0f;
        job.compress_shell_m = compress_shell;
        char warning[WARNING_BYTES];
        r = imp_clip_build(&job, &imp->clips[i], &imp->compressed[i], &imp->reports[i], warning,
                           sizeof warning, err);
        if (r == CB_OK) {
            imp->infos[i] =
                (cb_pack_clip_info){imp->reports[i].max_error_m, imp->reports[i].error_bound_m};
            imp->clip_count++;
            warn(imp, warning);
        }
    }
    free(anims);
    return r;
}

cb_result cb_import_file(const cb_import_desc *desc, cb_import **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_import_file: %s is NULL",
                            desc == NULL ? "desc" : "out");
    }
    cb_import_desc d = cb_import_query_desc(desc);
    cb_result r = validate(&d, err);
    if (r != CB_OK) {
        return r;
    }
    cb_import *imp = calloc(1, sizeof *imp);
    if (imp == NULL || (imp->warnings = calloc(MAX_WARNINGS, WARNING_BYTES)) == NULL) {
        free(imp);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_import_file");
    }
    imp_scene scene;
    imp_rig rig = {0};
    imp_marker_file *mf = NULL;
    r = imp_scene_load(d.path, &scene, err);
    if (r != CB_OK) {
        cb_import_destroy(imp);
        return r;
    }
    char note[WARNING_BYTES] = "";
    r = imp_rig_build(&scene, &d, &rig, note, sizeof note, err);
    warn(imp, note);
    if (r == CB_OK) {
        r = check_feet(&rig, &d, err);
    }
    if (r == CB_OK) {
        r = make_skeleton(&scene, &rig, imp, err);
    }
    if (r == CB_OK && d.markers_path != NULL) {
        r = imp_markers_load(d.markers_path, &mf, err);
        const char *unknown =
            r == CB_OK ? imp_markers_unknown_clip(mf, scene_has_anim, &scene) : NULL;
        if (unknown != NULL) {
            r = cb_error_set(err, CB_ERR_NOT_FOUND, "import: %s names clip \"%s\", which %s lacks",
                             d.markers_path, unknown, d.path);
        }
    }
    if (r == CB_OK) {
        unique_names(&scene, imp);
        r = build_clips(&scene, &rig, &d, mf, imp, err);
    }
    imp_markers_free(mf);
    imp_rig_free(&rig);
    imp_scene_free(&scene);
    if (r != CB_OK) {
        cb_import_destroy(imp);
        return r;
    }
    *out = imp;
    return CB_OK;
}

const cb_skeleton *cb_import_skeleton(const cb_import *imp)
{
    return imp != NULL ? imp->skeleton : NULL;
}

uint32_t cb_import_clip_count(const cb_import *imp)
{
    return imp != NULL ? imp->clip_count : 0;
}

const cb_clip *cb_import_clip(const cb_import *imp, uint32_t index)
{
    return imp != NULL && index < imp->clip_count ? imp->clips[index] : NULL;
}

cb_import_clip_report cb_import_query_report(const cb_import *imp, uint32_t index)
{
    cb_import_clip_report r = {0};
    if (imp != NULL && index < imp->clip_count) {
        r = imp->reports[index];
    }
    return r;
}

uint32_t cb_import_warning_count(const cb_import *imp)
{
    return imp != NULL ? imp->warning_count : 0;
}

const char *cb_import_warning(const cb_import *imp, uint32_t index)
{
    return imp != NULL && index < imp->warning_count ? imp->warnings[index] : NULL;
}

cb_pack_desc cb_import_pack_desc(const cb_import *imp)
{
    cb_pack_desc d = {0};
    if (imp == NULL) {
        return d;
    }
    d.skeleton = imp->skeleton;
    d.inverse_binds =
        (cb_float_cspan){imp->inverse_binds, imp->inverse_binds ? imp->joint_count * 16 : 0};
    d.clips = (const cb_clip *const *)imp->clips;
    d.clip_count = imp->clip_count;
    d.clip_info = imp->infos;
    d.compressed = imp->compressed;
    return d;
}

const cb_cclip *cb_import_compressed_clip(const cb_import *imp, uint32_t index)
{
    return imp != NULL && index < imp->clip_count ? imp->compressed[index] : NULL;
}
