/* The clip set both compressed-clip benchmarks use (bench/bench_cclip.c and
 * bench/cclip_report.c): `copies` copies of the embedded set's 17 locomotion clips, each also
 * compressed (0.1 mm at 3 cm), and characters that each blend 3 distinct clips of the set at
 * their own time and weights, exactly alike in the uncompressed and the compressed form. */
#ifndef CROWDBLEND_BENCH_CCLIP_SET_H
#define CROWDBLEND_BENCH_CCLIP_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "compress/cclip_impl.h"
#include "crowdblend/crowdblend.h"

typedef struct cb_bench_clip_set {
    size_t copies, clips, chars, joints, groups;
    cb_embedded **sets;            /* copies embedded sets: the uncompressed clips */
    const cb_clip **raw;           /* clips */
    cb_cclip **packed;             /* clips, in the same order */
    cb_clip **packed_clips;        /* clips: each packed clip as a clip that stays
                                      compressed (what a pack gives by default) */
    cb_blend_entry *raw_entries;   /* chars x 3 */
    cb_blend_entry *cclip_entries; /* chars x 3, the same with the compressed clips */
    const cb_skeleton *skeleton;
    cb_xform_group *pose;
    size_t raw_bytes, packed_bytes; /* memory of all clips */
} cb_bench_clip_set;

bool cb_bench_clip_set_make(cb_bench_clip_set *s, size_t copies, size_t chars, uint64_t seed);
void cb_bench_clip_set_free(cb_bench_clip_set *s);

/* One pass over the characters: the fused blend of their 3 clips into one scratch pose (the
 * pose job, cb_pose_blend_job_run, on either form). */
void cb_bench_clip_set_blend(const cb_bench_clip_set *s, bool compressed);
/* One pass: each character's first clip sampled into the scratch pose (cb_pose_sample_job_run). */
void cb_bench_clip_set_sample(const cb_bench_clip_set *s, bool compressed);

#endif
