/* direct: Unity's Direct blend tree. Each node has its own parameter; the weights are the
 * parameters clamped to >= 0 and divided by their sum, so a character can mix any clips
 * directly (facial poses, additive layers driven by gameplay values). It is also the rule of
 * the graph's direct nodes, which run this solver: one rule, one implementation.
 *
 * All parameters 0 (or negative) gives all weights 0: there is nothing to normalize, and the
 * caller's rest-pose fallback takes over. Parameters are also capped at 1e30 so that the sum of
 * up to CB_SOLVER_MAX_NODES of them stays finite. A query with a non-finite parameter counts as
 * all zeros (solver.h) and so gets all-zero weights.
 *
 * Each weight is a quotient w / sum, not w * (1 / sum): for a subnormal sum (parameters like
 * 1e-40) the reciprocal is infinite and 0 * inf is NaN, which the cap at 1 then turned into 1
 * (minps keeps its second operand for NaN): {0, 1e-40, 0} gave {1, 1, 1}. The quotient of
 * w <= sum is exact-rounded into [0, 1], so it needs no cap and keeps the weights summing to 1
 * at any scale. */
#include <string.h>

#include "solvers/solver_impl.h"

static const float CAP = 1e30f;

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    (void)s, (void)desc, (void)err;
    return CB_OK;
}

/* max(x, 0) returns 0 for NaN (vf.h), but non-finite lanes are zeroed as a whole anyway. */
CB_INLINE cb_vf clamped(const float *col)
{
    return cb_vf_min(cb_vf_max(cb_vf_loadu(col), cb_vf_zero()), cb_vf_set1(CAP));
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    uint32_t m = s->node_count;
    cb_vf sum = cb_vf_zero();
    for (uint32_t j = 0; j < m; ++j) {
        sum = cb_vf_add(sum, clamped(in->cols[j]));
    }
    cb_vm ok = cb_vm_and(in->finite, cb_vf_gt(sum, cb_vf_zero()));
    cb_vf den = cb_vf_select(ok, sum, cb_vf_set1(1.0f));
    /* Column j is read before row j is written: the tail stage passes the same memory. */
    for (uint32_t j = 0; j < m; ++j) {
        cb_vf w = cb_vf_div(clamped(in->cols[j]), den);
        cb_vf_storeu(out + j * ostride, cb_vf_select(ok, w, cb_vf_zero()));
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    uint32_t m = s->node_count;
    float sum = 0.0f;
    for (uint32_t j = 0; j < m; ++j) {
        float c = q[j] > 0.0f ? (q[j] < CAP ? q[j] : CAP) : 0.0f;
        out[j] = c;
        sum += c;
    }
    if (!(sum > 0.0f)) {
        memset(out, 0, m * sizeof(float));
        return;
    }
    for (uint32_t j = 0; j < m; ++j) {
        out[j] /= sum;
    }
}

const cb_solver_ops cb_solver_ops_direct = {create, block, one};
