//! Exported models read from Python, through the export lines of docs/commands.md:
//! `loazero export MODEL --out DIR` writes a TorchScript model that `torch.jit.load`
//! runs to the Rust outputs, and `python scripts/onnx_export.py DIR` (from the repository
//! root, after `make onnx-setup`) converts it to ONNX and checks it with onnxruntime.
//! The Python wheel's planes (`make python-test` installs it) equal the trainer's, and the
//! shipped model's TorchScript export gives `loazero-torch`'s outputs on them.
//! Uses the python of a venv: `VENV` when set (as the Makefile and `.ci/run` set it;
//! relative to the repository root if relative), else the first of the repository's `.venv`
//! (`make setup`) and `$HOME/.cache/loazero/venv` (where `.ci/run` keeps it) that imports
//! what the test needs (onnx and onnxruntime: `make onnx-setup`). Without one a test says
//! SKIPPED; under CI (`CI` set) it fails instead (`common::skip_or_fail`).

mod common;
use common::{loazero, text};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use tch::Device;
use train::config::NetConfig;
use train::export::example_input;
use train::{Model, ModelInfo};

fn root() -> PathBuf {
    common::repo_path("")
}

/// The venvs to look in, in order: `VENV` alone when set, else `.venv` and CI's cached one.
fn venvs() -> Vec<PathBuf> {
    match std::env::var_os("VENV") {
        Some(v) if !v.is_empty() => vec![root().join(v)],
        _ => {
            let mut found = vec![root().join(".venv")];
            if let Some(home) = std::env::var_os("HOME") {
                found.push(PathBuf::from(home).join(".cache/loazero/venv"));
            }
            found
        }
    }
}

