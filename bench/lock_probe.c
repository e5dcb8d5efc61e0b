/* lock_probe: what foot locking costs per character-frame, for callgrind (issue 12):
 *
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=measured \
 *       lock_probe MODE CHARACTERS FRAMES GRAPH
 *
 * MODE 0: the follower on GRAPH (examples/graphs/locomotion_follow.json) with playback-rate
 * warping and no lock; 1: the same with the graph's foot_lock step driven by the follower's
 * lock (cb_follow_lock.root_param). CHARACTERS agents walk at 0.6-1.8 m/s turning
 * at 0.1-0.5 rad/s; 60 frames run first (feet lock and release as in a running crowd), then
 * FRAMES frames inside measured(), whose instructions divided by CHARACTERS x FRAMES are the
 * cost per character-frame (docs/trajectories.md, "Foot locking as a graph step"). Prints the
 * follower's lock counts. Public API only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "crowdblend/crowdblend.h"

typedef struct probe {
    cb_crowd *crowd;
    cb_follow *follow;
    float *pos, *vel;
    uint32_t n;
} probe;

static void move(probe *p, uint32_t frame)
{
    const float dt = 1.0f / 60.0f;
    for (uint32_t i = 0; i < p->n; ++i) {
        float speed = 0.6f + 1.2f * (float)(i % 7) / 7.0f, turn = 0.1f + 0.1f * (float)(i % 5);
        float a = turn * dt * (float)frame + (float)i;
        p->vel[3 * i] = speed * sinf(a);
        p->vel[3 * i + 2] = speed * cosf(a);
        p->pos[3 * i] += p->vel[3 * i] * dt;
        p->pos[3 * i + 2] += p->vel[3 * i + 2] * dt;
    }
}

static void run_frames(probe *p, uint32_t from, uint32_t frames)
{
    for (uint32_t f = from; f < from + frames; ++f) {
        move(p, f);
        cb_follow_update(p->follow, p->pos, p->vel, 0, 1.0f / 60.0f);
        cb_crowd_update(p->crowd, 1.0f / 60.0f);
    }
}

/* The frames counted: not inlined, callgrind's --toggle-collect names it. */
__attribute__((noinline)) void measured(probe *p, uint32_t from, uint32_t frames);
__attribute__((noinline)) void measured(probe *p, uint32_t from, uint32_t frames)
{
    run_frames(p, from, frames);
}

static cb_follow_lock lock_of(int mode)
{
    if (mode == 1) {
        return (cb_follow_lock){.root_param = {"root_x", "root_y", "root_z", "root_yaw"},
                                .locked_param = {"locked_l", "locked_r"},
                                .failed_param = {"failed_l", "failed_r"}};
    }
    return (cb_follow_lock){.release_s = 0.0f};
}

/* The lock's weight parameter where the graph has one (the example graphs' "lock"). */
static const char *weight_of(const cb_graph *graph, int mode)
{
    uint32_t index = 0;
    return mode == 1 && cb_graph_find_param(graph, "lock", &index) == CB_OK ? "lock" : NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: lock_probe MODE CHARACTERS FRAMES GRAPH\n");
        return 2;
    }
    int mode = atoi(argv[1]);
    probe p = {.n = (uint32_t)atoi(argv[2])};
    uint32_t frames = (uint32_t)atoi(argv[3]);
    cb_embedded *set = NULL;
    cb_graph *graph = NULL;
    cb_error err = {0};
    if (mode < 0 || mode > 1 || p.n == 0 || cb_embedded_create(NULL, &set, &err) != CB_OK) {
        fprintf(stderr, "lock_probe: bad arguments %s\n", err.message);
        return 2;
    }
    const cb_clip *clips[64];
    uint32_t count = (uint32_t)cb_embedded_clip_count(set);
    count = count < 64 ? count : 64;
    for (uint32_t k = 0; k < count; ++k) {
        clips[k] = cb_embedded_clip(set, k);
    }
    cb_graph_json_desc jd = {
        .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = count};
    const cb_graph *graphs[1];
    cb_crowd_desc cd = {.skeleton = jd.skeleton,
                        .capacity = p.n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = true};
    cb_follow_desc fd = {.capacity = p.n,
                         .warp = {.rate_param = "rate", .gait_speed_mps = 1.4f},
                         .lock = lock_of(mode)};
    p.pos = calloc(3 * (size_t)p.n, sizeof(float));
    p.vel = calloc(3 * (size_t)p.n, sizeof(float));
    int rc = 1;
    if (p.pos == NULL || p.vel == NULL ||
        cb_graph_load_json_file(argv[4], &jd, &graph, &err) != CB_OK ||
        (graphs[0] = graph, cb_crowd_create(&cd, &p.crowd, &err)) != CB_OK ||
        (fd.crowd = p.crowd, fd.lock.weight_param = weight_of(graph, mode),
         cb_follow_create(&fd, &p.follow, &err)) != CB_OK) {
        fprintf(stderr, "lock_probe: %s\n", err.message);
        goto done;
    }
    for (uint32_t i = 0; i < p.n; ++i) {
        cb_character ch;
        p.pos[3 * i] = 3.0f * (float)i; /* apart */
        if (cb_follow_add(p.follow, (float)((i * 2654435761u) % 1000u) / 1000.0f, 0.0f, &ch) !=
            CB_OK) {
            goto done;
        }
    }
    run_frames(&p, 0, 60);
    measured(&p, 60, frames);
    cb_follow_stats st = cb_follow_query_stats(p.follow);
    printf("{\"mode\": %d, \"characters\": %u, \"frames\": %u, \"locks\": %llu, "
           "\"reach_failures\": %llu}\n",
           mode, p.n, frames, (unsigned long long)st.locks, (unsigned long long)st.reach_failures);
    rc = 0;
done:
    cb_follow_destroy(p.follow);
    cb_crowd_destroy(p.crowd);
    cb_graph_destroy(graph);
    cb_embedded_destroy(set);
    free(p.pos);
    free(p.vel);
    return rc;
}
