#!/usr/bin/env bash
# `make acceptance`: a default run of MINUTES minutes, then the measurements that judge
# what it made (docs/experiments.md, batches 29 and 32): the learned alpha-beta's nodes a
# second against the hand-written evaluation's, its equal-time matches against
# alpha-beta and against the run's own MCTS model, on the auto SIMD path and on the AVX2
# path, and each learned generation against the one before at a fixed depth. Every step
# goes on where it stopped when the script is run again (the run resumes, each match
# with `match --resume`), so a campaign longer than a sitting is the same command again.
# A timed step wants a quiet machine: nothing else running.
#
#   scripts/acceptance.sh DIR MINUTES
#
# DIR: the run directory (the measurements go to DIR/acceptance/, one log a step, and the
# figures with their bars to DIR/acceptance/summary.txt). MINUTES: the run's --minutes;
# under 180 the bars of a 30-minute run (200 and 50 ms against alpha-beta at the same
# time), from 180 on those of a long run (1000 ms against alpha-beta, 200 ms against the
# run's own model). LOAZERO: the binary (default target/release/loazero).
set -euo pipefail
B=${LOAZERO:-target/release/loazero}
DIR=${1:?usage: scripts/acceptance.sh DIR MINUTES}
MINUTES=${2:?usage: scripts/acceptance.sh DIR MINUTES}
OUT=$DIR/acceptance
mkdir -p "$OUT"

# 1. The run, until it prints its strongest player.
if ! grep -q '^strongest player:' "$OUT/run.log" 2>/dev/null; then
    echo "acceptance: the run ($B run --dir $DIR --minutes $MINUTES; log $OUT/run.log)"
    "$B" run --dir "$DIR" --minutes "$MINUTES" 2>&1 | tee -a "$OUT/run.log" || true
    grep -q '^strongest player:' "$OUT/run.log" || {
        echo "acceptance: the run stopped before its end; run this again to go on" >&2
        exit 1
    }
fi
# The learned evaluations the run promoted (models/ holds only those), the best last; its
# best MCTS model.
mapfile -t LEARNED < <(ls "$DIR"/models/nnue-*.safetensors 2>/dev/null | sort)
[ ${#LEARNED[@]} -gt 0 ] || { echo "acceptance: $DIR made no learned evaluation" >&2; exit 1; }
NNUE=${LEARNED[-1]}
BEST=$(sed -n 's/^ *"best": *\([0-9]*\).*/\1/p' "$DIR/state.json")
MODEL=$(printf '%s/models/gen-%04d.safetensors' "$DIR" "$BEST")
echo "acceptance: learned alpha-beta $NNUE, MCTS model $MODEL"

: > "$OUT/summary.txt"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
say "run $DIR ($MINUTES minutes): learned evaluation $(basename "$NNUE"), MCTS model $(basename "$MODEL")"
say "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)$(grep -q avx512f /proc/cpuinfo && echo ', AVX-512' || echo ', AVX2 only')"

# 2. Speed: nodes a second against the hand-written evaluation, one thread.
for path in auto avx2; do
    log=$OUT/speed-$path.log
    grep -q '^learned / hand-written' "$log" 2>/dev/null ||
        LOAZERO_SIMD=$path "$B" bench alphabeta --ms 1000 --threads 1 --eval "$NNUE" > "$log" 2>&1
    say "speed ($path path): $(grep '^learned / hand-written' "$log")  (bar: at least 0.30x)"
done

# 3. Equal-time matches: NAME PATH SEED GAMES A B BAR (the score A needs, in %: +100 Elo
# is 64.0%). Both paths play the same openings (the same seed).
judge() {
    local name=$1 path=$2 seed=$3 games=$4 a=$5 b=$6 bar=$7 log=$OUT/$1.log
    LOAZERO_SIMD=$path "$B" match --a "$a" --b "$b" --games "$games" --threads 2 \
        --seed "$seed" --out "$OUT/$name" --resume > "$log" 2>&1 || {
        echo "acceptance: match $name stopped (log $log); run this again to go on" >&2
        exit 1
    }
    local score elo
    score=$(sed -n 's/^games .*score \([0-9.]*\)%$/\1/p' "$log")
    elo=$(sed -n 's/^Elo(A - B) //p' "$log")
    say "$name ($path path): $(grep '^games ' "$log"), Elo $elo; bar $bar%: $(awk -v s="$score" -v b="$bar" 'BEGIN { print (s >= b) ? "met" : "NOT met" }')"
}
for path in auto avx2; do
    if [ "$MINUTES" -lt 180 ]; then
        judge "ab200-$path" $path 60 200 "alphabeta:ms=200,eval=$NNUE" alphabeta:ms=200 75
    else
        judge "model200-$path" $path 81 200 "alphabeta:ms=200,eval=$NNUE" "model:path=$MODEL,ms=200" 64
    fi
done
for path in auto avx2; do
    if [ "$MINUTES" -lt 180 ]; then
        judge "ab50-$path" $path 61 200 "alphabeta:ms=50,eval=$NNUE" alphabeta:ms=50 60
    else
        judge "ab1000-$path" $path 80 100 "alphabeta:ms=1000,eval=$NNUE" alphabeta:ms=1000 90
    fi
done

# 4. Each learned generation against the one before, at a fixed depth (not timed), after
# the run's own promotion matches (200 games; the first against the hand-written one).
grep '^learned evaluation nnue-[0-9]*: .* at depth .*: \(promoted\|rejected\)$' "$OUT/run.log" |
    sort -u | while read -r line; do say "run: $line"; done
for ((k = 1; k < ${#LEARNED[@]}; k++)); do
    new=${LEARNED[k]} old=${LEARNED[k-1]}
    judge "step-$(basename "$new" .safetensors)" auto 86 2000 "alphabeta:depth=3,eval=$new" \
        "alphabeta:depth=3,eval=$old" 50
done
echo "acceptance: figures in $OUT/summary.txt"
