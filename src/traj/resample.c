/* From samples to any time: a cubic Hermite spline per agent (docs/trajectories.md).
 *
 * Why Hermite with these tangents: simulators write positions at 25 Hz, every 0.5 s or 1 s, or
 * at the ends of straight steps (Vadere); characters need positions and velocities at 60 Hz,
 * and the velocity sets the heading, so it must be continuous. A cubic Hermite segment between
 * samples i and i + 1 passes through both, and sharing each sample's tangent m_i between its
 * two segments makes the curve C1: position and velocity continuous everywhere.
 *
 * The tangent at an interior sample is the derivative of the parabola through it and its two
 * neighbours, m = (h1 d0 + h0 d1) / (h0 + h1), with d0, d1 the chord velocities of the
 * segments before and after and h0, h1 their durations: exact for uniformly accelerated motion,
 * second-order accurate otherwise. Alone it overshoots at stops: an agent that arrives and
 * stands (d1 = 0) would pass its stopping point and walk back, so its heading would flip by
 * 180 degrees while it stands. The tangent's length is therefore limited to 3 min(|d0|, |d1|),
 * the vector form of Fritsch and Carlson's bound for monotone cubic interpolation (Fritsch &
 * Carlson, "Monotone piecewise cubic interpolation", SIAM J. Numer. Anal. 17(2), 1980): a
 * sample next to a stand gets a zero tangent, the curve stops exactly there, and a segment
 * whose ends move the same way along the chord never runs backwards along it. The limit keeps
 * the direction, so the curve is rotation invariant (unlike per-axis monotone schemes). End
 * samples take their segment's chord velocity. */
#include <math.h>

#include "traj/traj_impl.h"

static double len3(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

void cb_traj_compute_tangents(cb_traj *traj)
{
    for (uint32_t a = 0; a < traj->agent_count; ++a) {
        const cb_traj_agent *ag = &traj->agents[a];
        const double *t = traj->t + ag->first;
        const double *p = traj->p + 3 * (size_t)ag->first;
        double *m = traj->m + 3 * (size_t)ag->first;
        uint32_t n = ag->count;
        if (n == 1) {
            m[0] = m[1] = m[2] = 0.0;
            continue;
        }
        double d_prev[3] = {0, 0, 0}, h_prev = 0.0;
        for (uint32_t i = 0; i < n; ++i) {
            double d[3] = {0, 0, 0}, h = 0.0;
            if (i + 1 < n) {
                h = t[i + 1] - t[i];
                for (int k = 0; k < 3; ++k) {
                    d[k] = (p[3 * (i + 1) + k] - p[3 * i + k]) / h;
                }
            }
            double *mi = &m[3 * i];
            if (i == 0 || i + 1 == n) {
                const double *chord = i == 0 ? d : d_prev;
                mi[0] = chord[0];
                mi[1] = chord[1];
                mi[2] = chord[2];
            } else {
                for (int k = 0; k < 3; ++k) {
                    mi[k] = (h * d_prev[k] + h_prev * d[k]) / (h_prev + h);
                }
                double limit = 3.0 * fmin(len3(d_prev), len3(d)), len = len3(mi);
                if (len > limit) {
                    double s = limit > 0.0 ? limit / len : 0.0;
                    mi[0] *= s;
                    mi[1] *= s;
                    mi[2] *= s;
                }
            }
            d_prev[0] = d[0];
            d_prev[1] = d[1];
            d_prev[2] = d[2];
            h_prev = h;
        }
    }
}

void cb_traj_eval(const cb_traj *traj, uint32_t agent, double time, double pos[3], double vel[3])
{
    const cb_traj_agent *ag = &traj->agents[agent];
    const double *t = traj->t + ag->first;
    const double *p = traj->p + 3 * (size_t)ag->first;
    const double *m = traj->m + 3 * (size_t)ag->first;
    uint32_t n = ag->count;
    if (n == 1 || !(time > t[0]) || time >= t[n - 1]) {
        /* At or outside an end (or a single sample): the end position. At the end sample
         * itself the velocity is its tangent, which the curve arrives with; beyond, the agent
         * is not there, and standing is the honest guess. */
        uint32_t i = n > 1 && time >= t[n - 1] ? n - 1 : 0;
        bool on_sample = n > 1 && time == t[i];
        for (int k = 0; k < 3; ++k) {
            pos[k] = p[3 * i + k];
            if (vel != NULL) {
                vel[k] = on_sample ? m[3 * i + k] : 0.0;
            }
        }
        return;
    }
    /* The segment [t[lo], t[lo + 1]) holding time. */
    uint32_t lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t[mid] <= time) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    double h = t[lo + 1] - t[lo], s = (time - t[lo]) / h, s2 = s * s, s3 = s2 * s;
    /* The cubic Hermite basis and its derivative with respect to s. */
    double h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
    double g00 = 6 * s2 - 6 * s, g10 = 3 * s2 - 4 * s + 1, g01 = -6 * s2 + 6 * s,
           g11 = 3 * s2 - 2 * s;
    const double *p0 = &p[3 * lo], *p1 = &p[3 * lo + 3], *m0 = &m[3 * lo], *m1 = &m[3 * lo + 3];
    for (int k = 0; k < 3; ++k) {
        /* Written from p0 (h00 = 1 - h01): a standing segment (p1 = p0, zero tangents) gives
         * p0 exactly, so a standing agent does not tremble by rounding. */
        pos[k] = p0[k] + h01 * (p1[k] - p0[k]) + h * (h10 * m0[k] + h11 * m1[k]);
        if (vel != NULL) {
            vel[k] = (g00 * p0[k] + g01 * p1[k]) / h + g10 * m0[k] + g11 * m1[k];
        }
    }
}
