#include "cli/kernels.h"

#include <stdlib.h>

#include "base/prng.h"
#include "crowdblend/simd.h"

/* Three poses are blended, as in the standard W1 workload (3 clips). */
enum { BLEND_POSES = 3 };

struct cb_kernel_data {
    size_t n;
    float *cols; /* one allocation: a (4 columns), b (4), out (4), t (1) */
    cb_quat_csoa a, b;
    cb_quat_soa out;
    float *t;
    size_t groups;
    cb_xform_group *poses[BLEND_POSES];
    cb_xform_group *blended;
    float weights[BLEND_POSES];
};

static cb_xform_group *alloc_groups(size_t count)
{
    size_t align = cb_simd_group_align();
    size_t bytes = count * cb_simd_group_bytes();
    return aligned_alloc(align, (bytes + align - 1) / align * align);
}

cb_kernel_data *cb_kernels_create(size_t n, uint64_t seed)
{
    cb_kernel_data *d = calloc(1, sizeof *d);
    if (d == NULL) {
        return NULL;
    }
    d->n = n;
    /* Columns start 64 bytes apart modulo 4 KiB: with a stride of exactly n floats (16 KiB
     * for n = 4096) loads and stores of different columns alias in the store buffer's 4K
     * check and the kernels measured 3-6x slower than they are. */
    size_t stride = (n + 15) / 16 * 16 + 16;
    d->cols = malloc(13 * stride * sizeof(float));
    d->groups = cb_simd_group_count(n);
    d->blended = alloc_groups(d->groups);
    bool ok = d->cols != NULL && d->blended != NULL;
    for (int k = 0; k < BLEND_POSES; ++k) {
        d->poses[k] = alloc_groups(d->groups);
        ok = ok && d->poses[k] != NULL;
    }
    if (!ok) {
        cb_kernels_destroy(d);
        return NULL;
    }
    float *c = d->cols;
    const size_t s = stride;
    d->a = (cb_quat_csoa){c, c + s, c + 2 * s, c + 3 * s};
    d->b = (cb_quat_csoa){c + 4 * s, c + 5 * s, c + 6 * s, c + 7 * s};
    d->out = (cb_quat_soa){c + 8 * s, c + 9 * s, c + 10 * s, c + 11 * s};
    d->t = c + 12 * s;

    cb_prng r = cb_prng_seed(seed);
    for (size_t i = 0; i < n; ++i) {
        float q[4];
        cb_prng_unit_quat(&r, q);
        c[i] = q[0], c[s + i] = q[1], c[2 * s + i] = q[2], c[3 * s + i] = q[3];
        cb_prng_unit_quat(&r, q);
        c[4 * s + i] = q[0], c[5 * s + i] = q[1], c[6 * s + i] = q[2], c[7 * s + i] = q[3];
        d->t[i] = cb_prng_range(&r, 0.0f, 1.0f);
    }
    cb_xform *aos = malloc((n ? n : 1) * sizeof *aos);
    if (aos == NULL) {
        cb_kernels_destroy(d);
        return NULL;
    }
    for (int k = 0; k < BLEND_POSES; ++k) {
        for (size_t i = 0; i < n; ++i) {
            cb_prng_unit_quat(&r, aos[i].rotation);
            for (int e = 0; e < 3; ++e) {
                aos[i].translation[e] = cb_prng_range(&r, -1.0f, 1.0f);
                aos[i].scale[e] = cb_prng_range(&r, 0.5f, 2.0f);
            }
        }
        cb_xform_pack((cb_xform_cspan){aos, n}, d->poses[k], d->groups);
        d->weights[k] = cb_prng_range(&r, 0.1f, 1.0f);
    }
    free(aos);
    return d;
}

void cb_kernels_destroy(cb_kernel_data *d)
{
    if (d == NULL) {
        return;
    }
    free(d->cols);
    free(d->blended);
    for (int k = 0; k < BLEND_POSES; ++k) {
        free(d->poses[k]);
    }
    free(d);
}

const char *cb_kernels_name(cb_kernel_id id)
{
    static const char *const names[CB_KERNEL_COUNT] = {
        "quat_normalize", "quat_nlerp", "quat_slerp", "quat_mul", "xform_blend3",
    };
    return id < CB_KERNEL_COUNT ? names[id] : "?";
}

const char *cb_kernels_unit(cb_kernel_id id)
{
    return id == CB_KERNEL_BLEND3 ? "xform" : "quat";
}

size_t cb_kernels_items(const cb_kernel_data *d, cb_kernel_id id)
{
    /* The blend processes whole groups, padding lanes included. */
    return id == CB_KERNEL_BLEND3 ? d->groups * cb_simd_width() : d->n;
}

void cb_kernels_run(cb_kernel_data *d, cb_kernel_id id, bool simd)
{
    const cb_xform_group *const *poses = (const cb_xform_group *const *)d->poses;
    switch (id) {
    case CB_KERNEL_NORMALIZE:
        (simd ? cb_quat_normalize_soa : cb_quat_normalize_soa_ref)(d->a, d->n, d->out);
        break;
    case CB_KERNEL_NLERP:
        (simd ? cb_quat_nlerp_soa : cb_quat_nlerp_soa_ref)(d->a, d->b, d->t, d->n, d->out);
        break;
    case CB_KERNEL_SLERP:
        (simd ? cb_quat_slerp_soa : cb_quat_slerp_soa_ref)(d->a, d->b, d->t, d->n, d->out);
        break;
    case CB_KERNEL_MUL:
        (simd ? cb_quat_mul_soa : cb_quat_mul_soa_ref)(d->a, d->b, d->n, d->out);
        break;
    case CB_KERNEL_BLEND3:
        (simd ? cb_xform_blend_groups : cb_xform_blend_groups_ref)(poses, d->weights, BLEND_POSES,
                                                                   d->groups, d->blended);
        break;
    case CB_KERNEL_COUNT:
        break;
    }
}
