#!/usr/bin/env python3
"""Checks that an exported TorchScript model reproduces given outputs.

usage: check_torchscript.py EXPORT_DIR INPUTS.bin EXPECTED.bin BATCH [TOLERANCE]

INPUTS.bin holds BATCH encoded positions as raw uint8 planes (the shape comes from
EXPORT_DIR/model.json); EXPECTED.bin the outputs as raw little-endian float32
[BATCH, policy + 4]. Needs only torch (no numpy). Prints the largest absolute
difference; exits 1 if it exceeds TOLERANCE (default 1e-5).
"""
import json
import os
import sys

import torch


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    export_dir, inputs, expected, batch = sys.argv[1:5]
    tol = float(sys.argv[5]) if len(sys.argv) == 6 else 1e-5
    batch = int(batch)
    with open(os.path.join(export_dir, "model.json")) as f:
        desc = json.load(f)
    _, planes, h, w = desc["input"]["shape"]
    out_len = desc["output"]["shape"][1]
    with open(inputs, "rb") as f:
        x = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).view(batch, planes, h, w)
    with open(expected, "rb") as f:
        want = torch.frombuffer(bytearray(f.read()), dtype=torch.float32).view(batch, out_len)
    model = torch.jit.load(os.path.join(export_dir, desc["files"]["torchscript"]))
    model.eval()
    with torch.no_grad():
        got = model(x)
    if tuple(got.shape) != (batch, out_len):
        print(f"output shape {tuple(got.shape)}, expected {(batch, out_len)}")
        sys.exit(1)
    diff = (got - want).abs().max().item()
    print(f"max abs diff {diff:.3e}")
    sys.exit(0 if diff <= tol else 1)


if __name__ == "__main__":
    main()
