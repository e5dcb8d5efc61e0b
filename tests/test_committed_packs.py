#!/usr/bin/env python3
"""The committed packs are what the current importer writes (issue 13), printing TAP.

tests/data/packs/README.md names the command that wrote each committed pack
(`crowdblend import SOURCE -o tests/data/packs/NAME.cbpack ...`, in its first ```sh block).
This test runs exactly those commands with this build's binary, writing into OUT_DIR instead,
and compares the result with the committed file byte for byte. The stored form is independent
of the SIMD width and the import is deterministic, so any difference means the importer (or
the compressor) changed what it writes and the committed pack is stale: regenerate it with the
README's command (the failure prints the clips that differ). The packs of v1/ and v2/ are kept
on purpose as older writers made them and are not checked here.

usage: test_committed_packs.py CROWDBLEND SOURCE_ROOT OUT_DIR
"""
import json
import os
import shlex
import subprocess
import sys

EXE, ROOT, OUT = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
README = os.path.join(ROOT, "tests", "data", "packs", "README.md")
os.makedirs(OUT, exist_ok=True)
count = 0


def check(ok, name, detail=""):
    global count
    count += 1
    print(f"{'ok' if ok else 'not ok'} {count} - {name}" + (f" # {detail}" if detail else ""))
    sys.stdout.flush()
    return ok


def readme_commands():
    """The commands of the README's first ```sh block, continuation lines joined."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    start = text.index("```sh\n") + len("```sh\n")
    block = text[start:text.index("```", start)]
    return [shlex.split(c) for c in block.replace("\\\n", " ").splitlines() if c.strip()]


def clips(path):
    """Per clip what `inspect --json` says of its stored form, for a readable failure."""
    p = subprocess.run([EXE, "inspect", path, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return {"(inspect failed)": p.stderr.strip()[-200:]}
    keys = ("bytes", "compressed_keys", "compression_error_m", "max_error_m")
    return {c["name"]: {k: c.get(k) for k in keys} for c in json.loads(p.stdout)["clips"]}


commands = readme_commands()
check(len(commands) > 0 and all(c[:2] == ["crowdblend", "import"] for c in commands),
      "tests/data/packs/README.md names the import command of each committed pack",
      f"{len(commands)} commands")
for argv in commands:
    committed = argv[argv.index("-o") + 1]
    name = os.path.basename(committed)
    fresh = os.path.join(OUT, name)
    run = [EXE] + argv[1:]
    run[run.index("-o") + 1] = fresh
    p = subprocess.run(run, cwd=ROOT, capture_output=True, text=True)
    if not check(p.returncode == 0, f"{name}: the README's import command runs",
                 p.stderr.strip()[-300:]):
        continue
    with open(os.path.join(ROOT, committed), "rb") as f:
        old = f.read()
    with open(fresh, "rb") as f:
        new = f.read()
    detail = f"{len(new)} bytes"
    if old != new:
        a, b = clips(os.path.join(ROOT, committed)), clips(fresh)
        diff = {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}
        detail = (f"committed {len(old)} bytes, the importer writes {len(new)}; regenerate with "
                  f"the README's command; clips (committed, fresh): {diff}")
    check(old == new, f"{name}: the committed pack is byte for byte what the importer writes",
          detail)
print(f"1..{count}")
