/* graph JSON: the loader against the document it reads. A document using every feature of the
 * format loads and its queries match the document (read again here with jansson); the same
 * graph made with the C builder gives bit-identical crowd output; every error the loader can
 * report has a case with its code, its exact "source:line:col:" (the place computed here from a
 * marker in the text) and a message naming the culprit; truncated, mutated and deeply nested
 * documents and failing allocators give an error, never a crash or a leak.
 *
 * Test documents are written in C with ' for " (json() swaps them) so that they read as JSON. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/crowdblend.h"
#include "graph/graph_impl.h" /* the clip a built clip node plays */
#include "test_util.h"

#if !defined(CB_TEST_GRAPH_DIR) || !defined(CB_TEST_GRAPH_DOC)
#error "meson passes CB_TEST_GRAPH_DIR (the test graphs) and CB_TEST_GRAPH_DOC (docs/graph.md)"
#endif

static const char full_path[] = CB_TEST_GRAPH_DIR "/full.json";

static cb_embedded *set;
static const cb_clip *clips[64];
static uint32_t clip_count;

static int setup_set(void)
{
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK) {
        return -1;
    }
    clip_count = (uint32_t)cb_embedded_clip_count(set);
    for (uint32_t i = 0; i < clip_count && i < 64; ++i) {
        clips[i] = cb_embedded_clip(set, i);
    }
    return clip_count <= 64 ? 0 : -1;
}

static cb_graph_json_desc json_desc(const char *source)
{
    cb_graph_json_desc d = {.skeleton = cb_embedded_skeleton(set),
                            .clips = clips,
                            .clip_count = clip_count,
                            .source_name = source};
    return d;
}

/* ------------------------------------------------------------------------------------------ */
/* Text helpers                                                                               */

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    CB_CHECK(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    CB_CHECK(text != NULL && fread(text, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
    fclose(f);
    text[n] = '\0';
    *len = (size_t)n;
    return text;
}

/* A copy of s with ' turned into " (test documents are written with ' to read as JSON). */
static char *json(const char *s)
{
    char *out = malloc(strlen(s) + 1);
    for (size_t i = 0;; ++i) {
        out[i] = s[i] == '\'' ? '"' : s[i];
        if (s[i] == '\0') {
            break;
        }
    }
    return out;
}

static size_t count_of(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what)) {
        n++;
    }
    return n;
}

/* text with its one occurrence of `from` replaced by `to` (a new string). */
static char *subst(const char *text, const char *from, const char *to)
{
    CB_CHECK(count_of(text, from) == 1, "'%s' occurs %zu times in the base document", from,
             count_of(text, from));
    const char *at = strstr(text, from);
    size_t head = (size_t)(at - text), fl = strlen(from), tl = strlen(to);
    char *out = malloc(strlen(text) - fl + tl + 1);
    memcpy(out, text, head);
    memcpy(out + head, to, tl);
    strcpy(out + head + tl, at + fl);
    return out;
}

/* Line and column of byte offset `at`: 1-based, columns counting characters (bytes that do not
 * continue a UTF-8 sequence), the convention jansson uses for its own errors. */
static void place_of(const char *text, size_t at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < at; ++i) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

static cb_graph *load_text(const char *text, const char *source, cb_result *r, cb_error *err)
{
    cb_graph_json_desc d = json_desc(source);
    cb_graph *g = (cb_graph *)&d; /* must stay untouched on failure */
    cb_graph *const sentinel = g;
    *err = (cb_error){0};
    *r = cb_graph_load_json(text, strlen(text), &d, &g, err);
    if (*r != CB_OK) {
        CB_CHECK(g == sentinel, "out written on failure: %s", err->message);
        return NULL;
    }
    return g;
}

/* ------------------------------------------------------------------------------------------ */
/* The full document: what it declares, read with jansson, against the graph's queries.       */

static cb_param_type type_of(json_t *p)
{
    const char *t = json_string_value(json_object_get(p, "type"));
    if (t == NULL || strcmp(t, "float") == 0) {
        return CB_PARAM_FLOAT;
    }
    return strcmp(t, "int") == 0    ? CB_PARAM_INT
           : strcmp(t, "bool") == 0 ? CB_PARAM_BOOL
                                    : CB_PARAM_TRIGGER;
}

/* The names of every node reachable from `name`, collected into reached (a jansson object used
 * as a set): a plain walk of the document's references. */
static void reach(json_t *nodes, const char *name, json_t *reached)
{
    if (json_object_get(reached, name) != NULL) {
        return;
    }
    json_object_set_new(reached, name, json_true());
    json_t *n = json_object_get(nodes, name);
    const char *type = json_string_value(json_object_get(n, "type"));
    size_t i;
    json_t *e;
    if (strcmp(type, "layers") == 0) {
        reach(nodes, json_string_value(json_object_get(n, "base")), reached);
    }
    const char *list = strcmp(type, "layers") == 0          ? "layers"
                       : strcmp(type, "state_machine") == 0 ? "states"
                       : strcmp(type, "clip") == 0          ? NULL
                                                            : "children";
    if (list != NULL) {
        json_array_foreach(json_object_get(n, list), i, e)
        {
            reach(nodes, json_string_value(json_object_get(e, "node")), reached);
        }
    }
}

static void graph_json_full_document_loads_and_matches_its_queries(void **state)
{
    (void)state;
    size_t len;
    char *text = read_text(full_path, &len);
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    CB_CHECK(doc != NULL, "the test's own read of full.json: %s", jerr.text);

    cb_graph_json_desc d = json_desc(NULL);
    cb_graph *g = NULL, *from_memory = NULL;
    cb_error err = {0};
    cb_result r = cb_graph_load_json_file(full_path, &d, &g, &err);
    CB_CHECK(r == CB_OK, "full.json: %s", err.message);
    r = cb_graph_load_json(text, len, &d, &from_memory, &err);
    CB_CHECK(r == CB_OK, "full.json from memory: %s", err.message);
    assert_string_equal(cb_graph_name(g), "full");
    assert_ptr_equal(cb_graph_skeleton(g), cb_embedded_skeleton(set));

    /* Parameters: in document order, with their types and defaults. */
    json_t *params = json_object_get(doc, "parameters");
    assert_int_equal(cb_graph_param_count(g), json_array_size(params));
    size_t i;
    json_t *p;
    json_array_foreach(params, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        uint32_t index = UINT32_MAX;
        assert_int_equal(cb_graph_find_param(g, name, &index), CB_OK);
        assert_int_equal(index, i);
        assert_int_equal(cb_graph_find_param_hash(g, cb_name_hash(name), &index), CB_OK);
        assert_int_equal(index, i);
        assert_string_equal(cb_graph_param_name(g, (uint32_t)i), name);
        assert_int_equal(cb_graph_param_type(g, (uint32_t)i), type_of(p));
        json_t *dv = json_object_get(p, "default");
        float want = json_is_boolean(dv) ? (json_is_true(dv) ? 1.0f : 0.0f)
                     : dv != NULL        ? (float)json_number_value(dv)
                                         : 0.0f;
        CB_CHECK(cb_graph_param_default(g, (uint32_t)i) == want,
                 "parameter %s: default %g, want %g", name,
                 (double)cb_graph_param_default(g, (uint32_t)i), (double)want);
    }
    uint32_t none;
    assert_int_equal(cb_graph_find_param(g, "no_such", &none), CB_ERR_NOT_FOUND);

    /* Nodes: those the root reaches, each once, by name. */
    json_t *nodes = json_object_get(doc, "nodes");
    json_t *reached = json_object();
    reach(nodes, json_string_value(json_object_get(doc, "root")), reached);
    assert_int_equal(cb_graph_node_count(g), json_object_size(reached));
    CB_CHECK(json_object_size(reached) + 1 == json_object_size(nodes),
             "the document has one node the root does not reach");
    for (uint32_t n = 0; n < cb_graph_node_count(g); ++n) {
        const char *name = cb_graph_node_name(g, n);
        CB_CHECK(json_object_get(reached, name) != NULL, "node '%s' is not reached", name);
        json_object_del(reached, name); /* each once */
    }
    assert_int_equal(json_object_size(reached), 0);

    /* State machines: every reachable one, its states in order. */
    uint32_t machines = 0;
    const char *key;
    json_t *n;
    json_object_foreach(nodes, key, n)
    {
        if (strcmp(json_string_value(json_object_get(n, "type")), "state_machine") != 0) {
            continue;
        }
        machines++;
        uint32_t m = UINT32_MAX;
        CB_CHECK(cb_graph_find_state_machine(g, key, &m) == CB_OK, "machine '%s' not found", key);
        json_t *states = json_object_get(n, "states");
        assert_int_equal(cb_graph_state_count(g, m), json_array_size(states));
        json_t *s;
        json_array_foreach(states, i, s)
        {
            const char *name = json_string_value(json_object_get(s, "name"));
            assert_string_equal(cb_graph_state_name(g, m, (uint32_t)i), name);
            uint32_t found = UINT32_MAX;
            assert_int_equal(cb_graph_find_state(g, m, name, &found), CB_OK);
            assert_int_equal(found, i);
        }
    }
    assert_int_equal(cb_graph_state_machine_count(g), machines);
    assert_int_equal(cb_graph_find_state_machine(g, "top", &none), CB_ERR_NOT_FOUND);

    /* The file and the text build the same graph. */
    assert_int_equal(cb_graph_node_count(from_memory), cb_graph_node_count(g));
    for (uint32_t k = 0; k < cb_graph_node_count(g); ++k) {
        assert_string_equal(cb_graph_node_name(from_memory, k), cb_graph_node_name(g, k));
    }
    json_decref(reached);
    json_decref(doc);
    cb_graph_destroy(g);
    cb_graph_destroy(from_memory);
    free(text);
}

/* ------------------------------------------------------------------------------------------ */
/* The same graph through the C builder                                                       */

static cb_error berr;

