/* libFuzzer target: the graph JSON loader (cb_graph_load_json) against the embedded skeleton and
 * clips, which every example graph names. Contract: a load either fails with a code and a
 * message, or gives a graph whose every parameter and node has a name it can be found by. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"

static cb_embedded *set;
static const cb_clip *clips[64];
static uint32_t clip_count;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK) {
        abort();
    }
    size_t n = cb_embedded_clip_count(set);
    for (size_t k = 0; k < n && k < 64; ++k) {
        clips[clip_count++] = cb_embedded_clip(set, k);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cb_graph_json_desc jd = {.skeleton = cb_embedded_skeleton(set),
                             .clips = clips,
                             .clip_count = clip_count,
                             .source_name = "fuzz"};
    cb_graph *g = NULL;
    cb_error err = {0};
    cb_result r = cb_graph_load_json((const char *)data, size, &jd, &g, &err);
    if (r != CB_OK) {
        if (err.code != r || err.message[0] == '\0') {
            fprintf(stderr, "contract: error %d without a message\n", r);
            abort();
        }
        return 0;
    }
    for (uint32_t p = 0; p < cb_graph_param_count(g); ++p) {
        uint32_t found = UINT32_MAX;
        if (cb_graph_find_param(g, cb_graph_param_name(g, p), &found) != CB_OK || found != p) {
            fprintf(stderr, "contract: parameter %u cannot be found by its name\n", p);
            abort();
        }
    }
    cb_graph_destroy(g);
    return 0;
}
