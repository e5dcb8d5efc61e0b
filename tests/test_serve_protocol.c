/* The wire protocol of `crowdblend serve` (src/serve/protocol.h): frames encoded and decoded
 * against a double-precision reference, every header check, the smallest-three rotation codec
 * on hard cases, and the control-message parser on every message and every way to get one
 * wrong. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve/protocol.h"
#include "test_util.h"

/* ---- references ------------------------------------------------------------------------- */

static void random_quat(cb_prng *r, double q[4])
{
    double n = 0.0;
    do {
        n = 0.0;
        for (int k = 0; k < 4; ++k) {
            q[k] = cb_prng_range(r, -1.0f, 1.0f);
            n += q[k] * q[k];
        }
    } while (n < 1e-3 || n > 1.0);
    for (int k = 0; k < 4; ++k) {
        q[k] /= sqrt(n);
    }
}

/* Column-major rotation matrix of a unit quaternion (x, y, z, w), with translation t and a
 * uniform scale s in the columns. */
static void mat_from_quat(const double q[4], const double t[3], double s, float m[16])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                      {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                      {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    for (int col = 0; col < 3; ++col) {
        for (int row = 0; row < 3; ++row) {
            m[4 * col + row] = (float)(s * r[row][col]);
        }
        m[4 * col + 3] = 0.0f;
    }
    for (int k = 0; k < 3; ++k) {
        m[12 + k] = (float)t[k];
    }
    m[15] = 1.0f;
}

/* The angle between two rotations, in radians (q and -q are the same rotation). */
static double angle_between(const double a[4], const float b[4])
{
    double d = 0.0, nb = 0.0;
    for (int k = 0; k < 4; ++k) {
        d += a[k] * b[k];
        nb += (double)b[k] * b[k];
    }
    d = fabs(d) / sqrt(nb);
    return 2.0 * acos(d > 1.0 ? 1.0 : d);
}

/* ---- frames ------------------------------------------------------------------------------ */

static void serve_frame_sizes(void **state)
{
    (void)state;
    for (uint32_t j = 0; j < 70; ++j) {
        /* id 8 + root position 12 + root rotation 16 (f32) or 6 + 2 padding (q16, pos16) */
        assert_int_equal(cb_frame_record_bytes(CB_FRAME_F32, j), 36 + 28 * j);
        assert_int_equal(cb_frame_record_bytes(CB_FRAME_Q16, j), 28 + 12 * j);
        assert_int_equal(cb_frame_record_bytes(CB_FRAME_POS16, j), (28 + 6 * j + 3) / 4 * 4);
        for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
            assert_int_equal(cb_frame_record_bytes(e, j) % 4, 0);
            assert_int_equal(cb_frame_bytes(e, 1000, j), 64 + 1000 * cb_frame_record_bytes(e, j));
        }
    }
    assert_int_equal(cb_frame_record_bytes(CB_FRAME_ENCODING_COUNT, 4), 0);
    cb_frame_encoding e;
    assert_int_equal(cb_frame_encoding_from_name("q16", &e), CB_OK);
    assert_int_equal(e, CB_FRAME_Q16);
    assert_int_equal(cb_frame_encoding_from_name("q17", &e), CB_ERR_NOT_FOUND);
    assert_string_equal(cb_frame_encoding_name(CB_FRAME_POS16), "pos16");
}

enum { J = 37, N = 9 };

/* Random poses through every encoding and back, against the double values they came from. */
/* Character ids of the round trip: 53-bit ids (cb_character, crowd.h) from 2^53 - 1 down, so
 * the high half of every id is used and a 32-bit id field would lose it; consecutive ids differ
 * in both halves. */
static uint64_t id_of(int c)
{
    return CB_CTL_MAX_ID - (uint64_t)c * 0x100000001ull;
}

