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
# libassimp-dev: crowdblend-import reads glTF/FBX/BVH/Collada.  libxxhash-dev: pack checksums.
# clang-14, libclang-rt-14-dev: libFuzzer (scripts/fuzz.sh, run by the test command).

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "setup: all packages present"
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
echo "setup: done"
