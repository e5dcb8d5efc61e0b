/* The trajectory host (host.h): a trajectory set's agents in and out of a crowd on a frame
 * grid, each followed along its interpolated trajectory. */
#include "traj/host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base_impl.h"

struct cb_traj_host {
    cb_traj_host_desc desc;
    cb_follow *follow;
    cb_crowd *crowd;    /* the follower's */
    float follow_speed; /* the follower's: the first tangent this fast sets the heading */
    cb_traj_host_plan plan;
    int64_t last_step; /* the frame stepped last; -1 before the first */
    /* per agent */
    int64_t *first_k, *last_k;
    cb_character *handle;
    bool *live;
    /* per dense index */
    uint32_t *dense_agent;
    float *pos, *vel; /* 3 each */
};

/* ---- the plan ----------------------------------------------------------------------------- */

/* An arrival (+1 at first_k) or a departure (-1 at last_k + 1), ordered by frame. */
typedef struct event {
    int64_t frame, change;
} event;

static int by_frame(const void *a, const void *b)
{
    const event *x = a, *y = b;
    return (x->frame > y->frame) - (x->frame < y->frame);
}

/* The most agents live at once: a sweep over the arrivals and departures sorted by frame, each
 * frame counted once all of its events are in (so its memory follows the agents, not the
 * frames). */
static bool most_at_once(cb_traj_host *h, uint32_t *out)
{
    uint32_t n = h->desc.traj->agent_count, count = 0;
    event *ev = malloc(2 * (size_t)(n ? n : 1) * sizeof *ev);
    if (ev == NULL) {
        return false;
    }
    for (uint32_t a = 0; a < n; ++a) {
        if (h->first_k[a] <= h->last_k[a]) {
            ev[count++] = (event){h->first_k[a], 1};
            ev[count++] = (event){h->last_k[a] + 1, -1};
        }
    }
    qsort(ev, count, sizeof *ev, by_frame);
    int64_t live = 0, most = 0;
    for (uint32_t i = 0; i < count; ++i) {
        live += ev[i].change;
        if (i + 1 == count || ev[i + 1].frame != ev[i].frame) {
            most = live > most ? live : most;
        }
    }
    free(ev);
    *out = (uint32_t)(most > 0 ? most : 1);
    return true;
}

/* Each agent's frames [first_k, last_k] on the grid t = t_min + k / rate (last_k < first_k:
 * the agent falls between two frames and never shows), the frame count, the most agents at
 * once. CB_ERR_TOO_MANY for a span of more than CB_TRAJ_HOST_MAX_FRAMES frames. */
static cb_result plan_frames(cb_traj_host *h, cb_error *err)
{
    const cb_traj *t = h->desc.traj;
    double rate = h->desc.rate_hz, span = t->t_max - t->t_min;
    if (h->desc.seconds > 0.0 && h->desc.seconds < span) {
        span = h->desc.seconds;
    }
    double frames_d = floor(span * rate + 1e-9) + 1.0;
    if (!(frames_d <= CB_TRAJ_HOST_MAX_FRAMES)) {
        return cb_error_set(err, CB_ERR_TOO_MANY,
                            "trajectory host: %.17g s at %g Hz is more than %u frames", span, rate,
                            CB_TRAJ_HOST_MAX_FRAMES);
    }
    uint32_t frames = (uint32_t)frames_d;
    h->plan.agents_shown = 0;
    for (uint32_t a = 0; a < t->agent_count; ++a) {
        h->first_k[a] = (int64_t)ceil((cb_traj_agent_start(t, a) - t->t_min) * rate - 1e-9);
        h->last_k[a] = (int64_t)floor((cb_traj_agent_end(t, a) - t->t_min) * rate + 1e-9);
        if (h->last_k[a] >= (int64_t)frames) {
            h->last_k[a] = (int64_t)frames - 1;
        }
        h->plan.agents_shown += h->first_k[a] <= h->last_k[a];
    }
    h->plan.frames = frames;
    if (!most_at_once(h, &h->plan.max_concurrent)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "trajectory host: out of memory");
    }
    return CB_OK;
}

