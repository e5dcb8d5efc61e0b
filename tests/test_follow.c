/* follow: characters that follow a simulation (crowdblend/follow.h). Defaults and every
 * validation error; the root exactly at the given position (bit for bit, and the skeleton's
 * root joint there in the world after a crowd update); the heading rule against its closed
 * form (along the velocity, held when standing, the share in between); the local velocity
 * written into the graph's parameters; the dense order mirrored through add and remove; a
 * failing update changes nothing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "crowdblend/crowdblend.h"
#include "test_util.h"

static const float PI = 3.14159265358979f;

typedef struct fixture {
    cb_embedded *set;
    cb_graph *graph; /* the blend space the crowd runs */
    cb_crowd *crowd;
    cb_follow *follow;
} fixture;

static const char *const clip_names[5] = {"idle", "walk_f", "walk_l", "walk_r", "run_f"};

static void fixture_init(fixture *f, uint32_t capacity, bool make_follow)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(cb_embedded_create(NULL, &f->set, NULL), CB_OK);
    const cb_clip *clips[5];
    for (int k = 0; k < 5; ++k) {
        clips[k] = cb_embedded_find_clip(f->set, clip_names[k]);
    }
    cb_graph_blend_desc bd = {
        .skeleton = cb_embedded_skeleton(f->set), .clips = clips, .clip_count = 5};
    cb_error err = {0};
    assert_int_equal(cb_graph_create_blend(&bd, &f->graph, &err), CB_OK);
    const cb_graph *graphs[1] = {f->graph};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(f->set),
                        .capacity = capacity,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1};
    assert_int_equal(cb_crowd_create(&cd, &f->crowd, &err), CB_OK);
    if (make_follow) {
        cb_follow_desc fd = {.crowd = f->crowd, .capacity = capacity};
        CB_CHECK(cb_follow_create(&fd, &f->follow, &err) == CB_OK, "%s", err.message);
    }
}

static void fixture_finish(fixture *f)
{
    cb_follow_destroy(f->follow);
    cb_crowd_destroy(f->crowd);
    cb_graph_destroy(f->graph);
    cb_embedded_destroy(f->set);
}

/* The blend-space graph's parameter `which` ("blend_<which>", crowdblend/graph.h), its column. */
static float *blend_column(const fixture *f, uint32_t which)
{
    char name[16];
    snprintf(name, sizeof name, CB_GRAPH_BLEND_PARAM_PREFIX "%u", which);
    uint32_t p = CB_INVALID_INDEX;
    assert_int_equal(cb_crowd_find_param(f->crowd, 0, name, &p), CB_OK);
    return cb_crowd_param_column(f->crowd, 0, p);
}

static void follow_desc_defaults(void **state)
{
    (void)state;
    cb_follow_desc d = cb_follow_query_desc(NULL);
    assert_true(d.stand_speed_mps == CB_FOLLOW_DEFAULT_STAND_SPEED);
    assert_true(d.follow_speed_mps == 2.0f * CB_FOLLOW_DEFAULT_STAND_SPEED);
    assert_null(d.crowd);
    assert_int_equal(d.kind, 0);
    assert_int_equal(d.capacity, 0);
    assert_null(d.right_param);
    assert_null(d.forward_param);
    cb_follow_desc set = {.stand_speed_mps = 0.4f};
    assert_true(cb_follow_query_desc(&set).follow_speed_mps == 0.8f);
    set.follow_speed_mps = 0.5f;
    assert_true(cb_follow_query_desc(&set).follow_speed_mps == 0.5f);
}

static void expect_create(const cb_follow_desc *d, cb_result code, const char *part)
{
    cb_follow *out = NULL;
    cb_error err = {0};
    cb_result r = cb_follow_create(d, &out, &err);
    CB_CHECK(r == code, "got %s (%s), want %s", cb_result_str(r), err.message, cb_result_str(code));
    CB_CHECK(out == NULL, "output written on failure");
    CB_CHECK(part == NULL || strstr(err.message, part) != NULL, "message '%s' lacks '%s'",
             err.message, part);
}

static void *never_alloc(size_t size, size_t align, void *user)
{
    (void)size, (void)align, (void)user;
    return NULL;
}

