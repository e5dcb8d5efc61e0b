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
#include "io/pack_format.h"

/* Whether the saved pack `out` raised the version of a section of the input `in` (same size,
 * so the same table): a section of an older version the reader still accepts (a raw clip in a
 * version 1 CLIP section) is written in the current one, and nothing else may change. */
static bool only_section_versions_raised(const uint8_t *in, const uint8_t *out, size_t size)
{
    uint32_t count = cb_le_u32(in + CB_PACK_HEADER_BYTES);
    size_t table = CB_PACK_HEADER_BYTES + CB_PACK_TABLE_HEAD_BYTES;
    bool raised = false;
    for (size_t i = 0; i < size; ++i) {
        bool checksum = i >= 24 && i < CB_PACK_HEADER_BYTES; /* follows from the rest */
        bool version_field = false;
        if (i >= table && (i - table) / CB_PACK_ENTRY_BYTES < count) {
            size_t at = (i - table) % CB_PACK_ENTRY_BYTES;
            version_field = at >= 4 && at < 8;
            if (at == 4) {
                uint32_t a = cb_le_u32(in + i), b = cb_le_u32(out + i);
                if (b < a) {
                    return false;
                }
                raised |= b > a;
            }
        }
        if (!checksum && !version_field && in[i] != out[i]) {
            return false;
        }
    }
    return raised;
}

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
        (memcmp(out, data, size) != 0 && !only_section_versions_raised(data, out, size))) {
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
