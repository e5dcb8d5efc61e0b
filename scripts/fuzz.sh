#!/bin/sh
# Builds every libFuzzer target of tests/fuzz with clang (ASan + UBSan) and runs each for a
# bounded time on a copy of its committed seed corpus. Usage:
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 20)] [TARGET ...]
#   scripts/fuzz.sh build                          # only build the targets
#   CB_FUZZ_RUNS=10000000 scripts/fuzz.sh 0 pack    # a long run: an execution count instead
# Targets: pack graph_json weights cclip traj_csv traj_crowdit traj_pathfinder traj_vadere
# traj_petrack control frame (the last two when libwebsockets is installed).
# Exits non-zero when a target finds a crash, a leak or a broken contract; the input that did it
# is left in build/fuzz-artifacts/. The corpora grown here stay in build/fuzz-corpus/ (the
# committed seeds in tests/fuzz/corpus/ are only read).
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-20}
[ $# -gt 0 ] && shift
CC=${CB_FUZZ_CC:-clang-14}
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "fuzz: $CC not found (scripts/setup.sh installs clang-14 and libclang-rt-14-dev)" >&2
    exit 1
fi
dir=build/fuzz
mkdir -p build
if [ ! -f "$dir/build.ninja" ]; then
    CC=$CC meson setup "$dir" -Dfuzz=enabled -Disa=native -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link -Dbuildtype=debugoptimized -Dtests=disabled \
        -Dbench=disabled -Dcli=disabled -Dimport=disabled >build/fuzz-setup.log 2>&1 ||
        { cat build/fuzz-setup.log; exit 1; }
fi
meson compile -C "$dir" >build/fuzz-compile.log 2>&1 || { tail -n 30 build/fuzz-compile.log; exit 1; }
[ "$seconds" = build ] && exit 0
if [ $# -gt 0 ]; then
    targets=$*
else
    targets=$(find "$dir/tests/fuzz" -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x | sed 's#.*/fuzz_##' | sort)
fi
mkdir -p build/fuzz-artifacts
status=0
for t in $targets; do
    mkdir -p "build/fuzz-corpus/$t"
    limit="-max_total_time=$seconds"
    [ -n "${CB_FUZZ_RUNS:-}" ] && limit="-runs=$CB_FUZZ_RUNS"
    # Inputs stay short so that executions stay fast (graph seeds are cut at 2 KB).
    extra="-max_len=8192"
    [ "$t" = graph_json ] && extra="-max_len=2048"
    [ -f "tests/fuzz/$t.dict" ] && extra="$extra -dict=tests/fuzz/$t.dict"
    echo "fuzz: $t ($limit)"
    # shellcheck disable=SC2086
    if ! "$dir/tests/fuzz/fuzz_$t" $limit $extra -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
        -print_final_stats=1 -artifact_prefix="build/fuzz-artifacts/$t-" \
        "build/fuzz-corpus/$t" "tests/fuzz/corpus/$t" >"build/fuzz-$t.log" 2>&1; then
        echo "fuzz: $t FAILED (log: build/fuzz-$t.log)"
        # Enough of the log to diagnose a CI run that leaves nothing else behind: the first
        # sanitizer or contract lines, the stack, and the failing input itself (base64).
        grep -E "ERROR|contract|SUMMARY|Assertion|runtime error|deadly" "build/fuzz-$t.log" | head -n 8
        grep -E "^ +#[0-9]+ " "build/fuzz-$t.log" |
            grep -v -E "fuzzer::|__sanitizer|libc\.so|pthread_kill|raise|abort|_start" | head -n 12
        # -close_fd_mask hid the target's own stderr (its "contract:" lines): run the input again
        # with stderr open to show them.
        for a in build/fuzz-artifacts/"$t"-*; do
            [ -f "$a" ] || continue
            echo "fuzz: failing input $a ($(wc -c <"$a") bytes, base64):"
            head -c 1536 "$a" | base64
            "$dir/tests/fuzz/fuzz_$t" "$a" 2>&1 | grep -E "contract|runtime error|ERROR" | head -n 5
        done
        status=1
    else
        grep -E "^Done|stat::number_of_executed_units" "build/fuzz-$t.log" | head -n 2
    fi
done
exit $status
