/* rbf: radial basis function interpolation of the node indicators ("cardinal functions").
 *
 * The interpolant of values f_j at the nodes is s(q) = sum_j c_j phi(|q - p_j|) + pi(q), pi a
 * polynomial of degree <= 1, with the side conditions sum_j c_j pi_k(p_j) = 0 (the standard
 * augmented system, e.g. Wendland, "Scattered Data Approximation", 2005, chapter 8):
 *     [ Phi  P ] [c]   [f]
 *     [ P^T  0 ] [d] = [0]
 * Node i's weight is the interpolant of f = e_i, i.e. w_i(q) = sum_k (A^-1)_ik b_k(q) with
 * b(q) = (phi(|q - p_0|), ..., phi(|q - p_{M-1}|), 1, x, y). The inverse is computed once at
 * create (double, Gauss-Jordan with partial pivoting); evaluation is M kernel values and an
 * M x (M + 3) matrix-vector product per query.
 *
 * Because constants and linear functions are reproduced exactly, the weights sum to 1 and
 * sum_i w_i p_i = q. They are not bounded, though (cardinal functions oscillate), so each is
 * clamped to [0, 1] and the rest renormalized; the unclamped sum is 1, so at least one weight
 * is >= 1/M and the renormalization never divides by 0.
 *
 * The polynomial uses coordinates centred on the nodes' centroid and scaled by their extent
 * (better conditioned, the same interpolant). Collinear layouts (and 1D ones) use 1 and the
 * coordinate along their line, a single node the constant alone: with a full linear term the
 * system would be singular there. */
#include <math.h>
#include <string.h>

#include "simd/vmath.h"
#include "solvers/solver_impl.h"

typedef struct rbf {
    cb_rbf_kernel kernel;
    float neg_eps2;            /* Gaussian: -epsilon^2 */
    uint32_t poly;             /* polynomial terms: 1, 2 or 3 */
    float px[3], py[3], p0[3]; /* term k (k >= 1) = px x + py y + p0 */
    float *x, *y;              /* nodes */
    float *coef;               /* (M + poly) rows of M: coef[k * M + i] = (A^-1)_ik */
    float *uniform;
} rbf;

static void plan(cb_layout *l, void *tables, const cb_plan_sizes *n)
{
    rbf *d = tables;
    d->x = cb_layout_take(l, n->nodes * sizeof(float));
    d->y = cb_layout_take(l, n->nodes * sizeof(float));
    d->coef = cb_layout_take(l, (size_t)n->rows * n->nodes * sizeof(float));
    d->uniform = cb_layout_take(l, n->nodes * sizeof(float));
}

static double kernel_d(cb_rbf_kernel k, double r2, double eps2)
{
    switch (k) {
    case CB_RBF_KERNEL_THIN_PLATE:
        return r2 > 0.0 ? 0.5 * r2 * log(r2) : 0.0;
    case CB_RBF_KERNEL_CUBIC:
        return r2 * sqrt(r2);
    case CB_RBF_KERNEL_LINEAR:
        return sqrt(r2);
    default:
        return exp(-eps2 * r2);
    }
}

/* Inverts the n x n matrix a in place (Gauss-Jordan, partial pivoting); work holds n * n
 * doubles. Returns false when a pivot is negligible against the matrix's scale. */
