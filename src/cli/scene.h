/* What the demo and the benchmarks run: the embedded locomotion set in a crowd, and a host
 * simulation that makes the characters wander with varied, changing velocities. */
#ifndef CROWDBLEND_CLI_SCENE_H
#define CROWDBLEND_CLI_SCENE_H

#include <stdbool.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"

/* The 17 locomotion clips of the embedded set, in blend-space node order. */
enum { CB_SCENE_LOCOMOTION_CLIPS = 17 };

typedef struct cb_scene_desc {
    uint32_t characters;
    uint32_t threads;          /* 0: all online CPUs */
    uint32_t batch_size;       /* 0: the crowd's default */
    cb_solver_kind solver;     /* 0: freeform directional */
    bool layers;               /* additive lean + masked upper-body wave */
    bool fixed_three_clips;    /* W1: a DIRECT blend of walk_f, run_f, walk_fr at fixed weights */
    /* A graph to run instead of the blend-space crowd: the name of an example graph
     * (src/cli/example_graphs.h) or a JSON file. The host drives the parameters it knows by
     * name (cb_scene_host_step); others keep their defaults. NULL: the blend-space crowd. */
    const char *graph;
    bool profile;
    uint64_t seed;
    /* Most characters at once (cb_scene_add); 0: `characters`. */
    uint32_t capacity;
    /* Keep the clip weights of each frame (cb_crowd_weights), for `crowdblend serve`. */
    bool keep_weights;
    /* Report events even for the blend-space crowd (a graph's crowd always does). */
    bool events;
    /* The pool to run the crowd on (shared with the host's own parallel work); NULL: the
     * crowd's own, of `threads` threads. */
    cb_jobs *jobs;
    /* issue 10: a pack's skeleton and clips instead of the embedded set. Needs `graph`: a file,
     * or the name of a graph text stored in the pack. Not owned. */
    const cb_pack *pack;
    /* Half the side of the square (m, centred on the origin) where characters appear; 0: 200. */
    float area;
    /* Leave root motion out (cb_crowd_desc.skip_root_motion): workload W6. */
    bool skip_root_motion;
    /* The crowd's output layout (cb_crowd_desc.matrix_layout; 0: MAT4): `crowdblend bench
     * --layout`. */
    cb_matrix_layout matrix_layout;
} cb_scene_desc;

typedef struct cb_scene cb_scene;

/* The graph a scene on `pack` runs when none is named: the pack's first stored graph, or NULL
 * when it stores none (a pack's clips then need a graph file). */
const char *cb_scene_pack_default_graph(const cb_pack *pack);

/* Builds everything; on failure prints the reason to stderr and returns NULL. */
cb_scene *cb_scene_create(const cb_scene_desc *desc);
void cb_scene_destroy(cb_scene *scene);

cb_crowd *cb_scene_crowd(cb_scene *scene);
uint32_t cb_scene_threads(const cb_scene *scene);

/* The graph a scene runs (NULL for the blend-space crowd, which has its own). */
const cb_graph *cb_scene_graph(const cb_scene *scene);

/* The host's part of a frame: moves the characters by last frame's root motion (or, when a
 * pack's clips all play in place, by last frame's "vx", "vy" velocity parameters), steers them,
 * and writes their parameters into the crowd's columns. Not timed by the benchmarks. For a
 * graph, the parameters it drives, when the graph declares them: "vx", "vy" (velocity to the
 * left, +X, and forward, m/s), "wave" (upper-body layer weight), "look" and "look_x/y/z" (look-at
 * weight and target, model space: +Y up, +Z forward, +X left), "w_lean" (additive lean
 * weight), and any other float named "w_..." (a weight that drifts slowly in [0, 1]). */
void cb_scene_host_step(cb_scene *scene, float dt_s);

/* Where the character at dense index `dense` stands: world position (m, +Y up; y is 0) and
 * heading (rad about +Y; the character faces +Z at 0). */
void cb_scene_root(const cb_scene *scene, uint32_t dense, float position[3], float *yaw);

/* Adds a wandering character at a random place (within the capacity); CB_ERR_CAPACITY when
 * full. */
cb_result cb_scene_add(cb_scene *scene, cb_character *out);

/* Removes a character; the host's agent moves with the crowd's swap-remove. */
cb_result cb_scene_remove(cb_scene *scene, cb_character character);

#endif
