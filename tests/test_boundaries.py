#!/usr/bin/env python3
"""Module boundaries of src/ (docs/architecture.md, "Conventions"): a source file includes its
own module's headers, public headers, and of another module only the one documented internal
interface that module offers; an interface header includes nothing private either (so no
private layout leaks through it). The command path (the command and the offline libraries it
links: cli, serve, traj, measure, export, import) is a host of the runtime library: it may use
its own modules' headers among themselves, but of the library only the public API and the
header-only helpers (base's, simd/detmath.h). Only src/simd includes SIMDe and only src/jobs
(and the server's network thread, src/serve) <pthread.h>.
Prints TAP: one case per rule, the offending includes in the failure message."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# module -> the headers other modules may include (its internal interface)
INTERFACES = {
    "base": {"base_impl.h", "names.h", "scalar_math.h", "scalar_math_t.h", "prng.h"},
    # model_qts.h: the compact qts output's kernels, which the ltm job runs for QTS; dcol4.h:
    # four doubles, the root-motion blend's (assets/asset_layout.h)
    "simd": {"vf.h", "soa.h", "soa_mat.h", "vmath.h", "lane.h", "simd_kernels.h", "detmath.h",
             "vbits.h", "col4.h", "dcol4.h", "model_qts.h"},
    "assets": {"asset_layout.h"},
    "solvers": {"solver_kernels.h"},
    "params": {"params_kernels.h"},
    "pose": {"pose_kernels.h"},
    "ik": {"ik_kernels.h"},
    "ltm": {"ltm_kernels.h"},
    "graph": {"runtime.h"},
    # the pack reader and writer (src/io) check a stored compressed clip against its clip; the
    # pose jobs (src/pose) decode compressed keys in registers with the inline group decoder
    "compress": {"cclip_impl.h", "cclip_decode.h"},
}
# The command path: hosts of the library (public API plus the header-only helpers below), free
# to use each other's headers.
HOSTS = {"cli", "serve", "traj", "measure", "export", "import"}
HOST_HELPERS = {("base", "prng.h"), ("base", "base_impl.h"), ("simd", "detmath.h")}
PTHREAD = {"jobs", "serve"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def sources():
    for d, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith((".c", ".h")):
                path = os.path.join(d, f)
                yield os.path.relpath(path, ROOT), open(path, encoding="utf-8").read()


def main():
    cases = []
    crossing, simde, pthread, leaking = [], [], [], []
    for rel, text in sources():
        module = rel.split(os.sep)[0]
        for kind, inc in INCLUDE.findall(text):
            if kind == "<":
                if inc.startswith("simde/") and module != "simd":
                    simde.append(f"{rel}: <{inc}>")
                if inc == "pthread.h" and module not in PTHREAD:
                    pthread.append(f"{rel}: <{inc}>")
                continue
            parts = inc.split("/")
            if parts[0] == "crowdblend" or len(parts) < 2 or parts[0] == module:
                continue
            owner, header = parts[0], parts[-1]
            if module in HOSTS:
                allowed = owner in HOSTS or (owner, header) in HOST_HELPERS
            else:
                allowed = owner not in HOSTS and header in INTERFACES.get(owner, set())
            if not allowed:
                crossing.append(f"{rel}: \"{inc}\"")
        if os.path.basename(rel) in INTERFACES.get(module, set()):
            for kind, inc in INCLUDE.findall(text):
                parts = inc.split("/")
                if kind == '"' and parts[0] != "crowdblend" and \
                        parts[-1] not in INTERFACES.get(parts[0], set()):
                    leaking.append(f"{rel}: \"{inc}\"")
    cases.append(("a module includes of another only its documented interface", crossing))
    cases.append(("an interface header includes only public headers and interfaces", leaking))
    cases.append(("only src/simd includes SIMDe", simde))
    cases.append(("only src/jobs and src/serve include <pthread.h>", pthread))
    print(f"1..{len(cases)}")
    failed = 0
    for n, (name, bad) in enumerate(cases, 1):
        if bad:
            failed += 1
            print(f"not ok {n} - {name}")
            for b in sorted(bad):
                print(f"#   {b}")
        else:
            print(f"ok {n} - {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
