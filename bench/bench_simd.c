/* Kernel benchmarks: each SIMD kernel and its scalar reference on the same data, in one run.
 * The workloads are those of `crowdblend bench --kernels` (src/cli/kernels.c). Two sizes:
 * 256 elements (about 13 KB of columns, L1-resident: arithmetic throughput) and 4096 (about
 * 210 KB, L2-resident: closer to streaming a crowd's data). */
#include "bench_all.h"
#include "cli/kernels.h"
#include "shim.h"

static cb_kernel_data *data_for(cb_bench_state *st)
{
    return cb_kernels_create((size_t)cb_bench_range(st, 0), 42);
}

static void run(cb_bench_state *st, cb_kernel_id id, bool simd)
{
    cb_kernel_data *d = data_for(st);
    if (d == NULL) {
        cb_bench_skip_with_error(st, "out of memory");
        return;
    }
    while (cb_bench_keep_running(st)) {
        cb_kernels_run(d, id, simd);
        cb_bench_keep(d);
    }
    double items = (double)cb_kernels_items(d, id) * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    /* Seconds per item, shown in ns by the console reporter. */
    cb_bench_set_counter(st, "per_item", items, CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    cb_kernels_destroy(d);
}

#define KERNEL_BENCH(fn, id)                                                                   \
    static void fn##_simd(cb_bench_state *st, void *user)                                      \
    {                                                                                          \
        (void)user;                                                                            \
        run(st, id, true);                                                                     \
    }                                                                                          \
    static void fn##_ref(cb_bench_state *st, void *user)                                       \
    {                                                                                          \
        (void)user;                                                                            \
        run(st, id, false);                                                                    \
    }

KERNEL_BENCH(normalize, CB_KERNEL_NORMALIZE)
KERNEL_BENCH(nlerp, CB_KERNEL_NLERP)
KERNEL_BENCH(slerp, CB_KERNEL_SLERP)
KERNEL_BENCH(mul, CB_KERNEL_MUL)
KERNEL_BENCH(blend3, CB_KERNEL_BLEND3)

void cb_bench_register_simd(void)
{
    static const struct {
        const char *name;
        cb_bench_fn fn;
    } benches[] = {
        {"quat_normalize_simd", normalize_simd}, {"quat_normalize_ref", normalize_ref},
        {"quat_nlerp_simd", nlerp_simd},         {"quat_nlerp_ref", nlerp_ref},
        {"quat_slerp_simd", slerp_simd},         {"quat_slerp_ref", slerp_ref},
        {"quat_mul_simd", mul_simd},             {"quat_mul_ref", mul_ref},
        {"xform_blend3_simd", blend3_simd},      {"xform_blend3_ref", blend3_ref},
    };
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; ++i) {
        cb_bench *b = cb_bench_register(benches[i].name, benches[i].fn, NULL);
        cb_bench_arg(cb_bench_arg(b, 256), 4096);
    }
}
