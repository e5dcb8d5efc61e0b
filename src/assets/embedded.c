/* The embedded default data: a procedural 64-joint humanoid and its locomotion set
 * (crowdblend/embedded.h).
 *
 * Every clip is generated as keyframe tracks at the clip's frame times and goes through the
 * ordinary clip builder, so the embedded data exercises the same path as imported data.
 *
 * How the gaits are made (all in the root's frame, which moves at the clip's velocity v):
 *  - Each foot follows a periodic path in phase psi (left: the clip phase, right: half a cycle
 *    later). During stance (psi < beta) its ball joint moves at -v, so in the world it stands
 *    still; late in stance the heel rises and the foot rolls over the planted ball. During swing
 *    the ball goes back to the landing point along a cubic Hermite curve whose end tangents match
 *    the stance velocity (no jerk at lift-off or touch-down), lifted by lift * sin^2(pi s).
 *  - The legs are solved by analytic two-bone IK from the hips to the ankles, knees pointing
 *    forward: the feet are where the path says, exactly, at every frame.
 *  - The pelvis height is a smooth minimum (log-sum-exp) of a nominal height and, per leg, the
 *    highest pelvis from which that leg still reaches its ankle with a slightly bent knee. This
 *    makes the pelvis dip during double support as a walking body does, and never lets a leg
 *    over-stretch. Running adds a dip at mid-stance.
 *  - Pelvis sway, roll and yaw, counter-rotating shoulders, counter-swinging arms with elbows
 *    that bend on the forward swing, a stabilized head, curled fingers.
 * Walk and run clips put the left foot down at phase 0 and the right at 0.5, in every
 * direction, so they blend in sync. tests/test_embedded.c checks these properties on the
 * sampled, blended clips. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "base/scalar_math.h"
#include "crowdblend/embedded.h"

/* ------------------------------------------------------------------------------------------ */
/* The skeleton                                                                               */

enum {
    J_ROOT,
    J_PELVIS,
    J_SPINE1,
    J_SPINE2,
    J_SPINE3,
    J_NECK,
    J_HEAD,
    J_JAW,
    J_EYE_L,
    J_EYE_R,
    J_ARM_L, /* 21 joints per arm, see arm_joints */
    J_ARM_R = J_ARM_L + 21,
    J_LEG_L = J_ARM_R + 21, /* 6 joints per leg, see leg_joints */
    J_LEG_R = J_LEG_L + 6,
    J_COUNT = J_LEG_R + 6,
};
_Static_assert(J_COUNT == 64, "the embedded humanoid has 64 joints");

/* Offsets inside an arm and a leg. */
enum { A_CLAVICLE, A_UPPER, A_UPPER_TWIST, A_LOWER, A_LOWER_TWIST, A_HAND, A_FINGERS };
enum { L_THIGH, L_THIGH_TWIST, L_CALF, L_CALF_TWIST, L_FOOT, L_BALL };

typedef struct joint_def {
    const char *name;
    int parent; /* offset-relative for limb tables, see build_skeleton */
    double x, y, z;
} joint_def;

/* Core joints: parents are absolute indices. */
/* clang-format off */
static const joint_def core_joints[] = {
    {"root", -1, 0.0, 0.0, 0.0},
    {"pelvis", J_ROOT, 0.0, 0.98, 0.0},
    {"spine_01", J_PELVIS, 0.0, 0.10, -0.01},
    {"spine_02", J_SPINE1, 0.0, 0.12, 0.0},
    {"spine_03", J_SPINE2, 0.0, 0.13, 0.01},
    {"neck", J_SPINE3, 0.0, 0.15, 0.0},
    {"head", J_NECK, 0.0, 0.09, 0.02},
    {"jaw", J_HEAD, 0.0, -0.02, 0.05},
    {"eye_l", J_HEAD, 0.032, 0.075, 0.085},
    {"eye_r", J_HEAD, -0.032, 0.075, 0.085},
};
/* clang-format on */

/* A left arm hanging down, palm towards the body (-X); parents relative to the arm's first
 * joint, -1 meaning spine_03. The right arm mirrors x. */
/* clang-format off */
static const joint_def arm_joints[21] = {
    {"clavicle", -1, 0.03, 0.10, 0.02},
    {"upperarm", A_CLAVICLE, 0.15, 0.0, -0.02},
    {"upperarm_twist", A_UPPER, 0.0, -0.14, 0.0},
    {"lowerarm", A_UPPER, 0.0, -0.28, 0.0},
    {"lowerarm_twist", A_LOWER, 0.0, -0.13, 0.0},
    {"hand", A_LOWER, 0.0, -0.26, 0.0},
    {"thumb_01", A_HAND, -0.01, -0.025, 0.03},
    {"thumb_02", A_FINGERS + 0, 0.0, -0.035, 0.012},
    {"thumb_03", A_FINGERS + 1, 0.0, -0.03, 0.008},
    {"index_01", A_HAND, -0.005, -0.095, 0.03},
    {"index_02", A_FINGERS + 3, 0.0, -0.04, 0.0},
    {"index_03", A_FINGERS + 4, 0.0, -0.025, 0.0},
    {"middle_01", A_HAND, -0.005, -0.10, 0.01},
    {"middle_02", A_FINGERS + 6, 0.0, -0.045, 0.0},
    {"middle_03", A_FINGERS + 7, 0.0, -0.028, 0.0},
    {"ring_01", A_HAND, -0.005, -0.095, -0.01},
    {"ring_02", A_FINGERS + 9, 0.0, -0.04, 0.0},
    {"ring_03", A_FINGERS + 10, 0.0, -0.025, 0.0},
    {"pinky_01", A_HAND, -0.005, -0.085, -0.03},
    {"pinky_02", A_FINGERS + 12, 0.0, -0.03, 0.0},
    {"pinky_03", A_FINGERS + 13, 0.0, -0.02, 0.0},
};
/* clang-format on */

