/* Stage 3: time, sync and events. Per character, over its clips with weight (listed in slot
 * order, with their weight and cycle length at their rate): sync groups led by their heaviest
 * clip advance at their weight-averaged duration, followers keep in step on the group's markers
 * (crowdblend/sync.h) or share the group's normalized time, free clips advance at their own
 * rate; then clip times, root motion (the weighted mean of the base-path clips' deltas) and
 * events. The general and the flat paths differ only in how they list a character's clips. */
#include <math.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "crowdblend/sync.h"
#include "graph/runtime/runtime_impl.h"

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

/* Clip c's playback rate for character i: the rate its path gives it (per unit of its weight)
 * times its own speed and speed parameter. Both paths rate a clip through this. */
static inline float clip_rate(const gclip *c, const cb_graph_scratch *s, float path, uint32_t i)
{
    float r = path * c->speed;
    if (c->speed_param != GNONE) {
        float p = SR(s, params, c->speed_param, i);
        r *= isfinite(p) ? p : 0.0f;
    }
    return r;
}

/* Clip c's cycle length at rate r (negative backwards; a rate near 0 a very long cycle). */
static inline float cycle_at(const gclip *c, float r)
{
    return c->duration_s / (fabsf(r) > 1e-6f ? r : 1e-6f);
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

/* Where group grp's leader starts this frame. A group that starts again starts at its leader's
 * offset. Synced by normalized time, every clip of the group showed the group's time, so the
 * leader continues from it whether it played or not; synced on markers, a leader that played
 * continues its own time and a new one joins in step with the last. */
static float leader_from(const cb_graph *g, const cb_graph_block *b, uint32_t grp, uint32_t ch,
                         const gclip *lead)
{
    if (AT(b, group_leader, grp, ch) == NO_LEADER) {
        return lead->start_offset;
    }
    if (g->sync_count[grp] == 0) {
        return AT(b, group_time, grp, ch);
    }
    if (AT(b, clip_active, lead->slot, ch) != CLIP_INACTIVE) {
        return AT(b, clip_time, lead->slot, ch);
    }
    return join_time(g, b, grp, ch, lead);
}

/* A character's active list (s->active, active_w, active_d: slot, weight and cycle length at
 * its rate, in slot order), its groups' sums accumulated as it is listed. Both paths list
 * through these two. */
static inline void list_begin(const cb_graph *g, cb_graph_scratch *s)
{
    for (uint32_t grp = 0; grp < g->group_count_sync; ++grp) {
        s->groups[grp].wsum = s->groups[grp].dsum = s->groups[grp].best = 0.0f;
        s->groups[grp].leader = GNONE;
    }
}

static inline void list_add(const cb_graph *g, cb_graph_scratch *s, uint32_t na, uint32_t c,
                            float w, float d)
{
    s->active[na] = c;
    s->active_w[na] = w;
    s->active_d[na] = d;
    uint32_t grp = g->clips[c].group;
    if (grp != GNONE) {
        group_acc *ga = &s->groups[grp];
        ga->wsum += w;
        ga->dsum += w * d;
        if (w > ga->best) {
            ga->best = w, ga->leader = c;
        }
    }
}

/* The groups of one character, their sums listed: each leader's advance, the group's time
 * and, with markers, its sync position. */
static void advance_groups(const cb_graph *g, cb_graph_block *b, uint32_t ch, float dt,
                           cb_graph_scratch *s)
{
    for (uint32_t grp = 0; grp < g->group_count_sync; ++grp) {
        group_acc *ga = &s->groups[grp];
        if (ga->leader == GNONE) {
            AT(b, group_leader, grp, ch) = NO_LEADER;
            continue;
        }
        const gclip *lead = &g->clips[ga->leader];
        float from = leader_from(g, b, grp, ch, lead);
        ga->step = dt * ga->wsum / ga->dsum; /* the leader's cycles this frame */
        ga->from = from;
        ga->to = lead->clamp ? fminf(fmaxf(from + ga->step, 0.0f), 1.0f) : from + ga->step;
        AT(b, group_leader, grp, ch) = (uint16_t)ga->leader;
        ga->time = advance_time(from, ga->step, lead->clamp);
        AT(b, group_time, grp, ch) = ga->time;
        if (g->sync_count[grp] > 0) {
            cb_sync_names names = group_names(g, grp);
            if (cb_sync_pos_from_time(lead->clip, ga->to, &names, &ga->pos) != CB_OK) {
                ga->pos = (cb_sync_pos){.kind = CB_SYNC_KIND_NORMALIZED, .normalized = ga->time};
            }
        }
    }
}

/* Active clip c's times this frame, unwrapped, into *from and *to; its clip time stored. */
static inline void clip_interval(const cb_graph *g, cb_graph_block *b, uint32_t ch, uint32_t c,
                                 uint8_t was, float d, float dt, const cb_graph_scratch *s,
                                 float *from, float *to)
{
    const gclip *clip = &g->clips[c];
    if (!clip->track_activity) {
        /* In step by normalized time: every clip of the group shows the group's time and moves
         * over the group's interval (one phase for the group, whether the clip played last
         * frame or joins now), for root motion and events alike. */
        const group_acc *ga = &s->groups[clip->group];
        *from = ga->from, *to = ga->to;
        AT(b, clip_time, c, ch) = clip->clamp ? fminf(ga->time, 1.0f) : ga->time;
        return;
    }
    if (clip->group == GNONE) {
        *from = was == CLIP_INACTIVE ? clip->start_offset : AT(b, clip_time, c, ch);
        *to = clip->clamp ? fminf(fmaxf(*from + dt / d, 0.0f), 1.0f) : *from + dt / d;
    } else if (c == s->groups[clip->group].leader) {
        *from = s->groups[clip->group].from, *to = s->groups[clip->group].to;
    } else {
        /* In step on the markers, the cycle nearest where it would be on its own. */
        const group_acc *ga = &s->groups[clip->group];
        cb_sync_names names = group_names(g, clip->group);
        float prev = was != CLIP_INACTIVE ? AT(b, clip_time, c, ch) : ga->to - ga->step;
        *to = prev + ga->step;
        (void)cb_sync_time_from_pos(clip->clip, &ga->pos, &names, *to, to, NULL);
        *from = was != CLIP_INACTIVE ? prev : *to - ga->step;
    }
    AT(b, clip_time, c, ch) = clip->clamp ? fminf(fmaxf(*to, 0.0f), 1.0f) : wrap01(*to);
}

/* One character's time stage over its active list. */
static void advance_active(const cb_graph *g, cb_graph_block *b, uint32_t ch, uint32_t na, float dt,
                           cb_graph_scratch *s, const cb_graph_outputs *out,
                           cb_graph_scratch_stats *st)
{
    advance_groups(g, b, ch, dt, s);
    const bool events = out->events, root = out->root_motion != NULL;
    b->event_count[ch] = 0;
    cb_root_blend rb = cb_root_blend_start();
    for (uint32_t a = 0; a < na; ++a) {
        uint32_t c = s->active[a];
        const gclip *clip = &g->clips[c];
        uint8_t was = CLIP_ACTIVE;
        if (events || clip->track_activity) {
            was = AT(b, clip_active, c, ch);
            AT(b, clip_active, c, ch) = CLIP_ACTIVE;
        }
        float from, to;
        clip_interval(g, b, ch, c, was, s->active_d[a], dt, s, &from, &to);
        if (root && clip->moves_root) {
            /* A clamped clip moves the root over the part of its interval inside [0, 1]: a
             * one-shot start, turn or vault moves the character once, then it stands. */
            float rf = clip->clamp ? fminf(fmaxf(from, 0.0f), 1.0f) : from;
            float rt = clip->clamp ? fminf(fmaxf(to, 0.0f), 1.0f) : to;
            /* (listed clips have weight: above EPS, or 1 for a layer's clip) */
            cb_root_blend_add(&rb, clip->clip, rf, rt, s->active_w[a]);
        }
        if (events && clip->has_markers) {
            /* (re)starts this frame, or was just added: its start counts */
            emit_events(g, b, ch, clip, from, to, was != CLIP_ACTIVE, s->active_w[a], st);
        }
    }
    if (root) { /* else the crowd's deltas stay zero (cb_graph_moves_root) */
        out->root_motion[ch] = cb_root_blend_result(&rb); /* zero when no clip moves the root */
    }
}

/* ---- the general path: a character's clips are those with influence ---- */

/* The lowest set bit of m (not 0). */
static inline uint32_t lowest_bit(uint64_t m)
{
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctzll(m);
#else
    uint32_t k = 0;
    for (; (m & 1u) == 0; m >>= 1) {
        ++k;
    }
    return k;
#endif
}

/* Which clips have influence (weight above EPS), row by row over the batch: bits in s->live,
 * and the clips without it marked inactive where events or activity are tracked. Per
 * character this is what listing clip by clip decided, before anything of that character
 * reads it (a character's time touches only its own column). */
static void live_clips(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                       cb_graph_scratch *s, const cb_graph_outputs *out)
{
    memset(s->live, 0, cb_graph_live_words(g) * s->batch * sizeof(uint64_t));
    for (uint32_t c = 0; c < g->clip_count; ++c) {
        const float *w = &SR(s, w, g->clips[c].node, 0);
        uint64_t *live = &SR(s, live, c / 64, 0);
        const uint64_t bit = (uint64_t)1 << (c % 64);
        for (uint32_t i = 0; i < n; ++i) {
            live[i] |= w[i] <= EPS ? 0u : bit;
        }
        if (out->events || g->clips[c].track_activity) {
            uint8_t *active = &AT(b, clip_active, c, first);
            for (uint32_t i = 0; i < n; ++i) {
                active[i] = w[i] <= EPS ? (uint8_t)CLIP_INACTIVE : active[i];
            }
        }
    }
}

void cb_graph_stage_time(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n, float dt,
                         cb_graph_scratch *s, const cb_graph_outputs *out,
                         cb_graph_scratch_stats *st)
{
    live_clips(g, b, first, n, s, out);
    const size_t words = cb_graph_live_words(g);
    const bool gated = cb_graph_lock_gated(g, s, n);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t ch = first + i, na = 0;
        list_begin(g, s);
        for (size_t k = 0; k < words; ++k) {
            for (uint64_t m = SR(s, live, k, i); m != 0; m &= m - 1) {
                uint32_t c = (uint32_t)(64 * k) + lowest_bit(m); /* in slot order */
                const gclip *clip = &g->clips[c];
                float w = SR(s, w, clip->node, i);
                /* the rates its parents contributed, a weighted sum, per unit of weight */
                float path = g->uniform_rate ? 1.0f : SR(s, rate, clip->node, i) / w;
                list_add(g, s, na++, c, w, cycle_at(clip, clip_rate(clip, s, path, i)));
            }
        }
        advance_active(g, b, ch, na, dt, s, out, st);
        if (g->lock_leg_count > 0 && (!gated || cb_graph_lock_on(g, s, i))) {
            cb_graph_lock_planting(g, b, ch, i, na, dt, s);
        }
        if (g->sm_count > 0) {
            cb_graph_machine_times(g, b, ch, na, dt, s);
        }
    }
    /* The kept weights row by row (a clip's row of the batch is its node's weight row, which
     * this stage does not write), as the flat path keeps them. */
    for (uint32_t c = 0; out->kept_weights != NULL && c < g->clip_count; ++c) {
        const float *w = &SR(s, w, g->clips[c].node, 0);
        float *kept = &out->kept_weights[(size_t)c * out->kept_stride + first];
        for (uint32_t i = 0; i < n; ++i) {
            kept[i] = w[i] > EPS ? w[i] : 0.0f;
        }
    }
}

