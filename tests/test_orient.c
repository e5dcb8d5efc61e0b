/* orient: orientation warping (issue 12): the lower body turned towards the velocity, the
 * upper body keeping the heading.
 *  - the job (cb_ik_orient_job) against its closed form, in double after local-to-model: the
 *    hip's model rotation is R_y(t) times the animation's, t = weight x clamp(angle, +-limit),
 *    every leg joint is the animation's turned by t about the hip's vertical axis, the joints
 *    above the spine keep their orientation (shares summing to 1) or turn by t (1 - sum);
 *    joints outside the hip's subtree keep their bits; every validation error;
 *  - the graph step in JSON: its keys, and bad keys and limits refused with clear messages;
 *  - the follower (cb_follow_desc.orient) on the example graph locomotion_follow: with the
 *    heading held at 0 and the velocity at angle a, the angle written follows the rate limit's
 *    closed form and settles at clamp(a, +-limit); the blend space is then asked for the
 *    forward walk (within the limit) or the rest of the angle (beyond); the pelvis's model
 *    rotation is R_y(w) times that of a character walking straight at the same phase, and its
 *    chest and head keep that character's orientation (they face the heading);
 *  - no pop: when a steps from 0 to 60 degrees and back, every joint's per-frame movement
 *    stays within what a turn limited to rate x dt allows (a bound from the pose's geometry),
 *    and the same step with an unlimited rate breaks that bound (the check can fail). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"
#include "test_util.h"

static const double DEG = 3.14159265358979323846 / 180.0;
static const float DT = 1.0f / 60.0f;

typedef struct humanoid {
    cb_embedded *set;
    const cb_skeleton *s;
    size_t n;
    const int32_t *parents;
    uint32_t hip, spine[3], head;
} humanoid;

static humanoid humanoid_make(void)
{
    humanoid h = {0};
    assert_int_equal(cb_embedded_create(NULL, &h.set, NULL), CB_OK);
    h.s = cb_embedded_skeleton(h.set);
    h.n = cb_skeleton_joint_count(h.s);
    h.parents = cb_skeleton_parents(h.s);
    h.hip = cb_test_joint(h.s, "pelvis");
    h.spine[0] = cb_test_joint(h.s, "spine_01");
    h.spine[1] = cb_test_joint(h.s, "spine_02");
    h.spine[2] = cb_test_joint(h.s, "spine_03");
    h.head = cb_test_joint(h.s, "head");
    return h;
}

/* Is joint j in the subtree of `top` (or top itself)? */
static bool below(const humanoid *h, uint32_t j, uint32_t top)
{
    for (int32_t k = (int32_t)j; k >= 0; k = h->parents[k]) {
        if ((uint32_t)k == top) {
            return true;
        }
    }
    return false;
}

/* The pose of clip `name` at normalized time t (the rest pose for NULL). */
static void clip_pose(const humanoid *h, const char *name, float t, cb_xform_group *pose)
{
    if (name == NULL) {
        cb_xform_group_cspan rest = cb_skeleton_rest_pose(h->s);
        memcpy(pose, rest.ptr, cb_skeleton_pose_bytes(h->s));
        return;
    }
    cb_test_clip_pose(h->s, cb_embedded_find_clip(h->set, name), t, pose);
}

/* R_y(t) * a's rotation part, against b's rotation part: the largest element difference. */
static double turned_rotation_error(const dref_mat *a, double t, const dref_mat *b)
{
    double c = cos(t), s = sin(t), worst = 0.0;
    for (int col = 0; col < 3; ++col) {
        const double *v = a->m[col];
        double r[3] = {c * v[0] + s * v[2], v[1], -s * v[0] + c * v[2]};
        for (int k = 0; k < 3; ++k) {
            worst = fmax(worst, fabs(r[k] - b->m[col][k]));
        }
    }
    return worst;
}

/* ---- the job ------------------------------------------------------------------------------ */

