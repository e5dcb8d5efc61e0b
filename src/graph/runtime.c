/* Running a graph over a batch of characters of one asset.
 *
 *   parameters   read every parameter for the batch (own columns or host views), then run the
 *                processors in order; their outputs persist in the block
 *   weights      one pass over the nodes, parents first: each node's influence per character
 *                (w) and, unless every rate is 1, its playback rate;
 *                state machines step here (transitions, triggers); blend spaces evaluate their
 *                solver over the characters that reach them, compacted, SIMD over characters
 *   time         clips with influence advance: alone, or in their sync group led by the
 *                heaviest clip at the group's weight-averaged duration; root motion from the
 *                clips' deltas weighted by w (clips reached only through layers do not
 *                move the character); state times for exit times
 *   pose         per character: the tree flattened into one fused blend job when it can be
 *                (the common case), else evaluated node by node on a small pose stack:
 *                slerp crossfades, inertialization offsets, layers of whole subtrees
 *   ltm          local-to-model into the output
 *
 * Every character is computed alone (the solvers give the same bits for a character wherever it
 * sits in a batch), so results do not depend on the batch or the thread. */
#define _POSIX_C_SOURCE 200809L

#include "graph/runtime.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "anim/anim_impl.h"
#include "crowdblend/ik.h"
#include "crowdblend/ltm.h"
#include "crowdblend/simd.h"
#include "crowdblend/sync.h"
#include "simd/detmath.h"

#define NO_STATE UINT16_MAX
/* A group that had no clip with weight last frame: it restarts at its leader's start offset. */
#define NO_LEADER UINT16_MAX
/* A character just added: its groups and clips continue from the phase it was added with. */
#define FRESH_LEADER (UINT16_MAX - 1)
enum { CLIP_INACTIVE = 0, CLIP_ACTIVE = 1, CLIP_FRESH = 2 };
/* What an inertializing transition captures its offsets from at its first frame: the pose shown
 * the frame before, which is the source state, or the transition it interrupted (a crossfade,
 * or an inertialization in progress). */
enum { CAPTURE_NONE = 0, CAPTURE_STATE = 1, CAPTURE_CROSSFADE = 2, CAPTURE_INERTIAL = 3 };

/* Influence below this is nothing (as the pose job's own epsilon). */
#define EPS CB_BLEND_WEIGHT_EPSILON

/* Characters whose poses are blended before their local-to-model runs: their poses stay in L1,
 * and a profiling run reads the clock per chunk, not per character. */
enum { POSE_CHUNK = 8 };

/* ------------------------------------------------------------------------------------------ */
/* The block                                                                                  */

typedef struct block_layout {
    size_t params, clip_time, clip_active, group_time, group_leader, sm_current, sm_next,
        sm_transition, sm_time, sm_next_time, sm_elapsed, sm_inert, sm_capture, sm_from_cur,
        sm_from_next, sm_from_x, inert, events, event_count, total;
} block_layout;

/* Floats of one character's inertialization state: the decay time, then each joint's. */
static size_t inert_floats(const cb_graph *g)
{
    return 1 + g->joint_count * CB_INERT_FLOATS;
}

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
    b->events = (cb_graph_event *)(m + L.events);
    b->event_count = (uint8_t *)(m + L.event_count);
    b->bytes = L.total;
}

/* Element i of row r of a field of the block. */
#define AT(b, field, r, i) ((b)->field[(size_t)(r) * (b)->capacity + (i)])

static float *inert_of(const cb_graph_block *b, uint32_t slot, uint32_t i)
{
    const cb_graph *g = b->graph;
    return b->inert + ((size_t)slot * b->capacity + i) * inert_floats(g);
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
    b->event_count[i] = 0;
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
    memcpy(&b->events[(size_t)to * CB_GRAPH_EVENTS_PER_FRAME],
           &b->events[(size_t)from * CB_GRAPH_EVENTS_PER_FRAME],
           CB_GRAPH_EVENTS_PER_FRAME * sizeof(cb_graph_event));
    b->event_count[to] = b->event_count[from];
}

/* ------------------------------------------------------------------------------------------ */
/* Scratch                                                                                    */

/* Per-group state of one character during the time stage, in scratch. */
typedef struct group_acc {
    float wsum, dsum, best, step;
    float from, to; /* the leader's times, unwrapped: to = from + advance */
    uint32_t leader;
    cb_sync_pos pos; /* the leader's sync position at `to` (groups with sync markers) */
} group_acc;

struct cb_graph_scratch {
    uint32_t batch;
    float *params;   /* param rows of batch */
    float *w;        /* node rows: influence */
    float *rate;     /* node rows: playback rate (weighted sum until the node is visited) */
    float *ew;       /* edge rows: the child's share of its parent */
    uint8_t *shadow; /* node rows: weightless, but evaluated for an inertialization's capture */
    float *alpha;    /* state-machine rows: crossfade progress of this frame */
    float *cparams;  /* 2 rows of batch: compacted solver input */
    float *cweights; /* CB_GRAPH_MAX_CHILDREN rows of batch: compacted solver output */
    uint32_t *cidx;  /* batch: compacted character indices */
    float *qa, *qb;  /* batch floats: quadrant scratch */
    uint8_t *qstate;
    float *sm_acc;            /* sm rows x 4: sum w and sum w d of the current and next states */
    struct group_acc *groups; /* per sync group, one character at a time */
    uint32_t *active;         /* clip slots with weight, one character at a time */
    uint8_t *flat_active;     /* flat graphs: per character of the batch, its active edges */
    uint8_t *flat_count;
    float *active_w, *active_d;
    cb_xform_group *poses; /* max_pose_depth poses */
    cb_blend_entry *entries;
    cb_root_motion_entry *root_entries;
};

typedef struct scratch_layout {
    size_t params, w, rate, ew, shadow, alpha, cparams, cweights, cidx, qa, qb, qstate, sm_acc,
        poses, entries, root_entries, groups, active, active_w, active_d, flat_active, flat_count,
        total;
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
    L.cparams = take(&c, 2 * n * sizeof(float));
    L.cweights = take(&c, CB_GRAPH_MAX_CHILDREN * n * sizeof(float));
    L.cidx = take(&c, n * sizeof(uint32_t));
    L.qa = take(&c, n * sizeof(float));
    L.qb = take(&c, n * sizeof(float));
    L.qstate = take(&c, n);
    L.sm_acc = take(&c, (g->sm_count ? g->sm_count : 1) * 4 * sizeof(float));
    /* POSE_CHUNK finished poses, then the evaluation stack above them. */
    L.poses = take(&c, (POSE_CHUNK + g->max_pose_depth) * g->group_count * cb_simd_group_bytes());
    L.entries = take(&c, (g->max_entries + 4) * sizeof(cb_blend_entry));
    L.root_entries = take(&c, (g->clip_count ? g->clip_count : 1) * sizeof(cb_root_motion_entry));
    L.groups = take(&c, (g->group_count_sync ? g->group_count_sync : 1) * sizeof(struct group_acc));
    L.active = take(&c, (g->clip_count ? g->clip_count : 1) * sizeof(uint32_t));
    L.active_w = take(&c, (g->clip_count ? g->clip_count : 1) * sizeof(float));
    L.active_d = take(&c, (g->clip_count ? g->clip_count : 1) * sizeof(float));
    L.flat_active = take(&c, n * (g->clip_count ? g->clip_count : 1));
    L.flat_count = take(&c, n);
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
    s->root_entries = (cb_root_motion_entry *)(m + L.root_entries);
    s->groups = (struct group_acc *)(m + L.groups);
    s->active = (uint32_t *)(m + L.active);
    s->active_w = (float *)(m + L.active_w);
    s->active_d = (float *)(m + L.active_d);
    s->flat_active = (uint8_t *)(m + L.flat_active);
    s->flat_count = (uint8_t *)(m + L.flat_count);
    return s;
}

/* Row r of a scratch field, element i. */
#define SR(s, field, r, i) ((s)->field[(size_t)(r) * (s)->batch + (i)])

