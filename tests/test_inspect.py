#!/usr/bin/env python3
"""`crowdblend inspect`: runs the command and checks its output, printing TAP.

The JSON must have exactly the issue's shape,
  {"skeleton": {"joints": N, "names": [...], "parents": [...]},
   "clips": [{"name", "duration_s", "frames", "bytes", "root_speed_mps", "looping"}]},
and its values must agree with each other and with the embedded set's documented content.
Usage: test_inspect.py <path to the crowdblend command>
"""
import json
import math
import subprocess
import sys

EXE = sys.argv[1:]  # the command, after an emulator in a cross build
results = []


def check(ok, what):
    results.append((bool(ok), what))


def run(*args):
    return subprocess.run([*EXE, *args], capture_output=True, text=True, timeout=60)


proc = run("inspect", "--json")
check(proc.returncode == 0, "inspect --json exits 0")
try:
    doc = json.loads(proc.stdout)
except ValueError as e:
    doc = None
    check(False, f"inspect --json prints valid JSON ({e})")
if doc is not None:
    check(set(doc) == {"skeleton", "clips"}, "top level has exactly skeleton and clips")
    sk = doc.get("skeleton", {})
    check(set(sk) == {"joints", "names", "parents"}, "skeleton has exactly joints, names, parents")
    n = sk.get("joints")
    names, parents = sk.get("names", []), sk.get("parents", [])
    check(n == 64 and len(names) == n and len(parents) == n, "64 joints, 64 names, 64 parents")
    check(len(set(names)) == len(names) and all(isinstance(x, str) and x for x in names),
          "joint names are unique non-empty strings")
    check(parents[:1] == [-1] and all(isinstance(p, int) and -1 <= p < i
                                      for i, p in enumerate(parents)),
          "parents: -1 for the root, otherwise an earlier joint")
    want_joints = {"root", "pelvis", "spine_01", "head", "hand_l", "index_03_r", "foot_l", "ball_r"}
    check(want_joints <= set(names), "the documented joints are there")
    clips = doc.get("clips", [])
    keys = {"name", "duration_s", "frames", "bytes", "root_speed_mps", "looping"}
    check(len(clips) == 19, "19 clips")
    check(all(set(c) == keys for c in clips), "every clip has exactly the six fields")
    check(all(isinstance(c["name"], str) and isinstance(c["looping"], bool) and
              isinstance(c["frames"], int) and isinstance(c["bytes"], int) and
              isinstance(c["duration_s"], (int, float)) and
              isinstance(c["root_speed_mps"], (int, float)) for c in clips),
          "field types: string, numbers, integers, boolean")
    by = {c["name"]: c for c in clips}
    dirs = ["f", "fl", "l", "bl", "b", "br", "r", "fr"]
    want = ["idle"] + [f"walk_{d}" for d in dirs] + [f"run_{d}" for d in dirs] + \
        ["lean_add", "wave_upper"]
    check([c["name"] for c in clips] == want, "clip names in the documented order")
    check(all(c["looping"] for c in clips), "every embedded clip loops")
    # 30 Hz: frames - 1 intervals span the duration.
    check(all(abs((c["frames"] - 1) / c["duration_s"] - 30.0) < 1.5 for c in clips),
          "frames match the duration at about 30 Hz")
    # Memory: at least frames x 64 joints x 28 bytes.
    check(all(c["bytes"] >= c["frames"] * 64 * 28 for c in clips),
          "bytes cover frames x joints x 28 bytes")
    walks = [by[f"walk_{d}"]["root_speed_mps"] for d in dirs]
    runs = [by[f"run_{d}"]["root_speed_mps"] for d in dirs]
    check(all(1.2 < s < 1.6 for s in walks) and max(walks) - min(walks) < 0.05,
          f"walk root speeds about 1.4 m/s and equal ({min(walks):.3f}..{max(walks):.3f})")
    check(all(3.0 < s < 4.0 for s in runs) and max(runs) - min(runs) < 0.1,
          f"run root speeds about 3.5 m/s and equal ({min(runs):.3f}..{max(runs):.3f})")
    check(by["idle"]["root_speed_mps"] < 1e-6 and by["wave_upper"]["root_speed_mps"] < 1e-6,
          "idle and wave do not move")
    check(all(math.isfinite(c["duration_s"]) and c["duration_s"] > 0 for c in clips),
          "durations are positive")

text = run("inspect")
check(text.returncode == 0, "inspect exits 0")
out = text.stdout
check("64 joints" in out and all(name in out for name in ("walk_fl", "run_br", "lean_add")),
      "text output names the skeleton size and the clips")
check("  upperarm_l" in out and "hand_r" in out, "text output lists the hierarchy")
marker_lines = [l.split() for l in out.splitlines() if "foot_plant_l@" in l]
check(len(marker_lines) == 16 and all("foot_plant_r@0.500" in l and "foot_lift_l@" in " ".join(l)
                                      for l in marker_lines)
      and all("(event)" in l for l in out.splitlines() if "foot_lift" in l),
      "text output lists the 16 locomotion clips' foot markers, lifts as events")

bad = run("inspect", "--bogus")
check(bad.returncode == 2 and "--bogus" in bad.stderr and bad.stdout == "",
      "an unknown option exits 2 and names it on stderr")

print(f"1..{len(results)}")
for i, (ok, what) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {what}")
sys.exit(0 if all(ok for ok, _ in results) else 1)
