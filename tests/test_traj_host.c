/* traj_host: the trajectory host (src/traj/host.h) on a small plain CSV written here. The plan
 * (frames, the most agents at once, agents shown) and every frame's live set against a brute
 * force over the grid rule of host.h; every root placed exactly where the spline puts its agent
 * (the file's (x, y, elevation) as the world's (x, elevation, -y)); the callbacks balanced; a
 * loop back to frame 0 and a jump into the middle starting again with the agents live there;
 * the --seconds cut; bad arguments and a file too long for the grid refused. The --gait rule
 * that animate and serve share: an unknown clip, a clip in place (the Fox's), a walk with root
 * motion (the embedded walk_f in a pack made here), and a graph without "rate". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"
#include "test_util.h"
#include "traj/host.h"

/* Agent 7 from 0 to 2 s, 3 from 0.5 to 1.5 s, 9 from 0.2 to 0.9 s (three at once between 0.5
 * and 0.9 s), 11 a single sample between two 60 Hz frames (never shows). */
static const char CSV[] = "time,id,x,y\n"
                          "0.0,7,0,0\n1.0,7,1.2,0\n2.0,7,2.4,0.5\n"
                          "0.5,3,5,5\n1.5,3,5,6.3\n"
                          "0.2,9,-3,1\n0.9,9,-3,2\n"
                          "0.0101,11,8,8\n";
static const double RATE = 60.0;

#ifndef CB_TEST_DATA_DIR
#define CB_TEST_DATA_DIR "tests/data"
#endif

typedef struct world {
    cb_traj *traj;
    cb_embedded *set;
    cb_graph *graph;
    cb_crowd *crowd;
    cb_traj_host *host;
    uint32_t adds, removes;
    bool live[8]; /* by agent, as the callbacks tell it */
} world;

static void added(void *user, uint32_t agent, float heading)
{
    world *w = user;
    assert_true(isfinite(heading));
    assert_false(w->live[agent]);
    w->live[agent] = true;
    w->adds++;
}

static void removed(void *user, uint32_t agent)
{
    world *w = user;
    assert_true(w->live[agent]);
    w->live[agent] = false;
    w->removes++;
}

static void world_init(world *w, double seconds)
{
    memset(w, 0, sizeof *w);
    cb_error err = {0};
    cb_traj_load_desc ld = {.source_name = "host.csv"};
    assert_int_equal(cb_traj_load_text(CSV, strlen(CSV), &ld, &w->traj, &err), CB_OK);
    assert_int_equal(w->traj->agent_count, 4);
    cb_traj_host_desc hd = {.traj = w->traj,
                            .rate_hz = RATE,
                            .seconds = seconds,
                            .on_add = added,
                            .on_remove = removed,
                            .user = w};
    CB_CHECK(cb_traj_host_create(&hd, &w->host, &err) == CB_OK, "%s", err.message);
    assert_int_equal(cb_embedded_create(NULL, &w->set, NULL), CB_OK);
    const cb_clip *clips[3] = {cb_embedded_find_clip(w->set, "idle"),
                               cb_embedded_find_clip(w->set, "walk_f"),
                               cb_embedded_find_clip(w->set, "run_f")};
    cb_graph_blend_desc bd = {
        .skeleton = cb_embedded_skeleton(w->set), .clips = clips, .clip_count = 3};
    CB_CHECK(cb_graph_create_blend(&bd, &w->graph, &err) == CB_OK, "%s", err.message);
    const cb_graph *graphs[1] = {w->graph};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(w->set),
                        .capacity = cb_traj_host_query_plan(w->host).max_concurrent,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1};
    CB_CHECK(cb_crowd_create(&cd, &w->crowd, &err) == CB_OK, "%s", err.message);
    cb_follow_desc fd = {.crowd = w->crowd, .capacity = cd.capacity};
    CB_CHECK(cb_traj_host_follow(w->host, &fd, &err) == CB_OK, "%s", err.message);
}

static void world_finish(world *w)
{
    cb_traj_host_destroy(w->host);
    cb_crowd_destroy(w->crowd);
    cb_graph_destroy(w->graph);
    cb_embedded_destroy(w->set);
    cb_traj_destroy(w->traj);
}