#define B(call)                                                                                    \
    do {                                                                                           \
        berr = (cb_error){0};                                                                      \
        cb_result r_ = (call);                                                                     \
        CB_CHECK(r_ == CB_OK, "%s: %s", #call, berr.message);                                      \
    } while (0)

static cb_graph_node add_clip(cb_graph_builder *b, cb_graph_clip_desc d)
{
    cb_graph_node id = {0};
    B(cb_graph_add_clip(b, &d, &id, &berr));
    return id;
}

static const double deg = 3.14159265358979323846 / 180.0;

/* full.json, spelled with the builder. The loader adds nodes depth-first from the root,
 * children before their parent in the order they are listed, then the nodes the root does not
 * reach in document order (graph.h); clip slots follow the order of adding, so this adds them
 * in that order too. */
static cb_graph *build_full_by_hand(void)
{
    cb_graph_builder_desc bd = {.skeleton = cb_embedded_skeleton(set),
                                .clips = clips,
                                .clip_count = clip_count,
                                .name = "full"};
    cb_graph_builder *b = NULL;
    B(cb_graph_builder_create(&bd, &b, &berr));
    static const struct {
        const char *name;
        cb_param_type type;
        float value;
    } params[] = {
        {"vx", CB_PARAM_FLOAT, 0},          {"vy", CB_PARAM_FLOAT, 0.25f},
        {"vz", CB_PARAM_FLOAT, 0},          {"speed_in", CB_PARAM_FLOAT, 0.8f},
        {"speed", CB_PARAM_FLOAT, 0},       {"fwd", CB_PARAM_FLOAT, 0},
        {"back", CB_PARAM_FLOAT, 0},        {"left", CB_PARAM_FLOAT, 0},
        {"right", CB_PARAM_FLOAT, 0},       {"quad", CB_PARAM_INT, 0},
        {"mode", CB_PARAM_INT, 1},          {"crouch", CB_PARAM_BOOL, 1},
        {"jump", CB_PARAM_TRIGGER, 0},      {"stride", CB_PARAM_FLOAT, 1},
        {"upper_w", CB_PARAM_FLOAT, 0.25f}, {"lean_w", CB_PARAM_FLOAT, -0.5f},
        {"tx", CB_PARAM_FLOAT, 0},          {"ty", CB_PARAM_FLOAT, 1.2f},
        {"tz", CB_PARAM_FLOAT, 0.4f},       {"px", CB_PARAM_FLOAT, 0},
        {"py", CB_PARAM_FLOAT, 0},          {"pz", CB_PARAM_FLOAT, -1},
        {"ik_w", CB_PARAM_FLOAT, 0.5f},     {"lx", CB_PARAM_FLOAT, 0},
        {"ly", CB_PARAM_FLOAT, 1.6f},       {"lz", CB_PARAM_FLOAT, 2},
        {"look_w", CB_PARAM_FLOAT, 1},      {"vspeed", CB_PARAM_FLOAT, 0},
        {"turn", CB_PARAM_FLOAT, 0.4f},     {"root_x", CB_PARAM_FLOAT, 0},
        {"root_y", CB_PARAM_FLOAT, 0},      {"root_z", CB_PARAM_FLOAT, 0.3f},
        {"root_yaw", CB_PARAM_FLOAT, 0.2f}, {"lock", CB_PARAM_FLOAT, 1},
        {"locked_l", CB_PARAM_FLOAT, 0},    {"failed_l", CB_PARAM_FLOAT, 0},
        {"locked_r", CB_PARAM_FLOAT, 0},
    };
    for (size_t i = 0; i < sizeof params / sizeof params[0]; ++i) {
        B(cb_graph_add_param(b, params[i].name, params[i].type, params[i].value, &berr));
    }
    cb_graph_velocity_blend_desc vb = {.x = "vx",
                                       .y = "vy",
                                       .z = "vz",
                                       .forward = "fwd",
                                       .backward = "back",
                                       .left = "left",
                                       .right = "right",
                                       .speed = "vspeed",
                                       .min_sq_len = 0.0004f};
    B(cb_graph_add_velocity_blend(b, &vb, &berr));
    cb_graph_interp_to_desc it = {.input = "speed_in", .output = "speed", .speed = 4};
    B(cb_graph_add_interp_to(b, &it, &berr));
    cb_graph_quadrant_desc qd = {.x = "vx",
                                 .y = "vy",
                                 .output = "quad",
                                 .dead_zone_rad = (float)(15 * deg),
                                 .min_speed = 0.2f};
    B(cb_graph_add_quadrant(b, &qd, &berr));

    /* top -> machine -> its states in order. */
    cb_graph_node idle_clip =
        add_clip(b, (cb_graph_clip_desc){.name = "idle_clip", .clip = "idle"});
    cb_graph_node idle_fast = add_clip(b, (cb_graph_clip_desc){.name = "idle_fast",
                                                               .clip = "idle",
                                                               .speed = 1.5f,
                                                               .start_offset = 0.25f,
                                                               .clamp = true});
    cb_graph_state idle_states[] = {{.name = "stand", .node = idle_clip},
                                    {.name = "fidget", .node = idle_fast}};
    cb_graph_transition idle_tr[] = {
        {.from = "stand",
         .to = "fidget",
         .has_exit_time = true,
         .exit_time = 0.9f,
         .duration_s = 0.3f},
        {.from = "fidget",
         .to = "stand",
         .has_exit_time = true,
         .exit_time = 0.95f,
         .duration_s = 0.2f},
    };
    cb_graph_state_machine_desc idle_sm = {.name = "idle_sm",
                                           .states = idle_states,
                                           .state_count = 2,
                                           .transitions = idle_tr,
                                           .transition_count = 2};
    cb_graph_node idle_sm_id;
    B(cb_graph_add_state_machine(b, &idle_sm, &idle_sm_id, &berr));

    const char *loco_names[] = {"still", "walk_f", "walk_l", "walk_b", "walk_r",
                                "run_f", "run_l",  "run_b",  "run_r"};
    const char *loco_clips[] = {"idle",  "walk_f", "walk_l", "walk_b", "walk_r",
                                "run_f", "run_l",  "run_b",  "run_r"};
    cb_graph_node loco[9];
    for (int k = 0; k < 9; ++k) {
        loco[k] = add_clip(b, (cb_graph_clip_desc){.name = loco_names[k], .clip = loco_clips[k]});
    }
    const cb_graph_node still = loco[0], walk_f = loco[1], walk_l = loco[2], walk_b = loco[3],
                        walk_r = loco[4], run_f = loco[5];
    const float loco_pos[18] = {0, 0, 0,    1.4f,  -1.4f, 0, 0,     -1.4f, 1.4f,
                                0, 0, 3.5f, -3.5f, 0,     0, -3.5f, 3.5f,  0};
    cb_graph_blend_space_desc loco2d = {
        .name = "loco2d",
        .solver = {.kind = CB_SOLVER_KIND_KNN_IDW, .knn_k = 4, .idw_power = 2.5f},
        .params = {"vy", "vx"},
        .children = loco,
        .positions = loco_pos,
        .child_count = 9,
        .sync_group = "loco"};
    cb_graph_node loco2d_id;
    B(cb_graph_add_blend_space(b, &loco2d, &loco2d_id, &berr));

    cb_graph_node dir_children[] = {walk_f, walk_b, walk_l, walk_r};
    const char *dir_weights[] = {"fwd", "back", "left", "right"};
    cb_graph_direct_desc dir4 = {
        .name = "dir4", .children = dir_children, .weights = dir_weights, .child_count = 4};
    cb_graph_node dir4_id;
    B(cb_graph_add_direct(b, &dir4, &dir4_id, &berr));

    cb_graph_node speed_children[] = {walk_f, run_f};
    const float speed_pos[] = {1.4f, 3.5f};
    cb_graph_blend_space_desc speed1d = {
        .name = "speed1d",
        .solver = {.kind = CB_SOLVER_KIND_LINEAR_1D},
        .params = {"speed"},
        .children = speed_children,
        .positions = speed_pos,
        .child_count = 2,
        .sync_group = "loco",
        .rate_warp = {.speed_param = "speed_in", .min_rate = 0.6f, .max_rate = 1.5f}};
    cb_graph_node speed1d_id;
    B(cb_graph_add_blend_space(b, &speed1d, &speed1d_id, &berr));

    cb_graph_node walk_fl = add_clip(b, (cb_graph_clip_desc){.name = "walk_fl", .clip = "walk_fl"});
    cb_graph_node walk_fr = add_clip(b, (cb_graph_clip_desc){.name = "walk_fr", .clip = "walk_fr"});
    cb_graph_node grid_children[] = {walk_l, walk_r, walk_fl, walk_fr};
    const float grid_pos[] = {-1, 0, 1, 0, -1, 2, 1, 2};
    cb_graph_blend_space_desc grid = {
        .name = "grid",
        .solver = {.kind = CB_SOLVER_KIND_BILINEAR_2D, .grid_nx = 2, .grid_ny = 2},
        .params = {"vy", "vx"},
        .children = grid_children,
        .positions = grid_pos,
        .child_count = 4};
    cb_graph_node grid_id;
    B(cb_graph_add_blend_space(b, &grid, &grid_id, &berr));

    cb_graph_node run_fast = add_clip(b, (cb_graph_clip_desc){.name = "run_fast",
                                                              .clip = "run_f",
                                                              .speed = 1.2f,
                                                              .speed_param = "stride",
                                                              .sync_group = "feet"});
    cb_graph_node rbf_children[] = {still, walk_f, run_fast};
    const float rbf_pos[] = {0, 1.4f, 4.2f};
    cb_graph_blend_space_desc rbf1d = {.name = "rbf1d",
                                       .solver = {.kind = CB_SOLVER_KIND_RBF,
                                                  .dimension = 1,
                                                  .rbf_kernel = CB_RBF_KERNEL_GAUSSIAN,
                                                  .rbf_epsilon = 0.8f},
                                       .params = {"speed"},
                                       .children = rbf_children,
                                       .positions = rbf_pos,
                                       .child_count = 3};
    cb_graph_node rbf1d_id;
    B(cb_graph_add_blend_space(b, &rbf1d, &rbf1d_id, &berr));

    cb_graph_state states[] = {
        {.name = "idle", .node = idle_sm_id}, {.name = "move", .node = loco2d_id, .speed = 1.1f},
        {.name = "strafe", .node = dir4_id},  {.name = "sprint", .node = speed1d_id, .speed = 0.9f},
        {.name = "grid", .node = grid_id},    {.name = "glide", .node = rbf1d_id},
    };
    cb_graph_condition c_jump[] = {{.param = "jump", .op = CB_COMPARE_TRUE}};
    cb_graph_condition c_go[] = {{.param = "speed", .op = CB_COMPARE_GREATER, .value = 0.5f},
                                 {.param = "crouch", .op = CB_COMPARE_FALSE}};
    cb_graph_condition c_stop[] = {{.param = "speed", .op = CB_COMPARE_LESS, .value = 0.3f}};
    cb_graph_condition c_mode2[] = {{.param = "mode", .op = CB_COMPARE_EQUAL, .value = 2}};
    cb_graph_condition c_sprint[] = {{.param = "mode", .op = CB_COMPARE_NOT_EQUAL, .value = 2},
                                     {.param = "crouch", .op = CB_COMPARE_TRUE}};
    cb_graph_condition c_mode3[] = {{.param = "mode", .op = CB_COMPARE_EQUAL, .value = 3}};
    cb_graph_condition c_glide[] = {{.param = "mode", .op = CB_COMPARE_EQUAL, .value = 4},
                                    {.param = "quad", .op = CB_COMPARE_NOT_EQUAL, .value = 0}};
    cb_graph_condition c_below4[] = {{.param = "mode", .op = CB_COMPARE_LESS, .value = 4}};
    cb_graph_condition c_below3[] = {{.param = "mode", .op = CB_COMPARE_LESS, .value = 3}};
    cb_graph_transition tr[] = {
        {.from = NULL,
         .to = "idle",
         .conditions = c_jump,
         .condition_count = 1,
         .duration_s = 0.2f,
         .blend = CB_TRANSITION_INERTIALIZE,
         .to_self = true},
        {.from = "idle",
         .to = "move",
         .conditions = c_go,
         .condition_count = 2,
         .duration_s = 0.25f,
         .blend = CB_TRANSITION_CROSSFADE,
         .interruption = CB_INTERRUPTION_SOURCE},
        {.from = "move",
         .to = "idle",
         .conditions = c_stop,
         .condition_count = 1,
         .duration_s = 0.3f,
         .blend = CB_TRANSITION_INERTIALIZE,
         .interruption = CB_INTERRUPTION_DESTINATION},
        {.from = "move",
         .to = "strafe",
         .conditions = c_mode2,
         .condition_count = 1,
         .has_exit_time = true,
         .exit_time = 0.5f,
         .duration_s = 0.2f},
        {.from = "strafe",
         .to = "sprint",
         .conditions = c_sprint,
         .condition_count = 2,
         .duration_s = 0.15f,
         .interruption = CB_INTERRUPTION_NONE},
        {.from = "sprint",
         .to = "move",
         .has_exit_time = true,
         .exit_time = 0.8f,
         .duration_s = 0.1f},
        {.from = "move",
         .to = "grid",
         .conditions = c_mode3,
         .condition_count = 1,
         .duration_s = 0.2f},
        {.from = "grid",
         .to = "glide",
         .conditions = c_glide,
         .condition_count = 2,
         .duration_s = 0.25f,
         .blend = CB_TRANSITION_INERTIALIZE},
        {.from = "glide",
         .to = "move",
         .conditions = c_below4,
         .condition_count = 1,
         .duration_s = 0.2f},
        {.from = "grid",
         .to = "move",
         .conditions = c_below3,
         .condition_count = 1,
         .duration_s = 0.2f,
         .blend = CB_TRANSITION_CROSSFADE},
    };
    cb_graph_state_machine_desc machine = {.name = "machine",
                                           .states = states,
                                           .state_count = 6,
                                           .initial = "move",
                                           .transitions = tr,
                                           .transition_count = 10};
    cb_graph_node machine_id;
    B(cb_graph_add_state_machine(b, &machine, &machine_id, &berr));

    cb_graph_node wave = add_clip(
        b, (cb_graph_clip_desc){.name = "wave", .clip = "wave_upper", .start_offset = 0.5f});
    cb_graph_node lean = add_clip(b, (cb_graph_clip_desc){.name = "lean", .clip = "lean_add"});
    cb_graph_layer layers[] = {
        {.node = wave, .mode = CB_LAYER_OVERRIDE, .weight = "upper_w", .mask_joint = "spine_01"},
        {.node = lean, .mode = CB_LAYER_ADDITIVE, .weight = "lean_w"},
    };
    cb_graph_layers_desc top = {
        .name = "top", .base = machine_id, .layers = layers, .layer_count = 2};
    cb_graph_node top_id;
    B(cb_graph_add_layers(b, &top, &top_id, &berr));
    (void)add_clip(b, (cb_graph_clip_desc){.name = "unused", .clip = "walk_b", .clamp = true});

    const char *spine[] = {"spine_01", "spine_02", "spine_03"};
    const float spine_w[] = {0.3f, 0.3f, 0.4f};
    cb_graph_orientation_warp_desc turn = {.hip_joint = "pelvis",
                                           .spine_joints = spine,
                                           .spine_weights = spine_w,
                                           .spine_count = 3,
                                           .angle = "turn",
                                           .weight = "look_w",
                                           .limit_rad = (float)(50 * deg)};
    B(cb_graph_add_orientation_warp(b, &turn, &berr));
    const cb_graph_stride_leg legs[] = {{"thigh_l", "calf_l", "ball_l", {1, 0, 0}},
                                        {"thigh_r", "calf_r", "ball_r", {0, 0, 0}}};
    cb_graph_stride_warp_desc stride = {.hip_joint = "pelvis",
                                        .legs = legs,
                                        .leg_count = 2,
                                        .scale = "stride",
                                        .direction = {"vx", "vy"},
                                        .weight = "ik_w",
                                        .soften = 0.95f};
    B(cb_graph_add_stride_warp(b, &stride, &berr));
    cb_graph_two_bone_ik_desc arm = {.start_joint = "upperarm_l",
                                     .mid_joint = "lowerarm_l",
                                     .end_joint = "hand_l",
                                     .target = {"tx", "ty", "tz"},
                                     .pole = {"px", "py", "pz"},
                                     .weight = "ik_w",
                                     .mid_axis = {-1, 0, 0},
                                     .soften = 0.9f};
    B(cb_graph_add_two_bone_ik(b, &arm, &berr));
    const char *chain[] = {"spine_03", "neck", "head"};
    const float chain_w[] = {0.2f, 0.3f, 0.5f};
    cb_graph_aim_ik_desc look = {.joints = chain,
                                 .joint_weights = chain_w,
                                 .joint_count = 3,
                                 .target = {"lx", "ly", "lz"},
                                 .weight = "look_w",
                                 .forward = {0, 0, 1},
                                 .up = {0, 1, 0},
                                 .pole = {0, 1, 0},
                                 .offset = {0, 0.08f, 0.1f},
                                 .limit_rad = (float)(60 * deg)};
    B(cb_graph_add_aim_ik(b, &look, &berr));
    const cb_graph_foot_lock_leg feet[2] = {
        {.chain = {"thigh_l", "calf_l", "ball_l", {1, 0, 0}},
         .plant_marker = "foot_plant_l",
         .lift_marker = "foot_lift_l",
         .locked = "locked_l",
         .failed = "failed_l"},
        {.chain = {"thigh_r", "calf_r", "ball_r", {0, 0, 0}}, .locked = "locked_r"},
    };
    cb_graph_foot_lock_desc lock = {.legs = feet,
                                    .leg_count = 2,
                                    .root_position = {"root_x", "root_y", "root_z"},
                                    .root_yaw = "root_yaw",
                                    .weight = "lock",
                                    .release_s = 0.2f,
                                    .fail_distance_m = 0.02f,
                                    .soften = 0.97f};
    B(cb_graph_add_foot_lock(b, &lock, &berr));
    B(cb_graph_set_root(b, top_id, &berr));
    cb_graph *g = NULL;
    B(cb_graph_build(b, &g, &berr));
    cb_graph_builder_destroy(b);
    return g;
}

enum { CHARACTERS = 40, FRAMES = 300 };

static uint32_t param_of(cb_crowd *c, const char *name)
{
    uint32_t p = UINT32_MAX;
    CB_CHECK(cb_crowd_find_param(c, 0, name, &p) == CB_OK, "no parameter '%s'", name);
    return p;
}

static cb_crowd *crowd_of(const cb_graph *g)
{
    cb_crowd_desc d = {.skeleton = cb_embedded_skeleton(set),
                       .capacity = CHARACTERS,
                       .graphs = &g,
                       .graph_count = 1,
                       .thread_count = 2};
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "crowd: %s", err.message);
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, 0.037f * (float)i, &ch), CB_OK);
    }
    return c;
}

/* Host inputs that move every character through the machine's states: velocities sweeping all
 * directions, a mode that steps through 0..4, crouch toggling, a jump now and then. */
static void write_inputs(cb_crowd *c, uint32_t f)
{
    static const char *const floats[] = {"vx",     "vy", "speed_in", "stride", "upper_w",
                                         "lean_w", "tx", "ty",       "lz"};
    float *col[9];
    for (int k = 0; k < 9; ++k) {
        col[k] = cb_crowd_param_column(c, 0, param_of(c, floats[k]));
    }
    float *mode = cb_crowd_param_column(c, 0, param_of(c, "mode"));
    float *crouch = cb_crowd_param_column(c, 0, param_of(c, "crouch"));
    float *jump = cb_crowd_param_column(c, 0, param_of(c, "jump"));
    float t = (float)f / 60.0f;
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        float fi = (float)i;
        col[0][i] = 3.8f * sinf(0.9f * t + 0.5f * fi);
        col[1][i] = 2.5f * cosf(0.6f * t + 0.3f * fi);
        col[2][i] = 2.0f + 2.0f * sinf(0.4f * t + fi);
        col[3][i] = 0.8f + 0.4f * sinf(1.3f * t + fi);
        col[4][i] = 0.5f + 0.6f * sinf(0.7f * t + 2.0f * fi); /* leaves [0, 1] at times */
        col[5][i] = 0.5f + 0.5f * cosf(0.5f * t + fi);
        col[6][i] = 0.3f * sinf(t);
        col[7][i] = 1.0f + 0.2f * cosf(t);
        col[8][i] = 2.0f + sinf(fi);
        mode[i] = (float)((f / 45 + i) % 5);
        crouch[i] = (f / 70 + i) % 3 == 0 ? 1.0f : 0.0f;
        if ((f + 7 * i) % 83 == 0) {
            jump[i] = 1.0f;
        }
    }
}

