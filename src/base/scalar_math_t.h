/* The scalar vector and quaternion functions, written once for a scalar type. Included by
 * base/scalar_math.h only, once per type, with these defined:
 *   SM_T        the scalar (float or double)
 *   SM_V, SM_Q  the vec3 and quaternion types
 *   SM_VMAKE    the vec3 constructor's name
 *   SM_VF(n), SM_QF(n), SM_SF(n)  the names of vec3, quaternion and scalar functions
 *   SM_SQRT, SM_SIN, SM_COS, SM_ACOS  the libm functions of the type
 *   SM_C(x)     a literal of the type
 *   SM_QUAT_MIN_LENGTH_SQ  squared lengths below which a quaternion normalizes to the identity
 *   SM_SLERP_NLERP_DOT     cosines above which slerp is nlerp (see SM_QF(slerp))
 * Quaternions are (x, y, z, w) with w real; a * b is the Hamilton product (b acts first). No
 * include guard: it is meant to be included more than once, and it undefines its parameters. */

typedef struct SM_V {
    SM_T x, y, z;
} SM_V;

typedef struct SM_Q {
    SM_T x, y, z, w;
} SM_Q;

/* ---- scalars ---- */

/* t clamped to [0, 1]; NaN counts as 0 (it fails the first test). */
SM_INLINE SM_T SM_SF(clamp01)(SM_T t)
{
    return !(t > SM_C(0.0)) ? SM_C(0.0) : t < SM_C(1.0) ? t : SM_C(1.0);
}

/* 3x^2 - 2x^3 on x clamped to [0, 1]: 0 and 1 with zero slope at the ends (crossfade progress,
 * the embedded gaits' heel and toe rolls). */
SM_INLINE SM_T SM_SF(smoothstep)(SM_T x)
{
    x = SM_SF(clamp01)(x);
    return x * x * (SM_C(3.0) - SM_C(2.0) * x);
}

/* ---- vec3 ---- */

SM_INLINE SM_V SM_VMAKE(SM_T x, SM_T y, SM_T z)
{
    return (SM_V){x, y, z};
}

SM_INLINE SM_V SM_VF(add)(SM_V a, SM_V b)
{
    return (SM_V){a.x + b.x, a.y + b.y, a.z + b.z};
}

SM_INLINE SM_V SM_VF(sub)(SM_V a, SM_V b)
{
    return (SM_V){a.x - b.x, a.y - b.y, a.z - b.z};
}

SM_INLINE SM_V SM_VF(scale)(SM_V a, SM_T s)
{
    return (SM_V){a.x * s, a.y * s, a.z * s};
}

