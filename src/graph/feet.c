/* Which feet the clips plant (the rule, declared in graph/runtime.h): reading a foot's markers from
 * a clip. */
#include <string.h>

#include "crowdblend/base.h"
#include "graph/runtime.h"

uint32_t cb_graph_foot_markers(const cb_clip *clip, const char *plant, const char *lift,
                               float *time, bool *is_plant, uint32_t max)
{
    size_t n = clip != NULL ? cb_clip_marker_count(clip) : 0;
    uint32_t plant_hash = cb_name_hash(plant), lift_hash = cb_name_hash(lift);
    uint32_t count = 0;
    bool any_plant = false, any_lift = false;
    for (size_t k = 0; k < n; ++k) {
        cb_clip_marker mk;
        cb_clip_query_marker(clip, k, &mk);
        bool p = mk.name_hash == plant_hash && strcmp(mk.name, plant) == 0;
        bool l = mk.name_hash == lift_hash && strcmp(mk.name, lift) == 0;
        if (!p && !l) {
            continue;
        }
        if (count == max) {
            return UINT32_MAX;
        }
        /* Markers come sorted by time (crowdblend/clip.h). */
        time[count] = mk.time;
        is_plant[count++] = p;
        any_plant |= p;
        any_lift |= l;
    }
    return any_plant && any_lift ? count : 0;
}
