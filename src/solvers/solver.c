/* The solver object and the evaluation driver, shared by every method.
 *
 * create: one function resolves the desc defaults, the common rules are checked here (counts,
 * finiteness, coordinate limits, duplicate nodes), then the method precomputes its tables.
 * evaluate: queries are sanitized (non-finite -> origin and counted; far ones pulled towards the
 * layout, solver.h) and handed to the method W characters at a time. The last count % W
 * characters are copied into padded, aligned stage buffers and run through the same block
 * function, so a character's weights never depend on the batch around it. */
#include <math.h>
#include <string.h>

#include "solvers/solver_impl.h"
#include "solvers/solver_kernels.h"

static const struct {
    const char *name;
    const cb_solver_ops *ops;
} kinds[_CB_SOLVER_KIND_COUNT] = {
    [CB_SOLVER_KIND_LINEAR_1D] = {"linear_1d", &cb_solver_ops_linear_1d},
    [CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D] = {"simple_directional_2d",
                                              &cb_solver_ops_simple_directional},
    [CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D] = {"freeform_directional_2d",
                                                &cb_solver_ops_freeform_directional},
    [CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D] = {"freeform_cartesian_2d",
                                              &cb_solver_ops_freeform_cartesian},
    [CB_SOLVER_KIND_DELAUNAY_2D] = {"delaunay_2d", &cb_solver_ops_delaunay},
    [CB_SOLVER_KIND_BILINEAR_2D] = {"bilinear_2d", &cb_solver_ops_bilinear},
    [CB_SOLVER_KIND_DIRECT] = {"direct", &cb_solver_ops_direct},
    [CB_SOLVER_KIND_IDW] = {"idw", &cb_solver_ops_idw},
    [CB_SOLVER_KIND_KNN_IDW] = {"knn_idw", &cb_solver_ops_knn_idw},
    [CB_SOLVER_KIND_RBF] = {"rbf", &cb_solver_ops_rbf},
    [CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D] = {"natural_neighbor_2d", &cb_solver_ops_natural_neighbor},
};

static const char *const kernel_names[CB_RBF_KERNEL_COUNT] = {
    [CB_RBF_KERNEL_THIN_PLATE] = "thin_plate",
    [CB_RBF_KERNEL_CUBIC] = "cubic",
    [CB_RBF_KERNEL_LINEAR] = "linear",
    [CB_RBF_KERNEL_GAUSSIAN] = "gaussian",
};

const char *cb_solver_kind_name(cb_solver_kind kind)
{
    return kind > _CB_SOLVER_KIND_DEFAULT && kind < _CB_SOLVER_KIND_COUNT ? kinds[kind].name : NULL;
}