static void follow_create_validates(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 8, false);
    cb_follow *out = NULL;
    assert_int_equal(cb_follow_create(NULL, &out, NULL), CB_ERR_NULL_ARGUMENT);
    cb_follow_desc d = {.crowd = f.crowd, .capacity = 8};
    assert_int_equal(cb_follow_create(&d, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    expect_create(&(cb_follow_desc){.capacity = 8}, CB_ERR_NULL_ARGUMENT, "crowd");
    expect_create(&(cb_follow_desc){._start_canary = 1, .crowd = f.crowd, .capacity = 8},
                  CB_ERR_CANARY, "canary");
    expect_create(&(cb_follow_desc){.crowd = f.crowd}, CB_ERR_INVALID_ARGUMENT, "capacity");
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = 8, .kind = 1},
                  CB_ERR_INVALID_ARGUMENT, "kind");
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = 8, .stand_speed_mps = -1},
                  CB_ERR_INVALID_ARGUMENT, "speeds");
    expect_create(
        &(cb_follow_desc){
            .crowd = f.crowd, .capacity = 8, .stand_speed_mps = 0.5f, .follow_speed_mps = 0.4f},
        CB_ERR_INVALID_ARGUMENT, "speeds");
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = 8, .right_param = "vx"},
                  CB_ERR_NOT_FOUND, "'vx'");
    expect_create(
        &(cb_follow_desc){
            .crowd = f.crowd, .capacity = 8, .right_param = "blend_0", .forward_param = "blend_0"},
        CB_ERR_MISMATCH, "one parameter");
    cb_follow_desc alloc_half = d;
    alloc_half.allocator.alloc_fn = never_alloc; /* without a free_fn */
    expect_create(&alloc_half, CB_ERR_ALLOCATOR, NULL);
    cb_character ch;
    assert_int_equal(cb_crowd_add(f.crowd, 0, 0.0f, &ch), CB_OK);
    expect_create(&d, CB_ERR_INVALID_ARGUMENT, "already has characters");
    cb_follow_destroy(NULL);
    fixture_finish(&f);
}

/* The root is where the simulation says, bit for bit, and after a crowd update the skeleton's
 * root joint (whose motion the clips extract) is there in the world too. */
static void follow_root_exactly_on_the_position(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("follow_root_exactly_on_the_position");
    enum { N = 37 };
    fixture f;
    fixture_init(&f, N, true);
    for (int i = 0; i < N; ++i) {
        cb_character ch;
        assert_int_equal(cb_follow_add(f.follow, (float)cb_prng_double(&r), 0.0f, &ch), CB_OK);
    }
    float pos[N * 3], vel[N * 3];
    for (int frame = 0; frame < 30; ++frame) {
        for (int i = 0; i < 3 * N; ++i) {
            pos[i] = cb_prng_range(&r, -500.0f, 500.0f);
            vel[i] = i % 3 == 1 ? 0.0f : cb_prng_range(&r, -2.5f, 2.5f);
        }
        assert_int_equal(cb_follow_update(f.follow, pos, vel, 0), CB_OK);
        assert_int_equal(cb_crowd_update(f.crowd, 1.0f / 60.0f), CB_OK);
        const cb_follow_root *roots = cb_follow_roots(f.follow);
        for (int i = 0; i < N; ++i) {
            CB_CHECK(memcmp(roots[i].position, &pos[3 * i], sizeof roots[i].position) == 0,
                     "character %d is not exactly at its position", i);
            float world[16];
            cb_follow_root_matrix(&roots[i], world);
            const float *joint0 = cb_crowd_matrices(f.crowd, 0, (uint32_t)i);
            for (int k = 0; k < 3; ++k) {
                double w = (double)world[k] * joint0[12] + (double)world[4 + k] * joint0[13] +
                           (double)world[8 + k] * joint0[14] + world[12 + k];
                /* joint 0 carries the extracted root motion: in place at the model origin. */
                CB_CHECK(fabs(w - pos[3 * i + k]) <= 1e-6 * (1 + fabs(pos[3 * i + k])),
                         "character %d: root joint at %.7g, trajectory at %.7g", i, w,
                         (double)pos[3 * i + k]);
            }
        }
    }
    fixture_finish(&f);
}

/* The heading rule: exactly along the velocity at or above the follow speed, held below the
 * stand speed, the share (s - stand) / (follow - stand) of the turn in between; the local
 * velocity is the world velocity turned into the character's frame. */
