#include "anim_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- allocators ---------------------------------------------------------------------------- */

void *cb_test_counting_alloc(size_t size, size_t align, void *user)
{
    cb_test_counter *c = user;
    void *p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p != NULL && c != NULL) {
        c->allocs++;
        c->live_bytes += (long long)size;
    }
    return p;
}

void cb_test_counting_free(void *ptr, size_t size, void *user)
{
    cb_test_counter *c = user;
    if (c != NULL) {
        c->frees++;
        c->live_bytes -= (long long)size;
    }
    free(ptr);
}

cb_allocator cb_test_counting_allocator(cb_test_counter *c)
{
    return (cb_allocator){cb_test_counting_alloc, cb_test_counting_free, c};
}

static void *failing_alloc(size_t size, size_t align, void *user)
{
    (void)size, (void)align, (void)user;
    return NULL;
}

cb_allocator cb_test_failing_allocator(void)
{
    return (cb_allocator){failing_alloc, cb_test_counting_free, NULL};
}

static void *fail_at_alloc(size_t size, size_t align, void *user)
{
    cb_test_failing_nth *f = user;
    return f->calls++ == f->fail_at ? NULL : cb_test_counting_alloc(size, align, &f->count);
}

static void fail_at_free(void *ptr, size_t size, void *user)
{
    cb_test_counting_free(ptr, size, &((cb_test_failing_nth *)user)->count);
}

cb_allocator cb_test_failing_nth_allocator(cb_test_failing_nth *f)
{
    return (cb_allocator){fail_at_alloc, fail_at_free, f};
}

/* ---- clips --------------------------------------------------------------------------------- */

cb_clip *cb_test_clip_create(const cb_clip_desc *d)
{
    cb_clip *c = NULL;
    cb_error err = {0};
    cb_result r = cb_clip_create(d, &c, &err);
    CB_CHECK(r == CB_OK, "clip create: %s", err.message);
    return c;
}

void cb_test_expect_clip_error(const cb_clip_desc *d, cb_result want, const char *needle)
{
    cb_clip *c = (cb_clip *)(uintptr_t)0x1;
    cb_error err = {0};
    cb_result r = cb_clip_create(d, &c, &err);
    CB_CHECK(r == want, "gave %s, expected %s (%s)", cb_result_str(r), cb_result_str(want),
             err.message);
    CB_CHECK(c == (cb_clip *)(uintptr_t)0x1, "out written on failure");
    CB_CHECK(err.code == want, "err.code is %s", cb_result_str(err.code));
    CB_CHECK(needle == NULL || strstr(err.message, needle) != NULL,
             "message \"%s\" does not name \"%s\"", err.message, needle);
}

/* ---- data ---------------------------------------------------------------------------------- */

cb_xform cb_test_random_xform(cb_prng *r, float range)
{
    cb_xform x = cb_xform_identity();
    cb_prng_unit_quat(r, x.rotation);
    for (int k = 0; k < 3; ++k) {
        x.translation[k] = cb_prng_range(r, -range, range);
    }
    return x;
}

cb_xform_group *cb_test_pose_alloc(const cb_skeleton *s, bool fill_nan)
{
    size_t align = cb_simd_group_align(), bytes = cb_skeleton_pose_bytes(s);
    float *p = aligned_alloc(align, (bytes + align - 1) / align * align);
    assert_non_null(p);
    for (size_t i = 0; i < bytes / sizeof(float); ++i) {
        p[i] = fill_nan ? NAN : 0.0f;
    }
    return (cb_xform_group *)p;
}