cb_result cb_solver_kind_from_name(const char *name, cb_solver_kind *out)
{
    if (name == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        if (strcmp(name, kinds[k].name) == 0) {
            *out = (cb_solver_kind)k;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

const char *cb_rbf_kernel_name(cb_rbf_kernel kernel)
{
    return kernel > _CB_RBF_KERNEL_DEFAULT && kernel < CB_RBF_KERNEL_COUNT ? kernel_names[kernel]
                                                                           : NULL;
}

cb_result cb_rbf_kernel_from_name(const char *name, cb_rbf_kernel *out)
{
    if (name == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (int k = 1; k < CB_RBF_KERNEL_COUNT; ++k) {
        if (strcmp(name, kernel_names[k]) == 0) {
            *out = (cb_rbf_kernel)k;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

/* ------------------------------------------------------------------------------------------ */
/* Desc defaults and validation                                                               */

/* The one place where desc defaults are resolved (STYLE.md section 4). */
static cb_solver_desc resolve_desc(const cb_solver_desc *desc)
{
    cb_solver_desc d = desc != NULL ? *desc : (cb_solver_desc){0};
    if (d.kind == _CB_SOLVER_KIND_DEFAULT) {
        d.kind = CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D;
    }
    if (d.dimension == 0) {
        d.dimension = d.kind == CB_SOLVER_KIND_LINEAR_1D ? 1 : 2;
    }
    if (d.idw_power == 0.0f) {
        d.idw_power = 2.0f;
    }
    if (d.knn_k == 0) {
        d.knn_k = 4;
    }
    if (d.rbf_kernel == _CB_RBF_KERNEL_DEFAULT) {
        d.rbf_kernel = CB_RBF_KERNEL_THIN_PLATE;
    }
    return d;
}

cb_solver_desc cb_solver_query_desc(const cb_solver_desc *desc)
{
    return resolve_desc(desc);
}

static bool takes_dimension(cb_solver_kind kind, uint32_t dim)
{
    switch (kind) {
    case CB_SOLVER_KIND_LINEAR_1D:
        return dim == 1;
    case CB_SOLVER_KIND_IDW:
    case CB_SOLVER_KIND_KNN_IDW:
    case CB_SOLVER_KIND_RBF:
        return dim == 1 || dim == 2;
    case CB_SOLVER_KIND_DIRECT:
        return true;
    default:
        return dim == 2;
    }
}

static cb_result check_options(const cb_solver_desc *d, cb_error *err)
{
    if (d->kind <= _CB_SOLVER_KIND_DEFAULT || d->kind >= _CB_SOLVER_KIND_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "kind: %d is not a solver kind",
                            (int)d->kind);
    }
    if (!takes_dimension(d->kind, d->dimension)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "dimension: %s does not take %u",
                            kinds[d->kind].name, d->dimension);
    }
    if (d->node_count == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW, "node_count: a blend space needs a node");
    }
    if (d->node_count > CB_SOLVER_MAX_NODES) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "node_count: %u is above the limit of %d",
                            d->node_count, CB_SOLVER_MAX_NODES);
    }
    if (!isfinite(d->idw_power)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "idw_power is not finite");
    }
    if (!(d->idw_power > 0.0f && d->idw_power <= 64.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "idw_power: %g is outside (0, 64]",
                            (double)d->idw_power);
    }
    if (d->knn_k > CB_SOLVER_MAX_KNN_K) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "knn_k: %u is outside [1, %d]", d->knn_k,
                            CB_SOLVER_MAX_KNN_K);
    }
    if (d->rbf_kernel <= _CB_RBF_KERNEL_DEFAULT || d->rbf_kernel >= CB_RBF_KERNEL_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "rbf_kernel: %d is not a kernel",
                            (int)d->rbf_kernel);
    }
    if (!isfinite(d->rbf_epsilon)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "rbf_epsilon is not finite");
    }
    if (d->rbf_epsilon < 0.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "rbf_epsilon: %g is negative",
                            (double)d->rbf_epsilon);
    }
    return CB_OK;
}

/* Distinct values of one coordinate closer than CB_SOLVER_MIN_SPACING: the 1D hat weights
 * multiply by the reciprocal of each spacing, which overflows to inf below about 3e-39 (and
 * 0 * inf is NaN at the knot itself). */
static cb_result check_spacing(const cb_solver_desc *d, cb_error *err)
{
    for (uint32_t k = 0; k < d->dimension; ++k) {
        for (uint32_t i = 0; i < d->node_count; ++i) {
            float a = d->nodes[(size_t)i * d->dimension + k];
            for (uint32_t j = i + 1; j < d->node_count; ++j) {
                float gap = fabsf(d->nodes[(size_t)j * d->dimension + k] - a);
                if (gap > 0.0f && gap < CB_SOLVER_MIN_SPACING) {
                    return cb_error_set(err, CB_ERR_DUPLICATE,
                                        "nodes[%u] and nodes[%u] are %g apart in %s: distinct "
                                        "values must be at least %g apart",
                                        i, j, (double)gap,
                                        d->dimension == 1 ? "t" : (k == 0 ? "x" : "y"),
                                        (double)CB_SOLVER_MIN_SPACING);
                }
            }
        }
    }
    return CB_OK;
}

/* Every coordinate finite and within CB_SOLVER_NODE_LIMIT. */
static cb_result check_coordinates(const cb_solver_desc *d, cb_error *err)
{
    static const char axis[2] = {'x', 'y'};
    for (uint32_t i = 0; i < d->node_count; ++i) {
        for (uint32_t k = 0; k < d->dimension; ++k) {
            float v = d->nodes[(size_t)i * d->dimension + k];
            if (!isfinite(v)) {
                return cb_error_set(err, CB_ERR_NOT_FINITE, "nodes[%u].%c is %g", i,
                                    d->dimension == 1 ? 't' : axis[k], (double)v);
            }
            if (fabsf(v) > CB_SOLVER_NODE_LIMIT) {
                return cb_error_set(
                    err, CB_ERR_INVALID_ARGUMENT, "nodes[%u].%c = %g is beyond the limit %g", i,
                    d->dimension == 1 ? 't' : axis[k], (double)v, (double)CB_SOLVER_NODE_LIMIT);
            }
        }
    }
    return CB_OK;
}

