/* stride: stride warping (issue 12): beyond the playback rate's bounds, the strides scale.
 *  - the job (cb_ik_stride_job) against its closed form, in double after local-to-model: each
 *    leg's target is the animated end joint with its offset from the hip's ground projection
 *    along the motion direction scaled by k (perpendicular and vertical parts kept); the end
 *    joint lands there when the leg reaches it; joints outside the legs' start and mid joints
 *    keep their bits; k = 1, weight 0 and no direction leave the pose bit for bit; targets far
 *    beyond reach give a finite pose, the leg pointing at the target and reported unreached;
 *    the job equals its legs' two-bone jobs run one after the other, bit for bit; every
 *    validation error;
 *  - the graph step in JSON: its keys, its defaults, and bad keys refused with clear messages;
 *    a step at k = 1 gives the crowd's matrices bit for bit as a graph without it;
 *  - no pop: as k ramps from 1 up and back, every joint's second difference stays within that
 *    of the unwarped walk plus the ramp's own share (a bound derived from the closed form); a
 *    jump of k breaks the bound (the check can fail);
 *  - the follower (cb_follow_desc.stride) on the example graph locomotion_follow: the scale and
 *    the velocity parameters against their closed forms, and at a commanded speed beyond
 *    max_rate x gait the planted-foot skate (docs/trajectories.md's metric) is lower with
 *    stride warping than without; with foot locking too, a locked foot holds within 1 mm;
 *  - bit-identity of the crowd's output at 1 and 3 threads and batch sizes 8 and 64, and of
 *    each character updated alone against crowds of batch 8 and 64 (the step's chunk: scale,
 *    weight and direction varying per character, some off, some refused; the refusal count);
 *  - the crowd's step against the job's closed form, from the matrices of a crowd without the
 *    step (37 characters in chunks of 32 and 5, each with its own scale and direction): the
 *    balls on their reachable targets, the legs pointing at them, bone lengths kept, the other
 *    joints' bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"
#include "test_util.h"

static const float DT = 1.0f / 60.0f;

typedef struct humanoid {
    cb_embedded *set;
    const cb_skeleton *s;
    size_t n;
    const int32_t *parents;
    uint32_t hip, thigh[2], calf[2], ball[2];
} humanoid;

/* The nearest joint above both thighs, walking the parents (the reference for first_joint). */
static uint32_t legs_ancestor(const humanoid *h)
{
    for (int32_t a = h->parents[h->thigh[0]]; a >= 0; a = h->parents[a]) {
        for (int32_t b = (int32_t)h->thigh[1]; b >= 0; b = h->parents[b]) {
            if (a == b) {
                return (uint32_t)a;
            }
        }
    }
    return UINT32_MAX;
}

static humanoid humanoid_make(void)
{
    humanoid h = {0};
    assert_int_equal(cb_embedded_create(NULL, &h.set, NULL), CB_OK);
    h.s = cb_embedded_skeleton(h.set);
    h.n = cb_skeleton_joint_count(h.s);
    h.parents = cb_skeleton_parents(h.s);
    h.hip = cb_test_joint(h.s, "pelvis");
    static const char *const names[3][2] = {
        {"thigh_l", "thigh_r"}, {"calf_l", "calf_r"}, {"ball_l", "ball_r"}};
    for (int f = 0; f < 2; ++f) {
        h.thigh[f] = cb_test_joint(h.s, names[0][f]);
        h.calf[f] = cb_test_joint(h.s, names[1][f]);
        h.ball[f] = cb_test_joint(h.s, names[2][f]);
    }
    return h;
}

static double dist3d(const double *a, const double *b)
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

static cb_ik_stride_job stride_job(const humanoid *h, cb_xform_group *pose, cb_xform_group *out,
                                   const cb_ik_stride_leg legs[2], float k, float dx, float dz,
                                   cb_ik_stride_result *res)
{
    size_t groups = cb_skeleton_group_count(h->s);
    return (cb_ik_stride_job){.skeleton = h->s,
                              .pose = {pose, groups},
                              .out = {out, groups},
                              .hip_joint = h->hip,
                              .legs = legs,
                              .leg_count = 2,
                              .direction = {dx, dz},
                              .scale = k,
                              .weight = 1.0f,
                              .soften = 0.99f,
                              .result = res};
}

static void legs_of(const humanoid *h, cb_ik_stride_leg legs[2])
{
    for (int f = 0; f < 2; ++f) {
        legs[f] = (cb_ik_stride_leg){h->thigh[f], h->calf[f], h->ball[f], {1.0f, 0.0f, 0.0f}};
    }
}

/* Is joint j one the job may write (a leg's start or mid joint)? */
static bool leg_joint(const humanoid *h, size_t j)
{
    return j == h->thigh[0] || j == h->thigh[1] || j == h->calf[0] || j == h->calf[1];
}

/* ---- the job ------------------------------------------------------------------------------ */

static void stride_job_closed_form(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_xform_group *pose = cb_test_pose_alloc(h.s, false), *out = cb_test_pose_alloc(h.s, false);
    dref_mat *m0 = calloc(h.n, sizeof *m0), *m1 = calloc(h.n, sizeof *m1);
    cb_ik_stride_leg legs[2];
    legs_of(&h, legs);
    const char *clips[] = {"walk_f", "walk_fl", "walk_l", "run_f"};
    const float times[] = {0.05f, 0.3f, 0.55f, 0.8f};
    const float dirs[][2] = {{0.0f, 1.0f}, {0.7f, 0.7f}, {-0.3f, 0.8f}, {1.0f, 0.0f}};
    const float scales[] = {0.7f, 1.15f, 1.25f, 1.4f};
    int placed = 0, soft = 0;
    for (size_t c = 0; c < 4; ++c) {
        for (size_t ti = 0; ti < 4; ++ti) {
            cb_test_clip_pose(h.s, cb_embedded_find_clip(h.set, clips[c]), times[ti], pose);
            dref_model_of_pose(h.s, pose, m0);
            for (size_t di = 0; di < 4; ++di) {
                for (size_t si = 0; si < 4; ++si) {
                    float k = scales[si];
                    cb_ik_stride_result res;
                    cb_ik_stride_job job =
                        stride_job(&h, pose, out, legs, k, dirs[di][0], dirs[di][1], &res);
                    cb_error err = {0};
                    CB_CHECK(cb_ik_stride_job_run(&job, &err) == CB_OK, "%s", err.message);
                    assert_true(res.applied);
                    /* stale model matrices: the subtree of the legs' nearest common ancestor */
                    CB_CHECK(res.first_joint == legs_ancestor(&h), "first_joint %u, want %u",
                             res.first_joint, legs_ancestor(&h));
                    dref_model_of_pose(h.s, out, m1);
                    double ul = hypot(dirs[di][0], dirs[di][1]);
                    double u[3] = {dirs[di][0] / ul, 0.0, dirs[di][1] / ul};
                    uint32_t close = 0;
                    for (int f = 0; f < 2; ++f) {
                        const double *hp = m0[h.hip].m[3], *fp = m0[h.ball[f]].m[3];
                        double along = (fp[0] - hp[0]) * u[0] + (fp[2] - hp[2]) * u[2];
                        double want[3];
                        for (int a = 0; a < 3; ++a) {
                            want[a] = fp[a] + (k - 1.0) * along * u[a];
                        }
                        double got_t[3] = {res.target[f][0], res.target[f][1], res.target[f][2]};
                        CB_CHECK(dist3d(got_t, want) < 2e-6, "target %g m off",
                                 dist3d(got_t, want));
                        /* Reachable: the target closer to the thigh than 0.98 of the leg's
                         * length (within the soft zone's start at 0.99). */
                        double len = dist3d(m0[h.thigh[f]].m[3], m0[h.calf[f]].m[3]) +
                                     dist3d(m0[h.calf[f]].m[3], m0[h.ball[f]].m[3]);
                        double d = dist3d(m0[h.thigh[f]].m[3], want);
                        const double *got = m1[h.ball[f]].m[3];
                        if (d < 0.98 * len) {
                            CB_CHECK(dist3d(got, want) < 1e-4,
                                     "%s t %g k %g: the ball is %g m "
                                     "from its reachable target",
                                     clips[c], (double)times[ti], (double)k, dist3d(got, want));
                            placed++;
                        } else {
                            soft++;
                        }
                        close += dist3d(got, want) < 1e-4;
                        /* reached or not, the leg points from the thigh at its target */
                        const double *th = m1[h.thigh[f]].m[3];
                        double cosang = ((got[0] - th[0]) * (want[0] - th[0]) +
                                         (got[1] - th[1]) * (want[1] - th[1]) +
                                         (got[2] - th[2]) * (want[2] - th[2])) /
                                        (dist3d(got, th) * d);
                        CB_CHECK(cosang > 1.0 - 1e-8, "the leg points %g rad off its target",
                                 acos(fmin(cosang, 1.0)));
                    }
                    /* a leg reported reached is on its target */
                    CB_CHECK(res.reached <= close, "%u legs reported reached, %u on target",
                             res.reached, close);
                    /* Only the legs' start and mid joints are written. */
                    for (size_t j = 0; j < h.n; ++j) {
                        if (leg_joint(&h, j)) {
                            continue;
                        }
                        dref_xform a = dref_from_pose(pose, j), b = dref_from_pose(out, j);
                        CB_CHECK(memcmp(&a, &b, sizeof a) == 0, "joint %zu changed", j);
                    }
                }
            }
        }
    }
    printf("# %d legs placed on reachable targets, %d beyond 0.98 of the reach\n", placed, soft);
    assert_true(placed > 80 && soft > 80);
    free(m0), free(m1);
    free(pose), free(out);
    cb_embedded_destroy(h.set);
}