static bool invert(double *a, double *work, uint32_t n)
{
    double scale = 0.0;
    for (size_t i = 0; i < (size_t)n * n; ++i) {
        scale = fmax(scale, fabs(a[i]));
        work[i] = 0.0;
    }
    for (uint32_t i = 0; i < n; ++i) {
        work[(size_t)i * n + i] = 1.0;
    }
    for (uint32_t c = 0; c < n; ++c) {
        uint32_t piv = c;
        for (uint32_t r = c + 1; r < n; ++r) {
            if (fabs(a[(size_t)r * n + c]) > fabs(a[(size_t)piv * n + c])) {
                piv = r;
            }
        }
        double pv = a[(size_t)piv * n + c];
        if (!(fabs(pv) > 1e-12 * scale)) {
            return false;
        }
        if (piv != c) {
            for (uint32_t k = 0; k < n; ++k) {
                double t = a[(size_t)c * n + k];
                a[(size_t)c * n + k] = a[(size_t)piv * n + k], a[(size_t)piv * n + k] = t;
                t = work[(size_t)c * n + k];
                work[(size_t)c * n + k] = work[(size_t)piv * n + k], work[(size_t)piv * n + k] = t;
            }
        }
        for (uint32_t k = 0; k < n; ++k) {
            a[(size_t)c * n + k] /= pv;
            work[(size_t)c * n + k] /= pv;
        }
        for (uint32_t r = 0; r < n; ++r) {
            double f = a[(size_t)r * n + c];
            if (r == c || f == 0.0) {
                continue;
            }
            for (uint32_t k = 0; k < n; ++k) {
                a[(size_t)r * n + k] -= f * a[(size_t)c * n + k];
                work[(size_t)r * n + k] -= f * work[(size_t)c * n + k];
            }
        }
    }
    return true;
}

/* The polynomial terms for these nodes: 1, and 0, 1 or 2 linear functionals. */
static void choose_polynomial(rbf *d, const double (*p)[2], uint32_t m)
{
    double cx = 0.0, cy = 0.0;
    for (uint32_t i = 0; i < m; ++i) {
        cx += p[i][0] / m, cy += p[i][1] / m;
    }
    double ext = 0.0;
    for (uint32_t i = 0; i < m; ++i) {
        ext = fmax(ext, fmax(fabs(p[i][0] - cx), fabs(p[i][1] - cy)));
    }
    d->poly = 1;
    if (m == 1) {
        return;
    }
    double sc = 1.0 / ext;
    bool collinear = true;
    for (uint32_t i = 2; i < m && collinear; ++i) {
        collinear = cb_orient2d_exact(p[0], p[1], p[i]) == 0;
    }
    if (collinear) {
        double dx = p[1][0] - p[0][0], dy = p[1][1] - p[0][1], len = hypot(dx, dy);
        dx /= len, dy /= len;
        d->poly = 2;
        d->px[1] = (float)(dx * sc), d->py[1] = (float)(dy * sc);
        d->p0[1] = (float)(-(dx * cx + dy * cy) * sc);
        return;
    }
    d->poly = 3;
    d->px[1] = (float)sc, d->py[1] = 0.0f, d->p0[1] = (float)(-cx * sc);
    d->px[2] = 0.0f, d->py[2] = (float)sc, d->p0[2] = (float)(-cy * sc);
}

/* The kernel's default epsilon: 1 over the mean distance from a node to its nearest other. */
static double default_epsilon(const double (*p)[2], uint32_t m)
{
    double mean = 0.0;
    for (uint32_t i = 0; i < m; ++i) {
        double best = INFINITY;
        for (uint32_t j = 0; j < m; ++j) {
            if (j != i) {
                best = fmin(best, hypot(p[i][0] - p[j][0], p[i][1] - p[j][1]));
            }
        }
        mean += best / m;
    }
    return 1.0 / mean;
}

/* The n x n interpolation system (a, zeroed by the caller): the kernel between every pair of
 * the m nodes, bordered by the polynomial's terms at each node. */
static void fill_system(double *a, const double (*p)[2], uint32_t m, uint32_t n, const rbf *t,
                        double eps2)
{
    for (uint32_t i = 0; i < m; ++i) {
        for (uint32_t j = 0; j < m; ++j) {
            double dx = p[i][0] - p[j][0], dy = p[i][1] - p[j][1];
            a[(size_t)i * n + j] = kernel_d(t->kernel, dx * dx + dy * dy, eps2);
        }
        for (uint32_t k = 0; k < t->poly; ++k) {
            double b = k == 0 ? 1.0 : t->px[k] * p[i][0] + t->py[k] * p[i][1] + t->p0[k];
            a[(size_t)i * n + m + k] = a[(size_t)(m + k) * n + i] = b;
        }
    }
}

