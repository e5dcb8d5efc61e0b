/**
 * @file crowdblend/solver.h
 * @brief Blend-space weight solvers: node positions in, per-node weights out, for a whole batch
 *        of characters at once (SoA, SIMD over characters).
 *
 * A blend space places M nodes (clips) in a parameter space; for every character's parameters
 * a solver gives each node a weight. crowdblend has eleven methods (cb_solver_kind), the
 * blend trees and blend spaces of Unity, Unreal and Godot plus scattered-data interpolants.
 * docs/solvers.md has their formulas, sources, pictures and the measured blend criteria.
 *
 * USE
 *   cb_solver_desc d = {.kind = CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D,
 *                       .nodes = xy, .node_count = 17};
 *   cb_solver *s;
 *   if (cb_solver_create(&d, &s, &err) != CB_OK) { ... err.message ... }
 *   const float *params[2] = {vel_x, vel_y};         // SoA columns, n characters
 *   cb_solver_evaluate(s, params, n, stride, weights, &nonfinite);
 *   // weight of node i for character c: weights[i * stride + c]
 *   cb_solver_destroy(s);
 *
 * CONVENTIONS
 *   - 2D parameters are (x, y); angles are atan2(y, x), counter-clockwise from +x, in radians.
 *     A "node at the origin" means exactly (0, 0).
 *   - Parameters per query (cb_solver_param_count()): 1 for LINEAR_1D, 2 for the 2D kinds,
 *     `dimension` (1 or 2) for IDW, KNN_IDW and RBF, and node_count for DIRECT (one per node).
 *   - Weights are written SoA: node i of character c at weights[i * stride + c]. Only the
 *     first `count` entries of each node row are written; entries between count and stride
 *     are left untouched. Weights lie in [0, 1] and sum to 1 (within float rounding), except
 *     DIRECT with all-zero inputs, which gives all-zero weights (the caller's rest-pose
 *     fallback takes over).
 *   - A query whose parameters are not all finite (NaN, +-Inf) is replaced by the origin of
 *     the parameter space (every parameter 0), which then follows the rule below like any
 *     other query, and is counted in *nonfinite_count. A finite query
 *     more than CB_SOLVER_FAR_SIZES layout sizes from the layout's centre (max-norm; the
 *     layout's size is half the larger side of the nodes' bounding box, the centre that box's
 *     centre) is moved towards the centre along that line to this distance: far out, float
 *     arithmetic can no longer tell the nodes apart, and every method's weights have settled
 *     to their limit in that direction. RBF uses CB_SOLVER_FAR_SIZES_RBF instead: its kernel
 *     sums cancel, and grow with the distance, so its float evaluation loses accuracy sooner.
 *     Weights are never NaN.
 *
 * DETERMINISM AND THREADS
 *   A solver is immutable after create: any number of threads may evaluate one solver at the
 *   same time. evaluate never allocates, locks or calls the system; it uses up to about 20 KB
 *   of stack (padded tail rows and kernel values for CB_SOLVER_MAX_NODES nodes). A character's
 * weights are bit-identical whatever the batch it is evaluated in, its position in that batch and
 * the batch size: the last count % W characters go through the same vector code on a padded copy.
 * The scalar paths (cb_solver_evaluate_ref, cb_solver_evaluate_one) are separate implementations of
 * the same contract and agree with the SIMD path within the bounds documented in docs/solvers.md,
 * not bit for bit.
 */
#ifndef CROWDBLEND_SOLVER_H
#define CROWDBLEND_SOLVER_H

#include "crowdblend/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most nodes a blend space may have. */
#define CB_SOLVER_MAX_NODES 128

/** Queries farther than this many layout sizes from the layout's centre are pulled in (see
 *  CONVENTIONS). */
#define CB_SOLVER_FAR_SIZES 1000.0f

/** The same for CB_SOLVER_KIND_RBF. */
#define CB_SOLVER_FAR_SIZES_RBF 4.0f

