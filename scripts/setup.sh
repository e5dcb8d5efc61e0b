#!/bin/sh
# Installs every Debian package crowdblend needs to build, test and benchmark, and the web
# viewer's npm packages. Idempotent: packages already present are left alone. Run as root (or
# through sudo).
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
libxxhash-dev
libassimp-dev
libsqlite3-dev
zlib1g-dev
libwebsockets-dev
chromium
clang-14
libclang-rt-14-dev
gcc-aarch64-linux-gnu
qemu-user
libc6:arm64
libjansson-dev:arm64
libcglm-dev:arm64
libcmocka-dev:arm64
libpng-dev:arm64
libxxhash-dev:arm64
libsqlite3-dev:arm64
zlib1g-dev:arm64
"
# meson, ninja-build, gcc, g++, pkg-config: the build (g++ only for the benchmark shim).
# python3: meson itself, and scripts/test.sh counting test results.
# libsimde-dev: all SIMD goes through SIMDe.  libcglm-dev: scalar math types and cross-checks.
# libcmocka-dev: unit tests.  libbenchmark-dev: google-benchmark behind bench/shim.h.
# libjansson-dev: JSON input/output with line:column errors.  libpng-dev: weight-map pictures.
# libxxhash-dev: pack checksums (XXH3).  libassimp-dev: crowdblend-import reads
# glTF/FBX/BVH/Collada.  libsqlite3-dev: JuPedSim's SQLite trajectory files.  zlib1g-dev:
# gzipped trajectory files (crowd:it).  libwebsockets-dev: HTTP + WebSocket for `crowdblend
# serve`.  chromium: the viewer's browser tests (driven by playwright-core from npm; never a
# downloaded browser).  clang-14, libclang-rt-14-dev: libFuzzer for the fuzz targets.
# gcc-aarch64-linux-gnu, qemu-user and the :arm64 libraries (libc6 puts the arm64 loader where
# qemu-aarch64 finds it): the aarch64 cross build of scripts/test.sh, run under emulation
# (scripts/cross-aarch64.ini). They need dpkg's arm64 architecture, added below.

# nodejs, npm: the Khronos glTF validator (tests/gltf) and the viewer's packages and browser
# tests (web/), both installed by `npm ci`. A machine that already has npm (e.g. NodeSource's
# node) keeps it; Debian's packages come in only when npm is missing.
if ! command -v npm >/dev/null 2>&1; then
    PACKAGES="$PACKAGES nodejs npm"
fi

# The :arm64 packages need the foreign architecture before dpkg-query or apt can see them.
need_arm64=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    need_arm64=1
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
if [ "$need_arm64" = 1 ] && ! $SUDO dpkg --add-architecture arm64; then
    echo "setup: FAILED: dpkg --add-architecture arm64" >&2
    exit 1
fi
# Another apt may hold the lock (a parallel build machine): wait for it rather than fail.
APT="apt-get -o DPkg::Lock::Timeout=600"
if ! $SUDO $APT update -qq >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: FAILED: apt-get update" >&2
    exit 1
fi
for p in $missing; do
    if ! $SUDO $APT install -y -qq --no-install-recommends "$p" >"$log" 2>&1; then
        cat "$log" >&2
        echo "setup: FAILED to install Debian package '$p'" >&2
        exit 1
    fi
done
npm_packages
echo "setup: done"