static void orient_job_closed_form(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_xform_group *pose = cb_test_pose_alloc(h.s, false), *out = cb_test_pose_alloc(h.s, false);
    dref_mat *m0 = calloc(h.n, sizeof *m0), *m1 = calloc(h.n, sizeof *m1);
    const char *clips[3] = {NULL, "walk_f", "walk_fl"};
    const double angles_deg[] = {-150, -75, -60, -30, 0, 12.5, 45, 60, 89, 179};
    const float limit = (float)(60 * DEG);
    /* shares summing to 1 (the upper body keeps its orientation) and to 0.5 */
    const float shares[2][3] = {{0.2f, 0.3f, 0.5f}, {0.1f, 0.1f, 0.3f}};
    int checked = 0;
    for (int c = 0; c < 3; ++c) {
        clip_pose(&h, clips[c], 0.37f, pose);
        dref_model_of_pose(h.s, pose, m0);
        for (size_t a = 0; a < sizeof angles_deg / sizeof *angles_deg; ++a) {
            for (int sh = 0; sh < 2; ++sh) {
                for (int wi = 0; wi < 2; ++wi) {
                    float weight = wi == 0 ? 1.0f : 0.5f;
                    cb_ik_aim_joint spine[3];
                    double sum = 0.0;
                    for (int k = 0; k < 3; ++k) {
                        spine[k] = (cb_ik_aim_joint){h.spine[k], shares[sh][k]};
                        sum += shares[sh][k];
                    }
                    memcpy(out, pose, cb_skeleton_pose_bytes(h.s));
                    cb_ik_orient_result res;
                    cb_ik_orient_job job = {.skeleton = h.s,
                                            .pose = {out, cb_skeleton_group_count(h.s)},
                                            .out = {out, cb_skeleton_group_count(h.s)},
                                            .hip_joint = h.hip,
                                            .spine = {spine, 3},
                                            .angle = (float)(angles_deg[a] * DEG),
                                            .angle_limit = limit,
                                            .weight = weight,
                                            .result = &res};
                    cb_error err = {0};
                    CB_CHECK(cb_ik_orient_job_run(&job, &err) == CB_OK, "%s", err.message);
                    double clamped = fmax(-60.0, fmin(60.0, angles_deg[a])) * DEG;
                    double t = weight * clamped;
                    CB_CHECK(fabs(res.angle - t) < 1e-6, "angle %g: applied %g, want %g",
                             angles_deg[a], (double)res.angle, t);
                    assert_true(res.limited == (fabs(angles_deg[a]) > 60.0));
                    if (angles_deg[a] == 0.0) {
                        /* no turn: the pose keeps its bits */
                        assert_memory_equal(out, pose, cb_skeleton_pose_bytes(h.s));
                    }
                    dref_model_of_pose(h.s, out, m1);
                    const double *hp = m0[h.hip].m[3];
                    for (uint32_t j = 0; j < h.n; ++j) {
                        if (!below(&h, j, h.hip)) {
                            assert_memory_equal(&m0[j], &m1[j], sizeof m0[j]);
                            continue;
                        }
                        double err_r;
                        if (!below(&h, j, h.spine[0])) {
                            /* hip and legs: turned rigidly about the hip's vertical axis */
                            err_r = turned_rotation_error(&m0[j], t, &m1[j]);
                            const double *p = m0[j].m[3], *q = m1[j].m[3];
                            double d[3] = {p[0] - hp[0], p[1] - hp[1], p[2] - hp[2]};
                            double want[3] = {hp[0] + cos(t) * d[0] + sin(t) * d[2], p[1],
                                              hp[2] - sin(t) * d[0] + cos(t) * d[2]};
                            for (int k = 0; k < 3; ++k) {
                                CB_CHECK(fabs(q[k] - want[k]) < 2e-6,
                                         "joint %u, angle %g: position[%d] %g, want %g", j,
                                         angles_deg[a], k, q[k], want[k]);
                            }
                        } else if (below(&h, j, h.spine[2])) {
                            /* above the spine: turned by t (1 - sum of the shares) */
                            err_r = turned_rotation_error(&m0[j], t * (1.0 - sum), &m1[j]);
                        } else {
                            continue; /* between: each spine joint by its partial sum */
                        }
                        CB_CHECK(err_r < 2e-6, "joint %u, angle %g, shares %d: rotation off by %g",
                                 j, angles_deg[a], sh, err_r);
                        checked++;
                    }
                }
            }
        }
    }
    assert_true(checked > 1000);
    free(m0), free(m1), free(pose), free(out);
    cb_embedded_destroy(h.set);
}

