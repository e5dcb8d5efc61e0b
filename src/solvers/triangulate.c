/* Delaunay triangulation of the (few, fixed) blend-space nodes, at create time.
 *
 * Predicates are exact. Blend spaces are full of degenerate layouts: eight directions on a
 * circle are co-circular, a grid is co-circular in every cell, forward/backward nodes are
 * collinear with the origin. With rounded predicates a triangulation of such a layout can come
 * out inconsistent (overlapping or missing triangles), so orientation and in-circle signs are
 * computed exactly with floating-point expansions (Shewchuk, "Adaptive Precision
 * Floating-Point Arithmetic and Fast Robust Geometric Predicates", Discrete & Computational
 * Geometry 18, 1997): every sum and product is kept as a list of non-overlapping doubles whose
 * sum is the exact value. Speed does not matter here (at most 128 nodes, once), so the plain
 * non-adaptive form is used.
 *
 * Algorithm: nodes are inserted in lexicographic (x, y) order, so every new node lies outside
 * the hull of the previous ones (or on the extension of a hull edge). It is joined to every
 * hull edge it sees strictly (orientation < 0), then Lawson flips restore the empty-circle
 * property. Co-circular quadruples (in-circle exactly 0) are not flipped, which is one of the
 * valid Delaunay choices. Collinear nodes never make zero-area triangles: an edge seen edge-on
 * is not joined. If all nodes are collinear, or within 1e-6 of the layout's diagonal from one
 * line, there are no triangles and the mesh records the line. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solver_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Expansion arithmetic                                                                       */

/* a + b = x + y exactly, with x = fl(a + b) (Knuth's two-sum: no condition on magnitudes). */
static void two_sum(double a, double b, double *x, double *y)
{
    double s = a + b;
    double bv = s - a;
    double av = s - bv;
    *x = s;
    *y = (a - av) + (b - bv);
}

/* a * b = x + y exactly: the fused multiply-add returns the rounding error of the product. */
static void two_prod(double a, double b, double *x, double *y)
{
    double p = a * b;
    *x = p;
    *y = fma(a, b, -p);
}

/* Removes zero components in place, keeping order; returns the new length. */
static int compress(double *h, int n)
{
    int m = 0;
    for (int i = 0; i < n; ++i) {
        if (h[i] != 0.0) {
            h[m++] = h[i];
        }
    }
    return m;
}

/* h += b for an expansion h of n components (room for n + 1); grow-expansion, in place. */
static int grow(double *h, int n, double b)
{
    double q = b;
    for (int i = 0; i < n; ++i) {
        two_sum(q, h[i], &q, &h[i]);
    }
    h[n] = q;
    return compress(h, n + 1);
}

/* h += f (room for hn + fn components). */
static int add(double *h, int hn, const double *f, int fn)
{
    for (int i = 0; i < fn; ++i) {
        hn = grow(h, hn, f[i]);
    }
    return hn;
}

/* h = e * b (room for 2 en components): scale-expansion. Summing each product's two parts into
 * the running expansion keeps it exact without Shewchuk's fast-two-sum ordering argument. */
static int scale(const double *e, int en, double b, double *h)
{
    int hn = 0;
    for (int i = 0; i < en; ++i) {
        double p, err;
        two_prod(e[i], b, &p, &err);
        hn = grow(h, hn, err);
        hn = grow(h, hn, p);
    }
    return hn;
}

enum { EXP_MAX = 1600 };

/* h = e * f; tmp holds 2 en components. */
static int mul(const double *e, int en, const double *f, int fn, double *h, double *tmp)
{
    int hn = 0;
    for (int j = 0; j < fn; ++j) {
        int tn = scale(e, en, f[j], tmp);
        hn = add(h, hn, tmp, tn);
    }
    return hn;
}

static void negate(double *h, int n)
{
    for (int i = 0; i < n; ++i) {
        h[i] = -h[i];
    }
}

/* The exact difference a - b as an expansion (at most 2 components). */
static int diff(double a, double b, double *h)
{
    two_sum(a, -b, &h[1], &h[0]);
    return compress(h, 2);
}

