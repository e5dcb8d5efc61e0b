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
 * and random chains with scale on random skeletons. Before the solves, every batch's jobs go
 * through cb_ik_two_bone_reach_many (the pelvis drop's reaches) against cb_ik_two_bone_reach on
 * each job: every code, and every bit of each start and reach, nothing written where the scalar
 * form has no reach, no pose written.
 *
 * The orientation warps (cb_ik_orient_many_unchecked) and the stride warps
 * (cb_ik_stride_many_unchecked) are held to their scalar jobs the same way: the humanoid's
 * spines and legs, broken poses, and jobs the lanes do not take mixed in. */
#include <math.h>
#include <stdio.h>
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
    /* orientation warps (orient_check): the jobs, their spines and results */
    cb_ik_orient_job ojobs[MAX_JOBS];
    cb_ik_aim_joint spine[MAX_JOBS][CB_IK_AIM_MAX_JOINTS];
    cb_ik_orient_result ores[MAX_JOBS], ref_ores[MAX_JOBS];
    /* stride warps (stride_check): the jobs, their legs and results */
    cb_ik_stride_job sjobs[MAX_JOBS];
    cb_ik_stride_leg slegs[MAX_JOBS][CB_IK_STRIDE_MAX_LEGS];
    cb_ik_stride_result sres[MAX_JOBS], ref_sres[MAX_JOBS];
} batch;

static void batch_free(batch *b)
{
    for (size_t i = 0; i < MAX_JOBS; ++i) {
        free(b->own[i]), free(b->ref_own[i]), free(b->extra_out[i]), free(b->ref_extra_out[i]);
        free(b->model[i]);
    }
}

/* Before both runs: the reference's poses copied from the batch's, each separate output (and
 * its reference) filled with one pattern. */
static void batch_prepare(batch *b)
{
    for (size_t i = 0; i < b->n; ++i) {
        memcpy(b->ref_pose[i], b->pose[i], b->bytes);
        if (b->extra_out[i] != NULL) {
            memset(b->extra_out[i], 0x5a, b->bytes);
            memset(b->ref_extra_out[i], 0x5a, b->bytes);
        }
    }
}

/* The reference's output for job i's `out`: its pose's copy, its separate output's, or none. */
static cb_xform_group *ref_out(const batch *b, size_t i, const void *out)
{
    return out == b->pose[i] ? b->ref_pose[i] : out != NULL ? b->ref_extra_out[i] : NULL;
}

/* After both runs: the count of refusals, every code, and every pose and separate output
 * against the reference's, byte for byte. */
static void check_codes_and_poses(const batch *b, const char *what, const cb_result *got,
                                  size_t refused, const cb_result *want, size_t want_refused)
{
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
    }
}

