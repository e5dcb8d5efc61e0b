/* Packs (crowdblend/pack.h): round trips byte for byte; every prefix, random bit flips (with
 * and without a repaired checksum) and hand-made bad fields refused with messages that name the
 * section and field; every failed allocation clean; the desc checks; and a checksum of the
 * samples of the committed packs (written by a W = 16 build) that the test command compares
 * across the W = 16, sanitized and portable W = 4 builds. Compressed clips (pack version 2):
 * the loaded clip within the compression bound of the clip that was compressed (shell error
 * measured here in double), every bit of a compressed block flipped, its size field at every
 * value, its stored form's fields; version 1 packs still load.
 *
 * Byte offsets used to corrupt fields come from the layout in docs/formats.md, read here with
 * the test's own little-endian helpers. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "anim_test.h"
#include "crowdblend/pack.h"
#include "crowdblend/pose.h"
#include "test_util.h"

#ifndef CB_TEST_PACK_DIR
#define CB_TEST_PACK_DIR "tests/data/packs"
#endif
#ifndef CB_TEST_OUT_DIR
#define CB_TEST_OUT_DIR "."
#endif

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_u32(unsigned char *p, uint32_t v)
{
    for (int k = 0; k < 4; ++k) {
        p[k] = (unsigned char)(v >> (8 * k));
    }
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void set_f32(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    set_u32(p, u);
}

/* Recomputes the checksum (XXH3-64 of everything after the 32-byte header, at byte 24), as a
 * writer would after editing a field: the field's own check is then what must catch it. */
static void repair_checksum(unsigned char *d, size_t size)
{
    uint64_t h = XXH3_64bits(d + 32, size - 32);
    set_u32(d + 24, (uint32_t)h);
    set_u32(d + 28, (uint32_t)(h >> 32));
}

/* Section i's offset and size from the table. */
static size_t section_offset(const unsigned char *d, uint32_t i)
{
    return (size_t)get_u64(d + 40 + i * 24 + 8);
}

static uint32_t section_kind(const unsigned char *d, uint32_t i)
{
    return get_u32(d + 40 + i * 24);
}

/* ---- a synthetic pack using every part of the format -------------------------------------- */

typedef struct fixture {
    cb_skeleton *skel;
    cb_clip *clips[4];
    size_t clip_count;
    cb_test_tracks tracks[4];
    float *ibm;
    float *mask_w[2];
    cb_pack_desc desc;
    cb_pack_mask masks[2];
    cb_pack_graph graphs[1];
    cb_pack_clip_info info[4];
    cb_cclip *packed[4]; /* clips 2 and 3 are stored compressed */
} fixture;

/* The synthetic pack's compressed clips: the additive one and the looping one without root
 * motion (clips 0 and 1 stay raw, so the byte offsets of pack_fields_are_checked hold). */
static bool fixture_compressed(size_t k)
{
    return k >= 2;
}

/* A clip's frames as transforms (scale 1 + the stored deviation). */
static cb_xform *clip_xforms(const cb_clip *c)
{
    size_t frames = cb_clip_frame_count(c), n = cb_clip_joint_count(c);
    size_t stride = cb_clip_frame_stride(c), floats = frames * n * stride;
    float *raw = malloc(floats * sizeof *raw);
    cb_xform *x = malloc(frames * n * sizeof *x);
    assert_true(raw != NULL && x != NULL);
    assert_int_equal(cb_clip_read_frames(c, (cb_float_span){raw, floats}), CB_OK);
    for (size_t i = 0; i < frames * n; ++i) {
        for (int k = 0; k < 3; ++k) {
            x[i].translation[k] = raw[i * stride + k];
            x[i].scale[k] = stride == 10 ? 1.0f + raw[i * stride + 7 + k] : 1.0f;
        }
        memcpy(x[i].rotation, raw + i * stride + 3, sizeof x[i].rotation);
    }
    free(raw);
    return x;
}

static cb_cclip *compress_clip(const cb_skeleton *s, const cb_clip *c)
{
    cb_xform *x = clip_xforms(c);
    cb_cclip_desc d = {.skeleton = s,
                       .frames = {x, cb_clip_frame_count(c) * cb_clip_joint_count(c)},
                       .frame_count = cb_clip_frame_count(c),
                       .additive = cb_clip_is_additive(c)};
    cb_cclip *z = NULL;
    cb_error err = {0};
    CB_CHECK(cb_cclip_create(&d, &z, &err) == CB_OK, "compress: %s", err.message);
    free(x);
    return z;
}

static const char graph_text[] = "{\"name\": \"g\", \"root\": \"a\", \"nodes\": {\"a\": {\"type\": "
                                 "\"clip\", \"clip\": \"loop_root\"}}}";

static void fixture_make(fixture *f, cb_prng *rng)
{
    memset(f, 0, sizeof *f);
    size_t n = 19;
    f->skel = cb_test_random_skeleton(rng, n, true, true);
    static const char *const names[4] = {"loop_root", "clamp_scaled", "additive", "straight"};
    cb_clip_marker_desc md[2] = {{"foot_plant_l", 0.0f, false}, {"foot_lift_l", 0.2f, true}};
    for (size_t k = 0; k < 4; ++k) {
        f->tracks[k] = cb_test_random_tracks(rng, f->skel, 0.4f + 0.3f * (float)k, n, k == 1, 1.5f);
        cb_clip_desc d = {
            .name = names[k],
            .skeleton = f->skel,
            .duration_s = f->tracks[k].duration,
            .sample_rate_hz = 30.0f + 7.0f * (float)k,
            .tracks = f->tracks[k].tracks,
            .track_count = f->tracks[k].count,
            .wrap = k == 1 ? CB_CLIP_WRAP_CLAMP : CB_CLIP_WRAP_LOOP,
            .root_motion = k == 2   ? CB_ROOT_MOTION_NONE
                           : k == 3 ? CB_ROOT_MOTION_NONE
                                    : (cb_root_motion)(2 + k),
            .additive = k == 2 ? CB_ADDITIVE_FIRST_FRAME : CB_ADDITIVE_NONE,
            .markers = md,
            .marker_count = k == 0 ? 2 : 0,
        };
        f->clips[k] = cb_test_clip_create(&d);
        f->info[k] = (cb_pack_clip_info){1e-5f * (float)k, k == 3 ? -1.0f : 1e-4f};
        f->packed[k] = fixture_compressed(k) ? compress_clip(f->skel, f->clips[k]) : NULL;
    }
    f->clip_count = 4;
    f->ibm = calloc(n * 16, sizeof(float));
    assert_non_null(f->ibm);
    for (size_t j = 0; j < n; ++j) {
        for (int c = 0; c < 4; ++c) {
            f->ibm[j * 16 + c * 5] = 1.0f;
        }
        f->ibm[j * 16 + 12] = -0.1f * (float)j;
    }
    size_t soa = cb_skeleton_soa_joint_count(f->skel);
    for (int m = 0; m < 2; ++m) {
        f->mask_w[m] = calloc(soa, sizeof(float));
        assert_non_null(f->mask_w[m]);
        for (size_t j = 0; j < n; ++j) {
            f->mask_w[m][j] = m == 0 ? (j > n / 2 ? 1.0f : 0.0f) : 0.25f;
        }
    }
    f->masks[0] = (cb_pack_mask){"upper", {f->mask_w[0], soa}};
    f->masks[1] = (cb_pack_mask){"lower", {f->mask_w[1], n}};
    f->graphs[0] = (cb_pack_graph){"g", graph_text, strlen(graph_text)};
    f->desc = (cb_pack_desc){
        .skeleton = f->skel,
        .inverse_binds = {f->ibm, n * 16},
        .clips = (const cb_clip *const *)f->clips,
        .clip_count = f->clip_count,
        .clip_info = f->info,
        .compressed = (const cb_cclip *const *)f->packed,
        .masks = f->masks,
        .mask_count = 2,
        .graphs = f->graphs,
        .graph_count = 1,
    };
}

static void fixture_free(fixture *f)
{
    for (size_t k = 0; k < f->clip_count; ++k) {
        cb_clip_destroy(f->clips[k]);
        cb_cclip_destroy(f->packed[k]);
        cb_test_tracks_free(&f->tracks[k]);
    }
    free(f->ibm);
    free(f->mask_w[0]);
    free(f->mask_w[1]);
    cb_skeleton_destroy(f->skel);
}

static unsigned char *save(const cb_pack_desc *d, size_t *size)
{
    cb_error err = {0};
    cb_result r = cb_pack_save_memory(d, NULL, 0, size, &err);
    CB_CHECK(r == CB_OK, "size query: %s", err.message);
    unsigned char *bytes = malloc(*size);
    assert_non_null(bytes);
    r = cb_pack_save_memory(d, bytes, *size, size, &err);
    CB_CHECK(r == CB_OK, "save: %s", err.message);
    return bytes;
}

static cb_pack *load(const unsigned char *bytes, size_t size)
{
    cb_pack *p = NULL;
    cb_error err = {0};
    cb_result r = cb_pack_load_memory(bytes, size, NULL, &p, &err);
    CB_CHECK(r == CB_OK, "load: %s", err.message);
    return p;
}

/* Loading fails with `want` (any code when CB_OK is passed as "any"), naming `needle`. */
static void expect_load_error(const unsigned char *bytes, size_t size, cb_result want,
                              const char *needle)
{
    cb_pack *p = (cb_pack *)(uintptr_t)0x1;
    cb_error err = {0};
    cb_result r = cb_pack_load_memory(bytes, size, NULL, &p, &err);
    CB_CHECK(r != CB_OK, "a bad pack loaded (want %s, needle %s)", cb_result_str(want),
             needle ? needle : "-");
    CB_CHECK(want == CB_OK || r == want, "got %s, want %s: %s", cb_result_str(r),
             cb_result_str(want), err.message);
    assert_int_equal(err.code, r);
    assert_true(p == (cb_pack *)(uintptr_t)0x1);
    CB_CHECK(strncmp(err.message, "pack: ", 6) == 0, "message lacks the source: %s", err.message);
    if (needle != NULL) {
        CB_CHECK(strstr(err.message, needle) != NULL, "message '%s' lacks '%s'", err.message,
                 needle);
    }
}

