#!/usr/bin/env python3
"""Checks the wheel's planes and the exported TorchScript model against the trainer.

usage: check_wheel_planes.py EXPORT_DIR DATA_DIR PLANE_SET

DATA_DIR holds positions.txt (one `variant<TAB>position text` a line), planes.bin (the
trainer's encoder's uint8 planes of those positions, in order) and outputs.bin (the
trainer's `forward_export` of them, little-endian float32 [positions, policy + 4]).
Computes every position's planes with the wheel (loazero.Game(variant)
.state_from_text(text).planes(PLANE_SET)), requires them equal to planes.bin byte for
byte, runs the TorchScript model of EXPORT_DIR on them in PyTorch and prints the largest
absolute difference from outputs.bin. Run by tests/export_python.rs
(python_wheel_planes_and_torchscript_match_the_trainer).
"""
import json
import os
import sys

import numpy as np
import torch

import loazero


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    export_dir, data, plane_set = sys.argv[1:]
    desc = json.load(open(os.path.join(export_dir, "model.json")))
    model = torch.jit.load(os.path.join(export_dir, desc["files"]["torchscript"]))
    model.eval()
    out_len = desc["output"]["shape"][1]
    want_planes = np.fromfile(os.path.join(data, "planes.bin"), np.uint8)
    want_out = np.fromfile(os.path.join(data, "outputs.bin"), "<f4").reshape(-1, out_len)
    games = {}
    planes = []
    for line in open(os.path.join(data, "positions.txt")):
        variant, text = line.rstrip("\n").split("\t")
        game = games.setdefault(variant, loazero.Game(variant))
        planes.append(game.state_from_text(text).planes(plane_set))
    got = np.stack(planes)
    if got.size != want_planes.size or not np.array_equal(got.reshape(-1), want_planes):
        bad = np.flatnonzero(got.reshape(-1) != want_planes[: got.size])
        sys.exit(f"planes differ from the trainer's: {len(bad)} values, first at {bad[:5]}")
    print(f"planes equal on {len(planes)} positions ({', '.join(sorted(games))})")
    with torch.no_grad():
        y = model(torch.from_numpy(got)).numpy()
    if y.shape != want_out.shape:
        sys.exit(f"output shape {y.shape}, expected {want_out.shape}")
    diff = float(np.abs(y - want_out).max())
    print(f"max abs diff {diff:.3e} over {y.shape[0]} positions")


if __name__ == "__main__":
    main()
