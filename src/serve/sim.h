/* The simulation side of `crowdblend serve`: the demo's wandering crowd (src/cli/scene.h, on the
 * embedded set or a pack) stepped
 * at a fixed rate, control messages applied between steps, and what the clients read published
 * on boards (board.h): encoded frames per encoding, the hello, the subscribed characters'
 * details and the counters. It never touches a socket; the network thread (server.c) only
 * exchanges fixed-size items and boards with it. */
#ifndef CROWDBLEND_SERVE_SIM_H
#define CROWDBLEND_SERVE_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "serve/board.h"
#include "serve/protocol.h"

enum {
    CB_SIM_HZ = 60,
    CB_SIM_MAX_CLIENTS = 64, /* client slots: a subscription mask is one 64-bit word */
    CB_SIM_MAX_SUBSCRIPTIONS = 64,
    CB_SIM_REPLY_BYTES = 1024,
    CB_SIM_HELLO_BYTES = 1 << 17,
    CB_SIM_DETAILS_BYTES = 1 << 16,
    CB_SIM_EVENT_HISTORY = 16, /* events kept per subscription, so a slow client misses none */
    CB_SIM_WHY_BYTES = 512,    /* cb_sim_create's reason (--gait's in-place refusal is long) */
};

typedef struct cb_sim_desc {
    const char *graph;   /* example name, JSON file or "none"; NULL: the demo's default */
    uint32_t characters; /* at start */
    uint32_t capacity;   /* most at once; 0: characters + max(64, characters / 4) */
    uint32_t threads;    /* the crowd's pool; 0: all CPUs */
    uint64_t seed;
    size_t headroom;       /* bytes before every published buffer (LWS_PRE) */
    const char *model_url; /* a .glb the hello names for the viewer, or NULL */
    /* A pack's skeleton, clips and graphs instead of the embedded set (not owned; it must
     * outlive the sim). `graph` then names a graph stored in the pack or a JSON file; NULL:
     * the pack's first graph. */
    const struct cb_pack *pack;
    float area; /* half the side of the square where characters appear (m); 0: 200 */
    /* --trajectories: a trajectory file drives the characters (traj_source.h; not owned, must
     * outlive the sim). `characters` is then ignored, and the capacity is at least the file's
     * most agents at once. */
    const struct cb_traj *traj;
    /* With traj: the follower's turn-rate limit on the heading (cb_follow_desc.max_turn_rps,
     * rad/s in [0, 1000]; 0: none), as `crowdblend animate --max-turn` sets it. */
    float max_turn_rps;
    /* With traj and pack: the pack's clip whose forward root speed the follower's playback-rate
     * warp matches (cb_traj_host_find_gait; every graph run then needs a "rate" parameter), as
     * `crowdblend animate --gait` names it; NULL: the embedded set's walk_f, none for a pack. */
    const char *gait;
} cb_sim_desc;

/* A command as it travels from the network thread: who sent it and what. */
typedef struct cb_sim_command {
    uint32_t slot;   /* client slot, < CB_SIM_MAX_CLIENTS */
    uint32_t serial; /* the connection's serial number (replies to a closed one are dropped) */
    bool quiet;      /* no reply (internal: a closed client's unsubscribe) */
    cb_ctl ctl;
} cb_sim_command;

/* A reply to a client: a JSON text. */
typedef struct cb_sim_reply {
    uint32_t slot, serial;
    uint32_t length;
    char text[CB_SIM_REPLY_BYTES];
} cb_sim_reply;

/* What the simulation reports about itself, published every step. */
typedef struct cb_sim_stats {
    uint64_t frame, ticks, late_ticks, clamped_positions;
    double sim_time_s;
    uint32_t characters, capacity, epoch;
    bool paused;
    float time_scale;
    double tick_hz;                   /* measured over the last second */
    double step_ms_mean, step_ms_max; /* crowd update (host step included), last second */
    double stage_ms[8]; /* per stage, ms per frame (thread time / threads), last second */
    uint32_t stage_count;
    double encode_ns_per_character[CB_FRAME_ENCODING_COUNT]; /* last second; 0 if not encoded */
    uint64_t bytes_per_frame[CB_FRAME_ENCODING_COUNT];
    uint32_t threads;
} cb_sim_stats;

typedef struct cb_sim cb_sim;

/* Builds the scene and the boards. NULL on failure, with the reason in why. */
cb_sim *cb_sim_create(const cb_sim_desc *desc, char why[CB_SIM_WHY_BYTES]);
void cb_sim_destroy(cb_sim *sim);

/* Starts the thread that steps at CB_SIM_HZ; notify(user) runs on it after each publication
 * (the server wakes its network loop with it). */
bool cb_sim_start(cb_sim *sim, void (*notify)(void *user), void *user);
/* Stops and joins the thread. */
void cb_sim_stop(cb_sim *sim);

/* One tick, on the calling thread: applies queued commands, steps unless paused, publishes.
 * What the thread runs CB_SIM_HZ times a second; the tests call it directly. */
void cb_sim_tick(cb_sim *sim);

/* Network side. Queue a command (false when the queue is full: the client is told "busy"). */
bool cb_sim_post(cb_sim *sim, const cb_sim_command *command);
/* The next reply, if any. */
bool cb_sim_next_reply(cb_sim *sim, cb_sim_reply *out);
/* Counts clients that want frames in an encoding; frames are encoded only while one does. */
void cb_sim_want(cb_sim *sim, cb_frame_encoding e, int delta);

/* The boards (read by one thread only). frames: an encoding's frames; hello: tag = epoch;
 * details: tag = mask of client slots subscribed; stats: a cb_sim_stats. */
cb_board *cb_sim_frames(cb_sim *sim, cb_frame_encoding e);
cb_board *cb_sim_hello(cb_sim *sim);
cb_board *cb_sim_details(cb_sim *sim);
cb_board *cb_sim_stats_board(cb_sim *sim);

/* The crowd the simulation runs (for tests; only between ticks, on the ticking thread). */
struct cb_crowd *cb_sim_crowd(cb_sim *sim);

#endif