static void serve_frame_roundtrip_matches_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("serve_frame_roundtrip");
    const float scale = cb_frame_position_scale(1.8f);
    const double reach = 4.0 * 1.8;
    static float m[N][J * 16];
    static double q[N][J][4], t[N][J][3], root_q[N][4];
    static float root_p[N][3];
    for (int c = 0; c < N; ++c) {
        random_quat(&r, root_q[c]);
        for (int k = 0; k < 3; ++k) {
            root_p[c][k] = cb_prng_range(&r, -300.0f, 300.0f);
        }
        for (int j = 0; j < J; ++j) {
            random_quat(&r, q[c][j]);
            for (int k = 0; k < 3; ++k) {
                t[c][j][k] = cb_prng_range(&r, -1.0f, 1.0f) * reach * 0.999;
            }
            /* Scale in the columns must not change the rotation that is sent. */
            double s = j % 3 == 0 ? cb_prng_range(&r, 0.5f, 2.0f) : 1.0;
            mat_from_quat(q[c][j], t[c][j], s, m[c] + 16 * j);
        }
    }
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
        size_t bytes = cb_frame_bytes(e, N, J);
        uint8_t *buf = malloc(bytes);
        cb_frame_header h = {.encoding = e,
                             .frame = 77,
                             .characters = N,
                             .joints = J,
                             .position_scale = scale,
                             .epoch = 3};
        cb_frame_write_header(&h, buf);
        for (int c = 0; c < N; ++c) {
            float rq[4] = {(float)root_q[c][0], (float)root_q[c][1], (float)root_q[c][2],
                           (float)root_q[c][3]};
            uint32_t clamped =
                cb_frame_encode_character(e, scale, id_of(c), root_p[c], rq, m[c], J,
                                          buf + 64 + (size_t)c * cb_frame_record_bytes(e, J));
            assert_int_equal(clamped, 0);
        }
        cb_frame_header got;
        assert_int_equal(cb_frame_read_header(buf, bytes, &got, NULL), CB_OK);
        cb_err_track pos = cb_err_track_make("position (m)");
        cb_err_track rot = cb_err_track_make("rotation (rad)");
        cb_err_track rootrot = cb_err_track_make("root rotation (rad)");
        for (int c = 0; c < N; ++c) {
            uint64_t id;
            float rp[3], rr[4], p[3 * J], rq[4 * J];
            assert_int_equal(
                cb_frame_decode_character(buf, bytes, &got, (uint32_t)c, &id, rp, rr, p, rq),
                CB_OK);
            CB_CHECK(id == id_of(c), "character %d: id %llu, sent %llu", c, (unsigned long long)id,
                     (unsigned long long)id_of(c));
            assert_memory_equal(rp, root_p[c], sizeof rp); /* floats on the wire, exactly */
            rootrot.max = fmax(rootrot.max, angle_between(root_q[c], rr));
            for (int j = 0; j < J; ++j) {
                for (int k = 0; k < 3; ++k) {
                    cb_err_track_add(&pos, p[3 * j + k], m[c][16 * j + 12 + k], (size_t)j);
                }
                if (e != CB_FRAME_POS16) {
                    double a = angle_between(q[c][j], rq + 4 * j);
                    rot.max = fmax(rot.max, a);
                }
            }
        }
        cb_test_note("%s: position error %.3g m (scale %.3g), rotation %.3g rad, root %.3g rad",
                     cb_frame_encoding_name(e), pos.max, (double)scale, rot.max, rootrot.max);
        if (e == CB_FRAME_F32) {
            cb_err_track_check(&pos, 0.0); /* the matrix's floats, unchanged */
            /* Matrix -> quaternion in double from float entries: float rounding only. */
            CB_CHECK(rot.max < 2e-6, "f32 rotation error %g", rot.max);
            CB_CHECK(rootrot.max < 1e-6, "f32 root rotation error %g", rootrot.max);
        } else {
            /* Rounding to the nearest step: half a step, plus the float rounding of v / scale
             * and of the decoded i * scale (relative 2^-24 each at |i| <= 32767, under 0.01
             * of a step). */
            cb_err_track_check(&pos, 0.51 * scale);
            /* Three components off by at most half of sqrt2/32767 = 2.2e-5 each; the fourth,
             * recomputed, by sum(c_i dc_i) / c_max <= 6.5e-5 when all four are 0.5; so
             * |dq| <= 7.5e-5 and the angle, about 2|dq|, stays under 2e-4 rad (0.01 deg). */
            CB_CHECK(rootrot.max < 2e-4, "root rotation error %g", rootrot.max);
            if (e == CB_FRAME_Q16) {
                CB_CHECK(rot.max < 2e-4, "q16 rotation error %g", rot.max);
            }
        }
        free(buf);
    }
}