/* The sign of an expansion: its largest component is its last non-zero one. */
static int sign_of(const double *h, int n)
{
    return n == 0 ? 0 : h[n - 1] > 0.0 ? 1 : -1;
}

/* h = a * d - b * c for 2-component expansions (at most 32 components). */
static int cross2(const double *a, int an, const double *b, int bn, const double *c, int cn,
                  const double *d, int dn, double *h)
{
    double t1[32], t2[32], tmp[8];
    int n1 = mul(a, an, d, dn, t1, tmp);
    int n2 = mul(b, bn, c, cn, t2, tmp);
    negate(t2, n2);
    memcpy(h, t1, (size_t)n1 * sizeof(double));
    return add(h, n1, t2, n2);
}

int cb_orient2d_exact(const double a[2], const double b[2], const double c[2])
{
    double acx[2], acy[2], bcx[2], bcy[2], h[64];
    int nax = diff(a[0], c[0], acx), nay = diff(a[1], c[1], acy);
    int nbx = diff(b[0], c[0], bcx), nby = diff(b[1], c[1], bcy);
    int n = cross2(acx, nax, acy, nay, bcx, nbx, bcy, nby, h);
    return sign_of(h, n);
}

int cb_incircle_exact(const double a[2], const double b[2], const double c[2], const double d[2])
{
    const double *p[3] = {a, b, c};
    double dx[3][2], dy[3][2];
    int nx[3], ny[3];
    for (int k = 0; k < 3; ++k) {
        nx[k] = diff(p[k][0], d[0], dx[k]);
        ny[k] = diff(p[k][1], d[1], dy[k]);
    }
    double total[EXP_MAX];
    int tn = 0;
    for (int k = 0; k < 3; ++k) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        /* lift_k = dx_k^2 + dy_k^2; minor = dx_i dy_j - dy_i dx_j; term = lift_k * minor. */
        double lift[64], lx[32], ly[32], tmp[64], minor[64], term[EXP_MAX];
        int nlx = mul(dx[k], nx[k], dx[k], nx[k], lx, tmp);
        int nly = mul(dy[k], ny[k], dy[k], ny[k], ly, tmp);
        memcpy(lift, lx, (size_t)nlx * sizeof(double));
        int nl = add(lift, nlx, ly, nly);
        int nm = cross2(dx[i], nx[i], dy[i], ny[i], dx[j], nx[j], dy[j], ny[j], minor);
        int nt = mul(lift, nl, minor, nm, term, tmp);
        tn = add(total, tn, term, nt);
    }
    return sign_of(total, tn);
}

/* ------------------------------------------------------------------------------------------ */
/* Incremental construction                                                                   */

typedef struct builder {
    const double (*p)[2];
    uint32_t (*tri)[3];
    int32_t (*adj)[3];
    uint32_t count;
    uint32_t *hull_next; /* hull as a circular list: next vertex counter-clockwise */
    int32_t *stack;      /* flip stack: triangle indices whose edge opposite vertex 0 to check */
} builder;

static int orient(const builder *b, uint32_t i, uint32_t j, uint32_t k)
{
    return cb_orient2d_exact(b->p[i], b->p[j], b->p[k]);
}

/* Triangle t's local index of vertex v (v must be one of its vertices). */
static int local(const builder *b, int32_t t, uint32_t v)
{
    for (int k = 0; k < 3; ++k) {
        if (b->tri[t][k] == v) {
            return k;
        }
    }
    return -1;
}

/* Rotates triangle t so that vertex v is at index 0, keeping orientation and adjacency. */
static void rotate_to(builder *b, int32_t t, uint32_t v)
{
    while (b->tri[t][0] != v) {
        uint32_t v0 = b->tri[t][0];
        int32_t a0 = b->adj[t][0];
        b->tri[t][0] = b->tri[t][1], b->tri[t][1] = b->tri[t][2], b->tri[t][2] = v0;
        b->adj[t][0] = b->adj[t][1], b->adj[t][1] = b->adj[t][2], b->adj[t][2] = a0;
    }
}

/* The triangle holding the directed edge i -> j (i.e. j follows i counter-clockwise), with the
 * local index of the vertex opposite it; -1 when no triangle has it. */
