/* libFuzzer target for one text loader of src/traj (scripts/fuzz.sh builds one binary per
 * format, -DCB_FUZZ_FORMAT=CB_TRAJ_FORMAT_...): any bytes must give a trajectory set or an
 * error, never a crash, a leak, an out-of-bounds access or undefined behaviour (ASan + UBSan),
 * and whatever loads must evaluate to finite positions at any time. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "traj/traj.h"

#ifndef CB_FUZZ_FORMAT
#define CB_FUZZ_FORMAT CB_TRAJ_FORMAT_AUTO
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cb_traj_load_desc d = {.format = CB_FUZZ_FORMAT, .source_name = "fuzz"};
    cb_traj *t = NULL;
    cb_error err;
    if (cb_traj_load_text((const char *)data, size, &d, &t, &err) != CB_OK) {
        return 0;
    }
    for (uint32_t a = 0; a < t->agent_count; ++a) {
        double t0 = cb_traj_agent_start(t, a), t1 = cb_traj_agent_end(t, a);
        for (int k = -1; k <= 8; ++k) {
            double p[3], v[3];
            cb_traj_eval(t, a, t0 + (t1 - t0) * k / 7.0, p, v);
            for (int c = 0; c < 3; ++c) {
                if (!isfinite(p[c]) || !isfinite(v[c])) {
                    abort(); /* the loader's limits must keep the spline finite */
                }
            }
        }
    }
    cb_traj_destroy(t);
    return 0;
}
