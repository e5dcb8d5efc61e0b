/* Accuracy of the vector transcendental functions (src/simd/vmath.h) and of their scalar
 * twins (src/simd/detmath.h) against double libm.
 *
 * Each function runs over a large random set plus hard cases (zeros of both signs, the axes,
 * octant boundaries, powers of two, denormals, infinities, NaN). Bounds are about 1.5x the
 * largest error measured over the three build configurations and are justified per function;
 * the measured maxima are printed as TAP comments. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/scalar_math.h"
#include "simd/vmath.h"
#include "test_util.h"

enum { RANDOM_COUNT = 400000 };

/* atan2: polynomial error 1.8e-8 plus the rounding of the reduction a = lo / hi (half an ulp of
 * a, scaled by atan' <= 1) and of pi/2 - r or pi - r (half an ulp of pi): measured 2.7e-7. */
static const double ATAN2_BOUND = 3.5e-7;
/* log2 near 1 (x in [0.5, 2]): t and the product t P(t^2) round (measured 1.1e-7 absolute). */
static const double LOG2_ABS_BOUND = 2e-7;
/* log2 elsewhere, relative to |log2 x| (measured 7.8e-8). */
static const double LOG2_REL_BOUND = 1.2e-7;
/* exp2, relative: polynomial 2e-9, f = x - n exact, 2^n exact, one product (measured 1.0e-7). */
static const double EXP2_REL_BOUND = 2.5e-7;

static void eval_atan2(const float *y, const float *x, float *out, size_t n)
{
    for (size_t i = 0; i + CB_W <= n; i += CB_W) {
        cb_vf_storeu(out + i, cb_vf_atan2(cb_vf_loadu(y + i), cb_vf_loadu(x + i)));
    }
}

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void vmath_atan2_accuracy(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = RANDOM_COUNT };
    static float y[N], x[N], out[N];
    for (size_t i = 0; i < N; ++i) {
        /* Angles all around the circle at magnitudes from 1e-20 to 1e20, a few exactly on the
         * octant boundaries (|x| = |y|) and the axes. */
        double mag = pow(10.0, cb_prng_range(&r, -20.0f, 20.0f));
        double ang = cb_prng_range(&r, -3.2f, 3.2f);
        x[i] = (float)(mag * cos(ang));
        y[i] = (float)(mag * sin(ang));
        if (i % 97 == 0) {
            y[i] = (i % 2 ? -1.0f : 1.0f) * fabsf(x[i]);
        } else if (i % 89 == 0) {
            y[i] = 0.0f;
        } else if (i % 83 == 0) {
            x[i] = -0.0f;
        }
    }
    eval_atan2(y, x, out, N);
    cb_err_track t = cb_err_track_make("atan2 (rad)");
    for (size_t i = 0; i < N; ++i) {
        cb_err_track_add(&t, out[i], atan2((double)y[i], (double)x[i]), i);
    }
    cb_err_track_check(&t, ATAN2_BOUND);

    /* Hard cases: signed zeros, infinities, NaN. */
    static const float hx[] = {0.0f,     -0.0f,     0.0f, -0.0f, 1.0f,   -1.0f, INFINITY, -INFINITY,
                               INFINITY, -INFINITY, 1.0f, 5.0f,  1e-45f, -3.0f, NAN,      1.0f};
    static const float hy[] = {0.0f, 0.0f,  -0.0f,    -0.0f,     0.0f,   -0.0f,  INFINITY, INFINITY,
                               1.0f, -1.0f, INFINITY, -INFINITY, 1e-45f, 1e-45f, 1.0f,     NAN};
    enum { H = sizeof hx / sizeof hx[0] };
    CB_VF_ALIGNED float bx[H + CB_W], by[H + CB_W], bo[H + CB_W];
    memset(bx, 0, sizeof bx), memset(by, 0, sizeof by);
    memcpy(bx, hx, sizeof hx), memcpy(by, hy, sizeof hy);
    eval_atan2(by, bx, bo, (H + CB_W - 1) / CB_W * CB_W);
    cb_err_track h = cb_err_track_make("atan2 hard cases (rad)");
    for (size_t i = 0; i < H; ++i) {
        double want = atan2((double)hy[i], (double)hx[i]);
        if (isnan(want)) {
            CB_CHECK(isnan(bo[i]), "atan2 case %zu: expected NaN, got %g", i, (double)bo[i]);
            continue;
        }
        if (want == 0.0) {
            /* The sign of a zero result follows y, as in IEEE atan2. */
            CB_CHECK(same_bits(bo[i], (float)want), "atan2 case %zu: %g, want %g", i, (double)bo[i],
                     want);
        }
        cb_err_track_add(&h, bo[i], want, i);
    }
    cb_err_track_check(&h, ATAN2_BOUND);
}

