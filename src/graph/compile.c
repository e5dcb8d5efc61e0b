/* The graph compiler: what a builder collected, as the flat program every character of the graph
 * shares (graph_impl.h). cb_graph_build runs the passes of compile.h in order; each leaves what
 * it allocated in the compile state, and one cleanup path frees it, so a build that fails at any
 * point (an allocation, a sync group whose clips disagree) leaks nothing and leaves the builder
 * as it was: the solvers move to the graph only once nothing can fail any more. */
#include <stdio.h>
#include <string.h>

#include "crowdblend/sync.h"
#include "graph/compile.h"
#include "graph/runtime.h"

/* ------------------------------------------------------------------------------------------ */
/* Renumber                                                                                   */

/* An additive clip belongs only in an additive layer: edge e of builder node n may hold one. */
static bool additive_edge(const cb_graph_builder *b, const bnode *n, uint32_t e)
{
    return n->n.type == GNODE_LAYERS && e > 0 &&
           VEC_AT(b->layers, glayer, n->n.u.layers.first_layer + e - 1).mode == CB_LAYER_ADDITIVE;
}

cb_result cb_graph_pass_renumber(cb_graph_compile *c)
{
    cb_graph_builder *b = c->b;
    c->total = (uint32_t)b->nodes.count;
    c->root = b->root != GNONE ? b->root : c->total - 1;
    const bnode *rn = &VEC_AT(b->nodes, bnode, c->root);
    if (rn->n.type == GNODE_CLIP && rn->additive_clip) {
        return cb_error_set(c->err, CB_ERR_MISMATCH,
                            "the root '%s' plays an additive clip: it belongs in an additive layer",
                            rn->n.name);
    }
    c->newid = cb_alloc(&b->allocator, c->total * sizeof(uint32_t), 16);
    if (c->newid == NULL) {
        return cb_error_set(c->err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build");
    }
    /* Children have smaller indices than their parents, so one pass down from the root marks
     * everything it reaches, and the marked nodes in descending index are parents first. */
    for (uint32_t i = 0; i < c->total; ++i) {
        c->newid[i] = GNONE;
    }
    c->newid[c->root] = 0;
    for (uint32_t i = c->root + 1; i-- > 0;) {
        if (c->newid[i] == GNONE) {
            continue;
        }
        const bnode *n = &VEC_AT(b->nodes, bnode, i);
        for (uint32_t e = 0; e < n->n.edge_count; ++e) {
            uint32_t child = VEC_AT(b->edges, gedge, n->n.first_edge + e).child;
            const bnode *cn = &VEC_AT(b->nodes, bnode, child);
            if (cn->n.type == GNODE_CLIP && cn->additive_clip && !additive_edge(b, n, e)) {
                return cb_error_set(c->err, CB_ERR_MISMATCH,
                                    "node '%s' uses additive clip node '%s' outside an additive "
                                    "layer",
                                    n->n.name, cn->n.name);
            }
            c->newid[child] = 0;
        }
    }
    for (uint32_t i = c->root + 1; i-- > 0;) {
        if (c->newid[i] != GNONE) {
            const bnode *n = &VEC_AT(b->nodes, bnode, i);
            c->newid[i] = c->node_count++;
            c->edge_count += n->n.edge_count;
            c->clip_count += n->n.type == GNODE_CLIP;
        }
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Layout                                                                                     */

/* The graph's one allocation: each array at a 64-byte boundary after the struct. */
typedef struct layout {
    size_t params, procs, nodes, edges, blend_params, layers, sms, states, transitions, conditions,
        iks, clip_nodes, clip_states, clips, flat_order, flat_slot, layer_slot, masks, total;
} layout;

static size_t take(size_t *cursor, size_t bytes)
{
    size_t at = *cursor;
    *cursor += cb_round_up(bytes, 64);
    return at;
}

static layout layout_of(const cb_graph_compile *c, size_t soa)
{
    const cb_graph_builder *b = c->b;
    size_t clips = c->clip_count ? c->clip_count : 1;
    layout L;
    size_t cur = cb_round_up(sizeof(struct cb_graph), 64);
    L.params = take(&cur, b->params.count * sizeof(gparam));
    L.procs = take(&cur, b->procs.count * sizeof(gproc));
    L.nodes = take(&cur, c->node_count * sizeof(gnode));
    L.edges = take(&cur, c->edge_count * sizeof(gedge));
    L.blend_params = take(&cur, b->blend_params.count * sizeof(uint32_t));
    L.layers = take(&cur, b->layers.count * sizeof(glayer));
    L.sms = take(&cur, b->sms.count * sizeof(gsm));
    L.states = take(&cur, b->states.count * sizeof(gstate));
    L.transitions = take(&cur, b->transitions.count * sizeof(gtransition));
    L.conditions = take(&cur, b->conditions.count * sizeof(gcondition));
    L.iks = take(&cur, b->iks.count * sizeof(gik));
    L.clip_nodes = take(&cur, c->clip_count * sizeof(uint32_t));
    L.clip_states = take(&cur, c->clip_count * sizeof(gclip_states));
    L.clips = take(&cur, c->clip_count * sizeof(gclip));
    L.flat_order = take(&cur, clips * sizeof(uint32_t));
    L.flat_slot = take(&cur, clips * sizeof(uint32_t));
    L.layer_slot = take(&cur, (b->layers.count ? b->layers.count : 1) * sizeof(uint32_t));
    L.masks = take(&cur, b->layers.count * soa * sizeof(float));
    L.total = cur;
    return L;
}

/* Copies a builder vector's items (memcpy from a NULL vector is undefined even for 0 bytes). */
static uint32_t copy_all(void *dst, const vec *v)
{
    if (v->count > 0) {
        memcpy(dst, v->data, v->count * v->elem);
    }
    return (uint32_t)v->count;
}

/* Reachable machines only, renumbered; inertializing ones get their offset slots. */
static void layout_machines(cb_graph_compile *c)
{
    cb_graph *g = c->g;
    for (uint32_t s = 0; s < c->b->sms.count; ++s) {
        gsm sm = VEC_AT(c->b->sms, gsm, s);
        c->sm_newid[s] = GNONE;
        if (c->newid[sm.node] == GNONE) {
            continue;
        }
        sm.node = c->newid[sm.node];
        if (sm.inert_slot != GNONE) {
            sm.inert_slot = g->inert_count++;
        }
        c->sm_newid[s] = g->sm_count;
        g->sms[g->sm_count++] = sm;
    }
}

/* Nodes and edges in the new order (children renumbered), then the clip slots: clips keep the
 * order they were added in, which hosts read clip times and weights by. */
static void layout_nodes(cb_graph_compile *c)
{
    cb_graph *g = c->g;
    uint32_t edge_at = 0;
    for (uint32_t i = c->root + 1; i-- > 0;) {
        if (c->newid[i] == GNONE) {
            continue;
        }
        const bnode *bn = &VEC_AT(c->b->nodes, bnode, i);
        gnode *n = &g->nodes[c->newid[i]];
        *n = bn->n;
        n->first_edge = edge_at;
        for (uint32_t e = 0; e < bn->n.edge_count; ++e) {
            gedge ed = VEC_AT(c->b->edges, gedge, bn->n.first_edge + e);
            ed.child = c->newid[ed.child];
            g->edges[edge_at++] = ed;
        }
        if (n->type == GNODE_SM) {
            n->u.sm.sm = c->sm_newid[n->u.sm.sm];
        } else if (n->type == GNODE_BLEND && n->u.blend.param_count > g->max_blend_params) {
            g->max_blend_params = n->u.blend.param_count;
        }
    }
    g->node_count = c->node_count;
    g->edge_count = c->edge_count;
    for (uint32_t i = 0; i <= c->root; ++i) {
        if (c->newid[i] != GNONE && g->nodes[c->newid[i]].type == GNODE_CLIP) {
            g->nodes[c->newid[i]].u.clip.slot = g->clip_count;
            g->clip_nodes[g->clip_count++] = c->newid[i];
        }
    }
}

cb_result cb_graph_pass_layout(cb_graph_compile *c)
{
    const cb_graph_builder *b = c->b;
    size_t soa = cb_skeleton_soa_joint_count(b->skeleton);
    layout L = layout_of(c, soa);
    char *m = cb_alloc_zeroed(&b->allocator, L.total, 64);
    if (m == NULL) {
        return cb_error_set(c->err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build: %zu bytes", L.total);
    }
    cb_graph *g = c->g = (cb_graph *)m;
    g->allocator = b->allocator;
    g->memory = m;
    g->memory_bytes = L.total;
    snprintf(g->name, sizeof g->name, "%s", b->name);
    g->skeleton = b->skeleton;
    g->joint_count = cb_skeleton_joint_count(b->skeleton);
    g->soa_joint_count = soa;
    g->group_count = cb_skeleton_group_count(b->skeleton);
    g->params = (gparam *)(m + L.params);
    g->procs = (gproc *)(m + L.procs);
    g->nodes = (gnode *)(m + L.nodes);
    g->edges = (gedge *)(m + L.edges);
    g->blend_params = (uint32_t *)(m + L.blend_params);
    g->layers = (glayer *)(m + L.layers);
    g->sms = (gsm *)(m + L.sms);
    g->states = (gstate *)(m + L.states);
    g->transitions = (gtransition *)(m + L.transitions);
    g->conditions = (gcondition *)(m + L.conditions);
    g->iks = (gik *)(m + L.iks);
    g->clip_nodes = (uint32_t *)(m + L.clip_nodes);
    g->clip_states = (gclip_states *)(m + L.clip_states);
    g->clips = (gclip *)(m + L.clips);
    g->flat_order = (uint32_t *)(m + L.flat_order);
    g->flat_slot = (uint32_t *)(m + L.flat_slot);
    g->layer_slot = (uint32_t *)(m + L.layer_slot);
    float *masks = (float *)(m + L.masks);

    g->param_count = copy_all(g->params, &b->params);
    g->proc_count = copy_all(g->procs, &b->procs);
    g->blend_param_count = copy_all(g->blend_params, &b->blend_params);
    g->condition_count = copy_all(g->conditions, &b->conditions);
    g->transition_count = copy_all(g->transitions, &b->transitions);
    g->state_count = copy_all(g->states, &b->states);
    g->ik_count = copy_all(g->iks, &b->iks);
    g->lod_param = b->lod_param;
    g->layer_count = copy_all(g->layers, &b->layers);
    for (uint32_t l = 0; l < g->layer_count; ++l) {
        g->layers[l].node = c->newid[g->layers[l].node];
        if (g->layers[l].mask != NULL) {
            memcpy(masks + l * soa, g->layers[l].mask, soa * sizeof(float));
            g->layers[l].mask = masks + l * soa;
        }
    }
    for (uint32_t s = 0; s < g->state_count; ++s) {
        g->states[s].node = c->newid[g->states[s].node];
    }
    layout_machines(c);
    layout_nodes(c);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Sync groups                                                                                */

/* Node id passes its context to its children (the first parent to reach a child wins). */
static void pass_down(cb_graph_compile *c, uint32_t id, uint32_t group)
{
    const gnode *n = &c->g->nodes[id];
    for (uint32_t e = 0; e < n->edge_count; ++e) {
        const gedge *ed = &c->g->edges[n->first_edge + e];
        uint32_t ch = ed->child;
        c->base[ch] = c->base[ch] || (c->base[id] && ed->root_motion);
        if (c->seen[ch]) {
            continue;
        }
        c->seen[ch] = true;
        bool fresh = n->type == GNODE_SM || (n->type == GNODE_LAYERS && e > 0);
        c->group_of[ch] = fresh ? GNONE : group;
        gclip_states *cs = &c->states_of[ch];
        *cs = c->states_of[id];
        if (n->type == GNODE_SM && cs->count < GCLIP_MAX_SM_DEPTH) {
            cs->sm[cs->count] = n->u.sm.sm;
            cs->state[cs->count] = e;
            cs->count++;
        }
    }
}

/* Per clip slot: the copy the time stage reads, its machines and states, whether it moves the
 * character; and whether every rate of the graph is 1. */
static void finish_clips(cb_graph_compile *c)
{
    cb_graph *g = c->g;
    g->uniform_rate = true;
    g->moves_root = false;
    for (uint32_t s = 0; s < g->state_count; ++s) {
        g->uniform_rate = g->uniform_rate && g->states[s].speed == 1.0f;
    }
    for (uint32_t n = 0; n < g->node_count; ++n) {
        g->uniform_rate = g->uniform_rate && !(g->nodes[n].type == GNODE_BLEND &&
                                               g->nodes[n].u.blend.warp_param != GNONE);
    }
    for (uint32_t s = 0; s < g->clip_count; ++s) {
        uint32_t node = g->clip_nodes[s];
        gclip *clip = &g->nodes[node].u.clip;
        g->clip_states[s] = c->states_of[node];
        clip->node = node;
        clip->base_path = c->base[node];
        clip->moves_root = clip->base_path;
        g->moves_root =
            g->moves_root ||
            (clip->moves_root && cb_clip_query_root_motion(clip->clip).mode != CB_ROOT_MOTION_NONE);
        g->uniform_rate = g->uniform_rate && clip->speed == 1.0f && clip->speed_param == GNONE;
        g->clips[s] = *clip;
    }
    for (uint32_t l = 0; l < g->layer_count; ++l) {
        uint32_t node = g->layers[l].node;
        g->layer_slot[l] =
            node != GNONE && g->nodes[node].type == GNODE_CLIP ? g->nodes[node].u.clip.slot : GNONE;
    }
}

cb_result cb_graph_pass_sync_groups(cb_graph_compile *c)
{
    const cb_allocator *a = &c->b->allocator;
    cb_graph *g = c->g;
    size_t n = c->node_count;
    c->group_of = cb_alloc(a, n * sizeof(uint32_t), 16);
    c->states_of = cb_alloc_zeroed(a, n * sizeof(gclip_states), 16);
    c->seen = cb_alloc_zeroed(a, n, 16);
    c->base = cb_alloc_zeroed(a, n, 16);
    if (c->group_of == NULL || c->states_of == NULL || c->seen == NULL || c->base == NULL) {
        return cb_error_set(c->err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build");
    }
    uint32_t named = (uint32_t)c->b->groups.count, next = named;
    c->group_of[0] = GNONE;
    c->seen[0] = c->base[0] = true;
    /* Descending builder indices are ascending graph indices: parents before children. */
    for (uint32_t i = c->root + 1; i-- > 0;) {
        uint32_t id = c->newid[i];
        if (id == GNONE) {
            continue;
        }
        gnode *node = &g->nodes[id];
        const bnode *bn = &VEC_AT(c->b->nodes, bnode, i);
        uint32_t group = c->group_of[id];
        /* A blend space's clips keep in step by default; a direct node's children do not (they
         * keep the group of the blend space above, if any). */
        if (node->type == GNODE_BLEND &&
            cb_solver_query_kind(node->u.blend.solver) != CB_SOLVER_KIND_DIRECT) {
            group = bn->explicit_group != GNONE ? bn->explicit_group : next++;
            if (bn->explicit_group == GNONE) {
                c->group_owner[group - named] = id;
            }
        } else if (node->type == GNODE_CLIP) {
            node->u.clip.group = bn->explicit_group != GNONE ? bn->explicit_group : group;
        }
        pass_down(c, id, group);
    }
    g->group_count_sync = next;
    finish_clips(c);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Flat detection                                                                             */

static bool is_child(const cb_graph *g, const gnode *n, uint32_t node)
{
    for (uint32_t e = 0; e < n->edge_count; ++e) {
        if (g->edges[n->first_edge + e].child == node) {
            return true;
        }
    }
    return false;
}

/* How many clips sync group grp has. */
static uint32_t clips_in_group(const cb_graph *g, uint32_t grp)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < g->clip_count; ++s) {
        n += g->clips[s].group == grp;
    }
    return n;
}

/* The blend's children: clips, each once, of one sync group or each alone in a group of its
 * own (as an idle kept out of the walks' group), and no other clip in the one group. The time
 * stage lists and advances every group alike. */
static bool clips_of_one_group(const cb_graph *g, const gnode *bn, uint32_t *group)
{
    *group = GNONE;
    for (uint32_t e = 0; e < bn->edge_count; ++e) {
        uint32_t child = g->edges[bn->first_edge + e].child;
        const gnode *cn = &g->nodes[child];
        if (cn->type != GNODE_CLIP || cn->u.clip.group == GNONE) {
            return false;
        }
        if (clips_in_group(g, cn->u.clip.group) > 1) {
            if (*group != GNONE && cn->u.clip.group != *group) {
                return false;
            }
            *group = cn->u.clip.group;
        }
        for (uint32_t f = 0; f < e; ++f) {
            if (g->edges[bn->first_edge + f].child == child) {
                return false;
            }
        }
    }
    for (uint32_t s = 0; s < g->clip_count; ++s) {
        if (*group != GNONE && g->clips[s].group == *group && !is_child(g, bn, g->clips[s].node)) {
            return false;
        }
    }
    return true;
}

/* Every layer of the layers node over the blend plays a clip of no sync group. */
static bool layers_of_clips(const cb_graph *g, const gnode *ln)
{
    const glayer *first = &g->layers[ln->u.layers.first_layer];
    for (uint32_t l = 0; l < ln->u.layers.layer_count; ++l) {
        const gnode *cn = &g->nodes[first[l].node];
        if (cn->type != GNODE_CLIP || cn->u.clip.group != GNONE) {
            return false;
        }
        for (uint32_t m = 0; m < l; ++m) { /* one clip in two layers: blended once per layer */
            if (first[m].node == first[l].node) {
                return false;
            }
        }
    }
    return true;
}

void cb_graph_pass_flat(cb_graph_compile *c)
{
    cb_graph *g = c->g;
    uint32_t blend = 0, layers = GNONE;
    if (g->nodes[0].type == GNODE_LAYERS) {
        layers = 0;
        blend = g->edges[g->nodes[0].first_edge].child;
    }
    const gnode *bn = &g->nodes[blend];
    uint32_t group = GNONE;
    /* Any rate the flat time stage gives as the general path does: the clips' own speeds and
     * speed parameters and the blend's warp (a flat graph has no other blend node to warp), but
     * no state's speed. */
    g->flat = g->sm_count == 0 && g->state_count == 0 && bn->type == GNODE_BLEND &&
              clips_of_one_group(g, bn, &group) &&
              (layers == GNONE || layers_of_clips(g, &g->nodes[layers]));
    g->flat_blend = blend;
    g->flat_layers = layers;
    g->flat_group = group;
    if (!g->flat) {
        return;
    }
    /* The blend's edges in slot order: the order the time stage visits the clips in. */
    uint32_t k = 0;
    for (uint32_t s = 0; s < g->clip_count; ++s) {
        for (uint32_t e = 0; e < bn->edge_count; ++e) {
            if (g->edges[bn->first_edge + e].child == g->clips[s].node) {
                g->flat_order[k++] = e;
                g->flat_slot[e] = s;
            }
        }
    }
    g->flat_in_order = true;
    for (uint32_t e = 0; e < bn->edge_count; ++e) {
        g->flat_in_order = g->flat_in_order && g->flat_order[e] == e;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Sync tables                                                                                */

/* The next sync marker of a clip at or after *i whose name is among `names`; false at the
 * end. */
static bool next_sync_marker(const cb_clip *clip, size_t *i, const uint32_t *names,
                             size_t name_count, cb_clip_marker *out)
{
    for (size_t n = cb_clip_marker_count(clip); *i < n;) {
        cb_clip_query_marker(clip, (*i)++, out);
        for (size_t q = 0; q < name_count && !out->event_only; ++q) {
            if (out->name_hash == names[q]) {
                return true;
            }
        }
    }
    return false;
}

/* Whether every clip has the sync markers `names` at the same normalized times, in the same
 * order: then syncing on them is syncing by normalized time, which costs nothing per frame (the
 * embedded walks and runs all plant the left foot at 0 and the right at 0.5). */
static bool same_layout(const cb_clip *const *clips, size_t count, const uint32_t *names,
                        size_t name_count)
{
    for (size_t c = 1; c < count; ++c) {
        size_t i = 0, k = 0;
        cb_clip_marker a = {0}, m = {0};
        bool more_a, more_m;
        do {
            more_a = next_sync_marker(clips[0], &i, names, name_count, &a);
            more_m = next_sync_marker(clips[c], &k, names, name_count, &m);
            if (more_a != more_m || (more_a && (a.name_hash != m.name_hash || a.time != m.time))) {
                return false;
            }
        } while (more_a);
    }
    return true;
}

/* Scratch of the sync-table pass. */
typedef struct sync_scratch {
    const cb_clip **members; /* clip_count: the distinct clips of one group */
    uint32_t *names;         /* CB_CLIP_MAX_MARKERS */
} sync_scratch;

/* The sync names of group grp into s->names: 0 when it syncs by normalized time. */
static cb_result group_names(cb_graph_compile *c, sync_scratch *s, uint32_t grp, uint32_t *count)
{
    const cb_graph *g = c->g;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->clip_count; ++i) {
        bool dup = false;
        for (uint32_t q = 0; q < k; ++q) {
            dup = dup || s->members[q] == g->clips[i].clip;
        }
        if (g->clips[i].group == grp && !dup) {
            s->members[k++] = g->clips[i].clip;
        }
    }
    *count = 0;
    cb_error inner = {0};
    cb_result r = k > 1 ? cb_sync_group_names(s->members, k, NULL, s->names, CB_CLIP_MAX_MARKERS,
                                              count, &inner)
                        : CB_OK;
    if (r != CB_OK) {
        uint32_t named = (uint32_t)c->b->groups.count;
        const char *label = grp < named ? VEC_AT(c->b->groups, bgroup, grp).name
                                        : g->nodes[c->group_owner[grp - named]].name;
        return cb_error_set(c->err, r, "sync group '%s': %s", label, inner.message);
    }
    if (*count > 0 && same_layout(s->members, k, s->names, *count)) {
        *count = 0; /* markers at the same normalized times: normalized sync is exact */
    }
    return CB_OK;
}

/* Each clip's marker times, for the runtime's quick "nothing crossed" test; and whether its
 * activity flag is read: a free clip's own time continues from where it was, a follower of a
 * marker-synced group joins in step; a clip of a group synced by normalized time shows the
 * group's time whether or not it played (only events then ask whether it starts). */
static void marker_times(cb_graph *g)
{
    size_t at = 0;
    for (uint32_t i = 0; i < g->clip_count; ++i) {
        gclip *clip = &g->clips[i];
        clip->track_activity = clip->group == GNONE || g->sync_count[clip->group] > 0;
        clip->marker_first = (uint32_t)at;
        clip->marker_count = cb_clip_marker_count(clip->clip);
        for (uint32_t m = 0; m < clip->marker_count; ++m) {
            cb_clip_marker mk;
            cb_clip_query_marker(clip->clip, m, &mk);
            g->marker_times[at++] = mk.time;
        }
    }
}

cb_result cb_graph_pass_sync_tables(cb_graph_compile *c)
{
    const cb_allocator *a = &c->b->allocator;
    cb_graph *g = c->g;
    uint32_t gc = g->group_count_sync;
    size_t clips = g->clip_count ? g->clip_count : 1;
    sync_scratch s = {cb_alloc(a, clips * sizeof(cb_clip *), 16),
                      cb_alloc(a, CB_CLIP_MAX_MARKERS * sizeof(uint32_t), 16)};
    cb_result r = s.members != NULL && s.names != NULL
                      ? CB_OK
                      : cb_error_set(c->err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build");
    /* Sizes first (the names per group are known only once computed), then the allocation. */
    size_t names = 0, markers = 0;
    uint32_t count = 0;
    for (uint32_t grp = 0; grp < gc && r == CB_OK; ++grp) {
        r = group_names(c, &s, grp, &count);
        names += count;
    }
    for (uint32_t i = 0; i < g->clip_count; ++i) {
        markers += cb_clip_marker_count(g->clips[i].clip);
    }
    if (r == CB_OK) {
        g->sync_bytes = (2 * (size_t)gc + names + markers) * sizeof(uint32_t);
        g->sync_first = cb_alloc(a, g->sync_bytes ? g->sync_bytes : 4, 16);
        if (g->sync_first == NULL) {
            r = cb_error_set(c->err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build");
        }
    }
    if (r == CB_OK) {
        g->sync_count = g->sync_first + gc;
        g->sync_hashes = g->sync_count + gc;
        g->marker_times = (float *)(g->sync_hashes + names);
        names = 0;
        for (uint32_t grp = 0; grp < gc; ++grp) {
            group_names(c, &s, grp, &count); /* succeeded above */
            g->sync_first[grp] = (uint32_t)names;
            g->sync_count[grp] = (uint32_t)count;
            memcpy(g->sync_hashes + names, s.names, count * sizeof(uint32_t));
            names += count;
        }
        marker_times(g);
    }
    cb_free(a, s.members, clips * sizeof(cb_clip *));
    cb_free(a, s.names, CB_CLIP_MAX_MARKERS * sizeof(uint32_t));
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Pose depth                                                                                 */

void cb_graph_pass_pose_depth(cb_graph_compile *c)
{
    cb_graph *g = c->g;
    /* A node that cannot be flattened into one fused blend needs its own pose and its inputs'
     * (runtime/pose.c); a machine capturing the pose of an interrupted crossfade holds three.
     * Bottom-up over the parents-first order, reusing the sync-group scratch. */
    uint32_t *need = c->group_of;
    for (uint32_t id = g->node_count; id-- > 0;) {
        const gnode *n = &g->nodes[id];
        uint32_t deepest = 0;
        for (uint32_t e = 0; e < n->edge_count; ++e) {
            uint32_t ch = g->edges[n->first_edge + e].child;
            deepest = need[ch] > deepest ? need[ch] : deepest;
        }
        need[id] = n->type == GNODE_CLIP ? 0 : deepest + (n->type == GNODE_SM ? 3 : 2);
    }
    g->max_pose_depth = need[0] + 2;
    g->max_entries = g->clip_count + g->layer_count + 1;
}

/* ------------------------------------------------------------------------------------------ */
/* The build                                                                                  */

static void free_scratch(cb_graph_compile *c)
{
    const cb_allocator *a = &c->b->allocator;
    cb_free(a, c->newid, c->total * sizeof(uint32_t));
    cb_free(a, c->group_of, c->node_count * sizeof(uint32_t));
    cb_free(a, c->states_of, c->node_count * sizeof(gclip_states));
    cb_free(a, c->seen, c->node_count);
    cb_free(a, c->base, c->node_count);
    c->newid = c->group_of = NULL;
    c->states_of = NULL;
    c->seen = c->base = NULL;
}

void cb_graph_compile_finish(cb_graph_compile *c, cb_graph **out)
{
    /* The graph takes the reachable nodes' solvers (their builder copies are cleared); the
     * builder still frees those of unreachable nodes, and refuses to build again. */
    for (uint32_t i = 0; i <= c->root; ++i) {
        bnode *n = &VEC_AT(c->b->nodes, bnode, i);
        if (c->newid[i] != GNONE && n->n.type == GNODE_BLEND) {
            n->n.u.blend.solver = NULL;
        }
    }
    free_scratch(c);
    c->b->built = true;
    *out = c->g;
    c->g = NULL;
}

void cb_graph_compile_abandon(cb_graph_compile *c)
{
    free_scratch(c);
    if (c->g != NULL) {
        cb_graph_free_foot_tables(c->g, &c->b->allocator);
        cb_free(&c->b->allocator, c->g->sync_first, c->g->sync_bytes ? c->g->sync_bytes : 4);
        cb_free(&c->b->allocator, c->g->memory, c->g->memory_bytes);
        c->g = NULL;
    }
}

cb_result cb_graph_build(cb_graph_builder *b, cb_graph **out, cb_error *err)
{
    if (b == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_graph_build: builder or out is NULL");
    }
    if (b->built) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "graph '%s': the builder has already built it", b->name);
    }
    if (b->nodes.count == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW, "graph '%s' has no node", b->name);
    }
    for (size_t k = 0; k < b->iks.count; ++k) {
        if (VEC_AT(b->iks, gik, k).lod_limited && b->lod_param == GNONE) {
            return cb_error_set(err, CB_ERR_NOT_FOUND,
                                "graph '%s': post-process step %zu has a max_lod, but the graph "
                                "names no LOD parameter (cb_graph_set_lod_param, \"lod_param\")",
                                b->name, k);
        }
    }
    cb_graph_compile c = {.b = b, .err = err};
    cb_result r;
    if ((r = cb_graph_pass_renumber(&c)) != CB_OK || (r = cb_graph_pass_layout(&c)) != CB_OK ||
        (r = cb_graph_pass_sync_groups(&c)) != CB_OK) {
        goto fail;
    }
    cb_graph_pass_flat(&c);
    if ((r = cb_graph_pass_sync_tables(&c)) != CB_OK ||
        (r = cb_graph_pass_foot_tables(&c)) != CB_OK) {
        goto fail;
    }
    cb_graph_pass_pose_depth(&c);
    cb_graph_compile_finish(&c, out);
    return CB_OK;
fail:
    cb_graph_compile_abandon(&c);
    return r;
}

void cb_graph_use(const cb_graph *g)
{
    atomic_fetch_add(&((cb_graph *)g)->users, 1);
}

void cb_graph_unuse(const cb_graph *g)
{
    atomic_fetch_sub(&((cb_graph *)g)->users, 1);
}

cb_result cb_graph_destroy(cb_graph *g)
{
    if (g == NULL) {
        return CB_OK;
    }
    if (atomic_load(&g->users) != 0) {
        return CB_ERR_IN_USE;
    }
    for (uint32_t i = 0; i < g->node_count; ++i) {
        if (g->nodes[i].type == GNODE_BLEND) {
            cb_solver_destroy(g->nodes[i].u.blend.solver);
        }
    }
    cb_allocator a = g->allocator;
    cb_graph_free_foot_tables(g, &a);
    cb_free(&a, g->sync_first, g->sync_bytes ? g->sync_bytes : 4);
    cb_free(&a, g->memory, g->memory_bytes);
    return CB_OK;
}
