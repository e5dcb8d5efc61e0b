#!/usr/bin/env python3
"""`crowdblend bench` option checks: --layout applies to the workloads only, so with --pack
(a pack's own frame, always MAT4) or --kernels (no crowd) it is refused rather than ignored,
and a layout that is not mat4, mat3x4 or qts is refused whatever else is given; the workloads'
and the kernels' other options are refused with --pack (its figures are fixed), the workloads'
with --kernels and the kernels' without it. Exit 2 and a message naming the option and the
mode, nothing on stdout; the same options in the mode that reads them still run. The crowds'
stage split, which a profiled pass apart from the timed runs gives, is still in the JSON. Prints
TAP. Usage: test_cli_bench.py [WRAPPER...] CMD"""
import json
import os
import subprocess
import sys

from tap import case, finish

CMD = sys.argv[1:]
PACK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "packs", "fox.cbpack")


def bench(*args):
    return subprocess.run(CMD + ["bench"] + list(args), capture_output=True, text=True,
                          timeout=120)


def refused(p, *words):
    assert p.returncode == 2, "exit %d, want 2 (stderr %r)" % (p.returncode, p.stderr[-300:])
    assert p.stdout == "", "something was measured: %r" % p.stdout[:300]
    for w in words:
        assert w in p.stderr, "stderr %r lacks %r" % (p.stderr[-300:], w)


@case("--layout with --pack is refused (the pack's frame keeps MAT4)")
def _():
    for layout in ["qts", "mat3x4", "mat4"]:
        refused(bench("--pack", PACK, "--layout", layout), "--layout", "--pack")


@case("--layout with --kernels is refused (the kernels time no crowd)")
def _():
    refused(bench("--kernels", "--layout", "qts", "--elements", "16", "--samples", "1"),
            "--layout", "--kernels")


@case("an unknown --layout is refused before anything runs, with --kernels or --pack too")
def _():
    refused(bench("--layout", "mat5", "--workloads", "W1"), "--layout", "mat5")
    refused(bench("--kernels", "--layout", "mat5", "--elements", "16", "--samples", "1"),
            "--layout")
    refused(bench("--pack", PACK, "--layout", "mat5"), "--layout")


@case("the workloads' and the kernels' options with --pack are refused, even at their defaults")
def _():
    # The pack's bench has fixed figures (one thread, 1,000 and 10,000 characters, medians of
    # one run): before session 10 these ran it with exit 0, the option ignored. The values are
    # each option's default, so the refusal is of the option, not of its value.
    for args in (["--workloads", "W0,W1,W2,W5,W3,W4"], ["--threads", "0"], ["--scale", "1"],
                 ["--runs", "5"], ["--kernels"], ["--elements", "4096"], ["--samples", "11"]):
        refused(bench("--pack", PACK, *args), args[0], "--pack")
        refused(bench(*args, "--pack", PACK, "--json"), args[0], "--pack")


# What each mode reads (src/cli/cmd_bench.c): the kernels --elements, --samples, --json; the
# workloads --workloads, --threads, --scale, --runs, --layout, --json. Before session 11 the
# other mode's options ran it with exit 0, the option ignored. The values are each option's
# default, so the refusal is of the option, not of its value.
WORKLOAD_OPTIONS = (["--workloads", "W0,W1,W2,W5,W3,W4"], ["--threads", "0"], ["--scale", "1"],
                    ["--runs", "5"], ["--layout", "mat4"])
KERNEL_OPTIONS = (["--elements", "4096"], ["--samples", "11"])


@case("the workloads' options with --kernels are refused, naming the option and --kernels")
def _():
    for args in WORKLOAD_OPTIONS:
        refused(bench("--kernels", *args), args[0] + " is not for --kernels")
        refused(bench(*args, "--kernels", "--elements", "16", "--samples", "1", "--json"),
                args[0] + " is not for --kernels")


@case("the kernels' options without --kernels are refused, naming the option and the workloads")
def _():
    for args in KERNEL_OPTIONS:
        refused(bench(*args), args[0] + " is not for the workloads")
        refused(bench("--workloads", "W1", "--scale", "0.01", "--runs", "1", *args, "--json"),
                args[0] + " is not for the workloads")


