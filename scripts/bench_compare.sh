#!/usr/bin/env bash
# Speed of two builds of loazero, measured in one sitting: ROUNDS rounds (default 3), each
# running the same `loazero bench` workloads on OLD then NEW, so that the machine's drift
# falls on both alike. For "no slowdown" checks of a change (build the old commit into its
# own target dir first, e.g. `git worktree add ../old REV && cd ../old && CARGO_TARGET_DIR=
# ../target-old cargo build --release --bins`). Wants a quiet machine.
#
#   scripts/bench_compare.sh OLD_BIN NEW_BIN [ROUNDS]
set -euo pipefail
old=${1:?usage: scripts/bench_compare.sh OLD_BIN NEW_BIN [ROUNDS]}
new=${2:?usage: scripts/bench_compare.sh OLD_BIN NEW_BIN [ROUNDS]}
rounds=${3:-3}
nnue="$(dirname "$0")/../data/shipped/models/nnue-0001.safetensors"
for round in $(seq "$rounds"); do
    for which in old new; do
        bin=$old
        [ "$which" = new ] && bin=$new
        echo "== round $round $which ($bin)"
        "$bin" bench movegen --depth 5 2>&1 | grep "^total"
        "$bin" bench alphabeta --ms 200 --threads 1 2>&1 | grep "^total"
        "$bin" bench alphabeta --ms 100 --threads 1 --eval "$nnue" 2>&1 | grep "^total"
        "$bin" bench net --preset small --precision float --batch 16,64 --seconds 1 --threads 1 2>&1 |
            grep -E "folded|evaluator|training"
    done
done