static void expect_job_error(const cb_ik_orient_job *job, cb_result want, const char *needle)
{
    cb_error err = {0};
    cb_result r = cb_ik_orient_job_run(job, &err);
    CB_CHECK(r == want, "want %s, got %s (%s)", cb_result_str(want), cb_result_str(r), err.message);
    CB_CHECK(strstr(err.message, needle) != NULL, "message '%s' lacks '%s'", err.message, needle);
}

static void orient_job_validates(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_xform_group *pose = cb_test_pose_alloc(h.s, false);
    clip_pose(&h, "walk_f", 0.1f, pose);
    cb_xform_group_span span = {pose, cb_skeleton_group_count(h.s)};
    cb_ik_aim_joint spine[3] = {{h.spine[0], 0.3f}, {h.spine[1], 0.3f}, {h.spine[2], 0.4f}};
    const cb_ik_orient_job ok = {.skeleton = h.s,
                                 .pose = {pose, span.count},
                                 .out = span,
                                 .hip_joint = h.hip,
                                 .spine = {spine, 3},
                                 .angle = 0.5f,
                                 .weight = 1.0f};
    assert_int_equal(cb_ik_orient_job_validate(&ok, NULL), CB_OK);
    cb_ik_orient_job j = ok;
    j.angle = NAN;
    expect_job_error(&j, CB_ERR_NOT_FINITE, "angle");
    j = ok, j.angle_limit = 4.0f;
    expect_job_error(&j, CB_ERR_INVALID_ARGUMENT, "angle_limit");
    j = ok, j.weight = 1.5f;
    expect_job_error(&j, CB_ERR_INVALID_ARGUMENT, "weight");
    j = ok, j.hip_joint = (uint32_t)h.n;
    expect_job_error(&j, CB_ERR_INVALID_ARGUMENT, "hip_joint");
    cb_ik_aim_joint bad[3] = {{h.spine[1], 0.3f}, {h.spine[0], 0.3f}, {h.spine[2], 0.4f}};
    j = ok, j.spine = (cb_ik_aim_joint_cspan){bad, 3};
    expect_job_error(&j, CB_ERR_HIERARCHY, "spine[1]");
    cb_ik_aim_joint heavy[3] = {{h.spine[0], 0.5f}, {h.spine[1], 0.5f}, {h.spine[2], 0.4f}};
    j = ok, j.spine = (cb_ik_aim_joint_cspan){heavy, 3};
    expect_job_error(&j, CB_ERR_INVALID_ARGUMENT, "sum to 1.4");
    cb_ik_aim_joint neg[1] = {{h.spine[0], -0.1f}};
    j = ok, j.spine = (cb_ik_aim_joint_cspan){neg, 1};
    expect_job_error(&j, CB_ERR_INVALID_ARGUMENT, "outside [0, 1]");
    j = ok, j.spine = (cb_ik_aim_joint_cspan){NULL, 2};
    expect_job_error(&j, CB_ERR_NULL_ARGUMENT, "spine");
    j = ok, j.spine = (cb_ik_aim_joint_cspan){spine, CB_IK_AIM_MAX_JOINTS + 1};
    expect_job_error(&j, CB_ERR_TOO_MANY, "spine joints");
    j = ok, j.out = (cb_xform_group_span){NULL, 0};
    expect_job_error(&j, CB_ERR_INVALID_ARGUMENT, "no output");
    /* a NaN in the pose of the chain: refused at run, nothing written */
    cb_xform_group *copy = cb_test_pose_alloc(h.s, false);
    memcpy(copy, pose, cb_skeleton_pose_bytes(h.s));
    cb_xform_group *before = cb_test_pose_alloc(h.s, false);
    {
        const size_t wd = cb_simd_width(); /* joint groups: 10 floats (t, q, s) x W lanes */
        float *g = (float *)copy + (h.spine[1] / wd) * 10 * wd;
        g[4 * wd + h.spine[1] % wd] = NAN; /* the rotation's y */
    }
    memcpy(before, copy, cb_skeleton_pose_bytes(h.s));
    j = ok, j.pose.ptr = copy, j.out.ptr = copy;
    expect_job_error(&j, CB_ERR_NOT_FINITE, "not finite");
    assert_memory_equal(copy, before, cb_skeleton_pose_bytes(h.s));
    free(copy), free(before), free(pose);
    cb_embedded_destroy(h.set);
}

