/* `crowdblend bench`: timings measured side by side in one run, reported as medians.
 *
 * The machine may be shared and noisy, so every figure is the median of several samples, and
 * the SIMD and scalar samples of a kernel alternate: a burst of load hits both alike and the
 * ratio stays meaningful even when the absolute times move. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kernels.h"
#include "cli/workloads.h"
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
        printf("Kernel benchmark (isa %s, W = %u, %ld elements, median of %ld samples)\n\n", b.isa,
               b.simd_width, elements, samples);
        printf("  %-16s %-6s %14s %14s %10s\n", "kernel", "unit", "SIMD ns/unit", "scalar ns/unit",
               "speed-up");
    }
    for (int k = 0; k < CB_KERNEL_COUNT; ++k) {
        kernel_result r = measure(d, (cb_kernel_id)k, (int)samples);
        if (json) {
            printf("%s{\"name\": \"%s\", \"unit\": \"%s\", \"simd_ns_per_item\": %.4f, "
                   "\"ref_ns_per_item\": %.4f, \"ratio\": %.2f}",
                   k ? ", " : "", cb_kernels_name((cb_kernel_id)k),
                   cb_kernels_unit((cb_kernel_id)k), r.simd_ns, r.ref_ns, r.ref_ns / r.simd_ns);
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

typedef struct print_ctx {
    bool json;
    size_t printed;
} print_ctx;

static void print_result(const cb_workload_result *r, void *user)
{
    print_ctx *p = user;
    if (p->json) {
        printf("%s{\"name\": \"%s\", \"threads\": %u, \"characters\": %u, "
               "\"characters_per_second\": %.0f, \"characters_per_second_per_core\": %.0f, "
               "\"ns_per_character\": %.2f, \"stages\": {",
               p->printed ? ", " : "", r->name, r->threads, r->characters, r->characters_per_second,
               r->characters_per_second / r->threads, r->ns_per_character);
        for (int k = 0; k < CB_CROWD_STAGE_COUNT; ++k) {
            printf("%s\"%s\": {\"ns_per_character\": %.2f, \"share\": %.4f}", k ? ", " : "",
                   cb_crowd_stage_name((cb_crowd_stage)k), r->stage_ns_per_character[k],
                   r->stage_share[k]);
        }
        printf("}, \"checksum\": \"%016llx\"}", (unsigned long long)r->checksum);
    } else {
        printf("  %-30s %3u %8u %14.0f %14.0f %10.1f", r->name, r->threads, r->characters,
               r->characters_per_second, r->characters_per_second / r->threads,
               r->ns_per_character * r->threads);
        for (int k = 0; k < CB_CROWD_STAGE_COUNT; ++k) {
            printf(" %7.1f", r->stage_ns_per_character[k]);
        }
        printf("  %016llx\n", (unsigned long long)r->checksum);
    }
    p->printed++;
    fflush(stdout);
}

/* Scaling: each workload's all-threads rate over its one-thread rate. */
static void print_scaling(const cb_workload_result *res, size_t n, bool json)
{
    bool first = true;
    for (size_t i = 0; i + 1 < n; ++i) {
        if (strcmp(res[i].name, res[i + 1].name) != 0 || res[i].threads != 1 ||
            res[i + 1].threads <= 1) {
            continue;
        }
        double ratio = res[i + 1].characters_per_second / res[i].characters_per_second;
        if (json) {
            printf("%s\"%s\": {\"threads\": %u, \"speedup\": %.3f, \"efficiency\": %.3f}",
                   first ? "" : ", ", res[i].name, res[i + 1].threads, ratio,
                   ratio / res[i + 1].threads);
        } else {
            printf("  %-30s %u threads: %.2fx the 1-thread rate (%.0f%% efficiency)\n", res[i].name,
                   res[i + 1].threads, ratio, 100.0 * ratio / res[i + 1].threads);
        }
        first = false;
    }
}

/* W5 beside W2: what the example graph costs over the flat locomotion frame, per thread. */
static void print_beside(const cb_workload_result *res, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < n; ++k) {
            if (strcmp(res[i].name, "W5") == 0 && strcmp(res[k].name, "W2") == 0 &&
                res[i].threads == res[k].threads && res[i].characters == res[k].characters) {
                printf("  W5 / W2 at %u thread%s: %.2fx the time per character\n", res[i].threads,
                       res[i].threads > 1 ? "s" : "",
                       res[i].ns_per_character / res[k].ns_per_character);
            }
        }
    }
}

