/* Trajectories in: pedestrian trajectories from crowd-simulator files, and their smooth
 * interpolation to any time (docs/trajectories.md).
 *
 * This is an offline module of the command path (the crowdblend_traj static library, linked by
 * the `crowdblend` command, the tests and the fuzz targets), not part of libcrowdblend: it
 * reads files through SQLite and zlib, and a runtime library that engines link must not carry
 * those. An engine that steers its own agents feeds positions and velocities to
 * crowdblend/follow.h directly.
 *
 * COORDINATES are the files': x and y in the ground plane, z up (the elevation of the agent's
 * feet where the format has one, else 0), metres; times in seconds. Converting them to the
 * animation's frame (+Y up) is the caller's business.
 *
 * FORMATS (cb_traj_format): JuPedSim SQLite, Vadere .traj, Pathfinder CSV, crowd:it CSV (plain
 * or gzipped), PeTrack text and a plain CSV "time,id,x,y[,z]". Each file becomes agents, each
 * with its samples in increasing time; an agent exists from its first sample to its last.
 *
 * ERRORS name the file and the line (text formats, lines count from 1) or the row (SQLite):
 * "path:12: ..." or "path: row 57 (frame 3, id 9): ...". Nothing is returned on failure.
 *
 * INTERPOLATION is a cubic Hermite spline per agent through every sample (C1: positions and
 * velocities continuous), with tangents that cannot overshoot a stop (see resample.c).
 */
#ifndef CROWDBLEND_TRAJ_TRAJ_H
#define CROWDBLEND_TRAJ_TRAJ_H

#include <stddef.h>
#include <stdint.h>

#include "crowdblend/base.h"

/* The file formats. AUTO recognises the others from the file's bytes. */
typedef enum cb_traj_format {
    CB_TRAJ_FORMAT_AUTO = 0,
    CB_TRAJ_FORMAT_CSV,        /* plain CSV: header naming time,id,x,y[,z] */
    CB_TRAJ_FORMAT_JUPEDSIM,   /* SQLite: trajectory_data(frame, id, pos_x, pos_y, ...), fps */
    CB_TRAJ_FORMAT_VADERE,     /* Vadere postvis .traj: straight steps between event times */
    CB_TRAJ_FORMAT_PATHFINDER, /* Pathfinder CSV with a units row */
    CB_TRAJ_FORMAT_CROWDIT,    /* crowd:it CSV time,pedID,posX,posY (gzip or plain) */
    CB_TRAJ_FORMAT_PETRACK,    /* PeTrack text: # comments, then id frame x y [z] */
    CB_TRAJ_FORMAT_COUNT
} cb_traj_format;

/* Most agents and samples a file may hold: far beyond any simulator output we know, small
 * enough that every index fits in 32 bits and the arrays in memory. */
#define CB_TRAJ_MAX_AGENTS 1000000u
#define CB_TRAJ_MAX_SAMPLES 200000000u
/* Coordinates beyond 1e7 m and times beyond 1e9 s are refused as nonsense. */
#define CB_TRAJ_MAX_COORDINATE 1e7
#define CB_TRAJ_MAX_TIME 1e9
/* Decompressed text beyond this is refused (a gzip bomb would otherwise fill the memory). */
#define CB_TRAJ_MAX_TEXT_BYTES ((size_t)1 << 30)

/* One agent: its samples are [first, first + count) of the cb_traj arrays. */
typedef struct cb_traj_agent {
    int64_t id;     /* the file's id */
    uint32_t first; /* index of the first sample */
    uint32_t count; /* >= 1 */
} cb_traj_agent;

/* A loaded file. Agents are sorted by id; each agent's samples by time (strictly increasing). */
typedef struct cb_traj {
    cb_traj_format format;
    uint32_t agent_count;
    cb_traj_agent *agents;
    size_t sample_count;
    double *t;    /* seconds */
    double *p;    /* 3 per sample: x, y (ground plane), z (elevation), metres */
    double *m;    /* 3 per sample: the Hermite tangents, m/s (see resample.c) */
    double t_min; /* first and last sample time over all agents */
    double t_max;
    double source_rate; /* the file's frame rate in Hz where it has one (fps), else 0 */
} cb_traj;

/* How to read a file. Zero is the default for every field. */
typedef struct cb_traj_load_desc {
    cb_traj_format format;   /* AUTO: recognised from the bytes */
    const char *source_name; /* name in messages; default: the path, or "trajectories" */
    /* Frames per second for formats that count frames (PeTrack, JuPedSim) when the file does
     * not say (a PeTrack file without a "# framerate: N fps" comment); overrides the file
     * when set. */
    double fps;
} cb_traj_load_desc;

/* Reads a trajectory file (text formats may be gzipped; zlib reads both).
 * Returns CB_OK, CB_ERR_NULL_ARGUMENT, CB_ERR_IO (unreadable), CB_ERR_PARSE (malformed: the
 * message names the line or row), CB_ERR_UNSUPPORTED (an unknown format or unit),
 * CB_ERR_NOT_FINITE, CB_ERR_INVALID_ARGUMENT (a value out of range), CB_ERR_DUPLICATE (two
 * samples of one agent at one time), CB_ERR_TOO_FEW (no samples), CB_ERR_TOO_MANY,
 * CB_ERR_OUT_OF_MEMORY. */
cb_result cb_traj_load_file(const char *path, const cb_traj_load_desc *desc, cb_traj **out,
                            cb_error *err);

/* Reads a text format from memory (length bytes, no terminating zero needed); JuPedSim SQLite
 * needs a file. The fuzz targets enter here. Results as cb_traj_load_file. */
cb_result cb_traj_load_text(const char *text, size_t length, const cb_traj_load_desc *desc,
                            cb_traj **out, cb_error *err);

/* Frees a trajectory set. NULL does nothing. */
void cb_traj_destroy(cb_traj *traj);

/* "csv", "jupedsim", "vadere", "pathfinder", "crowdit", "petrack" ("auto" for AUTO); the
 * names the command's --format takes. NULL for an invalid value. */
const char *cb_traj_format_name(cb_traj_format format);

/* The format of a name (as cb_traj_format_name), or CB_TRAJ_FORMAT_COUNT if unknown. */
cb_traj_format cb_traj_format_from_name(const char *name);

/* The first and last sample time of an agent. */
double cb_traj_agent_start(const cb_traj *traj, uint32_t agent);
double cb_traj_agent_end(const cb_traj *traj, uint32_t agent);

/* Position and velocity of an agent at time t, from the Hermite spline (resample.c). Times
 * outside the agent's span are clamped to it (velocity 0 there). pos and vel: 3 doubles each
 * (x, y, z; m and m/s); vel may be NULL. */
void cb_traj_eval(const cb_traj *traj, uint32_t agent, double t, double pos[3], double vel[3]);

#endif