/* ---- the graph step in JSON ---------------------------------------------------------------- */

typedef struct scene {
    humanoid h;
    cb_graph *graph;
    cb_crowd *crowd;
    cb_follow *follow;
} scene;

static cb_result load_graph(const humanoid *h, const char *text, cb_graph **out, cb_error *err)
{
    const cb_clip *clips[64];
    cb_graph_json_desc jd = cb_test_embedded_json_desc(h->set, clips, 64);
    return text != NULL
               ? cb_graph_load_json(text, strlen(text), &jd, out, err)
               : cb_graph_load_json_file(CB_EXAMPLES_DIR "/locomotion_follow.json", &jd, out, err);
}

/* A graph playing walk_f alone, with the step `step` (JSON) after it. */
static char *walk_doc(const char *step)
{
    static const char head[] =
        "{\"parameters\": [{\"name\": \"vx\"}, {\"name\": \"vy\"}, {\"name\": \"warp\"}, "
        "{\"name\": \"on\", \"type\": \"bool\"}], \"root\": \"w\", \"nodes\": {\"w\": {\"type\": "
        "\"clip\", \"clip\": \"walk_f\"}}, \"post_process\": [";
    size_t n = sizeof head + strlen(step) + 4;
    char *doc = malloc(n);
    snprintf(doc, n, "%s%s]}", head, step);
    return doc;
}

static void orient_graph_json(void **state)
{
    (void)state;
    humanoid h = humanoid_make();
    cb_graph *g = NULL;
    cb_error err = {0};
    /* every key */
    char *doc = walk_doc("{\"type\": \"orientation_warp\", \"hip\": \"pelvis\", \"spine\": "
                         "[\"spine_01\", \"spine_02\", \"spine_03\"], \"spine_weights\": [0.2, "
                         "0.3, 0.5], \"angle\": \"warp\", \"weight\": \"vx\", \"limit_deg\": 75}");
    CB_CHECK(load_graph(&h, doc, &g, &err) == CB_OK, "%s", err.message);
    cb_graph_destroy(g), g = NULL, free(doc);
    /* defaults: the pelvis, no spine (the whole body turns), 90 degrees */
    doc = walk_doc("{\"type\": \"orientation_warp\", \"angle\": \"warp\"}");
    CB_CHECK(load_graph(&h, doc, &g, &err) == CB_OK, "%s", err.message);
    cb_graph_destroy(g), g = NULL, free(doc);
    cb_graph_orientation_warp_desc d = cb_graph_query_orientation_warp_desc(NULL);
    assert_string_equal(d.hip_joint, "pelvis");
    assert_true(d.limit_rad == CB_IK_ORIENT_DEFAULT_ANGLE_LIMIT);
    assert_null(d.spine_weights);
    struct {
        const char *step;
        cb_result want;
        const char *needle;
    } bad[] = {
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"limit\": 45}", CB_ERR_PARSE,
         "limit"},
        {"{\"type\": \"orientation_warp\"}", CB_ERR_PARSE, "angle"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"limit_deg\": 200}",
         CB_ERR_INVALID_ARGUMENT, "limit_rad"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"limit_deg\": -10}",
         CB_ERR_INVALID_ARGUMENT, "limit_rad"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"nope\"}", CB_ERR_NOT_FOUND, "nope"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"on\"}", CB_ERR_MISMATCH, "on"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"hip\": \"tail\"}",
         CB_ERR_NOT_FOUND, "tail"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"spine\": [\"spine_02\", "
         "\"spine_01\"]}",
         CB_ERR_HIERARCHY, "spine_01"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"hip\": \"spine_01\", \"spine\": "
         "[\"thigh_l\"]}",
         CB_ERR_HIERARCHY, "thigh_l"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"spine\": [\"spine_01\"], "
         "\"spine_weights\": [0.5, 0.5]}",
         CB_ERR_PARSE, "one number per joint"},
        {"{\"type\": \"orientation_warp\", \"angle\": \"warp\", \"spine\": [\"spine_01\", "
         "\"spine_02\"], \"spine_weights\": [0.7, 0.7]}",
         CB_ERR_INVALID_ARGUMENT, "sum to 1.4"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; ++k) {
        doc = walk_doc(bad[k].step);
        char label[32];
        snprintf(label, sizeof label, "case %zu", k);
        cb_test_expect_embedded_json_error(h.set, doc, bad[k].want, bad[k].needle, label);
        free(doc);
    }
    cb_embedded_destroy(h.set);
}