static void stride_job_skips_bit_for_bit(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_xform_group *pose = cb_test_pose_alloc(h.s, false), *out = cb_test_pose_alloc(h.s, false);
    size_t bytes = cb_skeleton_pose_bytes(h.s);
    cb_ik_stride_leg legs[2];
    legs_of(&h, legs);
    cb_test_clip_pose(h.s, cb_embedded_find_clip(h.set, "walk_f"), 0.4f, pose);
    for (int c = 0; c < 3; ++c) {
        cb_ik_stride_result res;
        cb_ik_stride_job job =
            stride_job(&h, pose, out, legs, c == 0 ? 1.0f : 1.3f, 0.0f, c == 2 ? 0.0f : 1.0f, &res);
        job.weight = c == 1 ? 0.0f : 1.0f;
        memset(out, 0xA5, bytes);
        assert_int_equal(cb_ik_stride_job_run(&job, NULL), CB_OK);
        assert_false(res.applied);
        assert_memory_equal(out, pose, bytes);
        /* in place too */
        memcpy(out, pose, bytes);
        job.pose = (cb_xform_group_cspan){out, job.pose.count};
        assert_int_equal(cb_ik_stride_job_run(&job, NULL), CB_OK);
        assert_memory_equal(out, pose, bytes);
    }
    free(pose), free(out);
    cb_embedded_destroy(h.set);
}

/* The job is its legs' two-bone jobs run one after the other, in place, towards the targets it
 * reports and with its weight times the engage ramp: bit for bit, out of place and in place, at
 * full weight and below, inside the ramp and beyond. The job computes each leg's model frames
 * once (for its target) and solves from them: this holds only if those frames are the ones a
 * two-bone job computes from the pose the legs before it corrected (the legs are disjoint). */
static void stride_job_is_its_legs_two_bone_jobs(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    size_t bytes = cb_skeleton_pose_bytes(h.s), groups = cb_skeleton_group_count(h.s);
    cb_xform_group *pose = cb_test_pose_alloc(h.s, false), *out = cb_test_pose_alloc(h.s, false);
    cb_xform_group *ref = cb_test_pose_alloc(h.s, false);
    cb_ik_stride_leg legs[2];
    legs_of(&h, legs);
    const char *clips[] = {"walk_f", "run_f", "walk_l"};
    const float scales[] = {1.04f, 1.3f, 0.8f, 1.6f}; /* inside the ramp, beyond, and far */
    const float weights[] = {1.0f, 0.6f};
    int solved = 0;
    for (size_t c = 0; c < 3; ++c) {
        for (int ti = 0; ti < 5; ++ti) {
            cb_test_clip_pose(h.s, cb_embedded_find_clip(h.set, clips[c]), 0.2f * (float)ti, pose);
            for (size_t si = 0; si < 4; ++si) {
                for (size_t wi = 0; wi < 2; ++wi) {
                    for (int in_place = 0; in_place < 2; ++in_place) {
                        float k = scales[si];
                        cb_ik_stride_result res;
                        memcpy(out, pose, bytes);
                        cb_ik_stride_job job =
                            stride_job(&h, in_place ? out : pose, out, legs, k, 0.3f, 0.9f, &res);
                        job.weight = weights[wi];
                        assert_int_equal(cb_ik_stride_job_run(&job, NULL), CB_OK);
                        assert_true(res.applied);
                        float e = fabsf(k - 1.0f) / CB_IK_STRIDE_ENGAGE; /* ik.h's ramp */
                        e = e < 1.0f ? e * e * (3.0f - 2.0f * e) : 1.0f;
                        memcpy(ref, pose, bytes);
                        for (int f = 0; f < 2; ++f) {
                            cb_ik_two_bone_job leg = {
                                .skeleton = h.s,
                                .pose = {ref, groups},
                                .out = {ref, groups},
                                .start_joint = legs[f].start_joint,
                                .mid_joint = legs[f].mid_joint,
                                .end_joint = legs[f].end_joint,
                                .target = {res.target[f][0], res.target[f][1], res.target[f][2]},
                                .mid_axis = {1.0f, 0.0f, 0.0f},
                                .weight = weights[wi] * e,
                                .soften = job.soften,
                            };
                            assert_int_equal(cb_ik_two_bone_job_run(&leg, NULL), CB_OK);
                        }
                        CB_CHECK(memcmp(out, ref, bytes) == 0,
                                 "%s t %g k %g w %g %s: not the legs' two-bone jobs", clips[c],
                                 0.2 * ti, (double)k, (double)weights[wi],
                                 in_place ? "in place" : "out of place");
                        solved++;
                    }
                }
            }
        }
    }
    assert_int_equal(solved, 3 * 5 * 4 * 2 * 2);
    free(pose), free(out), free(ref);
    cb_embedded_destroy(h.set);
}

/* Targets far beyond the legs' reach (k = 4, and 0.25 backwards): no NaN; each leg points at
 * its target from the thigh (the soft limit pulls along the target direction) and falls short;
 * reported unreached. */
