/* Pose jobs: sample one clip, the fused sample + blend of many (with override and additive
 * layers, masks and rest-pose fallback), and the slerp crossfade. SIMD over the W joints of a
 * group; see crowdblend/pose.h for the contract and docs/performance.md for the figures.
 *
 * The fused blend keeps one accumulator group in registers (translation, rotation, scale
 * deviation: 10 vectors plus the weight sum) and streams every active clip's two frames through
 * it, so no pose per clip is ever stored. Per clip and group that is 14 or 20 vector loads and
 * about 30 arithmetic operations. A compressed clip (crowdblend/pack.h, COMPRESSED CLIPS) is
 * sampled the same way, its two keys decoded in registers by the group decoder
 * (src/compress/cclip_decode.h) instead of loaded: still no pose per clip. The sample job
 * decodes a compressed clip's interpolated key instead (sample_groups). */
#include <math.h>
#include <string.h>

#include "compress/cclip_decode.h"
#include "pose/pose_impl.h"
#include "simd/soa.h"

/* ------------------------------------------------------------------------------------------ */
/* Validation (shared with the scalar references in anim_ref.c)                               */

static cb_result check_clip_entry(const cb_pose_blend_job *job, size_t k, size_t joint_count,
                                  cb_error *err)
{
    const cb_blend_entry *e = &job->entries.ptr[k];
    if (e->clip == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "blend job: entries[%zu].clip is NULL", k);
    }
    if (e->clip->skeleton_signature != job->skeleton->signature) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "blend job: entries[%zu].clip \"%s\" was built for another skeleton "
                            "(%u joints; this skeleton has %zu, or differs in names or parents)",
                            k, e->clip->name, e->clip->joint_count, job->skeleton->joint_count);
    }
    if (!isfinite(e->weight) || !isfinite(e->time)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "blend job: entries[%zu].%s is %g", k,
                            !isfinite(e->weight) ? "weight" : "time",
                            (double)(!isfinite(e->weight) ? e->weight : e->time));
    }
    if (e->weight < 0.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "blend job: entries[%zu].weight %g < 0",
                            k, (double)e->weight);
    }
    if (e->mode < _CB_BLEND_MODE_DEFAULT || e->mode >= _CB_BLEND_MODE_COUNT) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "blend job: entries[%zu].mode %d is not a cb_blend_mode", k,
                            (int)e->mode);
    }
    if ((e->mode == CB_BLEND_MODE_ADDITIVE) != e->clip->additive) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "blend job: entries[%zu]: clip \"%s\" is %sadditive but the mode is %s",
                            k, e->clip->name, e->clip->additive ? "" : "not ",
                            e->mode == CB_BLEND_MODE_ADDITIVE ? "ADDITIVE" : "not ADDITIVE");
    }
    if (e->mask.ptr != NULL && e->mask.count < joint_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "blend job: entries[%zu].mask has %zu floats, needs %zu "
                            "(one per joint)",
                            k, e->mask.count, joint_count);
    }
    return CB_OK;
}

cb_result cb_pose_blend_check(const cb_pose_blend_job *job, cb_error *err, float *threshold)
{
    if (job == NULL || job->skeleton == NULL || job->out.ptr == NULL ||
        (job->entries.ptr == NULL && job->entries.count > 0)) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "blend job: %s is NULL",
                            job == NULL             ? "job"
                            : job->skeleton == NULL ? "skeleton"
                            : job->out.ptr == NULL  ? "out"
                                                    : "entries");
    }
    const struct cb_skeleton *s = job->skeleton;
    if (job->out.count < s->group_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "blend job: out has %zu groups, needs %zu",
                            job->out.count, s->group_count);
    }
    if (!cb_is_aligned(job->out.ptr, cb_simd_group_align())) {
        return cb_error_set(err, CB_ERR_MISALIGNED, "blend job: out is not aligned to %zu bytes",
                            cb_simd_group_align());
    }
    if (!isfinite(job->threshold)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "blend job: threshold is not finite");
    }
    if (job->threshold < 0.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "blend job: threshold %g < 0",
                            (double)job->threshold);
    }
    for (size_t k = 0; k < job->entries.count; ++k) {
        cb_result r = check_clip_entry(job, k, s->joint_count, err);
        if (r != CB_OK) {
            return r;
        }
    }
    *threshold = job->threshold == 0.0f ? CB_BLEND_DEFAULT_THRESHOLD : job->threshold;
    return CB_OK;
}