static int32_t find_edge(const builder *b, uint32_t i, uint32_t j, int *opp)
{
    for (uint32_t t = 0; t < b->count; ++t) {
        for (int k = 0; k < 3; ++k) {
            if (b->tri[t][(k + 1) % 3] == i && b->tri[t][(k + 2) % 3] == j) {
                *opp = k;
                return (int32_t)t;
            }
        }
    }
    return -1;
}

static int32_t add_tri(builder *b, uint32_t v0, uint32_t v1, uint32_t v2)
{
    int32_t t = (int32_t)b->count++;
    b->tri[t][0] = v0, b->tri[t][1] = v1, b->tri[t][2] = v2;
    b->adj[t][0] = b->adj[t][1] = b->adj[t][2] = -1;
    return t;
}

/* Replaces t's neighbour reference from old to new. */
static void relink(builder *b, int32_t t, int32_t old, int32_t new_t)
{
    if (t < 0) {
        return;
    }
    for (int k = 0; k < 3; ++k) {
        if (b->adj[t][k] == old) {
            b->adj[t][k] = new_t;
        }
    }
}

/* Lawson flips from the stack. Each entry is a triangle whose vertex 0 is the inserted point p;
 * its edge opposite p is checked against the neighbour across it. */
static void flip_all(builder *b, int depth)
{
    while (depth > 0) {
        int32_t t = b->stack[--depth];
        int32_t o = b->adj[t][0];
        if (o < 0) {
            continue;
        }
        uint32_t p = b->tri[t][0], a = b->tri[t][1], c2 = b->tri[t][2];
        int ko = local(b, o, a);
        /* o holds the edge c2 -> a; its third vertex follows a. */
        uint32_t c = b->tri[o][(ko + 1) % 3];
        if (cb_incircle_exact(b->p[p], b->p[a], b->p[c2], b->p[c]) <= 0) {
            continue;
        }
        rotate_to(b, o, c); /* o = [c, c2, a]: adj[o][0] = t */
        int32_t n_bp = b->adj[t][1], n_pa = b->adj[t][2];
        int32_t n_ac = b->adj[o][1], n_cb = b->adj[o][2];
        /* t' = [p, a, c], o' = [p, c, c2]. */
        b->tri[t][0] = p, b->tri[t][1] = a, b->tri[t][2] = c;
        b->adj[t][0] = n_ac, b->adj[t][1] = o, b->adj[t][2] = n_pa;
        b->tri[o][0] = p, b->tri[o][1] = c, b->tri[o][2] = c2;
        b->adj[o][0] = n_cb, b->adj[o][1] = n_bp, b->adj[o][2] = t;
        relink(b, n_ac, o, t);
        relink(b, n_bp, t, o);
        b->stack[depth++] = t;
        b->stack[depth++] = o;
    }
}

static int cmp_xy(const void *a, const void *b, const double (*p)[2])
{
    const uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (p[i][0] != p[j][0]) {
        return p[i][0] < p[j][0] ? -1 : 1;
    }
    if (p[i][1] != p[j][1]) {
        return p[i][1] < p[j][1] ? -1 : 1;
    }
    return i < j ? -1 : i > j;
}

/* Insertion sort: n <= 128, and it needs no comparison context (qsort has none). */
static void sort_xy(uint32_t *order, uint32_t n, const double (*p)[2])
{
    for (uint32_t i = 1; i < n; ++i) {
        uint32_t v = order[i];
        uint32_t j = i;
        while (j > 0 && cmp_xy(&order[j - 1], &v, p) > 0) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = v;
    }
}

/* Joins node v, which lies outside the hull, to every hull edge it sees strictly.
 * hull_vertex is any vertex currently on the hull. */
