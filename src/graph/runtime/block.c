/* The per-character state block and the per-thread scratch: their layouts in one allocation
 * each (sized at create; nothing is allocated per frame), a character's start and its move. */
#include <string.h>

#include "graph/runtime/runtime_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* The block                                                                                  */

typedef struct block_layout {
    size_t params, clip_time, clip_active, group_time, group_leader, sm_current, sm_next,
        sm_transition, sm_time, sm_next_time, sm_elapsed, sm_inert, sm_capture, sm_from_cur,
        sm_from_next, sm_from_x, inert, foot_lock, events, event_count, total;
} block_layout;

static size_t take(size_t *cursor, size_t bytes)
{
    size_t at = *cursor;
    *cursor += cb_round_up(bytes, 64);
    return at;
}

static block_layout block_layout_of(const cb_graph *g, uint32_t cap)
{
    block_layout L;
    size_t c = 0, n = cap;
    L.params = take(&c, g->param_count * n * sizeof(float));
    L.clip_time = take(&c, g->clip_count * n * sizeof(float));
    L.clip_active = take(&c, g->clip_count * n);
    L.group_time = take(&c, g->group_count_sync * n * sizeof(float));
    L.group_leader = take(&c, g->group_count_sync * n * sizeof(uint16_t));
    L.sm_current = take(&c, g->sm_count * n * sizeof(uint16_t));
    L.sm_next = take(&c, g->sm_count * n * sizeof(uint16_t));
    L.sm_transition = take(&c, g->sm_count * n * sizeof(uint16_t));
    L.sm_time = take(&c, g->sm_count * n * sizeof(float));
    L.sm_next_time = take(&c, g->sm_count * n * sizeof(float));
    L.sm_elapsed = take(&c, g->sm_count * n * sizeof(float));
    L.sm_inert = take(&c, g->sm_count * n);
    L.sm_capture = take(&c, g->sm_count * n);
    L.sm_from_cur = take(&c, g->sm_count * n * sizeof(uint16_t));
    L.sm_from_next = take(&c, g->sm_count * n * sizeof(uint16_t));
    L.sm_from_x = take(&c, g->sm_count * n * sizeof(float));
    L.inert = take(&c, (size_t)g->inert_count * n * inert_floats(g) * sizeof(float));
    L.foot_lock = take(&c, (size_t)g->lock_leg_count * n * CB_LOCK_FLOATS * sizeof(float));
    L.events = take(&c, n * CB_GRAPH_EVENTS_PER_FRAME * sizeof(cb_graph_event));
    L.event_count = take(&c, n);
    L.total = c;
    return L;
}

size_t cb_graph_block_bytes(const cb_graph *g, uint32_t capacity)
{
    return block_layout_of(g, capacity).total;
}

void cb_graph_block_init(cb_graph_block *b, const cb_graph *g, uint32_t capacity, void *memory)
{
    block_layout L = block_layout_of(g, capacity);
    char *m = memory;
    b->graph = g;
    b->capacity = capacity;
    b->params = (float *)(m + L.params);
    b->clip_time = (float *)(m + L.clip_time);
    b->clip_active = (uint8_t *)(m + L.clip_active);
    b->group_time = (float *)(m + L.group_time);
    b->group_leader = (uint16_t *)(m + L.group_leader);
    b->sm_current = (uint16_t *)(m + L.sm_current);
    b->sm_next = (uint16_t *)(m + L.sm_next);
    b->sm_transition = (uint16_t *)(m + L.sm_transition);
    b->sm_time = (float *)(m + L.sm_time);
    b->sm_next_time = (float *)(m + L.sm_next_time);
    b->sm_elapsed = (float *)(m + L.sm_elapsed);
    b->sm_inert = (uint8_t *)(m + L.sm_inert);
    b->sm_capture = (uint8_t *)(m + L.sm_capture);
    b->sm_from_cur = (uint16_t *)(m + L.sm_from_cur);
    b->sm_from_next = (uint16_t *)(m + L.sm_from_next);
    b->sm_from_x = (float *)(m + L.sm_from_x);
    b->inert = (float *)(m + L.inert);
    b->foot_lock = (float *)(m + L.foot_lock);
    b->events = (cb_graph_event *)(m + L.events);
    b->event_count = (uint8_t *)(m + L.event_count);
    b->bytes = L.total;
}

