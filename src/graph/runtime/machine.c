/* State machines, per character: their conditions and transitions (stage 2, where they step
 * and give their states' shares), and their states' times (stage 3, where exit times are
 * measured). A transition crossfades (both states evaluated, mixed by smoothstep progress) or
 * inertializes (only the destination; the pose shown decays away, inertial.c); an interrupting
 * one always inertializes, so that it starts from the pose on screen. */
#include <math.h>
#include <string.h>

#include "base/scalar_math.h"
#include "graph/runtime/runtime_impl.h"

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
        shown = AT(b, sm_inert, m, ch) ? before : cb_fsmoothstep(x0);
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
            s->alpha[(size_t)m * s->batch + i] = cb_fsmoothstep(x);
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
        a = cb_fsmoothstep(x);
    }
    s->alpha[(size_t)m * s->batch + i] = a;
}

void cb_graph_machine_shares(const cb_graph *g, cb_graph_block *b, const gnode *node,
                             cb_graph_scratch *s, uint32_t i, uint32_t ch, float w, float rate,
                             float dt)
{
    uint32_t mi = node->u.sm.sm;
    const gsm *sm = &g->sms[mi];
    if (w > 0.0f) {
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
        cb_graph_contribute(g, s, sc->node, i, w * share_cur, rate * sc->speed);
    }
    if (nxt != NO_STATE && share_next > 0.0f) {
        const gstate *sn = &g->states[sm->first_state + nxt];
        SR(s, ew, node->first_edge + nxt, i) += share_next;
        cb_graph_contribute(g, s, sn->node, i, w * share_next, rate * sn->speed);
    }
    if (sm->inert_slot != GNONE && AT(b, sm_capture, mi, ch) != CAPTURE_NONE) {
        /* The pose the transition starts from is evaluated once more: its nodes need their
         * shares, without weight. */
        uint16_t fc = AT(b, sm_from_cur, mi, ch), fn = AT(b, sm_from_next, mi, ch);
        cb_graph_contribute(g, s, g->states[sm->first_state + fc].node, i, 0.0f, 0.0f);
        if (fn != NO_STATE) {
            cb_graph_contribute(g, s, g->states[sm->first_state + fn].node, i, 0.0f, 0.0f);
        }
    }
}

void cb_graph_machine_times(const cb_graph *g, cb_graph_block *b, uint32_t ch, uint32_t na,
                            float dt, cb_graph_scratch *s)
{
    const uint32_t *act = s->active;
    const float *aw = s->active_w, *ad = s->active_d;
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

void cb_graph_machine_transition(const cb_graph_block *b, uint32_t m, uint32_t i,
                                 cb_crowd_transition *out)
{
    uint16_t cur = AT(b, sm_current, m, i), next = AT(b, sm_next, m, i);
    *out = (cb_crowd_transition){.from = cur, .to = CB_INVALID_INDEX};
    if (next == NO_STATE) {
        return;
    }
    const cb_graph *g = b->graph;
    const gtransition *t = &g->transitions[g->sms[m].first_transition + AT(b, sm_transition, m, i)];
    /* step_machine ends a transition in the update where its elapsed time reaches its
     * duration, so one still running has elapsed < duration: the progress stays below 1. */
    out->active = true;
    out->to = next;
    out->elapsed_s = AT(b, sm_elapsed, m, i);
    out->duration_s = t->duration_s;
    out->progress = out->elapsed_s / t->duration_s;
    out->blend = AT(b, sm_inert, m, i) ? CB_TRANSITION_INERTIALIZE : CB_TRANSITION_CROSSFADE;
}