static void graph_json_matches_the_same_graph_built_in_c(void **state)
{
    (void)state;
    cb_graph_json_desc d = json_desc(NULL);
    cb_graph *from_json = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json_file(full_path, &d, &from_json, &err) == CB_OK, "%s", err.message);
    cb_graph *by_hand = build_full_by_hand();
    assert_int_equal(cb_graph_node_count(from_json), cb_graph_node_count(by_hand));
    for (uint32_t n = 0; n < cb_graph_node_count(by_hand); ++n) {
        assert_string_equal(cb_graph_node_name(from_json, n), cb_graph_node_name(by_hand, n));
    }
    cb_crowd *a = crowd_of(from_json), *b = crowd_of(by_hand);
    uint32_t machine = UINT32_MAX, idle_sm = UINT32_MAX;
    assert_int_equal(cb_graph_find_state_machine(from_json, "machine", &machine), CB_OK);
    assert_int_equal(cb_graph_find_state_machine(from_json, "idle_sm", &idle_sm), CB_OK);
    uint32_t visits[6] = {0}, idle_visits[2] = {0}, changes = 0;
    uint32_t last[CHARACTERS];
    for (uint32_t i = 0; i < CHARACTERS; ++i) {
        last[i] = cb_crowd_state(a, 0, machine, i);
    }
    for (uint32_t f = 0; f < FRAMES; ++f) {
        write_inputs(a, f);
        write_inputs(b, f);
        float dt = 1.0f / 60.0f + 0.002f * (float)(f % 4);
        assert_int_equal(cb_crowd_update(a, dt), CB_OK);
        assert_int_equal(cb_crowd_update(b, dt), CB_OK);
        uint64_t ha = cb_crowd_output_hash(a), hb = cb_crowd_output_hash(b);
        CB_CHECK(ha == hb, "frame %u: JSON graph %016llx, C graph %016llx", f,
                 (unsigned long long)ha, (unsigned long long)hb);
        for (uint32_t i = 0; i < CHARACTERS; ++i) {
            uint32_t s = cb_crowd_state(a, 0, machine, i);
            CB_CHECK(s == cb_crowd_state(b, 0, machine, i) &&
                         cb_crowd_next_state(a, 0, machine, i) ==
                             cb_crowd_next_state(b, 0, machine, i),
                     "frame %u character %u: the machines differ", f, i);
            assert_true(s < 6);
            visits[s]++;
            changes += s != last[i];
            last[i] = s;
            uint32_t is = cb_crowd_state(a, 0, idle_sm, i);
            assert_true(is < 2);
            idle_visits[is] += s == 0;
        }
    }
    /* The comparison means something only if the run went through every state. */
    for (int s = 0; s < 6; ++s) {
        CB_CHECK(visits[s] > 0, "state '%s' never visited",
                 cb_graph_state_name(from_json, machine, (uint32_t)s));
    }
    CB_CHECK(idle_visits[0] > 0 && idle_visits[1] > 0, "idle sub-states: %u, %u", idle_visits[0],
             idle_visits[1]);
    cb_test_note("JSON vs C graph: %d frames x %d characters bit-identical; %u state changes; "
                 "character-frames per state %u %u %u %u %u %u",
                 FRAMES, CHARACTERS, changes, visits[0], visits[1], visits[2], visits[3], visits[4],
                 visits[5]);
    cb_crowd_destroy(a);
    cb_crowd_destroy(b);
    cb_graph_destroy(from_json);
    cb_graph_destroy(by_hand);
}

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                     */

/* The small document the error cases edit. 'x' is a node nothing reaches: the loader still
 * builds it, so replacing it tries any node definition. */
static const char small[] =
    "{\n"
    "  'name': 'small',\n"
    "  'parameters': [\n"
    "    {'name': 'speed', 'type': 'float', 'default': 1.5},\n"
    "    {'name': 'crouch', 'type': 'bool'},\n"
    "    {'name': 'jump', 'type': 'trigger'},\n"
    "    {'name': 'mode', 'type': 'int', 'default': 2},\n"
    "    {'name': 'vx'},\n"
    "    {'name': 'vy'}\n"
    "  ],\n"
    "  'processors': [\n"
    "    {'type': 'interp_to', 'input': 'vx', 'output': 'vy', 'speed': 3}\n"
    "  ],\n"
    "  'nodes': {\n"
    "    'sm': {'type': 'state_machine', 'initial': 'walk',\n"
    "           'states': [{'name': 'walk', 'node': 'walk'}, {'name': 'run', 'node': 'run'}],\n"
    "           'transitions': [{'from': 'walk', 'to': 'run',\n"
    "                            'conditions': [{'param': 'speed', 'op': '>', 'value': 2}]}]},\n"
    "    'walk': {'type': 'clip', 'clip': 'walk_f'},\n"
    "    'run': {'type': 'clip', 'clip': 'run_f'},\n"
    "    'x': {'type': 'clip', 'clip': 'idle'}\n"
    "  },\n"
    "  'root': 'sm'\n"
    "}\n";

/* Spots of `small` the cases replace. */
#define P_VY "{'name': 'vy'}"
#define PROC "{'type': 'interp_to', 'input': 'vx', 'output': 'vy', 'speed': 3}"
#define X "'x': {'type': 'clip', 'clip': 'idle'}"
#define ROOT "'root': 'sm'"
#define TRANS "{'from': 'walk', 'to': 'run',"
#define COND "{'param': 'speed', 'op': '>', 'value': 2}"
#define STATE_RUN "{'name': 'run', 'node': 'run'}"
#define BS1 "'x': {'type': 'blend_space', 'solver': 'linear_1d', 'params': 'speed', "
#define BS1_KIDS "'children': [{'node': 'walk', 'position': 1}, {'node': 'run', 'position': 3}]}"
#define DIRECT "'x': {'type': 'direct', 'children': "
#define LAYERS "'x': {'type': 'layers', 'base': 'walk', 'layers': "
#define TWO_BONE "{'type': 'two_bone_ik', 'start': 'upperarm_l', 'mid': 'lowerarm_l', "
#define AIM "{'type': 'aim_ik', 'target': ['vx', 'vx', 'vx'], "

typedef struct bad {
    const char *what;
    /* small with `from` replaced by `to` (and from2 by to2); from NULL: `to` is the document */
    const char *from, *to, *from2, *to2;
    cb_result code;
    /* the error's place: the first byte of `at` (unique in the document) plus `shift` bytes */
    const char *at;
    int shift;
    const char *says; /* part of the message (after the place) */
} bad;

