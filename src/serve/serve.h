/* `crowdblend serve`: a crowd stepped at 60 Hz on a simulation thread (sim.h), its frames
 * streamed over WebSocket and the viewer's files served over HTTP by libwebsockets on the
 * calling thread (docs/serve.md). */
#ifndef CROWDBLEND_SERVE_SERVE_H
#define CROWDBLEND_SERVE_SERVE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cb_serve_desc {
    const char *graph;    /* example name, JSON file or "none"; NULL: the demo's default */
    uint32_t characters;  /* at start */
    uint32_t capacity;    /* 0: characters + max(64, characters / 4) */
    uint32_t threads;     /* the crowd's pool; 0: all CPUs */
    const char *listen;   /* "HOST:PORT"; port 0 picks a free one. NULL: 127.0.0.1:8080 */
    const char *web_root; /* the viewer's folder (web/), holding public/ and node_modules/ */
    const char *model;    /* a .glb served at /models/<its name> and named in the hello */
    uint32_t max_clients; /* WebSocket clients at once, 1..64; 0: 16 */
    double seconds;       /* stop after this long; 0: until SIGINT or SIGTERM */
    uint64_t seed;
    bool verbose; /* libwebsockets' notices too */
    /* A pack instead of the embedded set (sim.h; not owned). */
    const struct cb_pack *pack;
    float area; /* half the side of the square where characters appear (m); 0: 200 */
    const struct cb_traj *traj; /* --trajectories (sim.h; not owned) */
    float max_turn_rps;         /* --max-turn: the heading's turn-rate limit with traj (sim.h) */
    const char *gait;           /* --gait: the pack's clip the follower warps to (sim.h) */
} cb_serve_desc;

/* Runs the server until a signal or desc->seconds; prints "listening on http://HOST:PORT/"
 * on stdout once it accepts connections. Returns a process exit code. */
int cb_serve_run(const cb_serve_desc *desc);

#endif
