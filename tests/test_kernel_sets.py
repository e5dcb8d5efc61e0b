#!/usr/bin/env python3
"""The kernel-set choice seen from outside (issue 11): `crowdblend info --json` under every
CROWDBLEND_ISA value. Each set this CPU runs can be forced and then reports its own width;
auto or no value gives the widest; a name that is not a set, or a set the library does not
carry, is refused (a warning on stderr, the widest set used). A library built for one set
reports it and ignores the variable. Prints TAP. Usage: test_kernel_sets.py [WRAPPER...] CMD"""
import json
import os
import subprocess
import sys

from tap import case, finish

CMD = sys.argv[1:]
WIDTH = {"portable": 4, "sse4": 4, "avx2": 8, "avx512": 16, "neon": 4}


def info(value):
    env = dict(os.environ)
    env.pop("CROWDBLEND_ISA", None)
    if value is not None:
        env["CROWDBLEND_ISA"] = value
    p = subprocess.run(CMD + ["info", "--json"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stderr


base, _ = info(None)
built = base["kernel_sets_built"].split(",")
runs = [s for s in base["kernel_sets_supported"].split(",") if s in built]
widest = runs[-1]


@case("no CROWDBLEND_ISA, empty or auto: the widest set this CPU runs")
def _():
    for value in [None, "", "auto"]:
        got, err = info(value)
        assert got["kernel_set"] == (widest if base["dispatch"] else base["kernel_set"]), got
        assert got["simd_width"] == WIDTH[got["kernel_set"]] or not got["dispatch"], got
        assert "warning" not in err, err


@case("every set this CPU runs can be forced, and reports its width")
def _():
    for s in runs:
        got, err = info(s)
        if base["dispatch"]:
            assert got["kernel_set"] == s and got["simd_width"] == WIDTH[s], got
            assert got["reason"] == "forced by CROWDBLEND_ISA=" + s, got
            assert "warning" not in err, err
        else:
            assert "ignored by a fixed build" in got["reason"], got


@case("a name that is no kernel set is refused, with a warning")
def _():
    got, err = info("avx9000")
    if base["dispatch"]:
        assert got["kernel_set"] == widest and "refused: not a kernel set" in got["reason"], got
        assert "warning" in err and "avx9000" in err, err


@case("a set the library does not carry is refused, with a warning")
def _():
    absent = [s for s in WIDTH if s not in built]
    assert absent, built
    got, err = info(absent[0])
    if base["dispatch"]:
        assert got["kernel_set"] == widest, got
        assert "does not carry it" in got["reason"] and "warning" in err, (got, err)


finish()
