/* libFuzzer target: the stored form of compressed clips (cb_cclip_load, crowdblend/cclip.h).
 *
 * Against the embedded skeleton. Contract: a load either fails with a code and a message that
 * names the stored form ("cclip"), or gives a clip whose stored form is exactly the input
 * (serialize(load(b)) == b) and whose every key decodes the same with the SIMD group decoder
 * and the scalar reference. ASan and UBSan watch every read. Built and run by scripts/fuzz.sh
 * (tests/fuzz/meson.build). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"

static const cb_skeleton *skeleton(void)
{
    static cb_embedded *set = NULL;
    if (set == NULL && cb_embedded_create(NULL, &set, NULL) != CB_OK) {
        abort();
    }
    return cb_embedded_skeleton(set);
}

static void check_decoders(const cb_cclip *c, const uint8_t *data, size_t size)
{
    const cb_skeleton *s = skeleton();
    const size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = aligned_alloc(cb_simd_group_align(), cb_skeleton_pose_bytes(s));
    cb_xform *ref = malloc(n * sizeof *ref), *simd = malloc(n * sizeof *simd);
    if (pose == NULL || ref == NULL || simd == NULL) {
        abort();
    }
    for (size_t k = 0; k < cb_cclip_key_count(c); ++k) {
        if (cb_cclip_decode(c, k, (cb_xform_group_span){pose, groups}) != CB_OK ||
            cb_cclip_decode_stream_ref(s, data, size, k, (cb_xform_span){ref, n}, NULL) != CB_OK ||
            cb_xform_unpack(pose, groups, (cb_xform_span){simd, n}) != CB_OK) {
            fprintf(stderr, "contract: a loaded clip does not decode key %zu\n", k);
            abort();
        }
        for (size_t j = 0; j < n; ++j) {
            if (memcmp(ref[j].rotation, simd[j].rotation, sizeof ref[j].rotation) != 0 ||
                memcmp(ref[j].translation, simd[j].translation, sizeof ref[j].translation) != 0 ||
                memcmp(ref[j].scale, simd[j].scale, sizeof ref[j].scale) != 0) {
                fprintf(stderr, "contract: key %zu joint %zu: SIMD and reference differ\n", k, j);
                abort();
            }
        }
    }
    free(pose), free(ref), free(simd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cb_cclip_load_desc d = {.skeleton = skeleton()};
    cb_cclip *c = NULL;
    cb_error err = {0};
    cb_result r = cb_cclip_load(data, size, &d, &c, &err);
    if (r != CB_OK) {
        if (err.code != r || strncmp(err.message, "cclip", 5) != 0) {
            fprintf(stderr, "contract: error %d without a message naming the stored form: %s\n", r,
                    err.message);
            abort();
        }
        return 0;
    }
    uint8_t *out = malloc(size > 0 ? size : 1);
    if (out == NULL || cb_cclip_stream_bytes(c) != size ||
        cb_cclip_serialize(c, out, size) != CB_OK || memcmp(out, data, size) != 0) {
        fprintf(stderr, "contract: serialize(load(b)) differs from b\n");
        abort();
    }
    check_decoders(c, data, size);
    free(out);
    cb_cclip_destroy(c);
    return 0;
}
