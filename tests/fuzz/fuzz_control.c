/* libFuzzer target: control messages, as a client sends them (src/serve/control.c). Any bytes
 * must parse to a message or to an error with a message, never crash or read out of bounds; an
 * accepted message's fields must be within the documented ranges; the error reply the server
 * would build from the message must be well-formed. Built and run by scripts/fuzz.sh. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "serve/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cb_ctl c;
    char why[CB_ERROR_MESSAGE_SIZE];
    cb_ctl_error e = cb_ctl_parse((const char *)data, size, &c, why);
    assert(memchr(why, 0, sizeof why) != NULL);
    if (e != CB_CTL_OK) {
        char quoted[2 * CB_ERROR_MESSAGE_SIZE];
        size_t n = cb_json_quote(why, quoted, sizeof quoted);
        assert(n < sizeof quoted && quoted[0] == '"' && quoted[n - 1] == '"');
        assert(strcmp(cb_ctl_error_name(e), "unknown") != 0);
        return 0;
    }
    assert(size <= CB_CTL_MAX_MESSAGE);
    assert((unsigned)c.kind < CB_CTL_KIND_COUNT);
    assert(c.character_count <= CB_CTL_MAX_CHARACTERS);
    for (uint32_t k = 0; k < c.character_count; ++k) {
        assert(c.characters[k] != 0 && c.characters[k] <= CB_CTL_MAX_ID); /* 53 bits */
    }
    assert(memchr(c.name, 0, sizeof c.name) != NULL);
    assert(isfinite(c.value) && isfinite(c.speed_mps) && isfinite(c.direction_rad));
    if (c.kind == CB_CTL_ADD) {
        assert(c.count >= 1 && c.count <= CB_CTL_MAX_ADD);
    }
    if (c.kind == CB_CTL_STEP) {
        assert(c.count >= 1 && c.count <= CB_CTL_MAX_STEP);
    }
    if (c.kind == CB_CTL_TIME_SCALE) {
        assert(c.value >= 0.0f && c.value <= 8.0f);
    }
    return 0;
}
