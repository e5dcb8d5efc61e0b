#!/usr/bin/env python3
"""Turns one kernel set's static library into one object whose global symbols carry the set's
name, so that several sets can live in one library (issue 11, src/simd/meson.build).

  isa_rename.py --nm NM --objcopy OBJCOPY --set avx2 --input libcrowdblend_avx2.a
                --output crowdblend_avx2.o --map crowdblend_avx2.map --cc CC [ARGS...]

1. The archive's members are partially linked (cc -r) into one relocatable object, so the set
   is one file whose name the build knows in advance.
2. Every global symbol it defines is renamed, definitions and references alike:
   cb_<x> -> cb_<set>_<x>; a compiler-generated name (starting with "_", e.g. a sanitizer's)
   -> cb_<set>__<name>. Any other name breaks the project's naming rule (STYLE.md section 2:
   one prefix on every non-static symbol) and stops the build, because two sets would
   otherwise define it twice.
3. The map (old name, new name per line) is what scripts/gen_dispatch.py reads to forward the
   public entry points.
"""
import argparse
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", required=True)
    ap.add_argument("--objcopy", required=True)
    ap.add_argument("--set", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--cc", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()

    merged = a.output + ".merged.o"
    subprocess.run(a.cc + ["-r", "-nostdlib", "-o", merged, "-Wl,--whole-archive", a.input,
                           "-Wl,--no-whole-archive"], check=True)
    listing = subprocess.run([a.nm, "-P", "--defined-only", "-g", merged], check=True,
                             capture_output=True, text=True).stdout
    renames, bad = [], []
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name = fields[0]
        if name.startswith("cb_"):
            renames.append((name, "cb_" + a.set + "_" + name[3:]))
        elif name.startswith("_"):
            renames.append((name, "cb_" + a.set + "__" + name))
        else:
            bad.append(name)
    if bad:
        sys.exit("isa_rename: global symbols without the cb_ prefix (make them static or "
                 "prefix them): " + ", ".join(sorted(set(bad))))
    renames = sorted(set(renames))
    with open(a.map, "w") as f:
        f.writelines(f"{old} {new}\n" for old, new in renames)
    subprocess.run([a.objcopy, "--redefine-syms=" + a.map, merged, a.output], check=True)
    os.remove(merged)


if __name__ == "__main__":
    main()
