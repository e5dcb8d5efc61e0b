/* `crowdblend animate`: a crowd driven along simulator trajectories, measured (skate, pops)
 * and optionally exported as glTF. cmd_animate.c reads the options and prints; animate_run.c
 * runs one file. */
#ifndef CROWDBLEND_CLI_ANIMATE_H
#define CROWDBLEND_CLI_ANIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"
#include "measure/measure.h"
#include "traj/traj.h"

typedef struct cb_animate_options {
    const char *graph;  /* NULL: the blend-space crowd; else an example's name or a JSON file
                           (with a pack: a graph stored in it or a JSON file naming its clips) */
    const char *pack;   /* the pack's path (what the output names), or NULL */
    double rate_hz;     /* animation rate */
    double seconds;     /* simulate at most this long from the file's start (0: all) */
    bool host_warp;     /* the host-side playback-rate warp (reference) */
    const char *out;    /* glTF/GLB path or NULL */
    double out_rate_hz; /* export rate (0: the animation rate) */
    uint32_t threads;   /* the crowd's pool (0: all CPUs) */
    float stand_speed;  /* the follow path's speeds (0: its defaults) */
    float follow_speed;
    /* The follow path's features, used when the graph has their parameters (a "rate"
     * parameter: playback-rate warping; "root_yaw" and the like: foot locking,
     * examples/graphs/locomotion_follow.json) unless turned off. */
    bool no_warp, no_lock;
    bool gait_named;          /* --gait: warping must run (the graph needs a "rate") */
    float min_rate, max_rate; /* the warp's bounds (0: the defaults) */
    float max_turn;           /* the heading's turn-rate limit, rad/s (0: none) */
    float orient_rad;         /* orientation warping's largest turn (0: off; a "warp" param) */
    bool stride;              /* stride warping (a "stride" param, with warping) */
    float max_stride;         /* its largest scale (0: the default) */
} cb_animate_options;

/* The data the crowd runs (the embedded set, or a pack) and its clips, shared by every file of
 * one command. */
typedef struct cb_animate_assets {
    cb_embedded *set;              /* NULL with a pack */
    cb_pack *pack;                 /* --pack, or NULL */
    const cb_skeleton *skeleton;   /* the set's or the pack's */
    const cb_clip *locomotion[17]; /* idle, walks, runs: the blend-space crowd's clips */
    /* The follower's playback-rate warp matches this clip's root-motion forward speed: the
     * embedded walk_f, a pack's --gait clip, or NULL (a pack without --gait: no warp). */
    const cb_clip *gait;
    /* The skate's joints (the embedded "ball_l", "ball_r"; a pack's --feet, or the joints its
     * names say are the feet); feet_from says which rule found them. When unknown,
     * feet_missing says why and the skate is not measured. */
    uint32_t feet[2];
    char feet_names[2][CB_JOINT_NAME_MAX + 1];
    const char *feet_from;
    const char *feet_missing;
    /* The feet are known but the clips mark no plants (a pack imported without
     * --detect-foot-plants): why the skate is not measured, or NULL. */
    const char *plants_missing;
    double clips_pops_p999; /* the clips' own pops (cm), each looping clip played alone; < 0:
                               none loops */
} cb_animate_assets;

/* Where the assets come from: the embedded set (pack NULL) or a pack file; feet "LEFT,RIGHT"
 * names the skate's joints (NULL: "ball_l", "ball_r" when the skeleton has them); gait the
 * pack's clip whose root speed the follower's warp matches (it must move forward);
 * clip_rate_hz the embedded clips' stored rate (cb_embedded_desc.sample_rate_hz; 0: its
 * default, 30 Hz; a pack's clips keep their own). */
typedef struct cb_animate_source {
    const char *pack;
    const char *feet;
    float clip_rate_hz;
    const char *gait; /* a pack's clip for the follower's warp (--gait), or NULL */
} cb_animate_source;

/* What one file gave. */
typedef struct cb_animate_result {
    uint32_t agents_shown;   /* agents that existed at one frame at least */
    uint32_t max_concurrent; /* most agents at once */
    uint32_t frames;
    double character_seconds;
    double wall_s;   /* the whole run, measurement included */
    bool warp, lock; /* which follow features ran */
    bool orient;     /* orientation warping ran */
    bool stride;     /* stride warping ran */
    cb_follow_stats follow_stats;
    cb_measure *measure;
    /* --out: the agents, frames and rate written (0 without --out) */
    uint32_t out_agents, out_frames;
    double out_rate_hz;
} cb_animate_result;

/* Loads the assets and measures the clips' own pops; false with a message on stderr. */
bool cb_animate_assets_init(cb_animate_assets *a, const cb_animate_source *src, double rate_hz);
void cb_animate_assets_finish(cb_animate_assets *a);

/* Runs one trajectory set; false with a message on stderr on failure. */
bool cb_animate_run(const cb_traj *traj, const char *name, const cb_animate_options *o,
                    const cb_animate_assets *assets, cb_animate_result *out);

#endif