cb_skeleton *cb_test_random_skeleton(cb_prng *r, size_t n, bool scaled, bool uniform)
{
    char(*names)[24] = calloc(n, sizeof *names);
    const char **ptrs = calloc(n, sizeof *ptrs);
    int32_t *parents = calloc(n, sizeof *parents);
    cb_xform *rest = calloc(n, sizeof *rest);
    for (size_t j = 0; j < n; ++j) {
        snprintf(names[j], sizeof names[j], "j%zu", j);
        ptrs[j] = names[j];
        parents[j] = j == 0                    ? -1
                     : cb_prng_below(r, 3) > 0 ? (int32_t)j - 1
                                               : (int32_t)cb_prng_below(r, (uint32_t)j);
        rest[j] = cb_test_random_xform(r, 0.3f);
        float s = cb_prng_range(r, 0.8f, 1.25f);
        for (int k = 0; k < 3; ++k) {
            rest[j].scale[k] = !scaled ? 1.0f : uniform ? s : cb_prng_range(r, 0.8f, 1.25f);
        }
    }
    cb_skeleton_desc d = {.joint_count = n, .names = ptrs, .parents = parents, .rest_pose = rest};
    cb_skeleton *s = NULL;
    cb_error err = {0};
    cb_result res = cb_skeleton_create(&d, &s, &err);
    CB_CHECK(res == CB_OK, "random skeleton: %s", err.message);
    free(names), free(ptrs), free(parents), free(rest);
    return s;
}

cb_test_tracks cb_test_random_tracks(cb_prng *r, const cb_skeleton *s, float duration,
                                     size_t animated, bool scale, float max_angle)
{
    size_t n = cb_skeleton_joint_count(s);
    if (animated > n) {
        animated = n;
    }
    size_t per = scale ? 3 : 2;
    size_t max_keys = 12;
    cb_test_tracks t = {0};
    t.duration = duration;
    t.count = animated * per;
    size_t bytes = t.count * sizeof(cb_clip_track) + t.count * max_keys * 5 * sizeof(float);
    t.memory = calloc(1, bytes);
    t.tracks = t.memory;
    float *floats = (float *)(t.tracks + t.count);
    /* Pick `animated` distinct joints: a random permutation prefix. */
    size_t *order = malloc(n * sizeof *order);
    for (size_t j = 0; j < n; ++j) {
        order[j] = j;
    }
    for (size_t j = n - 1; j > 0; --j) {
        size_t k = cb_prng_below(r, (uint32_t)(j + 1));
        size_t tmp = order[j];
        order[j] = order[k], order[k] = tmp;
    }
    size_t ti = 0;
    for (size_t a = 0; a < animated; ++a) {
        size_t j = order[a];
        cb_xform rest = cb_skeleton_rest_xform(s, j);
        for (size_t c = 0; c < per; ++c) {
            cb_clip_track *tr = &t.tracks[ti++];
            size_t keys = 1 + cb_prng_below(r, (uint32_t)max_keys);
            float *times = floats, *values = floats + max_keys;
            floats += max_keys * 5;
            /* Increasing times: sorted uniforms, nudged apart. */
            for (size_t k = 0; k < keys; ++k) {
                times[k] = cb_prng_range(r, 0.0f, duration);
            }
            for (size_t k = 1; k < keys; ++k) {
                for (size_t m = k; m > 0 && times[m - 1] > times[m]; --m) {
                    float tmp = times[m];
                    times[m] = times[m - 1], times[m - 1] = tmp;
                }
            }
            for (size_t k = 1; k < keys; ++k) {
                if (!(times[k] > times[k - 1])) {
                    times[k] = nextafterf(times[k - 1], INFINITY);
                }
            }
            if (times[keys - 1] > duration) {
                keys = 1; /* pathological draw; a single key is still a valid track */
                times[0] = 0.5f * duration;
            }
            if (cb_prng_below(r, 4) == 0) {
                times[0] = 0.0f; /* sometimes keys at the very ends */
                if (keys > 1) {
                    times[keys - 1] = duration;
                }
            }
            cb_channel ch = c == 0   ? CB_CHANNEL_TRANSLATION
                            : c == 1 ? CB_CHANNEL_ROTATION
                                     : CB_CHANNEL_SCALE;
            for (size_t k = 0; k < keys; ++k) {
                if (ch == CB_CHANNEL_ROTATION) {
                    /* Rest rotation turned by up to max_angle; random sign (q and -q). */
                    float axis[3] = {cb_prng_range(r, -1, 1), cb_prng_range(r, -1, 1),
                                     cb_prng_range(r, -1, 1)};
                    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
                    double ang = cb_prng_range(r, 0.0f, max_angle);
                    double d[4] = {axis[0] / len * sin(ang / 2), axis[1] / len * sin(ang / 2),
                                   axis[2] / len * sin(ang / 2), cos(ang / 2)};
                    double rq[4] = {rest.rotation[0], rest.rotation[1], rest.rotation[2],
                                    rest.rotation[3]};
                    double q[4];
                    dref_quat_mul(rq, d, q);
                    double sign = cb_prng_below(r, 2) ? -1.0 : 1.0;
                    double len_k = cb_prng_range(r, 0.5f, 2.0f); /* keys need not be unit */
                    for (int e = 0; e < 4; ++e) {
                        values[4 * k + e] = (float)(sign * len_k * q[e]);
                    }
                } else if (ch == CB_CHANNEL_TRANSLATION) {
                    for (int e = 0; e < 3; ++e) {
                        values[3 * k + e] = rest.translation[e] + cb_prng_range(r, -0.2f, 0.2f);
                    }
                } else {
                    for (int e = 0; e < 3; ++e) {
                        values[3 * k + e] = cb_prng_range(r, 0.7f, 1.4f);
                    }
                }
            }
            *tr = (cb_clip_track){.joint = (uint32_t)j,
                                  .channel = ch,
                                  .key_count = keys,
                                  .times = times,
                                  .values = values};
        }
    }
    free(order);
    return t;
}

