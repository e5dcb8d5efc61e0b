/* The follow path (crowdblend/follow.h) as google-benchmark sees it, beside W2:
 *   follow_update/10000          cb_follow_update alone for 10,000 characters: heading, root,
 *                                local velocity into the parameters (per_character: its cost);
 *   follow_frame/10000/64        cb_follow_update + cb_crowd_update on a W2 crowd (the 17
 *                                locomotion clips, additive and upper-body layers);
 *   follow_frame_w2/10000/64     the same crowd and velocities without the follower: the W2
 *                                frame it sits beside (the difference is what following costs);
 *   follow_features/10000/M      cb_follow_update alone on a crowd of the example graph
 *                                locomotion_follow (17 clips, two foot IK steps), M: 0 no
 *                                feature, 1 playback-rate warping, 2 foot locking, 3 both;
 *                                + 4 the heading's turn limited to 0.25 rad/s (the agents
 *                                turn at 0.2-0.6 rad/s and start facing +Z, so headings lag
 *                                their velocities), + 8 orientation warping (the pelvis turned
 *                                towards the velocity, the spine back; counter "warped": the
 *                                share of characters whose lower body was turned at the end),
 *                                + 16 stride warping (with warping; 3 of the 7 speeds are
 *                                beyond 1.35 x 1.4 m/s; counter "strided": the share of
 *                                characters with a stride scale above 1 at the end);
 *   follow_features_frame/10000/M  the same with cb_crowd_update: the whole frame, the IK
 *                                steps that locked feet switch on included.
 * One thread. The agents' motion (positions and velocities changing every frame) is computed
 * outside the timing, as a simulation would hand it over. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_all.h"
#include "cli/example_graphs.h"
#include "crowdblend/crowdblend.h"
#include "shim.h"

static const char *const clip_names[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

typedef struct world {
    cb_embedded *set;
    cb_graph *graph; /* the feature worlds' locomotion_follow */
    cb_crowd *crowd;
    cb_follow *follow;
    uint32_t n;
    float *pos, *vel;
    float *left, *forward; /* the crowd's velocity columns (for the run without follower) */
} world;

static void world_destroy(world *w)
{
    cb_follow_destroy(w->follow);
    cb_crowd_destroy(w->crowd);
    cb_graph_destroy(w->graph);
    cb_embedded_destroy(w->set);
    free(w->pos);
    free(w->vel);
}

static bool world_create(world *w, uint32_t n, bool follow)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    if (cb_embedded_create(NULL, &w->set, NULL) != CB_OK) {
        return false;
    }
    const cb_clip *clips[17];
    for (int k = 0; k < 17; ++k) {
        clips[k] = cb_embedded_find_clip(w->set, clip_names[k]);
    }
    cb_graph_blend_desc bd = {
        .skeleton = cb_embedded_skeleton(w->set),
        .clips = clips,
        .clip_count = 17,
        .additive = {.clip = cb_embedded_find_clip(w->set, "lean_add")},
        .upper_body = {.clip = cb_embedded_find_clip(w->set, "wave_upper"),
                       .mask_joint = "spine_01"},
    };
    if (cb_graph_create_blend(&bd, &w->graph, NULL) != CB_OK) {
        return false;
    }
    const cb_graph *graphs[1] = {w->graph};
    cb_crowd_desc cd = {
        .skeleton = cb_embedded_skeleton(w->set),
        .capacity = n,
        .graphs = graphs,
        .graph_count = 1,
        .thread_count = 1,
    };
    cb_follow_desc fd = {.capacity = n};
    w->pos = calloc(3 * (size_t)n, sizeof(float));
    w->vel = calloc(3 * (size_t)n, sizeof(float));
    if (w->pos == NULL || w->vel == NULL || cb_crowd_create(&cd, &w->crowd, NULL) != CB_OK) {
        return false;
    }
    fd.crowd = w->crowd;
    if (follow && cb_follow_create(&fd, &w->follow, NULL) != CB_OK) {
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        float phase = (float)((i * 2654435761u) % 1000u) / 1000.0f;
        cb_result r = follow ? cb_follow_add(w->follow, phase, 0.0f, &ch)
                             : cb_crowd_add(w->crowd, 0, phase, &ch);
        if (r != CB_OK) {
            return false;
        }
    }
    /* The blend space's parameters (crowdblend/graph.h): blend_0 left (+X), blend_1 forward. */
    uint32_t left = 0, forward = 0;
    cb_crowd_find_param(w->crowd, 0, CB_GRAPH_BLEND_PARAM_PREFIX "0", &left);
    cb_crowd_find_param(w->crowd, 0, CB_GRAPH_BLEND_PARAM_PREFIX "1", &forward);
    w->left = cb_crowd_param_column(w->crowd, 0, left);
    w->forward = cb_crowd_param_column(w->crowd, 0, forward);
    return true;
}

