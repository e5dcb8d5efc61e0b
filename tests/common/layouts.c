#include "layouts.h"

#include <math.h>

static const double PI = 3.14159265358979323846;

int layout_rings(cb_prng *r, int dirs, int rings, bool centre, bool jitter, float *xy)
{
    int n = 0;
    if (centre) {
        xy[0] = xy[1] = 0.0f;
        n = 1;
    }
    double r1 = 0.8 + 1.2 * cb_prng_double(r), r2 = r1 * (1.8 + 1.2 * cb_prng_double(r));
    double phase = jitter ? cb_prng_double(r) * 2 * PI / dirs : 0.0;
    for (int ring = 0; ring < rings; ++ring) {
        for (int k = 0; k < dirs; ++k) {
            double a = phase + 2 * PI * k / dirs, rad = ring ? r2 : r1;
            if (jitter) {
                a += (cb_prng_double(r) - 0.5) * 2 * (8 * PI / 180);
                rad *= 1 + (cb_prng_double(r) - 0.5) * 0.16;
            }
            xy[2 * n] = (float)(rad * cos(a));
            xy[2 * n + 1] = (float)(rad * sin(a));
            ++n;
        }
    }
    return n;
}

int layout_standard8(float *xy)
{
    xy[0] = xy[1] = 0.0f;
    for (int k = 0; k < 8; ++k) {
        xy[2 + 2 * k] = (float)cos(2 * PI * k / 8);
        xy[3 + 2 * k] = (float)sin(2 * PI * k / 8);
    }
    return 9;
}

int layout_locomotion17(float *xy)
{
    xy[0] = xy[1] = 0.0f;
    for (int ring = 0; ring < 2; ++ring) {
        for (int k = 0; k < 8; ++k) {
            double rad = ring ? 3.5 : 1.4;
            xy[2 + 2 * (8 * ring + k)] = (float)(rad * cos(2 * PI * k / 8));
            xy[3 + 2 * (8 * ring + k)] = (float)(rad * sin(2 * PI * k / 8));
        }
    }
    return 17;
}

int layout_grid(cb_prng *r, int nx, int ny, float *xy)
{
    float xs[CB_SOLVER_MAX_NODES], ys[CB_SOLVER_MAX_NODES];
    float x = -2.0f + (float)cb_prng_double(r), y = -2.0f + (float)cb_prng_double(r);
    for (int i = 0; i < nx; ++i) {
        xs[i] = x;
        x += 0.5f + (float)cb_prng_double(r);
    }
    for (int j = 0; j < ny; ++j) {
        ys[j] = y;
        y += 0.5f + (float)cb_prng_double(r);
    }
    for (int j = 0; j < ny; ++j) {
        for (int i = 0; i < nx; ++i) {
            xy[2 * (j * nx + i)] = xs[i];
            xy[2 * (j * nx + i) + 1] = ys[j];
        }
    }
    return nx * ny;
}

int layout_thresholds(cb_prng *r, int n, bool equal, float *t)
{
    for (int i = 0; i < n; ++i) {
        t[i] = cb_prng_range(r, -2.0f, 2.0f);
    }
    if (equal && n >= 2) {
        t[1] = t[0];
    }
    return n;
}

float layout_radius(const float *xy, int n, int dim)
{
    float m = 0.0f;
    for (int i = 0; i < n * dim; ++i) {
        m = fmaxf(m, fabsf(xy[i]));
    }
    return m;
}