void cb_test_tracks_free(cb_test_tracks *t)
{
    free(t->memory);
    *t = (cb_test_tracks){0};
}

/* ---- double reference ---------------------------------------------------------------------- */

void dref_quat_mul(const double a[4], const double b[4], double out[4])
{
    double r[4] = {
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    };
    memcpy(out, r, sizeof r);
}

void dref_quat_normalize(double q[4])
{
    double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(l > 1e-15)) {
        q[0] = q[1] = q[2] = 0.0, q[3] = 1.0;
        return;
    }
    for (int k = 0; k < 4; ++k) {
        q[k] /= l;
    }
}

static double qdot(const double a[4], const double b[4])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

void dref_quat_slerp(const double a[4], const double b[4], double t, double out[4])
{
    double bb[4] = {b[0], b[1], b[2], b[3]};
    double d = qdot(a, bb);
    if (d < 0.0) {
        for (int k = 0; k < 4; ++k) {
            bb[k] = -bb[k];
        }
        d = -d;
    }
    double th = acos(d > 1.0 ? 1.0 : d);
    double wa = 1.0 - t, wb = t;
    if (th > 1e-12) {
        wa = sin((1.0 - t) * th) / sin(th);
        wb = sin(t * th) / sin(th);
    }
    for (int k = 0; k < 4; ++k) {
        out[k] = wa * a[k] + wb * bb[k];
    }
    dref_quat_normalize(out);
}

static dref_xform from_cb_xform(cb_xform x)
{
    dref_xform d;
    for (int k = 0; k < 3; ++k) {
        d.t[k] = x.translation[k];
        d.s[k] = x.scale[k];
    }
    for (int k = 0; k < 4; ++k) {
        d.q[k] = x.rotation[k];
    }
    dref_quat_normalize(d.q);
    return d;
}

static void key_at(const cb_clip_track *tr, size_t k, double v[4])
{
    size_t w = tr->channel == CB_CHANNEL_ROTATION ? 4 : 3;
    for (size_t e = 0; e < w; ++e) {
        v[e] = tr->values[k * w + e];
    }
    if (w == 4) {
        dref_quat_normalize(v);
    }
}

static void mix_keys(const cb_clip_track *tr, size_t a, size_t b, double u, double v[4])
{
    double va[4], vb[4];
    key_at(tr, a, va);
    key_at(tr, b, vb);
    if (tr->channel == CB_CHANNEL_ROTATION) {
        dref_quat_slerp(va, vb, u, v);
    } else {
        for (int e = 0; e < 3; ++e) {
            v[e] = va[e] * (1.0 - u) + vb[e] * u;
        }
    }
}

