/* The group decoder of compressed clips, inline: one or two keys of W joints decoded in
 * registers, SIMD over the lanes. The pose jobs (src/pose/pose.c) include it so that a
 * compressed clip's keys are decoded inside the fused sample + blend, in place of the two frame
 * loads of an uncompressed clip, and src/compress/decode.c builds cb_cclip_decode and
 * cb_cclip_sample on it. cb_cclip_joint_value is the same rule one joint and component at a
 * time, for the scalar reference of the pose job (src/pose/pose_ref.c). The sample job and
 * cb_cclip_sample decode the interpolated key between two keys instead
 * (cb_cclip_sample_group_at; its scalar rule cb_cclip_joint_lerp).
 *
 * Per component of a group and key the decoder permutes one vector of 32-bit words into place
 * (lane l: joint g * W + l; the group's lane permutation, its control loaded once per group),
 * keeps the field with one AND (the field times 2^shift, which converts exactly), converts it
 * to float and applies offset + step' * (q 2^shift) with step' = step 2^-shift: the product is
 * step * q exactly, so its rounding, and the sum's, are cb_cclip_value's (never fused). Lanes
 * that store nothing have step 0, so whatever word the permutation gives them reads as 0. A
 * component of width 0 in the whole group is offset + 0, with no load of words. So every value
 * is the same bits at any W, and in the scalar decoder. */
#ifndef CROWDBLEND_COMPRESS_CCLIP_DECODE_H
#define CROWDBLEND_COMPRESS_CCLIP_DECODE_H

#include "compress/cclip_impl.h"
#include "simd/soa.h"
#include "simd/vbits.h"

/* A decoded key of one group: translation, rotation as stored, scale deviation (zero when the
 * clip has no scale). Also what the pose jobs load from an uncompressed clip's frame. */
typedef struct cb_key_group {
    cb_soa_vec3 t;
    cb_soa_quat q;
    cb_soa_vec3 ds;
} cb_key_group;

/* Component k of a group that stores it (its width above 0 in some lane): each key's field
 * permuted into its lane, masked, converted, times the step plus the offset. The rotation path
 * calls it without a test; cb_cclip_decode_component2 after one. */
CB_INLINE void cb_cclip_stored_component2(const cb_cclip_group *grp, cb_vi control,
                                          const uint32_t *words_a, const uint32_t *words_b,
                                          const float *ranges, int k, cb_vf *a, cb_vf *b)
{
    const float *off = ranges + (size_t)k * 2 * CB_W;
    cb_vf o = cb_vf_load(off), s = cb_vf_load(off + CB_W);
    cb_vi mask = cb_vi_set1((int32_t)grp->mask[k]);
    cb_vf qa = cb_vf_masked_field(cb_vi_place(cb_vi_loadu(words_a + grp->at[k]), control), mask);
    cb_vf qb = cb_vf_masked_field(cb_vi_place(cb_vi_loadu(words_b + grp->at[k]), control), mask);
    *a = cb_vf_add(o, cb_vf_mul(s, qa));
    *b = cb_vf_add(o, cb_vf_mul(s, qb));
}

/* w rebuilt in the lanes of row d (1 there, else 0) from the decoded x y z, w's own field of
 * width 0 in the group: cb_cclip_rebuild_quat's path for rebuilt == 8. */
CB_INLINE cb_vf cb_cclip_rebuild_w(cb_vf d, cb_vf x, cb_vf y, cb_vf z, cb_vf w)
{
    cb_vf s = cb_vf_add(cb_vf_mul(x, x), cb_vf_mul(y, y));
    s = cb_vf_add(s, cb_vf_mul(z, z));
    return cb_vf_add(w, cb_vf_sqrt(cb_vf_max(cb_vf_sub(d, s), cb_vf_zero())));
}

/* Component k of a group whose fields all have width 0: offset + 0 (turning a -0.0 offset into
 * +0.0, as cb_cclip_value does), at every key and every f. */
CB_INLINE cb_vf cb_cclip_constant(const float *ranges, int k)
{
    return cb_vf_add(cb_vf_load(ranges + (size_t)k * 2 * CB_W), cb_vf_zero());
}

/* cb_cclip_constant in both keys. */
CB_INLINE void cb_cclip_constant_component2(const float *ranges, int k, cb_vf *a, cb_vf *b)
{
    *a = *b = cb_cclip_constant(ranges, k);
}

