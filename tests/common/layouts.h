/* Blend-space layouts for the solver tests and benchmarks: locomotion-like rings around an
 * idle node, grids, 1D thresholds, all drawn from a seeded stream. */
#ifndef CROWDBLEND_TEST_LAYOUTS_H
#define CROWDBLEND_TEST_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/prng.h"
#include "crowdblend/solver.h"

/* Ring layout: an optional node at the origin, then `dirs` directions (4 or 8, starting at a
 * random or zero phase) on `rings` rings (radius r1, and r2 > r1 for the second). With jitter,
 * each node's angle moves by up to 8 degrees and its radius by up to 8 %. Writes (x, y) pairs
 * and returns the node count. */
int layout_rings(cb_prng *r, int dirs, int rings, bool centre, bool jitter, float *xy);

/* The standard pictures' layout: idle at the origin and 8 directions at radius 1. */
int layout_standard8(float *xy);

/* The crowd's default locomotion layout: idle, 8 directions at 1.4 m/s and 8 at 3.5 m/s. */
int layout_locomotion17(float *xy);

/* nx * ny grid with random increasing coordinates, x fastest. */
int layout_grid(cb_prng *r, int nx, int ny, float *xy);

/* n sorted random thresholds in [-2, 2]; with `equal`, one pair is made equal. */
int layout_thresholds(cb_prng *r, int n, bool equal, float *t);

/* The largest |coordinate| of a layout (its scale). */
float layout_radius(const float *xy, int n, int dim);

#endif
