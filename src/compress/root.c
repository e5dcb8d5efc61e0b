/* Compressing a root-motion track (crowdblend/cclip.h, ROOT TRACK): per component (x, y, z,
 * yaw) one step (on its 16-bit code) and one width over the whole track, every source frame
 * kept. Frames decode relative to frame 0, so no offset is stored (stored form version 4): the
 * integers count steps from the component's minimum, and their values step q carry the
 * minimum only as a common shift that the difference to frame 0 removes.
 *
 * The bound is per frame: the position within max_error_m / 4 as a vector, the yaw within
 * max_error_m / (4 max(shell, reach)). A component's error at a frame is its quantization error
 * there plus frame 0's (frames decode relative to frame 0), each at most half a step, so a step
 * of the per-component tolerance (the position's divided by sqrt 3) meets it; the decoded track
 * is then measured against the source, and a step that the float arithmetic of the decoder
 * pushes over is halved. Key reduction and delta coding were not tried for the root (the
 * alternatives docs/performance.md names). */
#include <math.h>

#include "compress/cclip_impl.h"

enum { ROOT_TRIES = 8 };

/* Component k of the track: its field for step `step` (constant components take none) and its
 * integers into q (frames * 4, column k). False when 24 bits cannot span the range at that
 * step. */
static bool quantize(const float *track, uint32_t frames, int k, double step,
                     cb_cclip_root_field *f, uint32_t *q)
{
    float lo = track[k], hi = track[k];
    for (uint32_t i = 1; i < frames; ++i) {
        float v = track[(size_t)i * CB_CCLIP_ROOT_COMPONENTS + (size_t)k];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    *f = (cb_cclip_root_field){0, 0.0f, 0.0f};
    if (hi == lo) {
        for (uint32_t i = 0; i < frames; ++i) {
            q[(size_t)i * CB_CCLIP_ROOT_COMPONENTS + (size_t)k] = 0;
        }
        return true;
    }
    /* The step on its code (stored form version 4), at or below the goal: the largest code
     * whose value is no more than step. */
    uint16_t code = cb_cclip_step_code((float)step);
    if (code > 0 && (double)cb_cclip_step_value(code) > step) {
        code--;
    }
    f->step = cb_cclip_step_value(code);
    double levels = ceil(((double)hi - (double)lo) / (double)f->step);
    unsigned bits = 1;
    while (bits < CB_CCLIP_MAX_BITS && ldexp(1.0, (int)bits) - 1.0 < levels) {
        bits++;
    }
    if (ldexp(1.0, (int)bits) - 1.0 < levels) {
        return false;
    }
    f->bits = (uint8_t)bits;
    if (!(cb_cclip_root_reach(f) <= CB_CCLIP_ROOT_MAX_VALUE)) {
        return false; /* the loader would refuse it (a huge step from a huge max_error_m) */
    }
    const double top = ldexp(1.0, (int)bits) - 1.0;
    for (uint32_t i = 0; i < frames; ++i) {
        size_t at = (size_t)i * CB_CCLIP_ROOT_COMPONENTS + (size_t)k;
        double x = nearbyint(((double)track[at] - (double)lo) / (double)f->step);
        q[at] = (uint32_t)(x < 0.0 ? 0.0 : x > top ? top : x);
    }
    return true;
}

/* The larger of two distances (>= 0). Comparisons, not fmax: gcc 12 for aarch64 stops with an
 * internal error vectorizing fmax reductions in these loops (docs/architecture.md, aarch64). */
static double larger(double a, double b)
{
    return b > a ? b : a;
}

/* The largest per-frame errors of a decoded track against the source. */
static void measure(const float *track, const float *decoded, uint32_t frames, double *pos,
                    double *yaw)
{
    *pos = *yaw = 0.0;
    for (uint32_t i = 0; i < frames; ++i) {
        const float *a = &track[(size_t)i * 4], *b = &decoded[(size_t)i * 4];
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            d2 += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
        }
        *pos = larger(*pos, sqrt(d2));
        *yaw = larger(*yaw, fabs((double)a[3] - b[3]));
    }
}

/* The farthest the root gets from its frame-0 position. */
static double reach_of(const float *track, uint32_t frames)
{
    double r = 0.0;
    for (uint32_t i = 0; i < frames; ++i) {
        const float *p = &track[(size_t)i * 4];
        r = larger(r, sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]));
    }
    return r;
}

cb_result cb_cclip_root_compress(const float *track, uint32_t frames, float max_error_m,
                                 float shell_m, const cb_allocator *a, unsigned char **block,
                                 size_t *bytes, double *pos_err, double *yaw_err, cb_error *err)
{
    const double pos_bound = max_error_m / 4.0;
    const double yaw_bound = max_error_m / (4.0 * fmax(shell_m, reach_of(track, frames)));
    const size_t q_bytes = (size_t)frames * CB_CCLIP_ROOT_COMPONENTS * sizeof(uint32_t);
    const size_t decoded_bytes = (size_t)frames * CB_CCLIP_ROOT_COMPONENTS * sizeof(float);
    uint32_t *q = cb_alloc(a, q_bytes, _Alignof(uint32_t));
    float *decoded = cb_alloc(a, decoded_bytes, _Alignof(float));
    *block = NULL;
    *bytes = 0;
    double step[2] = {pos_bound / sqrt(3.0), yaw_bound};
    cb_result r = q == NULL || decoded == NULL
                      ? cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_cclip_create: root track")
                      : CB_ERR_INVALID_ARGUMENT;
    for (int t = 0; r == CB_ERR_INVALID_ARGUMENT && t < ROOT_TRIES; ++t) {
        cb_cclip_root_field f[CB_CCLIP_ROOT_COMPONENTS];
        bool fits = true;
        for (int k = 0; k < CB_CCLIP_ROOT_COMPONENTS; ++k) {
            fits = fits && quantize(track, frames, k, step[k == 3], &f[k], q);
        }
        if (!fits) {
            break;
        }
        size_t n = cb_cclip_root_write(CB_CCLIP_STREAM_VERSION, f, q, frames, NULL);
        unsigned char *b = cb_alloc(a, n, 8);
        if (b == NULL) {
            r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_cclip_create: root track");
            break;
        }
        cb_cclip_root_write(CB_CCLIP_STREAM_VERSION, f, q, frames, b);
        cb_cclip_root_decode(CB_CCLIP_STREAM_VERSION, b, n, frames, decoded);
        measure(track, decoded, frames, pos_err, yaw_err);
        if (*pos_err <= pos_bound && *yaw_err <= yaw_bound) {
            *block = b, *bytes = n;
            r = CB_OK;
            break;
        }
        cb_free(a, b, n);
        step[0] *= *pos_err > pos_bound ? 0.5 : 1.0;
        step[1] *= *yaw_err > yaw_bound ? 0.5 : 1.0;
    }
    if (r == CB_ERR_INVALID_ARGUMENT) {
        r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                         "cb_cclip_create: the root track (reaching %.1f m) cannot be held to "
                         "%g m with %d-bit fields",
                         reach_of(track, frames), (double)max_error_m, CB_CCLIP_MAX_BITS);
    }
    cb_free(a, q, q_bytes);
    cb_free(a, decoded, decoded_bytes);
    return r;
}
