#!/usr/bin/env python3
"""The importer against an independent reference (issue 10), printing TAP.

The reference is written here, with Python's standard library only: a glTF 2.0 (.glb) reader
(accessors, node TRS or matrices, skins, animation samplers with LINEAR, STEP and CUBICSPLINE
interpolation as the specification defines them, Appendix C for the spline) and a BVH reader
(hierarchy, channels in file order, frames; linear translation and slerp rotation between
frames). It evaluates the source animation in double precision and compares every joint's
model-space position with `crowdblend pose` at 80 times per clip; the pose must be within the
clip's error bound (the one the importer reports, 0.1 mm at human scale) plus the float32
rounding of the pose itself.

usage: test_import.py CROWDBLEND ASSET_DIR OUT_DIR [fidelity|damaged]
"""
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys

EXE, ASSETS, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
PART = sys.argv[4] if len(sys.argv) > 4 else "fidelity"
os.makedirs(OUT, exist_ok=True)
# Slow builds (CB_TEST_SCALE below 1: sanitizers, no optimization) run fewer damaged copies
# and skip compression where a check does not test it, so that each part stays well inside
# meson's default timeout there (issue 11); optimized builds run everything.
SLOW = float(os.environ.get("CB_TEST_SCALE", "1")) < 1.0
# Imports whose checks are not about compression (a flag, a warning, detected markers): raw in
# slow builds, where compressing the CMU walk costs about 6 s under the sanitizers.
RAW_WHERE_SLOW = ["--no-compress"] if SLOW else []

# The assets and how they are imported: CMU BVH units are 1/0.45 inch.
CASES = [
    ("RiggedSimple", "RiggedSimple/RiggedSimple.glb", []),
    ("RiggedFigure", "RiggedFigure/RiggedFigure.glb", []),
    ("CesiumMan", "CesiumMan/CesiumMan.glb", []),
    ("Fox", "Fox/Fox.glb", []),
    ("walk", "CMU_walk_bvh/walk.bvh", ["--scale", "0.05644"]),
]

results = []


def check(ok, name, detail=""):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}" + (f" # {detail}" if detail else ""))
    sys.stdout.flush()


def note(text):
    print(f"# {text}")
    sys.stdout.flush()


# ---- quaternions and matrices in double (x, y, z, w; column-major 4x4 as m[c][r]) -------------

def qnorm(q):
    n = math.sqrt(sum(c * c for c in q))
    return tuple(c / n for c in q)


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def qslerp(a, b, u):
    d = sum(x * y for x, y in zip(a, b))
    if d < 0:
        b = tuple(-c for c in b)
        d = -d
    d = min(1.0, d)
    th = math.acos(d)
    if th < 1e-12:
        wa, wb = 1 - u, u
    else:
        wa, wb = math.sin((1 - u) * th) / math.sin(th), math.sin(u * th) / math.sin(th)
    return qnorm(tuple(wa * x + wb * y for x, y in zip(a, b)))


def mat_trs(t, q, s):
    x, y, z, w = q
    r = [[1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)],
         [2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)],
         [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]]
    m = [[r[c][k] * s[c] for k in range(3)] + [0.0] for c in range(3)]
    m.append([t[0], t[1], t[2], 1.0])
    return m


def mat_mul(a, b):
    return [[sum(a[k][r] * b[c][k] for k in range(4)) for r in range(4)] for c in range(4)]


# ---- glTF --------------------------------------------------------------------------------------

class Gltf:
    def __init__(self, path):
        data = open(path, "rb").read()
        assert data[:4] == b"glTF"
        at, self.bin = 12, b""
        while at + 8 <= len(data):
            length, kind = struct.unpack_from("<II", data, at)
            chunk = data[at + 8:at + 8 + length]
            if kind == 0x4E4F534A:
                self.doc = json.loads(chunk)
            elif kind == 0x004E4942:
                self.bin = chunk
            at += 8 + length
        self.nodes = self.doc["nodes"]
        self.parent = {}
        for i, n in enumerate(self.nodes):
            for c in n.get("children", []):
                self.parent[c] = i

    def name(self, i):
        return self.nodes[i].get("name") or f"nodes[{i}]"

    def accessor(self, index):
        acc = self.doc["accessors"][index]
        view = self.doc["bufferViews"][acc["bufferView"]]
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc["type"]]
        ctype = acc["componentType"]
        fmt, size = {5126: ("f", 4), 5120: ("b", 1), 5121: ("B", 1), 5122: ("h", 2),
                     5123: ("H", 2)}[ctype]
        scale = {5126: None, 5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}[ctype]
        stride = view.get("byteStride", size * width)
        base = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        out = []
        for i in range(acc["count"]):
            vals = struct.unpack_from("<" + fmt * width, self.bin, base + i * stride)
            if scale:
                vals = tuple(max(v / scale, -1.0) for v in vals)
            out.append(vals if width > 1 else vals[0])
        return out

    def rest(self, i):
        n = self.nodes[i]
        if "matrix" in n:
            m = n["matrix"]
            return ("matrix", [m[0:4], m[4:8], m[8:12], m[12:16]])
        return ("trs", [tuple(n.get("translation", (0, 0, 0))),
                        qnorm(tuple(n.get("rotation", (0, 0, 0, 1)))),
                        tuple(n.get("scale", (1, 1, 1)))])

    def animation(self, index):
        """{node: {path: (interp, times, values, in, out)}} and the duration."""
        an = self.doc["animations"][index]
        chans, end = {}, 0.0
        for ch in an["channels"]:
            path = ch["target"]["path"]
            if path not in ("translation", "rotation", "scale"):
                continue
            s = an["samplers"][ch["sampler"]]
            interp = s.get("interpolation", "LINEAR")
            times = self.accessor(s["input"])
            out = self.accessor(s["output"])
            if interp == "CUBICSPLINE":
                vin, vals, vout = out[0::3], out[1::3], out[2::3]
            else:
                vin = vout = None
                vals = out
            chans.setdefault(ch["target"]["node"], {})[path] = (interp, times, vals, vin, vout)
            end = max(end, times[-1])
        return chans, end


