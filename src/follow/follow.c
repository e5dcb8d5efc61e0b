/* Characters that follow a simulation (crowdblend/follow.h): the root on the given position,
 * the heading along the velocity, the velocity in the character's frame into the graph's
 * parameters. It uses the crowd through its public API only; later features (playback-rate
 * and stride warping, foot locking) take their commands from here (docs/trajectories.md). */
#include <math.h>
#include <string.h>

#include "base/base_impl.h"
#include "base/scalar_math.h"
#include "crowdblend/follow.h"
#include "simd/detmath.h"

/* Playback-rate warping (follow.h): the rate parameter and its bounds. */
typedef struct warp_state {
    bool on;
    uint32_t p_rate;
    float gait, min_rate, max_rate;
} warp_state;

/* Foot locking (follow.h): the root placement parameters the graph's foot_lock step reads, its
 * weight (when named), its outputs, each foot's lock leg. */
typedef struct lock_state {
    bool on;
    bool weighted; /* p_weight is written */
    uint32_t p_root[4], p_weight, p_locked[CB_FOLLOW_FEET], p_failed[CB_FOLLOW_FEET];
    uint32_t joint[CB_FOLLOW_FEET]; /* each foot's joint, */
    uint32_t leg[CB_FOLLOW_FEET];   /* the graph's lock leg that ends there */
    float release_s;
    cb_follow_foot *feet; /* CB_FOLLOW_FEET per character */
    float *fade;          /* CB_FOLLOW_FEET per character: 1 locked, falling to 0 on release */
    uint8_t *seen;        /* per character: crowd output seen, 0 or 1 */
} lock_state;

/* Orientation warping (follow.h): the angle parameter, its limit and rate. */
typedef struct orient_state {
    bool on;
    uint32_t p_angle;
    float max_angle, rate;
} orient_state;

/* Stride warping (follow.h): the scale parameter, the optional direction ones, the bound. */
typedef struct stride_state {
    bool on;
    uint32_t p_scale, p_dir[2];
    bool dir; /* the direction parameters are written */
    float max_scale, rate;
} stride_state;

struct cb_follow {
    cb_crowd *crowd;
    uint32_t kind;
    uint32_t capacity;
    uint32_t count;
    uint32_t p_left, p_forward;
    float stand, follow;
    float max_turn; /* rad/s, 0: none */
    cb_allocator allocator;
    cb_follow_root *roots; /* capacity, dense order: the heading lives in roots[i].yaw */
    warp_state warp;
    lock_state lock;
    orient_state orient;
    stride_state stride;
    cb_follow_stats stats;
};

enum { MAX_COORDINATE = 1000000000, MAX_SPEED = 10000 };
static const float PI = 3.14159265358979f;

cb_follow_desc cb_follow_query_desc(const cb_follow_desc *desc)
{
    cb_follow_desc d = desc != NULL ? *desc : (cb_follow_desc){0};
    /* The crowd's capacity is per kind, and the kind is empty at create (check_desc): as many
     * characters as the kind can ever hold, so no add fails on the follower's side first. */
    if (d.capacity == 0 && d.crowd != NULL) {
        d.capacity = cb_crowd_capacity(d.crowd);
    }
    if (d.stand_speed_mps == 0.0f) {
        d.stand_speed_mps = CB_FOLLOW_DEFAULT_STAND_SPEED;
    }
    if (d.follow_speed_mps == 0.0f) {
        d.follow_speed_mps = 2.0f * d.stand_speed_mps;
    }
    if (d.warp.min_rate == 0.0f) {
        d.warp.min_rate = CB_FOLLOW_DEFAULT_MIN_RATE;
    }
    if (d.warp.max_rate == 0.0f) {
        d.warp.max_rate = CB_FOLLOW_DEFAULT_MAX_RATE;
    }
    if (d.orient.max_angle_rad == 0.0f) {
        d.orient.max_angle_rad = CB_FOLLOW_DEFAULT_ORIENT_MAX;
    }
    if (d.orient.rate_rps == 0.0f) {
        d.orient.rate_rps = CB_FOLLOW_DEFAULT_ORIENT_RATE;
    }
    if (d.stride.max_scale == 0.0f) {
        d.stride.max_scale = CB_FOLLOW_DEFAULT_STRIDE_MAX;
    }
    if (d.stride.rate_per_s == 0.0f) {
        d.stride.rate_per_s = CB_FOLLOW_DEFAULT_STRIDE_RATE;
    }
    static const char *const joints[CB_FOLLOW_FEET] = {"ball_l", "ball_r"};
    for (int foot = 0; foot < CB_FOLLOW_FEET; ++foot) {
        if (d.lock.joint[foot] == NULL) {
            d.lock.joint[foot] = joints[foot];
        }
    }
    if (d.lock.release_s == 0.0f) {
        d.lock.release_s = CB_FOLLOW_DEFAULT_RELEASE_S;
    }
    return d;
}

/* The float parameter `name` of the kind's graph. */
static cb_result find_float_param(const cb_crowd *crowd, uint32_t kind, const char *name,
                                  const char *field, uint32_t *out, cb_error *err)
{
    const cb_graph *g = cb_crowd_graph(crowd, kind);
    if (cb_graph_find_param(g, name, out) != CB_OK) {
        return cb_error_set(err, CB_ERR_NOT_FOUND,
                            "cb_follow_create: %s: the graph has no parameter '%s'", field, name);
    }
    if (cb_graph_param_type(g, *out) != CB_PARAM_FLOAT) {
        return cb_error_set(err, CB_ERR_MISMATCH, "cb_follow_create: %s: '%s' is not a float",
                            field, name);
    }
    return CB_OK;
}

