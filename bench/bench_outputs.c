/* Output layouts: what a character's frame costs when its model-space output is a 4x4 matrix per
 * joint (64 bytes, the default), a 3x4 matrix (48), quaternion + translation + uniform scale
 * (qts, 32) or its 16-bit form (qts16, 16), at 1,000, 10,000 and 100,000 characters.
 *   ltm_output_<layout>_simd/C/64   per character: the fused blend of 3 embedded clips into a
 *                                   scratch pose (as W1), then the output into its own slot
 *   ltm_output_qts_ref/C/64         qts through the scalar prototype (cb_model_qts_run_ref),
 *                                   the same bits as ltm_output_qts_simd
 *   ltm_output_none_simd/C/64       the blend alone: what the output adds is the difference
 * At 1,000 characters the outputs (4 MB of 4x4) stay in L3; at 100,000 (410 MB) they stream to
 * memory, which is the cache cliff of W3. max_err_um: the largest distance, over the joints of
 * 256 characters and the points at +-3 cm on each joint's axes, between the layout's transform
 * and the 4x4 output (micrometres). Use --benchmark_enable_random_interleaving=true on a busy
 * machine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/prng.h"
#include "bench_all.h"
#include "crowdblend/crowdblend.h"
#include "shim.h"
#include "simd/model_qts.h"

typedef enum layout { NONE, MAT4, MAT3X4, QTS_REF, QTS, QTS16 } layout;

static const size_t layout_bytes[] = {0, 64, 48, 32, 32, 16};

typedef struct outputs {
    cb_embedded *set;
    const cb_skeleton *skel;
    size_t chars, joints, groups;
    cb_blend_entry *entries; /* chars x 3 */
    cb_xform_group *pose;
    float *scratch; /* joints x 8 */
    unsigned char *out;
} outputs;

static void outputs_free(outputs *o)
{
    cb_embedded_destroy(o->set);
    free(o->entries), free(o->pose), free(o->scratch), free(o->out);
}

static bool outputs_make(outputs *o, size_t chars, layout l)
{
    memset(o, 0, sizeof *o);
    if (cb_embedded_create(NULL, &o->set, NULL) != CB_OK) {
        return false;
    }
    o->skel = cb_embedded_skeleton(o->set);
    o->chars = chars;
    o->joints = cb_skeleton_joint_count(o->skel);
    o->groups = cb_skeleton_group_count(o->skel);
    o->entries = malloc(chars * 3 * sizeof *o->entries);
    o->pose = aligned_alloc(cb_simd_group_align(), cb_skeleton_pose_bytes(o->skel));
    o->scratch = malloc(o->joints * 8 * sizeof(float));
    size_t bytes = chars * o->joints * (l == NONE ? 64 : layout_bytes[l]);
    o->out = malloc(bytes);
    if (o->entries == NULL || o->pose == NULL || o->scratch == NULL || o->out == NULL) {
        outputs_free(o);
        return false;
    }
    /* First touch outside the timing. Not zeros: the compiler turns malloc + memset(0) into
     * calloc, whose fresh pages would fault inside the timed loop. */
    memset(o->out, 0x7F, bytes);
    cb_prng r = cb_prng_seed(0x07u + chars);
    for (size_t c = 0; c < chars; ++c) {
        float t = cb_prng_range(&r, 0.0f, 1.0f);
        for (size_t e = 0; e < 3; ++e) {
            /* Clips 1..16: the walks and runs. */
            const cb_clip *clip = cb_embedded_clip(o->set, 1 + cb_prng_below(&r, 16));
            o->entries[c * 3 + e] =
                (cb_blend_entry){clip, t, e == 0 ? 0.5f : 0.25f, CB_BLEND_MODE_NORMAL, {NULL, 0}};
        }
    }
    return true;
}

static void frame(const outputs *o, size_t c, layout l)
{
    cb_pose_blend_job bj = {o->skel, {&o->entries[c * 3], 3}, 0.0f, {o->pose, o->groups}};
    cb_pose_blend_job_run(&bj, NULL);
    unsigned char *dst = o->out + c * o->joints * layout_bytes[l];
    if (l == MAT4 || l == MAT3X4) {
        cb_matrix_layout ml = l == MAT4 ? CB_MATRIX_LAYOUT_MAT4 : CB_MATRIX_LAYOUT_MAT3X4;
        size_t floats = o->joints * cb_ltm_matrix_floats(ml);
        cb_ltm_job lj = {.skeleton = o->skel,
                         .local = {o->pose, o->groups},
                         .model_layout = ml,
                         .model = {(float *)dst, floats}};
        cb_ltm_job_run(&lj, NULL);
    } else if (l == QTS_REF) {
        cb_model_qts_run_ref(o->skel, o->pose, (float *)dst);
    } else if (l == QTS) {
        cb_model_qts_run(o->skel, o->pose, (float *)dst);
    } else if (l == QTS16) {
        cb_model_qts16_run(o->skel, o->pose, 4.0f, o->scratch, (int16_t *)dst);
    }
}

