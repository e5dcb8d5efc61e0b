/* crowdblend-bench: every benchmark in bench/, through google-benchmark's command line
 * (--benchmark_filter=..., --benchmark_format=json, --benchmark_repetitions=N). */
#include <stdio.h>

#include "bench_all.h"
#include "shim.h"

#if CB_BENCH_CHECK_CPU
#include "simd/dispatch.h"
#endif

int main(int argc, char **argv)
{
#if CB_BENCH_CHECK_CPU
    /* A dispatch build's benchmarks link one kernel set's internals (the widest): refuse
     * cleanly on a CPU without it rather than die on an illegal instruction. */
    const char *missing = cb_cpu_missing(CB_KERNEL_SET);
    if (missing != NULL) {
        fprintf(stderr,
                "crowdblend-bench: built for the %s kernel set; this CPU lacks %s (build with "
                "-Disa=native to benchmark this machine)\n",
                cb_kernel_set_name(CB_KERNEL_SET), missing);
        return 1;
    }
#endif
    cb_bench_register_simd();
    cb_bench_register_jobs();
    cb_bench_register_anim();
    cb_bench_register_solver();
    cb_bench_register_crowd();
    cb_bench_register_ik();
    cb_bench_register_sync();
    cb_bench_register_follow();
    cb_bench_register_rate_warp();
    cb_bench_register_cclip();
    cb_bench_register_outputs();
    return cb_bench_main(argc, argv);
}
