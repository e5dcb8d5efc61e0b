#!/usr/bin/env python3
"""Prints the polynomial coefficients used by src/simd/vmath.h (needs python3-mpmath).

Each function is reduced to a short interval and approximated there by a near-minimax
polynomial (mpmath.chebyfit: Chebyshev interpolation, within a few percent of minimax).
The printed error is the approximation error alone, before float rounding.
Run: python3 scripts/fit_vmath.py
"""
import mpmath as mp

mp.mp.dps = 40


def show(name, poly, err):
    coeffs = ", ".join(mp.nstr(c, 10, min_fixed=0, max_fixed=0) + "f" for c in poly)
    print(f"{name}: max error {mp.nstr(err, 3)}\n  highest degree first: {{{coeffs}}}")


# atan(a) = a * P(a^2) for a in [0, 1]: atan2 reduces to this range with min/max.
def atan_over_a(z):
    if z == 0:
        return mp.mpf(1)
    s = mp.sqrt(z)
    return mp.atan(s) / s


poly, err = mp.chebyfit(atan_over_a, [0, 1], 9, error=True)
show("atan(a)/a in a^2 on [0,1]", poly, err)

# log2(m) = t * P(t^2), t = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)).
tmax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)


def log2_over_t(z):
    if z == 0:
        return 2 / mp.log(2)
    t = mp.sqrt(z)
    return 2 * mp.atanh(t) / t / mp.log(2)


poly, err = mp.chebyfit(log2_over_t, [0, tmax**2], 4, error=True)
show("log2(m)/t in t^2 on [0, tmax^2] (error times tmax)", poly, err * tmax)

# 2^f for f in [-1/2, 1/2] (exp2 rounds its argument to the nearest integer).
poly, err = mp.chebyfit(lambda f: mp.power(2, f), [-0.5, 0.5], 7, error=True)
show("2^f on [-1/2, 1/2]", poly, err)

# sin(r) = r + r^3 S(r^2) and cos(r) = 1 - r^2 / 2 + r^4 C(r^2) for r in [-pi/4, pi/4]
# (src/simd/detmath.h: the scalar sine and cosine reduce by multiples of pi/2 to this range).
q = (mp.pi / 4) ** 2


def sin_tail(z):
    if z == 0:
        return mp.mpf(-1) / 6
    r = mp.sqrt(z)
    return (mp.sin(r) - r) / (r * z)


def cos_tail(z):
    if z == 0:
        return mp.mpf(1) / 24
    r = mp.sqrt(z)
    return (mp.cos(r) - 1 + z / 2) / (z * z)


poly, err = mp.chebyfit(sin_tail, [0, q], 3, error=True)
show("(sin(r) - r) / r^3 in r^2 on [0, (pi/4)^2] (error times (pi/4)^3)", poly, err * q * mp.sqrt(q))
poly, err = mp.chebyfit(cos_tail, [0, q], 3, error=True)
show("(cos(r) - 1 + r^2/2) / r^4 in r^2 on [0, (pi/4)^2] (error times (pi/4)^4)", poly, err * q * q)