cb_result cb_traj_host_create(const cb_traj_host_desc *d, cb_traj_host **out, cb_error *err)
{
    if (d == NULL || out == NULL || d->traj == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "trajectory host: desc, traj or out is "
                            "NULL");
    }
    *out = NULL;
    if (!(d->rate_hz >= 1.0 && d->rate_hz <= 1000.0) || !(d->seconds >= 0.0)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "trajectory host: rate_hz must be in [1, 1000] and seconds >= 0");
    }
    cb_traj_host *h = calloc(1, sizeof *h);
    size_t n = d->traj->agent_count ? d->traj->agent_count : 1;
    if (h != NULL) {
        h->desc = *d;
        h->last_step = -1;
        h->first_k = malloc(n * sizeof *h->first_k);
        h->last_k = malloc(n * sizeof *h->last_k);
        h->handle = malloc(n * sizeof *h->handle);
        h->live = calloc(n, sizeof *h->live);
    }
    if (h == NULL || h->first_k == NULL || h->last_k == NULL || h->handle == NULL ||
        h->live == NULL) {
        cb_traj_host_destroy(h);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "trajectory host: out of memory");
    }
    cb_result res = plan_frames(h, err);
    if (res != CB_OK) {
        cb_traj_host_destroy(h);
        return res;
    }
    *out = h;
    return CB_OK;
}

void cb_traj_host_destroy(cb_traj_host *h)
{
    if (h == NULL) {
        return;
    }
    cb_follow_destroy(h->follow);
    free(h->first_k);
    free(h->last_k);
    free(h->handle);
    free(h->live);
    free(h->dense_agent);
    free(h->pos);
    free(h->vel);
    free(h);
}

cb_traj_host_plan cb_traj_host_query_plan(const cb_traj_host *h)
{
    return h->plan;
}

void cb_traj_host_agent_frames(const cb_traj_host *h, uint32_t agent, int64_t *first, int64_t *last)
{
    *first = h->first_k[agent];
    *last = h->last_k[agent];
}

const cb_clip *cb_traj_host_find_gait(const cb_pack *pack, const char *name, char *why,
                                      size_t why_size)
{
    uint32_t index = 0;
    if (cb_pack_find_clip(pack, name, &index) != CB_OK) {
        int n = snprintf(why, why_size, "--gait: the pack has no clip '%s'; its clips:", name);
        for (uint32_t k = 0; k < cb_pack_clip_count(pack) && n >= 0 && (size_t)n < why_size; ++k) {
            n += snprintf(why + n, why_size - (size_t)n, "%s '%s'", k ? "," : "",
                          cb_clip_name(cb_pack_clip(pack, k)));
        }
        return NULL;
    }
    const cb_clip *clip = cb_pack_clip(pack, index);
    float forward = cb_clip_query_root_motion(clip).forward_mps;
    if (!(forward >= CB_TRAJ_HOST_MIN_GAIT_SPEED_MPS)) {
        snprintf(why, why_size,
                 "--gait: clip '%s' moves its root forward at %.3g m/s (below %.1f: it plays in "
                 "place), so the follower cannot take the rate from its speed; warp in the graph "
                 "instead: a blend space's rate_warp with \"speed_from\": \"positions\" "
                 "(docs/trajectories.md, docs/graph.md)",
                 name, (double)forward, (double)CB_TRAJ_HOST_MIN_GAIT_SPEED_MPS);
        return NULL;
    }
    return clip;
}

bool cb_traj_host_gait_graph(const cb_graph *graph, const char *graph_name, char *why,
                             size_t why_size)
{
    uint32_t index;
    if (cb_graph_find_param(graph, "rate", &index) == CB_OK) {
        return true;
    }
    snprintf(
        why, why_size,
        "--gait: graph '%s' has no \"rate\" parameter for the follower's playback rate (bind "
        "its clips' speed_param to a float \"rate\", as examples/graphs/locomotion_follow.json "
        "does)",
        graph_name);
    return false;
}

