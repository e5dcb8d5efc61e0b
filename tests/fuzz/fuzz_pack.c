/* libFuzzer target: the pack loader (crowdblend/pack.h).
 *
 * Each input is loaded twice: as it is (the checksum refuses almost every mutation, which keeps
 * the header and layout checks under fire), and with its checksum and size repaired, so that the
 * mutations reach every field's own check. Contract: a load either fails with a code and a
 * message that names the source, or gives a pack that saves back to exactly the bytes it was
 * loaded from (save(load(p)) == p); a version 1 pack (which loads, and saves as version 2) saves
 * to a pack that itself loads and saves to the same bytes. Compressed clips (version 2) go
 * through the compressed stored form's own loader (fuzz_cclip fuzzes it directly). ASan and
 * UBSan watch every read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "crowdblend/crowdblend.h"

static void check_load(const uint8_t *data, size_t size);

/* A version 1 pack saved as version 2: that pack must load and save to itself. */
static void check_upgrade(const cb_pack *p)
{
    cb_pack_desc d = cb_pack_contents(p);
    cb_error err = {0};
    size_t size = 0;
    uint8_t *out = NULL;
    if (cb_pack_save_memory(&d, NULL, 0, &size, &err) != CB_OK || (out = malloc(size)) == NULL ||
        cb_pack_save_memory(&d, out, size, &size, &err) != CB_OK) {
        fprintf(stderr, "contract: a loaded version 1 pack does not save: %s\n", err.message);
        abort();
    }
    check_load(out, size);
    free(out);
}

static void check_load(const uint8_t *data, size_t size)
{
    cb_pack *p = NULL;
    cb_error err = {0};
    cb_result r = cb_pack_load_memory(data, size, NULL, &p, &err);
    if (r != CB_OK) {
        if (err.code != r || strncmp(err.message, "pack: ", 6) != 0) {
            fprintf(stderr, "contract: error %d without a message naming the source: %s\n", r,
                    err.message);
            abort();
        }
        return;
    }
    if (data[8] == 1) {
        check_upgrade(p);
        cb_pack_destroy(p);
        return;
    }
    cb_pack_desc d = cb_pack_contents(p);
    size_t out_size = 0;
    if (cb_pack_save_memory(&d, NULL, 0, &out_size, &err) != CB_OK || out_size != size) {
        fprintf(stderr, "contract: a loaded pack saves to %zu bytes, not %zu: %s\n", out_size, size,
                err.message);
        abort();
    }
    uint8_t *out = malloc(size);
    if (out == NULL || cb_pack_save_memory(&d, out, size, &out_size, &err) != CB_OK ||
        memcmp(out, data, size) != 0) {
        fprintf(stderr, "contract: save(load(p)) differs from p\n");
        abort();
    }
    free(out);
    cb_pack_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_load(data, size);
    if (size >= 40) {
        uint8_t *fixed = malloc(size);
        if (fixed == NULL) {
            return 0;
        }
        memcpy(fixed, data, size);
        uint64_t n = size;
        for (int k = 0; k < 8; ++k) {
            fixed[16 + k] = (uint8_t)(n >> (8 * k));
        }
        uint64_t h = XXH3_64bits(fixed + 32, size - 32);
        for (int k = 0; k < 8; ++k) {
            fixed[24 + k] = (uint8_t)(h >> (8 * k));
        }
        check_load(fixed, size);
        free(fixed);
    }
    return 0;
}
