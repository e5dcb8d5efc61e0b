/* The simulation side of `crowdblend serve` (src/serve/sim.h) without threads or sockets: every
 * control message applied to a real crowd, with its reply, and the frames it publishes decoded
 * and compared with the crowd's own matrices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"
#include "serve/sim.h"
#include "test_util.h"

enum { START = 20, CAPACITY = 30 };

typedef struct fixture {
    cb_sim *sim;
    cb_sim_reply reply; /* the last reply */
    uint32_t replies;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char why[256];
    cb_sim_desc d = {.characters = START, .capacity = CAPACITY, .threads = 1, .seed = 3};
    f->sim = cb_sim_create(&d, why);
    if (f->sim == NULL) {
        fprintf(stderr, "sim: %s\n", why);
        free(f);
        return -1;
    }
    cb_sim_want(f->sim, CB_FRAME_Q16, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    cb_sim_destroy(f->sim);
    free(f);
    return 0;
}

/* Sends a message as client slot 1 (it must parse), ticks once, keeps the last reply. */
static void send_as(fixture *f, uint32_t slot, const char *text)
{
    cb_sim_command cmd = {.slot = slot, .serial = 100 + slot};
    char why[CB_ERROR_MESSAGE_SIZE];
    CB_CHECK(cb_ctl_parse(text, strlen(text), &cmd.ctl, why) == CB_CTL_OK, "%s: %s", text, why);
    assert_true(cb_sim_post(f->sim, &cmd));
    cb_sim_tick(f->sim);
    f->replies = 0;
    while (cb_sim_next_reply(f->sim, &f->reply)) {
        f->replies++;
        assert_int_equal(f->reply.slot, slot);
        assert_int_equal(f->reply.serial, 100 + slot);
    }
    assert_int_equal(f->replies, 1);
}

static void send_msg(fixture *f, const char *text)
{
    send_as(f, 1, text);
}

static bool replied(const fixture *f, const char *piece)
{
    return strstr(f->reply.text, piece) != NULL;
}

static cb_sim_stats stats(fixture *f)
{
    size_t len;
    uint64_t seq;
    cb_sim_stats s;
    const uint8_t *p = cb_board_read(cb_sim_stats_board(f->sim), &len, &seq, NULL);
    assert_int_equal(len, sizeof s);
    memcpy(&s, p, sizeof s);
    return s;
}

static cb_crowd *crowd(fixture *f)
{
    return cb_sim_crowd(f->sim);
}

static uint32_t id_at(fixture *f, uint32_t dense)
{
    return cb_crowd_character_at(crowd(f), 0, dense).id;
}

static const float *column(fixture *f, const char *name)
{
    uint32_t p;
    assert_int_equal(cb_crowd_find_param(crowd(f), 0, name, &p), CB_OK);
    return cb_crowd_param_column(crowd(f), 0, p);
}

static void serve_sim_set_param_for_some_and_all(void **state)
{
    fixture *f = *state;
    char text[256];
    uint32_t a = id_at(f, 2), b = id_at(f, 5);
    snprintf(text, sizeof text,
             "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":-4.5,\"characters\":[%u,%u],"
             "\"req\":11}",
             a, b);
    send_msg(f, text);
    assert_true(replied(f, "\"type\":\"ok\"") && replied(f, "\"req\":11"));
    cb_sim_tick(f->sim); /* the host writes look_y every frame; the override must win */
    const float *col = column(f, "look_y");
    assert_true(col[2] == -4.5f && col[5] == -4.5f);
    for (uint32_t i = 0; i < START; ++i) {
        CB_CHECK(i == 2 || i == 5 || col[i] != -4.5f, "character %u overridden", i);
    }
    send_msg(f, "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":7.25}");
    cb_sim_tick(f->sim);
    for (uint32_t i = 0; i < START; ++i) {
        assert_true(column(f, "look_y")[i] == 7.25f);
    }
    send_msg(f, "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":null}");
    cb_sim_tick(f->sim);
    uint32_t still = 0;
    for (uint32_t i = 0; i < START; ++i) {
        still += column(f, "look_y")[i] == 7.25f;
    }
    assert_int_equal(still, 0); /* released: the wandering host drives it again */
}

