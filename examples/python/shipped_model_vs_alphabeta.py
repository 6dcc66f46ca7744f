#!/usr/bin/env python3
"""The shipped network in PyTorch, fed by the loazero wheel, against loazero's alpha-beta.

    loazero export data/shipped/models/gen-0099.safetensors --out runs/export
    python examples/python/shipped_model_vs_alphabeta.py runs/export [--games 2] [--ms 100]

Loads the exported TorchScript model (model.pt, described by model.json) with
``torch.jit.load``, evaluates positions with the wheel's input planes
(``State.planes``: the trainer's own encoder, so no encoding is rewritten here), and plays
the raw network (the legal move of highest policy logit, no search) against
``alphabeta:ms=100`` (``loazero.Player``), colours alternating. Prints the network's value
and top moves of the start position, then each game's result. CPU only: no GPU was lent
to this work; on a CUDA machine move the model and the planes to ``cuda`` (not measured).
"""

import argparse
import json
import os

import numpy as np
import torch

import loazero


def load(export_dir):
    """The TorchScript model of an export folder, with its description."""
    with open(os.path.join(export_dir, "model.json")) as f:
        desc = json.load(f)
    model = torch.jit.load(os.path.join(export_dir, desc["files"]["torchscript"]))
    model.eval()
    return model, desc


def evaluate(model, desc, states):
    """Policy logits over every action (the pass last, never preferred) and the value
    P(win) - P(loss) for the side to move, of each state."""
    plane_set = desc["net"].get("plane_set", "board")
    planes = np.stack([s.planes(plane_set) for s in states])
    with torch.no_grad():
        out = model(torch.from_numpy(planes)).numpy()
    policy_len = desc["output"]["policy_logits"]["len"]
    return out[:, :policy_len], out[:, -1]


def network_move(model, desc, state):
    """The legal action of highest policy logit (a forced pass when it is the only move)."""
    logits, _ = evaluate(model, desc, [state])
    actions = state.legal_actions()
    scored = [(logits[0][a] if a < len(logits[0]) else -np.inf, a) for a in actions]
    return max(scored)[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("export_dir")
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--ms", type=int, default=100, help="alpha-beta's time a move")
    args = ap.parse_args()
    model, desc = load(args.export_dir)
    game = loazero.Game(desc["variant"], "classic,ply-limit=300")
    start = game.new_initial_state()
    logits, value = evaluate(model, desc, [start])
    top = sorted(start.legal_actions(), key=lambda a: -logits[0][a])[:3]
    print(f"start position: value {value[0]:+.3f}, top moves {[start.action_to_move(a) for a in top]}")
    alphabeta = loazero.Player(f"alphabeta:ms={args.ms}")
    score = 0.0
    for g in range(args.games):
        net_colour = "black" if g % 2 == 0 else "white"
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.to_move() == net_colour:
                state.apply_action(network_move(model, desc, state))
            else:
                state.apply(alphabeta.search(state).move)
        result = state.outcome()
        points = 1.0 if result == net_colour else 0.5 if result == "draw" else 0.0
        score += points
        print(f"game {g + 1}: network {net_colour}, result {result} after {len(state.history())} plies")
    print(f"network {score}/{args.games} against alphabeta:ms={args.ms}")


if __name__ == "__main__":
    main()