cb_result cb_pose_blend_job_validate(const cb_pose_blend_job *job, cb_error *err)
{
    float threshold;
    return cb_pose_blend_check(job, err, &threshold);
}

/* ------------------------------------------------------------------------------------------ */
/* Group helpers                                                                              */

/* Lanes at or past `valid` (the real joints of the last group) are padding. */
CB_INLINE cb_vm padding_lanes(size_t valid)
{
    CB_VF_ALIGNED static const float ids[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                8, 9, 10, 11, 12, 13, 14, 15};
    _Static_assert(CB_W <= 16, "lane ids cover W <= 16");
    return cb_vf_ge(cb_vf_load(ids), cb_vf_set1((float)valid));
}

/* Writes a group, with identity in the padding lanes of the skeleton's last group. */
CB_INLINE void store_group(cb_xform_group *dst, cb_soa_xform x, size_t g, size_t joint_count)
{
    size_t valid = joint_count - g * CB_W;
    if (valid < CB_W) {
        cb_vm pad = padding_lanes(valid);
        cb_vf zero = cb_vf_zero(), one = cb_vf_set1(1.0f);
        x.t = (cb_soa_vec3){cb_vf_select(pad, zero, x.t.x), cb_vf_select(pad, zero, x.t.y),
                            cb_vf_select(pad, zero, x.t.z)};
        x.q = (cb_soa_quat){cb_vf_select(pad, zero, x.q.x), cb_vf_select(pad, zero, x.q.y),
                            cb_vf_select(pad, zero, x.q.z), cb_vf_select(pad, one, x.q.w)};
        x.s = (cb_soa_vec3){cb_vf_select(pad, one, x.s.x), cb_vf_select(pad, one, x.s.y),
                            cb_vf_select(pad, one, x.s.z)};
    }
    cb_soa_xform_store(dst, x);
}

CB_INLINE cb_soa_vec3 load_vec3_at(const float *p, int component)
{
    return (cb_soa_vec3){cb_vf_load(p + component * CB_W), cb_vf_load(p + (component + 1) * CB_W),
                         cb_vf_load(p + (component + 2) * CB_W)};
}

CB_INLINE cb_soa_quat load_quat_at(const float *p)
{
    return (cb_soa_quat){cb_vf_load(p + CB_CLIP_Q * CB_W), cb_vf_load(p + (CB_CLIP_Q + 1) * CB_W),
                         cb_vf_load(p + (CB_CLIP_Q + 2) * CB_W),
                         cb_vf_load(p + (CB_CLIP_Q + 3) * CB_W)};
}

/* acc += wa a + wb b, per component. */
CB_INLINE cb_soa_vec3 vec3_acc2(cb_soa_vec3 acc, cb_vf wa, cb_soa_vec3 a, cb_vf wb, cb_soa_vec3 b)
{
    return (cb_soa_vec3){cb_vf_fmadd(wb, b.x, cb_vf_fmadd(wa, a.x, acc.x)),
                         cb_vf_fmadd(wb, b.y, cb_vf_fmadd(wa, a.y, acc.y)),
                         cb_vf_fmadd(wb, b.z, cb_vf_fmadd(wa, a.z, acc.z))};
}

CB_INLINE cb_soa_quat quat_acc2(cb_soa_quat acc, cb_vf wa, cb_soa_quat a, cb_vf wb, cb_soa_quat b)
{
    return (cb_soa_quat){cb_vf_fmadd(wb, b.x, cb_vf_fmadd(wa, a.x, acc.x)),
                         cb_vf_fmadd(wb, b.y, cb_vf_fmadd(wa, a.y, acc.y)),
                         cb_vf_fmadd(wb, b.z, cb_vf_fmadd(wa, a.z, acc.z)),
                         cb_vf_fmadd(wb, b.w, cb_vf_fmadd(wa, a.w, acc.w))};
}

/* Whether a clip's keys carry a scale deviation. A clip without scale has none in either form:
 * its compressed form may still store a scale track (a skeleton whose rest scale is not
 * exactly 1 gives default tracks a non-zero offset), which the raw form, cb_cclip_to_clip and
 * cb_clip_read_frames drop, and so do the pose jobs. */
CB_INLINE bool clip_scaled(const struct cb_clip *c)
{
    return c->has_scale && (c->packed == NULL || c->packed->has_scale);
}

