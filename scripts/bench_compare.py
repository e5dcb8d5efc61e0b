#!/usr/bin/env python3
"""Times `crowdblend bench` workloads for several builds or kernel sets side by side in one
run, interleaved, and prints the median ns per character of each with its ratio to the first
(docs/performance.md, issue 11). On a shared, noisy machine only figures taken this way
compare: a burst of load hits every variant of a round alike.

  scripts/bench_compare.py [--rounds 7] [--workloads W1,W2,W5] [--threads 1] [--scale 1]
                           LABEL=COMMAND [LABEL=COMMAND ...]

A COMMAND is a crowdblend command prefix, optionally with environment assignments first:
  "dispatch=build/rel/src/cli/crowdblend"  "sse4=env CROWDBLEND_ISA=sse4 build/rel/src/cli/crowdblend"
Each round runs every variant once, in an order rotated by the round.
"""
import argparse
import json
import statistics
import subprocess
import sys

from runspec import split_run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--workloads", default="W1,W2,W5")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    variants = [split_run(v) for v in a.variants]
    times = {}  # (label, workload) -> [ns per character]
    sums = {}   # workload -> {label: checksum}
    for r in range(a.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for label, argv, env in order:
            p = subprocess.run(argv + ["bench", "--json", "--workloads", a.workloads,
                                       "--threads", str(a.threads), "--scale", str(a.scale)],
                               capture_output=True, text=True, env=env, check=True)
            for w in json.loads(p.stdout)["workloads"]:
                times.setdefault((label, w["name"]), []).append(w["ns_per_character"])
                sums.setdefault(w["name"], {})[label] = w["checksum"]
        print("round %d/%d done" % (r + 1, a.rounds), file=sys.stderr)
    names = [n for n in a.workloads.split(",") if any(k[1] == n for k in times)]
    first = variants[0][0]
    # The median, and the fastest round: on a loaded machine the fastest is the one least
    # disturbed, and the two together show how much the load moved things.
    for title, pick in (("median", statistics.median), ("fastest round", min)):
        print("\n%s of %d rounds, ns per character (vs %s):\n" % (title, a.rounds, first))
        print("| variant | " + " | ".join(names) + " |")
        print("|---" * (len(names) + 1) + "|")
        for label, _, _ in variants:
            cells = []
            for n in names:
                m = pick(times[(label, n)])
                base = pick(times[(first, n)])
                cells.append("%.0f (%+.1f %%)" % (m, 100.0 * (m / base - 1.0)))
            print("| %s | %s |" % (label, " | ".join(cells)))
    for n in names:
        if len(set(sums[n].values())) > 1:
            print("checksums of %s differ: %s" % (n, sums[n]))


if __name__ == "__main__":
    main()