/* ---- the shell error, from the contract in crowdblend/cclip.h ---------------------------- */

/* Joint j of frame f of FRAMES-layout floats as a double transform (rotation normalized). */
static dref_xform frame_joint(const float *frames, size_t n, size_t stride, size_t f, size_t j)
{
    const float *v = frames + (f * n + j) * stride;
    dref_xform x;
    for (int k = 0; k < 3; ++k) {
        x.t[k] = v[k];
        x.s[k] = stride == 10 ? 1.0 + (double)v[7 + k] : 1.0;
    }
    for (int k = 0; k < 4; ++k) {
        x.q[k] = v[3 + k];
    }
    dref_quat_normalize(x.q);
    return x;
}

/* Largest distance, over frames, joints and the points at +-d on each joint's axes carried to
 * model space, between two clips' frames (same skeleton, frame count and stride). */
static double shell_error(const cb_skeleton *s, const cb_clip *a, const cb_clip *b, double d)
{
    const size_t n = cb_skeleton_joint_count(s), frames = cb_clip_frame_count(a);
    const size_t stride = cb_clip_frame_stride(a), floats = frames * n * stride;
    assert_int_equal(cb_clip_frame_count(b), frames);
    assert_int_equal(cb_clip_frame_stride(b), stride);
    float *fa = malloc(floats * 4), *fb = malloc(floats * 4);
    dref_xform *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb);
    dref_mat *ma = malloc(n * sizeof *ma), *mb = malloc(n * sizeof *mb);
    assert_true(fa && fb && la && lb && ma && mb);
    assert_int_equal(cb_clip_read_frames(a, (cb_float_span){fa, floats}), CB_OK);
    assert_int_equal(cb_clip_read_frames(b, (cb_float_span){fb, floats}), CB_OK);
    double worst = 0.0;
    for (size_t f = 0; f < frames; ++f) {
        for (size_t j = 0; j < n; ++j) {
            la[j] = frame_joint(fa, n, stride, f, j);
            lb[j] = frame_joint(fb, n, stride, f, j);
        }
        dref_local_to_model(cb_skeleton_parents(s), n, la, ma);
        dref_local_to_model(cb_skeleton_parents(s), n, lb, mb);
        for (size_t j = 0; j < n; ++j) {
            for (int axis = 0; axis < 3; ++axis) {
                for (int sign = -1; sign <= 1; sign += 2) {
                    double e2 = 0.0;
                    for (int r = 0; r < 3; ++r) {
                        double pa = ma[j].m[3][r] + sign * d * ma[j].m[axis][r];
                        double pb = mb[j].m[3][r] + sign * d * mb[j].m[axis][r];
                        e2 += (pa - pb) * (pa - pb);
                    }
                    worst = fmax(worst, sqrt(e2));
                }
            }
        }
    }
    free(fa), free(fb), free(la), free(lb), free(ma), free(mb);
    return worst;
}

/* Two compressed clips store the same bytes. */
static bool same_stream(const cb_cclip *a, const cb_cclip *b)
{
    size_t na = cb_cclip_stream_bytes(a), nb = cb_cclip_stream_bytes(b);
    unsigned char *x = malloc(na), *y = malloc(nb);
    assert_true(x != NULL && y != NULL);
    bool same = na == nb && cb_cclip_serialize(a, x, na) == CB_OK &&
                cb_cclip_serialize(b, y, nb) == CB_OK && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* ---- round trips ---------------------------------------------------------------------------- */

static void pack_round_trip_is_byte_identical(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_round_trip_is_byte_identical");
    fixture f;
    fixture_make(&f, &rng);
    size_t size = 0, size2 = 0;
    unsigned char *a = save(&f.desc, &size);
    cb_pack *p = load(a, size);
    cb_pack_desc contents = cb_pack_contents(p);
    unsigned char *b = save(&contents, &size2);
    assert_int_equal(size, size2);
    assert_memory_equal(a, b, size);
    cb_test_note("synthetic pack: %zu bytes, 4 clips, 2 masks, 1 graph: save(load(p)) == p", size);
    /* What came back. */
    assert_int_equal(cb_pack_clip_count(p), 4);
    assert_int_equal(cb_skeleton_signature(cb_pack_skeleton(p)), cb_skeleton_signature(f.skel));
    for (size_t k = 0; k < 4; ++k) {
        const cb_clip *c = cb_pack_clip(p, k);
        assert_string_equal(cb_clip_name(c), cb_clip_name(f.clips[k]));
        uint32_t idx = 99;
        assert_int_equal(cb_pack_find_clip(p, cb_clip_name(c), &idx), CB_OK);
        assert_int_equal(idx, k);
        if (fixture_compressed(k)) {
            /* The stored form comes back whole; the clip is its decoding, within the bound of
             * the frames that were compressed (a margin of 1e-6 m for the float frames). */
            const cb_cclip *z = cb_pack_compressed_clip(p, k);
            assert_non_null(z);
            assert_true(same_stream(z, f.packed[k]));
            cb_cclip_info ci = cb_cclip_query_info(z);
            double e = shell_error(f.skel, c, f.clips[k], ci.shell_distance_m);
            CB_CHECK(e <= (double)ci.max_error_m + 1e-6, "clip %zu: shell error %.3g m > %.3g m", k,
                     e, (double)ci.max_error_m);
            cb_test_note("%s: compressed %zu -> %zu bytes, loaded clip within %.3g m of its "
                         "frames (bound %.3g m)",
                         cb_clip_name(c), ci.source_bytes, ci.stream_bytes, e,
                         (double)ci.max_error_m);
        } else {
            assert_null(cb_pack_compressed_clip(p, k));
            size_t floats =
                cb_clip_frame_count(c) * cb_clip_joint_count(c) * cb_clip_frame_stride(c);
            float *x = malloc(floats * 4), *y = malloc(floats * 4);
            assert_int_equal(cb_clip_read_frames(c, (cb_float_span){x, floats}), CB_OK);
            assert_int_equal(cb_clip_read_frames(f.clips[k], (cb_float_span){y, floats}), CB_OK);
            assert_memory_equal(x, y, floats * 4);
            free(x);
            free(y);
        }
        cb_clip_root_motion ra = cb_clip_query_root_motion(c),
                            rb = cb_clip_query_root_motion(f.clips[k]);
        assert_memory_equal(&ra, &rb, sizeof ra);
        assert_int_equal(cb_clip_marker_count(c), cb_clip_marker_count(f.clips[k]));
        cb_pack_clip_info ci = cb_pack_query_clip_info(p, k);
        assert_true(ci.max_error_m == f.info[k].max_error_m);
        assert_true(ci.error_bound_m == f.info[k].error_bound_m);
    }
    uint32_t idx;
    assert_int_equal(cb_pack_find_clip(p, "nope", &idx), CB_ERR_NOT_FOUND);
    assert_null(cb_pack_clip(p, 4));
    assert_null(cb_pack_compressed_clip(p, 4));
    assert_null(cb_pack_compressed_clip(NULL, 0));
    cb_float_cspan ibm = cb_pack_inverse_binds(p);
    assert_int_equal(ibm.count, 19 * 16);
    assert_memory_equal(ibm.ptr, f.ibm, 19 * 16 * 4);
    assert_int_equal(cb_pack_mask_count(p), 2);
    cb_pack_mask m = cb_pack_query_mask(p, 1);
    assert_string_equal(m.name, "lower");
    assert_int_equal(m.weights.count, cb_skeleton_soa_joint_count(f.skel));
    assert_true(m.weights.ptr[3] == 0.25f && m.weights.ptr[m.weights.count - 1] == 0.0f);
    assert_int_equal(cb_pack_graph_count(p), 1);
    cb_pack_graph g = cb_pack_query_graph(p, 0);
    assert_int_equal(g.length, strlen(graph_text));
    assert_string_equal(g.text, graph_text);
    /* The graph text loads against the pack's clips. */
    cb_graph_json_desc jd = {.skeleton = cb_pack_skeleton(p),
                             .clips = cb_pack_clips(p),
                             .clip_count = cb_pack_clip_count(p)};
    cb_graph *graph = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json(g.text, g.length, &jd, &graph, &err) == CB_OK, "%s", err.message);
    cb_graph_destroy(graph);
    /* Out of range queries. */
    assert_null(cb_pack_query_mask(p, 2).name);
    assert_null(cb_pack_query_graph(p, 1).text);
    assert_true(cb_pack_query_clip_info(p, 9).max_error_m < 0.0f);
    cb_pack_destroy(p);
    cb_pack_destroy(NULL);
    free(a);
    free(b);
    fixture_free(&f);
}

static void pack_saves_files_whole(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_saves_files_whole");
    fixture f;
    fixture_make(&f, &rng);
    char path[512];
    snprintf(path, sizeof path, "%s/test_pack_tmp.cbpack", CB_TEST_OUT_DIR);
    cb_error err = {0};
    CB_CHECK(cb_pack_save(&f.desc, path, &err) == CB_OK, "%s", err.message);
    cb_pack *p = NULL;
    CB_CHECK(cb_pack_load_file(path, NULL, &p, &err) == CB_OK, "%s", err.message);
    assert_int_equal(cb_pack_clip_count(p), 4);
    cb_pack_destroy(p);
    remove(path);
    assert_int_equal(cb_pack_load_file(path, NULL, &p, &err), CB_ERR_IO);
    assert_non_null(strstr(err.message, path));
    assert_int_equal(cb_pack_save(&f.desc, "/nonexistent-dir/x.cbpack", &err), CB_ERR_IO);
    assert_int_equal(cb_pack_load_file(NULL, NULL, &p, &err), CB_ERR_NULL_ARGUMENT);
    fixture_free(&f);
}

