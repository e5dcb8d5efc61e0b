#!/bin/sh
# Builds the libFuzzer targets of the trajectory text loaders (tests/fuzz/fuzz_traj.c, one
# binary per format) with clang, ASan and UBSan, and runs each for SECONDS from its seed corpus.
#   scripts/fuzz.sh BUILDDIR [SECONDS] [FORMAT...]
# BUILDDIR: a meson build folder of this tree (for the generated crowdblend/config.h).
# Exits non-zero when a target finds a crash, a leak or undefined behaviour; the input that
# caused it is left in build/fuzz/ with the target's log.
set -eu
cd "$(dirname "$0")/.."
builddir=${1:?usage: scripts/fuzz.sh BUILDDIR [SECONDS] [FORMAT...]}
seconds=${2:-20}
shift $(($# >= 2 ? 2 : 1))
formats=${*:-csv crowdit pathfinder vadere petrack}
CLANG=${CLANG:-clang-14}
out=build/fuzz
mkdir -p "$out"

flags="-std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
-Iinclude -I$builddir/include -Isrc"
# The loaders once, then one small object and link per format.
objs=""
for src in traj text csv vadere petrack resample jupedsim; do
    o="$out/$src.o"
    stale=0
    for dep in "src/traj/$src.c" src/traj/*.h include/crowdblend/base.h "$0"; do
        [ -f "$o" ] && [ ! "$dep" -nt "$o" ] || stale=1
    done
    if [ "$stale" = 1 ]; then
        # shellcheck disable=SC2086
        "$CLANG" $flags -c "src/traj/$src.c" -o "$o"
    fi
    objs="$objs $o"
done
status=0
for f in $formats; do
    upper=$(echo "$f" | tr a-z A-Z)
    bin="$out/fuzz_$f"
    # shellcheck disable=SC2086
    "$CLANG" $flags -DCB_FUZZ_FORMAT="CB_TRAJ_FORMAT_$upper" -c tests/fuzz/fuzz_traj.c \
        -o "$out/fuzz_$f.o"
    # shellcheck disable=SC2086
    "$CLANG" -fsanitize=fuzzer,address,undefined "$out/fuzz_$f.o" $objs -lsqlite3 -lz -lm \
        -o "$bin"
    # libFuzzer adds what it finds to the first folder: a scratch copy of the seeds.
    work="$out/corpus-$f"
    rm -rf "$work"
    mkdir -p "$work"
    cp tests/fuzz/corpus/"$f"/* "$work"/
    if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$out/$f-" "$work" >"$out/$f.log" 2>&1; then
        runs=$(grep -E '^stat::number_of_executed_units' "$out/$f.log" | awk '{print $2}')
        echo "fuzz_$f: ${runs:-?} inputs in ${seconds} s, no finding"
    else
        echo "fuzz_$f: FAILED (log: $out/$f.log)"
        tail -n 30 "$out/$f.log"
        status=1
    fi
done
exit $status
