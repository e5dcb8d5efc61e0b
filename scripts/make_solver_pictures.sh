#!/bin/sh
# Draws docs/img/<method>.png, the weight map of every method on the standard layout of
# docs/solvers.md, with `crowdblend weights --plot`. Usage: scripts/make_solver_pictures.sh
# [path/to/crowdblend] (default: build/demo/src/cli/crowdblend, built by scripts/demo.sh).
set -eu
cd "$(dirname "$0")/.."
CB=${1:-build/demo/src/cli/crowdblend}
OUT=docs/img
mkdir -p "$OUT"
# Idle at the origin and 8 directions at radius 1 (the 45-degree nodes as float literals).
STD8='[[0, 0], [1, 0], [0.70710677, 0.70710677], [0, 1], [-0.70710677, 0.70710677], [-1, 0],
       [-0.70710677, -0.70710677], [0, -1], [0.70710677, -0.70710677]]'
# The same 8 directions on a square: a 3 x 3 grid, x fastest.
GRID='[[-1, -1], [0, -1], [1, -1], [-1, 0], [0, 0], [1, 0], [-1, 1], [0, 1], [1, 1]]'
plot() { # name solver nodes [options]
    printf '{"solver": "%s", "nodes": %s, "options": %s, "queries": []}' "$2" "$3" "${4:-{\}}" |
        "$CB" weights --plot "$OUT/$1.png" --plot-size 128 >/dev/null
    echo "wrote $OUT/$1.png"
}
plot linear_1d linear_1d '[-1, -0.5, 0, 0.5, 1]'
for m in simple_directional_2d freeform_directional_2d freeform_cartesian_2d delaunay_2d idw \
    knn_idw rbf natural_neighbor_2d; do
    plot "$m" "$m" "$STD8"
done
plot bilinear_2d bilinear_2d "$GRID" '{"nx": 3, "ny": 3}'
plot direct direct '[[0], [1]]'
plot rbf_gaussian rbf "$STD8" '{"kernel": "gaussian"}'
plot velocity_blend_4dir velocity_blend_4dir '[[1, 0], [-1, 0], [0, -1], [0, 1]]'
