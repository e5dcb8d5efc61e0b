/* The kernel workloads timed by `crowdblend bench --kernels` and by bench/bench_simd.c: one
 * definition of the data and the calls, so the two report the same thing. */
#ifndef CROWDBLEND_CLI_KERNELS_H
#define CROWDBLEND_CLI_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cb_kernel_id {
    CB_KERNEL_NORMALIZE,
    CB_KERNEL_NLERP,
    CB_KERNEL_SLERP,
    CB_KERNEL_MUL,
    CB_KERNEL_BLEND3,
    CB_KERNEL_COUNT
} cb_kernel_id;

typedef struct cb_kernel_data cb_kernel_data;

/* Random inputs for n elements (quaternions, or transforms for the blend). NULL on OOM. */
cb_kernel_data *cb_kernels_create(size_t n, uint64_t seed);
void cb_kernels_destroy(cb_kernel_data *d);

/* "quat_nlerp", "xform_blend3", ... */
const char *cb_kernels_name(cb_kernel_id id);
/* What one item is: "quat" or "xform". */
const char *cb_kernels_unit(cb_kernel_id id);
/* Items processed by one cb_kernels_run call. */
size_t cb_kernels_items(const cb_kernel_data *d, cb_kernel_id id);
/* Runs the kernel once over all items, the SIMD version or the scalar reference. */
void cb_kernels_run(cb_kernel_data *d, cb_kernel_id id, bool simd);

#endif