/* The velocity parameters written when the desc names none, left then forward: the first of
 * each pair that the graph has (the example graphs' vx / vy, a blend-space graph's blend_0 /
 * blend_1). */
static const char *const default_velocity[2][2] = {
    {"vx", CB_GRAPH_BLEND_PARAM_PREFIX "0"},
    {"vy", CB_GRAPH_BLEND_PARAM_PREFIX "1"},
};

bool cb_follow_graph_takes_velocity(const cb_graph *graph)
{
    uint32_t index;
    for (int axis = 0; axis < 2; ++axis) {
        if (cb_graph_find_param(graph, default_velocity[axis][0], &index) != CB_OK &&
            cb_graph_find_param(graph, default_velocity[axis][1], &index) != CB_OK) {
            return false;
        }
    }
    return true;
}

/* The parameter `name`, or the first of two defaults the kind's graph has. */
static cb_result find_velocity_param(const cb_crowd *crowd, uint32_t kind, const char *name,
                                     const char *first, const char *second, const char *field,
                                     uint32_t *out, cb_error *err)
{
    if (name != NULL) {
        return find_float_param(crowd, kind, name, field, out, err);
    }
    const cb_graph *g = cb_crowd_graph(crowd, kind);
    if (cb_graph_find_param(g, first, out) == CB_OK) {
        return find_float_param(crowd, kind, first, field, out, err);
    }
    if (cb_graph_find_param(g, second, out) == CB_OK) {
        return find_float_param(crowd, kind, second, field, out, err);
    }
    return cb_error_set(err, CB_ERR_NOT_FOUND,
                        "cb_follow_create: %s: the graph has neither '%s' nor '%s' to take the "
                        "character's local velocity; name its float parameter in %s",
                        field, first, second, field);
}

static cb_result check_desc(const cb_follow_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "cb_follow_create: desc canary is not zero");
    }
    cb_result r = cb_allocator_check(&d->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    if (d->crowd == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_follow_create: crowd is NULL");
    }
    if (d->kind >= cb_crowd_kind_count(d->crowd)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT, "cb_follow_create: kind %u of %u",
                            d->kind, cb_crowd_kind_count(d->crowd));
    }
    if (d->capacity == 0 || d->capacity > CB_CROWD_MAX_CAPACITY) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: capacity %u is not in 1..%u", d->capacity,
                            CB_CROWD_MAX_CAPACITY);
    }
    if (cb_crowd_count(d->crowd, d->kind) != 0) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: kind %u already has characters; add them through "
                            "the follower",
                            d->kind);
    }
    if (!(d->stand_speed_mps >= 0.0f) || !(d->follow_speed_mps > d->stand_speed_mps) ||
        !(d->follow_speed_mps <= (float)MAX_SPEED)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: speeds: need 0 <= stand_speed_mps (%g) < "
                            "follow_speed_mps (%g) <= %d",
                            (double)d->stand_speed_mps, (double)d->follow_speed_mps, MAX_SPEED);
    }
    if (!(d->max_turn_rps >= 0.0f && d->max_turn_rps <= 1000.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: max_turn_rps (%g) must be in [0, 1000]",
                            (double)d->max_turn_rps);
    }
    return CB_OK;
}

static cb_result setup_warp(const cb_follow_desc *d, warp_state *w, cb_error *err)
{
    const cb_follow_warp *x = &d->warp;
    if (x->rate_param == NULL) {
        return CB_OK;
    }
    if (!(x->gait_speed_mps > 0.0f && x->gait_speed_mps <= (float)MAX_SPEED) ||
        !(x->min_rate > 0.0f && x->min_rate <= 1.0f) ||
        !(x->max_rate >= 1.0f && x->max_rate <= 4.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: warp: need gait_speed_mps > 0 (%g) and 0 < "
                            "min_rate (%g) <= 1 <= max_rate (%g) <= 4",
                            (double)x->gait_speed_mps, (double)x->min_rate, (double)x->max_rate);
    }
    *w = (warp_state){
        .on = true, .gait = x->gait_speed_mps, .min_rate = x->min_rate, .max_rate = x->max_rate};
    return find_float_param(d->crowd, d->kind, x->rate_param, "warp.rate_param", &w->p_rate, err);
}

static cb_result setup_orient(const cb_follow_desc *d, orient_state *o, cb_error *err)
{
    const cb_follow_orient *x = &d->orient;
    if (x->angle_param == NULL) {
        return CB_OK;
    }
    if (!(x->max_angle_rad > 0.0f && x->max_angle_rad <= 0.5f * PI) ||
        !(x->rate_rps > 0.0f && x->rate_rps <= 1000.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: orient: need 0 < max_angle_rad (%g) <= pi/2 and "
                            "0 < rate_rps (%g) <= 1000",
                            (double)x->max_angle_rad, (double)x->rate_rps);
    }
    *o = (orient_state){.on = true, .max_angle = x->max_angle_rad, .rate = x->rate_rps};
    return find_float_param(d->crowd, d->kind, x->angle_param, "orient.angle_param", &o->p_angle,
                            err);
}

