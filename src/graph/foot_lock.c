/* The foot_lock post-process step (crowdblend/graph.h cb_graph_foot_lock_desc) at build time:
 * its desc checked and resolved into a gik, and the compile pass that tables, for each of the
 * graph's lock legs and each clip slot, the markers that plant and lift the leg's foot (the
 * rule of graph/runtime.h). The frame's side is runtime/foot_lock.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "graph/compile.h"
#include "graph/runtime.h"

cb_graph_foot_lock_desc cb_graph_query_foot_lock_desc(const cb_graph_foot_lock_desc *desc)
{
    cb_graph_foot_lock_desc d = desc != NULL ? *desc : (cb_graph_foot_lock_desc){0};
    if (d.release_s == 0.0f) {
        d.release_s = CB_GRAPH_DEFAULT_LOCK_RELEASE_S;
    }
    if (d.fail_distance_m == 0.0f) {
        d.fail_distance_m = CB_GRAPH_DEFAULT_LOCK_FAIL_DISTANCE_M;
    }
    if (d.soften == 0.0f) {
        d.soften = CB_IK_DEFAULT_SOFTEN;
    }
    return d;
}

cb_graph_foot_lock_leg cb_graph_query_foot_lock_leg(const cb_graph_foot_lock_leg *leg,
                                                    uint32_t index)
{
    static const char *const names[2][2] = {{"foot_plant_l", "foot_lift_l"},
                                            {"foot_plant_r", "foot_lift_r"}};
    cb_graph_foot_lock_leg l = leg != NULL ? *leg : (cb_graph_foot_lock_leg){{0}};
    if (index < 2 && l.plant_marker == NULL) {
        l.plant_marker = names[index][0];
    }
    if (index < 2 && l.lift_marker == NULL) {
        l.lift_marker = names[index][1];
    }
    return l;
}

/* An output parameter: a float that nothing else in the graph writes, marked as written. */
static cb_result output_param(cb_graph_builder *b, const char *name, const char *what,
                              uint32_t *out, cb_error *err)
{
    *out = GNONE;
    if (name == NULL) {
        return CB_OK;
    }
    cb_result r = cb_graph_builder_float(b, name, what, out, err);
    if (r == CB_OK && VEC_AT(b->params, gparam, *out).written_by_graph) {
        r = cb_error_set(err, CB_ERR_DUPLICATE,
                         "%s: parameter '%s' is already written by the graph", what, name);
    }
    return r;
}

/* Whether leg a's start joint has a joint of leg e below it (no joint shared): e's end joint,
 * the lowest of e's. a's solve would then move e's chain. */
static bool leg_above(const cb_skeleton *s, const uint32_t *a, const uint32_t *e)
{
    return cb_skeleton_in_subtree(s, e[2], a[0]);
}

/* Leg l: its chain validated as a two-bone job, in a subtree of its own (no joint of it below an
 * earlier leg's start joint, nor one of an earlier leg below its own: the runtime solves a
 * character's legs side by side, runtime/foot_lock.c), its markers named. */
static cb_result lock_leg(cb_graph_builder *b, const cb_graph_foot_lock_desc *d, uint32_t l, gik *g,
                          cb_error *err)
{
    char what[48];
    snprintf(what, sizeof what, "foot lock: legs[%u]", l);
    const cb_graph_foot_lock_leg leg = cb_graph_query_foot_lock_leg(&d->legs[l], l);
    gik chain = {.type = GIK_TWO_BONE, .joint_count = 3, .soften = g->soften};
    const char *names[3] = {leg.chain.start_joint, leg.chain.mid_joint, leg.chain.end_joint};
    cb_result r = CB_OK;
    for (int k = 0; k < 3 && r == CB_OK; ++k) {
        r = cb_graph_builder_joint(b, names[k], what, &chain.joints[k], err);
    }
    memcpy(chain.mid_axis, leg.chain.mid_axis, sizeof chain.mid_axis);
    if (r == CB_OK) {
        r = cb_graph_builder_check_ik(b, &chain, what, err);
    }
    for (uint32_t k = 0; k < 3 * l && r == CB_OK; ++k) {
        for (int m = 0; m < 3 && r == CB_OK; ++m) {
            if (g->joints[k] == chain.joints[m]) {
                r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                 "%s: joint '%s' belongs to an earlier leg", what, names[m]);
            }
        }
    }
    for (uint32_t e = 0; e < l && r == CB_OK; ++e) {
        const uint32_t *other = &g->joints[3 * e];
        if (leg_above(b->skeleton, other, chain.joints) ||
            leg_above(b->skeleton, chain.joints, other)) {
            r = cb_error_set(err, CB_ERR_HIERARCHY,
                             "%s: its chain and legs[%u]'s are not in disjoint subtrees (one "
                             "start joint is above the other leg)",
                             what, e);
        }
    }
    const char *markers[2] = {leg.plant_marker, leg.lift_marker};
    for (int m = 0; m < 2 && r == CB_OK; ++m) {
        if (markers[m] == NULL || markers[m][0] == '\0' || strlen(markers[m]) > CB_GRAPH_NAME_MAX) {
            r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                             "%s: the %s marker needs a name of 1 to %d bytes", what,
                             m == 0 ? "plant" : "lift", CB_GRAPH_NAME_MAX);
        } else {
            snprintf(g->lock.markers[l][m], sizeof g->lock.markers[l][m], "%s", markers[m]);
        }
    }
    if (r == CB_OK) {
        r = output_param(b, leg.locked, what, &g->lock.locked[l], err);
    }
    if (r == CB_OK) {
        r = output_param(b, leg.failed, what, &g->lock.failed[l], err);
    }
    memcpy(&g->joints[3 * l], chain.joints, sizeof chain.joints[0] * 3);
    memcpy(g->leg_axes[l], chain.mid_axis, sizeof g->leg_axes[l]);
    return r;
}

