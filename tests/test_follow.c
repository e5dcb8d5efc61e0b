/* follow: characters that follow a simulation (crowdblend/follow.h). Defaults and every
 * validation error; the root exactly at the given position (bit for bit, and the skeleton's
 * root joint there in the world after a crowd update); the heading rule against its closed
 * form (along the velocity, held when standing, the share in between); the local velocity
 * written into the graph's parameters; the dense order mirrored through add and remove; a
 * failing update changes nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
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
    assert_null(d.left_param);
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
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = CB_CROWD_MAX_CAPACITY + 1},
                  CB_ERR_INVALID_ARGUMENT, "capacity");
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = 8, .kind = 1},
                  CB_ERR_INVALID_ARGUMENT, "kind");
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = 8, .max_turn_rps = -1},
                  CB_ERR_INVALID_ARGUMENT, "max_turn_rps");
    expect_create(&(cb_follow_desc){.crowd = f.crowd,
                                    .capacity = 8,
                                    .warp = {.rate_param = "blend_0", .gait_speed_mps = 0}},
                  CB_ERR_INVALID_ARGUMENT, "gait_speed_mps");
    expect_create(&(cb_follow_desc){.crowd = f.crowd,
                                    .capacity = 8,
                                    .warp = {.rate_param = "nope", .gait_speed_mps = 1.4f}},
                  CB_ERR_NOT_FOUND, "nope");
    expect_create(&(cb_follow_desc){.crowd = f.crowd,
                                    .capacity = 8,
                                    .lock = {.locked_param = {"blend_0", "blend_1"}}},
                  CB_ERR_NULL_ARGUMENT, "root_param");
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = 8, .stand_speed_mps = -1},
                  CB_ERR_INVALID_ARGUMENT, "speeds");
    expect_create(
        &(cb_follow_desc){
            .crowd = f.crowd, .capacity = 8, .stand_speed_mps = 0.5f, .follow_speed_mps = 0.4f},
        CB_ERR_INVALID_ARGUMENT, "speeds");
    expect_create(&(cb_follow_desc){.crowd = f.crowd, .capacity = 8, .left_param = "vx"},
                  CB_ERR_NOT_FOUND, "'vx'");
    expect_create(
        &(cb_follow_desc){
            .crowd = f.crowd, .capacity = 8, .left_param = "blend_0", .forward_param = "blend_0"},
        CB_ERR_MISMATCH, "one parameter");
    /* every parameter the follower writes is its own (a rate written over a velocity) */
    expect_create(&(cb_follow_desc){.crowd = f.crowd,
                                    .capacity = 8,
                                    .warp = {.rate_param = "blend_0", .gait_speed_mps = 1.4f}},
                  CB_ERR_MISMATCH, "left_param and warp.rate_param are one parameter");
    cb_follow_desc alloc_half = d;
    alloc_half.allocator.alloc_fn = never_alloc; /* without a free_fn */
    expect_create(&alloc_half, CB_ERR_ALLOCATOR, NULL);
    cb_character ch;
    assert_int_equal(cb_crowd_add(f.crowd, 0, 0.0f, &ch), CB_OK);
    expect_create(&d, CB_ERR_INVALID_ARGUMENT, "already has characters");
    cb_follow_destroy(NULL);
    fixture_finish(&f);
}

/* capacity 0 is the crowd's (cb_crowd_capacity): the follower takes every character the crowd
 * can hold, and each of them follows (its root exactly on its position, the speed of a
 * velocity along its heading in the forward parameter); one more is refused by both. An
 * explicit capacity below the crowd's still caps the follower, with the crowd not yet full. */
