/* Inverse kinematics post-process jobs: two-bone IK and aim IK over a chain (crowdblend/ik.h).
 *
 * Each job here is scalar: it solves one chain of one character, a few dozen dependent
 * operations with nothing W-wide in them (the SoA joint groups are read and written a lane at a
 * time). Two-bone jobs on one chain of many characters (the graph's legs) are also solved W at
 * a time, one character per lane, by cb_ik_two_bone_many_unchecked (ik_many.c), and so are
 * stride warps (cb_ik_stride_many_unchecked), the foot lock's reaches
 * (cb_ik_two_bone_reach_many, ik_many.c) and orientation warps (the graph's orientation step
 * over a chunk) by cb_ik_orient_many_unchecked (ik_orient_many.c); their lanes run this file's
 * operations in the same order: the same bits.
 *
 * Model space comes either from the caller's local-to-model matrices or from the local pose:
 * the model matrix of a chain joint is the product of the local matrices on its path from the
 * root, accumulated bottom-up (acc = local[parent] * acc), which needs no scratch and only the
 * joints on the path; those products run on 4-float columns (frame4), x, y and z at once, with
 * the scalar code's operations and bits. docs/performance.md compares the two sources.
 *
 * Numerical choices, each to keep float precision where textbook IK loses it:
 *  - No acos or atan anywhere in two-bone IK. The mid joint's turn is built from half-angle
 *    cosines and sines: the target bend comes from cos^2(b/2) = (d^2 - dmin^2) / (4 p q) and
 *    sin^2(b/2) = (dmax^2 - d^2) / (4 p q), whose factors (d - dmin, dmax - d) are computed as
 *    differences of lengths, and the current bend from the chord construction of half_angle.
 *    acos(x) near x = 1 (a nearly straight limb) loses half the digits: about 5e-4 rad in
 *    float, 0.2 mm at the end of a 0.43 m bone.
 *  - Rotations between vectors use the half-way construction (a x b, 1 + a.b), normalized, with
 *    1 + a.b taken from |a + b|^2 (see from_to) and a fixed perpendicular axis when the vectors
 *    are opposite.
 *  - Coordinates are bounded (CB_IK_MAX_COORDINATE = 1e9), so no square or cross product of two
 *    of them overflows, and every division is by a length checked against a threshold first:
 *    with finite, bounded input no NaN can reach a pose.
 * Accuracy (tests/test_ik.c, maxima over the three test configurations): the end of a leg or
 * arm lands within 5e-7 m of a reachable target; on random chains with scale, within 4.3e-7 of
 * the coordinates' magnitude; an aimed axis points within 1e-6 rad of its target. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "base/scalar_math.h"
#include "crowdblend/ik.h"
#include "ik/ik_impl.h"
#include "ik/ik_kernels.h"
#include "simd/col4.h"
#include "simd/detmath.h"
#include "simd/lane.h"

/* The helpers below are small and called on one long dependency chain; inlining them all
 * (also at -O0, in the sanitizer build) made two-bone IK about a quarter faster. */
#if defined(__GNUC__) || defined(__clang__)
#define IK_INLINE static inline __attribute__((always_inline))
#else
#define IK_INLINE static inline
#endif

typedef cb_fvec3 v3;
typedef cb_fquat qt;

/* An affine model-space matrix: linear part as three columns, and the position. */
typedef struct frame {
    v3 c[3];
    v3 p;
} frame;

/* Thresholds: ik/ik_impl.h (the two-bone lane form in ik_many.c uses the same). */

/* ------------------------------------------------------------------------------------------ */
/* Vectors and quaternions (base/scalar_math.h has the shared ones)                           */

IK_INLINE v3 v3_make(const float a[3])
{
    return (v3){a[0], a[1], a[2]};
}

/* (cos(t/2), sin(t/2)) for the angle t in (-pi, pi] with cos t : sin t = c : s (any common
 * positive scale r = |(c, s)|; both 0 gives t = 0). The two chord forms (r + c, s) and
 * (s, r - c) are both proportional to the answer; each is used where it does not cancel, so the
 * result is accurate to a few ulp at every angle, pi included. cos(t/2) >= 0. */
IK_INLINE void half_angle(float c, float s, float *ch, float *sh)
{
    float r = sqrtf(c * c + s * s);
    float x, y;
    if (c >= 0.0f) {
        x = r + c, y = s;
    } else {
        float sign = s < 0.0f ? -1.0f : 1.0f;
        x = sign * s, y = sign * (r - c);
    }
    float n2 = x * x + y * y;
    if (!(n2 > 0.0f)) {
        *ch = 1.0f, *sh = 0.0f;
        return;
    }
    float inv = 1.0f / sqrtf(n2);
    *ch = x * inv, *sh = y * inv;
}

/* fmaxf(a, b) for a b that is not NaN, without libm's call (GCC calls it at -O2, the
 * instruction differing from it on NaN): b when a is NaN or a <= b (a tie of zeros gives b),
 * which is what glibc's fmaxf returns on x86-64 for every such pair (its maxss). In the solve a
 * is a NaN-free product or, for b = 0, a value whose -0 and NaN both become +0 under either. */
IK_INLINE float max_of(float a, float b)
{
    return a > b ? a : b;
}

/* ------------------------------------------------------------------------------------------ */
/* Frames                                                                                     */

IK_INLINE v3 lin(const frame *f, v3 v)
{
    return cb_fv_add(cb_fv_add(cb_fv_scale(f->c[0], v.x), cb_fv_scale(f->c[1], v.y)),
                     cb_fv_scale(f->c[2], v.z));
}

/* A frame with each column in a 4-float SIMD column (the fourth lane unused): the products of
 * local matrices run on it, each column's three-term sum for x, y and z at once. The same
 * multiplications and additions in the same order as lin ((c0 x + c1 y) + c2 z, then + p for a
 * position), lane by lane and never fused (simd/col4.h), so the same bits as scalar code. */
typedef struct frame4 {
    cb_col4 c[4]; /* the linear part's three columns, then the position */
} frame4;

/* The local matrix T R S of joint j (col4.h's form of Shoemake's formula, the bits of
 * cb_fq_scaled_columns and of local-to-model). */
IK_INLINE frame4 local_frame4(const cb_xform_group *pose, size_t j)
{
    cb_xform x = cb_lane_xform(pose, j);
    frame4 f;
    cb_col4_scaled_columns(x.rotation, x.scale, f.c);
    f.c[3] = cb_col4_setr(x.translation[0], x.translation[1], x.translation[2], 0.0f);
    return f;
}

/* a times the column v: lin's sum. */
IK_INLINE cb_col4 lin4(const frame4 *a, cb_col4 v)
{
    cb_col4 r = cb_col4_mul(a->c[0], cb_col4_splat_x(v));
    r = cb_col4_fmadd(a->c[1], cb_col4_splat_y(v), r);
    return cb_col4_fmadd(a->c[2], cb_col4_splat_z(v), r);
}

/* a * b, with compose's bits. */
IK_INLINE frame4 compose4(const frame4 *a, const frame4 *b)
{
    frame4 r;
    for (int k = 0; k < 3; ++k) {
        r.c[k] = lin4(a, b->c[k]);
    }
    r.c[3] = cb_col4_add(lin4(a, b->c[3]), a->c[3]);
    return r;
}

/* f's 12 floats into a frame: each column stored whole over the next one's first float, which
 * the next store writes again; the last through a copy. */
IK_INLINE void unpad(const frame4 *f, frame *out)
{
    float *e = (float *)out, p[4];
    for (int k = 0; k < 3; ++k) {
        cb_col4_storeu(e + 3 * k, f->c[k]);
    }
    cb_col4_storeu(p, f->c[3]);
    memcpy(e + 9, p, 3 * sizeof(float));
}

/* The product of the local matrices on the path from `stop` (exclusive; -1: the root, giving
 * model space) down to j, accumulated bottom-up. j must be a descendant of stop. */
IK_INLINE frame4 path_frame(const struct cb_skeleton *s, const cb_xform_group *pose, size_t j,
                            int32_t stop)
{
    frame4 acc = local_frame4(pose, j);
    for (int32_t p = s->parents[j]; p != stop; p = s->parents[p]) {
        frame4 parent = local_frame4(pose, (size_t)p);
        acc = compose4(&parent, &acc);
    }
    return acc;
}

/* path_frame's position alone, bit for bit: a product's position column depends only on the
 * position column below it and the parent's frame, so neither j's rotation nor the products'
 * linear parts are needed. */
static v3 path_position(const struct cb_skeleton *s, const cb_xform_group *pose, size_t j,
                        int32_t stop)
{
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    cb_lane_get(pose, CB_LANE_COMPONENTS, j, CB_LANE_T, 3, t);
    cb_col4 p = cb_col4_loadu(t);
    for (int32_t a = s->parents[j]; a != stop; a = s->parents[a]) {
        frame4 parent = local_frame4(pose, (size_t)a);
        p = cb_col4_add(lin4(&parent, p), parent.c[3]);
    }
    cb_col4_storeu(t, p);
    return (v3){t[0], t[1], t[2]};
}

/* Joint j's matrix in a local-to-model output. */
IK_INLINE frame model_frame(const float *m, cb_matrix_layout layout, size_t j)
{
    frame f;
    if (layout == CB_MATRIX_LAYOUT_MAT3X4) {
        const float *r = m + 12 * j; /* row-major rows 0..2 */
        for (int k = 0; k < 3; ++k) {
            f.c[k] = (v3){r[k], r[4 + k], r[8 + k]};
        }
        f.p = (v3){r[3], r[7], r[11]};
    } else {
        const float *c = m + 16 * j; /* column-major */
        for (int k = 0; k < 3; ++k) {
            f.c[k] = (v3){c[4 * k], c[4 * k + 1], c[4 * k + 2]};
        }
        f.p = (v3){c[12], c[13], c[14]};
    }
    return f;
}

