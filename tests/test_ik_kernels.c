/* ik_kernels: the IK helpers other modules call (src/ik/ik_kernels.h). cb_ik_joint_position
 * (the foot lock step's view of where a foot is shown) gives, bit for bit, the position of the
 * scalar float bottom-up product of the local matrices from the root (the products IK
 * multiplied before its 4-wide columns, written out in tests/common/anim_test.c), for every
 * joint of random skeletons with non-uniform scale and of random poses. cb_ik_translate_joint
 * (the pelvis drop) moves a joint and its subtree by the model-space offset asked, under
 * turned, non-uniformly scaled parents, and no other joint by a bit; it refuses (false, the
 * pose's bytes kept) under a singular or non-finite parent and where the translation would not
 * be finite. cb_ik_two_bone_reach is
 * the solve's limit: the humanoid's leg's reach against the closed form in double (soften x
 * the full reach about the hinge, at least the folded reach), and the solve's `reached` true
 * just inside it and false just outside, in every direction tried. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "ik/ik_kernels.h"
#include "test_util.h"

static void ik_joint_position_is_the_scalar_product(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 60; ++it) {
        size_t n = 2 + cb_prng_below(&r, 60);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, it % 2 == 0, it % 4 == 0);
        cb_xform_group_cspan rest = cb_skeleton_rest_pose(s);
        for (uint32_t j = 0; j < n; ++j) {
            float got[3];
            cb_ik_joint_position(s, rest.ptr, j, got);
            cb_test_fmat want = cb_test_fmat_path(s, rest.ptr, j, -1);
            CB_CHECK(memcmp(got, want.c[3], sizeof got) == 0,
                     "skeleton %d, joint %u: (%.9g %.9g %.9g), scalar (%.9g %.9g %.9g)", it, j,
                     (double)got[0], (double)got[1], (double)got[2], (double)want.c[3][0],
                     (double)want.c[3][1], (double)want.c[3][2]);
        }
        cb_skeleton_destroy(s);
    }
}

static bool in_subtree(const int32_t *parents, uint32_t k, uint32_t j)
{
    for (int32_t a = (int32_t)k; a >= 0; a = parents[a]) {
        if ((uint32_t)a == j) {
            return true;
        }
    }
    return false;
}

static void ik_translate_joint_moves_the_subtree(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    double worst = 0.0;
    for (int it = 0; it < 40; ++it) {
        size_t n = 2 + cb_prng_below(&r, 30);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, true, it % 3 == 0);
        const int32_t *parents = cb_skeleton_parents(s);
        cb_xform_group *pose = cb_test_pose_alloc(s, false);
        float(*before)[3] = malloc(n * sizeof *before);
        for (uint32_t k = 0; k < n; ++k) {
            cb_ik_joint_position(s, cb_skeleton_rest_pose(s).ptr, k, before[k]);
        }
        for (uint32_t j = 0; j < n; ++j) {
            memcpy(pose, cb_skeleton_rest_pose(s).ptr, cb_skeleton_pose_bytes(s));
            const float delta[3] = {cb_prng_range(&r, -0.2f, 0.2f), cb_prng_range(&r, -0.2f, 0.2f),
                                    cb_prng_range(&r, -0.2f, 0.2f)};
            assert_true(cb_ik_translate_joint(s, pose, j, delta));
            for (uint32_t k = 0; k < n; ++k) {
                float after[3];
                cb_ik_joint_position(s, pose, k, after);
                if (!in_subtree(parents, k, j)) {
                    CB_CHECK(memcmp(after, before[k], sizeof after) == 0,
                             "skeleton %d: joint %u moved with joint %u", it, k, j);
                    continue;
                }
                /* float products over a chain of scaled joints: a relative bound */
                double mag = 1.0, err = 0.0;
                for (int c = 0; c < 3; ++c) {
                    mag = fmax(mag, fabs(before[k][c]));
                    err = fmax(err, fabs((double)after[c] - before[k][c] - delta[c]));
                }
                worst = fmax(worst, err / mag);
                CB_CHECK(err <= 2e-6 * mag, "skeleton %d, joint %u below %u: off by %g", it, k, j,
                         err);
            }
        }
        free(before);
        free(pose);
        cb_skeleton_destroy(s);
    }
    printf("# translate: worst %.3g of the coordinates' magnitude\n", worst);
}

/* Where no translation moves the joint by the offset, cb_ik_translate_joint refuses: false,
 * the pose's bytes unchanged. A parent scaled to 0 on one axis (singular), a parent whose
 * rotation is NaN (not finite), and a root whose translation would pass FLT_MAX; the same
 * offsets on the pose before the change are taken (the checks can pass). */