static cb_result setup_stride(const cb_follow_desc *d, stride_state *t, cb_error *err)
{
    const cb_follow_stride *x = &d->stride;
    if (x->scale_param == NULL) {
        return CB_OK;
    }
    if (d->warp.rate_param == NULL) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: stride: stride warping needs playback-rate "
                            "warping (warp.rate_param)");
    }
    if (!(x->max_scale >= 1.0f && x->max_scale <= 2.0f) ||
        !(x->rate_per_s > 0.0f && x->rate_per_s <= 1000.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_follow_create: stride: need 1 <= max_scale (%g) <= 2 and 0 < "
                            "rate_per_s (%g) <= 1000",
                            (double)x->max_scale, (double)x->rate_per_s);
    }
    if ((x->direction_param[0] == NULL) != (x->direction_param[1] == NULL)) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                            "cb_follow_create: stride: name both direction parameters or none");
    }
    *t = (stride_state){.on = true,
                        .max_scale = x->max_scale,
                        .rate = x->rate_per_s,
                        .dir = x->direction_param[0] != NULL};
    cb_result r =
        find_float_param(d->crowd, d->kind, x->scale_param, "stride.scale_param", &t->p_scale, err);
    for (int a = 0; a < 2 && t->dir && r == CB_OK; ++a) {
        r = find_float_param(d->crowd, d->kind, x->direction_param[a], "stride.direction_param",
                             &t->p_dir[a], err);
    }
    return r;
}

/* Foot `foot`'s lock leg: the graph's leg that ends at its joint (named `name`), whose step reads
 * the root from the follower's root parameters (so that its points are in the world) and
 * writes the foot's outputs (so that the report's flags and point are one leg's). After the
 * parameters' own checks (check_written_params), whose messages are the more telling. */
static cb_result resolve_leg(const cb_graph *g, lock_state *k, int foot, const char *name,
                             cb_error *err)
{
    cb_graph_foot_lock_leg_info info;
    if (cb_graph_foot_lock_leg_at_joint(g, k->joint[foot], &k->leg[foot]) != CB_OK ||
        cb_graph_query_foot_lock_leg_info(g, k->leg[foot], &info) != CB_OK) {
        return cb_error_set(err, CB_ERR_NOT_FOUND,
                            "cb_follow_create: lock: joint '%s' ends no leg of the graph's "
                            "foot_lock steps",
                            name);
    }
    if (memcmp(info.root_params, k->p_root, sizeof k->p_root) != 0) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cb_follow_create: lock: the foot_lock step of joint '%s' does not "
                            "read the root from lock.root_param",
                            name);
    }
    if (info.locked_param != k->p_locked[foot] || info.failed_param != k->p_failed[foot]) {
        return cb_error_set(err, CB_ERR_MISMATCH,
                            "cb_follow_create: lock: joint '%s''s leg does not write "
                            "lock.locked_param[%d] and failed_param[%d]",
                            name, foot, foot);
    }
    return CB_OK;
}

/* The lock's parameters and joints (follow.h cb_follow_lock), checked and resolved. */
static cb_result resolve_lock(const cb_follow_desc *d, lock_state *k, cb_error *err)
{
    const cb_follow_lock *x = &d->lock;
    const cb_graph *g = cb_crowd_graph(d->crowd, d->kind);
    cb_result r = CB_OK;
    for (int c = 0; c < 4 && r == CB_OK; ++c) {
        r = x->root_param[c] != NULL
                ? find_float_param(d->crowd, d->kind, x->root_param[c], "lock.root_param",
                                   &k->p_root[c], err)
                : cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                               "cb_follow_create: lock.root_param: four parameters (x, y, z, "
                               "yaw) are needed");
    }
    k->weighted = x->weight_param != NULL;
    if (r == CB_OK && k->weighted) {
        r = find_float_param(d->crowd, d->kind, x->weight_param, "lock.weight_param", &k->p_weight,
                             err);
    }
    for (int foot = 0; foot < CB_FOLLOW_FEET && r == CB_OK; ++foot) {
        const char *names[2] = {x->locked_param[foot], x->failed_param[foot]};
        uint32_t *out[2] = {&k->p_locked[foot], &k->p_failed[foot]};
        for (int o = 0; o < 2 && r == CB_OK; ++o) {
            r = names[o] != NULL
                    ? find_float_param(d->crowd, d->kind, names[o], "lock.locked_param", out[o],
                                       err)
                    : cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                                   "cb_follow_create: lock: both feet's locked_param and "
                                   "failed_param are needed");
        }
        if (r == CB_OK && cb_skeleton_find_joint(cb_graph_skeleton(g), x->joint[foot],
                                                 &k->joint[foot]) != CB_OK) {
            r = cb_error_set(err, CB_ERR_NOT_FOUND, "cb_follow_create: lock: no joint '%s'",
                             x->joint[foot]);
        }
    }
    if (r == CB_OK && !(x->release_s >= 0.0f && x->release_s <= 10.0f)) {
        r = cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                         "cb_follow_create: lock: need 0 <= release_s (%g) <= 10",
                         (double)x->release_s);
    }
    k->release_s = x->release_s;
    return r;
}

static void free_lock(lock_state *k, uint32_t capacity, const cb_allocator *a)
{
    cb_free(a, k->feet, CB_FOLLOW_FEET * capacity * sizeof *k->feet);
    cb_free(a, k->fade, CB_FOLLOW_FEET * capacity * sizeof *k->fade);
    cb_free(a, k->seen, capacity * sizeof *k->seen);
}