/* Component k of a group in two keys (words_a, words_b: the group's words in each), decoded
 * together so that the layout (where, mask) and the range are read once for both. A component
 * with 0 bits in every lane of the group (a translation below the hips, say) is its offset:
 * offset + 0 (as cb_cclip_value computes it with q = 0 and a step of 0: it turns a -0.0 offset
 * into +0.0). The branch depends on the skeleton's layout more than on the clip, so it follows
 * the same pattern for every clip of a set. */
CB_INLINE void cb_cclip_decode_component2(const cb_cclip_group *grp, cb_vi control,
                                          const uint32_t *words_a, const uint32_t *words_b,
                                          const float *ranges, int k, cb_vf *a, cb_vf *b)
{
    if (grp->bits[k] == 0) {
        cb_cclip_constant_component2(ranges, k, a, b);
        return;
    }
    cb_cclip_stored_component2(grp, control, words_a, words_b, ranges, k, a, b);
}

/* The rotation components the stored form omits, rebuilt in the lanes that omit them (d 1,
 * else 0; cclip_impl.h): the component as decoded (+0 in those lanes: offset 0, step 0) plus
 * d sqrt(max(0, 1 - (((x x + y y) + z z) + w w))), cb_cclip_rebuild's operations in its order.
 * The sum is exact since d is 0 or 1, so no other lane changes. `rebuilt`: the group's bits of
 * the components some lane rebuilds. */
CB_INLINE void cb_cclip_rebuild_quat(const struct cb_cclip *c, const cb_cclip_group *grp,
                                     uint32_t rebuilt, cb_soa_quat *q)
{
    const float *d = c->rebuild + grp->rebuild_at;
    if (rebuilt == 8) {
        /* Only w is rebuilt (the common case). Its square, of +0 in the rebuilding lanes, is
         * left out of the sum (adding +0 changes no bit), and d - s stands for 1 - s: the same
         * in those lanes, <= 0 in the others, whose rebuilt value is so sqrt(0) = +0 and their
         * w (+ +0) unchanged, with no multiply by d. */
        q->w = cb_cclip_rebuild_w(cb_vf_load(d), q->x, q->y, q->z, q->w);
        return;
    }
    cb_vf s = cb_vf_add(cb_vf_mul(q->x, q->x), cb_vf_mul(q->y, q->y));
    s = cb_vf_add(s, cb_vf_mul(q->z, q->z));
    s = cb_vf_add(s, cb_vf_mul(q->w, q->w));
    const cb_vf r = cb_vf_sqrt(cb_vf_max(cb_vf_sub(cb_vf_set1(1.0f), s), cb_vf_zero()));
    cb_vf *comp[4] = {&q->x, &q->y, &q->z, &q->w};
    for (int k = 0; k < 4; ++k) {
        if (rebuilt & (1u << k)) {
            *comp[k] = cb_vf_add(*comp[k], cb_vf_mul(cb_vf_load(d + (size_t)k * CB_W), r));
        }
    }
}

/* The keys of a group of kind CB_CCLIP_GROUP_ROTATION (cclip_impl.h): translation, w and any
 * scale constant, x y z stored, w rebuilt where row `rebuild` has 1. The same operations, in
 * the same order, as the general path gives such a group, without its tests per component. */
CB_INLINE void cb_cclip_decode_rotation2(const cb_cclip_group *grp, const float *ranges,
                                         const float *rebuild, cb_vi perm, const uint32_t *wa,
                                         const uint32_t *wb, bool scaled, cb_key_group *a,
                                         cb_key_group *b)
{
    cb_cclip_constant_component2(ranges, 0, &a->t.x, &b->t.x);
    cb_cclip_constant_component2(ranges, 1, &a->t.y, &b->t.y);
    cb_cclip_constant_component2(ranges, 2, &a->t.z, &b->t.z);
    cb_cclip_stored_component2(grp, perm, wa, wb, ranges, 3, &a->q.x, &b->q.x);
    cb_cclip_stored_component2(grp, perm, wa, wb, ranges, 4, &a->q.y, &b->q.y);
    cb_cclip_stored_component2(grp, perm, wa, wb, ranges, 5, &a->q.z, &b->q.z);
    cb_vf w;
    cb_cclip_constant_component2(ranges, 6, &w, &w);
    const cb_vf d = cb_vf_load(rebuild);
    a->q.w = cb_cclip_rebuild_w(d, a->q.x, a->q.y, a->q.z, w);
    b->q.w = cb_cclip_rebuild_w(d, b->q.x, b->q.y, b->q.z, w);
    if (scaled) {
        cb_cclip_constant_component2(ranges, 7, &a->ds.x, &b->ds.x);
        cb_cclip_constant_component2(ranges, 8, &a->ds.y, &b->ds.y);
        cb_cclip_constant_component2(ranges, 9, &a->ds.z, &b->ds.z);
    }
}