static void eval_unary(cb_vf (*fn)(cb_vf), const float *in, float *out, size_t n)
{
    for (size_t i = 0; i + CB_W <= n; i += CB_W) {
        cb_vf_storeu(out + i, fn(cb_vf_loadu(in + i)));
    }
}

static cb_vf log2_fn(cb_vf x)
{
    return cb_vf_log2(x);
}

static cb_vf exp2_fn(cb_vf x)
{
    return cb_vf_exp2(x);
}

static void vmath_log2_accuracy(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = RANDOM_COUNT };
    static float in[N], out[N];
    for (size_t i = 0; i < N; ++i) {
        /* Half near 1 (the interesting cancellation), half over the whole normal range. */
        in[i] = i % 2 ? cb_prng_range(&r, 0.5f, 2.0f)
                      : (float)pow(2.0, cb_prng_range(&r, -125.9f, 127.9f));
    }
    eval_unary(log2_fn, in, out, N);
    cb_err_track near = cb_err_track_make("log2, x in [0.5, 2] (abs)");
    cb_err_track rel = cb_err_track_make("log2, elsewhere (relative)");
    for (size_t i = 0; i < N; ++i) {
        double want = log2((double)in[i]);
        if (in[i] >= 0.5f && in[i] <= 2.0f) {
            cb_err_track_add(&near, out[i], want, i);
        } else {
            cb_err_track_add(&rel, out[i] / want, 1.0, i);
        }
    }
    cb_err_track_check(&near, LOG2_ABS_BOUND);
    cb_err_track_check(&rel, LOG2_REL_BOUND);

    /* Exact powers of two give exact integers; the special values follow the header. */
    CB_VF_ALIGNED float p[CB_W], po[CB_W];
    for (int e = -126; e <= 127; e += CB_W) {
        for (int l = 0; l < CB_W; ++l) {
            p[l] = ldexpf(1.0f, e + l > 127 ? 127 : e + l);
        }
        eval_unary(log2_fn, p, po, CB_W);
        for (int l = 0; l < CB_W; ++l) {
            CB_CHECK(po[l] == (float)(e + l > 127 ? 127 : e + l), "log2(2^%d) = %g", e + l,
                     (double)po[l]);
        }
    }
    static const float special[] = {0.0f, -0.0f, 1e-40f, -1.0f, INFINITY, NAN, 1.0f, FLT_MAX};
    enum { S = sizeof special / sizeof special[0] };
    CB_VF_ALIGNED float s[S + CB_W] = {0}, so[S + CB_W];
    memcpy(s, special, sizeof special);
    for (size_t i = S; i < S + CB_W; ++i) {
        s[i] = 1.0f;
    }
    eval_unary(log2_fn, s, so, (S + CB_W - 1) / CB_W * CB_W);
    CB_CHECK(so[0] == -INFINITY && so[1] == -INFINITY && so[2] == -INFINITY, "log2 of 0/denormal");
    CB_CHECK(isnan(so[3]) && so[4] == INFINITY && isnan(so[5]), "log2 of -1, inf, NaN");
    CB_CHECK(so[6] == 0.0f && fabs(so[7] - log2((double)FLT_MAX)) < 1e-5, "log2 of 1, FLT_MAX");
}