void cb_traj_host_enable_features(const cb_graph *graph, const cb_traj_host_features *f,
                                  cb_follow_desc *fd, bool *warp, bool *lock)
{
    uint32_t index;
    if (!f->no_warp && f->gait != NULL && cb_graph_find_param(graph, "rate", &index) == CB_OK) {
        fd->warp =
            (cb_follow_warp){.rate_param = "rate",
                             .gait_speed_mps = cb_clip_query_root_motion(f->gait).forward_mps,
                             .min_rate = f->min_rate,
                             .max_rate = f->max_rate};
        *warp = true;
    }
    if (f->stride && *warp && cb_graph_find_param(graph, "stride", &index) == CB_OK) {
        bool dir = cb_graph_find_param(graph, "stride_x", &index) == CB_OK &&
                   cb_graph_find_param(graph, "stride_z", &index) == CB_OK;
        fd->stride = (cb_follow_stride){
            .scale_param = "stride",
            .direction_param = {dir ? "stride_x" : NULL, dir ? "stride_z" : NULL},
            .max_scale = f->max_stride};
    }
    if (f->orient_rad > 0.0f && cb_graph_find_param(graph, "warp", &index) == CB_OK) {
        fd->orient = (cb_follow_orient){.angle_param = "warp", .max_angle_rad = f->orient_rad};
    }
    /* Foot locking (graph.h foot_lock, follow.h cb_follow_lock): the graph's foot_lock step
     * reads the root from these parameters, its weight from "lock" where the graph has it
     * (the example graphs: default 0, the step off unless a host places the root), and
     * reports through these. */
    if (!f->no_lock && cb_graph_find_param(graph, "root_yaw", &index) == CB_OK) {
        bool weighted = cb_graph_find_param(graph, "lock", &index) == CB_OK;
        fd->lock = (cb_follow_lock){.root_param = {"root_x", "root_y", "root_z", "root_yaw"},
                                    .weight_param = weighted ? "lock" : NULL,
                                    .locked_param = {"locked_l", "locked_r"},
                                    .failed_param = {"failed_l", "failed_r"}};
        *lock = true;
    }
}

cb_result cb_traj_host_follow(cb_traj_host *h, const cb_follow_desc *fd, cb_error *err)
{
    if (h->follow != NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "trajectory host: already following");
    }
    /* The follower's capacity (0 in fd: the crowd's), for the per-character buffers; a desc
     * without a crowd fails in cb_follow_create below. */
    uint32_t resolved = cb_follow_query_desc(fd).capacity;
    size_t cap = resolved ? resolved : 1;
    /* A call after a failed one: its buffers go first. */
    free(h->dense_agent);
    free(h->pos);
    free(h->vel);
    h->dense_agent = malloc(cap * sizeof *h->dense_agent);
    h->pos = malloc(3 * cap * sizeof *h->pos);
    h->vel = malloc(3 * cap * sizeof *h->vel);
    if (h->dense_agent == NULL || h->pos == NULL || h->vel == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "trajectory host: out of memory");
    }
    h->crowd = fd->crowd;
    h->follow_speed = cb_follow_query_desc(fd).follow_speed_mps;
    return cb_follow_create(fd, &h->follow, err);
}

cb_follow *cb_traj_host_follower(const cb_traj_host *h)
{
    return h->follow;
}

const uint32_t *cb_traj_host_dense_agents(const cb_traj_host *h)
{
    return h->dense_agent;
}

/* ---- agents in and out -------------------------------------------------------------------- */

/* The file's ground plane (x, y, elevation z) in the crowd's world (+Y up): (x, z, -y). */
static void to_world(const double g[3], float w[3])
{
    w[0] = (float)g[0];
    w[1] = (float)g[2];
    w[2] = (float)-g[1];
}

/* The heading an agent starts with: along its first tangent fast enough to set one (the file
 * knows where a standing agent will go), else facing +Z. */
static float initial_heading(const cb_traj *t, uint32_t a, float follow_speed)
{
    const cb_traj_agent *ag = &t->agents[a];
    for (uint32_t i = 0; i < ag->count; ++i) {
        const double *m = &t->m[3 * (size_t)(ag->first + i)];
        float w[3];
        to_world(m, w);
        if (hypotf(w[0], w[2]) >= follow_speed) {
            return atan2f(w[0], w[2]);
        }
    }
    return 0.0f;
}

/* A phase in [0, 1) from the agent's id, so a crowd is staggered the same way every run. */
static float phase_of(int64_t id)
{
    uint64_t z = (uint64_t)id + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (float)((z ^ (z >> 31)) >> 40) / 16777216.0f;
}