/* A left leg, straight, foot flat: hip 0.93 m, knee 0.50 m, ankle 0.07 m above the ground, the
 * ball 0.02 m up and 0.13 m ahead of the ankle. Parents relative, -1 meaning the pelvis. */
/* clang-format off */
static const joint_def leg_joints[6] = {
    {"thigh", -1, 0.09, -0.05, 0.0},
    {"thigh_twist", L_THIGH, 0.0, -0.21, 0.0},
    {"calf", L_THIGH, 0.0, -0.43, 0.0},
    {"calf_twist", L_CALF, 0.0, -0.21, 0.0},
    {"foot", L_CALF, 0.0, -0.43, 0.0},
    {"ball", L_FOOT, 0.0, -0.05, 0.13},
};
/* clang-format on */

#define THIGH_LEN 0.43
#define CALF_LEN 0.43
#define BALL_HEIGHT 0.02
/* The ball relative to the ankle with the foot flat. */
static const cb_dvec3 ankle_to_ball = {0.0, -0.05, 0.13};

typedef struct humanoid {
    char names[J_COUNT][32];
    const char *name_ptrs[J_COUNT];
    int32_t parents[J_COUNT];
    cb_xform rest[J_COUNT];
    cb_dvec3 offset[J_COUNT]; /* local rest translations in double */
} humanoid;

static void define_joint(humanoid *h, int j, const char *name, const char *suffix, int parent,
                         double x, double y, double z)
{
    snprintf(h->names[j], sizeof h->names[j], "%s%s", name, suffix);
    h->name_ptrs[j] = h->names[j];
    h->parents[j] = parent;
    h->offset[j] = cb_dv(x, y, z);
    h->rest[j] = cb_xform_identity();
    h->rest[j].translation[0] = (float)x;
    h->rest[j].translation[1] = (float)y;
    h->rest[j].translation[2] = (float)z;
}

