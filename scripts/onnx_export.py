#!/usr/bin/env python3
"""Converts an exported loazero model (EXPORT_DIR/model.pt) to ONNX and checks that
onnxruntime agrees with TorchScript.

usage: onnx_export.py EXPORT_DIR [OUT.onnx]

Needs torch, onnx and onnxruntime (`.venv/bin/pip install onnx onnxruntime`). Writes
EXPORT_DIR/model.onnx by default, with a dynamic batch axis; input `planes` (uint8
[batch, planes, N, N], see model.json), output `output` (float32 [batch, policy + 4]).
Checks batch sizes 1 and 7 on random valid inputs; exits 1 on a mismatch > 1e-4.
"""
import json
import os
import sys

import torch


def random_planes(desc, batch, gen):
    """Random inputs that respect model.json: pieces on board cells only, the validity
    plane set on them, every plane zero off the board (hexagonal board in its grid)."""
    _, planes, n, _ = desc["input"]["shape"]
    names = desc["input"]["planes"]
    cells = desc.get("board", {}).get("cells")
    if cells is None:
        valid = torch.ones(n * n, dtype=torch.uint8)
    else:
        valid = torch.tensor([c is not None for c in cells], dtype=torch.uint8)
    on_board = valid.nonzero().flatten()
    x = torch.zeros(batch, planes, n, n, dtype=torch.uint8)
    for b in range(batch):
        shuffled = on_board[torch.randperm(len(on_board), generator=gen)]
        own, opp = shuffled[: n + 2], shuffled[n + 2 : 2 * n + 4]
        for p, name in enumerate(names):
            if name == "own":
                x[b, p].view(-1)[own] = 1
            elif name == "opponent":
                x[b, p].view(-1)[opp] = 1
            elif name.startswith("line_count_"):
                x[b, p] = torch.randint(0, n + 1, (n, n), generator=gen, dtype=torch.uint8)
            elif name == "ones":
                x[b, p] = 1
            else:
                x[b, p] = torch.randint(0, 2, (n, n), generator=gen, dtype=torch.uint8)
        x[b] *= valid.view(n, n)
    return x


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    export_dir = sys.argv[1]
    with open(os.path.join(export_dir, "model.json")) as f:
        desc = json.load(f)
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(export_dir, "model.onnx")
    model = torch.jit.load(os.path.join(export_dir, desc["files"]["torchscript"]))
    model.eval()
    gen = torch.Generator().manual_seed(1)
    example = random_planes(desc, 2, gen)
    torch.onnx.export(
        model,
        (example,),
        out,
        input_names=["planes"],
        output_names=["output"],
        dynamic_axes={"planes": {0: "batch"}, "output": {0: "batch"}},
        dynamo=False,
    )
    import onnxruntime as ort

    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    worst = 0.0
    for batch in (1, 7):
        x = random_planes(desc, batch, gen)
        with torch.no_grad():
            want = model(x)
        (got,) = session.run(["output"], {"planes": x.numpy()})
        worst = max(worst, (torch.from_numpy(got) - want).abs().max().item())
    print(f"wrote {out}; onnxruntime vs TorchScript max abs diff {worst:.3e}")
    sys.exit(0 if worst <= 1e-4 else 1)


if __name__ == "__main__":
    main()