static void insert_outside(builder *b, uint32_t v, uint32_t hull_vertex)
{
    /* The edges v sees form one contiguous chain of the convex hull: find one, then walk back
     * to the start of the chain (the list is singly linked, so predecessors are searched). */
    uint32_t u = hull_vertex;
    while (orient(b, u, b->hull_next[u], v) >= 0) {
        u = b->hull_next[u];
    }
    for (;;) {
        uint32_t prev = u;
        while (b->hull_next[prev] != u) {
            prev = b->hull_next[prev];
        }
        if (orient(b, prev, u, v) >= 0) {
            break;
        }
        u = prev;
    }
    uint32_t first = u;
    int depth = 0;
    int32_t last_new = -1;
    while (orient(b, u, b->hull_next[u], v) < 0) {
        uint32_t w = b->hull_next[u];
        int opp;
        int32_t owner = find_edge(b, u, w, &opp);
        /* [v, w, u]: the edge opposite v is w -> u, the hull edge seen from outside. */
        int32_t t = add_tri(b, v, w, u);
        b->adj[t][0] = owner;
        if (owner >= 0) {
            b->adj[owner][opp] = t;
        }
        if (last_new >= 0) {
            /* The previous new triangle [v, u, x] has the edge v -> u opposite its index 2;
             * this one has u -> v opposite its index 1. */
            b->adj[last_new][2] = t;
            b->adj[t][1] = last_new;
        }
        b->stack[depth++] = t;
        last_new = t;
        u = w;
    }
    /* The chain's inner vertices leave the hull: first -> v -> u. */
    b->hull_next[first] = v;
    b->hull_next[v] = u;
    flip_all(b, depth);
}

/* Nearly collinear layouts (every node within 1e-6 of the bounding-box diagonal from the line
 * through the two nodes farthest apart) interpolate along that line: triangles that thin would
 * be lost in float rounding at evaluation. Returns whether the layout is one, and then records
 * the line in the mesh. */
static bool record_near_line(const double (*p)[2], uint32_t n, cb_tri_mesh *mesh)
{
    uint32_t fa = 0, fb = 0;
    double far2 = -1.0, lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (uint32_t i = 0; i < n; ++i) {
        for (int c = 0; c < 2; ++c) {
            lo[c] = fmin(lo[c], p[i][c]), hi[c] = fmax(hi[c], p[i][c]);
        }
        for (uint32_t j = i + 1; j < n; ++j) {
            double dx = p[j][0] - p[i][0], dy = p[j][1] - p[i][1];
            if (dx * dx + dy * dy > far2) {
                far2 = dx * dx + dy * dy, fa = i, fb = j;
            }
        }
    }
    double diag = hypot(hi[0] - lo[0], hi[1] - lo[1]);
    double dx = n > 1 ? p[fb][0] - p[fa][0] : 1.0, dy = n > 1 ? p[fb][1] - p[fa][1] : 0.0;
    double len = hypot(dx, dy);
    dx /= len, dy /= len;
    bool near_line = true;
    for (uint32_t i = 0; i < n && near_line; ++i) {
        near_line = fabs((p[i][0] - p[fa][0]) * dy - (p[i][1] - p[fa][1]) * dx) <= 1e-6 * diag;
    }
    if (near_line) {
        mesh->collinear = true;
        mesh->line_origin[0] = p[fa][0], mesh->line_origin[1] = p[fa][1];
        mesh->line_dir[0] = dx, mesh->line_dir[1] = dy;
    }
    return near_line;
}

/* The collinear prefix order[0..k) and node order[k] form a fan, oriented counter-clockwise;
 * the hull is the chain plus the apex. */
static void build_fan(builder *b, const uint32_t *order, uint32_t k)
{
    uint32_t apex = order[k];
    bool ccw = cb_orient2d_exact(b->p[order[0]], b->p[order[1]], b->p[apex]) > 0;
    int32_t prev_t = -1;
    for (uint32_t j = 0; j + 1 < k; ++j) {
        uint32_t a = order[j], c = order[j + 1];
        int32_t t = ccw ? add_tri(b, apex, a, c) : add_tri(b, apex, c, a);
        if (prev_t >= 0) {
            /* Consecutive fan triangles share the edge apex - a. */
            int ka = local(b, t, a), kp = local(b, prev_t, a);
            /* The apex is at index 0, so the edge apex - a is opposite index 3 - 0 - k(a). */
            int opp_t = 3 - ka, opp_p = 3 - kp;
            b->adj[t][opp_t] = prev_t;
            b->adj[prev_t][opp_p] = t;
        }
        prev_t = t;
    }
    /* The hull counter-clockwise: with the apex left of the chain, chain forward then the apex;
     * with it right, the chain backward. */
    uint32_t *hull_next = b->hull_next;
    if (ccw) {
        for (uint32_t j = 0; j + 1 < k; ++j) {
            hull_next[order[j]] = order[j + 1];
        }
        hull_next[order[k - 1]] = apex;
        hull_next[apex] = order[0];
    } else {
        for (uint32_t j = k - 1; j > 0; --j) {
            hull_next[order[j]] = order[j - 1];
        }
        hull_next[order[0]] = apex;
        hull_next[apex] = order[k - 1];
    }
}

