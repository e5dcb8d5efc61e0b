/* Which feet the clips plant: the one implementation of the rule that foot locking (the
 * graph's foot_lock step, runtime/foot_lock.c), the follower (crowdblend/follow.h
 * cb_follow_clip_feet_*) and the skate measurement (src/measure, through the follower's
 * functions) use. A foot is down at normalized time t when the last of its plant and lift
 * markers at or before t, cyclically, is a plant. */
#ifndef CROWDBLEND_GRAPH_FEET_H
#define CROWDBLEND_GRAPH_FEET_H

#include "crowdblend/clip.h"

/* A clip's markers named `plant` or `lift` (clip may be NULL: none), in time order, into
 * time[] and is_plant[] (room for max); returns their count, 0 when the clip lacks either
 * name (a foot that never lifts or never plants says nothing), or UINT32_MAX when there are
 * more than max. */
uint32_t cb_graph_foot_markers(const cb_clip *clip, const char *plant, const char *lift,
                               float *time, bool *is_plant, uint32_t max);

/* Whether the markers (n of them, from cb_graph_foot_markers) hold the foot down at normalized
 * time t. n == 0: never. */
static inline bool cb_graph_foot_down(const float *time, const bool *is_plant, uint32_t n, float t)
{
    if (n == 0) {
        return false;
    }
    /* The last marker at or before t; before the first one, the last of the cycle. */
    uint32_t last = n - 1;
    for (uint32_t k = 0; k < n && time[k] <= t; ++k) {
        last = k;
    }
    return is_plant[last];
}

#endif
