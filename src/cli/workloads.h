/* The standard workloads W1-W5 of `crowdblend bench` (see workloads.c). */
#ifndef CROWDBLEND_CLI_WORKLOADS_H
#define CROWDBLEND_CLI_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"

typedef struct cb_workload_result {
    const char *name; /* "W1", ..., "W4/<solver>" */
    uint32_t threads;
    uint32_t characters;
    uint32_t frames;              /* frames (or runs) measured */
    double frame_ns;              /* median wall time of one update (W4: one evaluation) */
    double characters_per_second; /* wall */
    double ns_per_character;      /* wall: frame_ns / characters */
    double stage_ns_per_character[_CB_CROWD_STAGE_COUNT]; /* thread time per character */
    double stage_share[_CB_CROWD_STAGE_COUNT];
    uint64_t checksum; /* hash of the last frame's outputs */
} cb_workload_result;

/* Runs the workloads whose names appear in `which` (e.g. "W1,W2,W3,W4,W5") at one thread and at
 * all_threads, characters multiplied by scale; calls on_result after each. Returns how many
 * results were stored. */
size_t cb_workloads_run(const char *which, uint32_t all_threads, double scale,
                        cb_workload_result *results, size_t max_results,
                        void (*on_result)(const cb_workload_result *, void *), void *user);

#endif