/* Job i's two-bone result against the reference's. */
static void check_two_bone_result(const batch *b, size_t i, const char *what)
{
    const cb_ik_two_bone_result *r = &b->res[i], *e = &b->ref_res[i];
    CB_CHECK(memcmp(r->start_correction, e->start_correction, sizeof r->start_correction) == 0 &&
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

/* Job i's orientation warp result against the reference's. */
static void check_orient_result(const batch *b, size_t i, const char *what)
{
    const cb_ik_orient_result *r = &b->ores[i], *e = &b->ref_ores[i];
    CB_CHECK(memcmp(&r->angle, &e->angle, sizeof r->angle) == 0 &&
                 memcmp(&r->limited, &e->limited, sizeof r->limited) == 0 &&
                 memcmp(&r->first_joint, &e->first_joint, sizeof r->first_joint) == 0,
             "%s, job %zu of %zu: result (%.9g, %d, %u), the scalar job's (%.9g, %d, %u)", what, i,
             b->n, (double)r->angle, (int)r->limited, r->first_joint, (double)e->angle,
             (int)e->limited, e->first_joint);
}

/* Runs the batch both ways, the batch function (cb_ik_two_bone_many_unchecked, or
 * cb_ik_orient_many_unchecked where `orient`) and the scalar job one by one on the copies, and
 * compares everything. */
static void run_both(batch *b, const char *what, bool orient)
{
    cb_ik_two_bone_job ref[MAX_JOBS];
    cb_ik_orient_job oref[MAX_JOBS];
    batch_prepare(b);
    for (size_t i = 0; i < b->n; ++i) {
        /* The reference's jobs: the same, on the copies. Untouched results must stay so: one
         * recognizable pattern in both. */
        memset(&b->res[i], 0xa5, sizeof b->res[i]);
        memset(&b->ref_res[i], 0xa5, sizeof b->ref_res[i]);
        memset(&b->ores[i], 0xa5, sizeof b->ores[i]);
        memset(&b->ref_ores[i], 0xa5, sizeof b->ref_ores[i]);
        if (orient) {
            oref[i] = b->ojobs[i];
            oref[i].pose.ptr = b->ref_pose[i];
            oref[i].out.ptr = ref_out(b, i, b->ojobs[i].out.ptr);
            oref[i].result = b->has_result[i] ? &b->ref_ores[i] : NULL;
            b->ojobs[i].result = b->has_result[i] ? &b->ores[i] : NULL;
        } else {
            ref[i] = b->jobs[i];
            ref[i].pose.ptr = b->ref_pose[i];
            ref[i].out.ptr = ref_out(b, i, b->jobs[i].out.ptr);
            ref[i].result = b->has_result[i] ? &b->ref_res[i] : NULL;
            b->jobs[i].result = b->has_result[i] ? &b->res[i] : NULL;
        }
    }
    cb_result got[MAX_JOBS], want[MAX_JOBS];
    size_t want_refused = 0;
    for (size_t i = 0; i < b->n; ++i) {
        want[i] = orient ? cb_ik_orient_unchecked(&oref[i], NULL)
                         : cb_ik_two_bone_unchecked(&ref[i], NULL);
        want_refused += want[i] != CB_OK;
    }
    const size_t refused = orient ? cb_ik_orient_many_unchecked(b->ojobs, b->n, got)
                                  : cb_ik_two_bone_many_unchecked(b->jobs, b->n, got);
    check_codes_and_poses(b, what, got, refused, want, want_refused);
    for (size_t i = 0; i < b->n; ++i) {
        if (orient) {
            check_orient_result(b, i, what);
        } else {
            check_two_bone_result(b, i, what);
        }
    }
}

/* The batch's jobs' reaches (cb_ik_two_bone_reach_many) against cb_ik_two_bone_reach on each,
 * the poses as they are (neither writes them): codes, and start and reach bit for bit, both
 * outputs filled with one pattern before so that a write where none is due shows. */
static void reach_check(const batch *b, const char *what)
{
    cb_ik_two_bone_reach_job jobs[MAX_JOBS];
    float start[MAX_JOBS][3], reach[MAX_JOBS], want_start[MAX_JOBS][3], want_reach[MAX_JOBS];
    bool want[MAX_JOBS];
    cb_result got[MAX_JOBS];
    memset(start, 0xa5, sizeof start), memset(want_start, 0xa5, sizeof want_start);
    memset(reach, 0xa5, sizeof reach), memset(want_reach, 0xa5, sizeof want_reach);
    size_t want_none = 0;
    for (size_t i = 0; i < b->n; ++i) {
        jobs[i] = (cb_ik_two_bone_reach_job){b->jobs[i], start[i], &reach[i]};
        want[i] = cb_ik_two_bone_reach(&b->jobs[i], want_start[i], &want_reach[i]);
        want_none += !want[i];
    }
    void *before[MAX_JOBS];
    for (size_t i = 0; i < b->n; ++i) {
        before[i] = malloc(b->bytes);
        assert_non_null(before[i]);
        memcpy(before[i], b->pose[i], b->bytes);
    }
    size_t none = cb_ik_two_bone_reach_many(jobs, b->n, got);
    for (size_t i = 0; i < b->n; ++i) {
        CB_CHECK(memcmp(before[i], b->pose[i], b->bytes) == 0,
                 "%s, reach %zu of %zu: the pose "
                 "was written",
                 what, i, b->n);
        free(before[i]);
    }
    CB_CHECK(none == want_none, "%s, %zu reaches: %zu without, the scalar form %zu", what, b->n,
             none, want_none);
    for (size_t i = 0; i < b->n; ++i) {
        CB_CHECK((got[i] == CB_OK) == want[i], "%s, reach %zu of %zu: code %d, the scalar form %s",
                 what, i, b->n, (int)got[i], want[i] ? "has one" : "has none");
        CB_CHECK(memcmp(start[i], want_start[i], sizeof start[i]) == 0 &&
                     memcmp(&reach[i], &want_reach[i], sizeof reach[i]) == 0,
                 "%s, reach %zu of %zu: start (%.9g %.9g %.9g) reach %.9g, the scalar form's "
                 "(%.9g %.9g %.9g) %.9g",
                 what, i, b->n, (double)start[i][0], (double)start[i][1], (double)start[i][2],
                 (double)reach[i], (double)want_start[i][0], (double)want_start[i][1],
                 (double)want_start[i][2], (double)want_reach[i]);
    }
}

/* The batch's reaches (reach_check), then the two-bone batch (cb_ik_two_bone_many_unchecked
 * against cb_ik_two_bone_unchecked). */
static void batch_check(batch *b, const char *what)
{
    reach_check(b, what);
    run_both(b, what, false);
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
    switch (cb_prng_below(r, 6)) {
    case 0:
        x.translation[cb_prng_below(r, 3)] = NAN;
        break;
    case 4: /* both bones of 5e-7 m, below CB_IK_MIN_BONE_LENGTH but not 0 */
        if (parents[c->mid] != (int32_t)c->start || parents[c->end] != (int32_t)c->mid) {
            return false;
        }
        for (int b = 0; b < 2; ++b) {
            float *t = all[b == 0 ? c->mid : c->end].translation;
            const float len = sqrtf(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
            for (int k = 0; k < 3; ++k) {
                t[k] *= 5e-7f / len;
            }
        }
        j = c->end, x = all[j];
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
static void maybe_not_lanes(cb_prng *r, batch *b, size_t i, uint32_t one_in, cb_float_cspan *model,
                            cb_xform_group_span *out)
{
    if (cb_prng_below(r, one_in) != 0) {
        return;
    }
    size_t n = cb_skeleton_joint_count(b->s);
    if (cb_prng_below(r, 2) == 0) {
        b->model[i] = calloc(n * 16, sizeof(float));
        cb_ltm_job l = {
            .skeleton = b->s, .local = {b->pose[i], b->groups}, .model = {b->model[i], n * 16}};
        if (cb_ltm_job_run(&l, NULL) != CB_OK) {
            return; /* a broken pose: local-to-model refuses it; leave the job as it is */
        }
        *model = (cb_float_cspan){b->model[i], n * 16};
    } else {
        b->extra_out[i] = cb_test_pose_alloc(b->s, false);
        b->ref_extra_out[i] = cb_test_pose_alloc(b->s, false);
        *out = (cb_xform_group_span){b->extra_out[i], b->groups};
    }
}

/* Job i's pose (and its reference's, allocated beside it): the skeleton's rest pose with every
 * joint's rotation random. */
static void random_rotations_pose(cb_prng *r, batch *b, size_t i)
{
    size_t nj = cb_skeleton_joint_count(b->s);
    b->pose[i] = b->own[i] = cb_test_pose_alloc(b->s, false);
    b->ref_pose[i] = b->ref_own[i] = cb_test_pose_alloc(b->s, false);
    cb_xform all[64];
    assert_true(nj <= 64);
    assert_int_equal(
        cb_xform_unpack(cb_skeleton_rest_pose(b->s).ptr, b->groups, (cb_xform_span){all, nj}),
        CB_OK);
    for (size_t j = 0; j < nj; ++j) {
        cb_xform x = cb_test_random_xform(r, 0.0f);
        memcpy(all[j].rotation, x.rotation, sizeof x.rotation);
    }
    assert_int_equal(cb_xform_pack((cb_xform_cspan){all, nj}, b->pose[i], b->groups), CB_OK);
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

/* The rest pose (straight limbs) with every limb's mid joint turned by 0.2e-3 to 0.9e-3 rad
 * about a random axis: bent too little for the bones' cross product (below CB_IK_STRAIGHT_EPS =
 * 1e-3 of a b) to give a chain without mid_axis its hinge, which then comes from the job's
 * pole, but enough that the pole's direction reaches the bits of the solve and the reach. */
static void nearly_straight_pose(cb_prng *r, const humanoid *h, cb_xform_group *pose)
{
    const size_t groups = cb_skeleton_group_count(h->s), n = cb_skeleton_joint_count(h->s);
    cb_xform all[256];
    assert_true(n <= 256);
    memcpy(pose, cb_skeleton_rest_pose(h->s).ptr, cb_skeleton_pose_bytes(h->s));
    assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){all, n}), CB_OK);
    for (int k = 0; k < 4; ++k) {
        float v[3], *q = all[h->limb[k].mid].rotation;
        random_unit(r, v);
        const float half = 0.5f * cb_prng_range(r, 0.2e-3f, 0.9e-3f);
        const float s = sinf(half), c = cosf(half);
        const float t[4] = {v[0] * s, v[1] * s, v[2] * s, c}; /* q * t: x, y, z, w */
        const float m[4] = {q[3] * t[0] + q[0] * t[3] + q[1] * t[2] - q[2] * t[1],
                            q[3] * t[1] - q[0] * t[2] + q[1] * t[3] + q[2] * t[0],
                            q[3] * t[2] + q[0] * t[1] - q[1] * t[0] + q[2] * t[3],
                            q[3] * t[3] - q[0] * t[0] - q[1] * t[1] - q[2] * t[2]};
        memcpy(q, m, sizeof m);
    }
    assert_int_equal(cb_xform_pack((cb_xform_cspan){all, n}, pose, groups), CB_OK);
}

/* A humanoid pose: rest (straight limbs) one time in eight, nearly straight one in eight
 * (nearly_straight_pose), a folded knee or elbow one in eight,
 * else a blend of locomotion clips at a random time. */
static void humanoid_pose(cb_prng *r, const humanoid *h, cb_xform_group *pose)
{
    size_t groups = cb_skeleton_group_count(h->s);
    uint32_t kind = cb_prng_below(r, 8);
    if (kind == 2) {
        nearly_straight_pose(r, h, pose);
        return;
    }
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
                maybe_not_lanes(&r, &b, i, 10, &b.jobs[i].model, &b.jobs[i].out);
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
            random_rotations_pose(&r, &b, i);
            maybe_break(&r, s, b.pose[i], &c);
            b.jobs[i] = make_job(&r, &b, i, &c, &sh);
            maybe_not_lanes(&r, &b, i, 12, &b.jobs[i].model, &b.jobs[i].out);
        }
        batch_check(&b, "random chain");
        batch_free(&b);
        cb_skeleton_destroy(s);
    }
}

/* ---- orientation warps ---------------------------------------------------------------------- */

/* The orientation batch (cb_ik_orient_many_unchecked against cb_ik_orient_unchecked). */
static void orient_check(batch *b, const char *what)
{
    run_both(b, what, true);
}

enum { SPINE_MAX = 4 };

#define PI_BELOW 3.14159f /* just below pi: the largest angle_limit, within [0, pi] */

/* An orientation chain: the hip, then up to SPINE_MAX spine joints, each below the one before. */
typedef struct spine_chain {
    uint32_t hip;
    size_t n;
    uint32_t joints[SPINE_MAX];
} spine_chain;

/* What the jobs of one chain share: the spine's joints and weights, the angle limit. */
typedef struct orient_shared {
    spine_chain c;
    cb_ik_aim_joint spine[SPINE_MAX];
    float limit;
} orient_shared;

/* Weights equal (the default's 1 / n), unequal (summing to at most 1), some 0, or all 0 (the hip
 * alone turns); limit the default, small, or up to pi. */
static orient_shared random_orient_shared(cb_prng *r, const spine_chain *c)
{
    static const float limits[] = {0.0f, 0.0f, 0.4f, 1.2f, PI_BELOW};
    orient_shared o = {.c = *c, .limit = limits[cb_prng_below(r, 5)]};
    uint32_t kind = cb_prng_below(r, 4);
    float left = 1.0f;
    for (size_t k = 0; k < c->n; ++k) {
        float w = kind == 0   ? 1.0f / (float)c->n
                  : kind == 1 ? cb_prng_range(r, 0.0f, left)
                  : kind == 2 ? (k % 2 == 0 ? 0.0f : 1.0f / (float)c->n)
                              : 0.0f;
        left = left - w > 0.0f ? left - w : 0.0f;
        o.spine[k] = (cb_ik_aim_joint){c->joints[k], w};
    }
    return o;
}

/* An angle: 0, small, anywhere in (-pi, pi), beyond the limit on either side, or so small
 * that the spine's shares of it underflow to zero. */
static float random_angle(cb_prng *r, float limit)
{
    const float lim = limit == 0.0f ? CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT : limit;
    const float sign = cb_prng_below(r, 2) == 0 ? -1.0f : 1.0f;
    switch (cb_prng_below(r, 7)) {
    case 0:
        return 0.0f;
    case 1:
        return cb_prng_range(r, -0.3f, 0.3f);
    case 2:
        return cb_prng_range(r, -PI_BELOW, PI_BELOW);
    case 3:
        return sign * (lim + cb_prng_range(r, 0.01f, 2.0f));
    case 4:
        return sign * 1e-45f * (float)(1 + cb_prng_below(r, 3)); /* subnormal */
    default:
        return cb_prng_range(r, -1.5f, 1.5f);
    }
}

/* Job i: the pose's orientation warp on the shared chain, with its own angle and weight; its
 * spine its own copy, or the shared array itself one time in three. */
static cb_ik_orient_job make_orient_job(cb_prng *r, batch *b, size_t i, const orient_shared *sh)
{
    memcpy(b->spine[i], sh->spine, sizeof sh->spine);
    const cb_ik_aim_joint *spine = cb_prng_below(r, 3) == 0 ? sh->spine : b->spine[i];
    cb_ik_orient_job job = {.skeleton = b->s,
                            .pose = {b->pose[i], b->groups},
                            .out = {b->pose[i], b->groups},
                            .hip_joint = sh->c.hip,
                            .spine = {sh->c.n > 0 ? spine : NULL, sh->c.n},
                            .angle = random_angle(r, sh->limit),
                            .angle_limit = sh->limit};
    uint32_t wk = cb_prng_below(r, 8);
    job.weight = wk == 0 ? 0.0f : wk < 3 ? cb_prng_range(r, 0.0f, 1.0f) : 1.0f;
    b->has_result[i] = cb_prng_below(r, 5) != 0;
    if (cb_prng_below(r, 8) == 0) {
        job.out = (cb_xform_group_span){NULL, 0};
        b->has_result[i] = true;
    }
    job.result = b->has_result[i] ? &b->ores[i] : NULL;
    cb_error err;
    CB_CHECK(cb_ik_orient_job_validate(&job, &err) == CB_OK, "job %zu is not valid: %s", i,
             err.message);
    return job;
}

/* Breaks the spine chain of a pose now and then (maybe_break on the path to its last joint). */
static bool maybe_break_spine(cb_prng *r, const cb_skeleton *s, cb_xform_group *pose,
                              const spine_chain *c)
{
    uint32_t last = c->n > 0 ? c->joints[c->n - 1] : c->hip;
    const chain path = {c->hip, c->hip, last, {0}};
    return maybe_break(r, s, pose, &path);
}

/* Batches of n = 0 .. 3W + 1 orientation warps on the humanoid, one chain per batch (the
 * pelvis and the spine, the hip alone, a spine from spine_01 to the head), with jobs on another
 * chain or with other shares or limits, and jobs the lanes do not take, mixed in. */
static void ik_many_orient_humanoid(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    humanoid h = humanoid_make();
    const char *names[4][SPINE_MAX + 1] = {{"pelvis", "spine_01", "spine_02", "spine_03", NULL},
                                           {"pelvis", "spine_02", NULL},
                                           {"pelvis", NULL},
                                           {"spine_01", "spine_02", "spine_03", "neck", "head"}};
    spine_chain chains[4];
    for (int c = 0; c < 4; ++c) {
        spine_chain *ch = &chains[c];
        *ch = (spine_chain){0};
        CB_CHECK(cb_skeleton_find_joint(h.s, names[c][0], &ch->hip) == CB_OK, "no %s", names[c][0]);
        for (int k = 1; k <= SPINE_MAX && names[c][k] != NULL; ++k) {
            CB_CHECK(cb_skeleton_find_joint(h.s, names[c][k], &ch->joints[ch->n++]) == CB_OK,
                     "no %s", names[c][k]);
        }
    }
    size_t broken = 0, jobs = 0;
    for (int round = 0; round < 96 / W; ++round) {
        for (size_t n = 0; n <= 3 * W + 1; ++n) {
            batch b = {.s = h.s, .n = n};
            b.groups = cb_skeleton_group_count(h.s);
            b.bytes = cb_skeleton_pose_bytes(h.s);
            const orient_shared sh = random_orient_shared(&r, &chains[cb_prng_below(&r, 4)]);
            orient_shared other[MAX_JOBS];
            for (size_t i = 0; i < n; ++i) {
                b.pose[i] = b.own[i] = cb_test_pose_alloc(h.s, false);
                b.ref_pose[i] = b.ref_own[i] = cb_test_pose_alloc(h.s, false);
                humanoid_pose(&r, &h, b.pose[i]);
                const orient_shared *si = &sh;
                if (cb_prng_below(&r, 12) == 0) {
                    other[i] = random_orient_shared(&r, &chains[cb_prng_below(&r, 4)]);
                    si = &other[i];
                }
                broken += maybe_break_spine(&r, h.s, b.pose[i], &si->c);
                b.ojobs[i] = make_orient_job(&r, &b, i, si);
                maybe_not_lanes(&r, &b, i, 10, &b.ojobs[i].model, &b.ojobs[i].out);
            }
            jobs += n;
            orient_check(&b, "orient humanoid");
            batch_free(&b);
        }
    }
    cb_test_note("%zu orientation warps, %zu on broken chains", jobs, broken);
    cb_embedded_destroy(h.set);
}

/* Random skeletons with scale (uniform and not): a hip on a random joint's path and up to four
 * spine joints below it, every lane a random pose of the skeleton. */
static void ik_many_orient_random(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 60; ++it) {
        size_t nj = 8 + cb_prng_below(&r, 40);
        cb_skeleton *s = cb_test_random_skeleton(&r, nj, true, it % 2 == 0);
        const int32_t *parents = cb_skeleton_parents(s);
        /* the path from the root to a joint in the second half, root first */
        uint32_t path[64];
        size_t depth = 0;
        for (int32_t j = (int32_t)(nj - 1 - cb_prng_below(&r, (uint32_t)nj / 2)); j >= 0;
             j = parents[j]) {
            path[depth++] = (uint32_t)j;
        }
        for (size_t k = 0; k < depth / 2; ++k) {
            uint32_t t = path[k];
            path[k] = path[depth - 1 - k], path[depth - 1 - k] = t;
        }
        spine_chain c = {.hip = path[cb_prng_below(&r, (uint32_t)depth)]};
        size_t at = 0;
        while (path[at] != c.hip) {
            ++at;
        }
        for (size_t k = at + 1; k < depth && c.n < SPINE_MAX; ++k) {
            if (cb_prng_below(&r, 3) != 0) {
                c.joints[c.n++] = path[k];
            }
        }
        size_t n = cb_prng_below(&r, 3 * W + 2);
        batch b = {.s = s, .n = n};
        b.groups = cb_skeleton_group_count(s);
        b.bytes = cb_skeleton_pose_bytes(s);
        const orient_shared sh = random_orient_shared(&r, &c);
        for (size_t i = 0; i < n; ++i) {
            random_rotations_pose(&r, &b, i);
            maybe_break_spine(&r, s, b.pose[i], &c);
            b.ojobs[i] = make_orient_job(&r, &b, i, &sh);
            maybe_not_lanes(&r, &b, i, 12, &b.ojobs[i].model, &b.ojobs[i].out);
        }
        orient_check(&b, "orient random");
        batch_free(&b);
        cb_skeleton_destroy(s);
    }
}