/* Model frames of the chain joints[0..n), each a descendant of the one before, from the model
 * matrices when the job has them, else from the pose. */
static void chain_frames(const struct cb_skeleton *s, const cb_xform_group *pose,
                         cb_float_cspan model, cb_matrix_layout layout, const uint32_t *joints,
                         size_t n, frame *out)
{
    if (model.ptr != NULL) {
        for (size_t k = 0; k < n; ++k) {
            out[k] = model_frame(model.ptr, layout, joints[k]);
        }
        return;
    }
    /* One inlined path_frame per joint (its frame returned in registers, not through memory):
     * from the root for the first, from the joint before for the others. */
    frame4 acc;
    for (size_t k = 0; k < n; ++k) {
        int32_t stop = k == 0 ? -1 : (int32_t)joints[k - 1];
        frame4 rel = path_frame(s, pose, joints[k], stop);
        acc = k == 0 ? rel : compose4(&acc, &rel);
        unpad(&acc, &out[k]);
    }
}

/* True when every element of the chain's frames is within +-CB_IK_MAX_COORDINATE (so finite)
 * and every local rotation of the chain finite: the usual case, decided four elements at a time
 * (|x| <= M is false for NaN and for an infinity). check_chain's element-by-element pass, which
 * names the first offender, runs only when this fails, so the verdict and the message are the same.
 * The rotations are read only when the frames came from model matrices (`from_model`): a frame
 * computed from the pose holds the joint's local matrix as the innermost factor of its
 * products, and a non-finite rotation component gives non-finite elements in the local
 * matrix's columns (each of x, y, z is squared in two diagonal elements, w multiplies the three
 * others; Inf times 0 is NaN), which every product and sum above carries into the frame's
 * columns: the frames' test alone then gives the same verdict. */
_Static_assert(sizeof(frame) == 12 * sizeof(float), "a frame is 12 packed floats");

static bool chain_in_range(const frame *f, const cb_xform_group *pose, bool from_model,
                           const uint32_t *joints, size_t n)
{
    const cb_col4 max_coordinate = cb_col4_set1(CB_IK_MAX_COORDINATE);
    const cb_col4 max_finite = cb_col4_set1(FLT_MAX);
    if (n == 0) {
        return true; /* nothing to check (and no first column to load) */
    }
    const float *e = (const float *)f; /* 12 n floats: 3 n columns of 4 */
    cb_col4 ok = cb_col4_le(cb_col4_abs(cb_col4_loadu(e)), max_coordinate);
    for (size_t k = 4; k < 12 * n; k += 4) {
        ok = cb_col4_and(ok, cb_col4_le(cb_col4_abs(cb_col4_loadu(e + k)), max_coordinate));
    }
    for (size_t k = 0; k < n && from_model; ++k) {
        float q[4];
        cb_lane_get(pose, CB_LANE_COMPONENTS, joints[k], CB_LANE_Q, 4, q);
        ok = cb_col4_and(ok, cb_col4_le(cb_col4_abs(cb_col4_loadu(q)), max_finite));
    }
    return cb_col4_all(ok);
}

/* The run-time checks of a chain: its frames finite and within range, and the local rotations
 * the job will multiply finite (with model matrices given, `from_model`, they are not otherwise
 * read). */
static cb_result check_chain(const frame *f, const cb_xform_group *pose, bool from_model,
                             const uint32_t *joints, size_t n, const char *job, cb_error *err)
{
    if (CB_LIKELY(chain_in_range(f, pose, from_model, joints, n))) {
        return CB_OK;
    }
    for (size_t k = 0; k < n; ++k) {
        const v3 *c = f[k].c, *p = &f[k].p;
        const float elems[12] = {c[0].x, c[0].y, c[0].z, c[1].x, c[1].y, c[1].z,
                                 c[2].x, c[2].y, c[2].z, p->x,   p->y,   p->z};
        for (int e = 0; e < 12; ++e) {
            float x = elems[e];
            if (!isfinite(x)) {
                return cb_error_set(err, CB_ERR_NOT_FINITE,
                                    "%s: the model transform of joint %u is not finite "
                                    "(NaN or Inf in the pose or model matrices)",
                                    job, joints[k]);
            }
            if (fabsf(x) > CB_IK_MAX_COORDINATE) {
                return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                    "%s: the model transform of joint %u has %g, beyond "
                                    "CB_IK_MAX_COORDINATE",
                                    job, joints[k], (double)x);
            }
        }
        float q[4];
        cb_lane_get(pose, CB_LANE_COMPONENTS, joints[k], CB_LANE_Q, 4, q);
        for (size_t comp = 0; comp < 4; ++comp) {
            if (!isfinite(q[comp])) {
                return cb_error_set(err, CB_ERR_NOT_FINITE,
                                    "%s: the local rotation of joint %u is not finite", job,
                                    joints[k]);
            }
        }
    }
    return CB_OK;
}

/* A model-space rotation q (about any point) as a correction of the joint whose model frame is
 * f: the same rotation seen in the joint's frame, R^T q R, whose axis is R^T (q.xyz) for the
 * frame's rotation R. With f = s R (uniform scale) R^T v is f^T v / s; normalizing f^T v to
 * |v| gives it without knowing s. */
IK_INLINE qt to_local(const frame *f, qt q)
{
    v3 v = {q.x, q.y, q.z};
    float vl = cb_fv_len(v);
    v3 y = {cb_fv_dot(f->c[0], v), cb_fv_dot(f->c[1], v), cb_fv_dot(f->c[2], v)};
    float yl = cb_fv_len(y);
    if (!(vl > 0.0f) || !(yl > 0.0f)) {
        return cb_fq_identity();
    }
    y = cb_fv_scale(y, vl / yl);
    return (qt){y.x, y.y, y.z, q.w};
}

/* ------------------------------------------------------------------------------------------ */
/* Validation shared by both jobs                                                             */

typedef struct io_fields {
    const char *job;
    const struct cb_skeleton *skeleton;
    cb_xform_group_cspan pose;
    cb_xform_group_span out;
    cb_float_cspan model;
    cb_matrix_layout model_layout;
    float weight;
} io_fields;

/* The output pose, when given: long enough, aligned, and either the input pose itself
 * (corrected in place) or apart from it. */
static cb_result check_out(const io_fields *f, cb_error *err)
{
    const struct cb_skeleton *s = f->skeleton;
    const size_t align = cb_simd_group_align();
    if (f->out.count < s->group_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "%s: out has %zu groups, needs %zu", f->job,
                            f->out.count, s->group_count);
    }
    if (!cb_is_aligned(f->out.ptr, align)) {
        return cb_error_set(err, CB_ERR_MISALIGNED, "%s: out is not aligned to %zu bytes", f->job,
                            align);
    }
    const char *a = (const char *)f->pose.ptr, *b = (const char *)f->out.ptr;
    size_t bytes = s->group_count * cb_simd_group_bytes();
    if (a != b && a < b + bytes && b < a + bytes) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: out overlaps pose partially (give the same array to "
                            "correct in place)",
                            f->job);
    }
    return CB_OK;
}

/* The model matrices, when given: a layout IK reads, and a matrix for every joint. */
static cb_result check_model(const io_fields *f, cb_error *err)
{
    if (f->model_layout < _CB_MATRIX_LAYOUT_DEFAULT || f->model_layout >= _CB_MATRIX_LAYOUT_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: model_layout %d is not a cb_matrix_layout", f->job,
                            (int)f->model_layout);
    }
    /* model_frame reads matrices' columns; a qts output would need its own decoding, and its
     * rotations are not the matrices the IK would otherwise see bit for bit. */
    if (f->model_layout == CB_MATRIX_LAYOUT_QTS) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: model_layout QTS is not read by IK (give MAT4 or MAT3X4 "
                            "matrices, or no model)",
                            f->job);
    }
    if (f->model.ptr == NULL && f->model.count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: model has a count but no pointer",
                            f->job);
    }
    size_t need = f->skeleton->joint_count * cb_ltm_matrix_floats(f->model_layout);
    if (f->model.ptr != NULL && f->model.count < need) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "%s: model has %zu floats, needs %zu",
                            f->job, f->model.count, need);
    }
    return CB_OK;
}

static cb_result check_io(const io_fields *f, cb_error *err)
{
    if (f->skeleton == NULL || f->pose.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s: %s is NULL", f->job,
                            f->skeleton == NULL ? "skeleton" : "pose");
    }
    const struct cb_skeleton *s = f->skeleton;
    const size_t align = cb_simd_group_align();
    if (f->pose.count < s->group_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "%s: pose has %zu groups, needs %zu",
                            f->job, f->pose.count, s->group_count);
    }
    if (!cb_is_aligned(f->pose.ptr, align)) {
        return cb_error_set(err, CB_ERR_MISALIGNED, "%s: pose is not aligned to %zu bytes", f->job,
                            align);
    }
    cb_result r = f->out.ptr != NULL ? check_out(f, err) : CB_OK;
    if (r == CB_OK) {
        r = check_model(f, err);
    }
    if (r != CB_OK) {
        return r;
    }
    if (!isfinite(f->weight)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: weight is not finite", f->job);
    }
    if (f->weight < 0.0f || f->weight > 1.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: weight %g is outside [0, 1]", f->job,
                            (double)f->weight);
    }
    return CB_OK;
}

