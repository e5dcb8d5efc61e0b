/* Scalar references of the blend and local-to-model jobs: the same contracts, written one joint
 * and one float at a time as anyone would without SIMD. They are the baseline of the benchmark
 * ratios (bench/bench_anim.c) and the second path of the equivalence tests. meson compiles this
 * file with auto-vectorization off, so "scalar" stays scalar. */
#include <math.h>
#include <string.h>

#include "anim/anim_impl.h"
#include "simd/soa.h" /* CB_QUAT_MIN_LENGTH_SQ only */

static const size_t W = CB_SIMD_WIDTH;

/* Component k of lane l in a group-shaped float array (joint groups and clip frames alike). */
static float get(const float *group, int k, size_t l)
{
    return group[(size_t)k * W + l];
}

static void normalize4(float q[4])
{
    float len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (!(len2 >= CB_QUAT_MIN_LENGTH_SQ) || !(len2 < INFINITY)) {
        q[0] = q[1] = q[2] = 0.0f;
        q[3] = 1.0f;
        return;
    }
    float inv = 1.0f / sqrtf(len2);
    for (int k = 0; k < 4; ++k) {
        q[k] *= inv;
    }
}

static float dot4(const float a[4], const float b[4])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

typedef struct jsample {
    float t[3], q[4], ds[3];
    float qa[4]; /* the first frame's rotation, for the hemisphere test */
} jsample;

/* One clip's sample of joint j, not normalized, with the weight w folded into the lerp weights
 * as the SIMD job does: w - w f on frame i, w f on frame i + 1. */
static jsample sample_joint(const struct cb_clip *c, float time, size_t j, float w)
{
    uint32_t i;
    float f;
    cb_clip_locate(c, time, &i, &f);
    const float *a = cb_clip_group_ptr(c, i, j / W), *b = a + cb_clip_frame_floats(c);
    size_t l = j % W;
    float wb = w * f, wa = w - wb;
    jsample s;
    for (int k = 0; k < 3; ++k) {
        s.t[k] = wa * get(a, CB_CLIP_T + k, l) + wb * get(b, CB_CLIP_T + k, l);
        s.ds[k] =
            c->has_scale ? wa * get(a, CB_CLIP_S + k, l) + wb * get(b, CB_CLIP_S + k, l) : 0.0f;
    }
    for (int k = 0; k < 4; ++k) {
        s.qa[k] = get(a, CB_CLIP_Q + k, l);
        s.q[k] = wa * s.qa[k] + wb * get(b, CB_CLIP_Q + k, l);
    }
    return s;
}

static bool active(const cb_blend_entry *e, cb_blend_mode mode)
{
    cb_blend_mode m = e->mode == _CB_BLEND_MODE_DEFAULT ? CB_BLEND_MODE_NORMAL : e->mode;
    return m == mode && e->weight >= CB_BLEND_WEIGHT_EPSILON;
}

static float entry_weight(const cb_blend_entry *e, size_t j)
{
    return e->mask.ptr != NULL ? e->weight * e->mask.ptr[j] : e->weight;
}

static void put_joint(cb_xform_group *out, size_t j, const float t[3], const float q[4],
                      const float s[3])
{
    float *g = (float *)&out[j / W];
    size_t l = j % W;
    for (int k = 0; k < 3; ++k) {
        g[(size_t)k * W + l] = t[k];
        g[(size_t)(7 + k) * W + l] = s[k];
    }
    for (int k = 0; k < 4; ++k) {
        g[(size_t)(3 + k) * W + l] = q[k];
    }
}