/* ---- the follower --------------------------------------------------------------------------- */

/* A crowd of n on `doc` (NULL: the example graph locomotion_follow) and a follower whose
 * heading barely turns (max_turn_rps 1e-6: the heading stays at 0 while the velocity points
 * elsewhere), with orientation warping at `max_deg` and `rate`. */
static void scene_init(scene *sc, const char *doc, uint32_t n, double max_deg, float rate)
{
    memset(sc, 0, sizeof *sc);
    sc->h = humanoid_make();
    cb_error err = {0};
    CB_CHECK(load_graph(&sc->h, doc, &sc->graph, &err) == CB_OK, "%s", err.message);
    const cb_graph *graphs[1] = {sc->graph};
    cb_crowd_desc cd = {
        .skeleton = sc->h.s, .capacity = n, .graphs = graphs, .graph_count = 1, .thread_count = 1};
    CB_CHECK(cb_crowd_create(&cd, &sc->crowd, &err) == CB_OK, "%s", err.message);
    cb_follow_desc fd = {
        .crowd = sc->crowd,
        .capacity = n,
        .max_turn_rps = 1e-6f,
        .orient = {.angle_param = "warp",
                   .max_angle_rad = (float)(max_deg * DEG),
                   .rate_rps = rate},
    };
    CB_CHECK(cb_follow_create(&fd, &sc->follow, &err) == CB_OK, "%s", err.message);
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_follow_add(sc->follow, 0.25f, 0.0f, &ch), CB_OK);
    }
}

static void scene_finish(scene *sc)
{
    cb_follow_destroy(sc->follow);
    cb_crowd_destroy(sc->crowd);
    cb_graph_destroy(sc->graph);
    cb_embedded_destroy(sc->h.set);
}

static float *column(const scene *sc, const char *name)
{
    uint32_t p = 0;
    CB_CHECK(cb_crowd_find_param(sc->crowd, 0, name, &p) == CB_OK, "no parameter %s", name);
    return cb_crowd_param_column(sc->crowd, 0, p);
}

/* Joint j of character i: its model matrix in double. */
static dref_mat model_joint(const scene *sc, uint32_t i, uint32_t j)
{
    const float *m = &cb_crowd_matrices(sc->crowd, 0, i)[16 * (size_t)j];
    dref_mat d;
    for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r) {
            d.m[c][r] = m[4 * c + r];
        }
    }
    return d;
}

static double wrap(double a)
{
    return remainder(a, 2.0 * 3.14159265358979323846);
}

/* Characters at angle a from a heading held at 0. A second crowd gets the same follower
 * inputs with its angle parameter zeroed before each crowd update: the same blend and clip
 * times, unwarped, the reference the warped pose is compared with. */
