/* A blend space over clips of one group whose rates are not all 1, alone or under layers of
 * clips, stays flat (graph_impl.h): rate-warped, or with clip speeds and speed parameters. The
 * flat path computes the clips' rates as the general path does, and the same graph run
 * unflattened gives the same bits. Internal: it flips struct cb_graph.flat. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"
#include "graph/graph_impl.h" /* struct cb_graph.flat */
#include "graph_fixture.h"

#define BLEND(extra) BLEND_IDLE(extra, "")
#define BLEND_IDLE(extra, idle)                                                                    \
    "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\", "         \
    "\"rate_warp\": {\"speed_param\": \"cmd\"" extra "}, \"children\": ["                          \
    "{\"node\": \"idle\", \"position\": 0}, {\"node\": \"walk\", \"position\": 1.4},"              \
    "{\"node\": \"run\", \"position\": 3.5}]},"                                                    \
    "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\"" idle "},"                                  \
    "\"walk\": {\"type\": \"clip\", \"clip\": \"walk_f\"},"                                        \
    "\"run\": {\"type\": \"clip\", \"clip\": \"run_f\"}"
#define HEAD "{\"name\": \"w\", \"parameters\": [{\"name\": \"x\"}, {\"name\": \"cmd\"}],"

static const char *const GRAPHS[] = {
    HEAD "\"root\": \"loco\", \"nodes\": {" BLEND("") "}}",
    /* idle in a sync group of its own: the warp's warp_own form */
    HEAD "\"root\": \"loco\", \"nodes\": {" BLEND_IDLE("", ", \"sync_group\": \"idle\"") "}}",
    HEAD "\"root\": \"top\", \"nodes\": {\"top\": {\"type\": \"layers\", \"base\": \"loco\", "
         "\"layers\": [{\"node\": \"wave\", \"mask_joint\": \"spine_01\"}, {\"node\": \"lean\", "
         "\"mode\": \"additive\"}]}, \"wave\": {\"type\": \"clip\", \"clip\": \"wave_upper\"}, "
         "\"lean\": {\"type\": \"clip\", \"clip\": \"lean_add\"}," BLEND(", \"max_rate\": 2") "}}",
};

static cb_embedded *set; /* the embedded humanoid, and the clips its graphs name */
static const cb_clip *clips[32];
static cb_graph_json_desc jd;

/* A crowd of n characters of graph g at staggered phases, keeping weights and events. */
static cb_crowd *staggered(cb_graph *g, uint32_t n, uint32_t threads, uint32_t batch)
{
    cb_crowd *c = graph_crowd(cb_embedded_skeleton(set), g, n, threads, batch);
    add_characters(c, n, 0.1f);
    return c;
}

static uint64_t run(cb_graph *g)
{
    cb_crowd *c = staggered(g, 150, 2, 32);
    float *x = cb_crowd_param_column(c, 0, 0), *cmd = cb_crowd_param_column(c, 0, 1);
    for (uint32_t f = 0; f < 40; ++f) {
        for (uint32_t i = 0; i < 150; ++i) { /* inside and outside the bounds, idle alone */
            x[i] = (float)((i * 7 + f) % 50) * 0.075f;
            cmd[i] = (float)((i * 13 + 3 * f) % 60) * 0.05f;
        }
        assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f), CB_OK);
    }
    uint64_t h = cb_crowd_output_hash(c);
    cb_crowd_destroy(c);
    return h;
}

static cb_graph *load(const char *text, size_t k)
{
    cb_graph *g;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json(text, strlen(text), &jd, &g, &err) == CB_OK, "graph %zu: %s", k,
             err.message);
    return g;
}

static void rate_warp_flat_path_matches_general_path(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof GRAPHS / sizeof GRAPHS[0]; ++k) {
        cb_graph *g = load(GRAPHS[k], k);
        CB_CHECK(g->flat, "graph %zu: a warped blend space is flat", k);
        uint64_t flat = run(g);
        g->flat = false;
        uint64_t general = run(g);
        CB_CHECK(flat == general, "graph %zu: flat path %016llx, general path %016llx", k,
                 (unsigned long long)flat, (unsigned long long)general);
        cb_graph_destroy(g);
    }
}

/* Clips with speeds and speed parameters: every clip of the blend space on one parameter, the
 * clips on two parameters and constant speeds (negative, a clamped clip, one without any),
 * under layers of clips with their own, and a warped blend space with speeds under such
 * layers; then children alone in sync groups of their own (one, every one, a clamped one). */