static void stride_job_beyond_reach(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_xform_group *pose = cb_test_pose_alloc(h.s, false), *out = cb_test_pose_alloc(h.s, false);
    dref_mat *m1 = calloc(h.n, sizeof *m1);
    cb_ik_stride_leg legs[2];
    legs_of(&h, legs);
    const float ks[2] = {CB_IK_STRIDE_MAX_SCALE, CB_IK_STRIDE_MIN_SCALE};
    int unreached = 0;
    for (int c = 0; c < 2; ++c) {
        for (int ti = 0; ti < 8; ++ti) {
            cb_test_clip_pose(h.s, cb_embedded_find_clip(h.set, "run_f"), 0.125f * (float)ti, pose);
            cb_ik_stride_result res;
            cb_ik_stride_job job = stride_job(&h, pose, out, legs, ks[c], 0.0f, 1.0f, &res);
            assert_int_equal(cb_ik_stride_job_run(&job, NULL), CB_OK);
            dref_model_of_pose(h.s, out, m1);
            for (size_t j = 0; j < h.n; ++j) {
                for (int a = 0; a < 3; ++a) {
                    CB_CHECK(isfinite(m1[j].m[3][a]), "joint %zu is not finite", j);
                }
            }
            for (int f = 0; f < 2; ++f) {
                const double *th = m1[h.thigh[f]].m[3], *b = m1[h.ball[f]].m[3];
                double t[3] = {res.target[f][0], res.target[f][1], res.target[f][2]};
                double len = dist3d(th, m1[h.calf[f]].m[3]) + dist3d(m1[h.calf[f]].m[3], b);
                if (dist3d(th, t) < len) {
                    continue; /* this phase's foot was close under the hip */
                }
                unreached++;
                double cosang = ((b[0] - th[0]) * (t[0] - th[0]) + (b[1] - th[1]) * (t[1] - th[1]) +
                                 (b[2] - th[2]) * (t[2] - th[2])) /
                                (dist3d(b, th) * dist3d(t, th));
                CB_CHECK(cosang > 1.0 - 1e-6, "the leg points %g rad off its target",
                         acos(fmin(cosang, 1.0)));
                CB_CHECK(dist3d(b, th) <= len + 1e-5, "the leg is stretched");
            }
            assert_true(res.reached <= 2);
        }
    }
    assert_true(unreached >= 8);
    free(m1);
    free(pose), free(out);
    cb_embedded_destroy(h.set);
}

static void stride_job_validates(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_xform_group *pose = cb_test_pose_alloc(h.s, false), *out = cb_test_pose_alloc(h.s, false);
    cb_test_clip_pose(h.s, cb_embedded_find_clip(h.set, "walk_f"), 0.1f, pose);
    cb_ik_stride_leg legs[2], bad_legs[2];
    legs_of(&h, legs);
    cb_ik_stride_result res;
    const cb_ik_stride_job good = stride_job(&h, pose, out, legs, 1.2f, 0.0f, 1.0f, &res);
    assert_int_equal(cb_ik_stride_job_validate(&good, NULL), CB_OK);
    struct {
        cb_result want;
        const char *needle;
    } cases[] = {
        {CB_ERR_NULL_ARGUMENT, "legs"},
        {CB_ERR_TOO_FEW, "legs"},
        {CB_ERR_TOO_MANY, "legs"},
        {CB_ERR_INVALID_ARGUMENT, "scale"},
        {CB_ERR_NOT_FINITE, "scale"},
        {CB_ERR_NOT_FINITE, "direction"},
        {CB_ERR_HIERARCHY, "not below"},
        {CB_ERR_INVALID_ARGUMENT, "share"},
        {CB_ERR_HIERARCHY, "chain"},
        {CB_ERR_INVALID_ARGUMENT, "weight"},
        {CB_ERR_NULL_ARGUMENT, "out"},
        {CB_ERR_INVALID_ARGUMENT, "hip_joint"},
        {CB_ERR_INVALID_ARGUMENT, "soften"},
        {CB_ERR_INVALID_ARGUMENT, "direction"},
        {CB_ERR_HIERARCHY, "below the other"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        cb_ik_stride_job job = good;
        memcpy(bad_legs, legs, sizeof bad_legs);
        switch (c) {
        case 0:
            job.legs = NULL;
            break;
        case 1:
            job.leg_count = 0;
            break;
        case 2:
            job.leg_count = CB_IK_STRIDE_MAX_LEGS + 1;
            break;
        case 3:
            job.scale = 4.5f;
            break;
        case 4:
            job.scale = NAN;
            break;
        case 5:
            job.direction[1] = INFINITY;
            break;
        case 6:
            job.hip_joint = h.thigh[0], job.legs = bad_legs, bad_legs[0] = bad_legs[1];
            bad_legs[1].start_joint = h.calf[0], job.leg_count = 1;
            break;
        case 7:
            job.legs = bad_legs, bad_legs[1] = bad_legs[0];
            break;
        case 8:
            job.legs = bad_legs, bad_legs[0].mid_joint = h.ball[0],
            bad_legs[0].end_joint = h.calf[0];
            break;
        case 9:
            job.weight = 1.5f;
            break;
        case 10:
            job.out = (cb_xform_group_span){NULL, 0};
            break;
        case 11:
            job.hip_joint = (uint32_t)h.n;
            break;
        case 12:
            job.soften = 2.0f;
            break;
        case 13:
            job.direction[0] = 2e9f;
            break;
        case 14: /* disjoint chains, the arm below the spine: solved from stale frames */
            job.legs = bad_legs;
            bad_legs[0] = (cb_ik_stride_leg){cb_test_joint(h.s, "spine_01"),
                                             cb_test_joint(h.s, "spine_02"),
                                             cb_test_joint(h.s, "spine_03"),
                                             {0.0f, 0.0f, 1.0f}};
            bad_legs[1] = (cb_ik_stride_leg){cb_test_joint(h.s, "clavicle_l"),
                                             cb_test_joint(h.s, "upperarm_l"),
                                             cb_test_joint(h.s, "lowerarm_l"),
                                             {0.0f, 0.0f, 1.0f}};
            break;
        }
        cb_error err = {0};
        memset(out, 0x5A, cb_skeleton_pose_bytes(h.s));
        cb_xform_group *copy = cb_test_pose_alloc(h.s, false);
        memcpy(copy, out, cb_skeleton_pose_bytes(h.s));
        cb_result r = cb_ik_stride_job_run(&job, &err);
        CB_CHECK(r == cases[c].want && strstr(err.message, cases[c].needle) != NULL,
                 "case %zu: %s '%s', want %s with '%s'", c, cb_result_str(r), err.message,
                 cb_result_str(cases[c].want), cases[c].needle);
        assert_memory_equal(out, copy, cb_skeleton_pose_bytes(h.s)); /* nothing written */
        printf("# %s\n", err.message);
        free(copy);
    }
    free(pose), free(out);
    cb_embedded_destroy(h.set);
}

/* ---- the graph step ----------------------------------------------------------------------- */

static cb_result load_graph(const humanoid *h, const char *text, cb_graph **out, cb_error *err)
{
    const cb_clip *clips[64];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(h->set, clips, 64);
    return cb_graph_load_json(text, strlen(text), &jd, out, err);
}

#define LEGS_JSON                                                                                  \
    "\"legs\": [{\"start\": \"thigh_l\", \"mid\": \"calf_l\", \"end\": \"ball_l\", "               \
    "\"mid_axis\": [1, 0, 0]}, {\"start\": \"thigh_r\", \"mid\": \"calf_r\", \"end\": "            \
    "\"ball_r\", \"mid_axis\": [1, 0, 0]}]"

/* A graph playing `clip` alone with the post-process `steps` (JSON, may be empty). */
static char *walk_doc(const char *clip, const char *steps)
{
    static const char head[] =
        "{\"parameters\": [{\"name\": \"vx\"}, {\"name\": \"vy\"}, {\"name\": \"k\", "
        "\"default\": 1}, {\"name\": \"w\"}, {\"name\": \"on\", \"type\": \"bool\"}], \"root\": "
        "\"c\", \"nodes\": {\"c\": {\"type\": \"clip\", \"clip\": \"";
    size_t n = sizeof head + strlen(clip) + strlen(steps) + 64;
    char *doc = malloc(n);
    snprintf(doc, n, "%s%s\"}}, \"post_process\": [%s]}", head, clip, steps);
    return doc;
}

static const char STEP[] = "{\"type\": \"stride_warp\", " LEGS_JSON
                           ", \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"], \"soften\": 0.99}";