static void vmath_exp2_accuracy(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = RANDOM_COUNT };
    static float in[N], out[N];
    for (size_t i = 0; i < N; ++i) {
        in[i] = i % 2 ? cb_prng_range(&r, -1.0f, 1.0f) : cb_prng_range(&r, -125.9f, 126.9f);
    }
    eval_unary(exp2_fn, in, out, N);
    cb_err_track t = cb_err_track_make("exp2 (relative)");
    for (size_t i = 0; i < N; ++i) {
        cb_err_track_add(&t, out[i] / exp2((double)in[i]), 1.0, i);
    }
    cb_err_track_check(&t, EXP2_REL_BOUND);

    /* Integers give exact powers of two; the ends follow the header. */
    CB_VF_ALIGNED float p[CB_W], po[CB_W];
    for (int e = -126; e <= 127; e += CB_W) {
        for (int l = 0; l < CB_W; ++l) {
            p[l] = (float)(e + l > 127 ? 127 : e + l);
        }
        eval_unary(exp2_fn, p, po, CB_W);
        for (int l = 0; l < CB_W; ++l) {
            CB_CHECK(po[l] == ldexpf(1.0f, (int)p[l]), "exp2(%g) = %g", (double)p[l],
                     (double)po[l]);
        }
    }
    static const float special[] = {-127.0f,  -1000.0f, -INFINITY, 200.0f,
                                    INFINITY, NAN,      0.0f,      -0.0f};
    enum { S = sizeof special / sizeof special[0] };
    CB_VF_ALIGNED float s[S + CB_W] = {0}, so[S + CB_W];
    memcpy(s, special, sizeof special);
    eval_unary(exp2_fn, s, so, (S + CB_W - 1) / CB_W * CB_W);
    CB_CHECK(so[0] == 0.0f && so[1] == 0.0f && so[2] == 0.0f, "exp2 below -126 flushes to 0");
    CB_CHECK(so[3] == ldexpf(1.0f, 127) && so[4] == ldexpf(1.0f, 127), "exp2 above 127 caps");
    CB_CHECK(isnan(so[5]) && so[6] == 1.0f && so[7] == 1.0f, "exp2 of NaN and zeros");
}

/* exp and ln are exp2 and log2 with one extra rounding: spot-check them over the ranges the
 * solvers use (Gaussian RBF exponents in [-30, 0], thin-plate logs of squared distances). */
static void vmath_exp_log_accuracy(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = 65536 };
    static float in[N], out[N], lin[N], lout[N];
    for (size_t i = 0; i < N; ++i) {
        in[i] = cb_prng_range(&r, -30.0f, 0.0f);
        lin[i] = (float)pow(10.0, cb_prng_range(&r, -6.0f, 6.0f));
    }
    for (size_t i = 0; i + CB_W <= N; i += CB_W) {
        cb_vf_storeu(out + i, cb_vf_exp(cb_vf_loadu(in + i)));
        cb_vf_storeu(lout + i, cb_vf_log(cb_vf_loadu(lin + i)));
    }
    cb_err_track te = cb_err_track_make("exp, x in [-30, 0] (relative)");
    cb_err_track tl = cb_err_track_make("ln, x in [1e-6, 1e6] (abs)");
    for (size_t i = 0; i < N; ++i) {
        cb_err_track_add(&te, out[i] / exp((double)in[i]), 1.0, i);
        cb_err_track_add(&tl, lout[i], log((double)lin[i]), i);
    }
    /* exp: 6e-8 |x| from rounding x log2(e), plus exp2's error: 30 * 6e-8 + 2.5e-7
     * (measured 1.8e-6). */
    cb_err_track_check(&te, 2.5e-6);
    /* ln: log2's relative error times |ln x| <= 14, plus one product (measured 8e-7). */
    cb_err_track_check(&tl, 1.5e-6);
}

