/* Internals shared by the blend-weight solvers: the solver object, the per-method operations,
 * and the helpers several methods use (1D hat weights, hull projection, triangulation).
 *
 * The driver (solver.c) validates, sanitizes the queries and walks the batch W characters at
 * a time; each method supplies three functions:
 *   create  precomputes its tables from the validated desc (solver.c has already checked
 *           the common rules: counts, finiteness, limits, duplicates);
 *   block   weights of W characters at once: reads the sanitized query in `in`, writes node
 *           row i at out + i * ostride (W floats, any alignment; the rows may be used as
 *           scratch before the final values are stored);
 *   one     weights of a single sanitized query, scalar, into out[0..M).
 * Both evaluation functions see only finite queries within CB_SOLVER_FAR_SIZES layout sizes of
 * the layout (solver.h), and must produce finite weights in [0, 1] for them. */
#ifndef CROWDBLEND_SOLVERS_SOLVER_IMPL_H
#define CROWDBLEND_SOLVERS_SOLVER_IMPL_H

#include "base/base_impl.h"
#include "crowdblend/solver.h"
#include "simd/vf.h"

/* One block of W queries, already sanitized (non-finite -> origin, pulled in to the limit). */
typedef struct cb_block_in {
    cb_vf x, y;               /* the query; y is 0 for 1D solvers */
    cb_vm finite;             /* DIRECT: lanes whose parameters were all finite */
    const float *const *cols; /* DIRECT: node_count column pointers at this block's start */
} cb_block_in;

typedef cb_result (*cb_solver_create_fn)(cb_solver *s, const cb_solver_desc *d, cb_error *err);
typedef void (*cb_solver_block_fn)(const cb_solver *s, const cb_block_in *in, float *out,
                                   size_t ostride);
typedef void (*cb_solver_one_fn)(const cb_solver *s, const float *q, float *out);

typedef struct cb_solver_ops {
    cb_solver_create_fn create;
    cb_solver_block_fn block;
    cb_solver_one_fn one;
} cb_solver_ops;

struct cb_solver {
    cb_solver_kind kind;
    uint32_t node_count;
    uint32_t dimension;   /* coordinates per node and query: 1 or 2 (DIRECT: 0) */
    uint32_t param_count; /* columns per query */
    float far_cx, far_cy; /* queries are pulled towards this point ... */
    float far;            /* ... when farther than this (max-norm) */
    const cb_solver_ops *ops;
    cb_allocator allocator;
    void *data; /* the method's tables: one allocation of data_bytes, 64-byte aligned */
    size_t data_bytes;
};

extern const cb_solver_ops cb_solver_ops_linear_1d;
extern const cb_solver_ops cb_solver_ops_simple_directional;
extern const cb_solver_ops cb_solver_ops_freeform_directional;
extern const cb_solver_ops cb_solver_ops_freeform_cartesian;
extern const cb_solver_ops cb_solver_ops_delaunay;
extern const cb_solver_ops cb_solver_ops_bilinear;
extern const cb_solver_ops cb_solver_ops_direct;
extern const cb_solver_ops cb_solver_ops_idw;
extern const cb_solver_ops cb_solver_ops_knn_idw;
extern const cb_solver_ops cb_solver_ops_rbf;
extern const cb_solver_ops cb_solver_ops_natural_neighbor;

/* Inverse distance weighting, shared by idw and knn_idw (idw.c). */
typedef struct cb_idw {
    float *x, *y;     /* node positions (y = 0 for 1D) */
    float *uniform;   /* 1 / node_count each: a fallback that is never needed (sum >= 1) */
    float half_power; /* p / 2 */
    bool square;      /* p == 2: the ratio itself, no power function */
    uint32_t k;       /* nearest nodes that get weight; node_count for plain IDW */
} cb_idw;

cb_result cb_idw_create(cb_solver *s, const cb_solver_desc *desc, uint32_t k, cb_error *err);
void cb_idw_block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride);
void cb_idw_one(const cb_solver *s, const float *q, float *out);

/* ------------------------------------------------------------------------------------------ */
/* Method tables in one allocation                                                            */

/* Lays out several arrays in one block: run the same sequence of takes twice, first with
 * base NULL to measure (pointers come back NULL), then on the allocated block. */
typedef struct cb_layout {
    unsigned char *base;
    size_t size;
} cb_layout;

static inline void *cb_layout_take(cb_layout *l, size_t bytes)
{
    size_t off = cb_round_up(l->size, 64);
    l->size = off + bytes;
    return l->base != NULL ? l->base + off : NULL;
}

