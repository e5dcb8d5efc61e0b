/* Looping and foot contacts, both measured on the source (in double, converted to metres). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_impl.h"

/* The root's ground frame as root-motion extraction takes it out (crowdblend/clip.h). */
static void ground_frame(const dxf *root, cb_root_motion mode, double m[3], double *psi)
{
    bool y = mode == CB_ROOT_MOTION_XYZ || mode == CB_ROOT_MOTION_XYZ_YAW;
    bool yaw = mode == CB_ROOT_MOTION_XZ_YAW || mode == CB_ROOT_MOTION_XYZ_YAW;
    bool any = mode != CB_ROOT_MOTION_NONE;
    m[0] = any ? root->t[0] : 0.0;
    m[1] = any && y ? root->t[1] : 0.0;
    m[2] = any ? root->t[2] : 0.0;
    double len = 0.0, h = imp_heading(root->q, &len);
    *psi = yaw && len > 1e-9 ? h : 0.0;
}

/* p relative to the ground frame: R_y(-psi) (p - m). */
static void relative(const double p[3], const double m[3], double psi, double out[3])
{
    double d[3] = {p[0] - m[0], p[1] - m[1], p[2] - m[2]};
    double c = cos(psi), s = sin(psi);
    out[0] = c * d[0] - s * d[2];
    out[1] = d[1];
    out[2] = s * d[0] + c * d[2];
}

double imp_seam(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim,
                cb_root_motion mode, uint32_t root_joint)
{
    size_t n = rig->joint_count;
    dxf *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double worst = INFINITY;
    if (a != NULL && b != NULL) {
        imp_model_pose(scene, rig, anim, 0.0, a);
        imp_model_pose(scene, rig, anim, anim->duration_s, b);
        double ma[3], mb[3], pa, pb;
        ground_frame(&a[root_joint], mode, ma, &pa);
        ground_frame(&b[root_joint], mode, mb, &pb);
        worst = 0.0;
        for (size_t j = 0; j < n; ++j) {
            double ra[3], rb[3];
            relative(a[j].t, ma, pa, ra);
            relative(b[j].t, mb, pb, rb);
            double d = sqrt((ra[0] - rb[0]) * (ra[0] - rb[0]) + (ra[1] - rb[1]) * (ra[1] - rb[1]) +
                            (ra[2] - rb[2]) * (ra[2] - rb[2]));
            worst = fmax(worst, d);
        }
    }
    free(a);
    free(b);
    return worst;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n), 0 for none (not reached today: with finite keys, which the importer
 * checks, and a height of at least 0, the lowest frame is always low). */