static void follow_capacity_defaults_to_the_crowds(void **state)
{
    (void)state;
    enum { N = 23 };
    fixture f;
    fixture_init(&f, N, false);
    cb_follow_desc d = {.crowd = f.crowd};
    assert_int_equal(cb_follow_query_desc(&d).capacity, cb_crowd_capacity(f.crowd));
    assert_int_equal(cb_crowd_capacity(f.crowd), N);
    cb_error err = {0};
    CB_CHECK(cb_follow_create(&d, &f.follow, &err) == CB_OK, "%s", err.message);
    cb_character ch;
    for (int i = 0; i < N; ++i) {
        CB_CHECK(cb_follow_add(f.follow, 0.0f, 0.0f, &ch) == CB_OK, "add %d of %d", i, N);
    }
    assert_int_equal(cb_follow_count(f.follow), N);
    assert_int_equal(cb_crowd_count(f.crowd, 0), N);
    assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &ch), CB_ERR_CAPACITY);
    assert_int_equal(cb_crowd_count(f.crowd, 0), N);
    float pos[N * 3], vel[N * 3];
    for (int i = 0; i < N; ++i) {
        float a = 0.27f * (float)i, speed = 0.5f + 0.1f * (float)i; /* above follow speed */
        pos[3 * i] = (float)i;
        pos[3 * i + 1] = 0.0f;
        pos[3 * i + 2] = -2.0f * (float)i;
        vel[3 * i] = speed * sinf(a);
        vel[3 * i + 1] = 0.0f;
        vel[3 * i + 2] = speed * cosf(a);
    }
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 0, 1.0f / 60.0f), CB_OK);
    const cb_follow_root *roots = cb_follow_roots(f.follow);
    const float *fwd = blend_column(&f, 1);
    for (int i = 0; i < N; ++i) {
        CB_CHECK(memcmp(roots[i].position, &pos[3 * i], sizeof roots[i].position) == 0,
                 "character %d is not exactly at its position", i);
        double speed = hypot(vel[3 * i], vel[3 * i + 2]);
        CB_CHECK(fabs(fwd[i] - speed) <= 1e-6 * speed, "character %d: forward %g, speed %g", i,
                 (double)fwd[i], speed);
    }
    assert_int_equal(cb_crowd_update(f.crowd, 1.0f / 60.0f), CB_OK);
    /* The explicit form, 5 of 23, on a fresh crowd (a kind must be empty at create). */
    fixture_finish(&f);
    fixture_init(&f, N, false);
    d = (cb_follow_desc){.crowd = f.crowd, .capacity = 5};
    assert_int_equal(cb_follow_query_desc(&d).capacity, 5);
    CB_CHECK(cb_follow_create(&d, &f.follow, &err) == CB_OK, "%s", err.message);
    for (int i = 0; i < 5; ++i) {
        assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &ch), CB_OK);
    }
    assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &ch), CB_ERR_CAPACITY);
    assert_int_equal(cb_crowd_count(f.crowd, 0), 5); /* the follower's limit, not the crowd's */
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 0, 1.0f / 60.0f), CB_OK);
    for (int i = 0; i < 5; ++i) {
        CB_CHECK(memcmp(cb_follow_roots(f.follow)[i].position, &pos[3 * i], 3 * sizeof(float)) == 0,
                 "character %d is not exactly at its position", i);
    }
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
        assert_int_equal(cb_follow_update(f.follow, pos, vel, 0, 1.0f / 60.0f), CB_OK);
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
    const float *col_left = blend_column(&f, 0);
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
        assert_int_equal(cb_follow_update(f.follow, pos, vel, 0, 1.0f / 60.0f), CB_OK);
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
        cb_err_track_add(&ev, col_left[0], left, (size_t)k); /* +X: the model's left */
        cb_err_track_add(&ev, root->speed_mps, s, (size_t)k);
        /* The quaternion is the yaw about +Y. */
        cb_err_track_add(&ey, root->rotation[1], sin(y / 2), (size_t)k);
        cb_err_track_add(&ey, root->rotation[3], cos(y / 2), (size_t)k);
        CB_CHECK(root->rotation[0] == 0.0f && root->rotation[2] == 0.0f, "rotation off +Y");
        if (s >= 0.3) {
            /* Along the velocity: all of it forward, none sideways. */
            cb_err_track_add(&ev, col_fwd[0], s, (size_t)k);
            cb_err_track_add(&ev, col_left[0], 0.0, (size_t)k);
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
     * (cos yaw, 0, -sin yaw), and the origin to the position; sine and cosine from detmath
     * (1.5e-7, src/simd/detmath.h), against double here. */
    const double s = sin((double)0.7f), c = cos((double)0.7f), tol = 2e-7;
    assert_true(fabs(m[8] - s) < tol && m[9] == 0.0f && fabs(m[10] - c) < tol);
    assert_true(fabs(m[0] - c) < tol && fabs(m[2] + s) < tol);
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
    assert_int_equal(cb_follow_update(f.follow, zero, zero, 0, 1.0f / 60.0f), CB_ERR_MISMATCH);
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
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 16, 1.0f / 60.0f), CB_OK);
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
    assert_int_equal(cb_follow_update(f.follow, pos, bad, 16, 1.0f / 60.0f), CB_ERR_NOT_FINITE);
    bad[9] = 2e4f;
    assert_int_equal(cb_follow_update(f.follow, pos, bad, 16, 1.0f / 60.0f),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 14, 1.0f / 60.0f), CB_ERR_MISALIGNED);
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 8, 1.0f / 60.0f),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_follow_update(f.follow, NULL, vel, 0, 1.0f / 60.0f), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_follow_update(NULL, pos, vel, 0, 1.0f / 60.0f), CB_ERR_NULL_ARGUMENT);
    assert_memory_equal(before, cb_follow_roots(f.follow), sizeof before);
    assert_memory_equal(fwd_before, fwd, sizeof fwd_before);
    fixture_finish(&f);
}

/* The documented input rule, character by character and X, Y, Z in order: the first value that
 * is not finite (position or velocity) gives CB_ERR_NOT_FINITE, the first beyond 1e9 m or
 * 1e4 m/s CB_ERR_INVALID_ARGUMENT, whichever comes first (a position's before its velocity's
 * of the same axis for the range, a non-finite value before a range at one axis). */