/// Whether `python` imports every module of `modules`.
fn imports(python: &Path, modules: &str) -> bool {
    Command::new(python)
        .args(["-c", &format!("import {modules}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The first venv's python that imports `modules`; otherwise `None` after saying SKIPPED,
/// or a failure under CI, where a missing tool is not a reason to pass.
fn python_with(modules: &str, install: &str) -> Option<PathBuf> {
    let pythons: Vec<PathBuf> = venvs().iter().map(|v| v.join("bin/python")).collect();
    if let Some(py) = pythons.iter().find(|py| imports(py, modules)) {
        return Some(py.clone());
    }
    let tried: Vec<String> = pythons.iter().map(|p| p.display().to_string()).collect();
    common::skip_or_fail(&format!(
        "no python importing {modules} at {} (install: {install})",
        tried.join(" or ")
    ));
    None
}

/// A small model of `variant` saved in `dir`, exported by `loazero export` into
/// `dir/export` as the export lines of docs/commands.md (and the README) do.
fn exported(dir: &Path, variant: loa::Variant) -> Model {
    tch::set_num_threads(1);
    tch::manual_seed(4);
    let net = NetConfig {
        blocks: 2,
        channels: 16,
        global_pool_every: 2,
        policy_channels: 8,
        value_channels: 8,
        value_hidden: 16,
        plane_set: Default::default(),
        occupancy_head: false,
    };
    let model = Model::new(ModelInfo::new(&net, variant), Device::Cpu);
    let path = dir.join("model-in.safetensors");
    model.save(&path).unwrap();
    let export_dir = dir.join("export");
    let out = loazero(&[
        OsStr::new("export"),
        path.as_os_str(),
        OsStr::new("--out"),
        export_dir.as_os_str(),
    ]);
    assert!(out.status.success(), "loazero export: {}", text(&out));
    model
}

#[test]
fn torchscript_reproduces_rust_outputs_in_python() {
    let Some(py) = python_with("torch", "make setup") else {
        return;
    };
    for variant in [
        loa::Variant::Standard,
        loa::Variant::Six,
        loa::Variant::Alveole,
        loa::Variant::Parachute,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let model = exported(dir.path(), variant);
        let batch = 6;
        let x = example_input(variant, train::encoding::PlaneSet::Board, batch);
        let want = tch::no_grad(|| model.net.forward_export(&x));
        let xs = Vec::<u8>::try_from(x.flatten(0, -1)).unwrap();
        let ys = Vec::<f32>::try_from(want.flatten(0, -1)).unwrap();
        let ybytes: Vec<u8> = ys.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(dir.path().join("x.bin"), &xs).unwrap();
        std::fs::write(dir.path().join("y.bin"), &ybytes).unwrap();
        let out = Command::new(&py)
            .arg(root().join("scripts/check_torchscript.py"))
            .arg(dir.path().join("export"))
            .arg(dir.path().join("x.bin"))
            .arg(dir.path().join("y.bin"))
            .arg(batch.to_string())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{variant}: {text}");
        assert!(text.contains("max abs diff"), "{text}");
        // The script prints the difference it measured: check the number itself.
        let diff: f64 = text
            .split("max abs diff ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no difference printed: {text}"));
        assert!(diff < 1e-5, "{variant}: {diff}");
        eprintln!("{variant}: python torch.jit.load vs rust: max abs diff {diff:.1e}");
        check_layout_in_python(&py, dir.path(), batch, variant);
    }
}

/// Reads `model.json` and the encoded inputs in Python and checks what the description
/// promises: the validity plane marks exactly the named cells, every plane is 0 on the
/// grid cells off the board, and the policy has one plane per listed name.
fn check_layout_in_python(py: &Path, dir: &Path, batch: usize, variant: loa::Variant) {
    const SCRIPT: &str = r#"
import json, sys, torch
export, inputs, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(export + "/model.json"))
_, planes, n, _ = d["input"]["shape"]
x = torch.frombuffer(bytearray(open(inputs, "rb").read()), dtype=torch.uint8).view(batch, planes, n, n)
cells = d["board"]["cells"]
valid = torch.tensor([c is not None for c in cells], dtype=torch.uint8).view(n, n)
ones = d["input"]["planes"].index(d["board"]["validity_plane"])
assert bool((x[:, ones] == valid).all()), "validity plane"
assert int(x[:, :, valid == 0].sum()) == 0, "off-board cells must be zero"
pol = d["output"]["policy_logits"]
assert pol["len"] == len(pol["planes"]) * n * n, "policy length"
assert d["output"]["shape"][1] == pol["len"] + 4
print("layout ok", d["variant"], planes, "planes", len(pol["planes"]), "policy planes", int(valid.sum()), "cells")
"#;
    let out = Command::new(py)
        .args(["-c", SCRIPT])
        .arg(dir.join("export"))
        .arg(dir.join("x.bin"))
        .arg(batch.to_string())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{variant}: {text}");
    assert!(text.contains(&format!("layout ok {variant}")), "{text}");
    eprintln!("{}", text.trim());
}

#[test]
fn onnx_conversion_agrees_with_onnxruntime() {
    let Some(py) = python_with("torch, onnx, onnxruntime", "make onnx-setup") else {
        return;
    };
    for variant in [
        loa::Variant::Standard,
        loa::Variant::Alveole,
        loa::Variant::Parachute,
    ] {
        let dir = tempfile::tempdir().unwrap();
        exported(dir.path(), variant);
        // As typed from the repository root: PYTHON scripts/onnx_export.py EXPORT_DIR.
        let out = Command::new(&py)
            .current_dir(root())
            .arg("scripts/onnx_export.py")
            .arg(dir.path().join("export"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{variant}: {text}");
        assert!(dir.path().join("export/model.onnx").exists());
        eprintln!("{variant}: {}", text.trim());
    }
}

/// The Python wheel (python/, `make python-test` installs it into the venv) against the
/// trainer, on the shipped model: for every variant the network supports, the planes of
/// at least 1 000 positions of seeded random games computed in Python
/// (`loazero.Game(variant).state_from_text(text).planes(plane_set)`) equal the trainer's
/// encoder's bytes, and the exported TorchScript model run by PyTorch on the Python planes
/// gives `loazero-torch`'s own outputs (`Net::forward_export`) within float tolerance
/// (python/tests/check_wheel_planes.py says how far).
#[test]
fn python_wheel_planes_and_torchscript_match_the_trainer() {
    let Some(py) = python_with("loazero, torch, numpy", "make python-test") else {
        return;
    };
    tch::set_num_threads(1);
    let shipped = root().join("data/shipped/models/gen-0099.safetensors");
    let model = Model::load(&shipped, Device::Cpu).unwrap();
    let plane_set = model.info.net.plane_set;
    let dir = tempfile::tempdir().unwrap();
    let export_dir = dir.path().join("export");
    let out = loazero(&[
        OsStr::new("export"),
        shipped.as_os_str(),
        OsStr::new("--out"),
        export_dir.as_os_str(),
    ]);
    assert!(out.status.success(), "loazero export: {}", text(&out));
    let per_variant = 1000;
    let mut supported = Vec::new();
    let (mut lines, mut planes, mut outputs) = (String::new(), Vec::<u8>::new(), Vec::<u8>::new());
    for variant in loa::Variant::ALL {
        if model.info.check_variant(variant).is_err() {
            continue;
        }
        supported.push(variant);
        let rules = loa::Rules::classic();
        let positions: Vec<loa::Position> =
            loa::testing::random_game_positions(variant, &rules, 40, 200, 61)
                .into_iter()
                .take(per_variant)
                .collect();
        assert_eq!(positions.len(), per_variant, "{variant}: too few positions");
        let mut batch = Vec::new();
        for pos in &positions {
            lines.push_str(&format!("{variant}\t{}\n", pos.to_text()));
            batch.extend(train::encoding::encode(pos, plane_set));
        }
        let layout = train::encoding::input_layout(variant, plane_set);
        let n = layout.size as i64;
        let x = tch::Tensor::from_slice(&batch).view([
            per_variant as i64,
            layout.num_planes() as i64,
            n,
            n,
        ]);
        let y = tch::no_grad(|| model.net.forward_export(&x));
        let ys = Vec::<f32>::try_from(y.flatten(0, -1)).unwrap();
        outputs.extend(ys.iter().flat_map(|v| v.to_le_bytes()));
        planes.extend(batch);
    }
    assert!(supported.contains(&model.info.variant), "{:?}", supported);
    std::fs::write(dir.path().join("positions.txt"), lines).unwrap();
    std::fs::write(dir.path().join("planes.bin"), &planes).unwrap();
    std::fs::write(dir.path().join("outputs.bin"), &outputs).unwrap();
    let out = Command::new(&py)
        .arg(root().join("python/tests/check_wheel_planes.py"))
        .arg(&export_dir)
        .arg(dir.path())
        .arg(plane_set.name())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    let positions = supported.len() * per_variant;
    assert!(
        said.contains(&format!("planes equal on {positions} positions")),
        "{said}"
    );
    let diff: f64 = said
        .split("max abs diff ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no difference printed: {said}"));
    assert!(diff < 1e-4, "{diff}");
    eprintln!("{}", said.trim());
}
