#!/usr/bin/env bash
# Runs experiment arms side by side, each pinned to its own pair of cores (taskset), so
# that every arm sees a 2-core machine like the default config is sized for; then plays
# each arm's final best model against alphabeta:depth=2.
#
#   scripts/arms.sh start ARMS_FILE OUT_DIR MINUTES     # launch every arm in the background
#   scripts/arms.sh status OUT_DIR                      # last line of every arm's log
#   scripts/arms.sh judge ARMS_FILE OUT_DIR GAMES [SIMS] # final best model vs alphabeta:depth=2
#
# ARMS_FILE: one arm a line, `NAME [--set KEY=VALUE]...`; `#` lines are comments.
# LOAZERO: the binary (default target/release/loazero). Arm k uses the C = CORES_PER_ARM
# (default 2) cores from F+C·k on, F = FIRST_CORE (default 0), so two arms files with two
# binaries can run side by side; CORES_PER_ARM=1 runs two arms on a 2-core machine.
set -euo pipefail
B=${LOAZERO:-target/release/loazero}
F=${FIRST_CORE:-0}
C=${CORES_PER_ARM:-2}
# The cores of arm $1: a taskset list.
cores_of() { seq -s, $((F + C * $1)) $((F + C * $1 + C - 1)); }
cmd=$1; shift
arms() { grep -v '^\s*#' "$1" | grep -v '^\s*$'; }
case $cmd in
start)
    file=$1 out=$2 minutes=$3; mkdir -p "$out"; k=0
    while read -r name sets; do
        cores=$(cores_of $k)
        # shellcheck disable=SC2086
        setsid nohup taskset -c "$cores" "$B" run --dir "$out/$name" --minutes "$minutes" \
            $sets >"$out/$name.log" 2>&1 </dev/null &
        k=$((k + 1))
    done < <(arms "$file")
    ;;
status)
    out=$1
    for log in "$out"/*.log; do echo "== $log"; tail -n 2 "$log"; done
    ;;
judge)
    file=$1 out=$2 games=$3 sims=${4:-64}; k=0
    while read -r name _; do
        cores=$(cores_of $k)
        best=$(sed -n 's/^ *"best": *\([0-9]*\).*/\1/p' "$out/$name/state.json")
        model=$(printf '%s/%s/models/gen-%04d.safetensors' "$out" "$name" "$best")
        taskset -c "$cores" "$B" match --a "model:path=$model,sims=$sims" \
            --b alphabeta:depth=2 --games "$games" --threads 2 --out "$out/judge-$name" \
            >"$out/judge-$name.log" 2>&1 &
        k=$((k + 1))
    done < <(arms "$file")
    wait
    for name in $(arms "$file" | awk '{print $1}'); do echo "== $name"; tail -n 3 "$out/judge-$name.log"; done
    ;;
*) echo "usage: see the head of $0" >&2; exit 2 ;;
esac