static cb_result expected_input_code(const float *pos, const float *vel, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            double p = pos[3 * i + k], v = vel[3 * i + k];
            if (!isfinite(p) || !isfinite(v)) {
                return CB_ERR_NOT_FINITE;
            }
            if (fabs(p) > 1e9 || fabs(v) > 1e4) {
                return CB_ERR_INVALID_ARGUMENT;
            }
        }
    }
    return CB_OK;
}

/* Packed input (stride 0 and 12) is checked all at once first: the same codes as strided input
 * and the rule above, for bad values anywhere (one, or two of different kinds in either order),
 * the bounds themselves accepted and the next float past them refused; a refused update
 * changes nothing. */
static void follow_update_validates_packed(void **state)
{
    (void)state;
    enum { N = 37 }; /* not a multiple of any vector width */
    fixture f;
    fixture_init(&f, N, true);
    cb_character ch;
    for (uint32_t i = 0; i < N; ++i) {
        assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &ch), CB_OK);
    }
    float pos[3 * N], vel[3 * N], wide_pos[4 * N], wide_vel[4 * N];
    uint32_t seed = 12345u;
    for (uint32_t j = 0; j < 3 * N; ++j) {
        seed = seed * 1664525u + 1013904223u;
        pos[j] = (float)(seed >> 8) / 16777216.0f * 200.0f - 100.0f;
        vel[j] = (float)((seed >> 4) & 0xffff) / 65536.0f * 6.0f - 3.0f;
    }
    assert_int_equal(cb_follow_update(f.follow, pos, vel, 0, 1.0f / 60.0f), CB_OK);
    cb_follow_root before[N];
    memcpy(before, cb_follow_roots(f.follow), sizeof before);
    const float *fwd = blend_column(&f, 1);
    float fwd_before[N];
    memcpy(fwd_before, fwd, sizeof fwd_before);
    const float bad_values[] = {NAN,
                                -NAN,
                                INFINITY,
                                -INFINITY,
                                1.5e9f,
                                -1.5e9f,
                                2e4f,
                                -2e4f,
                                1e30f,
                                nextafterf(1e9f, 2e9f),
                                nextafterf(1e4f, 2e4f),
                                -nextafterf(1e4f, 2e4f)};
    const size_t kinds = sizeof bad_values / sizeof bad_values[0];
    int checked = 0;
    for (int trial = 0; trial < 400; ++trial) {
        float p[3 * N], v[3 * N];
        memcpy(p, pos, sizeof p);
        memcpy(v, vel, sizeof v);
        int bad = 1 + trial % 2;
        for (int b = 0; b < bad; ++b) {
            seed = seed * 1664525u + 1013904223u;
            uint32_t at = (seed >> 8) % (3 * N);
            float value = bad_values[(seed >> 20) % kinds];
            float *col = ((seed >> 3) & 1) != 0 ? p : v;
            col[at] = value;
        }
        cb_result want = expected_input_code(p, v, N);
        for (uint32_t i = 0; i < N; ++i) {
            memcpy(&wide_pos[4 * i], &p[3 * i], 3 * sizeof(float));
            memcpy(&wide_vel[4 * i], &v[3 * i], 3 * sizeof(float));
            wide_pos[4 * i + 3] = NAN; /* the padding is not read */
            wide_vel[4 * i + 3] = NAN;
        }
        if (want == CB_OK) {
            continue; /* a value past a bound on the other column, e.g. 2e4 as a position */
        }
        ++checked;
        assert_int_equal(cb_follow_update(f.follow, p, v, 0, 1.0f / 60.0f), want);
        assert_int_equal(cb_follow_update(f.follow, p, v, 12, 1.0f / 60.0f), want);
        assert_int_equal(cb_follow_update(f.follow, wide_pos, wide_vel, 16, 1.0f / 60.0f), want);
        assert_memory_equal(before, cb_follow_roots(f.follow), sizeof before);
        assert_memory_equal(fwd_before, fwd, sizeof fwd_before);
    }
    assert_true(checked > 300);
    /* The bounds themselves and -0 pass. */
    float p[3 * N], v[3 * N];
    memcpy(p, pos, sizeof p);
    memcpy(v, vel, sizeof v);
    p[0] = 1e9f, p[3 * N - 1] = -1e9f, v[1] = -0.0f, v[3 * N - 2] = 1e4f, v[5] = -1e4f;
    assert_int_equal(expected_input_code(p, v, N), CB_OK);
    assert_int_equal(cb_follow_update(f.follow, p, v, 0, 1.0f / 60.0f), CB_OK);
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
    assert_int_equal(cb_follow_update(follow, pos, vel, 0, 1.0f / 60.0f), CB_OK);
    /* Heading along the velocity: vy (forward) gets the speed, vx (left) nothing. */
    assert_true(fabsf(cb_crowd_param_column(crowd, 0, 0)[0] - hypotf(0.5f, 1.0f)) < 1e-6f);
    assert_true(fabsf(cb_crowd_param_column(crowd, 0, 1)[0]) < 1e-6f);
    cb_follow_destroy(follow);
    cb_crowd_destroy(crowd);
    cb_graph_destroy(g);
    cb_embedded_destroy(set);
}