static void orient_follow_closed_form(void **state)
{
    (void)state;
    const double a_deg[] = {0.0, 30.0, -40.0, 50.0, 70.0, -120.0};
    const uint32_t n = 6;
    const double max_deg = 50.0, speed = 1.4;
    const float rate = 3.0f;
    scene sc, ref;
    scene_init(&sc, NULL, n, max_deg, rate);
    scene_init(&ref, NULL, n, max_deg, rate);
    float pos[6][3] = {{0}}, vel[6][3];
    for (uint32_t i = 0; i < n; ++i) {
        vel[i][0] = (float)(speed * sin(a_deg[i] * DEG));
        vel[i][1] = 0.0f;
        vel[i][2] = (float)(speed * cos(a_deg[i] * DEG));
    }
    double w[6] = {0};
    const float *angle = column(&sc, "warp"), *vx = column(&sc, "vx"), *vy = column(&sc, "vy");
    float *ref_angle = column(&ref, "warp");
    int compared = 0;
    for (int k = 0; k < 120; ++k) {
        assert_int_equal(cb_follow_update(sc.follow, pos[0], vel[0], 0, DT), CB_OK);
        assert_int_equal(cb_follow_update(ref.follow, pos[0], vel[0], 0, DT), CB_OK);
        memset(ref_angle, 0, n * sizeof *ref_angle);
        assert_int_equal(cb_crowd_update(sc.crowd, DT), CB_OK);
        assert_int_equal(cb_crowd_update(ref.crowd, DT), CB_OK);
        const cb_follow_root *roots = cb_follow_roots(sc.follow);
        for (uint32_t i = 0; i < n; ++i) {
            const double yaw = roots[i].yaw;
            CB_CHECK(fabs(yaw) < 1e-5, "the heading moved: %g", yaw);
            /* the rate limit's closed form towards clamp(a, +-max) */
            double target = fmax(-max_deg, fmin(max_deg, wrap(a_deg[i] * DEG - yaw) / DEG)) * DEG;
            w[i] += fmax(-rate * (double)DT, fmin(rate * (double)DT, target - w[i]));
            CB_CHECK(fabs(angle[i] - w[i]) < 2e-6 && roots[i].warp_rad == angle[i],
                     "update %d, a %g: angle %g, want %g", k, a_deg[i], (double)angle[i], w[i]);
            /* the velocity in the lower body's frame (a positive angle turns +Z towards +X, the
             * character's left, and vx is to the left: +sin) */
            double d = a_deg[i] * DEG - yaw - w[i];
            CB_CHECK(fabs(vx[i] - speed * sin(d)) < 2e-5 && fabs(vy[i] - speed * cos(d)) < 2e-5,
                     "update %d, a %g: velocity (%g, %g), want (%g, %g)", k, a_deg[i],
                     (double)vx[i], (double)vy[i], speed * sin(d), speed * cos(d));
            /* the pelvis turned by w from the unwarped pose, the chest and head not at all */
            dref_mat p0 = model_joint(&ref, i, sc.h.hip), p1 = model_joint(&sc, i, sc.h.hip);
            double e = turned_rotation_error(&p0, (double)angle[i], &p1);
            CB_CHECK(e < 1e-5, "update %d, a %g: the pelvis is off R_y(w) x the unwarped by %g", k,
                     a_deg[i], e);
            double f0 = atan2(p0.m[2][0], p0.m[2][2]), f1 = atan2(p1.m[2][0], p1.m[2][2]);
            CB_CHECK(fabs(wrap(f1 - f0 - angle[i])) < 1e-5, "a %g: pelvis yaw %g, want %g + %g",
                     a_deg[i], f1, f0, (double)angle[i]);
            const uint32_t upper[2] = {sc.h.spine[2], sc.h.head};
            for (int u = 0; u < 2; ++u) {
                dref_mat c0 = model_joint(&ref, i, upper[u]), c1 = model_joint(&sc, i, upper[u]);
                e = turned_rotation_error(&c0, 0.0, &c1);
                CB_CHECK(e < 1e-5, "a %g: joint %u turned away from the heading by %g", a_deg[i],
                         upper[u], e);
            }
            compared++;
        }
        if (k < 60) {
            continue; /* settled after max / rate = 0.29 s */
        }
        for (uint32_t i = 0; i < n; ++i) {
            /* settled: clamp(a, +-max); within the limit the blend space is asked for the
             * forward walk, beyond it for the rest of the angle */
            double yaw = cb_follow_roots(sc.follow)[i].yaw; /* 0 but for the limit's 1e-6 rad/s */
            double want = fmax(-max_deg, fmin(max_deg, a_deg[i] - yaw / DEG)) * DEG;
            CB_CHECK(fabs(angle[i] - want) < 2e-6, "a %g: settled at %g, want %g", a_deg[i],
                     (double)angle[i], want);
            double rest = a_deg[i] * DEG - yaw - want;
            CB_CHECK(fabs(vx[i] - speed * sin(rest)) < 2e-5 &&
                         fabs(vy[i] - speed * cos(rest)) < 2e-5,
                     "a %g: settled velocity (%g, %g)", a_deg[i], (double)vx[i], (double)vy[i]);
        }
    }
    assert_int_equal(compared, 120 * 6);
    scene_finish(&sc);
    scene_finish(&ref);
}

