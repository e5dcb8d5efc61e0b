/* The wire protocol of `crowdblend serve` (docs/serve.md): the binary frame codec and the
 * control-message parser. Pure functions over caller memory: no sockets, no threads, no
 * allocation (the parser's jansson tree excepted), so the unit tests and the fuzz targets call
 * exactly what the server calls. */
#ifndef CROWDBLEND_SERVE_PROTOCOL_H
#define CROWDBLEND_SERVE_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crowdblend/base.h"

/* ---- binary frames (server -> client) ---------------------------------------------------- */

enum {
    CB_FRAME_MAGIC = 0x31464243u, /* "CBF1" read as a little-endian u32 */
    CB_FRAME_VERSION = 2,         /* 2: 8-byte character ids (53 bits used); 1 had 4-byte ids */
    CB_FRAME_HEADER_BYTES = 64,
    CB_FRAME_MAX_JOINTS = 1024,
    CB_FRAME_FLAG_PAUSED = 1,
};

/* How the transforms of a frame are written. Every encoding carries the character's id (a u64
 * below 2^53, CB_CTL_MAX_ID) and its root transform in floats; they differ in the per-joint
 * model-space transforms. */
typedef enum cb_frame_encoding {
    CB_FRAME_F32,   /* position 3 x f32 + rotation 4 x f32: 28 bytes a joint */
    CB_FRAME_Q16,   /* position 3 x i16 (header scale) + rotation smallest-three 48 bits: 12 */
    CB_FRAME_POS16, /* position 3 x i16 only (enough to draw bones): 6 */
    CB_FRAME_ENCODING_COUNT
} cb_frame_encoding;

/* "f32", "q16", "pos16". */
const char *cb_frame_encoding_name(cb_frame_encoding e);
/* The encoding of that name (CB_ERR_NOT_FOUND). */
cb_result cb_frame_encoding_from_name(const char *name, cb_frame_encoding *out);

typedef struct cb_frame_header {
    uint16_t version;
    cb_frame_encoding encoding;
    uint64_t frame;        /* simulation step number, 1 for the first step */
    double sim_time_s;     /* simulated seconds at the end of the step */
    uint64_t wall_us;      /* CLOCK_REALTIME microseconds when the step ended (for latency) */
    uint32_t characters;   /* records that follow */
    uint16_t joints;       /* joints per record */
    uint16_t flags;        /* CB_FRAME_FLAG_* */
    float position_scale;  /* metres per i16 unit (q16, pos16); 0 for f32 */
    uint32_t record_bytes; /* bytes per character record */
    uint32_t epoch;        /* which hello describes this frame's skeleton and graph */
    uint32_t step_us;      /* how long the crowd update of this step took */
} cb_frame_header;

/* Bytes of one character's record: id (8), root position, root rotation, then the joints,
 * padded to a multiple of 4 so that a reader can view the record through aligned typed arrays. */
size_t cb_frame_record_bytes(cb_frame_encoding e, uint32_t joints);
/* Header plus `characters` records. */
size_t cb_frame_bytes(cb_frame_encoding e, uint32_t characters, uint32_t joints);

/* The position scale (metres per unit) for a skeleton whose joints lie within `reach` metres of
 * its root: +-4 reach fits the i16 range, and never finer than 1/8192 m. */
float cb_frame_position_scale(float reach_m);

/* Writes the header (header->record_bytes is ignored and recomputed). */
void cb_frame_write_header(const cb_frame_header *header, uint8_t *out);

/* One character's record at `out` (cb_frame_record_bytes bytes): root_position (world, m),
 * root_rotation (x, y, z, w), and `joints` model-space matrices (column-major 4x4, relative to
 * the root) at `matrices`. Rotations are taken from the matrices' normalized columns; scale is
 * not transmitted. Positions beyond the i16 range are clamped and counted in the return
 * value (0 when nothing was clamped). */
uint32_t cb_frame_encode_character(cb_frame_encoding e, float position_scale, uint64_t id,
                                   const float root_position[3], const float root_rotation[4],
                                   const float *matrices, uint32_t joints, uint8_t *out);

/* Reads and checks a header: magic, version, encoding, joints <= CB_FRAME_MAX_JOINTS, the record
 * size and that `size` holds exactly the header and its records. CB_ERR_PARSE otherwise (with
 * the reason in why, which may be NULL). */
cb_result cb_frame_read_header(const uint8_t *data, size_t size, cb_frame_header *out,
                               char why[CB_ERROR_MESSAGE_SIZE]);

/* Decodes record `index` of a frame whose header was read by cb_frame_read_header: id, root
 * position and rotation, joint positions (3 floats a joint, model space) and, unless the
 * encoding has none or rotations is NULL, joint rotations (4 floats a joint). */
cb_result cb_frame_decode_character(const uint8_t *data, size_t size, const cb_frame_header *h,
                                    uint32_t index, uint64_t *id, float root_position[3],
                                    float root_rotation[4], float *positions, float *rotations);

/* Smallest-three quaternion codec (exposed for the tests): q normalized on the way in, written
 * as three u16 words; decoding returns a unit quaternion with w >= 0 in the largest slot. */
