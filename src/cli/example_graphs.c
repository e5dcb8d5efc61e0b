#include "cli/example_graphs.h"

#include <string.h>

const cb_example_graph *cb_example_graph_find(const char *name)
{
    for (const cb_example_graph *g = cb_example_graphs; g->name != NULL; ++g) {
        if (strcmp(g->name, name) == 0) {
            return g;
        }
    }
    return NULL;
}
