/* The job system's own costs: an empty parallel-for, one tiny job submitted and waited for,
 * and the efficiency of a large uniform parallel-for (time at 1 thread / (N x time at N)).
 * Wall time (UseRealTime): the work runs on several threads. Argument = pool threads. */
#include <math.h>
#include <stdlib.h>

#include "bench_all.h"
#include "crowdblend/jobs.h"
#include "shim.h"

static cb_jobs *pool_for(cb_bench_state *st)
{
    cb_jobs *jobs = NULL;
    cb_jobs_desc d = {.thread_count = (uint32_t)cb_bench_range(st, 0)};
    if (cb_jobs_create(&d, &jobs, NULL) != CB_OK) {
        cb_bench_skip_with_error(st, "cb_jobs_create failed");
    }
    return jobs;
}

static void noop(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)user, (void)begin, (void)end, (void)thread_index;
}

/* One chunk per thread and nothing to do: the fixed cost of fanning out and joining. */
static void bm_parallel_for_empty(cb_bench_state *st, void *user)
{
    (void)user;
    cb_jobs *jobs = pool_for(st);
    if (jobs == NULL) {
        return;
    }
    size_t threads = cb_jobs_thread_count(jobs);
    while (cb_bench_keep_running(st)) {
        cb_jobs_parallel_for(jobs, threads, 1, noop, NULL);
    }
    cb_bench_set_items_processed(st, cb_bench_iterations(st));
    cb_jobs_destroy(jobs);
}

/* Submit one job and wait for it: queue, wake, run, count down. */
static void bm_submit_wait_tiny(cb_bench_state *st, void *user)
{
    (void)user;
    cb_jobs *jobs = pool_for(st);
    cb_jobs_counter *c = NULL;
    if (jobs == NULL || cb_jobs_counter_create(jobs, &c) != CB_OK) {
        cb_jobs_destroy(jobs);
        return;
    }
    cb_job job = {.fn = noop};
    while (cb_bench_keep_running(st)) {
        job._pool[0] = job._pool[1] = NULL;
        cb_jobs_submit(jobs, &job, 1, c);
        cb_jobs_wait(jobs, c);
    }
    cb_bench_set_items_processed(st, cb_bench_iterations(st));
    cb_jobs_counter_destroy(jobs, c);
    cb_jobs_destroy(jobs);
}

/* About 8 ms of uniform arithmetic per run, in 1024 chunks, per-chunk results stored so the
 * compiler keeps the work. */
enum { UNIFORM_CHUNKS = 1024, UNIFORM_ITERS = 4000 };

typedef struct uniform {
    double out[UNIFORM_CHUNKS];
} uniform;

static void uniform_work(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)thread_index;
    uniform *u = user;
    for (size_t c = begin; c < end; ++c) {
        double x = (double)c + 1.0, acc = 0.0;
        for (int i = 0; i < UNIFORM_ITERS; ++i) {
            acc += sqrt(x + i);
        }
        u->out[c] = acc;
    }
}

static void bm_parallel_for_uniform(cb_bench_state *st, void *user)
{
    (void)user;
    cb_jobs *jobs = pool_for(st);
    uniform *u = calloc(1, sizeof *u);
    if (jobs == NULL || u == NULL) {
        cb_jobs_destroy(jobs);
        free(u);
        return;
    }
    while (cb_bench_keep_running(st)) {
        cb_jobs_parallel_for(jobs, UNIFORM_CHUNKS, 1, uniform_work, u);
        cb_bench_keep(u);
    }
    cb_bench_set_items_processed(st, cb_bench_iterations(st) * UNIFORM_CHUNKS);
    free(u);
    cb_jobs_destroy(jobs);
}

void cb_bench_register_jobs(void)
{
    cb_bench *b = cb_bench_register("jobs_parallel_for_empty", bm_parallel_for_empty, NULL);
    cb_bench_use_real_time(cb_bench_arg(cb_bench_arg(cb_bench_arg(b, 1), 2), 4));
    b = cb_bench_register("jobs_submit_wait_tiny", bm_submit_wait_tiny, NULL);
    cb_bench_use_real_time(cb_bench_arg(cb_bench_arg(cb_bench_arg(b, 1), 2), 4));
    b = cb_bench_register("jobs_parallel_for_uniform", bm_parallel_for_uniform, NULL);
    cb_bench_use_real_time(cb_bench_arg(cb_bench_arg(b, 1), 2));
}