/* ---- stride warps -----------------------------------------------------------------------------
 */

/* The stride batch (cb_ik_stride_many_unchecked) against cb_ik_stride_unchecked on each job in
 * turn, on copies of the poses: codes, the count, every pose and output byte, every result. */
static void stride_check(batch *b, const char *what)
{
    cb_ik_stride_job ref[MAX_JOBS];
    batch_prepare(b);
    for (size_t i = 0; i < b->n; ++i) {
        memset(&b->sres[i], 0xa5, sizeof b->sres[i]);
        memset(&b->ref_sres[i], 0xa5, sizeof b->ref_sres[i]);
        ref[i] = b->sjobs[i];
        ref[i].pose.ptr = b->ref_pose[i];
        ref[i].out.ptr = ref_out(b, i, b->sjobs[i].out.ptr);
        ref[i].result = b->has_result[i] ? &b->ref_sres[i] : NULL;
        b->sjobs[i].result = b->has_result[i] ? &b->sres[i] : NULL;
    }
    cb_result got[MAX_JOBS], want[MAX_JOBS];
    size_t want_refused = 0;
    for (size_t i = 0; i < b->n; ++i) {
        want[i] = cb_ik_stride_unchecked(&ref[i], NULL);
        want_refused += want[i] != CB_OK;
    }
    size_t refused = cb_ik_stride_many_unchecked(b->sjobs, b->n, got);
    check_codes_and_poses(b, what, got, refused, want, want_refused);
    for (size_t i = 0; i < b->n; ++i) {
        CB_CHECK(memcmp(&b->sres[i], &b->ref_sres[i], sizeof b->sres[i]) == 0,
                 "%s, job %zu of %zu: the result differs from the scalar job's", what, i, b->n);
    }
}

