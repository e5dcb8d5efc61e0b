/* One registration function per bench_<module>.c; bench/main.c calls them all. */
#ifndef CROWDBLEND_BENCH_ALL_H
#define CROWDBLEND_BENCH_ALL_H

void cb_bench_register_simd(void);
void cb_bench_register_jobs(void);
void cb_bench_register_anim(void);
void cb_bench_register_solver(void);
void cb_bench_register_crowd(void);
void cb_bench_register_ik(void);
void cb_bench_register_sync(void);
void cb_bench_register_follow(void);
void cb_bench_register_rate_warp(void);
void cb_bench_register_cclip(void);
void cb_bench_register_outputs(void);

#endif
