#!/usr/bin/env python3
"""One result everywhere (issue 11): the checksums of `crowdblend demo --json` and of the
`crowdblend bench --json` workloads W1, W2 and W5 (and W1, W2 with the compact output,
`--layout qts`) must be the same bits for every run given, all computed here, in this run
(nothing is compared with a stored value).

  checksums.py [--scale S] [--runs R] [--wrapper EMULATOR] [--each-set CMD] [LABEL=COMMAND ...]

A run is a label and a command prefix (split like a shell would), e.g.
  "avx2=env CROWDBLEND_ISA=avx2 build/x/src/cli/crowdblend"
  "aarch64 neon=env CROWDBLEND_ISA=neon qemu-aarch64 build/a/src/cli/crowdblend"
--each-set CMD adds one run of CMD per kernel set its library carries and this CPU runs
(CROWDBLEND_ISA set to each). --scale multiplies the workloads' sizes (emulators are slow);
--runs is the bench's runs per workload (default 5; the checksum is the crowd's output after
all of them, so every run given must use the same count).
Prints TAP: for every run that names a set, that the set asked for is the one that ran; then
for each workload, that every run gave the same checksum (the table of them when not).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from runspec import split_run  # noqa: E402


def run_json(cmd, args, env):
    p = subprocess.run(cmd + args, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd + args), p.returncode,
                                                p.stderr.strip()[-400:]))
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=5, dest="bench_runs")
    ap.add_argument("--each-set", action="append", default=[])
    ap.add_argument("--wrapper", default="", help="put in front of --each-set commands (qemu)")
    ap.add_argument("runs", nargs="*")
    a = ap.parse_args()

    runs = [split_run(r) for r in a.runs]
    for cmd in a.each_set:
        cmd = (a.wrapper + " " + cmd).strip()
        info = run_json(shlex.split(cmd), ["info", "--json"], dict(os.environ))
        built = info["kernel_sets_built"].split(",")
        supported = set(info["kernel_sets_supported"].split(","))
        tokens = shlex.split(cmd)
        for s in built:
            if s in supported:
                label = s if len(tokens) == 1 else "%s %s" % (os.path.basename(tokens[0]), s)
                runs.append(split_run("%s=env CROWDBLEND_ISA=%s %s" % (label, s, cmd)))

    results = []  # (ok, name, detail)
    sums = {}     # workload -> [(label, checksum)]
    chars = max(50, int(3000 * a.scale))
    seconds = "%g" % max(0.25, 2.0 * a.scale)
    for label, argv, env in runs:
        try:
            want = env.get("CROWDBLEND_ISA")
            if want:
                info = run_json(argv, ["info", "--json"], env)
                results.append((info["kernel_set"] == want,
                                "%s: the kernel set asked for runs (%s)" % (label, want),
                                info["reason"]))
            demo = run_json(argv, ["demo", "--json", "--characters", str(chars),
                                   "--seconds", seconds, "--threads", "2"], env)
            sums.setdefault("demo", []).append((label, demo["checksum"]))
            bench = run_json(argv, ["bench", "--json", "--workloads", "W1,W2,W5",
                                    "--threads", "1", "--scale", "%g" % a.scale,
                                    "--runs", str(a.bench_runs)], env)
            for w in bench["workloads"]:
                sums.setdefault(w["name"], []).append((label, w["checksum"]))
            if want:  # the reports name the set that ran, as info does
                results.append((demo["kernel_set"] == want and bench["kernel_set"] == want,
                                "%s: demo and bench report the set (%s)" % (label, want),
                                "demo %s, bench %s" % (demo["kernel_set"], bench["kernel_set"])))
            qts = run_json(argv, ["bench", "--json", "--workloads", "W1,W2", "--layout", "qts",
                                  "--threads", "1", "--scale", "%g" % a.scale,
                                  "--runs", str(a.bench_runs)], env)
            for w in qts["workloads"]:
                sums.setdefault(w["name"] + " qts", []).append((label, w["checksum"]))
        except (RuntimeError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
            results.append((False, "%s: runs" % label, str(e)))
    for name in ["demo", "W1", "W2", "W5", "W1 qts", "W2 qts"]:
        got = sums.get(name, [])
        values = {c for _, c in got}
        ok = len(got) == len(runs) and len(values) == 1
        table = "\n".join("%-24s %s" % (label, c) for label, c in got)
        results.append((ok, "%s: %d runs give one checksum %s" % (
            name, len(got), next(iter(values)) if len(values) == 1 else "(they differ)"), table))

    print("TAP version 13")
    print("1..%d" % len(results))
    for i, (ok, name, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        if not ok or name.startswith(("demo", "W")):
            for line in detail.splitlines():
                print("# " + line)
    sys.exit(0 if results and all(ok for ok, _, _ in results) else 1)


if __name__ == "__main__":
    main()