static cb_result check_joint(const io_fields *f, uint32_t joint, const char *name, cb_error *err)
{
    if (joint >= f->skeleton->joint_count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: %s %u is out of range (%zu joints)",
                            f->job, name, joint, f->skeleton->joint_count);
    }
    return CB_OK;
}

/* A vector field: finite, and (for points and poles) within CB_IK_MAX_COORDINATE. */
static cb_result check_vec(const io_fields *f, const float v[3], const char *name, bool bounded,
                           cb_error *err)
{
    /* The usual case in one test without branches per element: |x| <= lim is false for NaN
     * and the infinities, so it is both checks below (just finiteness at FLT_MAX). */
    const float lim = bounded ? CB_IK_MAX_COORDINATE : FLT_MAX;
    if (CB_LIKELY((fabsf(v[0]) <= lim) & (fabsf(v[1]) <= lim) & (fabsf(v[2]) <= lim))) {
        return CB_OK;
    }
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(v[k])) {
            return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: %s[%d] is not finite", f->job, name,
                                k);
        }
        if (bounded && fabsf(v[k]) > CB_IK_MAX_COORDINATE) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "%s: %s[%d] = %g is beyond CB_IK_MAX_COORDINATE", f->job, name, k,
                                (double)v[k]);
        }
    }
    return CB_OK;
}

/* Copies pose into out when they are different arrays, so that only the chain is left to
 * write. */
static void prepare_out(const io_fields *f)
{
    if (f->out.ptr != NULL && (const void *)f->out.ptr != (const void *)f->pose.ptr) {
        memcpy(f->out.ptr, f->pose.ptr, f->skeleton->group_count * cb_simd_group_bytes());
    }
}

/* local[j].rotation = normalize(local[j].rotation * c) in out (already holding the pose). An
 * identity correction writes nothing, so a joint that does not turn keeps its bits. */
IK_INLINE void apply_correction(cb_xform_group *out, size_t j, qt c)
{
    if (c.x == 0.0f && c.y == 0.0f && c.z == 0.0f) {
        return;
    }
    float r[4];
    cb_lane_get(out, CB_LANE_COMPONENTS, j, CB_LANE_Q, 4, r);
    qt q = cb_fq_mul((qt){r[0], r[1], r[2], r[3]}, c);
    /* A host's pose may hold a zero (or underflowed) rotation: like every normalizing kernel of
     * the library (CB_QUAT_MIN_LENGTH_SQ in simd/soa.h), take it as the identity, which leaves
     * the correction itself. */
    q = cb_fq_dot(q, q) >= 1e-30f ? cb_fq_normalize(q) : c;
    cb_lane_set(out, CB_LANE_COMPONENTS, j, CB_LANE_Q, 4, (const float[4]){q.x, q.y, q.z, q.w});
}

IK_INLINE void store_quat(float out[4], qt q)
{
    out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
}

cb_result cb_ik_refresh_range(const cb_skeleton *skeleton, uint32_t joint, uint32_t *from,
                              uint32_t *to, cb_error *err)
{
    if (skeleton == NULL || from == NULL || to == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "IK refresh range: %s is NULL",
                            skeleton == NULL ? "skeleton"
                            : from == NULL   ? "from"
                                             : "to");
    }
    if (joint >= skeleton->joint_count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "IK refresh range: joint %u is out of range (%zu joints)", joint,
                            skeleton->joint_count);
    }
    size_t end = (size_t)joint + 1;
    for (size_t j = end; j < skeleton->joint_count; ++j) {
        if (cb_skeleton_in_subtree(skeleton, j, joint)) {
            end = j + 1;
        }
    }
    *from = joint;
    *to = (uint32_t)end;
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Two-bone IK                                                                                */

/* The fields both jobs share, under one name for the checks. */
#define IO_FIELDS(name, job)                                                                       \
    ((io_fields){(name), (job)->skeleton, (job)->pose, (job)->out, (job)->model,                   \
                 (job)->model_layout, (job)->weight})

static io_fields two_bone_io(const cb_ik_two_bone_job *job)
{
    return IO_FIELDS("two-bone IK job", job);
}

cb_result cb_ik_two_bone_job_validate(const cb_ik_two_bone_job *job, cb_error *err)
{
    if (job == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "two-bone IK job: job is NULL");
    }
    const io_fields io = two_bone_io(job);
    cb_result r;
    if ((r = check_io(&io, err)) != CB_OK ||
        (r = check_joint(&io, job->start_joint, "start_joint", err)) != CB_OK ||
        (r = check_joint(&io, job->mid_joint, "mid_joint", err)) != CB_OK ||
        (r = check_joint(&io, job->end_joint, "end_joint", err)) != CB_OK) {
        return r;
    }
    const struct cb_skeleton *s = job->skeleton;
    if (job->mid_joint <= job->start_joint ||
        !cb_skeleton_in_subtree(s, job->mid_joint, job->start_joint) ||
        job->end_joint <= job->mid_joint ||
        !cb_skeleton_in_subtree(s, job->end_joint, job->mid_joint)) {
        return cb_error_set(err, CB_ERR_HIERARCHY,
                            "two-bone IK job: joints %u, %u, %u do not form a chain (mid_joint "
                            "must descend from start_joint, end_joint from mid_joint)",
                            job->start_joint, job->mid_joint, job->end_joint);
    }
    if ((r = check_vec(&io, job->target, "target", true, err)) != CB_OK ||
        (r = check_vec(&io, job->pole, "pole", true, err)) != CB_OK ||
        (r = check_vec(&io, job->mid_axis, "mid_axis", false, err)) != CB_OK) {
        return r;
    }
    if (!isfinite(job->soften)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "two-bone IK job: soften is not finite");
    }
    if (job->soften < 0.0f || job->soften > 1.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "two-bone IK job: soften %g is outside [0, 1]", (double)job->soften);
    }
    if (job->out.ptr == NULL && job->result == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "two-bone IK job: no output (out is empty and result is NULL)");
    }
    return CB_OK;
}

/* Where the soft zone starts: the farthest distance the chain reaches exactly (the one rule of
 * `reached`, for the solve and for cb_ik_two_bone_reach). */
IK_INLINE float soft_start(float dmin, float dmax, float soften)
{
    return max_of(soften * dmax, dmin);
}

/* The soft limit of the header: the distance the chain is given, d', and D - d' computed
 * without cancellation. */
static float soften_distance(float d, float dmin, float dmax, float soften, float *gap,
                             bool *reached)
{
    float start = soft_start(dmin, dmax, soften);
    float zone = dmax - start;
    if (d < dmin) {
        *gap = dmax - dmin, *reached = false;
        return dmin;
    }
    if (d <= start) {
        *gap = dmax - d, *reached = true;
        return d;
    }
    *reached = false;
    if (zone > 0.0f) {
        float e = cb_det_expf(-(d - start) / zone);
        *gap = zone * e;
        return dmax - *gap;
    }
    *gap = 0.0f;
    return dmax;
}

/* A chain's hinge: its axis n in model space, the bone parts across it (up, lp, of lengths p
 * and q) and the reach interval [dmin, dmax] of turning about it; `turns` false when the hinge
 * runs along a bone (or a bone is almost nothing): turning it cannot change the reach. */
typedef struct hinge {
    v3 u, l, uhat, pole; /* the bones (start to mid, mid to end), u's direction, the unit pole */
    float a, b, pole_len;
    v3 n, up, lp;
    float p, q, dmin, dmax;
    bool turns;
} hinge;

IK_INLINE hinge chain_hinge(const cb_ik_two_bone_job *job, const frame *fs, const frame *fm,
                            const frame *fe)
{
    hinge h;
    v3 u = h.u = cb_fv_sub(fm->p, fs->p), l = h.l = cb_fv_sub(fe->p, fm->p);
    float a, b;
    v3 uhat = h.uhat = cb_fv_normalize_len(u, &a);
    cb_fv_normalize_len(l, &b);
    v3 pole = h.pole = cb_fv_normalize_len(v3_make(job->pole), &h.pole_len);
    h.a = a, h.b = b;
    /* Hinge axis n in model space. */
    v3 axis_local = v3_make(job->mid_axis);
    bool given = cb_fv_dot(axis_local, axis_local) > 0.0f;
    if (given) {
        float nl;
        h.n = cb_fv_normalize_len(lin(fm, axis_local), &nl);
        if (!(nl > 0.0f)) {
            h.n = cb_fv_any_perpendicular(uhat);
        }
    } else {
        float cl;
        h.n = cb_fv_normalize_len(cb_fv_cross(u, l), &cl);
        if (!(cl > CB_IK_STRAIGHT_EPS * a * b)) {
            /* Straight or folded: bend towards the pole (n = pole x u makes the mid joint
             * move to the pole's side, see the twist below), else about a fixed axis. */
            float pl;
            h.n = cb_fv_normalize_len(cb_fv_cross(pole, uhat), &pl);
            if (!(pl > CB_IK_DIR_EPS)) {
                h.n = cb_fv_any_perpendicular(uhat);
            }
        }
    }
    /* Mid joint: turn about n until |end - start| = d'. Rotating l about n keeps its part
     * along n, so |u + l|^2 = (un + ln)^2 + |u_perp|^2 + |l_perp|^2 + 2 u_perp . l_perp. */
    float un = cb_fv_dot(u, h.n), ln = cb_fv_dot(l, h.n);
    h.up = cb_fv_reject(u, h.n), h.lp = cb_fv_reject(l, h.n);
    h.p = cb_fv_len(h.up), h.q = cb_fv_len(h.lp);
    h.turns = h.p * h.q > CB_IK_HINGE_EPS * (a + b) * (a + b);
    if (h.turns) { /* else dmin and dmax are not read */
        float sum = un + ln;
        h.dmax = sqrtf(sum * sum + (h.p + h.q) * (h.p + h.q));
        h.dmin = sqrtf(sum * sum + (h.p - h.q) * (h.p - h.q));
    }
    return h;
}

