#!/usr/bin/env python3
"""Lists the dependencies a crate of the workspace declares but never names in its code.

`make lint` runs it: a dependency is used when its crate name (`-` read as `_`) appears as
a path (`name::`) or in a `use name` / `extern crate name` anywhere in the crate's Rust
sources (src/, tests/, benches/, examples/, build.rs; dev-dependencies may be named only
there). A dependency the code reaches only through a build script's environment is
listed in NEEDED_WITHOUT_A_NAME with the reason. Exits 1, naming each unused one, if any.

Usage: scripts/unused_deps.py [WORKSPACE_ROOT]
"""

import pathlib
import re
import sys
import tomllib

# (crate directory relative to the root, dependency): why it is needed though no code
# names it.
NEEDED_WITHOUT_A_NAME = {
    (".", "torch-sys"): "build.rs reads DEP_TCH_LIBTORCH_LIB, set only for direct dependents",
    ("train", "torch-sys"): "train/build.rs reads DEP_TCH_LIBTORCH_LIB, set only for direct dependents",
    (".", "zstd"): "tests/fuzz_seeds.rs compiles in fuzz/fuzz_targets/shard.rs, which names it",
    (".", "safetensors"): "tests/fuzz_seeds.rs compiles in fuzz/fuzz_targets/tensor_file.rs, which names it",
}


def rust_sources(crate: pathlib.Path):
    """Every .rs file of the crate (not of nested crates, which have their own manifest)."""
    for path in crate.rglob("*.rs"):
        rel = path.relative_to(crate)
        if rel.parts[0] in ("target", "fuzz") and crate.name != "fuzz":
            continue
        # A nested crate (a directory with its own Cargo.toml below this one) is not ours.
        nested = any(
            (crate / pathlib.Path(*rel.parts[:i]) / "Cargo.toml").exists()
            for i in range(1, len(rel.parts))
        )
        if not nested:
            yield path


def named_in(text: str, name: str) -> bool:
    ident = re.escape(name.replace("-", "_"))
    return re.search(rf"(\b{ident}::|\buse\s+{ident}\b|extern\s+crate\s+{ident}\b|#\[{ident}::)", text) is not None


def check(root: pathlib.Path) -> list[str]:
    workspace = tomllib.loads((root / "Cargo.toml").read_text())
    members = ["."] + workspace.get("workspace", {}).get("members", [])
    unused = []
    for member in members:
        crate = root / member
        manifest = tomllib.loads((crate / "Cargo.toml").read_text())
        text = "\n".join(p.read_text(errors="replace") for p in rust_sources(crate))
        for section in ("dependencies", "dev-dependencies", "build-dependencies"):
            for dep, spec in manifest.get(section, {}).items():
                name = spec.get("package", dep) if isinstance(spec, dict) else dep
                if (member, dep) in NEEDED_WITHOUT_A_NAME:
                    continue
                if not named_in(text, dep) and not named_in(text, name):
                    unused.append(f"{member}/Cargo.toml [{section}] {dep}")
    return unused


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    unused = check(root)
    for u in unused:
        print(f"unused dependency: {u}")
    return 1 if unused else 0


if __name__ == "__main__":
    sys.exit(main())
