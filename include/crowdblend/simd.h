/**
 * @file crowdblend/simd.h
 * @brief Batch quaternion and transform kernels, and the SoA joint-group layout.
 *
 * The library works on W lanes at a time. W belongs to the kernel set in use: a library built
 * with the default `isa=dispatch` carries every set of its architecture (x86-64: portable and
 * SSE4.2 with W = 4, AVX2 with W = 8, AVX-512 with W = 16; aarch64: portable and NEON with
 * W = 4) and chooses one once, when it starts, before any object exists: the widest the CPU
 * runs, or a lower one named by the environment variable CROWDBLEND_ISA
 * (portable|sse4|avx2|avx512|neon). A library built with another `isa` has one set, fixed.
 * Nothing here depends on W at compile time: hosts ask for the width and the group sizes at
 * run time, so one host build works with any library build and any set.
 *
 * One result everywhere: every kernel set gives the same bits for the same inputs, on every
 * CPU vendor and on aarch64 (no hardware estimates, multiply-adds never fused, no sum whose
 * order depends on W), so a crowd's poses replay identically across machines. The price is
 * measured in docs/performance.md.
 *
 * Two kinds of data:
 *  - SoA columns (cb_quat_soa, cb_vec3_soa): one float array per component, any count n.
 *    The `_soa` kernels process them W lanes at a time; the last n % W elements go through
 *    the same vector code on a padded copy, so element i gets bit-identical results whatever
 *    n is.
 *  - SoA joint groups (cb_xform_group): W joints stored component-major
 *    (tx[W] ty[W] tz[W] qx[W] qy[W] qz[W] qw[W] sx[W] sy[W] sz[W]), aligned to
 *    cb_simd_group_align(). Poses are arrays of groups; a skeleton of n joints uses
 *    cb_simd_group_count(n) groups, and the padding lanes hold identity.
 *
 * Every kernel has a `_ref` twin: plain scalar C with the same contract, used as the baseline
 * in benchmarks and equivalence tests. The two agree within the bounds documented per kernel,
 * not bit for bit (they are different algorithms for slerp).
 *
 * Quaternions are (x, y, z, w) with w real, Hamilton product, as in cglm.
 *
 * Degenerate input, for every quaternion kernel: a quaternion whose squared length is below
 * 1e-30, or is not finite (NaN, Inf, or overflowing past FLT_MAX), is replaced by the identity
 * where the kernel normalizes. Interpolation parameters t are clamped to [0, 1], and a NaN t
 * counts as 0. Vector kernels propagate NaN like ordinary arithmetic.
 *
 * Aliasing: an output may be the same arrays as an input (element i is read before it is
 * written); partial overlap is not allowed.
 *
 * Thread-safety: all functions are reentrant; calls with disjoint outputs may run concurrently.
 */
#ifndef CROWDBLEND_SIMD_H
#define CROWDBLEND_SIMD_H

#include "crowdblend/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Kernel sets and width, queried at run time                                                */

/** The kernel sets a library can carry (bit (1u << set) in cb_kernel_info's masks). */
typedef enum cb_kernel_set {
    CB_KERNEL_SET_PORTABLE, /**< SIMDe's plain C (no SIMD instructions assumed), W = 4 */
    CB_KERNEL_SET_SSE4,     /**< x86-64-v2 (SSE4.2), W = 4 */
    CB_KERNEL_SET_AVX2,     /**< x86-64-v3 (AVX2, BMI2; the FMA unit stays unused), W = 8 */
    CB_KERNEL_SET_AVX512,   /**< x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), W = 16 */
    CB_KERNEL_SET_NEON,     /**< aarch64 Advanced SIMD through SIMDe, W = 4 */
    CB_KERNEL_SET_COUNT
} cb_kernel_set;

/** Which kernel set the library runs, and why. Every string is static. */
typedef struct cb_kernel_info {
    cb_kernel_set set;   /**< the set in use */
    const char *name;    /**< its name, as CROWDBLEND_ISA spells it: "avx2", ... */
    unsigned simd_width; /**< its width W: 4, 8 or 16 */
    bool dispatch;       /**< chosen at start-up (isa=dispatch), not fixed when built */
    unsigned built;      /**< bit (1u << set) for every set this library carries */
    unsigned supported;  /**< bit (1u << set) for every set this CPU can run */
    const char *reason;  /**< one sentence: why this set (auto, forced, a request refused) */
    bool refused;        /**< CROWDBLEND_ISA asked for a set that is not the one in use */
} cb_kernel_info;

