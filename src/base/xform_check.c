#include <math.h>

#include "base/base_impl.h"

double cb_rotation_length2(const float q[4])
{
    double len2 = 0.0;
    for (int k = 0; k < 4; ++k) {
        len2 += (double)q[k] * q[k];
    }
    return len2;
}

bool cb_rotation_normalizable(const float q[4])
{
    return cb_rotation_length2(q) >= 1e-12;
}

cb_xform_fault cb_xform_check(const cb_xform *x)
{
    for (int k = 0; k < 4; ++k) {
        if (!isfinite(x->rotation[k])) {
            return CB_XFORM_NOT_FINITE;
        }
    }
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(x->translation[k]) || !isfinite(x->scale[k])) {
            return CB_XFORM_NOT_FINITE;
        }
    }
    return cb_rotation_normalizable(x->rotation) ? CB_XFORM_VALID : CB_XFORM_ZERO_ROTATION;
}
