/* libFuzzer target: binary frames as a client receives them (src/serve/frame.c). A frame
 * whose header is accepted must decode every record within the buffer; a decoded q16/pos16
 * position is within the i16 range times the scale, and rotations are unit. Built and run by
 * scripts/fuzz.sh. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "serve/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cb_frame_header h;
    char why[CB_ERROR_MESSAGE_SIZE];
    if (cb_frame_read_header(data, size, &h, why) != CB_OK) {
        return 0;
    }
    assert(h.joints <= CB_FRAME_MAX_JOINTS);
    float *pos = malloc(sizeof(float) * 3 * (h.joints + 1));
    float *rot = malloc(sizeof(float) * 4 * (h.joints + 1));
    for (uint32_t c = 0; c < h.characters; ++c) {
        uint64_t id;
        float rp[3], rr[4];
        cb_result r = cb_frame_decode_character(data, size, &h, c, &id, rp, rr, pos, rot);
        assert(r == CB_OK);
        if (h.encoding != CB_FRAME_F32) {
            double len = 0.0;
            for (int k = 0; k < 4; ++k) {
                len += (double)rr[k] * rr[k];
            }
            assert(fabs(len - 1.0) < 1e-3);
            for (uint32_t j = 0; j < 3 * h.joints; ++j) {
                assert(fabsf(pos[j]) <= 32768.0f * h.position_scale);
            }
        }
    }
    free(pos);
    free(rot);
    return 0;
}
