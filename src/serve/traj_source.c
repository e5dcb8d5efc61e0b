/* The trajectory source of `crowdblend serve` (traj_source.h). */
#include "serve/traj_source.h"

#include <stdio.h>
#include <stdlib.h>

#include "traj/host.h"

struct cb_serve_traj {
    const cb_traj *traj;
    double rate_hz;
    float max_turn_rps;
    cb_traj_host *host; /* of the crowd followed now; NULL before the first attach */
    cb_traj_host_plan plan;
    bool reported; /* a step's failure is printed once */
};

static cb_traj_host *make_host(const cb_traj *traj, double rate_hz, cb_error *err)
{
    cb_traj_host_desc hd = {.traj = traj, .rate_hz = rate_hz};
    cb_traj_host *host = NULL;
    return cb_traj_host_create(&hd, &host, err) == CB_OK ? host : NULL;
}

cb_serve_traj *cb_serve_traj_create(const cb_traj *traj, double rate_hz, float max_turn_rps,
                                    char why[256])
{
    cb_serve_traj *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(why, 256, "out of memory");
        return NULL;
    }
    s->traj = traj;
    s->rate_hz = rate_hz;
    s->max_turn_rps = max_turn_rps;
    /* A host just for the plan: the capacity is needed before the crowd exists. */
    cb_error err = {0};
    cb_traj_host *planner = make_host(traj, rate_hz, &err);
    if (planner == NULL) {
        snprintf(why, 256, "trajectories: %.200s", err.message);
        free(s);
        return NULL;
    }
    s->plan = cb_traj_host_query_plan(planner);
    cb_traj_host_destroy(planner);
    return s;
}

void cb_serve_traj_destroy(cb_serve_traj *s)
{
    if (s != NULL) {
        cb_traj_host_destroy(s->host);
        free(s);
    }
}

uint32_t cb_serve_traj_capacity(const cb_serve_traj *s)
{
    return s->plan.max_concurrent;
}

bool cb_serve_traj_attach(cb_serve_traj *s, cb_crowd *crowd, const cb_clip *gait, char why[256])
{
    cb_error err = {0};
    cb_traj_host *host = make_host(s->traj, s->rate_hz, &err);
    cb_follow_desc fd = {
        .crowd = crowd, .capacity = s->plan.max_concurrent, .max_turn_rps = s->max_turn_rps};
    bool warp = false, lock = false;
    /* Foot locking where the graph has a foot_lock step with its parameters. */
    cb_traj_host_features f = {.gait = gait};
    cb_traj_host_enable_features(cb_crowd_graph(crowd, 0), &f, &fd, &warp, &lock);
    if (host == NULL || cb_traj_host_follow(host, &fd, &err) != CB_OK) {
        snprintf(why, 256, "trajectories: %.200s", err.message);
        cb_traj_host_destroy(host);
        return false;
    }
    cb_traj_host_destroy(s->host); /* its follower only: the old crowd goes with its scene */
    s->host = host;
    return true;
}

bool cb_serve_traj_step(cb_serve_traj *s, uint64_t frame, float dt_s)
{
    cb_error err = {0};
    int64_t k = (int64_t)(frame % s->plan.frames);
    if (cb_traj_host_step(s->host, k, dt_s, &err) == CB_OK) {
        return true;
    }
    if (!s->reported) { /* not expected: the plan sized the crowd; say it once */
        fprintf(stderr, "crowdblend serve: trajectories, frame %lld: %s\n", (long long)k,
                err.message);
        s->reported = true;
    }
    return false;
}

void cb_serve_traj_root(const cb_serve_traj *s, uint32_t dense, float position[3], float *yaw)
{
    const cb_follow_root *root = &cb_follow_roots(cb_traj_host_follower(s->host))[dense];
    position[0] = root->position[0];
    position[1] = root->position[1];
    position[2] = root->position[2];
    *yaw = root->yaw;
}
