/* ik_many: cb_ik_two_bone_many_unchecked (src/ik/ik_kernels.h), W jobs per lane group, against
 * its contract: exactly what cb_ik_two_bone_unchecked does on each job in turn. Every batch is
 * run twice from the same poses: through the batch function, and job by job through the scalar
 * function on copies of the poses (the reference). Every byte of every output pose, every
 * result struct (untouched ones included), every code and the returned count must agree.
 *
 * The batches, for n from 0 to 3W + 1 jobs, mix what the lanes must reproduce and what they
 * must hand back to the scalar job: the embedded humanoid's legs and arms in blended or rest
 * (straight) poses, folded legs, targets reachable, in the soft zone, beyond reach and at the
 * start joint, poles zero and not, mid_axis given and zero, weights 0, partial and 1, soften
 * default, custom and 1; lanes whose pose has a NaN, an infinity or a coordinate beyond
 * CB_IK_MAX_COORDINATE on the chain, or a bone shorter than CB_IK_MIN_BONE_LENGTH (refused);
 * jobs the lanes do not take (model matrices given, another output array, other joints) between
 * them; the two legs of one pose in two consecutive groups (the graph's foot_lock pattern);
 * and random chains with scale on random skeletons. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "ik/ik_kernels.h"
#include "test_util.h"

enum { W = CB_SIMD_WIDTH, MAX_JOBS = 3 * CB_SIMD_WIDTH + 2 };

typedef struct chain {
    uint32_t start, mid, end;
    float axis[3]; /* the hinge, mid joint space */
} chain;

/* One batch: its jobs, their poses (one per job, or shared), and where the reference runs. */
typedef struct batch {
    const cb_skeleton *s;
    size_t n, groups, bytes;
    cb_ik_two_bone_job jobs[MAX_JOBS];
    cb_xform_group *pose[MAX_JOBS], *ref_pose[MAX_JOBS]; /* per job (may repeat a pointer) */
    cb_xform_group *own[MAX_JOBS], *ref_own[MAX_JOBS];   /* the poses allocated, freed after */
    cb_xform_group *extra_out[MAX_JOBS], *ref_extra_out[MAX_JOBS];
    float *model[MAX_JOBS];
    cb_ik_two_bone_result res[MAX_JOBS], ref_res[MAX_JOBS];
    bool has_result[MAX_JOBS];
} batch;

static void batch_free(batch *b)
{
    for (size_t i = 0; i < MAX_JOBS; ++i) {
        free(b->own[i]), free(b->ref_own[i]), free(b->extra_out[i]), free(b->ref_extra_out[i]);
        free(b->model[i]);
    }
}