/* Frame f of a wandering crowd: each agent walks or runs on a slowly turning circle. */
static void move(world *w, uint32_t frame)
{
    const float dt = 1.0f / 60.0f;
    for (uint32_t i = 0; i < w->n; ++i) {
        float speed = 0.4f + 3.0f * (float)(i % 7) / 7.0f;
        float turn = 0.2f + 0.1f * (float)(i % 5);
        float a = turn * dt * (float)frame + (float)i;
        w->vel[3 * i] = speed * sinf(a);
        w->vel[3 * i + 2] = speed * cosf(a);
        w->pos[3 * i] += w->vel[3 * i] * dt;
        w->pos[3 * i + 2] += w->vel[3 * i + 2] * dt;
    }
}

/* The example graph locomotion_follow and a follower with the features of `mode` (bit 0:
 * warping, bit 1: locking, bit 2: turn limit, bit 3: orientation warping, bit 4: stride
 * warping), n characters added
 * through it. */
static bool features_world_create(world *w, uint32_t n, int mode)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    const cb_example_graph *ex = cb_example_graph_find("locomotion_follow");
    if (ex == NULL || cb_embedded_create(NULL, &w->set, NULL) != CB_OK) {
        return false;
    }
    const cb_clip *clips[32];
    size_t count = cb_embedded_clip_count(w->set);
    count = count < 32 ? count : 32;
    for (size_t k = 0; k < count; ++k) {
        clips[k] = cb_embedded_clip(w->set, k);
    }
    const cb_skeleton *sk = cb_embedded_skeleton(w->set);
    cb_graph_json_desc jd = {.skeleton = sk, .clips = clips, .clip_count = (uint32_t)count};
    if (cb_graph_load_json(ex->text, ex->length, &jd, &w->graph, NULL) != CB_OK) {
        return false;
    }
    const cb_graph *graphs[1] = {w->graph};
    cb_crowd_desc cd = {.skeleton = sk,
                        .capacity = n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = true};
    w->pos = calloc(3 * (size_t)n, sizeof(float));
    w->vel = calloc(3 * (size_t)n, sizeof(float));
    if (w->pos == NULL || w->vel == NULL || cb_crowd_create(&cd, &w->crowd, NULL) != CB_OK) {
        return false;
    }
    cb_follow_desc fd = {.crowd = w->crowd, .capacity = n};
    if (mode & 1) {
        fd.warp = (cb_follow_warp){.rate_param = "rate", .gait_speed_mps = 1.4f};
    }
    if (mode & 2) {
        fd.lock = (cb_follow_lock){.target_param = {{"foot_l_x", "foot_l_y", "foot_l_z"},
                                                    {"foot_r_x", "foot_r_y", "foot_r_z"}},
                                   .weight_param = {"foot_l_w", "foot_r_w"}};
        /* slot_clips NULL: the clips the graph's clip nodes play. */
    }
    if (mode & 4) {
        fd.max_turn_rps = 0.25f;
    }
    if (mode & 8) {
        fd.orient = (cb_follow_orient){.angle_param = "warp"};
    }
    if (mode & 16) {
        fd.stride = (cb_follow_stride){.scale_param = "stride",
                                       .direction_param = {"stride_x", "stride_z"}};
    }
    if (cb_follow_create(&fd, &w->follow, NULL) != CB_OK) {
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        float phase = (float)((i * 2654435761u) % 1000u) / 1000.0f;
        if (cb_follow_add(w->follow, phase, 0.0f, &ch) != CB_OK) {
            return false;
        }
    }
    return true;
}

static void finish(cb_bench_state *st, const world *w)
{
    double chars = (double)w->n * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)chars);
    cb_bench_set_counter(st, "per_character", chars,
                         CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
}