static void stride_graph_json(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_graph *g = NULL;
    cb_error err = {0};
    char *doc = walk_doc("walk_f", "{\"type\": \"stride_warp\", \"hip\": \"pelvis\", " LEGS_JSON
                                   ", \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"], "
                                   "\"weight\": \"w\", \"soften\": 0.95}");
    CB_CHECK(load_graph(&h, doc, &g, &err) == CB_OK, "%s", err.message);
    cb_graph_destroy(g), g = NULL, free(doc);
    cb_graph_stride_warp_desc d = cb_graph_query_stride_warp_desc(NULL);
    assert_string_equal(d.hip_joint, "pelvis");
    assert_true(d.soften == CB_IK_DEFAULT_SOFTEN);
    struct {
        const char *step;
        cb_result want;
        const char *needle;
    } bad[] = {
        {"{\"type\": \"stride_warp\", \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"]}",
         CB_ERR_PARSE, "legs"},
        {"{\"type\": \"stride_warp\", " LEGS_JSON ", \"direction\": [\"vx\", \"vy\"]}",
         CB_ERR_PARSE, "scale"},
        {"{\"type\": \"stride_warp\", " LEGS_JSON ", \"scale\": \"k\", \"direction\": [\"vx\"]}",
         CB_ERR_PARSE, "direction"},
        {"{\"type\": \"stride_warp\", " LEGS_JSON ", \"scale\": \"k\", \"direction\": [\"vx\", "
         "\"vy\"], \"stride\": 2}",
         CB_ERR_PARSE, "stride"},
        {"{\"type\": \"stride_warp\", \"legs\": [{\"start\": \"thigh_l\", \"mid\": \"calf_l\", "
         "\"end\": \"ball_l\", \"knee\": 1}], \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"]}",
         CB_ERR_PARSE, "knee"},
        {"{\"type\": \"stride_warp\", \"legs\": [], \"scale\": \"k\", \"direction\": [\"vx\", "
         "\"vy\"]}",
         CB_ERR_PARSE, "legs"},
        {"{\"type\": \"stride_warp\", \"legs\": [{\"start\": \"thigh_l\", \"mid\": \"calf_l\", "
         "\"end\": \"toe_l\"}], \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"]}",
         CB_ERR_NOT_FOUND, "toe_l"},
        {"{\"type\": \"stride_warp\", \"legs\": [{\"start\": \"calf_l\", \"mid\": \"thigh_l\", "
         "\"end\": \"ball_l\"}], \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"]}",
         CB_ERR_HIERARCHY, "chain"},
        {"{\"type\": \"stride_warp\", \"hip\": \"spine_01\", " LEGS_JSON
         ", \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"]}",
         CB_ERR_HIERARCHY, "not below"},
        {"{\"type\": \"stride_warp\", " LEGS_JSON ", \"scale\": \"on\", \"direction\": [\"vx\", "
         "\"vy\"]}",
         CB_ERR_MISMATCH, "on"},
        {"{\"type\": \"stride_warp\", " LEGS_JSON ", \"scale\": \"kk\", \"direction\": [\"vx\", "
         "\"vy\"]}",
         CB_ERR_NOT_FOUND, "kk"},
        {"{\"type\": \"stride_warp\", " LEGS_JSON ", \"scale\": \"k\", \"direction\": [\"vx\", "
         "\"vy\"], \"soften\": 1.5}",
         CB_ERR_INVALID_ARGUMENT, "soften"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; ++k) {
        doc = walk_doc("walk_f", bad[k].step);
        char label[32];
        snprintf(label, sizeof label, "case %zu", k);
        cb_test_expect_embedded_json_error(h.set, doc, bad[k].want, bad[k].needle, label);
        free(doc);
    }
    cb_embedded_destroy(h.set);
}

/* A crowd of n characters of the graph `doc` (matrices MAT4, weights kept). */
typedef struct walker {
    cb_graph *graph;
    cb_crowd *crowd;
    uint32_t p_k, p_vx, p_vy;
} walker;

static walker walker_make(const humanoid *h, const char *doc, uint32_t n, uint32_t threads,
                          uint32_t batch)
{
    walker w = {0};
    cb_error err = {0};
    CB_CHECK(load_graph(h, doc, &w.graph, &err) == CB_OK, "%s", err.message);
    const cb_graph *graphs[1] = {w.graph};
    cb_crowd_desc cd = {.skeleton = h->s,
                        .capacity = n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = threads,
                        .batch_size = batch};
    CB_CHECK(cb_crowd_create(&cd, &w.crowd, &err) == CB_OK, "%s", err.message);
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(w.crowd, 0, (float)i / (float)n, &ch), CB_OK);
    }
    assert_int_equal(cb_graph_find_param(w.graph, "k", &w.p_k), CB_OK);
    assert_int_equal(cb_graph_find_param(w.graph, "vx", &w.p_vx), CB_OK);
    assert_int_equal(cb_graph_find_param(w.graph, "vy", &w.p_vy), CB_OK);
    return w;
}

static void walker_free(walker *w)
{
    cb_crowd_destroy(w->crowd);
    cb_graph_destroy(w->graph);
}

static void set_params(walker *w, uint32_t n, float k, float vx, float vy)
{
    float *ck = cb_crowd_param_column(w->crowd, 0, w->p_k);
    float *cx = cb_crowd_param_column(w->crowd, 0, w->p_vx);
    float *cy = cb_crowd_param_column(w->crowd, 0, w->p_vy);
    for (uint32_t i = 0; i < n; ++i) {
        ck[i] = k, cx[i] = vx, cy[i] = vy;
    }
}

/* The step at k = 1 gives the crowd's matrices bit for bit as a graph without it. */
static void stride_step_off_is_bit_identical(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    char *with = walk_doc("walk_f", STEP), *without = walk_doc("walk_f", "");
    const uint32_t n = 5;
    walker a = walker_make(&h, with, n, 1, 0), b = walker_make(&h, without, n, 1, 0);
    size_t floats = 16 * h.n;
    for (int f = 0; f < 30; ++f) {
        set_params(&a, n, 1.0f, 0.0f, 1.4f);
        set_params(&b, n, 1.0f, 0.0f, 1.4f);
        assert_int_equal(cb_crowd_update(a.crowd, DT), CB_OK);
        assert_int_equal(cb_crowd_update(b.crowd, DT), CB_OK);
        for (uint32_t i = 0; i < n; ++i) {
            assert_memory_equal(cb_crowd_matrices(a.crowd, 0, i), cb_crowd_matrices(b.crowd, 0, i),
                                floats * sizeof(float));
        }
    }
    /* and k != 1 does change them (the comparison can fail) */
    set_params(&a, n, 1.3f, 0.0f, 1.4f);
    set_params(&b, n, 1.3f, 0.0f, 1.4f);
    assert_int_equal(cb_crowd_update(a.crowd, DT), CB_OK);
    assert_int_equal(cb_crowd_update(b.crowd, DT), CB_OK);
    assert_memory_not_equal(cb_crowd_matrices(a.crowd, 0, 0), cb_crowd_matrices(b.crowd, 0, 0),
                            floats * sizeof(float));
    walker_free(&a), walker_free(&b);
    free(with), free(without);
    cb_embedded_destroy(h.set);
}