/* A plain linear scan (the library bisects). */
static void track_value(const cb_clip_track *tr, double dur, bool loop, double tau, double v[4])
{
    size_t n = tr->key_count;
    double first = tr->times[0], last = tr->times[n - 1];
    if (n == 1 || tau == first || tau == last) {
        key_at(tr, n == 1 || tau == first ? 0 : n - 1, v);
        return;
    }
    if (tau < first || tau > last) {
        double gap = first + dur - last;
        if (!loop || gap <= 0.0) {
            key_at(tr, tau < first ? 0 : n - 1, v);
            return;
        }
        double since = tau > last ? tau - last : tau + dur - last;
        mix_keys(tr, n - 1, 0, since / gap, v);
        return;
    }
    for (size_t k = 0; k + 1 < n; ++k) {
        if (tau >= tr->times[k] && tau <= tr->times[k + 1]) {
            mix_keys(tr, k, k + 1, (tau - tr->times[k]) / (tr->times[k + 1] - tr->times[k]), v);
            return;
        }
    }
}

dref_clip dref_clip_build(const cb_clip_desc *desc)
{
    const cb_skeleton *s = desc->skeleton;
    size_t n = cb_skeleton_joint_count(s);
    double rate = desc->sample_rate_hz > 0.0f ? desc->sample_rate_hz : 30.0;
    double dur = desc->duration_s;
    unsigned intervals = (unsigned)floor(dur * rate + 0.5);
    intervals = intervals < 1 ? 1 : intervals;
    dref_clip c = {n, intervals, desc->wrap != CB_CLIP_WRAP_CLAMP,
                   desc->additive == CB_ADDITIVE_FIRST_FRAME ||
                       desc->additive == CB_ADDITIVE_REST_POSE,
                   calloc((intervals + 1) * n, sizeof(dref_xform))};
    for (unsigned f = 0; f <= intervals; ++f) {
        double tau = f == intervals ? dur : dur * f / intervals;
        for (size_t j = 0; j < n; ++j) {
            c.frames[f * n + j] = from_cb_xform(cb_skeleton_rest_xform(s, j));
        }
        for (size_t k = 0; k < desc->track_count; ++k) {
            const cb_clip_track *tr = &desc->tracks[k];
            dref_xform *x = &c.frames[f * n + tr->joint];
            double v[4];
            track_value(tr, dur, c.looping, tau, v);
            double *dst = tr->channel == CB_CHANNEL_TRANSLATION ? x->t
                          : tr->channel == CB_CHANNEL_ROTATION  ? x->q
                                                                : x->s;
            memcpy(dst, v, (tr->channel == CB_CHANNEL_ROTATION ? 4 : 3) * sizeof(double));
        }
    }
    for (size_t j = 0; j < n; ++j) {
        if (c.looping) {
            c.frames[intervals * n + j] = c.frames[j];
        }
        for (unsigned f = 1; f <= intervals; ++f) {
            double *q = c.frames[f * n + j].q, *p = c.frames[(f - 1) * n + j].q;
            if (qdot(p, q) < 0.0) {
                for (int k = 0; k < 4; ++k) {
                    q[k] = -q[k];
                }
            }
        }
    }
    if (c.additive) {
        for (size_t j = 0; j < n; ++j) {
            dref_xform ref = desc->additive == CB_ADDITIVE_FIRST_FRAME
                                 ? c.frames[j]
                                 : from_cb_xform(cb_skeleton_rest_xform(s, j));
            double rc[4] = {-ref.q[0], -ref.q[1], -ref.q[2], ref.q[3]};
            for (unsigned f = 0; f <= intervals; ++f) {
                dref_xform *x = &c.frames[f * n + j];
                dref_quat_mul(rc, x->q, x->q);
                for (int k = 0; k < 3; ++k) {
                    x->t[k] -= ref.t[k];
                    x->s[k] /= ref.s[k];
                }
            }
            if (c.frames[j].q[3] < 0.0) {
                for (unsigned f = 0; f <= intervals; ++f) {
                    for (int k = 0; k < 4; ++k) {
                        c.frames[f * n + j].q[k] = -c.frames[f * n + j].q[k];
                    }
                }
            }
        }
    }
    return c;
}