/* Allocates s->data (zeroed, 64-byte aligned) through the solver's allocator. */
cb_result cb_solver_data_alloc(cb_solver *s, size_t bytes, cb_error *err);

/* The sizes a method's table layout depends on. */
typedef struct cb_plan_sizes {
    uint32_t nodes, tris, hull; /* nodes; triangles and hull edges of a triangulation */
    uint32_t nx, ny;            /* bilinear grid */
    uint32_t rows;              /* rbf: coefficient rows (nodes + polynomial terms) */
} cb_plan_sizes;

/* Lays out the method's struct (size bytes) at the start of the tables followed by its arrays:
 * plan assigns the struct's array pointers from the layout. It runs twice, on scratch (a local
 * struct of the same type) to measure, then on the allocated s->data. */
typedef void (*cb_plan_fn)(cb_layout *l, void *tables, const cb_plan_sizes *n);
cb_result cb_solver_tables(cb_solver *s, size_t size, cb_plan_fn plan, const cb_plan_sizes *n,
                           void *scratch, cb_error *err);

/* The centre and pull-in distance of a layout (solver.h CONVENTIONS), computed in float the
 * same way everywhere (the test references repeat it). */
static inline void cb_solver_far_limits(const float *nodes, uint32_t n, uint32_t dim, float factor,
                                        float *cx, float *cy, float *far)
{
    float lo[2] = {0.0f, 0.0f}, hi[2] = {0.0f, 0.0f};
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t k = 0; k < 2; ++k) {
            float v = k < dim ? nodes[(size_t)i * dim + k] : 0.0f;
            lo[k] = i == 0 || v < lo[k] ? v : lo[k];
            hi[k] = i == 0 || v > hi[k] ? v : hi[k];
        }
    }
    *cx = 0.5f * (lo[0] + hi[0]);
    *cy = 0.5f * (lo[1] + hi[1]);
    float size = 0.5f * (hi[0] - lo[0] > hi[1] - lo[1] ? hi[0] - lo[0] : hi[1] - lo[1]);
    *far = factor * (size > 0.0f ? size : 1.0f);
}

/* A node's coordinates as doubles (y = 0 for 1D nodes). */
static inline void cb_solver_node(const cb_solver_desc *d, uint32_t dim, uint32_t i, double *x,
                                  double *y)
{
    *x = d->nodes[(size_t)i * dim];
    *y = dim == 2 ? d->nodes[(size_t)i * dim + 1] : 0.0;
}

/* ------------------------------------------------------------------------------------------ */
/* Piecewise-linear "hat" weights over sorted knots (1D linear, bilinear axes, collinear        */
/* Delaunay layouts)                                                                          */

/* Knots t[0] < t[1] < ... < t[n-1] (distinct; equal thresholds are grouped by the caller).
 * Knot k's weight is the hat min(rise_k(u), fall_k(u)), clamped to [0, 1]:
 *   rise_k(u) = (u - t[k-1]) * inv[k-1]   (1 for k = 0)
 *   fall_k(u) = 1 - (u - t[k]) * inv[k]   (1 for the last knot)
 * inv[k] is 1 / (t[k+1] - t[k]) rounded up so that the difference times inv reaches 1 exactly
 * at the next knot: queries on a knot give that knot exactly 1 and its neighbours exactly 0. */
typedef struct cb_hat {
    uint32_t n;
    float *t;   /* n knots */
    float *inv; /* n - 1 inverse spans */
} cb_hat;

/* Fills h->inv from h->t (both allocated by the caller). */
void cb_hat_prepare(cb_hat *h);

/* Weights of all n knots for W queries: knot k's weight to the row out + row[k] * ostride
 * (row NULL: row k). */
void cb_hat_block(const cb_hat *h, cb_vf u, float *out, size_t ostride, const uint32_t *row);

/* The segment of a single query: knots lo and lo + 1 with weights 1 - f and f (f in [0, 1]);
 * lo + 1 == n (f = 0) past the last knot. Binary search. */
void cb_hat_one(const cb_hat *h, float u, uint32_t *lo, float *f);

/* ------------------------------------------------------------------------------------------ */
/* Normalization                                                                              */

/* Divides the n rows at out (W lanes each) by their lane sums; lanes whose sum is not > 0 get
 * fallback[i] instead (a precomputed weight vector that sums to 1). */
void cb_normalize_block(float *out, size_t ostride, uint32_t n, const float *fallback);

/* Scalar twin of cb_normalize_block. */
void cb_normalize_one(float *out, uint32_t n, const float *fallback);

