/* Stage 4: the pose, per character. Where a subtree is one weighted mean of clip samples (no
 * crossfade, inertialization or non-clip layer below) it is flattened into the entries of one
 * fused sample + blend; elsewhere it is evaluated node by node on a small stack of poses:
 * crossfades by slerp, inertialization (inertial.c), layers of whole subtrees. The kernels are
 * the pose module's unchecked ones: every entry comes from the checked graph. */
#include "graph/runtime/runtime_impl.h"
#include "pose/pose_kernels.h"
#include "simd/simd_kernels.h"

/* The pose buffer of an evaluation depth: 0 is the character's result, deeper ones the stack
 * above the chunk's poses. */
static cb_xform_group *slot(const pose_ctx *x, uint32_t depth)
{
    return depth == 0 ? x->root_out : pose_at(x->g, x->s, x->s->chunk + depth - 1);
}

/* The NORMAL entry of a clip at a weight. */
static cb_blend_entry clip_entry(const pose_ctx *x, const gclip *clip, float weight)
{
    return (cb_blend_entry){
        .clip = clip->clip,
        .time = AT(x->b, clip_time, clip->slot, x->ch),
        .weight = weight,
    };
}

/* Appends the NORMAL entries of a subtree scaled by `weight`; false if the subtree cannot be
 * one weighted mean of clip samples (a crossfade, inertialization or layers below). */
static bool flatten(pose_ctx *x, uint32_t id, float weight)
{
    const cb_graph *g = x->g;
    const gnode *n = &g->nodes[id];
    switch (n->type) {
    case GNODE_CLIP:
        if (x->entries == x->capacity) {
            return false;
        }
        x->s->entries[x->entries++] = clip_entry(x, &g->clips[n->u.clip.slot], weight);
        return true;
    case GNODE_BLEND:
        for (uint32_t e = 0; e < n->edge_count; ++e) {
            float share = SR(x->s, ew, n->first_edge + e, x->i);
            if (share * weight > EPS &&
                !flatten(x, g->edges[n->first_edge + e].child, weight * share)) {
                return false;
            }
        }
        return true;
    case GNODE_SM: {
        uint32_t m = n->u.sm.sm;
        if (AT(x->b, sm_next, m, x->ch) != NO_STATE) {
            return false;
        }
        const gstate *st = &g->states[g->sms[m].first_state + AT(x->b, sm_current, m, x->ch)];
        return flatten(x, st->node, weight);
    }
    case GNODE_LAYERS:
        return false;
    }
    return false;
}

static void run_blend(pose_ctx *x, cb_xform_group *out)
{
    x->k->blend(x->g->skeleton, x->s->entries, x->entries, CB_BLEND_DEFAULT_THRESHOLD, out);
}

static cb_blend_entry layer_entry(const pose_ctx *x, const glayer *l, float w)
{
    const gclip *c = &x->g->clips[x->g->layer_slot[l - x->g->layers]];
    return (cb_blend_entry){
        .clip = c->clip,
        .time = AT(x->b, clip_time, c->slot, x->ch),
        .weight = w,
        .mode = l->mode == CB_LAYER_ADDITIVE ? CB_BLEND_MODE_ADDITIVE : CB_BLEND_MODE_OVERRIDE,
        .mask = {l->mask, l->mask != NULL ? x->g->soa_joint_count : 0},
    };
}

/* The entries of a layers node's layers (every one a clip), after the base's: those with
 * weight, in order. */
static void add_layer_entries(pose_ctx *x, const gnode *ln)
{
    const glayer *layers = &x->g->layers[ln->u.layers.first_layer];
    for (uint32_t l = 0; l < ln->u.layers.layer_count; ++l) {
        float w = layer_weight_of(x->s, layers[l].weight_param, x->i);
        if (w > 0.0f) {
            x->s->entries[x->entries++] = layer_entry(x, &layers[l], w);
        }
    }
}

