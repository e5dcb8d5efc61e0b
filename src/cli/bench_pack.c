/* `crowdblend bench --pack FILE.cbpack`: the figures of docs/performance.md's per-asset table
 * that need the runtime: how long a load of the pack takes (median of 21, file read included),
 * and a W1-style frame on the pack's skeleton: 1,000 characters on one thread, a DIRECT blend of
 * three of its clips at fixed weights 0.5 / 0.3 / 0.2 (repeating clips when it has fewer),
 * sample + blend + local-to-model, characters per second per core (median of 300 frames).
 * With inverse binds, also what skinning output costs on that frame: four crowds, model
 * matrices only, model + skinning (MAT4), skinning only (MAT4, 3x4), their frames interleaved
 * so that the machine's load falls on all alike; nanoseconds per character (medians), with
 * 1,000 characters (outputs in cache) and 10,000 (outputs stream to memory). And the two forms
 * a loaded pack can hold its compressed clips in (crowdblend/pack.h, COMPRESSED CLIPS): kept
 * compressed (the default) against decoded to frames at load, side by side: loads interleaved,
 * the clips' memory, and the W1 frame of both crowds, their frames interleaved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

/* A JSON string body with quotes and backslashes escaped. */
static void escaped(char *out, size_t size, const char *s)
{
    size_t o = 0;
    for (; *s != '\0' && o + 3 < size; ++s) {
        if (*s == '"' || *s == '\\') {
            out[o++] = '\\';
        }
        out[o++] = *s;
    }
    out[o] = '\0';
}

/* The W1 graph over clips a, b, c of the pack. */
static cb_result w1_graph(const cb_pack *p, cb_graph **out, cb_error *err)
{
    size_t n = cb_pack_clip_count(p);
    char names[3][2 * CB_JOINT_NAME_MAX + 2], text[2048];
    for (int k = 0; k < 3; ++k) {
        escaped(names[k], sizeof names[k], cb_clip_name(cb_pack_clip(p, (size_t)k % n)));
    }
    snprintf(text, sizeof text,
             "{\"name\": \"w1\", \"parameters\": [{\"name\": \"w0\", \"default\": 0.5}, "
             "{\"name\": \"w1\", \"default\": 0.3}, {\"name\": \"w2\", \"default\": 0.2}], "
             "\"root\": \"d\", \"nodes\": {\"d\": {\"type\": \"direct\", \"children\": ["
             "{\"node\": \"c0\", \"weight\": \"w0\"}, {\"node\": \"c1\", \"weight\": \"w1\"}, "
             "{\"node\": \"c2\", \"weight\": \"w2\"}]}, \"c0\": {\"type\": \"clip\", \"clip\": "
             "\"%s\"}, \"c1\": {\"type\": \"clip\", \"clip\": \"%s\"}, \"c2\": {\"type\": "
             "\"clip\", \"clip\": \"%s\"}}}",
             names[0], names[1], names[2]);
    cb_graph_json_desc jd = {.skeleton = cb_pack_skeleton(p),
                             .clips = cb_pack_clips(p),
                             .clip_count = (uint32_t)n,
                             .source_name = "w1"};
    return cb_graph_load_json(text, strlen(text), &jd, out, err);
}

static double frame_rate(const cb_pack *p, cb_error *err)
{
    enum { CHARACTERS = 1000, FRAMES = 300 };
    cb_graph *g = NULL;
    if (w1_graph(p, &g, err) != CB_OK) {
        return -1.0;
    }
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc cd = {.skeleton = cb_pack_skeleton(p),
                        .capacity = CHARACTERS,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1};
    cb_crowd *crowd = NULL;
    double cps = -1.0;
    if (cb_crowd_create(&cd, &crowd, err) == CB_OK) {
        for (uint32_t i = 0; i < CHARACTERS; ++i) {
            cb_character ch;
            cb_crowd_add(crowd, 0, (float)i / CHARACTERS, &ch);
        }
        double ns[FRAMES];
        for (int f = -3; f < FRAMES; ++f) {
            uint64_t t0 = cb_now_ns();
            cb_crowd_update(crowd, 1.0f / 60.0f);
            if (f >= 0) {
                ns[f] = (double)(cb_now_ns() - t0);
            }
        }
        cps = CHARACTERS / (cb_median(ns, FRAMES) / 1e9);
    }
    cb_crowd_destroy(crowd);
    cb_graph_destroy(g);
    return cps;
}

/* The outputs of the skinning comparison, in the order bench prints them. */
enum { SKIN_MODES = 4 };
static const char *const skin_mode_names[SKIN_MODES] = {"model", "model_and_skinning",
                                                        "skinning_only_mat4", "skinning_only_3x4"};

