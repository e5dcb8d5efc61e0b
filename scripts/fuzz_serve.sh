#!/bin/sh
# Builds the libFuzzer targets of the network parsers (tests/fuzz/fuzz_*.c) with clang-14,
# AddressSanitizer and UndefinedBehaviorSanitizer, and runs each for SECONDS from its seed corpus
# (tests/fuzz/<name>/; new inputs go to build/fuzz/, never into the source tree).
# Usage: scripts/fuzz.sh BUILDDIR [SECONDS]   (BUILDDIR: a configured build, for config.h)
set -eu
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/fuzz.sh BUILDDIR [SECONDS]}
seconds=${2:-10}
cc=${CB_FUZZ_CC:-clang-14}
out=build/fuzz
mkdir -p "$out"
flags="-g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -Iinclude -I$build/include -Isrc"
for name in control frame; do
    # shellcheck disable=SC2086
    $cc $flags -o "$out/fuzz_$name" "tests/fuzz/fuzz_$name.c" src/serve/frame.c \
        src/serve/control.c $(pkg-config --cflags --libs jansson) -lm
done
status=0
for name in control frame; do
    mkdir -p "$out/corpus-$name"
    dict=""
    [ -f "tests/fuzz/$name.dict" ] && dict="-dict=tests/fuzz/$name.dict"
    echo "fuzz_$name: $seconds s"
    # shellcheck disable=SC2086
    if ! "$out/fuzz_$name" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$out/" $dict "$out/corpus-$name" "tests/fuzz/$name" \
        >"$out/fuzz_$name.log" 2>&1; then
        tail -n 40 "$out/fuzz_$name.log"
        status=1
    fi
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$out/fuzz_$name.log" || true
done
exit $status
