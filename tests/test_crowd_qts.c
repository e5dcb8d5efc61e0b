/* The crowd's compact output, CB_MATRIX_LAYOUT_QTS (crowdblend/ltm.h), on the embedded set:
 *  - unit: the desc's defaults for it (stride joint_count x 32 bytes, the layout reported) and
 *    every refusal: with inverse binds, as a skinning layout;
 *  - equivalence: on a one-clip graph, each character's output is the qts kernel's
 *    (simd/model_qts.h) on the character's local pose, rebuilt here by a pose job at the
 *    crowd's clip time; the rebuild is checked first against a MAT4 crowd's matrices, bit for
 *    bit; new characters read the kernel on the rest pose;
 *  - accuracy: on the full blend space with layers, every joint of every character over
 *    animated frames against a MAT4 crowd run in lockstep: the rotation matrix of the
 *    quaternion times the scale against the matrix's 3x3 part, the translation against its
 *    column 3, within the sum of the two kernels' own documented bounds;
 *  - property: bit-identical for 1 or 2 threads and any batch size, also into a host buffer
 *    with a padded stride (whose padding stays untouched). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"
#include "simd/model_qts.h"
#include "test_util.h"

static const char *const loco[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

enum { CHARACTERS = 45, FRAMES = 10 };
static const float DT = 1.0f / 60.0f;

static cb_embedded *set;
static const cb_skeleton *skel;
static const cb_clip *clips[17];
static cb_graph *blend; /* the 17 clips with the additive lean and the upper-body wave */
static cb_graph *one;   /* a graph of the clip walk_f alone */

static int setup(void **state)
{
    (void)state;
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK) {
        return -1;
    }
    skel = cb_embedded_skeleton(set);
    for (int k = 0; k < 17; ++k) {
        if ((clips[k] = cb_embedded_find_clip(set, loco[k])) == NULL) {
            return -1;
        }
    }
    cb_graph_blend_desc bd = {.skeleton = skel, .clips = clips, .clip_count = 17};
    bd.additive.clip = cb_embedded_find_clip(set, "lean_add");
    bd.upper_body = (cb_graph_blend_layer){.clip = cb_embedded_find_clip(set, "wave_upper"),
                                           .mask_joint = "spine_01"};
    if (cb_graph_create_blend(&bd, &blend, NULL) != CB_OK) {
        return -1;
    }
    static const char text[] =
        "{\"root\": \"c\", \"nodes\": {\"c\": {\"type\": \"clip\", \"clip\": \"walk_f\"}}}";
    cb_graph_json_desc jd = {.skeleton = skel, .clips = clips, .clip_count = 17};
    return cb_graph_load_json(text, strlen(text), &jd, &one, NULL) == CB_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cb_graph_destroy(blend);
    cb_graph_destroy(one);
    cb_embedded_destroy(set);
    return 0;
}

static cb_crowd *create(const cb_graph *g, cb_matrix_layout layout, uint32_t threads,
                        uint32_t batch, float *host, size_t stride_bytes)
{
    const cb_graph *graphs[1] = {g};
    cb_crowd_desc d = {.skeleton = skel,
                       .capacity = CHARACTERS,
                       .graphs = graphs,
                       .graph_count = 1,
                       .thread_count = threads,
                       .batch_size = batch,
                       .matrix_layout = layout,
                       .matrices = host,
                       .matrix_stride_bytes = stride_bytes};
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "create: %s", err.message);
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, 0.0213f * (float)i, &ch), CB_OK);
    }
    return c;
}

/* Parameters over the whole blend space, changing every frame (the blend graph's only). */
static void steer(cb_crowd *c, uint32_t frame)
{
    uint32_t px, py, add, up;
    assert_int_equal(cb_crowd_find_param(c, 0, CB_GRAPH_BLEND_PARAM_PREFIX "0", &px), CB_OK);
    assert_int_equal(cb_crowd_find_param(c, 0, CB_GRAPH_BLEND_PARAM_PREFIX "1", &py), CB_OK);
    assert_int_equal(cb_crowd_find_param(c, 0, CB_GRAPH_BLEND_ADDITIVE_WEIGHT, &add), CB_OK);
    assert_int_equal(cb_crowd_find_param(c, 0, CB_GRAPH_BLEND_UPPER_WEIGHT, &up), CB_OK);
    float *x = cb_crowd_param_column(c, 0, px), *y = cb_crowd_param_column(c, 0, py);
    float *a = cb_crowd_param_column(c, 0, add), *u = cb_crowd_param_column(c, 0, up);
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        float ang = 0.37f * (float)i + 0.05f * (float)frame;
        float s = 4.2f * (0.5f + 0.5f * sinf(0.11f * (float)i + 0.02f * (float)frame));
        x[i] = s * cosf(ang);
        y[i] = s * sinf(ang);
        a[i] = 0.5f + 0.5f * sinf((float)i);
        u[i] = i % 3 == 0 ? 0.8f : 0.0f;
    }
}