/* Where a clip is sampled at a normalized time: keys (frames) i and i + 1 and the fraction f
 * between them. The same for every joint group, so the jobs locate each entry once, before
 * their loop over the groups (key_spans), not once per group. A compressed clip's keys may be
 * fewer than its source frames: cb_cclip_locate maps the time onto them, looping or clamped
 * as cb_clip_locate does. may_pack is a compile-time constant at every call: false where the
 * caller knows every clip is uncompressed, so that the uncompressed path compiles without the
 * decoder. */
typedef struct key_span {
    uint32_t i;
    float f;
} key_span;

CB_INLINE key_span locate_keys(const struct cb_clip *c, float time, bool may_pack)
{
    key_span k;
    if (may_pack && c->packed != NULL) {
        cb_cclip_locate(c->packed, time, c->looping, &k.i, &k.f);
    } else {
        cb_clip_locate(c, time, &k.i, &k.f);
    }
    return k;
}

/* A compressed clip's words of key span.i (NULL for an uncompressed clip). */
CB_INLINE const uint32_t *span_words(const struct cb_clip *c, key_span span, bool may_pack)
{
    return may_pack && c->packed != NULL ? cb_cclip_key_words(c->packed, span.i) : NULL;
}

/* The spans of the first KEY_SPANS entries of a job, located once (entries past them, rare,
 * are located per group: the same span, so the same bits). Only active entries are located:
 * an inactive one is never sampled. */
enum { KEY_SPANS = 16 };

typedef struct key_spans {
    key_span at[KEY_SPANS];
} key_spans;

CB_INLINE void key_spans_fill(key_spans *ks, const cb_blend_entry *entries, size_t count,
                              bool may_pack)
{
    for (size_t k = 0; k < count && k < KEY_SPANS; ++k) {
        if (entries[k].weight >= CB_BLEND_WEIGHT_EPSILON) {
            ks->at[k] = locate_keys(entries[k].clip, entries[k].time, may_pack);
        }
    }
}

CB_INLINE key_span entry_span(const key_spans *ks, const cb_blend_entry *entries, size_t k,
                              bool may_pack)
{
    return k < KEY_SPANS ? ks->at[k] : locate_keys(entries[k].clip, entries[k].time, may_pack);
}

/* Keys span.i and span.i + 1 of group g. An uncompressed clip's are two frame loads; a
 * compressed clip's are decoded in registers by the group decoder, from `words`
 * (span_words(c, span)). Everything after is the
 * same for both forms; the branch is per entry and group, and a clip is one form or the other.
 * The scale deviations are loaded only when `scaled` (clip_scaled(c), which the caller also
 * tests before it reads them): no stores of zeros for clips without scale. */
CB_INLINE void load_keys(const struct cb_clip *c, key_span span, const uint32_t *words, size_t g,
                         bool scaled, cb_key_group *a, cb_key_group *b, bool may_pack)
{
    const uint32_t i = span.i;
    if (may_pack && c->packed != NULL) {
        cb_cclip_decode_group_at(c->packed, words, words + c->packed->key_words, g, scaled, a, b);
        return;
    }
    const float *pa = cb_clip_group_ptr(c, i, g), *pb = pa + cb_clip_frame_floats(c);
    a->t = load_vec3_at(pa, CB_CLIP_T), b->t = load_vec3_at(pb, CB_CLIP_T);
    a->q = load_quat_at(pa), b->q = load_quat_at(pb);
    if (scaled) {
        a->ds = load_vec3_at(pa, CB_CLIP_S), b->ds = load_vec3_at(pb, CB_CLIP_S);
    }
}

/* One clip's sample of group g at its span, not normalized: translation, rotation
 * (1 - f) q_i + f q_(i+1), scale deviation. */
typedef cb_key_group sample;

CB_INLINE sample sample_group(const struct cb_clip *c, key_span span, const uint32_t *words,
                              size_t g, bool may_pack)
{
    cb_key_group a, b;
    const bool scaled = clip_scaled(c);
    load_keys(c, span, words, g, scaled, &a, &b, may_pack);
    const float f = span.f;
    cb_vf wb = cb_vf_set1(f), wa = cb_vf_set1(1.0f - f);
    cb_soa_vec3 zero3 = {cb_vf_zero(), cb_vf_zero(), cb_vf_zero()};
    cb_soa_quat zero4 = {cb_vf_zero(), cb_vf_zero(), cb_vf_zero(), cb_vf_zero()};
    sample s;
    s.t = vec3_acc2(zero3, wa, a.t, wb, b.t);
    s.q = quat_acc2(zero4, wa, a.q, wb, b.q);
    s.ds = scaled ? vec3_acc2(zero3, wa, a.ds, wb, b.ds) : zero3;
    return s;
}

