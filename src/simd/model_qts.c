/* Compact model-space outputs (model_qts.h). Per joint in plain float: the chain allows no
 * parallelism across joints (ltm.c's reasoning), and the quaternion form needs fewer operations
 * than a 3x4 matrix product (16 + 18 multiply-adds against 36); the gain measured in
 * docs/performance.md is in the bytes written, half of a 4x4 matrix or a quarter. */
#include "simd/model_qts.h"

#include <math.h>

#include "simd/soa.h"

/* Joint j of a local pose: rotation, translation, scale x. */
static void local_at(const cb_xform_group *pose, size_t j, float q[4], float t[3], float *s)
{
    const struct cb_xform_group *g = &pose[j / CB_W];
    size_t l = j % CB_W;
    q[0] = g->qx[l], q[1] = g->qy[l], q[2] = g->qz[l], q[3] = g->qw[l];
    t[0] = g->tx[l], t[1] = g->ty[l], t[2] = g->tz[l];
    *s = g->sx[l];
}

/* out = parent composed with (q, t, s): 8 floats. The sums are written as two pairs so that
 * the rotation, which the next joint waits for, is three operations deep instead of four. */
static void compose(const float *p, const float q[4], const float t[3], float s, float *out)
{
    const float px = p[0], py = p[1], pz = p[2], pw = p[3], ps = p[7];
    out[0] = (pw * q[0] + px * q[3]) + (py * q[2] - pz * q[1]);
    out[1] = (pw * q[1] - px * q[2]) + (py * q[3] + pz * q[0]);
    out[2] = (pw * q[2] + px * q[1]) + (pz * q[3] - py * q[0]);
    out[3] = (pw * q[3] - px * q[0]) - (py * q[1] + pz * q[2]);
    /* t_parent + s_parent (v + 2 w (u x v) + 2 u x (u x v)), u the parent's vector part. */
    float v[3] = {ps * t[0], ps * t[1], ps * t[2]};
    float c1[3] = {py * v[2] - pz * v[1], pz * v[0] - px * v[2], px * v[1] - py * v[0]};
    float c2[3] = {py * c1[2] - pz * c1[1], pz * c1[0] - px * c1[2], px * c1[1] - py * c1[0]};
    for (int k = 0; k < 3; ++k) {
        out[4 + k] = p[4 + k] + v[k] + 2.0f * (pw * c1[k] + c2[k]);
    }
    out[7] = ps * s;
}

/* The previous joint's result stays in a local copy: in a depth-first skeleton it is usually
 * the parent, and reading it back from the output would put a store-to-load delay on every
 * link of the chain (ltm.c keeps its previous matrix in registers for the same reason). */
static void chain(const cb_skeleton *skeleton, const cb_xform_group *local, float *out)
{
    const size_t n = cb_skeleton_joint_count(skeleton);
    const int32_t *parents = cb_skeleton_parents(skeleton);
    float prev[8] = {0, 0, 0, 1, 0, 0, 0, 1};
    for (size_t j = 0; j < n; ++j) {
        float q[4], t[3], s, o[8];
        local_at(local, j, q, t, &s);
        int32_t p = parents[j];
        if (p < 0) {
            o[0] = q[0], o[1] = q[1], o[2] = q[2], o[3] = q[3];
            o[4] = t[0], o[5] = t[1], o[6] = t[2], o[7] = s;
        } else {
            compose((size_t)p + 1 == j ? prev : out + (size_t)p * 8, q, t, s, o);
        }
        for (int k = 0; k < 8; ++k) {
            out[j * 8 + k] = prev[k] = o[k];
        }
    }
}

void cb_model_qts_run(const cb_skeleton *skeleton, const cb_xform_group *local, float *out)
{
    chain(skeleton, local, out);
}

static int16_t snorm16(float x)
{
    float r = nearbyintf(x);
    return (int16_t)(r > 32767.0f ? 32767.0f : r < -32767.0f ? -32767.0f : r);
}

void cb_model_qts16_run(const cb_skeleton *skeleton, const cb_xform_group *local,
                        float translation_range_m, float *scratch, int16_t *out)
{
    chain(skeleton, local, scratch);
    const size_t n = cb_skeleton_joint_count(skeleton);
    const float tq = 32767.0f / translation_range_m;
    for (size_t j = 0; j < n; ++j) {
        const float *x = scratch + j * 8;
        int16_t *o = out + j * 8;
        for (int k = 0; k < 4; ++k) {
            o[k] = snorm16(x[k] * 32767.0f);
        }
        for (int k = 0; k < 3; ++k) {
            o[4 + k] = snorm16(x[4 + k] * tq);
        }
        o[7] = snorm16(x[7] * 8192.0f);
    }
}
