/* `crowdblend bench`: timings measured side by side in one run, reported as medians.
 *
 * The machine may be shared and noisy, so every figure is the median of several samples, and
 * the SIMD and scalar samples of a kernel alternate: a burst of load hits both alike and the
 * ratio stays meaningful even when the absolute times move. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/kernels.h"
#include "crowdblend/crowdblend.h"

typedef struct kernel_result {
    double simd_ns, ref_ns;
} kernel_result;

/* Repetitions of the kernel so that one sample lasts at least min_ns. */
static long calibrate(cb_kernel_data *d, cb_kernel_id id, bool simd, uint64_t min_ns)
{
    long reps = 1;
    for (;;) {
        uint64_t t0 = cb_now_ns();
        for (long r = 0; r < reps; ++r) {
            cb_kernels_run(d, id, simd);
        }
        uint64_t dt = cb_now_ns() - t0;
        if (dt >= min_ns || reps > (1L << 28)) {
            return reps;
        }
        reps *= dt > 0 && min_ns / dt < 8 ? 2 : 8;
    }
}

static double sample_ns_per_item(cb_kernel_data *d, cb_kernel_id id, bool simd, long reps)
{
    uint64_t t0 = cb_now_ns();
    for (long r = 0; r < reps; ++r) {
        cb_kernels_run(d, id, simd);
    }
    uint64_t dt = cb_now_ns() - t0;
    return (double)dt / ((double)reps * (double)cb_kernels_items(d, id));
}

static kernel_result measure(cb_kernel_data *d, cb_kernel_id id, int samples)
{
    const uint64_t min_ns = 2000000; /* 2 ms per sample */
    long reps_simd = calibrate(d, id, true, min_ns);
    long reps_ref = calibrate(d, id, false, min_ns);
    double simd[64], ref[64];
    for (int s = 0; s < samples; ++s) {
        simd[s] = sample_ns_per_item(d, id, true, reps_simd);
        ref[s] = sample_ns_per_item(d, id, false, reps_ref);
    }
    return (kernel_result){cb_median(simd, (size_t)samples), cb_median(ref, (size_t)samples)};
}

static int run_kernels(long elements, long samples, bool json)
{
    cb_kernel_data *d = cb_kernels_create((size_t)elements, 0xC0FFEEu);
    if (d == NULL) {
        fprintf(stderr, "crowdblend bench: out of memory for %ld elements\n", elements);
        return CB_EXIT_FAILURE;
    }
    cb_build_info b = cb_query_build_info();
    if (json) {
        printf("{\"isa\": \"%s\", \"simd_width\": %u, \"elements\": %ld, \"samples\": %ld, "
               "\"kernels\": [",
               b.isa, b.simd_width, elements, samples);
    } else {
        printf("Kernel benchmark (isa %s, W = %u, %ld elements, median of %ld samples)\n\n",
               b.isa, b.simd_width, elements, samples);
        printf("  %-16s %-6s %14s %14s %10s\n", "kernel", "unit", "SIMD ns/unit", "scalar ns/unit",
               "speed-up");
    }
    for (int k = 0; k < CB_KERNEL_COUNT; ++k) {
        kernel_result r = measure(d, (cb_kernel_id)k, (int)samples);
        if (json) {
            printf("%s{\"name\": \"%s\", \"unit\": \"%s\", \"simd_ns_per_item\": %.4f, "
                   "\"ref_ns_per_item\": %.4f, \"ratio\": %.2f}",
                   k ? ", " : "", cb_kernels_name((cb_kernel_id)k), cb_kernels_unit((cb_kernel_id)k),
                   r.simd_ns, r.ref_ns, r.ref_ns / r.simd_ns);
        } else {
            printf("  %-16s %-6s %14.3f %14.3f %9.1fx\n", cb_kernels_name((cb_kernel_id)k),
                   cb_kernels_unit((cb_kernel_id)k), r.simd_ns, r.ref_ns, r.ref_ns / r.simd_ns);
        }
        fflush(stdout);
    }
    printf(json ? "]}\n" : "\n");
    cb_kernels_destroy(d);
    return CB_EXIT_OK;
}

int cb_cmd_bench(int argc, char **argv)
{
    bool help = false, json = false, kernels = false;
    long elements = 4096, samples = 11;
    const cb_opt opts[] = {
        {"kernels", CB_OPT_FLAG, &kernels, "time the SIMD kernels against the scalar reference"},
        {"elements", CB_OPT_INT, &elements, "elements per kernel call (default 4096)"},
        {"samples", CB_OPT_INT, &samples, "samples per median, 1..64 (default 11)"},
        {"json", CB_OPT_FLAG, &json, "print one JSON object"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    if (!cb_opts_parse("crowdblend bench", argc, argv, 2, opts, NULL, 0, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help("crowdblend bench [--kernels] [--json]", opts);
        return CB_EXIT_OK;
    }
    if (elements < 1 || elements > (1L << 26)) {
        fprintf(stderr, "crowdblend bench: --elements must be in 1..%ld\n", 1L << 26);
        return CB_EXIT_USAGE;
    }
    if (samples < 1 || samples > 64) {
        fprintf(stderr, "crowdblend bench: --samples must be in 1..64\n");
        return CB_EXIT_USAGE;
    }
    (void)kernels; /* the kernels are the only section so far */
    return run_kernels(elements, samples, json);
}