static int run_workloads(const char *which, long threads, double scale, bool json)
{
    cb_build_info b = cb_query_build_info();
    uint32_t all = threads > 0 ? (uint32_t)threads : cb_jobs_query_desc(NULL).thread_count;
    enum { MAX_RESULTS = 64 };
    static cb_workload_result results[MAX_RESULTS];
    print_ctx p = {json, 0};
    if (json) {
        printf("{\"isa\": \"%s\", \"simd_width\": %u, \"workloads\": [", b.isa, b.simd_width);
    } else {
        printf("crowdblend bench: isa %s, W = %u, %u threads available; median frame times\n\n",
               b.isa, b.simd_width, all);
        printf("  %-30s %3s %8s %14s %14s %10s", "workload", "thr", "chars", "chars/s",
               "chars/s/core", "ns/char/c");
        printf(" %7s %7s %7s %7s %7s %7s  %s\n", "param", "weight", "time", "s+blend", "post",
               "ltm", "checksum");
    }
    size_t n = cb_workloads_run(which, all, scale, results, MAX_RESULTS, print_result, &p);
    if (json) {
        printf("], \"scaling\": {");
        print_scaling(results, n, true);
        printf("}}\n");
    } else {
        printf("\n  (stage columns: thread ns per character; ns/char/c: wall ns per character "
               "times threads)\n\n");
        print_scaling(results, n, false);
        print_beside(results, n);
    }
    return n > 0 ? CB_EXIT_OK : CB_EXIT_FAILURE;
}

int cb_cmd_bench(int argc, char **argv)
{
    bool help = false, json = false, kernels = false;
    long elements = 4096, samples = 11, threads = 0;
    double scale = 1.0;
    const char *which = "W1,W2,W5,W3,W4";
    const char *pack = NULL;
    const cb_opt opts[] = {
        {"kernels", CB_OPT_FLAG, &kernels,
         "time the SIMD kernels against the scalar reference instead of the workloads"},
        {"workloads", CB_OPT_STRING, &which, "which workloads (default W1,W2,W5,W3,W4)"},
        {"threads", CB_OPT_INT, &threads, "the 'all threads' count (default: online CPUs)"},
        {"scale", CB_OPT_DOUBLE, &scale, "multiply the character counts (default 1)"},
        {"elements", CB_OPT_INT, &elements, "--kernels: elements per call (default 4096)"},
        {"samples", CB_OPT_INT, &samples, "--kernels: samples per median, 1..64 (default 11)"},
        {"json", CB_OPT_FLAG, &json, "print one JSON object"},
        {"pack", CB_OPT_STRING, &pack,
         "a pack's load time and a W1-style frame on its skeleton (docs/performance.md)"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    if (!cb_opts_parse("crowdblend bench", argc, argv, 2, opts, NULL, 0, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (pack != NULL && !help) {
        return cb_bench_pack(pack, json);
    }
    if (help) {
        cb_opts_print_help("crowdblend bench [--workloads W1,W2,W5,W3,W4] [--threads T] [--json] | "
                           "--kernels",
                           opts);
        return CB_EXIT_OK;
    }
    if (kernels) {
        if (elements < 1 || elements > (1L << 26)) {
            fprintf(stderr, "crowdblend bench: --elements must be in 1..%ld\n", 1L << 26);
            return CB_EXIT_USAGE;
        }
        if (samples < 1 || samples > 64) {
            fprintf(stderr, "crowdblend bench: --samples must be in 1..64\n");
            return CB_EXIT_USAGE;
        }
        return run_kernels(elements, samples, json);
    }
    if (!(scale > 0.0 && scale <= 10.0)) {
        fprintf(stderr, "crowdblend bench: --scale must be in (0, 10]\n");
        return CB_EXIT_USAGE;
    }
    if (threads < 0 || threads > 1024) {
        fprintf(stderr, "crowdblend bench: --threads must be in 0..1024\n");
        return CB_EXIT_USAGE;
    }
    return run_workloads(which, threads, scale, json);
}
