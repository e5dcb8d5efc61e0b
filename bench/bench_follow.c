/* The follow path (crowdblend/follow.h) as google-benchmark sees it, beside W2:
 *   follow_update/10000          cb_follow_update alone for 10,000 characters: heading, root,
 *                                local velocity into the parameters (per_character: its cost);
 *   follow_frame/10000/64        cb_follow_update + cb_crowd_update on a W2 crowd (the 17
 *                                locomotion clips, additive and upper-body layers);
 *   follow_frame_w2/10000/64     the same crowd and velocities without the follower: the W2
 *                                frame it sits beside (the difference is what following costs);
 *   follow_features/10000/M      cb_follow_update alone on a crowd of the example graph
 *                                locomotion_follow (17 clips, a foot_lock step), M: 0 no
 *                                feature, 1 playback-rate warping, 2 foot locking, 3 both;
 *                                + 4 the heading's turn limited to 0.25 rad/s (the agents
 *                                turn at 0.2-0.6 rad/s and start facing +Z, so headings lag
 *                                their velocities), + 8 orientation warping (the pelvis turned
 *                                towards the velocity, the spine back; counter "warped": the
 *                                share of characters whose lower body was turned at the end),
 *                                + 16 stride warping (with warping; 3 of the 7 speeds are
 *                                beyond 1.35 x 1.4 m/s; counter "strided": the share of
 *                                characters with a stride scale above 1 at the end);
 *   follow_features_frame/10000/M  the same with cb_crowd_update: the whole frame, the
 *                                foot_lock step's IK on locked feet included. M 13: warping
 *                                and orientation warping (with the turn limit), 31: all.
 * The worlds are follow_world.c's, which follow_probe.c (callgrind counts) runs too.
 * One thread. The agents' motion (positions and velocities changing every frame) is computed
 * outside the timing, as a simulation would hand it over. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_all.h"
#include "crowdblend/crowdblend.h"
#include "follow_world.h"
#include "shim.h"

static void finish(cb_bench_state *st, const follow_world *w)
{
    double chars = (double)w->n * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)chars);
    cb_bench_set_counter(st, "per_character", chars,
                         CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
}

/* The world of the benchmark's first argument (characters), or a skipped benchmark. */
static bool world_start(cb_bench_state *st, follow_world *w, bool follow)
{
    if (follow_world_w2(w, (uint32_t)cb_bench_range(st, 0), follow)) {
        return true;
    }
    cb_bench_skip_with_error(st, "setup failed");
    follow_world_destroy(w);
    return false;
}

static void bm_follow_update(cb_bench_state *st, void *user)
{
    (void)user;
    follow_world w;
    if (!world_start(st, &w, true)) {
        return;
    }
    uint32_t frame = 0;
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        follow_world_move(&w, frame++);
        cb_bench_resume_timing(st);
        cb_follow_update(w.follow, w.pos, w.vel, 0, 1.0f / 60.0f);
        cb_bench_keep(cb_follow_roots(w.follow));
    }
    finish(st, &w);
    follow_world_destroy(&w);
}

/* user: non-NULL to follow, NULL for the plain W2 frame (the host writes the same local
 * velocity it would get, without placing anything). */
static void bm_frame(cb_bench_state *st, void *user)
{
    bool follow = user != NULL;
    follow_world w;
    if (!world_start(st, &w, follow)) {
        return;
    }
    uint32_t frame = 0;
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        follow_world_move(&w, frame++);
        if (!follow) {
            follow_world_host_velocity(&w);
        }
        cb_bench_resume_timing(st);
        if (follow) {
            cb_follow_update(w.follow, w.pos, w.vel, 0, 1.0f / 60.0f);
        }
        cb_crowd_update(w.crowd, 1.0f / 60.0f);
    }
    finish(st, &w);
    follow_world_destroy(&w);
}

/* user: non-NULL to time the crowd update too. Two seconds of motion first, so that feet are
 * locked and released as in a running crowd. */
static void bm_features(cb_bench_state *st, void *user)
{
    bool frame_too = user != NULL;
    follow_world w;
    if (!follow_world_features(&w, (uint32_t)cb_bench_range(st, 0), (int)cb_bench_range(st, 1))) {
        cb_bench_skip_with_error(st, "setup failed");
        follow_world_destroy(&w);
        return;
    }
    uint32_t frame = 0;
    for (; frame < 120; ++frame) {
        follow_world_move(&w, frame);
        cb_follow_update(w.follow, w.pos, w.vel, 0, 1.0f / 60.0f);
        cb_crowd_update(w.crowd, 1.0f / 60.0f);
    }
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        follow_world_move(&w, frame++);
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
    follow_world_destroy(&w);
}

void cb_bench_register_follow(void)
{
    static int on = 1;
    cb_bench_arg(cb_bench_register("follow_update", bm_follow_update, NULL), 10000);
    cb_bench_args2(cb_bench_register("follow_frame", bm_frame, &on), 10000, 64);
    cb_bench_args2(cb_bench_register("follow_frame_w2", bm_frame, NULL), 10000, 64);
    static const int modes[] = {0, 1, 2, 3, 4, 12, 13, 15, 17, 19, 31};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; ++k) {
        cb_bench_args2(cb_bench_register("follow_features", bm_features, NULL), 10000, modes[k]);
        cb_bench_args2(cb_bench_register("follow_features_frame", bm_features, &on), 10000,
                       modes[k]);
    }
}
