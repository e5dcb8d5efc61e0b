/* Scalar reference of the fused sample + blend job: the same contract, written one joint and
 * one float at a time as anyone would without SIMD. It is the baseline of the benchmark ratios
 * (bench/bench_anim.c) and the second path of the equivalence tests. meson compiles this file
 * with auto-vectorization off, so "scalar" stays scalar. */
#include <math.h>

#include "base/scalar_math.h"
#include "compress/cclip_decode.h"
#include "pose/pose_impl.h"
#include "simd/lane.h"

static const size_t W = CB_SIMD_WIDTH;

/* Component k of lane l in a group of a clip frame. */
static float get(const float *group, int k, size_t l)
{
    return group[(size_t)k * W + l];
}

static cb_fquat quat_of(const float q[4])
{
    return (cb_fquat){q[0], q[1], q[2], q[3]};
}

static void normalize4(float q[4])
{
    cb_fquat n = cb_fq_normalize(quat_of(q));
    q[0] = n.x, q[1] = n.y, q[2] = n.z, q[3] = n.w;
}

static float dot4(const float a[4], const float b[4])
{
    return cb_fq_dot(quat_of(a), quat_of(b));
}

typedef struct jsample {
    float t[3], q[4], ds[3];
    float qa[4]; /* the first frame's rotation, for the hemisphere test */
} jsample;

/* Component k of joint j in the key pair around a normalized time (side 0: key i, 1: key
 * i + 1), and the fraction between them: frame loads of an uncompressed clip, the scalar
 * decoder of a compressed one (cb_cclip_joint_value, its keys located by cb_cclip_locate). */
typedef struct jkeys {
    const struct cb_clip *clip;
    uint32_t i;
    float f;
    size_t j;
} jkeys;

static jkeys locate_keys(const struct cb_clip *c, float time, size_t j)
{
    jkeys k = {.clip = c, .j = j};
    if (c->packed != NULL) {
        cb_cclip_locate(c->packed, time, c->looping, &k.i, &k.f);
    } else {
        cb_clip_locate(c, time, &k.i, &k.f);
    }
    return k;
}

static float key_value(const jkeys *k, int side, int component)
{
    const struct cb_clip *c = k->clip;
    if (component >= CB_CLIP_S && !c->has_scale) {
        return 0.0f; /* in either form (pose.c clip_scaled) */
    }
    if (c->packed != NULL) {
        /* Stored components: translation 0..2, rotation 3..6, scale deviation 7..9, as in
         * the frames (CB_CLIP_T, CB_CLIP_Q, CB_CLIP_S). */
        return cb_cclip_joint_value(c->packed, k->i + (uint32_t)side, k->j, component);
    }
    const float *grp = cb_clip_group_ptr(c, k->i + (uint32_t)side, k->j / W);
    return get(grp, component, k->j % W);
}

/* One clip's sample of joint j, not normalized, with the weight w folded into the lerp weights
 * as the SIMD job does: w - w f on the first key, w f on the second. */
