/* Foot locking (crowdblend/graph.h cb_graph_foot_lock_desc), stages 3 and 5. The time stage
 * ends with each lock leg's planting weight (the blend weights of the clips whose markers hold
 * the foot down at this frame's times: graph/runtime.h, the one rule); the post-process then locks
 * a foot on the frame it goes down, holds it with two-bone IK while it stays down and releases
 * it along a smoothstep when it lifts.
 *
 * A locked point lives in a frame F: the world when the step reads the root's placement from
 * parameters (F to model: the inverse of the root's turn and position), or this frame's model
 * space in the root-motion form (each frame the point is moved by the inverse of the frame's
 * root delta, and F to model is the identity, which the same arithmetic gives bit for bit:
 * x * 1 - z * 0 = x). Per character and per leg only: the bits do not depend on the batch or
 * the thread. No libm: detmath's sine and cosine.
 *
 * A step runs over the post-process's chunk of characters (post.c) in passes: every character's
 * first halves (lock or release, each leg's target); with a pelvis drop, one
 * cb_ik_two_bone_reach_many call per leg over the characters that pin it, then every
 * character's drop; one cb_ik_two_bone_many_unchecked call per leg over the characters that pin
 * it; every character's second halves (cb_graph_foot_lock says why that keeps each character's
 * bits). */
#include <math.h>
#include <string.h>

#include "base/scalar_math.h"
#include "graph/runtime.h"
#include "graph/runtime/runtime_impl.h"
#include "ik/ik_kernels.h"
#include "simd/detmath.h"

/* Whether a leg's markers in clip slot c hold the foot down at normalized time t. */
static inline bool slot_down(const cb_graph *g, const uint32_t *first, const uint32_t *count,
                             uint32_t c, float t)
{
    return cb_graph_foot_down(g->foot_time + first[c], g->foot_plant + first[c], count[c], t);
}

void cb_graph_lock_planting(const cb_graph *g, const cb_graph_block *b, uint32_t ch, uint32_t i,
                            uint32_t na, float dt, cb_graph_scratch *s)
{
    for (uint32_t leg = 0; leg < g->lock_leg_count; ++leg) {
        const uint32_t *first = &g->foot_first[(size_t)leg * g->clip_count];
        const uint32_t *count = &g->foot_count[(size_t)leg * g->clip_count];
        float now = 0.0f, soon = 0.0f;
        for (uint32_t a = 0; a < na; ++a) {
            uint32_t c = s->active[a];
            if (count[c] != 0) {
                now +=
                    slot_down(g, first, count, c, AT(b, clip_time, c, ch)) ? s->active_w[a] : 0.0f;
            }
        }
        /* The hint is read only for a foot that is not down (lock_leg holds a foot that is, or
         * returns before reading it): where it is, it is left at 0. */
        for (uint32_t a = 0; now < CB_GRAPH_LOCK_PLANT_WEIGHT && a < na; ++a) {
            uint32_t c = s->active[a];
            if (count[c] == 0) {
                continue;
            }
            /* a frame on at this frame's rate: only a hint (when to note where the foot is) */
            float u = AT(b, clip_time, c, ch) + dt / s->active_d[a];
            u = u >= 1.0f ? u - 1.0f : u < 0.0f ? u + 1.0f : u;
            soon += slot_down(g, first, count, c, u) ? s->active_w[a] : 0.0f;
        }
        SR(s, plant, leg, i) = now;
        SR(s, plant_soon, leg, i) = soon;
    }
}

void cb_graph_block_foot_lock(const cb_graph_block *b, uint32_t leg, uint32_t i, float point[3],
                              bool *held, bool *failed)
{
    const float *st = lock_state_of(b, leg, i);
    memcpy(point, &st[LOCK_X], 3 * sizeof(float));
    *held = st[LOCK_HELD] != 0.0f;
    *failed = st[LOCK_FAILED] != 0.0f;
}

/* The root's placement in F: its position and the sine and cosine of its yaw. */
typedef struct placement {
    float p[3], s, c;
} placement;