/* The squared distance below which two nodes are duplicates: 1e-6 of the bounding-box diagonal
 * or of the largest coordinate's magnitude, and never below CB_SOLVER_MIN_SPACING. */
static double duplicate_distance2(const cb_solver_desc *d)
{
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (uint32_t i = 0; i < d->node_count; ++i) {
        double p[2];
        cb_solver_node(d, d->dimension, i, &p[0], &p[1]);
        /* Comparisons, not fmin/fmax (the nodes are finite here): gcc 12.2 for aarch64 stops
         * with an internal error vectorizing an fmin/fmax reduction at -O3. */
        for (int k = 0; k < 2; ++k) {
            lo[k] = p[k] < lo[k] ? p[k] : lo[k];
            hi[k] = p[k] > hi[k] ? p[k] : hi[k];
        }
    }
    double diag2 = (hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]);
    double big = fmax(fmax(fabs(lo[0]), fabs(hi[0])), fmax(fabs(lo[1]), fabs(hi[1])));
    double min_spacing = CB_SOLVER_MIN_SPACING;
    return fmax(1e-12 * fmax(diag2, big * big), min_spacing * min_spacing);
}

/* Nodes closer than 1e-6 of the bounding-box diagonal, or of the largest coordinate's
 * magnitude, are duplicates: float coordinates cannot tell them apart reliably (nodes a few
 * ulps apart near 1.75 gave natural-neighbour weights summing to 1.1), and every method
 * divides by their distance somewhere, which must stay above CB_SOLVER_MIN_SPACING. */
static cb_result check_duplicates(const cb_solver_desc *d, cb_error *err)
{
    double min2 = duplicate_distance2(d);
    for (uint32_t i = 0; i < d->node_count; ++i) {
        double xi, yi;
        cb_solver_node(d, d->dimension, i, &xi, &yi);
        for (uint32_t j = i + 1; j < d->node_count; ++j) {
            double xj, yj;
            cb_solver_node(d, d->dimension, j, &xj, &yj);
            double d2 = (xi - xj) * (xi - xj) + (yi - yj) * (yi - yj);
            if (d2 < min2) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "nodes[%u] and nodes[%u] are %g apart: too close to tell "
                                    "apart (at least %g here)",
                                    i, j, sqrt(d2), sqrt(min2));
            }
        }
    }
    return CB_OK;
}

static cb_result check_nodes(const cb_solver_desc *d, cb_error *err)
{
    if (d->kind == CB_SOLVER_KIND_DIRECT) {
        return CB_OK;
    }
    if (d->nodes == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "nodes is NULL");
    }
    cb_result r = check_coordinates(d, err);
    if (r != CB_OK) {
        return r;
    }
    /* Equal 1D thresholds form documented steps, and bilinear grids share their lines and
     * check their own order: only spacings too small to invert are refused there. */
    if (d->kind == CB_SOLVER_KIND_LINEAR_1D || d->kind == CB_SOLVER_KIND_BILINEAR_2D) {
        return check_spacing(d, err);
    }
    return check_duplicates(d, err);
}

cb_result cb_solver_data_alloc(cb_solver *s, size_t bytes, cb_error *err)
{
    s->data = cb_alloc_zeroed(&s->allocator, bytes, 64);
    if (s->data == NULL && bytes > 0) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes",
                            kinds[s->kind].name, bytes);
    }
    s->data_bytes = bytes;
    return CB_OK;
}

cb_result cb_solver_tables(cb_solver *s, size_t size, cb_plan_fn plan, const cb_plan_sizes *n,
                           void *scratch, cb_error *err)
{
    cb_layout l = {0};
    cb_layout_take(&l, size);
    plan(&l, scratch, n);
    cb_result r = cb_solver_data_alloc(s, l.size, err);
    if (r != CB_OK) {
        return r;
    }
    l = (cb_layout){s->data, 0};
    plan(&l, cb_layout_take(&l, size), n);
    return CB_OK;
}