static cb_result add_agent(cb_traj_host *h, uint32_t a, cb_error *err)
{
    const cb_traj *t = h->desc.traj;
    float heading = initial_heading(t, a, h->follow_speed);
    uint32_t dense = cb_follow_count(h->follow);
    cb_result res = cb_follow_add(h->follow, phase_of(t->agents[a].id), heading, &h->handle[a]);
    if (res != CB_OK) {
        return cb_error_set(err, res, "cannot add agent %lld: %s", (long long)t->agents[a].id,
                            cb_result_str(res));
    }
    h->dense_agent[dense] = a;
    h->live[a] = true;
    if (h->desc.on_add != NULL) {
        h->desc.on_add(h->desc.user, a, heading);
    }
    return CB_OK;
}

/* Removes a live agent (one that is not live has no handle: nothing to do). */
static void remove_agent(cb_traj_host *h, uint32_t a)
{
    uint32_t kind, dense;
    if (!h->live[a] || cb_crowd_locate(h->crowd, h->handle[a], &kind, &dense) != CB_OK) {
        return;
    }
    uint32_t last = cb_follow_count(h->follow) - 1;
    cb_follow_remove(h->follow, h->handle[a]);
    h->dense_agent[dense] = h->dense_agent[last];
    h->live[a] = false;
    if (h->desc.on_remove != NULL) {
        h->desc.on_remove(h->desc.user, a);
    }
}

void cb_traj_host_clear(cb_traj_host *h)
{
    for (uint32_t a = 0; h->follow != NULL && a < h->desc.traj->agent_count; ++a) {
        remove_agent(h, a);
    }
    h->last_step = -1;
}

/* Arrivals and departures at frame k after frame k - 1: agents whose last frame was k - 1
 * leave, agents whose first frame is k arrive. Agents are few next to frames, so a scan per
 * frame is cheap; an index sorted by frame would serve files with millions of agents. */
static cb_result agents_at(cb_traj_host *h, int64_t k, cb_error *err)
{
    uint32_t n = h->desc.traj->agent_count;
    for (uint32_t a = 0; a < n; ++a) {
        if (h->first_k[a] <= h->last_k[a] && h->last_k[a] == k - 1) {
            remove_agent(h, a);
        }
    }
    for (uint32_t a = 0; a < n; ++a) {
        if (h->first_k[a] <= h->last_k[a] && h->first_k[a] == k) {
            cb_result res = add_agent(h, a, err);
            if (res != CB_OK) {
                return res;
            }
        }
    }
    return CB_OK;
}

/* A jump to frame k (not the one after the last step): start again with the agents live at
 * k. */
static cb_result agents_from(cb_traj_host *h, int64_t k, cb_error *err)
{
    cb_traj_host_clear(h);
    for (uint32_t a = 0; a < h->desc.traj->agent_count; ++a) {
        if (h->first_k[a] <= k && k <= h->last_k[a]) {
            cb_result res = add_agent(h, a, err);
            if (res != CB_OK) {
                return res;
            }
        }
    }
    return CB_OK;
}

/* ---- a frame ------------------------------------------------------------------------------ */

static cb_result place(cb_traj_host *h, double t, float dt, cb_error *err)
{
    uint32_t n = cb_follow_count(h->follow);
    for (uint32_t i = 0; i < n; ++i) {
        double p[3], v[3];
        cb_traj_eval(h->desc.traj, h->dense_agent[i], t, p, v);
        to_world(p, &h->pos[3 * i]);
        to_world(v, &h->vel[3 * i]);
    }
    cb_result res = cb_follow_update(h->follow, h->pos, h->vel, 0, dt);
    if (res != CB_OK) {
        return cb_error_set(err, res, "follow update: %s", cb_result_str(res));
    }
    return CB_OK;
}

cb_result cb_traj_host_step(cb_traj_host *h, int64_t k, float dt_s, cb_error *err)
{
    if (h->follow == NULL || k < 0 || k >= (int64_t)h->plan.frames) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "trajectory host: frame %lld outside [0, %u) or no follower",
                            (long long)k, h->plan.frames);
    }
    cb_result res = k == h->last_step + 1 ? agents_at(h, k, err) : agents_from(h, k, err);
    /* After a failed add the live set is not frame k's: the next step starts again from it. */
    h->last_step = res == CB_OK ? k : -1;
    if (res != CB_OK || cb_follow_count(h->follow) == 0) {
        return res;
    }
    const cb_traj *t = h->desc.traj;
    return place(h, t->t_min + (double)k / h->desc.rate_hz, dt_s, err);
}