/** Node coordinates must lie in [-CB_SOLVER_NODE_LIMIT, CB_SOLVER_NODE_LIMIT]: with queries
 *  pulled in as above, no intermediate value of any method can overflow. */
#define CB_SOLVER_NODE_LIMIT 1e6f

/** Distinct nodes must be at least this far apart, and so must distinct LINEAR_1D thresholds
 *  and the distinct x (and y) lines of a BILINEAR_2D grid: every method divides by node
 *  distances or spacings somewhere, and below this their squares or reciprocals leave the
 *  normal float range (fuzzing found spacings of 1e-40 giving NaN weights; issue 11). */
#define CB_SOLVER_MIN_SPACING 1e-18f

/** Largest k of KNN_IDW. */
#define CB_SOLVER_MAX_KNN_K 32

/** The solver methods. The names in parentheses are those of cb_solver_kind_name(). */
typedef enum cb_solver_kind {
    /** Zero in a desc: resolves to CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D, the default
     *  locomotion blend space. */
    _CB_SOLVER_KIND_DEFAULT = 0,
    /** (linear_1d) Unity 1D blend tree: thresholds sorted, linear between neighbours, the end
     *  node takes all weight beyond either end. Nodes with equal thresholds form a step: below
     *  it the first of them (in the order given) takes the weight, above it the last, exactly
     *  at it they share it evenly. Needs >= 1 node. */
    CB_SOLVER_KIND_LINEAR_1D,
    /** (simple_directional_2d) Unity 2D Simple Directional: the two nodes angularly closest on
     *  either side of the query, q = t0 p0 + t1 p1, influence clamp01(t0 + t1) shared t0 : t1
     *  (evenly when the query is not inside their sector), the rest to the node at the origin
     *  or, without one, evenly to all nodes. At most one node per direction and one at the
     *  origin. Needs >= 1 node away from the origin. */
    CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D,
    /** (freeform_directional_2d) Unity 2D Freeform Directional: gradient band interpolation
     *  in polar space (Johansen 2009), direction dominating magnitude. At most one node at
     *  the origin. Needs >= 1 node. */
    CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D,
    /** (freeform_cartesian_2d) Unity 2D Freeform Cartesian: gradient band interpolation
     *  (Johansen 2009). Needs >= 1 node. */
    CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D,
    /** (delaunay_2d) Godot BlendSpace2D / Unreal: Delaunay triangulation at create (exact
     *  predicates), barycentric weights in the query's triangle; outside the convex hull the
     *  closest point of the hull is used. All nodes collinear (or fewer than 3): 1D linear
     *  interpolation along their line, the query projected onto it. Needs >= 1 node. */
    CB_SOLVER_KIND_DELAUNAY_2D,
    /** (bilinear_2d) Bilinear over a rectangular grid of grid_nx * grid_ny nodes listed x
     *  fastest (node iy * nx + ix); x strictly increasing along a row, y along a column,
     *  clamped outside the grid. Needs >= 1 node. */
    CB_SOLVER_KIND_BILINEAR_2D,
    /** (direct) Unity Direct blend tree: each node has its own parameter; parameters are
     *  clamped to >= 0 and normalized to sum 1; all-zero gives all-zero weights. Node
     *  positions are not used. Needs >= 1 node. */
    CB_SOLVER_KIND_DIRECT,
    /** (idw) Shepard inverse distance weighting, w_i ~ 1 / d_i^power; a query on a node gives
     *  that node 1. Needs >= 1 node. */
    CB_SOLVER_KIND_IDW,
    /** (knn_idw) Inverse distance weighting over the k nearest nodes only, in the continuous
     *  form w_i ~ max(0, d_i^-power - d_(k+1)^-power) (the (k+1)-th nearest distance is
     *  subtracted so that a node's weight reaches 0 before it leaves the k nearest). Nodes
     *  tied at the smallest distance share the weight when all terms vanish. Needs >= 1 node.
     */
    CB_SOLVER_KIND_KNN_IDW,
    /** (rbf) Radial basis function interpolation with a constant + linear polynomial term,
     *  so the weights reproduce linear functions and sum to 1; negative weights and weights
     *  above 1 are clamped and the rest renormalized. Needs >= 1 node. */
    CB_SOLVER_KIND_RBF,
    /** (natural_neighbor_2d) Sibson natural-neighbour coordinates (areas stolen from the
     *  Voronoi cells); outside the convex hull, and on it, the closest point of the hull is
     *  used (where Sibson's coordinates are linear along the hull edge). Collinear layouts as
     *  DELAUNAY_2D. Needs >= 1 node. */
    CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D,
    _CB_SOLVER_KIND_COUNT
} cb_solver_kind;