/* A joint's output as an affine map p -> R p + t (double), for the error figures. */
static void affine_of(const unsigned char *joint, layout l, double m[3][3], double t[3])
{
    if (l == MAT4 || l == MAT3X4) {
        const float *f = (const float *)joint;
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) {
                m[r][c] = l == MAT4 ? f[c * 4 + r] : f[r * 4 + c];
            }
            t[r] = l == MAT4 ? f[12 + r] : f[r * 4 + 3];
        }
        return;
    }
    double x[8];
    for (int k = 0; k < 8; ++k) {
        x[k] = l != QTS16 ? ((const float *)joint)[k] : ((const int16_t *)joint)[k];
    }
    if (l == QTS16) {
        for (int k = 0; k < 4; ++k) {
            x[k] /= 32767.0;
        }
        for (int k = 4; k < 7; ++k) {
            x[k] *= 4.0 / 32767.0;
        }
        x[7] /= 8192.0;
    }
    double n = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]);
    double qx = x[0] / n, qy = x[1] / n, qz = x[2] / n, qw = x[3] / n, s = x[7];
    double r[3][3] = {
        {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
        {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
        {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)},
    };
    for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 3; ++b) {
            m[a][b] = r[a][b] * s;
        }
        t[a] = x[4 + a];
    }
}

/* Largest distance between the layout's and the 4x4's transforms of the points +-3 cm on each
 * axis, over the joints of the first 256 characters. */
static double max_error_m(size_t joints, layout l)
{
    outputs a, b;
    size_t chars = 256;
    double worst = 0.0;
    if (!outputs_make(&a, chars, MAT4) || !outputs_make(&b, chars, l)) {
        return NAN;
    }
    for (size_t c = 0; c < chars; ++c) {
        frame(&a, c, MAT4);
        frame(&b, c, l);
    }
    for (size_t j = 0; j < chars * joints; ++j) {
        double ma[3][3], ta[3], mb[3][3], tb[3];
        affine_of(a.out + j * 64, MAT4, ma, ta);
        affine_of(b.out + j * layout_bytes[l], l, mb, tb);
        for (int axis = 0; axis < 3; ++axis) {
            for (int sign = -1; sign <= 1; sign += 2) {
                double e2 = 0.0;
                for (int r = 0; r < 3; ++r) {
                    double d = (ta[r] - tb[r]) + sign * 0.03 * (ma[r][axis] - mb[r][axis]);
                    e2 += d * d;
                }
                worst = fmax(worst, sqrt(e2));
            }
        }
    }
    outputs_free(&a);
    outputs_free(&b);
    return worst;
}

static void bench(cb_bench_state *st, void *user)
{
    layout l = (layout)(intptr_t)user;
    size_t chars = (size_t)cb_bench_range(st, 0);
    outputs o;
    if (!outputs_make(&o, chars, l)) {
        cb_bench_skip_with_error(st, "out of memory");
        return;
    }
    while (cb_bench_keep_running(st)) {
        for (size_t c = 0; c < chars; ++c) {
            frame(&o, c, l);
        }
        cb_bench_keep(o.out);
    }
    double items = (double)chars * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    cb_bench_set_counter(st, "per_char", items, CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    cb_bench_set_counter(st, "bytes_per_char", (double)(o.joints * layout_bytes[l]),
                         CB_BENCH_COUNTER_DEFAULT);
    if (l != NONE && l != MAT4) {
        cb_bench_set_counter(st, "max_err_um", 1e6 * max_error_m(o.joints, l),
                             CB_BENCH_COUNTER_DEFAULT);
    }
    outputs_free(&o);
}

void cb_bench_register_outputs(void)
{
    static const char *const names[] = {"ltm_output_none_simd",   "ltm_output_mat4_simd",
                                        "ltm_output_mat3x4_simd", "ltm_output_qts_ref",
                                        "ltm_output_qts_simd",    "ltm_output_qts16_simd"};
    for (int l = NONE; l <= QTS16; ++l) {
        cb_bench *b = cb_bench_register(names[l], bench, (void *)(intptr_t)l);
        cb_bench_args2(b, 1000, 64);
        cb_bench_args2(b, 10000, 64);
        cb_bench_args2(b, 100000, 64);
    }
}
