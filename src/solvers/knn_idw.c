/* knn_idw: inverse distance weighting restricted to the k nearest nodes.
 *
 * Plain k-nearest IDW jumps when the k-th and (k+1)-th nearest nodes swap: a node leaves the
 * set while it still has weight. Here the (k+1)-th nearest node's term is subtracted from every
 * term, w_i ~ max(0, d_i^-p - d_(k+1)^-p), so a node's weight reaches 0 exactly when it stops
 * being among the k nearest, and the weights are continuous (the device is the one of local
 * Shepard methods that make the weight vanish at a cut-off radius, here the (k+1)-th distance).
 * Only the k nearest nodes ever get weight, except where more than k nodes tie at the smallest
 * distance (every term is 0 there): those nodes share the weight evenly. k >= node_count is
 * plain IDW. The vector and scalar kernels live in idw.c. */
#include "solvers/solver_impl.h"

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    return cb_idw_create(s, desc, desc->knn_k, err);
}

const cb_solver_ops cb_solver_ops_knn_idw = {create, cb_idw_block, cb_idw_one};