/* Group g of a joint mask of `count` floats: one per joint, or padded to whole groups.
 * Validation guarantees count >= joint_count, so only padding lanes can lie past the end, and
 * only in the last group: those load as 0 from a zeroed stack copy rather than from past the
 * caller's buffer. 0 is what cb_skeleton_build_mask writes into a padded mask's padding, and
 * no real lane reads a padding lane (rest_fallback tests real lanes only, store_group writes
 * identity there), so the pose is bit-identical for a padded and an unpadded mask, on every
 * kernel set (W moves where the tail starts, never what a real lane sees).
 * Why here and not a padded copy made at validation: the job owns no scratch, and a copy per
 * masked entry would need memory the frame may not allocate. The cost on full groups is one
 * compare per entry and group, predicted (false on every group but the last); the graph
 * runtime passes padded masks and so never takes the copy. */
CB_INLINE cb_vf mask_group(const float *mask, size_t count, size_t g)
{
    size_t first = g * CB_W;
    if (first + CB_W <= count) {
        return cb_vf_loadu(mask + first);
    }
    CB_VF_ALIGNED float tail[CB_W] = {0};
    for (size_t l = 0; first + l < count; ++l) {
        tail[l] = mask[first + l];
    }
    return cb_vf_load(tail);
}

CB_INLINE cb_vf entry_weight(const cb_blend_entry *e, size_t g)
{
    cb_vf w = cb_vf_set1(e->weight);
    return e->mask.ptr != NULL ? cb_vf_mul(w, mask_group(e->mask.ptr, e->mask.count, g)) : w;
}

/* ------------------------------------------------------------------------------------------ */
/* Sampling one clip                                                                          */

cb_result cb_pose_sample_job_validate(const cb_pose_sample_job *job, cb_error *err)
{
    if (job == NULL || job->clip == NULL || job->out.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "sample job: %s is NULL",
                            job == NULL         ? "job"
                            : job->clip == NULL ? "clip"
                                                : "out");
    }
    if (!isfinite(job->time)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "sample job: time is %g", (double)job->time);
    }
    if (job->out.count < job->clip->group_count) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT, "sample job: out has %zu groups, needs %u",
                            job->out.count, job->clip->group_count);
    }
    if (!cb_is_aligned(job->out.ptr, cb_simd_group_align())) {
        return cb_error_set(err, CB_ERR_MISALIGNED, "sample job: out is not aligned to %zu bytes",
                            cb_simd_group_align());
    }
    return CB_OK;
}

/* The sample job on valid arguments; may_pack true when the clip is compressed, false when
 * it is not (see load_keys). A compressed clip is sampled as its interpolated key: each
 * decoded component lerped as a + f (b - a) (crowdblend/pose.h), the same values as the two
 * keys lerped up to rounding, for 18 % fewer instructions and 13 % less time
 * (docs/performance.md, "Session 14"). The blend job keeps the two keys: there the
 * interpolated key saved instructions but no time. */
CB_INLINE void sample_groups(const struct cb_clip *c, float time, cb_xform_group *out,
                             bool may_pack)
{
    cb_vf one = cb_vf_set1(1.0f);
    const key_span span = locate_keys(c, time, may_pack);
    const uint32_t *words = span_words(c, span, may_pack); /* once, not per group */
    const uint32_t *words_b = NULL;
    float fraction = span.f;
    if (may_pack) {
        words_b = words + c->packed->key_words;
        fraction = cb_cclip_sample_keys(&words, words_b, fraction); /* key b alone at f = 1 */
    }
    const cb_vf f = cb_vf_set1(fraction);
    for (size_t g = 0; g < c->group_count; ++g) {
        sample s;
        if (may_pack) {
            /* The clip is compressed: its interpolated key, decoded once per group
             * (cb_cclip_sample_group_at) instead of two keys then lerped. */
            s.ds = (cb_soa_vec3){cb_vf_zero(), cb_vf_zero(), cb_vf_zero()};
            cb_cclip_sample_group_at(c->packed, words, words_b, g, f, clip_scaled(c), &s);
        } else {
            s = sample_group(c, span, words, g, false);
        }
        cb_soa_xform x = {s.t,
                          cb_soa_quat_normalize(s.q),
                          {cb_vf_add(one, s.ds.x), cb_vf_add(one, s.ds.y), cb_vf_add(one, s.ds.z)}};
        store_group(&out[g], x, g, c->joint_count);
    }
}