/* ---- damaged packs -------------------------------------------------------------------------- */

/* The packs the tests run on: the synthetic one and every committed pack. */
typedef struct pack_file {
    char name[256];
    unsigned char *bytes;
    size_t size;
} pack_file;

static size_t committed_packs(pack_file *out, size_t max)
{
    size_t count = 0;
    DIR *dir = opendir(CB_TEST_PACK_DIR);
    if (dir == NULL) {
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && count < max) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 7, ".cbpack") != 0) {
            continue;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", CB_TEST_PACK_DIR, e->d_name);
        FILE *fp = fopen(path, "rb");
        assert_non_null(fp);
        fseek(fp, 0, SEEK_END);
        long n = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        pack_file *pf = &out[count++];
        snprintf(pf->name, sizeof pf->name, "%s", e->d_name);
        pf->size = (size_t)n;
        pf->bytes = malloc(pf->size);
        assert_non_null(pf->bytes);
        assert_int_equal(fread(pf->bytes, 1, pf->size, fp), pf->size);
        fclose(fp);
    }
    closedir(dir);
    /* Sorted by name so that runs are reproducible. */
    for (size_t i = 1; i < count; ++i) {
        for (size_t k = i; k > 0 && strcmp(out[k - 1].name, out[k].name) > 0; --k) {
            pack_file t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    }
    return count;
}

static size_t test_packs(pack_file *out, size_t max, cb_prng *rng)
{
    fixture f;
    fixture_make(&f, rng);
    snprintf(out[0].name, sizeof out[0].name, "synthetic");
    out[0].bytes = save(&f.desc, &out[0].size);
    fixture_free(&f);
    return 1 + committed_packs(out + 1, max - 1);
}

static void free_packs(pack_file *packs, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        free(packs[i].bytes);
    }
}

static void pack_every_prefix_is_refused(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_every_prefix_is_refused");
    pack_file packs[16];
    size_t count = test_packs(packs, 16, &rng);
    for (size_t i = 0; i < count; ++i) {
        /* Each prefix is copied to the end of one allocation of the pack's size, so a read past
         * the prefix is a read past the allocation and ASan reports it (one allocation, not one
         * per prefix: a quarter of a million mallocs under ASan took minutes). */
        unsigned char *buf = malloc(packs[i].size);
        assert_non_null(buf);
        for (size_t len = 0; len < packs[i].size; ++len) {
            unsigned char *prefix = buf + (packs[i].size - len);
            memcpy(prefix, packs[i].bytes, len);
            expect_load_error(prefix, len, CB_ERR_PARSE, "header");
        }
        free(buf);
        cb_test_note("%s: all %zu prefixes refused", packs[i].name, packs[i].size);
    }
    free_packs(packs, count);
}

static void pack_bit_flips_are_refused(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_bit_flips_are_refused");
    pack_file packs[16];
    size_t count = test_packs(packs, 16, &rng);
    /* 10,000 random flips per pack; a tenth in slow builds (CB_TEST_SCALE), where each load
     * costs 10-100 times more: the same property on fewer random bits. */
    const size_t flips = cb_test_scaled(10000, 1000);
    for (size_t i = 0; i < count; ++i) {
        size_t size = packs[i].size, loaded = 0, by_code[_CB_RESULT_COUNT] = {0};
        unsigned char *d = malloc(size);
        assert_non_null(d);
        for (size_t k = 0; k < flips; ++k) {
            memcpy(d, packs[i].bytes, size);
            size_t bit = cb_prng_below(&rng, (uint32_t)(size * 8));
            d[bit / 8] ^= (unsigned char)(1u << (bit % 8));
            /* As damaged: the checksum (or a header field) refuses every flip. */
            expect_load_error(d, size, CB_OK, NULL);
            /* With the checksum repaired, the fields' own checks see the flip: either the pack
             * is still valid (a value changed within its range) or it is refused with a
             * message naming a section; never a crash (ASan and UBSan watch). */
            if (bit / 8 >= 32 || bit / 8 < 24) {
                repair_checksum(d, size);
                cb_pack *p = NULL;
                cb_error err = {0};
                cb_result r = cb_pack_load_memory(d, size, NULL, &p, &err);
                if (r == CB_OK) {
                    ++loaded;
                    cb_pack_destroy(p);
                } else {
                    CB_CHECK(err.code == r && strncmp(err.message, "pack: ", 6) == 0,
                             "flip %zu: %s", bit, err.message);
                    by_code[r]++;
                }
            }
        }
        cb_test_note("%s: %zu flips refused as damaged; with the checksum repaired %zu still "
                     "valid, %zu parse errors, %zu other codes",
                     packs[i].name, flips, loaded, by_code[CB_ERR_PARSE],
                     flips - loaded - by_code[CB_ERR_PARSE]);
        free(d);
    }
    free_packs(packs, count);
}