static void serve_sim_set_param_errors(void **state)
{
    fixture *f = *state;
    send_msg(f, "{\"type\":\"set_param\",\"name\":\"no_such\",\"value\":1,\"req\":4}");
    assert_true(replied(f, "\"code\":\"not_found\"") && replied(f, "no_such") &&
                replied(f, "\"req\":4"));
    char text[256];
    snprintf(text, sizeof text,
             "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":-9,\"characters\":[%u,77777]}",
             id_at(f, 0));
    send_msg(f, text);
    assert_true(replied(f, "not_found") && replied(f, "77777"));
    cb_sim_tick(f->sim);
    assert_true(column(f, "look_y")[0] != -9.0f); /* nothing applied */
}

static void serve_sim_steer_sets_velocity(void **state)
{
    fixture *f = *state;
    char text[256];
    snprintf(text, sizeof text,
             "{\"type\":\"steer\",\"speed\":2,\"direction\":30,\"characters\":[%u]}", id_at(f, 3));
    send_msg(f, text);
    assert_true(replied(f, "\"ok\""));
    cb_sim_tick(f->sim);
    /* direction 30 degrees to the right of forward: right = 2 sin 30, forward = 2 cos 30. */
    assert_float_equal(column(f, "vx")[3], 1.0f, 1e-5f);
    assert_float_equal(column(f, "vy")[3], 1.7320508f, 1e-5f);
    send_msg(f, "{\"type\":\"steer\",\"speed\":0}");
    cb_sim_tick(f->sim);
    for (uint32_t i = 0; i < START; ++i) {
        assert_true(column(f, "vx")[i] == 0.0f && column(f, "vy")[i] == 0.0f);
    }
    send_msg(f, "{\"type\":\"steer\",\"speed\":1,\"characters\":[123456]}");
    assert_true(replied(f, "not_found"));
}

static void serve_sim_add_and_remove(void **state)
{
    fixture *f = *state;
    send_msg(f, "{\"type\":\"add\",\"count\":4}");
    assert_true(replied(f, "\"added\":4"));
    assert_int_equal(cb_crowd_count(crowd(f), 0), START + 4);
    /* The reply's ids are live characters. */
    const char *ids = strstr(f->reply.text, "\"ids\":[");
    assert_non_null(ids);
    uint32_t first = (uint32_t)strtoul(ids + 7, NULL, 10), kind, dense;
    assert_int_equal(cb_crowd_locate(crowd(f), (cb_character){first}, &kind, &dense), CB_OK);
    assert_int_equal(dense, START);
    send_msg(f, "{\"type\":\"add\",\"count\":7}");
    assert_true(replied(f, "\"refused\"") && replied(f, "room for 6"));
    assert_int_equal(cb_crowd_count(crowd(f), 0), START + 4);

    /* An override follows its character when a removal moves it (swap-remove). */
    uint32_t last = id_at(f, START + 3), victim = id_at(f, 1);
    char text[256];
    snprintf(text, sizeof text,
             "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":-3,\"characters\":[%u]}", last);
    send_msg(f, text);
    snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%u]}", victim);
    send_msg(f, text);
    assert_true(replied(f, "\"ok\""));
    assert_int_equal(cb_crowd_count(crowd(f), 0), START + 3);
    assert_int_equal(id_at(f, 1), last);
    cb_sim_tick(f->sim);
    assert_true(column(f, "look_y")[1] == -3.0f);
    /* Removed, unknown and twice-listed ids are refused and nothing is removed. */
    send_msg(f, text);
    assert_true(replied(f, "not_found"));
    snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%u,%u]}", id_at(f, 0),
             id_at(f, 0));
    send_msg(f, text);
    assert_true(replied(f, "not_found"));
    assert_int_equal(cb_crowd_count(crowd(f), 0), START + 3);
    assert_int_equal(stats(f).characters, START + 3);
}

static void serve_sim_pause_step_resume_time_scale(void **state)
{
    fixture *f = *state;
    send_msg(f, "{\"type\":\"step\"}");
    assert_true(replied(f, "refused") && replied(f, "paused"));
    send_msg(f, "{\"type\":\"pause\"}");
    uint64_t frame = stats(f).frame;
    double t = stats(f).sim_time_s;
    for (int k = 0; k < 5; ++k) {
        cb_sim_tick(f->sim);
    }
    assert_int_equal(stats(f).frame, frame);
    assert_true(stats(f).paused);
    send_msg(f, "{\"type\":\"step\",\"frames\":3}");
    for (int k = 0; k < 5; ++k) {
        cb_sim_tick(f->sim);
    }
    assert_int_equal(stats(f).frame, frame + 3);
    assert_true(fabs(stats(f).sim_time_s - (t + 3.0 / 60.0)) < 1e-6);
    send_msg(f, "{\"type\":\"time_scale\",\"value\":0.5}");
    send_msg(f, "{\"type\":\"resume\"}"); /* this tick steps at half speed */
    frame = stats(f).frame;
    t = stats(f).sim_time_s;
    for (int k = 0; k < 10; ++k) {
        cb_sim_tick(f->sim);
    }
    assert_int_equal(stats(f).frame, frame + 10);
    assert_true(fabs(stats(f).sim_time_s - (t + 10 * 0.5 / 60.0)) < 1e-6);
    assert_true(stats(f).time_scale == 0.5f);
}

