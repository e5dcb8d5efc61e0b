/* Blend-weight solvers and parameter processors: 10,000 characters per call, the SIMD batch
 * path (cb_solver_evaluate) against the per-query scalar path (cb_solver_evaluate_ref, one
 * cb_solver_evaluate_one-style query at a time, written into the same SoA rows), in one run.
 *
 * Names: solver_<kind>_<simd|ref>/<characters>/<nodes>. Layouts: 8 nodes = 8 directions on a
 * ring (no idle), 16 = the same at two speeds, 17 = the crowd's default locomotion space
 * (idle + 8 directions at 1.4 m/s + 8 at 3.5 m/s); simple_directional_2d takes 8 or 16
 * distinct directions, bilinear_2d a 4 x 2 or 4 x 4 grid, linear_1d evenly spaced thresholds,
 * direct random parameters. Queries: uniform in a disc 1.2 times the layout's radius (most
 * inside, some outside), fixed seed. The counter per_char is the time per character. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/prng.h"
#include "bench_all.h"
#include "crowdblend/crowdblend.h"
#include "shim.h"

enum { CHARS = 10000 };

static const double PI = 3.14159265358979323846;

typedef struct setup {
    cb_solver *s;
    size_t m, np;
    float *cols; /* np columns of CHARS */
    float *w;    /* m rows of CHARS */
} setup;

static int layout(cb_solver_kind kind, int m, float *xy)
{
    if (kind == CB_SOLVER_KIND_LINEAR_1D) {
        for (int i = 0; i < m; ++i) {
            xy[i] = (float)i / (float)(m - 1) * 4.0f - 2.0f;
        }
        return m;
    }
    if (kind == CB_SOLVER_KIND_BILINEAR_2D) {
        int ny = m / 4;
        for (int j = 0; j < ny; ++j) {
            for (int i = 0; i < 4; ++i) {
                xy[2 * (j * 4 + i)] = (float)i - 1.5f;
                xy[2 * (j * 4 + i) + 1] = (float)j - 0.5f * (float)(ny - 1);
            }
        }
        return m;
    }
    int n = 0;
    if (m == 17) {
        xy[0] = xy[1] = 0.0f;
        n = 1;
    }
    int dirs = kind == CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D ? m - n : 8;
    for (int k = 0; n < m; ++k, ++n) {
        double a = 2 * PI * (k % dirs) / dirs;
        double rad = kind == CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D ? (k % 2 ? 2.0 : 1.0)
                     : m == 17                                    ? (k < 8 ? 1.4 : 3.5)
                                                                  : (k < 8 ? 1.0 : 2.0);
        xy[2 * n] = (float)(rad * cos(a));
        xy[2 * n + 1] = (float)(rad * sin(a));
    }
    return m;
}

static bool make(setup *su, cb_solver_kind kind, int m)
{
    float xy[2 * 32];
    layout(kind, m, xy);
    cb_solver_desc d = {.kind = kind,
                        .nodes = kind == CB_SOLVER_KIND_DIRECT ? NULL : xy,
                        .node_count = (uint32_t)m};
    if (cb_solver_create(&d, &su->s, NULL) != CB_OK) {
        return false;
    }
    su->m = (size_t)m;
    su->np = cb_solver_param_count(su->s);
    /* Columns staggered by 16 floats: no two start a multiple of 4 KiB apart (4K aliasing,
     * docs/performance.md). */
    su->cols = malloc((su->np * (CHARS + 16) + 16) * sizeof(float));
    su->w = malloc((su->m * (CHARS + 16) + 16) * sizeof(float));
    if (su->cols == NULL || su->w == NULL) {
        return false;
    }
    float rad = 0;
    for (int i = 0; i < m * (kind == CB_SOLVER_KIND_LINEAR_1D ? 1 : 2); ++i) {
        rad = fmaxf(rad, fabsf(xy[i]));
    }
    cb_prng r = cb_prng_seed(0x5eed + (uint64_t)kind * 131 + (uint64_t)m);
    for (size_t c = 0; c < CHARS; ++c) {
        double a = cb_prng_double(&r) * 2 * PI, d2 = 1.2 * rad * sqrt(cb_prng_double(&r));
        for (size_t k = 0; k < su->np; ++k) {
            float v = kind == CB_SOLVER_KIND_DIRECT ? cb_prng_range(&r, -0.5f, 1.0f)
                      : k == 0                      ? (float)(d2 * cos(a))
                                                    : (float)(d2 * sin(a));
            su->cols[k * (CHARS + 16) + c] = v;
        }
    }
    return true;
}