/* The root's world placement: four float parameters, or none (root motion). */
static cb_result lock_root(cb_graph_builder *b, const cb_graph_foot_lock_desc *d, gik *g,
                           cb_error *err)
{
    const char *what = "foot lock";
    int named = (d->root_position[0] != NULL) + (d->root_position[1] != NULL) +
                (d->root_position[2] != NULL) + (d->root_yaw != NULL);
    g->lock.root[0] = g->lock.root[1] = g->lock.root[2] = g->lock.yaw = GNONE;
    if (named == 0) {
        return CB_OK;
    }
    if (named != 4) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "%s: name root_position's three parameters and root_yaw, or none",
                            what);
    }
    cb_result r = CB_OK;
    for (int k = 0; k < 3 && r == CB_OK; ++k) {
        r = cb_graph_builder_float(b, d->root_position[k], what, &g->lock.root[k], err);
    }
    return r == CB_OK ? cb_graph_builder_float(b, d->root_yaw, what, &g->lock.yaw, err) : r;
}

/* Whether joint a is a strict ancestor of joint j (the skeleton's own subtree test). */
static bool above(const cb_skeleton *s, int32_t a, uint32_t j)
{
    return a >= 0 && (uint32_t)a != j && cb_skeleton_in_subtree(s, j, (size_t)a);
}

/* The pelvis drop: its bound, and the joint it moves, named or the legs' nearest common
 * ancestor; an ancestor of every leg's start joint either way (so moving it moves every hip
 * and no leg's own joint). */
static cb_result lock_pelvis(cb_graph_builder *b, const cb_graph_foot_lock_desc *d, gik *g,
                             cb_error *err)
{
    const char *what = "foot lock";
    const cb_skeleton *sk = b->skeleton;
    const int32_t *parents = cb_skeleton_parents(sk);
    const uint32_t legs = g->joint_count / 3;
    g->lock.pelvis_drop = d->pelvis_drop_m;
    g->lock.pelvis = GNONE;
    if (!isfinite(d->pelvis_drop_m)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "%s: pelvis_drop_m is not finite", what);
    }
    if (!(d->pelvis_drop_m >= 0.0f && d->pelvis_drop_m <= 1.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: pelvis_drop_m (%.9g) must be in [0, 1] m", what,
                            (double)d->pelvis_drop_m);
    }
    if (d->pelvis_drop_m == 0.0f && d->pelvis_joint == NULL) {
        return CB_OK; /* off, and nothing named: a step valid without the option stays valid
                         (a leg from the root has no joint above it) */
    }
    int32_t a = parents[g->joints[0]];
    if (d->pelvis_joint != NULL) {
        uint32_t j;
        cb_result r = cb_graph_builder_joint(b, d->pelvis_joint, what, &j, err);
        if (r != CB_OK) {
            return r;
        }
        a = (int32_t)j;
    }
    for (uint32_t l = 0; l < legs; ++l) {
        while (d->pelvis_joint == NULL && a >= 0 && !above(sk, a, g->joints[3 * l])) {
            a = parents[a];
        }
        if (a < 0) {
            return cb_error_set(err, CB_ERR_HIERARCHY,
                                "%s: the legs have no common ancestor for the pelvis drop", what);
        }
        if (!above(sk, a, g->joints[3 * l])) {
            return cb_error_set(err, CB_ERR_HIERARCHY,
                                "%s: pelvis joint '%s' is not an ancestor of legs[%u]'s start "
                                "joint",
                                what, d->pelvis_joint, l);
        }
    }
    g->lock.pelvis = (uint32_t)a;
    return CB_OK;
}