/* The largest per-frame movement of each joint beyond what a warp limited to `rate` allows,
 * over a run where the velocity steps from 0 to 60 degrees at frame 30 and back at frame 90.
 * Character 1 walks straight: the same clip at the same time, unwarped. For joint j of the
 * warped character, with p the unwarped model positions, c_k the pivots above j (the hip and
 * the spine joints whose subtree holds j, with shares s_k, s_hip = 1) and r the horizontal
 * distance of j from the hip's axis plus 4 x the pivots' horizontal offsets from it (a bound
 * on every pivot-to-joint horizontal distance after the turns):
 *   |p'_j(n+1) - p'_j(n)| <= |p_j(n+1) - p_j(n)| + sum_k 2^(k+1) |c_k(n+1) - c_k(n)|
 *                            + (sum_k s_k) r x rate x dt
 * (a turn about a moving pivot moves a point by at most its own motion plus twice the
 * pivot's, nested once per pivot; a turn by dw moves it by at most r dw). Returns the worst
 * excess (m; <= 0 when the bound holds) and the frames where the warp moved. */
static double pop_excess(float rate, float bound_rate, int *moving_frames)
{
    scene sc;
    char *doc = walk_doc("{\"type\": \"orientation_warp\", \"hip\": \"pelvis\", \"spine\": "
                         "[\"spine_01\", \"spine_02\", \"spine_03\"], \"angle\": \"warp\", "
                         "\"limit_deg\": 90}");
    scene_init(&sc, doc, 2, 60.0, rate);
    free(doc);
    const humanoid *h = &sc.h;
    const uint32_t pivots[4] = {h->hip, h->spine[0], h->spine[1], h->spine[2]};
    const double share[4] = {1.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0};
    double *prev_w = calloc(h->n * 3, sizeof(double)), *prev_r = calloc(h->n * 3, sizeof(double));
    double worst = -1e9;
    float prev_angle = 0.0f;
    *moving_frames = 0;
    const double speed = 1.4;
    for (int k = 0; k < 150; ++k) {
        double a = k >= 30 && k < 90 ? 60.0 * DEG : 0.0;
        float pos[2][3] = {{0}};
        float vel[2][3] = {{(float)(speed * sin(a)), 0.0f, (float)(speed * cos(a))},
                           {0.0f, 0.0f, (float)speed}};
        assert_int_equal(cb_follow_update(sc.follow, pos[0], vel[0], 0, DT), CB_OK);
        assert_int_equal(cb_crowd_update(sc.crowd, DT), CB_OK);
        float angle = column(&sc, "warp")[0];
        *moving_frames += fabsf(angle - prev_angle) > 1e-4f; /* not the heading's creep */
        prev_angle = angle;
        dref_mat hip = model_joint(&sc, 1, h->hip);
        double spread = 0.0;
        for (int p = 1; p < 4; ++p) {
            dref_mat c = model_joint(&sc, 1, pivots[p]);
            spread += hypot(c.m[3][0] - hip.m[3][0], c.m[3][2] - hip.m[3][2]);
        }
        for (uint32_t j = 0; j < h->n; ++j) {
            dref_mat mw = model_joint(&sc, 0, j), mr = model_joint(&sc, 1, j);
            double *pw = &prev_w[3 * j], *pr = &prev_r[3 * j];
            if (k > 0 && below(h, j, h->hip)) {
                double own = sqrt(pow(mr.m[3][0] - pr[0], 2) + pow(mr.m[3][1] - pr[1], 2) +
                                  pow(mr.m[3][2] - pr[2], 2));
                double bound = own, shares = 0.0;
                for (int p = 0; p < 4; ++p) {
                    if (!below(h, j, pivots[p])) {
                        continue;
                    }
                    const double *c0 = &prev_r[3 * pivots[p]];
                    dref_mat c1 = model_joint(&sc, 1, pivots[p]);
                    bound += (double)(2 << p) *
                             sqrt(pow(c1.m[3][0] - c0[0], 2) + pow(c1.m[3][1] - c0[1], 2) +
                                  pow(c1.m[3][2] - c0[2], 2));
                    shares += share[p];
                }
                double r = hypot(mr.m[3][0] - hip.m[3][0], mr.m[3][2] - hip.m[3][2]) + 4 * spread;
                bound += shares * r * (double)bound_rate * (double)DT + 1e-6;
                double moved = sqrt(pow(mw.m[3][0] - pw[0], 2) + pow(mw.m[3][1] - pw[1], 2) +
                                    pow(mw.m[3][2] - pw[2], 2));
                worst = fmax(worst, moved - bound);
            }
            for (int c = 0; c < 3; ++c) {
                pw[c] = mw.m[3][c];
                pr[c] = mr.m[3][c];
            }
        }
    }
    free(prev_w), free(prev_r);
    scene_finish(&sc);
    return worst;
}