/* The grid rule of host.h, brute force: agent a is live at frame k of `frames`. */
static bool live_at(const cb_traj *t, uint32_t a, int64_t k, uint32_t frames)
{
    double f = (cb_traj_agent_start(t, a) - t->t_min) * RATE;
    double l = (cb_traj_agent_end(t, a) - t->t_min) * RATE;
    return k < (int64_t)frames && (double)k >= f - 1e-9 && (double)k <= l + 1e-9;
}

static uint32_t live_count(const world *w, int64_t k)
{
    uint32_t n = 0, frames = cb_traj_host_query_plan(w->host).frames;
    for (uint32_t a = 0; a < w->traj->agent_count; ++a) {
        n += live_at(w->traj, a, k, frames);
    }
    return n;
}

/* After stepping frame k: the follower holds exactly the live agents, each root exactly on its
 * agent's spline at the frame's time. */
static void check_frame(const world *w, int64_t k)
{
    const cb_follow *follow = cb_traj_host_follower(w->host);
    uint32_t n = cb_follow_count(follow), frames = cb_traj_host_query_plan(w->host).frames;
    CB_CHECK(n == live_count(w, k), "frame %lld: %u characters, %u agents live", (long long)k, n,
             live_count(w, k));
    assert_int_equal(w->adds - w->removes, n);
    const uint32_t *agent = cb_traj_host_dense_agents(w->host);
    const cb_follow_root *roots = cb_follow_roots(follow);
    double t = w->traj->t_min + (double)k / RATE;
    for (uint32_t i = 0; i < n; ++i) {
        CB_CHECK(live_at(w->traj, agent[i], k, frames) && w->live[agent[i]],
                 "frame %lld: agent %u is not live", (long long)k, agent[i]);
        double p[3];
        cb_traj_eval(w->traj, agent[i], t, p, NULL);
        float want[3] = {(float)p[0], (float)p[2], (float)-p[1]};
        CB_CHECK(memcmp(roots[i].position, want, sizeof want) == 0,
                 "frame %lld agent %u: root (%g, %g, %g), spline (%g, %g, %g)", (long long)k,
                 agent[i], roots[i].position[0], roots[i].position[1], roots[i].position[2],
                 want[0], want[1], want[2]);
    }
}

static void step(world *w, int64_t k)
{
    cb_error err = {0};
    CB_CHECK(cb_traj_host_step(w->host, k, (float)(1.0 / RATE), &err) == CB_OK, "%s", err.message);
    cb_crowd_update(w->crowd, (float)(1.0 / RATE));
    check_frame(w, k);
}

static void host_plan_and_every_frame(void **state)
{
    (void)state;
    world w;
    world_init(&w, 0.0);
    cb_traj_host_plan plan = cb_traj_host_query_plan(w.host);
    /* 2 s at 60 Hz: frames 0 .. 120; agents 7, 3 and 9 at once from 0.5 to 0.9 s; 11 never. */
    assert_int_equal(plan.frames, 121);
    assert_int_equal(plan.max_concurrent, 3);
    assert_int_equal(plan.agents_shown, 3);
    uint32_t most = 0;
    for (int64_t k = 0; k < plan.frames; ++k) {
        step(&w, k);
        most = live_count(&w, k) > most ? live_count(&w, k) : most;
    }
    assert_int_equal(most, plan.max_concurrent);
    /* The loop: back to frame 0, every agent of the last frame leaves first. */
    step(&w, 0);
    assert_int_equal(w.adds - w.removes, live_count(&w, 0));
    world_finish(&w);
}

