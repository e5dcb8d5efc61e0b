/* The parameter stage's unchecked kernels: the params module's one internal interface, for the
 * graph runtime's per-frame path (see pose/pose_kernels.h for why unchecked: a graph's
 * processors are checked when it is built). Each does what its public function does on valid
 * arguments and returns the number of non-finite inputs. */
#ifndef CROWDBLEND_PARAMS_PARAMS_KERNELS_H
#define CROWDBLEND_PARAMS_PARAMS_KERNELS_H

#include "crowdblend/params.h"

size_t cb_params_velocity_blend_unchecked(const float *x, const float *y, const float *z, size_t n,
                                          float min_sq_len, cb_velocity_blend out);
size_t cb_params_interp_to_unchecked(const float *current, const float *target, size_t n,
                                     float dt_s, float speed, float *out);
/* state: n valid cb_quadrant values (the runtime keeps them in 0..4). */
size_t cb_params_quadrant_unchecked(const float *angle_rad, size_t n, float dead_zone_rad,
                                    uint8_t *state);

#endif