/* The solution, as model-space rotations: `mid` about the mid joint (applied first), `start`
 * about the start joint. hinge_local tells the caller whether mid.xyz is along the given
 * mid_axis (then the local correction is written from the axis itself). */
typedef struct two_bone_solution {
    qt start, mid;
    float mid_c, mid_s; /* half-angle of the mid turn */
    bool reached;
} two_bone_solution;

static two_bone_solution solve_two_bone(const cb_ik_two_bone_job *job, const frame *fs,
                                        const frame *fm, const frame *fe, float soften)
{
    two_bone_solution out = {cb_fq_identity(), cb_fq_identity(), 1.0f, 0.0f, false};
    const hinge h = chain_hinge(job, fs, fm, fe);
    const v3 u = h.u, l = h.l, uhat = h.uhat, pole = h.pole;
    const float a = h.a, b = h.b, pole_len = h.pole_len;

    /* Target direction; at the start joint, keep the chain's current direction. */
    float d;
    v3 t = cb_fv_normalize_len(cb_fv_sub(v3_make(job->target), fs->p), &d);
    if (!(d > CB_IK_NEAR_EPS * (a + b))) {
        float de;
        t = cb_fv_normalize_len(cb_fv_sub(fe->p, fs->p), &de);
        if (!(de > CB_IK_NEAR_EPS * (a + b))) {
            t = uhat;
        }
        d = 0.0f;
    }

    v3 n = h.n, up = h.up, lp = h.lp;
    float p = h.p, q = h.q, dmax = h.dmax, dmin = h.dmin;
    v3 l_new = l;
    if (h.turns) {
        float gap;
        float dd = soften_distance(d, dmin, dmax, soften, &gap, &out.reached);
        /* Target bend b_t in [0, pi] (0 = straight), by its half-angle. */
        float inv4pq = 1.0f / (4.0f * p * q);
        float ct = sqrtf(max_of((dd - dmin) * (dd + dmin) * inv4pq, 0.0f));
        float st = sqrtf(max_of(gap * (dmax + dd) * inv4pq, 0.0f));
        float r = 1.0f / sqrtf(ct * ct + st * st);
        ct *= r, st *= r;
        /* Current bend b_c: the angle from u_perp to l_perp about n. */
        float cc, sc;
        half_angle(cb_fv_dot(up, lp), cb_fv_dot(cb_fv_cross(up, lp), n), &cc, &sc);
        /* Turn by b_t - b_c: half-angle difference formulas. */
        out.mid_c = ct * cc + st * sc;
        out.mid_s = st * cc - ct * sc;
        out.mid = cb_fq_axis_half_angle(n, out.mid_c, out.mid_s);
        l_new = cb_fq_rotate(out.mid, l);
    } else {
        /* The hinge runs along a bone (or a bone is almost nothing): turning it cannot change
         * the reach. */
        out.reached = false;
    }

    /* Start joint: swing the end onto the target direction, then twist about that direction
     * so that the hinge is normal to the plane (t, pole) with the mid joint on the pole's
     * side: for a bend about n, the mid joint lies towards t x n, so n must be pole x t. */
    float fl;
    v3 f = cb_fv_normalize_len(cb_fv_add(u, l_new), &fl);
    qt swing = fl > CB_IK_NEAR_EPS * (a + b) ? cb_fq_from_to(f, t) : cb_fq_identity();
    qt start = swing;
    if (pole_len > 0.0f) {
        float rl, nl;
        v3 nref = cb_fv_normalize_len(cb_fv_cross(pole, t), &rl);
        v3 n1 = cb_fv_normalize_len(cb_fv_reject(cb_fq_rotate(swing, n), t), &nl);
        if (rl > CB_IK_DIR_EPS && nl > CB_IK_DIR_EPS) {
            float c, s;
            half_angle(cb_fv_dot(n1, nref), cb_fv_dot(cb_fv_cross(n1, nref), t), &c, &s);
            start = cb_fq_mul(cb_fq_axis_half_angle(t, c, s), swing);
        }
    }
    out.start = start;
    return out;
}

/* The chain's model frames, checked as the solve needs them: within range and finite, and no
 * bone shorter than CB_IK_MIN_BONE_LENGTH. */
IK_INLINE cb_result two_bone_frames(const cb_ik_two_bone_job *job, frame f[3], cb_error *err)
{
    const uint32_t joints[3] = {job->start_joint, job->mid_joint, job->end_joint};
    chain_frames(job->skeleton, job->pose.ptr, job->model, job->model_layout, joints, 3, f);
    cb_result r =
        check_chain(f, job->pose.ptr, job->model.ptr != NULL, joints, 3, "two-bone IK job", err);
    if (r != CB_OK) {
        return r;
    }
    float a = cb_fv_len(cb_fv_sub(f[1].p, f[0].p)), b = cb_fv_len(cb_fv_sub(f[2].p, f[1].p));
    if (!(a >= CB_IK_MIN_BONE_LENGTH) || !(b >= CB_IK_MIN_BONE_LENGTH)) {
        return cb_error_set(err, CB_ERR_DEGENERATE,
                            "two-bone IK job: the bone from joint %u to joint %u is %g m "
                            "long (shorter than CB_IK_MIN_BONE_LENGTH)",
                            a < b ? joints[0] : joints[1], a < b ? joints[1] : joints[2],
                            (double)(a < b ? a : b));
    }
    return CB_OK;
}

/* The job after validation: the chain's frames are checked (they come from this frame's pose),
 * the rest was. `known`: the chain's model frames when the caller has them, computed and checked
 * from this pose as chain_frames and check_chain would (the stride warp's legs); NULL to
 * compute them here. */
static cb_result two_bone_solve(const cb_ik_two_bone_job *job, const frame known[3], cb_error *err)
{
    cb_result r;
    const io_fields io = two_bone_io(job);
    qt cs = cb_fq_identity(), cm = cb_fq_identity();
    bool reached = false;
    if (job->weight > 0.0f) {
        frame computed[3];
        const frame *f = known;
        if (f == NULL) {
            if ((r = two_bone_frames(job, computed, err)) != CB_OK) {
                return r;
            }
            f = computed;
        }
        two_bone_solution sol = solve_two_bone(job, &f[0], &f[1], &f[2], cb_ik_job_soften(job));
        reached = sol.reached;
        cs = to_local(&f[0], sol.start);
        v3 axis = v3_make(job->mid_axis);
        if (cb_fv_dot(axis, axis) > 0.0f) {
            /* The turn is about the given axis: write it from the axis itself. */
            cm = cb_fq_axis_half_angle(cb_fv_normalize_len(axis, NULL), sol.mid_c, sol.mid_s);
        } else {
            cm = to_local(&f[1], sol.mid);
        }
        cs = cb_fq_weighted(cs, job->weight);
        cm = cb_fq_weighted(cm, job->weight);
    }
    if (job->out.ptr != NULL) {
        prepare_out(&io);
        if (job->weight > 0.0f) {
            apply_correction(job->out.ptr, job->start_joint, cs);
            apply_correction(job->out.ptr, job->mid_joint, cm);
        }
    }
    if (job->result != NULL) {
        store_quat(job->result->start_correction, cs);
        store_quat(job->result->mid_correction, cm);
        job->result->reached = reached;
        job->result->first_joint = job->start_joint;
    }
    return CB_OK;
}

bool cb_ik_two_bone_reach(const cb_ik_two_bone_job *job, float start[3], float *reach)
{
    frame f[3];
    if (two_bone_frames(job, f, NULL) != CB_OK) {
        return false;
    }
    const hinge h = chain_hinge(job, &f[0], &f[1], &f[2]);
    if (!h.turns) {
        return false; /* no exact reach but where the chain is (the solve's `reached` is false) */
    }
    *reach = soft_start(h.dmin, h.dmax, cb_ik_job_soften(job));
    start[0] = f[0].p.x, start[1] = f[0].p.y, start[2] = f[0].p.z;
    return true;
}

cb_result cb_ik_two_bone_job_run(const cb_ik_two_bone_job *job, cb_error *err)
{
    cb_result r = cb_ik_two_bone_job_validate(job, err);
    return r != CB_OK ? r : two_bone_solve(job, NULL, err);
}

/* The unchecked form: what the frame brings (the target and the pole) checked, then the
 * solve. */