/* A text board's newest publication, zero-terminated (valid until the next call). */
static const char *board_text(cb_board *board, uint64_t *tag)
{
    size_t len;
    uint64_t seq;
    const uint8_t *p = cb_board_read(board, &len, &seq, tag);
    static char text[CB_SIM_HELLO_BYTES + CB_SIM_DETAILS_BYTES + 1];
    memcpy(text, p, len);
    text[len] = '\0';
    return text;
}

static const char *hello(fixture *f, uint64_t *epoch)
{
    return board_text(cb_sim_hello(f->sim), epoch);
}

static void serve_sim_switch_graph(void **state)
{
    fixture *f = *state;
    uint64_t epoch0, epoch1;
    const char *h = hello(f, &epoch0);
    assert_non_null(strstr(h, "\"name\":\"locomotion_upper_body_look_at\""));
    assert_non_null(strstr(h, "\"velocity_params\":[\"vx\",\"vy\"]"));
    send_msg(f, "{\"type\":\"switch_graph\",\"graph\":\"../../etc/passwd\"}");
    assert_true(replied(f, "not_found"));
    send_msg(f, "{\"type\":\"switch_graph\",\"graph\":\"none\"}");
    assert_true(replied(f, "\"ok\""));
    h = hello(f, &epoch1);
    assert_int_equal(epoch1, epoch0 + 1);
    assert_non_null(strstr(h, "\"name\":\"none\""));
    assert_non_null(strstr(h, "\"velocity_params\":[\"blend_0\",\"blend_1\"]"));
    assert_int_equal(cb_crowd_count(crowd(f), 0), START);
    send_msg(f, "{\"type\":\"steer\",\"speed\":1,\"direction\":-90}");
    cb_sim_tick(f->sim);
    assert_float_equal(column(f, "blend_0")[0], -1.0f, 1e-6f);
    /* Frames of the new graph carry the new epoch. */
    size_t len;
    uint64_t seq;
    const uint8_t *fr = cb_board_read(cb_sim_frames(f->sim, CB_FRAME_Q16), &len, &seq, NULL);
    cb_frame_header hd;
    assert_int_equal(cb_frame_read_header(fr, len, &hd, NULL), CB_OK);
    assert_int_equal(hd.epoch, epoch1);
}

static const char *details(fixture *f, uint64_t *mask)
{
    return board_text(cb_sim_details(f->sim), mask);
}

static void serve_sim_subscribe_details(void **state)
{
    fixture *f = *state;
    char text[256], want[64];
    uint32_t id = id_at(f, 4);
    send_msg(f, "{\"type\":\"subscribe\",\"character\":999999}");
    assert_true(replied(f, "not_found"));
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%u,\"joint\":\"tail\"}", id);
    send_msg(f, text);
    assert_true(replied(f, "not_found") && replied(f, "tail"));
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%u,\"joint\":\"hand_l\"}",
             id);
    send_as(f, 5, text);
    assert_true(replied(f, "\"ok\""));
    snprintf(text, sizeof text, "{\"type\":\"steer\",\"speed\":1.4,\"characters\":[%u]}", id);
    send_msg(f, text);
    for (int k = 0; k < 90; ++k) {
        cb_sim_tick(f->sim);
    }
    uint64_t mask;
    const char *d = details(f, &mask);
    assert_int_equal(mask, 1ull << 5);
    snprintf(want, sizeof want, "\"id\":%u", id);
    assert_non_null(strstr(d, want));
    assert_non_null(strstr(d, "\"name\":\"hand_l\""));
    assert_non_null(strstr(d, "\"state\":\"moving\""));
    assert_non_null(strstr(d, "\"weights\":[["));
    assert_non_null(strstr(d, "\"marker\":\"foot_plant_")); /* walking for 1.5 s: footsteps */
    /* The joint's world position is the root transform applied to the crowd's matrix. */
    const char *w = strstr(d, "\"world\":[");
    assert_non_null(w);
    float wx = strtof(w + 9, NULL);
    assert_true(isfinite(wx));
    /* Another client's unsubscribe leaves it; its own removes it. */
    send_as(f, 2, "{\"type\":\"unsubscribe\"}");
    cb_sim_tick(f->sim);
    details(f, &mask);
    assert_int_equal(mask, 1ull << 5);
    send_as(f, 5, "{\"type\":\"unsubscribe\"}");
    cb_sim_tick(f->sim);
    d = details(f, &mask);
    assert_int_equal(mask, 0);
    assert_null(strstr(d, want));
    /* A removed character ends its subscriptions. */
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%u}", id);
    send_as(f, 5, text);
    snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%u]}", id);
    send_msg(f, text);
    cb_sim_tick(f->sim);
    details(f, &mask);
    assert_int_equal(mask, 0);
}