/* The keys of a group of kind CB_CCLIP_GROUP_GENERAL (wa, wb: the group's words in each):
 * every component tested for its width, rebuilt components rebuilt in each key. */
CB_INLINE void cb_cclip_decode_general2(const struct cb_cclip *c, const cb_cclip_group *grp,
                                        const float *ranges, cb_vi perm, const uint32_t *wa,
                                        const uint32_t *wb, bool scaled, cb_key_group *a,
                                        cb_key_group *b)
{
    cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 0, &a->t.x, &b->t.x);
    cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 1, &a->t.y, &b->t.y);
    cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 2, &a->t.z, &b->t.z);
    cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 3, &a->q.x, &b->q.x);
    cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 4, &a->q.y, &b->q.y);
    cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 5, &a->q.z, &b->q.z);
    cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 6, &a->q.w, &b->q.w);
    if (grp->rebuilt != 0) {
        cb_cclip_rebuild_quat(c, grp, grp->rebuilt, &a->q);
        cb_cclip_rebuild_quat(c, grp, grp->rebuilt, &b->q);
    }
    if (scaled) {
        cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 7, &a->ds.x, &b->ds.x);
        cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 8, &a->ds.y, &b->ds.y);
        cb_cclip_decode_component2(grp, perm, wa, wb, ranges, 9, &a->ds.z, &b->ds.z);
    }
}

/* The keys whose words start at key_a and key_b (c->words + key * c->key_words) of group g
 * (key_a == key_b decodes one key). The scale deviations
 * only when `scaled` (which requires c->has_scale): otherwise a->ds and b->ds are left as they are,
 * for callers that do not read them (a pose job on a clip without scale) or set them first. A group
 * that stores no words (every joint of it constant in the clip: 3 of the embedded set's 8 groups
 * at W = 8) takes a path without the per-component tests, pointers or permutation, and so does
 * a group that stores only rotations' x y z (cb_cclip_decode_rotation2): the same values. */
CB_INLINE void cb_cclip_decode_group_at(const struct cb_cclip *c, const uint32_t *key_a,
                                        const uint32_t *key_b, size_t g, bool scaled,
                                        cb_key_group *a, cb_key_group *b)
{
    const cb_cclip_group *grp = &c->groups[g];
    const float *ranges = c->ranges + g * c->components * 2 * CB_W;
    if (grp->kind == CB_CCLIP_GROUP_ROTATION) {
        const cb_vi perm = cb_lane_perm_load((const cb_lane_perm *)c->perms + g);
        cb_cclip_decode_rotation2(grp, ranges, c->rebuild + grp->rebuild_at, perm,
                                  key_a + grp->word_offset, key_b + grp->word_offset, scaled, a, b);
        return;
    }
    if (grp->kind == CB_CCLIP_GROUP_CONSTANT) {
        cb_cclip_constant_component2(ranges, 0, &a->t.x, &b->t.x);
        cb_cclip_constant_component2(ranges, 1, &a->t.y, &b->t.y);
        cb_cclip_constant_component2(ranges, 2, &a->t.z, &b->t.z);
        cb_cclip_constant_component2(ranges, 3, &a->q.x, &b->q.x);
        cb_cclip_constant_component2(ranges, 4, &a->q.y, &b->q.y);
        cb_cclip_constant_component2(ranges, 5, &a->q.z, &b->q.z);
        cb_cclip_constant_component2(ranges, 6, &a->q.w, &b->q.w);
        if (scaled) {
            cb_cclip_constant_component2(ranges, 7, &a->ds.x, &b->ds.x);
            cb_cclip_constant_component2(ranges, 8, &a->ds.y, &b->ds.y);
            cb_cclip_constant_component2(ranges, 9, &a->ds.z, &b->ds.z);
        }
        /* Nothing to rebuild: a component rebuilt at every key needs a stored one beside it
         * (the loader folds a constant rotation's rebuilt component into its offset). */
        return;
    }
    const cb_vi perm = cb_lane_perm_load((const cb_lane_perm *)c->perms + g);
    cb_cclip_decode_general2(c, grp, ranges, perm, key_a + grp->word_offset,
                             key_b + grp->word_offset, scaled, a, b);
}

