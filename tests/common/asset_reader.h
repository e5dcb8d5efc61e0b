/* A minimal reader of the test assets (tests/data/assets: glTF binaries and a BVH), written for
 * the compression tests and bench/cclip_report.c: the skeleton, its rest pose, and each
 * animation evaluated at its own key rate (the "source keys" the error bound is measured
 * against). Not the importer: it reads only what these files use (float accessors, LINEAR
 * samplers, node TRS; BVH with Euler channels), refuses anything else, and never leaves the
 * buffers it was given.
 *
 * Units: metres. A reader scale multiplies every translation (the Fox is authored in
 * centimetres, the CMU BVH in its own units: 0.0254 / 0.45 m, CMU's ASF convention). */
#ifndef CROWDBLEND_TEST_ASSET_READER_H
#define CROWDBLEND_TEST_ASSET_READER_H

#include <stddef.h>

#include "crowdblend/crowdblend.h"

enum { CB_TEST_ASSET_MAX_CLIPS = 8 };

typedef struct cb_test_asset_clip {
    char name[64];
    size_t frame_count; /* source keys */
    double rate_hz;     /* source key rate */
    cb_xform *frames;   /* frame_count x joint_count local transforms, frame-major */
} cb_test_asset_clip;

typedef struct cb_test_asset {
    cb_skeleton *skeleton;
    size_t clip_count;
    cb_test_asset_clip clips[CB_TEST_ASSET_MAX_CLIPS];
} cb_test_asset;

/* Reads a .glb file: skins[0]'s joints ordered parents first, every animation sampled at its
 * key rate (the key count of its longest channel over its time span). Returns CB_OK,
 * CB_ERR_IO, CB_ERR_PARSE or CB_ERR_UNSUPPORTED, with a message in err. */
cb_result cb_test_read_glb(const char *path, double scale, cb_test_asset *out, cb_error *err);

/* Reads a BVH file: its joints (end sites left out), frames first_frame .. end at the file's
 * rate. */
cb_result cb_test_read_bvh(const char *path, double scale, size_t first_frame, cb_test_asset *out,
                           cb_error *err);

void cb_test_asset_free(cb_test_asset *a);

/* The frames of a built clip as the source of a compression: its stored frames, unpacked from
 * its joint groups (frame_count x joint_count, malloc'd). Reads the clip's private layout; NULL
 * for a compressed clip (no frames in memory) or when out of memory. */
cb_xform *cb_test_clip_frames(const cb_clip *clip, size_t *frame_count);

#endif