cb_result cb_pose_sample_job_run(const cb_pose_sample_job *job, cb_error *err)
{
    cb_result r = cb_pose_sample_job_validate(job, err);
    if (r != CB_OK) {
        return r;
    }
    /* Two instances of the loop, as in the blend (cb_pose_blend_unchecked): the uncompressed
     * one without the decoder. */
    if (job->clip->packed != NULL) {
        sample_groups(job->clip, job->time, job->out.ptr, true);
    } else {
        sample_groups(job->clip, job->time, job->out.ptr, false);
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Fused sample + blend                                                                       */

typedef struct accum {
    cb_soa_vec3 t;
    cb_soa_quat q;
    cb_soa_vec3 ds;
    cb_vf wsum;
} accum;

/* Adds one NORMAL entry to the accumulator: w (1 - f) frame_i + w f frame_(i+1), with both
 * rotation weights negated where frame_i's rotation is in the other hemisphere of the sum. */
CB_INLINE void accumulate_entry(accum *acc, const cb_blend_entry *e, key_span span, size_t g,
                                bool may_pack)
{
    const struct cb_clip *c = e->clip;
    cb_key_group a, b;
    const bool scaled = clip_scaled(c);
    load_keys(c, span, span_words(c, span, may_pack), g, scaled, &a, &b, may_pack);
    const float f = span.f;
    cb_vf w = entry_weight(e, g);
    cb_vf wb = cb_vf_mul(w, cb_vf_set1(f));
    cb_vf wa = cb_vf_sub(w, wb);
    acc->t = vec3_acc2(acc->t, wa, a.t, wb, b.t);
    cb_vf flip = cb_vf_select(cb_vf_lt(cb_soa_quat_dot(a.q, acc->q), cb_vf_zero()),
                              cb_vf_sign_mask(), cb_vf_zero());
    acc->q = quat_acc2(acc->q, cb_vf_xor_sign(wa, flip), a.q, cb_vf_xor_sign(wb, flip), b.q);
    if (scaled) {
        acc->ds = vec3_acc2(acc->ds, wa, a.ds, wb, b.ds);
    }
    acc->wsum = cb_vf_add(acc->wsum, w);
}

/* Where the weight sum is below the threshold the rest pose fills the gap. Only real lanes
 * (real_bits) decide whether the group takes this path, so a padding lane (a NaN mask entry,
 * say) cannot change the bits of a real one, not even the sign of a zero. */
CB_INLINE void rest_fallback(accum *acc, const cb_xform_group *rest, cb_vf threshold,
                             unsigned real_bits)
{
    cb_vf wr = cb_vf_max(cb_vf_sub(threshold, acc->wsum), cb_vf_zero());
    if ((cb_vm_bits(cb_vf_gt(wr, cb_vf_zero())) & real_bits) == 0) {
        return;
    }
    /* The accumulator holds scale as its deviation from 1: so does the rest transform here. */
    cb_soa_xform r = cb_soa_xform_load(rest);
    cb_vf one = cb_vf_set1(1.0f);
    r.s = (cb_soa_vec3){cb_vf_sub(r.s.x, one), cb_vf_sub(r.s.y, one), cb_vf_sub(r.s.z, one)};
    cb_soa_xform a = {acc->t, acc->q, acc->ds};
    cb_soa_xform_accumulate(&a, r, wr);
    acc->t = a.t, acc->q = a.q, acc->ds = a.s;
    acc->wsum = cb_vf_add(acc->wsum, wr);
}

/* pose = nlerp(pose, normalized sample, a) with a = clamp(weight * mask, 0, 1). The pose's
 * rotation arrives unnormalized (one normalization at the very end serves every layer), so it
 * is normalized here to weigh it right, and leaves unnormalized again. */
CB_INLINE cb_soa_xform apply_override(cb_soa_xform x, const cb_blend_entry *e, key_span span,
                                      size_t g, bool may_pack)
{
    sample s = sample_group(e->clip, span, span_words(e->clip, span, may_pack), g, may_pack);
    cb_vf a = cb_vf_clamp01(entry_weight(e, g));
    cb_vf ia = cb_vf_sub(cb_vf_set1(1.0f), a);
    cb_vf one = cb_vf_set1(1.0f);
    cb_soa_quat q = cb_soa_quat_normalize(x.q);
    cb_soa_quat sq = cb_soa_quat_align(cb_soa_quat_normalize(s.q), q);
    x.t = (cb_soa_vec3){cb_vf_fmadd(a, s.t.x, cb_vf_mul(ia, x.t.x)),
                        cb_vf_fmadd(a, s.t.y, cb_vf_mul(ia, x.t.y)),
                        cb_vf_fmadd(a, s.t.z, cb_vf_mul(ia, x.t.z))};
    x.q = (cb_soa_quat){
        cb_vf_fmadd(a, sq.x, cb_vf_mul(ia, q.x)), cb_vf_fmadd(a, sq.y, cb_vf_mul(ia, q.y)),
        cb_vf_fmadd(a, sq.z, cb_vf_mul(ia, q.z)), cb_vf_fmadd(a, sq.w, cb_vf_mul(ia, q.w))};
    x.s = (cb_soa_vec3){cb_vf_fmadd(a, cb_vf_add(one, s.ds.x), cb_vf_mul(ia, x.s.x)),
                        cb_vf_fmadd(a, cb_vf_add(one, s.ds.y), cb_vf_mul(ia, x.s.y)),
                        cb_vf_fmadd(a, cb_vf_add(one, s.ds.z), cb_vf_mul(ia, x.s.z))};
    return x;
}

/* t += a dt, q = q * (identity + a (dq - identity)), s *= 1 + a ds, with dq the sampled delta
 * on the identity's side (w >= 0). identity + a (dq - identity) is nlerp(identity, dq, a) up to
 * its length, which the final normalization removes. Written this way a zero delta changes
 * nothing, bit for bit: the lerp of two identity frames is exactly the identity ((1 - f) + f
 * rounds to 1 for every f in [0, 1]), every product below is by exactly 0 or 1, and the pose's
 * rotation is still the unnormalized one that the final normalization would have seen. */
CB_INLINE cb_soa_xform apply_additive(cb_soa_xform x, const cb_blend_entry *e, key_span span,
                                      size_t g, bool may_pack)
{
    sample s = sample_group(e->clip, span, span_words(e->clip, span, may_pack), g, may_pack);
    cb_vf a = entry_weight(e, g);
    cb_vf one = cb_vf_set1(1.0f);
    cb_soa_quat dq = s.q;
    cb_vf flip = cb_vf_select(cb_vf_lt(dq.w, cb_vf_zero()), cb_vf_sign_mask(), cb_vf_zero());
    dq = (cb_soa_quat){cb_vf_mul(a, cb_vf_xor_sign(dq.x, flip)),
                       cb_vf_mul(a, cb_vf_xor_sign(dq.y, flip)),
                       cb_vf_mul(a, cb_vf_xor_sign(dq.z, flip)),
                       cb_vf_fmadd(a, cb_vf_sub(cb_vf_xor_sign(dq.w, flip), one), one)};
    x.t = (cb_soa_vec3){cb_vf_fmadd(a, s.t.x, x.t.x), cb_vf_fmadd(a, s.t.y, x.t.y),
                        cb_vf_fmadd(a, s.t.z, x.t.z)};
    x.q = cb_soa_quat_mul(x.q, dq);
    x.s = (cb_soa_vec3){cb_vf_mul(x.s.x, cb_vf_fmadd(a, s.ds.x, one)),
                        cb_vf_mul(x.s.y, cb_vf_fmadd(a, s.ds.y, one)),
                        cb_vf_mul(x.s.z, cb_vf_fmadd(a, s.ds.z, one))};
    return x;
}

CB_INLINE bool entry_active(const cb_blend_entry *e, cb_blend_mode mode)
{
    cb_blend_mode m = e->mode == _CB_BLEND_MODE_DEFAULT ? CB_BLEND_MODE_NORMAL : e->mode;
    return m == mode && e->weight >= CB_BLEND_WEIGHT_EPSILON;
}

/* The blend of valid entries; may_pack false when no entry's clip is compressed (see
 * load_keys). */
CB_INLINE void blend_groups(const struct cb_skeleton *s, const cb_blend_entry *entries,
                            size_t count, float threshold, cb_xform_group *out, bool layers,
                            bool may_pack)
{
    const cb_vf thr = cb_vf_set1(threshold);
    const cb_vf one = cb_vf_set1(1.0f);
    key_spans ks;
    key_spans_fill(&ks, entries, count, may_pack);
    for (size_t g = 0; g < s->group_count; ++g) {
        cb_vf z = cb_vf_zero();
        accum acc = {{z, z, z}, {z, z, z, z}, {z, z, z}, z};
        for (size_t k = 0; k < count; ++k) {
            if (entry_active(&entries[k], CB_BLEND_MODE_NORMAL)) {
                accumulate_entry(&acc, &entries[k], entry_span(&ks, entries, k, may_pack), g,
                                 may_pack);
            }
        }
        size_t valid = s->joint_count - g * CB_W;
        unsigned real_bits = valid >= CB_W ? CB_VM_ALL_BITS : (1u << valid) - 1u;
        rest_fallback(&acc, &s->rest[g], thr, real_bits);
        /* The sum is >= threshold > 0 in every lane here. */
        cb_vf inv = cb_vf_div(one, acc.wsum);
        cb_soa_xform x = {
            {cb_vf_mul(acc.t.x, inv), cb_vf_mul(acc.t.y, inv), cb_vf_mul(acc.t.z, inv)},
            acc.q,
            {cb_vf_fmadd(acc.ds.x, inv, one), cb_vf_fmadd(acc.ds.y, inv, one),
             cb_vf_fmadd(acc.ds.z, inv, one)},
        };
        if (layers) {
            for (size_t k = 0; k < count; ++k) {
                if (entry_active(&entries[k], CB_BLEND_MODE_OVERRIDE)) {
                    x = apply_override(x, &entries[k], entry_span(&ks, entries, k, may_pack), g,
                                       may_pack);
                }
            }
            for (size_t k = 0; k < count; ++k) {
                if (entry_active(&entries[k], CB_BLEND_MODE_ADDITIVE)) {
                    x = apply_additive(x, &entries[k], entry_span(&ks, entries, k, may_pack), g,
                                       may_pack);
                }
            }
        }
        x.q = cb_soa_quat_normalize(x.q);
        store_group(&out[g], x, g, s->joint_count);
    }
}

/* The instance with compressed clips, in a function of its own: inlined beside the other, it
 * shifted the uncompressed loop's register allocation (3,782 instructions per character in the
 * 3-clip blend against 3,778 before the decoder's paths per group, and 3,764 apart: callgrind,
 * docs/performance.md "Sampling cost"). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void
blend_packed(const struct cb_skeleton *s, const cb_blend_entry *entries, size_t count,
             float threshold, cb_xform_group *out, bool layers)
{
    blend_groups(s, entries, count, threshold, out, layers, true);
}

void cb_pose_blend_unchecked(const cb_skeleton *skeleton, const cb_blend_entry *entries,
                             size_t count, float threshold, cb_xform_group *out)
{
    CB_ASSERT(cb_pose_blend_job_validate(&(cb_pose_blend_job){.skeleton = skeleton,
                                                              .entries = {entries, count},
                                                              .threshold = threshold,
                                                              .out = {out, skeleton->group_count}},
                                         NULL) == CB_OK);
    bool layers = false, packed = false;
    for (size_t k = 0; k < count; ++k) {
        layers = layers || entry_active(&entries[k], CB_BLEND_MODE_OVERRIDE) ||
                 entry_active(&entries[k], CB_BLEND_MODE_ADDITIVE);
        packed = packed || (entries[k].clip != NULL && entries[k].clip->packed != NULL);
    }
    /* Two instances of the loop: with uncompressed clips only, the decoder is not even in the
     * code (measured: its mere presence slowed the uncompressed blend by 5-8 %). */
    if (packed) {
        blend_packed(skeleton, entries, count, threshold, out, layers);
    } else {
        blend_groups(skeleton, entries, count, threshold, out, layers, false);
    }
}

cb_result cb_pose_blend_job_run(const cb_pose_blend_job *job, cb_error *err)
{
    float threshold;
    cb_result r = cb_pose_blend_check(job, err, &threshold);
    if (r == CB_OK) {
        cb_pose_blend_unchecked(job->skeleton, job->entries.ptr, job->entries.count, threshold,
                                job->out.ptr);
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Crossfade                                                                                  */

void cb_pose_layers_unchecked(const cb_skeleton *skeleton, cb_xform_group *pose,
                              const cb_blend_entry *entries, size_t count)
{
    const struct cb_skeleton *s = skeleton;
    key_spans ks;
    key_spans_fill(&ks, entries, count, true);
    for (size_t g = 0; g < s->group_count; ++g) {
        cb_soa_xform x = cb_soa_xform_load(&pose[g]);
        for (size_t k = 0; k < count; ++k) {
            if (entry_active(&entries[k], CB_BLEND_MODE_OVERRIDE)) {
                x = apply_override(x, &entries[k], entry_span(&ks, entries, k, true), g, true);
            } else if (entry_active(&entries[k], CB_BLEND_MODE_ADDITIVE)) {
                x = apply_additive(x, &entries[k], entry_span(&ks, entries, k, true), g, true);
            }
        }
        x.q = cb_soa_quat_normalize(x.q);
        store_group(&pose[g], x, g, s->joint_count);
    }
}

cb_result cb_pose_crossfade_job_validate(const cb_pose_crossfade_job *job, cb_error *err)
{
    if (job == NULL || job->skeleton == NULL || job->from.ptr == NULL || job->to.ptr == NULL ||
        job->out.ptr == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "crossfade job: %s is NULL",
                            job == NULL             ? "job"
                            : job->skeleton == NULL ? "skeleton"
                            : job->from.ptr == NULL ? "from"
                            : job->to.ptr == NULL   ? "to"
                                                    : "out");
    }
    size_t groups = job->skeleton->group_count;
    if (job->from.count < groups || job->to.count < groups || job->out.count < groups) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "crossfade job: from, to and out need %zu groups (have %zu, %zu, %zu)",
                            groups, job->from.count, job->to.count, job->out.count);
    }
    size_t joints = job->skeleton->joint_count;
    if (job->mask.ptr != NULL && job->mask.count < joints) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "crossfade job: mask has %zu floats, needs %zu (one per joint)",
                            job->mask.count, joints);
    }
    size_t align = cb_simd_group_align();
    if (!cb_is_aligned(job->from.ptr, align) || !cb_is_aligned(job->to.ptr, align) ||
        !cb_is_aligned(job->out.ptr, align)) {
        return cb_error_set(err, CB_ERR_MISALIGNED,
                            "crossfade job: from, to and out must be aligned to %zu bytes", align);
    }
    if (!isfinite(job->weight)) {
        return cb_error_set(err, CB_ERR_NOT_FINITE, "crossfade job: weight is not finite");
    }
    if (job->weight < 0.0f || job->weight > 1.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "crossfade job: weight %g is not in [0, 1]", (double)job->weight);
    }
    return CB_OK;
}

