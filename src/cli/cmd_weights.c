/* `crowdblend weights`: a blend space and queries in, weights out, as JSON.
 *
 *   input   {"solver": "<name>", "nodes": [...], "options": {...}, "queries": [[...], ...]}
 *   output  {"solver": "<name>", "weights": [[w_0, ..., w_{M-1}], ...]}
 *
 * The solver kinds evaluate all queries in one SIMD batch (cb_solver_evaluate); the parameter
 * processors velocity_blend_4dir and finterp_to run through crowdblend/params.h. JSON is read
 * and written by jansson, whose parse errors carry the line and column; --plot draws the
 * weight maps (plot.c). Errors name the field and index at fault and exit with 1 (2 for bad
 * command-line usage); unknown option keys are warned about and ignored. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/plot.h"
#include "crowdblend/crowdblend.h"

static const char *const CMD = "crowdblend weights";

/* The methods the command knows beyond the solver kinds. */
enum { METHOD_SOLVER, METHOD_VELOCITY, METHOD_INTERP };

/* Option keys each method reads; anything else is warned about. */
static const struct {
    const char *method;
    const char *keys[3];
} option_keys[] = {
    {"bilinear_2d", {"nx", "ny"}},
    {"idw", {"power"}},
    {"knn_idw", {"power", "k"}},
    {"rbf", {"kernel", "epsilon"}},
    {"velocity_blend_4dir", {"min_sq_len"}},
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "%s: ", CMD);
    vfprintf(stderr, fmt, args);
    fprintf(stderr, "\n");
    va_end(args);
    return CB_EXIT_FAILURE;
}

static bool number(const json_t *v, double *out)
{
    if (!json_is_number(v)) {
        return false;
    }
    *out = json_number_value(v);
    return true;
}

/* A row of exactly n numbers; a bare number counts as a row of one. Fills out, or names what
 * is wrong in why. */
static bool numbers(const json_t *v, size_t n, float *out, char *why, size_t why_size)
{
    double d;
    if (n == 1 && number(v, &d)) {
        out[0] = (float)d;
        return true;
    }
    if (!json_is_array(v) || json_array_size(v) != n) {
        snprintf(why, why_size, "expected %zu number%s", n, n == 1 ? "" : "s in an array");
        return false;
    }
    for (size_t k = 0; k < n; ++k) {
        if (!number(json_array_get(v, k), &d)) {
            snprintf(why, why_size, "element %zu is not a number", k);
            return false;
        }
        out[k] = (float)d;
    }
    return true;
}

/* Parsed input shared by every method. */
typedef struct input {
    const char *solver;
    int method;
    cb_solver_kind kind;
    const json_t *nodes;   /* may be NULL */
    const json_t *options; /* may be NULL */
    const json_t *queries;
} input;

static bool option_allowed(const char *method, const char *key)
{
    for (size_t i = 0; i < sizeof option_keys / sizeof option_keys[0]; ++i) {
        if (strcmp(option_keys[i].method, method) != 0) {
            continue;
        }
        for (int k = 0; k < 3 && option_keys[i].keys[k] != NULL; ++k) {
            if (strcmp(option_keys[i].keys[k], key) == 0) {
                return true;
            }
        }
    }
    return false;
}

static void list_names(FILE *to)
{
    for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
        fprintf(to, "%s%s", k > 1 ? ", " : "", cb_solver_kind_name((cb_solver_kind)k));
    }
    fprintf(to, ", velocity_blend_4dir, finterp_to");
}

