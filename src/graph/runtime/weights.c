/* Stage 2: weights. One pass over the nodes, parents first: each node's influence per character
 * (w) and, unless every rate is 1, its playback rate; each edge's share of its parent. Blend
 * nodes evaluate their solver over the characters that reach them (direct blends are blend
 * nodes with the DIRECT solver: one rule for the solver and the graph), SIMD over characters;
 * state machines step here (machine.c). */
#include <math.h>
#include <string.h>

#include "graph/runtime/runtime_impl.h"

/* A parent's contribution to a child. Rates are tracked only when some node changes speed (most
 * graphs play everything at rate 1). */
void cb_graph_contribute(const cb_graph *g, cb_graph_scratch *s, uint32_t child, uint32_t i,
                         float w, float rate)
{
    /* A weightless contribution (from a shadow parent) marks the child as shadow too. */
    SR(s, shadow, child, i) |= w == 0.0f;
    SR(s, w, child, i) += w;
    if (!g->uniform_rate) {
        SR(s, rate, child, i) += w * rate;
    }
}

/* The shares of blend node `node` for m characters: those of s->cidx, or, when `all`, the first
 * m of the batch, whose parameter rows the solver then reads in place and whose share rows it
 * writes directly (no compaction either way). */
static void blend_shares(const cb_graph *g, const gnode *node, cb_graph_scratch *s, uint32_t m,
                         bool all, const cb_graph_kernels *k, cb_graph_scratch_stats *st)
{
    const gblend *bl = &node->u.blend;
    const float *cols[CB_GRAPH_MAX_CHILDREN];
    for (uint32_t p = 0; p < bl->param_count; ++p) {
        const float *row = &SR(s, params, g->blend_params[bl->first_param + p], 0);
        if (all) {
            cols[p] = row;
            continue;
        }
        float *col = &s->cparams[(size_t)p * s->batch];
        for (uint32_t j = 0; j < m; ++j) {
            col[j] = row[s->cidx[j]];
        }
        cols[p] = col;
    }
    float *out = all ? &SR(s, ew, node->first_edge, 0) : s->cweights;
    st->nonfinite_params += k->solver(bl->solver, cols, m, s->batch, out);
    for (uint32_t e = 0; !all && e < node->edge_count; ++e) {
        const float *cw = &s->cweights[(size_t)e * s->batch];
        float *share = &SR(s, ew, node->first_edge + e, 0);
        for (uint32_t j = 0; j < m; ++j) {
            share[s->cidx[j]] = cw[j];
        }
    }
}

/* The rate of a rate-warped blend node's clips for character i (graph.h cb_graph_rate_warp):
 * the commanded speed over the clips' root speed at rate 1 with this frame's shares, clamped;
 * 1 where the clips with a share do not move the root. The clips in the blend's group move one
 * cycle per weight-averaged duration; a clip in a group of its own, one per its own duration.
 * The root speed is the length of the shares' mean velocity (displacements as vectors, as the
 * crowd blends root motion), not the mean of the clips' speeds. */
float cb_graph_warp_rate(const cb_graph *g, const gnode *node, const cb_graph_scratch *s,
                         uint32_t i)
{
    const gblend *bl = &node->u.blend;
    float gw = 0.0f, gx = 0.0f, gz = 0.0f, gdur = 0.0f, ow = 0.0f, ox = 0.0f, oz = 0.0f;
    for (uint32_t e = 0; e < node->edge_count; ++e) {
        const gedge *ed = &g->edges[node->first_edge + e];
        float share = SR(s, ew, node->first_edge + e, i);
        if (ed->warp_own) {
            ow += share;
            ox += share * (ed->warp_dx / ed->warp_dur);
            oz += share * (ed->warp_dz / ed->warp_dur);
        } else {
            gw += share;
            gx += share * ed->warp_dx;
            gz += share * ed->warp_dz;
            gdur += share * ed->warp_dur;
        }
    }
    /* the shares times the clips' root velocities: v x (gw + ow), as a vector */
    float cycles = gdur > 0.0f ? gw / gdur : 0.0f;
    float vx = ox + gx * cycles, vz = oz + gz * cycles;
    float moved = sqrtf(vx * vx + vz * vz); /* correctly rounded everywhere: the same bits */
    if (!(moved > 0.0f)) {
        return 1.0f;
    }
    /* speed / v; the speed is finite (stage 1) */
    float r = SR(s, params, bl->warp_param, i) * (gw + ow) / moved;
    return r < bl->warp_min ? bl->warp_min : r > bl->warp_max ? bl->warp_max : r;
}