static void host_jump_and_cut(void **state)
{
    (void)state;
    world w;
    world_init(&w, 0.0);
    step(&w, 42); /* a fresh host starting in the middle: the agents live at 0.7 s */
    assert_int_equal(cb_follow_count(cb_traj_host_follower(w.host)), 3);
    step(&w, 43);
    step(&w, 100); /* a jump forward */
    step(&w, 101);
    cb_traj_host_clear(w.host);
    assert_int_equal(cb_follow_count(cb_traj_host_follower(w.host)), 0);
    assert_int_equal(w.adds, w.removes);
    world_finish(&w);

    world_init(&w, 0.6); /* --seconds 0.6: frames 0 .. 36, agent 3 (from 0.5 s) cut at 36 */
    cb_traj_host_plan plan = cb_traj_host_query_plan(w.host);
    assert_int_equal(plan.frames, 37);
    for (int64_t k = 0; k < plan.frames; ++k) {
        step(&w, k);
    }
    int64_t first, last;
    cb_traj_host_agent_frames(w.host, 0, &first, &last); /* agents sorted by id: 3 first */
    assert_int_equal(first, 30);
    assert_int_equal(last, 36);
    cb_error err = {0};
    assert_int_equal(cb_traj_host_step(w.host, plan.frames, 0.01f, &err), CB_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "frame 37"));
    world_finish(&w);
}

static void host_bad_arguments(void **state)
{
    (void)state;
    cb_traj *t = NULL;
    cb_traj_host *h = NULL;
    cb_error err = {0};
    assert_int_equal(cb_traj_load_text(CSV, strlen(CSV), NULL, &t, &err), CB_OK);
    cb_traj_host_desc hd = {.traj = t, .rate_hz = 0.5};
    assert_int_equal(cb_traj_host_create(&hd, &h, &err), CB_ERR_INVALID_ARGUMENT);
    assert_null(h);
    hd.rate_hz = 60.0;
    hd.seconds = -1.0;
    assert_int_equal(cb_traj_host_create(&hd, &h, &err), CB_ERR_INVALID_ARGUMENT);
    hd.traj = NULL;
    assert_int_equal(cb_traj_host_create(&hd, &h, &err), CB_ERR_NULL_ARGUMENT);
    hd = (cb_traj_host_desc){.traj = t, .rate_hz = 60.0};
    assert_int_equal(cb_traj_host_create(&hd, &h, &err), CB_OK);
    /* No follower yet: nothing to step. */
    assert_int_equal(cb_traj_host_step(h, 0, 0.01f, &err), CB_ERR_INVALID_ARGUMENT);
    cb_traj_host_destroy(h);
    cb_traj_host_destroy(NULL);
    cb_traj_destroy(t);
    /* 1e8 s at 60 Hz: 6e9 frames, beyond what frame numbers hold. */
    static const char LONG[] = "time,id,x,y\n0,1,0,0\n100000000,1,1,0\n";
    assert_int_equal(cb_traj_load_text(LONG, strlen(LONG), NULL, &t, &err), CB_OK);
    hd = (cb_traj_host_desc){.traj = t, .rate_hz = 60.0};
    assert_int_equal(cb_traj_host_create(&hd, &h, &err), CB_ERR_TOO_MANY);
    assert_null(h);
    assert_non_null(strstr(err.message, "frames"));
    hd.seconds = 10.0; /* the cut makes it playable */
    assert_int_equal(cb_traj_host_create(&hd, &h, &err), CB_OK);
    assert_int_equal(cb_traj_host_query_plan(h).frames, 601);
    cb_traj_host_destroy(h);
    cb_traj_destroy(t);
}

/* cb_traj_host_find_gait: the pack's clip by name when its root moves forward at 0.1 m/s or
 * more. The Fox's clips play in place; the embedded walk_f, saved into a pack here with the
 * embedded skeleton and idle, moves at its own forward speed (read from the embedded clip). */
