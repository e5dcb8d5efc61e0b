/* Which feet the clips plant (crowdblend/follow.h): the one implementation of the rule that
 * foot locking (follow.c) and the skate measurement (src/measure) both use. */
#include <string.h>

#include "crowdblend/follow.h"

static const char *const marker_names[CB_FOLLOW_FEET][2] = {
    {"foot_plant_l", "foot_lift_l"},
    {"foot_plant_r", "foot_lift_r"},
};

bool cb_follow_clip_feet_init(cb_follow_clip_feet *feet, const cb_clip *clip)
{
    memset(feet, 0, sizeof *feet);
    size_t n = clip != NULL ? cb_clip_marker_count(clip) : 0;
    for (int f = 0; f < CB_FOLLOW_FEET; ++f) {
        uint32_t plant = cb_name_hash(marker_names[f][0]);
        uint32_t lift = cb_name_hash(marker_names[f][1]);
        bool any_plant = false, any_lift = false;
        for (size_t k = 0; k < n; ++k) {
            cb_clip_marker mk;
            cb_clip_query_marker(clip, k, &mk);
            bool is_plant = mk.name_hash == plant && strcmp(mk.name, marker_names[f][0]) == 0;
            bool is_lift = mk.name_hash == lift && strcmp(mk.name, marker_names[f][1]) == 0;
            if (!is_plant && !is_lift) {
                continue;
            }
            if (feet->count[f] == CB_FOLLOW_MAX_FOOT_MARKERS) {
                return false;
            }
            /* Markers come sorted by time (crowdblend/clip.h). */
            feet->time[f][feet->count[f]] = mk.time;
            feet->plant[f][feet->count[f]++] = is_plant;
            any_plant |= is_plant;
            any_lift |= is_lift;
        }
        if (!any_plant || !any_lift) {
            feet->count[f] = 0; /* a foot that never lifts or never plants says nothing */
        }
    }
    return true;
}

bool cb_follow_clip_feet_down(const cb_follow_clip_feet *feet, int foot, float t)
{
    uint32_t n = feet->count[foot];
    if (n == 0) {
        return false;
    }
    /* The last marker at or before t; before the first one, the last of the cycle. */
    uint32_t last = n - 1;
    for (uint32_t k = 0; k < n && feet->time[foot][k] <= t; ++k) {
        last = k;
    }
    return feet->plant[foot][last];
}
