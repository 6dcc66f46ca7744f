#!/usr/bin/env python3
"""Writes the seed corpora fuzz/seeds/<target>/ from files loazero wrote.

Usage: python3 fuzz/make_seeds.py SELFPLAY_DIR [RUN_DIR]
  SELFPLAY_DIR: one `loazero selfplay --evaluator heuristic --games 1 --simulations 8
                --sgf --out SELFPLAY_DIR/<variant>` per variant (shards, records, SGF);
  RUN_DIR:      a `loazero run` directory (a model and a checkpoint description, a shard).
The seeds are committed; this script documents where they came from (docs/fuzzing.md).
"""
import glob, json, os, struct, subprocess, sys

VARIANTS = ["standard", "scrambled-eggs", "6x6", "parachute", "gemma", "ambiloa", "alveole"]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
sp = sys.argv[1]
run = sys.argv[2] if len(sys.argv) > 2 else None
LOAZERO = os.environ.get("LOAZERO", "target/release/loazero")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def engine(script):
    out = subprocess.run([LOAZERO, "engine", "--player", "random"], input=script,
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def one(pattern):
    files = sorted(glob.glob(pattern))
    return open(files[0], "rb").read() if files else None


records = {}
for i, v in enumerate(VARIANTS):
    rec = one(f"{sp}/{v}/games/*.txt").decode()
    sgf = one(f"{sp}/{v}/games/*.sgf").decode()
    shard = one(f"{sp}/{v}/shards/*.shard")
    records[v] = rec
    put("game_record", f"{v}.txt", rec)
    put("sgf", f"{v}.sgf", sgf)
    put("shard", f"{v}-file", bytes([0]) + shard)
    raw = subprocess.run(["zstd", "-dc"], input=shard[32:], capture_output=True, check=True).stdout
    put("shard", f"{v}-payload-v2", bytes([2]) + raw)
    put("serve_api", f"import-{v}-sgf", bytes([2]) + sgf.encode())
    put("serve_api", f"import-{v}-record", bytes([2]) + rec.encode())
    moves = [t for t in rec.split() if "-" in t or "x" in t or t.startswith(("@", "~"))]
    moves = [m for m in moves if m[0] != "#" and not m[0].isdigit()][:12]
    lines = engine(f"variant {v}\nshow\nplay {' '.join(moves)}\nshow\n")
    texts = [l.split(" variant ")[0][len("position "):] for l in lines if l.startswith("position ")]
    for k, t in enumerate(texts):
        put("position_text", f"{v}-{k}", bytes([i]) + t.encode())
    if moves:
        put("move_text", f"{v}-first", bytes([i, 0, 0]) + moves[0].encode())
        put("move_text", f"{v}-second", bytes([i, 1, 1, 0]) + moves[1].encode())
    spec = {"variant": v, "moves": moves}
    put("serve_api", f"position-{v}", bytes([0]) + json.dumps(spec).encode())
    put("serve_api", f"export-{v}", bytes([1 + 3 * (i % 3) + 9 * (i % 2)]) + json.dumps(spec).encode())
    put("engine", f"{v}", f"protocol\nvariant {v}\nplay {' '.join(moves[:6])}\nlegal\nundo 2\n"
        f"time 1000 1000 10\ngo\nshow\nboard\nposition startpos moves {' '.join(moves[:2])}\nquit\n")

for name, spec in [("classic", "classic"), ("icga-limit", "icga,ply-limit=200"),
                   ("full", "first=black,simultaneous=mover-wins,no-move=pass,repetition=threefold,ply-limit=off"),
                   ("overrides", "simultaneous=draw,no-move=loss,first=white")]:
    put("rules_spec", name, spec)

for k, spec in enumerate(["random", "random:seed=7", "alphabeta:depth=4", "ab:ms=50,tt=4,lmr=on",
                          "alphabeta:nodes=1000,w.mobility=2.5,leafwin=off,threat=off,aspiration=30",
                          "mcts:sims=100", "mcts:evaluator=uniform,ms=30,cpuct=1.5,fpu=0.2,gumbel=on,topk=8",
                          "model:path=runs/x/models/gen-0001.safetensors,sims=200,device=cuda:0,precision=bfloat16"]):
    put("player_spec", f"spec-{k}", spec)

for f in sorted(glob.glob("configs/*.toml")):
    put("run_config", os.path.basename(f), open(f).read())
put("run_config", "sets", "[run]\nminutes = 5\n\0selfplay.simulations=64\0selfplay.variant=6x6\0train.net.blocks=2")

engine_script = ("isready\nhelp\nrules icga,ply-limit=40\nnew\nposition 8/8/8/8/8/8/8/8 b\n"
                 "player alphabeta:tt=0\nplayer random:seed=3\ngenmove movetime 5\ntime off\nquit\n")
put("engine", "misc", engine_script)

# Model and checkpoint descriptions; a small safetensors file with one of them.
if run:
    for label, pattern in [("model", f"{run}/models/*.safetensors"), ("checkpoint", f"{run}/checkpoints/*.safetensors")]:
        b = one(pattern)
        if not b:
            continue
        n = struct.unpack("<Q", b[:8])[0]
        header = json.loads(b[8:8 + n])
        desc = header["__metadata__"]["loazero"]
        put("model_info", label, desc)
        tensors = {"net.stem.conv.weight": [2, 3], "net.value.fc2.bias": [3], "opt.step": []}
        entries, data, at = {}, b"", 0
        for name, shape in tensors.items():
            count = 1
            for d in shape:
                count *= d
            blob = struct.pack(f"<{count}f", *[0.5] * count)
            entries[name] = {"dtype": "F32", "shape": shape, "data_offsets": [at, at + len(blob)]}
            data += blob
            at += len(blob)
        entries["__metadata__"] = {"loazero": desc}
        h = json.dumps(entries).encode()
        put("tensor_file", f"small-{label}", struct.pack("<Q", len(h)) + h + data)
    shards = sorted(glob.glob(f"{run}/shards/*.shard"), key=os.path.getsize)
    raw = open(shards[0], "rb").read() if shards else None
    if raw and len(raw) < 8192:
        put("shard", "run-file", bytes([0]) + raw)