void cb_graph_block_reset(cb_graph_block *b, uint32_t i, float phase)
{
    const cb_graph *g = b->graph;
    for (uint32_t p = 0; p < g->param_count; ++p) {
        AT(b, params, p, i) = g->params[p].default_value;
    }
    for (uint32_t c = 0; c < g->clip_count; ++c) {
        AT(b, clip_time, c, i) = phase;
        AT(b, clip_active, c, i) = CLIP_FRESH;
    }
    for (uint32_t s = 0; s < g->group_count_sync; ++s) {
        AT(b, group_time, s, i) = phase;
        AT(b, group_leader, s, i) = FRESH_LEADER;
    }
    for (uint32_t m = 0; m < g->sm_count; ++m) {
        AT(b, sm_current, m, i) = (uint16_t)g->sms[m].initial;
        AT(b, sm_next, m, i) = NO_STATE;
        AT(b, sm_transition, m, i) = 0;
        AT(b, sm_time, m, i) = phase;
        AT(b, sm_next_time, m, i) = 0.0f;
        AT(b, sm_elapsed, m, i) = 0.0f;
        AT(b, sm_inert, m, i) = 0;
        AT(b, sm_capture, m, i) = CAPTURE_NONE;
        AT(b, sm_from_cur, m, i) = 0;
        AT(b, sm_from_next, m, i) = NO_STATE;
        AT(b, sm_from_x, m, i) = 0.0f;
    }
    /* No offsets: an inertialization captures its own before it applies them, but a transition
     * interrupted before its capture ran would read these (issue 11: the block is not cleared
     * at create, and a reused slot holds the last character's). */
    for (uint32_t s = 0; s < g->inert_count; ++s) {
        memset(inert_of(b, s, i), 0, inert_floats(g) * sizeof(float));
    }
    for (uint32_t leg = 0; leg < g->lock_leg_count; ++leg) {
        memset(lock_state_of(b, leg, i), 0, CB_LOCK_FLOATS * sizeof(float)); /* nothing held */
    }
    b->event_count[i] = 0; /* events[i] is read only below its count */
}

void cb_graph_block_move(cb_graph_block *b, uint32_t from, uint32_t to)
{
    const cb_graph *g = b->graph;
#define MOVE_ROWS(field, rows)                                                                     \
    for (uint32_t r_ = 0; r_ < (rows); ++r_) {                                                     \
        AT(b, field, r_, to) = AT(b, field, r_, from);                                             \
    }
    MOVE_ROWS(params, g->param_count)
    MOVE_ROWS(clip_time, g->clip_count)
    MOVE_ROWS(clip_active, g->clip_count)
    MOVE_ROWS(group_time, g->group_count_sync)
    MOVE_ROWS(group_leader, g->group_count_sync)
    MOVE_ROWS(sm_current, g->sm_count)
    MOVE_ROWS(sm_next, g->sm_count)
    MOVE_ROWS(sm_transition, g->sm_count)
    MOVE_ROWS(sm_time, g->sm_count)
    MOVE_ROWS(sm_next_time, g->sm_count)
    MOVE_ROWS(sm_elapsed, g->sm_count)
    MOVE_ROWS(sm_inert, g->sm_count)
    MOVE_ROWS(sm_capture, g->sm_count)
    MOVE_ROWS(sm_from_cur, g->sm_count)
    MOVE_ROWS(sm_from_next, g->sm_count)
    MOVE_ROWS(sm_from_x, g->sm_count)
#undef MOVE_ROWS
    for (uint32_t s = 0; s < g->inert_count; ++s) {
        memcpy(inert_of(b, s, to), inert_of(b, s, from), inert_floats(g) * sizeof(float));
    }
    for (uint32_t leg = 0; leg < g->lock_leg_count; ++leg) {
        memcpy(lock_state_of(b, leg, to), lock_state_of(b, leg, from),
               CB_LOCK_FLOATS * sizeof(float));
    }
    memcpy(&b->events[(size_t)to * CB_GRAPH_EVENTS_PER_FRAME],
           &b->events[(size_t)from * CB_GRAPH_EVENTS_PER_FRAME],
           CB_GRAPH_EVENTS_PER_FRAME * sizeof(cb_graph_event));
    b->event_count[to] = b->event_count[from];
}

/* ------------------------------------------------------------------------------------------ */
/* Scratch                                                                                    */

/* The characters of a pose chunk (runtime_impl.h POSE_CHUNK) for a batch's scratch. */
static uint32_t pose_chunk_of(uint32_t batch)
{
    return batch < POSE_CHUNK ? batch : POSE_CHUNK;
}

typedef struct scratch_layout {
    size_t params, w, rate, ew, shadow, alpha, cparams, cweights, cidx, qa, qb, qstate, sm_acc,
        poses, entries, groups, active, active_w, active_d, flat_active, flat_count, live, plant,
        plant_soon, post, total;
} scratch_layout;

