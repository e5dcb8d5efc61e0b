#!/usr/bin/env python3
"""The per-asset table of docs/performance.md (issue 10): imports every test asset (median of
three imports), loads each pack (median of 21 loads) and runs a W1-style frame on its skeleton,
then prints the table as Markdown.   usage: scripts/asset_table.py [BUILD_DIR (build/rel)]"""
import json
import os
import statistics
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build/rel"
exe = os.path.join(build, "src/cli/crowdblend")
out = os.path.join(build, "asset-table")
os.makedirs(out, exist_ok=True)
cases = [
    ("Fox", "Fox/Fox.glb", []),
    ("Fox (x0.01, metres)", "Fox/Fox.glb", ["--scale", "0.01"]),
    ("CesiumMan", "CesiumMan/CesiumMan.glb", []),
    ("RiggedFigure", "RiggedFigure/RiggedFigure.glb", []),
    ("RiggedSimple", "RiggedSimple/RiggedSimple.glb", []),
    ("CMU walk (BVH)", "CMU_walk_bvh/walk.bvh", ["--scale", "0.05644"]),
]
print("| asset | joints | clip | keys (grid) | stored frames (rate) | pack bytes | max error / bound "
      "| import ms | load ms | import / load | W1-style characters/s/core |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for name, rel, extra in cases:
    pack = os.path.join(out, name.split()[0] + str(len(extra)) + ".cbpack")
    runs = []
    for _ in range(3):
        p = subprocess.run([exe, "import", os.path.join("tests/data/assets", rel), "-o", pack,
                            "--json"] + extra, capture_output=True, text=True, check=True)
        runs.append(json.loads(p.stdout))
    rep = runs[0]
    import_ms = statistics.median(r["import_ms"] for r in runs)
    b = json.loads(subprocess.run([exe, "bench", "--pack", pack, "--json"], capture_output=True,
                                  text=True, check=True).stdout)
    load_ms, cps = b["load_ms"], b["w1_characters_per_second_per_core"]
    for i, c in enumerate(rep["clips"]):
        grid = "none"
        if c["source_grid_hz"] > 0:
            grid = f"{c['source_grid_hz']:.3g} Hz" + ("" if c["source_even"] else ", uneven")
        err = f"{c['max_error_m'] * 1e3:.3g} / {c['error_bound_m'] * 1e3:.3g} mm"
        head = [name, str(rep["joints"])] if i == 0 else ["", ""]
        tail = ([f"{import_ms:.1f}", f"{load_ms:.3f}", f"{import_ms / load_ms:.0f}x",
                 f"{cps:,.0f}"] if i == 0 else ["", "", "", ""])
        cells = head + [c["name"], f"{c['source_keys']} ({grid})",
                        f"{c['frames']} ({c['rate_hz']:.1f} Hz)", str(c["bytes"]), err] + tail
        print("| " + " | ".join(cells) + " |")