/* The solver's tables from the template t and the system's inverse: the nodes, the
 * coefficients (node-major rows of n), the even fallback. */
static cb_result store_tables(cb_solver *s, rbf t, const double (*p)[2], uint32_t m, uint32_t n,
                              const double *inv, double eps2, cb_error *err)
{
    cb_plan_sizes sz = {.nodes = m, .rows = n};
    rbf scratch;
    cb_result r = cb_solver_tables(s, sizeof scratch, plan, &sz, &scratch, err);
    if (r != CB_OK) {
        return r;
    }
    rbf *d = s->data;
    t.x = d->x, t.y = d->y, t.coef = d->coef, t.uniform = d->uniform;
    *d = t;
    d->neg_eps2 = (float)-eps2;
    for (uint32_t i = 0; i < m; ++i) {
        d->x[i] = (float)p[i][0];
        d->y[i] = (float)p[i][1];
        d->uniform[i] = 1.0f / (float)m;
        for (uint32_t k = 0; k < n; ++k) {
            d->coef[(size_t)k * m + i] = (float)inv[(size_t)i * n + k];
        }
    }
    return CB_OK;
}

static cb_result create(cb_solver *s, const cb_solver_desc *desc, cb_error *err)
{
    uint32_t m = desc->node_count;
    double p[CB_SOLVER_MAX_NODES][2];
    for (uint32_t i = 0; i < m; ++i) {
        cb_solver_node(desc, desc->dimension, i, &p[i][0], &p[i][1]);
    }
    const double(*nodes)[2] = (const double(*)[2])p;
    rbf tmpl = {.kernel = desc->rbf_kernel};
    choose_polynomial(&tmpl, nodes, m);
    uint32_t n = m + tmpl.poly;
    double eps = desc->rbf_epsilon;
    if (eps == 0.0 && m > 1) {
        eps = default_epsilon(nodes, m);
    }
    double eps2 = eps * eps;
    size_t bytes = (size_t)n * n * sizeof(double);
    double *a = cb_alloc(&s->allocator, bytes, 8), *inv = cb_alloc(&s->allocator, bytes, 8);
    if (a == NULL || inv == NULL) {
        cb_free(&s->allocator, a, bytes);
        cb_free(&s->allocator, inv, bytes);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "rbf: cannot allocate the system");
    }
    memset(a, 0, bytes);
    fill_system(a, nodes, m, n, &tmpl, eps2);
    cb_result r = CB_OK;
    if (!invert(a, inv, n)) {
        r = cb_error_set(err, CB_ERR_DEGENERATE,
                         "rbf: the interpolation system is singular for these nodes and kernel");
    } else {
        r = store_tables(s, tmpl, nodes, m, n, inv, eps2, err);
    }
    cb_free(&s->allocator, a, bytes);
    cb_free(&s->allocator, inv, bytes);
    return r;
}

/* phi from the squared distance. Thin plate: r^2 ln r = r^2 ln(r^2) / 2, 0 below FLT_MIN
 * (where ln would give -inf times 0). */
CB_INLINE cb_vf kernel_v(const rbf *d, cb_vf r2)
{
    switch (d->kernel) {
    case CB_RBF_KERNEL_THIN_PLATE: {
        cb_vf v = cb_vf_mul(cb_vf_mul(cb_vf_set1(0.5f), r2), cb_vf_log(r2));
        return cb_vf_select(cb_vf_ge(r2, cb_vf_set1(1.17549435e-38f)), v, cb_vf_zero());
    }
    case CB_RBF_KERNEL_CUBIC:
        return cb_vf_mul(r2, cb_vf_sqrt(r2));
    case CB_RBF_KERNEL_LINEAR:
        return cb_vf_sqrt(r2);
    default:
        return cb_vf_exp(cb_vf_mul(cb_vf_set1(d->neg_eps2), r2));
    }
}