/* The scalar twins of simd/detmath.h give the same bits as the vector functions (they are the
 * same sequence of operations), over the atan2 and exp2 sets above. */
static void vmath_scalar_twins_match(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = 65536 };
    static float y[N], x[N], va[N], e[N], ve[N];
    for (size_t i = 0; i < N; ++i) {
        double mag = pow(10.0, cb_prng_range(&r, -20.0f, 20.0f));
        double ang = cb_prng_range(&r, -3.2f, 3.2f);
        x[i] = i % 101 == 0 ? -0.0f : (float)(mag * cos(ang));
        y[i] = i % 103 == 0 ? INFINITY : (float)(mag * sin(ang));
        e[i] = i % 2 ? cb_prng_range(&r, -1.0f, 1.0f) : cb_prng_range(&r, -140.0f, 140.0f);
    }
    eval_atan2(y, x, va, N);
    eval_unary(exp2_fn, e, ve, N);
    for (size_t i = 0; i < N; ++i) {
        float sa = cb_det_atan2f(y[i], x[i]), se = cb_det_exp2f(e[i]);
        CB_CHECK(same_bits(sa, va[i]), "atan2(%a, %a): scalar %a, vector %a", (double)y[i],
                 (double)x[i], (double)sa, (double)va[i]);
        CB_CHECK(same_bits(se, ve[i]), "exp2(%a): scalar %a, vector %a", (double)e[i], (double)se,
                 (double)ve[i]);
    }
}

/* cb_vf_sincos against its scalar twin cb_det_sincosf, bit for bit: arguments in every
 * quadrant near and far (the reduction's whole range and beyond), signed zeros, subnormals,
 * quarter turns and their neighbours, values near FLT_MAX, the infinities and NaN. */
static void vmath_sincos_matches_scalar(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = 65536 };
    static float x[N], vs[N], vc[N];
    const float special[] = {0.0f,      -0.0f,       1e-45f,     -1e-45f,     1e-38f,
                             INFINITY,  -INFINITY,   NAN,        3.0e38f,     -3.4e38f,
                             1e30f,     16777216.0f, 1.5707964f, -1.5707964f, 3.1415927f,
                             4.712389f, 0.7853982f,  -0.7853981f};
    const size_t ns = sizeof special / sizeof special[0];
    for (size_t i = 0; i < N; ++i) {
        float range = i % 4 == 0 ? 7.0f : i % 4 == 1 ? 1.6f : i % 4 == 2 ? 6000.0f : 1e7f;
        x[i] = i < ns ? special[i] : cb_prng_range(&r, -range, range);
        if (i % 37 == 0 && i >= ns) {
            x[i] = nextafterf((float)(cb_prng_below(&r, 17) - 8) * 1.57079633f,
                              cb_prng_below(&r, 2) ? INFINITY : -INFINITY);
        }
    }
    for (size_t i = 0; i < N; i += CB_SIMD_WIDTH) {
        cb_vf s, c;
        cb_vf_sincos(cb_vf_loadu(x + i), &s, &c);
        cb_vf_storeu(vs + i, s);
        cb_vf_storeu(vc + i, c);
    }
    for (size_t i = 0; i < N; ++i) {
        float s, c;
        cb_det_sincosf(x[i], &s, &c);
        CB_CHECK(same_bits(s, vs[i]) && same_bits(c, vc[i]),
                 "sincos(%a): scalar (%a, %a), vector (%a, %a)", (double)x[i], (double)s, (double)c,
                 (double)vs[i], (double)vc[i]);
    }
}

/* The scalar sine and cosine against double libm: polynomial errors 1e-8 and float rounding of
 * the reduced argument, the polynomial and the result (measured about 9e-8 absolute for
 * |x| <= 6000); exp as cb_vf_exp. */