@case("integer options take digits only, '-' first: spaces, '+', 0x refused, naming the option")
def _():
    # The one integer rule (src/cli/args.c cb_opts_parse); strtol took " 5" and "+5" as 5.
    # A '-' passes the syntax, and each option's range check refuses what it does not allow,
    # -1 here.
    for opt, mode in (("--runs", []), ("--threads", []), ("--elements", ["--kernels"]),
                      ("--samples", ["--kernels"])):
        for v in (" 5", "5 ", "+5", "0x5", "5e0", "5.0", "", "-", "--5", "5x", "-+5"):
            refused(bench(*mode, opt, v), opt + " expects an integer", "got '%s'" % v)
            refused(bench(*mode, "%s=%s" % (opt, v)), opt + " expects an integer")
        refused(bench(*mode, opt, "99999999999999999999"), opt, "out of range")
        refused(bench(*mode, opt, "-1"), opt + " must be in")


def ran(p):
    assert p.returncode == 0, "exit %d (stderr %r)" % (p.returncode, p.stderr[-300:])
    return json.loads(p.stdout)


@case("--workloads naming no workload is refused, naming it (it ran nothing and said nothing)")
def _():
    for which in ("W9", "w1", "", "W1,W2x", "W4/rbf"):
        refused(bench("--workloads", which, "--threads", "1", "--scale", "0.01", "--runs", "1"),
                "--workloads", "'%s' is no workload" % which.split(",")[-1])


@case("the header and the JSON name the kernel set in use, as `crowdblend info` does")
def _():
    info = subprocess.run(CMD + ["info", "--json"], capture_output=True, text=True, timeout=60)
    want = json.loads(info.stdout)["kernel_set"]
    w = ran(bench("--workloads", "W1", "--threads", "1", "--scale", "0.01", "--runs", "1",
                  "--json"))
    assert w["kernel_set"] == want, (w["kernel_set"], want)
    text = bench("--workloads", "W1", "--threads", "1", "--scale", "0.01", "--runs", "1")
    assert ("kernel set %s," % want) in text.stdout.splitlines()[0], text.stdout[:300]


@case("each mode still runs with every option it reads, and reports the values given")
def _():
    k = ran(bench("--kernels", "--elements", "16", "--samples", "3", "--json"))
    assert (k["elements"], k["samples"]) == (16, 3), k
    assert len(k["kernels"]) > 0 and all(r["simd_ns_per_item"] > 0 for r in k["kernels"]), k
    w = ran(bench("--workloads", "W1", "--threads", "1", "--scale", "0.01", "--runs", "2",
                  "--layout", "qts", "--json"))
    assert w["layout"] == "qts", w
    # W1 is 1,000 characters (W1-plain runs beside it, docs/performance.md): --scale 0.01, 10.
    w1 = [(r["threads"], r["runs"], r["characters"]) for r in w["workloads"] if r["name"] == "W1"]
    assert w1 == [(1, 2, 10)], w


STAGES = ["parameters", "weights", "time & sync", "sample+blend", "post-process",
          "local-to-model"]


@case("the crowds' stage split comes from a profiled pass: each crowd reports it, W1-plain none")
def _():
    # Since session 14 the timed crowd runs without its stage profiler and a second, profiled
    # crowd gives the split (src/cli/workloads.c profile_stages): the JSON must still carry it
    # for every crowd workload, consistent with itself, with the checksum of the timed crowd.
    w = ran(bench("--workloads", "W1,W6", "--threads", "1", "--scale", "0.01", "--runs", "1",
                  "--json"))
    by = {r["name"]: r for r in w["workloads"]}
    assert sorted(by) == ["W1", "W1-plain", "W6"], sorted(by)
    for name in ("W1", "W6"):
        st = by[name]["stages"]
        assert sorted(st) == sorted(STAGES), st
        ns = {k: st[k]["ns_per_character"] for k in STAGES}
        # Every stage the frame runs took time; W1 has no IK, so no post-process.
        for k in ("time & sync", "sample+blend", "local-to-model"):
            assert ns[k] > 0, (name, k, st)
        assert ns["post-process"] == 0 and st["post-process"]["share"] == 0, (name, st)
        total = sum(ns.values())
        for k in STAGES:
            # Shares are each stage's part of the sum (both printed rounded: 4 and 2 decimals).
            assert abs(st[k]["share"] - ns[k] / total) < 1e-3 + 0.005 / total, (name, k, st)
        assert abs(sum(st[k]["share"] for k in STAGES) - 1) < 1e-3, (name, st)
    assert all(v == {"ns_per_character": 0, "share": 0} for v in by["W1-plain"]["stages"].values())
    # The checksum is still the timed crowd's, after all its runs (tests/checksums.py relies on
    # it): one more run moves it, where the profiled pass always runs one run's frames.
    w2 = ran(bench("--workloads", "W1,W6", "--threads", "1", "--scale", "0.01", "--runs", "2",
                   "--json"))
    for r in w2["workloads"]:
        assert r["checksum"] != by[r["name"]]["checksum"], (r["name"], r["checksum"])


finish()
