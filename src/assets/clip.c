/* Clips: validation, resampling of keyframe tracks to a uniform rate, root-motion extraction,
 * additive deltas, packing into frame-major SoA joint groups; root-motion queries.
 *
 * The build works on a double-precision copy of every frame (joints x frames x 10 values) and
 * only packs to float at the end, so the stored frames are the exactly rounded resampled values
 * and the precision of the pipeline is decided by the per-frame code alone. */
#include <math.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "base/scalar_math.h"
#include "compress/cclip_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Desc defaults and validation                                                               */

cb_clip_desc cb_clip_query_desc(const cb_clip_desc *desc)
{
    cb_clip_desc d = {0};
    if (desc != NULL) {
        d = *desc;
    }
    if (d.name == NULL) {
        d.name = "clip";
    }
    if (d.sample_rate_hz == 0.0f) {
        d.sample_rate_hz = CB_CLIP_DEFAULT_RATE_HZ;
    }
    if (d.wrap == _CB_CLIP_WRAP_DEFAULT) {
        d.wrap = CB_CLIP_WRAP_LOOP;
    }
    if (d.additive == _CB_ADDITIVE_DEFAULT) {
        d.additive = CB_ADDITIVE_NONE;
    }
    if (d.root_motion == _CB_ROOT_MOTION_DEFAULT) {
        d.root_motion =
            d.additive == CB_ADDITIVE_NONE ? CB_ROOT_MOTION_XZ_YAW : CB_ROOT_MOTION_NONE;
    }
    return d;
}

static size_t channel_width(cb_channel c)
{
    return c == CB_CHANNEL_ROTATION ? 4 : 3;
}

static const char *channel_name(cb_channel c)
{
    return c == CB_CHANNEL_TRANSLATION ? "translation"
           : c == CB_CHANNEL_ROTATION  ? "rotation"
                                       : "scale";
}

/* The joint a track animates, or an error. */
static cb_result track_joint(const cb_clip_desc *d, size_t k, size_t *joint, cb_error *err)
{
    const cb_clip_track *tr = &d->tracks[k];
    if (tr->joint_name != NULL) {
        uint32_t found = 0;
        *joint = found;
        if (cb_skeleton_find_joint(d->skeleton, tr->joint_name, &found) != CB_OK) {
            return cb_error_set(err, CB_ERR_NOT_FOUND,
                                "clip \"%s\": tracks[%zu].joint_name \"%s\" is not a joint of the "
                                "skeleton",
                                d->name, k, tr->joint_name);
        }
        *joint = found;
        return CB_OK;
    }
    if (tr->joint >= cb_skeleton_joint_count(d->skeleton)) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "clip \"%s\": tracks[%zu].joint %u does not exist: the skeleton has %u "
                            "joints",
                            d->name, k, tr->joint, cb_skeleton_joint_count(d->skeleton));
    }
    *joint = tr->joint;
    return CB_OK;
}

/* A track's channel, key count and arrays, before any key is read. */
static cb_result check_track_shape(const cb_clip_desc *d, size_t k, cb_error *err)
{
    const cb_clip_track *tr = &d->tracks[k];
    if (tr->channel <= _CB_CHANNEL_INVALID || tr->channel >= _CB_CHANNEL_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": tracks[%zu].channel %d is not a cb_channel", d->name, k,
                            (int)tr->channel);
    }
    if (tr->key_count == 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "clip \"%s\": tracks[%zu] has no keys",
                            d->name, k);
    }
    if (tr->times == NULL || tr->values == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip \"%s\": tracks[%zu].%s is NULL",
                            d->name, k, tr->times == NULL ? "times" : "values");
    }
    return CB_OK;
}

/* Key i's time: finite, after the key before it and within the clip. */
static cb_result check_key_time(const cb_clip_desc *d, size_t k, size_t i, cb_error *err)
{
    const cb_clip_track *tr = &d->tracks[k];
    float t = tr->times[i];
    if (!isfinite(t)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "clip \"%s\": tracks[%zu].times[%zu] is %g",
                            d->name, k, i, (double)t);
    }
    if (t < 0.0f || t > d->duration_s || (i > 0 && !(t > tr->times[i - 1]))) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": tracks[%zu].times[%zu] = %g: key times must increase "
                            "strictly and lie in [0, %g]",
                            d->name, k, i, (double)t, (double)d->duration_s);
    }
    return CB_OK;
}

/* Key i's value: finite components, and a rotation that is not zero. */
static cb_result check_key_value(const cb_clip_desc *d, size_t k, size_t i, cb_error *err)
{
    const cb_clip_track *tr = &d->tracks[k];
    size_t width = channel_width(tr->channel);
    for (size_t c = 0; c < width; ++c) {
        float v = tr->values[i * width + c];
        if (!isfinite(v)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "clip \"%s\": tracks[%zu] (%s) value %zu of key %zu is %g", d->name,
                                k, channel_name(tr->channel), c, i, (double)v);
        }
    }
    if (tr->channel == CB_CHANNEL_ROTATION && !cb_rotation_normalizable(&tr->values[i * width])) {
        return cb_error_set(err, CB_ERR_DEGENERATE,
                            "clip \"%s\": tracks[%zu] rotation key %zu is zero", d->name, k, i);
    }
    return CB_OK;
}

/* At most one track per joint and channel (quadratic, build time only, no allocation): track k
 * (of joint `joint`) against the tracks before it. */
static cb_result check_track_unique(const cb_clip_desc *d, size_t k, size_t joint, cb_error *err)
{
    const cb_clip_track *tr = &d->tracks[k];
    for (size_t o = 0; o < k; ++o) {
        size_t other;
        track_joint(d, o, &other, NULL);
        if (other == joint && d->tracks[o].channel == tr->channel) {
            return cb_error_set(err, CB_ERR_DUPLICATE,
                                "clip \"%s\": tracks[%zu] and tracks[%zu] both animate the %s of "
                                "joint %zu",
                                d->name, o, k, channel_name(tr->channel), joint);
        }
    }
    return CB_OK;
}

static cb_result validate_track(const cb_clip_desc *d, size_t k, cb_error *err)
{
    size_t joint;
    cb_result r = track_joint(d, k, &joint, err);
    if (r == CB_OK) {
        r = check_track_shape(d, k, err);
    }
    for (size_t i = 0; r == CB_OK && i < d->tracks[k].key_count; ++i) {
        r = check_key_time(d, k, i, err);
        if (r == CB_OK) {
            r = check_key_value(d, k, i, err);
        }
    }
    return r == CB_OK ? check_track_unique(d, k, joint, err) : r;
}

static cb_result validate_reference(const cb_clip_desc *d, size_t n, cb_error *err)
{
    if (d->additive_reference.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "clip \"%s\": additive CUSTOM needs additive_reference", d->name);
    }
    if (d->additive_reference.count < n) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "clip \"%s\": additive_reference has %zu transforms, the skeleton %zu "
                            "joints",
                            d->name, d->additive_reference.count, n);
    }
    for (size_t j = 0; j < n; ++j) {
        const cb_xform *x = &d->additive_reference.ptr[j];
        cb_xform_fault fault = cb_xform_check(x);
        if (fault == CB_XFORM_NOT_FINITE) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "clip \"%s\": additive_reference[%zu] is not finite", d->name, j);
        }
        if (fault == CB_XFORM_ZERO_ROTATION || x->scale[0] == 0.0f || x->scale[1] == 0.0f ||
            x->scale[2] == 0.0f) {
            return cb_error_set(err, CB_ERR_DEGENERATE,
                                "clip \"%s\": additive_reference[%zu] has a zero rotation or scale",
                                d->name, j);
        }
    }
    return CB_OK;
}

/* A marker's normalized time. The quotient is rounded once, from double; for looping clips a
 * time just below the duration may round up to 1, which is the start again, so it is kept at
 * the largest float below 1 instead: the marker stays at the end of the cycle where it was
 * put. */
static float marker_time(const cb_clip_desc *d, float time_s)
{
    float t = (float)((double)time_s / (double)d->duration_s);
    if (d->wrap == CB_CLIP_WRAP_LOOP && t >= 1.0f) {
        t = nextafterf(1.0f, 0.0f);
    }
    return t;
}

/* One marker's name and normalized time, from whichever form a clip is built from. */
typedef void (*marker_at_fn)(const void *ctx, size_t i, const char **name, float *time);

