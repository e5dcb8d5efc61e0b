/* Stage 1: parameters. Every parameter of the batch is read from the block's column or the
 * host's view into scratch rows; the processors then derive parameters from parameters, in the
 * order they were added (the params module's unchecked kernels: the builder checked their
 * options), and their outputs persist in the block.
 *
 * One rule for non-finite numbers (crowdblend/crowd.h, PARAMETERS): a parameter value that is
 * NaN or infinite (from a column or a view) is read as 0 here, and counted once; nothing
 * downstream (processors, solvers, conditions, layer weights, clip speeds, IK) ever sees one,
 * so every consumer treats it alike. (The speed smoothing used to hold its last value on a NaN
 * target while the solvers read 0.) Layer weights outside [0, 1] are counted too. */
#include <math.h>
#include <string.h>

#include "graph/runtime/runtime_impl.h"
#include "params/params_kernels.h"
#include "simd/detmath.h"

/* Non-finite values of a row read as 0; returns how many there were. */
static size_t zero_nonfinite(float *row, uint32_t n)
{
    size_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
        bool finite = isfinite(row[i]);
        bad += !finite;
        row[i] = finite ? row[i] : 0.0f;
    }
    return bad;
}

static void read_params(const cb_graph *g, const cb_graph_block *b,
                        const cb_graph_param_source *src, uint32_t first, uint32_t n,
                        cb_graph_scratch *s, cb_graph_scratch_stats *st)
{
    for (uint32_t p = 0; p < g->param_count; ++p) {
        float *dst = &SR(s, params, p, 0);
        if (src != NULL && src[p].base != NULL && !g->params[p].written_by_graph) {
            for (uint32_t i = 0; i < n; ++i) {
                memcpy(&dst[i], src[p].base + (size_t)(first + i) * src[p].stride, sizeof(float));
            }
        } else {
            memcpy(dst, &AT(b, params, p, first), n * sizeof(float));
        }
        /* Every row: the host may write any column, triggers and processor state included. */
        st->nonfinite_params += zero_nonfinite(dst, n);
    }
}

/* The velocity blend's four shares, and its speed when asked for; returns the non-finite
 * inputs. */
static size_t velocity_blend(const gproc *p, uint32_t n, cb_graph_scratch *s)
{
    const float *x = &SR(s, params, p->in[0], 0), *y = &SR(s, params, p->in[1], 0);
    const float *z = p->in[2] != GNONE ? &SR(s, params, p->in[2], 0) : NULL;
    cb_velocity_blend out = {&SR(s, params, p->out[0], 0), &SR(s, params, p->out[1], 0),
                             &SR(s, params, p->out[2], 0), &SR(s, params, p->out[3], 0)};
    size_t bad = cb_params_velocity_blend_unchecked(x, y, z, n, p->a, out);
    for (uint32_t i = 0; p->out[4] != GNONE && i < n; ++i) {
        float zi = z != NULL ? z[i] : 0.0f;
        float v = sqrtf(x[i] * x[i] + y[i] * y[i] + zi * zi);
        SR(s, params, p->out[4], i) = isfinite(v) ? v : 0.0f;
    }
    return bad;
}

/* The movement quadrant: only moving characters are classified; standing ones keep theirs. */
static size_t quadrant(const gproc *p, uint32_t n, cb_graph_scratch *s)
{
    float *out = &SR(s, params, p->out[0], 0);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i) {
        float x = SR(s, params, p->in[0], i), y = SR(s, params, p->in[1], i);
        if (x * x + y * y >= p->b * p->b) {
            s->cidx[m] = i;
            s->qa[m] = cb_det_atan2f(y, x);
            float q = out[i];
            s->qstate[m] = (uint8_t)(q >= 0.0f && q <= 4.0f ? q : 0.0f);
            m++;
        }
    }
    size_t bad = cb_params_quadrant_unchecked(s->qa, m, p->a, s->qstate);
    for (uint32_t j = 0; j < m; ++j) {
        out[s->cidx[j]] = (float)s->qstate[j];
    }
    return bad;
}

static void run_processors(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                           float dt, cb_graph_scratch *s, cb_graph_scratch_stats *st)
{
    for (uint32_t k = 0; k < g->proc_count; ++k) {
        const gproc *p = &g->procs[k];
        if (p->type == GPROC_VELOCITY_BLEND) {
            st->nonfinite_params += velocity_blend(p, n, s);
        } else if (p->type == GPROC_INTERP_TO) {
            float *cur = &SR(s, params, p->out[0], 0);
            st->nonfinite_params +=
                cb_params_interp_to_unchecked(cur, &SR(s, params, p->in[0], 0), n, dt, p->a, cur);
        } else {
            st->nonfinite_params += quadrant(p, n, s);
        }
        /* Processor outputs are state: they persist in the block. */
        for (int o = 0; o < 5; ++o) {
            if (p->out[o] != GNONE) {
                memcpy(&AT(b, params, p->out[o], first), &SR(s, params, p->out[o], 0),
                       n * sizeof(float));
            }
        }
    }
}

void cb_graph_stage_params(const cb_graph *g, cb_graph_block *b, const cb_graph_param_source *src,
                           uint32_t first, uint32_t n, float dt, cb_graph_scratch *s,
                           cb_graph_scratch_stats *st)
{
    read_params(g, b, src, first, n, s, st);
    run_processors(g, b, first, n, dt, s, st);
    for (uint32_t p = 0; p < g->param_count; ++p) {
        if (g->params[p].is_weight) {
            for (uint32_t i = 0; i < n; ++i) {
                float v = SR(s, params, p, i);
                st->clamped_weights += !(v >= 0.0f && v <= 1.0f);
            }
        }
    }
}