static void serve_frame_clamps_far_positions(void **state)
{
    (void)state;
    float m[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 100.0f, -100.0f, NAN, 1};
    float root[3] = {0}, rq[4] = {0, 0, 0, 1}, p[3], rr[4];
    uint8_t buf[64 + 64];
    cb_frame_header h = {
        .encoding = CB_FRAME_POS16, .characters = 1, .joints = 1, .position_scale = 1.0f / 1024.0f};
    cb_frame_write_header(&h, buf);
    assert_int_equal(
        cb_frame_encode_character(CB_FRAME_POS16, h.position_scale, 5, root, rq, m, 1, buf + 64),
        3);
    cb_frame_header got;
    size_t bytes = cb_frame_bytes(CB_FRAME_POS16, 1, 1);
    assert_int_equal(cb_frame_read_header(buf, bytes, &got, NULL), CB_OK);
    uint64_t id;
    assert_int_equal(cb_frame_decode_character(buf, bytes, &got, 0, &id, root, rr, p, NULL), CB_OK);
    assert_true(p[0] == 32767.0f / 1024.0f && p[1] == -32767.0f / 1024.0f && p[2] == 0.0f);
}

static void serve_frame_header_fields_roundtrip(void **state)
{
    (void)state;
    uint8_t buf[64];
    cb_frame_header h = {.encoding = CB_FRAME_F32,
                         .frame = 0x0123456789abcdefull,
                         .sim_time_s = 12345.678901234,
                         .wall_us = 1764000000123456ull,
                         .characters = 0,
                         .joints = 1024,
                         .flags = CB_FRAME_FLAG_PAUSED,
                         .position_scale = 0.5f,
                         .epoch = 0xfeedbeef,
                         .step_us = 4321};
    cb_frame_write_header(&h, buf);
    /* The byte order is part of the format: the magic reads "CBF1" in memory. */
    assert_memory_equal(buf, "CBF1", 4);
    assert_int_equal(buf[8], 0xef);
    cb_frame_header g;
    assert_int_equal(cb_frame_read_header(buf, sizeof buf, &g, NULL), CB_OK);
    assert_int_equal(g.frame, h.frame);
    assert_true(g.sim_time_s == h.sim_time_s);
    assert_int_equal(g.wall_us, h.wall_us);
    assert_int_equal(g.joints, 1024);
    assert_int_equal(g.flags, CB_FRAME_FLAG_PAUSED);
    assert_true(g.position_scale == 0.0f); /* f32 frames carry no scale */
    assert_int_equal(g.record_bytes, 36 + 28 * 1024);
    assert_int_equal(g.epoch, 0xfeedbeef);
    assert_int_equal(g.step_us, 4321);
}

/* Every way a frame's header can be wrong is refused with a reason; the valid one passes. */
static void serve_frame_header_validation(void **state)
{
    (void)state;
    enum { JJ = 3, CC = 2 };
    size_t good = cb_frame_bytes(CB_FRAME_Q16, CC, JJ);
    uint8_t *buf = calloc(1, good + 8);
    cb_frame_header h = {
        .encoding = CB_FRAME_Q16, .characters = CC, .joints = JJ, .position_scale = 0.001f};
    char why[CB_ERROR_MESSAGE_SIZE];
    cb_frame_header g;
    cb_frame_write_header(&h, buf);
    assert_int_equal(cb_frame_read_header(buf, good, &g, why), CB_OK);
    assert_int_equal(cb_frame_read_header(NULL, good, &g, why), CB_ERR_NULL_ARGUMENT);
    struct {
        size_t offset, size;
        uint8_t value;
        size_t length;
        const char *reason;
    } cases[] = {
        {0, 0, 0, 63, "shorter than its header"},
        {0, 1, 'X', 0, "bad magic"},
        {4, 1, 1, 0, "unsupported version"}, /* version 1: 4-byte ids, a layout now gone */
        {4, 1, 3, 0, "unsupported version"},
        {6, 1, 3, 0, "unknown encoding"},
        {37, 1, 0x08, 0, "too many joints"}, /* 2048 + 3 joints */
        {44, 1, 0x99, 0, "record size"},
        {0, 0, 0, 1, "character count"},     /* one byte short */
        {0, 0, 0, 2, "character count"},     /* one byte over (good + 1) */
        {32, 4, 0xff, 0, "character count"}, /* 2^32 - 1 characters */
        {40, 4, 0, 0, "position scale"},
        {43, 1, 0x7f, 0, "position scale"}, /* 0x7f.. with the other bytes: NaN */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_frame_write_header(&h, buf);
        memset(buf + cases[k].offset, cases[k].value, cases[k].size);
        if (cases[k].offset == 43) {
            memset(buf + 40, 0xff, 3);
        }
        size_t len = cases[k].length == 63  ? 63
                     : cases[k].length == 1 ? good - 1
                     : cases[k].length == 2 ? good + 1
                                            : good;
        why[0] = '\0';
        assert_int_equal(cb_frame_read_header(buf, len, &g, why), CB_ERR_PARSE);
        CB_CHECK(strstr(why, cases[k].reason) != NULL, "case %zu: '%s'", k, why);
    }
    cb_frame_write_header(&h, buf);
    assert_int_equal(cb_frame_read_header(buf, good, &g, NULL), CB_OK);
    uint64_t id;
    float rp[3], rr[4], p[3 * JJ], q[4 * JJ];
    assert_int_equal(cb_frame_decode_character(buf, good, &g, CC, &id, rp, rr, p, q),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_frame_decode_character(buf, good - 1, &g, CC - 1, &id, rp, rr, p, q),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_frame_decode_character(buf, good, &g, 0, NULL, rp, rr, p, q),
                     CB_ERR_NULL_ARGUMENT);
    free(buf);
}