static void desc_marker(const void *ctx, size_t i, const char **name, float *time)
{
    const cb_clip_desc *d = ctx;
    *name = d->markers[i].name;
    *time = marker_time(d, d->markers[i].time_s);
}

/* Pairs, quadratic but at build time only and bounded by CB_CLIP_MAX_MARKERS. Equal names at
 * equal (normalized) times would fire twice as one event and make sync segments of no length;
 * equal hashes of different names would make hash lookups ambiguous. */
static cb_result check_marker_pairs(const char *clip, size_t count, marker_at_fn at,
                                    const void *ctx, cb_error *err)
{
    for (size_t j = 1; j < count; ++j) {
        const char *b;
        float tb;
        at(ctx, j, &b, &tb);
        uint32_t hb = cb_name_hash(b);
        for (size_t i = 0; i < j; ++i) {
            const char *a;
            float ta;
            at(ctx, i, &a, &ta);
            if (cb_name_hash(a) != hb) {
                continue;
            }
            if (strcmp(a, b) != 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "clip \"%s\": marker names \"%s\" (markers[%zu]) and \"%s\" "
                                    "(markers[%zu]) have the same hash 0x%08x: rename one",
                                    clip, a, i, b, j, hb);
            }
            if (ta == tb) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "clip \"%s\": markers[%zu] and markers[%zu] are both \"%s\" "
                                    "at normalized time %g",
                                    clip, i, j, a, (double)ta);
            }
        }
    }
    return CB_OK;
}

/* What every marker list is checked for first: the array, the count, each name. */
static cb_result check_marker_names(const char *clip, const void *array, size_t count,
                                    const char *(*name_at)(const void *array, size_t i),
                                    cb_error *err)
{
    if (array == NULL && count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip \"%s\": markers is NULL", clip);
    }
    if (count > CB_CLIP_MAX_MARKERS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "clip \"%s\": %zu markers exceed %d", clip, count,
                            CB_CLIP_MAX_MARKERS);
    }
    for (size_t i = 0; i < count; ++i) {
        const char *name = name_at(array, i);
        if (name == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip \"%s\": markers[%zu].name is NULL",
                                clip, i);
        }
        size_t len = strlen(name);
        if (len == 0 || len > CB_MARKER_NAME_MAX) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "clip \"%s\": markers[%zu].name has %zu bytes (1..%d)", clip, i,
                                len, CB_MARKER_NAME_MAX);
        }
    }
    return CB_OK;
}

static const char *desc_marker_name(const void *array, size_t i)
{
    return ((const cb_clip_marker_desc *)array)[i].name;
}

static cb_result validate_markers(const cb_clip_desc *d, cb_error *err)
{
    cb_result r = check_marker_names(d->name, d->markers, d->marker_count, desc_marker_name, err);
    if (r != CB_OK) {
        return r;
    }
    const bool looping = d->wrap == CB_CLIP_WRAP_LOOP;
    for (size_t i = 0; i < d->marker_count; ++i) {
        const cb_clip_marker_desc *m = &d->markers[i];
        if (!isfinite(m->time_s)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "clip \"%s\": markers[%zu] (\"%s\").time_s "
                                "is %g",
                                d->name, i, m->name, (double)m->time_s);
        }
        if (m->time_s < 0.0f || m->time_s > d->duration_s ||
            (looping && m->time_s == d->duration_s)) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "clip \"%s\": markers[%zu] (\"%s\").time_s = %g is outside "
                                "[0, %g%s",
                                d->name, i, m->name, (double)m->time_s, (double)d->duration_s,
                                looping ? ") (a looping clip's end is its start: use 0)" : "]");
        }
    }
    return check_marker_pairs(d->name, d->marker_count, desc_marker, d, err);
}

/* The bounds of cb_clip_desc.compression, checked before any work (0 is the default). */
static cb_result validate_compression(const cb_clip_desc *d, cb_error *err)
{
    const cb_clip_compression *z = d->compression;
    if (z == NULL) {
        return CB_OK;
    }
    if (!isfinite(z->max_error_m) || !isfinite(z->shell_distance_m)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "clip \"%s\": compression.%s is not finite",
                            d->name,
                            !isfinite(z->max_error_m) ? "max_error_m" : "shell_distance_m");
    }
    if (z->max_error_m < 0.0f || z->shell_distance_m < 0.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": compression.%s is %g, must be > 0 (0: the default)",
                            d->name, z->max_error_m < 0.0f ? "max_error_m" : "shell_distance_m",
                            (double)(z->max_error_m < 0.0f ? z->max_error_m : z->shell_distance_m));
    }
    return CB_OK;
}

/* The desc's canaries, allocator, skeleton and name. */
static cb_result check_desc_basics(const cb_clip_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "clip desc: a canary is not 0");
    }
    cb_result r = cb_allocator_check(&d->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    if (d->skeleton == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip \"%s\": skeleton is NULL", d->name);
    }
    size_t name_len = strlen(d->name);
    if (name_len == 0 || name_len > CB_JOINT_NAME_MAX) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "clip desc: name has %zu bytes (1..%d)",
                            name_len, CB_JOINT_NAME_MAX);
    }
    return CB_OK;
}

/* The duration and sample rate, and the number of intervals they make (*intervals). */
static cb_result check_timing(const cb_clip_desc *d, uint32_t *intervals, cb_error *err)
{
    if (!isfinite(d->duration_s) || !isfinite(d->sample_rate_hz)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "clip \"%s\": %s is not finite", d->name,
                            !isfinite(d->duration_s) ? "duration_s" : "sample_rate_hz");
    }
    if (!(d->duration_s > 0.0f) || !(d->sample_rate_hz > 0.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "clip \"%s\": %s must be > 0", d->name,
                            !(d->duration_s > 0.0f) ? "duration_s" : "sample_rate_hz");
    }
    double n = floor((double)d->duration_s * d->sample_rate_hz + 0.5);
    if (n + 1.0 > CB_CLIP_MAX_FRAMES) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "clip \"%s\": %.0f frames exceed %d", d->name,
                            n + 1.0, CB_CLIP_MAX_FRAMES);
    }
    *intervals = n < 1.0 ? 1u : (uint32_t)n;
    return CB_OK;
}

/* Wrap, root motion and additive: valid values, compatible with each other and the skeleton,
 * and the additive reference when the clip names one. */
static cb_result check_modes(const cb_clip_desc *d, cb_error *err)
{
    if (d->wrap <= _CB_CLIP_WRAP_DEFAULT || d->wrap >= _CB_CLIP_WRAP_COUNT ||
        d->root_motion <= _CB_ROOT_MOTION_DEFAULT || d->root_motion >= _CB_ROOT_MOTION_COUNT ||
        d->additive <= _CB_ADDITIVE_DEFAULT || d->additive >= _CB_ADDITIVE_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": wrap, root_motion or additive is not a valid enum value",
                            d->name);
    }
    size_t joints = cb_skeleton_joint_count(d->skeleton);
    if (d->additive != CB_ADDITIVE_NONE && d->root_motion != CB_ROOT_MOTION_NONE) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": additive clips carry no root motion (root_motion must be "
                            "NONE or default)",
                            d->name);
    }
    if (d->root_motion != CB_ROOT_MOTION_NONE &&
        (d->root_joint >= joints || cb_skeleton_parents(d->skeleton)[d->root_joint] != -1)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": root_joint %u is not a root joint of the skeleton",
                            d->name, d->root_joint);
    }
    return d->additive == CB_ADDITIVE_CUSTOM ? validate_reference(d, joints, err) : CB_OK;
}

static cb_result validate_tracks(const cb_clip_desc *d, cb_error *err)
{
    if (d->tracks == NULL && d->track_count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip \"%s\": tracks is NULL", d->name);
    }
    for (size_t k = 0; k < d->track_count; ++k) {
        cb_result r = validate_track(d, k, err);
        if (r != CB_OK) {
            return r;
        }
    }
    return CB_OK;
}

static cb_result validate(const cb_clip_desc *d, uint32_t *intervals, cb_error *err)
{
    cb_result r = check_desc_basics(d, err);
    if (r == CB_OK) {
        r = check_timing(d, intervals, err);
    }
    if (r == CB_OK) {
        r = check_modes(d, err);
    }
    if (r == CB_OK) {
        r = validate_tracks(d, err);
    }
    if (r == CB_OK) {
        r = validate_markers(d, err);
    }
    return r == CB_OK ? validate_compression(d, err) : r;
}