/* Runs the batch both ways and compares everything. */
static void batch_check(batch *b, const char *what)
{
    /* The reference's jobs: the same, on the copies. */
    cb_ik_two_bone_job ref[MAX_JOBS];
    for (size_t i = 0; i < b->n; ++i) {
        memcpy(b->ref_pose[i], b->pose[i], b->bytes);
    }
    for (size_t i = 0; i < b->n; ++i) {
        ref[i] = b->jobs[i];
        ref[i].pose.ptr = b->ref_pose[i];
        if (b->jobs[i].out.ptr == b->pose[i]) {
            ref[i].out.ptr = b->ref_pose[i];
        } else if (b->jobs[i].out.ptr != NULL) {
            ref[i].out.ptr = b->ref_extra_out[i];
        }
        ref[i].result = b->has_result[i] ? &b->ref_res[i] : NULL;
        b->jobs[i].result = b->has_result[i] ? &b->res[i] : NULL;
        /* untouched results must stay so: one recognizable pattern in both */
        memset(&b->res[i], 0xa5, sizeof b->res[i]);
        memset(&b->ref_res[i], 0xa5, sizeof b->ref_res[i]);
        if (b->extra_out[i] != NULL) {
            memset(b->extra_out[i], 0x5a, b->bytes);
            memset(b->ref_extra_out[i], 0x5a, b->bytes);
        }
    }
    cb_result got[MAX_JOBS], want[MAX_JOBS];
    size_t want_refused = 0;
    for (size_t i = 0; i < b->n; ++i) {
        want[i] = cb_ik_two_bone_unchecked(&ref[i], NULL);
        want_refused += want[i] != CB_OK;
    }
    size_t refused = cb_ik_two_bone_many_unchecked(b->jobs, b->n, got);
    CB_CHECK(refused == want_refused, "%s, %zu jobs: %zu refused, the scalar jobs %zu", what, b->n,
             refused, want_refused);
    for (size_t i = 0; i < b->n; ++i) {
        CB_CHECK(got[i] == want[i], "%s, job %zu of %zu: code %d, the scalar job's %d", what, i,
                 b->n, (int)got[i], (int)want[i]);
        CB_CHECK(memcmp(b->pose[i], b->ref_pose[i], b->bytes) == 0,
                 "%s, job %zu of %zu: the pose differs from the scalar job's", what, i, b->n);
        if (b->extra_out[i] != NULL) {
            CB_CHECK(memcmp(b->extra_out[i], b->ref_extra_out[i], b->bytes) == 0,
                     "%s, job %zu of %zu: out differs from the scalar job's", what, i, b->n);
        }
        const cb_ik_two_bone_result *r = &b->res[i], *e = &b->ref_res[i];
        CB_CHECK(memcmp(r->start_correction, e->start_correction, sizeof r->start_correction) ==
                         0 &&
                     memcmp(r->mid_correction, e->mid_correction, sizeof r->mid_correction) == 0 &&
                     memcmp(&r->reached, &e->reached, sizeof r->reached) == 0 &&
                     memcmp(&r->first_joint, &e->first_joint, sizeof r->first_joint) == 0,
                 "%s, job %zu of %zu: result (%.9g %.9g %.9g %.9g | %.9g %.9g %.9g %.9g, %d), "
                 "the scalar job's (%.9g %.9g %.9g %.9g | %.9g %.9g %.9g %.9g, %d)",
                 what, i, b->n, (double)r->start_correction[0], (double)r->start_correction[1],
                 (double)r->start_correction[2], (double)r->start_correction[3],
                 (double)r->mid_correction[0], (double)r->mid_correction[1],
                 (double)r->mid_correction[2], (double)r->mid_correction[3], (int)r->reached,
                 (double)e->start_correction[0], (double)e->start_correction[1],
                 (double)e->start_correction[2], (double)e->start_correction[3],
                 (double)e->mid_correction[0], (double)e->mid_correction[1],
                 (double)e->mid_correction[2], (double)e->mid_correction[3], (int)e->reached);
    }
}

/* ---- job ingredients ------------------------------------------------------------------------ */

static void random_unit(cb_prng *r, float out[3])
{
    float l2;
    do {
        for (int k = 0; k < 3; ++k) {
            out[k] = cb_prng_range(r, -1.0f, 1.0f);
        }
        l2 = out[0] * out[0] + out[1] * out[1] + out[2] * out[2];
    } while (l2 < 0.01f || l2 > 1.0f);
    float inv = 1.0f / sqrtf(l2);
    for (int k = 0; k < 3; ++k) {
        out[k] *= inv;
    }
}