static double median(double *v, size_t n)
{
    if (n == 0) {
        return 0.0;
    }
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Contact flags per frame: gaps shorter than `gap` frames are closed, then contacts shorter
 * than `gap` frames dropped (a foot that touches for an instant is not planted). */
static void clean(bool *c, size_t frames, size_t gap)
{
    for (size_t f = 1; f < frames;) {
        if (c[f] || !c[f - 1]) {
            ++f;
            continue;
        }
        size_t e = f;
        while (e < frames && !c[e]) {
            ++e;
        }
        if (e < frames && e - f < gap) {
            for (size_t k = f; k < e; ++k) {
                c[k] = true;
            }
        }
        f = e;
    }
    for (size_t f = 0; f < frames;) {
        if (!c[f]) {
            ++f;
            continue;
        }
        size_t e = f;
        while (e < frames && c[e]) {
            ++e;
        }
        if (e - f < gap && f > 0 && e < frames) {
            for (size_t k = f; k < e; ++k) {
                c[k] = false;
            }
        }
        f = e;
    }
}

/* The ground under the foot at each frame: its lowest point within half a second either side
 * (wrapping for looping clips), so a floor that drifts or slopes, or a rest pose at the start,
 * does not hide the steps. */
static void local_ground(const double *p, size_t frames, double dt, bool looping, double *ground)
{
    size_t half = (size_t)ceil(0.5 / dt);
    for (size_t f = 0; f < frames; ++f) {
        double lo = INFINITY;
        for (size_t k = 0; k <= 2 * half; ++k) {
            long g = (long)f + (long)k - (long)half;
            if (looping) {
                long n = (long)frames - 1; /* the last frame is the first again */
                g = ((g % n) + n) % n;
            } else if (g < 0 || g >= (long)frames) {
                continue;
            }
            lo = fmin(lo, p[(size_t)g * 3 + 1]);
        }
        ground[f] = lo;
    }
}

/* The foot at each of the frames, dt apart: its position (x, y, z), the ground's height under
 * it and its horizontal velocity. */
typedef struct foot_frames {
    double *p, *ground, *vx, *vz;
    size_t count;
    double dt;
} foot_frames;

/* The foot's positions. model is room for the rig's pose. */
static void sample_foot(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim,
                        size_t foot, dxf *model, foot_frames *ff)
{
    for (size_t f = 0; f < ff->count; ++f) {
        imp_model_pose(scene, rig, anim, (double)f * ff->dt, model);
        memcpy(ff->p + f * 3, model[foot].t, 3 * sizeof(double));
    }
}

/* Horizontal velocity by central differences (one-sided at the ends). */
static void foot_velocity(foot_frames *ff)
{
    const double *p = ff->p;
    for (size_t f = 0; f < ff->count; ++f) {
        size_t a = f > 0 ? f - 1 : f, b = f + 1 < ff->count ? f + 1 : f;
        double span = (double)(b - a) * ff->dt;
        ff->vx[f] = (p[b * 3] - p[a * 3]) / span;
        ff->vz[f] = (p[b * 3 + 2] - p[a * 3 + 2]) / span;
    }
}

/* Low: within 3 % of the height h of the ground. */
static bool foot_low(const foot_frames *ff, size_t f, double h)
{
    return ff->p[f * 3 + 1] <= ff->ground[f] + 0.03 * h;
}

/* The ground itself moves under an in-place clip: its velocity g (x, z) is the foot's median
 * velocity while low (zero when the root moves). tmp is room for the frames. */
static void ground_velocity(const foot_frames *ff, double h, double *tmp, double g[2])
{
    const double *v[2] = {ff->vx, ff->vz};
    for (int k = 0; k < 2; ++k) {
        size_t low = 0;
        for (size_t f = 0; f < ff->count; ++f) {
            if (foot_low(ff, f, h)) {
                tmp[low++] = v[k][f];
            }
        }
        g[k] = median(tmp, low);
    }
}

/* The contact intervals of the flags, at most max. A looping clip's last frame is its first
 * again: a contact running into the end continues the one at the start. */
static size_t contact_intervals(const bool *contact, size_t frames, double dt, bool looping,
                                imp_contact *out, size_t max)
{
    size_t count = 0;
    for (size_t f = 0; f < frames && count < max;) {
        if (!contact[f]) {
            ++f;
            continue;
        }
        size_t e = f;
        while (e < frames && contact[e]) {
            ++e;
        }
        /* A clamped clip that ends on a planted foot has no lift: end_s < 0. */
        double end = !looping && e == frames ? -1.0 : (double)(e - 1) * dt;
        out[count++] = (imp_contact){(double)f * dt, end};
        f = e;
    }
    if (looping && count >= 2 && contact[0] && contact[frames - 1]) {
        out[0].start_s = out[count - 1].start_s;
        --count;
    } else if (looping && count == 1 && contact[0] && contact[frames - 1]) {
        count = 0; /* always planted: no plant to mark */
    }
    return count;
}

size_t imp_detect_contacts(const imp_scene *scene, const imp_rig *rig, const imp_anim *anim,
                           size_t foot, bool looping, imp_contact *out, size_t max,
                           double *ground_speed)
{
    *ground_speed = 0.0;
    const double d = anim->duration_s;
    size_t m = (size_t)ceil(d * 120.0);
    m = m < 8 ? 8 : m;
    const size_t frames = m + 1;
    const double dt = d / (double)m, h = rig->height;
    double *p = malloc(frames * 3 * sizeof *p), *vx = malloc(frames * sizeof *vx);
    double *vz = malloc(frames * sizeof *vz), *tmp = malloc(frames * sizeof *tmp);
    double *ground = malloc(frames * sizeof *ground);
    bool *contact = calloc(frames, sizeof *contact);
    dxf *model = malloc(rig->joint_count * sizeof *model);
    size_t count = 0;
    if (p != NULL && vx != NULL && vz != NULL && tmp != NULL && ground != NULL && contact != NULL &&
        model != NULL) {
        foot_frames ff = {p, ground, vx, vz, frames, dt};
        sample_foot(scene, rig, anim, foot, model, &ff);
        local_ground(p, frames, dt, looping, ground);
        foot_velocity(&ff);
        double g[2];
        ground_velocity(&ff, h, tmp, g);
        *ground_speed = sqrt(g[0] * g[0] + g[1] * g[1]);
        /* Slow: less than one height per second over the ground. */
        for (size_t f = 0; f < frames; ++f) {
            double rx = vx[f] - g[0], rz = vz[f] - g[1];
            contact[f] = foot_low(&ff, f, h) && sqrt(rx * rx + rz * rz) <= h;
        }
        clean(contact, frames, (size_t)ceil(0.05 / dt));
        count = contact_intervals(contact, frames, dt, looping, out, max);
    }
    free(p);
    free(vx);
    free(vz);
    free(tmp);
    free(ground);
    free(contact);
    free(model);
    return count;
}