static void run(cb_bench_state *st, cb_solver_kind kind, bool simd)
{
    int m = (int)cb_bench_range(st, 1);
    setup su = {0};
    if (!make(&su, kind, m)) {
        cb_bench_skip_with_error(st, "setup failed");
        cb_solver_destroy(su.s);
        free(su.cols), free(su.w);
        return;
    }
    const float *params[32];
    for (size_t k = 0; k < su.np; ++k) {
        params[k] = su.cols + k * (CHARS + 16);
    }
    while (cb_bench_keep_running(st)) {
        if (simd) {
            cb_solver_evaluate(su.s, params, CHARS, CHARS + 16, su.w, NULL);
        } else {
            cb_solver_evaluate_ref(su.s, params, CHARS, CHARS + 16, su.w, NULL);
        }
        cb_bench_keep(su.w);
    }
    double items = (double)CHARS * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    cb_bench_set_counter(st, "per_char", items, CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    cb_solver_destroy(su.s);
    free(su.cols);
    free(su.w);
}

#define SOLVER_BENCH(fn, kind)                                                                     \
    static void fn##_simd(cb_bench_state *st, void *user)                                          \
    {                                                                                              \
        (void)user;                                                                                \
        run(st, kind, true);                                                                       \
    }                                                                                              \
    static void fn##_ref(cb_bench_state *st, void *user)                                           \
    {                                                                                              \
        (void)user;                                                                                \
        run(st, kind, false);                                                                      \
    }

SOLVER_BENCH(linear_1d, CB_SOLVER_KIND_LINEAR_1D)
SOLVER_BENCH(simple_directional, CB_SOLVER_KIND_SIMPLE_DIRECTIONAL_2D)
SOLVER_BENCH(freeform_directional, CB_SOLVER_KIND_FREEFORM_DIRECTIONAL_2D)
SOLVER_BENCH(freeform_cartesian, CB_SOLVER_KIND_FREEFORM_CARTESIAN_2D)
SOLVER_BENCH(delaunay, CB_SOLVER_KIND_DELAUNAY_2D)
SOLVER_BENCH(bilinear, CB_SOLVER_KIND_BILINEAR_2D)
SOLVER_BENCH(direct, CB_SOLVER_KIND_DIRECT)
SOLVER_BENCH(idw, CB_SOLVER_KIND_IDW)
SOLVER_BENCH(knn_idw, CB_SOLVER_KIND_KNN_IDW)
SOLVER_BENCH(rbf, CB_SOLVER_KIND_RBF)
SOLVER_BENCH(natural_neighbor, CB_SOLVER_KIND_NATURAL_NEIGHBOR_2D)

/* ------------------------------------------------------------------------------------------ */
/* Parameter processors: the library's SIMD kernels against the plain per-character loop a
 * host would write (compiled here, so the compiler may vectorize it as it likes). */

typedef struct pcols {
    float *x, *y, *z, *o[4];
} pcols;

static pcols make_pcols(void)
{
    pcols p;
    float **all[] = {&p.x, &p.y, &p.z, &p.o[0], &p.o[1], &p.o[2], &p.o[3]};
    cb_prng r = cb_prng_seed(77);
    for (size_t k = 0; k < 7; ++k) {
        *all[k] = malloc((CHARS + 16) * sizeof(float));
        for (size_t c = 0; c < CHARS && *all[k] != NULL; ++c) {
            (*all[k])[c] = cb_prng_range(&r, -4.0f, 4.0f);
        }
    }
    return p;
}

static void free_pcols(pcols *p)
{
    free(p->x), free(p->y), free(p->z);
    for (int k = 0; k < 4; ++k) {
        free(p->o[k]);
    }
}

static void velocity_scalar(const pcols *p)
{
    for (size_t c = 0; c < CHARS; ++c) {
        float x = p->x[c], y = p->y[c], z = p->z[c];
        float s = fabsf(x) + fabsf(y) + fabsf(z);
        bool moving = x * x + y * y + z * z >= 1e-4f && s > 0.0f;
        float inv = moving ? 1.0f / s : 0.0f;
        p->o[0][c] = fmaxf(x, 0.0f) * inv, p->o[1][c] = fmaxf(-x, 0.0f) * inv;
        p->o[2][c] = fmaxf(-y, 0.0f) * inv, p->o[3][c] = fmaxf(y, 0.0f) * inv;
    }
}

static void interp_scalar(const pcols *p)
{
    const float alpha = 0.016f * 8.0f;
    for (size_t c = 0; c < CHARS; ++c) {
        float d = p->y[c] - p->x[c];
        p->o[0][c] = d * d < 1e-8f ? p->y[c] : p->x[c] + d * alpha;
    }
}

static void params_run(cb_bench_state *st, int which, bool simd)
{
    pcols p = make_pcols();
    cb_velocity_blend out = {p.o[0], p.o[1], p.o[2], p.o[3]};
    while (cb_bench_keep_running(st)) {
        if (which == 0) {
            if (simd) {
                cb_params_velocity_blend_4dir(p.x, p.y, p.z, CHARS, 1e-4f, out, NULL);
            } else {
                velocity_scalar(&p);
            }
        } else {
            if (simd) {
                cb_params_interp_to(p.x, p.y, CHARS, 0.016f, 8.0f, p.o[0], NULL);
            } else {
                interp_scalar(&p);
            }
        }
        cb_bench_keep(p.o[0]);
    }
    double items = (double)CHARS * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    cb_bench_set_counter(st, "per_char", items, CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    free_pcols(&p);
}

static void velocity_simd(cb_bench_state *st, void *user)
{
    (void)user;
    params_run(st, 0, true);
}

static void velocity_ref(cb_bench_state *st, void *user)
{
    (void)user;
    params_run(st, 0, false);
}

static void interp_simd(cb_bench_state *st, void *user)
{
    (void)user;
    params_run(st, 1, true);
}

static void interp_ref(cb_bench_state *st, void *user)
{
    (void)user;
    params_run(st, 1, false);
}

void cb_bench_register_solver(void)
{
    static const struct {
        const char *name;
        cb_bench_fn simd, ref;
        bool loco; /* also the 17-node locomotion layout */
    } solvers[] = {
        {"linear_1d", linear_1d_simd, linear_1d_ref, true},
        {"simple_directional_2d", simple_directional_simd, simple_directional_ref, true},
        {"freeform_directional_2d", freeform_directional_simd, freeform_directional_ref, true},
        {"freeform_cartesian_2d", freeform_cartesian_simd, freeform_cartesian_ref, true},
        {"delaunay_2d", delaunay_simd, delaunay_ref, true},
        {"bilinear_2d", bilinear_simd, bilinear_ref, false},
        {"direct", direct_simd, direct_ref, true},
        {"idw", idw_simd, idw_ref, true},
        {"knn_idw", knn_idw_simd, knn_idw_ref, true},
        {"rbf", rbf_simd, rbf_ref, true},
        {"natural_neighbor_2d", natural_neighbor_simd, natural_neighbor_ref, true},
    };
    for (size_t i = 0; i < sizeof solvers / sizeof solvers[0]; ++i) {
        for (int v = 0; v < 2; ++v) {
            char name[64];
            snprintf(name, sizeof name, "solver_%s_%s", solvers[i].name, v ? "ref" : "simd");
            cb_bench *b = cb_bench_register(name, v ? solvers[i].ref : solvers[i].simd, NULL);
            cb_bench_args2(b, CHARS, 8);
            cb_bench_args2(b, CHARS, 16);
            if (solvers[i].loco) {
                cb_bench_args2(b, CHARS, 17);
            }
        }
    }
    cb_bench_arg(cb_bench_register("params_velocity_blend_4dir_simd", velocity_simd, NULL), CHARS);
    cb_bench_arg(cb_bench_register("params_velocity_blend_4dir_ref", velocity_ref, NULL), CHARS);
    cb_bench_arg(cb_bench_register("params_interp_to_simd", interp_simd, NULL), CHARS);
    cb_bench_arg(cb_bench_register("params_interp_to_ref", interp_ref, NULL), CHARS);
}
