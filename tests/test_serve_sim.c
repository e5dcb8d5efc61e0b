/* The simulation side of `crowdblend serve` (src/serve/sim.h) without threads or sockets: every
 * control message applied to a real crowd, with its reply, and the frames it publishes decoded
 * and compared with the crowd's own matrices; the same for a crowd of Foxes from a pack (the
 * hello checked against Fox.glb, read here); --trajectories with a pack's --gait clip. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"
#include "serve/sim.h"
#include "test_util.h"
#include "traj/traj.h"

#ifndef CB_TEST_DATA_DIR
#define CB_TEST_DATA_DIR "tests/data"
#endif
#ifndef CB_TEST_EXAMPLES_DIR
#define CB_TEST_EXAMPLES_DIR "examples"
#endif
#define FOX_PACK CB_TEST_DATA_DIR "/packs/fox.cbpack"
#define FOX_GLB CB_TEST_DATA_DIR "/assets/Fox/Fox.glb"
/* tests/data/packs/README.md: the Fox was imported with --scale 0.01. */
#define FOX_IMPORT_SCALE 0.01

enum { START = 20, CAPACITY = 30 };

typedef struct fixture {
    cb_sim *sim;
    cb_pack *pack;
    cb_sim_reply reply; /* the last reply */
    uint32_t replies;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char why[CB_SIM_WHY_BYTES];
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

/* The same crowd of Foxes from the committed pack, running the graph stored in it. */
static int setup_fox(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char why[CB_SIM_WHY_BYTES];
    cb_error err = {0};
    if (cb_pack_load_file(FOX_PACK, NULL, &f->pack, &err) != CB_OK) {
        fprintf(stderr, "%s\n", err.message);
        free(f);
        return -1;
    }
    cb_sim_desc d = {
        .characters = START, .capacity = CAPACITY, .threads = 1, .seed = 3, .pack = f->pack};
    f->sim = cb_sim_create(&d, why);
    if (f->sim == NULL) {
        fprintf(stderr, "sim: %s\n", why);
        cb_pack_destroy(f->pack);
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
    cb_pack_destroy(f->pack);
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

static uint64_t id_at(fixture *f, uint32_t dense)
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
    uint64_t a = id_at(f, 2), b = id_at(f, 5);
    snprintf(text, sizeof text,
             "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":-4.5,\"characters\":[%" PRIu64
             ",%" PRIu64 "],"
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
             "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":-9,\"characters\":[%" PRIu64
             ",77777]}",
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
             "{\"type\":\"steer\",\"speed\":2,\"direction\":30,\"characters\":[%" PRIu64 "]}",
             id_at(f, 3));
    send_msg(f, text);
    assert_true(replied(f, "\"ok\""));
    cb_sim_tick(f->sim);
    /* direction 30 degrees to the right of forward: right = 2 sin 30, forward = 2 cos 30; vx
     * is to the left (+X, crowdblend/clip.h). */
    assert_float_equal(column(f, "vx")[3], -1.0f, 1e-5f);
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
    uint64_t first = strtoull(ids + 7, NULL, 10);
    uint32_t kind, dense;
    assert_int_equal(cb_crowd_locate(crowd(f), (cb_character){first}, &kind, &dense), CB_OK);
    assert_int_equal(dense, START);
    send_msg(f, "{\"type\":\"add\",\"count\":7}");
    assert_true(replied(f, "\"refused\"") && replied(f, "room for 6"));
    assert_int_equal(cb_crowd_count(crowd(f), 0), START + 4);

    /* An override follows its character when a removal moves it (swap-remove). */
    uint64_t last = id_at(f, START + 3), victim = id_at(f, 1);
    char text[256];
    snprintf(text, sizeof text,
             "{\"type\":\"set_param\",\"name\":\"look_y\",\"value\":-3,\"characters\":[%" PRIu64
             "]}",
             last);
    send_msg(f, text);
    snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%" PRIu64 "]}", victim);
    send_msg(f, text);
    assert_true(replied(f, "\"ok\""));
    assert_int_equal(cb_crowd_count(crowd(f), 0), START + 3);
    assert_int_equal(id_at(f, 1), last);
    cb_sim_tick(f->sim);
    assert_true(column(f, "look_y")[1] == -3.0f);
    /* Removed, unknown and twice-listed ids are refused and nothing is removed. */
    send_msg(f, text);
    assert_true(replied(f, "not_found"));
    snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%" PRIu64 ",%" PRIu64 "]}",
             id_at(f, 0), id_at(f, 0));
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
    assert_float_equal(column(f, "blend_0")[0], 1.0f, 1e-6f); /* 90 degrees left: +X */
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
    uint64_t id = id_at(f, 4);
    send_msg(f, "{\"type\":\"subscribe\",\"character\":999999}");
    assert_true(replied(f, "not_found"));
    snprintf(text, sizeof text,
             "{\"type\":\"subscribe\",\"character\":%" PRIu64 ",\"joint\":\"tail\"}", id);
    send_msg(f, text);
    assert_true(replied(f, "not_found") && replied(f, "tail"));
    snprintf(text, sizeof text,
             "{\"type\":\"subscribe\",\"character\":%" PRIu64 ",\"joint\":\"hand_l\"}", id);
    send_as(f, 5, text);
    assert_true(replied(f, "\"ok\""));
    snprintf(text, sizeof text, "{\"type\":\"steer\",\"speed\":1.4,\"characters\":[%" PRIu64 "]}",
             id);
    send_msg(f, text);
    for (int k = 0; k < 90; ++k) {
        cb_sim_tick(f->sim);
    }
    uint64_t mask;
    const char *d = details(f, &mask);
    assert_int_equal(mask, 1ull << 5);
    snprintf(want, sizeof want, "\"id\":%" PRIu64, id);
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
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%" PRIu64 "}", id);
    send_as(f, 5, text);
    snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%" PRIu64 "]}", id);
    send_msg(f, text);
    cb_sim_tick(f->sim);
    details(f, &mask);
    assert_int_equal(mask, 0);
}

