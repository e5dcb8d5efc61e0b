/* The sidecar marker file of `crowdblend import --markers FILE`:
 *   {"Walk": [{"name": "foot_plant_l", "time_s": 0.1}, {"name": "step", "time_s": 0.4,
 *              "event_only": true}], "Run": [...]}
 * Clip names map to arrays of markers; names and times are checked again by cb_clip_create. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_impl.h"

typedef struct marker_clip {
    const char *clip;
    cb_clip_marker_desc *markers;
    size_t count;
} marker_clip;

struct imp_marker_file {
    json_t *root; /* owns the strings the markers point at */
    marker_clip *clips;
    size_t clip_count;
};

void imp_markers_free(imp_marker_file *f)
{
    if (f == NULL) {
        return;
    }
    for (size_t i = 0; i < f->clip_count; ++i) {
        free(f->clips[i].markers);
    }
    free(f->clips);
    json_decref(f->root);
    free(f);
}

static cb_result read_marker(const char *path, const char *clip, size_t i, json_t *m,
                             cb_clip_marker_desc *out, cb_error *err)
{
    const char *key;
    json_t *value;
    json_object_foreach(m, key, value)
    {
        if (strcmp(key, "name") != 0 && strcmp(key, "time_s") != 0 &&
            strcmp(key, "event_only") != 0) {
            return cb_error_set(err, CB_ERR_PARSE, "%s: \"%s\"[%zu]: unknown key \"%s\"", path, clip,
                             i, key);
        }
    }
    json_t *name = json_object_get(m, "name"), *time = json_object_get(m, "time_s");
    json_t *ev = json_object_get(m, "event_only");
    if (!json_is_string(name) || !json_is_number(time) || (ev != NULL && !json_is_boolean(ev))) {
        return cb_error_set(err, CB_ERR_PARSE,
                         "%s: \"%s\"[%zu]: a marker is {\"name\": string, \"time_s\": number, "
                         "\"event_only\": bool (optional)}",
                         path, clip, i);
    }
    *out = (cb_clip_marker_desc){json_string_value(name), (float)json_number_value(time),
                                 json_is_true(ev)};
    return CB_OK;
}

cb_result imp_markers_load(const char *path, imp_marker_file **out, cb_error *err)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        return cb_error_set(err, jerr.line < 0 ? CB_ERR_IO : CB_ERR_PARSE, "%s:%d:%d: %s", path,
                         jerr.line, jerr.column, jerr.text);
    }
    imp_marker_file *f = calloc(1, sizeof *f);
    if (f == NULL) {
        json_decref(root);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", path);
    }
    f->root = root;
    if (!json_is_object(root)) {
        imp_markers_free(f);
        return cb_error_set(err, CB_ERR_PARSE, "%s: expected an object of clip names", path);
    }
    f->clips = calloc(json_object_size(root) + 1, sizeof *f->clips);
    if (f->clips == NULL) {
        imp_markers_free(f);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", path);
    }
    const char *clip;
    json_t *list;
    json_object_foreach(root, clip, list)
    {
        if (!json_is_array(list)) {
            imp_markers_free(f);
            return cb_error_set(err, CB_ERR_PARSE, "%s: \"%s\": expected an array of markers", path,
                             clip);
        }
        marker_clip *mc = &f->clips[f->clip_count++];
        mc->clip = clip;
        mc->count = json_array_size(list);
        mc->markers = calloc(mc->count + 1, sizeof *mc->markers);
        if (mc->markers == NULL) {
            imp_markers_free(f);
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s", path);
        }
        for (size_t i = 0; i < mc->count; ++i) {
            cb_result r = read_marker(path, clip, i, json_array_get(list, i), &mc->markers[i], err);
            if (r != CB_OK) {
                imp_markers_free(f);
                return r;
            }
        }
    }
    *out = f;
    return CB_OK;
}

const cb_clip_marker_desc *imp_markers_for(const imp_marker_file *f, const char *clip,
                                           size_t *count)
{
    *count = 0;
    for (size_t i = 0; f != NULL && i < f->clip_count; ++i) {
        if (strcmp(f->clips[i].clip, clip) == 0) {
            *count = f->clips[i].count;
            return f->clips[i].markers;
        }
    }
    return NULL;
}

const char *imp_markers_unknown_clip(const imp_marker_file *f,
                                     bool (*has)(const void *ctx, const char *clip),
                                     const void *ctx)
{
    for (size_t i = 0; f != NULL && i < f->clip_count; ++i) {
        if (!has(ctx, f->clips[i].clip)) {
            return f->clips[i].clip;
        }
    }
    return NULL;
}