/* ---- unit ---------------------------------------------------------------------------------- */

static void crowd_qts_desc_and_refusals(void **state)
{
    (void)state;
    const size_t n = cb_skeleton_joint_count(skel);
    const cb_graph *graphs[1] = {one};
    cb_crowd_desc d = {.skeleton = skel,
                       .capacity = 4,
                       .graphs = graphs,
                       .graph_count = 1,
                       .thread_count = 1,
                       .matrix_layout = CB_MATRIX_LAYOUT_QTS};
    cb_crowd_desc q = cb_crowd_query_desc(&d);
    assert_int_equal(q.matrix_layout, CB_MATRIX_LAYOUT_QTS);
    assert_int_equal(q.matrix_stride_bytes, n * 32);
    assert_int_equal(q.skinning_layout, _CB_MATRIX_LAYOUT_DEFAULT);
    cb_crowd *c = NULL;
    cb_error err = {0};
    assert_int_equal(cb_crowd_create(&d, &c, &err), CB_OK);
    assert_int_equal(cb_crowd_matrix_layout(c), CB_MATRIX_LAYOUT_QTS);
    cb_crowd_destroy(c);

    /* Inverse binds (identities: valid ones) with a QTS model or skinning layout. */
    float *ibm = calloc(n * 16, sizeof(float));
    assert_non_null(ibm);
    for (size_t j = 0; j < n; ++j) {
        for (int k = 0; k < 4; ++k) {
            ibm[j * 16 + 5 * k] = 1.0f;
        }
    }
    struct {
        cb_matrix_layout model, skin;
        bool only;
        const char *needle;
    } cases[] = {
        {CB_MATRIX_LAYOUT_QTS, _CB_MATRIX_LAYOUT_DEFAULT, false, "matrix_layout is QTS"},
        {CB_MATRIX_LAYOUT_QTS, CB_MATRIX_LAYOUT_MAT4, false, "matrix_layout is QTS"},
        {CB_MATRIX_LAYOUT_QTS, CB_MATRIX_LAYOUT_MAT4, true, "matrix_layout is QTS"},
        {CB_MATRIX_LAYOUT_MAT4, CB_MATRIX_LAYOUT_QTS, false, "skinning_layout is QTS"},
        {_CB_MATRIX_LAYOUT_DEFAULT, CB_MATRIX_LAYOUT_QTS, true, "skinning_layout is QTS"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_crowd_desc s = d;
        s.matrix_layout = cases[k].model;
        s.skinning_layout = cases[k].skin;
        s.skinning_only = cases[k].only;
        s.inverse_binds = (cb_float_cspan){ibm, n * 16};
        cb_crowd *bad = NULL;
        cb_error e = {0};
        cb_result r = cb_crowd_create(&s, &bad, &e);
        CB_CHECK(r == CB_ERR_INVALID_ARGUMENT && bad == NULL && strstr(e.message, cases[k].needle),
                 "case %zu: %s, %s", k, cb_result_str(r), e.message);
        cb_test_note("%s", e.message);
    }
    /* The same binds with matrix layouts are fine (the refusal is QTS's, not the binds'). */
    cb_crowd_desc s = d;
    s.matrix_layout = CB_MATRIX_LAYOUT_MAT3X4;
    s.inverse_binds = (cb_float_cspan){ibm, n * 16};
    assert_int_equal(cb_crowd_create(&s, &c, &err), CB_OK);
    cb_crowd_destroy(c);
    free(ibm);
}

/* ---- equivalence --------------------------------------------------------------------------- */

static void crowd_qts_is_the_kernel_on_the_local_pose(void **state)
{
    (void)state;
    const size_t n = cb_skeleton_joint_count(skel), groups = cb_skeleton_group_count(skel);
    cb_crowd *m4 = create(one, CB_MATRIX_LAYOUT_MAT4, 1, 0, NULL, 0);
    cb_crowd *qc = create(one, CB_MATRIX_LAYOUT_QTS, 1, 0, NULL, 0);
    cb_xform_group *pose = aligned_alloc(cb_simd_group_align(), cb_skeleton_pose_bytes(skel));
    float *mat = malloc(n * 16 * sizeof(float)), *qts = malloc(n * 8 * sizeof(float));
    assert_true(pose != NULL && mat != NULL && qts != NULL);
    /* New characters hold the rest pose. */
    cb_model_qts_run(skel, cb_skeleton_rest_pose(skel).ptr, qts);
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        CB_CHECK(memcmp(cb_crowd_matrices(qc, 0, i), qts, n * 8 * sizeof(float)) == 0,
                 "character %u before its first update: not the kernel on the rest pose", i);
    }
    for (int frame = 0; frame < FRAMES; ++frame) {
        assert_int_equal(cb_crowd_update(m4, DT), CB_OK);
        assert_int_equal(cb_crowd_update(qc, DT), CB_OK);
        const float *t4 = cb_crowd_clip_times(m4, 0, 0), *tq = cb_crowd_clip_times(qc, 0, 0);
        for (uint32_t i = 0; i < CHARACTERS; ++i) {
            assert_true(t4[i] == tq[i]);
            cb_blend_entry e = {.clip = clips[1], .time = tq[i], .weight = 1.0f};
            cb_pose_blend_job bj = {.skeleton = skel, .entries = {&e, 1}, .out = {pose, groups}};
            assert_int_equal(cb_pose_blend_job_run(&bj, NULL), CB_OK);
            /* The rebuilt pose is the crowd's: its MAT4 matrices are the MAT4 crowd's bits. */
            cb_ltm_job lj = {.skeleton = skel, .local = {pose, groups}, .model = {mat, n * 16}};
            assert_int_equal(cb_ltm_job_run(&lj, NULL), CB_OK);
            CB_CHECK(memcmp(cb_crowd_matrices(m4, 0, i), mat, n * 16 * sizeof(float)) == 0,
                     "frame %d character %u: the rebuilt pose is not the crowd's", frame, i);
            cb_model_qts_run(skel, pose, qts);
            CB_CHECK(memcmp(cb_crowd_matrices(qc, 0, i), qts, n * 8 * sizeof(float)) == 0,
                     "frame %d character %u: the QTS output is not the kernel's", frame, i);
        }
    }
    free(pose), free(mat), free(qts);
    cb_crowd_destroy(m4);
    cb_crowd_destroy(qc);
}