/** Kernels of CB_SOLVER_KIND_RBF, phi(r) with r the distance to a node. */
typedef enum cb_rbf_kernel {
    /** Zero in a desc: resolves to CB_RBF_KERNEL_THIN_PLATE. */
    _CB_RBF_KERNEL_DEFAULT = 0,
    /** (thin_plate) r^2 ln r, the polyharmonic spline of order 2: minimal bending energy. */
    CB_RBF_KERNEL_THIN_PLATE,
    /** (cubic) r^3, polyharmonic of order 3. */
    CB_RBF_KERNEL_CUBIC,
    /** (linear) r, polyharmonic of order 1. */
    CB_RBF_KERNEL_LINEAR,
    /** (gaussian) exp(-(epsilon r)^2). */
    CB_RBF_KERNEL_GAUSSIAN,
    CB_RBF_KERNEL_COUNT
} cb_rbf_kernel;

/**
 * How to build a solver. Zero-initialise it and set what you need: zero means default.
 * The desc and the node array are read during cb_solver_create only, never kept.
 */
typedef struct cb_solver_desc {
    /** Must be 0. */
    uint32_t _start_canary;
    /** The method. Default CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D. */
    cb_solver_kind kind;
    /** node_count * dimension floats, node i at nodes[i * dimension]: (x, y) for 2D, t for
     *  1D. Finite, |coordinate| <= CB_SOLVER_NODE_LIMIT. May be NULL for DIRECT only. */
    const float *nodes;
    /** Number of nodes, 1 to CB_SOLVER_MAX_NODES. No default. */
    uint32_t node_count;
    /** Floats per node: 1 or 2. Default 1 for LINEAR_1D, 2 for every other kind (DIRECT
     *  ignores it). IDW, KNN_IDW and RBF accept 1 or 2; the other kinds only their own. */
    uint32_t dimension;
    /** IDW and KNN_IDW: the power p of 1 / d^p. Default 2; range (0, 64]. */
    float idw_power;
    /** KNN_IDW: how many nearest nodes get weight. Default 4; range 1 to
     *  CB_SOLVER_MAX_KNN_K. k >= node_count is plain IDW. */
    uint32_t knn_k;
    /** RBF: the kernel. Default CB_RBF_KERNEL_THIN_PLATE. */
    cb_rbf_kernel rbf_kernel;
    /** RBF with CB_RBF_KERNEL_GAUSSIAN: the shape parameter epsilon, in 1 / parameter units.
     *  Default (0): 1 / (mean distance from a node to its nearest neighbour), so that
     *  neighbouring nodes see exp(-1) of each other. Must be finite and > 0 when set. */
    float rbf_epsilon;
    /** BILINEAR_2D: nodes per row (x) and per column (y); grid_nx * grid_ny == node_count.
     *  Default (both 0): grid_nx is the number of leading nodes that share node 0's y, and
     *  grid_ny = node_count / grid_nx. One of them 0: derived from the other. */
    uint32_t grid_nx, grid_ny;
    /** Allocator for the solver's memory. Default: the C library. */
    cb_allocator allocator;
    /** Must be 0. */
    uint32_t _end_canary;
} cb_solver_desc;