/* jansson's place for a syntax error is the last character it read: the end of a bad token. */
static const bad cases[] = {
    /* Malformed JSON: jansson's own place and words. */
    {"bad literal", ROOT, "'root': tru", NULL, NULL, CB_ERR_PARSE, "tru", 2, "invalid token"},
    {"trailing comma", ROOT, "'root': 'sm',", NULL, NULL, CB_ERR_PARSE, ",\n}", 2, "expected"},
    {"duplicate key", X, "'x': {'type': 'clip', 'clip': 'idle', 'clip': 'idle'}", NULL, NULL,
     CB_ERR_PARSE, "'idle', 'clip'", 13, "duplicate object key"},
    {"cut short", NULL, "{'nodes': {'a': [1, 2", NULL, NULL, CB_ERR_PARSE, "2", 0, "expected"},
    {"cut after a newline", NULL, "{'nodes': {\n", NULL, NULL, CB_ERR_PARSE, "\n", 1,
     "end of file"},
    /* (jansson points at the string that holds the byte) */
    {"not UTF-8", X, "'x': {'type': 'clip', 'clip': '\xff'}", NULL, NULL, CB_ERR_PARSE, "'\xff", 0,
     "unable to decode byte 0xff"},
    {"a bare string", NULL, "  'graph'", NULL, NULL, CB_ERR_PARSE, "'graph'", 6, "expected"},
    {"top level is an array", NULL, "\n  [1, 2]", NULL, NULL, CB_ERR_PARSE, "[", 0,
     "a graph must be a JSON object"},

    /* The document and its parameters. */
    {"version above this build's", "'name': 'small'", "'version': 2, 'name': 'small'", NULL, NULL,
     CB_ERR_UNSUPPORTED, "2,", 0, "format version 2: this build reads version 1"},
    {"version not a whole number", "'name': 'small'", "'version': 1.25, 'name': 'small'", NULL,
     NULL, CB_ERR_PARSE, "1.25", 0, "\"version\" must be a whole number >= 1"},
    {"version zero", "'name': 'small'", "'version': 0, 'name': 'small'", NULL, NULL, CB_ERR_PARSE,
     "0,", 0, "\"version\" must be a whole number >= 1"},
    {"unknown top-level key", ROOT, "'root': 'sm', 'roots': 'sm'", NULL, NULL, CB_ERR_PARSE,
     "'roots'", 0, "unknown key 'roots' in the graph"},
    {"name not a string", "'name': 'small'", "'name': 9", NULL, NULL, CB_ERR_PARSE, "9", 0,
     "\"name\" must be a string"},
    {"parameters not an array", NULL, "{'parameters': {'a': 1}, 'nodes': {}}", NULL, NULL,
     CB_ERR_PARSE, "{'a'", 0, "\"parameters\" must be an array"},
    {"parameter not an object", P_VY, "42", NULL, NULL, CB_ERR_PARSE, "42", 0,
     "a parameter must be an object"},
    {"unknown parameter key", P_VY, "{'name': 'vy', 'defualt': 1}", NULL, NULL, CB_ERR_PARSE,
     "'defualt'", 0, "unknown key 'defualt' in a parameter"},
    {"parameter without name", P_VY, "{'type': 'float'}", NULL, NULL, CB_ERR_PARSE,
     "{'type': 'float'}", 0, "missing \"name\""},
    {"parameter name not a string", P_VY, "{'name': 17}", NULL, NULL, CB_ERR_PARSE, "17", 0,
     "\"name\" must be a string"},
    {"unknown parameter type", P_VY, "{'name': 'vy', 'type': 'double'}", NULL, NULL, CB_ERR_PARSE,
     "'double'", 0, "unknown parameter type 'double' (one of: float, int"},
    {"parameter type not a string", P_VY, "{'name': 'vy', 'type': 11}", NULL, NULL, CB_ERR_PARSE,
     "11", 0, "\"type\" must be a string"},
    {"default not a number", P_VY, "{'name': 'vy', 'default': 'high'}", NULL, NULL, CB_ERR_PARSE,
     "'high'", 0, "\"default\" must be a number"},
    {"default beyond float", P_VY, "{'name': 'vy', 'default': 1e300}", NULL, NULL, CB_ERR_PARSE,
     "1e300", 0, "\"default\" 1e+300 does not fit in a float"},
    {"negative default beyond float", P_VY, "{'name': 'vy', 'default': -3.5e38}", NULL, NULL,
     CB_ERR_PARSE, "-3.5e38", 0, "does not fit in a float"},
    {"fractional int default", P_VY, "{'name': 'vy', 'type': 'int', 'default': 2.5}", NULL, NULL,
     CB_ERR_INVALID_ARGUMENT, "2.5", 0, "int parameter 'vy' must be a whole number"},
    {"int default beyond 2^24", P_VY, "{'name': 'vy', 'type': 'int', 'default': 16777217}", NULL,
     NULL, CB_ERR_INVALID_ARGUMENT, "16777217", 0, "must be a whole number within +-16777216"},
    {"bool default neither 0 nor 1", P_VY, "{'name': 'vy', 'type': 'bool', 'default': 0.5}", NULL,
     NULL, CB_ERR_INVALID_ARGUMENT, "{'name': 'vy', 'type'", 0,
     "a bool's or trigger's default is 0 or 1"},
    {"duplicate parameter", P_VY, "{'name': 'speed'}", NULL, NULL, CB_ERR_DUPLICATE,
     "{'name': 'speed'}", 0, "parameter 'speed' is declared twice"},
    {"empty parameter name", P_VY, "{'name': ''}", NULL, NULL, CB_ERR_INVALID_ARGUMENT,
     "{'name': ''}", 0, "the name must have 1 to 63 characters"},

    /* Processors. */
    {"processors not an array", NULL, "{'processors': 'none', 'nodes': {}}", NULL, NULL,
     CB_ERR_PARSE, "'none'", 0, "\"processors\" must be an array"},
    {"processor not an object", PROC, "'interp'", NULL, NULL, CB_ERR_PARSE, "'interp'", 0,
     "a processor must be an object"},
    {"processor without type", PROC, "{'input': 'vx', 'output': 'vy', 'speed': 3}", NULL, NULL,
     CB_ERR_PARSE, "{'input'", 0, "missing \"type\""},
    {"unknown processor type", PROC, "{'type': 'smooth'}", NULL, NULL, CB_ERR_PARSE, "'smooth'", 0,
     "unknown processor type 'smooth' (one of: velocity_blend, interp_to, quadrant)"},
    {"processor type not a string", PROC, "{'type': []}", NULL, NULL, CB_ERR_PARSE, "[]", 0,
     "\"type\" must be a string"},
    {"unknown interp_to key", PROC,
     "{'type': 'interp_to', 'input': 'vx', 'output': 'vy', 'rate': 3}", NULL, NULL, CB_ERR_PARSE,
     "'rate'", 0, "unknown key 'rate' in an interp_to processor"},
    {"unknown velocity_blend key", PROC, "{'type': 'velocity_blend', 'x': 'vx', 'backwards': 'vy'}",
     NULL, NULL, CB_ERR_PARSE, "'backwards'", 0, "unknown key 'backwards' in a velocity_blend"},
    {"unknown quadrant key", PROC, "{'type': 'quadrant', 'dead_zone': 10}", NULL, NULL,
     CB_ERR_PARSE, "'dead_zone'", 0, "unknown key 'dead_zone' in a quadrant processor"},
    {"interp_to without speed", PROC, "{'type': 'interp_to', 'input': 'vx', 'output': 'vy'}", NULL,
     NULL, CB_ERR_PARSE, "{'type': 'interp_to'", 0, "missing \"speed\""},
    {"velocity_blend without forward", PROC, "{'type': 'velocity_blend', 'x': 'vx', 'y': 'vy'}",
     NULL, NULL, CB_ERR_PARSE, "{'type': 'velocity_blend'", 0, "missing \"forward\""},
    {"interp_to speed not a number", PROC,
     "{'type': 'interp_to', 'input': 'vx', 'output': 'vy', 'speed': 'fast'}", NULL, NULL,
     CB_ERR_PARSE, "'fast'", 0, "\"speed\" must be a number"},
    {"processor input unknown", PROC,
     "{'type': 'interp_to', 'input': 'vq', 'output': 'vy', 'speed': 3}", NULL, NULL,
     CB_ERR_NOT_FOUND, "{'type': 'interp_to'", 0, "unknown parameter 'vq'"},
    {"processor input not a float", PROC,
     "{'type': 'interp_to', 'input': 'mode', 'output': 'vy', 'speed': 3}", NULL, NULL,
     CB_ERR_MISMATCH, "{'type': 'interp_to'", 0, "parameter 'mode' must be a float"},
    {"quadrant output not an int", PROC,
     "{'type': 'quadrant', 'x': 'vx', 'y': 'speed', 'output': 'vy'}", NULL, NULL, CB_ERR_MISMATCH,
     "{'type': 'quadrant'", 0, "output 'vy' must be an int"},
    {"quadrant dead zone too wide", PROC,
     "{'type': 'quadrant', 'x': 'vx', 'y': 'vy', 'output': 'mode', 'dead_zone_deg': 30}", NULL,
     NULL, CB_ERR_INVALID_ARGUMENT, "{'type': 'quadrant'", 0, "dead_zone_rad must be in [0, pi/8]"},
    {"interp_to onto itself", PROC,
     "{'type': 'interp_to', 'input': 'vx', 'output': 'vx', 'speed': 3}", NULL, NULL,
     CB_ERR_INVALID_ARGUMENT, "{'type': 'interp_to'", 0, "input and output are both 'vx'"},
    {"two processors write one parameter", PROC,
     PROC ", {'type': 'interp_to', 'input': 'speed', 'output': 'vy', 'speed': 1}", NULL, NULL,
     CB_ERR_DUPLICATE, "{'type': 'interp_to', 'input': 'speed'", 0,
     "parameter 'vy' is already written by the graph"},

    /* Nodes in general. */
    {"no nodes", NULL, "{'root': 'a'}", NULL, NULL, CB_ERR_PARSE, "{'root'", 0,
     "missing \"nodes\""},
    {"nodes not an object", NULL, "{'nodes': ['a'], 'root': 'a'}", NULL, NULL, CB_ERR_PARSE,
     "['a']", 0, "\"nodes\" must be an object with at least one node"},
    {"nodes empty", NULL, "{'nodes': {}, 'root': 'a'}", NULL, NULL, CB_ERR_PARSE, "{}", 0,
     "at least one node"},
    {"node not an object", X, "'x': 3", NULL, NULL, CB_ERR_PARSE, "'x': 3", 5,
     "node 'x' must be an object"},
    {"node without type", X, "'x': {'clip': 'idle'}", NULL, NULL, CB_ERR_PARSE, "{'clip': 'idle'}",
     0, "node 'x' has no \"type\""},
    {"unknown node type", X, "'x': {'type': 'clips', 'clip': 'idle'}", NULL, NULL, CB_ERR_PARSE,
     "'clips'", 0, "unknown node type 'clips' (one of: clip, blend_space, direct, layers"},
    {"node type not a string", X, "'x': {'type': 4, 'clip': 'idle'}", NULL, NULL, CB_ERR_PARSE,
     "4,", 0, "\"type\" must be a string"},
    {"no root", ROOT, "'rooted': false", NULL, NULL, CB_ERR_PARSE, "'rooted'", 0,
     "unknown key 'rooted'"},
    {"root missing", NULL, "{\n 'nodes': {'a': {'type': 'clip', 'clip': 'idle'}}\n}", NULL, NULL,
     CB_ERR_PARSE, "{\n", 0, "missing \"root\""},
    {"root null", ROOT, "'root': null", NULL, NULL, CB_ERR_PARSE, "{\n  'name'", 0,
     "missing \"root\""},
    {"root not a string", ROOT, "'root': 5", NULL, NULL, CB_ERR_PARSE, "5\n", 0,
     "a node reference must be a node name"},
    {"root names no node", ROOT, "'root': 'sm2'", NULL, NULL, CB_ERR_PARSE, "'sm2'", 0,
     "unknown node 'sm2'"},
    {"node name too long", X,
     "'x23456789012345678901234567890123456789012345678901234567890123456': {'type': 'clip', "
     "'clip': 'idle'}",
     NULL, NULL, CB_ERR_INVALID_ARGUMENT, "{'type': 'clip', 'clip': 'idle'}", 0,
     "name longer than 63"},
    {"a node that refers to itself", STATE_RUN, "{'name': 'run', 'node': 'sm'}", NULL, NULL,
     CB_ERR_PARSE, "'node': 'sm'", 8, "cycle: node 'sm' leads back to itself"},
    {"two nodes that refer to each other", X,
     "'x': {'type': 'direct', 'children': [{'node': 'y', 'weight': 'vx'}]},\n"
     "    'y': {'type': 'direct', 'children': [{'node': 'x', 'weight': 'vx'}]}",
     NULL, NULL, CB_ERR_PARSE, "'node': 'x'", 8, "cycle: node 'x' leads back to itself"},
    {"unreached nodes fail in document order", X,
     "'x2': {'type': 'clip', 'clip': 'nope2'},\n    'x': {'type': 'clip', 'clip': 'nope1'}", NULL,
     NULL, CB_ERR_NOT_FOUND, "{'type': 'clip', 'clip': 'nope2'}", 0, "unknown clip 'nope2'"},
    {"children fail in listed order", X,
     BS1 "'children': [{'node': 'b2', 'position': 1}, {'node': 'b1', 'position': 2}]},\n"
         "    'b1': {'type': 'clip', 'clip': 'nope1'}, 'b2': {'type': 'clip', 'clip': 'nope2'}",
     NULL, NULL, CB_ERR_NOT_FOUND, "{'type': 'clip', 'clip': 'nope2'}", 0, "unknown clip 'nope2'"},

    /* Clip nodes. */
    {"unknown clip-node key", X, "'x': {'type': 'clip', 'clip': 'idle', 'loop': true}", NULL, NULL,
     CB_ERR_PARSE, "'loop'", 0, "unknown key 'loop' in a clip node"},
    {"clip node without clip", X, "'x': {'type': 'clip'}", NULL, NULL, CB_ERR_PARSE,
     "{'type': 'clip'}", 0, "missing \"clip\""},
    {"clip speed not a number", X, "'x': {'type': 'clip', 'clip': 'idle', 'speed': '2x'}", NULL,
     NULL, CB_ERR_PARSE, "'2x'", 0, "\"speed\" must be a number"},
    {"clip speed beyond float", X, "'x': {'type': 'clip', 'clip': 'idle', 'speed': 1e39}", NULL,
     NULL, CB_ERR_PARSE, "1e39", 0, "\"speed\" 1e+39 does not fit in a float"},
    {"clamp not a bool", X, "'x': {'type': 'clip', 'clip': 'idle', 'clamp': 1}", NULL, NULL,
     CB_ERR_PARSE, "'clamp': 1", 9, "\"clamp\" must be true or false"},
    {"sync group not a string", X, "'x': {'type': 'clip', 'clip': 'idle', 'sync_group': 2}", NULL,
     NULL, CB_ERR_PARSE, "'sync_group': 2", 14, "\"sync_group\" must be a string"},
    {"unknown clip", X, "'x': {'type': 'clip', 'clip': 'dance'}", NULL, NULL, CB_ERR_NOT_FOUND,
     "{'type': 'clip', 'clip': 'dance'}", 0, "clip node 'x': unknown clip 'dance'"},
    {"start offset out of range", X, "'x': {'type': 'clip', 'clip': 'idle', 'start_offset': 1.5}",
     NULL, NULL, CB_ERR_INVALID_ARGUMENT, "{'type': 'clip', 'clip': 'idle', 'start", 0,
     "start_offset must be in [0, 1)"},
    {"unknown speed parameter", X, "'x': {'type': 'clip', 'clip': 'idle', 'speed_param': 'rate'}",
     NULL, NULL, CB_ERR_NOT_FOUND, "{'type': 'clip', 'clip': 'idle', 'speed_param'", 0,
     "unknown parameter 'rate'"},
    {"speed parameter of the wrong type", X,
     "'x': {'type': 'clip', 'clip': 'idle', 'speed_param': 'crouch'}", NULL, NULL, CB_ERR_MISMATCH,
     "{'type': 'clip', 'clip': 'idle', 'speed_param'", 0,
     "parameter 'crouch' is a bool, a number is needed"},

    /* Blend spaces. */
    {"unknown blend-space key", X, BS1 "'param': 'speed', " BS1_KIDS, NULL, NULL, CB_ERR_PARSE,
     "'param': 'speed', 'children'", 0, "unknown key 'param' in a blend_space node"},
    {"unknown solver", X, "'x': {'type': 'blend_space', 'solver': 'linear', " BS1_KIDS, NULL, NULL,
     CB_ERR_PARSE, "'linear'", 0, "unknown solver 'linear' (one of: linear_1d, "},
    {"direct is not a blend-space solver", X,
     "'x': {'type': 'blend_space', 'solver': 'direct', " BS1_KIDS, NULL, NULL, CB_ERR_PARSE,
     "'direct'", 0, "unknown solver 'direct'"},
    {"solver not a string", X, "'x': {'type': 'blend_space', 'solver': 7, " BS1_KIDS, NULL, NULL,
     CB_ERR_PARSE, "7", 0, "\"solver\" must be a string"},
    {"options not an object", X, BS1 "'options': [1], " BS1_KIDS, NULL, NULL, CB_ERR_PARSE, "[1]",
     0, "\"options\" must be an object"},
    {"unknown option", X, BS1 "'options': {'kk': 2}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE, "'kk'",
     0, "unknown key 'kk' in solver options"},
    {"k not whole", X, BS1 "'options': {'k': 2.5}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE, "2.5", 0,
     "\"k\" must be a whole number from 0 to 65536"},
    {"k negative", X, BS1 "'options': {'k': -1}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE, "-1", 0,
     "\"k\" must be a whole number"},
    {"k too large", X, BS1 "'options': {'k': 70000}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE, "70000",
     0, "\"k\" must be a whole number"},
    {"nx not whole", X, BS1 "'options': {'nx': 2.25}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE, "2.25",
     0, "\"nx\" must be a whole number"},
    {"ny not a number", X, BS1 "'options': {'ny': 'two'}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE,
     "'two'", 0, "\"ny\" must be a whole number"},
    {"power not a number", X, BS1 "'options': {'power': true}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE,
     "true}", 0, "\"power\" must be a number"},
    {"epsilon beyond float", X, BS1 "'options': {'epsilon': 1e100}, " BS1_KIDS, NULL, NULL,
     CB_ERR_PARSE, "1e100", 0, "\"epsilon\" 1e+100 does not fit in a float"},
    {"unknown kernel", X, BS1 "'options': {'kernel': 'gauss'}, " BS1_KIDS, NULL, NULL, CB_ERR_PARSE,
     "'gauss'", 0, "unknown RBF kernel 'gauss' (one of: thin_plate"},
    {"blend space without params", X, "'x': {'type': 'blend_space', " BS1_KIDS, NULL, NULL,
     CB_ERR_PARSE, "{'type': 'blend_space'", 0, "missing \"params\""},
    {"2D blend space with one param", X,
     "'x': {'type': 'blend_space', 'solver': 'delaunay_2d', 'params': ['speed'], " BS1_KIDS, NULL,
     NULL, CB_ERR_PARSE, "['speed']", 0, "\"params\" must be an array of 2 parameter names"},
    {"param name not a string", X, "'x': {'type': 'blend_space', 'params': ['speed', 3], " BS1_KIDS,
     NULL, NULL, CB_ERR_PARSE, "3]", 0, "a parameter name must be a string"},
    {"blend space without children", X, BS1 "'sync_group': 'g'}", NULL, NULL, CB_ERR_PARSE,
     "{'type': 'blend_space'", 0, "missing \"children\""},
    {"children not an array", X, BS1 "'children': {'node': 'walk'}}", NULL, NULL, CB_ERR_PARSE,
     "{'node': 'walk'}", 0, "\"children\" must be a non-empty array"},
    {"children empty", X, BS1 "'children': []}", NULL, NULL, CB_ERR_PARSE, "[]", 0,
     "\"children\" must be a non-empty array"},
    {"child not an object", X, BS1 "'children': ['walk']}", NULL, NULL, CB_ERR_PARSE, "'walk']", 0,
     "a child must be {\"node\", \"position\"}"},
    {"unknown child key", X, BS1 "'children': [{'node': 'walk', 'pos': 1}]}", NULL, NULL,
     CB_ERR_PARSE, "'pos'", 0, "unknown key 'pos' in a blend-space child"},
    {"child without node", X, BS1 "'children': [{'position': 1}]}", NULL, NULL, CB_ERR_PARSE,
     "{'position': 1}", 0, "missing \"node\""},
    {"child node not a string", X, BS1 "'children': [{'node': 5, 'position': 1}]}", NULL, NULL,
     CB_ERR_PARSE, "5,", 0, "a node reference must be a node name (a string)"},
    {"child names no node", X, BS1 "'children': [{'node': 'walkk', 'position': 1}]}", NULL, NULL,
     CB_ERR_PARSE, "'walkk'", 0, "unknown node 'walkk'"},
    {"child without position", X, BS1 "'children': [{'node': 'walk'}]}", NULL, NULL, CB_ERR_PARSE,
     "{'node': 'walk'}", 0, "missing \"position\""},
    {"2D position given as a number", X,
     "'x': {'type': 'blend_space', 'params': ['speed', 'vx'], 'children': [{'node': 'walk', "
     "'position': 1}]}",
     NULL, NULL, CB_ERR_PARSE, "1}", 0, "\"position\" must be an array of 2 numbers"},
    {"position element not a number", X,
     "'x': {'type': 'blend_space', 'params': ['speed', 'vx'], 'children': [{'node': 'walk', "
     "'position': [1, 'a']}]}",
     NULL, NULL, CB_ERR_PARSE, "'a'", 0, "expected a number"},
    {"position beyond float", X, BS1 "'children': [{'node': 'walk', 'position': 4e38}]}", NULL,
     NULL, CB_ERR_PARSE, "4e38", 0, "position 4e+38 does not fit in a float"},
    {"blend parameter unknown", X,
     "'x': {'type': 'blend_space', 'solver': 'linear_1d', 'params': 'sped', " BS1_KIDS, NULL, NULL,
     CB_ERR_NOT_FOUND, "{'type': 'blend_space'", 0, "blend space 'x': unknown parameter 'sped'"},
    {"blend parameter a bool", X,
     "'x': {'type': 'blend_space', 'solver': 'linear_1d', 'params': ['crouch'], " BS1_KIDS, NULL,
     NULL, CB_ERR_MISMATCH, "{'type': 'blend_space'", 0,
     "parameter 'crouch' is a bool, a number is needed"},
    {"1D IDW with two children in one place", X,
     "'x': {'type': 'blend_space', 'solver': 'idw', 'params': 'speed', 'children': [{'node': "
     "'walk', 'position': 1}, {'node': 'run', 'position': [1]}]}",
     NULL, NULL, CB_ERR_DUPLICATE, "{'type': 'blend_space'", 0, "blend space 'x': "},
    {"bilinear grid of the wrong size", X,
     "'x': {'type': 'blend_space', 'solver': 'bilinear_2d', 'options': {'nx': 3}, 'params': "
     "['speed', 'vx'], 'children': [{'node': 'walk', 'position': [0, 0]}, {'node': 'run', "
     "'position': [1, 0]}]}",
     NULL, NULL, CB_ERR_MISMATCH, "{'type': 'blend_space'", 0, "blend space 'x': "},
    {"blend sync group not a string", X, BS1 "'sync_group': ['g'], " BS1_KIDS, NULL, NULL,
     CB_ERR_PARSE, "['g']", 0, "\"sync_group\" must be a string"},

    /* Direct blends. */
    {"unknown direct key", X, DIRECT "[{'node': 'walk', 'weight': 'vx'}], 'weights': []}", NULL,
     NULL, CB_ERR_PARSE, "'weights'", 0, "unknown key 'weights' in a direct node"},
    {"direct without children", X, "'x': {'type': 'direct'}", NULL, NULL, CB_ERR_PARSE,
     "{'type': 'direct'}", 0, "missing \"children\""},
    {"direct children empty", X, DIRECT "[]}", NULL, NULL, CB_ERR_PARSE, "[]", 0,
     "\"children\" must be a non-empty array of {\"node\", \"weight\"}"},
    {"direct child not an object", X, DIRECT "[7]}", NULL, NULL, CB_ERR_PARSE, "7]", 0,
     "a child must be {\"node\", \"weight\"}"},
    {"unknown direct-child key", X, DIRECT "[{'node': 'walk', 'w': 'vx'}]}", NULL, NULL,
     CB_ERR_PARSE, "'w'", 0, "unknown key 'w' in a direct child"},
    {"direct child without weight", X, DIRECT "[{'node': 'walk'}]}", NULL, NULL, CB_ERR_PARSE,
     "{'node': 'walk'}", 0, "missing \"weight\""},
    {"direct weight not a string", X, DIRECT "[{'node': 'walk', 'weight': 0.5}]}", NULL, NULL,
     CB_ERR_PARSE, "0.5", 0, "\"weight\" must be a string"},
    {"direct weight unknown", X, DIRECT "[{'node': 'walk', 'weight': 'vw'}]}", NULL, NULL,
     CB_ERR_NOT_FOUND, "{'type': 'direct'", 0, "direct blend 'x': unknown parameter 'vw'"},
    {"direct weight a trigger", X, DIRECT "[{'node': 'walk', 'weight': 'jump'}]}", NULL, NULL,
     CB_ERR_MISMATCH, "{'type': 'direct'", 0, "parameter 'jump' is a trigger"},

    /* Layers. */
    {"unknown layers key", X, LAYERS "[], 'mask': 'spine_01'}", NULL, NULL, CB_ERR_PARSE, "'mask'",
     0, "unknown key 'mask' in a layers node"},
    {"layers without base", X, "'x': {'type': 'layers', 'layers': []}", NULL, NULL, CB_ERR_PARSE,
     "{'type': 'layers'", 0, "missing \"base\""},
    {"base names no node", X, "'x': {'type': 'layers', 'base': 'wlak', 'layers': []}", NULL, NULL,
     CB_ERR_PARSE, "'wlak'", 0, "unknown node 'wlak'"},
    {"layers without layers", X, "'x': {'type': 'layers', 'base': 'walk'}", NULL, NULL,
     CB_ERR_PARSE, "{'type': 'layers'", 0, "missing \"layers\""},
    {"layers not an array", X, LAYERS "'oops'}", NULL, NULL, CB_ERR_PARSE, "'oops'", 0,
     "\"layers\" must be an array of layers"},
    {"layer not an object", X, LAYERS "['run']}", NULL, NULL, CB_ERR_PARSE, "'run']", 0,
     "a layer must be an object"},
    {"unknown layer key", X, LAYERS "[{'node': 'run', 'mask': 'spine_01'}]}", NULL, NULL,
     CB_ERR_PARSE, "'mask'", 0, "unknown key 'mask' in a layer"},
    {"layer without node", X, LAYERS "[{'mode': 'override'}]}", NULL, NULL, CB_ERR_PARSE,
     "{'mode': 'override'}", 0, "missing \"node\""},
    {"unknown layer mode", X, LAYERS "[{'node': 'run', 'mode': 'add'}]}", NULL, NULL, CB_ERR_PARSE,
     "'add'", 0, "unknown layer mode 'add' (one of: override, additive)"},
    {"mask joint not a string", X, LAYERS "[{'node': 'run', 'mask_joint': 33}]}", NULL, NULL,
     CB_ERR_PARSE, "33", 0, "\"mask_joint\" must be a string"},
    {"unknown mask joint", X, LAYERS "[{'node': 'run', 'mask_joint': 'spine_9'}]}", NULL, NULL,
     CB_ERR_NOT_FOUND, "{'type': 'layers'", 0, "layers 'x': layer 0: "},
    {"unknown layer weight", X, LAYERS "[{'node': 'run', 'weight': 'w'}]}", NULL, NULL,
     CB_ERR_NOT_FOUND, "{'type': 'layers'", 0, "layers 'x': unknown parameter 'w'"},
    {"additive layer of a normal clip", X, LAYERS "[{'node': 'run', 'mode': 'additive'}]}", NULL,
     NULL, CB_ERR_MISMATCH, "{'type': 'layers'", 0,
     "layer 0 is additive: its node must be a clip node with an additive clip"},
    {"override layer of an additive clip", X,
     LAYERS "[{'node': 'lean'}]}, 'lean': {'type': 'clip', 'clip': 'lean_add'}", NULL, NULL,
     CB_ERR_MISMATCH, "{'type': 'layers'", 0, "layer 0 overrides with an additive clip"},
    {"additive clip node as a state", STATE_RUN, "{'name': 'run', 'node': 'lean'}", X,
     "'lean': {'type': 'clip', 'clip': 'lean_add'}", CB_ERR_MISMATCH, "'node': 'lean'", 8,
     "uses additive clip node 'lean' outside an additive layer"},

    {"additive clip node as the root", ROOT, "'root': 'lean'", X,
     "'lean': {'type': 'clip', 'clip': 'lean_add'}", CB_ERR_MISMATCH, "'root': 'lean'", 8,
     "the root 'lean' plays an additive clip"},
    {"1D blend space with two params", X,
     "'x': {'type': 'blend_space', 'solver': 'linear_1d', 'params': ['speed', 'vx'], " BS1_KIDS,
     NULL, NULL, CB_ERR_PARSE, "['speed', 'vx']", 0,
     "\"params\" must be a parameter name (or an array of one)"},

    /* State machines. */
    {"unknown machine key", "'initial': 'walk',", "'initial': 'walk', 'default_state': 'walk',",
     NULL, NULL, CB_ERR_PARSE, "'default_state'", 0,
     "unknown key 'default_state' in a state_machine node"},
    {"initial not a string", "'initial': 'walk',", "'initial': 0,", NULL, NULL, CB_ERR_PARSE, "0,",
     0, "\"initial\" must be a string"},
    {"machine without states", X, "'x': {'type': 'state_machine'}", NULL, NULL, CB_ERR_PARSE,
     "{'type': 'state_machine'}", 0, "missing \"states\""},
    {"states not an array", X, "'x': {'type': 'state_machine', 'states': 'idle2'}", NULL, NULL,
     CB_ERR_PARSE, "'idle2'", 0, "\"states\" must be a non-empty array of states"},
    {"states empty", X, "'x': {'type': 'state_machine', 'states': []}", NULL, NULL, CB_ERR_PARSE,
     "[]", 0, "\"states\" must be a non-empty array"},
    {"state not an object", STATE_RUN, "'run'", NULL, NULL, CB_ERR_PARSE, "'run']", 0,
     "a state must be an object"},
    {"unknown state key", STATE_RUN, "{'name': 'run', 'node': 'run', 'loop': 1}", NULL, NULL,
     CB_ERR_PARSE, "'loop'", 0, "unknown key 'loop' in a state"},
    {"state without name", STATE_RUN, "{'node': 'run'}", NULL, NULL, CB_ERR_PARSE,
     "{'node': 'run'}", 0, "missing \"name\""},
    {"state name not a string", STATE_RUN, "{'name': 1, 'node': 'run'}", NULL, NULL, CB_ERR_PARSE,
     "1,", 0, "\"name\" must be a string"},
    {"a state named any", STATE_RUN, "{'name': 'any', 'node': 'run'}", NULL, NULL, CB_ERR_PARSE,
     "'any'", 0, "a state cannot be named 'any'"},
    {"state without node", STATE_RUN, "{'name': 'run'}", NULL, NULL, CB_ERR_PARSE,
     "{'name': 'run'}", 0, "missing \"node\""},
    {"state speed not a number", STATE_RUN, "{'name': 'run', 'node': 'run', 'speed': 'x'}", NULL,
     NULL, CB_ERR_PARSE, "'x'}", 0, "\"speed\" must be a number"},
    {"two states with one name", STATE_RUN, "{'name': 'walk', 'node': 'run'}", NULL, NULL,
     CB_ERR_DUPLICATE, "{'type': 'state_machine'", 0,
     "state machine 'sm': two states are named 'walk'"},
    {"unknown initial state", "'initial': 'walk',", "'initial': 'jog',", NULL, NULL,
     CB_ERR_NOT_FOUND, "{'type': 'state_machine'", 0, "initial state 'jog' does not exist"},
    {"transitions not an array", "'transitions': [", "'transitions': {'a': 1}, 'x': [", NULL, NULL,
     CB_ERR_PARSE, "'x': [", 0, "unknown key 'x'"},
    {"transitions an object", X,
     "'x': {'type': 'state_machine', 'states': [{'name': 'a', 'node': 'walk'}], 'transitions': "
     "{}}",
     NULL, NULL, CB_ERR_PARSE, "{}}", 0, "\"transitions\" must be an array"},
    {"transition not an object", TRANS "\n                            'conditions': [" COND "]}",
     "'walk'", NULL, NULL, CB_ERR_PARSE, "'walk']", 0, "a transition must be an object"},
    {"unknown transition key", TRANS, "{'from': 'walk', 'to': 'run', 'exit': 0.5,", NULL, NULL,
     CB_ERR_PARSE, "'exit'", 0, "unknown key 'exit' in a transition"},
    {"transition without from", TRANS, "{'to': 'run',", NULL, NULL, CB_ERR_PARSE, "{'to': 'run'", 0,
     "missing \"from\""},
    {"transition from not a string", TRANS, "{'from': ['walk'], 'to': 'run',", NULL, NULL,
     CB_ERR_PARSE, "['walk']", 0, "\"from\" must be a string"},
    {"transition without to", TRANS, "{'from': 'walk',", NULL, NULL, CB_ERR_PARSE,
     "{'from': 'walk'", 0, "missing \"to\""},
    {"exit time not a number", TRANS, "{'from': 'walk', 'to': 'run', 'exit_time': 'end',", NULL,
     NULL, CB_ERR_PARSE, "'end'", 0, "\"exit_time\" must be a number"},
    {"duration not a number", TRANS, "{'from': 'walk', 'to': 'run', 'duration': [0.2],", NULL, NULL,
     CB_ERR_PARSE, "[0.2]", 0, "\"duration\" must be a number"},
    {"unknown blend", TRANS, "{'from': 'walk', 'to': 'run', 'blend': 'fade',", NULL, NULL,
     CB_ERR_PARSE, "'fade'", 0, "unknown blend 'fade' (one of: crossfade, inertialize)"},
    {"unknown interruption", TRANS, "{'from': 'walk', 'to': 'run', 'interruption': 'both',", NULL,
     NULL, CB_ERR_PARSE, "'both'", 0,
     "unknown interruption 'both' (one of: none, source, destination)"},
    {"to_self not a bool", TRANS, "{'from': 'walk', 'to': 'run', 'to_self': 'yes',", NULL, NULL,
     CB_ERR_PARSE, "'yes'", 0, "\"to_self\" must be true or false"},
    {"conditions not an array", "'conditions': [" COND "]", "'conditions': " COND, NULL, NULL,
     CB_ERR_PARSE, COND, 0, "\"conditions\" must be an array"},
    {"condition not an object", COND, "'speed'", NULL, NULL, CB_ERR_PARSE, "'speed']", 0,
     "a condition must be an object"},
    {"unknown condition key", COND, "{'param': 'speed', 'op': '>', 'val': 2}", NULL, NULL,
     CB_ERR_PARSE, "'val'", 0, "unknown key 'val' in a condition"},
    {"condition without param", COND, "{'op': '>', 'value': 2}", NULL, NULL, CB_ERR_PARSE, "{'op'",
     0, "missing \"param\""},
    {"unknown comparison", COND, "{'param': 'speed', 'op': '>=', 'value': 2}", NULL, NULL,
     CB_ERR_PARSE, "'>='", 0, "unknown comparison '>=' (one of: true, false, >, <, ==, !=)"},
    {"condition value not a number", COND, "{'param': 'speed', 'op': '>', 'value': '2'}", NULL,
     NULL, CB_ERR_PARSE, "'2'", 0, "\"value\" must be a number"},
    {"condition value beyond float", COND, "{'param': 'speed', 'op': '>', 'value': 1e300}", NULL,
     NULL, CB_ERR_PARSE, "1e300", 0, "\"value\" 1e+300 does not fit in a float"},
    {"unknown destination", TRANS, "{'from': 'walk', 'to': 'jog',", NULL, NULL, CB_ERR_NOT_FOUND,
     "{'type': 'state_machine'", 0, "destination state 'jog' does not exist"},
    {"unknown source", TRANS, "{'from': 'wlak', 'to': 'run',", NULL, NULL, CB_ERR_NOT_FOUND,
     "{'type': 'state_machine'", 0, "source state 'wlak' does not exist"},
    {"transition that would always fire",
     TRANS "\n                            'conditions': [" COND "]}",
     "{'from': 'any', 'to': 'run'}", NULL, NULL, CB_ERR_INVALID_ARGUMENT,
     "{'type': 'state_machine'", 0, "transition 0 has neither conditions nor an exit time"},
    {"negative duration", TRANS, "{'from': 'walk', 'to': 'run', 'duration': -0.1,", NULL, NULL,
     CB_ERR_INVALID_ARGUMENT, "{'type': 'state_machine'", 0,
     "transition 0: duration and exit time must be finite and >= 0"},
    {"unknown condition parameter", COND, "{'param': 'sped', 'op': '>', 'value': 2}", NULL, NULL,
     CB_ERR_NOT_FOUND, "{'type': 'state_machine'", 0, "unknown parameter 'sped'"},
    {"comparison that does not fit the parameter", COND, "{'param': 'speed', 'op': 'true'}", NULL,
     NULL, CB_ERR_MISMATCH, "{'type': 'state_machine'", 0,
     "transition 0: this comparison does not apply to float parameter 'speed'"},
    {"trigger compared with false", COND, "{'param': 'jump', 'op': 'false'}", NULL, NULL,
     CB_ERR_MISMATCH, "{'type': 'state_machine'", 0, "does not apply to trigger parameter 'jump'"},

    /* Post-process. */
    {"post_process not an array", ROOT, "'root': 'sm', 'post_process': {}", NULL, NULL,
     CB_ERR_PARSE, "{}", 0, "\"post_process\" must be an array"},
    {"step not an object", ROOT, "'root': 'sm', 'post_process': ['ik']", NULL, NULL, CB_ERR_PARSE,
     "'ik'", 0, "a step must be an object"},
    {"step without type", ROOT, "'root': 'sm', 'post_process': [{'start': 'neck'}]", NULL, NULL,
     CB_ERR_PARSE, "{'start'", 0, "missing \"type\""},
    {"unknown step type", ROOT, "'root': 'sm', 'post_process': [{'type': 'fabrik'}]", NULL, NULL,
     CB_ERR_PARSE, "'fabrik'", 0, "unknown post-process step 'fabrik' (one of: two_bone_ik"},
    {"unknown two-bone key", ROOT, "'root': 'sm', 'post_process': [" TWO_BONE "'bend': 1}]", NULL,
     NULL, CB_ERR_PARSE, "'bend'", 0, "unknown key 'bend' in a two_bone_ik step"},
    {"two-bone without end", ROOT, "'root': 'sm', 'post_process': [" TWO_BONE "'target': []}]",
     NULL, NULL, CB_ERR_PARSE, TWO_BONE, 0, "missing \"end\""},
    {"two-bone target of two", ROOT,
     "'root': 'sm', 'post_process': [" TWO_BONE "'end': 'hand_l', 'target': ['vx', 'vy']}]", NULL,
     NULL, CB_ERR_PARSE, "['vx', 'vy']", 0, "\"target\" must be an array of 3 parameter names"},
    {"two-bone target element not a string", ROOT,
     "'root': 'sm', 'post_process': [" TWO_BONE "'end': 'hand_l', 'target': ['vx', 'vy', 0]}]",
     NULL, NULL, CB_ERR_PARSE, "0]", 0, "a parameter name must be a string"},
    {"two-bone soften not a number", ROOT,
     "'root': 'sm', 'post_process': [" TWO_BONE
     "'end': 'hand_l', 'target': ['vx', 'vy', 'vx'], 'soften': 'a'}]",
     NULL, NULL, CB_ERR_PARSE, "'a'}", 0, "\"soften\" must be a number"},
    {"two-bone unknown joint", ROOT,
     "'root': 'sm', 'post_process': [" TWO_BONE "'end': 'hand', 'target': ['vx', 'vy', 'vx']}]",
     NULL, NULL, CB_ERR_NOT_FOUND, TWO_BONE, 0, "two-bone IK: unknown joint 'hand'"},
    {"two-bone joints not a chain", ROOT,
     "'root': 'sm', 'post_process': [" TWO_BONE "'end': 'hand_r', 'target': ['vx', 'vy', 'vx']}]",
     NULL, NULL, CB_ERR_HIERARCHY, TWO_BONE, 0, "is not a chain of ancestors"},
    {"two-bone target a bool", ROOT,
     "'root': 'sm', 'post_process': [" TWO_BONE
     "'end': 'hand_l', 'target': ['vx', 'crouch', 'vx']}]",
     NULL, NULL, CB_ERR_MISMATCH, TWO_BONE, 0, "parameter 'crouch' is a bool"},
    {"two-bone soften out of range", ROOT,
     "'root': 'sm', 'post_process': [" TWO_BONE
     "'end': 'hand_l', 'target': ['vx', 'vy', 'vx'], 'soften': 2}]",
     NULL, NULL, CB_ERR_INVALID_ARGUMENT, TWO_BONE, 0, "soften must be in (0, 1]"},
    {"unknown aim key", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head'], 'aim': 1}]", NULL, NULL,
     CB_ERR_PARSE, "'aim'", 0, "unknown key 'aim' in an aim_ik step"},
    {"aim without joints", ROOT, "'root': 'sm', 'post_process': [" AIM "'weight': 'vx'}]", NULL,
     NULL, CB_ERR_PARSE, AIM, 0, "missing \"joints\""},
    {"aim joints empty", ROOT, "'root': 'sm', 'post_process': [" AIM "'joints': []}]", NULL, NULL,
     CB_ERR_PARSE, "[]}", 0, "\"joints\" must be a non-empty array"},
    {"aim joint not a string", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['neck', 2]}]", NULL, NULL, CB_ERR_PARSE,
     "2]", 0, "a joint name must be a string"},
    {"joint_weights of the wrong length", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['neck', 'head'], 'joint_weights': [1]}]",
     NULL, NULL, CB_ERR_PARSE, "[1]", 0, "\"joint_weights\" must have one number per joint (2)"},
    {"joint weight not a number", ROOT,
     "'root': 'sm', 'post_process': [" AIM
     "'joints': ['neck', 'head'], 'joint_weights': [1, null]}]",
     NULL, NULL, CB_ERR_PARSE, "null", 0, "expected a number"},
    {"forward of two", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head'], 'forward': [0, 1]}]", NULL, NULL,
     CB_ERR_PARSE, "[0, 1]", 0, "\"forward\" must be an array of 3 numbers"},
    {"up element not a number", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head'], 'up': [0, '1', 0]}]", NULL, NULL,
     CB_ERR_PARSE, "'1'", 0, "expected a number"},
    {"limit not a number", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head'], 'limit_deg': 'wide'}]", NULL, NULL,
     CB_ERR_PARSE, "'wide'", 0, "\"limit_deg\" must be a number"},
    {"limit beyond float", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head'], 'limit_deg': 1e300}]", NULL, NULL,
     CB_ERR_PARSE, "1e300", 0, "\"limit_deg\" 1.74533e+298 does not fit in a float"},
    {"aim joints not a chain", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head', 'neck']}]", NULL, NULL,
     CB_ERR_HIERARCHY, AIM, 0, "aim IK: 'head' is not an ancestor of 'neck'"},
    {"aim unknown joint", ROOT, "'root': 'sm', 'post_process': [" AIM "'joints': ['nek']}]", NULL,
     NULL, CB_ERR_NOT_FOUND, AIM, 0, "aim IK: unknown joint 'nek'"},
    {"max_lod without lod_param", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head'], 'max_lod': 1}]", NULL, NULL,
     CB_ERR_NOT_FOUND, "1}]", 0, "\"max_lod\" needs the graph's \"lod_param\""},
    {"max_lod not a number", ROOT,
     "'lod_param': 'speed', 'root': 'sm', 'post_process': [" AIM
     "'joints': ['head'], 'max_lod': 'far'}]",
     NULL, NULL, CB_ERR_PARSE, "'far'", 0, "\"max_lod\" must be a number"},
    {"max_lod negative", ROOT,
     "'lod_param': 'mode', 'root': 'sm', 'post_process': [" AIM
     "'joints': ['head'], 'max_lod': -1}]",
     NULL, NULL, CB_ERR_INVALID_ARGUMENT, AIM, 0, "aim IK: max_lod (-1) must be >= 0"},
    {"unknown lod_param", ROOT, "'lod_param': 'sped', 'root': 'sm'", NULL, NULL, CB_ERR_NOT_FOUND,
     "'sped'", 0, "LOD parameter: unknown parameter 'sped'"},
    {"lod_param a bool", ROOT, "'lod_param': 'crouch', 'root': 'sm'", NULL, NULL, CB_ERR_MISMATCH,
     "'crouch', 'root'", 0, "LOD parameter: parameter 'crouch' is a bool"},
    {"lod_param not a string", ROOT, "'lod_param': ['speed'], 'root': 'sm'", NULL, NULL,
     CB_ERR_PARSE, "['speed']", 0, "\"lod_param\" must be a string"},
    {"aim negative joint weight", ROOT,
     "'root': 'sm', 'post_process': [" AIM "'joints': ['head'], 'joint_weights': [-1]}]", NULL,
     NULL, CB_ERR_INVALID_ARGUMENT, AIM, 0, "aim IK: chain[0].weight -1 is outside [0, 1]"},

    /* The locator on names spelled with escapes, and columns in characters. */
    {"node name with an escaped quote", X,
     "'x\\'y': {'type': 'clip', 'clip': 'idle', 'speed': 'fast'}", NULL, NULL, CB_ERR_PARSE,
     "'fast'", 0, "\"speed\" must be a number"},
    {"node name with an escaped backslash", X,
     "'x\\\\': {'type': 'clip', 'clip': 'idle', 'speed': 'fast'}", NULL, NULL, CB_ERR_PARSE,
     "'fast'", 0, "\"speed\" must be a number"},
    {"node name with a \\u escape", X,
     "'caf\\u00e9': {'type': 'clip', 'clip': 'idle', 'speed': 'fast'}", NULL, NULL, CB_ERR_PARSE,
     "'fast'", 0, "\"speed\" must be a number"},
    {"node name beyond the BMP, escaped", X,
     "'\\ud83d\\ude00': {'type': 'clip', 'clip': 'idle', 'speed': 'fast'}", NULL, NULL,
     CB_ERR_PARSE, "'fast'", 0, "\"speed\" must be a number"},
    {"UTF-8 name before the culprit", X,
     "'caf\xc3\xa9 \xf0\x9f\x98\x80': {'type': 'clip', 'clip': 'idle', 'speed': 'fast'}", NULL,
     NULL, CB_ERR_PARSE, "'fast'", 0, "\"speed\" must be a number"},
    {"escaped and raw spellings of one name", X,
     "'\\u00e9t\\u00e9': {'type': 'clip', 'clip': 'idle', 'clamp': 'no'}", ROOT,
     "'root': '\xc3\xa9t\xc3\xa9'", CB_ERR_PARSE, "'no'", 0, "\"clamp\" must be true or false"},
    {"an unknown key spelled with escapes", X,
     "'x': {'type': 'clip', 'clip': 'idle', 'sp\\u0065ed2': 1}", NULL, NULL, CB_ERR_PARSE,
     "'sp\\u0065ed2'", 0, "unknown key 'speed2' in a clip node"},
    {"a key that is a prefix of another", X,
     "'x': {'type': 'clip', 'clip_': 1, 'clip': 'idle', 'speed': 'f'}", NULL, NULL, CB_ERR_PARSE,
     "'clip_'", 0, "unknown key 'clip_'"},
    {"keys after a string holding braces", X,
     "'x': {'type': 'clip', 'sync_group': '}{]\\'[', 'clip': 'idle', 'speed': 'f'}", NULL, NULL,
     CB_ERR_PARSE, "'f'}", 0, "\"speed\" must be a number"},
};

