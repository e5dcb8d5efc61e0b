/* skeleton: desc defaults, every validation error, queries, rest pose packing, signatures and
 * joint masks (checked against subtrees found by an independent depth-first walk). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/skeleton.h"
#include "test_util.h"

/* A small tree: 0 root, 1 pelvis, 2 spine, 3 head, 4 arm_l, 5 hand_l, 6 arm_r, 7 leg_l, 8 leg_r,
 * 9 foot_l. */
static const char *const names9[] = {"root",   "pelvis", "spine", "head",  "arm_l",
                                     "hand_l", "arm_r",  "leg_l", "leg_r", "foot_l"};
static const int32_t parents9[] = {-1, 0, 1, 2, 2, 4, 2, 1, 1, 7};
enum { N9 = 10 };

static cb_skeleton_desc desc9(void)
{
    cb_skeleton_desc d = {0};
    d.joint_count = N9;
    d.names = names9;
    d.parents = parents9;
    return d;
}

static void skeleton_query_desc_defaults(void **state)
{
    (void)state;
    cb_skeleton_desc d = cb_skeleton_query_desc(NULL);
    assert_int_equal(d.joint_count, 0);
    assert_null(d.names);
    assert_null(d.parents);
    assert_null(d.rest_pose); /* identity rest pose */
    assert_null(d.allocator.alloc_fn);
    assert_null(d.allocator.free_fn);
    cb_skeleton_desc in = desc9();
    d = cb_skeleton_query_desc(&in);
    assert_int_equal(d.joint_count, N9);
    assert_ptr_equal(d.names, names9);
    assert_ptr_equal(d.parents, parents9);
}

static void expect_create(const cb_skeleton_desc *d, cb_result want, const char *needle)
{
    cb_skeleton *s = (cb_skeleton *)(uintptr_t)0x1;
    cb_error err = {0};
    cb_result r = cb_skeleton_create(d, &s, &err);
    CB_CHECK(r == want, "create gave %s, expected %s (%s)", cb_result_str(r), cb_result_str(want),
             err.message);
    CB_CHECK(s == (cb_skeleton *)(uintptr_t)0x1, "out written on failure");
    CB_CHECK(err.code == want, "err.code %d", (int)err.code);
    CB_CHECK(needle == NULL || strstr(err.message, needle) != NULL,
             "message \"%s\" does not name \"%s\"", err.message, needle);
}

