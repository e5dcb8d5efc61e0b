/* The animated crowd as a glTF 2.0 file (`crowdblend animate --out`), for Blender or an engine.
 *
 * Without a mesh (the embedded humanoid has none) each agent is a node, placed and turned by
 * the follow path, whose children are the skeleton's joints as nodes; one animation drives
 * them all: per agent a translation and rotation channel on its node and on every joint node,
 * sampled at the export rate while the agent exists, and a STEP scale channel that shows the
 * agent (scale 1) from its first frame to its last and hides it (scale 0) before and after.
 * ".glb" writes one binary file; ".gltf" writes the JSON and a ".bin" beside it.
 *
 * Coordinates are the crowd's world: +Y up, metres (glTF's own convention). Joint scale is not
 * exported (the embedded clips have none). */
#ifndef CROWDBLEND_EXPORT_GLTF_H
#define CROWDBLEND_EXPORT_GLTF_H

#include <stddef.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"

/* Most bytes of animation data written (the GLB format's chunks are limited to 4 GiB, and a
 * viewer to far less): a larger export is refused with a message that says how to shrink it. */
#define CB_GLTF_MAX_BYTES ((size_t)1 << 30)

typedef struct cb_gltf_desc {
    const cb_skeleton *skeleton;
    uint32_t agent_count;
    const int64_t *agent_ids;    /* names the agent nodes "agent <id>" */
    const uint32_t *frames;      /* per agent: exported frames (>= 1) */
    const uint32_t *first_frame; /* per agent: index of its first frame on the export grid */
    double dt_s;                 /* export frame time */
    uint32_t total_frames;       /* frames of the whole export grid */
} cb_gltf_desc;

typedef struct cb_gltf cb_gltf;

/* Allocates the recording; CB_ERR_TOO_MANY (beyond CB_GLTF_MAX_BYTES) or
 * CB_ERR_OUT_OF_MEMORY with a message. */
cb_result cb_gltf_create(const cb_gltf_desc *desc, cb_gltf **out, cb_error *err);
void cb_gltf_destroy(cb_gltf *g);

/* Records frame `frame` (0-based among the agent's exported frames) of an agent: its root's
 * world position and rotation (quaternion x, y, z, w) and its joints' model-space mat4
 * matrices (cb_crowd_matrices), which are turned into local translations and rotations. */
void cb_gltf_record(cb_gltf *g, uint32_t agent, uint32_t frame, const float root_position[3],
                    const float root_rotation[4], const float *model_matrices);

/* The file a path names, by its suffix in either case: ".glb" one binary GLB file, ".gltf"
 * glTF JSON with a ".bin" beside it; NONE for any other name, which is refused. */
typedef enum cb_gltf_file { CB_GLTF_FILE_NONE, CB_GLTF_FILE_GLTF, CB_GLTF_FILE_GLB } cb_gltf_file;
cb_gltf_file cb_gltf_file_of(const char *path);

/* Writes the file: a GLB, or glTF JSON plus "<path>.bin" (the ".gltf" suffix replaced), as
 * cb_gltf_file_of says; CB_ERR_INVALID_ARGUMENT for another name. CB_ERR_IO with the system's
 * reason when a file cannot be written, and then nothing of the export is left. */
cb_result cb_gltf_write(const cb_gltf *g, const char *path, cb_error *err);

#endif