static void pack_fields_are_checked(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_fields_are_checked");
    fixture f;
    fixture_make(&f, &rng);
    size_t size = 0;
    unsigned char *good = save(&f.desc, &size);
    unsigned char *d = malloc(size + 16);
    assert_non_null(d);
    const size_t skel = section_offset(good, 0), clip = section_offset(good, 1);
    assert_int_equal(section_kind(good, 0), 0x4C454B53u); /* "SKEL" */
    const size_t n = 19;
#define EDIT(edit, want, needle)                                                                   \
    do {                                                                                           \
        memcpy(d, good, size);                                                                     \
        edit;                                                                                      \
        repair_checksum(d, size);                                                                  \
        expect_load_error(d, size, want, needle);                                                  \
    } while (0)
    /* Header. */
    EDIT(d[0] = 'X', CB_ERR_PARSE, "header: magic");
    EDIT(set_u32(d + 8, 3), CB_ERR_UNSUPPORTED, "header: version 3");
    /* A version 1 pack holds version 1 sections only (clip section 2 came with pack 2). */
    EDIT(set_u32(d + 8, 1), CB_ERR_PARSE, "section 1 (clip): version 2: a version 1 pack");
    EDIT(set_u32(d + 8, 0), CB_ERR_PARSE, "header: version 0");
    EDIT(set_u32(d + 12, 1), CB_ERR_PARSE, "header: flags");
    EDIT(set_u32(d + 16, (uint32_t)size + 8), CB_ERR_PARSE, "header: file_size");
    memcpy(d, good, size);
    d[100] ^= 1;
    expect_load_error(d, size, CB_ERR_PARSE, "header: checksum");
    /* Table. */
    EDIT(set_u32(d + 32, 0), CB_ERR_PARSE, "section table: section_count 0");
    EDIT(set_u32(d + 36, 5), CB_ERR_PARSE, "reserved");
    EDIT(set_u32(d + 32, 100000), CB_ERR_PARSE, "section_count");
    EDIT(set_u32(d + 40, 0x58585858u), CB_ERR_PARSE, "section 0: kind");
    EDIT(set_u32(d + 40 + 24, 0x4C454B53u), CB_ERR_PARSE, "section 1 (skeleton): kind");
    EDIT(set_u32(d + 40, 0x50494C43u), CB_ERR_PARSE, "section 0 (clip): kind");
    EDIT(set_u32(d + 44, 2), CB_ERR_UNSUPPORTED, "section 0 (skeleton): version 2");
    EDIT(set_u32(d + 44 + 24, 9), CB_ERR_UNSUPPORTED, "section 1 (clip): version 9");
    EDIT(set_u32(d + 48, 44), CB_ERR_PARSE, "section 0 (skeleton): offset");
    EDIT(set_u32(d + 56, (uint32_t)size), CB_ERR_PARSE, "section 0 (skeleton): size");
    /* Growing the data by 8 bytes: a trailing block after the last section. */
    memcpy(d, good, size);
    memset(d + size, 0, 8);
    set_u32(d + 16, (uint32_t)size + 8);
    repair_checksum(d, size + 8);
    expect_load_error(d, size + 8, CB_ERR_PARSE, "follow the last section");
    /* A table that ends within 7 bytes of the end: the padding before the first section would
     * lie past the data (a fuzzing find). */
    {
        size_t table_end = 40 + 8 * 24, cut = table_end + 3;
        memcpy(d, good, cut);
        set_u32(d + 32, 8);
        set_u32(d + 16, (uint32_t)cut);
        repair_checksum(d, cut);
        unsigned char *exact = malloc(cut);
        assert_non_null(exact);
        memcpy(exact, d, cut);
        expect_load_error(exact, cut, CB_ERR_PARSE, "past the end of the data");
        free(exact);
    }
    /* Skeleton. */
    EDIT(set_u32(d + skel, 0), CB_ERR_PARSE, "section 0 (skeleton): joint_count 0");
    EDIT(set_u32(d + skel, 70000), CB_ERR_PARSE, "joint_count 70000");
    EDIT(set_u32(d + skel, 18), CB_ERR_PARSE, "section 0 (skeleton)");
    EDIT(set_u32(d + skel + 4, 6), CB_ERR_PARSE, "flags");
    EDIT(d[skel + 12 + 1] = 0, CB_ERR_PARSE, "names");
    EDIT(set_u32(d + skel + 8, 2 * 19 - 1), CB_ERR_PARSE, "names_bytes");
    /* Names "j0".."j18" (3 or 4 bytes each with the NUL): 10 x 3 + 9 x 4 = 66 -> 68 padded. */
    const size_t parents = skel + 12 + 68, rest = parents + n * 4, ibm = rest + n * 40;
    EDIT(set_u32(d + parents + 5 * 4, 7), CB_ERR_HIERARCHY, "section 0 (skeleton)");
    EDIT(set_u32(d + parents + 5 * 4, 5), CB_ERR_HIERARCHY, "parent");
    EDIT(set_f32(d + rest + 3 * 40 + 4, NAN), CB_ERR_NOT_FINITE, "rest[3]");
    EDIT(set_f32(d + rest + 3 * 40 + 24, 2.0f), CB_ERR_PARSE, "rest[3].rotation has length");
    EDIT(set_f32(d + ibm + 2 * 64 + 12, 1.0f), CB_ERR_PARSE, "inverse_binds[2] is not affine");
    EDIT(set_f32(d + ibm + 17 * 4, INFINITY), CB_ERR_NOT_FINITE, "inverse_binds[17]");
    EDIT(memcpy(d + skel + 12, "j1", 2), CB_ERR_DUPLICATE, "section 0 (skeleton)");
    /* Clip 0 ("loop_root": name 9 bytes -> 4 + 12). */
    const size_t fixed = clip + 16;
    EDIT(set_u32(d + clip, 0), CB_ERR_PARSE, "section 1 (clip): name: length 0");
    EDIT(set_u32(d + clip, 500), CB_ERR_PARSE, "name: length 500");
    EDIT(d[clip + 4 + 9] = 'x', CB_ERR_PARSE, "name: a NUL");
    EDIT(set_f32(d + fixed, -1.0f), CB_ERR_INVALID_ARGUMENT,
         "section 1 (clip \"loop_root\"): clip \"loop_root\": duration_s");
    EDIT(set_f32(d + fixed, NAN), CB_ERR_NOT_FINITE, "duration_s");
    EDIT(set_u32(d + fixed + 4, 1), CB_ERR_PARSE, "frame_count 1");
    EDIT(set_u32(d + fixed + 4, 100000), CB_ERR_PARSE, "frame_count 100000");
    EDIT(set_u32(d + fixed + 4, get_u32(good + fixed + 4) - 1), CB_ERR_PARSE, "frames:");
    EDIT(set_u32(d + fixed + 8, 18), CB_ERR_PARSE, "joint_count 18");
    EDIT(set_u32(d + fixed + 12, 8), CB_ERR_PARSE, "flags 0x8");
    /* Clip 1 ("clamp_scaled": 12 -> 4 + 16) marked looping: its last frame is not its first. */
    EDIT(set_u32(d + section_offset(good, 2) + 20 + 12, 5), CB_ERR_DEGENERATE,
         "section 2 (clip \"clamp_scaled\"): clip \"clamp_scaled\": frames: a looping clip");
    EDIT(set_u32(d + fixed + 16, 2), CB_ERR_PARSE, "encoding 2 is not defined");
    /* A raw clip marked compressed: its frames do not parse as a compressed block. */
    EDIT(set_u32(d + fixed + 16, 1), CB_OK, "section 1 (clip \"loop_root\")");
    EDIT(set_u32(d + fixed + 20, 9), CB_ERR_PARSE, "root_motion 9");
    EDIT(set_u32(d + fixed + 24, 3), CB_ERR_INVALID_ARGUMENT, "root_joint");
    EDIT(set_f32(d + fixed + 28, NAN), CB_ERR_NOT_FINITE, "root_origin[0]");
    EDIT(set_f32(d + fixed + 44, INFINITY), CB_ERR_NOT_FINITE, "max_error_m");
    EDIT(set_u32(d + fixed + 52, 2000), CB_ERR_PARSE, "marker_count 2000");
    EDIT(set_u32(d + fixed + 52, 3), CB_ERR_PARSE, "markers[2]");
    /* Markers: the first at fixed + 56: time, flags, name "foot_plant_l" (12 -> 4 + 16). */
    const size_t mk = fixed + 56;
    EDIT(set_f32(d + mk, 1.5f), CB_ERR_INVALID_ARGUMENT, "markers[0].time");
    EDIT(set_u32(d + mk + 4, 2), CB_ERR_PARSE, "markers[0].flags");
    EDIT(set_u32(d + mk + 8, 64), CB_ERR_PARSE, "markers[0].name: length 64");
    /* Second marker "foot_lift_l" (11 -> 4 + 12) at mk + 28; frames after it at mk + 52. */
    const size_t frames = mk + 28 + 8 + 16;
    EDIT(set_f32(d + frames + 3 * 4, 0.0f), CB_ERR_DEGENERATE, "frame 0 joint 0 rotation");
    EDIT(set_f32(d + frames + (7 * 5 + 1) * 4, NAN), CB_ERR_NOT_FINITE, "frames[36] is nan");
    /* Root track: the last 4 floats per frame x frame_count; frame 0 must be zero. */
    const size_t frame_count = get_u32(good + fixed + 4);
    const size_t stride = (get_u32(good + fixed + 12) & 4u) ? 10 : 7;
    const size_t track = frames + frame_count * n * stride * 4;
    EDIT(set_f32(d + track, 0.5f), CB_ERR_INVALID_ARGUMENT, "root_track: frame 0");
    /* A clip that repeats another's name: clip 3 "straight" renamed "additive" (clip 2). */
    EDIT(memcpy(d + section_offset(good, 4) + 4, "additive", 8), CB_ERR_DUPLICATE,
         "clip 2 has the same name");
    /* Clip 3 ("straight", compressed: name 8 -> 4 + 12, the fixed fields, no markers): the
     * block's size at +72, the stored form (crowdblend/cclip.h's layout) at +76. */
    const size_t c3 = section_offset(good, 4), zsize = c3 + 72, z = c3 + 76;
    const uint32_t zlen = get_u32(good + zsize);
    assert_int_equal(get_u32(good + c3 + 16 + 16), 1);
    EDIT(set_u32(d + zsize, zlen + 4), CB_ERR_PARSE,
         "section 4 (clip \"straight\"): compressed_bytes");
    EDIT(set_u32(d + zsize, zlen - 4), CB_ERR_PARSE, "compressed_bytes");
    EDIT(set_u32(d + zsize, 0xFFFFFFFFu), CB_ERR_PARSE, "compressed_bytes 4294967295");
    if (zlen % 4 != 0) {
        EDIT(d[z + zlen] = 1, CB_ERR_PARSE, "padding after the compressed clip");
    }
    EDIT(d[z] = 'X', CB_ERR_PARSE, "section 4 (clip \"straight\"): compressed clip:");
    EDIT(set_u32(d + z + 4, 7), CB_ERR_UNSUPPORTED, "compressed clip:");
    /* Stored form version 4: joint count, frames and keys one byte each here (LEB128 from
     * +9), then the bound at +12 and the signature at +24. */
    assert_int_equal(good[z + 4], CB_CCLIP_STREAM_VERSION);
    assert_true(good[z + 9] < 0x80 && good[z + 10] < 0x80 && good[z + 11] < 0x80);
    EDIT(d[z + 9] = 18, CB_OK, "compressed clip:");
    EDIT(d[z + 11] = (unsigned char)(good[z + 10] + 1), CB_ERR_PARSE, "compressed clip:");
    EDIT(d[z + 24] ^= 1, CB_ERR_MISMATCH, "compressed clip:");
    EDIT(set_f32(d + z + 12, NAN), CB_OK, "compressed clip:");
    EDIT(set_u32(d + c3 + 16 + 4, get_u32(good + c3 + 16 + 4) - 1), CB_ERR_PARSE, "was made from");
    EDIT(set_u32(d + c3 + 16 + 12, get_u32(good + c3 + 16 + 12) | 2u), CB_ERR_MISMATCH, "additive");
    /* Masks and graphs. */
    const size_t mask0 = section_offset(good, 5), graph0 = section_offset(good, 7);
    EDIT(set_f32(d + mask0 + 4 + 8 + 4 + 4 * 3, 2.0f), CB_ERR_PARSE, "weights[3]");
    EDIT(set_u32(d + mask0 + 12, 5), CB_ERR_PARSE, "section 5 (mask): joint_count 5");
    EDIT(memcpy(d + section_offset(good, 6) + 4, "upper", 5), CB_ERR_DUPLICATE,
         "mask 0 has the same name");
    EDIT(d[graph0 + 8 + 4 + 3] = 0, CB_ERR_PARSE, "section 7 (graph): text");
    EDIT(set_u32(d + graph0 + 8, 1u << 30), CB_ERR_PARSE, "text_bytes");
#undef EDIT
    free(d);
    free(good);
    fixture_free(&f);
}

/* ---- compressed blocks ------------------------------------------------------------------- */

/* The pack `good` with section `index` replaced by `sec` (sec_size bytes), laid out again the
 * canonical way (docs/formats.md: sections in table order, each at the next multiple of 8) with
 * the table, file size and checksum updated: a well-framed pack around a bad section. */
static unsigned char *with_section(const unsigned char *good, uint32_t index,
                                   const unsigned char *sec, size_t sec_size, size_t *out_size)
{
    const uint32_t count = get_u32(good + 32);
    const size_t table_end = 40 + (size_t)count * 24;
    size_t total = table_end;
    for (uint32_t i = 0; i < count; ++i) {
        total = (total + 7) / 8 * 8 + (i == index ? sec_size : get_u64(good + 40 + i * 24 + 16));
    }
    unsigned char *d = calloc(total, 1);
    assert_non_null(d);
    memcpy(d, good, table_end);
    size_t at = table_end;
    for (uint32_t i = 0; i < count; ++i) {
        unsigned char *e = d + 40 + i * 24;
        size_t size = i == index ? sec_size : get_u64(good + 40 + i * 24 + 16);
        at = (at + 7) / 8 * 8;
        memcpy(d + at, i == index ? sec : good + get_u64(good + 40 + i * 24 + 8), size);
        set_u32(e + 8, (uint32_t)at), set_u32(e + 12, 0);
        set_u32(e + 16, (uint32_t)size), set_u32(e + 20, 0);
        at += size;
    }
    set_u32(d + 16, (uint32_t)total), set_u32(d + 20, 0);
    repair_checksum(d, total);
    *out_size = total;
    return d;
}