void dref_clip_free(dref_clip *c)
{
    free(c->frames);
    c->frames = NULL;
}

/* The frame position is computed in float, as the library does: a float time has an ulp of
 * 6e-8 cycles, and rounding t * N to float is an error of the same order, a property of the
 * float input rather than of the arithmetic this reference checks. Everything after it is
 * double. */
void dref_clip_locate(const dref_clip *c, double t, unsigned *i, double *f)
{
    float tf = (float)t;
    tf = c->looping ? tf - floorf(tf) : (tf < 0.0f ? 0.0f : tf > 1.0f ? 1.0f : tf);
    double x = (double)(tf * (float)c->intervals);
    double k = floor(x);
    if (k >= c->intervals) {
        k = c->intervals - 1;
    }
    *i = (unsigned)k;
    *f = x - k;
}

dref_xform dref_clip_sample(const dref_clip *c, double t, size_t j)
{
    unsigned i;
    double f;
    dref_clip_locate(c, t, &i, &f);
    const dref_xform *a = &c->frames[i * c->joints + j], *b = &c->frames[(i + 1) * c->joints + j];
    dref_xform x;
    for (int k = 0; k < 3; ++k) {
        x.t[k] = (1 - f) * a->t[k] + f * b->t[k];
        x.s[k] = (1 - f) * a->s[k] + f * b->s[k];
    }
    for (int k = 0; k < 4; ++k) {
        x.q[k] = (1 - f) * a->q[k] + f * b->q[k];
    }
    return x;
}

/* The first frame's rotation of a sample: the hemisphere reference of the contract. */
static const double *first_frame_q(const dref_clip *c, double t, size_t j)
{
    unsigned i;
    double f;
    dref_clip_locate(c, t, &i, &f);
    return c->frames[i * c->joints + j].q;
}

static cb_blend_mode mode_of(const dref_entry *e)
{
    return e->mode == _CB_BLEND_MODE_DEFAULT ? CB_BLEND_MODE_NORMAL : e->mode;
}

dref_xform dref_blend_joint(const dref_entry *entries, size_t count, const cb_xform *rest, size_t j,
                            double threshold)
{
    double t[3] = {0}, q[4] = {0}, s[3] = {0}, wsum = 0.0;
    for (size_t k = 0; k < count; ++k) {
        const dref_entry *e = &entries[k];
        if (mode_of(e) != CB_BLEND_MODE_NORMAL || e->weight < CB_BLEND_WEIGHT_EPSILON) {
            continue;
        }
        double w = e->weight * (e->mask ? e->mask[j] : 1.0);
        dref_xform x = dref_clip_sample(e->clip, e->time, j);
        double sign = qdot(first_frame_q(e->clip, e->time, j), q) < 0.0 ? -1.0 : 1.0;
        for (int c = 0; c < 3; ++c) {
            t[c] += w * x.t[c];
            s[c] += w * x.s[c];
        }
        for (int c = 0; c < 4; ++c) {
            q[c] += sign * w * x.q[c];
        }
        wsum += w;
    }
    if (wsum < threshold) {
        double wr = threshold - wsum;
        dref_xform r = from_cb_xform(rest[j]);
        double sign = qdot(r.q, q) < 0.0 ? -1.0 : 1.0;
        for (int c = 0; c < 3; ++c) {
            t[c] += wr * r.t[c];
            s[c] += wr * r.s[c];
        }
        for (int c = 0; c < 4; ++c) {
            q[c] += sign * wr * r.q[c];
        }
        wsum = threshold;
    }
    dref_xform out;
    for (int c = 0; c < 3; ++c) {
        out.t[c] = t[c] / wsum;
        out.s[c] = s[c] / wsum;
    }
    memcpy(out.q, q, sizeof q);
    for (size_t k = 0; k < count; ++k) {
        const dref_entry *e = &entries[k];
        if (mode_of(e) != CB_BLEND_MODE_OVERRIDE || e->weight < CB_BLEND_WEIGHT_EPSILON) {
            continue;
        }
        double a = e->weight * (e->mask ? e->mask[j] : 1.0);
        a = a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
        dref_xform x = dref_clip_sample(e->clip, e->time, j);
        dref_quat_normalize(out.q);
        dref_quat_normalize(x.q);
        double sign = qdot(x.q, out.q) < 0.0 ? -1.0 : 1.0;
        for (int c = 0; c < 3; ++c) {
            out.t[c] = (1 - a) * out.t[c] + a * x.t[c];
            out.s[c] = (1 - a) * out.s[c] + a * x.s[c];
        }
        for (int c = 0; c < 4; ++c) {
            out.q[c] = (1 - a) * out.q[c] + a * sign * x.q[c];
        }
    }
    for (size_t k = 0; k < count; ++k) {
        const dref_entry *e = &entries[k];
        if (mode_of(e) != CB_BLEND_MODE_ADDITIVE || e->weight < CB_BLEND_WEIGHT_EPSILON) {
            continue;
        }
        double a = e->weight * (e->mask ? e->mask[j] : 1.0);
        dref_xform x = dref_clip_sample(e->clip, e->time, j);
        double sign = x.q[3] < 0.0 ? -1.0 : 1.0;
        double d[4] = {a * sign * x.q[0], a * sign * x.q[1], a * sign * x.q[2],
                       1.0 + a * (sign * x.q[3] - 1.0)};
        dref_quat_mul(out.q, d, out.q);
        for (int c = 0; c < 3; ++c) {
            out.t[c] += a * x.t[c];
            out.s[c] *= 1.0 + a * (x.s[c] - 1.0);
        }
    }
    dref_quat_normalize(out.q);
    return out;
}