/**
 * The kernel set in use. The choice is made once, when the library is loaded (or at the first
 * call into it, whichever comes first), and never changes: the width shapes every object's
 * layout. CROWDBLEND_ISA=portable|sse4|avx2|avx512|neon (or auto) forces a set; a set this CPU
 * cannot run, or that this library does not carry, is refused (the widest supported set is
 * used and `reason` says so). A library built for one set ignores the variable.
 * Thread-safe.
 */
CB_API cb_kernel_info cb_simd_kernel_info(void);

/** "portable", "sse4", "avx2", "avx512", "neon"; "unknown" for other values. */
CB_API const char *cb_kernel_set_name(cb_kernel_set set);

/** Lanes per SIMD vector of the kernel set in use: 4, 8 or 16. */
CB_API size_t cb_simd_width(void);

/** Number of joint groups that hold joint_count joints: ceil(joint_count / W). */
CB_API size_t cb_simd_group_count(size_t joint_count);

/** Bytes of one joint group: 10 * W * sizeof(float). */
CB_API size_t cb_simd_group_bytes(void);

/** Alignment, in bytes, that arrays of joint groups must have: W * sizeof(float). */
CB_API size_t cb_simd_group_align(void);

/* ----------------------------------------------------------------------------------------- */
/* SoA column views                                                                          */

/** Writable quaternion columns: element i is (x[i], y[i], z[i], w[i]). */
typedef struct cb_quat_soa {
    float *x, *y, *z, *w;
} cb_quat_soa;

/** Read-only quaternion columns. */
typedef struct cb_quat_csoa {
    const float *x, *y, *z, *w;
} cb_quat_csoa;

/** Writable vec3 columns. */
typedef struct cb_vec3_soa {
    float *x, *y, *z;
} cb_vec3_soa;

/** Read-only vec3 columns. */
typedef struct cb_vec3_csoa {
    const float *x, *y, *z;
} cb_vec3_csoa;

/* ----------------------------------------------------------------------------------------- */
/* Batch kernels over SoA columns                                                            */
/* All return CB_OK, or CB_ERR_NULL_ARGUMENT when n > 0 and a column pointer is NULL (nothing  */
/* is written then). n == 0 does nothing and succeeds.                                       */

/**
 * out[i] = q[i] / |q[i]|, or identity for degenerate q[i] (see the file comment).
 * Accuracy: within 2.5e-7 of the exact result per component (a correctly rounded square root
 * and division; tests/test_simd_accuracy.c asserts every bound given here).
 */
CB_API cb_result cb_quat_normalize_soa(cb_quat_csoa q, size_t n, cb_quat_soa out);
/** Scalar reference of cb_quat_normalize_soa (1 / sqrtf). */
CB_API cb_result cb_quat_normalize_soa_ref(cb_quat_csoa q, size_t n, cb_quat_soa out);

/**
 * Normalized linear interpolation along the shorter arc: b is negated when dot(a, b) < 0, then
 * out = normalize((1 - t) a + t b). Inputs need not be unit. Fast, but its angular speed is not
 * constant: use slerp where that distortion would show.
 * Accuracy: within 3e-7 of the double-precision result per component.
 */
CB_API cb_result cb_quat_nlerp_soa(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                                   cb_quat_soa out);
/** Scalar reference of cb_quat_nlerp_soa. */
CB_API cb_result cb_quat_nlerp_soa_ref(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                                       cb_quat_soa out);

/**
 * Spherical linear interpolation along the shorter arc, at constant angular speed. The inputs
 * are normalized first; q and -q (antipodal, the same rotation) give that rotation for every t.
 * For inputs exactly 90 degrees apart in 4D (180 degrees of rotation) both arcs are equally
 * short and the one with dot(a, b) >= 0 is taken.
 * The SIMD version has no division by sin(theta): it writes the weights as
 * (1-t) sinc((1-t) theta) / sinc(theta) and t sinc(t theta) / sinc(theta), which stay exact as
 * theta -> 0 (where slerp becomes nlerp) instead of switching to nlerp below a threshold.
 * Accuracy: within 4.5e-7 of the double-precision slerp of the normalized inputs.
 */