/* The world of the benchmark's first argument (characters), or a skipped benchmark. */
static bool world_start(cb_bench_state *st, world *w, bool follow)
{
    if (world_create(w, (uint32_t)cb_bench_range(st, 0), follow)) {
        return true;
    }
    cb_bench_skip_with_error(st, "setup failed");
    world_destroy(w);
    return false;
}

static void bm_follow_update(cb_bench_state *st, void *user)
{
    (void)user;
    world w;
    if (!world_start(st, &w, true)) {
        return;
    }
    uint32_t frame = 0;
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        move(&w, frame++);
        cb_bench_resume_timing(st);
        cb_follow_update(w.follow, w.pos, w.vel, 0, 1.0f / 60.0f);
        cb_bench_keep(cb_follow_roots(w.follow));
    }
    finish(st, &w);
    world_destroy(&w);
}

/* user: non-NULL to follow, NULL for the plain W2 frame (the host writes the same local
 * velocity it would get, without placing anything). */
static void bm_frame(cb_bench_state *st, void *user)
{
    bool follow = user != NULL;
    world w;
    if (!world_start(st, &w, follow)) {
        return;
    }
    uint32_t frame = 0;
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        move(&w, frame++);
        if (!follow) {
            for (uint32_t i = 0; i < w.n; ++i) {
                w.left[i] = 0.0f;
                w.forward[i] = hypotf(w.vel[3 * i], w.vel[3 * i + 2]);
            }
        }
        cb_bench_resume_timing(st);
        if (follow) {
            cb_follow_update(w.follow, w.pos, w.vel, 0, 1.0f / 60.0f);
        }
        cb_crowd_update(w.crowd, 1.0f / 60.0f);
    }
    finish(st, &w);
    world_destroy(&w);
}

/* user: non-NULL to time the crowd update too. Two seconds of motion first, so that feet are
 * locked and released as in a running crowd. */
static void bm_features(cb_bench_state *st, void *user)
{
    bool frame_too = user != NULL;
    world w;
    if (!features_world_create(&w, (uint32_t)cb_bench_range(st, 0), (int)cb_bench_range(st, 1))) {
        cb_bench_skip_with_error(st, "setup failed");
        world_destroy(&w);
        return;
    }
    uint32_t frame = 0;
    for (; frame < 120; ++frame) {
        move(&w, frame);
        cb_follow_update(w.follow, w.pos, w.vel, 0, 1.0f / 60.0f);
        cb_crowd_update(w.crowd, 1.0f / 60.0f);
    }
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        move(&w, frame++);
        cb_bench_resume_timing(st);
        cb_follow_update(w.follow, w.pos, w.vel, 0, 1.0f / 60.0f);
        if (!frame_too) {
            cb_bench_pause_timing(st);
        }
        cb_crowd_update(w.crowd, 1.0f / 60.0f);
        if (!frame_too) {
            cb_bench_resume_timing(st);
        }
    }
    const cb_follow_root *roots = cb_follow_roots(w.follow);
    uint32_t warped = 0, strided = 0;
    for (uint32_t i = 0; i < w.n; ++i) {
        warped += roots[i].warp_rad != 0.0f;
        strided += roots[i].stride > 1.0f;
    }
    cb_bench_set_counter(st, "warped", (double)warped / (double)w.n, CB_BENCH_COUNTER_DEFAULT);
    cb_bench_set_counter(st, "strided", (double)strided / (double)w.n, CB_BENCH_COUNTER_DEFAULT);
    finish(st, &w);
    world_destroy(&w);
}

void cb_bench_register_follow(void)
{
    static int on = 1;
    cb_bench_arg(cb_bench_register("follow_update", bm_follow_update, NULL), 10000);
    cb_bench_args2(cb_bench_register("follow_frame", bm_frame, &on), 10000, 64);
    cb_bench_args2(cb_bench_register("follow_frame_w2", bm_frame, NULL), 10000, 64);
    static const int modes[] = {0, 1, 2, 3, 4, 12, 15, 17, 19};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; ++k) {
        cb_bench_args2(cb_bench_register("follow_features", bm_features, NULL), 10000, modes[k]);
        cb_bench_args2(cb_bench_register("follow_features_frame", bm_features, &on), 10000,
                       modes[k]);
    }
}
