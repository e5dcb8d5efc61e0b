/* Characters that follow a simulation (crowdblend/follow.h): the root on the given position,
 * the heading along the velocity, the velocity in the character's frame into the graph's
 * parameters. It uses the crowd through its public API only; later features (playback-rate
 * and stride warping, foot locking) take their commands from here (docs/trajectories.md). */
#include <math.h>
#include <string.h>

#include "base/base_impl.h"
#include "crowdblend/follow.h"

struct cb_follow {
    cb_crowd *crowd;
    uint32_t kind;
    uint32_t capacity;
    uint32_t count;
    uint32_t p_right, p_forward;
    float stand, follow;
    cb_allocator allocator;
    cb_follow_root *roots; /* capacity, dense order: the heading lives in roots[i].yaw */
};

enum { MAX_COORDINATE = 1000000000, MAX_SPEED = 10000 };
static const float PI = 3.14159265358979f;

cb_follow_desc cb_follow_query_desc(const cb_follow_desc *desc)
{
    cb_follow_desc d = desc != NULL ? *desc : (cb_follow_desc){0};
    if (d.stand_speed_mps == 0.0f) {
        d.stand_speed_mps = CB_FOLLOW_DEFAULT_STAND_SPEED;
    }
    if (d.follow_speed_mps == 0.0f) {
        d.follow_speed_mps = 2.0f * d.stand_speed_mps;
    }
    return d;
}

/* The parameter `name`, or the first of two defaults the kind's graph has. */
static cb_result find_velocity_param(const cb_crowd *crowd, uint32_t kind, const char *name,
                                     const char *first, const char *second, const char *field,
                                     uint32_t *out, cb_error *err)
{
    const cb_graph *g = cb_crowd_graph(crowd, kind);
    const char *tried = name != NULL ? name : first;
    cb_result r = cb_graph_find_param(g, tried, out);
    if (r != CB_OK && name == NULL) {
        tried = second;
        r = cb_graph_find_param(g, tried, out);
    }
    if (r != CB_OK) {
        return name != NULL ? cb_error_set(err, CB_ERR_NOT_FOUND,
                                           "cb_follow_create: %s: the graph has no parameter '%s'",
                                           field, name)
                            : cb_error_set(err, CB_ERR_NOT_FOUND,
                                           "cb_follow_create: %s: the graph has neither '%s' nor "
                                           "'%s'; name the parameter",
                                           field, first, second);
    }
    if (cb_graph_param_type(g, *out) != CB_PARAM_FLOAT) {
        return cb_error_set(err, CB_ERR_MISMATCH, "cb_follow_create: %s: '%s' is not a float",
                            field, tried);
    }
    return CB_OK;
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
    return CB_OK;
}

cb_result cb_follow_create(const cb_follow_desc *desc, cb_follow **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_follow_create: desc or out is NULL");
    }
    cb_follow_desc d = cb_follow_query_desc(desc);
    cb_result r = check_desc(&d, err);
    uint32_t right = 0, forward = 0;
    if (r == CB_OK) {
        r = find_velocity_param(d.crowd, d.kind, d.right_param, "vx", "blend_0", "right_param",
                                &right, err);
    }
    if (r == CB_OK) {
        r = find_velocity_param(d.crowd, d.kind, d.forward_param, "vy", "blend_1", "forward_param",
                                &forward, err);
    }
    if (r == CB_OK && right == forward) {
        r = cb_error_set(err, CB_ERR_MISMATCH,
                         "cb_follow_create: right_param and forward_param are one parameter");
    }
    if (r != CB_OK) {
        return r;
    }
    cb_follow *f = cb_alloc_zeroed(&d.allocator, sizeof *f, 64);
    cb_follow_root *roots =
        f != NULL ? cb_alloc_zeroed(&d.allocator, d.capacity * sizeof *roots, 64) : NULL;
    if (roots == NULL) {
        cb_free(&d.allocator, f, sizeof *f);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_follow_create: %u characters",
                            d.capacity);
    }
    *f = (cb_follow){
        .crowd = d.crowd,
        .kind = d.kind,
        .capacity = d.capacity,
        .p_right = right,
        .p_forward = forward,
        .stand = d.stand_speed_mps,
        .follow = d.follow_speed_mps,
        .allocator = d.allocator,
        .roots = roots,
    };
    *out = f;
    return CB_OK;
}