/* ---- the flat path: the blend's clips in slot order, then the layer clips ---- */

/* Compiled once with every rate 1 and once without, so that the copy at rate 1 (W2's) is not
 * compiled around the registers the rates take. */
#if defined(__GNUC__) || defined(__clang__)
#define FLAT_INLINE static inline __attribute__((always_inline))
#else
#define FLAT_INLINE static inline
#endif

/* Character i's active list: the blend's edges with weight, read straight from their share rows
 * in slot order (when that is edge order, row after row), noted for the pose stage too; then
 * the layer clips at weight 1 within their layers, merged in slot order as the general path
 * lists them. A flat graph's rates are the blend's warp (graph.h rate_warp) and the clips' own
 * speeds and speed parameters (clip_rate), or all 1 (`uniform`: g->uniform_rate). */
FLAT_INLINE uint32_t flat_list(const cb_graph *g, cb_graph_scratch *s, uint32_t i, bool uniform)
{
    const gnode *bn = &g->nodes[g->flat_blend];
    uint8_t *listed = &s->flat_active[(size_t)i * g->clip_count];
    const float *wcol = &SR(s, ew, bn->first_edge, i);
    uint32_t na = 0;
    const bool warped = bn->u.blend.warp_param != GNONE;
    float r = warped ? cb_graph_warp_rate(g, bn, s, i) : 1.0f;
    list_begin(g, s);
    for (uint32_t k = 0; k < bn->edge_count; ++k, wcol += s->batch) {
        uint32_t e = g->flat_in_order ? k : g->flat_order[k];
        float w = g->flat_in_order ? *wcol : SR(s, ew, bn->first_edge + e, i);
        if (w <= EPS) {
            continue;
        }
        uint32_t c = g->flat_slot[e];
        listed[na] = (uint8_t)e;
        float d = g->clips[c].duration_s; /* at rate 1, or: */
        if (!uniform) {
            /* the path's rate as the general path computes it, so that both give the same bits:
             * the rate the blend contributed, per unit of weight (the blend's weight and rate
             * are 1, its clips' rate the warp's) */
            float path = warped ? (w * r) / w : 1.0f;
            d = cycle_at(&g->clips[c], clip_rate(&g->clips[c], s, path, i));
        }
        list_add(g, s, na++, c, w, d);
    }
    s->flat_count[i] = (uint8_t)na;
    const gnode *ln = g->flat_layers != GNONE ? &g->nodes[g->flat_layers] : NULL;
    for (uint32_t l = 0; ln != NULL && l < ln->u.layers.layer_count; ++l) {
        uint32_t c = g->layer_slot[ln->u.layers.first_layer + l];
        uint32_t at = na++;
        for (; at > 0 && s->active[at - 1] > c; --at) {
            s->active[at] = s->active[at - 1];
            s->active_w[at] = s->active_w[at - 1];
            s->active_d[at] = s->active_d[at - 1];
        }
        /* (no sync group: flat detection; the path's rate is the layers node's, 1) */
        s->active[at] = c, s->active_w[at] = 1.0f;
        s->active_d[at] = uniform ? g->clips[c].duration_s
                                  : cycle_at(&g->clips[c], clip_rate(&g->clips[c], s, 1.0f, i));
    }
    return na;
}