#define SPACE(warp, idle, walk, run)                                                               \
    "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\"" warp ", " \
    "\"children\": [{\"node\": \"idle\", \"position\": 0}, {\"node\": \"walk\", "                  \
    "\"position\": 1.4}, {\"node\": \"run\", \"position\": 3.5}]},"                                \
    "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\"" idle "},"                                  \
    "\"walk\": {\"type\": \"clip\", \"clip\": \"walk_f\"" walk "},"                                \
    "\"run\": {\"type\": \"clip\", \"clip\": \"run_f\"" run "}}}"
#define SPEED_HEAD                                                                                 \
    "{\"name\": \"s\", \"parameters\": [{\"name\": \"x\"}, {\"name\": \"cmd\"}, "                  \
    "{\"name\": \"rate\", \"default\": 1}, {\"name\": \"rate2\"}],"
#define ALONE "\"root\": \"loco\", \"nodes\": {"
#define LAYERS(wave, lean)                                                                         \
    "\"root\": \"top\", \"nodes\": {\"top\": {\"type\": \"layers\", \"base\": \"loco\", "          \
    "\"layers\": [{\"node\": \"wave\", \"mask_joint\": \"spine_01\"}, {\"node\": \"lean\", "       \
    "\"mode\": \"additive\"}]}, \"wave\": {\"type\": \"clip\", \"clip\": \"wave_upper\"" wave "}," \
    "\"lean\": {\"type\": \"clip\", \"clip\": \"lean_add\"" lean "},"
#define ON(p) ", \"speed_param\": \"" p "\""
#define SPEED(x) ", \"speed\": " #x
#define WARP ", \"rate_warp\": {\"speed_param\": \"cmd\"}"
#define OWN(group) ", \"sync_group\": \"" group "\""

static const char *const SPEED_GRAPHS[] = {
    SPEED_HEAD ALONE SPACE("", ON("rate"), ON("rate"), ON("rate")),
    SPEED_HEAD ALONE SPACE("", SPEED(0.75), SPEED(-1.5) ON("rate"),
                           ", \"clamp\": true" ON("rate2")),
    SPEED_HEAD LAYERS(ON("rate2"), SPEED(2.5)) SPACE("", "", ON("rate"), ON("rate")),
    SPEED_HEAD LAYERS(SPEED(-0.5) ON("rate2"), ON("rate")) SPACE(WARP, SPEED(0.5), SPEED(1.25), ""),
    /* as locomotion_follow.json: idle at its own rate in a sync group of its own */
    SPEED_HEAD LAYERS(ON("rate2"), "")
        SPACE("", ", \"sync_group\": \"idle\"", ON("rate"), ON("rate")),
    /* every child alone in a group of its own (no group shared), warped or on parameters */
    SPEED_HEAD ALONE SPACE(WARP, OWN("i") SPEED(0.5), OWN("w") SPEED(-1.25), OWN("r")),
    SPEED_HEAD LAYERS("", ON("rate2"))
        SPACE("", OWN("i"), OWN("w") ON("rate"), OWN("r") SPEED(-1.2) ON("rate2")),
    /* a clamped clip, starting late, alone in its group beside two of the blend's */
    SPEED_HEAD ALONE SPACE("", "", ON("rate"),
                           OWN("r") ", \"clamp\": true, \"start_offset\": 0.3" ON("rate2")),
};

/* A speed parameter's value for character i at frame f: mostly in [-1.5, 3), and now and then
 * 0, -0, tiny, huge, NaN or infinite (stage 1 reads those as 0). */
static float speed_value(uint32_t i, uint32_t f, uint32_t salt)
{
    static const float special[] = {0.0f,  -0.0f,  NAN,   INFINITY, -INFINITY,
                                    1e-7f, -1e-7f, 1e30f, -1e30f,   1.0f};
    uint32_t h = (i * 2654435761u) ^ (f * 40503u + salt * 977u);
    h ^= h >> 13;
    if (h % 6 == 0) {
        return special[(h >> 4) % 10];
    }
    return -1.5f + (float)((i * 13u + 7u * f + 5u * salt) % 64u) * 0.07f;
}

static uint64_t fnv(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < bytes; ++k) {
        h = (h ^ p[k]) * 1099511628211ull;
    }
    return h;
}

/* Every frame's outputs, clip times, kept weights and events of a crowd of graph g on
 * `threads` threads and batches of `batch`, with speeds varying per character and frame. */