def eval_sampler(interp, times, vals, vin, vout, t, quat):
    if t <= times[0] or len(times) == 1:
        v = vals[0]
    elif t >= times[-1]:
        v = vals[-1]
    else:
        k = max(i for i in range(len(times)) if times[i] <= t)
        dt = times[k + 1] - times[k]
        u = (t - times[k]) / dt
        if interp == "STEP":
            v = vals[k]
        elif interp == "CUBICSPLINE":
            u2, u3 = u * u, u * u * u
            h00, h10, h01, h11 = 2 * u3 - 3 * u2 + 1, u3 - 2 * u2 + u, -2 * u3 + 3 * u2, u3 - u2
            v = tuple(h00 * a + h10 * dt * b + h01 * c + h11 * dt * d
                      for a, b, c, d in zip(vals[k], vout[k], vals[k + 1], vin[k + 1]))
        elif quat:
            return qslerp(qnorm(vals[k]), qnorm(vals[k + 1]), u)
        else:
            v = tuple(a + (b - a) * u for a, b in zip(vals[k], vals[k + 1]))
    return qnorm(v) if quat else tuple(v)


def gltf_positions(g, chans, t):
    """Model-space position of every node at time t."""
    cache = {}

    def global_mat(i):
        if i in cache:
            return cache[i]
        kind, rest = g.rest(i)
        if kind == "matrix" and i not in chans:
            local = rest
        else:
            tr, q, s = rest if kind == "trs" else ((0, 0, 0), (0, 0, 0, 1), (1, 1, 1))
            c = chans.get(i, {})
            if "translation" in c:
                tr = eval_sampler(*c["translation"], t, False)
            if "rotation" in c:
                q = eval_sampler(*c["rotation"], t, True)
            if "scale" in c:
                s = eval_sampler(*c["scale"], t, False)
            local = mat_trs(tr, q, s)
        m = local if i not in g.parent else mat_mul(global_mat(g.parent[i]), local)
        cache[i] = m
        return m

    return {g.name(i): tuple(global_mat(i)[3][:3]) for i in range(len(g.nodes))}


def gltf_reference(path):
    g = Gltf(path)
    joints = {g.name(j) for j in g.doc["skins"][0]["joints"]}
    clips = []
    for a, an in enumerate(g.doc.get("animations", [])):
        chans, end = g.animation(a)
        name = an.get("name") or f"clip{a}"
        clips.append((name, end, lambda t, c=chans: gltf_positions(g, c, t), steps_of(chans)))
    return joints, clips


def steps_of(chans):
    """Key times where a STEP channel jumps."""
    out = set()
    for paths in chans.values():
        for interp, times, *_ in paths.values():
            if interp == "STEP":
                out.update(times[1:])
    return sorted(out)


# ---- BVH ---------------------------------------------------------------------------------------

