#!/bin/sh
# Installs every Debian package crowdblend needs to build, test and benchmark.
# Idempotent: packages already present are left alone. Run as root (or through sudo).
set -eu

# One package per line: what it is for, so removing one is a conscious choice.
PACKAGES="
meson
ninja-build
gcc
g++
pkg-config
python3
libsimde-dev
libcglm-dev
libcmocka-dev
libbenchmark-dev
libjansson-dev
libpng-dev
libsqlite3-dev
zlib1g-dev
libwebsockets-dev
chromium
libassimp-dev
libxxhash-dev
clang-14
libclang-rt-14-dev
"
# meson, ninja-build, gcc, g++, pkg-config: the build (g++ only for the benchmark shim).
# python3: meson itself, and scripts/test.sh counting test results.
# libsimde-dev: all SIMD goes through SIMDe.  libcglm-dev: scalar math types and cross-checks.
# libcmocka-dev: unit tests.  libbenchmark-dev: google-benchmark behind bench/shim.h.
# libjansson-dev: JSON input/output with line:column errors.  libpng-dev: weight-map pictures.
# libsqlite3-dev: JuPedSim's SQLite trajectory files.  zlib1g-dev: gzipped trajectory files
# (crowd:it).  libwebsockets-dev: HTTP + WebSocket for `crowdblend serve`.  chromium: the
# viewer's browser tests (driven by playwright-core from npm; never a downloaded browser).
# libassimp-dev: crowdblend-import reads glTF/FBX/BVH/Collada.  libxxhash-dev: pack checksums.
# clang-14, libclang-rt-14-dev: libFuzzer for the fuzz targets (scripts/fuzz*.sh).

# nodejs, npm: the Khronos glTF validator (tests/gltf) and the viewer's packages and browser
# tests (web/), both installed by `npm ci`. A machine that already has npm (e.g. NodeSource's node)
# keeps it; Debian's packages come in only when npm is missing.
if ! command -v npm >/dev/null 2>&1; then
    PACKAGES="$PACKAGES nodejs npm"
fi

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

# The viewer's npm packages (web/package-lock.json: three.js, uPlot; playwright-core and ws for
# its tests), installed with `npm ci` whenever node_modules is missing or older than the lock.
npm_packages() {
    web="$(cd "$(dirname "$0")/.." && pwd)/web"
    if [ ! -d "$web/node_modules" ] || [ "$web/package-lock.json" -nt "$web/node_modules" ]; then
        echo "setup: npm ci in web/"
        if ! (cd "$web" && npm ci --no-audit --no-fund --loglevel=error); then
            echo "setup: FAILED: npm ci in web/" >&2
            exit 1
        fi
        touch "$web/node_modules"
    fi
}

if [ -z "$missing" ]; then
    echo "setup: all packages present"
    npm_packages
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "setup: missing packages:$missing; run this script as root" >&2
        exit 1
    fi
else
    SUDO=
fi

echo "setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! $SUDO apt-get update -qq >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: FAILED: apt-get update" >&2
    exit 1
fi
for p in $missing; do
    if ! $SUDO apt-get install -y -qq --no-install-recommends "$p" >"$log" 2>&1; then
        cat "$log" >&2
        echo "setup: FAILED to install Debian package '$p'" >&2
        exit 1
    fi
done
npm_packages
echo "setup: done"