static void follow_heading_and_local_velocity(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("follow_heading_and_local_velocity");
    fixture f;
    fixture_init(&f, 1, true);
    cb_character ch;
    assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.3f, &ch), CB_OK);
    assert_true(fabsf(cb_follow_roots(f.follow)[0].yaw - 0.3f) < 1e-7f);
    const float *col_right = blend_column(&f, 0);
    const float *col_fwd = blend_column(&f, 1);
    cb_err_track ey = cb_err_track_make("yaw"), ev = cb_err_track_make("local velocity");
    for (int k = 0; k < 2000; ++k) {
        double before = cb_follow_roots(f.follow)[0].yaw;
        double dir = cb_prng_range(&r, -PI, PI);
        double speed = k % 4 == 0   ? cb_prng_range(&r, 0.0f, 0.15f)
                       : k % 4 == 1 ? cb_prng_range(&r, 0.15f, 0.3f)
                                    : cb_prng_range(&r, 0.3f, 4.0f);
        float pos[3] = {1, 2, 3};
        float vel[3] = {(float)(speed * sin(dir)), cb_prng_range(&r, -1, 1),
                        (float)(speed * cos(dir))};
        assert_int_equal(cb_follow_update(f.follow, pos, vel, 0), CB_OK);
        const cb_follow_root *root = &cb_follow_roots(f.follow)[0];
        /* The closed form, in double. */
        double s = hypot(vel[0], vel[2]), target = atan2(vel[0], vel[2]), want;
        if (s < 0.15) {
            want = before;
        } else if (s >= 0.3) {
            want = target;
        } else {
            want = before + (s - 0.15) / 0.15 * remainder(target - before, 2 * PI);
        }
        cb_err_track_add(&ey, remainder((double)root->yaw - want, 2 * PI), 0.0, (size_t)k);
        double y = root->yaw;
        double fwd = vel[0] * sin(y) + vel[2] * cos(y), left = vel[0] * cos(y) - vel[2] * sin(y);
        cb_err_track_add(&ev, col_fwd[0], fwd, (size_t)k);
        cb_err_track_add(&ev, col_right[0], -left, (size_t)k);
        cb_err_track_add(&ev, root->speed_mps, s, (size_t)k);
        /* The quaternion is the yaw about +Y. */
        cb_err_track_add(&ey, root->rotation[1], sin(y / 2), (size_t)k);
        cb_err_track_add(&ey, root->rotation[3], cos(y / 2), (size_t)k);
        CB_CHECK(root->rotation[0] == 0.0f && root->rotation[2] == 0.0f, "rotation off +Y");
        if (s >= 0.3) {
            /* Along the velocity: all of it forward, none sideways. */
            cb_err_track_add(&ev, col_fwd[0], s, (size_t)k);
            cb_err_track_add(&ev, col_right[0], 0.0, (size_t)k);
        }
    }
    /* float trigonometry and the float products of a few-m/s velocity */
    cb_err_track_check(&ey, 2e-6);
    cb_err_track_check(&ev, 4e-6);
    fixture_finish(&f);
}

static void follow_root_matrix_turns_forward(void **state)
{
    (void)state;
    cb_follow_root root = {.position = {1, 2, 3}, .yaw = 0.7f};
    float m[16];
    cb_follow_root_matrix(&root, m);
    /* The model's forward (+Z) goes to (sin yaw, 0, cos yaw), its left (+X) to
     * (cos yaw, 0, -sin yaw), and the origin to the position. */
    assert_true(fabsf(m[8] - sinf(0.7f)) < 1e-7f && m[9] == 0.0f &&
                fabsf(m[10] - cosf(0.7f)) < 1e-7f);
    assert_true(fabsf(m[0] - cosf(0.7f)) < 1e-7f && fabsf(m[2] + sinf(0.7f)) < 1e-7f);
    assert_true(m[12] == 1.0f && m[13] == 2.0f && m[14] == 3.0f && m[15] == 1.0f);
    assert_true(m[5] == 1.0f && m[3] == 0.0f && m[7] == 0.0f && m[11] == 0.0f);
}

/* Add and remove mirror the crowd's swap-remove: each character keeps its own heading. */
static void follow_mirrors_the_dense_order(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 6, true);
    cb_character ch[6];
    for (int i = 0; i < 6; ++i) {
        assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.1f * (float)i, &ch[i]), CB_OK);
    }
    assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &(cb_character){0}), CB_ERR_CAPACITY);
    assert_int_equal(cb_follow_remove(f.follow, ch[1]), CB_OK);
    assert_int_equal(cb_follow_count(f.follow), 5);
    assert_int_equal(cb_crowd_count(f.crowd, 0), 5);
    const cb_follow_root *roots = cb_follow_roots(f.follow);
    for (int i = 0; i < 6; ++i) {
        if (i == 1) {
            continue;
        }
        uint32_t kind, dense;
        assert_int_equal(cb_crowd_locate(f.crowd, ch[i], &kind, &dense), CB_OK);
        CB_CHECK(fabsf(roots[dense].yaw - 0.1f * (float)i) < 1e-6f,
                 "character %d at dense %u has yaw %g", i, dense, (double)roots[dense].yaw);
    }
    assert_int_equal(cb_follow_remove(f.follow, ch[1]), CB_ERR_STALE_HANDLE);
    assert_int_equal(cb_follow_add(f.follow, NAN, 0.0f, &ch[1]), CB_ERR_NOT_FINITE);
    /* A character added behind the follower's back: every call refuses. */
    cb_character other;
    assert_int_equal(cb_crowd_add(f.crowd, 0, 0.0f, &other), CB_OK);
    float zero[18] = {0};
    assert_int_equal(cb_follow_update(f.follow, zero, zero, 0), CB_ERR_MISMATCH);
    assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &ch[1]), CB_ERR_MISMATCH);
    assert_int_equal(cb_follow_remove(f.follow, ch[0]), CB_ERR_MISMATCH);
    fixture_finish(&f);
}

