/* The example graphs of examples/graphs/, embedded in the command at build time
 * (scripts/embed_text.py), so `crowdblend demo` and `crowdblend bench` run them anywhere. */
#ifndef CROWDBLEND_CLI_EXAMPLE_GRAPHS_H
#define CROWDBLEND_CLI_EXAMPLE_GRAPHS_H

#include <stddef.h>

typedef struct cb_example_graph {
    const char *name; /* the file name without ".json" */
    const char *text; /* the JSON document */
    size_t length;
} cb_example_graph;

/* Every example, then {NULL, NULL, 0}. */
extern const cb_example_graph cb_example_graphs[];

/* The example of that name, or NULL. */
const cb_example_graph *cb_example_graph_find(const char *name);

/* The one the demo and W5 run: locomotion with an upper-body layer and a head look-at. */
#define CB_DEFAULT_EXAMPLE_GRAPH "locomotion_upper_body_look_at"

#endif