static int read_input(json_t *root, input *in)
{
    if (!json_is_object(root)) {
        return fail("the input must be a JSON object");
    }
    const json_t *solver = json_object_get(root, "solver");
    if (solver == NULL) {
        return fail("missing \"solver\"");
    }
    if (!json_is_string(solver)) {
        return fail("\"solver\" must be a string");
    }
    in->solver = json_string_value(solver);
    if (strcmp(in->solver, "velocity_blend_4dir") == 0) {
        in->method = METHOD_VELOCITY;
    } else if (strcmp(in->solver, "finterp_to") == 0) {
        in->method = METHOD_INTERP;
    } else if (cb_solver_kind_from_name(in->solver, &in->kind) == CB_OK) {
        in->method = METHOD_SOLVER;
    } else {
        fprintf(stderr, "%s: unknown solver \"%s\"; known: ", CMD, in->solver);
        list_names(stderr);
        fprintf(stderr, "\n");
        return CB_EXIT_FAILURE;
    }
    in->nodes = json_object_get(root, "nodes");
    in->options = json_object_get(root, "options");
    in->queries = json_object_get(root, "queries");
    if (in->options != NULL && !json_is_object(in->options)) {
        return fail("\"options\" must be an object");
    }
    if (in->queries == NULL) {
        return fail("missing \"queries\"");
    }
    if (!json_is_array(in->queries)) {
        return fail("\"queries\" must be an array of queries");
    }
    if (in->nodes != NULL && !json_is_array(in->nodes)) {
        return fail("\"nodes\" must be an array");
    }
    const char *key;
    const json_t *value;
    if (in->options != NULL) {
        json_object_foreach((json_t *)in->options, key, value)
        {
            if (!option_allowed(in->solver, key)) {
                fprintf(stderr, "%s: warning: option \"%s\" is not used by %s (ignored)\n", CMD,
                        key, in->solver);
            }
        }
    }
    json_object_foreach(root, key, value)
    {
        if (strcmp(key, "solver") && strcmp(key, "nodes") && strcmp(key, "options") &&
            strcmp(key, "queries")) {
            fprintf(stderr, "%s: warning: key \"%s\" is not part of the input format (ignored)\n",
                    CMD, key);
        }
    }
    return CB_EXIT_OK;
}

/* Numeric option: absent leaves *out unchanged. */
static int option_number(const input *in, const char *key, double *out)
{
    const json_t *v = in->options != NULL ? json_object_get(in->options, key) : NULL;
    if (v != NULL && !number(v, out)) {
        return fail("options.%s must be a number", key);
    }
    return CB_EXIT_OK;
}