static void blend_joint(const cb_pose_blend_job *job, size_t j, float threshold)
{
    const cb_blend_entry *entries = job->entries.ptr;
    const size_t count = job->entries.count;
    float t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 0}, ds[3] = {0, 0, 0}, wsum = 0.0f;
    for (size_t k = 0; k < count; ++k) {
        const cb_blend_entry *e = &entries[k];
        if (!active(e, CB_BLEND_MODE_NORMAL)) {
            continue;
        }
        float w = entry_weight(e, j);
        jsample s = sample_joint(e->clip, e->time, j, w);
        /* The hemisphere test uses the first frame of the pair, as the SIMD job. */
        float sign = dot4(s.qa, q) < 0.0f ? -1.0f : 1.0f;
        for (int c = 0; c < 3; ++c) {
            t[c] += s.t[c];
            ds[c] += s.ds[c];
        }
        for (int c = 0; c < 4; ++c) {
            q[c] += sign * s.q[c];
        }
        wsum += w;
    }
    float wr = threshold - wsum;
    if (wr > 0.0f) {
        cb_xform r = cb_skeleton_rest_xform(job->skeleton, j);
        float sign = dot4(r.rotation, q) < 0.0f ? -1.0f : 1.0f;
        for (int c = 0; c < 3; ++c) {
            t[c] += wr * r.translation[c];
            ds[c] += wr * (r.scale[c] - 1.0f);
        }
        for (int c = 0; c < 4; ++c) {
            q[c] += wr * sign * r.rotation[c];
        }
        wsum += wr;
    }
    float inv = 1.0f / wsum, s[3];
    for (int c = 0; c < 3; ++c) {
        t[c] *= inv;
        s[c] = 1.0f + ds[c] * inv;
    }
    for (size_t k = 0; k < count; ++k) {
        const cb_blend_entry *e = &entries[k];
        if (!active(e, CB_BLEND_MODE_OVERRIDE)) {
            continue;
        }
        float a = entry_weight(e, j);
        a = !(a > 0.0f) ? 0.0f : a > 1.0f ? 1.0f : a;
        jsample x = sample_joint(e->clip, e->time, j, 1.0f);
        normalize4(q);
        normalize4(x.q);
        float sign = dot4(x.q, q) < 0.0f ? -1.0f : 1.0f;
        for (int c = 0; c < 3; ++c) {
            t[c] = (1.0f - a) * t[c] + a * x.t[c];
            s[c] = (1.0f - a) * s[c] + a * (1.0f + x.ds[c]);
        }
        for (int c = 0; c < 4; ++c) {
            q[c] = (1.0f - a) * q[c] + a * sign * x.q[c];
        }
    }
    for (size_t k = 0; k < count; ++k) {
        const cb_blend_entry *e = &entries[k];
        if (!active(e, CB_BLEND_MODE_ADDITIVE)) {
            continue;
        }
        float a = entry_weight(e, j);
        jsample x = sample_joint(e->clip, e->time, j, 1.0f);
        float sign = x.q[3] < 0.0f ? -1.0f : 1.0f;
        float d[4] = {a * sign * x.q[0], a * sign * x.q[1], a * sign * x.q[2],
                      1.0f + a * (sign * x.q[3] - 1.0f)};
        float r[4] = {
            q[3] * d[0] + q[0] * d[3] + q[1] * d[2] - q[2] * d[1],
            q[3] * d[1] - q[0] * d[2] + q[1] * d[3] + q[2] * d[0],
            q[3] * d[2] + q[0] * d[1] - q[1] * d[0] + q[2] * d[3],
            q[3] * d[3] - q[0] * d[0] - q[1] * d[1] - q[2] * d[2],
        };
        memcpy(q, r, sizeof r);
        for (int c = 0; c < 3; ++c) {
            t[c] += a * x.t[c];
            s[c] *= 1.0f + a * x.ds[c];
        }
    }
    normalize4(q);
    put_joint(job->out.ptr, j, t, q, s);
}

static void identity_padding(cb_xform_group *out, size_t joint_count, size_t group_count)
{
    static const float t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
    for (size_t j = joint_count; j < group_count * W; ++j) {
        put_joint(out, j, t, q, s);
    }
}