SM_INLINE SM_T SM_VF(dot)(SM_V a, SM_V b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

SM_INLINE SM_V SM_VF(cross)(SM_V a, SM_V b)
{
    return (SM_V){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

SM_INLINE SM_T SM_VF(len)(SM_V a)
{
    return SM_SQRT(SM_VF(dot)(a, a));
}

SM_INLINE SM_V SM_VF(lerp)(SM_V a, SM_V b, SM_T t)
{
    return (SM_V){a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t};
}

/* a / |a|, with |a| through *len when len is not NULL; the zero vector for a zero input. */
SM_INLINE SM_V SM_VF(normalize_len)(SM_V a, SM_T *len)
{
    SM_T l = SM_VF(len)(a);
    if (len != NULL) {
        *len = l;
    }
    return l > SM_C(0.0) ? SM_VF(scale)(a, SM_C(1.0) / l) : (SM_V){0, 0, 0};
}

SM_INLINE SM_V SM_VF(normalize)(SM_V a)
{
    return SM_VF(normalize_len)(a, NULL);
}

/* a minus its component along the unit vector n. */
SM_INLINE SM_V SM_VF(reject)(SM_V a, SM_V n)
{
    return SM_VF(sub)(a, SM_VF(scale)(n, SM_VF(dot)(a, n)));
}

/* A unit vector perpendicular to the unit vector a: a x (the basis axis least aligned with a).
 * A fixed choice, so degenerate cases give the same answer every time. */
SM_INLINE SM_V SM_VF(any_perpendicular)(SM_V a)
{
    SM_T ax = a.x < 0 ? -a.x : a.x, ay = a.y < 0 ? -a.y : a.y, az = a.z < 0 ? -a.z : a.z;
    SM_V e = ax <= ay && ax <= az ? (SM_V){1, 0, 0} : ay <= az ? (SM_V){0, 1, 0} : (SM_V){0, 0, 1};
    return SM_VF(normalize)(SM_VF(cross)(a, e));
}

/* ---- quaternions ---- */

SM_INLINE SM_Q SM_QF(identity)(void)
{
    return (SM_Q){0, 0, 0, 1};
}

SM_INLINE SM_T SM_QF(dot)(SM_Q a, SM_Q b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

SM_INLINE SM_Q SM_QF(neg)(SM_Q q)
{
    return (SM_Q){-q.x, -q.y, -q.z, -q.w};
}

SM_INLINE SM_Q SM_QF(conj)(SM_Q q)
{
    return (SM_Q){-q.x, -q.y, -q.z, q.w};
}

/* Hamilton product: a * b rotates by b, then by a. */
SM_INLINE SM_Q SM_QF(mul)(SM_Q a, SM_Q b)
{
    return (SM_Q){
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    };
}

/* Unit length. A quaternion whose squared length is below SM_QUAT_MIN_LENGTH_SQ, infinite or
 * NaN has no direction and gives the identity, as every normalizing kernel of the library. */
SM_INLINE SM_Q SM_QF(normalize)(SM_Q q)
{
    SM_T len2 = SM_QF(dot)(q, q);
    if (!(len2 >= SM_QUAT_MIN_LENGTH_SQ) || !(len2 < (SM_T)INFINITY)) {
        return SM_QF(identity)();
    }
    SM_T inv = SM_C(1.0) / SM_SQRT(len2);
    return (SM_Q){q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}

/* q or -q, whichever has w >= 0 (the same rotation, by the shorter way from the identity). */
SM_INLINE SM_Q SM_QF(positive_w)(SM_Q q)
{
    return q.w < SM_C(0.0) ? SM_QF(neg)(q) : q;
}

/* q v q* for unit q: v + w t + u x t with u = q.xyz, t = 2 u x v. */
SM_INLINE SM_V SM_QF(rotate)(SM_Q q, SM_V v)
{
    SM_V u = {q.x, q.y, q.z};
    SM_V t = SM_VF(scale)(SM_VF(cross)(u, v), SM_C(2.0));
    return SM_VF(add)(SM_VF(add)(v, SM_VF(scale)(t, q.w)), SM_VF(cross)(u, t));
}

/* The rotation about a unit axis whose half-angle has cosine c and sine s. */
SM_INLINE SM_Q SM_QF(axis_half_angle)(SM_V axis, SM_T c, SM_T s)
{
    return (SM_Q){axis.x * s, axis.y * s, axis.z * s, c};
}

/* The rotation by `angle` radians about a unit axis. */
SM_INLINE SM_Q SM_QF(axis_angle)(SM_V axis, SM_T angle)
{
    SM_T h = SM_C(0.5) * angle;
    return SM_QF(axis_half_angle)(axis, SM_COS(h), SM_SIN(h));
}

/* The shortest rotation taking unit a to unit b: (a x b, 1 + a.b), normalized. 1 + a.b is
 * taken as |a + b|^2 / 2: near opposite vectors 1 + a.b cancels to a tiny number whose rounding
 * would tilt the result by about ulp / angle-from-opposite, while a + b is computed without
 * cancellation and its squared length is accurate to a few ulp however small. Exactly opposite
 * vectors turn by pi about a fixed perpendicular. */
SM_INLINE SM_Q SM_QF(from_to)(SM_V a, SM_V b)
{
    SM_V h = SM_VF(add)(a, b);
    SM_T w = SM_C(0.5) * SM_VF(dot)(h, h);
    if (w < SM_C(1e-12)) {
        SM_V n = SM_VF(any_perpendicular)(a);
        return (SM_Q){n.x, n.y, n.z, 0};
    }
    SM_V c = SM_VF(cross)(a, b);
    return SM_QF(normalize)((SM_Q){c.x, c.y, c.z, w});
}

/* (1 - t) a + t b on the shorter arc, normalized; t clamped to [0, 1] (NaN as 0). */
SM_INLINE SM_Q SM_QF(nlerp)(SM_Q a, SM_Q b, SM_T t)
{
    t = SM_SF(clamp01)(t);
    if (SM_QF(dot)(a, b) < SM_C(0.0)) {
        b = SM_QF(neg)(b);
    }
    SM_T u = SM_C(1.0) - t;
    return SM_QF(normalize)(
        (SM_Q){u * a.x + t * b.x, u * a.y + t * b.y, u * a.z + t * b.z, u * a.w + t * b.w});
}

/* nlerp(identity, q, w) on the shorter arc, w in [0, 1]: exactly q (w >= 0) at w = 1. */
SM_INLINE SM_Q SM_QF(weighted)(SM_Q q, SM_T w)
{
    q = SM_QF(positive_w)(q);
    if (w >= SM_C(1.0)) {
        return q;
    }
    return SM_QF(normalize)((SM_Q){w * q.x, w * q.y, w * q.z, SM_C(1.0) - w + w * q.w});
}

/* Slerp on the shorter arc (Shoemake 1985, "Animating rotation with quaternion curves"), the
 * textbook acos/sin form: the inputs are normalized, t clamped to [0, 1]. Where the cosine of
 * the half-angle exceeds SM_SLERP_NLERP_DOT, sin(theta) is too small to divide by and nlerp,
 * which differs by less than theta^3, is returned instead. */
SM_INLINE SM_Q SM_QF(slerp)(SM_Q a, SM_Q b, SM_T t)
{
    t = SM_SF(clamp01)(t);
    a = SM_QF(normalize)(a);
    b = SM_QF(normalize)(b);
    SM_T d = SM_QF(dot)(a, b);
    if (d < SM_C(0.0)) {
        b = SM_QF(neg)(b);
        d = -d;
    }
    if (d > SM_SLERP_NLERP_DOT) {
        return SM_QF(nlerp)(a, b, t);
    }
    SM_T theta = SM_ACOS(d);
    SM_T inv_sin = SM_C(1.0) / SM_SIN(theta);
    SM_T wa = SM_SIN((SM_C(1.0) - t) * theta) * inv_sin, wb = SM_SIN(t * theta) * inv_sin;
    return SM_QF(normalize)(
        (SM_Q){wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z, wa * a.w + wb * b.w});
}

/* The columns of R(q) S for a unit q and scale s: the linear part of a local matrix T R S
 * (Shoemake's quaternion-to-matrix formula; simd/soa_mat.h has its W-wide form, simd/col4.h its
 * 4-wide column form, both with these bits). */
SM_INLINE void SM_QF(scaled_columns)(SM_Q q, SM_V s, SM_V out[3])
{
    SM_T x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
    SM_T xx = q.x * x2, yy = q.y * y2, zz = q.z * z2, xy = q.x * y2, xz = q.x * z2, yz = q.y * z2;
    SM_T wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;
    out[0] = (SM_V){(SM_C(1.0) - (yy + zz)) * s.x, (xy + wz) * s.x, (xz - wy) * s.x};
    out[1] = (SM_V){(xy - wz) * s.y, (SM_C(1.0) - (xx + zz)) * s.y, (yz + wx) * s.y};
    out[2] = (SM_V){(xz + wy) * s.z, (yz - wx) * s.z, (SM_C(1.0) - (xx + yy)) * s.z};
}

#undef SM_T
#undef SM_V
#undef SM_Q
#undef SM_VMAKE
#undef SM_VF
#undef SM_QF
#undef SM_SF
#undef SM_SQRT
#undef SM_SIN
#undef SM_COS
#undef SM_ACOS
#undef SM_C
#undef SM_QUAT_MIN_LENGTH_SQ
#undef SM_SLERP_NLERP_DOT