/* With max_turn_rps the heading turns at most max_turn_rps x dt per update, towards the
 * velocity's direction (the shorter way), and gets there; the root is still exactly on the
 * position and the local velocity is the world velocity seen from the limited heading. */
static void follow_turn_rate_limit(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1, false);
    cb_follow_desc fd = {.crowd = f.crowd, .capacity = 1, .max_turn_rps = 2.0f};
    cb_error err = {0};
    CB_CHECK(cb_follow_create(&fd, &f.follow, &err) == CB_OK, "%s", err.message);
    cb_character ch;
    assert_int_equal(cb_follow_add(f.follow, 0.0f, 0.0f, &ch), CB_OK);
    const double dt = 1.0 / 60.0, target = -2.5; /* 2.5 rad to the right, at 1.2 m/s */
    float pos[3] = {1.0f, 0.0f, 2.0f};
    float vel[3] = {(float)(1.2 * sin(target)), 0.0f, (float)(1.2 * cos(target))};
    double yaw = 0.0;
    for (int k = 0; k < 90; ++k) {
        assert_int_equal(cb_follow_update(f.follow, pos, vel, 0, (float)dt), CB_OK);
        const cb_follow_root *r = cb_follow_roots(f.follow);
        /* The closed form: the limit's steps until the direction is reached. */
        yaw = fmax(target, yaw - 2.0 * dt);
        CB_CHECK(fabs(r->yaw - yaw) < 2e-5, "update %d: yaw %g, want %g", k, (double)r->yaw, yaw);
        assert_memory_equal(r->position, pos, sizeof pos);
        double fwd = vel[0] * sin(yaw) + vel[2] * cos(yaw);
        double left = vel[0] * cos(yaw) - vel[2] * sin(yaw);
        CB_CHECK(fabs(r->forward_mps - fwd) < 1e-4 && fabs(r->left_mps - left) < 1e-4,
                 "update %d: local velocity (%g, %g), want (%g, %g)", k, (double)r->left_mps,
                 (double)r->forward_mps, left, fwd);
    }
    assert_true(yaw == target); /* reached after 75 updates */
    fixture_finish(&f);
}

/* ---- playback-rate warping and foot locking (examples/graphs/locomotion_follow.json) ---- */

typedef struct gait_fixture {
    cb_embedded *set;
    cb_graph *graph;
    cb_crowd *crowd;
    cb_follow *follow;
    const cb_clip *slot_clips[32];
    uint32_t ball[2];
} gait_fixture;

static const float DT = 1.0f / 60.0f;

/* The example graph's foot locking: its foot_lock step locks, the follower gives it the roots
 * and reads its outputs. */
static const cb_follow_lock example_lock = {
    .root_param = {"root_x", "root_y", "root_z", "root_yaw"},
    .weight_param = "lock",
    .locked_param = {"locked_l", "locked_r"},
    .failed_param = {"failed_l", "failed_r"}};

/* The example graph from its file, a crowd of n, a follower with warping (walk: 1.4 m/s) and,
 * when lock is set, foot locking. */
static void gait_init(gait_fixture *g, uint32_t n, bool warp, bool lock)
{
    memset(g, 0, sizeof *g);
    assert_int_equal(cb_embedded_create(NULL, &g->set, NULL), CB_OK);
    const cb_clip *clips[32];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(g->set, clips, 32);
    const cb_skeleton *sk = jd.skeleton;
    cb_error err = {0};
    const char *path = CB_EXAMPLES_DIR "/locomotion_follow.json";
    CB_CHECK(cb_graph_load_json_file(path, &jd, &g->graph, &err) == CB_OK, "%s", err.message);
    /* Slot s plays the clip the graph says (cb_graph_clip); the example names each clip node
     * after its clip, an independent check of the query. */
    uint32_t slots = cb_graph_clip_count(g->graph);
    assert_true(slots <= 32);
    for (uint32_t s = 0; s < slots; ++s) {
        const char *node = cb_graph_node_name(g->graph, cb_graph_clip_node(g->graph, s));
        g->slot_clips[s] = cb_graph_clip(g->graph, s);
        assert_ptr_equal(g->slot_clips[s], cb_embedded_find_clip(g->set, node));
    }
    const cb_graph *graphs[1] = {g->graph};
    cb_crowd_desc cd = {.skeleton = sk,
                        .capacity = n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = true};
    CB_CHECK(cb_crowd_create(&cd, &g->crowd, &err) == CB_OK, "%s", err.message);
    cb_follow_desc fd = {.crowd = g->crowd, .capacity = n};
    if (warp) {
        fd.warp = (cb_follow_warp){.rate_param = "rate", .gait_speed_mps = 1.4f};
    }
    if (lock) {
        fd.lock = example_lock;
    }
    CB_CHECK(cb_follow_create(&fd, &g->follow, &err) == CB_OK, "%s", err.message);
    assert_int_equal(cb_skeleton_find_joint(sk, "ball_l", &g->ball[0]), CB_OK);
    assert_int_equal(cb_skeleton_find_joint(sk, "ball_r", &g->ball[1]), CB_OK);
}

