/* Playback-rate warping of a blend space (graph.h cb_graph_rate_warp) beside W2:
 *   rate_warp_frame/10000/M   one cb_crowd_update of 10,000 characters on one thread, M:
 *     0  a W2-like graph from JSON: the 17 idle/walk/run clips on a 2D Freeform Directional
 *        blend space over the local velocity, an upper-body override and an additive layer
 *        (flat: the runtime's fast path);
 *     1  the same graph with "rate_warp" on the blend space (speed_param: the speed), which
 *        leaves the flat path: the warp's whole cost;
 *     2  W2 itself (cb_graph_create_blend with its two layers), for reference;
 *     3  mode 1 with both bounds 1: the bits of mode 0 (tests/test_rate_warp.c) with the
 *        warp's arithmetic done (all of 0-3 run the flat path);
 *     4  mode 1 with idle in a sync group of its own (as the follow example has it), which
 *        runs the general path;
 *     5  mode 4 without the warp: what 4 adds the warp to.
 * The agents walk and run on slowly turning circles (0.4 to 3.0 m/s, set outside the timing), so
 * the warp's rate is inside its bounds for some and clamped for others. Run with
 * --benchmark_enable_random_interleaving=true --benchmark_repetitions=N to compare medians
 * taken side by side. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_all.h"
#include "crowdblend/crowdblend.h"
#include "follow_world.h"
#include "shim.h"

typedef struct warp_world {
    cb_embedded *set;
    cb_graph *graph;
    cb_crowd *crowd;
    uint32_t n;
    float *vx, *vy, *speed; /* the crowd's columns (speed: NULL without the warp) */
} warp_world;

static void warp_world_destroy(warp_world *w)
{
    cb_crowd_destroy(w->crowd);
    cb_graph_destroy(w->graph);
    cb_embedded_destroy(w->set);
}

/* The W2-like graph as JSON, with or without the warp; positions from each clip's root velocity
 * (x: left, y: forward), as cb_graph_create_blend places them. */
static cb_result load_w2_json(warp_world *w, int mode)
{
    static char json[8192];
    int at =
        snprintf(json, sizeof json,
                 "{\"name\": \"w2_json\", \"parameters\": [{\"name\": \"vx\"}, {\"name\": "
                 "\"vy\"}, {\"name\": \"speed\"}, {\"name\": \"upper_w\", \"default\": "
                 "0.25}, {\"name\": \"lean_w\", \"default\": 0.5}], \"root\": \"top\", "
                 "\"nodes\": {\"top\": {\"type\": \"layers\", \"base\": \"loco\", "
                 "\"layers\": [{\"node\": \"wave\", \"mode\": \"override\", \"weight\": "
                 "\"upper_w\", \"mask_joint\": \"spine_01\"}, {\"node\": \"lean\", \"mode\": "
                 "\"additive\", \"weight\": \"lean_w\"}]},"
                 "\"wave\": {\"type\": \"clip\", \"clip\": \"wave_upper\"},"
                 "\"lean\": {\"type\": \"clip\", \"clip\": \"lean_add\"},"
                 "\"loco\": {\"type\": \"blend_space\", \"solver\": "
                 "\"freeform_directional_2d\", \"params\": [\"vx\", \"vy\"], %s\"children\": [",
                 mode == 1 || mode == 4 ? "\"rate_warp\": {\"speed_param\": \"speed\"}, "
                 : mode == 3            ? "\"rate_warp\": {\"speed_param\": \"speed\", "
                                          "\"min_rate\": 1, \"max_rate\": 1}, "
                                        : "");
    for (int k = 0; k < 17; ++k) {
        cb_clip_root_motion rm =
            cb_clip_query_root_motion(cb_embedded_find_clip(w->set, follow_world_w2_clips[k]));
        at += snprintf(json + at, sizeof json - (size_t)at,
                       "%s{\"node\": \"%s\", \"position\": [%.6f, %.6f]}", k > 0 ? ", " : "",
                       follow_world_w2_clips[k], -(double)rm.right_mps, (double)rm.forward_mps);
    }
    at += snprintf(json + at, sizeof json - (size_t)at, "]}");
    for (int k = 0; k < 17; ++k) {
        at += snprintf(json + at, sizeof json - (size_t)at,
                       ", \"%s\": {\"type\": \"clip\", \"clip\": \"%s\"%s}",
                       follow_world_w2_clips[k], follow_world_w2_clips[k],
                       k == 0 && mode >= 4 ? ", \"sync_group\": \"rest\"" : "");
    }
    snprintf(json + at, sizeof json - (size_t)at, "}}");
    const cb_clip *clips[32];
    uint32_t count = cb_embedded_clip_count(w->set);
    count = count < 32 ? count : 32;
    for (uint32_t k = 0; k < count; ++k) {
        clips[k] = cb_embedded_clip(w->set, k);
    }
    cb_graph_json_desc jd = {
        .skeleton = cb_embedded_skeleton(w->set), .clips = clips, .clip_count = count};
    cb_error err = {0};
    cb_result r = cb_graph_load_json(json, strlen(json), &jd, &w->graph, &err);
    if (r != CB_OK) {
        fprintf(stderr, "rate_warp bench: %s\n", err.message);
    }
    return r;
}

