/* The trajectory host: a loaded trajectory set (traj.h) driving the characters of a crowd
 * through a follower (crowdblend/follow.h). Agents appear and leave on a fixed frame grid as
 * the file says, each is added facing along its first tangent with a phase from its id, and
 * every frame each live agent's root is placed on its interpolated trajectory. The one host of
 * `crowdblend animate` (src/cli/animate_run.c) and `crowdblend serve --trajectories`
 * (src/serve/traj_source.c); docs/trajectories.md describes the rules.
 *
 * THE GRID: frame k is at time t_min + k / rate_hz. Agent a shows on the frames
 * [ceil((start - t_min) rate), floor((end - t_min) rate)] (within 1e-9 of a grid point counts
 * as on it), cut at the last frame; an agent that falls between two frames never shows.
 *
 * USE: cb_traj_host_create() plans the grid (how many frames, the most agents at once: the
 * capacity the crowd needs); the caller then creates its crowd and calls cb_traj_host_follow()
 * to create the follower on it; then cb_traj_host_step(k) for k = 0, 1, 2, ... before each
 * cb_crowd_update(). Stepping any other frame than the one after the last (a loop back to 0, a
 * jump, the first step of a new host at frame k) first removes every live agent and then adds
 * those live at that frame, so the file plays on from there.
 *
 * MEMORY: everything is allocated at create and follow; a step allocates nothing, takes no lock
 * and makes no system call (a scan over the agents for arrivals and departures, the spline
 * evaluations, cb_follow_update). */
#ifndef CROWDBLEND_TRAJ_HOST_H
#define CROWDBLEND_TRAJ_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"
#include "traj/traj.h"

typedef struct cb_traj_host cb_traj_host;

/* Most frames a host plays: 2^31 - 1, over a year at 60 Hz (frame numbers stay in 32 bits). */
#define CB_TRAJ_HOST_MAX_FRAMES 2147483647u

typedef struct cb_traj_host_desc {
    const cb_traj *traj; /* not owned; must outlive the host */
    double rate_hz;      /* the frame grid, in [1, 1000] */
    double seconds;      /* play at most this long from the file's start; 0: all of it */
    /* Told after an agent was added (its index in traj->agents, its starting heading) and
     * after one was removed, so a caller can keep its own per-agent state. Either may be NULL. */
    void (*on_add)(void *user, uint32_t agent, float heading_rad);
    void (*on_remove)(void *user, uint32_t agent);
    void *user;
} cb_traj_host_desc;

/* Plans the grid. CB_ERR_NULL_ARGUMENT, CB_ERR_INVALID_ARGUMENT (rate, seconds), CB_ERR_TOO_MANY
 * (more than CB_TRAJ_HOST_MAX_FRAMES frames), CB_ERR_OUT_OF_MEMORY; err says which. */
cb_result cb_traj_host_create(const cb_traj_host_desc *desc, cb_traj_host **out, cb_error *err);
void cb_traj_host_destroy(cb_traj_host *host);

/* What the plan found. */
typedef struct cb_traj_host_plan {
    uint32_t frames;         /* on the grid, >= 1 */
    uint32_t max_concurrent; /* most agents live at once, >= 1: the crowd's capacity */
    uint32_t agents_shown;   /* agents that show on one frame at least */
} cb_traj_host_plan;

cb_traj_host_plan cb_traj_host_query_plan(const cb_traj_host *host);

/* Agent a's first and last frame (last < first: it never shows). */
void cb_traj_host_agent_frames(const cb_traj_host *host, uint32_t agent, int64_t *first,
                               int64_t *last);

/* Which follow features a graph gets (docs/trajectories.md): playback-rate warping when it has
 * a float "rate" parameter (the gait's root speed at rate 1 is the gait clip's), foot locking
 * when it has "root_yaw" (with "root_x", "root_y", "root_z", which its foot_lock step reads,
 * the step's weight "lock" when it has it, set to 1, and the step's outputs "locked_l",
 * "locked_r", "failed_l", "failed_r"),
 * orientation warping when asked for and it has "warp", stride warping when asked for, with
 * warping, and it has "stride". */
typedef struct cb_traj_host_features {
    const cb_clip *gait;      /* the walk (the embedded walk_f); NULL: no warping */
    bool no_warp, no_lock;    /* turned off even where the graph has the parameters */
    float min_rate, max_rate; /* the warp's bounds (0: the defaults) */
    float orient_rad;         /* orientation warping's limit where the graph has a float "warp"
                                 parameter (0: off, the default: docs/trajectories.md) */
    bool stride;              /* stride warping, with warping, where the graph has a float
                                 "stride" (and "stride_x", "stride_z": the direction) */
    float max_stride;         /* its largest scale (0: the default) */
} cb_traj_host_features;

/* Below this a clip's forward root speed is drift, not a gait: a rate of speed / gait would
 * always sit at its upper bound. */
#define CB_TRAJ_HOST_MIN_GAIT_SPEED_MPS 0.1f

/* The pack's clip `name` as the follower's gait (the --gait of `crowdblend animate` and
 * `crowdblend serve`): it must exist and move its root forward at CB_TRAJ_HOST_MIN_GAIT_SPEED_MPS
 * or more (cb_clip_query_root_motion), which clips that play in place do not. NULL with the
 * reason in why (why_size bytes, cut to fit; it starts "--gait: "): an unknown name lists the
 * pack's clips, a clip in place points to the graph's rate_warp. */
const cb_clip *cb_traj_host_find_gait(const cb_pack *pack, const char *name, char *why,
                                      size_t why_size);

/* Whether graph (named graph_name in the message) has the float "rate" parameter the warp with
 * a named gait writes; false with the reason in why (starting "--gait: "). */
bool cb_traj_host_gait_graph(const cb_graph *graph, const char *graph_name, char *why,
                             size_t why_size);

/* Sets fd->warp and fd->lock for the features graph has; says which in *warp and *lock (each
 * left as it was when its feature is off). */
void cb_traj_host_enable_features(const cb_graph *graph, const cb_traj_host_features *f,
                                  cb_follow_desc *fd, bool *warp, bool *lock);

/* Creates the follower (cb_follow_create with fd, whose crowd's kind must be empty and hold at
 * least cb_traj_host_max_concurrent characters; fd->capacity 0: the crowd's). Once per host. */
cb_result cb_traj_host_follow(cb_traj_host *host, const cb_follow_desc *fd, cb_error *err);
cb_follow *cb_traj_host_follower(const cb_traj_host *host);

/* Frame k (< frames): agents whose last frame was k - 1 leave, those whose first frame is k
 * arrive, then every live agent is placed at its trajectory's time t_min + k / rate_hz and
 * the follower updated for a crowd update of dt_s. Errors: those of cb_follow_add and
 * cb_follow_update, with the agent's id in err. */
cb_result cb_traj_host_step(cb_traj_host *host, int64_t k, float dt_s, cb_error *err);

/* Removes every live agent (the next step may then start again at any frame). */
void cb_traj_host_clear(cb_traj_host *host);

/* The agent at each dense index of the follower (cb_follow_count of them). */
const uint32_t *cb_traj_host_dense_agents(const cb_traj_host *host);

#endif