static void gait_finish(gait_fixture *g)
{
    cb_follow_destroy(g->follow);
    cb_crowd_destroy(g->crowd);
    cb_graph_destroy(g->graph);
    cb_embedded_destroy(g->set);
}

/* Joint j of character i in the world, in double: the root's matrix times the model matrix. */
static void world_joint(const gait_fixture *g, uint32_t i, uint32_t j, double out[3])
{
    const cb_follow_root *root = &cb_follow_roots(g->follow)[i];
    const float *t = &cb_crowd_matrices(g->crowd, 0, i)[16 * (size_t)j + 12];
    double s = sin((double)root->yaw), c = cos((double)root->yaw);
    out[0] = root->position[0] + c * t[0] + s * t[2];
    out[1] = root->position[1] + t[1];
    out[2] = root->position[2] - s * t[0] + c * t[2];
}

/* The rate is the commanded speed over the walk's, within the bounds, and the blend's root
 * speed (the crowd's root motion over dt) equals the command: exactly the walk played at that
 * rate inside the bounds, and still the command below them, where idle blends in. */
static void follow_warp_matches_the_commanded_speed(void **state)
{
    (void)state;
    const float speeds[] = {0.4f, 0.6f, 0.9f, 1.2f, 1.4f, 1.7f, 1.85f};
    const uint32_t n = sizeof speeds / sizeof speeds[0];
    gait_fixture g;
    gait_init(&g, n, true, false);
    uint32_t rate_param;
    assert_int_equal(cb_graph_find_param(g.graph, "rate", &rate_param), CB_OK);
    float pos[3 * 8] = {0}, vel[3 * 8] = {0};
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_follow_add(g.follow, 0.25f, 0.0f, &ch), CB_OK);
        vel[3 * i + 2] = speeds[i]; /* straight along +Z, the heading */
    }
    double travelled[8] = {0};
    const int frames = 240;
    for (int k = 0; k < frames; ++k) {
        assert_int_equal(cb_follow_update(g.follow, pos, vel, 0, DT), CB_OK);
        assert_int_equal(cb_crowd_update(g.crowd, DT), CB_OK);
        const cb_root_delta *rm = cb_crowd_root_motion(g.crowd, 0);
        for (uint32_t i = 0; i < n && k >= 60; ++i) { /* after the blend has settled */
            travelled[i] += hypot(rm[i].translation[0], rm[i].translation[2]);
        }
    }
    const float *rate = cb_crowd_param_column(g.crowd, 0, rate_param);
    for (uint32_t i = 0; i < n; ++i) {
        double want =
            fmin(fmax(speeds[i] / 1.4, CB_FOLLOW_DEFAULT_MIN_RATE), CB_FOLLOW_DEFAULT_MAX_RATE);
        CB_CHECK(fabs(rate[i] - want) < 1e-6, "speed %g: rate %g, want %g", (double)speeds[i],
                 (double)rate[i], want);
        double speed = travelled[i] / ((frames - 60) * (double)DT);
        bool within = speeds[i] >= 1.4f * CB_FOLLOW_DEFAULT_MIN_RATE &&
                      speeds[i] <= 1.4f * CB_FOLLOW_DEFAULT_MAX_RATE;
        /* Inside the bounds the walk alone plays: its speed times the rate, to float
         * rounding; outside, the blend space's interpolation of speeds (idle or run). */
        double tolerance = within ? 1e-3 : 0.02 * speeds[i];
        CB_CHECK(fabs(speed - speeds[i]) < tolerance, "commanded %g m/s: the root moves %g",
                 (double)speeds[i], speed);
    }
    cb_follow_stats st = cb_follow_query_stats(g.follow);
    assert_true(st.rate_clamped > 0); /* 0.4, 0.6 and 1.85 m/s */
    gait_finish(&g);
}

#define SOFTEN 0.99 /* the example graph's two_bone_ik soften */
static double dist3(const double a[3], const double b[3])
{
    return sqrt(pow(a[0] - b[0], 2) + pow(a[1] - b[1], 2) + pow(a[2] - b[2], 2));
}

/* Whether the leg reaches a point: closer to the thigh joint than the thigh-calf and calf-ball
 * lengths together, with 0.1 mm to spare (the output's own bone lengths). */
