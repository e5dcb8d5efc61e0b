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
    const double lo = r->frame_ns_min / r->characters, hi = r->frame_ns_max / r->characters;
    if (p->json) {
        printf("%s{\"name\": \"%s\", \"threads\": %u, \"characters\": %u, \"runs\": %u, "
               "\"frames_per_run\": %u, \"characters_per_second\": %.0f, "
               "\"characters_per_second_per_core\": %.0f, \"ns_per_character\": %.2f, "
               "\"ns_per_character_min\": %.2f, \"ns_per_character_max\": %.2f, "
               "\"spread\": %.4f, \"cpu_ns_per_character\": %.2f, \"stages\": {",
               p->printed ? ", " : "", r->name, r->threads, r->characters, r->runs, r->frames,
               r->characters_per_second, r->characters_per_second / r->threads, r->ns_per_character,
               lo, hi, (hi - lo) / r->ns_per_character, r->cpu_ns_per_character);
        for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
            printf("%s\"%s\": {\"ns_per_character\": %.2f, \"share\": %.4f}", k ? ", " : "",
                   cb_crowd_stage_name((cb_crowd_stage)k), r->stage_ns_per_character[k],
                   r->stage_share[k]);
        }
        printf("}, \"checksum\": \"%016llx\"}", (unsigned long long)r->checksum);
    } else {
        printf("  %-24s %3u %7u %12.0f %10.1f %9.1f %9.1f %6.1f%% %9.1f %8.1f", r->name, r->threads,
               r->characters, r->characters_per_second, r->ns_per_character, lo, hi,
               100.0 * (hi - lo) / r->ns_per_character, r->ns_per_character * r->threads,
               r->cpu_ns_per_character);
        for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
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
        /* The range the runs allow: slowest 1-thread run over fastest all-threads run, and the
         * reverse. */
        double best = res[i].frame_ns_max / res[i + 1].frame_ns_min;
        double worst = res[i].frame_ns_min / res[i + 1].frame_ns_max;
        if (json) {
            printf("%s\"%s\": {\"threads\": %u, \"speedup\": %.3f, \"speedup_min\": %.3f, "
                   "\"speedup_max\": %.3f, \"efficiency\": %.3f}",
                   first ? "" : ", ", res[i].name, res[i + 1].threads, ratio, worst, best,
                   ratio / res[i + 1].threads);
        } else {
            printf("  %-24s %u threads: %.2fx the 1-thread rate (%.0f%% efficiency; runs allow "
                   "%.2fx to %.2fx)\n",
                   res[i].name, res[i + 1].threads, ratio, 100.0 * ratio / res[i + 1].threads,
                   worst, best);
        }
        first = false;
    }
}

/* The crowd runtime's cost over the plain loop of the same jobs (W1 against W1-plain), per
 * thread count: the difference of the median ns per character, and the range the runs allow. */