/* ------------------------------------------------------------------------------------------ */
/* The interpolated key: a group sampled between two keys                                     */

/* a + f (b - a): a difference, a product and a sum, each rounded (never fused), so the scalar
 * rule (cb_cclip_joint_lerp) gives the same bits. f = 0 gives a, and a = b gives a (never -0:
 * a decoded value is offset + a product of non-negative step and field), exactly: so a
 * component constant in the clip is its value at every f, whether a group lerps it or skips
 * the work (every lane of a group shares its path, the bits are per lane: the same at any W).
 * f = 1 (a clamped clip past its end) gives b within rounding, not always b's bits: there the
 * callers pass key b twice at f = 0 (cb_cclip_sample_keys). */
CB_INLINE cb_vf cb_cclip_lerp(cb_vf a, cb_vf b, cb_vf f)
{
    return cb_vf_add(a, cb_vf_mul(f, cb_vf_sub(b, a)));
}

CB_INLINE cb_soa_quat cb_cclip_lerp_quat(cb_soa_quat a, cb_soa_quat b, cb_vf f)
{
    return (cb_soa_quat){cb_cclip_lerp(a.x, b.x, f), cb_cclip_lerp(a.y, b.y, f),
                         cb_cclip_lerp(a.z, b.z, f), cb_cclip_lerp(a.w, b.w, f)};
}

/* The keys a sample at fraction f between key a and the next one (words *key_a and key_b)
 * decodes: at f = 1 (a clamped clip's end, or a looping time that rounds onto the next key)
 * key b alone at f = 0, since a + f (b - a) may round away from b, and the two keys lerped
 * ((1 - f) a + f b) give b's bits there. Returns the fraction to sample at. */
CB_INLINE float cb_cclip_sample_keys(const uint32_t **key_a, const uint32_t *key_b, float f)
{
    if (f == 1.0f) {
        *key_a = key_b;
        return 0.0f;
    }
    return f;
}

/* Group g sampled at fraction f between the keys whose words start at key_a and key_b (f in
 * every lane): the interpolated key, not normalized, decoded once
 * instead of two keys that the caller lerps. Per lane and component the rule is
 * cb_cclip_joint_lerp's: a component constant in the clip (width 0) is its offset, any other
 * is a + f (b - a) of its values at the two keys (cb_cclip_lerp; a rebuilt rotation component
 * rebuilt at each key first, so the rotation is the lerp of the two decoded keys). The rule
 * is per lane, so the bits do not depend on W; the group's path (its kind) only skips work.
 * The scale deviation only when `scaled` (s->ds left as it is otherwise). */
CB_INLINE void cb_cclip_sample_group_at(const struct cb_cclip *c, const uint32_t *key_a,
                                        const uint32_t *key_b, size_t g, cb_vf f, bool scaled,
                                        cb_key_group *s)
{
    const cb_cclip_group *grp = &c->groups[g];
    const float *ranges = c->ranges + g * c->components * 2 * CB_W;
    if (grp->kind == CB_CCLIP_GROUP_CONSTANT) {
        s->t = (cb_soa_vec3){cb_cclip_constant(ranges, 0), cb_cclip_constant(ranges, 1),
                             cb_cclip_constant(ranges, 2)};
        s->q = (cb_soa_quat){cb_cclip_constant(ranges, 3), cb_cclip_constant(ranges, 4),
                             cb_cclip_constant(ranges, 5), cb_cclip_constant(ranges, 6)};
        if (scaled) {
            s->ds = (cb_soa_vec3){cb_cclip_constant(ranges, 7), cb_cclip_constant(ranges, 8),
                                  cb_cclip_constant(ranges, 9)};
        }
        return;
    }
    const uint32_t *wa = key_a + grp->word_offset, *wb = key_b + grp->word_offset;
    const cb_vi perm = cb_lane_perm_load((const cb_lane_perm *)c->perms + g);
    if (grp->kind == CB_CCLIP_GROUP_ROTATION) {
        /* Only the rotation moves: its two keys lerped, the constants taken from key a. */
        cb_key_group a, b;
        cb_cclip_decode_rotation2(grp, ranges, c->rebuild + grp->rebuild_at, perm, wa, wb, scaled,
                                  &a, &b);
        s->t = a.t;
        s->q = cb_cclip_lerp_quat(a.q, b.q, f);
        if (scaled) {
            s->ds = a.ds;
        }
        return;
    }
    cb_key_group a, b;
    a.ds = b.ds = (cb_soa_vec3){cb_vf_zero(), cb_vf_zero(), cb_vf_zero()}; /* read if scaled */
    cb_cclip_decode_general2(c, grp, ranges, perm, wa, wb, scaled, &a, &b);
    s->t = (cb_soa_vec3){cb_cclip_lerp(a.t.x, b.t.x, f), cb_cclip_lerp(a.t.y, b.t.y, f),
                         cb_cclip_lerp(a.t.z, b.t.z, f)};
    s->q = cb_cclip_lerp_quat(a.q, b.q, f);
    if (scaled) {
        s->ds = (cb_soa_vec3){cb_cclip_lerp(a.ds.x, b.ds.x, f), cb_cclip_lerp(a.ds.y, b.ds.y, f),
                              cb_cclip_lerp(a.ds.z, b.ds.z, f)};
    }
}