/* Thread count and batch size do not change a bit. */
static void stride_threads_and_batches(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    char *doc = walk_doc("walk_f", STEP);
    const uint32_t n = 37;
    walker w[3] = {walker_make(&h, doc, n, 1, 8), walker_make(&h, doc, n, 3, 64),
                   walker_make(&h, doc, n, 3, 8)};
    size_t floats = 16 * h.n;
    for (int f = 0; f < 20; ++f) {
        for (int c = 0; c < 3; ++c) {
            float *ck = cb_crowd_param_column(w[c].crowd, 0, w[c].p_k);
            float *cx = cb_crowd_param_column(w[c].crowd, 0, w[c].p_vx);
            float *cy = cb_crowd_param_column(w[c].crowd, 0, w[c].p_vy);
            for (uint32_t i = 0; i < n; ++i) {
                ck[i] = 0.8f + 0.02f * (float)i, cx[i] = 0.1f * (float)(i % 5), cy[i] = 1.4f;
            }
            assert_int_equal(cb_crowd_update(w[c].crowd, DT), CB_OK);
        }
        for (uint32_t i = 0; i < n; ++i) {
            for (int c = 1; c < 3; ++c) {
                assert_memory_equal(cb_crowd_matrices(w[0].crowd, 0, i),
                                    cb_crowd_matrices(w[c].crowd, 0, i), floats * sizeof(float));
            }
        }
    }
    for (int c = 0; c < 3; ++c) {
        walker_free(&w[c]);
    }
    free(doc);
    cb_embedded_destroy(h.set);
}

/* Character i's inputs at frame f for stride_chunk_is_each_character_alone: the scale, the
 * weight and the direction vary per character and frame; some characters have the warp off
 * (k = 1, k = 0, weight 0) and, for frames 8 to 15, every fifth one a direction beyond
 * CB_IK_MAX_COORDINATE (the step refuses it, writing nothing). */
static void chunk_inputs(walker *w, uint32_t p_w, uint32_t i, int f)
{
    const uint32_t h = i * 7u + (uint32_t)f * 3u;
    float k = 0.6f + 0.07f * (float)(h % 13);
    k = i % 6 == 1 ? 1.0f : i % 11 == 4 ? 0.0f : k;
    float wt = i % 3 == 0 ? 0.6f : i % 8 == 5 ? 0.0f : 1.0f;
    float vx = 0.3f * (float)(h % 5) - 0.6f, vy = 1.4f - 0.2f * (float)(i % 4);
    vx = f >= 8 && f < 16 && i % 5 == 2 ? 2e9f : vx;
    cb_crowd_param_column(w->crowd, 0, w->p_k)[i] = k;
    cb_crowd_param_column(w->crowd, 0, p_w)[i] = wt;
    cb_crowd_param_column(w->crowd, 0, w->p_vx)[i] = vx;
    cb_crowd_param_column(w->crowd, 0, w->p_vy)[i] = vy;
}

/* The graph's stride step runs over a chunk of characters, each leg's solves in one call: a
 * crowd updated one character at a time (a batch, and a chunk, of one) against crowds of batch
 * 8 and 64 on 1 and 2 threads, with the scale, weight and direction varying per character (some
 * off, some refused): the same matrices every frame and the same refusal count. It fails when
 * a leg is solved with another character's target, weight or pose, or when a refused or skipped
 * character shifts the others' jobs. */
static void stride_chunk_is_each_character_alone(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    char *doc = walk_doc("walk_f", "{\"type\": \"stride_warp\", " LEGS_JSON
                                   ", \"scale\": \"k\", \"direction\": [\"vx\", \"vy\"], "
                                   "\"weight\": \"w\", \"soften\": 0.97}");
    const uint32_t n = 37;
    enum { CROWDS = 4 };
    walker w[CROWDS];
    uint32_t p_w[CROWDS];
    for (int c = 0; c < CROWDS; ++c) {
        w[c] = walker_make(&h, doc, n, 1 + (uint32_t)(c == 3), c == 2 ? 64 : 8);
        assert_int_equal(cb_graph_find_param(w[c].graph, "w", &p_w[c]), CB_OK);
    }
    cb_crowd_scratch *one = NULL;
    assert_int_equal(cb_crowd_scratch_create(w[0].crowd, &one), CB_OK);
    const size_t bytes = 16 * h.n * sizeof(float);
    for (int f = 0; f < 24; ++f) {
        for (int c = 0; c < CROWDS; ++c) {
            for (uint32_t i = 0; i < n; ++i) {
                chunk_inputs(&w[c], p_w[c], i, f);
            }
        }
        for (uint32_t i = 0; i < n; ++i) {
            assert_int_equal(cb_crowd_update_range(w[0].crowd, one, DT, 0, i, 1), CB_OK);
        }
        for (int c = 1; c < CROWDS; ++c) {
            assert_int_equal(cb_crowd_update(w[c].crowd, DT), CB_OK);
        }
        for (uint32_t i = 0; i < n; ++i) {
            for (int c = 1; c < CROWDS; ++c) {
                CB_CHECK(memcmp(cb_crowd_matrices(w[0].crowd, 0, i),
                                cb_crowd_matrices(w[c].crowd, 0, i), bytes) == 0,
                         "frame %d, character %u: crowd %d's matrices differ", f, i, c);
            }
        }
        const uint64_t refused = cb_crowd_query_stats(w[0].crowd).refused_ik;
        for (int c = 1; c < CROWDS; ++c) {
            CB_CHECK(cb_crowd_query_stats(w[c].crowd).refused_ik == refused,
                     "frame %d: crowd %d refused %llu steps, one by one %llu", f, c,
                     (unsigned long long)cb_crowd_query_stats(w[c].crowd).refused_ik,
                     (unsigned long long)refused);
        }
    }
    /* 8 frames x the 7 characters with i % 5 == 2 whose warp is otherwise on */
    uint64_t want = 0;
    for (uint32_t i = 2; i < n; i += 5) {
        want += i % 6 != 1 && i % 11 != 4 && i % 8 != 5 ? 8 : 0;
    }
    assert_true(cb_crowd_query_stats(w[0].crowd).refused_ik == want);
    cb_crowd_scratch_destroy(w[0].crowd, one);
    for (int c = 0; c < CROWDS; ++c) {
        walker_free(&w[c]);
    }
    free(doc);
    cb_embedded_destroy(h.set);
}

/* The crowd's stride step against the job's closed form (stride_job_closed_form), each
 * character's from its own matrices in a crowd without the step (the same blended pose, the
 * step off): its legs' targets, the end joints landing on those the legs reach, the legs
 * pointing at them either way, bone lengths kept and every joint outside the legs' subtrees
 * the same bits. 37 characters in a batch of 64 (chunks of 32 and 5), each with its own scale
 * and direction every frame, so that a leg solved with another character's frames or target,
 * or with wrong frames, misses. Independent of run_stride: the reference is the animated pose's
 * model matrices and the closed form, in double. */