static void host_find_gait(void **state)
{
    (void)state;
    char why[1024];
    cb_pack *fox = NULL;
    cb_error err = {0};
    assert_int_equal(cb_pack_load_file(CB_TEST_DATA_DIR "/packs/fox.cbpack", NULL, &fox, &err),
                     CB_OK);
    /* Unknown: the message lists every clip of the pack, in its order. */
    assert_null(cb_traj_host_find_gait(fox, "Trot", why, sizeof why));
    char want[1024];
    int n = snprintf(want, sizeof want, "--gait: the pack has no clip 'Trot'; its clips:");
    for (uint32_t k = 0; k < cb_pack_clip_count(fox); ++k) {
        n += snprintf(want + n, sizeof want - (size_t)n, "%s '%s'", k ? "," : "",
                      cb_clip_name(cb_pack_clip(fox, k)));
    }
    assert_string_equal(why, want);
    /* Cut to the buffer, terminated, nothing written past it. */
    char small[24 + 1];
    small[24] = 'x';
    assert_null(cb_traj_host_find_gait(fox, "Trot", small, 24));
    assert_int_equal(strlen(small), 23);
    assert_int_equal(strncmp(small, want, 23), 0);
    assert_int_equal(small[24], 'x');
    /* Every clip of the Fox plays in place: each is refused, pointing to the graph's warp. */
    for (uint32_t k = 0; k < cb_pack_clip_count(fox); ++k) {
        const cb_clip *c = cb_pack_clip(fox, k);
        assert_true(cb_clip_query_root_motion(c).forward_mps < CB_TRAJ_HOST_MIN_GAIT_SPEED_MPS);
        assert_null(cb_traj_host_find_gait(fox, cb_clip_name(c), why, sizeof why));
        assert_non_null(strstr(why, "it plays in place"));
        assert_non_null(strstr(why, "rate_warp with \"speed_from\": \"positions\""));
    }
    cb_pack_destroy(fox);

    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_clip *clips[2] = {cb_embedded_find_clip(set, "idle"),
                               cb_embedded_find_clip(set, "walk_f")};
    float walk = cb_clip_query_root_motion(clips[1]).forward_mps;
    assert_true(walk >= CB_TRAJ_HOST_MIN_GAIT_SPEED_MPS);
    cb_pack_desc pd = {.skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = 2};
    size_t size = 0;
    assert_int_equal(cb_pack_save_memory(&pd, NULL, 0, &size, &err), CB_OK);
    void *bytes = malloc(size);
    assert_int_equal(cb_pack_save_memory(&pd, bytes, size, &size, &err), CB_OK);
    cb_pack *pack = NULL;
    assert_int_equal(cb_pack_load_memory(bytes, size, NULL, &pack, &err), CB_OK);
    uint32_t index = 0;
    assert_int_equal(cb_pack_find_clip(pack, "walk_f", &index), CB_OK);
    const cb_clip *gait = cb_traj_host_find_gait(pack, "walk_f", why, sizeof why);
    assert_ptr_equal(gait, cb_pack_clip(pack, index));
    assert_float_equal(cb_clip_query_root_motion(gait).forward_mps, walk, 1e-4f * walk);
    assert_null(cb_traj_host_find_gait(pack, "idle", why, sizeof why));
    assert_non_null(strstr(why, "--gait: clip 'idle' moves its root forward at"));

    /* The graph must have "rate" for the warp to write. */
    static const char WITH[] = "{\"name\": \"w\", \"parameters\": [{\"name\": \"rate\", "
                               "\"default\": 1}], \"root\": \"c\", \"nodes\": {\"c\": "
                               "{\"type\": \"clip\", \"clip\": \"walk_f\", "
                               "\"speed_param\": \"rate\"}}}";
    static const char WITHOUT[] = "{\"name\": \"w\", \"root\": \"c\", \"nodes\": {\"c\": "
                                  "{\"type\": \"clip\", \"clip\": \"walk_f\"}}}";
    cb_graph_json_desc jd = {.skeleton = cb_pack_skeleton(pack), .clips = &gait, .clip_count = 1};
    cb_graph *with = NULL, *without = NULL;
    assert_int_equal(cb_graph_load_json(WITH, strlen(WITH), &jd, &with, &err), CB_OK);
    assert_int_equal(cb_graph_load_json(WITHOUT, strlen(WITHOUT), &jd, &without, &err), CB_OK);
    why[0] = '\0';
    assert_true(cb_traj_host_gait_graph(with, "with.json", why, sizeof why));
    assert_string_equal(why, "");
    assert_false(cb_traj_host_gait_graph(without, "without.json", why, sizeof why));
    assert_non_null(strstr(why, "--gait: graph 'without.json' has no \"rate\" parameter"));
    cb_graph_destroy(with);
    cb_graph_destroy(without);
    cb_pack_destroy(pack);
    free(bytes);
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_plan_and_every_frame),
        cmocka_unit_test(host_jump_and_cut),
        cmocka_unit_test(host_bad_arguments),
        cmocka_unit_test(host_find_gait),
    };
    return CB_RUN_TESTS(tests);
}