static void skeleton_create_rejects_bad_descs(void **state)
{
    (void)state;
    cb_skeleton *s = NULL;
    assert_int_equal(cb_skeleton_create(NULL, &s, NULL), CB_ERR_NULL_ARGUMENT);
    cb_skeleton_desc d = desc9();
    assert_int_equal(cb_skeleton_create(&d, NULL, NULL), CB_ERR_NULL_ARGUMENT);

    d = desc9(), d._start_canary = 1;
    expect_create(&d, CB_ERR_CANARY, "canary");
    d = desc9(), d._end_canary = 1;
    expect_create(&d, CB_ERR_CANARY, "canary");
    d = desc9(), d.allocator.alloc_fn = cb_test_counting_alloc;
    expect_create(&d, CB_ERR_ALLOCATOR, "alloc_fn");
    d = desc9(), d.joint_count = 0;
    expect_create(&d, CB_ERR_TOO_FEW, "joint_count");
    d = desc9(), d.joint_count = CB_SKELETON_MAX_JOINTS + 1;
    expect_create(&d, CB_ERR_TOO_MANY, "joint_count");
    d = desc9(), d.names = NULL;
    expect_create(&d, CB_ERR_NULL_ARGUMENT, "names");
    d = desc9(), d.parents = NULL;
    expect_create(&d, CB_ERR_NULL_ARGUMENT, "parents");

    const char *names[N9];
    memcpy(names, names9, sizeof names);
    d = desc9(), d.names = names;
    names[3] = NULL;
    expect_create(&d, CB_ERR_NULL_ARGUMENT, "names[3]");
    names[3] = "";
    expect_create(&d, CB_ERR_INVALID_ARGUMENT, "names[3]");
    char longname[CB_JOINT_NAME_MAX + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    names[3] = longname;
    expect_create(&d, CB_ERR_INVALID_ARGUMENT, "names[3]");
    names[3] = "hand_l";
    expect_create(&d, CB_ERR_DUPLICATE, "names[3] and names[5]");

    int32_t parents[N9];
    d = desc9(), d.parents = parents;
    memcpy(parents, parents9, sizeof parents);
    parents[4] = 6; /* a forward parent */
    expect_create(&d, CB_ERR_HIERARCHY, "parents[4]");
    parents[4] = 4; /* its own parent: a cycle of one */
    expect_create(&d, CB_ERR_HIERARCHY, "parents[4]");
    memcpy(parents, parents9, sizeof parents);
    parents[2] = 3, parents[3] = 2; /* a cycle of two needs a forward parent */
    expect_create(&d, CB_ERR_HIERARCHY, "parents[2]");
    memcpy(parents, parents9, sizeof parents);
    parents[5] = -2;
    expect_create(&d, CB_ERR_HIERARCHY, "parents[5]");

    cb_xform rest[N9];
    for (int j = 0; j < N9; ++j) {
        rest[j] = cb_xform_identity();
    }
    d = desc9(), d.rest_pose = rest;
    rest[7].translation[1] = NAN;
    expect_create(&d, CB_ERR_NOT_FINITE, "rest_pose[7]");
    rest[7] = cb_xform_identity();
    rest[8].scale[2] = INFINITY;
    expect_create(&d, CB_ERR_NOT_FINITE, "rest_pose[8]");
    rest[8] = cb_xform_identity();
    rest[9].rotation[3] = 0.0f;
    expect_create(&d, CB_ERR_DEGENERATE, "rest_pose[9]");

    /* Out of memory: an allocator that fails. */
    d = desc9();
    d.allocator = cb_test_failing_allocator();
    expect_create(&d, CB_ERR_OUT_OF_MEMORY, NULL);
}

static void skeleton_queries_and_rest_pose(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_xform rest[N9];
    for (int j = 0; j < N9; ++j) {
        rest[j] = cb_test_random_xform(&r, 1.0f);
        /* Not unit: the skeleton normalizes. */
        for (int k = 0; k < 4; ++k) {
            rest[j].rotation[k] *= 1.5f + (float)j;
        }
    }
    cb_test_counter counter = {0};
    cb_skeleton_desc d = desc9();
    d.rest_pose = rest;
    d.allocator = cb_test_counting_allocator(&counter);
    cb_skeleton *s = NULL;
    assert_int_equal(cb_skeleton_create(&d, &s, NULL), CB_OK);
    assert_int_equal(cb_skeleton_joint_count(s), N9);
    size_t w = cb_simd_width();
    assert_int_equal(cb_skeleton_group_count(s), (N9 + w - 1) / w);
    assert_int_equal(cb_skeleton_soa_joint_count(s), cb_skeleton_group_count(s) * w);
    assert_int_equal(cb_skeleton_pose_bytes(s), cb_skeleton_group_count(s) * cb_simd_group_bytes());
    for (size_t j = 0; j < N9; ++j) {
        assert_string_equal(cb_skeleton_joint_name(s, j), names9[j]);
        assert_int_equal(cb_skeleton_parents(s)[j], parents9[j]);
        uint32_t found = 99;
        assert_int_equal(cb_skeleton_find_joint(s, names9[j], &found), CB_OK);
        assert_int_equal(found, j);
        cb_xform x = cb_skeleton_rest_xform(s, j);
        double len = 0;
        for (int k = 0; k < 4; ++k) {
            len += (double)rest[j].rotation[k] * rest[j].rotation[k];
        }
        len = sqrt(len);
        for (int k = 0; k < 4; ++k) {
            CB_CHECK(fabs(x.rotation[k] - rest[j].rotation[k] / len) < 2e-7,
                     "rest rotation of joint %zu not normalized", j);
        }
        for (int k = 0; k < 3; ++k) {
            assert_true(x.translation[k] == rest[j].translation[k]);
            assert_true(x.scale[k] == rest[j].scale[k]);
        }
    }
    assert_null(cb_skeleton_joint_name(s, N9));
    uint32_t found;
    assert_int_equal(cb_skeleton_find_joint(s, "tail", &found), CB_ERR_NOT_FOUND);
    assert_int_equal(cb_skeleton_find_joint(s, NULL, &found), CB_ERR_NULL_ARGUMENT);
    cb_xform id = cb_skeleton_rest_xform(s, 1000);
    assert_true(id.rotation[3] == 1.0f && id.translation[0] == 0.0f);
    /* The SoA rest pose holds the same transforms, and identity in the padding lanes. */
    cb_xform_group_cspan rp = cb_skeleton_rest_pose(s);
    assert_int_equal(rp.count, cb_skeleton_group_count(s));
    cb_xform back[N9];
    assert_int_equal(cb_xform_unpack(rp.ptr, rp.count, (cb_xform_span){back, N9}), CB_OK);
    for (size_t j = 0; j < N9; ++j) {
        cb_xform x = cb_skeleton_rest_xform(s, j);
        assert_memory_equal(back[j].rotation, x.rotation, sizeof x.rotation);
    }
    const float *g = (const float *)rp.ptr;
    for (size_t j = N9; j < rp.count * w; ++j) {
        size_t gi = j / w, l = j % w;
        assert_true(g[gi * 10 * w + 6 * w + l] == 1.0f); /* qw */
        assert_true(g[gi * 10 * w + 0 * w + l] == 0.0f); /* tx */
        assert_true(g[gi * 10 * w + 7 * w + l] == 1.0f); /* sx */
    }
    assert_true(counter.allocs > 0);
    cb_skeleton_destroy(s);
    assert_int_equal(counter.allocs, counter.frees);
    assert_int_equal(counter.live_bytes, 0);
    cb_skeleton_destroy(NULL);
}

static void skeleton_signature_tells_skeletons_apart(void **state)
{
    (void)state;
    cb_skeleton_desc d = desc9();
    cb_skeleton *a, *b, *c, *e;
    assert_int_equal(cb_skeleton_create(&d, &a, NULL), CB_OK);
    assert_int_equal(cb_skeleton_create(&d, &b, NULL), CB_OK);
    const char *names[N9];
    memcpy(names, names9, sizeof names);
    names[9] = "foot_L";
    d.names = names;
    assert_int_equal(cb_skeleton_create(&d, &c, NULL), CB_OK);
    int32_t parents[N9];
    memcpy(parents, parents9, sizeof parents);
    parents[9] = 8;
    d = desc9(), d.parents = parents;
    assert_int_equal(cb_skeleton_create(&d, &e, NULL), CB_OK);
    assert_true(cb_skeleton_signature(a) == cb_skeleton_signature(b));
    assert_true(cb_skeleton_signature(a) != cb_skeleton_signature(c));
    assert_true(cb_skeleton_signature(a) != cb_skeleton_signature(e));
    assert_true(cb_skeleton_signature(c) != cb_skeleton_signature(e));
    cb_skeleton_destroy(a), cb_skeleton_destroy(b), cb_skeleton_destroy(c), cb_skeleton_destroy(e);
}

/* Subtree membership by an explicit depth-first walk over child lists: independent of the
 * library's parent-chain walk. */
static void mark_subtree(const int32_t *parents, size_t n, size_t root, bool *in)
{
    in[root] = true;
    for (size_t j = 0; j < n; ++j) {
        if (parents[j] == (int32_t)root) {
            mark_subtree(parents, n, j, in);
        }
    }
}

static void skeleton_masks_follow_the_rules(void **state)
{
    (void)state;
    cb_skeleton_desc d = desc9();
    cb_skeleton *s;
    assert_int_equal(cb_skeleton_create(&d, &s, NULL), CB_OK);
    size_t soa = cb_skeleton_soa_joint_count(s);
    float *mask = malloc((soa + 4) * sizeof(float));
    for (size_t i = 0; i < soa + 4; ++i) {
        mask[i] = 7.0f;
    }

    /* Upper body: the spine's subtree. */
    cb_mask_rule upper = {"spine", 1.0f, false};
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, &upper, 1, (cb_float_span){mask, soa}, NULL),
                     CB_OK);
    bool in[N9] = {false};
    mark_subtree(parents9, N9, 2, in);
    for (size_t j = 0; j < N9; ++j) {
        CB_CHECK(mask[j] == (in[j] ? 1.0f : 0.0f), "upper body mask joint %zu = %g", j,
                 (double)mask[j]);
    }
    for (size_t j = N9; j < soa; ++j) {
        CB_CHECK(mask[j] == 0.0f, "padding entry %zu = %g", j, (double)mask[j]);
    }
    CB_CHECK(mask[soa] == 7.0f, "entries past the span are untouched");

    /* Lower body, then the left arm back at half weight, then only the head joint itself. */
    cb_mask_rule rules[] = {{"spine", 0.0f, false}, {"arm_l", 0.5f, false}, {"head", 0.25f, true}};
    assert_int_equal(cb_skeleton_build_mask(s, 1.0f, rules, 3, (cb_float_span){mask, soa}, NULL),
                     CB_OK);
    bool arm[N9] = {false};
    mark_subtree(parents9, N9, 4, arm);
    for (size_t j = 0; j < N9; ++j) {
        float want = in[j] ? 0.0f : 1.0f;
        want = arm[j] ? 0.5f : want;
        want = j == 3 ? 0.25f : want;
        CB_CHECK(mask[j] == want, "layered mask joint %zu = %g, want %g", j, (double)mask[j],
                 (double)want);
    }

    /* Errors write nothing. */
    float before[64];
    memcpy(before, mask, soa * sizeof(float));
    cb_error err = {0};
    cb_mask_rule bad[] = {{"spine", 1.0f, false}, {"tail", 1.0f, false}};
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, bad, 2, (cb_float_span){mask, soa}, &err),
                     CB_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "rules[1]"));
    bad[1] = (cb_mask_rule){"head", 1.5f, false};
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, bad, 2, (cb_float_span){mask, soa}, &err),
                     CB_ERR_INVALID_ARGUMENT);
    bad[1] = (cb_mask_rule){"head", NAN, false};
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, bad, 2, (cb_float_span){mask, soa}, &err),
                     CB_ERR_INVALID_ARGUMENT);
    bad[1] = (cb_mask_rule){NULL, 1.0f, false};
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, bad, 2, (cb_float_span){mask, soa}, &err),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_skeleton_build_mask(s, -0.5f, NULL, 0, (cb_float_span){mask, soa}, &err),
                     CB_ERR_INVALID_ARGUMENT);
    /* One float per joint is enough (issue 11); fewer is refused. */
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, NULL, 0, (cb_float_span){mask, N9 - 1}, &err),
                     CB_ERR_SPAN_TOO_SHORT);
    assert_int_equal(cb_skeleton_build_mask(s, 0.0f, NULL, 1, (cb_float_span){mask, soa}, &err),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_skeleton_build_mask(NULL, 0.0f, NULL, 0, (cb_float_span){mask, soa}, &err),
                     CB_ERR_NULL_ARGUMENT);
    assert_memory_equal(before, mask, soa * sizeof(float));
    free(mask);
    cb_skeleton_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(skeleton_query_desc_defaults),
        cmocka_unit_test(skeleton_create_rejects_bad_descs),
        cmocka_unit_test(skeleton_queries_and_rest_pose),
        cmocka_unit_test(skeleton_signature_tells_skeletons_apart),
        cmocka_unit_test(skeleton_masks_follow_the_rules),
    };
    return CB_RUN_TESTS(tests);
}