static float *column(warp_world *w, const char *name)
{
    uint32_t p;
    return cb_crowd_find_param(w->crowd, 0, name, &p) == CB_OK
               ? cb_crowd_param_column(w->crowd, 0, p)
               : NULL;
}

static bool warp_world_create(warp_world *w, uint32_t n, int mode)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    if (cb_embedded_create(NULL, &w->set, NULL) != CB_OK ||
        (mode == 2 ? follow_world_w2_graph(w->set, &w->graph) : load_w2_json(w, mode)) != CB_OK) {
        return false;
    }
    const cb_graph *graphs[1] = {w->graph};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(w->set),
                        .capacity = n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1};
    if (cb_crowd_create(&cd, &w->crowd, NULL) != CB_OK) {
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        if (cb_crowd_add(w->crowd, 0, (float)((i * 2654435761u) % 1000u) / 1000.0f, &ch) != CB_OK) {
            return false;
        }
    }
    w->vx = column(w, mode == 2 ? CB_GRAPH_BLEND_PARAM_PREFIX "0" : "vx");
    w->vy = column(w, mode == 2 ? CB_GRAPH_BLEND_PARAM_PREFIX "1" : "vy");
    bool warped = mode == 1 || mode == 3 || mode == 4;
    w->speed = warped ? column(w, "speed") : NULL;
    if (mode == 2) { /* the layers' weights of the JSON graph's defaults */
        float *upper = column(w, CB_GRAPH_BLEND_UPPER_WEIGHT);
        float *lean = column(w, CB_GRAPH_BLEND_ADDITIVE_WEIGHT);
        for (uint32_t i = 0; upper != NULL && lean != NULL && i < n; ++i) {
            upper[i] = 0.25f, lean[i] = 0.5f;
        }
    }
    return w->vx != NULL && w->vy != NULL && (!warped || w->speed != NULL);
}

/* Frame f's commands: agent i at 0.4 .. 3.0 m/s on a slowly turning circle, in its frame. */
static void command(warp_world *w, uint32_t frame)
{
    for (uint32_t i = 0; i < w->n; ++i) {
        float s = 0.4f + 2.6f * (float)(i % 7) / 6.0f;
        float a = (0.2f + 0.1f * (float)(i % 5)) * (float)frame / 60.0f + (float)i;
        w->vx[i] = s * sinf(a);
        w->vy[i] = s * cosf(a);
        if (w->speed != NULL) {
            w->speed[i] = s;
        }
    }
}

static void bm_rate_warp_frame(cb_bench_state *st, void *user)
{
    (void)user;
    warp_world w;
    if (!warp_world_create(&w, (uint32_t)cb_bench_range(st, 0), (int)cb_bench_range(st, 1))) {
        cb_bench_skip_with_error(st, "setup failed");
        warp_world_destroy(&w);
        return;
    }
    uint32_t frame = 0;
    for (; frame < 30; ++frame) { /* groups and clips running */
        command(&w, frame);
        cb_crowd_update(w.crowd, 1.0f / 60.0f);
    }
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        command(&w, frame++);
        cb_bench_resume_timing(st);
        cb_crowd_update(w.crowd, 1.0f / 60.0f);
    }
    double chars = (double)w.n * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)chars);
    cb_bench_set_counter(st, "per_character", chars,
                         CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    warp_world_destroy(&w);
}

void cb_bench_register_rate_warp(void)
{
    for (int mode = 0; mode < 6; ++mode) {
        cb_bench_args2(cb_bench_register("rate_warp_frame", bm_rate_warp_frame, NULL), 10000, mode);
    }
}
