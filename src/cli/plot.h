/* Weight-map pictures for `crowdblend weights --plot`: one panel per node showing its weight
 * over the parameter plane (or, for 1D blend spaces, its weight curve), with the nodes marked,
 * written as a PNG through libpng's simplified API. */
#ifndef CROWDBLEND_CLI_PLOT_H
#define CROWDBLEND_CLI_PLOT_H

#include <stdbool.h>
#include <stddef.h>

/* Weights of n queries (x[c], y[c]; y unused in 1D) into w[node * n + c]. Returns false on
 * failure (the message goes to stderr by the callee). */
typedef bool (*cb_plot_eval_fn)(void *ctx, const float *x, const float *y, size_t n, float *w);

typedef struct cb_plot {
    int dimension;             /* 1: weight curves, 2: weight maps */
    size_t node_count;         /* panels */
    const float *nodes;        /* node_count * dimension coordinates, marked on every panel */
    const char *const *labels; /* a name per panel, or NULL for the node index */
    cb_plot_eval_fn eval;
    void *ctx;
    float lo[2], hi[2]; /* the window of parameter space shown (hi > lo) */
    int panel;          /* panel size in pixels, 32 to 512 */
} cb_plot;

/* The window around the nodes: their bounding box grown by a quarter of its larger side on
 * every side, square in 2D, at least 2 units wide when the nodes coincide. */
void cb_plot_window(const float *nodes, size_t n, int dimension, float lo[2], float hi[2]);

/* Renders and writes the picture. On failure returns false with a message in err. */
bool cb_plot_write_png(const cb_plot *p, const char *path, char *err, size_t err_size);

#endif