cb_result cb_ik_two_bone_unchecked(const cb_ik_two_bone_job *job, cb_error *err)
{
    const io_fields io = two_bone_io(job);
    cb_result r;
    if ((r = check_vec(&io, job->target, "target", true, err)) != CB_OK ||
        (r = check_vec(&io, job->pole, "pole", true, err)) != CB_OK) {
        return r;
    }
    CB_ASSERT(cb_ik_two_bone_job_validate(job, NULL) == CB_OK);
    return two_bone_solve(job, NULL, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Aim IK                                                                                     */

static io_fields aim_io(const cb_ik_aim_job *job)
{
    return IO_FIELDS("aim IK job", job);
}

IK_INLINE v3 or_default(const float v[3], v3 fallback)
{
    v3 x = v3_make(v);
    return cb_fv_dot(x, x) > 0.0f ? x : fallback;
}

/* One chain joint: in the skeleton, below the joint before it, its weight in [0, 1]. */
static cb_result check_aim_joint(const cb_ik_aim_job *job, size_t k, cb_error *err)
{
    const cb_ik_aim_joint *c = &job->chain.ptr[k];
    if (c->joint >= job->skeleton->joint_count) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "aim IK job: chain[%zu].joint %u is out of range (%zu joints)", k,
                            c->joint, job->skeleton->joint_count);
    }
    if (k > 0 && (c->joint <= job->chain.ptr[k - 1].joint ||
                  !cb_skeleton_in_subtree(job->skeleton, c->joint, job->chain.ptr[k - 1].joint))) {
        return cb_error_set(err, CB_ERR_HIERARCHY,
                            "aim IK job: chain[%zu].joint %u is not a descendant of "
                            "chain[%zu].joint %u",
                            k, c->joint, k - 1, job->chain.ptr[k - 1].joint);
    }
    if (!isfinite(c->weight)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE,
                            "aim IK job: chain[%zu].weight is not "
                            "finite",
                            k);
    }
    if (c->weight < 0.0f || c->weight > 1.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "aim IK job: chain[%zu].weight %g is outside [0, 1]", k,
                            (double)c->weight);
    }
    return CB_OK;
}

/* The chain: given, 1 to CB_IK_AIM_MAX_JOINTS joints, then each joint from the first. */
static cb_result check_aim_chain(const cb_ik_aim_job *job, cb_error *err)
{
    if (job->chain.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "aim IK job: chain is NULL");
    }
    if (job->chain.count == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW, "aim IK job: the chain is empty");
    }
    if (job->chain.count > CB_IK_AIM_MAX_JOINTS) {
        return cb_error_set(err, CB_ERR_TOO_MANY,
                            "aim IK job: the chain has %zu joints, at most %d are supported",
                            job->chain.count, CB_IK_AIM_MAX_JOINTS);
    }
    cb_result r = CB_OK;
    for (size_t k = 0; k < job->chain.count && r == CB_OK; ++k) {
        r = check_aim_joint(job, k, err);
    }
    return r;
}

/* The target, the pole, the axes and the offset, then the angle limit; with a pole, up and
 * forward must not be parallel. */
static cb_result check_aim_geometry(const io_fields *io, const cb_ik_aim_job *job, cb_error *err)
{
    cb_result r;
    if ((r = check_vec(io, job->target, "target", true, err)) != CB_OK ||
        (r = check_vec(io, job->pole, "pole", true, err)) != CB_OK ||
        (r = check_vec(io, job->forward, "forward", false, err)) != CB_OK ||
        (r = check_vec(io, job->up, "up", false, err)) != CB_OK ||
        (r = check_vec(io, job->offset, "offset", true, err)) != CB_OK) {
        return r;
    }
    if (!isfinite(job->angle_limit)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "aim IK job: angle_limit is not finite");
    }
    if (job->angle_limit < 0.0f || job->angle_limit > CB_FPI) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "aim IK job: angle_limit %g is outside [0, pi]",
                            (double)job->angle_limit);
    }
    v3 pole = v3_make(job->pole);
    if (cb_fv_dot(pole, pole) > 0.0f) {
        v3 f = cb_fv_normalize_len(or_default(job->forward, (v3){0, 0, 1}), NULL);
        v3 u = cb_fv_normalize_len(or_default(job->up, (v3){0, 1, 0}), NULL);
        if (!(cb_fv_len(cb_fv_cross(f, u)) > CB_IK_DIR_EPS)) {
            return cb_error_set(err, CB_ERR_DEGENERATE,
                                "aim IK job: up is parallel to forward (needed with a pole)");
        }
    }
    return CB_OK;
}

/* The corrections span fits the chain, and at least one output is given. */
static cb_result check_aim_outputs(const cb_ik_aim_job *job, cb_error *err)
{
    if (job->corrections.ptr == NULL && job->corrections.count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "aim IK job: corrections has a count but no pointer");
    }
    if (job->corrections.ptr != NULL && job->corrections.count < 4 * job->chain.count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "aim IK job: corrections has %zu floats, needs %zu",
                            job->corrections.count, 4 * job->chain.count);
    }
    if (job->out.ptr == NULL && job->corrections.ptr == NULL && job->result == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "aim IK job: no output (out and corrections are empty and result is "
                            "NULL)");
    }
    return CB_OK;
}

/* The checks in the order that decides which error a job with several faults reports: the
 * pose and skeleton, the chain, the geometry, the outputs. */
cb_result cb_ik_aim_job_validate(const cb_ik_aim_job *job, cb_error *err)
{
    if (job == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "aim IK job: job is NULL");
    }
    const io_fields io = aim_io(job);
    cb_result r = check_io(&io, err);
    if (r != CB_OK || (r = check_aim_chain(job, err)) != CB_OK ||
        (r = check_aim_geometry(&io, job, err)) != CB_OK) {
        return r;
    }
    return check_aim_outputs(job, err);
}

/* The shortest turn about `pivot` that puts `target` on the ray from `origin` along the unit
 * `dir`. After any turn about the pivot the ray keeps its distance h from it, so the point of
 * the ray that can land on the target is the one at the target's distance from the pivot (the
 * far root of |o + s dir| = |t|, relative to the pivot). Targets nearer than h, or behind the
 * origin, cannot be hit: the ray then turns as close as it can (s clamped, *hit false), which is
 * continuous across the boundary. */
IK_INLINE qt point_aim(v3 pivot, v3 origin, v3 dir, v3 target, bool *hit)
{
    v3 o = cb_fv_sub(origin, pivot);
    float tl;
    v3 t = cb_fv_normalize_len(cb_fv_sub(target, pivot), &tl);
    *hit = true;
    if (!(tl > 0.0f)) {
        *hit = false;
        return cb_fq_identity();
    }
    float b = cb_fv_dot(o, dir);
    float disc = b * b - (cb_fv_dot(o, o) - tl * tl);
    if (disc < 0.0f) {
        disc = 0.0f, *hit = false;
    }
    float s = -b + sqrtf(disc);
    if (s < 0.0f) {
        s = 0.0f, *hit = false;
    }
    float vl;
    v3 v = cb_fv_normalize_len(cb_fv_add(o, cb_fv_scale(dir, s)), &vl);
    if (!(vl > 0.0f)) {
        *hit = false;
        return cb_fq_identity();
    }
    return cb_fq_from_to(v, t);
}

/* The angle between unit vectors, accurate at every angle (atan2 of the cross and dot). */
IK_INLINE float angle_between(v3 a, v3 b)
{
    return cb_det_atan2f(cb_fv_len(cb_fv_cross(a, b)), cb_fv_dot(a, b));
}

/* The ease of the angle limit (see CB_IK_AIM_LIMIT_EASE): a C1 quadratic blend between the
 * identity and the constant limit, over [limit - z, limit + z]. */
IK_INLINE float ease_limit(float angle, float limit)
{
    float z = CB_IK_AIM_LIMIT_EASE * limit;
    if (angle <= limit - z) {
        return angle;
    }
    if (angle >= limit + z) {
        return limit;
    }
    float x = angle - (limit - z);
    return angle - x * x / (4.0f * z);
}

/* A unit axis about which `from` turns towards `to` (unit vectors): their normalized cross
 * product, or, when they are (anti)parallel, the part of `hint` perpendicular to `from` (for a
 * target straight behind a head, its up axis: the head turns sideways, not over the top). */
IK_INLINE v3 turn_axis(v3 from, v3 to, v3 hint)
{
    float cl;
    v3 k = cb_fv_normalize_len(cb_fv_cross(from, to), &cl);
    if (cl > CB_IK_DIR_EPS) {
        return k;
    }
    float hl;
    k = cb_fv_normalize_len(cb_fv_reject(hint, from), &hl);
    return hl > CB_IK_DIR_EPS ? k : cb_fv_any_perpendicular(from);
}

/* Unit vector `from` turned by `angle` about the unit axis k perpendicular to it. */
IK_INLINE v3 turn_towards(v3 from, v3 k, float angle)
{
    return cb_fv_add(cb_fv_scale(from, cb_det_cosf(angle)),
                     cb_fv_scale(cb_fv_cross(k, from), cb_det_sinf(angle)));
}

/* The end joint's axes in model space, the aimed ray's origin and the chain's frames: what every
 * joint of an aim solve works from. */
typedef struct aim_setup {
    uint32_t joints[CB_IK_AIM_MAX_JOINTS];
    frame f[CB_IK_AIM_MAX_JOINTS];
    v3 f0, u0, o0; /* forward, up and the ray's origin at the end joint, as animated */
    v3 pole;       /* unit pole direction, when pole_len > 0 */
    float pole_len;
    float limit;    /* the end joint's angle limit, radians (pi: none) */
    float ease_cos; /* turns whose cosine is above this are below the ease */
} aim_setup;