static void stride_crowd_closed_form(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    char *with = walk_doc("walk_f", STEP), *without = walk_doc("walk_f", "");
    const uint32_t n = 37;
    walker a = walker_make(&h, with, n, 1, 64), b = walker_make(&h, without, n, 1, 64);
    bool *in_leg = calloc(h.n, sizeof *in_leg); /* a thigh or below one */
    for (size_t j = 0; j < h.n; ++j) {          /* parents before children */
        in_leg[j] =
            j == h.thigh[0] || j == h.thigh[1] || (h.parents[j] >= 0 && in_leg[h.parents[j]]);
    }
    /* |k - 1| >= CB_IK_STRIDE_ENGAGE: the engage ramp is 1, the closed form exact */
    static const float ks[] = {0.7f, 0.85f, 1.15f, 1.25f, 1.4f};
    int placed = 0, soft = 0;
    for (int f = 0; f < 12; ++f) {
        for (int c = 0; c < 2; ++c) {
            walker *w = c == 0 ? &a : &b;
            for (uint32_t i = 0; i < n; ++i) {
                const float ang = 0.37f * (float)i + 0.23f * (float)f - 1.5f;
                cb_crowd_param_column(w->crowd, 0, w->p_k)[i] = ks[(3 * i + (uint32_t)f) % 5];
                cb_crowd_param_column(w->crowd, 0, w->p_vx)[i] = 1.4f * sinf(ang);
                cb_crowd_param_column(w->crowd, 0, w->p_vy)[i] = 1.4f * cosf(ang);
            }
            assert_int_equal(cb_crowd_update(w->crowd, DT), CB_OK);
        }
        for (uint32_t i = 0; i < n; ++i) {
            const float *m1 = cb_crowd_matrices(a.crowd, 0, i),
                        *m0 = cb_crowd_matrices(b.crowd, 0, i);
            const double k = ks[(3 * i + (uint32_t)f) % 5];
            const double vx = cb_crowd_param_column(a.crowd, 0, a.p_vx)[i];
            const double vy = cb_crowd_param_column(a.crowd, 0, a.p_vy)[i];
            const double ul = hypot(vx, vy), u[3] = {vx / ul, 0.0, vy / ul};
            for (size_t j = 0; j < h.n; ++j) {
                CB_CHECK(in_leg[j] || memcmp(&m0[16 * j], &m1[16 * j], 16 * sizeof *m0) == 0,
                         "frame %d, character %u: joint %zu outside the legs changed", f, i, j);
            }
#define POS(m, j)                                                                                  \
    {                                                                                              \
        (m)[16 * (j) + 12], (m)[16 * (j) + 13], (m)[16 * (j) + 14]                                 \
    }
            const double hp[3] = POS(m0, h.hip);
            for (int l = 0; l < 2; ++l) {
                const double th0[3] = POS(m0, h.thigh[l]), ca0[3] = POS(m0, h.calf[l]),
                             fp[3] = POS(m0, h.ball[l]);
                const double th[3] = POS(m1, h.thigh[l]), ca[3] = POS(m1, h.calf[l]),
                             got[3] = POS(m1, h.ball[l]);
                double along = (fp[0] - hp[0]) * u[0] + (fp[2] - hp[2]) * u[2], want[3];
                for (int c = 0; c < 3; ++c) {
                    want[c] = fp[c] + (k - 1.0) * along * u[c];
                }
                const double upper = dist3d(th0, ca0), lower = dist3d(ca0, fp);
                CB_CHECK(fabs(dist3d(th, ca) - upper) < 1e-5 &&
                             fabs(dist3d(ca, got) - lower) < 1e-5,
                         "frame %d, character %u, leg %d: bone lengths %g %g, were %g %g", f, i, l,
                         dist3d(th, ca), dist3d(ca, got), upper, lower);
                const double d = dist3d(th0, want);
                if (d < 0.98 * (upper + lower)) {
                    CB_CHECK(dist3d(got, want) < 1e-4,
                             "frame %d, character %u (k %g), leg %d: the ball is %g m from its "
                             "reachable target",
                             f, i, k, l, dist3d(got, want));
                    placed++;
                } else {
                    soft++;
                }
                const double cosang =
                    ((got[0] - th[0]) * (want[0] - th[0]) + (got[1] - th[1]) * (want[1] - th[1]) +
                     (got[2] - th[2]) * (want[2] - th[2])) /
                    (dist3d(got, th) * dist3d(want, th));
                CB_CHECK(cosang > 1.0 - 1e-8,
                         "frame %d, character %u, leg %d: the leg points %g rad off its target", f,
                         i, l, acos(fmin(cosang, 1.0)));
            }
#undef POS
        }
    }
    printf("# %d legs placed on reachable targets, %d beyond 0.98 of the reach\n", placed, soft);
    assert_true(placed > 150 && soft > 150);
    free(in_leg);
    walker_free(&a), walker_free(&b);
    free(with), free(without);
    cb_embedded_destroy(h.set);
}

/* ---- continuity --------------------------------------------------------------------------- */

/* The largest second difference over joints and frames of the model positions, for a walk
 * whose k follows k_of(frame); also the largest |offset along the direction| of a ball. */
static double run_pops(const humanoid *h, const char *doc, const float *ks, int frames,
                       double *max_along)
{
    walker w = walker_make(h, doc, 1, 1, 0);
    double *hist = calloc(3 * 3 * h->n, sizeof *hist);
    double worst = 0.0;
    for (int f = 0; f < frames; ++f) {
        set_params(&w, 1, ks[f], 0.0f, 1.4f);
        assert_int_equal(cb_crowd_update(w.crowd, DT), CB_OK);
        const float *m = cb_crowd_matrices(w.crowd, 0, 0);
        for (size_t j = 0; j < h->n; ++j) {
            double *hj = &hist[9 * j];
            memmove(hj, hj + 3, 6 * sizeof *hj);
            for (int a = 0; a < 3; ++a) {
                hj[6 + a] = m[16 * j + 12 + a];
            }
            if (f >= 2) {
                double d2[3] = {hj[6] - 2 * hj[3] + hj[0], hj[7] - 2 * hj[4] + hj[1],
                                hj[8] - 2 * hj[5] + hj[2]};
                worst = fmax(worst, sqrt(d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]));
            }
        }
        const float *hp = &m[16 * h->hip + 12];
        for (int foot = 0; foot < 2 && max_along != NULL; ++foot) {
            *max_along = fmax(*max_along, fabs((double)m[16 * h->ball[foot] + 14] - hp[2]));
        }
    }
    free(hist);
    walker_free(&w);
    return worst;
}

/* k ramps from 1 to 1.3 over 0.5 s, holds, and back. Per frame the ball's target moves by the
 * animation's own motion scaled by k plus dk x (offset along u); the ramp adds to its second
 * difference at most |d2k| x max|offset| + 2 |dk| x max|d offset| (d offset: the animation's
 * per-frame change), and the IK carries a target's second difference to the leg's joints
 * scaled by at most the ratio of the leg's length to the thigh-target distance, under 3 for
 * these reachable targets. The bound: the worst of the unwarped and fully warped walks plus 3x
 * the ramp's share. A jump of k breaks it. */
