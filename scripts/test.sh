#!/bin/sh
# The README's test command: installs what is missing, then builds and runs every test:
#  - release: the default build (isa=dispatch, every kernel set of x86-64 behind run-time
#    dispatch), the whole suite once per kernel set this CPU runs (CROWDBLEND_ISA);
#  - sanitize: native debug with ASan+UBSan; tsan: the threading tests under ThreadSanitizer;
#  - aarch64: a cross build (gcc-aarch64-linux-gnu) whose tests run under qemu-user for the neon
#    set, a bounded subset of the suites (see AARCH64_SKIP below);
#  - the checks that need whole builds: the demo, install + pkg-config (shared, static and
#    uninstalled), use as a meson subproject, and one result everywhere: the checksums of the
#    demo and of W1, W2, W5 compared across every x86 set, another libm and aarch64.
# Ends with one line "N passed, N failed" counting test cases over all configurations, and
# exits non-zero if anything failed. CB_SKIP_AARCH64=1 leaves the cross build out.
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
        tail -n 60 "$log" | sed 's/^/       /'
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
        # A program that skipped (a kernel set not under test) counts neither way.
        ok, bad = {"OK": (1, 0), "SKIP": (0, 0)}.get(t["result"], (0, 1))
    elif t["result"] not in ("OK", "SKIP") and bad == 0:
        bad = 1
    passed += ok
    failed += bad
    if bad:
        names.append(f'{label}: {t["name"]} ({t["result"]})')
print(passed, failed, "|".join(n.replace(" ", "~") for n in names) or "-")
PY
}

build_config() { # name meson-options...: configures and builds build/test-<name>
    name=$1
    shift
    dir="build/test-$name"
    echo "== $name: $*"
    if [ -f "$dir/build.ninja" ]; then
        # A build directory from an earlier run (not in CI's clean clone): reconfigure it, without
        # --cross-file, which only setup accepts (the directory keeps the one it was set up with).
        for a in "$@"; do
            shift
            if [ "${skip_next:-}" = 1 ]; then skip_next=0; continue; fi
            if [ "$a" = --cross-file ]; then skip_next=1; continue; fi
            set -- "$@" "$a"
        done
        meson configure "$dir" "$@" >/dev/null || { add_counts 0 1 "$name: configure"; return 1; }
    else
        meson setup "$dir" "$@" >"build/setup-$name.log" 2>&1 ||
            { cat "build/setup-$name.log"; add_counts 0 1 "$name: configure"; return 1; }
    fi
    if ! meson compile -C "$dir" >"build/compile-$name.log" 2>&1; then
        tail -n 40 "build/compile-$name.log"
        add_counts 0 1 "$name: build"
        return 1
    fi
}

test_config() { # name label [meson test arguments...]   (TEST_SUITES limits the suites)
    dir="build/test-$1"
    label=$2
    shift 2
    rm -f "$dir/meson-logs/testlog.json"
    suites=""
    for s in ${TEST_SUITES:-}; do suites="$suites --suite $s"; done
    # shellcheck disable=SC2086
    meson test -C "$dir" --print-errorlogs --no-rebuild --num-processes 2 $suites "$@" |
        grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Timeout:" | grep -v " SKIP " | sed 's/^/  /'
    set -- $(count_log "$dir" "$label")
    echo "  $label: $1 passed, $2 failed"
    add_counts "$1" "$2" "$(echo "$3" | sed 's/|/\n  /g; s/~/ /g')"
}

run_config() { # name meson-options...: build, then the whole suite once
    build_config "$@" && test_config "$1" "$1"
}

# The kernel sets a build's library carries and this CPU runs, from `crowdblend info --json`.
kernel_sets() { # crowdblend command (with its emulator, if any)
    "$@" info --json | python3 -c 'import json, sys; d = json.load(sys.stdin)
built = d["kernel_sets_built"].split(",")
print(" ".join(s for s in built if s in d["kernel_sets_supported"].split(",")))'
}

mkdir -p build
START=$(date +%s)
COMMON="-Dwerror=true -Dtests=enabled"
# The default options: what the README's commands and `meson install` give (isa=dispatch).
if build_config release $COMMON -Dbench=enabled -Dprefix="$ROOT/build/stage"; then
    RELEASE_CLI=build/test-release/src/cli/crowdblend
    for set in $(kernel_sets $RELEASE_CLI); do
        echo "-- release, kernel set $set (CROWDBLEND_ISA=$set)"
        rm -f build/test-release/tests/pack_samples.txt build/test-release/tests/skinning_hash.txt
        CROWDBLEND_ISA=$set test_config release "release/$set"
        # The committed packs' samples and the Fox crowd's skinning matrices under this set
        # (compared across sets below).
        cp build/test-release/tests/pack_samples.txt \
            "build/test-release/tests/pack_samples-$set.txt" 2>/dev/null || true
        cp build/test-release/tests/skinning_hash.txt \
            "build/test-release/tests/skinning_hash-$set.txt" 2>/dev/null || true
    done
