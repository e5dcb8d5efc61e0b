/* params: the parameter processors against plain double-precision references written from
 * their definitions (Unreal's FInterpTo, the ALS velocity blend, Lyra's cardinal direction
 * rule), their argument checks, their non-finite handling, results independent of the batch,
 * and the hysteresis of the quadrants. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/params.h"
#include "simd/vf.h"
#include "test_util.h"

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

enum { N = 4099 };

/* ------------------------------------------------------------------------------------------ */
/* Velocity blend                                                                              */

static void ref_velocity(double x, double y, double z, double min_sq, double out[4])
{
    memset(out, 0, 4 * sizeof(double));
    /* The library's rule: a non-finite component reads as 0. */
    x = isfinite(x) ? x : 0.0, y = isfinite(y) ? y : 0.0, z = isfinite(z) ? z : 0.0;
    double s = fabs(x) + fabs(y) + fabs(z);
    if (x * x + y * y + z * z < min_sq || s == 0) {
        return;
    }
    out[0] = fmax(x, 0) / s, out[1] = fmax(-x, 0) / s;
    out[2] = fmax(y, 0) / s, out[3] = fmax(-y, 0) / s; /* y is to the left (params.h) */
}

static void params_velocity_blend_matches_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static float x[N], y[N], z[N], o[4][N];
    size_t want_bad = 0;
    for (size_t i = 0; i < N; ++i) {
        x[i] = cb_prng_range(&r, -6, 6), y[i] = cb_prng_range(&r, -6, 6);
        z[i] = i % 3 ? 0.0f : cb_prng_range(&r, -1, 1);
        switch (i % 17) {
        case 1:
            x[i] = y[i] = z[i] = 0.0f;
            break; /* standing */
        case 2:
            x[i] = 0.001f, y[i] = -0.002f;
            break; /* below the threshold */
        case 3:
            x[i] = NAN, ++want_bad;
            break;
        case 4:
            y[i] = -INFINITY, ++want_bad;
            break;
        case 5:
            x[i] = 3e38f, y[i] = -3e38f;
            break; /* squared length overflows */
        case 6:
            x[i] = 1e-40f, y[i] = 0, z[i] = 0;
            break; /* denormal, below threshold */
        case 7:
            y[i] = 0, z[i] = 0;
            break; /* straight forward or back */
        default:
            break;
        }
    }
    const float min_sq = 1e-4f;
    cb_velocity_blend out = {o[0], o[1], o[2], o[3]};
    size_t bad = 0;
    assert_int_equal(cb_params_velocity_blend_4dir(x, y, z, N, min_sq, out, &bad), CB_OK);
    assert_int_equal(bad, want_bad);
    cb_err_track t = cb_err_track_make("velocity blend shares");
    for (size_t i = 0; i < N; ++i) {
        double want[4];
        ref_velocity(x[i], y[i], z[i], min_sq, want);
        for (int k = 0; k < 4; ++k) {
            cb_err_track_add(&t, o[k][i], want[k], i);
        }
    }
    /* A division and a product, shares <= 1: within 2 ulp at 1 (measured 1.2e-7). */
    cb_err_track_check(&t, 2.4e-7);
    /* z may be omitted. */
    static float o2[4][N];
    cb_velocity_blend out2 = {o2[0], o2[1], o2[2], o2[3]};
    assert_int_equal(cb_params_velocity_blend_4dir(x, y, NULL, 100, min_sq, out2, NULL), CB_OK);
    for (size_t i = 0; i < 100; ++i) {
        double want[4];
        ref_velocity(x[i], y[i], 0.0, min_sq, want);
        for (int k = 0; k < 4; ++k) {
            CB_CHECK(fabs(o2[k][i] - want[k]) < 2.4e-7, "no z: element %zu share %d", i, k);
        }
    }
}

