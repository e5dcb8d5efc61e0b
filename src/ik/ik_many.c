/* Two-bone jobs solved together (ik_kernels.h cb_ik_two_bone_many_unchecked). This first form
 * runs the scalar job on each in turn: it fixes the contract that the lane form must keep, bit
 * for bit, and lets the graph's post-process hand its legs over in batches. */
#include "ik/ik_kernels.h"

size_t cb_ik_two_bone_many_unchecked(const cb_ik_two_bone_job *jobs, size_t n, cb_result *results)
{
    size_t refused = 0;
    for (size_t j = 0; j < n; ++j) {
        results[j] = cb_ik_two_bone_unchecked(&jobs[j], NULL);
        refused += results[j] != CB_OK;
    }
    return refused;
}