static cb_result aim_begin(const cb_ik_aim_job *job, const io_fields *io, aim_setup *a,
                           cb_error *err)
{
    const size_t n = job->chain.count;
    for (size_t k = 0; k < n; ++k) {
        a->joints[k] = job->chain.ptr[k].joint;
    }
    chain_frames(job->skeleton, job->pose.ptr, job->model, job->model_layout, a->joints, n, a->f);
    cb_result r =
        check_chain(a->f, job->pose.ptr, job->model.ptr != NULL, a->joints, n, io->job, err);
    if (r != CB_OK) {
        return r;
    }
    const frame *fe = &a->f[n - 1];
    float fl, ul;
    a->f0 = cb_fv_normalize_len(lin(fe, or_default(job->forward, (v3){0, 0, 1})), &fl);
    a->u0 = cb_fv_normalize_len(lin(fe, or_default(job->up, (v3){0, 1, 0})), &ul);
    if (!(fl > 0.0f) || !(ul > 0.0f)) {
        return cb_error_set(err, CB_ERR_DEGENERATE,
                            "aim IK job: the end joint's %s axis vanishes in model space "
                            "(zero scale)",
                            fl > 0.0f ? "up" : "forward");
    }
    a->o0 = cb_fv_add(fe->p, lin(fe, v3_make(job->offset)));
    a->pole = cb_fv_normalize_len(v3_make(job->pole), &a->pole_len);
    a->limit = job->angle_limit == 0.0f ? CB_IK_AIM_DEFAULT_ANGLE_LIMIT : job->angle_limit;
    /* No angle needed below the ease (atan2f was a tenth of a look-at's time). */
    a->ease_cos = a->limit < CB_FPI ? cb_det_cosf((1.0f - CB_IK_AIM_LIMIT_EASE) * a->limit) : -2.0f;
    return CB_OK;
}

/* With a limit, the joints before the last aim at an eased target: the target turned about the
 * end joint back towards the animated forward axis by what the ease takes off the turn the end
 * joint alone would make. Without it a neck at weight 0.5 would turn half-way to a target
 * behind the character, far past the limit, and the head would have to turn back. */
static v3 eased_aim_target(const aim_setup *a, const frame *fe, v3 target, size_t n)
{
    if (!(a->limit < CB_FPI) || n <= 1) {
        return target;
    }
    bool h;
    v3 want = cb_fq_rotate(point_aim(fe->p, a->o0, a->f0, target, &h), a->f0);
    float angle = cb_fv_dot(a->f0, want) < a->ease_cos ? angle_between(a->f0, want) : 0.0f;
    float eased = ease_limit(angle, a->limit);
    if (!(eased < angle)) {
        return target;
    }
    v3 k = turn_axis(a->f0, want, a->u0);
    float half = 0.5f * (eased - angle), sin_half, cos_half;
    cb_det_sincosf(half, &sin_half, &cos_half);
    return cb_fv_add(fe->p, cb_fq_rotate(cb_fq_axis_half_angle(k, cos_half, sin_half),
                                         cb_fv_sub(target, fe->p)));
}

/* The pole: twist c about the direction from the pivot to the target, which stays on the ray,
 * so that the up axis (carried by g, then c) leans towards the pole. */
static qt pole_twist(const aim_setup *a, qt c, qt g, v3 pivot, v3 aim)
{
    float al, ul1, pl;
    v3 d = cb_fv_normalize_len(cb_fv_sub(aim, pivot), &al);
    v3 up1 = cb_fv_normalize_len(cb_fv_reject(cb_fq_rotate(c, cb_fq_rotate(g, a->u0)), d), &ul1);
    v3 pp = cb_fv_normalize_len(cb_fv_reject(a->pole, d), &pl);
    if (al > 0.0f && ul1 > CB_IK_DIR_EPS && pl > CB_IK_DIR_EPS) {
        float ch, sh;
        half_angle(cb_fv_dot(up1, pp), cb_fv_dot(cb_fv_cross(up1, pp), d), &ch, &sh);
        c = cb_fq_mul(cb_fq_axis_half_angle(d, ch, sh), c);
    }
    return c;
}

/* The limit itself, on the end joint's turn c of the ray dir: the forward axis ends ease(angle)
 * away from where the animation pointed it, angle being the turn that would hit the target from
 * here. Exact, and continuous in the target. */
static qt limit_end_turn(const aim_setup *a, qt c, v3 dir, bool *limited)
{
    v3 fin = cb_fq_rotate(c, dir);
    float angle = cb_fv_dot(a->f0, fin) < a->ease_cos ? angle_between(a->f0, fin) : 0.0f;
    float eased = ease_limit(angle, a->limit);
    if (!(eased < angle)) {
        return c;
    }
    v3 lim = turn_towards(a->f0, turn_axis(a->f0, fin, a->u0), eased);
    *limited = true;
    return cb_fq_positive_w(cb_fq_mul(cb_fq_from_to(fin, lim), c));
}

/* Each joint in turn; the rigid motion x -> g x + tr of everything below the joints done so far
 * carries the aimed ray and the remaining pivots along. Writes each joint's local correction
 * and the result's fields. */
static void aim_chain(const cb_ik_aim_job *job, const aim_setup *a, qt *local,
                      cb_ik_aim_result *res)
{
    const size_t n = job->chain.count;
    const v3 target = v3_make(job->target);
    const v3 eased_target = eased_aim_target(a, &a->f[n - 1], target, n);
    qt g = cb_fq_identity();
    v3 tr = {0, 0, 0};
    bool hit = false, first_set = false;
    for (size_t k = 0; k < n; ++k) {
        const bool last = k == n - 1;
        const v3 aim = last ? target : eased_target;
        float w = job->chain.ptr[k].weight;
        v3 pivot = cb_fv_add(cb_fq_rotate(g, a->f[k].p), tr);
        v3 origin = cb_fv_add(cb_fq_rotate(g, a->o0), tr), dir = cb_fq_rotate(g, a->f0);
        qt c = point_aim(pivot, origin, dir, aim, &hit);
        if (a->pole_len > 0.0f) {
            c = pole_twist(a, c, g, pivot, aim);
        }
        c = cb_fq_weighted(c, w);
        if (last && a->limit < CB_FPI) {
            c = limit_end_turn(a, c, dir, &res->limited);
        }
        /* The joint's frame now is g applied to its original one: (g F)^T v = F^T g* v. */
        qt cg = cb_fq_mul(cb_fq_mul(cb_fq_conj(g), c), g);
        local[k] = cb_fq_weighted(to_local(&a->f[k], cg), job->weight);
        if (w > 0.0f && !first_set) {
            res->first_joint = a->joints[k], first_set = true;
        }
        g = cb_fq_normalize(cb_fq_mul(c, g));
        tr = cb_fv_add(cb_fq_rotate(c, cb_fv_sub(tr, pivot)), pivot);
    }
    res->reached =
        hit && !res->limited && job->chain.ptr[n - 1].weight >= 1.0f && job->weight >= 1.0f;
}

static cb_result aim_solve(const cb_ik_aim_job *job, cb_error *err)
{
    const io_fields io = aim_io(job);
    const size_t n = job->chain.count;
    qt local[CB_IK_AIM_MAX_JOINTS];
    cb_ik_aim_result res = {.reached = false, .limited = false, .first_joint = 0};
    for (size_t k = 0; k < n; ++k) {
        local[k] = cb_fq_identity();
    }
    if (job->weight > 0.0f) {
        aim_setup a;
        cb_result r = aim_begin(job, &io, &a, err);
        if (r != CB_OK) {
            return r;
        }
        aim_chain(job, &a, local, &res);
    }
    if (job->out.ptr != NULL) {
        prepare_out(&io);
        if (job->weight > 0.0f) {
            for (size_t k = 0; k < n; ++k) {
                apply_correction(job->out.ptr, job->chain.ptr[k].joint, local[k]);
            }
        }
    }
    if (job->corrections.ptr != NULL) {
        for (size_t k = 0; k < n; ++k) {
            store_quat(job->corrections.ptr + 4 * k, local[k]);
        }
    }
    if (job->result != NULL) {
        *job->result = res;
    }
    return CB_OK;
}

cb_result cb_ik_aim_job_run(const cb_ik_aim_job *job, cb_error *err)
{
    cb_result r = cb_ik_aim_job_validate(job, err);
    return r != CB_OK ? r : aim_solve(job, err);
}

cb_result cb_ik_aim_unchecked(const cb_ik_aim_job *job, cb_error *err)
{
    const io_fields io = aim_io(job);
    cb_result r = check_vec(&io, job->target, "target", true, err);
    if (r != CB_OK) {
        return r;
    }
    CB_ASSERT(cb_ik_aim_job_validate(job, NULL) == CB_OK);
    return aim_solve(job, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Orientation warping                                                                        */

/* Shares may sum to 1 written as decimals (0.3 + 0.3 + 0.4) without being refused. */
#define ORIENT_SHARE_SUM_SLACK 1e-5f

static io_fields orient_io(const cb_ik_orient_job *job)
{
    return IO_FIELDS("orientation warp job", job);
}

static cb_result check_orient_spine(const cb_ik_orient_job *job, cb_error *err)
{
    const cb_skeleton *s = job->skeleton;
    float sum = 0.0f;
    uint32_t before = job->hip_joint;
    for (size_t k = 0; k < job->spine.count; ++k) {
        const cb_ik_aim_joint *c = &job->spine.ptr[k];
        if (c->joint >= s->joint_count) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "orientation warp job: spine[%zu].joint %u is out of range (%zu "
                                "joints)",
                                k, c->joint, s->joint_count);
        }
        if (c->joint <= before || !cb_skeleton_in_subtree(s, c->joint, before)) {
            return cb_error_set(err, CB_ERR_HIERARCHY,
                                "orientation warp job: spine[%zu].joint %u is not a descendant of "
                                "%s %u",
                                k, c->joint, k == 0 ? "hip_joint" : "the spine joint before,",
                                before);
        }
        if (!isfinite(c->weight)) {
            return cb_error_set(err, CB_ERR_NOT_FINITE,
                                "orientation warp job: spine[%zu].weight is not finite", k);
        }
        if (c->weight < 0.0f || c->weight > 1.0f) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "orientation warp job: spine[%zu].weight %g is outside [0, 1]", k,
                                (double)c->weight);
        }
        sum += c->weight;
        before = c->joint;
    }
    if (sum > 1.0f + ORIENT_SHARE_SUM_SLACK) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "orientation warp job: the spine's shares sum to %g, above 1 (the "
                            "upper body would turn past where it faced)",
                            (double)sum);
    }
    return CB_OK;
}