static void print_overhead(const cb_workload_result *res, size_t n, bool json)
{
    bool first = true;
    for (size_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < n; ++k) {
            if (strcmp(res[i].name, "W1") != 0 || strcmp(res[k].name, "W1-plain") != 0 ||
                res[i].threads != res[k].threads || res[i].characters != res[k].characters) {
                continue;
            }
            double crowd = res[i].ns_per_character, plain = res[k].ns_per_character;
            double lo = (res[i].frame_ns_min - res[k].frame_ns_max) / res[i].characters;
            double hi = (res[i].frame_ns_max - res[k].frame_ns_min) / res[i].characters;
            if (json) {
                printf("%s{\"threads\": %u, \"crowd_ns_per_character\": %.2f, "
                       "\"plain_ns_per_character\": %.2f, \"overhead_ns\": %.2f, "
                       "\"overhead_ns_min\": %.2f, \"overhead_ns_max\": %.2f, "
                       "\"overhead\": %.4f}",
                       first ? "" : ", ", res[i].threads, crowd, plain, crowd - plain, lo, hi,
                       (crowd - plain) / plain);
            } else {
                printf("  W1 over W1-plain at %u thread%s: %+.1f ns per character (%+.1f%%; runs "
                       "allow %+.1f to %+.1f ns)\n",
                       res[i].threads, res[i].threads > 1 ? "s" : "", crowd - plain,
                       100.0 * (crowd - plain) / plain, lo, hi);
            }
            first = false;
        }
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

/* The output layouts `--layout` takes, by name. */
static const struct {
    const char *name;
    cb_matrix_layout layout;
} layouts[] = {
    {"mat4", CB_MATRIX_LAYOUT_MAT4},
    {"mat3x4", CB_MATRIX_LAYOUT_MAT3X4},
    {"qts", CB_MATRIX_LAYOUT_QTS},
};

static int run_workloads(const char *which, long threads, double scale, long runs,
                         cb_matrix_layout layout, const char *layout_name, bool json)
{
    cb_build_info b = cb_query_build_info();
    cb_kernel_info k = cb_simd_kernel_info();
    uint32_t all = threads > 0 ? (uint32_t)threads : cb_jobs_query_desc(NULL).thread_count;
    enum { MAX_RESULTS = 64 };
    static cb_workload_result results[MAX_RESULTS];
    print_ctx p = {json, 0};
    if (json) {
        printf("{\"isa\": \"%s\", \"kernel_set\": \"%s\", \"simd_width\": %u, "
               "\"layout\": \"%s\", \"workloads\": [",
               b.isa, k.name, b.simd_width, layout_name);
    } else {
        printf("crowdblend bench: kernel set %s, W = %u (build isa %s; %s); %u threads in the "
               "all-threads rows; %ld runs per workload, each the median frame of its run; "
               "output layout %s\n\n",
               k.name, b.simd_width, b.isa, k.reason, all, runs, layout_name);
        printf("  %-24s %3s %7s %12s %10s %9s %9s %7s %9s %8s", "workload", "thr", "chars",
               "chars/s", "ns/char", "min", "max", "spread", "ns/char/c", "cpu/char");
        printf(" %7s %7s %7s %7s %7s %7s  %s\n", "param", "weight", "time", "s+blend", "post",
               "ltm", "checksum");
    }
    size_t n = cb_workloads_run(which, all, scale, (uint32_t)runs, layout, results, MAX_RESULTS,
                                print_result, &p);
    if (json) {
        printf("], \"scaling\": {");
        print_scaling(results, n, true);
        printf("}, \"crowd_overhead\": [");
        print_overhead(results, n, true);
        printf("]}\n");
    } else {
        printf(
            "\n  (ns/char: wall ns per character, median run; min, max: the fastest and slowest "
            "run; spread: (max - min) / median; ns/char/c: wall ns per character times "
            "threads; cpu/char: the calling thread's CPU ns per character, the whole frame's "
            "at one thread; stage columns: wall ns per character spent in each stage, summed over "
            "the threads, so preemption inflates them as it does ns/char, from a separate "
            "profiled pass of one run's frames: the timed runs read no stage clocks; checksum: a "
            "hash of the last frame's outputs, which --scale and --runs change)\n\n");
        print_scaling(results, n, false);
        print_overhead(results, n, false);
        print_beside(results, n);
    }
    return n > 0 ? CB_EXIT_OK : CB_EXIT_FAILURE;
}

/* The three modes of `bench`, as bits: which modes read an option. */
enum { MODE_WORKLOADS = 1, MODE_KERNELS = 2, MODE_PACK = 4 };

/* Each mode's name and what it reads, for the message that refuses another mode's option. */
static const char *const mode_text[] = {
    [MODE_WORKLOADS] = "the workloads (bench without --kernels or --pack), which take "
                       "--workloads, --threads, --scale, --runs, --layout and --json",
    [MODE_KERNELS] = "--kernels, which times the SIMD kernels on --elements per call, "
                     "median of --samples (it takes those and --json)",
    [MODE_PACK] = "--pack, whose figures are fixed (one thread, 1,000 and 10,000 characters, "
                  "medians of one run; it takes --json)",
};

/* The options that only some modes read: by name, the modes that read each. --json and --help
 * are every mode's. */
enum { WORKLOADS, THREADS, SCALE, RUNS, LAYOUT, KERNELS, ELEMENTS, SAMPLES, MODE_OPTIONS };
static const struct {
    const char *name;
    unsigned modes;
} mode_opts[MODE_OPTIONS] = {
    [WORKLOADS] = {"--workloads", MODE_WORKLOADS}, [THREADS] = {"--threads", MODE_WORKLOADS},
    [SCALE] = {"--scale", MODE_WORKLOADS},         [RUNS] = {"--runs", MODE_WORKLOADS},
    [LAYOUT] = {"--layout", MODE_WORKLOADS},       [KERNELS] = {"--kernels", MODE_KERNELS},
    [ELEMENTS] = {"--elements", MODE_KERNELS},     [SAMPLES] = {"--samples", MODE_KERNELS},
};

/* The command line of `bench`, and which of the mode options were given. */
typedef struct bench_args {
    bool help, json, kernels;
    long elements, samples, threads, runs;
    double scale;
    const char *which;
    const char *pack, *layout_name; /* NULL: mat4, and --layout not given */
    bool given[MODE_OPTIONS];
} bench_args;

/* *layout: the index of the layout --layout names (mat4 when not given). */
static bool find_layout(const char *layout_name, size_t *layout)
{
    const size_t layout_count = sizeof layouts / sizeof layouts[0];
    *layout = 0;
    while (layout_name != NULL && *layout < layout_count &&
           strcmp(layout_name, layouts[*layout].name) != 0) {
        ++*layout;
    }
    if (*layout == layout_count) {
        fprintf(stderr, "crowdblend bench: --layout must be mat4, mat3x4 or qts, not '%s'\n",
                layout_name);
        return false;
    }
    return true;
}

/* An option that the chosen mode does not read is refused, not ignored, even at its default
 * value: the pack's figures are fixed, the kernels build no crowd (so no --layout, workloads,
 * threads or runs), and the workloads have no elements or samples. */
static bool options_fit_mode(const bench_args *a, unsigned mode)
{
    for (int k = 0; k < MODE_OPTIONS; ++k) {
        if (a->given[k] && (mode_opts[k].modes & mode) == 0) {
            fprintf(stderr, "crowdblend bench: %s is not for %s\n", mode_opts[k].name,
                    mode_text[mode]);
            return false;
        }
    }
    return true;
}

/* --kernels: its options' ranges, then the kernels timed. */
static int bench_kernels(const bench_args *a)
{
    if (a->elements < 1 || a->elements > (1L << 26)) {
        fprintf(stderr, "crowdblend bench: --elements must be in 1..%ld\n", 1L << 26);
        return CB_EXIT_USAGE;
    }
    if (a->samples < 1 || a->samples > 64) {
        fprintf(stderr, "crowdblend bench: --samples must be in 1..64\n");
        return CB_EXIT_USAGE;
    }
    return run_kernels(a->elements, a->samples, a->json);
}

/* The workloads: their options' ranges, then the workloads run. */
static int bench_workloads(const bench_args *a, size_t layout)
{
    if (!(a->scale > 0.0 && a->scale <= 10.0)) {
        fprintf(stderr, "crowdblend bench: --scale must be in (0, 10]\n");
        return CB_EXIT_USAGE;
    }
    if (a->threads < 0 || a->threads > 1024) {
        fprintf(stderr, "crowdblend bench: --threads must be in 0..1024\n");
        return CB_EXIT_USAGE;
    }
    if (a->runs < 1 || a->runs > 64) {
        fprintf(stderr, "crowdblend bench: --runs must be in 1..64\n");
        return CB_EXIT_USAGE;
    }
    char bad[64];
    if (cb_workloads_find_unknown(a->which, bad, sizeof bad)) {
        fprintf(stderr,
                "crowdblend bench: --workloads: '%s' is no workload (W0 to W6, comma-separated; "
                "W1 runs W1-plain beside it, W4 every solver)\n",
                bad);
        return CB_EXIT_USAGE;
    }
    return run_workloads(a->which, a->threads, a->scale, a->runs, layouts[layout].layout,
                         layouts[layout].name, a->json);
}

/* --layout names one of three layouts, whatever the mode: checked first. Then the options the
 * chosen mode does not read, then the mode itself. */
static int bench_mode(const bench_args *a)
{
    size_t layout;
    if (!find_layout(a->layout_name, &layout)) {
        return CB_EXIT_USAGE;
    }
    const unsigned mode = a->pack != NULL ? MODE_PACK : a->kernels ? MODE_KERNELS : MODE_WORKLOADS;
    if (!options_fit_mode(a, mode)) {
        return CB_EXIT_USAGE;
    }
    if (a->pack != NULL) {
        return cb_bench_pack(a->pack, a->json);
    }
    return a->kernels ? bench_kernels(a) : bench_workloads(a, layout);
}

int cb_cmd_bench(int argc, char **argv)
{
    bench_args a = {
        .elements = 4096, .samples = 11, .runs = 5, .scale = 1.0, .which = "W0,W1,W2,W5,W3,W4"};
    const cb_opt opts[] = {
        {"kernels", CB_OPT_FLAG, &a.kernels,
         "time the SIMD kernels against the scalar reference instead of the workloads",
         &a.given[KERNELS]},
        {"workloads", CB_OPT_STRING, &a.which,
         "LIST: which workloads, comma-separated (default W0,W1,W2,W5,W3,W4). W0: the machine's "
         "scaling ceiling (arithmetic on the pool); W1: 1,000 characters blending 3 clips at "
         "fixed weights, with W1-plain, its pose and local-to-model jobs in a plain loop; W2: "
         "10,000 characters on the 17-clip blend space with two layers; W3: W2 with 100,000; "
         "W4: each solver's weights alone; W5: 10,000 on example graph 2 (IK, events); W6: W1 "
         "without root motion (docs/performance.md); workloads only",
         &a.given[WORKLOADS]},
        {"threads", CB_OPT_INT, &a.threads,
         "the 'all threads' count (default, or 0: the online CPUs); workloads only",
         &a.given[THREADS]},
        {"scale", CB_OPT_DOUBLE, &a.scale,
         "multiply the character counts (default 1); workloads only", &a.given[SCALE]},
        {"runs", CB_OPT_INT, &a.runs,
         "runs per workload, 1..64 (default 5): median, min and max; workloads only",
         &a.given[RUNS]},
        {"layout", CB_OPT_STRING, &a.layout_name,
         "the workloads' output layout: mat4 (default), mat3x4 or qts (cb_matrix_layout); "
         "workloads only",
         &a.given[LAYOUT]},
        {"elements", CB_OPT_INT, &a.elements, "elements per call (default 4096); --kernels only",
         &a.given[ELEMENTS]},
        {"samples", CB_OPT_INT, &a.samples,
         "samples per median, 1..64 (default 11); --kernels only", &a.given[SAMPLES]},
        {"json", CB_OPT_FLAG, &a.json, "print one JSON object"},
        {"pack", CB_OPT_STRING, &a.pack,
         "a pack's load time and a W1-style frame on its skeleton, fixed figures "
         "(docs/performance.md); takes --json only"},
        {"help", CB_OPT_FLAG, &a.help, "show this help"},
        {0},
    };
    if (!cb_opts_parse("crowdblend bench", argc, argv, 2, opts, NULL, 0, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (a.help) {
        cb_opts_print_help(
            "crowdblend bench [--workloads W0,W1,W2,W5,W3,W4] [--threads T] [--scale S] "
            "[--runs R] [--layout mat4|mat3x4|qts] [--json]\n"
            "       crowdblend bench --kernels [--elements N] [--samples S] [--json]\n"
            "       crowdblend bench --pack FILE.cbpack [--json]",
            opts);
        return CB_EXIT_OK;
    }
    return bench_mode(&a);
}