/* Loads; a refusal must name the section. Returns the code. */
static cb_result load_named(const unsigned char *d, size_t size, const char *section)
{
    cb_pack *p = NULL;
    cb_error err = {0};
    cb_result r = cb_pack_load_memory(d, size, NULL, &p, &err);
    if (r == CB_OK) {
        cb_pack_destroy(p);
    } else {
        CB_CHECK(err.code == r && strstr(err.message, section) != NULL, "%s: %s", cb_result_str(r),
                 err.message);
    }
    return r;
}

static void pack_compressed_blocks_are_checked(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_compressed_blocks_are_checked");
    fixture f;
    fixture_make(&f, &rng);
    size_t size = 0;
    unsigned char *good = save(&f.desc, &size);
    /* Clip 2 ("additive", section 3), the first compressed one: name 8 -> 4 + 12, the fixed
     * fields, no markers, the block's size at +72, the stored form at +76, no root track. */
    const size_t c2 = section_offset(good, 3), sec_size = get_u64(good + 40 + 3 * 24 + 16);
    const uint32_t zlen = get_u32(good + c2 + 72);
    assert_int_equal(sec_size, 76 + (zlen + 3) / 4 * 4);
    const char *where = "section 3 (clip \"additive\")";
    /* Every truncation of the stored form, in a well-framed section of that size (every
     * step-th with CB_TEST_SCALE below 1, as under qemu, and always the last eight). */
    unsigned char *sec = malloc(sec_size);
    assert_non_null(sec);
    const uint32_t step = (uint32_t)(1.0 / cb_test_scale() + 0.5);
    uint32_t cuts = 0;
    for (uint32_t len = 0; len < zlen; len += (len + 8 >= zlen ? 1 : step), ++cuts) {
        memset(sec, 0, sec_size);
        memcpy(sec, good + c2, 76 + len);
        set_u32(sec + 72, len);
        size_t n = 0;
        unsigned char *d = with_section(good, 3, sec, 76 + (len + 3) / 4 * 4, &n);
        CB_CHECK(load_named(d, n, where) != CB_OK, "a stored form cut to %u of %u bytes loaded",
                 len, zlen);
        free(d);
    }
    /* The size field at values that do not match the section. */
    for (uint32_t v = 0; v < 600; ++v) {
        uint32_t value = v < 300 ? v : zlen - 300 + v;
        if ((value + 3) / 4 == (zlen + 3) / 4) {
            continue;
        }
        unsigned char *d = malloc(size);
        assert_non_null(d);
        memcpy(d, good, size);
        set_u32(d + c2 + 72, value);
        repair_checksum(d, size);
        expect_load_error(d, size, CB_ERR_PARSE, "compressed_bytes");
        free(d);
    }
    /* Bit flips: every bit of the size field, the stored form's header and the first 600
     * bytes of its field descriptions, and 3000 random bits of the rest; each either loads
     * (a value moved within its range) or is refused naming the section. */
    unsigned char *d = malloc(size);
    assert_non_null(d);
    size_t loaded = 0, refused = 0, by_code[_CB_RESULT_COUNT] = {0};
    const size_t block = 4 + zlen, head_bits = cb_test_scaled(8 * (block < 648 ? block : 648), 256);
    const size_t flips = head_bits + cb_test_scaled(3000, 100);
    for (size_t k = 0; k < flips; ++k) {
        size_t bit = k < head_bits ? k : cb_prng_below(&rng, (uint32_t)(8 * block));
        memcpy(d, good, size);
        d[c2 + 72 + bit / 8] ^= (unsigned char)(1u << (bit % 8));
        repair_checksum(d, size);
        cb_result r = load_named(d, size, where);
        loaded += r == CB_OK;
        refused += r != CB_OK;
        by_code[r]++;
    }
    cb_test_note("compressed block of %u bytes: %u truncations refused; %zu bit flips: %zu "
                 "refused (%zu parse, %zu unsupported, %zu mismatch, %zu not finite, %zu other), "
                 "%zu still valid",
                 zlen, cuts, flips, refused, by_code[CB_ERR_PARSE], by_code[CB_ERR_UNSUPPORTED],
                 by_code[CB_ERR_MISMATCH], by_code[CB_ERR_NOT_FINITE],
                 refused - by_code[CB_ERR_PARSE] - by_code[CB_ERR_UNSUPPORTED] -
                     by_code[CB_ERR_MISMATCH] - by_code[CB_ERR_NOT_FINITE],
                 loaded);
    free(d);
    free(sec);
    free(good);
    fixture_free(&f);
}

/* A version 1 pack (before compressed clips) loads as it did: the synthetic pack without
 * compression, written as version 1 (header and every section version 1, the only change), and
 * the copy of cesium_man.cbpack that the version 1 writer made. */
static void pack_version_1_still_loads(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_version_1_still_loads");
    fixture f;
    fixture_make(&f, &rng);
    f.desc.compressed = NULL;
    size_t size = 0;
    unsigned char *v2 = save(&f.desc, &size);
    unsigned char *v1 = malloc(size);
    assert_non_null(v1);
    memcpy(v1, v2, size);
    set_u32(v1 + 8, 1);
    for (uint32_t i = 0; i < get_u32(v1 + 32); ++i) {
        set_u32(v1 + 40 + i * 24 + 4, 1);
    }
    repair_checksum(v1, size);
    cb_pack *p = load(v1, size);
    cb_pack_desc contents = cb_pack_contents(p);
    size_t size2 = 0;
    unsigned char *again = save(&contents, &size2);
    /* Saving writes version 2: the same bytes as the version 2 pack. */
    assert_int_equal(size2, size);
    assert_memory_equal(again, v2, size);
    for (size_t k = 0; k < cb_pack_clip_count(p); ++k) {
        assert_null(cb_pack_compressed_clip(p, k));
    }
    cb_pack_destroy(p);
    free(again);
    /* Encoding 1 in a version 1 clip section is refused. */
    set_u32(v1 + section_offset(v1, 1) + 16 + 16, 1);
    repair_checksum(v1, size);
    expect_load_error(v1, size, CB_ERR_PARSE,
                      "encoding 1 is not defined in clip section version 1");
    free(v1);
    free(v2);
    /* The committed version 1 file. */
    char path[1024];
    snprintf(path, sizeof path, "%s/v1/cesium_man.cbpack", CB_TEST_PACK_DIR);
    cb_error err = {0};
    CB_CHECK(cb_pack_load_file(path, NULL, &p, &err) == CB_OK, "%s", err.message);
    assert_int_equal(cb_pack_clip_count(p), 1);
    assert_null(cb_pack_compressed_clip(p, 0));
    cb_test_note("%s (version 1) loads: %u joints, clip \"%s\" of %u frames", path,
                 cb_skeleton_joint_count(cb_pack_skeleton(p)), cb_clip_name(cb_pack_clip(p, 0)),
                 cb_clip_frame_count(cb_pack_clip(p, 0)));
    cb_pack_destroy(p);
    fixture_free(&f);
}

/* Earlier committed packs (names[2] under CB_TEST_PACK_DIR) load, their compressed clips with
 * root tracks in the stored form when `root_in_stream`, and save to the same bytes: their
 * stored forms are written again in the version they were read in. */
/* The bytes of a committed pack (name relative to tests/data/packs), malloc'd. */
static unsigned char *read_committed(const char *name, size_t *size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CB_TEST_PACK_DIR, name);
    FILE *fp = fopen(path, "rb");
    CB_CHECK(fp != NULL, "%s: cannot open", path);
    fseek(fp, 0, SEEK_END);
    *size = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *bytes = malloc(*size);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, *size, fp), *size);
    fclose(fp);
    return bytes;
}

static void expect_old_packs_load(const char *const names[2], bool root_in_stream, const char *what)
{
    for (size_t i = 0; i < 2; ++i) {
        size_t size = 0;
        unsigned char *bytes = read_committed(names[i], &size);
        cb_pack *p = load(bytes, size);
        size_t root_clips = 0;
        for (size_t k = 0; k < cb_pack_clip_count(p); ++k) {
            const cb_cclip *z = cb_pack_compressed_clip(p, k);
            assert_non_null(z);
            assert_int_equal(cb_cclip_query_info(z).root_track_bytes > 0, root_in_stream);
            root_clips += cb_clip_query_root_motion(cb_pack_clip(p, k)).mode != CB_ROOT_MOTION_NONE;
        }
        CB_CHECK(root_clips > 0, "%s: no clip with root motion", names[i]);
        cb_pack_desc contents = cb_pack_contents(p);
        size_t size2 = 0;
        unsigned char *again = save(&contents, &size2);
        assert_int_equal(size2, size);
        assert_memory_equal(again, bytes, size);
        cb_test_note("%s (%s) loads and saves to the same %zu bytes", names[i], what, size);
        free(again);
        cb_pack_destroy(p);
        free(bytes);
    }
}

/* Packs written before the root track was compressed (clip section version 2, encoding 1: the
 * stored form without its root track, the track raw after it) load as they did, and saving
 * them gives the same bytes: the committed copies in v2/ of fox.cbpack and cesium_man.cbpack as
 * the issue 13 importer wrote them. */