static void ik_translate_joint_refuses(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = 4 };
    cb_skeleton *s = cb_test_random_skeleton(&r, N, true, false);
    const int32_t *parents = cb_skeleton_parents(s);
    const size_t groups = cb_simd_group_count(N), bytes = cb_skeleton_pose_bytes(s);
    cb_xform_group *pose = cb_test_pose_alloc(s, false), *copy = cb_test_pose_alloc(s, false);
    uint32_t j = 1;
    while (j < N && parents[j] < 0) {
        ++j;
    }
    assert_true(j < N);
    const uint32_t p = (uint32_t)parents[j];
    const float down[3] = {0.0f, -0.05f, 0.0f}, far[3] = {3e38f, 0.0f, 0.0f};
    for (int k = 0; k < 3; ++k) {
        cb_xform x[N];
        assert_int_equal(
            cb_xform_unpack(cb_skeleton_rest_pose(s).ptr, groups, (cb_xform_span){x, N}), CB_OK);
        const uint32_t moved = k == 2 ? 0 : j;
        const float *delta = k == 2 ? far : down;
        /* the unchanged pose takes the offset */
        assert_int_equal(cb_xform_pack((cb_xform_cspan){x, N}, pose, groups), CB_OK);
        assert_true(cb_ik_translate_joint(s, pose, moved, down));
        if (k == 0) {
            x[p].scale[1] = 0.0f;
        } else if (k == 1) {
            x[p].rotation[2] = NAN;
        } else {
            x[0].translation[0] = 3e38f;
            x[0].scale[0] = 1.0f;
        }
        assert_int_equal(cb_xform_pack((cb_xform_cspan){x, N}, pose, groups), CB_OK);
        memcpy(copy, pose, bytes);
        CB_CHECK(!cb_ik_translate_joint(s, pose, moved, delta), "case %d: taken", k);
        CB_CHECK(memcmp(copy, pose, bytes) == 0, "case %d: the pose changed", k);
    }
    free(pose);
    free(copy);
    cb_skeleton_destroy(s);
}

/* The humanoid's left leg at rest, its reach against the closed form, and the solve on either
 * side of it. */
static void ik_two_bone_reach_is_the_solves(void **state)
{
    (void)state;
    cb_embedded *set = NULL;
    assert_int_equal(cb_embedded_create(NULL, &set, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(set);
    const cb_xform_group *rest = cb_skeleton_rest_pose(s).ptr;
    const uint32_t joints[3] = {cb_test_joint(s, "thigh_l"), cb_test_joint(s, "calf_l"),
                                cb_test_joint(s, "ball_l")};
    cb_test_fmat m[3];
    for (int k = 0; k < 3; ++k) {
        m[k] = cb_test_fmat_path(s, rest, joints[k], -1);
    }
    const float axes[2][3] = {{1.0f, 0.0f, 0.0f}, {0.3f, 0.2f, -1.0f}};
    const float softens[3] = {0.5f, 0.97f, 1.0f};
    for (int ax = 0; ax < 2; ++ax) {
        double n[3], u[3], l[3], dmin, dmax;
        for (int c = 0; c < 3; ++c) {
            n[c] = (double)m[1].c[0][c] * axes[ax][0] + (double)m[1].c[1][c] * axes[ax][1] +
                   (double)m[1].c[2][c] * axes[ax][2];
            u[c] = (double)m[1].c[3][c] - m[0].c[3][c];
            l[c] = (double)m[2].c[3][c] - m[1].c[3][c];
        }
        cb_test_hinge_reach(u, l, n, &dmin, &dmax);
        for (int k = 0; k < 3; ++k) {
            cb_ik_two_bone_result res;
            cb_ik_two_bone_job job = {.skeleton = s,
                                      .pose = cb_skeleton_rest_pose(s),
                                      .start_joint = joints[0],
                                      .mid_joint = joints[1],
                                      .end_joint = joints[2],
                                      .mid_axis = {axes[ax][0], axes[ax][1], axes[ax][2]},
                                      .weight = 1.0f,
                                      .soften = softens[k],
                                      .result = &res};
            float start[3], reach;
            assert_true(cb_ik_two_bone_reach(&job, start, &reach));
            double want = fmax(softens[k] * dmax, dmin);
            CB_CHECK(fabs(reach - want) <= 1e-6 * want, "axis %d soften %g: reach %.9g, want %.9g",
                     ax, (double)softens[k], (double)reach, want);
            for (int c = 0; c < 3; ++c) {
                assert_true(start[c] == m[0].c[3][c]);
            }
            static const double dirs[4][3] = {
                {0, -1, 0}, {0.3, -0.9, 0.3}, {0, -0.6, 0.8}, {1, 0, 0}};
            for (int d = 0; d < 4; ++d) {
                double dl = sqrt(dirs[d][0] * dirs[d][0] + dirs[d][1] * dirs[d][1] +
                                 dirs[d][2] * dirs[d][2]);
                for (int side = 0; side < 2; ++side) {
                    double at = reach * (side == 0 ? 1.0 - 1e-4 : 1.0 + 1e-4);
                    for (int c = 0; c < 3; ++c) {
                        job.target[c] = (float)(start[c] + at * dirs[d][c] / dl);
                    }
                    assert_int_equal(cb_ik_two_bone_job_run(&job, NULL), CB_OK);
                    CB_CHECK(res.reached == (side == 0),
                             "axis %d soften %g direction %d: reached %d at %g x the reach", ax,
                             (double)softens[k], d, res.reached, at / reach);
                }
            }
        }
    }
    cb_embedded_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ik_joint_position_is_the_scalar_product),
        cmocka_unit_test(ik_translate_joint_moves_the_subtree),
        cmocka_unit_test(ik_translate_joint_refuses),
        cmocka_unit_test(ik_two_bone_reach_is_the_solves),
    };
    return CB_RUN_TESTS(tests);
}