cb_result cb_solver_create(const cb_solver_desc *desc, cb_solver **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "%s is NULL", desc == NULL ? "desc" : "out");
    }
    if (desc->_start_canary != 0 || desc->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "desc canary is not 0 (zero-initialise the desc)");
    }
    cb_result r = cb_allocator_check(&desc->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    cb_solver_desc d = resolve_desc(desc);
    if ((r = check_options(&d, err)) != CB_OK || (r = check_nodes(&d, err)) != CB_OK) {
        return r;
    }
    cb_solver *s = cb_alloc_zeroed(&d.allocator, sizeof *s, _Alignof(cb_solver));
    if (s == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cannot allocate the solver");
    }
    s->kind = d.kind;
    s->node_count = d.node_count;
    s->dimension = d.kind == CB_SOLVER_KIND_DIRECT ? 0 : d.dimension;
    s->param_count = d.kind == CB_SOLVER_KIND_DIRECT ? d.node_count : d.dimension;
    s->ops = kinds[d.kind].ops;
    s->allocator = d.allocator;
    if (d.kind != CB_SOLVER_KIND_DIRECT) {
        float factor = d.kind == CB_SOLVER_KIND_RBF ? CB_SOLVER_FAR_SIZES_RBF : CB_SOLVER_FAR_SIZES;
        cb_solver_far_limits(d.nodes, d.node_count, d.dimension, factor, &s->far_cx, &s->far_cy,
                             &s->far);
    }
    r = s->ops->create(s, &d, err);
    if (r != CB_OK) {
        cb_solver_destroy(s);
        return r;
    }
    *out = s;
    return CB_OK;
}

void cb_solver_destroy(cb_solver *s)
{
    if (s == NULL) {
        return;
    }
    cb_allocator a = s->allocator;
    cb_free(&a, s->data, s->data_bytes);
    cb_free(&a, s, sizeof *s);
}

cb_solver_kind cb_solver_query_kind(const cb_solver *s)
{
    return s != NULL ? s->kind : _CB_SOLVER_KIND_DEFAULT;
}

uint32_t cb_solver_node_count(const cb_solver *s)
{
    return s != NULL ? s->node_count : 0;
}