static void vmath_scalar_sincos_exp_accuracy(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track ts = cb_err_track_make("scalar sin, |x| <= 6000 (abs)");
    cb_err_track tc = cb_err_track_make("scalar cos, |x| <= 6000 (abs)");
    cb_err_track te = cb_err_track_make("scalar exp, x in [-30, 0] (relative)");
    for (size_t i = 0; i < 400000; ++i) {
        float x = i % 4 ? cb_prng_range(&r, -7.0f, 7.0f) : cb_prng_range(&r, -6000.0f, 6000.0f);
        float s, c;
        cb_det_sincosf(x, &s, &c);
        cb_err_track_add(&ts, s, sin((double)x), i);
        cb_err_track_add(&tc, c, cos((double)x), i);
        CB_CHECK(same_bits(s, cb_det_sinf(x)) && same_bits(c, cb_det_cosf(x)), "sincos(%a)",
                 (double)x);
        float ex = cb_prng_range(&r, -30.0f, 0.0f);
        cb_err_track_add(&te, cb_det_expf(ex) / exp((double)ex), 1.0, i);
    }
    cb_err_track_check(&ts, 1.5e-7);
    cb_err_track_check(&tc, 1.5e-7);
    cb_err_track_check(&te, 2.5e-6);
    /* Hard cases: signed zeros, quadrant boundaries, non-finite input. */
    float s, c;
    cb_det_sincosf(-0.0f, &s, &c);
    CB_CHECK(same_bits(s, -0.0f) && c == 1.0f, "sincos(-0) = (%g, %g)", (double)s, (double)c);
    cb_det_sincosf(0.0f, &s, &c);
    CB_CHECK(same_bits(s, 0.0f) && c == 1.0f, "sincos(+0)");
    for (int k = -8; k <= 8; ++k) {
        float x = (float)k * 1.57079632679489662f;
        cb_det_sincosf(x, &s, &c);
        CB_CHECK(fabs(s - sin((double)x)) <= 1.5e-7 && fabs(c - cos((double)x)) <= 1.5e-7,
                 "sincos(%d pi/2)", k);
    }
    static const float bad[] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; ++i) {
        cb_det_sincosf(bad[i], &s, &c);
        CB_CHECK(isnan(s) && isnan(c), "sincos(%g) must be NaN", (double)bad[i]);
    }
    CB_CHECK(cb_det_expf(0.0f) == 1.0f && cb_det_expf(-200.0f) == 0.0f && isnan(cb_det_expf(NAN)),
             "exp of 0, -200, NaN");
}

/* cb_det_sincosf as it was before session 11: the quadrant applied one quarter turn at a time.
 * The switch that replaced the loop must give the same bits for every argument. */
static void loop_sincosf(float x, float *sin_out, float *cos_out)
{
    if (!isfinite(x)) {
        *sin_out = *cos_out = x - x;
        return;
    }
    if (x == 0.0f) {
        *sin_out = x;
        *cos_out = 1.0f;
        return;
    }
    float r, s, c;
    unsigned q = cb_det_reduce_half_pi(x, &r);
    cb_det_sincos_reduced(r, &s, &c);
    for (unsigned i = 0; i < q; ++i) {
        float t = s;
        s = c;
        c = -t;
    }
    *sin_out = s;
    *cos_out = c;
}

/* Compares x against the loop form; counts x's quadrant (4: zero or not finite). */
static void check_sincos_bits(float x, size_t quadrants[5], size_t *bad)
{
    float s, c, ls, lc;
    cb_det_sincosf(x, &s, &c);
    loop_sincosf(x, &ls, &lc);
    if (!same_bits(s, ls) || !same_bits(c, lc)) {
        if ((*bad)++ < 8) {
            CB_CHECK(false, "sincos(%a): switch (%a, %a), loop (%a, %a)", (double)x, (double)s,
                     (double)c, (double)ls, (double)lc);
        }
    }
    float r;
    quadrants[isfinite(x) && x != 0.0f ? cb_det_reduce_half_pi(x, &r) : 4]++;
}

