/* Private to src/graph: the builder as the add_* calls fill it (builder.c) and the compiler
 * reads it (compile.c). */
#ifndef CROWDBLEND_GRAPH_BUILDER_IMPL_H
#define CROWDBLEND_GRAPH_BUILDER_IMPL_H

#include "base/names.h"
#include "graph/graph_impl.h"

/* A growable array (build time only). */
typedef struct vec {
    void *data;
    size_t count, cap, elem;
} vec;

#define VEC_AT(v, type, i) (((type *)(v).data)[i])

typedef struct bgroup {
    char name[CB_GRAPH_NAME_MAX + 1];
} bgroup;

/* A node as added: like gnode (its edges' children are builder indices), plus what only the
 * build needs. */
typedef struct bnode {
    gnode n;
    uint32_t explicit_group; /* blend spaces and clips: a named group, or GNONE */
    bool additive_clip;
} bnode;

struct cb_graph_builder {
    cb_allocator allocator;
    char name[CB_GRAPH_NAME_MAX + 1];
    const cb_skeleton *skeleton;
    const cb_clip **clips;
    uint32_t clip_count;
    cb_name_table clip_names;  /* the clips, by cb_clip_name */
    cb_name_table node_names;  /* the named nodes */
    cb_name_table group_names; /* the named sync groups */
    vec params;                /* gparam */
    vec procs;                 /* gproc */
    vec nodes;                 /* bnode; a node's id is its index + 1 */
    vec edges;                 /* gedge */
    vec blend_params;          /* uint32_t: each blend node's parameters (gblend.first_param) */
    vec layers;                /* glayer (masks owned, freed with the builder) */
    vec sms;                   /* gsm */
    vec states;                /* gstate */
    vec transitions;           /* gtransition */
    vec conditions;            /* gcondition */
    vec iks;                   /* gik */
    vec groups;                /* bgroup: the named sync groups */
    uint32_t root;             /* a node index, or GNONE: the last node added */
    uint32_t lod_param;        /* the LOD parameter (cb_graph_set_lod_param), or GNONE */
    bool built;                /* a builder builds once: the graph takes its solvers */
};

/* The builder index of an id (UINT32_MAX for id 0, which no node has). */
static inline uint32_t cb_graph_node_index(cb_graph_node node)
{
    return node.id - 1u;
}

/* The builder's lookups and checks for steps added in files of their own (builder.c): a joint,
 * a float parameter, an optional numeric parameter (NULL: GNONE), an IK step's job validated
 * (the builder's validate_ik) and pushed with its LOD limit. Messages start with `what`. */
cb_result cb_graph_builder_joint(const cb_graph_builder *b, const char *name, const char *what,
                                 uint32_t *out, cb_error *err);
cb_result cb_graph_builder_float(const cb_graph_builder *b, const char *name, const char *what,
                                 uint32_t *out, cb_error *err);
cb_result cb_graph_builder_number(const cb_graph_builder *b, const char *name, const char *what,
                                  uint32_t *out, cb_error *err);
cb_result cb_graph_builder_check_ik(const cb_graph_builder *b, const gik *g, const char *what,
                                    cb_error *err);
cb_result cb_graph_builder_push_ik(cb_graph_builder *b, const gik *g, const cb_graph_lod_limit *lod,
                                   const char *what, cb_error *err);

#endif
