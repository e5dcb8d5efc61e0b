/* Parameter processors over SoA columns, W characters at a time (crowdblend/params.h).
 *
 * Each function has one vector kernel for W lanes; full blocks read and write the caller's
 * columns directly (unaligned), and the last n % W elements are copied into padded stage
 * buffers and run through the same kernel, so element i never depends on n. The padding holds
 * finite values (0, or FORWARD states) and is never copied back or counted. */
#include <math.h>
#include <string.h>

#include "base/base_impl.h"
#include "crowdblend/params.h"
#include "params/params_kernels.h"
#include "simd/vmath.h"

static unsigned popcount(unsigned bits)
{
    unsigned n = 0;
    for (; bits != 0; bits &= bits - 1) {
        ++n;
    }
    return n;
}

/* Copies count (< W) elements from src + i into a padded stage (pad value fill). */
static void stage_in(float *stage, const float *src, size_t i, size_t count, float fill)
{
    for (size_t l = 0; l < CB_W; ++l) {
        stage[l] = l < count ? src[i + l] : fill;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Velocity blend                                                                             */

/* Shares of W velocities: forward, backward, left, right (one vector each). Non-finite
 * components read as 0 (the library's one rule); lanes below the speed threshold give 0. Error: one
 * division and one product per share, within 2 ulp of the exact share. Returns the non-finite
 * lanes' bits. */
CB_INLINE unsigned velocity_kernel(cb_vf x, cb_vf y, cb_vf z, cb_vf min_sq, cb_vf out[4])
{
    cb_vm fx = cb_vf_is_finite(x), fy = cb_vf_is_finite(y), fz = cb_vf_is_finite(z);
    cb_vm finite = cb_vm_and(cb_vm_and(fx, fy), fz);
    x = cb_vf_select(fx, x, cb_vf_zero());
    y = cb_vf_select(fy, y, cb_vf_zero());
    z = cb_vf_select(fz, z, cb_vf_zero());
    /* Components beyond 1e30 would overflow the L1 sum: scale such lanes by 1 / max first
     * (shares are scale-invariant); other lanes keep their exact values. */
    cb_vf big = cb_vf_max(cb_vf_max(cb_vf_abs(x), cb_vf_abs(y)), cb_vf_abs(z));
    cb_vm huge = cb_vf_gt(big, cb_vf_set1(1e30f));
    if (cb_vm_any(huge)) {
        cb_vf s = cb_vf_div(cb_vf_set1(1.0f), cb_vf_select(huge, big, cb_vf_set1(1.0f)));
        x = cb_vf_select(huge, cb_vf_mul(x, s), x);
        y = cb_vf_select(huge, cb_vf_mul(y, s), y);
        z = cb_vf_select(huge, cb_vf_mul(z, s), z);
    }
    cb_vf len2 = cb_vf_fmadd(x, x, cb_vf_fmadd(y, y, cb_vf_mul(z, z)));
    cb_vf sum = cb_vf_add(cb_vf_add(cb_vf_abs(x), cb_vf_abs(y)), cb_vf_abs(z));
    /* Moving: above the threshold (huge lanes always are: |v| > 1e30 exceeds any float
     * threshold's square root), and a positive L1 norm (len2 can underflow to 0 for denormal
     * components while the sum does not). */
    cb_vm above = cb_vm_or(huge, cb_vf_ge(len2, min_sq));
    cb_vm moving = cb_vm_and(above, cb_vf_gt(sum, cb_vf_zero()));
    cb_vf inv = cb_vf_div(cb_vf_set1(1.0f), cb_vf_select(moving, sum, cb_vf_set1(1.0f)));
    cb_vf zero = cb_vf_zero();
    out[0] = cb_vf_select(moving, cb_vf_mul(cb_vf_max(x, zero), inv), zero);
    out[1] = cb_vf_select(moving, cb_vf_mul(cb_vf_max(cb_vf_neg(x), zero), inv), zero);
    /* y is the left component (crowdblend/params.h, conventions): left = max(y, 0). */
    out[2] = cb_vf_select(moving, cb_vf_mul(cb_vf_max(y, zero), inv), zero);
    out[3] = cb_vf_select(moving, cb_vf_mul(cb_vf_max(cb_vf_neg(y), zero), inv), zero);
    return ~cb_vm_bits(finite) & CB_VM_ALL_BITS;
}

size_t cb_params_velocity_blend_unchecked(const float *x, const float *y, const float *z, size_t n,
                                          float min_sq_len, cb_velocity_blend out)
{
    float *cols[4] = {out.forward, out.backward, out.left, out.right};
    cb_vf min_sq = cb_vf_set1(min_sq_len);
    size_t bad = 0, i = 0;
    cb_vf o[4];
    for (; i + CB_W <= n; i += CB_W) {
        cb_vf vz = z != NULL ? cb_vf_loadu(z + i) : cb_vf_zero();
        bad += popcount(velocity_kernel(cb_vf_loadu(x + i), cb_vf_loadu(y + i), vz, min_sq, o));
        for (int k = 0; k < 4; ++k) {
            cb_vf_storeu(cols[k] + i, o[k]);
        }
    }
    if (i < n) {
        CB_VF_ALIGNED float sx[CB_W], sy[CB_W], sz[CB_W], so[CB_W];
        stage_in(sx, x, i, n - i, 0.0f);
        stage_in(sy, y, i, n - i, 0.0f);
        memset(sz, 0, sizeof sz);
        if (z != NULL) {
            stage_in(sz, z, i, n - i, 0.0f);
        }
        bad += popcount(velocity_kernel(cb_vf_load(sx), cb_vf_load(sy), cb_vf_load(sz), min_sq, o));
        for (int k = 0; k < 4; ++k) {
            cb_vf_store(so, o[k]);
            memcpy(cols[k] + i, so, (n - i) * sizeof(float));
        }
    }
    return bad;
}

cb_result cb_params_velocity_blend_4dir(const float *x, const float *y, const float *z, size_t n,
                                        float min_sq_len, cb_velocity_blend out,
                                        size_t *nonfinite_count)
{
    if (!isfinite(min_sq_len)) {
        return CB_ERR_NOT_FINITE;
    }
    if (min_sq_len < 0.0f) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (n > 0 && (x == NULL || y == NULL || out.forward == NULL || out.backward == NULL ||
                  out.left == NULL || out.right == NULL)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t bad = cb_params_velocity_blend_unchecked(x, y, z, n, min_sq_len, out);
    if (nonfinite_count != NULL) {
        *nonfinite_count = bad;
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Interp-to                                                                                  */

/* FInterpTo on W lanes; alpha = clamp(dt speed, 0, 1) is the same for every lane, and speed
 * <= 0 (alpha_valid false) snaps. Non-finite lanes follow params.h: a non-finite target reads
 * as 0 (the library's one rule), a non-finite current gives the target. Error: the step
 * current + d alpha rounds twice (the fused form once), within 1 ulp of the value. Returns the
 * non-finite lanes' bits. */
CB_INLINE unsigned interp_kernel(cb_vf cur, cb_vf tgt, cb_vf alpha, bool snap_all, cb_vf *out)
{
    cb_vm cf = cb_vf_is_finite(cur), tf = cb_vf_is_finite(tgt);
    tgt = cb_vf_select(tf, tgt, cb_vf_zero());
    cb_vf d = cb_vf_sub(tgt, cur);
    cb_vf step = cb_vf_fmadd(d, alpha, cur);
    cb_vm arrive = cb_vf_lt(cb_vf_mul(d, d), cb_vf_set1(1e-8f));
    cb_vf r = snap_all ? tgt : cb_vf_select(arrive, tgt, step);
    /* A non-finite current: the (finite) target. */
    cb_vf fallback = tgt;
    cb_vm ok = cf;
    /* A finite pair whose difference overflows: d = +-inf, d * alpha = +-inf or NaN: finish the
     * step in double-free form by moving alpha of the way as (1 - alpha) cur + alpha tgt. */
    cb_vm wide = cb_vm_not(cb_vf_is_finite(d));
    cb_vf blend = cb_vf_fmadd(alpha, tgt, cb_vf_fnmadd(alpha, cur, cur));
    r = cb_vf_select(cb_vm_and(wide, cb_vm_not(cb_vm_or(arrive, cb_vm_not(ok)))),
                     snap_all ? tgt : blend, r);
    *out = cb_vf_select(ok, r, fallback);
    return ~cb_vm_bits(cb_vm_and(cf, tf)) & CB_VM_ALL_BITS;
}

size_t cb_params_interp_to_unchecked(const float *current, const float *target, size_t n,
                                     float dt_s, float speed, float *out)
{
    bool snap_all = !(speed > 0.0f);
    float a = dt_s * speed;
    a = a > 1.0f ? 1.0f : a < 0.0f ? 0.0f : a;
    cb_vf alpha = cb_vf_set1(a);
    size_t bad = 0, i = 0;
    cb_vf r;
    for (; i + CB_W <= n; i += CB_W) {
        bad += popcount(
            interp_kernel(cb_vf_loadu(current + i), cb_vf_loadu(target + i), alpha, snap_all, &r));
        cb_vf_storeu(out + i, r);
    }
    if (i < n) {
        CB_VF_ALIGNED float sc[CB_W], st[CB_W], so[CB_W];
        stage_in(sc, current, i, n - i, 0.0f);
        stage_in(st, target, i, n - i, 0.0f);
        bad += popcount(interp_kernel(cb_vf_load(sc), cb_vf_load(st), alpha, snap_all, &r));
        cb_vf_store(so, r);
        memcpy(out + i, so, (n - i) * sizeof(float));
    }
    return bad;
}

cb_result cb_params_interp_to(const float *current, const float *target, size_t n, float dt_s,
                              float speed, float *out, size_t *nonfinite_count)
{
    if (!isfinite(dt_s) || !isfinite(speed)) {
        return CB_ERR_NOT_FINITE;
    }
    if (dt_s < 0.0f) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (n > 0 && (current == NULL || target == NULL || out == NULL)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t bad = cb_params_interp_to_unchecked(current, target, n, dt_s, speed, out);
    if (nonfinite_count != NULL) {
        *nonfinite_count = bad;
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Quadrants with hysteresis                                                                  */

/* States as floats in the vector code: the cb_quadrant values themselves (exact). */
CB_INLINE unsigned quadrant_kernel(cb_vf angle, cb_vf state, cb_vf dead, cb_vf *out)
{
    const float pi = 3.14159265358979324f;
    cb_vm finite = cb_vf_is_finite(angle);
    /* Wrap into [-pi, pi]: angles there pass through unchanged (k = 0). */
    cb_vf a = cb_vf_select(finite, angle, cb_vf_zero());
    cb_vf k = cb_vf_round(cb_vf_mul(a, cb_vf_set1(0.159154943091895336f)));
    a = cb_vf_select(cb_vf_gt(cb_vf_abs(a), cb_vf_set1(pi)),
                     cb_vf_fnmadd(k, cb_vf_set1(6.28318530717958648f), a), a);
    cb_vf abs_a = cb_vf_abs(a);
    cb_vf fwd = cb_vf_set1((float)CB_QUADRANT_FORWARD),
          bwd = cb_vf_set1((float)CB_QUADRANT_BACKWARD);
    cb_vf fwd_dz = cb_vf_select(cb_vf_eq(state, fwd), cb_vf_add(dead, dead), dead);
    cb_vf bwd_dz = cb_vf_select(cb_vf_eq(state, bwd), cb_vf_add(dead, dead), dead);
    cb_vm is_fwd = cb_vf_le(abs_a, cb_vf_add(cb_vf_set1(0.25f * pi), fwd_dz));
    cb_vm is_bwd = cb_vf_ge(abs_a, cb_vf_sub(cb_vf_set1(0.75f * pi), bwd_dz));
    /* Positive angles turn from forward towards the left (+y). */
    cb_vf side = cb_vf_select(cb_vf_gt(a, cb_vf_zero()), cb_vf_set1((float)CB_QUADRANT_LEFT),
                              cb_vf_set1((float)CB_QUADRANT_RIGHT));
    /* A non-finite angle reads as 0 (the library's one rule): forward. */
    *out = cb_vf_select(is_fwd, fwd, cb_vf_select(is_bwd, bwd, side));
    return ~cb_vm_bits(finite) & CB_VM_ALL_BITS;
}

static unsigned quadrant_block(const float *angle, uint8_t *state, size_t count, cb_vf dead)
{
    CB_VF_ALIGNED float sa[CB_W], ss[CB_W], so[CB_W];
    stage_in(sa, angle, 0, count, 0.0f);
    for (size_t l = 0; l < CB_W; ++l) {
        ss[l] = l < count ? (float)state[l] : (float)CB_QUADRANT_FORWARD;
    }
    cb_vf r;
    unsigned bad = quadrant_kernel(cb_vf_load(sa), cb_vf_load(ss), dead, &r);
    cb_vf_store(so, r);
    for (size_t l = 0; l < count; ++l) {
        state[l] = (uint8_t)so[l];
    }
    return bad & ((1u << count) - 1u);
}

size_t cb_params_quadrant_unchecked(const float *angle_rad, size_t n, float dead_zone_rad,
                                    uint8_t *state)
{
    /* States are bytes, so every block goes through the small stage (W byte conversions);
     * the classification itself is vector code. */
    cb_vf dead = cb_vf_set1(dead_zone_rad);
    size_t bad = 0;
    for (size_t i = 0; i < n; i += CB_W) {
        size_t count = n - i < CB_W ? n - i : CB_W;
        bad += popcount(quadrant_block(angle_rad + i, state + i, count, dead));
    }
    return bad;
}

cb_result cb_params_quadrant(const float *angle_rad, size_t n, float dead_zone_rad, uint8_t *state,
                             size_t *nonfinite_count)
{
    if (!isfinite(dead_zone_rad)) {
        return CB_ERR_NOT_FINITE;
    }
    if (!(dead_zone_rad >= 0.0f && dead_zone_rad <= 0.392699081698724155f)) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (n > 0 && (angle_rad == NULL || state == NULL)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t i = 0; i < n; ++i) {
        if (state[i] > CB_QUADRANT_LEFT) {
            return CB_ERR_INVALID_ARGUMENT;
        }
    }
    size_t bad = cb_params_quadrant_unchecked(angle_rad, n, dead_zone_rad, state);
    if (nonfinite_count != NULL) {
        *nonfinite_count = bad;
    }
    return CB_OK;
}
