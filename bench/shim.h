/* A C face for google-benchmark, so benchmarks are written in C (bench/shim.cc implements it).
 *
 *   static void bm_slerp_simd(cb_bench_state *st, void *user) {
 *       size_t n = (size_t)cb_bench_range(st, 0);
 *       ... build inputs ...
 *       while (cb_bench_keep_running(st)) {
 *           run_kernel(...);
 *           cb_bench_keep(out);
 *       }
 *       cb_bench_set_items_processed(st, cb_bench_iterations(st) * (int64_t)n);
 *   }
 *   cb_bench_arg(cb_bench_register("quat_slerp_simd", bm_slerp_simd, NULL), 4096);
 *
 * Names follow <module>_<op>_<variant>/<args...> with variant simd or ref; after the run the
 * shim pairs every *_simd benchmark with its *_ref twin and prints the speed-up (median real
 * time when repetitions are on) to stderr, so stdout stays valid with --benchmark_format=json.
 */
#ifndef CROWDBLEND_BENCH_SHIM_H
#define CROWDBLEND_BENCH_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_bench_state cb_bench_state; /* a benchmark::State */
typedef struct cb_bench cb_bench;             /* a registered benchmark */
typedef void (*cb_bench_fn)(cb_bench_state *state, void *user);

/* Counter flags, mirroring benchmark::Counter::Flags. */
enum {
    CB_BENCH_COUNTER_DEFAULT = 0,
    CB_BENCH_COUNTER_RATE = 1 << 0,           /* value / elapsed seconds */
    CB_BENCH_COUNTER_AVG_ITERATIONS = 1 << 1, /* value / iterations */
    CB_BENCH_COUNTER_INVERT = 1 << 2,         /* 1 / value (with RATE: seconds per item) */
};

cb_bench *cb_bench_register(const char *name, cb_bench_fn fn, void *user);
/* Adds one argument set; returns b for chaining. */
cb_bench *cb_bench_arg(cb_bench *b, int64_t a0);
cb_bench *cb_bench_args2(cb_bench *b, int64_t a0, int64_t a1);
/* Measure wall time rather than this thread's CPU time (for multi-threaded work). */
cb_bench *cb_bench_use_real_time(cb_bench *b);

bool cb_bench_keep_running(cb_bench_state *st);
int64_t cb_bench_range(const cb_bench_state *st, int index);
int64_t cb_bench_iterations(const cb_bench_state *st);
void cb_bench_pause_timing(cb_bench_state *st);
void cb_bench_resume_timing(cb_bench_state *st);
void cb_bench_set_items_processed(cb_bench_state *st, int64_t items);
void cb_bench_set_bytes_processed(cb_bench_state *st, int64_t bytes);
void cb_bench_set_counter(cb_bench_state *st, const char *name, double value, unsigned flags);
void cb_bench_skip_with_error(cb_bench_state *st, const char *message);

/* Parses google-benchmark flags, runs the registered benchmarks and prints the SIMD/ref
 * ratios. Defaults to 5 repetitions reported as aggregates (median, mean, stddev) unless
 * --benchmark_repetitions is given. Returns the process exit code. */
int cb_bench_main(int argc, char **argv);

/* Keeps p's pointee alive: the compiler must assume the memory is read. */
static inline void cb_bench_keep(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
    __asm__ volatile("" : : "r"(p) : "memory");
#else
    (void)p;
#endif
}

#ifdef __cplusplus
}
#endif

#endif