def bvh_reference(path, scale):
    tokens = open(path).read().split()
    joints, stack, channels, at = [], [], [], 0
    while tokens[at] != "MOTION":
        tok = tokens[at]
        if tok in ("ROOT", "JOINT"):
            joints.append({"name": tokens[at + 1], "parent": stack[-1] if stack else None})
            at += 2
        elif tok == "End":
            joints.append({"name": None, "parent": stack[-1]})
            at += 2
        elif tok == "{":
            stack.append(len(joints) - 1)
            at += 1
        elif tok == "}":
            stack.pop()
            at += 1
        elif tok == "OFFSET":
            joints[-1]["offset"] = tuple(float(x) for x in tokens[at + 1:at + 4])
            at += 4
        elif tok == "CHANNELS":
            n = int(tokens[at + 1])
            joints[-1]["channels"] = tokens[at + 2:at + 2 + n]
            channels += [(len(joints) - 1, c) for c in tokens[at + 2:at + 2 + n]]
            at += 2 + n
        else:
            at += 1
    frames = int(tokens[at + 2])
    frame_time = float(tokens[at + 5])
    values = [float(x) for x in tokens[at + 6:]]
    width = len(channels)
    assert len(values) == frames * width

    def local(j, f):
        """Translation and rotation of joint j at frame f."""
        jt = joints[j]
        tr = list(jt.get("offset", (0, 0, 0)))
        q = (0.0, 0.0, 0.0, 1.0)
        for k, (cj, c) in enumerate(channels):
            if cj != j:
                continue
            v = values[f * width + k]
            if c.endswith("position"):
                tr["XYZ".index(c[0])] += v
            else:
                half = math.radians(v) / 2
                axis = [0.0, 0.0, 0.0]
                axis["XYZ".index(c[0])] = math.sin(half)
                q = qmul(q, (axis[0], axis[1], axis[2], math.cos(half)))
        return tuple(x * scale for x in tr), q

    def positions(t):
        x = t / frame_time
        f = min(int(math.floor(x)), frames - 1)
        u = x - f if f < frames - 1 else 0.0
        g = f + 1 if f < frames - 1 else f
        out, mats = {}, {}
        for j, jt in enumerate(joints):
            (ta, qa), (tb, qb) = local(j, f), local(j, g)
            tr = tuple(a + (b - a) * u for a, b in zip(ta, tb))
            m = mat_trs(tr, qslerp(qa, qb, u), (1, 1, 1))
            if jt["parent"] is not None:
                m = mat_mul(mats[jt["parent"]], m)
            mats[j] = m
            if jt["name"]:
                out[jt["name"]] = tuple(m[3][:3])
        return out

    names = {j["name"] for j in joints if j["name"]}
    return names, [("Motion", (frames - 1) * frame_time, positions, [])]


# ---- the command -------------------------------------------------------------------------------

def run(args, timeout=600):
    return subprocess.run([EXE] + args, capture_output=True, text=True, errors="replace",
                          timeout=timeout)


def import_asset(name, rel, extra):
    out = os.path.join(OUT, name + ".cbpack")
    p = run(["import", os.path.join(ASSETS, rel), "-o", out, "--json"] + extra)
    if p.returncode != 0:
        return None, p.stderr
    return out, json.loads(p.stdout)


def poses(pack, clip, times):
    p = run(["pose", pack, "--clip", clip, "--times", ",".join(f"{t:.9g}" for t in times),
             "--json"])
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return [json.loads(line) for line in p.stdout.splitlines()]


def compare(name, pack, report, joints, clips, convert=lambda p: p):
    info = json.loads(run(["inspect", pack, "--json"]).stdout)
    names = set(info["skeleton"]["names"])
    check(names == joints, f"{name}: the skeleton is the source's joints",
          f"{len(names)} joints" if names == joints else f"{sorted(names ^ joints)}")
    by_name = {c["name"]: c for c in info["clips"]}
    rng = random.Random(20261121)
    for clip, duration, ref, steps in clips:
        c = by_name.get(clip)
        if c is None:
            check(False, f"{name}/{clip}: in the pack")
            continue
        bound = c["error_bound_m"]
        h = c["duration_s"] / (c["frames"] - 1)
        times = [duration * k / 59 for k in range(60)] + [rng.uniform(0, duration)
                                                          for _ in range(20)]
        # A STEP key: the stored clip ramps over the frame interval around it (docs/import.md).
        times = [t for t in times if not any(abs(t - s) < h for s in steps)]
        worst, raw, where = 0.0, 0.0, ""
        for pose in poses(pack, clip, times):
            r = ref(pose["time_s"])
            for j in pose["joints"]:
                want = convert(r[j["name"]])
                # float32 rounding of the pose: positions are computed in float, about 1e-7 of
                # their size per step along the hierarchy; 1e-6 of the size is ample.
                scale = max(1.0, max(abs(x) for x in want))
                d = math.dist(j["position"], want)
                worst = max(worst, d - 1e-6 * scale)
                if d > raw:
                    raw, where = d, f"{j['name']} at {pose['time_s']:.4f} s"
        check(worst <= bound, f"{name}/{clip}: crowdblend pose at {len(times)} times within "
              f"{bound * 1e3:.3g} mm of the source", f"max {raw * 1e3:.4g} mm ({where}); "
              f"importer measured {c['max_error_m'] * 1e3:.4g} mm at {c['rate_hz']:.1f} Hz, "
              f"{c['frames']} frames, {c['bytes']} bytes")
        check(c["max_error_m"] <= bound, f"{name}/{clip}: the importer met its bound")


# ---- glTF variants with STEP and CUBICSPLINE samplers ------------------------------------------

def write_glb(doc, binary, path):
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    binary += b"\0" * (-len(binary) % 4)
    out = struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(js) + 8 + len(binary))
    out += struct.pack("<II", len(js), 0x4E4F534A) + js
    out += struct.pack("<II", len(binary), 0x004E4942) + binary
    open(path, "wb").write(out)