/* What a batch's stride warps share: the hip, the legs, the soften. */
typedef struct stride_shared {
    uint32_t hip, leg_count;
    cb_ik_stride_leg legs[4];
    float soften;
} stride_shared;

/* Both legs or one, measured from the pelvis or the root; now and then all four limbs, legs
 * and arms (more legs than the lanes take: the scalar warp's). */
static stride_shared random_stride_shared(cb_prng *r, const humanoid *h)
{
    stride_shared sh = {.soften = random_shared(r).soften};
    const char *hip = cb_prng_below(r, 4) == 0 ? "root" : "pelvis";
    CB_CHECK(cb_skeleton_find_joint(h->s, hip, &sh.hip) == CB_OK, "no joint %s", hip);
    const uint32_t first = cb_prng_below(r, 4); /* 0, 1: that leg alone; 2: both; 3: four */
    sh.leg_count = first == 3 ? 4 : first == 2 ? 2 : 1;
    const bool axis_from_bend = cb_prng_below(r, 4) == 0;
    for (uint32_t l = 0; l < sh.leg_count; ++l) {
        const chain *c = &h->limb[first >= 2 ? l : first];
        sh.legs[l] =
            (cb_ik_stride_leg){c->start, c->mid, c->end, {c->axis[0], c->axis[1], c->axis[2]}};
        if (axis_from_bend) { /* no mid_axis: the hinge from the bones' bend or the pole */
            memset(sh.legs[l].mid_axis, 0, sizeof sh.legs[l].mid_axis);
        }
    }
    return sh;
}