/** Opaque, immutable solver. */
typedef struct cb_solver cb_solver;

/**
 * The desc with its node-independent defaults filled in (kind, dimension, idw_power, knn_k,
 * rbf_kernel). rbf_epsilon and the grid size stay 0 when unset: they are derived from the
 * nodes at create. NULL gives the defaults of an all-zero desc.
 */
CB_API cb_solver_desc cb_solver_query_desc(const cb_solver_desc *desc);

/**
 * Validates the desc and precomputes the method's tables (sorting, sectors, pair constants,
 * triangulation, RBF system).
 * @param desc  the blend space; read only during the call
 * @param out   receives the solver; untouched on failure
 * @param err   optional detail (message names the field or node index)
 * @return CB_OK, or
 *   CB_ERR_NULL_ARGUMENT  desc or out is NULL, or nodes is NULL for a kind that needs them;
 *   CB_ERR_CANARY         a canary is not 0;
 *   CB_ERR_ALLOCATOR      only one of alloc_fn / free_fn is set;
 *   CB_ERR_INVALID_ARGUMENT  unknown kind or kernel, a dimension the kind does not take, an
 *                         option out of range, a node coordinate beyond CB_SOLVER_NODE_LIMIT,
 *                         a bilinear grid that is not rectangular or not increasing;
 *   CB_ERR_NOT_FINITE     a node coordinate or an option is NaN or infinite;
 *   CB_ERR_TOO_FEW        node_count is 0, or SIMPLE_DIRECTIONAL_2D has no node away from
 *                         the origin;
 *   CB_ERR_TOO_MANY       node_count above CB_SOLVER_MAX_NODES;
 *   CB_ERR_DUPLICATE      two 2D nodes closer than 1e-6 of the larger of the layout's
 *                         bounding-box diagonal and its largest coordinate magnitude (float
 *                         coordinates a few ulps apart cannot be told apart reliably), or
 *                         closer than CB_SOLVER_MIN_SPACING; two distinct LINEAR_1D thresholds
 *                         or BILINEAR_2D grid lines closer than CB_SOLVER_MIN_SPACING (equal
 *                         thresholds are allowed for LINEAR_1D); two nodes at the origin, or
 *                         two SIMPLE_DIRECTIONAL_2D nodes in the same direction;
 *   CB_ERR_MISMATCH       grid_nx * grid_ny != node_count;
 *   CB_ERR_DEGENERATE     the RBF system is singular;
 *   CB_ERR_OUT_OF_MEMORY  the allocator failed.
 */
CB_API cb_result cb_solver_create(const cb_solver_desc *desc, cb_solver **out, cb_error *err);

/** Frees the solver through its desc's allocator. NULL does nothing. */
CB_API void cb_solver_destroy(cb_solver *solver);

/** The solver's method (never _CB_SOLVER_KIND_DEFAULT: create resolves the zero value; that
 *  for a NULL solver). A query, not a plain getter, because cb_solver_kind names the type. */
CB_API cb_solver_kind cb_solver_query_kind(const cb_solver *solver);

/** M, the number of nodes: rows of weights that evaluate writes (0 for NULL). */
CB_API uint32_t cb_solver_node_count(const cb_solver *solver);

/** Parameter columns one query has (see CONVENTIONS; 0 for NULL). */
CB_API uint32_t cb_solver_param_count(const cb_solver *solver);

/** "linear_1d", "freeform_directional_2d", ... (the names above); NULL for an invalid kind,
 *  _CB_SOLVER_KIND_DEFAULT included (the zero value of a desc, not a method). */
CB_API const char *cb_solver_kind_name(cb_solver_kind kind);

/**
 * The kind whose cb_solver_kind_name() is name (exact, case-sensitive).
 * @return CB_OK, CB_ERR_NULL_ARGUMENT or CB_ERR_NOT_FOUND (*out untouched then).
 */
CB_API cb_result cb_solver_kind_from_name(const char *name, cb_solver_kind *out);