static cb_result skin_crowd(const cb_pack *p, const cb_graph *const *graphs, int mode,
                            uint32_t characters, cb_crowd **out, cb_error *err)
{
    cb_crowd_desc cd = {.skeleton = cb_pack_skeleton(p),
                        .capacity = characters,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1};
    if (mode > 0) {
        cd.inverse_binds = cb_pack_inverse_binds(p);
        cd.skinning_only = mode >= 2;
        cd.skinning_layout = mode == 3 ? CB_MATRIX_LAYOUT_MAT3X4 : CB_MATRIX_LAYOUT_MAT4;
    }
    cb_result r = cb_crowd_create(&cd, out, err);
    for (uint32_t i = 0; i < characters && r == CB_OK; ++i) {
        cb_character ch;
        r = cb_crowd_add(*out, 0, (float)i / characters, &ch);
    }
    return r;
}

/* ns per character of the W1 frame for each mode: interleaved frames, rotating which mode goes
 * first, medians of FRAMES. */
static cb_result skinning_costs(const cb_pack *p, uint32_t characters,
                                double ns_per_character[SKIN_MODES], cb_error *err)
{
    enum { FRAMES = 101 };
    cb_graph *g = NULL;
    cb_crowd *crowds[SKIN_MODES] = {0};
    cb_result r = w1_graph(p, &g, err);
    const cb_graph *graphs[1] = {g};
    for (int m = 0; m < SKIN_MODES && r == CB_OK; ++m) {
        r = skin_crowd(p, graphs, m, characters, &crowds[m], err);
    }
    static double ns[SKIN_MODES][FRAMES];
    for (int f = -3; f < FRAMES && r == CB_OK; ++f) {
        for (int k = 0; k < SKIN_MODES; ++k) {
            int m = (k + (f < 0 ? 0 : f)) % SKIN_MODES;
            uint64_t t0 = cb_now_ns();
            cb_crowd_update(crowds[m], 1.0f / 60.0f);
            if (f >= 0) {
                ns[m][f] = (double)(cb_now_ns() - t0) / characters;
            }
        }
    }
    for (int m = 0; m < SKIN_MODES; ++m) {
        ns_per_character[m] = r == CB_OK ? cb_median(ns[m], FRAMES) : -1.0;
        cb_crowd_destroy(crowds[m]);
    }
    cb_graph_destroy(g);
    return r;
}

static const uint32_t skin_sizes[2] = {1000, 10000};

static void print_skinning(double ns[2][SKIN_MODES], bool json)
{
    for (int k = 0; k < 2; ++k) {
        if (json) {
            printf(", \"skinning_ns_per_character_%u\": {", skin_sizes[k]);
            for (int m = 0; m < SKIN_MODES; ++m) {
                printf("%s\"%s\": %.1f", m ? ", " : "", skin_mode_names[m], ns[k][m]);
            }
            printf("}");
            continue;
        }
        printf("skinning on that frame, %u characters, ns per character (interleaved medians): "
               "model matrices only %.1f, model + skinning %.1f, skinning only %.1f (MAT4) / "
               "%.1f (3x4)\n",
               skin_sizes[k], ns[k][0], ns[k][1], ns[k][2], ns[k][3]);
    }
}

/* What one clip form costs (clip_forms). */
typedef struct form_figures {
    double load_ms, ns_per_character;
    size_t clip_bytes;
} form_figures;

enum { FORMS = 2 };
static const cb_pack_clip_form form_of[FORMS] = {CB_PACK_CLIP_FORM_COMPRESSED,
                                                 CB_PACK_CLIP_FORM_RAW};
static const char *const form_names[FORMS] = {"compressed", "raw"};

/* Loads the pack in both forms, LOADS times each, interleaved. */
static cb_result load_forms(const char *path, cb_pack *p[FORMS], form_figures out[FORMS],
                            cb_error *err)
{
    enum { LOADS = 21 };
    double ms[FORMS][LOADS];
    cb_result r = CB_OK;
    for (int k = 0; k < LOADS && r == CB_OK; ++k) {
        for (int f = 0; f < FORMS && r == CB_OK; ++f) {
            cb_pack_load_desc d = {.clip_form = form_of[f]};
            cb_pack_destroy(p[f]);
            p[f] = NULL;
            uint64_t t0 = cb_now_ns();
            r = cb_pack_load_file(path, &d, &p[f], err);
            ms[f][k] = (double)(cb_now_ns() - t0) / 1e6;
        }
    }
    for (int f = 0; f < FORMS && r == CB_OK; ++f) {
        out[f].load_ms = cb_median(ms[f], LOADS);
        out[f].clip_bytes = 0;
        for (size_t i = 0; i < cb_pack_clip_count(p[f]); ++i) {
            out[f].clip_bytes += cb_clip_bytes(cb_pack_clip(p[f], i));
        }
    }
    return r;
}

/* The W1 frame (1,000 characters, one thread, model matrices) on each form, the crowds' frames
 * interleaved with the order rotating, medians of FRAMES. */
