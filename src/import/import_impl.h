/* Internals of crowdblend-import: the source scene as the importer sees it after assimp (nodes,
 * skins, animation channels, all in double precision), its exact evaluation, and the steps that
 * turn it into a skeleton and clips (fit.c: rate choice and error measurement; detect.c:
 * looping and foot plants; markers.c: the sidecar file). */
#ifndef CROWDBLEND_IMPORT_IMPL_H
#define CROWDBLEND_IMPORT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_impl.h"
#include "crowdblend/crowdblend.h"
#include "crowdblend/import.h"

/* ---- errors -------------------------------------------------------------------------------- */

/* Errors are filled with cb_error_set (base/base_impl.h): the library links its own copy of it
 * (cb_tool_support), as it reaches the runtime through the public API only. */

static inline size_t imp_round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

/* ---- math: transforms in double ------------------------------------------------------------ */

typedef struct dxf {
    double t[3];
    double q[4]; /* x y z w */
    double s[3];
} dxf;

dxf imp_identity(void);
/* a then b in a's frame: (t_a + q_a (s_a * t_b), q_a q_b, s_a * s_b); exact unless a has a
 * non-uniform scale and b a rotation (TRS cannot hold shear). */
dxf imp_compose(const dxf *a, const dxf *b);
/* Position p moved by x. */
void imp_apply(const dxf *x, const double p[3], double out[3]);
void imp_qnormalize(double q[4]);
/* Slerp on the shorter arc (the glTF rule for rotations). */
void imp_qslerp(const double a[4], const double b[4], double u, double out[4]);
/* Rotation (x y z w) from a column-major 4x4's upper 3x3 with unit columns. */
void imp_mat_to_quat(const double m[16], double q[4]);
/* Decomposes a column-major affine 4x4 into TRS (positive scales; shear is lost). */
dxf imp_decompose(const double m[16]);
void imp_xf_to_mat(const dxf *x, double m[16]);
void imp_mat_mul(const double a[16], const double b[16], double out[16]);
/* Inverse of an affine column-major 4x4. */
void imp_mat_inverse_affine(const double m[16], double out[16]);
/* Heading of a rotation: atan2 of its +Z axis on the ground; NaN when the axis is vertical. */
double imp_heading(const double q[4], double *ground_len);

/* ---- the source scene ---------------------------------------------------------------------- */

/* How a channel's keys interpolate (glTF's words; other formats are LINEAR). */
typedef enum imp_interp { IMP_LINEAR, IMP_STEP, IMP_CUBIC } imp_interp;

/* Keys of one path (translation, rotation or scale) of one node. For IMP_CUBIC, `in` and `out`
 * hold the tangents (same width as values), scaled by nothing (glTF: per second). */
typedef struct imp_keys {
    size_t count;
    double *times;  /* seconds */
    double *values; /* count * width */
    double *in, *out;
    int width; /* 3 or 4 */
    imp_interp interp;
} imp_keys;

typedef struct imp_channel {
    int node;
    imp_keys path[3]; /* translation, rotation, scale; count 0 when the path is not animated */
} imp_channel;

typedef struct imp_anim {
    char name[CB_JOINT_NAME_MAX + 1];
    double duration_s;
    imp_channel *channels;
    size_t channel_count;
    size_t key_total; /* keys over all channels and paths */
} imp_anim;

typedef struct imp_node {
    char name[CB_JOINT_NAME_MAX + 1];
    int parent; /* -1 for the scene root */
    dxf local;  /* static transform */
} imp_node;

typedef struct imp_skin {
    int *joints;           /* node indices */
    double *inverse_binds; /* count * 16, column-major */
    size_t count;
} imp_skin;

typedef struct imp_scene {
    imp_node *nodes;
    size_t node_count;
    imp_skin *skins;
    size_t skin_count;
    imp_anim *anims;
    size_t anim_count;
    bool fbx;
    double fbx_unit_scale; /* metres per file unit from the FBX header, 0 when unknown */
    int fbx_up_axis;       /* 0 X, 1 Y, 2 Z; -1 unknown */
} imp_scene;

/* Reads a file through assimp into `scene` (caller frees with imp_scene_free). `warn` collects
 * non-fatal notes. */
cb_result imp_scene_load(const char *path, imp_scene *scene, cb_error *err);
void imp_scene_free(imp_scene *scene);

/* Refuses glTF documents that crash assimp 5.2 (found by the damaged-asset tests): a skin
 * without inverseBindMatrices. CB_OK when the document is fine or cannot be read (assimp then
 * says why). */
cb_result imp_gltf_precheck(const char *path, cb_error *err);

/* glTF sampler interpolation and cubic tangents, which assimp 5.2 does not keep: read from the
 * file itself for .gltf / .glb and patched into the scene's channels. */
