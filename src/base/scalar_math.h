/* Scalar vector and quaternion math, the one implementation for every module: in float for the
 * per-frame scalar code (IK, inertialization, model-space TRS, the scalar references of the
 * SIMD kernels) and in double for build-time code (clip resampling, root-motion extraction, the
 * procedural humanoid). Both come from one template, base/scalar_math_t.h:
 *   float:  cb_fvec3, cb_fquat, cb_fv(x, y, z), cb_fv_<op>, cb_fq_<op>, cb_f<op> (scalars)
 *   double: cb_dvec3, cb_dquat, cb_dv(x, y, z), cb_dv_<op>, cb_dq_<op>, cb_d<op>
 * Quaternions are (x, y, z, w), Hamilton product, a * b rotates by b first. */
#ifndef CROWDBLEND_BASE_SCALAR_MATH_H
#define CROWDBLEND_BASE_SCALAR_MATH_H

#include <math.h>
#include <stddef.h>

/* Small functions on long dependency chains: inlined even at -O0 (the sanitizer build), where
 * calls made two-bone IK about a quarter slower. */
#if defined(__GNUC__) || defined(__clang__)
#define SM_INLINE static inline __attribute__((always_inline))
#else
#define SM_INLINE static inline
#endif

#define CB_DPI 3.14159265358979323846
#define CB_FPI 3.14159265f

/* float */
#define SM_T float
#define SM_V cb_fvec3
#define SM_Q cb_fquat
#define SM_VMAKE cb_fv
#define SM_VF(n) cb_fv_##n
#define SM_QF(n) cb_fq_##n
#define SM_SF(n) cb_f##n
#define SM_SQRT sqrtf
#define SM_SIN sinf
#define SM_COS cosf
#define SM_ACOS acosf
#define SM_C(x) x##f
/* 1e-30 keeps 1/sqrt finite and far from the denormal range (FLT_MIN is 1.2e-38): a
 * quaternion of length 1e-15 is still a rotation, "length 0" covers underflowed and zeroed
 * data. The SIMD kernels use the same bound (CB_QUAT_MIN_LENGTH_SQ in simd/soa.h). */
#define SM_QUAT_MIN_LENGTH_SQ 1e-30f
/* Below about 0.08 degrees sin(theta) is too small to divide by in float. */
#define SM_SLERP_NLERP_DOT 0.999999f
#include "base/scalar_math_t.h"

/* double */
#define SM_T double
#define SM_V cb_dvec3
#define SM_Q cb_dquat
#define SM_VMAKE cb_dv
#define SM_VF(n) cb_dv_##n
#define SM_QF(n) cb_dq_##n
#define SM_SF(n) cb_d##n
#define SM_SQRT sqrt
#define SM_SIN sin
#define SM_COS cos
#define SM_ACOS acos
#define SM_C(x) x
#define SM_QUAT_MIN_LENGTH_SQ 1e-200
/* Half-angles below about 4e-8 rad: nlerp is off by theta^3, far below double precision. */
#define SM_SLERP_NLERP_DOT (1.0 - 1e-15)
#include "base/scalar_math_t.h"

/* ---- root-motion helpers (double, build time) ---- */

/* Heading of a rotation: the angle about +Y of its forward (+Z) axis projected on the ground,
 * atan2(x, z). `fallback` when the forward axis is vertical. */
SM_INLINE double cb_dq_heading(cb_dquat q, double fallback)
{
    cb_dvec3 f = cb_dq_rotate(q, cb_dv(0.0, 0.0, 1.0));
    if (f.x * f.x + f.z * f.z < 1e-18) {
        return fallback;
    }
    return atan2(f.x, f.z);
}

/* Rotates v about +Y by angle a: the rotation of the quaternion (0, sin(a/2), 0, cos(a/2)). */
SM_INLINE cb_dvec3 cb_dv_rotate_y(cb_dvec3 v, double a)
{
    /* Most clips never turn: their root yaw is exactly 0 and the rotation is the identity.
     * Skipping libm there is exact and saved 6% of a crowd frame. */
    if (a == 0.0) {
        return v;
    }
    double c = cos(a), s = sin(a);
    return (cb_dvec3){v.x * c + v.z * s, v.y, -v.x * s + v.z * c};
}