/* Hull vertices counter-clockwise, starting at the lexicographically first node. */
static void record_hull(cb_tri_mesh *mesh, const uint32_t *hull_next, uint32_t first, uint32_t n)
{
    uint32_t v = first;
    do {
        mesh->hull[mesh->hull_count++] = v;
        v = hull_next[v];
    } while (v != first && mesh->hull_count < n);
}

cb_result cb_tri_mesh_build(const float *xy, uint32_t n, const cb_allocator *allocator,
                            cb_tri_mesh *mesh, cb_error *err)
{
    memset(mesh, 0, sizeof *mesh);
    if (n == 0 || n > CB_SOLVER_MAX_NODES) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "triangulation: %u nodes", n);
    }
    double p[CB_SOLVER_MAX_NODES][2];
    uint32_t order[CB_SOLVER_MAX_NODES];
    for (uint32_t i = 0; i < n; ++i) {
        p[i][0] = xy[2 * i];
        p[i][1] = xy[2 * i + 1];
        order[i] = i;
    }
    sort_xy(order, n, (const double(*)[2])p);
    if (record_near_line((const double(*)[2])p, n, mesh)) {
        return CB_OK;
    }
    /* The first node off the line of the first two (in sorted order) decides the first
     * triangle; one exists, the layout is not collinear. */
    uint32_t k = 2;
    while (k < n && cb_orient2d_exact(p[order[0]], p[order[1]], p[order[k]]) == 0) {
        ++k;
    }

    size_t max_tri = 2 * (size_t)n;
    mesh->alloc_n = n;
    mesh->tri = cb_alloc(allocator, max_tri * sizeof *mesh->tri, 8);
    mesh->adj = cb_alloc(allocator, max_tri * sizeof *mesh->adj, 8);
    mesh->hull = cb_alloc(allocator, n * sizeof *mesh->hull, 8);
    int32_t *stack = cb_alloc(allocator, 4 * max_tri * sizeof *stack, 8);
    if (mesh->tri == NULL || mesh->adj == NULL || mesh->hull == NULL || stack == NULL) {
        cb_free(allocator, stack, 4 * max_tri * sizeof *stack);
        cb_tri_mesh_free(mesh, allocator);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "triangulation: out of memory");
    }
    uint32_t hull_next[CB_SOLVER_MAX_NODES];
    builder b = {(const double(*)[2])p, mesh->tri, mesh->adj, 0, hull_next, stack};
    build_fan(&b, order, k);
    /* The latest node inserted is the lexicographic maximum so far, hence on the hull. */
    for (uint32_t j = k + 1; j < n; ++j) {
        insert_outside(&b, order[j], order[j - 1]);
    }
    cb_free(allocator, stack, 4 * max_tri * sizeof *stack);

    mesh->tri_count = b.count;
    record_hull(mesh, hull_next, order[0], n);
    return CB_OK;
}

void cb_tri_mesh_free(cb_tri_mesh *mesh, const cb_allocator *allocator)
{
    size_t max_tri = 2 * (size_t)mesh->alloc_n;
    cb_free(allocator, mesh->tri, max_tri * sizeof *mesh->tri);
    cb_free(allocator, mesh->adj, max_tri * sizeof *mesh->adj);
    cb_free(allocator, mesh->hull, mesh->alloc_n * sizeof *mesh->hull);
    mesh->tri = NULL, mesh->adj = NULL, mesh->hull = NULL;
}
