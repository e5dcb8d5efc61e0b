/* The compressor of crowdblend/cclip.h: picks, per track, the coarsest quantization whose
 * object-space shell error stays within the bound, and per clip the key rate that gives the
 * smallest stored form.
 *
 * The search follows ACL's (the animation compression library's) in spirit:
 *   1. Per track, the coarsest level (default, constant, then finer and finer steps) whose error
 *      alone is within the bound, measured on the joint's *dominant* shell: the shell distance
 *      plus the farthest descendant, so a hip rotation is judged by the foot it moves.
 *   2. The whole hierarchy is measured (every joint, every source frame, object space). Errors
 *      of a chain add up, so while some joint exceeds the bound, the track on its chain whose next
 *      level buys the largest error reduction per stored bit is refined.
 *   3. A trim pass coarsens tracks one level at a time, largest first, while the bound holds.
 *   4. A last pass coarsens single components one bit at a time, widest first, while the bound
 *      holds: a track's level gives its components one step, but they matter unequally.
 * Steps 1-4 run for several key rates (the source's and lower ones, resampled uniformly); the
 * smallest feasible result is kept. At step 1 each rotation also chooses its form: all four
 * components, or (stored form version 3) the three other than the one that stays farthest from
 * 0 in every key, that one rebuilt by the decoders (choose_rotation_form).
 *
 * Everything is measured in double precision from the decoded float values, exactly as the
 * decoders produce them (cb_cclip_value), so the error the compressor reports is the error the
 * runtime sees, up to the rounding of float sampling. The compressor aims 0.1 % under the bound
 * to leave room for that rounding. */
#include <math.h>
#include <string.h>
#include <time.h>

/* Build-time double-precision quaternion helpers, shared with the clip builder. */
#include "base/scalar_math.h"
#include "compress/cclip_impl.h"

/* Levels of a track: DEFAULT (nothing stored), CONSTANT (all components 0 bits), then step
 * sizes extent * 2^-k for k = 1 .. MAX_LEVEL (fields capped at CB_CCLIP_MAX_BITS). */
enum { LEVEL_DEFAULT = -1, LEVEL_CONSTANT = 0, MAX_LEVEL = 30 };

/* A rotation component that stays at least this far from 0 in every key, with one sign, may be
 * rebuilt from the other three (c = sqrt(1 - the others' squares) amplifies their errors by
 * about 1 / |c|: near 0 it would cost more bits than it saves, and a sign change would break
 * the keys' continuity). */
#define MIN_REBUILT 0.2

/* The compressor aims this far under the bound: float sampling may differ from the double
 * measurement by rounding (about 1e-7 relative), far below 0.1 %. */
#define BOUND_MARGIN 0.999

/* A 3x4 affine transform in double: m row-major (m[r * 3 + c]), then the translation. */
typedef struct daff {
    double m[9], t[3];
} daff;

typedef struct comp {
    double v[CB_CCLIP_COMPONENTS];
} comp;

typedef struct ctx {
    cb_cclip_desc d;
    cb_cclip_options opt;
    const cb_allocator *alloc;
    size_t joints, frames;
    /* Where the error is measured: points 2 p are the source frames, points 2 p + 1 the
     * midpoints between them (the source as the runtime samples it there: lerp and nlerp of the
     * two frames). A candidate at the source key rate is measured at the frames (its keys are
     * the frames, and the sampler interpolates between them as between the source's); one with
     * fewer keys at every point, because the sampler interpolates between its keys, whose kinks
     * fall elsewhere than the source's. */
    size_t points;
    const int32_t *parents;
    double bound, shell;
    comp *src;                           /* points x joints: t, q (unit, continuous), s - 1 */
    daff *msrc;                          /* points x joints: source model transforms */
    double *dominant;                    /* joints: the shell distance of a joint's own error */
    double range[CB_CCLIP_TRACKS];       /* largest magnitude per track type */
    int exponent[CB_CCLIP_TRACKS];       /* offset grid exponents (cb_cclip_offset_value) */
    float defaults[CB_CCLIP_COMPONENTS]; /* scratch */
    /* Per candidate key rate. */
    size_t keys;
    comp *key;     /* keys x joints: the source resampled at the key rate */
    int8_t *level; /* joints x 3 */
    /* Per joint: the rotation component that may be rebuilt from the other three (of those that
     * stay at least MIN_REBUILT from 0 in every key, with one sign, the one farthest from 0), or
     * -1; the sign it keeps; and whether the rotation is stored so (the track multiplied by that
     * sign: the same rotations, still continuous, the rebuilt component >= 0). */
    int8_t *rebuilt, *rsign;
    bool *derive;
    cb_cclip_field *field; /* joints x 10 */
    uint32_t *q;           /* keys x joints x 10 */
    float *dec;            /* keys x joints x 10 */
    daff *lcur;            /* points x joints: decoded local transforms */
    daff *mcur;            /* points x joints: decoded model transforms */
    double *jerr;          /* joints: max shell error over the measured points */
    bool *dirty;           /* joints */
    uint8_t *mark;         /* joints x 10: tracks or components visited by a trim pass */
    /* joints x 10: per component, how many times coarser than its track's level step it is
     * quantized (the component pass, step 4; 0 before it). */
    uint8_t *coarser;
    size_t *path; /* joints: a chain, for trial errors */
    /* Scratch for one track's trial. */
    cb_cclip_field tfield[4];
    uint32_t *tq; /* keys x 4 */
    float *tdec;  /* keys x 4 */
    uint32_t fixups, trims;
} ctx;

/* ------------------------------------------------------------------------------------------ */
/* Geometry                                                                                   */

static void quat_normalize(double q[4])
{
    double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(l > 0.0)) {
        q[0] = q[1] = q[2] = 0.0;
        q[3] = 1.0;
        return;
    }
    for (int i = 0; i < 4; ++i) {
        q[i] /= l;
    }
}

/* T * R * S from components (t, q, s - 1); q is normalized here. */
static daff affine_of(const double v[CB_CCLIP_COMPONENTS])
{
    double q[4] = {v[3], v[4], v[5], v[6]};
    quat_normalize(q);
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[9] = {
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
        2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y),
    };
    daff a;
    for (int row = 0; row < 3; ++row) {
        for (int col = 0; col < 3; ++col) {
            a.m[row * 3 + col] = r[row * 3 + col] * (1.0 + v[7 + col]);
        }
        a.t[row] = v[row];
    }
    return a;
}

static daff compose(const daff *p, const daff *l)
{
    daff o;
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            o.m[r * 3 + c] = p->m[r * 3] * l->m[c] + p->m[r * 3 + 1] * l->m[3 + c] +
                             p->m[r * 3 + 2] * l->m[6 + c];
        }
        o.t[r] =
            p->m[r * 3] * l->t[0] + p->m[r * 3 + 1] * l->t[1] + p->m[r * 3 + 2] * l->t[2] + p->t[r];
    }
    return o;
}

/* The largest distance between a(p) and b(p) over the shell points p = +-d e_axis:
 * |dt +- d dA_axis|^2 = |dt|^2 + d^2 |dA_axis|^2 +- 2 d dt.dA_axis, largest with the sign that
 * makes the last term positive. */
