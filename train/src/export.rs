//! Export of a model for other tools: `model.safetensors` (the weights as a loazero model
//! file: tensors `net.<layer>`, the model description as safetensors metadata), `model.pt` (a traced TorchScript module
//! whose single output works at any batch size) and `model.json` (encoding, geometry,
//! tower size and output layout). The traced module is checked against the Rust forward
//! pass at two batch sizes before the files are kept.

use crate::encoding::{encode, plane_scales, ENCODING_VERSION, NUM_PLANES, PLANE_NAMES};
use crate::model::{Model, NET_PREFIX};
use crate::net::POLICY_PLANES;
use crate::tensor_file;
use anyhow::{bail, Context, Result};
use loa::geometry::SQUARE_DIRECTIONS;
use loa::{Position, Rules, Variant};
use serde_json::json;
use std::path::{Path, PathBuf};
use tch::{CModule, Device, Kind, Tensor};

/// File names inside the export directory.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The TorchScript module.
pub const TORCHSCRIPT_FILE: &str = "model.pt";
/// The description.
pub const DESCRIPTION_FILE: &str = "model.json";

/// What [`export`] wrote.
#[derive(Debug)]
pub struct ExportReport {
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Largest absolute difference between the traced module and the Rust forward pass.
    pub max_abs_diff: f64,
}

/// The `model.json` description of a model.
pub fn describe(model: &Model) -> serde_json::Value {
    let n = model.info.board_size;
    let p = POLICY_PLANES * n * n;
    json!({
        "format": "loazero-export",
        "format_version": 1,
        "encoding_version": ENCODING_VERSION,
        "variant": model.info.variant,
        "board": {"size": n, "cells": n * n, "cell_index": "row * size + col (row = rank, col = file, a1 = 0)"},
        "net": model.info.net,
        "step": model.info.step,
        "input": {
            "dtype": "uint8",
            "shape": ["batch", NUM_PLANES, n, n],
            "planes": PLANE_NAMES,
            "scale": plane_scales(n),
            "note": "side-to-move point of view; planes are scaled inside the module",
        },
        "output": {
            "dtype": "float32",
            "shape": ["batch", p + 4],
            "policy_logits": {"start": 0, "len": p,
                "index": "direction * cells + cell (legal moves only; mask the rest before a softmax)",
                "directions": SQUARE_DIRECTIONS},
            "wdl_logits": {"start": p, "len": 3, "order": ["win", "draw", "loss"]},
            "value": {"start": p + 3, "len": 1, "meaning": "P(win) - P(loss) for the side to move"},
        },
        "files": {"weights": WEIGHTS_FILE, "torchscript": TORCHSCRIPT_FILE},
        "weights": {"tensor_prefix": NET_PREFIX, "dtype": "float32",
            "metadata_key": tensor_file::METADATA_KEY,
            "note": "a loazero model file: tensors named net.<layer>, description as safetensors metadata"},
    })
}

/// Example inputs: positions of a short game on the model's board.
pub fn example_input(board_size: usize, count: usize) -> Tensor {
    let variant = if board_size == 6 {
        Variant::Six
    } else {
        Variant::Standard
    };
    let rules = Rules::classic();
    let mut pos = Position::start(variant, &rules);
    let mut data = Vec::new();
    for k in 0..count {
        data.extend(encode(&pos));
        let moves = pos.legal_moves(&rules);
        pos.play(moves[(k * 7 + 3) % moves.len()]);
        if pos.outcome(&rules).is_some() {
            pos = Position::start(variant, &rules);
        }
    }
    let n = board_size as i64;
    Tensor::from_slice(&data).view([count as i64, NUM_PLANES as i64, n, n])
}