static placement root_placement(const pose_ctx *x, const gik *ik)
{
    placement pl = {{0.0f, 0.0f, 0.0f}, 0.0f, 1.0f};
    if (ik->lock.root[0] == GNONE) {
        return pl; /* root motion: F is this frame's model space */
    }
    for (int k = 0; k < 3; ++k) {
        float v = SR(x->s, params, ik->lock.root[k], x->i); /* finite: stage 1 */
        pl.p[k] = v;
    }
    cb_det_sincosf(SR(x->s, params, ik->lock.yaw, x->i), &pl.s, &pl.c);
    return pl;
}

/* F to model space: the inverse of the root's turn, after its position (model +X is
 * (c, 0, -s) in F, forward (s, 0, c)). */
static void to_model(const placement *pl, const float q[3], float out[3])
{
    float d[3] = {q[0] - pl->p[0], q[1] - pl->p[1], q[2] - pl->p[2]};
    out[0] = pl->c * d[0] - pl->s * d[2];
    out[1] = d[1];
    out[2] = pl->s * d[0] + pl->c * d[2];
}

static void to_frame(const placement *pl, const float m[3], float out[3])
{
    out[0] = pl->p[0] + pl->c * m[0] + pl->s * m[2];
    out[1] = pl->p[1] + m[1];
    out[2] = pl->p[2] - pl->s * m[0] + pl->c * m[2];
}

/* Root-motion form: a point of last frame's model space into this frame's, moved by the inverse
 * of the frame's delta (a translation in last frame's model space, then the turn). */
static void follow_root_motion(const pose_ctx *x, float *point)
{
    if (x->root_motion == NULL) {
        return; /* no root motion: the model space does not move */
    }
    const cb_root_delta *d = &x->root_motion[x->ch];
    placement pl = {{d->translation[0], d->translation[1], d->translation[2]}, 0.0f, 1.0f};
    cb_det_sincosf(d->yaw, &pl.s, &pl.c);
    float q[3] = {point[0], point[1], point[2]};
    to_model(&pl, q, point);
}