static double shell_error(const daff *a, const daff *b, double d)
{
    double dt[3] = {a->t[0] - b->t[0], a->t[1] - b->t[1], a->t[2] - b->t[2]};
    double tt = dt[0] * dt[0] + dt[1] * dt[1] + dt[2] * dt[2];
    double worst = tt;
    for (int c = 0; c < 3; ++c) {
        double col[3] = {a->m[c] - b->m[c], a->m[3 + c] - b->m[3 + c], a->m[6 + c] - b->m[6 + c]};
        double cc = col[0] * col[0] + col[1] * col[1] + col[2] * col[2];
        double tc = dt[0] * col[0] + dt[1] * col[1] + dt[2] * col[2];
        double e = tt + d * d * cc + 2.0 * d * fabs(tc);
        worst = e > worst ? e : worst;
    }
    return sqrt(worst);
}

/* ------------------------------------------------------------------------------------------ */
/* Source                                                                                     */

/* The root track, when given: long enough, finite and in range, and zero at frame 0. */
static cb_result validate_root_track(const cb_cclip_desc *d, cb_error *err)
{
    if (d->root_track.count < (size_t)d->frame_count * 4) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "cclip desc: root_track has %zu floats, %u frames need %zu",
                            d->root_track.count, d->frame_count, (size_t)d->frame_count * 4);
    }
    for (size_t i = 0; i < (size_t)d->frame_count * 4; ++i) {
        if (!isfinite(d->root_track.ptr[i]) ||
            fabsf(d->root_track.ptr[i]) > (float)(CB_CCLIP_ROOT_MAX_VALUE / 4)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "cclip desc: root_track frame %zu is not finite or beyond "
                                "%g",
                                i / 4, CB_CCLIP_ROOT_MAX_VALUE / 4);
        }
        if (i < 4 && d->root_track.ptr[i] != 0.0f) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "cclip desc: root_track frame 0 is not zero");
        }
    }
    return CB_OK;
}

/* Every source transform finite, with a rotation that can be normalized. */
static cb_result validate_frames(const cb_cclip_desc *d, size_t joints, cb_error *err)
{
    for (size_t i = 0; i < d->frame_count * joints; ++i) {
        cb_xform_fault fault = cb_xform_check(&d->frames.ptr[i]);
        if (fault == CB_XFORM_NOT_FINITE) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "cclip desc: frame %zu joint %zu is not finite", i / joints,
                                i % joints);
        }
        if (fault == CB_XFORM_ZERO_ROTATION) {
            return cb_error_set(err, CB_ERR_DEGENERATE,
                                "cclip desc: frame %zu joint %zu has a zero rotation", i / joints,
                                i % joints);
        }
    }
    return CB_OK;
}

static cb_result validate(const cb_cclip_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cclip desc: a canary is not 0");
    }
    cb_result r = cb_allocator_check(&d->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    if (d->skeleton == NULL || d->frames.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cclip desc: %s is NULL",
                            d->skeleton == NULL ? "skeleton" : "frames");
    }
    if (d->frame_count < 2 || d->frame_count > CB_CLIP_MAX_FRAMES) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cclip desc: frame_count %u is outside 2..%d", d->frame_count,
                            CB_CLIP_MAX_FRAMES);
    }
    size_t joints = cb_skeleton_joint_count(d->skeleton);
    if (d->frames.count / joints < d->frame_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "cclip desc: frames has %zu transforms, needs %u x %zu joints",
                            d->frames.count, d->frame_count, joints);
    }
    if (!isfinite(d->max_error_m) || !isfinite(d->shell_distance_m)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "cclip desc: %s is not finite",
                            !isfinite(d->max_error_m) ? "max_error_m" : "shell_distance_m");
    }
    if (!(d->max_error_m > 0.0f) || !(d->shell_distance_m > 0.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "cclip desc: %s must be > 0",
                            !(d->max_error_m > 0.0f) ? "max_error_m" : "shell_distance_m");
    }
    if (d->root_track.ptr != NULL) {
        r = validate_root_track(d, err);
        if (r != CB_OK) {
            return r;
        }
    }
    if (d->keys <= _CB_CCLIP_KEYS_DEFAULT || d->keys >= _CB_CCLIP_KEYS_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cclip desc: keys %d is not a "
                            "cb_cclip_keys",
                            (int)d->keys);
    }
    return validate_frames(d, joints, err);
}

/* The source frames at the even points: components, rotations unit and each in the hemisphere
 * of the frame before. */
static void source_frames(ctx *c)
{
    const size_t n = c->joints;
    for (size_t f = 0; f < c->frames; ++f) {
        for (size_t j = 0; j < n; ++j) {
            const cb_xform *x = &c->d.frames.ptr[f * n + j];
            double *v = c->src[2 * f * n + j].v;
            for (int k = 0; k < 3; ++k) {
                v[k] = x->translation[k];
                v[7 + k] = (double)x->scale[k] - 1.0;
            }
            for (int k = 0; k < 4; ++k) {
                v[3 + k] = x->rotation[k];
            }
            quat_normalize(v + 3);
            if (f > 0) {
                const double *p = c->src[(2 * f - 2) * n + j].v;
                if (p[3] * v[3] + p[4] * v[4] + p[5] * v[5] + p[6] * v[6] < 0.0) {
                    for (int k = 3; k < 7; ++k) {
                        v[k] = -v[k];
                    }
                }
            }
        }
    }
}

/* The odd points, midway between source frames: the source lerped there (rotations
 * normalized), where key-reduced candidates are also measured. */
static void source_midpoints(ctx *c)
{
    const size_t n = c->joints;
    for (size_t m = 1; m < c->points; m += 2) {
        for (size_t j = 0; j < n; ++j) {
            const double *a = c->src[(m - 1) * n + j].v, *b = c->src[(m + 1) * n + j].v;
            double *v = c->src[m * n + j].v;
            for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
                v[k] = 0.5 * a[k] + 0.5 * b[k];
            }
            quat_normalize(v + 3);
        }
    }
}

/* Model transforms of every point, and dominant[j] = shell + the largest distance from j to a
 * descendant over the clip: an error in j's local transform moves every point within that
 * radius. Children follow parents, so one backward sweep per frame propagates distances
 * upwards. */
static void source_model(ctx *c)
{
    const size_t n = c->joints;
    for (size_t f = 0; f < c->points; ++f) {
        for (size_t j = 0; j < n; ++j) {
            daff l = affine_of(c->src[f * n + j].v);
            int32_t p = c->parents[j];
            c->msrc[f * n + j] = p < 0 ? l : compose(&c->msrc[f * n + (size_t)p], &l);
        }
    }
    for (size_t j = 0; j < n; ++j) {
        c->dominant[j] = c->shell;
    }
    for (size_t f = 0; f < c->points; f += 2) {
        for (size_t j = n; j-- > 0;) {
            for (int32_t a = c->parents[j]; a >= 0; a = c->parents[a]) {
                const double *pj = c->msrc[f * n + j].t, *pa = c->msrc[f * n + (size_t)a].t;
                double dx = pj[0] - pa[0], dy = pj[1] - pa[1], dz = pj[2] - pa[2];
                double r = sqrt(dx * dx + dy * dy + dz * dz) + c->shell;
                c->dominant[a] = r > c->dominant[a] ? r : c->dominant[a];
            }
        }
    }
}