/* ---- events in the details ---- */

typedef struct seen_event {
    uint32_t tick; /* the test's own count of simulation steps */
    const char *marker, *clip;
    float weight;
} seen_event;

/* The subscribed character's events of the step just taken, read from the crowd itself
 * (cb_crowd_events), named through the event's own clip node: the test's record. */
static void record_events(fixture *f, uint32_t dense, uint32_t tick, seen_event *seen,
                          uint32_t *count, uint32_t cap)
{
    const cb_graph *g = cb_crowd_graph(crowd(f), 0);
    uint32_t n = 0;
    const cb_graph_event *ev = cb_crowd_events(crowd(f), 0, dense, &n);
    for (uint32_t q = 0; q < n && *count < cap; ++q) {
        const cb_clip *clip = cb_graph_clip(g, cb_graph_node_clip(g, ev[q].node));
        uint32_t at;
        cb_clip_marker m = {0};
        assert_int_equal(cb_clip_find_marker(clip, ev[q].marker_hash, 0, &at), CB_OK);
        assert_int_equal(cb_clip_query_marker(clip, at, &m), CB_OK);
        seen[(*count)++] =
            (seen_event){tick, m.name, cb_graph_node_name(g, ev[q].node), ev[q].weight};
    }
}

/* A subscribed character walks for 3.5 s: the details' events are the last 16 of those the
 * crowd reported for it, step by step, in order: numbered from 0 with none missing, on the
 * steps where the crowd gave them, with the marker, the clip node and the weight (as printed,
 * 6 significant digits). */
static void serve_sim_details_events_are_the_crowds(void **state)
{
    fixture *f = *state;
    enum { CAP = 256, TICKS = 210 };
    seen_event seen[CAP];
    uint32_t count = 0, tick = 0;
    const uint32_t dense = 4;
    const uint64_t id = id_at(f, dense);
    char text[256];
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%" PRIu64 "}", id);
    send_as(f, 5, text);
    record_events(f, dense, tick++, seen, &count, CAP);
    snprintf(text, sizeof text, "{\"type\":\"steer\",\"speed\":1.4,\"characters\":[%" PRIu64 "]}",
             id);
    send_msg(f, text);
    record_events(f, dense, tick++, seen, &count, CAP);
    for (; tick < TICKS; ++tick) {
        cb_sim_tick(f->sim);
        record_events(f, dense, tick, seen, &count, CAP);
    }
    CB_CHECK(count > 16 && count < CAP, "%u events in %u steps of walking", count, TICKS);
    uint64_t mask;
    json_t *doc = json_loads(details(f, &mask), 0, NULL);
    assert_non_null(doc);
    json_t *events =
        json_object_get(json_array_get(json_object_get(doc, "characters"), 0), "events");
    CB_CHECK(json_array_size(events) == 16, "%zu events in the details", json_array_size(events));
    long long frame0 = 0;
    for (size_t k = 0; k < 16; ++k) {
        const json_t *e = json_array_get(events, k);
        const seen_event *want = &seen[count - 16 + k];
        long long n = json_integer_value(json_object_get(e, "n"));
        long long frame = json_integer_value(json_object_get(e, "frame"));
        frame0 = k == 0 ? frame - want->tick : frame0;
        double w = json_number_value(json_object_get(e, "weight"));
        CB_CHECK(n == (long long)(count - 16 + k) && frame - frame0 == want->tick &&
                     strcmp(json_string_value(json_object_get(e, "marker")), want->marker) == 0 &&
                     strcmp(json_string_value(json_object_get(e, "clip")), want->clip) == 0 &&
                     fabs(w - want->weight) <= 5e-6 * want->weight,
                 "event %zu: n %lld frame %lld %s %s %g; the crowd's: n %u step %u %s %s %g", k, n,
                 frame, json_string_value(json_object_get(e, "marker")),
                 json_string_value(json_object_get(e, "clip")), w, count - 16 + (uint32_t)k,
                 want->tick, want->marker, want->clip, (double)want->weight);
    }
    json_decref(doc);
}