/* ------------------------------------------------------------------------------------------ */
/* Resampling                                                                                 */

/* Work frames in double: per frame and joint, t[3] q[4] s[3]. */
typedef struct dframe {
    cb_dvec3 t;
    cb_dquat q;
    cb_dvec3 s;
} dframe;

static void key_value(const cb_clip_track *tr, size_t i, double out[4])
{
    size_t w = channel_width(tr->channel);
    for (size_t c = 0; c < w; ++c) {
        out[c] = tr->values[i * w + c];
    }
    if (tr->channel == CB_CHANNEL_ROTATION) {
        cb_dquat q = cb_dq_normalize((cb_dquat){out[0], out[1], out[2], out[3]});
        out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
    }
}

static void interp_keys(const cb_clip_track *tr, size_t a, size_t b, double u, double out[4])
{
    double va[4], vb[4];
    key_value(tr, a, va);
    key_value(tr, b, vb);
    if (tr->channel == CB_CHANNEL_ROTATION) {
        cb_dquat q = cb_dq_slerp((cb_dquat){va[0], va[1], va[2], va[3]},
                                 (cb_dquat){vb[0], vb[1], vb[2], vb[3]}, u);
        out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
        return;
    }
    for (int c = 0; c < 3; ++c) {
        out[c] = va[c] + (vb[c] - va[c]) * u;
    }
}

/* The track's value at time tau (seconds, in [0, duration]). Between keys: linear (slerp for
 * rotations). Before the first and after the last key: the nearest key's value, except that a
 * looping clip interpolates from its last key to its first key one duration later, so the
 * animation wraps without a jump. */
static void eval_track(const cb_clip_track *tr, double duration, bool looping, double tau,
                       double out[4])
{
    size_t n = tr->key_count;
    double t0 = tr->times[0], tn = tr->times[n - 1];
    if (n == 1) {
        key_value(tr, 0, out);
        return;
    }
    if (tau <= t0 || tau >= tn) {
        double gap = t0 + duration - tn; /* time from the last key to the first, wrapped */
        if (!looping || gap <= 0.0 || (tau == t0) || (tau == tn)) {
            key_value(tr, tau <= t0 ? 0 : n - 1, out);
            return;
        }
        double since_last = tau >= tn ? tau - tn : tau + duration - tn;
        interp_keys(tr, n - 1, 0, since_last / gap, out);
        return;
    }
    /* Binary search for the last key at or before tau. */
    size_t lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->times[mid] <= tau) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    double ta = tr->times[lo], tb = tr->times[hi];
    interp_keys(tr, lo, hi, (tau - ta) / (tb - ta), out);
}

/* ------------------------------------------------------------------------------------------ */
/* Root motion                                                                                */

static bool mode_has_yaw(cb_root_motion m)
{
    return m == CB_ROOT_MOTION_XZ_YAW || m == CB_ROOT_MOTION_XYZ_YAW;
}

static bool mode_has_y(cb_root_motion m)
{
    return m == CB_ROOT_MOTION_XYZ || m == CB_ROOT_MOTION_XYZ_YAW;
}

/* Takes the root joint's motion out of the frames and writes the root track: per frame the
 * position and heading relative to frame 0, in frame 0's heading frame.
 * With m(f) the extracted part of the root translation and psi(f) its unwrapped heading, the
 * in-place root is M(f)^-1 root(f), where M(f) = (m(f), yaw psi(f)): the root's ground frame at
 * every frame, the first one included, is taken out, so the pose stands over the origin facing
 * +Z and everything else (height bob, sway relative to the path, tilt) stays in the pose. The
 * track holds M(0)^-1 M(f), the motion in the frame the pose is in, so a character moves along
 * its own forward axis; M(0) itself is written to `origin` (x y z yaw). Keeping M(0) in the pose
 * instead, as this did before, made a root that starts away from the origin or turned walk
 * sideways: its pose kept the turn while its deltas were taken in the turned frame. */
static void extract_root_motion(dframe *frames, size_t n, uint32_t intervals, uint32_t root,
                                cb_root_motion mode, float *track, float origin[4])
{
    double psi_prev = 0.0, raw_prev = 0.0;
    double psi0 = 0.0;
    cb_dvec3 m0 = {0, 0, 0};
    bool yaw = mode_has_yaw(mode), y = mode_has_y(mode);
    for (uint32_t f = 0; f <= intervals; ++f) {
        dframe *x = &frames[(size_t)f * n + root];
        double raw = cb_dq_heading(x->q, raw_prev);
        double psi = f == 0 ? raw : psi_prev + cb_wrap_pi(raw - raw_prev);
        raw_prev = raw;
        psi_prev = psi;
        if (!yaw) {
            psi = 0.0;
        }
        cb_dvec3 m = {x->t.x, y ? x->t.y : 0.0, x->t.z};
        if (f == 0) {
            psi0 = psi;
            m0 = m;
        }
        x->t = cb_dv_rotate_y(cb_dv_sub(x->t, m), -psi);
        x->q = cb_dq_mul(cb_dq_axis_angle(cb_dv(0, 1, 0), -psi), x->q);
        cb_dvec3 rel = cb_dv_rotate_y(cb_dv_sub(m, m0), -psi0);
        track[f * 4 + 0] = (float)rel.x;
        track[f * 4 + 1] = (float)rel.y;
        track[f * 4 + 2] = (float)rel.z;
        track[f * 4 + 3] = (float)(psi - psi0);
    }
    origin[0] = (float)m0.x;
    origin[1] = (float)m0.y;
    origin[2] = (float)m0.z;
    origin[3] = (float)psi0;
}

/* ------------------------------------------------------------------------------------------ */
/* Building                                                                                   */

static void align_along_time(dframe *frames, size_t n, uint32_t intervals)
{
    for (size_t j = 0; j < n; ++j) {
        for (uint32_t f = 1; f <= intervals; ++f) {
            dframe *prev = &frames[(size_t)(f - 1) * n + j], *cur = &frames[(size_t)f * n + j];
            if (cb_dq_dot(prev->q, cur->q) < 0.0) {
                cur->q = cb_dq_neg(cur->q);
            }
        }
    }
}

static void make_additive(dframe *frames, size_t n, uint32_t intervals, const dframe *ref)
{
    for (uint32_t f = 0; f <= intervals; ++f) {
        for (size_t j = 0; j < n; ++j) {
            dframe *x = &frames[(size_t)f * n + j];
            if (memcmp(&x->q, &ref[j].q, sizeof x->q) == 0) {
                /* A frame equal to its reference is exactly the identity (conj(q) q in double
                 * leaves residues near 1e-17 that would survive as float denormals). */
                x->q = cb_dq_identity();
            } else {
                x->q = cb_dq_mul(cb_dq_conj(ref[j].q), x->q);
            }
            x->t = cb_dv_sub(x->t, ref[j].t);
            x->s = (cb_dvec3){x->s.x / ref[j].s.x, x->s.y / ref[j].s.y, x->s.z / ref[j].s.z};
        }
    }
    /* Deltas start in the hemisphere of the identity (w >= 0), where nlerp(identity, dq, a)
     * takes the short way, then stay continuous along time. */
    for (size_t j = 0; j < n; ++j) {
        if (frames[j].q.w < 0.0) {
            for (uint32_t f = 0; f <= intervals; ++f) {
                frames[(size_t)f * n + j].q = cb_dq_neg(frames[(size_t)f * n + j].q);
            }
        }
    }
}

static dframe xform_to_dframe(cb_xform x)
{
    return (dframe){
        {x.translation[0], x.translation[1], x.translation[2]},
        cb_dq_normalize((cb_dquat){x.rotation[0], x.rotation[1], x.rotation[2], x.rotation[3]}),
        {x.scale[0], x.scale[1], x.scale[2]},
    };
}