/* The flat time stage's characters, with their rates all 1 (`uniform`: a copy that rates no
 * clip) or not. */
FLAT_INLINE void flat_times(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                            float dt, cb_graph_scratch *s, const cb_graph_outputs *out,
                            cb_graph_scratch_stats *st, bool gated, bool uniform)
{
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t na = flat_list(g, s, i, uniform);
        advance_active(g, b, first + i, na, dt, s, out, st);
        if (g->lock_leg_count > 0 && (!gated || cb_graph_lock_on(g, s, i))) {
            cb_graph_lock_planting(g, b, first + i, i, na, dt, s);
        }
    }
}

void cb_graph_stage_time_flat(const cb_graph *g, cb_graph_block *b, uint32_t first, uint32_t n,
                              float dt, cb_graph_scratch *s, const cb_graph_outputs *out,
                              cb_graph_scratch_stats *st)
{
    const bool gated = cb_graph_lock_gated(g, s, n);
    if (g->uniform_rate) {
        flat_times(g, b, first, n, dt, s, out, st, gated, true);
    } else {
        flat_times(g, b, first, n, dt, s, out, st, gated, false);
    }
    /* The blend's clips without weight this frame, row by row (the general path marks them as
     * it lists), and the kept weights. */
    const gnode *bn = &g->nodes[g->flat_blend];
    for (uint32_t e = 0; e < bn->edge_count; ++e) {
        const float *cw = &SR(s, ew, bn->first_edge + e, 0);
        uint32_t c = g->flat_slot[e];
        if (out->events || g->clips[c].track_activity) {
            uint8_t *active = &AT(b, clip_active, c, first);
            for (uint32_t i = 0; i < n; ++i) {
                active[i] = cw[i] > EPS ? active[i] : (uint8_t)CLIP_INACTIVE;
            }
        }
        if (out->kept_weights != NULL) {
            float *kept = &out->kept_weights[(size_t)c * out->kept_stride + first];
            for (uint32_t i = 0; i < n; ++i) {
                kept[i] = cw[i] > EPS ? cw[i] : 0.0f;
            }
        }
    }
    const gnode *ln = g->flat_layers != GNONE ? &g->nodes[g->flat_layers] : NULL;
    for (uint32_t l = 0; ln != NULL && out->kept_weights != NULL && l < ln->u.layers.layer_count;
         ++l) {
        uint32_t c = g->layer_slot[ln->u.layers.first_layer + l];
        for (uint32_t i = 0; i < n; ++i) {
            out->kept_weights[(size_t)c * out->kept_stride + first + i] = 1.0f;
        }
    }
}