static cb_result setup_lock(const cb_follow_desc *d, lock_state *k, cb_error *err)
{
    const cb_follow_lock *x = &d->lock;
    bool named = x->root_param[0] != NULL || x->root_param[1] != NULL || x->root_param[2] != NULL ||
                 x->root_param[3] != NULL || x->weight_param != NULL;
    for (int foot = 0; foot < CB_FOLLOW_FEET; ++foot) {
        named = named || x->locked_param[foot] != NULL || x->failed_param[foot] != NULL;
    }
    if (!named) {
        return CB_OK;
    }
    cb_result r = resolve_lock(d, k, err);
    if (r != CB_OK) {
        return r;
    }
    cb_allocator a = d->allocator;
    uint32_t n = d->capacity;
    k->feet = cb_alloc_zeroed(&a, CB_FOLLOW_FEET * n * sizeof *k->feet, 64);
    k->fade = cb_alloc_zeroed(&a, CB_FOLLOW_FEET * n * sizeof *k->fade, 64);
    k->seen = cb_alloc_zeroed(&a, n * sizeof *k->seen, 64);
    if (k->feet == NULL || k->fade == NULL || k->seen == NULL) {
        free_lock(k, n, &a);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_follow_create: lock state");
    }
    k->on = true;
    return CB_OK;
}

/* The parameters the follower writes every update must be distinct: one written twice would
 * silently carry only the last value (a stride scale named "rate" replaced the warp's rate). */
static cb_result check_written_params(const uint32_t velocity[2], const warp_state *w,
                                      const stride_state *t, const orient_state *o,
                                      const lock_state *k, cb_error *err)
{
    uint32_t p[2 + 1 + 3 + 1 + 4 + 1];
    const char *what[sizeof p / sizeof p[0]];
    size_t n = 0;
    p[n] = velocity[0], what[n++] = "left_param";
    p[n] = velocity[1], what[n++] = "forward_param";
    if (w->on) {
        p[n] = w->p_rate, what[n++] = "warp.rate_param";
    }
    if (t->on) {
        p[n] = t->p_scale, what[n++] = "stride.scale_param";
        for (int a = 0; a < 2 && t->dir; ++a) {
            p[n] = t->p_dir[a], what[n++] = "stride.direction_param";
        }
    }
    if (o->on) {
        p[n] = o->p_angle, what[n++] = "orient.angle_param";
    }
    for (int c = 0; c < 4 && k->on; ++c) {
        p[n] = k->p_root[c], what[n++] = "lock.root_param";
    }
    if (k->on && k->weighted) {
        p[n] = k->p_weight, what[n++] = "lock.weight_param";
    }
    for (size_t a = 0; a < n; ++a) {
        for (size_t b = 0; b < a; ++b) {
            if (p[a] == p[b]) {
                return cb_error_set(err, CB_ERR_MISMATCH,
                                    "cb_follow_create: %s and %s are one parameter", what[b],
                                    what[a]);
            }
        }
    }
    return CB_OK;
}

/* The features' states (proto's warp, stride, orient and lock) set up from the desc, checked
 * against each other and the velocity parameters, and the lock's feet matched to the graph's
 * legs; on failure nothing is left allocated. */
static cb_result setup_features(const cb_follow_desc *d, const uint32_t velocity[2],
                                cb_follow *proto, cb_error *err)
{
    cb_result r = setup_warp(d, &proto->warp, err);
    if (r == CB_OK) {
        r = setup_stride(d, &proto->stride, err);
    }
    if (r == CB_OK) {
        r = setup_orient(d, &proto->orient, err);
    }
    if (r == CB_OK) {
        r = setup_lock(d, &proto->lock, err);
    }
    if (r != CB_OK) {
        return r;
    }
    lock_state *lock = &proto->lock;
    r = check_written_params(velocity, &proto->warp, &proto->stride, &proto->orient, lock, err);
    for (int foot = 0; foot < CB_FOLLOW_FEET && lock->on && r == CB_OK; ++foot) {
        r = resolve_leg(cb_crowd_graph(d->crowd, d->kind), lock, foot, d->lock.joint[foot], err);
    }
    if (r != CB_OK) {
        free_lock(lock, d->capacity, &d->allocator); /* setup_lock succeeded */
    }
    return r;
}

cb_result cb_follow_create(const cb_follow_desc *desc, cb_follow **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_follow_create: desc or out is NULL");
    }
    cb_follow_desc d = cb_follow_query_desc(desc);
    cb_follow proto = {
        .crowd = d.crowd,
        .kind = d.kind,
        .capacity = d.capacity,
        .stand = d.stand_speed_mps,
        .follow = d.follow_speed_mps,
        .max_turn = d.max_turn_rps,
        .allocator = d.allocator,
    };
    cb_result r = check_desc(&d, err);
    if (r == CB_OK) {
        r = find_velocity_param(d.crowd, d.kind, d.left_param, default_velocity[0][0],
                                default_velocity[0][1], "left_param", &proto.p_left, err);
    }
    if (r == CB_OK) {
        r = find_velocity_param(d.crowd, d.kind, d.forward_param, default_velocity[1][0],
                                default_velocity[1][1], "forward_param", &proto.p_forward, err);
    }
    if (r == CB_OK) {
        const uint32_t velocity[2] = {proto.p_left, proto.p_forward};
        r = setup_features(&d, velocity, &proto, err);
    }
    if (r != CB_OK) {
        return r;
    }
    cb_follow *f = cb_alloc_zeroed(&d.allocator, sizeof *f, 64);
    proto.roots =
        f != NULL ? cb_alloc_zeroed(&d.allocator, d.capacity * sizeof *proto.roots, 64) : NULL;
    if (proto.roots == NULL) {
        cb_free(&d.allocator, f, sizeof *f);
        free_lock(&proto.lock, d.capacity, &d.allocator);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_follow_create: %u characters",
                            d.capacity);
    }
    *f = proto;
    *out = f;
    return CB_OK;
}