/* ---- transition progress in the details ---- */

#define DEFAULT_GRAPH_FILE CB_TEST_EXAMPLES_DIR "/graphs/locomotion_upper_body_look_at.json"

/* What the test remembers of one machine between ticks. */
typedef struct machine_seen {
    char state[64], next[64];
    bool active, from_start; /* a transition runs; the test saw the update that fired it */
    double since;            /* seconds of simulation since it fired (the sum of the ticks' dt) */
    uint32_t followed, ended;
} machine_seen;

/* The graph file has a transition from `from` (or any state) to `to` of this duration and
 * blend. */
static bool file_has_transition(const json_t *machine, const char *from, const char *to,
                                double duration, const char *blend)
{
    size_t k;
    const json_t *t;
    json_array_foreach(json_object_get(machine, "transitions"), k, t)
    {
        const char *tf = json_string_value(json_object_get(t, "from"));
        const char *tb = json_string_value(json_object_get(t, "blend"));
        if ((strcmp(tf, from) == 0 || strcmp(tf, "any") == 0) &&
            strcmp(json_string_value(json_object_get(t, "to")), to) == 0 &&
            fabs(json_number_value(json_object_get(t, "duration")) - duration) < 1e-6 &&
            strcmp(tb != NULL ? tb : "crossfade", blend) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether a machine of the file is a state of another (its node named by a state there). */
static bool file_nested(const json_t *nodes, const char *machine)
{
    const char *name;
    const json_t *node, *st;
    size_t k;
    json_object_foreach((json_t *)nodes, name, node)
    {
        json_array_foreach(json_object_get(node, "states"), k, st)
        {
            const char *n = json_string_value(json_object_get(st, "node"));
            if (n != NULL && strcmp(n, machine) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* One machine of the details after a tick of dt seconds: a running transition's progress is
 * elapsed / duration in [0, 1), its duration and blend are the graph file's, and its elapsed
 * time is the sum of the ticks' dt since the tick that fired it (elapsed 0). A nested machine
 * steps only in the ticks where its state has weight in the machine above (crowd.h), so its
 * elapsed time either advanced by dt or held. */
static void check_machine(const json_t *m, const json_t *file_machine, bool nested, double dt,
                          machine_seen *seen)
{
    const char *state = json_string_value(json_object_get(m, "state"));
    const json_t *next = json_object_get(m, "next"), *tr = json_object_get(m, "transition");
    CB_CHECK(state != NULL && tr != NULL && json_is_null(next) == json_is_null(tr),
             "state, next and transition disagree");
    if (json_is_null(tr)) {
        seen->ended += seen->active;
        seen->active = false;
        return;
    }
    double elapsed = json_number_value(json_object_get(tr, "elapsed_s"));
    double duration = json_number_value(json_object_get(tr, "duration_s"));
    double progress = json_number_value(json_object_get(tr, "progress"));
    const char *blend = json_string_value(json_object_get(tr, "blend"));
    CB_CHECK(progress >= 0.0 && progress < 1.0 && fabs(progress - elapsed / duration) < 1e-5,
             "%s -> %s: progress %g, %g s of %g", state, json_string_value(next), progress, elapsed,
             duration);
    CB_CHECK(blend != NULL &&
                 file_has_transition(file_machine, state, json_string_value(next), duration, blend),
             "%s -> %s: %g s %s is not in the graph file", state, json_string_value(next), duration,
             blend);
    bool same = seen->active && strcmp(seen->state, state) == 0 &&
                strcmp(seen->next, json_string_value(next)) == 0;
    if (same) {
        seen->since += nested && fabs(elapsed - seen->since) < 1e-5 ? 0.0 : dt;
        seen->followed += seen->from_start;
    } else {
        /* A new transition (the test saw this machine's previous tick): it fired in this one. */
        seen->from_start = seen->since >= 0.0;
        seen->since = seen->from_start ? 0.0 : elapsed;
    }
    CB_CHECK(fabs(elapsed - seen->since) < 1e-5, "%s -> %s: elapsed %g s, the ticks say %g s",
             state, json_string_value(next), elapsed, seen->since);
    snprintf(seen->state, sizeof seen->state, "%s", state);
    snprintf(seen->next, sizeof seen->next, "%s", json_string_value(next));
    seen->active = true;
}

/* The subscribed character's machines in the details after a tick of dt seconds. */
static void observe_machines(fixture *f, const json_t *file_nodes, double dt, machine_seen *seen)
{
    uint64_t mask;
    json_t *d = json_loads(details(f, &mask), 0, NULL);
    assert_non_null(d);
    const json_t *machines =
        json_object_get(json_array_get(json_object_get(d, "characters"), 0), "machines");
    const cb_graph *g = cb_crowd_graph(crowd(f), 0);
    assert_int_equal(json_array_size(machines), cb_graph_state_machine_count(g));
    const char *name;
    const json_t *node;
    json_object_foreach((json_t *)file_nodes, name, node)
    {
        uint32_t m;
        if (cb_graph_find_state_machine(g, name, &m) == CB_OK) {
            check_machine(json_array_get(machines, m), node, file_nested(file_nodes, name), dt,
                          &seen[m]);
        }
    }
    json_decref(d);
}

/* Steered from standing to walking, turned at half speed, and stopped, a character's details
 * show each state machine's running transition exactly: checked tick by tick against the
 * simulation's dt and the default graph's file. The top machine (locomotion) steps every tick,
 * so its elapsed times are exactly the sums of the ticks' dt. */
static void serve_sim_details_transition_progress(void **state)
{
    fixture *f = *state;
    json_t *file = json_load_file(DEFAULT_GRAPH_FILE, 0, NULL);
    assert_non_null(file);
    const json_t *nodes = json_object_get(file, "nodes");
    char text[256];
    const uint64_t id = id_at(f, 4);
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%" PRIu64 "}", id);
    send_msg(f, text);
    machine_seen seen[8];
    for (int m = 0; m < 8; ++m) {
        seen[m] = (machine_seen){.since = -1.0}; /* the first tick seen: a transition may run */
    }
    observe_machines(f, nodes, 0.0, seen);
    /* Stand, walk ahead, halve the time scale, turn, stop. */
    static const struct {
        double speed, direction, time_scale; /* time_scale 0: a steer */
    } legs[] = {{0, 0, 0}, {1.4, 0, 0}, {0, 0, 0.5}, {1.4, 120, 0}, {0, 0, 0}};
    double scale = 1.0;
    for (size_t leg = 0; leg < sizeof legs / sizeof legs[0]; ++leg) {
        if (legs[leg].time_scale > 0) {
            scale = legs[leg].time_scale;
            snprintf(text, sizeof text, "{\"type\":\"time_scale\",\"value\":%g}", scale);
        } else {
            snprintf(text, sizeof text,
                     "{\"type\":\"steer\",\"speed\":%g,\"direction\":%g,\"characters\":[%" PRIu64
                     "]}",
                     legs[leg].speed, legs[leg].direction, id);
        }
        send_msg(f, text); /* applied, then one tick */
        double dt = (double)((float)scale / (float)CB_SIM_HZ);
        observe_machines(f, nodes, dt, seen);
        for (int k = 0; k < 60; ++k) {
            cb_sim_tick(f->sim);
            observe_machines(f, nodes, dt, seen);
        }
    }
    /* The locomotion machine went idle -> moving and back: transitions followed from the tick
     * that fired them to their end. */
    uint32_t loco;
    assert_int_equal(cb_graph_find_state_machine(cb_crowd_graph(crowd(f), 0), "locomotion", &loco),
                     CB_OK);
    for (uint32_t m = 0; m < cb_graph_state_machine_count(cb_crowd_graph(crowd(f), 0)); ++m) {
        print_message("# machine %u: followed transitions for %u ticks, %u ended\n", m,
                      seen[m].followed, seen[m].ended);
    }
    CB_CHECK(seen[loco].followed >= 10 && seen[loco].ended >= 2, "followed %u ticks, %u ended",
             seen[loco].followed, seen[loco].ended);
    json_decref(file);
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
        uint64_t id;
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

/* ---- a pack: the Fox ----------------------------------------------------------------------- */

/* The JSON chunk of a .glb (glTF 2.0 binary: 12-byte header, then the JSON chunk). */
static json_t *read_glb_json(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char head[20];
    assert_int_equal(fread(head, 1, sizeof head, fp), sizeof head);
    size_t n =
        (size_t)head[12] | (size_t)head[13] << 8 | (size_t)head[14] << 16 | (size_t)head[15] << 24;
    char *text = malloc(n);
    assert_int_equal(fread(text, 1, n, fp), n);
    fclose(fp);
    json_error_t e;
    json_t *root = json_loadb(text, n, 0, &e);
    free(text);
    assert_non_null(root);
    return root;
}

/* Node `i`'s translation in the glTF scene's space, in doubles: the product of the node
 * matrices from the scene root down (glTF 2.0, 5.25: T * R * S, or `matrix`). */
static void gltf_scene_position(const json_t *nodes, size_t i, double out[3])
{
    double m[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    for (size_t at = i; at != SIZE_MAX;) {
        const json_t *node = json_array_get(nodes, at);
        double l[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
        const json_t *mat = json_object_get(node, "matrix");
        if (mat != NULL) {
            for (int k = 0; k < 16; ++k) {
                l[k] = json_number_value(json_array_get(mat, (size_t)k));
            }
        } else {
            double t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, sc[3] = {1, 1, 1};
            for (int k = 0; k < 4; ++k) {
                const json_t *jt = json_object_get(node, "translation");
                const json_t *jr = json_object_get(node, "rotation");
                const json_t *js = json_object_get(node, "scale");
                t[k % 3] =
                    k < 3 && jt ? json_number_value(json_array_get(jt, (size_t)k)) : t[k % 3];
                q[k] = jr ? json_number_value(json_array_get(jr, (size_t)k)) : q[k];
                sc[k % 3] =
                    k < 3 && js ? json_number_value(json_array_get(js, (size_t)k)) : sc[k % 3];
            }
            double x = q[0], y = q[1], z = q[2], w = q[3];
            double r[9] = {
                1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
                2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
                2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)};
            for (int c = 0; c < 3; ++c) {
                for (int row = 0; row < 3; ++row) {
                    l[4 * c + row] = r[3 * c + row] * sc[c];
                }
                l[12 + c] = t[c];
            }
        }
        double p[16];
        for (int c = 0; c < 4; ++c) { /* p = l * m */
            for (int row = 0; row < 4; ++row) {
                p[4 * c + row] = 0.0;
                for (int k = 0; k < 4; ++k) {
                    p[4 * c + row] += l[4 * k + row] * m[4 * c + k];
                }
            }
        }
        memcpy(m, p, sizeof m);
        size_t parent = SIZE_MAX; /* the node whose children list `at` */
        for (size_t n = 0; n < json_array_size(nodes) && parent == SIZE_MAX; ++n) {
            const json_t *ch = json_object_get(json_array_get(nodes, n), "children");
            for (size_t k = 0; k < json_array_size(ch); ++k) {
                parent = (size_t)json_integer_value(json_array_get(ch, k)) == at ? n : parent;
            }
        }
        at = parent;
    }
    memcpy(out, m + 12, sizeof(double) * 3);
}

/* The hello of a pack's crowd names the pack's character as its source file does: the joints
 * are the .glb skin's joints, the rest positions are the file's node transforms in the import's
 * units, the clips are its animations; the graphs are the pack's; the parameter types right. */
static void serve_sim_fox_hello_is_the_source_file(void **state)
{
    fixture *f = *state;
    uint64_t epoch;
    json_error_t e;
    json_t *h = json_loads(hello(f, &epoch), 0, &e);
    assert_non_null(h);
    json_t *gltf = read_glb_json(FOX_GLB);
    const json_t *nodes = json_object_get(gltf, "nodes");
    const json_t *skin =
        json_object_get(json_array_get(json_object_get(gltf, "skins"), 0), "joints");
    const json_t *joints = json_object_get(json_object_get(h, "skeleton"), "joints");
    const json_t *rest = json_object_get(json_object_get(h, "skeleton"), "rest");
    assert_int_equal(json_array_size(joints), json_array_size(skin));
    assert_int_equal(json_array_size(rest), 3 * json_array_size(joints));
    cb_err_track err = cb_err_track_make("rest position vs Fox.glb x 0.01 (m)");
    for (size_t j = 0; j < json_array_size(joints); ++j) {
        const char *name = json_string_value(json_array_get(joints, j));
        size_t node = SIZE_MAX;
        for (size_t k = 0; k < json_array_size(skin); ++k) {
            size_t n = (size_t)json_integer_value(json_array_get(skin, k));
            const char *nn = json_string_value(json_object_get(json_array_get(nodes, n), "name"));
            node = nn != NULL && strcmp(nn, name) == 0 ? n : node;
        }
        CB_CHECK(node != SIZE_MAX, "joint '%s' is not a joint of Fox.glb's skin", name);
        double p[3];
        gltf_scene_position(nodes, node, p);
        for (int c = 0; c < 3; ++c) {
            cb_err_track_add(&err, json_number_value(json_array_get(rest, 3 * j + (size_t)c)),
                             FOX_IMPORT_SCALE * p[c], (uint32_t)j);
        }
    }
    cb_err_track_check(&err, 1e-6); /* float rest transforms of a 0.6 m figure */
    const json_t *clips = json_object_get(h, "clips"), *anims = json_object_get(gltf, "animations");
    assert_int_equal(json_array_size(clips), json_array_size(anims));
    for (size_t k = 0; k < json_array_size(clips); ++k) {
        bool found = false;
        for (size_t a = 0; a < json_array_size(anims); ++a) {
            found |=
                strcmp(json_string_value(json_array_get(clips, k)),
                       json_string_value(json_object_get(json_array_get(anims, a), "name"))) == 0;
        }
        assert_true(found);
    }
    /* Only the pack's graphs: the embedded examples do not run on its clips. */
    const json_t *graphs = json_object_get(h, "graphs");
    assert_int_equal(json_array_size(graphs), cb_pack_graph_count(f->pack));
    assert_string_equal(json_string_value(json_array_get(graphs, 0)),
                        cb_pack_query_graph(f->pack, 0).name);
    const json_t *params = json_object_get(json_object_get(h, "graph"), "params");
    assert_string_equal(json_string_value(json_object_get(json_array_get(params, 0), "type")),
                        "float"); /* vx, a float in examples/graphs/fox/locomotion.json */
    json_decref(gltf);
    json_decref(h);
    send_msg(f, "{\"type\":\"switch_graph\",\"graph\":\"locomotion_8dir\"}");
    assert_true(replied(f, "not_found"));
}

/* Where a character's root is in the newest q16 frame. */
static void frame_root(fixture *f, uint32_t dense, uint64_t id, float root[3])
{
    size_t len;
    uint64_t seq;
    cb_frame_header h;
    const uint8_t *fr = cb_board_read(cb_sim_frames(f->sim, CB_FRAME_Q16), &len, &seq, NULL);
    assert_int_equal(cb_frame_read_header(fr, len, &h, NULL), CB_OK);
    float rr[4], *p = malloc(sizeof(float) * 3 * h.joints),
                 *q = malloc(sizeof(float) * 4 * h.joints);
    uint64_t got;
    assert_int_equal(cb_frame_decode_character(fr, len, &h, dense, &got, root, rr, p, q), CB_OK);
    assert_int_equal(got, id);
    free(p);
    free(q);
}

/* Steered at 1.5 m/s, a Fox (whose clips play in place: the host moves it by its velocity
 * parameters) is in state "moving", its details follow its head, and it covers 1.5 m a second
 * along its arc. */
static void serve_sim_fox_moves_in_place_clips(void **state)
{
    fixture *f = *state;
    char text[256];
    const uint32_t dense = 6;
    const uint64_t id = id_at(f, dense);
    snprintf(text, sizeof text,
             "{\"type\":\"steer\",\"speed\":1.5,\"direction\":0,\"characters\":[%" PRIu64 "]}", id);
    send_msg(f, text);
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%" PRIu64 "}", id);
    send_msg(f, text);
    for (int k = 0; k < CB_SIM_HZ; ++k) {
        cb_sim_tick(f->sim);
    }
    uint64_t mask;
    const char *d = details(f, &mask);
    assert_non_null(strstr(d, "\"name\":\"b_Head_05\""));
    assert_non_null(strstr(d, "\"state\":\"moving\""));
    assert_true(fabsf(column(f, "vy")[dense] - 1.5f) < 1e-6f);
    float p0[3], p1[3];
    frame_root(f, dense, id, p0);
    for (int k = 0; k < CB_SIM_HZ; ++k) {
        cb_sim_tick(f->sim);
    }
    frame_root(f, dense, id, p1);
    /* 1.5 m along an arc turning at most 0.6 rad/s (the wandering's turn rate): the chord is
     * between 1.5 * sin(0.3) / 0.3 m and 1.5 m. */
    double chord = hypot(p1[0] - p0[0], p1[2] - p0[2]);
    CB_CHECK(chord <= 1.5 + 1e-3 && chord >= 1.5 * sin(0.3) / 0.3 - 1e-3, "moved %.4f m", chord);
}

/* Ids past 2^32 (a slot's 1,024th character; crowd.h's generations have 31 bits) travel
 * exactly: in the add reply, through remove, subscribe and steer, in the details and in the
 * frames; the id cut to 32 bits names no character. */
static void serve_sim_ids_past_32_bits(void **state)
{
    fixture *f = *state;
    char text[256], want[64];
    send_msg(f, "{\"type\":\"pause\"}"); /* cycling ids needs no steps */
    uint64_t id = id_at(f, START - 1);
    while (id < (1ull << 32)) {
        snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%" PRIu64 "]}", id);
        send_msg(f, text);
        assert_true(replied(f, "\"ok\""));
        send_msg(f, "{\"type\":\"add\",\"count\":1}");
        const char *ids = strstr(f->reply.text, "\"ids\":[");
        assert_non_null(ids);
        uint64_t next = strtoull(ids + 7, NULL, 10);
        CB_CHECK(next > id && next == id_at(f, START - 1), "added %" PRIu64 " after %" PRIu64, next,
                 id);
        id = next;
    }
    CB_CHECK(id < (1ull << 33), "id %" PRIu64, id); /* the slot was reused each time */
    snprintf(text, sizeof text, "{\"type\":\"remove\",\"characters\":[%" PRIu64 "]}",
             id & 0xffffffffu);
    send_msg(f, text);
    assert_true(replied(f, "not_found"));
    snprintf(text, sizeof text, "{\"type\":\"subscribe\",\"character\":%" PRIu64 "}", id);
    send_msg(f, text);
    assert_true(replied(f, "\"ok\""));
    snprintf(text, sizeof text, "{\"type\":\"steer\",\"speed\":1,\"characters\":[%" PRIu64 "]}",
             id);
    send_msg(f, text);
    assert_true(replied(f, "\"ok\""));
    send_msg(f, "{\"type\":\"resume\"}");
    cb_sim_tick(f->sim);
    uint64_t mask;
    snprintf(want, sizeof want, "\"id\":%" PRIu64 ",", id);
    assert_non_null(strstr(details(f, &mask), want));
    float root[3];
    frame_root(f, START - 1, id, root);
}

/* Cesium Man from its pack with the example graph file: its unnamed joints come as nodes[i], the
 * glTF node index (19 skin joints, the first node 2: tests/data/assets/CesiumMan), and it runs. */
static void serve_sim_cesium_man_graph_file(void **state)
{
    (void)state;
    cb_pack *pack = NULL;
    cb_error err = {0};
    assert_int_equal(
        cb_pack_load_file(CB_TEST_DATA_DIR "/packs/cesium_man.cbpack", NULL, &pack, &err), CB_OK);
    char why[CB_SIM_WHY_BYTES] = "";
    cb_sim_desc d = {.characters = 4,
                     .threads = 1,
                     .pack = pack,
                     .graph = CB_TEST_EXAMPLES_DIR "/graphs/cesium_man/walk.json"};
    cb_sim *sim = cb_sim_create(&d, why);
    CB_CHECK(sim != NULL, "why: %s", why);
    for (int k = 0; k < 30; ++k) {
        cb_sim_tick(sim);
    }
    fixture f = {.sim = sim};
    uint64_t epoch;
    const char *h = hello(&f, &epoch);
    assert_non_null(strstr(h, "\"joints\":[\"nodes[2]\""));
    assert_non_null(strstr(h, "\"clips\":[\"clip0\"]"));
    assert_int_equal(stats(&f).frame, 30);
    cb_sim_destroy(sim);
    cb_pack_destroy(pack);
}

/* A pack the sim cannot run gives a reason, not a half-built server: an embedded example graph
 * on the Fox's clips, and a pack that stores no graph without one named. */
static void serve_sim_bad_pack_setups(void **state)
{
    (void)state;
    cb_pack *pack = NULL, *bare = NULL;
    cb_error err = {0};
    assert_int_equal(cb_pack_load_file(FOX_PACK, NULL, &pack, &err), CB_OK);
    char why[CB_SIM_WHY_BYTES] = "";
    cb_sim_desc d = {.characters = 4, .threads = 1, .pack = pack, .graph = "locomotion_8dir"};
    assert_null(cb_sim_create(&d, why));
    CB_CHECK(strstr(why, "locomotion_8dir") != NULL, "why: %s", why);
    cb_pack_desc pd = cb_pack_contents(pack);
    pd.graph_count = 0;
    size_t size = 0;
    assert_int_equal(cb_pack_save_memory(&pd, NULL, 0, &size, &err), CB_OK);
    void *bytes = malloc(size);
    assert_int_equal(cb_pack_save_memory(&pd, bytes, size, &size, &err), CB_OK);
    assert_int_equal(cb_pack_load_memory(bytes, size, NULL, &bare, &err), CB_OK);
    free(bytes);
    d.pack = bare;
    d.graph = NULL;
    why[0] = '\0';
    assert_null(cb_sim_create(&d, why));
    CB_CHECK(strstr(why, "stores no graph") != NULL, "why: %s", why);
    cb_pack_destroy(bare);
    cb_pack_destroy(pack);
}

/* The whole text of a file (NUL-terminated), or NULL. */
static char *read_text(const char *path, size_t *length)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        return NULL;
    }
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    *length = fread(text, 1, (size_t)n, fp);
    text[*length] = '\0';
    fclose(fp);
    return *length == (size_t)n ? text : (free(text), NULL);
}

/* --trajectories with a pack and --gait (docs/serve.md, "Trajectories"), on a pack made here
 * from the embedded set (its skeleton and clips, walk_f moving its root forward) storing
 * examples/graphs/locomotion_follow.json as "follow" and a one-clip graph without "rate" as
 * "plain". With --gait walk_f the follower warps: every character's "rate" is the follower's
 * clamp(s / g, 0.5, 1.35) (crowdblend/follow.h, default bounds), and not all are 1 (the file's
 * pedestrians walk at many speeds); without it the pack's follower never writes the rate, which
 * stays at the graph's default 1. The refusals: an unknown clip, a clip in place, --gait without
 * trajectories, a start graph without "rate", and a switch to one (the old crowd runs on). */
static void serve_sim_trajectories_pack_gait(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_clip *clips[64];
    uint32_t count = cb_embedded_clip_count(set);
    assert_true(count <= 64);
    for (uint32_t k = 0; k < count; ++k) {
        clips[k] = cb_embedded_clip(set, k);
    }
    size_t follow_length = 0;
    char *follow = read_text(CB_TEST_EXAMPLES_DIR "/graphs/locomotion_follow.json", &follow_length);
    assert_non_null(follow);
    static const char PLAIN[] = "{\"name\": \"plain\", \"parameters\": [{\"name\": \"vx\"}, "
                                "{\"name\": \"vy\"}], \"root\": \"c\", \"nodes\": {\"c\": "
                                "{\"type\": \"clip\", \"clip\": \"walk_f\"}}}";
    const cb_pack_graph graphs[2] = {{"follow", follow, follow_length},
                                     {"plain", PLAIN, strlen(PLAIN)}};
    cb_pack_desc pd = {.skeleton = cb_embedded_skeleton(set),
                       .clips = clips,
                       .clip_count = count,
                       .graphs = graphs,
                       .graph_count = 2};
    cb_error err = {0};
    size_t size = 0;
    assert_int_equal(cb_pack_save_memory(&pd, NULL, 0, &size, &err), CB_OK);
    void *bytes = malloc(size);
    assert_int_equal(cb_pack_save_memory(&pd, bytes, size, &size, &err), CB_OK);
    cb_pack *pack = NULL;
    CB_CHECK(cb_pack_load_memory(bytes, size, NULL, &pack, &err) == CB_OK, "%s", err.message);
    free(bytes);
    free(follow);
    cb_traj *traj = NULL;
    CB_CHECK(cb_traj_load_file(CB_TEST_DATA_DIR "/trajectories/fzj_bottleneck_cut.csv", NULL, &traj,
                               &err) == CB_OK,
             "%s", err.message);

    for (int with_gait = 0; with_gait < 2; ++with_gait) {
        char why[CB_SIM_WHY_BYTES] = "";
        cb_sim_desc d = {.threads = 1,
                         .pack = pack,
                         .graph = "follow",
                         .traj = traj,
                         .gait = with_gait ? "walk_f" : NULL};
        cb_sim *sim = cb_sim_create(&d, why);
        CB_CHECK(sim != NULL, "why: %s", why);
        fixture f = {.sim = sim};
        for (int k = 0; k < 60; ++k) {
            cb_sim_tick(sim);
        }
        uint32_t n = cb_crowd_count(crowd(&f), 0), off_one = 0;
        assert_true(n > 0);
        const float *rate = column(&f, "rate");
        for (uint32_t c = 0; c < n; ++c) {
            if (with_gait) {
                CB_CHECK(rate[c] >= 0.5f && rate[c] <= 1.35f, "rate[%u] = %g", c, (double)rate[c]);
            } else {
                CB_CHECK(rate[c] == 1.0f, "rate[%u] = %g without --gait", c, (double)rate[c]);
            }
            off_one += fabsf(rate[c] - 1.0f) > 1e-3f;
        }
        if (with_gait) {
            CB_CHECK(off_one > 0, "no rate off 1 among %u characters", n);
            /* A switch to a graph without "rate" is refused; the old crowd runs on. */
            send_msg(&f, "{\"type\":\"switch_graph\",\"graph\":\"plain\"}");
            CB_CHECK(replied(&f, "has no \\\"rate\\\" parameter"), "%s", f.reply.text);
            cb_sim_tick(sim);
            uint32_t p;
            assert_int_equal(cb_crowd_find_param(crowd(&f), 0, "rate", &p), CB_OK);
        }
        cb_sim_destroy(sim);
    }

    static const struct {
        const char *graph, *gait;
        bool traj;
        const char *why;
    } bad[] = {
        {"follow", "trot", true, "--gait: the pack has no clip 'trot'; its clips: 'idle',"},
        {"follow", "idle", true, "--gait: clip 'idle' moves its root forward at 0 m/s (below 0.1"},
        {"follow", "walk_f", false, "it needs a pack and trajectories"},
        {"plain", "walk_f", true, "--gait: graph 'plain' has no \"rate\" parameter"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        char why[CB_SIM_WHY_BYTES] = "";
        cb_sim_desc d = {.characters = 4,
                         .threads = 1,
                         .pack = pack,
                         .graph = bad[k].graph,
                         .traj = bad[k].traj ? traj : NULL,
                         .gait = bad[k].gait};
        assert_null(cb_sim_create(&d, why));
        CB_CHECK(strstr(why, bad[k].why) != NULL, "case %zu, why: %s", k, why);
    }
    cb_traj_destroy(traj);
    cb_pack_destroy(pack);
    cb_embedded_destroy(set);
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
        cmocka_unit_test_setup_teardown(serve_sim_details_events_are_the_crowds, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_details_transition_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_frames_are_the_crowd, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_command_queue_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_ids_past_32_bits, setup, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_fox_hello_is_the_source_file, setup_fox,
                                        teardown),
        cmocka_unit_test_setup_teardown(serve_sim_frames_are_the_crowd, setup_fox, teardown),
        cmocka_unit_test_setup_teardown(serve_sim_fox_moves_in_place_clips, setup_fox, teardown),
        cmocka_unit_test(serve_sim_cesium_man_graph_file),
        cmocka_unit_test(serve_sim_bad_pack_setups),
        cmocka_unit_test(serve_sim_trajectories_pack_gait),
    };
    return CB_RUN_TESTS(tests);
}
