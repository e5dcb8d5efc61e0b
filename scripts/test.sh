#!/bin/sh
# The README's test command: installs what is missing, then builds and runs every test in three
# configurations (native release, native debug with ASan+UBSan, isa=portable), the threading
# tests once more under ThreadSanitizer, and the checks that need a whole build (the demo,
# install + pkg-config, use as a meson subproject).
# Ends with one line "N passed, N failed" counting test cases over all configurations, and
# exits non-zero if anything failed.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)

if [ "${CB_SKIP_SETUP:-0}" != 1 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        scripts/setup.sh || exit 1
    else
        sudo scripts/setup.sh || exit 1
    fi
fi

PASSED=0
FAILED=0
FAILURES=""

add_counts() { # passed failed label
    PASSED=$((PASSED + $1))
    FAILED=$((FAILED + $2))
    if [ "$2" -gt 0 ]; then
        FAILURES="$FAILURES
  $3"
    fi
}

check() { # label command...: one script-level check counts as one test
    label=$1
    shift
    log="$ROOT/build/check-$(echo "$label" | tr ' /' '__').log"
    if "$@" >"$log" 2>&1; then
        echo "  ok   $label"
        add_counts 1 0 "$label"
    else
        echo "  FAIL $label (log: $log)"
        tail -n 20 "$log" | sed 's/^/       /'
        add_counts 0 1 "$label"
    fi
}

# Counts TAP cases in meson's test log: "ok N" passes, "not ok N" fails; a test program that
# failed without printing a failing case (a crash, a timeout) counts as one failure.
count_log() { # builddir label
    python3 - "$1/meson-logs/testlog.json" "$2" <<'PY'
import json, re, sys
path, label = sys.argv[1], sys.argv[2]
passed = failed = 0
names = []
try:
    lines = open(path).read().splitlines()
except OSError:
    lines = []
for line in lines:
    if not line.strip():
        continue
    t = json.loads(line)
    out = t.get("stdout") or ""
    ok = len(re.findall(r"^ok \d+", out, re.M))
    bad = len(re.findall(r"^not ok \d+", out, re.M))
    if ok == 0 and bad == 0:
        ok, bad = (1, 0) if t["result"] == "OK" else (0, 1)
    elif t["result"] not in ("OK", "SKIP") and bad == 0:
        bad = 1
    passed += ok
    failed += bad
    if bad:
        names.append(f'{label}: {t["name"]} ({t["result"]})')
print(passed, failed, "|".join(n.replace(" ", "~") for n in names) or "-")
PY
}

run_config() { # name meson-options...   (TEST_SUITES, when set, limits meson test to them)
    name=$1
    shift
    dir="build/test-$name"
    echo "== $name: $*"
    if [ -f "$dir/build.ninja" ]; then
        meson configure "$dir" "$@" >/dev/null || { add_counts 0 1 "$name: configure"; return; }
    else
        meson setup "$dir" "$@" >"build/setup-$name.log" 2>&1 ||
            { cat "build/setup-$name.log"; add_counts 0 1 "$name: configure"; return; }
    fi
    if ! meson compile -C "$dir" >"build/compile-$name.log" 2>&1; then
        tail -n 40 "build/compile-$name.log"
        add_counts 0 1 "$name: build"
        return
    fi
    rm -f "$dir/meson-logs/testlog.json"
    suites=""
    for s in ${TEST_SUITES:-}; do suites="$suites --suite $s"; done
    # shellcheck disable=SC2086
    meson test -C "$dir" --print-errorlogs --no-rebuild --num-processes 2 $suites |
        grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Timeout:" | sed 's/^/  /'
    set -- $(count_log "$dir" "$name")
    echo "  $name: $1 passed, $2 failed"
    add_counts "$1" "$2" "$(echo "$3" | sed 's/|/\n  /g; s/~/ /g')"
}

mkdir -p build
COMMON="-Dwerror=true -Dtests=enabled"
run_config release $COMMON -Dbuildtype=release -Disa=native -Dbench=enabled -Dprefix="$ROOT/build/stage"
run_config sanitize $COMMON -Dbuildtype=debug -Disa=native -Db_sanitize=address,undefined \
    -Dc_args=-fno-sanitize-recover=all -Dbench=disabled
run_config portable $COMMON -Dbuildtype=release -Disa=portable -Dbench=disabled
TEST_SUITES="jobs" run_config tsan $COMMON -Dbuildtype=debugoptimized -Disa=native \
    -Db_sanitize=thread -Dbench=disabled -Dcli=disabled

echo "== whole-build checks"
check "demo runs (scripts/demo.sh)" env CB_SKIP_SETUP=1 CB_DEMO_QUICK=1 scripts/demo.sh
check "example graphs run from their files (crowdblend demo --graph)" sh -c '
    set -e
    for f in examples/graphs/*.json; do
        build/test-release/src/cli/crowdblend demo --graph "$f" --characters 300 --seconds 1 \
            --json | python3 -c "import json, sys; d = json.load(sys.stdin); \
assert d[\"characters_per_second\"] > 0, d"
    done'
check "install + pkg-config consumer" sh -c '
    set -e
    rm -rf build/stage
    meson install -C build/test-release --quiet
    pc=$(find build/stage -name crowdblend.pc | head -n 1)
    export PKG_CONFIG_PATH=$(dirname "$pc")
    cc -std=c11 -Wall -Werror tests/consumer/main.c $(pkg-config --cflags --libs crowdblend) -lm \
        -o build/stage/consumer
    LD_LIBRARY_PATH=$(dirname "$(find build/stage -name "libcrowdblend.so" | head -n 1)") \
        build/stage/consumer'
check "meson subproject consumer" sh -c '
    set -e
    d=build/subproject-consumer
    rm -rf "$d" && mkdir -p "$d/subprojects"
    cp tests/consumer/meson.build tests/consumer/main.c "$d/"
    ln -s "$PWD" "$d/subprojects/crowdblend"
    meson setup "$d/build" "$d" >/dev/null
    meson test -C "$d/build" --quiet'

# Issue 12: the glTF that `crowdblend animate --out` writes, through the Khronos validator (npm ci installs it
# from tests/gltf's package-lock.json).
check "crowdblend animate --out validates (Khronos glTF validator)" sh -c '
    set -e
    (cd tests/gltf && npm ci --no-audit --no-fund --loglevel=error)
    cb=build/test-release/src/cli/crowdblend
    d=build/gltf-check && rm -rf "$d" && mkdir -p "$d"
    $cb animate tests/data/trajectories/crowdit.csv.gz --seconds 6 --out "$d/crowdit.glb"
    $cb animate tests/data/trajectories/vadere_bottleneck_postvis.traj --seconds 4 \
        --graph locomotion_8dir --out "$d/vadere.gltf" --out-rate 30
    node tests/gltf/validate.mjs "$d/crowdit.glb" --agents 20
    node tests/gltf/validate.mjs "$d/vadere.gltf" --agents 20'
# `crowdblend serve` (issue 14; docs/serve.md): the viewer in
# headless Chromium (end to end, and the skinned-glTF fixture), and the load test; each on the
# release build. Under 5 minutes together on this machine.
if [ -x build/test-release/src/cli/crowdblend ] && build/test-release/src/cli/crowdblend serve --help >/dev/null 2>&1; then
    echo "== crowdblend serve"
    if [ ! -d web/node_modules ]; then
        (cd web && npm ci --no-audit --no-fund --loglevel=error) >build/npm-ci.log 2>&1 ||
            echo "  npm ci failed (log: build/npm-ci.log)"
    fi
    cb=build/test-release/src/cli/crowdblend
    check "serve: browser end to end (headless chromium; build/serve-e2e.png)" \
        node web/tests/e2e.mjs "$cb" build/serve-e2e.png
    check "serve: skinned glTF fixture in the browser (build/serve-mesh.png)" \
        node web/tests/mesh.mjs "$cb" tests/data/assets/CesiumMan/CesiumMan.glb build/serve-mesh.png
    check "serve: load, 8 clients x 10 s x 1,000 characters" node web/tests/load.mjs "$cb" 10
    if [ -x build/test-sanitize/src/cli/crowdblend ]; then
        check "serve: bad clients against the ASan+UBSan server" env \
            ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
            node web/tests/e2e.mjs build/test-sanitize/src/cli/crowdblend --no-browser
    fi
fi
# issue 10: packs and real assets.
check "committed packs give bit-identical samples in the W=16, sanitized and W=4 builds" sh -c '
    set -e
    for c in release sanitize portable; do
        test -s build/test-$c/tests/pack_samples.txt
    done
    grep -q fox.cbpack build/test-release/tests/pack_samples.txt
    cmp build/test-release/tests/pack_samples.txt build/test-sanitize/tests/pack_samples.txt
    cmp build/test-release/tests/pack_samples.txt build/test-portable/tests/pack_samples.txt'
check "the Fox runs from its pack (crowdblend import, then demo --pack --graph)" sh -c '
    set -e
    cb=build/test-release/src/cli/crowdblend
    $cb import tests/data/assets/Fox/Fox.glb -o build/fox.cbpack --scale 0.01 \
        --detect-foot-plants b_LeftFoot02_018,b_RightFoot02_022
    $cb demo --pack build/fox.cbpack --graph examples/graphs/fox/locomotion.json \
        --characters 300 --seconds 2 --json | python3 -c "import json, sys; \
d = json.load(sys.stdin); assert d[\"characters_per_second\"] > 0, d"'
# Every loader of external bytes under libFuzzer (ASan + UBSan), one check per target, 15 s each
# on its committed seeds (tests/fuzz; docs/reliability.md has the long runs).
echo "== fuzz targets"
if scripts/fuzz.sh build >build/fuzz-build.log 2>&1; then
    for t in $(find build/fuzz/tests/fuzz -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x | sed 's#.*/fuzz_##' | sort); do
        check "fuzz $t (libFuzzer, 15 s)" scripts/fuzz.sh 15 "$t"
    done
else
    tail -n 20 build/fuzz-build.log
    add_counts 0 1 "fuzz: build"
fi

if [ -n "$FAILURES" ]; then
    echo "failures:$FAILURES"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