static bool finite3(const float v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static void release_now(float *st)
{
    st[LOCK_FADE] = st[LOCK_HELD] = st[LOCK_FAILED] = st[LOCK_SHOWN] = 0.0f;
}

/* Where the leg's end joint is shown this frame (in F), for the next frame's plant (and the
 * reach check); false when the pose is not finite there. */
static bool note_shown(const pose_ctx *x, uint32_t end, cb_xform_group_span pose,
                       const placement *pl, float *st, float at[3])
{
    cb_ik_joint_position(x->g->skeleton, pose.ptr, end, at);
    bool ok = finite3(at);
    if (ok) {
        to_frame(pl, at, &st[LOCK_PX]);
    }
    st[LOCK_SHOWN] = ok ? 1.0f : 0.0f;
    return ok;
}

/* A leg's frame between its two halves: where the IK pulls it (in model space) and how hard,
 * then what the solve reported. */
typedef struct leg_pull {
    float *st; /* the leg's state (lock_state_of) */
    float target[3];
    float weight; /* the step's weight times the release's smoothstep */
    bool pin;     /* a lock or its release holds the leg (weight may still round to 0); target
                     and weight are set only then */
    bool fresh;   /* the foot went down this frame */
    bool skip;    /* released at once: nothing more this frame */
    bool refused; /* pinned, and the solve refused (a non-finite pose, a point beyond
                     CB_IK_MAX_COORDINATE) */
    cb_ik_two_bone_result res; /* pinned and not refused: the solve's report; reached is
                                  false where not pinned */
    bool has_reach; /* the pelvis drop's (set by leg_reaches, where the drop is on, for each
                       leg it reads): the leg's exact reach and hip, where it has one */
    float reach, hip[3];
} leg_pull;

/* One leg's first half for this frame: lock on the plant, release on the lift, and the target
 * and weight of its IK. */
static void lock_begin(const pose_ctx *x, const gik *ik, uint32_t l, cb_xform_group_span pose,
                       float w, const placement *pl, leg_pull *lp)
{
    float *st = lp->st;
    const uint32_t end = ik->joints[3 * l + 2];
    const bool down = SR(x->s, plant, ik->lock.first_leg + l, x->i) >= CB_GRAPH_LOCK_PLANT_WEIGHT;
    float at[3];
    /* target and weight are set where pin is (a held foot is pinned: its fade is 1) */
    lp->fresh = down && st[LOCK_HELD] == 0.0f;
    lp->pin = lp->skip = lp->refused = lp->res.reached = false;
    if (lp->fresh) {
        /* A new plant: the foot stays where it was shown last frame (released or not), so it
         * stops on the frame its clips plant it, without a jump; when that was not noted (a
         * character's first frame, a plant the hint missed) it locks where it lands. Where
         * the IK falls short of that point on this frame, the point becomes where the foot is
         * shown (lock_end): the foot holds where its plant showed it. */
        if (st[LOCK_SHOWN] != 0.0f) {
            memcpy(&st[LOCK_X], &st[LOCK_PX], 3 * sizeof(float));
        } else if (note_shown(x, end, pose, pl, st, at)) {
            memcpy(&st[LOCK_X], &st[LOCK_PX], 3 * sizeof(float));
        } else {
            release_now(st);
            lp->skip = true;
            return;
        }
        st[LOCK_FADE] = st[LOCK_HELD] = 1.0f;
        st[LOCK_FAILED] = 0.0f;
    }
    if (!down) {
        st[LOCK_HELD] = st[LOCK_FAILED] = 0.0f;
        float f = st[LOCK_FADE] - x->dt / ik->lock.release_s;
        st[LOCK_FADE] = f > 0.0f ? f : 0.0f;
    }
    float f = st[LOCK_FADE];
    if (f > 0.0f) {
        to_model(pl, &st[LOCK_X], lp->target);
        lp->weight = w * cb_fsmoothstep(f); /* no kink at either end */
        lp->pin = true;
    }
}

/* The leg's second half, after its IK (solve_leg): a refusal, the reach check, and where the
 * foot is shown. */
static void lock_end(const pose_ctx *x, const gik *ik, uint32_t l, cb_xform_group_span pose,
                     float w, const placement *pl, const leg_pull *lp,
                     cb_graph_scratch_stats *stats)
{
    float *st = lp->st;
    const uint32_t end = ik->joints[3 * l + 2];
    float at[3];
    if (lp->skip) {
        return;
    }
    if (lp->pin && lp->refused) {
        stats->refused_ik++;
        release_now(st);
        return;
    }
    if (st[LOCK_HELD] == 0.0f) {
        /* Where the foot is shown matters on the frame before a plant: noted when the clips
         * will plant it a frame on at their rate (a miss only locks it where it lands). */
        bool soon =
            SR(x->s, plant_soon, ik->lock.first_leg + l, x->i) >= CB_GRAPH_LOCK_PLANT_WEIGHT;
        st[LOCK_SHOWN] = soon && note_shown(x, end, pose, pl, st, at) ? 1.0f : 0.0f;
        return;
    }
    if (w >= 1.0f && lp->res.reached) {
        /* held within the leg's exact reach (ik.h): the foot is at its point */
        memcpy(&st[LOCK_PX], &st[LOCK_X], 3 * sizeof(float));
        st[LOCK_SHOWN] = 1.0f;
        return;
    }
    if (!note_shown(x, end, pose, pl, st, at) || w < 1.0f) {
        return; /* not finite, or a partial weight: not meant to be at the point */
    }
    float dx = at[0] - lp->target[0], dy = at[1] - lp->target[1], dz = at[2] - lp->target[2];
    float limit = ik->lock.fail_distance;
    bool out_of_reach = dx * dx + dy * dy + dz * dz > limit * limit;
    if (out_of_reach) {
        st[LOCK_FAILED] = 1.0f;
    }
    if (out_of_reach || lp->fresh) {
        /* The point moves to where the leg got: out of reach, so the foot slides only as far
         * as the leg falls short, and holds again from there; or short of it on the plant
         * frame (the soft zone of a leg the clip stretches, or of a plant where it lands,
         * which the soft IK itself pulls in), so the foot is held where its plant showed it. */
        memcpy(&st[LOCK_X], &st[LOCK_PX], 3 * sizeof(float));
    }
}

/* The least drop, m, of a hip at `hip` along model +Y that brings `target` within `reach` of
 * it: with v = hip - target, y its height and s its horizontal length, |v - d Y| <= reach for
 * d in y -+ sqrt(reach^2 - s^2); the least such d. Where s > reach no drop reaches: the one
 * that brings the hip closest, y. Negative when the hip may stay (or rise). */
static float drop_needed(const float hip[3], const float target[3], float reach)
{
    float vx = hip[0] - target[0], vy = hip[1] - target[1], vz = hip[2] - target[2];
    float room = reach * reach - (vx * vx + vz * vz);
    return room > 0.0f ? vy - sqrtf(room) : vy;
}

/* Leg l's share of the pelvis drop, m: the least drop that brings its point within its exact
 * reach (the solve's own rule, cb_ik_two_bone_reach, worked out by leg_reaches; a translation
 * does not change it), clamped to the bound. A held leg keeps it in its state; a releasing one
 * takes no more than it had on its last held frame: its point stays behind while the body moves
 * on, and what it would ask for then (up to the bound) is not what the lift should bring. */
static float drop_share(const gik *ik, const leg_pull *lp)
{
    float *st = lp->st;
    float need = 0.0f;
    if (lp->has_reach) { /* else the solve refuses it (counted) */
        need = drop_needed(lp->hip, lp->target, lp->reach);
        need = need > 0.0f ? need : 0.0f;
        need = need < ik->lock.pelvis_drop ? need : ik->lock.pelvis_drop;
    }
    if (st[LOCK_HELD] != 0.0f) {
        st[LOCK_DROP] = need;
    } else {
        need = need < st[LOCK_DROP] ? need : st[LOCK_DROP];
    }
    return need;
}

/* Leg l's two-bone job as every character of the chunk shares it, built once per call: the
 * chain; character_leg_job then gives it a character's pose, target and weight. */
static cb_ik_two_bone_job shared_leg_job(const pose_ctx *x, const gik *ik, uint32_t l)
{
    const float none[3] = {0.0f, 0.0f, 0.0f};
    return gik_lock_leg_job(ik, l, x->g->skeleton, chunk_pose(x, 0), none, 0.0f);
}

/* The shared leg job moved onto character j of the chunk: its pose, its leg's target and
 * weight. */
static cb_ik_two_bone_job character_leg_job(cb_ik_two_bone_job leg, const pose_ctx *x, uint32_t j,
                                            const leg_pull *p)
{
    gik_job_move(&leg, chunk_pose(x, j), p->target, p->weight);
    return leg;
}

/* Whether the pelvis drop reads leg `lp`: pinned with some weight. */
static bool pulls_pelvis(const leg_pull *lp)
{
    return lp->pin && lp->weight > 0.0f;
}

/* Leg l's exact reach and hip for every character of the chunk whose pelvis drop reads it, in
 * one call (the characters' first halves done): the jobs share the leg's chain and read their
 * own character's pose, before any drop moves it. */
static void leg_reaches(const pose_ctx *x, const gik *ik, uint32_t l, uint32_t m,
                        leg_pull (*lp)[CB_GRAPH_FOOT_LOCK_MAX_LEGS], cb_ik_two_bone_reach_job *jobs)
{
    cb_result code[POSE_CHUNK];
    uint32_t n = 0;
    const cb_ik_two_bone_job leg = shared_leg_job(x, ik, l);
    for (uint32_t j = 0; j < m; ++j) {
        leg_pull *p = &lp[j][l];
        p->has_reach = false;
        if (pulls_pelvis(p)) {
            jobs[n++] =
                (cb_ik_two_bone_reach_job){character_leg_job(leg, x, j, p), p->hip, &p->reach};
        }
    }
    if (n == 0) {
        return;
    }
    cb_ik_two_bone_reach_many(jobs, n, code);
    n = 0;
    for (uint32_t j = 0; j < m; ++j) {
        if (pulls_pelvis(&lp[j][l])) {
            lp[j][l].has_reach = code[n++] == CB_OK;
        }
    }
}

/* The pelvis drop (cb_graph_foot_lock_desc.pelvis_drop_m) of one character, its legs' reaches
 * known, before its legs' solves: each pinned leg's share scaled by its lock weight, the largest
 * applied to the pelvis. The weights keep it continuous: they ramp it in and out (the step's
 * weight, a release's smoothstep), a leg that stops counting had weight 0 already, and a
 * release starts from its last held share. */
static void drop_pelvis(const pose_ctx *x, const gik *ik, cb_xform_group_span pose,
                        const leg_pull *lp, uint32_t legs)
{
    float drop = 0.0f;
    for (uint32_t l = 0; l < legs; ++l) {
        if (pulls_pelvis(&lp[l])) {
            float share = lp[l].weight * drop_share(ik, &lp[l]);
            drop = share > drop ? share : drop;
        }
    }
    if (drop > 0.0f) {
        cb_ik_translate_joint(x->g->skeleton, pose.ptr, ik->lock.pelvis,
                              (const float[3]){0.0f, -drop, 0.0f});
    }
}

/* The leg's outputs: held, and failed this plant. */
static void write_outputs(const pose_ctx *x, const gik *ik, uint32_t l, const float *st)
{
    if (ik->lock.locked[l] != GNONE) {
        AT(x->b, params, ik->lock.locked[l], x->ch) = st[LOCK_HELD];
    }
    if (ik->lock.failed[l] != GNONE) {
        AT(x->b, params, ik->lock.failed[l], x->ch) = st[LOCK_FAILED];
    }
}

/* Leg l's state, its points moved into this frame's model space in the root-motion form. */
static float *leg_state(const pose_ctx *x, const gik *ik, uint32_t l, bool world)
{
    float *st = lock_state_of(x->b, ik->lock.first_leg + l, x->ch);
    if (!world) {
        follow_root_motion(x, &st[LOCK_X]);
        follow_root_motion(x, &st[LOCK_PX]);
    }
    return st;
}

/* Character x's first halves: every leg's target and weight (its lock or release). Off: every
 * leg released, its outputs written, nothing pinned. */
static void lock_begin_all(const pose_ctx *x, const gik *ik, cb_xform_group_span pose, float w,
                           placement *pl, leg_pull *lp)
{
    const uint32_t legs = ik->joint_count / 3;
    if (!(w > 0.0f)) {
        for (uint32_t l = 0; l < legs; ++l) {
            float *st = lock_state_of(x->b, ik->lock.first_leg + l, x->ch);
            release_now(st); /* off: nothing held, the pose keeps its bits */
            write_outputs(x, ik, l, st);
            lp[l].pin = false;
        }
        return;
    }
    const bool world = ik->lock.root[0] != GNONE;
    *pl = root_placement(x, ik); /* the root's turn: a sine and cosine */
    for (uint32_t l = 0; l < legs; ++l) {
        lp[l].st = leg_state(x, ik, l, world);
        lock_begin(x, ik, l, pose, w, pl, &lp[l]);
    }
}

/* Leg l of every character of the chunk that pins it, in one call: the jobs share the leg's
 * chain and each corrects its own character's pose (ik_kernels.h's contract). Each solve
 * reports into the character's leg_pull. */
static void solve_leg(const pose_ctx *x, const gik *ik, uint32_t l, uint32_t m,
                      leg_pull (*lp)[CB_GRAPH_FOOT_LOCK_MAX_LEGS], cb_ik_two_bone_job *jobs)
{
    cb_result code[POSE_CHUNK];
    uint32_t n = 0;
    const cb_ik_two_bone_job leg = shared_leg_job(x, ik, l);
    for (uint32_t j = 0; j < m; ++j) {
        leg_pull *p = &lp[j][l];
        if (p->pin) {
            jobs[n] = character_leg_job(leg, x, j, p);
            jobs[n++].result = &p->res;
        }
    }
    if (n == 0) {
        return;
    }
    cb_ik_two_bone_many_unchecked(jobs, n, code); /* counted per leg in lock_end */
    n = 0;
    for (uint32_t j = 0; j < m; ++j) {
        if (lp[j][l].pin) {
            lp[j][l].refused = code[n++] != CB_OK;
        }
    }
}

/* Character x's second halves, its legs' solves done; off, nothing (lock_begin_all). */
static void lock_end_all(const pose_ctx *x, const gik *ik, cb_xform_group_span pose, float w,
                         const placement *pl, const leg_pull *lp, cb_graph_scratch_stats *stats)
{
    const uint32_t legs = ik->joint_count / 3;
    if (!(w > 0.0f)) {
        return;
    }
    for (uint32_t l = 0; l < legs; ++l) {
        lock_end(x, ik, l, pose, w, pl, &lp[l], stats);
        write_outputs(x, ik, l, lp[l].st);
    }
}

/* The chunk's arrays in the scratch's post area (cb_graph_post_bytes): each character's legs'
 * pulls, then placements, then one leg's jobs, its solves' or its reaches' (about 16 KB at a
 * chunk of 32, once on the stack). */
static size_t pull_bytes(uint32_t chunk)
{
    return cb_round_up((size_t)chunk * CB_GRAPH_FOOT_LOCK_MAX_LEGS * sizeof(leg_pull), 64);
}

static size_t placement_bytes(uint32_t chunk)
{
    return cb_round_up((size_t)chunk * sizeof(placement), 64);
}

size_t cb_graph_foot_lock_bytes(uint32_t chunk)
{
    const size_t job = sizeof(cb_ik_two_bone_job) > sizeof(cb_ik_two_bone_reach_job)
                           ? sizeof(cb_ik_two_bone_job)
                           : sizeof(cb_ik_two_bone_reach_job);
    return pull_bytes(chunk) + placement_bytes(chunk) + cb_round_up((size_t)chunk * job, 64);
}

/* The chunk in passes: every character's first halves (with the pelvis drop: then one reach
 * call per leg, then every character's drop), one solve call per leg, every character's second
 * halves. Each leg's and character's work is what it was when each character's legs ran
 * one after another (first half, solve, second half), bit for bit: the characters share nothing
 * but the stats' sums, and a character's legs are chains in disjoint subtrees (checked at build,
 * graph/foot_lock.c), so a leg's solve writes only its start and mid joints' rotations, which no
 * other leg's half or solve reads (each reads the path from the root to its own joints, and the
 * state of its own leg). The pelvis drop is taken from every leg's target and reach before the
 * solves, the reaches from the pose before the drop moves it. */
void cb_graph_foot_lock(pose_ctx *x, const gik *ik, uint32_t base, uint32_t m, const float *w,
                        cb_graph_scratch_stats *stats)
{
    const uint32_t chunk = x->s->chunk;
    char *area = x->s->post;
    leg_pull(*lp)[CB_GRAPH_FOOT_LOCK_MAX_LEGS] = (leg_pull(*)[CB_GRAPH_FOOT_LOCK_MAX_LEGS])area;
    placement *pl = (placement *)(area + pull_bytes(chunk));
    /* one leg's jobs at a time: its reaches', then its solves' (cb_graph_foot_lock_bytes) */
    cb_ik_two_bone_job *jobs =
        (cb_ik_two_bone_job *)(area + pull_bytes(chunk) + placement_bytes(chunk));
    cb_ik_two_bone_reach_job *reach_jobs = (cb_ik_two_bone_reach_job *)(void *)jobs;
    bool on = false;
    for (uint32_t j = 0; j < m; ++j) {
        pose_ctx_at(x, base + j);
        lock_begin_all(x, ik, chunk_pose(x, j), w[j], &pl[j], lp[j]);
        on |= w[j] > 0.0f;
    }
    if (!on) {
        return; /* the step is off for the whole chunk: released, nothing more to do */
    }
    const uint32_t legs = ik->joint_count / 3;
    if (ik->lock.pelvis_drop > 0.0f) {
        for (uint32_t l = 0; l < legs; ++l) {
            leg_reaches(x, ik, l, m, lp, reach_jobs);
        }
        for (uint32_t j = 0; j < m; ++j) {
            pose_ctx_at(x, base + j);
            drop_pelvis(x, ik, chunk_pose(x, j), lp[j], legs);
        }
    }
    for (uint32_t l = 0; l < legs; ++l) {
        solve_leg(x, ik, l, m, lp, jobs);
    }
    for (uint32_t j = 0; j < m; ++j) {
        pose_ctx_at(x, base + j);
        lock_end_all(x, ik, chunk_pose(x, j), w[j], &pl[j], lp[j], stats);
    }
}