/* Character 0's leg of `foot` in the world: thigh, calf, ball. */
static void world_leg(const gait_fixture *g, int foot, double leg[3][3])
{
    static const char *const names[2][2] = {{"thigh_l", "calf_l"}, {"thigh_r", "calf_r"}};
    uint32_t thigh, calf;
    const cb_skeleton *sk = cb_embedded_skeleton(g->set);
    assert_int_equal(cb_skeleton_find_joint(sk, names[foot][0], &thigh), CB_OK);
    assert_int_equal(cb_skeleton_find_joint(sk, names[foot][1], &calf), CB_OK);
    world_joint(g, 0, thigh, leg[0]);
    world_joint(g, 0, calf, leg[1]);
    world_joint(g, 0, g->ball[foot], leg[2]);
}

/* Whether the leg (world_leg) reaches the target: within its softened length. */
static bool reachable(double leg[3][3], const float target[3])
{
    double t[3] = {target[0], target[1], target[2]};
    return dist3(leg[0], t) < SOFTEN * (dist3(leg[0], leg[1]) + dist3(leg[1], leg[2])) - 1e-4;
}

/* An allocator that fails from its n-th allocation on and checks that every free names a
 * live allocation with its size. */
typedef struct counting_alloc {
    int left; /* allocations that succeed */
    int live; /* allocations not freed */
    size_t bytes;
} counting_alloc;