/* Packs the double frames into float SoA groups; padding lanes hold identity (zero deltas). */
static void pack_frames(const dframe *frames, size_t n, struct cb_clip *c, float *dst)
{
    const size_t w = CB_SIMD_WIDTH;
    for (uint32_t f = 0; f <= c->intervals; ++f) {
        for (size_t g = 0; g < c->group_count; ++g) {
            float *grp = dst + (size_t)f * cb_clip_frame_floats(c) + g * c->stride * w;
            for (size_t l = 0; l < w; ++l) {
                size_t j = g * w + l;
                float v[10] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
                if (j < n) {
                    const dframe *x = &frames[(size_t)f * n + j];
                    const double all[10] = {x->t.x,       x->t.y,      x->t.z, x->q.x,
                                            x->q.y,       x->q.z,      x->q.w, x->s.x - 1.0,
                                            x->s.y - 1.0, x->s.z - 1.0};
                    for (int k = 0; k < 10; ++k) {
                        v[k] = (float)all[k];
                    }
                }
                for (uint32_t k = 0; k < c->stride; ++k) {
                    grp[k * w + l] = v[k];
                }
            }
        }
    }
}

/* Writes the validated markers sorted by normalized time. Insertion sort: stable (equal times
 * keep the desc order, which the header promises) and fine for at most CB_CLIP_MAX_MARKERS. */
static void store_markers(const cb_clip_desc *d, unsigned char *times_at, unsigned char *hashes_at,
                          unsigned char *names_at, unsigned char *flags_at)
{
    float *times = (float *)times_at;
    uint32_t *hashes = (uint32_t *)hashes_at;
    char *names = (char *)names_at;
    bool *flags = (bool *)flags_at;
    for (size_t i = 0; i < d->marker_count; ++i) {
        const cb_clip_marker_desc *m = &d->markers[i];
        float t = marker_time(d, m->time_s);
        size_t k = i;
        for (; k > 0 && times[k - 1] > t; --k) {
            times[k] = times[k - 1];
            hashes[k] = hashes[k - 1];
            flags[k] = flags[k - 1];
            memcpy(names + k * CB_MARKER_NAME_SLOT, names + (k - 1) * CB_MARKER_NAME_SLOT,
                   CB_MARKER_NAME_SLOT);
        }
        times[k] = t;
        hashes[k] = cb_name_hash(m->name);
        flags[k] = m->event_only;
        memset(names + k * CB_MARKER_NAME_SLOT, 0, CB_MARKER_NAME_SLOT);
        memcpy(names + k * CB_MARKER_NAME_SLOT, m->name, strlen(m->name));
    }
}

/* Where the parts of a clip's one block go: header, frames (vector-aligned), root track, then
 * the markers: times, hashes, names, flags (4-byte aligned or bytes). */
typedef struct clip_layout {
    size_t off_frames, off_root, off_mtimes, off_mhashes, off_mnames, off_mflags, total;
    size_t marker_count;
} clip_layout;

static clip_layout layout_of(size_t frame_floats, size_t root_bytes, size_t marker_count)
{
    clip_layout l;
    l.off_frames = cb_round_up(sizeof(struct cb_clip), cb_simd_group_align());
    l.off_root = l.off_frames + frame_floats * sizeof(float);
    l.off_mtimes = l.off_root + root_bytes;
    l.off_mhashes = l.off_mtimes + marker_count * sizeof(float);
    l.off_mnames = l.off_mhashes + marker_count * sizeof(uint32_t);
    l.off_mflags = l.off_mnames + marker_count * CB_MARKER_NAME_SLOT;
    l.total = l.off_mflags + marker_count * sizeof(bool);
    l.marker_count = marker_count;
    return l;
}

/* Points the clip header at the parts of its block and fills in the fields every clip sets the
 * same way (the header's other fields are the caller's). */
static void place_block(struct cb_clip *c, unsigned char *block, const clip_layout *l,
                        cb_allocator allocator, bool root, const char *name)
{
    c->allocator = allocator;
    c->alloc_bytes = l->total;
    c->frames = (const float *)(block + l->off_frames);
    c->root = root ? (const float *)(block + l->off_root) : NULL;
    c->marker_count = (uint32_t)l->marker_count;
    c->marker_times = (const float *)(block + l->off_mtimes);
    c->marker_hashes = (const uint32_t *)(block + l->off_mhashes);
    c->marker_event_only = (const bool *)(block + l->off_mflags);
    c->marker_names = (const char *)(block + l->off_mnames);
    memcpy(c->name, name, strlen(name) + 1);
}

/* Copies the root track (N + 1 keys) into the clip's block and notes which of its components
 * are not all zero (struct cb_clip, root_moves_y and root_turns). */
static void store_root_track(struct cb_clip *c, unsigned char *block, const clip_layout *l,
                             const float *track)
{
    size_t keys = (size_t)c->intervals + 1;
    memcpy(block + l->off_root, track, keys * 4 * sizeof(float));
    c->root_moves_y = c->root_turns = false;
    for (size_t i = 0; i < keys; ++i) {
        c->root_moves_y |= track[i * 4 + 1] != 0.0f;
        c->root_turns |= track[i * 4 + 3] != 0.0f;
    }
}

/* Every joint's frames at f * duration / N: the rest pose where no track drives a channel, the
 * tracks' values where they do, aligned along time. */
static void sample_frames(const cb_clip_desc *d, uint32_t intervals, dframe *work)
{
    const cb_skeleton *skel = d->skeleton;
    const size_t n = cb_skeleton_joint_count(skel);
    const size_t frames_count = (size_t)intervals + 1;
    const bool looping = d->wrap == CB_CLIP_WRAP_LOOP;
    for (size_t j = 0; j < n; ++j) {
        dframe rest = xform_to_dframe(cb_skeleton_rest_xform(skel, j));
        for (size_t f = 0; f < frames_count; ++f) {
            work[f * n + j] = rest;
        }
    }
    const double duration = d->duration_s;
    for (size_t k = 0; k < d->track_count; ++k) {
        const cb_clip_track *tr = &d->tracks[k];
        size_t j = 0;
        track_joint(d, k, &j, NULL);
        for (size_t f = 0; f < frames_count; ++f) {
            /* Frame times as f * duration / N, with the last exactly at the duration. */
            double tau = f == intervals ? duration : duration * (double)f / intervals;
            double v[4];
            eval_track(tr, duration, looping, tau, v);
            dframe *x = &work[f * n + j];
            if (tr->channel == CB_CHANNEL_TRANSLATION) {
                x->t = (cb_dvec3){v[0], v[1], v[2]};
            } else if (tr->channel == CB_CHANNEL_ROTATION) {
                x->q = (cb_dquat){v[0], v[1], v[2], v[3]};
            } else {
                x->s = (cb_dvec3){v[0], v[1], v[2]};
            }
        }
    }
    align_along_time(work, n, intervals);
}

/* The seam: the last frame is the first again, on the side of the frame before it. */
static void close_loop(dframe *work, size_t n, uint32_t intervals)
{
    for (size_t j = 0; j < n; ++j) {
        dframe *last = &work[(size_t)intervals * n + j];
        *last = work[j];
        if (cb_dq_dot(last->q, work[(size_t)(intervals - 1) * n + j].q) < 0.0) {
            last->q = cb_dq_neg(last->q);
        }
    }
}

/* Turns the frames into deltas from the desc's additive reference. */
static cb_result subtract_reference(const cb_clip_desc *d, dframe *work, uint32_t intervals,
                                    cb_error *err)
{
    const cb_skeleton *skel = d->skeleton;
    const size_t n = cb_skeleton_joint_count(skel);
    /* The reference, one transform per joint; the first frame's copy is taken before the
     * frames turn into deltas. */
    dframe *ref = cb_alloc(&d->allocator, n * sizeof(dframe), _Alignof(dframe));
    if (ref == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "clip \"%s\": reference", d->name);
    }
    for (size_t j = 0; j < n; ++j) {
        ref[j] = d->additive == CB_ADDITIVE_FIRST_FRAME ? work[j]
                 : d->additive == CB_ADDITIVE_REST_POSE
                     ? xform_to_dframe(cb_skeleton_rest_xform(skel, j))
                     : xform_to_dframe(d->additive_reference.ptr[j]);
    }
    make_additive(work, n, intervals, ref);
    cb_free(&d->allocator, ref, n * sizeof(dframe));
    return CB_OK;
}