/* The largest magnitude per track type (fixed ranges for the no-range-reduction alternative)
 * and the offset grids' exponents. */
static void source_ranges(ctx *c)
{
    const size_t n = c->joints;
    c->range[0] = c->range[2] = 0.0;
    c->range[1] = 1.0;
    for (size_t f = 0; f < c->points; f += 2) {
        for (size_t j = 0; j < n; ++j) {
            const double *v = c->src[f * n + j].v;
            for (int k = 0; k < 3; ++k) {
                double t = fabs(v[k]), sc = fabs(v[7 + k]);
                c->range[0] = t > c->range[0] ? t : c->range[0];
                c->range[2] = sc > c->range[2] ? sc : c->range[2];
            }
        }
    }
    for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
        int e = c->range[x] > 0.0 ? (int)ceil(log2(c->range[x])) : 0;
        c->exponent[x] = e < -CB_CCLIP_MAX_EXPONENT  ? -CB_CCLIP_MAX_EXPONENT
                         : e > CB_CCLIP_MAX_EXPONENT ? CB_CCLIP_MAX_EXPONENT
                                                     : e;
    }
}

/* Source components (rotations unit and continuous along time), model transforms and the
 * dominant shell distances. */
static void prepare_source(ctx *c)
{
    source_frames(c);
    source_midpoints(c);
    source_model(c);
    source_ranges(c);
}

/* The source resampled at `keys` uniform keys (translation and scale lerped, rotation slerped,
 * as the source interpolates between its keys). */
