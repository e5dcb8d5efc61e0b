/* Decoding a compressed clip's key into a pose and sampling it at a time, on the group decoder
 * (src/compress/cclip_decode.h, which the pose jobs' fused sample + blend also use). */
#include <string.h>

#include "compress/cclip_decode.h"

size_t cb_cclip_lane_perm_bytes(void)
{
    return sizeof(cb_lane_perm);
}

void cb_cclip_lane_perm_init(void *perm, const int32_t *src)
{
    cb_lane_perm_init(perm, src);
}

static cb_result check_out(const struct cb_cclip *c, cb_xform_group_span out)
{
    if (out.ptr == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (out.count < c->group_count) {
        return CB_ERR_SPAN_TOO_SHORT;
    }
    if (!cb_is_aligned(out.ptr, cb_simd_group_align())) {
        return CB_ERR_MISALIGNED;
    }
    return CB_OK;
}

CB_INLINE cb_soa_vec3 one_plus(cb_soa_vec3 ds)
{
    cb_vf one = cb_vf_set1(1.0f);
    return (cb_soa_vec3){cb_vf_add(one, ds.x), cb_vf_add(one, ds.y), cb_vf_add(one, ds.z)};
}

cb_result cb_cclip_decode(const cb_cclip *c, uint32_t key, cb_xform_group_span out)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    cb_result r = check_out(c, out);
    if (r != CB_OK) {
        return r;
    }
    if (key >= c->keys) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    const cb_vf z = cb_vf_zero();
    for (size_t g = 0; g < c->group_count; ++g) {
        cb_key_group k, same;
        k.ds = same.ds = (cb_soa_vec3){z, z, z}; /* what a clip without scale keeps */
        cb_cclip_decode_group2(c, key, key, g, c->has_scale, &k, &same);
        /* Padding lanes decode to identity: their offsets are identity and their steps 0. */
        cb_soa_xform_store(&out.ptr[g], (cb_soa_xform){k.t, k.q, one_plus(k.ds)});
    }
    return CB_OK;
}

cb_result cb_cclip_sample(const cb_cclip *c, float t, bool looping, cb_xform_group_span out)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    cb_result r = check_out(c, out);
    if (r != CB_OK) {
        return r;
    }
    if (!isfinite(t)) {
        return CB_ERR_NOT_FINITE;
    }
    uint32_t i;
    float f;
    cb_cclip_locate(c, t, looping, &i, &f);
    const uint32_t *wa = cb_cclip_key_words(c, i), *wb = cb_cclip_key_words(c, i + 1);
    const cb_vf fv = cb_vf_set1(cb_cclip_sample_keys(&wa, wb, f)), z = cb_vf_zero();
    for (size_t g = 0; g < c->group_count; ++g) {
        cb_key_group k;
        k.ds = (cb_soa_vec3){z, z, z}; /* what a clip without scale keeps */
        cb_cclip_sample_group_at(c, wa, wb, g, fv, c->has_scale, &k);
        cb_soa_xform_store(&out.ptr[g],
                           (cb_soa_xform){k.t, cb_soa_quat_normalize(k.q), one_plus(k.ds)});
    }
    return CB_OK;
}