void cb_follow_destroy(cb_follow *f)
{
    if (f == NULL) {
        return;
    }
    cb_allocator a = f->allocator;
    cb_free(&a, f->roots, f->capacity * sizeof *f->roots);
    cb_free(&a, f, sizeof *f);
}

/* An angle wrapped into (-pi, pi]. */
static float wrap_angle(float a)
{
    a = remainderf(a, 2.0f * PI);
    return a <= -PI ? a + 2.0f * PI : a;
}

static void set_yaw(cb_follow_root *root, float yaw)
{
    root->yaw = yaw;
    float h = 0.5f * yaw;
    root->rotation[0] = 0.0f;
    root->rotation[1] = sinf(h);
    root->rotation[2] = 0.0f;
    root->rotation[3] = cosf(h);
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
    cb_follow_root *root = &f->roots[f->count++];
    memset(root, 0, sizeof *root);
    set_yaw(root, wrap_angle(heading_rad));
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
    f->roots[dense] = f->roots[--f->count];
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

float cb_follow_heading(float heading, float vx, float vz, float stand, float follow)
{
    float speed = sqrtf(vx * vx + vz * vz);
    if (!(speed >= stand) || !(follow > stand)) {
        return heading;
    }
    float target = atan2f(vx, vz);
    if (speed >= follow) {
        return target;
    }
    float share = (speed - stand) / (follow - stand);
    return wrap_angle(heading + share * wrap_angle(target - heading));
}

static const float *at(const float *base, size_t stride, uint32_t i)
{
    return (const float *)((const char *)base + (size_t)i * stride);
}

/* Every input checked before anything is written, so a failing update changes nothing. */
static cb_result check_inputs(const cb_follow *f, const float *pos, const float *vel, size_t stride)
{
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

cb_result cb_follow_update(cb_follow *f, const float *positions, const float *velocities,
                           size_t stride_bytes)
{
    if (f == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    size_t stride = stride_bytes != 0 ? stride_bytes : 3 * sizeof(float);
    if (stride % sizeof(float) != 0) {
        return CB_ERR_MISALIGNED;
    }
    if (stride < 3 * sizeof(float)) {
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
    cb_result r = check_inputs(f, positions, velocities, stride);
    if (r != CB_OK) {
        return r;
    }
    float *right = cb_crowd_param_column(f->crowd, f->kind, f->p_right);
    float *forward = cb_crowd_param_column(f->crowd, f->kind, f->p_forward);
    for (uint32_t i = 0; i < f->count; ++i) {
        const float *p = at(positions, stride, i), *v = at(velocities, stride, i);
        cb_follow_root *root = &f->roots[i];
        set_yaw(root, cb_follow_heading(root->yaw, v[0], v[2], f->stand, f->follow));
        memcpy(root->position, p, sizeof root->position);
        /* The character's forward axis is (sin yaw, 0, cos yaw) and its left (+X in the
         * model) is (cos yaw, 0, -sin yaw); right is minus left. */
        float sh = root->rotation[1], ch = root->rotation[3];
        float s = 2.0f * sh * ch, c = ch * ch - sh * sh; /* from the half angle: no more trig */
        root->speed_mps = sqrtf(v[0] * v[0] + v[2] * v[2]);
        root->forward_mps = v[0] * s + v[2] * c;
        root->right_mps = -(v[0] * c - v[2] * s);
        right[i] = root->right_mps;
        forward[i] = root->forward_mps;
    }
    return CB_OK;
}

void cb_follow_root_matrix(const cb_follow_root *root, float out[16])
{
    float s = sinf(root->yaw), c = cosf(root->yaw);
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
