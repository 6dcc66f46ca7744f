#!/usr/bin/env bash
# `make fuzz`: builds the fuzz targets (fuzz/, cargo-fuzz on nightly, no sanitizer) and runs
# each for FUZZ_SECONDS seconds from its committed seeds (fuzz/seeds/TARGET) and the corpus
# it grew before (fuzz/corpus/TARGET, not committed). Crashes are written to
# fuzz/artifacts/TARGET/; logs to fuzz/logs/TARGET.log; one line per target (executions,
# seconds, result) to fuzz/logs/summary.txt. Exits non-zero if any target found a crash.
# Usage: scripts/fuzz.sh [TARGET...]   (default: every target of fuzz/Cargo.toml)
# Env: FUZZ_SECONDS (default 60), FUZZ_RUNS (also stop after this many executions),
#      FUZZ_JOBS (parallel targets, default 1), FUZZ_NICE (default "nice -n 10").
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
NICE=${FUZZ_NICE:-nice -n 10}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^loazero-fuzz$')
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz (needs the nightly toolchain: rustup toolchain install nightly)"
    cargo install --locked cargo-fuzz || exit 1
fi
(cd fuzz && $NICE cargo +nightly fuzz build -s none 2>&1 | tail -3; exit "${PIPESTATUS[0]}") || exit 1
bin=fuzz/target/x86_64-unknown-linux-gnu/release
export LD_LIBRARY_PATH="$PWD/.libtorch/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p fuzz/logs
status=0
run_one() {
    local t=$1
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    local limit=(-max_total_time="$SECONDS_EACH")
    [ -n "${FUZZ_RUNS:-}" ] && limit+=(-runs="$FUZZ_RUNS")
    local start=$(date +%s.%N)
    $NICE "$bin/$t" "fuzz/corpus/$t" "fuzz/seeds/$t" "${limit[@]}" -timeout=20 \
        -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" \
        > "fuzz/logs/$t.log" 2>&1
    local rc=$?
    local end=$(date +%s.%N)
    local execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "fuzz/logs/$t.log" | tail -1)
    local result=ok
    [ $rc -ne 0 ] && result="CRASH (rc $rc, see fuzz/logs/$t.log and fuzz/artifacts/$t/)"
    printf '%-14s %12s execs %8.0f s  %s\n' "$t" "${execs:-?}" "$(awk "BEGIN { print $end - $start }")" "$result"
    [ $rc -eq 0 ]
}
: > fuzz/logs/summary.txt
for t in "${targets[@]}"; do
    run_one "$t" | tee -a fuzz/logs/summary.txt
    [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
done
exit $status
