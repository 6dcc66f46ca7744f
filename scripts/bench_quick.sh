#!/usr/bin/env bash
# `make bench-quick`: the speed claim of the README's quick recipe, measured (its test,
# tests/cli_run.rs `the_quick_recipe_trains_gates_and_rates_its_generations`, runs it on
# a generation budget and so cannot depend on the machine's speed). Runs
# `--config configs/quick.toml` for MINUTES (default 1.5) into a fresh folder and prints
# how many generations it promoted, which generations were rated, and the held-out top-1
# of generation 1 and of the last one against chance. Wants a quiet machine.
#
#   scripts/bench_quick.sh [MINUTES]
#
# LOAZERO: the binary (default target/release/loazero). The claim of the README: at least
# 3 generations promoted in 1.5 minutes on 2 cores; the script exits 1 below it.
set -euo pipefail
B=${LOAZERO:-target/release/loazero}
MINUTES=${1:-1.5}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
start=$(date +%s)
"$B" run --config configs/quick.toml --dir "$DIR/quick" --minutes "$MINUTES" > "$DIR/run.log" 2>&1 || {
    cat "$DIR/run.log" >&2
    exit 1
}
end=$(date +%s)
python3 - "$DIR/quick" "$MINUTES" "$((end - start))" <<'PY'
import json, sys
run, minutes, wall = sys.argv[1], sys.argv[2], sys.argv[3]
state = json.load(open(f"{run}/state.json"))
gens = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
gens = [g for g in gens if g.get("kind") == "generation"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"quick recipe, {minutes} minutes ({wall} s of wall time) on {cpu}:")
print(f"  generations: {len(gens)}, promoted {state['promoted']}, rejected {state['rejected']}")
print(f"  rated: {', '.join(f'gen-{g:04}' for g in state['rated'])}")
held = [g["heldout"] for g in gens if g.get("heldout")]
if held:
    print(f"  held-out top-1: {held[0]['top1']:.1%} after generation 1, "
          f"{held[-1]['top1']:.1%} after generation {len(gens)} (chance {held[-1]['chance_top1']:.1%})")
ok = state["promoted"] >= 3
print(f"  the README's claim (at least 3 promoted in 1.5 minutes): {'met' if ok else 'NOT met'}")
sys.exit(0 if ok else 1)
PY
