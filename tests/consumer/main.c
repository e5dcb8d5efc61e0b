/* A program that uses an installed (pkg-config) or subproject crowdblend: blends two rotations
 * and checks the answer, so "it links" also means "it works". */
#include <math.h>
#include <stdio.h>

#include <crowdblend/crowdblend.h>

int main(void)
{
    float ax = 0, ay = 0, az = 0, aw = 1;                 /* identity */
    float bx = 0, by = 0, bz = 0.70710678f, bw = 0.70710678f; /* 90 degrees about z */
    float t = 0.5f, ox, oy, oz, ow;
    cb_result r = cb_quat_slerp_soa((cb_quat_csoa){&ax, &ay, &az, &aw},
                                    (cb_quat_csoa){&bx, &by, &bz, &bw}, &t, 1,
                                    (cb_quat_soa){&ox, &oy, &oz, &ow});
    /* 45 degrees about z. */
    if (r != CB_OK || fabsf(oz - 0.38268343f) > 1e-6f || fabsf(ow - 0.92387953f) > 1e-6f) {
        fprintf(stderr, "consumer: wrong slerp result (%s)\n", cb_result_str(r));
        return 1;
    }
    printf("consumer: crowdblend %s, W = %zu: ok\n", cb_query_build_info().version,
           cb_simd_width());
    return 0;
}