static jsample sample_joint(const struct cb_clip *c, float time, size_t j, float w)
{
    jkeys k = locate_keys(c, time, j);
    float wb = w * k.f, wa = w - wb;
    jsample s;
    for (int x = 0; x < 3; ++x) {
        s.t[x] = wa * key_value(&k, 0, CB_CLIP_T + x) + wb * key_value(&k, 1, CB_CLIP_T + x);
        s.ds[x] = wa * key_value(&k, 0, CB_CLIP_S + x) + wb * key_value(&k, 1, CB_CLIP_S + x);
    }
    for (int x = 0; x < 4; ++x) {
        s.qa[x] = key_value(&k, 0, CB_CLIP_Q + x);
        s.q[x] = wa * s.qa[x] + wb * key_value(&k, 1, CB_CLIP_Q + x);
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
    cb_lane_set(out, CB_LANE_COMPONENTS, j, CB_LANE_T, 3, t);
    cb_lane_set(out, CB_LANE_COMPONENTS, j, CB_LANE_Q, 4, q);
    cb_lane_set(out, CB_LANE_COMPONENTS, j, CB_LANE_S, 3, s);
}

/* Adds the normal-mode entries' samples of joint j into t, q and ds, and returns the sum of
 * their weights. */
static float add_normal(const cb_blend_entry *entries, size_t count, size_t j, float t[3],
                        float q[4], float ds[3])
{
    float wsum = 0.0f;
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
    return wsum;
}

/* Adds joint j's rest pose with weight wr into t, q and ds. */
static void add_rest(const cb_skeleton *skeleton, size_t j, float wr, float t[3], float q[4],
                     float ds[3])
{
    cb_xform r = cb_skeleton_rest_xform(skeleton, j);
    float sign = dot4(r.rotation, q) < 0.0f ? -1.0f : 1.0f;
    for (int c = 0; c < 3; ++c) {
        t[c] += wr * r.translation[c];
        ds[c] += wr * (r.scale[c] - 1.0f);
    }
    for (int c = 0; c < 4; ++c) {
        q[c] += wr * sign * r.rotation[c];
    }
}

/* Moves t, q and s toward each override entry's sample of joint j by its weight. */
static void apply_overrides(const cb_blend_entry *entries, size_t count, size_t j, float t[3],
                            float q[4], float s[3])
{
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
}

/* Applies each additive entry's sample of joint j, scaled by its weight, on top of t, q and s. */
static void apply_additives(const cb_blend_entry *entries, size_t count, size_t j, float t[3],
                            float q[4], float s[3])
{
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
        cb_fquat r = cb_fq_mul(quat_of(q), quat_of(d));
        q[0] = r.x, q[1] = r.y, q[2] = r.z, q[3] = r.w;
        for (int c = 0; c < 3; ++c) {
            t[c] += a * x.t[c];
            s[c] *= 1.0f + a * x.ds[c];
        }
    }
}

static void blend_joint(const cb_skeleton *skeleton, const cb_blend_entry *entries, size_t count,
                        size_t j, float threshold, cb_xform_group *out)
{
    float t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 0}, ds[3] = {0, 0, 0};
    float wsum = add_normal(entries, count, j, t, q, ds);
    float wr = threshold - wsum;
    if (wr > 0.0f) {
        add_rest(skeleton, j, wr, t, q, ds);
        wsum += wr;
    }
    float inv = 1.0f / wsum, s[3];
    for (int c = 0; c < 3; ++c) {
        t[c] *= inv;
        s[c] = 1.0f + ds[c] * inv;
    }
    apply_overrides(entries, count, j, t, q, s);
    apply_additives(entries, count, j, t, q, s);
    normalize4(q);
    put_joint(out, j, t, q, s);
}

static void identity_padding(cb_xform_group *out, size_t joint_count, size_t group_count)
{
    static const float t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
    for (size_t j = joint_count; j < group_count * W; ++j) {
        put_joint(out, j, t, q, s);
    }
}

void cb_pose_blend_unchecked_ref(const cb_skeleton *skeleton, const cb_blend_entry *entries,
                                 size_t count, float threshold, cb_xform_group *out)
{
    for (size_t j = 0; j < skeleton->joint_count; ++j) {
        blend_joint(skeleton, entries, count, j, threshold, out);
    }
    identity_padding(out, skeleton->joint_count, skeleton->group_count);
}

cb_result cb_pose_blend_job_run_ref(const cb_pose_blend_job *job, cb_error *err)
{
    float threshold;
    cb_result r = cb_pose_blend_check(job, err, &threshold);
    if (r == CB_OK) {
        cb_pose_blend_unchecked_ref(job->skeleton, job->entries.ptr, job->entries.count, threshold,
                                    job->out.ptr);
    }
    return r;
}