/* The crossfade on valid arguments, with a mask of mask_count >= joint_count floats. */
static void crossfade(const struct cb_skeleton *s, const cb_xform_group *from,
                      const cb_xform_group *to, float weight, const float *mask, size_t mask_count,
                      cb_xform_group *out)
{
    for (size_t g = 0; g < s->group_count; ++g) {
        cb_vf w = cb_vf_set1(weight);
        if (mask != NULL) {
            w = cb_vf_mul(w, mask_group(mask, mask_count, g));
        }
        cb_soa_xform a = cb_soa_xform_load(&from[g]);
        cb_soa_xform b = cb_soa_xform_load(&to[g]);
        cb_soa_xform x = {cb_soa_vec3_lerp(a.t, b.t, w), cb_soa_quat_slerp(a.q, b.q, w),
                          cb_soa_vec3_lerp(a.s, b.s, w)};
        /* All of group g is read before it is written: out may be from or to. */
        store_group(&out[g], x, g, s->joint_count);
    }
}

void cb_pose_crossfade_unchecked(const cb_skeleton *skeleton, const cb_xform_group *from,
                                 const cb_xform_group *to, float weight, const float *mask,
                                 cb_xform_group *out)
{
    const struct cb_skeleton *s = skeleton;
    size_t soa = s->group_count * CB_W;
    CB_ASSERT(cb_pose_crossfade_job_validate(
                  &(cb_pose_crossfade_job){.skeleton = skeleton,
                                           .from = {from, s->group_count},
                                           .to = {to, s->group_count},
                                           .weight = weight,
                                           .mask = {mask, mask != NULL ? soa : 0},
                                           .out = {out, s->group_count}},
                  NULL) == CB_OK);
    crossfade(s, from, to, weight, mask, soa, out);
}

cb_result cb_pose_crossfade_job_run(const cb_pose_crossfade_job *job, cb_error *err)
{
    cb_result r = cb_pose_crossfade_job_validate(job, err);
    if (r == CB_OK) {
        crossfade(job->skeleton, job->from.ptr, job->to.ptr, job->weight, job->mask.ptr,
                  job->mask.count, job->out.ptr);
    }
    return r;
}