/* Whether any frame scales a joint once stored as float deltas from 1. */
static bool frames_have_scale(const dframe *work, size_t count)
{
    bool has_scale = false;
    for (size_t i = 0; i < count && !has_scale; ++i) {
        has_scale = (float)(work[i].s.x - 1.0) != 0.0f || (float)(work[i].s.y - 1.0) != 0.0f ||
                    (float)(work[i].s.z - 1.0) != 0.0f;
    }
    return has_scale;
}

/* The clip in its one block: header, frames (vector-aligned), root track (root_track NULL when
 * the clip has no root motion), markers. */
static cb_result store_clip(const cb_clip_desc *d, uint32_t intervals, const dframe *work,
                            const float *root_track, const float origin[4], cb_clip **out,
                            cb_error *err)
{
    const cb_skeleton *skel = d->skeleton;
    const size_t n = cb_skeleton_joint_count(skel);
    const size_t frames_count = (size_t)intervals + 1;
    const bool has_scale = frames_have_scale(work, frames_count * n);
    struct cb_clip probe = {.group_count = (uint32_t)cb_skeleton_group_count(skel)};
    probe.stride = has_scale ? CB_CLIP_STRIDE_SCALE : CB_CLIP_STRIDE_NO_SCALE;
    size_t root_bytes = root_track != NULL ? frames_count * 4 * sizeof(float) : 0;
    clip_layout lay =
        layout_of(cb_clip_frame_floats(&probe) * frames_count, root_bytes, d->marker_count);
    unsigned char *block = cb_alloc(&d->allocator, lay.total, cb_simd_group_align());
    if (block == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "clip \"%s\": %zu bytes", d->name,
                            lay.total);
    }
    struct cb_clip *c = (struct cb_clip *)block;
    *c = (struct cb_clip){
        .skeleton_signature = cb_skeleton_signature(skel),
        .joint_count = (uint32_t)n,
        .group_count = probe.group_count,
        .intervals = intervals,
        .stride = probe.stride,
        .duration_s = d->duration_s,
        .intervals_f = (float)intervals,
        .looping = d->wrap == CB_CLIP_WRAP_LOOP,
        .additive = d->additive != CB_ADDITIVE_NONE,
        .has_scale = has_scale,
        .root_mode = d->root_motion,
        .root_joint = d->root_joint,
        .root_origin = {origin[0], origin[1], origin[2], origin[3]},
    };
    place_block(c, block, &lay, d->allocator, root_track != NULL, d->name);
    store_markers(d, block + lay.off_mtimes, block + lay.off_mhashes, block + lay.off_mnames,
                  block + lay.off_mflags);
    pack_frames(work, n, c, (float *)(block + lay.off_frames));
    if (root_track != NULL) {
        store_root_track(c, block, &lay, root_track);
    }
    *out = c;
    return CB_OK;
}

/* The clip of raw frames that desc d (validated) describes. */
static cb_result create_resampled(const cb_clip_desc *desc, uint32_t intervals, cb_clip **out,
                                  cb_error *err)
{
    const cb_clip_desc d = *desc;
    const size_t n = cb_skeleton_joint_count(d.skeleton);
    const size_t frames_count = (size_t)intervals + 1;
    const bool root = d.root_motion != CB_ROOT_MOTION_NONE;

    size_t work_bytes = frames_count * n * sizeof(dframe);
    dframe *work = cb_alloc(&d.allocator, work_bytes, _Alignof(dframe));
    if (work == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "clip \"%s\": %zu bytes of work memory",
                            d.name, work_bytes);
    }
    sample_frames(&d, intervals, work);

    float *root_track = NULL, origin[4] = {0, 0, 0, 0};
    size_t root_bytes = root ? frames_count * 4 * sizeof(float) : 0;
    if (root) {
        root_track = cb_alloc(&d.allocator, root_bytes, _Alignof(float));
        if (root_track == NULL) {
            cb_free(&d.allocator, work, work_bytes);
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "clip \"%s\": root track", d.name);
        }
        extract_root_motion(work, n, intervals, d.root_joint, d.root_motion, root_track, origin);
    }
    if (d.wrap == CB_CLIP_WRAP_LOOP) {
        close_loop(work, n, intervals);
    }
    cb_result r = CB_OK;
    if (d.additive != CB_ADDITIVE_NONE) {
        r = subtract_reference(&d, work, intervals, err);
    }
    if (r == CB_OK) {
        r = store_clip(&d, intervals, work, root_track, origin, out, err);
    }
    cb_free(&d.allocator, root_track, root_bytes);
    cb_free(&d.allocator, work, work_bytes);
    return r;
}

cb_result cb_clip_create(const cb_clip_desc *desc, cb_clip **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_clip_create: %s is NULL",
                            desc == NULL ? "desc" : "out");
    }
    cb_clip_desc d = cb_clip_query_desc(desc);
    uint32_t intervals = 0;
    cb_result r = validate(&d, &intervals, err);
    cb_clip *raw = NULL;
    r = r == CB_OK ? create_resampled(&d, intervals, &raw, err) : r;
    if (r != CB_OK) {
        return r;
    }
    if (d.compression == NULL) {
        *out = raw;
        return CB_OK;
    }
    /* The resampled frames are the compressor's source. */
    r = cb_clip_compress_created(raw, &d, out, err);
    cb_clip_destroy(raw);
    return r;
}

void cb_clip_destroy(cb_clip *c)
{
    if (c != NULL) {
        if (c->owns_packed) {
            cb_cclip_destroy((cb_cclip *)c->packed);
        }
        cb_allocator a = c->allocator;
        cb_free(&a, c, c->alloc_bytes);
    }
}

const struct cb_cclip *cb_clip_compressed_form(const cb_clip *c)
{
    return c != NULL ? c->packed : NULL;
}

const char *cb_clip_name(const cb_clip *c)
{
    return c->name;
}

float cb_clip_duration(const cb_clip *c)
{
    return c->duration_s;
}

uint32_t cb_clip_frame_count(const cb_clip *c)
{
    return c->intervals + 1;
}

float cb_clip_sample_rate(const cb_clip *c)
{
    return (float)((double)c->intervals / c->duration_s);
}

uint32_t cb_clip_joint_count(const cb_clip *c)
{
    return c->joint_count;
}

bool cb_clip_is_looping(const cb_clip *c)
{
    return c->looping;
}

bool cb_clip_is_additive(const cb_clip *c)
{
    return c->additive;
}

size_t cb_clip_bytes_per_joint_frame(const cb_clip *c)
{
    return c->stride * sizeof(float);
}

size_t cb_clip_bytes(const cb_clip *c)
{
    /* A compressed clip's keys count with it: they are its frames. */
    return c->alloc_bytes + (c->packed != NULL ? cb_cclip_query_info(c->packed).bytes : 0);
}

uint64_t cb_clip_skeleton_signature(const cb_clip *c)
{
    return c->skeleton_signature;
}

/* ------------------------------------------------------------------------------------------ */
/* Root-motion queries                                                                        */

/* A rigid motion of the character on the ground: position (y carried along, never rotated) and
 * heading. compose(a, b) is "a, then b in a's frame". */
typedef struct rigid {
    double x, y, z, yaw;
} rigid;

static rigid rigid_compose(rigid a, rigid b)
{
    cb_dvec3 p = cb_dv_rotate_y_det(cb_dv(b.x, b.y, b.z), a.yaw);
    return (rigid){a.x + p.x, a.y + p.y, a.z + p.z, a.yaw + b.yaw};
}

static rigid rigid_inverse(rigid a)
{
    cb_dvec3 p = cb_dv_rotate_y_det(cb_dv(-a.x, -a.y, -a.z), -a.yaw);
    return (rigid){p.x, p.y, p.z, -a.yaw};
}

/* inverse(a) then b, i.e. b seen from a: R(-a.yaw) (b.p - a.p) and b.yaw - a.yaw. One rotation
 * where rigid_compose(rigid_inverse(a), b) takes two; root deltas run per clip per character
 * per frame, so this is the crowd's time & sync stage. */
SM_INLINE rigid rigid_between(rigid a, rigid b)
{
    cb_dvec3 p = cb_dv_rotate_y_det(cb_dv(b.x - a.x, b.y - a.y, b.z - a.z), -a.yaw);
    return (rigid){p.x, p.y, p.z, b.yaw - a.yaw};
}