static float dist3(const float a[3], const float b[3])
{
    float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* A target for the chain in `pose`: reachable, in the soft zone, beyond reach, at the start
 * joint or next to it, or anywhere near. */
static void random_target(cb_prng *r, const cb_skeleton *s, const cb_xform_group *pose,
                          const chain *c, float target[3])
{
    float ps[3], pm[3], pe[3], dir[3];
    cb_ik_joint_position(s, pose, c->start, ps);
    cb_ik_joint_position(s, pose, c->mid, pm);
    cb_ik_joint_position(s, pose, c->end, pe);
    float len = dist3(ps, pm) + dist3(pm, pe);
    random_unit(r, dir);
    float d;
    switch (cb_prng_below(r, 8)) {
    case 0:
        d = len * cb_prng_range(r, 0.94f, 1.0f); /* soft zone (default soften 0.97) */
        break;
    case 1:
        d = len * cb_prng_range(r, 1.0f, 3.0f); /* beyond reach */
        break;
    case 2:
        d = 0.0f; /* at the start joint */
        break;
    case 3:
        d = len * cb_prng_range(r, 0.0f, 0.1f); /* closer than the folded reach, maybe */
        break;
    default:
        d = len * cb_prng_range(r, 0.3f, 0.95f); /* reachable */
        break;
    }
    for (int k = 0; k < 3; ++k) {
        target[k] = ps[k] + dir[k] * d;
    }
}

/* Breaks the chain in `pose` for the checks, one way in four: a NaN or an infinity in a chain
 * joint's (or an ancestor's) local transform, a coordinate beyond CB_IK_MAX_COORDINATE, or a
 * bone of length zero. Returns whether it did. */
static bool maybe_break(cb_prng *r, const cb_skeleton *s, cb_xform_group *pose, const chain *c)
{
    if (cb_prng_below(r, 6) != 0) {
        return false;
    }
    const int32_t *parents = cb_skeleton_parents(s);
    uint32_t j = c->end;
    for (uint32_t up = cb_prng_below(r, 4); up > 0 && parents[j] >= 0; --up) {
        j = (uint32_t)parents[j];
    }
    cb_xform x;
    cb_xform_group_cspan one = {pose, cb_skeleton_group_count(s)};
    cb_xform all[256];
    size_t n = cb_skeleton_joint_count(s);
    assert_true(n <= 256);
    assert_int_equal(cb_xform_unpack(one.ptr, one.count, (cb_xform_span){all, n}), CB_OK);
    x = all[j];
    switch (cb_prng_below(r, 5)) {
    case 0:
        x.translation[cb_prng_below(r, 3)] = NAN;
        break;
    case 1:
        x.rotation[cb_prng_below(r, 4)] = INFINITY;
        break;
    case 2:
        x.translation[cb_prng_below(r, 3)] = 2e9f;
        break;
    case 3:
        x.scale[cb_prng_below(r, 3)] = NAN;
        break;
    default: /* the mid (or end) joint on its parent: a bone of length 0 */
        j = cb_prng_below(r, 2) == 0 ? c->mid : c->end;
        x = all[j];
        x.translation[0] = x.translation[1] = x.translation[2] = 0.0f;
        if (parents[j] != (int32_t)(j == c->mid ? c->start : c->mid)) {
            return false; /* twist joints between: leave it */
        }
        break;
    }
    all[j] = x;
    assert_int_equal(cb_xform_pack((cb_xform_cspan){all, n}, pose, one.count), CB_OK);
    return true;
}

/* A job on `chain` of the pose, with the batch's shared settings and its own target, pole,
 * weight. */
typedef struct shared {
    float axis_on; /* 1: the chain's mid_axis, 0: none */
    float soften;
} shared;

static cb_ik_two_bone_job make_job(cb_prng *r, batch *b, size_t i, const chain *c, const shared *sh)
{
    cb_ik_two_bone_job job = {.skeleton = b->s,
                              .pose = {b->pose[i], b->groups},
                              .out = {b->pose[i], b->groups},
                              .start_joint = c->start,
                              .mid_joint = c->mid,
                              .end_joint = c->end,
                              .soften = sh->soften};
    random_target(r, b->s, b->pose[i], c, job.target);
    if (cb_prng_below(r, 3) != 0) {
        random_unit(r, job.pole);
        if (cb_prng_below(r, 4) == 0) {
            for (int k = 0; k < 3; ++k) {
                job.pole[k] *= 1e-20f; /* tiny: still a direction */
            }
        }
    }
    for (int k = 0; k < 3; ++k) {
        job.mid_axis[k] = c->axis[k] * sh->axis_on;
    }
    uint32_t wk = cb_prng_below(r, 8);
    job.weight = wk == 0 ? 0.0f : wk < 3 ? cb_prng_range(r, 0.0f, 1.0f) : 1.0f;
    /* a result one time in five without, the pose alone one in eight without `out` */
    b->has_result[i] = cb_prng_below(r, 5) != 0;
    if (cb_prng_below(r, 8) == 0) {
        job.out = (cb_xform_group_span){NULL, 0};
        b->has_result[i] = true;
    }
    return job;
}

/* Turns a job into one the lanes do not take, one time in `one_in`: model matrices given, or
 * another output array. */
static void maybe_not_lanes(cb_prng *r, batch *b, size_t i, uint32_t one_in)
{
    if (cb_prng_below(r, one_in) != 0) {
        return;
    }
    cb_ik_two_bone_job *job = &b->jobs[i];
    size_t n = cb_skeleton_joint_count(b->s);
    if (cb_prng_below(r, 2) == 0) {
        b->model[i] = calloc(n * 16, sizeof(float));
        cb_ltm_job l = {
            .skeleton = b->s, .local = {b->pose[i], b->groups}, .model = {b->model[i], n * 16}};
        if (cb_ltm_job_run(&l, NULL) != CB_OK) {
            return; /* a broken pose: local-to-model refuses it; leave the job as it is */
        }
        job->model = (cb_float_cspan){b->model[i], n * 16};
    } else {
        b->extra_out[i] = cb_test_pose_alloc(b->s, false);
        b->ref_extra_out[i] = cb_test_pose_alloc(b->s, false);
        job->out = (cb_xform_group_span){b->extra_out[i], b->groups};
    }
}

/* ---- the humanoid ---------------------------------------------------------------------------- */

typedef struct humanoid {
    cb_embedded *set;
    const cb_skeleton *s;
    chain limb[4]; /* legs, then arms */
} humanoid;

static humanoid humanoid_make(void)
{
    humanoid h = {0};
    assert_int_equal(cb_embedded_create(NULL, &h.set, NULL), CB_OK);
    h.s = cb_embedded_skeleton(h.set);
    const char *names[4][3] = {{"thigh_l", "calf_l", "foot_l"},
                               {"thigh_r", "calf_r", "foot_r"},
                               {"upperarm_l", "lowerarm_l", "hand_l"},
                               {"upperarm_r", "lowerarm_r", "hand_r"}};
    for (int k = 0; k < 4; ++k) {
        uint32_t j[3];
        for (int m = 0; m < 3; ++m) {
            CB_CHECK(cb_skeleton_find_joint(h.s, names[k][m], &j[m]) == CB_OK, "no joint %s",
                     names[k][m]);
        }
        h.limb[k] = (chain){j[0], j[1], j[2], {k < 2 ? 1.0f : -1.0f, 0.0f, 0.0f}};
    }
    return h;
}

/* A humanoid pose: rest (straight limbs) one time in six, a folded knee or elbow one in six,
 * else a blend of locomotion clips at a random time. */
static void humanoid_pose(cb_prng *r, const humanoid *h, cb_xform_group *pose)
{
    size_t groups = cb_skeleton_group_count(h->s);
    uint32_t kind = cb_prng_below(r, 6);
    if (kind <= 1) {
        memcpy(pose, cb_skeleton_rest_pose(h->s).ptr, cb_skeleton_pose_bytes(h->s));
        if (kind == 1) {
            /* every limb's mid joint turned by pi about its hinge: folded onto itself */
            for (int k = 0; k < 4; ++k) {
                const chain *c = &h->limb[k];
                float q[4] = {c->axis[0], c->axis[1], c->axis[2], 0.0f};
                size_t n = cb_skeleton_joint_count(h->s);
                cb_xform all[256];
                assert_true(n <= 256);
                assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){all, n}), CB_OK);
                memcpy(all[c->mid].rotation, q, sizeof q);
                assert_int_equal(cb_xform_pack((cb_xform_cspan){all, n}, pose, groups), CB_OK);
            }
        }
        return;
    }
    cb_blend_entry e[3];
    size_t k = 1 + cb_prng_below(r, 3);
    float t = cb_prng_range(r, 0.0f, 1.0f);
    for (size_t i = 0; i < k; ++i) {
        e[i] = (cb_blend_entry){cb_embedded_clip(h->set, cb_prng_below(r, 17)),
                                t,
                                cb_prng_range(r, 0.2f, 1.0f),
                                CB_BLEND_MODE_NORMAL,
                                {NULL, 0}};
    }
    cb_pose_blend_job job = {h->s, {e, k}, 0.0f, {pose, groups}};
    assert_int_equal(cb_pose_blend_job_run(&job, NULL), CB_OK);
}