fi
# Debug builds are slow to run, so the sanitizers check one kernel set: native (W = 16 here).
run_config sanitize $COMMON -Dbuildtype=debug -Disa=native -Db_sanitize=address,undefined \
    -Dc_args=-fno-sanitize-recover=all -Dbench=disabled
TEST_SUITES="jobs" run_config tsan $COMMON -Dbuildtype=debugoptimized -Disa=native \
    -Db_sanitize=thread -Dbench=disabled -Dcli=disabled

# aarch64: cross-built, run under qemu-user. Emulation costs 10-50x, so the suite runs once,
# for the neon set (the portable set's code is the same C as on x86, tested there; both
# aarch64 sets run the checksum workloads below), with CB_TEST_SCALE=0.1 (tests/meson.build),
# leaving out the programs whose work does not depend on the architecture's SIMD and that cost
# most under qemu (measured, docs/performance.md): the graph JSON loader (parsing), the
# blend-criteria property sweep, the ECS example (its frame is what the checksums run), and the
# in-suite checksum test (the whole-build check below compares more).
AARCH64_SKIP="graph_json_neon graph_json_portable solver_property_neon solver_property_portable example_ecs_host checksums"
AARCH64_CLI=""
if [ "${CB_SKIP_AARCH64:-0}" != 1 ] &&
    build_config aarch64 $COMMON --cross-file scripts/cross-aarch64.ini -Dbench=disabled; then
    AARCH64_CLI="qemu-aarch64 build/test-aarch64/src/cli/crowdblend"
    tests=$(meson test -C build/test-aarch64 --list --no-rebuild 2>/dev/null |
        sed -n 's/^crowdblend:[^/]* \/ //p' | grep -v -x -F "$(echo $AARCH64_SKIP | tr ' ' '\n')")
    echo "-- aarch64 under qemu, kernel set neon"
    # shellcheck disable=SC2086
    CROWDBLEND_ISA=neon test_config aarch64 "aarch64/neon" $tests
fi
echo "  (configurations took $(( $(date +%s) - START )) s)"