/* a composed with itself k times (k >= 0) by squaring: log2(k) steps, so a delta spanning
 * millions of cycles stays cheap and accurate. */
static rigid rigid_power(rigid a, uint64_t k)
{
    rigid r = {0, 0, 0, 0};
    while (k > 0) {
        if (k & 1u) {
            r = rigid_compose(r, a);
        }
        a = rigid_compose(a, a);
        k >>= 1;
    }
    return r;
}

/* The root at a position within one cycle, u in [0, 1], relative to frame 0 (components whose
 * keys are all 0 set to +0, as cb_root_sample_at does). */
SM_INLINE rigid root_at(const struct cb_clip *c, double u)
{
    double f;
    const float *a = cb_root_key(c, u, &f);
    return (rigid){cb_root_lerp(a, 0, f), c->root_moves_y ? cb_root_lerp(a, 1, f) : 0.0,
                   cb_root_lerp(a, 2, f), c->root_turns ? cb_root_lerp(a, 3, f) : 0.0};
}

cb_clip_root_motion cb_clip_query_root_motion(const cb_clip *c)
{
    cb_clip_root_motion m = {.mode = CB_ROOT_MOTION_NONE, .joint = c->root_joint};
    if (c->root == NULL) {
        return m;
    }
    m.origin[0] = c->root_origin[0];
    m.origin[1] = c->root_origin[1];
    m.origin[2] = c->root_origin[2];
    m.origin_yaw = c->root_origin[3];
    const float *end = c->root + (size_t)c->intervals * 4;
    double d = c->duration_s;
    m.mode = c->root_mode;
    m.displacement[0] = end[0];
    m.displacement[1] = end[1];
    m.displacement[2] = end[2];
    m.displacement_yaw = end[3];
    m.forward_mps = (float)(end[2] / d);
    m.right_mps = (float)(-end[0] / d);
    m.speed_mps = (float)(sqrt((double)end[0] * end[0] + (double)end[2] * end[2]) / d);
    m.yaw_rate_rps = (float)(end[3] / d);
    return m;
}

/* The delta of a clip with a root track from normalized time from to to, |to - from| <= 2^24
 * (checked by the callers). */
SM_INLINE cb_root_delta root_delta(const struct cb_clip *c, float from, float to)
{
    rigid delta;
    if (c->looping) {
        /* T(u) = C^floor(u) F(frac(u)); the delta T(u0)^-1 T(u1) needs only the difference of the
         * cycle counts: F(f0)^-1 C^(k1 - k0) F(f1). */
        double k0 = floor((double)from), k1 = floor((double)to);
        rigid f0 = root_at(c, (double)from - k0), f1 = root_at(c, (double)to - k1);
        double dk = k1 - k0;
        /* A frame moves by less than one cycle: dk is 0 or 1 in practice, where the end point
         * is f1 itself or one cycle on. Other counts take the general power. */
        rigid target;
        if (dk == 0.0) {
            target = f1;
        } else if (dk == 1.0) {
            target = rigid_compose(root_at(c, 1.0), f1);
        } else {
            rigid cycle = root_at(c, 1.0);
            rigid ck = dk > 0.0 ? rigid_power(cycle, (uint64_t)dk)
                                : rigid_power(rigid_inverse(cycle), (uint64_t)-dk);
            target = rigid_compose(ck, f1);
        }
        delta = rigid_between(f0, target);
    } else {
        double u0 = from < 0.0f ? 0.0 : from > 1.0f ? 1.0 : from;
        double u1 = to < 0.0f ? 0.0 : to > 1.0f ? 1.0 : to;
        delta = rigid_between(root_at(c, u0), root_at(c, u1));
    }
    return (cb_root_delta){{(float)delta.x, (float)delta.y, (float)delta.z}, (float)delta.yaw};
}

cb_result cb_clip_root_delta(const cb_clip *c, float from, float to, cb_root_delta *out)
{
    if (c == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(from) || !isfinite(to)) {
        return CB_ERR_NOT_FINITE;
    }
    if (!cb_root_span_ok(from, to)) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    *out = c->root != NULL ? root_delta(c, from, to) : (cb_root_delta){{0, 0, 0}, 0};
    return CB_OK;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
cb_root_delta
cb_clip_root_delta_general(const struct cb_clip *c, float from, float to)
{
    return root_delta(c, from, to);
}

/* The blend of `count` entries (cb_clip_blend_root_motion without its checks). */
static void blend_root_motion_trusted(const cb_root_motion_entry *entries, size_t count,
                                      cb_root_delta *out)
{
    cb_root_blend b = cb_root_blend_start();
    for (size_t k = 0; k < count; ++k) {
        const cb_root_motion_entry *e = &entries[k];
        if (e->weight == 0.0f) {
            b.refused = b.refused || !cb_root_span_ok(e->from, e->to);
            continue;
        }
        cb_root_blend_add(&b, e->clip, e->from, e->to, e->weight);
    }
    *out = cb_root_blend_result(&b);
}

cb_result cb_clip_blend_root_motion(const cb_root_motion_entry *entries, size_t count,
                                    cb_root_delta *out)
{
    if (out == NULL || (entries == NULL && count > 0)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t k = 0; k < count; ++k) {
        const cb_root_motion_entry *e = &entries[k];
        if (e->clip == NULL) {
            return CB_ERR_NULL_ARGUMENT;
        }
        if (!isfinite(e->weight) || !isfinite(e->from) || !isfinite(e->to)) {
            return CB_ERR_NOT_FINITE;
        }
        if (e->weight < 0.0f || !cb_root_span_ok(e->from, e->to)) {
            return CB_ERR_INVALID_ARGUMENT;
        }
    }
    blend_root_motion_trusted(entries, count, out);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Markers                                                                                    */

uint32_t cb_clip_marker_count(const cb_clip *c)
{
    return c != NULL ? c->marker_count : 0;
}

cb_result cb_clip_query_marker(const cb_clip *c, uint32_t index, cb_clip_marker *out)
{
    if (c == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (index >= c->marker_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    float t = c->marker_times[index];
    *out = (cb_clip_marker){
        .name = c->marker_names + (size_t)index * CB_MARKER_NAME_SLOT,
        .name_hash = c->marker_hashes[index],
        .time = t,
        .time_s = (float)((double)t * c->duration_s),
        .event_only = c->marker_event_only[index],
    };
    return CB_OK;
}

cb_result cb_clip_find_marker(const cb_clip *c, uint32_t name_hash, uint32_t start, uint32_t *index)
{
    if (c == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t i = start; i < c->marker_count; ++i) {
        if (c->marker_hashes[i] == name_hash) {
            *index = i;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

cb_result cb_clip_find_marker_name(const cb_clip *c, const char *name, uint32_t *index)
{
    if (c == NULL || name == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    uint32_t h = cb_name_hash(name);
    for (uint32_t i = 0; i < c->marker_count; ++i) {
        if (c->marker_hashes[i] == h &&
            strcmp(c->marker_names + i * CB_MARKER_NAME_SLOT, name) == 0) {
            *index = i;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

/* ------------------------------------------------------------------------------------------ */
/* Clips from stored frames (crowdblend/pack.h loads clips this way)                          */

/* Defaults of a frames desc, resolved once. */
cb_clip_frames_desc cb_clip_query_frames_desc(const cb_clip_frames_desc *desc)
{
    cb_clip_frames_desc d = {0};
    if (desc != NULL) {
        d = *desc;
    }
    if (d.name == NULL) {
        d.name = "clip";
    }
    if (d.wrap == _CB_CLIP_WRAP_DEFAULT) {
        d.wrap = CB_CLIP_WRAP_LOOP;
    }
    if (d.root_motion == _CB_ROOT_MOTION_DEFAULT) {
        d.root_motion = CB_ROOT_MOTION_NONE;
    }
    return d;
}

static void stored_marker(const void *ctx, size_t i, const char **name, float *time)
{
    const cb_clip_frames_desc *d = ctx;
    *name = d->markers[i].name;
    *time = d->markers[i].time;
}

static const char *stored_marker_name(const void *array, size_t i)
{
    return ((const cb_clip_marker *)array)[i].name;
}

static cb_result validate_stored_markers(const cb_clip_frames_desc *d, cb_error *err)
{
    cb_result r = check_marker_names(d->name, d->markers, d->marker_count, stored_marker_name, err);
    if (r != CB_OK) {
        return r;
    }
    const bool looping = d->wrap == CB_CLIP_WRAP_LOOP;
    for (size_t i = 0; i < d->marker_count; ++i) {
        const cb_clip_marker *m = &d->markers[i];
        if (!isfinite(m->time)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "clip \"%s\": markers[%zu].time is %g",
                                d->name, i, (double)m->time);
        }
        if (m->time < 0.0f || m->time > 1.0f || (looping && m->time == 1.0f) ||
            (i > 0 && m->time < d->markers[i - 1].time)) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "clip \"%s\": markers[%zu].time = %g: normalized times lie in "
                                "[0, 1%s and are sorted",
                                d->name, i, (double)m->time, looping ? ")" : "]");
        }
    }
    return check_marker_pairs(d->name, d->marker_count, stored_marker, d, err);
}

/* The frames desc's canaries, allocator and name. */
static cb_result check_frames_basics(const cb_clip_frames_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "clip frames desc: a canary is not 0");
    }
    cb_result r = cb_allocator_check(&d->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    size_t name_len = strlen(d->name);
    if (name_len == 0 || name_len > CB_JOINT_NAME_MAX) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip frames desc: name has %zu bytes (1..%d)", name_len,
                            CB_JOINT_NAME_MAX);
    }
    return CB_OK;
}

/* The duration and the number of frames. */
static cb_result check_frames_timing(const cb_clip_frames_desc *d, cb_error *err)
{
    if (!isfinite(d->duration_s) || !(d->duration_s > 0.0f)) {
        return cb_error_set(
            err, isfinite(d->duration_s) ? CB_ERR_INVALID_ARGUMENT : CB_ERR_NOT_FINITE,
            "clip \"%s\": duration_s = %g must be finite and > 0", d->name, (double)d->duration_s);
    }
    if (d->frame_count < 2 || d->frame_count > CB_CLIP_MAX_FRAMES) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": frame_count %u is outside 2..%d", d->name, d->frame_count,
                            CB_CLIP_MAX_FRAMES);
    }
    return CB_OK;
}

/* Wrap and root motion: valid values, root motion only on a root joint (of n) of a clip that is
 * not additive. */
static cb_result check_frames_modes(const cb_clip_frames_desc *d, size_t n, cb_error *err)
{
    if (d->wrap <= _CB_CLIP_WRAP_DEFAULT || d->wrap >= _CB_CLIP_WRAP_COUNT ||
        d->root_motion <= _CB_ROOT_MOTION_DEFAULT || d->root_motion >= _CB_ROOT_MOTION_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": wrap or root_motion is not a valid enum value", d->name);
    }
    const bool root = d->root_motion != CB_ROOT_MOTION_NONE;
    if (root && d->additive) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": additive clips carry no root motion", d->name);
    }
    if (root && (d->root_joint >= n || cb_skeleton_parents(d->skeleton)[d->root_joint] != -1)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": root_joint %u is not a root joint of the skeleton",
                            d->name, d->root_joint);
    }
    return CB_OK;
}

