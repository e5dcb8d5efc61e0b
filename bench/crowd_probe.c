/* crowd_probe: what creating a crowd costs per character, through the public API only (issue
 * 11, trap 2). One configuration per run, so that the peak RSS is that configuration's:
 *
 *   crowd_probe CHARACTERS KINDS [CAPACITY]
 *
 * builds KINDS blend-space graphs over the embedded humanoid's 17 locomotion clips, creates a
 * crowd with CAPACITY characters per kind (default CHARACTERS: any kind may hold them all, what
 * a host that does not know its mix asks for), adds CHARACTERS characters round-robin over the
 * kinds and runs one frame. Prints one JSON line: the wall time of create, of the adds and of the
 * frame, and the resident memory (VmRSS, then the peak VmHWM) before create, after create,
 * after the adds and after the frame, in KiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crowdblend/crowdblend.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A field of /proc/self/status in KiB ("VmRSS:", "VmHWM:"), or -1. */
static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, field, strlen(field)) == 0) {
            v = strtol(line + strlen(field), NULL, 10);
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return v;
}

static const char *const loco[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CHARACTERS KINDS [CAPACITY per kind]\n", argv[0]);
        return 2;
    }
    uint32_t n = (uint32_t)strtoul(argv[1], NULL, 10);
    uint32_t kinds = (uint32_t)strtoul(argv[2], NULL, 10);
    uint32_t capacity = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : n;
    if (kinds == 0 || kinds > CB_CROWD_MAX_KINDS) {
        fprintf(stderr, "KINDS must be 1..%d\n", CB_CROWD_MAX_KINDS);
        return 2;
    }
    cb_error err = {0};
    cb_embedded *set = NULL;
    if (cb_embedded_create(NULL, &set, &err) != CB_OK) {
        fprintf(stderr, "embedded: %s\n", err.message);
        return 1;
    }
    const cb_clip *clips[17];
    for (int k = 0; k < 17; ++k) {
        clips[k] = cb_embedded_find_clip(set, loco[k]);
    }
    cb_graph *graphs[CB_CROWD_MAX_KINDS] = {0};
    for (uint32_t k = 0; k < kinds; ++k) {
        cb_graph_blend_desc d = {
            .skeleton = cb_embedded_skeleton(set), .clips = clips, .clip_count = 17};
        if (cb_graph_create_blend(&d, &graphs[k], &err) != CB_OK) {
            fprintf(stderr, "graph: %s\n", err.message);
            return 1;
        }
    }
    long rss_before = status_kib("VmRSS:");
    cb_crowd_desc d = {.skeleton = cb_embedded_skeleton(set),
                       .capacity = capacity,
                       .graphs = (const cb_graph *const *)graphs,
                       .graph_count = kinds,
                       .thread_count = 2};
    cb_crowd *crowd = NULL;
    double t0 = now_s();
    cb_result r = cb_crowd_create(&d, &crowd, &err);
    double t_create = now_s() - t0;
    if (r != CB_OK) {
        printf("{\"characters\": %u, \"kinds\": %u, \"capacity\": %u, \"refused\": \"%s\"}\n", n,
               kinds, capacity, err.message);
        return 0;
    }
    long rss_create = status_kib("VmRSS:");
    t0 = now_s();
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        if (cb_crowd_add(crowd, i % kinds, (float)(i % 97) / 97.0f, &ch) != CB_OK) {
            fprintf(stderr, "add %u refused\n", i);
            return 1;
        }
    }
    double t_add = now_s() - t0;
    long rss_add = status_kib("VmRSS:");
    t0 = now_s();
    cb_crowd_update(crowd, 1.0f / 30.0f);
    double t_frame = now_s() - t0;
    long rss_frame = status_kib("VmRSS:"), peak = status_kib("VmHWM:");
    printf("{\"characters\": %u, \"kinds\": %u, \"capacity\": %u, \"create_s\": %.4f, "
           "\"add_s\": %.4f, \"frame_s\": %.4f, \"rss_before_kib\": %ld, "
           "\"rss_create_kib\": %ld, \"rss_add_kib\": %ld, \"rss_frame_kib\": %ld, "
           "\"peak_kib\": %ld}\n",
           n, kinds, capacity, t_create, t_add, t_frame, rss_before, rss_create, rss_add, rss_frame,
           peak);
    cb_crowd_destroy(crowd);
    for (uint32_t k = 0; k < kinds; ++k) {
        cb_graph_destroy(graphs[k]);
    }
    cb_embedded_destroy(set);
    return 0;
}
