/* The standard workloads W1-W5 of `crowdblend bench` (see workloads.c). */
#ifndef CROWDBLEND_CLI_WORKLOADS_H
#define CROWDBLEND_CLI_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"

/* Most runs per workload. */
enum { CB_WORKLOAD_MAX_RUNS = 64 };

typedef struct cb_workload_result {
    const char *name; /* "W1", ..., "W4/<solver>", "W1-plain" */
    uint32_t threads;
    uint32_t characters;
    uint32_t frames; /* frames (or evaluations) per run */
    uint32_t runs;   /* runs, each the median of its frames */
    double frame_ns; /* median over runs of the run's median frame (W4: evaluation) */
    double frame_ns_min, frame_ns_max; /* the fastest and slowest run */
    double characters_per_second;      /* wall, from frame_ns */
    double ns_per_character;           /* wall: frame_ns / characters */
    /* CPU time of the calling thread per character, median over runs of each run's median
     * frame: at one thread the whole frame's (a pool of one thread has no workers), which
     * time spent waiting for the core on a shared machine does not inflate; at more threads
     * only the caller's share. 0 where not measured (W0, W4). */
    double cpu_ns_per_character;
    /* Thread time per character per stage, and each stage's share of their sum: for a crowd,
     * from a separate profiled pass of one run's frames (the timed runs are unprofiled). */
    double stage_ns_per_character[_CB_CROWD_STAGE_COUNT];
    double stage_share[_CB_CROWD_STAGE_COUNT];
    uint64_t checksum; /* hash of the last frame's outputs */
} cb_workload_result;

/* The first comma-separated name in `which` that names no workload (W0 to W6), copied into
 * bad: true then; false when every name is one. */
bool cb_workloads_find_unknown(const char *which, char *bad, size_t size);

/* Runs the workloads whose names appear in `which` (e.g. "W0,W1,W2,W3,W4,W5"; "W1" also runs
 * "W1-plain", W1's pose and local-to-model jobs in a plain loop without the crowd runtime; "W0"
 * is a control of pure arithmetic on the pool, the scaling the machine allows right now) at
 * one thread and at all_threads, characters multiplied by scale, each `runs` times (each run
 * the median of its frames); the crowds (and W1-plain's ltm jobs) output `layout` (0: MAT4).
 * Calls on_result after each. Returns how many results were stored. */
size_t cb_workloads_run(const char *which, uint32_t all_threads, double scale, uint32_t runs,
                        cb_matrix_layout layout, cb_workload_result *results, size_t max_results,
                        void (*on_result)(const cb_workload_result *, void *), void *user);

#endif
