/* The group decoder of compressed clips: one key of W joints decoded in registers, SIMD over
 * the lanes, and the three things built on it: decoding a key into a pose, sampling at a time,
 * and the fused sample + blend prototype that src/anim/pose.c will take over.
 *
 * Per component of a group the decoder loads one vector of 32-bit words (lane l: joint
 * g * W + l), cuts the field out with two shifts whose counts come from the group's layout,
 * converts it to float and applies offset + step * q (cb_cclip_value's two roundings, never
 * fused). A group whose components are all constant has no words: its fields read as 0. */
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

cb_result cb_cclip_decode(const cb_cclip *c, size_t key, cb_xform_group_span out)
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
    for (size_t g = 0; g < c->group_count; ++g) {
        cb_key_group k, same;
        cb_cclip_decode_group2(c, (uint32_t)key, (uint32_t)key, g, &k, &same);
        /* Padding lanes decode to identity: their offsets are identity and their steps 0. */
        cb_soa_xform_store(&out.ptr[g], (cb_soa_xform){k.t, k.q, one_plus(k.ds)});
    }
    return CB_OK;
}

/* acc + wa a + wb b, per component (as the uncompressed sampler accumulates). */
CB_INLINE cb_vf acc2(cb_vf acc, cb_vf wa, cb_vf a, cb_vf wb, cb_vf b)
{
    return cb_vf_fmadd(wb, b, cb_vf_fmadd(wa, a, acc));
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
    const cb_vf wa = cb_vf_set1(1.0f - f), wb = cb_vf_set1(f), z = cb_vf_zero();
    for (size_t g = 0; g < c->group_count; ++g) {
        cb_key_group a, b;
        cb_cclip_decode_group2(c, i, i + 1, g, &a, &b);
        cb_soa_xform x = {
            {acc2(z, wa, a.t.x, wb, b.t.x), acc2(z, wa, a.t.y, wb, b.t.y),
             acc2(z, wa, a.t.z, wb, b.t.z)},
            cb_soa_quat_normalize(
                (cb_soa_quat){acc2(z, wa, a.q.x, wb, b.q.x), acc2(z, wa, a.q.y, wb, b.q.y),
                              acc2(z, wa, a.q.z, wb, b.q.z), acc2(z, wa, a.q.w, wb, b.q.w)}),
            one_plus((cb_soa_vec3){acc2(z, wa, a.ds.x, wb, b.ds.x), acc2(z, wa, a.ds.y, wb, b.ds.y),
                                   acc2(z, wa, a.ds.z, wb, b.ds.z)}),
        };
        cb_soa_xform_store(&out.ptr[g], x);
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Fused sample + blend prototype                                                             */

typedef struct accum {
    cb_soa_vec3 t;
    cb_soa_quat q;
    cb_soa_vec3 ds;
    cb_vf wsum;
} accum;

/* Adds one entry's sample of group g: w (1 - f) key_i + w f key_(i+1), rotations flipped into
 * the hemisphere of the running sum by key_i (pose.c's accumulate_entry with decoded keys). */
CB_INLINE void accumulate(accum *acc, const cb_cclip_blend_entry *e, size_t g)
{
    const struct cb_cclip *c = e->clip;
    uint32_t i;
    float f;
    cb_cclip_locate(c, e->time, e->looping, &i, &f);
    cb_key_group a, b;
    cb_cclip_decode_group2(c, i, i + 1, g, &a, &b);
    cb_vf w = cb_vf_set1(e->weight);
    cb_vf wb = cb_vf_mul(w, cb_vf_set1(f));
    cb_vf wa = cb_vf_sub(w, wb);
    acc->t =
        (cb_soa_vec3){acc2(acc->t.x, wa, a.t.x, wb, b.t.x), acc2(acc->t.y, wa, a.t.y, wb, b.t.y),
                      acc2(acc->t.z, wa, a.t.z, wb, b.t.z)};
    cb_vf flip = cb_vf_select(cb_vf_lt(cb_soa_quat_dot(a.q, acc->q), cb_vf_zero()),
                              cb_vf_sign_mask(), cb_vf_zero());
    cb_vf qa = cb_vf_xor_sign(wa, flip), qb = cb_vf_xor_sign(wb, flip);
    acc->q =
        (cb_soa_quat){acc2(acc->q.x, qa, a.q.x, qb, b.q.x), acc2(acc->q.y, qa, a.q.y, qb, b.q.y),
                      acc2(acc->q.z, qa, a.q.z, qb, b.q.z), acc2(acc->q.w, qa, a.q.w, qb, b.q.w)};
    if (c->has_scale) {
        acc->ds = (cb_soa_vec3){acc2(acc->ds.x, wa, a.ds.x, wb, b.ds.x),
                                acc2(acc->ds.y, wa, a.ds.y, wb, b.ds.y),
                                acc2(acc->ds.z, wa, a.ds.z, wb, b.ds.z)};
    }
    acc->wsum = cb_vf_add(acc->wsum, w);
}

void cb_cclip_blend(const cb_skeleton *skeleton, const cb_cclip_blend_entry *entries, size_t count,
                    float threshold, cb_xform_group *out)
{
    const size_t groups = cb_skeleton_group_count(skeleton);
    const size_t joints = cb_skeleton_joint_count(skeleton);
    const cb_xform_group *rest = cb_skeleton_rest_pose(skeleton).ptr;
    const cb_vf one = cb_vf_set1(1.0f), thr = cb_vf_set1(threshold);
    for (size_t g = 0; g < groups; ++g) {
        cb_vf z = cb_vf_zero();
        accum acc = {{z, z, z}, {z, z, z, z}, {z, z, z}, z};
        for (size_t k = 0; k < count; ++k) {
            if (entries[k].weight >= 1e-5f) {
                accumulate(&acc, &entries[k], g);
            }
        }
        /* Rest-pose fallback where the weight sum is below the threshold (real lanes decide;
         * padding lanes hold identity in the rest pose and get the same treatment). */
        cb_vf wr = cb_vf_max(cb_vf_sub(thr, acc.wsum), z);
        size_t valid = joints - g * CB_W;
        unsigned real = valid >= CB_W ? CB_VM_ALL_BITS : (1u << valid) - 1u;
        if ((cb_vm_bits(cb_vf_gt(wr, z)) & real) != 0) {
            cb_soa_xform r = cb_soa_xform_load(&rest[g]);
            r.s =
                (cb_soa_vec3){cb_vf_sub(r.s.x, one), cb_vf_sub(r.s.y, one), cb_vf_sub(r.s.z, one)};
            cb_soa_xform a = {acc.t, acc.q, acc.ds};
            cb_soa_xform_accumulate(&a, r, wr);
            acc.t = a.t, acc.q = a.q, acc.ds = a.s;
            acc.wsum = cb_vf_add(acc.wsum, wr);
        }
        cb_vf inv = cb_vf_div(one, acc.wsum);
        cb_soa_xform x = {
            {cb_vf_mul(acc.t.x, inv), cb_vf_mul(acc.t.y, inv), cb_vf_mul(acc.t.z, inv)},
            cb_soa_quat_normalize(acc.q),
            {cb_vf_fmadd(acc.ds.x, inv, one), cb_vf_fmadd(acc.ds.y, inv, one),
             cb_vf_fmadd(acc.ds.z, inv, one)},
        };
        cb_soa_xform_store(&out[g], x);
    }
}