static void params_velocity_blend_rejects_bad_arguments(void **state)
{
    (void)state;
    float v[4] = {1, 2, 3, 4}, o[4] = {-1, -1, -1, -1};
    cb_velocity_blend out = {o, o, o, o}, partial = {o, o, NULL, o};
    assert_int_equal(cb_params_velocity_blend_4dir(NULL, v, v, 4, 0, out, NULL),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_velocity_blend_4dir(v, NULL, v, 4, 0, out, NULL),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_velocity_blend_4dir(v, v, v, 4, 0, partial, NULL),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_velocity_blend_4dir(v, v, v, 4, NAN, out, NULL), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_params_velocity_blend_4dir(v, v, v, 4, -1.0f, out, NULL),
                     CB_ERR_INVALID_ARGUMENT);
    for (int i = 0; i < 4; ++i) {
        assert_true(o[i] == -1.0f);
    }
    cb_velocity_blend none = {0};
    size_t bad = 7;
    assert_int_equal(cb_params_velocity_blend_4dir(NULL, NULL, NULL, 0, 0, none, &bad), CB_OK);
    assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Interp-to                                                                                   */

/* Unreal's FMath::FInterpTo, in double, plus the documented non-finite rules. */
static double ref_interp(double cur, double tgt, double dt, double speed)
{
    tgt = isfinite(tgt) ? tgt : 0.0; /* the library's rule: read as 0 */
    if (!isfinite(cur)) {
        return tgt;
    }
    if (speed <= 0) {
        return tgt;
    }
    double d = tgt - cur;
    if (d * d < 1e-8) {
        return tgt;
    }
    double a = fmin(fmax(dt * speed, 0.0), 1.0);
    return cur + d * a;
}

static void params_interp_to_matches_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static float cur[N], tgt[N], out[N];
    static const float dts[] = {1.0f / 60, 1.0f / 30, 0.1f, 0.0f, 2.0f};
    static const float speeds[] = {5.0f, 10.0f, 0.0f, -1.0f, 100.0f};
    cb_err_track t = cb_err_track_make("interp_to");
    for (size_t run = 0; run < 5; ++run) {
        size_t want_bad = 0;
        for (size_t i = 0; i < N; ++i) {
            cur[i] = cb_prng_range(&r, -10, 10), tgt[i] = cb_prng_range(&r, -10, 10);
            switch (i % 13) {
            case 1:
                tgt[i] = cur[i] + 5e-5f;
                break; /* arrives: d^2 < 1e-8 */
            case 2:
                tgt[i] = cur[i] + 2e-4f;
                break; /* does not */
            case 3:
                cur[i] = NAN, ++want_bad;
                break;
            case 4:
                tgt[i] = INFINITY, ++want_bad;
                break;
            case 5:
                cur[i] = tgt[i] = NAN, ++want_bad;
                break;
            case 6:
                cur[i] = 3e38f, tgt[i] = -3e38f;
                break; /* the difference overflows */
            default:
                break;
            }
        }
        size_t bad = 0;
        assert_int_equal(cb_params_interp_to(cur, tgt, N, dts[run], speeds[run], out, &bad), CB_OK);
        assert_int_equal(bad, want_bad);
        for (size_t i = 0; i < N; ++i) {
            double want = ref_interp(cur[i], tgt[i], dts[run], speeds[run]);
            /* Relative to the value's scale (the overflow case is 3e38), non-finite inputs
             * read as 0 as the function reads them. */
            double c = isfinite(cur[i]) ? fabs(cur[i]) : 0.0,
                   g = isfinite(tgt[i]) ? fabs(tgt[i]) : 0.0;
            double scale = fmax(1.0, fmax(c, g));
            cb_err_track_add(&t, (out[i] - want) / scale, 0.0, i);
            CB_CHECK(isfinite(out[i]), "interp_to produced %g", (double)out[i]);
        }
    }
    /* One fused step: within 1 ulp of the value, relative to the scale (measured 1.19e-7). */
    cb_err_track_check(&t, 2.4e-7);
}