/* A warp with its own scale (off at 1, barely engaged, anywhere in range), direction (none,
 * one too short to have one, any, one the unchecked warp refuses) and weight (0, partial, 1, one
 * the engage ramp takes to 0). */
static cb_ik_stride_job make_stride_job(cb_prng *r, batch *b, size_t i, const stride_shared *sh)
{
    memcpy(b->slegs[i], sh->legs, sizeof sh->legs);
    cb_ik_stride_job job = {.skeleton = b->s,
                            .pose = {b->pose[i], b->groups},
                            .out = {b->pose[i], b->groups},
                            .hip_joint = sh->hip,
                            .legs = cb_prng_below(r, 3) == 0 ? sh->legs : b->slegs[i],
                            .leg_count = sh->leg_count,
                            .soften = sh->soften};
    switch (cb_prng_below(r, 6)) {
    case 0:
        job.scale = 1.0f;
        break;
    case 1:
        job.scale = 1.0f + 1e-6f;
        break;
    default:
        job.scale = cb_prng_range(r, CB_IK_STRIDE_MIN_SCALE, CB_IK_STRIDE_MAX_SCALE);
        break;
    }
    const uint32_t dk = cb_prng_below(r, 10);
    float d[3];
    random_unit(r, d);
    const float len = dk == 0 ? 0.0f : dk == 1 ? 1e-20f : cb_prng_range(r, 0.1f, 5.0f);
    job.direction[0] = d[0] * len, job.direction[1] = d[2] * len;
    const uint32_t wk = cb_prng_below(r, 10);
    job.weight = wk == 0 ? 0.0f : wk == 1 ? 1e-38f : wk < 4 ? cb_prng_range(r, 0.0f, 1.0f) : 1.0f;
    b->has_result[i] = cb_prng_below(r, 6) == 0;
    cb_error err;
    CB_CHECK(cb_ik_stride_job_validate(&job, &err) == CB_OK, "job %zu is not valid: %s", i,
             err.message);
    /* What only the frame brings, which the unchecked warp refuses: a direction beyond
     * CB_IK_MAX_COORDINATE or not finite (a host's velocity parameter). */
    const uint32_t bad = cb_prng_below(r, 16);
    job.direction[bad % 2] = bad == 0   ? 2e9f
                             : bad == 1 ? -INFINITY
                             : bad == 2 ? NAN
                                        : job.direction[bad % 2];
    return job;
}