/* ------------------------------------------------------------------------------------------ */
/* Triangulation (triangulate.c): Delaunay with exact predicates, shared by delaunay_2d and    */
/* natural_neighbor_2d                                                                        */

typedef struct cb_tri_mesh {
    uint32_t tri_count;
    uint32_t (*tri)[3];  /* vertices, counter-clockwise */
    int32_t (*adj)[3];   /* adj[t][k]: triangle across the edge opposite vertex k, or -1 */
    uint32_t hull_count; /* hull vertices, counter-clockwise (collinear points dropped) */
    uint32_t *hull;
    bool collinear;        /* all nodes on one line (or fewer than 3): no triangles */
    double line_origin[2]; /* collinear: the line through the nodes (unit direction) */
    double line_dir[2];
    uint32_t alloc_n; /* node count the arrays were sized for */
} cb_tri_mesh;

/* Triangulates n nodes (2D, distinct) into mesh; the arrays are allocated with cb_alloc from
 * allocator and released with cb_tri_mesh_free. Orientation and in-circle tests are exact
 * (expansion arithmetic on the float inputs), so co-circular and collinear layouts give a
 * valid Delaunay triangulation (co-circular ties broken consistently). */
cb_result cb_tri_mesh_build(const float *xy, uint32_t n, const cb_allocator *allocator,
                            cb_tri_mesh *mesh, cb_error *err);
void cb_tri_mesh_free(cb_tri_mesh *mesh, const cb_allocator *allocator);

/* Exact sign of the orientation determinant of a, b, c: > 0 counter-clockwise. */
int cb_orient2d_exact(const double a[2], const double b[2], const double c[2]);
/* Exact sign of the in-circle determinant: > 0 when d is inside the circle through a, b, c
 * (counter-clockwise). */
int cb_incircle_exact(const double a[2], const double b[2], const double c[2], const double d[2]);

/* ------------------------------------------------------------------------------------------ */
/* Collinear layouts of delaunay_2d and natural_neighbor_2d: 1D linear along the nodes' line   */

typedef struct cb_line1d {
    cb_hat hat;    /* the nodes' positions along the line, sorted */
    uint32_t *row; /* knot k is node row[k] */
    float ox, oy;  /* a point of the line */
    float dx, dy;  /* its unit direction */
} cb_line1d;

void cb_line1d_take(cb_layout *l, cb_line1d *d, uint32_t n);
void cb_line1d_prepare(cb_line1d *d, const cb_tri_mesh *mesh, const float *xy, uint32_t n);
/* Writes all n rows: the query projected onto the line, then hat weights. */
void cb_line1d_block(const cb_line1d *d, cb_vf x, cb_vf y, float *out, size_t ostride);
void cb_line1d_one(const cb_line1d *d, float x, float y, float *out, uint32_t n);

/* ------------------------------------------------------------------------------------------ */
/* Closest point of a convex hull (delaunay_2d and natural_neighbor_2d outside the hull)       */

/* Hull edges as float constants: edge e from vertex a[e] to b[e], counter-clockwise. */
typedef struct cb_hull {
    uint32_t n;
    uint32_t *a, *b;          /* node indices */
    float *ax, *ay, *ex, *ey; /* start point and edge vector */
    float *inv_len2;          /* 1 / |e|^2 */
    float *inv_len;           /* 1 / |e| */
} cb_hull;

/* Sets up hull from the mesh's hull vertices (arrays carved by the caller's layout). */
void cb_hull_take(cb_layout *l, cb_hull *h, uint32_t n);
void cb_hull_prepare(cb_hull *h, const cb_tri_mesh *mesh, const float *xy);

/* For W queries: inside = the smallest signed distance from the query to an edge's line
 * (positive inside the hull), and the closest point of the hull boundary as an edge index
 * (as a float) and the parameter t in [0, 1] along that edge. */
void cb_hull_block(const cb_hull *h, cb_vf x, cb_vf y, cb_vf *inside, cb_vf *edge, cb_vf *t);

/* Writes (1 - t) to node a[edge], t to node b[edge] and 0 to every other node, in the lanes of
 * mask (other lanes keep their row values). */
void cb_hull_write_block(const cb_hull *h, cb_vm mask, cb_vf edge, cb_vf t, float *out,
                         size_t ostride, uint32_t node_count);

/* Scalar twin of cb_hull_block. */
void cb_hull_one(const cb_hull *h, float x, float y, float *inside, uint32_t *edge, float *t);

#endif