cb_result cb_pose_blend_job_run_ref(const cb_pose_blend_job *job, cb_error *err)
{
    float threshold;
    cb_result r = cb_pose_blend_check(job, err, &threshold);
    if (r != CB_OK) {
        return r;
    }
    for (size_t j = 0; j < job->skeleton->joint_count; ++j) {
        blend_joint(job, j, threshold);
    }
    identity_padding(job->out.ptr, job->skeleton->joint_count, job->skeleton->group_count);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Local-to-model                                                                             */

/* Column-major 4x4 m[c][r]. */
typedef struct mat4 {
    float m[4][4];
} mat4;

static mat4 local_matrix(const cb_xform_group *local, size_t j)
{
    const float *g = (const float *)&local[j / W];
    size_t l = j % W;
    float qx = get(g, 3, l), qy = get(g, 4, l), qz = get(g, 5, l), qw = get(g, 6, l);
    float sx = get(g, 7, l), sy = get(g, 8, l), sz = get(g, 9, l);
    float x2 = qx + qx, y2 = qy + qy, z2 = qz + qz;
    float xx = qx * x2, yy = qy * y2, zz = qz * z2, xy = qx * y2, xz = qx * z2, yz = qy * z2;
    float wx = qw * x2, wy = qw * y2, wz = qw * z2;
    mat4 r = {{
        {(1.0f - (yy + zz)) * sx, (xy + wz) * sx, (xz - wy) * sx, 0.0f},
        {(xy - wz) * sy, (1.0f - (xx + zz)) * sy, (yz + wx) * sy, 0.0f},
        {(xz + wy) * sz, (yz - wx) * sz, (1.0f - (xx + yy)) * sz, 0.0f},
        {get(g, 0, l), get(g, 1, l), get(g, 2, l), 1.0f},
    }};
    return r;
}

static mat4 mat4_mul(const mat4 *a, const mat4 *b)
{
    mat4 r;
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            float v = 0.0f;
            for (int k = 0; k < 4; ++k) {
                v += a->m[k][i] * b->m[c][k];
            }
            r.m[c][i] = v;
        }
    }
    return r;
}

static mat4 load(const float *p, cb_matrix_layout layout)
{
    mat4 r;
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            if (layout == CB_MATRIX_LAYOUT_MAT3X4) {
                r.m[c][i] = i < 3 ? p[4 * i + c] : (c == 3 ? 1.0f : 0.0f);
            } else {
                r.m[c][i] = p[4 * c + i];
            }
        }
    }
    return r;
}

static void store(float *p, const mat4 *x, cb_matrix_layout layout)
{
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            if (layout == CB_MATRIX_LAYOUT_MAT3X4) {
                if (i < 3) {
                    p[4 * i + c] = x->m[c][i];
                }
            } else {
                p[4 * c + i] = x->m[c][i];
            }
        }
    }
}

cb_result cb_ltm_job_run_ref(const cb_ltm_job *job, cb_error *err)
{
    size_t to;
    cb_result r = cb_ltm_check(job, err, &to);
    if (r != CB_OK) {
        return r;
    }
    const struct cb_skeleton *s = job->skeleton;
    cb_matrix_layout ml = job->model_layout == CB_MATRIX_LAYOUT_MAT3X4 ? CB_MATRIX_LAYOUT_MAT3X4
                                                                       : CB_MATRIX_LAYOUT_MAT4;
    cb_matrix_layout sl = job->skinning_layout == CB_MATRIX_LAYOUT_MAT3X4 ? CB_MATRIX_LAYOUT_MAT3X4
                                                                          : CB_MATRIX_LAYOUT_MAT4;
    size_t mf = cb_ltm_matrix_floats(ml), sf = cb_ltm_matrix_floats(sl);
    if (job->model.ptr != NULL) {
        for (size_t j = job->from; j < to; ++j) {
            mat4 x = local_matrix(job->local.ptr, j);
            int32_t p = s->parents[j];
            if (p >= 0) {
                mat4 pm = load(job->model.ptr + (size_t)p * mf, ml);
                x = mat4_mul(&pm, &x);
            }
            store(job->model.ptr + j * mf, &x, ml);
            if (job->skinning.ptr != NULL) {
                mat4 ib = load(job->inverse_bind.ptr + j * 16, CB_MATRIX_LAYOUT_MAT4);
                mat4 sk = mat4_mul(&x, &ib);
                store(job->skinning.ptr + j * sf, &sk, sl);
            }
        }
    }
    if (job->model_xforms.ptr != NULL) {
        cb_ltm_model_xforms(job, job->from, to);
    }
    return CB_OK;
}
