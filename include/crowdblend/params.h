/**
 * @file crowdblend/params.h
 * @brief Parameter processors: derived blend parameters for whole batches of characters, SoA
 *        columns in and out, SIMD over characters (stage 1 of the frame, before the solvers).
 *
 *   - cb_params_velocity_blend_4dir: a local velocity split into forward / backward / left /
 *     right shares (the "velocity blend" of Unreal's Advanced Locomotion System), to drive a
 *     4-direction blend or its weights directly.
 *   - cb_params_interp_to: smoothing of any parameter or weight towards a target, Unreal's
 *     FMath::FInterpTo, with its exact arrival.
 *   - cb_params_quadrant: the movement direction as forward / right / backward / left, with a
 *     hysteresis band so that an angle hovering at a boundary does not flicker (the cardinal
 *     direction selection of Unreal's Lyra sample).
 *
 * Conventions: local velocity is (x forward, y left, z up), the character's model axes +Z, +X
 * and +Y (one convention with root motion, crowdblend/clip.h, and with the blend parameters,
 * crowdblend/graph.h); angles are atan2(y, x) in radians, so positive angles are to the left
 * (counter-clockwise seen from above, as a positive root yaw turns). Every function processes
 * element i of each column independently, W elements at a time; the last n % W go through the
 * same vector code on a padded copy, so results never depend on n. Non-finite inputs follow
 * the library's one rule, the crowd's (crowdblend/crowd.h, PARAMETERS): a NaN or infinite
 * input value is read as 0, with the consequence stated per function, and counted in
 * *nonfinite_count (optional, may be NULL; an element counts once however many of its inputs
 * were non-finite). n == 0 does nothing and succeeds. Functions are reentrant; calls with
 * disjoint outputs may run
 * concurrently. Nothing is written when a function fails.
 */
#ifndef CROWDBLEND_PARAMS_H
#define CROWDBLEND_PARAMS_H

#include "crowdblend/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Output columns of cb_params_velocity_blend_4dir, n floats each. */
typedef struct cb_velocity_blend {
    float *forward, *backward, *left, *right;
} cb_velocity_blend;

/**
 * Splits local velocities into direction shares: with s = |x| + |y| + |z|,
 * forward = max(x, 0) / s, backward = max(-x, 0) / s, left = max(y, 0) / s,
 * right = max(-y, 0) / s. The four sum to 1 - |z| / s (1 for ground motion). Velocities with
 * x^2 + y^2 + z^2 below min_sq_len (and s = 0) give all four 0. A non-finite component is
 * read as 0: (NaN, 1, 0) is a velocity to the left.
 * @param x, y   forward and left components, n floats each
 * @param z      up component, n floats, or NULL for 0
 * @param min_sq_len  squared speed below which the character counts as standing, in
 *               (parameter units)^2, >= 0; e.g. 1e-4 for 1 cm/s in m/s
 * @param out    four output columns of n floats; they must not overlap the inputs
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (x, y or an output column NULL with n > 0),
 *         CB_ERR_NOT_FINITE (min_sq_len NaN or infinite) or CB_ERR_INVALID_ARGUMENT
 *         (min_sq_len < 0).
 */
CB_API cb_result cb_params_velocity_blend_4dir(const float *x, const float *y, const float *z,
                                               size_t n, float min_sq_len, cb_velocity_blend out,
                                               size_t *nonfinite_count);

/**
 * One smoothing step of each value towards its target, as Unreal's FMath::FInterpTo:
 *   if speed <= 0: out = target
 *   d = target - current; if d^2 < 1e-8: out = target (exact arrival)
 *   else out = current + d * clamp(dt_s * speed, 0, 1)
 * Repeated every frame this approaches the target exponentially in frames (by the factor
 * 1 - dt_s * speed per frame) and then lands on it exactly.
 * Non-finite values (counted): a non-finite target is read as 0, so the value moves towards 0
 * (it used to hold, and a character kept walking); a non-finite current gives the target
 * (0 when that is non-finite too).
 * @param current  n values; out may be the same array (in-place update)
 * @param target   n values
 * @param dt_s     frame time in seconds, finite and >= 0
 * @param speed    approach rate in 1/s, finite; <= 0 snaps to the target
 * @param out      n values
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (dt_s or speed) or
 *         CB_ERR_INVALID_ARGUMENT (dt_s < 0).
 */
CB_API cb_result cb_params_interp_to(const float *current, const float *target, size_t n,
                                     float dt_s, float speed, float *out, size_t *nonfinite_count);

/** Movement direction classes of cb_params_quadrant. NONE (0) is "no previous state": a zeroed
 *  state column is a valid start. */
typedef enum cb_quadrant {
    CB_QUADRANT_NONE = 0,
    CB_QUADRANT_FORWARD,
    CB_QUADRANT_RIGHT,
    CB_QUADRANT_BACKWARD,
    CB_QUADRANT_LEFT,
} cb_quadrant;

/**
 * Classifies movement angles into quadrants, updating each character's state in place:
 *   forward   if |angle| <= pi/4 + f, with f = 2 dead_zone while the state is FORWARD, else
 *             dead_zone
 *   backward  else if |angle| >= 3 pi/4 - b, with b = 2 dead_zone while BACKWARD, else
 *             dead_zone
 *   left      else if angle > 0, right otherwise.
 * Forward and backward are widened by dead_zone, and by twice that while current, so a
 * character leaves a quadrant one dead_zone later than it enters it: an angle wobbling by less
 * than dead_zone around a boundary keeps its quadrant. A non-finite angle (counted) is read as
 * 0: FORWARD.
 * @param angle_rad  n angles in radians (atan2(y, x) of the local velocity), any range within
 *                   [-pi, pi]; values outside are wrapped
 * @param dead_zone_rad  in [0, pi/8]
 * @param state      n cb_quadrant values (one byte each), read and written
 * @return CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (dead_zone_rad) or
 *         CB_ERR_INVALID_ARGUMENT (dead_zone_rad out of range, or a state value that is not a
 *         cb_quadrant; nothing is written then).
 */
CB_API cb_result cb_params_quadrant(const float *angle_rad, size_t n, float dead_zone_rad,
                                    uint8_t *state, size_t *nonfinite_count);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_PARAMS_H */