/* Node id's shares and crossfade progress for a character it does not reach: none. The pose
 * stage still evaluates such a node inside a state being faded out, or below a blend, at its
 * share of the parent (its own influence EPS or less): it must not read what its rows of the
 * batch held last, another character's (the bits then depended on the batch and the thread). */
static void unreached(const cb_graph *g, cb_graph_scratch *s, uint32_t id, uint32_t i)
{
    const gnode *node = &g->nodes[id];
    for (uint32_t e = 0; e < node->edge_count; ++e) {
        SR(s, ew, node->first_edge + e, i) = 0.0f;
    }
    if (node->type == GNODE_SM) {
        s->alpha[(size_t)node->u.sm.sm * s->batch + i] = 0.0f;
    }
}

/* The characters of the batch that reach node id (weight above EPS, or a shadow for a capture)
 * into s->cidx; returns their count. Rates become per-unit-weight here. */
static uint32_t reaching(const cb_graph *g, cb_graph_scratch *s, uint32_t id, uint32_t n)
{
    float *w = &SR(s, w, id, 0), *rate = &SR(s, rate, id, 0);
    const uint8_t *shadow = &SR(s, shadow, id, 0);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (w[i] > EPS) {
            rate[i] = g->uniform_rate ? 1.0f : rate[i] / w[i];
            s->cidx[m++] = i;
        } else {
            w[i] = 0.0f;
            if (g->inert_count > 0 && shadow[i]) {
                /* Shares for a capture; weight 0 flows on, so nothing plays. */
                rate[i] = 1.0f;
                s->cidx[m++] = i;
            } else {
                unreached(g, s, id, i);
            }
        }
    }
    return m;
}

void cb_graph_stage_weights(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                            float dt, cb_graph_scratch *s, const cb_graph_kernels *k,
                            cb_graph_scratch_stats *st)
{
    size_t rows = (size_t)g->node_count * s->batch;
    memset(s->w, 0, rows * sizeof(float));
    if (g->inert_count > 0) {
        memset(s->shadow, 0, rows);
    }
    if (!g->uniform_rate) {
        memset(s->rate, 0, rows * sizeof(float));
    }
    for (uint32_t i = 0; i < n; ++i) {
        SR(s, w, 0, i) = 1.0f;
        SR(s, rate, 0, i) = 1.0f;
    }
    for (uint32_t id = 0; id < g->node_count; ++id) {
        const gnode *node = &g->nodes[id];
        if (node->type == GNODE_CLIP) {
            continue; /* leaves: their rate sum is divided in the time stage */
        }
        uint32_t m = reaching(g, s, id, n);
        if (m == 0) {
            continue;
        }
        const float *w = &SR(s, w, id, 0), *rate = &SR(s, rate, id, 0);
        const gedge *edges = &g->edges[node->first_edge];
        if (node->type == GNODE_BLEND) {
            blend_shares(g, node, s, m, m == n, k, st);
        }
        const bool layers = node->type == GNODE_LAYERS;
        const bool warped = node->type == GNODE_BLEND && node->u.blend.warp_param != GNONE;
        const uint32_t edge_count = node->edge_count;
        float *shares = &SR(s, ew, node->first_edge, 0); /* edge e's row at e * batch */
        for (uint32_t j = 0; j < m; ++j) {
            uint32_t i = s->cidx[j];
            if (node->type == GNODE_SM) {
                cb_graph_machine_shares(g, b, node, s, i, first + i, w[i], rate[i], dt);
                continue;
            }
            /* A warped blend's rate replaces the one that reaches it (an absolute speed). */
            float child_rate = warped ? cb_graph_warp_rate(g, node, s, i) : rate[i];
            for (uint32_t e = 0; e < edge_count; ++e) {
                /* Layers: every input at the node's weight; blends: at their share. */
                float *share = &shares[(size_t)e * s->batch + i];
                if (layers) {
                    *share = 1.0f;
                }
                if (*share > 0.0f) {
                    cb_graph_contribute(g, s, edges[e].child, i, w[i] * *share, child_rate);
                }
            }
        }
    }
}

void cb_graph_stage_weights_flat(const cb_graph *g, uint32_t n, cb_graph_scratch *s,
                                 const cb_graph_kernels *k, cb_graph_scratch_stats *st)
{
    /* Every character reaches the blend with weight 1: its shares are the clips' weights (the
     * time and pose stages read them there); layer clips have influence 1. */
    blend_shares(g, &g->nodes[g->flat_blend], s, n, true, k, st);
}