static cb_result clip_forms(const char *path, form_figures out[FORMS], cb_error *err)
{
    enum { FRAMES = 301, CHARACTERS = 1000 };
    cb_pack *p[FORMS] = {0};
    cb_graph *g[FORMS] = {0};
    cb_crowd *c[FORMS] = {0};
    cb_result r = load_forms(path, p, out, err);
    for (int f = 0; f < FORMS && r == CB_OK; ++f) {
        r = w1_graph(p[f], &g[f], err);
        const cb_graph *graphs[1] = {g[f]};
        r = r == CB_OK ? skin_crowd(p[f], graphs, 0, CHARACTERS, &c[f], err) : r;
    }
    static double ns[FORMS][FRAMES];
    for (int k = -3; k < FRAMES && r == CB_OK; ++k) {
        for (int i = 0; i < FORMS; ++i) {
            int f = (i + (k < 0 ? 0 : k)) % FORMS;
            uint64_t t0 = cb_now_ns();
            cb_crowd_update(c[f], 1.0f / 60.0f);
            if (k >= 0) {
                ns[f][k] = (double)(cb_now_ns() - t0) / CHARACTERS;
            }
        }
    }
    for (int f = 0; f < FORMS; ++f) {
        out[f].ns_per_character = r == CB_OK ? cb_median(ns[f], FRAMES) : -1.0;
        cb_crowd_destroy(c[f]);
        cb_graph_destroy(g[f]);
        cb_pack_destroy(p[f]);
    }
    return r;
}

static void print_forms(const form_figures f[FORMS], bool json)
{
    if (json) {
        printf(", \"clip_forms\": {");
        for (int k = 0; k < FORMS; ++k) {
            printf("%s\"%s\": {\"clip_bytes\": %zu, \"load_ms\": %.4f, "
                   "\"w1_ns_per_character\": %.1f}",
                   k ? ", " : "", form_names[k], f[k].clip_bytes, f[k].load_ms,
                   f[k].ns_per_character);
        }
        printf("}");
        return;
    }
    printf("clips kept compressed (default) / decoded at load (raw), interleaved: clip memory %zu "
           "/ %zu bytes, load %.3f / %.3f ms, W1 frame %.1f / %.1f ns per character "
           "(compressed / raw %.2fx)\n",
           f[0].clip_bytes, f[1].clip_bytes, f[0].load_ms, f[1].load_ms, f[0].ns_per_character,
           f[1].ns_per_character, f[0].ns_per_character / f[1].ns_per_character);
}

int cb_bench_pack(const char *path, bool json)
{
    enum { LOADS = 21 };
    double ms[LOADS];
    cb_pack *p = NULL;
    cb_error err = {0};
    for (int k = 0; k < LOADS; ++k) {
        cb_pack_destroy(p);
        uint64_t t0 = cb_now_ns();
        if (cb_pack_load_file(path, NULL, &p, &err) != CB_OK) {
            fprintf(stderr, "crowdblend bench: %s\n", err.message);
            return CB_EXIT_FAILURE;
        }
        ms[k] = (double)(cb_now_ns() - t0) / 1e6;
    }
    double load_ms = cb_median(ms, LOADS);
    double cps = cb_pack_clip_count(p) > 0 ? frame_rate(p, &err) : -1.0;
    if (cps < 0.0) {
        fprintf(stderr, "crowdblend bench: W1 on %s: %s\n", path, err.message);
        cb_pack_destroy(p);
        return CB_EXIT_FAILURE;
    }
    double skin_ns[2][SKIN_MODES];
    bool skin = cb_pack_inverse_binds(p).count > 0;
    if (skin && (skinning_costs(p, skin_sizes[0], skin_ns[0], &err) != CB_OK ||
                 skinning_costs(p, skin_sizes[1], skin_ns[1], &err) != CB_OK)) {
        fprintf(stderr, "crowdblend bench: skinning on %s: %s\n", path, err.message);
        cb_pack_destroy(p);
        return CB_EXIT_FAILURE;
    }
    form_figures forms[FORMS];
    if (clip_forms(path, forms, &err) != CB_OK) {
        fprintf(stderr, "crowdblend bench: clip forms of %s: %s\n", path, err.message);
        cb_pack_destroy(p);
        return CB_EXIT_FAILURE;
    }
    size_t joints = cb_skeleton_joint_count(cb_pack_skeleton(p));
    if (json) {
        printf("{\"pack\": \"%s\", \"joints\": %zu, \"clips\": %u, \"load_ms\": %.4f, "
               "\"w1_characters_per_second_per_core\": %.0f, \"simd_width\": %zu",
               path, joints, cb_pack_clip_count(p), load_ms, cps, cb_simd_width());
        if (skin) {
            print_skinning(skin_ns, true);
        }
        print_forms(forms, true);
        printf("}\n");
    } else {
        printf("%s: %zu joints, %u clips; load %.3f ms (median of %d); W1-style frame on this "
               "skeleton: %.0f characters/s on one core (W = %zu)\n",
               path, joints, cb_pack_clip_count(p), load_ms, LOADS, cps, cb_simd_width());
        if (skin) {
            print_skinning(skin_ns, false);
        }
        print_forms(forms, false);
    }
    cb_pack_destroy(p);
    return CB_EXIT_OK;
}