static void stride_no_pop(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    char *doc = walk_doc("walk_f", STEP);
    enum { FRAMES = 240 };
    float ramp[FRAMES], one[FRAMES], full[FRAMES], jump[FRAMES];
    const float top = 1.3f;
    const int len = 30;
    for (int f = 0; f < FRAMES; ++f) {
        float x = f < 60          ? 0.0f
                  : f < 60 + len  ? (float)(f - 60) / (float)len
                  : f < 150       ? 1.0f
                  : f < 150 + len ? 1.0f - (float)(f - 150) / (float)len
                                  : 0.0f;
        ramp[f] = 1.0f + (top - 1.0f) * x;
        one[f] = 1.0f, full[f] = top;
        jump[f] = f >= 60 && f < 150 ? top : 1.0f;
    }
    double along = 0.0;
    double p_one = run_pops(&h, doc, one, FRAMES, &along);
    double p_full = run_pops(&h, doc, full, FRAMES, NULL);
    double p_ramp = run_pops(&h, doc, ramp, FRAMES, NULL);
    double p_jump = run_pops(&h, doc, jump, FRAMES, NULL);
    double dk = (top - 1.0) / len;
    /* the walk's ball moves at most 1.4 m/s x 1.35 in the model: per frame */
    double doff = 1.4 * 1.35 * (double)DT * 1.5;
    double share = dk * top * along + 2.0 * dk * doff;
    double bound = fmax(p_one, p_full) + 3.0 * share;
    printf("# second differences: k = 1 %.4f m, k = %.1f %.4f, ramp %.4f, jump %.4f; bound %.4f "
           "(largest offset along %.3f m)\n",
           p_one, (double)top, p_full, p_ramp, p_jump, bound, along);
    CB_CHECK(p_ramp <= bound, "ramp pops %g m over the bound %g", p_ramp, bound);
    CB_CHECK(p_jump > bound, "a jump of k (%g m) should break the bound %g", p_jump, bound);
    free(doc);
    cb_embedded_destroy(h.set);
}

/* ---- the follower ------------------------------------------------------------------------- */

typedef struct gait {
    cb_embedded *set;
    cb_graph *graph;
    cb_crowd *crowd;
    cb_follow *follow;
    cb_follow_clip_feet feet[32];
    uint32_t slots, ball[2];
} gait;

static void gait_init(gait *g, bool stride, bool lock)
{
    memset(g, 0, sizeof *g);
    assert_int_equal(cb_embedded_create(NULL, &g->set, NULL), CB_OK);
    const cb_clip *clips[32];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(g->set, clips, 32);
    const cb_skeleton *sk = jd.skeleton;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json_file(CB_EXAMPLES_DIR "/locomotion_follow.json", &jd, &g->graph,
                                     &err) == CB_OK,
             "%s", err.message);
    g->slots = cb_graph_clip_count(g->graph);
    assert_true(g->slots <= 32);
    for (uint32_t s = 0; s < g->slots; ++s) {
        assert_true(cb_follow_clip_feet_init(&g->feet[s], cb_graph_clip(g->graph, s)));
    }
    const cb_graph *graphs[1] = {g->graph};
    cb_crowd_desc cd = {.skeleton = sk,
                        .capacity = 1,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = true};
    CB_CHECK(cb_crowd_create(&cd, &g->crowd, &err) == CB_OK, "%s", err.message);
    cb_follow_desc fd = {.crowd = g->crowd, .capacity = 1};
    fd.warp = (cb_follow_warp){.rate_param = "rate", .gait_speed_mps = 1.4f};
    if (stride) {
        fd.stride = (cb_follow_stride){.scale_param = "stride",
                                       .direction_param = {"stride_x", "stride_z"}};
    }
    if (lock) {
        fd.lock = (cb_follow_lock){.root_param = {"root_x", "root_y", "root_z", "root_yaw"},
                                   .weight_param = "lock",
                                   .locked_param = {"locked_l", "locked_r"},
                                   .failed_param = {"failed_l", "failed_r"}};
    }
    CB_CHECK(cb_follow_create(&fd, &g->follow, &err) == CB_OK, "%s", err.message);
    cb_character ch;
    assert_int_equal(cb_follow_add(g->follow, 0.25f, 0.0f, &ch), CB_OK);
    g->ball[0] = cb_test_joint(sk, "ball_l");
    g->ball[1] = cb_test_joint(sk, "ball_r");
}

static void gait_finish(gait *g)
{
    cb_follow_destroy(g->follow);
    cb_crowd_destroy(g->crowd);
    cb_graph_destroy(g->graph);
    cb_embedded_destroy(g->set);
}

static float param(const gait *g, const char *name)
{
    uint32_t p;
    assert_int_equal(cb_graph_find_param(g->graph, name, &p), CB_OK);
    return cb_crowd_param_column(g->crowd, 0, p)[0];
}

/* The metric of docs/trajectories.md for character 0: is the foot planted (the clips saying
 * it is down hold at least half the blend at their current times)? */
static bool planted(const gait *g, int foot)
{
    size_t stride = 0;
    const float *w = cb_crowd_weights(g->crowd, 0, &stride);
    double sum = 0.0;
    for (uint32_t s = 0; s < g->slots; ++s) {
        float t = cb_crowd_clip_times(g->crowd, 0, s)[0];
        if (g->feet[s].count[foot] != 0 && cb_follow_clip_feet_down(&g->feet[s], foot, t)) {
            sum += w[s * stride];
        }
    }
    return sum >= CB_FOLLOW_PLANT_WEIGHT;
}

/* Whether the leg reaches a world point (yaw 0): closer to the thigh than 0.99 of the
 * thigh-calf and calf-ball lengths of the output (the example's soften). */
static bool reachable(const gait *g, int foot, const float target[3])
{
    static const char *const names[2][2] = {{"thigh_l", "calf_l"}, {"thigh_r", "calf_r"}};
    const cb_skeleton *sk = cb_embedded_skeleton(g->set);
    uint32_t thigh = cb_test_joint(sk, names[foot][0]), calf = cb_test_joint(sk, names[foot][1]);
    const float *m = cb_crowd_matrices(g->crowd, 0, 0);
    const float *root = cb_follow_roots(g->follow)->position;
    double a[3], b[3], c[3], t[3] = {target[0], target[1], target[2]};
    for (int k = 0; k < 3; ++k) {
        a[k] = root[k] + m[16 * thigh + 12 + k];
        b[k] = root[k] + m[16 * calf + 12 + k];
        c[k] = root[k] + m[16 * g->ball[foot] + 12 + k];
    }
    return dist3d(a, t) < 0.99 * (dist3d(a, b) + dist3d(b, c));
}

/* Straight along +Z at `speed` for 6 s; the mean planted-foot skate (cm/s) after the first
 * second; checks the follower's closed forms every frame. */
