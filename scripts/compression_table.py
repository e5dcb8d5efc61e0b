#!/usr/bin/env python3
"""The compressed-packs table of docs/performance.md (issue 13): imports every test asset with
and without compression, interleaved (three rounds; medians), and loads each pack with
`crowdblend bench --pack` five times each, interleaved (median of its 21 loads, and a W1-style
frame on the pack's clips; the medians of those),
then prints the table as Markdown.   usage: scripts/compression_table.py [BUILD_DIR (build/rel)]
With --clips (first argument): the per-clip table of docs/performance.md instead (every test asset
imported three times, the medians of compress_ms; bytes and errors are the same every time):
scripts/compression_table.py --clips [BUILD_DIR]"""
import json
import os
import statistics
import subprocess
import sys

CLIPS = "--clips" in sys.argv[1:2]
if CLIPS:
    sys.argv.pop(1)
CASES = [
    ("Fox (x0.01, metres)", "Fox/Fox.glb", ["--scale", "0.01"]),
    ("CesiumMan", "CesiumMan/CesiumMan.glb", []),
    ("CMU walk (BVH)", "CMU_walk_bvh/walk.bvh", ["--scale", "0.05644"]),
    ("RiggedFigure", "RiggedFigure/RiggedFigure.glb", []),
]
EXE = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "build/rel", "src/cli/crowdblend")
OUT = os.path.join(os.path.dirname(EXE), "..", "..", "compression-table")


def run(args):
    p = subprocess.run([EXE] + args, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def clip_table():
    """One row per clip of every test asset: frames and keys, raw and stored bytes, the shell
    error against its bound, the error against the source, and the compression time."""
    print("| asset | clip | frames = keys | raw | stored | ratio | shell mm (bound) "
          "| vs source mm | compress ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    raw = stored = 0
    for name, rel, extra in CASES + [("RiggedSimple", "RiggedSimple/RiggedSimple.glb", [])]:
        out = os.path.join(OUT, "clips.cbpack")
        reps = [run(["import", os.path.join("tests/data/assets", rel), "-o", out, "--json"] + extra)
                for _ in range(3)]
        for i, c in enumerate(reps[0]["clips"]):
            ms = statistics.median(r["clips"][i]["compress_ms"] for r in reps)
            raw += c["source_bytes"]
            stored += c["bytes"]
            print(f"| {name if i == 0 else ''} | {c['name']} | {c['frames']} = "
                  f"{c['compressed_keys']} | {c['source_bytes']:,} | {c['bytes']:,} "
                  f"| **{c['source_bytes'] / c['bytes']:.1f}x** "
                  f"| {c['compression_error_m'] * 1e3:.4f} ({c['compression_bound_m'] * 1e3:.3g}) "
                  f"| {c['max_error_m'] * 1e3:.3g} | {ms:.0f} |")
    print(f"\nAll clips: {raw:,} raw bytes, {stored:,} stored ({raw / stored:.1f}x)")


if CLIPS:
    os.makedirs(OUT, exist_ok=True)
    clip_table()
    sys.exit(0)


print("| asset | pack bytes raw | compressed | ratio | clips: raw keys -> stored (ratio) "
      "| max error raw / compressed (bound) | compression shell error | import ms raw / compressed "
      "| of which compressing ms | load ms raw / compressed "
      "| W1-style characters/s/core raw / compressed |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
os.makedirs(OUT, exist_ok=True)
for name, rel, extra in CASES:
    src = os.path.join("tests/data/assets", rel)
    packs = {m: os.path.join(OUT, name.split()[0] + "_" + m + ".cbpack") for m in ("raw", "z")}
    reps = {"raw": [], "z": []}
    for _ in range(3):
        for m in ("raw", "z"):
            flag = ["--no-compress"] if m == "raw" else []
            reps[m].append(run(["import", src, "-o", packs[m], "--json"] + extra + flag))
    # Five bench runs per pack, interleaved; the medians of their medians (a shared machine).
    runs = {"raw": [], "z": []}
    for _ in range(5):
        for m in ("raw", "z"):
            runs[m].append(run(["bench", "--pack", packs[m], "--json"]))
    bench = {m: {k: statistics.median(r[k] for r in runs[m])
                 for k in ("load_ms", "w1_characters_per_second_per_core")} for m in runs}
    info = run(["inspect", packs["z"], "--json"])
    size = {m: os.path.getsize(packs[m]) for m in packs}
    src_b = sum(c["source_bytes"] for c in info["clips"])
    stored = sum(c["bytes"] for c in info["clips"])
    err_raw = max(c["max_error_m"] for c in reps["raw"][0]["clips"])
    err_z = max(c["max_error_m"] for c in info["clips"])
    bound = max(c["error_bound_m"] for c in info["clips"])
    shell = max(c["compression_error_m"] for c in info["clips"])
    ms = {m: statistics.median(r["import_ms"] for r in reps[m]) for m in reps}
    zms = statistics.median(sum(c["compress_ms"] for c in r["clips"]) for r in reps["z"])
    print(f"| {name} | {size['raw']:,} | {size['z']:,} | {size['raw'] / size['z']:.1f}x "
          f"| {src_b:,} -> {stored:,} ({src_b / stored:.1f}x) "
          f"| {err_raw * 1e3:.3g} / {err_z * 1e3:.3g} mm ({bound * 1e3:.3g}) | {shell * 1e3:.3g} mm "
          f"| {ms['raw']:.0f} / {ms['z']:.0f} | {zms:.0f} | {bench['raw']['load_ms']:.2f} / "
          f"{bench['z']['load_ms']:.2f} | {bench['raw']['w1_characters_per_second_per_core']:,.0f} / "
          f"{bench['z']['w1_characters_per_second_per_core']:,.0f} |")
