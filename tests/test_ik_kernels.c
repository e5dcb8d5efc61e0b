/* ik_kernels: the IK helpers other modules call (src/ik/ik_kernels.h). cb_ik_joint_position
 * (the foot lock step's view of where a foot is shown) gives, bit for bit, the position of the
 * scalar float bottom-up product of the local matrices from the root (the products IK
 * multiplied before its 4-wide columns, written out in tests/common/anim_test.c), for every
 * joint of random skeletons with non-uniform scale and of random poses. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ik_joint_position_is_the_scalar_product),
    };
    return CB_RUN_TESTS(tests);
}
