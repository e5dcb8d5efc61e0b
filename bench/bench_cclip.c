/* Compressed clips against uncompressed ones: the fused sample + blend of 3 clips per character
 * (cb_pose_blend_job_run on uncompressed clips and on the same clips kept compressed, whose keys
 * the job decodes per joint group in front of the same math), and sampling one clip.
 *   pose_blend3_raw_simd/C/M     C characters, 3 of M uncompressed clips each
 *   pose_blend3_cclip_simd/C/M   the same clips compressed (0.1 mm at 3 cm)
 *   clip_sample_raw_simd/C/M     cb_pose_sample_job, one clip per character
 *   clip_sample_cclip_simd/C/M   cb_pose_sample_job on the compressed clips
 * M = 17 is the embedded locomotion set (all of it fits in L2 uncompressed); M = 544 is 32 copies
 * of it (24 MB uncompressed at W = 16, beyond L2 and most of L3; 5 MB compressed), as a game with
 * hundreds of clips would hold. Items are characters; per_joint_clip is ns per joint and clip.
 * crowdblend-cclip-report measures the same A/B interleaved, with medians and the ratio. */
#include <stdlib.h>
#include <string.h>

#include "bench_all.h"
#include "bench_cclip_set.h"
#include "shim.h"

typedef enum kind { BLEND_RAW, BLEND_CCLIP, SAMPLE_RAW, SAMPLE_CCLIP } kind;

static void bench(cb_bench_state *st, void *user)
{
    kind kd = (kind)(intptr_t)user;
    size_t chars = (size_t)cb_bench_range(st, 0), copies = (size_t)cb_bench_range(st, 1) / 17;
    cb_bench_clip_set set;
    if (!cb_bench_clip_set_make(&set, copies, chars, 0xC11Fu)) {
        cb_bench_skip_with_error(st, "clip set: out of memory or compression failed");
        return;
    }
    size_t k = kd == BLEND_RAW || kd == BLEND_CCLIP ? 3 : 1;
    while (cb_bench_keep_running(st)) {
        switch (kd) {
        case BLEND_RAW:
        case BLEND_CCLIP:
            cb_bench_clip_set_blend(&set, kd == BLEND_CCLIP);
            break;
        case SAMPLE_RAW:
        case SAMPLE_CCLIP:
            cb_bench_clip_set_sample(&set, kd == SAMPLE_CCLIP);
            break;
        }
        cb_bench_keep(set.pose);
    }
    double items = (double)chars * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    cb_bench_set_counter(st, "per_joint_clip", items * (double)k * (double)set.joints,
                         CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    cb_bench_clip_set_free(&set);
}

void cb_bench_register_cclip(void)
{
    static const struct {
        const char *name;
        kind kd;
    } list[] = {
        {"pose_blend3_raw_simd", BLEND_RAW},
        {"pose_blend3_cclip_simd", BLEND_CCLIP},
        {"clip_sample_raw_simd", SAMPLE_RAW},
        {"clip_sample_cclip_simd", SAMPLE_CCLIP},
    };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; ++i) {
        cb_bench *b = cb_bench_register(list[i].name, bench, (void *)(intptr_t)list[i].kd);
        cb_bench_args2(b, 1024, 17);
        cb_bench_args2(b, 4096, 544);
    }
}