/* Bad input changes nothing: roots and parameters stay as they were. */
static void follow_update_validates(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 3, true);
    cb_character ch;
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &ch), CB_OK);
    }
    /* Strided input: 4 floats per character. */
    float pos[12] = {1, 0, 1, -1, 2, 0, 2, -1, 3, 0, 3, -1};
    float vel[12] = {0, 0, 1, -1, 1, 0, 0, -1, 0, 0, -1, -1};
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 16), CB_OK);
    cb_follow_root before[3];
    memcpy(before, cb_follow_roots(f.follow), sizeof before);
    assert_true(fabsf(before[1].yaw - PI / 2) < 1e-6f && fabsf(fabsf(before[2].yaw) - PI) < 1e-6f);
    assert_true(before[2].position[0] == 3.0f && before[2].position[2] == 3.0f);
    const float *fwd = blend_column(&f, 1);
    float fwd_before[3];
    memcpy(fwd_before, fwd, sizeof fwd_before);
    float bad[12];
    memcpy(bad, vel, sizeof bad);
    bad[9] = NAN;
    assert_int_equal(cb_follow_update(f.follow, pos, bad, 16), CB_ERR_NOT_FINITE);
    bad[9] = 2e4f;
    assert_int_equal(cb_follow_update(f.follow, pos, bad, 16), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 14), CB_ERR_MISALIGNED);
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 8), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_follow_update(f.follow, NULL, vel, 0), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_follow_update(NULL, pos, vel, 0), CB_ERR_NULL_ARGUMENT);
    assert_memory_equal(before, cb_follow_roots(f.follow), sizeof before);
    assert_memory_equal(fwd_before, fwd, sizeof fwd_before);
    fixture_finish(&f);
}

/* A graph kind: the default parameters are the example graphs' "vx" and "vy". */
static void follow_finds_graph_parameters(void **state)
{
    (void)state;
    cb_embedded *set;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_clip *walk = cb_embedded_find_clip(set, "walk_f");
    const char *json = "{\"parameters\": [{\"name\": \"vy\"}, {\"name\": \"vx\"}],"
                       " \"root\": \"w\", \"nodes\": {\"w\": {\"type\": \"clip\", \"clip\": "
                       "\"walk_f\"}}}";
    cb_graph_json_desc jd = {
        .skeleton = cb_embedded_skeleton(set), .clips = &walk, .clip_count = 1};
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json(json, strlen(json), &jd, &g, &err) == CB_OK, "%s", err.message);
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(set),
                        .capacity = 2,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1};
    cb_crowd *crowd;
    assert_int_equal(cb_crowd_create(&cd, &crowd, &err), CB_OK);
    cb_follow *follow;
    cb_follow_desc fd = {.crowd = crowd, .capacity = 2};
    CB_CHECK(cb_follow_create(&fd, &follow, &err) == CB_OK, "%s", err.message);
    cb_character ch;
    assert_int_equal(cb_follow_add(follow, 0.0f, 0.0f, &ch), CB_OK);
    float pos[3] = {0, 0, 0}, vel[3] = {0.5f, 0, 1.0f};
    assert_int_equal(cb_follow_update(follow, pos, vel, 0), CB_OK);
    /* Heading along the velocity: vy (forward) gets the speed, vx (right) nothing. */
    assert_true(fabsf(cb_crowd_param_column(crowd, 0, 0)[0] - hypotf(0.5f, 1.0f)) < 1e-6f);
    assert_true(fabsf(cb_crowd_param_column(crowd, 0, 1)[0]) < 1e-6f);
    cb_follow_destroy(follow);
    cb_crowd_destroy(crowd);
    cb_graph_destroy(g);
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(follow_desc_defaults),
        cmocka_unit_test(follow_create_validates),
        cmocka_unit_test(follow_root_exactly_on_the_position),
        cmocka_unit_test(follow_heading_and_local_velocity),
        cmocka_unit_test(follow_root_matrix_turns_forward),
        cmocka_unit_test(follow_mirrors_the_dense_order),
        cmocka_unit_test(follow_update_validates),
        cmocka_unit_test(follow_finds_graph_parameters),
    };
    return CB_RUN_TESTS(tests);
}