/* Every output (locked, failed) of the step names its own parameter, and none that the step
 * reads (the root placement, the weight): the step writes them after reading its inputs, so a
 * shared one would hold the last leg's flag, or the step would read its own output a frame
 * late instead of the host's value. */
static cb_result check_outputs(const gik *g, uint32_t leg_count, cb_error *err)
{
    uint32_t outputs[2 * CB_GRAPH_FOOT_LOCK_MAX_LEGS], n = 0;
    for (uint32_t l = 0; l < leg_count; ++l) {
        outputs[n++] = g->lock.locked[l];
        outputs[n++] = g->lock.failed[l];
    }
    const uint32_t inputs[5] = {g->lock.root[0], g->lock.root[1], g->lock.root[2], g->lock.yaw,
                                g->weight};
    for (uint32_t k = 0; k < n; ++k) {
        if (outputs[k] == GNONE) {
            continue;
        }
        for (uint32_t m = k + 1; m < n; ++m) {
            if (outputs[m] == outputs[k]) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "foot lock: legs[%u].%s and legs[%u].%s name one parameter",
                                    k / 2, k % 2 ? "failed" : "locked", m / 2,
                                    m % 2 ? "failed" : "locked");
            }
        }
        for (int i = 0; i < 5; ++i) {
            if (inputs[i] == outputs[k]) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "foot lock: legs[%u].%s names a parameter the step reads (%s)",
                                    k / 2, k % 2 ? "failed" : "locked",
                                    i < 3    ? "root_position"
                                    : i == 3 ? "root_yaw"
                                             : "weight");
            }
        }
    }
    return CB_OK;
}

/* The lock legs of the steps added before this one. */
static uint32_t lock_legs_before(const cb_graph_builder *b)
{
    uint32_t n = 0;
    for (size_t k = 0; k < b->iks.count; ++k) {
        const gik *g = &VEC_AT(b->iks, gik, k);
        n += g->type == GIK_FOOT_LOCK ? g->joint_count / 3 : 0;
    }
    return n;
}