/* The frames (when with_frames) and the root track (when the clip has root motion): present and
 * long enough for frame_count frames of n joints. */
static cb_result check_frames_spans(const cb_clip_frames_desc *d, size_t n, bool with_frames,
                                    cb_error *err)
{
    const bool root = d->root_motion != CB_ROOT_MOTION_NONE;
    size_t stride = d->has_scale ? CB_CLIP_STRIDE_SCALE : CB_CLIP_STRIDE_NO_SCALE;
    size_t need = (size_t)d->frame_count * n * stride;
    if ((with_frames && d->frames.ptr == NULL) || (root && d->root_track.ptr == NULL)) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "clip \"%s\": %s is NULL", d->name,
                            d->root_track.ptr != NULL || !root ? "frames" : "root_track");
    }
    const bool short_frames = with_frames && d->frames.count < need;
    if (short_frames || (root && d->root_track.count < (size_t)d->frame_count * 4)) {
        bool fr = short_frames;
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "clip \"%s\": %s has %zu floats, needs %zu",
                            d->name, fr ? "frames" : "root_track",
                            fr ? d->frames.count : d->root_track.count,
                            fr ? need : (size_t)d->frame_count * 4);
    }
    return CB_OK;
}

/* The root origin (position and yaw): finite. */
static cb_result check_root_origin(const cb_clip_frames_desc *d, cb_error *err)
{
    for (int k = 0; k < 4; ++k) {
        float v = k < 3 ? d->root_origin[k] : d->root_origin_yaw;
        if (!isfinite(v)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "clip \"%s\": root origin %d is %g",
                                d->name, k, (double)v);
        }
    }
    return CB_OK;
}

/* The header fields of a frames desc: everything but the per-value checks. */
/* with_frames: d's frames are the clip's keys (false: a compressed clip's are,
 * cb_clip_create_packed). */
static cb_result validate_frames_header(const cb_clip_frames_desc *d, size_t n, bool with_frames,
                                        cb_error *err)
{
    cb_result r = check_frames_basics(d, err);
    if (r == CB_OK) {
        r = check_frames_timing(d, err);
    }
    if (r == CB_OK) {
        r = check_frames_modes(d, n, err);
    }
    if (r == CB_OK) {
        r = check_frames_spans(d, n, with_frames, err);
    }
    if (r == CB_OK) {
        r = check_root_origin(d, err);
    }
    return r == CB_OK ? validate_stored_markers(d, err) : r;
}

static const char *const frame_component[10] = {"tx", "ty", "tz",   "qx",   "qy",
                                                "qz", "qw", "sx-1", "sy-1", "sz-1"};

/* Every stored value: finite, unit rotations, one hemisphere along time, the looping seam. */
static cb_result validate_frame_values(const cb_clip_frames_desc *d, size_t n, cb_error *err)
{
    const size_t stride = d->has_scale ? CB_CLIP_STRIDE_SCALE : CB_CLIP_STRIDE_NO_SCALE;
    const float *v = d->frames.ptr;
    for (uint32_t f = 0; f < d->frame_count; ++f) {
        for (size_t j = 0; j < n; ++j) {
            const float *x = v + ((size_t)f * n + j) * stride;
            for (size_t k = 0; k < stride; ++k) {
                if (!isfinite(x[k])) {
                    return cb_error_set(err, CB_ERR_NOT_FINITE,
                                        "clip \"%s\": frames: frame %u joint %zu %s is %g", d->name,
                                        f, j, frame_component[k], (double)x[k]);
                }
            }
            const float *q = x + CB_CLIP_Q;
            double len = sqrt(cb_rotation_length2(q));
            if (!(fabs(len - 1.0) <= CB_CLIP_FRAMES_UNIT_TOLERANCE)) {
                return cb_error_set(err, CB_ERR_DEGENERATE,
                                    "clip \"%s\": frames: frame %u joint %zu rotation has length "
                                    "%g, not 1",
                                    d->name, f, j, len);
            }
            if (f > 0) {
                const float *p = x - n * stride + CB_CLIP_Q;
                double dot = (double)p[0] * q[0] + (double)p[1] * q[1] + (double)p[2] * q[2] +
                             (double)p[3] * q[3];
                if (dot < 0.0) {
                    return cb_error_set(err, CB_ERR_DEGENERATE,
                                        "clip \"%s\": frames: frame %u joint %zu rotation is in "
                                        "the other hemisphere from frame %u's",
                                        d->name, f, j, f - 1);
                }
            }
        }
    }
    if (d->wrap != CB_CLIP_WRAP_LOOP) {
        return CB_OK;
    }
    const float *last = v + (size_t)(d->frame_count - 1) * n * stride;
    for (size_t j = 0; j < n; ++j) {
        const float *a = v + j * stride, *b = last + j * stride;
        float sign =
            (double)a[3] * b[3] + (double)a[4] * b[4] + (double)a[5] * b[5] + (double)a[6] * b[6] <
                    0.0
                ? -1.0f
                : 1.0f;
        for (size_t k = 0; k < stride; ++k) {
            float want = k >= CB_CLIP_Q && k < CB_CLIP_S ? sign * a[k] : a[k];
            if (!(fabsf(b[k] - want) <= CB_CLIP_FRAMES_SEAM_TOLERANCE)) {
                return cb_error_set(err, CB_ERR_DEGENERATE,
                                    "clip \"%s\": frames: a looping clip's last frame repeats its "
                                    "first, but joint %zu %s is %g, not %g",
                                    d->name, j, frame_component[k], (double)b[k], (double)want);
            }
        }
    }
    return CB_OK;
}