static void resample(ctx *c)
{
    const size_t n = c->joints;
    for (size_t i = 0; i < c->keys; ++i) {
        double x = (double)i * (double)(c->frames - 1) / (double)(c->keys - 1);
        size_t a = (size_t)x;
        a = a > c->frames - 2 ? c->frames - 2 : a;
        double u = x - (double)a;
        for (size_t j = 0; j < n; ++j) {
            const double *va = c->src[2 * a * n + j].v, *vb = c->src[(2 * a + 2) * n + j].v;
            double *o = c->key[i * n + j].v;
            for (int k = 0; k < 3; ++k) {
                o[k] = va[k] + (vb[k] - va[k]) * u;
                o[7 + k] = va[7 + k] + (vb[7 + k] - va[7 + k]) * u;
            }
            cb_dquat q = cb_dq_slerp((cb_dquat){va[3], va[4], va[5], va[6]},
                                     (cb_dquat){vb[3], vb[4], vb[5], vb[6]}, u);
            if (u == 0.0) {
                q = (cb_dquat){va[3], va[4], va[5], va[6]};
            } else if (u == 1.0) {
                q = (cb_dquat){vb[3], vb[4], vb[5], vb[6]};
            }
            o[3] = q.x, o[4] = q.y, o[5] = q.z, o[6] = q.w;
        }
    }
    for (size_t j = 0; j < n; ++j) {
        double best = MIN_REBUILT;
        c->rebuilt[j] = -1, c->rsign[j] = 1, c->derive[j] = false;
        for (int k = 0; k < 4; ++k) {
            double lo = INFINITY, hi = -INFINITY;
            for (size_t i = 0; i < c->keys; ++i) {
                double v = c->key[i * n + j].v[3 + k];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            double least = lo > 0.0 ? lo : hi < 0.0 ? -hi : 0.0; /* smallest |v|, one sign */
            if (least >= best) {
                best = least, c->rebuilt[j] = (int8_t)k, c->rsign[j] = lo > 0.0 ? 1 : -1;
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Quantization of one track at one level                                                     */

static int bits_for(double extent, double step)
{
    if (!(extent > step)) {
        return 0;
    }
    int b = (int)ceil(log2(extent / step + 1.0));
    return b > CB_CCLIP_MAX_BITS ? CB_CCLIP_MAX_BITS : b;
}

/* The decoded rotation of integers q (4) with fields c->tfield as the decoders give it (the
 * rebuilt component, if any: +0 plus its value) into out. */
static void decode_rotation(const ctx *c, const uint32_t q[4], int rebuilt, float out[4])
{
    for (int k = 0; k < 4; ++k) {
        const cb_cclip_field *f = &c->tfield[k];
        out[k] =
            k == rebuilt ? cb_cclip_value(0.0f, 0.0f, 0) : cb_cclip_value(f->offset, f->step, q[k]);
    }
    if (rebuilt >= 0) {
        out[rebuilt] = out[rebuilt] + cb_cclip_rebuild(out);
    }
}

/* Each stored component's smallest and largest value over the keys (times sign), and the
 * largest extent among them (the range the whole track is held to when ranges are not
 * reduced); the rebuilt component is left out. */
static double track_ranges(const ctx *c, size_t j, int x, int rebuilt, double sign, int lvl,
                           double lo[4], double hi[4])
{
    const int first = cb_cclip_track_first[x];
    double extent = 0.0;
    for (int k = 0; k < cb_cclip_track_size[x]; ++k) {
        lo[k] = INFINITY, hi[k] = -INFINITY;
        if (k == rebuilt) {
            continue;
        }
        for (size_t i = 0; i < c->keys; ++i) {
            double v = sign * c->key[i * c->joints + j].v[first + k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
        extent = hi[k] - lo[k] > extent ? hi[k] - lo[k] : extent;
    }
    if (c->opt.no_range_reduction && lvl > LEVEL_CONSTANT) {
        extent = 2.0 * c->range[x];
    }
    return extent;
}

/* Component k's field at level lvl over [lo, hi]: the default value, a constant on its grid,
 * or an offset and step that reach the range at the bits the step goal needs. */
static cb_cclip_field component_field(const ctx *c, size_t j, int x, int k, int lvl, double lo,
                                      double hi, double extent)
{
    const int first = cb_cclip_track_first[x];
    if (lvl == LEVEL_DEFAULT) {
        return (cb_cclip_field){CB_CCLIP_DEFAULT_TRACK,
                                cb_cclip_default_value(c->d.skeleton, c->d.additive, j, first + k),
                                0.0f};
    }
    const double step_goal =
        extent * ldexp(1.0, c->coarser[j * CB_CCLIP_COMPONENTS + first + k] - lvl);
    double a = lo, b = hi;
    if (c->opt.no_range_reduction && lvl > LEVEL_CONSTANT) {
        a = -c->range[x], b = c->range[x];
    }
    int bits = lvl == LEVEL_CONSTANT ? 0 : bits_for(b - a, step_goal);
    if (bits == 0) {
        /* The midpoint on the constants' grid (stored form version 4). */
        return (cb_cclip_field){0, cb_cclip_constant_round(0.5 * (lo + hi), c->exponent[x]), 0.0f};
    }
    /* The offset on its grid at or below the minimum, the step rounded up so that the field
     * still reaches the maximum. */
    double o = floor(ldexp(a, 15 - c->exponent[x])) + 32768.0;
    uint16_t code = (uint16_t)(o < 0.0 ? 0.0 : o > 65535.0 ? 65535.0 : o);
    float off = cb_cclip_offset_value(code, c->exponent[x]);
    double goal = (b - (double)off) / (double)((1u << bits) - 1u);
    return (cb_cclip_field){(uint8_t)bits, off,
                            cb_cclip_step_value(cb_cclip_step_code((float)goal))};
}

/* Every key's code and decoded value of component k (of track x, joint j) under its field
 * c->tfield[k], into c->tq and c->tdec. */
static void quantize_keys(ctx *c, size_t j, int x, int k, double sign)
{
    const int first = cb_cclip_track_first[x];
    const cb_cclip_field *fd = &c->tfield[k];
    uint32_t top = fd->bits == 0 || fd->bits == CB_CCLIP_DEFAULT_TRACK ? 0u : (1u << fd->bits) - 1u;
    for (size_t i = 0; i < c->keys; ++i) {
        uint32_t q = 0;
        if (top > 0) {
            double r = floor((sign * c->key[i * c->joints + j].v[first + k] - (double)fd->offset) /
                                 (double)fd->step +
                             0.5);
            q = r < 0.0 ? 0u : r > (double)top ? top : (uint32_t)r;
        }
        c->tq[i * 4 + k] = q;
        c->tdec[i * 4 + k] = cb_cclip_value(fd->offset, fd->step, q);
    }
}

/* Fields and decoded values (keys x size, into c->tfield, c->tq, c->tdec) of track x of joint
 * j at level lvl. */
static void quantize(ctx *c, size_t j, int x, int lvl)
{
    /* A rotation with a component rebuilt quantizes the others of the track times its sign. */
    const int rebuilt = x == 1 && c->derive[j] && lvl != LEVEL_DEFAULT ? c->rebuilt[j] : -1;
    const double sign = rebuilt >= 0 ? (double)c->rsign[j] : 1.0;
    double lo[4], hi[4];
    const double extent = track_ranges(c, j, x, rebuilt, sign, lvl, lo, hi);
    for (int k = 0; k < cb_cclip_track_size[x]; ++k) {
        if (k == rebuilt) {
            continue;
        }
        c->tfield[k] = component_field(c, j, x, k, lvl, lo[k], hi[k], extent);
        quantize_keys(c, j, x, k, sign);
    }
    if (rebuilt >= 0) {
        c->tfield[rebuilt] = (cb_cclip_field){CB_CCLIP_REBUILT, 0.0f, 0.0f};
    }
    for (size_t i = 0; rebuilt >= 0 && i < c->keys; ++i) {
        decode_rotation(c, &c->tq[i * 4], rebuilt, &c->tdec[i * 4]);
    }
}

/* Whether the candidate just quantized (c->tdec) for track x is what the loader accepts of a
 * rotation track (cb_cclip_clip_create's key check, to_clip.c): every key near unit length and
 * in the hemisphere of the key before. The shell error alone does not ensure it: it is
 * measured on the normalized rotation, so at loose bounds coarse components passed it at
 * lengths of 0.82-1.13, which every load then refused. A margin (0.9 of the tolerance, a
 * positive dot) covers the loader's float arithmetic. Other tracks: always. */
static bool loadable(const ctx *c, int x)
{
    if (cb_cclip_track_size[x] != 4) { /* the rotation track, the one of 4 components */
        return true;
    }
    const double tol = 0.9 * CB_CCLIP_KEY_UNIT_TOLERANCE;
    for (size_t i = 0; i < c->keys; ++i) {
        const float *q = &c->tdec[i * 4], *before = i > 0 ? q - 4 : q;
        double len2 = 0.0, dot = 0.0;
        for (int k = 0; k < 4; ++k) {
            len2 += (double)q[k] * q[k];
            dot += (double)q[k] * before[k];
        }
        if (len2 < (1.0 - tol) * (1.0 - tol) || len2 > (1.0 + tol) * (1.0 + tol) || dot < 1e-6) {
            return false;
        }
    }
    return true;
}

/* Bits of a track per key, and bytes of its description in the stored form. */
static size_t track_key_bits(const cb_cclip_field *f, int size)
{
    size_t b = 0;
    for (int k = 0; k < size; ++k) {
        b += cb_cclip_stored_bits(f[k].bits);
    }
    return b;
}

/* Bits of a track's description (version 3): 2 in the mode map, 5 bytes per component
 * described (none for a default track), a byte naming a rebuilt component. */
static size_t track_header_bits(const cb_cclip_field *f, int size)
{
    size_t b = 2;
    for (int k = 0; k < size; ++k) {
        b += f[k].bits == CB_CCLIP_DEFAULT_TRACK ? 0 : f[k].bits == CB_CCLIP_REBUILT ? 8 : 40;
    }
    return b;
}

/* Cost of a track in stored bits. */
static double track_cost(const ctx *c, const cb_cclip_field *f, int size)
{
    return (double)track_key_bits(f, size) * (double)c->keys + (double)track_header_bits(f, size);
}

/* Copies the trial in c->t* into the clip's state for track x of joint j. */
static void commit(ctx *c, size_t j, int x, int lvl)
{
    const int first = cb_cclip_track_first[x], size = cb_cclip_track_size[x];
    const size_t n = c->joints;
    c->level[j * CB_CCLIP_TRACKS + x] = (int8_t)lvl;
    for (int k = 0; k < size; ++k) {
        c->field[j * CB_CCLIP_COMPONENTS + first + k] = c->tfield[k];
        for (size_t i = 0; i < c->keys; ++i) {
            c->q[(i * n + j) * CB_CCLIP_COMPONENTS + first + k] = c->tq[i * 4 + k];
            c->dec[(i * n + j) * CB_CCLIP_COMPONENTS + first + k] = c->tdec[i * 4 + k];
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Reconstruction and error                                                                   */

/* The points a candidate is measured at: every other (the frames) at the source key rate. */
static size_t point_step(const ctx *c)
{
    return c->keys == c->frames ? 2 : 1;
}

/* Where measuring point p (source frame p / 2 when p is even) falls among the keys. */
static void key_pos(const ctx *c, size_t p, size_t *i, double *u)
{
    if (c->keys == c->frames) {
        size_t f = p / 2; /* p is even: point_step */
        *i = f < c->keys - 1 ? f : c->keys - 2;
        *u = f < c->keys - 1 ? 0.0 : 1.0;
        return;
    }
    double x = (double)p * (double)(c->keys - 1) / (double)(2 * (c->frames - 1));
    size_t a = (size_t)x;
    a = a > c->keys - 2 ? c->keys - 2 : a;
    *i = a;
    *u = x - (double)a;
}

/* Joint j's decoded components at source frame f: the two keys around it lerped, as the
 * sampler does (the rotation is normalized by affine_of). */
/* Decoded component k (of the 10) of a key as the decoders give it: a scale's deviation d
 * comes out as the float 1 + d (cb_cclip_decode), so the key's scale deviation is that float
 * less 1, not d; measured as d, scaled skeletons' errors differed from the decoded clip's by
 * up to 1e-7 m, which the per-component pass, working closer to the bound, made visible. */
static double key_value(float v, int k)
{
    return k < CB_CCLIP_COMPONENTS_NO_SCALE ? (double)v : (double)(1.0f + v) - 1.0;
}

static void decoded_at(const ctx *c, size_t j, size_t f, double out[CB_CCLIP_COMPONENTS])
{
    size_t i;
    double u;
    key_pos(c, f, &i, &u);
    const float *a = &c->dec[(i * c->joints + j) * CB_CCLIP_COMPONENTS];
    const float *b = a + c->joints * CB_CCLIP_COMPONENTS;
    for (int k = 0; k < CB_CCLIP_COMPONENTS; ++k) {
        out[k] = (1.0 - u) * key_value(a[k], k) + u * key_value(b[k], k);
    }
}

/* The same with track x taken from the trial (c->tdec). */
static void trial_at(const ctx *c, size_t j, int x, size_t f, double out[CB_CCLIP_COMPONENTS])
{
    decoded_at(c, j, f, out);
    size_t i;
    double u;
    key_pos(c, f, &i, &u);
    const int first = cb_cclip_track_first[x];
    for (int k = 0; k < cb_cclip_track_size[x]; ++k) {
        out[first + k] = (1.0 - u) * key_value(c->tdec[i * 4 + k], first + k) +
                         u * key_value(c->tdec[(i + 1) * 4 + k], first + k);
    }
}

/* Error of the trial track alone: joint j's source transform with track x replaced, under its
 * source parent, on its dominant shell. */
static double local_error(const ctx *c, size_t j, int x)
{
    const size_t n = c->joints;
    const int first = cb_cclip_track_first[x];
    double worst = 0.0;
    for (size_t f = 0; f < c->points; f += point_step(c)) {
        double v[CB_CCLIP_COMPONENTS], t[CB_CCLIP_COMPONENTS];
        memcpy(v, c->src[f * n + j].v, sizeof v);
        trial_at(c, j, x, f, t);
        for (int k = 0; k < cb_cclip_track_size[x]; ++k) {
            v[first + k] = t[first + k];
        }
        daff l = affine_of(v);
        int32_t p = c->parents[j];
        daff m = p < 0 ? l : compose(&c->msrc[f * n + (size_t)p], &l);
        double e = shell_error(&m, &c->msrc[f * n + j], c->dominant[j]);
        worst = e > worst ? e : worst;
    }
    return worst;
}

/* Recomputes the decoded local and model transforms and the errors of joint j and of every
 * joint below it; of all joints when j is SIZE_MAX. */
static void refresh_from(ctx *c, size_t j)
{
    const size_t n = c->joints;
    const bool all = j == SIZE_MAX;
    memset(c->dirty, 0, n * sizeof *c->dirty);
    for (size_t k = all ? 0 : j; k < n; ++k) {
        int32_t p = c->parents[k];
        if (!all && k != j && (p < 0 || !c->dirty[p])) {
            continue;
        }
        c->dirty[k] = true;
        double worst = 0.0;
        for (size_t f = 0; f < c->points; f += point_step(c)) {
            double v[CB_CCLIP_COMPONENTS];
            decoded_at(c, k, f, v);
            c->lcur[f * n + k] = affine_of(v);
            c->mcur[f * n + k] = p < 0 ? c->lcur[f * n + k]
                                       : compose(&c->mcur[f * n + (size_t)p], &c->lcur[f * n + k]);
            double e = shell_error(&c->mcur[f * n + k], &c->msrc[f * n + k], c->shell);
            worst = e > worst ? e : worst;
        }
        c->jerr[k] = worst;
    }
}

/* Error of joint w with the trial on track x of joint a (an ancestor of w or w itself). */
static double trial_error_at(const ctx *c, size_t a, int x, size_t w)
{
    const size_t n = c->joints;
    size_t *path = c->path, depth = 0;
    for (size_t k = w; k != a; k = (size_t)c->parents[k]) {
        path[depth++] = k;
    }
    double worst = 0.0;
    for (size_t f = 0; f < c->points; f += point_step(c)) {
        double v[CB_CCLIP_COMPONENTS];
        trial_at(c, a, x, f, v);
        daff m = affine_of(v);
        int32_t p = c->parents[a];
        if (p >= 0) {
            m = compose(&c->mcur[f * n + (size_t)p], &m);
        }
        for (size_t s = depth; s-- > 0;) {
            m = compose(&m, &c->lcur[f * n + path[s]]);
        }
        double e = shell_error(&m, &c->msrc[f * n + w], c->shell);
        worst = e > worst ? e : worst;
    }
    return worst;
}

static double max_error(const ctx *c, size_t *worst_joint)
{
    double m = 0.0;
    *worst_joint = 0;
    for (size_t j = 0; j < c->joints; ++j) {
        if (c->jerr[j] > m) {
            m = c->jerr[j];
            *worst_joint = j;
        }
    }
    return m;
}

/* ------------------------------------------------------------------------------------------ */
/* Search                                                                                     */

static void set_level(ctx *c, size_t j, int x, int lvl)
{
    quantize(c, j, x, lvl);
    commit(c, j, x, lvl);
}

/* Step 1: each track at the coarsest level that meets the bound alone (uniform_precision: only
 * default and constant are chosen per track; the rest wait for one common level). Returns false
 * when some track cannot meet it at any level (the key rate is too low). */
/* The coarsest level of track x of joint j that meets goal alone and loads, or top + 1. */
static int first_level(ctx *c, size_t j, int x, int top, double goal)
{
    int lvl = LEVEL_DEFAULT;
    for (; lvl <= top; ++lvl) {
        quantize(c, j, x, lvl);
        if (loadable(c, x) && local_error(c, j, x) <= goal) {
            break;
        }
    }
    return lvl;
}

/* Whether rotation j is stored with a component rebuilt (c->rebuilt[j]): when allowed and its
 * first level that way costs no more than with all four stored (step 1's measure). Choosing
 * among all allowed components by this measure instead of the one farthest from 0 gave a
 * larger CesiumMan (3,828 bytes against 3,808): the search after step 1 decides more. Leaves the
 * trial quantized as the choice, at its level (*lvl). */
static void choose_rotation_form(ctx *c, size_t j, int top, double goal, int *lvl)
{
    c->derive[j] = false;
    if (c->rebuilt[j] < 0 || c->opt.no_rebuilt) {
        return;
    }
    const double stored = *lvl <= top ? track_cost(c, c->tfield, 4) : INFINITY;
    c->derive[j] = true;
    int rebuilt_lvl = first_level(c, j, 1, top, goal);
    if (rebuilt_lvl <= top && track_cost(c, c->tfield, 4) <= stored) {
        *lvl = rebuilt_lvl;
        return;
    }
    c->derive[j] = false;
    if (*lvl <= top) {
        quantize(c, j, 1, *lvl);
    }
}

static bool start_levels(ctx *c, double goal)
{
    for (size_t j = 0; j < c->joints; ++j) {
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            int top = c->opt.uniform_precision ? LEVEL_CONSTANT : MAX_LEVEL;
            int lvl = first_level(c, j, x, top, goal);
            if (x == 1 && lvl > LEVEL_DEFAULT) {
                choose_rotation_form(c, j, top, goal, &lvl);
            }
            if (lvl > top) {
                if (!c->opt.uniform_precision) {
                    return false;
                }
                /* The first animated level for now: common_level() then moves every animated
                 * track to the coarsest level that meets the goal for all of them. */
                lvl = 1;
                quantize(c, j, x, lvl);
            }
            commit(c, j, x, lvl);
        }
    }
    return true;
}

/* uniform_precision: the coarsest common level for every animated track. */
static bool common_level(ctx *c, double goal)
{
    for (int lvl = 1; lvl <= MAX_LEVEL; ++lvl) {
        bool ok = true;
        for (size_t j = 0; j < c->joints; ++j) {
            for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
                if (c->level[j * CB_CCLIP_TRACKS + x] > LEVEL_CONSTANT) {
                    set_level(c, j, x, lvl);
                    ok = ok && loadable(c, x);
                }
            }
        }
        refresh_from(c, SIZE_MAX);
        size_t w;
        if (ok && max_error(c, &w) <= goal) {
            return true;
        }
    }
    return false;
}

/* Step 2: while a joint exceeds the goal, refine the track on its chain with the best error
 * reduction per stored bit. */
static bool fix_up(ctx *c, double goal)
{
    for (;;) {
        size_t w;
        double e = max_error(c, &w);
        if (e <= goal) {
            return true;
        }
        double best_score = 0.0;
        size_t best_j = SIZE_MAX;
        int best_x = 0;
        for (int64_t a = (int64_t)w; a >= 0; a = c->parents[a]) {
            for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
                int lvl = c->level[(size_t)a * CB_CCLIP_TRACKS + x];
                if (lvl >= MAX_LEVEL) {
                    continue;
                }
                const cb_cclip_field *cur =
                    &c->field[(size_t)a * CB_CCLIP_COMPONENTS + cb_cclip_track_first[x]];
                double cost0 = track_cost(c, cur, cb_cclip_track_size[x]);
                quantize(c, (size_t)a, x, lvl + 1);
                if (!loadable(c, x)) {
                    continue;
                }
                double cost1 = track_cost(c, c->tfield, cb_cclip_track_size[x]);
                double gain = e - trial_error_at(c, (size_t)a, x, w);
                double score = gain / (cost1 - cost0 > 1.0 ? cost1 - cost0 : 1.0);
                if (gain > 0.0 && score > best_score) {
                    best_score = score, best_j = (size_t)a, best_x = x;
                }
            }
        }
        if (best_j == SIZE_MAX) {
            /* No single refinement helps (the error is dominated elsewhere on the chain, or by
             * rounding): refine every track of the chain that can still be refined. */
            bool any = false;
            size_t top = w;
            for (int64_t a = (int64_t)w; a >= 0; a = c->parents[a]) {
                for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
                    int lvl = c->level[(size_t)a * CB_CCLIP_TRACKS + x];
                    if (lvl < MAX_LEVEL) {
                        set_level(c, (size_t)a, x, lvl + 1);
                        any = true;
                    }
                }
                top = (size_t)a;
            }
            if (!any) {
                return false;
            }
            refresh_from(c, top);
            c->fixups++;
            continue;
        }
        set_level(c, best_j, best_x, c->level[best_j * CB_CCLIP_TRACKS + best_x] + 1);
        refresh_from(c, best_j);
        c->fixups++;
    }
}

/* Step 3: coarsen tracks, largest first, one level at a time while the goal holds. */
static void trim(ctx *c, double goal)
{
    const size_t tracks = c->joints * CB_CCLIP_TRACKS;
    for (int pass = 0; pass < 2; ++pass) {
        bool changed = false;
        /* Visit tracks from the most bits per key down (selection by repeated scans: the scan
         * costs far less than the trials). */
        uint8_t *visited = c->mark;
        memset(visited, 0, tracks);
        for (size_t round = 0; round < tracks; ++round) {
            size_t pick = SIZE_MAX, pick_bits = 0;
            for (size_t t = 0; t < tracks; ++t) {
                size_t j = t / CB_CCLIP_TRACKS;
                int x = (int)(t % CB_CCLIP_TRACKS);
                size_t b =
                    track_key_bits(&c->field[j * CB_CCLIP_COMPONENTS + cb_cclip_track_first[x]],
                                   cb_cclip_track_size[x]);
                if (!visited[t] && c->level[t] > LEVEL_DEFAULT &&
                    (pick == SIZE_MAX || b > pick_bits)) {
                    pick = t, pick_bits = b;
                }
            }
            if (pick == SIZE_MAX) {
                break;
            }
            visited[pick] = 1;
            size_t j = pick / CB_CCLIP_TRACKS;
            int x = (int)(pick % CB_CCLIP_TRACKS);
            for (;;) {
                int lvl = c->level[pick];
                if (lvl <= LEVEL_DEFAULT) {
                    break;
                }
                set_level(c, j, x, lvl - 1);
                if (loadable(c, x)) {
                    refresh_from(c, j);
                    size_t w;
                    if (max_error(c, &w) <= goal) {
                        c->trims++;
                        changed = true;
                        continue;
                    }
                }
                set_level(c, j, x, lvl);
                refresh_from(c, j);
                break;
            }
        }
        if (!changed) {
            break;
        }
    }
}

/* Step 4: coarsen single components, the widest first, one bit at a time while the goal
 * holds. A track's level gives its components one step, but they matter unequally: a rotation
 * about the axis towards a joint's children moves only its own shell, not the limb below, and
 * w moves the rotation by sqrt(1 - w^2) of its error, little for small rotations. */
static void trim_components(ctx *c, double goal)
{
    const size_t count = c->joints * CB_CCLIP_COMPONENTS;
    uint8_t *visited = c->mark;
    memset(visited, 0, count);
    for (size_t round = 0; round < count; ++round) {
        size_t pick = SIZE_MAX;
        for (size_t i = 0; i < count; ++i) {
            uint8_t b = (uint8_t)cb_cclip_stored_bits(c->field[i].bits);
            if (!visited[i] && b > 0 && (pick == SIZE_MAX || b > c->field[pick].bits)) {
                pick = i;
            }
        }
        if (pick == SIZE_MAX) {
            break;
        }
        visited[pick] = 1;
        const size_t j = pick / CB_CCLIP_COMPONENTS;
        const int component = (int)(pick % CB_CCLIP_COMPONENTS);
        const int x = component < 3 ? 0 : component < 7 ? 1 : 2;
        const int lvl = c->level[j * CB_CCLIP_TRACKS + x];
        while (c->field[pick].bits > 0 && c->coarser[pick] < MAX_LEVEL) {
            c->coarser[pick]++;
            set_level(c, j, x, lvl);
            size_t w;
            if (loadable(c, x)) {
                refresh_from(c, j);
                if (max_error(c, &w) <= goal) {
                    c->trims++;
                    continue;
                }
            }
            c->coarser[pick]--;
            set_level(c, j, x, lvl);
            refresh_from(c, j);
            break;
        }
    }
}

/* Runs the search at c->keys; returns the stored size, or 0 when the rate cannot meet the
 * bound. */
static size_t search(ctx *c)
{
    const double goal = c->bound * BOUND_MARGIN;
    memset(c->coarser, 0, c->joints * CB_CCLIP_COMPONENTS);
    resample(c);
    if (!start_levels(c, goal)) {
        return 0;
    }
    refresh_from(c, SIZE_MAX);
    if (c->opt.uniform_precision) {
        if (!common_level(c, goal)) {
            return 0;
        }
    } else {
        if (!fix_up(c, goal)) {
            return 0;
        }
        if (!c->opt.no_trim) {
            trim(c, goal);
        }
        if (!c->opt.no_component_trim) {
            trim_components(c, goal);
        }
    }
    size_t bits = 0, header_bits = 0;
    for (size_t j = 0; j < c->joints; ++j) {
        for (int x = 0; x < CB_CCLIP_TRACKS; ++x) {
            const cb_cclip_field *f = &c->field[j * CB_CCLIP_COMPONENTS + cb_cclip_track_first[x]];
            bits += track_key_bits(f, cb_cclip_track_size[x]);
            header_bits += track_header_bits(f, cb_cclip_track_size[x]);
        }
    }
    /* The mode map's 2 bits per track round up to whole bytes; descriptions are whole bytes. */
    return CB_CCLIP_HEADER_BYTES + (header_bits + 7) / 8 + (bits * c->keys + 7) / 8;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry point                                                                                */

cb_cclip_desc cb_cclip_query_desc(const cb_cclip_desc *desc)
{
    cb_cclip_desc d = {0};
    if (desc != NULL) {
        d = *desc;
    }
    if (d.max_error_m == 0.0f) {
        d.max_error_m = CB_CCLIP_DEFAULT_MAX_ERROR_M;
    }
    if (d.shell_distance_m == 0.0f) {
        d.shell_distance_m = CB_CCLIP_DEFAULT_SHELL_M;
    }
    if (d.keys == _CB_CCLIP_KEYS_DEFAULT) {
        d.keys = CB_CCLIP_KEYS_REDUCE;
    }
    return d;
}

float cb_cclip_default_value(const cb_skeleton *skeleton, bool additive, size_t joint,
                             int component)
{
    cb_xform x = additive ? cb_xform_identity() : cb_skeleton_rest_xform(skeleton, joint);
    if (component < 3) {
        return x.translation[component];
    }
    if (component < 7) {
        return x.rotation[component - 3];
    }
    return x.scale[component - 7] - 1.0f;
}

static void ctx_free(ctx *c)
{
    const cb_allocator *a = c->alloc;
    size_t n = c->joints, fr = c->frames, pts = c->points;
    cb_free(a, c->src, pts * n * sizeof(comp));
    cb_free(a, c->msrc, pts * n * sizeof(daff));
    cb_free(a, c->dominant, n * sizeof(double));
    cb_free(a, c->key, fr * n * sizeof(comp));
    cb_free(a, c->level, n * CB_CCLIP_TRACKS);
    cb_free(a, c->rebuilt, n);
    cb_free(a, c->rsign, n);
    cb_free(a, c->derive, n * sizeof(bool));
    cb_free(a, c->field, n * CB_CCLIP_COMPONENTS * sizeof(cb_cclip_field));
    cb_free(a, c->q, fr * n * CB_CCLIP_COMPONENTS * sizeof(uint32_t));
    cb_free(a, c->dec, fr * n * CB_CCLIP_COMPONENTS * sizeof(float));
    cb_free(a, c->lcur, pts * n * sizeof(daff));
    cb_free(a, c->mcur, pts * n * sizeof(daff));
    cb_free(a, c->jerr, n * sizeof(double));
    cb_free(a, c->dirty, n * sizeof(bool));
    cb_free(a, c->mark, n * CB_CCLIP_COMPONENTS);
    cb_free(a, c->coarser, n * CB_CCLIP_COMPONENTS);
    cb_free(a, c->path, n * sizeof(size_t));
    cb_free(a, c->tq, fr * 4 * sizeof(uint32_t));
    cb_free(a, c->tdec, fr * 4 * sizeof(float));
}

static bool ctx_alloc(ctx *c)
{
    const cb_allocator *a = c->alloc;
    size_t n = c->joints, fr = c->frames, pts = c->points;
    c->src = cb_alloc(a, pts * n * sizeof(comp), _Alignof(comp));
    c->msrc = cb_alloc(a, pts * n * sizeof(daff), _Alignof(daff));
    c->dominant = cb_alloc(a, n * sizeof(double), _Alignof(double));
    c->key = cb_alloc(a, fr * n * sizeof(comp), _Alignof(comp));
    c->level = cb_alloc(a, n * CB_CCLIP_TRACKS, 1);
    c->rebuilt = cb_alloc(a, n, 1);
    c->rsign = cb_alloc(a, n, 1);
    c->derive = cb_alloc(a, n * sizeof(bool), _Alignof(bool));
    c->field =
        cb_alloc(a, n * CB_CCLIP_COMPONENTS * sizeof(cb_cclip_field), _Alignof(cb_cclip_field));
    c->q = cb_alloc(a, fr * n * CB_CCLIP_COMPONENTS * sizeof(uint32_t), _Alignof(uint32_t));
    c->dec = cb_alloc(a, fr * n * CB_CCLIP_COMPONENTS * sizeof(float), _Alignof(float));
    c->lcur = cb_alloc(a, pts * n * sizeof(daff), _Alignof(daff));
    c->mcur = cb_alloc(a, pts * n * sizeof(daff), _Alignof(daff));
    c->jerr = cb_alloc(a, n * sizeof(double), _Alignof(double));
    c->dirty = cb_alloc(a, n * sizeof(bool), _Alignof(bool));
    c->mark = cb_alloc(a, n * CB_CCLIP_COMPONENTS, 1);
    c->coarser = cb_alloc(a, n * CB_CCLIP_COMPONENTS, 1);
    c->path = cb_alloc(a, n * sizeof(size_t), _Alignof(size_t));
    c->tq = cb_alloc(a, fr * 4 * sizeof(uint32_t), _Alignof(uint32_t));
    c->tdec = cb_alloc(a, fr * 4 * sizeof(float), _Alignof(float));
    return c->src && c->msrc && c->dominant && c->key && c->level && c->rebuilt && c->rsign &&
           c->derive && c->field && c->q && c->dec && c->lcur && c->mcur && c->jerr && c->dirty &&
           c->mark && c->coarser && c->path && c->tq && c->tdec;
}

/* The candidate key counts: the source's, then about 2/3, 1/2, 1/3, 1/4, 1/6 and 1/8 of its
 * intervals (each at least 1). */
static size_t candidate_keys(size_t frames, int i)
{
    static const double ratio[] = {1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0};
    if (i >= (int)(sizeof ratio / sizeof ratio[0])) {
        return 0;
    }
    double intervals = ceil((double)(frames - 1) / ratio[i]);
    return (size_t)(intervals < 1.0 ? 1.0 : intervals) + 1;
}

typedef struct array_q {
    const uint32_t *q;
    size_t joints;
} array_q;

static uint32_t get_array_q(const void *user, size_t key, size_t joint, int component)
{
    const array_q *a = user;
    return a->q[(key * a->joints + joint) * CB_CCLIP_COMPONENTS + (size_t)component];
}

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The working context's sizes and settings, from a validated desc. */
static void ctx_init(ctx *c, const cb_cclip_options *options)
{
    if (options != NULL) {
        c->opt = *options;
    }
    c->alloc = &c->d.allocator;
    c->joints = cb_skeleton_joint_count(c->d.skeleton);
    c->frames = c->d.frame_count;
    c->points = 2 * c->frames - 1;
    c->parents = cb_skeleton_parents(c->d.skeleton);
    c->bound = c->d.max_error_m;
    c->shell = c->d.shell_distance_m;
}

/* The best candidate so far: its size, key count and error, with its fields and integers kept
 * in copies (size 0 while none is feasible). */
typedef struct best {
    cb_cclip_field *field;
    uint32_t *q;
    size_t field_bytes, q_bytes;
    size_t size, keys;
    double error;
} best;

static bool best_alloc(const ctx *c, best *b)
{
    const size_t n = c->joints;
    *b = (best){.field_bytes = n * CB_CCLIP_COMPONENTS * sizeof(cb_cclip_field),
                .q_bytes = c->frames * n * CB_CCLIP_COMPONENTS * sizeof(uint32_t)};
    b->field = cb_alloc(c->alloc, b->field_bytes, _Alignof(cb_cclip_field));
    b->q = cb_alloc(c->alloc, b->q_bytes, _Alignof(uint32_t));
    return b->field != NULL && b->q != NULL;
}

static void best_free(const cb_allocator *a, best *b)
{
    cb_free(a, b->field, b->field_bytes);
    cb_free(a, b->q, b->q_bytes);
}

/* Steps 1-4 at each candidate key rate (the source's alone with CB_CCLIP_KEYS_SOURCE), the
 * smallest feasible result kept in *b. */
static void search_rates(ctx *c, best *b, cb_cclip_compress_stats *st)
{
    size_t tried_last = 0;
    const int rates = c->d.keys == CB_CCLIP_KEYS_SOURCE ? 1 : 64;
    for (int i = 0; i < rates; ++i) {
        size_t keys = candidate_keys(c->frames, i);
        if (keys == 0) {
            break;
        }
        if (keys == tried_last) {
            continue;
        }
        tried_last = keys;
        c->keys = keys;
        st->candidates++;
        size_t size = search(c);
        if (size == 0) {
            continue;
        }
        st->feasible++;
        if (b->size == 0 || size < b->size) {
            size_t w;
            b->size = size;
            b->keys = keys;
            b->error = max_error(c, &w);
            memcpy(b->field, c->field, b->field_bytes);
            memcpy(b->q, c->q, keys * c->joints * CB_CCLIP_COMPONENTS * sizeof(uint32_t));
        }
    }
}

/* The stored form's header for the best candidate (without its root track). */
static cb_cclip_parsed best_header(const ctx *c, const best *b)
{
    return (cb_cclip_parsed){
        .version = CB_CCLIP_STREAM_VERSION,
        .joint_count = (uint32_t)c->joints,
        .source_frames = (uint32_t)c->frames,
        .keys = (uint32_t)b->keys,
        .additive = c->d.additive,
        .max_error_m = c->d.max_error_m,
        .shell_distance_m = c->d.shell_distance_m,
        .measured_error_m = (float)b->error,
        .signature = cb_skeleton_signature(c->d.skeleton),
        .exponent = {(int8_t)c->exponent[0], 0, (int8_t)c->exponent[2]},
    };
}

/* The best candidate's stored form, with the root track compressed when the desc has one, in
 * a new buffer of *bytes (*stream). */
static cb_result write_best(const ctx *c, const best *b, cb_cclip_compress_stats *st,
                            unsigned char **stream, size_t *bytes, cb_error *err)
{
    cb_cclip_parsed h = best_header(c, b);
    unsigned char *root = NULL;
    if (c->d.root_track.ptr != NULL) {
        double pos_err, yaw_err;
        cb_result r = cb_cclip_root_compress(c->d.root_track.ptr, (uint32_t)c->frames,
                                             c->d.max_error_m, c->d.shell_distance_m, c->alloc,
                                             &root, &h.root_bytes, &pos_err, &yaw_err, err);
        if (r != CB_OK) {
            return r;
        }
        h.root = root;
        st->root_pos_error_m = pos_err;
        st->root_yaw_error_rad = yaw_err;
    }
    array_q aq = {b->q, c->joints};
    *bytes = cb_cclip_write_stream(&h, b->field, get_array_q, &aq, NULL);
    *stream = cb_alloc(c->alloc, *bytes, 8);
    if (*stream == NULL) {
        cb_free(c->alloc, root, h.root_bytes);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_cclip_create: %zu bytes", *bytes);
    }
    cb_cclip_write_stream(&h, b->field, get_array_q, &aq, *stream);
    cb_free(c->alloc, root, h.root_bytes);
    return CB_OK;
}

cb_result cb_cclip_create_ex(const cb_cclip_desc *desc, const cb_cclip_options *options,
                             cb_cclip **out, cb_cclip_compress_stats *stats, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_cclip_create: %s is NULL",
                            desc == NULL ? "desc" : "out");
    }
    double t0 = now_s();
    ctx c = {.d = cb_cclip_query_desc(desc)};
    cb_result r = validate(&c.d, err);
    if (r != CB_OK) {
        return r;
    }
    ctx_init(&c, options);
    if (!ctx_alloc(&c)) {
        ctx_free(&c);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_cclip_create: working memory");
    }
    prepare_source(&c);
    best b;
    if (!best_alloc(&c, &b)) {
        best_free(c.alloc, &b);
        ctx_free(&c);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_cclip_create: working memory");
    }
    cb_cclip_compress_stats st = {0};
    search_rates(&c, &b, &st);
    st.fixup_steps = c.fixups;
    st.trim_steps = c.trims;
    ctx_free(&c);
    if (b.size == 0) {
        /* At the source rate the finest level reproduces every key to float precision, so this
         * only happens for bounds near float rounding. */
        best_free(c.alloc, &b);
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_cclip_create: max_error_m %g cannot be met even with %d-bit "
                            "fields at the source rate",
                            (double)c.d.max_error_m, CB_CCLIP_MAX_BITS);
    }
    unsigned char *stream = NULL;
    size_t bytes = 0;
    r = write_best(&c, &b, &st, &stream, &bytes, err);
    best_free(c.alloc, &b);
    if (r != CB_OK) {
        return r;
    }
    cb_cclip_parsed p;
    r = cb_cclip_parse(c.d.skeleton, stream, bytes, &p, err);
    if (r == CB_OK) {
        r = cb_cclip_build(&p, c.d.skeleton, &c.d.allocator, out, err);
    }
    cb_free(c.alloc, stream, bytes);
    st.chosen_keys = (uint32_t)b.keys;
    st.seconds = now_s() - t0;
    if (stats != NULL) {
        *stats = st;
    }
    return r;
}

cb_result cb_cclip_create(const cb_cclip_desc *desc, cb_cclip **out, cb_error *err)
{
    return cb_cclip_create_ex(desc, NULL, out, NULL, err);
}
