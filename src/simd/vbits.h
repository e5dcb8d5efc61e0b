/* Unpacking bit fields from W lanes of 32-bit words: what a compressed clip's group decoder
 * needs (src/compress). Each lane holds its own word; a field at the same bit position in every
 * lane is cut out with one AND of a uniform mask and converted to float as it lies (the field
 * times 2^shift: the decoder's step carries the 2^-shift, src/compress/cclip_decode.h). A field
 * never reaches bit 31, so the signed conversions of AVX2 and SSE read it right. */
#ifndef CROWDBLEND_SIMD_VBITS_H
#define CROWDBLEND_SIMD_VBITS_H

#include "simd/vmath.h"

/* Where each lane of a packed vector comes from: lane l of the result is element src[l] of the
 * source when src[l] >= 0 (cb_lane_perm_init). A compressed clip stores only the words of the
 * joints that have bits and puts them back in their lanes with one permute. The other lanes get
 * some stored word (element 0) at W = 8 and 16, 0 at W = 4: the decoder gives those lanes a step
 * of 0, so what they hold never shows. The encoding is the width's own: an index vector at
 * W = 16 and 8 (vpermd), a byte shuffle control at W = 4 (pshufb). */
typedef struct cb_lane_perm {
    CB_VF_ALIGNED uint32_t index[CB_W];
} cb_lane_perm;

static inline void cb_lane_perm_init(cb_lane_perm *p, const int32_t src[CB_W])
{
    for (uint32_t l = 0; l < CB_W; ++l) {
        bool on = src[l] >= 0;
        uint32_t s = on ? (uint32_t)src[l] : 0u;
#if CB_SIMD_WIDTH == 4
        /* Bytes 4s .. 4s + 3 of the source, or 0x80 (zero) in every byte. */
        p->index[l] =
            on ? (4 * s) | (4 * s + 1) << 8 | (4 * s + 2) << 16 | (4 * s + 3) << 24 : 0x80808080u;
#else
        p->index[l] = s;
#endif
    }
}

#if CB_SIMD_WIDTH == 16
CB_INLINE cb_vi cb_vi_load(const uint32_t *p)
{
    return simde_mm512_load_si512(p);
}
CB_INLINE cb_vi cb_vi_loadu(const uint32_t *p)
{
    return simde_mm512_loadu_si512(p);
}
/* The permutation's control, loaded once per group. */
CB_INLINE cb_vi cb_lane_perm_load(const cb_lane_perm *p)
{
    return simde_mm512_load_si512(p->index);
}
CB_INLINE cb_vi cb_vi_place(cb_vi a, cb_vi control)
{
    return simde_mm512_permutexvar_epi32(control, a);
}
/* Lanes are a field of at most 24 bits times a power of two below 2^31: exact (and the same
 * value as the narrower widths' signed conversion). */
CB_INLINE cb_vf cb_vf_from_u32(cb_vi a)
{
    return simde_mm512_cvtepu32_ps(a);
}
#elif CB_SIMD_WIDTH == 8
CB_INLINE cb_vi cb_vi_load(const uint32_t *p)
{
    return simde_mm256_load_si256((const void *)p);
}
CB_INLINE cb_vi cb_vi_loadu(const uint32_t *p)
{
    return simde_mm256_loadu_si256(p);
}
CB_INLINE cb_vi cb_lane_perm_load(const cb_lane_perm *p)
{
    return cb_vi_load(p->index);
}
CB_INLINE cb_vi cb_vi_place(cb_vi a, cb_vi control)
{
    return simde_mm256_permutevar8x32_epi32(a, control);
}
CB_INLINE cb_vf cb_vf_from_u32(cb_vi a)
{
    return simde_mm256_cvtepi32_ps(a);
}
#else
CB_INLINE cb_vi cb_vi_load(const uint32_t *p)
{
    return simde_mm_load_si128((const void *)p);
}
CB_INLINE cb_vi cb_vi_loadu(const uint32_t *p)
{
    return simde_mm_loadu_si128(p);
}
CB_INLINE cb_vi cb_lane_perm_load(const cb_lane_perm *p)
{
    return cb_vi_load(p->index);
}
CB_INLINE cb_vi cb_vi_place(cb_vi a, cb_vi control)
{
    return simde_mm_shuffle_epi8(a, control);
}
CB_INLINE cb_vf cb_vf_from_u32(cb_vi a)
{
    return simde_mm_cvtepi32_ps(a);
}
#endif

/* The field under `mask` (its bits in place) of every lane, as floats: the field times
 * 2^shift, exact (at most 24 significant bits). The mask must leave bit 31 out. */
CB_INLINE cb_vf cb_vf_masked_field(cb_vi words, cb_vi mask)
{
    return cb_vf_from_u32(cb_vi_and(words, mask));
}

#endif