/* The largest component in each slot, signs, ties, the identity both ways, zero and NaN. */
static void serve_quat_pack_hard_cases(void **state)
{
    (void)state;
    const double h = sqrt(0.5);
    double cases[][4] = {
        {0, 0, 0, 1},
        {0, 0, 0, -1},
        {1, 0, 0, 0},
        {0, -1, 0, 0},
        {0, 0, 1, 0},
        {0.5, 0.5, 0.5, 0.5},
        {-0.5, 0.5, -0.5, 0.5},
        {h, h, 0, 0},
        {0, -h, 0, h},
        {0.5000001, 0.4999999, 0.5, 0.5},
        {3, 0, 0, 4} /* unnormalized: 5 */,
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        float q[4], back[4];
        double n = 0.0;
        for (int i = 0; i < 4; ++i) {
            q[i] = (float)cases[k][i];
            n += cases[k][i] * cases[k][i];
        }
        double unit[4];
        for (int i = 0; i < 4; ++i) {
            unit[i] = cases[k][i] / sqrt(n);
        }
        uint16_t w[3];
        cb_quat_pack48(q, w);
        cb_quat_unpack48(w, back);
        double a = angle_between(unit, back);
        CB_CHECK(a < 2e-4, "case %zu: angle %g", k, a); /* the bound derived above */
        double len = 0.0;
        for (int i = 0; i < 4; ++i) {
            len += (double)back[i] * back[i];
        }
        CB_CHECK(fabs(len - 1.0) < 1e-4, "case %zu: |q| %g", k, len);
    }
    /* Words no encoder writes (small components whose squares sum past 1), as a corrupt
     * frame may carry (found by fuzz_frame): still a unit rotation. */
    const uint16_t corrupt[][3] = {
        {0x7fff, 0x7fff, 0x7fff}, {0xffff, 0xffff, 0xffff}, {0, 0, 0}, {0xffc0, 0xbfff, 0x3fff}};
    for (size_t k = 0; k < sizeof corrupt / sizeof corrupt[0]; ++k) {
        float back[4];
        cb_quat_unpack48(corrupt[k], back);
        double len = 0.0;
        for (int i = 0; i < 4; ++i) {
            len += (double)back[i] * back[i];
        }
        CB_CHECK(fabs(len - 1.0) < 1e-6, "corrupt case %zu: |q|^2 = %g", k, len);
    }
    float bad[][4] = {{0, 0, 0, 0}, {NAN, 0, 0, 0}, {NAN, NAN, NAN, NAN}, {INFINITY, 0, 0, 0}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        uint16_t w[3];
        float back[4];
        cb_quat_pack48(bad[k], w);
        cb_quat_unpack48(w, back);
        for (int i = 0; i < 4; ++i) {
            assert_true(isfinite(back[i]));
        }
    }
}

/* Near-180-degree turns (trace near -1) are where a naive conversion divides by ~0. */
static void serve_quat_from_mat4_matches_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("serve_quat_from_mat4");
    double worst = 0.0;
    for (int k = 0; k < 20000; ++k) {
        double q[4], t[3] = {0, 0, 0};
        random_quat(&r, q);
        if (k % 4 == 0) { /* a half turn about a random axis, nudged */
            q[3] = cb_prng_range(&r, -1e-4f, 1e-4f);
            double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
            for (int i = 0; i < 4; ++i) {
                q[i] /= n;
            }
        }
        float m[16], got[4];
        mat_from_quat(q, t, 1.0, m);
        cb_quat_from_mat4(m, got);
        worst = fmax(worst, angle_between(q, got));
    }
    cb_test_note("matrix -> quaternion: worst angle %.3g rad", worst);
    CB_CHECK(worst < 2e-6, "worst %g", worst);
}

