/* The weight stage's unchecked kernels: the solvers module's one internal interface, for the
 * graph runtime's per-frame path (see pose/pose_kernels.h for why unchecked). Each evaluates
 * count queries as cb_solver_evaluate(_ref) does on valid arguments (count > 0, every column
 * and row there, stride >= count) and returns the number of non-finite queries. */
#ifndef CROWDBLEND_SOLVERS_SOLVER_KERNELS_H
#define CROWDBLEND_SOLVERS_SOLVER_KERNELS_H

#include "crowdblend/solver.h"

size_t cb_solver_evaluate_unchecked(const cb_solver *solver, const float *const *params,
                                    size_t count, size_t stride, float *weights);
size_t cb_solver_evaluate_unchecked_ref(const cb_solver *solver, const float *const *params,
                                        size_t count, size_t stride, float *weights);

#endif