uint32_t cb_solver_param_count(const cb_solver *s)
{
    return s != NULL ? s->param_count : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Evaluation                                                                                 */

static cb_result check_eval(const cb_solver *s, const float *const *params, size_t count,
                            const float *weights, size_t stride)
{
    if (s == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (count == 0) {
        return CB_OK;
    }
    if (params == NULL || weights == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t k = 0; k < s->param_count; ++k) {
        if (params[k] == NULL) {
            return CB_ERR_NULL_ARGUMENT;
        }
    }
    if (stride < count || stride > SIZE_MAX / s->node_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    return CB_OK;
}

/* Sanitizes W queries in place: lanes with a non-finite coordinate go to the origin; lanes
 * farther than s->far from the layout's centre move towards it, c + (q - c) far / |q - c|,
 * computed only in those lanes so that the others keep their exact bits. Returns the
 * non-finite lanes' bits. */
static unsigned sanitize_block(const cb_solver *s, cb_vf *x, cb_vf *y)
{
    cb_vm ok = cb_vm_and(cb_vf_is_finite(*x), cb_vf_is_finite(*y));
    *x = cb_vf_select(ok, *x, cb_vf_zero());
    *y = cb_vf_select(ok, *y, cb_vf_zero());
    cb_vf cx = cb_vf_set1(s->far_cx), cy = cb_vf_set1(s->far_cy);
    cb_vf dx = cb_vf_sub(*x, cx), dy = cb_vf_sub(*y, cy);
    cb_vf m = cb_vf_max(cb_vf_abs(dx), cb_vf_abs(dy));
    cb_vm far = cb_vf_gt(m, cb_vf_set1(s->far));
    if (cb_vm_any(far)) {
        cb_vf scale = cb_vf_div(cb_vf_set1(s->far), cb_vf_select(far, m, cb_vf_set1(1.0f)));
        *x = cb_vf_select(far, cb_vf_fmadd(dx, scale, cx), *x);
        *y = cb_vf_select(far, cb_vf_fmadd(dy, scale, cy), *y);
    }
    return ~cb_vm_bits(ok) & CB_VM_ALL_BITS;
}

static bool sanitize_one(const cb_solver *s, const float *params, float q[2])
{
    if (s->kind == CB_SOLVER_KIND_DIRECT) {
        for (uint32_t k = 0; k < s->param_count; ++k) {
            if (!isfinite(params[k])) {
                return false;
            }
        }
        return true;
    }
    q[0] = params[0];
    q[1] = s->dimension == 2 ? params[1] : 0.0f;
    /* As sanitize_block, operation for operation: a non-finite query becomes the origin, which
     * a layout far from the origin then pulls in like any far query. */
    bool finite = isfinite(q[0]) && isfinite(q[1]);
    if (!finite) {
        q[0] = q[1] = 0.0f;
    }
    float dx = q[0] - s->far_cx, dy = q[1] - s->far_cy;
    float m = fmaxf(fabsf(dx), fabsf(dy));
    if (m > s->far) {
        float scale = s->far / m;
        q[0] = dx * scale + s->far_cx;
        q[1] = dy * scale + s->far_cy;
    }
    return finite;
}

static unsigned popcount(unsigned bits)
{
    unsigned n = 0;
    for (; bits != 0; bits &= bits - 1) {
        ++n;
    }
    return n;
}

/* W queries from the columns at index i (full block, unaligned loads) into rows at out. */
static unsigned run_block(const cb_solver *s, const float *const *params, size_t i, float *out,
                          size_t stride)
{
    cb_block_in in = {0};
    if (s->kind == CB_SOLVER_KIND_DIRECT) {
        const float *cols[CB_SOLVER_MAX_NODES];
        cb_vm ok = cb_vf_eq(cb_vf_zero(), cb_vf_zero());
        for (uint32_t k = 0; k < s->param_count; ++k) {
            cols[k] = params[k] + i;
            ok = cb_vm_and(ok, cb_vf_is_finite(cb_vf_loadu(cols[k])));
        }
        in.finite = ok;
        in.cols = cols;
        s->ops->block(s, &in, out, stride);
        return ~cb_vm_bits(ok) & CB_VM_ALL_BITS;
    }
    in.x = cb_vf_loadu(params[0] + i);
    in.y = s->dimension == 2 ? cb_vf_loadu(params[1] + i) : cb_vf_zero();
    unsigned bad = sanitize_block(s, &in.x, &in.y);
    s->ops->block(s, &in, out, stride);
    return bad;
}

/* The last n < W queries: copied into zero-padded stage columns, evaluated into stage rows,
 * and the first n lanes of each row copied out. Padding lanes hold the query 0, which is
 * finite, so they never count as non-finite. */
static unsigned run_tail(const cb_solver *s, const float *const *params, size_t i, size_t n,
                         float *out, size_t stride)
{
    CB_VF_ALIGNED float stage[CB_SOLVER_MAX_NODES * CB_W];
    CB_VF_ALIGNED float cols[2][CB_W];
    const float *staged[CB_SOLVER_MAX_NODES];
    unsigned bad;
    if (s->kind == CB_SOLVER_KIND_DIRECT) {
        /* DIRECT reads parameter k from row k before writing weight k there. */
        for (uint32_t k = 0; k < s->param_count; ++k) {
            float *row = stage + (size_t)k * CB_W;
            for (size_t l = 0; l < CB_W; ++l) {
                row[l] = l < n ? params[k][i + l] : 0.0f;
            }
            staged[k] = row;
        }
        bad = run_block(s, staged, 0, stage, CB_W);
    } else {
        for (uint32_t k = 0; k < s->dimension; ++k) {
            for (size_t l = 0; l < CB_W; ++l) {
                cols[k][l] = l < n ? params[k][i + l] : 0.0f;
            }
            staged[k] = cols[k];
        }
        bad = run_block(s, staged, 0, stage, CB_W);
    }
    for (uint32_t k = 0; k < s->node_count; ++k) {
        memcpy(out + (size_t)k * stride, stage + (size_t)k * CB_W, n * sizeof(float));
    }
    return bad;
}

size_t cb_solver_evaluate_unchecked(const cb_solver *s, const float *const *params, size_t count,
                                    size_t stride, float *weights)
{
    CB_ASSERT(check_eval(s, params, count, weights, stride) == CB_OK);
    size_t bad = 0, i = 0;
    for (; i + CB_W <= count; i += CB_W) {
        bad += popcount(run_block(s, params, i, weights + i, stride));
    }
    if (i < count) {
        bad += popcount(run_tail(s, params, i, count - i, weights + i, stride));
    }
    return bad;
}

/* The public entry points: checked, then the unchecked kernel. */
static cb_result evaluate_checked(size_t (*kernel)(const cb_solver *, const float *const *, size_t,
                                                   size_t, float *),
                                  const cb_solver *s, const float *const *params, size_t count,
                                  size_t stride, float *weights, size_t *nonfinite_count)
{
    cb_result r = check_eval(s, params, count, weights, stride);
    if (r != CB_OK) {
        return r;
    }
    size_t bad = count > 0 ? kernel(s, params, count, stride, weights) : 0;
    if (nonfinite_count != NULL) {
        *nonfinite_count = bad;
    }
    return CB_OK;
}

cb_result cb_solver_evaluate(const cb_solver *s, const float *const *params, size_t count,
                             size_t stride, float *weights, size_t *nonfinite_count)
{
    return evaluate_checked(cb_solver_evaluate_unchecked, s, params, count, stride, weights,
                            nonfinite_count);
}

/* The scalar path of one query into out[0..M). */
static bool eval_one(const cb_solver *s, const float *params, float *out)
{
    float q[2];
    bool ok = sanitize_one(s, params, q);
    if (s->kind == CB_SOLVER_KIND_DIRECT) {
        if (!ok) {
            memset(out, 0, s->node_count * sizeof(float));
        } else {
            s->ops->one(s, params, out);
        }
    } else {
        s->ops->one(s, q, out);
    }
    return ok;
}

size_t cb_solver_evaluate_unchecked_ref(const cb_solver *s, const float *const *params,
                                        size_t count, size_t stride, float *weights)
{
    float q[CB_SOLVER_MAX_NODES], w[CB_SOLVER_MAX_NODES];
    size_t bad = 0;
    for (size_t c = 0; c < count; ++c) {
        for (uint32_t k = 0; k < s->param_count; ++k) {
            q[k] = params[k][c];
        }
        bad += !eval_one(s, q, w);
        for (uint32_t k = 0; k < s->node_count; ++k) {
            weights[(size_t)k * stride + c] = w[k];
        }
    }
    return bad;
}

cb_result cb_solver_evaluate_ref(const cb_solver *s, const float *const *params, size_t count,
                                 size_t stride, float *weights, size_t *nonfinite_count)
{
    return evaluate_checked(cb_solver_evaluate_unchecked_ref, s, params, count, stride, weights,
                            nonfinite_count);
}

cb_result cb_solver_evaluate_one(const cb_solver *s, const float *params, float *weights,
                                 bool *nonfinite)
{
    if (s == NULL || params == NULL || weights == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    bool ok = eval_one(s, params, weights);
    if (nonfinite != NULL) {
        *nonfinite = !ok;
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The job form                                                                               */

cb_result cb_solver_job_validate(const cb_solver_job *job, cb_error *err)
{
    if (job == NULL || job->solver == NULL || job->params == NULL || job->weights.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "solver job: %s is NULL",
                            job == NULL           ? "job"
                            : job->solver == NULL ? "solver"
                            : job->params == NULL ? "params"
                                                  : "weights.ptr");
    }
    const cb_solver *s = job->solver;
    if (job->param_count != s->param_count) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "solver job: param_count %u, the solver takes %u parameters",
                            job->param_count, s->param_count);
    }
    for (uint32_t k = 0; k < job->param_count; ++k) {
        if (job->params[k].ptr == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "solver job: params[%u].ptr is NULL", k);
        }
        if (job->params[k].count < job->count) {
            return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                                "solver job: params[%u] has %zu floats, needs %zu", k,
                                job->params[k].count, job->count);
        }
    }
    size_t stride = job->stride != 0 ? job->stride : job->count;
    if (stride < job->count ||
        (stride > 0 && s->node_count - 1 > (SIZE_MAX - job->count) / stride)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "solver job: stride %zu is below count %zu or overflows", stride,
                            job->count);
    }
    size_t need = (size_t)(s->node_count - 1) * stride + job->count;
    if (job->weights.count < need) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "solver job: weights has %zu floats, needs %zu", job->weights.count,
                            need);
    }
    return CB_OK;
}

cb_result cb_solver_job_run(const cb_solver_job *job, cb_error *err)
{
    cb_result r = cb_solver_job_validate(job, err);
    if (r != CB_OK) {
        return r;
    }
    const float *cols[CB_SOLVER_MAX_NODES];
    for (uint32_t k = 0; k < job->param_count; ++k) {
        cols[k] = job->params[k].ptr;
    }
    size_t stride = job->stride != 0 ? job->stride : job->count;
    size_t bad = job->count > 0 ? cb_solver_evaluate_unchecked(job->solver, cols, job->count,
                                                               stride, job->weights.ptr)
                                : 0;
    if (job->nonfinite_count != NULL) {
        *job->nonfinite_count = bad;
    }
    return CB_OK;
}
