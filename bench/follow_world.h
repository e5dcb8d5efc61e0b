/* The worlds of the follow benchmarks (bench_follow.c) and of follow_probe.c, built once so that
 * the google-benchmark figures and the callgrind probe measure the same crowds:
 *   follow_world_w2        a W2 crowd (the 17 locomotion clips as a blend space, additive and
 *                          upper-body layers), with a follower or without (the host writes the
 *                          local velocity itself: follow_world_host_velocity);
 *   follow_world_features  the example graph locomotion_follow with a follower whose features
 *                          are the bits of `mode`: 1 playback-rate warping, 2 foot locking,
 *                          4 the heading's turn limited to 0.25 rad/s (headings lag their
 *                          velocities), 8 orientation warping, 16 stride warping, 32 the
 *                          foot_lock step's pelvis drop (pelvis_drop_m 0.05).
 * Both add n characters on one thread; follow_world_move is frame f of the agents' motion (each
 * walks or runs at 0.4-3.0 m/s on a slowly turning circle). */
#ifndef CROWDBLEND_BENCH_FOLLOW_WORLD_H
#define CROWDBLEND_BENCH_FOLLOW_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"

typedef struct follow_world {
    cb_embedded *set;
    cb_graph *graph; /* the feature worlds' locomotion_follow */
    cb_crowd *crowd;
    cb_follow *follow;
    uint32_t n;
    float *pos, *vel;
    float *left, *forward; /* the crowd's velocity columns (for the run without follower) */
} follow_world;

/* The 17 locomotion clips of the W2 blend space, in its order, and its graph over set's clips
 * (the blend space, lean_add as its additive layer, wave_upper above spine_01). */
extern const char *const follow_world_w2_clips[17];
cb_result follow_world_w2_graph(const cb_embedded *set, cb_graph **graph);

bool follow_world_w2(follow_world *w, uint32_t n, bool follow);
bool follow_world_features(follow_world *w, uint32_t n, int mode);
/* The same with level of detail (docs/graph.md "Level of detail"), near_percent >= 0: the graph
 * gets a parameter "lod" as its lod_param and "max_lod": 0 on each of its post-process steps
 * (orientation warp, stride warp, foot lock), and near_percent % of the characters (spread
 * evenly over the dense order) are at LOD 0, the others at LOD 1. -1: as follow_world_features.
 * keep_weights: the crowd keeps its clip weights (cb_crowd_weights, for a check of their bits);
 * off in the timed worlds, as in the W2 world, which never kept them (docs/performance.md,
 * session 18: keeping them cost the feature worlds 4-8 ns per character). */
bool follow_world_features_lod(follow_world *w, uint32_t n, int mode, int near_percent,
                               bool keep_weights);
void follow_world_move(follow_world *w, uint32_t frame);
/* The W2 host without follower: the local velocity (forward speed, no sideways part) written
 * into the blend space's parameter columns. */
void follow_world_host_velocity(follow_world *w);
/* Frees what was created; safe on a world whose creation failed half-way. */
void follow_world_destroy(follow_world *w);

#endif