static void build_humanoid(humanoid *h)
{
    for (int j = 0; j < (int)(sizeof core_joints / sizeof core_joints[0]); ++j) {
        const joint_def *d = &core_joints[j];
        define_joint(h, j, d->name, "", d->parent, d->x, d->y, d->z);
    }
    for (int side = 0; side < 2; ++side) {
        const char *suffix = side == 0 ? "_l" : "_r";
        double mirror = side == 0 ? 1.0 : -1.0;
        int arm = side == 0 ? J_ARM_L : J_ARM_R, leg = side == 0 ? J_LEG_L : J_LEG_R;
        for (int k = 0; k < 21; ++k) {
            const joint_def *d = &arm_joints[k];
            define_joint(h, arm + k, d->name, suffix, d->parent < 0 ? J_SPINE3 : arm + d->parent,
                         mirror * d->x, d->y, d->z);
        }
        for (int k = 0; k < 6; ++k) {
            const joint_def *d = &leg_joints[k];
            define_joint(h, leg + k, d->name, suffix, d->parent < 0 ? J_PELVIS : leg + d->parent,
                         mirror * d->x, d->y, d->z);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Poses                                                                                      */

/* One generated frame: local rotations of every joint, the pelvis and root translations. */
typedef struct gen_pose {
    cb_dquat q[J_COUNT];
    cb_dvec3 pelvis;
    cb_dvec3 root;
} gen_pose;

static cb_dquat rot_x(double a)
{
    return cb_dq_axis_angle(cb_dv(1, 0, 0), a);
}

static cb_dquat rot_y(double a)
{
    return cb_dq_axis_angle(cb_dv(0, 1, 0), a);
}

static cb_dquat rot_z(double a)
{
    return cb_dq_axis_angle(cb_dv(0, 0, 1), a);
}

static double deg(double d)
{
    return d * (CB_DPI / 180.0);
}

static double sq(double x)
{
    return x * x;
}

static void pose_rest(gen_pose *p)
{
    for (int j = 0; j < J_COUNT; ++j) {
        p->q[j] = cb_dq_identity();
    }
    p->pelvis = cb_dv(core_joints[J_PELVIS].x, core_joints[J_PELVIS].y, core_joints[J_PELVIS].z);
    p->root = cb_dv(0, 0, 0);
}

/* Rotation whose columns are the given orthonormal axes (Shepperd's method: take the largest
 * of the four candidate components, so no division by a small number). */
static cb_dquat quat_from_axes(cb_dvec3 x, cb_dvec3 y, cb_dvec3 z)
{
    double m00 = x.x, m10 = x.y, m20 = x.z, m01 = y.x, m11 = y.y, m21 = y.z;
    double m02 = z.x, m12 = z.y, m22 = z.z;
    double tr = m00 + m11 + m22;
    cb_dquat q;
    if (tr > 0.0) {
        double s = 2.0 * sqrt(tr + 1.0);
        q = (cb_dquat){(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, 0.25 * s};
    } else if (m00 > m11 && m00 > m22) {
        double s = 2.0 * sqrt(1.0 + m00 - m11 - m22);
        q = (cb_dquat){0.25 * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s};
    } else if (m11 > m22) {
        double s = 2.0 * sqrt(1.0 + m11 - m00 - m22);
        q = (cb_dquat){(m01 + m10) / s, 0.25 * s, (m12 + m21) / s, (m02 - m20) / s};
    } else {
        double s = 2.0 * sqrt(1.0 + m22 - m00 - m11);
        q = (cb_dquat){(m02 + m20) / s, (m12 + m21) / s, 0.25 * s, (m10 - m01) / s};
    }
    return cb_dq_normalize(q);
}

/* Model rotation of a bone whose rest direction is -Y, pointing from `from` to `to`, with its
 * local +Z turned towards `pole` (so that a knee hinges about the bone's local X). */
static cb_dquat bone_rotation(cb_dvec3 from, cb_dvec3 to, cb_dvec3 pole)
{
    cb_dvec3 y = cb_dv_normalize(cb_dv_sub(from, to));
    cb_dvec3 z = cb_dv_normalize(cb_dv_sub(pole, cb_dv_scale(y, cb_dv_dot(pole, y))));
    cb_dvec3 x = cb_dv_cross(y, z);
    return quat_from_axes(x, y, z);
}

/* Two-bone IK: thigh and calf model rotations that put the ankle at `ankle` from the hip, the
 * knee bending towards `pole`. Targets out of reach are pulled in to 99.99 % of the leg. */
static void leg_ik(cb_dvec3 hip, cb_dvec3 ankle, cb_dvec3 pole, cb_dquat *thigh, cb_dquat *calf)
{
    cb_dvec3 d = cb_dv_sub(ankle, hip);
    double dist = cb_dv_len(d);
    double max_d = 0.9999 * (THIGH_LEN + CALF_LEN), min_d = 0.05;
    dist = dist > max_d ? max_d : dist < min_d ? min_d : dist;
    cb_dvec3 dn = cb_dv_normalize(d);
    cb_dvec3 pn = cb_dv_normalize(cb_dv_sub(pole, cb_dv_scale(dn, cb_dv_dot(pole, dn))));
    double ca =
        (THIGH_LEN * THIGH_LEN + dist * dist - CALF_LEN * CALF_LEN) / (2 * THIGH_LEN * dist);
    double sa = sqrt(1.0 - ca * ca);
    cb_dvec3 knee =
        cb_dv_add(hip, cb_dv_scale(cb_dv_add(cb_dv_scale(dn, ca), cb_dv_scale(pn, sa)), THIGH_LEN));
    cb_dvec3 reached = cb_dv_add(hip, cb_dv_scale(dn, dist));
    *thigh = bone_rotation(hip, knee, pole);
    *calf = bone_rotation(knee, reached, pole);
}

/* Model rotations of the chain root .. j, from a pose's local rotations. */
static cb_dquat model_rotation(const humanoid *h, const gen_pose *p, int j)
{
    cb_dquat q = p->q[j];
    for (int k = h->parents[j]; k >= 0; k = h->parents[k]) {
        q = cb_dq_mul(p->q[k], q);
    }
    return q;
}

/* Where a foot is: its ball (root frame), its pitch (heel up > 0) and the toe bend. */
typedef struct foot_state {
    cb_dvec3 ball;
    double pitch, toe;
} foot_state;

static cb_dvec3 ankle_of(foot_state f)
{
    return cb_dv_sub(f.ball, cb_dq_rotate(rot_x(f.pitch), ankle_to_ball));
}

/* Solves both legs for given foot states, with the pelvis already set in p. */
static void solve_legs(const humanoid *h, gen_pose *p, const foot_state feet[2])
{
    cb_dquat pelvis = p->q[J_PELVIS];
    for (int side = 0; side < 2; ++side) {
        int leg = side == 0 ? J_LEG_L : J_LEG_R;
        double out = side == 0 ? 1.0 : -1.0;
        cb_dvec3 hip = cb_dv_add(p->pelvis, cb_dq_rotate(pelvis, h->offset[leg + L_THIGH]));
        /* Knees forward and a little out. */
        cb_dvec3 pole = cb_dv_normalize(cb_dv(0.12 * out, 0.0, 1.0));
        cb_dquat thigh, calf;
        leg_ik(hip, ankle_of(feet[side]), pole, &thigh, &calf);
        cb_dquat foot = rot_x(feet[side].pitch);
        p->q[leg + L_THIGH] = cb_dq_mul(cb_dq_conj(pelvis), thigh);
        p->q[leg + L_CALF] = cb_dq_mul(cb_dq_conj(thigh), calf);
        p->q[leg + L_FOOT] = cb_dq_mul(cb_dq_conj(calf), foot);
        p->q[leg + L_BALL] = rot_x(-feet[side].toe);
    }
}

/* The highest pelvis from which a leg reaches its ankle with the knee at most 98.5 % straight. */
static double pelvis_reach(const humanoid *h, cb_dquat pelvis_q, cb_dvec3 pelvis_xz, int side,
                           cb_dvec3 ankle)
{
    int leg = side == 0 ? J_LEG_L : J_LEG_R;
    cb_dvec3 off = cb_dq_rotate(pelvis_q, h->offset[leg + L_THIGH]);
    double dx = pelvis_xz.x + off.x - ankle.x, dz = pelvis_xz.z + off.z - ankle.z;
    double r = 0.985 * (THIGH_LEN + CALF_LEN);
    double horiz2 = dx * dx + dz * dz;
    if (horiz2 >= r * r) {
        return ankle.y - off.y; /* cannot reach: as low as the ankle (never hit by the data) */
    }
    return ankle.y - off.y + sqrt(r * r - horiz2);
}

/* Smooth minimum of three values, below each of them by at most k log 3. */
static double smooth_min3(double a, double b, double c, double k)
{
    double m = fmin(a, fmin(b, c));
    return m - k * log(exp(-(a - m) / k) + exp(-(b - m) / k) + exp(-(c - m) / k));
}

/* Head and neck turned so that the head keeps facing +Z, pitched by `nod`. */
static void stabilize_head(const humanoid *h, gen_pose *p, double nod, double yaw)
{
    cb_dquat chest = model_rotation(h, p, J_SPINE3);
    cb_dquat target = cb_dq_mul(rot_y(yaw), rot_x(nod));
    cb_dquat rel = cb_dq_mul(cb_dq_conj(chest), target);
    p->q[J_NECK] = cb_dq_slerp(cb_dq_identity(), rel, 0.5);
    p->q[J_HEAD] = cb_dq_mul(cb_dq_conj(cb_dq_mul(chest, p->q[J_NECK])), target);
}

static void curl_fingers(gen_pose *p, int arm, double side, double curl)
{
    for (int f = 0; f < 5; ++f) {
        for (int k = 0; k < 3; ++k) {
            double c = f == 0 ? 0.4 * curl : (k == 1 ? 1.2 * curl : curl);
            p->q[arm + A_FINGERS + 3 * f + k] = rot_z(-side * c);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Locomotion                                                                                 */

typedef struct gait {
    const char *prefix;
    double speed;      /* m/s */
    double period;     /* s, forward; sideways steps are quicker, see period_for */
    double stance;     /* fraction of the cycle a foot is down */
    double heel_off;   /* fraction of the stance when the heel starts to rise */
    double toe_pitch;  /* rad, foot pitch at toe-off (forward gait) */
    double lift;       /* m, swing height of the ball */
    double pelvis;     /* m, nominal pelvis height */
    double dip;        /* m, extra pelvis dip at mid-stance (running) */
    double lean;       /* rad, forward lean of the pelvis */
    double spine_lean; /* rad, per spine joint */
    double pelvis_yaw, pelvis_roll, sway;
    double arm_swing, arm_abduct, elbow, elbow_swing, finger_curl, head_nod;
} gait;

static const gait walk_gait = {
    .prefix = "walk",
    .speed = 1.4,
    .period = 1.0,
    .stance = 0.6,
    .heel_off = 0.55,
    .toe_pitch = 0.8,
    .lift = 0.07,
    .pelvis = 0.965,
    .dip = 0.0,
    .lean = 0.04,
    .spine_lean = 0.01,
    .pelvis_yaw = 0.09,
    .pelvis_roll = 0.05,
    .sway = 0.025,
    .arm_swing = 0.35,
    .arm_abduct = 0.12,
    .elbow = 0.25,
    .elbow_swing = 0.25,
    .finger_curl = 0.25,
    .head_nod = 0.05,
};

static const gait run_gait = {
    .prefix = "run",
    .speed = 3.5,
    .period = 0.7,
    .stance = 0.33,
    .heel_off = 0.45,
    .toe_pitch = 0.7,
    .lift = 0.16,
    .pelvis = 0.95,
    .dip = 0.035,
    .lean = 0.12,
    .spine_lean = 0.03,
    .pelvis_yaw = 0.12,
    .pelvis_roll = 0.06,
    .sway = 0.01,
    .arm_swing = 0.6,
    .arm_abduct = 0.18,
    .elbow = 1.45,
    .elbow_swing = 0.2,
    .finger_curl = 0.8,
    .head_nod = 0.08,
};

/* The eight directions, counter-clockwise from forward seen from above: +X is left. */
/* clang-format off */
static const struct {
    const char *suffix;
    double angle; /* radians from +Z towards +X */
} directions[8] = {
    {"f", 0.0},         {"fl", 0.25 * CB_DPI}, {"l", 0.5 * CB_DPI},  {"bl", 0.75 * CB_DPI},
    {"b", CB_DPI},      {"br", -0.75 * CB_DPI}, {"r", -0.5 * CB_DPI}, {"fr", -0.25 * CB_DPI},
};
/* clang-format on */

/* Sideways steps at the same speed are shorter and quicker. */
static double period_for(const gait *g, cb_dvec3 dir)
{
    return g->period * (1.0 - 0.2 * fabs(dir.x));
}

/* A foot at its own phase psi in [0, 1). */
static foot_state foot_at(const gait *g, cb_dvec3 dir, double period, int side, double psi)
{
    double out = side == 0 ? 1.0 : -1.0;
    double beta = g->stance;
    double stride = g->speed * beta * period;    /* ground covered during one stance */
    double land = 0.5 - 0.12 * fmax(dir.z, 0.0); /* share of it ahead of the neutral point */
    double pitch_scale = fmin(fmax(0.5 + 0.5 * dir.z, 0.0), 1.0); /* heel roll going forward */
    double theta = pitch_scale * g->toe_pitch;
    /* The neutral ball: under the hip, feet apart; when stepping sideways the trailing foot sets
     * down in front and the leading one behind, so the legs pass each other. */
    double cross = dir.z < -1e-9 ? -1.0 : 1.0;
    cb_dvec3 neutral = cb_dv(0.10 * out, BALL_HEIGHT, 0.13 - 0.10 * out * dir.x * cross);
    foot_state f;
    if (psi < beta) {
        double u = psi / beta;
        f.ball = cb_dv_add(neutral, cb_dv_scale(dir, stride * (land - u)));
        f.pitch = theta * cb_dsmoothstep((u - g->heel_off) / (1.0 - g->heel_off));
        f.toe = f.pitch;
        return f;
    }
    double s = (psi - beta) / (1.0 - beta);
    cb_dvec3 p0 = cb_dv_add(neutral, cb_dv_scale(dir, -stride * (1.0 - land)));
    cb_dvec3 p1 = cb_dv_add(neutral, cb_dv_scale(dir, stride * land));
    cb_dvec3 m = cb_dv_scale(dir, -g->speed * (1.0 - beta) * period); /* stance velocity */
    double s2 = s * s, s3 = s2 * s;
    double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
    f.ball = cb_dv_add(cb_dv_add(cb_dv_scale(p0, h00), cb_dv_scale(m, h10)),
                       cb_dv_add(cb_dv_scale(p1, h01), cb_dv_scale(m, h11)));
    /* The foot rises early in the swing (the knee folds) and comes down slowly: the arc peaks
     * at s = 0.5^(1 / 0.6) = 0.31. */
    double arc = sq(sin(CB_DPI * pow(s, 0.6)));
    f.ball.y = BALL_HEIGHT + g->lift * arc;
    f.ball.x += 0.025 * out * fabs(dir.z) * sin(CB_DPI * s); /* swing a little outwards */
    f.pitch = theta * (1.0 - cb_dsmoothstep(s / 0.45)) - 0.2 * arc;
    f.toe = theta * (1.0 - cb_dsmoothstep(s / 0.3));
    return f;
}

static void locomotion_pose(const humanoid *h, const gait *g, cb_dvec3 dir, double period,
                            double phase, gen_pose *p)
{
    pose_rest(p);
    const double two_pi = 2.0 * CB_DPI;
    double c = cos(two_pi * phase), s = sin(two_pi * phase);
    p->root = cb_dv_scale(dir, g->speed * period * phase);

    foot_state feet[2] = {foot_at(g, dir, period, 0, phase),
                          foot_at(g, dir, period, 1, fmod(phase + 0.5, 1.0))};

    /* Pelvis: lean into the motion, yaw with the leading leg (left leg leads at phase 0 when
     * walking forward, hence the left hip forward: negative yaw), roll and sway over the stance
     * leg. */
    cb_dvec3 lean_axis = cb_dv_normalize(cb_dv(dir.z, 0.0, -dir.x));
    cb_dquat pelvis_q =
        cb_dq_mul(cb_dq_axis_angle(lean_axis, g->lean),
                  cb_dq_mul(rot_y(-g->pelvis_yaw * dir.z * c), rot_z(g->pelvis_roll * s)));
    cb_dvec3 pelvis_xz = cb_dv(g->sway * s, 0.0, 0.0);
    double nominal =
        g->pelvis - g->dip * 0.5 * (1.0 + cos(2.0 * two_pi * (phase - 0.5 * g->stance)));
    double reach_l = pelvis_reach(h, pelvis_q, pelvis_xz, 0, ankle_of(feet[0]));
    double reach_r = pelvis_reach(h, pelvis_q, pelvis_xz, 1, ankle_of(feet[1]));
    p->pelvis = cb_dv(pelvis_xz.x, smooth_min3(nominal, reach_l, reach_r, 0.008), pelvis_xz.z);
    p->q[J_PELVIS] = pelvis_q;
    solve_legs(h, p, feet);

    /* Spine: more lean, counter-rotate the pelvis yaw and roll (shoulders turn against hips). */
    double yaw = -g->pelvis_yaw * dir.z * c, roll = g->pelvis_roll * s;
    for (int j = J_SPINE1; j <= J_SPINE3; ++j) {
        p->q[j] = cb_dq_mul(cb_dq_axis_angle(lean_axis, g->spine_lean),
                            cb_dq_mul(rot_y(-0.55 * yaw), rot_z(-0.4 * roll)));
    }
    stabilize_head(h, p, g->head_nod * (0.5 + 0.5 * cos(2.0 * two_pi * phase)), 0.0);

    /* Arms swing against the legs: the left arm is back when the left leg is forward. Moving
     * backwards the legs lead the other way, and so do the arms; sideways they swing less. */
    double swing = g->arm_swing * (0.3 + 0.7 * fabs(dir.z)) * (dir.z < -1e-9 ? -1.0 : 1.0);
    for (int side = 0; side < 2; ++side) {
        int arm = side == 0 ? J_ARM_L : J_ARM_R;
        double out = side == 0 ? 1.0 : -1.0;
        double a = out * swing * c; /* > 0: arm back */
        p->q[arm + A_UPPER] = cb_dq_mul(rot_z(out * g->arm_abduct), rot_x(a - 0.05));
        double forward = g->arm_swing > 0.0 ? 0.5 * (1.0 - a / g->arm_swing) : 0.5;
        p->q[arm + A_LOWER] = rot_x(-(g->elbow + g->elbow_swing * forward));
        p->q[arm + A_HAND] = rot_z(-out * 0.1);
        curl_fingers(p, arm, out, g->finger_curl);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Idle, lean (additive), wave (upper body)                                                   */

static void idle_pose(const humanoid *h, double phase, gen_pose *p)
{
    pose_rest(p);
    const double two_pi = 2.0 * CB_DPI;
    double s = sin(two_pi * phase);
    cb_dquat pelvis_q = cb_dq_mul(rot_y(deg(2.0) * sin(two_pi * phase + 0.7)), rot_z(deg(1.5) * s));
    cb_dvec3 pelvis_xz = cb_dv(0.02 * s, 0.0, 0.0);
    foot_state feet[2] = {{cb_dv(0.11, BALL_HEIGHT, 0.13), 0.0, 0.0},
                          {cb_dv(-0.11, BALL_HEIGHT, 0.13), 0.0, 0.0}};
    double reach_l = pelvis_reach(h, pelvis_q, pelvis_xz, 0, ankle_of(feet[0]));
    double reach_r = pelvis_reach(h, pelvis_q, pelvis_xz, 1, ankle_of(feet[1]));
    double nominal = 0.955 + 0.003 * sin(2.0 * two_pi * phase);
    p->pelvis = cb_dv(pelvis_xz.x, smooth_min3(nominal, reach_l, reach_r, 0.008), 0.0);
    p->q[J_PELVIS] = pelvis_q;
    solve_legs(h, p, feet);
    /* Breathing: the chest rises twice per cycle; the spine counters the pelvis roll. */
    double breath = deg(1.2) * sin(2.0 * two_pi * phase);
    p->q[J_SPINE1] = rot_z(-deg(1.0) * s);
    p->q[J_SPINE2] = rot_x(-breath);
    p->q[J_SPINE3] = rot_x(-breath);
    stabilize_head(h, p, deg(3.0), deg(8.0) * sin(two_pi * phase + 1.0));
    for (int side = 0; side < 2; ++side) {
        int arm = side == 0 ? J_ARM_L : J_ARM_R;
        double out = side == 0 ? 1.0 : -1.0;
        p->q[arm + A_UPPER] =
            cb_dq_mul(rot_z(out * deg(6.0)), rot_x(deg(2.0) * sin(two_pi * phase + out)));
        p->q[arm + A_LOWER] = rot_x(-deg(12.0));
        curl_fingers(p, arm, out, deg(20.0));
    }
}

/* Additive source: leans the upper body sideways and back, and breathes; phase 0 is neutral
 * (the reference). */
static void lean_pose(const humanoid *h, double phase, gen_pose *p)
{
    (void)h;
    pose_rest(p);
    const double two_pi = 2.0 * CB_DPI;
    double s = sin(two_pi * phase);
    double breath = deg(1.5) * sq(sin(2.0 * CB_DPI * phase));
    for (int j = J_SPINE1; j <= J_SPINE3; ++j) {
        p->q[j] = cb_dq_mul(rot_z(deg(6.0) * s), rot_x(-breath));
    }
    p->q[J_NECK] = rot_z(-deg(8.0) * s);
}

/* Upper-body wave: the right arm up and waving, the body leaning slightly away. */
static void wave_pose(const humanoid *h, double phase, gen_pose *p)
{
    (void)h;
    pose_rest(p);
    const double two_pi = 2.0 * CB_DPI;
    double wave = sin(4.0 * two_pi * phase); /* four waves per cycle */
    p->q[J_SPINE3] = rot_z(deg(4.0));
    p->q[J_NECK] = rot_z(-deg(3.0));
    p->q[J_ARM_R + A_CLAVICLE] = rot_z(-deg(12.0));
    p->q[J_ARM_R + A_UPPER] = cb_dq_mul(rot_z(-deg(135.0)), rot_x(-deg(15.0)));
    p->q[J_ARM_R + A_LOWER] = cb_dq_mul(rot_z(deg(25.0) * wave), rot_x(-deg(35.0)));
    p->q[J_ARM_R + A_HAND] = rot_z(deg(10.0) * wave);
    p->q[J_ARM_L + A_UPPER] = rot_z(deg(6.0));
    p->q[J_ARM_L + A_LOWER] = rot_x(-deg(12.0));
    curl_fingers(p, J_ARM_L, 1.0, deg(20.0));
}

/* ------------------------------------------------------------------------------------------ */
/* Clips from generated poses                                                                 */

typedef struct clip_spec {
    char name[32];
    double duration;
    cb_additive additive;
    /* Which joints get rotation tracks; pelvis and root translation are tracked when set. */
    bool rotates[J_COUNT];
    bool pelvis_moves, root_moves;
    /* Generator: one of the families below. */
    int kind; /* 0 locomotion, 1 idle, 2 lean, 3 wave */
    const gait *gait;
    cb_dvec3 dir;
} clip_spec;

static void generate(const humanoid *h, const clip_spec *c, double phase, gen_pose *p)
{
    switch (c->kind) {
    case 0:
        locomotion_pose(h, c->gait, c->dir, c->duration, phase, p);
        break;
    case 1:
        idle_pose(h, phase, p);
        break;
    case 2:
        lean_pose(h, phase, p);
        break;
    default:
        wave_pose(h, phase, p);
        break;
    }
}

static void track_all_but(clip_spec *c, bool fingers)
{
    for (int j = 1; j < J_COUNT; ++j) {
        c->rotates[j] = true;
    }
    c->rotates[J_JAW] = c->rotates[J_EYE_L] = c->rotates[J_EYE_R] = false;
    for (int side = 0; side < 2; ++side) {
        int arm = side == 0 ? J_ARM_L : J_ARM_R, leg = side == 0 ? J_LEG_L : J_LEG_R;
        c->rotates[arm + A_UPPER_TWIST] = c->rotates[arm + A_LOWER_TWIST] = false;
        c->rotates[leg + L_THIGH_TWIST] = c->rotates[leg + L_CALF_TWIST] = false;
        for (int f = 0; f < 15 && !fingers; ++f) {
            c->rotates[arm + A_FINGERS + f] = false;
        }
    }
}

/* Foot markers of a locomotion clip, read off the gait's own phases (foot_at): a foot's stance
 * starts at its phase 0 (touch-down: the left foot at clip phase 0, the right at 0.5) and ends
 * at its phase `stance`, where the ball leaves the ground (the swing starts with the stance's
 * velocity, so in the world the foot is still at that instant and rises right after). The
 * lift-offs are event_only: a walk lifts the right foot before planting it (0.1 then 0.5), a
 * run after (0.5 then 0.83), so in one sync group they would disagree; the plants alone align
 * every walk and run. Returns the number of markers (times in seconds). */
static size_t gait_markers(const clip_spec *c, cb_clip_marker_desc out[4])
{
    if (c->kind != 0) {
        return 0;
    }
    double beta = c->gait->stance;
    double lift_r = fmod(0.5 + beta, 1.0);
    out[0] = (cb_clip_marker_desc){"foot_plant_l", 0.0f, false};
    out[1] = (cb_clip_marker_desc){"foot_lift_l", (float)(beta * c->duration), true};
    out[2] = (cb_clip_marker_desc){"foot_plant_r", (float)(0.5 * c->duration), false};
    out[3] = (cb_clip_marker_desc){"foot_lift_r", (float)(lift_r * c->duration), true};
    return 4;
}

/* Key intervals over the clip's duration at `rate`, at least one. */
static uint32_t key_intervals(const clip_spec *spec, float rate)
{
    uint32_t intervals = (uint32_t)floor(spec->duration * rate + 0.5);
    if (intervals < 1) {
        intervals = 1;
    }
    return intervals;
}

/* One track per rotating joint, plus the pelvis and root translations when they move. */
static size_t spec_track_count(const clip_spec *spec)
{
    size_t track_count = 0;
    for (int j = 0; j < J_COUNT; ++j) {
        track_count += spec->rotates[j];
    }
    track_count += spec->pelvis_moves + spec->root_moves;
    return track_count;
}

/* The key times and the generated pose at each key (intervals + 1 of them). */
static void sample_keys(const humanoid *h, const clip_spec *spec, uint32_t intervals, float *times,
                        gen_pose *poses)
{
    for (size_t f = 0; f <= intervals; ++f) {
        double phase = (double)f / intervals;
        times[f] = f == intervals ? (float)spec->duration : (float)(spec->duration * phase);
        generate(h, spec, phase, &poses[f]);
    }
}

/* One track's values out of the poses: joint j's rotation (rot), else the pelvis's (pel) or
 * the root's translation. */
static void copy_keys(const gen_pose *poses, size_t keys, int j, bool rot, bool pel, float *v)
{
    for (size_t f = 0; f < keys; ++f) {
        const gen_pose *p = &poses[f];
        if (rot) {
            v[4 * f + 0] = (float)p->q[j].x;
            v[4 * f + 1] = (float)p->q[j].y;
            v[4 * f + 2] = (float)p->q[j].z;
            v[4 * f + 3] = (float)p->q[j].w;
        } else {
            cb_dvec3 x = pel ? p->pelvis : p->root;
            v[3 * f + 0] = (float)x.x;
            v[3 * f + 1] = (float)x.y;
            v[3 * f + 2] = (float)x.z;
        }
    }
}

/* The tracks in joint order, then the pelvis and root translations; all share the key times,
 * and each has room for 4 floats a key in `values`. */
static void fill_tracks(const clip_spec *spec, const gen_pose *poses, size_t keys,
                        const float *times, float *values, cb_clip_track *tracks)
{
    size_t t = 0;
    for (int j = 0; j < J_COUNT + 2; ++j) {
        bool rot = j < J_COUNT && spec->rotates[j];
        bool pel = j == J_COUNT && spec->pelvis_moves;
        bool root = j == J_COUNT + 1 && spec->root_moves;
        if (!rot && !pel && !root) {
            continue;
        }
        float *v = values + t * keys * 4;
        cb_clip_track *tr = &tracks[t++];
        *tr = (cb_clip_track){.joint = (uint32_t)(rot   ? j
                                                  : pel ? J_PELVIS
                                                        : J_ROOT),
                              .channel = rot ? CB_CHANNEL_ROTATION : CB_CHANNEL_TRANSLATION,
                              .key_count = keys,
                              .times = times,
                              .values = v};
        copy_keys(poses, keys, j, rot, pel, v);
    }
}

static cb_result build_clip(const humanoid *h, const cb_skeleton *skel, const clip_spec *spec,
                            float rate, const cb_allocator *alloc, cb_clip **out, cb_error *err)
{
    uint32_t intervals = key_intervals(spec, rate);
    size_t keys = (size_t)intervals + 1;
    size_t track_count = spec_track_count(spec);
    size_t floats = keys + track_count * keys * 4;
    size_t bytes =
        floats * sizeof(float) + track_count * sizeof(cb_clip_track) + keys * sizeof(gen_pose);
    unsigned char *mem = cb_alloc(alloc, bytes, _Alignof(gen_pose));
    if (mem == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "embedded: clip \"%s\"", spec->name);
    }
    gen_pose *poses = (gen_pose *)mem;
    cb_clip_track *tracks = (cb_clip_track *)(mem + keys * sizeof(gen_pose));
    float *times = (float *)(tracks + track_count);
    float *values = times + keys;
    sample_keys(h, spec, intervals, times, poses);
    fill_tracks(spec, poses, keys, times, values, tracks);
    cb_clip_marker_desc markers[4];
    size_t marker_count = gait_markers(spec, markers);
    cb_clip_desc d = {
        .name = spec->name,
        .skeleton = skel,
        .duration_s = (float)spec->duration,
        .sample_rate_hz = rate,
        .tracks = tracks,
        .track_count = track_count,
        .additive = spec->additive,
        .markers = markers,
        .marker_count = marker_count,
        .allocator = *alloc,
    };
    cb_result r = cb_clip_create(&d, out, err);
    cb_free(alloc, mem, bytes);
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* The set                                                                                    */

enum { CLIP_COUNT = 19 };

struct cb_embedded {
    cb_allocator allocator;
    cb_skeleton *skeleton;
    cb_clip *clips[CLIP_COUNT];
};

cb_embedded_desc cb_embedded_query_desc(const cb_embedded_desc *desc)
{
    cb_embedded_desc d = {0};
    if (desc != NULL) {
        d = *desc;
    }
    if (d.sample_rate_hz == 0.0f) {
        d.sample_rate_hz = CB_CLIP_DEFAULT_RATE_HZ;
    }
    return d;
}

static void make_specs(clip_spec specs[CLIP_COUNT])
{
    memset(specs, 0, CLIP_COUNT * sizeof specs[0]);
    clip_spec *c = &specs[0];
    snprintf(c->name, sizeof c->name, "idle");
    c->duration = 3.0;
    c->kind = 1;
    track_all_but(c, true);
    c->pelvis_moves = true;
    for (int gi = 0; gi < 2; ++gi) {
        const gait *g = gi == 0 ? &walk_gait : &run_gait;
        for (int di = 0; di < 8; ++di) {
            c = &specs[1 + 8 * gi + di];
            snprintf(c->name, sizeof c->name, "%s_%s", g->prefix, directions[di].suffix);
            c->kind = 0;
            c->gait = g;
            c->dir = cb_dv(sin(directions[di].angle), 0.0, cos(directions[di].angle));
            /* Exact zeros, so that straight clips have no stray sideways drift. */
            c->dir.x = fabs(c->dir.x) < 1e-12 ? 0.0 : c->dir.x;
            c->dir.z = fabs(c->dir.z) < 1e-12 ? 0.0 : c->dir.z;
            c->duration = period_for(g, c->dir);
            track_all_but(c, true);
            c->pelvis_moves = c->root_moves = true;
        }
    }
    c = &specs[17];
    snprintf(c->name, sizeof c->name, "lean_add");
    c->duration = 2.4;
    c->kind = 2;
    c->additive = CB_ADDITIVE_FIRST_FRAME;
    c->rotates[J_SPINE1] = c->rotates[J_SPINE2] = c->rotates[J_SPINE3] = true;
    c->rotates[J_NECK] = true;
    c = &specs[18];
    snprintf(c->name, sizeof c->name, "wave_upper");
    c->duration = 2.0;
    c->kind = 3;
    c->rotates[J_SPINE3] = c->rotates[J_NECK] = true;
    for (int k = 0; k < 21; ++k) {
        c->rotates[J_ARM_R + k] = k != A_UPPER_TWIST && k != A_LOWER_TWIST && (k < A_FINGERS);
        c->rotates[J_ARM_L + k] = k == A_UPPER || k == A_LOWER || k >= A_FINGERS;
    }
}

void cb_embedded_destroy(cb_embedded *e)
{
    if (e == NULL) {
        return;
    }
    for (int i = 0; i < CLIP_COUNT; ++i) {
        cb_clip_destroy(e->clips[i]);
    }
    cb_skeleton_destroy(e->skeleton);
    cb_allocator a = e->allocator;
    cb_free(&a, e, sizeof *e);
}

cb_result cb_embedded_create(const cb_embedded_desc *desc, cb_embedded **out, cb_error *err)
{
    if (out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_embedded_create: out is NULL");
    }
    cb_embedded_desc d = cb_embedded_query_desc(desc);
    if (d._start_canary != 0 || d._end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "embedded desc: a canary is not 0");
    }
    cb_result r = cb_allocator_check(&d.allocator, err);
    if (r != CB_OK) {
        return r;
    }
    if (!isfinite(d.sample_rate_hz) || !(d.sample_rate_hz > 0.0f) || d.sample_rate_hz > 1000.0f) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "embedded desc: sample_rate_hz %g is not in (0, 1000]",
                            (double)d.sample_rate_hz);
    }
    cb_embedded *e = cb_alloc_zeroed(&d.allocator, sizeof *e, _Alignof(cb_embedded));
    humanoid *h = cb_alloc(&d.allocator, sizeof *h, _Alignof(humanoid));
    clip_spec *specs = cb_alloc(&d.allocator, CLIP_COUNT * sizeof *specs, _Alignof(clip_spec));
    if (e == NULL || h == NULL || specs == NULL) {
        cb_free(&d.allocator, e, sizeof *e);
        cb_free(&d.allocator, h, sizeof *h);
        cb_free(&d.allocator, specs, CLIP_COUNT * sizeof *specs);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_embedded_create");
    }
    e->allocator = d.allocator;
    build_humanoid(h);
    cb_skeleton_desc sd = {
        .joint_count = J_COUNT,
        .names = h->name_ptrs,
        .parents = h->parents,
        .rest_pose = h->rest,
        .allocator = d.allocator,
    };
    r = cb_skeleton_create(&sd, &e->skeleton, err);
    make_specs(specs);
    for (int i = 0; i < CLIP_COUNT && r == CB_OK; ++i) {
        r = build_clip(h, e->skeleton, &specs[i], d.sample_rate_hz, &d.allocator, &e->clips[i],
                       err);
    }
    cb_free(&d.allocator, h, sizeof *h);
    cb_free(&d.allocator, specs, CLIP_COUNT * sizeof *specs);
    if (r != CB_OK) {
        cb_embedded_destroy(e);
        return r;
    }
    *out = e;
    return CB_OK;
}

const cb_skeleton *cb_embedded_skeleton(const cb_embedded *e)
{
    return e->skeleton;
}

uint32_t cb_embedded_clip_count(const cb_embedded *e)
{
    (void)e;
    return CLIP_COUNT;
}

const cb_clip *cb_embedded_clip(const cb_embedded *e, uint32_t index)
{
    return index < CLIP_COUNT ? e->clips[index] : NULL;
}

const cb_clip *cb_embedded_find_clip(const cb_embedded *e, const char *name)
{
    if (e == NULL || name == NULL) {
        return NULL;
    }
    for (int i = 0; i < CLIP_COUNT; ++i) {
        if (strcmp(cb_clip_name(e->clips[i]), name) == 0) {
            return e->clips[i];
        }
    }
    return NULL;
}