/* ---- control messages --------------------------------------------------------------------- */

static cb_ctl_error parse(const char *text, cb_ctl *c, char *why)
{
    return cb_ctl_parse(text, strlen(text), c, why);
}

static void serve_ctl_every_message(void **state)
{
    (void)state;
    cb_ctl c;
    char why[CB_ERROR_MESSAGE_SIZE];
    assert_int_equal(
        parse("{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1.5,\"req\":7}", &c, why),
        CB_CTL_OK);
    assert_int_equal(c.kind, CB_CTL_SET_PARAM);
    assert_string_equal(c.name, "vx");
    assert_true(c.value == 1.5f && c.all && !c.clear && c.req == 7);
    assert_int_equal(
        parse("{\"type\":\"set_param\",\"name\":\"wave\",\"value\":null,\"characters\":[3,9]}", &c,
              why),
        CB_CTL_OK);
    assert_true(c.clear && !c.all && c.character_count == 2 && c.characters[1] == 9 && c.req == -1);
    assert_int_equal(
        parse("{\"type\":\"steer\",\"speed\":2,\"direction\":90,\"characters\":[4]}", &c, why),
        CB_CTL_OK);
    assert_true(c.kind == CB_CTL_STEER && c.speed_mps == 2.0f &&
                fabsf(c.direction_rad - 1.5707964f) < 1e-6f && c.characters[0] == 4);
    assert_int_equal(parse("{\"type\":\"steer\",\"speed\":null}", &c, why), CB_CTL_OK);
    assert_true(c.clear && c.all);
    assert_int_equal(parse("{\"type\":\"add\",\"count\":10000}", &c, why), CB_CTL_OK);
    assert_true(c.kind == CB_CTL_ADD && c.count == 10000);
    /* Ids are 53 bits: past 2^32 and up to 2^53 - 1 they arrive exactly. */
    assert_int_equal(parse("{\"type\":\"remove\",\"characters\":[4294967295,4294967296,"
                           "9007199254740991,4194305]}",
                           &c, why),
                     CB_CTL_OK);
    assert_true(c.kind == CB_CTL_REMOVE && c.character_count == 4 &&
                c.characters[0] == 4294967295u && c.characters[1] == 4294967296ull &&
                c.characters[2] == 9007199254740991ull && c.characters[3] == 4194305u);
    assert_int_equal(parse("{\"type\":\"pause\"}", &c, why), CB_CTL_OK);
    assert_int_equal(c.kind, CB_CTL_PAUSE);
    assert_int_equal(parse("{\"type\":\"resume\"}", &c, why), CB_CTL_OK);
    assert_int_equal(c.kind, CB_CTL_RESUME);
    assert_int_equal(parse("{\"type\":\"step\"}", &c, why), CB_CTL_OK);
    assert_true(c.kind == CB_CTL_STEP && c.count == 1);
    assert_int_equal(parse("{\"type\":\"step\",\"frames\":600}", &c, why), CB_CTL_OK);
    assert_int_equal(c.count, 600);
    assert_int_equal(parse("{\"type\":\"time_scale\",\"value\":0}", &c, why), CB_CTL_OK);
    assert_true(c.kind == CB_CTL_TIME_SCALE && c.value == 0.0f);
    assert_int_equal(parse("{\"type\":\"switch_graph\",\"graph\":\"none\"}", &c, why), CB_CTL_OK);
    assert_true(c.kind == CB_CTL_SWITCH_GRAPH && strcmp(c.name, "none") == 0);
    assert_int_equal(
        parse("{\"type\":\"subscribe\",\"character\":12,\"joint\":\"hand_l\"}", &c, why),
        CB_CTL_OK);
    assert_true(c.kind == CB_CTL_SUBSCRIBE && c.characters[0] == 12 &&
                strcmp(c.name, "hand_l") == 0);
    assert_int_equal(parse("{\"type\":\"unsubscribe\"}", &c, why), CB_CTL_OK);
    assert_true(c.kind == CB_CTL_UNSUBSCRIBE && c.all);
    assert_int_equal(parse("{\"type\":\"unsubscribe\",\"character\":5}", &c, why), CB_CTL_OK);
    assert_true(!c.all && c.characters[0] == 5);
    assert_int_equal(parse("{\"type\":\"subscribe\",\"character\":9007199254740990}", &c, why),
                     CB_CTL_OK);
    assert_true(c.characters[0] == 9007199254740990ull);
    assert_int_equal(parse(" {\"encoding\":\"pos16\",\"type\":\"encoding\"} ", &c, why), CB_CTL_OK);
    assert_true(c.kind == CB_CTL_ENCODING && c.encoding == CB_FRAME_POS16);
    for (int k = 0; k < CB_CTL_KIND_COUNT; ++k) {
        assert_string_not_equal(cb_ctl_kind_name((cb_ctl_kind)k), "unknown");
    }
}

