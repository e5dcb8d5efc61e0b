/* Unpacking bit fields from W lanes of 32-bit words: what a compressed clip's group decoder
 * needs (src/compress). Each lane holds its own word; a field at the same bit position in every
 * lane is cut out with two uniform shifts and converted to float.
 *
 * The shift counts are run-time values (they come from the clip's layout table), so the shifts
 * take their count from a vector register (psrld/pslld with an xmm count: SSE2, AVX2, AVX-512
 * alike) rather than from an immediate. A count of 32 or more gives 0, which is how a field of
 * width 0 decodes to 0 with no branch. */
#ifndef CROWDBLEND_SIMD_VBITS_H
#define CROWDBLEND_SIMD_VBITS_H

#include "simd/vmath.h"

/* A shift count as the shift instructions take it (the low 64 bits of an xmm register). */
typedef simde__m128i cb_vcount;

CB_INLINE cb_vcount cb_vcount_make(uint32_t n)
{
    return simde_mm_cvtsi32_si128((int32_t)n);
}

/* A count stored as a 64-bit integer, loaded straight into the count register (one load
 * instead of a byte load and a move to the vector unit). */
CB_INLINE cb_vcount cb_vcount_load(const uint64_t *n)
{
    return simde_mm_loadl_epi64((const simde__m128i *)(const void *)n);
}

/* Where each lane of a packed vector comes from: lane l of the result is element src[l] of the
 * source, or 0 when src[l] < 0 (cb_lane_perm_init). A compressed clip stores only the words of
 * the joints that have bits and puts them back in their lanes with one permute. The encoding is
 * the width's own: an index vector and a lane mask at W = 16 (vpermd with zero-masking), an
 * index vector and an and-mask at W = 8 (vpermd + vpand), a byte shuffle control at W = 4
 * (pshufb, which zeroes by itself). */
typedef struct cb_lane_perm {
    CB_VF_ALIGNED uint32_t index[CB_W];
    uint32_t keep[CB_W];
    uint32_t keep_bits;
} cb_lane_perm;

static inline void cb_lane_perm_init(cb_lane_perm *p, const int32_t src[CB_W])
{
    p->keep_bits = 0;
    for (uint32_t l = 0; l < CB_W; ++l) {
        bool on = src[l] >= 0;
        uint32_t s = on ? (uint32_t)src[l] : 0u;
        p->keep[l] = on ? 0xFFFFFFFFu : 0u;
        p->keep_bits |= on ? 1u << l : 0u;
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
CB_INLINE cb_vi cb_vi_place(cb_vi a, const cb_lane_perm *p)
{
    return simde_mm512_maskz_permutexvar_epi32((simde__mmask16)p->keep_bits,
                                               simde_mm512_load_si512(p->index), a);
}
CB_INLINE cb_vi cb_vi_sll_n(cb_vi a, cb_vcount n)
{
    return simde_mm512_sll_epi32(a, n);
}
CB_INLINE cb_vi cb_vi_srl_n(cb_vi a, cb_vcount n)
{
    return simde_mm512_srl_epi32(a, n);
}
/* Lanes are below 2^24 here (fields are at most 24 bits), so the conversion is exact. */
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
CB_INLINE cb_vi cb_vi_place(cb_vi a, const cb_lane_perm *p)
{
    cb_vi placed = simde_mm256_permutevar8x32_epi32(a, cb_vi_load(p->index));
    return simde_mm256_and_si256(placed, cb_vi_load(p->keep));
}
CB_INLINE cb_vi cb_vi_sll_n(cb_vi a, cb_vcount n)
{
    return simde_mm256_sll_epi32(a, n);
}
CB_INLINE cb_vi cb_vi_srl_n(cb_vi a, cb_vcount n)
{
    return simde_mm256_srl_epi32(a, n);
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
CB_INLINE cb_vi cb_vi_place(cb_vi a, const cb_lane_perm *p)
{
    return simde_mm_shuffle_epi8(a, cb_vi_load(p->index));
}
CB_INLINE cb_vi cb_vi_sll_n(cb_vi a, cb_vcount n)
{
    return simde_mm_sll_epi32(a, n);
}
CB_INLINE cb_vi cb_vi_srl_n(cb_vi a, cb_vcount n)
{
    return simde_mm_srl_epi32(a, n);
}
CB_INLINE cb_vf cb_vf_from_u32(cb_vi a)
{
    return simde_mm_cvtepi32_ps(a);
}
#endif

/* The field of `width` bits starting at bit `shift` of every lane, as floats: shifting left by
 * 32 - shift - width drops the bits above the field, shifting right by 32 - width drops the bits
 * below it. lcount and rcount are those two counts (cb_vcount_make); width 0 gives 0.
 * Requires shift + width <= 32 and width <= 24. */
CB_INLINE cb_vf cb_vf_unpack_field(cb_vi words, cb_vcount lcount, cb_vcount rcount)
{
    return cb_vf_from_u32(cb_vi_srl_n(cb_vi_sll_n(words, lcount), rcount));
}

#endif