/* The case's document: small edited, or its own. */
static char *case_doc(const bad *c)
{
    if (c->from == NULL) {
        return json(c->to);
    }
    char *base = json(small), *from = json(c->from), *to = json(c->to);
    char *doc = subst(base, from, to);
    free(base), free(from), free(to);
    if (c->from2 != NULL) {
        char *from2 = json(c->from2), *to2 = json(c->to2), *once = doc;
        doc = subst(once, from2, to2);
        free(once), free(from2), free(to2);
    }
    return doc;
}

/* Checks one case; returns false (after printing why) if it fails, so that one run lists
 * every failing case. */
static bool check_case(const bad *c, const char *source)
{
    char *doc = case_doc(c), *at = json(c->at);
    bool ok = false;
    cb_error err = {0};
    cb_result r = CB_OK;
    char prefix[128] = "";
    if (count_of(doc, at) != 1) {
        snprintf(err.message, sizeof err.message, "marker occurs %zu times", count_of(doc, at));
    } else {
        int line, col;
        place_of(doc, (size_t)(strstr(doc, at) - doc) + (size_t)c->shift, &line, &col);
        snprintf(prefix, sizeof prefix, "%s:%d:%d: ", source, line, col);
        cb_graph *g = load_text(doc, source, &r, &err);
        ok = r == c->code && g == NULL && strncmp(err.message, prefix, strlen(prefix)) == 0 &&
             strstr(err.message + strlen(prefix), c->says) != NULL;
        cb_graph_destroy(g);
    }
    if (!ok) {
        print_error("case '%s': got %s '%s'\n  want %s '%s...%s'\n", c->what, cb_result_str(r),
                    err.message, cb_result_str(c->code), prefix, c->says);
    }
    free(at);
    free(doc);
    return ok;
}

