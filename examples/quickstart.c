/* The README's "Animation graphs" example, complete: the embedded humanoid, the 8-direction
 * locomotion graph from its JSON file, 100 characters walking forward for two seconds. Every
 * call's result is checked (a typo in a parameter name must stop the program, not leave an
 * index uninitialised). Built and run by the tests; tests/test_readme_example.py checks that
 * the README's snippet is taken from this file.
 * Usage: quickstart GRAPH.json   (examples/graphs/locomotion_8dir.json) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <crowdblend/crowdblend.h>

enum { CHARACTERS = 100, FRAMES = 120 };

static int fail(const char *what, const cb_error *err)
{
    fprintf(stderr, "quickstart: %s: %s\n", what, err->message);
    return 1;
}

/* Two seconds of walking forward; then each character has moved forward (+z) and its joints'
 * matrices are finite. */
static int run(cb_crowd *crowd)
{
    /* ---- README snippet: from here ---- */
    uint32_t vx, vy;
    if (cb_crowd_find_param(crowd, 0, "vx", &vx) != CB_OK || /* once; then by index */
        cb_crowd_find_param(crowd, 0, "vy", &vy) != CB_OK) {
        fprintf(stderr, "quickstart: the graph has no parameter vx or vy\n"); /* (no cb_error) */
        return 1;
    }
    float forward_m = 0.0f;
    for (int frame = 0; frame < FRAMES; ++frame) {         /* every frame */
        float *left = cb_crowd_param_column(crowd, 0, vx); /* write parameters ... */
        float *ahead = cb_crowd_param_column(crowd, 0, vy);
        for (uint32_t i = 0; i < cb_crowd_count(crowd, 0); ++i) {
            left[i] = 0.0f, ahead[i] = 1.4f; /* m/s; vx is to the left (+X) */
        }
        cb_result r = cb_crowd_update(crowd, 1.0f / 60.0f); /* ... run every character ... */
        if (r != CB_OK) {
            fprintf(stderr, "quickstart: update: %s\n", cb_result_str(r));
            return 1;
        }
        forward_m += cb_crowd_root_motion(crowd, 0)[0].translation[2]; /* ... read root motion, */
        const float *m = cb_crowd_matrices(crowd, 0, 0); /* matrices, events, states */
        if (!isfinite(m[12])) {
            fprintf(stderr, "quickstart: a matrix is not finite\n");
            return 1;
        }
    }
    /* ---- README snippet: to here ---- */
    printf("character 0 walked %.2f m forward in %d frames\n", (double)forward_m, FRAMES);
    return forward_m > 1.0f ? 0 : (fprintf(stderr, "quickstart: it did not walk\n"), 1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: quickstart GRAPH.json\n");
        return 2;
    }
    cb_error err = {0};
    cb_embedded *set = NULL;
    cb_graph *graph = NULL;
    cb_crowd *crowd = NULL;
    int status = 1;
    if (cb_embedded_create(NULL, &set, &err) != CB_OK) {
        fail("embedded set", &err);
        goto done;
    }
    const cb_clip *clips[64];
    uint32_t clip_count = (uint32_t)cb_embedded_clip_count(set);
    if (clip_count > 64) {
        fprintf(stderr, "quickstart: more clips than expected\n");
        goto done;
    }
    for (uint32_t i = 0; i < clip_count; ++i) {
        clips[i] = cb_embedded_clip(set, i);
    }
    const cb_skeleton *skeleton = cb_embedded_skeleton(set);
    cb_graph_json_desc jd = {.skeleton = skeleton, .clips = clips, .clip_count = clip_count};
    if (cb_graph_load_json_file(argv[1], &jd, &graph, &err) != CB_OK) { /* "file:12:7: ..." */
        fail("graph", &err);
        goto done;
    }
    const cb_graph *graphs[] = {graph};
    cb_crowd_desc cd = {
        .skeleton = skeleton, .capacity = CHARACTERS, .graphs = graphs, .graph_count = 1};
    if (cb_crowd_create(&cd, &crowd, &err) != CB_OK) {
        fail("crowd", &err);
        goto done;
    }
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        cb_character c;
        if (cb_crowd_add(crowd, 0, (float)i / CHARACTERS, &c) != CB_OK) {
            fprintf(stderr, "quickstart: add failed\n");
            goto done;
        }
    }
    status = run(crowd);
done:
    cb_crowd_destroy(crowd); /* the crowd first: a graph in use refuses to go */
    if (graph != NULL && cb_graph_destroy(graph) != CB_OK) {
        fprintf(stderr, "quickstart: the graph is still in use\n");
        status = 1;
    }
    cb_embedded_destroy(set);
    return status;
}