def variant(kind):
    """CesiumMan with every sampler STEP, or CUBICSPLINE with tangents written here."""
    src = os.path.join(ASSETS, "CesiumMan/CesiumMan.glb")
    g = Gltf(src)
    doc, binary = json.loads(json.dumps(g.doc)), bytearray(g.bin)
    for an in doc["animations"]:
        for s in an["samplers"]:
            s["interpolation"] = kind
            if kind != "CUBICSPLINE":
                continue
            times, vals = g.accessor(s["input"]), g.accessor(s["output"])
            width = len(vals[0])
            data = []
            for k, v in enumerate(vals):
                a, b = vals[max(k - 1, 0)], vals[min(k + 1, len(vals) - 1)]
                span = times[min(k + 1, len(vals) - 1)] - times[max(k - 1, 0)]
                tan = [0.4 * (y - x) / span for x, y in zip(a, b)]
                data += [tuple(tan), tuple(v), tuple(0.7 * x for x in tan)]
            off = len(binary)
            for e in data:
                binary += struct.pack("<" + "f" * width, *e)
            doc["bufferViews"].append({"buffer": 0, "byteOffset": off,
                                       "byteLength": len(binary) - off})
            doc["accessors"].append({"bufferView": len(doc["bufferViews"]) - 1,
                                     "componentType": 5126, "count": len(data),
                                     "type": "VEC4" if width == 4 else "VEC3"})
            s["output"] = len(doc["accessors"]) - 1
    doc["buffers"][0]["byteLength"] = len(binary)
    path = os.path.join(OUT, f"CesiumMan_{kind}.glb")
    write_glb(doc, bytes(binary), path)
    return path


def reversed_skin(name):
    """The asset with its first skin's joints listed in reverse, each inverse bind matrix moved
    with its joint: a skin that is not parents first, which the importer reorders."""
    g = Gltf(os.path.join(ASSETS, f"{name}/{name}.glb"))
    doc, binary = json.loads(json.dumps(g.doc)), bytearray(g.bin)
    skin = doc["skins"][0]
    acc = doc["accessors"][skin["inverseBindMatrices"]]
    view = doc["bufferViews"][acc["bufferView"]]
    assert acc["componentType"] == 5126 and view.get("byteStride", 64) == 64
    base = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    mats = [binary[base + 64 * i:base + 64 * (i + 1)] for i in range(acc["count"])]
    for i, m in enumerate(reversed(mats)):
        binary[base + 64 * i:base + 64 * (i + 1)] = m
    skin["joints"] = skin["joints"][::-1]
    path = os.path.join(OUT, f"{name}_reversed_skin.glb")
    write_glb(doc, bytes(binary), path)
    return path


def reordered():
    """Skins listed children first: the importer puts the joints parents first, each with its own
    inverse bind matrix (src/import/rig.c order_parents_first). RiggedSimple's and the Fox's skins
    list their joints by node index, which is the order the importer sorts into, so the reversed
    skin must give the pack fidelity() wrote, byte for byte."""
    for name in ("RiggedSimple", "Fox"):
        want = os.path.join(OUT, name + ".cbpack")
        pack, report = import_asset(f"{name}_reversed_skin", reversed_skin(name), [])
        if pack is None:
            check(False, f"{name} with its skin's joints reversed: imported", report)
            continue
        moved = any("reordered parents first" in w for w in report["warnings"])
        same = open(pack, "rb").read() == open(want, "rb").read()
        check(moved and same, f"{name} with its skin's joints reversed: reordered parents first, "
              f"the same pack as the source's", f"reordered {moved}, same bytes {same}")


def doubled_skin():
    """RiggedSimple's skin listing its joints eight times over (16 joints, 5 nodes), each with its
    inverse bind: a node cannot be two joints, so the import is refused with a message, not a
    crash (rig.c once copied the 16 joints into a list sized by the 5 nodes)."""
    g = Gltf(os.path.join(ASSETS, "RiggedSimple/RiggedSimple.glb"))
    doc, binary = json.loads(json.dumps(g.doc)), bytearray(g.bin)
    skin = doc["skins"][0]
    acc = doc["accessors"][skin["inverseBindMatrices"]]
    view = doc["bufferViews"][acc["bufferView"]]
    base = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    mats = bytes(binary[base:base + 64 * acc["count"]]) * 8
    doc["bufferViews"].append({"buffer": 0, "byteOffset": len(binary), "byteLength": len(mats)})
    binary += mats
    doc["accessors"].append({"bufferView": len(doc["bufferViews"]) - 1, "componentType": 5126,
                             "count": acc["count"] * 8, "type": "MAT4"})
    skin["inverseBindMatrices"] = len(doc["accessors"]) - 1
    skin["joints"] = skin["joints"] * 8
    doc["buffers"][0]["byteLength"] = len(binary)
    path, out = os.path.join(OUT, "doubled_skin.glb"), os.path.join(OUT, "doubled_skin.cbpack")
    write_glb(doc, bytes(binary), path)
    if os.path.exists(out):
        os.remove(out)
    p = run(["import", path, "-o", out])
    bone = g.name(g.doc["skins"][0]["joints"][0])
    check(p.returncode == 1 and f'lists bone "{bone}" twice' in p.stderr and
          "crashed" not in p.stderr and not os.path.exists(out),
          "a skin that lists a joint twice: refused (exit 1, the bone named), nothing written",
          f"exit {p.returncode}: {p.stderr.strip()[:300]}")