static void orient_no_pop(void **state)
{
    (void)state;
    int moving = 0;
    /* the default rate: engaging (0 -> 60 degrees) and releasing take 0.35 s each */
    double excess =
        pop_excess(CB_FOLLOW_DEFAULT_ORIENT_RATE, CB_FOLLOW_DEFAULT_ORIENT_RATE, &moving);
    CB_CHECK(excess <= 0.0, "a joint moved %g m beyond the bound in one frame", excess);
    printf("# rate-limited warp: every joint at least %.4f m inside its bound, %d frames "
           "turning\n",
           -excess, moving);
    CB_CHECK(moving >= 40, "the warp moved on %d frames only", moving);
    /* the same step unlimited (1000 rad/s: one frame) pops beyond that bound */
    excess = pop_excess(1000.0f, CB_FOLLOW_DEFAULT_ORIENT_RATE, &moving);
    CB_CHECK(excess > 0.02, "an unlimited warp stayed within the bound (excess %g m)", excess);
    printf("# unlimited warp: a joint %.4f m beyond the bound\n", excess);
    assert_int_equal(moving, 2);
}

static void orient_follow_validates(void **state)
{
    (void)state;
    scene sc;
    scene_init(&sc, NULL, 1, 45.0, 3.0f);
    cb_follow_desc fd = {.crowd = sc.crowd, .capacity = 1};
    cb_follow_desc d = cb_follow_query_desc(&fd);
    assert_true(d.orient.max_angle_rad == CB_FOLLOW_DEFAULT_ORIENT_MAX);
    assert_true(d.orient.rate_rps == CB_FOLLOW_DEFAULT_ORIENT_RATE);
    /* a second kind-0 follower is refused for the characters already there; use a new crowd */
    cb_crowd *crowd = NULL;
    const cb_graph *graphs[1] = {sc.graph};
    cb_crowd_desc cd = {.skeleton = sc.h.s, .capacity = 1, .graphs = graphs, .graph_count = 1};
    assert_int_equal(cb_crowd_create(&cd, &crowd, NULL), CB_OK);
    struct {
        cb_follow_orient o;
        cb_result want;
        const char *needle;
    } bad[] = {
        {{"warp", 2.0f, 3.0f}, CB_ERR_INVALID_ARGUMENT, "max_angle_rad"},
        {{"warp", -0.1f, 3.0f}, CB_ERR_INVALID_ARGUMENT, "max_angle_rad"},
        {{"warp", 0.5f, -1.0f}, CB_ERR_INVALID_ARGUMENT, "rate_rps"},
        {{"warp", NAN, 3.0f}, CB_ERR_INVALID_ARGUMENT, "max_angle_rad"},
        {{"nope", 0.5f, 3.0f}, CB_ERR_NOT_FOUND, "nope"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; ++k) {
        cb_follow_desc b = {.crowd = crowd, .capacity = 1, .orient = bad[k].o};
        cb_follow *f = NULL;
        cb_error err = {0};
        cb_result r = cb_follow_create(&b, &f, &err);
        CB_CHECK(r == bad[k].want && strstr(err.message, bad[k].needle) != NULL,
                 "case %zu: %s (%s), want %s with '%s'", k, cb_result_str(r), err.message,
                 cb_result_str(bad[k].want), bad[k].needle);
        assert_null(f);
    }
    cb_crowd_destroy(crowd);
    scene_finish(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(orient_job_closed_form),    cmocka_unit_test(orient_job_validates),
        cmocka_unit_test(orient_graph_json),         cmocka_unit_test(orient_follow_validates),
        cmocka_unit_test(orient_follow_closed_form), cmocka_unit_test(orient_no_pop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
