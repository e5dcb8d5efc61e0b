/* `crowdblend pose FILE.cbpack --clip NAME --time SECONDS [--json]`: the model-space position
 * and rotation of every joint of a pack's clip at a time, so that scripts and tests can check
 * poses from outside the library.
 *
 * The pose is sampled by the runtime's own job (cb_pose_sample_job) and taken to model space by
 * the local-to-model job; the clip's root motion is put back first, so the result is the source
 * animation as the importer read it: root = origin * delta(0, t) * pose(t) (crowdblend/clip.h,
 * ROOT MOTION). --in-place leaves the root motion out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

static const char *const CMD = "crowdblend pose";

/* x = g * x, with g a rigid motion on the ground: position g.t, heading g_yaw about +Y. */
static void put_back_root(cb_xform *x, const double g[3], double g_yaw)
{
    double c = cos(g_yaw), s = sin(g_yaw);
    double t[3] = {x->translation[0], x->translation[1], x->translation[2]};
    x->translation[0] = (float)(g[0] + c * t[0] + s * t[2]);
    x->translation[1] = (float)(g[1] + t[1]);
    x->translation[2] = (float)(g[2] - s * t[0] + c * t[2]);
    double h[4] = {0, sin(0.5 * g_yaw), 0, cos(0.5 * g_yaw)};
    const float *q = x->rotation;
    double r[4] = {
        h[3] * q[0] + h[0] * q[3] + h[1] * q[2] - h[2] * q[1],
        h[3] * q[1] - h[0] * q[2] + h[1] * q[3] + h[2] * q[0],
        h[3] * q[2] + h[0] * q[1] - h[1] * q[0] + h[2] * q[3],
        h[3] * q[3] - h[0] * q[0] - h[1] * q[1] - h[2] * q[2],
    };
    for (int k = 0; k < 4; ++k) {
        x->rotation[k] = (float)r[k];
    }
}