/** "thin_plate", "cubic", "linear", "gaussian"; NULL for an invalid kernel. */
CB_API const char *cb_rbf_kernel_name(cb_rbf_kernel kernel);

/** The kernel named name. @return CB_OK, CB_ERR_NULL_ARGUMENT or CB_ERR_NOT_FOUND. */
CB_API cb_result cb_rbf_kernel_from_name(const char *name, cb_rbf_kernel *out);

/**
 * Weights of count characters, SIMD over characters.
 * @param solver    a solver; only read
 * @param params    cb_solver_param_count() column pointers, each with count floats: character
 *                  c's query is (params[0][c], params[1][c], ...). Any alignment.
 * @param count     characters; 0 does nothing (and sets *nonfinite_count to 0)
 * @param stride    distance between the node rows of weights, in floats; >= count
 * @param weights   out: node_count rows, weights[i * stride + c]; must not overlap params
 * @param nonfinite_count  optional out: the number of queries that had a NaN or infinite
 *                  parameter (they were evaluated at the origin)
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (solver, params, a column or weights NULL with
 *         count > 0) or CB_ERR_INVALID_ARGUMENT (stride < count, or node_count * stride
 *         overflows size_t); nothing is written on failure.
 */
CB_API cb_result cb_solver_evaluate(const cb_solver *solver, const float *const *params,
                                    size_t count, size_t stride, float *weights,
                                    size_t *nonfinite_count);

/** The same contract as cb_solver_evaluate, computed one query at a time by the scalar path
 *  (cb_solver_evaluate_one): the baseline of the benchmarks' SIMD/scalar ratio. */
CB_API cb_result cb_solver_evaluate_ref(const cb_solver *solver, const float *const *params,
                                        size_t count, size_t stride, float *weights,
                                        size_t *nonfinite_count);

/**
 * Weights of a single query, by the scalar path: the convenience for tools and one-off
 * queries (batches should use cb_solver_evaluate).
 * @param params     cb_solver_param_count() floats
 * @param weights    receives node_count floats, node order as created
 * @param nonfinite  optional: set to true when a parameter was NaN or infinite
 * @return CB_OK or CB_ERR_NULL_ARGUMENT (nothing written).
 */
CB_API cb_result cb_solver_evaluate_one(const cb_solver *solver, const float *params,
                                        float *weights, bool *nonfinite);

/**
 * The weight stage as a job (validate, then run), for engines that schedule stages
 * themselves. All fields zero is invalid; the minimal valid job sets solver, params,
 * param_count, count and weights.
 */
typedef struct cb_solver_job {
    /** The blend space. */
    const cb_solver *solver;
    /** param_count spans, span d holding parameter d of every character; each span's count
     *  must be >= count. */
    const cb_float_cspan *params;
    /** Must equal cb_solver_param_count(solver). */
    uint32_t param_count;
    /** Characters. */
    size_t count;
    /** Output rows: weights.ptr[i * stride + c]; weights.count must be at least
     *  (node_count - 1) * stride + count. */
    cb_float_span weights;
    /** Distance between node rows in floats; 0 means count; otherwise >= count. */
    size_t stride;
    /** Optional: receives the number of queries with non-finite parameters. */
    size_t *nonfinite_count;
} cb_solver_job;

/**
 * Checks a job without running it; err (optional) names the field at fault.
 * @return CB_OK, CB_ERR_NULL_ARGUMENT (solver, params, a span pointer or weights.ptr NULL),
 *         CB_ERR_MISMATCH (param_count), CB_ERR_INVALID_ARGUMENT (stride < count or
 *         overflow) or CB_ERR_SPAN_TOO_SHORT (a params span or weights).
 */
CB_API cb_result cb_solver_job_validate(const cb_solver_job *job, cb_error *err);

/** Validates, then evaluates (cb_solver_evaluate). Writes nothing when validation fails. */
CB_API cb_result cb_solver_job_run(const cb_solver_job *job, cb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_SOLVER_H */
