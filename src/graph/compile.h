/* Private to src/graph: the graph compiler (compile.c). cb_graph_build runs these passes in
 * order, each on what the ones before left in the compile state; each can be run and checked on
 * its own (tests/test_graph_compile.c). Every pass reports its errors through c->err and leaves
 * its allocations in the state, which cb_graph_compile_abandon (failure) or
 * cb_graph_compile_finish (success) frees: one cleanup path. */
#ifndef CROWDBLEND_GRAPH_COMPILE_H
#define CROWDBLEND_GRAPH_COMPILE_H

#include "graph/builder_impl.h"

typedef struct cb_graph_compile {
    cb_graph_builder *b;
    cb_error *err;
    uint32_t root;  /* the root's builder index */
    uint32_t total; /* builder nodes */
    /* renumber */
    uint32_t *newid; /* builder index -> graph node index, GNONE when the root does not reach it */
    uint32_t node_count, edge_count, clip_count;
    /* layout: the graph, every array in its one allocation */
    cb_graph *g;
    uint32_t sm_newid[CB_GRAPH_MAX_NODES]; /* builder machine -> graph machine, or GNONE */
    /* sync groups, per graph node */
    uint32_t *group_of;      /* the sync group a node's clips inherit, or GNONE */
    gclip_states *states_of; /* the machines and states above it */
    bool *seen;              /* reached already (a node with several parents: the first wins) */
    bool *base;              /* reached from the root through base edges: moves the character */
    uint32_t group_owner[CB_GRAPH_MAX_NODES]; /* implicit group - named groups -> blend node */
} cb_graph_compile;

/* Renumber: the nodes the root reaches, parents first (descending builder index), their edge
 * and clip counts; refuses an additive clip outside an additive layer. */
cb_result cb_graph_pass_renumber(cb_graph_compile *c);

/* Layout: the graph's one allocation; parameters, processors, layers (with their masks), states,
 * transitions, conditions, IK steps and blend parameters copied; reachable machines, nodes and
 * edges in the new numbering; clip slots in the order clips were added. */
cb_result cb_graph_pass_layout(cb_graph_compile *c);

/* Sync groups, top-down: a clip takes its own named group, else the group of the nearest blend
 * node above it (its named group, or one of its own); state machines and layer edges start
 * afresh. Also each clip's machines and states, whether it moves the character, whether every
 * rate is 1, and the clips' per-slot copies. */
cb_result cb_graph_pass_sync_groups(cb_graph_compile *c);

/* Flat detection: [layers of clips over] one blend node whose children are the clips of one
 * sync group (or alone in a group of their own), each once, layers each of its own clip, no
 * state machine (any clip speed, speed parameter and the blend's rate warp); and the tables of
 * its fast path. */
void cb_graph_pass_flat(cb_graph_compile *c);

/* Sync tables: per group, the markers its clips sync on (cb_sync_group_names; none when their
 * layouts agree, so normalized time is exact), refusing clips that order them differently; and
 * every clip's marker times, for the events' quick test. The graph's second allocation. */
cb_result cb_graph_pass_sync_tables(cb_graph_compile *c);

/* Foot tables (foot_lock.c): for each foot_lock leg and clip slot, the markers that plant and
 * lift the leg's foot (graph/runtime.h); the graph's third allocation, none without a foot_lock
 * step. Freed by cb_graph_free_foot_tables. */
cb_result cb_graph_pass_foot_tables(cb_graph_compile *c);
void cb_graph_free_foot_tables(cb_graph *g, const cb_allocator *a);

/* Pose depth: the pose buffers and blend entries a character's evaluation may need at once. */
void cb_graph_pass_pose_depth(cb_graph_compile *c);

/* After the last pass: the solvers move from the builder to the graph, the scratch is freed,
 * and *out receives the graph. */
void cb_graph_compile_finish(cb_graph_compile *c, cb_graph **out);

/* After a failed pass: frees everything the passes allocated, the graph included. */
void cb_graph_compile_abandon(cb_graph_compile *c);

#endif