cb_result cb_ik_orient_job_validate(const cb_ik_orient_job *job, cb_error *err)
{
    if (job == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "orientation warp job: job is NULL");
    }
    const io_fields io = orient_io(job);
    cb_result r = check_io(&io, err);
    if (r != CB_OK || (r = check_joint(&io, job->hip_joint, "hip_joint", err)) != CB_OK) {
        return r;
    }
    if (job->spine.ptr == NULL && job->spine.count > 0) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "orientation warp job: spine has a count but no pointer");
    }
    if (job->spine.count > CB_IK_AIM_MAX_JOINTS) {
        return cb_error_set(err, CB_ERR_TOO_MANY,
                            "orientation warp job: %zu spine joints, at most %d are supported",
                            job->spine.count, CB_IK_AIM_MAX_JOINTS);
    }
    if ((r = check_orient_spine(job, err)) != CB_OK) {
        return r;
    }
    if (!isfinite(job->angle) || !isfinite(job->angle_limit)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "orientation warp job: %s is not finite",
                            isfinite(job->angle) ? "angle_limit" : "angle");
    }
    if (job->angle_limit < 0.0f || job->angle_limit > CB_FPI) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "orientation warp job: angle_limit %g is outside [0, pi]",
                            (double)job->angle_limit);
    }
    if (job->out.ptr == NULL && job->result == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "orientation warp job: no output (out is empty and result is NULL)");
    }
    return CB_OK;
}

/* A turn by `angle` about model +Y. */
IK_INLINE qt yaw_turn(float angle)
{
    float s, c;
    cb_det_sincosf(0.5f * angle, &s, &c);
    return (qt){0.0f, s, 0.0f, c};
}

static cb_result orient_solve(const cb_ik_orient_job *job, cb_error *err)
{
    const io_fields io = orient_io(job);
    const float limit =
        job->angle_limit == 0.0f ? CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT : job->angle_limit;
    const float a = job->angle < -limit ? -limit : job->angle > limit ? limit : job->angle;
    const float t = job->weight * a;
    const size_t n = job->spine.count + 1; /* the hip, then the spine */
    qt local[CB_IK_AIM_MAX_JOINTS + 1];
    uint32_t joints[CB_IK_AIM_MAX_JOINTS + 1] = {job->hip_joint};
    if (t != 0.0f) {
        frame f[CB_IK_AIM_MAX_JOINTS + 1];
        for (size_t k = 1; k < n; ++k) {
            joints[k] = job->spine.ptr[k - 1].joint;
        }
        chain_frames(job->skeleton, job->pose.ptr, job->model, job->model_layout, joints, n, f);
        cb_result r = check_chain(f, job->pose.ptr, job->model.ptr != NULL, joints, n, io.job, err);
        if (r != CB_OK) {
            return r;
        }
        /* Each turn about a vertical axis through its joint, in model space; the joints'
         * frames are the animation's: a turn of an ancestor about the same axis commutes with
         * the joint's own, so the turns of those before do not enter (ik.h). The spine's shares
         * are mostly equal (1 / n by default): a turn by the angle of the joint before (the same
         * bits; -0 and +0 count as different) is not computed again. */
        qt turn = cb_fq_identity();
        bool have = false;   /* whether `turn` is set */
        uint32_t turned = 0; /* the bits of the angle it is for */
        for (size_t k = 0; k < n; ++k) {
            float share = k == 0 ? 1.0f : -job->spine.ptr[k - 1].weight;
            if (share == 0.0f) {
                local[k] = cb_fq_identity();
                continue;
            }
            const float angle = share * t;
            if (!have || cb_det_bits(angle) != turned) {
                turn = yaw_turn(angle);
                turned = cb_det_bits(angle), have = true;
            }
            local[k] = to_local(&f[k], turn);
        }
    }
    if (job->out.ptr != NULL) {
        prepare_out(&io);
        for (size_t k = 0; k < n && t != 0.0f; ++k) {
            apply_correction(job->out.ptr, joints[k], local[k]);
        }
    }
    if (job->result != NULL) {
        job->result->angle = t;
        job->result->limited = a != job->angle;
        job->result->first_joint = t != 0.0f ? job->hip_joint : 0;
    }
    return CB_OK;
}

cb_result cb_ik_orient_job_run(const cb_ik_orient_job *job, cb_error *err)
{
    cb_result r = cb_ik_orient_job_validate(job, err);
    return r != CB_OK ? r : orient_solve(job, err);
}

cb_result cb_ik_orient_unchecked(const cb_ik_orient_job *job, cb_error *err)
{
    CB_ASSERT(cb_ik_orient_job_validate(job, NULL) == CB_OK);
    return orient_solve(job, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Stride warping                                                                             */

static io_fields stride_io(const cb_ik_stride_job *job)
{
    return IO_FIELDS("stride warp job", job);
}

/* Leg l's chain as a two-bone job on `pose` in place, towards `target` (one solver for both
 * features: the stride's legs are two-bone IK). */
static cb_ik_two_bone_job stride_leg_job(const cb_ik_stride_job *job, uint32_t l,
                                         cb_xform_group_span pose, const float target[3],
                                         float weight, cb_ik_two_bone_result *result)
{
    const cb_ik_stride_leg *leg = &job->legs[l];
    return (cb_ik_two_bone_job){
        .skeleton = job->skeleton,
        .pose = {pose.ptr, pose.count},
        .out = pose,
        .model = job->model,
        .model_layout = job->model_layout,
        .start_joint = leg->start_joint,
        .mid_joint = leg->mid_joint,
        .end_joint = leg->end_joint,
        .target = {target[0], target[1], target[2]},
        .mid_axis = {leg->mid_axis[0], leg->mid_axis[1], leg->mid_axis[2]},
        .weight = weight,
        .soften = job->soften,
        .result = result,
    };
}

/* The nearest joint whose subtree holds every leg: where model matrices go stale (the legs are
 * disjoint subtrees, so no single leg's start joint covers the others). */
static uint32_t legs_ancestor(const cb_ik_stride_job *job)
{
    const struct cb_skeleton *s = job->skeleton;
    uint32_t a = job->legs[0].start_joint;
    for (uint32_t l = 1; l < job->leg_count; ++l) {
        while (!cb_skeleton_in_subtree(s, job->legs[l].start_joint, a)) {
            a = (uint32_t)s->parents[a]; /* the legs share the hip as an ancestor */
        }
    }
    return a;
}

static bool leg_shares_joint(const cb_ik_stride_leg *a, const cb_ik_stride_leg *b)
{
    const uint32_t ja[3] = {a->start_joint, a->mid_joint, a->end_joint};
    const uint32_t jb[3] = {b->start_joint, b->mid_joint, b->end_joint};
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 3; ++y) {
            if (ja[x] == jb[y]) {
                return true;
            }
        }
    }
    return false;
}

static cb_result check_stride_legs(const cb_ik_stride_job *job, cb_error *err)
{
    const cb_skeleton *s = job->skeleton;
    const float zero[3] = {0.0f, 0.0f, 0.0f};
    for (uint32_t l = 0; l < job->leg_count; ++l) {
        const cb_ik_stride_leg *leg = &job->legs[l];
        cb_ik_two_bone_result unused;
        cb_ik_two_bone_job leg_job = stride_leg_job(
            job, l, (cb_xform_group_span){(cb_xform_group *)job->pose.ptr, job->pose.count}, zero,
            job->weight, &unused);
        cb_error inner = {0};
        cb_result r = cb_ik_two_bone_job_validate(&leg_job, &inner);
        if (r != CB_OK) {
            const char *msg = strstr(inner.message, ": ");
            return cb_error_set(err, r, "stride warp job: legs[%u]: %s", l,
                                msg != NULL ? msg + 2 : inner.message);
        }
        if (leg->start_joint <= job->hip_joint ||
            !cb_skeleton_in_subtree(s, leg->start_joint, job->hip_joint)) {
            return cb_error_set(err, CB_ERR_HIERARCHY,
                                "stride warp job: legs[%u].start_joint %u is not below hip_joint "
                                "%u",
                                l, leg->start_joint, job->hip_joint);
        }
        for (uint32_t m = 0; m < l; ++m) {
            if (leg_shares_joint(leg, &job->legs[m])) {
                return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                    "stride warp job: legs[%u] and legs[%u] share a joint", m, l);
            }
            /* The legs are solved one after the other on frames taken before: a leg below
             * another would be solved from its stale frames. */
            uint32_t other = job->legs[m].start_joint;
            if (cb_skeleton_in_subtree(s, leg->start_joint, other) ||
                cb_skeleton_in_subtree(s, other, leg->start_joint)) {
                return cb_error_set(err, CB_ERR_HIERARCHY,
                                    "stride warp job: legs[%u] and legs[%u]: one is below the "
                                    "other",
                                    m, l);
            }
        }
    }
    return CB_OK;
}