/* One time in twelve, the pelvis scaled by 9e8: the legs' frames stay within
 * CB_IK_MAX_COORDINATE, but a target moved along a stride of up to 4 can leave it (refused). */
static bool maybe_huge_pelvis(cb_prng *r, const humanoid *h, cb_xform_group *pose)
{
    const uint32_t kind = cb_prng_below(r, 24);
    if (kind > 1) {
        return false;
    }
    uint32_t pelvis;
    CB_CHECK(cb_skeleton_find_joint(h->s, "pelvis", &pelvis) == CB_OK, "no pelvis");
    const size_t n = cb_skeleton_joint_count(h->s), groups = cb_skeleton_group_count(h->s);
    const int32_t *parents = cb_skeleton_parents(h->s);
    cb_xform all[256];
    assert_true(n <= 256);
    assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){all, n}), CB_OK);
    if (kind == 0) { /* the legs' targets out of range */
        all[pelvis].scale[0] = all[pelvis].scale[1] = all[pelvis].scale[2] = 9e8f;
    } else { /* the pelvis out of range, the legs (its children) brought back within it */
        all[pelvis].translation[0] += 1.5e9f;
        for (int k = 0; k < 2; ++k) {
            const uint32_t thigh = h->limb[k].start;
            CB_CHECK(parents[thigh] == (int32_t)pelvis, "the thigh's parent is not the pelvis");
            all[thigh].translation[0] -= 1.5e9f;
        }
    }
    assert_int_equal(cb_xform_pack((cb_xform_cspan){all, n}, pose, groups), CB_OK);
    return true;
}