static cb_xform_group *pose_at(const cb_graph *g, cb_graph_scratch *s, uint32_t depth)
{
    return (cb_xform_group *)((char *)s->poses +
                              (size_t)depth * g->group_count * cb_simd_group_bytes());
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 1: parameters                                                                        */

static void read_params(const cb_graph *g, const cb_graph_block *b,
                        const cb_graph_param_source *src, uint32_t first, uint32_t n,
                        cb_graph_scratch *s)
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
    }
}

static void run_processors(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                           float dt, cb_graph_scratch *s, cb_graph_scratch_stats *st)
{
    for (uint32_t k = 0; k < g->proc_count; ++k) {
        const gproc *p = &g->procs[k];
        size_t bad = 0;
        switch (p->type) {
        case GPROC_VELOCITY_BLEND: {
            cb_velocity_blend out = {&SR(s, params, p->out[0], 0), &SR(s, params, p->out[1], 0),
                                     &SR(s, params, p->out[2], 0), &SR(s, params, p->out[3], 0)};
            cb_params_velocity_blend_4dir(&SR(s, params, p->in[0], 0), &SR(s, params, p->in[1], 0),
                                          p->in[2] != GNONE ? &SR(s, params, p->in[2], 0) : NULL, n,
                                          p->a, out, &bad);
            if (p->out[4] != GNONE) {
                for (uint32_t i = 0; i < n; ++i) {
                    float x = SR(s, params, p->in[0], i), y = SR(s, params, p->in[1], i);
                    float z = p->in[2] != GNONE ? SR(s, params, p->in[2], i) : 0.0f;
                    float v = sqrtf(x * x + y * y + z * z);
                    SR(s, params, p->out[4], i) = isfinite(v) ? v : 0.0f;
                }
            }
            break;
        }
        case GPROC_INTERP_TO: {
            float *cur = &SR(s, params, p->out[0], 0);
            cb_params_interp_to(cur, &SR(s, params, p->in[0], 0), n, dt, p->a, cur, &bad);
            break;
        }
        case GPROC_QUADRANT: {
            /* Only moving characters are classified; standing ones keep their quadrant. */
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
            cb_params_quadrant(s->qa, m, p->a, s->qstate, &bad);
            for (uint32_t j = 0; j < m; ++j) {
                out[s->cidx[j]] = (float)s->qstate[j];
            }
            break;
        }
        }
        st->nonfinite_params += bad;
        /* Processor outputs are state: they persist in the block. */
        for (int o = 0; o < 5; ++o) {
            if (p->out[o] != GNONE) {
                memcpy(&AT(b, params, p->out[o], first), &SR(s, params, p->out[o], 0),
                       n * sizeof(float));
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 2: weights and state machines                                                        */

/* Adds a parent's contribution to a child. Rates are tracked only when some node changes
 * speed (most graphs play everything at rate 1). */
static inline void contribute(const cb_graph *g, cb_graph_scratch *s, uint32_t child, uint32_t i,
                              float w, float rate)
{
    /* A weightless contribution (from a shadow parent) marks the child as shadow too. */
    SR(s, shadow, child, i) |= w == 0.0f;
    SR(s, w, child, i) += w;
    if (!g->uniform_rate) {
        SR(s, rate, child, i) += w * rate;
    }
}

static bool condition_holds(const gcondition *c, float v)
{
    switch (c->op) {
    case CB_COMPARE_TRUE:
        return v != 0.0f;
    case CB_COMPARE_FALSE:
        return v == 0.0f;
    case CB_COMPARE_GREATER:
        return v > c->value;
    case CB_COMPARE_LESS:
        return v < c->value;
    case CB_COMPARE_EQUAL:
        return v == c->value;
    case CB_COMPARE_NOT_EQUAL:
        return v != c->value;
    default:
        return false;
    }
}

/* Can transition t fire for character i, whose machine is in `from` with normalized time
 * `time`? Triggers are not consumed here. */
static bool transition_passes(const cb_graph *g, const gtransition *t, const cb_graph_scratch *s,
                              uint32_t i, float time)
{
    if (t->has_exit_time && time < t->exit_time) {
        return false;
    }
    for (uint32_t c = 0; c < t->condition_count; ++c) {
        const gcondition *cond = &g->conditions[t->first_condition + c];
        if (!condition_holds(cond, SR(s, params, cond->param, i))) {
            return false;
        }
    }
    return true;
}

/* Starts transition t of machine m for character i. `shown` is the previous frame's crossfade
 * progress (or inertialization time) of the transition it interrupts. */
static void fire(const cb_graph *g, cb_graph_block *b, cb_graph_scratch *s, uint32_t m,
                 uint32_t t_index, uint32_t i, uint32_t ch, bool interrupting, float shown)
{
    const gsm *sm = &g->sms[m];
    const gtransition *t = &g->transitions[sm->first_transition + t_index];
    /* What the pose showed until now, for an inertialization to start from. */
    uint16_t from_cur = AT(b, sm_current, m, ch), from_next = AT(b, sm_next, m, ch);
    uint8_t from_kind = !interrupting            ? CAPTURE_STATE
                        : AT(b, sm_inert, m, ch) ? CAPTURE_INERTIAL
                                                 : CAPTURE_CROSSFADE;
    for (uint32_t c = 0; c < t->condition_count; ++c) {
        const gcondition *cond = &g->conditions[t->first_condition + c];
        if (cond->trigger) {
            /* Consumed: once used, a trigger does not fire a second transition. */
            SR(s, params, cond->param, i) = 0.0f;
            AT(b, params, cond->param, ch) = 0.0f;
        }
    }
    if (interrupting) {
        /* The state the pose is closest to becomes the source. */
        if (s->alpha[(size_t)m * s->batch + i] >= 0.5f) {
            AT(b, sm_current, m, ch) = AT(b, sm_next, m, ch);
            AT(b, sm_time, m, ch) = AT(b, sm_next_time, m, ch);
        }
    }
    if (t->duration_s <= 0.0f) {
        AT(b, sm_current, m, ch) = (uint16_t)t->to;
        AT(b, sm_time, m, ch) = 0.0f;
        AT(b, sm_next, m, ch) = NO_STATE;
        AT(b, sm_inert, m, ch) = 0;
        return;
    }
    AT(b, sm_next, m, ch) = (uint16_t)t->to;
    AT(b, sm_next_time, m, ch) = 0.0f;
    AT(b, sm_elapsed, m, ch) = 0.0f;
    AT(b, sm_transition, m, ch) = (uint16_t)t_index;
    /* An interrupted transition, or an inertializing one, continues from the pose shown:
     * captured as decaying offsets (when the machine has room for them). */
    bool inert = sm->inert_slot != GNONE && (t->blend == CB_TRANSITION_INERTIALIZE || interrupting);
    AT(b, sm_inert, m, ch) = inert;
    AT(b, sm_capture, m, ch) = inert ? from_kind : CAPTURE_NONE;
    AT(b, sm_from_cur, m, ch) = from_cur;
    AT(b, sm_from_next, m, ch) = from_next;
    AT(b, sm_from_x, m, ch) = shown;
}

/* One frame of machine m for character i: finish or continue the running transition, then
 * test transitions (any-state first, then the current state's; during a transition only those
 * its interruption rule allows). Sets alpha (crossfade progress). */
static void step_machine(const cb_graph *g, cb_graph_block *b, cb_graph_scratch *s, uint32_t m,
                         uint32_t i, uint32_t ch, float dt)
{
    const gsm *sm = &g->sms[m];
    uint16_t next = AT(b, sm_next, m, ch);
    float shown = 0.0f; /* what the running transition showed last frame */
    if (next != NO_STATE) {
        const gtransition *t = &g->transitions[sm->first_transition + AT(b, sm_transition, m, ch)];
        float before = AT(b, sm_elapsed, m, ch), x0 = before / t->duration_s;
        shown = AT(b, sm_inert, m, ch) ? before : x0 * x0 * (3.0f - 2.0f * x0);
        float elapsed = before + dt;
        AT(b, sm_elapsed, m, ch) = elapsed;
        if (elapsed >= t->duration_s) {
            AT(b, sm_current, m, ch) = next;
            AT(b, sm_time, m, ch) = AT(b, sm_next_time, m, ch);
            AT(b, sm_next, m, ch) = NO_STATE;
            AT(b, sm_inert, m, ch) = 0;
            next = NO_STATE;
        } else {
            float x = elapsed / t->duration_s;
            s->alpha[(size_t)m * s->batch + i] = x * x * (3.0f - 2.0f * x);
        }
    }
    if (next == NO_STATE) {
        s->alpha[(size_t)m * s->batch + i] = 0.0f;
    }
    uint16_t cur = AT(b, sm_current, m, ch);
    cb_interruption rule = CB_INTERRUPTION_NONE;
    if (next != NO_STATE) {
        rule = g->transitions[sm->first_transition + AT(b, sm_transition, m, ch)].interruption;
        if (rule == CB_INTERRUPTION_NONE) {
            return;
        }
    }
    /* Any-state transitions first, in order, then the source's: the first that passes fires. */
    uint16_t source = next == NO_STATE ? cur : rule == CB_INTERRUPTION_SOURCE ? cur : next;
    float source_time = source == cur ? AT(b, sm_time, m, ch) : AT(b, sm_next_time, m, ch);
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t k = 0; k < sm->transition_count; ++k) {
            const gtransition *t = &g->transitions[sm->first_transition + k];
            bool any = t->from == GNONE;
            if (any != (pass == 0) || (!any && t->from != source)) {
                continue;
            }
            /* An any-state transition does not restart the state it leads to, unless allowed. */
            uint16_t target_now = next != NO_STATE ? next : cur;
            if (any && t->to == target_now && !t->to_self) {
                continue;
            }
            if (next != NO_STATE && t->to == next) {
                continue;
            }
            if (transition_passes(g, t, s, i, source_time)) {
                fire(g, b, s, m, k, i, ch, next != NO_STATE, shown);
                s->alpha[(size_t)m * s->batch + i] = 0.0f;
                return;
            }
        }
    }
}

/* A machine reached only for a capture: its states as they stand, not stepped (it has no
 * weight, so it does not advance), with the crossfade progress of its running transition. */
static void shadow_machine(const cb_graph *g, const cb_graph_block *b, cb_graph_scratch *s,
                           uint32_t m, uint32_t i, uint32_t ch)
{
    float a = 0.0f;
    if (AT(b, sm_next, m, ch) != NO_STATE) {
        const gtransition *t =
            &g->transitions[g->sms[m].first_transition + AT(b, sm_transition, m, ch)];
        float x = AT(b, sm_elapsed, m, ch) / t->duration_s;
        a = x * x * (3.0f - 2.0f * x);
    }
    s->alpha[(size_t)m * s->batch + i] = a;
}

static void propagate_weights(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                              float dt, cb_graph_scratch *s, bool use_ref,
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
                }
            }
        }
        if (m == 0) {
            continue;
        }
        const gedge *edges = &g->edges[node->first_edge];
        switch (node->type) {
        case GNODE_BLEND: {
            const gblend *bl = &node->u.blend;
            const float *cols[2];
            for (uint32_t k = 0; k < bl->param_count; ++k) {
                float *col = &s->cparams[(size_t)k * s->batch];
                for (uint32_t j = 0; j < m; ++j) {
                    col[j] = SR(s, params, bl->params[k], s->cidx[j]);
                }
                cols[k] = col;
            }
            size_t bad = 0;
            if (use_ref) {
                cb_solver_evaluate_ref(bl->solver, cols, m, s->cweights, s->batch, &bad);
            } else {
                cb_solver_evaluate(bl->solver, cols, m, s->cweights, s->batch, &bad);
            }
            st->nonfinite_params += bad;
            for (uint32_t e = 0; e < node->edge_count; ++e) {
                const float *cw = &s->cweights[(size_t)e * s->batch];
                float *share = &SR(s, ew, node->first_edge + e, 0);
                for (uint32_t j = 0; j < m; ++j) {
                    uint32_t i = s->cidx[j];
                    share[i] = cw[j];
                    if (cw[j] > 0.0f) {
                        contribute(g, s, edges[e].child, i, w[i] * cw[j], rate[i]);
                    }
                }
            }
            break;
        }
        case GNODE_DIRECT: {
            for (uint32_t j = 0; j < m; ++j) {
                uint32_t i = s->cidx[j];
                float sum = 0.0f;
                for (uint32_t e = 0; e < node->edge_count; ++e) {
                    float v = SR(s, params, g->edge_params[node->u.direct_first_param + e], i);
                    v = v > 0.0f && isfinite(v) ? v : 0.0f;
                    SR(s, ew, node->first_edge + e, i) = v;
                    sum += v;
                }
                float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
                for (uint32_t e = 0; e < node->edge_count; ++e) {
                    float share = SR(s, ew, node->first_edge + e, i) * inv;
                    SR(s, ew, node->first_edge + e, i) = share;
                    if (share > 0.0f) {
                        contribute(g, s, edges[e].child, i, w[i] * share, rate[i]);
                    }
                }
            }
            break;
        }
        case GNODE_LAYERS:
            for (uint32_t j = 0; j < m; ++j) {
                uint32_t i = s->cidx[j];
                for (uint32_t e = 0; e < node->edge_count; ++e) {
                    SR(s, ew, node->first_edge + e, i) = 1.0f;
                    contribute(g, s, edges[e].child, i, w[i], rate[i]);
                }
            }
            break;
        case GNODE_SM: {
            uint32_t mi = node->u.sm.sm;
            const gsm *sm = &g->sms[mi];
            for (uint32_t j = 0; j < m; ++j) {
                uint32_t i = s->cidx[j], ch = first + i;
                if (w[i] > 0.0f) {
                    step_machine(g, b, s, mi, i, ch, dt);
                } else {
                    shadow_machine(g, b, s, mi, i, ch);
                }
                for (uint32_t e = 0; e < node->edge_count; ++e) {
                    SR(s, ew, node->first_edge + e, i) = 0.0f;
                }
                uint16_t cur = AT(b, sm_current, mi, ch), nxt = AT(b, sm_next, mi, ch);
                float a = s->alpha[(size_t)mi * s->batch + i];
                float share_cur = 1.0f, share_next = 0.0f;
                if (nxt != NO_STATE) {
                    if (AT(b, sm_inert, mi, ch)) {
                        share_cur = 0.0f, share_next = 1.0f;
                    } else {
                        share_cur = 1.0f - a, share_next = a;
                    }
                }
                const gstate *sc = &g->states[sm->first_state + cur];
                SR(s, ew, node->first_edge + cur, i) = share_cur;
                if (share_cur > 0.0f) {
                    contribute(g, s, sc->node, i, w[i] * share_cur, rate[i] * sc->speed);
                }
                if (nxt != NO_STATE && share_next > 0.0f) {
                    const gstate *sn = &g->states[sm->first_state + nxt];
                    SR(s, ew, node->first_edge + nxt, i) += share_next;
                    contribute(g, s, sn->node, i, w[i] * share_next, rate[i] * sn->speed);
                }
                if (sm->inert_slot != GNONE && AT(b, sm_capture, mi, ch) != CAPTURE_NONE) {
                    /* The pose the transition starts from is evaluated once more: its nodes
                     * need their shares, without weight. */
                    uint16_t fc = AT(b, sm_from_cur, mi, ch), fn = AT(b, sm_from_next, mi, ch);
                    contribute(g, s, g->states[sm->first_state + fc].node, i, 0.0f, 0.0f);
                    if (fn != NO_STATE) {
                        contribute(g, s, g->states[sm->first_state + fn].node, i, 0.0f, 0.0f);
                    }
                }
            }
            break;
        }
        case GNODE_CLIP:
            break;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 3: time                                                                              */

/* An unwrapped time in [0, 1) (u - floor(u) can round up to 1 for tiny negative u). */
static inline float wrap01(float u)
{
    u -= floorf(u);
    return u < 1.0f ? u : 0.0f;
}

/* Advances a normalized time by dx (any sign, any size): wrapped for looping clips, clamped
 * for the others. */
static inline float advance_time(float t, float dx, bool clamp)
{
    float u = t + dx;
    if (clamp) {
        return u < 0.0f ? 0.0f : u > 1.0f ? 1.0f : u;
    }
    return wrap01(u);
}

/* The clip's playback rate for character i: the path's rate (a weighted sum until divided by
 * the clip's weight w) times its own speed and speed parameter. */
static inline float clip_rate(const cb_graph *g, const gclip *c, const cb_graph_scratch *s, float w,
                              uint32_t i)
{
    float r = (g->uniform_rate ? 1.0f : SR(s, rate, c->node, i) / w) * c->speed;
    if (c->speed_param != GNONE) {
        float p = SR(s, params, c->speed_param, i);
        r *= isfinite(p) ? p : 0.0f;
    }
    return r;
}

static cb_sync_names group_names(const cb_graph *g, uint32_t grp)
{
    return (cb_sync_names){g->sync_hashes + g->sync_first[grp], g->sync_count[grp]};
}

/* Where a clip that was not playing joins its group: in step with the clip that led the group
 * last frame (by markers when the group has them), else at the group's normalized time. */
static float join_time(const cb_graph *g, const cb_graph_block *b, uint32_t grp, uint32_t ch,
                       const gclip *clip)
{
    float t = AT(b, group_time, grp, ch);
    uint16_t prev = AT(b, group_leader, grp, ch);
    if (g->sync_count[grp] > 0 && prev < g->clip_count) {
        cb_sync_names names = group_names(g, grp);
        float synced;
        if (cb_sync_follower_time(g->clips[prev].clip, t, clip->clip, t, &names, &synced, NULL) ==
            CB_OK) {
            t = synced;
        }
    }
    return t;
}

/* Reports the markers a clip crossed from `from` to `to` (unwrapped) as the character's events,
 * as many as there is room for; the rest are counted. */
static void emit_events(const cb_graph *g, cb_graph_block *b, uint32_t ch, const gclip *clip,
                        float from, float to, bool started, float weight,
                        cb_graph_scratch_stats *st)
{
    /* Most frames cross no marker: look for one in [lo, hi] (both ends, so a marker on an end
     * is left to the exact query) before paying for the exact query. */
    float lo = fminf(from, to), hi = fmaxf(from, to);
    if (!clip->clamp && hi - lo < 1.0f) {
        float f0 = lo - floorf(lo), f1 = f0 + (hi - lo);
        const float *m = g->marker_times + clip->marker_first;
        int any = 0;
        for (uint32_t k = 0; k < clip->marker_count; ++k) {
            any |= ((m[k] >= f0) & (m[k] <= f1)) | ((m[k] + 1.0f >= f0) & (m[k] + 1.0f <= f1));
        }
        if (!any) {
            return;
        }
    }
    uint8_t *count = &b->event_count[ch];
    cb_graph_event *ev = &b->events[(size_t)ch * CB_GRAPH_EVENTS_PER_FRAME];
    cb_marker_event found[CB_GRAPH_EVENTS_PER_FRAME];
    size_t room = CB_GRAPH_EVENTS_PER_FRAME - *count, written = 0;
    uint64_t crossed = 0;
    if (cb_sync_events(clip->clip, from, to, started ? CB_EVENT_FLAG_INCLUDE_FROM : 0,
                       (cb_marker_event_span){found, room}, &written, &crossed) != CB_OK) {
        return;
    }
    for (size_t k = 0; k < written; ++k) {
        ev[(*count)++] =
            (cb_graph_event){found[k].name_hash, clip->node, weight, found[k].fraction};
    }
    st->dropped_events += crossed - written;
}

/* One character's time stage over its active clips (act / aw / ad in scratch: slot, weight and
 * cycle length at its rate, in slot order): sync groups led by their heaviest clip advance at
 * their weight-averaged duration, followers keep in step on the group's markers, free clips
 * advance at their own rate; then clip times, root motion and events. Shared by the general
 * and the flat paths, which must agree bit for bit. */
static void advance_active(const cb_graph *g, cb_graph_block *b, uint32_t ch, uint32_t na, float dt,
                           cb_graph_scratch *s, const cb_graph_outputs *out,
                           cb_graph_scratch_stats *st)
{
    group_acc *groups = s->groups;
    const uint32_t *act = s->active;
    const float *aw = s->active_w, *ad = s->active_d;
    for (uint32_t grp = 0; grp < g->group_count_sync; ++grp) {
        groups[grp].wsum = groups[grp].dsum = groups[grp].best = 0.0f;
        groups[grp].leader = GNONE;
    }
    for (uint32_t a = 0; a < na; ++a) {
        uint32_t grp = g->clips[act[a]].group;
        if (grp != GNONE) {
            group_acc *ga = &groups[grp];
            ga->wsum += aw[a];
            ga->dsum += aw[a] * ad[a];
            if (aw[a] > ga->best) {
                ga->best = aw[a], ga->leader = act[a];
            }
        }
    }
    for (uint32_t grp = 0; grp < g->group_count_sync; ++grp) {
        group_acc *ga = &groups[grp];
        if (ga->leader == GNONE) {
            AT(b, group_leader, grp, ch) = NO_LEADER;
            continue;
        }
        const gclip *lead = &g->clips[ga->leader];
        /* The leader continues its own time; a group that starts again starts at its leader's
         * offset; a new leader that was not playing joins in step with the last one. */
        float from;
        if (AT(b, group_leader, grp, ch) == NO_LEADER) {
            from = lead->start_offset;
        } else if (AT(b, clip_active, ga->leader, ch) != CLIP_INACTIVE) {
            from = AT(b, clip_time, ga->leader, ch);
        } else {
            from = join_time(g, b, grp, ch, lead);
        }
        ga->step = dt * ga->wsum / ga->dsum; /* the leader's cycles this frame */
        ga->from = from;
        ga->to = lead->clamp ? fminf(fmaxf(from + ga->step, 0.0f), 1.0f) : from + ga->step;
        AT(b, group_leader, grp, ch) = (uint16_t)ga->leader;
        AT(b, group_time, grp, ch) = advance_time(from, ga->step, lead->clamp);
        if (g->sync_count[grp] > 0) {
            cb_sync_names names = group_names(g, grp);
            if (cb_sync_pos_from_time(lead->clip, ga->to, &names, &ga->pos) != CB_OK) {
                ga->pos = (cb_sync_pos){.kind = CB_SYNC_KIND_NORMALIZED,
                                        .normalized = AT(b, group_time, grp, ch)};
            }
        }
    }
    b->event_count[ch] = 0;
    uint32_t root_count = 0;
    for (uint32_t a = 0; a < na; ++a) {
        uint32_t c = act[a];
        const gclip *clip = &g->clips[c];
        uint8_t was = AT(b, clip_active, c, ch);
        bool started = was != CLIP_ACTIVE; /* (re)starts this frame, or was just added */
        float from, to;
        if (clip->group != GNONE && g->sync_count[clip->group] == 0) {
            /* In step by normalized time: every clip of the group shows the group's time and
             * moves over the group's interval (one phase for the group, whether the clip played
             * last frame or joins now), for root motion and events alike. */
            const group_acc *ga = &groups[clip->group];
            float gt = AT(b, group_time, clip->group, ch);
            from = ga->from, to = ga->to;
            AT(b, clip_time, c, ch) = clip->clamp ? fminf(gt, 1.0f) : gt;
        } else {
            if (clip->group == GNONE) {
                from = was == CLIP_INACTIVE ? clip->start_offset : AT(b, clip_time, c, ch);
                to = clip->clamp ? fminf(fmaxf(from + dt / ad[a], 0.0f), 1.0f) : from + dt / ad[a];
            } else if (c == groups[clip->group].leader) {
                from = groups[clip->group].from, to = groups[clip->group].to;
            } else {
                /* In step on the markers, the cycle nearest where it would be on its own. */
                const group_acc *ga = &groups[clip->group];
                cb_sync_names names = group_names(g, clip->group);
                float prev = was != CLIP_INACTIVE ? AT(b, clip_time, c, ch) : ga->to - ga->step;
                to = prev + ga->step;
                (void)cb_sync_time_from_pos(clip->clip, &ga->pos, &names, to, &to, NULL);
                from = was != CLIP_INACTIVE ? prev : to - ga->step;
            }
            AT(b, clip_time, c, ch) = clip->clamp ? fminf(fmaxf(to, 0.0f), 1.0f) : wrap01(to);
        }
        AT(b, clip_active, c, ch) = CLIP_ACTIVE;
        if (clip->base_path && !clip->clamp) {
            s->root_entries[root_count++] = (cb_root_motion_entry){clip->clip, from, to, aw[a]};
        }
        if (out->events && clip->has_markers) {
            emit_events(g, b, ch, clip, from, to, started, aw[a], st);
        }
    }
    cb_root_delta delta = {{0.0f, 0.0f, 0.0f}, 0.0f};
    if (root_count > 0) {
        cb_clip_blend_root_motion(s->root_entries, root_count, &delta);
    }
    out->root_motion[ch] = delta;
}

static void advance_clips(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                          float dt, cb_graph_scratch *s, const cb_graph_outputs *out,
                          cb_graph_scratch_stats *st)
{
    uint32_t *act = s->active;
    float *aw = s->active_w, *ad = s->active_d;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t ch = first + i;
        /* The clips with weight, their weight and cycle length at their rate. */
        uint32_t na = 0;
        for (uint32_t c = 0; c < g->clip_count; ++c) {
            const gclip *clip = &g->clips[c];
            float w = SR(s, w, clip->node, i);
            if (w <= EPS) {
                AT(b, clip_active, c, ch) = CLIP_INACTIVE;
                continue;
            }
            float rate = clip_rate(g, clip, s, w, i);
            act[na] = c;
            aw[na] = w;
            ad[na] = clip->duration_s / (fabsf(rate) > 1e-6f ? rate : 1e-6f);
            na++;
        }
        advance_active(g, b, ch, na, dt, s, out, st);

        /* State times: each machine's current (and next) state advances by its clips'
         * weight-averaged cycle rate; exit times compare against it. */
        if (g->sm_count > 0) {
            memset(s->sm_acc, 0, g->sm_count * 4 * sizeof(float));
            for (uint32_t a = 0; a < na; ++a) {
                const gclip_states *cs = &g->clip_states[act[a]];
                for (uint32_t k = 0; k < cs->count; ++k) {
                    uint32_t m = cs->sm[k];
                    float *acc = &s->sm_acc[m * 4];
                    if (cs->state[k] == AT(b, sm_current, m, ch)) {
                        acc[0] += aw[a], acc[1] += aw[a] * fabsf(ad[a]);
                    } else if (cs->state[k] == AT(b, sm_next, m, ch)) {
                        acc[2] += aw[a], acc[3] += aw[a] * fabsf(ad[a]);
                    }
                }
            }
            for (uint32_t m = 0; m < g->sm_count; ++m) {
                const float *acc = &s->sm_acc[m * 4];
                if (acc[0] > 0.0f) {
                    AT(b, sm_time, m, ch) += dt * acc[0] / acc[1];
                }
                if (acc[2] > 0.0f) {
                    AT(b, sm_next_time, m, ch) += dt * acc[2] / acc[3];
                }
            }
        }
        if (out->kept_weights != NULL) {
            for (uint32_t c = 0; c < g->clip_count; ++c) {
                float w = SR(s, w, g->clips[c].node, i);
                out->kept_weights[(size_t)c * out->kept_stride + ch] = w > EPS ? w : 0.0f;
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 4: pose                                                                              */

typedef struct pose_ctx {
    const cb_graph *g;
    cb_graph_block *b;
    cb_graph_scratch *s;
    uint32_t i, ch;
    uint32_t entries;  /* used */
    uint32_t capacity; /* of s->entries */
    bool use_ref;
    cb_xform_group *root_out; /* depth 0: the character's pose in the chunk */
} pose_ctx;

/* The pose buffer of an evaluation depth: 0 is the character's result, deeper ones the stack
 * above the chunk's poses. */
static cb_xform_group *slot(const pose_ctx *x, uint32_t depth)
{
    return depth == 0 ? x->root_out : pose_at(x->g, x->s, POSE_CHUNK + depth - 1);
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
        x->s->entries[x->entries++] = (cb_blend_entry){
            .clip = n->u.clip.clip,
            .time = AT(x->b, clip_time, n->u.clip.slot, x->ch),
            .weight = weight,
        };
        return true;
    case GNODE_BLEND:
    case GNODE_DIRECT:
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

static void run_blend(pose_ctx *x, cb_xform_group *out, uint32_t first_entry)
{
    cb_pose_blend_job job = {
        .skeleton = x->g->skeleton,
        .entries = {x->s->entries + first_entry, x->entries - first_entry},
        .out = {out, x->g->group_count},
    };
    if (x->use_ref) {
        cb_pose_blend_job_run_ref(&job, NULL);
    } else {
        cb_pose_blend_job_run(&job, NULL);
    }
}

/* A layer's weight for character i from its parameter (GNONE: 1), clamped to [0, 1]. */
static float weight_of(const pose_ctx *x, uint32_t param)
{
    if (param == GNONE) {
        return 1.0f;
    }
    float w = SR(x->s, params, param, x->i);
    return w > 0.0f ? (w < 1.0f ? w : 1.0f) : 0.0f;
}

static float layer_weight(const pose_ctx *x, const glayer *l)
{
    return weight_of(x, l->weight_param);
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

static void crossfade(pose_ctx *x, cb_xform_group *a, const cb_xform_group *b, float weight,
                      const float *mask)
{
    cb_pose_crossfade_job job = {
        .skeleton = x->g->skeleton,
        .from = {a, x->g->group_count},
        .to = {b, x->g->group_count},
        .weight = weight,
        .mask = {mask, mask != NULL ? x->g->soa_joint_count : 0},
        .out = {a, x->g->group_count},
    };
    cb_pose_crossfade_job_run(&job, NULL);
}

/* ---- inertialization (Bollo, "Inertialization: High-Performance Animation Transitions in
 * Gears of War", GDC 2018): at the switch, the offset from the destination to the pose shown is
 * stored per joint as an angle about an axis and a length along a direction; each frame it
 * decays to zero along a quintic x(t) with x(t1) = x'(t1) = x''(t1) = 0, which removes the
 * source's pose smoothly while only the destination is sampled. The offset starts with zero
 * velocity (the source's velocity is not sampled), so the pose eases out of the switch. With
 * x'(0) = 0, Bollo's start acceleration is x''(0) = -20 x0 / t1^2 and the quintic factors as
 * x(t) = x0 (1 - u)^4 (1 + 4u), u = t / t1: one factor per frame serves every joint. ---- */

typedef struct xf {
    float q[4], t[3];
} xf;

static xf group_lane(const cb_xform_group *pose, size_t j)
{
    const float *g =
        (const float *)((const char *)pose + (j / cb_simd_width()) * cb_simd_group_bytes());
    size_t w = cb_simd_width(), l = j % w;
    return (xf){{g[3 * w + l], g[4 * w + l], g[5 * w + l], g[6 * w + l]},
                {g[0 * w + l], g[1 * w + l], g[2 * w + l]}};
}

static void set_group_lane(cb_xform_group *pose, size_t j, const xf *x)
{
    float *g = (float *)((char *)pose + (j / cb_simd_width()) * cb_simd_group_bytes());
    size_t w = cb_simd_width(), l = j % w;
    g[0 * w + l] = x->t[0], g[1 * w + l] = x->t[1], g[2 * w + l] = x->t[2];
    g[3 * w + l] = x->q[0], g[4 * w + l] = x->q[1], g[5 * w + l] = x->q[2], g[6 * w + l] = x->q[3];
}

/* The share of the offset left at time t of a decay over t1 (see above). */
static float inertial_fraction(float t, float t1)
{
    if (!(t < t1) || t1 <= 0.0f) {
        return 0.0f;
    }
    float u = t / t1, v = 1.0f - u, v2 = v * v;
    return v2 * v2 * (1.0f + 4.0f * u);
}

/* sin and cos of h in [0, pi/2] (a half angle of at most pi), by their Taylor series to x^11
 * and x^12: truncation below 7e-8 on the interval, cheaper than libm's range reduction. */
static void sincos_half(float h, float *s, float *c)
{
    float h2 = h * h;
    *s = h * (1.0f +
              h2 * (-1.0f / 6 +
                    h2 * (1.0f / 120 +
                          h2 * (-1.0f / 5040 + h2 * (1.0f / 362880 + h2 * (-1.0f / 39916800))))));
    *c = 1.0f +
         h2 * (-0.5f +
               h2 * (1.0f / 24 +
                     h2 * (-1.0f / 720 + h2 * (1.0f / 40320 +
                                               h2 * (-1.0f / 3628800 + h2 * (1.0f / 479001600))))));
}

static void inert_capture(const pose_ctx *x, float *st, const cb_xform_group *src,
                          const cb_xform_group *dst, float t1)
{
    st[0] = t1;
    for (size_t j = 0; j < x->g->joint_count; ++j) {
        xf a = group_lane(src, j), b = group_lane(dst, j);
        float *o = st + 1 + j * CB_INERT_FLOATS;
        /* q_off = q_src * conj(q_dst), on the short arc. */
        float qx = a.q[3] * -b.q[0] + a.q[0] * b.q[3] + a.q[1] * -b.q[2] - a.q[2] * -b.q[1];
        float qy = a.q[3] * -b.q[1] - a.q[0] * -b.q[2] + a.q[1] * b.q[3] + a.q[2] * -b.q[0];
        float qz = a.q[3] * -b.q[2] + a.q[0] * -b.q[1] - a.q[1] * -b.q[0] + a.q[2] * b.q[3];
        float qw = a.q[3] * b.q[3] + a.q[0] * b.q[0] + a.q[1] * b.q[1] + a.q[2] * b.q[2];
        if (qw < 0.0f) {
            qx = -qx, qy = -qy, qz = -qz, qw = -qw;
        }
        float s = sqrtf(qx * qx + qy * qy + qz * qz);
        bool tiny = s < 1e-9f;
        o[0] = tiny ? 1.0f : qx / s, o[1] = tiny ? 0.0f : qy / s, o[2] = tiny ? 0.0f : qz / s;
        o[3] = tiny ? 0.0f : 2.0f * cb_det_atan2f(s, qw); /* in [0, pi] */
        float d[3] = {a.t[0] - b.t[0], a.t[1] - b.t[1], a.t[2] - b.t[2]};
        float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        bool zero = len < 1e-9f;
        o[4] = zero ? 0.0f : d[0] / len, o[5] = zero ? 0.0f : d[1] / len;
        o[6] = zero ? 0.0f : d[2] / len;
        o[7] = zero ? 0.0f : len;
    }
}

static void inert_apply(const pose_ctx *x, const float *st, cb_xform_group *pose, float t)
{
    float f = inertial_fraction(t, st[0]);
    if (f == 0.0f) {
        return; /* the offsets have decayed: the destination alone */
    }
    for (size_t j = 0; j < x->g->joint_count; ++j) {
        const float *o = st + 1 + j * CB_INERT_FLOATS;
        if (o[3] == 0.0f && o[7] == 0.0f) {
            continue; /* the source and the destination agreed on this joint */
        }
        xf p = group_lane(pose, j);
        float sh, chh;
        sincos_half(0.5f * o[3] * f, &sh, &chh);
        float ax = o[0] * sh, ay = o[1] * sh, az = o[2] * sh, aw = chh;
        /* q = q_off(t) * q_dst */
        float q0 = aw * p.q[0] + ax * p.q[3] + ay * p.q[2] - az * p.q[1];
        float q1 = aw * p.q[1] - ax * p.q[2] + ay * p.q[3] + az * p.q[0];
        float q2 = aw * p.q[2] + ax * p.q[1] - ay * p.q[0] + az * p.q[3];
        float q3 = aw * p.q[3] - ax * p.q[0] - ay * p.q[1] - az * p.q[2];
        p.q[0] = q0, p.q[1] = q1, p.q[2] = q2, p.q[3] = q3;
        float len = o[7] * f;
        p.t[0] += o[4] * len, p.t[1] += o[5] * len, p.t[2] += o[6] * len;
        set_group_lane(pose, j, &p);
    }
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
            cb_xform_blend_groups(both, w, 2, x->g->group_count, out);
        }
        total += share;
    }
    if (total == 0.0f) {
        /* Nothing weighs anything: the rest pose (a blend of no entries). */
        x->entries = 0;
        run_blend(x, out, 0);
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
        for (uint32_t l = 0; l < n->u.layers.layer_count; ++l) {
            float w = layer_weight(x, &layers[l]);
            if (w > 0.0f) {
                x->s->entries[x->entries++] = layer_entry(x, &layers[l], w);
            }
        }
        run_blend(x, out, 0);
        return;
    }
    eval(x, base, depth);
    for (uint32_t l = 0; l < n->u.layers.layer_count; ++l) {
        const glayer *ly = &layers[l];
        float w = layer_weight(x, ly);
        if (w <= 0.0f) {
            continue;
        }
        if (g->nodes[ly->node].type == GNODE_CLIP) {
            cb_blend_entry e = layer_entry(x, ly, w);
            cb_pose_apply_layers(g->skeleton, out, &e, 1);
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
            inert_apply(x, st, src, shown);
        }
        inert_capture(x, st, src, out, t->duration_s);
        AT(b, sm_capture, m, x->ch) = CAPTURE_NONE;
    }
    inert_apply(x, st, out, AT(b, sm_elapsed, m, x->ch));
}

static void eval(pose_ctx *x, uint32_t id, uint32_t depth)
{
    const gnode *n = &x->g->nodes[id];
    cb_xform_group *out = slot(x, depth);
    if (n->type != GNODE_LAYERS) {
        x->entries = 0;
        if (flatten(x, id, 1.0f)) {
            run_blend(x, out, 0);
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
    case GNODE_DIRECT:
        eval_children_blend(x, n, depth);
        break;
    case GNODE_CLIP:
        break;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Flat graphs                                                                                */

/* The weights of a flat graph (graph_impl.h): its blend's solver (or direct weights) straight
 * on the parameter rows into the scratch's solver output, no compaction (every character
 * reaches the blend with weight 1): the values propagate_weights gives, bit for bit. The flat
 * time and pose stages read them there; layer clips have influence 1. */
static void flat_weights(const cb_graph *g, uint32_t n, cb_graph_scratch *s, bool use_ref,
                         cb_graph_scratch_stats *st)
{
    const gnode *bn = &g->nodes[g->flat_blend];
    if (bn->type == GNODE_BLEND) {
        const gblend *bl = &bn->u.blend;
        const float *cols[2] = {&SR(s, params, bl->params[0], 0),
                                bl->param_count > 1 ? &SR(s, params, bl->params[1], 0) : NULL};
        size_t bad = 0;
        if (use_ref) {
            cb_solver_evaluate_ref(bl->solver, cols, n, s->cweights, s->batch, &bad);
        } else {
            cb_solver_evaluate(bl->solver, cols, n, s->cweights, s->batch, &bad);
        }
        st->nonfinite_params += bad;
    } else {
        for (uint32_t i = 0; i < n; ++i) {
            float sum = 0.0f;
            for (uint32_t e = 0; e < bn->edge_count; ++e) {
                float v = SR(s, params, g->edge_params[bn->u.direct_first_param + e], i);
                v = v > 0.0f && isfinite(v) ? v : 0.0f;
                s->cweights[(size_t)e * s->batch + i] = v;
                sum += v;
            }
            float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
            for (uint32_t e = 0; e < bn->edge_count; ++e) {
                s->cweights[(size_t)e * s->batch + i] *= inv;
            }
        }
    }
}

/* The time stage of a flat graph: advance_clips() for its known shape (one sync group of the
 * blend's clips, ungrouped layer clips, rate 1), reading the blend's weight rows directly. The
 * clips are visited in slot order, as advance_clips() visits them, so every sum is the same. */
/* The time stage of a flat graph whose group syncs by normalized time, without events (the
 * common crowd case): advance_active's work for that case without building its lists, the
 * same operations in the same order (tests compare the flat and general paths bit for bit). */
static void flat_advance_fast(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                              float dt, cb_graph_scratch *s, const cb_graph_outputs *out)
{
    const gnode *bn = &g->nodes[g->flat_blend];
    const uint32_t count = bn->edge_count, grp = g->flat_group;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t ch = first + i, na = 0, leader = GNONE;
        uint8_t *listed = &s->flat_active[(size_t)i * g->clip_count];
        float wsum = 0.0f, dsum = 0.0f, best = 0.0f;
        const float *wcol = &s->cweights[i];
        for (uint32_t k = 0; k < count; ++k, wcol += s->batch) {
            uint32_t e = g->flat_in_order ? k : g->flat_order[k];
            float w = g->flat_in_order ? *wcol : s->cweights[(size_t)e * s->batch + i];
            if (w <= EPS) {
                continue;
            }
            const gclip *clip = &g->clips[g->flat_slot[e]];
            listed[na++] = (uint8_t)e;
            wsum += w;
            dsum += w * (clip->duration_s / 1.0f);
            if (w > best) {
                best = w, leader = clip->slot;
            }
        }
        s->flat_count[i] = (uint8_t)na;
        uint32_t root_count = 0;
        if (leader == GNONE) {
            AT(b, group_leader, grp, ch) = NO_LEADER;
        } else {
            const gclip *lead = &g->clips[leader];
            float from = AT(b, group_leader, grp, ch) == NO_LEADER ? lead->start_offset
                                                                   : AT(b, group_time, grp, ch);
            float step = dt * wsum / dsum;
            float lead_to = lead->clamp ? fminf(fmaxf(from + step, 0.0f), 1.0f) : from + step;
            float gt = advance_time(from, step, lead->clamp);
            AT(b, group_leader, grp, ch) = (uint16_t)leader;
            AT(b, group_time, grp, ch) = gt;
            /* One phase for the group: no clip's own history matters, so the blend clips'
             * activity flags are not kept on this path (nothing here reads them). */
            for (uint32_t k = 0; k < na; ++k) {
                uint32_t e = listed[k], c = g->flat_slot[e];
                const gclip *clip = &g->clips[c];
                bool clamp = g->flat_any_clamp && clip->clamp;
                AT(b, clip_time, c, ch) = clamp ? fminf(gt, 1.0f) : gt;
                if (clip->base_path && !clamp) {
                    s->root_entries[root_count++] = (cb_root_motion_entry){
                        clip->clip, from, lead_to, s->cweights[(size_t)e * s->batch + i]};
                }
            }
        }
        /* Layer clips: weight 1 in their layer, their own time. */
        for (uint32_t l = 0; l < g->flat_layer_count; ++l) {
            const struct gflat_layer *fl = &g->flat_layer[l];
            uint32_t c = fl->slot;
            float from = AT(b, clip_active, c, ch) == CLIP_INACTIVE ? fl->start_offset
                                                                    : AT(b, clip_time, c, ch);
            float ad = fl->duration_s / 1.0f;
            float to = fl->clamp ? fminf(fmaxf(from + dt / ad, 0.0f), 1.0f) : from + dt / ad;
            AT(b, clip_time, c, ch) = fl->clamp ? fminf(fmaxf(to, 0.0f), 1.0f) : wrap01(to);
            AT(b, clip_active, c, ch) = CLIP_ACTIVE;
        }
        b->event_count[ch] = 0;
        cb_root_delta delta = {{0.0f, 0.0f, 0.0f}, 0.0f};
        if (root_count > 0) {
            cb_clip_blend_root_motion(s->root_entries, root_count, &delta);
        }
        out->root_motion[ch] = delta;
    }
}

static void flat_advance(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n, float dt,
                         cb_graph_scratch *s, const cb_graph_outputs *out,
                         cb_graph_scratch_stats *st)
{
    const gnode *bn = &g->nodes[g->flat_blend];
    const uint32_t count = bn->edge_count;
    uint32_t *act = s->active;
    float *aw = s->active_w, *ad = s->active_d;
    bool fast = g->sync_count[g->flat_group] == 0 && !out->events;
    if (fast) {
        flat_advance_fast(g, b, first, n, dt, s, out);
    }
    for (uint32_t i = 0; !fast && i < n; ++i) {
        uint32_t ch = first + i;
        uint32_t na = 0;
        /* In slot order; when that is edge order, walk the weight rows directly. */
        const float *wcol = &s->cweights[i];
        for (uint32_t k = 0; k < count; ++k, wcol += s->batch) {
            uint32_t e = g->flat_in_order ? k : g->flat_order[k];
            float w = g->flat_in_order ? *wcol : s->cweights[(size_t)e * s->batch + i];
            if (w <= EPS) {
                continue; /* marked inactive below, row by row */
            }
            const gclip *clip = &g->clips[g->flat_slot[e]];
            s->flat_active[(size_t)i * g->clip_count + na] = (uint8_t)e;
            act[na] = clip->slot;
            aw[na] = w;
            ad[na] = clip->duration_s / 1.0f; /* as the general path's rate of 1 */
            na++;
        }
        s->flat_count[i] = (uint8_t)na;
        /* Layer clips: weight 1 within their layer, merged in slot order as the general path
         * visits them. */
        for (uint32_t l = 0; l < g->flat_layer_count; ++l) {
            uint32_t c = g->flat_layer[l].slot;
            uint32_t at = na++;
            for (; at > 0 && act[at - 1] > c; --at) {
                act[at] = act[at - 1], aw[at] = aw[at - 1], ad[at] = ad[at - 1];
            }
            act[at] = c, aw[at] = 1.0f, ad[at] = g->clips[c].duration_s / 1.0f;
        }
        advance_active(g, b, ch, na, dt, s, out, st);
    }
    /* Clips without weight this frame, row by row: a branch-free pass per clip (the fast path
     * keeps no activity flags for the blend's clips). */
    for (uint32_t e = 0; e < count; ++e) {
        const float *cw = &s->cweights[(size_t)e * s->batch];
        uint8_t *active = &AT(b, clip_active, g->flat_slot[e], first);
        for (uint32_t i = 0; !fast && i < n; ++i) {
            active[i] = cw[i] > EPS ? active[i] : (uint8_t)CLIP_INACTIVE;
        }
        if (out->kept_weights != NULL) {
            float *kept = &out->kept_weights[(size_t)g->flat_slot[e] * out->kept_stride + first];
            for (uint32_t i = 0; i < n; ++i) {
                kept[i] = cw[i] > EPS ? cw[i] : 0.0f;
            }
        }
    }
    for (uint32_t l = 0; out->kept_weights != NULL && l < g->flat_layer_count; ++l) {
        uint32_t c = g->flat_layer[l].slot;
        for (uint32_t i = 0; i < n; ++i) {
            out->kept_weights[(size_t)c * out->kept_stride + first + i] = 1.0f;
        }
    }
}

/* A flat graph's pose: the blend's clips at their weights, then the layers, in one fused job
 * (the entries flatten() and eval_layers() would build, in the same order). */
static void flat_pose(pose_ctx *x)
{
    const cb_graph *g = x->g;
    const gnode *bn = &g->nodes[g->flat_blend];
    x->entries = 0;
    /* The time stage listed the active edges in slot order; when that is edge order (as for
     * every graph the crowd builds) it is the flatten order too. */
    const uint8_t *listed = &x->s->flat_active[(size_t)x->i * g->clip_count];
    uint32_t count = g->flat_in_order ? x->s->flat_count[x->i] : bn->edge_count;
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t e = g->flat_in_order ? listed[k] : k;
        float share = x->s->cweights[(size_t)e * x->s->batch + x->i];
        if (share > EPS) {
            const gclip *c = &g->clips[g->flat_slot[e]];
            x->s->entries[x->entries++] = (cb_blend_entry){
                .clip = c->clip,
                .time = AT(x->b, clip_time, c->slot, x->ch),
                .weight = share,
            };
        }
    }
    for (uint32_t l = 0; l < g->flat_layer_count; ++l) {
        const struct gflat_layer *fl = &g->flat_layer[l];
        float w = weight_of(x, fl->weight_param);
        if (w > 0.0f) {
            x->s->entries[x->entries++] = (cb_blend_entry){
                .clip = fl->clip,
                .time = AT(x->b, clip_time, fl->slot, x->ch),
                .weight = w,
                .mode = fl->mode,
                .mask = {fl->mask, fl->mask != NULL ? g->soa_joint_count : 0},
            };
        }
    }
    run_blend(x, x->root_out, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 5: post-process                                                                      */

/* A parameter as a finite float, 0 otherwise. */
static inline float param_or_zero(const pose_ctx *x, uint32_t p)
{
    float v = SR(x->s, params, p, x->i);
    return isfinite(v) ? v : 0.0f;
}

/* The IK steps, in order, on the character's local pose in place (crowdblend/ik.h), each
 * computing its chain's model space from the pose, so a step sees the corrections of the ones
 * before it (a look-at over the spine, then a hand on the arm below). A step of weight 0 is
 * skipped; one the job refuses (a target beyond CB_IK_MAX_COORDINATE) leaves the pose as it
 * is and is counted. */
static void post_process(const pose_ctx *x, cb_xform_group *pose, cb_graph_scratch_stats *st)
{
    const cb_graph *g = x->g;
    for (uint32_t k = 0; k < g->ik_count; ++k) {
        const gik *ik = &g->iks[k];
        float w = ik->weight == GNONE ? 1.0f : param_or_zero(x, ik->weight);
        w = w < 1.0f ? w : 1.0f;
        if (!(w > 0.0f)) {
            continue;
        }
        float target[3];
        for (int c = 0; c < 3; ++c) {
            target[c] = param_or_zero(x, ik->target[c]);
        }
        cb_result r;
        if (ik->type == GIK_TWO_BONE) {
            cb_ik_two_bone_job job = {
                .skeleton = g->skeleton,
                .pose = {pose, g->group_count},
                .out = {pose, g->group_count},
                .start_joint = ik->joints[0],
                .mid_joint = ik->joints[1],
                .end_joint = ik->joints[2],
                .target = {target[0], target[1], target[2]},
                .mid_axis = {ik->mid_axis[0], ik->mid_axis[1], ik->mid_axis[2]},
                .weight = w,
                .soften = ik->soften,
            };
            if (ik->pole[0] != GNONE) {
                for (int c = 0; c < 3; ++c) {
                    job.pole[c] = param_or_zero(x, ik->pole[c]);
                }
            }
            r = cb_ik_two_bone_job_run(&job, NULL);
        } else {
            cb_ik_aim_joint chain[GIK_MAX_CHAIN];
            for (uint32_t j = 0; j < ik->joint_count; ++j) {
                chain[j] = (cb_ik_aim_joint){ik->joints[j], ik->joint_weights[j]};
            }
            cb_ik_aim_job job = {
                .skeleton = g->skeleton,
                .pose = {pose, g->group_count},
                .out = {pose, g->group_count},
                .chain = {chain, ik->joint_count},
                .target = {target[0], target[1], target[2]},
                .forward = {ik->forward[0], ik->forward[1], ik->forward[2]},
                .up = {ik->up[0], ik->up[1], ik->up[2]},
                .pole = {ik->pole_dir[0], ik->pole_dir[1], ik->pole_dir[2]},
                .offset = {ik->offset[0], ik->offset[1], ik->offset[2]},
                .angle_limit = ik->limit_rad,
                .weight = w,
            };
            r = cb_ik_aim_job_run(&job, NULL);
        }
        st->refused_ik += r != CB_OK;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The batch                                                                                  */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void lap(bool profile, uint64_t *mark, cb_graph_scratch_stats *st, int stage)
{
    if (profile) {
        uint64_t t = now_ns();
        st->stage_ns[stage] += t - *mark;
        *mark = t;
    }
}

enum { STAGE_PARAMS, STAGE_WEIGHTS, STAGE_TIME, STAGE_POSE, STAGE_POST, STAGE_LTM };

void cb_graph_run_batch(const cb_graph *g, cb_graph_block *b, const cb_graph_param_source *src,
                        uint32_t first, uint32_t n, float dt, cb_graph_scratch *s,
                        const cb_graph_outputs *out, bool profile, cb_graph_scratch_stats *st)
{
    CB_ASSERT(n <= s->batch);
    uint64_t mark = profile ? now_ns() : 0;
    read_params(g, b, src, first, n, s);
    run_processors(g, b, first, n, dt, s, st);
    for (uint32_t p = 0; p < g->param_count; ++p) {
        if (g->params[p].is_weight) {
            for (uint32_t i = 0; i < n; ++i) {
                float v = SR(s, params, p, i);
                st->clamped_weights += !(v >= 0.0f && v <= 1.0f);
            }
        }
        if (g->params[p].type == CB_PARAM_FLOAT) {
            continue;
        }
        /* Ints, bools and triggers compare exactly: a NaN would never compare equal. */
        for (uint32_t i = 0; i < n; ++i) {
            float v = SR(s, params, p, i);
            if (!isfinite(v)) {
                SR(s, params, p, i) = 0.0f;
                st->nonfinite_params++;
            }
        }
    }
    lap(profile, &mark, st, STAGE_PARAMS);

    if (g->flat && !out->general) {
        flat_weights(g, n, s, out->use_ref, st);
    } else {
        propagate_weights(g, b, first, n, dt, s, out->use_ref, st);
    }
    lap(profile, &mark, st, STAGE_WEIGHTS);

    if (g->flat && !out->general) {
        flat_advance(g, b, first, n, dt, s, out, st);
    } else {
        advance_clips(g, b, first, n, dt, s, out, st);
    }
    lap(profile, &mark, st, STAGE_TIME);

    pose_ctx x = {.g = g, .b = b, .s = s, .capacity = g->max_entries + 4, .use_ref = out->use_ref};
    size_t floats = g->joint_count * cb_ltm_matrix_floats(out->layout);
    for (uint32_t base = 0; base < n; base += POSE_CHUNK) {
        uint32_t m = n - base < POSE_CHUNK ? n - base : POSE_CHUNK;
        for (uint32_t j = 0; j < m; ++j) {
            x.i = base + j;
            x.ch = first + base + j;
            x.root_out = pose_at(g, s, j);
            if (g->flat && !out->general) {
                flat_pose(&x);
            } else {
                eval(&x, 0, 0);
            }
        }
        lap(profile, &mark, st, STAGE_POSE);
        if (g->ik_count > 0) {
            for (uint32_t j = 0; j < m; ++j) {
                x.i = base + j;
                x.ch = first + base + j;
                post_process(&x, pose_at(g, s, j), st);
            }
            lap(profile, &mark, st, STAGE_POST);
        }
        for (uint32_t j = 0; j < m; ++j) {
            uint32_t ch = first + base + j;
            cb_ltm_job job = {
                .skeleton = g->skeleton,
                .local = {pose_at(g, s, j), g->group_count},
                .to = (uint32_t)g->joint_count,
                .model_layout = out->layout,
                .model = {(float *)(out->matrices + (size_t)ch * out->matrix_stride), floats},
            };
            if (out->use_ref) {
                cb_ltm_job_run_ref(&job, NULL);
            } else {
                cb_ltm_job_run(&job, NULL);
            }
        }
        lap(profile, &mark, st, STAGE_LTM);
    }
}