/* ---- accuracy ------------------------------------------------------------------------------ */

/* The two kernels' documented bounds added: qts against double (tests/test_model_qts.c: per
 * level of the hierarchy, 5e-7 for rotation matrix elements, 3e-7 of the chain's length for
 * translations) and 4x4 against double (tests/test_ltm.c: 3e-6 relative to the matrix's
 * largest element, here about 1, for the whole chain). The chain's length is summed from the
 * 4x4 output, parent to joint. */
static const double QTS_ROT = 5e-7, QTS_TRANS = 3e-7, MAT4_REL = 3e-6;

static void crowd_qts_agrees_with_mat4(void **state)
{
    (void)state;
    const size_t n = cb_skeleton_joint_count(skel);
    const int32_t *parents = cb_skeleton_parents(skel);
    cb_crowd *m4 = create(blend, CB_MATRIX_LAYOUT_MAT4, 2, 16, NULL, 0);
    cb_crowd *qc = create(blend, CB_MATRIX_LAYOUT_QTS, 2, 16, NULL, 0);
    double *length = malloc(n * sizeof(double));
    int *depth = malloc(n * sizeof(int));
    assert_true(length != NULL && depth != NULL);
    double worst_rot = 0.0, worst_trans = 0.0, worst_norm = 0.0, worst_scale = 0.0;
    for (int frame = 0; frame < FRAMES; ++frame) {
        steer(m4, (uint32_t)frame);
        steer(qc, (uint32_t)frame);
        assert_int_equal(cb_crowd_update(m4, DT), CB_OK);
        assert_int_equal(cb_crowd_update(qc, DT), CB_OK);
        for (uint32_t i = 0; i < CHARACTERS; ++i) {
            const float *m = cb_crowd_matrices(m4, 0, i), *q = cb_crowd_matrices(qc, 0, i);
            for (size_t j = 0; j < n; ++j) {
                const float *mj = m + 16 * j, *o = q + 8 * j;
                int32_t p = parents[j];
                double seg = 0.0;
                if (p >= 0) {
                    for (int k = 0; k < 3; ++k) {
                        double d = (double)mj[12 + k] - m[16 * (size_t)p + 12 + k];
                        seg += d * d;
                    }
                }
                depth[j] = p < 0 ? 0 : depth[p] + 1;
                length[j] = p < 0 ? 0.0 : length[p] + sqrt(seg);
                const double levels = depth[j] + 1;
                double x = o[0], y = o[1], z = o[2], w = o[3], s = o[7];
                double rq[3][3] = {
                    {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)},
                    {2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)},
                    {2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)},
                };
                const double br = QTS_ROT * levels + MAT4_REL;
                for (int c = 0; c < 3; ++c) {
                    for (int k = 0; k < 3; ++k) {
                        double e = fabs(s * rq[c][k] - mj[4 * c + k]);
                        CB_CHECK(e <= br, "frame %d character %u joint %zu (%d,%d): %.3g > %.3g",
                                 frame, i, j, c, k, e, br);
                        worst_rot = fmax(worst_rot, e / levels);
                    }
                }
                const double len = fmax(length[j], 1.0);
                const double bt = (QTS_TRANS * levels + MAT4_REL) * len;
                for (int k = 0; k < 3; ++k) {
                    double e = fabs((double)o[4 + k] - mj[12 + k]);
                    CB_CHECK(e <= bt, "frame %d character %u joint %zu t%d: %.3g > %.3g", frame, i,
                             j, k, e, bt);
                    worst_trans = fmax(worst_trans, e / levels / len);
                }
                /* The embedded skeleton has unit scales: s is 1 and q of unit length, within
                 * the same bounds. */
                worst_norm = fmax(worst_norm, fabs(sqrt(x * x + y * y + z * z + w * w) - 1.0));
                worst_scale = fmax(worst_scale, fabs(s - 1.0));
                CB_CHECK(worst_norm <= br && worst_scale <= br, "joint %zu: |q| %.9g, s %.9g", j,
                         sqrt(x * x + y * y + z * z + w * w), s);
            }
        }
    }
    cb_test_note("QTS against MAT4, %d characters x %d frames x %zu joints: rotation elements "
                 "%.3g per level, translations %.3g of the chain length per level, |q| - 1 "
                 "%.3g, s - 1 %.3g",
                 CHARACTERS, FRAMES, n, worst_rot, worst_trans, worst_norm, worst_scale);
    free(length), free(depth);
    cb_crowd_destroy(m4);
    cb_crowd_destroy(qc);
}