static void pack_encoding_1_still_loads(void **state)
{
    (void)state;
    static const char *const v2[] = {"v2/cesium_man.cbpack", "v2/fox.cbpack"};
    expect_old_packs_load(v2, false, "clip encoding 1, raw root tracks");
    /* Stored form version 2 (four components per rotation, a mode byte per track): the copies
     * in stream2/ of the packs as the importer wrote them before version 3. */
    static const char *const stream2[] = {"stream2/cesium_man.cbpack", "stream2/fox.cbpack"};
    expect_old_packs_load(stream2, true, "stored form version 2");
    /* Stored form version 3 (a 44-byte header, the 2-bit mode map, constants as floats, the
     * root track's raw-float descriptions): the copies in stream3/ of the packs as the importer
     * wrote them before version 4. */
    static const char *const stream3[] = {"stream3/cesium_man.cbpack", "stream3/fox.cbpack"};
    expect_old_packs_load(stream3, true, "stored form version 3");
    /* Encoding 2 (the root track in the stored form) is section version 3's, and only its: the
     * committed cesium_man.cbpack's one clip, "clip0" (a 12-byte name record, then duration,
     * frame count, joint count and flags: the encoding at +28, the root mode at +32). */
    size_t size = 0;
    unsigned char *good = read_committed("cesium_man.cbpack", &size), *d = malloc(size);
    assert_non_null(d);
    const size_t clip = section_offset(good, 1);
    assert_int_equal(get_u32(good + 40 + 24 + 4), 3);
    assert_int_equal(get_u32(good + clip + 28), 2);
    memcpy(d, good, size);
    set_u32(d + 40 + 24 + 4, 2);
    repair_checksum(d, size);
    expect_load_error(d, size, CB_ERR_PARSE, "encoding 2 is not defined in clip section version 2");
    memcpy(d, good, size);
    set_u32(d + clip + 28, 1);
    repair_checksum(d, size);
    expect_load_error(d, size, CB_ERR_PARSE, "encoding 1 is not defined in clip section version 3");
    memcpy(d, good, size);
    set_u32(d + clip + 32, CB_ROOT_MOTION_NONE);
    repair_checksum(d, size);
    expect_load_error(d, size, CB_ERR_PARSE, "without root motion");
    free(good), free(d);
}

/* ---- the checks of stored forms 1-3 (crowdblend/cclip.h): version 4 replaced their fields,
 * but clips in them still load, so each refusal is checked on the committed packs' clips ---- */

/* The stored form of the first compressed clip of a committed pack, serialized as loaded (its
 * own version), with the pack (for its skeleton) and the root block's size. */
static unsigned char *old_stream(const char *name, cb_pack **pack, size_t *size, size_t *root)
{
    size_t file = 0;
    unsigned char *bytes = read_committed(name, &file);
    *pack = load(bytes, file);
    free(bytes);
    const cb_cclip *z = cb_pack_compressed_clip(*pack, 0);
    assert_non_null(z);
    *size = cb_cclip_stream_bytes(z);
    *root = cb_cclip_query_info(z).root_track_bytes;
    unsigned char *s = malloc(*size + 1);
    assert_non_null(s);
    assert_int_equal(cb_cclip_serialize(z, s, *size), CB_OK);
    return s;
}

/* cb_cclip_load refuses bytes with `want` and a message containing `needle`. */
static void expect_stream_error(const cb_skeleton *s, const unsigned char *bytes, size_t size,
                                cb_result want, const char *needle, const char *what)
{
    cb_cclip_load_desc d = {.skeleton = s};
    cb_cclip *out = NULL;
    cb_error err = {0};
    cb_result r = cb_cclip_load(bytes, size, &d, &out, &err);
    CB_CHECK(r == want && strstr(err.message, needle) != NULL, "%s: got %s (%s), want %s (%s)",
             what, cb_result_str(r), err.message, cb_result_str(want), needle);
    CB_CHECK(out == NULL, "%s: out was written", what);
}

/* Every prefix of a stored form is refused (and, under ASan, read within its bytes). */
static void expect_prefixes_refused(const cb_skeleton *s, const unsigned char *bytes, size_t size)
{
    cb_cclip_load_desc d = {.skeleton = s};
    for (size_t len = 0; len < size; ++len) {
        unsigned char *exact = malloc(len > 0 ? len : 1);
        assert_non_null(exact);
        memcpy(exact, bytes, len);
        cb_cclip *out = NULL;
        CB_CHECK(cb_cclip_load(exact, len, &d, &out, NULL) != CB_OK,
                 "a %zu-byte prefix of a version %u stored form loaded", len, bytes[4]);
        free(exact);
    }
}

/* Where the first rebuilt component's index lies in a version 3 stored form of n joints (the
 * 44-byte header, the mode map of 2 bits per track, then per track of mode 1 or 2 (mode 2: the
 * index byte first) 5 bytes per stored component), or 0 when no rotation rebuilds one. */
static size_t first_rebuilt_index(const unsigned char *b, size_t n)
{
    const unsigned char *map = b + 44;
    size_t at = 44 + (n * 6 + 7) / 8;
    for (size_t t = 0; t < n * 3; ++t) {
        unsigned mode = (map[t / 4] >> (2 * (t % 4))) & 3u;
        if (mode == 2) {
            return at;
        }
        at += mode == 0 ? 0 : 5 * (size_t)(t % 3 == 1 ? 4 : 3);
    }
    return 0;
}

static void pack_old_stored_forms_are_checked(void **state)
{
    (void)state;
    cb_pack *p = NULL;
    size_t m = 0, root = 0;
    /* Version 3 (stream3/: the 44-byte header, the mode map, 9-byte root descriptions). */
    unsigned char *good = old_stream("stream3/cesium_man.cbpack", &p, &m, &root);
    const cb_skeleton *s = cb_pack_skeleton(p);
    const size_t n = cb_skeleton_joint_count(s);
    assert_int_equal(good[4], 3);
    assert_true(root > 36 && (good[6] & 2u) != 0);
    unsigned char *b = malloc(m + 1);
    assert_non_null(b);
    expect_prefixes_refused(s, good, m);
    memcpy(b, good, m);
    b[m] = 0;
    expect_stream_error(s, b, m + 1, CB_ERR_PARSE, "trailing", "v3: a trailing byte");
    b[4] = 1;
    expect_stream_error(s, b, m, CB_ERR_PARSE, "version 1 with a root track", "v3 as v1");
    b[4] = 2; /* version 2's header, but version 3's track descriptions */
    expect_stream_error(s, b, m, CB_ERR_PARSE, "cclip stream", "v3 descriptions as v2");
    memcpy(b, good, m);
    b[6] &= (unsigned char)~2u;
    expect_stream_error(s, b, m, CB_ERR_PARSE, "trailing", "v3: root bytes without flag bit 1");
    b[4] = 2;
    expect_stream_error(s, b, m, CB_ERR_PARSE, "version 2 without a root track", "v2, no root");
    for (size_t at = 42; at < 44; ++at) {
        memcpy(b, good, m);
        b[at] = 1;
        expect_stream_error(s, b, m, CB_ERR_PARSE, "reserved", "v3: a reserved byte");
    }
    /* The mode map: mode 2 (a component rebuilt) is for rotations only, 3 is refused, and a
     * rebuilt component is 0..3. */
    memcpy(b, good, m);
    b[44] = (unsigned char)((b[44] & ~3u) | 2u);
    expect_stream_error(s, b, m, CB_ERR_PARSE, "has mode 2", "v3: a translation of mode 2");
    memcpy(b, good, m);
    b[44] = (unsigned char)(b[44] | 3u);
    expect_stream_error(s, b, m, CB_ERR_PARSE, "has mode 3", "v3: track mode 3");
    const size_t rebuilt_at = first_rebuilt_index(good, n);
    assert_true(rebuilt_at > 0 && good[rebuilt_at] <= 3);
    memcpy(b, good, m);
    b[rebuilt_at] = 4;
    expect_stream_error(s, b, m, CB_ERR_PARSE, "rebuilt component", "v3: rebuilt component 4");
    /* The root block: per component u8 bits, f32 offset, f32 step; then the keys. */
    const size_t root_at = m - root;
    memcpy(b, good, m);
    b[root_at] = 25;
    expect_stream_error(s, b, m, CB_ERR_PARSE, "root track component 0", "v3: a 25-bit root field");
    memcpy(b, good, m);
    memset(b + root_at + 1, 0xFF, 4);
    expect_stream_error(s, b, m, CB_ERR_NOT_FINITE, "root track", "v3: a NaN root offset");
    memcpy(b, good, m);
    set_f32(b + root_at + 1, 8.5e37f);
    expect_stream_error(s, b, m, CB_ERR_PARSE, "root track component 0",
                        "v3: a root offset beyond the largest value");
    memcpy(b, good, m);
    set_f32(b + root_at + 5, -1.0f);
    expect_stream_error(s, b, m, CB_ERR_PARSE, "root track component 0",
                        "v3: a negative root step");
    expect_stream_error(s, good, root_at + 35, CB_ERR_PARSE, "root track truncated",
                        "v3: the root descriptions cut short");
    cb_pack_destroy(p);
    free(good), free(b);
    /* Version 2 (stream2/: a mode byte before each track, 0 or 1, and always a root track). */
    good = old_stream("stream2/cesium_man.cbpack", &p, &m, &root);
    s = cb_pack_skeleton(p);
    assert_int_equal(good[4], 2);
    assert_true(root > 36 && good[44] <= 1);
    b = malloc(m);
    assert_non_null(b);
    expect_prefixes_refused(s, good, m);
    memcpy(b, good, m);
    b[6] &= (unsigned char)~2u;
    expect_stream_error(s, b, m, CB_ERR_PARSE, "version 2 without a root track", "v2, no root");
    memcpy(b, good, m);
    b[44] = 2;
    expect_stream_error(s, b, m, CB_ERR_PARSE, "has mode 2", "v2: a track of mode 2");
    cb_pack_destroy(p);
    free(good), free(b);
}