/* The published q16 frame, decoded, is the crowd's own pose: ids in dense order, joint
 * positions within half a quantization step of the matrices' translations. */
static void serve_sim_frames_are_the_crowd(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < 30; ++k) {
        cb_sim_tick(f->sim);
    }
    size_t len;
    uint64_t seq;
    const uint8_t *fr = cb_board_read(cb_sim_frames(f->sim, CB_FRAME_Q16), &len, &seq, NULL);
    cb_frame_header h;
    assert_int_equal(cb_frame_read_header(fr, len, &h, NULL), CB_OK);
    assert_int_equal(h.characters, cb_crowd_count(crowd(f), 0));
    assert_int_equal(h.joints, cb_crowd_joint_count(crowd(f)));
    assert_int_equal(h.frame, stats(f).frame);
    cb_err_track pos = cb_err_track_make("joint position (m)");
    float *p = malloc(sizeof(float) * 3 * h.joints), *q = malloc(sizeof(float) * 4 * h.joints);
    for (uint32_t c = 0; c < h.characters; ++c) {
        uint32_t id;
        float rp[3], rr[4];
        assert_int_equal(cb_frame_decode_character(fr, len, &h, c, &id, rp, rr, p, q), CB_OK);
        assert_int_equal(id, id_at(f, c));
        assert_true(rp[1] == 0.0f && fabsf(rr[0]) < 1e-4f && fabsf(rr[2]) < 1e-4f);
        const float *m = cb_crowd_matrices(crowd(f), 0, c);
        for (uint32_t j = 0; j < h.joints; ++j) {
            for (int k = 0; k < 3; ++k) {
                cb_err_track_add(&pos, p[3 * j + k], m[16 * j + 12 + k], j);
            }
        }
    }
    cb_err_track_check(&pos, 0.51 * h.position_scale); /* as in test_serve_protocol.c */
    assert_int_equal(stats(f).clamped_positions, 0);
    /* An encoding nobody wants is not produced. */
    fr = cb_board_read(cb_sim_frames(f->sim, CB_FRAME_F32), &len, &seq, NULL);
    assert_int_equal(seq, 0);
    free(p);
    free(q);
}

/* The queue is bounded: a flood is refused, not buffered without end. */
static void serve_sim_command_queue_is_bounded(void **state)
{
    fixture *f = *state;
    cb_sim_command cmd = {.slot = 1, .serial = 101};
    cmd.ctl.kind = CB_CTL_PAUSE;
    cmd.ctl.req = -1;
    uint32_t accepted = 0;
    while (cb_sim_post(f->sim, &cmd) && accepted < 100000) {
        ++accepted;
    }
    assert_true(accepted > 0 && accepted < 100000);
    cb_sim_tick(f->sim);
    cb_sim_reply r;
    uint32_t replies = 0;
    while (cb_sim_next_reply(f->sim, &r)) {
        ++replies;
    }
    assert_true(replies > 0 && replies <= accepted);
    assert_true(cb_sim_post(f->sim, &cmd));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(serve_sim_set_param_for_some_and_all, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_set_param_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_steer_sets_velocity, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_add_and_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_pause_step_resume_time_scale, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_switch_graph, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_subscribe_details, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_frames_are_the_crowd, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_command_queue_is_bounded, setup, teardown),
    };
    return CB_RUN_TESTS(tests);
}