dref_mat dref_mat_from_xform(const dref_xform *x)
{
    const double *q = x->q;
    double n = qdot(q, q);
    double xx = q[0] * q[0] / n, yy = q[1] * q[1] / n, zz = q[2] * q[2] / n;
    double xy = q[0] * q[1] / n, xz = q[0] * q[2] / n, yz = q[1] * q[2] / n;
    double wx = q[3] * q[0] / n, wy = q[3] * q[1] / n, wz = q[3] * q[2] / n;
    dref_mat m = {{{0}}};
    double r[3][3] = {{1 - 2 * (yy + zz), 2 * (xy + wz), 2 * (xz - wy)},
                      {2 * (xy - wz), 1 - 2 * (xx + zz), 2 * (yz + wx)},
                      {2 * (xz + wy), 2 * (yz - wx), 1 - 2 * (xx + yy)}};
    for (int c = 0; c < 3; ++c) {
        for (int i = 0; i < 3; ++i) {
            m.m[c][i] = r[c][i] * x->s[c];
        }
        m.m[3][c] = x->t[c];
    }
    m.m[3][3] = 1.0;
    return m;
}

dref_mat dref_mat_mul(const dref_mat *a, const dref_mat *b)
{
    dref_mat r;
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            double v = 0.0;
            for (int k = 0; k < 4; ++k) {
                v += a->m[k][i] * b->m[c][k];
            }
            r.m[c][i] = v;
        }
    }
    return r;
}

void dref_local_to_model(const int32_t *parents, size_t n, const dref_xform *local, dref_mat *model)
{
    for (size_t j = 0; j < n; ++j) {
        dref_mat l = dref_mat_from_xform(&local[j]);
        model[j] = parents[j] < 0 ? l : dref_mat_mul(&model[parents[j]], &l);
    }
}

dref_xform dref_from_pose(const cb_xform_group *pose, size_t j)
{
    size_t w = cb_simd_width();
    const float *g = (const float *)pose + (j / w) * 10 * w;
    size_t l = j % w;
    dref_xform x;
    for (int k = 0; k < 3; ++k) {
        x.t[k] = g[k * w + l];
        x.s[k] = g[(7 + k) * w + l];
    }
    for (int k = 0; k < 4; ++k) {
        x.q[k] = g[(3 + k) * w + l];
    }
    return x;
}