/* The two forms of a loaded pack's compressed clips (crowdblend/pack.h, COMPRESSED CLIPS): kept
 * compressed by default, decoded at load with CB_PACK_CLIP_FORM_RAW. Both give the same frames
 * bit for bit (cb_clip_read_frames decodes a compressed clip as the raw load does) and the same
 * shape; the compressed one holds less memory. A clip_form outside the enum is refused. */
static void pack_clip_forms(void **state)
{
    (void)state;
    pack_file packs[16];
    size_t count = committed_packs(packs, 16), compressed = 0;
    for (size_t i = 0; i < count; ++i) {
        cb_pack *p[2] = {NULL, NULL};
        for (int f = 0; f < 2; ++f) {
            cb_pack_load_desc ld = {.clip_form = f == 0 ? _CB_PACK_CLIP_FORM_DEFAULT
                                                        : CB_PACK_CLIP_FORM_RAW};
            cb_error err = {0};
            CB_CHECK(cb_pack_load_memory(packs[i].bytes, packs[i].size, &ld, &p[f], &err) == CB_OK,
                     "%s: %s", packs[i].name, err.message);
        }
        assert_int_equal(cb_pack_clip_count(p[0]), cb_pack_clip_count(p[1]));
        for (size_t k = 0; k < cb_pack_clip_count(p[0]); ++k) {
            const cb_clip *a = cb_pack_clip(p[0], k), *b = cb_pack_clip(p[1], k);
            assert_int_equal(cb_clip_frame_count(a), cb_clip_frame_count(b));
            assert_int_equal(cb_clip_frame_stride(a), cb_clip_frame_stride(b));
            size_t floats =
                cb_clip_frame_count(a) * cb_clip_joint_count(a) * cb_clip_frame_stride(a);
            float *fa = malloc(floats * sizeof *fa), *fb = malloc(floats * sizeof *fb);
            assert_true(fa != NULL && fb != NULL);
            assert_int_equal(cb_clip_read_frames(a, (cb_float_span){fa, floats}), CB_OK);
            assert_int_equal(cb_clip_read_frames(b, (cb_float_span){fb, floats}), CB_OK);
            CB_CHECK(memcmp(fa, fb, floats * sizeof *fa) == 0, "%s clip %zu: frames differ",
                     packs[i].name, k);
            free(fa), free(fb);
            if (cb_pack_compressed_clip(p[0], k) != NULL) {
                ++compressed;
                CB_CHECK(cb_clip_bytes(a) < cb_clip_bytes(b), "%s clip %zu: %zu >= %zu bytes",
                         packs[i].name, k, cb_clip_bytes(a), cb_clip_bytes(b));
            } else {
                assert_int_equal(cb_clip_bytes(a), cb_clip_bytes(b));
            }
        }
        cb_pack_destroy(p[0]);
        cb_pack_destroy(p[1]);
    }
    CB_CHECK(compressed >= 4, "only %zu compressed clips among the committed packs", compressed);
    cb_pack_load_desc bad = {.clip_form = _CB_PACK_CLIP_FORM_COUNT};
    cb_pack *p = NULL;
    cb_error err = {0};
    assert_int_equal(cb_pack_load_memory(packs[0].bytes, packs[0].size, &bad, &p, &err),
                     CB_ERR_INVALID_ARGUMENT);
    assert_null(p);
    CB_CHECK(strstr(err.message, "clip_form") != NULL, "%s", err.message);
    free_packs(packs, count);
}

static void pack_load_survives_failed_allocations(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_load_survives_failed_allocations");
    fixture f;
    fixture_make(&f, &rng);
    size_t size = 0;
    unsigned char *bytes = save(&f.desc, &size);
    size_t k = 0;
    for (;; ++k) {
        cb_test_failing_nth fa = {.fail_at = k};
        cb_pack_load_desc ld = {.allocator = cb_test_failing_nth_allocator(&fa)};
        cb_pack *p = NULL;
        cb_error err = {0};
        cb_result r = cb_pack_load_memory(bytes, size, &ld, &p, &err);
        if (r == CB_OK) {
            cb_pack_destroy(p);
            assert_int_equal(fa.count.live_bytes, 0);
            break;
        }
        CB_CHECK(r == CB_ERR_OUT_OF_MEMORY, "allocation %zu: %s", k, err.message);
        CB_CHECK(fa.count.live_bytes == 0, "allocation %zu failed: %lld bytes leaked", k,
                 fa.count.live_bytes);
    }
    cb_test_note("a load makes %zu allocations; failing each one is clean", k);
    /* Saving the loaded pack's compressed clips uncompressed decodes them through the pack's
     * allocator (cb_clip_read_frames): when that fails, the save fails and hands back nothing
     * half-written (before, it wrote uninitialised frames and returned CB_OK). */
    cb_test_failing_nth fa = {.fail_at = k};
    cb_pack_load_desc ld = {.allocator = cb_test_failing_nth_allocator(&fa)};
    cb_pack *p = NULL;
    assert_int_equal(cb_pack_load_memory(bytes, size, &ld, &p, NULL), CB_OK);
    const cb_clip *clips[8];
    size_t n = cb_pack_clip_count(p);
    assert_true(n <= 8);
    for (size_t c = 0; c < n; ++c) {
        clips[c] = cb_pack_clip(p, c);
    }
    cb_pack_desc raw = {.skeleton = cb_pack_skeleton(p), .clips = clips, .clip_count = n};
    size_t need = 0;
    assert_int_equal(cb_pack_save_memory(&raw, NULL, 0, &need, NULL), CB_OK);
    unsigned char *out = malloc(need);
    memset(out, 0xA5, need);
    cb_error err = {0};
    assert_int_equal(cb_pack_save_memory(&raw, out, need, &need, &err), CB_ERR_OUT_OF_MEMORY);
    CB_CHECK(strstr(err.message, "cannot be decoded") != NULL, "%s", err.message);
    for (size_t b = 0; b < need; ++b) {
        CB_CHECK(out[b] == 0, "byte %zu of a failed save is %u", b, out[b]);
    }
    free(out);
    cb_pack_destroy(p);
    free(bytes);
    fixture_free(&f);
}

static void pack_save_checks_its_desc(void **state)
{
    (void)state;
    cb_prng rng = cb_test_prng("pack_save_checks_its_desc");
    fixture f;
    fixture_make(&f, &rng);
    size_t size = 0;
    cb_pack_desc d;
    cb_error err;
#define SAVE_CASE(edit, want, needle)                                                              \
    do {                                                                                           \
        d = f.desc;                                                                                \
        edit;                                                                                      \
        err = (cb_error){0};                                                                       \
        cb_result r_ = cb_pack_save_memory(&d, NULL, 0, &size, &err);                              \
        CB_CHECK(r_ == want, "got %s: %s", cb_result_str(r_), err.message);                        \
        CB_CHECK(strstr(err.message, needle) != NULL, "'%s' lacks '%s'", err.message, needle);     \
    } while (0)
    SAVE_CASE(d.skeleton = NULL, CB_ERR_NULL_ARGUMENT, "skeleton");
    SAVE_CASE(d._end_canary = 1, CB_ERR_CANARY, "canary");
    SAVE_CASE(d.inverse_binds.count = 5, CB_ERR_MISMATCH, "inverse_binds");
    f.ibm[7] = NAN;
    SAVE_CASE((void)0, CB_ERR_NOT_FINITE, "inverse_binds[7]");
    f.ibm[7] = 0.0f;
    /* What the loader refuses is refused at save: a bottom row that is not 0 0 0 1. */
    f.ibm[16 + 15] = 0.5f;
    SAVE_CASE((void)0, CB_ERR_INVALID_ARGUMENT, "inverse_binds[1] is not affine");
    f.ibm[16 + 15] = 1.0f;
    const cb_clip *two[2] = {f.clips[0], f.clips[0]};
    SAVE_CASE((d.clips = two, d.clip_count = 2), CB_ERR_DUPLICATE, "both \"loop_root\"");
    SAVE_CASE(d.clip_count = CB_PACK_MAX_CLIPS + 1, CB_ERR_TOO_MANY, "clips");
    cb_skeleton *other = cb_test_random_skeleton(&rng, 5, false, false);
    SAVE_CASE(d.skeleton = other, CB_ERR_MISMATCH, "another skeleton");
    cb_skeleton_destroy(other);
    cb_pack_clip_info bad_info[4] = {{NAN, 0}};
    SAVE_CASE(d.clip_info = bad_info, CB_ERR_NOT_FINITE, "clip_info[0]");
    f.mask_w[0][2] = 1.5f;
    SAVE_CASE((void)0, CB_ERR_INVALID_ARGUMENT, "masks[0].weights[2]");
    f.mask_w[0][2] = 0.0f;
    cb_pack_mask same[2] = {f.masks[0], f.masks[0]};
    SAVE_CASE(d.masks = same, CB_ERR_DUPLICATE, "masks[0] and masks[1]");
    cb_pack_mask short_mask[1] = {{"m", {f.mask_w[0], 3}}};
    SAVE_CASE((d.masks = short_mask, d.mask_count = 1), CB_ERR_MISMATCH, "masks[0].weights");
    cb_pack_graph nul[1] = {{"g", "ab\0c", 4}};
    SAVE_CASE((d.graphs = nul, d.graph_count = 1), CB_ERR_INVALID_ARGUMENT, "NUL");
    cb_pack_graph noname[1] = {{"", "{}", 2}};
    SAVE_CASE((d.graphs = noname, d.graph_count = 1), CB_ERR_INVALID_ARGUMENT, "graphs[0].name");
    cb_xform rest[19];
    for (size_t j = 0; j < 19; ++j) {
        rest[j] = cb_skeleton_rest_xform(f.skel, j);
    }
    rest[4].translation[0] += 0.1f;
    SAVE_CASE(d.rest_pose = ((cb_xform_cspan){rest, 19}), CB_ERR_INVALID_ARGUMENT, "rest_pose[4]");
#undef SAVE_CASE
    /* Capacity too small: nothing is written. */
    assert_int_equal(cb_pack_save_memory(&f.desc, NULL, 0, &size, NULL), CB_OK);
    unsigned char *buf = calloc(1, size);
    assert_non_null(buf);
    assert_int_equal(cb_pack_save_memory(&f.desc, buf, size - 1, &size, &err),
                     CB_ERR_SPAN_TOO_SHORT);
    for (size_t i = 0; i < size; ++i) {
        assert_int_equal(buf[i], 0);
    }
    free(buf);
    fixture_free(&f);
}

