/* skinning_probe: one crowd frame loop in one output mode, for instruction counts under
 * callgrind (docs/performance.md, skinning). Public API only:
 *
 *   skinning_probe PACK MODE CHARACTERS FRAMES
 *
 * MODE: model (model matrices only), both (model + skinning, MAT4), skin (skinning only, MAT4),
 * skin34 (skinning only, 3x4). The crowd runs the pack's first graph (else its first clip) on
 * one thread; count only the frames with
 *   valgrind --tool=callgrind --toggle-collect=cb_crowd_update skinning_probe ...
 * and divide by CHARACTERS x FRAMES. Prints the output hash, so two builds can be compared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"

static cb_graph *graph_of(const cb_pack *p, cb_error *err)
{
    cb_graph_json_desc jd = {.skeleton = cb_pack_skeleton(p),
                             .clips = cb_pack_clips(p),
                             .clip_count = cb_pack_clip_count(p)};
    cb_graph *g = NULL;
    char text[512];
    const char *doc = text;
    size_t length;
    if (cb_pack_graph_count(p) > 0) {
        cb_pack_graph pg = cb_pack_query_graph(p, 0);
        doc = pg.text;
        length = pg.length;
    } else {
        snprintf(text, sizeof text,
                 "{\"root\": \"c\", \"nodes\": {\"c\": {\"type\": \"clip\", \"clip\": \"%s\"}}}",
                 cb_clip_name(cb_pack_clip(p, 0)));
        length = strlen(text);
    }
    return cb_graph_load_json(doc, length, &jd, &g, err) == CB_OK ? g : NULL;
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"model", "both", "skin", "skin34"};
    int mode = -1;
    for (int m = 0; argc == 5 && m < 4; ++m) {
        mode = strcmp(argv[2], modes[m]) == 0 ? m : mode;
    }
    uint32_t n = argc == 5 ? (uint32_t)strtoul(argv[3], NULL, 10) : 0;
    int frames = argc == 5 ? atoi(argv[4]) : 0;
    if (mode < 0 || n == 0 || frames <= 0) {
        fprintf(stderr, "usage: skinning_probe PACK model|both|skin|skin34 CHARACTERS FRAMES\n");
        return 2;
    }
    cb_error err = {0};
    cb_pack *p = NULL;
    cb_graph *g = NULL;
    cb_crowd *c = NULL;
    if (cb_pack_load_file(argv[1], NULL, &p, &err) != CB_OK || (g = graph_of(p, &err)) == NULL) {
        fprintf(stderr, "skinning_probe: %s\n", err.message);
        cb_pack_destroy(p);
        return 1;
    }
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc d = {.skeleton = cb_pack_skeleton(p),
                       .capacity = n,
                       .graphs = graphs,
                       .graph_count = 1,
                       .thread_count = 1};
    if (mode > 0) {
        d.inverse_binds = cb_pack_inverse_binds(p);
        d.skinning_only = mode >= 2;
        d.skinning_layout = mode == 3 ? CB_MATRIX_LAYOUT_MAT3X4 : CB_MATRIX_LAYOUT_MAT4;
    }
    int rc = 0;
    if (cb_crowd_create(&d, &c, &err) != CB_OK) {
        fprintf(stderr, "skinning_probe: %s\n", err.message);
        rc = 1;
    }
    for (uint32_t i = 0; rc == 0 && i < n; ++i) {
        cb_character ch;
        cb_crowd_add(c, 0, (float)i / (float)n, &ch);
    }
    for (int f = 0; rc == 0 && f < frames; ++f) {
        cb_crowd_update(c, 1.0f / 60.0f);
    }
    if (rc == 0) {
        printf("{\"mode\": \"%s\", \"characters\": %u, \"frames\": %d, \"hash\": \"%016llx\"}\n",
               modes[mode], n, frames, (unsigned long long)cb_crowd_output_hash(c));
    }
    cb_crowd_destroy(c);
    cb_graph_destroy(g);
    cb_pack_destroy(p);
    return rc;
}
