#!/usr/bin/env bash
# `make test`: every suite of the project, each run to its end even when an earlier one
# failed, then one closing line over all of them. The suites: the Python wheel built into
# the venv and its pytest tests (`make python-test`; first, since tests/export_python.rs
# compares the installed wheel's planes with the trainer's), every test binary of the
# workspace (`cargo test --no-fail-fast`: a failing binary no longer hides the ones after
# it; this includes tests/fuzz_seeds.rs, every fuzz target's committed seeds), and the
# loom model check of the shared transposition table (`make loom`, its own target dir).
# The output of each suite goes to the terminal and to TARGET_DIR/test-output.log.
#
#   scripts/test_all.sh            (CARGO, TARGET_DIR from the Makefile's environment)
set -uo pipefail
CARGO=${CARGO:-cargo}
TARGET_DIR=${TARGET_DIR:-${CARGO_TARGET_DIR:-target}}
mkdir -p "$TARGET_DIR"
log="$TARGET_DIR/test-output.log"
: > "$log"
failed_suites=()

# suite NAME COMMAND...: runs COMMAND, its output to the terminal and the log.
suite() {
    local name=$1
    shift
    echo "== $name: $*" | tee -a "$log"
    "$@" 2>&1 | tee -a "$log"
    local status=${PIPESTATUS[0]}
    if [ "$status" -ne 0 ]; then
        failed_suites+=("$name (exit $status)")
    fi
}

suite python "${MAKE:-make}" --no-print-directory python-test
suite workspace "$CARGO" test --release --workspace --no-fail-fast
suite loom env RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$TARGET_DIR/loom" \
    "$CARGO" test --release -p eval --lib loom_tests

# One closing line: cargo prints a `test result:` line per test binary, pytest one line
# `N failed, N passed, N skipped in Ts` (its counts in any order).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
     /^=* *[0-9]+ (passed|failed|skipped|error).* in [0-9.]+s/ { for (i = 2; i <= NF; i++) { w = $(i); sub(/,$/, "", w); if (w == "passed") p += $(i-1); if (w == "failed" || w == "errors" || w == "error") f += $(i-1); if (w == "skipped") s += $(i-1) } }
     /SKIPPED: / { s += 1 }
     END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
if [ ${#failed_suites[@]} -ne 0 ]; then
    echo "failed: ${failed_suites[*]} (the lines above each suite's end name the failing tests)"
    exit 1
fi
