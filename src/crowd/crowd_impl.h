/* The crowd's internals, shared by crowd.c (setup, characters, outputs) and update.c (the
 * frame). */
#ifndef CROWDBLEND_CROWD_IMPL_H
#define CROWDBLEND_CROWD_IMPL_H

#include "base/base_impl.h"
#include "crowd/handle_pool.h"
#include "crowdblend/crowd.h"
#include "crowdblend/pose.h"

/* Characters whose poses are blended before their local-to-model runs: the stages alternate
 * per chunk so a chunk's poses (POSE_CHUNK x 2.5 KB for 64 joints at W = 16) stay in L1, and
 * timing a chunk costs two clock reads, not two per character. */
enum { CB_CROWD_POSE_CHUNK = 8 };

/* Extra blend entries beyond the nodes: the upper-body override and the additive layer. */
enum { CB_CROWD_LAYER_ENTRIES = 2 };

/* A parameter column: the crowd's own dense array, or a host view. */
typedef struct cb_crowd_column {
    float *own;          /* capacity floats */
    const char *view;    /* host base, or NULL */
    size_t view_stride;  /* bytes between characters in the view */
} cb_crowd_column;

struct cb_crowd_scratch {
    cb_crowd *crowd;
    cb_crowd_scratch *next;   /* every scratch of the crowd, for the stats */
    size_t bytes;             /* of this allocation, for the sized free */
    float *params;            /* blend_param_count rows of batch_size, for view columns */
    float *layer_weights;     /* 2 rows of batch_size */
    float *weights;           /* node_count rows of batch_size */
    uint8_t *active_count;    /* per character of the batch: active nodes */
    uint8_t *active;          /* batch_size rows of node_count: active node indices */
    cb_xform_group *poses;    /* CB_CROWD_POSE_CHUNK poses of group_count groups */
    cb_blend_entry *entries;  /* node_count + CB_CROWD_LAYER_ENTRIES */
    cb_root_motion_entry *root_entries; /* node_count */
    cb_crowd_stats stats;
};

struct cb_crowd {
    cb_allocator allocator;
    const cb_skeleton *skeleton;
    size_t joint_count, group_count, soa_joint_count;
    uint32_t capacity;
    uint32_t batch_size;
    cb_handle_pool handles;
    void *handle_memory;

    /* The blend space. */
    cb_solver *solver;
    uint32_t node_count;
    uint32_t blend_param_count;
    uint32_t param_count; /* blend params + 2 layer weights */
    const cb_clip **clips;
    float *durations;     /* per node, seconds */

    /* Layers. */
    const cb_clip *additive_clip, *upper_clip;
    float *additive_mask, *upper_mask; /* soa_joint_count floats, or NULL: all joints */
    float additive_duration, upper_duration;

    /* Per-character state, dense, capacity entries each. */
    float *phase, *additive_phase, *upper_phase;
    cb_root_delta *root_motion;
    cb_crowd_column *columns; /* param_count */
    float *kept_weights;      /* node_count rows of capacity, or NULL */

    /* Output. */
    cb_matrix_layout layout;
    size_t matrix_floats;     /* per joint */
    char *matrices;
    size_t matrix_stride;     /* bytes between characters */
    bool own_matrices;

    /* Threads. */
    cb_jobs *jobs;
    bool own_jobs;
    uint32_t thread_count;
    cb_crowd_scratch **thread_scratch; /* thread_count, indexed by the pool's thread index */
    cb_crowd_scratch *scratch_list;
    bool profile;
    bool use_ref; /* benchmarks: the scalar reference kernels instead of the SIMD ones */
    uint64_t updates;

    /* Sizes of the allocations, for the sized frees. */
    size_t state_bytes;
    void *state_memory;
};

/* One batch of at most batch_size characters [first, first + count), on one thread. */
void cb_crowd_run_batch(cb_crowd *crowd, cb_crowd_scratch *scratch, float dt_s, uint32_t first,
                        uint32_t count);

/* Allocates a scratch and links it into the crowd's list. */
cb_result cb_crowd_scratch_alloc(cb_crowd *crowd, cb_crowd_scratch **out);

/* Benchmarks only: run the solver, pose and local-to-model through their scalar `_ref` paths,
 * so a whole frame can be timed SIMD against scalar in one run. */
void cb_crowd_use_reference_kernels(cb_crowd *crowd, bool use_ref);

/* Checks dt for update and update_range. */
cb_result cb_crowd_check_dt(float dt_s);

#endif