typedef struct bad_case {
    const char *text;
    cb_ctl_error error;
    const char *reason; /* a piece of the message */
} bad_case;

/* Malformed JSON, wrong types, values out of range, unknown members and types: each refused
 * with its code and a message naming what was wrong. */
static void serve_ctl_refuses_bad_messages(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"{", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"{\"type\":\"pause\"", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"{\"type\":\"pause\"} x", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"[1,2]", CB_CTL_ERR_MALFORMED, "object"},
        {"\"pause\"", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"42", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"null", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"{\"type\":\"pa\\u0000use\"}", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"{\"type\":\"\xff\xfe\"}", CB_CTL_ERR_MALFORMED, "not JSON"},
        {"{\"type\":\"pause\",\"type\":\"resume\"}", CB_CTL_ERR_MALFORMED, "duplicate"},
        {"{}", CB_CTL_ERR_UNKNOWN_TYPE, "\"type\""},
        {"{\"type\":5}", CB_CTL_ERR_UNKNOWN_TYPE, "\"type\""},
        {"{\"type\":\"explode\"}", CB_CTL_ERR_UNKNOWN_TYPE, "explode"},
        {"{\"type\":\"Pause\"}", CB_CTL_ERR_UNKNOWN_TYPE, "Pause"},
        {"{\"type\":\"pause\",\"now\":true}", CB_CTL_ERR_BAD_FIELD, "\"now\""},
        {"{\"type\":\"pause\",\"req\":-1}", CB_CTL_ERR_BAD_FIELD, "\"req\""},
        {"{\"type\":\"pause\",\"req\":1.5}", CB_CTL_ERR_BAD_FIELD, "\"req\""},
        {"{\"type\":\"set_param\",\"value\":1}", CB_CTL_ERR_BAD_FIELD, "\"name\""},
        {"{\"type\":\"set_param\",\"name\":7,\"value\":1}", CB_CTL_ERR_BAD_FIELD, "\"name\""},
        {"{\"type\":\"set_param\",\"name\":\"\",\"value\":1}", CB_CTL_ERR_BAD_FIELD, "\"name\""},
        {"{\"type\":\"set_param\",\"name\":\"vx\"}", CB_CTL_ERR_BAD_FIELD, "\"value\""},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":\"fast\"}", CB_CTL_ERR_BAD_FIELD,
         "\"value\""},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":true}", CB_CTL_ERR_BAD_FIELD,
         "\"value\""},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1e7}", CB_CTL_ERR_BAD_FIELD,
         "\"value\""},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1,\"characters\":[]}",
         CB_CTL_ERR_BAD_FIELD, "\"characters\""},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1,\"characters\":7}",
         CB_CTL_ERR_BAD_FIELD, "\"characters\""},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1,\"characters\":[0]}",
         CB_CTL_ERR_BAD_FIELD, "characters[]"},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1,\"characters\":[-3]}",
         CB_CTL_ERR_BAD_FIELD, "characters[]"},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1,\"characters\":[1.5]}",
         CB_CTL_ERR_BAD_FIELD, "characters[]"},
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1,\"characters\":[\"7\"]}",
         CB_CTL_ERR_BAD_FIELD, "characters[]"},
        /* ids: whole numbers in [1, 2^53 - 1], never rounded from a real or cut to 32 bits */
        {"{\"type\":\"set_param\",\"name\":\"vx\",\"value\":1,\"characters\":[9007199254740992]}",
         CB_CTL_ERR_BAD_FIELD, "2^53 - 1"},
        {"{\"type\":\"remove\",\"characters\":[9223372036854775807]}", CB_CTL_ERR_BAD_FIELD,
         "characters[]"},
        {"{\"type\":\"remove\",\"characters\":[-9223372036854775808]}", CB_CTL_ERR_BAD_FIELD,
         "characters[]"},
        {"{\"type\":\"remove\",\"characters\":[18446744073709551617]}", CB_CTL_ERR_MALFORMED,
         "not JSON"},
        {"{\"type\":\"remove\",\"characters\":[4294967296.0]}", CB_CTL_ERR_BAD_FIELD,
         "characters[]"},
        {"{\"type\":\"remove\",\"characters\":[1e3]}", CB_CTL_ERR_BAD_FIELD, "characters[]"},
        {"{\"type\":\"remove\",\"characters\":[null]}", CB_CTL_ERR_BAD_FIELD, "characters[]"},
        {"{\"type\":\"remove\",\"characters\":[[5]]}", CB_CTL_ERR_BAD_FIELD, "characters[]"},
        {"{\"type\":\"subscribe\",\"character\":9007199254740992}", CB_CTL_ERR_BAD_FIELD,
         "\"character\""},
        {"{\"type\":\"subscribe\",\"character\":-1}", CB_CTL_ERR_BAD_FIELD, "\"character\""},
        {"{\"type\":\"subscribe\",\"character\":2.5}", CB_CTL_ERR_BAD_FIELD, "\"character\""},
        {"{\"type\":\"unsubscribe\",\"character\":\"5\"}", CB_CTL_ERR_BAD_FIELD, "\"character\""},
        {"{\"type\":\"unsubscribe\",\"character\":1e20}", CB_CTL_ERR_BAD_FIELD, "\"character\""},
        {"{\"type\":\"steer\"}", CB_CTL_ERR_BAD_FIELD, "\"speed\""},
        {"{\"type\":\"steer\",\"speed\":-1}", CB_CTL_ERR_BAD_FIELD, "\"speed\""},
        {"{\"type\":\"steer\",\"speed\":21}", CB_CTL_ERR_BAD_FIELD, "\"speed\""},
        {"{\"type\":\"steer\",\"speed\":1,\"direction\":400}", CB_CTL_ERR_BAD_FIELD,
         "\"direction\""},
        {"{\"type\":\"steer\",\"speed\":1,\"direction\":\"left\"}", CB_CTL_ERR_BAD_FIELD,
         "\"direction\""},
        {"{\"type\":\"add\"}", CB_CTL_ERR_BAD_FIELD, "\"count\""},
        {"{\"type\":\"add\",\"count\":0}", CB_CTL_ERR_BAD_FIELD, "\"count\""},
        {"{\"type\":\"add\",\"count\":10001}", CB_CTL_ERR_BAD_FIELD, "\"count\""},
        {"{\"type\":\"add\",\"count\":2.5}", CB_CTL_ERR_BAD_FIELD, "\"count\""},
        {"{\"type\":\"remove\"}", CB_CTL_ERR_BAD_FIELD, "\"characters\""},
        {"{\"type\":\"step\",\"frames\":0}", CB_CTL_ERR_BAD_FIELD, "\"frames\""},
        {"{\"type\":\"step\",\"frames\":601}", CB_CTL_ERR_BAD_FIELD, "\"frames\""},
        {"{\"type\":\"time_scale\"}", CB_CTL_ERR_BAD_FIELD, "\"value\""},
        {"{\"type\":\"time_scale\",\"value\":-0.5}", CB_CTL_ERR_BAD_FIELD, "\"value\""},
        {"{\"type\":\"time_scale\",\"value\":8.5}", CB_CTL_ERR_BAD_FIELD, "\"value\""},
        {"{\"type\":\"switch_graph\"}", CB_CTL_ERR_BAD_FIELD, "\"graph\""},
        {"{\"type\":\"switch_graph\",\"graph\":[\"a\"]}", CB_CTL_ERR_BAD_FIELD, "\"graph\""},
        {"{\"type\":\"subscribe\"}", CB_CTL_ERR_BAD_FIELD, "\"character\""},
        {"{\"type\":\"subscribe\",\"character\":\"3\"}", CB_CTL_ERR_BAD_FIELD, "\"character\""},
        {"{\"type\":\"subscribe\",\"character\":3,\"joint\":3}", CB_CTL_ERR_BAD_FIELD, "\"joint\""},
        {"{\"type\":\"unsubscribe\",\"character\":0}", CB_CTL_ERR_BAD_FIELD, "\"character\""},
        {"{\"type\":\"encoding\"}", CB_CTL_ERR_BAD_FIELD, "\"encoding\""},
        {"{\"type\":\"encoding\",\"encoding\":\"jpeg\"}", CB_CTL_ERR_BAD_FIELD, "\"encoding\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_ctl c;
        char why[CB_ERROR_MESSAGE_SIZE];
        cb_ctl_error e = parse(cases[k].text, &c, why);
        CB_CHECK(e == cases[k].error, "case %zu (%s): got %s (%s)", k, cases[k].text,
                 cb_ctl_error_name(e), why);
        CB_CHECK(strstr(why, cases[k].reason) != NULL, "case %zu (%s): message '%s'", k,
                 cases[k].text, why);
    }
    cb_ctl c;
    char why[CB_ERROR_MESSAGE_SIZE];
    /* The request number still comes back with an error about another member. */
    assert_int_equal(parse("{\"type\":\"add\",\"count\":-1,\"req\":99}", &c, why),
                     CB_CTL_ERR_BAD_FIELD);
    assert_int_equal(c.req, 99);
    /* Names up to 63 bytes; 64 is one too many. */
    char text[256];
    char name[65];
    memset(name, 'n', 64);
    name[64] = '\0';
    snprintf(text, sizeof text, "{\"type\":\"set_param\",\"name\":\"%s\",\"value\":1}", name);
    assert_int_equal(parse(text, &c, why), CB_CTL_ERR_BAD_FIELD);
    name[63] = '\0';
    snprintf(text, sizeof text, "{\"type\":\"set_param\",\"name\":\"%s\",\"value\":1}", name);
    assert_int_equal(parse(text, &c, why), CB_CTL_OK);
}