/* A clip stored without scale samples scale exactly 1 in its compressed form, as in its raw one
 * (a compressed form may carry a scale track all the same: a skeleton whose rest scale is not
 * exactly 1 gives default tracks a non-zero offset; the Fox's clips sampled 1.00000012), in the
 * SIMD blend job and its scalar reference. */
static void pack_clip_without_scale_samples_none(void **state)
{
    (void)state;
    pack_file packs[16];
    size_t count = committed_packs(packs, 16), checked = 0;
    for (size_t i = 0; i < count; ++i) {
        cb_pack *p = load(packs[i].bytes, packs[i].size);
        const cb_skeleton *skel = cb_pack_skeleton(p);
        cb_xform_group *pose = cb_test_pose_alloc(skel, false);
        for (size_t k = 0; k < cb_pack_clip_count(p); ++k) {
            const cb_clip *c = cb_pack_clip(p, k);
            if (cb_clip_frame_stride(c) != 7 || cb_clip_is_additive(c)) {
                continue; /* stored with scale (or a delta, whose scale is not 1) */
            }
            for (int s = 0; s < 50; ++s) {
                cb_blend_entry e = {.clip = c, .time = (float)s / 49.0f, .weight = 1.0f};
                cb_pose_blend_job j = {.skeleton = skel,
                                       .entries = {&e, 1},
                                       .out = {pose, cb_skeleton_group_count(skel)}};
                for (int ref = 0; ref < 2; ++ref) {
                    assert_int_equal(ref ? cb_pose_blend_job_run_ref(&j, NULL)
                                         : cb_pose_blend_job_run(&j, NULL),
                                     CB_OK);
                    for (size_t jt = 0; jt < cb_skeleton_joint_count(skel); ++jt) {
                        dref_xform x = dref_from_pose(pose, jt);
                        CB_CHECK(x.s[0] == 1.0 && x.s[1] == 1.0 && x.s[2] == 1.0,
                                 "%s clip %zu joint %zu (%s): scale %.9g %.9g %.9g", packs[i].name,
                                 k, jt, ref ? "reference" : "SIMD", x.s[0], x.s[1], x.s[2]);
                    }
                }
            }
            checked++;
        }
        free(pose);
        cb_pack_destroy(p);
    }
    assert_true(checked > 0);
    free_packs(packs, count);
}

/* ---- the same samples in every build ------------------------------------------------------- */

/* XXH3 over each committed pack's stored frames, root tracks and samples through the scalar
 * reference blend at 997 times per clip, plus root deltas; and a second row per pack, "sample":
 * XXH3 over the SIMD sample job (cb_pose_sample_job, whose compressed path decodes the
 * interpolated key, not the blend's two keys) at the same times. Written to
 * CB_TEST_OUT_DIR/pack_samples.txt; scripts/test.sh compares the files of every kernel set of
 * the release build and of the sanitized build. */
static unsigned long long sample_job_checksum(const cb_pack *p)
{
    const cb_skeleton *skel = cb_pack_skeleton(p);
    const size_t joints = cb_skeleton_joint_count(skel), groups = cb_skeleton_group_count(skel);
    cb_xform_group *pose = cb_test_pose_alloc(skel, false);
    cb_xform *x = malloc(joints * sizeof *x);
    assert_non_null(x);
    XXH3_state_t *h = XXH3_createState();
    assert_non_null(h);
    XXH3_64bits_reset(h);
    for (size_t k = 0; k < cb_pack_clip_count(p); ++k) {
        const cb_clip *c = cb_pack_clip(p, k);
        for (int s = 0; s < 997; ++s) {
            cb_pose_sample_job j = {c, (float)s / 996.0f * 1.25f - 0.1f, {pose, groups}};
            assert_int_equal(cb_pose_sample_job_run(&j, NULL), CB_OK);
            assert_int_equal(cb_xform_unpack(pose, groups, (cb_xform_span){x, joints}), CB_OK);
            for (size_t jt = 0; jt < joints; ++jt) { /* the fields, not the struct's padding */
                XXH3_64bits_update(h, x[jt].rotation, sizeof x[jt].rotation);
                XXH3_64bits_update(h, x[jt].translation, sizeof x[jt].translation);
                XXH3_64bits_update(h, x[jt].scale, sizeof x[jt].scale);
            }
        }
    }
    unsigned long long sum = (unsigned long long)XXH3_64bits_digest(h);
    XXH3_freeState(h);
    free(pose), free(x);
    return sum;
}

static void pack_samples_checksum(void **state)
{
    (void)state;
    pack_file packs[16];
    size_t count = committed_packs(packs, 16);
    char path[1024];
    snprintf(path, sizeof path, "%s/pack_samples.txt", CB_TEST_OUT_DIR);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    for (size_t i = 0; i < count; ++i) {
        cb_pack *p = load(packs[i].bytes, packs[i].size);
        const cb_skeleton *skel = cb_pack_skeleton(p);
        XXH3_state_t *h = XXH3_createState();
        assert_non_null(h);
        XXH3_64bits_reset(h);
        cb_xform_group *pose = cb_test_pose_alloc(skel, false);
        size_t joints = cb_skeleton_joint_count(skel);
        for (size_t k = 0; k < cb_pack_clip_count(p); ++k) {
            const cb_clip *c = cb_pack_clip(p, k);
            size_t floats = cb_clip_frame_count(c) * joints * cb_clip_frame_stride(c);
            float *fr = malloc(floats * 4 + 16);
            assert_non_null(fr);
            cb_clip_read_frames(c, (cb_float_span){fr, floats});
            XXH3_64bits_update(h, fr, floats * 4);
            if (cb_clip_read_root_track(c, (cb_float_span){fr, floats}) == CB_OK) {
                XXH3_64bits_update(h, fr, cb_clip_frame_count(c) * 16);
            }
            free(fr);
            for (int s = 0; s < 997; ++s) {
                float u = (float)s / 996.0f * 1.25f - 0.1f;
                cb_blend_entry e = {.clip = c,
                                    .time = u,
                                    .weight = 1.0f,
                                    .mode = cb_clip_is_additive(c) ? CB_BLEND_MODE_ADDITIVE : 0};
                cb_pose_blend_job j = {.skeleton = skel,
                                       .entries = {&e, 1},
                                       .out = {pose, cb_skeleton_group_count(skel)}};
                assert_int_equal(cb_pose_blend_job_run_ref(&j, NULL), CB_OK);
                for (size_t jt = 0; jt < joints; ++jt) {
                    dref_xform x = dref_from_pose(pose, jt);
                    float v[10];
                    for (int q = 0; q < 3; ++q) {
                        v[q] = (float)x.t[q];
                        v[7 + q] = (float)x.s[q];
                    }
                    for (int q = 0; q < 4; ++q) {
                        v[3 + q] = (float)x.q[q];
                    }
                    XXH3_64bits_update(h, v, sizeof v);
                }
                cb_root_delta rd;
                cb_clip_root_delta(c, 0.0f, u, &rd);
                XXH3_64bits_update(h, &rd, sizeof rd);
            }
        }
        unsigned long long sum = (unsigned long long)XXH3_64bits_digest(h);
        XXH3_freeState(h);
        fprintf(out, "%s %016llx\n", packs[i].name, sum);
        cb_test_note("%s: samples checksum %016llx (W = %zu)", packs[i].name, sum, cb_simd_width());
        sum = sample_job_checksum(p);
        fprintf(out, "%s sample %016llx\n", packs[i].name, sum);
        cb_test_note("%s: sample job checksum %016llx (W = %zu)", packs[i].name, sum,
                     cb_simd_width());
        free(pose);
        cb_pack_destroy(p);
    }
    fclose(out);
    free_packs(packs, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pack_round_trip_is_byte_identical),
        cmocka_unit_test(pack_saves_files_whole),
        cmocka_unit_test(pack_every_prefix_is_refused),
        cmocka_unit_test(pack_bit_flips_are_refused),
        cmocka_unit_test(pack_fields_are_checked),
        cmocka_unit_test(pack_compressed_blocks_are_checked),
        cmocka_unit_test(pack_version_1_still_loads),
        cmocka_unit_test(pack_encoding_1_still_loads),
        cmocka_unit_test(pack_old_stored_forms_are_checked),
        cmocka_unit_test(pack_clip_forms),
        cmocka_unit_test(pack_load_survives_failed_allocations),
        cmocka_unit_test(pack_save_checks_its_desc),
        cmocka_unit_test(pack_clip_without_scale_samples_none),
        cmocka_unit_test(pack_samples_checksum),
    };
    return CB_RUN_TESTS(tests);
}