static shared random_shared(cb_prng *r)
{
    static const float softens[] = {0.0f, 0.0f, 0.9f, 1.0f};
    return (shared){cb_prng_below(r, 3) == 0 ? 0.0f : 1.0f, softens[cb_prng_below(r, 4)]};
}

/* Batches of n = 0 .. 3W + 1 jobs on one limb (runs of one chain, the lanes' case), with jobs
 * of other limbs, other settings and other outputs mixed in now and then. */
static void ik_many_humanoid_batches(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    humanoid h = humanoid_make();
    size_t broken = 0, jobs = 0;
    for (int round = 0; round < 96 / W; ++round) { /* more rounds where W is small */
        for (size_t n = 0; n <= 3 * W + 1; ++n) {
            batch b = {.s = h.s, .n = n};
            b.groups = cb_skeleton_group_count(h.s);
            b.bytes = cb_skeleton_pose_bytes(h.s);
            const chain *c = &h.limb[cb_prng_below(&r, 4)];
            shared sh = random_shared(&r);
            for (size_t i = 0; i < n; ++i) {
                b.pose[i] = b.own[i] = cb_test_pose_alloc(h.s, false);
                b.ref_pose[i] = b.ref_own[i] = cb_test_pose_alloc(h.s, false);
                humanoid_pose(&r, &h, b.pose[i]);
                const chain *ci = cb_prng_below(&r, 12) == 0 ? &h.limb[cb_prng_below(&r, 4)] : c;
                shared si = cb_prng_below(&r, 12) == 0 ? random_shared(&r) : sh;
                broken += maybe_break(&r, h.s, b.pose[i], ci);
                b.jobs[i] = make_job(&r, &b, i, ci, &si);
                maybe_not_lanes(&r, &b, i, 10);
            }
            jobs += n;
            batch_check(&b, "humanoid");
            batch_free(&b);
        }
    }
    cb_test_note("%zu jobs, %zu on broken chains", jobs, broken);
    cb_embedded_destroy(h.set);
}