/* Size limits: 256 ids fit, 257 do not; a message of 4096 bytes is read, 4097 is refused. */
static void serve_ctl_limits(void **state)
{
    (void)state;
    char *text = malloc(CB_CTL_MAX_MESSAGE + 64);
    cb_ctl c;
    char why[CB_ERROR_MESSAGE_SIZE];
    for (int n = 256; n <= 257; ++n) {
        int len = snprintf(text, 64, "{\"type\":\"remove\",\"characters\":[");
        for (int k = 0; k < n; ++k) {
            len += snprintf(text + len, 16, "%s%d", k ? "," : "", k + 1);
        }
        len += snprintf(text + len, 8, "]}");
        assert_int_equal(cb_ctl_parse(text, (size_t)len, &c, why),
                         n == 256 ? CB_CTL_OK : CB_CTL_ERR_BAD_FIELD);
    }
    /* Padded with spaces (valid JSON) to exactly the limit, then one byte more. */
    const char *body = "{\"type\":\"pause\"}";
    memset(text, ' ', CB_CTL_MAX_MESSAGE + 1);
    memcpy(text, body, strlen(body));
    assert_int_equal(cb_ctl_parse(text, CB_CTL_MAX_MESSAGE, &c, why), CB_CTL_OK);
    assert_int_equal(cb_ctl_parse(text, CB_CTL_MAX_MESSAGE + 1, &c, why), CB_CTL_ERR_TOO_LARGE);
    assert_non_null(strstr(why, "4096"));
    /* Deep nesting is bounded by the size limit and does not reach the recursion limit. */
    memset(text, '[', CB_CTL_MAX_MESSAGE);
    assert_int_equal(cb_ctl_parse(text, CB_CTL_MAX_MESSAGE, &c, why), CB_CTL_ERR_MALFORMED);
    free(text);
}