double dref_rotation_error(const dref_mat *a, const float *m4)
{
    /* Normalize the columns (remove scale), then the angle of Ra^T Rb from its skew part. */
    double ra[3][3], rb[3][3];
    for (int c = 0; c < 3; ++c) {
        double la = 0, lb = 0;
        for (int i = 0; i < 3; ++i) {
            la += a->m[c][i] * a->m[c][i];
            lb += (double)m4[4 * c + i] * m4[4 * c + i];
        }
        la = sqrt(la), lb = sqrt(lb);
        for (int i = 0; i < 3; ++i) {
            ra[c][i] = a->m[c][i] / la;
            rb[c][i] = m4[4 * c + i] / lb;
        }
    }
    /* m = Ra^T Rb: m[i][k] = dot(column i of Ra, column k of Rb). */
    double m[3][3];
    for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 3; ++k) {
            m[i][k] = ra[i][0] * rb[k][0] + ra[i][1] * rb[k][1] + ra[i][2] * rb[k][2];
        }
    }
    double wx = 0.5 * (m[1][2] - m[2][1]), wy = 0.5 * (m[2][0] - m[0][2]),
           wz = 0.5 * (m[0][1] - m[1][0]);
    double sin_a = sqrt(wx * wx + wy * wy + wz * wz);
    double cos_a = 0.5 * (m[0][0] + m[1][1] + m[2][2] - 1.0);
    return atan2(sin_a, cos_a);
}

void dref_model_of_pose(const cb_skeleton *s, const cb_xform_group *pose, dref_mat *model)
{
    size_t n = cb_skeleton_joint_count(s);
    dref_xform *local = malloc(n * sizeof *local);
    for (size_t j = 0; j < n; ++j) {
        local[j] = dref_from_pose(pose, j);
    }
    dref_local_to_model(cb_skeleton_parents(s), n, local, model);
    free(local);
}

uint32_t cb_test_joint(const cb_skeleton *s, const char *name)
{
    uint32_t j = 0;
    CB_CHECK(cb_skeleton_find_joint(s, name, &j) == CB_OK, "no joint %s", name);
    return j;
}

void cb_test_clip_pose(const cb_skeleton *s, const cb_clip *clip, float t, cb_xform_group *pose)
{
    cb_blend_entry e = {clip, t, 1.0f, CB_BLEND_MODE_NORMAL, {NULL, 0}};
    cb_pose_blend_job job = {s, {&e, 1}, 0.0f, {pose, cb_skeleton_group_count(s)}};
    assert_int_equal(cb_pose_blend_job_run(&job, NULL), CB_OK);
}

cb_graph_json_desc cb_test_embedded_json_desc(const cb_embedded *set, const cb_clip **clips,
                                              uint32_t max)
{
    uint32_t count = cb_embedded_clip_count(set);
    count = count < max ? count : max;
    for (uint32_t k = 0; k < count; ++k) {
        clips[k] = cb_embedded_clip(set, k);
    }
    return (cb_graph_json_desc){
        .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = count};
}

cb_graph_builder *cb_test_two_clip_blend(const cb_skeleton *skeleton, const cb_clip *clips[2],
                                         cb_graph_node kids[2], cb_graph_blend_space_desc *d)
{
    static const float positions[2] = {0.0f, 1.4f};
    cb_graph_builder_desc bd = {.skeleton = skeleton, .clips = clips, .clip_count = 2};
    cb_graph_builder *b = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_builder_create(&bd, &b, &err) == CB_OK, "%s", err.message);
    CB_CHECK(cb_graph_add_param(b, "cmd", CB_PARAM_FLOAT, 0.0f, &err) == CB_OK, "%s", err.message);
    for (int k = 0; k < 2; ++k) {
        cb_graph_clip_desc cd = {.clip = cb_clip_name(clips[k])};
        CB_CHECK(cb_graph_add_clip(b, &cd, &kids[k], &err) == CB_OK, "%s", err.message);
    }
    *d = (cb_graph_blend_space_desc){
        .name = "loco",
        .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
        .params = {"cmd"},
        .children = kids,
        .positions = positions,
        .child_count = 2,
        .rate_warp = {.speed_param = "cmd"},
    };
    return b;
}