/* The graph's foot_lock pattern: one call per leg over a chunk of characters, the left legs of
 * poses 0..m-1, then their right legs (two groups on the same poses, disjoint chains). */
static void ik_many_two_legs_of_one_pose(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    humanoid h = humanoid_make();
    for (int round = 0; round < 10; ++round) {
        size_t m = 1 + cb_prng_below(&r, (MAX_JOBS - 1) / 2);
        batch b = {.s = h.s, .n = 2 * m};
        b.groups = cb_skeleton_group_count(h.s);
        b.bytes = cb_skeleton_pose_bytes(h.s);
        shared sh = random_shared(&r);
        for (size_t i = 0; i < m; ++i) {
            b.pose[i] = b.pose[m + i] = b.own[i] = cb_test_pose_alloc(h.s, false);
            b.ref_pose[i] = b.ref_pose[m + i] = b.ref_own[i] = cb_test_pose_alloc(h.s, false);
            humanoid_pose(&r, &h, b.pose[i]);
        }
        for (size_t i = 0; i < 2 * m; ++i) {
            b.jobs[i] = make_job(&r, &b, i, &h.limb[i < m ? 0 : 1], &sh);
        }
        /* batch_check copies each job's pose to its reference before running: a shared pose is
         * copied twice, the same bytes. */
        batch_check(&b, "two legs");
        batch_free(&b);
    }
    cb_embedded_destroy(h.set);
}

/* Random chains with (uniform) scale on random skeletons: every lane a random pose of the same
 * skeleton, the rest pose with every rotation turned at random. */
static void ik_many_random_chains(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 80; ++it) {
        size_t nj = 8 + cb_prng_below(&r, 40);
        cb_skeleton *s = cb_test_random_skeleton(&r, nj, true, it % 2 == 0);
        const int32_t *parents = cb_skeleton_parents(s);
        uint32_t e = (uint32_t)(nj - 1 - cb_prng_below(&r, (uint32_t)nj / 2));
        int32_t m = parents[e];
        int32_t st = m > 0 ? parents[m] : -1;
        if (st < 0) {
            cb_skeleton_destroy(s);
            continue;
        }
        chain c = {(uint32_t)st, (uint32_t)m, e, {0}};
        random_unit(&r, c.axis);
        if (it % 4 == 1) {
            /* the hinge along the lower bone (the end's translation in the mid joint's space):
             * turning about it cannot change the reach (the solve's hinge does not turn) */
            cb_xform rest[64];
            assert_int_equal(cb_xform_unpack(cb_skeleton_rest_pose(s).ptr,
                                             cb_skeleton_group_count(s), (cb_xform_span){rest, nj}),
                             CB_OK);
            memcpy(c.axis, rest[e].translation, sizeof c.axis);
        }
        size_t n = cb_prng_below(&r, 3 * W + 2);
        batch b = {.s = s, .n = n};
        b.groups = cb_skeleton_group_count(s);
        b.bytes = cb_skeleton_pose_bytes(s);
        shared sh = random_shared(&r);
        for (size_t i = 0; i < n; ++i) {
            b.pose[i] = b.own[i] = cb_test_pose_alloc(s, false);
            b.ref_pose[i] = b.ref_own[i] = cb_test_pose_alloc(s, false);
            cb_xform all[64];
            assert_int_equal(
                cb_xform_unpack(cb_skeleton_rest_pose(s).ptr, b.groups, (cb_xform_span){all, nj}),
                CB_OK);
            for (size_t j = 0; j < nj; ++j) {
                cb_xform x = cb_test_random_xform(&r, 0.0f);
                memcpy(all[j].rotation, x.rotation, sizeof x.rotation);
            }
            assert_int_equal(cb_xform_pack((cb_xform_cspan){all, nj}, b.pose[i], b.groups), CB_OK);
            maybe_break(&r, s, b.pose[i], &c);
            b.jobs[i] = make_job(&r, &b, i, &c, &sh);
            maybe_not_lanes(&r, &b, i, 12);
        }
        batch_check(&b, "random chain");
        batch_free(&b);
        cb_skeleton_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ik_many_humanoid_batches),
        cmocka_unit_test(ik_many_two_legs_of_one_pose),
        cmocka_unit_test(ik_many_random_chains),
    };
    return CB_RUN_TESTS(tests);
}