cb_result cb_graph_add_foot_lock(cb_graph_builder *b, const cb_graph_foot_lock_desc *desc,
                                 cb_error *err)
{
    if (b == NULL || desc == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "foot lock: NULL argument");
    }
    const cb_graph_foot_lock_desc d = cb_graph_query_foot_lock_desc(desc);
    const char *what = "foot lock";
    if (d.leg_count == 0 || d.leg_count > CB_GRAPH_FOOT_LOCK_MAX_LEGS || d.legs == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "%s: 1 to %d legs are needed", what,
                            CB_GRAPH_FOOT_LOCK_MAX_LEGS);
    }
    if (!(d.soften > 0.0f && d.soften <= 1.0f) || !(d.release_s > 0.0f && d.release_s <= 10.0f) ||
        !(d.fail_distance_m > 0.0f && d.fail_distance_m <= 1.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "%s: need soften (%g) in (0, 1], release_s (%g) in (0, 10] and "
                            "fail_distance_m (%g) in (0, 1]",
                            what, (double)d.soften, (double)d.release_s, (double)d.fail_distance_m);
    }
    gik g = {.type = GIK_FOOT_LOCK, .joint_count = 3 * d.leg_count, .soften = d.soften};
    g.target[0] = g.target[1] = g.target[2] = g.pole[0] = g.pole[1] = g.pole[2] = GNONE;
    g.lock.release_s = d.release_s;
    g.lock.fail_distance = d.fail_distance_m;
    g.lock.first_leg = lock_legs_before(b);
    cb_result r = CB_OK;
    for (uint32_t l = 0; l < d.leg_count && r == CB_OK; ++l) {
        r = lock_leg(b, &d, l, &g, err);
    }
    if (r == CB_OK) {
        r = lock_root(b, &d, &g, err);
    }
    if (r == CB_OK) {
        r = lock_pelvis(b, &d, &g, err);
    }
    if (r == CB_OK) {
        r = cb_graph_builder_number(b, d.weight, what, &g.weight, err);
    }
    if (r == CB_OK) {
        r = check_outputs(&g, d.leg_count, err);
    }
    if (r == CB_OK) {
        r = cb_graph_builder_push_ik(b, &g, &d.lod, what, err);
    }
    for (uint32_t l = 0; l < d.leg_count && r == CB_OK; ++l) {
        /* Only once the step is in: a refused step leaves the parameters as they were. */
        if (g.lock.locked[l] != GNONE) {
            VEC_AT(b->params, gparam, g.lock.locked[l]).written_by_graph = true;
        }
        if (g.lock.failed[l] != GNONE) {
            VEC_AT(b->params, gparam, g.lock.failed[l]).written_by_graph = true;
        }
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* The compile pass                                                                           */

/* Every lock leg's markers in every clip slot: counted into *total, and with fill, tabled;
 * fails on a clip with more markers of a foot than the table takes. */
static cb_result each_leg_slot(cb_graph_compile *c, size_t *total, bool fill)
{
    cb_graph *g = c->g;
    float time[CB_GRAPH_FOOT_MAX_MARKERS];
    bool plant[CB_GRAPH_FOOT_MAX_MARKERS];
    size_t at = 0;
    for (uint32_t k = 0; k < g->ik_count; ++k) {
        const gik *ik = &g->iks[k];
        for (uint32_t l = 0; ik->type == GIK_FOOT_LOCK && l < ik->joint_count / 3; ++l) {
            for (uint32_t s = 0; s < g->clip_count; ++s) {
                const gclip *clip = &g->clips[s];
                uint32_t n = cb_graph_foot_markers(clip->clip, ik->lock.markers[l][0],
                                                   ik->lock.markers[l][1], time, plant,
                                                   CB_GRAPH_FOOT_MAX_MARKERS);
                if (n == UINT32_MAX) {
                    return cb_error_set(c->err, CB_ERR_TOO_MANY,
                                        "foot lock: clip '%s' has more than %d '%s' and '%s' "
                                        "markers",
                                        cb_clip_name(clip->clip), CB_GRAPH_FOOT_MAX_MARKERS,
                                        ik->lock.markers[l][0], ik->lock.markers[l][1]);
                }
                if (fill) {
                    size_t row = (size_t)(ik->lock.first_leg + l) * g->clip_count + s;
                    g->foot_first[row] = (uint32_t)at;
                    g->foot_count[row] = n;
                    memcpy(g->foot_time + at, time, n * sizeof *time);
                    for (uint32_t m = 0; m < n; ++m) {
                        g->foot_plant[at + m] = plant[m];
                    }
                }
                at += n;
            }
        }
    }
    *total = at;
    return CB_OK;
}

cb_result cb_graph_pass_foot_tables(cb_graph_compile *c)
{
    cb_graph *g = c->g;
    bool first = true;
    g->lock_gate = GNONE;
    g->lock_max_lod = g->lod_param == GNONE ? INFINITY : 0.0f;
    for (uint32_t k = 0; k < g->ik_count; ++k) {
        const gik *ik = &g->iks[k];
        if (ik->type == GIK_FOOT_LOCK) {
            g->lock_leg_count += ik->joint_count / 3;
            g->lock_gate = first || ik->weight == g->lock_gate ? ik->weight : GNONE;
            g->lock_max_lod = ik->max_lod > g->lock_max_lod ? ik->max_lod : g->lock_max_lod;
            first = false;
        }
    }
    if (g->lock_leg_count == 0) {
        return CB_OK;
    }
    size_t markers = 0;
    cb_result r = each_leg_slot(c, &markers, false);
    if (r != CB_OK) {
        return r;
    }
    size_t rows = (size_t)g->lock_leg_count * g->clip_count;
    g->foot_bytes = 2 * rows * sizeof(uint32_t) + markers * (sizeof(float) + 1) + 16;
    char *m = cb_alloc_zeroed(&c->b->allocator, g->foot_bytes, 16);
    if (m == NULL) {
        g->foot_bytes = 0;
        return cb_error_set(c->err, CB_ERR_OUT_OF_MEMORY, "cb_graph_build");
    }
    g->foot_first = (uint32_t *)m;
    g->foot_count = g->foot_first + rows;
    g->foot_time = (float *)(g->foot_count + rows);
    g->foot_plant = (bool *)(g->foot_time + markers);
    return each_leg_slot(c, &markers, true);
}

void cb_graph_free_foot_tables(cb_graph *g, const cb_allocator *a)
{
    if (g->foot_bytes != 0) {
        cb_free(a, g->foot_first, g->foot_bytes);
    }
}