static uint64_t run_speeds(cb_graph *g, uint32_t threads, uint32_t batch)
{
    enum { N = 90, FRAMES = 30 };
    cb_crowd *c = staggered(g, N, threads, batch);
    float *col[4];
    for (uint32_t p = 0; p < 4; ++p) {
        col[p] = cb_crowd_param_column(c, 0, p);
    }
    uint64_t h = 14695981039346656037ull;
    for (uint32_t f = 0; f < FRAMES; ++f) {
        for (uint32_t i = 0; i < N; ++i) { /* idle alone to run alone, warped in and out */
            col[0][i] = (float)((i * 7 + 2 * f) % 50) * 0.075f;
            col[1][i] = (float)((i * 13 + 3 * f) % 60) * 0.05f;
            col[2][i] = speed_value(i, f, 1);
            col[3][i] = speed_value(i, f, 2);
        }
        assert_int_equal(cb_crowd_update(c, 1.0f / 60.0f + 0.002f * (float)(f % 3)), CB_OK);
        uint64_t out = cb_crowd_output_hash(c);
        h = fnv(h, &out, sizeof out);
        size_t stride = 0;
        const float *w = cb_crowd_weights(c, 0, &stride);
        for (uint32_t k = 0; k < g->clip_count; ++k) {
            h = fnv(h, cb_crowd_clip_times(c, 0, k), N * sizeof(float));
            h = fnv(h, w + k * stride, N * sizeof(float));
        }
        for (uint32_t i = 0; i < N; ++i) {
            uint32_t count = 0;
            const cb_graph_event *ev = cb_crowd_events(c, 0, i, &count);
            h = fnv(h, &count, sizeof count);
            h = fnv(h, ev, count * sizeof *ev);
        }
    }
    cb_crowd_destroy(c);
    return h;
}

static void speed_param_flat_path_matches_general_path(void **state)
{
    (void)state;
    const uint32_t threads[] = {1, 2}, batches[] = {1, 7, 32, 64};
    for (size_t k = 0; k < sizeof SPEED_GRAPHS / sizeof SPEED_GRAPHS[0]; ++k) {
        cb_graph *g = load(SPEED_GRAPHS[k], k);
        CB_CHECK(g->flat && !g->uniform_rate, "graph %zu: a blend space of speeds is flat", k);
        uint64_t reference = run_speeds(g, 1, 64);
        for (int general = 0; general < 2; ++general) {
            g->flat = !general;
            for (size_t t = 0; t < 2; ++t) {
                for (size_t b = 0; b < 4; ++b) {
                    uint64_t h = run_speeds(g, threads[t], batches[b]);
                    CB_CHECK(h == reference,
                             "graph %zu, %s path, threads %u, batch %u: %016llx, flat path at "
                             "1 x 64 %016llx",
                             k, general ? "general" : "flat", threads[t], batches[b],
                             (unsigned long long)h, (unsigned long long)reference);
                }
            }
        }
        cb_graph_destroy(g);
    }
}

/* A clip node that two layers share: the general path blends it once per layer, the flat
 * path's list cannot hold a clip twice, so flat detection must leave the graph to the general
 * path; whichever path the graph takes gives the general path's bits. */
static void shared_layer_clip_takes_the_general_path(void **state)
{
    (void)state;
    const char *text =
        HEAD "\"root\": \"top\", \"nodes\": {\"top\": {\"type\": \"layers\", \"base\": "
             "\"loco\", \"layers\": [{\"node\": \"wave\", \"mask_joint\": \"spine_01\"}, "
             "{\"node\": \"wave\", \"mask_joint\": \"spine_01\"}]}, \"wave\": {\"type\": "
             "\"clip\", \"clip\": \"wave_upper\"}," BLEND("") "}}";
    cb_graph *g = load(text, 0);
    uint64_t chosen = run(g);
    g->flat = false;
    uint64_t general = run(g);
    CB_CHECK(chosen == general, "the path taken %016llx, the general path %016llx",
             (unsigned long long)chosen, (unsigned long long)general);
    cb_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rate_warp_flat_path_matches_general_path),
        cmocka_unit_test(speed_param_flat_path_matches_general_path),
        cmocka_unit_test(shared_layer_clip_takes_the_general_path),
    };
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK) {
        return 1;
    }
    jd = cb_test_embedded_json_desc(set, clips, 32);
    int failed = CB_RUN_TESTS(tests);
    cb_embedded_destroy(set);
    return failed;
}
