/* crowdblend-bench: every benchmark in bench/, through google-benchmark's command line
 * (--benchmark_filter=..., --benchmark_format=json, --benchmark_repetitions=N). */
#include "bench_all.h"
#include "shim.h"

int main(int argc, char **argv)
{
    cb_bench_register_simd();
    cb_bench_register_jobs();
    cb_bench_register_anim();
    cb_bench_register_solver();
    cb_bench_register_crowd();
    cb_bench_register_ik();
    cb_bench_register_sync();
    cb_bench_register_follow();
    cb_bench_register_cclip();
    cb_bench_register_outputs();
    return cb_bench_main(argc, argv);
}