void cb_test_expect_embedded_json_error(const cb_embedded *set, const char *doc, cb_result want,
                                        const char *needle, const char *label)
{
    const cb_clip *clips[64];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(set, clips, 64);
    cb_graph *g = NULL;
    cb_error err = {0};
    cb_result r = cb_graph_load_json(doc, strlen(doc), &jd, &g, &err);
    CB_CHECK(r == want, "%s: %s, want %s (%s)", label, cb_result_str(r), cb_result_str(want),
             err.message);
    CB_CHECK(strstr(err.message, needle) != NULL && strstr(err.message, "graph:1:") != NULL,
             "%s: message '%s' lacks '%s' or the step's place", label, err.message, needle);
    printf("# %s\n", err.message);
    assert_null(g);
}

cb_test_fmat cb_test_fmat_local(const cb_xform_group *pose, uint32_t j)
{
    dref_xform d = dref_from_pose(pose, j); /* floats held exactly in double */
    float x = (float)d.q[0], y = (float)d.q[1], z = (float)d.q[2], w = (float)d.q[3];
    float x2 = x + x, y2 = y + y, z2 = z + z;
    float xx = x * x2, yy = y * y2, zz = z * z2, xy = x * y2, xz = x * z2, yz = y * z2;
    float wx = w * x2, wy = w * y2, wz = w * z2;
    float sx = (float)d.s[0], sy = (float)d.s[1], sz = (float)d.s[2];
    cb_test_fmat m = {{{(1.0f - (yy + zz)) * sx, (xy + wz) * sx, (xz - wy) * sx},
                       {(xy - wz) * sy, (1.0f - (xx + zz)) * sy, (yz + wx) * sy},
                       {(xz + wy) * sz, (yz - wx) * sz, (1.0f - (xx + yy)) * sz},
                       {(float)d.t[0], (float)d.t[1], (float)d.t[2]}}};
    return m;
}

cb_test_fmat cb_test_fmat_mul(const cb_test_fmat *a, const cb_test_fmat *b)
{
    cb_test_fmat r;
    for (int k = 0; k < 4; ++k) {
        for (int i = 0; i < 3; ++i) {
            float v = a->c[0][i] * b->c[k][0] + a->c[1][i] * b->c[k][1] + a->c[2][i] * b->c[k][2];
            r.c[k][i] = k == 3 ? v + a->c[3][i] : v;
        }
    }
    return r;
}

cb_test_fmat cb_test_fmat_path(const cb_skeleton *s, const cb_xform_group *pose, uint32_t j,
                               int32_t stop)
{
    const int32_t *parents = cb_skeleton_parents(s);
    cb_test_fmat acc = cb_test_fmat_local(pose, j);
    for (int32_t p = parents[j]; p != stop; p = parents[p]) {
        cb_test_fmat parent = cb_test_fmat_local(pose, (uint32_t)p);
        acc = cb_test_fmat_mul(&parent, &acc);
    }
    return acc;
}

void cb_test_hinge_reach(const double u[3], const double l[3], const double n[3], double *dmin,
                         double *dmax)
{
    double nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), un = 0.0, ln = 0.0, p = 0.0, q = 0.0;
    for (int c = 0; c < 3; ++c) {
        un += u[c] * n[c] / nl, ln += l[c] * n[c] / nl;
    }
    for (int c = 0; c < 3; ++c) {
        p += (u[c] - un * n[c] / nl) * (u[c] - un * n[c] / nl);
        q += (l[c] - ln * n[c] / nl) * (l[c] - ln * n[c] / nl);
    }
    p = sqrt(p), q = sqrt(q);
    *dmax = sqrt((un + ln) * (un + ln) + (p + q) * (p + q));
    *dmin = sqrt((un + ln) * (un + ln) + (p - q) * (p - q));
}
