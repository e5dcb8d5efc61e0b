/* Queries on a built graph. Invalid requests follow the library's convention
 * (docs/architecture.md, "Conventions"): NULL for a pointer, CB_INVALID_INDEX for an index, 0 for
 * a count, the zero value of an enum, CB_ERR_* from a lookup. */
#include <string.h>

#include "graph/graph_impl.h"

const char *cb_graph_name(const cb_graph *g)
{
    return g != NULL ? g->name : NULL;
}

const cb_skeleton *cb_graph_skeleton(const cb_graph *g)
{
    return g != NULL ? g->skeleton : NULL;
}

uint32_t cb_graph_param_count(const cb_graph *g)
{
    return g != NULL ? g->param_count : 0;
}

cb_result cb_graph_find_param(const cb_graph *g, const char *name, uint32_t *index)
{
    if (g == NULL || name == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    return cb_graph_find_param_hash(g, cb_name_hash(name), index);
}

cb_result cb_graph_find_param_hash(const cb_graph *g, uint32_t hash, uint32_t *index)
{
    if (g == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t i = 0; i < g->param_count; ++i) {
        if (g->params[i].hash == hash) {
            *index = i;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

const char *cb_graph_param_name(const cb_graph *g, uint32_t i)
{
    return g != NULL && i < g->param_count ? g->params[i].name : NULL;
}

cb_param_type cb_graph_param_type(const cb_graph *g, uint32_t i)
{
    return g != NULL && i < g->param_count ? g->params[i].type : _CB_PARAM_TYPE_DEFAULT;
}

float cb_graph_param_default(const cb_graph *g, uint32_t i)
{
    return g != NULL && i < g->param_count ? g->params[i].default_value : 0.0f;
}

uint32_t cb_graph_foot_lock_leg_count(const cb_graph *g)
{
    return g != NULL ? g->lock_leg_count : 0;
}

/* The foot_lock step holding the graph's lock leg `leg` (< lock_leg_count), and the leg's index
 * within it. */
static const gik *lock_leg_step(const cb_graph *g, uint32_t leg, uint32_t *l)
{
    for (uint32_t k = 0; k < g->ik_count; ++k) {
        const gik *ik = &g->iks[k];
        if (ik->type == GIK_FOOT_LOCK && leg - ik->lock.first_leg < ik->joint_count / 3) {
            *l = leg - ik->lock.first_leg;
            return ik;
        }
    }
    return NULL;
}

cb_result cb_graph_foot_lock_leg_at_joint(const cb_graph *g, uint32_t joint, uint32_t *leg)
{
    if (g == NULL || leg == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t n = 0; n < g->lock_leg_count; ++n) {
        uint32_t l = 0;
        const gik *ik = lock_leg_step(g, n, &l);
        if (ik->joints[3 * l + 2] == joint) {
            *leg = n;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

/* A graph's "none" (GNONE) as the API's CB_INVALID_INDEX. */
static uint32_t public_index(uint32_t i)
{
    return i == GNONE ? CB_INVALID_INDEX : i;
}

cb_result cb_graph_query_foot_lock_leg_info(const cb_graph *g, uint32_t leg,
                                            cb_graph_foot_lock_leg_info *out)
{
    if (g == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (leg >= g->lock_leg_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    uint32_t l = 0;
    const gik *ik = lock_leg_step(g, leg, &l);
    *out = (cb_graph_foot_lock_leg_info){
        .end_joint = ik->joints[3 * l + 2],
        .root_params = {public_index(ik->lock.root[0]), public_index(ik->lock.root[1]),
                        public_index(ik->lock.root[2]), public_index(ik->lock.yaw)},
        .locked_param = public_index(ik->lock.locked[l]),
        .failed_param = public_index(ik->lock.failed[l]),
    };
    return CB_OK;
}

uint32_t cb_graph_state_machine_count(const cb_graph *g)
{
    return g != NULL ? g->sm_count : 0;
}

cb_result cb_graph_find_state_machine(const cb_graph *g, const char *name, uint32_t *index)
{
    if (g == NULL || name == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t s = 0; s < g->sm_count; ++s) {
        if (strcmp(g->nodes[g->sms[s].node].name, name) == 0) {
            *index = s;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

uint32_t cb_graph_state_count(const cb_graph *g, uint32_t machine)
{
    return g != NULL && machine < g->sm_count ? g->sms[machine].state_count : 0;
}

const char *cb_graph_state_name(const cb_graph *g, uint32_t machine, uint32_t state)
{
    if (g == NULL || machine >= g->sm_count || state >= g->sms[machine].state_count) {
        return NULL;
    }
    return g->states[g->sms[machine].first_state + state].name;
}

cb_result cb_graph_find_state(const cb_graph *g, uint32_t machine, const char *name,
                              uint32_t *state)
{
    if (g == NULL || name == NULL || state == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (machine >= g->sm_count) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    const gsm *sm = &g->sms[machine];
    for (uint32_t s = 0; s < sm->state_count; ++s) {
        if (strcmp(g->states[sm->first_state + s].name, name) == 0) {
            *state = s;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

uint32_t cb_graph_node_count(const cb_graph *g)
{
    return g != NULL ? g->node_count : 0;
}

const char *cb_graph_node_name(const cb_graph *g, uint32_t node)
{
    return g != NULL && node < g->node_count ? g->nodes[node].name : NULL;
}

cb_result cb_graph_find_node(const cb_graph *g, const char *name, uint32_t *node)
{
    if (g == NULL || name == NULL || node == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (uint32_t i = 0; i < g->node_count; ++i) {
        if (name[0] != '\0' && strcmp(g->nodes[i].name, name) == 0) {
            *node = i;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

uint32_t cb_graph_clip_count(const cb_graph *g)
{
    return g != NULL ? g->clip_count : 0;
}

uint32_t cb_graph_clip_node(const cb_graph *g, uint32_t clip)
{
    return g != NULL && clip < g->clip_count ? g->clip_nodes[clip] : CB_INVALID_INDEX;
}

const cb_clip *cb_graph_clip(const cb_graph *g, uint32_t clip)
{
    return g != NULL && clip < g->clip_count ? g->clips[clip].clip : NULL;
}

uint32_t cb_graph_node_clip(const cb_graph *g, uint32_t node)
{
    if (g == NULL || node >= g->node_count || g->nodes[node].type != GNODE_CLIP) {
        return CB_INVALID_INDEX;
    }
    return g->nodes[node].u.clip.slot;
}