/* ---- property ------------------------------------------------------------------------------ */

static void crowd_qts_is_bit_identical_across_threads_and_batches(void **state)
{
    (void)state;
    const size_t n = cb_skeleton_joint_count(skel);
    const size_t stride = (n * 8 + 3) * sizeof(float); /* padded, not a multiple of 16 bytes */
    float *host = malloc(CHARACTERS * stride);
    assert_non_null(host);
    const uint32_t threads[] = {1, 2, 2, 1, 2};
    const uint32_t batches[] = {64, 64, 16, 100, 1};
    uint64_t reference = 0;
    for (size_t v = 0; v < sizeof threads / sizeof threads[0] + 1; ++v) {
        bool use_host = v == sizeof threads / sizeof threads[0];
        for (size_t k = 0; k < CHARACTERS * stride / sizeof(float); ++k) {
            host[k] = NAN;
        }
        cb_crowd *c = use_host
                          ? create(blend, CB_MATRIX_LAYOUT_QTS, 2, 8, host, stride)
                          : create(blend, CB_MATRIX_LAYOUT_QTS, threads[v], batches[v], NULL, 0);
        for (int frame = 0; frame < FRAMES; ++frame) {
            steer(c, (uint32_t)frame);
            assert_int_equal(cb_crowd_update(c, DT + 0.001f * (float)(frame % 3)), CB_OK);
        }
        uint64_t h = cb_crowd_output_hash(c);
        if (v == 0) {
            reference = h;
        }
        CB_CHECK(h == reference, "variant %zu: hash %016llx, want %016llx", v,
                 (unsigned long long)h, (unsigned long long)reference);
        if (use_host) {
            assert_ptr_equal(cb_crowd_matrices(c, 0, 0), host);
            for (uint32_t i = 0; i < CHARACTERS; ++i) {
                const float *pad = (const float *)((const char *)host + i * stride) + n * 8;
                CB_CHECK(isnan(pad[0]) && isnan(pad[1]) && isnan(pad[2]),
                         "character %u: the stride's padding was written", i);
            }
        }
        cb_crowd_destroy(c);
    }
    cb_test_note("QTS crowd: hash %016llx for threads 1/2 x batch 1/16/64/100 and a host buffer",
                 (unsigned long long)reference);
    free(host);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crowd_qts_desc_and_refusals),
        cmocka_unit_test(crowd_qts_is_the_kernel_on_the_local_pose),
        cmocka_unit_test(crowd_qts_agrees_with_mat4),
        cmocka_unit_test(crowd_qts_is_bit_identical_across_threads_and_batches),
    };
    if (setup(NULL) != 0) {
        fprintf(stderr, "the embedded set or the graphs could not be built\n");
        return 1;
    }
    int failed = CB_RUN_TESTS(tests);
    teardown(NULL);
    return failed;
}