/* Repeated steps approach the target and then land on it exactly; in place is allowed. */
static void params_interp_to_arrives_exactly(void **state)
{
    (void)state;
    float v[3] = {0.0f, 10.0f, -4.0f}, target[3] = {1.0f, -3.0f, -4.0f};
    int frames = 0;
    while ((v[0] != target[0] || v[1] != target[1] || v[2] != target[2]) && frames < 1000) {
        float before = fabsf(target[1] - v[1]);
        assert_int_equal(cb_params_interp_to(v, target, 3, 1.0f / 60, 8.0f, v, NULL), CB_OK);
        CB_CHECK(fabsf(target[1] - v[1]) < before || v[1] == target[1], "moves closer");
        ++frames;
    }
    CB_CHECK(frames < 1000, "did not arrive in 1000 frames");
    /* 13 % per frame from 13 away to 1e-4: log(1e-4 / 13) / log(1 - 8 / 60) = 82 frames, then
     * the snap (measured 84). */
    CB_CHECK(frames > 60 && frames < 100, "arrived after %d frames", frames);
    for (int i = 0; i < 3; ++i) {
        assert_true(same_bits(v[i], target[i]));
    }
}

static void params_interp_to_rejects_bad_arguments(void **state)
{
    (void)state;
    float a[2] = {1, 2}, o[2] = {-1, -1};
    assert_int_equal(cb_params_interp_to(NULL, a, 2, 0.1f, 1, o, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_interp_to(a, NULL, 2, 0.1f, 1, o, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_interp_to(a, a, 2, 0.1f, 1, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_interp_to(a, a, 2, NAN, 1, o, NULL), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_params_interp_to(a, a, 2, 0.1f, INFINITY, o, NULL), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_params_interp_to(a, a, 2, -0.1f, 1, o, NULL), CB_ERR_INVALID_ARGUMENT);
    assert_true(o[0] == -1.0f && o[1] == -1.0f);
}

/* ------------------------------------------------------------------------------------------ */
/* Quadrants                                                                                   */

static uint8_t ref_quadrant(double a, uint8_t st, double dz)
{
    a = isfinite(a) ? a : 0.0; /* the library's rule: read as 0 */
    const double pi = 3.14159265358979323846;
    double fz = st == CB_QUADRANT_FORWARD ? 2 * dz : dz,
           bz = st == CB_QUADRANT_BACKWARD ? 2 * dz : dz;
    if (fabs(a) <= pi / 4 + fz) {
        return CB_QUADRANT_FORWARD;
    }
    if (fabs(a) >= 3 * pi / 4 - bz) {
        return CB_QUADRANT_BACKWARD;
    }
    return a > 0 ? CB_QUADRANT_LEFT : CB_QUADRANT_RIGHT; /* positive angles turn left */
}

static void params_quadrant_matches_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static float ang[N];
    static uint8_t st[N], before[N];
    const double pi = 3.14159265358979323846;
    const float dz = 0.17f;
    size_t want_bad = 0;
    for (size_t i = 0; i < N; ++i) {
        ang[i] = cb_prng_range(&r, -3.14159f, 3.14159f);
        /* Half near a boundary, where the state matters. */
        if (i % 2) {
            double b = (1 + 2 * (int)cb_prng_below(&r, 4)) * pi / 4 - pi;
            ang[i] = (float)(b + cb_prng_range(&r, -0.4f, 0.4f));
        }
        if (i % 29 == 3) {
            ang[i] = NAN, ++want_bad;
        }
        st[i] = before[i] = (uint8_t)cb_prng_below(&r, 5);
    }
    size_t bad = 0;
    assert_int_equal(cb_params_quadrant(ang, N, dz, st, &bad), CB_OK);
    assert_int_equal(bad, want_bad);
    for (size_t i = 0; i < N; ++i) {
        uint8_t want = ref_quadrant(ang[i], before[i], dz);
        /* Angles within float rounding of a boundary may go either way. */
        double a = fabs((double)ang[i]);
        double dists[] = {fabs(a - (pi / 4 + dz)), fabs(a - (pi / 4 + 2 * dz)),
                          fabs(a - (3 * pi / 4 - dz)), fabs(a - (3 * pi / 4 - 2 * dz)), fabs(a)};
        bool near_edge = false;
        for (int k = 0; k < 5; ++k) {
            near_edge = near_edge || dists[k] < 1e-6;
        }
        CB_CHECK(st[i] == want || near_edge, "angle %g from state %d: %d, want %d", (double)ang[i],
                 before[i], st[i], want);
    }
    /* Angles outside [-pi, pi] are wrapped. */
    float wrapped[3] = {(float)(2 * pi + 0.1), (float)(-2 * pi - 3.0), (float)(4 * pi + 1.5)};
    uint8_t ws[3] = {0, 0, 0};
    assert_int_equal(cb_params_quadrant(wrapped, 3, 0.0f, ws, NULL), CB_OK);
    assert_int_equal(ws[0], CB_QUADRANT_FORWARD);
    assert_int_equal(ws[1], CB_QUADRANT_BACKWARD);
    assert_int_equal(ws[2], CB_QUADRANT_LEFT);
}

/* An angle sweeping across the forward/left boundary and back switches one dead zone late
 * in each direction, and noise smaller than the dead zone around a boundary never flips it. */
static void params_quadrant_hysteresis(void **state)
{
    (void)state;
    const float pi = 3.14159265f, dz = 0.1f;
    uint8_t s = CB_QUADRANT_NONE;
    float a;
    float up_switch = NAN, down_switch = NAN;
    for (a = 0.0f; a < pi / 2; a += 0.001f) {
        uint8_t prev = s;
        assert_int_equal(cb_params_quadrant(&a, 1, dz, &s, NULL), CB_OK);
        if (prev == CB_QUADRANT_FORWARD && s == CB_QUADRANT_LEFT) {
            up_switch = a;
        }
    }
    for (; a > 0.0f; a -= 0.001f) {
        uint8_t prev = s;
        assert_int_equal(cb_params_quadrant(&a, 1, dz, &s, NULL), CB_OK);
        if (prev == CB_QUADRANT_LEFT && s == CB_QUADRANT_FORWARD) {
            down_switch = a;
        }
    }
    CB_CHECK(fabsf(up_switch - (pi / 4 + 2 * dz)) < 0.0011f, "leaves forward at %g",
             (double)up_switch);
    CB_CHECK(fabsf(down_switch - (pi / 4 + dz)) < 0.0011f, "enters forward at %g",
             (double)down_switch);
    /* Noise of amplitude 0.9 dz around the boundary keeps the first decision. */
    cb_prng r = cb_test_prng(__func__);
    for (float centre = pi / 4 + 1.5f * dz, k = 0; k < 2; ++k, centre = 3 * pi / 4 - 1.5f * dz) {
        uint8_t st = CB_QUADRANT_NONE, first = 0;
        for (int i = 0; i < 2000; ++i) {
            float n = centre + cb_prng_range(&r, -0.45f, 0.45f) * dz;
            assert_int_equal(cb_params_quadrant(&n, 1, dz, &st, NULL), CB_OK);
            first = i == 0 ? st : first;
            CB_CHECK(st == first, "flickered from %d to %d at %g", first, st, (double)n);
        }
    }
}

static void params_quadrant_rejects_bad_arguments(void **state)
{
    (void)state;
    float a[2] = {0.1f, 2.0f};
    uint8_t s[2] = {CB_QUADRANT_LEFT, 9};
    assert_int_equal(cb_params_quadrant(a, 2, 0.1f, s, NULL), CB_ERR_INVALID_ARGUMENT);
    assert_true(s[0] == CB_QUADRANT_LEFT && s[1] == 9);
    s[1] = 0;
    assert_int_equal(cb_params_quadrant(NULL, 2, 0.1f, s, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_quadrant(a, 2, 0.1f, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_params_quadrant(a, 2, NAN, s, NULL), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_params_quadrant(a, 2, -0.1f, s, NULL), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_params_quadrant(a, 2, 0.5f, s, NULL), CB_ERR_INVALID_ARGUMENT);
    assert_true(s[0] == CB_QUADRANT_LEFT && s[1] == 0);
    assert_int_equal(cb_params_quadrant(NULL, 0, 0.1f, NULL, NULL), CB_OK);
}

/* ------------------------------------------------------------------------------------------ */

/* Element i's result does not depend on n or the batch's start: every processor, any n, any
 * offset, elements outside the batch untouched. */
static void params_bit_identical_for_any_batch(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { M = 3 * CB_W + 5 };
    static float x[M + 8], y[M + 8], z[M + 8], full[4][M + 8], part[4][M + 8];
    static uint8_t st0[M + 8], stf[M + 8], stp[M + 8];
    for (size_t i = 0; i < M + 8; ++i) {
        x[i] = cb_prng_range(&r, -3, 3), y[i] = cb_prng_range(&r, -3, 3);
        z[i] = i % 7 == 0 ? NAN : cb_prng_range(&r, -1, 1);
        st0[i] = (uint8_t)cb_prng_below(&r, 5);
    }
    cb_velocity_blend fo = {full[0], full[1], full[2], full[3]};
    cb_params_velocity_blend_4dir(x, y, z, M + 8, 0.01f, fo, NULL);
    static float fi[M + 8];
    cb_params_interp_to(x, y, M + 8, 0.016f, 7.0f, fi, NULL);
    memcpy(stf, st0, sizeof st0);
    cb_params_quadrant(x, M + 8, 0.1f, stf, NULL);
    for (size_t off = 0; off < 3; ++off) {
        for (size_t n = 1; n + off <= M; ++n) {
            for (int k = 0; k < 4; ++k) {
                for (size_t i = 0; i < M + 8; ++i) {
                    part[k][i] = -7.0f;
                }
            }
            cb_velocity_blend po = {part[0] + off, part[1] + off, part[2] + off, part[3] + off};
            assert_int_equal(
                cb_params_velocity_blend_4dir(x + off, y + off, z + off, n, 0.01f, po, NULL),
                CB_OK);
            memcpy(stp, st0, sizeof st0);
            assert_int_equal(cb_params_quadrant(x + off, n, 0.1f, stp + off, NULL), CB_OK);
            for (size_t i = 0; i < M; ++i) {
                bool in = i >= off && i < off + n;
                for (int k = 0; k < 4; ++k) {
                    CB_CHECK(same_bits(part[k][i], in ? full[k][i] : -7.0f),
                             "velocity n %zu off %zu element %zu", n, off, i);
                }
                CB_CHECK(stp[i] == (in ? stf[i] : st0[i]), "quadrant n %zu off %zu element %zu", n,
                         off, i);
            }
        }
    }
    /* interp_to: compare through a separate buffer. */
    for (size_t off = 0; off < 3; ++off) {
        for (size_t n = 1; n + off <= M; ++n) {
            static float o[M + 8];
            for (size_t i = 0; i < M + 8; ++i) {
                o[i] = -7.0f;
            }
            assert_int_equal(cb_params_interp_to(x + off, y + off, n, 0.016f, 7.0f, o + off, NULL),
                             CB_OK);
            for (size_t i = 0; i < M + 8; ++i) {
                bool in = i >= off && i < off + n;
                CB_CHECK(same_bits(o[i], in ? fi[i] : -7.0f), "interp n %zu off %zu element %zu", n,
                         off, i);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params_velocity_blend_matches_reference),
        cmocka_unit_test(params_velocity_blend_rejects_bad_arguments),
        cmocka_unit_test(params_interp_to_matches_reference),
        cmocka_unit_test(params_interp_to_arrives_exactly),
        cmocka_unit_test(params_interp_to_rejects_bad_arguments),
        cmocka_unit_test(params_quadrant_matches_reference),
        cmocka_unit_test(params_quadrant_hysteresis),
        cmocka_unit_test(params_quadrant_rejects_bad_arguments),
        cmocka_unit_test(params_bit_identical_for_any_batch),
    };
    return CB_RUN_TESTS(tests);
}
