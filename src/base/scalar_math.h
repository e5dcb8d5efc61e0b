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