/* The switch on the quadrant against the loop it replaced, bit for bit: a sweep of every 251st
 * float bit pattern (every exponent, both signs, denormals, infinities, NaNs with payloads),
 * the floats nearest each multiple of pi/2 and each quadrant boundary (k + 1/2) pi/2 with
 * their neighbours, for |k| <= 5000 and for large k, random arguments, and the special values. */
static void vmath_scalar_sincos_switch_matches_loop(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    size_t quadrants[5] = {0}, bad = 0, n = 0;
    for (uint64_t u = 0; u <= UINT32_MAX; u += 251, ++n) {
        check_sincos_bits(cb_det_from_bits((uint32_t)u), quadrants, &bad);
    }
    for (int64_t k = -5000; k <= 5000; ++k) {
        for (int half = 0; half < 2; ++half) {
            /* k pi/2 and (k + 1/2) pi/2, where the reduction's k changes. */
            float x = (float)(((double)k + 0.5 * half) * 1.57079632679489662);
            float lo = x, hi = x;
            for (int step = 0; step < 4; ++step, n += 2) {
                check_sincos_bits(lo, quadrants, &bad);
                check_sincos_bits(hi, quadrants, &bad);
                lo = nextafterf(lo, -INFINITY);
                hi = nextafterf(hi, INFINITY);
            }
        }
    }
    for (int e = 13; e <= 40; ++e) { /* large k: 2^13 quarter turns up to beyond 2^24 */
        for (int j = 0; j < 64; ++j, n += 2) {
            double k = ldexp(1.0, e) + j * 3.0;
            float x = (float)((k + 0.5 * (j & 1)) * 1.57079632679489662);
            check_sincos_bits(x, quadrants, &bad);
            check_sincos_bits(-x, quadrants, &bad);
        }
    }
    for (size_t i = 0; i < RANDOM_COUNT; ++i, n += 3) {
        check_sincos_bits(cb_prng_range(&r, -7.0f, 7.0f), quadrants, &bad);
        check_sincos_bits(cb_prng_range(&r, -6000.0f, 6000.0f), quadrants, &bad);
        check_sincos_bits(cb_prng_range(&r, -1e7f, 1e7f), quadrants, &bad);
    }
    static const float special[] = {0.0f,    -0.0f,    INFINITY,     -INFINITY,
                                    NAN,     -NAN,     FLT_MAX,      -FLT_MAX,
                                    FLT_MIN, -FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN,
                                    6000.0f, -6000.0f, 16777216.0f,  -16777216.0f};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i, ++n) {
        check_sincos_bits(special[i], quadrants, &bad);
    }
    /* A signalling NaN and NaNs with payloads, both signs. */
    static const uint32_t nan_bits[] = {0x7f800001u, 0xff800001u, 0x7fc12345u, 0xffffffffu};
    for (size_t i = 0; i < sizeof nan_bits / sizeof nan_bits[0]; ++i, ++n) {
        check_sincos_bits(cb_det_from_bits(nan_bits[i]), quadrants, &bad);
    }
    cb_test_note("sincos switch against loop: %zu arguments, quadrants 0-3 %zu %zu %zu %zu, "
                 "zero or not finite %zu, %zu differ",
                 n, quadrants[0], quadrants[1], quadrants[2], quadrants[3], quadrants[4], bad);
    CB_CHECK(bad == 0, "%zu arguments give other bits than the loop form", bad);
    for (int q = 0; q < 5; ++q) {
        CB_CHECK(quadrants[q] > 1000, "quadrant %d reached %zu times", q, quadrants[q]);
    }
}

/* The double sine and cosine per-frame root motion rotates with (base/scalar_math.h) against
 * double libm: the reduction is exact here (|x| < 2^20 quarter turns) and the series truncate
 * below 1e-19, so what is left is rounding, a few ulp of 1 (measured 1.1e-16). */
