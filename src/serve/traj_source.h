/* `crowdblend serve --trajectories FILE`: the crowd's characters driven by a trajectory file
 * instead of the demo's wandering host (docs/serve.md, "Trajectories"). The file plays on the
 * server's 60 Hz grid through the trajectory host (src/traj/host.h, the one `crowdblend
 * animate` uses): agents appear and leave as the file says, each root on its interpolated
 * trajectory, and the file loops: the frame whose number is f shows the file at
 * t_min + (f mod N) / 60 s, N being the file's frame count at 60 Hz. */
#ifndef CROWDBLEND_SERVE_TRAJ_SOURCE_H
#define CROWDBLEND_SERVE_TRAJ_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"

struct cb_traj;
typedef struct cb_serve_traj cb_serve_traj;

/* Plans the file at rate_hz; the followers it attaches limit the heading's turn rate to
 * max_turn_rps (rad/s; 0: no limit; cb_follow_desc.max_turn_rps checks it). NULL with the
 * reason in why. traj is not owned. */
cb_serve_traj *cb_serve_traj_create(const struct cb_traj *traj, double rate_hz, float max_turn_rps,
                                    char why[256]);
void cb_serve_traj_destroy(cb_serve_traj *source);

/* The most agents at once: the crowd's capacity must be at least this. */
uint32_t cb_serve_traj_capacity(const cb_serve_traj *source);

/* Follows on kind 0 of crowd, which must have no characters yet, with the follow features its
 * graph has parameters for (playback-rate warping with the gait clip; NULL: none). Called for
 * every new crowd (a graph switch): the characters of the old one are forgotten and the next
 * step adds the agents live at its frame. False with the reason in why (the old crowd is then
 * still followed). */
bool cb_serve_traj_attach(cb_serve_traj *source, cb_crowd *crowd, const cb_clip *gait,
                          char why[256]);

/* Places the characters for the frame numbered `frame` (the step about to be taken: the
 * simulation's frame count after it), for a crowd update of dt_s. No allocation. */
bool cb_serve_traj_step(cb_serve_traj *source, uint64_t frame, float dt_s);

/* Where the character at dense index `dense` stands: world position and heading. */
void cb_serve_traj_root(const cb_serve_traj *source, uint32_t dense, float position[3], float *yaw);

#endif