cb_result cb_ik_stride_job_validate(const cb_ik_stride_job *job, cb_error *err)
{
    if (job == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "stride warp job: job is NULL");
    }
    const io_fields io = stride_io(job);
    cb_result r = check_io(&io, err);
    if (r != CB_OK || (r = check_joint(&io, job->hip_joint, "hip_joint", err)) != CB_OK) {
        return r;
    }
    if (job->out.ptr == NULL || job->legs == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "stride warp job: %s is NULL",
                            job->out.ptr == NULL ? "out" : "legs");
    }
    if (job->leg_count == 0 || job->leg_count > CB_IK_STRIDE_MAX_LEGS) {
        return cb_error_set(err, job->leg_count == 0 ? CB_ERR_TOO_FEW : CB_ERR_TOO_MANY,
                            "stride warp job: %u legs, 1 to %d are supported", job->leg_count,
                            CB_IK_STRIDE_MAX_LEGS);
    }
    if (!isfinite(job->direction[0]) || !isfinite(job->direction[1]) || !isfinite(job->scale)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "stride warp job: %s is not finite",
                            isfinite(job->scale) ? "direction" : "scale");
    }
    if (fabsf(job->direction[0]) > CB_IK_MAX_COORDINATE ||
        fabsf(job->direction[1]) > CB_IK_MAX_COORDINATE) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "stride warp job: direction is beyond CB_IK_MAX_COORDINATE");
    }
    if (!(job->scale >= CB_IK_STRIDE_MIN_SCALE && job->scale <= CB_IK_STRIDE_MAX_SCALE)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "stride warp job: scale %g is outside [%g, %g]", (double)job->scale,
                            (double)CB_IK_STRIDE_MIN_SCALE, (double)CB_IK_STRIDE_MAX_SCALE);
    }
    return check_stride_legs(job, err);
}

/* Every leg's target from the animated pose (the closed form of ik.h), its chain checked as
 * two-bone IK checks it, before anything is written. The legs' model frames go to `frames` for
 * the solves: a leg's frames are the same bits after the legs before it were solved, as the
 * legs are disjoint subtrees (stride_solve). */
static cb_result stride_targets(const cb_ik_stride_job *job, float ux, float uz, float target[][3],
                                frame frames[][3], cb_error *err)
{
    const io_fields io = stride_io(job);
    frame hip;
    chain_frames(job->skeleton, job->pose.ptr, job->model, job->model_layout, &job->hip_joint, 1,
                 &hip);
    cb_result r =
        check_chain(&hip, job->pose.ptr, job->model.ptr != NULL, &job->hip_joint, 1, io.job, err);
    for (uint32_t l = 0; l < job->leg_count && r == CB_OK; ++l) {
        const cb_ik_stride_leg *leg = &job->legs[l];
        const uint32_t joints[3] = {leg->start_joint, leg->mid_joint, leg->end_joint};
        frame *f = frames[l];
        chain_frames(job->skeleton, job->pose.ptr, job->model, job->model_layout, joints, 3, f);
        r = check_chain(f, job->pose.ptr, job->model.ptr != NULL, joints, 3, io.job, err);
        if (r != CB_OK) {
            break;
        }
        float a = cb_fv_len(cb_fv_sub(f[1].p, f[0].p)), b = cb_fv_len(cb_fv_sub(f[2].p, f[1].p));
        if (!(a >= CB_IK_MIN_BONE_LENGTH) || !(b >= CB_IK_MIN_BONE_LENGTH)) {
            return cb_error_set(err, CB_ERR_DEGENERATE,
                                "stride warp job: legs[%u] has a bone shorter than "
                                "CB_IK_MIN_BONE_LENGTH",
                                l);
        }
        v3 e = f[2].p;
        float along = (e.x - hip.p.x) * ux + (e.z - hip.p.z) * uz;
        float shift = (job->scale - 1.0f) * along;
        target[l][0] = e.x + shift * ux;
        target[l][1] = e.y;
        target[l][2] = e.z + shift * uz;
        for (int c = 0; c < 3 && r == CB_OK; ++c) {
            if (!(fabsf(target[l][c]) <= CB_IK_MAX_COORDINATE)) {
                r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                 "stride warp job: legs[%u]'s target is beyond "
                                 "CB_IK_MAX_COORDINATE",
                                 l);
            }
        }
    }
    return r;
}

/* What the warp works out before it writes: each leg's target and model frames (start, mid,
 * end), the legs' weight, and whether it has work. */
typedef struct stride_work {
    float target[CB_IK_STRIDE_MAX_LEGS][3];
    frame frames[CB_IK_STRIDE_MAX_LEGS][3];
    float weight;
    bool on;
} stride_work;

/* The warp's first half, the direction taken as checked; the legs' frames, which the targets
 * came from, go to the plan. */
static cb_result stride_plan(const cb_ik_stride_job *job, stride_work *plan, cb_error *err)
{
    float ux = 0.0f, uz = 0.0f;
    memset(plan->target, 0, sizeof plan->target);
    plan->on = cb_ik_stride_on(job, &ux, &uz);
    cb_result r = plan->on ? stride_targets(job, ux, uz, plan->target, plan->frames, err) : CB_OK;
    plan->weight = cb_ik_stride_weight(job);
    return r;
}

static cb_result stride_solve(const cb_ik_stride_job *job, cb_error *err)
{
    const io_fields io = stride_io(job);
    stride_work plan;
    cb_result r = stride_plan(job, &plan, err);
    if (r != CB_OK) {
        return r;
    }
    prepare_out(&io);
    uint32_t reached = 0;
    for (uint32_t l = 0; l < job->leg_count && plan.on; ++l) {
        /* The legs are disjoint chains below the hip, none below another: each one's model
         * frames in out (pose, or a copy of it) are those stride_targets computed from pose,
         * bit for bit, after the legs before it were solved; they are not computed again (nor
         * in the lanes of cb_ik_stride_many_unchecked, which solve the legs the same way). */
        cb_ik_two_bone_result res;
        cb_ik_two_bone_job leg =
            stride_leg_job(job, l, job->out, plan.target[l], plan.weight, &res);
        r = two_bone_solve(&leg, plan.frames[l], err);
        CB_ASSERT(r == CB_OK); /* its chain passed the same checks in stride_targets */
        reached += res.reached;
    }
    if (job->result != NULL) {
        memcpy(job->result->target, plan.target, sizeof job->result->target);
        job->result->reached = reached;
        job->result->applied = plan.on;
        job->result->first_joint = plan.on ? legs_ancestor(job) : 0;
    }
    return CB_OK;
}

cb_result cb_ik_stride_job_run(const cb_ik_stride_job *job, cb_error *err)
{
    cb_result r = cb_ik_stride_job_validate(job, err);
    return r != CB_OK ? r : stride_solve(job, err);
}

/* What the unchecked forms check of the job's scalars: the direction, which the frame
 * brings. */
static cb_result check_direction(const cb_ik_stride_job *job, cb_error *err)
{
    if (!cb_ik_stride_direction_ok(job)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "stride warp job: direction is not finite or too large");
    }
    CB_ASSERT(cb_ik_stride_job_validate(job, NULL) == CB_OK);
    return CB_OK;
}

cb_result cb_ik_stride_unchecked(const cb_ik_stride_job *job, cb_error *err)
{
    cb_result r = check_direction(job, err);
    return r != CB_OK ? r : stride_solve(job, err);
}

/* ------------------------------------------------------------------------------------------ */
/* A joint's model position (ik_kernels.h)                                                    */

void cb_ik_joint_position(const cb_skeleton *skeleton, const cb_xform_group *pose, uint32_t j,
                          float out[3])
{
    v3 p = path_position(skeleton, pose, j, -1);
    out[0] = p.x, out[1] = p.y, out[2] = p.z;
}

/* ------------------------------------------------------------------------------------------ */
/* Moving a joint in model space (ik_kernels.h)                                               */

bool cb_ik_translate_joint(const cb_skeleton *skeleton, cb_xform_group *pose, uint32_t j,
                           const float delta[3])
{
    v3 d = v3_make(delta);
    int32_t parent = skeleton->parents[j];
    if (parent >= 0) {
        /* The parent's linear part L (rotation and scale, any): the local translation moves by
         * L^-1 delta, by the adjugate (the rows c1 x c2, c2 x c0, c0 x c1 over det L). */
        frame4 pf = path_frame(skeleton, pose, (size_t)parent, -1);
        frame f;
        unpad(&pf, &f);
        v3 r0 = cb_fv_cross(f.c[1], f.c[2]), r1 = cb_fv_cross(f.c[2], f.c[0]);
        v3 r2 = cb_fv_cross(f.c[0], f.c[1]);
        float det = cb_fv_dot(f.c[0], r0);
        if (!(fabsf(det) >= 1e-30f) || !(fabsf(det) <= FLT_MAX)) {
            return false; /* a singular or non-finite parent: no translation undoes it */
        }
        float inv = 1.0f / det;
        d = (v3){cb_fv_dot(r0, d) * inv, cb_fv_dot(r1, d) * inv, cb_fv_dot(r2, d) * inv};
    }
    float t[3];
    cb_lane_get(pose, CB_LANE_COMPONENTS, j, CB_LANE_T, 3, t);
    const float moved[3] = {t[0] + d.x, t[1] + d.y, t[2] + d.z};
    if (!(fabsf(moved[0]) <= FLT_MAX && fabsf(moved[1]) <= FLT_MAX && fabsf(moved[2]) <= FLT_MAX)) {
        return false;
    }
    cb_lane_set(pose, CB_LANE_COMPONENTS, j, CB_LANE_T, 3, moved);
    return true;
}