# ---- damaged files -----------------------------------------------------------------------------

def damaged():
    rng = random.Random(int(os.environ.get("CB_IMPORT_DAMAGED_SEED", "7")))
    crashes = []
    for name, rel, extra in CASES:
        data = open(os.path.join(ASSETS, rel), "rb").read()
        ext = os.path.splitext(rel)[1]
        # CB_IMPORT_DAMAGED raises the count for longer sweeps (docs/reliability.md); slow
        # builds take 10 of each kind.
        count = int(os.environ.get("CB_IMPORT_DAMAGED", "10" if SLOW else "25"))
        count = max(1, count // 4) if ext == ".bvh" else count
        lengths = sorted({0, 4, 12, 20, 100} | {rng.randrange(len(data)) for _ in range(count)})
        cases = [("truncated to %d bytes" % n, data[:n]) for n in lengths]
        for _ in range(count):
            b = bytearray(data)
            bit = rng.randrange(len(b) * 8)
            b[bit // 8] ^= 1 << (bit % 8)
            cases.append(("bit %d flipped" % bit, bytes(b)))
        bad = []
        outcomes = {"error": 0, "imported": 0}
        for what, blob in cases:
            path = os.path.join(OUT, "damaged" + ext)
            out = os.path.join(OUT, "damaged.cbpack")
            open(path, "wb").write(blob)
            if os.path.exists(out):
                os.remove(out)
            # A loose bound: this checks robustness, not fidelity, and keeps the rate search short.
            p = run(["import", path, "-o", out, "--max-error", "0.01"] + extra, timeout=900)
            if "crashed" in p.stderr:
                crashes.append(f"{name}: {what}")
            if p.returncode == 0:
                outcomes["imported"] += 1
                ok = run(["inspect", out, "--json"]).returncode == 0
            else:
                outcomes["error"] += 1
                ok = p.returncode == 1 and p.stderr.strip() != "" and not os.path.exists(out)
            if not ok:
                bad.append(f"{what}: exit {p.returncode}: {p.stderr.strip()[:200]}")
        check(not bad, f"{name}: {len(cases)} truncated and bit-flipped copies: an error or a "
              f"valid pack, never a crash of the command",
              f"{outcomes['error']} refused, {outcomes['imported']} imported" if not bad
              else "; ".join(bad[:3]))
    for c in crashes:
        note(f"assimp crashed (the command survived and said so): {c}")


def fidelity():
    for name, rel, extra in CASES:
        pack, report = import_asset(name, rel, extra)
        check(pack is not None, f"{name}: imported", "" if pack else report)
        if pack is None:
            continue
        path = os.path.join(ASSETS, rel)
        if rel.endswith(".bvh"):
            joints, clips = bvh_reference(path, 0.05644)
        else:
            joints, clips = gltf_reference(path)
        compare(name, pack, report, joints, clips)
    for kind in ("STEP", "CUBICSPLINE"):
        path = variant(kind)
        pack, report = import_asset(f"CesiumMan_{kind}", path, [])
        check(pack is not None, f"CesiumMan with {kind} samplers: imported",
              "" if pack else report)
        if pack is not None:
            joints, clips = gltf_reference(path)
            compare(f"CesiumMan_{kind}", pack, report, joints, clips)


# ---- compression (issue 13) ---------------------------------------------------------------------

def compression():
    """The packs fidelity() wrote are compressed (the default); the same imports with
    --no-compress keep raw frames. Per asset: both sizes, the compressed fields of inspect --json,
    and one raw pack checked against the source like the compressed ones."""
    for name, rel, extra in CASES:
        if name not in ("CesiumMan", "Fox", "walk", "RiggedFigure"):
            continue
        packed = os.path.join(OUT, name + ".cbpack")
        raw, raw_report = import_asset(name + "_raw", rel, extra + ["--no-compress"])
        if raw is None or not os.path.exists(packed):
            check(False, f"{name}: imported with and without compression", str(raw_report))
            continue
        zi = json.loads(run(["inspect", packed, "--json"]).stdout)
        ri = json.loads(run(["inspect", raw, "--json"]).stdout)
        zb, rb = os.path.getsize(packed), os.path.getsize(raw)
        clips_ok = all(c["compressed"] and c["bytes"] < c["source_bytes"] and
                       0 <= c["max_error_m"] <= c["error_bound_m"] and
                       c["compression_error_m"] <= c["compression_bound_m"]
                       for c in zi["clips"])
        check(clips_ok, f"{name}: inspect --json gives each compressed clip's bytes, source_bytes "
              "and max_error_m, within the bounds",
              "; ".join(f"{c['name']}: {c['bytes']} of {c['source_bytes']} bytes, "
                        f"{c['max_error_m'] * 1e3:.3g} mm (bound {c['error_bound_m'] * 1e3:.3g}), "
                        f"shell {c['compression_error_m'] * 1e3:.3g} mm" for c in zi["clips"]))
        # Issue 10's default bound holds for what the pack stores: a compressed clip is held to
        # the import bound itself (the raw import's error_bound_m), not to it plus the
        # compression's; compare() checks the pose against the source within it. RiggedFigure's
        # 3-key clip is the one whose compression had to be tightened (docs/import.md).
        rbound = {c["name"]: c["error_bound_m"] for c in ri["clips"]}
        check(all(c["error_bound_m"] == rbound.get(c["name"]) for c in zi["clips"]),
              f"{name}: the compressed clips are held to the import bound, as the raw ones",
              "; ".join(f"{c['name']}: {c['error_bound_m'] * 1e3:.3g} mm, raw "
                        f"{(rbound.get(c['name']) or 0) * 1e3:.3g} mm" for c in zi["clips"]))
        # Raw frames: 28 or 40 bytes per joint and frame (source_bytes counts 40), root track.
        frames_ok = all(c["bytes"] - (16 * c["frames"] if c["root_motion"] != "none" else 0)
                        in (c["source_bytes"], c["source_bytes"] * 28 // 40) for c in ri["clips"])
        check(frames_ok and not any(c["compressed"] for c in ri["clips"]),
              f"{name}: --no-compress keeps raw frames",
              "; ".join(f"{c['name']}: {c['bytes']} bytes" for c in ri["clips"]))
        # The pack is several times smaller (skeleton, inverse binds and root tracks stay raw;
        # RiggedFigure's 3-frame clip is a tenth of its pack, so it is not checked there).
        if name != "RiggedFigure":
            check(rb >= 4 * zb, f"{name}: the compressed pack is at least 4x smaller",
                  f"{rb} -> {zb} bytes ({rb / zb:.1f}x)")
        note(f"{name}: pack {rb} -> {zb} bytes ({rb / zb:.1f}x); clips "
             f"{sum(c['source_bytes'] for c in zi['clips'])} bytes as raw keys -> "
             f"{sum(c['bytes'] for c in zi['clips'])}; max error "
             f"{max(c['max_error_m'] for c in zi['clips']) * 1e3:.3g} mm; load "
             f"{ri['load_ms']:.2f} ms raw, {zi['load_ms']:.2f} ms compressed")
        if name == "CesiumMan":
            joints, clips = gltf_reference(os.path.join(ASSETS, rel))
            compare(name + " --no-compress", raw, raw_report, joints, clips)


# ---- options -----------------------------------------------------------------------------------

def options():
    """--up z, --clips, --loop / --no-loop, --markers, --detect-foot-plants, bad options."""
    # --up z: the file's +Z becomes +Y and -Y becomes +Z: (x, y, z) -> (x, z, -y).
    path = os.path.join(ASSETS, "RiggedSimple/RiggedSimple.glb")
    pack, report = import_asset("RiggedSimple_zup", "RiggedSimple/RiggedSimple.glb", ["--up", "z"])
    joints, clips = gltf_reference(path)
    compare("RiggedSimple --up z", pack, report, joints, clips,
            convert=lambda p: (p[0], p[2], -p[1]))
    # The JSON shapes of inspect and pose (issue 10).
    info = json.loads(run(["inspect", pack, "--json"]).stdout)
    keys = {"name", "duration_s", "bytes", "max_error_m", "looping", "frames", "rate_hz",
            "markers"}
    check(all(keys <= set(c) for c in info["clips"]) and "joints" in info["skeleton"],
          "inspect --json: each clip has name, duration_s, bytes, max_error_m, looping, ...",
          str(sorted(info["clips"][0])))
    pose = poses(pack, info["clips"][0]["name"], [0.5])[0]
    shape = all(set(j) == {"name", "parent", "position", "rotation"} and len(j["position"]) == 3
                and len(j["rotation"]) == 4 and abs(math.hypot(*j["rotation"]) - 1) < 1e-5
                for j in pose["joints"])
    check(shape and len(pose["joints"]) == len(info["skeleton"]["names"]),
          "pose --json: every joint with name, parent, position [x,y,z], rotation [x,y,z,w]")
    # --clips and --no-loop.
    fox = os.path.join(ASSETS, "Fox/Fox.glb")
    pack, report = import_asset("Fox_run", "Fox/Fox.glb", ["--clips", "Run", "--no-loop"])
    names = [c["name"] for c in report["clips"]]
    check(names == ["Run"] and not report["clips"][0]["looping"],
          "--clips Run --no-loop: one clamped clip", str(names))
    # --loop on a clip that does not loop: a warning names the seam.
    walk = os.path.join(ASSETS, "CMU_walk_bvh/walk.bvh")
    pack, report = import_asset("walk_loop", "CMU_walk_bvh/walk.bvh",
                                ["--scale", "0.05644", "--loop"] + RAW_WHERE_SLOW)
    check(report["clips"][0]["looping"] and any("seam" in w for w in report["warnings"]),
          "--loop on the CMU walk loops it and warns about the seam", str(report["warnings"]))
    # --markers: a sidecar file's markers land at their times.
    side = os.path.join(OUT, "fox_markers.json")
    json.dump({"Walk": [{"name": "step", "time_s": 0.25, "event_only": True},
                        {"name": "sniff", "time_s": 0.5}]}, open(side, "w"))
    pack, report = import_asset("Fox_markers", "Fox/Fox.glb", ["--markers", side])
    info = json.loads(run(["inspect", pack, "--json"]).stdout)
    walk_clip = [c for c in info["clips"] if c["name"] == "Walk"][0]
    got = {(m["name"], round(m["time_s"], 5), m["event_only"]) for m in walk_clip["markers"]}
    check(got == {("step", 0.25, True), ("sniff", 0.5, False)}, "--markers: sidecar markers stored",
          str(got))
    json.dump({"Trot": [{"name": "x", "time_s": 0.1}]}, open(side, "w"))
    p = run(["import", fox, "-o", os.path.join(OUT, "bad.cbpack"), "--markers", side])
    check(p.returncode == 1 and "Trot" in p.stderr, "--markers naming a missing clip is refused",
          p.stderr.strip())
    for args, what in ((["--skin", "3"], "--skin 3"), (["--clips", "Trot"], "Trot"),
                       (["--root", "nope"], "--root"), (["--root-motion", "sideways"], "--root-motion")):
        p = run(["import", fox, "-o", os.path.join(OUT, "bad.cbpack")] + args)
        check(p.returncode in (1, 2) and what.split()[0] in p.stderr,
              f"import {' '.join(args)}: refused with a message", p.stderr.strip()[:120])
    # The crash guard: an importer process that dies is reported, nothing is written.
    out = os.path.join(OUT, "crash.cbpack")
    p = subprocess.run([EXE, "import", fox, "-o", out], capture_output=True, text=True,
                       errors="replace", env=dict(os.environ, CB_IMPORT_SELFTEST_CRASH="1"))
    check(p.returncode == 1 and "crashed" in p.stderr and not os.path.exists(out)
          and not os.path.exists(out + ".tmp"),
          "an importer that crashes: the command survives, says so, writes nothing",
          p.stderr.strip()[:120])
    # A glTF skin without inverse bind matrices crashes assimp 5.2: refused before it is read.
    g = Gltf(fox)
    doc = json.loads(json.dumps(g.doc))
    del doc["skins"][0]["inverseBindMatrices"]
    path = os.path.join(OUT, "fox_no_ibm.glb")
    write_glb(doc, g.bin, path)
    p = run(["import", path, "-o", os.path.join(OUT, "bad.cbpack")])
    check(p.returncode == 1 and "inverseBindMatrices" in p.stderr and "crashed" not in p.stderr,
          "a skin without inverseBindMatrices is refused before assimp reads it",
          p.stderr.strip()[:120])
    p = run(["import", os.path.join(ASSETS, "README.md"), "-o", os.path.join(OUT, "bad.cbpack")])
    check(p.returncode == 1 and p.stderr.strip(), "a file assimp cannot read is refused",
          p.stderr.strip()[:120])


def number_rules():
    """`crowdblend pose --times` reads each time by the command line's one rule for numbers
    (cb_opts_decimal: no hexadecimal, inf, nan or spaces, which strtod takes), before the pack
    is loaded: a bad list is exit 2 naming the element, nothing on stdout. Each listed time gives
    the pose that `--time` gives. The committed Fox pack (tests/data/packs) stands in for an
    import. And the integer rule where a negative value is allowed (import --skin)."""
    pack = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "packs", "fox.cbpack")
    base = ["pose", pack, "--clip", "Walk", "--json"]
    # strtod read most of these as numbers (0x1 1, " 0.5" 0.5, 0x1.8p-1 0.75, 1e999 inf).
    for times, element in (("0x1", "0x1"), ("inf", "inf"), ("nan", "nan"), (" 0.5", " 0.5"),
                           ("0.5 ", "0.5 "), ("0.1,0x1.8p-1", "0x1.8p-1"), ("1e999", "1e999"),
                           ("0.1,abc", "abc"), ("0.1,,0.2", ""), ("0.5,", ""), ("", ""),
                           ("+-1", "+-1"), ("1e", "1e")):
        p = run(base + ["--times", times])
        check(p.returncode == 2 and p.stdout == "" and "--times expects decimal numbers" in
              p.stderr and f"'{element}' in '{times}'" in p.stderr,
              f"pose --times {times!r}: exit 2 naming {element!r}, no pose printed",
              f"exit {p.returncode}, {p.stderr.strip()!r}")
    for extra in (["--time", "0.2"], []):
        args = ["pose", pack, "--clip", "Walk", "--times", "0.1"] + extra + (
            ["--json"] if extra else [])
        p = run(args)
        check(p.returncode == 2 and p.stdout == "" and "--times prints one JSON object per time: "
              "it needs --json, and not --time" in p.stderr,
              f"pose --times {' '.join(extra) or 'without --json'}: refused, exit 2",
              f"exit {p.returncode}, {p.stderr.strip()!r}")
    # The one integer rule (src/cli/args.c): digits, '-' first. --skin allows -1 (the first
    # skin, its default), so a '-' reaches its range check: -1 goes on to read the (missing)
    # file, -2 is out of range; spaces and '+', which strtol took, are refused by the rule.
    missing = ["import", os.path.join(OUT, "missing.glb"), "-o", os.path.join(OUT, "bad.cbpack")]
    for skin, code, what in (("-1", 1, "missing.glb"), ("-2", 2, "--skin, --scale, --max-error "
                             "or --timeout is out of range"), (" 0", 2, "--skin expects an "
                             "integer"), ("+0", 2, "--skin expects an integer"),
                             ("-0x1", 2, "--skin expects an integer")):
        p = run(missing + ["--skin", skin])
        check(p.returncode == code and what in p.stderr,
              f"import --skin {skin!r}: exit {code}, {what!r}",
              f"exit {p.returncode}, {p.stderr.strip()!r}")
    texts = ["0.1", ".25", "2.5e-1", "-0", "7E-1"]
    p = run(base + ["--times", ",".join(texts)])
    lines = p.stdout.splitlines() if p.returncode == 0 else []
    same = len(lines) == len(texts)
    for text, line in zip(texts, lines):
        one = run(base + ["--time", text])
        got, want = json.loads(line), json.loads(one.stdout) if one.returncode == 0 else None
        same = same and got["time_s"] == float(text) and got == want
    check(same, "pose --times 0.1,.25,2.5e-1,-0,7E-1: one pose per time, each the pose of --time",
          f"exit {p.returncode}, {len(lines)} lines, {p.stderr.strip()!r}")


def plants():
    """Detected foot plants against the reference: at every plant the foot is low and still over
    the ground (the documented thresholds), and plants alternate left and right."""
    cases = [("walk", "CMU_walk_bvh/walk.bvh",
              ["--scale", "0.05644", "--detect-foot-plants", "LeftToeBase,RightToeBase"] +
              RAW_WHERE_SLOW,
              ("LeftToeBase", "RightToeBase")),
             ("Fox", "Fox/Fox.glb",
              ["--scale", "0.01", "--detect-foot-plants", "b_LeftFoot02_018,b_RightFoot02_022"],
              ("b_LeftFoot02_018", "b_RightFoot02_022"))]
    for name, rel, args, feet in cases:
        pack, report = import_asset(name + "_plants", rel, args)
        path = os.path.join(ASSETS, rel)
        info = json.loads(run(["inspect", pack, "--json"]).stdout)
        if path.endswith(".bvh"):
            _, clips = bvh_reference(path, 0.05644)
        else:
            _, clips = gltf_reference(path)
            scaled = []
            for n, d, ref, st in clips:
                scaled.append((n, d, lambda t, r=ref: {k: tuple(0.01 * x for x in v)
                                                         for k, v in r(t).items()}, st))
            clips = scaled
        height = info["skeleton"].get("height_m")
        for clip, duration, ref, _ in clips:
            if clip == "Survey":
                continue
            c = [x for x in info["clips"] if x["name"] == clip][0]
            marks = [m for m in c["markers"] if m["name"].startswith("foot_plant")]
            sides = [m["name"][-1] for m in marks]
            alternate = all(a != b for a, b in zip(sides, sides[1:]))
            if c["looping"] and len(sides) > 1:
                alternate = alternate and sides[0] != sides[-1]
            # At a plant the foot is near the ground under it (its lowest point within half a
            # second) and slow over the ground: checked loosely here (10 % of the figure's
            # height; the detector's own thresholds are 3 % and one height per second).
            bad = []
            for m in marks:
                foot = feet[0] if m["name"].endswith("l") else feet[1]
                t = m["time_s"]
                window = [ref(min(max(t + k / 60.0, 0.0), duration))[foot] for k in range(-30, 31)]
                ground = min(p[1] for p in window)
                if ref(t)[foot][1] - ground > 0.1 * height:
                    bad.append(f"{m['name']}@{t:.3f} is {ref(t)[foot][1] - ground:.3f} m up")
            check(len(marks) >= 2 and alternate and not bad,
                  f"{name}/{clip}: foot plants detected, alternating left and right, feet down",
                  " ".join(f"{m['name'][-1]}@{m['time']:.3f}" for m in marks) +
                  ("; " + "; ".join(bad) if bad else ""))


if PART == "damaged":
    damaged()
    number_rules()
else:
    fidelity()
    reordered()
    doubled_skin()
    compression()
    options()
    plants()
print(f"1..{len(results)}")
sys.exit(0 if all(results) else 1)