cb_result imp_gltf_patch_interpolation(const char *path, imp_scene *scene, cb_error *err);

/* ---- the skeleton chosen from the scene ---------------------------------------------------- */

typedef struct imp_rig {
    size_t joint_count;
    int *node_of;     /* joint -> node */
    int32_t *parents; /* joint -> joint, parents first */
    const char **names;
    double *inverse_binds; /* joint_count * 16 (converted), or NULL */
    /* The conversion to the library's convention: rotation R (up axis) and scale s, applied at
     * the roots; translations everywhere are scaled by s. */
    double conv_q[4];
    double scale;
    double height; /* extent of the rest pose along +Y after conversion */
} imp_rig;

cb_result imp_rig_build(const imp_scene *scene, const cb_import_desc *desc, imp_rig *rig,
                        char *note, size_t note_size, cb_error *err);
void imp_rig_free(imp_rig *rig);

/* Joint j's local transform at time t (seconds) of animation `anim` (NULL: the rest pose), in
 * the library's convention: the node chain from the parent joint down to j composed, roots
 * with everything above them and the conversion. */
dxf imp_joint_local(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim, size_t j,
                    double t);

/* All joints' model transforms at time t. */
void imp_model_pose(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim, double t,
                    dxf *model);

/* Every key time of the channels that move the rig's joints, sorted, unique, in [0, duration];
 * returns the count (caller frees *times). */
size_t imp_key_times(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim,
                     double **times);

/* The key times where a STEP channel of the rig jumps (every key but the first), sorted;
 * returns the count (caller frees *times). */
size_t imp_step_times(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim,
                      double **times);

/* ---- clips --------------------------------------------------------------------------------- */

/* Builds one clip: chooses the rate, measures the error, decides looping, adds markers. */
typedef struct imp_clip_job {
    const imp_scene *scene;
    const imp_rig *rig;
    const imp_anim *anim;
    const cb_skeleton *skeleton;
    const cb_import_desc *desc;
    double bound_m;
    const cb_clip_marker_desc *markers; /* from the sidecar file */
    size_t marker_count;
    bool compress;           /* store the clip compressed (crowdblend/cclip.h) */
    double compress_bound_m; /* the compression's shell bound (the first one tried) */
    /* The compressed clip is held to the import bound itself, against the source (the default:
     * no compression bound given): the compression's bound is halved until it is. */
    bool compress_within_bound;
    double compress_shell_m; /* and its shell distance */
} imp_clip_job;

/* When job->compress, *out is created compressed (cb_clip_desc.compression: it samples its
 * compressed keys in place, as a pack loaded compressed does) and *packed is its compressed form
 * (cb_clip_compressed_form, owned by *out); else *packed is NULL. */
cb_result imp_clip_build(const imp_clip_job *job, cb_clip **out, const cb_cclip **packed,
                         cb_import_clip_report *report, char *warning, size_t warning_size,
                         cb_error *err);

/* The looping test: the largest distance between a joint at the start and at the end, both
 * relative to the root's ground frame as the root-motion mode takes it out. */
double imp_seam(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim,
                cb_root_motion mode, uint32_t root_joint);

/* Foot contacts of one foot joint (docs/import.md): intervals where the foot is within 3 % of
 * the skeleton's height above the ground (its own lowest point within half a second) and moves
 * over the ground at less than one height per second; gaps and contacts shorter than 50 ms are
 * closed or dropped. The ground's own velocity is the median velocity of the foot while low
 * (zero when the root moves; the walking speed, backwards, for a clip played in place), returned
 * in *ground_speed. Times in seconds; for looping clips a contact may wrap past the end
 * (end_s < start_s); in a clamped clip a contact still on at the end has end_s < 0. */
typedef struct imp_contact {
    double start_s, end_s;
} imp_contact;

size_t imp_detect_contacts(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim,
                           size_t foot, bool looping, imp_contact *out, size_t max,
                           double *ground_speed);

/* The sidecar marker file: {"clip": [{"name": ..., "time_s": ..., "event_only": bool}]}. */
typedef struct imp_marker_file imp_marker_file;
cb_result imp_markers_load(const char *path, imp_marker_file **out, cb_error *err);
void imp_markers_free(imp_marker_file *f);
/* The markers of one clip (pointers valid as long as the file); count 0 when none. */
const cb_clip_marker_desc *imp_markers_for(const imp_marker_file *f, const char *clip,
                                           size_t *count);
/* Names of clips in the file that `has` does not know; NULL when all are known. */
const char *imp_markers_unknown_clip(const imp_marker_file *f,
                                     bool (*has)(const void *ctx, const char *clip),
                                     const void *ctx);

#endif