static void block(const cb_solver *s, const cb_block_in *in, float *out, size_t ostride)
{
    const rbf *d = s->data;
    uint32_t m = s->node_count;
    /* Polynomial part first: it initializes the accumulators in the output rows. */
    cb_vf b1 = cb_vf_zero(), b2 = cb_vf_zero();
    if (d->poly > 1) {
        b1 = cb_vf_fmadd(cb_vf_set1(d->px[1]), in->x,
                         cb_vf_fmadd(cb_vf_set1(d->py[1]), in->y, cb_vf_set1(d->p0[1])));
    }
    if (d->poly > 2) {
        b2 = cb_vf_fmadd(cb_vf_set1(d->px[2]), in->x,
                         cb_vf_fmadd(cb_vf_set1(d->py[2]), in->y, cb_vf_set1(d->p0[2])));
    }
    /* Kernel values first (one exp or log per node), then each weight as one register
     * accumulation over them: M^2 fused operations on L1-resident data. */
    CB_VF_ALIGNED float phi[CB_SOLVER_MAX_NODES * CB_W];
    for (uint32_t j = 0; j < m; ++j) {
        cb_vf dx = cb_vf_sub(in->x, cb_vf_set1(d->x[j])),
              dy = cb_vf_sub(in->y, cb_vf_set1(d->y[j]));
        cb_vf_store(phi + j * CB_W, kernel_v(d, cb_vf_fmadd(dx, dx, cb_vf_mul(dy, dy))));
    }
    const float *c0 = d->coef + (size_t)m * m;
    for (uint32_t i = 0; i < m; ++i) {
        cb_vf acc = cb_vf_set1(c0[i]);
        if (d->poly > 1) {
            acc = cb_vf_fmadd(cb_vf_set1(c0[m + i]), b1, acc);
        }
        if (d->poly > 2) {
            acc = cb_vf_fmadd(cb_vf_set1(c0[2 * m + i]), b2, acc);
        }
        for (uint32_t j = 0; j < m; ++j) {
            acc = cb_vf_fmadd(cb_vf_set1(d->coef[(size_t)j * m + i]), cb_vf_load(phi + j * CB_W),
                              acc);
        }
        cb_vf_storeu(out + i * ostride, acc);
    }
    for (uint32_t i = 0; i < m; ++i) {
        float *row = out + i * ostride;
        cb_vf_storeu(row, cb_vf_clamp01(cb_vf_loadu(row)));
    }
    cb_normalize_block(out, ostride, m, d->uniform);
}

static float kernel_s(const rbf *d, float r2)
{
    switch (d->kernel) {
    case CB_RBF_KERNEL_THIN_PLATE:
        return r2 >= 1.17549435e-38f ? 0.5f * r2 * logf(r2) : 0.0f;
    case CB_RBF_KERNEL_CUBIC:
        return r2 * sqrtf(r2);
    case CB_RBF_KERNEL_LINEAR:
        return sqrtf(r2);
    default:
        return expf(d->neg_eps2 * r2);
    }
}

static void one(const cb_solver *s, const float *q, float *out)
{
    const rbf *d = s->data;
    uint32_t m = s->node_count;
    float b[3] = {1.0f, 0.0f, 0.0f};
    for (uint32_t k = 1; k < d->poly; ++k) {
        b[k] = d->px[k] * q[0] + d->py[k] * q[1] + d->p0[k];
    }
    const float *c0 = d->coef + (size_t)m * m;
    for (uint32_t i = 0; i < m; ++i) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < d->poly; ++k) {
            acc += c0[k * m + i] * b[k];
        }
        out[i] = acc;
    }
    for (uint32_t j = 0; j < m; ++j) {
        float dx = q[0] - d->x[j], dy = q[1] - d->y[j];
        float phi = kernel_s(d, dx * dx + dy * dy);
        const float *cj = d->coef + (size_t)j * m;
        for (uint32_t i = 0; i < m; ++i) {
            out[i] += cj[i] * phi;
        }
    }
    for (uint32_t i = 0; i < m; ++i) {
        out[i] = out[i] > 0.0f ? (out[i] < 1.0f ? out[i] : 1.0f) : 0.0f;
    }
    cb_normalize_one(out, m, d->uniform);
}

const cb_solver_ops cb_solver_ops_rbf = {create, block, one};