/* The words of key `key` (c->words + key * c->key_words). */
CB_INLINE const uint32_t *cb_cclip_key_words(const struct cb_cclip *c, uint32_t key)
{
    return c->words + (size_t)key * c->key_words;
}

/* Keys ka and kb of group g (ka == kb decodes one key): cb_cclip_decode_group_at. */
CB_INLINE void cb_cclip_decode_group2(const struct cb_cclip *c, uint32_t ka, uint32_t kb, size_t g,
                                      bool scaled, cb_key_group *a, cb_key_group *b)
{
    cb_cclip_decode_group_at(c, cb_cclip_key_words(c, ka), cb_cclip_key_words(c, kb), g, scaled, a,
                             b);
}

/* Component k of joint j at `key` by the rule of a stored field (a rebuilt component: +0). */
static inline float cb_cclip_joint_field(const struct cb_cclip *c, uint32_t key, size_t j, int k)
{
    const size_t g = j / CB_SIMD_WIDTH, l = j % CB_SIMD_WIDTH;
    const cb_cclip_group *grp = &c->groups[g];
    const float *range = c->ranges + (g * c->components + (size_t)k) * 2 * CB_SIMD_WIDTH;
    const float step = cb_cclip_group_step(range[CB_SIMD_WIDTH + l], grp->shift[k]);
    uint32_t q = 0;
    if (grp->bits[k] > 0 && c->rank[j] != 0xFF) {
        uint32_t word = c->words[(size_t)key * c->key_words + grp->word_offset +
                                 (size_t)grp->word[k] * grp->active + c->rank[j]];
        q = (word >> grp->shift[k]) & (uint32_t)((1ull << grp->bits[k]) - 1u);
    }
    return cb_cclip_value(range[l], step, q);
}

/* Component k (0..9 as stored; 7..9 read 0 when the clip has no scale) of joint j at `key`,
 * one float: the group decoder's rule without SIMD, in its plain form (the field shifted down,
 * the stored step). The joint's word sits at its rank among the group's stored lanes; a joint
 * that stores none, or a component of width 0, has q = 0. */
static inline float cb_cclip_joint_value(const struct cb_cclip *c, uint32_t key, size_t j, int k)
{
    if ((uint32_t)k >= c->components) {
        return 0.0f;
    }
    if (k >= 3 && k <= 6 &&
        c->joint_bits[j * CB_CCLIP_COMPONENTS + (size_t)k] == CB_CCLIP_REBUILT) {
        float q[4]; /* the rebuilt one as +0 (offset 0, step 0) */
        for (int i = 0; i < 4; ++i) {
            q[i] =
                3 + i == k ? cb_cclip_value(0.0f, 0.0f, 0) : cb_cclip_joint_field(c, key, j, 3 + i);
        }
        return q[k - 3] + cb_cclip_rebuild(q);
    }
    return cb_cclip_joint_field(c, key, j, k);
}

/* Component k of joint j sampled at fraction f between keys `key` and key + 1, one float: the
 * rule of cb_cclip_sample_group_at, a + f (b - a) of the two keys' cb_cclip_joint_value. */
static inline float cb_cclip_joint_lerp(const struct cb_cclip *c, uint32_t key, float f, size_t j,
                                        int k)
{
    const float a = cb_cclip_joint_value(c, key, j, k), b = cb_cclip_joint_value(c, key + 1, j, k);
    return a + f * (b - a);
}

#endif