/* Batches of n = 0 .. 3W + 1 stride warps on the humanoid's legs (runs on the same legs, the
 * lanes' case), with warps on other legs, with a result, model matrices or another output mixed
 * in now and then, and legs, hips or targets broken for the checks. */
static void ik_many_stride_humanoid(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    humanoid h = humanoid_make();
    size_t broken = 0, huge = 0, jobs = 0;
    for (int round = 0; round < 96 / W; ++round) {
        for (size_t n = 0; n <= 3 * W + 1; ++n) {
            batch b = {.s = h.s, .n = n};
            b.groups = cb_skeleton_group_count(h.s);
            b.bytes = cb_skeleton_pose_bytes(h.s);
            const stride_shared sh = random_stride_shared(&r, &h);
            stride_shared other[MAX_JOBS];
            for (size_t i = 0; i < n; ++i) {
                b.pose[i] = b.own[i] = cb_test_pose_alloc(h.s, false);
                b.ref_pose[i] = b.ref_own[i] = cb_test_pose_alloc(h.s, false);
                humanoid_pose(&r, &h, b.pose[i]);
                const stride_shared *si = &sh;
                if (cb_prng_below(&r, 12) == 0) {
                    other[i] = random_stride_shared(&r, &h);
                    si = &other[i];
                }
                broken += maybe_break(&r, h.s, b.pose[i], &h.limb[cb_prng_below(&r, 2)]);
                huge += maybe_huge_pelvis(&r, &h, b.pose[i]);
                b.sjobs[i] = make_stride_job(&r, &b, i, si);
                maybe_not_lanes(&r, &b, i, 10, &b.sjobs[i].model, &b.sjobs[i].out);
            }
            jobs += n;
            stride_check(&b, "stride humanoid");
            batch_free(&b);
        }
    }
    cb_test_note("%zu stride warps, %zu on broken legs, %zu with a huge pelvis", jobs, broken,
                 huge);
    cb_embedded_destroy(h.set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ik_many_humanoid_batches), cmocka_unit_test(ik_many_two_legs_of_one_pose),
        cmocka_unit_test(ik_many_random_chains),    cmocka_unit_test(ik_many_orient_humanoid),
        cmocka_unit_test(ik_many_orient_random),    cmocka_unit_test(ik_many_stride_humanoid),
    };
    return CB_RUN_TESTS(tests);
}