static void vmath_double_sincos_accuracy(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track ts = cb_err_track_make("double sin, |x| <= 1e4 (abs)");
    cb_err_track tc = cb_err_track_make("double cos, |x| <= 1e4 (abs)");
    for (size_t i = 0; i < RANDOM_COUNT; ++i) {
        double x =
            (double)(i % 4 ? cb_prng_range(&r, -7.0f, 7.0f) : cb_prng_range(&r, -1e4f, 1e4f)) +
            (double)cb_prng_range(&r, -1.0f, 1.0f) * 1e-9;
        double s, c;
        cb_det_sincos(x, &s, &c);
        cb_err_track_add(&ts, s, sin(x), i);
        cb_err_track_add(&tc, c, cos(x), i);
        cb_dvec3 v = cb_dv_rotate_y_det(cb_dv(1.0, 2.0, -3.0), x),
                 w = cb_dv_rotate_y(cb_dv(1.0, 2.0, -3.0), x);
        CB_CHECK(fabs(v.x - w.x) <= 4e-15 && v.y == 2.0 && fabs(v.z - w.z) <= 4e-15, "rotate_y(%a)",
                 x);
    }
    cb_err_track_check(&ts, 5e-16);
    cb_err_track_check(&tc, 5e-16);
    /* Signed zero, the quadrant boundaries, non-finite and out-of-range input. */
    double s, c;
    cb_det_sincos(-0.0, &s, &c);
    CB_CHECK(signbit(s) && s == 0.0 && c == 1.0, "sincos(-0) = (%g, %g)", s, c);
    for (int k = -8; k <= 8; ++k) {
        double x = (double)k * (CB_DPI / 2.0);
        cb_det_sincos(x, &s, &c);
        CB_CHECK(fabs(s - sin(x)) <= 5e-16 && fabs(c - cos(x)) <= 5e-16, "sincos(%d pi/2)", k);
    }
    static const double bad[] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; ++i) {
        cb_det_sincos(bad[i], &s, &c);
        CB_CHECK(isnan(s) && isnan(c), "sincos(%g) must be NaN", bad[i]);
    }
    cb_det_sincos(1e300, &s, &c);
    CB_CHECK(s == 0.0 && c == 1.0, "sincos(1e300) = (%g, %g), want (0, 1)", s, c);
}

/* Masks kept as small integers come back as the same lanes. */
static void vmath_mask_bits_round_trip(void **state)
{
    (void)state;
    for (unsigned bits = 0; bits <= CB_VM_ALL_BITS; bits += bits < 64 ? 1 : 97) {
        cb_vm m = cb_vm_from_bits(bits);
        CB_CHECK(cb_vm_bits(m) == bits, "bits %#x came back as %#x", bits, cb_vm_bits(m));
        cb_vf v = cb_vf_select(m, cb_vf_set1(1.0f), cb_vf_zero());
        for (int l = 0; l < CB_W; ++l) {
            CB_CHECK(cb_vf_lane(v, l) == (float)((bits >> l) & 1u), "lane %d of %#x", l, bits);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vmath_atan2_accuracy),
        cmocka_unit_test(vmath_log2_accuracy),
        cmocka_unit_test(vmath_exp2_accuracy),
        cmocka_unit_test(vmath_exp_log_accuracy),
        cmocka_unit_test(vmath_mask_bits_round_trip),
        cmocka_unit_test(vmath_scalar_twins_match),
        cmocka_unit_test(vmath_sincos_matches_scalar),
        cmocka_unit_test(vmath_scalar_sincos_exp_accuracy),
        cmocka_unit_test(vmath_scalar_sincos_switch_matches_loop),
        cmocka_unit_test(vmath_double_sincos_accuracy),
    };
    return CB_RUN_TESTS(tests);
}