void cb_follow_destroy(cb_follow *f)
{
    if (f == NULL) {
        return;
    }
    cb_allocator a = f->allocator;
    free_lock(&f->lock, f->capacity, &a);
    cb_free(&a, f->roots, f->capacity * sizeof *f->roots);
    cb_free(&a, f, sizeof *f);
}

/* An angle wrapped into (-pi, pi]: a - n 2 pi, exactly, for the one integer n that lands there
 * (remainderf's exact result, its -pi moved to pi). The angles wrapped per frame are sums and
 * differences of wrapped angles, within (-3 pi, 3 pi]. For |a| <= 4 pi one subtraction of 2 pi
 * is exact (Sterbenz: a and 2 pi within a factor of 2 of each other); where it lands in
 * (-pi, pi], which is every a within (-3 pi, 3 pi], it gives remainderf's bits without a libm
 * call (a zero keeps a's sign, as remainderf's does). Anything else (3 pi to 4 pi, a multiple
 * turn, a host's heading, NaN) takes remainderf. Checked against the remainderf form on every
 * float within 6.5 pi of 0, the infinities, NaN and large values (docs/performance.md,
 * Session 6). */
static float wrap_angle(float a)
{
    const float two_pi = 2.0f * PI;
    if (a > -PI && a <= PI) {
        return a;
    }
    if (fabsf(a) <= 2.0f * two_pi) {
        float r = a > 0.0f ? a - two_pi : a + two_pi;
        if (r > -PI && r <= PI) {
            return r != 0.0f ? r : copysignf(0.0f, a);
        }
    }
    a = remainderf(a, two_pi);
    return a <= -PI ? a + two_pi : a;
}

static void set_yaw(cb_follow_root *root, float yaw)
{
    root->yaw = yaw;
    float s, c; /* detmath, not libm: the same bits on every machine (docs/architecture.md) */
    cb_det_sincosf(0.5f * yaw, &s, &c);
    root->rotation[0] = 0.0f;
    root->rotation[1] = s;
    root->rotation[2] = 0.0f;
    root->rotation[3] = c;
}

cb_result cb_follow_add(cb_follow *f, float phase, float heading_rad, cb_character *out)
{
    if (f == NULL || out == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(phase) || !isfinite(heading_rad)) {
        return CB_ERR_NOT_FINITE;
    }
    if (cb_crowd_count(f->crowd, f->kind) != f->count) {
        return CB_ERR_MISMATCH;
    }
    if (f->count == f->capacity) {
        return CB_ERR_CAPACITY;
    }
    cb_result r = cb_crowd_add(f->crowd, f->kind, phase, out);
    if (r != CB_OK) {
        return r;
    }
    uint32_t i = f->count++;
    cb_follow_root *root = &f->roots[i];
    memset(root, 0, sizeof *root);
    set_yaw(root, wrap_angle(heading_rad));
    root->stride = 1.0f;
    if (f->lock.on) {
        memset(&f->lock.feet[CB_FOLLOW_FEET * i], 0, CB_FOLLOW_FEET * sizeof *f->lock.feet);
        memset(&f->lock.fade[CB_FOLLOW_FEET * i], 0, CB_FOLLOW_FEET * sizeof *f->lock.fade);
        f->lock.seen[i] = 0;
    }
    return CB_OK;
}