/* sin(a) and cos(a) in double, the same bits on every CPU and C library (glibc picks an FMA
 * variant of sin and cos at run time on some x86 CPUs): per-frame code rotates with it. The
 * argument is reduced by pi/2 in three parts (Cody and Waite; exact while |a| < 2^20 quarter
 * turns), then Taylor series to degree 17 and 18 on [-pi/4, pi/4] (truncation below 1e-19):
 * about 2 ulp. Non-finite a gives NaN; |a| beyond 2^51 quarter turns, where a double holds no
 * fraction of a turn, gives (0, 1). */
SM_INLINE void cb_det_sincos(double a, double *sin_out, double *cos_out)
{
    if (!(a - a == 0.0)) {
        *sin_out = *cos_out = a - a;
        return;
    }
    if (a > -0x1p-27 && a < 0x1p-27) {
        /* sin(a) rounds to a (signed zeros kept) and cos(a) to 1: a^2 / 2 < 2^-55. */
        *sin_out = a;
        *cos_out = 1.0;
        return;
    }
    double k = a * 0.63661977236758134308; /* 2 / pi */
    if (!(k > -0x1p51 && k < 0x1p51)) {
        *sin_out = 0.0;
        *cos_out = 1.0;
        return;
    }
    /* Round to nearest by the 1.5 * 2^52 trick: SSE2 and NEON doubles, no contraction. */
    k = (k + 0x1.8p52) - 0x1.8p52;
    double r = ((a - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) -
               k * 2.02226624871116645580e-21;
    /* Horner from the highest term: sin(r) = r + r z P(z), cos(r) = 1 + z Q(z), z = r^2. */
    static const double sin_terms[] = {
        1.0 / 355687428096000, -1.0 / 1307674368000, 1.0 / 6227020800, -1.0 / 39916800,
        1.0 / 362880,          -1.0 / 5040,          1.0 / 120,        -1.0 / 6};
    static const double cos_terms[] = {-1.0 / 6402373705728000,
                                       1.0 / 20922789888000,
                                       -1.0 / 87178291200,
                                       1.0 / 479001600,
                                       -1.0 / 3628800,
                                       1.0 / 40320,
                                       -1.0 / 720,
                                       1.0 / 24,
                                       -0.5};
    double z = r * r, p = 0.0, q = 0.0;
    for (size_t i = 0; i < sizeof sin_terms / sizeof sin_terms[0]; ++i) {
        p = p * z + sin_terms[i];
    }
    for (size_t i = 0; i < sizeof cos_terms / sizeof cos_terms[0]; ++i) {
        q = q * z + cos_terms[i];
    }
    double s = r + r * z * p, c = 1.0 + z * q;
    switch ((int)((long long)k & 3)) {
    case 0:
        *sin_out = s;
        *cos_out = c;
        break;
    case 1:
        *sin_out = c;
        *cos_out = -s;
        break;
    case 2:
        *sin_out = -s;
        *cos_out = -c;
        break;
    default:
        *sin_out = -c;
        *cos_out = s;
        break;
    }
}

/* cb_dv_rotate_y with cb_det_sincos: the same bits everywhere, for per-frame code. */
SM_INLINE cb_dvec3 cb_dv_rotate_y_det(cb_dvec3 v, double a)
{
    if (a == 0.0) {
        return v;
    }
    double s, c;
    cb_det_sincos(a, &s, &c);
    return (cb_dvec3){v.x * c + v.z * s, v.y, -v.x * s + v.z * c};
}

/* The angle in (-pi, pi] equal to a modulo 2 pi. */
SM_INLINE double cb_wrap_pi(double a)
{
    a = fmod(a + CB_DPI, 2.0 * CB_DPI);
    if (a <= 0.0) {
        a += 2.0 * CB_DPI;
    }
    return a - CB_DPI;
}

#endif