static int option_count(const input *in, const char *key, uint32_t *out)
{
    double d = 0;
    const json_t *v = in->options != NULL ? json_object_get(in->options, key) : NULL;
    if (v == NULL) {
        return CB_EXIT_OK;
    }
    if (!number(v, &d) || d < 0 || d != floor(d) || d > 1e6) {
        return fail("options.%s must be a non-negative integer", key);
    }
    *out = (uint32_t)d;
    return CB_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Output                                                                                     */

/* The output is written as it is computed, row by row, never held whole: 10^6 queries of 128
 * weights are half a gigabyte of floats, and took 5.8 GB as a JSON tree (issue 11, finding 16).
 * A file is written under a temporary name and renamed once complete, so a failure leaves no
 * half-written file behind; stdout gets nothing until every query has been read and checked. */
typedef struct writer {
    FILE *f;
    const char *path; /* NULL for stdout */
    char tmp[4096];
    size_t rows;
    bool failed;
} writer;

static int writer_open(writer *w, const char *solver, const char *path)
{
    *w = (writer){.f = stdout};
    if (path != NULL && strcmp(path, "-") != 0) {
        if (snprintf(w->tmp, sizeof w->tmp, "%s.part%ld", path, (long)getpid()) >=
            (int)sizeof w->tmp) {
            return fail("output path too long: %s", path);
        }
        w->f = fopen(w->tmp, "w");
        if (w->f == NULL) {
            return fail("cannot write %s", path);
        }
        w->path = path;
    }
    /* The solver name is one of the known names: nothing in it needs escaping. */
    fprintf(w->f, "{\"solver\":\"%s\",\"weights\":[", solver);
    return CB_EXIT_OK;
}

/* One row of count weights, v[0], v[stride], ... as JSON numbers: 9 significant digits
 * round-trip a float, and a number without '.' or an exponent gets ".0", as jansson writes
 * reals. */
static void writer_row(writer *w, const float *v, size_t count, size_t stride)
{
    fputs(w->rows++ ? ",[" : "[", w->f);
    for (size_t c = 0; c < count; ++c) {
        float x = v[c * stride];
        if (!isfinite(x)) {
            w->failed = true;
            x = 0.0f;
        }
        char num[32];
        int len = snprintf(num, sizeof num, "%.9g", (double)x);
        bool plain = strpbrk(num, ".eE") == NULL;
        fprintf(w->f, "%s%s%s", c ? "," : "", num, plain && len > 0 ? ".0" : "");
    }
    fputc(']', w->f);
}

static int writer_close(writer *w)
{
    fputs("]}\n", w->f);
    bool ok = !w->failed && fflush(w->f) == 0 && !ferror(w->f);
    if (w->path == NULL) {
        return ok ? CB_EXIT_OK
                  : fail(w->failed ? "a weight is not finite" : "cannot write the output");
    }
    ok = fclose(w->f) == 0 && ok;
    if (ok && rename(w->tmp, w->path) == 0) {
        return CB_EXIT_OK;
    }
    remove(w->tmp);
    return fail(w->failed ? "a weight is not finite" : "cannot write %s", w->path);
}

/* Writes rows of a whole result held in memory (the parameter processors: 4 floats per query
 * at most). */
static int write_output(const char *solver, const float *w, size_t rows, size_t cols,
                        size_t row_stride, size_t col_stride, const char *path)
{
    writer out;
    int rc = writer_open(&out, solver, path);
    if (rc != CB_EXIT_OK) {
        return rc;
    }
    for (size_t r = 0; r < rows; ++r) {
        writer_row(&out, w + r * row_stride, cols, col_stride);
    }
    return writer_close(&out);
}

/* ------------------------------------------------------------------------------------------ */
/* Solvers                                                                                    */

typedef struct solver_run {
    cb_solver *s;
    float *nodes;
    size_t m, dim;
} solver_run;

/* Dimension: 1 for linear_1d and direct, the first node's length for idw/knn/rbf, else 2. */
static size_t node_dimension(const input *in)
{
    size_t dim = 2;
    const json_t *first = json_array_get(in->nodes, 0);
    if (in->kind == CB_SOLVER_KIND_LINEAR_1D) {
        dim = 1;
    } else if (in->kind == CB_SOLVER_KIND_DIRECT) {
        dim = 0;
    } else if (in->kind == CB_SOLVER_KIND_IDW || in->kind == CB_SOLVER_KIND_KNN_IDW ||
               in->kind == CB_SOLVER_KIND_RBF) {
        dim =
            json_is_number(first) || (json_is_array(first) && json_array_size(first) == 1) ? 1 : 2;
    }
    return dim;
}

/* The m nodes of dim coordinates each into nodes; direct (dim 0) has none to read. */
static int read_nodes(const input *in, size_t m, size_t dim, float *nodes)
{
    for (size_t i = 0; i < m && dim > 0; ++i) {
        char why[64];
        if (!numbers(json_array_get(in->nodes, i), dim, nodes + i * dim, why, sizeof why)) {
            return fail("nodes[%zu]: %s (%s takes %s)", i, why, in->solver,
                        dim == 1 ? "[t, ...] or [[t], ...]" : "[[x, y], ...]");
        }
    }
    return CB_EXIT_OK;
}

/* The options into d: each read and checked whatever the kind, then kept by the kinds that
 * take them. */
static int read_solver_options(const input *in, cb_solver_desc *d)
{
    double power = 0, epsilon = 0;
    int rc;
    if ((rc = option_number(in, "power", &power)) ||
        (rc = option_number(in, "epsilon", &epsilon)) || (rc = option_count(in, "k", &d->knn_k)) ||
        (rc = option_count(in, "nx", &d->grid_nx)) || (rc = option_count(in, "ny", &d->grid_ny))) {
        return rc;
    }
    if (in->kind == CB_SOLVER_KIND_IDW || in->kind == CB_SOLVER_KIND_KNN_IDW) {
        d->idw_power = (float)power;
    }
    if (in->kind == CB_SOLVER_KIND_RBF) {
        d->rbf_epsilon = (float)epsilon;
        const json_t *k = json_object_get(in->options, "kernel");
        if (k != NULL && (!json_is_string(k) ||
                          cb_rbf_kernel_from_name(json_string_value(k), &d->rbf_kernel) != CB_OK)) {
            return fail("options.kernel must be one of \"thin_plate\", \"cubic\", \"linear\", "
                        "\"gaussian\"");
        }
    }
    return CB_EXIT_OK;
}

static int build_solver(const input *in, solver_run *run)
{
    cb_solver_desc d = {.kind = in->kind};
    size_t m = in->nodes != NULL ? json_array_size(in->nodes) : 0;
    if (m == 0) {
        return fail("\"nodes\" must list at least one node");
    }
    if (m > CB_SOLVER_MAX_NODES) {
        return fail("%zu nodes: the most a blend space may have is %d", m, CB_SOLVER_MAX_NODES);
    }
    size_t dim = node_dimension(in);
    run->nodes = calloc(m * 2 + 2, sizeof(float));
    if (run->nodes == NULL) {
        return fail("out of memory");
    }
    int rc = read_nodes(in, m, dim, run->nodes);
    if (rc != CB_EXIT_OK) {
        return rc;
    }
    d.nodes = dim > 0 ? run->nodes : NULL;
    d.node_count = (uint32_t)m;
    d.dimension = dim > 0 ? (uint32_t)dim : 0;
    rc = read_solver_options(in, &d);
    if (rc != CB_EXIT_OK) {
        return rc;
    }
    cb_error err = {0};
    cb_result r = cb_solver_create(&d, &run->s, &err);
    if (r != CB_OK) {
        return fail("%s: %s (%s)", in->solver, err.message, cb_result_str(r));
    }
    run->m = m;
    run->dim = dim;
    return CB_EXIT_OK;
}

static bool plot_solver(void *ctx, const float *x, const float *y, size_t n, float *w)
{
    const cb_solver *s = ctx;
    const float *cols[2] = {x, y};
    return cb_solver_evaluate(s, cols, n, n, w, NULL) == CB_OK;
}

/* Queries are read from the JSON tree, evaluated and written CHUNK at a time, so memory does
 * not grow with their number beyond the parsed input. Results do not depend on the chunking:
 * a query's weights are the same bits in any batch (crowdblend/solver.h). */
enum { CHUNK = 4096 };

/* Query c's np parameters into column c of cols (CHUNK apart); names what is wrong on failure. */
static int read_query(const input *in, size_t c, size_t np, float *cols, size_t col)
{
    float q[CB_SOLVER_MAX_NODES];
    char why[64];
    if (!numbers(json_array_get(in->queries, c), np, q, why, sizeof why)) {
        return fail("queries[%zu]: %s (%s takes %zu parameter%s per query)", c, why, in->solver, np,
                    np == 1 ? "" : "s");
    }
    for (size_t k = 0; k < np; ++k) {
        cols[k * CHUNK + col] = q[k];
    }
    return CB_EXIT_OK;
}

static int plot_if_asked(const solver_run *run, const char *plot, long plot_size)
{
    /* direct has one parameter per node: with two nodes they span a plane, drawn with the unit
     * parameter vectors (1, 0) and (0, 1) marked; with more there is none. */
    static const float direct_units[4] = {1, 0, 0, 1};
    if (plot == NULL) {
        return CB_EXIT_OK;
    }
    if (run->dim == 0 && run->m != 2) {
        return fail("--plot: direct draws the plane of its parameters with two nodes only, "
                    "this blend space has %zu",
                    run->m);
    }
    bool direct = run->dim == 0;
    cb_plot p = {direct ? 2 : (int)run->dim,
                 run->m,
                 direct ? direct_units : run->nodes,
                 NULL,
                 plot_solver,
                 run->s,
                 {-0.5f, -0.5f},
                 {1.5f, 1.5f},
                 (int)plot_size};
    if (!direct) {
        cb_plot_window(run->nodes, run->m, (int)run->dim, p.lo, p.hi);
    }
    char err[256];
    return cb_plot_write_png(&p, plot, err, sizeof err) ? CB_EXIT_OK : fail("--plot: %s", err);
}

static int run_solver(const input *in, const char *output, const char *plot, long plot_size)
{
    solver_run run = {0};
    int rc = build_solver(in, &run);
    size_t n = json_array_size(in->queries),
           np = rc == CB_EXIT_OK ? cb_solver_param_count(run.s) : 0;
    float *cols = NULL, *w = NULL;
    if (rc == CB_EXIT_OK) {
        cols = malloc((np * CHUNK + 1) * sizeof(float));
        w = malloc((run.m * CHUNK + 1) * sizeof(float));
        if (cols == NULL || w == NULL) {
            rc = fail("out of memory");
        }
    }
    /* Every query is checked before anything is written. */
    for (size_t c = 0; c < n && rc == CB_EXIT_OK; ++c) {
        rc = read_query(in, c, np, cols, 0);
    }
    /* The picture first: a failing --plot leaves no output behind. */
    if (rc == CB_EXIT_OK) {
        rc = plot_if_asked(&run, plot, plot_size);
    }
    writer out;
    if (rc == CB_EXIT_OK) {
        rc = writer_open(&out, in->solver, output);
    }
    size_t nonfinite = 0;
    for (size_t c0 = 0; c0 < n && rc == CB_EXIT_OK; c0 += CHUNK) {
        size_t len = n - c0 < CHUNK ? n - c0 : CHUNK, bad = 0;
        for (size_t c = 0; c < len; ++c) {
            read_query(in, c0 + c, np, cols, c);
        }
        const float *params[CB_SOLVER_MAX_NODES];
        for (size_t k = 0; k < np; ++k) {
            params[k] = cols + k * CHUNK;
        }
        cb_solver_evaluate(run.s, params, len, CHUNK, w, &bad);
        nonfinite += bad;
        for (size_t c = 0; c < len; ++c) {
            writer_row(&out, w + c, run.m, CHUNK);
        }
    }
    if (rc == CB_EXIT_OK) {
        rc = writer_close(&out);
    }
    if (rc == CB_EXIT_OK && nonfinite > 0) {
        fprintf(stderr,
                "%s: warning: %zu queries had non-finite parameters (evaluated at the origin)\n",
                CMD, nonfinite);
    }
    free(cols);
    free(w);
    free(run.nodes);
    cb_solver_destroy(run.s);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameter processors                                                                       */

typedef struct velocity_ctx {
    float min_sq;
} velocity_ctx;

static bool velocity_eval(void *ctx, const float *x, const float *y, size_t n, float *w)
{
    const velocity_ctx *v = ctx;
    cb_velocity_blend out = {w, w + n, w + 2 * n, w + 3 * n};
    return cb_params_velocity_blend_4dir(x, y, NULL, n, v->min_sq, out, NULL) == CB_OK;
}

static int run_velocity(const input *in, const char *output, const char *plot, long plot_size)
{
    if (in->nodes != NULL && json_array_size(in->nodes) != 4) {
        return fail("nodes: velocity_blend_4dir has the four directions as nodes (or none), got "
                    "%zu",
                    json_array_size(in->nodes));
    }
    double min_sq = 0;
    int rc = option_number(in, "min_sq_len", &min_sq);
    if (rc != CB_EXIT_OK) {
        return rc;
    }
    size_t n = json_array_size(in->queries);
    float *v = malloc((3 * n + 1) * sizeof(float)), *w = malloc((4 * n + 1) * sizeof(float));
    if (v == NULL || w == NULL) {
        free(v), free(w);
        return fail("out of memory for %zu queries", n);
    }
    for (size_t c = 0; c < n && rc == CB_EXIT_OK; ++c) {
        float q[3];
        char why[64];
        if (!numbers(json_array_get(in->queries, c), 3, q, why, sizeof why)) {
            rc = fail("queries[%zu]: %s (velocity_blend_4dir takes [x forward, y left, z up])", c,
                      why);
            break;
        }
        v[c] = q[0], v[n + c] = q[1], v[2 * n + c] = q[2];
    }
    if (rc == CB_EXIT_OK) {
        cb_velocity_blend out = {w, w + n, w + 2 * n, w + 3 * n};
        cb_result r =
            cb_params_velocity_blend_4dir(v, v + n, v + 2 * n, n, (float)min_sq, out, NULL);
        rc = r != CB_OK ? fail("options.min_sq_len: %s", cb_result_str(r)) : CB_EXIT_OK;
    }
    if (rc == CB_EXIT_OK && plot != NULL) {
        /* The (x, y) plane of ground velocities, out to 1.5 units, the four direction nodes
         * marked: forward (1, 0), backward (-1, 0), left (0, 1), right (0, -1). */
        static const float dirs[8] = {1, 0, -1, 0, 0, 1, 0, -1};
        static const char *const labels[4] = {"F", "B", "L", "R"};
        velocity_ctx ctx = {(float)min_sq};
        cb_plot p = {
            2, 4, dirs, labels, velocity_eval, &ctx, {-1.5f, -1.5f}, {1.5f, 1.5f}, (int)plot_size};
        char err[256];
        if (!cb_plot_write_png(&p, plot, err, sizeof err)) {
            rc = fail("--plot: %s", err);
        }
    }
    if (rc == CB_EXIT_OK) {
        rc = write_output(in->solver, w, n, 4, 1, n, output);
    }
    free(v);
    free(w);
    return rc;
}

static int run_interp(const input *in, const char *output, const char *plot)
{
    if (plot != NULL) {
        return fail("--plot: finterp_to has no parameter plane to draw");
    }
    size_t n = json_array_size(in->queries);
    float *w = malloc((n + 1) * sizeof(float));
    if (w == NULL) {
        return fail("out of memory for %zu queries", n);
    }
    int rc = CB_EXIT_OK;
    for (size_t c = 0; c < n && rc == CB_EXIT_OK; ++c) {
        float q[4];
        char why[64];
        if (!numbers(json_array_get(in->queries, c), 4, q, why, sizeof why)) {
            rc = fail("queries[%zu]: %s (finterp_to takes [current, target, dt, speed])", c, why);
            break;
        }
        cb_result r = cb_params_interp_to(&q[0], &q[1], 1, q[2], q[3], &w[c], NULL);
        if (r != CB_OK) {
            rc = fail("queries[%zu]: dt must be finite and >= 0, speed finite (%s)", c,
                      cb_result_str(r));
        }
    }
    if (rc == CB_EXIT_OK) {
        rc = write_output(in->solver, w, n, 1, 1, 1, output);
    }
    free(w);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */

int cb_weights_run_document(json_t *root, const char *output, const char *plot, long plot_size)
{
    input in = {0};
    int rc = read_input(root, &in);
    if (rc == CB_EXIT_OK) {
        switch (in.method) {
        case METHOD_VELOCITY:
            rc = run_velocity(&in, output, plot, plot_size);
            break;
        case METHOD_INTERP:
            rc = run_interp(&in, output, plot);
            break;
        default:
            rc = run_solver(&in, output, plot, plot_size);
            break;
        }
    }
    return rc;
}

int cb_cmd_weights(int argc, char **argv)
{
    bool help = false;
    const char *output = NULL, *plot = NULL;
    long plot_size = 160;
    const cb_opt opts[] = {
        {"output", CB_OPT_STRING, &output, "write the weights here instead of stdout"},
        {"plot", CB_OPT_STRING, &plot, "also draw the weight maps into this PNG file"},
        {"plot-size", CB_OPT_INT, &plot_size, "pixels per panel of the picture, 32..512 (160)"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    const char *positional[1] = {NULL};
    size_t npos = 0;
    if (!cb_opts_parse(CMD, argc, argv, 2, opts, positional, 1, &npos)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help("crowdblend weights [INPUT.json | -] [--output FILE] [--plot FILE.png] "
                           "[--plot-size N]",
                           opts);
        printf("\ninput:  {\"solver\": NAME, \"nodes\": [...], \"options\": {...}, \"queries\": "
               "[...]}\n"
               "output: {\"solver\": NAME, \"weights\": [[w_0, ..., w_M-1], ...]}\nnames:  ");
        list_names(stdout);
        printf("\n");
        return CB_EXIT_OK;
    }
    if (plot_size < 32 || plot_size > 512) {
        fprintf(stderr, "%s: --plot-size must be 32..512, got %ld\n", CMD, plot_size);
        return CB_EXIT_USAGE;
    }
    const char *path = npos > 0 ? positional[0] : "-";
    json_error_t jerr;
    json_t *root =
        strcmp(path, "-") == 0 ? json_loadf(stdin, 0, &jerr) : json_load_file(path, 0, &jerr);
    if (root == NULL) {
        const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
        if (jerr.line < 0) {
            return fail("%s: %s", name, jerr.text);
        }
        return fail("%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
    }
    int rc = cb_weights_run_document(root, output, plot, plot_size);
    json_decref(root);
    return rc;
}