static scratch_layout scratch_layout_of(const cb_graph *g, uint32_t batch)
{
    scratch_layout L;
    size_t c = cb_round_up(sizeof(struct cb_graph_scratch), 64), n = batch;
    L.params = take(&c, g->param_count * n * sizeof(float));
    L.w = take(&c, g->node_count * n * sizeof(float));
    L.rate = take(&c, g->node_count * n * sizeof(float));
    L.ew = take(&c, (g->edge_count ? g->edge_count : 1) * n * sizeof(float));
    L.shadow = take(&c, g->node_count * n);
    L.alpha = take(&c, (g->sm_count ? g->sm_count : 1) * n * sizeof(float));
    L.cparams = take(&c, (g->max_blend_params ? g->max_blend_params : 1) * n * sizeof(float));
    L.cweights = take(&c, CB_GRAPH_MAX_CHILDREN * n * sizeof(float));
    L.cidx = take(&c, n * sizeof(uint32_t));
    L.qa = take(&c, n * sizeof(float));
    L.qb = take(&c, n * sizeof(float));
    L.qstate = take(&c, n);
    L.sm_acc = take(&c, (g->sm_count ? g->sm_count : 1) * 4 * sizeof(float));
    /* A chunk's finished poses, then the evaluation stack above them. */
    L.poses = take(&c, (pose_chunk_of(batch) + g->max_pose_depth) * g->group_count *
                           cb_simd_group_bytes());
    L.entries = take(&c, (g->max_entries + 4) * sizeof(cb_blend_entry));
    L.groups = take(&c, (g->group_count_sync ? g->group_count_sync : 1) * sizeof(struct group_acc));
    L.active = take(&c, (g->clip_count ? g->clip_count : 1) * sizeof(uint32_t));
    L.active_w = take(&c, (g->clip_count ? g->clip_count : 1) * sizeof(float));
    L.active_d = take(&c, (g->clip_count ? g->clip_count : 1) * sizeof(float));
    L.flat_active = take(&c, n * (g->clip_count ? g->clip_count : 1));
    L.flat_count = take(&c, n);
    L.live = take(&c, cb_graph_live_words(g) * n * sizeof(uint64_t));
    L.plant = take(&c, (size_t)g->lock_leg_count * n * sizeof(float));
    L.plant_soon = take(&c, (size_t)g->lock_leg_count * n * sizeof(float));
    /* The post-process's chunk arrays (a foot lock's pulls, placements and leg jobs). */
    L.post = take(&c, cb_graph_post_bytes(g, pose_chunk_of(batch)));
    L.total = c;
    return L;
}

size_t cb_graph_scratch_bytes(const cb_graph *g, uint32_t batch)
{
    return scratch_layout_of(g, batch).total;
}

cb_graph_scratch *cb_graph_scratch_init(const cb_graph *g, uint32_t batch, void *memory)
{
    scratch_layout L = scratch_layout_of(g, batch);
    char *m = memory;
    cb_graph_scratch *s = memory;
    s->batch = batch;
    s->chunk = pose_chunk_of(batch);
    s->params = (float *)(m + L.params);
    s->w = (float *)(m + L.w);
    s->rate = (float *)(m + L.rate);
    s->ew = (float *)(m + L.ew);
    s->shadow = (uint8_t *)(m + L.shadow);
    s->alpha = (float *)(m + L.alpha);
    s->cparams = (float *)(m + L.cparams);
    s->cweights = (float *)(m + L.cweights);
    s->cidx = (uint32_t *)(m + L.cidx);
    s->qa = (float *)(m + L.qa);
    s->qb = (float *)(m + L.qb);
    s->qstate = (uint8_t *)(m + L.qstate);
    s->sm_acc = (float *)(m + L.sm_acc);
    s->poses = (cb_xform_group *)(m + L.poses);
    s->entries = (cb_blend_entry *)(m + L.entries);
    s->groups = (struct group_acc *)(m + L.groups);
    s->active = (uint32_t *)(m + L.active);
    s->active_w = (float *)(m + L.active_w);
    s->active_d = (float *)(m + L.active_d);
    s->flat_active = (uint8_t *)(m + L.flat_active);
    s->flat_count = (uint8_t *)(m + L.flat_count);
    s->live = (uint64_t *)(m + L.live);
    s->plant = (float *)(m + L.plant);
    s->plant_soon = (float *)(m + L.plant_soon);
    s->post = m + L.post;
    return s;
}

bool cb_graph_param_is_state(const cb_graph *g, uint32_t param)
{
    return param < g->param_count && g->params[param].written_by_graph;
}

bool cb_graph_moves_root(const cb_graph *g)
{
    return g->moves_root;
}
