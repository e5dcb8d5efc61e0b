/* A rate-warped blend space over clips of one group, alone or under layers of clips, stays flat
 * (graph_impl.h): the flat path computes the warp's rate as the general path does, and the same
 * graph run unflattened gives the same bits. Internal: it flips struct cb_graph.flat. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"
#include "graph/graph_impl.h" /* struct cb_graph.flat */

#define BLEND(extra)                                                                               \
    "\"loco\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"x\", "         \
    "\"rate_warp\": {\"speed_param\": \"cmd\"" extra "}, \"children\": ["                          \
    "{\"node\": \"idle\", \"position\": 0}, {\"node\": \"walk\", \"position\": 1.4},"              \
    "{\"node\": \"run\", \"position\": 3.5}]},"                                                    \
    "\"idle\": {\"type\": \"clip\", \"clip\": \"idle\"},"                                          \
    "\"walk\": {\"type\": \"clip\", \"clip\": \"walk_f\"},"                                        \
    "\"run\": {\"type\": \"clip\", \"clip\": \"run_f\"}"
#define HEAD "{\"name\": \"w\", \"parameters\": [{\"name\": \"x\"}, {\"name\": \"cmd\"}],"

static const char *const GRAPHS[] = {
    HEAD "\"root\": \"loco\", \"nodes\": {" BLEND("") "}}",
    HEAD "\"root\": \"top\", \"nodes\": {\"top\": {\"type\": \"layers\", \"base\": \"loco\", "
         "\"layers\": [{\"node\": \"wave\", \"mask_joint\": \"spine_01\"}, {\"node\": \"lean\", "
         "\"mode\": \"additive\"}]}, \"wave\": {\"type\": \"clip\", \"clip\": \"wave_upper\"}, "
         "\"lean\": {\"type\": \"clip\", \"clip\": \"lean_add\"}," BLEND(", \"max_rate\": 2") "}}",
};

static uint64_t run(const cb_embedded *set, cb_graph *g)
{
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(set),
                        .capacity = 150,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 2,
                        .batch_size = 32};
    cb_crowd *c;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&cd, &c, &err) == CB_OK, "%s", err.message);
    for (uint32_t i = 0; i < 150; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, (float)(i % 10) / 10.0f, &ch), CB_OK);
    }
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

static void rate_warp_flat_path_matches_general_path(void **state)
{
    (void)state;
    cb_embedded *set;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_clip *clips[32];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(set, clips, 32);
    for (size_t k = 0; k < sizeof GRAPHS / sizeof GRAPHS[0]; ++k) {
        cb_graph *g;
        cb_error err = {0};
        CB_CHECK(cb_graph_load_json(GRAPHS[k], strlen(GRAPHS[k]), &jd, &g, &err) == CB_OK, "%s",
                 err.message);
        CB_CHECK(g->flat, "graph %zu: a warped blend space of one group is flat", k);
        uint64_t flat = run(set, g);
        g->flat = false;
        uint64_t general = run(set, g);
        CB_CHECK(flat == general, "graph %zu: flat path %016llx, general path %016llx", k,
                 (unsigned long long)flat, (unsigned long long)general);
        cb_graph_destroy(g);
    }
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rate_warp_flat_path_matches_general_path),
    };
    return CB_RUN_TESTS(tests);
}