/// Writes the three export files of the model (or checkpoint) at `model_path` into
/// `out_dir` (created if needed). Each file is written to a temporary name and renamed.
pub fn export(model_path: &Path, out_dir: &Path) -> Result<ExportReport> {
    let mut model = Model::load(model_path, Device::Cpu)?;
    model.vs.freeze();
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let description = describe(&model);
    let text = serde_json::to_string_pretty(&description)?;

    // The weights file is a loazero model file: usable as `--model` and by Python.
    let weights = out_dir.join(WEIGHTS_FILE);
    model.save(&weights)?;

    let _guard = tch::no_grad_guard();
    let example = example_input(model.info.board_size, 3);
    let net = &model.net;
    let traced = CModule::create_by_tracing(
        "LoaZeroNet",
        "forward",
        std::slice::from_ref(&example),
        &mut |xs| vec![net.forward_export(&xs[0])],
    )
    .context("tracing the network")?;
    let ts = out_dir.join(TORCHSCRIPT_FILE);
    let tmp = out_dir.join(format!(".{TORCHSCRIPT_FILE}.tmp.{}", std::process::id()));
    traced
        .save(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    // Check the file as written, at batch sizes other than the traced one.
    let loaded = CModule::load(&tmp).with_context(|| format!("reading back {}", tmp.display()))?;
    let mut max_abs_diff = 0f64;
    for count in [1, 5] {
        let x = example_input(model.info.board_size, count);
        let want = net.forward_export(&x);
        let got = loaded
            .forward_ts(&[&x])
            .context("running the traced module")?;
        if got.size() != want.size() {
            let _ = std::fs::remove_file(&tmp);
            bail!(
                "traced module output shape {:?} != {:?} at batch {count}",
                got.size(),
                want.size()
            );
        }
        let d = (got - want)
            .abs()
            .max()
            .to_kind(Kind::Double)
            .double_value(&[]);
        max_abs_diff = max_abs_diff.max(d);
    }
    if max_abs_diff > 1e-4 {
        let _ = std::fs::remove_file(&tmp);
        bail!("traced module differs from the network by {max_abs_diff}");
    }
    std::fs::rename(&tmp, &ts).with_context(|| format!("renaming to {}", ts.display()))?;

    let json_path = out_dir.join(DESCRIPTION_FILE);
    selfplay::data::write_atomically(&json_path, format!("{text}\n").as_bytes())?;
    Ok(ExportReport {
        files: vec![weights, ts, json_path],
        max_abs_diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NetConfig;
    use crate::model::ModelInfo;

    #[test]
    fn export_writes_three_files_that_agree() {
        crate::test_threads();
        let dir = tempfile::tempdir().unwrap();
        let net = NetConfig {
            blocks: 2,
            channels: 8,
            global_pool_every: 2,
            policy_channels: 4,
            value_channels: 4,
            value_hidden: 8,
        };
        for variant in [Variant::Standard, Variant::Six] {
            tch::manual_seed(2);
            let model = Model::new(ModelInfo::new(&net, variant), Device::Cpu);
            let path = dir.path().join(format!("{variant}.safetensors"));
            model.save(&path).unwrap();
            let out = dir.path().join(format!("export-{variant}"));
            let report = export(&path, &out).unwrap();
            assert_eq!(report.files.len(), 3);
            assert!(report.max_abs_diff < 1e-5);
            let desc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join(DESCRIPTION_FILE)).unwrap())
                    .unwrap();
            let n = variant.geometry().size as u64;
            assert_eq!(desc["board"]["size"], n);
            assert_eq!(desc["output"]["shape"][1], 8 * n * n + 4);
            // The weights file is a model file holding every variable.
            let f = tensor_file::read(&out.join(WEIGHTS_FILE)).unwrap();
            assert_eq!(f.tensors.len(), model.vs.variables().len());
            let name = "net.blocks.1.pool_fc.weight";
            assert!(f.tensors.iter().any(|(n, _)| n == name));
            let again = Model::load(&out.join(WEIGHTS_FILE), Device::Cpu).unwrap();
            assert_eq!(again.info, model.info);
            // The TorchScript file runs at batch 7 and agrees with the Rust net.
            let m = CModule::load(out.join(TORCHSCRIPT_FILE)).unwrap();
            let x = example_input(n as usize, 7);
            let got = tch::no_grad(|| m.forward_ts(&[&x]).unwrap());
            let want = tch::no_grad(|| model.net.forward_export(&x));
            assert!(got.allclose(&want, 1e-5, 1e-5, false));
        }
    }
}
