/* What `crowdblend animate` measures (issue 12; definitions in docs/trajectories.md):
 *
 *   planted-foot skate  the horizontal world speed of each ball joint over a frame in which the
 *                       clips' markers say the foot is down at both ends, the planting clips'
 *                       blend weight being at least 0.5; cm/s. Summarised as mean, median, p95
 *                       and the share above 5 cm/s, overall, by the trajectory's speed and by
 *                       the heading's turn rate;
 *   pops                the 99.9th percentile of |p(k+1) - 2 p(k) + p(k-1)| over every joint's
 *                       world position p at three consecutive frames, cm; compared with the
 *                       same figure for the clips played alone.
 *
 * An offline module of the command path (linked by the command and the tests), built on the
 * library's public API only. */
#ifndef CROWDBLEND_MEASURE_H
#define CROWDBLEND_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crowdblend/crowdblend.h"

/* ---- statistics of non-negative values ---------------------------------------------------- */

/* Values are counted in bins of relative width 2^(1/256) (0.27 %) from 1e-4 to 1e5, so
 * quantiles are exact to within 0.14 % (a bin's geometric centre is reported) at any count,
 * in fixed memory; values below 1e-4 count as 0 and above 1e5 as 1e5. Mean and share above
 * the threshold are exact. */
enum { CB_STAT_BINS_PER_OCTAVE = 256, CB_STAT_OCTAVES = 30 };
#define CB_STAT_LOW 1e-4
#define CB_STAT_BINS (1 + CB_STAT_BINS_PER_OCTAVE * CB_STAT_OCTAVES)

typedef struct cb_stat {
    uint64_t count;
    uint64_t above; /* values > threshold */
    double threshold;
    double sum;
    double max;
    uint64_t *bins; /* CB_STAT_BINS; bin 0 holds values below CB_STAT_LOW */
} cb_stat;

bool cb_stat_init(cb_stat *s, double threshold);
void cb_stat_finish(cb_stat *s);
void cb_stat_add(cb_stat *s, double value);
void cb_stat_merge(cb_stat *into, const cb_stat *from);
double cb_stat_mean(const cb_stat *s);
/* The nearest-rank quantile: the smallest value with at least q * count values at or below it
 * (q in (0, 1]); 0 when empty. */
double cb_stat_quantile(const cb_stat *s, double q);
double cb_stat_share_above(const cb_stat *s);

/* ---- which feet the clips plant ----------------------------------------------------------- */

/* The rule lives in the runtime (crowdblend/follow.h), where foot locking uses it too. */
enum { CB_FOOT_LEFT, CB_FOOT_RIGHT, CB_FEET = CB_FOLLOW_FEET };
enum { CB_FEET_MAX_MARKERS = CB_FOLLOW_MAX_FOOT_MARKERS };
typedef cb_follow_clip_feet cb_clip_feet;
#define cb_clip_feet_init cb_follow_clip_feet_init
#define cb_clip_feet_down cb_follow_clip_feet_down

/* ---- the measurement of one run ----------------------------------------------------------- */

enum { CB_MEASURE_SPEED_BANDS = 5, CB_MEASURE_TURN_BANDS = 5 };
/* Lower edges of the bands: trajectory speed in m/s, turn rate in rad/s. */
extern const double cb_measure_speed_edges[CB_MEASURE_SPEED_BANDS];
extern const double cb_measure_turn_edges[CB_MEASURE_TURN_BANDS];

/* Skate above this counts as sliding (the 5 cm/s). */
#define CB_MEASURE_SKATE_THRESHOLD_CMS 5.0
/* The planting clips' weight from which a foot counts as planted. */
#define CB_MEASURE_PLANT_WEIGHT CB_FOLLOW_PLANT_WEIGHT

typedef struct cb_measure_desc {
    const cb_skeleton *skeleton;
    /* The clip each clip slot of the crowd's kind plays (cb_crowd_clip_times order), NULL for
     * a slot whose clip is unknown or has no foot markers. */
    const cb_clip *const *slot_clips;
    uint32_t slot_count;
    /* The joints whose world speed is the skate (the embedded humanoid: "ball_l", "ball_r"). */
    uint32_t ball_joint[CB_FEET];
    float dt_s;     /* the frame time */
    uint32_t slots; /* most agents measured at once (history slots) */
} cb_measure_desc;

typedef struct cb_measure cb_measure;

/* One character's frame, as the caller gathers it after cb_crowd_update. */
typedef struct cb_measure_frame {
    const float *matrices; /* joint_count model-space mat4 (cb_crowd_matrices) */
    float root[16];        /* the root's world mat4 (cb_follow_root_matrix) */
    const float *weights;  /* slot_count clip weights (cb_crowd_weights) */
    const float *times;    /* slot_count normalized clip times (cb_crowd_clip_times) */
    double speed_mps;      /* the trajectory's horizontal speed at this frame */
    double turn_rps;       /* |heading change| / dt over the frame that ends here */
} cb_measure_frame;

/* Creates the measurement; false with a message on stderr on failure. */
cb_measure *cb_measure_create(const cb_measure_desc *desc);
void cb_measure_destroy(cb_measure *m);

/* A history slot for a character that appears (UINT32_MAX when none is free), and its
 * release when the character leaves. A fresh slot has no history: skate needs two frames,
 * pops three. */
uint32_t cb_measure_slot_take(cb_measure *m);
void cb_measure_slot_release(cb_measure *m, uint32_t slot);

/* Adds one character's frame. */
void cb_measure_add(cb_measure *m, uint32_t slot, const cb_measure_frame *frame);

/* The results so far. */
typedef struct cb_measure_result {
    uint64_t character_frames;
    uint64_t planted_samples; /* foot-frames counted as planted (both feet count) */
    const cb_stat *skate;     /* cm/s */
    const cb_stat *skate_by_speed[CB_MEASURE_SPEED_BANDS];
    const cb_stat *skate_by_turn[CB_MEASURE_TURN_BANDS];
    const cb_stat *pops; /* cm */
} cb_measure_result;

cb_measure_result cb_measure_query(const cb_measure *m);

/* Adds from's counts and statistics to into's (for a figure over several files). */
void cb_measure_merge(cb_measure *into, const cb_measure *from);

/* The band of a value given the lower edges. */
int cb_measure_band(const double *edges, int count, double value);

#endif