echo "== whole-build checks"
check "demo runs (scripts/demo.sh)" env CB_SKIP_SETUP=1 CB_DEMO_QUICK=1 scripts/demo.sh
check "example graphs run from their files (crowdblend demo --graph)" sh -c '
    set -e
    for f in examples/graphs/*.json; do
        build/test-release/src/cli/crowdblend demo --graph "$f" --characters 300 --seconds 1 \
            --json | python3 -c "import json, sys; d = json.load(sys.stdin); \
assert d[\"characters_per_second\"] > 0, d"
    done'
check "install + pkg-config consumer (shared library)" sh -c '
    set -e
    rm -rf build/stage
    meson install -C build/test-release --quiet
    pc=$(find build/stage -name crowdblend.pc | head -n 1)
    export PKG_CONFIG_PATH=$(dirname "$pc")
    cc -std=c11 -Wall -Werror tests/consumer/main.c $(pkg-config --cflags --libs crowdblend) -lm \
        -o build/stage/consumer
    # The two ways the README gives to run it against a non-system prefix.
    LD_LIBRARY_PATH=$(pkg-config --variable=libdir crowdblend) build/stage/consumer
    cc -std=c11 -Wall -Werror tests/consumer/main.c $(pkg-config --cflags --libs crowdblend) -lm \
        -Wl,-rpath,$(pkg-config --variable=libdir crowdblend) -o build/stage/consumer-rpath
    build/stage/consumer-rpath
    # The example graphs are installed beside it: the README quickstart on one, by graphsdir.
    cc -std=c11 -Wall -Werror examples/quickstart.c $(pkg-config --cflags --libs crowdblend) -lm \
        -Wl,-rpath,$(pkg-config --variable=libdir crowdblend) -o build/stage/quickstart
    build/stage/quickstart "$(pkg-config --variable=graphsdir crowdblend)/locomotion_8dir.json"'
# Static linking takes everything from the .pc (Requires.private, Libs.private): nothing added
# by hand. The program then runs anywhere, and still chooses its kernel set at start-up.
check "install + pkg-config --static consumer (static library)" sh -c '
    set -e
    export PKG_CONFIG_PATH=$(dirname "$(find build/stage -name crowdblend.pc | head -n 1)")
    cc -std=c11 -Wall -Werror -static tests/consumer/main.c \
        $(pkg-config --static --cflags --libs crowdblend) -o build/stage/consumer-static
    build/stage/consumer-static
    CROWDBLEND_ISA=portable build/stage/consumer-static | grep -q "W = 4"'
# crowdblend-uninstalled.pc: the public headers from the source tree, config.h from the build.
check "crowdblend-uninstalled.pc consumer (build tree)" sh -c '
    set -e
    export PKG_CONFIG_PATH=build/test-release/meson-uninstalled
    cc -std=c11 -Wall -Werror tests/consumer/main.c \
        $(pkg-config --cflags --libs crowdblend-uninstalled) -o build/consumer-uninstalled
    LD_LIBRARY_PATH=build/test-release build/consumer-uninstalled'
check "meson subproject consumer" sh -c '
    set -e
    d=build/subproject-consumer
    rm -rf "$d" && mkdir -p "$d/subprojects"
    cp tests/consumer/meson.build tests/consumer/main.c "$d/"
    ln -s "$PWD" "$d/subprojects/crowdblend"
    meson setup "$d/build" "$d" >/dev/null
    meson test -C "$d/build" --quiet'

# One result everywhere: the demo and W1, W2, W5 give the same checksums under every x86 kernel
# set, under the libm an x86 CPU without AVX2/FMA gets (glibc picks its non-FMA variants), and
# on aarch64 (neon and portable, under qemu), all computed here.
if [ -n "${RELEASE_CLI:-}" ]; then
    log=build/check-checksums.log
    set -- --each-set "$RELEASE_CLI" \
        "x86 sse4, non-FMA libm=env GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4 CROWDBLEND_ISA=sse4 $RELEASE_CLI"
    if [ -n "$AARCH64_CLI" ]; then
        set -- "$@" --each-set "$AARCH64_CLI"
    fi
    python3 tests/checksums.py --scale 0.05 "$@" >"$log" 2>&1
    n_ok=$(grep -c "^ok " "$log")
    n_bad=$(grep -c "^not ok " "$log")
    grep -E "^(ok|not ok) .*(checksum|differ)" "$log" | sed 's/^/  /'
    [ "$n_ok" -gt 0 ] || n_bad=$((n_bad + 1))
    add_counts "$n_ok" "$n_bad" "checksums across kernel sets and machines (log: $log)"
fi


# Issue 12: the glTF that `crowdblend animate --out` writes, through the Khronos validator (npm ci installs it
# from tests/gltf's package-lock.json); the embedded humanoid and a pack's skeleton (the Fox).
check "crowdblend animate --out validates (Khronos glTF validator)" sh -c '
    set -e
    (cd tests/gltf && npm ci --no-audit --no-fund --loglevel=error)
    cb=build/test-release/src/cli/crowdblend
    d=build/gltf-check && rm -rf "$d" && mkdir -p "$d"
    $cb animate tests/data/trajectories/crowdit.csv.gz --seconds 6 --out "$d/crowdit.glb"
    $cb animate tests/data/trajectories/vadere_bottleneck_postvis.traj --seconds 4 \
        --graph locomotion_8dir --out "$d/vadere.gltf" --out-rate 30
    node tests/gltf/validate.mjs "$d/crowdit.glb" --agents 20
    node tests/gltf/validate.mjs "$d/vadere.gltf" --agents 20
    $cb animate tests/data/trajectories/fzj_bottleneck_cut.csv --pack tests/data/packs/fox.cbpack \
        --out "$d/fox.glb"
    node tests/gltf/validate.mjs "$d/fox.glb" --agents 6'
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
    # issue 12: --trajectories, every received root against the file read by the test (7 s at load 7).
    check "serve: --trajectories plays a file's agents on their trajectories, looping" \
        node web/tests/trajectories.mjs "$cb" tests/data/trajectories/fzj_bottleneck_cut.csv
    # issue 14, --pack: bad pack files refused, then 40 Foxes from the committed pack drawn as
    # skinned meshes of Fox.glb, a head checked against the server's pose (14 s at load
    # average 5, 43 s at 17; the whole serve block took 177 s at 17).
    check "serve: the Fox from its pack as skinned meshes (build/serve-fox.png)" \
        node web/tests/pack.mjs "$cb" tests/data/packs/fox.cbpack tests/data/assets/Fox/Fox.glb \
        build/serve-fox.png
    if [ -x build/test-sanitize/src/cli/crowdblend ]; then
        check "serve: bad clients against the ASan+UBSan server" env \
            ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
            node web/tests/e2e.mjs build/test-sanitize/src/cli/crowdblend --no-browser
    fi
fi
# issue 10: packs and real assets.
check "committed packs give bit-identical samples under every kernel set and with sanitizers" sh -c '
    set -e
    cd build
    first=""
    for f in test-release/tests/pack_samples-*.txt test-sanitize/tests/pack_samples.txt; do
        test -s "$f"
        grep -q fox.cbpack "$f"
        if [ -z "$first" ]; then first=$f; else cmp "$first" "$f"; fi
    done
    test -n "$first"'
check "the Fox crowd's skinning matrices are the same bits under every kernel set and with sanitizers" sh -c '
    set -e
    cd build
    first=""
    for f in test-release/tests/skinning_hash-*.txt test-sanitize/tests/skinning_hash.txt; do
        grep -q "fox.cbpack skinning" "$f"
        if [ -z "$first" ]; then first=$f; else cmp "$first" "$f"; fi
    done
    test -n "$first"'
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

echo "  (the whole command took $(( $(date +%s) - START )) s)"
if [ -n "$FAILURES" ]; then
    echo "failures:$FAILURES"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