static void serve_json_quote_escapes_and_truncates(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(cb_json_quote("a\"b\\c\n\x01", out, sizeof out), 21);
    assert_string_equal(out, "\"a\\\"b\\\\c\\u000a\\u0001\"");
    assert_int_equal(cb_json_quote("abcdef", out, 4), 8);
    assert_string_equal(out, "\"ab");
    for (int e = 0; e < CB_CTL_ERROR_COUNT; ++e) {
        assert_string_not_equal(cb_ctl_error_name((cb_ctl_error)e), "unknown");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(serve_frame_sizes),
        cmocka_unit_test(serve_frame_roundtrip_matches_reference),
        cmocka_unit_test(serve_frame_clamps_far_positions),
        cmocka_unit_test(serve_frame_header_fields_roundtrip),
        cmocka_unit_test(serve_frame_header_validation),
        cmocka_unit_test(serve_quat_pack_hard_cases),
        cmocka_unit_test(serve_quat_from_mat4_matches_reference),
        cmocka_unit_test(serve_ctl_every_message),
        cmocka_unit_test(serve_ctl_refuses_bad_messages),
        cmocka_unit_test(serve_ctl_limits),
        cmocka_unit_test(serve_json_quote_escapes_and_truncates),
    };
    return CB_RUN_TESTS(tests);
}