static void *counting_alloc_fn(size_t size, size_t align, void *user)
{
    counting_alloc *c = user;
    if (c->left-- <= 0) {
        return NULL;
    }
    c->live++;
    c->bytes += size;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void counting_free_fn(void *ptr, size_t size, void *user)
{
    counting_alloc *c = user;
    c->live--;
    c->bytes -= size;
    free(ptr);
}

/* The lock's desc: all four root parameters, and joints that end the step's legs. */
static void follow_lock_checks_its_desc(void **state)
{
    (void)state;
    gait_fixture g;
    gait_init(&g, 4, false, false);
    const cb_follow_lock lock = example_lock;
    /* Locking needs all four root parameters (the step reads the root from them). */
    cb_follow_desc wrong = {.crowd = g.crowd, .capacity = 4, .lock = lock};
    wrong.lock.root_param[3] = NULL;
    expect_create(&wrong, CB_ERR_NULL_ARGUMENT, "root_param");
    wrong.lock = lock;
    /* Each foot's joint must end a leg of the graph's foot_lock step: foot_l is a joint of
     * the skeleton, but the legs end at the balls. */
    wrong.lock.joint[0] = "foot_l";
    expect_create(&wrong, CB_ERR_NOT_FOUND, "ends no leg");
    gait_finish(&g);
}

/* Locking reads the step's own state, no model matrix: a crowd keeping 3x4 or qts matrices
 * follows with locks, and its feet report has the bits of the 4x4 crowd's (the step's pose
 * does not depend on the layout). That the report is right is follow_lock_holds_planted_feet's
 * check, on the 4x4 crowd. */
static void follow_lock_any_matrix_layout(void **state)
{
    (void)state;
    gait_fixture g;
    gait_init(&g, 4, false, false);
    const cb_matrix_layout layouts[3] = {CB_MATRIX_LAYOUT_MAT4, CB_MATRIX_LAYOUT_MAT3X4,
                                         CB_MATRIX_LAYOUT_QTS};
    cb_crowd *crowd[3] = {NULL, NULL, NULL};
    cb_follow *follow[3] = {NULL, NULL, NULL};
    const cb_graph *graphs[1] = {g.graph};
    for (int k = 0; k < 3; ++k) {
        cb_crowd_desc cd = {.skeleton = cb_graph_skeleton(g.graph),
                            .capacity = 4,
                            .graphs = graphs,
                            .graph_count = 1,
                            .thread_count = 1,
                            .matrix_layout = layouts[k]};
        assert_int_equal(cb_crowd_create(&cd, &crowd[k], NULL), CB_OK);
        assert_int_equal(cb_crowd_matrix_layout(crowd[k]), layouts[k]);
        cb_follow_desc fd = {.crowd = crowd[k],
                             .capacity = 4,
                             .warp = {.rate_param = "rate", .gait_speed_mps = 1.4f},
                             .lock = example_lock};
        cb_error err = {0};
        CB_CHECK(cb_follow_create(&fd, &follow[k], &err) == CB_OK, "layout %d: %s", k, err.message);
        for (uint32_t i = 0; i < 4; ++i) {
            cb_character ch;
            assert_int_equal(cb_follow_add(follow[k], 0.2f * (float)i, 0.0f, &ch), CB_OK);
        }
    }
    for (int frame = 0; frame < 150; ++frame) {
        float pos[4][3], vel[4][3];
        for (int i = 0; i < 4; ++i) {
            double t = frame * (double)DT, speed = 0.8 + 0.3 * i, a = 0.4 * t + i;
            vel[i][0] = (float)(speed * sin(a)), vel[i][1] = 0.0f;
            vel[i][2] = (float)(speed * cos(a));
            pos[i][0] = (float)(speed * t), pos[i][1] = 0.0f, pos[i][2] = (float)i;
        }
        for (int k = 0; k < 3; ++k) {
            assert_int_equal(cb_follow_update(follow[k], &pos[0][0], &vel[0][0], 0, DT), CB_OK);
            assert_int_equal(cb_crowd_update(crowd[k], DT), CB_OK);
        }
        const cb_follow_foot *ref = cb_follow_feet(follow[0]);
        for (int k = 1; k < 3; ++k) {
            const cb_follow_foot *feet = cb_follow_feet(follow[k]);
            for (int j = 0; j < 8; ++j) { /* 4 characters, 2 feet */
                const cb_follow_foot *a = &ref[j], *b = &feet[j];
                CB_CHECK(memcmp(a->lock, b->lock, sizeof a->lock) == 0 &&
                             memcmp(&a->weight, &b->weight, sizeof a->weight) == 0 &&
                             a->locked == b->locked && a->failed == b->failed,
                         "frame %d: layout %d reports another foot %d", frame, k, j);
            }
        }
    }
    uint64_t locks = cb_follow_query_stats(follow[0]).locks;
    CB_CHECK(locks >= 8, "only %llu locks", (unsigned long long)locks);
    for (int k = 0; k < 3; ++k) {
        cb_follow_destroy(follow[k]);
        cb_crowd_destroy(crowd[k]);
    }
    gait_finish(&g);
}

/* Creating a follower with both features under an allocator that fails at each allocation in
 * turn: CB_ERR_OUT_OF_MEMORY, nothing leaked, and destroy frees every byte with its size. */
static void follow_features_allocation_failures(void **state)
{
    (void)state;
    gait_fixture g;
    gait_init(&g, 4, false, false);
    const cb_follow_lock lock = example_lock;
    for (int n = 0;; ++n) {
        counting_alloc c = {.left = n};
        cb_follow_desc fd = {.crowd = g.crowd,
                             .capacity = 4,
                             .allocator = {counting_alloc_fn, counting_free_fn, &c},
                             .warp = {.rate_param = "rate", .gait_speed_mps = 1.4f},
                             .lock = lock};
        cb_follow *f = NULL;
        cb_result r = cb_follow_create(&fd, &f, NULL);
        if (r == CB_OK) {
            cb_follow_destroy(f);
            CB_CHECK(c.live == 0 && c.bytes == 0, "after destroy: %d allocations, %zu bytes",
                     c.live, c.bytes);
            CB_CHECK(n >= 5, "created with only %d allocations", n); /* + feet, fade, seen */
            break;
        }
        CB_CHECK(r == CB_ERR_OUT_OF_MEMORY && f == NULL && c.live == 0 && c.bytes == 0,
                 "allocation %d failing: %s, %d allocations left", n, cb_result_str(r), c.live);
    }
    gait_finish(&g);
}

/* A walk along an arc (turning 0.5 rad/s at 1.2 m/s), from the new character's first frame:
 * while a foot is locked its ball joint stays where it was shown on the frame its plant began,
 * within 1 mm, in the world, whenever the leg reaches that point (the first plant included,
 * which the character's first frame starts); the follower reports that point; a lock is
 * reported failed only where the leg cannot reach it; and engaging or releasing a lock does not
 * pop: the second difference of every joint's world position stays within that of the same walk
 * without locking, plus a margin for the foot's own stop. */
static void follow_lock_holds_planted_feet(void **state)
{
    (void)state;
    gait_fixture g, ref;
    gait_init(&g, 1, true, true);
    gait_init(&ref, 1, true, false);
    cb_character ch;
    assert_int_equal(cb_follow_add(g.follow, 0.25f, 0.0f, &ch), CB_OK);
    assert_int_equal(cb_follow_add(ref.follow, 0.25f, 0.0f, &ch), CB_OK);
    const double speed = 1.2, turn = 0.5, radius = speed / turn;
    size_t joints = cb_crowd_joint_count(g.crowd);
    double *hist = calloc(3 * 3 * joints * 2, sizeof *hist); /* 3 frames x joints x (g, ref) */
    double worst_pop = 0.0, worst_ref_pop = 0.0, worst_drift = 0.0, worst_report = 0.0;
    int locked_frames = 0, releases = 0, first_plant = -1;
    bool was_locked[2] = {false, false}, was_failed[2] = {false, false};
    uint64_t failures = 0;
    double leg[2][3][3] = {{{0}}}; /* after the last update */
    double anchor[2][3] = {{0}};   /* where each held foot should stay */
    const int frames = 600;
    for (int k = 0; k < frames; ++k) {
        double a = turn * k * (double)DT;
        float pos[3] = {(float)(radius * (1.0 - cos(a))), 0.0f, (float)(radius * sin(a))};
        float vel[3] = {(float)(speed * sin(a)), 0.0f, (float)(speed * cos(a))};
        assert_int_equal(cb_follow_update(g.follow, pos, vel, 0, DT), CB_OK);
        assert_int_equal(cb_follow_update(ref.follow, pos, vel, 0, DT), CB_OK);
        /* The feet as the step left them in the last crowd update (read by this follower
         * update), against the legs of that update, from the first (k = 0 has none before
         * it). A lock that rises there began on that update: the anchor is where the foot
         * was shown then (docs/graph.md "Foot locking"). */
        const cb_follow_foot *feet = cb_follow_feet(g.follow);
        for (int f = 0; f < 2 && k > 0; ++f) {
            const double *p = leg[f][2];
            if (feet[f].locked && !was_locked[f]) {
                memcpy(anchor[f], p, sizeof anchor[f]);
                first_plant = first_plant < 0 ? k - 1 : first_plant;
            }
            if (feet[f].failed && !was_failed[f]) {
                /* A failure is reported where the leg cannot reach: out of its length. */
                CB_CHECK(!reachable(leg[f], feet[f].lock), "frame %d: a reachable lock failed",
                         k - 1);
                failures++;
            }
            was_failed[f] = feet[f].failed;
            float at[3] = {(float)anchor[f][0], (float)anchor[f][1], (float)anchor[f][2]};
            if (feet[f].locked && !feet[f].failed && reachable(leg[f], at)) {
                worst_drift = fmax(worst_drift, dist3(p, anchor[f]));
                const double lock[3] = {feet[f].lock[0], feet[f].lock[1], feet[f].lock[2]};
                worst_report = fmax(worst_report, dist3(lock, anchor[f]));
                locked_frames++;
            }
            releases += was_locked[f] && !feet[f].locked;
            was_locked[f] = feet[f].locked;
        }
        assert_int_equal(cb_crowd_update(g.crowd, DT), CB_OK);
        assert_int_equal(cb_crowd_update(ref.crowd, DT), CB_OK);
        for (int f = 0; f < 2; ++f) {
            world_leg(&g, f, leg[f]);
        }
        for (size_t j = 0; j < joints; ++j) {
            for (int w = 0; w < 2; ++w) {
                double *h = &hist[3 * (3 * (j * 2 + (size_t)w))];
                memmove(h, h + 3, 6 * sizeof *h);
                world_joint(w == 0 ? &g : &ref, 0, (uint32_t)j, h + 6);
                if (k < 62) {
                    continue; /* after the start-up blend of the first second */
                }
                double d2 = sqrt(pow(h[6] - 2 * h[3] + h[0], 2) + pow(h[7] - 2 * h[4] + h[1], 2) +
                                 pow(h[8] - 2 * h[5] + h[2], 2));
                if (w == 0) {
                    worst_pop = fmax(worst_pop, d2);
                } else {
                    worst_ref_pop = fmax(worst_ref_pop, d2);
                }
            }
        }
    }
    cb_follow_stats st = cb_follow_query_stats(g.follow);
    /* The character's first frame plants a foot (its phase): the hold is checked from it. */
    CB_CHECK(first_plant == 0, "the first plant at update %d", first_plant);
    CB_CHECK(worst_drift < 1e-3, "a locked ball moved %g m", worst_drift);
    /* The follower's lock point is the held point (float model matrices: 0.01 mm). */
    CB_CHECK(worst_report < 1e-5, "the follower reports a lock %g m off", worst_report);
    CB_CHECK(st.locks >= 10 && releases >= 10 && locked_frames > 200,
             "%llu locks, %d releases, %d locked foot-frames", (unsigned long long)st.locks,
             releases, locked_frames);
    /* The outer leg of the turn runs out of reach at the end of some stances: reported. */
    CB_CHECK(st.reach_failures == failures && failures < st.locks / 2,
             "%llu reach failures (%llu seen), %llu locks", (unsigned long long)st.reach_failures,
             (unsigned long long)failures, (unsigned long long)st.locks);
    /* The foot's stop at a plant: at most its speed over one frame (a 1.4 m/s walk's swing is
     * slow there), 1 cm per frame squared beyond the reference. */
    CB_CHECK(worst_pop < worst_ref_pop + 0.01, "pop %g m with locking, %g without", worst_pop,
             worst_ref_pop);
    free(hist);
    gait_finish(&g);
    gait_finish(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(follow_desc_defaults),
        cmocka_unit_test(follow_create_validates),
        cmocka_unit_test(follow_capacity_defaults_to_the_crowds),
        cmocka_unit_test(follow_root_exactly_on_the_position),
        cmocka_unit_test(follow_heading_and_local_velocity),
        cmocka_unit_test(follow_root_matrix_turns_forward),
        cmocka_unit_test(follow_mirrors_the_dense_order),
        cmocka_unit_test(follow_update_validates),
        cmocka_unit_test(follow_update_validates_packed),
        cmocka_unit_test(follow_finds_graph_parameters),
        cmocka_unit_test(follow_turn_rate_limit),
        cmocka_unit_test(follow_warp_matches_the_commanded_speed),
        cmocka_unit_test(follow_lock_holds_planted_feet),
        cmocka_unit_test(follow_lock_checks_its_desc),
        cmocka_unit_test(follow_lock_any_matrix_layout),
        cmocka_unit_test(follow_features_allocation_failures),
    };
    return CB_RUN_TESTS(tests);
}