static cb_result validate_root_track(const cb_clip_frames_desc *d, cb_error *err)
{
    if (d->root_motion == CB_ROOT_MOTION_NONE) {
        return CB_OK;
    }
    const float *r = d->root_track.ptr;
    for (size_t i = 0; i < (size_t)d->frame_count * 4; ++i) {
        if (!isfinite(r[i])) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "clip \"%s\": root_track[%zu] is %g",
                                d->name, i, (double)r[i]);
        }
    }
    if (r[0] != 0.0f || r[1] != 0.0f || r[2] != 0.0f || r[3] != 0.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "clip \"%s\": root_track: frame 0 must be zero (the track is relative "
                            "to it)",
                            d->name);
    }
    return CB_OK;
}

/* Packs per-joint float frames into SoA groups; padding lanes hold identity (zero deltas). */
static void pack_stored_frames(const float *src, size_t n, struct cb_clip *c, float *dst)
{
    const size_t w = CB_SIMD_WIDTH, stride = c->stride;
    for (uint32_t f = 0; f <= c->intervals; ++f) {
        for (size_t g = 0; g < c->group_count; ++g) {
            float *grp = dst + (size_t)f * cb_clip_frame_floats(c) + g * stride * w;
            for (size_t l = 0; l < w; ++l) {
                static const float identity[CB_CLIP_STRIDE_SCALE] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
                size_t j = g * w + l;
                const float *v = j < n ? src + ((size_t)f * n + j) * stride : identity;
                for (size_t k = 0; k < stride; ++k) {
                    grp[k * w + l] = v[k];
                }
            }
        }
    }
}

/* Every check of a resolved frames desc, in order; with_frames as validate_frames_header. */
static cb_result validate_stored(const cb_clip_frames_desc *d, size_t n, bool with_frames,
                                 cb_error *err)
{
    cb_result r = validate_frames_header(d, n, with_frames, err);
    if (r == CB_OK && with_frames) {
        r = validate_frame_values(d, n, err);
    }
    return r == CB_OK ? validate_root_track(d, err) : r;
}

/* The header of a clip from stored keys (probe: its group count and stride); the block's
 * pointers are place_block's. */
static struct cb_clip stored_header(const cb_clip_frames_desc *d, size_t n,
                                    const struct cb_clip *probe)
{
    const uint32_t intervals = d->frame_count - 1;
    return (struct cb_clip){
        .skeleton_signature = cb_skeleton_signature(d->skeleton),
        .joint_count = (uint32_t)n,
        .group_count = probe->group_count,
        .intervals = intervals,
        .stride = probe->stride,
        .duration_s = d->duration_s,
        .intervals_f = (float)intervals,
        .looping = d->wrap == CB_CLIP_WRAP_LOOP,
        .additive = d->additive,
        .has_scale = d->has_scale,
        .root_mode = d->root_motion,
        .root_joint = d->root_joint,
        .root_origin = {d->root_origin[0], d->root_origin[1], d->root_origin[2],
                        d->root_origin_yaw},
    };
}

/* Copies the validated markers, already sorted by normalized time, into the block. */
static void copy_stored_markers(const cb_clip_frames_desc *d, unsigned char *block,
                                const clip_layout *lay)
{
    float *times = (float *)(block + lay->off_mtimes);
    uint32_t *hashes = (uint32_t *)(block + lay->off_mhashes);
    char *names = (char *)(block + lay->off_mnames);
    bool *flags = (bool *)(block + lay->off_mflags);
    for (size_t i = 0; i < d->marker_count; ++i) {
        times[i] = d->markers[i].time;
        hashes[i] = cb_name_hash(d->markers[i].name);
        flags[i] = d->markers[i].event_only;
        memset(names + i * CB_MARKER_NAME_SLOT, 0, CB_MARKER_NAME_SLOT);
        memcpy(names + i * CB_MARKER_NAME_SLOT, d->markers[i].name, strlen(d->markers[i].name));
    }
}

/* The one constructor of clips from stored keys: frames (packed NULL) or a compressed clip. */
static cb_result create_stored(const cb_clip_frames_desc *desc, const struct cb_cclip *packed,
                               cb_clip **out, cb_error *err)
{
    if (desc == NULL || out == NULL || desc->skeleton == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_clip_create_from_frames: %s is NULL",
                            desc == NULL  ? "desc"
                            : out == NULL ? "out"
                                          : "skeleton");
    }
    cb_clip_frames_desc d = cb_clip_query_frames_desc(desc);
    const cb_skeleton *skel = d.skeleton;
    const size_t n = cb_skeleton_joint_count(skel);
    cb_result r = validate_stored(&d, n, packed == NULL, err);
    if (r != CB_OK) {
        return r;
    }
    const bool root = d.root_motion != CB_ROOT_MOTION_NONE;
    struct cb_clip probe = {
        .group_count = (uint32_t)cb_skeleton_group_count(skel),
        .stride = d.has_scale ? CB_CLIP_STRIDE_SCALE : CB_CLIP_STRIDE_NO_SCALE,
    };
    size_t root_bytes = root ? (size_t)d.frame_count * 4 * sizeof(float) : 0;
    size_t frame_floats = packed == NULL ? cb_clip_frame_floats(&probe) * d.frame_count : 0;
    clip_layout lay = layout_of(frame_floats, root_bytes, d.marker_count);
    unsigned char *block = cb_alloc(&d.allocator, lay.total, cb_simd_group_align());
    if (block == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "clip \"%s\": %zu bytes", d.name, lay.total);
    }
    struct cb_clip *c = (struct cb_clip *)block;
    *c = stored_header(&d, n, &probe);
    place_block(c, block, &lay, d.allocator, root, d.name);
    copy_stored_markers(&d, block, &lay);
    if (packed != NULL) {
        c->frames = NULL;
        c->packed = packed;
    } else {
        pack_stored_frames(d.frames.ptr, n, c, (float *)(block + lay.off_frames));
    }
    if (root) {
        store_root_track(c, block, &lay, d.root_track.ptr);
    }
    *out = c;
    return CB_OK;
}

cb_result cb_clip_create_from_frames(const cb_clip_frames_desc *desc, cb_clip **out, cb_error *err)
{
    return create_stored(desc, NULL, out, err);
}

cb_result cb_clip_create_packed(const cb_clip_frames_desc *d, const struct cb_cclip *packed,
                                cb_clip **out, cb_error *err)
{
    if (packed == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_clip_create_packed: packed is NULL");
    }
    return create_stored(d, packed, out, err);
}

size_t cb_clip_frame_stride(const cb_clip *c)
{
    return c != NULL ? c->stride : 0;
}

cb_result cb_clip_read_frames(const cb_clip *c, cb_float_span out)
{
    if (c == NULL || out.ptr == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    const size_t n = c->joint_count, stride = c->stride, w = CB_SIMD_WIDTH;
    if (out.count < ((size_t)c->intervals + 1) * n * stride) {
        return CB_ERR_SPAN_TOO_SHORT;
    }
    if (c->packed != NULL) {
        /* Decoded at the source frames as a raw pack clip would hold them. */
        return cb_cclip_write_frames(c->packed, stride, c->looping, &c->allocator, out.ptr);
    }
    for (uint32_t f = 0; f <= c->intervals; ++f) {
        for (size_t j = 0; j < n; ++j) {
            const float *grp = cb_clip_group_ptr(c, f, j / w);
            for (size_t k = 0; k < stride; ++k) {
                out.ptr[((size_t)f * n + j) * stride + k] = grp[k * w + j % w];
            }
        }
    }
    return CB_OK;
}

cb_result cb_clip_read_root_track(const cb_clip *c, cb_float_span out)
{
    if (c == NULL || out.ptr == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (c->root == NULL) {
        return CB_ERR_NOT_FOUND;
    }
    size_t count = ((size_t)c->intervals + 1) * 4;
    if (out.count < count) {
        return CB_ERR_SPAN_TOO_SHORT;
    }
    memcpy(out.ptr, c->root, count * sizeof(float));
    return CB_OK;
}