static void crossfade(pose_ctx *x, cb_xform_group *a, const cb_xform_group *b, float weight,
                      const float *mask)
{
    cb_pose_crossfade_unchecked(x->g->skeleton, a, b, weight, mask, a);
}

static void eval(pose_ctx *x, uint32_t id, uint32_t depth);

/* A blend of children that cannot all be flattened: each child's pose, mixed in as a running
 * weighted mean (cb_xform_blend_groups of the mix so far and the next child). */
static void eval_children_blend(pose_ctx *x, const gnode *n, uint32_t depth)
{
    cb_xform_group *out = slot(x, depth);
    float total = 0.0f;
    for (uint32_t e = 0; e < n->edge_count; ++e) {
        float share = SR(x->s, ew, n->first_edge + e, x->i);
        if (share <= EPS) {
            continue;
        }
        uint32_t child = x->g->edges[n->first_edge + e].child;
        if (total == 0.0f) {
            eval(x, child, depth);
        } else {
            eval(x, child, depth + 1);
            const cb_xform_group *both[2] = {out, slot(x, depth + 1)};
            const float w[2] = {total, share};
            cb_xform_blend_groups_unchecked(both, w, 2, x->g->group_count, out);
        }
        total += share;
    }
    if (total == 0.0f) {
        /* Nothing weighs anything: the rest pose (a blend of no entries). */
        x->entries = 0;
        run_blend(x, out);
    }
}

static void eval_layers(pose_ctx *x, const gnode *n, uint32_t depth)
{
    const cb_graph *g = x->g;
    cb_xform_group *out = slot(x, depth);
    const glayer *layers = &g->layers[n->u.layers.first_layer];
    uint32_t base = g->edges[n->first_edge].child;
    /* The common case: base flattenable, every layer a clip: one fused job does it all. */
    bool simple = true;
    for (uint32_t l = 0; l < n->u.layers.layer_count; ++l) {
        simple = simple && g->nodes[layers[l].node].type == GNODE_CLIP;
    }
    x->entries = 0;
    if (simple && flatten(x, base, 1.0f) && x->entries + n->u.layers.layer_count <= x->capacity) {
        add_layer_entries(x, n);
        run_blend(x, out);
        return;
    }
    eval(x, base, depth);
    for (uint32_t l = 0; l < n->u.layers.layer_count; ++l) {
        const glayer *ly = &layers[l];
        float w = layer_weight_of(x->s, ly->weight_param, x->i);
        if (w <= 0.0f) {
            continue;
        }
        if (g->nodes[ly->node].type == GNODE_CLIP) {
            cb_blend_entry e = layer_entry(x, ly, w);
            cb_pose_layers_unchecked(g->skeleton, out, &e, 1);
        } else {
            eval(x, ly->node, depth + 1);
            crossfade(x, out, slot(x, depth + 1), w, ly->mask);
        }
    }
}