CB_API cb_result cb_quat_slerp_soa(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                                   cb_quat_soa out);
/** Scalar reference of cb_quat_slerp_soa: acosf/sinf, nlerp when the angle is tiny. */
CB_API cb_result cb_quat_slerp_soa_ref(cb_quat_csoa a, cb_quat_csoa b, const float *t, size_t n,
                                       cb_quat_soa out);

/** Hamilton product out = a * b (rotate by b, then by a). No normalization. */
CB_API cb_result cb_quat_mul_soa(cb_quat_csoa a, cb_quat_csoa b, size_t n, cb_quat_soa out);
/** Scalar reference of cb_quat_mul_soa. */
CB_API cb_result cb_quat_mul_soa_ref(cb_quat_csoa a, cb_quat_csoa b, size_t n, cb_quat_soa out);

/** Rotates v by the unit quaternion q: out = q v q*. q is used as given (not normalized). */
CB_API cb_result cb_quat_rotate_soa(cb_quat_csoa q, cb_vec3_csoa v, size_t n, cb_vec3_soa out);
/** Scalar reference of cb_quat_rotate_soa. */
CB_API cb_result cb_quat_rotate_soa_ref(cb_quat_csoa q, cb_vec3_csoa v, size_t n,
                                        cb_vec3_soa out);

/**
 * out = (1 - t) a + t b, evaluated as a - t a + t b so that t = 0 gives a and t = 1 gives b
 * exactly. t is clamped to [0, 1] (NaN counts as 0).
 */
CB_API cb_result cb_vec3_lerp_soa(cb_vec3_csoa a, cb_vec3_csoa b, const float *t, size_t n,
                                  cb_vec3_soa out);
/** Scalar reference of cb_vec3_lerp_soa. */
CB_API cb_result cb_vec3_lerp_soa_ref(cb_vec3_csoa a, cb_vec3_csoa b, const float *t, size_t n,
                                      cb_vec3_soa out);

/* ----------------------------------------------------------------------------------------- */
/* Joint groups                                                                              */

/**
 * W joints in SoA form. Opaque to hosts because its size depends on W: allocate
 * cb_simd_group_count(n) * cb_simd_group_bytes() bytes aligned to cb_simd_group_align().
 */
typedef struct cb_xform_group cb_xform_group;

/**
 * Packs in.count AoS transforms into ceil(in.count / W) groups; the padding lanes of the last
 * group get identity transforms.
 * @param group_count  number of groups at out; must be >= cb_simd_group_count(in.count)
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_SPAN_TOO_SHORT (group_count too small) or
 *         CB_ERR_MISALIGNED (out not aligned to cb_simd_group_align()); nothing is written then.
 */
CB_API cb_result cb_xform_pack(cb_xform_cspan in, cb_xform_group *out, size_t group_count);

/**
 * Unpacks the first out.count joints of the groups into AoS transforms. Padding lanes are not
 * read. Requires group_count >= cb_simd_group_count(out.count); errors as cb_xform_pack.
 */
CB_API cb_result cb_xform_unpack(const cb_xform_group *in, size_t group_count,
                                 cb_xform_span out);

/**
 * Weighted blend of pose_count poses of group_count groups each:
 * translation and scale are the weighted means; rotations are accumulated, each flipped into
 * the hemisphere of the running sum (shortest path), then normalized.
 * @param poses    pose_count pointers to aligned group arrays; out may be one of them
 * @param weights  pose_count finite weights >= 0 whose sum is > 0
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_MISALIGNED, CB_ERR_INVALID_ARGUMENT (pose_count == 0,
 *         a weight negative or not finite, or a zero sum); nothing is written then.
 */
CB_API cb_result cb_xform_blend_groups(const cb_xform_group *const *poses, const float *weights,
                                       size_t pose_count, size_t group_count,
                                       cb_xform_group *out);
/** Scalar reference of cb_xform_blend_groups: one joint lane at a time. */
CB_API cb_result cb_xform_blend_groups_ref(const cb_xform_group *const *poses,
                                           const float *weights, size_t pose_count,
                                           size_t group_count, cb_xform_group *out);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_SIMD_H */
