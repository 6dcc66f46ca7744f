#!/usr/bin/env python3
"""Per-generation time split and issue 13's item-4 check of runs, from their metrics.jsonl.

    scripts/generation_split.py RUN_DIR/metrics.jsonl:GAMES:STEPS [...]

GAMES and STEPS are the run's games_per_generation and train_steps_per_generation (batch
256). For each generation after the first it takes the run time since the previous
generation record and prints min / median / max over the run of: the loop's self-play,
training and the rest (seconds); self-play positions per second (over the loop's
self-play phase, or over the whole generation when background self-play ran); the
reuse (training samples per new position), measured and as configured (STEPS × 256 over
GAMES × the generation's positions per game); training samples per second; and "needed",
self-play positions/s × configured reuse, which item 4 wants at most the training
samples/s.
"""
import json
import statistics
import sys


def rows_of(path, games_per_generation, steps):
    records = [json.loads(line) for line in open(path)]
    gens = [r for r in records if r.get("kind") == "generation"]
    rows, prev = [], None
    for r in gens:
        elapsed = r.get("elapsed_s")
        if prev is not None and elapsed and r.get("train_seconds"):
            wall = elapsed - prev
            selfplay = r.get("selfplay_seconds") or 0.0
            loop_pos = r.get("selfplay_positions") or 0
            loop_games = r.get("selfplay_games") or 0
            bg_pos = r.get("background_positions") or 0
            bg_games = r.get("background_games") or 0
            positions, games = loop_pos + bg_pos, loop_games + bg_games
            samples = r["train_steps"] * 256
            background = r.get("background_positions") is not None
            rate = positions / wall if background else (loop_pos / selfplay if selfplay else None)
            configured = (
                steps * 256 / (games_per_generation * positions / games) if games and positions else None
            )
            rows.append(
                {
                    "generation": r["generation"],
                    "wall": wall,
                    "selfplay": selfplay,
                    "train": r["train_seconds"],
                    "rest": wall - selfplay - r["train_seconds"],
                    "loop_positions": loop_pos,
                    "background_positions": bg_pos,
                    "loop_games": loop_games,
                    "positions_per_s": rate,
                    "reuse": samples / positions if positions else None,
                    "configured_reuse": configured,
                    "train_samples_per_s": r["train_samples_per_sec"],
                    "needed": rate * configured if rate and configured else None,
                    "evals_per_s": r.get("evals_per_sec"),
                }
            )
        prev = elapsed
    return gens, rows


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        path, games, steps = arg.rsplit(":", 2)
        gens, rows = rows_of(path, int(games), int(steps))
        total = lambda k: sum(x[k] for x in rows)
        print(f"{path}: {len(gens)} generations")
        print(
            "  totals s: loop self-play %.0f, train %.0f, rest %.0f (of %.0f)"
            % (total("selfplay"), total("train"), total("rest"), total("wall"))
        )
        print(
            "  positions: loop %d, background %d; generations where the loop played no game: %d of %d"
            % (
                total("loop_positions"),
                total("background_positions"),
                sum(1 for x in rows if x["loop_games"] == 0),
                len(rows),
            )
        )
        for key in ["wall", "selfplay", "train", "rest", "positions_per_s", "reuse",
                    "configured_reuse", "train_samples_per_s", "needed", "evals_per_s"]:
            values = [x[key] for x in rows if x[key] is not None]
            if values:
                print("  %-20s min %9.1f  median %9.1f  max %9.1f"
                      % (key, min(values), statistics.median(values), max(values)))
        met = sum(1 for x in rows if x["needed"] is not None and x["train_samples_per_s"] >= x["needed"])
        print(f"  item 4 (train samples/s >= needed): {met} of {len(rows)} generations")


if __name__ == "__main__":
    main()