static void eval_machine(pose_ctx *x, const gnode *n, uint32_t depth)
{
    const cb_graph *g = x->g;
    uint32_t m = n->u.sm.sm;
    const gsm *sm = &g->sms[m];
    cb_graph_block *b = x->b;
    uint16_t cur = AT(b, sm_current, m, x->ch), nxt = AT(b, sm_next, m, x->ch);
    uint32_t cur_node = g->states[sm->first_state + cur].node;
    if (nxt == NO_STATE) {
        eval(x, cur_node, depth);
        return;
    }
    uint32_t next_node = g->states[sm->first_state + nxt].node;
    cb_xform_group *out = slot(x, depth);
    if (!AT(b, sm_inert, m, x->ch)) {
        float a = x->s->alpha[(size_t)m * x->s->batch + x->i];
        eval(x, cur_node, depth);
        /* On its first frame a crossfade shows the source alone (the destination has no weight
         * yet, so nothing was computed for it). */
        if (a > 0.0f) {
            eval(x, next_node, depth + 1);
            crossfade(x, out, slot(x, depth + 1), a, NULL);
        }
        return;
    }
    float *st = inert_of(b, sm->inert_slot, x->ch);
    const gtransition *t = &g->transitions[sm->first_transition + AT(b, sm_transition, m, x->ch)];
    eval(x, next_node, depth);
    uint8_t capture = AT(b, sm_capture, m, x->ch);
    if (capture != CAPTURE_NONE) {
        /* The pose shown last frame: the states' clips have no weight now, so they kept last
         * frame's times. The offsets of an interrupted inertialization are read before they
         * are replaced. */
        uint32_t from = g->states[sm->first_state + AT(b, sm_from_cur, m, x->ch)].node;
        uint16_t from_next = AT(b, sm_from_next, m, x->ch);
        uint32_t from_next_node =
            from_next != NO_STATE ? g->states[sm->first_state + from_next].node : from;
        float shown = AT(b, sm_from_x, m, x->ch);
        cb_xform_group *src = slot(x, depth + 1);
        if (capture == CAPTURE_STATE) {
            eval(x, from, depth + 1);
        } else if (capture == CAPTURE_CROSSFADE) {
            eval(x, from, depth + 1);
            eval(x, from_next_node, depth + 2);
            crossfade(x, src, slot(x, depth + 2), shown, NULL);
        } else {
            eval(x, from_next_node, depth + 1);
            cb_graph_inert_apply(x, st, src, shown);
        }
        cb_graph_inert_capture(x, st, src, out, t->duration_s);
        AT(b, sm_capture, m, x->ch) = CAPTURE_NONE;
    }
    cb_graph_inert_apply(x, st, out, AT(b, sm_elapsed, m, x->ch));
}

static void eval(pose_ctx *x, uint32_t id, uint32_t depth)
{
    const gnode *n = &x->g->nodes[id];
    cb_xform_group *out = slot(x, depth);
    if (n->type != GNODE_LAYERS) {
        x->entries = 0;
        if (flatten(x, id, 1.0f)) {
            run_blend(x, out);
            return;
        }
    }
    switch (n->type) {
    case GNODE_LAYERS:
        eval_layers(x, n, depth);
        break;
    case GNODE_SM:
        eval_machine(x, n, depth);
        break;
    case GNODE_BLEND:
        eval_children_blend(x, n, depth);
        break;
    case GNODE_CLIP:
        break;
    }
}

/* A flat graph's pose: the clips the time stage listed for the character, at their shares, then
 * the layers, in one fused job: the entries flatten() and eval_layers() would build, in the
 * same order (when slot order is not edge order, every edge in edge order, as flatten()). */
void cb_graph_stage_pose_flat(pose_ctx *x)
{
    /* In locals: the entries' stores (pointers, enums) may alias the context's fields, which
     * the loop would otherwise read again per entry. */
    const cb_graph *g = x->g;
    const cb_graph_scratch *s = x->s;
    const gnode *bn = &g->nodes[g->flat_blend];
    const uint8_t *listed = &s->flat_active[(size_t)x->i * g->clip_count];
    const float *shares = &SR(s, ew, bn->first_edge, x->i);
    const float *times = &AT(x->b, clip_time, 0, x->ch);
    const size_t batch = s->batch, capacity = x->b->capacity;
    const bool in_order = g->flat_in_order;
    uint32_t count = in_order ? s->flat_count[x->i] : bn->edge_count, m = 0;
    cb_blend_entry *entries = s->entries;
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t e = in_order ? listed[k] : k;
        float share = shares[e * batch];
        if (share > EPS) {
            const gclip *clip = &g->clips[g->flat_slot[e]];
            /* clip_entry's, read from the locals */
            entries[m++] = (cb_blend_entry){
                .clip = clip->clip, .time = times[clip->slot * capacity], .weight = share};
        }
    }
    x->entries = m;
    if (g->flat_layers != GNONE) {
        add_layer_entries(x, &g->nodes[g->flat_layers]);
    }
    run_blend(x, x->root_out);
}

void cb_graph_stage_pose(pose_ctx *x)
{
    eval(x, 0, 0);
}