/* Samples the clip at t seconds and writes model-space transforms into model. */
static cb_result pose_at(const cb_clip *clip, const cb_skeleton *skel, double t_s, bool in_place,
                         cb_xform *local, cb_xform *model)
{
    size_t n = cb_skeleton_joint_count(skel), groups = cb_skeleton_group_count(skel);
    size_t bytes = (cb_skeleton_pose_bytes(skel) + cb_simd_group_align() - 1) /
                   cb_simd_group_align() * cb_simd_group_align();
    cb_xform_group *pose = aligned_alloc(cb_simd_group_align(), bytes);
    if (pose == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    float u = (float)(t_s / (double)cb_clip_duration(clip));
    cb_pose_sample_job sj = {.clip = clip, .time = u, .out = {pose, groups}};
    cb_result r = cb_pose_sample_job_run(&sj, NULL);
    cb_clip_root_motion rm = cb_clip_query_root_motion(clip);
    if (r == CB_OK && !in_place && rm.mode != CB_ROOT_MOTION_NONE) {
        cb_root_delta d;
        cb_clip_root_delta(clip, 0.0f, u, &d);
        double oy = rm.origin_yaw, c = cos(oy), s = sin(oy);
        double g[3] = {rm.origin[0] + c * d.translation[0] + s * d.translation[2],
                       rm.origin[1] + d.translation[1],
                       rm.origin[2] - s * d.translation[0] + c * d.translation[2]};
        cb_xform_unpack(pose, groups, (cb_xform_span){local, n});
        put_back_root(&local[rm.joint], g, oy + d.yaw);
        cb_xform_pack((cb_xform_cspan){local, n}, pose, groups);
    }
    if (r == CB_OK) {
        cb_ltm_job lj = {.skeleton = skel, .local = {pose, groups}, .model_xforms = {model, n}};
        r = cb_ltm_job_run(&lj, NULL);
    }
    free(pose);
    return r;
}

static void print_json(const char *clip_name, double time_s, const cb_skeleton *skel,
                       const cb_xform *model)
{
    printf("{\"clip\": ");
    cb_json_string(stdout, clip_name);
    printf(", \"time_s\": %.9g, \"joints\": [", time_s);
    for (size_t j = 0; j < cb_skeleton_joint_count(skel); ++j) {
        const cb_xform *x = &model[j];
        printf("%s{\"name\": ", j ? ", " : "");
        cb_json_string(stdout, cb_skeleton_joint_name(skel, j));
        printf(", \"parent\": %d, \"position\": [%.9g, %.9g, %.9g], "
               "\"rotation\": [%.9g, %.9g, %.9g, %.9g]}",
               (int)cb_skeleton_parents(skel)[j], (double)x->translation[0],
               (double)x->translation[1], (double)x->translation[2], (double)x->rotation[0],
               (double)x->rotation[1], (double)x->rotation[2], (double)x->rotation[3]);
    }
    printf("]}\n");
}

static void print_text(const char *clip_name, double time_s, bool in_place, const cb_skeleton *skel,
                       const cb_xform *model)
{
    printf("%s at %.4f s (model space%s)\n\n  %-28s %32s %40s\n", clip_name, time_s,
           in_place ? ", in place" : ", root motion included", "joint", "position",
           "rotation (x y z w)");
    for (size_t j = 0; j < cb_skeleton_joint_count(skel); ++j) {
        const cb_xform *x = &model[j];
        printf("  %-28.28s %10.5f %10.5f %10.5f   %9.6f %9.6f %9.6f %9.6f\n",
               cb_skeleton_joint_name(skel, j), (double)x->translation[0],
               (double)x->translation[1], (double)x->translation[2], (double)x->rotation[0],
               (double)x->rotation[1], (double)x->rotation[2], (double)x->rotation[3]);
    }
}

/* --times "t1,t2,...": each time a decimal (cb_opts_decimal, the command line's one rule for
 * numbers), at least one. Returns the times (free them) and their count, or NULL after a
 * message naming the element that is not a number. */
static double *parse_times(const char *times, size_t *count)
{
    size_t n = 1;
    for (const char *p = times; *p != '\0'; ++p) {
        n += *p == ',';
    }
    char *copy = malloc(strlen(times) + 1);
    double *t = malloc(n * sizeof *t);
    if (copy == NULL || t == NULL) {
        fprintf(stderr, "%s: out of memory for --times\n", CMD);
        free(copy);
        free(t);
        return NULL;
    }
    strcpy(copy, times);
    char *element = copy;
    for (size_t i = 0; i < n; ++i) {
        char *comma = strchr(element, ',');
        if (comma != NULL) {
            *comma = '\0';
        }
        if (!cb_opts_decimal(element, &t[i])) {
            fprintf(stderr,
                    "%s: --times expects decimal numbers (as 0.5 or 1e-3) separated by commas; "
                    "'%s' in '%s' is not one\n",
                    CMD, element, times);
            free(copy);
            free(t);
            return NULL;
        }
        element = comma != NULL ? comma + 1 : element;
    }
    free(copy);
    *count = n;
    return t;
}

/* Whether the options name one pack, a clip and the times (--time, or --times with --json);
 * prints the usage error when not. */
static bool usage_ok(size_t npos, const char *clip_name, const char *times, double time_s,
                     bool json)
{
    if (times != NULL && (!isnan(time_s) || !json)) {
        fprintf(stderr,
                "%s: --times prints one JSON object per time: it needs --json, and not "
                "--time\n",
                CMD);
        return false;
    }
    if (npos != 1 || clip_name == NULL || (times == NULL && isnan(time_s))) {
        fprintf(stderr,
                "%s: needs FILE.cbpack, --clip NAME and --time SECONDS (or --times T1,T2,... "
                "with --json; try --help)\n",
                CMD);
        return false;
    }
    return true;
}

/* Loads the pack and finds the clip in it, printing why not. The caller destroys *pack
 * whatever the result. */
static cb_result load_clip(const char *path, const char *clip_name, bool raw_clips, cb_pack **pack,
                           uint32_t *index)
{
    cb_error err = {0};
    cb_pack_load_desc load = {.clip_form =
                                  raw_clips ? CB_PACK_CLIP_FORM_RAW : CB_PACK_CLIP_FORM_COMPRESSED};
    cb_result r = cb_pack_load_file(path, &load, pack, &err);
    if (r != CB_OK) {
        fprintf(stderr, "%s: %s\n", CMD, err.message);
    } else if ((r = cb_pack_find_clip(*pack, clip_name, index)) != CB_OK) {
        fprintf(stderr, "%s: %s has no clip \"%s\"\n", CMD, path, clip_name);
    }
    return r;
}

/* One pose per time: with --json one object per line. Stops at the first failure, printed. */
static cb_result print_poses(const cb_pack *pack, uint32_t index, const char *clip_name,
                             const double *time_list, size_t time_count, bool in_place, bool json)
{
    cb_result r = CB_OK;
    const cb_skeleton *skel = cb_pack_skeleton(pack);
    size_t n = cb_skeleton_joint_count(skel);
    cb_xform *local = malloc(n * sizeof *local);
    cb_xform *model = malloc(n * sizeof *model);
    if (local == NULL || model == NULL) {
        r = CB_ERR_OUT_OF_MEMORY;
        fprintf(stderr, "%s: %s\n", CMD, cb_result_str(r));
    }
    for (size_t i = 0; r == CB_OK && i < time_count; ++i) {
        r = pose_at(cb_pack_clip(pack, index), skel, time_list[i], in_place, local, model);
        if (r != CB_OK) {
            fprintf(stderr, "%s: %s\n", CMD, cb_result_str(r));
        } else if (json) {
            print_json(clip_name, time_list[i], skel, model);
        } else {
            print_text(clip_name, time_list[i], in_place, skel, model);
        }
    }
    free(local);
    free(model);
    return r;
}

int cb_cmd_pose(int argc, char **argv)
{
    bool help = false, json = false, in_place = false, raw_clips = false;
    const char *clip_name = NULL, *times = NULL;
    double time_s = NAN;
    const cb_opt opts[] = {
        {"clip", CB_OPT_STRING, &clip_name, "the clip's name (required)"},
        {"time", CB_OPT_DOUBLE, &time_s, "seconds from the clip's start (or --times)"},
        {"times", CB_OPT_STRING, &times,
         "several times t1,t2,... instead of --time; with --json, one object per line"},
        {"json", CB_OPT_FLAG, &json, "print one JSON object"},
        {"in-place", CB_OPT_FLAG, &in_place, "leave the root motion out"},
        {"raw-clips", CB_OPT_FLAG, &raw_clips,
         "decode compressed clips to frames at load (default: sample them compressed)"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    const char *positional[1] = {NULL};
    size_t npos = 0;
    if (!cb_opts_parse(CMD, argc, argv, 2, opts, positional, 1, &npos)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help(
            "crowdblend pose FILE.cbpack --clip NAME --time SECONDS [--json]\n"
            "       crowdblend pose FILE.cbpack --clip NAME --times T1,T2,... --json",
            opts);
        return CB_EXIT_OK;
    }
    if (!usage_ok(npos, clip_name, times, time_s, json)) {
        return CB_EXIT_USAGE;
    }
    /* Every time is read before the pack: a bad one prints no pose. */
    size_t time_count = 1;
    double *time_list = times != NULL ? parse_times(times, &time_count) : &time_s;
    if (time_list == NULL) {
        return CB_EXIT_USAGE;
    }
    cb_pack *pack = NULL;
    uint32_t index = 0;
    cb_result r = load_clip(positional[0], clip_name, raw_clips, &pack, &index);
    if (r == CB_OK) {
        r = print_poses(pack, index, clip_name, time_list, time_count, in_place, json);
    }
    cb_pack_destroy(pack);
    if (time_list != &time_s) {
        free(time_list);
    }
    return r == CB_OK ? CB_EXIT_OK : CB_EXIT_FAILURE;
}
