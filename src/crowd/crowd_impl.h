/* The crowd's internals, shared by crowd.c (setup, characters, outputs) and update.c (the
 * frame). A crowd is a set of kinds; each kind is one graph with its own dense table of
 * characters (an ECS archetype), state block and outputs. */
#ifndef CROWDBLEND_CROWD_IMPL_H
#define CROWDBLEND_CROWD_IMPL_H

#include "base/base_impl.h"
#include "crowd/handle_pool.h"
#include "crowdblend/crowd.h"
#include "graph/runtime.h"

typedef struct cb_crowd_kind {
    const cb_graph *graph;
    cb_handle_pool handles; /* dense order of this kind */
    void *handle_memory;
    cb_graph_block block;
    void *block_memory;
    cb_graph_param_source *sources; /* per parameter: view or own column */
    char *matrices;                 /* NULL with skinning_only */
    size_t matrix_stride;
    bool own_matrices;
    char *skinning; /* the view or own_skinning; NULL without inverse binds */
    size_t skinning_stride;
    char *own_skinning;         /* capacity packed characters */
    cb_root_delta *root_motion; /* zeroed at add; written by the frame only if moves_root */
    bool moves_root;     /* its graph has root motion and the desc did not skip it (create) */
    float *kept_weights; /* clip rows of capacity, or NULL */
    uint32_t clip_count, param_count;
} cb_crowd_kind;

struct cb_crowd_scratch {
    cb_crowd *crowd;
    cb_crowd_scratch *next; /* every scratch of the crowd, for the stats */
    size_t bytes;
    cb_graph_scratch *graph[CB_CROWD_MAX_KINDS];
    cb_graph_scratch_stats stats;
    uint64_t characters_updated;
    float *model_scratch; /* joint_count MAT4 with skinning_only, else NULL */
    /* Without skinning_only, joint_count MAT4 (the largest layout), else NULL (update.c). */
    float *stage;
};

struct cb_crowd {
    cb_allocator allocator;
    const cb_skeleton *skeleton;
    uint32_t joint_count;
    uint32_t capacity; /* per kind */
    uint32_t batch_size;
    cb_crowd_kind kinds[CB_CROWD_MAX_KINDS];
    uint32_t kind_count;
    cb_matrix_layout layout;
    size_t matrix_floats; /* per joint */
    float *rest_matrices; /* the rest pose in model space, in the crowd's layout: a new
                           * character's matrices until its first update */
    bool keep_matrices;   /* !desc.skinning_only */
    /* Skinning (desc.inverse_binds): the crowd's copy of the inverse binds, the layout, and the
     * rest pose's skinning matrices (a new character's until its first update). */
    float *inverse_binds;
    cb_matrix_layout skinning_layout;
    size_t skinning_floats; /* per joint */
    float *rest_skinning;
    /* Threads. */
    cb_jobs *jobs;
    bool own_jobs;
    uint32_t thread_count;
    cb_crowd_scratch **thread_scratch; /* thread_count, by the pool's thread index */
    cb_crowd_scratch *scratch_list;
    bool profile;
    bool events;                     /* desc.events: report the markers crossed */
    const cb_graph_kernels *kernels; /* the SIMD kernels (cb_crowd_set_kernels) */
    size_t stream_bytes;             /* CB_CROWD_STREAM_BYTES (cb_crowd_set_stream_bytes) */
    uint64_t updates;
};

/* The characters [first, first + count) of a kind, in batches, on one thread. */
void cb_crowd_run_range(cb_crowd *crowd, cb_crowd_scratch *scratch, float dt_s, uint32_t kind,
                        uint32_t first, uint32_t count);

/* Allocates a scratch and links it into the crowd's list. */
cb_result cb_crowd_scratch_alloc(cb_crowd *crowd, cb_crowd_scratch **out);

/* Skinning (skinning.c): the desc's checks, the crowd's and each kind's buffers. */
cb_result cb_crowd_check_skinning_desc(const cb_crowd_desc *d, size_t joint_count, cb_error *err);
cb_result cb_crowd_init_skinning(cb_crowd *c, const cb_crowd_desc *d, cb_error *err);
void cb_crowd_free_skinning(cb_crowd *c);
cb_result cb_crowd_init_kind_skinning(cb_crowd *c, cb_crowd_kind *k, cb_error *err);
void cb_crowd_free_kind_skinning(cb_crowd *c, cb_crowd_kind *k);
/* Bytes of one character's skinning matrices. */
size_t cb_crowd_skinning_bytes(const cb_crowd *c);

/* Checks dt for update and update_range. */
cb_result cb_crowd_check_dt(float dt_s);

/* The kernels the crowd's frames run (graph/runtime.h): cb_graph_kernels_simd from create;
 * the benchmarks switch to cb_graph_kernels_ref to time a whole frame SIMD against scalar. */
void cb_crowd_set_kernels(cb_crowd *crowd, const cb_graph_kernels *kernels);

/* A kind whose output (characters x stride, any layout, no skinning) is at least this many
 * bytes writes it with non-temporal stores (update.c). 32 MB: the last-level cache this was
 * measured on reports 32 MB, so an output that large does not stay there through the frame,
 * and W3's cliff is past it; below it the host finds the matrices in cache after the frame, and
 * the streaming would only cost time (docs/performance.md, "W3's cliff per layout; non-temporal
 * stores", and "Session 13: MAT3X4 and QTS outputs streamed"). */
#define CB_CROWD_STREAM_BYTES ((size_t)32 << 20)

/* Tests: the output size from which the crowd streams (0: always), so that small crowds take
 * the streaming path; the bits must not change. */
void cb_crowd_set_stream_bytes(cb_crowd *crowd, size_t bytes);

#endif
