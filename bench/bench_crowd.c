/* The crowd frame as google-benchmark sees it: cb_crowd_update on the embedded set.
 *   crowd_update_{simd,ref}/<characters>/<joints>   W1 (3 clips, fixed weights) at 1,000 and
 *       the locomotion frame (W2) at 10,000; ref runs the scalar reference kernels, so the
 *       shim prints the whole frame's SIMD speed-up;
 *   crowd_update_cold_simd/10000/64   W2 with the caches flushed before every frame (a real
 *       game touches other data between animation updates);
 *   crowd_update_threads/10000/<threads>   W2 on 1 and 2 threads, wall time.
 * One thread unless the name says otherwise; the host's steering runs outside the timing. */
#include <stdlib.h>
#include <string.h>

#include "bench_all.h"
#include "cli/scene.h"
#include "crowd/crowd_impl.h"
#include "shim.h"

static cb_scene *scene_for(cb_bench_state *st, uint32_t characters, uint32_t threads, bool w1)
{
    cb_scene_desc d = {
        .characters = characters,
        .threads = threads,
        .fixed_three_clips = w1,
        .layers = !w1,
        .seed = 3,
    };
    cb_scene *s = cb_scene_create(&d);
    if (s == NULL) {
        cb_bench_skip_with_error(st, "scene creation failed");
    }
    return s;
}

static void run_frames(cb_bench_state *st, cb_scene *s, bool cold)
{
    cb_crowd *crowd = cb_scene_crowd(s);
    const float dt = 1.0f / 60.0f;
    /* 64 MiB, twice the L3: writing it evicts the crowd's clips, state and outputs. */
    size_t flush_bytes = cold ? (size_t)64 << 20 : 0;
    unsigned char *flush = cold ? malloc(flush_bytes) : NULL;
    cb_crowd_update(crowd, dt);
    while (cb_bench_keep_running(st)) {
        cb_bench_pause_timing(st);
        cb_scene_host_step(s, dt);
        if (flush != NULL) {
            memset(flush, (int)(cb_bench_iterations(st) & 0xff), flush_bytes);
            cb_bench_keep(flush);
        }
        cb_bench_resume_timing(st);
        cb_crowd_update(crowd, dt);
    }
    free(flush);
    double chars = (double)cb_crowd_count(crowd, 0) * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)chars);
    cb_bench_set_counter(st, "per_character", chars,
                         CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
}

static void bm_update(cb_bench_state *st, bool ref, bool cold)
{
    uint32_t characters = (uint32_t)cb_bench_range(st, 0);
    cb_scene *s = scene_for(st, characters, 1, characters <= 1000);
    if (s == NULL) {
        return;
    }
    cb_crowd_set_kernels(cb_scene_crowd(s), ref ? &cb_graph_kernels_ref : &cb_graph_kernels_simd);
    run_frames(st, s, cold);
    cb_scene_destroy(s);
}

static void bm_update_simd(cb_bench_state *st, void *user)
{
    (void)user;
    bm_update(st, false, false);
}

static void bm_update_ref(cb_bench_state *st, void *user)
{
    (void)user;
    bm_update(st, true, false);
}

static void bm_update_cold(cb_bench_state *st, void *user)
{
    (void)user;
    bm_update(st, false, true);
}

static void bm_update_threads(cb_bench_state *st, void *user)
{
    (void)user;
    cb_scene *s =
        scene_for(st, (uint32_t)cb_bench_range(st, 0), (uint32_t)cb_bench_range(st, 1), false);
    if (s != NULL) {
        run_frames(st, s, false);
        cb_scene_destroy(s);
    }
}

void cb_bench_register_crowd(void)
{
    /* Second argument: joints of the embedded skeleton (fixed), for the name format. */
    cb_bench_args2(
        cb_bench_args2(cb_bench_register("crowd_update_simd", bm_update_simd, NULL), 1000, 64),
        10000, 64);
    cb_bench_args2(
        cb_bench_args2(cb_bench_register("crowd_update_ref", bm_update_ref, NULL), 1000, 64), 10000,
        64);
    cb_bench_args2(cb_bench_register("crowd_update_cold_simd", bm_update_cold, NULL), 10000, 64);
    cb_bench_use_real_time(cb_bench_args2(
        cb_bench_args2(cb_bench_register("crowd_update_threads", bm_update_threads, NULL), 10000,
                       1),
        10000, 2));
}
