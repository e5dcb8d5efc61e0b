/* Which feet the clips plant (crowdblend/follow.h): the fixed marker names of the two feet over
 * the graph's one implementation of the rule (graph/runtime.h), which the foot_lock step, foot
 * locking (follow.c) and the skate measurement (src/measure) all use. */
#include <string.h>

#include "crowdblend/follow.h"
#include "crowdblend/graph.h"
#include "graph/runtime.h"

_Static_assert(CB_FOLLOW_MAX_FOOT_MARKERS == CB_GRAPH_FOOT_MAX_MARKERS, "one marker limit");

static const char *const marker_names[CB_FOLLOW_FEET][2] = {
    {"foot_plant_l", "foot_lift_l"},
    {"foot_plant_r", "foot_lift_r"},
};

bool cb_follow_clip_feet_init(cb_follow_clip_feet *feet, const cb_clip *clip)
{
    memset(feet, 0, sizeof *feet);
    for (int f = 0; f < CB_FOLLOW_FEET; ++f) {
        uint32_t n =
            cb_graph_foot_markers(clip, marker_names[f][0], marker_names[f][1], feet->time[f],
                                  feet->plant[f], CB_FOLLOW_MAX_FOOT_MARKERS);
        if (n == UINT32_MAX) {
            feet->count[f] = CB_FOLLOW_MAX_FOOT_MARKERS;
            return false;
        }
        feet->count[f] = n;
    }
    return true;
}

bool cb_follow_clip_feet_down(const cb_follow_clip_feet *feet, int foot, float t)
{
    return cb_graph_foot_down(feet->time[foot], feet->plant[foot], feet->count[foot], t);
}