static double walk_skate(gait *g, double speed, bool stride, bool lock, double *drift)
{
    double prev[2][3] = {{0}}, sum = 0.0, k = 1.0;
    bool was[2] = {false, false};
    long samples = 0;
    for (int f = 0; f < 360; ++f) {
        float pos[3] = {0.0f, 0.0f, (float)(speed * f * (double)DT)};
        float vel[3] = {0.0f, 0.0f, (float)speed};
        assert_int_equal(cb_follow_update(g->follow, pos, vel, 0, DT), CB_OK);
        float rate = param(g, "rate");
        double want_rate = fmin(fmax(speed / 1.4, 0.5), 1.35);
        CB_CHECK(fabs(rate - want_rate) < 1e-6, "rate %g, want %g", (double)rate, want_rate);
        /* k moves towards its target by at most 0.5 per second (the defaults) */
        double target = stride ? fmin(fmax(speed / (1.4 * want_rate), 1.0), 1.3) : 1.0;
        k = fmin(target, k + 0.5 * (double)DT);
        CB_CHECK(fabs(param(g, "stride") - k) < 1e-5, "stride %g, want %g",
                 (double)param(g, "stride"), k);
        double want_vy = speed / (want_rate * (double)param(g, "stride"));
        CB_CHECK(fabs(param(g, "vy") - want_vy) < 1e-5, "vy %g, want %g", (double)param(g, "vy"),
                 want_vy);
        if (stride) {
            CB_CHECK(fabs(param(g, "stride_z") - speed) < 1e-6 && param(g, "stride_x") == 0.0f,
                     "direction (%g, %g)", (double)param(g, "stride_x"),
                     (double)param(g, "stride_z"));
        }
        assert_int_equal(cb_crowd_update(g->crowd, DT), CB_OK);
        const float *m = cb_crowd_matrices(g->crowd, 0, 0);
        const cb_follow_root *root = cb_follow_roots(g->follow);
        for (int foot = 0; foot < 2; ++foot) {
            const float *t = &m[16 * (size_t)g->ball[foot] + 12];
            double p[3] = {root->position[0] + t[0], t[1], root->position[2] + t[2]}; /* yaw 0 */
            bool down = planted(g, foot);
            if (f >= 60 && down && was[foot]) {
                sum += hypot(p[0] - prev[foot][0], p[2] - prev[foot][2]) / (double)DT * 100.0;
                samples++;
            }
            const cb_follow_foot *ft = lock ? &cb_follow_feet(g->follow)[foot] : NULL;
            if (ft != NULL && ft->locked && drift != NULL && reachable(g, foot, ft->lock)) {
                double l[3] = {ft->lock[0], ft->lock[1], ft->lock[2]};
                *drift = fmax(*drift, dist3d(p, l));
            }
            memcpy(prev[foot], p, sizeof p);
            was[foot] = down;
        }
    }
    assert_true(samples > 100);
    return sum / (double)samples;
}

static void stride_follower_lowers_the_skate(void **state)
{
    (void)state;
    const double speeds[] = {1.6, 2.2, 2.4};
    for (size_t s = 0; s < sizeof speeds / sizeof *speeds; ++s) {
        gait a, b;
        gait_init(&a, false, false);
        gait_init(&b, true, false);
        double without = walk_skate(&a, speeds[s], false, false, NULL);
        double with = walk_skate(&b, speeds[s], true, false, NULL);
        cb_follow_stats st = cb_follow_query_stats(b.follow);
        printf("# %.1f m/s: planted-foot skate %.2f cm/s without stride warping, %.2f with (%llu "
               "frames warped)\n",
               speeds[s], without, with, (unsigned long long)st.stride_warped);
        if (speeds[s] <= 1.4 * 1.35) {
            /* within the bounds k is 1 and the step is skipped: the same skate exactly */
            assert_true(st.stride_warped == 0);
            CB_CHECK(with == without, "%g vs %g", with, without);
        } else {
            assert_true(st.stride_warped > 0);
            CB_CHECK(with < without, "%.1f m/s: skate %g with stride warping, %g without",
                     speeds[s], with, without);
        }
        gait_finish(&a), gait_finish(&b);
    }
}

/* With foot locking too: the lock decides a planted foot (held within 1 mm of its world point
 * where reachable, reported otherwise), the stride warp where the swing foot lands. */
static void stride_with_foot_locking(void **state)
{
    (void)state;
    gait a, b;
    gait_init(&a, false, true);
    gait_init(&b, true, true);
    double drift_a = 0.0, drift_b = 0.0;
    double without = walk_skate(&a, 2.2, false, true, &drift_a);
    double with = walk_skate(&b, 2.2, true, true, &drift_b);
    cb_follow_stats sa = cb_follow_query_stats(a.follow), sb = cb_follow_query_stats(b.follow);
    printf("# 2.2 m/s with foot locking: skate %.2f cm/s, %llu of %llu plants failed without "
           "stride warping; %.2f cm/s, %llu of %llu with; held locks drift %.2g / %.2g m\n",
           without, (unsigned long long)sa.reach_failures, (unsigned long long)sa.locks, with,
           (unsigned long long)sb.reach_failures, (unsigned long long)sb.locks, drift_a, drift_b);
    assert_true(sb.locks >= 8);
    CB_CHECK(drift_b < 1e-3, "a held lock drifted %g m", drift_b);
    CB_CHECK(with <= without, "skate %g with stride warping, %g without", with, without);
    gait_finish(&a), gait_finish(&b);
}

static void stride_follower_validates(void **state)
{
    (void)state;
    gait g;
    gait_init(&g, false, false);
    cb_follow_desc fd = {.crowd = g.crowd, .kind = 0, .capacity = 1};
    fd.stride = (cb_follow_stride){.scale_param = "stride"};
    cb_crowd *crowd = NULL;
    const cb_graph *graphs[1] = {g.graph};
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(g.set),
                        .capacity = 1,
                        .graphs = graphs,
                        .graph_count = 1,
                        .keep_weights = true};
    assert_int_equal(cb_crowd_create(&cd, &crowd, NULL), CB_OK);
    fd.crowd = crowd;
    struct {
        cb_result want;
        const char *needle;
    } cases[] = {{CB_ERR_INVALID_ARGUMENT, "needs playback-rate"},
                 {CB_ERR_INVALID_ARGUMENT, "max_scale"},
                 {CB_ERR_INVALID_ARGUMENT, "rate_per_s"},
                 {CB_ERR_NULL_ARGUMENT, "both direction"},
                 {CB_ERR_NOT_FOUND, "nope"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        cb_follow_desc d = fd;
        if (c > 0) {
            d.warp = (cb_follow_warp){.rate_param = "rate", .gait_speed_mps = 1.4f};
        }
        d.stride.max_scale = c == 1 ? 2.5f : 0.0f;
        d.stride.rate_per_s = c == 2 ? -1.0f : 0.0f;
        d.stride.direction_param[0] = c == 3 ? "stride_x" : NULL;
        d.stride.scale_param = c == 4 ? "nope" : "stride";
        cb_follow *f = NULL;
        cb_error err = {0};
        cb_result r = cb_follow_create(&d, &f, &err);
        CB_CHECK(r == cases[c].want && strstr(err.message, cases[c].needle) != NULL,
                 "case %zu: %s '%s'", c, cb_result_str(r), err.message);
        assert_null(f);
    }
    assert_true(cb_follow_query_desc(NULL).stride.max_scale == CB_FOLLOW_DEFAULT_STRIDE_MAX);
    assert_true(cb_follow_query_desc(NULL).stride.rate_per_s == CB_FOLLOW_DEFAULT_STRIDE_RATE);
    cb_crowd_destroy(crowd);
    gait_finish(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stride_job_closed_form),
        cmocka_unit_test(stride_job_skips_bit_for_bit),
        cmocka_unit_test(stride_job_is_its_legs_two_bone_jobs),
        cmocka_unit_test(stride_job_beyond_reach),
        cmocka_unit_test(stride_job_validates),
        cmocka_unit_test(stride_graph_json),
        cmocka_unit_test(stride_step_off_is_bit_identical),
        cmocka_unit_test(stride_threads_and_batches),
        cmocka_unit_test(stride_chunk_is_each_character_alone),
        cmocka_unit_test(stride_crowd_closed_form),
        cmocka_unit_test(stride_no_pop),
        cmocka_unit_test(stride_follower_lowers_the_skate),
        cmocka_unit_test(stride_with_foot_locking),
        cmocka_unit_test(stride_follower_validates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
