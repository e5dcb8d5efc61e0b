/* Local-to-model, SIMD over W characters that share a skeleton: the alternative to the
 * per-joint form of ltm.c, kept so that bench/bench_anim.c can measure both on the same data
 * (docs/performance.md has the figures and the decision).
 *
 * Lanes hold characters here, so every joint is one step for all W characters: its local
 * transform becomes a matrix and is multiplied by its parent's, 66 vector operations for W
 * characters (ltm.c needs about 12 4-wide operations per joint and character). The price is
 * the layout: the fused blend writes each character's pose with joints in the lanes, and hosts
 * want each character's matrices contiguous. So the local poses are transposed in (one W x W
 * transpose per joint group and component) and the matrices transposed out (16 / W transposes
 * per joint), through a scratch buffer of joints x 22 vectors.
 *
 * Results equal cb_ltm_job_run's: the same conversion and the same fused operations in the
 * same order, only the lanes differ (the constant bottom row is written here, computed there,
 * where 0 * x may give -0). */
#include <string.h>

#include "ltm/ltm_impl.h"
#include "simd/soa_mat.h"

size_t cb_ltm_chars_scratch_bytes(const struct cb_skeleton *s)
{
    /* Per joint: the transposed local transform (10 vectors) and the model matrix (12). */
    return s->group_count * CB_W * 22 * sizeof(cb_vf);
}

void cb_ltm_chars_run(const struct cb_skeleton *s, const cb_xform_group *const *locals,
                      float *const *models, void *scratch)
{
    const size_t n = s->joint_count, joints = s->group_count * CB_W;
    cb_vf *local = scratch;             /* local[j * 10 + component], lanes = characters */
    cb_vf *model = local + joints * 10; /* model[j * 12 + 3 * col + row] */

    /* Transpose in: component k of group g, one vector per character, becomes one vector per
     * joint of the group. */
    for (size_t g = 0; g < s->group_count; ++g) {
        for (int k = 0; k < 10; ++k) {
            cb_vf rows[CB_W];
            for (int c = 0; c < CB_W; ++c) {
                rows[c] = cb_vf_load((const float *)&locals[c][g] + k * CB_W);
            }
            cb_vf_transpose(rows);
            for (int l = 0; l < CB_W; ++l) {
                local[(g * CB_W + (size_t)l) * 10 + (size_t)k] = rows[l];
            }
        }
    }

    /* The hierarchy, W characters per step. */
    for (size_t j = 0; j < n; ++j) {
        const cb_vf *x = &local[j * 10];
        cb_soa_xform lx = {{x[0], x[1], x[2]}, {x[3], x[4], x[5], x[6]}, {x[7], x[8], x[9]}};
        cb_soa_mat34 m = cb_soa_xform_to_mat34(lx);
        int32_t p = s->parents[j];
        if (p >= 0) {
            cb_soa_mat34 pm;
            memcpy(&pm, &model[(size_t)p * 12], sizeof pm);
            m = cb_soa_mat34_mul(&pm, &m);
        }
        memcpy(&model[j * 12], &m, sizeof m);

        /* Transpose out: the 16 elements of the column-major 4x4, W at a time. */
        cb_vf zero = cb_vf_zero(), one = cb_vf_set1(1.0f);
        const cb_vf elems[16] = {m.c[0][0], m.c[0][1], m.c[0][2], zero,      m.c[1][0], m.c[1][1],
                                 m.c[1][2], zero,      m.c[2][0], m.c[2][1], m.c[2][2], zero,
                                 m.c[3][0], m.c[3][1], m.c[3][2], one};
        for (int b = 0; b < 16; b += CB_W) {
            cb_vf rows[CB_W];
            for (int e = 0; e < CB_W; ++e) {
                rows[e] = elems[b + e];
            }
            cb_vf_transpose(rows);
            for (int c = 0; c < CB_W; ++c) {
                cb_vf_storeu(models[c] + j * 16 + (size_t)b, rows[c]);
            }
        }
    }
}