void cb_quat_pack48(const float q[4], uint16_t out[3]);
void cb_quat_unpack48(const uint16_t in[3], float q[4]);

/* The rotation of a column-major 4x4 matrix's upper 3x3 (columns normalized first). */
void cb_quat_from_mat4(const float m[16], float q[4]);

/* ---- control messages (client -> server, JSON text) ------------------------------------- */

enum {
    CB_CTL_MAX_MESSAGE = 4096,   /* bytes; longer messages close the connection with 1009 */
    CB_CTL_MAX_CHARACTERS = 256, /* ids in one message */
    CB_CTL_MAX_NAME = 64,        /* bytes of a parameter, graph or joint name, zero included */
    CB_CTL_MAX_ADD = 10000,      /* characters added by one message */
    CB_CTL_MAX_STEP = 600,       /* frames stepped by one message */
};

/* The largest character id a message may name: 2^53 - 1, the largest integer a JSON number
 * read as a double (JavaScript's) holds exactly. cb_character ids stay below it (crowd.h). */
#define CB_CTL_MAX_ID 9007199254740991ull

typedef enum cb_ctl_kind {
    CB_CTL_SET_PARAM,    /* {"type":"set_param","name":N,"value":x|null[,"characters":[ids]]} */
    CB_CTL_STEER,        /* {"type":"steer","speed":m/s,"direction":deg|null[,"characters"]} */
    CB_CTL_ADD,          /* {"type":"add","count":n} */
    CB_CTL_REMOVE,       /* {"type":"remove","characters":[ids]} */
    CB_CTL_PAUSE,        /* {"type":"pause"} */
    CB_CTL_RESUME,       /* {"type":"resume"} */
    CB_CTL_STEP,         /* {"type":"step"[,"frames":n]} (while paused) */
    CB_CTL_TIME_SCALE,   /* {"type":"time_scale","value":s} with s in [0, 8] */
    CB_CTL_SWITCH_GRAPH, /* {"type":"switch_graph","graph":name} */
    CB_CTL_SUBSCRIBE,    /* {"type":"subscribe","character":id[,"joint":name]} */
    CB_CTL_UNSUBSCRIBE,  /* {"type":"unsubscribe"[,"character":id]} (none: all of this client's) */
    CB_CTL_ENCODING,     /* {"type":"encoding","encoding":"f32"|"q16"|"pos16"} */
    CB_CTL_KIND_COUNT
} cb_ctl_kind;

/* The "type" string of a kind. */
const char *cb_ctl_kind_name(cb_ctl_kind kind);

typedef struct cb_ctl {
    cb_ctl_kind kind;
    int64_t req; /* the client's optional "req" number, echoed in the reply; -1 if none */
    char name[CB_CTL_MAX_NAME]; /* set_param: parameter; switch_graph: graph; subscribe: joint */
    bool clear;          /* set_param with "value": null, steer with "speed": null: release */
    float value;         /* set_param, time_scale */
    float speed_mps;     /* steer */
    float direction_rad; /* steer: 0 forward, +pi/2 to the character's right */
    uint32_t count;      /* add: characters; step: frames */
    bool all;            /* set_param/steer without "characters", unsubscribe without "character" */
    uint32_t character_count;
    uint64_t characters[CB_CTL_MAX_CHARACTERS]; /* ids; subscribe/unsubscribe use [0] */
    cb_frame_encoding encoding;
} cb_ctl;

/* Error codes of replies: the "code" member of {"type":"error",...}. */
typedef enum cb_ctl_error {
    CB_CTL_OK,
    CB_CTL_ERR_MALFORMED,    /* not JSON, or not an object */
    CB_CTL_ERR_UNKNOWN_TYPE, /* "type" missing or not a known message */
    CB_CTL_ERR_BAD_FIELD,    /* a member of the wrong type, out of range, unknown or missing */
    CB_CTL_ERR_TOO_LARGE,    /* over CB_CTL_MAX_MESSAGE bytes */
    CB_CTL_ERR_NOT_FOUND,    /* an unknown character, parameter, graph or joint (server side) */
    CB_CTL_ERR_REFUSED,      /* valid but not possible now (capacity, not paused, busy, ...) */
    CB_CTL_ERR_BINARY,       /* a binary message: the server reads text only */
    CB_CTL_ERROR_COUNT
} cb_ctl_error;

/* "malformed", "unknown_type", "bad_field", "too_large", "not_found", "refused", "binary". */
const char *cb_ctl_error_name(cb_ctl_error e);

/* Parses one control message of `length` bytes (no terminating zero needed). On success fills
 * *out and returns CB_CTL_OK; otherwise returns the error and writes a message naming the
 * member at fault into why. Unknown members are errors, as in the graph loader: a misspelled
 * optional member would otherwise be ignored. out->req is filled whenever "req" was readable,
 * so that even an error reply can name the request. */
cb_ctl_error cb_ctl_parse(const char *text, size_t length, cb_ctl *out,
                          char why[CB_ERROR_MESSAGE_SIZE]);

/* Writes a JSON string literal (quotes included) of `s` into out, escaping what JSON requires;
 * returns the bytes it needed (as snprintf: the output is cut, zero-terminated, when short). */
size_t cb_json_quote(const char *s, char *out, size_t size);

#endif