static void graph_json_every_error_has_its_code_place_and_culprit(void **state)
{
    (void)state;
    /* The base document itself loads. */
    char *base = json(small);
    cb_result r;
    cb_error err;
    cb_graph *g = load_text(base, "small.json", &r, &err);
    CB_CHECK(r == CB_OK, "the base document: %s", err.message);
    cb_graph_destroy(g);
    free(base);
    size_t n = sizeof cases / sizeof cases[0], failed = 0;
    for (size_t i = 0; i < n; ++i) {
        failed += !check_case(&cases[i], "small.json");
    }
    cb_test_note("%zu error cases: code, place and message", n);
    CB_CHECK(failed == 0, "%zu of %zu error cases failed", failed, n);
}

/* ------------------------------------------------------------------------------------------ */
/* Limits: documents generated at and past each count the format allows.                     */

typedef struct strbuf {
    char *s;
    size_t len, cap;
} strbuf;

static void put(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(strbuf *b, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    va_start(args, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, args);
    va_end(args);
    b->len += (size_t)n;
}

typedef enum limit_kind {
    LIMIT_CHILDREN,
    LIMIT_STATES,
    LIMIT_TRANSITIONS,
    LIMIT_CONDITIONS,
    LIMIT_LAYERS,
    LIMIT_AIM_JOINTS,
    LIMIT_NESTING,
} limit_kind;

/* A document with `count` of something; *marker gets a unique spot where a refusal points. */
static char *limit_doc(limit_kind kind, uint32_t count, char *marker, size_t marker_size)
{
    strbuf b = {0};
    put(&b, "{\"parameters\": [{\"name\": \"v\"}, {\"name\": \"m\", \"type\": \"int\"}],\n");
    put(&b, "\"nodes\": {\"c\": {\"type\": \"clip\", \"clip\": \"walk_f\"},\n");
    switch (kind) {
    case LIMIT_CHILDREN:
        put(&b, "\"r\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", \"params\": \"v\", "
                "\"children\": [");
        for (uint32_t i = 0; i < count; ++i) {
            put(&b, "%s{\"node\": \"c\", \"position\": %u}", i ? ", " : "", i);
        }
        put(&b, "]}}, \"root\": \"r\"}");
        snprintf(marker, marker_size, "\"children\": [");
        break;
    case LIMIT_STATES:
        put(&b, "\"r\": {\"type\": \"state_machine\", \"states\": [");
        for (uint32_t i = 0; i < count; ++i) {
            put(&b, "%s{\"name\": \"s%u\", \"node\": \"c\"}", i ? ", " : "", i);
        }
        put(&b, "]}}, \"root\": \"r\"}");
        snprintf(marker, marker_size, "\"states\": [");
        break;
    case LIMIT_TRANSITIONS:
    case LIMIT_CONDITIONS:
        put(&b, "\"r\": {\"type\": \"state_machine\", \"states\": [{\"name\": \"a\", \"node\": "
                "\"c\"}, {\"name\": \"b\", \"node\": \"c\"}], \"transitions\": [");
        for (uint32_t i = 0; i < (kind == LIMIT_TRANSITIONS ? count : 1); ++i) {
            put(&b, "%s{\"from\": \"a\", \"to\": \"b\", \"conditions\": [", i ? ", " : "");
            for (uint32_t k = 0; k < (kind == LIMIT_CONDITIONS ? count : 1); ++k) {
                put(&b, "%s{\"param\": \"m\", \"op\": \"!=\", \"value\": %u}", k ? ", " : "", k);
            }
            put(&b, "]}");
        }
        put(&b, "]}}, \"root\": \"r\"}");
        snprintf(marker, marker_size,
                 kind == LIMIT_TRANSITIONS ? "\"transitions\": [" : "\"conditions\": [");
        break;
    case LIMIT_LAYERS:
        put(&b, "\"r\": {\"type\": \"layers\", \"base\": \"c\", \"layers\": [");
        for (uint32_t i = 0; i < count; ++i) {
            put(&b, "%s{\"node\": \"c\", \"weight\": \"v\"}", i ? ", " : "");
        }
        put(&b, "]}}, \"root\": \"r\"}");
        snprintf(marker, marker_size, "\"layers\": [");
        break;
    case LIMIT_AIM_JOINTS: {
        static const char *const chain[] = {"root", "pelvis", "spine_01", "spine_02", "spine_03",
                                            "neck", "head",   "jaw",      "jaw"};
        put(&b, "\"r\": {\"type\": \"clip\", \"clip\": \"idle\"}}, \"root\": \"r\",\n"
                "\"post_process\": [{\"type\": \"aim_ik\", \"target\": [\"v\", \"v\", \"v\"], "
                "\"joints\": [");
        for (uint32_t i = 0; i < count; ++i) {
            put(&b, "%s\"%s\"", i ? ", " : "", chain[i < 8 ? i : 8]);
        }
        put(&b, "]}]}");
        snprintf(marker, marker_size, "\"joints\": [");
        break;
    }
    case LIMIT_NESTING:
        /* n0 -> n1 -> ... -> n(count-1) -> c: count direct nodes, one inside the other. */
        for (uint32_t i = 0; i < count; ++i) {
            put(&b,
                "\"n%u\": {\"type\": \"direct\", \"children\": [{\"node\": \"%s%u\", "
                "\"weight\": \"v\"}]},\n",
                i, i + 1 < count ? "n" : "c", i + 1 < count ? i + 1 : 0);
        }
        put(&b, "\"c0\": {\"type\": \"clip\", \"clip\": \"idle\"}}, \"root\": \"n0\"}");
        /* 64 nodes deep at most: with 64 directs, the reference to the clip is one too many. */
        snprintf(marker, marker_size, "\"node\": \"c0\"");
        break;
    }
    return b.s;
}

static void graph_json_limits_are_refused_at_their_place(void **state)
{
    (void)state;
    static const struct {
        limit_kind kind;
        uint32_t max;
        cb_result code;
        int shift; /* from the marker's start; -1: its last byte (an array's '[') */
        const char *says;
    } limits[] = {
        {LIMIT_CHILDREN, CB_GRAPH_MAX_CHILDREN, CB_ERR_TOO_MANY, -1, "\"children\" has 129"},
        {LIMIT_STATES, CB_GRAPH_MAX_STATES, CB_ERR_TOO_MANY, -1, "\"states\" has 65"},
        {LIMIT_TRANSITIONS, CB_GRAPH_MAX_TRANSITIONS, CB_ERR_TOO_MANY, -1, "more than 256"},
        {LIMIT_CONDITIONS, CB_GRAPH_MAX_CONDITIONS, CB_ERR_TOO_MANY, -1, "more than 8 conditions"},
        {LIMIT_LAYERS, CB_GRAPH_MAX_LAYERS, CB_ERR_TOO_MANY, -1, "\"layers\" has 9"},
        {LIMIT_AIM_JOINTS, CB_IK_AIM_MAX_JOINTS, CB_ERR_TOO_MANY, -1, "\"joints\" has 17"},
        {LIMIT_NESTING, 63, CB_ERR_TOO_MANY, 8, "nodes nested more than 64 deep"},
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; ++i) {
        for (uint32_t count = limits[i].max; count <= limits[i].max + 1; ++count) {
            char marker[64];
            char *doc = limit_doc(limits[i].kind, count, marker, sizeof marker);
            cb_result r;
            cb_error err;
            cb_graph *g = load_text(doc, "limit.json", &r, &err);
            if (count == limits[i].max && limits[i].kind == LIMIT_AIM_JOINTS) {
                /* The humanoid has no chain of 16: root..jaw, then jaw again, which the
                 * builder refuses as a chain, not as too long. */
                CB_CHECK(r == CB_ERR_HIERARCHY, "limit %zu at %u: %s", i, count, err.message);
            } else if (count == limits[i].max) {
                CB_CHECK(r == CB_OK, "limit %zu at %u: %s", i, count, err.message);
                cb_graph_destroy(g);
            } else {
                CB_CHECK(r == limits[i].code, "limit %zu at %u: %s (%s)", i, count,
                         cb_result_str(r), err.message);
                CB_CHECK(count_of(doc, marker) == 1, "marker %s", marker);
                int line, col;
                int shift = limits[i].shift >= 0 ? limits[i].shift : (int)strlen(marker) - 1;
                place_of(doc, (size_t)(strstr(doc, marker) - doc) + (size_t)shift, &line, &col);
                char prefix[64];
                snprintf(prefix, sizeof prefix, "limit.json:%d:%d: ", line, col);
                CB_CHECK(strncmp(err.message, prefix, strlen(prefix)) == 0 &&
                             strstr(err.message, limits[i].says) != NULL,
                         "limit %zu: '%s', want '%s...%s'", i, err.message, prefix, limits[i].says);
            }
            free(doc);
        }
    }
    /* A chain far too deep for any stack is refused as quickly. */
    char marker[64];
    char *doc = limit_doc(LIMIT_NESTING, 100000, marker, sizeof marker);
    cb_result r;
    cb_error err;
    assert_null(load_text(doc, "deep.json", &r, &err));
    assert_int_equal(r, CB_ERR_TOO_MANY);
    free(doc);
}

/* ------------------------------------------------------------------------------------------ */
/* Robustness                                                                                 */

/* "source:line:col: " with line, col >= 1. */
static bool has_place(const char *message, const char *source)
{
    size_t n = strlen(source);
    int line = 0, col = 0, used = 0;
    return strncmp(message, source, n) == 0 &&
           sscanf(message + n, ":%d:%d: %n", &line, &col, &used) == 2 && used > 0 && line >= 1 &&
           col >= 1;
}

static void graph_json_truncated_and_mutated_documents_fail_cleanly(void **state)
{
    (void)state;
    size_t len;
    char *text = read_text(full_path, &len);
    cb_graph_json_desc d = json_desc("cut.json");
    /* Every prefix that stops before the closing brace is malformed JSON. */
    size_t close = len;
    while (close > 0 && text[close - 1] != '}') {
        close--;
    }
    CB_CHECK(close > 0, "full.json has no closing brace");
    for (size_t n = 0; n < close; ++n) {
        cb_graph *g = NULL;
        cb_error err = {0};
        cb_result r = cb_graph_load_json(text, n, &d, &g, &err);
        CB_CHECK(r == CB_ERR_PARSE && g == NULL, "prefix of %zu bytes: %s (%s)", n,
                 cb_result_str(r), err.message);
        CB_CHECK(has_place(err.message, "cut.json"), "prefix of %zu bytes: '%s'", n, err.message);
    }
    /* Bytes replaced at random: an error (with its place) or, when the change still makes a
     * valid graph, a graph. */
    cb_prng rng = cb_test_prng(__func__);
    static const char alphabet[] = "{}[]\",:0123456789.-+eE \n\\\x80\xff\x00tfnaz";
    d = json_desc("mutant.json");
    char *copy = malloc(len);
    uint32_t failed = 0, loaded = 0;
    for (int m = 0; m < 300; ++m) {
        memcpy(copy, text, len);
        uint32_t edits = 1 + cb_prng_below(&rng, 3);
        for (uint32_t e = 0; e < edits; ++e) {
            copy[cb_prng_below(&rng, (uint32_t)len)] =
                alphabet[cb_prng_below(&rng, sizeof alphabet - 1)];
        }
        cb_graph *g = NULL;
        cb_error err = {0};
        cb_result r = cb_graph_load_json(copy, len, &d, &g, &err);
        if (r == CB_OK) {
            assert_non_null(g);
            cb_graph_destroy(g);
            loaded++;
        } else {
            assert_null(g);
            CB_CHECK(has_place(err.message, "mutant.json"), "mutant %d: '%s'", m, err.message);
            failed++;
        }
    }
    cb_test_note("%zu truncations refused; 300 mutants: %u refused, %u still valid", close, failed,
                 loaded);
    CB_CHECK(failed > 200, "most mutants must break the document (%u did)", failed);
    free(copy);
    free(text);
}

typedef struct counting {
    size_t allocs, frees, limit; /* limit: allocations allowed before failing */
} counting;

static void *count_alloc(size_t size, size_t align, void *user)
{
    counting *c = user;
    if (c->allocs >= c->limit) {
        return NULL;
    }
    c->allocs++;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void count_free(void *ptr, size_t size, void *user)
{
    (void)size;
    ((counting *)user)->frees++;
    free(ptr);
}

/* The loader allocates through the desc's allocator only, frees what it allocated on every
 * path, and reports a failing allocator as CB_ERR_OUT_OF_MEMORY at every point it can fail. */
static void graph_json_allocator_is_used_and_failures_are_clean(void **state)
{
    (void)state;
    counting k = {.limit = SIZE_MAX};
    cb_graph_json_desc d = json_desc("full.json");
    d.allocator = (cb_allocator){count_alloc, count_free, &k};
    cb_graph *g = NULL;
    cb_error err = {0};
    assert_int_equal(cb_graph_load_json_file(full_path, &d, &g, &err), CB_OK);
    size_t needed = k.allocs;
    CB_CHECK(needed > 0 && k.frees < k.allocs, "the graph holds memory from the allocator");
    cb_graph_destroy(g);
    assert_int_equal(k.allocs, k.frees);
    /* Fail the n-th allocation, for every n the load makes. */
    for (size_t n = 0; n < needed; ++n) {
        k = (counting){.limit = n};
        g = NULL;
        cb_result r = cb_graph_load_json_file(full_path, &d, &g, &err);
        CB_CHECK(r == CB_ERR_OUT_OF_MEMORY && g == NULL, "allocation %zu failing: %s (%s)", n,
                 cb_result_str(r), err.message);
        CB_CHECK(k.allocs == k.frees, "allocation %zu failing: %zu allocated, %zu freed (%s)", n,
                 k.allocs, k.frees, err.message);
    }
    /* Errors found after allocating free everything too. */
    k = (counting){.limit = SIZE_MAX};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i += 7) {
        char *doc = case_doc(&cases[i]);
        g = NULL;
        cb_graph_load_json(doc, strlen(doc), &d, &g, &err);
        cb_graph_destroy(g);
        free(doc);
    }
    assert_int_equal(k.allocs, k.frees);
    cb_test_note("full.json: %zu allocations through the desc's allocator, each failure clean",
                 needed);
}

static void graph_json_arguments_files_and_descs(void **state)
{
    (void)state;
    cb_graph_json_desc d = json_desc(NULL);
    cb_graph *g = (cb_graph *)&d;
    cb_graph *const untouched = g;
    cb_error err = {0};
    const char *text = "{}";
    assert_int_equal(cb_graph_load_json(NULL, 2, &d, &g, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_load_json(text, 2, NULL, &g, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_load_json(text, 2, &d, NULL, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_load_json_file(NULL, &d, &g, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_load_json_file(full_path, NULL, &g, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_graph_load_json_file(full_path, &d, NULL, &err), CB_ERR_NULL_ARGUMENT);
    cb_graph_json_desc odd = d;
    odd._start_canary = 1;
    assert_int_equal(cb_graph_load_json(text, 2, &odd, &g, &err), CB_ERR_CANARY);
    assert_int_equal(cb_graph_load_json_file(full_path, &odd, &g, &err), CB_ERR_CANARY);
    odd = d;
    odd._end_canary = 3;
    assert_int_equal(cb_graph_load_json(text, 2, &odd, &g, &err), CB_ERR_CANARY);
    odd = d;
    odd.allocator.free_fn = count_free; /* one of the two */
    assert_int_equal(cb_graph_load_json(text, 2, &odd, &g, &err), CB_ERR_ALLOCATOR);
    assert_int_equal(cb_graph_load_json_file(full_path, &odd, &g, &err), CB_ERR_ALLOCATOR);
    /* The desc's skeleton is the builder's: missing, the builder says so. */
    odd = d;
    odd.skeleton = NULL;
    err = (cb_error){0};
    assert_int_equal(cb_graph_load_json_file(full_path, &odd, &g, &err), CB_ERR_NULL_ARGUMENT);
    CB_CHECK(strstr(err.message, "skeleton") != NULL, "%s", err.message);
    /* Files. */
    err = (cb_error){0};
    assert_int_equal(cb_graph_load_json_file(CB_TEST_GRAPH_DIR "/no_such.json", &d, &g, &err),
                     CB_ERR_IO);
    CB_CHECK(strstr(err.message, "no_such.json") != NULL, "%s", err.message);
    assert_int_equal(cb_graph_load_json_file(CB_TEST_GRAPH_DIR, &d, &g, &err), CB_ERR_IO);
    assert_ptr_equal(g, untouched);
    /* Messages name the source: the desc's name, else the path, else "graph". */
    assert_int_equal(cb_graph_load_json("[]", 2, &d, &g, &err), CB_ERR_PARSE);
    CB_CHECK(strncmp(err.message, "graph:1:1: ", 11) == 0, "%s", err.message);
    cb_graph_json_desc named = json_desc("mine.json");
    assert_int_equal(cb_graph_load_json("[]", 2, &named, &g, &err), CB_ERR_PARSE);
    CB_CHECK(strncmp(err.message, "mine.json:1:1: ", 15) == 0, "%s", err.message);
    /* The length bounds the text: what follows it is not read. */
    assert_int_equal(cb_graph_load_json("[] trailing garbage", 2, &named, &g, &err), CB_ERR_PARSE);
    CB_CHECK(strstr(err.message, "must be a JSON object") != NULL, "%s", err.message);
    assert_int_equal(cb_graph_load_json("", 0, &named, &g, &err), CB_ERR_PARSE);
    CB_CHECK(strncmp(err.message, "mine.json:1:1: ", 15) == 0, "%s", err.message);
    assert_ptr_equal(g, untouched);
}

/* What the format leaves out takes the builder's defaults: a minimal document gives the graph
 * that zeroed descs give, and null stands for a missing member. */
static void graph_json_omitted_members_take_the_defaults(void **state)
{
    (void)state;
    char *explicit_doc = json(
        "{'parameters': [{'name': 'p', 'type': 'float', 'default': 0}, "
        "{'name': 'w', 'type': 'float', 'default': 0}],\n"
        " 'nodes': {\n"
        "  'a': {'type': 'clip', 'clip': 'walk_f', 'speed': 1, 'clamp': false, "
        "'start_offset': 0},\n"
        "  'b': {'type': 'clip', 'clip': 'run_f', 'speed': null},\n"
        "  'bs': {'type': 'blend_space', 'solver': 'freeform_directional_2d', 'params': ['p', 'w'],"
        " 'children': [{'node': 'a', 'position': [0, 1.4]}, {'node': 'b', 'position': [0, 3.5]}]},"
        "\n  'sm': {'type': 'state_machine', 'initial': 's', 'states': [{'name': 's', 'node': "
        "'bs', 'speed': 1}, {'name': 't', 'node': 'a'}], 'transitions': [{'from': 's', 'to': "
        "'t', 'conditions': [{'param': 'p', 'op': '>', 'value': 1}], 'duration': 0, 'blend': "
        "'crossfade', 'interruption': 'none', 'to_self': false}]},\n"
        "  'top': {'type': 'layers', 'base': 'sm', 'layers': [{'node': 'a', 'mode': 'override'}]}"
        "\n },\n 'root': 'top'}");
    char *implicit_doc = json(
        "{'parameters': [{'name': 'p'}, {'name': 'w', 'type': null, 'default': null}],\n"
        " 'nodes': {\n"
        "  'a': {'type': 'clip', 'clip': 'walk_f'},\n"
        "  'b': {'type': 'clip', 'clip': 'run_f'},\n"
        "  'bs': {'type': 'blend_space', 'params': ['p', 'w'],"
        " 'children': [{'node': 'a', 'position': [0, 1.4]}, {'node': 'b', 'position': [0, 3.5]}]},"
        "\n  'sm': {'type': 'state_machine', 'states': [{'name': 's', 'node': 'bs'}, "
        "{'name': 't', 'node': 'a'}], 'transitions': [{'from': 's', 'to': 't', 'conditions': "
        "[{'param': 'p', 'op': '>', 'value': 1}]}]},\n"
        "  'top': {'type': 'layers', 'base': 'sm', 'layers': [{'node': 'a'}]}\n },\n"
        " 'root': 'top'}");
    cb_result r;
    cb_error err;
    cb_graph *e = load_text(explicit_doc, "explicit.json", &r, &err);
    CB_CHECK(r == CB_OK, "%s", err.message);
    cb_graph *i = load_text(implicit_doc, "implicit.json", &r, &err);
    CB_CHECK(r == CB_OK, "%s", err.message);
    /* Same outputs over a run that crosses the transition. */
    cb_crowd *c[2];
    const cb_graph *gs[2] = {e, i};
    for (int k = 0; k < 2; ++k) {
        cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(set),
                            .capacity = 8,
                            .graphs = &gs[k],
                            .graph_count = 1,
                            .thread_count = 1};
        assert_int_equal(cb_crowd_create(&cd, &c[k], &err), CB_OK);
        for (uint32_t n = 0; n < 8; ++n) {
            cb_character ch;
            assert_int_equal(cb_crowd_add(c[k], 0, 0.1f * (float)n, &ch), CB_OK);
        }
    }
    for (uint32_t f = 0; f < 60; ++f) {
        for (int k = 0; k < 2; ++k) {
            float *p = cb_crowd_param_column(c[k], 0, 0), *w = cb_crowd_param_column(c[k], 0, 1);
            for (uint32_t n = 0; n < 8; ++n) {
                p[n] = 0.05f * (float)(f + n);
                w[n] = 0.5f;
            }
            assert_int_equal(cb_crowd_update(c[k], 1.0f / 30.0f), CB_OK);
        }
        CB_CHECK(cb_crowd_output_hash(c[0]) == cb_crowd_output_hash(c[1]), "frame %u differs", f);
    }
    uint32_t moved = 0;
    for (uint32_t n = 0; n < 8; ++n) {
        moved += cb_crowd_state(c[0], 0, 0, n) == 1;
    }
    CB_CHECK(moved > 0, "no character took the transition");
    cb_crowd_destroy(c[0]);
    cb_crowd_destroy(c[1]);
    cb_graph_destroy(e);
    cb_graph_destroy(i);
    free(explicit_doc);
    free(implicit_doc);
}

/* ------------------------------------------------------------------------------------------ */
/* docs/graph.md                                                                              */

/* The n-th fenced block of the doc that opens with `fence` (a new string), or NULL. */
static char *doc_block(const char *doc, const char *fence, int n)
{
    const char *p = doc;
    for (int k = 0; k <= n; ++k) {
        p = strstr(p, fence);
        if (p == NULL) {
            return NULL;
        }
        p += strlen(fence);
    }
    const char *end = strstr(p, "\n```");
    CB_CHECK(end != NULL, "an unclosed block in the doc");
    size_t len = (size_t)(end - p) + 1;
    char *out = malloc(len + 1);
    memcpy(out, p, len);
    out[len] = '\0';
    return out;
}

/* Every ```json block of docs/graph.md loads; the example's slot order and its messages in the
 * doc are what the loader does. */
static void graph_json_the_doc_examples_are_true(void **state)
{
    (void)state;
    size_t len;
    char *doc = read_text(CB_TEST_GRAPH_DOC, &len);
    int blocks = 0;
    for (char *b; (b = doc_block(doc, "```json\n", blocks)) != NULL; ++blocks) {
        cb_result r;
        cb_error err;
        cb_graph *g = load_text(b, "walker.json", &r, &err);
        CB_CHECK(r == CB_OK, "docs/graph.md, JSON block %d: %s", blocks, err.message);
        cb_graph_destroy(g);
        free(b);
    }
    CB_CHECK(blocks >= 1, "docs/graph.md has no JSON example");

    /* The example's clip slots are idle, walk, run, waving: standing, idle plays alone under
     * the wave; at the run node's speed, run does. */
    char *example = doc_block(doc, "```json\n", 0);
    cb_result r;
    cb_error err;
    cb_graph *g = load_text(example, "walker.json", &r, &err);
    cb_crowd_desc cd = {.skeleton = cb_embedded_skeleton(set),
                        .capacity = 1,
                        .graphs = (const cb_graph *const *)&g,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = true};
    cb_crowd *c = NULL;
    assert_int_equal(cb_crowd_create(&cd, &c, &err), CB_OK);
    cb_character ch;
    assert_int_equal(cb_crowd_add(c, 0, 0.0f, &ch), CB_OK);
    float *target = cb_crowd_param_column(c, 0, param_of(c, "speed_target"));
    size_t stride;
    target[0] = 0.0f;
    assert_int_equal(cb_crowd_update(c, 0.1f), CB_OK);
    const float *w = cb_crowd_weights(c, 0, &stride);
    CB_CHECK(w[0] > 0.99f && w[stride] == 0.0f && w[2 * stride] == 0.0f && w[3 * stride] > 0.0f,
             "standing: slots %g %g %g %g", (double)w[0], (double)w[stride], (double)w[2 * stride],
             (double)w[3 * stride]);
    target[0] = 3.5f;
    for (int f = 0; f < 30; ++f) {
        assert_int_equal(cb_crowd_update(c, 0.1f), CB_OK);
    }
    w = cb_crowd_weights(c, 0, &stride);
    CB_CHECK(w[0] == 0.0f && w[stride] < 0.01f && w[2 * stride] > 0.99f, "running: slots %g %g %g",
             (double)w[0], (double)w[stride], (double)w[2 * stride]);
    cb_crowd_destroy(c);
    cb_graph_destroy(g);

    /* "Some messages, from the example above with one thing changed each time". */
    static const char *const changes[][2] = {
        {"{'node': 'run', 'position': 3.5}", "{'node': 'run', 'position': '3.5'}"},
        {"'params': 'speed'", "'param': 'speed'"},
        {"'idle': {'type': 'clip', 'clip': 'idle'}", "'idle': {'type': 'clip', 'clip': 'idel'}"},
        {"  'root': 'body',\n", ""},
        {"{'name': 'moving', 'node': 'walk_run'}", "{'name': 'moving', 'node': 'locomotion'}"},
    };
    const char *messages_at = strstr(doc, "Some messages");
    CB_CHECK(messages_at != NULL, "docs/graph.md lists no messages");
    char *listing = doc_block(messages_at, "```\n", 0);
    const char *line = listing;
    int wrong = 0;
    for (size_t k = 0; k < sizeof changes / sizeof changes[0]; ++k) {
        char *from = json(changes[k][0]), *to = json(changes[k][1]);
        char *changed = subst(example, from, to);
        assert_null(load_text(changed, "walker.json", &r, &err));
        const char *eol = strchr(line, '\n');
        size_t n = eol != NULL ? (size_t)(eol - line) : strlen(line);
        if (strlen(err.message) != n || strncmp(line, err.message, n) != 0) {
            print_error("change %zu: the loader says\n%s\ndocs/graph.md says\n%.*s\n", k,
                        err.message, (int)n, line);
            wrong++;
        }
        line += eol != NULL ? n + 1 : n;
        free(from), free(to), free(changed);
    }
    CB_CHECK(wrong == 0, "%d messages in docs/graph.md differ from the loader's", wrong);
    free(listing);
    free(example);
    free(doc);
}

/* Issue 11, finding 16: a document whose nodes reference many clips and nodes by name loaded in
 * time proportional to references x names (a strcmp scan per reference); 7 MB ran over 300 s.
 * Names are looked up through hash tables now (the base name table: one string comparison per
 * lookup, tests/test_base.c). Here the largest document the limits allow, 1023 nodes over 1500
 * clips with every reference by name, must load and bind every name to the right thing; its
 * speed is for bench and docs, not for a test. */
static void graph_json_many_names_load_and_bind(void **state)
{
    (void)state;
    enum { CLIPS = 1500, CLIP_NODES = 1000, BLENDS = 23 };
    static const char *const joint[1] = {"root"};
    static const int32_t parent[1] = {-1};
    cb_skeleton_desc sd = {.joint_count = 1, .names = joint, .parents = parent};
    cb_skeleton *sk = NULL;
    assert_int_equal(cb_skeleton_create(&sd, &sk, NULL), CB_OK);
    cb_clip **many = calloc(CLIPS, sizeof *many);
    char name[32];
    for (uint32_t k = 0; k < CLIPS; ++k) {
        snprintf(name, sizeof name, "clip_%u", k);
        cb_clip_desc cd = {.name = name,
                           .skeleton = sk,
                           .duration_s = 1.0f + 0.001f * (float)k,
                           .sample_rate_hz = 2.0f};
        assert_int_equal(cb_clip_create(&cd, &many[k], NULL), CB_OK);
    }
    /* Clip node i plays clip (7 i) mod CLIPS; blend space b0 (the root) and the others each
     * reference about 44 clip nodes by name. */
    strbuf b = {0};
    put(&b, "{\"parameters\": [{\"name\": \"x\"}], \"nodes\": {\n");
    for (uint32_t i = 0; i < CLIP_NODES; ++i) {
        put(&b, "\"c%u\": {\"type\": \"clip\", \"clip\": \"clip_%u\", \"sync_group\": \"g%u\"},\n",
            i, 7 * i % CLIPS, i);
    }
    for (uint32_t k = 0; k < BLENDS; ++k) {
        put(&b,
            "%s\"b%u\": {\"type\": \"blend_space\", \"solver\": \"linear_1d\", "
            "\"params\": \"x\", \"children\": [",
            k ? ",\n" : "", k);
        for (uint32_t j = 0, i = k; i < CLIP_NODES; i += BLENDS, ++j) {
            put(&b, "%s{\"node\": \"c%u\", \"position\": %u}", j ? ", " : "", i, j);
        }
        put(&b, "]}");
    }
    put(&b, "}, \"root\": \"b0\"}");
    const cb_clip **ptrs = calloc(CLIPS, sizeof *ptrs);
    for (uint32_t k = 0; k < CLIPS; ++k) {
        ptrs[k] = many[k];
    }
    cb_graph_json_desc d = {.skeleton = sk, .clips = ptrs, .clip_count = CLIPS};
    cb_graph *g = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_load_json(b.s, strlen(b.s), &d, &g, &err) == CB_OK, "%s", err.message);
    /* The root and its children: c0, c23, c46, ... in that order. */
    uint32_t kids = (CLIP_NODES + BLENDS - 1) / BLENDS;
    assert_int_equal(cb_graph_node_count(g), 1 + kids);
    assert_int_equal(cb_graph_clip_count(g), kids);
    for (uint32_t k = 0; k < kids; ++k) {
        uint32_t node = cb_graph_clip_node(g, k);
        uint32_t i = (uint32_t)atoi(cb_graph_node_name(g, node) + 1);
        CB_CHECK(i == k * BLENDS, "clip slot %u is node %s", k, cb_graph_node_name(g, node));
        CB_CHECK(g->clips[k].clip == many[7 * i % CLIPS], "node c%u plays %s, want clip_%u", i,
                 cb_clip_name(g->clips[k].clip), 7 * i % CLIPS);
    }
    cb_graph_destroy(g);
    free(b.s);
    for (uint32_t k = 0; k < CLIPS; ++k) {
        cb_clip_destroy(many[k]);
    }
    free(ptrs);
    free(many);
    cb_skeleton_destroy(sk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(graph_json_full_document_loads_and_matches_its_queries),
        cmocka_unit_test(graph_json_matches_the_same_graph_built_in_c),
        cmocka_unit_test(graph_json_omitted_members_take_the_defaults),
        cmocka_unit_test(graph_json_every_error_has_its_code_place_and_culprit),
        cmocka_unit_test(graph_json_limits_are_refused_at_their_place),
        cmocka_unit_test(graph_json_truncated_and_mutated_documents_fail_cleanly),
        cmocka_unit_test(graph_json_allocator_is_used_and_failures_are_clean),
        cmocka_unit_test(graph_json_arguments_files_and_descs),
        cmocka_unit_test(graph_json_the_doc_examples_are_true),
        cmocka_unit_test(graph_json_many_names_load_and_bind),
    };
    if (setup_set() != 0) {
        fprintf(stderr, "the embedded set could not be built\n");
        return 1;
    }
    int failed = CB_RUN_TESTS(tests);
    cb_embedded_destroy(set);
    return failed;
}