cb_result cb_follow_remove(cb_follow *f, cb_character character)
{
    if (f == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    uint32_t kind, dense;
    cb_result r = cb_crowd_locate(f->crowd, character, &kind, &dense);
    if (r != CB_OK) {
        return r;
    }
    if (kind != f->kind) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (cb_crowd_count(f->crowd, f->kind) != f->count) {
        return CB_ERR_MISMATCH;
    }
    r = cb_crowd_remove(f->crowd, character);
    if (r != CB_OK) {
        return r;
    }
    /* The crowd moved its last character into the hole; so does the follower. */
    uint32_t last = --f->count;
    f->roots[dense] = f->roots[last];
    if (f->lock.on) {
        for (int foot = 0; foot < CB_FOLLOW_FEET; ++foot) {
            f->lock.feet[CB_FOLLOW_FEET * dense + foot] =
                f->lock.feet[CB_FOLLOW_FEET * last + foot];
            f->lock.fade[CB_FOLLOW_FEET * dense + foot] =
                f->lock.fade[CB_FOLLOW_FEET * last + foot];
        }
        f->lock.seen[dense] = f->lock.seen[last];
    }
    return CB_OK;
}

uint32_t cb_follow_count(const cb_follow *f)
{
    return f != NULL ? f->count : 0;
}

const cb_follow_root *cb_follow_roots(const cb_follow *f)
{
    return f != NULL ? f->roots : NULL;
}

/* The heading rule past its stand test (speed >= stand, follow > stand): towards `target`, the
 * velocity's angle, by the share of the way from stand to follow speed. */
static float heading_toward(float heading, float speed, float target, float stand, float follow)
{
    if (speed >= follow) {
        return target;
    }
    float share = (speed - stand) / (follow - stand);
    return wrap_angle(heading + share * wrap_angle(target - heading));
}

float cb_follow_heading(float heading, float vx, float vz, float stand, float follow)
{
    float speed = sqrtf(vx * vx + vz * vz);
    if (!(speed >= stand) || !(follow > stand)) {
        return heading;
    }
    /* The same atan2 as orientation warping's, so a heading along the velocity leaves it a
     * warp of exactly 0 (and the step skipped). */
    return heading_toward(heading, speed, cb_det_atan2f(vx, vz), stand, follow);
}

static const float *at(const float *base, size_t stride, uint32_t i)
{
    return (const float *)((const char *)base + (size_t)i * stride);
}

/* Whether every one of n packed floats is within most of 0 (NaN and the infinities are not):
 * one comparison a float, no branch, so that the compiler can take them a vector at a time. */
static bool packed_within(const float *x, size_t n, float most)
{
    int ok = 1;
    for (size_t j = 0; j < n; ++j) {
        ok &= fabsf(x[j]) <= most;
    }
    return ok != 0;
}

/* Every input checked before anything is written, so a failing update changes nothing. Packed
 * rows (the usual case) are first checked all at once; where that finds a bad value, or the rows
 * are strided, the loop below finds the first one and its code. */
static cb_result check_inputs(const cb_follow *f, const float *pos, const float *vel, size_t stride)
{
    size_t floats = 3 * (size_t)f->count;
    if (stride == 3 * sizeof(float) && packed_within(pos, floats, (float)MAX_COORDINATE) &&
        packed_within(vel, floats, (float)MAX_SPEED)) {
        return CB_OK;
    }
    for (uint32_t i = 0; i < f->count; ++i) {
        const float *p = at(pos, stride, i), *v = at(vel, stride, i);
        for (int k = 0; k < 3; ++k) {
            if (!isfinite(p[k]) || !isfinite(v[k])) {
                return CB_ERR_NOT_FINITE;
            }
            if (fabsf(p[k]) > (float)MAX_COORDINATE || fabsf(v[k]) > (float)MAX_SPEED) {
                return CB_ERR_INVALID_ARGUMENT;
            }
        }
    }
    return CB_OK;
}

/* The root's yaw as sine and cosine, from the half-angle quaternion (no trigonometry). */
static void yaw_sin_cos(const cb_follow_root *root, float *s, float *c)
{
    float sh = root->rotation[1], ch = root->rotation[3];
    *s = 2.0f * sh * ch;
    *c = ch * ch - sh * sh;
}

/* The crowd's columns foot locking reads and writes, fetched once per update: the root
 * placement and the weight (NULL: not named) the foot_lock step reads, and its outputs; the
 * follower's per-character lock state and the fade's step for this update. Held in locals, so
 * that the per-character loop does not reload them after each byte it writes (seen). */
typedef struct lock_frame {
    float *root_col[4], *weight_col;
    const float *locked_col[CB_FOLLOW_FEET], *failed_col[CB_FOLLOW_FEET];
    cb_follow_foot *feet;
    float *fade;
    uint8_t *seen;
    uint32_t leg[CB_FOLLOW_FEET];
    bool fades;      /* release_s > 0 */
    float fade_step; /* dt / release_s, where it fades */
} lock_frame;

static void lock_frame_init(const cb_follow *f, lock_frame *lf, float dt)
{
    const lock_state *k = &f->lock;
    lf->feet = k->feet;
    lf->fade = k->fade;
    lf->seen = k->seen;
    for (int foot = 0; foot < CB_FOLLOW_FEET; ++foot) {
        lf->leg[foot] = k->leg[foot];
    }
    lf->fades = k->release_s > 0.0f;
    lf->fade_step = lf->fades ? dt / k->release_s : 0.0f;
    for (int c = 0; c < 4; ++c) {
        lf->root_col[c] = cb_crowd_param_column(f->crowd, f->kind, k->p_root[c]);
    }
    lf->weight_col = k->weighted ? cb_crowd_param_column(f->crowd, f->kind, k->p_weight) : NULL;
    for (int foot = 0; foot < CB_FOLLOW_FEET; ++foot) {
        lf->locked_col[foot] = cb_crowd_param_column(f->crowd, f->kind, k->p_locked[foot]);
        lf->failed_col[foot] = cb_crowd_param_column(f->crowd, f->kind, k->p_failed[foot]);
    }
}

/* Character i's feet as the foot_lock step left them in the last update: the outputs' rises
 * counted, the world points noted. */
static void observe_step(const cb_follow *f, const lock_frame *lf, uint32_t i,
                         cb_follow_stats *stats)
{
    for (int foot = 0; foot < CB_FOLLOW_FEET; ++foot) {
        cb_follow_foot *ft = &lf->feet[CB_FOLLOW_FEET * i + foot];
        float *fade = &lf->fade[CB_FOLLOW_FEET * i + foot];
        bool locked = lf->locked_col[foot][i] == 1.0f, failed = lf->failed_col[foot][i] == 1.0f;
        if ((locked && !ft->locked) || (failed && ft->locked)) {
            /* a new lock, or one the step moved to where the leg got: the step's own point,
             * in the world (it reads the roots the follower writes). Not the foot's model
             * matrix: that read missed the caches at every lock of a large crowd
             * (docs/performance.md, session 16). */
            cb_crowd_foot_lock s = {{0.0f, 0.0f, 0.0f}, false, false};
            (void)cb_crowd_query_foot_lock(f->crowd, f->kind, lf->leg[foot], i, &s, NULL);
            memcpy(ft->lock, s.point, sizeof ft->lock); /* in range: checked at create */
        }
        stats->locks += locked && !ft->locked;
        stats->reach_failures += failed && !ft->failed;
        ft->locked = locked;
        ft->failed = failed;
        if (locked) {
            *fade = 1.0f;
        } else {
            *fade = lf->fades ? *fade - lf->fade_step : 0.0f;
            *fade = *fade > 0.0f ? *fade : 0.0f;
        }
        ft->weight = cb_fsmoothstep(*fade); /* the step's smoothstep; *fade is in [0, 1] */
    }
}

/* The playback rate for a commanded speed (follow.h): the gait's own rate for it, within the
 * bounds. */
static float warp_rate(const warp_state *w, float speed, cb_follow_stats *stats)
{
    float r = speed / w->gait;
    if (r < w->min_rate || r > w->max_rate) {
        stats->rate_clamped++;
        r = r < w->min_rate ? w->min_rate : w->max_rate;
    }
    return r;
}

/* The stride scale after this update (follow.h): towards 1 unless the rate was clamped at its
 * upper bound, else towards what the rate leaves of the speed, within the bound; moved by at
 * most rate_per_s x dt from the last one. */
static float stride_scale(const warp_state *w, const stride_state *t, float last, float speed,
                          float rate, float dt, cb_follow_stats *stats)
{
    float k = speed / (w->gait * rate);
    k = k > 1.0f ? k : 1.0f;
    k = k < t->max_scale ? k : t->max_scale;
    float step = k - last, most = t->rate * dt;
    k = last + (step > most ? most : step < -most ? -most : step);
    stats->stride_warped += k > 1.0f;
    return k;
}

/* Orientation warping (follow.h): the lower body's turn after this update, moved towards the
 * velocity's angle `target` (read where moving: speed >= stand and above 0) from the heading
 * `yaw`, within the limit, by at most rate x dt from the last turn. */
static float orient_turn(const orient_state *o, bool moving, float target, float yaw, float last,
                         float dt)
{
    float aim = 0.0f;
    if (moving) { /* standing: release */
        float a = wrap_angle(target - yaw);
        float most = o->max_angle;
        aim = a > most ? most : a < -most ? -most : a;
    }
    float step = aim - last, most = o->rate * dt;
    step = step > most ? most : step < -most ? -most : step;
    return last + step;
}

/* The arguments of an update checked, and every position and velocity (check_inputs), before
 * anything is written. */
static cb_result check_update(const cb_follow *f, const float *positions, const float *velocities,
                              size_t stride, float dt_s)
{
    if (!isfinite(dt_s)) {
        return CB_ERR_NOT_FINITE;
    }
    if (stride % sizeof(float) != 0) {
        return CB_ERR_MISALIGNED;
    }
    if (stride < 3 * sizeof(float) || dt_s < 0.0f || dt_s > 3600.0f) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    if (cb_crowd_count(f->crowd, f->kind) != f->count) {
        return CB_ERR_MISMATCH;
    }
    if (f->count == 0) {
        return CB_OK;
    }
    if (positions == NULL || velocities == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    return check_inputs(f, positions, velocities, stride);
}

/* The crowd's parameter columns an update writes (NULL where the feature is off), fetched once
 * per update and held in a local, as lock_frame is. */
typedef struct param_frame {
    float *left, *forward;         /* the velocity in the lower body's frame, at rate 1 */
    float *rate, *angle, *scale;   /* playback-rate, orientation and stride warping */
    float *dir_left, *dir_forward; /* the stride's direction: the velocity in the root's frame */
} param_frame;

static void param_frame_init(const cb_follow *f, param_frame *pf)
{
    cb_crowd *crowd = f->crowd;
    const uint32_t kind = f->kind;
    pf->left = cb_crowd_param_column(crowd, kind, f->p_left);
    pf->forward = cb_crowd_param_column(crowd, kind, f->p_forward);
    pf->rate = f->warp.on ? cb_crowd_param_column(crowd, kind, f->warp.p_rate) : NULL;
    pf->angle = f->orient.on ? cb_crowd_param_column(crowd, kind, f->orient.p_angle) : NULL;
    pf->scale = f->stride.on ? cb_crowd_param_column(crowd, kind, f->stride.p_scale) : NULL;
    pf->dir_left = f->stride.dir ? cb_crowd_param_column(crowd, kind, f->stride.p_dir[0]) : NULL;
    pf->dir_forward = f->stride.dir ? cb_crowd_param_column(crowd, kind, f->stride.p_dir[1]) : NULL;
}

/* The follower's settings, copied into a local for the loop: the stores into the crowd's
 * columns and the roots may alias the follower as far as the compiler knows, so it would load
 * them again for every character. */
typedef struct follow_settings {
    float stand, follow, max_turn, dt;
    warp_state warp;
    stride_state stride;
    orient_state orient;
} follow_settings;

/* The heading after this update: towards the velocity's angle `target` by the heading rule
 * (cb_follow_heading's), then within the turn limit from the last heading. */
static float next_yaw(const follow_settings *st, float last, float speed, bool moving, float target)
{
    float yaw = moving && st->follow > st->stand
                    ? heading_toward(last, speed, target, st->stand, st->follow)
                    : last;
    if (st->max_turn > 0.0f) {
        float turn = wrap_angle(yaw - last), most = st->max_turn * st->dt;
        turn = turn > most ? most : turn < -most ? -most : turn;
        yaw = wrap_angle(last + turn);
    }
    return yaw;
}

/* Orientation warping: the lower body's turn moved on (orient_turn) and written, and the
 * heading's sine and cosine (*s, *c) turned by it into the lower body's. */
static void turn_lower_body(const follow_settings *st, const param_frame *pf, cb_follow_root *root,
                            bool moving, float target, uint32_t i, float *s, float *c)
{
    root->warp_rad = orient_turn(&st->orient, moving, target, root->yaw, root->warp_rad, st->dt);
    pf->angle[i] = root->warp_rad;
    float sw, cw;
    cb_det_sincosf(root->warp_rad, &sw, &cw);
    float s2 = *s * cw + *c * sw, c2 = *c * cw - *s * sw;
    *s = s2;
    *c = c2;
}

/* Playback-rate and stride warping for the commanded speed, and the velocity parameters: with
 * warping the blend space is asked for the velocity at rate 1. */
static void write_speed(const follow_settings *st, const param_frame *pf, cb_follow_root *root,
                        float speed, uint32_t i, cb_follow_stats *stats)
{
    float inv = 1.0f;
    if (pf->rate != NULL) {
        float k = warp_rate(&st->warp, speed, stats);
        pf->rate[i] = k;
        root->stride = pf->scale != NULL ? stride_scale(&st->warp, &st->stride, root->stride, speed,
                                                        k, st->dt, stats)
                                         : 1.0f;
        inv = 1.0f / (k * root->stride);
    }
    if (pf->scale != NULL) {
        pf->scale[i] = root->stride;
    }
    pf->left[i] = root->left_mps * inv;
    pf->forward[i] = root->forward_mps * inv;
}

/* Character i follows position p and velocity v: its root placed and turned, its graph's
 * parameters written. */
static void follow_one(const follow_settings *st, const param_frame *pf, cb_follow_root *root,
                       const float *p, const float *v, uint32_t i, cb_follow_stats *stats)
{
    /* The speed and the velocity's angle once, for the heading and the lower body's turn
     * alike (the same atan2, so a heading along the velocity leaves a warp of exactly 0). */
    float speed = sqrtf(v[0] * v[0] + v[2] * v[2]);
    bool moving = speed >= st->stand;
    float target = moving ? cb_det_atan2f(v[0], v[2]) : 0.0f;
    set_yaw(root, next_yaw(st, root->yaw, speed, moving, target));
    memcpy(root->position, p, sizeof root->position);
    /* The character's forward axis is (sin yaw, 0, cos yaw) and its left (+X in the
     * model) is (cos yaw, 0, -sin yaw). */
    float s, c;
    yaw_sin_cos(root, &s, &c);
    root->speed_mps = speed;
    if (pf->dir_left != NULL) {
        /* The motion in the root's (the model's) frame, before any lower-body turn. */
        pf->dir_left[i] = v[0] * c - v[2] * s;
        pf->dir_forward[i] = v[0] * s + v[2] * c;
    }
    if (pf->angle != NULL) {
        turn_lower_body(st, pf, root, moving && speed > 0.0f, target, i, &s, &c);
    }
    root->forward_mps = v[0] * s + v[2] * c;
    root->left_mps = v[0] * c - v[2] * s;
    write_speed(st, pf, root, speed, i, stats);
}

/* The root placement the foot_lock step reads for character i, its weight on from the
 * character's first frame, and the character marked seen: from the next update on, the step's
 * outputs are its own. */
static void lock_write_root(const lock_frame *lf, const cb_follow_root *root, uint32_t i)
{
    for (int a = 0; a < 3; ++a) {
        lf->root_col[a][i] = root->position[a];
    }
    lf->root_col[3][i] = root->yaw;
    if (lf->weight_col != NULL) {
        lf->weight_col[i] = 1.0f;
    }
    lf->seen[i] = 1;
}

cb_result cb_follow_update(cb_follow *f, const float *positions, const float *velocities,
                           size_t stride_bytes, float dt_s)
{
    if (f == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t stride = stride_bytes != 0 ? stride_bytes : 3 * sizeof(float);
    cb_result r = check_update(f, positions, velocities, stride, dt_s);
    if (r != CB_OK || f->count == 0) {
        return r;
    }
    param_frame pf;
    param_frame_init(f, &pf);
    lock_frame lf = {.root_col = {NULL}}; /* filled when locking */
    const bool locking = f->lock.on;
    if (locking) {
        lock_frame_init(f, &lf, dt_s);
    }
    const follow_settings st = {f->stand, f->follow, f->max_turn, dt_s,
                                f->warp,  f->stride, f->orient};
    cb_follow_root *roots = f->roots;
    cb_follow_stats stats = f->stats;
    for (uint32_t i = 0, n = f->count; i < n; ++i) {
        if (locking && lf.seen[i] != 0) {
            observe_step(f, &lf, i, &stats);
        }
        follow_one(&st, &pf, &roots[i], at(positions, stride, i), at(velocities, stride, i), i,
                   &stats);
        if (locking) {
            lock_write_root(&lf, &roots[i], i);
        }
    }
    f->stats = stats;
    return CB_OK;
}

const cb_follow_foot *cb_follow_feet(const cb_follow *f)
{
    return f != NULL && f->lock.on ? f->lock.feet : NULL;
}

cb_follow_stats cb_follow_query_stats(const cb_follow *f)
{
    return f != NULL ? f->stats : (cb_follow_stats){0};
}

void cb_follow_root_matrix(const cb_follow_root *root, float out[16])
{
    float s, c; /* detmath, not libm: the same bits on every machine */
    cb_det_sincosf(root->yaw, &s, &c);
    const float m[16] = {
        c,
        0.0f,
        -s,
        0.0f, /* column 0: the model's +X (left) */
        0.0f,
        1.0f,
        0.0f,
        0.0f, /* column 1: up */
        s,
        0.0f,
        c,
        0.0f, /* column 2: forward */
        root->position[0],
        root->position[1],
        root->position[2],
        1.0f,
    };
    memcpy(out, m, sizeof m);
}
